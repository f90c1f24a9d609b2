//! "Beside published results": each imported figure (another tool's, on
//! another machine) next to this report's own figure for the same
//! algorithm and operation, and how the two compare.
//!
//! Imported figures appear here and nowhere else: the findings, headline
//! ratios and every other table are computed from run files only.

use crate::core::units;
use crate::report::model::{Dataset, Entry};
use crate::report::sections::{src_cell, where_cell};
use crate::report::table::{Cell, Row, Table};
use crate::schema::imported::{ImportFormat, ImportedFigure, ImportedFile, ImportedRow};
use crate::schema::record::Mode;

/// What the section says before its table (HTML and Markdown).
pub const BESIDE_INTRO: &str = "Figures other tools published for other machines, from the files listed here, each beside this report's own fastest figure for the same algorithm and operation on each host: on one CPU thread for pqc-sig-bench-c's figures, which time one thread; on a GPU for a GPU's figures when this report has GPU records. They were not measured by pqcprof, and their method, message, batch and library versions are their own: read a ratio as a rough position, not a measurement. No finding or other table of this report uses them.";

/// What a comparison with a published figure stands on: that figure has
/// no runs, so there is no change interval, only the ratio.
pub const PUBLISHED_RATIO: &str = "ratio only, the published figure lists no runs";

/// The records an imported figure is set against: same algorithm and
/// operation, measured the same way (throughput or single-operation
/// latency), on a GPU when the import was and this report has GPU
/// records, on one CPU thread for pqc-sig-bench-c (which times one thread).
fn candidates<'a>(
    ds: &'a Dataset<'a>,
    file: &ImportedFile,
    row: &ImportedRow,
) -> Vec<&'a Entry<'a>> {
    let same = |e: &&Entry| e.rec.algorithm == row.algorithm && e.rec.operation == row.operation;
    let v: Vec<&Entry> = match row.figure {
        ImportedFigure::OpsPerSec(_) => ds
            .ok()
            .filter(same)
            .filter(|e| e.ok_throughput().is_some())
            .collect(),
        ImportedFigure::LatencyUs(_) => ds
            .ok()
            .filter(same)
            .filter(|e| e.rec.mode == Mode::Latency && e.rec.latency_us.is_some())
            .collect(),
    };
    match file.format {
        ImportFormat::SigBenchCsv => v
            .into_iter()
            .filter(|e| !e.is_gpu() && e.rec.threads == 1)
            .collect(),
        _ if file.gpu && v.iter().any(|e| e.is_gpu()) => {
            v.into_iter().filter(|e| e.is_gpu()).collect()
        }
        _ => v,
    }
}

/// Speed of a figure, higher is faster: ops/s, or 1/latency.
fn speed(f: ImportedFigure) -> f64 {
    match f {
        ImportedFigure::OpsPerSec(v) => v,
        ImportedFigure::LatencyUs(us) => 1.0 / us,
    }
}

/// This report's figure of `e`, in the kind of `like`.
fn figure_of(e: &Entry, like: ImportedFigure) -> Option<ImportedFigure> {
    match like {
        ImportedFigure::OpsPerSec(_) => e.ok_throughput().map(ImportedFigure::OpsPerSec),
        ImportedFigure::LatencyUs(_) => e
            .rec
            .latency_us
            .as_ref()
            .map(|s| s.mean)
            .filter(|m| m.is_finite() && *m > 0.0)
            .map(ImportedFigure::LatencyUs),
    }
}

fn figure_text(f: ImportedFigure) -> String {
    match f {
        ImportedFigure::OpsPerSec(v) => units::ops(v),
        ImportedFigure::LatencyUs(us) => format!("{} per op", units::time_ms(us / 1000.0)),
    }
}

/// `2.1× faster here`, `3.0× slower here`, `same speed`.
pub fn comparison(here: ImportedFigure, published: ImportedFigure) -> (String, f64) {
    let r = speed(here) / speed(published);
    let text = if (r - 1.0).abs() < 0.005 {
        "same speed".to_string()
    } else if r > 1.0 {
        format!("{} faster here", units::ratio(r))
    } else {
        format!("{} slower here", units::ratio(1.0 / r))
    };
    (text, r)
}

/// One sentence per imported file: what it is, whose machine, and that
/// pqcprof did not measure it.
pub fn import_notes(imported: &[ImportedFile]) -> Vec<String> {
    imported
        .iter()
        .map(|f| {
            format!(
                "{}: {} ({}), {} figure{} measured on {} (machine named by {}); imported, not measured by pqcprof.",
                f.label,
                f.file_name,
                f.format.describe(),
                f.rows.len(),
                if f.rows.len() == 1 { "" } else { "s" },
                f.machine,
                f.machine_from
            )
        })
        .collect()
}

/// The table: per imported figure, this report's best matching figure on
/// each host (one row per host; "not measured here" when none), the
/// imported one and their ratio.
pub fn beside_table(ds: &Dataset, imported: &[ImportedFile]) -> Table {
    let mut t = Table::new(
        "t-beside",
        &[
            "Algorithm",
            "Operation",
            "Here",
            "Figure here",
            "Published",
            "Published by",
            "Here against published",
            "Source",
        ],
        false,
    );
    for file in imported {
        for row in &file.rows {
            let published = Cell::num(figure_text(row.figure))
                .below("imported, not measured by pqcprof")
                .class("muted");
            let by = Cell::text(file.machine.clone())
                .below(format!("{} {}", file.label, file.file_name));
            let name = if row.name_in_file == row.algorithm {
                Cell::text(row.algorithm.clone())
            } else {
                Cell::text(row.algorithm.clone()).below(format!("{} in the file", row.name_in_file))
            };
            // The fastest matching record of each host.
            let mut best: Vec<(&Entry, ImportedFigure)> = vec![];
            for e in candidates(ds, file, row) {
                let Some(f) = figure_of(e, row.figure) else {
                    continue;
                };
                match best.iter_mut().find(|(b, _)| b.host() == e.host()) {
                    Some(slot) if speed(f) > speed(slot.1) => *slot = (e, f),
                    Some(_) => {}
                    None => best.push((e, f)),
                }
            }
            if best.is_empty() {
                t.rows.push(Row {
                    filters: vec![],
                    cells: vec![
                        name.clone(),
                        Cell::text(row.operation.label()),
                        Cell::text("not measured here").class("muted"),
                        Cell::empty(),
                        published.clone(),
                        by.clone(),
                        Cell::empty(),
                        src_cell(file.label.clone()),
                    ],
                });
                continue;
            }
            for (e, here) in best {
                let (text, r) = comparison(here, row.figure);
                let value = match here {
                    ImportedFigure::OpsPerSec(v) => v,
                    ImportedFigure::LatencyUs(v) => v,
                };
                t.rows.push(Row {
                    filters: vec![],
                    cells: vec![
                        name.clone(),
                        Cell::text(row.operation.label()),
                        where_cell(e),
                        Cell::num(figure_text(here)).from([e.src]).value(value),
                        published.clone(),
                        by.clone(),
                        Cell::num(text).below(PUBLISHED_RATIO).value(r),
                        src_cell(format!("{} {}", e.src, file.label)),
                    ],
                });
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_say_which_side_is_faster() {
        let (ops, lat) = (ImportedFigure::OpsPerSec, ImportedFigure::LatencyUs);
        for (here, published, said) in [
            (ops(200.0), ops(100.0), "2.0× faster here"),
            (ops(100.0), ops(400.0), "4.0× slower here"),
            (ops(100.0), ops(100.0), "same speed"),
            // Latency: fewer microseconds is faster.
            (lat(10.0), lat(30.0), "3.0× faster here"),
            (lat(40.0), lat(10.0), "4.0× slower here"),
            // Within half a percent either way is the same speed: a
            // machine signing 33,085/s beside a published 33,000/s.
            (ops(33_085.0), ops(33_000.0), "same speed"),
            (ops(99.6), ops(100.0), "same speed"),
            (ops(100.6), ops(100.0), "1.0× faster here"),
            (ops(99.0), ops(100.0), "1.0× slower here"),
        ] {
            assert_eq!(
                comparison(here, published).0,
                said,
                "{here:?} {published:?}"
            );
        }
        // The ratio itself reads from this report's side.
        assert_eq!(comparison(ops(150.0), ops(100.0)).1, 1.5);
    }
}
