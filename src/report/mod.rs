//! `pqcprof report` and `pqcprof compare`: what the run files say, for a
//! person.
//!
//! `report` merges any number of run files, from one host or many, into a
//! single self-contained HTML page (or Markdown): headline findings in
//! words, PQC against classical at each NIST level, GPU against CPU,
//! shaded and filterable tables, charts, the symmetric reference, every
//! skipped or failed record, the standards and each file's metadata. Every
//! figure names the record it came from (`F1#12`: file 1, `records[12]`).
//!
//! `compare` matches the records of two runs and reports the change in
//! median throughput, with whether the 95% confidence intervals overlap.
//!
//! Layout: [`load`] reads files forgivingly, [`model`] flattens and
//! classifies records, [`analysis`] decides what to say, [`sections`]
//! builds the tables, [`outline`] puts every section's content together
//! once for [`html`] and [`markdown`] to render, [`charts`] and [`svg`]
//! draw, [`compare`] compares.

pub mod analysis;
pub mod charts;
pub mod compare;
pub mod families;
pub mod html;
pub mod load;
pub mod markdown;
pub mod model;
pub mod outline;
pub mod scale;
pub mod scaling;
pub mod sections;
pub mod svg;
pub mod table;
pub mod units;

use crate::exit;
use clap::{Args, ValueEnum};
use load::{LoadSet, LoadedRun};
use model::Dataset;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

/// Output format of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One self-contained HTML page.
    Html,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Options of `report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Run files (`outputs/run-*.json`), from one host or many.
    #[arg(value_name = "RUN_FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the report; `-` for standard output [default:
    /// report.html, or report.md with --format markdown]
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
}

/// Options of `compare`.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The earlier run file (the baseline).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later run file.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Exit with code 3 when a record's median throughput dropped by more
    /// than PCT percent, or a record that passed before no longer does.
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub fail_above: Option<f64>,
}

/// Ok, failed and skipped record counts.
pub struct Counts {
    /// Status ok.
    pub ok: usize,
    /// Status failed.
    pub failed: usize,
    /// Status skipped.
    pub skipped: usize,
}

/// Counts records by status.
pub fn counts(ds: &Dataset) -> Counts {
    use crate::results::Status;
    let n = |s: Status| ds.entries.iter().filter(|e| e.rec.status == s).count();
    Counts {
        ok: n(Status::Ok),
        failed: n(Status::Failed),
        skipped: n(Status::Skipped),
    }
}

/// `12 measured records (2 failed, 1 skipped) across 2 run files from vm.`
pub fn file_summary(ds: &Dataset, c: &Counts) -> String {
    let hosts: BTreeSet<&str> = ds
        .runs
        .iter()
        .map(|r| r.metadata.hostname.as_str())
        .collect();
    let mut extra = vec![];
    if c.failed > 0 {
        extra.push(format!("{} failed", c.failed));
    }
    if c.skipped > 0 {
        extra.push(format!("{} skipped", c.skipped));
    }
    if !ds.symmetric.is_empty() {
        extra.push(format!("{} symmetric", ds.symmetric.len()));
    }
    if !ds.emulated.is_empty() {
        extra.push(format!(
            "{} emulated on the CPU stand-in driver, correctness only",
            ds.emulated.len()
        ));
    }
    format!(
        "{} measured record{}{} across {} run file{} from {}.",
        c.ok,
        if c.ok == 1 { "" } else { "s" },
        if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join(", "))
        },
        ds.runs.len(),
        if ds.runs.len() == 1 { "" } else { "s" },
        hosts.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// The machines and software, in one line per host.
pub fn context_line(ds: &Dataset) -> String {
    let mut by_host: Vec<(&str, Vec<&LoadedRun>)> = vec![];
    for r in ds.runs {
        match by_host.iter_mut().find(|(h, _)| *h == r.metadata.hostname) {
            Some((_, v)) => v.push(r),
            None => by_host.push((&r.metadata.hostname, vec![r])),
        }
    }
    let parts: Vec<String> = by_host
        .iter()
        .map(|(host, runs)| {
            let m = &runs[0].metadata;
            let gpus: BTreeSet<&str> = runs
                .iter()
                .flat_map(|r| r.metadata.gpus.iter().map(|g| g.name.as_str()))
                .collect();
            let dates: BTreeSet<&str> = runs
                .iter()
                .map(|r| r.metadata.date.get(..10).unwrap_or(&r.metadata.date))
                .collect();
            format!(
                "{host}: {} ({} logical cores, {}/{}){}, liboqs {}, {}; {} run file{} ({})",
                m.cpu,
                m.cores_logical,
                m.os,
                m.arch,
                if gpus.is_empty() {
                    String::new()
                } else {
                    format!(", {}", gpus.into_iter().collect::<Vec<_>>().join(", "))
                },
                m.liboqs_version,
                m.openssl_version,
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                dates.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let lead = if parts.len() == 1 {
        "Single machine"
    } else {
        "Several machines"
    };
    format!("{lead}. {}.", parts.join(". "))
}

/// The metadata and settings of one file as (name, value) rows.
pub fn metadata_rows(run: &LoadedRun) -> Vec<(String, String)> {
    let m = &run.metadata;
    let mut v: Vec<(String, String)> = vec![
        ("Source file".into(), run.path.display().to_string()),
        ("Host".into(), m.hostname.clone()),
        ("Started (UTC)".into(), m.date.clone()),
        ("CPU".into(), m.cpu.clone()),
        (
            "Cores".into(),
            format!(
                "{} logical{}",
                m.cores_logical,
                m.cores_physical
                    .map(|p| format!(", {p} physical"))
                    .unwrap_or_default()
            ),
        ),
        ("Memory".into(), format!("{} MiB", m.memory_total_mb)),
        (
            "OS / arch".into(),
            format!("{} / {} (kernel {})", m.os, m.arch, m.kernel),
        ),
        ("liboqs".into(), m.liboqs_version.clone()),
        ("OpenSSL".into(), m.openssl_version.clone()),
        (
            "pqcprof".into(),
            format!(
                "{} (commit {}, {} build, {})",
                m.pqcprof_version, m.git_commit, m.profile, m.rustc
            ),
        ),
    ];
    let or_unknown = |s: String| {
        if s.is_empty() {
            "not recorded (older run file)".to_string()
        } else {
            s
        }
    };
    v.push(("C compiler".into(), or_unknown(m.c_compiler.clone())));
    v.push((
        "OpenSSL providers".into(),
        or_unknown(m.openssl_providers.join(", ")),
    ));
    v.push(("Timer".into(), or_unknown(m.timer.clone())));
    if let Some(d) = &m.cuda_driver {
        v.push(("CUDA driver API".into(), d.clone()));
    }
    if let Some(d) = &m.nvidia_driver {
        v.push(("NVIDIA driver".into(), d.clone()));
    }
    for g in &m.gpus {
        v.push((
            format!("GPU {}", g.ordinal),
            format!(
                "{}, compute capability {}.{}, {} MiB",
                g.name, g.compute_capability.0, g.compute_capability.1, g.memory_total_mb
            ),
        ));
    }
    if let Some(r) = &m.slurm {
        v.push((
            "Slurm rank".into(),
            format!(
                "job {}, {}rank {}{} on {}{}",
                r.job_id,
                r.role
                    .as_deref()
                    .map(|x| format!("{x} "))
                    .unwrap_or_default(),
                r.procid,
                r.ntasks.map(|n| format!(" of {n}")).unwrap_or_default(),
                r.node,
                r.cuda_visible_devices
                    .as_deref()
                    .map(|c| format!(", CUDA_VISIBLE_DEVICES={c}"))
                    .unwrap_or_default()
            ),
        ));
    }
    let state = match (run.complete, run.interrupted) {
        (true, false) => "complete".to_string(),
        (_, true) => "interrupted by Ctrl-C: finished records only".to_string(),
        (false, false) => "incomplete: the run had not finished when this was written".to_string(),
    };
    v.push(("Run".into(), state));
    v.push(("Schema version".into(), run.schema_version.to_string()));
    match &run.config {
        Some(c) => {
            v.push(("Command".into(), c.command_line.join(" ")));
            match &run.sweep {
                // A sweep times windows: runs, batch and sampler do not apply.
                Some(sw) => {
                    v.push((
                        "Warm-up / window per operation".into(),
                        format!("{} s / {} s", sw.warmup_seconds, sw.window_seconds),
                    ));
                    v.push((
                        "Sweep wall time".into(),
                        format!("{:.1} s", sw.wall_seconds),
                    ));
                }
                None => v.push((
                    "Runs / warm-up / batch".into(),
                    format!("{} / {} / {}", c.runs, c.warmup_runs, c.batch),
                )),
            }
            v.push((
                "Threads".into(),
                c.threads
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
            v.push((
                "Message / context".into(),
                format!(
                    "{} bytes of 0xAB / {}",
                    c.message_bytes,
                    if c.context_hex.is_empty() {
                        "empty".to_string()
                    } else {
                        c.context_hex.clone()
                    }
                ),
            ));
            if run.sweep.is_none() {
                v.push((
                    "Sampler period".into(),
                    format!("{} ms", c.sample_period_ms),
                ));
            }
            v.push(("Randomness".into(), c.randomness.clone()));
        }
        None => v.push(("Settings".into(), "not readable in this file".into())),
    }
    v.push((
        "Records".into(),
        format!(
            "{} readable, {} symmetric",
            run.records.len(),
            run.symmetric.len()
        ),
    ));
    v
}

/// Reads the files and prints every problem to stderr.
fn load_and_warn(files: &[PathBuf]) -> LoadSet {
    let set = load::load_all(files);
    for p in &set.problems {
        eprintln!("pqcprof: {p}");
    }
    set
}

/// Renders the report for already loaded files.
pub fn render(set: &LoadSet, format: Format) -> String {
    let ds = Dataset::new(&set.runs);
    let an = analysis::analyse(&ds);
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    match format {
        Format::Html => html::render(set, &ds, &an, &generated),
        Format::Markdown => markdown::render(set, &ds, &an, &generated),
    }
}

/// `pqcprof report`: exit 0 when at least one file could be used, 1 when
/// none could.
pub fn run_report(args: &ReportArgs) -> anyhow::Result<i32> {
    let out = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(match args.format {
            Format::Html => "report.html",
            Format::Markdown => "report.md",
        })
    });
    if out.as_os_str() != "-" {
        crate::output::check_output_file(&out, &args.files)?;
    }
    let set = load_and_warn(&args.files);
    if set.runs.is_empty() {
        eprintln!(
            "pqcprof: error: none of the {} file(s) given could be used; no report written",
            args.files.len()
        );
        return Ok(exit::ERROR);
    }
    let text = render(&set, args.format);
    if out.as_os_str() == "-" {
        std::io::stdout().write_all(text.as_bytes())?;
    } else {
        crate::output::write_atomic(&out, text.as_bytes())?;
        let used: usize = set.runs.iter().map(|r| r.records.len()).sum();
        println!(
            "Report: {} ({} run file{}, {} records)",
            out.display(),
            set.runs.len(),
            if set.runs.len() == 1 { "" } else { "s" },
            used
        );
    }
    Ok(exit::OK)
}

/// `pqcprof compare OLD NEW`: exit 3 with `--fail-above` and a regression
/// beyond it, 1 when either file cannot be used.
pub fn run_compare(args: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(p) = args.fail_above {
        if !(p.is_finite() && p >= 0.0) {
            anyhow::bail!("invalid --fail-above {p}: use a percentage of 0 or more");
        }
    }
    // Read each file on its own: comparing a file with itself (or a copy)
    // is allowed here, unlike in a report.
    let mut runs = vec![];
    for (path, label) in [(&args.old, "F1"), (&args.new, "F2")] {
        match load::read_run(path, label) {
            Ok((run, warnings)) => {
                for w in warnings {
                    eprintln!(
                        "pqcprof: {}: warning: field `{}`: {}",
                        path.display(),
                        w.field,
                        w.message
                    );
                }
                runs.push(run);
            }
            Err(e) => {
                let field = if e.field.is_empty() {
                    String::new()
                } else {
                    format!("field `{}`: ", e.field)
                };
                eprintln!(
                    "pqcprof: {}: left out: {field}{}",
                    path.display(),
                    e.message
                );
            }
        }
    }
    if runs.len() != 2 {
        eprintln!("pqcprof: error: compare needs both files to be usable run files");
        return Ok(exit::ERROR);
    }
    let (old, new) = (&runs[0], &runs[1]);
    let lines = compare::compare(old, new);
    print!("{}", compare::render(old, new, &lines, args.fail_above));
    let emulated = [old, new]
        .iter()
        .map(|r| r.records.iter().filter(|(_, r)| r.emulated).count())
        .sum::<usize>();
    if emulated > 0 {
        println!("{emulated} record(s) made on pqcprof's CPU stand-in driver (emulated, not a GPU) left out: they are no speed measurements");
    }
    let regressions = args
        .fail_above
        .map(|p| {
            lines
                .iter()
                .filter(|l| compare::is_regression(l, p))
                .count()
        })
        .unwrap_or(0);
    let matched = lines
        .iter()
        .filter(|l| matches!(l.change, compare::Change::Measured { .. }))
        .count();
    println!("{matched} record(s) compared.");
    let duplicates = lines
        .iter()
        .filter(|l| matches!(l.change, compare::Change::Duplicate(_)))
        .count();
    if duplicates > 0 {
        eprintln!("pqcprof: warning: {duplicates} record(s) share their key (backend, threads, algorithm, operation, mode, batch) with another record of the same file: not compared");
    }
    if regressions > 0 {
        eprintln!(
            "pqcprof: {regressions} regression(s): slower by more than {}%, failing, missing, or not comparable",
            args.fail_above.unwrap_or(0.0)
        );
        return Ok(exit::SOME_FAILED);
    }
    Ok(exit::OK)
}
