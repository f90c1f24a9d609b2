//! The `pqcprof` binary: parses the command line and runs the command.

use clap::Parser;

fn main() {
    pqcprof::measure::signals::default_sigpipe();
    let cli = pqcprof::cmd::cli::Cli::parse();
    match pqcprof::cmd::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("pqcprof: error: {e:#}");
            std::process::exit(pqcprof::core::exit::ERROR);
        }
    }
}
