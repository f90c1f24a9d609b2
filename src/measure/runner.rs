//! The runner: for one (backend, algorithm, operation) it prepares a batch,
//! warms up, passes the correctness gate, times `runs` batches while the
//! sampler watches, checks the outputs again, and summarises. One runner
//! serves every backend.
//!
//! Longer than most files: about 250 of its lines are tests (percentiles,
//! cancellation, gates, energy windows) over one shared mock.

use crate::backend::{Backend, BatchConfig, Checkpoint, Prepared};
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::core::exit::Interrupted;
use crate::core::stats::{median_relative_half_width, percentile, summarize, Sample, Summary};
use crate::monitor::{energy, RunUsage, Sampler};
use crate::schema::device::GateReport;
use crate::schema::record::{ClockReport, EmptyWindow, EndToEnd, Mode, Record, Status, StoppedBy};
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::measure::budget::{cut_note, tail_reserve, Budget, AUTO_MIN_RUNS};
pub use crate::measure::budget::{Timing, DEFAULT_LAUNCH_TARGET_S};

/// How one record is measured.
#[derive(Debug, Clone)]
pub struct MeasureConfig {
    /// Batch settings handed to the backend.
    pub batch: BatchConfig,
    /// Timed runs.
    pub runs: usize,
    /// Untimed runs before the first gate.
    pub warmup_runs: usize,
    /// Throughput or latency.
    pub mode: Mode,
    /// Time budgets and the calibration target.
    pub timing: Timing,
}

/// Called after each timed run with (runs done, runs total).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

fn blank_record(
    backend: &dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
) -> Record {
    Record {
        threads: cfg.batch.threads.max(1),
        nist_level: Some(alg.nist_level()),
        mode: cfg.mode,
        batch: cfg.batch.batch,
        runs: cfg.runs,
        warmup_runs: cfg.warmup_runs,
        runs_requested: Some(cfg.runs),
        message_bytes: (alg.kind() == Kind::Signature).then_some(cfg.batch.message_size),
        sizes: alg.sizes(),
        emulated: backend.emulated(),
        plugin: backend.plugin(),
        ..Record::unmeasured(
            backend.name().to_string(),
            backend.device(),
            backend.provider().to_string(),
            alg.name().to_string(),
            alg.family().name().to_string(),
            alg.kind(),
            op,
        )
    }
}

/// A record for something not attempted.
pub fn skipped(
    backend: &dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    reason: impl Into<String>,
) -> Record {
    let mut r = blank_record(backend, alg, op, cfg);
    r.reason = Some(reason.into());
    r
}

/// Summary of one optional per-run figure, when every run has it.
fn summary_of(usage: &[RunUsage], f: impl Fn(&RunUsage) -> Option<f64>) -> Option<Summary> {
    let v: Option<Vec<f64>> = usage.iter().map(f).collect();
    Sample::new(v?).ok().map(|s| summarize(&s))
}

/// Measures one record. A failure of any step gives a `failed` record with
/// the reason; only Ctrl-C (the `cancel` flag) returns an error, so the
/// caller can stop the sweep with what is finished.
pub fn measure_record(
    backend: &mut dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    sampler: &mut dyn Sampler,
    cancel: &AtomicBool,
    progress: Progress<'_>,
) -> Result<Record, Interrupted> {
    measure_as(
        backend,
        alg,
        op,
        cfg,
        sampler,
        cancel,
        progress,
        Start::WarmGate,
    )
}

/// Warm-up and the correctness gate only, nothing timed: what a
/// `--fresh-process` parent does before its child processes time the runs.
/// The record is `failed` with the reason, or still unmeasured with its gate.
pub fn gate_only(
    backend: &mut dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    cancel: &AtomicBool,
) -> Result<Record, Interrupted> {
    let mut none = crate::monitor::nvml::NoSampler("no timed runs in the gate".into());
    measure_as(
        backend,
        alg,
        op,
        cfg,
        &mut none,
        cancel,
        &mut |_, _| {},
        Start::GateOnly,
    )
}

/// How `measure_as` begins and how far it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Warm-up, gate, timed runs, gate again (the normal way).
    WarmGate,
    /// Timed runs first, then the gate: a `--fresh-process` child. Its
    /// first timed run comes straight after preparation, with no warm-up,
    /// as cuPQC_benchmark runs each run in a new process; the parent passed
    /// the correctness gate (warm-up included) before starting the child,
    /// so nothing is timed unproven.
    Cold,
    /// Warm-up and gate, no timed run.
    GateOnly,
}

/// `measure`, beginning as `start` says.
#[allow(clippy::too_many_arguments)]
pub fn measure_as(
    backend: &mut dyn Backend,
    alg: Algorithm,
    op: Operation,
    cfg: &MeasureConfig,
    sampler: &mut dyn Sampler,
    cancel: &AtomicBool,
    progress: Progress<'_>,
    start: Start,
) -> Result<Record, Interrupted> {
    let started = cfg.timing.record_start.unwrap_or_else(Instant::now);
    let record = cfg.timing.record_limit(started);
    let deadline = cfg
        .timing
        .deadline
        .map(|(at, s)| (at, format!("--deadline {s}")));
    let reserve = cfg
        .timing
        .record_end(started)
        .map_or(Duration::ZERO, |(at, _)| {
            tail_reserve(at.saturating_duration_since(Instant::now()))
        });
    let budget = Budget {
        record,
        deadline,
        reserve,
    };
    let mut rec = blank_record(backend, alg, op, cfg);
    rec.sampler = sampler.describe();
    if !backend.supports(alg, op) {
        rec.reason = Some(format!("{} does not implement {alg} {op}", backend.name()));
        return Ok(rec);
    }
    let mut prepared = match backend.prepare(alg, op, &cfg.batch) {
        Ok(p) => p,
        Err(e) => return Ok(failed(rec, format!("preparing the batch failed: {e:#}"))),
    };
    rec.threads = prepared.threads();
    rec.timed_window = prepared.timed_window().to_string();
    rec.kernel = prepared.kernel();
    rec.cache = prepared.cache().map(str::to_string);
    match timed_runs(
        prepared.as_mut(),
        cfg,
        sampler,
        cancel,
        progress,
        &mut rec,
        start,
        &budget,
    ) {
        Ok(()) => Ok(rec),
        Err(RunError::Interrupted) => Err(Interrupted),
        Err(RunError::Failed(reason)) => Ok(failed(rec, reason)),
        Err(RunError::OutOfTime(reason)) => {
            rec.reason = Some(reason);
            Ok(rec)
        }
    }
}

fn failed(mut rec: Record, reason: String) -> Record {
    rec.status = Status::Failed;
    rec.reason = Some(reason);
    rec
}

enum RunError {
    Interrupted,
    Failed(String),
    /// The budget ran out before the first timed run: a skipped record.
    OutOfTime(String),
}

/// The failure of step `what`, with its cause.
fn fail(what: &str, e: anyhow::Error) -> RunError {
    RunError::Failed(format!("{what}: {e:#}"))
}

/// Adds one run's gate to the record's: the runs it checked, the items it
/// judged and the `seconds` its work took (arming and checking) add up.
fn gate_ledger(rec: &mut Record, mut gate: GateReport, seconds: Duration) {
    if let Some(c) = gate.coverage.as_mut() {
        c.seconds = seconds.as_secs_f64();
    }
    match rec.gate.as_mut() {
        Some(g) => g.absorb(gate),
        None => rec.gate = Some(gate),
    }
}

/// What the timed runs work with: the prepared batch, the sampler around
/// each run, the cancel flag and the progress callback.
struct TimedRuns<'t, 'p> {
    prepared: &'t mut dyn Prepared,
    sampler: &'t mut dyn Sampler,
    cancel: &'t AtomicBool,
    progress: Progress<'p>,
}

/// The timed record: warm-up and gate, the timed runs, why they stopped
/// and whether the device-side hold covered them, then the floor,
/// end-to-end and energy windows and the gate again.
#[allow(clippy::too_many_arguments)]
fn timed_runs(
    prepared: &mut dyn Prepared,
    cfg: &MeasureConfig,
    sampler: &mut dyn Sampler,
    cancel: &AtomicBool,
    progress: Progress<'_>,
    rec: &mut Record,
    start: Start,
    budget: &Budget,
) -> Result<(), RunError> {
    let Some(warm) = warm_up_and_gate(prepared, cfg, cancel, rec, start)? else {
        return Ok(());
    };
    let budget = &Budget {
        reserve: budget
            .reserve
            .max(warm.gate_wall * 2 + Duration::from_millis(500)),
        ..budget.clone()
    };
    let mut t = TimedRuns {
        prepared,
        sampler,
        cancel,
        progress,
    };
    let ran = run_loop(&mut t, cfg, rec, budget, warm.last_wall)?;
    let TimedRuns {
        prepared, sampler, ..
    } = t;
    let last_wall = ran.last_wall;
    say_why_runs_stopped(rec, cfg, ran.cut_by, cancel, last_wall)?;
    if cfg.mode == Mode::Latency {
        rec.latency_method = Some(prepared.latency_method().to_string());
    }
    // A cold child's one run is judged by its parent, with its siblings'.
    let judged = match start {
        Start::Cold => Mode::Throughput,
        _ => cfg.mode,
    };
    crate::measure::hold::check(rec, judged, &ran.holds).map_err(RunError::Failed)?;
    rec.floor = floor(prepared).map_err(|e| fail("timing an empty window", e))?;
    // The sampler says what it measured in these runs, with where each
    // run's energy came from (known only once it has stopped).
    rec.sampler = sampler.describe() + &per_run_energy_sources(&rec.usage);
    rec.pinning = prepared.pinning();
    end_to_end_runs(prepared, cfg, cancel, rec, budget, last_wall)?;
    energy_window(prepared, cfg, sampler, cancel, rec, budget)?;
    // The outputs of the record's last run must be right too, checked
    // with liboqs again.
    let t = Instant::now();
    let after = prepared
        .check(Checkpoint::Last)
        .map_err(|e| fail("correctness gate failed after the timed runs", e))?;
    gate_ledger(rec, after, t.elapsed());
    fill_statistics(rec, cfg).map_err(RunError::Failed)
}

/// What the warm-up left for the timed runs to plan with.
struct WarmedUp {
    /// The wall time of the last launch: what the next one is expected to
    /// take, so none starts that would end past the budget.
    last_wall: Duration,
    /// How long the gate takes: kept back for the gate after the runs.
    gate_wall: Duration,
}

/// Warm-up, then the gate on the last warm-up's outputs: nothing is timed
/// unless the operation is proven to work (for a cold child, its parent
/// proved it). `None` when the record is the gate alone.
fn warm_up_and_gate(
    prepared: &mut dyn Prepared,
    cfg: &MeasureConfig,
    cancel: &AtomicBool,
    rec: &mut Record,
    start: Start,
) -> Result<Option<WarmedUp>, RunError> {
    let mut warm = WarmedUp {
        last_wall: Duration::ZERO,
        gate_wall: Duration::ZERO,
    };
    if start == Start::Cold {
        rec.warmup_runs = 0;
        return Ok(Some(warm));
    }
    // At least one warm-up: the gate checks its outputs. The record says
    // how many ran, not how many were asked for.
    rec.warmup_runs = cfg.warmup_runs.max(1);
    for _ in 0..rec.warmup_runs {
        if cancel.load(Ordering::SeqCst) {
            return Err(RunError::Interrupted);
        }
        let t = Instant::now();
        prepared
            .arm()
            .map_err(|e| fail("preparing the warm-up run failed", e))?;
        let armed = t.elapsed();
        let t = Instant::now();
        prepared.run().map_err(|e| fail("warm-up run failed", e))?;
        warm.last_wall = t.elapsed();
        warm.gate_wall += armed;
    }
    let t = Instant::now();
    let gate = prepared
        .check(Checkpoint::BeforeTiming)
        .map_err(|e| fail("correctness gate failed before timing", e))?;
    warm.gate_wall += t.elapsed();
    rec.gate = None;
    gate_ledger(rec, gate, warm.gate_wall);
    Ok((start != Start::GateOnly).then_some(warm))
}

/// How the timed runs went.
struct Ran {
    /// What cut them, if anything did.
    cut_by: Option<String>,
    /// The wall time of the last launch.
    last_wall: Duration,
    /// Each run's device-side hold, as the backend saw it.
    holds: Vec<Option<crate::backend::HoldRun>>,
}

/// The timed runs, each inside the sampler, until `cfg.runs`, the noise
/// target, a signal or the budget.
fn run_loop(
    t: &mut TimedRuns,
    cfg: &MeasureConfig,
    rec: &mut Record,
    budget: &Budget,
    last_wall: Duration,
) -> Result<Ran, RunError> {
    let mut ran = Ran {
        cut_by: None,
        last_wall,
        holds: vec![],
    };
    for i in 0..cfg.runs {
        if t.cancel.load(Ordering::SeqCst) {
            ran.cut_by = Some("a signal (Ctrl-C, SIGTERM or SIGHUP)".into());
            break;
        }
        if let Some(by) = budget.check(ran.last_wall, i == 0) {
            ran.cut_by = Some(by.to_string());
            break;
        }
        // Untimed, outside the sampler: the run made ready (fresh inputs,
        // poisoned outputs) before, its outputs checked after.
        let cycle = Instant::now();
        t.prepared
            .arm()
            .map_err(|e| fail(&format!("preparing timed run {}", i + 1), e))?;
        let armed = cycle.elapsed();
        t.sampler
            .start()
            .map_err(|e| fail("starting the sampler", e))?;
        let run = t.prepared.run();
        let usage = t
            .sampler
            .stop()
            .map_err(|e| fail("stopping the sampler", e))?;
        let elapsed = run.map_err(|e| fail(&format!("timed run {} failed", i + 1), e))?;
        let checking = Instant::now();
        let gate = t.prepared.check(Checkpoint::AfterRun).map_err(|e| {
            fail(
                &format!(
                    "correctness gate failed after timed run {} (its figures are not kept)",
                    i + 1
                ),
                e,
            )
        })?;
        gate_ledger(rec, gate, armed + checking.elapsed());
        // What the next run costs, its gate included, for the budget.
        ran.last_wall = cycle.elapsed();
        rec.run_seconds.push(elapsed.as_secs_f64());
        rec.usage.push(usage);
        ran.holds.push(t.prepared.last_hold());
        (t.progress)(i + 1, cfg.runs);
        if let Some(target) = cfg.timing.until_noise {
            rec.noise_reached = run_noise(&rec.run_seconds);
            if rec.run_seconds.len() >= AUTO_MIN_RUNS
                && rec.noise_reached.is_some_and(|w| w < target)
            {
                rec.stopped_by = Some(StoppedBy::Noise);
                break;
            }
        }
    }
    Ok(ran)
}

/// The record's `stopped_by` (with `--runs auto`) and `cut`; an error when
/// the runs were cut before the first.
fn say_why_runs_stopped(
    rec: &mut Record,
    cfg: &MeasureConfig,
    cut_by: Option<String>,
    cancel: &AtomicBool,
    last_wall: Duration,
) -> Result<(), RunError> {
    if let Some(target) = cfg.timing.until_noise {
        rec.max_noise = Some(target);
        rec.runs_used = Some(rec.run_seconds.len());
        if rec.stopped_by.is_none() {
            rec.stopped_by = match &cut_by {
                None => Some(StoppedBy::MaxRuns),
                Some(_) if cancel.load(Ordering::SeqCst) => None,
                Some(_) => Some(StoppedBy::Time),
            };
        }
    }
    let Some(by) = cut_by else { return Ok(()) };
    if rec.run_seconds.is_empty() {
        if cancel.load(Ordering::SeqCst) {
            return Err(RunError::Interrupted);
        }
        return Err(RunError::OutOfTime(format!(
            "not timed: {by} left too little time for one timed run (the correctness gate passed; one launch takes about {:.3} s)",
            last_wall.as_secs_f64()
        )));
    }
    rec.cut = Some(cut_note(&by, rec.run_seconds.len(), cfg.runs, "timed runs"));
    Ok(())
}

/// Empty windows timed for a record's floor: a few hundred microseconds on
/// one CPU thread, a few milliseconds with several.
const FLOOR_SAMPLES: usize = 51;

/// The median of [`FLOOR_SAMPLES`] empty windows of the prepared batch, in
/// turn after its timed runs (so it never warms or cools them); `None`
/// where the backend has no empty window.
fn floor(prepared: &mut dyn Prepared) -> anyhow::Result<Option<EmptyWindow>> {
    let mut seconds = Vec::with_capacity(FLOOR_SAMPLES);
    for _ in 0..FLOOR_SAMPLES {
        match prepared.empty_window() {
            None => return Ok(None),
            Some(w) => seconds.push(w?.as_secs_f64()),
        }
    }
    let s = Sample::new(seconds)?;
    let launches_per_s = prepared.empty_launch_rate().transpose()?;
    Ok(Some(EmptyWindow {
        seconds: percentile(&s, 50.0),
        samples: s.len(),
        launches_per_s,
        method: prepared.empty_window_method().to_string(),
    }))
}

/// The noise `--runs auto` stops on: the relative half-width of the
/// median's distribution-free 95% interval over the throughput of every run
/// made so far (all of them, before the IQR filter, so outliers widen it
/// rather than being dropped); `None` below six runs.
fn run_noise(run_seconds: &[f64]) -> Option<f64> {
    let per_run: Vec<f64> = run_seconds.iter().map(|s| 1.0 / s).collect();
    median_relative_half_width(&per_run)
}

/// Fills the statistics of a record from its `run_seconds` and `usage`
/// (one entry per timed run) and marks it `ok`.
pub fn fill_statistics(rec: &mut Record, cfg: &MeasureConfig) -> Result<(), String> {
    let fail = |what: &str, e: anyhow::Error| format!("{what}: {e:#}");
    let n = cfg.batch.batch as f64;
    let per_run: Vec<f64> = rec.run_seconds.iter().map(|s| n / s).collect();
    let throughput = Sample::new(per_run)
        .context("throughput samples")
        .map_err(|e| fail("summarising", e))?;
    let summary = summarize(&throughput);
    rec.ops_per_sec = Some(summary.median);
    rec.ms_per_op = Some(1000.0 / summary.median);
    // The batch time at that same median throughput, so `batch_ms` and
    // `ops_per_sec` describe one sample (the kept runs), not two.
    rec.batch_ms = Some(n / summary.median * 1000.0);
    if rec.device.kind == crate::schema::device::DeviceKind::Cpu && cfg.mode == Mode::Throughput {
        rec.cycles_per_op = crate::probe::tsc::cycles_per_op(summary.median, rec.threads);
    }
    rec.throughput_ops_per_sec = Some(summary);
    if cfg.mode == Mode::Latency {
        let us: Vec<f64> = rec.run_seconds.iter().map(|s| s * 1e6 / n).collect();
        let s = Sample::new(us).map_err(|e| fail("summarising latency", e.into()))?;
        rec.latency_p50_us = Some(percentile(&s, 50.0));
        rec.latency_p99_us = Some(percentile(&s, 99.0));
        rec.latency_us = Some(summarize(&s));
    }
    rec.peak_mem_mb = summary_of(&rec.usage, |u| u.peak_mem_mb);
    rec.peak_util_pct = summary_of(&rec.usage, |u| u.peak_util_pct);
    rec.mean_power_w = summary_of(&rec.usage, |u| u.mean_power_w);
    rec.energy_per_op_uj = summary_of(&rec.usage, |u| u.energy_j.map(|j| j * 1e6 / n));
    rec.runs_requested = Some(cfg.runs);
    rec.runs_completed = Some(rec.run_seconds.len());
    rec.window_over_floor = rec
        .floor
        .as_ref()
        .filter(|f| f.seconds > 0.0)
        .zip(median_ms(&rec.run_seconds))
        .map(|(f, ms)| ms / 1000.0 / f.seconds);
    rec.clocks = clock_report(&rec.usage);
    rec.status = Status::Ok;
    Ok(())
}

/// The SM clock range and throttle reasons over `usage`, where the sampler
/// read clocks or reasons at all (NVML).
pub fn clock_report(usage: &[RunUsage]) -> Option<ClockReport> {
    let min = usage
        .iter()
        .filter_map(|u| u.min_sm_clock_mhz.or(u.peak_sm_clock_mhz))
        .reduce(f64::min);
    let max = usage
        .iter()
        .filter_map(|u| u.peak_sm_clock_mhz)
        .reduce(f64::max);
    let mut reasons: Vec<String> = vec![];
    for r in usage.iter().flat_map(|u| &u.throttle_reasons) {
        if !reasons.contains(r) {
            reasons.push(r.clone());
        }
    }
    if min.is_none() && max.is_none() && reasons.is_empty() {
        return None;
    }
    let throttled = reasons
        .iter()
        .any(|r| crate::monitor::nvml::SLOWING_REASONS.contains(&r.as_str()));
    Some(ClockReport {
        sm_clock_min_mhz: min,
        sm_clock_max_mhz: max,
        throttle_reasons: reasons,
        throttled,
    })
}

/// Median of run times in seconds, as milliseconds.
fn median_ms(seconds: &[f64]) -> Option<f64> {
    let s = Sample::new(seconds.to_vec()).ok()?;
    Some(percentile(&s, 50.0) * 1000.0)
}

/// Where the timed runs' own energy readings came from, counted over all
/// runs (a run's reading may come from the counter and the next from
/// integrated samples); empty when no run had a source. These per-run
/// figures are over runs too short for NVML's averaging: the record's
/// `energy` (the energy window) is the figure to quote.
fn per_run_energy_sources(usage: &[RunUsage]) -> String {
    let mut counts: Vec<(&str, usize)> = vec![];
    for src in usage.iter().filter_map(|u| u.energy_source.as_deref()) {
        match counts.iter_mut().find(|(s, _)| *s == src) {
            Some((_, n)) => *n += 1,
            None => counts.push((src, 1)),
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let said: Vec<String> = counts
        .iter()
        .map(|(s, n)| format!("{s} in {n} of {} runs", usage.len()))
        .collect();
    format!(
        "; per-run energy (runs shorter than NVML's averaging, not quoted: see `energy`) from {}",
        said.join(", ")
    )
}

/// `runs` end-to-end batches (copies in, work, copies out) where the
/// backend has them. A run that cannot be made end to end (pinned memory
/// refused) leaves the reason in the record; the kernel-only figures stand
/// and the final gate still checks the outputs.
fn end_to_end_runs(
    prepared: &mut dyn Prepared,
    cfg: &MeasureConfig,
    cancel: &AtomicBool,
    rec: &mut Record,
    budget: &Budget,
    kernel_wall: Duration,
) -> Result<(), RunError> {
    // Nothing to copy (a CPU): no end-to-end runs, so nothing a budget
    // could cut.
    if prepared.end_to_end_window().is_empty() {
        return Ok(());
    }
    let mut e2e = EndToEnd {
        timed_window: prepared.end_to_end_window().to_string(),
        run_seconds: vec![],
        throughput_ops_per_sec: None,
        ops_per_sec: None,
        batch_ms: None,
        not_measured: None,
    };
    // As many end-to-end runs as kernel-only ones finished; the first is
    // expected to take about twice a kernel-only launch.
    let runs = rec.run_seconds.len();
    let mut last_wall = kernel_wall * 2;
    for i in 0..runs {
        let by = if cancel.load(Ordering::SeqCst) {
            Some("a signal (Ctrl-C, SIGTERM or SIGHUP)")
        } else {
            budget.check(last_wall, false)
        };
        if let Some(by) = by {
            let note = if i == 0 {
                format!("no end-to-end run: cut by {by}")
            } else {
                cut_note(by, i, runs, "end-to-end runs")
            };
            rec.cut = Some(match rec.cut.take() {
                Some(c) => format!("{c}; {note}"),
                None => note,
            });
            break;
        }
        let t = Instant::now();
        prepared
            .arm()
            .map_err(|e| fail(&format!("preparing end-to-end run {}", i + 1), e))?;
        let armed = t.elapsed();
        let r = prepared.run_end_to_end();
        if let Some(Ok(_)) = r {
            let checking = Instant::now();
            let gate = prepared.check(Checkpoint::AfterRun).map_err(|e| {
                fail(
                    &format!("correctness gate failed after end-to-end run {}", i + 1),
                    e,
                )
            })?;
            gate_ledger(rec, gate, armed + checking.elapsed());
        }
        last_wall = t.elapsed();
        match r {
            None => return Ok(()),
            Some(Ok(d)) => e2e.run_seconds.push(d.as_secs_f64()),
            Some(Err(e)) => {
                e2e.not_measured = Some(format!("end-to-end run {} failed: {e:#}", i + 1));
                e2e.run_seconds.clear();
                break;
            }
        }
    }
    let n = cfg.batch.batch as f64;
    if let Ok(s) = Sample::new(e2e.run_seconds.iter().map(|t| n / t).collect()) {
        let summary = summarize(&s);
        e2e.ops_per_sec = Some(summary.median);
        e2e.batch_ms = Some(n / summary.median * 1000.0);
        e2e.throughput_ops_per_sec = Some(summary);
    }
    rec.end_to_end = Some(e2e);
    Ok(())
}

/// Energy per operation from the sampler's energy counter, read before and
/// after back-to-back batches lasting at least `energy::MIN_WINDOW_S`; left
/// empty where the device has no counter or it did not advance.
fn energy_window(
    prepared: &mut dyn Prepared,
    cfg: &MeasureConfig,
    sampler: &mut dyn Sampler,
    cancel: &AtomicBool,
    rec: &mut Record,
    budget: &Budget,
) -> Result<(), RunError> {
    let start_mj = sampler.energy_counter_mj();
    if start_mj.is_none() && !sampler.measures_power() {
        return Ok(());
    }
    let Some(run_ms) = median_ms(&rec.run_seconds) else {
        return Ok(());
    };
    let launches = energy::launches_for_window(run_ms / 1000.0);
    let window = Duration::from_secs_f64(run_ms / 1000.0 * launches as f64);
    let by = if cancel.load(Ordering::SeqCst) {
        Some("a signal (Ctrl-C, SIGTERM or SIGHUP)")
    } else {
        budget.check(window, false)
    };
    if let Some(by) = by {
        let note = format!("energy window not measured: cut by {by}");
        rec.cut = Some(match rec.cut.take() {
            Some(c) => format!("{c}; {note}"),
            None => note,
        });
        return Ok(());
    }
    // The window's launches are checked as one run: poisoned before, the
    // last one's outputs read by the gate after the record.
    prepared
        .arm()
        .map_err(|e| fail("preparing the energy window", e))?;
    let Some(start_mj) = start_mj else {
        // No counter: the sampler's power samples integrated over the window.
        sampler
            .start()
            .map_err(|e| fail("energy window's sampler", e))?;
        let t0 = std::time::Instant::now();
        let ran = prepared.run_back_to_back(launches);
        let window_s = t0.elapsed().as_secs_f64();
        let usage = sampler
            .stop()
            .map_err(|e| fail("energy window's sampler", e))?;
        ran.map_err(|e| RunError::Failed(format!("energy window failed: {e:#}")))?;
        rec.energy = usage
            .energy_j
            .filter(|_| usage.energy_source.as_deref() == Some(energy::INTEGRATED))
            .and_then(|j| {
                energy::figure(
                    j,
                    cfg.batch.batch,
                    launches,
                    window_s,
                    &energy::integrated_method(launches, window_s),
                )
            });
        return Ok(());
    };
    let t0 = std::time::Instant::now();
    prepared
        .run_back_to_back(launches)
        .map_err(|e| RunError::Failed(format!("energy window failed: {e:#}")))?;
    let window_s = t0.elapsed().as_secs_f64();
    rec.energy = sampler
        .energy_counter_mj()
        .and_then(|end_mj| energy::counter_joules(start_mj, end_mj))
        .and_then(|j| {
            energy::figure(
                j,
                cfg.batch.batch,
                launches,
                window_s,
                &energy::counter_method(launches, window_s),
            )
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{Mock, NAME};
    use crate::monitor::RunUsage;
    use std::time::Duration;

    struct FixedSampler;
    impl Sampler for FixedSampler {
        fn start(&mut self) -> anyhow::Result<()> {
            Ok(())
        }
        fn stop(&mut self) -> anyhow::Result<RunUsage> {
            Ok(RunUsage {
                peak_mem_mb: Some(10.0),
                peak_util_pct: Some(50.0),
                samples: 1,
                ..RunUsage::default()
            })
        }
        fn describe(&self) -> String {
            "fixed sampler (test only)".into()
        }
    }

    fn cfg(runs: usize) -> MeasureConfig {
        MeasureConfig {
            batch: BatchConfig {
                batch: 1000,
                threads: 1,
                message_size: 8,
                context: vec![],
                gate: Default::default(),
            },
            runs,
            warmup_runs: 1,
            mode: Mode::Throughput,
            timing: Timing::default(),
        }
    }

    /// `measure` with the fixed sampler, `cancel` as the Ctrl-C flag.
    fn measure_with(
        mock: &mut Mock,
        alg: Algorithm,
        op: Operation,
        cfg: &MeasureConfig,
        cancel: bool,
        progress: Progress<'_>,
    ) -> Result<Record, Interrupted> {
        let cancel = AtomicBool::new(cancel);
        measure_record(mock, alg, op, cfg, &mut FixedSampler, &cancel, progress)
    }

    /// The record `measure` gives uninterrupted, progress unwatched.
    fn measured(mock: &mut Mock, alg: Algorithm, op: Operation, cfg: &MeasureConfig) -> Record {
        measure_with(mock, alg, op, cfg, false, &mut |_, _| {}).unwrap()
    }

    #[test]
    fn throughput_is_batch_over_time_with_outliers_filtered() {
        // 19 runs of 10 ms and one of 100 ms: the slow one is filtered.
        let mut d = vec![Duration::from_millis(10)]; // warm-up
        d.extend(std::iter::repeat_n(Duration::from_millis(10), 19));
        d.push(Duration::from_millis(100));
        let mut mock = Mock {
            durations: d,
            ..Mock::default()
        };
        let mut calls = 0;
        let rec = measure_with(
            &mut mock,
            Algorithm::MlKem768,
            Operation::KeyGen,
            &cfg(20),
            false,
            &mut |_, _| calls += 1,
        )
        .unwrap();
        assert_eq!(rec.backend, NAME);
        assert_eq!(rec.status, Status::Ok);
        assert_eq!(calls, 20);
        let t = rec.throughput_ops_per_sec.as_ref().unwrap();
        assert_eq!(t.raw.len(), 20);
        assert_eq!(t.kept.len(), 19);
        assert!((t.mean - 100_000.0).abs() < 1e-6);
        assert!((rec.ops_per_sec.unwrap() - 100_000.0).abs() < 1e-6);
        assert!((rec.ms_per_op.unwrap() - 0.01).abs() < 1e-12);
        assert_eq!(rec.peak_mem_mb.as_ref().unwrap().mean, 10.0);
        assert!(rec.gate.is_some());
    }

    #[test]
    fn the_warm_up_that_ran_is_recorded_and_batch_time_matches_throughput() {
        // Asked for no warm-up: one runs anyway (the gate checks it).
        // Timed: 10, 10, 10, 10 and one of 100 ms that the filter drops; the
        // raw median run is 10 ms but the kept runs' median throughput must
        // give the batch time, whatever the raw values do.
        let d = [15, 10, 12, 10, 12, 100]
            .map(Duration::from_millis)
            .to_vec();
        let mut mock = Mock {
            durations: d,
            ..Mock::default()
        };
        let mut c = cfg(5);
        c.warmup_runs = 0;
        let rec = measured(&mut mock, Algorithm::MlKem768, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Ok, "{:?}", rec.reason);
        assert_eq!(rec.warmup_runs, 1, "one warm-up ran");
        let t = rec.throughput_ops_per_sec.as_ref().unwrap();
        assert_eq!(t.kept.len(), 4, "{t:?}");
        let ops = rec.ops_per_sec.unwrap();
        let ms = rec.batch_ms.unwrap();
        assert!(
            (ms - 1000.0 * rec.batch as f64 / ops).abs() < 1e-9,
            "batch_ms {ms} and ops_per_sec {ops} from one sample"
        );
        assert_eq!(t.ci_values, crate::core::stats::KEPT);
    }

    #[test]
    fn every_run_is_armed_before_and_checked_after_outside_its_window() {
        let mut mock = Mock::default();
        let mut c = cfg(3);
        c.warmup_runs = 2;
        let rec = measured(&mut mock, Algorithm::MlKem768, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Ok, "{:?}", rec.reason);
        let calls = mock.calls.lock().unwrap().join(" ");
        assert_eq!(
            calls,
            "arm run arm run check:BeforeTiming \
             arm run check:AfterRun arm run check:AfterRun arm run check:AfterRun \
             check:Last"
        );
        // The record counts the checks: the gate before, three runs, the last.
        assert_eq!(rec.gate.unwrap().checks, vec!["mock check (test only)"]);
    }

    #[test]
    fn a_gate_that_fails_after_one_timed_run_fails_the_record() {
        // Right before timing and in the first timed run, wrong in the second.
        let mut mock = Mock {
            gate_fails_after_run: Some(3),
            ..Mock::default()
        };
        let rec = measured(&mut mock, Algorithm::MlKem768, Operation::Decaps, &cfg(5));
        assert_eq!(rec.status, Status::Failed);
        let why = rec.reason.unwrap();
        assert!(
            why.starts_with("correctness gate failed after timed run 2 (its figures are not kept): mock gate failure after run 3"),
            "{why}"
        );
        assert!(rec.throughput_ops_per_sec.is_none() && rec.ops_per_sec.is_none());
    }

    #[test]
    fn a_failed_gate_is_never_timed() {
        let mut mock = Mock {
            failing_gate: vec![(Algorithm::MlDsa44, Operation::Sign)],
            ..Mock::default()
        };
        let rec = failed_record(&mut mock, Algorithm::MlDsa44, Operation::Sign);
        let reason = rec.reason.unwrap();
        assert!(reason.contains("correctness gate failed before timing"));
        assert!(rec.run_seconds.is_empty());
        assert!(rec.ops_per_sec.is_none());
    }

    /// The record of `alg` `op` measured with `mock`, which must fail.
    fn failed_record(mock: &mut Mock, alg: Algorithm, op: Operation) -> Record {
        let rec = measured(mock, alg, op, &cfg(5));
        assert_eq!(rec.status, Status::Failed);
        rec
    }

    #[test]
    fn a_failed_prepare_is_a_failed_record() {
        let mut mock = Mock {
            failing_prepare: vec![(Algorithm::MlKem512, Operation::Decaps)],
            ..Mock::default()
        };
        let rec = failed_record(&mut mock, Algorithm::MlKem512, Operation::Decaps);
        assert!(rec.reason.unwrap().contains("mock prepare failure"));
    }

    #[test]
    fn unsupported_operations_are_skipped() {
        let rec = measured(
            &mut Mock::default(),
            Algorithm::MlKem512,
            Operation::Sign,
            &cfg(5),
        );
        assert_eq!(rec.status, Status::Skipped);
    }

    #[test]
    fn cancel_stops_before_the_next_run() {
        // Cancelled before the start: not even the warm-up runs.
        let mut mock = Mock::default();
        let r = measure_with(
            &mut mock,
            Algorithm::MlKem512,
            Operation::KeyGen,
            &cfg(5),
            true,
            &mut |_, _| {},
        );
        assert!(r.is_err());
        assert_eq!(mock.runs_made.load(Ordering::SeqCst), 0);
        // Cancelled as the second of five timed runs ends: the warm-up and
        // those two ran, nothing after them (no third run, no end-to-end),
        // and the record keeps the two.
        let mut mock = Mock {
            end_to_end: Some(Duration::from_millis(1)),
            ..Mock::default()
        };
        let rec = cancelled_in_the_third_of_five(&mut mock);
        assert_eq!(rec.runs_completed, Some(2));
        assert!(rec
            .end_to_end
            .as_ref()
            .is_none_or(|e| e.run_seconds.is_empty()));
        assert_eq!(mock.runs_made.load(Ordering::SeqCst), 1 + 2);
    }

    /// ML-KEM-512 key generation, five runs asked, cancelled (as by a
    /// signal) as the second ends.
    fn cancelled_in_the_third_of_five(mock: &mut Mock) -> Record {
        let cancel = AtomicBool::new(false);
        measure_record(
            mock,
            Algorithm::MlKem512,
            Operation::KeyGen,
            &cfg(5),
            &mut FixedSampler,
            &cancel,
            &mut |done, _| {
                if done == 2 {
                    cancel.store(true, Ordering::SeqCst);
                }
            },
        )
        .unwrap()
    }

    #[test]
    fn a_signal_in_the_third_run_keeps_the_two_finished() {
        let rec = cancelled_in_the_third_of_five(&mut Mock::default());
        assert_eq!(rec.status, Status::Ok);
        assert_eq!((rec.runs_completed, rec.runs_requested), (Some(2), Some(5)));
        assert_eq!(rec.throughput_ops_per_sec.unwrap().raw.len(), 2);
        assert!(rec.cut.unwrap().contains("a signal"));
    }

    #[test]
    fn max_seconds_cuts_after_the_first_run_and_a_passed_deadline_skips() {
        // 50 ms runs, 0.3 s a record: the warm-up and a few runs, not 50.
        let mut mock = Mock {
            wall: Some(Duration::from_millis(50)),
            ..Mock::default()
        };
        let mut c = cfg(50);
        c.timing.max_seconds = Some(0.3);
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Ok);
        let done = rec.runs_completed.unwrap();
        assert!((1..50).contains(&done), "{done}");
        assert!(rec.cut.unwrap().contains("--max-seconds 0.3"));
        // A budget too small for any run still gives the first (the gate
        // passed); only the deadline refuses it.
        c.timing.max_seconds = Some(0.001);
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.runs_completed, Some(1));
        c.timing.max_seconds = None;
        c.timing.deadline = Some((Instant::now(), 0.001));
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Skipped);
        assert!(rec.reason.unwrap().contains("--deadline 0.001"));
        assert!(rec.run_seconds.is_empty());
    }

    /// A mock whose runs cycle through `us` microseconds (its known noise).
    fn scripted(us: &[u64]) -> Mock {
        Mock {
            durations: us.iter().map(|&u| Duration::from_micros(u)).collect(),
            ..Mock::default()
        }
    }

    /// `--runs auto` at `max_noise`, at most `max_runs`.
    fn auto(max_runs: usize, max_noise: f64) -> MeasureConfig {
        let mut c = cfg(max_runs);
        c.timing.until_noise = Some(max_noise);
        c
    }

    #[test]
    fn runs_auto_stops_on_the_noise_target_with_a_quiet_backend() {
        // Runs within 0.1% of each other: the median's interval (the
        // smallest and largest of six) is 0.1% wide at the sixth run.
        let mut mock = scripted(&[10_000, 10_010, 9_990]);
        let rec = measured(
            &mut mock,
            Algorithm::MlKem768,
            Operation::Encaps,
            &auto(200, 0.01),
        );
        assert_eq!(rec.status, Status::Ok, "{:?}", rec.reason);
        assert_eq!(rec.stopped_by, Some(StoppedBy::Noise));
        assert_eq!((rec.runs_used, rec.runs_completed), (Some(6), Some(6)));
        assert_eq!(rec.runs_requested, Some(200));
        let w = rec.noise_reached.unwrap();
        assert!(w < 0.01 && w > 0.0, "{w}");
        assert_eq!(rec.max_noise, Some(0.01));
        assert!(rec.cut.is_none());
        // The figure it stopped on is the record's own: over every run.
        let t = rec.throughput_ops_per_sec.unwrap();
        let again = median_relative_half_width(&t.raw).unwrap();
        assert!((again - w).abs() < 1e-12);
    }

    #[test]
    fn runs_auto_stops_at_max_runs_with_a_noisy_backend_and_says_so() {
        // Runs from 5 to 20 ms: the median is never known to 1%.
        let mut mock = scripted(&[5_000, 15_000, 8_000, 12_000, 20_000, 6_000]);
        let rec = measured(
            &mut mock,
            Algorithm::MlDsa65,
            Operation::Sign,
            &auto(30, 0.01),
        );
        assert_eq!(rec.status, Status::Ok, "{:?}", rec.reason);
        assert_eq!(rec.stopped_by, Some(StoppedBy::MaxRuns));
        assert_eq!(rec.runs_used, Some(30));
        assert!(rec.noise_reached.unwrap() > 0.01);
        // The same backend meets a loose enough target.
        let rec = measured(
            &mut mock,
            Algorithm::MlDsa65,
            Operation::Sign,
            &auto(30, 0.9),
        );
        assert_eq!(rec.stopped_by, Some(StoppedBy::Noise));
        assert_eq!(rec.runs_used, Some(6));
    }

    #[test]
    fn runs_auto_stops_on_time_with_a_noisy_backend_and_says_so() {
        let mut mock = Mock {
            wall: Some(Duration::from_millis(20)),
            ..scripted(&[5_000, 15_000, 8_000, 12_000, 20_000, 6_000])
        };
        let mut c = auto(1000, 0.01);
        c.timing.max_seconds = Some(0.3);
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Ok, "{:?}", rec.reason);
        assert_eq!(rec.stopped_by, Some(StoppedBy::Time));
        let used = rec.runs_used.unwrap();
        assert!((1..1000).contains(&used), "{used}");
        assert_eq!(rec.runs_completed, Some(used));
        let cut = rec.cut.unwrap();
        assert!(cut.contains("--max-seconds 0.3"), "{cut}");
        // A backend with nothing to copy has no end-to-end run to cut.
        assert!(!cut.contains("end-to-end"), "{cut}");
    }

    #[test]
    fn a_fixed_run_count_says_nothing_about_stopping() {
        let mut mock = scripted(&[10_000, 10_010, 9_990]);
        let rec = measured(&mut mock, Algorithm::MlKem768, Operation::Encaps, &cfg(8));
        assert_eq!(rec.runs_completed, Some(8));
        assert_eq!(
            (rec.runs_used, rec.stopped_by, rec.max_noise),
            (None, None, None)
        );
    }

    #[test]
    fn the_floor_is_timed_after_the_runs_and_the_window_set_against_it() {
        // 10 ms runs over a 50 µs empty window: 200 times the floor.
        let mut mock = Mock {
            floor: Some(Duration::from_micros(50)),
            ..scripted(&[10_000])
        };
        let rec = measured(&mut mock, Algorithm::MlKem768, Operation::Encaps, &cfg(5));
        let f = rec.floor.as_ref().unwrap();
        assert_eq!((f.seconds, f.samples), (50e-6, FLOOR_SAMPLES));
        assert!(f.method.contains("mock"));
        assert!((rec.window_over_floor.unwrap() - 200.0).abs() < 1e-9);
        // Without an empty window, no floor and no multiple.
        let rec = measured(
            &mut scripted(&[10_000]),
            Algorithm::MlKem768,
            Operation::Encaps,
            &cfg(5),
        );
        assert_eq!((rec.floor, rec.window_over_floor), (None, None));
    }

    #[test]
    fn clocks_and_throttling_come_from_the_runs() {
        let u = |min, max, r: &[&str]| RunUsage {
            min_sm_clock_mhz: Some(min),
            peak_sm_clock_mhz: Some(max),
            throttle_reasons: r.iter().map(|s| s.to_string()).collect(),
            ..RunUsage::default()
        };
        let c = clock_report(&[u(1500.0, 1980.0, &["gpu_idle"]), u(1200.0, 1700.0, &[])]).unwrap();
        assert_eq!(
            (c.sm_clock_min_mhz, c.sm_clock_max_mhz),
            (Some(1200.0), Some(1980.0))
        );
        assert!(!c.throttled, "idle is not throttling");
        let c = clock_report(&[u(900.0, 1980.0, &["sw_power_cap"])]).unwrap();
        assert!(c.throttled && c.throttle_reasons == ["sw_power_cap"]);
        assert_eq!(clock_report(&[RunUsage::default()]), None);
    }

    /// A sampler with an energy counter that reads `readings_mj` in turn,
    /// and whose description counts its stops (so a record can be seen to
    /// name its own runs).
    struct CounterSampler {
        readings_mj: Vec<u64>,
        stops: usize,
    }
    impl Sampler for CounterSampler {
        fn start(&mut self) -> anyhow::Result<()> {
            Ok(())
        }
        fn stop(&mut self) -> anyhow::Result<RunUsage> {
            self.stops += 1;
            Ok(RunUsage::default())
        }
        fn describe(&self) -> String {
            format!("counter sampler after {} stops (test only)", self.stops)
        }
        fn energy_counter_mj(&mut self) -> Option<u64> {
            (!self.readings_mj.is_empty()).then(|| self.readings_mj.remove(0))
        }
    }

    #[test]
    fn energy_comes_from_the_counter_over_a_second_of_launches() {
        let mut mock = Mock {
            durations: vec![Duration::from_millis(10)],
            ..Mock::default()
        };
        let mut s = CounterSampler {
            readings_mj: vec![1_000_000, 1_003_500],
            stops: 0,
        };
        let cancel = AtomicBool::new(false);
        let c = cfg(5);
        let rec = measure_record(
            &mut mock,
            Algorithm::MlKem768,
            Operation::KeyGen,
            &c,
            &mut s,
            &cancel,
            &mut |_, _| {},
        )
        .unwrap();
        // 10 ms batches: 100 launches fill the 1 s window; 100 x 1000 ops.
        let e = rec.energy.unwrap();
        assert_eq!((e.launches, e.ops), (100, 100_000));
        assert!((e.joules - 3.5).abs() < 1e-12);
        assert!((e.joules_per_op - 3.5e-5).abs() < 1e-15);
        assert!(
            e.method.contains("100 back-to-back launches"),
            "{}",
            e.method
        );
        // The record names what the sampler said after its own runs.
        assert_eq!(rec.sampler, "counter sampler after 5 stops (test only)");
        assert!((rec.batch_ms.unwrap() - 10.0).abs() < 1e-9);
        // A counter that did not advance gives no figure, not a zero.
        let mut flat = CounterSampler {
            readings_mj: vec![7, 7],
            stops: 0,
        };
        let rec = measure_record(
            &mut mock,
            Algorithm::MlKem768,
            Operation::KeyGen,
            &c,
            &mut flat,
            &cancel,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(rec.status, Status::Ok);
        assert!(rec.energy.is_none());
    }

    #[test]
    fn end_to_end_beside_kernel_only() {
        let mut mock = Mock {
            durations: vec![Duration::from_millis(10)],
            end_to_end: Some(Duration::from_millis(20)),
            ..Mock::default()
        };
        let rec = measured(&mut mock, Algorithm::MlDsa44, Operation::Sign, &cfg(4));
        assert!((rec.ops_per_sec.unwrap() - 100_000.0).abs() < 1e-6);
        let e = rec.end_to_end.unwrap();
        assert_eq!(e.run_seconds.len(), 4);
        assert!((e.ops_per_sec.unwrap() - 50_000.0).abs() < 1e-6);
        assert!((e.batch_ms.unwrap() - 20.0).abs() < 1e-9);
        assert!(e.timed_window.contains("end-to-end"));
        // A CPU-like backend has none.
        let rec = measured(
            &mut Mock::default(),
            Algorithm::MlDsa44,
            Operation::Sign,
            &cfg(2),
        );
        assert!(rec.end_to_end.is_none());
    }

    #[test]
    fn latency_mode_reports_microseconds() {
        // A warm-up, then 20 timed runs in no order: 10, 20, ... 190 µs and
        // one of 5000 µs, which the IQR filter drops (Q1 50, Q3 160).
        let timed = [
            70, 10, 190, 5000, 40, 130, 100, 20, 160, 60, 180, 90, 30, 150, 110, 50, 170, 80, 140,
            120,
        ];
        let mut durations = vec![Duration::from_micros(999)];
        durations.extend(timed.iter().map(|&us| Duration::from_micros(us)));
        let mut mock = Mock {
            durations,
            ..Mock::default()
        };
        let mut c = cfg(20);
        c.batch.batch = 1;
        c.mode = Mode::Latency;
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::Encaps, &c);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let l = rec.latency_us.unwrap();
        assert_eq!(l.raw.len(), 20);
        assert_eq!(l.kept.len(), 19, "the 5000 µs run is filtered");
        // The mean and median are of the kept runs: 10 ... 190 µs.
        assert!(close(l.mean, 100.0), "{}", l.mean);
        assert!(close(l.median, 100.0), "{}", l.median);
        // The percentiles are of every run (sorted, linear between ranks):
        // p50 between the 10th and 11th (100, 110), p99 at rank 18.81,
        // between 190 and 5000.
        let (p50, p99) = (rec.latency_p50_us.unwrap(), rec.latency_p99_us.unwrap());
        assert!(close(p50, 105.0), "p50 {p50}");
        assert!(close(p99, 190.0 + 0.81 * 4810.0), "p99 {p99}");
        assert_eq!(rec.latency_method.unwrap(), rec.timed_window);
    }

    #[test]
    fn latency_keeps_only_the_runs_its_hold_covered() {
        let mut c = cfg(4);
        c.batch.batch = 1;
        c.mode = Mode::Latency;
        // The warm-up, then 4 timed runs: uncovered, covered, uncovered, covered.
        let mut mock = Mock {
            durations: (1..=5).map(Duration::from_micros).collect(),
            holds: vec![true, false],
            ..Mock::default()
        };
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Ok, "{rec:#?}");
        assert_eq!(rec.run_seconds, vec![3e-6, 5e-6]);
        assert_eq!(rec.latency_us.as_ref().unwrap().raw.len(), 2);
        let h = rec.hold.unwrap();
        assert_eq!((h.covered_runs, h.uncovered_runs), (2, 2));
        assert_eq!(h.dropped_run_seconds, vec![2e-6, 4e-6]);

        // No covered run: refused, no latency figure.
        let mut mock = Mock {
            holds: vec![false],
            ..Mock::default()
        };
        let rec = measured(&mut mock, Algorithm::MlKem512, Operation::KeyGen, &c);
        assert_eq!(rec.status, Status::Failed);
        assert!(rec.reason.as_deref().unwrap().contains("hold"), "{rec:#?}");
        assert!(rec.latency_us.is_none() && rec.latency_p50_us.is_none());
        assert_eq!(rec.hold.unwrap().uncovered_runs, 4);
    }
}
