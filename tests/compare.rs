//! `compare OLD NEW` on run files made by a tiny real CPU run: the change
//! of each record with its 95% interval from the raw runs, the verdict,
//! the exit code of the gate and the JSON form.

mod common;
use common::{outcome, pqcprof, run_file_in};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A real run of ML-KEM-512's three operations, `runs` runs of batch 2.
fn real_run(dir: &Path, runs: &str) -> PathBuf {
    let out = dir.join(format!("runs-{runs}"));
    let (code, _, err) = outcome(
        pqcprof()
            .args(["cpu", "--alg", "ML-KEM-512", "--batch", "2", "--runs", runs])
            .args(["--threads", "1", "--out"])
            .arg(&out),
    );
    assert_eq!(code, 0, "{err}");
    run_file_in(&out)
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

/// Each record's runs and median throughput edited by `edit(k, seconds)`
/// (run `k`), and the median ops/s scaled by `ops_factor`.
fn edited(v: &Value, ops_factor: f64, edit: impl Fn(usize, f64) -> f64) -> Value {
    let mut v = v.clone();
    for r in v["records"].as_array_mut().unwrap() {
        let secs: Vec<f64> = r["run_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(k, s)| edit(k, s.as_f64().unwrap()))
            .collect();
        r["run_seconds"] = json!(secs);
        let ops = r["ops_per_sec"].as_f64().unwrap() * ops_factor;
        r["ops_per_sec"] = json!(ops);
        r["ms_per_op"] = json!(1000.0 / ops);
    }
    v
}

/// The real run with each record's runs replaced by a quiet machine's:
/// its first run's time, spread by +-0.2% in a fixed pattern.
fn quiet(v: &Value) -> Value {
    let first: Vec<f64> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_seconds"][0].as_f64().unwrap())
        .collect();
    let mut q = v.clone();
    for (r, base) in q["records"].as_array_mut().unwrap().iter_mut().zip(first) {
        let n = r["run_seconds"].as_array().unwrap().len();
        let secs: Vec<f64> = (0..n)
            .map(|k| base * (1.0 + 0.002 * (((k * 7) % 11) as f64 - 5.0) / 5.0))
            .collect();
        r["run_seconds"] = json!(secs);
    }
    q
}

fn compare(old: &Path, new: &Path, extra: &[&str]) -> (i32, String, String) {
    outcome(pqcprof().arg("compare").arg(old).arg(new).args(extra))
}

/// The JSON form's records.
fn json_records(old: &Path, new: &Path, extra: &[&str]) -> (i32, Vec<Value>) {
    let (code, out, err) = compare(old, new, &[&["--json"], extra].concat());
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v["records"].as_array().unwrap().clone())
}

#[test]
fn a_run_compared_with_itself_is_the_same_and_with_a_slower_copy_slower() {
    let dir = tempfile::tempdir().unwrap();
    let q = quiet(&read(&real_run(dir.path(), "10")));
    let quiet_file = write(dir.path(), "quiet.json", &q);
    // Every raw run's throughput scaled by 0.9: each takes 1/0.9 as long.
    let slow = write(dir.path(), "slow.json", &edited(&q, 0.9, |_, s| s / 0.9));

    let (code, recs) = json_records(&quiet_file, &quiet_file, &[]);
    assert_eq!(code, 0);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert_eq!(r["verdict"], "same", "{r}");
        let ci = r["change_ci95"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= 0.0 && ci[1].as_f64().unwrap() >= 0.0);
        assert!(r["old_noise"].as_f64().unwrap() < 0.01, "{r}");
    }
    let (code, table, _) = compare(&quiet_file, &quiet_file, &[]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("+0.0%") && table.contains("same"), "{table}");
    assert!(!table.contains("overlap"), "{table}");

    let (code, recs) = json_records(&quiet_file, &slow, &[]);
    assert_eq!(code, 3);
    for r in &recs {
        assert_eq!(r["verdict"], "slower", "{r}");
        assert!((r["change"].as_f64().unwrap() + 0.1).abs() < 1e-9, "{r}");
        let ci = r["change_ci95"].as_array().unwrap();
        let (low, high) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(low <= -0.1 && (-0.1..-0.01).contains(&high), "{r}");
        assert_eq!(r["regression"], true);
    }
    let (code, table, err) = compare(&quiet_file, &slow, &[]);
    assert_eq!(code, 3, "{table}");
    common::assert_has(&table, &["-10.0%", "REGRESSION"]);
    assert!(err.contains("slower by more than 5%"), "{err}");
    // Slower, but within a gate of 15%: shown, not failed.
    let (code, table, _) = compare(&quiet_file, &slow, &["--fail-above", "15"]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("slower") && !table.contains("REGRESSION"));
    // Faster is never a regression.
    let (code, recs) = json_records(&slow, &quiet_file, &[]);
    assert_eq!(code, 0);
    assert!(recs.iter().all(|r| r["verdict"] == "faster"), "{recs:?}");
}

#[test]
fn a_real_noisy_run_against_itself_never_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path(), "8");
    let (code, recs) = json_records(&run, &run, &["--noise-threshold", "0"]);
    assert_eq!(code, 0);
    for r in &recs {
        // The differences of a sample with itself are symmetric about 0.
        assert_eq!(r["change"], 0.0, "{r}");
        let v = r["verdict"].as_str().unwrap();
        assert!(v == "same" || v == "unclear", "{r}");
    }
    // Twice the time per run: -50%, slower, past the default 5% gate.
    let v = read(&run);
    let half = write(dir.path(), "half.json", &edited(&v, 0.5, |_, s| s * 2.0));
    let (code, table, _) = compare(&run, &half, &[]);
    assert_eq!(code, 3, "{table}");
    common::assert_has(&table, &["-50.0%", "slower"]);
}

#[test]
fn too_few_runs_give_no_interval_and_an_unclear_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path(), "3");
    let v = read(&run);
    let half = write(dir.path(), "half.json", &edited(&v, 0.5, |_, s| s * 2.0));
    let (code, recs) = json_records(&run, &half, &[]);
    // 3 runs a side cannot make a 95% statement: no gate on a guess.
    assert_eq!(code, 0);
    for r in &recs {
        assert_eq!(r["verdict"], "unclear", "{r}");
        assert_eq!(r["change_ci95"], Value::Null, "{r}");
    }
    let (_, table, _) = compare(&run, &half, &[]);
    assert!(table.contains("n/a (< 4 runs)"), "{table}");
}

#[test]
fn bad_thresholds_are_refused_with_their_value() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path(), "4");
    for (flag, bad) in [
        ("--noise-threshold", "-1"),
        ("--noise-threshold", "100"),
        ("--noise-threshold", "NaN"),
        ("--fail-above", "-2"),
        ("--fail-above", "inf"),
    ] {
        let (code, out, err) = compare(&run, &run, &[flag, bad]);
        assert_eq!(code, 2, "{flag} {bad}: {out}{err}");
        assert!(
            err.contains(&format!("'{bad}' for '{flag}")),
            "{flag} {bad}: {err}"
        );
    }
}

/// A run made on a busy machine is named in the table and in the JSON
/// form: its intervals do not cover a load that came between the runs.
#[test]
fn a_run_on_a_busy_machine_is_named_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = quiet(&read(&real_run(dir.path(), "6")));
    let load = |other: f64, avg: f64| {
        json!({"seconds": 1.0, "other_processes_cpu_pct": other,
               "load_average_start": avg, "load_average_end": avg, "cores": 2})
    };
    v["metadata"]["machine_load"] = load(1.0, 0.2);
    let idle = write(dir.path(), "idle.json", &v);
    v["metadata"]["machine_load"] = load(64.0, 3.7);
    let busy = write(dir.path(), "busy.json", &v);
    let (_, table, _) = compare(&idle, &idle, &[]);
    assert!(!table.contains("caution"), "{table}");
    let (_, table, _) = compare(&idle, &busy, &[]);
    let cautions: Vec<&str> = table.lines().filter(|l| l.starts_with("caution")).collect();
    assert_eq!(cautions.len(), 1, "{table}");
    common::assert_has(
        cautions[0],
        &["the new run", "64%", "load average 3.7 on 2 cores"],
    );
    let (_, out, _) = compare(&busy, &idle, &["--json"]);
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["busy"][0]["run"], "old", "{j:#}");
    assert_eq!(j["busy"].as_array().unwrap().len(), 1, "{j:#}");
}

#[test]
fn files_that_share_no_record_give_no_verdict_and_no_regression() {
    let dir = tempfile::tempdir().unwrap();
    let v = read(&real_run(dir.path(), "3"));
    let old = write(dir.path(), "old.json", &v);
    // The same records under another backend's name: nothing in common.
    let mut other = v.clone();
    for r in other["records"].as_array_mut().unwrap() {
        r["backend"] = json!("elsewhere");
    }
    let new = write(dir.path(), "new.json", &other);
    let (code, out, err) = compare(&old, &new, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        !out.contains("REGRESSION") && !err.contains("regression"),
        "{out}{err}"
    );
    common::assert_has(&out, &["share no record", "0 record(s) compared"]);
    assert!(err.contains("nothing was compared"), "{err}");
    let (code, out, _) = compare(&old, &new, &["--json"]);
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (code, &j["regressions"], &j["shared"]),
        (1, &json!(0), &json!(0))
    );
}

#[test]
fn a_record_whose_throughput_disagrees_with_its_runs_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let v = read(&real_run(dir.path(), "3"));
    let old = write(dir.path(), "old.json", &v);
    // One record's stated throughput 1e-300, its runs untouched.
    let mut bad = v.clone();
    let r = &mut bad["records"][0];
    r["ops_per_sec"] = json!(1e-300);
    r["throughput_ops_per_sec"]["median"] = json!(1e-300);
    let new = write(dir.path(), "new.json", &bad);
    let (code, out, err) = compare(&old, &new, &[]);
    assert_eq!(code, 0, "{out}{err}");
    common::assert_has(
        &out,
        &[
            "LEFT OUT",
            "disagrees with its runs",
            "2 record(s) compared",
        ],
    );
    assert!(err.contains("left out, not compared"), "{err}");
    let (_, recs) = json_records(&old, &new, &[]);
    let left: Vec<_> = recs
        .iter()
        .filter(|r| r["outcome"] == "inconsistent")
        .collect();
    assert_eq!(left.len(), 1, "{recs:?}");
    assert!(
        left[0]["left_out"].as_str().unwrap().contains("1e-300"),
        "{left:?}"
    );
}
