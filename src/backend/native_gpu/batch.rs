//! One prepared native-kernel batch: its device buffers and host staging,
//! a timed run (kernel-only or end to end), and the correctness gate over
//! the slots it samples.

use crate::backend::native_gpu::gate;
use crate::backend::native_gpu::launch::dtoh;
use crate::backend::native_gpu::launch::dtoh_slots;
use crate::backend::native_gpu::launch::launch_kernel;
use crate::backend::native_gpu::launch::pinned;
use crate::backend::native_gpu::launch::timed;
use crate::backend::native_gpu::launch::KernelArgs;
use crate::backend::native_gpu::launch::LATENCY_METHOD;
use crate::backend::native_gpu::launch::{empty_launch_rate, wait_on_device, EMPTY_WINDOW_METHOD};
use crate::backend::{HoldRun, Prepared};

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use crate::schema::device::KernelInfo;
use anyhow::anyhow;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PinnedHostSlice};
use std::sync::Arc;
use std::time::Duration;

/// What the end-to-end runs copy: a pageable host copy of the kernel's
/// inputs, streamed to the device through a fixed pinned staging of two
/// halves (one filled by the host while the other is copied), and the
/// outputs streamed back through the same halves.
pub(crate) struct Staged {
    pub(crate) inputs: Vec<Vec<u8>>,
    pub(crate) ring: [PinnedHostSlice<u8>; 2],
    /// Bytes of each half.
    pub(crate) half: usize,
    /// The copy last queued from or into each half, not yet known done.
    pub(crate) pending: [Option<cudarc::driver::CudaEvent>; 2],
    pub(crate) next: usize,
}

impl Staged {
    /// The next half, once the copy last queued on it is done.
    fn take_half(&mut self) -> anyhow::Result<usize> {
        let i = self.next;
        self.next ^= 1;
        if let Some(e) = self.pending[i].take() {
            e.synchronize()
                .map_err(|e| anyhow!("end-to-end copy failed: {e:?}"))?;
        }
        Ok(i)
    }

    /// Queues `src` to the device buffer `dst` (same length), chunk by chunk.
    fn upload(
        &mut self,
        st: &Arc<CudaStream>,
        src: &[u8],
        dst: &mut cudarc::driver::CudaSlice<u8>,
    ) -> anyhow::Result<()> {
        let err = |e: cudarc::driver::DriverError| anyhow!("end-to-end copy failed: {e:?}");
        for (k, part) in src.chunks(self.half).enumerate() {
            let i = self.take_half()?;
            let buf = &mut self.ring[i].as_mut_slice().map_err(err)?[..part.len()];
            buf.copy_from_slice(part);
            let off = k * self.half;
            st.memcpy_htod(&*buf, &mut dst.slice_mut(off..off + part.len()))
                .map_err(err)?;
            self.pending[i] = Some(st.record_event(None).map_err(err)?);
        }
        Ok(())
    }

    /// Queues the device buffer `src` back to the host, chunk by chunk.
    fn download<T: cudarc::driver::DeviceRepr>(
        &mut self,
        st: &Arc<CudaStream>,
        src: &cudarc::driver::CudaSlice<T>,
    ) -> anyhow::Result<()> {
        let err = |e: cudarc::driver::DriverError| anyhow!("end-to-end copy failed: {e:?}");
        let size = std::mem::size_of::<T>().max(1);
        let per = (self.half / size).max(1);
        let mut off = 0;
        while off < src.len() {
            let len = per.min(src.len() - off);
            let i = self.take_half()?;
            let buf = self.ring[i].as_mut_slice().map_err(err)?;
            // SAFETY: the half holds at least `len * size` bytes, and T is
            // plain data (u8 or i32 result flags) valid for any bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), len) };
            st.memcpy_dtoh(&src.slice(off..off + len), dst)
                .map_err(err)?;
            self.pending[i] = Some(st.record_event(None).map_err(err)?);
            off += len;
        }
        Ok(())
    }
}

/// What the gate needs besides the outputs.
#[derive(Default)]
pub(crate) struct HostSide {
    pub(crate) d: Vec<u8>,
    pub(crate) z: Vec<u8>,
    pub(crate) m: Vec<u8>,
    pub(crate) xi: Vec<u8>,
    pub(crate) rnd: Vec<u8>,
    pub(crate) msg: Vec<u8>,
    pub(crate) pk: Vec<u8>,
    pub(crate) sk: Vec<u8>,
    pub(crate) ct: Vec<u8>,
    pub(crate) expected_ss: Vec<u8>,
    pub(crate) tampered: Vec<usize>,
}

pub(crate) struct GpuBatch {
    /// `--cache cold`: written over before each timed run (twice the L2).
    pub(crate) flush: Option<cudarc::driver::CudaSlice<u8>>,
    pub(crate) cuda: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) hold: CudaFunction,
    pub(crate) staged: Option<Staged>,
    pub(crate) func: CudaFunction,
    pub(crate) shape: LaunchConfig,
    pub(crate) kernel: KernelInfo,
    pub(crate) alg: Algorithm,
    pub(crate) op: Operation,
    pub(crate) n: usize,
    pub(crate) msg_len: usize,
    pub(crate) ctx: Vec<u8>,
    pub(crate) args: KernelArgs,
    pub(crate) host: HostSide,
    pub(crate) sample: Vec<usize>,
    /// The hold before the last `run`'s window.
    pub(crate) last_hold: Option<HoldRun>,
}

impl GpuBatch {
    /// `--cache cold`: queues a write over the flush buffer, ahead of the
    /// hold and the window's first event, so L2 holds none of the batch
    /// when its window opens and the write is never inside it.
    fn flush_l2(&mut self) -> anyhow::Result<()> {
        if let Some(buf) = self.flush.as_mut() {
            self.stream
                .memset_zeros(buf)
                .map_err(|e| anyhow!("flushing L2: {e:?}"))?;
        }
        Ok(())
    }

    /// Queues one launch of the timed kernel over the whole batch.
    pub(crate) fn queue_launch(&mut self) -> anyhow::Result<()> {
        launch_kernel(
            &self.stream,
            &self.func,
            self.shape,
            self.n as u32,
            &mut self.args,
        )
    }

    /// A host copy of the inputs as they are on the device now, and the
    /// pinned staging: two halves of at most `staging_bytes() / 2`, no
    /// larger than the largest buffer needs.
    pub(crate) fn stage(&mut self) -> anyhow::Result<Staged> {
        let mut inputs = vec![];
        let mut largest = 0usize;
        for d in self.args.inputs_mut() {
            largest = largest.max(d.len());
            inputs.push(dtoh(&self.stream, &*d)?);
        }
        for d in self.args.outputs() {
            largest = largest.max(d.len());
        }
        if let Some(ok) = self.args.ok_flags() {
            largest = largest.max(ok.len() * 4);
        }
        let half = (crate::backend::native_gpu::sizing::staging_bytes() / 2)
            .min(largest)
            .max(4);
        Ok(Staged {
            inputs,
            ring: [
                pinned::<u8>(&self.cuda, half)?,
                pinned::<u8>(&self.cuda, half)?,
            ],
            half,
            pending: [None, None],
            next: 0,
        })
    }
}

impl GpuBatch {
    /// Queues the inputs' copies through the staging, the launch, and the
    /// outputs' copies back.
    fn queue_round_trip(&mut self, staged: &mut Staged, inputs: &[Vec<u8>]) -> anyhow::Result<()> {
        let st = self.stream.clone();
        for (h, d) in inputs.iter().zip(self.args.inputs_mut()) {
            staged.upload(&st, h, d)?;
        }
        self.queue_launch()?;
        for d in self.args.outputs() {
            staged.download(&st, d)?;
        }
        if let Some(d) = self.args.ok_flags() {
            staged.download(&st, d)?;
        }
        Ok(())
    }

    /// One batch end to end through the pinned staging (made on first
    /// use, then reused), waited for: between two timing events behind
    /// the device-side wait when `window` (that window returned), else
    /// as a caller would run it, with nothing added (zero returned).
    fn round_trip(&mut self, window: bool) -> anyhow::Result<Duration> {
        if self.staged.is_none() {
            self.staged = Some(self.stage()?);
        }
        let mut staged = self.staged.take().expect("staged above");
        let inputs = std::mem::take(&mut staged.inputs);
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        let r = if window {
            timed(&st, &hold, || self.queue_round_trip(&mut staged, &inputs)).map(|t| t.window)
        } else {
            self.queue_round_trip(&mut staged, &inputs).and_then(|()| {
                st.synchronize()
                    .map(|()| Duration::ZERO)
                    .map_err(|e| anyhow!("kernel or copy failed: {e:?}"))
            })
        };
        staged.inputs = inputs;
        staged.pending = [None, None];
        self.staged = Some(staged);
        r
    }
}

impl Prepared for GpuBatch {
    fn run(&mut self) -> anyhow::Result<Duration> {
        self.flush_l2()?;
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        self.last_hold = None;
        let t = timed(&st, &hold, || self.queue_launch())?;
        self.last_hold = Some(t.hold);
        Ok(t.window)
    }

    fn last_hold(&self) -> Option<HoldRun> {
        self.last_hold
    }

    fn cache(&self) -> Option<&'static str> {
        Some(if self.flush.is_some() { "cold" } else { "warm" })
    }

    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        Some(timed(&st, &hold, || wait_on_device(&st, &hold, 0)).map(|t| t.window))
    }

    fn empty_launch_rate(&mut self) -> Option<anyhow::Result<f64>> {
        Some(empty_launch_rate(&self.stream, &self.hold))
    }

    fn empty_window_method(&self) -> &'static str {
        EMPTY_WINDOW_METHOD
    }

    fn run_end_to_end(&mut self) -> Option<anyhow::Result<Duration>> {
        if let Err(e) = self.flush_l2() {
            return Some(Err(e));
        }
        Some(self.round_trip(true))
    }

    fn serve(&mut self) -> anyhow::Result<()> {
        self.round_trip(false).map(drop)
    }

    fn prepare_serving(&mut self) -> anyhow::Result<()> {
        if self.staged.is_none() {
            self.staged = Some(self.stage()?);
        }
        Ok(())
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
        "inputs copied from host memory to the GPU through a fixed staging in pinned host memory (two halves of at most 512 MiB, one filled while the other copies), one kernel launch, outputs streamed back to host memory through the same staging, between two CUDA events (timing enabled) queued behind a 0.5 ms device-side wait"
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
