//! One prepared native-kernel batch: its device buffers and host staging,
//! a timed run (kernel-only or end to end), and the correctness gate
//! ([`crate::backend::gate`]) around every run: before it, seeds, m, rnd
//! and messages made afresh and copied over, ciphertexts and signatures
//! tampered with at positions drawn for the run, every output poisoned by
//! a memset queued before the window's first event; after it, every output
//! copied back and checked written, verdicts, the inputs of the sample (all
//! of them around the timed runs) against the host copy, and the sample
//! against the reference.

use crate::backend::gate::reference::Sampled;
use crate::backend::gate::slots::Slots;
use crate::backend::gate::{self, inputs as fresh, Runs};
use crate::backend::native_gpu::launch::dtoh;
use crate::backend::native_gpu::launch::launch_kernel;
use crate::backend::native_gpu::launch::pinned;
use crate::backend::native_gpu::launch::timed;
use crate::backend::native_gpu::launch::KernelArgs;
use crate::backend::native_gpu::launch::LATENCY_METHOD;
use crate::backend::native_gpu::launch::{empty_launch_rate, wait_on_device, EMPTY_WINDOW_METHOD};
use crate::backend::{Checkpoint, HoldRun, Prepared};

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use crate::schema::device::KernelInfo;
use anyhow::{anyhow, ensure};
use cudarc::driver::DevicePtrMut;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PinnedHostSlice};
use std::sync::Arc;
use std::time::Duration;

/// What the end-to-end runs copy with: the batch's host copy of the
/// kernel's inputs (pageable, as the gate made them for the run) is
/// streamed to the device through a fixed pinned staging of two halves (one
/// filled by the host while the other is copied), and the outputs streamed
/// back through the same halves.
pub(crate) struct Staged {
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

/// The host copy of one input of the batch: what the reference reads and
/// the device's copy is compared with after each run.
pub(crate) struct HostInput {
    pub(crate) name: &'static str,
    /// Bytes of one item (the whole buffer for one every item shares).
    pub(crate) item: usize,
    /// Bytes from one item to the next (0: shared).
    pub(crate) stride: usize,
    pub(crate) bytes: Vec<u8>,
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
    pub(crate) ctx: Vec<u8>,
    pub(crate) args: KernelArgs,
    /// A host copy of every input, in `KernelArgs::inputs_mut`'s order.
    pub(crate) inputs: Vec<HostInput>,
    /// The other half of each item's key pair (encaps: dk; sign: pk).
    pub(crate) pair: Vec<u8>,
    /// Verify: the valid signatures made before timing.
    pub(crate) valid_sigs: Vec<u8>,
    /// Verify: which items of this run hold a valid signature.
    pub(crate) valid: Vec<bool>,
    /// Decaps: the valid ciphertexts made before timing.
    pub(crate) valid_cts: Vec<u8>,
    /// Decaps: the items of this run whose ciphertext was tampered with.
    pub(crate) tampered: Vec<usize>,
    pub(crate) rng: rand_chacha::ChaCha20Rng,
    pub(crate) runs: Runs,
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

    /// The pinned staging: two halves of at most `staging_bytes() / 2`, no
    /// larger than the largest buffer needs.
    pub(crate) fn stage(&mut self) -> anyhow::Result<Staged> {
        let mut largest = 0usize;
        for d in self.args.inputs_mut() {
            largest = largest.max(d.len());
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
    fn queue_round_trip(&mut self, staged: &mut Staged) -> anyhow::Result<()> {
        let st = self.stream.clone();
        for (h, d) in self.inputs.iter().zip(self.args.inputs_mut()) {
            staged.upload(&st, &h.bytes, d)?;
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
        let (st, hold) = (self.stream.clone(), self.hold.clone());
        let r = if window {
            timed(&st, &hold, || self.queue_round_trip(&mut staged)).map(|t| t.window)
        } else {
            self.queue_round_trip(&mut staged).and_then(|()| {
                st.synchronize()
                    .map(|()| Duration::ZERO)
                    .map_err(|e| anyhow!("kernel or copy failed: {e:?}"))
            })
        };
        staged.pending = [None, None];
        self.staged = Some(staged);
        r
    }
}

/// What a native record says of its inputs.
const INPUTS_MADE: &str = "every item its own key pair and message, keys, ciphertexts and signatures made by the kernels before timing; seeds, m, rnd and messages made afresh and copied over before every run; a bit flipped in about one ciphertext (decaps) or signature (verify) in 16, at positions drawn for every run";

/// The items `items` of `buf` (items `stride` bytes apart), back to back.
fn gather(buf: &[u8], items: &[usize], stride: usize) -> Vec<u8> {
    if stride == 0 {
        return buf.to_vec();
    }
    items
        .iter()
        .flat_map(|&i| buf[i * stride..(i + 1) * stride].iter().copied())
        .collect()
}

/// The items `items` of a device buffer of `stride`-byte items, back to back.
fn dtoh_slots_strided(
    st: &Arc<CudaStream>,
    buf: &cudarc::driver::CudaSlice<u8>,
    items: &[usize],
    stride: usize,
) -> anyhow::Result<Vec<u8>> {
    crate::backend::native_gpu::launch::dtoh_slots(st, buf, items, stride)
}

/// A host copy of every input of `args` (read back from the device), with
/// its name, item length and stride, in `KernelArgs::inputs_mut`'s order.
pub(crate) fn host_inputs(
    st: &Arc<CudaStream>,
    alg: Algorithm,
    msg_len: usize,
    args: &mut KernelArgs,
) -> anyhow::Result<Vec<HostInput>> {
    let s = alg.sizes();
    let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
    let lct = s.ciphertext_bytes.unwrap_or(0);
    let lsig = s.signature_bytes.unwrap_or(0);
    let stride = alg.signature_stride().unwrap_or(0);
    // (name, item, stride); a stride of 0 is one value for every item.
    let layout: Vec<(&'static str, usize, usize)> = match args {
        KernelArgs::KemKeygen { .. } => vec![("d", 32, 32), ("z", 32, 32)],
        KernelArgs::KemEncaps { .. } => vec![("ek", lpk, lpk), ("m", 32, 32)],
        KernelArgs::KemDecaps { .. } => vec![("c", lct, lct), ("dk", lsk, lsk)],
        KernelArgs::DsaKeygen { .. } => vec![("xi", 32, 32)],
        KernelArgs::DsaSign { .. } => vec![
            ("msg", msg_len, msg_len),
            ("ctx", 0, 0),
            ("sk", lsk, lsk),
            ("rnd", 32, 32),
        ],
        KernelArgs::DsaVerify { .. } => vec![
            ("msg", msg_len, msg_len),
            ("ctx", 0, 0),
            ("signature", lsig, stride),
            ("pk", lpk, lpk),
        ],
    };
    layout
        .into_iter()
        .zip(args.inputs_mut())
        .map(|((name, item, stride), d)| {
            let bytes = dtoh(st, &*d)?;
            let item = if stride == 0 { bytes.len() } else { item };
            Ok(HostInput {
                name,
                item,
                stride,
                bytes,
            })
        })
        .collect()
}

impl GpuBatch {
    /// Seeds, m, rnd and messages made afresh for the next run; a
    /// decapsulation's ciphertexts and a verification's signatures back to
    /// the valid ones made before timing, then tampered with at positions
    /// drawn for the run; what changed copied to the device.
    fn arm_inputs(&mut self) -> anyhow::Result<()> {
        let (n, op, alg) = (self.n, self.op, self.alg);
        let s = alg.sizes();
        let fresh: &[&str] = match op {
            Operation::KeyGen => &["d", "z", "xi"],
            Operation::Encaps => &["m"],
            Operation::Sign => &["msg", "rnd"],
            _ => &[],
        };
        let rng = &mut self.rng;
        let mut changed = vec![false; self.inputs.len()];
        for (k, h) in self.inputs.iter_mut().enumerate() {
            if h.stride > 0 && fresh.contains(&h.name) {
                rand::RngCore::fill_bytes(rng, &mut h.bytes);
                changed[k] = true;
            }
            match (op, h.name) {
                (Operation::Decaps, "c") => {
                    let lct = s.ciphertext_bytes.unwrap_or(0);
                    h.bytes.copy_from_slice(&self.valid_cts);
                    self.tampered = fresh::invalid_positions(n, rng);
                    for &i in &self.tampered {
                        fresh::flip(&mut h.bytes, i, lct, lct, rng);
                    }
                    changed[k] = true;
                }
                (Operation::Verify, "signature") => {
                    h.bytes.copy_from_slice(&self.valid_sigs);
                    self.valid = vec![true; n];
                    for i in fresh::invalid_positions(n, rng) {
                        fresh::flip(&mut h.bytes, i, h.stride, h.item, rng);
                        self.valid[i] = false;
                    }
                    changed[k] = true;
                }
                _ => {}
            }
        }
        let st = self.stream.clone();
        for ((h, d), c) in self.inputs.iter().zip(self.args.inputs_mut()).zip(changed) {
            if c {
                st.memcpy_htod(&h.bytes, d)
                    .map_err(|e| anyhow!("copying a run's inputs to the GPU: {e:?}"))?;
            }
        }
        Ok(())
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

    fn arm(&mut self) -> anyhow::Result<()> {
        self.arm_inputs()?;
        let poison = self.runs.arm();
        let st = self.stream.clone();
        let fill = |ptr: u64, len: usize| -> anyhow::Result<()> {
            // SAFETY: [ptr, ptr + len) is one of the batch's own device
            // buffers, used on this stream only.
            unsafe { cudarc::driver::result::memset_d8_async(ptr, poison, len, st.cu_stream()) }
                .map_err(|e| anyhow!("poisoning an output on the GPU: {e:?}"))
        };
        for o in self.args.outputs_mut() {
            let len = o.len();
            let (ptr, _sync) = o.device_ptr_mut(&st);
            fill(ptr, len)?;
        }
        if let Some(ok) = self.args.ok_flags_mut() {
            let len = ok.len() * 4;
            let (ptr, _sync) = ok.device_ptr_mut(&st);
            fill(ptr, len)?;
        }
        Ok(())
    }

    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        ensure!(
            self.runs.run() > 0,
            "the gate checks runs it prepared, and no run was prepared (arm) before this one"
        );
        let st = self.stream.clone();
        let s = self.alg.sizes();
        let items = self.runs.sample(&self.tampered, at);
        // Every output back, whole.
        let outs: Vec<Vec<u8>> = self
            .args
            .outputs()
            .into_iter()
            .map(|o| dtoh(&st, o))
            .collect::<anyhow::Result<_>>()?;
        let ok: Option<Vec<u8>> = match self.args.ok_flags() {
            Some(f) => Some(
                dtoh(&st, f)?
                    .into_iter()
                    .flat_map(|v: i32| v.to_le_bytes())
                    .collect(),
            ),
            None => None,
        };
        // The inputs as the run left them: the sample's after each run,
        // every item around the timed runs.
        let whole = at != Checkpoint::AfterRun;
        let mut after = vec![];
        for (h, d) in self.inputs.iter().zip(self.args.inputs_mut()) {
            after.push(if whole || h.stride == 0 {
                dtoh(&st, &*d)?
            } else {
                dtoh_slots_strided(&st, d, &items, h.stride)?
            });
        }
        let gathered_before: Vec<Vec<u8>> = self
            .inputs
            .iter()
            .map(|h| {
                if whole || h.stride == 0 {
                    h.bytes.clone()
                } else {
                    gather(&h.bytes, &items, h.stride)
                }
            })
            .collect();
        let inputs: Vec<gate::Input<'_>> = self
            .inputs
            .iter()
            .zip(gathered_before.iter().zip(&after))
            .map(|(h, (b, a))| gate::Input {
                name: h.name,
                before: Slots {
                    bytes: b,
                    stride: h.stride,
                    len: h.item,
                },
                after: Slots {
                    bytes: a,
                    stride: h.stride,
                    len: h.item,
                },
            })
            .collect();
        let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let lsig = s.signature_bytes.unwrap_or(0);
        let stride = self.alg.signature_stride().unwrap_or(0);
        let out_names: Vec<(&'static str, usize, usize)> = match &self.args {
            KernelArgs::KemKeygen { .. } => vec![("ek", lpk, lpk), ("dk", lsk, lsk)],
            KernelArgs::DsaKeygen { .. } => vec![("pk", lpk, lpk), ("sk", lsk, lsk)],
            KernelArgs::KemEncaps { .. } => vec![("c", lct, lct), ("K", 32, 32)],
            KernelArgs::KemDecaps { .. } => vec![("K", 32, 32)],
            KernelArgs::DsaSign { .. } => vec![("signature", stride, lsig)],
            KernelArgs::DsaVerify { .. } => vec![],
        };
        let mut outputs: Vec<gate::Output<'_>> = out_names
            .iter()
            .zip(&outs)
            .map(|(&(name, stride, len), bytes)| gate::Output {
                name,
                slots: Slots { bytes, stride, len },
            })
            .collect();
        if let Some(ok) = &ok {
            outputs.push(gate::Output {
                name: "ok",
                slots: Slots::packed(ok, 4),
            });
        }
        // The sample gathered: inputs from the host copy, outputs as run.
        let input = |name: &str| -> anyhow::Result<Vec<u8>> {
            let h = self
                .inputs
                .iter()
                .find(|h| h.name == name)
                .ok_or_else(|| anyhow!("no input {name}"))?;
            Ok(if h.stride == 0 {
                h.bytes.clone()
            } else {
                gather(&h.bytes, &items, h.stride)
            })
        };
        let out = |k: usize| gather(&outs[k], &items, out_names[k].1);
        let pair_item = self.pair.len().checked_div(self.n).unwrap_or(0);
        let pair = gather(&self.pair, &items, pair_item);
        let mut g: Vec<(&str, Vec<u8>, usize)> = vec![];
        for h in &self.inputs {
            match (h.name, h.stride) {
                ("ctx" | "signature", _) => {}
                // An empty message: every item's is the same nothing.
                (_, 0) => g.push((h.name, vec![], 0)),
                _ => g.push((h.name, input(h.name)?, h.item)),
            }
        }
        for (k, &(name, stride, _)) in out_names.iter().enumerate() {
            g.push((name, out(k), stride));
        }
        let get = |name: &str| -> Option<Slots<'_>> {
            g.iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, b, len)| Slots::packed(b, *len))
        };
        let ctx = self.ctx.clone();
        let sampled = Sampled::from_buffers(
            self.alg,
            self.op,
            &get,
            (!pair.is_empty()).then(|| Slots::packed(&pair, pair_item)),
            &ctx,
        )?;
        gate::check_run(&gate::RunIo {
            alg: self.alg,
            op: self.op,
            runs: &self.runs,
            guards: vec![],
            inputs,
            outputs,
            valid: matches!(self.args, KernelArgs::DsaVerify { .. }).then_some(&self.valid[..]),
            sampled,
            items: &items,
            cross_check: at.cross_checks(),
            inputs_made: INPUTS_MADE,
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
