//! Throughput against batch size in the report: every (file, backend,
//! device, threads, algorithm, operation) measured at two batch sizes or
//! more is a curve; each curve gets its saturation batch, and each GPU
//! curve its break-even batch against the all-core CPU figure of the same
//! run file, else the same host (see [`crate::analyse::saturation`] for both
//! definitions). Break-even uses the GPU's end-to-end throughput (copies
//! included) where the records have it, kernel-only otherwise, and says
//! which. Emulated records (the CPU stand-in driver's) are not in the
//! dataset's entries, so they never make a curve.

use crate::analyse::saturation::{break_even, saturation, BreakEven, Point, Saturation};
use crate::core::catalog::Operation;
use crate::core::units;
use crate::report::headline::{Finding, Group};
use crate::report::model::filters;
use crate::report::model::{Dataset, Entry, SrcRef};
use crate::report::table::{natural_cmp, Cell, Row, Table};
use std::collections::BTreeMap;

/// How to read the table, for both formats.
pub const INTRO: &str = "Every backend, algorithm and operation measured at two batch sizes or more. Saturation batch: the smallest batch reaching 95% of the peak throughput measured (a peak at the largest batch means the curve may still rise). Break-even batch: the smallest batch from which the GPU beats the all-core CPU figure of the same run file (else of the same host) at that batch and every larger one measured, or never in the range measured; end to end counts the copies of inputs and outputs, kernel only counts the kernel alone.";

/// One measured curve and what it says.
#[derive(Debug, Clone)]
pub struct Curve<'a> {
    /// Its records, in batch order.
    pub entries: Vec<Entry<'a>>,
    /// Kernel-only (GPU) or plain (CPU) throughput at each batch.
    pub points: Vec<Point>,
    /// End-to-end throughput at each batch where measured (GPU).
    pub end_to_end: Vec<Point>,
    /// Saturation of `points`.
    pub saturation: Option<Saturation>,
    /// The all-core CPU record of the same file, algorithm and operation
    /// (the best batch of the most threads), for GPU curves.
    pub cpu: Option<Entry<'a>>,
    /// Break-even against `cpu`, end to end where measured.
    pub break_even: Option<BreakEven>,
    /// Whether `break_even` used end-to-end figures (else kernel-only).
    pub break_even_end_to_end: bool,
    /// Break-even of the kernel-only figures, beside the end-to-end one.
    pub break_even_kernel: Option<BreakEven>,
}

impl Curve<'_> {
    /// The first record: backend, device, algorithm, operation.
    pub fn head(&self) -> &Entry<'_> {
        &self.entries[0]
    }

    /// Every record behind the curve and its CPU figure.
    pub fn sources(&self) -> Vec<SrcRef> {
        let mut v: Vec<SrcRef> = self.entries.iter().map(|e| e.src).collect();
        v.extend(self.cpu.map(|c| c.src));
        v
    }
}

/// Whether a record's figures may back a speed claim: measured, a
/// throughput, and made by a real device.
pub fn speed_usable(e: &Entry) -> bool {
    e.ok_throughput().is_some()
}

/// End-to-end median ops/s of a record, when measured.
pub fn end_to_end_ops(e: &Entry) -> Option<f64> {
    e.rec
        .end_to_end
        .as_ref()
        .and_then(|x| x.ops_per_sec)
        .filter(|v| v.is_finite() && *v > 0.0)
}

fn op_rank(op: Operation) -> usize {
    Operation::ALL.iter().position(|o| *o == op).unwrap_or(99)
}

/// The all-core CPU record for `g`: same algorithm and operation, from the
/// same run file, else from another file of the same host (a pipeline
/// writes its CPU and GPU sweeps to separate files); the most threads, then
/// the best throughput among its batches.
fn all_core_cpu<'a>(ds: &Dataset<'a>, g: &Entry<'a>) -> Option<Entry<'a>> {
    let best = |same_file: bool| {
        ds.entries
            .iter()
            .filter(|c| {
                !c.is_gpu()
                    && (if same_file {
                        c.src.file == g.src.file
                    } else {
                        c.host() == g.host()
                    })
                    && c.rec.algorithm == g.rec.algorithm
                    && c.rec.operation == g.rec.operation
                    && speed_usable(c)
            })
            .max_by(|a, b| {
                a.rec.threads.cmp(&b.rec.threads).then_with(|| {
                    a.ok_throughput()
                        .unwrap_or(0.0)
                        .total_cmp(&b.ok_throughput().unwrap_or(0.0))
                })
            })
            .copied()
    };
    best(true).or_else(|| best(false))
}

/// Every curve with two batch sizes or more, in report order.
pub fn curves<'a>(ds: &Dataset<'a>) -> Vec<Curve<'a>> {
    // The device ordinal and rank too: two GPUs of one model (or two
    // ranks' GPUs) are two curves, never one device's points over another's.
    type Key = (
        usize,
        String,
        String,
        Option<usize>,
        Option<usize>,
        usize,
        String,
        usize,
    );
    let mut groups: BTreeMap<Key, Vec<Entry<'a>>> = BTreeMap::new();
    for e in ds.entries.iter().filter(|e| speed_usable(e)) {
        groups
            .entry((
                e.src.file,
                e.rec.backend.clone(),
                e.rec.device.name.clone(),
                e.rec.rank,
                e.rec.gpu_ordinal,
                e.rec.threads,
                e.rec.algorithm.clone(),
                op_rank(e.rec.operation),
            ))
            .or_default()
            .push(*e);
    }
    let mut out: Vec<Curve> = groups
        .into_values()
        .filter_map(|entries| curve(ds, entries))
        .collect();
    out.sort_by(|a, b| {
        let (x, y) = (a.head(), b.head());
        natural_cmp(&x.rec.algorithm, &y.rec.algorithm)
            .then_with(|| op_rank(x.rec.operation).cmp(&op_rank(y.rec.operation)))
            .then_with(|| x.is_gpu().cmp(&y.is_gpu()))
            .then_with(|| x.rec.backend.cmp(&y.rec.backend))
            .then_with(|| x.rec.threads.cmp(&y.rec.threads))
            .then_with(|| x.src.cmp(&y.src))
    });
    out
}

/// The curve of one group's records (one device or CPU setup, algorithm
/// and operation), when they span two batch sizes or more: its points,
/// saturation, and break-even against the all-core CPU for a GPU.
fn curve<'a>(ds: &Dataset<'a>, mut entries: Vec<Entry<'a>>) -> Option<Curve<'a>> {
    entries.sort_by_key(|e| (e.rec.batch, e.src));
    let mut batches: Vec<usize> = entries.iter().map(|e| e.rec.batch).collect();
    batches.dedup();
    if batches.len() < 2 {
        return None;
    }
    let point = |e: &Entry, v: Option<f64>| {
        v.map(|ops_per_sec| Point {
            batch: e.rec.batch,
            ops_per_sec,
        })
    };
    // One point per batch (a batch measured twice: the later record).
    let points: Vec<Point> = crate::analyse::saturation::clean(
        &entries
            .iter()
            .filter_map(|e| point(e, e.ok_throughput()))
            .collect::<Vec<_>>(),
    );
    let end_to_end: Vec<Point> = crate::analyse::saturation::clean(
        &entries
            .iter()
            .filter_map(|e| point(e, end_to_end_ops(e)))
            .collect::<Vec<_>>(),
    );
    let gpu = entries[0].is_gpu();
    let cpu = gpu.then(|| all_core_cpu(ds, &entries[0])).flatten();
    let cpu_ops = cpu.and_then(|c| c.ok_throughput());
    let e2e_used = !end_to_end.is_empty();
    let (be, be_kernel) = match cpu_ops {
        Some(c) => (
            break_even(if e2e_used { &end_to_end } else { &points }, c),
            break_even(&points, c),
        ),
        None => (None, None),
    };
    Some(Curve {
        saturation: saturation(&points),
        points,
        end_to_end,
        cpu,
        break_even: be,
        break_even_end_to_end: e2e_used,
        break_even_kernel: be_kernel,
        entries,
    })
}

/// Break-even in a table cell.
fn break_even_cell(b: Option<BreakEven>, src: Vec<SrcRef>) -> Cell {
    match b {
        Some(BreakEven::At {
            batch,
            smallest_measured,
        }) => {
            let c = Cell::num(units::grouped(batch as f64))
                .value(batch as f64)
                .class("good")
                .from(src);
            if smallest_measured {
                c.below("smallest measured")
            } else {
                c
            }
        }
        Some(BreakEven::NeverInRange { largest_measured }) => Cell::num("never")
            .below(format!("up to {}", units::grouped(largest_measured as f64)))
            .class("bad")
            .from(src),
        None => Cell::empty(),
    }
}

/// The table of saturation and break-even batches.
pub fn scaling_table(curves: &[Curve]) -> Table {
    let mut t = Table::new(
        "t-scaling",
        &[
            "Algorithm",
            "Operation",
            "Where",
            "Batches",
            "Peak ops/s",
            "Saturation batch",
            "All-core CPU",
            "Break-even (end to end)",
            "Break-even (kernel only)",
            "Source",
        ],
        false,
    );
    for c in curves {
        let h = c.head();
        let lo = c.points.first().map(|p| p.batch).unwrap_or(0);
        let hi = c.points.last().map(|p| p.batch).unwrap_or(0);
        let sat = match c.saturation {
            Some(s) => {
                let cell = Cell::num(units::grouped(s.batch as f64))
                    .value(s.batch as f64)
                    .from(c.entries.iter().map(|e| e.src));
                if s.peak_at_top {
                    cell.below("peak at the largest batch: may rise further")
                } else {
                    cell
                }
            }
            None => Cell::empty(),
        };
        let peak = c
            .saturation
            .map(|s| {
                Cell::num(units::ops(s.peak_ops_per_sec))
                    .below(format!("at {}", units::grouped(s.peak_batch as f64)))
                    .value(s.peak_ops_per_sec)
            })
            .unwrap_or_else(Cell::empty);
        let cpu = match c.cpu {
            Some(e) => Cell::num(units::ops(e.ok_throughput().unwrap_or(0.0)))
                .below(e.setup())
                .from([e.src]),
            None => Cell::empty(),
        };
        let e2e = if c.break_even_end_to_end {
            break_even_cell(c.break_even, c.sources())
        } else {
            Cell::empty()
        };
        t.rows.push(Row {
            filters: filters(h),
            cells: vec![
                Cell::text(h.rec.algorithm.clone()),
                Cell::text(h.rec.operation.label()),
                Cell::text(h.setup()).below(h.host().to_string()),
                Cell::num(format!(
                    "{} from {} to {}",
                    c.points.len(),
                    units::grouped(lo as f64),
                    units::grouped(hi as f64)
                )),
                peak,
                sat,
                cpu,
                e2e,
                break_even_cell(c.break_even_kernel, c.sources()),
                Cell::text(crate::report::model::src_list(c.sources(), " ")).class("src"),
            ],
        });
    }
    t
}

/// One executive-summary finding per GPU curve with a break-even batch:
/// from what batch the GPU beats every CPU core, in words.
pub fn break_even_findings(curves: &[Curve]) -> Vec<Finding> {
    let mut out = vec![];
    for c in curves {
        let (Some(b), Some(cpu)) = (c.break_even, c.cpu) else {
            continue;
        };
        let h = c.head();
        let how = if c.break_even_end_to_end {
            "end to end (copies included)"
        } else {
            "kernel only (no end-to-end figures in these records)"
        };
        let figure = match b {
            BreakEven::At { batch, .. } => units::grouped(batch as f64),
            BreakEven::NeverInRange { .. } => "never".to_string(),
        };
        let sat = c
            .saturation
            .map(|s| {
                format!(
                    "; it reaches 95% of its peak ({}) at a batch of {}",
                    units::ops(s.peak_ops_per_sec),
                    units::grouped(s.batch as f64)
                )
            })
            .unwrap_or_default();
        out.push(Finding {
            group: Group::Gpu,
            figure,
            word: "break-even batch".into(),
            sentence: format!(
                "{} on {} beats {} at {} {} {}, {how}{sat}.",
                h.rec.backend,
                h.rec.device.name,
                cpu.setup(),
                h.rec.algorithm,
                h.rec.operation.cli_name(),
                b.words()
            ),
            detail: format!(
                "all-core CPU {} · {} batches measured{}",
                units::ops(cpu.ok_throughput().unwrap_or(0.0)),
                c.points.len(),
                match (c.break_even_end_to_end, c.break_even_kernel) {
                    (true, Some(k)) => format!(" · kernel only: {}", k.words()),
                    _ => String::new(),
                }
            ),
            interval: None,
            ratio: None,
            kat: None,
            sources: c.sources(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::device::DeviceKind;
    use crate::schema::record::{Record, RunConfig, Status};
    use crate::schema::run_file::RunFile;

    fn gpu(ordinal: usize, batch: usize, ops: f64) -> Record {
        let mut r = Record::unmeasured(
            "native-gpu".into(),
            crate::schema::device::Device {
                kind: DeviceKind::Gpu,
                name: "one model (test only)".into(),
                memory_total_mb: 1,
            },
            "pqcprof-native".into(),
            "ML-KEM-768".into(),
            "ML-KEM".into(),
            crate::core::catalog::Kind::Kem,
            Operation::Encaps,
        );
        r.status = Status::Ok;
        r.batch = batch;
        r.gpu_ordinal = Some(ordinal);
        r.ops_per_sec = Some(ops);
        r
    }

    #[test]
    fn two_gpus_of_one_model_are_two_curves() {
        let mut run = RunFile::new(crate::probe::system::collect(None), RunConfig::for_tests());
        run.records = vec![
            gpu(0, 1024, 1e6),
            gpu(1, 1024, 2e6),
            gpu(0, 4096, 3e6),
            gpu(1, 4096, 6e6),
        ];
        let bytes = serde_json::to_vec(&run).unwrap();
        let (loaded, _) =
            crate::schema::load::parse_run(&bytes, std::path::Path::new("run.json"), "F1").unwrap();
        let runs = [loaded];
        let ds = Dataset::new(&runs);
        let c = curves(&ds);
        assert_eq!(c.len(), 2, "one curve per device");
        let peaks: Vec<(Option<usize>, f64)> = c
            .iter()
            .map(|c| {
                (
                    c.head().rec.gpu_ordinal,
                    c.points.last().unwrap().ops_per_sec,
                )
            })
            .collect();
        assert!(
            peaks.contains(&(Some(0), 3e6)) && peaks.contains(&(Some(1), 6e6)),
            "{peaks:?}"
        );
        assert_ne!(
            c[0].head().setup(),
            c[1].head().setup(),
            "the table tells them apart"
        );
    }
}
