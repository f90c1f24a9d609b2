//! A benchmark session: every requested backend, thread count, algorithm and
//! operation, measured one after another. The run file and the cuPQC-shaped
//! files are rewritten after each algorithm, atomically, so Ctrl-C or a
//! crash late in a session loses nothing already measured.

use crate::backend::{Backend, DeviceKind};
use crate::catalog::{Algorithm, Family, Operation};
use crate::export::{cupqc, write_json};
use crate::monitor::Sampler;
use crate::progress::RunBar;
use crate::results::{Mode, Record, RunFile};
use crate::runner::{measure, skipped, MeasureConfig};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A backend with the sampler that watches it, or the reason it cannot run.
pub enum Slot {
    /// Ready to measure.
    Ready {
        /// The backend.
        backend: Box<dyn Backend>,
        /// Its sampler.
        sampler: Box<dyn Sampler>,
        /// Thread counts to measure (CPU); `[1]` for a GPU.
        threads: Vec<usize>,
        /// Operations per batch on this backend.
        batch: usize,
    },
    /// Asked for but not ready: every record is `skipped` with this reason.
    NotReady {
        /// Backend name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// What to measure.
pub struct Plan {
    /// Backends in order.
    pub slots: Vec<Slot>,
    /// Algorithms in order.
    pub algorithms: Vec<Algorithm>,
    /// Operations to keep (empty: all of each algorithm).
    pub operations: Vec<Operation>,
    /// Measurement settings (the thread count is set per slot).
    pub measure: MeasureConfig,
}

/// How a session ended.
pub struct Outcome {
    /// The run file written.
    pub run_file: PathBuf,
    /// Its content.
    pub run: RunFile,
    /// Whether Ctrl-C stopped it.
    pub interrupted: bool,
}

/// Folder of one backend's cuPQC-shaped files: `liboqs-cpu-2t`, `native-gpu`.
pub fn view_dir(rec: &Record) -> String {
    match rec.device.kind {
        DeviceKind::Cpu => format!("{}-{}t", rec.backend, rec.threads),
        DeviceKind::Gpu => rec.backend.clone(),
    }
}

/// Rewrites the run file and every cuPQC-shaped view.
pub fn write_all(out: &Path, run_file: &Path, run: &RunFile) -> anyhow::Result<()> {
    write_json(run_file, run)?;
    let mut dirs: Vec<String> = run.records.iter().map(view_dir).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        let recs: Vec<&Record> = run.records.iter().filter(|r| view_dir(r) == dir).collect();
        for family in [Family::MlKem, Family::MlDsa] {
            if let Some(v) = cupqc::throughput_view(&recs, family) {
                write_json(&out.join(&dir).join(cupqc::results_file_name(family)), &v)?;
            }
            if let Some(v) = cupqc::latency_view(&recs, family) {
                write_json(
                    &out.join(&dir)
                        .join("latency")
                        .join(cupqc::latency_file_name(family)),
                    &v,
                )?;
            }
        }
    }
    Ok(())
}

/// Runs the plan, writing into `out`.
pub fn run(
    mut plan: Plan,
    mut run: RunFile,
    out: &Path,
    cancel: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let suffix = match plan.measure.mode {
        Mode::Throughput => "",
        Mode::Latency => "-latency",
    };
    let run_file = out.join(format!("run-{stamp}{suffix}.json"));
    write_all(out, &run_file, &run)?;
    let mut interrupted = false;
    'outer: for slot in plan.slots.iter_mut() {
        match slot {
            Slot::NotReady { name, reason } => {
                eprintln!("pqcprof: skipping backend {name}: {reason}");
                for &alg in &plan.algorithms {
                    for op in wanted_ops(alg, &plan.operations) {
                        let mut cfg = plan.measure.clone();
                        cfg.batch.threads = 1;
                        let mut rec =
                            skipped(&NullBackend(name.clone()), alg, op, &cfg, reason.clone());
                        rec.sampler = "none: backend not ready".into();
                        run.records.push(rec);
                    }
                }
                write_all(out, &run_file, &run)?;
            }
            Slot::Ready {
                backend,
                sampler,
                threads,
                batch,
            } => {
                for &t in threads.iter() {
                    let mut cfg = plan.measure.clone();
                    cfg.batch.threads = t;
                    cfg.batch.batch = *batch;
                    for &alg in &plan.algorithms {
                        for op in wanted_ops(alg, &plan.operations) {
                            let label = format!("{} {}t {alg} {op}", backend.name(), t);
                            let bar = RunBar::new(&label, cfg.runs);
                            let result = measure(
                                backend.as_mut(),
                                alg,
                                op,
                                &cfg,
                                sampler.as_mut(),
                                cancel,
                                &mut |done, _| bar.set(done),
                            );
                            bar.finish();
                            match result {
                                Ok(rec) => {
                                    if let Some(reason) = rec.reason.as_deref() {
                                        eprintln!("pqcprof: {label}: {:?}: {reason}", rec.status);
                                    }
                                    run.records.push(rec);
                                }
                                Err(_) => {
                                    interrupted = true;
                                    break 'outer;
                                }
                            }
                        }
                        // After each algorithm: everything so far is on disk.
                        write_all(out, &run_file, &run)?;
                    }
                }
            }
        }
    }
    run.complete = !interrupted;
    run.interrupted = interrupted;
    write_all(out, &run_file, &run)?;
    Ok(Outcome {
        run_file,
        run,
        interrupted,
    })
}

fn wanted_ops(alg: Algorithm, filter: &[Operation]) -> Vec<Operation> {
    alg.operations()
        .into_iter()
        .filter(|op| filter.is_empty() || filter.contains(op))
        .collect()
}

/// Stands in for a backend that could not be created, to fill skipped records.
struct NullBackend(String);

impl Backend for NullBackend {
    fn name(&self) -> &str {
        &self.0
    }
    fn provider(&self) -> &str {
        match self.0.as_str() {
            crate::backend::liboqs::NAME => "liboqs",
            crate::backend::native_gpu::NAME => "pqcprof-native",
            "cupqc" => "cupqc",
            _ => "unknown",
        }
    }
    fn device(&self) -> crate::backend::Device {
        crate::backend::Device {
            kind: if self.0.contains("gpu") || self.0.contains("cupqc") {
                DeviceKind::Gpu
            } else {
                DeviceKind::Cpu
            },
            name: "unavailable".into(),
            memory_total_mb: 0,
        }
    }
    fn supports(&self, _: Algorithm, _: Operation) -> bool {
        false
    }
    fn prepare(
        &mut self,
        _: Algorithm,
        _: Operation,
        _: &crate::backend::BatchConfig,
    ) -> anyhow::Result<Box<dyn crate::backend::Prepared>> {
        anyhow::bail!("backend {} is not ready", self.0)
    }
}
