//! `completions` and `man`: shell completions and man pages, made from the
//! command line's own definitions (`clap_complete`, `clap_mangen`), so they
//! list exactly the commands and flags `--help` does. Both take the
//! command line's definition (`Cli::command()`) from their caller.

use crate::core::exit;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Options of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Options of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Folder to write the pages into, created if missing: pqcprof.1 and one
    /// pqcprof-COMMAND.1 per command (pages of the same name are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Writes the completion script for `args.shell` of `command` (the whole
/// command line) to standard output.
pub fn completions(args: &CompletionsArgs, mut command: clap::Command) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "pqcprof", &mut out);
    Ok(exit::OK)
}

/// Writes a man page for `command` (the whole command line) and for each
/// of its commands into `args.out`, and prints each page's path.
pub fn man(args: &ManArgs, command: clap::Command) -> anyhow::Result<i32> {
    let dir = &args.out;
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--out {}: not a folder; give a folder for the man pages",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("--out {}", dir.display()))?;
    clap_mangen::generate_to(command, dir)
        .with_context(|| format!("writing man pages into {}", dir.display()))?;
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "1"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pqcprof"))
        })
        .collect();
    pages.sort();
    for page in pages {
        println!("{}", page.display());
    }
    Ok(exit::OK)
}
