//! Exit codes: the one list of what pqcprof's exit status means. Every
//! command takes its codes from here; the code for a finished run's records
//! is [`crate::schema::record::exit_for_failures`].

/// Everything asked for ran and passed its correctness gate.
pub const OK: i32 = 0;
/// An error: bad input in a file, an unwritable output (standard output
/// included), an I/O failure.
pub const ERROR: i32 = 1;
/// A command-line usage error, found where the arguments are parsed and
/// checked, before any work: an unknown option or one of another command,
/// a value out of its bounds or an unknown name, values that do not fit
/// together (clap's own code for the same).
pub const USAGE: i32 = 2;
/// The run finished but some record failed (its gate or a run), or
/// `check --require-gpu` found no ready GPU backend.
pub const SOME_FAILED: i32 = 3;
/// Nothing could be measured: every backend asked for (`gpu`, `bench
/// --backend ...`) is not ready here; the run file holds the skipped
/// records with the reasons.
pub const NOT_READY: i32 = 4;
/// `--deadline` ran out: records begun keep the runs they finished (marked
/// cut), records not begun are not in the run file.
pub const DEADLINE: i32 = 5;
/// Stopped by Ctrl-C, SIGTERM or SIGHUP; what finished is on disk.
pub const INTERRUPTED: i32 = 130;

/// Ctrl-C, SIGTERM or SIGHUP stopped a measurement: what finished is kept,
/// and the command ends with [`INTERRUPTED`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Values the command line gave that do not fit together (each alone in
/// its bounds), or that this machine cannot take: the command ends with
/// [`USAGE`], its message shown as clap shows its own.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// Every exit code in words, a short list for `--help` (the README says
/// the same).
pub const HELP: &str = "\
Exit codes:
  0 success
  1 error: bad input in a file, unwritable output (standard output included), I/O
  2 command-line usage error: a bad option or value, found before any work
  3 finished, but a record failed its correctness gate
    (or `check --require-gpu` found no ready GPU backend)
  4 nothing measured: no backend asked for is ready here (e.g. `gpu` without a GPU)
  5 `--deadline` reached: finished runs kept, records cut so marked, records not begun left out
  130 interrupted by Ctrl-C, SIGTERM or SIGHUP: finished records stay on disk as valid JSON,
    the run file marked interrupted
A closed output pipe (`| head`) ends pqcprof quietly, as any Unix tool (SIGPIPE);
standard output full (`> /dev/full`) or closed (`>&-`) is one error line and exit 1.";
