//! Loading a set of run files for `report`: every file read forgivingly
//! ([`crate::schema::read`]), records whose numbers cannot be believed
//! left out ([`crate::schema::agreement`]), duplicates left out, and machine
//! fields that disagree between files of one host named, so nothing is
//! counted twice or compared unknowingly.

pub use crate::schema::diagnose::{FileError, Warning};
pub use crate::schema::read::{
    parse_run, read_run, LoadedRun, MAX_FILE_BYTES, MAX_RECORDS, MAX_SAMPLES, MAX_STRING_CHARS,
};
use std::fmt;
use std::path::{Path, PathBuf};

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

/// Reads one run file as every reader but `compare` does: [`read_run`],
/// then every record whose numbers are out of bounds or whose throughput
/// disagrees with its runs left out, one warning each
/// ([`crate::schema::agreement::leave_out`]).
pub fn read_checked(path: &Path, label: &str) -> Result<(LoadedRun, Vec<Warning>), FileError> {
    let (mut run, mut warnings) = read_run(path, label)?;
    warnings.extend(crate::schema::agreement::leave_out(&mut run));
    Ok((run, warnings))
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
        match read_checked(path, &label) {
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
