//! What the run files say, for a person: the report (`pqcprof report`)
//! and the comparison of two runs (`pqcprof compare`).
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
//! together once for [`render`] (HTML, Markdown, SVG charts) to draw;
//! [`change`] holds the change statistics two records or runs are compared
//! by, and [`compare`] writes a comparison of two runs as text or JSON. Other tools' published results (pqc-sig-bench-c
//! CSVs, cuPQC_benchmark JSON) given beside the run files are read by
//! [`imports`] and shown only by [`beside`], never in a finding.

pub mod audit;
pub mod batch_curves;
pub mod beside;
pub mod caveats;
pub mod change;
pub mod cluster_sections;
pub mod cold;
pub mod compare;
pub mod comparison_tables;
pub mod families;
pub mod findings;
pub mod gpu_rows;
pub mod headline;
pub mod implementations;
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

use crate::core::units::printable;
use crate::schema::load::LoadSet;
use clap::ValueEnum;
use model::Dataset;
use std::path::PathBuf;

/// Output format of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One self-contained HTML page.
    Html,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Reads the files, published results apart from run files, and prints
/// every problem to stderr.
pub fn load_and_warn(files: &[PathBuf]) -> LoadSet {
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_measurement_far_from_its_prediction_is_said_in_the_offload_section_and_the_first_screen() {
        let mut run = super::model::test_records::loaded(vec![]);
        run.offload = Some(super::offload::tests::far_from_its_prediction());
        let set = crate::schema::load::LoadSet {
            runs: vec![run],
            problems: vec![],
            imported: vec![],
        };
        let md = super::render(&set, super::Format::Markdown);
        let offload = &md[md.find("\n## Offload").unwrap()..];
        assert!(
            offload.contains("**Predictions far from what was measured.**"),
            "{offload}"
        );
        assert!(
            offload.contains("0.356× the prediction (27,732/s)"),
            "{offload}"
        );
        let first = &md[..md.find("\n## PQC against classical").unwrap()];
        assert!(
            first.contains(
                "2 offload figures lie more than a factor of 2 from the planner's prediction"
            ),
            "{first}"
        );
    }
}
