//! Time budgets of a measurement: the per-record limit (`--max-seconds`),
//! the command's deadline (`--deadline`) and each record's share of it, and
//! the check a running record makes before each step (`Budget`).

use std::time::{Duration, Instant};

/// Default time a calibrated GPU launch aims at, seconds. 100 ms keeps the
/// fixed costs of a timed launch (the 0.5 ms device-side hold, the events,
/// the launch itself: tens of microseconds) under 1% and spans many waves
/// on any GPU, while a record (warm-up, gate, 20 kernel-only and 20
/// end-to-end runs, a one-second energy window) stays near 6 seconds, so
/// all 18 operations fit in about two minutes of a time-limited machine.
pub const DEFAULT_LAUNCH_TARGET_S: f64 = 0.1;

/// Time budgets and the calibration target of a measurement.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Seconds one record may take (`--max-seconds`), counted from
    /// `record_start`.
    pub max_seconds: Option<f64>,
    /// When the whole command must be done (`--deadline`), with its length
    /// in seconds for the notes.
    pub deadline: Option<(Instant, f64)>,
    /// When the record in hand began (its calibration included); `None`:
    /// when `measure_as` is called.
    pub record_start: Option<Instant>,
    /// Launch time a calibrated GPU batch aims at, seconds.
    pub launch_target_s: f64,
    /// The record's fair share of what `--deadline` leaves: the seconds
    /// left when it began over the records not yet begun (itself included),
    /// with that count. Set by the session, so that the first records of a
    /// deadline cannot use up the time of the last ones.
    pub share: Option<(f64, usize)>,
    /// `--runs auto`: stop timing once the median's relative 95% interval
    /// half-width (a fraction, `--max-noise` / 100) is below this, after at
    /// least [`AUTO_MIN_RUNS`] runs; the run count is then a ceiling
    /// (`--max-runs`). `None`: a fixed number of runs.
    pub until_noise: Option<f64>,
}

/// The fewest timed runs `--runs auto` makes before the noise may stop it.
/// The median's distribution-free 95% interval needs six values, so the
/// first stop on noise comes at the sixth run at the earliest.
pub const AUTO_MIN_RUNS: usize = 5;

/// `--max-runs`'s default: with the median's half-width near
/// 2.46 sigma / sqrt(n) (1.96 times the median's standard error, 1.2533
/// sigma / sqrt(n), for normal noise), 200 runs reach the 1% target for
/// run-to-run noise up to about 5.7%; noisier records stop at 200.
pub const DEFAULT_MAX_RUNS: usize = 200;

/// `--max-noise`'s default, percent.
pub const DEFAULT_MAX_NOISE_PCT: f64 = 1.0;

/// How long the native kernels' compile may take, counted from `started`
/// (when the command read its options): until `deadline_s` when it is
/// given (the compile is the command's, not a record's), else until
/// `max_seconds`; `None` when neither is given.
pub fn compile_bound(
    started: Instant,
    deadline_s: Option<f64>,
    max_seconds: Option<f64>,
) -> Option<crate::backend::native_gpu::bounded_compile::CompileBound> {
    let (s, flag) = match (deadline_s, max_seconds) {
        (Some(s), _) => (s, "--deadline"),
        (None, Some(s)) => (s, "--max-seconds"),
        (None, None) => return None,
    };
    Some(crate::backend::native_gpu::bounded_compile::CompileBound {
        by: started + Duration::from_secs_f64(s),
        what: format!("{flag} {s}"),
    })
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            max_seconds: None,
            deadline: None,
            record_start: None,
            launch_target_s: DEFAULT_LAUNCH_TARGET_S,
            share: None,
            until_noise: None,
        }
    }
}

impl Timing {
    /// The earliest end of a record begun at `start`, and the budget that
    /// sets it, in words.
    pub fn record_end(&self, start: Instant) -> Option<(Instant, String)> {
        let per_record = self.record_limit(start);
        let whole = self.deadline.map(|(at, s)| (at, format!("--deadline {s}")));
        match (per_record, whole) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The record's own limit, begun at `start`: `--max-seconds`, or its
    /// share of the deadline when that is less, named for the cut note.
    pub fn record_limit(&self, start: Instant) -> Option<(Instant, String)> {
        let max = self.max_seconds.map(|s| (s, format!("--max-seconds {s}")));
        let share = self.share.zip(self.deadline).map(|((s, n), (_, d))| {
            (
                s,
                format!("its share of --deadline {d} ({s:.1} s, the time left over {n} records not yet begun)"),
            )
        });
        let pick = match (max, share) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        pick.map(|(s, why)| (start + Duration::from_secs_f64(s.max(0.0)), why))
    }

    /// Whether the command's deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.deadline.is_some_and(|(at, _)| Instant::now() >= at)
    }
}

/// A record's time budget while it runs: whether a step expected to take
/// `next` still ends before the budget does.
#[derive(Clone)]
pub(crate) struct Budget {
    /// The record's own budget (`--max-seconds`): it never stops the
    /// first timed run once the gate has passed.
    pub(crate) record: Option<(Instant, String)>,
    /// The command's (`--deadline`): nothing starts that would end past it.
    pub(crate) deadline: Option<(Instant, String)>,
    pub(crate) reserve: Duration,
}

/// Time kept back at the end of a budget for what follows the last run
/// (the gate after the runs, freeing the batch, writing the files): 5% of
/// the time left when the record began, at most 2 s.
pub(crate) fn tail_reserve(left: Duration) -> Duration {
    (left / 20).min(Duration::from_secs(2))
}

impl Budget {
    /// Whether a step like the last one (`next`, with a quarter more for
    /// jitter) ends before the budget, less its tail reserve.
    /// The budget a step like `next` would overrun, by name; `first`: the
    /// first timed run, which only the deadline stops.
    pub(crate) fn check(&self, next: Duration, first: bool) -> Option<&str> {
        let over =
            |end: &(Instant, String)| Instant::now() + next + next / 4 + self.reserve > end.0;
        if let Some(d) = self.deadline.as_ref().filter(|d| over(d)) {
            return Some(d.1.as_str());
        }
        if first {
            return None;
        }
        self.record
            .as_ref()
            .filter(|r| over(r))
            .map(|r| r.1.as_str())
    }
}

/// Why a record stopped before all its runs.
pub(crate) fn cut_note(by: &str, done: usize, of: usize, what: &str) -> String {
    format!("cut by {by} after {done} of {of} {what}; its statistics are over the {done} finished")
}
