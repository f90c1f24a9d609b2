//! The `pqcprof` binary: parses the command line, installs the logger at
//! the level it asks for and runs the command.

use clap::Parser;

fn main() {
    pqcprof::measure::signals::default_sigpipe();
    // This binary may start itself again with an NVRTC its driver supports.
    pqcprof::probe::nvrtc_choice::allow_restart();
    let cli = pqcprof::cmd::cli::Cli::parse();
    pqcprof::cmd::logging::init(cli.quiet, cli.verbose);
    match pqcprof::cmd::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            log::error!("{e:#}");
            let usage = e.downcast_ref::<pqcprof::core::exit::Usage>().is_some();
            std::process::exit(if usage {
                pqcprof::core::exit::USAGE
            } else {
                pqcprof::core::exit::ERROR
            });
        }
    }
}
