//! `pqcprof merge`: the run files of a cluster job's ranks (here `pqcprof
//! cpu` runs given Slurm's environment by hand, no Slurm needed) into one
//! run file with cluster totals; missing ranks and differing versions
//! named; the report's cluster section.

mod common;

use common::{outcome, pqcprof};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One CPU rank of job 77 measuring ML-KEM-512 keygen (batch 32, `runs`
/// runs, one thread) into `job/cpu/rank-<procid>`, as the batch script lays
/// it out; started, not waited for.
fn start_rank(
    job: &Path,
    procid: usize,
    ntasks: usize,
    node: &str,
    runs: usize,
    batch: usize,
) -> std::process::Child {
    let dir = job.join("cpu").join(format!("rank-{procid}"));
    std::process::Command::new(assert_cmd::cargo::cargo_bin("pqcprof"))
        .args(common::words(
            "cpu --alg ML-KEM-512 --op keygen --threads 1 --batch",
        ))
        .arg(batch.to_string())
        .arg("--runs")
        .arg(runs.to_string())
        .arg("--out")
        .arg(&dir)
        .env("SLURM_JOB_ID", "77")
        .env("SLURM_STEP_ID", "1")
        .env("SLURM_PROCID", procid.to_string())
        .env("SLURM_STEP_NUM_TASKS", ntasks.to_string())
        .env("SLURMD_NODENAME", node)
        .env("PQCPROF_RANK_ROLE", "cpu")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The run file a finished rank wrote.
fn finish_rank(job: &Path, procid: usize, mut child: std::process::Child) -> PathBuf {
    assert!(child.wait().unwrap().success(), "rank {procid}");
    let dir = job.join("cpu").join(format!("rank-{procid}"));
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap()
}

/// One rank, run to the end (3 runs).
fn rank(job: &Path, procid: usize, ntasks: usize, node: &str) -> PathBuf {
    finish_rank(job, procid, start_rank(job, procid, ntasks, node, 3, 32))
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn ranks_are_merged_with_cluster_totals_and_reported() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    // The three ranks run at once, as Slurm starts them. Each timed run
    // is long (a batch of 2000, ~15 ms) and there are 40 of them, so the
    // three ranks' runs overlap in time even on two cores, where short runs
    // separated by sampler gaps rarely ran all three at once.
    let ranks: Vec<_> = [(0, "node-a"), (1, "node-a"), (2, "node-b")]
        .into_iter()
        .map(|(p, node)| (p, start_rank(&job, p, 3, node, 40, 2000)))
        .collect();
    for (p, child) in ranks {
        finish_rank(&job, p, child);
    }
    let merged_path = d.path().join("cluster-run.json");
    let (code, stdout, stderr) =
        outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged_path));
    assert_eq!(code, 0, "{stdout}{stderr}");
    common::assert_has(&stdout, &["Merged 3 rank run file(s) from 2 node(s)"]);
    let m = read_json(&merged_path);
    assert_eq!(m["complete"], true);
    let c = &m["cluster"];
    assert_eq!(c["job_id"], "77");
    assert_eq!(c["ranks"].as_array().unwrap().len(), 3);
    assert!(c["missing"].as_array().unwrap().is_empty());
    assert!(c["differences"].as_array().unwrap().is_empty(), "{c}");
    let records = m["records"].as_array().unwrap();
    assert_eq!(records.len(), 3);
    let ranks: Vec<u64> = records
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1, 2]);
    // One aggregate: the three ranks' ML-KEM-512 keygen, added up.
    let aggs = m["aggregates"].as_array().unwrap();
    assert_eq!(aggs.len(), 1, "{aggs:?}");
    let a = &aggs[0];
    assert_eq!(a["scope"], "cluster job 77");
    let members: Vec<f64> = a["member_ops_per_sec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(members.len(), 3);
    let total = a["total_ops_per_sec"]
        .as_f64()
        .expect("overlapping ranks have a total");
    assert!(a["overlap"]
        .as_str()
        .unwrap()
        .starts_with("runs that overlapped"));
    assert!(total > 0.0);
    // Each rank's share and the total, worked out from the ranks' own run
    // windows and run times.
    common::assert_aggregate_adds_up(records, a);
    let nodes: Vec<&str> = a["by_node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(nodes, ["node-a", "node-b"]);
    // The report's cluster section: nodes, totals, the slowest rank.
    let (code, md, stderr) = outcome(
        pqcprof()
            .arg("report")
            .arg(&merged_path)
            .args(["--format", "markdown", "-o", "-"]),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(md.contains("## Cluster"), "{md}");
    assert!(md.contains("node-a") && md.contains("node-b"), "{md}");
    let slowest = a["spread"]["slowest"].as_str().unwrap();
    assert!(
        md.contains(slowest),
        "the slowest rank {slowest} is named:\n{md}"
    );
}

#[test]
fn a_missing_rank_and_another_version_are_named_and_the_rest_merged() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    rank(&job, 0, 3, "node-a");
    let other = rank(&job, 2, 3, "node-b");
    // Rank 2 ran another pqcprof.
    let mut v = read_json(&other);
    v["metadata"]["pqcprof_version"] = "9.9.9".into();
    std::fs::write(&other, serde_json::to_vec(&v).unwrap()).unwrap();
    let merged_path = d.path().join("cluster-run.json");
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged_path));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("missing: cpu rank 1 (of 3)"), "{stderr}");
    common::assert_has(&stderr, &["pqcprof version differs", "9.9.9"]);
    assert!(stderr.contains("marked incomplete"), "{stderr}");
    let m = read_json(&merged_path);
    assert_eq!(m["complete"], false);
    assert_eq!(m["cluster"]["complete"], false);
    assert_eq!(m["records"].as_array().unwrap().len(), 2);
    // One rank after the other: their runs never overlapped, so no total.
    let a = &m["aggregates"][0];
    assert!(a["total_ops_per_sec"].is_null(), "{a}");
    assert!(a["overlap"].as_str().unwrap().contains("no total"), "{a}");
    // The report says so too.
    let (_, md, _) = outcome(
        pqcprof()
            .arg("report")
            .arg(&merged_path)
            .args(["--format", "markdown", "-o", "-"]),
    );
    common::assert_has(&md, &["cpu rank 1 (of 3)", "9.9.9"]);
}

#[test]
fn the_expected_ranks_file_names_a_rank_that_never_started() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    rank(&job, 0, 1, "node-a");
    // The batch script launched a GPU step too, which wrote nothing.
    std::fs::write(job.join("expected-ranks"), "gpu 2\ncpu 1\n").unwrap();
    let out = d.path().join("m.json");
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&out));
    assert_eq!(code, 3);
    common::assert_has(&stderr, &["gpu rank 0 (of 2)", "gpu rank 1 (of 2)"]);
}

#[test]
fn bad_inputs_are_named() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(d.path()));
    assert_eq!(code, 1);
    assert!(stderr.contains("no usable run file"), "{stderr}");
    let (code, _, stderr) = outcome(pqcprof().args(["merge", "/nonexistent/77"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent/77"), "{stderr}");
    std::fs::write(d.path().join("expected-ranks"), "gpu four\n").unwrap();
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(d.path()));
    assert_eq!(code, 1);
    assert!(stderr.contains("bad line 'gpu four'"), "{stderr}");
}

#[test]
fn a_rank_killed_mid_run_is_merged_and_marked_unfinished() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    rank(&job, 0, 2, "node-a");
    let killed = rank(&job, 1, 2, "node-b");
    // What a rank killed after its first algorithm leaves: a valid file,
    // not complete.
    let mut v = read_json(&killed);
    v["complete"] = false.into();
    std::fs::write(&killed, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = d.path().join("m.json");
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&out));
    assert_eq!(code, 3, "{stderr}");
    common::assert_has(&stderr, &["incomplete: cpu rank 1 on node-b"]);
    let m = read_json(&out);
    assert_eq!(m["complete"], false);
    assert_eq!(m["cluster"]["ranks"][1]["complete"], false);
    assert_eq!(
        m["records"].as_array().unwrap().len(),
        2,
        "its records are kept"
    );
}

#[test]
fn ranks_of_other_commands_keep_their_sections_or_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    let a = rank(&job, 0, 2, "node-a");
    let b = rank(&job, 1, 2, "node-b");
    // An offload run's section, from a real short run.
    let served = d.path().join("served");
    let (code, _, err) = outcome(
        pqcprof()
            .args([
                "offload",
                "--alg",
                "ML-KEM-512",
                "--op",
                "keygen",
                "--rate",
                "100",
            ])
            .args([
                "--window",
                "0.1",
                "--max-batch",
                "1",
                "--max-wait",
                "0",
                "--out",
            ])
            .arg(&served),
    );
    assert_eq!(code, 0, "{err}");
    let offload = read_json(&common::files(&served, "run-", ".json")[0])["offload"].clone();
    assert!(offload["points"].is_array(), "{offload}");
    // Rank 0 swept; rank 1 served requests.
    let edit = |p: &Path, key: &str, value: Value| {
        let mut v = read_json(p);
        v[key] = value;
        std::fs::write(p, serde_json::to_vec(&v).unwrap()).unwrap();
    };
    let sweep =
        serde_json::json!({"warmup_seconds": 0.0, "window_seconds": 0.05, "wall_seconds": 3.0});
    edit(&a, "sweep", sweep);
    edit(&b, "offload", offload.clone());
    let merged = d.path().join("m.json");
    let (code, _, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged));
    assert_eq!(code, 0, "{stderr}");
    let m = read_json(&merged);
    assert_eq!(m["sweep"]["window_seconds"], 0.05, "the sweep was lost");
    assert_eq!(m["offload"], offload, "the offload points were lost");
    let diffs = m["cluster"]["differences"].to_string();
    assert!(
        diffs.contains("1 of 2 rank files are sweeps") && diffs.contains("offload points from"),
        "{diffs}"
    );
    // Two ranks' offload points cannot be one section: refused by name.
    edit(&a, "offload", offload);
    let (code, _, stderr) = outcome(
        pqcprof()
            .arg("merge")
            .arg(&job)
            .arg("-o")
            .arg(d.path().join("m2.json")),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("both hold `pqcprof offload` points"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&*a.file_name().unwrap().to_string_lossy()),
        "{stderr}"
    );
}

#[test]
fn a_rank_record_at_odds_with_its_runs_or_out_of_bounds_is_left_out_by_name() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("77");
    rank(&job, 0, 2, "node-a");
    let other = rank(&job, 1, 2, "node-b");
    // Rank 1's record states a thousand times the throughput its runs
    // give; a copy of it (test only) has a negative run time.
    let mut v = read_json(&other);
    let mut neg = v["records"][0].clone();
    let r = &mut v["records"][0];
    let ops = r["ops_per_sec"].as_f64().unwrap() * 1000.0;
    r["ops_per_sec"] = ops.into();
    r["throughput_ops_per_sec"]["median"] = ops.into();
    neg["run_seconds"][1] = (-0.5).into();
    v["records"].as_array_mut().unwrap().push(neg);
    std::fs::write(&other, serde_json::to_vec(&v).unwrap()).unwrap();
    let merged_path = d.path().join("cluster-run.json");
    let (code, out, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged_path));
    assert_eq!(code, 0, "{out}{stderr}");
    let name = "ML-KEM-512 keygen on liboqs-cpu, batch 32";
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(name)).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    let file = other.display().to_string();
    for (line, what) in lines.iter().zip(["ops_per_sec", "run_seconds[1] -0.5"]) {
        common::assert_has(line, &[&file, what, "left out"]);
    }
    assert!(lines[0].contains("disagrees with its runs"), "{stderr}");
    // The rest is merged: rank 0's record alone.
    let m = read_json(&merged_path);
    let records = m["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{stderr}");
    assert_eq!(records[0]["rank"], 0);
}

/// Each rank measures its own timing floor; floors a few nanoseconds apart
/// (ranks under different load) are no difference between ranks, a floor
/// of another kind is.
#[test]
fn ranks_floors_apart_by_measurement_are_no_difference_another_kind_is() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("78");
    let _ = rank(&job, 0, 2, "node-a");
    let second = rank(&job, 1, 2, "node-a");
    let mut run = read_json(&second);
    let floors = run["floor"].as_array_mut().expect("a floor per backend");
    assert!(!floors.is_empty(), "{run}");
    let seconds = floors[0]["seconds"].as_f64().unwrap();
    floors[0]["seconds"] = serde_json::json!(seconds * 3.0 + 1e-9);
    std::fs::write(&second, serde_json::to_vec(&run).unwrap()).unwrap();
    let merged = d.path().join("m.json");
    let (code, stdout, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let m = read_json(&merged);
    let diffs = &m["cluster"]["differences"];
    assert!(diffs.as_array().unwrap().is_empty(), "{diffs}");

    let mut run = read_json(&second);
    run["floor"][0]["method"] = serde_json::json!("another kind of empty window");
    std::fs::write(&second, serde_json::to_vec(&run).unwrap()).unwrap();
    let (code, stdout, stderr) = outcome(pqcprof().arg("merge").arg(&job).arg("-o").arg(&merged));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let m = read_json(&merged);
    let diffs = m["cluster"]["differences"].to_string();
    assert!(
        diffs.contains("times another kind of empty window where an earlier rank's"),
        "{diffs}"
    );
}
