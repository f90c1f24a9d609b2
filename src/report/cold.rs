//! Records measured with a cold L2 (`--cache cold`: before each timed run
//! a write over twice the L2 evicts the inputs) set apart from the warm
//! figures every other table uses: each beside the warm record of the same
//! operation, setup and batch, with how much of its speed the eviction
//! costs.

use crate::core::units;
use crate::report::model::{filters, Dataset, Entry};
use crate::report::sections::{entry_cmp, level_text, operation_cells, src_cell};
use crate::report::table::{Cell, Row, Table};
use crate::schema::record::Mode;

/// What the section says above its table.
pub const INTRO: &str = "Measured with --cache cold: before each timed run, outside its window, a write over a device buffer of twice the L2 size evicts the inputs, so the kernel reads them from device memory. These figures are kept out of every other table; each is set beside the warm record of the same operation, device, backend and kernel variant (at the same batch, or else the nearest one measured, named below it), with the cold speed over the warm.";

/// The record's speed as the table compares it: operations per second of
/// a throughput record, or of one operation at the median latency.
fn speed(e: &Entry) -> Option<f64> {
    let v = match e.rec.mode {
        Mode::Throughput => e.rec.ops_per_sec?,
        Mode::Latency => 1e6 / e.rec.latency_us.as_ref()?.median,
    };
    (v.is_finite() && v > 0.0).then_some(v)
}

/// The record's figure as printed: ops/s, or the median latency.
fn figure(e: &Entry) -> String {
    match (e.rec.mode, e.rec.latency_us.as_ref()) {
        (Mode::Latency, Some(l)) => units::time_ms(l.median / 1000.0),
        _ => speed(e).map(units::ops).unwrap_or_else(|| "–".into()),
    }
}

fn variant<'a>(e: &Entry<'a>) -> Option<&'a str> {
    e.rec.kernel.as_ref().map(|k| k.variant.as_str())
}

/// Whether `warm` could be the warm twin of `cold`: the same host,
/// device, backend, threads, algorithm, operation, mode and kernel variant.
fn same_setup(cold: &Entry, warm: &Entry) -> bool {
    let (c, w) = (cold.rec, warm.rec);
    !warm.is_cold()
        && cold.host() == warm.host()
        && (&c.device.name, c.gpu_ordinal) == (&w.device.name, w.gpu_ordinal)
        && (&c.backend, c.threads) == (&w.backend, w.threads)
        && (&c.algorithm, c.operation, c.mode) == (&w.algorithm, w.operation, w.mode)
        && variant(cold) == variant(warm)
}

/// The warm twin of `cold`: of its setup, the record at the same batch,
/// else at the nearest one (calibrated batches of a cold and a warm run
/// may differ by a wave).
fn warm_twin<'e, 'a>(ds: &'e Dataset<'a>, cold: &Entry) -> Option<&'e Entry<'a>> {
    let distance = |w: &Entry| {
        (w.rec.batch.max(1) as f64 / cold.rec.batch.max(1) as f64)
            .ln()
            .abs()
    };
    ds.ok()
        .filter(|w| same_setup(cold, w) && speed(w).is_some())
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

/// Every passing cold record, with its warm twin's figure and the ratio
/// of their speeds (cold over warm: below 1 is what the eviction costs);
/// a twin at another batch says so below its figure.
pub fn cold_table(ds: &Dataset) -> Table {
    let mut cold: Vec<&Entry> = ds.ok().filter(|e| e.is_cold()).collect();
    cold.sort_by(|a, b| entry_cmp(a, b));
    let mut t = Table::new(
        "t-cold",
        &[
            "Level",
            "Algorithm",
            "Operation",
            "Where",
            "Batch",
            "Warm",
            "Cold",
            "Cold / warm",
            "Source",
        ],
        true,
    );
    for e in cold {
        let warm = warm_twin(ds, e);
        let ratio = warm.and_then(|w| Some(speed(e)? / speed(w)?));
        let mut sources = vec![e.src];
        sources.extend(warm.map(|w| w.src));
        let mut cells = vec![Cell::num(level_text(e.rec.nist_level))];
        cells.extend(operation_cells(e));
        cells.extend([
            Cell::num(e.rec.batch.to_string()),
            match warm {
                Some(w) if w.rec.batch != e.rec.batch => Cell::num(figure(w))
                    .from([w.src])
                    .below(format!("at batch {}", w.rec.batch)),
                Some(w) => Cell::num(figure(w)).from([w.src]),
                None => Cell::text("not measured"),
            },
            Cell::num(figure(e)).from([e.src]),
            match ratio {
                // Two decimals: a cold run a few percent behind shows.
                Some(r) => Cell::num(format!("{r:.2}×")).value(r),
                None => Cell::empty(),
            },
            src_cell(crate::report::model::src_list(sources, " ")),
        ]);
        t.rows.push(Row {
            filters: filters(e),
            cells,
        });
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::test_records::{loaded, ok_record};
    use crate::schema::record::Record;

    /// An ok ML-KEM-768 encapsulation record on a GPU at `ops` operations
    /// per second and `batch`, with `cache` as its L2 state.
    fn rec(ops: f64, cache: Option<&str>, batch: usize) -> Record {
        let mut r = ok_record(true, ops, batch);
        r.cache = cache.map(String::from);
        r
    }

    fn with_records(records: Vec<Record>, check: impl Fn(&Dataset)) {
        check(&Dataset::new(std::slice::from_ref(&loaded(records))));
    }

    #[test]
    fn cold_records_sit_beside_their_warm_twin_and_nowhere_else() {
        let records = vec![
            rec(1e6, Some("warm"), 4096),
            rec(8e5, Some("cold"), 4096),
            rec(5e5, Some("cold"), 1024),
        ];
        with_records(records, |ds| {
            let t = cold_table(ds);
            assert_eq!(t.rows.len(), 2);
            let text =
                |row: &Row| -> Vec<String> { row.cells.iter().map(|c| c.text.clone()).collect() };
            let (small, large) = (text(&t.rows[0]), text(&t.rows[1]));
            // Batch 4096: the warm twin's figure and 0.8 of its speed.
            assert_eq!(large[4], "4096");
            assert_eq!(large[7], "0.80×", "{large:?}");
            // Batch 1024: the nearest warm batch, said below its figure.
            assert_eq!(t.rows[0].cells[5].sub.as_deref(), Some("at batch 4096"));
            assert_eq!(small[7], "0.50×", "{small:?}");
            // Cold records back no other figure.
            let speeds: Vec<f64> = ds.ok().filter_map(|e| e.ok_throughput()).collect();
            assert_eq!(speeds, [1e6]);
        });
    }

    #[test]
    fn a_cold_record_of_another_setup_has_no_twin() {
        let mut other = rec(1e6, None, 64);
        other.backend = "cupqc".into();
        with_records(vec![other, rec(2e5, Some("cold"), 64)], |ds| {
            let t = cold_table(ds);
            assert_eq!(t.rows[0].cells[5].text, "not measured");
            assert_eq!(t.rows[0].cells[7].text, Cell::empty().text);
        });
    }

    #[test]
    fn a_record_without_a_cache_field_is_warm() {
        with_records(vec![rec(1e6, None, 64), rec(2e5, Some("cold"), 64)], |ds| {
            let t = cold_table(ds);
            assert_eq!(t.rows.len(), 1);
            assert_eq!(t.rows[0].cells[7].text, "0.20×");
        });
    }
}
