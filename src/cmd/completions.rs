//! `completions` and `man`: shell completions and man pages, made from the
//! command line's own definitions (`clap_complete`, `clap_mangen`), so they
//! list exactly the commands and options `--help` does. Both take the
//! command line's definition (`Cli::command()`) from their caller.

use super::bench_args::heading;
use super::stdout;
use crate::core::exit;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Options of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    #[arg(value_name = "SHELL", hide_possible_values = true)]
    pub shell: clap_complete::Shell,
}

/// Options of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Folder to write the pages into, created if missing
    ///
    /// pqcprof.1 and one pqcprof-COMMAND.1 per command; a page of the same
    /// name already there (or a link of that name) is replaced.
    #[arg(short = 'o', long, value_name = "DIR", help_heading = heading::RESULTS)]
    pub out: PathBuf,
}

/// Writes the completion script for `args.shell` of `command` (the whole
/// command line) to standard output.
pub fn completions(args: &CompletionsArgs, mut command: clap::Command) -> anyhow::Result<i32> {
    // clap_complete panics on a failed write: the script is made in memory
    // and written, checked, after.
    let mut script = vec![];
    clap_complete::generate(args.shell, &mut command, "pqcprof", &mut script);
    stdout::print(String::from_utf8_lossy(&script))?;
    Ok(exit::OK)
}

/// The man pages of `command` and of each of its visible commands, by
/// file name, as `clap_mangen::generate_to` would write them.
fn pages(command: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    fn add(cmd: clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            add(sub, out)?;
        }
        let man = clap_mangen::Man::new(cmd);
        let mut page = vec![];
        man.render(&mut page)?;
        out.push((man.get_filename(), page));
        Ok(())
    }
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut out = vec![];
    add(command, &mut out)?;
    out.sort();
    Ok(out)
}

/// Writes a man page for `command` (the whole command line) and for each
/// of its commands into `args.out`, and prints each page's path. A page's
/// name already in the folder is replaced, a symbolic link included (never
/// written through, so nothing outside the folder changes).
pub fn man(args: &ManArgs, command: clap::Command) -> anyhow::Result<i32> {
    let dir = &args.out;
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--out {}: not a folder; give a folder for the man pages",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("--out {}", dir.display()))?;
    for (name, page) in pages(command)? {
        let path = crate::write::output::replace_in_folder(dir, &name, &page)?;
        stdout::println(path.display().to_string())?;
    }
    Ok(exit::OK)
}
