//! A backend's batch-time curve, taken from the throughput records of a
//! run file (a batch sweep): how long one batch of `n` requests takes on
//! one worker, between and below the measured batches.

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
            return Err(format!(
                "no ok throughput record of {backend} {} {} with a batch time{} (records here: {})",
                alg.name(),
                op.cli_name(),
                if backend.eq_ignore_ascii_case(crate::backend::liboqs::NAME) {
                    " at --threads 1"
                } else {
                    ""
                },
                present(records)
            ));
        };
        let points: Vec<(usize, f64)> = by_batch
            .into_iter()
            .map(|(b, mut v)| {
                v.sort_by(f64::total_cmp);
                (b, v[v.len() / 2])
            })
            .collect();
        let spread = points
            .iter()
            .map(|(b, _)| spread_of(runs.get(b).map_or(&[][..], |v| &v[..])))
            .collect();
        Ok(Curve {
            points,
            spread,
            handoff: Handoff::default(),
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

    /// Seconds for a batch of `n` (1 <= n <= `max_batch`): linear between
    /// measured batches; below the smallest, in proportion on a CPU and the
    /// smallest's time on a GPU.
    pub fn seconds(&self, n: usize) -> f64 {
        let (b0, s0) = self.points[0];
        if n <= b0 {
            return if self.cpu {
                s0 * n as f64 / b0 as f64
            } else {
                s0
            };
        }
        for w in self.points.windows(2) {
            let ((a, sa), (b, sb)) = (w[0], w[1]);
            if n <= b {
                return sa + (sb - sa) * (n - a) as f64 / (b - a) as f64;
            }
        }
        let (bl, sl) = *self.points.last().expect("a point");
        sl * n as f64 / bl as f64
    }

    /// A batch time drawn for a batch of `n`: [`Curve::seconds`] times a
    /// ratio drawn (seeded) from the spread of the nearest measured batch
    /// at or above `n`.
    pub fn sampler(&self, seed: u64) -> impl FnMut(usize) -> f64 + '_ {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        move |n| {
            let i = self
                .points
                .iter()
                .position(|p| p.0 >= n)
                .unwrap_or(self.points.len() - 1);
            let ratio = match self.spread.get(i) {
                Some(s) if !s.is_empty() => s[rng.random_range(0..s.len())],
                _ => 1.0,
            };
            self.seconds(n) * ratio + self.handoff.per_batch_ms / 1e3
        }
    }

    /// Requests per second at most, with `workers` workers each running
    /// full batches of the best measured size.
    pub fn capacity(&self, workers: usize) -> f64 {
        self.points
            .iter()
            .map(|&(b, s)| workers as f64 * b as f64 / (s + self.handoff.per_batch_ms / 1e3))
            .fold(0.0, f64::max)
    }
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
fn present(records: &[Record]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r.mode == Mode::Throughput) {
        let k = format!(
            "{} {} {} threads {}",
            r.backend,
            r.algorithm,
            r.operation.cli_name(),
            r.threads
        );
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    if seen.is_empty() {
        "none".into()
    } else {
        seen.join("; ")
    }
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
        };
        assert!((c.seconds(2) - 2e-3).abs() < 1e-15);
        assert!((c.seconds(10) - 7e-3).abs() < 1e-15);
        assert!((c.seconds(16) - 10e-3).abs() < 1e-15);
        assert_eq!(c.max_batch(), 16);
        assert!((c.capacity(2) - 3200.0).abs() < 1e-9);
        // Draws at 16 are the time times one of the ratios; none at 4.
        let mut draw = c.sampler(1);
        let d: Vec<f64> = (0..200).map(|_| draw(16) / 10e-3).collect();
        for r in [0.5, 1.0, 1.5] {
            assert!(d.iter().any(|x| (x - r).abs() < 1e-9), "{r} never drawn");
        }
        assert!(d
            .iter()
            .all(|x| [0.5, 1.0, 1.5].iter().any(|r| (x - r).abs() < 1e-9)));
        assert_eq!(draw(4), 4e-3);
        drop(draw);
        c.cpu = false;
        assert_eq!(c.seconds(1), 4e-3);
        assert_eq!(spread_of(&[2.0, 1.0, 4.0]), [0.5, 1.0, 2.0]);
    }
}
