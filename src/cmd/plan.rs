//! `pqcprof plan`: its arguments, and the prediction printed as text or
//! JSON.

use crate::cmd::bench_args::heading;
use crate::cmd::load::LoadArgs;
use crate::cmd::stdout;
use crate::core::catalog::{Algorithm, Operation};
use crate::core::exit::Usage;
use crate::offload::plan::PlanInput;
use clap::Args;
use std::path::PathBuf;

/// Options of `plan`.
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    /// Run file whose batch times to use [default: measure them here]
    ///
    /// Throughput records of the backend, algorithm and operation at several batches
    /// (e.g. `pqcprof cpu --batch-sweep 256 --threads 1`). Without it the
    /// batch times are measured here first, as `offload` measures them
    /// before its first point (batches of 1, 2, 4, ... up to --batch-top;
    /// on a GPU backend, GPU 0).
    #[arg(long, value_name = "RUN_FILE", help_heading = heading::MEASURE)]
    pub from: Option<PathBuf>,
    /// Backend whose records to use, or to measure on [default: liboqs-cpu]
    ///
    /// Without --from: liboqs-cpu, native-gpu or cupqc; with --from, any
    /// backend the run file holds.
    #[arg(
        long,
        value_name = "NAME",
        default_value = crate::backend::liboqs::NAME,
        hide_default_value = true,
        help_heading = heading::MEASURE
    )]
    pub backend: String,
    /// The algorithm, e.g. ML-KEM-768
    #[arg(short = 'a', long = "alg", value_name = "NAME", help_heading = heading::MEASURE)]
    pub algorithm: Algorithm,
    /// The operation: keygen, encaps, decaps, sign or verify
    #[arg(long = "op", value_name = "OP", help_heading = heading::MEASURE)]
    pub operation: Operation,
    /// Without --from: the largest batch measured [default: 64]
    ///
    /// From 1 to 4096; also the largest batch a prediction may choose.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        hide_default_value = true,
        value_parser = clap::value_parser!(u32).range(1..=4096),
        help_heading = heading::MEASURE
    )]
    pub batch_top: u32,
    /// Requests per second offered (0.01 to 1e8)
    ///
    /// Poisson arrivals unless --arrivals uniform; without it and without
    /// --trace, only the highest rate under --slo is predicted.
    #[arg(
        long,
        value_name = "PER_SEC",
        allow_negative_numbers = true,
        value_parser = crate::core::bounded::rate,
        help_heading = heading::LOAD
    )]
    pub rate: Option<f64>,
    /// Replay these arrival times instead (seconds, one per line)
    ///
    /// In order, one per line.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rate", "arrivals"], help_heading = heading::LOAD)]
    pub trace: Option<PathBuf>,
    /// Workers serving batches at once [default: 1]
    ///
    /// From 1 to 4096: CPU threads each running its own
    /// batch (the one-thread records give each one's batch time). Above 1,
    /// liboqs-cpu records at `--threads` equal to it (a batch of N x b
    /// runs b on each of N threads at once) give the batch times with all
    /// workers busy, used for a batch that starts while others run; without
    /// such records contention is not modelled, and the plan says so.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        hide_default_value = true,
        value_parser = clap::value_parser!(u32).range(1..=4096),
        help_heading = heading::BATCHING
    )]
    pub workers: u32,
    /// Arrivals, batching and objective.
    #[command(flatten)]
    pub load: LoadArgs,
    /// The dispatcher's cost per batch: auto or milliseconds [default: auto]
    ///
    /// Added to the simulated batches: `auto` measures it on this host (0.2 s of requests through the real
    /// dispatcher to a worker that does nothing: the hand-over to a worker
    /// thread added to every batch, waking added to a batch the dispatcher
    /// waited for); milliseconds are added to every batch instead (0:
    /// none).
    #[arg(
        long,
        value_name = "auto|MS",
        default_value = "auto",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = handoff_or_auto,
        help_heading = heading::BATCHING
    )]
    pub handoff_ms: String,
    /// Print the prediction as JSON instead of text
    #[arg(long, help_heading = heading::OUTPUT)]
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
    let here = [
        crate::backend::liboqs::NAME,
        crate::backend::native_gpu::NAME,
        crate::backend::cupqc::BACKEND_NAME,
    ];
    if args.from.is_none() && !here.contains(&args.backend.as_str()) {
        return Err(Usage(format!(
            "--backend {}: without --from, plan measures on one of {}; give --from RUN_FILE to use another backend's records",
            args.backend,
            here.join(", ")
        ))
        .into());
    }
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
        stdout::println(serde_json::to_string_pretty(&plan)?)?;
    } else {
        stdout::print(plan.text())?;
    }
    Ok(crate::core::exit::OK)
}
