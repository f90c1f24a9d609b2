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
    std::fs::read_dir(out)
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

/// NVRTC's version; without NVRTC, says loudly that `test` did not run and
/// gives `None`, or fails when PQCPROF_REQUIRE_NVRTC=1 (as in CI).
pub fn nvrtc_or_skip(test: &str) -> Option<(i32, i32)> {
    let v = pqcprof::gpu::probe::nvrtc_version();
    if v.is_none() {
        if std::env::var("PQCPROF_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!(
                "PQCPROF_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (LD_LIBRARY_PATH={:?})",
                std::env::var("LD_LIBRARY_PATH")
            );
        }
        eprintln!(
            "NVRTC not found: {test} NOT run (set PQCPROF_REQUIRE_NVRTC=1 to make this a failure)"
        );
    }
    v
}
