//! When requests arrive: a Poisson process at a rate (seeded, so a
//! prediction can be repeated), evenly spaced arrivals, or a trace file of
//! timestamps replayed at its own times.

use crate::core::bounded;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// How request arrival times are generated.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps of mean `1 / rate` seconds.
    Poisson {
        /// Requests per second.
        rate: f64,
        /// The generator's seed: the same seed, the same times.
        seed: u64,
    },
    /// One request every `1 / rate` seconds.
    Uniform {
        /// Requests per second.
        rate: f64,
    },
    /// The given times, seconds from the first.
    Trace(Vec<f64>),
}

impl Arrivals {
    /// The requests' intended arrival times, seconds from the start, in
    /// order: `count` of them (a trace gives all of its own, whatever
    /// `count` is).
    pub fn times(&self, count: usize) -> Vec<f64> {
        match self {
            Arrivals::Poisson { rate, seed } => {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(*seed);
                let mut t = 0.0;
                (0..count)
                    .map(|_| {
                        // 1 - U lies in (0, 1], so the logarithm is finite.
                        let u: f64 = rng.random();
                        t += -(1.0 - u).ln() / rate;
                        t
                    })
                    .collect()
            }
            Arrivals::Uniform { rate } => (0..count).map(|i| i as f64 / rate).collect(),
            Arrivals::Trace(t) => t.clone(),
        }
    }

    /// Requests per second offered: the rate asked for, or a trace's own
    /// (its requests over its span).
    pub fn rate(&self) -> f64 {
        match self {
            Arrivals::Poisson { rate, .. } | Arrivals::Uniform { rate } => *rate,
            Arrivals::Trace(t) => {
                let span = t.last().unwrap_or(&0.0) - t.first().unwrap_or(&0.0);
                if span > 0.0 {
                    (t.len() - 1) as f64 / span
                } else {
                    f64::INFINITY
                }
            }
        }
    }
}

/// Checks a rate given on the command line: requests per second, from
/// [`bounded::RATE_MIN`] to [`bounded::RATE_MAX`].
pub fn check_rate(what: &str, rate: f64) -> Result<f64, String> {
    bounded::rate(&rate.to_string()).map_err(|e| format!("{what} {rate}: {e}"))
}

/// The largest trace read, bytes: room for the most arrival times a point
/// holds ([`bounded::MAX_REQUESTS_PER_POINT`]) at 25 bytes a line, and for
/// comments.
pub const MAX_TRACE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a trace: one arrival time in seconds per line (blank lines and
/// lines starting with `#` skipped), in order, at least two of them.
/// Times are made relative to the first. Only a regular file of at most
/// [`MAX_TRACE_BYTES`] is read, as run files are bounded.
pub fn read_trace(path: &Path) -> Result<Vec<f64>, String> {
    let shown = path.display();
    let bytes = crate::schema::read::read_regular(path, "a trace", MAX_TRACE_BYTES)
        .map_err(|e| format!("--trace {shown}: {e}"))?;
    let text =
        String::from_utf8(bytes).map_err(|e| format!("--trace {shown}: not UTF-8 text ({e})"))?;
    parse_trace(&text).map_err(|e| format!("--trace {shown}: {e}"))
}

/// [`read_trace`] on a file's text.
pub fn parse_trace(text: &str) -> Result<Vec<f64>, String> {
    let mut times: Vec<f64> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let t: f64 = line
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .ok_or_else(|| {
                format!(
                    "line {}: '{line}' is not a time (seconds, one number per line)",
                    n + 1
                )
            })?;
        if let Some(&first) = times.first() {
            if t - first > bounded::WINDOW_MAX {
                return Err(format!(
                    "line {}: {t} is {} s after the first time {first}: a trace spans at most {} s (the longest --window)",
                    n + 1,
                    t - first,
                    bounded::WINDOW_MAX
                ));
            }
        }
        if times.len() >= bounded::MAX_REQUESTS_PER_POINT {
            return Err(format!(
                "line {}: more than {} arrival times: a trace is one point, and a point holds at most that many requests",
                n + 1,
                bounded::MAX_REQUESTS_PER_POINT
            ));
        }
        if let Some(&prev) = times.last() {
            if t < prev {
                return Err(format!(
                    "line {}: {t} comes before the previous time {prev}: arrival times must be in order",
                    n + 1
                ));
            }
        }
        times.push(t);
    }
    if times.len() < 2 {
        return Err(format!(
            "{} arrival time(s): a trace needs at least 2, one per line",
            times.len()
        ));
    }
    let first = times[0];
    Ok(times.into_iter().map(|t| t - first).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Kolmogorov-Smirnov distance between the gaps and Exp(rate).
    fn ks_exponential(gaps: &mut [f64], rate: f64) -> f64 {
        gaps.sort_by(|a, b| a.total_cmp(b));
        let n = gaps.len() as f64;
        gaps.iter()
            .enumerate()
            .map(|(i, g)| {
                let cdf = 1.0 - (-rate * g).exp();
                (cdf - i as f64 / n)
                    .abs()
                    .max(((i + 1) as f64 / n - cdf).abs())
            })
            .fold(0.0, f64::max)
    }

    fn gaps(t: &[f64]) -> Vec<f64> {
        let mut g = vec![t[0]];
        g.extend(t.windows(2).map(|w| w[1] - w[0]));
        g
    }

    #[test]
    fn poisson_gaps_pass_a_goodness_of_fit_test() {
        let rate = 2500.0;
        let t = Arrivals::Poisson { rate, seed: 7 }.times(5000);
        let d = ks_exponential(&mut gaps(&t), rate);
        // The 1% critical value of the one-sample test: 1.63 / sqrt(n).
        let critical = 1.63 / (5000f64).sqrt();
        assert!(d < critical, "KS distance {d} >= {critical}");
        // The same test rejects gaps of the wrong rate and even gaps.
        let d_wrong = ks_exponential(&mut gaps(&t), rate * 1.2);
        assert!(d_wrong > critical, "a 20% wrong rate passed: {d_wrong}");
        let even = Arrivals::Uniform { rate }.times(5000);
        assert!(ks_exponential(&mut gaps(&even)[1..].to_vec(), rate) > critical);
        // Seeded: the same times again, other times with another seed.
        assert_eq!(t, Arrivals::Poisson { rate, seed: 7 }.times(5000));
        assert_ne!(t, Arrivals::Poisson { rate, seed: 8 }.times(5000));
    }

    #[test]
    fn a_trace_is_replayed_at_its_own_times() {
        let t = parse_trace("# seconds\n10.5\n10.5\n\n10.75\n12\n").unwrap();
        assert_eq!(t, [0.0, 0.0, 0.25, 1.5]);
        let a = Arrivals::Trace(t.clone());
        assert_eq!(a.times(1), t);
        assert_eq!(a.rate(), 2.0);
    }

    #[test]
    fn a_trace_is_a_regular_file_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_trace(dir.path()).unwrap_err();
        assert!(e.contains("is a folder"), "{e}");
        // One byte over the bound (a sparse file: nothing written).
        let big = dir.path().join("big.txt");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_TRACE_BYTES + 1).unwrap();
        let e = read_trace(&big).unwrap_err();
        assert!(
            e.contains("larger than the 256 MiB a trace may have"),
            "{e}"
        );
        let ok = dir.path().join("ok.txt");
        std::fs::write(&ok, "1\n2\n").unwrap();
        assert_eq!(read_trace(&ok).unwrap(), [0.0, 1.0]);
        // A device never ends (/dev/zero, /dev/urandom): refused unread.
        let e = read_trace(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("/dev/zero: is a device, not a trace"), "{e}");
    }

    #[test]
    fn bad_traces_and_rates_are_named() {
        let e = parse_trace("").unwrap_err();
        assert!(e.contains("0 arrival time(s)"), "{e}");
        let e = parse_trace("1\n2\nsoon\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("'soon'"), "{e}");
        let e = parse_trace("1\n3\n2\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("in order"), "{e}");
        let e = parse_trace("1\n3601.5\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("at most 3600 s"), "{e}");
        let e = parse_trace("1\nNaN\n").unwrap_err();
        assert!(e.contains("'NaN'"), "{e}");
        for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            let e = check_rate("--rate", bad).unwrap_err();
            assert!(e.starts_with(&format!("--rate {bad}")), "{e}");
        }
        assert_eq!(check_rate("--rate", 0.5), Ok(0.5));
    }
}
