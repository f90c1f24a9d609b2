//! Predictions: the batcher of [`super::batcher`] simulated against a
//! measured batch-time curve, for a rate and a batching (given, or the one
//! that keeps latency lowest), and the highest rate whose latency meets an
//! objective.

use super::arrivals::Arrivals;
use super::batcher::{self, Policy};
use super::curve::Curve;
use super::latency::{Recorder, Slo};
pub use crate::schema::offload::Point;

/// How long a simulation runs: long enough for many batches of the
/// largest size, at least 5,000 requests, at most `cap`.
fn request_count(curve: &Curve, rate: f64, cap: usize) -> usize {
    let window = (200.0 * curve.seconds(curve.max_batch())).max(2.0);
    ((rate * window) as usize).clamp(5_000, cap)
}

/// Requests simulated for a reported point.
const POINT_REQUESTS: usize = 200_000;
/// Requests simulated per batching tried while searching.
const SEARCH_REQUESTS: usize = 40_000;
/// The most requests one simulated point holds to resolve an objective's
/// percentile (p99.99 needs 100,000, p99.999 a million).
pub const MAX_SIMULATED: usize = 1_000_000;

/// Batch sizes of powers of two below `top`, and `top`: what a search tries
/// and where batch times are measured.
pub fn batch_sizes(top: usize) -> Vec<usize> {
    let mut s: Vec<usize> = std::iter::successors(Some(1usize), |b| b.checked_mul(2))
        .take_while(|&b| b < top)
        .collect();
    s.push(top);
    s
}

/// The batchings tried by the search: [`batch_sizes`] up to the curve's
/// largest, waits from none to 100 ms, none longer than the objective's
/// bound.
pub fn candidates(curve: &Curve, slo: Option<&Slo>) -> Vec<Policy> {
    let bound_s = slo.map_or(0.1, |s| s.bound_ms / 1e3);
    let waits = [
        0.0, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,
    ];
    let mut out = vec![];
    for max_batch in batch_sizes(curve.max_batch()) {
        for &max_wait in waits.iter().filter(|&&w| w == 0.0 || w < bound_s) {
            out.push(Policy {
                max_batch,
                max_wait,
            });
        }
    }
    out
}

/// The seed of the batch-time draws: the arrivals' own, so that one seed
/// repeats a whole prediction.
fn seed_of(arrivals: &Arrivals) -> u64 {
    match arrivals {
        Arrivals::Poisson { seed, .. } => *seed,
        _ => 1,
    }
}

/// The latency a search ranks by: the objective's percentile (the
/// reported one at or above it), else p99.
pub fn rank(p: &Point, slo: Option<&Slo>) -> f64 {
    let l = &p.waits.latency_ms;
    match slo.map(|s| s.quantile) {
        None => l.p99,
        Some(q) if q <= 0.5 => l.p50,
        Some(q) if q <= 0.9 => l.p90,
        Some(q) if q <= 0.99 => l.p99,
        Some(_) => l.p999,
    }
}

/// What is predicted for: a backend's batch times and its workers.
pub struct Planner<'a> {
    /// The backend named in the points.
    pub backend: &'a str,
    /// One worker's batch times, and where known all workers' at once.
    pub curve: &'a Curve,
    /// Workers serving batches at once.
    pub workers: usize,
    /// Requests that may wait at most (none: no limit); an arrival beyond
    /// it is dropped.
    pub queue_limit: Option<usize>,
}

impl Planner<'_> {
    /// The point of one rate and one batching.
    pub fn predict(&self, arrivals: &Arrivals, policy: Policy, slo: Option<&Slo>) -> Point {
        // Enough requests to resolve the objective's percentile, up to
        // MAX_SIMULATED; beyond, the point says it cannot be resolved.
        let least = slo.map_or(0, |s| (s.requests_to_resolve() as usize).min(MAX_SIMULATED));
        self.point(arrivals, policy, slo, least, POINT_REQUESTS.max(least))
    }

    fn point(
        &self,
        arrivals: &Arrivals,
        policy: Policy,
        slo: Option<&Slo>,
        least: usize,
        cap: usize,
    ) -> Point {
        let curve = self.curve;
        let count = match arrivals {
            Arrivals::Trace(_) => 0,
            _ => request_count(curve, arrivals.rate(), cap).max(least),
        };
        let times = arrivals.times(count);
        let window = times.len() as f64 / arrivals.rate();
        let (served, dropped) = batcher::simulate_limited(
            &times,
            policy,
            self.workers,
            self.queue_limit,
            curve.handoff.wake_ms / 1e3,
            &mut curve.sampler(seed_of(arrivals)),
        );
        let mut rec = Recorder::default();
        rec.record_all(&served);
        let (meets_slo, slo_unresolved) = Slo::outcome(slo, &rec);
        Point {
            backend: self.backend.to_string(),
            // The rate asked for; the sample's own differs by chance.
            offered_rate: arrivals.rate(),
            achieved_rate: batcher::achieved_rate(&served, window),
            max_batch: policy.max_batch,
            max_wait_ms: policy.max_wait * 1e3,
            waits: rec.waits(),
            dropped: dropped as u64,
            saturated: batcher::saturated(&served, policy.max_wait),
            requests: served.len(),
            not_served: 0,
            meets_slo,
            slo_unresolved,
            gate: None,
            predicted_latency_ms: None,
            dispatch_late_max_ms: None,
            emulated: false,
            mix: None,
            energy_per_request_mj: None,
            energy_source: None,
        }
    }

    /// The batching that keeps up with `arrivals` at the lowest latency
    /// (the objective's percentile, else p99), and its point; when none
    /// keeps up, the one that serves the most.
    pub fn best(&self, arrivals: &Arrivals, slo: Option<&Slo>) -> Point {
        self.best_and_near(arrivals, slo).0
    }

    /// [`Planner::best`], and the other batchings with another largest
    /// batch whose latency lies within the noise of the batch times
    /// ([`Curve::noise`]) of the chosen one's: on another measurement of
    /// the same backend, one of them may be chosen instead. The choice
    /// itself depends only on the batch times, the hand-off and the seed:
    /// the same inputs choose the same batching. Ties go to the smaller
    /// batch, then the shorter wait.
    pub fn best_and_near(&self, arrivals: &Arrivals, slo: Option<&Slo>) -> (Point, Vec<Point>) {
        let tried: Vec<Point> = candidates(self.curve, slo)
            .into_iter()
            .filter(|p| self.queue_limit.is_none_or(|l| p.max_batch <= l))
            .map(|p| self.point(arrivals, p, slo, 0, SEARCH_REQUESTS))
            .collect();
        let order = |a: &&Point, b: &&Point| {
            rank(a, slo)
                .total_cmp(&rank(b, slo))
                .then(a.max_batch.cmp(&b.max_batch))
                .then(a.max_wait_ms.total_cmp(&b.max_wait_ms))
        };
        let kept: Vec<&Point> = tried
            .iter()
            .filter(|p| crate::schema::offload::kept_up(p))
            .collect();
        let chosen = kept
            .iter()
            .copied()
            .min_by(order)
            .or_else(|| {
                tried
                    .iter()
                    .max_by(|a, b| a.achieved_rate.total_cmp(&b.achieved_rate))
            })
            .expect("at least one batching");
        let policy = Policy {
            max_batch: chosen.max_batch,
            max_wait: chosen.max_wait_ms / 1e3,
        };
        let best_rank = rank(chosen, slo);
        let noise = self.curve.noise();
        let mut near: Vec<&Point> = kept
            .iter()
            .copied()
            .filter(|p| {
                p.max_batch != chosen.max_batch && rank(p, slo) <= best_rank * (1.0 + noise)
            })
            .collect();
        near.sort_by(order);
        // One per largest batch: its best wait.
        near.dedup_by_key(|p| p.max_batch);
        let near = near
            .into_iter()
            .map(|p| {
                self.predict(
                    arrivals,
                    Policy {
                        max_batch: p.max_batch,
                        max_wait: p.max_wait_ms / 1e3,
                    },
                    slo,
                )
            })
            .collect();
        (self.predict(arrivals, policy, slo), near)
    }

    /// The highest Poisson rate (seeded) whose best batching meets `slo`
    /// without falling behind, found by bisection between a thousandth of
    /// the curve's capacity and the capacity; `None` when even the lowest
    /// misses it.
    pub fn max_rate_under(&self, slo: &Slo, seed: u64) -> Option<Point> {
        let at = |rate: f64| self.best(&Arrivals::Poisson { rate, seed }, Some(slo));
        let ok = |p: &Point| crate::schema::offload::kept_up(p) && p.meets_slo == Some(true);
        let cap = self.curve.capacity(self.workers);
        let (mut lo, mut hi) = (cap / 1000.0, cap);
        let mut found = at(lo);
        if !ok(&found) {
            return None;
        }
        // Rates within 1% of each other are not told apart.
        while hi / lo > 1.01 {
            let mid = (lo * hi).sqrt();
            let p = at(mid);
            if ok(&p) {
                lo = mid;
                found = p;
            } else {
                hi = mid;
            }
        }
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offload::curve::Handoff;

    fn on(c: &Curve, workers: usize) -> Planner<'_> {
        Planner {
            backend: "x",
            curve: c,
            workers,
            queue_limit: None,
        }
    }

    /// 1 ms a batch plus 0.1 ms a request, on one CPU thread.
    fn curve() -> Curve {
        Curve {
            points: vec![(1, 1.1e-3), (64, 7.4e-3)],
            cpu: false,
            basis: "",
            spread: vec![],
            handoff: Default::default(),
            contended: None,
        }
    }

    #[test]
    fn a_light_load_is_served_alone_and_a_heavy_one_in_batches() {
        let c = curve();
        let light = on(&c, 1).best(
            &Arrivals::Poisson {
                rate: 50.0,
                seed: 1,
            },
            None,
        );
        assert!(!light.saturated);
        // Mostly alone: the batch time plus at most the wait chosen.
        let p50 = light.waits.latency_ms.p50;
        assert!(
            p50 >= 1.1 && p50 <= 1.1 + light.max_wait_ms + 0.01,
            "{light:?}"
        );
        // No batching tried beats the one chosen at its own percentile.
        let a = Arrivals::Poisson {
            rate: 50.0,
            seed: 1,
        };
        for p in candidates(&c, None) {
            let other = on(&c, 1).predict(&a, p, None);
            assert!(
                other.waits.latency_ms.p99 >= light.waits.latency_ms.p99 * 0.99,
                "{other:?}"
            );
        }
        // 5,000/s is beyond batches of 1 (about 900/s): it needs batches.
        let heavy = on(&c, 1).best(
            &Arrivals::Poisson {
                rate: 5000.0,
                seed: 1,
            },
            None,
        );
        assert!(!heavy.saturated, "{heavy:?}");
        assert!(heavy.max_batch > 4, "{heavy:?}");
        assert!((heavy.achieved_rate - 5000.0).abs() / 5000.0 < 0.05);
    }

    #[test]
    fn the_choice_repeats_and_says_which_batchings_are_within_the_noise() {
        // Batches of 1 and of 16 that cost about the same per request at
        // this load: which is lower depends on batch times known to a few
        // percent.
        let mut c = Curve {
            points: vec![(1, 0.10e-3), (16, 1.45e-3)],
            cpu: true,
            basis: "",
            spread: vec![],
            handoff: Default::default(),
            contended: None,
        };
        let a = Arrivals::Poisson {
            rate: 2000.0,
            seed: 5,
        };
        let quiet = on(&c, 1).best_and_near(&a, None);
        // The same batch times and hand-off choose the same batching.
        let again = on(&c, 1).best_and_near(&a, None);
        assert_eq!(quiet.0, again.0);
        assert!(
            quiet.1.is_empty(),
            "no noise, no near choice: {:?}",
            quiet.1
        );
        // Each batch time known to about +-30%: the other batching is
        // within the noise, and said so.
        let noisy: Vec<f64> = (0..20).map(|i| 0.7 + 0.6 * i as f64 / 19.0).collect();
        c.spread = vec![noisy.clone(), noisy];
        assert!(c.noise() > 0.1, "{}", c.noise());
        let (chosen, near) = on(&c, 1).best_and_near(&a, None);
        assert!(!near.is_empty(), "{chosen:?}");
        assert!(near.iter().all(|p| p.max_batch != chosen.max_batch));
        let p99 = |p: &Point| p.waits.latency_ms.p99;
        assert!(near
            .iter()
            .all(|p| p99(p) <= p99(&chosen) * (1.0 + c.noise()) * 1.2));
    }

    #[test]
    fn the_dispatchers_hand_off_is_added_to_every_batch() {
        let bare = curve();
        let mut handed = curve();
        // 0.4 ms a batch on top of 1.1 ms for one request.
        handed.handoff = Handoff {
            per_batch_ms: 0.4,
            wake_ms: 0.0,
        };
        let light = Arrivals::Poisson {
            rate: 50.0,
            seed: 1,
        };
        let one = Policy {
            max_batch: 1,
            max_wait: 0.0,
        };
        let (b, h) = (
            on(&bare, 1).predict(&light, one, None),
            on(&handed, 1).predict(&light, one, None),
        );
        // At a light load each request is served alone: the median grows
        // by the hand-off, no more.
        let grew = h.waits.latency_ms.p50 - b.waits.latency_ms.p50;
        assert!((grew - 0.4).abs() < 0.02, "{b:?} {h:?}");
        // Batches of one then carry 1 / 1.5 ms, not 1 / 1.1 ms: 800/s
        // keeps up without the hand-off and falls behind with it.
        let busy = Arrivals::Poisson {
            rate: 800.0,
            seed: 1,
        };
        assert!(!on(&bare, 1).predict(&busy, one, None).saturated);
        assert!(on(&handed, 1).predict(&busy, one, None).saturated);
        assert!(handed.capacity(1) < bare.capacity(1));
        // Waking costs only a batch the dispatcher waited for: at a light
        // load every batch, at an overload none (each goes as a worker
        // frees), so it moves the median of one and not the other.
        let mut woken = curve();
        woken.handoff = Handoff {
            per_batch_ms: 0.0,
            wake_ms: 0.4,
        };
        let w = on(&woken, 1).predict(&light, one, None);
        let grew = w.waits.latency_ms.p50 - b.waits.latency_ms.p50;
        assert!((grew - 0.4).abs() < 0.02, "{w:?}");
        let flood = Arrivals::Uniform { rate: 5000.0 };
        let served = |c: &Curve| on(c, 1).predict(&flood, one, None).achieved_rate;
        assert!((served(&woken) - served(&bare)).abs() / served(&bare) < 0.01);
    }

    #[test]
    fn the_highest_rate_under_an_objective_meets_it_and_a_higher_one_does_not() {
        let c = curve();
        let slo: Slo = "p99=5ms".parse().unwrap();
        let top = on(&c, 1).max_rate_under(&slo, 3).unwrap();
        assert_eq!(top.meets_slo, Some(true));
        assert!(top.waits.latency_ms.p99 <= 5.0);
        let above = on(&c, 1).best(
            &Arrivals::Poisson {
                rate: top.offered_rate * 1.1,
                seed: 3,
            },
            Some(&slo),
        );
        assert!(
            above.saturated || above.meets_slo == Some(false),
            "{above:?}"
        );
        // Two workers carry more under the same objective.
        let two = on(&c, 2).max_rate_under(&slo, 3).unwrap();
        assert!(two.offered_rate > 1.5 * top.offered_rate);
        // An objective below one batch's time cannot be met at all.
        let tight: Slo = "p99=1ms".parse().unwrap();
        assert!(on(&c, 1).max_rate_under(&tight, 3).is_none());
    }

    #[test]
    fn workers_slowed_by_each_other_raise_the_tail_where_both_are_busy() {
        let alone = curve();
        let mut shared = curve();
        shared.contended = Some(crate::offload::curve::Contended {
            busy: 2,
            points: alone.points.iter().map(|&(b, s)| (b, 2.0 * s)).collect(),
            spread: vec![],
        });
        // Batches of 4 at 900/s: alone, 1.4 ms per 4 on either of two
        // workers, one at a time mostly; side by side 2.8 ms, and about
        // as often two are busy as one.
        let p = Policy {
            max_batch: 4,
            max_wait: 0.0,
        };
        let a = Arrivals::Poisson {
            rate: 900.0,
            seed: 2,
        };
        let (x, y) = (
            on(&alone, 2).predict(&a, p, None),
            on(&shared, 2).predict(&a, p, None),
        );
        assert!(!x.saturated && !y.saturated, "{x:?} {y:?}");
        let (px, py) = (x.waits.latency_ms.p99, y.waits.latency_ms.p99);
        assert!(py > 1.3 * px, "alone {px} ms, side by side {py} ms");
        // The same on one worker: it never has another beside it.
        let (x1, y1) = (
            on(&alone, 1).predict(&a, p, None),
            on(&shared, 1).predict(&a, p, None),
        );
        assert_eq!(x1.waits.latency_ms, y1.waits.latency_ms);
        // And what two workers carry at most is what they carry together.
        assert!((shared.capacity(2) - alone.capacity(2) / 2.0).abs() < 1e-6);
    }
}
