//! The commands: what `main` runs once the command line is parsed.

pub mod cli;

use crate::backend::cupqc;
use crate::backend::liboqs::{self, LiboqsCpu};
use crate::backend::native_gpu::{self, NativeGpu};
use crate::cmd::cli::{
    BenchArgs, BenchOptions, CheckArgs, Cli, Command, DEFAULT_CPU_BATCH, DEFAULT_GPU_BATCH,
};
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
use crate::schema::record::{Mode, RunConfig, Status};
use crate::schema::run_file::RunFile;
use anyhow::bail;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Runs the parsed command; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Check(a) => check(&a),
        Command::Bench(a) => bench(&a, None),
        Command::Cpu(a) => bench(&a, Some(&[liboqs::NAME])),
        Command::Gpu(a) => bench(&a, Some(&[native_gpu::NAME, cupqc::BACKEND_NAME])),
        Command::Sweep(a) => crate::sweep::run_sweep(&a),
        Command::Sizes(a) => crate::sweep::run_sizes(&a),
        Command::Report(a) => crate::report::run_report(&a),
        Command::Compare(a) => crate::report::run_compare(&a),
        Command::Merge(a) => crate::cluster::merge::run_merge(&a),
        Command::Kernels(a) => kernels(&a),
    }
}

/// One architecture's part of `pqcprof kernels --json`.
#[derive(Serialize)]
struct ArchResources {
    arch: String,
    nvrtc: String,
    threads_per_block: u32,
    kernels: Vec<KernelRow>,
}

#[derive(Serialize)]
struct KernelRow {
    #[serde(flatten)]
    resources: crate::backend::native_gpu::resources::KernelResources,
    resident_blocks_per_sm: u32,
    occupancy_pct: f64,
}

/// `pqcprof kernels`: the static cost of every native kernel.
fn kernels(a: &crate::cmd::cli::KernelsArgs) -> anyhow::Result<i32> {
    use crate::backend::native_gpu::resources;
    let Some(nvrtc) = crate::backend::native_gpu::kernels::nvrtc_label() else {
        anyhow::bail!(
            "NVRTC is needed to compile the kernels and was not found (install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc` and add its lib folder to LD_LIBRARY_PATH)"
        );
    };
    let archs: Vec<&'static str> = if a.arch.iter().any(|x| x == "all") {
        resources::SM_LIMITS.iter().map(|l| l.arch).collect()
    } else {
        resources::SM_LIMITS
            .iter()
            .map(|l| l.arch)
            .filter(|x| a.arch.iter().any(|y| y == x))
            .collect()
    };
    let tpb = a.threads_per_block.unwrap_or(native_gpu::THREADS_PER_BLOCK);
    let mut all = vec![];
    for arch in archs {
        let limits = resources::limits(arch).expect("listed");
        eprintln!("pqcprof: compiling the native kernels for {arch} with ptxas's report ...");
        let found = resources::kernel_resources(arch)?;
        anyhow::ensure!(
            !found.is_empty(),
            "NVRTC's log for {arch} held no ptxas report"
        );
        let kernels = found
            .into_iter()
            .map(|r| {
                let (blocks, pct) = resources::occupancy(limits, r.registers, tpb);
                KernelRow {
                    resources: r,
                    resident_blocks_per_sm: blocks,
                    occupancy_pct: pct,
                }
            })
            .collect();
        all.push(ArchResources {
            arch: arch.into(),
            nvrtc: nvrtc.clone(),
            threads_per_block: tpb,
            kernels,
        });
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(exit::OK);
    }
    for r in &all {
        println!(
            "{} ({}), {} threads per block; occupancy is the estimate from registers alone (a GPU run records the driver's figure)",
            r.arch, r.nvrtc, r.threads_per_block
        );
        println!(
            "{:<16} {:>5} {:>9} {:>13} {:>7} {:>10}",
            "kernel", "regs", "stack B", "spill st/ld B", "blk/SM", "occupancy"
        );
        let mut rows: Vec<&KernelRow> = r.kernels.iter().collect();
        rows.sort_by(|x, y| x.resources.name.cmp(&y.resources.name));
        for k in rows {
            let res = &k.resources;
            println!(
                "{:<16} {:>5} {:>9} {:>13} {:>7} {:>9.1}%",
                res.name,
                res.registers,
                res.stack_bytes,
                format!("{}/{}", res.spill_store_bytes, res.spill_load_bytes),
                k.resident_blocks_per_sm,
                k.occupancy_pct
            );
        }
        println!();
    }
    Ok(exit::OK)
}

/// A backend's verdict in `check`.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Backend name.
    pub backend: String,
    /// Whether it can run here.
    pub ready: bool,
    /// What it will use, or why not and what to install.
    pub detail: String,
}

/// Verdicts for every backend given a probe.
pub fn verdicts(gpu: &GpuProbe) -> Vec<Verdict> {
    let host = system::host();
    let mut v = vec![Verdict {
        backend: liboqs::NAME.into(),
        ready: true,
        detail: format!(
            "liboqs {} (statically linked), {} logical cores",
            crate::probe::libraries::liboqs_version(),
            host.cores_logical
        ),
    }];
    let gpu_reason = if !gpu.driver.present {
        Some(format!("no CUDA driver: {}", gpu.driver.detail))
    } else if gpu.gpus.is_empty() {
        Some("the CUDA driver lists no GPU".to_string())
    } else if !gpu.gpus.iter().any(|g| g.supported()) {
        Some(format!(
            "no GPU of compute capability {}.{} or newer",
            crate::schema::metadata::MIN_COMPUTE_CAPABILITY.0,
            crate::schema::metadata::MIN_COMPUTE_CAPABILITY.1
        ))
    } else {
        None
    };
    let native_reason = gpu_reason
        .clone()
        .or_else(|| gpu::driver_too_old(gpu.driver_api_version, &gpu.missing_driver_symbols));
    let native = match (&native_reason, gpu.nvrtc.present) {
        (Some(r), _) => Verdict {
            backend: native_gpu::NAME.into(),
            ready: false,
            detail: r.clone(),
        },
        (None, false) => Verdict {
            backend: native_gpu::NAME.into(),
            ready: false,
            detail: format!("NVRTC missing: {}", gpu.nvrtc.detail),
        },
        (None, true) => Verdict {
            backend: native_gpu::NAME.into(),
            ready: true,
            detail: format!(
                "our FIPS 203/204 kernels, compiled by {} for the GPU's own architecture at start-up",
                gpu.nvrtc.detail
            ),
        },
    };
    v.push(native);
    v.push(cupqc_verdict(gpu, gpu_reason.as_deref()));
    v
}

/// The cupqc verdict: ready only with a real SDK built in and a GPU the
/// shim was compiled for. Says which SDK and nvcc the build used, whether it
/// is the stand-in, and how to enable the backend when it is not built.
fn cupqc_verdict(gpu: &GpuProbe, gpu_reason: Option<&str>) -> Verdict {
    let b = cupqc::build_info();
    let tools = format!(
        "SDK: {}; nvcc: {}",
        if b.sdk.is_empty() {
            "none found at build time"
        } else {
            &b.sdk
        },
        if b.nvcc.is_empty() {
            "none found at build time"
        } else {
            &b.nvcc
        }
    );
    let (ready, detail) = if !b.built {
        let sdk_now = if gpu.cupqc_sdk.present {
            format!("an SDK is present now ({})", gpu.cupqc_sdk.detail)
        } else {
            gpu.cupqc_sdk.detail.clone()
        };
        (
            false,
            format!(
                "not part of this build ({}; {sdk_now}); to enable it: {}",
                b.note,
                cupqc::HOW_TO_ENABLE
            ),
        )
    } else if b.standin {
        (
            false,
            format!("this build has the cuPQC stand-in SDK (tests only, not cryptography): it cannot benchmark; {tools}"),
        )
    } else if let Some(r) = gpu_reason {
        (false, format!("{r}; built with {tools}"))
    } else if let (Some(rt), Some(drv)) = (cupqc::linked_runtime(), gpu.driver_api_version) {
        if cupqc::driver_runs(drv, rt) {
            cupqc_ready(gpu, &b, &tools)
        } else {
            (
                false,
                format!(
                    "the CUDA driver (API {}.{}) is older than the CUDA runtime {}.{} linked into the shim; update the driver or rebuild with an older nvcc; {tools}",
                    drv / 1000,
                    drv % 1000 / 10,
                    rt / 1000,
                    rt % 1000 / 10
                ),
            )
        }
    } else {
        cupqc_ready(gpu, &b, &tools)
    };
    Verdict {
        backend: cupqc::BACKEND_NAME.into(),
        ready,
        detail,
    }
}

/// The cupqc verdict once build, stand-in and driver are fine: whether a GPU
/// here runs the architectures the shim was compiled for.
fn cupqc_ready(gpu: &GpuProbe, b: &cupqc::BuildInfo, tools: &str) -> (bool, String) {
    if !gpu
        .gpus
        .iter()
        .any(|g| g.supported() && b.runs_on(g.compute_capability))
    {
        (
            false,
            format!(
                "built for sm_{} only, which no GPU here runs; rebuild with PQCPROF_CUDA_ARCHS set to the GPU's architecture; {tools}",
                b.archs.join(", sm_")
            ),
        )
    } else {
        (
            true,
            format!(
                "NVIDIA cuPQC, built for sm_{}; {tools}",
                b.archs.join(", sm_")
            ),
        )
    }
}

/// Why the native GPU backend cannot run, if it cannot.
fn native_not_ready(gpu: &GpuProbe) -> Option<String> {
    verdicts(gpu)
        .into_iter()
        .find(|v| v.backend == native_gpu::NAME)
        .filter(|v| !v.ready)
        .map(|v| v.detail)
}

#[derive(Serialize)]
struct CheckReport<'a> {
    system: &'a crate::schema::metadata::Metadata,
    gpu: &'a GpuProbe,
    cupqc_build: cupqc::BuildInfo,
    backends: &'a [Verdict],
}

fn check(args: &CheckArgs) -> anyhow::Result<i32> {
    let gpu = gpu::probe();
    let meta = system::collect(Some(&gpu));
    let verdicts = verdicts(&gpu);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&CheckReport {
                system: &meta,
                gpu: &gpu,
                cupqc_build: cupqc::build_info(),
                backends: &verdicts
            })?
        );
    } else {
        print!("{}", render_check(&meta, &gpu, &verdicts));
    }
    let gpu_ready = verdicts
        .iter()
        .any(|v| v.ready && v.backend != liboqs::NAME);
    Ok(if args.require_gpu && !gpu_ready {
        exit::SOME_FAILED
    } else {
        exit::OK
    })
}

fn yes_no(c: &gpu::Component) -> String {
    format!(
        "{} ({})",
        if c.present { "found" } else { "missing" },
        c.detail
    )
}

/// The text `check` prints.
pub fn render_check(
    meta: &crate::schema::metadata::Metadata,
    gpu: &GpuProbe,
    verdicts: &[Verdict],
) -> String {
    let mut s = String::new();
    s += "System\n";
    s += &format!(
        "  OS / arch     {} / {} (kernel {})\n",
        meta.os, meta.arch, meta.kernel
    );
    s += &format!(
        "  CPU           {}, {} logical cores{}\n",
        meta.cpu,
        meta.cores_logical,
        meta.cores_physical
            .map(|p| format!(" ({p} physical)"))
            .unwrap_or_default()
    );
    s += &format!("  Memory        {} MiB\n", meta.memory_total_mb);
    s += &format!(
        "  liboqs        {}\n  OpenSSL       {}\n",
        meta.liboqs_version, meta.openssl_version
    );
    s += &format!("  XMSS/LMS      {}\n", crate::sweep::stfl::BUILD);
    s += "GPU support\n";
    s += &format!("  CUDA driver   {}\n", yes_no(&gpu.driver));
    if let Some(e) = &gpu.emulation {
        s += &format!("  emulation     CPU STAND-IN DRIVER, NOT A GPU: {e}\n");
    }
    if gpu.gpus.is_empty() {
        s += "  GPUs          none\n";
    }
    let native_ready = verdicts
        .iter()
        .any(|v| v.ready && v.backend == native_gpu::NAME);
    for g in &gpu.gpus {
        s += &format!(
            "  GPU {}         {}, compute capability {}.{}, {} MiB{}\n",
            g.ordinal,
            g.name,
            g.compute_capability.0,
            g.compute_capability.1,
            g.memory_total_mb,
            if !g.supported() {
                " (below 7.5: unsupported)"
            } else if native_ready {
                " (ready: native-gpu)"
            } else {
                " (supported; native-gpu not ready, see Backends)"
            }
        );
    }
    s += &format!("  NVML          {}\n", yes_no(&gpu.nvml));
    s += &format!("  NVRTC         {}\n", yes_no(&gpu.nvrtc));
    s += &format!("  cuPQC SDK     {}\n", yes_no(&gpu.cupqc_sdk));
    let b = cupqc::build_info();
    let none = |v: &str| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.to_string()
        }
    };
    s += &format!(
        "  cuPQC build   {} (SDK at build time: {}; nvcc: {})\n",
        b.note,
        none(&b.sdk),
        none(&b.nvcc)
    );
    s += "Backends\n";
    for v in verdicts {
        s += &format!(
            "  {:<12}  {:<9}  {}\n",
            v.backend,
            if v.ready { "ready" } else { "not ready" },
            v.detail
        );
    }
    if !verdicts
        .iter()
        .any(|v| v.ready && v.backend != liboqs::NAME)
    {
        s += "No GPU backend is ready: pqcprof will measure the CPU baselines only.\n";
    }
    s
}

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
            eprintln!("pqcprof: {e:#}; GPU memory, utilisation and power will not be recorded");
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
    eprintln!("pqcprof: compiling the native kernels with NVRTC for GPU {ordinal} ...");
    let backend = NativeGpu::new(ordinal).map_err(|e| format!("{e:#}"))?;
    match &backend.origin {
        crate::backend::native_gpu::kernels::Origin::Compiled => eprintln!(
            "pqcprof: kernels compiled for {} in {:.1} s; loaded: {}",
            backend.arch, backend.compile_seconds, backend.image
        ),
        crate::backend::native_gpu::kernels::Origin::Cache(p) => eprintln!(
            "pqcprof: kernels for {} read from the cache {}; loaded: {}",
            backend.arch,
            p.display(),
            backend.image
        ),
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

fn bench(args: &BenchArgs, only: Option<&[&str]>) -> anyhow::Result<i32> {
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
    if let Some(d) = &args.device {
        if opts.backends.iter().all(|b| b == liboqs::NAME) && !opts.backends.is_empty() {
            bail!("invalid --device {d}: only GPU backends use a device, and this command runs liboqs-cpu only; use `pqcprof gpu` or `pqcprof bench`");
        }
    }
    let out = crate::write::output::ensure_writable_dir(&opts.out)?;
    let host = system::host();
    let cpu_batch = match &opts.batch {
        BatchRequest::List(v) => v.first().copied().unwrap_or(DEFAULT_CPU_BATCH),
        _ => DEFAULT_CPU_BATCH,
    };
    if want_backend(&opts, liboqs::NAME) {
        check_host_memory(&opts, largest_cpu_batch(&opts.batch), host.memory_total_mb)?;
    }

    let gpu = gpu::probe();
    let meta = system::collect(Some(&gpu));
    let ordinals =
        if want_backend(&opts, native_gpu::NAME) || want_backend(&opts, cupqc::BACKEND_NAME) {
            let listed: Vec<usize> = gpu.gpus.iter().map(|g| g.ordinal).collect();
            opts.devices.resolve(&listed)?
        } else {
            vec![]
        };
    if let [one] = ordinals.as_slice() {
        opts.device = *one;
    }
    let want = |name: &str| want_backend(&opts, name);
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
        let cupqc_not_ready = verdicts(&gpu)
            .into_iter()
            .find(|v| v.backend == cupqc::BACKEND_NAME && !v.ready)
            .map(|v| v.detail);
        let o = opts.clone();
        if want(native_gpu::NAME) {
            let open = Arc::new(move |d| open_native(d, &o));
            let not_ready = native_not_ready(&gpu);
            slots.push(multi_slot(
                native_gpu::NAME,
                not_ready,
                &ordinals,
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
                &ordinals,
                batch,
                open,
            ));
        }
    } else {
        if want(native_gpu::NAME) {
            slots.push(native_slot(&gpu, &opts));
        }
        if want(cupqc::BACKEND_NAME) {
            slots.push(cupqc_slot(&gpu, &opts));
        }
    }
    if opts.backends.is_empty()
        && !verdicts(&gpu)
            .iter()
            .any(|v| v.ready && v.backend != liboqs::NAME)
    {
        eprintln!("pqcprof: no GPU backend is ready here (see `pqcprof check`); measuring the CPU baselines only");
    }

    check_sweep_top(&mut slots, &opts)?;
    let per_backend = slots
        .iter()
        .filter_map(|slot| match slot {
            Slot::Ready {
                backend, batches, ..
            } => Some(crate::schema::record::BackendSettings {
                backend: backend.name().to_string(),
                batches: batches.describe(),
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
        .collect();
    let mode = if opts.latency {
        Mode::Latency
    } else {
        Mode::Throughput
    };
    let config = RunConfig {
        command_line: std::env::args().collect(),
        runs: opts.runs,
        warmup_runs: opts.warmup,
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
    };
    let plan = Plan {
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
            })
        } else {
            session::Method::InProcess
        },
    };
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    let outcome = session::run(plan, RunFile::new(meta, config), &out, &cancel)?;
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
        eprintln!(
            "pqcprof: interrupted; finished records are in {}",
            outcome.run_file.display()
        );
        return Ok(exit::INTERRUPTED);
    }
    // A failed gate is exit 3 whatever else happened: "not ready" is only
    // for a run where nothing failed and nothing was measured.
    let code = exit_for_failures(&outcome.run.records);
    if code == exit::OK && measured == 0 && (only.is_some() || !opts.backends.is_empty()) {
        eprintln!("pqcprof: nothing was measured: the backends asked for are not ready (see `pqcprof check`)");
        return Ok(exit::NOT_READY);
    }
    Ok(code)
}

use crate::schema::record::exit_for_failures;

/// A short table of what was measured.
pub fn summary_table(run: &RunFile) -> String {
    // The interval printed is the median's own (distribution-free), not the
    // mean's: the mean's can miss the median entirely on skewed runs.
    let mut s = format!(
        "{:<14} {:>3}  {:<12} {:<7} {:>7}  {:>14} {:>10} {:>7} {:>14}  {}\n",
        "backend",
        "thr",
        "algorithm",
        "op",
        "status",
        "ops/s (median)",
        "ms/op",
        "batch",
        "end-to-end/s",
        "95% CI of the median (ops/s)"
    );
    for r in &run.records {
        let ci = r
            .throughput_ops_per_sec
            .as_ref()
            .and_then(|t| t.median_ci95)
            .map(|c| format!("{:.1} .. {:.1}", c.low, c.high))
            .unwrap_or_else(|| "-".into());
        let status = match r.status {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
        };
        s += &format!(
            "{:<14} {:>3}  {:<12} {:<7} {:>7}  {:>14} {:>10} {:>7} {:>14}  {}\n",
            r.backend,
            r.threads,
            r.algorithm,
            r.operation.cli_name(),
            status,
            r.ops_per_sec
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            r.ms_per_op
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into()),
            crate::core::batching::short(r.batch),
            r.end_to_end
                .as_ref()
                .and_then(|e| e.ops_per_sec)
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            ci,
        );
    }
    s
}

/// The kernels behind the GPU records: launch, registers, local memory and
/// occupancy, the first things that explain a GPU throughput. `None` when
/// no record timed one of our kernels.
pub fn kernel_table(records: &[crate::schema::record::Record]) -> Option<String> {
    let rows: Vec<_> = records
        .iter()
        .filter_map(|r| r.kernel.as_ref().map(|k| (r, k)))
        .collect();
    let image = rows.first()?.1.image.clone();
    let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let mut s = format!(
        "{:<16} {:>7} {:>7} {:>5} {:>11} {:>9} {:>10} {:>6} {:>9}\n",
        "kernel",
        "blocks",
        "thr/blk",
        "regs",
        "local B/thr",
        "blk/SM",
        "occupancy",
        "waves",
        "last wave"
    );
    for (r, k) in &rows {
        if r.mode == crate::schema::record::Mode::Latency {
            continue;
        }
        let (waves, last) = match k.waves {
            Some(w) => (
                format!("{:.2}", w.exact_waves),
                format!("{:.0}%", w.last_wave_fill_pct),
            ),
            None => ("-".into(), "-".into()),
        };
        s += &format!(
            "{:<16} {:>7} {:>7} {:>5} {:>11} {:>9} {:>10} {:>6} {:>9}\n",
            k.name,
            k.blocks,
            k.threads_per_block,
            opt(k.registers_per_thread),
            opt(k.local_bytes_per_thread),
            opt(k.resident_blocks_per_sm),
            k.occupancy_pct
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "-".into()),
            waves,
            last,
        );
    }
    s += &format!("kernels loaded as: {image}\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_table_lists_gpu_kernels_only() {
        use crate::schema::device::KernelInfo;
        assert!(kernel_table(&[]).is_none(), "no records, no table");
        let cfg = crate::measure::runner::MeasureConfig {
            batch: crate::backend::BatchConfig {
                batch: 100_000,
                threads: 1,
                message_size: 0,
                context: vec![],
            },
            runs: 1,
            warmup_runs: 1,
            mode: crate::schema::record::Mode::Throughput,
        };
        let mut gpu = crate::measure::runner::skipped(
            &crate::backend::mock::Mock::default(),
            Algorithm::MlKem768,
            crate::core::catalog::Operation::KeyGen,
            &cfg,
            String::from("mock (test only)"),
        );
        let mut records = vec![gpu.clone()];
        assert!(
            kernel_table(&records).is_none(),
            "a record without a kernel"
        );
        gpu.kernel = Some(KernelInfo {
            name: "mlkem768_keygen".into(),
            image: "sm_90 machine code from NVRTC 13.0 (mock)".into(),
            threads_per_block: 128,
            blocks: 782,
            registers_per_thread: Some(128),
            local_bytes_per_thread: Some(3104),
            resident_blocks_per_sm: Some(4),
            occupancy_pct: Some(25.0),
            multiprocessors: Some(132),
            waves: crate::core::waves::waves(782, 132, 4),
        });
        records.push(gpu);
        let t = kernel_table(&records).unwrap();
        let row = t
            .lines()
            .find(|l| l.starts_with("mlkem768_keygen"))
            .unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "mlkem768_keygen",
                "782",
                "128",
                "128",
                "3104",
                "4",
                "25.0%",
                "1.48",
                "48%"
            ]
        );
        assert!(t.ends_with("kernels loaded as: sm_90 machine code from NVRTC 13.0 (mock)\n"));
    }

    #[test]
    fn oversized_batches_are_refused_with_the_limit() {
        let o = BenchOptions {
            algorithms: vec![Algorithm::MlDsa87],
            operations: vec![],
            backends: vec![],
            batch: BatchRequest::Default,
            runs: 1,
            warmup: 1,
            threads: vec![1],
            message_size: 1024,
            context: vec![],
            device: 0,
            devices: crate::cmd::cli::DeviceSelection::One(0),
            sample_period_ms: None,
            latency: false,
            out: "x".into(),
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

    #[test]
    fn without_a_driver_only_the_cpu_is_ready() {
        let p = gpu::probe();
        let v = verdicts(&p);
        assert!(v[0].ready);
        if !p.driver.present {
            assert!(v.iter().skip(1).all(|x| !x.ready && !x.detail.is_empty()));
        }
    }
}
