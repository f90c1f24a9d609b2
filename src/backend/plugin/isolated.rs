//! A plugin measured from a worker process, so that its crash or hang
//! cannot take the run down.
//!
//! The worker is this binary again (`pqcprof plugin-worker PATH`): it loads
//! the plugin, prepares, times and gates its batches ([`super::batch`]) and
//! answers one JSON line per request on a private pipe (the plugin's own
//! standard output goes to standard error). The parent, [`PluginBackend`],
//! is an ordinary [`Backend`]: each `Prepared` call is one request. A worker
//! that dies (a signal, an exit) fails the record in progress with what
//! ended it; one that does not answer by the run's deadline is killed and
//! fails it the same way. The next record starts a new worker; the records
//! before are already in the run file.

use super::batch::{Caller, HostCaller};
use super::device::{DeviceBatch, DeviceCaller, Gpu, GpuSide};
use super::{Memory, Offer, PluginInfo};
use crate::backend::{Backend, BatchConfig, Checkpoint, Prepared};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest one request may take when the run has no deadline.
pub const CALL_BOUND: Duration = Duration::from_secs(600);

/// The longest a plugin's known-answer vectors may take when the run has
/// no deadline.
pub const VECTORS_BOUND: Duration = Duration::from_secs(300);

/// What the parent asks (a batch's fields as in `BatchConfig`).
#[allow(missing_docs)]
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Make a batch ready.
    Prepare {
        alg: Algorithm,
        op: Operation,
        batch: usize,
        threads: usize,
        message_size: usize,
        context: Vec<u8>,
        gate: crate::backend::gate::GateSettings,
    },
    /// Make the next run of prepared batch `0` ready (untimed: fresh
    /// inputs, poisoned outputs).
    Arm(usize),
    /// Time prepared batch `0` once.
    Run(usize),
    /// Gate the last run of prepared batch `0`.
    Check(usize, Checkpoint),
    /// Time an empty window of prepared batch `0`.
    EmptyWindow(usize),
    /// Run the known-answer vectors of these parameter sets on the plugin:
    /// every case, or the first `sample` of each group; only the groups at
    /// these indices of the vector runner's list when any are given.
    Vectors {
        algs: Vec<Algorithm>,
        sample: Option<usize>,
        groups: Vec<usize>,
    },
}

/// What the worker answers.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The plugin loaded: what it is and offers (the first line).
    Loaded {
        /// What records say of it.
        info: PluginInfo,
        /// Each set it implements with its PQCPROF_OP_* bits.
        offers: Vec<(Algorithm, u32)>,
        /// A device plugin's GPU.
        gpu: Option<GpuSide>,
    },
    /// A batch prepared: its number for later requests.
    Prepared(usize),
    /// A timed window, seconds.
    Seconds(f64),
    /// The next run is ready.
    Armed,
    /// The gate passed.
    Gate(GateReport),
    /// The vectors' report (the vector runner's own JSON).
    Vectors(serde_json::Value),
    /// The request failed: why.
    Failed(String),
}

/// What the worker's vector runner is given: the plugin behind its caller
/// (device copies for a device plugin), the sets and the sample.
pub struct VectorsJob {
    /// Calls the plugin on host buffers.
    pub caller: Arc<dyn Caller>,
    /// The parameter sets.
    pub algs: Vec<Algorithm>,
    /// Cases per group (`None`: every case).
    pub sample: Option<usize>,
    /// The groups (indices in the vector runner's list); empty: all of
    /// `algs`.
    pub groups: Vec<usize>,
}

/// A plugin that did not answer in time (its worker was killed): the
/// error a caller can tell from a crash (`anyhow::Error::downcast_ref`).
#[derive(Debug)]
pub struct Hung(pub String);

impl std::fmt::Display for Hung {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Hung {}

/// The vector runner, from the layer above (it lives in `vectors`).
pub type VectorsFn<'a> = &'a dyn Fn(VectorsJob) -> anyhow::Result<serde_json::Value>;

/// The name of a signal, for a failed record.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("{name} (signal {sig})")
}

/// Makes the worker end when the thread that started it ends (Linux: the
/// kernel sends it SIGKILL), so a measuring process killed with SIGKILL
/// leaves no plugin running, hung or not.
fn die_with_parent(c: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only the async-signal-safe prctl runs.
        unsafe {
            c.pre_exec(|| {
                let sig = libc::SIGKILL as libc::c_ulong;
                if libc::prctl(libc::PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// A running worker and the lines it answers.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    path: PathBuf,
    /// What bounds the answer awaited now, for the message when none comes.
    bound: String,
}

/// What bounds an ordinary request.
fn call_bound() -> String {
    format!(
        "the run's deadline or the {} s bound per call",
        CALL_BOUND.as_secs()
    )
}

impl Worker {
    fn start(path: &Path, ordinal: usize, by: Instant) -> anyhow::Result<(Worker, Reply)> {
        let exe =
            std::env::current_exe().context("finding this pqcprof to start a plugin worker")?;
        let mut cmd = Command::new(exe);
        cmd.arg("plugin-worker")
            .arg("--device")
            .arg(ordinal.to_string())
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn().context("starting a plugin worker process")?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("worker stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("worker stdout"))?;
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut w = Worker {
            child,
            stdin,
            lines,
            path: path.to_path_buf(),
            bound: call_bound(),
        };
        let first = w.receive(by, "loading")?;
        Ok((w, first))
    }

    /// The next answer, waiting until `by` at the latest.
    fn receive(&mut self, by: Instant, what: &str) -> anyhow::Result<Reply> {
        let wait = by.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => serde_json::from_str(&line)
                .map_err(|e| anyhow!("the plugin worker answered something unreadable ({e})")),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(Hung(format!(
                    "plugin {} {what}: no answer within {:.1} s ({}); its worker process was killed",
                    self.path.display(),
                    wait.as_secs_f64(),
                    self.bound
                ))
                .into())
            }
            Err(RecvTimeoutError::Disconnected) => {
                use std::os::unix::process::ExitStatusExt;
                let status = self.child.wait().context("waiting for the plugin worker")?;
                let how = match status.signal() {
                    Some(s) => format!("was killed by {}", signal_name(s)),
                    None => format!("exited with {status}"),
                };
                bail!(
                    "plugin {} {what}: its worker process {how}",
                    self.path.display()
                )
            }
        }
    }

    fn ask(&mut self, req: &Request, by: Instant, what: &str) -> anyhow::Result<Reply> {
        let line = serde_json::to_string(req)?;
        if writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .is_err()
        {
            // The worker is gone: `receive` says how it ended.
            return self.receive(by, what);
        }
        match self.receive(by, what)? {
            Reply::Failed(why) => Err(anyhow!("{why} (plugin {})", self.path.display())),
            r => Ok(r),
        }
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plugin as a backend, measured in its worker process.
pub struct PluginBackend {
    /// What records say of it.
    pub info: PluginInfo,
    /// A device plugin's GPU (`None`: a host plugin).
    pub gpu: Option<GpuSide>,
    offers: Vec<Offer>,
    name: String,
    device: Device,
    ordinal: usize,
    worker: Rc<RefCell<Option<Worker>>>,
    /// When every request must have been answered (the run's deadline).
    deadline: Option<Instant>,
}

/// What the first answer says of the plugin.
type Described = (PluginInfo, Vec<Offer>, Option<GpuSide>);

/// The loaded plugin's description from a first answer.
fn loaded(reply: Reply, path: &Path) -> anyhow::Result<Described> {
    match reply {
        Reply::Loaded { info, offers, gpu } => Ok((
            info,
            offers
                .into_iter()
                .map(|(alg, operations)| Offer { alg, operations })
                .collect(),
            gpu,
        )),
        Reply::Failed(why) => Err(anyhow!(why)),
        other => bail!(
            "plugin {}: unexpected first answer {other:?}",
            path.display()
        ),
    }
}

impl PluginBackend {
    /// Loads the plugin at `path` in a worker and reads what it offers (a
    /// device plugin on GPU `ordinal`; `host` describes where a host plugin
    /// runs); `deadline` bounds every later request.
    pub fn open(
        path: &Path,
        host: Device,
        ordinal: usize,
        deadline: Option<Instant>,
    ) -> anyhow::Result<Self> {
        let bound = Instant::now() + CALL_BOUND;
        let (worker, first) =
            Worker::start(path, ordinal, deadline.map_or(bound, |d| d.min(bound)))?;
        let (info, offers, gpu) = loaded(first, path)?;
        Ok(PluginBackend {
            name: super::backend_name(&info.name),
            device: gpu.as_ref().map_or(host, |g| g.device.clone()),
            info,
            gpu,
            offers,
            ordinal,
            worker: Rc::new(RefCell::new(Some(worker))),
            deadline,
        })
    }

    /// What it offers, as loaded.
    pub fn offers(&self) -> &[Offer] {
        &self.offers
    }

    fn by(&self) -> Instant {
        let bound = Instant::now() + CALL_BOUND;
        self.deadline.map_or(bound, |d| d.min(bound))
    }

    /// A worker ready for requests: the one running, or a new one (the last
    /// died or was dropped after a failed request) loading the same file.
    fn ready_worker(&self) -> anyhow::Result<std::cell::RefMut<'_, Option<Worker>>> {
        let path = PathBuf::from(&self.info.path);
        let mut slot = self.worker.borrow_mut();
        if !slot.as_mut().is_some_and(Worker::alive) {
            let (w, first) = Worker::start(&path, self.ordinal, self.by())?;
            let (info, _, _) = loaded(first, &path)?;
            if info.sha256 != self.info.sha256 {
                bail!("plugin {}: the library file changed during the run (SHA-256 {} at the start, {} now)", path.display(), self.info.sha256, info.sha256);
            }
            *slot = Some(w);
        }
        Ok(slot)
    }

    /// The known-answer vectors of `algs` on the plugin, in its worker
    /// (every case, or the first `sample` of each group): the vector
    /// runner's report as JSON.
    pub fn vectors(
        &self,
        algs: &[Algorithm],
        sample: Option<usize>,
        groups: &[usize],
    ) -> anyhow::Result<serde_json::Value> {
        // A plugin that hangs on a case must leave the run time to measure:
        // a quarter of the time left to the deadline, VECTORS_BOUND without one.
        let now = Instant::now();
        let by = match self.deadline {
            Some(d) => now + d.saturating_duration_since(now) / 4,
            None => now + VECTORS_BOUND,
        };
        let mut slot = self.ready_worker()?;
        let w = slot.as_mut().ok_or_else(|| anyhow!("no worker"))?;
        let req = Request::Vectors {
            algs: algs.to_vec(),
            sample,
            groups: groups.to_vec(),
        };
        w.bound = format!(
            "a quarter of the time left to the run's deadline, or {} s without one",
            VECTORS_BOUND.as_secs()
        );
        let r = w.ask(&req, by, "known-answer vectors");
        w.bound = call_bound();
        if r.is_err() {
            // A plugin that failed here may have left its process unusable.
            *slot = None;
        }
        match r? {
            Reply::Vectors(v) => Ok(v),
            other => bail!("unexpected answer to the vectors: {other:?}"),
        }
    }
}

impl Backend for PluginBackend {
    fn name(&self) -> &str {
        &self.name
    }
    fn provider(&self) -> &str {
        "plugin"
    }
    fn device(&self) -> Device {
        self.device.clone()
    }
    fn emulated(&self) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.emulated)
    }
    fn supports(&self, alg: Algorithm, op: Operation) -> bool {
        super::ffi::offered(&self.offers, alg, op)
    }
    fn plugin(&self) -> Option<PluginInfo> {
        Some(self.info.clone())
    }
    fn plugin_vectors(
        &self,
        algs: &[Algorithm],
        sample: Option<usize>,
        groups: &[usize],
    ) -> Option<anyhow::Result<serde_json::Value>> {
        Some(self.vectors(algs, sample, groups))
    }
    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        let mut slot = self.ready_worker()?;
        let threads = if self.info.thread_safe && self.gpu.is_none() {
            cfg.threads
        } else {
            1
        };
        let req = Request::Prepare {
            alg,
            op,
            batch: cfg.batch,
            threads,
            message_size: cfg.message_size,
            context: cfg.context.clone(),
            gate: cfg.gate,
        };
        let by = self.by();
        let w = slot.as_mut().ok_or_else(|| anyhow!("no worker"))?;
        let id = match w.ask(&req, by, &format!("{alg} {op} prepare"))? {
            Reply::Prepared(id) => id,
            other => bail!("unexpected answer to prepare: {other:?}"),
        };
        drop(slot);
        Ok(Box::new(Remote {
            id,
            worker: self.worker.clone(),
            what: format!("{alg} {op}"),
            threads,
            deadline: self.deadline,
            device: self.gpu.is_some(),
        }))
    }
}

/// A batch prepared in the worker.
struct Remote {
    /// Its number in the worker.
    id: usize,
    worker: Rc<RefCell<Option<Worker>>>,
    what: String,
    threads: usize,
    deadline: Option<Instant>,
    /// A device plugin: a failed request leaves its context unusable (a
    /// fault is sticky), so the next record starts a new worker.
    device: bool,
}

impl Remote {
    fn ask(&mut self, req: Request, step: &str) -> anyhow::Result<Reply> {
        let bound = Instant::now() + CALL_BOUND;
        let by = self.deadline.map_or(bound, |d| d.min(bound));
        let mut slot = self.worker.borrow_mut();
        let w = slot
            .as_mut()
            .ok_or_else(|| anyhow!("the plugin worker is gone"))?;
        let r = w.ask(&req, by, &format!("{} {step}", self.what));
        if r.is_err() && (self.device || !w.alive()) {
            *slot = None;
        }
        r
    }

    fn seconds(&mut self, req: Request, step: &str) -> anyhow::Result<Duration> {
        match self.ask(req, step)? {
            Reply::Seconds(s) => Ok(Duration::from_secs_f64(s)),
            other => bail!("unexpected answer to {step}: {other:?}"),
        }
    }
}

impl Prepared for Remote {
    fn arm(&mut self) -> anyhow::Result<()> {
        match self.ask(Request::Arm(self.id), "preparing a run")? {
            Reply::Armed => Ok(()),
            other => bail!("unexpected answer to arm: {other:?}"),
        }
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        self.seconds(Request::Run(self.id), "run")
    }
    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        match self.ask(Request::Check(self.id, at), "gate")? {
            Reply::Gate(g) => Ok(g),
            other => bail!("unexpected answer to the gate: {other:?}"),
        }
    }
    fn threads(&self) -> usize {
        self.threads
    }
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        if self.device {
            return None;
        }
        Some(self.seconds(Request::EmptyWindow(self.id), "empty window"))
    }
    fn empty_window_method(&self) -> &'static str {
        "in the plugin's worker process, the batch's own window around parts with no call: two clock reads on one thread; with several, the threads spawned, pinned and released at a barrier"
    }
    fn timed_window(&self) -> &'static str {
        if self.device {
            return DEVICE_WINDOW;
        }
        "wall clock around the plugin's batched call on buffers pqcprof allocated, in the plugin's worker process; with several threads (thread-safe plugins), one call per thread on a disjoint part, from releasing all threads to the last one's end; randomness given as inputs"
    }
}

/// How a device plugin's window is timed (as its worker's batch says).
const DEVICE_WINDOW: &str = "CUDA events recorded on the stream pqcprof handed the device plugin, before and after its call, the stream synchronised after the second (in the plugin's worker process); inputs copied to the device before, outputs copied back after, neither timed; the window includes any host time the plugin spends between its launches; randomness given as inputs";

/// The worker's loop: loads `path` (a device plugin on GPU `ordinal`),
/// then answers each request line on `out` until its input ends;
/// `vectors` runs the known-answer vectors.
pub fn serve(
    path: &Path,
    ordinal: usize,
    input: impl BufRead,
    mut out: impl Write,
    vectors: VectorsFn<'_>,
) -> anyhow::Result<()> {
    let mut say = |r: &Reply| -> anyhow::Result<()> {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
        Ok(out.flush()?)
    };
    let (caller, gpu) = match load(path, ordinal) {
        Ok(c) => c,
        Err(e) => return say(&Reply::Failed(format!("{e:#}"))),
    };
    let device = gpu.as_ref().map(|(g, _)| g.clone());
    say(&Reply::Loaded {
        info: caller.plugin().info.clone(),
        offers: caller
            .plugin()
            .offers
            .iter()
            .map(|o| (o.alg, o.operations))
            .collect(),
        gpu: gpu.map(|(_, side)| side),
    })?;
    let mut batches: Vec<Box<dyn Prepared>> = vec![];
    for line in input.lines() {
        let req: Request = serde_json::from_str(&line?)?;
        let reply = match req {
            Request::Vectors {
                algs,
                sample,
                groups,
            } => {
                let job = VectorsJob {
                    caller: caller.clone(),
                    algs,
                    sample,
                    groups,
                };
                match vectors(job) {
                    Ok(v) => Reply::Vectors(v),
                    Err(e) => Reply::Failed(format!("{e:#}")),
                }
            }
            req => answer(&caller, device.as_ref(), &mut batches, req),
        };
        say(&reply)?;
    }
    Ok(())
}

/// The plugin at `path` loaded and its caller: a host plugin called on
/// host buffers, a device plugin through GPU `ordinal` (opened here).
type LoadedPlugin = (Arc<dyn Caller>, Option<(Arc<DeviceCaller>, GpuSide)>);

fn load(path: &Path, ordinal: usize) -> anyhow::Result<LoadedPlugin> {
    let plugin = Arc::new(super::Plugin::load(path)?);
    if plugin.info.memory == Memory::Host {
        return Ok((Arc::new(HostCaller(plugin)), None));
    }
    let (gpu, side) = Gpu::open(ordinal)
        .with_context(|| format!("plugin {} declares device memory", plugin.info.name))?;
    let caller = Arc::new(DeviceCaller::new(plugin, gpu));
    Ok((caller.clone(), Some((caller, side))))
}

/// The worker's answer to one request about a batch.
fn answer(
    caller: &Arc<dyn Caller>,
    gpu: Option<&Arc<DeviceCaller>>,
    batches: &mut Vec<Box<dyn Prepared>>,
    req: Request,
) -> Reply {
    let id = match req {
        Request::Prepare {
            alg,
            op,
            batch,
            threads,
            message_size,
            context,
            gate,
        } => {
            let cfg = BatchConfig {
                batch,
                threads,
                message_size,
                context,
                gate,
            };
            return match prepare(caller, gpu, alg, op, &cfg) {
                Ok(b) => {
                    batches.push(b);
                    Reply::Prepared(batches.len() - 1)
                }
                Err(e) => Reply::Failed(format!("{e:#}")),
            };
        }
        Request::Arm(id) | Request::Run(id) | Request::Check(id, _) | Request::EmptyWindow(id) => {
            id
        }
        Request::Vectors { .. } => return Reply::Failed("vectors are not a batch".into()),
    };
    let Some(b) = batches.get_mut(id) else {
        return Reply::Failed(format!("no prepared batch {id}"));
    };
    match req {
        Request::Arm(_) => match b.arm() {
            Ok(()) => Reply::Armed,
            Err(e) => Reply::Failed(format!("{e:#}")),
        },
        Request::Run(_) => seconds(b.run()),
        Request::EmptyWindow(_) => seconds(b.empty_window().unwrap_or(Ok(Duration::ZERO))),
        Request::Check(_, at) => match b.check(at) {
            Ok(g) => Reply::Gate(g),
            Err(e) => Reply::Failed(format!("{e:#}")),
        },
        Request::Prepare { .. } | Request::Vectors { .. } => {
            Reply::Failed("a second prepare".into())
        }
    }
}

/// A batch of `op` of `alg`: on the host, or on the device for a device
/// plugin.
fn prepare(
    caller: &Arc<dyn Caller>,
    gpu: Option<&Arc<DeviceCaller>>,
    alg: Algorithm,
    op: Operation,
    cfg: &BatchConfig,
) -> anyhow::Result<Box<dyn Prepared>> {
    match gpu {
        None => Ok(Box::new(super::batch::HostBatch::new(
            caller.clone(),
            alg,
            op,
            cfg,
        )?)),
        Some(d) => Ok(Box::new(DeviceBatch::new(d.clone(), alg, op, cfg)?)),
    }
}

fn seconds(r: anyhow::Result<Duration>) -> Reply {
    match r {
        Ok(d) => Reply::Seconds(d.as_secs_f64()),
        Err(e) => Reply::Failed(format!("{e:#}")),
    }
}

/// A plugin that could not be loaded or was refused: every record it was
/// asked for fails with the reason (a refused plugin is a failure of the
/// run, not a backend that is merely absent here).
pub struct RefusedPlugin {
    name: String,
    reason: String,
    device: Device,
}

impl RefusedPlugin {
    /// The refused plugin at `path`, named by its file name.
    pub fn new(path: &Path, reason: String, device: Device) -> Self {
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        RefusedPlugin {
            name: super::backend_name(&file),
            reason,
            device,
        }
    }
}

impl Backend for RefusedPlugin {
    fn name(&self) -> &str {
        &self.name
    }
    fn provider(&self) -> &str {
        "plugin"
    }
    fn device(&self) -> Device {
        self.device.clone()
    }
    fn emulated(&self) -> bool {
        false
    }
    fn prepare(
        &mut self,
        _alg: Algorithm,
        _op: Operation,
        _cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        Err(anyhow!("{}", self.reason))
    }
}
