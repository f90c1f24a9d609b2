//! The report's reference tables: symmetric primitives for context, every
//! skipped or failed record, the emulated records, the standards, and the
//! values each filter offers.

use crate::core::units;
use crate::report::families;
use crate::report::model::filters;
use crate::report::model::{Dataset, Entry};
use crate::report::sections::{sort_entries, src_cell, where_cell};
use crate::report::table::{natural_cmp, shades_by_group, Cell, Row, Table};
use crate::schema::record::Status;
use std::collections::BTreeSet;

/// Symmetric primitives, MB/s, shaded within each kind.
pub fn symmetric_table(ds: &Dataset) -> Table {
    let mut v: Vec<_> = ds.symmetric.iter().collect();
    v.sort_by(|a, b| {
        a.rec
            .kind
            .cmp(&b.rec.kind)
            .then_with(|| natural_cmp(&a.rec.algorithm, &b.rec.algorithm))
            .then_with(|| a.rec.chunk_bytes.cmp(&b.rec.chunk_bytes))
            .then_with(|| a.src.cmp(&b.src))
    });
    // Shade within each kind (hash, AEAD, ...), faster is better.
    let shade = shades_by_group(
        v.len(),
        v.iter()
            .enumerate()
            .map(|(i, s)| (i, s.rec.kind.as_str(), s.rec.mb_per_sec)),
        true,
    );
    let mut t = Table::new(
        "t-symmetric",
        &[
            "Algorithm",
            "Kind",
            "Provider",
            "Input per call",
            "MB/s",
            "Host",
            "Source",
        ],
        true,
    );
    for (s, sh) in v.iter().zip(shade) {
        let src = format!("F{}#symmetric[{}]", s.src.file + 1, s.src.index);
        let mut c = Cell::num(units::sig3(s.rec.mb_per_sec)).value(s.rec.mb_per_sec);
        c.shade = sh;
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(s.rec.algorithm.clone()),
                Cell::text(s.rec.kind.clone()),
                Cell::text(s.rec.provider.clone()),
                Cell::num(units::bytes(s.rec.chunk_bytes)),
                c,
                Cell::text(s.run.metadata.hostname.clone()),
                src_cell(src),
            ],
        });
    }
    t
}

/// Every record that was skipped or failed, with its reason.
pub fn appendix_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-appendix",
        &[
            "Status",
            "Algorithm",
            "Operation",
            "Where",
            "Reason",
            "Source",
        ],
        false,
    );
    for e in ds.entries.iter().filter(|e| e.rec.status != Status::Ok) {
        t.rows.push(Row {
            filters: filters(e),
            cells: vec![
                Cell::text(match e.rec.status {
                    Status::Failed => "failed",
                    _ => "skipped",
                })
                .class(if e.rec.status == Status::Failed {
                    "bad"
                } else {
                    "muted"
                }),
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.rec.operation.label()),
                where_cell(e),
                Cell::text(
                    e.rec
                        .reason
                        .clone()
                        .unwrap_or_else(|| "no reason recorded".into()),
                ),
                src_cell(e.src.to_string()),
            ],
        });
    }
    t
}

/// Records made on pqcprof's CPU stand-in CUDA driver: whether each passed
/// its gate, and what the gate checked. No throughput: an emulation's
/// timings say nothing about a GPU.
pub fn emulated_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-emulated",
        &[
            "Status",
            "Algorithm",
            "Operation",
            "Batch",
            "Where",
            "Gate, or why not",
            "Source",
        ],
        false,
    );
    let mut v: Vec<&Entry> = ds.emulated.iter().collect();
    sort_entries(&mut v);
    for e in v {
        let ok = e.rec.status == Status::Ok;
        let detail = match (&e.rec.gate, &e.rec.reason) {
            (_, Some(r)) if !ok => r.clone(),
            (Some(g), _) => format!(
                "{} operations checked: {}",
                g.checked_ops,
                g.checks.join("; ")
            ),
            _ => "no gate recorded".into(),
        };
        t.rows.push(Row {
            filters: filters(e),
            cells: vec![
                Cell::text(match e.rec.status {
                    Status::Ok => "ok",
                    Status::Failed => "failed",
                    Status::Skipped => "skipped",
                })
                .class(if ok { "good" } else { "bad" }),
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.rec.operation.label()),
                Cell::num(e.rec.batch.to_string()),
                where_cell(e),
                Cell::text(detail),
                src_cell(e.src.to_string()),
            ],
        });
    }
    t
}

/// The standards table: one row per document behind a family (or
/// symmetric primitive) in these files, from the families catalogue, and a
/// row for each family the catalogue does not know.
pub fn standards_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-standards",
        &["Families", "Document", "Title", "Status", "Tier", "Origin"],
        false,
    );
    let present: BTreeSet<&str> = ds.entries.iter().map(|e| e.rec.family.as_str()).collect();
    let mut unknown = vec![];
    let mut rows: Vec<(usize, Vec<&str>)> = vec![];
    for fam in present {
        match families::FAMILIES
            .iter()
            .position(|f| f.names.iter().any(|n| n.eq_ignore_ascii_case(fam)))
        {
            Some(i) => match rows.iter_mut().find(|(j, _)| *j == i) {
                Some((_, v)) => v.push(fam),
                None => rows.push((i, vec![fam])),
            },
            None => unknown.push(fam),
        }
    }
    rows.sort();
    let doc_cell = |s: &families::Standard| {
        let mut c = Cell::text(s.document);
        c.sub = Some(s.url.into());
        c
    };
    for (i, fams) in rows {
        let f = &families::FAMILIES[i];
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(fams.join(", ")),
                doc_cell(&f.standard),
                Cell::text(f.standard.title),
                Cell::text(f.standard.status),
                Cell::text(f.tier.name()),
                Cell::text(f.origin),
            ],
        });
    }
    for fam in unknown {
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(fam),
                Cell::text("–").class("muted"),
                Cell::text("not in pqcprof's families catalogue (src/report/families.rs)"),
                Cell::text("unknown").class("muted"),
                Cell::text(families::Tier::Other.name()),
                Cell::text(families::origin(fam)),
            ],
        });
    }
    let mut sym: Vec<(&str, Vec<&str>)> = vec![];
    for e in &ds.symmetric {
        let a = e.rec.algorithm.as_str();
        let doc = families::symmetric_standard(a).map_or("–", |s| s.document);
        match sym.iter_mut().find(|(d, _)| *d == doc) {
            Some((_, v)) if v.contains(&a) => {}
            Some((_, v)) => v.push(a),
            None => sym.push((doc, vec![a])),
        }
    }
    for (_, algs) in sym {
        let spec = families::symmetric_standard(algs[0]);
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(algs.join(", ")),
                spec.map_or(Cell::text("–").class("muted"), doc_cell),
                Cell::text(spec.map_or("not in pqcprof's catalogue", |s| s.title)),
                Cell::text(spec.map_or("unknown", |s| s.status)),
                Cell::text("symmetric"),
                Cell::text(""),
            ],
        });
    }
    t
}

/// Distinct values of one filter attribute over every filterable row.
pub fn filter_values(ds: &Dataset, name: &str) -> Vec<String> {
    let mut v: Vec<String> = ds
        .entries
        .iter()
        .flat_map(|e| {
            filters(e)
                .into_iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, v)| v)
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    v.sort_by(|a, b| natural_cmp(a, b));
    v
}
