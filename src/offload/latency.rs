//! What requests waited, kept in histograms of bounded relative error
//! (HdrHistogram, three significant digits: each percentile within 0.1% of
//! the true sample's), not a sorted list of every request; and the latency
//! objective a result is judged by (`--slo p99=2ms`).

use super::batcher::Served;
pub use crate::schema::offload::{Percentiles, Waits};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency, queue wait and service time of every request recorded.
pub struct Recorder {
    latency: Histogram<u64>,
    queue: Histogram<u64>,
    service: Histogram<u64>,
    batches: BTreeMap<usize, u64>,
}

fn histogram() -> Histogram<u64> {
    // 1 ns to an hour; longer waits are kept as an hour.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

fn nanos(seconds: f64) -> u64 {
    (seconds * 1e9).round().max(1.0) as u64
}

fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1e6;
    Percentiles {
        p50: ms(0.5),
        p90: ms(0.9),
        p99: ms(0.99),
        p999: ms(0.999),
        max: h.max() as f64 / 1e6,
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            latency: histogram(),
            queue: histogram(),
            service: histogram(),
            batches: BTreeMap::new(),
        }
    }
}

impl Recorder {
    /// Records one request (and counts its batch once, at its first
    /// request: the caller records a batch's requests together).
    pub fn record(&mut self, s: &Served, first_of_batch: bool) {
        self.latency.saturating_record(nanos(s.latency()));
        self.queue.saturating_record(nanos(s.queue()));
        self.service.saturating_record(nanos(s.service()));
        if first_of_batch {
            *self.batches.entry(s.batch).or_default() += 1;
        }
    }

    /// Records requests as [`super::batcher::simulate`] returns them, a
    /// batch's requests next to each other.
    pub fn record_all(&mut self, served: &[Served]) {
        let mut left = 0;
        for s in served {
            self.record(s, left == 0);
            left = if left == 0 { s.batch - 1 } else { left - 1 };
        }
    }

    /// Requests recorded.
    pub fn len(&self) -> u64 {
        self.latency.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
    }

    /// The percentiles and the batch sizes.
    pub fn waits(&self) -> Waits {
        Waits {
            latency_ms: percentiles(&self.latency),
            queue_ms: percentiles(&self.queue),
            service_ms: percentiles(&self.service),
            batch_sizes: self.batches.clone(),
        }
    }

    /// The latency at quantile `q` (0 to 1), milliseconds.
    pub fn latency_ms_at(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q) as f64 / 1e6
    }
}

/// A latency objective: the `quantile` of latency at most `bound_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// As written: `p99`, `p99.9`, `p50`.
    pub percentile: String,
    /// The same as a fraction: 0.99.
    pub quantile: f64,
    /// Milliseconds.
    pub bound_ms: f64,
}

impl std::str::FromStr for Slo {
    type Err = String;
    /// `pNN=TIME`: a percentile above 0 and below 100, and a time with its
    /// unit (`us`, `ms` or `s`), e.g. `p99=2ms`, `p99.9=500us`.
    fn from_str(s: &str) -> Result<Slo, String> {
        let bad = |why: &str| {
            format!("--slo '{s}': {why}; write a percentile and a time, e.g. p99=2ms, p99.9=500us, p50=0.01s")
        };
        let (p, t) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let p = p.trim();
        let pct: f64 = p
            .strip_prefix('p')
            .and_then(|n| n.parse().ok())
            .filter(|n: &f64| *n > 0.0 && *n < 100.0)
            .ok_or_else(|| bad(&format!("'{p}' is not a percentile p0 < pNN < p100")))?;
        let t = t.trim();
        let (number, scale) = if let Some(n) = t.strip_suffix("us") {
            (n, 1e-3)
        } else if let Some(n) = t.strip_suffix("ms") {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1e3)
        } else {
            return Err(bad(&format!("'{t}' has no unit (us, ms or s)")));
        };
        let bound_ms = number
            .trim()
            .parse::<f64>()
            .ok()
            .map(|v| v * scale)
            .filter(|ms| ms.is_finite() && *ms > 0.0 && *ms <= 3_600_000.0)
            .ok_or_else(|| bad(&format!("'{t}' is not a time above 0 and at most an hour")))?;
        Ok(Slo {
            percentile: p.to_string(),
            quantile: pct / 100.0,
            bound_ms,
        })
    }
}

/// Requests beyond a percentile a sample needs before it resolves the
/// percentile: with `n` requests, the `q` quantile rests on the `n (1 -
/// q)` slowest, and fewer than 10 of them say little about it.
pub const BEYOND_TO_RESOLVE: f64 = 10.0;

impl Slo {
    /// Requests a sample needs to resolve this objective's percentile:
    /// [`BEYOND_TO_RESOLVE`] / (1 - q), 1,000 for p99.
    pub fn requests_to_resolve(&self) -> u64 {
        let n = BEYOND_TO_RESOLVE / (1.0 - self.quantile);
        // 1 - 0.99999999 is not exactly 1e-8 in binary: the count is read
        // to six significant digits, then rounded up.
        let unit = 10f64.powi(n.log10().floor() as i32 - 5);
        ((n / unit).round() * unit).ceil().min(1e18) as u64
    }

    /// Whether `r`'s latency meets it: `Ok(true)` or `Ok(false)`, or
    /// `Err(why)` when `r` holds too few requests to resolve its
    /// percentile (it is then neither met nor missed).
    pub fn judge(&self, r: &Recorder) -> Result<bool, String> {
        let need = self.requests_to_resolve();
        if r.len() < need {
            return Err(format!(
                "not resolvable: {} needs at least {} requests ({} beyond it), this sample has {}",
                self.percentile,
                crate::core::units::grouped(need as f64),
                BEYOND_TO_RESOLVE,
                crate::core::units::grouped(r.len() as f64)
            ));
        }
        Ok(r.latency_ms_at(self.quantile) <= self.bound_ms)
    }

    /// `meets_slo` and `slo_unresolved` of a point judged by
    /// [`Slo::judge`].
    pub fn outcome(slo: Option<&Slo>, r: &Recorder) -> (Option<bool>, Option<String>) {
        match slo.map(|s| s.judge(r)) {
            None => (None, None),
            Some(Ok(met)) => (Some(met), None),
            Some(Err(why)) => (None, Some(why)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_the_histograms_error() {
        let mut r = Recorder::default();
        // Latencies 1..=1000 us, one batch each.
        for i in 1..=1000u32 {
            let l = f64::from(i) * 1e-6;
            let s = Served {
                arrival: 0.0,
                dispatch: l / 2.0,
                done: l,
                batch: 1,
            };
            r.record(&s, true);
        }
        let w = r.waits();
        for (got, want) in [
            (w.latency_ms.p50, 0.5),
            (w.latency_ms.p90, 0.9),
            (w.latency_ms.p99, 0.99),
            (w.latency_ms.p999, 0.999),
            (w.latency_ms.max, 1.0),
            (w.queue_ms.p50, 0.25),
        ] {
            assert!((got - want).abs() / want < 2e-3, "{got} vs {want}");
        }
        assert_eq!(w.batch_sizes, BTreeMap::from([(1, 1000)]));
        assert_eq!(r.len(), 1000);
    }

    #[test]
    fn batches_are_counted_once_each() {
        let s = |batch| Served {
            arrival: 0.0,
            dispatch: 0.0,
            done: 1e-3,
            batch,
        };
        let mut r = Recorder::default();
        r.record_all(&[s(3), s(3), s(3), s(1), s(2), s(2)]);
        assert_eq!(
            r.waits().batch_sizes,
            BTreeMap::from([(1, 1), (2, 1), (3, 1)])
        );
    }

    #[test]
    fn a_percentile_the_sample_cannot_resolve_is_neither_met_nor_missed() {
        let mut r = Recorder::default();
        for _ in 0..13 {
            let s = Served {
                arrival: 0.0,
                dispatch: 0.0,
                done: 1e-4,
                batch: 1,
            };
            r.record(&s, true);
        }
        let deep: Slo = "p99.999999=1ms".parse().unwrap();
        assert_eq!(deep.requests_to_resolve(), 1_000_000_000);
        let e = deep.judge(&r).unwrap_err();
        assert!(e.contains("not resolvable") && e.contains("has 13"), "{e}");
        assert_eq!(Slo::outcome(Some(&deep), &r).0, None);
        let median: Slo = "p50=1ms".parse().unwrap();
        assert_eq!(median.requests_to_resolve(), 20);
        assert!(median.judge(&r).is_err());
        for _ in 0..7 {
            r.record(
                &Served {
                    arrival: 0.0,
                    dispatch: 0.0,
                    done: 1e-4,
                    batch: 1,
                },
                true,
            );
        }
        assert_eq!(median.judge(&r), Ok(true));
        assert_eq!(
            "p99=2ms".parse::<Slo>().unwrap().requests_to_resolve(),
            1000
        );
    }

    #[test]
    fn objectives_parse_with_their_units_and_bad_ones_are_named() {
        let s: Slo = "p99=2ms".parse().unwrap();
        assert_eq!((s.quantile, s.bound_ms), (0.99, 2.0));
        let s: Slo = "p99.9=500us".parse().unwrap();
        assert!((s.quantile - 0.999).abs() < 1e-12 && (s.bound_ms - 0.5).abs() < 1e-12);
        let s: Slo = "p50=0.01s".parse().unwrap();
        assert!((s.bound_ms - 10.0).abs() < 1e-12);
        for (bad, says) in [
            ("p99", "no '='"),
            ("q99=2ms", "'q99' is not a percentile"),
            ("p100=2ms", "'p100' is not a percentile"),
            ("p99=2", "'2' has no unit"),
            ("p99=-1ms", "'-1ms' is not a time"),
            ("p99=fastms", "'fastms' is not a time"),
        ] {
            let e = bad.parse::<Slo>().unwrap_err();
            assert!(
                e.contains(&format!("--slo '{bad}'")) && e.contains(says),
                "{e}"
            );
        }
    }
}
