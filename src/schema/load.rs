//! Reading run files for `report` and `compare`, forgivingly.
//!
//! A run file may come from another machine, an older or newer pqcprof, an
//! interrupted run or a hand edit. Each problem is described with the file
//! and the JSON path it concerns, and only what is really unusable is left
//! out: a bad record costs that record, a bad configuration block costs the
//! configuration, and only a file that is not a run file at all (not JSON,
//! another format, a newer schema, unreadable metadata) is dropped whole.
//!
//! Longer than most files: reading forgivingly means one check and one
//! message per field that can be missing, malformed or out of range.

use crate::schema::record::{Record, RunConfig, SCHEMA_VERSION};

use crate::schema::metadata::Metadata;
use crate::schema::run_file::SymmetricRecord;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;
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
}

/// Something wrong with an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, as given on the command line.
    pub file: String,
    /// The JSON path concerned (`records[3].ops_per_sec`), or empty for
    /// the whole file.
    pub field: String,
    /// What is wrong and what was done about it.
    pub message: String,
    /// True when the whole file was left out.
    pub fatal: bool,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.fatal { "left out" } else { "warning" };
        if self.field.is_empty() {
            write!(f, "{}: {what}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}: {what}: field `{}`: {}",
                self.file, self.field, self.message
            )
        }
    }
}

/// Every usable file and every problem met while reading them.
#[derive(Debug, Clone, Default)]
pub struct LoadSet {
    /// Usable files, in command-line order.
    pub runs: Vec<LoadedRun>,
    /// Problems, fatal or not, in the order met.
    pub problems: Vec<Problem>,
    /// Other tools' published results given beside the run files; never
    /// read by anything that speaks of this machine's speed.
    pub imported: Vec<crate::schema::imported::ImportedFile>,
}

/// Why a file could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The JSON path concerned, or empty.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn file_error(field: &str, message: impl Into<String>) -> FileError {
    FileError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// A problem inside a file that still leaves the file usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The JSON path concerned.
    pub field: String,
    /// What is wrong and what was done about it.
    pub message: String,
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
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let meta = std::fs::metadata(path)
        .map_err(|e| file_error("", format!("cannot read the file: {e}")))?;
    if meta.is_dir() {
        return Err(file_error("", "is a folder, not a run file"));
    }
    if !meta.is_file() {
        let t = meta.file_type();
        let kind = if t.is_fifo() {
            "a named pipe (FIFO)"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(file_error(
            "",
            format!("is {kind}, not a run file: only regular files are read"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(file_error(
            "",
            format!(
                "{} bytes, larger than the {} MiB a run file may have",
                meta.len(),
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        ));
    }
    // Opened without blocking (a file swapped for a FIFO after the check
    // above cannot hang the read) and read at most one byte past the limit
    // (a file that grows meanwhile cannot exhaust memory).
    let mut bytes = vec![];
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| file_error("", format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(file_error(
            "",
            format!(
                "larger than the {} MiB a run file may have",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        ));
    }
    parse_run(&bytes, path, label)
}

/// Parses the bytes of a run file. Never panics, whatever the input.
pub fn parse_run(
    bytes: &[u8],
    path: &Path,
    label: &str,
) -> Result<(LoadedRun, Vec<Warning>), FileError> {
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
    match top.get("format") {
        Some(Value::String(s)) if s == "pqcprof-run" => {}
        Some(other) => {
            return Err(file_error(
                "format",
                format!(
                    "not a pqcprof run file: `format` is {}, expected \"pqcprof-run\"",
                    preview(other)
                ),
            ))
        }
        None => {
            let hint = if top.contains_key("MLKEM") || top.contains_key("MLDSA") {
                " (it looks like a cuPQC-shaped results file; pass the run-*.json file instead)"
            } else {
                ""
            };
            return Err(file_error(
                "format",
                format!("not a pqcprof run file: no `format` field{hint}"),
            ));
        }
    }
    let schema_version = match top.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v > u64::from(SCHEMA_VERSION) => {
            return Err(file_error(
                "schema_version",
                format!(
                    "schema version {v} is newer than this pqcprof understands ({SCHEMA_VERSION}); \
                     use a pqcprof at least as new as the one that wrote it"
                ),
            ))
        }
        Some(v) if v >= 1 => v as u32,
        Some(v) => {
            return Err(file_error(
                "schema_version",
                format!("schema version {v} is not valid (versions start at 1)"),
            ))
        }
        None => {
            return Err(file_error(
                "schema_version",
                match top.get("schema_version") {
                    None => "missing".to_string(),
                    Some(v) => format!("{} is not a version number", preview(v)),
                },
            ))
        }
    };
    let mut warnings = vec![];
    if cut > 0 {
        warnings.push(Warning {
            field: "(strings)".into(),
            message: format!(
                "{cut} string field(s) longer than {MAX_STRING_CHARS} characters were cut, each marked where it was cut"
            ),
        });
    }
    let metadata_value = top.get("metadata").ok_or_else(|| {
        file_error(
            "metadata",
            "missing: the machine the run measured is unknown",
        )
    })?;
    let metadata: Metadata = typed(metadata_value).map_err(|(path, msg)| {
        file_error(&join("metadata", &path), format!("unreadable: {msg}"))
    })?;
    let config = match top.get("config") {
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
    };
    let flag = |name: &str, warnings: &mut Vec<Warning>, default: bool| match top.get(name) {
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
    };
    let complete = flag("complete", &mut warnings, false);
    let interrupted = flag("interrupted", &mut warnings, false);
    let mut records = typed_array::<Record>(&top, "records", true, &mut warnings);
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
    let symmetric = typed_array::<SymmetricRecord>(&top, "symmetric", false, &mut warnings);
    let aggregates = typed_array::<crate::schema::aggregate::Aggregate>(
        &top,
        "aggregates",
        false,
        &mut warnings,
    );
    let cluster = match top.get("cluster") {
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
    };
    let sweep = match top.get("sweep") {
        None | Some(Value::Null) => None,
        Some(v) => typed::<crate::schema::run_file::SweepInfo>(v)
            .map_err(|(path, msg)| {
                warnings.push(Warning {
                    field: join("sweep", &path),
                    message: format!("{msg}; the sweep's settings are not shown"),
                })
            })
            .ok(),
    };
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
        },
        warnings,
    ))
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

/// Reads every element of an array field one by one, so one bad element
/// costs only itself.
fn typed_array<T: DeserializeOwned>(
    top: &Map<String, Value>,
    name: &str,
    required: bool,
    warnings: &mut Vec<Warning>,
) -> Vec<(usize, T)> {
    let items = match top.get(name) {
        Some(Value::Array(items)) => items,
        None if !required => return vec![],
        other => {
            warnings.push(Warning {
                field: name.into(),
                message: format!(
                    "{}, expected a list; no {name} read from this file",
                    other.map(preview).unwrap_or_else(|| "missing".into())
                ),
            });
            return vec![];
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match typed::<T>(item) {
            Ok(t) => out.push((i, t)),
            Err((path, msg)) => warnings.push(Warning {
                field: join(&format!("{name}[{i}]"), &path),
                message: format!("{msg}; this entry is left out"),
            }),
        }
    }
    out
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (_, true) => a.to_string(),
        (true, false) => b.to_string(),
        (false, false) if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

/// Deserialises `v`; on failure returns the path of the offending field
/// inside `v` and serde's message.
fn typed<T: DeserializeOwned>(v: &Value) -> Result<T, (String, String)> {
    match serde_json::from_value::<T>(v.clone()) {
        Ok(t) => Ok(t),
        Err(e) => {
            let msg = e.to_string();
            // serde names a missing field itself; for any other error find
            // the value whose removal changes the error: that is the culprit.
            let path = if let Some(name) = missing_field(&msg) {
                name
            } else {
                blame::<T>(v, &msg).unwrap_or_default()
            };
            Err((path, msg))
        }
    }
}

fn missing_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_string())
}

/// Finds the path to the value that produced error `msg`, by removing
/// (objects) or replacing (arrays) one value at a time, depth first.
fn blame<T: DeserializeOwned>(root: &Value, msg: &str) -> Option<String> {
    let mut path: Vec<PathStep> = vec![];
    let mut budget = 2000usize;
    loop {
        let node = get_path(root, &path)?;
        let children: Vec<PathStep> = match node {
            Value::Object(m) => m.keys().cloned().map(PathStep::Key).collect(),
            Value::Array(a) => (0..a.len()).map(PathStep::Index).collect(),
            _ => break,
        };
        let mut found = None;
        for child in children {
            if budget == 0 {
                return Some(render_path(&path));
            }
            budget -= 1;
            let mut probe = root.clone();
            let mut full = path.clone();
            full.push(child.clone());
            remove_path(&mut probe, &full);
            let changed = match serde_json::from_value::<T>(probe) {
                Ok(_) => true,
                Err(e) => e.to_string() != msg,
            };
            if changed {
                found = Some(child);
                break;
            }
        }
        match found {
            Some(step) => path.push(step),
            None => break,
        }
    }
    Some(render_path(&path))
}

#[derive(Debug, Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn get_path<'a>(root: &'a Value, path: &[PathStep]) -> Option<&'a Value> {
    let mut v = root;
    for step in path {
        v = match step {
            PathStep::Key(k) => v.get(k)?,
            PathStep::Index(i) => v.get(*i)?,
        };
    }
    Some(v)
}

/// Removes the value at `path` (an object key is dropped; an array element
/// is replaced by the previous or next element, so the array stays valid
/// when the others are).
fn remove_path(root: &mut Value, path: &[PathStep]) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let mut v = root;
    for step in parent_path {
        let next = match step {
            PathStep::Key(k) => v.get_mut(k),
            PathStep::Index(i) => v.get_mut(*i),
        };
        match next {
            Some(n) => v = n,
            None => return,
        }
    }
    match (last, v) {
        (PathStep::Key(k), Value::Object(m)) => {
            m.remove(k);
        }
        (PathStep::Index(i), Value::Array(a)) => {
            let i = *i;
            if a.len() > 1 && i < a.len() {
                let other = if i > 0 {
                    a[i - 1].clone()
                } else {
                    a[1].clone()
                };
                a[i] = other;
            } else if i < a.len() {
                a.remove(i);
            }
        }
        _ => {}
    }
}

fn render_path(path: &[PathStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            PathStep::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A value as it might be quoted in a message: short.
fn preview(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(37).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Describes a JSON syntax error: where, and for a truncated file the last
/// top-level field that had begun.
fn json_error(bytes: &[u8], e: &serde_json::Error) -> FileError {
    let (line, col) = (e.line(), e.column());
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return file_error("", "the file is empty, not a run file");
    }
    if e.is_eof() {
        let inside = last_top_level_key(bytes);
        let field = inside.clone().unwrap_or_default();
        let where_ = inside
            .map(|k| format!(", inside `{k}`"))
            .unwrap_or_default();
        return file_error(
            &field,
            format!(
                "the file is truncated: the JSON ends early at line {line} column {col}{where_}"
            ),
        );
    }
    let what = if e.is_syntax() {
        "not valid JSON"
    } else {
        "not a run file"
    };
    file_error("", format!("{what}: {e}"))
}

/// The last key written at the first level of indentation of a
/// pretty-printed file (`  "records": [`), which a truncated file ended in.
fn last_top_level_key(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    text.lines().rev().find_map(|line| {
        let rest = line.strip_prefix("  \"")?;
        if rest.starts_with(' ') {
            return None;
        }
        let (key, after) = rest.split_once('"')?;
        after.trim_start().starts_with(':').then(|| key.to_string())
    })
}

/// Reads every file; files that cannot be used are named in `problems`
/// and left out, the rest are checked against each other. Linear in the
/// number of files: each file is compared only with the earlier files that
/// share its host and start time, and with the first value of each
/// machine field seen for its host.
pub fn load_all(paths: &[PathBuf]) -> LoadSet {
    let mut set = LoadSet::default();
    let mut index = Index::default();
    for path in paths {
        let label = format!("F{}", set.runs.len() + 1);
        let shown = path.display().to_string();
        match read_run(path, &label) {
            Ok((run, warnings)) => {
                for w in warnings {
                    set.problems.push(Problem {
                        file: shown.clone(),
                        field: w.field,
                        message: w.message,
                        fatal: false,
                    });
                }
                let key = (run.metadata.hostname.clone(), run.metadata.date.clone());
                let same_start = index.by_start.get(&key).cloned().unwrap_or_default();
                if let Some(dup) = same_start
                    .iter()
                    .map(|&i| &set.runs[i])
                    .find(|r| same_run(r, &run))
                {
                    set.problems.push(Problem {
                        file: shown.clone(),
                        field: String::new(),
                        message: format!(
                            "the same run as {} ({}: same host, start time and records); left out so nothing is counted twice",
                            dup.path.display(),
                            dup.label
                        ),
                        fatal: true,
                    });
                    continue;
                }
                set.problems
                    .extend(conflicts(&set.runs, &mut index, &same_start, &run));
                index.by_start.entry(key).or_default().push(set.runs.len());
                set.runs.push(run);
            }
            Err(e) => set.problems.push(Problem {
                file: shown,
                field: e.field,
                message: e.message,
                fatal: true,
            }),
        }
    }
    set
}

/// What `load_all` remembers of the files read so far.
#[derive(Default)]
struct Index {
    /// Files by (host, start time).
    by_start: std::collections::HashMap<(String, String), Vec<usize>>,
    /// For each (host, machine field): every value seen, with the first
    /// file that had it.
    values: std::collections::HashMap<(String, &'static str), Vec<(String, usize)>>,
}

fn same_run(a: &LoadedRun, b: &LoadedRun) -> bool {
    a.metadata == b.metadata
        && a.records.len() == b.records.len()
        && a.records.iter().zip(&b.records).all(|(x, y)| x == y)
}

/// Metadata that must agree between two files from the same host; a
/// difference means a hand edit, a copied file or a changed machine, and
/// the reader should know before comparing across the two. Each new value
/// is named once, against the first file of that host with another value.
fn conflicts(
    earlier: &[LoadedRun],
    index: &mut Index,
    same_start: &[usize],
    run: &LoadedRun,
) -> Vec<Problem> {
    let m = &run.metadata;
    let mut out = vec![];
    let fields: [(&'static str, String); 6] = [
        ("metadata.cpu", m.cpu.clone()),
        ("metadata.cores_logical", m.cores_logical.to_string()),
        ("metadata.memory_total_mb", m.memory_total_mb.to_string()),
        ("metadata.arch", m.arch.clone()),
        ("metadata.liboqs_version", m.liboqs_version.clone()),
        ("metadata.openssl_version", m.openssl_version.clone()),
    ];
    for (field, b) in fields {
        let seen = index.values.entry((m.hostname.clone(), field)).or_default();
        if seen.iter().any(|(v, _)| *v == b) {
            continue;
        }
        if let Some((a, i)) = seen.first() {
            let other = &earlier[*i];
            out.push(Problem {
                file: run.path.display().to_string(),
                field: field.to_string(),
                message: format!(
                    "\"{b}\" conflicts with \"{a}\" in {} ({}) for the same host \"{}\"; both files are reported, each under its own label",
                    other.path.display(),
                    other.label,
                    m.hostname
                ),
                fatal: false,
            });
        }
        seen.push((b, earlier.len()));
    }
    for other in same_start.iter().map(|&i| &earlier[i]) {
        if other.records != run.records {
            out.push(Problem {
                file: run.path.display().to_string(),
                field: "metadata.date".into(),
                message: format!(
                    "same start time {} as {} ({}) but different records: one of them was edited; both are reported",
                    m.date,
                    other.path.display(),
                    other.label
                ),
                fatal: false,
            });
            break;
        }
    }
    out
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
