//! `pqcprof plan`'s prediction from a run file's batch times (or batch
//! times measured here), as a value to print as text or JSON.

use super::options::LoadOptions;
use super::words::{describe_arrivals, fmt_rate, percentiles};
use super::{arrivals, curve, latency, planner};
use crate::core::catalog::{Algorithm, Operation};
use crate::core::units::printable;
use arrivals::Arrivals;
use latency::Slo;
use planner::Point;
use serde::Serialize;
use std::path::PathBuf;

/// What `plan` predicts from: the checked arguments of `pqcprof plan`.
#[derive(Debug, Clone)]
pub struct PlanInput {
    /// The run file whose batch times to use; `None`: measure them here.
    pub from: Option<PathBuf>,
    /// The backend whose records to use, or to measure on.
    pub backend: String,
    /// Without `from`: the largest batch measured.
    pub batch_top: u32,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The operation.
    pub operation: Operation,
    /// Requests per second offered, if given.
    pub rate: Option<f64>,
    /// Arrival times to replay instead, if given.
    pub trace: Option<PathBuf>,
    /// Workers serving batches at once.
    pub workers: u32,
    /// Arrivals, batching and objective.
    pub load: LoadOptions,
    /// The dispatcher's own cost: `auto` or milliseconds.
    pub handoff_ms: String,
}

/// A prediction: what `plan --json` prints, and [`Plan::text`] says.
#[derive(Debug, Serialize)]
pub struct Plan {
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
    /// With several workers: whether batches are slowed by the others
    /// running beside them, and from what.
    #[serde(skip_serializing_if = "Option::is_none")]
    contention: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arrivals: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    point: Option<Point>,
    /// How far the batch times may be off: the largest relative half-width
    /// of a measured batch's median time (see `Curve::noise`).
    input_noise: f64,
    /// With `--max-batch auto`: the batchings with another largest batch
    /// whose latency lies within that noise of the chosen one's; another
    /// measurement may choose one of them instead.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    within_noise: Vec<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slo: Option<Slo>,
    /// With --slo: the highest Poisson rate that meets it, with its
    /// batching (null when even a light load misses it).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rate_under_slo: Option<Option<Point>>,
    /// Whether the batching was chosen per rate (`--max-batch auto`).
    #[serde(skip)]
    auto: bool,
}

#[derive(Debug, Serialize)]
struct CurveOut {
    basis: &'static str,
    points: Vec<crate::schema::offload::CurvePoint>,
    /// The dispatcher's own cost added to the simulated batches, measured
    /// on this host when the plan was made (or given).
    handoff: curve::Handoff,
    /// With several workers, where the run file has them: batch times with
    /// all of them busy at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    contended: Option<crate::schema::offload::ContendedCurve>,
}

/// What `from` says of batch times measured by the plan itself.
const MEASURED_HERE: &str = "measured here just now";

/// The batch times to predict from, and where they came from: the run
/// file given, or measured here.
fn batch_times(args: &PlanInput) -> anyhow::Result<(curve::Curve, String)> {
    let Some(from) = &args.from else {
        let backends = [
            crate::backend::liboqs::NAME,
            crate::backend::native_gpu::NAME,
            crate::backend::cupqc::BACKEND_NAME,
        ];
        if !backends.contains(&args.backend.as_str()) {
            anyhow::bail!(
                "invalid --backend {}: without --from, plan measures on one of {}",
                args.backend,
                backends.join(", ")
            );
        }
        let workers = args.workers as usize;
        let mut curve = super::serve::measure_here(
            &args.backend,
            args.algorithm,
            args.operation,
            workers,
            args.batch_top as usize,
        )?;
        if !args.handoff_ms.eq_ignore_ascii_case("auto") {
            curve.handoff = handoff(&args.handoff_ms)?;
        }
        let here = format!(
            "{MEASURED_HERE} ({}, {workers} worker{})",
            args.backend,
            if workers == 1 { "" } else { "s" }
        );
        return Ok((curve, here));
    };
    let (run, warnings) = crate::schema::load::read_checked(from, "F1").map_err(|e| {
        let field = if e.field.is_empty() {
            String::new()
        } else {
            format!("field `{}`: ", e.field)
        };
        anyhow::anyhow!("--from {}: {field}{}", from.display(), e.message)
    })?;
    for w in warnings {
        log::warn!(
            "{}: field `{}`: {}",
            from.display(),
            printable(&w.field),
            printable(&w.message)
        );
    }
    let records: Vec<_> = run.records.into_iter().map(|(_, r)| r).collect();
    Ok((curve_of(args, from, &records)?, from.display().to_string()))
}

/// `pqcprof plan`'s prediction: the batch times (from the run file, or
/// measured here), then the batcher simulated over them at the rate or
/// trace given, and the highest rate under the objective.
pub fn predict(args: &PlanInput) -> anyhow::Result<Plan> {
    let (curve, from) = batch_times(args)?;
    let policy = args
        .load
        .policy(
            curve.max_batch(),
            if args.from.is_some() {
                "the run file's largest measured batch: a prediction does not go beyond what was measured"
            } else {
                "--batch-top, the largest batch measured: a prediction does not go beyond what was measured"
            },
        )
        .map_err(anyhow::Error::msg)?;
    let arrivals = match (&args.trace, args.rate) {
        (Some(t), _) => Some(Arrivals::Trace(
            arrivals::read_trace(t).map_err(anyhow::Error::msg)?,
        )),
        (None, Some(r)) => {
            let rate = arrivals::check_rate("--rate", r).map_err(anyhow::Error::msg)?;
            Some(args.load.at(rate))
        }
        (None, None) if args.load.slo.is_some() => None,
        (None, None) => anyhow::bail!(
            "plan needs a load: --rate PER_SEC, --trace FILE, or --slo pNN=TIME (for the highest rate that meets it)"
        ),
    };
    let workers = args.workers as usize;
    let slo = args.load.slo.as_ref();
    let model = planner::Planner {
        backend: &args.backend,
        curve: &curve,
        workers,
        queue_limit: None,
    };
    let (point, within_noise) = match (arrivals.as_ref(), policy) {
        (Some(a), Some(p)) => (Some(model.predict(a, p, slo)), vec![]),
        (Some(a), None) => {
            let (best, near) = model.best_and_near(a, slo);
            (Some(best), near)
        }
        (None, _) => (None, vec![]),
    };
    let max_rate = slo.map(|s| model.max_rate_under(s, args.load.seed));
    let plan = Plan {
        format: "pqcprof-plan",
        version: 1,
        predicted: true,
        from,
        backend: args.backend.clone(),
        algorithm: args.algorithm.name(),
        operation: args.operation.cli_name(),
        workers: args.workers,
        curve: CurveOut {
            basis: curve.basis,
            points: curve.rows(),
            handoff: curve.handoff,
            contended: curve.contended_rows(),
        },
        contention: (workers > 1).then(|| contention(&curve, args, workers)),
        arrivals: arrivals.as_ref().map(describe_arrivals),
        point,
        input_noise: curve.noise(),
        within_noise,
        slo: args.load.slo.clone(),
        max_rate_under_slo: max_rate,
        auto: policy.is_none(),
    };
    Ok(plan)
}

/// The batch times of `args`'s backend, algorithm and operation in
/// `records`, with the dispatcher's hand-off: the records time batches
/// alone, and a served batch costs the hand-off as well.
fn curve_of(
    args: &PlanInput,
    from: &std::path::Path,
    records: &[crate::schema::record::Record],
) -> anyhow::Result<curve::Curve> {
    let mut curve =
        curve::Curve::from_records(records, &args.backend, args.algorithm, args.operation)
            .map_err(|e| anyhow::anyhow!("--from {}: {e}", from.display()))?;
    curve.handoff = handoff(&args.handoff_ms)?;
    curve.contended = curve::Curve::contended_from_records(
        records,
        &args.backend,
        args.algorithm,
        args.operation,
        args.workers as usize,
    );
    Ok(curve)
}

/// What the plan says of contention between `workers` workers.
fn contention(curve: &curve::Curve, args: &PlanInput, workers: usize) -> String {
    let backend = &args.backend;
    let source = if args.from.is_some() {
        format!("from the records at --threads {workers}")
    } else {
        format!("measured here with {workers} workers busy at once")
    };
    match &curve.contended {
        Some(c) => format!(
            "modelled: a batch that starts while k of the {workers} workers are busy takes between the one-thread time (k = 1) and the all-busy time (k = {workers}), {source} (batches {})",
            c.points
                .iter()
                .map(|p| p.0.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "not modelled: no ok {backend} record at --threads {workers} with a batch a multiple of {workers}; every worker is taken to run as fast as one alone, so the latency predicted may be too low"
        ),
    }
}

/// `--handoff-ms`: measured here (`auto`), or milliseconds added to
/// every batch (no wake-up term).
fn handoff(v: &str) -> anyhow::Result<curve::Handoff> {
    if v.eq_ignore_ascii_case("auto") {
        return super::live::measure_handoff(false);
    }
    let ms: f64 = v
        .trim()
        .parse()
        .ok()
        .filter(|m: &f64| m.is_finite() && (0.0..=1000.0).contains(m))
        .ok_or_else(|| {
            anyhow::anyhow!("invalid --handoff-ms {v}: auto, or milliseconds from 0 to 1000")
        })?;
    Ok(curve::Handoff {
        per_batch_ms: ms,
        wake_ms: 0.0,
    })
}

impl Plan {
    /// The prediction as a person reads it.
    pub fn text(&self) -> String {
        text(self, self.auto)
    }
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
        "plan: {} {} {}, {} worker(s); predicted (a simulation of the batcher over the batch times {}: {}, batches {}), not measured\n",
        plan.backend,
        plan.algorithm,
        plan.operation,
        plan.workers,
        if plan.from.starts_with(MEASURED_HERE) {
            plan.from.clone()
        } else {
            format!("in {}", plan.from)
        },
        plan.curve.basis,
        batches.join(", ")
    );
    let h = &plan.curve.handoff;
    s += &format!(
        "  hand-off  {:.3} ms added to every batch, {:.3} ms more to one the dispatcher waited for (its own cost: handing a batch to a worker, waking)\n",
        h.per_batch_ms, h.wake_ms
    );
    if let Some(c) = &plan.contention {
        s += &format!("  contention {c}\n");
    }
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
        if !plan.within_noise.is_empty() {
            // The three nearest; `--json` has them all.
            const SHOWN: usize = 3;
            let mut near: Vec<String> = plan
                .within_noise
                .iter()
                .take(SHOWN)
                .map(|n| {
                    format!(
                        "max-batch {}, max-wait {} ms (p99 {:.3} ms)",
                        n.max_batch, n.max_wait_ms, n.waits.latency_ms.p99
                    )
                })
                .collect();
            if plan.within_noise.len() > SHOWN {
                near.push(format!(
                    "and {} more (--json lists them)",
                    plan.within_noise.len() - SHOWN
                ));
            }
            s += &format!(
                "  within the noise of the batch times (±{:.1}%), these do as well and another measurement may choose one: {}\n",
                plan.input_noise * 100.0,
                near.join("; ")
            );
        }
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
        if let (Some(slo), Some(why)) = (&plan.slo, &p.slo_unresolved) {
            s += &format!(
                "  objective {}<={} ms: {why}\n",
                slo.percentile, slo.bound_ms
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
            None if slo.requests_to_resolve() > planner::MAX_SIMULATED as u64 => format!(
                "  highest rate with {}<={} ms: not resolvable: {} needs {} simulated requests, the planner simulates at most {}\n",
                slo.percentile,
                slo.bound_ms,
                slo.percentile,
                crate::core::units::grouped(slo.requests_to_resolve() as f64),
                crate::core::units::grouped(planner::MAX_SIMULATED as f64)
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
