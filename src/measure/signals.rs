//! Signal handling: Ctrl-C (SIGINT), SIGTERM and SIGHUP all ask a
//! measuring command to stop after the current run, so what finished is
//! saved and the run file marked interrupted; a second one quits at once.
//! A closed output pipe ends the process quietly, as Unix tools do.

use crate::core::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets `cancel` on the first SIGINT, SIGTERM or SIGHUP; exits with
/// [`exit::INTERRUPTED`] on the second.
pub fn install(cancel: Arc<AtomicBool>) {
    let first = Arc::new(AtomicBool::new(true));
    let _ = ctrlc::set_handler(move || {
        if first.swap(false, Ordering::SeqCst) {
            eprintln!("\npqcprof: interrupted (Ctrl-C, SIGTERM or SIGHUP); stopping after the current run (again to quit at once)");
            cancel.store(true, Ordering::SeqCst);
        } else {
            std::process::exit(exit::INTERRUPTED);
        }
    });
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
