//! The `pqcprof` binary: parses the command line and runs the command.

use clap::Parser;

fn main() {
    pqcprof::measure::signals::default_sigpipe();
    // This binary may start itself again with an NVRTC its driver supports.
    pqcprof::probe::nvrtc_choice::allow_restart();
    let cli = pqcprof::cmd::cli::Cli::parse();
    match pqcprof::cmd::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("pqcprof: error: {e:#}");
            std::process::exit(pqcprof::core::exit::ERROR);
        }
    }
}
