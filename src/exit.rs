//! Exit codes: the one list of what pqcprof's exit status means, and the
//! last word of every measuring command. Below `app`, `cli`, `report` and
//! `sweep`, so each of them takes its codes from here.

use crate::results::{Record, Status};

/// Everything asked for ran and passed its correctness gate.
pub const OK: i32 = 0;
/// An error: bad input, an unwritable folder, an I/O failure.
pub const ERROR: i32 = 1;
/// The command line could not be parsed (clap's own code).
pub const USAGE: i32 = 2;
/// The run finished but some record failed (its gate or a run), or
/// `check --require-gpu` found no ready GPU backend.
pub const SOME_FAILED: i32 = 3;
/// Stopped by Ctrl-C; what finished is on disk.
pub const INTERRUPTED: i32 = 130;

/// `SOME_FAILED`, saying how many, when a record failed (its gate or a
/// run); else `OK`. The last word of every measuring command.
pub fn for_failures(records: &[Record]) -> i32 {
    let failed = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .count();
    if failed > 0 {
        eprintln!("pqcprof: {failed} record(s) failed; reasons are in the run file and above");
        return SOME_FAILED;
    }
    OK
}
