//! Reading one run file, forgivingly.
//!
//! A run file may come from another machine, an older or newer pqcprof, an
//! interrupted run or a hand edit. Each problem is described with the file
//! and the JSON path it concerns ([`crate::schema::diagnose`]), and only
//! what is really unusable is left out: a bad record costs that record, a
//! bad configuration block costs the configuration, and only a file that is
//! not a run file at all (not JSON, another format, a newer schema,
//! unreadable metadata) is dropped whole.

use crate::schema::diagnose::{
    file_error, join, json_error, kind_of, preview, typed, typed_array, FileError, Warning,
};
use crate::schema::metadata::Metadata;
use crate::schema::record::{Record, RunConfig, SCHEMA_VERSION};
use crate::schema::run_file::SymmetricRecord;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Run files larger than this are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

pub use crate::schema::shape::{MAX_RECORDS, MAX_SAMPLES};

/// One usable run file.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// Short label used in footnotes: `F1`, `F2`, ... in command-line order.
    pub label: String,
    /// The path as given.
    pub path: PathBuf,
    /// The file name without folders, for tables.
    pub file_name: String,
    /// Schema version the writer used.
    pub schema_version: u32,
    /// The machine and software measured.
    pub metadata: Metadata,
    /// The settings, when that block could be read.
    pub config: Option<RunConfig>,
    /// False when the run had not finished when the file was written.
    pub complete: bool,
    /// True when the run was stopped by Ctrl-C.
    pub interrupted: bool,
    /// Readable records with their index in the file's `records` array.
    pub records: Vec<(usize, Record)>,
    /// Readable symmetric records with their index in `symmetric`.
    pub symmetric: Vec<(usize, SymmetricRecord)>,
    /// Readable totals over devices or ranks (`aggregates`).
    pub aggregates: Vec<(usize, crate::schema::aggregate::Aggregate)>,
    /// The cluster a merged file came from, when readable.
    pub cluster: Option<crate::schema::cluster::Cluster>,
    /// A sweep's warm-up, window and wall time, when the file has them.
    pub sweep: Option<crate::schema::run_file::SweepInfo>,
    /// What batched requests waited, in an `offload` run file.
    pub offload: Option<crate::schema::offload::OffloadRun>,
    /// Readable floors per backend and thread count (`floor`).
    pub floor: Vec<(usize, crate::schema::run_file::Floor)>,
    /// The vectors run on each backend's code (`vectors`; none in older
    /// files).
    pub vectors: Vec<(usize, crate::schema::vectors::BackendVectors)>,
}

/// The longest string field a report shows; longer ones (a 200 MB host
/// name in a hand-made file) are cut with a marker, so a page stays the
/// size of its records.
pub const MAX_STRING_CHARS: usize = 4096;

/// Cuts every string in `v` longer than [`MAX_STRING_CHARS`] characters,
/// appending a marker that says so; returns how many were cut.
fn cap_strings(v: &mut Value) -> usize {
    match v {
        Value::String(s) if s.len() > MAX_STRING_CHARS => {
            let Some((end, _)) = s.char_indices().nth(MAX_STRING_CHARS) else {
                return 0;
            };
            let total = s.len();
            s.truncate(end);
            s.push_str(&format!(
                " … [cut by pqcprof report: {total} bytes in the file]"
            ));
            s.shrink_to_fit();
            1
        }
        Value::Array(a) => a.iter_mut().map(cap_strings).sum(),
        Value::Object(o) => o.values_mut().map(cap_strings).sum(),
        _ => 0,
    }
}

/// Reads and checks one run file from disk.
pub fn read_run(path: &Path, label: &str) -> Result<(LoadedRun, Vec<Warning>), FileError> {
    let bytes = read_regular(path, "a run file", MAX_FILE_BYTES).map_err(|m| file_error("", m))?;
    let (run, warnings) = parse_run(&bytes, path, label)?;
    Ok((run, crate::schema::diagnose::capped(path, warnings)))
}

/// The bytes of the regular file at `path`, at most `max_bytes` of them
/// (`what` names such a file in the messages: `a run file`). A folder, a
/// FIFO, a device or a socket is refused, as is a file over the bound.
pub fn read_regular(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the file: {e}"))?;
    if meta.is_dir() {
        return Err(format!("is a folder, not {what}"));
    }
    if let Some(kind) = not_regular_kind(&meta) {
        return Err(format!(
            "is {kind}, not {what}: only regular files are read"
        ));
    }
    let too_large = || {
        format!(
            "larger than the {} MiB {what} may have",
            max_bytes / (1024 * 1024)
        )
    };
    if meta.len() > max_bytes {
        return Err(format!("{} bytes, {}", meta.len(), too_large()));
    }
    // Opened without blocking (a file swapped for a FIFO after the check
    // above cannot hang the read) and read at most one byte past the limit
    // (a file that grows meanwhile cannot exhaust memory).
    let mut bytes = vec![];
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    Ok(bytes)
}

/// What `meta` describes when it is not a regular file: `a named pipe
/// (FIFO)`, `a device`, `a socket`, else `not a regular file`; `None` for
/// a regular file.
pub(crate) fn not_regular_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    Some(if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    })
}

/// Parses the bytes of a run file. Never panics, whatever the input.
pub fn parse_run(
    bytes: &[u8],
    path: &Path,
    label: &str,
) -> Result<(LoadedRun, Vec<Warning>), FileError> {
    let (top, cut) = top_object(bytes)?;
    check_format(&top)?;
    let schema_version = schema_version_of(&top)?;
    let mut warnings = vec![];
    if cut > 0 {
        warnings.push(Warning {
            field: "(strings)".into(),
            message: format!(
                "{cut} string field(s) longer than {MAX_STRING_CHARS} characters were cut, each marked where it was cut"
            ),
        });
    }
    let metadata = metadata_of(&top)?;
    let config = config_of(&top, &mut warnings);
    let complete = flag(&top, "complete", &mut warnings, false);
    let interrupted = flag(&top, "interrupted", &mut warnings, false);
    let records = records_of(&top, &mut warnings);
    let symmetric = typed_array::<SymmetricRecord>(&top, "symmetric", false, &mut warnings);
    let aggregates = typed_array::<crate::schema::aggregate::Aggregate>(
        &top,
        "aggregates",
        false,
        &mut warnings,
    );
    let floor = typed_array::<crate::schema::run_file::Floor>(&top, "floor", false, &mut warnings);
    let vectors = typed_array::<crate::schema::vectors::BackendVectors>(
        &top,
        "vectors",
        false,
        &mut warnings,
    );
    let cluster = cluster_of(&top, &mut warnings);
    let sweep = sweep_of(&top, &mut warnings);
    let offload = block_of(
        &top,
        "offload",
        "the offload section leaves this file out",
        &mut warnings,
    );
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok((
        LoadedRun {
            label: label.to_string(),
            path: path.to_path_buf(),
            file_name,
            schema_version,
            metadata,
            config,
            complete,
            interrupted,
            records,
            symmetric,
            aggregates,
            cluster,
            sweep,
            offload,
            floor,
            vectors,
        },
        warnings,
    ))
}

/// The file's top-level JSON object, after the shape check, with its long
/// strings cut (and how many were).
/// A UTF-8 byte-order mark at the start (some Windows editors write one)
/// is read past: JSON has no place for it, and it says nothing.
fn top_object(bytes: &[u8]) -> Result<(Map<String, Value>, usize), FileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    crate::schema::shape::check(bytes).map_err(|(field, message)| file_error(&field, message))?;
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| json_error(bytes, &e))?;
    let cut = cap_strings(&mut value);
    let Value::Object(top) = value else {
        return Err(file_error(
            "",
            format!(
                "not a pqcprof run file: the JSON is {}, not an object",
                kind_of(&value)
            ),
        ));
    };
    Ok((top, cut))
}

/// `format` must say `pqcprof-run`; a cuPQC-shaped file is named as such.
fn check_format(top: &Map<String, Value>) -> Result<(), FileError> {
    match top.get("format") {
        Some(Value::String(s)) if s == "pqcprof-run" => Ok(()),
        Some(other) => Err(file_error(
            "format",
            format!(
                "not a pqcprof run file: `format` is {}, expected \"pqcprof-run\"",
                preview(other)
            ),
        )),
        None => {
            let hint = if top.contains_key("MLKEM") || top.contains_key("MLDSA") {
                " (it looks like a cuPQC-shaped results file; pass the run-*.json file instead)"
            } else {
                ""
            };
            Err(file_error(
                "format",
                format!("not a pqcprof run file: no `format` field{hint}"),
            ))
        }
    }
}

/// The schema version, from 1 up to the one this pqcprof writes.
fn schema_version_of(top: &Map<String, Value>) -> Result<u32, FileError> {
    match top.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v > u64::from(SCHEMA_VERSION) => Err(file_error(
            "schema_version",
            format!(
                "schema version {v} is newer than this pqcprof understands ({SCHEMA_VERSION}); \
                 use a pqcprof at least as new as the one that wrote it"
            ),
        )),
        Some(v) if v >= 1 => Ok(v as u32),
        Some(v) => Err(file_error(
            "schema_version",
            format!("schema version {v} is not valid (versions start at 1)"),
        )),
        None => Err(file_error(
            "schema_version",
            match top.get("schema_version") {
                None => "missing".to_string(),
                Some(v) => format!("{} is not a version number", preview(v)),
            },
        )),
    }
}

/// The machine measured: without it the file cannot be used.
fn metadata_of(top: &Map<String, Value>) -> Result<Metadata, FileError> {
    let metadata_value = top.get("metadata").ok_or_else(|| {
        file_error(
            "metadata",
            "missing: the machine the run measured is unknown",
        )
    })?;
    typed(metadata_value)
        .map_err(|(path, msg)| file_error(&join("metadata", &path), format!("unreadable: {msg}")))
}

/// The run's settings; missing or unreadable costs only their display.
fn config_of(top: &Map<String, Value>, warnings: &mut Vec<Warning>) -> Option<RunConfig> {
    match top.get("config") {
        None => {
            warnings.push(Warning {
                field: "config".into(),
                message: "missing; the run's settings are not shown".into(),
            });
            None
        }
        Some(v) => match typed::<RunConfig>(v) {
            Ok(c) => Some(c),
            Err((path, msg)) => {
                warnings.push(Warning {
                    field: join("config", &path),
                    message: format!("{msg}; the run's settings are not shown"),
                });
                None
            }
        },
    }
}

/// A true/false field, `default` (with a warning) when it is anything else.
fn flag(top: &Map<String, Value>, name: &str, warnings: &mut Vec<Warning>, default: bool) -> bool {
    match top.get(name) {
        Some(Value::Bool(b)) => *b,
        other => {
            warnings.push(Warning {
                field: name.into(),
                message: format!(
                    "{}, expected true or false; taken as {default}",
                    other.map(preview).unwrap_or_else(|| "missing".into())
                ),
            });
            default
        }
    }
}

/// The readable records whose rates are real rates.
fn records_of(top: &Map<String, Value>, warnings: &mut Vec<Warning>) -> Vec<(usize, Record)> {
    let mut records = typed_array::<Record>(top, "records", true, warnings);
    records.retain(|(i, r)| match bad_rate(r) {
        None => true,
        Some((field, v)) => {
            warnings.push(Warning {
                field: format!("records[{i}].{field}"),
                message: format!(
                    "{v} is not a rate: operations per second must be a finite number above 0; this record is left out"
                ),
            });
            false
        }
    });
    records
}

/// The cluster a merged file came from; unreadable costs that section.
fn cluster_of(
    top: &Map<String, Value>,
    warnings: &mut Vec<Warning>,
) -> Option<crate::schema::cluster::Cluster> {
    match top.get("cluster") {
        None | Some(Value::Null) => None,
        Some(v) => match serde_json::from_value::<crate::schema::cluster::Cluster>(v.clone()) {
            Ok(c) => Some(c),
            Err(e) => {
                warnings.push(Warning {
                    field: "cluster".into(),
                    message: format!("unreadable ({e}); the cluster section is left out"),
                });
                None
            }
        },
    }
}

/// A sweep's warm-up, window and wall time; unreadable costs their display.
fn sweep_of(
    top: &Map<String, Value>,
    warnings: &mut Vec<Warning>,
) -> Option<crate::schema::run_file::SweepInfo> {
    block_of(top, "sweep", "the sweep's settings are not shown", warnings)
}

/// The top-level block `name`, when present and readable; unreadable, a
/// warning naming the field and what it costs (`cost`).
fn block_of<T: serde::de::DeserializeOwned>(
    top: &Map<String, Value>,
    name: &str,
    cost: &str,
    warnings: &mut Vec<Warning>,
) -> Option<T> {
    match top.get(name) {
        None | Some(Value::Null) => None,
        Some(v) => typed::<T>(v)
            .map_err(|(path, msg)| {
                warnings.push(Warning {
                    field: join(name, &path),
                    message: format!("{msg}; {cost}"),
                })
            })
            .ok(),
    }
}

/// The first rate of a record that is not a finite positive number, with
/// its field: such a figure would vanish from tables or scale a chart to
/// nothing, so the record is named and left out instead.
fn bad_rate(r: &Record) -> Option<(&'static str, f64)> {
    let bad = |v: f64| !(v.is_finite() && v > 0.0);
    if let Some(v) = r.ops_per_sec.filter(|v| bad(*v)) {
        return Some(("ops_per_sec", v));
    }
    if let Some(v) = r
        .throughput_ops_per_sec
        .as_ref()
        .map(|s| s.median)
        .filter(|v| bad(*v))
    {
        return Some(("throughput_ops_per_sec.median", v));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn minimal() -> Value {
        serde_json::json!({
            "format": "pqcprof-run",
            "schema_version": 1,
            "metadata": {
                "date": "2026-01-01T00:00:00Z", "hostname": "h", "cpu": "c",
                "cores_logical": 2, "cores_physical": 2, "memory_total_mb": 1024,
                "os": "Linux", "kernel": "6", "arch": "x86_64",
                "liboqs_version": "0.13.0", "openssl_version": "3.6",
                "pqcprof_version": "0.1.0", "git_commit": "x", "rustc": "r",
                "profile": "release", "cuda_driver": null, "nvidia_driver": null,
                "gpus": []
            },
            "config": null,
            "complete": true,
            "interrupted": false,
            "records": [],
        })
    }

    fn parse(v: &Value) -> Result<(LoadedRun, Vec<Warning>), FileError> {
        parse_run(v.to_string().as_bytes(), Path::new("x.json"), "F1")
    }

    #[test]
    fn newer_schema_is_refused_by_name() {
        let mut v = minimal();
        v["schema_version"] = (SCHEMA_VERSION + 1).into();
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "schema_version");
        assert!(e.message.contains("newer"), "{}", e.message);
    }

    #[test]
    fn wrong_format_and_cupqc_files_are_named() {
        let e = parse_run(b"{\"MLKEM\": {}}", Path::new("m.json"), "F1").unwrap_err();
        assert!(e.message.contains("cuPQC-shaped"), "{}", e.message);
        let e = parse_run(b"[1,2]", Path::new("m.json"), "F1").unwrap_err();
        assert!(e.message.contains("a list"), "{}", e.message);
        let e = parse_run(b"", Path::new("m.json"), "F1").unwrap_err();
        assert!(e.message.contains("empty"), "{}", e.message);
    }

    #[test]
    fn a_bad_field_is_located() {
        let mut v = minimal();
        v["metadata"]["cores_logical"] = "two".into();
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "metadata.cores_logical", "{e:?}");
        let mut v = minimal();
        v["config"] = serde_json::json!({"runs": 3});
        let (run, w) = parse(&v).unwrap();
        assert!(run.config.is_none());
        assert!(w[0].field.starts_with("config"), "{w:?}");
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_read_past() {
        let v = serde_json::to_string(&minimal()).unwrap();
        let with_bom = format!("\u{feff}{v}");
        let (run, _) = parse_run(with_bom.as_bytes(), Path::new("bom.json"), "F1").unwrap();
        let (plain, _) = parse_run(v.as_bytes(), Path::new("bom.json"), "F1").unwrap();
        assert_eq!(run.records.len(), plain.records.len());
    }

    #[test]
    fn truncation_names_the_field_it_ended_in() {
        let text = serde_json::to_string_pretty(&minimal()).unwrap();
        let cut = &text[..text.find("\"complete\"").unwrap() + 11];
        let e = parse_run(cut.as_bytes(), Path::new("t.json"), "F1").unwrap_err();
        assert!(e.message.contains("truncated"), "{}", e.message);
        assert_eq!(e.field, "complete");
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_run(&bytes, Path::new("r.json"), "F1");
        }

        #[test]
        fn random_json_values_never_panic(s in "\\{\"format\":\"pqcprof-run\",\"schema_version\":[0-9],\"metadata\":\\{[a-z\":,0-9]{0,40}\\},\"records\":\\[[\\{\\}\\[\\]\"a-z0-9:,]{0,60}\\]\\}") {
            let _ = parse_run(s.as_bytes(), Path::new("r.json"), "F1");
        }
    }
}
