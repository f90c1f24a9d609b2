//! Where `offload` serves its batches: this host's CPU, or a GPU through
//! one of the two GPU backends (the project's kernels, or NVIDIA cuPQC
//! where the build has it), opened on the GPU asked for; the check that
//! the largest batch fits; and the GPU's energy sampler.

use crate::backend::cupqc;
use crate::backend::native_gpu::{self, NativeGpu};
use crate::backend::{Backend, BatchConfig};
use crate::core::catalog::{Algorithm, Operation};
use crate::probe::gpu::GpuProbe;
use crate::probe::system;
use crate::schema::device::{Device, DeviceKind};
use std::cell::RefCell;
use std::time::Duration;

/// Whether `backend` serves on a GPU.
pub fn is_gpu(backend: &str) -> bool {
    backend == native_gpu::NAME || backend == cupqc::BACKEND_NAME
}

/// A GPU backend opened for serving, with the GPU's PCI bus ID.
pub struct Opened {
    pub backend: Box<dyn Backend>,
    pub pci_bus_id: String,
}

/// `backend` on GPU `ordinal` for the operations `ops`: our kernels
/// (compiled, or read from the kernel cache), on a stream of their own
/// when `own_stream`; or cuPQC, whose every prepared batch has a stream
/// of its own.
pub fn open(
    backend: &str,
    ops: &[(Algorithm, Operation)],
    ordinal: usize,
    own_stream: bool,
) -> anyhow::Result<Opened> {
    if backend == cupqc::BACKEND_NAME {
        return open_cupqc(ordinal);
    }
    let algs: Vec<Algorithm> = ops.iter().map(|&(a, _)| a).collect();
    let units = native_gpu::kernels::units_for(&algs);
    let mut b = NativeGpu::new(ordinal, &units)
        .map_err(|e| e.context(format!("native-gpu on GPU {ordinal}")))?;
    if own_stream {
        b.use_own_stream()?;
    }
    Ok(Opened {
        pci_bus_id: b.pci_bus_id.clone(),
        backend: Box::new(b),
    })
}

#[cfg(pqcprof_cupqc)]
fn open_cupqc(ordinal: usize) -> anyhow::Result<Opened> {
    let b = cupqc::device::Cupqc::new(ordinal)
        .map_err(|e| e.context(format!("cupqc on GPU {ordinal}")))?;
    Ok(Opened {
        pci_bus_id: b.pci_bus_id.clone(),
        backend: Box::new(b),
    })
}

#[cfg(not(pqcprof_cupqc))]
fn open_cupqc(_: usize) -> anyhow::Result<Opened> {
    cupqc_built()?;
    unreachable!("a build without cuPQC refuses it")
}

/// Refuses cuPQC in a build that cannot measure with it: one without the
/// SDK (saying how to enable it), or one with the tests' stand-in SDK.
#[cfg(not(pqcprof_cupqc))]
fn cupqc_built() -> anyhow::Result<()> {
    anyhow::bail!(
        "the cuPQC backend is not part of this build; to enable it: {}",
        cupqc::HOW_TO_ENABLE
    )
}

/// See the other `cupqc_built`.
#[cfg(pqcprof_cupqc)]
fn cupqc_built() -> anyhow::Result<()> {
    cupqc::device::refuse_standin()
}

/// Where the batches run.
pub struct ServedOn {
    pub device: Device,
    /// On the CPU stand-in driver, not a GPU.
    pub emulated: bool,
    /// The GPU's PCI bus ID, for its NVML sampler; none on the CPU.
    pub pci_bus_id: Option<String>,
    /// The plugin serving (`plugin:PATH`), as its worker loaded it.
    pub plugin: Option<crate::schema::plugin::PluginInfo>,
}

/// What `served_on` checks a GPU against.
pub struct Serving<'a> {
    pub backend: &'a str,
    pub ops: &'a [(Algorithm, Operation)],
    /// The GPU asked for (`--device`).
    pub ordinal: usize,
    pub workers: usize,
    /// The largest batch a worker prepares.
    pub top: usize,
    /// Whether `top` is a fixed `--max-batch` (else `--batch-top`).
    pub fixed: bool,
    /// The command's deadline (`--deadline`): a plugin's load and every
    /// request to its worker end by it.
    pub deadline: Option<std::time::Instant>,
}

/// Where the batches will run: on a GPU, opened once first (to compile
/// our kernels, which later opens read from the kernel cache, or to
/// refuse a cuPQC build that cannot measure) and to refuse a largest
/// batch that does not fit; else this host's CPU.
pub fn served_on(s: &Serving, cfg: &BatchConfig) -> anyhow::Result<ServedOn> {
    let host = || {
        let host = system::host();
        ServedOn {
            device: Device {
                kind: DeviceKind::Cpu,
                name: host.cpu.clone(),
                memory_total_mb: host.memory_total_mb,
            },
            emulated: false,
            pci_bus_id: None,
            plugin: None,
        }
    };
    // A plugin says where it runs: a device plugin on GPU `ordinal`, as its
    // worker opened it.
    if let Some(path) = s.backend.strip_prefix(crate::backend::plugin::PREFIX) {
        let on_host = host();
        let p = crate::backend::plugin::isolated::PluginBackend::open(
            std::path::Path::new(path),
            on_host.device.clone(),
            s.ordinal,
            s.deadline,
        )?;
        let plugin = Some(p.info.clone());
        return Ok(match p.gpu.clone() {
            Some(g) => ServedOn {
                device: g.device,
                emulated: g.emulated,
                pci_bus_id: Some(g.pci_bus_id),
                plugin,
            },
            None => ServedOn { plugin, ..on_host },
        });
    }
    if !is_gpu(s.backend) {
        return Ok(host());
    }
    if s.backend == cupqc::BACKEND_NAME {
        cupqc_built()?;
    }
    let probe = crate::probe::gpu::probe();
    if let Some(why) = not_usable(&probe) {
        anyhow::bail!("{} cannot serve here: {why}", s.backend);
    }
    if let Some(why) = missing_device(&probe, s.ordinal) {
        anyhow::bail!("invalid --device {}: {why}", s.ordinal);
    }
    let mut first = open(s.backend, s.ops, s.ordinal, false)?;
    let device = first.backend.device();
    let fits: Vec<_> = s
        .ops
        .iter()
        .map(|&(a, o)| (a, o, first.backend.max_batch(a, o, cfg)))
        .collect();
    let pci_bus_id = Some(std::mem::take(&mut first.pci_bus_id));
    drop(first);
    // A mix's operations keep their batches at once: each its share of
    // the memory.
    for (alg, op, fits) in fits {
        if let Some(fits) = fits {
            let share = fits / s.ops.len();
            gpu_fit(s, share, alg, op, &device.name)?;
        }
    }
    Ok(ServedOn {
        device,
        emulated: crate::probe::gpu::standin_driver().is_some(),
        pci_bus_id,
        plugin: None,
    })
}

/// Why no GPU backend can open a GPU here: none usable, or a driver
/// without the entry points the CUDA bindings call (opening one then would
/// abort instead of failing).
fn not_usable(probe: &GpuProbe) -> Option<String> {
    use crate::probe::gpu;
    gpu::no_usable_gpu(probe)
        .or_else(|| gpu::driver_too_old(probe.driver_api_version, &probe.missing_driver_symbols))
}

/// Why GPU `ordinal` cannot be used: the driver does not list it.
fn missing_device(probe: &GpuProbe, ordinal: usize) -> Option<String> {
    let listed = probe.gpus.len();
    (!probe.gpus.iter().any(|g| g.ordinal == ordinal)).then(|| {
        format!(
            "no GPU with ordinal {ordinal}; the driver lists {listed} (ordinals 0 to {})",
            listed.saturating_sub(1)
        )
    })
}

/// The largest batch each of `workers` workers may prepare when the
/// device holds `fits` operations of one batch: a worker prepares a batch
/// of every size from 1 to its largest, all resident at once, so
/// `workers * top * (top + 1) / 2` operations must fit.
fn largest_fitting(fits: usize, workers: usize) -> usize {
    let per_worker = fits / workers.max(1);
    let mut top = ((2.0 * per_worker as f64).sqrt() as usize).max(1);
    while top > 0 && top * (top + 1) / 2 > per_worker {
        top -= 1;
    }
    while (top + 1) * (top + 2) / 2 <= per_worker {
        top += 1;
    }
    top
}

/// Refuses a largest batch (`--max-batch`, or `--batch-top` with auto)
/// whose prepared batches do not fit the device's memory, naming the
/// largest that does.
fn gpu_fit(
    s: &Serving,
    fits: usize,
    alg: Algorithm,
    op: Operation,
    device: &str,
) -> anyhow::Result<()> {
    let most = largest_fitting(fits, s.workers);
    if s.top > most {
        let flag = if s.fixed {
            "--max-batch"
        } else {
            "--batch-top"
        };
        anyhow::bail!(
            "invalid {flag} {}: {device} has room for {fits} {} {} operations at once, and each of {} worker(s) prepares a batch of every size from 1 to the largest; the largest that fits is {most}",
            s.top,
            alg.name(),
            op.cli_name(),
            s.workers
        );
    }
    Ok(())
}

/// The NVML sampler of GPU `ordinal` at `pci_bus_id`, or one that
/// records nothing and says why.
pub fn energy_sampler(
    pci_bus_id: &str,
    ordinal: usize,
) -> RefCell<Box<dyn crate::monitor::Sampler>> {
    use crate::monitor::nvml::{NoSampler, NvmlSampler};
    let period = Duration::from_millis(1);
    let s: Box<dyn crate::monitor::Sampler> = match NvmlSampler::new(pci_bus_id, ordinal, period) {
        Ok(s) => Box::new(s),
        Err(e) => {
            log::warn!("{e:#}; offload points will have no energy per request");
            Box::new(NoSampler(format!("{e:#}")))
        }
    };
    RefCell::new(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_fitting_batch_leaves_room_for_every_size_below_it() {
        // 1 + 2 + ... + 10 = 55 operations per worker.
        assert_eq!(largest_fitting(55, 1), 10);
        assert_eq!(largest_fitting(54, 1), 9);
        assert_eq!(largest_fitting(110, 2), 10);
        assert_eq!(largest_fitting(0, 1), 0);
    }

    #[test]
    fn both_gpu_backends_serve_on_a_gpu_and_liboqs_does_not() {
        assert!(is_gpu("native-gpu") && is_gpu("cupqc"));
        assert!(!is_gpu("liboqs-cpu"));
    }

    #[cfg(not(pqcprof_cupqc))]
    #[test]
    fn cupqc_without_the_sdk_says_how_to_enable_it() {
        let e = open(
            "cupqc",
            &[(Algorithm::MlKem768, Operation::Encaps)],
            0,
            false,
        )
        .err()
        .expect("no cuPQC in this build");
        assert!(format!("{e:#}").contains("scripts/fetch-cupqc"), "{e:#}");
    }
}
