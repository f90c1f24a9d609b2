//! The host sampler: CPU utilisation and resident memory of this process
//! (or of a plugin's worker process) while a CPU batch is timed, so CPU
//! records fill the same fields GPU records do.
//!
//! Utilisation is process CPU time (getrusage, all threads, including those
//! that already ended) over wall time and all cores, in windows of at least
//! `window`; the peak is the busiest window. Memory is the resident set
//! (/proc/self/statm), sampled every `period`.
//!
//! A plugin's batches run in its worker process, so its sampler watches
//! that process instead ([`HostSampler::of_worker`]): CPU time from
//! /proc/PID/stat, and the peak resident set over each run from the
//! kernel's own high-water mark (VmHWM, reset when the run starts) beside
//! VmRSS sampled every `period`.

use crate::monitor::process::{self, WatchedProcess};
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

/// The process a host sampler reads.
#[derive(Debug, Clone)]
enum Watched {
    /// This one.
    Own,
    /// A plugin's worker (whichever is running).
    Worker(WatchedProcess),
}

impl Watched {
    fn cpu_time(&self) -> Option<Duration> {
        match self {
            Watched::Own => process_cpu_time(),
            Watched::Worker(w) => process::cpu_time(w.pid()?),
        }
    }
    fn resident_mb(&self) -> Option<f64> {
        match self {
            Watched::Own => resident_mb(),
            Watched::Worker(w) => Some(process::memory(w.pid()?)?.resident_mb),
        }
    }
}

/// Samples this process (or a plugin's worker) every `period`.
pub struct HostSampler {
    period: Duration,
    window: Duration,
    cores: usize,
    watched: Watched,
    running: Option<Running>,
}

impl HostSampler {
    /// A sampler of this process for a machine with `cores` logical cores.
    pub fn new(period: Duration, cores: usize) -> Self {
        HostSampler {
            period,
            window: Duration::from_millis(50).max(period),
            cores: cores.max(1),
            watched: Watched::Own,
            running: None,
        }
    }

    /// A sampler of the plugin worker process `worker` (whichever is
    /// running when a run starts), for a machine with `cores` logical cores.
    pub fn of_worker(period: Duration, cores: usize, worker: WatchedProcess) -> Self {
        HostSampler {
            watched: Watched::Worker(worker),
            ..Self::new(period, cores)
        }
    }
}

/// A worker's peak resident set over a run: its high-water mark reset at
/// the start (the pid, and whether the reset worked).
fn reset_worker_peak(watched: &Watched) -> Option<(i32, bool)> {
    match watched {
        Watched::Own => None,
        Watched::Worker(w) => w.pid().map(|pid| (pid, process::reset_peak(pid))),
    }
}

fn sample_until(
    stop: &AtomicBool,
    period: Duration,
    window: Duration,
    cores: usize,
    watched: &Watched,
) -> RunUsage {
    let mut gaps = vec![];
    let reset = reset_worker_peak(watched);
    if matches!(watched, Watched::Worker(_)) && reset.is_none() {
        gaps.push("no plugin worker process was running: no memory or utilisation".to_string());
    }
    if reset.is_some_and(|(_, ok)| !ok) {
        gaps.push("the worker's peak resident set could not be reset (/proc/PID/clear_refs): the peak is of the sampled VmRSS only".to_string());
    }
    let start_wall = Instant::now();
    let start_cpu = watched.cpu_time();
    let mut win_wall = start_wall;
    let mut win_cpu = start_cpu;
    let mut peak_mem: Option<f64> = watched.resident_mb();
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
        if let Some(m) = watched.resident_mb() {
            peak_mem = Some(peak_mem.map_or(m, |p: f64| p.max(m)));
        }
        samples += 1;
        if now - win_wall >= window || stopping {
            let cpu = watched.cpu_time();
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
    let mean_util = util(start_cpu, watched.cpu_time(), start_wall.elapsed());
    // The kernel's high-water mark catches what fell between samples.
    if let Some((pid, true)) = reset {
        if let Some(m) = process::memory(pid) {
            peak_mem = Some(peak_mem.map_or(m.peak_mb, |p: f64| p.max(m.peak_mb)));
        }
    }
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
        gaps,
        ..RunUsage::default()
    }
}

impl Sampler for HostSampler {
    fn start(&mut self) -> anyhow::Result<()> {
        anyhow::ensure!(self.running.is_none(), "host sampler already running");
        let stop = Arc::new(AtomicBool::new(false));
        let (period, window, cores) = (self.period, self.window, self.cores);
        let watched = self.watched.clone();
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("pqcprof-host-sampler".into())
            .spawn(move || sample_until(&flag, period, window, cores, &watched))?;
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
        if let Watched::Worker(_) = self.watched {
            return format!(
                "plugin worker sampler: the plugin's worker process (where its batches run), not pqcprof's: its peak resident set over each run (VmHWM of /proc/PID/status, reset at the run's start through /proc/PID/clear_refs, with VmRSS sampled every {} ms), its CPU utilisation of all {} cores from /proc/PID/stat (user + system time, to the clock tick) over windows of {} ms",
                self.period.as_millis(),
                self.cores,
                self.window.as_millis()
            );
        }
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

    #[test]
    fn a_worker_sampler_reads_the_worker_not_this_process() {
        // A child that grows to about 64 MiB resident once it has started.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys,time; sys.stdin.readline(); b=bytearray(64<<20); print(1, flush=True); time.sleep(30)",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let worker = WatchedProcess::new();
        let mut s = HostSampler::of_worker(Duration::from_millis(5), 1, worker.clone());
        // No worker yet: a gap, no figure.
        s.start().unwrap();
        let u = s.stop().unwrap();
        assert_eq!(u.peak_mem_mb, None);
        assert!(u.gaps[0].contains("no plugin worker"), "{:?}", u.gaps);
        worker.set(child.id() as i32);
        s.start().unwrap();
        use std::io::{BufRead, Write};
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "go").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let u = s.stop().unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let peak = u.peak_mem_mb.unwrap();
        assert!(peak > 60.0, "{peak} MiB");
        assert!(s.describe().contains("worker process"), "{}", s.describe());
    }
}
