//! Statistics over repeated measurements. Pure: no I/O, no timing.
//!
//! The outlier filter is cuPQC_benchmark's, reproduced exactly so that our
//! cuPQC-shaped files mean what cuPQC_benchmark's mean: sort the samples, take
//! Q1 and Q3 at the 1-based positions `(n + 3) / 4` and `(3n + 5) / 4`
//! (integer division; the 5th and 16th of 20), keep the samples inside
//! `[Q1 - 1.5 IQR, Q3 + 1.5 IQR]`, and report their mean and population
//! standard deviation. We add what a reviewer needs to audit that: the raw
//! and kept samples, the fences, Tukey's mild/severe outlier counts, the
//! median and a 95% confidence interval of the mean (Student's t).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use std::fmt;

/// Why a set of measurements cannot be summarised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleError {
    /// No values at all.
    Empty,
    /// A NaN or infinite value, with its index.
    NotFinite(usize),
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::Empty => f.write_str("no samples to summarise"),
            SampleError::NotFinite(i) => write!(f, "sample {i} is NaN or infinite"),
        }
    }
}

impl std::error::Error for SampleError {}

/// A non-empty set of finite measurements, in the order taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample(Vec<f64>);

impl Sample {
    /// Checks the invariants once, so no caller has to.
    pub fn new(values: Vec<f64>) -> Result<Self, SampleError> {
        if values.is_empty() {
            return Err(SampleError::Empty);
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(SampleError::NotFinite(i));
        }
        Ok(Sample(values))
    }

    /// The values in the order they were measured.
    pub fn values(&self) -> &[f64] {
        &self.0
    }

    /// Number of values (at least one).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: a `Sample` is never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }
}

/// Fences of the IQR filter and Tukey's outer fences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fences {
    /// First quartile, cuPQC_benchmark's way.
    pub q1: f64,
    /// Third quartile, cuPQC_benchmark's way.
    pub q3: f64,
    /// Q3 - Q1; absent for a single value, which has no spread to
    /// measure (the fences then all sit on that value).
    #[serde(default)]
    pub iqr: Option<f64>,
    /// Q1 - 1.5 IQR: below this a sample is dropped (a mild outlier or worse).
    pub lower: f64,
    /// Q3 + 1.5 IQR: above this a sample is dropped.
    pub upper: f64,
    /// Q1 - 3 IQR: below this an outlier is severe.
    pub lower_severe: f64,
    /// Q3 + 3 IQR: above this an outlier is severe.
    pub upper_severe: f64,
}

/// A 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Confidence level, 0.95.
    pub level: f64,
}

impl Interval {
    /// Whether two intervals share any value.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

/// Everything the reports need about one set of measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Every value, in measurement order.
    pub raw: Vec<f64>,
    /// The values the IQR filter kept, in measurement order.
    pub kept: Vec<f64>,
    /// The filter's fences.
    pub fences: Fences,
    /// Dropped values between the 1.5 and 3 IQR fences.
    pub mild_outliers: usize,
    /// Dropped values beyond the 3 IQR fences.
    pub severe_outliers: usize,
    /// Mean of the kept values (cuPQC_benchmark's `mean`).
    pub mean: f64,
    /// Population standard deviation of the kept values (cuPQC_benchmark's
    /// `std`); absent (null) below two kept values, where there is no
    /// spread to measure (files that wrote 0.0 there are still read).
    #[serde(default)]
    pub std: Option<f64>,
    /// Median of the kept values.
    pub median: f64,
    /// Median of all values.
    pub median_raw: f64,
    /// Smallest kept value.
    pub min: f64,
    /// Largest kept value.
    pub max: f64,
    /// 95% confidence interval of the mean of the kept values (Student's t);
    /// absent for a single value.
    pub ci95: Option<Interval>,
    /// Distribution-free confidence interval of `median`: two order
    /// statistics of the kept values, chosen from the binomial
    /// distribution so that the coverage (`level`, the exact figure) is
    /// at least 95%; absent below 6 kept values, where none is.
    #[serde(default)]
    pub median_ci95: Option<Interval>,
    /// Which values `ci95` and `median_ci95` are computed over: `kept`
    /// (after the IQR filter, as `mean` and `median` are), so they are
    /// narrower than the raw values' spread would give; `robust_cv` is
    /// the noise figure over all of them.
    #[serde(default = "kept_values")]
    pub ci_values: String,
    /// Noise of all (raw) values: 1.4826 x their median absolute deviation
    /// over their median (the robust coefficient of variation, about the
    /// standard deviation over the mean for normal noise, but not moved by
    /// a few outliers); absent when the median is zero. See [`NOISY_RCV`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust_cv: Option<f64>,
}

fn kept_values() -> String {
    KEPT.into()
}

/// `Summary::ci_values` of every summary: the IQR-kept values.
pub const KEPT: &str = "kept";

/// A `robust_cv` above this marks a figure as noisy: its runs differ by
/// more than a tenth around their median (busy machine, frequency changes).
pub const NOISY_RCV: f64 = 0.10;

/// The robust coefficient of variation of sorted values (see
/// `Summary::robust_cv`).
pub fn robust_cv(sorted: &[f64]) -> Option<f64> {
    let med = median_sorted(sorted);
    if med == 0.0 {
        return None;
    }
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    Some(1.4826 * median_sorted(&dev) / med.abs())
}

/// cuPQC_benchmark's quartile: the value at 1-based position `pos`, clamped
/// to the sample.
fn at_position(sorted: &[f64], pos: usize) -> f64 {
    let idx = pos.clamp(1, sorted.len()) - 1;
    sorted[idx]
}

/// Q1 and Q3 at positions (n + 3) / 4 and (3n + 5) / 4 of the sorted values.
// Written as cuPQC_benchmark writes it, so the two can be compared by eye.
#[allow(clippy::manual_div_ceil)]
pub fn quartiles(sample: &Sample) -> (f64, f64) {
    let s = sample.sorted();
    let n = s.len();
    (
        at_position(&s, (n + 3) / 4),
        at_position(&s, (3 * n + 5) / 4),
    )
}

/// Median of sorted, non-empty values.
fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Population standard deviation (divides by n), as cuPQC_benchmark.
fn population_std(v: &[f64], m: f64) -> f64 {
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}

/// 95% confidence interval of the mean with Student's t and the sample
/// standard deviation (divides by n - 1).
fn ci95_of_mean(v: &[f64], m: f64) -> Option<Interval> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    let s = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .expect("degrees of freedom are positive")
        .inverse_cdf(0.975);
    let half = t * s / (n as f64).sqrt();
    Some(Interval {
        low: m - half,
        high: m + half,
        level: 0.95,
    })
}

/// The distribution-free confidence interval of the median of sorted
/// values: `[x(j), x(n+1-j)]` (1-based) with the largest `j` for which
/// P(Binomial(n, 1/2) < j) <= 2.5%, so its coverage,
/// 1 - 2 P(Binomial(n, 1/2) < j), is at least 95%. Needs no assumption
/// about the distribution, unlike the mean's t interval; `None` when
/// `n < 6` (even `[min, max]` covers less than 95% there).
pub fn median_ci95(sorted: &[f64]) -> Option<Interval> {
    let n = sorted.len();
    if n < 6 {
        return None;
    }
    // P(X = i) for X ~ Binomial(n, 1/2), summed in logs: n may be large.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut below = 0.0f64; // P(X < j)
    let mut j = 0usize;
    for i in 0..n / 2 {
        let p = (ln_choose + ln_half_n).exp();
        if below + p > 0.025 {
            break;
        }
        below += p;
        j = i + 1;
        ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    if j == 0 {
        return None;
    }
    Some(Interval {
        low: sorted[j - 1],
        high: sorted[n - j],
        level: 1.0 - 2.0 * below,
    })
}

/// Applies the IQR filter and summarises what it kept.
pub fn summarize(sample: &Sample) -> Summary {
    let sorted = sample.sorted();
    let (q1, q3) = quartiles(sample);
    let iqr = q3 - q1;
    let fences = Fences {
        q1,
        q3,
        iqr: (sample.len() >= 2).then_some(iqr),
        lower: q1 - 1.5 * iqr,
        upper: q3 + 1.5 * iqr,
        lower_severe: q1 - 3.0 * iqr,
        upper_severe: q3 + 3.0 * iqr,
    };
    let inside = |x: f64| x >= fences.lower && x <= fences.upper;
    let kept: Vec<f64> = sample
        .values()
        .iter()
        .copied()
        .filter(|&x| inside(x))
        .collect();
    // The quartiles are sample values inside the fences, so the filter
    // always keeps at least Q1 and Q3.
    debug_assert!(!kept.is_empty());
    let severe = sample
        .values()
        .iter()
        .filter(|&&x| x < fences.lower_severe || x > fences.upper_severe)
        .count();
    let dropped = sample.len() - kept.len();
    let mut kept_sorted = kept.clone();
    kept_sorted.sort_by(f64::total_cmp);
    let m = mean(&kept);
    Summary {
        raw: sample.values().to_vec(),
        fences,
        mild_outliers: dropped - severe,
        severe_outliers: severe,
        mean: m,
        std: (kept.len() >= 2).then(|| population_std(&kept, m)),
        median: median_sorted(&kept_sorted),
        median_raw: median_sorted(&sorted),
        min: kept_sorted[0],
        max: kept_sorted[kept_sorted.len() - 1],
        ci95: ci95_of_mean(&kept, m),
        median_ci95: median_ci95(&kept_sorted),
        ci_values: KEPT.into(),
        robust_cv: if sorted.len() >= 2 {
            robust_cv(&sorted)
        } else {
            None
        },
        kept,
    }
}

/// A percentile (0..=100) of the values by linear interpolation between
/// closest ranks, for latency p50/p99.
pub fn percentile(sample: &Sample, p: f64) -> f64 {
    let s = sample.sorted();
    let p = p.clamp(0.0, 100.0);
    let rank = p / 100.0 * (s.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    s[lo] + (s[hi] - s[lo]) * (rank - lo as f64)
}

/// How the Mann-Whitney critical value behind a shift interval was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShiftMethod {
    /// From the exact null distribution of the rank-sum statistic.
    Exact,
    /// From its normal approximation with a continuity correction.
    Normal,
}

/// The largest `m x n` for which [`mann_whitney_critical`] uses the exact
/// distribution (both samples of up to 50 runs). Building it costs about
/// (mn)^2 / 4 additions, under two million here; beyond it the normal
/// approximation is close (its critical value is within one of the exact
/// one at 50 x 50, which the tests check) and costs nothing.
pub const EXACT_MAX_PAIRS: usize = 2500;

/// The null distribution of the Mann-Whitney statistic U (the number of
/// pairs in which the second sample's value is the larger) for samples of
/// `m` and `n`: `P(U = u)` for `u` in `0..=m*n`. With the largest of the
/// `i + j` values belonging to the first sample with probability
/// `i / (i + j)`, `P_ij(u) = i/(i+j) P_(i-1)j(u) + j/(i+j) P_i(j-1)(u - i)`;
/// only probabilities are added, so nothing cancels.
fn mann_whitney_null(m: usize, n: usize) -> Vec<f64> {
    // prev[j] = distribution for (i - 1, j), cur[j] for (i, j).
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for j in 1..=n {
            let (a, b) = (i as f64 / (i + j) as f64, j as f64 / (i + j) as f64);
            let mut p = vec![0.0; i * j + 1];
            for (u, q) in prev[j].iter().enumerate() {
                p[u] += a * q;
            }
            for (u, q) in cur[j - 1].iter().enumerate() {
                p[u + i] += b * q;
            }
            cur.push(p);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The rank-sum critical value for a two-sided 95% interval on the shift
/// between samples of `m` and `n`: the largest `c` with
/// `P(U <= c - 1) <= 2.5%`, with the interval's exact coverage
/// `1 - 2 P(U <= c - 1)` (at least 95%) and the method used. Exact up to
/// [`EXACT_MAX_PAIRS`] pairs, else the normal approximation with a
/// continuity correction, `c = floor(mn/2 + 1/2 - z sqrt(mn(m+n+1)/12))`.
/// `None` when no such `c >= 1` exists (fewer than 4 runs a side).
pub fn mann_whitney_critical(m: usize, n: usize) -> Option<(usize, f64, ShiftMethod)> {
    if m == 0 || n == 0 {
        return None;
    }
    let pairs = m * n;
    if pairs <= EXACT_MAX_PAIRS {
        let null = mann_whitney_null(m, n);
        let mut below = 0.0; // P(U <= c - 1)
        let mut c = 0;
        for p in null.iter().take(pairs / 2 + 1) {
            if below + p > 0.025 {
                break;
            }
            below += p;
            c += 1;
        }
        return (c >= 1).then_some((c, 1.0 - 2.0 * below, ShiftMethod::Exact));
    }
    let mean = pairs as f64 / 2.0;
    let sd = (pairs as f64 * (m + n + 1) as f64 / 12.0).sqrt();
    let z = Normal::standard().inverse_cdf(0.975);
    let c = (mean + 0.5 - z * sd).floor();
    if c < 1.0 {
        return None;
    }
    let level = 1.0 - 2.0 * Normal::standard().cdf((c - 0.5 - mean) / sd);
    Some((c as usize, level, ShiftMethod::Normal))
}

/// The Hodges-Lehmann estimate of the shift from `x` to `y` and its 95%
/// interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Median of all differences `y_j - x_i`.
    pub estimate: f64,
    /// The interval `[D(c), D(mn + 1 - c)]` of the sorted differences,
    /// with its exact coverage as `level`; `None` below 4 values a side.
    pub ci95: Option<Interval>,
    /// How the critical value `c` was found.
    pub method: Option<ShiftMethod>,
}

/// The shift in location from `x` to `y` (Hodges-Lehmann) with the
/// distribution-free interval that inverts the Mann-Whitney (Wilcoxon
/// rank-sum) test, as in Hollander & Wolfe, *Nonparametric Statistical
/// Methods*, chapter 4 (the two-sample location problem). It assumes only
/// that `y` is distributed as `x` moved by the shift; on the log of a
/// throughput that is a change by a constant factor, which is what a
/// faster or slower build does to every run. Ties (rare in timings) make
/// the coverage slightly conservative. `None` when either is empty or
/// holds a value that is not finite.
pub fn hodges_lehmann_shift(x: &[f64], y: &[f64]) -> Option<Shift> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let mut d: Vec<f64> = y
        .iter()
        .flat_map(|b| x.iter().map(move |a| b - a))
        .collect();
    d.sort_by(f64::total_cmp);
    let critical = mann_whitney_critical(x.len(), y.len());
    Some(Shift {
        estimate: median_sorted(&d),
        ci95: critical.map(|(c, level, _)| Interval {
            low: d[c - 1],
            high: d[d.len() - c],
            level,
        }),
        method: critical.map(|(_, _, m)| m),
    })
}

/// The noise of a set of values as the half-width of their median's
/// distribution-free 95% interval ([`median_ci95`]) over the median; `None`
/// below 6 values or for a median of zero.
pub fn median_relative_half_width(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ci = median_ci95(&sorted)?;
    let med = median_sorted(&sorted);
    (med != 0.0).then(|| (ci.high - ci.low) / 2.0 / med.abs())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn robust_cv_is_the_noise_of_the_raw_values() {
        // Median 100, absolute deviations 2, 0, 0, 1, 50: their median 1.
        let s = summarize(&Sample::new(vec![98.0, 100.0, 100.0, 101.0, 150.0]).unwrap());
        assert!((s.robust_cv.unwrap() - 0.014826).abs() < 1e-9, "{s:?}");
        assert_eq!(s.ci_values, KEPT);
        // Runs that swing by a third are noisy.
        let n = summarize(&Sample::new(vec![60.0, 100.0, 140.0, 100.0, 70.0, 130.0]).unwrap());
        assert!(n.robust_cv.unwrap() > NOISY_RCV, "{n:?}");
        assert_eq!(
            summarize(&Sample::new(vec![0.0, 0.0]).unwrap()).robust_cv,
            None
        );
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert_eq!(Sample::new(vec![]), Err(SampleError::Empty));
        assert_eq!(
            Sample::new(vec![1.0, f64::NAN]),
            Err(SampleError::NotFinite(1))
        );
        assert_eq!(
            Sample::new(vec![f64::INFINITY]),
            Err(SampleError::NotFinite(0))
        );
    }

    #[test]
    fn quartile_positions_are_the_seed_tools() {
        // 1..=20: Q1 is the 5th value, Q3 the 16th.
        let s = Sample::new((1..=20).map(f64::from).collect()).unwrap();
        assert_eq!(quartiles(&s), (5.0, 16.0));
        // n = 7: positions (10/4 = 2) and (26/4 = 6).
        let s = Sample::new(vec![70.0, 10.0, 60.0, 20.0, 50.0, 30.0, 40.0]).unwrap();
        assert_eq!(quartiles(&s), (20.0, 60.0));
    }

    #[test]
    fn filters_an_outlier_by_hand() {
        // Twenty values: nineteen near 100 and one at 1000.
        let mut v: Vec<f64> = (0..19).map(|i| 100.0 + f64::from(i % 5)).collect();
        v.push(1000.0);
        let s = summarize(&Sample::new(v).unwrap());
        // Sorted: 100 x4, 101 x4, 102 x4, 103 x4, 104 x3, 1000.
        // Q1 = 5th = 101, Q3 = 16th = 103, IQR = 2, fences [98, 106].
        assert_eq!(s.fences.q1, 101.0);
        assert_eq!(s.fences.q3, 103.0);
        assert_eq!(s.fences.lower, 98.0);
        assert_eq!(s.fences.upper, 106.0);
        assert_eq!(s.kept.len(), 19);
        assert_eq!(s.severe_outliers, 1);
        assert_eq!(s.mild_outliers, 0);
        // Kept: 100 x4, 101 x4, 102 x4, 103 x4, 104 x3: sum 1936.
        assert!(close(s.mean, 1936.0 / 19.0));
        // Population variance: (4*4 + 4*1 + 0... computed from the mean).
        let m: f64 = 1936.0 / 19.0;
        let var = (4.0 * (100.0 - m).powi(2)
            + 4.0 * (101.0 - m).powi(2)
            + 4.0 * (102.0 - m).powi(2)
            + 4.0 * (103.0 - m).powi(2)
            + 3.0 * (104.0 - m).powi(2))
            / 19.0;
        assert!(close(s.std.unwrap(), var.sqrt()));
        assert_eq!(s.median, 102.0);
        assert_eq!(s.median_raw, 102.0);
        assert_eq!(s.max, 104.0);
        let ci = s.ci95.unwrap();
        assert!(ci.low < s.mean && s.mean < ci.high);
    }

    #[test]
    fn single_value() {
        let s = summarize(&Sample::new(vec![42.0]).unwrap());
        assert_eq!(s.mean, 42.0);
        // One value states no spread: none of these is zero, all absent.
        assert_eq!((s.std, s.fences.iqr, s.robust_cv), (None, None, None));
        assert_eq!(s.median, 42.0);
        assert_eq!(s.kept, vec![42.0]);
        assert_eq!((s.ci95, s.median_ci95), (None, None));
        let json = serde_json::to_value(&s).unwrap();
        assert!(
            json["std"].is_null() && json["fences"]["iqr"].is_null(),
            "{json}"
        );
        // A file that wrote zeros there is still read.
        let mut old = json.clone();
        old["std"] = 0.0.into();
        old["fences"]["iqr"] = 0.0.into();
        let back: Summary = serde_json::from_value(old).unwrap();
        assert_eq!((back.std, back.fences.iqr), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn all_equal_values() {
        let s = summarize(&Sample::new(vec![7.5; 20]).unwrap());
        assert_eq!(s.fences.iqr, Some(0.0));
        assert_eq!(s.kept.len(), 20);
        assert_eq!(s.std, Some(0.0));
        let ci = s.ci95.unwrap();
        assert_eq!((ci.low, ci.high), (7.5, 7.5));
    }

    #[test]
    fn confidence_interval_by_hand() {
        // Values 1..=5: mean 3, sample sd sqrt(2.5), t(0.975, 4) = 2.7764451.
        let s = summarize(&Sample::new(vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap());
        let ci = s.ci95.unwrap();
        let half = 2.776_445_105_197_793 * (2.5f64).sqrt() / 5f64.sqrt();
        assert!((ci.low - (3.0 - half)).abs() < 1e-6, "{ci:?}");
        assert!((ci.high - (3.0 + half)).abs() < 1e-6, "{ci:?}");
        assert!(close(s.std.unwrap(), 2f64.sqrt()));
    }

    #[test]
    fn percentiles() {
        let s = Sample::new((1..=101).map(f64::from).collect()).unwrap();
        assert_eq!(percentile(&s, 50.0), 51.0);
        assert_eq!(percentile(&s, 99.0), 100.0);
        assert_eq!(percentile(&s, 0.0), 1.0);
        let one = Sample::new(vec![3.0]).unwrap();
        assert_eq!(percentile(&one, 99.0), 3.0);
    }

    #[test]
    fn intervals_overlap() {
        let a = Interval {
            low: 1.0,
            high: 2.0,
            level: 0.95,
        };
        let b = Interval {
            low: 2.0,
            high: 3.0,
            level: 0.95,
        };
        let c = Interval {
            low: 2.5,
            high: 3.0,
            level: 0.95,
        };
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&c));
    }

    #[test]
    fn the_median_interval_uses_binomial_order_statistics() {
        // n = 20: P(Bin(20, 1/2) <= 5) = 0.0207, <= 6 = 0.0577: x(6)..x(15).
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let c = median_ci95(&v).unwrap();
        assert_eq!((c.low, c.high), (6.0, 15.0));
        assert!(
            (c.level - (1.0 - 2.0 * 21700.0 / 1048576.0)).abs() < 1e-12,
            "{}",
            c.level
        );
        // n = 6: only [min, max], coverage 1 - 2/64.
        let c = median_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!((c.low, c.high, c.level), (1.0, 6.0, 1.0 - 2.0 / 64.0));
        assert!(median_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_none());
        // Large n does not overflow and stays near the normal approximation.
        let v: Vec<f64> = (0..10_000).map(f64::from).collect();
        let c = median_ci95(&v).unwrap();
        assert!(c.level >= 0.95 && c.level < 0.96, "{}", c.level);
        assert!(
            (c.low - 4901.0).abs() <= 2.0 && (c.high - 5098.0).abs() <= 2.0,
            "{c:?}"
        );
    }

    /// A standard normal draw (Box-Muller), for the simulations.
    pub(crate) fn gaussian(rng: &mut impl rand::Rng) -> f64 {
        let u1: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]: ln is finite
        let u2: f64 = rng.random();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    #[test]
    fn the_exact_critical_values_match_the_published_tables() {
        // Two-sided 5% critical values of U (reject at U <= u): 0 for 4 x 4,
        // 5 for 6 x 6, 23 for 10 x 10, 127 for 20 x 20; c is one more.
        for (m, c) in [(4, 1), (6, 6), (10, 24), (20, 128)] {
            let (got, level, method) = mann_whitney_critical(m, m).unwrap();
            assert_eq!((got, method), (c, ShiftMethod::Exact), "{m} x {m}");
            assert!((0.95..0.98).contains(&level), "{m}: {level}");
        }
        // Unequal sizes: 5 x 8 rejects at U <= 6.
        assert_eq!(mann_whitney_critical(5, 8).unwrap().0, 7);
        assert_eq!(mann_whitney_critical(8, 5).unwrap().0, 7);
        // Three runs a side cannot give 95%: P(U = 0) is 1/20 there.
        assert_eq!(mann_whitney_critical(3, 3), None);
        assert_eq!(mann_whitney_critical(0, 9), None);
        // The null distribution sums to one.
        let null = mann_whitney_null(7, 9);
        assert_eq!(null.len(), 64);
        assert!((null.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_normal_approximation_is_within_one_of_the_exact_value_where_it_takes_over() {
        let (exact, _, _) = mann_whitney_critical(50, 50).unwrap();
        let (approx, level, method) = mann_whitney_critical(51, 50).unwrap();
        assert_eq!(method, ShiftMethod::Normal);
        assert!((0.949..0.952).contains(&level), "{level}");
        assert!(approx > exact, "{exact} {approx}");
        // At the same size, exact and approximate differ by at most one.
        let null = mann_whitney_null(50, 50);
        let (mean, sd) = (1250.0, (2500.0f64 * 101.0 / 12.0).sqrt());
        let z = Normal::standard().inverse_cdf(0.975);
        let c = (mean + 0.5 - z * sd).floor() as usize;
        assert!(c.abs_diff(exact) <= 1, "{c} {exact}");
        assert!(null[..exact].iter().sum::<f64>() <= 0.025);
    }

    #[test]
    fn the_shift_is_recovered_and_its_interval_needs_four_runs_a_side() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y: Vec<f64> = x.iter().map(|v| v + 0.25).collect();
        let s = hodges_lehmann_shift(&x, &y).unwrap();
        assert!(close(s.estimate, 0.25), "{s:?}");
        let ci = s.ci95.unwrap();
        // c = 6 of 36 sorted differences: -2.75 and 3.25.
        assert!(close(ci.low, -2.75) && close(ci.high, 3.25), "{ci:?}");
        assert_eq!(s.method, Some(ShiftMethod::Exact));
        let few = hodges_lehmann_shift(&x[..3], &y[..3]).unwrap();
        assert_eq!((few.ci95, few.method), (None, None));
        assert_eq!(hodges_lehmann_shift(&[], &y), None);
        assert_eq!(hodges_lehmann_shift(&[f64::NAN], &y), None);
    }

    /// Log throughputs of `runs` runs at scale `ratio`: normal, log-normal
    /// or normal with 10% of the runs up to three times slower.
    pub(crate) fn simulated_runs(
        rng: &mut impl rand::Rng,
        shape: usize,
        runs: usize,
        noise: f64,
        ratio: f64,
    ) -> Vec<f64> {
        (0..runs)
            .map(|_| {
                let g = gaussian(rng);
                let ops = match shape {
                    0 => 1000.0 * (1.0 + noise * g),
                    1 => 1000.0 * (noise * g).exp(),
                    _ if rng.random::<f64>() < 0.1 => 1000.0 / (1.0 + 2.0 * rng.random::<f64>()),
                    _ => 1000.0 * (1.0 + noise * g),
                };
                (ratio * ops).ln()
            })
            .collect()
    }

    #[test]
    fn the_shift_interval_covers_the_true_ratio_95_percent_of_the_time() {
        use rand::SeedableRng;
        for (shape, seed) in [(0, 11u64), (1, 12), (2, 13)] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let ratio: f64 = 0.93;
            let covered = (0..2000)
                .filter(|_| {
                    let old = simulated_runs(&mut rng, shape, 20, 0.02, 1.0);
                    let new = simulated_runs(&mut rng, shape, 20, 0.02, ratio);
                    let ci = hodges_lehmann_shift(&old, &new).unwrap().ci95.unwrap();
                    ci.low <= ratio.ln() && ratio.ln() <= ci.high
                })
                .count();
            let share = covered as f64 / 2000.0;
            assert!((0.93..=0.97).contains(&share), "shape {shape}: {share}");
        }
    }

    #[test]
    fn the_median_half_width_is_relative_to_the_median() {
        let v: Vec<f64> = (1..=10).map(|i| 100.0 + i as f64).collect();
        // 10 values: the interval is the 2nd and 9th, 102 .. 109.
        let w = median_relative_half_width(&v).unwrap();
        assert!(close(w, 3.5 / 105.5), "{w}");
        assert_eq!(median_relative_half_width(&v[..5]), None);
    }
}
