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

pub mod gate;
pub mod host;
pub mod kernels;
pub mod resources;

use crate::backend::{Backend, BatchConfig, Prepared};

use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::core::waves;
use crate::schema::device::KernelInfo;
use crate::schema::device::{Device, DeviceKind, GateReport};
use anyhow::{anyhow, bail, ensure, Context};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute_enum};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};
use rand::{RngCore, SeedableRng};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Backend name on the command line and in files.
pub const NAME: &str = "native-gpu";

/// Threads per block of every launch: one thread computes one operation.
/// The single place to change when a block-cooperative version replaces it.
pub const THREADS_PER_BLOCK: u32 = 128;

/// How long timed launches wait on the device before they start,
/// nanoseconds: far longer than the host needs to issue an event, a launch
/// and an event (tens of microseconds), and small beside any batch.
pub const HOLD_NS: u64 = 500_000;

/// What a record says of how its latency (and every GPU window) was timed.
pub const LATENCY_METHOD: &str = "CUDA events around the kernel alone: the start event, the launch and the end event are queued behind a 0.5 ms device-side wait (pqcprof_hold), so the host's cuLaunchKernel call is outside the window";

/// Launch shape for `n` operations of `func`.
pub fn launch_shape(n: u32, max_threads_per_block: u32) -> LaunchConfig {
    let block = THREADS_PER_BLOCK.min(max_threads_per_block.max(1));
    LaunchConfig {
        grid_dim: (n.div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Device bytes one operation's buffers take.
pub fn device_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    match (alg.kind(), op) {
        (Kind::Kem, Operation::KeyGen) => 64 + pk + sk,
        (Kind::Kem, Operation::Encaps) => pk + 32 + s.ciphertext_bytes.unwrap_or(0) + 32,
        (Kind::Kem, _) => sk + s.ciphertext_bytes.unwrap_or(0) + 32,
        (Kind::Signature, Operation::KeyGen) => 32 + pk + sk,
        (Kind::Signature, Operation::Sign) => {
            sk + message + 32 + alg.signature_stride().unwrap_or(0)
        }
        (Kind::Signature, _) => pk + message + alg.signature_stride().unwrap_or(0) + 4,
    }
}

/// The operations `prepare` launches for `op`, in order, the timed one
/// last: keys first, then ciphertexts or signatures when `op` needs them.
pub fn launch_chain(alg: Algorithm, op: Operation) -> Vec<Operation> {
    use Operation::*;
    match (alg.kind(), op) {
        (_, KeyGen) => vec![KeyGen],
        (Kind::Kem, Encaps) | (Kind::Signature, Sign) => vec![KeyGen, op],
        (Kind::Kem, _) => vec![KeyGen, Encaps, op],
        (Kind::Signature, _) => vec![KeyGen, Sign, op],
    }
}

/// Device bytes per operation at the peak of `prepare` and the timed runs
/// of `op`: the largest of its phases (see `prepare`), each of which holds
/// only what a later step still needs (e.g. decaps keeps keygen's `sk` and
/// encaps's `ct` on the device instead of uploading copies).
pub fn peak_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    let ct = s.ciphertext_bytes.unwrap_or(0);
    let sig = alg.signature_stride().unwrap_or(0);
    use Operation::*;
    let phases: Vec<usize> = match (alg.kind(), op) {
        // d, z, pk, sk.
        (Kind::Kem, KeyGen) => vec![64 + pk + sk],
        // Then pk, m, ct, ss (and sk when decaps follows).
        (Kind::Kem, Encaps) => vec![64 + pk + sk, pk + 32 + ct + 32],
        // Then sk, ct, ss.
        (Kind::Kem, _) => vec![64 + pk + sk, sk + pk + 32 + ct + 32, sk + ct + 32],
        // xi, pk, sk.
        (Kind::Signature, KeyGen) => vec![32 + pk + sk],
        // Then sk, msg, rnd, sig (and pk when verify follows).
        (Kind::Signature, Sign) => vec![32 + pk + sk, sk + message + 32 + sig],
        // Then pk, msg, sig, ok.
        (Kind::Signature, _) => vec![
            32 + pk + sk,
            pk + sk + message + 32 + sig,
            pk + message + sig + 4,
        ],
    };
    phases.into_iter().max().unwrap_or(0)
}

/// Device buffers alive at once at most during `prepare` (six: encaps with
/// the secret keys kept for decaps, or sign with the public keys kept for
/// verify, plus the context), each of which the driver may round up to its
/// allocation granularity.
pub const MAX_LIVE_BUFFERS: usize = 7;

/// Allocation granularity assumed per live buffer: stream-ordered pools
/// grow in 2 MiB steps.
pub const ALLOCATION_GRANULARITY_BYTES: usize = 2 << 20;

/// The largest batch whose buffers and per-thread local memory fit in
/// `free` bytes with 10% to spare.
pub fn max_batch(free: usize, per_op: usize, local_bytes_resident: usize) -> usize {
    let usable = free / 10 * 9;
    usable.saturating_sub(local_bytes_resident) / per_op.max(1)
}

/// Why a batch of `batch` operations needing `per_op` device bytes each,
/// plus `fixed` bytes whatever the batch, does not fit in `free` bytes of
/// `device`, naming the largest batch that does; `None` when it fits.
pub fn memory_refusal(
    what: &str,
    batch: usize,
    per_op: usize,
    fixed: usize,
    free: usize,
    device: &str,
) -> Option<String> {
    let fits = max_batch(free, per_op, fixed);
    let mib = |b: usize| b / (1024 * 1024);
    (batch > fits).then(|| {
        let needs = format!(
            "batch {batch} of {what} needs about {} MiB on {device} but {} MiB are free",
            mib(per_op.saturating_mul(batch).saturating_add(fixed)),
            mib(free)
        );
        if fits == 0 {
            format!(
                "{needs}; what it needs whatever the batch ({} MiB: the kernels' local memory for every thread the device holds at once, and allocation granularity) leaves no room for even one operation: free device memory or use a device with more",
                mib(fixed)
            )
        } else {
            format!("{needs}; at most {fits} fits (use --batch {fits} or less)")
        }
    })
}

/// Our kernels on one GPU.
pub struct NativeGpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    device: Device,
    /// `sm_XY` the kernels were compiled for.
    pub arch: String,
    /// PCI bus id, for NVML.
    pub pci_bus_id: String,
    /// Seconds NVRTC (or reading the cache) took.
    pub compile_seconds: f64,
    /// Whether the kernels were compiled now or read from the cache.
    pub origin: kernels::Origin,
    /// What the driver loaded: machine code, or PTX it compiled itself.
    pub image: String,
    resident_threads: usize,
    max_threads_per_sm: u32,
    /// Multiprocessors of the device.
    sms: u32,
}

impl NativeGpu {
    /// Opens GPU `ordinal`, compiles the kernels for it and loads them.
    /// The caller has checked (gpu::probe) that the driver and NVRTC exist.
    pub fn new(ordinal: usize) -> anyhow::Result<Self> {
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
        let pci_bus_id = format!(
            "{:08x}:{:02x}:{:02x}.0",
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
        );
        let max_threads_per_sm =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
        let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        let resident_threads = sms * max_threads_per_sm;
        let arch = kernels::arch_for(cc);
        let t0 = Instant::now();
        let (compiled, origin) = kernels::compile_cached(&arch)?;
        let compile_seconds = t0.elapsed().as_secs_f64();
        let nvrtc = kernels::nvrtc_label().unwrap_or_else(|| "NVRTC".into());
        // Machine code first: no JIT, and no dependence on the driver
        // knowing this NVRTC's PTX ISA. The PTX is the fallback.
        let (module, image) = match ctx.load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin))
        {
            Ok(m) => (m, format!("{arch} machine code from {nvrtc}")),
            Err(cubin_err) => {
                let m = ctx
                    .load_module(cudarc::nvrtc::Ptx::from_src(compiled.ptx))
                    .map_err(|e| {
                        anyhow!(
                            "loading the compiled kernels failed: machine code: {cubin_err:?}; PTX: {e:?}"
                        )
                    })?;
                eprintln!(
                    "pqcprof: the driver refused the {arch} machine code ({cubin_err:?}); it compiled the PTX instead"
                );
                (
                    m,
                    format!("PTX from {nvrtc}, compiled by the driver (machine code refused: {cubin_err:?})"),
                )
            }
        };
        let device = Device {
            kind: DeviceKind::Gpu,
            name: ctx.name().unwrap_or_else(|_| format!("GPU {ordinal}")),
            memory_total_mb: (ctx.total_mem().unwrap_or(0) / (1024 * 1024)) as u64,
        };
        let stream = ctx.default_stream();
        Ok(NativeGpu {
            ctx,
            stream,
            module,
            device,
            arch,
            pci_bus_id,
            compile_seconds,
            origin,
            image,
            resident_threads,
            max_threads_per_sm: max_threads_per_sm as u32,
            sms: sms as u32,
        })
    }

    fn function(&self, alg: Algorithm, op: Operation) -> anyhow::Result<CudaFunction> {
        let name = kernels::kernel_name(alg, op);
        self.module
            .load_function(&name)
            .map_err(|e| anyhow!("kernel {name} not found in the module: {e:?}"))
    }

    fn shape(&self, func: &CudaFunction, n: usize) -> anyhow::Result<LaunchConfig> {
        let max = func
            .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(|e| anyhow!("kernel attribute: {e:?}"))?;
        Ok(launch_shape(
            u32::try_from(n).context("batch too large for one launch")?,
            max as u32,
        ))
    }

    /// (free bytes, bytes per operation, fixed bytes) of a batch of `op`
    /// with `cfg`'s message and context.
    fn memory_budget(
        &self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        func: &CudaFunction,
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
                .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                .unwrap_or(0)
                .max(0) as usize;
            local = local.max(l);
        }
        let fixed = local * self.resident_threads
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
        func: &CudaFunction,
    ) -> anyhow::Result<()> {
        let (free, per_op, fixed) = self.memory_budget(alg, op, cfg, func)?;
        match memory_refusal(
            &format!("{alg} {op}"),
            cfg.batch,
            per_op,
            fixed,
            free,
            &self.device.name,
        ) {
            Some(why) => bail!(why),
            None => Ok(()),
        }
    }

    /// Blocks of `func` one multiprocessor holds at once (the driver's
    /// occupancy calculator), at our block size.
    fn resident_blocks(&self, func: &CudaFunction) -> Option<u32> {
        let block = self.shape(func, 1).ok()?.block_dim.0;
        func.occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
            .ok()
            .filter(|b| *b > 0)
    }

    /// What a record says of the kernel it timed.
    fn kernel_info(
        &self,
        alg: Algorithm,
        op: Operation,
        func: &CudaFunction,
        shape: &LaunchConfig,
    ) -> KernelInfo {
        use CUfunction_attribute_enum as A;
        let get = |a| func.get_attribute(a).ok().map(|v| v.max(0) as u32);
        let block = shape.block_dim.0;
        let per_sm = self.resident_blocks(func);
        KernelInfo {
            name: kernels::kernel_name(alg, op),
            image: self.image.clone(),
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
    fn launch(&self, func: &CudaFunction, n: usize, args: &mut KernelArgs) -> anyhow::Result<()> {
        let shape = self.shape(func, n)?;
        launch(&self.stream, func, shape, n as u32, args)?;
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("kernel failed: {e:?}"))
    }

    fn hold_function(&self) -> anyhow::Result<CudaFunction> {
        self.module
            .load_function(kernels::HOLD_KERNEL)
            .map_err(|e| {
                anyhow!(
                    "kernel {} not found in the module: {e:?}",
                    kernels::HOLD_KERNEL
                )
            })
    }
}

/// A kernel's arguments, in its parameter order (see cuda/native/*_kernels.cuh).
enum KernelArgs {
    KemKeygen {
        pk: CudaSlice<u8>,
        sk: CudaSlice<u8>,
        d: CudaSlice<u8>,
        z: CudaSlice<u8>,
    },
    KemEncaps {
        ct: CudaSlice<u8>,
        ss: CudaSlice<u8>,
        pk: CudaSlice<u8>,
        m: CudaSlice<u8>,
    },
    KemDecaps {
        ss: CudaSlice<u8>,
        ct: CudaSlice<u8>,
        sk: CudaSlice<u8>,
    },
    DsaKeygen {
        pk: CudaSlice<u8>,
        sk: CudaSlice<u8>,
        xi: CudaSlice<u8>,
    },
    DsaSign {
        sig: CudaSlice<u8>,
        stride: u32,
        msg: CudaSlice<u8>,
        msg_len: u32,
        ctx: CudaSlice<u8>,
        ctx_len: u32,
        sk: CudaSlice<u8>,
        rnd: CudaSlice<u8>,
    },
    DsaVerify {
        ok: CudaSlice<i32>,
        msg: CudaSlice<u8>,
        msg_len: u32,
        ctx: CudaSlice<u8>,
        ctx_len: u32,
        sig: CudaSlice<u8>,
        stride: u32,
        pk: CudaSlice<u8>,
    },
}

impl KernelArgs {
    /// The device buffers the kernel reads, in parameter order.
    fn inputs_mut(&mut self) -> Vec<&mut CudaSlice<u8>> {
        match self {
            KernelArgs::KemKeygen { d, z, .. } => vec![d, z],
            KernelArgs::KemEncaps { pk, m, .. } => vec![pk, m],
            KernelArgs::KemDecaps { ct, sk, .. } => vec![ct, sk],
            KernelArgs::DsaKeygen { xi, .. } => vec![xi],
            KernelArgs::DsaSign {
                msg, ctx, sk, rnd, ..
            } => vec![msg, ctx, sk, rnd],
            KernelArgs::DsaVerify {
                msg, ctx, sig, pk, ..
            } => vec![msg, ctx, sig, pk],
        }
    }

    /// The byte buffers the kernel writes (verify's flags are `ok_flags`).
    fn outputs(&self) -> Vec<&CudaSlice<u8>> {
        match self {
            KernelArgs::KemKeygen { pk, sk, .. } | KernelArgs::DsaKeygen { pk, sk, .. } => {
                vec![pk, sk]
            }
            KernelArgs::KemEncaps { ct, ss, .. } => vec![ct, ss],
            KernelArgs::KemDecaps { ss, .. } => vec![ss],
            KernelArgs::DsaSign { sig, .. } => vec![sig],
            KernelArgs::DsaVerify { .. } => vec![],
        }
    }

    /// Verify's per-operation result flags.
    fn ok_flags(&self) -> Option<&CudaSlice<i32>> {
        match self {
            KernelArgs::DsaVerify { ok, .. } => Some(ok),
            _ => None,
        }
    }
}

/// Queues `HOLD_NS` of device-side waiting on `stream`.
fn hold(stream: &Arc<CudaStream>, hold: &CudaFunction) -> anyhow::Result<()> {
    let ns = HOLD_NS;
    let mut b = stream.launch_builder(hold);
    b.arg(&ns);
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: pqcprof_hold takes one pqc_u64 (unsigned long long), pushed
    // as a u64; it touches no memory.
    unsafe { b.launch(one) }.map_err(|e| anyhow!("launch of {}: {e:?}", kernels::HOLD_KERNEL))?;
    Ok(())
}

/// An event with timing enabled, recorded on `stream` now.
fn timing_event(stream: &Arc<CudaStream>) -> anyhow::Result<cudarc::driver::CudaEvent> {
    stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| anyhow!("recording a timing event: {e:?}"))
}

/// Runs `work` between two timing events queued behind the device-side
/// hold, then waits for the stream: the device time of `work` alone.
fn timed(
    stream: &Arc<CudaStream>,
    hold_fn: &CudaFunction,
    work: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Duration> {
    hold(stream, hold_fn)?;
    let start = timing_event(stream)?;
    work()?;
    let end = timing_event(stream)?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(|e| anyhow!("kernel failed or timing events unusable: {e:?}"))?;
    stream
        .synchronize()
        .map_err(|e| anyhow!("kernel failed: {e:?}"))?;
    Ok(Duration::from_secs_f64(f64::from(ms) / 1000.0))
}

/// Queues one launch of `func` over `n` operations (not waited for).
fn launch(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    shape: LaunchConfig,
    n: u32,
    args: &mut KernelArgs,
) -> anyhow::Result<()> {
    let mut b = stream.launch_builder(func);
    // SAFETY (for the launch below): each arm pushes exactly the kernel's
    // parameters, in order and with the kernel's types: device pointers as
    // CudaSlice<u8>/<i32> and pqc_u32 scalars as u32, n last. Every buffer
    // was allocated for n operations of this algorithm's sizes.
    match args {
        KernelArgs::KemKeygen { pk, sk, d, z } => {
            b.arg(pk).arg(sk).arg(&*d).arg(&*z);
        }
        KernelArgs::KemEncaps { ct, ss, pk, m } => {
            b.arg(ct).arg(ss).arg(&*pk).arg(&*m);
        }
        KernelArgs::KemDecaps { ss, ct, sk } => {
            b.arg(ss).arg(&*ct).arg(&*sk);
        }
        KernelArgs::DsaKeygen { pk, sk, xi } => {
            b.arg(pk).arg(sk).arg(&*xi);
        }
        KernelArgs::DsaSign {
            sig,
            stride,
            msg,
            msg_len,
            ctx,
            ctx_len,
            sk,
            rnd,
        } => {
            b.arg(sig)
                .arg(&*stride)
                .arg(&*msg)
                .arg(&*msg_len)
                .arg(&*ctx)
                .arg(&*ctx_len)
                .arg(&*sk)
                .arg(&*rnd);
        }
        KernelArgs::DsaVerify {
            ok,
            msg,
            msg_len,
            ctx,
            ctx_len,
            sig,
            stride,
            pk,
        } => {
            b.arg(ok)
                .arg(&*msg)
                .arg(&*msg_len)
                .arg(&*ctx)
                .arg(&*ctx_len)
                .arg(&*sig)
                .arg(&*stride)
                .arg(&*pk);
        }
    }
    b.arg(&n);
    // SAFETY: see above.
    unsafe { b.launch(shape) }.map_err(|e| anyhow!("kernel launch failed: {e:?}"))?;
    Ok(())
}

fn random_bytes(rng: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

fn htod(stream: &Arc<CudaStream>, v: &[u8]) -> anyhow::Result<CudaSlice<u8>> {
    // Zero-length device buffers are not allocatable: keep one byte.
    if v.is_empty() {
        return stream
            .alloc_zeros::<u8>(1)
            .map_err(|e| anyhow!("cuMemAlloc: {e:?}"));
    }
    stream
        .clone_htod(v)
        .map_err(|e| anyhow!("copy to the GPU failed: {e:?}"))
}

/// Overwrites the device buffer `dst` with `v` (same length).
fn htod_into(stream: &Arc<CudaStream>, v: &[u8], dst: &mut CudaSlice<u8>) -> anyhow::Result<()> {
    stream
        .memcpy_htod(v, dst)
        .map_err(|e| anyhow!("copy to the GPU failed: {e:?}"))
}

fn zeros(stream: &Arc<CudaStream>, n: usize) -> anyhow::Result<CudaSlice<u8>> {
    stream
        .alloc_zeros::<u8>(n.max(1))
        .map_err(|e| anyhow!("cuMemAlloc of {n} bytes failed: {e:?}"))
}

fn dtoh<T: cudarc::driver::DeviceRepr + Default + Clone>(
    stream: &Arc<CudaStream>,
    s: &CudaSlice<T>,
) -> anyhow::Result<Vec<T>> {
    stream
        .clone_dtoh(s)
        .map_err(|e| anyhow!("copy from the GPU failed: {e:?}"))
}

/// The sampled slots `idx` of a device buffer of `len`-byte slots, in `idx`
/// order: the gate's only copies back, so a large batch needs no host
/// memory for its whole output.
fn dtoh_slots(
    stream: &Arc<CudaStream>,
    buf: &CudaSlice<u8>,
    idx: &[usize],
    len: usize,
) -> anyhow::Result<Vec<u8>> {
    let mut out = vec![0u8; idx.len() * len];
    for (j, &i) in idx.iter().enumerate() {
        let src = buf.slice(i * len..(i + 1) * len);
        stream
            .memcpy_dtoh(&src, &mut out[j * len..(j + 1) * len])
            .map_err(|e| anyhow!("copy from the GPU failed: {e:?}"))?;
    }
    stream
        .synchronize()
        .map_err(|e| anyhow!("copy from the GPU failed: {e:?}"))?;
    Ok(out)
}

/// Page-locked host memory, `len` elements (cuMemHostAlloc, no flags).
fn pinned<T: cudarc::driver::DeviceRepr>(
    ctx: &Arc<CudaContext>,
    len: usize,
) -> anyhow::Result<PinnedHostSlice<T>> {
    // SAFETY: the memory is written by a copy before anything reads it.
    unsafe { ctx.alloc_pinned_with_flags::<T>(len.max(1), 0) }
        .map_err(|e| anyhow!("pinned host memory of {len} elements refused: {e:?}"))
}

/// Pinned copies of a batch's inputs and room for its outputs, for the
/// end-to-end runs.
struct Staged {
    inputs: Vec<PinnedHostSlice<u8>>,
    outputs: Vec<PinnedHostSlice<u8>>,
    ok: Option<PinnedHostSlice<i32>>,
}

/// What the gate needs besides the outputs.
#[derive(Default)]
struct HostSide {
    d: Vec<u8>,
    z: Vec<u8>,
    m: Vec<u8>,
    xi: Vec<u8>,
    rnd: Vec<u8>,
    msg: Vec<u8>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    ct: Vec<u8>,
    expected_ss: Vec<u8>,
    tampered: Vec<usize>,
}

struct GpuBatch {
    cuda: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    hold: CudaFunction,
    staged: Option<Staged>,
    func: CudaFunction,
    shape: LaunchConfig,
    kernel: KernelInfo,
    alg: Algorithm,
    op: Operation,
    n: usize,
    msg_len: usize,
    ctx: Vec<u8>,
    args: KernelArgs,
    host: HostSide,
    sample: Vec<usize>,
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
        let (Some(per_sm), Ok(shape)) = (self.resident_blocks(&func), self.shape(&func, 1)) else {
            return cfg.batch;
        };
        let (sms, per_sm, tpb) = (
            u64::from(self.sms),
            u64::from(per_sm),
            u64::from(shape.block_dim.0),
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
        Some(max_batch(free, per_op, fixed).min(u32::MAX as usize))
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
        let s = alg.sizes();
        let st = &self.stream;
        let mut rng = rand_chacha::ChaCha20Rng::from_os_rng();
        let mut host = HostSide::default();
        let sample = gate::sample_indices(n, gate::MIN_SAMPLE);
        let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
        // Each step frees what no later step needs and reuses what it does
        // (keys and ciphertexts stay on the device), so the device holds at
        // most one phase's buffers at a time: what `peak_bytes_per_op` counts.
        let args = match (alg.kind(), op) {
            (Kind::Kem, _) => {
                host.d = random_bytes(&mut rng, 32 * n);
                host.z = random_bytes(&mut rng, 32 * n);
                let mut keygen = KernelArgs::KemKeygen {
                    pk: zeros(st, lpk * n)?,
                    sk: zeros(st, lsk * n)?,
                    d: htod(st, &host.d)?,
                    z: htod(st, &host.z)?,
                };
                if op == Operation::KeyGen {
                    keygen
                } else {
                    // Keys made on the GPU, before timing.
                    self.launch(&self.function(alg, Operation::KeyGen)?, n, &mut keygen)?;
                    let KernelArgs::KemKeygen { pk, sk, d, z } = keygen else {
                        unreachable!()
                    };
                    drop((d, z));
                    host.pk = dtoh(st, &pk)?;
                    host.sk = dtoh(st, &sk)?;
                    // Encaps's gate needs the secret keys on the host only.
                    let sk = (op != Operation::Encaps).then_some(sk);
                    host.m = random_bytes(&mut rng, 32 * n);
                    let lct = s.ciphertext_bytes.unwrap_or(0);
                    let mut encaps = KernelArgs::KemEncaps {
                        ct: zeros(st, lct * n)?,
                        ss: zeros(st, 32 * n)?,
                        pk,
                        m: htod(st, &host.m)?,
                    };
                    if op == Operation::Encaps {
                        encaps
                    } else {
                        self.launch(&self.function(alg, Operation::Encaps)?, n, &mut encaps)?;
                        let KernelArgs::KemEncaps { mut ct, ss, pk, m } = encaps else {
                            unreachable!()
                        };
                        drop((pk, m));
                        host.ct = dtoh(st, &ct)?;
                        host.expected_ss = dtoh(st, &ss)?;
                        drop(ss);
                        // One sampled ciphertext is tampered with, so the
                        // batch exercises implicit rejection too; the
                        // ciphertexts go back into the GPU's own buffer.
                        if n > 1 {
                            let t = sample[1];
                            host.ct[t * lct + 5] ^= 0x20;
                            host.tampered.push(t);
                        }
                        htod_into(st, &host.ct, &mut ct)?;
                        KernelArgs::KemDecaps {
                            ss: zeros(st, 32 * n)?,
                            ct,
                            sk: sk.ok_or_else(|| anyhow!("decaps lost its secret keys"))?,
                        }
                    }
                }
            }
            (Kind::Signature, _) => {
                host.xi = random_bytes(&mut rng, 32 * n);
                let mut keygen = KernelArgs::DsaKeygen {
                    pk: zeros(st, lpk * n)?,
                    sk: zeros(st, lsk * n)?,
                    xi: htod(st, &host.xi)?,
                };
                if op == Operation::KeyGen {
                    keygen
                } else {
                    self.launch(&self.function(alg, Operation::KeyGen)?, n, &mut keygen)?;
                    let KernelArgs::DsaKeygen { pk, sk, xi } = keygen else {
                        unreachable!()
                    };
                    drop(xi);
                    host.pk = dtoh(st, &pk)?;
                    host.sk = dtoh(st, &sk)?;
                    // Sign's gate needs the public keys on the host only.
                    let pk = (op != Operation::Sign).then_some(pk);
                    host.msg = cfg.message().repeat(n);
                    host.rnd = random_bytes(&mut rng, 32 * n);
                    let stride = alg.signature_stride().unwrap_or(0);
                    let mut sign = KernelArgs::DsaSign {
                        sig: zeros(st, stride * n)?,
                        stride: stride as u32,
                        msg: htod(st, &host.msg)?,
                        msg_len: cfg.message_size as u32,
                        ctx: htod(st, &cfg.context)?,
                        ctx_len: cfg.context.len() as u32,
                        sk,
                        rnd: htod(st, &host.rnd)?,
                    };
                    if op == Operation::Sign {
                        sign
                    } else {
                        self.launch(&self.function(alg, Operation::Sign)?, n, &mut sign)?;
                        let KernelArgs::DsaSign {
                            mut sig,
                            msg,
                            ctx,
                            sk,
                            rnd,
                            ..
                        } = sign
                        else {
                            unreachable!()
                        };
                        drop((sk, rnd));
                        let mut sigs = dtoh(st, &sig)?;
                        if n > 1 {
                            let t = sample[1];
                            sigs[t * stride + 17] ^= 0x04;
                            host.tampered.push(t);
                        }
                        htod_into(st, &sigs, &mut sig)?;
                        KernelArgs::DsaVerify {
                            ok: st
                                .alloc_zeros::<i32>(n)
                                .map_err(|e| anyhow!("cuMemAlloc: {e:?}"))?,
                            msg,
                            msg_len: cfg.message_size as u32,
                            ctx,
                            ctx_len: cfg.context.len() as u32,
                            sig,
                            stride: stride as u32,
                            pk: pk.ok_or_else(|| anyhow!("verify lost its public keys"))?,
                        }
                    }
                }
            }
        };
        let shape = self.shape(&func, n)?;
        let kernel = self.kernel_info(alg, op, &func, &shape);
        Ok(Box::new(GpuBatch {
            cuda: self.ctx.clone(),
            stream: self.stream.clone(),
            hold: self.hold_function()?,
            staged: None,
            func,
            shape,
            kernel,
            alg,
            op,
            n,
            msg_len: cfg.message_size,
            ctx: cfg.context.clone(),
            args,
            host,
            sample,
        }))
    }
}

impl GpuBatch {
    /// Queues one launch of the timed kernel over the whole batch.
    fn queue_launch(&mut self) -> anyhow::Result<()> {
        launch(
            &self.stream,
            &self.func,
            self.shape,
            self.n as u32,
            &mut self.args,
        )
    }

    /// Pinned copies of the inputs as they are on the device now, and
    /// pinned room for the outputs.
    fn stage(&mut self) -> anyhow::Result<Staged> {
        let mut inputs = vec![];
        for d in self.args.inputs_mut() {
            let mut h = pinned::<u8>(&self.cuda, d.len())?;
            self.stream
                .memcpy_dtoh(&*d, &mut h)
                .map_err(|e| anyhow!("staging inputs: {e:?}"))?;
            inputs.push(h);
        }
        let outputs = self
            .args
            .outputs()
            .iter()
            .map(|d| pinned::<u8>(&self.cuda, d.len()))
            .collect::<anyhow::Result<_>>()?;
        let ok = match self.args.ok_flags() {
            Some(d) => Some(pinned::<i32>(&self.cuda, d.len())?),
            None => None,
        };
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("staging inputs: {e:?}"))?;
        Ok(Staged {
            inputs,
            outputs,
            ok,
        })
    }
}

impl Prepared for GpuBatch {
    fn run(&mut self) -> anyhow::Result<Duration> {
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        timed(&st, &hold, || self.queue_launch())
    }

    fn run_end_to_end(&mut self) -> Option<anyhow::Result<Duration>> {
        if self.staged.is_none() {
            match self.stage() {
                Ok(s) => self.staged = Some(s),
                Err(e) => return Some(Err(e)),
            }
        }
        let mut staged = self.staged.take()?;
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        let copy_err = |e: cudarc::driver::DriverError| anyhow!("end-to-end copy failed: {e:?}");
        let r = timed(&st, &hold, || {
            for (h, d) in staged.inputs.iter().zip(self.args.inputs_mut()) {
                st.memcpy_htod(h, d).map_err(copy_err)?;
            }
            self.queue_launch()?;
            for (d, h) in self
                .args
                .outputs()
                .into_iter()
                .zip(staged.outputs.iter_mut())
            {
                st.memcpy_dtoh(d, h).map_err(copy_err)?;
            }
            if let (Some(d), Some(h)) = (self.args.ok_flags(), staged.ok.as_mut()) {
                st.memcpy_dtoh(d, h).map_err(copy_err)?;
            }
            Ok(())
        });
        self.staged = Some(staged);
        Some(r)
    }

    fn run_back_to_back(&mut self, launches: usize) -> anyhow::Result<()> {
        for _ in 0..launches {
            self.queue_launch()?;
        }
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("kernel failed: {e:?}"))
    }

    fn end_to_end_window(&self) -> &'static str {
        "inputs copied from pinned host memory to the GPU, one kernel launch, outputs copied back to pinned host memory, between two CUDA events (timing enabled) queued behind a 0.5 ms device-side wait"
    }

    fn latency_method(&self) -> &'static str {
        LATENCY_METHOD
    }

    fn check(&mut self) -> anyhow::Result<GateReport> {
        let s = self.alg.sizes();
        let (alg, idx, h, st) = (self.alg, &self.sample, &self.host, &self.stream);
        let mut checks = vec![];
        match &self.args {
            KernelArgs::KemKeygen { pk, sk, .. } => {
                gate::mlkem_keygen(
                    alg,
                    idx,
                    &h.d,
                    &h.z,
                    &dtoh_slots(st, pk, idx, s.public_key_bytes)?,
                    &dtoh_slots(st, sk, idx, s.secret_key_bytes)?,
                )?;
                checks.push("sampled key pairs equal the host build for the same (d, z); liboqs round trip on each".into());
            }
            KernelArgs::KemEncaps { ct, ss, .. } => {
                let lct = s.ciphertext_bytes.unwrap_or(0);
                gate::mlkem_encaps(
                    alg,
                    idx,
                    &h.pk,
                    &h.sk,
                    &h.m,
                    &dtoh_slots(st, ct, idx, lct)?,
                    &dtoh_slots(st, ss, idx, 32)?,
                )?;
                checks.push("liboqs decapsulates sampled GPU ciphertexts to the GPU's secrets; both equal the host build".into());
            }
            KernelArgs::KemDecaps { ss, .. } => {
                gate::mlkem_decaps(
                    alg,
                    idx,
                    &h.sk,
                    &h.ct,
                    &h.expected_ss,
                    &h.tampered,
                    &dtoh_slots(st, ss, idx, 32)?,
                )?;
                checks.push("sampled GPU decapsulations equal liboqs's, a tampered ciphertext included (implicit rejection)".into());
            }
            KernelArgs::DsaKeygen { pk, sk, .. } => {
                gate::mldsa_keygen(
                    alg,
                    idx,
                    &h.xi,
                    &dtoh_slots(st, pk, idx, s.public_key_bytes)?,
                    &dtoh_slots(st, sk, idx, s.secret_key_bytes)?,
                )?;
                checks.push("sampled key pairs equal the host build for the same xi".into());
            }
            KernelArgs::DsaSign { sig, stride, .. } => {
                let stride = *stride as usize;
                gate::mldsa_sign(
                    alg,
                    idx,
                    &h.pk,
                    &h.sk,
                    &h.msg,
                    self.msg_len,
                    &self.ctx,
                    &h.rnd,
                    &dtoh_slots(st, sig, idx, stride)?,
                    stride,
                )?;
                checks.push("sampled GPU signatures equal the host build for the same rnd and verify under liboqs".into());
            }
            KernelArgs::DsaVerify { ok, .. } => {
                let ok = dtoh(st, ok)?;
                gate::mldsa_verify(&ok, &h.tampered)?;
                checks.push("every valid signature accepted; the corrupted one rejected".into());
            }
        }
        let _ = self.op;
        Ok(GateReport {
            checked_ops: if matches!(self.args, KernelArgs::DsaVerify { .. }) {
                self.n
            } else {
                idx.len()
            },
            checks,
        })
    }

    fn threads(&self) -> usize {
        1
    }

    fn timed_window(&self) -> &'static str {
        "kernel only: one kernel launch between two CUDA events (timing enabled), queued behind a 0.5 ms device-side wait so the host's launch call is outside; inputs generated and copied to the GPU before, sampled outputs copied back after, untimed (end_to_end has the copies timed)"
    }

    fn kernel(&self) -> Option<KernelInfo> {
        Some(self.kernel.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shape_covers_the_batch() {
        let c = launch_shape(100_000, 1024);
        assert_eq!(c.block_dim.0, THREADS_PER_BLOCK);
        assert!(c.grid_dim.0 * c.block_dim.0 >= 100_000);
        assert_eq!(launch_shape(1, 1024).grid_dim.0, 1);
        assert_eq!(launch_shape(1000, 64).block_dim.0, 64);
    }

    #[test]
    fn memory_limits() {
        assert_eq!(max_batch(1000, 10, 0), 90);
        assert_eq!(max_batch(1000, 10, 900), 0);
        let per = device_bytes_per_op(Algorithm::MlDsa87, Operation::Sign, 1024);
        assert_eq!(per, 4896 + 1024 + 32 + 4632);
        assert_eq!(memory_refusal("x", 90, 10, 0, 1000, "GPU"), None);
        let why = memory_refusal("ML-DSA-87 sign", 91, 10, 0, 1000, "GPU").unwrap();
        assert!(why.contains("batch 91 of ML-DSA-87 sign"), "{why}");
        assert!(
            why.contains("at most 90 fits (use --batch 90 or less)"),
            "{why}"
        );
        // Fixed costs (local memory of resident threads) come off first.
        let why = memory_refusal("x", 50, 10, 500, 1000, "GPU").unwrap();
        assert!(why.contains("at most 40 fits"), "{why}");
        // When they leave no room at all, no "--batch 0" advice.
        let why = memory_refusal("x", 1, 10, 900, 1000, "GPU").unwrap();
        assert!(!why.contains("--batch"), "{why}");
        assert!(why.contains("no room for even one operation"), "{why}");
    }

    #[test]
    fn the_peak_is_the_largest_phase_of_the_chain() {
        use Operation::*;
        // ML-KEM-768: pk 1184, sk 2400, ct 1088. Decaps peaks while
        // encaps runs with the secret keys kept: sk + pk + m + ct + ss.
        let kem = Algorithm::MlKem768;
        assert_eq!(peak_bytes_per_op(kem, KeyGen, 0), 64 + 1184 + 2400);
        assert_eq!(peak_bytes_per_op(kem, Encaps, 0), 64 + 1184 + 2400);
        assert_eq!(
            peak_bytes_per_op(kem, Decaps, 0),
            2400 + 1184 + 32 + 1088 + 32
        );
        // ML-DSA-44 verify peaks while sign runs with the public keys kept.
        let dsa = Algorithm::MlDsa44;
        let stride = dsa.signature_stride().unwrap();
        assert_eq!(
            peak_bytes_per_op(dsa, Verify, 1024),
            1312 + 2560 + 1024 + 32 + stride
        );
        assert_eq!(launch_chain(dsa, Verify), vec![KeyGen, Sign, Verify]);
        assert_eq!(launch_chain(kem, KeyGen), vec![KeyGen]);
    }
}
