//! Compiling within a command's time (`--deadline`, `--max-seconds`): the
//! kernels not in the cache are compiled each in a process of its own
//! (`pqcprof kernels --prebuild`), or by another process already at it,
//! and the command waits for them until its bound; a unit not ready by then
//! is a [`NotInTime`] error while its compile goes on and writes the cache
//! ([`super::kernel_cache`]) for the next run.

use super::kernel_cache::{
    cache_dir, cache_file, cache_file_stem, compile_cached_in, compile_units_cached, lookup,
    read_cached, say_why_compiling, Origin, UnitBuild,
};
use super::kernels::*;
use crate::core::catalog::Family;
use std::path::{Path, PathBuf};

/// What the records of a unit whose kernels were not ready by the
/// deadline say (and what `scripts/gpu-check` looks for).
pub const NOT_IN_TIME: &str = "not compiled in time";

/// The time a command gives its kernels: the instant, and the option that
/// set it (`--deadline 20`), for the message when it runs out.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileBound {
    /// When the command stops waiting.
    pub by: std::time::Instant,
    /// The option that set it, in words.
    pub what: String,
}

/// A unit whose compile did not end within the command's time: NVRTC goes
/// on in a process of its own, which writes the image into the cache.
#[derive(Debug, thiserror::Error)]
#[error("the {} kernels for {arch} were {NOT_IN_TIME} ({what}, {waited:.1} s waited): NVRTC goes on in {}, which writes them to {} for the next run", unit_name(*.unit), .compiler, .dir.display())]
pub struct NotInTime {
    /// The unit.
    pub unit: Family,
    /// Its architecture.
    pub arch: String,
    /// The option whose time ran out.
    pub what: String,
    /// Seconds this command waited.
    pub waited: f64,
    /// Who compiles: `process N`, or another pqcprof.
    pub compiler: String,
    /// The cache folder it writes to.
    pub dir: PathBuf,
}

/// Whether another process holds the lock of the entry `stem` (it is
/// compiling it).
fn lock_held(stem: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::OpenOptions::new()
        .append(true)
        .open(cache_file(stem, ".lock"))
    else {
        return false;
    };
    // SAFETY: plain system calls on a descriptor `file` owns.
    unsafe {
        if libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 {
            libc::flock(file.as_raw_fd(), libc::LOCK_UN);
            return false;
        }
    }
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// A unit this command waits for: compiled by a child process
/// (`pqcprof kernels --prebuild`) in its own process group, so a signal to
/// this command's group (Ctrl-C, `timeout`) does not reach it and a compile
/// once begun is never lost; or by another process that holds its lock.
struct Pending {
    unit: Family,
    stem: PathBuf,
    /// Our compiling child; `None` while another process compiles.
    child: Option<std::process::Child>,
}

/// Removes the messages file of a compile run in a child process
/// (`<stem>.compile.txt`) once its entry is written: called by the child
/// itself, whose parent may have stopped waiting.
pub fn clear_compile_log(dir: &Path, unit: Family, arch: &str, nvrtc: (i32, i32)) {
    let stem = dir.join(cache_file_stem(unit, arch, nvrtc));
    let _ = std::fs::remove_file(cache_file(&stem, ".compile.txt"));
}

/// Starts `pqcprof kernels --prebuild DIR --arch ARCH --alg UNIT`, its
/// messages into `<stem>.compile.txt`.
fn spawn_compile(
    dir: &Path,
    unit: Family,
    arch: &str,
    stem: &Path,
) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(dir)?;
    let err = std::fs::File::create(cache_file(stem, ".compile.txt"))?;
    let child = std::process::Command::new(std::env::current_exe()?)
        .args(["kernels", "--prebuild"])
        .arg(dir)
        .args(["--arch", arch, "--alg", unit_name(unit)])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .process_group(0)
        .spawn()?;
    log::info!(
        "compiling the {} kernels for {arch} in process {}, which writes them to {}",
        unit_name(unit),
        child.id(),
        dir.display()
    );
    Ok(child)
}

/// The kernels of `units` for `arch`, within `bound` when there is one:
/// images already in the cache are read; the others are compiled each in
/// a child process (in parallel), or by another process already at it,
/// and this command waits for them until `bound.by`. A unit not ready by
/// then is a [`NotInTime`] error, and its compile goes on and writes the
/// cache. Without a bound, a cache or NVRTC, as `compile_units_cached`. In
/// the order given. The caller bounds only architectures the child
/// (`kernels --prebuild`) knows.
pub fn obtain_units(
    units: &[Family],
    arch: &str,
    bound: Option<&CompileBound>,
) -> Vec<anyhow::Result<UnitBuild>> {
    let dir = cache_dir();
    let version = crate::probe::gpu::nvrtc_version();
    let (Some(bound), Some(dir), Some(version)) = (bound, dir, version) else {
        return compile_units_cached(units, arch)
            .into_iter()
            .map(|r| r.map_err(anyhow::Error::from))
            .collect();
    };
    let t0 = std::time::Instant::now();
    let built = |compiled, origin| UnitBuild {
        compiled,
        origin,
        seconds: t0.elapsed().as_secs_f64(),
    };
    enum Slot {
        Done(anyhow::Result<UnitBuild>),
        Waiting(Pending),
    }
    let mut slots: Vec<Slot> = units
        .iter()
        .map(|&unit| {
            if let Some((compiled, origin)) = lookup(&dir, unit, arch, Some(version)) {
                return Slot::Done(Ok(built(compiled, origin)));
            }
            let stem = dir.join(cache_file_stem(unit, arch, version));
            if lock_held(&stem) {
                log::info!(
                    "another pqcprof is compiling the {} kernels ({}); waiting for it up to {:.0} s ({})",
                    unit_name(unit),
                    stem.display(),
                    bound.by.saturating_duration_since(t0).as_secs_f64(),
                    bound.what
                );
                return Slot::Waiting(Pending {
                    unit,
                    stem,
                    child: None,
                });
            }
            say_why_compiling(&dir, unit, arch);
            match spawn_compile(&dir, unit, arch, &stem) {
                Ok(c) => Slot::Waiting(Pending {
                    unit,
                    stem,
                    child: Some(c),
                }),
                // A cache that cannot be written: compile here, unbounded.
                Err(e) => {
                    log::warn!(
                        "cannot compile the {} kernels in a process of their own ({e}); compiling here, past {} if need be",
                        unit_name(unit),
                        bound.what
                    );
                    Slot::Done(
                        compile_cached_in(Some(&dir), unit, arch)
                            .map(|(c, o)| built(c, o))
                            .map_err(anyhow::Error::from),
                    )
                }
            }
        })
        .collect();
    loop {
        let mut waiting = false;
        for slot in &mut slots {
            let Slot::Waiting(p) = slot else { continue };
            if let Some(done) = pending_result(p, &dir, arch) {
                *slot = Slot::Done(done.map(|(c, o)| built(c, o)));
            } else if std::time::Instant::now() >= bound.by {
                *slot = Slot::Done(Err(NotInTime {
                    unit: p.unit,
                    arch: arch.into(),
                    what: bound.what.clone(),
                    waited: t0.elapsed().as_secs_f64(),
                    compiler: match &p.child {
                        Some(c) => format!("process {}", c.id()),
                        None => "another pqcprof".into(),
                    },
                    dir: dir.clone(),
                }
                .into()));
            } else {
                waiting = true;
            }
        }
        if !waiting {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    slots
        .into_iter()
        .map(|s| match s {
            Slot::Done(r) => r,
            Slot::Waiting(_) => unreachable!("every wait ended above"),
        })
        .collect()
}

/// The kernels `p` waits for, once written (compiled now when our child
/// made them, else read from the cache); the failure, once our child
/// exited without writing them; `None` while the compile runs. When
/// another process was compiling and let go of the lock without writing
/// them, our own child takes over.
fn pending_result(
    p: &mut Pending,
    dir: &Path,
    arch: &str,
) -> Option<anyhow::Result<(Compiled, Origin)>> {
    // The machine code is written last, atomically: read the entry only
    // once it is there.
    let cubin = cache_file(&p.stem, ".cubin");
    let read = || {
        cubin
            .exists()
            .then(|| read_cached(&p.stem, p.unit, arch))
            .flatten()
    };
    if let Some(hit) = read() {
        return Some(Ok(match &mut p.child {
            Some(c) => {
                let _ = c.try_wait();
                (hit, Origin::Compiled)
            }
            None => (hit, Origin::Cache(cubin.clone())),
        }));
    }
    let Some(child) = &mut p.child else {
        if !lock_held(&p.stem) && read().is_none() {
            match spawn_compile(dir, p.unit, arch, &p.stem) {
                Ok(c) => p.child = Some(c),
                Err(e) => return Some(Err(e.into())),
            }
        }
        return None;
    };
    let status = child.try_wait().ok()??;
    // Written between the two looks.
    if let Some(hit) = read() {
        return Some(Ok((hit, Origin::Compiled)));
    }
    let log = std::fs::read_to_string(cache_file(&p.stem, ".compile.txt")).unwrap_or_default();
    Some(Err(CompileFailure {
        unit: p.unit,
        arch: arch.into(),
        message: format!(
            "the compiling process ({}) ended ({status}) without writing {}",
            child.id(),
            cubin.display()
        ),
        log,
    }
    .into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pqcprof-bounded-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_lock_is_held_only_while_another_holder_has_it() {
        use std::os::fd::AsRawFd;
        let dir = scratch("lock");
        let stem = dir.join("native-mlkem-sm_90-nvrtc13.0-0");
        assert!(!lock_held(&stem), "no lock file: nobody compiles");
        let holder = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(cache_file(&stem, ".lock"))
            .unwrap();
        assert!(!lock_held(&stem), "a lock file nobody holds");
        // SAFETY: a plain system call on a descriptor `holder` owns.
        assert_eq!(
            unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        assert!(lock_held(&stem), "held through another open file");
        drop(holder);
        assert!(!lock_held(&stem), "let go when its holder closed it");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_child_clears_its_compile_log_once_done() {
        let dir = scratch("log");
        let stem = dir.join(cache_file_stem(Family::MlKem, "sm_90", (13, 0)));
        let log = cache_file(&stem, ".compile.txt");
        std::fs::write(&log, "compiling").unwrap();
        clear_compile_log(&dir, Family::MlKem, "sm_90", (12, 8));
        assert!(log.exists(), "another NVRTC's log is not this one's");
        clear_compile_log(&dir, Family::MlKem, "sm_90", (13, 0));
        assert!(!log.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn not_in_time_names_the_unit_the_option_and_who_compiles() {
        let e = NotInTime {
            unit: Family::MlDsa,
            arch: "sm_90".into(),
            what: "--deadline 20".into(),
            waited: 19.96,
            compiler: "process 4242".into(),
            dir: PathBuf::from("/cache/ptx"),
        }
        .to_string();
        for part in [
            NOT_IN_TIME,
            "sm_90",
            "--deadline 20",
            "20.0 s",
            "process 4242",
            "/cache/ptx",
        ] {
            assert!(e.contains(part), "{part}: {e}");
        }
        assert!(e.contains(unit_name(Family::MlDsa)), "{e}");
    }
}
