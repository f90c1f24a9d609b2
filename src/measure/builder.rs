//! The plan builder: a measuring command's validated settings turned into
//! the session's [`Plan`]: which backends run on which devices (each
//! opened and prepared here: the native kernels loaded or compiled within
//! the command's time, their variant and cache mode set), with which
//! batches and samplers, and how each timed run is made.

use crate::backend::cupqc;
use crate::backend::liboqs::{self, LiboqsCpu};
use crate::backend::native_gpu::{self, NativeGpu};
use crate::core::batching::BatchRequest;
use crate::core::catalog::{Algorithm, Operation};
use crate::measure::multi_device::{MultiDevice, Opened, Opener};
use crate::measure::plan::{self as session, Method, Plan, Slot};
use crate::measure::runner::MeasureConfig;
use crate::monitor::host::HostSampler;
use crate::monitor::nvml::{NoSampler, NvmlSampler};
use crate::monitor::Sampler;
use crate::probe::gpu::GpuProbe;
use crate::probe::system;
use crate::schema::device::{Device, DeviceKind};
use crate::schema::record::Mode;
use anyhow::bail;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Default CPU batch.
pub const DEFAULT_CPU_BATCH: usize = 1000;
/// Default GPU batch, as cuPQC_benchmark.
pub const DEFAULT_GPU_BATCH: usize = 100_000;

/// Validated settings of a measuring command.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// Algorithms, in report order.
    pub algorithms: Vec<Algorithm>,
    /// Operation filter (empty: all).
    pub operations: Vec<Operation>,
    /// Backends asked for by name (empty: every ready one).
    pub backends: Vec<String>,
    /// Batches asked for on the command line.
    pub batch: crate::core::batching::BatchRequest,
    /// Timed runs; with `--runs auto`, the most (`--max-runs`).
    pub runs: usize,
    /// `--runs auto`: the noise target as a fraction (`--max-noise` / 100);
    /// `None` for a fixed number of runs.
    pub until_noise: Option<f64>,
    /// Warm-up runs.
    pub warmup: usize,
    /// CPU thread counts.
    pub threads: Vec<usize>,
    /// Message bytes.
    pub message_size: usize,
    /// Context bytes.
    pub context: Vec<u8>,
    /// CUDA device ordinal (the first of `devices`; 0 for `all`).
    pub device: usize,
    /// Every device asked for.
    pub devices: DeviceSelection,
    /// Sampler period, ms, if given.
    pub sample_period_ms: Option<f64>,
    /// Latency mode.
    pub latency: bool,
    /// `--cache cold`: L2 flushed before each timed GPU run.
    pub cold_cache: bool,
    /// The native GPU kernel variant asked for (`--kernel`).
    pub kernel: Option<crate::backend::native_gpu::sizing::Variant>,
    /// Seconds per record, if limited.
    pub max_seconds: Option<f64>,
    /// Seconds for the whole command, if limited.
    pub deadline_s: Option<f64>,
    /// Launch time a calibrated GPU batch aims at, seconds.
    pub launch_target_s: f64,
    /// Output folder.
    pub out: PathBuf,
    /// When the options were read: `--deadline` and `--max-seconds` bound
    /// the kernels' compile from here.
    pub started: std::time::Instant,
    /// `--context` as given (hex), for the run file and fresh processes.
    pub context_hex: String,
    /// `--fresh-process`: each timed run in a new process.
    pub fresh_process: bool,
    /// Internal (`--fresh-child`): this process is one such run.
    pub fresh_child: bool,
    /// What the correctness gate checks of every run (`--gate`), and the
    /// seed of its samples.
    pub gate: crate::backend::gate::GateSettings,
}

/// The GPUs `--device` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelection {
    /// One ordinal: the single-device path, as before lists existed.
    One(usize),
    /// Several ordinals, in the order given, no repeats.
    List(Vec<usize>),
    /// Every GPU the driver lists.
    All,
}

impl DeviceSelection {
    /// The ordinals to run on, given those the driver lists. With no GPU
    /// listed (no driver, no device) the ordinals asked for are returned
    /// as they are: the GPU backends are then not ready, a normal state.
    /// An ordinal the driver does not list is an error naming the valid ones.
    pub fn resolve(&self, listed: &[usize]) -> anyhow::Result<Vec<usize>> {
        let asked = match self {
            DeviceSelection::All => return Ok(listed.to_vec()),
            DeviceSelection::One(n) => vec![*n],
            DeviceSelection::List(l) => l.clone(),
        };
        if listed.is_empty() {
            return Ok(asked);
        }
        if let Some(bad) = asked.iter().find(|n| !listed.contains(n)) {
            let valid = listed
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            bail!(
                "invalid --device {bad}: the driver lists {} GPU(s), ordinals {valid}; use one of them, a list of them or `all`",
                listed.len()
            );
        }
        Ok(asked)
    }
}

/// Whether the GPU backends can run here (what `pqcprof check` says of
/// them), for the slots of a plan.
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    /// Why the native backend cannot run, if it cannot.
    pub native: Option<String>,
    /// Why cuPQC cannot run, if it cannot.
    pub cupqc: Option<String>,
    /// Whether any GPU backend is ready.
    pub any_gpu: bool,
}

/// Default sampler period on the host, milliseconds.
pub const HOST_PERIOD_MS: f64 = 10.0;
/// Default NVML sampler period, milliseconds.
pub const NVML_PERIOD_MS: f64 = 1.0;

/// Whether `name` is among the backends asked for (all when none is named).
pub fn want_backend(opts: &BenchOptions, name: &str) -> bool {
    opts.backends.is_empty() || opts.backends.iter().any(|b| b == name)
}

/// A GPU backend opened on `opts.device` with its sampler, ready to
/// measure, or why it cannot run.
fn gpu_slot(
    opened: Result<Opened, String>,
    opts: &BenchOptions,
    not_ready: impl Fn(String) -> Slot,
) -> Slot {
    match opened {
        Ok((backend, sampler)) => Slot::Ready {
            backend,
            sampler,
            threads: vec![1],
            batches: slot_batches(
                &opts.batch,
                DEFAULT_GPU_BATCH,
                crate::core::batching::MAX_BATCH,
            ),
        },
        Err(reason) => not_ready(reason),
    }
}

/// The NVML sampler of GPU `ordinal` (or, when NVML is missing, a sampler
/// that records nothing and says why).
fn gpu_sampler(pci_bus_id: &str, ordinal: usize, opts: &BenchOptions) -> Box<dyn Sampler> {
    let period = Duration::from_secs_f64(opts.sample_period_ms.unwrap_or(NVML_PERIOD_MS) / 1000.0);
    match NvmlSampler::new(pci_bus_id, ordinal, period) {
        Ok(s) => Box::new(s),
        Err(e) => {
            log::warn!("{e:#}; GPU memory, utilisation and power will not be recorded");
            Box::new(NoSampler(format!("{e:#}")))
        }
    }
}

/// The batches a slot measures, given what was asked for, the backend's
/// default batch and the top of a sweep when neither the user nor the
/// backend names one.
fn slot_batches(req: &BatchRequest, default: usize, fallback_top: usize) -> session::Batches {
    match req {
        BatchRequest::Default => session::Batches::Default(default),
        BatchRequest::List(v) => session::Batches::List(v.clone()),
        BatchRequest::Sweep(top) => session::Batches::Sweep {
            top: *top,
            fallback_top,
        },
    }
}

/// The largest batch a CPU run of `req` measures (what must fit in RAM).
pub fn largest_cpu_batch(req: &BatchRequest) -> usize {
    match req {
        BatchRequest::Default => DEFAULT_CPU_BATCH,
        BatchRequest::List(v) => v.iter().copied().max().unwrap_or(DEFAULT_CPU_BATCH),
        BatchRequest::Sweep(top) => top.unwrap_or(crate::core::batching::CPU_SWEEP_TOP),
    }
}

/// A sweep's named top must fit every operation on every ready backend
/// that knows its memory: otherwise a clean error naming the top and the
/// largest batch that fits, before anything is measured.
pub fn check_sweep_top(slots: &mut [Slot], opts: &BenchOptions) -> anyhow::Result<()> {
    let BatchRequest::Sweep(Some(top)) = opts.batch else {
        return Ok(());
    };
    for slot in slots.iter_mut() {
        let Slot::Ready { backend, .. } = slot else {
            continue;
        };
        for &alg in &opts.algorithms {
            for op in alg.operations() {
                if !(opts.operations.is_empty() || opts.operations.contains(&op)) {
                    continue;
                }
                let cfg = crate::backend::BatchConfig {
                    batch: top,
                    threads: 1,
                    message_size: opts.message_size,
                    context: opts.context.clone(),
                    gate: opts.gate,
                };
                if let Some(fits) = backend.max_batch(alg, op, &cfg).filter(|f| *f < top) {
                    bail!(
                        "invalid --batch-sweep {top}: the top batch does not fit: {alg} {op} on {} ({}) fits at most {fits} (use --batch-sweep {fits} or less, or --batch-sweep alone for what fits)",
                        backend.name(),
                        backend.device().name
                    );
                }
            }
        }
    }
    Ok(())
}

/// The one batch every device of a several-device run measures: the
/// devices' timed runs start together, batch by batch, so a list or a
/// sweep (whose batches each device would resolve on its own) is refused.
fn multi_device_batch(req: &BatchRequest) -> anyhow::Result<usize> {
    match req {
        BatchRequest::Default => Ok(DEFAULT_GPU_BATCH),
        BatchRequest::List(v) if v.len() == 1 => Ok(v[0]),
        BatchRequest::List(v) => bail!(
            "invalid --batch {} with several devices: a run over several GPUs measures one batch size (--batch N); run batch lists on one --device",
            crate::core::listing::few(
                "the batch sizes given",
                &v.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
                crate::core::listing::SHOWN,
                ","
            )
        ),
        BatchRequest::Sweep(_) => bail!(
            "invalid --batch-sweep with several devices: a run over several GPUs measures one batch size (--batch N); run a batch sweep on one --device"
        ),
    }
}

/// A GPU backend on several devices at once (`--device all`, `0,2,3`),
/// or why it cannot run; `open` opens one device in its own thread.
fn multi_slot(
    name: &str,
    verdict_not_ready: Option<String>,
    ordinals: &[usize],
    batch: usize,
    open: Arc<Opener>,
) -> Slot {
    if let Some(reason) = verdict_not_ready {
        return Slot::NotReady {
            name: name.into(),
            reason,
        };
    }
    Slot::MultiDevice(MultiDevice {
        name: name.into(),
        ordinals: ordinals.to_vec(),
        batch,
        open,
    })
}

/// Opens our kernels on GPU `ordinal` with its sampler.
fn open_native(ordinal: usize, opts: &BenchOptions) -> Result<Opened, String> {
    use crate::backend::native_gpu::kernels;
    let units = kernels::units_for(&opts.algorithms);
    let names: Vec<&str> = units.iter().map(|&u| kernels::unit_name(u)).collect();
    log::info!(
        "the native kernels ({}) for GPU {ordinal}: from the kernel cache, else compiled by NVRTC ...",
        names.join(", ")
    );
    let mut backend = NativeGpu::new_within(
        ordinal,
        &units,
        crate::measure::budget::compile_bound(opts.started, opts.deadline_s, opts.max_seconds)
            .as_ref(),
    )
    .map_err(|e| format!("{e:#}"))?;
    backend.set_variant(opts.kernel);
    backend.set_cold_cache(opts.cold_cache);
    for u in &backend.units {
        let name = kernels::unit_name(u.unit);
        match &u.origin {
            native_gpu::kernel_cache::Origin::Compiled => log::info!(
                "{name} kernels compiled for {} in {:.1} s; loaded: {}",
                backend.arch,
                u.compile_seconds,
                u.image
            ),
            native_gpu::kernel_cache::Origin::Prebuilt(p, _)
            | native_gpu::kernel_cache::Origin::Cache(p) => log::info!(
                "{name} kernels for {} read from the cache {}; loaded: {}",
                backend.arch,
                p.display(),
                u.image
            ),
        }
    }
    let sampler = gpu_sampler(&backend.pci_bus_id.clone(), ordinal, opts);
    Ok((Box::new(backend), sampler))
}

/// Opens cuPQC on GPU `ordinal` with its sampler.
#[cfg(pqcprof_cupqc)]
fn open_cupqc(ordinal: usize, opts: &BenchOptions) -> Result<Opened, String> {
    let backend =
        crate::backend::cupqc::device::Cupqc::new(ordinal).map_err(|e| format!("{e:#}"))?;
    let sampler = gpu_sampler(&backend.pci_bus_id.clone(), ordinal, opts);
    Ok((Box::new(backend), sampler))
}

/// Without the SDK built in, cuPQC opens nowhere.
#[cfg(not(pqcprof_cupqc))]
fn open_cupqc(_: usize, _: &BenchOptions) -> Result<Opened, String> {
    Err(format!(
        "the cuPQC backend is not part of this build; to enable it: {}",
        cupqc::HOW_TO_ENABLE
    ))
}

/// Why GPU `device` cannot be used when the driver does not list it.
fn missing_device(gpu: &GpuProbe, device: usize) -> Option<String> {
    (!gpu.gpus.iter().any(|g| g.ordinal == device)).then(|| {
        format!(
            "no GPU with ordinal {device} (the driver lists {})",
            gpu.gpus.len()
        )
    })
}

/// The native GPU backend with its NVML sampler, or why it cannot run.
fn native_slot(gpu: &GpuProbe, opts: &BenchOptions, ready: &Readiness) -> Slot {
    let not_ready = |reason: String| Slot::NotReady {
        name: native_gpu::NAME.into(),
        reason,
    };
    if let Some(reason) = ready.native.clone() {
        return not_ready(reason);
    }
    if let Some(reason) = missing_device(gpu, opts.device) {
        return not_ready(reason);
    }
    gpu_slot(open_native(opts.device, opts), opts, not_ready)
}

/// The cuPQC backend with its NVML sampler, or why it cannot run.
fn cupqc_slot(gpu: &GpuProbe, opts: &BenchOptions, ready: &Readiness) -> Slot {
    let not_ready = |reason: String| Slot::NotReady {
        name: cupqc::BACKEND_NAME.into(),
        reason,
    };
    if let Some(reason) = ready.cupqc.clone() {
        return not_ready(reason);
    }
    if let Some(reason) = missing_device(gpu, opts.device) {
        return not_ready(reason);
    }
    gpu_slot(open_cupqc(opts.device, opts), opts, not_ready)
}

/// A plugin (`--backend plugin:PATH`) loaded in its worker process, on
/// the host's thread counts when it is thread-safe (else one thread), or,
/// refused, a backend whose every record fails with the reason.
fn plugin_slot(path: &std::path::Path, opts: &BenchOptions, host: &system::Host) -> Slot {
    let device = Device {
        kind: DeviceKind::Cpu,
        name: host.cpu.clone(),
        memory_total_mb: host.memory_total_mb,
    };
    let deadline = opts
        .deadline_s
        .map(|s| opts.started + Duration::from_secs_f64(s));
    use crate::backend::plugin::isolated::{PluginBackend, RefusedPlugin};
    let host_sampler = || {
        Box::new(HostSampler::new(
            Duration::from_secs_f64(opts.sample_period_ms.unwrap_or(HOST_PERIOD_MS) / 1000.0),
            host.cores_logical,
        )) as Box<dyn Sampler>
    };
    let cpu_batches = || {
        slot_batches(
            &opts.batch,
            DEFAULT_CPU_BATCH,
            crate::core::batching::CPU_SWEEP_TOP,
        )
    };
    match PluginBackend::open(path, device.clone(), opts.device, deadline) {
        // A device plugin: the GPU's NVML sampler and a GPU's batches.
        Ok(backend) => match backend.gpu.clone() {
            Some(g) => Slot::Ready {
                sampler: gpu_sampler(&g.pci_bus_id, g.ordinal, opts),
                threads: vec![1],
                batches: slot_batches(
                    &opts.batch,
                    DEFAULT_GPU_BATCH,
                    crate::core::batching::MAX_BATCH,
                ),
                backend: Box::new(backend),
            },
            None => Slot::Ready {
                threads: if backend.info.thread_safe {
                    opts.threads.clone()
                } else {
                    vec![1]
                },
                // Its memory and utilisation are its worker process's.
                sampler: Box::new(HostSampler::of_worker(
                    Duration::from_secs_f64(
                        opts.sample_period_ms.unwrap_or(HOST_PERIOD_MS) / 1000.0,
                    ),
                    host.cores_logical,
                    backend.worker_process(),
                )),
                backend: Box::new(backend),
                batches: cpu_batches(),
            },
        },
        Err(e) => {
            log::error!("{e:#}");
            Slot::Ready {
                backend: Box::new(RefusedPlugin::new(path, format!("{e:#}"), device)),
                sampler: host_sampler(),
                threads: vec![1],
                batches: cpu_batches(),
            }
        }
    }
}

/// One slot per backend asked for: ready (with its sampler and batches),
/// several devices at once, or not ready with the reason. `ordinals` are
/// the GPUs to run on (resolved against the driver's list), `ready` what
/// `check` says of the GPU backends.
pub fn slots(
    opts: &BenchOptions,
    gpu: &GpuProbe,
    host: &system::Host,
    ordinals: &[usize],
    ready: &Readiness,
) -> anyhow::Result<Vec<Slot>> {
    let want = |name: &str| want_backend(opts, name);
    let mut slots = vec![];
    if want(liboqs::NAME) {
        let device = Device {
            kind: DeviceKind::Cpu,
            name: host.cpu.clone(),
            memory_total_mb: host.memory_total_mb,
        };
        slots.push(Slot::Ready {
            backend: Box::new(LiboqsCpu::new(device)),
            sampler: Box::new(HostSampler::new(
                Duration::from_secs_f64(opts.sample_period_ms.unwrap_or(HOST_PERIOD_MS) / 1000.0),
                host.cores_logical,
            )),
            threads: opts.threads.clone(),
            batches: slot_batches(
                &opts.batch,
                DEFAULT_CPU_BATCH,
                crate::core::batching::CPU_SWEEP_TOP,
            ),
        });
    }
    for path in crate::backend::plugin::paths(&opts.backends) {
        slots.push(plugin_slot(&path, opts, host));
    }
    if ordinals.len() > 1 {
        let batch = multi_device_batch(&opts.batch)?;
        let cupqc_not_ready = ready.cupqc.clone();
        let o = opts.clone();
        if want(native_gpu::NAME) {
            let open = Arc::new(move |d| open_native(d, &o));
            let not_ready = ready.native.clone();
            slots.push(multi_slot(
                native_gpu::NAME,
                not_ready,
                ordinals,
                batch,
                open,
            ));
        }
        let o = opts.clone();
        if want(cupqc::BACKEND_NAME) {
            let open = Arc::new(move |d| open_cupqc(d, &o));
            slots.push(multi_slot(
                cupqc::BACKEND_NAME,
                cupqc_not_ready,
                ordinals,
                batch,
                open,
            ));
        }
    } else {
        if want(native_gpu::NAME) {
            slots.push(native_slot(gpu, opts, ready));
        }
        if want(cupqc::BACKEND_NAME) {
            slots.push(cupqc_slot(gpu, opts, ready));
        }
    }
    if opts.backends.is_empty() && !ready.any_gpu {
        log::warn!(
            "no GPU backend is ready here (see `pqcprof check`); measuring the CPU baselines only"
        );
    }
    Ok(slots)
}

/// What each ready backend runs with, for the run file's `config`.
pub fn backend_settings(
    slots: &[Slot],
    opts: &BenchOptions,
) -> Vec<crate::schema::record::BackendSettings> {
    slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Ready {
                backend, batches, ..
            } => Some(crate::schema::record::BackendSettings {
                backend: backend.name().to_string(),
                batches: batches.describe(backend.calibrates_default_batch()),
                sample_period_ms: opts
                    .sample_period_ms
                    .unwrap_or(match backend.device().kind {
                        DeviceKind::Cpu => HOST_PERIOD_MS,
                        DeviceKind::Gpu => NVML_PERIOD_MS,
                    }),
            }),
            Slot::MultiDevice(m) => Some(crate::schema::record::BackendSettings {
                backend: m.name.clone(),
                batches: format!("{} on each of GPUs {:?}", m.batch, m.ordinals),
                sample_period_ms: opts.sample_period_ms.unwrap_or(NVML_PERIOD_MS),
            }),
            Slot::NotReady { .. } => None,
        })
        .collect()
}

/// The session's plan: the slots, what to measure, and how (in process,
/// or each timed run in a fresh process).
pub fn plan(opts: &BenchOptions, slots: Vec<Slot>, cpu_batch: usize) -> anyhow::Result<Plan> {
    let mode = if opts.latency {
        Mode::Latency
    } else {
        Mode::Throughput
    };
    Ok(Plan {
        slots,
        algorithms: opts.algorithms.clone(),
        operations: opts.operations.clone(),
        measure: MeasureConfig {
            batch: crate::backend::BatchConfig {
                batch: cpu_batch,
                threads: 1,
                message_size: opts.message_size,
                context: opts.context.clone(),
                gate: opts.gate,
            },
            runs: opts.runs,
            warmup_runs: opts.warmup,
            mode,
            timing: crate::measure::runner::Timing {
                max_seconds: opts.max_seconds,
                launch_target_s: opts.launch_target_s,
                until_noise: opts.until_noise,
                ..Default::default()
            },
        },
        method: if opts.fresh_child {
            Method::FreshChild
        } else if opts.fresh_process {
            Method::FreshParent(crate::measure::fresh_process::FreshChild {
                exe: std::env::current_exe()?,
                device: opts.device,
                context_hex: opts.context_hex.clone(),
                latency: opts.latency,
                sample_period_ms: opts.sample_period_ms,
                kernel: opts.kernel.map(|v| v.name()),
            })
        } else {
            Method::InProcess
        },
    })
}
