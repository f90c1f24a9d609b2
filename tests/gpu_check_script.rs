//! `scripts/gpu-check`'s own logic, run here with a stand-in binary (a
//! shell script, test only) in place of pqcprof: each step has a time limit
//! that cuts it short without losing the other steps, and the headline
//! figures are read from the run files against published ones. What the
//! real binary does on a GPU is not tested here (no GPU on CI).

mod common;

use pqcprof::backend::native_gpu::kernel_cache;
use pqcprof::core::catalog::Family;
use std::path::Path;
use std::process::Command;

/// A stand-in for pqcprof: `check` passes (`check --vectors` hangs until
/// Ctrl-C when `$STANDIN_SLOW_VECTORS` is set), `kernels --prebuild` lists its
/// family's image at once (ML-DSA's after `$STANDIN_SLOW_MLDSA` seconds
/// when set), `gpu --alg mlkem` writes a run file with one ML-KEM-768
/// keygen record, `gpu --alg mldsa` hangs until Ctrl-C (or, with
/// `$STANDIN_SLOW_MLDSA`, says its kernels were not compiled in time and
/// exits cut), the ML-KEM-768 batch curve (which must be asked for as a
/// sweep) writes one measured and one failed batch, everything else
/// succeeds and writes nothing.
const STAND_IN: &str = r#"#!/usr/bin/env bash
cmd=$1; shift
alg=; out=; o=; sweep=; pre=; arch=; vec=
while [ $# -gt 0 ]; do
  case "$1" in
    --vectors) vec=1 ;;
    --alg) alg=$2; shift ;;
    --prebuild) pre=$2; shift ;;
    --arch) arch=$2; shift ;;
    --batch-sweep) sweep=$2; shift ;;
    --out) out=$2; shift ;;
    -o) o=$2; shift ;;
    --deadline|--max-seconds|--runs|--op|--batch|--backend) shift ;;
  esac
  shift
done
case "$cmd" in
  check)
    if [ -n "$vec" ] && [ -n "${STANDIN_SLOW_VECTORS:-}" ]; then
      trap 'kill $!; exit 130' INT
      sleep "$STANDIN_SLOW_VECTORS" & wait
    fi
    echo "stand-in check (test only)" ;;
  kernels)
    if [ -n "$pre" ]; then
      [ "$alg" = mldsa ] && [ -n "${STANDIN_SLOW_MLDSA:-}" ] && sleep "$STANDIN_SLOW_MLDSA"
      echo "$alg $arch: $pre/native-$alg-$arch-stand-in.cubin (1 bytes of machine code, 1 of PTX; compiled in 0.1 s)"
    fi ;;
  gpu)
    if [ "$alg" = mldsa ] && [ -n "${STANDIN_SLOW_MLDSA:-}" ]; then
      echo "the mldsa kernels for sm_90 were not compiled in time (stand-in, test only)" >&2
      exit 5
    fi
    if [ "$alg" = mldsa ]; then
      trap 'kill $!; echo "stand-in interrupted (test only)"; exit 130' INT
      sleep 60 & wait
      exit 0
    fi
    if [ "$alg" = mlkem ]; then
      mkdir -p "$out"
      cat > "$out/run-20260101T000000Z.json" <<'JSON'
{"records": [{"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "ok", "ops_per_sec": 14000000.0}]}
JSON
    fi
    if [ "$alg" = ML-KEM-768 ]; then
      mkdir -p "$out"
      cat > "$out/run-20260101T000100Z.json" <<'JSON'
{"records": [{"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "ok", "batch": 1024, "ops_per_sec": 2000000.0,
  "end_to_end": {"ops_per_sec": 1000000.0},
  "kernel": {"waves": {"exact_waves": 0.02, "last_wave_fill_pct": 2.0}}},
 {"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "failed", "batch": 1048576,
  "reason": "stand-in failure (test only)"}]}
JSON
    fi ;;
  report) echo "stand-in report (test only)" > "$o" ;;
esac
exit 0
"#;

/// `summary.txt` of the output folder `out`, which names every step.
fn read_summary(out: &Path) -> String {
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    common::assert_summary_names_every_step(&summary);
    summary
}

/// The summary's line of `step`.
fn step_line(summary: &str, step: &str) -> String {
    summary
        .lines()
        .find(|l| l.starts_with(&format!("{step} ")))
        .unwrap()
        .to_string()
}

fn write_stand_in(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("pqcprof-stand-in");
    std::fs::write(&p, STAND_IN).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_step_past_its_budget_is_cut_and_the_deadline_holds() {
    let d = tempfile::tempdir().unwrap();
    let bin = write_stand_in(d.path());
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let t0 = std::time::Instant::now();
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .args(["--deadline", "80", "--runs", "2"])
        .env("PQCPROF_BIN", &bin)
        .env("PATH", "/usr/bin:/bin")
        .env("STANDIN_SLOW_VECTORS", "60")
        .output()
        .unwrap();
    let took = t0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&r.stdout);
    // The vectors step, whose every run hangs, keeps to its budget: the
    // next step starts within the budget and the kill's grace.
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap();
    let at = |step: &str| -> (u64, u64) {
        let line = log
            .lines()
            .find(|l| l.contains(&format!("] {step} (budget ")))
            .unwrap_or_else(|| panic!("no {step} step in\n{log}"));
        let num = |from: &str, to: char| -> u64 {
            let rest = &line[line.find(from).unwrap() + from.len()..];
            rest[..rest.find(to).unwrap()].parse().unwrap()
        };
        (num("[", 's'), num("(budget ", 's'))
    };
    let (vectors_at, vectors_budget) = at("vectors");
    let (next_at, _) = at("correctness");
    assert!(
        next_at - vectors_at <= vectors_budget + 5,
        "the vectors step took {}s of its {vectors_budget}s\n{log}\n{}",
        next_at - vectors_at,
        common::load_note()
    );
    let err = std::fs::read_to_string(out.join("vectors.err")).unwrap();
    assert!(
        err.contains("not run, too little of the step's budget left"),
        "{err}"
    );
    // The hanging step is cut at its budget; the script never passes its
    // deadline (a few seconds of grace for a loaded machine). 80 s shared
    // by its 20 steps: on a busy machine the first steps' own time leaves
    // every later step at least the 3 s a step needs to be run (at 40 s,
    // two CPU-bound processes beside the suite left the correctness step
    // "too little time left").
    assert!(
        took < 86.0,
        "took {took:.1}s for an 80s deadline\n{stdout}\n{}",
        common::load_note()
    );
    assert_eq!(
        r.status.code(),
        Some(1),
        "a cut step fails the check\n{stdout}"
    );
    let summary = read_summary(&out);
    let state = |step: &str| step_line(&summary, step);
    assert!(state("throughput-mlkem").contains(" ok "), "{summary}");
    assert!(
        state("throughput-mlkem").contains("1 ok records (1 operations)"),
        "{summary}"
    );
    assert!(
        state("throughput-mldsa-verify").contains(" cut "),
        "{summary}"
    );
    // A step counts only its own records: the ML-KEM record beside it in
    // the shared folder is not ML-DSA's.
    assert!(
        state("throughput-mldsa-verify").contains("; 0 ok records (0 operations)"),
        "{summary}"
    );
    assert!(
        state("compile").contains(" ok ")
            && state("compile").contains("ML-KEM compiled in 0.1 s; ML-DSA compiled in 0.1 s"),
        "{summary}"
    );
    assert!(
        state("variants").contains("no --kernel option"),
        "{summary}"
    );
    // The archive holds the finished steps' run files and the summary.
    let archive = d.path().join("out.tar.gz");
    let list = Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("out/summary.txt"), "{list}");
    common::assert_has(&list, &["out/throughput/run-20260101T000000Z.json"]);
    let targets = std::fs::read_to_string(out.join("targets.txt")).unwrap();
    common::assert_has(
        &targets,
        &["ML-KEM-768 keygen: 14.000M ops/s, target 13.3M/s", ": MET"],
    );
    common::assert_has(&targets, &["ML-DSA-44 sign: no result (not measured)"]);
}

/// A family whose kernels are still being compiled is left out of the
/// steps of both families and reported as not compiled in time, with the
/// operations it cost; the other family is measured.
#[test]
fn a_family_not_compiled_in_time_is_reported_as_such() {
    let d = tempfile::tempdir().unwrap();
    let bin = write_stand_in(d.path());
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .args(["--deadline", "90", "--runs", "2", "--no-curve"])
        .env("PQCPROF_BIN", &bin)
        .env("PQCPROF_PTX_CACHE", d.path().join("cache"))
        .env("STANDIN_SLOW_MLDSA", "200")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(1), "{stdout}");
    let summary = read_summary(&out);
    let state = |step: &str| step_line(&summary, step);
    // The compile goes on past its share; stop it (its own session).
    let compile = state("compile");
    assert!(
        compile.contains(" cut ") && compile.contains("ML-DSA still compiling after"),
        "{summary}"
    );
    let pid: i32 = compile
        .split("(process ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no process in {compile}"));
    // SAFETY: a plain system call on the stand-in's own sleeping compile.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(
        state("correctness").contains(" ok ")
            && state("correctness").contains("ML-DSA not compiled in time: 0 of 9 operations"),
        "{summary}"
    );
    assert!(state("throughput-mlkem").contains(" ok "), "{summary}");
    let verify = state("throughput-mldsa-verify");
    assert!(
        verify.starts_with("throughput-mldsa-verify  no kernels ")
            && verify.contains("ML-DSA not compiled in time: 0 of 6 operations"),
        "{summary}"
    );
    // The correctness step was asked for ML-KEM alone.
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("correctness (budget") && l.contains("--alg mlkem ")),
        "{log}"
    );
}

/// The real binary on the stand-in driver made slow, with an empty kernel
/// cache (a freshly lent GPU machine; in the sample, ML-DSA's image already
/// there): the compile step makes each family's kernels it lacks
/// once, no later step compiles, every one of the 18
/// operations gets ok throughput records, and the script keeps its
/// deadline with every step in its summary and the finished steps' run
/// files in its archive.
#[test]
fn a_cold_cache_is_compiled_once_first_and_every_operation_is_measured() {
    if common::nvrtc_or_skip("a_cold_cache_is_compiled_once_first_and_every_operation_is_measured")
        .is_none()
    {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("gc");
    let cache = d.path().join("cache");
    // The sample: ML-KEM's kernels compiled cold by the compile step,
    // ML-DSA's (about three times the compile) already in the cache, taken
    // from the stand-in tests' shared one, as a second run on the same
    // machine finds them.
    let all = common::full(
        "a_cold_cache_is_compiled_once_first_and_every_operation_is_measured",
        "a cold compile of the ML-DSA kernels (its image is copied in)",
    );
    if !all {
        // Compiled there first if no test has yet; then read from it.
        let shared = common::standin::ptx_cache();
        let cached = || match kernel_cache::compile_cached_in(Some(&shared), Family::MlDsa, "sm_90")
        {
            Ok((_, kernel_cache::Origin::Cache(p))) => Some(p),
            Ok(_) => None,
            Err(e) => panic!("{e}"),
        };
        let image = cached()
            .or_else(cached)
            .unwrap_or_else(|| panic!("no ML-DSA image cached in {}", shared.display()));
        std::fs::create_dir_all(&cache).unwrap();
        for ext in ["cubin", "ptx", "log"] {
            let f = image.with_extension(ext);
            std::fs::copy(&f, cache.join(f.file_name().unwrap())).unwrap();
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let t0 = std::time::Instant::now();
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .args(["--deadline", "300", "--no-cpu"])
        .env("PQCPROF_BIN", env!("CARGO_BIN_EXE_pqcprof"))
        .env("LD_LIBRARY_PATH", common::standin::library_path())
        .env("PQCPROF_PTX_CACHE", &cache)
        .env("PQCPROF_STANDIN_NS_PER_OP", "50000")
        .output()
        .unwrap();
    let took = t0.elapsed();
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap_or_default();
    // The deadline holds on the slow device (a few seconds of grace for
    // the summary and archive on a loaded machine).
    assert!(
        took < std::time::Duration::from_secs(308),
        "took {took:?}\n{log}\n{}",
        common::load_note()
    );
    assert!(r.status.code().is_some(), "{log}");
    let summary = read_summary(&out);
    common::assert_summary_names_every_step(&summary);
    // Every step the summary calls ok or cut left its run files in the
    // archive.
    let list = Command::new("tar")
        .arg("tzf")
        .arg(d.path().join("gc.tar.gz"))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for (step, dir) in [
        ("correctness", "gc/correctness/run-"),
        ("throughput-mlkem", "gc/throughput/run-"),
    ] {
        let line = step_line(&summary, step);
        if line.contains(" ok ") || line.contains(" cut ") {
            assert!(list.contains(dir), "{step}: {line}\n{list}");
        }
    }
    let compile = step_line(&summary, "compile");
    assert!(compile.contains("ML-KEM compiled in"), "{summary}");
    let ml_dsa = if all {
        "ML-DSA compiled in"
    } else {
        "ML-DSA already there"
    };
    assert!(compile.contains(ml_dsa), "{summary}");
    // The example device plugin is measured on a GPU only: the stand-in
    // runs just the kernels it was built with.
    let plugin = step_line(&summary, "plugin");
    assert!(
        plugin.contains("not run") && plugin.contains("stand-in driver"),
        "{summary}"
    );
    // Every operation measured: ok throughput records of all 18.
    let mut ops = std::collections::BTreeSet::new();
    for f in common::files(&out.join("throughput"), "run-", ".json") {
        for rec in common::read_json(&f)["records"].as_array().unwrap() {
            if rec["status"] == "ok" && rec["backend"] == "native-gpu" {
                ops.insert(format!("{} {}", rec["algorithm"], rec["operation"]));
            }
        }
    }
    assert_eq!(ops.len(), 18, "{ops:?}\n{summary}");
    // One image per family, made once; no step after the compile step
    // started a compile of its own.
    for unit in ["mlkem", "mldsa"] {
        let made = common::files(&cache, &format!("native-{unit}-sm_90-"), ".cubin");
        assert_eq!(made.len(), 1, "{made:?}");
    }
    for step in common::GPU_CHECK_STEPS {
        let text = std::fs::read_to_string(out.join(format!("{step}.txt"))).unwrap_or_default();
        assert!(
            !text.contains("kernels compiled for"),
            "{step} compiled kernels:\n{text}"
        );
    }
}

/// A trap writes the summary and the archive however the script ends: here
/// SIGTERM while a step hangs.
#[test]
fn a_signal_to_the_script_still_leaves_summary_and_archive() {
    let d = tempfile::tempdir().unwrap();
    let bin = write_stand_in(d.path());
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let mut child = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .args(["--deadline", "600"])
        .env("PQCPROF_BIN", &bin)
        .env("PATH", "/usr/bin:/bin")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the hanging ML-DSA step runs.
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(out.join("gpu-check.log"))
        .unwrap_or_default()
        .contains("throughput-mldsa-verify (budget")
    {
        assert!(t0.elapsed().as_secs() < 60, "the ML-DSA step never started");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    common::signal(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert!(!status.success());
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let line = summary
        .lines()
        .find(|l| l.starts_with("throughput-mldsa-verify "))
        .unwrap();
    assert!(line.contains(" cut "), "{summary}");
    assert!(summary.contains("throughput-mlkem         ok"), "{summary}");
    assert!(d.path().join("out.tar.gz").exists());
}

#[test]
fn without_a_gpu_it_stops_after_check() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let bin = env!("CARGO_BIN_EXE_pqcprof");
    let gpu_ready = Command::new(bin)
        .args(["check", "--require-gpu"])
        .output()
        .unwrap()
        .status
        .success();
    if gpu_ready {
        common::hardware_skip(
            "without_a_gpu_it_stops_after_check",
            "a GPU backend is ready here (and the full check is not started from a test)",
        );
        return;
    }
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .env("PQCPROF_BIN", bin)
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap();
    assert!(log.contains("no GPU backend is ready: stopping"), "{log}");
    assert!(out.join("check.json").exists());
}
