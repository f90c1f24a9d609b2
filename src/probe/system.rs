//! Metadata about the machine and the software measured, stored in every
//! run file so that a number can be traced to where it came from.

use crate::schema::metadata::Metadata;

/// The clock every CPU timing uses (`std::time::Instant`); GPU records
/// time kernels with CUDA events and say so in their `timed_window`.
pub const TIMER: &str = "std::time::Instant (CLOCK_MONOTONIC on Linux); GPU kernels: CUDA events";

/// Host facts without GPU probing (cheap).
pub struct Host {
    /// CPU model.
    pub cpu: String,
    /// Logical cores.
    pub cores_logical: usize,
    /// Physical cores.
    pub cores_physical: Option<usize>,
    /// RAM in MiB.
    pub memory_total_mb: u64,
}

/// Reads CPU and memory facts.
pub fn host() -> Host {
    use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};
    let sys = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let cpu = sys
        .cpus()
        .first()
        .map(|c| c.brand().trim().to_string())
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "unknown CPU".into());
    Host {
        cpu,
        cores_logical: available_cores(),
        cores_physical: System::physical_core_count(),
        memory_total_mb: sys.total_memory() / (1024 * 1024),
    }
}

/// Collects the metadata; `gpu` is the result of a GPU probe if one was made.
pub fn collect(gpu: Option<&crate::probe::gpu::GpuProbe>) -> Metadata {
    let h = host();
    let nvidia_driver = gpu
        .filter(|g| g.nvml.present)
        .map(|g| g.nvml.detail.trim_start_matches("driver ").to_string());
    let hostname = sysinfo::System::host_name().unwrap_or_else(|| "unknown".into());
    Metadata {
        slurm: crate::probe::slurm::current(&hostname),
        date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        hostname,
        cpu: h.cpu,
        cores_logical: h.cores_logical,
        cores_physical: h.cores_physical,
        memory_total_mb: h.memory_total_mb,
        os: sysinfo::System::long_os_version().unwrap_or_else(|| std::env::consts::OS.into()),
        kernel: sysinfo::System::kernel_version().unwrap_or_else(|| "unknown".into()),
        arch: std::env::consts::ARCH.into(),
        liboqs_version: crate::probe::libraries::liboqs_version(),
        openssl_version: openssl::version::version().to_string(),
        pqcprof_version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("PQCPROF_GIT_COMMIT").into(),
        rustc: env!("PQCPROF_RUSTC").into(),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .into(),
        cuda_driver: gpu
            .filter(|g| g.driver.present)
            .map(|g| g.driver.detail.clone()),
        nvidia_driver,
        gpus: gpu.map(|g| g.gpus.clone()).unwrap_or_default(),
        c_compiler: env!("PQCPROF_CC").into(),
        openssl_providers: crate::probe::libraries::openssl_providers(),
        timer: TIMER.into(),
        machine_load: None,
        tsc_mhz: crate::probe::tsc::mhz(),
    }
}

/// Watches how busy the machine is from the start of a run: other
/// processes' CPU time and the load average (`/proc`, Linux).
#[derive(Debug, Clone)]
pub struct LoadMeter {
    started: std::time::Instant,
    stat: Option<(u64, u64)>,
    own: Option<u64>,
    load: Option<f64>,
}

/// (busy, total) jiffies of all CPUs, from the first line of `/proc/stat`.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<u64> = text
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest is in user).
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    Some((busy, busy + at(3) + at(4)))
}

/// The fields of a `/proc/PID/stat` line after the command name (which is
/// in parentheses and may hold spaces): state first.
fn stat_fields(text: &str) -> Option<Vec<&str>> {
    Some(text[text.rfind(')')? + 2..].split_whitespace().collect())
}

/// CPU jiffies of pqcprof's own work: this process's, its waited-for
/// children's (utime, stime, cutime, cstime of `/proc/self/stat`), and its
/// live children's, such as the worker processes plugins run in and
/// `--fresh-process` runs, whose time is pqcprof's, not another program's.
fn own_jiffies() -> Option<u64> {
    // utime is field 14 of the line, index 11 after the name and state;
    // the parent's pid field 4, index 1.
    let times =
        |f: &[&str]| -> Option<u64> { (11..15).map(|i| f.get(i)?.parse::<u64>().ok()).sum() };
    let me = std::process::id().to_string();
    let mut total = times(&stat_fields(
        &std::fs::read_to_string("/proc/self/stat").ok()?,
    )?)?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(f) = stat_fields(&text) {
            if f.get(1) == Some(&me.as_str()) {
                total += times(&f).unwrap_or(0);
            }
        }
    }
    Some(total)
}

fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl LoadMeter {
    /// Starts watching now.
    pub fn start() -> Self {
        LoadMeter {
            started: std::time::Instant::now(),
            stat: cpu_jiffies(),
            own: own_jiffies(),
            load: load_average(),
        }
    }

    /// The machine's load from the start until now.
    pub fn now(&self) -> crate::schema::metadata::MachineLoad {
        let other = match (self.stat, cpu_jiffies(), self.own, own_jiffies()) {
            (Some((b0, t0)), Some((b1, t1)), Some(o0), Some(o1)) if t1 > t0 => {
                let busy = b1.saturating_sub(b0) as f64;
                let own = o1.saturating_sub(o0) as f64;
                Some(((busy - own).max(0.0) / (t1 - t0) as f64 * 100.0).min(100.0))
            }
            _ => None,
        };
        crate::schema::metadata::MachineLoad {
            seconds: self.started.elapsed().as_secs_f64(),
            other_processes_cpu_pct: other,
            load_average_start: self.load,
            load_average_end: load_average(),
            cores: available_cores(),
        }
    }
}

/// Number of logical cores, at least one.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sh -c SCRIPT` spinning for two seconds, started as this process's
    /// child (`own`) or as another program's (the child's child, left to
    /// run when the child exits); its pid. The shell spins on a builtin,
    /// so the CPU time is its own (a loop that ran `date` each turn spent
    /// it in short-lived children, and on a loaded machine the shell
    /// itself could show no time after a second); a background `sleep`
    /// ends it after two seconds should the test not.
    #[cfg(target_os = "linux")]
    fn spin(own: bool) -> (u32, Option<std::process::Child>) {
        const SPIN: &str = "(sleep 2; kill $$) 2>/dev/null & while :; do :; done";
        if own {
            let c = std::process::Command::new("sh")
                .args(["-c", SPIN])
                .spawn()
                .unwrap();
            return (c.id(), Some(c));
        }
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("sh -c '{SPIN}' >/dev/null 2>&1 & echo $!")])
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        (pid, None)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn another_busy_process_shows_in_the_machine_load() {
        let meter = LoadMeter::start();
        // Another program spinning for two seconds, measured after 1.5 s.
        let (pid, _) = spin(false);
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let load = meter.now();
        // SAFETY: a plain system call on the spinning shell started above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let other = load.other_processes_cpu_pct.expect("readable on Linux");
        // At least a fifth of one core's share, however loaded the machine.
        let one_core = 100.0 / load.cores as f64;
        assert!(other >= 0.2 * one_core, "{load:?}");
        assert!(load.seconds >= 1.4 && load.load_average_start.is_some());
    }

    /// A live child (a plugin's worker, a `--fresh-process` run) is
    /// pqcprof's own work: its CPU time is in `own_jiffies`, so the meter
    /// never calls it another program's.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_childs_time_is_pqcprofs_own() {
        let before = own_jiffies().unwrap();
        let (pid, child) = spin(true);
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let f = stat_fields(&text).unwrap();
        let childs: u64 = (11..13).map(|i| f[i].parse::<u64>().unwrap()).sum();
        let after = own_jiffies().unwrap();
        // SAFETY: a plain system call on the spinning shell started above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let _ = child.map(|mut c| c.wait());
        assert!(childs > 0, "the child spun for a second: {text}");
        assert!(
            after - before >= childs,
            "own time grew by {} jiffies, the child alone used {childs}",
            after - before
        );
    }

    #[test]
    fn a_busy_machine_says_why() {
        let mut l = crate::schema::metadata::MachineLoad {
            seconds: 10.0,
            other_processes_cpu_pct: Some(3.0),
            load_average_start: Some(0.5),
            load_average_end: Some(1.2),
            cores: 2,
        };
        assert_eq!(l.busy(), None);
        l.other_processes_cpu_pct = Some(63.0);
        l.load_average_end = Some(8.8);
        let why = l.busy().unwrap();
        assert!(
            why.contains("63%") && why.contains("8.8 on 2 cores"),
            "{why}"
        );
    }
}
