use clap::Parser;

fn main() {
    pqcprof::signals::default_sigpipe();
    let cli = pqcprof::cli::Cli::parse();
    match pqcprof::app::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("pqcprof: error: {e:#}");
            std::process::exit(pqcprof::exit::ERROR);
        }
    }
}
