//! `pqcprof plan`: a prediction from a run file's batch times, printed.

use super::{arrivals, batcher, curve, latency, planner};
use crate::core::catalog::{Algorithm, Operation};
use arrivals::Arrivals;
use clap::Args;
use latency::Slo;
use planner::Point;
use serde::Serialize;
use std::path::PathBuf;

/// Options of `plan`.
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    /// The run file whose batch times the prediction uses: throughput
    /// records of the backend, algorithm and operation at several batches
    /// (e.g. `pqcprof cpu --batch-sweep 256 --threads 1`).
    #[arg(long, value_name = "RUN_FILE")]
    pub from: PathBuf,
    /// The backend whose records to use (liboqs-cpu, native-gpu, cupqc).
    #[arg(long, default_value = crate::backend::liboqs::NAME)]
    pub backend: String,
    /// The algorithm, e.g. ML-KEM-768.
    #[arg(long = "alg", value_name = "NAME")]
    pub algorithm: Algorithm,
    /// The operation (keygen, encaps, decaps, sign, verify).
    #[arg(long = "op", value_name = "OP")]
    pub operation: Operation,
    /// Requests per second offered (Poisson arrivals unless --arrivals
    /// uniform); without it and without --trace, only the highest rate
    /// under --slo is predicted.
    #[arg(long, value_name = "PER_SEC", allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// How requests arrive at --rate.
    #[arg(long, default_value = "poisson", value_parser = ["poisson", "uniform"])]
    pub arrivals: String,
    /// Replay these arrival times instead (seconds, one per line, in order).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rate", "arrivals"])]
    pub trace: Option<PathBuf>,
    /// A latency objective, e.g. p99=2ms, p99.9=500us: the prediction says
    /// whether it is met and the highest Poisson rate that meets it.
    #[arg(long, value_name = "pNN=TIME")]
    pub slo: Option<Slo>,
    /// Requests in one batch at most, or `auto` (the batching with the
    /// lowest latency that keeps up).
    #[arg(
        long,
        value_name = "N|auto",
        default_value = "auto",
        allow_negative_numbers = true
    )]
    pub max_batch: String,
    /// Milliseconds the oldest request may wait for a batch to fill, or
    /// `auto` (chosen with --max-batch auto).
    #[arg(
        long,
        value_name = "MS|auto",
        default_value = "auto",
        allow_negative_numbers = true
    )]
    pub max_wait: String,
    /// Workers serving batches at once: CPU threads each running its own
    /// batch (the one-thread records give each one's batch time).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub workers: u32,
    /// Seed of the Poisson arrivals (the same seed, the same prediction).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the prediction as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A fixed batching (`--max-batch`, `--max-wait`), or `None` for auto;
/// bad values named.
pub(super) fn batching(
    max_batch_arg: &str,
    max_wait_arg: &str,
    top: usize,
    top_why: &str,
) -> Result<Option<batcher::Policy>, String> {
    let auto = |s: &str| s.eq_ignore_ascii_case("auto");
    match (auto(max_batch_arg), auto(max_wait_arg)) {
        (true, true) => return Ok(None),
        (true, false) | (false, true) => {
            return Err(format!(
                "--max-batch {} with --max-wait {}: give both as numbers, or both as auto",
                max_batch_arg, max_wait_arg
            ))
        }
        _ => {}
    }
    let max_batch: usize = max_batch_arg
        .parse()
        .ok()
        .filter(|&b| b >= 1)
        .ok_or_else(|| {
            format!("--max-batch {max_batch_arg}: use a whole number of 1 or more, or auto")
        })?;
    if max_batch > top {
        return Err(format!(
            "--max-batch {max_batch}: at most {top} here ({top_why})"
        ));
    }
    let max_wait: f64 = max_wait_arg
        .parse()
        .ok()
        .filter(|w: &f64| w.is_finite() && *w >= 0.0)
        .ok_or_else(|| {
            format!("--max-wait {max_wait_arg}: use milliseconds, 0 or more, or auto")
        })?;
    Ok(Some(batcher::Policy {
        max_batch,
        max_wait: max_wait / 1e3,
    }))
}

/// What `plan --json` prints.
#[derive(Debug, Serialize)]
struct Plan {
    format: &'static str,
    version: u32,
    /// Always true: a simulation of the batcher over measured batch times,
    /// not a measurement.
    predicted: bool,
    from: String,
    backend: String,
    algorithm: &'static str,
    operation: &'static str,
    workers: u32,
    curve: CurveOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    arrivals: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    point: Option<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slo: Option<Slo>,
    /// With --slo: the highest Poisson rate that meets it, with its
    /// batching (null when even a light load misses it).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rate_under_slo: Option<Option<Point>>,
}

#[derive(Debug, Serialize)]
struct CurveOut {
    basis: &'static str,
    points: Vec<CurvePoint>,
}

#[derive(Debug, Serialize)]
struct CurvePoint {
    batch: usize,
    batch_ms: f64,
}

/// `pqcprof plan`.
pub fn run_plan(args: &PlanArgs) -> anyhow::Result<i32> {
    let (run, warnings) = crate::schema::load::read_run(&args.from, "F1").map_err(|e| {
        let field = if e.field.is_empty() {
            String::new()
        } else {
            format!("field `{}`: ", e.field)
        };
        anyhow::anyhow!("--from {}: {field}{}", args.from.display(), e.message)
    })?;
    for w in warnings {
        log::warn!(
            "{}: field `{}`: {}",
            args.from.display(),
            w.field,
            w.message
        );
    }
    let records: Vec<_> = run.records.into_iter().map(|(_, r)| r).collect();
    let curve = curve::Curve::from_records(&records, &args.backend, args.algorithm, args.operation)
        .map_err(|e| anyhow::anyhow!("--from {}: {e}", args.from.display()))?;
    let policy = batching(
        &args.max_batch,
        &args.max_wait,
        curve.max_batch(),
        "the run file's largest measured batch: a prediction does not go beyond what was measured",
    )
    .map_err(anyhow::Error::msg)?;
    let arrivals = match (&args.trace, args.rate) {
        (Some(t), _) => Some(Arrivals::Trace(
            arrivals::read_trace(t).map_err(anyhow::Error::msg)?,
        )),
        (None, Some(r)) => {
            let rate = arrivals::check_rate("--rate", r).map_err(anyhow::Error::msg)?;
            Some(match args.arrivals.as_str() {
                "uniform" => Arrivals::Uniform { rate },
                _ => Arrivals::Poisson {
                    rate,
                    seed: args.seed,
                },
            })
        }
        (None, None) if args.slo.is_some() => None,
        (None, None) => anyhow::bail!(
            "plan needs a load: --rate PER_SEC, --trace FILE, or --slo pNN=TIME (for the highest rate that meets it)"
        ),
    };
    let workers = args.workers as usize;
    let slo = args.slo.as_ref();
    let point = arrivals.as_ref().map(|a| match policy {
        Some(p) => planner::predict(&args.backend, &curve, workers, a, p, slo),
        None => planner::best(&args.backend, &curve, workers, a, slo),
    });
    let max_rate =
        slo.map(|s| planner::max_rate_under(&args.backend, &curve, workers, s, args.seed));
    let plan = Plan {
        format: "pqcprof-plan",
        version: 1,
        predicted: true,
        from: args.from.display().to_string(),
        backend: args.backend.clone(),
        algorithm: args.algorithm.name(),
        operation: args.operation.cli_name(),
        workers: args.workers,
        curve: CurveOut {
            basis: curve.basis,
            points: curve
                .points
                .iter()
                .map(|&(batch, s)| CurvePoint {
                    batch,
                    batch_ms: s * 1e3,
                })
                .collect(),
        },
        arrivals: arrivals.as_ref().map(describe_arrivals),
        point,
        slo: args.slo.clone(),
        max_rate_under_slo: max_rate,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{}", text(&plan, policy.is_none()));
    }
    Ok(crate::core::exit::OK)
}

pub(super) fn describe_arrivals(a: &Arrivals) -> String {
    match a {
        Arrivals::Poisson { rate, seed } => format!("poisson at {rate}/s, seed {seed}"),
        Arrivals::Uniform { rate } => format!("uniform at {rate}/s"),
        Arrivals::Trace(t) => format!("trace of {} requests", t.len()),
    }
}

pub(super) fn fmt_rate(r: f64) -> String {
    crate::core::units::grouped(r.round())
}

pub(super) fn percentiles(name: &str, p: &latency::Percentiles) -> String {
    format!(
        "  {name:<9} p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  p99.9 {:.3} ms  max {:.3} ms\n",
        p.p50, p.p90, p.p99, p.p999, p.max
    )
}

/// The prediction as a person reads it.
fn text(plan: &Plan, auto: bool) -> String {
    let batches: Vec<String> = plan
        .curve
        .points
        .iter()
        .map(|p| p.batch.to_string())
        .collect();
    let mut s = format!(
        "plan: {} {} {}, {} worker(s); predicted (a simulation of the batcher over the batch times in {}: {}, batches {}), not measured\n",
        plan.backend,
        plan.algorithm,
        plan.operation,
        plan.workers,
        plan.from,
        plan.curve.basis,
        batches.join(", ")
    );
    if let (Some(p), Some(a)) = (&plan.point, &plan.arrivals) {
        s += &format!(
            "  arrivals  {a}\n  batching  max-batch {}, max-wait {} ms{}\n",
            p.max_batch,
            p.max_wait_ms,
            if auto {
                " (auto: the lowest latency that keeps up)"
            } else {
                ""
            }
        );
        s += &percentiles("latency", &p.waits.latency_ms);
        s += &percentiles("queue", &p.waits.queue_ms);
        s += &percentiles("service", &p.waits.service_ms);
        s += &format!(
            "  served    {}/s of {}/s offered{}\n",
            fmt_rate(p.achieved_rate),
            fmt_rate(p.offered_rate),
            if p.saturated {
                ": SATURATED, the queue grows (the percentiles hold for this window only)"
            } else {
                ""
            }
        );
        if let (Some(slo), Some(met)) = (&plan.slo, p.meets_slo) {
            s += &format!(
                "  objective {}<={} ms: {}\n",
                slo.percentile,
                slo.bound_ms,
                if met { "met" } else { "missed" }
            );
        }
    }
    if let (Some(slo), Some(top)) = (&plan.slo, &plan.max_rate_under_slo) {
        s += &match top {
            Some(t) => format!(
                "  highest rate with {}<={} ms: {}/s (max-batch {}, max-wait {} ms, {} {:.3} ms)\n",
                slo.percentile,
                slo.bound_ms,
                fmt_rate(t.offered_rate),
                t.max_batch,
                t.max_wait_ms,
                slo.percentile,
                planner::rank(t, Some(slo))
            ),
            None => format!(
                "  highest rate with {}<={} ms: none, even a light load misses it (one batch takes {:.3} ms)\n",
                slo.percentile,
                slo.bound_ms,
                plan.curve.points.first().map_or(0.0, |p| p.batch_ms)
            ),
        };
    }
    s
}
