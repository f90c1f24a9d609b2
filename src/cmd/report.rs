//! `pqcprof report`: its arguments, and the report written to a file (or
//! standard output) from the run files and published results given.

use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::exit;
use crate::report::{load_and_warn, render, Format};
use clap::Args;
use std::path::PathBuf;

/// Options of `report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Run files, and published results to show beside them
    ///
    /// Run files (`outputs/run-*.json`), from one host or many, and
    /// published results to show beside them: pqc-sig-bench-c CSVs,
    /// cuPQC_benchmark's `mlkem_results.json`/`mldsa_results.json` and
    /// latency files (recognised by their content).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// File to write the report to; `-` for standard output
    ///
    /// [default: report.html, or report.md with --format markdown]
    #[arg(short = 'o', long = "out", value_name = "FILE", help_heading = heading::RESULTS)]
    pub output: Option<PathBuf>,
    /// The report's format: html or markdown [default: html]
    #[arg(
        long,
        value_name = "html|markdown",
        value_enum,
        default_value_t = Format::Html,
        hide_default_value = true,
        hide_possible_values = true,
        help_heading = heading::OUTPUT
    )]
    pub format: Format,
    /// Check every figure against the raw runs instead of writing a report
    ///
    /// Writes no report: re-derives every figure of the HTML and Markdown
    /// report and of `compare --json` between these run files from their
    /// raw runs, prints each one that disagrees, and exits 3 if any does
    /// (docs/statistics.md, the audit).
    #[arg(long, conflicts_with_all = ["output", "format"])]
    pub audit: bool,
}

/// `pqcprof report`: exit 0 when at least one file could be used, 1 when
/// none could.
pub fn report(args: &ReportArgs) -> anyhow::Result<i32> {
    let out = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(match args.format {
            Format::Html => "report.html",
            Format::Markdown => "report.md",
        })
    });
    if out.as_os_str() != "-" && !args.audit {
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
                crate::core::listing::few(
                    "the published results given",
                    &set
                        .imported
                        .iter()
                        .map(|f| f.path.display().to_string())
                        .collect::<Vec<_>>(),
                    crate::core::listing::SHOWN,
                    ", "
                )
            );
        }
        return Ok(exit::ERROR);
    }
    if args.audit {
        let a = crate::report::audit::run(&set);
        for d in &a.disagreements {
            println!("{d}");
        }
        println!("{}", a.summary());
        return Ok(if a.disagreements.is_empty() {
            exit::OK
        } else {
            exit::SOME_FAILED
        });
    }
    let text = render(&set, args.format);
    if out.as_os_str() == "-" {
        stdout::print(text)?;
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
        stdout::println(format!(
            "Report: {} ({} run file{}, {} records{imported})",
            out.display(),
            set.runs.len(),
            if set.runs.len() == 1 { "" } else { "s" },
            used
        ))?;
    }
    Ok(exit::OK)
}
