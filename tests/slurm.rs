//! `scripts/slurm/pqcprof.sbatch` on a real one-node Slurm cluster
//! (Debian's slurmctld, slurmd and munge, started by
//! `scripts/slurm/local-cluster` in a temporary folder, two fake GPUs):
//! submit, wait, then check every rank's records reached the merged run
//! file, the aggregates add up and the report was rendered. The daemons
//! are stopped whatever happens (a guard's `Drop`, the test's trap).
//!
//! Needs root and the Slurm packages; without them it says loudly that it
//! was skipped, and fails instead under `PQCPROF_REQUIRE_SLURM=1` (CI).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LOCAL_CLUSTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm/local-cluster");
const SBATCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm/pqcprof.sbatch");

/// Why Slurm cannot run here, if it cannot.
fn missing_slurm() -> Option<String> {
    for tool in ["slurmctld", "slurmd", "sbatch", "munged"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !found {
            return Some(format!("{tool} is not installed (apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)"));
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (munged must be started as the munge user)".into());
    }
    None
}

/// Skips loudly, or fails under PQCPROF_REQUIRE_SLURM=1.
fn slurm_or_skip() -> bool {
    match missing_slurm() {
        None => true,
        Some(why) => {
            assert!(
                std::env::var("PQCPROF_REQUIRE_SLURM").as_deref() != Ok("1"),
                "PQCPROF_REQUIRE_SLURM=1 but {why}"
            );
            common::skipped(
                "the_batch_script_runs_on_a_real_slurm_and_every_rank_is_merged",
                &format!("needs Slurm: {why}"),
            );
            false
        }
    }
}

/// A started cluster; dropping it stops the daemons, even after a panic.
struct LocalCluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl LocalCluster {
    fn start(dir: &Path) -> LocalCluster {
        let cluster = LocalCluster {
            dir: dir.to_path_buf(),
            conf: dir.join("slurm.conf"),
        };
        let out = Command::new(LOCAL_CLUSTER)
            .arg("start")
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "local-cluster start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }

    fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Job state from `scontrol`, e.g. `COMPLETED`.
    fn job_state(&self, id: &str) -> String {
        let out = self
            .command("scontrol")
            .args(["show", "job", "-o", id])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("UNKNOWN")
            .to_string()
    }
}

impl LocalCluster {
    /// Waits for job `id` to end (at most 150 s after `t0`); its end state.
    fn wait(&self, id: &str, t0: Instant) -> String {
        loop {
            let s = self.job_state(id);
            if [
                "COMPLETED",
                "FAILED",
                "CANCELLED",
                "TIMEOUT",
                "NODE_FAIL",
                "OUT_OF_MEMORY",
            ]
            .contains(&s.as_str())
            {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(150),
                "job {id} still {s} after 150 s"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        let _ = Command::new(LOCAL_CLUSTER)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

/// Every run file under `dir`.
fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            out.extend(run_files(&p));
        } else if name.starts_with("run-") && name.ends_with(".json") {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_batch_script_runs_on_a_real_slurm_and_every_rank_is_merged() {
    if !slurm_or_skip() {
        return;
    }
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let cluster = LocalCluster::start(&tmp.path().join("cluster"));
    let results = tmp.path().join("results");
    let pqcprof = assert_cmd::cargo::cargo_bin("pqcprof");
    // The GPU ranks run on the CPU stand-in driver when NVRTC is here (it
    // compiles the kernels): emulated, never a speed. Without NVRTC they
    // find no GPU backend ready, a normal state, and leave skipped records.
    let emulated_gpus = common::nvrtc_or_skip("the Slurm test's emulated GPU ranks").is_some();
    let mut sbatch = cluster.command("sbatch");
    if emulated_gpus {
        sbatch
            .env("LD_LIBRARY_PATH", common::standin::library_path())
            .env("PQCPROF_PTX_CACHE", common::standin::ptx_cache());
    }
    let out = sbatch
        .args(["--parsable", "--nodes=1", "--ntasks=2", "--gpus-per-task=1"])
        .arg(format!("--output={}/slurm-%j.out", tmp.path().display()))
        .arg(SBATCH)
        .current_dir(tmp.path())
        .env("PQCPROF_BIN", &pqcprof)
        .env("PQCPROF_RESULTS", &results)
        .env(
            "PQCPROF_ARGS",
            "--alg ML-KEM-512,ML-DSA-44 --batch 8 --runs 3",
        )
        .env("PQCPROF_CPU_ARGS", "--threads 1")
        .env("PQCPROF_GPU_ARGS", "--backend native-gpu --warmup 0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sbatch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let job = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let state = cluster.wait(&job, t0);
    let log =
        std::fs::read_to_string(tmp.path().join(format!("slurm-{job}.out"))).unwrap_or_default();
    let job_dir = results.join(&job);
    // Each rank made its own folder, named by its SLURM_PROCID.
    for rank in ["gpu/rank-0", "gpu/rank-1", "cpu/rank-0"] {
        assert!(
            !run_files(&job_dir.join(rank)).is_empty(),
            "{rank} left no run file (job {state}); log:\n{log}"
        );
    }
    let merged = read_json(&job_dir.join("cluster-run.json"));
    let c = &merged["cluster"];
    assert_eq!(c["job_id"], job.as_str(), "{log}");
    let ranks = c["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3, "{log}");
    assert!(c["missing"].as_array().unwrap().is_empty(), "{log}");
    // Slurm gave each GPU rank its own (fake) GPU.
    let mut visible: Vec<&str> = ranks
        .iter()
        .filter(|r| r["role"] == "gpu")
        .map(|r| {
            r["metadata"]["slurm"]["cuda_visible_devices"]
                .as_str()
                .unwrap()
        })
        .collect();
    visible.sort();
    assert_eq!(visible, ["0", "1"], "{log}");
    // Every rank's records are in the merged file, attributed to it.
    let records = merged["records"].as_array().unwrap();
    for (i, r) in ranks.iter().enumerate() {
        let own = read_json(Path::new(r["file"].as_str().unwrap()));
        let n = own["records"].as_array().unwrap().len();
        assert!(n > 0);
        assert_eq!(r["records"], n);
        assert_eq!(
            records.iter().filter(|x| x["rank"] == i).count(),
            n,
            "rank {i}'s records"
        );
    }
    let cpu_ok = records
        .iter()
        .filter(|r| r["backend"] == "liboqs-cpu" && r["status"] == "ok")
        .count();
    assert_eq!(cpu_ok, 6, "ML-KEM-512 and ML-DSA-44, three operations each");
    let gpu: Vec<&Value> = records
        .iter()
        .filter(|r| r["backend"] == "native-gpu")
        .collect();
    assert_eq!(gpu.len(), 12, "two GPU ranks, six operations each");
    if emulated_gpus {
        for r in &gpu {
            assert_eq!(r["status"], "ok", "{r:#}\n{log}");
            assert_eq!(r["emulated"], true, "{r:#}");
        }
        // The two GPU ranks' operations are added up, and stay emulated.
        let gpu_aggs: Vec<&Value> = merged["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["backend"] == "native-gpu")
            .collect();
        assert_eq!(gpu_aggs.len(), 6, "{log}");
        assert!(gpu_aggs
            .iter()
            .all(|a| a["emulated"] == true && a["members"].as_array().unwrap().len() == 2));
    } else {
        assert!(gpu.iter().all(|r| r["status"] == "skipped"));
    }
    // The aggregates add up: each rank's share and the total (or its
    // absence) as the ranks' own run windows and run times give them.
    let aggregates = merged["aggregates"].as_array().unwrap();
    assert!(!aggregates.is_empty(), "{log}");
    for a in aggregates {
        common::assert_aggregate_adds_up(records, a);
        for i in a["records"].as_array().unwrap() {
            let rec = &records[i.as_u64().unwrap() as usize];
            assert_eq!(rec["algorithm"], a["algorithm"]);
            assert_eq!(rec["operation"], a["operation"]);
        }
    }
    let report = std::fs::read_to_string(job_dir.join("report.md")).unwrap();
    assert!(report.contains("## Cluster"), "{report}");
    assert!(job_dir.join("report.html").exists());
    // A CPU-only partition: no GPU step, one CPU task per node.
    let out = cluster
        .command("sbatch")
        .args(["--parsable", "--nodes=1", "--ntasks=1"])
        .arg(format!("--output={}/slurm-%j.out", tmp.path().display()))
        .arg(SBATCH)
        .current_dir(tmp.path())
        .env("PQCPROF_BIN", &pqcprof)
        .env("PQCPROF_RESULTS", &results)
        .env("PQCPROF_GPU", "0")
        .env("PQCPROF_ARGS", "--alg ML-KEM-512 --batch 8 --runs 3")
        .env("PQCPROF_CPU_ARGS", "--threads all")
        .output()
        .unwrap();
    assert!(out.status.success());
    let cpu_job = String::from_utf8_lossy(&out.stdout).trim().to_string();
    cluster.wait(&cpu_job, t0);
    let cpu_dir = results.join(&cpu_job);
    assert_eq!(
        std::fs::read_to_string(cpu_dir.join("expected-ranks")).unwrap(),
        "cpu 1\n"
    );
    let merged = read_json(&cpu_dir.join("cluster-run.json"));
    assert_eq!(merged["complete"], true);
    let recs = merged["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3);
    assert!(recs
        .iter()
        .all(|r| r["backend"] == "liboqs-cpu" && r["status"] == "ok"));
    assert!(
        t0.elapsed() < Duration::from_secs(170),
        "the Slurm test must stay under 3 minutes with the stop"
    );
}
