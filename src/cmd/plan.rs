//! `pqcprof plan`: its arguments, and the prediction printed as text or
//! JSON.

use crate::cmd::load::LoadArgs;
use crate::core::catalog::{Algorithm, Operation};
use crate::offload::plan::PlanInput;
use clap::Args;
use std::path::PathBuf;

/// Options of `plan`.
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    /// The run file whose batch times the prediction uses: throughput
    /// records of the backend, algorithm and operation at several batches
    /// (e.g. `pqcprof cpu --batch-sweep 256 --threads 1`). Without it the
    /// batch times are measured here first, as `offload` measures them
    /// before its first point (batches of 1, 2, 4, ... up to --batch-top;
    /// on a GPU backend, GPU 0).
    #[arg(long, value_name = "RUN_FILE")]
    pub from: Option<PathBuf>,
    /// The backend whose records to use, or to measure on without --from
    /// (liboqs-cpu, native-gpu, cupqc).
    #[arg(long, value_name = "NAME", default_value = crate::backend::liboqs::NAME)]
    pub backend: String,
    /// Without --from: the largest batch measured (and so the largest a
    /// prediction may choose).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub batch_top: u32,
    /// The algorithm, e.g. ML-KEM-768.
    #[arg(long = "alg", value_name = "NAME")]
    pub algorithm: Algorithm,
    /// The operation (keygen, encaps, decaps, sign, verify).
    #[arg(long = "op", value_name = "OP")]
    pub operation: Operation,
    /// Requests per second offered (Poisson arrivals unless --arrivals
    /// uniform); without it and without --trace, only the highest rate
    /// under --slo is predicted.
    #[arg(long, value_name = "PER_SEC", allow_negative_numbers = true, value_parser = crate::core::bounded::rate)]
    pub rate: Option<f64>,
    /// Replay these arrival times instead (seconds, one per line, in order).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rate", "arrivals"])]
    pub trace: Option<PathBuf>,
    /// Workers serving batches at once: CPU threads each running its own
    /// batch (the one-thread records give each one's batch time). Above 1,
    /// liboqs-cpu records at `--threads` equal to it (a batch of N x b
    /// runs b on each of N threads at once) give the batch times with all
    /// workers busy, used for a batch that starts while others run; without
    /// such records contention is not modelled, and the plan says so.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..=4096)
    )]
    pub workers: u32,
    /// Arrivals, batching and objective.
    #[command(flatten)]
    pub load: LoadArgs,
    /// The dispatcher's own cost, added to the simulated batches: `auto`
    /// measures it on this host (0.2 s of requests through the real
    /// dispatcher to a worker that does nothing: the hand-over to a worker
    /// thread added to every batch, waking added to a batch the dispatcher
    /// waited for); milliseconds are added to every batch instead (0:
    /// none).
    #[arg(long, value_name = "auto|MS", default_value = "auto", value_parser = handoff_or_auto)]
    pub handoff_ms: String,
    /// Print the prediction as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `auto`, or milliseconds from 0 to 1000.
fn handoff_or_auto(s: &str) -> Result<String, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok("auto".into());
    }
    crate::core::bounded::number(s, 0.0, 1000.0, "milliseconds")
        .map(|_| s.trim().to_string())
        .map_err(|e| format!("{e}, or auto"))
}

/// `pqcprof plan`.
pub fn plan(args: &PlanArgs) -> anyhow::Result<i32> {
    let plan = crate::offload::plan::predict(&PlanInput {
        from: args.from.clone(),
        backend: args.backend.clone(),
        batch_top: args.batch_top,
        algorithm: args.algorithm,
        operation: args.operation,
        rate: args.rate,
        trace: args.trace.clone(),
        workers: args.workers,
        load: args.load.options(),
        handoff_ms: args.handoff_ms.clone(),
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{}", plan.text());
    }
    Ok(crate::core::exit::OK)
}
