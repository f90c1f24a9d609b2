//! `pqcprof offload`'s serving: requests arrive at a rate, the dynamic
//! batcher serves them with real workers, and each point (a rate, a
//! batching) is saved in the run file as soon as it is finished
//! ([`super::saved`]).

use super::arrivals::Arrivals;
use super::batcher::{self, Policy};
use super::curve::Curve;
use super::gpu::{self, Serving};
use super::latency::Recorder;
use super::live::{self, BackendWorker, Worker};
use super::mix::MixWorker;
use super::planner::{self, Point};
use super::request::{Rates, Request, Settings};
use super::saved::{finish, open_run_file, Saved, Stop};
use super::words::{describe_arrivals, point_line, summary};
use crate::backend::cupqc;
use crate::backend::liboqs::LiboqsCpu;
use crate::backend::{Backend, BatchConfig};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::Device;
use crate::schema::offload::{energy_per_request, kept_up};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes signed and verified per request unless `--message-size` says
/// otherwise.
pub const MESSAGE_BYTES: usize = 1024;

/// What a finished `offload` leaves: the exit code that says how its
/// points ended, and its table for the terminal.
#[derive(Debug)]
pub struct Served {
    /// The exit code.
    pub code: i32,
    /// The run's table, with where its files are.
    pub summary: String,
}

/// `pqcprof offload`'s serving: the batch times measured, then each point
/// served and saved; `started` is when the command began (its deadline
/// counts from there).
pub fn serve(args: &Settings, started: Instant) -> anyhow::Result<Served> {
    let (req, b) = (args.request, &args.batching);
    if let Rates::One(a @ (Arrivals::Poisson { .. } | Arrivals::Uniform { .. })) = &args.rates {
        check_window(a.rate(), args.window)?;
    }
    let deadline = args.deadline.map(|s| started + Duration::from_secs_f64(s));
    let out = crate::write::output::ensure_writable_dir(&args.out)?;
    let cfg = BatchConfig {
        batch: 1,
        threads: 1,
        message_size: args.message_size,
        context: vec![],
        gate: Default::default(),
    };
    let ordinal = args.device.unwrap_or(0);
    let served_on = gpu::served_on(
        &Serving {
            backend: &args.backend,
            ops: &req.operations(),
            ordinal,
            workers: args.threads as usize,
            top: b.top,
            fixed: b.fixed.is_some(),
            deadline,
        },
        &cfg,
    )?;
    let top = b.top;
    let make = maker(
        &args.backend,
        req,
        cfg,
        top,
        (&served_on.device, ordinal),
        deadline,
    );
    let curve = measure(&args.backend, args.threads as usize, req, top, &make)?;
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    let ctx = Ctx {
        args,
        req,
        curve: &curve,
        workers: args.threads as usize,
        fixed: b.fixed,
        queue_limit: b.queue_limit,
        deadline,
        cancel: &cancel,
        make: &make,
        emulated: served_on.emulated,
        sampler: served_on
            .pci_bus_id
            .as_deref()
            .map(|id| gpu::energy_sampler(id, ordinal)),
    };
    let predicted_top = args
        .load
        .slo
        .as_ref()
        .and_then(|slo| ctx.model().max_rate_under(slo, args.load.seed));
    let predicted_top = predicted_top.map(|p| Point {
        mix: req.mix(),
        ..p
    });
    let mut saved = open_run_file(
        args,
        req,
        &out,
        &curve,
        b.queue_limit,
        predicted_top,
        &served_on,
    )?;
    let stopped = match &args.rates {
        Rates::One(a) => ctx.point(a, &mut saved).err(),
        Rates::Sweep { low, high } => ctx.sweep(*low, *high, &mut saved).err(),
    };
    let code = finish(&mut saved, stopped)?;
    let o = saved.run.offload.as_ref().expect("an offload run file");
    Ok(Served {
        code,
        summary: summary(o, &saved.path),
    })
}

/// The fewest requests a point offers: fewer give no latency percentile
/// and no rate.
pub const MIN_REQUESTS: f64 = 2.0;

/// Refuses a rate and window that offer fewer than [`MIN_REQUESTS`]: a
/// point holds the requests its window offers at its rate, and a window
/// too short for them would have to stretch to fit them (at `--rate 0.01`
/// two requests take 200 s, not the 0.05 s asked for).
/// The refusal is a usage error (exit 2), given before anything is
/// measured.
pub fn check_window(rate: f64, window: f64) -> anyhow::Result<()> {
    let offered = rate * window;
    if offered < MIN_REQUESTS {
        return Err(crate::core::exit::Usage(format!(
            "--rate {rate} over --window {window} s offers {} requests; a point needs at least {MIN_REQUESTS}: use --window {} or more, or a higher --rate",
            crate::core::units::sig3(offered),
            crate::core::units::sig3(MIN_REQUESTS / rate)
        ))
        .into());
    }
    Ok(())
}

/// What makes each worker: a backend opened on its own thread (on a GPU,
/// with a stream of its own), every batch size up to `top` prepared; a
/// plugin's worker process answers every request by `deadline`.
fn maker<'a>(
    backend: &'a str,
    req: Request,
    cfg: BatchConfig,
    top: usize,
    (device, ordinal): (&Device, usize),
    deadline: Option<Instant>,
) -> impl Fn(usize) -> anyhow::Result<Box<dyn Worker>> + Sync + 'a {
    let (ops, cpu_device) = (req.operations(), device.clone());
    move |_: usize| -> anyhow::Result<Box<dyn Worker>> {
        let opened: Box<dyn Backend> = if gpu::is_gpu(backend) {
            gpu::open(backend, &ops, ordinal, true)?.backend
        } else if let Some(path) = backend.strip_prefix(crate::backend::plugin::PREFIX) {
            // One worker process per serving thread: a crash costs the point.
            Box::new(crate::backend::plugin::isolated::PluginBackend::open(
                std::path::Path::new(path),
                cpu_device.clone(),
                ordinal,
                deadline,
            )?)
        } else {
            Box::new(LiboqsCpu::new(cpu_device.clone()))
        };
        worker(opened, req, &cfg, top)
    }
}

/// `alg` `op`'s batch times on `backend` (GPU 0 for a GPU backend) up to
/// `top`, with `workers` workers, measured here as `offload` measures them
/// before its first point: what `plan` predicts from without a run file.
pub(super) fn measure_here(
    backend: &str,
    alg: Algorithm,
    op: Operation,
    workers: usize,
    top: usize,
) -> anyhow::Result<Curve> {
    let req = Request::One(alg, op);
    let cfg = BatchConfig {
        batch: 1,
        threads: 1,
        message_size: MESSAGE_BYTES,
        context: vec![],
        gate: Default::default(),
    };
    let served_on = gpu::served_on(
        &Serving {
            backend,
            ops: &req.operations(),
            ordinal: 0,
            workers,
            top,
            fixed: false,
            deadline: None,
        },
        &cfg,
    )?;
    let make = maker(backend, req, cfg, top, (&served_on.device, 0), None);
    measure(backend, workers, req, top, &make)
}

/// A worker for `req` over `backend`: every batch size up to `top`
/// prepared, the backend kept alive as long as the batches.
fn worker(
    mut backend: Box<dyn Backend>,
    req: Request,
    cfg: &BatchConfig,
    top: usize,
) -> anyhow::Result<Box<dyn Worker>> {
    Ok(match req {
        Request::One(alg, op) => {
            Box::new(BackendWorker::new(backend.as_mut(), alg, op, cfg, top)?.keeping(backend))
        }
        Request::Mix(m) => Box::new(MixWorker::new(backend, m, cfg, top)?),
    })
}

/// One worker's batch times, measured the way the batcher sees them; on
/// the CPU with several workers, also their times with all of them busy
/// at once (they share the host's cores, memory and caches).
fn measure(
    backend: &str,
    workers: usize,
    req: Request,
    top: usize,
    make: &live::MakeWorker,
) -> anyhow::Result<Curve> {
    let gpu = gpu::is_gpu(backend);
    let contend = !gpu && workers > 1;
    log::info!(
        "{} {} {}{}: measuring batch times up to {top} on one worker{}",
        backend,
        req.algorithm(),
        req.operation(),
        req.mix().map_or(String::new(), |m| format!(" (mix {m})")),
        if contend {
            format!(", then on {workers} workers at once")
        } else {
            String::new()
        }
    );
    let basis = if backend == cupqc::BACKEND_NAME {
        "one cuPQC batch on its stream: inputs copied in from pinned host copies, one launch, outputs copied back"
    } else if gpu {
        "one GPU stream's batch: inputs copied in through pinned staging, one launch, outputs copied back"
    } else {
        "one CPU thread's batch time"
    };
    let sizes = planner::batch_sizes(top);
    let mut curve = live::measure_curve(make, &sizes, 10, !gpu, basis)?;
    if contend {
        curve.contended = Some(live::measure_contended(make, workers, &sizes, 10)?);
    }
    curve.handoff = live::measure_handoff(true)?;
    Ok(curve)
}

struct Ctx<'a> {
    args: &'a Settings,
    req: Request,
    curve: &'a Curve,
    workers: usize,
    fixed: Option<Policy>,
    queue_limit: Option<usize>,
    deadline: Option<Instant>,
    cancel: &'a AtomicBool,
    make: &'a live::MakeWorker<'a>,
    emulated: bool,
    /// The GPU's NVML sampler around each point's window (none on the CPU).
    sampler: Option<std::cell::RefCell<Box<dyn crate::monitor::Sampler>>>,
}

impl Ctx<'_> {
    fn model(&self) -> planner::Planner<'_> {
        planner::Planner {
            backend: &self.args.backend,
            curve: self.curve,
            workers: self.workers,
            queue_limit: self.queue_limit,
        }
    }

    /// `serve` with the GPU's sampler around it: its result, and what the
    /// sampler saw (none on the CPU, or when it could not start).
    fn sampled<T>(&self, serve: impl FnOnce() -> T) -> (T, Option<crate::monitor::RunUsage>) {
        let Some(s) = &self.sampler else {
            return (serve(), None);
        };
        let mut s = s.borrow_mut();
        if let Err(e) = s.start() {
            log::warn!("starting the NVML sampler: {e:#}");
            return (serve(), None);
        }
        let out = serve();
        (out, s.stop().ok())
    }

    /// Measures one point and saves it; a cut or failed window is not a
    /// point.
    fn point(&self, a: &Arrivals, saved: &mut Saved) -> Result<Point, Stop> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(Stop::Interrupted);
        }
        let slo = self.args.load.slo.as_ref();
        let policy = self.fixed.unwrap_or_else(|| {
            let p = self.model().best(a, slo);
            Policy {
                max_batch: p.max_batch,
                max_wait: p.max_wait_ms / 1e3,
            }
        });
        let count = match a {
            Arrivals::Trace(t) => t.len(),
            _ => crate::core::bounded::requests_per_point(a.rate(), self.args.window)
                .map_err(|e| Stop::Failed(format!("offload: {e}")))?,
        };
        let times = a.times(count);
        let span = times.last().copied().unwrap_or(0.0);
        if let Some(d) = self.deadline {
            let span = crate::core::bounded::duration(span, "a point's span")
                .map_err(|e| Stop::Failed(format!("offload: {e}")))?;
            if Instant::now() + span > d {
                return Err(Stop::Deadline);
            }
        }
        log::info!(
            "offload: {}: max-batch {}, max-wait {} ms, {} requests",
            describe_arrivals(a),
            policy.max_batch,
            policy.max_wait * 1e3,
            times.len()
        );
        let (w, usage) = self.sampled(|| {
            live::serve(
                self.make,
                self.workers,
                policy,
                self.queue_limit,
                &times,
                self.deadline,
                self.cancel,
            )
        });
        let w = w.map_err(|e| Stop::Failed(format!("{e:#}")))?;
        let energy = usage.and_then(|u| energy_per_request(&u, w.served.len()));
        if w.not_served > 0 {
            return Err(if self.cancel.load(Ordering::SeqCst) {
                Stop::Interrupted
            } else {
                Stop::Deadline
            });
        }
        let mut rec = Recorder::default();
        rec.record_all(&w.served);
        let (meets_slo, slo_unresolved) = super::latency::Slo::outcome(slo, &rec);
        // The window the requests were offered in: their count over the
        // rate offered, so the rate served is over the same window.
        let window = times.len() as f64 / a.rate();
        let predicted = self.model().predict(a, policy, slo);
        let mut gate = w.gate_before;
        gate.checked_ops += w.gate_after.checked_ops;
        let p = Point {
            backend: self.args.backend.clone(),
            offered_rate: a.rate(),
            achieved_rate: batcher::achieved_rate(&w.served, window),
            max_batch: policy.max_batch,
            max_wait_ms: policy.max_wait * 1e3,
            waits: rec.waits(),
            dropped: w.dropped as u64,
            saturated: batcher::saturated(&w.served, policy.max_wait),
            requests: w.served.len(),
            not_served: 0,
            meets_slo,
            slo_unresolved,
            gate: Some(gate),
            predicted_latency_ms: Some(predicted.waits.latency_ms),
            dispatch_late_max_ms: Some(w.dispatch_late_max * 1e3),
            emulated: self.emulated,
            mix: self.req.mix(),
            energy_per_request_mj: energy.as_ref().map(|e| e.0),
            energy_source: energy.map(|e| e.1),
        };
        log::info!("{}", point_line(&p));
        saved.offload().points.push(p.clone());
        saved.save().map_err(|e| Stop::Failed(format!("{e:#}")))?;
        Ok(p)
    }

    /// Rates doubling from `low` until one falls behind (or passes
    /// `high`), then three bisections between the last that kept up and
    /// the first that did not.
    fn sweep(&self, low: Option<f64>, high: Option<f64>, saved: &mut Saved) -> Result<(), Stop> {
        let cap = self.curve.capacity(self.workers);
        // No point may hold more requests than its memory bound: a
        // capacity predicted that high stops the doubling there.
        let most = crate::core::bounded::MAX_REQUESTS_PER_POINT as f64 / self.args.window;
        let high = high.unwrap_or(cap * 2.0).min(most);
        // No point offers fewer requests than it needs in its window.
        let fewest = MIN_REQUESTS / self.args.window;
        let high = high.max(fewest);
        let mut rate = low.unwrap_or(cap / 16.0).max(fewest).min(high);
        let at = |rate: f64| self.args.load.at(rate);
        let mut good = None;
        let bad = loop {
            let p = self.point(&at(rate), saved)?;
            if !kept_up(&p) {
                break Some(rate);
            }
            good = Some(rate);
            if rate >= high {
                break None;
            }
            rate = (rate * 2.0).min(high);
        };
        if let (Some(mut lo), Some(mut hi)) = (good, bad) {
            for _ in 0..3 {
                let mid = (lo * hi).sqrt();
                if !kept_up(&self.point(&at(mid), saved)?) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
        }
        Ok(())
    }
}
