//! A backend's batch-time curve, taken from the throughput records of a
//! run file (a batch sweep): how long one batch of `n` requests takes on
//! one worker, between and below the measured batches; and, where known,
//! how long it takes while every worker is busy at once.

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::DeviceKind;
pub use crate::schema::offload::Handoff;
use crate::schema::record::{Mode, Record, Status};

/// Batch times of one (backend, algorithm, operation) on one worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// (batch, seconds), batches ascending.
    pub points: Vec<(usize, f64)>,
    /// A CPU worker's time grows from zero with the batch; a GPU launch
    /// costs at least what the smallest measured batch took.
    pub cpu: bool,
    /// What the times are: the kernel alone or end to end.
    pub basis: &'static str,
    /// Per point, how single batches spread around its time: each
    /// measured batch's time over the point's median, sorted (empty: no
    /// spread known). A simulation draws from it, so that the tail of the
    /// latency reflects the tail of the batch time.
    pub spread: Vec<Vec<f64>>,
    /// The dispatcher's own cost, added to the simulated batches.
    pub handoff: Handoff,
    /// Batch times with several workers busy at once (none: not measured,
    /// and every batch takes the one-worker time whatever else runs).
    pub contended: Option<Contended>,
}

/// Batch times measured with `busy` workers each serving batches of one
/// size back to back: what workers that share a host (cores, memory,
/// caches) take while the others run.
#[derive(Debug, Clone, PartialEq)]
pub struct Contended {
    /// Workers busy at once while measured (at least 2).
    pub busy: usize,
    /// (batch, seconds) at the same batches as the one-worker points.
    pub points: Vec<(usize, f64)>,
    /// Per point, as [`Curve::spread`].
    pub spread: Vec<Vec<f64>>,
}

impl Curve {
    /// The curve from `records`: the ok throughput records of `backend`,
    /// `alg` and `op` (one-thread records on a CPU: one worker; GPU records
    /// end to end, copies included, where measured). The median where a
    /// batch appears more than once.
    pub fn from_records(
        records: &[Record],
        backend: &str,
        alg: Algorithm,
        op: Operation,
    ) -> Result<Curve, String> {
        let mut by_batch: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        let mut runs: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        let mut cpu = None;
        let mut end_to_end = true;
        for r in records.iter().filter(|r| {
            r.status == Status::Ok
                && r.mode == Mode::Throughput
                && r.backend.eq_ignore_ascii_case(backend)
                && r.algorithm == alg.name()
                && r.operation == op
                && (r.device.kind == DeviceKind::Gpu || r.threads == 1)
        }) {
            let e2e = r.end_to_end.as_ref().and_then(|e| e.batch_ms);
            let run_seconds = match (&r.end_to_end, e2e) {
                (Some(e), Some(_)) => &e.run_seconds,
                _ => &r.run_seconds,
            };
            let Some(ms) = e2e.or(r.batch_ms).filter(|m| m.is_finite() && *m > 0.0) else {
                continue;
            };
            end_to_end &= e2e.is_some();
            cpu = Some(r.device.kind == DeviceKind::Cpu);
            by_batch.entry(r.batch).or_default().push(ms / 1e3);
            runs.entry(r.batch).or_default().extend(run_seconds);
        }
        let Some(cpu) = cpu else {
            return Err(missing(records, backend, alg, op));
        };
        let points = medians(by_batch);
        let spread = points
            .iter()
            .map(|(b, _)| spread_of(runs.get(b).map_or(&[][..], |v| &v[..])))
            .collect();
        Ok(Curve {
            points,
            spread,
            handoff: Handoff::default(),
            contended: None,
            cpu,
            basis: if cpu {
                "one CPU thread's batch time"
            } else if end_to_end {
                "end to end: copies to and from the GPU and the kernel"
            } else {
                "the kernel alone (no end-to-end time in the file)"
            },
        })
    }

    /// The contended times of `workers` CPU workers from `records`: a
    /// liboqs-cpu batch of `workers x b` at `--threads workers` is split
    /// into `workers` chunks of `b`, one per thread, all released at once
    /// and timed to the last one's end: each thread runs a batch of `b`
    /// while the others run theirs. `None` for one worker, or where no such
    /// ok record is there.
    pub fn contended_from_records(
        records: &[Record],
        backend: &str,
        alg: Algorithm,
        op: Operation,
        workers: usize,
    ) -> Option<Contended> {
        let mut by_batch: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        let mut runs: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
        for r in records.iter().filter(|r| {
            workers > 1
                && r.status == Status::Ok
                && r.mode == Mode::Throughput
                && r.backend.eq_ignore_ascii_case(backend)
                && r.algorithm == alg.name()
                && r.operation == op
                && r.device.kind == DeviceKind::Cpu
                && r.threads == workers
                && r.batch >= workers
                && r.batch % workers == 0
        }) {
            let Some(ms) = r.batch_ms.filter(|m| m.is_finite() && *m > 0.0) else {
                continue;
            };
            by_batch
                .entry(r.batch / workers)
                .or_default()
                .push(ms / 1e3);
            runs.entry(r.batch / workers)
                .or_default()
                .extend(&r.run_seconds);
        }
        if by_batch.is_empty() {
            return None;
        }
        let points = medians(by_batch);
        let spread = points
            .iter()
            .map(|(b, _)| spread_of(runs.get(b).map_or(&[][..], |v| &v[..])))
            .collect();
        Some(Contended {
            busy: workers,
            points,
            spread,
        })
    }

    /// How far its batch times may be off: the largest, over its measured
    /// batches, of the half-width of the distribution-free 95% interval of
    /// a batch's median time over that median (from the batches' spread;
    /// 0 where no batch has six times or more). A latency predicted from
    /// these times is as uncertain, near enough.
    pub fn noise(&self) -> f64 {
        self.spread
            .iter()
            .filter_map(|s| crate::core::stats::median_relative_half_width(s))
            .fold(0.0, f64::max)
    }

    /// The measured batches and their times in milliseconds, as the run
    /// file and `plan --json` give them.
    pub fn rows(&self) -> Vec<crate::schema::offload::CurvePoint> {
        self.points
            .iter()
            .map(|&(batch, s)| crate::schema::offload::CurvePoint {
                batch,
                batch_ms: s * 1e3,
            })
            .collect()
    }

    /// The largest measured batch: the planner never goes beyond it.
    pub fn max_batch(&self) -> usize {
        self.points.last().map_or(1, |p| p.0)
    }

    /// Seconds for a batch of `n` (1 <= n <= `max_batch`) on one worker
    /// alone: linear between measured batches; below the smallest, in
    /// proportion on a CPU and the smallest's time on a GPU.
    pub fn seconds(&self, n: usize) -> f64 {
        interpolate(&self.points, self.cpu, n)
    }

    /// Seconds for a batch of `n` that starts while `busy` workers (itself
    /// included) are serving: linear between the one-worker time (1 busy)
    /// and the contended time (all measured busy), at most the latter;
    /// the one-worker time where no contended times are known.
    pub fn seconds_busy(&self, n: usize, busy: usize) -> f64 {
        let alone = self.seconds(n);
        match &self.contended {
            Some(c) if c.busy > 1 && busy > 1 && !c.points.is_empty() => {
                let all = interpolate(&c.points, self.cpu, n);
                let share = ((busy - 1) as f64 / (c.busy - 1) as f64).min(1.0);
                alone + (all - alone) * share
            }
            _ => alone,
        }
    }

    /// A batch time drawn for a batch of `n` starting while `busy` workers
    /// are serving: [`Curve::seconds_busy`] times a ratio drawn (seeded)
    /// from the spread of the nearest measured batch at or above `n`: the
    /// contended spread when at least half the workers measured busy are,
    /// else the one-worker spread.
    pub fn sampler(&self, seed: u64) -> impl FnMut(usize, usize) -> f64 + '_ {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        move |n, busy| {
            let (points, spread) = match &self.contended {
                Some(c) if busy > 1 && 2 * busy >= c.busy => (&c.points, &c.spread),
                _ => (&self.points, &self.spread),
            };
            let i = points
                .iter()
                .position(|p| p.0 >= n)
                .unwrap_or(points.len().saturating_sub(1));
            let ratio = match spread.get(i) {
                Some(s) if !s.is_empty() => s[rng.random_range(0..s.len())],
                _ => 1.0,
            };
            self.seconds_busy(n, busy) * ratio + self.handoff.per_batch_ms / 1e3
        }
    }

    /// Requests per second at most, with `workers` workers all running
    /// full batches of the best measured size at once (each at its
    /// contended time where known).
    pub fn capacity(&self, workers: usize) -> f64 {
        self.points
            .iter()
            .map(|&(b, _)| {
                let s = self.seconds_busy(b, workers);
                workers as f64 * b as f64 / (s + self.handoff.per_batch_ms / 1e3)
            })
            .fold(0.0, f64::max)
    }

    /// The contended batch times in milliseconds, as the run file and
    /// `plan --json` give them.
    pub fn contended_rows(&self) -> Option<crate::schema::offload::ContendedCurve> {
        self.contended
            .as_ref()
            .map(|c| crate::schema::offload::ContendedCurve {
                busy: c.busy,
                curve: c
                    .points
                    .iter()
                    .map(|&(batch, s)| crate::schema::offload::CurvePoint {
                        batch,
                        batch_ms: s * 1e3,
                    })
                    .collect(),
            })
    }
}

/// Seconds for a batch of `n` from `points` ((batch, seconds), batches
/// ascending, at least one): linear between them; below the smallest, in
/// proportion on a CPU and the smallest's time on a GPU; above the
/// largest, in proportion.
fn interpolate(points: &[(usize, f64)], cpu: bool, n: usize) -> f64 {
    let (b0, s0) = points[0];
    if n <= b0 {
        return if cpu { s0 * n as f64 / b0 as f64 } else { s0 };
    }
    for w in points.windows(2) {
        let ((a, sa), (b, sb)) = (w[0], w[1]);
        if n <= b {
            return sa + (sb - sa) * (n - a) as f64 / (b - a) as f64;
        }
    }
    let (bl, sl) = *points.last().expect("a point");
    sl * n as f64 / bl as f64
}

/// (batch, median seconds) of each batch's times, batches ascending.
fn medians(by_batch: std::collections::BTreeMap<usize, Vec<f64>>) -> Vec<(usize, f64)> {
    by_batch
        .into_iter()
        .map(|(b, mut v)| {
            v.sort_by(f64::total_cmp);
            (b, v[v.len() / 2])
        })
        .collect()
}

/// Each time over the times' median, sorted; empty for no positive times.
pub fn spread_of(times: &[f64]) -> Vec<f64> {
    let mut t: Vec<f64> = times
        .iter()
        .copied()
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    if t.is_empty() {
        return t;
    }
    t.sort_by(f64::total_cmp);
    let median = t[t.len() / 2];
    t.into_iter().map(|x| x / median).collect()
}

/// The (backend, algorithm, operation) throughput records present, for an
/// error message.
/// Why `records` give no batch times for `backend alg op`, in a few
/// lines: the records of that key that lack a batch time (a sweep times a
/// window, not batches), or the count of what is there and the closest
/// few; the whole list is logged at debug level (`-v`).
fn missing(records: &[Record], backend: &str, alg: Algorithm, op: Operation) -> String {
    let liboqs = backend.eq_ignore_ascii_case(crate::backend::liboqs::NAME);
    let want = format!(
        "{backend} {} {}{}",
        alg.name(),
        op.cli_name(),
        if liboqs { " at --threads 1" } else { "" }
    );
    let hint = format!(
        "measure them with `pqcprof {} --alg {} --op {} --batch-sweep 64{}`",
        if liboqs { "cpu" } else { "gpu" },
        alg.name(),
        op.cli_name(),
        if liboqs { " --threads 1" } else { "" }
    );
    let same_key = records
        .iter()
        .filter(|r| {
            r.backend.eq_ignore_ascii_case(backend)
                && r.algorithm == alg.name()
                && r.operation == op
        })
        .count();
    if same_key > 0 {
        return format!(
            "no batch time for {want}: {same_key} record(s) of it are here, but none is an ok throughput record with `batch_ms` (a sweep's records time a window of operations, not batches); {hint}"
        );
    }
    let mut kinds: Vec<((usize, usize, usize), String)> = Vec::new();
    for r in records.iter().filter(|r| r.mode == Mode::Throughput) {
        let k = format!(
            "{} {} {} threads {}",
            r.backend,
            r.algorithm,
            r.operation.cli_name(),
            r.threads
        );
        if !kinds.iter().any(|(_, s)| *s == k) {
            // Closer: the same algorithm, then the backend nearest the
            // name given (by edit distance: a typed name's slip), then the
            // same operation.
            let distance = crate::core::listing::edit_distance(
                &r.backend.to_lowercase(),
                &backend.to_lowercase(),
            );
            let score = (
                usize::from(r.algorithm != alg.name()),
                distance,
                usize::from(r.operation != op),
            );
            kinds.push((score, k));
        }
    }
    if kinds.is_empty() {
        return format!("no throughput record at all, so no batch time for {want}; {hint}");
    }
    log::debug!(
        "the throughput records here: {}",
        kinds
            .iter()
            .map(|(_, k)| k.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    );
    kinds.sort_by_key(|(score, _)| *score);
    let closest: Vec<&str> = kinds.iter().take(3).map(|(_, k)| k.as_str()).collect();
    format!(
        "no ok throughput record of {want} with a batch time; {} kind(s) of throughput record here, the closest: {}{}; {hint}",
        kinds.len(),
        closest.join("; "),
        if kinds.len() > 3 { " (all of them with -v)" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_and_below_the_measured_batches() {
        let mut c = Curve {
            points: vec![(4, 4e-3), (16, 10e-3)],
            cpu: true,
            basis: "",
            spread: vec![vec![], vec![0.5, 1.0, 1.5]],
            handoff: Handoff::default(),
            contended: None,
        };
        assert!((c.seconds(2) - 2e-3).abs() < 1e-15);
        assert!((c.seconds(10) - 7e-3).abs() < 1e-15);
        assert!((c.seconds(16) - 10e-3).abs() < 1e-15);
        assert_eq!(c.max_batch(), 16);
        assert!((c.capacity(2) - 3200.0).abs() < 1e-9);
        // Draws at 16 are the time times one of the ratios; none at 4.
        let mut draw = c.sampler(1);
        let d: Vec<f64> = (0..200).map(|_| draw(16, 1) / 10e-3).collect();
        for r in [0.5, 1.0, 1.5] {
            assert!(d.iter().any(|x| (x - r).abs() < 1e-9), "{r} never drawn");
        }
        assert!(d
            .iter()
            .all(|x| [0.5, 1.0, 1.5].iter().any(|r| (x - r).abs() < 1e-9)));
        assert_eq!(draw(4, 1), 4e-3);
        drop(draw);
        c.cpu = false;
        assert_eq!(c.seconds(1), 4e-3);
        assert_eq!(spread_of(&[2.0, 1.0, 4.0]), [0.5, 1.0, 2.0]);
    }

    #[test]
    fn a_batch_beside_busy_workers_takes_between_the_two_curves() {
        let mut c = Curve {
            points: vec![(4, 4e-3), (16, 10e-3)],
            cpu: true,
            basis: "",
            spread: vec![],
            handoff: Handoff::default(),
            contended: Some(Contended {
                busy: 3,
                points: vec![(4, 8e-3), (16, 30e-3)],
                spread: vec![vec![], vec![2.0]],
            }),
        };
        // Alone: the one-worker time; all three busy: the contended one;
        // two of three: halfway.
        assert!((c.seconds_busy(16, 1) - 10e-3).abs() < 1e-15);
        assert!((c.seconds_busy(16, 3) - 30e-3).abs() < 1e-15);
        assert!((c.seconds_busy(16, 2) - 20e-3).abs() < 1e-15);
        assert!((c.seconds_busy(10, 3) - 19e-3).abs() < 1e-15);
        assert!((c.seconds_busy(2, 3) - 4e-3).abs() < 1e-15);
        // The contended spread is drawn from with two or more busy.
        let mut draw = c.sampler(1);
        assert!((draw(16, 2) - 40e-3).abs() < 1e-15);
        assert!((draw(16, 1) - 10e-3).abs() < 1e-15);
        drop(draw);
        // Three workers all busy carry 3 x 16 / 30 ms at most.
        assert!((c.capacity(3) - 1600.0).abs() < 1e-9);
        c.contended = None;
        assert!((c.seconds_busy(16, 3) - 10e-3).abs() < 1e-15);
        assert!((c.capacity(3) - 4800.0).abs() < 1e-9);
    }
}
