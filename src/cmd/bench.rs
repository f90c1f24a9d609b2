//! `pqcprof bench`, `cpu` and `gpu`: the options turned into a plan (which
//! backends on which devices, with which batches and samplers), the session
//! run, and the summary printed with the exit code.
//!
//! Longer than most files: it is one command's whole path, from options to
//! slots, plan, session and exit code, and each part is only used here.

use crate::backend::cupqc;
use crate::backend::liboqs::{self, LiboqsCpu};
use crate::backend::native_gpu::{self, NativeGpu};
use crate::cmd::check::{native_not_ready, verdicts};
use crate::cmd::cli::{BenchArgs, BenchOptions, DEFAULT_CPU_BATCH, DEFAULT_GPU_BATCH};
use crate::cmd::tables::{kernel_table, summary_table};
use crate::core::batching::BatchRequest;
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::core::exit;
use crate::measure::runner::MeasureConfig;
use crate::measure::session::{self, Plan, Slot};
use crate::monitor::host::HostSampler;
use crate::monitor::nvml::{NoSampler, NvmlSampler};
use crate::monitor::Sampler;
use crate::probe::gpu::{self, GpuProbe};
use crate::probe::system;
use crate::schema::device::{Device, DeviceKind};
use crate::schema::record::exit_for_failures;
use crate::schema::record::{Mode, RunConfig, Status};
use crate::schema::run_file::RunFile;
use anyhow::bail;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Host bytes one operation's buffers need in a CPU batch (inputs and outputs).
fn host_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    match (alg.kind(), op) {
        (_, Operation::KeyGen) => s.public_key_bytes + s.secret_key_bytes,
        (Kind::Kem, _) => 2 * (s.ciphertext_bytes.unwrap_or(0) + 32),
        (Kind::Signature, _) => s.signature_bytes.unwrap_or(0) + 16 + message / 1024,
    }
}

/// Refuses a CPU batch whose buffers would take more than half the RAM.
fn check_host_memory(opts: &BenchOptions, batch: usize, total_mb: u64) -> anyhow::Result<()> {
    let worst = opts
        .algorithms
        .iter()
        .flat_map(|&a| a.operations().into_iter().map(move |o| (a, o)))
        .filter(|(_, o)| opts.operations.is_empty() || opts.operations.contains(o))
        .map(|(a, o)| host_bytes_per_op(a, o, opts.message_size))
        .max()
        .unwrap_or(1);
    let budget = total_mb as u128 * 1024 * 1024 / 2;
    let need = worst as u128 * batch as u128;
    if need > budget {
        let fits = (budget / worst as u128) as usize;
        let option = match opts.batch {
            BatchRequest::Sweep(_) => "--batch-sweep",
            _ => "--batch",
        };
        bail!(
            "invalid {option} {batch}: its buffers need about {} MiB, more than half of this machine's {total_mb} MiB; at most {fits} fits",
            need / (1024 * 1024)
        );
    }
    Ok(())
}

/// Default sampler period on the host, milliseconds.
const HOST_PERIOD_MS: f64 = 10.0;
/// Default NVML sampler period, milliseconds.
const NVML_PERIOD_MS: f64 = 1.0;

fn want_backend(opts: &BenchOptions, name: &str) -> bool {
    opts.backends.is_empty() || opts.backends.iter().any(|b| b == name)
}

/// A GPU backend opened on `opts.device` with its sampler, ready to
/// measure, or why it cannot run.
fn gpu_slot(
    opened: Result<crate::measure::multi_device::Opened, String>,
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
fn largest_cpu_batch(req: &BatchRequest) -> usize {
    match req {
        BatchRequest::Default => DEFAULT_CPU_BATCH,
        BatchRequest::List(v) => v.iter().copied().max().unwrap_or(DEFAULT_CPU_BATCH),
        BatchRequest::Sweep(top) => top.unwrap_or(crate::core::batching::CPU_SWEEP_TOP),
    }
}

/// A sweep's named top must fit every operation on every ready backend
/// that knows its memory: otherwise a clean error naming the top and the
/// largest batch that fits, before anything is measured.
fn check_sweep_top(slots: &mut [Slot], opts: &BenchOptions) -> anyhow::Result<()> {
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
            v.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(",")
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
    open: Arc<crate::measure::multi_device::Opener>,
) -> Slot {
    if let Some(reason) = verdict_not_ready {
        return Slot::NotReady {
            name: name.into(),
            reason,
        };
    }
    Slot::MultiDevice(crate::measure::multi_device::MultiDevice {
        name: name.into(),
        ordinals: ordinals.to_vec(),
        batch,
        open,
    })
}

/// Opens our kernels on GPU `ordinal` with its sampler.
fn open_native(
    ordinal: usize,
    opts: &BenchOptions,
) -> Result<crate::measure::multi_device::Opened, String> {
    use crate::backend::native_gpu::kernels;
    let units = kernels::units_for(&opts.algorithms);
    let names: Vec<&str> = units.iter().map(|&u| kernels::unit_name(u)).collect();
    log::info!(
        "the native kernels ({}) for GPU {ordinal}: from the kernel cache, else compiled by NVRTC ...",
        names.join(", ")
    );
    let mut backend = NativeGpu::new_within(ordinal, &units, opts.compile_bound().as_ref())
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
fn open_cupqc(
    ordinal: usize,
    opts: &BenchOptions,
) -> Result<crate::measure::multi_device::Opened, String> {
    let backend =
        crate::backend::cupqc::device::Cupqc::new(ordinal).map_err(|e| format!("{e:#}"))?;
    let sampler = gpu_sampler(&backend.pci_bus_id.clone(), ordinal, opts);
    Ok((Box::new(backend), sampler))
}

/// Without the SDK built in, cuPQC opens nowhere.
#[cfg(not(pqcprof_cupqc))]
fn open_cupqc(_: usize, _: &BenchOptions) -> Result<crate::measure::multi_device::Opened, String> {
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
fn native_slot(gpu: &GpuProbe, opts: &BenchOptions) -> Slot {
    let not_ready = |reason: String| Slot::NotReady {
        name: native_gpu::NAME.into(),
        reason,
    };
    if let Some(reason) = native_not_ready(gpu) {
        return not_ready(reason);
    }
    if let Some(reason) = missing_device(gpu, opts.device) {
        return not_ready(reason);
    }
    gpu_slot(open_native(opts.device, opts), opts, not_ready)
}

/// The cuPQC backend with its NVML sampler, or why it cannot run.
fn cupqc_slot(gpu: &GpuProbe, opts: &BenchOptions) -> Slot {
    let not_ready = |reason: String| Slot::NotReady {
        name: cupqc::BACKEND_NAME.into(),
        reason,
    };
    let verdict = verdicts(gpu)
        .into_iter()
        .find(|v| v.backend == cupqc::BACKEND_NAME);
    if let Some(v) = verdict.filter(|v| !v.ready) {
        return not_ready(v.detail);
    }
    if let Some(reason) = missing_device(gpu, opts.device) {
        return not_ready(reason);
    }
    gpu_slot(open_cupqc(opts.device, opts), opts, not_ready)
}

/// `bench` (every backend asked for), `cpu` (`only` liboqs) and `gpu` (`only`
/// the GPU backends): measures, prints the summary, returns the exit code.
pub fn bench(args: &BenchArgs, only: Option<&[&str]>) -> anyhow::Result<i32> {
    // The deadline counts from here: opening the backends (NVRTC) included.
    let started = std::time::Instant::now();
    let mut opts = options(args, only)?;
    let out = crate::write::output::ensure_writable_dir(&opts.out)?;
    let host = system::host();
    let cpu_batch = match &opts.batch {
        BatchRequest::List(v) => v.first().copied().unwrap_or(DEFAULT_CPU_BATCH),
        _ => DEFAULT_CPU_BATCH,
    };
    if want_backend(&opts, liboqs::NAME) {
        check_host_memory(&opts, largest_cpu_batch(&opts.batch), host.memory_total_mb)?;
    }

    // A CPU-only run never loads a GPU library: a broken or hung driver on
    // the loader path cannot stop it.
    let wants_gpu =
        want_backend(&opts, native_gpu::NAME) || want_backend(&opts, cupqc::BACKEND_NAME);
    let gpu = if wants_gpu {
        gpu::probe()
    } else {
        log::debug!("no GPU backend asked for: the GPU libraries are not loaded");
        gpu::not_probed()
    };
    let meta = system::collect(wants_gpu.then_some(&gpu));
    let ordinals = if wants_gpu {
        let listed: Vec<usize> = gpu.gpus.iter().map(|g| g.ordinal).collect();
        opts.devices.resolve(&listed)?
    } else {
        vec![]
    };
    if let [one] = ordinals.as_slice() {
        opts.device = *one;
    }
    let mut slots = slots(&opts, &gpu, &host, &ordinals)?;
    log_slots(&slots);
    check_sweep_top(&mut slots, &opts)?;
    let config = run_config(args, &opts, cpu_batch, backend_settings(&slots, &opts));
    let mut plan = plan(args, &opts, slots, cpu_batch)?;
    plan.measure.timing.deadline = opts
        .deadline_s
        .map(|s| (started + std::time::Duration::from_secs_f64(s), s));
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    let outcome = session::run(plan, RunFile::new(meta, config), &out, &cancel)?;
    Ok(conclude(&outcome, &opts, only, &out))
}

/// Says, as debug lines, what each backend asked for will do.
fn log_slots(slots: &[Slot]) {
    for slot in slots {
        match slot {
            Slot::Ready {
                backend,
                threads,
                batches,
                ..
            } => log::debug!(
                "backend {}: ready on {}, threads {threads:?}, batches {}",
                backend.name(),
                backend.device().name,
                batches.describe(backend.calibrates_default_batch())
            ),
            Slot::MultiDevice(m) => log::debug!(
                "backend {}: on GPUs {:?} at once, batch {} each",
                m.name,
                m.ordinals,
                m.batch
            ),
            Slot::NotReady { name, reason } => {
                log::debug!("backend {name}: not ready: {reason}")
            }
        }
    }
}

/// The validated options, with `cpu`'s and `gpu`'s backends filled in.
fn options(args: &BenchArgs, only: Option<&[&str]>) -> anyhow::Result<BenchOptions> {
    let mut opts = args.validate()?;
    if let Some(names) = only {
        if opts.backends.iter().any(|b| !names.contains(&b.as_str())) {
            bail!(
                "this command runs only {}; use `pqcprof bench --backend ...` for others",
                names.join(", ")
            );
        }
        if opts.backends.is_empty() {
            opts.backends = names.iter().map(|n| n.to_string()).collect();
        }
    }
    let cpu_only = opts.backends.iter().all(|b| b == liboqs::NAME) && !opts.backends.is_empty();
    if opts.cold_cache && cpu_only {
        bail!("invalid --cache cold: only GPU backends flush their L2 between runs, and this command runs liboqs-cpu only; use `pqcprof gpu` or `pqcprof bench`");
    }
    if let Some(d) = &args.device {
        if cpu_only {
            bail!("invalid --device {d}: only GPU backends use a device, and this command runs liboqs-cpu only; use `pqcprof gpu` or `pqcprof bench`");
        }
    }
    Ok(opts)
}

/// One slot per backend asked for: ready (with its sampler and batches),
/// several devices at once, or not ready with the reason.
fn slots(
    opts: &BenchOptions,
    gpu: &GpuProbe,
    host: &system::Host,
    ordinals: &[usize],
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
    if ordinals.len() > 1 {
        let batch = multi_device_batch(&opts.batch)?;
        let cupqc_not_ready = verdicts(gpu)
            .into_iter()
            .find(|v| v.backend == cupqc::BACKEND_NAME && !v.ready)
            .map(|v| v.detail);
        let o = opts.clone();
        if want(native_gpu::NAME) {
            let open = Arc::new(move |d| open_native(d, &o));
            let not_ready = native_not_ready(gpu);
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
            slots.push(native_slot(gpu, opts));
        }
        if want(cupqc::BACKEND_NAME) {
            slots.push(cupqc_slot(gpu, opts));
        }
    }
    if opts.backends.is_empty()
        && !verdicts(gpu)
            .iter()
            .any(|v| v.ready && v.backend != liboqs::NAME)
    {
        log::warn!(
            "no GPU backend is ready here (see `pqcprof check`); measuring the CPU baselines only"
        );
    }
    Ok(slots)
}

/// What each ready backend runs with, for the run file's `config`.
fn backend_settings(
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

/// The run file's `config`: the settings the whole run was made with.
fn run_config(
    args: &BenchArgs,
    opts: &BenchOptions,
    cpu_batch: usize,
    per_backend: Vec<crate::schema::record::BackendSettings>,
) -> RunConfig {
    RunConfig {
        command_line: std::env::args().collect(),
        runs: opts.runs,
        // One warm-up always runs before the gate (a fresh child runs none:
        // its parent warmed up and passed the gate).
        warmup_runs: if args.fresh_child {
            0
        } else {
            opts.warmup.max(1)
        },
        batch: cpu_batch,
        threads: opts.threads.clone(),
        message_bytes: opts.message_size,
        context_hex: args.context.to_ascii_lowercase(),
        sample_period_ms: opts.sample_period_ms.unwrap_or(HOST_PERIOD_MS),
        randomness: "liboqs-cpu: liboqs's RNG inside each call (system randomness), as its speed tools; native-gpu: seeds, m and rnd from ChaCha20 seeded by the OS, generated before timing; cupqc: entropy from ChaCha20 seeded by the OS, generated on the host and copied to the GPU before timing".into(),
        backends: opts.backends.clone(),
        algorithms: opts.algorithms.clone(),
        operations: opts.operations.clone(),
        per_backend,
        batch_sweep: matches!(opts.batch, BatchRequest::Sweep(_)),
    }
}

/// The session's plan: the slots, what to measure, and how (in process,
/// or each timed run in a fresh process).
fn plan(
    args: &BenchArgs,
    opts: &BenchOptions,
    slots: Vec<Slot>,
    cpu_batch: usize,
) -> anyhow::Result<Plan> {
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
        method: if args.fresh_child {
            session::Method::FreshChild
        } else if args.fresh_process {
            session::Method::FreshParent(crate::measure::fresh_process::FreshChild {
                exe: std::env::current_exe()?,
                device: opts.device,
                context_hex: args.context.clone(),
                latency: opts.latency,
                sample_period_ms: opts.sample_period_ms,
                kernel: opts.kernel.map(|v| v.name()),
            })
        } else {
            session::Method::InProcess
        },
    })
}

/// Prints the summary and where the files are; returns the exit code.
fn conclude(
    outcome: &session::Outcome,
    opts: &BenchOptions,
    only: Option<&[&str]>,
    out: &std::path::Path,
) -> i32 {
    print!("{}", summary_table(&outcome.run));
    if let Some(t) = kernel_table(&outcome.run.records) {
        print!("\n{t}");
    }
    println!("Run file: {}", outcome.run_file.display());
    let measured = outcome
        .run
        .records
        .iter()
        .filter(|r| r.status == Status::Ok)
        .count();
    let emulated = outcome.run.records.iter().any(|r| r.emulated);
    if emulated {
        println!("GPU records were made on pqcprof's CPU stand-in driver (emulated, not a GPU): they prove correctness only, their timings mean nothing, and they are kept out of the cuPQC-shaped files");
    }
    if outcome
        .run
        .records
        .iter()
        .any(|r| r.status == Status::Ok && !r.emulated)
    {
        println!(
            "cuPQC-shaped files: {}/<backend>/ml{{kem,dsa}}_results.json (a GPU backend's also at {0}/ml{{kem,dsa}}_results.json and {0}/latency/, as cuPQC_benchmark writes them)",
            out.display()
        );
    }
    if outcome.interrupted {
        log::warn!(
            "interrupted; finished records are in {}",
            outcome.run_file.display()
        );
        return exit::INTERRUPTED;
    }
    // A failed gate is exit 3 whatever else happened: "not ready" is only
    // for a run where nothing failed and nothing was measured.
    let code = exit_for_failures(&outcome.run.records);
    let cut: Vec<&crate::schema::record::Record> = outcome
        .run
        .records
        .iter()
        .filter(|r| r.cut.is_some())
        .collect();
    for r in &cut {
        log::warn!(
            "{} {} {} batch {}: {}",
            r.backend,
            r.algorithm,
            r.operation,
            r.batch,
            r.cut.as_deref().unwrap_or("")
        );
    }
    let by_deadline = outcome.deadline_reached
        || cut
            .iter()
            .any(|r| r.cut.as_deref().is_some_and(|c| c.contains("--deadline")));
    // Kernels not compiled within --deadline or --max-seconds: their
    // records are skipped with the reason, and the command was cut.
    let not_compiled = outcome.run.records.iter().any(|r| {
        r.status == Status::Skipped
            && r.reason
                .as_deref()
                .is_some_and(|c| c.contains(native_gpu::kernel_cache::NOT_IN_TIME))
    });
    if code == exit::OK && (by_deadline || not_compiled) {
        return exit::DEADLINE;
    }
    if code == exit::OK && measured == 0 && (only.is_some() || !opts.backends.is_empty()) {
        log::error!(
            "nothing was measured: the backends asked for are not ready (see `pqcprof check`)"
        );
        return exit::NOT_READY;
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_batches_are_refused_with_the_limit() {
        let o = BenchOptions {
            algorithms: vec![Algorithm::MlDsa87],
            operations: vec![],
            backends: vec![],
            batch: BatchRequest::Default,
            runs: 1,
            until_noise: None,
            warmup: 1,
            threads: vec![1],
            message_size: 1024,
            context: vec![],
            device: 0,
            devices: crate::cmd::cli::DeviceSelection::One(0),
            sample_period_ms: None,
            latency: false,
            cold_cache: false,
            kernel: None,
            max_seconds: None,
            deadline_s: None,
            launch_target_s: 0.1,
            out: "x".into(),
            started: std::time::Instant::now(),
        };
        assert!(check_host_memory(&o, 1000, 1024).is_ok());
        let e = check_host_memory(&o, 10_000_000, 1024)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--batch 10000000") && e.contains("at most"),
            "{e}"
        );
    }
}
