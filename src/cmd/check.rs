//! `pqcprof check`: what this machine offers (CPU, CUDA driver, NVML, NVRTC,
//! cuPQC) and, per backend, whether it is ready to measure or why not.

use crate::backend::cupqc;
use crate::backend::liboqs::{self};
use crate::backend::native_gpu::{self};
use crate::core::exit;
use crate::probe::gpu::{self, GpuProbe};
use crate::probe::system;
use clap::Args;
use serde::Serialize;

/// Options of `check`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("vector_runs").args(["vectors", "plugin"]).multiple(true))]
pub struct CheckArgs {
    /// Exit with code 3 unless a GPU backend is ready
    #[arg(long)]
    pub require_gpu: bool,
    /// Run the NIST ACVP and Wycheproof vectors instead (exit 3 on a failure)
    ///
    /// See docs/vectors.md.
    #[arg(long, conflicts_with = "require_gpu")]
    pub vectors: bool,
    /// With --vectors: the implementations to run [default: all that can]
    ///
    /// native-host, liboqs, openssl, native-gpu (or one variant:
    /// native-gpu:thread, :warp, :block), cupqc, comma-separated; left out,
    /// every one this build and machine can run.
    #[arg(long = "backend", value_name = "NAMES", requires = "vectors", value_parser = vector_backends)]
    pub backend: Vec<String>,
    /// Check a plugin library and run the vectors on it (exit 3 on a failure)
    ///
    /// Load a plugin library (include/pqcprof_plugin.h) in a worker process
    /// (a device plugin on GPU 0), check its ABI version and sizes, and run
    /// the vectors on it there; see docs/plugins.md.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["require_gpu", "vectors"])]
    pub plugin: Vec<std::path::PathBuf>,
    /// With --vectors or --plugin: the first N cases of each group only
    ///
    /// The invalid ones first. [default: every case]
    #[arg(long, value_name = "N", requires = "vector_runs", value_parser = clap::value_parser!(u32).range(1..))]
    pub sample: Option<u32>,
    /// With --plugin: seconds the whole command may take (exit 5 when reached)
    ///
    /// From 0.001 to a week. A plugin that has not answered by then is
    /// killed, its group counts one failed case and the groups after it are
    /// not run.
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        requires = "plugin",
        help_heading = super::bench_args::heading::HOW_LONG,
        value_parser = crate::core::bounded::deadline
    )]
    pub deadline: Option<f64>,
    /// Print the probe (or the vectors' results) as JSON instead of text
    #[arg(long, help_heading = super::bench_args::heading::OUTPUT)]
    pub json: bool,
}

/// `check --backend`: names of implementations the vectors run on.
fn vector_backends(s: &str) -> Result<String, String> {
    const NAMES: [&str; 12] = [
        "native-host",
        "native",
        "host",
        "liboqs",
        "liboqs-cpu",
        "openssl",
        "openssl-cpu",
        "native-gpu",
        "native-gpu:all",
        "native-gpu:thread",
        "native-gpu:warp",
        "native-gpu:block",
    ];
    for name in s.split(',').map(|n| n.trim().to_ascii_lowercase()) {
        if name != "cupqc" && !NAMES.contains(&name.as_str()) {
            return Err(format!(
                "{name:?} cannot run vectors; valid: native-host, liboqs, openssl, native-gpu (or native-gpu:thread, :warp, :block), cupqc"
            ));
        }
    }
    Ok(s.to_string())
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
    let gpu_reason = gpu::no_usable_gpu(gpu);
    let native_reason = gpu_reason
        .clone()
        .or_else(|| gpu::driver_too_old(gpu.driver_api_version, &gpu.missing_driver_symbols))
        .or_else(|| gpu::nvrtc_driver_mismatch(gpu::nvrtc_version(), gpu.driver_api_version));
    let images = kernel_images(gpu);
    let usable: Vec<String> = images
        .images
        .iter()
        .filter(|i| !i.matching.is_empty() && gpu_archs(gpu).contains(&i.arch))
        .map(|i| format!("{} {}", i.unit, i.arch))
        .collect();
    let native = match (&native_reason, gpu.nvrtc.present) {
        (Some(r), _) => Verdict {
            backend: native_gpu::NAME.into(),
            ready: false,
            detail: r.clone(),
        },
        (None, false) if !usable.is_empty() => Verdict {
            backend: native_gpu::NAME.into(),
            ready: true,
            detail: format!(
                "our FIPS 203/204 kernels from prebuilt images in {} ({}); no NVRTC to compile others: {}",
                images.dir.as_deref().map(|d| d.display().to_string()).unwrap_or_default(),
                usable.join(", "),
                gpu.nvrtc.detail
            ),
        },
        (None, false) => Verdict {
            backend: native_gpu::NAME.into(),
            ready: false,
            detail: format!(
                "NVRTC missing ({}): {}",
                gpu.nvrtc.detail,
                no_images_reason(gpu, images.dir.as_deref())
            ),
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
        let note = b.finding();
        // What the machine has now, unless the build found no SDK either.
        let sdk_now = if gpu.cupqc_sdk.present {
            format!("; an SDK is present now ({})", gpu.cupqc_sdk.detail)
        } else if b.sdk.is_empty() {
            String::new()
        } else {
            format!("; {}", gpu.cupqc_sdk.detail)
        };
        // A build that failed says how to see the failure; one that found
        // nothing says how to get an SDK and nvcc.
        let how = if b.note.contains("PQCPROF_EXPECT_CUPQC") {
            String::new()
        } else {
            format!("; to enable it: {}", cupqc::HOW_TO_ENABLE)
        };
        (
            false,
            format!("not part of this build ({note}{sdk_now}){how}"),
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
    let supported: Vec<_> = gpu.gpus.iter().filter(|g| g.supported()).collect();
    match supported
        .iter()
        .find_map(|g| b.image_for(g.compute_capability))
    {
        None => {
            let why: Vec<String> = supported
                .iter()
                .filter_map(|g| b.no_image_reason(g.compute_capability))
                .collect();
            (false, format!("{}; {tools}", why.join("; ")))
        }
        Some(image) => (
            true,
            format!(
                "NVIDIA {}, runs {image} here; built for {}; {tools}",
                b.provider(),
                built_for(b)
            ),
        ),
    }
}

/// `sm_75, sm_80, ..., sm_90 + PTX compute_90`.
fn built_for(b: &cupqc::BuildInfo) -> String {
    let mut s = format!("sm_{}", b.archs.join(", sm_"));
    if let Some(p) = b.ptx {
        s += &format!(" + PTX compute_{p}");
    }
    s
}

/// The prebuilt and cached kernel images of one unit and architecture.
#[derive(Debug, Clone, Serialize)]
pub struct UnitImages {
    /// `mlkem` or `mldsa`.
    pub unit: &'static str,
    /// `sm_XY`.
    pub arch: String,
    /// Images of this binary's kernel sources: file names of the machine
    /// code, with the NVRTC that made each (`NVRTC 13.5`).
    pub matching: Vec<String>,
    /// Images of other sources or options (another pqcprof): file names.
    pub other: Vec<String>,
}

/// What the kernel cache folder holds.
#[derive(Debug, Clone, Serialize)]
pub struct KernelImages {
    /// The folder (`$PQCPROF_PTX_CACHE`, else the user's cache).
    pub dir: Option<std::path::PathBuf>,
    /// Per unit and architecture with any image, or the GPU's.
    pub images: Vec<UnitImages>,
}

/// Why no kernel image can serve this machine's first supported GPU, unit
/// by unit (what was looked for, what was found instead).
fn no_images_reason(gpu: &GpuProbe, dir: Option<&std::path::Path>) -> String {
    let Some(arch) = gpu_archs(gpu).into_iter().next() else {
        return "no supported GPU".into();
    };
    native_gpu::kernels::UNITS
        .iter()
        .map(|&u| native_gpu::kernel_cache::no_image_reason(dir, u, &arch))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The architectures of this machine's supported GPUs.
fn gpu_archs(gpu: &GpuProbe) -> Vec<String> {
    gpu.gpus
        .iter()
        .filter(|g| g.supported())
        .map(|g| native_gpu::kernels::arch_for(g.compute_capability))
        .collect()
}

/// The images in the kernel cache for this machine's GPUs' architectures
/// and any other architecture that has one.
pub fn kernel_images(gpu: &GpuProbe) -> KernelImages {
    use native_gpu::kernel_cache;
    let dir = kernel_cache::cache_dir();
    let mut images = vec![];
    if let Some(d) = &dir {
        let gpus = gpu_archs(gpu);
        for limits in native_gpu::resources::SM_LIMITS {
            let arch = limits.arch.to_string();
            for unit in native_gpu::kernels::UNITS {
                let found = kernel_cache::images_in(d, unit, &arch);
                if found.matching.is_empty() && found.other.is_empty() && !gpus.contains(&arch) {
                    continue;
                }
                let name = |p: &std::path::Path| {
                    format!(
                        "{}.cubin",
                        p.file_name().unwrap_or_default().to_string_lossy()
                    )
                };
                images.push(UnitImages {
                    unit: native_gpu::kernels::unit_name(unit),
                    arch: arch.clone(),
                    matching: found
                        .matching
                        .iter()
                        .map(|(p, (a, b))| format!("{} (NVRTC {a}.{b})", name(p)))
                        .collect(),
                    other: found.other.iter().map(|p| name(p)).collect(),
                });
            }
        }
    }
    KernelImages { dir, images }
}

/// `check`'s lines on the kernel images: for each unit and architecture,
/// whether an image of this binary's sources is there.
fn images_section(k: &KernelImages) -> String {
    let Some(dir) = &k.dir else {
        return "  kernel images no cache folder (set PQCPROF_PTX_CACHE)\n".into();
    };
    let mut s = format!("  kernel images {}\n", dir.display());
    if k.images.is_empty() {
        s += "                none\n";
    }
    for i in &k.images {
        let what = if i.matching.is_empty() {
            "none of this binary's sources (compiled when first needed)".to_string()
        } else {
            format!("matches this binary: {}", i.matching.join(", "))
        };
        let other = if i.other.is_empty() {
            String::new()
        } else {
            format!("; {} of other sources or options", i.other.len())
        };
        s += &format!("    {:<6} {:<6} {what}{other}\n", i.unit, i.arch);
    }
    s
}

/// Why the native GPU backend cannot run, if it cannot.
pub fn native_not_ready(gpu: &GpuProbe) -> Option<String> {
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
    kernel_images: KernelImages,
    backends: &'a [Verdict],
}

/// `pqcprof check`: prints (or writes as JSON) what the machine offers and
/// each backend's verdict; exit 3 with `--require-gpu` and no ready GPU.
pub fn check(args: &CheckArgs) -> anyhow::Result<i32> {
    if !args.plugin.is_empty() {
        // The deadline counts from here.
        let started = std::time::Instant::now();
        let deadline = args
            .deadline
            .map(|s| (started + std::time::Duration::from_secs_f64(s), s));
        let mut out = super::stdout::Stdout;
        return crate::vectors::command::run_plugins(
            &args.plugin,
            args.sample,
            args.json,
            deadline,
            &mut out,
        );
    }
    if args.vectors {
        let mut out = super::stdout::Stdout;
        return crate::vectors::command::run(&args.backend, args.sample, args.json, &mut out);
    }
    let gpu = gpu::probe();
    let meta = system::collect(Some(&gpu));
    let verdicts = verdicts(&gpu);
    if args.json {
        super::stdout::println(serde_json::to_string_pretty(&CheckReport {
            system: &meta,
            gpu: &gpu,
            cupqc_build: cupqc::build_info(),
            kernel_images: kernel_images(&gpu),
            backends: &verdicts,
        })?)?;
    } else {
        super::stdout::print(render_check(&meta, &gpu, &verdicts))?;
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

/// The text `check` prints: the system, GPU support, then the backends.
pub fn render_check(
    meta: &crate::schema::metadata::Metadata,
    gpu: &GpuProbe,
    verdicts: &[Verdict],
) -> String {
    let mut s = system_section(meta);
    s += &gpu_section(gpu, verdicts);
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

/// `check`'s System lines: OS, CPU, memory and the CPU libraries.
fn system_section(meta: &crate::schema::metadata::Metadata) -> String {
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
    s
}

/// `check`'s GPU support lines: driver, each GPU, NVML, NVRTC and cuPQC.
fn gpu_section(gpu: &GpuProbe, verdicts: &[Verdict]) -> String {
    let mut s = String::new();
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
    s += &images_section(&kernel_images(gpu));
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
        b.finding(),
        none(&b.sdk),
        none(&b.nvcc)
    );
    if b.built {
        s += &format!("  cuPQC code    {} for {}\n", b.provider(), built_for(&b));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
