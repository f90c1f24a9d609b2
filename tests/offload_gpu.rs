//! `pqcprof offload --backend native-gpu` end to end on the CPU stand-in
//! CUDA driver: batches of the real kernels served through the dynamic
//! batcher on streams of their own, every point gated and marked
//! `emulated`, its run file rendered by `pqcprof report`, and a largest
//! batch the device cannot hold refused by name. The stand-in is not a
//! GPU: these tests prove the serving path, never speed.
//!
//! Needs NVRTC; without it each test says so and passes, except under
//! PQCPROF_REQUIRE_NVRTC=1 (as in CI).

mod common;

use common::{nvrtc_or_skip, outcome, read_json, standin};
use std::path::Path;

/// `pqcprof offload --backend native-gpu` on the stand-in with `args`,
/// into `out`: (exit code, stdout, stderr).
fn offload(out: &Path, knobs: &[(&str, &str)], args: &str) -> (i32, String, String) {
    let mut c = standin::pqcprof(knobs);
    c.args(["offload", "--backend", "native-gpu"])
        .args(common::words(args))
        .arg("--out")
        .arg(out);
    outcome(&mut c)
}

/// A served offload run with `args`, which must succeed and write one
/// run file: its folder, what it printed and the run file.
fn served(args: &str) -> (tempfile::TempDir, String, serde_json::Value) {
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = offload(d.path(), &[], args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let files = common::files(d.path(), "run-", ".json");
    assert_eq!(files.len(), 1, "{files:?}");
    let run = read_json(&files[0]);
    (d, stdout, run)
}

#[test]
fn gpu_batches_are_served_gated_marked_emulated_and_reported() {
    if nvrtc_or_skip("gpu_batches_are_served_gated_marked_emulated_and_reported").is_none() {
        return;
    }
    // Two streams, batches of up to 8, at a rate the stand-in keeps up
    // with or not: either way every request is served and gated.
    let (d, _, run) = served(
        "--alg ML-KEM-768 --op encaps --rate 100 --window 0.5 --workers 2 --max-batch 8 --max-wait 2",
    );
    let files = common::files(d.path(), "run-", ".json");
    let o = &run["offload"];
    assert_eq!(o["backend"], "native-gpu", "{o:#}");
    assert_eq!(o["emulated"], true, "{o:#}");
    assert_eq!(o["workers"], 2, "{o:#}");
    assert!(o["device"].as_str().unwrap().contains("not a GPU"), "{o:#}");
    assert!(
        o["curve_basis"].as_str().unwrap().contains("GPU stream"),
        "{o:#}"
    );
    let points = o["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{o:#}");
    let p = &points[0];
    assert_eq!(p["backend"], "native-gpu", "{p:#}");
    assert_eq!(p["emulated"], true, "{p:#}");
    assert_eq!(p["max_batch"], 8, "{p:#}");
    let gate = &p["gate"];
    assert!(gate["checked_ops"].as_u64().unwrap() > 0, "{p:#}");
    let checks = gate["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c.as_str().unwrap().contains("liboqs decapsulates")),
        "{p:#}"
    );
    assert_eq!(
        p["requests"].as_u64().unwrap(),
        p["batch_sizes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(size, n)| size.parse::<u64>().unwrap() * n.as_u64().unwrap())
            .sum::<u64>(),
        "{p:#}"
    );
    // The run file renders.
    let report = d.path().join("report.md");
    let (code, _, stderr) = outcome(
        common::pqcprof()
            .arg("report")
            .arg(&files[0])
            .args(["--format", "markdown", "-o"])
            .arg(&report),
    );
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("Offload"), "{text}");
    common::assert_has(
        &text,
        &["native-gpu, 2 workers, emulated (CPU stand-in driver"],
    );
}

#[test]
fn a_largest_batch_the_device_cannot_hold_is_refused_by_name() {
    if nvrtc_or_skip("a_largest_batch_the_device_cannot_hold_is_refused_by_name").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let knobs = [("MEMORY_MIB", "64")];
    let (code, stdout, stderr) = offload(
        d.path(),
        &knobs,
        "--alg ML-KEM-768 --op encaps --rate 100 --window 0.5 --max-batch 4096 --max-wait 1",
    );
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("--max-batch 4096"), "{stderr}");
    let most: usize = stderr
        .split("the largest that fits is ")
        .nth(1)
        .and_then(|s| s.trim().split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no largest batch named: {stderr}"));
    assert!((1..4096).contains(&most), "{stderr}");
    // Nothing was measured, so no run file.
    assert!(common::files(d.path(), "run-", ".json").is_empty());
}

/// `--device N` serves on GPU N (the stand-in names each device by its
/// ordinal), and an ordinal the driver does not list is refused by name
/// before anything runs.
#[test]
fn the_gpu_asked_for_serves_and_one_the_driver_lacks_is_refused_by_name() {
    if nvrtc_or_skip("the_gpu_asked_for_serves_and_one_the_driver_lacks_is_refused_by_name")
        .is_none()
    {
        return;
    }
    let two = [("DEVICES", "2")];
    let load = "--alg ML-KEM-768 --op encaps --rate 100 --window 0.2 --max-batch 4 --max-wait 2";
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = offload(d.path(), &two, &format!("{load} --device 1"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let run = read_json(&common::files(d.path(), "run-", ".json")[0]);
    let o = &run["offload"];
    assert_eq!(o["device_ordinal"], 1, "{o:#}");
    assert!(
        o["device"].as_str().unwrap().contains("stand-in 1 "),
        "{o:#}"
    );
    assert!(
        o["points"][0]["gate"]["checked_ops"].as_u64().unwrap() > 0,
        "{o:#}"
    );

    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = offload(d.path(), &two, &format!("{load} --device 2"));
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    common::assert_has(
        &stderr,
        &["invalid --device 2", "lists 2 (ordinals 0 to 1)"],
    );
    assert!(common::files(d.path(), "run-", ".json").is_empty());
}

/// The tls13-server mix on the GPU: each worker's stream holds both
/// families' kernels, a batch runs the ML-KEM-768 encapsulations and the
/// ML-DSA-65 signatures one after the other, X25519 on the host; every
/// part gated.
#[test]
fn a_tls13_server_mix_is_served_on_the_gpu_and_every_part_gated() {
    if nvrtc_or_skip("a_tls13_server_mix_is_served_on_the_gpu_and_every_part_gated").is_none() {
        return;
    }
    let (_d, stdout, run) =
        served("--mix tls13-server --rate 50 --window 0.3 --workers 2 --max-batch 4 --max-wait 2");
    common::assert_has(&stdout, &["mix tls13-server", "handshakes/s"]);
    let o = &run["offload"];
    assert_eq!(
        (&o["backend"], &o["mix"]),
        (&"native-gpu".into(), &"tls13-server".into())
    );
    let p = &o["points"][0];
    assert_eq!(p["emulated"], true, "{p:#}");
    let checks = p["gate"]["checks"].to_string();
    for part in ["X25519", "liboqs decapsulates", "liboqs verifies"] {
        assert!(checks.contains(part), "{part}: {checks}");
    }
}

/// `plan` without a run file measures a GPU backend's batch times here,
/// served as `offload` serves them (end to end on a stream of its own).
#[test]
fn plan_measures_the_gpu_batch_times_here_without_a_run_file() {
    if nvrtc_or_skip("plan_measures_the_gpu_batch_times_here_without_a_run_file").is_none() {
        return;
    }
    let mut c = standin::pqcprof(&[]);
    c.args(common::words(
        "plan --backend native-gpu --alg ML-KEM-768 --op encaps --rate 100 --batch-top 4 --json",
    ));
    let (code, out, err) = outcome(&mut c);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["from"], "measured here just now (native-gpu, 1 worker)",
        "{v}"
    );
    let basis = v["curve"]["basis"].as_str().unwrap();
    assert!(basis.contains("GPU stream"), "{v}");
    assert_eq!(v["curve"]["points"].as_array().unwrap().len(), 3, "{v}");
}
