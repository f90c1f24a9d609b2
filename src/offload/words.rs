//! Offload figures as a person reads them: rates, arrivals, percentiles,
//! for `plan`'s and `offload`'s printed output alike.

use super::arrivals::Arrivals;
use super::latency;

/// How requests arrive, in words (`poisson at 5,348.3/s, seed 1`).
pub fn describe_arrivals(a: &Arrivals) -> String {
    match a {
        Arrivals::Poisson { rate, seed } => {
            format!("poisson at {}/s, seed {seed}", fmt_rate(*rate))
        }
        Arrivals::Uniform { rate } => format!("uniform at {}/s", fmt_rate(*rate)),
        Arrivals::Trace(t) => format!("trace of {} requests", t.len()),
    }
}

/// A rate as a person reads it: grouped digits and one decimal where the
/// rate is not whole (`5,348.3`, `1,000`); three significant digits below
/// 10 (`0.250`).
pub fn fmt_rate(r: f64) -> String {
    use crate::core::units::{grouped, sig3};
    if !r.is_finite() || r.abs() < 10.0 {
        return sig3(r);
    }
    let tenths = (r * 10.0).round();
    let whole = grouped((tenths / 10.0).trunc());
    match (tenths.abs() % 10.0) as u32 {
        0 => whole,
        d => format!("{whole}.{d}"),
    }
}

pub fn percentiles(name: &str, p: &latency::Percentiles) -> String {
    format!(
        "  {name:<9} p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  p99.9 {:.3} ms  max {:.3} ms\n",
        p.p50, p.p90, p.p99, p.p999, p.max
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_written_with_at_most_one_decimal() {
        for (rate, written) in [
            (5348.2871441884845, "5,348.3"),
            (1000.0, "1,000"),
            (9999.96, "10,000"),
            (0.25, "0.250"),
        ] {
            assert_eq!(fmt_rate(rate), written);
        }
        let a = Arrivals::Poisson {
            rate: 5348.2871441884845,
            seed: 1,
        };
        assert_eq!(describe_arrivals(&a), "poisson at 5,348.3/s, seed 1");
    }
}
