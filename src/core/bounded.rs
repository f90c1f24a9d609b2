//! Numbers where they enter: one way to read a number from the command
//! line or a file, with the bounds the code after it needs. A value is
//! finite and in its range, a time converts to a [`Duration`], and the
//! message of a refusal names the value and what is valid (clap adds the
//! option's name; a file's reader adds the file and line).
//!
//! The bounds, each the limit of what the code after it can hold:
//! - a rate: [`RATE_MIN`] to [`RATE_MAX`] requests per second;
//! - a window of arrivals: [`WINDOW_MIN`] to [`WINDOW_MAX`] seconds;
//! - rate × window: at most [`MAX_REQUESTS_PER_POINT`] requests in one
//!   point, the memory [`BYTES_PER_REQUEST`] each takes;
//! - a deadline: 0.001 s to a week;
//! - a batch: 1 to [`BATCH_MAX`] requests; a wait: 0 to [`WAIT_MAX_MS`] ms.

use std::time::Duration;

/// The lowest rate, requests per second: a point holds at least two
/// requests, so its span is about two gaps, 200 s at this rate.
pub const RATE_MIN: f64 = 0.01;
/// The highest rate, requests per second: a hundred times what the
/// fastest batched kernels serve, far above anything a host can offer.
pub const RATE_MAX: f64 = 1e8;
/// The shortest window of arrivals per point, seconds.
pub const WINDOW_MIN: f64 = 0.05;
/// The longest window of arrivals per point (and a trace's longest span),
/// seconds.
pub const WINDOW_MAX: f64 = 3600.0;
/// Requests one point may hold: each keeps its arrival, dispatch, finish
/// and latency times, about [`BYTES_PER_REQUEST`] bytes.
pub const MAX_REQUESTS_PER_POINT: usize = 10_000_000;
/// What one request of a point keeps in memory, bytes (an upper estimate:
/// its arrival time, its served record, its three latencies and its
/// predicted one).
pub const BYTES_PER_REQUEST: usize = 128;
/// The largest batch any option may ask for.
pub const BATCH_MAX: u64 = 4096;
/// The longest wait for a batch to fill, milliseconds (a minute).
pub const WAIT_MAX_MS: f64 = 60_000.0;
/// The longest deadline, seconds (a week).
pub const DEADLINE_MAX: f64 = 604_800.0;

/// `text` as a number from `lo` to `hi` (both included): finite, in range,
/// else a message naming it and the range, with `what` (e.g. "requests per
/// second") saying what the number counts.
pub fn number(text: &str, lo: f64, hi: f64, what: &str) -> Result<f64, String> {
    let t = text.trim();
    let v: f64 = t
        .parse()
        .map_err(|_| format!("'{t}' is not a number; give {what} from {lo} to {hi}"))?;
    if !v.is_finite() || v < lo || v > hi {
        return Err(format!(
            "{t} is out of range; give {what} from {lo} to {hi}"
        ));
    }
    Ok(v)
}

/// `text` as a whole number from `lo` to `hi` (both included).
pub fn whole(text: &str, lo: u64, hi: u64, what: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(_) => Err(format!(
            "{t} is out of range; give {what} from {lo} to {hi}"
        )),
        Err(_) => Err(format!(
            "'{t}' is not a whole number; give {what} from {lo} to {hi}"
        )),
    }
}

/// A rate, requests per second: [`RATE_MIN`] to [`RATE_MAX`].
pub fn rate(text: &str) -> Result<f64, String> {
    number(text, RATE_MIN, RATE_MAX, "requests per second")
}

/// A window of arrivals, seconds: [`WINDOW_MIN`] to [`WINDOW_MAX`].
pub fn window(text: &str) -> Result<f64, String> {
    number(text, WINDOW_MIN, WINDOW_MAX, "seconds")
}

/// A deadline, seconds: 0.001 to [`DEADLINE_MAX`] (a week).
pub fn deadline(text: &str) -> Result<f64, String> {
    number(text, 0.001, DEADLINE_MAX, "seconds (at most a week)")
}

/// A wait, milliseconds: 0 to [`WAIT_MAX_MS`].
pub fn wait_ms(text: &str) -> Result<f64, String> {
    number(text, 0.0, WAIT_MAX_MS, "milliseconds")
}

/// A batch size: 1 to [`BATCH_MAX`].
pub fn batch(text: &str) -> Result<usize, String> {
    whole(text, 1, BATCH_MAX, "requests in a batch").map(|v| v as usize)
}

/// `secs` as a [`Duration`]: finite and not negative, else a message with
/// `what`.
pub fn duration(secs: f64, what: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("{what} {secs}: not a time (finite seconds, 0 or more)"))
}

/// How many requests a point at `rate` over `window` seconds holds (at
/// least 2), or why it may not: more than [`MAX_REQUESTS_PER_POINT`].
pub fn requests_per_point(rate: f64, window: f64) -> Result<usize, String> {
    let n = (rate * window).ceil();
    if !n.is_finite() || n > MAX_REQUESTS_PER_POINT as f64 {
        return Err(format!(
            "{rate} requests per second over {window} s is {} requests in one point; at most {} \
             (each keeps about {BYTES_PER_REQUEST} bytes, {} MiB in all): lower the rate or --window",
            super::units::grouped(n),
            super::units::grouped(MAX_REQUESTS_PER_POINT as f64),
            (MAX_REQUESTS_PER_POINT * BYTES_PER_REQUEST) >> 20
        ));
    }
    Ok((n.max(0.0) as usize).max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_finite_and_in_range() {
        assert_eq!(rate("500"), Ok(500.0));
        for bad in ["1e308", "inf", "NaN", "0", "-5", "1e9", "fast", ""] {
            let e = rate(bad).unwrap_err();
            assert!(
                e.contains(bad.trim()) && e.contains("from 0.01 to 100000000"),
                "{bad}: {e}"
            );
        }
        assert_eq!(window("3600"), Ok(3600.0));
        assert!(window("3600.5").is_err() && window("0.01").is_err());
        assert!(wait_ms("1e300").unwrap_err().contains("0 to 60000"));
        assert_eq!(batch("4096"), Ok(4096));
        assert!(batch("0").is_err() && batch("4097").is_err() && batch("1.5").is_err());
    }

    #[test]
    fn a_point_is_bounded_by_its_memory() {
        assert_eq!(requests_per_point(1000.0, 2.0), Ok(2000));
        assert_eq!(requests_per_point(0.01, 0.05), Ok(2));
        let e = requests_per_point(1e8, 3600.0).unwrap_err();
        assert!(
            e.contains("360,000,000,000 requests") && e.contains("1220 MiB"),
            "{e}"
        );
        assert!(requests_per_point(f64::INFINITY, 1.0).is_err());
        assert!(duration(1e300, "--x").is_err() && duration(-1.0, "--x").is_err());
        assert_eq!(duration(0.5, "--x"), Ok(Duration::from_millis(500)));
    }
}
