//! Device plugins (`memory = PQCPROF_MEMORY_DEVICE`): pqcprof opens the
//! GPU's primary context in the plugin's worker process, allocates every
//! buffer in device memory, copies the inputs in before timing, and hands
//! the plugin device pointers and a stream of its own. The timed window is
//! two CUDA events recorded on that stream around the plugin's call; the
//! stream is synchronised after the second, so work the plugin queued and
//! left running is inside the window. The gate copies the outputs back and
//! checks them as a host plugin's are; its untimed calls (a tampered
//! ciphertext or signature) go through device copies too.

use super::batch::{Caller, Part};
use super::ffi::{Buffers, DeviceRegion, HostBuffers, Place};
use super::Plugin;
use crate::backend::{BatchConfig, Checkpoint, Prepared};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, Context};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// What the parent learns of the GPU a device plugin runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSide {
    /// The CUDA ordinal.
    pub ordinal: usize,
    /// The device as records describe it.
    pub device: Device,
    /// Its PCI bus id (for the NVML sampler).
    pub pci_bus_id: String,
    /// True on the CPU stand-in driver: timings of an emulation.
    pub emulated: bool,
}

/// The GPU context and stream of a device plugin's worker.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
}

fn driver(what: &str) -> impl Fn(cudarc::driver::DriverError) -> anyhow::Error + '_ {
    move |e| anyhow!("{what}: {e:?}")
}

impl Gpu {
    /// Opens GPU `ordinal`'s primary context and a stream for the plugin.
    pub fn open(ordinal: usize) -> anyhow::Result<(Arc<Gpu>, GpuSide)> {
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| anyhow!("cannot open GPU {ordinal} for a device plugin: {e:?}"))?;
        // One stream, synchronised explicitly: no per-buffer events around
        // the plugin's work.
        // SAFETY: every buffer of the worker is used on `stream` only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver("creating a stream"))?;
        let (device, pci_bus_id) = crate::backend::gpu_identity(&ctx, ordinal);
        let side = GpuSide {
            ordinal,
            device,
            pci_bus_id,
            emulated: crate::probe::gpu::standin_driver().is_some(),
        };
        Ok((
            Arc::new(Gpu {
                ctx,
                stream,
                ordinal,
            }),
            side,
        ))
    }

    fn place(&self) -> Place {
        Place::Device {
            stream: self.stream.cu_stream().cast(),
            ordinal: self.ordinal as i32,
        }
    }

    fn upload(&self, bytes: &[u8]) -> anyhow::Result<DevMem> {
        if bytes.is_empty() {
            return Ok(DevMem(None));
        }
        let s = self
            .stream
            .clone_htod(bytes)
            .map_err(driver("copying an input to the device"))?;
        Ok(DevMem(Some(s)))
    }

    fn alloc(&self, len: usize) -> anyhow::Result<DevMem> {
        if len == 0 {
            return Ok(DevMem(None));
        }
        let s = self
            .stream
            .alloc_zeros::<u8>(len)
            .map_err(driver("allocating an output on the device"))?;
        Ok(DevMem(Some(s)))
    }

    /// Copies `bytes` over the device buffer `to` (of the same length).
    fn write(&self, to: &mut DevMem, bytes: &[u8]) -> anyhow::Result<()> {
        if let Some(s) = &mut to.0 {
            self.stream
                .memcpy_htod(bytes, s)
                .map_err(driver("copying an input to the device"))?;
        }
        Ok(())
    }

    /// Queues a fill of `len` bytes of `to`, from `offset`, with `byte`
    /// (an output's poison, before the run's first event).
    fn fill(&self, to: &mut DevMem, offset: usize, len: usize, byte: u8) -> anyhow::Result<()> {
        if let (Some(s), true) = (&mut to.0, len > 0) {
            let (ptr, _sync) = s.device_ptr_mut(&self.stream);
            // SAFETY: [offset, offset + len) lies inside the allocation (the
            // body between its guards), used on this stream only.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    ptr + offset as u64,
                    byte,
                    len,
                    self.stream.cu_stream(),
                )
            }
            .map_err(driver("poisoning an output on the device"))?;
        }
        Ok(())
    }

    fn download(&self, from: &DevMem, into: &mut [u8]) -> anyhow::Result<()> {
        if let Some(s) = &from.0 {
            self.stream
                .memcpy_dtoh(s, into)
                .map_err(driver("copying an output back from the device"))?;
        }
        Ok(())
    }

    fn synchronize(&self, what: &str) -> anyhow::Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("the plugin's work on the stream failed ({what}): {e:?}"))
    }
}

/// One device buffer (none for an empty one).
pub struct DevMem(Option<CudaSlice<u8>>);

impl DevMem {
    fn region(&self, stream: &CudaStream) -> DeviceRegion {
        match &self.0 {
            Some(s) => DeviceRegion {
                ptr: s.device_ptr(stream).0,
                len: s.len(),
            },
            None => DeviceRegion { ptr: 0, len: 0 },
        }
    }
}

/// A device plugin and the GPU it runs on.
pub struct DeviceCaller {
    gpu: Arc<Gpu>,
    plugin: Arc<Plugin>,
}

impl DeviceCaller {
    /// `plugin` on `gpu`.
    pub fn new(plugin: Arc<Plugin>, gpu: Arc<Gpu>) -> Self {
        DeviceCaller { gpu, plugin }
    }

    /// Queues the plugin's call on the device buffers `staged` (returns
    /// when the plugin does, its work possibly still running).
    fn queue(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        staged: &mut Buffers<DevMem, DevMem>,
    ) -> anyhow::Result<()> {
        let st = &self.gpu.stream;
        let regions = staged.try_map(|m| Ok(m.region(st)), |m| Ok(m.region(st)))?;
        self.gpu
            .ctx
            .bind_to_thread()
            .map_err(driver("making the GPU context current"))?;
        self.plugin.call(alg, op, n, regions, self.gpu.place())
    }
}

impl Caller for DeviceCaller {
    fn call(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        mut bufs: HostBuffers<'_>,
    ) -> anyhow::Result<()> {
        let g = &self.gpu;
        let mut staged = bufs.try_map(|i| g.upload(i), |o| g.alloc(o.len()))?;
        self.queue(alg, op, n, &mut staged)?;
        g.synchronize("an untimed call")?;
        for (dev, host) in staged.outputs().into_iter().zip(bufs.outputs()) {
            g.download(dev, host)?;
        }
        Ok(())
    }
    fn plugin(&self) -> &Plugin {
        &self.plugin
    }
}

/// A device plugin batch: its inputs made on the host (as a host plugin's
/// are), each buffer mirrored in device memory with its guard zones around
/// it (the plugin is handed the part between), its outputs poisoned there
/// by a memset queued on the stream before each run.
pub struct DeviceBatch {
    part: Part,
    /// The device copies of the part's inputs, then outputs, guards and all.
    dev: Vec<DevMem>,
    caller: Arc<DeviceCaller>,
    label: String,
}

impl DeviceBatch {
    /// Inputs for `op` of `alg` over `cfg.batch` items, on the device.
    pub fn new(
        caller: Arc<DeviceCaller>,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<DeviceBatch> {
        let plugin = &caller.plugin.info.name;
        anyhow::ensure!(
            caller.plugin.supports(alg, op),
            "plugin {plugin} does not implement {alg} {op}"
        );
        let label = format!("plugin {plugin} {alg} {op}");
        let as_caller: Arc<dyn Caller> = caller.clone();
        let part = Part::new(as_caller, alg, op, cfg.batch, cfg, 0)
            .with_context(|| format!("preparing {label}"))?;
        let g = &caller.gpu;
        let dev = part
            .ins
            .iter()
            .chain(&part.outs)
            .map(|b| g.upload(b.g.raw()))
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("preparing {label}"))?;
        g.synchronize("copying the inputs")?;
        Ok(DeviceBatch {
            part,
            dev,
            caller,
            label,
        })
    }

    /// The plugin's view of buffer `k`: its device memory between the guards.
    fn region(&self, k: usize, guard: usize, len: usize) -> DeviceRegion {
        let r = self.dev[k].region(&self.caller.gpu.stream);
        if len == 0 {
            return DeviceRegion { ptr: 0, len: 0 };
        }
        DeviceRegion {
            ptr: r.ptr + guard as u64,
            len,
        }
    }

    /// The device buffers as the ABI's call takes them.
    fn staged(&self) -> Buffers<DeviceRegion, DeviceRegion> {
        let bufs: Vec<&super::batch::Buf> = self.part.ins.iter().chain(&self.part.outs).collect();
        let mut regions = bufs
            .iter()
            .enumerate()
            .map(|(k, b)| self.region(k, b.g.guard_len(), b.g.body().len()));
        let mut next = || regions.next().expect("a buffer of this operation");
        let kem = self.part.alg.mlkem_params().is_some();
        match (self.part.op, kem) {
            (Operation::KeyGen, true) => Buffers::KemKeygen {
                seeds: next(),
                ek: next(),
                dk: next(),
            },
            (Operation::KeyGen, false) => Buffers::DsaKeygen {
                xi: next(),
                pk: next(),
                sk: next(),
            },
            (Operation::Encaps, _) => Buffers::KemEncaps {
                ek: next(),
                m: next(),
                c: next(),
                k: next(),
            },
            (Operation::Decaps, _) => Buffers::KemDecaps {
                dk: next(),
                c: next(),
                k: next(),
            },
            (Operation::Sign, _) => {
                let (sk, msg, rnd, ctx) = (next(), next(), next(), next());
                Buffers::DsaSign {
                    sk,
                    msg,
                    msg_item: self.part.ins[1].g.body().len() / self.part.n.max(1),
                    ctx,
                    rnd,
                    sig: next(),
                }
            }
            (Operation::Verify, _) => {
                let (pk, msg, sig, ctx) = (next(), next(), next(), next());
                Buffers::DsaVerify {
                    pk,
                    msg,
                    msg_item: self.part.ins[1].g.body().len() / self.part.n.max(1),
                    ctx,
                    sig,
                    ok: next(),
                }
            }
        }
    }
}

impl Prepared for DeviceBatch {
    fn arm(&mut self) -> anyhow::Result<()> {
        self.part
            .arm()
            .with_context(|| format!("preparing the next run of {}", self.label))?;
        let g = &self.caller.gpu;
        let poison = self.part.runs.poison();
        let nin = self.part.ins.len();
        for (k, b) in self.part.ins.iter().enumerate() {
            g.write(&mut self.dev[k], b.g.raw())?;
        }
        for (k, b) in self.part.outs.iter().enumerate() {
            g.fill(
                &mut self.dev[nin + k],
                b.g.guard_len(),
                b.g.body().len(),
                poison,
            )?;
        }
        Ok(())
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        let g = &self.caller.gpu;
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = g.stream.record_event(flags).map_err(driver("an event"))?;
        let (alg, op, n) = (self.part.alg, self.part.op, self.part.n);
        let regions = self.staged();
        g.ctx
            .bind_to_thread()
            .map_err(driver("making the GPU context current"))?;
        self.caller.plugin.call(alg, op, n, regions, g.place())?;
        let end = g.stream.record_event(flags).map_err(driver("an event"))?;
        g.synchronize("the timed call")?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(driver("reading the timing events"))?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1000.0))
    }
    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        let g = &self.caller.gpu;
        // Every buffer back, guards included: the inputs as the call left
        // them, the outputs, the zones around each.
        let nin = self.part.ins.len();
        for (k, b) in self.part.ins.iter_mut().enumerate() {
            g.download(&self.dev[k], b.g.raw_mut())?;
        }
        for (k, b) in self.part.outs.iter_mut().enumerate() {
            g.download(&self.dev[nin + k], b.g.raw_mut())?;
        }
        super::batch::check_parts(std::slice::from_ref(&self.part), &self.label, at)
    }
    fn threads(&self) -> usize {
        1
    }
    fn timed_window(&self) -> &'static str {
        "CUDA events recorded on the stream pqcprof handed the device plugin, before and after its call, the stream synchronised after the second (in the plugin's worker process); inputs copied to the device before, outputs copied back after, neither timed; the window includes any host time the plugin spends between its launches; randomness given as inputs"
    }
}
