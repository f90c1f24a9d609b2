//! Standard output, every write checked: what a command prints goes
//! through [`print`] (or the [`Stdout`] writer), which writes it whole and
//! flushes it, so that a full device (`> /dev/full`) or a standard output
//! closed before pqcprof started (`>&-`) ends the command with one error
//! line and exit 1 instead of a panic or a silent success. A pipe closed
//! by its reader (`| head`) ends pqcprof quietly, by SIGPIPE, as Unix tools
//! do (`crate::measure::signals::default_sigpipe`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when file descriptor 1 was closed as the process started.
static CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Records that standard output was closed when the process started. The
/// Rust runtime opens `/dev/null` in place of a closed descriptor before
/// `main`, so only code that runs before it can tell (`main.rs` does, from
/// an initialiser); every later write then fails with [`closed_error`].
pub fn mark_closed_at_start() {
    CLOSED_AT_START.store(true, Ordering::SeqCst);
}

/// Whether standard output was closed when the process started.
pub fn closed_at_start() -> bool {
    CLOSED_AT_START.load(Ordering::SeqCst)
}

/// The error every write gets when standard output was closed at start.
fn closed_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "it was closed before pqcprof started (`>&-`); redirect it to a file or /dev/null instead",
    )
}

/// Standard output as an [`std::io::Write`] whose errors say they are
/// standard output's: for code that takes a writer (completion scripts,
/// the vector runs' tables).
#[derive(Debug, Default)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if closed_at_start() {
            return Err(named(closed_error()));
        }
        std::io::stdout().lock().write(buf).map_err(named)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if closed_at_start() {
            return Err(named(closed_error()));
        }
        std::io::stdout().lock().write_all(buf).map_err(named)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if closed_at_start() {
            return Err(named(closed_error()));
        }
        std::io::stdout().lock().flush().map_err(named)
    }
}

/// `e` with standard output named in its message.
fn named(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot write to standard output: {e}"))
}

/// Writes `text` to standard output and flushes it; an error names
/// standard output and the system's reason.
pub fn print(text: impl AsRef<str>) -> anyhow::Result<()> {
    let mut out = Stdout;
    out.write_all(text.as_ref().as_bytes())?;
    out.flush()?;
    Ok(())
}

/// [`print`] with a newline after `text`.
pub fn println(text: impl AsRef<str>) -> anyhow::Result<()> {
    print(format!("{}\n", text.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_standard_output_and_the_reason() {
        let e = named(std::io::Error::from_raw_os_error(libc::ENOSPC)).to_string();
        assert!(
            e.starts_with("cannot write to standard output: ") && e.contains("No space left"),
            "{e}"
        );
        let e = named(closed_error()).to_string();
        assert!(e.contains("closed before pqcprof started"), "{e}");
    }
}
