//! The commands: the command line ([`cli`], parsing only) and, one file
//! per command, each command's arguments, their checks and its entry
//! function, which calls the stages below and prints what they return:
//! [`bench`] (with [`bench_args`]; also `cpu` and `gpu`), [`check`],
//! [`sweep`], [`sizes`], [`report`], [`compare`], [`plan`], [`offload`]
//! (sharing [`load`] with `plan`), [`merge`], [`kernels`] and
//! [`completions`] (`completions` and `man`). [`tables`]
//! holds `bench`'s printed tables and [`logging`] the logger behind every
//! diagnostic line. Only this layer (and `main`) writes to standard output,
//! every write through [`stdout`], which checks it.

pub mod bench;
pub mod bench_args;
pub mod check;
pub mod cli;
pub mod compare;
pub mod completions;
pub mod kernels;
pub mod load;
pub mod logging;
pub mod merge;
pub mod offload;
pub mod plan;
pub mod plugin_worker;
pub mod report;
pub mod sizes;
pub mod stdout;
pub mod sweep;
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
        Command::Cpu(a) => bench::bench(&a.into(), Some(&[liboqs::NAME])),
        Command::Gpu(a) => bench::bench(&a.into(), Some(&[native_gpu::NAME, cupqc::BACKEND_NAME])),
        Command::Sweep(a) => sweep::sweep(&a),
        Command::Sizes(a) => sizes::sizes(&a),
        Command::Report(a) => report::report(&a),
        Command::Compare(a) => compare::compare(&a),
        Command::Plan(a) => plan::plan(&a),
        Command::Offload(a) => offload::offload(&a),
        Command::Merge(a) => merge::merge(&a),
        Command::Kernels(a) => kernels::kernels(&a),
        Command::Completions(a) => completions::completions(&a, Cli::command()),
        Command::Man(a) => completions::man(&a, Cli::command()),
        Command::PluginWorker(a) => plugin_worker::plugin_worker(&a),
    }
}
