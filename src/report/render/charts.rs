//! Which figures each chart shows: the throughput, latency, batch and
//! size charts of the report, and the offload section's latency against
//! offered rate.

use crate::core::catalog::{Kind, Operation};
use crate::core::units;
use crate::offload::latency::Slo;
use crate::report::batch_curves::{curves, end_to_end_ops, speed_usable, Curve};
use crate::report::model::{kind_name, Dataset, Entry, SrcRef};
use crate::report::offload::rate_of;
use crate::report::render::svg::{dot_plot, line_chart, plot, Axes, Dot, DotRow, Line, Marks};
use crate::report::table::natural_cmp;
use crate::schema::offload::{kept_up, OffloadRun, Point};
use crate::schema::record::Mode;
use std::collections::BTreeMap;

/// A chart with its heading and a sentence on how to read it.
pub struct Chart {
    /// Heading.
    pub title: String,
    /// How to read it.
    pub caption: String,
    /// The SVG.
    pub svg: String,
}

fn row_label(e: &Entry) -> (String, String) {
    let note = if e.is_gpu() {
        format!("{} · {}", e.rec.backend, e.rec.device.name)
    } else {
        format!("{} · {}t", e.rec.backend, e.rec.threads)
    };
    (e.rec.algorithm.clone(), with_kat(note, e))
}

/// `name` with the known-answer mark of `e`'s code, if it failed any.
fn with_kat(name: String, e: &Entry) -> String {
    match e.kat() {
        Some(k) => format!("{name} {}", k.short()),
        None => name,
    }
}

/// Ops/s per algorithm and operation (log scale), one chart per kind; for
/// several batch sizes the best one.
pub fn throughput_charts(ds: &Dataset) -> Vec<Chart> {
    let mut out = vec![];
    for kind in [Kind::Kem, Kind::Signature] {
        let (mine, ops) = ds.throughput(kind);
        // (algorithm, setup, file) -> best record per operation
        let mut rows: BTreeMap<(String, String, usize), BTreeMap<usize, &Entry>> = BTreeMap::new();
        for e in &mine {
            let (label, note) = row_label(e);
            let slot = rows
                .entry((label, note, e.src.file))
                .or_default()
                .entry(ops.iter().position(|o| *o == e.rec.operation).unwrap_or(0))
                .or_insert(e);
            if slot.ok_throughput() < e.ok_throughput() {
                *slot = e;
            }
        }
        let mut keys: Vec<_> = rows.keys().cloned().collect();
        keys.sort_by(|a, b| {
            let la = rows[a].values().next().and_then(|e| e.rec.nist_level);
            let lb = rows[b].values().next().and_then(|e| e.rec.nist_level);
            la.cmp(&lb)
                .then_with(|| natural_cmp(&a.0, &b.0))
                .then_with(|| a.1.cmp(&b.1))
                .then_with(|| a.2.cmp(&b.2))
        });
        let multi_file = ds.runs.len() > 1;
        let dot_rows: Vec<DotRow> = keys
            .iter()
            .map(|k| DotRow {
                label: k.0.clone(),
                note: if multi_file {
                    format!("{} · F{}", k.1, k.2 + 1)
                } else {
                    k.1.clone()
                },
                dots: rows[k]
                    .iter()
                    .map(|(series, e)| Dot {
                        series: *series,
                        value: e.ok_throughput().unwrap_or(0.0),
                        title: format!(
                            "{} {} · {} · {} · batch {} · {}",
                            e.rec.algorithm,
                            e.rec.operation.cli_name(),
                            e.setup(),
                            units::ops(e.ok_throughput().unwrap_or(0.0)),
                            e.rec.batch,
                            e.src
                        ),
                        src: e.src,
                    })
                    .collect(),
                range: false,
            })
            .collect();
        if dot_rows.is_empty() {
            continue;
        }
        let names: Vec<String> = ops.iter().map(|o| o.label().to_string()).collect();
        out.push(Chart {
            title: format!(
                "{} throughput",
                if kind == Kind::Kem { "KEM" } else { "Signature" }
            ),
            caption: format!(
                "Median operations per second of each {} operation; further right is faster, and each grid line is ten times the last. Hover a mark for its figure and source record.",
                kind_name(kind)
            ),
            svg: dot_plot(
                &format!("{} operations per second", kind_name(kind)),
                "operations per second",
                "/s",
                &names,
                &dot_rows,
            ),
        });
    }
    out
}

/// Latency p50 to p99 per operation (mode `latency` records).
pub fn latency_chart(ds: &Dataset) -> Option<Chart> {
    let mut v: Vec<&Entry> = ds
        .ok()
        .filter(|e| e.rec.mode == Mode::Latency && e.rec.latency_p50_us.is_some())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| {
        natural_cmp(&a.rec.algorithm, &b.rec.algorithm)
            .then_with(|| a.rec.operation.cmp(&b.rec.operation))
            .then_with(|| a.src.cmp(&b.src))
    });
    let rows: Vec<DotRow> = v
        .iter()
        .map(|e| {
            let (label, note) = row_label(e);
            let mut dots = vec![];
            for (series, val, name) in [
                (0, e.rec.latency_p50_us, "p50"),
                (1, e.rec.latency_p99_us, "p99"),
            ] {
                if let Some(us) = val.filter(|v| *v > 0.0) {
                    dots.push(Dot {
                        series,
                        value: us,
                        title: format!(
                            "{} {} {name}: {} · {}",
                            e.rec.algorithm,
                            e.rec.operation.cli_name(),
                            units::time_ms(us / 1000.0),
                            e.src
                        ),
                        src: e.src,
                    });
                }
            }
            DotRow {
                label: format!("{label} {}", e.rec.operation.cli_name()),
                note,
                dots,
                range: true,
            }
        })
        .collect();
    Some(Chart {
        title: "Latency of single operations".into(),
        caption: "Each line runs from the median (p50) to the 99th percentile (p99) of single operations; further left is quicker.".into(),
        svg: dot_plot(
            "latency p50 to p99",
            "microseconds per operation",
            " µs",
            &["p50".into(), "p99".into()],
            &rows,
        ),
    })
}

/// Throughput against batch size, one chart per (algorithm, operation)
/// with every backend on it (log-log): each curve of two batches or more
/// (see `scaling::curves`), a GPU's end-to-end figures as their own line
/// beside its kernel-only ones, and every CPU record measured at one batch
/// only as one mark at that batch: a chart shows only what was measured.
pub fn batch_charts(ds: &Dataset) -> Vec<Chart> {
    let all = curves(ds);
    let mut out = vec![];
    let mut keys: Vec<(String, Operation)> = all
        .iter()
        .map(|c| (c.head().rec.algorithm.clone(), c.head().rec.operation))
        .collect();
    keys.dedup();
    let multi_file = ds.runs.len() > 1;
    for (alg, op) in keys {
        let mine: Vec<&Curve> = all
            .iter()
            .filter(|c| c.head().rec.algorithm == alg && c.head().rec.operation == op)
            .collect();
        let mut lines = curve_lines(&mine, multi_file);
        lines.extend(single_batch_marks(ds, &mine, multi_file));
        let op_name = op.cli_name();
        out.push(Chart {
            title: format!("{alg} {op_name}: throughput against batch size"),
            caption: "Median operations per second at each batch size (log-log). A GPU has two lines: the kernel alone and end to end (inputs copied in and outputs copied out, from pinned host memory). A CPU measured at one batch size is one mark at that batch, never a line. Where a GPU line crosses the all-core CPU line is the break-even batch; where it flattens, the device is saturated (see the table of saturation and break-even batches).".into(),
            svg: line_chart(
                &format!("{alg} {op_name} throughput against batch size"),
                "batch size",
                "operations per second",
                &lines,
            ),
        });
    }
    out
}

/// A line's name: backend and device (or threads), and its file when the
/// report has several.
fn series_name(e: &Entry, multi_file: bool) -> String {
    let base = if e.is_gpu() {
        format!("{} · {}", e.rec.backend, e.rec.device.name)
    } else {
        format!("{} · {}t", e.rec.backend, e.rec.threads)
    };
    let named = if multi_file {
        format!("{base} · F{}", e.src.file + 1)
    } else {
        base
    };
    with_kat(named, e)
}

/// One line per curve, and a GPU curve's end-to-end figures as a line of
/// their own.
fn curve_lines(mine: &[&Curve], multi_file: bool) -> Vec<Line> {
    let mut lines: Vec<Line> = vec![];
    for c in mine {
        let h = c.head();
        lines.push(Line {
            name: if h.is_gpu() {
                format!("{} (kernel only)", series_name(h, multi_file))
            } else {
                series_name(h, multi_file)
            },
            points: c
                .entries
                .iter()
                .filter_map(|e| Some((e.rec.batch as f64, e.ok_throughput()?, e.src)))
                .collect(),
        });
        let e2e: Vec<(f64, f64, SrcRef)> = c
            .entries
            .iter()
            .filter_map(|e| Some((e.rec.batch as f64, end_to_end_ops(e)?, e.src)))
            .collect();
        if !e2e.is_empty() {
            lines.push(Line {
                name: format!("{} (end to end)", series_name(h, multi_file)),
                points: e2e,
            });
        }
    }
    lines
}

/// CPU records of the curves' operation measured at one batch only, each
/// one mark at its own batch: the fastest of each file, backend and
/// threads.
fn single_batch_marks(ds: &Dataset, mine: &[&Curve], multi_file: bool) -> Vec<Line> {
    let Some(head) = mine.first().map(|c| c.head()) else {
        return vec![];
    };
    let (alg, op) = (&head.rec.algorithm, head.rec.operation);
    let curve_srcs: Vec<SrcRef> = mine
        .iter()
        .flat_map(|c| c.entries.iter().map(|e| e.src))
        .collect();
    let mut flat: BTreeMap<(usize, String, usize), &Entry> = BTreeMap::new();
    for e in ds.entries.iter().filter(|e| {
        !e.is_gpu()
            && speed_usable(e)
            && &e.rec.algorithm == alg
            && e.rec.operation == op
            && !curve_srcs.contains(&e.src)
    }) {
        let slot = flat
            .entry((e.src.file, e.rec.backend.clone(), e.rec.threads))
            .or_insert(e);
        if slot.ok_throughput() < e.ok_throughput() {
            *slot = e;
        }
    }
    flat.values()
        .map(|e| {
            let y = e.ok_throughput().unwrap_or(0.0);
            Line {
                name: format!(
                    "{} (measured at batch {} only)",
                    series_name(e, multi_file),
                    units::grouped(e.rec.batch as f64)
                ),
                points: vec![(e.rec.batch as f64, y, e.src)],
            }
        })
        .collect()
}

/// Public key and ciphertext or signature per algorithm (log scale).
pub fn sizes_chart(ds: &Dataset) -> Option<Chart> {
    let mut v = ds.sized();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| {
        (a.rec.kind == Kind::Signature)
            .cmp(&(b.rec.kind == Kind::Signature))
            .then_with(|| a.rec.nist_level.cmp(&b.rec.nist_level))
            .then_with(|| natural_cmp(&a.rec.algorithm, &b.rec.algorithm))
    });
    let rows: Vec<DotRow> = v
        .iter()
        .map(|e| {
            let s = e.rec.sizes;
            // One series per size; the public key is always stated here.
            let dots = [
                ("public key", Some(s.public_key_bytes)),
                ("ciphertext", s.ciphertext_bytes.filter(|c| *c > 0)),
                ("signature", s.signature_bytes.filter(|c| *c > 0)),
            ]
            .into_iter()
            .enumerate()
            .filter_map(|(series, (name, bytes))| {
                let b = bytes?;
                Some(Dot {
                    series,
                    value: b as f64,
                    title: format!("{} {name}: {}", e.rec.algorithm, units::bytes(b)),
                    src: e.src,
                })
            })
            .collect();
            DotRow {
                label: e.rec.algorithm.clone(),
                note: format!(
                    "level {}",
                    e.rec
                        .nist_level
                        .map(|l| l.to_string())
                        .unwrap_or_else(|| "–".into())
                ),
                dots,
                range: false,
            }
        })
        .collect();
    Some(Chart {
        title: "Sizes".into(),
        caption: "Bytes of each public key, ciphertext and signature; further right is larger."
            .into(),
        svg: dot_plot(
            "sizes in bytes",
            "bytes",
            " B",
            &["public key".into(), "ciphertext".into(), "signature".into()],
            &rows,
        ),
    })
}

/// The offload section's charts: latency against offered rate, one per
/// algorithm and operation, every run of it (with its file's index) on it.
pub fn offload_charts(runs: &[(usize, OffloadRun)]) -> Vec<Chart> {
    let runs: Vec<(usize, &OffloadRun)> = runs.iter().map(|(f, o)| (*f, o)).collect();
    let mut keys: Vec<(String, String)> = runs
        .iter()
        .map(|(_, o)| (o.algorithm.clone(), o.operation.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|(alg, op)| {
            let mine: Vec<&(usize, &OffloadRun)> = runs
                .iter()
                .filter(|(_, o)| o.algorithm == alg && o.operation == op)
                .collect();
            let several = mine.len() > 1;
            let (mut lines, mut marks) = (vec![], Marks::default());
            for &&(file, o) in &mine {
                let name = if several {
                    format!("{} {}w F{}", o.backend, o.workers, file + 1)
                } else {
                    format!("{} {}w", o.backend, o.workers)
                };
                let line = |what: &str, at: &dyn Fn(&Point) -> Option<f64>| Line {
                    name: format!("{name} {what}"),
                    points: o
                        .points
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| {
                            let v = at(p).filter(|v| v.is_finite() && *v > 0.0)?;
                            Some((p.offered_rate, v, SrcRef { file, index: i }))
                        })
                        .collect(),
                };
                lines.push(line("p50", &|p| Some(p.waits.latency_ms.p50)));
                lines.push(line("p99", &|p| Some(p.waits.latency_ms.p99)));
                lines.push(line("p99 predicted", &|p| {
                    p.predicted_latency_ms.map(|q| q.p99)
                }));
                for (i, p) in o.points.iter().enumerate().filter(|(_, p)| !kept_up(p)) {
                    marks.rings.push((
                        p.offered_rate,
                        p.waits.latency_ms.p99,
                        format!(
                            "{name}: {} offered, {} served: {} (F{} points[{i}])",
                            rate_of(o, p.offered_rate),
                            rate_of(o, p.achieved_rate),
                            if p.saturated {
                                "saturated, the queue grew"
                            } else {
                                "requests dropped at the queue limit"
                            },
                            file + 1
                        ),
                    ));
                }
                if let Some(slo) = o.slo.as_deref().and_then(|s| s.parse::<Slo>().ok()) {
                    let label = format!("objective {}", o.slo.as_deref().unwrap_or_default());
                    if !marks.rules.iter().any(|r| r.0 == label) {
                        marks.rules.push((label, slo.bound_ms));
                    }
                }
            }
            lines.retain(|l| !l.points.is_empty());
            offload_chart(&alg, &op, &mine, &lines, &marks)
        })
        .collect()
}

/// The offload chart of one algorithm and operation from its lines and
/// marks; a mix's counts handshakes.
fn offload_chart(
    alg: &str,
    op: &str,
    mine: &[&(usize, &OffloadRun)],
    lines: &[Line],
    marks: &Marks,
) -> Chart {
    let mixed = mine.iter().find_map(|(_, o)| o.mix.is_some().then_some(*o));
    let hover = |name: &str, x: f64, y: f64| {
        let r = mixed.map_or_else(|| units::ops(x), |o| rate_of(o, x));
        format!("{name}: {r} offered → {}", units::time_ms(y))
    };
    let axes = Axes {
        x: if mixed.is_some() {
            "offered rate, handshakes per second"
        } else {
            "offered rate, requests per second"
        },
        y: "latency, milliseconds",
        x_unit: "/s",
        y_unit: " ms",
        hover: &hover,
        sourced: false,
    };
    Chart {
        title: format!("{alg} {op}: latency against offered rate"),
        caption: "Latency from each request's intended arrival at each offered rate (log-log): the median (p50), the 99th percentile (p99) and the planner's predicted p99. The dashed line is the objective; a circled point is saturated or dropped requests. Hover a mark for its figure and source point.".into(),
        svg: plot(&format!("{alg} {op} latency against offered rate"), &axes, lines, marks),
    }
}
