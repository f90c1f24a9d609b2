//! Which rank of a Slurm job this process is, from the variables Slurm
//! sets for every task, so each rank's run file says where it ran.

use crate::schema::metadata::SlurmRank;

/// Environment variable the batch script sets to name a step's role
/// (`gpu`, `cpu`); absent outside the script.
pub const ROLE_VAR: &str = "PQCPROF_RANK_ROLE";

/// The rank described by `var` (an environment lookup), when this is a
/// Slurm task: SLURM_JOB_ID and SLURM_PROCID set. `hostname` names the
/// node when Slurm does not.
pub fn from_vars(var: impl Fn(&str) -> Option<String>, hostname: &str) -> Option<SlurmRank> {
    let num = |name: &str| var(name).and_then(|v| v.trim().parse::<usize>().ok());
    Some(SlurmRank {
        job_id: var("SLURM_JOB_ID").filter(|v| !v.is_empty())?,
        step_id: var("SLURM_STEP_ID"),
        role: var(ROLE_VAR).filter(|v| !v.is_empty()),
        procid: num("SLURM_PROCID")?,
        ntasks: num("SLURM_STEP_NUM_TASKS").or_else(|| num("SLURM_NTASKS")),
        local_id: num("SLURM_LOCALID"),
        node_id: num("SLURM_NODEID"),
        node: var("SLURMD_NODENAME").unwrap_or_else(|| hostname.to_string()),
        cuda_visible_devices: var("CUDA_VISIBLE_DEVICES"),
    })
}

/// This process's rank, from its environment.
pub fn current(hostname: &str) -> Option<SlurmRank> {
    from_vars(|n| std::env::var(n).ok(), hostname)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slurm_task_is_described_and_anything_else_is_not() {
        let env = [
            ("SLURM_JOB_ID", "42"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "3"),
            ("SLURM_STEP_NUM_TASKS", "4"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_NODEID", "1"),
            ("SLURMD_NODENAME", "node7"),
            ("CUDA_VISIBLE_DEVICES", "1"),
            (ROLE_VAR, "gpu"),
        ];
        let get = |n: &str| {
            env.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let r = from_vars(get, "host").unwrap();
        assert_eq!((r.procid, r.ntasks, r.local_id), (3, Some(4), Some(1)));
        assert_eq!((r.node.as_str(), r.role.as_deref()), ("node7", Some("gpu")));
        assert_eq!(r.cuda_visible_devices.as_deref(), Some("1"));
        assert!(from_vars(|_| None, "host").is_none());
        // A job without a step (the batch script itself) has no rank.
        assert!(from_vars(|n| (n == "SLURM_JOB_ID").then(|| "1".into()), "h").is_none());
    }
}
