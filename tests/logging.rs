//! Diagnostics through the logger: each line tagged by its level, `-q`
//! keeping errors only, `-v` adding debug lines, and the default printing
//! the same words as before, on every command.

mod common;

use clap::Parser;
use common::{outcome, pqcprof};
use std::path::{Path, PathBuf};

/// A pid no process has: above every pid in use, below the kernel's limit.
fn dead_pid() -> u32 {
    (100_000u32..4_000_000)
        .rev()
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap()
}

/// An output folder holding a temporary file a killed run left (its
/// removal is a note) for a run whose one record is cut by `--max-seconds`
/// after its first timed run (a warning).
fn folder_with_a_stale_file() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let stale = d.path().join(format!(".run-x.json.tmp-{}", dead_pid()));
    std::fs::write(&stale, b"half").unwrap();
    (d, stale)
}

/// `pqcprof [before] cpu [after] ...`: ML-KEM-512 keygen, batches of 1000
/// (many milliseconds each, on any machine) and a 1 ms budget per record,
/// so the record keeps its first run of 20 and is cut.
fn cut_cpu_run(before: &[&str], after: &[&str], out: &Path) -> (i32, String, String) {
    outcome(
        pqcprof()
            .args(before)
            .arg("cpu")
            .args(after)
            .args(["--alg", "ML-KEM-512", "--op", "keygen"])
            .args(["--batch", "1000", "--runs", "20", "--threads", "1"])
            .args(["--max-seconds", "0.001", "--out"])
            .arg(out),
    )
}

/// The cut record's line: the words pqcprof has always printed for it
/// (backend, algorithm, operation, batch, then the cut note), now after
/// the level's tag.
const CUT_WARNING: &str =
    "pqcprof: warning: liboqs-cpu ML-KEM-512 keygen batch 1000: cut by --max-seconds 0.001 after 1 of 20 timed runs";

#[test]
fn the_default_prints_warnings_and_notes_in_the_same_words_tagged_by_level() {
    let (d, stale) = folder_with_a_stale_file();
    let (code, _, err) = cut_cpu_run(&[], &[], d.path());
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with(CUT_WARNING)),
        "no `{CUT_WARNING}`: {err}"
    );
    let note = format!(
        "pqcprof: removed 1 temporary file(s) that killed runs left in {}",
        d.path().display()
    );
    assert!(lines.contains(&note.as_str()), "no `{note}`: {err}");
    assert!(!stale.exists());
    assert!(!err.contains("debug:"), "debug lines without -v: {err}");
}

#[test]
fn quiet_silences_progress_and_warnings_but_not_errors() {
    let (d, stale) = folder_with_a_stale_file();
    let (code, out, err) = cut_cpu_run(&["-q"], &[], d.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "", "-q printed more than errors");
    // The results still go to stdout, and the work was done.
    assert!(out.contains("Run file:"), "{out}");
    assert!(!stale.exists());
    // After the command's name too, long or short.
    let (d, _) = folder_with_a_stale_file();
    let (code, _, err) = cut_cpu_run(&[], &["--quiet"], d.path());
    assert_eq!((code, err.as_str()), (0, ""));
    // An error is still printed, and the exit code says so.
    let (code, _, err) = outcome(pqcprof().args(["-q", "cpu", "--runs", "0"]));
    assert_eq!(code, 2);
    assert_eq!(
        err.lines().next().unwrap_or(""),
        "error: invalid value '0' for '--runs <N|auto>': 0 is out of range; give a number of runs from 1 to 100000, or auto"
    );
}

#[test]
fn quiet_keeps_the_error_of_a_run_that_measured_nothing() {
    if Path::new("/dev/nvidia0").exists() {
        common::hardware_skip(
            "quiet_keeps_the_error_of_a_run_that_measured_nothing",
            "a GPU device node exists: this test is for machines without one",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = outcome(
        pqcprof()
            .args(common::words("gpu -q --alg ML-KEM-512 --op keygen --out"))
            .arg(d.path()),
    );
    assert_eq!(code, 4, "{err}");
    assert!(
        err.lines().any(|l| l
            == "pqcprof: error: nothing was measured: the backends asked for are not ready (see `pqcprof check`)"),
        "{err}"
    );
    assert!(!err.contains("warning:"), "{err}");
}

#[test]
fn verbose_adds_debug_lines() {
    let (d, _) = folder_with_a_stale_file();
    let (code, _, err) = cut_cpu_run(&["-v"], &[], d.path());
    assert_eq!(code, 0, "{err}");
    let debug: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("pqcprof: debug: "))
        .collect();
    let folder = format!(
        "pqcprof: debug: output folder {} is writable",
        d.path().display()
    );
    assert!(debug.contains(&folder.as_str()), "no `{folder}`: {err}");
    assert!(
        debug.iter().any(
            |l| l.starts_with("pqcprof: debug: backend liboqs-cpu: ready on ")
                && l.contains("threads [1]")
        ),
        "no debug line for the backend: {err}"
    );
    assert!(
        debug
            .iter()
            .any(|l| l.contains("the GPU libraries are not loaded")),
        "{err}"
    );
    // The default lines are still there, in the same words.
    assert!(err.lines().any(|l| l.starts_with(CUT_WARNING)), "{err}");
    // -vv: debug lines still, and no usage error.
    let (d, _) = folder_with_a_stale_file();
    let (code, _, err) = cut_cpu_run(&[], &["-vv"], d.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("pqcprof: debug: backend liboqs-cpu"), "{err}");
}

#[test]
fn quiet_and_verbose_are_refused_together() {
    let (code, _, err) = outcome(pqcprof().args(["-q", "-v", "check"]));
    assert_eq!(code, 2, "{err}");
    common::assert_has(&err, &["--quiet", "--verbose"]);
}

#[test]
fn every_command_takes_quiet_and_verbose() {
    use clap::CommandFactory;
    let cli = pqcprof::cmd::cli::Cli::command();
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in &names {
        for flag in ["-q", "--quiet", "-v", "-vv", "--verbose"] {
            // Missing positional arguments are another error; an unknown
            // flag is the one this is about.
            if let Err(e) = pqcprof::cmd::cli::Cli::try_parse_from(["pqcprof", name, flag]) {
                assert_ne!(
                    e.kind(),
                    clap::error::ErrorKind::UnknownArgument,
                    "{name} {flag}: {e}"
                );
            }
        }
    }
}
