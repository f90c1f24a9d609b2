//! A compatible NVRTC when several are installed.
//!
//! NVRTC emits PTX and machine code for its own CUDA version, which a
//! driver for an older CUDA major version refuses at module load. cudarc
//! loads the first NVRTC the dynamic loader finds by name (`libnvrtc.so`,
//! then `libnvrtc.so.13`, `.12`, ...), so a CUDA 13 NVRTC anywhere on the
//! path wins over a CUDA 12 one even on a CUDA 12 driver. When the NVRTC so
//! found is too new for the driver and a compatible one is installed, the
//! `pqcprof` binary starts itself again with that one first: a private
//! folder holding `libnvrtc.so` (a link to the chosen library) and the
//! chosen library's own folder lead `LD_LIBRARY_PATH`. A process cannot
//! change what its loader searches once started, hence the restart; it
//! happens at most once (`PQCPROF_NVRTC_CHOSEN` marks the second start).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set in the restarted process: the NVRTC chosen, and why.
pub const CHOSEN_ENV: &str = "PQCPROF_NVRTC_CHOSEN";
/// Set in the restarted process: the private folder of the link, removed
/// once NVRTC is loaded.
const LINK_DIR_ENV: &str = "PQCPROF_NVRTC_LINK_DIR";

static RESTART_ALLOWED: AtomicBool = AtomicBool::new(false);

/// Lets the probe restart the process with a compatible NVRTC: only the
/// `pqcprof` binary calls this (a test binary or a library user is never
/// restarted; it gets `check`'s message instead).
pub fn allow_restart() {
    RESTART_ALLOWED.store(true, Ordering::SeqCst);
}

/// An NVRTC library file with its CUDA major version (from its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The library file.
    pub file: PathBuf,
    /// Its CUDA major version.
    pub major: u32,
}

/// The CUDA major version in an NVRTC file name: `libnvrtc.so.12`,
/// `libnvrtc.so.12.9.86` give 12; the builtins library and unversioned
/// names give `None`.
pub fn major_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("libnvrtc.so.")?;
    rest.split('.').next()?.parse().ok()
}

/// Folders an NVRTC may be in, in the order searched: `LD_LIBRARY_PATH`,
/// the CUDA toolkits (`$CUDA_HOME`, `/usr/local/cuda`, then
/// `/usr/local/cuda-*` newest first), pip's `nvidia-cuda-nvrtc` packages in
/// the virtual environments pqcprof uses (`$PQCPROF_VENV`, `$VIRTUAL_ENV`,
/// `.venv` here), and the system library folder.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        dirs.push(PathBuf::from(h).join("lib64"));
    }
    dirs.push("/usr/local/cuda/lib64".into());
    let mut toolkits: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cuda-"))
        })
        .collect();
    toolkits.sort();
    toolkits.reverse();
    dirs.extend(toolkits.into_iter().map(|t| t.join("lib64")));
    for venv in ["PQCPROF_VENV", "VIRTUAL_ENV"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain(std::iter::once(PathBuf::from(".venv")))
    {
        for site in std::fs::read_dir(venv.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let nvidia = site.path().join("site-packages/nvidia");
            for sub in ["cu13", "cu12", "cuda_nvrtc"] {
                dirs.push(nvidia.join(sub).join("lib"));
            }
        }
    }
    dirs.push("/usr/lib/x86_64-linux-gnu".into());
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| !d.as_os_str().is_empty() && seen.insert(d.clone()));
    dirs
}

/// The NVRTC libraries in `dirs`, in search order (within a folder, by
/// name), each file once.
pub fn candidates(dirs: &[PathBuf]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = vec![];
    for d in dirs {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| major_of(n).is_some())
            .collect();
        names.sort();
        for n in names {
            let file = d.join(&n);
            let real = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            if out
                .iter()
                .any(|c| std::fs::canonicalize(&c.file).unwrap_or_else(|_| c.file.clone()) == real)
            {
                continue;
            }
            if let Some(major) = major_of(&n) {
                out.push(Candidate { file, major });
            }
        }
    }
    out
}

/// The NVRTC to use with a driver for CUDA `driver_major`: the newest
/// whose major version it supports, the first found among equals.
pub fn choose(cands: &[Candidate], driver_major: u32) -> Option<&Candidate> {
    let best = cands
        .iter()
        .filter(|c| c.major <= driver_major)
        .map(|c| c.major)
        .max()?;
    cands.iter().find(|c| c.major == best)
}

/// What the restarted process says about its NVRTC, for `check` and the
/// run file's probe: `None` in a process that was not restarted.
pub fn chosen_note() -> Option<String> {
    std::env::var(CHOSEN_ENV).ok().filter(|s| !s.is_empty())
}

/// Removes the restart's private link folder once NVRTC is loaded (the
/// library stays mapped; nothing else reads the folder).
pub fn forget_link_dir() {
    if let Some(d) = std::env::var_os(LINK_DIR_ENV) {
        let d = PathBuf::from(d);
        let _ = std::fs::remove_file(d.join("libnvrtc.so"));
        let _ = std::fs::remove_dir(&d);
    }
}

/// Called by the probe before NVRTC is loaded, with the version of the one
/// the loader gives (`loaded`) and the driver's CUDA API version. When that
/// NVRTC is too new for the driver, another installed one is not, and this
/// is the `pqcprof` binary not yet restarted, it starts itself again with
/// the compatible NVRTC first on the loader path (and does not return);
/// otherwise it returns, and `check` says what to install.
pub fn restart_if_incompatible(loaded: Option<(i32, i32)>, driver_api: Option<u32>) {
    let allowed = RESTART_ALLOWED.load(Ordering::SeqCst);
    let restarted = std::env::var_os(CHOSEN_ENV).is_some();
    let Some((major, minor, driver_major)) = restart_wanted(loaded, driver_api, allowed, restarted)
    else {
        return;
    };
    let cands = candidates(&search_dirs());
    let Some(pick) = choose(&cands, driver_major) else {
        return;
    };
    let Err(e) = restart_with(pick, &format!("NVRTC {major}.{minor} found first needs a driver for CUDA {major}, this one supports CUDA {driver_major}")) else {
        return;
    };
    log::warn!(
        "could not restart with the compatible NVRTC {}: {e:#}",
        pick.file.display()
    );
}

/// When the NVRTC the loader gives (`loaded`, major and minor) is too new
/// for the driver (`driver_api`, e.g. 12080) and a restart may look for
/// another, the NVRTC's version and the driver's CUDA major version: only
/// in the `pqcprof` binary (`allowed`), never once restarted, never when
/// either version is unknown.
fn restart_wanted(
    loaded: Option<(i32, i32)>,
    driver_api: Option<u32>,
    allowed: bool,
    restarted: bool,
) -> Option<(i32, i32, u32)> {
    let (Some((major, minor)), Some(api)) = (loaded, driver_api) else {
        return None;
    };
    let driver_major = api / 1000;
    if major < 0 || major as u32 <= driver_major || !allowed || restarted {
        return None;
    }
    Some((major, minor, driver_major))
}

/// Starts this executable again, same arguments, with `pick` first on the
/// loader path. Returns only on failure.
fn restart_with(pick: &Candidate, why: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::process::CommandExt;
    let link_dir = private_dir()?;
    std::os::unix::fs::symlink(&pick.file, link_dir.join("libnvrtc.so"))
        .with_context(|| format!("linking {} in {}", pick.file.display(), link_dir.display()))?;
    let lib_dir = pick.file.parent().unwrap_or(Path::new("."));
    let mut path = vec![link_dir.clone(), lib_dir.to_path_buf()];
    if let Some(v) = std::env::var_os("LD_LIBRARY_PATH") {
        path.extend(std::env::split_paths(&v));
    }
    let note = format!(
        "{} (CUDA {}), chosen because the {why}",
        pick.file.display(),
        pick.major
    );
    log::info!("using NVRTC {note}");
    let exe = std::env::current_exe().context("finding this executable")?;
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", std::env::join_paths(path)?)
        .env(CHOSEN_ENV, note)
        .env(LINK_DIR_ENV, &link_dir)
        .exec();
    let _ = std::fs::remove_dir_all(&link_dir);
    Err(err).context("exec")
}

/// A new folder only this user can use, under the temporary folder.
fn private_dir() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let d = base.join(format!("pqcprof-nvrtc-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("no free folder name under {}", base.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_come_from_the_file_name() {
        assert_eq!(major_of("libnvrtc.so.12"), Some(12));
        assert_eq!(major_of("libnvrtc.so.13.0.88"), Some(13));
        assert_eq!(major_of("libnvrtc.so"), None);
        assert_eq!(major_of("libnvrtc-builtins.so.13.5"), None);
        assert_eq!(major_of("libnvrtc.so.x"), None);
    }

    #[test]
    fn the_newest_the_driver_supports_first_found_among_equals() {
        let c = |f: &str, major| Candidate {
            file: f.into(),
            major,
        };
        let found = [
            c("/a/libnvrtc.so.13", 13),
            c("/b/libnvrtc.so.12", 12),
            c("/c/libnvrtc.so.11", 11),
            c("/d/libnvrtc.so.12", 12),
        ];
        assert_eq!(
            choose(&found, 12).unwrap().file,
            Path::new("/b/libnvrtc.so.12")
        );
        assert_eq!(
            choose(&found, 13).unwrap().file,
            Path::new("/a/libnvrtc.so.13")
        );
        assert_eq!(choose(&found, 11).unwrap().major, 11);
        assert_eq!(choose(&found, 10), None);
    }

    #[test]
    fn candidates_are_found_in_search_order_each_file_once() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("libnvrtc.so.13"), b"").unwrap();
        std::fs::write(a.join("libnvrtc-builtins.so.13.5"), b"").unwrap();
        std::fs::write(b.join("libnvrtc.so.12.9.86"), b"").unwrap();
        std::os::unix::fs::symlink(b.join("libnvrtc.so.12.9.86"), b.join("libnvrtc.so.12"))
            .unwrap();
        let found = candidates(&[b.clone(), a.clone(), b.clone()]);
        let names: Vec<(String, u32)> = found
            .iter()
            .map(|c| {
                (
                    c.file.strip_prefix(d.path()).unwrap().display().to_string(),
                    c.major,
                )
            })
            .collect();
        // The link and its target are one library, listed once.
        assert_eq!(
            names,
            [
                ("b/libnvrtc.so.12".to_string(), 12),
                ("a/libnvrtc.so.13".to_string(), 13)
            ]
        );
    }

    #[test]
    fn no_restart_outside_the_binary_or_when_compatible() {
        let (nvrtc13, cuda12) = (Some((13, 0)), Some(12080));
        // The one case that restarts: too new, in the binary, not yet restarted.
        assert_eq!(
            restart_wanted(nvrtc13, cuda12, true, false),
            Some((13, 0, 12))
        );
        // Outside the binary (a test binary, a library user), or restarted once.
        assert_eq!(restart_wanted(nvrtc13, cuda12, false, false), None);
        assert_eq!(restart_wanted(nvrtc13, cuda12, true, true), None);
        // Compatible: older or the driver's own major version.
        assert_eq!(restart_wanted(Some((12, 9)), cuda12, true, false), None);
        assert_eq!(restart_wanted(nvrtc13, Some(13000), true, false), None);
        // A version unknown or nonsense.
        assert_eq!(restart_wanted(None, cuda12, true, false), None);
        assert_eq!(restart_wanted(nvrtc13, None, true, false), None);
        assert_eq!(restart_wanted(Some((-1, 0)), cuda12, true, false), None);
        // This test binary never allowed a restart: the entry point returns.
        assert!(!RESTART_ALLOWED.load(Ordering::SeqCst));
        restart_if_incompatible(nvrtc13, cuda12);
    }
}
