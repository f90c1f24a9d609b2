//! Signal handling for the measuring commands: the first interrupt asks
//! the session to stop after the current run (so what finished is saved),
//! a second one quits at once.

use crate::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Sets `cancel` on the first interrupt; exits with
/// [`exit::INTERRUPTED`] on the second.
pub fn install(cancel: Arc<AtomicBool>) {
    let first = Arc::new(AtomicBool::new(true));
    let _ = ctrlc::set_handler(move || {
        if first.swap(false, Ordering::SeqCst) {
            eprintln!("\npqcprof: interrupted; stopping after the current run (Ctrl-C again to quit at once)");
            cancel.store(true, Ordering::SeqCst);
        } else {
            std::process::exit(exit::INTERRUPTED);
        }
    });
}
