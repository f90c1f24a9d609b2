//! `pqcprof merge DIR... -o cluster-run.json`: every rank's run file of a
//! cluster job into one run file, with cluster totals.
//!
//! Each rank's file is read as `report` reads files (a bad record costs
//! only itself; a record out of bounds or at odds with its own runs is
//! left out and named, see [`crate::schema::agreement`]). Differences of configuration (within a role: GPU ranks
//! against GPU ranks), of pqcprof version and of commit are named in the
//! merged file and on standard error, never hidden. A rank the batch
//! script expected (its `expected-ranks` file, else the task count each
//! rank recorded) that left no run file is named as missing, and the rest
//! is merged, marked incomplete.

use crate::analyse::aggregate;
use crate::core::listing::{few, SHOWN};
use crate::schema::cluster::{Cluster, RankFile};
use crate::schema::load::read_checked;
use crate::schema::read::{not_regular_kind, LoadedRun};
use crate::schema::record::Record;
use crate::schema::run_file::RunFile;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// File the batch script writes into the job folder: one `ROLE COUNT` line
/// per step, the ranks it launches.
pub const EXPECTED_RANKS_FILE: &str = "expected-ranks";

/// The most ranks one role may have (an `expected-ranks` count, a rank's
/// recorded task count): far above any Slurm job pqcprof runs in, low
/// enough that naming each missing rank stays small.
pub const MAX_RANKS: usize = 100_000;

/// A file's identity: (device, inode).
type FileId = (u64, u64);

fn file_id(m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// What the folders given to `merge` hold: the run files (each file once,
/// however many links or folders lead to it) and the ranks the
/// `expected-ranks` files declare.
#[derive(Default)]
struct Found {
    files: Vec<PathBuf>,
    ids: BTreeMap<FileId, PathBuf>,
    expected: BTreeMap<String, usize>,
    expected_files: BTreeMap<FileId, PathBuf>,
}

impl Found {
    /// Adds a run file unless the same file (by identity) is already in.
    fn add_file(&mut self, path: &Path, meta: &std::fs::Metadata) {
        match self.ids.get(&file_id(meta)) {
            Some(first) => log::warn!(
                "{}: left out: the same file as {} (a link or a folder given twice); merged once",
                printable(&path.display().to_string()),
                printable(&first.display().to_string())
            ),
            None => {
                self.ids.insert(file_id(meta), path.to_path_buf());
                self.files.push(path.to_path_buf());
            }
        }
    }
}

/// Why `path` (not a folder) cannot be read as an input, when it is not a
/// regular file.
fn not_regular(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    let kind = not_regular_kind(meta)?;
    Some(format!(
        "merge input {} is {kind}: only regular run files and folders are read",
        path.display()
    ))
}

/// Every `run-*.json` under `dir`, sorted, and the expected ranks its
/// `expected-ranks` files declare. `above` holds the folders (by identity)
/// from the input down to `dir`: a link back to one of them is a loop.
fn find_run_files(dir: &Path, above: &mut Vec<FileId>, found: &mut Found) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let is_run = name.starts_with("run-") && name.ends_with(".json");
        let wanted = is_run || name == EXPECTED_RANKS_FILE;
        let meta = match std::fs::metadata(&p) {
            Ok(m) => m,
            // A dangling link or one in a loop of links: only an error
            // where it names a file merge needs.
            Err(e) if wanted => bail!("cannot read {}: {e}", p.display()),
            Err(_) => continue,
        };
        if meta.is_dir() {
            let id = file_id(&meta);
            if above.contains(&id) {
                bail!(
                    "{} leads back to a folder above it ({}): a loop of links; remove the link or give merge the folders themselves",
                    p.display(),
                    std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone()).display()
                );
            }
            above.push(id);
            let r = find_run_files(&p, above, found);
            above.pop();
            r?;
        } else if wanted {
            if let Some(why) = not_regular(&p, &meta) {
                bail!(why);
            }
            if is_run {
                found.add_file(&p, &meta);
            } else if found
                .expected_files
                .insert(file_id(&meta), p.clone())
                .is_none()
            {
                read_expected(&p, &mut found.expected)?;
            }
        }
    }
    Ok(())
}

/// Adds the ranks one `expected-ranks` file declares, each count checked.
fn read_expected(p: &Path, expected: &mut BTreeMap<String, usize>) -> anyhow::Result<()> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(p)
        .and_then(|f| f.take(1 << 20).read_to_string(&mut text))
        .with_context(|| format!("cannot read {}", p.display()))?;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let shown = printable(line);
        let bad = || {
            anyhow::anyhow!(
                "{}: bad line '{shown}': expected `ROLE COUNT`, e.g. `gpu 4`, with COUNT from 0 to {MAX_RANKS}",
                p.display()
            )
        };
        let (role, n) = line.split_once(char::is_whitespace).ok_or_else(bad)?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n > MAX_RANKS {
            return Err(bad());
        }
        let total = expected.entry(role.to_string()).or_default();
        *total = total
            .checked_add(n)
            .filter(|t| *t <= MAX_RANKS)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: line '{shown}' brings the {} ranks of role {} to more than {MAX_RANKS}",
                    p.display(),
                    printable(role),
                    printable(role)
                )
            })?;
    }
    Ok(())
}

/// `s` with every control character written out (`\u{1b}`), so a string
/// from a run file cannot move the cursor, set a title or clear a line.
fn printable(s: &str) -> String {
    crate::core::units::printable(s)
}

/// The role of a rank: the batch script's, else the subcommand it ran.
fn role_of(run: &LoadedRun) -> String {
    if let Some(r) = run.metadata.slurm.as_ref().and_then(|s| s.role.clone()) {
        return r;
    }
    run.config
        .as_ref()
        .and_then(|c| c.command_line.get(1).cloned())
        .unwrap_or_else(|| "run".into())
}

/// Values of one field across ranks, named when they differ:
/// `pqcprof version differs: 0.1.0 (gpu rank 0, gpu rank 1); 0.2.0 (cpu rank 0)`.
/// Past a few values, or a few ranks to a value, a count and the first few
/// (the whole list at `-v`), so a job of thousands of ranks gets a line,
/// not a page.
fn difference(what: &str, ranks: &[(&RankFile, String)]) -> Option<String> {
    let mut by_value: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (r, v) in ranks {
        by_value.entry(v.as_str()).or_default().push(r.label());
    }
    (by_value.len() > 1).then(|| {
        let values: Vec<String> = by_value
            .iter()
            .map(|(v, who)| {
                let ranks = if who.len() > SHOWN {
                    format!("{} ranks: {}", who.len(), few(what, who, SHOWN, ", "))
                } else {
                    who.join(", ")
                };
                format!("{v} ({ranks})")
            })
            .collect();
        let shown = few(what, &values, SHOWN, "; ");
        if values.len() > SHOWN {
            format!("{what} differs: {} values: {shown}", values.len())
        } else {
            format!("{what} differs: {shown}")
        }
    })
}

/// What the ranks' settings say, without what may differ by design (the
/// command line's output folder, the thread count `all` resolved to).
fn config_fields(rank: &RankFile) -> Vec<(&'static str, String)> {
    let Some(c) = &rank.config else {
        return vec![("configuration", "unreadable".into())];
    };
    vec![
        ("runs", c.runs.to_string()),
        ("warm-up runs", c.warmup_runs.to_string()),
        ("batch", c.batch.to_string()),
        ("message bytes", c.message_bytes.to_string()),
        ("context", format!("'{}'", c.context_hex)),
        ("backends", format!("{:?}", c.backends)),
        ("algorithms", format!("{:?}", c.algorithms)),
        ("operations", format!("{:?}", c.operations)),
    ]
}

/// Every difference between ranks worth naming.
fn differences(ranks: &[RankFile]) -> Vec<String> {
    let mut out = vec![];
    let across = |what: &str, f: &dyn Fn(&RankFile) -> String| {
        let v: Vec<(&RankFile, String)> = ranks.iter().map(|r| (r, f(r))).collect();
        difference(what, &v)
    };
    out.extend(across("pqcprof version", &|r| {
        r.metadata.pqcprof_version.clone()
    }));
    out.extend(across("commit", &|r| r.metadata.git_commit.clone()));
    out.extend(across("liboqs version", &|r| {
        r.metadata.liboqs_version.clone()
    }));
    out.extend(across("OpenSSL version", &|r| {
        r.metadata.openssl_version.clone()
    }));
    out.extend(across("Slurm job", &|r| {
        r.metadata
            .slurm
            .as_ref()
            .map(|s| s.job_id.clone())
            .unwrap_or_else(|| "none".into())
    }));
    let mut roles: Vec<&str> = ranks.iter().map(|r| r.role.as_str()).collect();
    roles.sort();
    roles.dedup();
    for role in roles {
        let same: Vec<&RankFile> = ranks.iter().filter(|r| r.role == role).collect();
        let fields: Vec<Vec<(&str, String)>> = same.iter().map(|r| config_fields(r)).collect();
        for (i, (what, _)) in fields[0].iter().enumerate() {
            let v: Vec<(&RankFile, String)> = same
                .iter()
                .zip(&fields)
                .map(|(r, f)| (*r, f.get(i).map(|x| x.1.clone()).unwrap_or_default()))
                .collect();
            out.extend(difference(&format!("{role} ranks' {what}"), &v));
        }
    }
    out
}

/// Expected ranks that left no file, and ranks found twice.
fn missing_and_duplicates(
    ranks: &[RankFile],
    expected_file: &BTreeMap<String, usize>,
) -> (Vec<String>, Vec<String>) {
    let mut expected = expected_file.clone();
    let mut dups = vec![];
    if expected.is_empty() {
        for r in ranks {
            if let Some(n) = r.metadata.slurm.as_ref().and_then(|s| s.ntasks) {
                if n > MAX_RANKS {
                    dups.push(format!(
                        "{} ({}) records a task count of {n}, more than the {MAX_RANKS} merge accepts: not used to find missing ranks",
                        r.label(),
                        r.file
                    ));
                    continue;
                }
                let e = expected.entry(r.role.clone()).or_default();
                *e = (*e).max(n);
            }
        }
    }
    let present: std::collections::HashSet<(&str, usize)> = ranks
        .iter()
        .filter_map(|r| r.procid.map(|p| (r.role.as_str(), p)))
        .collect();
    let mut missing = vec![];
    for (role, n) in &expected {
        for p in 0..*n {
            if !present.contains(&(role.as_str(), p)) {
                missing.push(format!(
                    "{role} rank {p} (of {n}) left no run file: it failed or was killed before its first write"
                ));
            }
        }
    }
    let mut seen: BTreeMap<(String, usize), &RankFile> = BTreeMap::new();
    for r in ranks {
        let Some(p) = r.procid else { continue };
        let dir = |f: &str| Path::new(f).parent().map(Path::to_path_buf);
        match seen.get(&(r.role.clone(), p)) {
            Some(first) if dir(&first.file) != dir(&r.file) => dups.push(format!(
                "{} rank {p} appears in two folders: {} and {}",
                r.role, first.file, r.file
            )),
            Some(_) => {}
            None => {
                seen.insert((r.role.clone(), p), r);
            }
        }
    }
    (missing, dups)
}

/// Merges loaded rank files into one run file. `expected` holds the ranks
/// per role the batch script launched (empty: take the ranks' own counts).
pub fn merge(runs: Vec<LoadedRun>, expected: &BTreeMap<String, usize>) -> anyhow::Result<RunFile> {
    if runs.is_empty() {
        bail!("no rank run file to merge");
    }
    let mut runs = runs;
    runs.sort_by_key(|r| {
        (
            role_of(r),
            r.metadata.slurm.as_ref().map(|s| s.procid),
            r.path.clone(),
        )
    });
    let ranks: Vec<RankFile> = runs.iter().map(rank_file).collect();
    let (missing, dups) = missing_and_duplicates(&ranks, expected);
    let mut diffs = differences(&ranks);
    diffs.extend(dups);
    let job_id = ranks
        .iter()
        .find_map(|r| r.metadata.slurm.as_ref().map(|s| s.job_id.clone()));
    // Each record names the rank that measured it.
    let mut records: Vec<Record> = vec![];
    for (i, r) in runs.iter().enumerate() {
        for (_, rec) in &r.records {
            records.push(Record {
                rank: Some(i),
                ..rec.clone()
            });
        }
    }
    let scope = match &job_id {
        Some(j) => format!("cluster job {j}"),
        None => format!("{} merged run files", ranks.len()),
    };
    let labels: Vec<String> = ranks.iter().map(RankFile::name).collect();
    let aggregates = aggregate::aggregate_all(
        &scope,
        records.iter().enumerate(),
        &|rec: &Record| match rec.rank {
            Some(i) => (ranks[i].node.as_str(), Some(labels[i].as_str())),
            None => ("?", None),
        },
    );
    let complete = missing.is_empty() && ranks.iter().all(|r| r.complete);
    let config = runs
        .iter()
        .find_map(|r| r.config.clone())
        .context("no rank's configuration could be read")?;
    let mut out = RunFile::new(merged_metadata(&ranks, &scope), config);
    out.complete = complete;
    out.interrupted = ranks.iter().any(|r| r.interrupted);
    out.records = records;
    out.symmetric = runs
        .iter()
        .flat_map(|r| r.symmetric.iter().map(|(_, s)| s.clone()))
        .collect();
    out.aggregates = aggregates;
    let kept = sections(&runs)?;
    out.sweep = kept.sweep;
    out.floor = kept.floor;
    out.offload = kept.offload;
    diffs.extend(kept.notes);
    out.cluster = Some(Cluster {
        job_id,
        ranks,
        missing,
        differences: diffs,
        complete,
    });
    Ok(out)
}

/// The sections beside the records that a merge keeps, and what it says
/// of them in the cluster's differences.
struct Sections {
    sweep: Option<crate::schema::run_file::SweepInfo>,
    floor: Vec<crate::schema::run_file::Floor>,
    offload: Option<crate::schema::offload::OffloadRun>,
    notes: Vec<String>,
}

/// Every section of the ranks beside their records, kept or refused by
/// name: one rank's offload points are kept, two ranks' cannot be one
/// section; sweeps are kept when their windows agree (the wall time the
/// longest rank's); each backend and thread count keeps its floor once,
/// a second rank's other floor said in the differences.
fn sections(runs: &[LoadedRun]) -> anyhow::Result<Sections> {
    let with_offload: Vec<&LoadedRun> = runs.iter().filter(|r| r.offload.is_some()).collect();
    if with_offload.len() > 1 {
        bail!(
            "{} and {} both hold `pqcprof offload` points: a run file has one offload section, so merge cannot combine them; report them side by side instead",
            with_offload[0].path.display(),
            with_offload[1].path.display()
        );
    }
    let mut notes = vec![];
    let sweeps: Vec<(&LoadedRun, &crate::schema::run_file::SweepInfo)> = runs
        .iter()
        .filter_map(|r| r.sweep.as_ref().map(|s| (r, s)))
        .collect();
    let mut sweep = sweeps.first().map(|(_, s)| (*s).clone());
    for (r, s) in &sweeps[1.min(sweeps.len())..] {
        let first = &sweeps[0];
        if (s.window_seconds, s.warmup_seconds) != (first.1.window_seconds, first.1.warmup_seconds)
        {
            bail!(
                "{} swept with {} s windows after {} s of warm-up, {} with {} s after {} s: their sweeps cannot be one; merge ranks that swept alike",
                first.0.path.display(),
                first.1.window_seconds,
                first.1.warmup_seconds,
                r.path.display(),
                s.window_seconds,
                s.warmup_seconds
            );
        }
        if let Some(k) = sweep.as_mut() {
            k.wall_seconds = k.wall_seconds.max(s.wall_seconds);
            k.csv_names.extend(s.csv_names.clone());
        }
    }
    if !sweeps.is_empty() && sweeps.len() < runs.len() {
        notes.push(format!(
            "{} of {} rank files are sweeps (`pqcprof sweep`), the others other commands",
            sweeps.len(),
            runs.len()
        ));
    }
    // Each rank measures its own floor: ranks on one node under different
    // load give floors a few nanoseconds apart, which is measurement, not
    // a difference of configuration. Only a floor of another kind (what an
    // empty window holds) is named.
    let mut floor: Vec<crate::schema::run_file::Floor> = vec![];
    for r in runs {
        for (_, f) in &r.floor {
            match floor.iter().find(|k| k.backend == f.backend && k.threads == f.threads) {
                None => floor.push(f.clone()),
                Some(k) if k.method == f.method => {}
                Some(k) => notes.push(format!(
                    "{}: its floor of {} at {} thread(s) times {} where an earlier rank's, which is kept, times {}",
                    r.path.display(),
                    f.backend,
                    f.threads,
                    f.method,
                    k.method
                )),
            }
        }
    }
    if let Some(r) = with_offload.first() {
        notes.push(format!("offload points from {} only", r.path.display()));
    }
    Ok(Sections {
        sweep,
        floor,
        offload: with_offload.first().and_then(|r| r.offload.clone()),
        notes,
    })
}

/// What the merged file says of one rank's file.
fn rank_file(r: &LoadedRun) -> RankFile {
    RankFile {
        role: role_of(r),
        procid: r.metadata.slurm.as_ref().map(|s| s.procid),
        node: r
            .metadata
            .slurm
            .as_ref()
            .map(|s| s.node.clone())
            .unwrap_or_else(|| r.metadata.hostname.clone()),
        file: r.path.display().to_string(),
        complete: r.complete,
        interrupted: r.interrupted,
        records: r.records.len(),
        metadata: r.metadata.clone(),
        config: r.config.clone(),
    }
}

/// The first rank's machine, named after the job and its nodes, with
/// every rank's GPUs (each once) and no single rank's Slurm block.
fn merged_metadata(ranks: &[RankFile], scope: &str) -> crate::schema::metadata::Metadata {
    let mut nodes: Vec<&str> = ranks.iter().map(|r| r.node.as_str()).collect();
    nodes.sort();
    nodes.dedup();
    let mut metadata = ranks[0].metadata.clone();
    metadata.hostname = format!("{scope}: {}", nodes.join(", "));
    metadata.slurm = None;
    let mut gpus = vec![];
    for r in ranks {
        for g in &r.metadata.gpus {
            if !gpus.contains(g) {
                gpus.push(g.clone());
            }
        }
    }
    metadata.gpus = gpus;
    metadata
}

/// `pqcprof merge`'s work: the run files `inputs` lead to (folders
/// searched, files taken as they are) merged into one, written to
/// `output`, and returned.
pub fn merge_into(inputs: &[PathBuf], output: &Path) -> anyhow::Result<RunFile> {
    let Found {
        files, expected, ..
    } = gather_inputs(inputs)?;
    // Never onto an input, a rank's run file or an unrelated run file; a
    // merged file from an earlier merge (not an input) may be replaced.
    let mut all = files.clone();
    all.extend(inputs.iter().cloned());
    crate::write::output::check_merged_output(output, &all)?;
    let runs = read_ranks(&files);
    if runs.is_empty() {
        return Err(nothing_usable(inputs, &expected));
    }
    let merged = merge(runs, &expected)?;
    crate::write::output::write_json(output, &merged)?;
    Ok(merged)
}

/// The run files and `expected-ranks` files the inputs lead to: folders
/// searched, files taken as they are.
fn gather_inputs(inputs: &[PathBuf]) -> anyhow::Result<Found> {
    let mut found = Found::default();
    for input in inputs {
        let meta = std::fs::metadata(input).with_context(|| {
            format!(
                "merge input {} is neither a folder nor a run file",
                input.display()
            )
        })?;
        if meta.is_dir() {
            let mut above = vec![file_id(&meta)];
            find_run_files(input, &mut above, &mut found)?;
        } else if let Some(why) = not_regular(input, &meta) {
            bail!(why);
        } else {
            found.add_file(input, &meta);
        }
    }
    Ok(found)
}

/// Every rank file that can be merged, each problem said on standard
/// error: unreadable files, merged files and copies of a rank's file are
/// left out.
fn read_ranks(files: &[PathBuf]) -> Vec<LoadedRun> {
    let mut runs: Vec<LoadedRun> = vec![];
    let mut by_start: std::collections::HashMap<(String, String), Vec<usize>> =
        std::collections::HashMap::new();
    for (i, f) in files.iter().enumerate() {
        match read_checked(f, &format!("F{}", i + 1)) {
            Ok((run, warnings)) => {
                for w in warnings {
                    log::warn!(
                        "{}: field `{}`: {}",
                        f.display(),
                        printable(&w.field),
                        printable(&w.message)
                    );
                }
                if run.cluster.is_some() {
                    log::warn!("{}: left out: already a merged file", f.display());
                    continue;
                }
                // A copy of a rank's file in another folder would count its
                // work twice: the same host, start time and records.
                let key = (run.metadata.hostname.clone(), run.metadata.date.clone());
                let same = by_start.entry(key).or_default();
                if let Some(&first) = same.iter().find(|&&k| {
                    let o: &LoadedRun = &runs[k];
                    o.metadata == run.metadata && o.records == run.records
                }) {
                    log::warn!(
                        "{}: left out: the same run as {} (same host, start time and records); merged once",
                        printable(&f.display().to_string()),
                        printable(&runs[first].path.display().to_string())
                    );
                    continue;
                }
                same.push(runs.len());
                runs.push(run);
            }
            Err(e) => log::warn!(
                "{}: left out: {}{}",
                f.display(),
                if e.field.is_empty() {
                    String::new()
                } else {
                    format!("field `{}`: ", printable(&e.field))
                },
                printable(&e.message)
            ),
        }
    }
    runs
}

/// The error when no input held a usable run file, with the ranks the
/// job expected.
fn nothing_usable(inputs: &[PathBuf], expected: &BTreeMap<String, usize>) -> anyhow::Error {
    let mut missing = vec![];
    for (role, n) in expected {
        missing.push(format!("{n} {role} rank(s)"));
    }
    let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    anyhow::anyhow!(
        "no usable run file found in {}{}",
        if shown.len() > 1 {
            format!(
                "the {} inputs {}",
                shown.len(),
                few("the inputs", &shown, SHOWN, ", ")
            )
        } else {
            shown.join(", ")
        },
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (expected {})", missing.join(", "))
        }
    )
}
