//! The `pqcprof` binary: parses the command line, installs the logger at
//! the level it asks for and runs the command. A command line that does
//! not parse, or whose values do not fit together, is a usage error (exit
//! 2); any other error is one line and exit 1.

use clap::Parser;
use pqcprof::cmd::{cli, stdout};
use pqcprof::core::exit;

/// Notes, before the Rust runtime starts, whether standard output is
/// closed (`pqcprof ... >&-`): the runtime then opens `/dev/null` in its
/// place, after which a closed descriptor cannot be told from a discarded
/// one, and a command would "succeed" having written nothing.
extern "C" fn note_closed_stdout() {
    // SAFETY: F_GETFD only reads descriptor 1's flags; it fails with EBADF
    // when the descriptor is not open.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        stdout::mark_closed_at_start();
    }
}

/// Runs [`note_closed_stdout`] among the program's initialisers, before
/// `main` and the runtime's own start-up.
#[used]
#[allow(unsafe_code)]
#[link_section = ".init_array"]
static NOTE_CLOSED_STDOUT: extern "C" fn() = note_closed_stdout;

fn main() {
    pqcprof::measure::signals::default_sigpipe();
    // This binary may start itself again with an NVRTC its driver supports.
    pqcprof::probe::nvrtc_choice::allow_restart();
    let argv: Vec<String> = std::env::args().collect();
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => std::process::exit(refused(cli::explain(e, &argv))),
    };
    pqcprof::cmd::logging::init(cli.quiet, cli.verbose);
    match pqcprof::cmd::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) if e.downcast_ref::<exit::Usage>().is_some() => {
            let e = cli::usage_error(&format!("{e:#}"), &argv);
            std::process::exit(refused(e))
        }
        Err(e) => {
            log::error!("{e:#}");
            std::process::exit(exit::ERROR);
        }
    }
}

/// Prints what clap says of a command line it did not run (its help or
/// version on standard output, checked; a usage error on standard error)
/// and returns the exit code.
fn refused(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return e.exit_code();
    }
    use std::io::IsTerminal;
    let styled = e.render();
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text = if colour {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    match stdout::print(text) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("pqcprof: error: {e:#}");
            exit::ERROR
        }
    }
}
