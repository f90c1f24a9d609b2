//! `--device` lists and `all` on the command line: bad entries are clear
//! errors; no GPU at all stays a normal state.

mod common;

use common::{outcome, pqcprof};

#[test]
fn a_device_listed_twice_or_not_a_number_is_refused() {
    let d = tempfile::tempdir().unwrap();
    for (arg, says) in [
        ("0,0", "GPU 0 is listed twice"),
        ("0,x", "'x' is not a GPU ordinal"),
        ("1,,2", "'' is not a GPU ordinal"),
    ] {
        let (code, _, stderr) = outcome(
            pqcprof()
                .args(["gpu", "--alg", "ML-KEM-512", "--device", arg, "--out"])
                .arg(d.path()),
        );
        assert_eq!(code, 1, "--device {arg}: {stderr}");
        assert!(stderr.contains(says), "--device {arg}: {stderr}");
    }
}

#[test]
fn without_a_gpu_a_list_is_a_normal_not_ready_state() {
    let d = tempfile::tempdir().unwrap();
    let probe = pqcprof().args(["check", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
    if !v["gpu"]["gpus"].as_array().unwrap().is_empty() {
        eprintln!("a GPU (or a stand-in) is present: the no-GPU case is not tested here");
        return;
    }
    let (code, _, stderr) = outcome(
        pqcprof()
            .args([
                "gpu",
                "--alg",
                "ML-KEM-512",
                "--op",
                "keygen",
                "--device",
                "0,1",
                "--out",
            ])
            .arg(d.path()),
    );
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("nothing was measured"), "{stderr}");
}
