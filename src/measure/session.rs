//! A benchmark session: every requested backend, thread count, algorithm and
//! operation, measured one after another. The run file and the cuPQC-shaped
//! files are rewritten after each algorithm, atomically, so Ctrl-C or a
//! crash late in a session loses nothing already measured.

use crate::backend::Backend;

use crate::core::catalog::{Algorithm, Family, Operation};
use crate::measure::progress::RunBar;
use crate::measure::runner::{measure_as, skipped, MeasureConfig, Start};
use crate::monitor::Sampler;
use crate::schema::device::DeviceKind;
use crate::schema::record::{BatchBasis, Mode, Record, Status};
use crate::schema::run_file::RunFile;
use crate::write::cupqc_json;
use crate::write::output::{write_atomic, write_json};
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
        /// Batches to measure on this backend.
        batches: Batches,
    },
    /// One GPU backend on several devices of this node at once.
    MultiDevice(crate::measure::multi_device::MultiDevice),
    /// Asked for but not ready: every record is `skipped` with this reason.
    NotReady {
        /// Backend name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// Which batches a backend measures for each (algorithm, operation).
#[derive(Debug, Clone, PartialEq)]
pub enum Batches {
    /// These batches.
    List(Vec<usize>),
    /// The backend's own default (`Backend::default_batch`; a GPU rounds
    /// up to whole waves), starting from this one.
    Default(usize),
    /// Powers of 4 from 1 up to `top`, or without one up to what the
    /// backend says fits (`Backend::max_batch`), else `fallback_top`.
    Sweep {
        /// The largest batch named by the user.
        top: Option<usize>,
        /// The top when neither the user nor the backend gives one.
        fallback_top: usize,
    },
}

impl Batches {
    /// The batches of `op` of `alg` on `backend`, in increasing order for
    /// a sweep; `cfg` carries the message size and context.
    pub fn resolve(
        &self,
        backend: &mut dyn Backend,
        alg: Algorithm,
        op: Operation,
        cfg: &crate::backend::BatchConfig,
    ) -> Vec<usize> {
        match self {
            Batches::List(v) => v.clone(),
            Batches::Default(b) => {
                let cfg = crate::backend::BatchConfig {
                    batch: *b,
                    ..cfg.clone()
                };
                vec![backend.default_batch(alg, op, &cfg)]
            }
            Batches::Sweep { top, fallback_top } => {
                let top = top
                    .or_else(|| {
                        backend
                            .max_batch(alg, op, cfg)
                            .map(|m| m.min(crate::core::batching::MAX_BATCH))
                    })
                    .unwrap_or(*fallback_top);
                crate::core::batching::sweep_points(top)
            }
        }
    }

    /// The batches as `resolve` gives them, each with how it was chosen: a
    /// default batch calibrated to `target` where the backend can (a GPU),
    /// or an error naming why calibration failed.
    pub fn resolve_with_basis(
        &self,
        backend: &mut dyn Backend,
        alg: Algorithm,
        op: Operation,
        cfg: &crate::backend::BatchConfig,
        target: std::time::Duration,
    ) -> Vec<Result<(usize, BatchBasis), String>> {
        match self {
            Batches::List(_) => self
                .resolve(backend, alg, op, cfg)
                .into_iter()
                .map(|b| Ok((b, BatchBasis::requested("--batch"))))
                .collect(),
            Batches::Sweep { .. } => self
                .resolve(backend, alg, op, cfg)
                .into_iter()
                .map(|b| Ok((b, BatchBasis::requested("--batch-sweep"))))
                .collect(),
            Batches::Default(b) => {
                let cfg = crate::backend::BatchConfig {
                    batch: *b,
                    ..cfg.clone()
                };
                match backend.calibrated_batch(alg, op, &cfg, target) {
                    Some(Ok(v)) => vec![Ok(v)],
                    Some(Err(e)) => vec![Err(format!("calibrating the batch failed: {e:#}"))],
                    None => {
                        let b = backend.default_batch(alg, op, &cfg);
                        vec![Ok((
                            b,
                            BatchBasis {
                                method: "default".into(),
                                detail: format!("the backend's default batch ({b})"),
                                ..BatchBasis::requested("")
                            },
                        ))]
                    }
                }
            }
        }
    }

    /// In a few words, for the run file's settings.
    pub fn describe(&self) -> String {
        match self {
            Batches::List(v) => v
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            Batches::Default(b) => format!("default ({b} on a CPU; on a GPU calibrated: the largest whole-wave batch whose launch fits the target time)"),
            Batches::Sweep {
                top: Some(t),
                ..
            } => format!("sweep: powers of 4 from 1 to {t}"),
            Batches::Sweep {
                top: None,
                fallback_top,
            } => format!(
                "sweep: powers of 4 from 1 to what fits in the device's memory (else {fallback_top})"
            ),
        }
    }
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
    /// In process (the default), or cuPQC_benchmark's fresh processes.
    pub method: Method,
}

/// How each record's timed runs are made.
#[derive(Debug, Clone, Default)]
pub enum Method {
    /// Warm-up, gate and every timed run in this process.
    #[default]
    InProcess,
    /// `--fresh-process`: gate here, each timed run in a new process.
    FreshParent(crate::measure::fresh_process::FreshChild),
    /// `--fresh-child`: one cold timed run for a fresh-process parent.
    FreshChild,
}

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

/// Folder of one backend's cuPQC-shaped files: `liboqs-cpu-2t`, `native-gpu`.
pub fn view_dir(rec: &Record) -> String {
    match rec.device.kind {
        DeviceKind::Cpu => format!("{}-{}t", rec.backend, rec.threads),
        DeviceKind::Gpu => rec.backend.clone(),
    }
}

/// GPU backends whose views are also written where cuPQC_benchmark writes
/// its own (`outputs/ml*_results.json`, `outputs/latency/ml*_latency.json`),
/// so scripts made for cuPQC_benchmark read them unchanged; the first with a
/// view wins: cuPQC (what cuPQC_benchmark measures), then our own kernels.
pub const SEED_LAYOUT_BACKENDS: [&str; 2] = [
    crate::backend::cupqc::BACKEND_NAME,
    crate::backend::native_gpu::NAME,
];

/// Which run wrote each headline cuPQC-shaped file of a folder, so that a
/// later batch sweep never replaces a benchmark's headline with its own
/// batches: `headline-sources.json` beside the run files.
pub const HEADLINE_SOURCES: &str = "headline-sources.json";

/// Where one headline file came from (an entry of `HEADLINE_SOURCES`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeadlineSource {
    /// The run file (its name in the folder) whose records the file holds.
    pub run_file: String,
    /// True when that run was a batch sweep (`--batch-sweep`): its
    /// headline is each record's largest batch, and a benchmark's
    /// headline takes precedence over it.
    pub batch_sweep: bool,
}

/// The records a view of one folder shows: for each (algorithm,
/// operation, mode) the record at the largest batch that passed (the
/// benchmark's one batch, or a sweep's top), the later one where a batch
/// was measured twice; failed and skipped records stay as they are (the
/// view leaves them out).
fn headline_records<'a>(recs: &[&'a Record]) -> Vec<&'a Record> {
    let mut out: Vec<&'a Record> = vec![];
    for r in recs
        .iter()
        .copied()
        .filter(|r| r.status == crate::schema::record::Status::Ok)
    {
        let same = |o: &&Record| {
            o.algorithm == r.algorithm && o.operation == r.operation && o.mode == r.mode
        };
        match out.iter().position(same) {
            Some(i) if out[i].batch <= r.batch => out[i] = r,
            Some(_) => {}
            None => out.push(r),
        }
    }
    out
}

/// Rewrites the run file and every cuPQC-shaped view: one folder per
/// backend (and thread count) holding the headline measurement of each
/// record (see `headline_records`), `<folder>/batch-<n>/` for every batch
/// where the run measured several, plus cuPQC_benchmark's own paths for
/// the first of `SEED_LAYOUT_BACKENDS` that has the view. A batch-sweep run
/// leaves a headline file alone where a benchmark run wrote it
/// (`HEADLINE_SOURCES` says which run did).
pub fn write_all(out: &Path, run_file: &Path, run: &RunFile) -> anyhow::Result<()> {
    write_json(run_file, run)?;
    // Records made on the CPU stand-in driver are not GPU measurements:
    // they stay in the run file only. Over several GPUs, cuPQC_benchmark's layout
    // holds the first device's records.
    let first_gpu = run.records.iter().filter_map(|r| r.gpu_ordinal).min();
    let real: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| !r.emulated)
        .filter(|r| r.gpu_ordinal.is_none() || r.gpu_ordinal == first_gpu)
        .collect();
    let mut dirs: Vec<String> = real.iter().map(|r| view_dir(r)).collect();
    dirs.sort();
    dirs.dedup();
    // (folder, path below it, content, decimals printed, headline) of every view.
    let mut views: Vec<(String, PathBuf, serde_json::Value, usize, bool)> = vec![];
    let mut add = |dir: &str, below: &Path, recs: &[&Record], headline: bool| {
        for family in [Family::MlKem, Family::MlDsa] {
            if let Some(v) = cupqc_json::throughput_view(recs, family) {
                let name = below.join(cupqc_json::results_file_name(family));
                views.push((
                    dir.into(),
                    name,
                    v,
                    cupqc_json::THROUGHPUT_DECIMALS,
                    headline,
                ));
            }
            if let Some(v) = cupqc_json::latency_view(recs, family) {
                let p = below
                    .join("latency")
                    .join(cupqc_json::latency_file_name(family));
                views.push((dir.into(), p, v, cupqc_json::LATENCY_DECIMALS, headline));
            }
        }
    };
    for dir in dirs {
        let recs: Vec<&Record> = real
            .iter()
            .copied()
            .filter(|r| view_dir(r) == dir)
            .collect();
        add(&dir, Path::new(""), &headline_records(&recs), true);
        let mut batches: Vec<usize> = recs
            .iter()
            .filter(|r| r.status == crate::schema::record::Status::Ok)
            .map(|r| r.batch)
            .collect();
        batches.sort_unstable();
        batches.dedup();
        if batches.len() > 1 {
            for b in batches {
                let at: Vec<&Record> = recs.iter().copied().filter(|r| r.batch == b).collect();
                add(
                    &dir,
                    Path::new(&format!("batch-{b}")),
                    &headline_records(&at),
                    false,
                );
            }
        }
    }
    let sources_path = out.join(HEADLINE_SOURCES);
    let mut sources: std::collections::BTreeMap<String, HeadlineSource> =
        std::fs::read(&sources_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
    let me = HeadlineSource {
        run_file: run_file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        batch_sweep: run.config.batch_sweep,
    };
    // A benchmark's headline stays until another benchmark replaces it.
    let mut write_headline = |rel: &Path, bytes: &[u8]| -> anyhow::Result<()> {
        let key = rel.to_string_lossy().into_owned();
        let keep = sources
            .get(&key)
            .is_some_and(|s| me.batch_sweep && !s.batch_sweep && s.run_file != me.run_file);
        if !keep {
            write_atomic(&out.join(rel), bytes)?;
            sources.insert(key, me.clone());
        }
        Ok(())
    };
    for (dir, rel, v, decimals, headline) in &views {
        let bytes = cupqc_json::to_fixed_json(v, *decimals);
        let path = Path::new(dir).join(rel);
        if *headline {
            write_headline(&path, &bytes)?;
        } else {
            write_atomic(&out.join(path), &bytes)?;
        }
    }
    let mut seeded: Vec<&PathBuf> = vec![];
    for backend in SEED_LAYOUT_BACKENDS {
        for (dir, rel, v, decimals, headline) in &views {
            if *headline && dir == backend && !seeded.contains(&rel) {
                write_headline(rel, &cupqc_json::to_fixed_json(v, *decimals))?;
                seeded.push(rel);
            }
        }
    }
    if !sources.is_empty() {
        write_json(&sources_path, &sources)?;
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
    let suffix = match plan.measure.mode {
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
        eprintln!(
            "pqcprof: another pqcprof run is writing into {}: this run leaves its cuPQC-shaped files alone and keeps every record in its own run file",
            out.display()
        );
    }
    // How busy the machine is while this run measures, in every write.
    let load = crate::probe::system::LoadMeter::start();
    let save = |out: &Path, run_file: &Path, run: &RunFile| {
        let mut run = run.clone();
        run.metadata.machine_load = Some(load.now());
        crate::measure::signals::saving(run_file, || {
            if lock.is_some() {
                write_all(out, run_file, &run)
            } else {
                write_json(run_file, &run)
            }
        })
    };
    save(out, &run_file, &run)?;
    let mut interrupted = false;
    let mut deadline_reached = false;
    // How long the last ok record took to finish its first timed run (its
    // calibration, preparation, gate and warm-up included): what the next
    // one needs at the least (none yet: nothing known).
    let mut last_first_run: Option<std::time::Duration> = None;
    // Records of ready backends not yet begun, for each one's share of
    // what the deadline leaves.
    let mut not_begun: usize = plan
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Ready { threads, .. } => {
                threads.len()
                    * plan
                        .algorithms
                        .iter()
                        .map(|&a| wanted_ops(a, &plan.operations).len())
                        .sum::<usize>()
            }
            _ => 0,
        })
        .sum();
    'outer: for slot in plan.slots.iter_mut() {
        match slot {
            Slot::MultiDevice(m) => {
                let stopped = crate::measure::multi_device::run(
                    m,
                    &plan.algorithms,
                    &plan.operations,
                    &plan.measure,
                    cancel,
                    &mut run,
                    &mut |r| save(out, &run_file, r),
                )?;
                if stopped {
                    interrupted = true;
                    break 'outer;
                }
            }
            Slot::NotReady { name, reason } => {
                eprintln!("pqcprof: skipping backend {name}: {reason}");
                for &alg in &plan.algorithms {
                    for op in wanted_ops(alg, &plan.operations) {
                        let mut cfg = plan.measure.clone();
                        cfg.batch.threads = 1;
                        let mut rec = skipped(
                            &crate::backend::null::NullBackend(name.clone()),
                            alg,
                            op,
                            &cfg,
                            reason.clone(),
                        );
                        rec.sampler = "none: backend not ready".into();
                        run.records.push(rec);
                    }
                }
                save(out, &run_file, &run)?;
            }
            Slot::Ready {
                backend,
                sampler,
                threads,
                batches,
            } => {
                for &t in threads.iter() {
                    let mut cfg = plan.measure.clone();
                    cfg.batch.threads = t;
                    for &alg in &plan.algorithms {
                        for op in wanted_ops(alg, &plan.operations) {
                            if cancel.load(std::sync::atomic::Ordering::SeqCst) {
                                interrupted = true;
                                break 'outer;
                            }
                            if plan.measure.timing.deadline_passed() {
                                deadline_reached = true;
                                break 'outer;
                            }
                            cfg.timing.record_start = Some(std::time::Instant::now());
                            cfg.timing.share = plan.measure.timing.deadline.map(|(at, _)| {
                                let left = at
                                    .saturating_duration_since(std::time::Instant::now())
                                    .as_secs_f64();
                                (left / not_begun.max(1) as f64, not_begun.max(1))
                            });
                            not_begun = not_begun.saturating_sub(1);
                            let target = std::time::Duration::from_secs_f64(
                                plan.measure.timing.launch_target_s,
                            );
                            let mut sweep_cut = false;
                            for chosen in batches.resolve_with_basis(
                                backend.as_mut(),
                                alg,
                                op,
                                &cfg.batch,
                                target,
                            ) {
                                let (b, basis) = match chosen {
                                    Ok(v) => v,
                                    Err(reason) => {
                                        let mut rec =
                                            skipped(backend.as_ref(), alg, op, &cfg, reason);
                                        rec.status = Status::Failed;
                                        eprintln!(
                                            "pqcprof: {} {alg} {op}: {}",
                                            backend.name(),
                                            rec.reason.as_deref().unwrap_or("")
                                        );
                                        run.records.push(rec);
                                        continue;
                                    }
                                };
                                // No record begins that the deadline would cut
                                // before its first run: the record before it
                                // (records grow with the parameter set) is
                                // what one is expected to take.
                                if plan.measure.timing.deadline.is_some_and(|(at, _)| {
                                    std::time::Instant::now() + last_first_run.unwrap_or_default()
                                        >= at
                                }) {
                                    deadline_reached = true;
                                    break 'outer;
                                }
                                if sweep_cut {
                                    eprintln!("pqcprof: {} {alg} {op}: the batch sweep stops at batch {} (its time budget cut the last one; larger batches take longer)", backend.name(), cfg.batch.batch);
                                    break;
                                }
                                if !matches!(batches, Batches::Default(_)) {
                                    cfg.timing.record_start = Some(std::time::Instant::now());
                                }
                                cfg.batch.batch = b;
                                let label = format!(
                                    "{} {}t batch {} {alg} {op}",
                                    backend.name(),
                                    t,
                                    crate::core::batching::batch_label(b)
                                );
                                let bar = RunBar::new(&label, cfg.runs);
                                let first_run_done = std::cell::Cell::new(None);
                                let mut progress = |done: usize, _: usize| {
                                    if done == 1 && first_run_done.get().is_none() {
                                        first_run_done.set(Some(std::time::Instant::now()));
                                    }
                                    bar.set(done)
                                };
                                let watch = crate::measure::multi_device::Watch::new(None);
                                let mut watched = crate::measure::multi_device::Watched {
                                    inner: backend.as_mut(),
                                    watch: watch.clone(),
                                };
                                let start = match &plan.method {
                                    Method::FreshChild => Start::Cold,
                                    _ => Start::WarmGate,
                                };
                                let result = match &plan.method {
                                    Method::FreshParent(child) => {
                                        crate::measure::fresh_process::measure_in_fresh_process(
                                            &mut watched,
                                            alg,
                                            op,
                                            &cfg,
                                            child,
                                            cancel,
                                            &mut progress,
                                        )
                                    }
                                    _ => measure_as(
                                        &mut watched,
                                        alg,
                                        op,
                                        &cfg,
                                        sampler.as_mut(),
                                        cancel,
                                        &mut progress,
                                        start,
                                    ),
                                };
                                bar.finish();
                                match result {
                                    Ok(mut rec) => {
                                        if rec.status == Status::Ok {
                                            if let (Some(t0), Some(t1)) =
                                                (cfg.timing.record_start, first_run_done.get())
                                            {
                                                last_first_run =
                                                    Some(t1.saturating_duration_since(t0));
                                            }
                                        }
                                        sweep_cut = matches!(batches, Batches::Sweep { .. })
                                            && rec.cut.is_some();
                                        rec.batch_basis = Some(basis);
                                        rec.run_windows_unix_s = watch.borrow().windows_for(&rec);
                                        if let Some(reason) = rec.reason.as_deref() {
                                            eprintln!(
                                                "pqcprof: {label}: {:?}: {reason}",
                                                rec.status
                                            );
                                        }
                                        run.records.push(rec);
                                        // A signal during the record: it is kept
                                        // with its finished runs, and the session
                                        // stops here.
                                        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
                                            interrupted = true;
                                            break 'outer;
                                        }
                                        // Each record on disk as soon as it is done.
                                        save(out, &run_file, &run)?;
                                    }
                                    Err(_) => {
                                        interrupted = true;
                                        break 'outer;
                                    }
                                }
                            }
                        }
                        // After each algorithm: everything so far is on disk.
                        save(out, &run_file, &run)?;
                    }
                }
            }
        }
    }
    if deadline_reached {
        let (_, s) = plan
            .measure
            .timing
            .deadline
            .unwrap_or((std::time::Instant::now(), 0.0));
        eprintln!("pqcprof: --deadline {s} reached: the records not yet begun are not measured");
    }
    run.complete = !interrupted && !deadline_reached;
    run.interrupted = interrupted;
    run.metadata.machine_load = Some(load.now());
    save(out, &run_file, &run)?;
    Ok(Outcome {
        run_file,
        run,
        interrupted,
        deadline_reached,
    })
}

fn wanted_ops(alg: Algorithm, filter: &[Operation]) -> Vec<Operation> {
    alg.operations()
        .into_iter()
        .filter(|op| filter.is_empty() || filter.contains(op))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::mock::Mock;
    use crate::backend::BatchConfig;
    use crate::schema::device::DeviceKind;
    use crate::schema::record::{RunConfig, Status};

    /// An ok record of `backend` on a (test-only) GPU, as if measured.
    fn gpu_record(backend: &str, alg: Algorithm, op: Operation, mode: Mode) -> Record {
        let cfg = MeasureConfig {
            batch: BatchConfig {
                batch: 10,
                threads: 1,
                message_size: 0,
                context: vec![],
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
        assert!(sweep.describe().contains("what fits"));
        assert_eq!(Batches::List(vec![1, 32]).describe(), "1, 32");
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
        assert!(
            t.contains("\"mean\": 2.00,") && t.contains("\"Sign\""),
            "{t}"
        );
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
