//! The one estimator behind every figure a person reads: a record's
//! throughput, and the ratio (speed-up, change) of two records'
//! throughputs, each with the 95% interval computed for that same
//! estimate. The report's tables, cards and charts, `compare` (table and
//! JSON), `offload`'s and `plan`'s curves and the audit
//! (`crate::report::audit`) all call these, so one record gives one figure
//! wherever it is shown, and a ratio printed beside its two figures is
//! their quotient.
//!
//! **A record's throughput** is the median of its kept per-run throughputs:
//! each timed run's operations over its time (`batch / run_seconds[i]`,
//! from the raw timings, never from a summary the file also holds),
//! through the IQR filter of
//! [`stats::summarize`] (cuPQC_benchmark's), then the median of what it
//! kept. For a `bench`/`cpu`/`gpu` record that is exactly its
//! `ops_per_sec`; for a sweep record it is the per-batch median beside the
//! window figure `ops_per_sec` (all operations over all batches' time),
//! which stays in the run file and the pqc-sig-bench-c CSV. Its interval is
//! the distribution-free one of that median ([`stats::median_ci95`], at
//! least 6 kept runs). A record without runs (an imported or hand-made
//! figure) gives its stated `ops_per_sec` and no interval.
//!
//! **A ratio** `num / den` is the quotient of the two medians above. Its
//! interval is built around that quotient on the log scale,
//! `exp(ln(m_num / m_den) ± z_0.975 √(s_num² + s_den²))`, where `s` is the
//! standard error of the log of a sample median estimated from two order
//! statistics (Price & Bonett, "Estimating the variance of the sample
//! median", J. Statist. Comput. Simul. 68 (2001); used for ratios of
//! medians by Bonett & Price, "Statistical inference for a linear function
//! of medians", Psychological Methods 7 (2002)): with `c` the nearest
//! whole number to `(n + 1) / 2 - √n` (at least 1), `[x(c), x(n + 1 - c)]`
//! covers the median with the exact binomial probability `1 - 2 P(B ≤ c -
//! 1)`, `B ~ Binomial(n, 1/2)`; for a median close to normal that interval
//! is `± z` standard errors wide, with `z` the normal quantile of that
//! coverage, so `s = (ln x(n + 1 - c) - ln x(c)) / 2z`. The interval
//! therefore always contains the ratio it is printed with, needs no
//! assumption about the shape of the runs' distribution, and needs at
//! least [`MIN_RUNS`] kept runs a side. The tests check its coverage by
//! simulation (normal, log-normal and outlier-laden runs).

use crate::core::stats::{self, Sample};
use crate::schema::record::{Mode, Record, Status};
use statrs::distribution::{ContinuousCDF, Normal};

/// Kept runs a side below which a ratio has no interval.
pub const MIN_RUNS: usize = 4;

/// What a ratio stands on when a side states a figure without runs.
pub const NO_RUNS: &str = "ratio of medians, no runs to compare";

/// What a ratio stands on when a side has too few runs for an interval.
pub const FEW_RUNS: &str = "ratio of medians, too few runs for an interval";

/// What an estimate's interval is, in words (for `--json` and the docs).
pub const RATIO_METHOD: &str = "ratio of the two records' median per-run throughputs (IQR-kept runs); 95% interval exp(ln ratio ± 1.96 √(s1² + s2²)), s the standard error of a log median from two order statistics (Price & Bonett 2001)";

/// A record's throughput, operations per second, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The median of the kept per-run throughputs (or the stated figure
    /// of a record without runs).
    pub value: f64,
    /// Its distribution-free 95% interval `[low, high]`; absent below 6
    /// kept runs and without runs.
    pub ci95: Option<[f64; 2]>,
    /// Runs the IQR filter kept (0: the stated figure, no runs).
    pub kept_runs: usize,
    /// The standard error of `ln value`, from two order statistics;
    /// absent below [`MIN_RUNS`] kept runs.
    log_se: Option<f64>,
}

/// A ratio of two records' throughputs, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// `num / den` of the two [`Estimate`]s' values.
    pub value: f64,
    /// Its 95% interval `[low, high]`, which always contains `value`;
    /// absent when either side has fewer than [`MIN_RUNS`] kept runs.
    pub ci95: Option<[f64; 2]>,
    /// The fewer kept runs of the two sides (0: a side states a figure
    /// without runs).
    pub min_kept_runs: usize,
}

impl Ratio {
    /// The same ratio the other way round: `den / num`.
    pub fn inverted(self) -> Ratio {
        Ratio {
            value: 1.0 / self.value,
            ci95: self.ci95.map(|[l, h]| [1.0 / h, 1.0 / l]),
            min_kept_runs: self.min_kept_runs,
        }
    }

    /// The ratio read from the side that is ahead: at least 1, and whether
    /// that is `num` (the ratio as it is) or `den` (inverted).
    pub fn magnitude(self) -> (Ratio, bool) {
        if self.value >= 1.0 {
            (self, true)
        } else {
            (self.inverted(), false)
        }
    }

    /// What the ratio stands on when it has no interval, in words.
    pub fn basis(self) -> Option<&'static str> {
        match (self.ci95, self.min_kept_runs) {
            (Some(_), _) => None,
            (None, 0) => Some(NO_RUNS),
            (None, _) => Some(FEW_RUNS),
        }
    }

    /// As a change, `num / den - 1`, with its interval.
    pub fn change(self) -> (f64, Option<[f64; 2]>) {
        (self.value - 1.0, self.ci95.map(|[l, h]| [l - 1.0, h - 1.0]))
    }
}

/// Each timed run's throughput, operations per second: `batch /
/// run_seconds[i]`, from the raw timings alone (whatever summary the file
/// also holds). Runs that are not a positive finite time are left out.
pub fn run_rates(r: &Record) -> Vec<f64> {
    r.run_seconds
        .iter()
        .map(|s| r.batch as f64 / s)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// The figure a record states when it lists no runs: `ops_per_sec`, or a
/// latency record's operations per second from its median latency.
fn stated(r: &Record) -> Option<f64> {
    match r.mode {
        Mode::Throughput => r.ops_per_sec,
        Mode::Latency => r
            .latency_us
            .as_ref()
            .map(|l| 1e6 / l.median)
            .or_else(|| r.latency_p50_us.map(|us| 1e6 / us)),
    }
    .filter(|v| v.is_finite() && *v > 0.0)
}

/// The throughput of a record that passed (see the module's text); `None`
/// for a record that did not, or that gives no positive finite figure.
pub fn throughput(r: &Record) -> Option<Estimate> {
    if r.status != Status::Ok {
        return None;
    }
    of_rates(&run_rates(r)).or_else(|| {
        stated(r).map(|value| Estimate {
            value,
            ci95: None,
            kept_runs: 0,
            log_se: None,
        })
    })
}

/// The estimate of a set of per-run throughputs (see the module's text);
/// `None` for no positive finite value.
pub fn of_rates(rates: &[f64]) -> Option<Estimate> {
    let rates: Vec<f64> = rates
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let summary = stats::summarize(&Sample::new(rates).ok()?);
    let mut kept = summary.kept.clone();
    kept.sort_by(f64::total_cmp);
    let value = summary.median;
    (value.is_finite() && value > 0.0).then(|| Estimate {
        value,
        ci95: summary.median_ci95.map(|c| [c.low, c.high]),
        kept_runs: kept.len(),
        log_se: log_median_se(&kept),
    })
}

/// `num`'s throughput over `den`'s (see the module's text); `None` when
/// either gives none.
pub fn ratio(num: &Record, den: &Record) -> Option<Ratio> {
    ratio_of(&throughput(num)?, &throughput(den)?)
}

/// The ratio of two estimates with its interval.
pub fn ratio_of(num: &Estimate, den: &Estimate) -> Option<Ratio> {
    let value = num.value / den.value;
    if !(value.is_finite() && value > 0.0) {
        return None;
    }
    let ci95 = match (num.log_se, den.log_se) {
        (Some(a), Some(b)) => {
            let half = Normal::standard().inverse_cdf(0.975) * (a * a + b * b).sqrt();
            Some([value * (-half).exp(), value * half.exp()])
        }
        _ => None,
    };
    Some(Ratio {
        value,
        ci95,
        min_kept_runs: num.kept_runs.min(den.kept_runs),
    })
}

/// `P(B <= k)` for `B ~ Binomial(n, 1/2)`, summed in logs (n may be large).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64;
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        sum += (ln_choose + ln_half_n).exp();
        ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    sum
}

/// The standard error of the log of the median of `sorted` (positive,
/// ascending), from the order statistics `x(c)` and `x(n + 1 - c)` (see
/// the module's text); `None` below [`MIN_RUNS`] values.
fn log_median_se(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n < MIN_RUNS || sorted.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let c = (((n as f64 + 1.0) / 2.0 - (n as f64).sqrt()).round() as usize).max(1);
    let tail = binomial_half_cdf(n, c - 1);
    let z = Normal::standard().inverse_cdf(1.0 - tail);
    let spread = sorted[n - c].ln() - sorted[c - 1].ln();
    (z.is_finite() && z > 0.0).then(|| spread / (2.0 * z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stats::tests::simulated_runs;
    use rand::SeedableRng;

    /// An ok record of runs of `batch` operations at `rates` per second,
    /// summarised as the runner does.
    pub(crate) fn record(rates: &[f64], batch: usize) -> Record {
        use crate::core::catalog::{Kind, Operation};
        use crate::schema::device::{Device, DeviceKind};
        let mut r = Record::unmeasured(
            "liboqs-cpu".into(),
            Device {
                kind: DeviceKind::Cpu,
                name: "cpu".into(),
                memory_total_mb: 0,
            },
            "liboqs".into(),
            "ML-KEM-768".into(),
            "ML-KEM".into(),
            Kind::Kem,
            Operation::Encaps,
        );
        r.status = Status::Ok;
        r.batch = batch;
        r.run_seconds = rates.iter().map(|v| batch as f64 / v).collect();
        let s = stats::summarize(&Sample::new(rates.to_vec()).unwrap());
        r.ops_per_sec = Some(s.median);
        r.throughput_ops_per_sec = Some(s);
        r
    }

    fn est(rates: &[f64]) -> Estimate {
        of_rates(rates).unwrap()
    }

    #[test]
    fn the_binomial_tail_is_exact() {
        assert!((binomial_half_cdf(4, 0) - 1.0 / 16.0).abs() < 1e-15);
        assert!((binomial_half_cdf(20, 5) - 0.020694732666015625).abs() < 1e-12);
        assert!((binomial_half_cdf(7, 7) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_ratio_is_the_quotient_of_the_medians_and_lies_inside_its_interval() {
        let a: Vec<f64> = (0..20).map(|i| 1000.0 + (i * 7 % 20) as f64).collect();
        let b: Vec<f64> = a.iter().map(|v| v * 9.9).collect();
        let (ea, eb) = (est(&a), est(&b));
        let r = ratio_of(&eb, &ea).unwrap();
        assert!((r.value - eb.value / ea.value).abs() < 1e-12);
        let [lo, hi] = r.ci95.unwrap();
        assert!(lo < r.value && r.value < hi, "{r:?}");
        // Symmetric on the log scale, and inverting swaps the ends.
        assert!(((r.value / lo).ln() - (hi / r.value).ln()).abs() < 1e-12);
        let inv = r.inverted();
        assert!((inv.value * r.value - 1.0).abs() < 1e-12);
        let [il, ih] = inv.ci95.unwrap();
        assert!((il * hi - 1.0).abs() < 1e-12 && (ih * lo - 1.0).abs() < 1e-12);
        assert!(r.magnitude().1);
        assert_eq!(inv.magnitude().0.value, r.value);
        // Three runs a side: a ratio, but no interval.
        let r3 = ratio_of(&est(&b[..3]), &est(&a[..3])).unwrap();
        assert_eq!(r3.ci95, None);
    }

    /// The share of 2,000 simulated pairs whose interval holds the true
    /// ratio: `shape` 0 normal, 1 log-normal, 2 normal with 10% of the runs
    /// up to three times slower.
    fn coverage(seed: u64, shape: usize, runs: usize, noise: f64) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // The true median of each distribution scales with `ratio`, so the
        // true ratio of medians is `ratio` whatever the shape.
        let ratio = 1.7;
        let hits = (0..2000)
            .filter(|_| {
                let old: Vec<f64> = simulated_runs(&mut rng, shape, runs, noise, 1.0)
                    .iter()
                    .map(|l| l.exp())
                    .collect();
                let new: Vec<f64> = simulated_runs(&mut rng, shape, runs, noise, ratio)
                    .iter()
                    .map(|l| l.exp())
                    .collect();
                let r = ratio_of(&est(&new), &est(&old)).unwrap();
                let [lo, hi] = r.ci95.unwrap();
                lo <= ratio && ratio <= hi
            })
            .count();
        hits as f64 / 2000.0
    }

    #[test]
    fn the_ratio_interval_covers_the_true_ratio_about_95_percent_of_the_time() {
        for (shape, runs, seed) in [(0, 20, 31u64), (1, 20, 32), (0, 8, 33), (1, 50, 34)] {
            let c = coverage(seed, shape, runs, 0.02);
            assert!(
                (0.92..=0.995).contains(&c),
                "shape {shape}, {runs} runs: {c}"
            );
        }
        // With one run in ten far slower, the filter and the median keep
        // the interval from under-covering.
        let c = coverage(35, 2, 20, 0.02);
        assert!(c >= 0.90, "outliers: {c}");
    }

    #[test]
    fn a_record_s_throughput_is_its_kept_runs_median() {
        let r = record(&[1000.0, 990.0, 1010.0, 1005.0, 995.0, 1002.0], 10);
        let e = throughput(&r).unwrap();
        let s = r.throughput_ops_per_sec.as_ref().unwrap();
        assert_eq!(e.value, s.median);
        assert_eq!(r.ops_per_sec, Some(e.value));
        assert!(e.kept_runs >= MIN_RUNS);
        // Without runs: the stated figure and no interval.
        let mut bare = r.clone();
        bare.run_seconds.clear();
        bare.throughput_ops_per_sec = None;
        let b = throughput(&bare).unwrap();
        assert_eq!((b.value, b.ci95, b.kept_runs), (e.value, None, 0));
        assert_eq!(ratio(&bare, &r).unwrap().ci95, None);
        let mut failed = r;
        failed.status = Status::Failed;
        assert_eq!(throughput(&failed), None);
    }
}
