//! `pqcprof merge`: its arguments, the ranks' run files merged into one,
//! and what was merged said, with its differences and missing ranks.

use crate::core::exit;
use crate::core::units::printable;
use crate::schema::run_file::RunFile;
use clap::Args;
use std::path::{Path, PathBuf};

/// Options of `merge`.
#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// Folders holding the ranks' run files (searched recursively for
    /// `run-*.json`), or run files.
    #[arg(value_name = "DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged run file to write.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "cluster-run.json"
    )]
    pub output: PathBuf,
}

/// `pqcprof merge`: exit 3 when the merged run is incomplete or a record
/// failed.
pub fn merge(args: &MergeArgs) -> anyhow::Result<i32> {
    let merged = crate::cluster::merge::merge_into(&args.inputs, &args.output)?;
    Ok(say_merged(&merged, &args.output))
}

/// Says what was merged, its differences, missing and incomplete ranks;
/// returns the exit code.
fn say_merged(merged: &RunFile, output: &Path) -> i32 {
    let c = merged.cluster.as_ref().expect("merge sets it");
    let nodes: std::collections::BTreeSet<&str> = c.ranks.iter().map(|r| r.node.as_str()).collect();
    println!(
        "Merged {} rank run file(s) from {} node(s), {} records, {} aggregates: {}",
        c.ranks.len(),
        nodes.len(),
        merged.records.len(),
        merged.aggregates.len(),
        output.display()
    );
    for d in &c.differences {
        log::warn!("difference: {}", printable(d));
    }
    for m in &c.missing {
        log::warn!("missing: {}", printable(m));
    }
    for r in c.ranks.iter().filter(|r| !r.complete) {
        log::warn!(
            "incomplete: {} ({}) did not finish its run",
            printable(&r.label()),
            printable(&r.file)
        );
    }
    if !c.complete {
        log::error!("the merged run is marked incomplete");
        return exit::SOME_FAILED;
    }
    crate::schema::record::exit_for_failures(&merged.records)
}
