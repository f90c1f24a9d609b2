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
//! Layout: [`crate::schema::load`] reads files forgivingly, [`model`]
//! flattens and classifies records, [`findings`] decides what to say,
//! [`sections`] builds the tables, [`outline`] puts every section's content
//! together once for [`render`] (HTML, Markdown, SVG charts) to draw,
//! [`compare`] compares. Other tools' published results (pqc-sig-bench-c
//! CSVs, cuPQC_benchmark JSON) given beside the run files are read by
//! [`imports`] and shown only by [`beside`], never in a finding.

pub mod batch_curves;
pub mod beside;
pub mod caveats;
pub mod cluster_sections;
pub mod cold;
pub mod compare;
pub mod comparison_tables;
pub mod families;
pub mod findings;
pub mod gpu_rows;
pub mod headline;
pub mod imports;
pub mod model;
pub mod offload;
pub mod outline;
pub mod pairs;
pub mod reference_tables;
pub mod render;
pub mod sections;
pub mod summary;
pub mod table;

use crate::core::exit;
use crate::core::units::printable;
use crate::schema::load::LoadSet;
use clap::{Args, ValueEnum};
use model::Dataset;
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
    /// Run files (`outputs/run-*.json`), from one host or many, and
    /// published results to show beside them: pqc-sig-bench-c CSVs,
    /// cuPQC_benchmark's `mlkem_results.json`/`mldsa_results.json` and
    /// latency files (recognised by their content).
    #[arg(value_name = "FILE", required = true)]
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
    /// Exit with code 3 when a record is `slower` and its throughput
    /// dropped by more than PCT percent, or a record that passed before
    /// no longer does [default: 5]
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub fail_above: Option<f64>,
    /// A change whose 95% interval lies inside +-PCT percent is `same`;
    /// one straddling +-PCT is `unclear`.
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub noise_threshold: f64,
    /// Print the comparison as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `--fail-above` when not given, percent.
pub const DEFAULT_FAIL_ABOVE: f64 = 5.0;

/// Reads the files, published results apart from run files, and prints
/// every problem to stderr.
fn load_and_warn(files: &[PathBuf]) -> LoadSet {
    let mut imported = vec![];
    let mut import_problems = vec![];
    let mut run_files = vec![];
    for f in files {
        let label = format!("I{}", imported.len() + 1);
        match imports::read(f, &label, &mut import_problems) {
            Ok(Some(file)) => imported.push(file),
            Ok(None) => run_files.push(f.clone()),
            Err(p) => import_problems.push(p),
        }
    }
    let mut set = crate::schema::load::load_all(&run_files);
    set.problems.extend(import_problems);
    set.imported = imported;
    for p in &set.problems {
        log::warn!("{}", printable(&p.to_string()));
    }
    set
}

/// Renders the report for already loaded files.
pub fn render(set: &LoadSet, format: Format) -> String {
    let ds = Dataset::new(&set.runs);
    let an = findings::analyse(&ds);
    let generated = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    match format {
        Format::Html => render::html::render(set, &ds, &an, &generated),
        Format::Markdown => render::markdown::render(set, &ds, &an, &generated),
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
        crate::write::output::check_output_file(&out, &args.files)?;
    }
    let set = load_and_warn(&args.files);
    if set.runs.is_empty() {
        if set.imported.is_empty() {
            log::error!(
                "none of the {} file(s) given could be used; no report written",
                args.files.len()
            );
        } else {
            log::error!(
                "only published results were given ({}); add at least one pqcprof run file to set them beside; no report written",
                set.imported
                    .iter()
                    .map(|f| f.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        return Ok(exit::ERROR);
    }
    let text = render(&set, args.format);
    if out.as_os_str() == "-" {
        std::io::stdout().write_all(text.as_bytes())?;
    } else {
        crate::write::output::write_atomic(&out, text.as_bytes())?;
        let used: usize = set.runs.iter().map(|r| r.records.len()).sum();
        let imported = match set.imported.len() {
            0 => String::new(),
            n => format!(
                ", {n} imported file{} of published results",
                if n == 1 { "" } else { "s" }
            ),
        };
        println!(
            "Report: {} ({} run file{}, {} records{imported})",
            out.display(),
            set.runs.len(),
            if set.runs.len() == 1 { "" } else { "s" },
            used
        );
    }
    Ok(exit::OK)
}

/// `pqcprof compare OLD NEW`: exit 3 on a regression beyond `--fail-above`
/// (5% unless given), 1 when either file cannot be used.
pub fn run_compare(args: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(p) = args.fail_above {
        if !(p.is_finite() && p >= 0.0) {
            anyhow::bail!("invalid --fail-above {p}: use a percentage of 0 or more");
        }
    }
    let fail_above = args.fail_above.unwrap_or(DEFAULT_FAIL_ABOVE);
    let t = args.noise_threshold;
    if !(t.is_finite() && (0.0..100.0).contains(&t)) {
        anyhow::bail!("invalid --noise-threshold {t}: use a percentage of 0 or more and below 100");
    }
    // Read each file on its own: comparing a file with itself (or a copy)
    // is allowed here, unlike in a report.
    let mut runs = vec![];
    for (path, label) in [(&args.old, "F1"), (&args.new, "F2")] {
        match crate::schema::load::read_run(path, label) {
            Ok((run, warnings)) => {
                for w in warnings {
                    log::warn!(
                        "{}: field `{}`: {}",
                        path.display(),
                        printable(&w.field),
                        printable(&w.message)
                    );
                }
                runs.push(run);
            }
            Err(e) => {
                let field = if e.field.is_empty() {
                    String::new()
                } else {
                    format!("field `{}`: ", printable(&e.field))
                };
                log::warn!(
                    "{}: left out: {field}{}",
                    path.display(),
                    printable(&e.message)
                );
            }
        }
    }
    if runs.len() != 2 {
        log::error!("compare needs both files to be usable run files");
        return Ok(exit::ERROR);
    }
    let (old, new) = (&runs[0], &runs[1]);
    let lines = compare::compare(old, new, t / 100.0);
    let emulated = [old, new]
        .iter()
        .map(|r| r.records.iter().filter(|(_, r)| r.emulated).count())
        .sum::<usize>();
    let regressions = lines
        .iter()
        .filter(|l| compare::is_regression(l, fail_above))
        .count();
    let matched = lines
        .iter()
        .filter(|l| matches!(l.change, compare::Change::Measured(_)))
        .count();
    if args.json {
        let mut v = compare::to_json(old, new, &lines, t, fail_above);
        v["compared"] = matched.into();
        v["emulated_left_out"] = emulated.into();
        v["regressions"] = regressions.into();
        // serde_json escapes every control character in the strings.
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        // Every string in the table comes from the files: printed escaped.
        print!(
            "{}",
            printable(&compare::render(old, new, &lines, fail_above))
        );
        if emulated > 0 {
            println!("{emulated} record(s) made on pqcprof's CPU stand-in driver (emulated, not a GPU) left out: they are no speed measurements");
        }
        println!("{matched} record(s) compared.");
    }
    let duplicates = lines
        .iter()
        .filter(|l| matches!(l.change, compare::Change::Duplicate(_)))
        .count();
    if duplicates > 0 {
        log::warn!("{duplicates} record(s) share their key (backend, threads, algorithm, operation, mode, batch) with another record of the same file: not compared");
    }
    if regressions > 0 {
        log::error!(
            "{regressions} regression(s): slower by more than {}%, failing, missing, or not comparable",
            fail_above
        );
        return Ok(exit::SOME_FAILED);
    }
    if matched == 0 {
        // A gate that compared nothing has not passed.
        log::error!(
            "no measured record of {} matches one of {} (same backend, threads, algorithm, operation, mode and batch), so nothing was compared{}",
            args.old.display(),
            args.new.display(),
            match args.fail_above {
                Some(p) => format!("; --fail-above {p} cannot pass on zero records"),
                None => String::new(),
            }
        );
        return Ok(if args.fail_above.is_some() {
            exit::SOME_FAILED
        } else {
            exit::ERROR
        });
    }
    Ok(exit::OK)
}
