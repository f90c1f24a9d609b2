//! The `native-gpu` backend: the project's own FIPS 203/204 kernels
//! (`cuda/native/`), compiled by NVRTC for the device's own compute
//! capability when the backend is created, launched through cudarc.
//!
//! Every input (seeds, messages, rnd) is generated on the host and copied
//! to the device before timing; keys, ciphertexts and signatures that an
//! operation needs are made on the device by the other kernels, also before
//! timing. A timed batch is one kernel launch between two CUDA events created
//! with timing enabled, as cuPQC_benchmark times its kernels (kernel-only),
//! queued behind a short device-side wait so the host's launch call is not
//! in the window. End to end, the same events also enclose the inputs'
//! copies from pinned host memory and the outputs' copies back. The
//! correctness gate copies back only the slots it samples.

use crate::backend::native_gpu::batch::GpuBatch;
use crate::backend::native_gpu::launch::launch_kernel;
use crate::backend::native_gpu::launch::KernelArgs;
use crate::backend::native_gpu::sizing::host_fit;
use crate::backend::native_gpu::sizing::launch_chain;
use crate::backend::native_gpu::sizing::launch_threads;
use crate::backend::native_gpu::sizing::max_batch;
use crate::backend::native_gpu::sizing::memory_refusal;
use crate::backend::native_gpu::sizing::peak_bytes_per_op;
use crate::backend::native_gpu::sizing::sign_threads;
use crate::backend::native_gpu::sizing::variant_launch_shape;
use crate::backend::native_gpu::sizing::variants;
use crate::backend::native_gpu::sizing::Variant;
use crate::backend::native_gpu::sizing::ALLOCATION_GRANULARITY_BYTES;
use crate::backend::native_gpu::sizing::MAX_LIVE_BUFFERS;
pub mod batch;
pub mod bounded_compile;
pub mod host;
pub mod host_checked;
pub(crate) mod inputs;
pub mod kernel_cache;
pub mod kernels;
pub mod launch;
pub mod resources;
pub mod sizing;

use crate::backend::{Backend, BatchConfig, Prepared};

use crate::core::catalog::{Algorithm, Family, Kind, Operation};
use crate::core::waves;
use crate::schema::device::Device;
use crate::schema::device::KernelInfo;
use crate::schema::record::BatchBasis;
use anyhow::{anyhow, bail, ensure, Context};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute_enum};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig};
use std::sync::Arc;

/// Backend name on the command line and in files.
pub const NAME: &str = "native-gpu";

/// Local memory per thread a cooperative kernel may have and still count as
/// keeping its working set on chip (a Keccak state and a few scalars).
const COOPERATIVE_MAX_LOCAL_BYTES: usize = 512;

/// A loaded entry point and the variant it belongs to.
#[derive(Clone)]
struct Kernel {
    func: CudaFunction,
    variant: Variant,
    name: String,
    /// What the driver loaded for its unit (`LoadedUnit::image`).
    image: String,
}

/// One family's kernels, loaded.
pub struct LoadedUnit {
    /// The family (`kernels::UNITS`).
    pub unit: Family,
    module: Arc<CudaModule>,
    /// Seconds NVRTC (or reading the cache) took.
    pub compile_seconds: f64,
    /// Whether the kernels were compiled now or read from the cache.
    pub origin: kernel_cache::Origin,
    /// What the driver loaded: machine code, or PTX it compiled itself.
    pub image: String,
}

/// Our kernels on one GPU.
pub struct NativeGpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The families this backend was opened for, in `kernels::UNITS` order.
    pub units: Vec<LoadedUnit>,
    device: Device,
    /// `sm_XY` the kernels were compiled for.
    pub arch: String,
    /// PCI bus id, for NVML.
    pub pci_bus_id: String,
    resident_threads: usize,
    max_threads_per_sm: u32,
    /// Multiprocessors of the device.
    sms: u32,
    /// Shared memory (the on-chip array L1 shares) per multiprocessor, bytes.
    shared_per_sm: usize,
    /// The variant `--kernel` asked for.
    requested: Option<Variant>,
    /// `--cache cold`: every batch flushes L2 before each timed run.
    cold_cache: bool,
}

/// Compiles (or reads from the cache, prebuilt images included, within
/// `bound` when given: `bounded_compile::obtain_units`) the kernels of `units` for `arch` and
/// loads them into `ctx`: machine code first (no JIT, and no dependence on
/// the driver knowing this NVRTC's PTX ISA), the PTX as the fallback.
fn load_units(
    ctx: &Arc<CudaContext>,
    units: &[Family],
    arch: &str,
    bound: Option<&bounded_compile::CompileBound>,
) -> anyhow::Result<Vec<LoadedUnit>> {
    let here = kernels::nvrtc_label().unwrap_or_else(|| "NVRTC".into());
    let mut loaded = vec![];
    // A bounded compile runs in a child, `kernels --prebuild`, which knows
    // the architectures of `resources::SM_LIMITS` only.
    let bound = bound.filter(|_| resources::limits(arch).is_some());
    for built in bounded_compile::obtain_units(units, arch, bound) {
        let built = built?;
        let unit = built.compiled.unit;
        let name = kernels::unit_name(unit);
        // A prebuilt image names the NVRTC that made it.
        let nvrtc = match &built.origin {
            kernel_cache::Origin::Prebuilt(_, (major, minor)) => {
                format!("NVRTC {major}.{minor}, prebuilt")
            }
            _ => here.clone(),
        };
        // Machine code first: no JIT, and no dependence on the driver
        // knowing this NVRTC's PTX ISA. The PTX is the fallback.
        let (module, image) = match ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(built.compiled.cubin))
        {
            Ok(m) => (m, format!("{arch} machine code from {nvrtc}")),
            Err(cubin_err) => {
                let m = ctx
                    .load_module(cudarc::nvrtc::Ptx::from_src(built.compiled.ptx))
                    .map_err(|e| {
                        anyhow!(
                            "loading the compiled {name} kernels failed: machine code: {cubin_err:?}; PTX: {e:?}"
                        )
                    })?;
                log::warn!(
                    "the driver refused the {arch} machine code of the {name} kernels ({cubin_err:?}); it compiled the PTX instead"
                );
                (
                    m,
                    format!("PTX from {nvrtc}, compiled by the driver (machine code refused: {cubin_err:?})"),
                )
            }
        };
        loaded.push(LoadedUnit {
            unit,
            module,
            compile_seconds: built.seconds,
            origin: built.origin,
            image,
        });
    }
    Ok(loaded)
}

impl NativeGpu {
    /// Opens GPU `ordinal`, compiles the kernels of `units` for it (each
    /// family's unit in its own thread) and loads them. The caller has
    /// checked (gpu::probe) that the driver exists, and NVRTC unless the
    /// kernel cache holds prebuilt images (`kernel_cache::lookup`).
    pub fn new(ordinal: usize, units: &[Family]) -> anyhow::Result<Self> {
        Self::new_within(ordinal, units, None)
    }

    /// `new`, with the kernels' compile bounded by `bound`: a unit not
    /// ready by then is a `bounded_compile::NotInTime` error (its compile goes
    /// on in a process of its own and fills the cache).
    pub fn new_within(
        ordinal: usize,
        units: &[Family],
        bound: Option<&bounded_compile::CompileBound>,
    ) -> anyhow::Result<Self> {
        let ctx =
            CudaContext::new(ordinal).map_err(|e| anyhow!("cannot open GPU {ordinal}: {e:?}"))?;
        // One stream, synchronised explicitly: cudarc's per-buffer events
        // would add work around the timed launch.
        // SAFETY: every buffer is used on `stream` only.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| anyhow!("compute capability: {e:?}"))?;
        let cc = (major as u32, minor as u32);
        ensure!(
            cc >= crate::schema::metadata::MIN_COMPUTE_CAPABILITY,
            "GPU {ordinal} has compute capability {major}.{minor}; 7.5 or newer is needed"
        );
        let attr = |a| ctx.attribute(a).map(|v| v as usize).unwrap_or(0);
        let (device, pci_bus_id) = crate::backend::gpu_identity(&ctx, ordinal);
        let max_threads_per_sm =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
        let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        let resident_threads = sms * max_threads_per_sm;
        let arch = kernels::arch_for(cc);
        let mut api: std::os::raw::c_int = 0;
        // SAFETY: the driver is loaded and initialised (a context exists);
        // `api` is a valid out pointer.
        if unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut api) }
            .result()
            .is_ok()
        {
            kernel_cache::note_driver_api(api as u32);
        }
        let loaded = load_units(&ctx, units, &arch, bound)?;
        let stream = ctx.default_stream();
        let shared_per_sm =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
        Ok(NativeGpu {
            ctx,
            stream,
            units: loaded,
            device,
            arch,
            pci_bus_id,
            resident_threads,
            max_threads_per_sm: max_threads_per_sm as u32,
            sms: sms as u32,
            shared_per_sm,
            requested: None,
            cold_cache: false,
        })
    }

    /// Batches prepared from now on queue their copies and launches on a
    /// stream of their own (not the context's default stream), so that
    /// several backends opened on one device, each on its own thread,
    /// keep several batches in flight at once.
    pub fn use_own_stream(&mut self) -> anyhow::Result<()> {
        self.stream = self
            .ctx
            .new_stream()
            .map_err(|e| anyhow!("creating a stream: {e:?}"))?;
        Ok(())
    }

    /// `--cache cold`: batches prepared from now on flush L2 before each
    /// timed run.
    pub fn set_cold_cache(&mut self, cold: bool) {
        self.cold_cache = cold;
    }

    /// A device buffer of twice the L2 size, for `--cache cold`.
    fn flush_buffer(&self) -> anyhow::Result<cudarc::driver::CudaSlice<u8>> {
        let l2 = self
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .map_err(|e| anyhow!("reading the L2 size: {e:?}"))?;
        ensure!(
            l2 > 0,
            "the device reports no L2 size, so --cache cold cannot size its flush; leave --cache cold out"
        );
        self.stream
            .alloc_zeros::<u8>(2 * l2 as usize)
            .map_err(|e| anyhow!("allocating the {} byte L2 flush buffer: {e:?}", 2 * l2))
    }

    /// Asks for `variant` (`--kernel`) instead of the predicted best one.
    pub fn set_variant(&mut self, variant: Option<Variant>) {
        self.requested = variant;
    }

    /// The kernel of `op` of `alg` in the variant asked for, else in the
    /// one the static cost predicts best (`predicted_variant`).
    fn function(&self, alg: Algorithm, op: Operation) -> anyhow::Result<Kernel> {
        let built = variants(alg, op);
        let variant = match self.requested {
            Some(v) if built.contains(&v) => v,
            Some(v) => bail!(
                "{alg} {op} has no {} kernel (built: {})",
                v.name(),
                built
                    .iter()
                    .map(|b| b.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => self.predicted_variant(alg, op)?,
        };
        self.function_of(alg, op, variant)
    }

    fn function_of(
        &self,
        alg: Algorithm,
        op: Operation,
        variant: Variant,
    ) -> anyhow::Result<Kernel> {
        let name = kernels::variant_kernel_name(alg, op, variant);
        let unit = self.unit(alg)?;
        let func = unit
            .module
            .load_function(&name)
            .map_err(|e| anyhow!("kernel {name} not found in the module: {e:?}"))?;
        Ok(Kernel {
            func,
            variant,
            name,
            image: unit.image.clone(),
        })
    }

    /// The variant the static cost predicts fastest on this device: a
    /// cooperative one (no spills, no local memory beyond a small frame)
    /// when the one-thread kernel's local memory for the threads a
    /// multiprocessor holds is larger than the multiprocessor's on-chip
    /// shared memory / L1 (so its working set lives in L2 and DRAM), else
    /// the one-thread kernel. A GPU run of every variant (`--kernel`) is
    /// what decides; this is the default until then.
    fn predicted_variant(&self, alg: Algorithm, op: Operation) -> anyhow::Result<Variant> {
        use CUfunction_attribute_enum as A;
        let thread = self.function_of(alg, op, Variant::Thread)?;
        let local = |k: &Kernel| {
            k.func
                .get_attribute(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .unwrap_or(0)
                .max(0) as usize
        };
        let resident = self.resident_blocks(&thread).unwrap_or(0) as usize
            * thread.variant.threads_per_block(self.max_block(&thread)?) as usize;
        let off_chip = local(&thread) * resident > self.shared_per_sm;
        for &v in variants(alg, op).iter().filter(|v| **v != Variant::Thread) {
            let k = self.function_of(alg, op, v)?;
            if off_chip
                && local(&k) <= COOPERATIVE_MAX_LOCAL_BYTES
                && self.resident_blocks(&k).is_some()
            {
                return Ok(v);
            }
        }
        Ok(Variant::Thread)
    }

    /// The most threads per block `func` may be launched with.
    fn max_block(&self, func: &Kernel) -> anyhow::Result<u32> {
        let max = func
            .func
            .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|e| anyhow!("kernel attribute: {e:?}"))?;
        Ok(max.max(1) as u32)
    }

    /// Launch shape of `func` (the kernel of `op`) over `n` operations: one
    /// thread (or warp, or block) per operation, except signing, whose
    /// threads (the block variant: blocks) take messages from a queue: as
    /// many as the device holds at once, or fewer for a small batch (see
    /// `sign_threads`).
    fn shape(&self, func: &Kernel, op: Operation, n: usize) -> anyhow::Result<LaunchConfig> {
        let max = self.max_block(func)?;
        let threads = match op {
            Operation::Sign => {
                let block = func.variant.threads_per_block(max).max(1);
                let per_block = func.variant.operations_per_block(block);
                sign_threads(
                    n,
                    per_block,
                    self.resident_blocks(func),
                    self.sms,
                    self.resident_threads / (block / per_block) as usize,
                )
            }
            _ => n,
        };
        Ok(variant_launch_shape(
            func.variant,
            u32::try_from(threads).context("batch too large for one launch")?,
            max,
        ))
    }

    /// Device bytes of the signing workspaces a batch of `batch` operations
    /// of `alg` needs (one per thread of the signing launch; the block
    /// variant: one per block).
    fn sign_scratch_bytes(&self, alg: Algorithm, batch: usize) -> anyhow::Result<usize> {
        let f = self.function(alg, Operation::Sign)?;
        let shape = self.shape(&f, Operation::Sign, batch)?;
        Ok(match f.variant {
            Variant::Block => {
                shape.grid_dim.0 as usize * host::mldsa_sign_block_workspace_bytes(alg)
            }
            _ => launch_threads(&shape) * host::mldsa_sign_workspace_bytes(alg),
        })
    }

    /// (free bytes, bytes per operation, fixed bytes) of a batch of `op`
    /// with `cfg`'s message and context.
    fn memory_budget(
        &self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        func: &Kernel,
    ) -> anyhow::Result<(usize, usize, usize)> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(|e| anyhow!("cuMemGetInfo: {e:?}"))?;
        // The driver reserves each launched kernel's local memory for every
        // thread the device holds at once and keeps the largest reservation:
        // the heaviest kernel `prepare` launches counts, not only the timed one
        // (sign's frame is the largest of all before verify).
        let mut local = 0usize;
        for o in launch_chain(alg, op) {
            let f = if o == op {
                func.clone()
            } else {
                self.function(alg, o)?
            };
            let l = f
                .func
                .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .unwrap_or(0)
                .max(0) as usize;
            local = local.max(l);
        }
        // Signing's workspaces: for as many threads as the largest batch
        // launches, so the figure bounds every batch.
        let scratch = if launch_chain(alg, op).contains(&Operation::Sign) {
            self.sign_scratch_bytes(alg, u32::MAX as usize)?
        } else {
            0
        };
        let fixed = local * self.resident_threads
            + scratch
            + MAX_LIVE_BUFFERS * ALLOCATION_GRANULARITY_BYTES
            + cfg.context.len();
        Ok((free, peak_bytes_per_op(alg, op, cfg.message_size), fixed))
    }

    /// Refuses a batch that does not fit, naming the largest that does.
    fn check_memory(
        &self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        func: &Kernel,
    ) -> anyhow::Result<()> {
        let (free, per_op, fixed) = self.memory_budget(alg, op, cfg, func)?;
        if let Some(why) = memory_refusal(
            &format!("{alg} {op}"),
            cfg.batch,
            per_op,
            fixed,
            free,
            &self.device.name,
        ) {
            bail!(why)
        }
        match sizing::host_refusal(alg, op, cfg, sizing::host_available_bytes()) {
            Some(why) => bail!(why),
            None => Ok(()),
        }
    }

    /// Blocks of `func` one multiprocessor holds at once (the driver's
    /// occupancy calculator), at our block size.
    fn resident_blocks(&self, func: &Kernel) -> Option<u32> {
        let block = func.variant.threads_per_block(self.max_block(func).ok()?);
        func.func
            .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .ok()
            .filter(|b| *b > 0)
    }

    /// What a record says of the kernel it timed.
    fn kernel_info(&self, func: &Kernel, shape: &LaunchConfig) -> KernelInfo {
        use CUfunction_attribute_enum as A;
        let get = |a| func.func.get_attribute(a).ok().map(|v| v.max(0) as u32);
        let block = shape.block_dim.0;
        let per_sm = self.resident_blocks(func);
        KernelInfo {
            name: func.name.clone(),
            variant: func.variant.name().into(),
            shared_bytes_per_block: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
            image: func.image.clone(),
            threads_per_block: block,
            blocks: shape.grid_dim.0,
            registers_per_thread: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS),
            local_bytes_per_thread: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
            resident_blocks_per_sm: per_sm,
            occupancy_pct: per_sm
                .filter(|_| self.max_threads_per_sm > 0)
                .map(|b| 100.0 * f64::from(b * block) / f64::from(self.max_threads_per_sm)),
            multiprocessors: Some(self.sms),
            waves: per_sm.and_then(|b| {
                waves::waves(
                    u64::from(shape.grid_dim.0),
                    u64::from(self.sms),
                    u64::from(b),
                )
            }),
        }
    }

    /// Runs `func` over `n` operations, untimed (prerequisites made in
    /// `prepare`), and waits for it.
    fn launch_kernel(
        &self,
        func: &Kernel,
        op: Operation,
        n: usize,
        args: &mut KernelArgs,
    ) -> anyhow::Result<()> {
        let shape = self.shape(func, op, n)?;
        launch_kernel(&self.stream, &func.func, shape, n as u32, args)?;
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("kernel failed: {e:?}"))
    }

    /// One calibration launch of a whole wave (or what fits), then the
    /// largest whole-wave batch expected to run within `target`, at least
    /// one wave, within `fits` and `MAX_BATCH`.
    fn calibrate(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        target: std::time::Duration,
        per_wave: u64,
        fits: usize,
    ) -> anyhow::Result<(usize, BatchBasis)> {
        let cap = fits.min(crate::core::batching::MAX_BATCH) as u64;
        ensure!(cap > 0, "{alg} {op}: not even one operation fits in memory");
        let cal = per_wave.min(cap) as usize;
        let mut p = self.prepare(
            alg,
            op,
            &BatchConfig {
                batch: cal,
                ..cfg.clone()
            },
        )?;
        // The first launch also brings the clocks up; a second one, when
        // cheap, is the figure taken if faster.
        let mut t = p.run()?;
        if t < target / 4 {
            t = t.min(p.run()?);
        }
        drop(p);
        let secs = t.as_secs_f64().max(1e-9);
        let per_op = secs / cal as f64;
        let wave_s = per_op * per_wave as f64;
        let by_time = ((target.as_secs_f64() / wave_s).floor() as u64).max(1) * per_wave;
        let (batch, detail) = if by_time > cap {
            let b = waves::whole_waves_below(cap, per_wave, 1, 1);
            (
                b,
                format!(
                    "{} whole waves fit the {:.0} ms target, but the host and device memory hold at most {cap} operations: {b}",
                    by_time / per_wave,
                    target.as_secs_f64() * 1e3
                ),
            )
        } else if by_time == per_wave && wave_s > target.as_secs_f64() {
            (
                by_time,
                format!(
                    "one full wave ({per_wave} operations, about {:.1} ms) is the floor, above the {:.0} ms target",
                    wave_s * 1e3,
                    target.as_secs_f64() * 1e3
                ),
            )
        } else {
            (
                by_time,
                format!(
                    "{} whole waves of {per_wave} operations, about {:.1} ms a launch, the most within the {:.0} ms target",
                    by_time / per_wave,
                    wave_s * 1e3 * (by_time / per_wave) as f64,
                    target.as_secs_f64() * 1e3
                ),
            )
        };
        Ok((
            batch as usize,
            BatchBasis {
                method: "calibrated".into(),
                calibration_batch: Some(cal),
                calibration_seconds: Some(secs),
                target_seconds: Some(target.as_secs_f64()),
                ops_per_wave: Some(per_wave),
                detail,
            },
        ))
    }

    /// The loaded unit of `alg`'s family.
    fn unit(&self, alg: Algorithm) -> anyhow::Result<&LoadedUnit> {
        self.units
            .iter()
            .find(|u| u.unit == alg.family())
            .ok_or_else(|| {
                anyhow!(
                    "the {} kernels were not compiled: this backend was opened for other algorithms than {alg}",
                    kernels::unit_name(alg.family())
                )
            })
    }

    /// The device-side wait of `alg`'s module.
    fn hold_function(&self, alg: Algorithm) -> anyhow::Result<CudaFunction> {
        self.unit(alg)?
            .module
            .load_function(kernels::HOLD_KERNEL)
            .map_err(|e| {
                anyhow!(
                    "kernel {} not found in the module: {e:?}",
                    kernels::HOLD_KERNEL
                )
            })
    }
}

impl Backend for NativeGpu {
    fn name(&self) -> &str {
        NAME
    }
    fn provider(&self) -> &str {
        "pqcprof-native"
    }
    fn device(&self) -> Device {
        self.device.clone()
    }

    fn default_batch(&mut self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> usize {
        let Ok(func) = self.function(alg, op) else {
            return cfg.batch;
        };
        let (Some(per_sm), Ok(shape)) = (self.resident_blocks(&func), self.shape(&func, op, 1))
        else {
            return cfg.batch;
        };
        let (sms, per_sm, tpb) = (
            u64::from(self.sms),
            u64::from(per_sm),
            u64::from(func.variant.operations_per_block(shape.block_dim.0)),
        );
        let Some(full) = waves::full_wave_batch(sms, per_sm, tpb, cfg.batch as u64) else {
            return cfg.batch;
        };
        let full = usize::try_from(full).unwrap_or(usize::MAX);
        match self.max_batch(alg, op, cfg) {
            Some(fits) if fits < full => {
                waves::whole_waves_below(fits as u64, sms, per_sm, tpb) as usize
            }
            _ => full,
        }
    }

    fn max_batch(&mut self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> Option<usize> {
        let func = self.function(alg, op).ok()?;
        let (free, per_op, fixed) = self.memory_budget(alg, op, cfg, &func).ok()?;
        let device = max_batch(free, per_op, fixed);
        let host = host_fit(alg, op, cfg, sizing::host_available_bytes());
        Some(device.min(host).min(u32::MAX as usize))
    }

    fn calibrates_default_batch(&self) -> bool {
        true
    }

    fn calibrated_batch(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        target: std::time::Duration,
    ) -> Option<anyhow::Result<(usize, BatchBasis)>> {
        let func = self.function(alg, op).ok()?;
        let per_sm = self.resident_blocks(&func)?;
        let block = self.shape(&func, op, 1).ok()?.block_dim.0;
        // Operations, not threads: a cooperative variant gives one
        // operation a warp or a block.
        let per_block = func.variant.operations_per_block(block);
        let per_wave = u64::from(self.sms) * u64::from(per_sm) * u64::from(per_block);
        if per_wave == 0 {
            return None;
        }
        let fits = self.max_batch(alg, op, cfg)?;
        Some(self.calibrate(alg, op, cfg, target, per_wave, fits))
    }

    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        ensure!(alg.has_operation(op), "{alg} has no {op} operation");
        let n = cfg.batch;
        let func = self.function(alg, op)?;
        self.check_memory(alg, op, cfg, &func)?;
        let mut p = inputs::Staging::new(n)?;
        let sign_scratch = match (alg.kind(), op) {
            (Kind::Signature, Operation::Sign | Operation::Verify) => {
                self.sign_scratch_bytes(alg, n)?
            }
            _ => 0,
        };
        let run = |op: Operation, args: &mut KernelArgs| {
            let func = self.function(alg, op)?;
            self.launch_kernel(&func, op, n, args)
        };
        let maker = inputs::Maker {
            stream: &self.stream,
            run: &run,
            sign_scratch,
        };
        let mut args = match alg.kind() {
            Kind::Kem => maker.kem_args(alg, op, &mut p)?,
            Kind::Signature => maker.dsa_args(alg, op, cfg, &mut p)?,
        };
        let inputs::Staging { pair, rng, .. } = p;
        let host_inputs = batch::host_inputs(&self.stream, alg, cfg.message_size, &mut args)?;
        let find = |name: &str| {
            host_inputs
                .iter()
                .find(|h| h.name == name)
                .map(|h| h.bytes.clone())
                .unwrap_or_default()
        };
        let (valid_cts, valid_sigs) = (find("c"), find("signature"));
        let shape = self.shape(&func, op, n)?;
        let kernel = self.kernel_info(&func, &shape);
        let flush = match self.cold_cache {
            true => Some(self.flush_buffer()?),
            false => None,
        };
        Ok(Box::new(GpuBatch {
            flush,
            cuda: self.ctx.clone(),
            stream: self.stream.clone(),
            hold: self.hold_function(alg)?,
            staged: None,
            func: func.func.clone(),
            shape,
            kernel,
            alg,
            op,
            n,
            ctx: cfg.context.clone(),
            args,
            inputs: host_inputs,
            pair,
            valid_sigs,
            valid: vec![true; n],
            valid_cts,
            tampered: vec![],
            rng,
            runs: crate::backend::gate::Runs::new(cfg.gate, n, 0),
            last_hold: None,
        }))
    }
}
