//! `pqcprof sweep` and `pqcprof sizes`: every algorithm the linked liboqs
//! and OpenSSL enable, plus composites, each (algorithm, operation)
//! measured on its own after a correctness gate, timed as pqc-sig-bench-c
//! (warm-up, then a fixed window), written as a run file and as
//! pqc-sig-bench-c-style CSVs after every algorithm. The commands
//! (`crate::cmd::sweep`, `crate::cmd::sizes`) print what these return.

use crate::sweep::entry_run::measure_entry;
use crate::sweep::options::{SizesFormat, SweepOptions};
use crate::sweep::writer::record_label;
use crate::sweep::writer::record_sweep_info;
use crate::sweep::writer::Writer;
pub mod composite;
pub mod entry_run;
pub mod filter;
pub mod openssl;
pub mod options;
pub mod oqs;
pub mod registry;
pub mod scheme;
pub mod sizes;
pub mod stfl;
pub mod symmetric;
pub mod timing;
pub mod writer;

use crate::core::exit;
use crate::schema::device::{Device, DeviceKind};
use crate::schema::record::RunConfig;
use crate::schema::run_file::RunFile;
use crate::sweep::registry::{Entry, Provider};
use anyhow::Result;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a finished sweep wrote and how it ended.
#[derive(Debug)]
pub struct Swept {
    /// The run file.
    pub run_path: std::path::PathBuf,
    /// The pqc-sig-bench-c-style CSVs beside it.
    pub csvs: Vec<std::path::PathBuf>,
    /// Seconds the sweep took.
    pub wall_seconds: f64,
    /// Whether Ctrl-C (SIGTERM, SIGHUP) stopped it.
    pub interrupted: bool,
    /// The exit code its records (or the interruption) call for.
    pub code: i32,
}

/// `pqcprof sweep`'s measurement: `entries` measured one by one into a run
/// file and CSVs in `out` (written after each), then the symmetric
/// primitives, then the files written complete.
/// `vectors`: the run file's vectors section (computed by the caller).
pub fn run_sweep(
    opts: &SweepOptions,
    entries: &[Entry],
    out: &Path,
    vectors: Vec<crate::schema::vectors::BackendVectors>,
) -> Result<Swept> {
    let out = crate::write::output::ensure_writable_dir(out)?;
    let meta = crate::probe::system::collect(None);
    let device = Device {
        kind: DeviceKind::Cpu,
        name: meta.cpu.clone(),
        memory_total_mb: meta.memory_total_mb,
    };
    let mut run = RunFile::new(meta, sweep_config(opts));
    run.vectors = vectors;
    let writer = start_files(&out, &run, entries)?;
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    log::info!(
        target: "sweep",
        "{} algorithms, {} thread(s), {}s warm-up + {}s window per operation",
        entries.len(),
        opts.threads,
        opts.window.warmup,
        opts.window.window
    );
    let clock = SweepClock {
        started: std::time::Instant::now(),
        load: crate::probe::system::LoadMeter::start(),
    };
    let mut interrupted =
        measure_entries(entries, opts, &device, &cancel, &mut run, &writer, &clock)?;
    if opts.symmetric && !interrupted {
        let secs = opts.window.window.min(1.0);
        run.symmetric = symmetric::measure_all(secs, &cancel)?;
        interrupted = cancel.load(Ordering::SeqCst);
        for s in &run.symmetric {
            log::info!(
                target: "row",
                "[sym] {:<18} {:>6} B  {:>10.1} MB/s",
                s.algorithm, s.chunk_bytes, s.mb_per_sec
            );
        }
    }
    interrupted |= cancel.load(Ordering::SeqCst);
    finish(run, &writer, opts, &clock, interrupted)
}

/// When the sweep started and the machine's load since, for the run
/// file's sweep block.
struct SweepClock {
    started: std::time::Instant,
    load: crate::probe::system::LoadMeter,
}

/// The run file's configuration block for a sweep: windows, not batches.
fn sweep_config(opts: &SweepOptions) -> RunConfig {
    RunConfig {
        command_line: std::env::args().collect(),
        runs: 0,
        warmup_runs: 0,
        batch: 0,
        threads: vec![opts.threads],
        message_bytes: opts.message.len(),
        context_hex: String::new(),
        sample_period_ms: 0.0,
        randomness:
            "each library's own RNG inside each call (liboqs: system randomness; OpenSSL: its DRBG)"
                .into(),
        backends: [Provider::Liboqs, Provider::Openssl, Provider::Composite]
            .iter()
            .map(|p| p.backend().to_string())
            .collect(),
        algorithms: vec![],
        operations: vec![],
        per_backend: vec![],
        batch_sweep: false,
    }
}

/// Creates the run file, with no records yet, and the writer of it and
/// of the CSVs.
fn start_files(out: &Path, run: &RunFile, entries: &[Entry]) -> Result<Writer> {
    // The CSVs share the run file's stamp, unique once the run file is
    // created exclusively; it starts as this run with no records yet.
    let (run_path, stamp) = crate::write::output::reserve(
        out,
        "run-",
        "-sweep.json",
        &crate::write::output::json_bytes(run)?,
    )?;
    Ok(Writer {
        run_path,
        out: out.to_path_buf(),
        stamp,
        csv_type_of: entries
            .iter()
            .map(|e| (e.name.clone(), e.provider.name().to_string(), e.csv_type()))
            .collect(),
    })
}

/// Measures every entry in turn, each record said as it is done and the
/// files written after each entry; true when Ctrl-C stopped it.
fn measure_entries(
    entries: &[Entry],
    opts: &SweepOptions,
    device: &Device,
    cancel: &AtomicBool,
    run: &mut RunFile,
    writer: &Writer,
    clock: &SweepClock,
) -> Result<bool> {
    for (i, e) in entries.iter().enumerate() {
        match measure_entry(e, opts, device, cancel) {
            Ok(recs) => {
                for r in &recs {
                    log::info!(
                        target: "row",
                        "[{:>3}/{}] {:<9} {:<34} {:<7} {}",
                        i + 1,
                        entries.len(),
                        r.provider,
                        r.algorithm,
                        r.operation.cli_name(),
                        record_label(r)
                    );
                }
                run.records.extend(recs);
            }
            Err(crate::core::exit::Interrupted) => return Ok(true),
        }
        record_sweep_info(run, opts, clock.started, &clock.load);
        crate::measure::signals::saving(&writer.run_path, || writer.write(run, opts))?;
    }
    Ok(false)
}

/// Writes the files a last time, marked complete or interrupted; what
/// was written and the exit code.
fn finish(
    mut run: RunFile,
    writer: &Writer,
    opts: &SweepOptions,
    clock: &SweepClock,
    interrupted: bool,
) -> Result<Swept> {
    run.complete = !interrupted;
    run.interrupted = interrupted;
    record_sweep_info(&mut run, opts, clock.started, &clock.load);
    let csvs = crate::measure::signals::saving(&writer.run_path, || writer.write(&run, opts))?;
    Ok(Swept {
        run_path: writer.run_path.clone(),
        csvs,
        wall_seconds: run.sweep.as_ref().map_or(0.0, |s| s.wall_seconds),
        interrupted,
        code: if interrupted {
            exit::INTERRUPTED
        } else {
            crate::schema::record::exit_for_failures(&run.records)
        },
    })
}

/// `pqcprof sizes`'s table: the sizes of every entry as CSV, named as
/// `format` says, and how many entries failed (each said on standard
/// error; entries that cannot run here are skipped with the reason).
pub fn sizes_table(entries: &[Entry], format: SizesFormat) -> (String, usize) {
    let message = vec![0xAB; 50];
    let mut rows = vec![];
    let mut failed = 0;
    for e in entries {
        if let Some(r) = &e.unavailable {
            log::warn!(
                target: "sizes",
                "skipped {} ({}): {r}",
                e.name,
                e.provider.name()
            );
            continue;
        }
        match sizes::size_row(e, &message) {
            Ok(r) => rows.push(r),
            Err(err) => {
                failed += 1;
                log::warn!(
                    target: "sizes",
                    "{} ({}) failed: {err:#}",
                    e.name,
                    e.provider.name()
                );
            }
        }
    }
    if format == SizesFormat::SigBench {
        for r in &mut rows {
            r.algorithm = crate::core::catalog::sig_bench_name(&r.algorithm).to_string();
        }
    }
    (sizes::render(&rows), failed)
}
