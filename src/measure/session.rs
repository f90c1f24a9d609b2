//! A benchmark session: walks the steps of a `Plan` (every requested
//! backend, thread count, algorithm and operation, in order) and keeps
//! every record in the run file. The run file and the cuPQC-shaped files
//! are rewritten after each record and each algorithm, atomically, so
//! Ctrl-C or a crash late in a session loses nothing already measured.
//!
//! The plan (`crate::measure::plan`) says what runs; the runner
//! (`crate::measure::runner`) measures one record; the views
//! (`crate::measure::views`) are what the run file is written as.

use crate::backend::Backend;
use crate::core::catalog::{Algorithm, Operation};
use crate::measure::progress::RunBar;
use crate::measure::runner::{measure_as, skipped, MeasureConfig, Start};
use crate::monitor::Sampler;
use crate::schema::record::{BatchBasis, Mode, Status};
use crate::schema::run_file::RunFile;
use crate::write::output::write_json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use crate::measure::plan::{Batches, Method, Plan, RecordStep, Slot, Step};
pub use crate::measure::views::{
    view_dir, write_all, HeadlineSource, HEADLINE_SOURCES, SEED_LAYOUT_BACKENDS,
};

/// How a session ended.
pub struct Outcome {
    /// The run file written.
    pub run_file: PathBuf,
    /// Its content.
    pub run: RunFile,
    /// Whether Ctrl-C stopped it.
    pub interrupted: bool,
    /// Whether `--deadline` stopped it before every record was begun.
    pub deadline_reached: bool,
}

/// Whether the session goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flow {
    Go,
    Stop,
}

/// Runs the plan, writing into `out`.
pub fn run(plan: Plan, run: RunFile, out: &Path, cancel: &AtomicBool) -> anyhow::Result<Outcome> {
    let steps = plan.steps();
    let Plan {
        mut slots,
        algorithms,
        operations,
        measure,
        method,
    } = plan;
    let mut ex = Executor::open(run, out, measure.mode, cancel)?;
    ex.not_begun = steps.iter().filter(|s| s.record.is_some()).count();
    for step in steps {
        let flow = match (&mut slots[step.slot], step.record) {
            (Slot::MultiDevice(m), _) => ex.devices(m, &algorithms, &operations, &measure)?,
            (Slot::NotReady { name, reason }, _) => {
                ex.not_ready(name, reason, &algorithms, &operations, &measure)?
            }
            (
                Slot::Ready {
                    backend,
                    sampler,
                    batches,
                    ..
                },
                Some(r),
            ) => {
                let on = On {
                    backend: backend.as_mut(),
                    sampler: sampler.as_mut(),
                    batches,
                };
                ex.record(on, r, &measure, &method)?
            }
            // `Plan::steps` gives every step of a ready backend a record.
            (Slot::Ready { .. }, None) => Flow::Go,
        };
        if flow == Flow::Stop {
            break;
        }
    }
    ex.close(&measure)
}

/// A ready backend a step measures on.
struct On<'a> {
    backend: &'a mut dyn Backend,
    sampler: &'a mut dyn Sampler,
    batches: &'a Batches,
}

/// The state of a session while its steps run: the run file and where it
/// goes, why it stopped, and what the deadline's shares are taken over.
struct Executor<'a> {
    run: RunFile,
    out: PathBuf,
    run_file: PathBuf,
    /// Held while this run writes the folder's cuPQC-shaped files.
    lock: Option<crate::write::output::DirLock>,
    load: crate::probe::system::LoadMeter,
    cancel: &'a AtomicBool,
    interrupted: bool,
    deadline_reached: bool,
    /// How long the last ok record took to finish its first timed run (its
    /// calibration, preparation, gate and warm-up included): what the next
    /// one needs at the least (none yet: nothing known).
    last_first_run: Option<Duration>,
    /// Records of ready backends not yet begun, for each one's share of
    /// what the deadline leaves.
    not_begun: usize,
}

impl<'a> Executor<'a> {
    /// Reserves the run file in `out` and writes the empty run into it.
    fn open(run: RunFile, out: &Path, mode: Mode, cancel: &'a AtomicBool) -> anyhow::Result<Self> {
        let suffix = match mode {
            Mode::Throughput => ".json",
            Mode::Latency => "-latency.json",
        };
        let (run_file, _) = crate::write::output::reserve(
            out,
            "run-",
            suffix,
            &crate::write::output::json_bytes(&run)?,
        )?;
        // The cuPQC-shaped files have fixed names: only one run at a time
        // writes them in a folder; another keeps everything in its run file.
        let lock = crate::write::output::try_lock(out);
        if lock.is_none() {
            log::warn!(
                "another pqcprof run is writing into {}: this run leaves its cuPQC-shaped files alone and keeps every record in its own run file",
                out.display()
            );
        }
        let ex = Executor {
            run,
            out: out.to_path_buf(),
            run_file,
            lock,
            // How busy the machine is while this run measures, in every write.
            load: crate::probe::system::LoadMeter::start(),
            cancel,
            interrupted: false,
            deadline_reached: false,
            last_first_run: None,
            not_begun: 0,
        };
        ex.save()?;
        Ok(ex)
    }

    /// Writes the run file (and the views, while this run holds the lock).
    fn save(&self) -> anyhow::Result<()> {
        save_run(
            &self.out,
            &self.run_file,
            &self.run,
            self.lock.is_some(),
            &self.load,
        )
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Every GPU of a node at once.
    fn devices(
        &mut self,
        m: &mut crate::measure::multi_device::MultiDevice,
        algorithms: &[Algorithm],
        operations: &[Operation],
        measure: &MeasureConfig,
    ) -> anyhow::Result<Flow> {
        let lock = self.lock.is_some();
        let (out, run_file, load) = (&self.out, &self.run_file, &self.load);
        let stopped = crate::measure::multi_device::run(
            m,
            algorithms,
            operations,
            measure,
            self.cancel,
            &mut self.run,
            &mut |r| save_run(out, run_file, r, lock, load),
        )?;
        if stopped {
            self.interrupted = true;
            return Ok(Flow::Stop);
        }
        Ok(Flow::Go)
    }

    /// A backend that is not ready: every record it would have made,
    /// skipped with its reason.
    fn not_ready(
        &mut self,
        name: &str,
        reason: &str,
        algorithms: &[Algorithm],
        operations: &[Operation],
        measure: &MeasureConfig,
    ) -> anyhow::Result<Flow> {
        log::warn!("skipping backend {name}: {reason}");
        let mut cfg = measure.clone();
        cfg.batch.threads = 1;
        let null = crate::backend::null::NullBackend(name.to_string());
        for &alg in algorithms {
            for op in crate::measure::plan::wanted_ops(alg, operations) {
                let mut rec = skipped(&null, alg, op, &cfg, reason.to_string());
                rec.sampler = "none: backend not ready".into();
                self.run.records.push(rec);
            }
        }
        self.save()?;
        Ok(Flow::Go)
    }

    /// One (threads, algorithm, operation) of a ready backend: its batches
    /// chosen (a GPU's default calibrated now, inside the record's time),
    /// then each measured, unless the session must stop first.
    fn record(
        &mut self,
        on: On,
        step: RecordStep,
        measure: &MeasureConfig,
        method: &Method,
    ) -> anyhow::Result<Flow> {
        if self.cancelled() {
            self.interrupted = true;
            return Ok(Flow::Stop);
        }
        if measure.timing.deadline_passed() {
            self.deadline_reached = true;
            return Ok(Flow::Stop);
        }
        let RecordStep { alg, op, .. } = step;
        let mut cfg = measure.clone();
        cfg.batch.threads = step.threads;
        cfg.timing.record_start = Some(Instant::now());
        cfg.timing.share = measure.timing.deadline.map(|(at, _)| {
            let left = at.saturating_duration_since(Instant::now()).as_secs_f64();
            (left / self.not_begun.max(1) as f64, self.not_begun.max(1))
        });
        self.not_begun = self.not_begun.saturating_sub(1);
        let target = Duration::from_secs_f64(measure.timing.launch_target_s);
        let chosen = on
            .batches
            .resolve_with_basis(on.backend, alg, op, &cfg.batch, target);
        let mut sweep_cut = false;
        for chosen in chosen {
            let (b, basis) = match chosen {
                Ok(v) => v,
                Err(reason) => {
                    let mut rec = skipped(&*on.backend, alg, op, &cfg, reason);
                    rec.status = Status::Failed;
                    log::warn!(
                        "{} {alg} {op}: {}",
                        on.backend.name(),
                        rec.reason.as_deref().unwrap_or("")
                    );
                    self.run.records.push(rec);
                    continue;
                }
            };
            // No record begins that the deadline would cut before its first
            // run: the record before it (records grow with the parameter
            // set) is what one is expected to take.
            if measure.timing.deadline.is_some_and(|(at, _)| {
                Instant::now() + self.last_first_run.unwrap_or_default() >= at
            }) {
                self.deadline_reached = true;
                return Ok(Flow::Stop);
            }
            if sweep_cut {
                log::info!("{} {alg} {op}: the batch sweep stops at batch {} (its time budget cut the last one; larger batches take longer)", on.backend.name(), cfg.batch.batch);
                break;
            }
            if !matches!(on.batches, Batches::Default(_)) {
                cfg.timing.record_start = Some(Instant::now());
            }
            cfg.batch.batch = b;
            let batch = Batch {
                backend: &mut *on.backend,
                sampler: &mut *on.sampler,
                alg,
                op,
                cfg: &cfg,
                basis,
            };
            match self.measure_batch(batch, method)? {
                None => return Ok(Flow::Stop),
                Some(cut) => sweep_cut = matches!(on.batches, Batches::Sweep { .. }) && cut,
            }
        }
        if step.ends_algorithm {
            // After each algorithm: everything so far is on disk.
            self.save()?;
        }
        Ok(Flow::Go)
    }

    /// Measures one batch and keeps its record; `None`: the session stops
    /// (a signal), else whether time cut the record.
    fn measure_batch(&mut self, b: Batch, method: &Method) -> anyhow::Result<Option<bool>> {
        let Batch {
            backend,
            sampler,
            alg,
            op,
            cfg,
            basis,
        } = b;
        let label = format!(
            "{} {}t batch {} {alg} {op}",
            backend.name(),
            cfg.batch.threads,
            crate::core::batching::batch_label(cfg.batch.batch)
        );
        let bar = RunBar::new(&label, cfg.runs);
        let first_run_done = std::cell::Cell::new(None);
        let mut progress = |done: usize, _: usize| {
            if done == 1 && first_run_done.get().is_none() {
                first_run_done.set(Some(Instant::now()));
            }
            bar.set(done)
        };
        let watch = crate::measure::multi_device::Watch::new(None);
        let mut watched = crate::measure::multi_device::Watched {
            inner: backend,
            watch: watch.clone(),
        };
        let result = match method {
            Method::FreshParent(child) => crate::measure::fresh_process::measure_in_fresh_process(
                &mut watched,
                alg,
                op,
                cfg,
                child,
                self.cancel,
                &mut progress,
            ),
            Method::FreshChild | Method::InProcess => {
                let start = match method {
                    Method::FreshChild => Start::Cold,
                    _ => Start::WarmGate,
                };
                measure_as(
                    &mut watched,
                    alg,
                    op,
                    cfg,
                    sampler,
                    self.cancel,
                    &mut progress,
                    start,
                )
            }
        };
        bar.finish();
        let Ok(mut rec) = result else {
            self.interrupted = true;
            return Ok(None);
        };
        if rec.status == Status::Ok {
            if let (Some(t0), Some(t1)) = (cfg.timing.record_start, first_run_done.get()) {
                self.last_first_run = Some(t1.saturating_duration_since(t0));
            }
        }
        let cut = rec.cut.is_some();
        rec.batch_basis = Some(basis);
        rec.run_windows_unix_s = watch.borrow().windows_for(&rec);
        if let Some(reason) = rec.reason.as_deref() {
            log::warn!("{label}: {:?}: {reason}", rec.status);
        }
        self.run.records.push(rec);
        // A signal during the record: it is kept with its finished runs,
        // and the session stops here.
        if self.cancelled() {
            self.interrupted = true;
            return Ok(None);
        }
        // Each record on disk as soon as it is done.
        self.save()?;
        Ok(Some(cut))
    }

    /// Says why the session ended early and writes the run file a last time.
    fn close(mut self, measure: &MeasureConfig) -> anyhow::Result<Outcome> {
        if self.deadline_reached {
            let (_, s) = measure.timing.deadline.unwrap_or((Instant::now(), 0.0));
            log::warn!("--deadline {s} reached: the records not yet begun are not measured");
        }
        self.run.complete = !self.interrupted && !self.deadline_reached;
        self.run.interrupted = self.interrupted;
        self.run.metadata.machine_load = Some(self.load.now());
        self.save()?;
        Ok(Outcome {
            run_file: self.run_file,
            run: self.run,
            interrupted: self.interrupted,
            deadline_reached: self.deadline_reached,
        })
    }
}

/// Writes `run` to `run_file` with the machine's load so far, and its
/// views into `out` when this run holds the folder's lock (`views`).
fn save_run(
    out: &Path,
    run_file: &Path,
    run: &RunFile,
    views: bool,
    load: &crate::probe::system::LoadMeter,
) -> anyhow::Result<()> {
    let mut run = run.clone();
    run.metadata.machine_load = Some(load.now());
    run.floor = crate::analyse::floor::floors(&run.records);
    crate::measure::signals::saving(run_file, || {
        if views {
            write_all(out, run_file, &run)
        } else {
            write_json(run_file, &run)
        }
    })
}

/// One batch of a record, as the executor hands it to the runner.
struct Batch<'b> {
    backend: &'b mut dyn Backend,
    sampler: &'b mut dyn Sampler,
    alg: Algorithm,
    op: Operation,
    cfg: &'b MeasureConfig,
    basis: BatchBasis,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::mock::Mock;
    use crate::backend::BatchConfig;
    use crate::schema::device::DeviceKind;
    use crate::schema::record::{Record, RunConfig, Status};

    /// An ok record of `backend` on a (test-only) GPU, as if measured.
    fn gpu_record(backend: &str, alg: Algorithm, op: Operation, mode: Mode) -> Record {
        let cfg = MeasureConfig {
            batch: BatchConfig {
                batch: 10,
                threads: 1,
                message_size: 0,
                context: vec![],
                gate: Default::default(),
            },
            runs: 3,
            warmup_runs: 0,
            mode,
            timing: Default::default(),
        };
        let mut r = skipped(&Mock::default(), alg, op, &cfg, String::new());
        r.reason = None;
        r.status = Status::Ok;
        r.backend = backend.into();
        r.device.kind = DeviceKind::Gpu;
        r.device.name = "mock GPU (test only)".into();
        let s = Some(crate::core::stats::summarize(
            &crate::core::stats::Sample::new(vec![1.0, 2.0, 3.0]).unwrap(),
        ));
        match mode {
            Mode::Throughput => r.throughput_ops_per_sec = s,
            Mode::Latency => r.latency_us = s,
        }
        r
    }

    /// A deadline is shared out: the first of three records cannot use up
    /// the time of the other two, so all three are begun and kept, each cut
    /// at about a third of the time.
    #[test]
    fn a_deadline_gives_every_record_its_share() {
        let d = tempfile::tempdir().unwrap();
        let mock = crate::backend::mock::Mock {
            wall: Some(std::time::Duration::from_millis(40)),
            ..Default::default()
        };
        let mut measure = MeasureConfig {
            batch: BatchConfig {
                batch: 8,
                threads: 1,
                message_size: 0,
                context: vec![],
                gate: Default::default(),
            },
            runs: 200,
            warmup_runs: 1,
            mode: Mode::Throughput,
            timing: Default::default(),
        };
        measure.timing.deadline = Some((
            std::time::Instant::now() + std::time::Duration::from_secs(3),
            3.0,
        ));
        let plan = Plan {
            slots: vec![Slot::Ready {
                backend: Box::new(mock),
                sampler: Box::new(crate::monitor::nvml::NoSampler("test".into())),
                threads: vec![1],
                batches: Batches::List(vec![8]),
            }],
            algorithms: vec![Algorithm::MlKem512],
            operations: vec![],
            measure,
            method: Method::InProcess,
        };
        let t0 = std::time::Instant::now();
        let o = run(plan, run_with(vec![]), d.path(), &AtomicBool::new(false)).unwrap();
        assert!(t0.elapsed() < std::time::Duration::from_secs(4));
        let recs = &o.run.records;
        assert_eq!(recs.len(), 3, "{recs:#?}");
        for r in recs {
            assert_eq!(r.status, Status::Ok, "{r:#?}");
            let done = r.runs_completed.unwrap();
            // About 1 s each at 40 ms a run, never the whole 3 s.
            assert!((2..40).contains(&done), "{done} runs: {r:#?}");
            assert!(r.cut.as_deref().unwrap().contains("--deadline 3"), "{r:#?}");
        }
    }

    /// A run file of `records` with test-only settings.
    pub(crate) fn run_with(records: Vec<Record>) -> RunFile {
        let mut run = RunFile::new(crate::probe::system::collect(None), RunConfig::for_tests());
        run.records = records;
        run
    }

    fn device_name(p: &Path) -> String {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        v["GPU"]["name"].as_str().unwrap().to_string()
    }

    #[test]
    fn gpu_views_also_land_where_the_seed_tool_writes_them() {
        let d = tempfile::tempdir().unwrap();
        let (kem, dsa) = (Algorithm::MlKem768, Algorithm::MlDsa44);
        let mut cupqc_kem = gpu_record("cupqc", kem, Operation::KeyGen, Mode::Throughput);
        cupqc_kem.device.name = "cupqc's mock GPU (test only)".into();
        let run = run_with(vec![
            gpu_record("native-gpu", kem, Operation::KeyGen, Mode::Throughput),
            gpu_record("native-gpu", dsa, Operation::Sign, Mode::Throughput),
            gpu_record("native-gpu", kem, Operation::KeyGen, Mode::Latency),
            cupqc_kem,
        ]);
        write_all(d.path(), &d.path().join("run.json"), &run).unwrap();
        let p = |s: &str| d.path().join(s);
        // Per backend, as always.
        for f in [
            "native-gpu/mlkem_results.json",
            "native-gpu/mldsa_results.json",
            "native-gpu/latency/mlkem_latency.json",
            "cupqc/mlkem_results.json",
        ] {
            assert!(p(f).exists(), "{f}");
        }
        // cuPQC_benchmark's paths: cuPQC's view where it has one, else ours.
        assert_eq!(
            device_name(&p("mlkem_results.json")),
            "cupqc's mock GPU (test only)"
        );
        assert_eq!(
            device_name(&p("mldsa_results.json")),
            "mock GPU (test only)"
        );
        assert!(p("latency/mlkem_latency.json").exists());
        assert!(
            !p("latency/mldsa_latency.json").exists(),
            "no ML-DSA latency records"
        );
    }

    #[test]
    fn batches_resolve_per_backend() {
        let cfg = BatchConfig {
            batch: 1000,
            threads: 1,
            message_size: 0,
            context: vec![],
            gate: Default::default(),
        };
        let (alg, op) = (Algorithm::MlKem768, Operation::Encaps);
        let mut mock = Mock::default();
        let r = |b: &Batches, m: &mut Mock| b.resolve(m, alg, op, &cfg);
        assert_eq!(r(&Batches::List(vec![1, 32]), &mut mock), [1, 32]);
        // The mock keeps the command's default (a GPU rounds it to waves).
        assert_eq!(r(&Batches::Default(1000), &mut mock), [1000]);
        // A sweep without a top: what the backend says fits, else the
        // fallback top.
        let sweep = Batches::Sweep {
            top: None,
            fallback_top: 64,
        };
        assert_eq!(r(&sweep, &mut mock), [1, 4, 16, 64]);
        mock.max_fit = Some(300);
        assert_eq!(r(&sweep, &mut mock), [1, 4, 16, 64, 256, 300]);
        let named = Batches::Sweep {
            top: Some(16),
            fallback_top: 64,
        };
        assert_eq!(r(&named, &mut mock), [1, 4, 16]);
        assert!(sweep.describe(false).contains("what fits"));
        assert_eq!(Batches::List(vec![1, 32]).describe(false), "1, 32");
        assert_eq!(
            Batches::Default(100_000).describe(false),
            "default (100000)"
        );
        assert!(Batches::Default(100_000)
            .describe(true)
            .starts_with("default: calibrated per record"));
    }

    #[test]
    fn latency_files_read_with_the_seeds_key_paths_and_number_format() {
        let d = tempfile::tempdir().unwrap();
        let mut recs = vec![];
        for alg in [Algorithm::MlKem512, Algorithm::MlDsa65] {
            for op in alg.operations() {
                recs.push(gpu_record("native-gpu", alg, op, Mode::Latency));
                recs.push(gpu_record("native-gpu", alg, op, Mode::Throughput));
            }
        }
        write_all(d.path(), &d.path().join("run.json"), &run_with(recs)).unwrap();
        let text = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap();
        // cuPQC_benchmark's extract scripts: GPU block, then alg -> op -> latency_us.
        for (file, alg, ops) in [
            (
                "latency/mlkem_latency.json",
                "ML-KEM-512",
                ["KeyGen", "Encaps", "Decaps"],
            ),
            (
                "latency/mldsa_latency.json",
                "ML-DSA-65",
                ["Key Generation", "Signing", "Verification"],
            ),
        ] {
            let t = text(file);
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            assert!(v["GPU"]["name"].is_string(), "{t}");
            assert!(v["GPU"]["memory_total_mb"].is_number(), "{t}");
            let keys: Vec<&String> = v[alg].as_object().unwrap().keys().collect();
            assert_eq!(keys, ops, "{t}");
            for op in ops {
                let l = &v[alg][op]["latency_us"];
                // Samples 1, 2, 3: mean 2, population std sqrt(2/3).
                assert_eq!(l["mean"].as_f64(), Some(2.0), "{t}");
                assert_eq!(l["std"].as_f64(), Some(0.8165), "{t}");
            }
            // Printed with 4 decimals, as cuPQC_benchmark prints them.
            assert!(t.contains("\"mean\": 2.0000,"), "{t}");
            assert!(t.contains("\"std\": 0.8165"), "{t}");
        }
        // The throughput files keep 2 decimals and the short keys.
        let t = text("mldsa_results.json");
        for want in ["\"mean\": 2.00,", "\"Sign\""] {
            assert!(t.contains(want), "{want} in {t}");
        }
    }

    #[test]
    fn cpu_records_never_take_the_seed_paths() {
        let d = tempfile::tempdir().unwrap();
        let mut cpu = gpu_record(
            "liboqs-cpu",
            Algorithm::MlKem512,
            Operation::KeyGen,
            Mode::Throughput,
        );
        cpu.device.kind = DeviceKind::Cpu;
        write_all(d.path(), &d.path().join("run.json"), &run_with(vec![cpu])).unwrap();
        assert!(d.path().join("liboqs-cpu-1t/mlkem_results.json").exists());
        assert!(!d.path().join("mlkem_results.json").exists());
    }
}
