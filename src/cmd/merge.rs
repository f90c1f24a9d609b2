//! `pqcprof merge`: its arguments, the ranks' run files merged into one,
//! and what was merged said, with its differences and missing ranks.

use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::exit;
use crate::core::units::printable;
use crate::schema::run_file::RunFile;
use clap::Args;
use std::path::{Path, PathBuf};

/// Options of `merge`.
#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// Folders holding the ranks' run files, or run files
    ///
    /// Folders are searched recursively for `run-*.json`.
    #[arg(value_name = "DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// File to write the merged run file to [default: cluster-run.json]
    #[arg(
        short = 'o',
        long = "out",
        value_name = "FILE",
        default_value = "cluster-run.json",
        hide_default_value = true,
        help_heading = heading::RESULTS
    )]
    pub output: PathBuf,
}

/// `pqcprof merge`: exit 3 when the merged run is incomplete or a record
/// failed.
pub fn merge(args: &MergeArgs) -> anyhow::Result<i32> {
    let merged = crate::cluster::merge::merge_into(&args.inputs, &args.output)?;
    say_merged(&merged, &args.output)
}

/// Says what was merged, its differences, missing and incomplete ranks;
/// returns the exit code.
fn say_merged(merged: &RunFile, output: &Path) -> anyhow::Result<i32> {
    let c = merged.cluster.as_ref().expect("merge sets it");
    let nodes: std::collections::BTreeSet<&str> = c.ranks.iter().map(|r| r.node.as_str()).collect();
    stdout::println(format!(
        "Merged {} rank run file(s) from {} node(s), {} records, {} aggregates: {}",
        c.ranks.len(),
        nodes.len(),
        merged.records.len(),
        merged.aggregates.len(),
        output.display()
    ))?;
    for d in &c.differences {
        log::warn!("difference: {}", printable(d));
    }
    warn_each("missing", &c.missing, "cluster.missing");
    let incomplete: Vec<String> = c
        .ranks
        .iter()
        .filter(|r| !r.complete)
        .map(|r| format!("{} ({}) did not finish its run", r.label(), r.file))
        .collect();
    warn_each("incomplete", &incomplete, "cluster.ranks");
    if !c.complete {
        log::error!("the merged run is marked incomplete");
        return Ok(exit::SOME_FAILED);
    }
    Ok(crate::schema::record::exit_for_failures(&merged.records))
}

/// One warning line per item, `tag: item`, for the first few; past those,
/// one line with the count of the rest (each at `-v`, all of them in the
/// merged file's `field`).
fn warn_each(tag: &str, items: &[String], field: &str) {
    let shown = crate::core::listing::SHOWN;
    for m in items.iter().take(shown) {
        log::warn!("{tag}: {}", printable(m));
    }
    if items.len() > shown {
        for m in &items[shown..] {
            log::debug!("{tag}: {}", printable(m));
        }
        log::warn!(
            "{tag}: {} more, {} in all (each with -v; all in the merged file's `{field}`)",
            items.len() - shown,
            items.len()
        );
    }
}
