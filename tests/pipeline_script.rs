//! `./pipeline`'s own logic (arguments, the cuPQC fetch decision), run on a
//! copy of the script with stand-ins (shell scripts, test only) for cargo,
//! pqcprof and scripts/fetch-cupqc, which log how they were called. What the
//! real binary measures is tested elsewhere; no GPU or network here.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// pqcprof stand-in: `check --require-gpu` passes, and `check` calls
/// native-gpu ready, only when STANDIN_GPU=1 (cupqc never);
/// `bench`, `sweep` and `offload` write an empty run file (`offload` then
/// exits with STANDIN_OFFLOAD_RC, 0 unless set); `report` writes its -o.
const PQCPROF: &str = r#"#!/usr/bin/env bash
echo "pqcprof $*" >> "$STANDIN_LOG"
case "$1" in
  check)
    if [ "${2:-}" = --require-gpu ]; then [ "${STANDIN_GPU:-0}" = 1 ] || exit 3; fi
    echo "stand-in check (test only)"
    if [ "${STANDIN_GPU:-0}" = 1 ]; then echo "  native-gpu    ready      stand-in"; fi
    echo "  cupqc         not ready  stand-in" ;;
  bench|sweep)
    mkdir -p outputs
    echo '{"records": []}' > "outputs/run-$1-$$.json" ;;
  report)
    while [ $# -gt 0 ]; do [ "$1" = -o ] && echo "stand-in report" > "$2"; shift; done ;;
  offload)
    mkdir -p outputs
    echo '{"records": []}' > "outputs/run-$1-$$.json"
    exit "${STANDIN_OFFLOAD_RC:-0}" ;;
esac
exit 0
"#;

/// cargo stand-in: logs the build and the nvcc it was given. With
/// STANDIN_BROKEN_SDK=1 it fails as a build breaking on the cuPQC SDK in
/// third_party/cupqc would, unless PQCPROF_NO_CUPQC=1 leaves cuPQC out.
/// A build reports the binary as cargo's JSON messages do, under
/// CARGO_TARGET_DIR when set, else ./target; STANDIN_NO_ARTIFACT=1 leaves
/// that report out.
const CARGO: &str = r#"#!/usr/bin/env bash
echo "cargo $*" >> "$STANDIN_LOG"
echo "env NVCC=${NVCC:-} PQCPROF_NO_CUPQC=${PQCPROF_NO_CUPQC:-}" >> "$STANDIN_LOG"
if [ "${STANDIN_BROKEN_SDK:-0}" = 1 ] && [ -d third_party/cupqc ] && [ "${PQCPROF_NO_CUPQC:-}" != 1 ]; then
  echo "warning: cuPQC backend left out: cuPQC SDK at third_party/cupqc failed to build: stand-in error" >&2
  echo "error: linking with cc failed (stand-in)" >&2
  exit 101
fi
if [ "$1" = build ] && [ "${STANDIN_NO_ARTIFACT:-0}" != 1 ]; then
  dir=${CARGO_TARGET_DIR:-$PWD/target}
  echo '{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"pqcprof"},"executable":null,"fresh":true}'
  echo "{\"reason\":\"compiler-artifact\",\"target\":{\"kind\":[\"bin\"],\"name\":\"pqcprof\"},\"executable\":\"$dir/release/pqcprof\",\"fresh\":true}"
  echo '{"reason":"build-finished","success":true}'
fi
"#;

/// fetch-cupqc stand-in: fails as an offline machine does, unless
/// STANDIN_ONLINE=1, where it makes third_party/cupqc.
const FETCH: &str = r#"#!/usr/bin/env bash
echo "fetch-cupqc $*" >> "$STANDIN_LOG"
if [ "${STANDIN_ONLINE:-0}" = 1 ]; then mkdir -p third_party/cupqc; exit 0; fi
echo "fetch-cupqc: downloading https://example.invalid/cupqc.tar.gz" >&2
echo "fetch-cupqc: cannot reach example.invalid (curl exit 6: no network, DNS or proxy problem)" >&2
exit 1
"#;

fn write_exec(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A copy of the pipeline with its stand-ins, in a temporary folder.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("repo");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline");
    write_exec(
        &root.join("pipeline"),
        &std::fs::read_to_string(src).unwrap(),
    );
    write_exec(&root.join("target/release/pqcprof"), PQCPROF);
    write_exec(&root.join("scripts/fetch-cupqc"), FETCH);
    // The prerequisite probes: libclang "found" (a stand-in, so the test
    // never reaches apt), NVRTC looked for by the real script.
    write_exec(
        &root.join("scripts/find-libclang"),
        "#!/bin/sh\n# TEST STAND-IN: libclang is taken as present.\necho /stand-in/libclang.so\n",
    );
    let find_nvrtc = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/find-nvrtc");
    write_exec(
        &root.join("scripts/find-nvrtc"),
        &std::fs::read_to_string(find_nvrtc).unwrap(),
    );
    let find_nvcc = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/find-nvcc");
    write_exec(
        &root.join("scripts/find-nvcc"),
        &std::fs::read_to_string(find_nvcc).unwrap(),
    );
    write_exec(&root.join("scripts/build-plugins"), GALLERY);
    write_exec(&d.path().join("bin/cargo"), CARGO);
    (d, root)
}

/// scripts/build-plugins stand-in: logs its call and prints one library's
/// path, or fails as a broken build would with STANDIN_GALLERY_FAIL=1.
const GALLERY: &str = r#"#!/usr/bin/env bash
# TEST STAND-IN for scripts/build-plugins.
echo "build-plugins $*" >> "$STANDIN_LOG"
if [ "${STANDIN_GALLERY_FAIL:-0}" = 1 ]; then
  echo "error: could not compile libcrux-ml-kem (stand-in)" >&2
  exit 1
fi
echo "$PWD/plugins/target/release/libpqcprof_plugin_standin.so"
"#;

#[test]
fn the_gallery_is_built_after_pqcprof_and_measured_and_a_failed_build_never_stops_the_pipeline() {
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["latency"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let build = log.find("cargo build").expect("pqcprof built");
    let gallery = log.find("build-plugins").expect("the gallery built");
    assert!(build < gallery, "{log}");
    assert!(
        text(&o).contains("libpqcprof_plugin_standin.so"),
        "{}",
        text(&o)
    );
    // Step 4 measures what it built beside liboqs, after the main run.
    let main_run = log.find("pqcprof bench --out outputs").expect("main run");
    let measured = format!(
        "pqcprof bench --backend liboqs-cpu,plugin:{}/plugins/target/release/libpqcprof_plugin_standin.so --alg ML-KEM-768,ML-DSA-65 --out outputs --latency",
        root.canonicalize().unwrap().display()
    );
    let at = log
        .find(&measured)
        .unwrap_or_else(|| panic!("{measured:?} not in {log}"));
    assert!(main_run < at, "{log}");
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["latency"], &[("STANDIN_GALLERY_FAIL", "1")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(log.contains("pqcprof bench"), "{log}");
    assert!(
        !log.contains("plugin:"),
        "nothing built, nothing measured: {log}"
    );
    common_has(
        &text(&o),
        &[
            "could not compile libcrux-ml-kem (stand-in)",
            "pipeline: the implementations gallery did not build",
        ],
    );
}

fn common_has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "{p:?} not in:\n{text}");
    }
}

fn run(
    d: &tempfile::TempDir,
    root: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Output, String) {
    let log = d.path().join("log");
    let path = format!(
        "{}:{}",
        d.path().join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let mut c = Command::new("bash");
    c.arg(root.join("pipeline"))
        .args(args)
        .env("PATH", path)
        .env("STANDIN_LOG", &log)
        .env_remove("CUPQC_HOME")
        .env_remove("NVCC")
        .env_remove("CUDA_HOME")
        .env_remove("PQCPROF_VENV")
        .env_remove("VIRTUAL_ENV")
        .env_remove("PQCPROF_EXPECT_CUPQC")
        .env_remove("CARGO_TARGET_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    (out, log)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_binary_run_is_the_one_cargo_reports_building() {
    // CARGO_TARGET_DIR elsewhere: cargo builds there, and a stale binary
    // left in ./target must not run.
    let (d, root) = setup();
    let elsewhere = d.path().join("elsewhere");
    let built = elsewhere.join("release/pqcprof");
    write_exec(
        &built,
        &PQCPROF.replace(r#"echo "pqcprof $*""#, r#"echo "pqcprof(elsewhere) $*""#),
    );
    write_exec(
        &root.join("target/release/pqcprof"),
        "#!/bin/sh\necho \"stale $*\" >> \"$STANDIN_LOG\"\nexit 1\n",
    );
    let (o, log) = run(
        &d,
        &root,
        &["latency"],
        &[("CARGO_TARGET_DIR", elsewhere.to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(log.contains("pqcprof(elsewhere) bench"), "{log}");
    assert!(!log.contains("stale"), "{log}");
    let said = format!(
        "pipeline: running {} (as cargo reported it)",
        built.display()
    );
    assert!(text(&o).contains(&said), "{}", text(&o));
    // A build that does not say where its binary is: nothing is run.
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["latency"], &[("STANDIN_NO_ARTIFACT", "1")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("did not report where the pqcprof binary is"),
        "{}",
        text(&o)
    );
    assert!(!log.contains("pqcprof "), "{log}");
}

#[test]
fn latency_the_seeds_spelling_works_as_the_option() {
    for arg in ["latency", "--latency"] {
        let (d, root) = setup();
        let (o, log) = run(&d, &root, &[arg], &[]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            log.contains("pqcprof bench --out outputs --latency"),
            "{log}"
        );
        assert!(!log.contains("pqcprof sweep"), "{log}");
        assert!(!log.contains("pqcprof offload"), "{log}");
    }
    let (d, root) = setup();
    let (o, _) = run(&d, &root, &["latenc"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("'latenc'"), "{}", text(&o));
}

#[test]
fn short_offload_sweeps_run_on_the_cpu_and_a_deadline_keeps_them() {
    let (d, root) = setup();
    // The stand-in ends `offload` as a run cut by its deadline does.
    let (o, log) = run(&d, &root, &[], &[("STANDIN_OFFLOAD_RC", "5")]);
    assert!(o.status.success(), "{}", text(&o));
    let line = |backend: &str, alg: &str, op: &str| {
        format!("pqcprof offload --backend {backend} --alg {alg} --op {op} --rate-sweep --slo p99=10ms --window 0.5 --deadline 30 --out outputs")
    };
    let ops = [("ML-KEM-768", "encaps"), ("ML-DSA-65", "sign")];
    for (alg, op) in ops {
        let l = line("liboqs-cpu", alg, op);
        assert!(log.contains(&l), "{l}: {log}");
    }
    // No GPU backend is ready: none is offered a load.
    assert!(!log.contains("offload --backend native-gpu"), "{log}");
    assert!(!log.contains("offload --backend cupqc"), "{log}");
    // Before the report, which is given the run files made.
    let offload = log.find("pqcprof offload").unwrap();
    assert!(offload < log.find("pqcprof report").unwrap(), "{log}");
    // Any other failure stops the pipeline, naming the step.
    let (d, root) = setup();
    let (o, _) = run(&d, &root, &[], &[("STANDIN_OFFLOAD_RC", "1")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o)
            .contains("pqcprof offload --backend liboqs-cpu --alg ML-KEM-768 --op encaps failed"),
        "{}",
        text(&o)
    );
    // A ready GPU backend gets the same sweeps after the CPU's.
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["--no-fetch"], &[("STANDIN_GPU", "1")]);
    assert!(o.status.success(), "{}", text(&o));
    for (alg, op) in ops {
        let gpu = log.find(&line("native-gpu", alg, op));
        assert!(gpu > log.find(&line("liboqs-cpu", alg, op)), "{log}");
    }
    assert!(!log.contains("offload --backend cupqc"), "{log}");
}

#[test]
fn offline_with_a_gpu_says_so_once_and_goes_on() {
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["latency"], &[("STANDIN_GPU", "1")]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(log.contains("fetch-cupqc"), "{log}");
    assert_eq!(t.matches("could not be fetched").count(), 1, "{t}");
    assert!(t.contains("curl exit 6"), "{t}");
    assert!(
        !t.contains("downloading https"),
        "only the one message: {t}"
    );
    // One build only, and the measurement still ran.
    assert_eq!(log.matches("cargo build").count(), 1, "{log}");
    assert!(log.contains("pqcprof bench"), "{log}");
}

#[test]
fn online_with_a_gpu_fetches_and_rebuilds() {
    let (d, root) = setup();
    let (o, log) = run(
        &d,
        &root,
        &["latency"],
        &[("STANDIN_GPU", "1"), ("STANDIN_ONLINE", "1")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(log.matches("cargo build --release").count(), 2, "{log}");
    let (fetch, bench) = (log.find("fetch-cupqc").unwrap(), log.find("bench").unwrap());
    assert!(fetch < bench, "{log}");
}

#[test]
fn no_fetch_without_a_gpu_with_an_sdk_or_when_asked() {
    // No GPU.
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["latency"], &[]);
    assert!(o.status.success() && !log.contains("fetch-cupqc"), "{log}");
    // --no-fetch.
    let (d, root) = setup();
    let (o, log) = run(
        &d,
        &root,
        &["latency", "--no-fetch"],
        &[("STANDIN_GPU", "1")],
    );
    assert!(o.status.success() && !log.contains("fetch-cupqc"), "{log}");
    assert!(text(&o).contains("--no-fetch"), "{}", text(&o));
    // An SDK already present.
    let (d, root) = setup();
    std::fs::create_dir_all(root.join("third_party/cupqc")).unwrap();
    let (o, log) = run(&d, &root, &["latency"], &[("STANDIN_GPU", "1")]);
    assert!(o.status.success() && !log.contains("fetch-cupqc"), "{log}");
}

/// A broken cuPQC SDK in third_party/cupqc, nvcc only in the checkout's
/// .venv (pip's nvidia-cuda-nvcc): the build is retried without cuPQC, the
/// pipeline measures the rest and exits 0, and a rerun finds the same nvcc.
#[test]
fn a_broken_sdk_never_stops_the_pipeline_and_reruns_find_nvcc_alike() {
    let (d, root) = setup();
    std::fs::create_dir_all(root.join("third_party/cupqc/include/cupqc")).unwrap();
    let nvcc = root.join(".venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    write_exec(&nvcc, "#!/bin/sh\necho 'release 13.5, V13.5.0'\n");
    let host_nvcc = Command::new("bash")
        .arg(root.join("scripts/find-nvcc"))
        .env_remove("NVCC")
        .env_remove("CUDA_HOME")
        .env_remove("PQCPROF_VENV")
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&host_nvcc.stdout)
        .trim()
        .to_string();
    let mut seen = Vec::new();
    for args in [&[][..], &["--no-fetch"][..]] {
        let (o, log) = run(
            &d,
            &root,
            args,
            &[("STANDIN_BROKEN_SDK", "1"), ("STANDIN_GPU", "1")],
        );
        let out = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}\n{log}");
        assert!(
            out.contains("failed to build: stand-in error"),
            "the build's warning is shown: {out}"
        );
        assert!(
            out.contains("building without cuPQC"),
            "the pipeline says what it does: {out}"
        );
        assert!(
            log.contains("env NVCC=") && log.contains("PQCPROF_NO_CUPQC=1"),
            "{log}"
        );
        assert!(log.contains("pqcprof bench"), "the rest is measured: {log}");
        assert!(
            !log.contains("fetch-cupqc"),
            "an SDK is present: no fetch: {log}"
        );
        let nvcc_seen: Vec<&str> = log
            .lines()
            .filter_map(|l| l.strip_prefix("env NVCC="))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert!(
            nvcc_seen
                .iter()
                .all(|n| !n.is_empty() && *n == nvcc_seen[0]),
            "{log}"
        );
        seen.push(nvcc_seen[0].to_string());
    }
    assert_eq!(seen[0], seen[1], "the rerun finds nvcc the same way");
    // Where this machine has no nvcc of its own, it is the venv's.
    assert_eq!(seen[0], found);
    if !found.contains("/usr/") && !found.contains("/opt/") {
        assert_eq!(Path::new(&seen[0]), nvcc);
    }
}

#[test]
fn no_stateful_leaves_xmss_and_lms_out_of_the_sweep() {
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["--no-stateful", "--no-fetch"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        log.contains("pqcprof sweep --quick --filter !family:XMSS,!family:LMS --out outputs"),
        "{log}"
    );
    // Without it, the sweep is unfiltered.
    let (d, root) = setup();
    let (o, log) = run(&d, &root, &["--no-fetch"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(log.contains("pqcprof sweep --quick --out outputs"), "{log}");
}

/// A checkout with something of every kind `clean` knows about.
fn dirty(root: &Path, ptx: &Path) {
    for f in [
        "target/release/pqcprof",
        ".venv/bin/python3",
        "outputs/run-1.json",
        "outputs/x86_64_host_liboqs.csv",
        "outputs/latency/mlkem_latency.json",
        "scripts/__pycache__/x.pyc",
        "third_party/cupqc/include/pk.hpp",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    std::fs::write(root.join("outputs/README.md"), "kept").unwrap();
    std::fs::write(root.join("third_party/README.md"), "kept").unwrap();
    std::fs::create_dir_all(ptx).unwrap();
    std::fs::write(ptx.join("k.ptx"), "x").unwrap();
}

fn clean(root: &Path, args: &[&str], ptx: &Path, stdin: &str) -> Output {
    use std::io::Write;
    let mut c = Command::new("bash")
        .arg(root.join("pipeline"))
        .arg("clean")
        .args(args)
        .env("PQCPROF_PTX_CACHE", ptx)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

#[test]
fn clean_asks_then_removes_builds_venv_caches_and_outputs() {
    let (d, root) = setup();
    let ptx = d.path().join("ptx-cache");
    dirty(&root, &ptx);
    let gone = [
        "target",
        ".venv",
        "outputs/run-1.json",
        "outputs/x86_64_host_liboqs.csv",
        "outputs/latency",
        "scripts/__pycache__",
    ];
    let kept = [
        "pipeline",
        "scripts/fetch-cupqc",
        "outputs/README.md",
        "third_party/README.md",
        "third_party/cupqc/include/pk.hpp",
    ];
    // Asked and refused (or no answer at all): nothing goes.
    for answer in ["n\n", ""] {
        let o = clean(&root, &[], &ptx, answer);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("[y/N]") && text(&o).contains("nothing removed"));
        assert!(text(&o).contains("target") && text(&o).contains(".venv"));
        assert!(root.join("target").exists() && ptx.exists());
    }
    // Asked and agreed.
    let o = clean(&root, &[], &ptx, "y\n");
    assert!(o.status.success(), "{}", text(&o));
    for g in gone {
        assert!(!root.join(g).exists(), "{g} is still there: {}", text(&o));
    }
    assert!(!ptx.exists(), "the kernel cache is still there");
    for k in kept {
        assert!(root.join(k).exists(), "{k} was removed: {}", text(&o));
    }
    assert!(text(&o).contains("kept: third_party/cupqc"), "{}", text(&o));
    // --yes does not ask; --all also takes the fetched SDK, not the README.
    dirty(&root, &ptx);
    let o = clean(&root, &["--yes", "--all"], &ptx, "");
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("[y/N]"), "{}", text(&o));
    assert!(!root.join("third_party/cupqc").exists() && !root.join("target").exists());
    assert!(root.join("third_party/README.md").exists() && root.join("outputs/README.md").exists());
    // Nothing left: says so.
    let o = clean(&root, &["--yes"], &ptx, "");
    assert!(
        o.status.success() && text(&o).contains("nothing to remove"),
        "{}",
        text(&o)
    );
    let o = clean(&root, &["--force"], &ptx, "");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("'--force'") && text(&o).contains("--yes"),
        "{}",
        text(&o)
    );
}

#[test]
fn plugins_from_the_environment_join_the_main_run_and_the_offload_sweeps() {
    let (d, root) = setup();
    let plugins = [("PQCPROF_PLUGINS", "/p/liba.so:/p/libb.so,/q/libc.so")];
    let (o, log) = run(&d, &root, &["--no-fetch"], &plugins);
    assert!(o.status.success(), "{}", text(&o));
    let bench = "pqcprof bench --out outputs --backend liboqs-cpu,plugin:/p/liba.so,plugin:/p/libb.so,plugin:/q/libc.so";
    assert!(log.contains(bench), "{log}");
    for p in ["/p/liba.so", "/p/libb.so", "/q/libc.so"] {
        let l = format!("pqcprof offload --backend plugin:{p} --alg ML-KEM-768 --op encaps");
        assert!(log.contains(&l), "{l}: {log}");
    }
    // A ready GPU backend stays in the main run beside the plugins.
    let (d, root) = setup();
    let (o, log) = run(
        &d,
        &root,
        &["--no-fetch"],
        &[plugins[0], ("STANDIN_GPU", "1")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        log.contains("--backend liboqs-cpu,native-gpu,plugin:/p/liba.so"),
        "{log}"
    );
    // Without the variable the main run names no backend: every ready one.
    let (d, root) = setup();
    let (_, log) = run(&d, &root, &["--no-fetch"], &[]);
    assert!(log.contains("pqcprof bench --out outputs\n"), "{log}");
}
