//! The sweep's files, written after every algorithm: the run file and one
//! pqc-sig-bench-c CSV per type, marked partial until the sweep ends, and
//! the sweep's own figures (window, wall time, hybrid overheads).

use crate::schema::record::{Record, Status};
use crate::schema::run_file::RunFile;
use crate::sweep::options::SweepOptions;
use anyhow::Result;
use std::path::PathBuf;

pub(crate) fn csv_meta(
    meta: &crate::schema::metadata::Metadata,
    opts: &SweepOptions,
    kind: &str,
) -> Vec<(String, String)> {
    let kv = |k: &str, v: String| (k.to_string(), v);
    vec![
        kv("date", crate::write::csv::sig_bench_date(&meta.date)),
        kv("liboqs", meta.liboqs_version.clone()),
        kv("openssl", meta.openssl_version.clone()),
        kv("arch", meta.arch.clone()),
        kv("os", format!("{} {}", meta.os, meta.kernel)),
        kv("cpu", meta.cpu.clone()),
        kv("memory_mb", meta.memory_total_mb.to_string()),
        kv(
            "warmup_seconds",
            crate::write::csv::seconds(opts.window.warmup),
        ),
        kv(
            "bench_seconds",
            crate::write::csv::seconds(opts.window.window),
        ),
        kv("threads", opts.threads.to_string()),
        kv("message_bytes", opts.message.len().to_string()),
        kv("type", kind.to_string()),
        kv("hostname", meta.hostname.clone()),
        kv("timezone", "UTC".to_string()),
        kv(
            "pqcprof",
            format!("{} ({})", meta.pqcprof_version, meta.git_commit),
        ),
    ]
}

/// CSV types, in file order.
pub const CSV_TYPES: [&str; 4] = ["traditional", "liboqs", "openssl-pqc", "composite"];

pub(crate) struct Writer {
    pub(crate) out: PathBuf,
    pub(crate) stamp: String,
    pub(crate) run_path: PathBuf,
    pub(crate) csv_type_of: Vec<(String, String, &'static str)>,
}

impl Writer {
    pub(crate) fn csv_path(&self, meta: &crate::schema::metadata::Metadata, kind: &str) -> PathBuf {
        self.out.join(crate::write::csv::file_name(
            &self.stamp,
            &meta.arch,
            &meta.hostname,
            kind,
        ))
    }
    pub(crate) fn write(&self, run: &RunFile, opts: &SweepOptions) -> Result<Vec<PathBuf>> {
        crate::write::output::write_json(&self.run_path, run)?;
        let mut written = vec![];
        for kind in CSV_TYPES {
            let recs: Vec<&Record> = run
                .records
                .iter()
                .filter(|r| {
                    self.csv_type_of
                        .iter()
                        .any(|(n, p, t)| *t == kind && *n == r.algorithm && *p == r.provider)
                })
                .collect();
            if recs.is_empty() {
                continue;
            }
            let path = self.csv_path(&run.metadata, kind);
            let mut meta = csv_meta(&run.metadata, opts, kind);
            if let Some(state) = partial(run) {
                meta.insert(0, ("partial".into(), state.into()));
            }
            crate::write::output::write_atomic(
                &path,
                crate::write::csv::render(&meta, &recs).as_bytes(),
            )?;
            written.push(path);
        }
        Ok(written)
    }
}

/// How an unfinished sweep's files say so, as its run file does
/// (`complete`, `interrupted`): `None` once the sweep finished.
pub(crate) fn partial(run: &RunFile) -> Option<&'static str> {
    match (run.complete, run.interrupted) {
        (true, _) => None,
        (false, true) => Some("interrupted"),
        (false, false) => Some("in progress (the sweep had not finished when this was written)"),
    }
}

/// A record's progress line. Its rate is the one every view shows for it,
/// the median of its batches ([`crate::analyse::estimate::throughput`]),
/// not the CSV's all-operations figure.
pub(crate) fn record_label(r: &Record) -> String {
    let ops = crate::analyse::estimate::throughput(r).map_or(0.0, |e| e.value);
    match r.status {
        Status::Ok => format!(
            "{:>12.6} ms/op {:>14.3} ops/s {:>9} iterations",
            if ops > 0.0 { 1000.0 / ops } else { 0.0 },
            ops,
            r.iterations.unwrap_or(0)
        ),
        Status::Failed => format!("FAILED: {}", r.reason.as_deref().unwrap_or("")),
        Status::Skipped => format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
    }
}

/// What the run file says about the sweep as a whole, refreshed before
/// every write: its warm-up and window, its wall time so far, how busy the
/// machine was, the CSV names that differ from the records', and each
/// hybrid's cost over its PQC component.
pub(crate) fn record_sweep_info(
    run: &mut RunFile,
    opts: &SweepOptions,
    started: std::time::Instant,
    load: &crate::probe::system::LoadMeter,
) {
    run.metadata.machine_load = Some(load.now());
    run.sweep = Some(crate::schema::run_file::SweepInfo {
        warmup_seconds: opts.window.warmup,
        window_seconds: opts.window.window,
        wall_seconds: started.elapsed().as_secs_f64(),
        csv_names: run
            .records
            .iter()
            .filter_map(|r| {
                let csv = crate::core::catalog::sig_bench_name(&r.algorithm);
                (csv != r.algorithm).then(|| (r.algorithm.clone(), csv.to_string()))
            })
            .collect(),
    });
    run.hybrid_overhead = crate::analyse::hybrid::overhead(&run.records);
}
