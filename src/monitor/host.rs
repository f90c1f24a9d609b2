//! The host sampler: CPU utilisation and resident memory of this process
//! while a CPU batch is timed, so CPU records fill the same fields GPU
//! records do.
//!
//! Utilisation is process CPU time (getrusage, all threads, including those
//! that already ended) over wall time and all cores, in windows of at least
//! `window`; the peak is the busiest window. Memory is the resident set
//! (/proc/self/statm), sampled every `period`.

use crate::monitor::{RunUsage, Sampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Process CPU time (user + system), all threads.
fn process_cpu_time() -> Option<Duration> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded, so the struct is initialised.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    Some(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// Resident set size in MiB.
fn resident_mb() -> Option<f64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: f64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (page > 0).then(|| pages * page as f64 / (1024.0 * 1024.0))
}

struct Running {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<RunUsage>,
}

/// Samples this process every `period`.
pub struct HostSampler {
    period: Duration,
    window: Duration,
    cores: usize,
    running: Option<Running>,
}

impl HostSampler {
    /// A sampler for a machine with `cores` logical cores.
    pub fn new(period: Duration, cores: usize) -> Self {
        HostSampler {
            period,
            window: Duration::from_millis(50).max(period),
            cores: cores.max(1),
            running: None,
        }
    }
}

fn sample_until(stop: &AtomicBool, period: Duration, window: Duration, cores: usize) -> RunUsage {
    let start_wall = Instant::now();
    let start_cpu = process_cpu_time();
    let mut win_wall = start_wall;
    let mut win_cpu = start_cpu;
    let mut peak_mem: Option<f64> = resident_mb();
    let mut peak_util: Option<f64> = None;
    let mut samples = 1usize;
    let util = |cpu0: Option<Duration>, cpu1: Option<Duration>, wall: Duration| -> Option<f64> {
        let (a, b) = (cpu0?, cpu1?);
        let w = wall.as_secs_f64();
        (w > 0.0)
            .then(|| ((b.saturating_sub(a)).as_secs_f64() / (w * cores as f64) * 100.0).min(100.0))
    };
    loop {
        let stopping = stop.load(Ordering::Acquire);
        if !stopping {
            std::thread::sleep(period);
        }
        let now = Instant::now();
        if let Some(m) = resident_mb() {
            peak_mem = Some(peak_mem.map_or(m, |p: f64| p.max(m)));
        }
        samples += 1;
        if now - win_wall >= window || stopping {
            let cpu = process_cpu_time();
            if now - win_wall >= window {
                if let Some(u) = util(win_cpu, cpu, now - win_wall) {
                    peak_util = Some(peak_util.map_or(u, |p: f64| p.max(u)));
                }
            }
            win_wall = now;
            win_cpu = cpu;
        }
        if stopping {
            break;
        }
    }
    let mean_util = util(start_cpu, process_cpu_time(), start_wall.elapsed());
    // A run shorter than one window has only its whole-run figure.
    let peak_util = match (peak_util, mean_util) {
        (Some(p), Some(m)) => Some(p.max(m)),
        (p, m) => p.or(m),
    };
    RunUsage {
        peak_mem_mb: peak_mem,
        peak_util_pct: peak_util,
        mean_util_pct: mean_util,
        samples,
        ..RunUsage::default()
    }
}

impl Sampler for HostSampler {
    fn start(&mut self) -> anyhow::Result<()> {
        anyhow::ensure!(self.running.is_none(), "host sampler already running");
        let stop = Arc::new(AtomicBool::new(false));
        let (period, window, cores) = (self.period, self.window, self.cores);
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("pqcprof-host-sampler".into())
            .spawn(move || sample_until(&flag, period, window, cores))?;
        self.running = Some(Running { stop, handle });
        Ok(())
    }

    fn stop(&mut self) -> anyhow::Result<RunUsage> {
        let r = self
            .running
            .take()
            .ok_or_else(|| anyhow::anyhow!("host sampler was not started"))?;
        r.stop.store(true, Ordering::Release);
        r.handle
            .join()
            .map_err(|_| anyhow::anyhow!("host sampler thread panicked"))
    }

    fn describe(&self) -> String {
        format!(
            "host sampler: process RSS every {} ms (/proc/self/statm), CPU utilisation of all {} cores from getrusage over windows of {} ms",
            self.period.as_millis(),
            self.cores,
            self.window.as_millis()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_memory_and_a_busy_core() {
        let mut s = HostSampler::new(Duration::from_millis(2), 1);
        s.start().unwrap();
        let t0 = Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < Duration::from_millis(120) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let u = s.stop().unwrap();
        assert!(u.peak_mem_mb.unwrap() > 0.0);
        // One busy core out of one: well above idle, never above 100.
        let peak = u.peak_util_pct.unwrap();
        assert!(peak > 20.0 && peak <= 100.0, "{peak}");
        assert!(u.samples >= 2);
        assert!(s.stop().is_err(), "stopping twice is an error");
    }
}
