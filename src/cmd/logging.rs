//! Diagnostics on stderr: the one logger behind the `log` facade. Every
//! layer calls the facade's macros directly (`log::error!`, `log::warn!`,
//! `log::info!` for progress and notes, `log::debug!`, `log::trace!`); this
//! module alone decides what reaches the terminal and how it looks.
//!
//! One line per record: `pqcprof: ` and the level's tag (`error: `,
//! `warning: `, none for progress and notes, `debug: `, `trace: `), then the
//! message. `--quiet` keeps errors only, the default adds warnings and
//! progress, `-v` debug lines and `-vv` trace lines (those of the libraries
//! pqcprof links included). While a progress bar is on the terminal a line
//! is printed through it (`measure::progress::suspend`), so neither tears
//! the other.
//!
//! Two targets change the prefix: a command's name (`target: "sweep"`)
//! names it (`pqcprof sweep: ...`), and `target: "row"` prints the message
//! with no prefix (rows of a table drawn on stderr, as the sweep's). The
//! level's tag is kept in both.

use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::Write;

/// The target whose records are printed without the `pqcprof: ` prefix.
pub const ROW_TARGET: &str = "row";

/// The level a command line asks for: errors only with `--quiet`, else
/// progress and warnings, plus debug lines for each `-v` (trace from two).
pub fn level_filter(quiet: bool, verbose: u8) -> LevelFilter {
    match (quiet, verbose) {
        (true, _) => LevelFilter::Error,
        (false, 0) => LevelFilter::Info,
        (false, 1) => LevelFilter::Debug,
        (false, _) => LevelFilter::Trace,
    }
}

/// How the start of a line names what speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Speaker {
    /// pqcprof as a whole: `pqcprof: `.
    Pqcprof,
    /// One of its commands: `pqcprof sweep: `.
    Command(String),
    /// A table row: nothing.
    Row,
    /// A library pqcprof links: `pqcprof: <target>: `, shown with `-vv` only.
    Library(String),
}

fn speaker(target: &str, commands: &[String]) -> Speaker {
    if target == ROW_TARGET {
        Speaker::Row
    } else if target == "pqcprof" || target.starts_with("pqcprof::") {
        Speaker::Pqcprof
    } else if commands.iter().any(|c| c == target) {
        Speaker::Command(target.to_string())
    } else {
        Speaker::Library(target.to_string())
    }
}

/// The line printed for a record of `level` from `target` saying `message`.
/// Leading newlines of the message stay in front of the whole line.
fn line(level: Level, target: &str, message: &str, commands: &[String]) -> String {
    let body = message.trim_start_matches('\n');
    let newlines = &message[..message.len() - body.len()];
    let tag = match level {
        Level::Error => "error: ",
        Level::Warn => "warning: ",
        Level::Info => "",
        Level::Debug => "debug: ",
        Level::Trace => "trace: ",
    };
    match speaker(target, commands) {
        Speaker::Pqcprof => format!("{newlines}pqcprof: {tag}{body}"),
        Speaker::Command(c) => format!("{newlines}pqcprof {c}: {tag}{body}"),
        Speaker::Row => format!("{newlines}{tag}{body}"),
        Speaker::Library(t) => format!("{newlines}pqcprof: {tag}{t}: {body}"),
    }
}

/// The logger: stderr, at the level the command line chose.
struct StderrLogger {
    max: LevelFilter,
    /// Subcommand names, the targets that name a command.
    commands: Vec<String>,
}

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= self.max
            && (self.max == LevelFilter::Trace
                || !matches!(
                    speaker(metadata.target(), &self.commands),
                    Speaker::Library(_)
                ))
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let text = line(
            record.level(),
            record.target(),
            &record.args().to_string(),
            &self.commands,
        );
        crate::measure::progress::suspend(|| {
            // A closed or full stderr must not stop a measurement: the
            // line is lost, as eprintln!'s would be, without its panic.
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        });
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

/// Installs the logger at the level `--quiet`/`-v` ask for. Called once, by
/// `main`; a second call keeps the first logger and only sets the level.
pub fn init(quiet: bool, verbose: u8) {
    use clap::CommandFactory;
    let max = level_filter(quiet, verbose);
    let commands = crate::cmd::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let logger: &'static StderrLogger = Box::leak(Box::new(StderrLogger { max, commands }));
    let _ = log::set_logger(logger);
    log::set_max_level(max);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands() -> Vec<String> {
        vec!["sweep".into(), "sizes".into()]
    }

    #[test]
    fn each_level_has_its_tag_after_the_prefix() {
        let l = |level| line(level, "pqcprof::cmd::bench", "a note", &commands());
        assert_eq!(l(Level::Error), "pqcprof: error: a note");
        assert_eq!(l(Level::Warn), "pqcprof: warning: a note");
        assert_eq!(l(Level::Info), "pqcprof: a note");
        assert_eq!(l(Level::Debug), "pqcprof: debug: a note");
        assert_eq!(l(Level::Trace), "pqcprof: trace: a note");
    }

    #[test]
    fn targets_name_a_command_a_row_or_a_library() {
        let c = commands();
        assert_eq!(
            line(Level::Info, "sweep", "took 1.0 s", &c),
            "pqcprof sweep: took 1.0 s"
        );
        assert_eq!(
            line(Level::Warn, "sizes", "skipped X", &c),
            "pqcprof sizes: warning: skipped X"
        );
        assert_eq!(
            line(Level::Info, ROW_TARGET, "[ 1/9] row", &c),
            "[ 1/9] row"
        );
        assert_eq!(
            line(Level::Debug, "iana_time_zone", "zone", &c),
            "pqcprof: debug: iana_time_zone: zone"
        );
        // The binary's own module path is the crate name alone.
        assert_eq!(line(Level::Info, "pqcprof", "x", &c), "pqcprof: x");
    }

    #[test]
    fn leading_newlines_stay_in_front() {
        assert_eq!(
            line(
                Level::Warn,
                "pqcprof::measure::signals",
                "\ninterrupted",
                &[]
            ),
            "\npqcprof: warning: interrupted"
        );
    }

    #[test]
    fn quiet_keeps_errors_and_each_v_adds_a_level() {
        assert_eq!(level_filter(true, 0), LevelFilter::Error);
        assert_eq!(level_filter(true, 2), LevelFilter::Error);
        assert_eq!(level_filter(false, 0), LevelFilter::Info);
        assert_eq!(level_filter(false, 1), LevelFilter::Debug);
        assert_eq!(level_filter(false, 5), LevelFilter::Trace);
    }

    #[test]
    fn libraries_speak_only_at_trace() {
        let logger = |max| StderrLogger {
            max,
            commands: commands(),
        };
        let meta = |level, target| Metadata::builder().level(level).target(target).build();
        let debug = logger(LevelFilter::Debug);
        assert!(debug.enabled(&meta(Level::Debug, "pqcprof::probe::gpu")));
        assert!(debug.enabled(&meta(Level::Info, "sweep")));
        assert!(!debug.enabled(&meta(Level::Warn, "iana_time_zone")));
        assert!(!debug.enabled(&meta(Level::Trace, "pqcprof::probe::gpu")));
        let trace = logger(LevelFilter::Trace);
        assert!(trace.enabled(&meta(Level::Debug, "iana_time_zone")));
        let quiet = logger(LevelFilter::Error);
        assert!(quiet.enabled(&meta(Level::Error, "pqcprof")));
        assert!(!quiet.enabled(&meta(Level::Warn, "pqcprof")));
        assert!(!quiet.enabled(&meta(Level::Info, "pqcprof")));
    }
}
