//! The report's tables, built once for both output formats.

use super::analysis::{Analysis, Pair};
use super::model::{kind_name, level_bucket, src_list, Class, Dataset, Entry};
use super::table::{natural_cmp, shades, shades_by_group, Cell, Row, Table};
use super::units;
use crate::catalog::Kind;
use crate::results::{Mode, Status};
use std::collections::{BTreeMap, BTreeSet};

/// Filter attributes of a record's row.
pub fn filters(e: &Entry) -> Vec<(&'static str, String)> {
    vec![
        (
            "level",
            level_bucket(e.rec.nist_level)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "none".into()),
        ),
        ("kind", kind_name(e.rec.kind).to_ascii_lowercase()),
        ("class", e.class.name().into()),
        ("provider", e.rec.provider.clone()),
        ("backend", e.rec.backend.clone()),
        ("family", e.rec.family.clone()),
        ("alg", e.rec.algorithm.clone()),
    ]
}

/// Level as shown: `1`, `2`, `–`.
fn level_text(l: Option<u8>) -> String {
    l.map(|l| l.to_string()).unwrap_or_else(|| "–".into())
}

/// The `Where` column: backend and threads or device, host below.
fn where_cell(e: &Entry) -> Cell {
    Cell::text(e.setup()).below(e.host().to_string())
}

/// The `Source` column.
fn src_cell(text: String) -> Cell {
    Cell::text(text).class("src")
}

fn sort_entries(v: &mut [&Entry]) {
    v.sort_by(|a, b| entry_cmp(a, b));
}

/// Report order: kind, level, class, family, algorithm, CPU before GPU,
/// backend, threads, batch, source.
fn entry_cmp(a: &Entry, b: &Entry) -> std::cmp::Ordering {
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

/// Median time and ops/s per algorithm and operation, one table per kind,
/// shaded within each NIST level.
pub fn throughput_table(ds: &Dataset, kind: Kind) -> Table {
    let (entries, ops) = ds.throughput(kind);
    // One row per (file, rank, GPU, backend, threads, algorithm, batch).
    type RowKey = (
        usize,
        Option<usize>,
        Option<usize>,
        String,
        usize,
        String,
        usize,
    );
    let mut rows: BTreeMap<RowKey, Vec<&Entry>> = BTreeMap::new();
    for e in &entries {
        rows.entry((
            e.src.file,
            e.rec.rank,
            e.rec.gpu_ordinal,
            e.rec.backend.clone(),
            e.rec.threads,
            e.rec.algorithm.clone(),
            e.rec.batch,
        ))
        .or_default()
        .push(e);
    }
    let mut groups: Vec<Vec<&Entry>> = rows.into_values().collect();
    groups.sort_by(|a, b| entry_cmp(a[0], b[0]));
    // Shade per (level bucket, operation) on ops/s: `shade_of[op][row]`.
    let shade_of: Vec<Vec<Option<f64>>> = ops
        .iter()
        .map(|op| {
            let cells = groups.iter().enumerate().filter_map(|(row_i, g)| {
                let e = g.iter().find(|e| e.rec.operation == *op)?;
                Some((
                    row_i,
                    level_bucket(e.rec.nist_level),
                    e.ok_throughput().unwrap_or(0.0),
                ))
            });
            shades_by_group(groups.len(), cells, true)
        })
        .collect();
    let mut table = Table::new(
        format!("t-{}", kind_name(kind).to_ascii_lowercase()),
        &["Level", "Algorithm", "Provider", "Where", "Batch"],
        true,
    );
    table
        .headers
        .extend(ops.iter().map(|o| o.label().to_string()));
    table.headers.push("Source".into());
    for (row_i, g) in groups.iter().enumerate() {
        let first = g[0];
        let mut cells = vec![
            Cell::num(level_text(first.rec.nist_level)),
            Cell::text(first.rec.algorithm.clone()).below(first.rec.family.clone()),
            Cell::text(first.rec.provider.clone()).below(first.class.name()),
            where_cell(first),
            Cell::num(units::grouped(first.rec.batch as f64)),
        ];
        for (op_i, op) in ops.iter().enumerate() {
            match g.iter().find(|e| e.rec.operation == *op) {
                Some(e) => {
                    let mut c = Cell::num(units::time_ms(e.ms().unwrap_or(0.0)))
                        .below(units::ops(e.ok_throughput().unwrap_or(0.0)))
                        .from([e.src])
                        .value(e.ok_throughput().unwrap_or(0.0));
                    c.shade = shade_of[op_i][row_i];
                    cells.push(c);
                }
                None => cells.push(Cell::empty()),
            }
        }
        cells.push(src_cell(src_list(g.iter().map(|e| e.src), " ")));
        table.rows.push(Row {
            filters: filters(first),
            cells,
        });
    }
    table
}

/// Latency-mode records: p50, p99, mean and its interval.
pub fn latency_table(ds: &Dataset) -> Table {
    let mut v: Vec<&Entry> = ds
        .ok()
        .filter(|e| e.rec.mode == Mode::Latency && e.rec.latency_us.is_some())
        .collect();
    sort_entries(&mut v);
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
        .map(|e| e.rec.latency_p50_us.unwrap_or(f64::NAN))
        .collect();
    let sh = shades(&p50s, false);
    for (e, s) in v.iter().zip(sh) {
        let l = e.rec.latency_us.as_ref().expect("filtered");
        let us = |x: f64| units::time_ms(x / 1000.0);
        let ci = l
            .ci95
            .map(|c| format!(" ({}–{})", us(c.low), us(c.high)))
            .unwrap_or_default();
        let mut p50 = Cell::num(e.rec.latency_p50_us.map(us).unwrap_or_else(|| "–".into()))
            .from([e.src])
            .value(e.rec.latency_p50_us.unwrap_or(f64::NAN));
        p50.shade = s;
        t.rows.push(Row {
            filters: filters(e),
            cells: vec![
                Cell::num(level_text(e.rec.nist_level)),
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.rec.operation.label()),
                where_cell(e),
                p50,
                Cell::num(e.rec.latency_p99_us.map(us).unwrap_or_else(|| "–".into())).from([e.src]),
                Cell::num(format!("{}{ci}", us(l.mean))).from([e.src]),
                Cell::num(l.raw.len().to_string()),
                src_cell(e.src.to_string()),
            ],
        });
    }
    t
}

/// Our GPU kernels behind throughput records: launch shape and the
/// resources the driver reported (registers, local memory, occupancy), next
/// to the throughput they gave.
pub fn kernels_table(ds: &Dataset) -> Table {
    let mut v: Vec<&Entry> = ds
        .ok()
        .filter(|e| e.ok_throughput().is_some() && e.rec.kernel.is_some())
        .collect();
    sort_entries(&mut v);
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
    for e in v {
        let k = e.rec.kernel.as_ref().expect("filtered");
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
        let opt = |v: Option<u32>, unit: &str| {
            v.map(|v| Cell::num(format!("{v}{unit}")))
                .unwrap_or_else(Cell::empty)
        };
        let occupancy = match (k.occupancy_pct, k.resident_blocks_per_sm) {
            (Some(p), Some(b)) => Cell::num(format!("{p:.1}%")).below(format!("{b} blocks/SM")),
            _ => Cell::empty(),
        };
        t.rows.push(Row {
            filters: filters(e),
            cells: vec![
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.rec.operation.label()),
                where_cell(e),
                Cell::num(units::ops(e.ok_throughput().expect("filtered"))).from([e.src]),
                Cell::text(k.name.clone()).below(k.image.clone()),
                Cell::num(format!("{} × {}", k.blocks, k.threads_per_block)),
                opt(k.registers_per_thread, ""),
                opt(k.local_bytes_per_thread, " B"),
                occupancy,
                waves,
                src_cell(e.src.to_string()),
            ],
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
                Cell::num(units::bytes(sz.secret_key_bytes)).from([e.src]),
                Cell::num(ct).from([e.src]),
                w,
                src_cell(e.src.to_string()),
            ],
        });
    }
    t
}

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
                    let class = if word == "on par" {
                        "muted"
                    } else if wins {
                        "good"
                    } else {
                        "bad"
                    };
                    cells.push(
                        Cell::num(a.words())
                            .below(a.figures())
                            .from(a.sources.iter().copied())
                            .class(class)
                            .value(a.classical / a.pqc),
                    );
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
    for r in &an.gpu {
        let g = r.gpu;
        let gops = g.ok_throughput().unwrap_or(0.0);
        let cpu = match r.cpu {
            Some(c) => Cell::num(units::ops(c.ok_throughput().unwrap_or(0.0)))
                .below(c.setup())
                .from([c.src])
                .value(c.ok_throughput().unwrap_or(0.0)),
            None => Cell::empty(),
        };
        let speed = |c: Option<Entry>| match c.and_then(|c| c.ok_throughput()) {
            Some(c_ops) => {
                let s = gops / c_ops;
                Cell::num(units::ratio(s))
                    .class(if s >= 1.0 { "good" } else { "bad" })
                    .value(s)
            }
            None => Cell::empty(),
        };
        let summ = |s: &Option<crate::stats::Summary>, unit: &str| match s {
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
        t.rows.push(Row {
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
                match super::scaling::end_to_end_ops(&g) {
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
                },
                cpu,
                speed(r.cpu),
                speed(r.cpu_one),
                summ(&g.rec.peak_mem_mb, "MiB"),
                summ(&g.rec.peak_util_pct, "%"),
                match &g.rec.energy {
                    Some(en) => Cell::num(format!("{} µJ", units::sig3(en.joules_per_op * 1e6)))
                        .below(format!(
                            "{} ops/J · counter over {:.1} s",
                            units::sig3(en.ops_per_joule),
                            en.window_seconds
                        ))
                        .from([g.src]),
                    None => summ(&g.rec.energy_per_op_uj, "µJ"),
                },
                src_cell(srcs.join(" ")),
            ],
        });
    }
    t
}

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

/// A standard and the families it covers.
pub struct Standard {
    /// Families or algorithms, as matched against record families.
    pub covers: &'static [&'static str],
    /// What it is called.
    pub name: &'static str,
    /// Document.
    pub document: &'static str,
    /// Status and date.
    pub status: &'static str,
    /// Where to read it.
    pub url: &'static str,
}

/// The standards behind the algorithms pqcprof and its sweep measure.
pub const STANDARDS: &[Standard] = &[
    Standard {
        covers: &["ML-KEM"],
        name: "Module-Lattice-Based Key-Encapsulation Mechanism",
        document: "FIPS 203",
        status: "final, August 2024",
        url: "https://csrc.nist.gov/pubs/fips/203/final",
    },
    Standard {
        covers: &["ML-DSA"],
        name: "Module-Lattice-Based Digital Signature",
        document: "FIPS 204",
        status: "final, August 2024",
        url: "https://csrc.nist.gov/pubs/fips/204/final",
    },
    Standard {
        covers: &["SLH-DSA", "SPHINCS"],
        name: "Stateless Hash-Based Digital Signature",
        document: "FIPS 205",
        status: "final, August 2024",
        url: "https://csrc.nist.gov/pubs/fips/205/final",
    },
    Standard {
        covers: &["FN-DSA", "Falcon"],
        name: "FFT-over-NTRU-Lattice-Based Digital Signature (FN-DSA, from Falcon)",
        document: "FIPS 206",
        status: "draft",
        url: "https://csrc.nist.gov/projects/post-quantum-cryptography",
    },
    Standard {
        covers: &["X25519", "X448"],
        name: "Elliptic Curves for Security (X25519, X448)",
        document: "RFC 7748",
        status: "IETF informational, January 2016",
        url: "https://www.rfc-editor.org/rfc/rfc7748",
    },
    Standard {
        covers: &["EdDSA", "Ed25519", "Ed448"],
        name: "Edwards-Curve Digital Signature Algorithm (Ed25519, Ed448)",
        document: "RFC 8032",
        status: "IETF informational, January 2017; also approved in FIPS 186-5",
        url: "https://www.rfc-editor.org/rfc/rfc8032",
    },
    Standard {
        covers: &["ECDSA", "RSA", "RSA-PSS"],
        name: "Digital Signature Standard (ECDSA, RSA, EdDSA)",
        document: "FIPS 186-5",
        status: "final, February 2023",
        url: "https://csrc.nist.gov/pubs/fips/186-5/final",
    },
    Standard {
        covers: &["ECDH"],
        name: "Pair-Wise Key Establishment Using Discrete Logarithm Cryptography (ECDH)",
        document: "NIST SP 800-56A Rev. 3",
        status: "final, April 2018",
        url: "https://csrc.nist.gov/pubs/sp/800/56/a/r3/final",
    },
    Standard {
        covers: &["ChaCha20-Poly1305", "ChaCha20"],
        name: "ChaCha20 and Poly1305 for IETF Protocols",
        document: "RFC 8439",
        status: "IETF informational, June 2018",
        url: "https://www.rfc-editor.org/rfc/rfc8439",
    },
    Standard {
        covers: &["SHA-256", "SHA-384", "SHA-512", "SHA-2", "SHA2"],
        name: "Secure Hash Standard (SHA-2)",
        document: "FIPS 180-4",
        status: "final, August 2015",
        url: "https://csrc.nist.gov/pubs/fips/180-4/upd1/final",
    },
    Standard {
        covers: &["SHA3", "SHA-3", "SHAKE"],
        name: "SHA-3 Standard (SHA3, SHAKE)",
        document: "FIPS 202",
        status: "final, August 2015",
        url: "https://csrc.nist.gov/pubs/fips/202/final",
    },
    Standard {
        covers: &["AES"],
        name: "Advanced Encryption Standard (with GCM: SP 800-38D)",
        document: "FIPS 197",
        status: "final, November 2001 (updated 2023)",
        url: "https://csrc.nist.gov/pubs/fips/197/final",
    },
];

/// The standards table, marking what these files contain.
pub fn standards_table(ds: &Dataset) -> Table {
    let mut names: BTreeSet<String> = ds
        .entries
        .iter()
        .flat_map(|e| {
            [
                e.rec.family.to_ascii_uppercase(),
                e.rec.algorithm.to_ascii_uppercase(),
            ]
        })
        .collect();
    names.extend(
        ds.symmetric
            .iter()
            .map(|s| s.rec.algorithm.to_ascii_uppercase()),
    );
    let mut t = Table::new(
        "t-standards",
        &["Covers", "Document", "Title", "Status", "In these files"],
        false,
    );
    for s in STANDARDS {
        let present = s.covers.iter().any(|c| {
            let c = c.to_ascii_uppercase();
            names
                .iter()
                .any(|n| n.starts_with(&c) || n.contains(&format!("-{c}")))
        });
        let mut doc = Cell::text(s.document);
        doc.sub = Some(s.url.into());
        t.rows.push(Row {
            filters: vec![],
            cells: vec![
                Cell::text(s.covers.join(", ")),
                doc,
                Cell::text(s.name),
                Cell::text(s.status),
                if present {
                    Cell::text("yes").class("good")
                } else {
                    Cell::text("–").class("muted")
                },
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

/// Whether the classes present include any non-PQC record.
pub fn has_class(ds: &Dataset, c: Class) -> bool {
    ds.entries.iter().any(|e| e.class == c)
}
