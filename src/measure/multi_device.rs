//! Every GPU of a node at once (`--device all` or `--device 0,2,3`): one
//! host thread per device, each opening its own backend (context, stream,
//! buffers) and its own sampler, all measuring the same (algorithm,
//! operation) in step. A start line (a barrier each device passes once per
//! operation, right after its correctness gate) starts the timed runs
//! together, so the devices share the node's power and PCIe as in real use.
//!
//! Each device gives one record (its `gpu_ordinal` set, its runs' windows
//! on the host clock kept), and the devices' records of each operation are
//! added up in an aggregate (`crate::analyse::aggregate`). A device that fails or
//! cannot be opened leaves the start line, so the others never wait for it.
//!
//! Longer than most files: a third of it is tests, which need a whole fake
//! node (devices that open, fail to open, or run slowly) to check the start
//! barrier and the aggregates.

use crate::analyse::aggregate;
use crate::backend::{Backend, BatchConfig, Prepared};
use crate::core::catalog::{Algorithm, Operation};
use crate::measure::runner::{measure_record, MeasureConfig};
use crate::monitor::Sampler;
use crate::schema::device::GateReport;
use crate::schema::record::Record;
use crate::schema::run_file::RunFile;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A backend and the sampler watching it, opened inside a device's thread.
pub type Opened = (Box<dyn Backend>, Box<dyn Sampler>);

/// Opens the backend of one GPU ordinal, or says why it cannot.
pub type Opener = dyn Fn(usize) -> Result<Opened, String> + Send + Sync;

/// One backend over several GPUs of this node.
pub struct MultiDevice {
    /// Backend name, for records of devices that cannot be opened.
    pub name: String,
    /// CUDA ordinals, in the order given.
    pub ordinals: Vec<usize>,
    /// Operations per batch on each device.
    pub batch: usize,
    /// Opens one device (called in that device's thread, one at a time, so
    /// the kernels are compiled once and read from the cache after).
    pub open: Arc<Opener>,
}

/// A barrier for a number of parties that may shrink: each party arrives
/// once per round or leaves for good; a round ends when every remaining
/// party has arrived.
pub struct StartLine {
    state: Mutex<StartState>,
    turn: Condvar,
}

struct StartState {
    parties: usize,
    arrived: usize,
    round: u64,
}

impl StartLine {
    /// A start line for `parties` threads.
    pub fn new(parties: usize) -> Self {
        StartLine {
            state: Mutex::new(StartState {
                parties,
                arrived: 0,
                round: 0,
            }),
            turn: Condvar::new(),
        }
    }

    /// Ends the round when everyone is in.
    fn release_if_full(s: &mut StartState, turn: &Condvar) -> bool {
        if s.arrived > 0 && s.arrived >= s.parties {
            s.arrived = 0;
            s.round += 1;
            turn.notify_all();
            return true;
        }
        false
    }

    /// Arrives and waits for every other remaining party.
    pub fn wait(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.arrived += 1;
        if Self::release_if_full(&mut s, &self.turn) {
            return;
        }
        let round = s.round;
        while s.round == round {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Leaves for good: later rounds no longer wait for this party.
    pub fn leave(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.parties = s.parties.saturating_sub(1);
        Self::release_if_full(&mut s, &self.turn);
    }
}

/// Seconds since the Unix epoch, host clock.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// What a watched batch saw: whether its first gate ran (and the start
/// line was passed), and the host-clock window of each timed run.
#[derive(Default)]
pub struct Watch {
    start_line: Option<Arc<StartLine>>,
    checked: bool,
    arrived: bool,
    windows: Vec<[f64; 2]>,
}

impl Watch {
    /// A watch that waits at `start_line` after the first gate, if given.
    pub fn new(start_line: Option<Arc<StartLine>>) -> Rc<RefCell<Self>> {
        Rc::new(RefCell::new(Watch {
            start_line,
            ..Watch::default()
        }))
    }

    /// The timed runs' windows, when there is one per timed run of `rec`.
    pub fn windows_for(&self, rec: &Record) -> Option<Vec<[f64; 2]>> {
        (!rec.run_seconds.is_empty() && self.windows.len() == rec.run_seconds.len())
            .then(|| self.windows.clone())
    }
}

/// A backend whose batches record their timed runs' windows (and pass the
/// start line after their first gate): the runner measures it unchanged.
pub struct Watched<'a> {
    /// The backend measured.
    pub inner: &'a mut dyn Backend,
    /// What its batches saw.
    pub watch: Rc<RefCell<Watch>>,
}

impl Backend for Watched<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn device(&self) -> crate::schema::device::Device {
        self.inner.device()
    }
    fn plugin(&self) -> Option<crate::schema::plugin::PluginInfo> {
        self.inner.plugin()
    }
    fn supports(&self, alg: Algorithm, op: Operation) -> bool {
        self.inner.supports(alg, op)
    }
    fn default_batch(&mut self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> usize {
        self.inner.default_batch(alg, op, cfg)
    }
    fn max_batch(&mut self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> Option<usize> {
        self.inner.max_batch(alg, op, cfg)
    }
    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        let inner = self.inner.prepare(alg, op, cfg)?;
        Ok(Box::new(WatchedBatch {
            inner,
            watch: self.watch.clone(),
        }))
    }
}

struct WatchedBatch {
    inner: Box<dyn Prepared>,
    watch: Rc<RefCell<Watch>>,
}

impl Prepared for WatchedBatch {
    fn arm(&mut self) -> anyhow::Result<()> {
        self.inner.arm()
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        let timed = self.watch.borrow().checked;
        let start = unix_now();
        let r = self.inner.run();
        if timed {
            self.watch.borrow_mut().windows.push([start, unix_now()]);
        }
        r
    }
    fn check(&mut self, at: crate::backend::Checkpoint) -> anyhow::Result<GateReport> {
        let r = self.inner.check(at);
        let line = {
            let mut w = self.watch.borrow_mut();
            if w.checked {
                None
            } else {
                w.checked = true;
                w.arrived = w.start_line.is_some();
                w.start_line.clone()
            }
        };
        // After the first gate, passed or not: the timed runs start together.
        if let Some(line) = line {
            line.wait();
        }
        r
    }
    fn threads(&self) -> usize {
        self.inner.threads()
    }
    fn timed_window(&self) -> &'static str {
        self.inner.timed_window()
    }
    fn pinning(&self) -> Option<String> {
        self.inner.pinning()
    }
    fn kernel(&self) -> Option<crate::schema::device::KernelInfo> {
        self.inner.kernel()
    }
    // The end-to-end and energy windows come after the timed runs and are
    // not timed runs themselves: passed through, no window recorded.
    fn run_end_to_end(&mut self) -> Option<anyhow::Result<Duration>> {
        self.inner.run_end_to_end()
    }
    fn run_back_to_back(&mut self, launches: usize) -> anyhow::Result<()> {
        self.inner.run_back_to_back(launches)
    }
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        self.inner.empty_window()
    }
    fn empty_window_method(&self) -> &'static str {
        self.inner.empty_window_method()
    }
    fn empty_launch_rate(&mut self) -> Option<anyhow::Result<f64>> {
        self.inner.empty_launch_rate()
    }
    fn cache(&self) -> Option<&'static str> {
        self.inner.cache()
    }
    fn end_to_end_window(&self) -> &'static str {
        self.inner.end_to_end_window()
    }
    fn latency_method(&self) -> &'static str {
        self.inner.latency_method()
    }
    fn last_hold(&self) -> Option<crate::backend::HoldRun> {
        self.inner.last_hold()
    }
}

/// One device's thread: open, then measure every job in order, passing the
/// start line once per job; sends each record as it is done.
#[allow(clippy::too_many_arguments)]
fn device_thread(
    ordinal: usize,
    slot: &MultiDevice,
    jobs: &[(Algorithm, Operation)],
    cfg: &MeasureConfig,
    line: &Arc<StartLine>,
    open_one_at_a_time: &Mutex<()>,
    cancel: &AtomicBool,
    tx: mpsc::Sender<Record>,
) {
    let opened = {
        let _one = open_one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        (slot.open)(ordinal)
    };
    let (mut backend, mut sampler) = match opened {
        Ok(o) => o,
        Err(reason) => {
            line.leave();
            let null = crate::backend::null::NullBackend(slot.name.clone());
            for &(alg, op) in jobs {
                let mut rec = crate::measure::runner::skipped(
                    &null,
                    alg,
                    op,
                    cfg,
                    format!("GPU {ordinal}: {reason}"),
                );
                rec.gpu_ordinal = Some(ordinal);
                rec.sampler = "none: device not opened".into();
                if tx.send(rec).is_err() {
                    return;
                }
            }
            return;
        }
    };
    for &(alg, op) in jobs {
        let watch = Watch::new(Some(line.clone()));
        let mut watched = Watched {
            inner: backend.as_mut(),
            watch: watch.clone(),
        };
        let result = measure_record(
            &mut watched,
            alg,
            op,
            cfg,
            sampler.as_mut(),
            cancel,
            &mut |_, _| {},
        );
        // A batch that failed before its gate still takes its place.
        if !watch.borrow().arrived {
            line.wait();
        }
        let Ok(mut rec) = result else { break };
        rec.gpu_ordinal = Some(ordinal);
        rec.run_windows_unix_s = watch.borrow().windows_for(&rec);
        if let Some(reason) = rec.reason.as_deref() {
            log::warn!("GPU {ordinal} {alg} {op}: {:?}: {reason}", rec.status);
        }
        if tx.send(rec).is_err() {
            break;
        }
        // A signal during the record kept its finished runs; stop here.
        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    line.leave();
}

/// Measures every (algorithm, operation) of the plan on every device of
/// `slot` at once, appending each device's record and each operation's
/// aggregate to `run`, and calling `after_algorithm` when an algorithm is
/// done on every device. Returns whether Ctrl-C stopped it.
pub fn run(
    slot: &MultiDevice,
    algorithms: &[Algorithm],
    operations: &[Operation],
    measure_cfg: &MeasureConfig,
    cancel: &AtomicBool,
    run: &mut RunFile,
    after_algorithm: &mut dyn FnMut(&RunFile) -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    let mut cfg = measure_cfg.clone();
    cfg.batch.threads = 1;
    cfg.batch.batch = slot.batch;
    let jobs: Vec<(Algorithm, Operation)> = algorithms
        .iter()
        .flat_map(|&a| {
            a.operations()
                .into_iter()
                .filter(|o| operations.is_empty() || operations.contains(o))
                .map(move |o| (a, o))
        })
        .collect();
    let line = Arc::new(StartLine::new(slot.ordinals.len()));
    let one_at_a_time = Mutex::new(());
    let host = run.metadata.hostname.clone();
    let scope = format!(
        "GPUs {} of {host}",
        slot.ordinals
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    log::info!(
        "{} on {scope}: one thread per GPU, timed runs started together",
        slot.name
    );
    std::thread::scope(|s| -> anyhow::Result<bool> {
        let mut receivers = vec![];
        for &ordinal in &slot.ordinals {
            let (tx, rx) = mpsc::channel();
            receivers.push(Some(rx));
            let (jobs, cfg, line, one, cancel) = (&jobs, &cfg, &line, &one_at_a_time, cancel);
            s.spawn(move || device_thread(ordinal, slot, jobs, cfg, line, one, cancel, tx));
        }
        let mut stopped = false;
        let mut i = 0;
        while i < jobs.len() {
            let alg = jobs[i].0;
            let first_record = run.records.len();
            while i < jobs.len() && jobs[i].0 == alg {
                let before = run.records.len();
                for rx in receivers.iter_mut() {
                    let Some(r) = rx else { continue };
                    match r.recv() {
                        Ok(rec) => run.records.push(rec),
                        // The thread ended early: Ctrl-C.
                        Err(_) => {
                            *rx = None;
                            stopped = true;
                        }
                    }
                }
                let members: Vec<(usize, &Record)> = (before..run.records.len())
                    .map(|k| (k, &run.records[k]))
                    .collect();
                let aggs = aggregate::aggregate_all(&scope, members, &|_| (host.as_str(), None));
                run.aggregates.extend(aggs);
                i += 1;
            }
            if run.records.len() > first_record {
                after_algorithm(run)?;
            }
            if stopped {
                break;
            }
        }
        Ok(stopped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::Mock;
    use crate::monitor::RunUsage;
    use crate::schema::record::{Mode, Status};

    struct NoUsage;
    impl Sampler for NoUsage {
        fn start(&mut self) -> anyhow::Result<()> {
            Ok(())
        }
        fn stop(&mut self) -> anyhow::Result<RunUsage> {
            Ok(RunUsage::default())
        }
        fn describe(&self) -> String {
            "none (test)".into()
        }
    }

    fn cfg(runs: usize) -> MeasureConfig {
        MeasureConfig {
            batch: BatchConfig {
                batch: 4,
                threads: 1,
                message_size: 0,
                context: vec![],
                gate: Default::default(),
            },
            runs,
            warmup_runs: 1,
            mode: Mode::Throughput,
            timing: Default::default(),
        }
    }

    fn empty_run() -> RunFile {
        RunFile::new(
            crate::probe::system::collect(None),
            crate::schema::record::RunConfig::for_tests(),
        )
    }

    #[test]
    fn the_start_line_waits_for_everyone_and_forgets_who_left() {
        let line = Arc::new(StartLine::new(3));
        let passed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..2 {
                let (line, passed) = (line.clone(), passed.clone());
                s.spawn(move || {
                    line.wait();
                    passed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    // Second round: the third party has left by then.
                    line.wait();
                });
            }
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(
                passed.load(std::sync::atomic::Ordering::SeqCst),
                0,
                "nobody passes before all three arrive"
            );
            line.wait();
            line.leave();
        });
        assert_eq!(passed.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    /// The mock, each run taking 20 ms of wall time, so runs have windows
    /// that can overlap.
    struct Slow(Mock);
    struct SlowBatch(Box<dyn Prepared>);
    impl Backend for Slow {
        fn name(&self) -> &str {
            self.0.name()
        }
        fn provider(&self) -> &str {
            self.0.provider()
        }
        fn device(&self) -> crate::schema::device::Device {
            self.0.device()
        }
        fn prepare(
            &mut self,
            alg: Algorithm,
            op: Operation,
            cfg: &BatchConfig,
        ) -> anyhow::Result<Box<dyn Prepared>> {
            Ok(Box::new(SlowBatch(self.0.prepare(alg, op, cfg)?)))
        }
    }
    impl Prepared for SlowBatch {
        fn arm(&mut self) -> anyhow::Result<()> {
            self.0.arm()
        }
        fn run(&mut self) -> anyhow::Result<Duration> {
            std::thread::sleep(Duration::from_millis(20));
            self.0.run()
        }
        fn check(&mut self, at: crate::backend::Checkpoint) -> anyhow::Result<GateReport> {
            self.0.check(at)
        }
        fn threads(&self) -> usize {
            1
        }
        fn timed_window(&self) -> &'static str {
            self.0.timed_window()
        }
    }

    fn slow_mock(_: usize) -> Result<Opened, String> {
        Ok((Box::new(Slow(Mock::default())), Box::new(NoUsage)))
    }

    fn slot(ordinals: Vec<usize>, open: Arc<Opener>) -> MultiDevice {
        MultiDevice {
            name: crate::backend::mock::NAME.into(),
            ordinals,
            batch: 4,
            open,
        }
    }

    #[test]
    fn every_device_gives_a_record_and_each_operation_an_aggregate() {
        let open: Arc<Opener> = Arc::new(slow_mock);
        let mut run = empty_run();
        let mut writes = 0;
        let stopped = super::run(
            &slot(vec![0, 2, 3], open),
            &[Algorithm::MlKem512, Algorithm::MlDsa44],
            &[],
            &cfg(3),
            &AtomicBool::new(false),
            &mut run,
            &mut |_| {
                writes += 1;
                Ok(())
            },
        )
        .unwrap();
        assert!(!stopped);
        assert_eq!(writes, 2, "written after each algorithm");
        assert_eq!(run.records.len(), 6 * 3);
        assert!(run.records.iter().all(|r| r.status == Status::Ok));
        let ordinals: Vec<usize> = run.records[..3]
            .iter()
            .map(|r| r.gpu_ordinal.unwrap())
            .collect();
        assert_eq!(ordinals, [0, 2, 3]);
        assert!(run
            .records
            .iter()
            .all(|r| r.run_windows_unix_s.as_ref().map(Vec::len) == Some(3)));
        assert_eq!(run.aggregates.len(), 6);
        let a = &run.aggregates[0];
        assert_eq!(a.records, [0, 1, 2]);
        assert_eq!(a.members.len(), 3);
        // The start line makes the timed runs overlap.
        assert!(a.overlapped_runs.iter().all(|&n| n >= 2), "{a:?}");
        let sum: f64 = a.member_ops_per_sec.iter().sum();
        assert_eq!(a.total_ops_per_sec, Some(sum));
    }

    #[test]
    fn a_device_that_cannot_open_is_skipped_and_nobody_waits_for_it() {
        let open: Arc<Opener> = Arc::new(|d| {
            if d == 1 {
                return Err("cannot open GPU 1: test".into());
            }
            slow_mock(d)
        });
        let mut run = empty_run();
        super::run(
            &slot(vec![0, 1], open),
            &[Algorithm::MlKem512],
            &[Operation::KeyGen],
            &cfg(2),
            &AtomicBool::new(false),
            &mut run,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(run.records.len(), 2);
        assert_eq!(run.records[1].status, Status::Skipped);
        assert!(run.records[1]
            .reason
            .as_deref()
            .unwrap()
            .contains("GPU 1: cannot open"));
        let a = &run.aggregates[0];
        assert_eq!(a.not_ok.len(), 1);
        assert_eq!(a.total_ops_per_sec, Some(a.member_ops_per_sec[0]));
    }

    #[test]
    fn ctrl_c_stops_every_device() {
        let open: Arc<Opener> = Arc::new(slow_mock);
        let mut run = empty_run();
        let stopped = super::run(
            &slot(vec![0, 1], open),
            &[Algorithm::MlKem512],
            &[],
            &cfg(2),
            &AtomicBool::new(true),
            &mut run,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert!(stopped);
        assert!(run.records.is_empty());
    }
}
