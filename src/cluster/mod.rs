//! Clusters: the ranks of a Slurm job (`scripts/slurm/pqcprof.sbatch`), each
//! a `pqcprof gpu` or `pqcprof cpu` run writing its own run file, merged by
//! `pqcprof merge` into one run file with cluster totals ([`merge`]). Which
//! rank a process is comes from [`crate::probe::slurm`]; the merged file's
//! cluster block is [`crate::schema::cluster`].

pub mod merge;
