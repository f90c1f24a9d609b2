//! The figures a user reads are the ones measured: the cuPQC-shaped
//! headline files after a benchmark and a batch sweep into one folder, the
//! warm-up a run file records, and how busy the machine was.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{pqcprof, read_json};

fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = common::files(dir, "run-", ".json");
    v.sort();
    v
}

/// `cpu` on ML-KEM-512 key generation, one thread, with `batch` arguments.
fn cpu(out: &Path, batch: &[&str]) {
    pqcprof()
        .args(common::words(
            "cpu --alg ML-KEM-512 --op keygen --threads 1",
        ))
        .args(["--runs", "3"])
        .args(batch)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// The throughput mean of the headline file, and of a run file's record
/// at `batch`, both as the cuPQC-shaped files print them (2 decimals).
fn headline(dir: &Path) -> f64 {
    let v = read_json(&dir.join("liboqs-cpu-1t/mlkem_results.json"));
    v["ML-KEM-512"]["KeyGen"]["throughput"]["mean"]
        .as_f64()
        .unwrap()
}

fn record_mean(run: &Value, batch: u64) -> f64 {
    let r = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["batch"] == batch)
        .unwrap_or_else(|| panic!("no record at batch {batch}"));
    (r["throughput_ops_per_sec"]["mean"].as_f64().unwrap() * 100.0).round() / 100.0
}

#[test]
fn a_batch_sweep_after_a_benchmark_keeps_the_benchmarks_headline() {
    let d = tempfile::tempdir().unwrap();
    cpu(d.path(), &["--batch", "64"]);
    let bench = read_json(&run_files(d.path())[0]);
    let measured = record_mean(&bench, 64);
    assert_eq!(headline(d.path()), measured);
    // A later batch sweep (1, 4, 16) into the same folder.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    cpu(d.path(), &["--batch-sweep", "16"]);
    assert_eq!(
        headline(d.path()),
        measured,
        "the benchmark's batch-64 figure, not a smaller batch of the sweep"
    );
    let runs = run_files(d.path());
    assert_eq!(runs.len(), 2);
    let sweep = runs
        .iter()
        .map(|p| read_json(p))
        .find(|r| r["config"]["batch_sweep"] == true)
        .unwrap();
    // The sweep's batches each have their own files.
    for b in [1u64, 4, 16] {
        let v = read_json(
            &d.path()
                .join(format!("liboqs-cpu-1t/batch-{b}/mlkem_results.json")),
        );
        assert_eq!(
            v["ML-KEM-512"]["KeyGen"]["throughput"]["mean"].as_f64(),
            Some(record_mean(&sweep, b)),
            "batch {b}"
        );
    }
    let sources = read_json(&d.path().join("headline-sources.json"));
    assert_eq!(
        sources["liboqs-cpu-1t/mlkem_results.json"]["batch_sweep"],
        false
    );
}

#[test]
fn a_batch_sweep_alone_headlines_its_largest_batch() {
    let d = tempfile::tempdir().unwrap();
    cpu(d.path(), &["--batch-sweep", "16"]);
    let run = read_json(&run_files(d.path())[0]);
    assert_eq!(headline(d.path()), record_mean(&run, 16));
}

#[test]
fn the_warm_up_that_always_runs_is_recorded() {
    let d = tempfile::tempdir().unwrap();
    cpu(d.path(), &["--batch", "8", "--warmup", "0"]);
    let run = read_json(&run_files(d.path())[0]);
    assert_eq!(run["config"]["warmup_runs"], 1);
    assert_eq!(run["records"][0]["warmup_runs"], 1);
}

#[test]
fn the_run_file_says_how_busy_the_machine_was_over_the_run() {
    let d = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    cpu(d.path(), &["--batch", "8"]);
    let wall = started.elapsed().as_secs_f64();
    let run = read_json(&run_files(d.path())[0]);
    let load = &run["metadata"]["machine_load"];
    // Over the run: some time, and no more than the whole command took.
    let seconds = load["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0 && seconds <= wall, "{load} in {wall} s");
    // Set against this machine's cores.
    let cores = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(load["cores"].as_u64(), Some(cores), "{load}");
    // The load average at both ends, where the system tells it.
    if Path::new("/proc/loadavg").exists() {
        for k in ["load_average_start", "load_average_end"] {
            assert!(load[k].is_number(), "{k}: {load}");
        }
    }
}
