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

pub mod standin;

/// Says, where a reader of `cargo test` sees it, that `test` did not run
/// and why: libtest hides a passing test's `eprintln!`, so a skip would
/// otherwise read as a pass. Written straight to the process's stderr,
/// which libtest does not capture.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
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
        .args(["sweep", "--quick", "--warmup", "0.01", "--seconds", "0.05"])
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
