//! Kernel launches and device memory through cudarc: the kernels'
//! arguments, the device-side hold before a timed launch, CUDA-event
//! timing, and host-device copies (pageable and pinned).

use crate::backend::native_gpu::kernels;
use crate::backend::HoldRun;

use anyhow::anyhow;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use rand::RngCore;
use std::sync::Arc;
use std::time::Duration;

/// How long timed launches wait on the device before they start,
/// nanoseconds: far longer than the host needs to issue an event, a launch
/// and an event (tens of microseconds), and small beside any batch.
pub const HOLD_NS: u64 = 500_000;

/// A kernel's arguments, in its parameter order (see cuda/native/*_kernels.cuh).
pub(crate) enum KernelArgs {
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
        /// One signing workspace per thread of the launch, interleaved.
        scratch: CudaSlice<u8>,
        /// The kernel's work queue: one u32, zeroed before each launch.
        queue: CudaSlice<u8>,
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
    pub(crate) fn inputs_mut(&mut self) -> Vec<&mut CudaSlice<u8>> {
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
    pub(crate) fn outputs(&self) -> Vec<&CudaSlice<u8>> {
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
    /// The outputs, writable (their poison queued before a run).
    pub(crate) fn outputs_mut(&mut self) -> Vec<&mut CudaSlice<u8>> {
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

    /// A verification's result flags, writable.
    pub(crate) fn ok_flags_mut(&mut self) -> Option<&mut CudaSlice<i32>> {
        match self {
            KernelArgs::DsaVerify { ok, .. } => Some(ok),
            _ => None,
        }
    }

    pub(crate) fn ok_flags(&self) -> Option<&CudaSlice<i32>> {
        match self {
            KernelArgs::DsaVerify { ok, .. } => Some(ok),
            _ => None,
        }
    }
}

/// Queues `HOLD_NS` of device-side waiting on `stream`.
pub(crate) fn hold(stream: &Arc<CudaStream>, hold: &CudaFunction) -> anyhow::Result<()> {
    wait_on_device(stream, hold, HOLD_NS)
}

/// Queues the hold kernel asked to wait `ns` nanoseconds; 0: the empty
/// kernel (one thread that returns at once).
pub(crate) fn wait_on_device(
    stream: &Arc<CudaStream>,
    hold: &CudaFunction,
    ns: u64,
) -> anyhow::Result<()> {
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
pub(crate) fn timing_event(stream: &Arc<CudaStream>) -> anyhow::Result<cudarc::driver::CudaEvent> {
    stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| anyhow!("recording a timing event: {e:?}"))
}

/// One timed window and the hold it was queued behind.
pub(crate) struct Timed {
    /// The window: start event to end event.
    pub(crate) window: Duration,
    /// What the hold did.
    pub(crate) hold: HoldRun,
}

fn from_ms(ms: f32) -> Duration {
    Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1000.0)
}

/// Runs `work` between two timing events queued behind the device-side
/// hold, then waits for the stream: the device time of `work` alone, with
/// the hold's own length (an event before it to the start event) and
/// whether it outlasted the host's queueing.
pub(crate) fn timed(
    stream: &Arc<CudaStream>,
    hold_fn: &CudaFunction,
    work: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Timed> {
    let before = timing_event(stream)?;
    hold(stream, hold_fn)?;
    let start = timing_event(stream)?;
    work()?;
    let end = timing_event(stream)?;
    // Asked only now that everything is queued: a start event still pending
    // means the device was holding while the host queued the work and the
    // end event, so no host time can be inside the window.
    let covered = !start
        .try_is_complete()
        .map_err(|e| anyhow!("kernel failed: {e:?}"))?;
    let unusable = |e| anyhow!("kernel failed or timing events unusable: {e:?}");
    let held = before.elapsed_ms(&start).map_err(unusable)?;
    let ms = start.elapsed_ms(&end).map_err(unusable)?;
    stream
        .synchronize()
        .map_err(|e| anyhow!("kernel failed: {e:?}"))?;
    Ok(Timed {
        window: from_ms(ms),
        hold: HoldRun {
            requested: Duration::from_nanos(HOLD_NS),
            measured: from_ms(held),
            covered,
        },
    })
}

/// Empty kernels launched back to back for the launch rate.
const RATE_LAUNCHES: usize = 200;

/// The launch rate of the empty kernel: [`RATE_LAUNCHES`] queued back to
/// back, launches per second of host time from the first call to the
/// stream's end.
pub(crate) fn empty_launch_rate(
    stream: &Arc<CudaStream>,
    hold_fn: &CudaFunction,
) -> anyhow::Result<f64> {
    stream
        .synchronize()
        .map_err(|e| anyhow!("waiting for the stream: {e:?}"))?;
    let t = std::time::Instant::now();
    for _ in 0..RATE_LAUNCHES {
        wait_on_device(stream, hold_fn, 0)?;
    }
    stream
        .synchronize()
        .map_err(|e| anyhow!("empty kernels failed: {e:?}"))?;
    Ok(RATE_LAUNCHES as f64 / t.elapsed().as_secs_f64())
}

/// What a GPU batch's empty window holds, said in the run file.
pub const EMPTY_WINDOW_METHOD: &str = "the empty kernel (pqcprof_hold asked to wait 0 ns: one thread that returns at once) between the batch's two CUDA events, queued behind the 0.5 ms device-side wait as every timed launch; launches_per_s: 200 empty kernels queued back to back, over host time to the stream's end";

/// Queues one launch of `func` over `n` operations (not waited for).
pub(crate) fn launch_kernel(
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
    // was allocated for n operations of this algorithm's sizes; signing's
    // scratch holds one workspace for every thread of `shape`.
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
            scratch,
            queue,
        } => {
            // The queue starts empty: a 4-byte memset queued before the launch.
            stream
                .memset_zeros(queue)
                .map_err(|e| anyhow!("clearing the signing queue: {e:?}"))?;
            b.arg(sig)
                .arg(&*stride)
                .arg(&*msg)
                .arg(&*msg_len)
                .arg(&*ctx)
                .arg(&*ctx_len)
                .arg(&*sk)
                .arg(&*rnd)
                .arg(scratch)
                .arg(queue);
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

pub(crate) fn random_bytes(rng: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

pub(crate) fn htod(stream: &Arc<CudaStream>, v: &[u8]) -> anyhow::Result<CudaSlice<u8>> {
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

pub(crate) fn zeros(stream: &Arc<CudaStream>, n: usize) -> anyhow::Result<CudaSlice<u8>> {
    stream
        .alloc_zeros::<u8>(n.max(1))
        .map_err(|e| anyhow!("cuMemAlloc of {n} bytes failed: {e:?}"))
}

pub(crate) fn dtoh<T: cudarc::driver::DeviceRepr + Default + Clone>(
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
pub(crate) fn dtoh_slots(
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
pub(crate) fn pinned<T: cudarc::driver::DeviceRepr>(
    ctx: &Arc<CudaContext>,
    len: usize,
) -> anyhow::Result<PinnedHostSlice<T>> {
    // SAFETY: the memory is written by a copy before anything reads it.
    unsafe { ctx.alloc_pinned_with_flags::<T>(len.max(1), 0) }
        .map_err(|e| anyhow!("pinned host memory of {len} elements refused: {e:?}"))
}

/// What a record says of how its latency (and every GPU window) was timed.
pub const LATENCY_METHOD: &str = "CUDA events around the kernel alone: the start event, the launch and the end event are queued behind a 0.5 ms device-side wait (pqcprof_hold), so the host's cuLaunchKernel call is outside the window; a run whose wait had ended before the end event was queued (its start event already reached) holds host time and is left out (see `hold`)";
