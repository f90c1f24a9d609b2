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
use crate::backend::Prepared;

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use crate::schema::device::KernelInfo;
use anyhow::anyhow;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PinnedHostSlice};
use std::sync::Arc;
use std::time::Duration;

/// Pinned copies of a batch's inputs and room for its outputs, for the
/// end-to-end runs.
pub(crate) struct Staged {
    pub(crate) inputs: Vec<PinnedHostSlice<u8>>,
    pub(crate) outputs: Vec<PinnedHostSlice<u8>>,
    pub(crate) ok: Option<PinnedHostSlice<i32>>,
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
}

impl GpuBatch {
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

    /// Pinned copies of the inputs as they are on the device now, and
    /// pinned room for the outputs.
    pub(crate) fn stage(&mut self) -> anyhow::Result<Staged> {
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
