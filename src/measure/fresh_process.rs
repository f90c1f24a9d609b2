//! `--fresh-process`: cuPQC_benchmark's method, for users who want it
//! exactly. Its benchmark programs are started anew for each of the 20
//! runs and time their first operation batch, with no warm-up in the
//! process. Here the correctness gate (warm-up included) first runs in this
//! process; then each timed run is one new `pqcprof` process
//! (`bench --fresh-child`) that prepares, times one cold batch, checks its
//! outputs and writes a run file; the runs are collected and summarised as
//! in-process runs are. The default stays in-process with a warm-up; each
//! record's `process` field says which method made it.

use crate::backend::Backend;
use crate::core::catalog::{Algorithm, Operation};
use crate::core::exit::Interrupted;
use crate::measure::runner::{fill_statistics, gate_only, MeasureConfig, Progress};
use crate::schema::record::{Record, Status, FRESH_PROCESS};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a child process needs besides the record's own settings.
#[derive(Debug, Clone)]
pub struct FreshChild {
    /// The pqcprof binary to start (this one).
    pub exe: PathBuf,
    /// CUDA device ordinal.
    pub device: usize,
    /// ML-DSA context, hex.
    pub context_hex: String,
    /// Latency mode.
    pub latency: bool,
    /// Sampler period, if given.
    pub sample_period_ms: Option<f64>,
    /// The native GPU kernel variant asked for (`--kernel`), if any.
    pub kernel: Option<&'static str>,
}

impl FreshChild {
    /// The child's command line for one cold run.
    fn command(
        &self,
        backend: &str,
        alg: Algorithm,
        op: Operation,
        cfg: &MeasureConfig,
        out: &std::path::Path,
    ) -> Command {
        let mut c = Command::new(&self.exe);
        c.args(["bench", "--fresh-child", "--backend", backend])
            .args(["--alg", alg.name(), "--op", op.cli_name()])
            .args(["--threads", &cfg.batch.threads.to_string()])
            .args(["--batch", &cfg.batch.batch.to_string()])
            .args(["--runs", "1", "--warmup", "0"])
            .args(["--message-size", &cfg.batch.message_size.to_string()])
            .args(["--context", &self.context_hex])
            .arg("--out")
            .arg(out);
        // Only GPU backends take a device: `--device` with the CPU backend
        // alone is refused as a value that would be ignored.
        if backend != crate::backend::liboqs::NAME {
            c.args(["--device", &self.device.to_string()]);
        }
        if self.latency {
            c.arg("--latency");
        }
        if let Some(p) = self.sample_period_ms {
            c.args(["--sample-period-ms", &p.to_string()]);
        }
        if let Some(k) = self.kernel {
            c.args(["--kernel", k]);
        }
        c
    }
}

/// A private folder for one child's outputs, removed when dropped.
struct ChildDir(PathBuf);

impl ChildDir {
    fn new() -> Result<Self> {
        use std::sync::atomic::AtomicUsize;
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pqcprof-fresh-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&p).with_context(|| format!("cannot create {}", p.display()))?;
        Ok(ChildDir(p))
    }
}

impl Drop for ChildDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One cold run in a new process: its seconds and sampler figures.
fn child_run(
    child: &FreshChild,
    backend: &str,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
) -> Result<Record> {
    let dir = ChildDir::new()?;
    let out = child
        .command(backend, alg, op, cfg, &dir.0)
        .output()
        .context("starting a fresh pqcprof process")?;
    let run_file = std::fs::read_dir(&dir.0)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("run-") && n.ends_with(".json")
        });
    let rec = run_file.and_then(|p| {
        let run: crate::schema::run_file::RunFile =
            serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
        run.records.into_iter().next()
    });
    match rec {
        Some(r) if r.status == Status::Ok && r.run_seconds.len() == 1 => Ok(r),
        Some(r) if r.reason.is_some() => bail!("{}", r.reason.unwrap_or_default()),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(3).collect();
            bail!(
                "the fresh process ended with {} and no measured record: {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        }
    }
}

/// Measures one record the fresh-process way: gate here, then `cfg.runs`
/// cold runs, each in its own process. Only Ctrl-C returns an error.
pub fn measure_in_fresh_process(
    backend: &mut dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    child: &FreshChild,
    cancel: &AtomicBool,
    progress: Progress<'_>,
) -> std::result::Result<Record, Interrupted> {
    let mut rec = gate_only(backend, alg, op, cfg, cancel)?;
    rec.process = format!(
        "{FRESH_PROCESS}: correctness gate (after {} warm-up run(s)) in the parent, then each of the {} timed runs in a new process with no warm-up",
        cfg.warmup_runs.max(1),
        cfg.runs
    );
    if rec.status == Status::Failed || rec.gate.is_none() {
        return Ok(rec);
    }
    let mut samplers = vec![];
    for i in 0..cfg.runs {
        if cancel.load(Ordering::SeqCst) {
            return Err(Interrupted);
        }
        match child_run(child, backend.name(), alg, op, cfg) {
            Ok(r) => {
                rec.run_seconds.push(r.run_seconds[0]);
                rec.usage.extend(r.usage.into_iter().take(1));
                samplers.push(r.sampler);
            }
            Err(_) if cancel.load(Ordering::SeqCst) => return Err(Interrupted),
            Err(e) => {
                rec.status = Status::Failed;
                rec.reason = Some(format!("fresh-process run {} failed: {e:#}", i + 1));
                return Ok(rec);
            }
        }
        progress(i + 1, cfg.runs);
    }
    samplers.dedup();
    rec.sampler = samplers.join("; ");
    if let Err(reason) = fill_statistics(&mut rec, cfg) {
        rec.status = Status::Failed;
        rec.reason = Some(reason);
    }
    Ok(rec)
}
