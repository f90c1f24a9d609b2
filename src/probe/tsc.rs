//! The CPU's time-stamp counter, so a CPU figure can also be given in
//! cycles per operation: the unit eBACS (SUPERCOP's `cpucycles`), liboqs's
//! `speed_kem`/`speed_sig` and mlkem-native's tables use on x86-64.
//!
//! pqcprof times CPU work with one clock (`std::time::Instant`, on Linux
//! `CLOCK_MONOTONIC`); the counter's rate is measured against that clock
//! once per process, and a record's cycles per operation are that rate
//! times its threads over its median operations per second: TSC cycles
//! one core spends per operation. That is what reading the counter around
//! each timed run gives, because the counter is only used where it is
//! invariant (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`: it
//! ticks at one rate whatever the cores' clocks do, and through idle
//! states). TSC cycles equal core cycles only while the core runs at the
//! TSC's rate: under turbo a core does more work per TSC cycle, when it
//! saves power less. The rate is in each run file's metadata (`tsc_mhz`)
//! so a reader can convert. A hardware core-cycle counter (perf_event) is
//! not used: virtual machines and containers often lack it where the TSC
//! is there, and one method everywhere keeps figures comparable.
//!
//! Elsewhere (another architecture, a TSC that is not invariant, no
//! `/proc`) there is no rate and no cycles, and the records say nothing.

use std::sync::OnceLock;

/// The invariant TSC's rate in MHz, measured once per process; `None`
/// where there is none.
pub fn mhz() -> Option<f64> {
    static RATE: OnceLock<Option<f64>> = OnceLock::new();
    *RATE.get_or_init(measure)
}

/// TSC cycles one core spends per operation at `ops_per_sec` over
/// `threads` threads; `None` without an invariant TSC or a positive rate.
pub fn cycles_per_op(ops_per_sec: f64, threads: usize) -> Option<f64> {
    per_op(mhz()?, ops_per_sec, threads)
}

/// [`cycles_per_op`] at a given counter rate (what a reader of a run file
/// does with its `tsc_mhz`).
pub fn per_op(mhz: f64, ops_per_sec: f64, threads: usize) -> Option<f64> {
    let v = mhz * 1e6 * threads.max(1) as f64 / ops_per_sec;
    (ops_per_sec > 0.0 && v.is_finite() && v > 0.0).then_some(v)
}

/// Whether `/proc/cpuinfo`'s flags say the counter is invariant.
fn invariant(cpuinfo: &str) -> bool {
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
fn measure() -> Option<f64> {
    use std::time::{Duration, Instant};
    if !invariant(&std::fs::read_to_string("/proc/cpuinfo").ok()?) {
        return None;
    }
    // SAFETY: RDTSC exists on every x86-64 CPU and has no preconditions.
    let tsc = || unsafe { core::arch::x86_64::_rdtsc() };
    // A reading of the clock with the counter on both sides of it: kept
    // only when the two counter values are close (no preemption between).
    let pair = || {
        for _ in 0..1000 {
            let a = tsc();
            let t = Instant::now();
            let b = tsc();
            if b.wrapping_sub(a) < 20_000 {
                return Some((t, a / 2 + b / 2));
            }
        }
        None
    };
    // Three windows of 10 ms; their median.
    let mut rates = vec![];
    for _ in 0..3 {
        let (t0, c0) = pair()?;
        while t0.elapsed() < Duration::from_millis(10) {
            std::hint::spin_loop();
        }
        let (t1, c1) = pair()?;
        let secs = (t1 - t0).as_secs_f64();
        rates.push(c1.wrapping_sub(c0) as f64 / secs / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    let m = rates[1];
    (m.is_finite() && m > 1.0).then_some(m)
}

#[cfg(not(target_arch = "x86_64"))]
fn measure() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_the_rate_times_the_threads_over_the_throughput() {
        // 2,000 MHz, one thread, 1 M ops/s: 2,000 cycles an operation.
        assert_eq!(per_op(2000.0, 1e6, 1), Some(2000.0));
        // Two threads doing 1 M ops/s between them: each op took a core
        // twice as long.
        assert_eq!(per_op(2000.0, 1e6, 2), Some(4000.0));
        assert_eq!(per_op(2000.0, 0.0, 1), None);
        assert_eq!(per_op(2000.0, f64::NAN, 1), None);
    }

    #[test]
    fn only_an_invariant_counter_counts() {
        assert!(invariant(
            "flags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc\n"
        ));
        assert!(!invariant("flags\t\t: fpu tsc constant_tsc\n"));
        assert!(!invariant(
            "flags\t\t: fpu tsc nonstop_tsc_s3 constant_tsc\n"
        ));
        assert!(!invariant(""));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_measured_rate_agrees_with_the_clock_over_a_longer_window() {
        let Some(rate) = mhz() else {
            // No invariant TSC here: nothing to compare.
            return;
        };
        // Counted over 300 ms against the same clock, independently of the
        // calibration; within 5%. Each end is a clock reading with the
        // counter read just before and after it, retried until close, so a
        // busy machine's preemption cannot stretch one side.
        let end = || loop {
            // SAFETY: as above.
            let a = unsafe { core::arch::x86_64::_rdtsc() };
            let t = std::time::Instant::now();
            let b = unsafe { core::arch::x86_64::_rdtsc() };
            if b - a < 100_000 {
                return (t, a);
            }
        };
        let (t0, c0) = end();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let (t1, c1) = end();
        let long = (c1 - c0) as f64 / (t1 - t0).as_secs_f64() / 1e6;
        assert!((long / rate - 1.0).abs() < 0.05, "{rate} MHz vs {long} MHz");
    }
}
