//! The report's comparison tables: PQC against classical at each NIST level,
//! and GPU against CPU.

use crate::core::catalog::Kind;
use crate::core::units;
use crate::report::change::{self, Verdict};
use crate::report::findings::Analysis;
use crate::report::gpu_rows::GpuRow;
use crate::report::model::filters;
use crate::report::model::{kind_name, level_bucket, Entry};
use crate::report::pairs::Pair;
use crate::report::sections::src_cell;
use crate::report::table::{Cell, Row, Table};

/// PQC against classical: one row per pair, one column per aspect.
pub fn pairs_table(pairs: &[Pair], kind: Kind) -> Table {
    let mine: Vec<&Pair> = pairs.iter().filter(|p| p.kind == kind).collect();
    let mut aspects: Vec<String> = vec![];
    for p in &mine {
        for a in &p.aspects {
            if !aspects.contains(&a.name) {
                aspects.push(a.name.clone());
            }
        }
    }
    let mut t = Table::new(
        format!("t-pairs-{}", kind_name(kind).to_ascii_lowercase()),
        &["Level", "Pair"],
        false,
    );
    t.headers.extend(aspects.iter().cloned());
    for p in mine {
        let mut cells = vec![
            Cell::num(p.level.to_string()),
            Cell::text(format!("{} vs {}", p.pqc, p.classical)).below(format!(
                "categories {} and {} · {} thread{} · {}",
                p.pqc_level,
                p.classical_level,
                p.threads,
                if p.threads == 1 { "" } else { "s" },
                p.host
            )),
        ];
        for name in &aspects {
            match p.aspects.iter().find(|a| &a.name == name) {
                Some(a) => {
                    let (_, word, wins) = a.verdict();
                    let class = if matches!(word, "on par" | "unclear") {
                        "muted"
                    } else if wins {
                        "good"
                    } else {
                        "bad"
                    };
                    let mut cell = Cell::num(a.words())
                        .below(a.figures())
                        .from(a.sources.iter().copied())
                        .class(class)
                        .value(a.classical / a.pqc);
                    if let (Some(r), [pqc, classical]) = (a.ratio, a.sources.as_slice()) {
                        if a.is_time {
                            cell = cell
                                .ratio(crate::report::table::Marked::ahead(*pqc, *classical, r));
                        }
                    }
                    cells.push(cell);
                }
                None => cells.push(Cell::empty()),
            }
        }
        let pseudo_level = Some(p.level);
        t.rows.push(Row {
            filters: vec![
                ("level", level_bucket(pseudo_level).unwrap_or(0).to_string()),
                ("kind", kind_name(kind).to_ascii_lowercase()),
            ],
            cells,
        });
    }
    t
}

/// GPU against CPU for every GPU-measured operation.
pub fn gpu_table(an: &Analysis) -> Table {
    let mut t = Table::new(
        "t-gpu",
        &[
            "Algorithm",
            "Operation",
            "GPU backend",
            "GPU ops/s",
            "End to end",
            "Best CPU",
            "Speed-up",
            "vs 1 thread",
            "Peak memory",
            "Utilisation",
            "Energy / op",
            "Source",
        ],
        false,
    );
    t.rows.extend(an.gpu.iter().map(gpu_row));
    t
}

/// One GPU record against the best CPU record and the best one-thread one.
fn gpu_row(r: &GpuRow) -> Row {
    let g = r.gpu;
    let gops = g.ok_throughput().unwrap_or(0.0);
    let cpu = match r.cpu {
        Some(c) => Cell::num(units::ops(c.ok_throughput().unwrap_or(0.0)))
            .below(c.setup())
            .from([c.src])
            .value(c.ok_throughput().unwrap_or(0.0)),
        None => Cell::empty(),
    };
    let speed = |c: Option<Entry>| match c.and_then(|c| Some((c, c.ok_throughput()?))) {
        Some((c, c_ops)) => {
            let s = gops / c_ops;
            let class = match change::records_verdict(c.rec, g.rec) {
                Some(Verdict::Same | Verdict::Unclear) => "muted",
                _ if s >= 1.0 => "good",
                _ => "bad",
            };
            let Some((raw, ahead, basis)) = change::ratio_words(c.rec, g.rec) else {
                return Cell::empty();
            };
            let m = raw.magnitude().0;
            let text = change::ratio_text(m.value, m.ci95.is_some());
            Cell::num(if ahead {
                format!("{text} faster")
            } else {
                format!("{text} slower")
            })
            .below(basis)
            .class(class)
            .value(s)
            .ratio(crate::report::table::Marked::ahead(g.src, c.src, raw))
        }
        None => Cell::empty(),
    };
    let summ = |s: &Option<crate::core::stats::Summary>, unit: &str| match s {
        Some(s) => Cell::num(format!("{} {unit}", units::sig3(s.median))).from([g.src]),
        None => Cell::empty(),
    };
    let mut srcs = vec![g.src.to_string()];
    if let Some(c) = r.cpu {
        srcs.push(c.src.to_string());
    }
    if let Some(c) = r.cpu_one {
        if Some(c.src) != r.cpu.map(|x| x.src) {
            srcs.push(c.src.to_string());
        }
    }
    Row {
        filters: filters(&g),
        cells: vec![
            Cell::text(g.rec.algorithm.clone()),
            Cell::text(g.rec.operation.label()),
            Cell::text(g.rec.backend.clone()).below(format!(
                "{} · batch {}",
                g.rec.device.name,
                units::grouped(g.rec.batch as f64)
            )),
            Cell::num(units::ops(gops))
                .below("kernel only")
                .from([g.src])
                .value(gops),
            end_to_end_cell(&g),
            cpu,
            speed(r.cpu),
            speed(r.cpu_one),
            summ(&g.rec.peak_mem_mb, "MiB"),
            summ(&g.rec.peak_util_pct, "%"),
            energy_cell(&g),
            src_cell(srcs.join(" ")),
        ],
    }
}

/// Throughput with copies to and from the device, and one batch's time.
fn end_to_end_cell(g: &Entry) -> Cell {
    match crate::report::batch_curves::end_to_end_ops(g) {
        Some(v) => Cell::num(units::ops(v))
            .below(
                g.rec
                    .end_to_end
                    .as_ref()
                    .and_then(|x| x.batch_ms)
                    .map(|ms| format!("{} per batch", units::time_ms(ms)))
                    .unwrap_or_default(),
            )
            .from([g.src])
            .value(v),
        None => Cell::empty(),
    }
}

/// Energy per operation from the record's energy window.
fn energy_cell(g: &Entry) -> Cell {
    match &g.rec.energy {
        Some(en) => Cell::num(format!("{} µJ", units::sig3(en.joules_per_op * 1e6)))
            .below(format!(
                "{} ops/J · counter over {:.1} s",
                units::sig3(en.ops_per_joule),
                en.window_seconds
            ))
            .from([g.src]),
        // The timed runs' own readings are too short to quote.
        None => Cell::empty(),
    }
}
