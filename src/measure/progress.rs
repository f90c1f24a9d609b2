//! Progress bars: shown on a terminal, silent otherwise (CI, pipes, files).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A bar for one record's timed runs.
pub struct RunBar(ProgressBar);

impl RunBar {
    /// A bar labelled `label` for `total` runs; hidden when stderr is not a terminal.
    pub fn new(label: &str, total: usize) -> Self {
        let bar = if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{prefix:>40} [{bar:30}] {pos}/{len} runs")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            b
        } else {
            ProgressBar::hidden()
        };
        RunBar(bar)
    }
    /// Moves to `done` runs.
    pub fn set(&self, done: usize) {
        self.0.set_position(done as u64);
    }
    /// Removes the bar.
    pub fn finish(self) {
        self.0.finish_and_clear();
    }
}
