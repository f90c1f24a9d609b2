//! Measurement bounded by time, on the CPU stand-in CUDA driver made slow
//! (`PQCPROF_STANDIN_NS_PER_OP`): `--deadline` returns in time with the
//! finished runs kept, Ctrl-C keeps the runs of the record in flight, the
//! end-to-end staging stays within its pinned size (`scripts/gpu-check`'s
//! deadline, summary and archive on the slow stand-in: tests/gpu_check_script.rs).
//! The stand-in is not a GPU: this proves the time bounds and the
//! bookkeeping, never speed.

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn records(out: &Path) -> Vec<Value> {
    let v = common::read_json(&common::run_file_in(out));
    v["records"].as_array().unwrap().clone()
}

fn native(recs: &[Value]) -> Vec<&Value> {
    recs.iter()
        .filter(|r| r["backend"] == "native-gpu")
        .collect()
}

#[test]
fn a_deadline_returns_in_time_with_finished_runs_kept() {
    if nvrtc_or_skip("a_deadline_returns_in_time_with_finished_runs_kept").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // The kernels compiled (NVRTC) and cached first: the deadline counts
    // from the command's start, compile included.
    let mut warm = standin::pqcprof(&[]);
    warm.args(common::words(
        "gpu --backend native-gpu --alg ML-DSA-44 --op sign",
    ))
    .args(["--batch", "1", "--runs", "1", "--out"])
    .arg(d.path().join("warm"));
    assert_eq!(outcome(&mut warm).0, 0);
    // The one-thread signing kernel runs as many queue threads as the
    // device holds at once (384 on one multiprocessor), each at least 4 ms:
    // a launch takes about 1.5 s, so 20 runs of two records take well over
    // 60 s, while calibration, warm-up and a first run fit each record's
    // 15 s share. One multiprocessor keeps the emulation's own CPU time
    // under that floor even while other tests load both cores (with two,
    // 768 ML-DSA-65 signatures took 3.4 s a launch beside NVRTC compiles,
    // and the second record's share held no timed run).
    let mut c = standin::pqcprof(&[("NS_PER_OP", "4000000"), ("SMS", "1")]);
    c.args(common::words(
        "gpu --backend native-gpu --alg ML-DSA-44,ML-DSA-65",
    ))
    .args(["--op", "sign", "--kernel", "thread", "--runs", "20"])
    .args(["--deadline", "30", "--out"])
    .arg(d.path().join("out"));
    let t0 = Instant::now();
    let (code, _, err) = outcome(&mut c);
    let took = t0.elapsed();
    assert_eq!(code, 5, "the deadline's exit code\n{err}");
    let recs = records(&d.path().join("out"));
    // A launch cannot be cut half way: the deadline may be passed by at
    // most the longest run the file records (a run the budget foresaw
    // fitting, slowed by load), and a second for writing.
    let longest = recs
        .iter()
        .flat_map(|r| r["run_seconds"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s.as_f64())
        .fold(0.0, f64::max);
    assert!(
        took < Duration::from_secs_f64(30.0 + longest + 1.0),
        "took {took:?} (longest run {longest:.2} s; {})\n{err}",
        common::load_note()
    );
    let ok: Vec<&Value> = native(&recs)
        .into_iter()
        .filter(|r| r["status"] == "ok")
        .collect();
    // Each record gets its share of the deadline, so the first cannot take
    // the second's time: both are begun and kept.
    assert_eq!(ok.len(), 2, "{err}");
    for r in &ok {
        let done = r["runs_completed"].as_u64().unwrap();
        assert!((1..20).contains(&done), "{r:#}");
        assert_eq!(r["runs_requested"], 20);
        assert_eq!(r["run_seconds"].as_array().unwrap().len() as u64, done);
        assert!(
            r["cut"].as_str().unwrap().contains("--deadline 30"),
            "{r:#}"
        );
        assert_eq!(r["batch_basis"]["method"], "calibrated", "{r:#}");
        // The slow launches show in the events' elapsed times.
        assert!(r["batch_ms"].as_f64().unwrap() > 1000.0, "{r:#}");
    }
}

/// A launch cannot be stopped half way: the run under way when the signal
/// comes finishes, is measured in full and is kept with the two before it;
/// no run starts after the signal, and the record is not lost.
#[test]
fn ctrl_c_in_the_third_run_keeps_the_finished_runs() {
    if nvrtc_or_skip("ctrl_c_in_the_third_run_keeps_the_finished_runs").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("copies.log");
    // 1024 key pairs at 4 ms each: every launch takes about 4 s.
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pqcprof"))
        .env("LD_LIBRARY_PATH", standin::library_path())
        .env("PQCPROF_PTX_CACHE", standin::ptx_cache())
        .env("PQCPROF_STANDIN_NS_PER_OP", "4000000")
        .env("PQCPROF_STANDIN_COPY_LOG", &log)
        .env("PQCPROF_VECTORS", standin::NO_VECTORS)
        .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
        .args(["--op", "keygen", "--batch", "1024", "--runs", "5", "--out"])
        .arg(d.path().join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The gate's copies come after the warm-up launch; then runs 1 and 2
    // take about 8 s, and 10 s later run 3 is under way.
    let t0 = Instant::now();
    while std::fs::metadata(&log).map_or(0, |m| m.len()) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no gate copies");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(10));
    common::interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let recs = records(&d.path().join("out"));
    let r = native(&recs)[0];
    assert_eq!(r["status"], "ok", "{r:#}");
    // Three runs at the signal's 10 s (runs 1 and 2 end near 8 s); two
    // where a loaded machine delays the signal's arrival, never all five.
    let done = r["runs_completed"].as_u64().unwrap();
    assert!((2..=3).contains(&done), "{r:#}");
    assert_eq!(r["runs_requested"], 5, "{r:#}");
    assert!(r["cut"].as_str().unwrap().contains("a signal"), "{r:#}");
    assert_eq!(
        r["throughput_ops_per_sec"]["raw"].as_array().unwrap().len() as u64,
        done
    );
}

#[test]
fn pinned_staging_never_exceeds_its_size() {
    if nvrtc_or_skip("pinned_staging_never_exceeds_its_size").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let peak = d.path().join("pinned.json");
    // ML-DSA-44 sign at batch 512: 1.3 MB of secret keys alone, streamed
    // through 64 KiB of pinned memory; the gate after the end-to-end runs
    // checks what the chunks carried.
    let mut c = standin::pqcprof(&[]);
    c.env("PQCPROF_STANDIN_PINNED_PEAK_FILE", &peak)
        .env("PQCPROF_STAGING_BYTES", "65536")
        .args(["gpu", "--backend", "native-gpu", "--alg", "ML-DSA-44"])
        .args(["--op", "sign", "--batch", "512", "--runs", "2", "--out"])
        .arg(d.path().join("out"));
    let (code, _, err) = outcome(&mut c);
    assert_eq!(code, 0, "{err}");
    let r = native(&records(&d.path().join("out")))[0].clone();
    assert_eq!(r["status"], "ok", "{r:#}");
    assert_eq!(
        r["end_to_end"]["run_seconds"].as_array().unwrap().len(),
        2,
        "{r:#}"
    );
    let p = common::read_json(&peak)["peak_pinned_bytes"]
        .as_u64()
        .unwrap();
    assert!(p > 0 && p <= 65536, "peak pinned {p} bytes");
}
