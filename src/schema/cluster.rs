//! The cluster block of a merged run file: the Slurm job's ranks, each
//! with its node, run file, completeness and metadata, the ranks that were
//! missing, and every difference between them (`pqcprof merge` fills it).

use crate::schema::metadata::Metadata;
use crate::schema::record::RunConfig;
use serde::{Deserialize, Serialize};

/// What a merged run file says about the job it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    /// Slurm job id, when the ranks ran under Slurm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Every rank's run file, in (role, rank) order; a record's `rank`
    /// indexes this list.
    pub ranks: Vec<RankFile>,
    /// Ranks that were expected and left no run file, one sentence each.
    #[serde(default)]
    pub missing: Vec<String>,
    /// Differences between the ranks' configurations, commits and
    /// versions, one sentence each: named, never hidden.
    #[serde(default)]
    pub differences: Vec<String>,
    /// True when every expected rank is here and finished its run.
    pub complete: bool,
}

/// One rank's run file inside a merged file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFile {
    /// `gpu` or `cpu` (the batch script's step), else the subcommand.
    pub role: String,
    /// Slurm's rank in its step (SLURM_PROCID), when run under Slurm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub procid: Option<usize>,
    /// Node the rank ran on.
    pub node: String,
    /// The file, as found by `merge`.
    pub file: String,
    /// Whether the rank's run finished.
    pub complete: bool,
    /// Whether it was stopped by Ctrl-C (or SIGINT from Slurm).
    pub interrupted: bool,
    /// Records it contributed.
    pub records: usize,
    /// Its machine and software.
    pub metadata: Metadata,
    /// Its settings, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<RunConfig>,
}

impl RankFile {
    /// `gpu rank 3 on node7`, or `cpu run on vm` outside Slurm.
    pub fn label(&self) -> String {
        format!("{} on {}", self.name(), self.node)
    }

    /// `gpu rank 3`, or `cpu run` outside Slurm.
    pub fn name(&self) -> String {
        match self.procid {
            Some(p) => format!("{} rank {p}", self.role),
            None => format!("{} run", self.role),
        }
    }
}
