//! Helpers shared by the integration tests: the binary, a small real run
//! made by it, what a finished command said, and Ctrl-C in the middle of a
//! run.

// Each test file uses only some of these.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The `pqcprof` binary of this build.
pub fn pqcprof() -> Command {
    Command::cargo_bin("pqcprof").unwrap()
}

/// A command line's words, split at spaces: `words("cpu --alg ML-KEM-512")`
/// reads as the command a user types.
pub fn words(line: &str) -> Vec<&str> {
    line.split(' ').filter(|w| !w.is_empty()).collect()
}

/// Runs `pqcprof` with `line`'s words and `--out dir`, which must succeed.
pub fn ok_into(line: &str, dir: impl AsRef<std::ffi::OsStr>) {
    pqcprof()
        .args(words(line))
        .arg("--out")
        .arg(dir)
        .assert()
        .success();
}

/// Measures ML-KEM-512 and ML-DSA-44 on the CPU (batch 8, 3 runs) at
/// `threads` into the folder `out`; returns the run file it wrote.
pub fn cpu_run(out: &Path, threads: &str) -> PathBuf {
    pqcprof()
        .args([
            "cpu",
            "--alg",
            "ML-KEM-512,ML-DSA-44",
            "--batch",
            "8",
            "--runs",
            "3",
            "--threads",
            threads,
            "--out",
        ])
        .arg(out)
        .assert()
        .success();
    run_file_in(out)
}

/// The run file (`run-*.json`) a command wrote into `dir`.
pub fn run_file_in(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .expect("the run wrote a run file")
}

/// Runs `cmd` to the end: exit code (-1 when killed), stdout, stderr.
pub fn outcome(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Polls the JSON file `find` returns until it holds at least `n` records
/// (it is rewritten atomically after each algorithm) and returns how many;
/// fails the test after `limit`, saying `what` never happened.
pub fn wait_for_records(
    find: impl Fn() -> Option<PathBuf>,
    n: usize,
    limit: std::time::Duration,
    what: &str,
) -> usize {
    let t0 = std::time::Instant::now();
    loop {
        assert!(t0.elapsed() < limit, "{what}");
        if let Some(f) = find() {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(f).unwrap()) {
                if let Some(r) = v["records"].as_array().filter(|r| r.len() >= n) {
                    return r.len();
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Ctrl-C: SIGINT to `child`.
pub fn interrupt(child: &std::process::Child) {
    // SAFETY: kill sends a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// Ctrl-C to `child`, then its output, which must say it was
/// interrupted (exit 130).
pub fn interrupted(child: std::process::Child) -> std::process::Output {
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    out
}

pub mod standin;

/// Every skip goes through here: says, where a reader of `cargo test` sees
/// it, that `test` (or the part of it named) did not run and why. libtest
/// captures a passing test's `eprintln!`, so a skip printed that way reads
/// as a pass; this line goes to file descriptor 2 itself, in one write.
/// `scripts/test` counts these lines and fails when there is any.
pub fn skipped(test: &str, why: &str) {
    let line = format!("SKIPPED {test}: {why}\n");
    // SAFETY: writes `line`'s bytes, which outlive the call, to stderr.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

/// The variable that makes the sampled tests run in full
/// (`scripts/test --full` sets it).
pub const FULL_VAR: &str = "PQCPROF_TEST_FULL";

/// Whether the sampled tests run in full: `PQCPROF_TEST_FULL=1`. Otherwise a
/// sampled test runs its stated sample and says so on stderr (`SAMPLED
/// <test>: <what it left out>`), which `scripts/test` counts and names, so
/// that what the test command leaves to `scripts/test --full` is never
/// silent.
pub fn full(test: &str, left_out: &str) -> bool {
    if std::env::var(FULL_VAR).is_ok_and(|v| v == "1") {
        return true;
    }
    let line =
        format!("SAMPLED {test}: {left_out} ({FULL_VAR}=1 or scripts/test --full runs it)\n");
    // SAFETY: writes `line`'s bytes, which outlive the call, to stderr.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    false
}

/// What [`hardware_skip`] puts before its reason: `scripts/test` lists
/// these skips but does not fail on them, since no set-up can give a
/// machine the hardware (or the absence of it) a test is written for.
pub const HARDWARE: &str = "this machine's hardware: ";

/// A skip because of the machine itself: a test for GPUs on a machine
/// without one, or a test for machines without a GPU on one that has it.
pub fn hardware_skip(test: &str, why: &str) {
    skipped(test, &format!("{HARDWARE}{why}"));
}

/// Sends `signal` (SIGTERM, SIGHUP...) to `child`.
pub fn signal(child: &std::process::Child, signal: i32) {
    // SAFETY: kill sends a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// NVRTC's version; without NVRTC, says loudly that `test` did not run and
/// gives `None`, or fails when PQCPROF_REQUIRE_NVRTC=1 (as in CI).
pub fn nvrtc_or_skip(test: &str) -> Option<(i32, i32)> {
    let v = pqcprof::probe::gpu::nvrtc_version();
    if v.is_none() {
        if std::env::var("PQCPROF_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!(
                "PQCPROF_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (LD_LIBRARY_PATH={:?})",
                std::env::var("LD_LIBRARY_PATH")
            );
        }
        skipped(
            test,
            "NVRTC not found on the loader path (set PQCPROF_REQUIRE_NVRTC=1 to make this a failure)",
        );
    }
    v
}

/// Files in `dir` whose names start with `prefix` and end with `suffix`,
/// sorted (none when `dir` cannot be read).
pub fn files(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy().to_string();
                    n.starts_with(prefix) && n.ends_with(suffix)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A JSON file, parsed; fails the test naming the file.
pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A real quick sweep (0.01 s warm-up, 0.05 s windows) of the algorithms
/// `filter` selects, with `extra` arguments, into `out`; returns its run file.
pub fn quick_sweep(out: &Path, filter: &str, extra: &[&str]) -> PathBuf {
    pqcprof()
        .args([
            "sweep",
            "--quick",
            "--warmup-seconds",
            "0.01",
            "--seconds",
            "0.05",
        ])
        .args(extra)
        .args(["--filter", filter, "--out"])
        .arg(out)
        .assert()
        .success();
    run_file_in(out)
}

/// A quick sweep of SPHINCS+ (one set), FN-DSA-512 (by its FIPS 206
/// name), SM2, ML-DSA-44, Ed25519 and MAYO-1 with the symmetric
/// primitives: together they cover every class, tier and origin the report
/// filters by.
pub fn mixed_sweep(out: &Path) -> PathBuf {
    quick_sweep(
        out,
        "SPHINCS+-SHA2-128f-simple,FN-DSA-512,SM2,ML-DSA-44,Ed25519,MAYO-1",
        &["--symmetric"],
    )
}

/// What an aggregate of a run file should hold, worked out from its
/// member records alone (`records` is the file's, `agg` names its members
/// by index): each ok member's median throughput (batch / run time) over
/// its runs whose window overlaps a run of every other ok member, and the
/// total of those, `None` when some member has no such run. Without
/// windows, each member's median over all its runs.
pub fn aggregate_from_records(
    records: &[serde_json::Value],
    agg: &serde_json::Value,
) -> (Vec<f64>, Option<f64>) {
    let members: Vec<&serde_json::Value> = agg["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &records[i.as_u64().unwrap() as usize])
        .filter(|r| r["status"] == "ok" && !r["run_seconds"].as_array().unwrap().is_empty())
        .collect();
    let numbers = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let windows: Option<Vec<Vec<(f64, f64)>>> = members
        .iter()
        .map(|r| {
            let w: Vec<(f64, f64)> = r["run_windows_unix_s"]
                .as_array()?
                .iter()
                .map(|w| (w[0].as_f64().unwrap(), w[1].as_f64().unwrap()))
                .collect();
            (w.len() == r["run_seconds"].as_array().unwrap().len()).then_some(w)
        })
        .collect();
    let medians: Vec<Option<f64>> = members
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let batch = r["batch"].as_f64().unwrap();
            let kept: Vec<f64> = numbers(&r["run_seconds"])
                .into_iter()
                .enumerate()
                .filter(|(k, _)| match &windows {
                    Some(w) if members.len() > 1 => {
                        let (a0, a1) = w[i][*k];
                        (0..members.len())
                            .filter(|&j| j != i)
                            .all(|j| w[j].iter().any(|&(b0, b1)| a0 < b1 && b0 < a1))
                    }
                    _ => true,
                })
                .map(|(_, s)| batch / s)
                .collect();
            let s = pqcprof::core::stats::Sample::new(kept).ok()?;
            Some(pqcprof::core::stats::summarize(&s).median)
        })
        .collect();
    let total = if members.is_empty() {
        None
    } else {
        medians.iter().copied().sum::<Option<f64>>()
    };
    (medians.iter().map(|m| m.unwrap_or(0.0)).collect(), total)
}

/// Asserts that `agg` holds what [`aggregate_from_records`] works out.
pub fn assert_aggregate_adds_up(records: &[serde_json::Value], agg: &serde_json::Value) {
    let (members, total) = aggregate_from_records(records, agg);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let got: Vec<f64> = agg["member_ops_per_sec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), members.len(), "{agg}");
    for (g, m) in got.iter().zip(&members) {
        assert!(close(*g, *m), "member {g}, from its records {m}: {agg}");
    }
    match (agg["total_ops_per_sec"].as_f64(), total) {
        (Some(g), Some(t)) => assert!(close(g, t), "total {g}, from the records {t}: {agg}"),
        (None, None) => {}
        (g, t) => panic!("total {g:?}, from the records {t:?}: {agg}"),
    }
}

/// The command line of a CPU run of a second or less (its folder last).
pub const TINY: &str = "cpu --alg ML-KEM-512 --op keygen --batch 2 --runs 6 --threads 1 --out";

/// A tiny real run into `out`; its run file.
pub fn tiny_run(out: &Path) -> PathBuf {
    let before = files(out, "run-", ".json");
    let (code, _, err) = outcome(pqcprof().args(words(TINY)).arg(out));
    assert_eq!(code, 0, "{err}");
    let after = files(out, "run-", ".json");
    after
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new run file")
}

/// A real offload run of ML-KEM-768 encapsulations into `out` (evenly
/// spaced arrivals at 200 and 400 a second, 0.5 s each, objective
/// p90=50ms, which 100 requests resolve; on a loaded machine the sweep may stop after the first, or
/// bisect three times below 400 when 400 falls behind), with a
/// SYNTHETIC point added last (for tests only, never measured) at 800 a
/// second marked saturated, so that a report has a point to circle
/// whatever this machine's speed. Returns the file with the points.
pub fn offload_run(out: &Path) -> PathBuf {
    ok_into("offload --alg ML-KEM-768 --op encaps --rate-sweep 200..400 --arrivals uniform --window 0.5 --slo p90=50ms --max-batch 4 --max-wait 0.5", out);
    let real = run_file_in(out);
    let mut v = read_json(&real);
    let points = v["offload"]["points"].as_array_mut().unwrap();
    assert!(matches!(points.len(), 1 | 2 | 5), "{points:?}");
    let mut sat = points[0].clone();
    sat["offered_rate"] = 800.0.into();
    sat["achieved_rate"] = 500.0.into();
    sat["saturated"] = true.into();
    points.push(sat);
    let p = out.join("synthetic-offload.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::remove_file(&real).unwrap();
    p
}

/// The steps `scripts/gpu-check` names in its summary, in order.
pub const GPU_CHECK_STEPS: [&str; 20] = [
    "check",
    "compile",
    "vectors",
    "correctness",
    "memcheck",
    "throughput-mlkem",
    "throughput-mldsa-verify",
    "throughput-mldsa-sign",
    "cold-mlkem",
    "cold-mldsa",
    "variants",
    "latency",
    "curve-mlkem",
    "curve-mldsa",
    "offload-mlkem",
    "offload-mldsa",
    "plugin",
    "kernels",
    "cpu",
    "report",
];

/// Every step of `scripts/gpu-check` has its line in `summary`.
pub fn assert_summary_names_every_step(summary: &str) {
    for step in GPU_CHECK_STEPS {
        assert!(
            summary.lines().any(|l| l.starts_with(&format!("{step} "))),
            "{step} missing from\n{summary}"
        );
    }
}

/// Asserts that `text` holds every one of `parts`, naming those it lacks
/// and printing it whole.
#[track_caller]
pub fn assert_has(text: &str, parts: &[&str]) {
    let missing: Vec<&&str> = parts.iter().filter(|p| !text.contains(**p)).collect();
    assert!(missing.is_empty(), "{missing:?} missing from:\n{text}");
}

/// `pqcprof report RUN --format markdown` written into `dir`: the text.
pub fn markdown_report(run: &Path, dir: &Path) -> String {
    let md = dir.join("report.md");
    let (code, _, err) = outcome(
        pqcprof()
            .arg("report")
            .arg(run)
            .args(["--format", "markdown", "-o"])
            .arg(&md),
    );
    assert_eq!(code, 0, "{err}");
    std::fs::read_to_string(&md).unwrap()
}

/// The machine's load averages and core count, for the failure message of
/// a test whose outcome depends on time (docs/testing.md, timing).
#[allow(dead_code)]
pub fn load_note() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "machine load: {} on {cores} core(s)",
        avg.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    )
}

/// `cmd args`, which must succeed (its standard error in the failure):
/// what it printed.
#[allow(dead_code)]
pub fn must_run(cmd: &str, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fixture plugin written in C (`tests/fixtures/plugins/SOURCE`), built
/// with cc as `lib<name>.so` in the folder `dir` holds, with `define` (a
/// `-D` flag) if any, and linked with c++ over pqcprof's host build of the
/// `units` (`host_mlkem`, `host_mldsa`), compiled once into that folder.
/// Tests of one process asking for the same build wait for the first.
#[allow(dead_code)]
pub fn c_plugin(
    dir: &'static std::sync::OnceLock<tempfile::TempDir>,
    source: &str,
    units: &[&str],
    name: &str,
    define: Option<&str>,
) -> std::path::PathBuf {
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let native = root.join("cuda/native");
    let dir = dir.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        for unit in units {
            let src = native.join(format!("{unit}.cpp"));
            let obj = d.path().join(format!("{unit}.o"));
            must_run(
                "c++",
                &[
                    "-c",
                    "-fPIC",
                    "-O2",
                    "-std=c++14",
                    "-I",
                    native.to_str().unwrap(),
                    src.to_str().unwrap(),
                    "-o",
                    obj.to_str().unwrap(),
                ],
            );
        }
        d
    });
    let _one = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let lib = dir.path().join(format!("lib{name}.so"));
    if !lib.exists() {
        let obj = dir.path().join(format!("{name}.o"));
        let include = root.join("include");
        let src = root.join("tests/fixtures/plugins").join(source);
        let mut args = vec![
            "-c",
            "-fPIC",
            "-O2",
            "-Wall",
            "-Werror",
            "-I",
            include.to_str().unwrap(),
            src.to_str().unwrap(),
            "-o",
            obj.to_str().unwrap(),
        ];
        args.extend(define);
        must_run("cc", &args);
        let hosts: Vec<String> = units
            .iter()
            .map(|u| dir.path().join(format!("{u}.o")).display().to_string())
            .collect();
        let mut link = vec![
            "-shared",
            "-o",
            lib.to_str().unwrap(),
            obj.to_str().unwrap(),
        ];
        link.extend(hosts.iter().map(String::as_str));
        must_run("c++", &link);
    }
    lib
}
