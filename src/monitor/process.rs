//! Another process as Linux's /proc describes it: its resident memory and
//! peak, its CPU time, the processes of its session, and the memory the
//! machine has available. A plugin runs in a worker process of its own, so
//! its records' memory and utilisation are read here, from the worker.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The process a sampler watches, shared with whoever starts and replaces
/// it: a plugin's worker gets a new pid each time it is started again.
#[derive(Debug, Clone, Default)]
pub struct WatchedProcess(Arc<AtomicI32>);

impl WatchedProcess {
    /// Nothing watched yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Watches `pid` from now on.
    pub fn set(&self, pid: i32) {
        self.0.store(pid, Ordering::Release);
    }
    /// Stops watching `pid` (a later process set meanwhile stays).
    pub fn clear(&self, pid: i32) {
        let _ = self
            .0
            .compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Acquire);
    }
    /// The process watched now, if any.
    pub fn pid(&self) -> Option<i32> {
        Some(self.0.load(Ordering::Acquire)).filter(|&p| p > 0)
    }
}

/// A process's memory, MiB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Memory {
    /// Resident now (VmRSS).
    pub resident_mb: f64,
    /// The most it has had resident since it started or its peak was reset
    /// (VmHWM).
    pub peak_mb: f64,
}

/// A `/proc/.../status` line's value in kB, as MiB.
fn status_mb(status: &str, key: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb / 1024.0)
}

/// `pid`'s resident memory and its peak, from /proc/PID/status; `None`
/// when it is gone (or a zombie, which has no memory left).
pub fn memory(pid: i32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(Memory {
        resident_mb: status_mb(&status, "VmRSS:")?,
        peak_mb: status_mb(&status, "VmHWM:")?,
    })
}

/// Resets `pid`'s peak resident memory (VmHWM) to what it has resident
/// now (/proc/PID/clear_refs, Linux 4.0 and newer); false when that is not
/// allowed here.
pub fn reset_peak(pid: i32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), b"5").is_ok()
}

/// The fields of /proc/PID/stat after the command name (the state first:
/// field 3 of proc(5) is index 0 here).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is in parentheses and may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// `pid`'s CPU time (user and system, all its threads) from /proc/PID/stat,
/// to the clock tick.
pub fn cpu_time(pid: i32) -> Option<Duration> {
    let f = stat_fields(pid)?;
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| Duration::from_secs_f64(ticks as f64 / hz as f64))
}

/// Every process of session `sid` still alive (zombies left out), by
/// pid: those a session leader left behind, wherever they moved in its
/// process groups.
pub fn session_members(sid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            stat_fields(pid).is_some_and(|f| {
                f.first().is_some_and(|s| s != "Z") && f.get(3) == Some(&sid.to_string())
            })
        })
        .collect()
}

/// The memory the machine has available for new work (MemAvailable of
/// /proc/meminfo), MiB.
pub fn available_mb() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    status_mb(&info, "MemAvailable:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = std::process::id() as i32;
        let m = memory(me).unwrap();
        assert!(m.resident_mb > 0.0 && m.peak_mb >= m.resident_mb, "{m:?}");
        let t0 = cpu_time(me).unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(60) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(cpu_time(me).unwrap() > t0);
        assert!(available_mb().unwrap() > 0.0);
        // This test's process is in its own session's list.
        // SAFETY: getsid(0) has no preconditions.
        let sid = unsafe { libc::getsid(0) };
        assert!(session_members(sid).contains(&me));
        assert!(memory(-5).is_none());
    }

    #[test]
    fn a_watched_process_is_cleared_only_by_its_own_pid() {
        let w = WatchedProcess::new();
        assert_eq!(w.pid(), None);
        w.set(42);
        w.clear(41);
        assert_eq!(w.pid(), Some(42));
        w.clear(42);
        assert_eq!(w.pid(), None);
    }
}
