//! Saying what is wrong in a run file and where: the JSON path of a field
//! serde refused, short previews of bad values, the place a truncated or
//! malformed file ends, and element-by-element reading of a list so one
//! bad entry costs only itself.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Why a file could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The JSON path concerned, or empty.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// A [`FileError`] at `field` (empty: the whole file).
pub(crate) fn file_error(field: &str, message: impl Into<String>) -> FileError {
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

/// At most [`crate::core::listing::SHOWN`] warnings about one file, then
/// one that counts the rest: a file with thousands of bad entries gives a
/// few lines, not thousands. Each warning left unsaid is logged at debug
/// level (`-v`).
pub fn capped(path: &std::path::Path, warnings: Vec<Warning>) -> Vec<Warning> {
    capped_with(path, warnings, |first, more, all| Warning {
        field: format!("{first} and after"),
        message: format!("{more} more warning(s) about this file, {all} in all (each with -v)"),
    })
}

/// The first [`crate::core::listing::SHOWN`] of `warnings`, then, when
/// there were more, the warning `summary` makes of (the first unsaid one's
/// field, how many are unsaid, how many in all); each unsaid one is logged
/// at debug level (`-v`).
pub fn capped_with(
    path: &std::path::Path,
    warnings: Vec<Warning>,
    summary: impl FnOnce(&str, usize, usize) -> Warning,
) -> Vec<Warning> {
    let shown = crate::core::listing::SHOWN;
    if warnings.len() <= shown {
        return warnings;
    }
    let all = warnings.len();
    let path = crate::core::units::printable(&path.display().to_string());
    let mut rest = warnings.into_iter();
    let mut out: Vec<Warning> = rest.by_ref().take(shown).collect();
    let mut first = None;
    for w in rest {
        log::debug!("{path}: field `{}`: {}", w.field, w.message);
        first.get_or_insert(w.field);
    }
    out.push(summary(&first.unwrap_or_default(), all - shown, all));
    out
}

/// Reads every element of an array field one by one, so one bad element
/// costs only itself.
pub(crate) fn typed_array<T: DeserializeOwned>(
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

/// Joins two JSON paths: `a.b`, or `a[3]` before an index.
pub(crate) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (_, true) => a.to_string(),
        (true, false) => b.to_string(),
        (false, false) if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

/// Deserialises `v`; on failure returns the path of the offending field
/// inside `v` and serde's message.
pub(crate) fn typed<T: DeserializeOwned>(v: &Value) -> Result<T, (String, String)> {
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

/// What kind of JSON value `v` is, as a message says it: `a list`.
pub(crate) fn kind_of(v: &Value) -> &'static str {
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
pub(crate) fn preview(v: &Value) -> String {
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
pub(crate) fn json_error(bytes: &[u8], e: &serde_json::Error) -> FileError {
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
