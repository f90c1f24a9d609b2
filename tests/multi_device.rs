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
        assert_eq!(code, 2, "--device {arg}: {stderr}");
        assert!(stderr.contains(says), "--device {arg}: {stderr}");
    }
}

#[test]
fn without_a_gpu_a_list_is_a_normal_not_ready_state() {
    let d = tempfile::tempdir().unwrap();
    let probe = pqcprof().args(["check", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
    if !v["gpu"]["gpus"].as_array().unwrap().is_empty() {
        common::hardware_skip(
            "without_a_gpu_a_list_is_a_normal_not_ready_state",
            "a GPU is present: this test is for machines without one",
        );
        return;
    }
    let (code, _, stderr) = outcome(
        pqcprof()
            .args(common::words(
                "gpu --alg ML-KEM-512 --op keygen --device 0,1 --out",
            ))
            .arg(d.path()),
    );
    // Nothing ready, nothing measured: exit 4 (not a failed gate).
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("nothing was measured"), "{stderr}");
}

/// `gpu --device all` on the CPU stand-in driver listing three devices:
/// one thread per device through the real cudarc path, one record per
/// device, one total per operation, all marked emulated (never a speed).
#[test]
fn every_emulated_gpu_at_once_gives_its_record_and_a_total() {
    use common::standin;
    if common::nvrtc_or_skip("multi-GPU on the stand-in").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // Launches of at least 64 ms (1 ms an operation, on the wall clock):
    // the three devices' runs overlap even when other processes hold the
    // cores, where launches of a few ms of emulation could run one after
    // another and leave no total.
    let knobs = [("DEVICES", "3"), ("NS_PER_OP", "1000000")];
    let (code, stdout, stderr) = outcome(
        standin::pqcprof(&knobs)
            .args(common::words("gpu --backend native-gpu --alg ML-KEM-512 --op keygen --batch 64 --runs 3 --warmup 0 --device all --out"))
            .arg(d.path()),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("GPUs 0, 1, 2 of"), "{stderr}");
    let run_file = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(run_file).unwrap()).unwrap();
    let recs = v["records"].as_array().unwrap();
    let ordinals: Vec<u64> = recs
        .iter()
        .map(|r| r["gpu_ordinal"].as_u64().unwrap())
        .collect();
    assert_eq!(ordinals, [0, 1, 2]);
    for r in recs {
        assert_eq!(r["status"], "ok", "{r:#}");
        assert_eq!(r["emulated"], true);
        assert_eq!(r["run_windows_unix_s"].as_array().unwrap().len(), 3);
    }
    let aggs = v["aggregates"].as_array().unwrap();
    assert_eq!(aggs.len(), 1, "{aggs:?}");
    let a = &aggs[0];
    assert_eq!(a["emulated"], true);
    assert_eq!(a["records"], serde_json::json!([0, 1, 2]));
    let members: f64 = a["member_ops_per_sec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    let total = a["total_ops_per_sec"]
        .as_f64()
        .expect("the start barrier makes the runs overlap");
    assert!((total - members).abs() <= 1e-9 * total);
    // Emulated: nothing in the cuPQC-shaped files.
    assert!(!d.path().join("mlkem_results.json").exists());
    assert!(!d.path().join("native-gpu/mlkem_results.json").exists());

    // A device the driver does not list is named with the valid ones.
    let (code, _, stderr) = outcome(
        standin::pqcprof(&knobs)
            .args(["gpu", "--alg", "ML-KEM-512", "--device", "0,5", "--out"])
            .arg(d.path()),
    );
    assert_eq!(code, 2, "{stderr}");
    common::assert_has(&stderr, &["invalid --device 5", "ordinals 0, 1, 2"]);
    // `check` lists every device with its verdict.
    let (_, check, _) = outcome(standin::pqcprof(&knobs).arg("check"));
    for g in 0..3 {
        let line = check
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("GPU {g} ")))
            .unwrap_or_else(|| panic!("GPU {g} in:\n{check}"));
        assert!(line.contains("ready: native-gpu"), "{line}");
    }
}
