//! The commands: what `main` runs once the command line is parsed, one file
//! per command ([`bench`] also serves `cpu` and `gpu`; `sweep`, `sizes`,
//! `report`, `compare` and `merge` live with their stage), and [`logging`],
//! the logger behind every diagnostic line.

pub mod bench;
pub mod check;
pub mod cli;
pub mod completions;
pub mod kernels;
pub mod logging;
pub mod tables;

use crate::backend::cupqc;
use crate::backend::liboqs;
use crate::backend::native_gpu;
use crate::cmd::cli::{Cli, Command};
use clap::CommandFactory;

/// Runs the parsed command; returns the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Check(a) => check::check(&a),
        Command::Bench(a) => bench::bench(&a, None),
        Command::Cpu(a) => bench::bench(&a, Some(&[liboqs::NAME])),
        Command::Gpu(a) => bench::bench(&a, Some(&[native_gpu::NAME, cupqc::BACKEND_NAME])),
        Command::Sweep(a) => crate::sweep::run_sweep(&a),
        Command::Sizes(a) => crate::sweep::run_sizes(&a),
        Command::Report(a) => crate::report::run_report(&a),
        Command::Compare(a) => crate::report::run_compare(&a),
        Command::Plan(a) => crate::offload::run_plan(&a),
        Command::Offload(a) => crate::offload::run_offload(&a),
        Command::Merge(a) => crate::cluster::merge::run_merge(&a),
        Command::Kernels(a) => kernels::kernels(&a),
        Command::Completions(a) => completions::completions(&a, Cli::command()),
        Command::Man(a) => completions::man(&a, Cli::command()),
    }
}
