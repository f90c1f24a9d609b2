//! Reading other tools' published results for `report`: pqc-sig-bench-c's
//! CSVs and cuPQC_benchmark's throughput and latency JSON, recognised by
//! their content whatever their names. Run files are left to
//! [`crate::schema::load`]; what this reads becomes
//! [`ImportedFile`]s, which only the "Beside published results" section
//! ([`crate::report::beside`]) shows.

use crate::core::catalog::{from_sig_bench_name, Algorithm, Operation};
use crate::schema::imported::{ImportFormat, ImportedFigure, ImportedFile, ImportedRow};
use crate::schema::load::{Problem, MAX_FILE_BYTES};
use serde_json::{Map, Value};
use std::path::Path;

/// A layout recognised in a file's text, with what recognising it parsed.
enum Recognised {
    /// pqc-sig-bench-c's CSV.
    SigBenchCsv,
    /// cuPQC_benchmark's JSON (or pqcprof's CPU files in its layout).
    Cupqc {
        /// Throughput or latency.
        format: ImportFormat,
        /// The parsed file.
        root: Map<String, Value>,
        /// The key of its device block, `GPU` or `CPU`.
        device: &'static str,
    },
}

impl Recognised {
    fn format(&self) -> ImportFormat {
        match self {
            Recognised::SigBenchCsv => ImportFormat::SigBenchCsv,
            Recognised::Cupqc { format, .. } => *format,
        }
    }
}

/// The layout of `text`, when it is one this module imports; `None` for
/// anything else (a run file included).
pub fn detect(text: &str) -> Option<ImportFormat> {
    recognise(text).map(|r| r.format())
}

fn recognise(text: &str) -> Option<Recognised> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if first.starts_with('#') {
        let header = format!("# {}", crate::write::csv::header());
        return text
            .lines()
            .any(|l| l.trim_end() == header)
            .then_some(Recognised::SigBenchCsv);
    }
    // A cheap look first, so run files are not parsed twice.
    if text.contains("\"schema_version\"")
        || !(text.contains("\"GPU\"") || text.contains("\"CPU\""))
    {
        return None;
    }
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    let (device, _) = device_block(&root)?;
    let mut ops = root
        .iter()
        .filter(|(k, _)| k.starts_with("ML-KEM-") || k.starts_with("ML-DSA-"))
        .filter_map(|(_, v)| v.as_object())
        .flat_map(|a| a.values().filter_map(Value::as_object));
    let op = ops.next()?;
    let format = if op.contains_key("throughput") {
        ImportFormat::CupqcThroughput
    } else if op.contains_key("latency_us") {
        ImportFormat::CupqcLatency
    } else {
        return None;
    };
    Some(Recognised::Cupqc {
        format,
        root,
        device,
    })
}

/// cuPQC_benchmark's device block, `GPU`, or the `CPU` of pqcprof's CPU
/// backends' files in that layout (recognised so that [`read`] can say
/// what to give instead): its key and object.
fn device_block(o: &Map<String, Value>) -> Option<(&'static str, &Map<String, Value>)> {
    ["GPU", "CPU"]
        .into_iter()
        .find_map(|k| o.get(k).and_then(Value::as_object).map(|b| (k, b)))
}

/// A warning about one row or field: `(field, message)`.
type Warn<'w> = dyn FnMut(String, String) + 'w;

/// Reads `path` as an imported file when its content is one of the layouts
/// this module knows: `Ok(None)` when it is not (or cannot be read; the
/// run-file reader then says why), `Err` naming what is wrong when it is
/// one but unusable. Warnings about single rows go to `problems`.
pub fn read(
    path: &Path,
    label: &str,
    problems: &mut Vec<Problem>,
) -> Result<Option<ImportedFile>, Problem> {
    let Some(text) = read_text(path) else {
        return Ok(None);
    };
    let Some(found) = recognise(&text) else {
        return Ok(None);
    };
    let shown = path.display().to_string();
    let fatal = |message: String| Problem {
        file: shown.clone(),
        field: String::new(),
        message,
        fatal: true,
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.clone());
    let mut warn = |field: String, message: String| {
        problems.push(Problem {
            file: shown.clone(),
            field,
            message,
            fatal: false,
        })
    };
    let format = found.format();
    let mut file = ImportedFile {
        label: label.to_string(),
        path: path.to_path_buf(),
        file_name,
        format,
        machine: String::new(),
        machine_from: "its metadata",
        gpu: false,
        rows: vec![],
    };
    match found {
        Recognised::SigBenchCsv => read_sig_bench(&text, &mut file, &mut warn),
        Recognised::Cupqc { root, device, .. } => read_cupqc(&root, device, &mut file, &mut warn),
    }
    .map_err(fatal)?;
    if file.rows.is_empty() {
        return Err(fatal(format!(
            "recognised as a {}, but it has no usable figure",
            format.describe()
        )));
    }
    Ok(Some(file))
}

/// The text of a regular file no larger than the run-file limit, or `None`
/// (the run-file reader then says what is wrong with it).
fn read_text(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_FILE_BYTES => {}
        _ => return None,
    }
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// A pqc-sig-bench-c CSV: its machine from the metadata (or the file
/// name), then one figure per row; `Err` says why the whole file is
/// unusable.
fn read_sig_bench(text: &str, file: &mut ImportedFile, warn: &mut Warn) -> Result<(), String> {
    let parsed = crate::write::csv::parse(text).map_err(|e| {
        format!(
            "a pqc-sig-bench-c CSV that cannot be read ({e:#}); valid rows are `algorithm,operation,ms_per_op,ops_per_sec,iterations`"
        )
    })?;
    let meta = |k: &str| {
        parsed
            .meta
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    if let Some(v) = meta("pqcprof") {
        return Err(format!(
            "a CSV written by pqcprof {v}, not a published result: give the sweep's run file (run-*-sweep.json in the same folder) instead"
        ));
    }
    let (host, host_from) = match meta("hostname") {
        Some(h) => (Some(h), "its metadata"),
        None => (
            sig_bench_host(&file.file_name),
            "its metadata and file name",
        ),
    };
    (file.machine, file.machine_from) = match (meta("cpu"), host) {
        (Some(cpu), Some(h)) => (format!("{cpu} ({h})"), host_from),
        (Some(cpu), None) => (cpu, "its metadata"),
        (None, Some(h)) => (h, "its file name"),
        (None, None) => (file.file_name.clone(), "its file name"),
    };
    for (i, row) in parsed.rows.iter().enumerate() {
        let field = format!("row {} ({})", i + 1, row[0]);
        let op = match row[1].parse::<Operation>() {
            Ok(op) => op,
            Err(e) => {
                warn(field, format!("{e}; row left out"));
                continue;
            }
        };
        let ops: f64 = row[3].parse().unwrap_or(f64::NAN);
        if !(ops.is_finite() && ops > 0.0) {
            warn(
                field,
                format!(
                    "ops_per_sec '{}' is not a positive number; row left out",
                    row[3]
                ),
            );
            continue;
        }
        file.rows.push(ImportedRow {
            algorithm: from_sig_bench_name(&row[0]).to_string(),
            name_in_file: row[0].clone(),
            operation: op,
            figure: ImportedFigure::OpsPerSec(ops),
        });
    }
    Ok(())
}

/// A cuPQC_benchmark JSON file: its GPU from the device block, then each
/// algorithm's operations; `Err` for pqcprof's own CPU files in that
/// layout.
fn read_cupqc(
    root: &Map<String, Value>,
    device: &str,
    file: &mut ImportedFile,
    warn: &mut Warn,
) -> Result<(), String> {
    if device == "CPU" {
        // cuPQC_benchmark measures GPUs only; a `CPU` block is the
        // layout pqcprof writes for its CPU backends.
        return Err(
            "a cuPQC-shaped file of pqcprof's CPU backends (device block `CPU`), not a published result: give the run file it came from (outputs/run-*.json) instead".into(),
        );
    }
    file.gpu = device == "GPU";
    (file.machine, file.machine_from) = match root
        .get(device)
        .and_then(|b| b.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        Some(n) => (n.to_string(), "its metadata"),
        None => (file.file_name.clone(), "its file name"),
    };
    for (name, ops) in root.iter().filter(|(k, _)| *k != device) {
        let alg = match name.parse::<Algorithm>() {
            Ok(a) => a,
            Err(e) => {
                warn(name.clone(), format!("{e}; left out"));
                continue;
            }
        };
        let Some(ops) = ops.as_object() else {
            warn(name.clone(), "not an object of operations; left out".into());
            continue;
        };
        for (op_name, body) in ops {
            cupqc_figure(alg, name, op_name, body, file, warn);
        }
    }
    Ok(())
}

/// The mean of one operation of a cuPQC_benchmark file, as a row of
/// `file`, or a warning saying why it is left out.
fn cupqc_figure(
    alg: Algorithm,
    name: &str,
    op_name: &str,
    body: &Value,
    file: &mut ImportedFile,
    warn: &mut Warn,
) {
    let latency = file.format == ImportFormat::CupqcLatency;
    let field_name = if latency { "latency_us" } else { "throughput" };
    let label = |op: Operation| {
        if latency {
            crate::write::cupqc_json::latency_label(alg.family(), op)
        } else {
            op.label()
        }
    };
    let Some(op) = alg.operations().into_iter().find(|op| {
        op.label() == op_name
            || crate::write::cupqc_json::latency_label(alg.family(), *op) == op_name
    }) else {
        let valid: Vec<&str> = alg.operations().into_iter().map(label).collect();
        warn(
            format!("{name}.{op_name}"),
            format!("unknown operation; valid: {}; left out", valid.join(", ")),
        );
        return;
    };
    let mean = body.get(field_name).and_then(|f| f.get("mean"));
    match mean.and_then(Value::as_f64) {
        Some(m) if m.is_finite() && m > 0.0 => file.rows.push(ImportedRow {
            algorithm: alg.name().to_string(),
            name_in_file: name.to_string(),
            operation: op,
            figure: if latency {
                ImportedFigure::LatencyUs(m)
            } else {
                ImportedFigure::OpsPerSec(m)
            },
        }),
        _ => warn(
            format!("{name}.{op_name}.{field_name}.mean"),
            format!(
                "{} is not a positive number; left out",
                mean.map_or("missing".to_string(), |v| v.to_string())
            ),
        ),
    }
}

/// The host in pqc-sig-bench-c's file names,
/// `<timestamp>_<arch>_<hostname>_<type>.csv` (`x86_64` keeps its
/// underscore): `c8i.large` from `202605_x86_64_c8i.large_liboqs.csv`.
pub fn sig_bench_host(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".csv")?;
    let parts: Vec<&str> = stem.split('_').collect();
    let arch_len = if parts.get(1..3) == Some(&["x86", "64"][..]) {
        2
    } else {
        1
    };
    let host = parts.get(1 + arch_len..parts.len().checked_sub(1)?)?;
    (!host.is_empty()).then(|| host.join("_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_sig_bench_file_names() {
        assert_eq!(
            sig_bench_host("202605_x86_64_c8i.large_liboqs.csv").as_deref(),
            Some("c8i.large")
        );
        assert_eq!(
            sig_bench_host("202606_aarch64_rpi3b_liboqs.csv").as_deref(),
            Some("rpi3b")
        );
        assert_eq!(
            sig_bench_host("20260101T000000_x86_64_my_host_traditional.csv").as_deref(),
            Some("my_host")
        );
        assert_eq!(sig_bench_host("results.csv"), None);
        assert_eq!(sig_bench_host("x.json"), None);
    }

    #[test]
    fn layouts_are_recognised_by_content() {
        let csv = "# date: 2026-01-01T00:00:00\n# algorithm,operation,ms_per_op,ops_per_sec,iterations\nP-256,sign,0.02,50000.0,500000\n";
        assert_eq!(detect(csv), Some(ImportFormat::SigBenchCsv));
        let tp = r#"{"GPU": {"name": "G"}, "ML-KEM-512": {"KeyGen": {"throughput": {"mean": 1.0, "std": 0.0}}}}"#;
        assert_eq!(detect(tp), Some(ImportFormat::CupqcThroughput));
        let lat = r#"{"GPU": {"name": "G"}, "ML-DSA-44": {"Signing": {"latency_us": {"mean": 1.0, "std": 0.0}}}}"#;
        assert_eq!(detect(lat), Some(ImportFormat::CupqcLatency));
        assert_eq!(detect(r#"{"schema_version": 1, "records": []}"#), None);
        assert_eq!(detect("# just a comment\n"), None);
        assert_eq!(detect(""), None);
    }
}
