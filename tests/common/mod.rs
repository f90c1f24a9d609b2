//! Helpers shared by the report tests: the binary, a small real run made
//! by it, and what a finished command said.

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
