//! Views of a run file in cuPQC_benchmark's exact JSON shape
//! (`mlkem_results.json`, `mldsa_results.json`), so scripts written for
//! cuPQC_benchmark read our results unchanged.
//!
//! The device block is keyed `GPU` for GPU backends and `CPU` for CPU
//! backends (name and total memory of the host). For CPU backends
//! `peak_mem_mb` is the process's resident memory and `peak_gpu_util` the
//! process's CPU utilisation over all cores, keeping cuPQC_benchmark's key names.
//! Only records that passed their correctness gate appear; failed ones are
//! in the run file with their reason.

use crate::core::catalog::{Algorithm, Family, Operation};
use crate::core::stats::Summary;
use crate::schema::device::DeviceKind;
use crate::schema::record::{Mode, Record, Status};
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::{json, Map, Value};
use std::io;

/// Decimals cuPQC_benchmark prints in its throughput files (`14050340.24`).
pub const THROUGHPUT_DECIMALS: usize = 2;
/// Decimals cuPQC_benchmark prints in its latency files (`12.3456`).
pub const LATENCY_DECIMALS: usize = 4;

fn mean_std(s: Option<&Summary>, decimals: usize) -> Value {
    let round = |x: f64| {
        let scale = 10f64.powi(decimals as i32);
        (x * scale).round() / scale
    };
    match s {
        Some(s) => json!({ "mean": round(s.mean), "std": s.std.map(round) }),
        None => Value::Null,
    }
}

/// The operation key of a latency file. ML-KEM keeps the throughput
/// file's `KeyGen`/`Encaps`/`Decaps`; cuPQC_benchmark's ML-DSA latency program
/// writes `Key Generation`/`Signing`/`Verification`, and its extract
/// scripts look those keys up.
pub fn latency_label(family: Family, op: Operation) -> &'static str {
    match (family, op) {
        (Family::MlDsa, Operation::KeyGen) => "Key Generation",
        (Family::MlDsa, Operation::Sign) => "Signing",
        (Family::MlDsa, Operation::Verify) => "Verification",
        _ => op.label(),
    }
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

/// cuPQC_benchmark's layout: a device block, then per algorithm and
/// operation the object `metrics` makes of the record. Only records of the
/// family and mode that passed their gate; `None` when there are none.
fn view(
    records: &[&Record],
    family: Family,
    mode: Mode,
    label: impl Fn(Operation) -> &'static str,
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
                ops.insert(label(op).into(), metrics(r));
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
    let d = THROUGHPUT_DECIMALS;
    view(records, family, Mode::Throughput, Operation::label, |r| {
        json!({
            "throughput": mean_std(r.throughput_ops_per_sec.as_ref(), d),
            "peak_mem_mb": mean_std(r.peak_mem_mb.as_ref(), d),
            "peak_gpu_util": mean_std(r.peak_util_pct.as_ref(), d),
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
        |op| latency_label(family, op),
        |r| json!({ "latency_us": mean_std(r.latency_us.as_ref(), LATENCY_DECIMALS) }),
    )
}

/// Pretty JSON (two-space indent, as `write_json`) whose floating-point
/// numbers are printed with exactly `decimals` decimals, as cuPQC_benchmark's
/// files are (`1616.00`, `12.3400`); integers stay integers.
pub fn to_fixed_json(value: &Value, decimals: usize) -> Vec<u8> {
    let mut out = vec![];
    let fmt = FixedDecimals {
        pretty: PrettyFormatter::new(),
        decimals,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(value, &mut ser).expect("a JSON value always serialises");
    out.push(b'\n');
    out
}

/// serde_json's pretty layout with floats at a fixed number of decimals.
struct FixedDecimals {
    pretty: PrettyFormatter<'static>,
    decimals: usize,
}

impl Formatter for FixedDecimals {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        write!(w, "{:.*}", self.decimals, v)
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pretty.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_json_prints_every_float_with_the_given_decimals() {
        let v = json!({ "GPU": { "name": "x", "memory_total_mb": 24564 },
                        "a": { "mean": 1616.0, "std": 7.25 }, "l": [0.5] });
        let s = String::from_utf8(to_fixed_json(&v, 4)).unwrap();
        assert!(s.contains("\"memory_total_mb\": 24564\n"), "{s}");
        assert!(s.contains("\"mean\": 1616.0000,"), "{s}");
        assert!(s.contains("\"std\": 7.2500\n"), "{s}");
        assert!(s.contains("0.5000"), "{s}");
        let back: Value = serde_json::from_slice(&to_fixed_json(&v, 2)).unwrap();
        assert_eq!(back["a"]["std"], 7.25);
    }

    #[test]
    fn latency_keys_are_the_seeds() {
        assert_eq!(
            latency_label(Family::MlDsa, Operation::KeyGen),
            "Key Generation"
        );
        assert_eq!(latency_label(Family::MlDsa, Operation::Sign), "Signing");
        assert_eq!(
            latency_label(Family::MlDsa, Operation::Verify),
            "Verification"
        );
        assert_eq!(latency_label(Family::MlKem, Operation::KeyGen), "KeyGen");
        assert_eq!(latency_label(Family::MlKem, Operation::Decaps), "Decaps");
    }
}
