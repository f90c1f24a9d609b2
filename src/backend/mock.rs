//! A backend for tests only: it does no cryptography, sleeps instead, and
//! names itself `mock (test only)` in every record it produces.

use crate::backend::{Backend, BatchConfig, Prepared};

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::{Device, DeviceKind, GateReport};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Name in records: says plainly that a mock produced them.
pub const NAME: &str = "mock (test only)";

/// Scripted behaviour of the mock.
#[derive(Clone, Default)]
pub struct Mock {
    /// Timed window each run reports, cycling through the list.
    pub durations: Vec<Duration>,
    /// Operations whose gate fails.
    pub failing_gate: Vec<(Algorithm, Operation)>,
    /// The gate fails after this run (1 for the first, warm-up included):
    /// an implementation that goes wrong now and then.
    pub gate_fails_after_run: Option<usize>,
    /// Every call to `arm` and `check`, shared with its clones, as
    /// `arm`, `run` and `check:<checkpoint>` lines.
    pub calls: Arc<std::sync::Mutex<Vec<String>>>,
    /// Operations whose `prepare` fails.
    pub failing_prepare: Vec<(Algorithm, Operation)>,
    /// End-to-end window each run reports; `None`: no end-to-end runs.
    pub end_to_end: Option<Duration>,
    /// What `max_batch` answers (the memory a GPU would have).
    pub max_fit: Option<usize>,
    /// Runs made so far (warm-up, timed and end-to-end) by every batch this
    /// mock prepared, shared with its clones: what a test reads to see that
    /// nothing ran when nothing should have.
    pub runs_made: Arc<AtomicUsize>,
    /// Wall time each run really takes (a sleep), for time budgets.
    pub wall: Option<Duration>,
    /// What an empty window measures; `None`: the mock has none.
    pub floor: Option<Duration>,
    /// Whether each run's window was covered by a device-side hold,
    /// cycling through the list; empty: no hold.
    pub holds: Vec<bool>,
}

impl Backend for Mock {
    fn name(&self) -> &str {
        NAME
    }
    fn provider(&self) -> &str {
        "mock (test only)"
    }
    fn device(&self) -> Device {
        Device {
            kind: DeviceKind::Cpu,
            name: "mock device (test only)".into(),
            memory_total_mb: 1024,
        }
    }
    fn max_batch(&mut self, _: Algorithm, _: Operation, _: &BatchConfig) -> Option<usize> {
        self.max_fit
    }
    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        _cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        if self.failing_prepare.contains(&(alg, op)) {
            anyhow::bail!("mock prepare failure for {alg} {op}");
        }
        Ok(Box::new(MockBatch {
            durations: if self.durations.is_empty() {
                vec![Duration::from_millis(1)]
            } else {
                self.durations.clone()
            },
            next: 0,
            gate_fails: self.failing_gate.contains(&(alg, op)),
            gate_fails_after_run: self.gate_fails_after_run,
            calls: self.calls.clone(),
            armed: false,
            last_armed: false,
            end_to_end: self.end_to_end,
            runs_made: self.runs_made.clone(),
            wall: self.wall,
            floor: self.floor,
            holds: self.holds.clone(),
        }))
    }
}

struct MockBatch {
    durations: Vec<Duration>,
    next: usize,
    gate_fails: bool,
    gate_fails_after_run: Option<usize>,
    calls: Arc<std::sync::Mutex<Vec<String>>>,
    /// Whether the next run is armed, and whether the last one was (what
    /// the gate requires of the run it checks).
    armed: bool,
    last_armed: bool,
    end_to_end: Option<Duration>,
    runs_made: Arc<AtomicUsize>,
    wall: Option<Duration>,
    floor: Option<Duration>,
    holds: Vec<bool>,
}

impl Prepared for MockBatch {
    fn last_hold(&self) -> Option<crate::backend::HoldRun> {
        let covered = *self
            .holds
            .get(self.next.checked_sub(1)? % self.holds.len().max(1))?;
        Some(crate::backend::HoldRun {
            requested: Duration::from_micros(500),
            measured: Duration::from_micros(if covered { 600 } else { 500 }),
            covered,
        })
    }
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        self.floor.map(Ok)
    }
    fn empty_window_method(&self) -> &'static str {
        "scripted empty window (mock, test only)"
    }
    fn run_back_to_back(&mut self, launches: usize) -> anyhow::Result<()> {
        // One armed window: the gate checks what the last launch left.
        let armed = self.armed;
        for _ in 0..launches {
            self.armed = armed;
            self.run()?;
        }
        Ok(())
    }
    fn arm(&mut self) -> anyhow::Result<()> {
        self.calls.lock().unwrap().push("arm".into());
        self.armed = true;
        Ok(())
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        self.calls.lock().unwrap().push("run".into());
        self.last_armed = std::mem::take(&mut self.armed);
        if let Some(w) = self.wall {
            std::thread::sleep(w);
        }
        let d = self.durations[self.next % self.durations.len()];
        self.next += 1;
        self.runs_made.fetch_add(1, Ordering::SeqCst);
        Ok(d)
    }
    fn check(&mut self, at: crate::backend::Checkpoint) -> anyhow::Result<GateReport> {
        self.calls.lock().unwrap().push(format!("check:{at:?}"));
        if self.gate_fails {
            anyhow::bail!("mock gate failure (test only)");
        }
        anyhow::ensure!(
            self.last_armed,
            "mock gate: the run checked was not armed (test only)"
        );
        if self.gate_fails_after_run == Some(self.next) {
            anyhow::bail!("mock gate failure after run {} (test only)", self.next);
        }
        Ok(GateReport {
            checked_ops: 1,
            checks: vec!["mock check (test only)".into()],
            coverage: None,
        })
    }
    fn threads(&self) -> usize {
        1
    }
    fn timed_window(&self) -> &'static str {
        "scripted durations (mock, test only)"
    }
    fn run_end_to_end(&mut self) -> Option<anyhow::Result<std::time::Duration>> {
        if self.end_to_end.is_some() {
            self.runs_made.fetch_add(1, Ordering::SeqCst);
        }
        self.end_to_end.map(Ok)
    }
    fn end_to_end_window(&self) -> &'static str {
        match self.end_to_end {
            Some(_) => "scripted end-to-end durations (mock, test only)",
            None => "",
        }
    }
}
