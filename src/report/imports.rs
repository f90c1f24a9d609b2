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

/// The layout of `text`, when it is one this module imports; `None` for
/// anything else (a run file included).
pub fn detect(text: &str) -> Option<ImportFormat> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if first.starts_with('#') {
        let header = format!("# {}", crate::write::csv::header());
        return text
            .lines()
            .any(|l| l.trim_end() == header)
            .then_some(ImportFormat::SigBenchCsv);
    }
    // A cheap look first, so run files are not parsed twice.
    if text.contains("\"schema_version\"")
        || !(text.contains("\"GPU\"") || text.contains("\"CPU\""))
    {
        return None;
    }
    let v: Value = serde_json::from_str(text).ok()?;
    let o = v.as_object()?;
    device_block(o)?;
    let mut ops = o
        .iter()
        .filter(|(k, _)| k.starts_with("ML-KEM-") || k.starts_with("ML-DSA-"))
        .filter_map(|(_, v)| v.as_object())
        .flat_map(|a| a.values().filter_map(Value::as_object));
    let op = ops.next()?;
    if op.contains_key("throughput") {
        Some(ImportFormat::CupqcThroughput)
    } else if op.contains_key("latency_us") {
        Some(ImportFormat::CupqcLatency)
    } else {
        None
    }
}

/// cuPQC_benchmark's device block, `GPU`, or the `CPU` of pqcprof's CPU
/// backends' files in that layout (recognised so that [`read`] can say
/// what to give instead): its key and object.
fn device_block(o: &Map<String, Value>) -> Option<(&'static str, &Map<String, Value>)> {
    ["GPU", "CPU"]
        .into_iter()
        .find_map(|k| o.get(k).and_then(Value::as_object).map(|b| (k, b)))
}

/// Reads `path` as an imported file when its content is one of the layouts
/// this module knows: `Ok(None)` when it is not (or cannot be read; the
/// run-file reader then says why), `Err` naming what is wrong when it is
/// one but unusable. Warnings about single rows go to `problems`.
pub fn read(
    path: &Path,
    label: &str,
    problems: &mut Vec<Problem>,
) -> Result<Option<ImportedFile>, Problem> {
    let shown = path.display().to_string();
    let fatal = |message: String| Problem {
        file: shown.clone(),
        field: String::new(),
        message,
        fatal: true,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_FILE_BYTES => {}
        _ => return Ok(None),
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(format) = detect(&text) else {
        return Ok(None);
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
    let mut file = ImportedFile {
        label: label.to_string(),
        path: path.to_path_buf(),
        file_name: file_name.clone(),
        format,
        machine: String::new(),
        machine_from: "its metadata",
        gpu: false,
        rows: vec![],
    };
    match format {
        ImportFormat::SigBenchCsv => {
            let parsed = crate::write::csv::parse(&text).map_err(|e| {
                fatal(format!(
                    "a pqc-sig-bench-c CSV that cannot be read ({e:#}); valid rows are `algorithm,operation,ms_per_op,ops_per_sec,iterations`"
                ))
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
                return Err(fatal(format!(
                    "a CSV written by pqcprof {v}, not a published result: give the sweep's run file (run-*-sweep.json in the same folder) instead"
                )));
            }
            let (host, host_from) = match meta("hostname") {
                Some(h) => (Some(h), "its metadata"),
                None => (sig_bench_host(&file_name), "its metadata and file name"),
            };
            (file.machine, file.machine_from) = match (meta("cpu"), host) {
                (Some(cpu), Some(h)) => (format!("{cpu} ({h})"), host_from),
                (Some(cpu), None) => (cpu, "its metadata"),
                (None, Some(h)) => (h, "its file name"),
                (None, None) => (file_name.clone(), "its file name"),
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
        }
        ImportFormat::CupqcThroughput | ImportFormat::CupqcLatency => {
            let v: Value = serde_json::from_str(&text).expect("detect parsed it");
            let o = v.as_object().expect("detect checked");
            let (key, block) = device_block(o).expect("detect checked");
            if key == "CPU" {
                // cuPQC_benchmark measures GPUs only; a `CPU` block is the
                // layout pqcprof writes for its CPU backends.
                return Err(fatal(
                    "a cuPQC-shaped file of pqcprof's CPU backends (device block `CPU`), not a published result: give the run file it came from (outputs/run-*.json) instead".into(),
                ));
            }
            file.gpu = key == "GPU";
            (file.machine, file.machine_from) = match block
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                Some(n) => (n.to_string(), "its metadata"),
                None => (file_name.clone(), "its file name"),
            };
            let (field_name, latency) = match format {
                ImportFormat::CupqcLatency => ("latency_us", true),
                _ => ("throughput", false),
            };
            for (name, ops) in o.iter().filter(|(k, _)| *k != key) {
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
                    let field = format!("{name}.{op_name}.{field_name}.mean");
                    let Some(op) = alg.operations().into_iter().find(|op| {
                        op.label() == op_name
                            || crate::write::cupqc_json::latency_label(alg.family(), *op) == op_name
                    }) else {
                        let valid: Vec<&str> = alg
                            .operations()
                            .iter()
                            .map(|op| {
                                if latency {
                                    crate::write::cupqc_json::latency_label(alg.family(), *op)
                                } else {
                                    op.label()
                                }
                            })
                            .collect();
                        warn(
                            format!("{name}.{op_name}"),
                            format!("unknown operation; valid: {}; left out", valid.join(", ")),
                        );
                        continue;
                    };
                    let mean = body
                        .get(field_name)
                        .and_then(|f| f.get("mean"))
                        .and_then(Value::as_f64);
                    match mean {
                        Some(m) if m.is_finite() && m > 0.0 => file.rows.push(ImportedRow {
                            algorithm: alg.name().to_string(),
                            name_in_file: name.clone(),
                            operation: op,
                            figure: if latency {
                                ImportedFigure::LatencyUs(m)
                            } else {
                                ImportedFigure::OpsPerSec(m)
                            },
                        }),
                        _ => warn(
                            field,
                            format!(
                                "{} is not a positive number; left out",
                                body.get(field_name)
                                    .and_then(|f| f.get("mean"))
                                    .map_or("missing".to_string(), |v| v.to_string())
                            ),
                        ),
                    }
                }
            }
        }
    }
    if file.rows.is_empty() {
        return Err(fatal(format!(
            "recognised as a {}, but it has no usable figure",
            format.describe()
        )));
    }
    Ok(Some(file))
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
