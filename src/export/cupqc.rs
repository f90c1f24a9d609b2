//! Views of a run file in cuPQC_benchmark's exact JSON shape
//! (`mlkem_results.json`, `mldsa_results.json`), so scripts written for the
//! seed tool read our results unchanged.
//!
//! The device block is keyed `GPU` for GPU backends and `CPU` for CPU
//! backends (name and total memory of the host). For CPU backends
//! `peak_mem_mb` is the process's resident memory and `peak_gpu_util` the
//! process's CPU utilisation over all cores, keeping the seed's key names.
//! Only records that passed their correctness gate appear; failed ones are
//! in the run file with their reason.

use crate::backend::DeviceKind;
use crate::catalog::{Algorithm, Family};
use crate::results::{Mode, Record, Status};
use crate::stats::Summary;
use serde_json::{json, Map, Value};

fn mean_std(s: Option<&Summary>) -> Value {
    match s {
        Some(s) => json!({ "mean": round2(s.mean), "std": round2(s.std) }),
        None => Value::Null,
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The file name for a family: `mlkem_results.json` / `mldsa_results.json`.
pub fn results_file_name(family: Family) -> &'static str {
    match family {
        Family::MlKem => "mlkem_results.json",
        Family::MlDsa => "mldsa_results.json",
    }
}

/// The latency file name: `mlkem_latency.json` / `mldsa_latency.json`.
pub fn latency_file_name(family: Family) -> &'static str {
    match family {
        Family::MlKem => "mlkem_latency.json",
        Family::MlDsa => "mldsa_latency.json",
    }
}

/// The seed tool's layout: a device block, then per algorithm and
/// operation the object `metrics` makes of the record. Only records of the
/// family and mode that passed their gate; `None` when there are none.
fn view(
    records: &[&Record],
    family: Family,
    mode: Mode,
    metrics: impl Fn(&Record) -> Value,
) -> Option<Value> {
    let ok: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.family == family.name() && r.status == Status::Ok && r.mode == mode)
        .collect();
    let first = ok.first()?;
    let key = match first.device.kind {
        DeviceKind::Gpu => "GPU",
        DeviceKind::Cpu => "CPU",
    };
    let mut root = Map::new();
    root.insert(
        key.into(),
        json!({ "name": first.device.name, "memory_total_mb": first.device.memory_total_mb }),
    );
    for alg in Algorithm::ALL.iter().filter(|a| a.family() == family) {
        let mut ops = Map::new();
        for op in alg.operations() {
            if let Some(r) = ok
                .iter()
                .find(|r| r.algorithm == alg.name() && r.operation == op)
            {
                ops.insert(op.label().into(), metrics(r));
            }
        }
        if !ops.is_empty() {
            root.insert(alg.name().into(), Value::Object(ops));
        }
    }
    Some(Value::Object(root))
}

/// Builds the throughput file for one family from records of one backend
/// and thread count. `None` when no record of the family passed.
pub fn throughput_view(records: &[&Record], family: Family) -> Option<Value> {
    view(records, family, Mode::Throughput, |r| {
        json!({
            "throughput": mean_std(r.throughput_ops_per_sec.as_ref()),
            "peak_mem_mb": mean_std(r.peak_mem_mb.as_ref()),
            "peak_gpu_util": mean_std(r.peak_util_pct.as_ref()),
        })
    })
}

/// Builds the latency file for one family: per algorithm and operation the
/// IQR-filtered mean and std of single-operation latency, microseconds.
pub fn latency_view(records: &[&Record], family: Family) -> Option<Value> {
    view(
        records,
        family,
        Mode::Latency,
        |r| json!({ "latency_us": mean_std(r.latency_us.as_ref()) }),
    )
}
