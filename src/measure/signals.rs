//! Signal handling: Ctrl-C (SIGINT), SIGTERM and SIGHUP all ask a
//! measuring command to stop after the current run, so what finished is
//! saved and the run file marked interrupted; a second one marks the run
//! file interrupted and quits at once.
//! A closed output pipe ends the process quietly, as Unix tools do.

use crate::core::exit;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The run file this process saves, held while it is being written: a
/// second signal waits for a write in progress, then marks the file.
static RUN_FILE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Sets `cancel` on the first SIGINT, SIGTERM or SIGHUP; on the second,
/// marks the run file being saved (see [`saving`]) interrupted and exits
/// with [`exit::INTERRUPTED`].
pub fn install(cancel: Arc<AtomicBool>) {
    let first = Arc::new(AtomicBool::new(true));
    let _ = ctrlc::set_handler(move || {
        if first.swap(false, Ordering::SeqCst) {
            log::warn!("\ninterrupted (Ctrl-C, SIGTERM or SIGHUP); stopping after the current run (again to quit at once)");
            cancel.store(true, Ordering::SeqCst);
        } else {
            // Held until exit: no save starts after the mark.
            let held = RUN_FILE.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(path) = held.as_ref() {
                if let Err(e) = mark_interrupted(path) {
                    log::error!("{}: could not be marked interrupted: {e:#}", path.display());
                }
            }
            std::process::exit(exit::INTERRUPTED);
        }
    });
}

/// Runs `write`, the save of the run file at `path`, so that a second
/// signal never cuts it short and still finds the file to mark.
pub fn saving<T>(path: &Path, write: impl FnOnce() -> T) -> T {
    let mut held = RUN_FILE.lock().unwrap_or_else(|e| e.into_inner());
    *held = Some(path.to_path_buf());
    write()
}

/// Sets `interrupted: true` and `complete: false` in the run file at
/// `path`, keeping everything else it holds.
fn mark_interrupted(path: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(path)?;
    let mut v: serde_json::Value = serde_json::from_slice(&bytes)?;
    let Some(top) = v.as_object_mut() else {
        anyhow::bail!("not a JSON object");
    };
    top.insert("interrupted".into(), true.into());
    top.insert("complete".into(), false.into());
    crate::write::output::write_json(path, &v)
}

/// Restores the default action of SIGPIPE, which Rust's runtime ignores:
/// `pqcprof ... | head -1` then ends quietly when `head` stops reading,
/// instead of panicking on the failed write. Call first thing in `main`.
pub fn default_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_DFL at start-up, before
    // any thread exists; no handler code is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
