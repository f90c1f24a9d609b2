//! The report's tables, built once for both output formats.

use crate::core::catalog::{Kind, Operation};
use crate::core::stats::Summary;
use crate::core::units;
use crate::report::change;
use crate::report::families::Class;
use crate::report::model::filters;
use crate::report::model::{kind_name, level_bucket, src_list, Dataset, Entry};
use crate::report::table::{natural_cmp, shades, shades_by_group, Cell, Row, Table};
use crate::schema::device::KernelInfo;
use crate::schema::record::Mode;
use std::collections::BTreeMap;

/// Level as shown: `1`, `2`, `–`.
pub(crate) fn level_text(l: Option<u8>) -> String {
    l.map(|l| l.to_string()).unwrap_or_else(|| "–".into())
}

/// The `Where` column: backend and threads or device, host below.
pub(crate) fn where_cell(e: &Entry) -> Cell {
    Cell::text(e.setup()).below(e.host().to_string())
}

/// The `Source` column.
pub(crate) fn src_cell(text: String) -> Cell {
    Cell::text(text).class("src")
}

pub(crate) fn sort_entries(v: &mut [&Entry]) {
    v.sort_by(|a, b| entry_cmp(a, b));
}

/// Report order: kind, level, class, family, algorithm, CPU before GPU,
/// backend, threads, batch, source.
pub(crate) fn entry_cmp(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    {
        (a.rec.kind == Kind::Signature)
            .cmp(&(b.rec.kind == Kind::Signature))
            .then_with(|| {
                level_bucket(a.rec.nist_level)
                    .unwrap_or(9)
                    .cmp(&level_bucket(b.rec.nist_level).unwrap_or(9))
            })
            .then_with(|| a.class.cmp(&b.class))
            .then_with(|| a.rec.family.cmp(&b.rec.family))
            .then_with(|| natural_cmp(&a.rec.algorithm, &b.rec.algorithm))
            .then_with(|| a.is_gpu().cmp(&b.is_gpu()))
            .then_with(|| a.rec.backend.cmp(&b.rec.backend))
            .then_with(|| a.rec.threads.cmp(&b.rec.threads))
            .then_with(|| a.rec.batch.cmp(&b.rec.batch))
            .then_with(|| a.src.cmp(&b.src))
    }
}

/// The batch a record's row is keyed by: `None` for window timing (the
/// sweep, whose batch differs per operation), else the batch size.
pub(crate) fn batch_key(e: &Entry) -> Option<usize> {
    e.rec.iterations.is_none().then_some(e.rec.batch)
}

/// Whether a PQC record's throughput beats the fastest classical record of
/// its kind, operation and NIST level on the same host with the same
/// threads (CPU only): pqcbench's ▲.
pub fn beats_classical(ds: &Dataset, e: &Entry) -> bool {
    if e.class != Class::Pqc || e.is_gpu() {
        return false;
    }
    let (Some(ops), Some(level)) = (e.ok_throughput(), level_bucket(e.rec.nist_level)) else {
        return false;
    };
    let best = ds
        .entries
        .iter()
        .filter(|c| {
            c.class == Class::Classical
                && !c.is_gpu()
                && c.rec.kind == e.rec.kind
                && c.rec.operation == e.rec.operation
                && c.rec.threads == e.rec.threads
                && c.host() == e.host()
                && level_bucket(c.rec.nist_level) == Some(level)
        })
        .filter_map(|c| c.ok_throughput())
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    best.is_some_and(|b| ops > b)
}

/// The libraries behind a figure named after another provider (pqcbench's
/// ‡ cross-provider): pqcprof's composites run liboqs and OpenSSL.
pub fn cross_provider(e: &Entry) -> Option<&'static str> {
    (e.rec.provider == "composite").then_some("liboqs + OpenSSL")
}

/// The legend of the ▲ and ‡ markers.
pub const MARKER_LEGEND: &str = "▲ a PQC figure faster than the fastest classical algorithm of its NIST level, operation, host and threads. ‡ cross-provider: the figure comes from libraries other than the provider named (pqcprof's composites run liboqs and OpenSSL).";

/// Median time and ops/s per algorithm and operation, one table per kind,
/// shaded within each NIST level. One row per (file, backend, threads,
/// algorithm): the largest batch measured; rows of other batch sizes carry
/// `data-extra` and are shown on demand.
pub fn throughput_table(ds: &Dataset, kind: Kind) -> Table {
    let (entries, ops) = ds.throughput(kind);
    let groups = throughput_rows(&entries);
    let shade_of = throughput_shades(&groups, &ops);
    let mut table = Table::new(
        format!("t-{}", kind_name(kind).to_ascii_lowercase()),
        &["Level", "Algorithm", "Provider", "Where", "Batch"],
        true,
    );
    table
        .headers
        .extend(ops.iter().map(|o| o.label().to_string()));
    table.headers.push("Source".into());
    for (row_i, (extra, g)) in groups.iter().enumerate() {
        let mut cells = throughput_lead_cells(g[0]);
        for (op_i, op) in ops.iter().enumerate() {
            cells.push(match g.iter().find(|e| e.rec.operation == *op) {
                Some(e) => throughput_cell(ds, e, shade_of[op_i][row_i]),
                None => Cell::empty(),
            });
        }
        cells.push(src_cell(src_list(g.iter().map(|e| e.src), " ")));
        let mut f = filters(g[0]);
        if *extra {
            f.push(("extra", "batch".into()));
        }
        table.rows.push(Row { filters: f, cells });
    }
    table
}

/// The throughput table's rows in report order, each the records of one
/// (file, rank, GPU, backend, threads, algorithm, batch or window) and
/// whether it is an extra row: not the largest batch of its (file, rank,
/// GPU, backend, threads, algorithm), whose row is the main one (window
/// timing counts as a row of its own). Never an empty row.
fn throughput_rows<'e, 'a>(entries: &[&'e Entry<'a>]) -> Vec<(bool, Vec<&'e Entry<'a>>)> {
    type MainKey = (usize, Option<usize>, Option<usize>, String, usize, String);
    let mut rows: BTreeMap<(MainKey, Option<usize>), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        let main = (
            e.src.file,
            e.rec.rank,
            e.rec.gpu_ordinal,
            e.rec.backend.clone(),
            e.rec.threads,
            e.rec.algorithm.clone(),
        );
        rows.entry((main, batch_key(e))).or_default().push(e);
    }
    let mut largest: BTreeMap<&MainKey, Option<usize>> = BTreeMap::new();
    for (main, batch) in rows.keys() {
        let m = largest.entry(main).or_insert(*batch);
        *m = (*m).max(*batch);
    }
    let mut groups: Vec<(bool, Vec<&Entry>)> = rows
        .iter()
        .map(|((main, batch), g)| (largest[main] != *batch, g.clone()))
        .collect();
    groups.sort_by(|a, b| entry_cmp(a.1[0], b.1[0]));
    groups
}

/// Shade per (level bucket, operation) on ops/s among the main rows:
/// `[op][row]`.
fn throughput_shades(groups: &[(bool, Vec<&Entry>)], ops: &[Operation]) -> Vec<Vec<Option<f64>>> {
    ops.iter()
        .map(|op| {
            let cells = groups
                .iter()
                .enumerate()
                .filter(|(_, (extra, _))| !extra)
                .filter_map(|(row_i, (_, g))| {
                    let e = g.iter().find(|e| e.rec.operation == *op)?;
                    Some((
                        row_i,
                        level_bucket(e.rec.nist_level),
                        e.ok_throughput().unwrap_or(0.0),
                    ))
                });
            shades_by_group(groups.len(), cells, true)
        })
        .collect()
}

/// A throughput row's first cells: level, algorithm (‡ when
/// cross-provider), provider and class, where, batch.
fn throughput_lead_cells(first: &Entry) -> Vec<Cell> {
    let cross = cross_provider(first);
    let name = match cross {
        Some(_) => format!("{} ‡", first.rec.algorithm),
        None => first.rec.algorithm.clone(),
    };
    let provider_sub = match cross {
        Some(libs) => format!("{} · {libs}", first.class.name()),
        None => first.class.name().to_string(),
    };
    let batch = match batch_key(first) {
        Some(b) => Cell::num(units::grouped(b as f64)),
        None => Cell::text("window").below("per operation"),
    };
    vec![
        Cell::num(level_text(first.rec.nist_level)),
        Cell::text(name).below(first.rec.family.clone()),
        Cell::text(first.rec.provider.clone()).below(provider_sub),
        where_cell(first),
        batch,
    ]
}

/// One operation's figure: median time (▲ when it beats classical), ops/s
/// and any noise below.
fn throughput_cell(ds: &Dataset, e: &Entry, shade: Option<f64>) -> Cell {
    let time = units::time_ms(e.ms().unwrap_or(0.0));
    let text = if beats_classical(ds, e) {
        format!("{time} ▲")
    } else {
        time
    };
    let ops = units::ops(e.ok_throughput().unwrap_or(0.0));
    let mut c = Cell::num(text)
        .below(match e.noise_note() {
            Some(n) => format!("{ops} · {n}"),
            None => ops,
        })
        .from([e.src])
        .value(e.ok_throughput().unwrap_or(0.0));
    c.shade = shade;
    c
}

/// What each hybrid costs over its pure PQC component measured in the same
/// file (as the run file's `hybrid_overhead`): extra time per operation
/// and extra bytes.
pub fn hybrid_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-hybrid",
        &[
            "Level",
            "Hybrid",
            "PQC component",
            "Operation",
            "Where",
            "Hybrid",
            "Component",
            "Extra time",
            "Extra wire bytes",
            "Extra secret-key bytes",
            "Source",
        ],
        false,
    );
    for f in 0..ds.runs.len() {
        let of_file: Vec<&Entry> = ds.entries.iter().filter(|e| e.src.file == f).collect();
        let recs: Vec<&crate::schema::record::Record> = of_file.iter().map(|e| e.rec).collect();
        for (o, hi, ci) in crate::analyse::hybrid::overhead_of(&recs) {
            let (h, c) = (of_file[hi], of_file[ci]);
            let us = |x: f64| units::time_ms(x / 1000.0);
            // An extra size either side of which is not known is a dash.
            let signed = |x: Option<i64>| match x {
                Some(x) => Cell::num(format!(
                    "{}{}",
                    if x >= 0 { "+" } else { "−" },
                    units::grouped(x.unsigned_abs() as f64)
                ))
                .from([h.src, c.src]),
                None => Cell::empty().below("not known"),
            };
            let extra = format!(
                "{}{} ({:+.0}%)",
                if o.extra_us >= 0.0 { "+" } else { "−" },
                us(o.extra_us.abs()),
                100.0 * o.extra_us / o.component_us
            );
            t.rows.push(Row {
                filters: filters(h),
                cells: vec![
                    Cell::num(level_text(h.rec.nist_level)),
                    Cell::text(o.hybrid.clone()).below(o.provider.clone()),
                    Cell::text(o.component.clone()).below(o.component_provider.clone()),
                    Cell::text(o.operation.label()),
                    where_cell(h),
                    Cell::num(us(o.hybrid_us)).from([h.src]),
                    Cell::num(us(o.component_us)).from([c.src]),
                    Cell::num(extra).from([h.src, c.src]).value(o.extra_us),
                    signed(o.extra_wire_bytes),
                    signed(o.extra_secret_key_bytes),
                    src_cell(src_list([h.src, c.src], " ")),
                ],
            });
        }
    }
    t
}

/// Latency-mode records: p50, p99, mean and its interval.
pub fn latency_table(ds: &Dataset) -> Table {
    let mut v: Vec<(&Entry, &Summary)> = ds
        .ok()
        .filter(|e| e.rec.mode == Mode::Latency && !e.is_cold())
        .filter_map(|e| Some((e, e.rec.latency_us.as_ref()?)))
        .collect();
    v.sort_by(|a, b| entry_cmp(a.0, b.0));
    let mut t = Table::new(
        "t-latency",
        &[
            "Level",
            "Algorithm",
            "Operation",
            "Where",
            "p50",
            "p99",
            "Mean (95% CI)",
            "Runs",
            "Source",
        ],
        true,
    );
    let p50s: Vec<f64> = v
        .iter()
        .map(|(e, _)| e.rec.latency_p50_us.unwrap_or(f64::NAN))
        .collect();
    let sh = shades(&p50s, false);
    for ((e, l), s) in v.iter().zip(sh) {
        let us = |x: f64| units::time_ms(x / 1000.0);
        let ci = l
            .ci95
            .map(|c| format!(" ({}–{})", us(c.low), us(c.high)))
            .unwrap_or_default();
        let mut p50 = Cell::num(e.rec.latency_p50_us.map(us).unwrap_or_else(|| "–".into()))
            .from([e.src])
            .value(e.rec.latency_p50_us.unwrap_or(f64::NAN));
        p50.shade = s;
        let mut cells = vec![Cell::num(level_text(e.rec.nist_level))];
        cells.extend(operation_cells(e));
        cells.extend([
            p50,
            Cell::num(e.rec.latency_p99_us.map(us).unwrap_or_else(|| "–".into())).from([e.src]),
            Cell::num(format!("{}{ci}", us(l.mean))).from([e.src]),
            Cell::num(l.raw.len().to_string()),
            src_cell(e.src.to_string()),
        ]);
        t.rows.push(Row {
            filters: filters(e),
            cells,
        });
    }
    t
}

/// The algorithm, operation and `Where` cells of a row about one record.
pub(crate) fn operation_cells(e: &Entry) -> Vec<Cell> {
    vec![
        Cell::text(e.rec.algorithm.clone()),
        Cell::text(e.rec.operation.label()),
        where_cell(e),
    ]
}

/// A whole number with its unit, or an empty cell.
fn count_cell(v: Option<u32>, unit: &str) -> Cell {
    v.map(|v| Cell::num(format!("{v}{unit}")))
        .unwrap_or_else(Cell::empty)
}

/// The driver's occupancy of a kernel, with its resident blocks.
fn occupancy_cell(k: &KernelInfo) -> Cell {
    match (k.occupancy_pct, k.resident_blocks_per_sm) {
        (Some(p), Some(b)) => Cell::num(format!("{p:.1}%")).below(format!("{b} blocks/SM")),
        _ => Cell::empty(),
    }
}

/// Ok throughput records of our GPU kernels in report order, each with its
/// kernel and ops/s.
fn kernel_records<'e, 'a>(ds: &'e Dataset<'a>) -> Vec<(&'e Entry<'a>, &'a KernelInfo, f64)> {
    let mut v: Vec<(&Entry, &KernelInfo, f64)> = ds
        .ok()
        .filter_map(|e| Some((e, e.rec.kernel.as_ref()?, e.ok_throughput()?)))
        .collect();
    v.sort_by(|a, b| entry_cmp(a.0, b.0));
    v
}

/// Our GPU kernels behind throughput records: launch shape and the
/// resources the driver reported (registers, local memory, occupancy), next
/// to the throughput they gave.
pub fn kernels_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-kernels",
        &[
            "Algorithm",
            "Operation",
            "Where",
            "Ops/s",
            "Kernel",
            "Launch",
            "Registers/thread",
            "Local memory/thread",
            "Occupancy",
            "Waves",
            "Source",
        ],
        false,
    );
    for (e, k, ops) in kernel_records(ds) {
        let waves = match k.waves {
            Some(w) => Cell::num(format!("{:.2}", w.exact_waves))
                .below(format!("last wave {:.0}% full", w.last_wave_fill_pct))
                .class(if w.last_wave_fill_pct < 100.0 && w.waves < 20 {
                    "bad"
                } else {
                    "good"
                })
                .value(w.exact_waves),
            None => Cell::empty(),
        };
        let mut cells = operation_cells(e);
        cells.extend([
            Cell::num(units::ops(ops)).from([e.src]),
            Cell::text(k.name.clone()).below(k.image.clone()),
            Cell::num(format!("{} × {}", k.blocks, k.threads_per_block)),
            count_cell(k.registers_per_thread, ""),
            count_cell(k.local_bytes_per_thread, " B"),
            occupancy_cell(k),
            waves,
            src_cell(e.src.to_string()),
        ]);
        t.rows.push(Row {
            filters: filters(e),
            cells,
        });
    }
    t
}

/// Our kernel variants side by side, where one operation was measured
/// with more than one (`--kernel thread|warp|block`) on the same host and
/// device at the same batch: each variant's throughput, its ratio to the
/// one-thread variant's, and the resources that explain it.
pub fn variants_table(ds: &Dataset) -> Table {
    let v = kernel_records(ds);
    let key = |e: &Entry| {
        (
            e.rec.algorithm.clone(),
            e.rec.operation,
            e.rec.backend.clone(),
            e.setup(),
            e.host().to_string(),
            e.rec.batch,
        )
    };
    let mut t = Table::new(
        "t-variants",
        &[
            "Algorithm",
            "Operation",
            "Where",
            "Variant",
            "Ops/s",
            "Against thread",
            "Registers/thread",
            "Shared memory/block",
            "Local memory/thread",
            "Occupancy",
            "Source",
        ],
        false,
    );
    for &(e, k, ops) in &v {
        let group: Vec<&(&Entry, &KernelInfo, f64)> =
            v.iter().filter(|(o, _, _)| key(o) == key(e)).collect();
        let mut names: Vec<&str> = group.iter().map(|(_, ok, _)| ok.variant.as_str()).collect();
        names.sort();
        names.dedup();
        if names.len() < 2 {
            continue;
        }
        let thread = group
            .iter()
            .find(|(_, ok, _)| ok.variant == "thread")
            .map(|(t, _, o)| (*t, *o));
        let against = match thread {
            Some((base_e, base)) if base > 0.0 => {
                let r = ops / base;
                // Faster or slower only when the change interval from both
                // records' runs says so; the ratio alone otherwise.
                let class = match change::records_verdict(base_e.rec, e.rec) {
                    Some(change::Verdict::Faster) => "good",
                    Some(change::Verdict::Slower) => "bad",
                    Some(_) => "muted",
                    None if r > 1.0 => "good",
                    None if r < 1.0 => "bad",
                    None => "",
                };
                match change::ratio_words(base_e.rec, e.rec) {
                    Some((raw, ahead, basis)) if base_e.src != e.src => {
                        let m = raw.magnitude().0;
                        let text = change::ratio_text(m.value, m.ci95.is_some());
                        Cell::num(if ahead {
                            format!("{text} faster")
                        } else {
                            format!("{text} slower")
                        })
                        .class(class)
                        .value(r)
                        .below(basis)
                        .ratio(crate::report::table::Marked::ahead(e.src, base_e.src, raw))
                    }
                    _ => Cell::num(format!("{r:.2}×")).class(class).value(r),
                }
            }
            _ => Cell::empty(),
        };
        let mut cells = operation_cells(e);
        cells.extend([
            Cell::text(k.variant.clone()).below(format!("{} × {}", k.blocks, k.threads_per_block)),
            Cell::num(units::ops(ops)).from([e.src]),
            against,
            count_cell(k.registers_per_thread, ""),
            count_cell(k.shared_bytes_per_block, " B"),
            count_cell(k.local_bytes_per_thread, " B"),
            occupancy_cell(k),
            src_cell(e.src.to_string()),
        ]);
        t.rows.push(Row {
            filters: filters(e),
            cells,
        });
    }
    t
}

/// Key, ciphertext and signature sizes per algorithm.
pub fn sizes_table(ds: &Dataset) -> Table {
    let mut v = ds.sized();
    sort_entries(&mut v);
    let wire = |e: &Entry| {
        let s = e.rec.sizes;
        s.public_key_bytes.saturating_add(
            s.ciphertext_bytes
                .or(s.signature_bytes)
                .unwrap_or(s.public_key_bytes),
        )
    };
    // Shade within each kind and level bucket, smaller is better.
    let shade = shades_by_group(
        v.len(),
        v.iter().enumerate().map(|(i, e)| {
            (
                i,
                (e.rec.kind == Kind::Kem, level_bucket(e.rec.nist_level)),
                wire(e) as f64,
            )
        }),
        false,
    );
    let mut t = Table::new(
        "t-sizes",
        &[
            "Level",
            "Algorithm",
            "Kind",
            "Public key",
            "Secret key",
            "Ciphertext / signature",
            "On the wire",
            "Source",
        ],
        true,
    );
    for (e, s) in v.iter().zip(shade) {
        let sz = e.rec.sizes;
        let ct = sz
            .ciphertext_bytes
            .or(sz.signature_bytes)
            .map(units::bytes)
            .unwrap_or_else(|| "–".into());
        let mut w = Cell::num(units::bytes(wire(e)))
            .from([e.src])
            .value(wire(e) as f64)
            .below(if e.rec.kind == Kind::Kem {
                "public key + ciphertext"
            } else {
                "public key + signature"
            });
        w.shade = s;
        t.rows.push(Row {
            filters: filters(e),
            cells: vec![
                Cell::num(level_text(e.rec.nist_level)),
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.kind_name()),
                Cell::num(units::bytes(sz.public_key_bytes)).from([e.src]),
                match sz.secret_key() {
                    Some(b) => Cell::num(units::bytes(b)).from([e.src]),
                    None => Cell::empty().below("not known"),
                },
                Cell::num(ct).from([e.src]),
                w,
                src_cell(e.src.to_string()),
            ],
        });
    }
    t
}
