//! `pqcprof offload`: requests arrive at a rate, the dynamic batcher
//! serves them with real workers, and each point (a rate, a batching) is
//! saved in the run file as soon as it is finished.

use super::arrivals::{self, Arrivals};
use super::batcher::{self, Policy};
use super::curve::Curve;
use super::gpu::{self, ServedOn, Serving};
use super::latency::Recorder;
use super::live::{self, BackendWorker, Worker};
use super::mix::{Mix, MixWorker};
use super::options::LoadOptions;
use super::planner::{self, Point};
use super::words::{describe_arrivals, fmt_rate, percentiles};
use crate::backend::cupqc;
use crate::backend::liboqs::{self, LiboqsCpu};
use crate::backend::native_gpu;
use crate::backend::{Backend, BatchConfig};
use crate::core::catalog::{Algorithm, Operation};
use crate::probe::system;
use crate::schema::device::Device;
use crate::schema::offload::OffloadRun;
use crate::schema::offload::{energy_per_request, kept_up, rate_unit};
use crate::schema::record::RunConfig;
use crate::schema::run_file::RunFile;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `offload`.
#[derive(Debug, Args, Clone)]
pub struct OffloadArgs {
    /// The backend serving the batches: liboqs on CPU threads, the
    /// project's kernels on a GPU (one stream per worker), or NVIDIA cuPQC
    /// on a GPU (where this build has it; each prepared batch its own
    /// stream).
    #[arg(long, default_value = liboqs::NAME, value_parser = [liboqs::NAME, native_gpu::NAME, cupqc::BACKEND_NAME])]
    pub backend: String,
    /// The GPU that serves (its CUDA ordinal), for native-gpu and cupqc
    /// [default: 0].
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// The algorithm, e.g. ML-KEM-768 (not with --mix).
    #[arg(long = "alg", value_name = "NAME", required_unless_present = "mix")]
    pub algorithm: Option<Algorithm>,
    /// The operation (keygen, encaps, decaps, sign, verify; not with --mix).
    #[arg(long = "op", value_name = "OP", required_unless_present = "mix")]
    pub operation: Option<Operation>,
    /// Requests of several operations instead of one: tls13-server, the
    /// server side of a TLS 1.3 handshake (X25519MLKEM768 key exchange:
    /// one ML-KEM-768 encapsulation and one X25519 key pair and secret;
    /// one ML-DSA-65 signature). Rates are then handshakes per second.
    /// On native-gpu both kernels run on each worker's stream, X25519 on
    /// the host.
    #[arg(long, value_name = "MIX")]
    pub mix: Option<String>,
    /// Workers, each serving one batch at a time: CPU threads (liboqs-cpu),
    /// or host threads with batches on streams of their own (native-gpu,
    /// cupqc). With several CPU threads the batch times are measured twice
    /// before the first point, on one worker and on all of them at once,
    /// and the predictions slow a batch by how many workers are busy when
    /// it starts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Requests per second offered.
    #[arg(
        long,
        value_name = "PER_SEC",
        allow_negative_numbers = true,
        conflicts_with = "rate_sweep"
    )]
    pub rate: Option<f64>,
    /// Offered rates from LOW, doubling, then bisecting between the last
    /// rate that kept up and the first that did not; without LOW..HIGH,
    /// from a sixteenth of the capacity the batch times predict.
    #[arg(long, value_name = "LOW..HIGH", num_args = 0..=1, default_missing_value = "")]
    pub rate_sweep: Option<String>,
    /// Replay these arrival times instead (seconds, one per line, in order).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rate", "rate_sweep", "arrivals"])]
    pub trace: Option<PathBuf>,
    /// The largest batch `auto` may choose (batch times are measured up to
    /// it, or up to a fixed --max-batch).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub batch_top: u32,
    /// Seconds of arrivals per point.
    #[arg(
        long,
        value_name = "S",
        default_value_t = 2.0,
        allow_negative_numbers = true
    )]
    pub window: f64,
    /// Arrivals, batching and objective.
    #[command(flatten)]
    pub load: LoadOptions,
    /// Requests that may wait for a batch at most (at least the largest
    /// batch); an arrival that finds it full is dropped and counted. No
    /// limit when not given.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub queue_limit: Option<String>,
    /// Message size for signing and verifying, bytes of 0xAB.
    #[arg(long, default_value_t = MESSAGE_BYTES)]
    pub message_size: usize,
    /// Seconds the whole command may take: no point starts that would end
    /// past it; finished points are kept (exit 5).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub deadline: Option<f64>,
    /// Folder for results.
    #[arg(long, default_value = "outputs")]
    pub out: PathBuf,
}

/// Bytes signed and verified per request unless `--message-size` says
/// otherwise.
const MESSAGE_BYTES: usize = 1024;

/// The rates to measure.
enum Rates {
    /// One rate, or a trace's own.
    One(Arrivals),
    /// A sweep from `low` (None: from the predicted capacity) up to `high`.
    Sweep { low: Option<f64>, high: Option<f64> },
}

fn rates(args: &OffloadArgs) -> Result<Rates, String> {
    if let Some(t) = &args.trace {
        return Ok(Rates::One(Arrivals::Trace(arrivals::read_trace(t)?)));
    }
    let arrivals_at = |rate: f64| args.load.at(rate);
    match (&args.rate, &args.rate_sweep) {
        (Some(r), _) => Ok(Rates::One(arrivals_at(arrivals::check_rate("--rate", *r)?))),
        (None, Some(s)) if s.is_empty() => Ok(Rates::Sweep {
            low: None,
            high: None,
        }),
        (None, Some(s)) => {
            let (lo, hi) = s.split_once("..").ok_or_else(|| {
                format!("--rate-sweep '{s}': write LOW..HIGH (requests per second), e.g. 100..20000, or nothing")
            })?;
            let parse = |v: &str| {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("--rate-sweep '{s}': '{v}' is not a number"))
                    .and_then(|r| arrivals::check_rate("--rate-sweep", r))
            };
            let (lo, hi) = (parse(lo)?, parse(hi)?);
            if lo >= hi {
                return Err(format!("--rate-sweep '{s}': LOW must be below HIGH"));
            }
            Ok(Rates::Sweep {
                low: Some(lo),
                high: Some(hi),
            })
        }
        (None, None) => Err(
            "offload needs a load: --rate PER_SEC, --rate-sweep [LOW..HIGH] or --trace FILE".into(),
        ),
    }
}

/// `--queue-limit`, checked against the largest batch (`top`, named by
/// `top_why`): a smaller limit could never let a full batch form.
fn queue_limit(args: &OffloadArgs, top: usize, top_why: &str) -> anyhow::Result<Option<usize>> {
    let Some(v) = &args.queue_limit else {
        return Ok(None);
    };
    let n: usize = v.trim().parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
        anyhow::anyhow!("invalid --queue-limit {v}: use a whole number of requests, 1 or more")
    })?;
    if n < top {
        anyhow::bail!(
            "invalid --queue-limit {n}: at least the largest batch, {top} ({top_why}), or a full batch could never form"
        );
    }
    Ok(Some(n))
}

/// What one request is: one operation, or a mix of several.
#[derive(Debug, Clone, Copy)]
enum Request {
    One(Algorithm, Operation),
    Mix(Mix),
}

impl Request {
    /// The run file's `algorithm`.
    fn algorithm(self) -> String {
        match self {
            Request::One(alg, _) => alg.name().into(),
            Request::Mix(m) => m.describe().into(),
        }
    }
    /// The run file's `operation`.
    fn operation(self) -> String {
        match self {
            Request::One(_, op) => op.cli_name().into(),
            Request::Mix(m) => m.operation_names().into(),
        }
    }
    /// The operations a request runs on the backend.
    fn operations(self) -> Vec<(Algorithm, Operation)> {
        match self {
            Request::One(alg, op) => vec![(alg, op)],
            Request::Mix(m) => m.operations().to_vec(),
        }
    }
    fn mix(self) -> Option<String> {
        match self {
            Request::One(..) => None,
            Request::Mix(m) => Some(m.name().into()),
        }
    }
}

/// `--mix`, checked against the backend and against any `--alg` and
/// `--op` given with it: each must name one of the mix's own operations.
fn mix_request(args: &OffloadArgs, name: &str) -> anyhow::Result<Request> {
    let mix = Mix::parse(name).map_err(anyhow::Error::msg)?;
    let ops = mix.operations();
    let listed: Vec<String> = ops
        .iter()
        .map(|(a, o)| format!("{} {}", a.name(), o.cli_name()))
        .collect();
    let fits = ops.iter().any(|(a, o)| {
        args.algorithm.is_none_or(|x| x == *a) && args.operation.is_none_or(|x| x == *o)
    });
    if !fits {
        let given: Vec<String> = [
            args.algorithm.map(|a| format!("--alg {}", a.name())),
            args.operation.map(|o| format!("--op {}", o.cli_name())),
        ]
        .into_iter()
        .flatten()
        .collect();
        anyhow::bail!(
            "{} contradicts --mix {}: its requests are {}; leave --alg and --op out with --mix",
            given.join(" "),
            mix.name(),
            listed.join(" and ")
        );
    }
    Ok(Request::Mix(mix))
}

/// The request, from `--mix` or `--alg` and `--op`.
fn request(args: &OffloadArgs) -> anyhow::Result<Request> {
    if let Some(name) = &args.mix {
        return mix_request(args, name);
    }
    let (Some(alg), Some(op)) = (args.algorithm, args.operation) else {
        anyhow::bail!("offload needs --alg and --op, or --mix");
    };
    if !alg.has_operation(op) {
        anyhow::bail!(
            "--op {}: {} has no such operation (it has: {})",
            op.cli_name(),
            alg.name(),
            Operation::ALL
                .iter()
                .filter(|o| alg.has_operation(**o))
                .map(|o| o.cli_name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Request::One(alg, op))
}

fn check_args(args: &OffloadArgs) -> anyhow::Result<Request> {
    if !(args.window.is_finite() && (0.05..=3600.0).contains(&args.window)) {
        anyhow::bail!(
            "invalid --window {}: seconds of arrivals per point, from 0.05 to 3600",
            args.window
        );
    }
    if let Some(d) = args.deadline {
        if !(d.is_finite() && (0.001..=604_800.0).contains(&d)) {
            anyhow::bail!(
                "invalid --deadline {d}: must be a number of seconds from 0.001 to 604800 (a week)"
            );
        }
    }
    if let (Some(d), false) = (args.device, gpu::is_gpu(&args.backend)) {
        anyhow::bail!(
            "invalid --device {d}: only the GPU backends ({} and {}) serve on a device, and --backend is {}",
            native_gpu::NAME,
            cupqc::BACKEND_NAME,
            args.backend
        );
    }
    if args.message_size > 64 * 1024 * 1024 {
        anyhow::bail!(
            "invalid --message-size {}: at most 67108864 bytes (64 MiB)",
            args.message_size
        );
    }
    request(args)
}

/// The run file being written, and the CSV of its points beside it,
/// saved after every point.
struct Saved {
    path: PathBuf,
    csv: PathBuf,
    run: RunFile,
}

impl Saved {
    fn save(&self) -> anyhow::Result<()> {
        crate::measure::signals::saving(&self.path, || {
            crate::write::output::write_json(&self.path, &self.run)
        })?;
        let o = self.run.offload.as_ref().expect("an offload run file");
        crate::measure::signals::saving(&self.csv, || {
            crate::write::output::write_atomic(
                &self.csv,
                crate::write::offload_csv::render(o).as_bytes(),
            )
        })
    }
    fn offload(&mut self) -> &mut OffloadRun {
        self.run.offload.as_mut().expect("an offload run file")
    }
}

/// The batching asked for: the largest batch a worker prepares, the fixed
/// policy (none with auto) and the queue limit.
struct Batching {
    top: usize,
    fixed: Option<Policy>,
    queue_limit: Option<usize>,
}

fn batching(args: &OffloadArgs) -> anyhow::Result<Batching> {
    let top = if args.load.max_batch.eq_ignore_ascii_case("auto") {
        args.batch_top as usize
    } else {
        4096
    };
    let fixed = args
        .load
        .policy(top, "the largest batch a worker prepares")
        .map_err(anyhow::Error::msg)?;
    let queue_limit = match fixed {
        Some(p) => queue_limit(args, p.max_batch, "--max-batch")?,
        None => queue_limit(args, top, "--batch-top, the largest batch auto may choose")?,
    };
    Ok(Batching {
        top: fixed.map_or(top, |p| p.max_batch),
        fixed,
        queue_limit,
    })
}

/// `pqcprof offload`.
pub fn run_offload(args: &OffloadArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let req = check_args(args)?;
    let rates = rates(args).map_err(anyhow::Error::msg)?;
    let b = batching(args)?;
    let deadline = args.deadline.map(|s| started + Duration::from_secs_f64(s));
    let out = crate::write::output::ensure_writable_dir(&args.out)?;
    let cfg = BatchConfig {
        batch: 1,
        threads: 1,
        message_size: args.message_size,
        context: vec![],
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
        },
        &cfg,
    )?;
    let top = b.top;
    let make = maker(&args.backend, req, cfg, top, &served_on.device, ordinal);
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
    let stopped = match rates {
        Rates::One(a) => ctx.point(&a, &mut saved).err(),
        Rates::Sweep { low, high } => ctx.sweep(low, high, &mut saved).err(),
    };
    finish(&mut saved, stopped)
}

/// What makes each worker: a backend opened on its own thread (on a GPU,
/// with a stream of its own), every batch size up to `top` prepared.
fn maker<'a>(
    backend: &'a str,
    req: Request,
    cfg: BatchConfig,
    top: usize,
    device: &Device,
    ordinal: usize,
) -> impl Fn(usize) -> anyhow::Result<Box<dyn Worker>> + Sync + 'a {
    let (ops, cpu_device) = (req.operations(), device.clone());
    move |_: usize| -> anyhow::Result<Box<dyn Worker>> {
        let opened: Box<dyn Backend> = if gpu::is_gpu(backend) {
            gpu::open(backend, &ops, ordinal, true)?.backend
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
    };
    let served_on = gpu::served_on(
        &Serving {
            backend,
            ops: &req.operations(),
            ordinal: 0,
            workers,
            top,
            fixed: false,
        },
        &cfg,
    )?;
    let make = maker(backend, req, cfg, top, &served_on.device, 0);
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

/// The run's closing figures saved, its table printed, and the exit code
/// that says how the points ended.
fn finish(saved: &mut Saved, stopped: Option<Stop>) -> anyhow::Result<i32> {
    let o = saved.offload();
    o.max_rate_under_slo = o
        .points
        .iter()
        .filter(|p| kept_up(p) && p.meets_slo == Some(true))
        .map(|p| p.offered_rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    o.stopped = stopped.as_ref().map(|s| s.to_string());
    saved.run.complete = true;
    saved.run.interrupted = matches!(stopped, Some(Stop::Interrupted));
    saved.save()?;
    let o = saved.run.offload.as_ref().expect("an offload run file");
    println!("{}", summary(o, &saved.path));
    Ok(match stopped {
        None => crate::core::exit::OK,
        Some(Stop::Deadline) => crate::core::exit::DEADLINE,
        Some(Stop::Interrupted) => crate::core::exit::INTERRUPTED,
        Some(Stop::Failed(_)) => crate::core::exit::SOME_FAILED,
    })
}

fn open_run_file(
    args: &OffloadArgs,
    req: Request,
    out: &Path,
    curve: &Curve,
    queue_limit: Option<usize>,
    predicted_top: Option<Point>,
    served_on: &ServedOn,
) -> anyhow::Result<Saved> {
    let config = RunConfig {
        command_line: std::env::args().collect(),
        runs: 1,
        warmup_runs: 1,
        batch: curve.max_batch(),
        threads: vec![args.threads as usize],
        message_bytes: args.message_size,
        context_hex: String::new(),
        sample_period_ms: 0.0,
        randomness: if args.backend == native_gpu::NAME {
            "native-gpu: every input generated on the host before timing (seeds, messages, rnd)"
                .into()
        } else if args.backend == cupqc::BACKEND_NAME {
            "cupqc: entropy generated on the host (ChaCha20 seeded by the OS) before timing".into()
        } else {
            "liboqs-cpu: liboqs's RNG inside each call (system randomness)".into()
        },
        backends: vec![args.backend.clone()],
        algorithms: req.operations().iter().map(|o| o.0).collect(),
        operations: req.operations().iter().map(|o| o.1).collect(),
        per_backend: vec![],
        batch_sweep: false,
    };
    let mut run = RunFile::new(system::collect(None), config);
    run.offload = Some(OffloadRun {
        backend: args.backend.clone(),
        algorithm: req.algorithm(),
        operation: req.operation(),
        mix: req.mix(),
        workers: args.threads as usize,
        device: served_on.device.name.clone(),
        device_ordinal: gpu::is_gpu(&args.backend).then_some(args.device.unwrap_or(0)),
        emulated: served_on.emulated,
        arrivals: match &args.trace {
            Some(t) => format!("trace {}", t.display()),
            None => format!("{}, seed {}", args.load.arrivals, args.load.seed),
        },
        window_seconds: args.window,
        curve_basis: curve.basis.into(),
        curve: curve.rows(),
        handoff: Some(curve.handoff),
        contended: curve.contended_rows(),
        slo: args
            .load
            .slo
            .as_ref()
            .map(|s| format!("{}={}ms", s.percentile, s.bound_ms)),
        queue_limit,
        points: vec![],
        max_rate_under_slo: None,
        predicted_max_rate_under_slo: predicted_top,
        stopped: None,
    });
    let (path, _) = crate::write::output::reserve(
        out,
        "run-",
        ".json",
        &crate::write::output::json_bytes(&run)?,
    )?;
    let csv = path.with_extension("csv");
    Ok(Saved { path, csv, run })
}

/// Why the points stopped early.
#[derive(Debug)]
enum Stop {
    Deadline,
    Interrupted,
    Failed(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Deadline => write!(f, "the deadline (--deadline): finished points are kept"),
            Stop::Interrupted => write!(
                f,
                "interrupted (Ctrl-C, SIGTERM or SIGHUP): finished points are kept"
            ),
            Stop::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

struct Ctx<'a> {
    args: &'a OffloadArgs,
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
            _ => ((a.rate() * self.args.window).ceil() as usize).max(2),
        };
        let times = a.times(count);
        let span = times.last().copied().unwrap_or(0.0);
        if let Some(d) = self.deadline {
            if Instant::now() + Duration::from_secs_f64(span) > d {
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
        let predicted = self.model().predict(a, policy, slo);
        let mut gate = w.gate_before;
        gate.checked_ops += w.gate_after.checked_ops;
        let p = Point {
            backend: self.args.backend.clone(),
            offered_rate: a.rate(),
            achieved_rate: batcher::achieved_rate(&w.served),
            max_batch: policy.max_batch,
            max_wait_ms: policy.max_wait * 1e3,
            waits: rec.waits(),
            dropped: w.dropped as u64,
            saturated: batcher::saturated(&w.served, policy.max_wait),
            requests: w.served.len(),
            not_served: 0,
            meets_slo: slo.map(|s| s.met_by(&rec)),
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
        let mut rate = low.unwrap_or(cap / 16.0);
        let high = high.unwrap_or(cap * 2.0);
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

fn point_line(p: &Point) -> String {
    let l = &p.waits.latency_ms;
    let u = rate_unit(p.mix.as_deref());
    format!(
        "offload: {}{u} offered, {}{u} served{}{}: p50 {:.3} ms, p99 {:.3} ms (predicted {}), batches up to {}",
        fmt_rate(p.offered_rate),
        fmt_rate(p.achieved_rate),
        if p.saturated { " (SATURATED)" } else { "" },
        dropped(p),
        l.p50,
        l.p99,
        p.predicted_latency_ms
            .map_or("-".into(), |q| format!("{:.3} ms", q.p99)),
        p.max_batch
    )
}

/// `, 12 dropped` when the queue limit dropped any.
fn dropped(p: &Point) -> String {
    if p.dropped > 0 {
        format!(
            ", {} dropped",
            crate::core::units::grouped(p.dropped as f64)
        )
    } else {
        String::new()
    }
}

/// The run's table, for the terminal.
fn summary(o: &OffloadRun, path: &Path) -> String {
    let u = rate_unit(o.mix.as_deref());
    let mix = o
        .mix
        .as_ref()
        .map_or(String::new(), |m| format!("mix {m}: "));
    let mut s = format!(
        "offload: {mix}{} {} {}, {} worker(s), {} ({} s of arrivals per point)\n",
        o.backend, o.algorithm, o.operation, o.workers, o.arrivals, o.window_seconds
    );
    for p in &o.points {
        s += &format!(
            "  {:>10}{u} offered  {:>10}{u} served{}{}  max-batch {} max-wait {} ms{}\n",
            fmt_rate(p.offered_rate),
            fmt_rate(p.achieved_rate),
            if p.saturated { "  SATURATED" } else { "" },
            dropped(p),
            p.max_batch,
            p.max_wait_ms,
            match p.meets_slo {
                Some(true) => "  objective met",
                Some(false) => "  objective missed",
                None => "",
            }
        );
        s += &percentiles("latency", &p.waits.latency_ms);
        if let Some(q) = &p.predicted_latency_ms {
            s += &percentiles("predicted", q);
        }
    }
    if let Some(slo) = &o.slo {
        s += &match o.max_rate_under_slo {
            Some(r) => format!("  highest rate measured with {slo}: {}{u}\n", fmt_rate(r)),
            None => format!("  no rate measured met {slo}\n"),
        };
        s += &match &o.predicted_max_rate_under_slo {
            Some(p) => format!(
                "  the planner's highest rate with {slo}: {}{u} (max-batch {}, max-wait {} ms, p99 {:.3} ms)\n",
                fmt_rate(p.offered_rate),
                p.max_batch,
                p.max_wait_ms,
                p.waits.latency_ms.p99
            ),
            None => format!("  the planner predicts no rate meets {slo}\n"),
        };
    }
    if let Some(why) = &o.stopped {
        s += &format!("  stopped: {why}\n");
    }
    s + &format!(
        "  run file: {}\n  points as CSV: {}",
        path.display(),
        path.with_extension("csv").display()
    )
}
