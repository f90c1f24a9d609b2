//! Progress bars: shown on a terminal, silent otherwise (CI, pipes, files)
//! and under `--quiet`. While a bar is shown, diagnostics are printed
//! through it ([`suspend`]), so a log line never lands inside a bar.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The bar on the terminal now, with its number: lines printed meanwhile
/// clear it first and draw it again after.
static SHOWN: Mutex<Option<(u64, ProgressBar)>> = Mutex::new(None);

/// Numbers the bars, so that a bar that ends forgets itself only.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Runs `print` with the bar on the terminal, if one is, cleared for it
/// and drawn again after: what the logger prints through.
pub fn suspend<R>(print: impl FnOnce() -> R) -> R {
    let shown = SHOWN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|(_, bar)| bar.clone());
    match shown {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// A bar for one record's timed runs.
pub struct RunBar {
    bar: ProgressBar,
    /// Its number in `SHOWN`, when shown.
    id: Option<u64>,
}

impl RunBar {
    /// A bar labelled `label` for `total` runs; hidden when stderr is not a
    /// terminal or progress lines are off (`--quiet`).
    pub fn new(label: &str, total: usize) -> Self {
        if std::io::stderr().is_terminal() && log::log_enabled!(log::Level::Info) {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{prefix:>40} [{bar:30}] {pos}/{len} runs")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            Self::shown(b)
        } else {
            RunBar {
                bar: ProgressBar::hidden(),
                id: None,
            }
        }
    }
    /// `bar`, registered as the one on the terminal.
    fn shown(bar: ProgressBar) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        *SHOWN.lock().unwrap_or_else(|e| e.into_inner()) = Some((id, bar.clone()));
        RunBar { bar, id: Some(id) }
    }
    /// Moves to `done` runs.
    pub fn set(&self, done: usize) {
        self.bar.set_position(done as u64);
    }
    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for RunBar {
    /// A bar dropped on an error path is forgotten too: lines printed later
    /// must not draw it again.
    fn drop(&mut self) {
        let mut shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
        if self.id.is_some() && shown.as_ref().map(|(id, _)| *id) == self.id {
            *shown = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown_id() -> Option<u64> {
        SHOWN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|(id, _)| *id)
    }

    #[test]
    fn a_shown_bar_is_printed_through_until_it_ends() {
        let first = RunBar::shown(ProgressBar::hidden());
        assert_eq!(shown_id(), first.id);
        assert_eq!(suspend(|| 7), 7);
        // A newer bar replaces it; the older one ending leaves the newer.
        let second = RunBar::shown(ProgressBar::hidden());
        first.finish();
        assert_eq!(shown_id(), second.id);
        // Dropped without `finish` (an error path): forgotten all the same.
        drop(second);
        assert_eq!(shown_id(), None);
        assert_eq!(suspend(|| "printed"), "printed");
    }
}
