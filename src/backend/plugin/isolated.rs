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
use crate::monitor::process::WatchedProcess;
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
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

/// How often a wait for an answer looks at the worker itself: whether it
/// ended (a child it forked may still hold the channel open) and how much
/// memory it holds.
const POLL: Duration = Duration::from_millis(20);

/// How long a worker that closed its channel has to end by itself before it
/// is killed, so that what ended it is its own exit or signal.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The environment variable that bounds a plugin worker's resident memory,
/// in MiB (default: half the memory available when the worker starts).
pub const MEMORY_BOUND_ENV: &str = "PQCPROF_PLUGIN_MEMORY_MB";

/// The exit status of a worker whose channel to pqcprof was closed under
/// it (the plugin closed or replaced a descriptor it does not own).
pub const LOST_CHANNEL_EXIT: i32 = 86;

/// The worker could not read a request or write an answer: its channel to
/// pqcprof is gone ([`LOST_CHANNEL_EXIT`]).
#[derive(Debug)]
pub struct ChannelLost(pub std::io::Error);

impl std::fmt::Display for ChannelLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the plugin worker lost its channel to pqcprof: {}",
            self.0
        )
    }
}

impl std::error::Error for ChannelLost {}

/// The most resident memory one worker may hold, MiB, and where the figure
/// comes from.
#[derive(Debug, Clone, PartialEq)]
struct MemoryBound {
    mb: f64,
    source: String,
}

/// The bound [`MEMORY_BOUND_ENV`] sets, or half of `available_mb`; none
/// when neither is known.
fn memory_bound(
    set: Option<std::ffi::OsString>,
    available_mb: Option<f64>,
) -> anyhow::Result<Option<MemoryBound>> {
    if let Some(v) = set {
        let text = v.to_string_lossy();
        let mb = text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&m| m >= 1)
            .ok_or_else(|| {
                anyhow!("{MEMORY_BOUND_ENV}={text:?}: expected a whole number of MiB, 1 or more")
            })?;
        return Ok(Some(MemoryBound {
            mb: mb as f64,
            source: MEMORY_BOUND_ENV.to_string(),
        }));
    }
    Ok(available_mb.map(|a| MemoryBound {
        mb: (a / 2.0).floor().max(1.0),
        source: format!(
            "half the {:.0} MiB available when it started; {MEMORY_BOUND_ENV} sets another",
            a
        ),
    }))
}

/// `fd` itself when it is above the standard streams, else a duplicate
/// above them (close-on-exec), `fd` closed.
fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicates a descriptor this process owns; the new one is
    // owned by the OwnedFd made from it and by nothing else.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `n` is a new descriptor no one else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}

/// Writes all of `bytes` to the socket `fd` without SIGPIPE: a worker that
/// is gone is an error here (EPIPE), never a signal that ends pqcprof,
/// which keeps SIGPIPE's default action for `| head`.
fn send_all(fd: RawFd, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: sends from a live slice of the given length.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// Makes the worker a session of its own (so every process it or its
/// plugin starts can be found and killed), makes it end when the thread
/// that started it ends (Linux: the kernel sends it SIGKILL, so a measuring
/// process killed with SIGKILL leaves no plugin running), and keeps the
/// channel `fd` open across exec (it is close-on-exec in pqcprof).
fn isolate(c: &mut Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: between fork and exec only async-signal-safe calls run
    // (setsid, prctl, getppid, fcntl), and no memory is allocated.
    unsafe {
        c.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            {
                let sig = libc::SIGKILL as libc::c_ulong;
                if libc::prctl(libc::PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have ended before the line above.
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A running worker and the lines it answers.
struct Worker {
    child: Child,
    /// pqcprof's end of the channel (the worker holds the other).
    channel: UnixStream,
    lines: Receiver<String>,
    path: PathBuf,
    /// What bounds the answer awaited now, for the message when none comes.
    bound: String,
    /// The most resident memory it may hold.
    memory: Option<MemoryBound>,
    /// Where its pid is shared with the sampler.
    watched: WatchedProcess,
    /// Reaped: its pid may name another process now, never to be signalled.
    reaped: bool,
}

/// What bounds an ordinary request.
fn call_bound() -> String {
    format!(
        "the run's deadline or the {} s bound per call",
        CALL_BOUND.as_secs()
    )
}

impl Worker {
    /// Starts a worker on the plugin at `path` and reads its first answer
    /// by `by` (`bound` says what sets it).
    fn start(
        path: &Path,
        ordinal: usize,
        (by, bound): (Instant, String),
        watched: &WatchedProcess,
    ) -> anyhow::Result<(Worker, Reply)> {
        let memory = memory_bound(
            std::env::var_os(MEMORY_BOUND_ENV),
            crate::monitor::process::available_mb(),
        )?;
        let exe =
            std::env::current_exe().context("finding this pqcprof to start a plugin worker")?;
        let (channel, theirs) =
            UnixStream::pair().context("making a channel to a plugin worker")?;
        let theirs = above_stdio(theirs.into()).context("making a channel to a plugin worker")?;
        // What the plugin prints goes to standard error, never the channel.
        let stdout = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from);
        let mut cmd = Command::new(exe);
        cmd.arg("plugin-worker")
            .arg("--channel")
            .arg(theirs.as_raw_fd().to_string())
            .arg("--device")
            .arg(ordinal.to_string())
            .arg(path)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::inherit());
        isolate(&mut cmd, theirs.as_raw_fd());
        let child = cmd.spawn().context("starting a plugin worker process")?;
        // Only the worker holds its end now: its end closing is its answer.
        drop(theirs);
        watched.set(child.id() as i32);
        let reader = channel
            .try_clone()
            .context("reading a plugin worker's channel")?;
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut w = Worker {
            child,
            channel,
            lines,
            path: path.to_path_buf(),
            bound,
            memory,
            watched: watched.clone(),
            reaped: false,
        };
        let first = w.receive(by, "loading")?;
        w.bound = call_bound();
        Ok((w, first))
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Whether the worker has ended; it is left to be reaped, so its pid
    /// (its process group's and session's id) names nothing else meanwhile.
    fn ended(&self) -> bool {
        // SAFETY: a zeroed siginfo_t is valid for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: waits (without reaping, without blocking) on our own child.
        let rc = unsafe { libc::waitid(libc::P_PID, self.pid() as libc::id_t, &mut info, flags) };
        // ECHILD: already reaped.
        // SAFETY: waitid filled `info` (si_pid stays 0 when nothing ended).
        rc != 0 || unsafe { info.si_pid() } != 0
    }

    /// Kills the worker and every process of its session (its process
    /// group at once, then any that moved to another group of the
    /// session), and reaps it.
    fn reap(&mut self) -> std::io::Result<std::process::ExitStatus> {
        if !self.reaped {
            self.kill_all();
        }
        let status = self.child.wait();
        self.reaped = true;
        self.watched.clear(self.pid());
        status
    }

    fn kill_all(&mut self) {
        let pid = self.pid();
        // SAFETY: signals the worker's own process group (setsid made its
        // pid the group's id; not yet reaped, it names no other group).
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        for _ in 0..5 {
            let left = crate::monitor::process::session_members(pid);
            if left.is_empty() {
                break;
            }
            for p in left {
                // SAFETY: signals a process of the worker's session.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
        // A reader blocked on the channel gets its end at once.
        let _ = self.channel.shutdown(std::net::Shutdown::Both);
    }

    /// Kills what is left of the worker's session and says how the worker
    /// ended.
    fn ended_error(&mut self, what: &str) -> anyhow::Error {
        use std::os::unix::process::ExitStatusExt;
        let how = match self.reap() {
            Ok(status) => match (status.signal(), status.code()) {
                (Some(s), _) => format!("was killed by {}", signal_name(s)),
                (None, Some(LOST_CHANNEL_EXIT)) => format!(
                    "exited with code {LOST_CHANNEL_EXIT}: it lost its channel to pqcprof (the plugin closed or replaced a descriptor it does not own)"
                ),
                (None, _) => format!("exited with {status}"),
            },
            Err(e) => format!("could not be waited for ({e})"),
        };
        anyhow!(
            "plugin {} {what}: its worker process {how}",
            self.path.display()
        )
    }

    /// The worker closed its channel: how it ended, once it has (killed
    /// after [`CLOSE_GRACE`] if it has not).
    fn closed_error(&mut self, what: &str) -> anyhow::Error {
        let until = Instant::now() + CLOSE_GRACE;
        while Instant::now() < until {
            if self.ended() {
                return self.ended_error(what);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.reap();
        anyhow!(
            "plugin {} {what}: its worker process closed its channel to pqcprof and did not exit within {} s; it was killed",
            self.path.display(),
            CLOSE_GRACE.as_secs()
        )
    }

    /// When the worker holds more memory than its bound: kills it and says
    /// how much it held.
    fn over_memory(&mut self, what: &str) -> Option<anyhow::Error> {
        let bound = self.memory.clone()?;
        let m = crate::monitor::process::memory(self.pid())?;
        let reached = m.resident_mb.max(m.peak_mb);
        if reached <= bound.mb {
            return None;
        }
        let _ = self.reap();
        Some(anyhow!(
            "plugin {} {what}: its worker process reached {reached:.0} MiB of resident memory, past the bound of {:.0} MiB ({}); it was killed",
            self.path.display(),
            bound.mb,
            bound.source
        ))
    }

    /// The next answer, waiting until `by` at the latest; a worker that
    /// ends, or holds more memory than its bound, fails it at once.
    fn receive(&mut self, by: Instant, what: &str) -> anyhow::Result<Reply> {
        let started = Instant::now();
        let parse = |line: String| {
            serde_json::from_str(&line)
                .map_err(|e| anyhow!("the plugin worker answered something unreadable ({e})"))
        };
        loop {
            let now = Instant::now();
            if now >= by {
                let _ = self.reap();
                return Err(Hung(format!(
                    "plugin {} {what}: no answer within {:.1} s ({}); its worker process was killed",
                    self.path.display(),
                    by.saturating_duration_since(started).as_secs_f64(),
                    self.bound
                ))
                .into());
            }
            match self.lines.recv_timeout((by - now).min(POLL)) {
                // Checked after every answer too, not only while waiting:
                // a call that answers within one poll may still have
                // passed the bound.
                Ok(line) => {
                    if let Some(e) = self.over_memory(what) {
                        return Err(e);
                    }
                    return parse(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if self.ended() {
                        // An answer written just before it ended still counts.
                        return match self.lines.recv_timeout(Duration::from_millis(50)) {
                            Ok(line) => parse(line),
                            Err(_) => Err(self.ended_error(what)),
                        };
                    }
                    if let Some(e) = self.over_memory(what) {
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.closed_error(what)),
            }
        }
    }

    fn ask(&mut self, req: &Request, by: Instant, what: &str) -> anyhow::Result<Reply> {
        let mut line = serde_json::to_string(req)?;
        line.push('\n');
        if send_all(self.channel.as_raw_fd(), line.as_bytes()).is_err() {
            // The worker is gone: `receive` says how it ended.
            return self.receive(by, what);
        }
        match self.receive(by, what)? {
            Reply::Failed(why) => Err(anyhow!("{why} (plugin {})", self.path.display())),
            r => Ok(r),
        }
    }

    fn alive(&mut self) -> bool {
        !self.ended()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.reap();
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
    /// The worker running now, for the sampler.
    watched: WatchedProcess,
    /// When every request must have been answered (the run's deadline).
    deadline: Option<Instant>,
}

/// The plugins opened in this process: each name with the path of the
/// library that declared it first (as given, and canonical).
static NAMES: Mutex<Vec<(String, String, PathBuf)>> = Mutex::new(Vec::new());

/// Claims `name` for the library at `path`: refused, naming both paths,
/// when another library declared it first (their records would be one
/// backend, mixed into one figure).
fn claim_name(name: &str, path: &Path) -> anyhow::Result<()> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    match names.iter().find(|(n, _, _)| n == name) {
        Some((_, shown, first)) if *first != canonical => bail!(
            "plugin {}: its name {name:?} is already declared by plugin {shown}; records are named by the plugin (plugin-{name}), so two libraries of one name would be mixed into one figure: give each its own name",
            path.display()
        ),
        Some(_) => Ok(()),
        None => {
            names.push((name.to_string(), path.display().to_string(), canonical));
            Ok(())
        }
    }
}

/// The time a plugin's load may take: a quarter of the time left to the
/// deadline (the other backends keep the rest), [`CALL_BOUND`] without one.
pub fn load_bound(deadline: Option<Instant>) -> (Instant, String) {
    let now = Instant::now();
    match deadline {
        Some(d) => (
            now + d.saturating_duration_since(now) / 4,
            "a quarter of the time left to the run's deadline, so that the other backends keep the rest".into(),
        ),
        None => (
            now + CALL_BOUND,
            format!("the {} s bound per call", CALL_BOUND.as_secs()),
        ),
    }
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
    /// runs); `deadline` bounds every later request, and the load gets
    /// [`load_bound`] of it.
    pub fn open(
        path: &Path,
        host: Device,
        ordinal: usize,
        deadline: Option<Instant>,
    ) -> anyhow::Result<Self> {
        Self::open_within(path, host, ordinal, deadline, load_bound(deadline))
    }

    /// [`PluginBackend::open`] with the load answered by `load.0` (`load.1`
    /// says what sets it). A plugin whose name another library opened in
    /// this process declared first is refused, naming both.
    pub fn open_within(
        path: &Path,
        host: Device,
        ordinal: usize,
        deadline: Option<Instant>,
        load: (Instant, String),
    ) -> anyhow::Result<Self> {
        let watched = WatchedProcess::new();
        let (worker, first) = Worker::start(path, ordinal, load, &watched)?;
        let (info, offers, gpu) = loaded(first, path)?;
        claim_name(&info.name, path)?;
        Ok(PluginBackend {
            name: super::backend_name(&info.name),
            device: gpu.as_ref().map_or(host, |g| g.device.clone()),
            info,
            gpu,
            offers,
            ordinal,
            worker: Rc::new(RefCell::new(Some(worker))),
            watched,
            deadline,
        })
    }

    /// The worker process running now (whichever it is when read): what a
    /// sampler of the plugin's memory and utilisation watches.
    pub fn worker_process(&self) -> WatchedProcess {
        self.watched.clone()
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
            let load = (self.by(), call_bound());
            let (w, first) = Worker::start(&path, self.ordinal, load, &self.watched)?;
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
        let bound = format!(
            "a quarter of the time left to the run's deadline, or {} s without one",
            VECTORS_BOUND.as_secs()
        );
        self.vectors_by(algs, sample, groups, (by, bound))
    }

    /// [`PluginBackend::vectors`] answered by `by.0` (`by.1` says what sets
    /// it).
    pub fn vectors_by(
        &self,
        algs: &[Algorithm],
        sample: Option<usize>,
        groups: &[usize],
        (by, bound): (Instant, String),
    ) -> anyhow::Result<serde_json::Value> {
        let mut slot = self.ready_worker()?;
        let w = slot.as_mut().ok_or_else(|| anyhow!("no worker"))?;
        let req = Request::Vectors {
            algs: algs.to_vec(),
            sample,
            groups: groups.to_vec(),
        };
        w.bound = bound;
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

/// `text` with every control character (ESC, BEL, CR, LF, the C1 set, ...)
/// written as an escape (`\x1b`, `\u{9b}`): text a plugin chose (its
/// version, its error messages) can then neither move the cursor, clear
/// the screen nor set the terminal's title where pqcprof shows or logs it.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if !c.is_control() => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out
}

/// Every string in `v` with [`escape_controls`] applied.
fn escape_strings(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) if s.chars().any(char::is_control) => *s = escape_controls(s),
        Value::Array(a) => a.iter_mut().for_each(escape_strings),
        Value::Object(o) => o.values_mut().for_each(escape_strings),
        _ => {}
    }
}

/// Standard input, output and error open (on /dev/null) where a plugin
/// closed them, so that nothing the worker opens later takes their numbers
/// and receives what is written to them.
fn keep_stdio_open() {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0 {
            continue;
        }
        // SAFETY: opens /dev/null (a NUL-terminated literal) and moves it to
        // the free number `fd`; the descriptors are the process's own.
        unsafe {
            let n = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if n >= 0 && n != fd {
                libc::dup2(n, fd);
                libc::close(n);
            }
        }
    }
}

/// The worker's loop: loads `path` (a device plugin on GPU `ordinal`),
/// then answers each request line on `out` until its input ends;
/// `vectors` runs the known-answer vectors. Every string of an answer has
/// its control characters escaped ([`escape_controls`]); a request that
/// cannot be read or an answer that cannot be written is [`ChannelLost`].
pub fn serve(
    path: &Path,
    ordinal: usize,
    input: impl BufRead,
    mut out: impl Write,
    vectors: VectorsFn<'_>,
) -> anyhow::Result<()> {
    let mut say = |r: &Reply| -> anyhow::Result<()> {
        let mut v = serde_json::to_value(r)?;
        escape_strings(&mut v);
        let line = serde_json::to_string(&v)?;
        keep_stdio_open();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| ChannelLost(e).into())
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
        let req: Request = serde_json::from_str(&line.map_err(ChannelLost)?)?;
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
    let declares = || format!("plugin {} declares device memory", plugin.info.name);
    // Opening a context through a driver that is missing would abort.
    if let Some(why) = crate::probe::gpu::driver_unusable() {
        return Err(anyhow!("{why}")).with_context(declares);
    }
    let (gpu, side) = Gpu::open(ordinal).with_context(declares)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_to_a_worker_that_is_gone_is_an_error_not_sigpipe() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        drop(theirs);
        // In a child with SIGPIPE's default action, as pqcprof runs: the
        // send fails with EPIPE instead of ending the process.
        // SAFETY: the child calls only async-signal-safe functions (signal,
        // send, _exit) before it exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                let failed = send_all(ours.as_raw_fd(), b"{}\n").is_err();
                libc::_exit(if failed { 0 } else { 1 });
            }
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child ended with status {status:#x} (signal {})",
            libc::WTERMSIG(status)
        );
    }

    #[test]
    fn the_channel_never_takes_a_standard_stream_number() {
        // SAFETY: opens /dev/null; the OwnedFd owns the descriptor.
        let low =
            unsafe { OwnedFd::from_raw_fd(libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY)) };
        let moved = above_stdio(low).unwrap();
        assert!(moved.as_raw_fd() > 2);
    }

    #[test]
    fn the_memory_bound_is_half_the_available_or_the_variable() {
        let b = memory_bound(None, Some(1001.0)).unwrap().unwrap();
        assert_eq!(b.mb, 500.0);
        assert!(b.source.contains("half the 1001 MiB available"), "{b:?}");
        assert_eq!(memory_bound(None, None).unwrap(), None);
        let set = |v: &str| memory_bound(Some(v.into()), Some(1000.0));
        assert_eq!(set("64").unwrap().unwrap().mb, 64.0);
        for bad in ["0", "-3", "lots", "1.5"] {
            let e = set(bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("{MEMORY_BOUND_ENV}=\"{bad}\"")) && e.contains("whole number"),
                "{e}"
            );
        }
    }

    #[test]
    fn control_characters_are_escaped_in_every_string_of_an_answer() {
        assert_eq!(
            escape_controls("v1\u{1b}]0;t\u{7}\u{1b}[2J\u{9b}x\nz"),
            "v1\\x1b]0;t\\x07\\x1b[2J\\u{9b}x\\x0az"
        );
        assert_eq!(escape_controls("ML-KEM-512 ök"), "ML-KEM-512 ök");
        let mut v = serde_json::to_value(Reply::Failed("\u{1b}[2Jgone".into())).unwrap();
        escape_strings(&mut v);
        assert_eq!(v, serde_json::json!({"Failed": "\\x1b[2Jgone"}));
    }
}
