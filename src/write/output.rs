//! Output-path safety: every file pqcprof leaves is written to a
//! temporary file in the same folder and renamed over the target, so a
//! reader (or a crash, or Ctrl-C) never sees half a file; folders are
//! checked for writability before any work.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
///
/// Never replaces what is not a regular file: through a symbolic link it
/// writes the file the link points at; a device or FIFO (`/dev/stdout`,
/// `/dev/full`, a named pipe) is written directly, its errors reported; a
/// folder is refused.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        let kind = m.file_type();
        if kind.is_symlink() {
            return write_atomic(&link_target(path)?, bytes);
        }
        if kind.is_dir() {
            anyhow::bail!("cannot write {}: it is a folder", path.display());
        }
        if !kind.is_file() {
            return write_through(path, bytes);
        }
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create folder {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}{TMP_MARK}{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `bytes` as the file `name` of the folder `dir`, replacing
/// whatever entry holds that name there: a symbolic link is replaced by
/// the file, never written through, so nothing outside `dir` changes (for
/// files pqcprof owns by name, as the man pages). A folder of that name is
/// refused. The write is atomic (temporary file, fsync, rename).
pub fn replace_in_folder(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        anyhow::bail!("cannot write {}: it is a folder", path.display());
    }
    let tmp = dir.join(format!(".{name}{TMP_MARK}{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        // rename(2) replaces the entry `path`, a link included, not the
        // file a link leads to.
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Where the symbolic link `path` leads, after every link on the way; a
/// dangling link's target (relative to the link's folder) is still a
/// place to write.
fn link_target(path: &Path) -> anyhow::Result<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Ok(p);
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(t) => p = p.parent().unwrap_or(Path::new(".")).join(t),
            Err(_) => return Ok(p),
        }
    }
    anyhow::bail!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )
}

/// Writes into an existing non-regular file (a device, a FIFO) in place.
fn write_through(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// What marks a temporary file: `.NAME.tmp-PID`.
const TMP_MARK: &str = ".tmp-";

/// Removes the hidden temporary files (`.NAME.tmp-PID`, and the writability
/// probes) that a process killed by SIGKILL left in `dir` and the folders
/// below it, when their process is gone. Returns how many it removed.
pub fn remove_stale_temps(dir: &Path) -> usize {
    fn walk(dir: &Path, depth: usize, removed: &mut usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && depth > 0 {
                walk(&path, depth - 1, removed);
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = stale_pid(&name) {
                if !process_alive(pid) && std::fs::remove_file(&path).is_ok() {
                    *removed += 1;
                }
            }
        }
    }
    let mut removed = 0;
    walk(dir, 3, &mut removed);
    removed
}

/// The pid in a temporary file's name written by pqcprof, if it is one.
fn stale_pid(name: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    let digits = name
        .rsplit_once(TMP_MARK)
        .or_else(|| name.rsplit_once(PROBE_MARK))
        .map(|(_, d)| d)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether process `pid` exists (or cannot be told apart from one that does).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The time stamp of a run: to the microsecond, UTC.
fn stamp_now() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ").to_string()
}

/// Reserves a new file `PREFIX STAMP SUFFIX` in `dir`, created exclusively
/// so no other run, in this process or another, gets the same name; when
/// the name is taken, `-2`, `-3`... follow the stamp. The file appears
/// already holding `initial` (written to a temporary file, then linked to
/// the name), so a process killed at any moment never leaves an empty run
/// file behind. Returns the path and the stamp used, for names derived
/// from it (a sweep's CSVs), which are then unique too.
pub fn reserve(
    dir: &Path,
    prefix: &str,
    suffix: &str,
    initial: &[u8],
) -> anyhow::Result<(PathBuf, String)> {
    let base = stamp_now();
    let tmp = dir.join(format!(
        ".{prefix}{base}{suffix}{TMP_MARK}{}",
        std::process::id()
    ));
    (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(initial)?;
        f.sync_all()
    })()
    .with_context(|| format!("cannot create {}", tmp.display()))?;
    let result = (|| {
        for n in 1..1000 {
            let stamp = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let path = dir.join(format!("{prefix}{stamp}{suffix}"));
            // A hard link fails when the name exists: exclusive, like
            // O_EXCL, and the file is whole from its first moment.
            match std::fs::hard_link(&tmp, &path) {
                Ok(()) => return Ok((path, stamp)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()))
                }
            }
        }
        anyhow::bail!(
            "cannot find a free name {prefix}{base}-N{suffix} in {}",
            dir.display()
        )
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// An exclusive lock on a folder's fixed-name files (the cuPQC-shaped
/// views), held while it lives.
pub struct DirLock {
    _file: std::fs::File,
}

/// Takes `dir`'s lock without waiting; `None` when another process holds
/// it (or it cannot be taken), so the caller can say so instead of
/// overwriting that process's files.
pub fn try_lock(dir: &Path) -> Option<DirLock> {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(".pqcprof.lock"))
        .ok()?;
    // SAFETY: flock on a descriptor this function owns; the lock goes with it.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    (r == 0).then_some(DirLock { _file: file })
}

/// `value` as pretty JSON, ending in a newline: what [`write_json`] writes.
pub fn json_bytes<T: serde::Serialize>(value: &T) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Serialises `value` as pretty JSON and writes it atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    write_atomic(path, &json_bytes(value)?)
}

/// What marks a writability probe: `.pqcprof-write-test-PID`.
const PROBE_MARK: &str = "-write-test-";

/// Fails early, before anything is measured, when `dir` cannot hold
/// results; removes what killed runs left there first.
pub fn ensure_writable_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("output folder {} cannot be created", dir.display()))?;
    let removed = remove_stale_temps(dir);
    if removed > 0 {
        log::info!(
            "removed {removed} temporary file(s) that killed runs left in {}",
            dir.display()
        );
    }
    probe_writable(dir)?;
    log::debug!("output folder {} is writable", dir.display());
    Ok(dir.to_path_buf())
}

/// Creates and removes a probe file in the existing folder `dir`.
fn probe_writable(dir: &Path) -> anyhow::Result<()> {
    let probe = dir.join(format!(".pqcprof{PROBE_MARK}{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("output folder {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Whether `path` is the same file as `other` (both exist, one inode).
fn same_file(path: &Path, other: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), std::fs::metadata(other)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `path` is a run file (its opening names the run-file format).
fn is_run_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    String::from_utf8_lossy(&head[..n]).contains(&format!("\"{RUN_FORMAT}\""))
}

/// The `format` field of every run file.
pub const RUN_FORMAT: &str = "pqcprof-run";

/// Checks, before any work, that a file can be written at `path` without
/// destroying anything: not a folder, none of `inputs`, not a run file,
/// and its folder writable. A device or FIFO passes (it is written through).
pub fn check_output_file(path: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    check_output(path, inputs, &|_| false)
}

/// Like [`check_output_file`] for `merge`: an earlier merged run file
/// (one with a `cluster` block) that is none of `inputs` may be replaced;
/// any other run file, a rank's included, may not.
pub fn check_merged_output(path: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    check_output(path, inputs, &is_merged_run_file)
}

/// Whether `path` is a run file written by `merge` (a regular file of at
/// most the size a run file may have, with a `cluster` block).
fn is_merged_run_file(path: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Merged {
        cluster: Option<serde::de::IgnoredAny>,
    }
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    if !m.is_file() || m.len() > 512 * 1024 * 1024 {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    serde_json::from_reader::<_, Merged>(std::io::BufReader::new(f))
        .is_ok_and(|m| m.cluster.is_some())
}

fn check_output(
    path: &Path,
    inputs: &[PathBuf],
    may_replace: &dyn Fn(&Path) -> bool,
) -> anyhow::Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => link_target(path)?,
        _ => path.to_path_buf(),
    };
    if let Ok(m) = std::fs::metadata(&target) {
        if m.is_dir() {
            anyhow::bail!("cannot write {}: it is a folder", path.display());
        }
        if !m.is_file() {
            return Ok(());
        }
        if let Some(input) = inputs.iter().find(|i| same_file(&target, i)) {
            anyhow::bail!(
                "refusing to write over {}: it is an input ({}); choose another output path",
                path.display(),
                input.display()
            );
        }
        if is_run_file(&target) && !may_replace(&target) {
            anyhow::bail!(
                "refusing to write over {}: it is a run file; choose another output path",
                path.display()
            );
        }
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(anyhow::Error::from)
        .and_then(|_| probe_writable(dir))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_in_its_folder_replaces_a_link_not_its_target() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside.txt");
        std::fs::write(&outside, b"keep").unwrap();
        let dir = d.path().join("pages");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("page.1")).unwrap();
        let path = replace_in_folder(&dir, "page.1", b"new").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        std::fs::create_dir(dir.join("sub.1")).unwrap();
        let e = replace_in_folder(&dir, "sub.1", b"x").unwrap_err();
        assert!(format!("{e:#}").contains("it is a folder"), "{e:#}");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn unwritable_dir_is_reported() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let err = ensure_writable_dir(&file.join("sub")).unwrap_err();
        assert!(format!("{err:#}").contains("cannot be created"));
    }

    #[test]
    fn one_holder_of_a_folders_lock_at_a_time() {
        let d = tempfile::tempdir().unwrap();
        let first = try_lock(d.path()).expect("a free folder");
        // flock conflicts between open files, even in one process.
        assert!(try_lock(d.path()).is_none(), "taken twice");
        drop(first);
        assert!(try_lock(d.path()).is_some(), "not released");
    }

    #[test]
    fn reserved_names_never_repeat() {
        let d = tempfile::tempdir().unwrap();
        let names: std::collections::BTreeSet<PathBuf> = (0..50)
            .map(|_| reserve(d.path(), "run-", ".json", b"{}").unwrap().0)
            .collect();
        assert_eq!(names.len(), 50);
    }

    #[test]
    fn only_pqcprof_temporaries_name_a_pid() {
        assert_eq!(stale_pid(".run-x.json.tmp-123"), Some(123));
        assert_eq!(stale_pid(".pqcprof-write-test-9"), Some(9));
        assert_eq!(stale_pid("run.tmp-123"), None, "not hidden");
        assert_eq!(stale_pid(".x.tmp-12a"), None);
        assert_eq!(stale_pid(".x.tmp-"), None);
    }
}
