//! `pqcprof sweep` and `pqcprof sizes`: every algorithm the linked liboqs
//! and OpenSSL enable, plus composites, each (algorithm, operation)
//! measured on its own after a correctness gate, timed as pqc-sig-bench-c
//! (warm-up, then a fixed window), written as a run file and as
//! pqc-sig-bench-c-style CSVs after every algorithm.

pub mod composite;
pub mod openssl;
pub mod oqs;
pub mod registry;
pub mod scheme;
pub mod sizes;
pub mod stfl;
pub mod symmetric;
pub mod timing;

use crate::core::catalog::{Kind, Operation, Sizes};
use crate::core::exit;
use crate::core::stats::{summarize, Sample};
use crate::schema::device::{Device, DeviceKind, GateReport};
use crate::schema::record::{Record, RunConfig, SignatureBudget, Status};
use crate::schema::run_file::RunFile;
use anyhow::{bail, Context, Result};
use clap::Args;
use registry::{Entry, Filter, Impl, Provider};
use scheme::Scheme;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use timing::{Measurement, Window};

/// Options of `pqcprof sweep`.
#[derive(Debug, Args, Clone)]
pub struct SweepArgs {
    /// Only algorithms matching these terms, comma-separated or repeated:
    /// name patterns (`ML-DSA-65`, `falcon*`, case and dashes ignored),
    /// `family:NAME`, `provider:liboqs|openssl|composite`, `level:1..5`,
    /// `kind:kem|sig`. Names and families are alternatives, and so are the
    /// terms of each other key; the keys must all hold (e.g. `Falcon-512,
    /// family:ML-DSA --filter provider:liboqs`).
    #[arg(long, value_name = "TERMS")]
    pub filter: Vec<String>,
    /// Print what would run (and what is skipped, with the reason), then exit.
    #[arg(long)]
    pub list: bool,
    /// Warm-up before each operation's window, seconds [default: 1; 0.05 with --quick]
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub warmup: Option<f64>,
    /// Measurement window per operation, seconds [default: 10; 0.25 with --quick]
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// A short sweep: 0.05 s warm-up and 0.25 s window (overridden by --warmup/--seconds).
    #[arg(long)]
    pub quick: bool,
    /// Also RSA-8192 and RSA-16384 and the taller XMSS/LMS trees (key
    /// generation takes seconds to minutes).
    #[arg(long)]
    pub slow: bool,
    /// Threads, each with its own keys, for throughput: a number or `all`.
    #[arg(long, default_value = "1", allow_negative_numbers = true)]
    pub threads: String,
    /// Message signed and verified, bytes of 0xAB (50, as liboqs's speed_sig).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub message_size: usize,
    /// Measure the symmetric primitives even with --filter (they run by default without one).
    #[arg(long, conflicts_with = "no_symmetric")]
    pub symmetric: bool,
    /// Skip the symmetric primitives.
    #[arg(long)]
    pub no_symmetric: bool,
    /// Folder for the run file and the CSVs.
    #[arg(long, default_value = "outputs")]
    pub out: PathBuf,
}

/// Options of `pqcprof sizes`.
#[derive(Debug, Args, Clone)]
pub struct SizesArgs {
    /// Only algorithms matching these terms (as `sweep --filter`).
    #[arg(long, value_name = "TERMS")]
    pub filter: Vec<String>,
    /// Include RSA-8192 and RSA-16384 and the taller XMSS/LMS trees.
    #[arg(long)]
    pub slow: bool,
    /// Write the CSV here instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The shortest measurement window `sweep` accepts, seconds.
pub const MIN_WINDOW_SECONDS: f64 = 0.01;

/// Validated sweep settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Warm-up and window.
    pub window: Window,
    /// Threads per operation.
    pub threads: usize,
    /// Message bytes.
    pub message: Vec<u8>,
    /// Whether to measure the symmetric primitives.
    pub symmetric: bool,
}

impl SweepArgs {
    /// Checks every value, naming a bad one.
    pub fn validate(&self) -> Result<SweepOptions> {
        let warmup = self.warmup.unwrap_or(if self.quick { 0.05 } else { 1.0 });
        let seconds = self.seconds.unwrap_or(if self.quick { 0.25 } else { 10.0 });
        if !(warmup.is_finite() && (0.0..=3600.0).contains(&warmup)) {
            bail!("invalid --warmup {warmup}: must be from 0 to 3600 seconds");
        }
        // Below 10 ms a window holds a handful of iterations, too few to mean anything.
        if !(seconds.is_finite() && (MIN_WINDOW_SECONDS..=3600.0).contains(&seconds)) {
            bail!("invalid --seconds {seconds}: the window must be from {MIN_WINDOW_SECONDS} to 3600 seconds");
        }
        let cores = crate::probe::system::available_cores();
        let threads = crate::backend::parallel::parse_threads(&self.threads, cores)?;
        if threads.len() != 1 {
            bail!(
                "invalid --threads '{}': give one number or `all`",
                self.threads
            );
        }
        if self.message_size == 0 || self.message_size > 64 * 1024 * 1024 {
            bail!(
                "invalid --message-size {}: must be from 1 byte to 64 MiB",
                self.message_size
            );
        }
        Ok(SweepOptions {
            window: Window {
                warmup,
                window: seconds,
            },
            threads: threads[0],
            message: vec![0xAB; self.message_size],
            symmetric: self.symmetric || (self.filter.is_empty() && !self.no_symmetric),
        })
    }
}

/// The algorithms a filter selects, without `--slow` ones unless asked.
pub fn select(filter_args: &[String], slow: bool) -> Result<Vec<Entry>> {
    let filter = Filter::parse(filter_args)?;
    let chosen = filter.select(&registry::all())?;
    let n = chosen.len();
    let kept: Vec<Entry> = chosen.into_iter().filter(|e| slow || !e.slow).collect();
    if kept.is_empty() && n > 0 {
        bail!(
            "the algorithms matched need --slow (RSA-8192, RSA-16384, the taller XMSS/LMS trees)"
        );
    }
    Ok(kept)
}

fn list(entries: &[Entry]) -> String {
    let mut s = format!(
        "{:<34} {:<20} {:<9} {:<9} {:>5}  {}\n",
        "algorithm", "family", "kind", "provider", "level", "status"
    );
    for e in entries {
        s += &format!(
            "{:<34} {:<20} {:<9} {:<9} {:>5}  {}\n",
            e.name,
            e.family,
            match e.kind {
                Kind::Kem => "kem",
                Kind::Signature => "signature",
            },
            e.provider.name(),
            e.nist_level
                .map(|l| l.to_string())
                .unwrap_or_else(|| "-".into()),
            e.unavailable
                .as_ref()
                .map(|r| format!("skipped: {r}"))
                .unwrap_or_else(|| "runs".into())
        );
    }
    let runs = entries.iter().filter(|e| e.unavailable.is_none()).count();
    s += &format!(
        "{} algorithms, {runs} to run, {} skipped\n",
        entries.len(),
        entries.len() - runs
    );
    s
}

/// What the timed window of an operation covers, for the record.
fn window_text(e: &Entry, op: Operation, w: Window) -> String {
    let what = match (&e.imp, op) {
        (Impl::OqsKem(_), o) => format!(
            "one liboqs OQS_KEM_{} call",
            match o {
                Operation::KeyGen => "keypair",
                Operation::Encaps => "encaps",
                _ => "decaps",
            }
        ),
        (Impl::OqsSig(_), o) => format!(
            "one liboqs OQS_SIG_{} call",
            match o {
                Operation::KeyGen => "keypair",
                Operation::Sign => "sign",
                _ => "verify",
            }
        ),
        (Impl::Stfl(_), o) => format!(
            "{} (pqcprof's stateful-only build of the same liboqs source)",
            match o {
                Operation::KeyGen => "one liboqs OQS_SIG_STFL_SECRET_KEY_new + OQS_SIG_STFL_keypair",
                Operation::Sign => "one liboqs OQS_SIG_STFL_sign call, which includes serialising the updated secret key and handing it to the store callback (pqcprof's keeps it in memory; a real signer must write it to durable storage first)",
                _ => "one liboqs OQS_SIG_STFL_verify call",
            }
        ),
        (Impl::Ossl(openssl::OsslAlg::Ecdh(_) | openssl::OsslAlg::Xdh(_)), o) => match o {
            Operation::KeyGen => "static key generation (key exchange modelled as a KEM)".into(),
            Operation::Encaps => "\"encaps\" = ephemeral key generation + derive with the static public key + encoding the ephemeral public key as the ciphertext (key exchange modelled as a KEM)".into(),
            _ => "\"decaps\" = decoding and validating the ephemeral public key + derive with the static key (key exchange modelled as a KEM)".into(),
        },
        (Impl::Ossl(openssl::OsslAlg::Rsa { .. } | openssl::OsslAlg::Ecdsa(_)), Operation::Sign | Operation::Verify) => {
            format!("hashing the message + EVP_PKEY_{op} on a context set up once")
        }
        (Impl::Ossl(openssl::OsslAlg::EdDsa(_)), Operation::Sign | Operation::Verify) => {
            format!("EVP_DigestSign/Verify init + one-shot {op} (as openssl speed)")
        }
        (Impl::Ossl(openssl::OsslAlg::Sm2), Operation::Sign | Operation::Verify) => {
            format!("EVP_DigestSign/Verify init with SM3 and the default ID (hashing Z and the message) + one-shot {op}")
        }
        (Impl::Ossl(_), Operation::KeyGen) => "one OpenSSL key generation".into(),
        (Impl::Ossl(_), o) => format!("one EVP_PKEY {} call on a context set up once", match o {
            Operation::Encaps => "encapsulate",
            Operation::Decaps => "decapsulate",
            other => other.cli_name(),
        }),
        (Impl::CompositeSig(n), o) => format!("composite: {o} with both {n} (liboqs) and Ed25519 (OpenSSL)"),
        (Impl::CompositeKem(n), o) => format!("composite: {o} with both {n} (liboqs) and X25519 (OpenSSL), secrets combined with SHA3-256"),
    };
    format!(
        "{what}; repeated in batches for a {}s window after a {}s warm-up (an operation slower than the window runs once)",
        w.window, w.warmup
    )
}

const ANOTHER_THREAD: &str = "another thread's setup failed";

/// What one thread saw for one algorithm.
enum ThreadOut {
    /// Opening or the gate failed.
    Failed(String),
    /// Measured.
    Done {
        gate: GateReport,
        sizes: Sizes,
        ops: Vec<Result<Measurement, String>>,
        /// Stateful schemes: the key's budget around each operation.
        budgets: Vec<Option<SignatureBudget>>,
        after: Result<(), String>,
    },
}

fn sizes_of(s: &Scheme) -> Result<Sizes> {
    Ok(match s {
        Scheme::Kem(k) => {
            let kb = k.key_bytes()?;
            Sizes {
                public_key_bytes: kb.public_raw,
                secret_key_bytes: kb.secret_raw.unwrap_or(0),
                ciphertext_bytes: None,
                shared_secret_bytes: Some(k.secrets().0.len()),
                signature_bytes: None,
            }
        }
        Scheme::Sig(g) => {
            let kb = g.key_bytes()?;
            Sizes {
                public_key_bytes: kb.public_raw,
                secret_key_bytes: kb.secret_raw.unwrap_or(0),
                ciphertext_bytes: None,
                shared_secret_bytes: None,
                signature_bytes: Some(g.max_signature_len()),
            }
        }
    })
}

fn one_thread(
    e: &Entry,
    opts: &SweepOptions,
    cancel: &AtomicBool,
    barrier: &Barrier,
    setup_failed: &AtomicBool,
) -> ThreadOut {
    let setup = (|| -> Result<(Scheme, timing::GateOutcome, Sizes)> {
        let mut s = e.open(&opts.message).context("opening")?;
        let g = timing::gate(&mut s).context("correctness gate failed before timing")?;
        let mut sizes = sizes_of(&s)?;
        if let Scheme::Kem(k) = &mut s {
            sizes.ciphertext_bytes = Some(k.ciphertext_mut().len());
        }
        Ok((s, g, sizes))
    })();
    if setup.is_err() {
        setup_failed.store(true, Ordering::SeqCst);
    }
    barrier.wait();
    let (mut s, g, sizes) = match setup {
        Ok(v) => v,
        Err(err) => return ThreadOut::Failed(format!("{err:#}")),
    };
    if setup_failed.load(Ordering::SeqCst) {
        return ThreadOut::Failed(ANOTHER_THREAD.into());
    }
    let mut ops = vec![];
    let mut budgets = vec![];
    for (i, op) in e.operations().into_iter().enumerate() {
        barrier.wait();
        let known = Some(g.first[i]);
        let before = timing::budget(&s);
        // Signing spends a stateful key's budget: never past its last signature.
        let cap = match (&before, op) {
            (Ok(Some((left, _))), Operation::Sign) => Some(*left),
            _ => None,
        };
        let r = before.and_then(|before| {
            let m = timing::measure_capped(
                &mut || timing::run_op(&mut s, op),
                opts.window,
                known,
                cancel,
                cap,
            )?;
            let budget = match (before, timing::budget(&s)?) {
                (Some((b, _)), Some((a, total))) => Some(SignatureBudget {
                    total,
                    remaining_before: b,
                    remaining_after: a,
                }),
                _ => None,
            };
            Ok((m, budget))
        });
        let (r, budget) = match r {
            Ok((m, b)) => (Ok(m), b),
            Err(e) => (Err(e), None),
        };
        budgets.push(budget);
        ops.push(r.map_err(|err| {
            if err
                .downcast_ref::<crate::core::exit::Interrupted>()
                .is_some()
            {
                "interrupted".to_string()
            } else {
                format!("{op} failed: {err:#}")
            }
        }));
    }
    let after = timing::check_after(&mut s).map_err(|err| format!("{err:#}"));
    ThreadOut::Done {
        gate: g.report,
        sizes,
        ops,
        budgets,
        after,
    }
}

fn blank(e: &Entry, op: Operation, device: &Device, opts: &SweepOptions) -> Record {
    Record {
        threads: opts.threads,
        nist_level: e.nist_level,
        message_bytes: (e.kind == Kind::Signature).then_some(opts.message.len()),
        timed_window: window_text(e, op, opts.window),
        sampler: "none: the sweep times windows and does not sample".into(),
        ..Record::unmeasured(
            e.provider.backend().into(),
            device.clone(),
            e.provider.name().into(),
            e.name.clone(),
            e.family.clone(),
            e.kind,
            op,
        )
    }
}

/// Measures one algorithm: one record per operation. `Err` only for Ctrl-C.
pub fn measure_entry(
    e: &Entry,
    opts: &SweepOptions,
    device: &Device,
    cancel: &AtomicBool,
) -> std::result::Result<Vec<Record>, crate::core::exit::Interrupted> {
    let ops = e.operations();
    let mut recs: Vec<Record> = ops.iter().map(|&op| blank(e, op, device, opts)).collect();
    if let Some(r) = &e.unavailable {
        for rec in &mut recs {
            rec.reason = Some(r.clone());
        }
        return Ok(recs);
    }
    let n = opts.threads.max(1);
    let barrier = Barrier::new(n);
    let setup_failed = AtomicBool::new(false);
    let outs: Vec<ThreadOut> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|_| sc.spawn(|| one_thread(e, opts, cancel, &barrier, &setup_failed)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| ThreadOut::Failed("a measuring thread panicked".into()))
            })
            .collect()
    });
    if cancel.load(Ordering::SeqCst) {
        return Err(crate::core::exit::Interrupted);
    }
    // The first real reason (not "another thread's setup failed").
    let mut failures: Vec<&String> = outs
        .iter()
        .filter_map(|o| match o {
            ThreadOut::Failed(r) => Some(r),
            ThreadOut::Done { .. } => None,
        })
        .collect();
    failures.sort_by_key(|r| r.as_str() == ANOTHER_THREAD);
    if let Some(reason) = failures.first() {
        for rec in &mut recs {
            rec.status = Status::Failed;
            rec.reason = Some(reason.to_string());
        }
        return Ok(recs);
    }
    let mut per_thread = vec![];
    let (mut gate, mut sizes, mut budgets) = (None, Sizes::default(), vec![]);
    for o in outs {
        match o {
            ThreadOut::Failed(_) => unreachable!("handled above"),
            ThreadOut::Done {
                gate: g,
                sizes: s,
                ops,
                budgets: b,
                after,
            } => {
                if gate.is_none() {
                    gate = Some(g);
                    sizes = s;
                    budgets = b;
                }
                per_thread.push((ops, after));
            }
        }
    }
    for (j, rec) in recs.iter_mut().enumerate() {
        rec.gate = gate.clone();
        rec.sizes = sizes;
        rec.signature_budget = budgets.get(j).copied().flatten();
        let ms: std::result::Result<Vec<&Measurement>, String> = per_thread
            .iter()
            .map(|(ops, _)| ops[j].as_ref().map_err(Clone::clone))
            .collect();
        match ms {
            Err(reason) => {
                rec.status = Status::Failed;
                rec.reason = Some(reason);
            }
            Ok(ms) => fill(rec, &ms),
        }
    }
    // The outputs of the last operations must still be right.
    if let Some((_, Err(reason))) = per_thread.iter().find(|(_, a)| a.is_err()) {
        let last = recs.last_mut().expect("three operations");
        last.status = Status::Failed;
        last.reason = Some(format!("correctness check after timing failed: {reason}"));
    }
    Ok(recs)
}

/// Fills an ok record from the threads' measurements of one operation.
fn fill(rec: &mut Record, ms: &[&Measurement]) {
    let first = ms[0];
    let iterations: u64 = ms.iter().map(|m| m.iterations).sum();
    let ops_per_sec: f64 = ms.iter().map(|m| m.iterations as f64 / m.seconds).sum();
    let shortest = ms.iter().map(|m| m.batches.len()).min().unwrap_or(0);
    let samples: Vec<f64> = (0..shortest)
        .map(|i| {
            ms.iter()
                .map(|m| m.batches[i].0 as f64 / m.batches[i].1)
                .sum()
        })
        .collect();
    rec.iterations = Some(iterations);
    rec.batch = first.batches.first().map(|b| b.0 as usize).unwrap_or(1);
    rec.runs = first.batches.len();
    rec.warmup_runs = first.warmup_ops as usize;
    rec.run_seconds = first.batches.iter().map(|b| b.1).collect();
    rec.ops_per_sec = Some(ops_per_sec);
    rec.ms_per_op = Some(1000.0 / ops_per_sec);
    rec.throughput_ops_per_sec = Sample::new(samples).ok().map(|s| summarize(&s));
    rec.status = Status::Ok;
    if first.once {
        rec.timed_window += "; ran once (slower than the window)";
    }
    if ms.iter().any(|m| m.budget_ran_out) {
        rec.timed_window += "; the window stopped early: the stateful key had no signatures left";
    }
}

fn csv_meta(
    meta: &crate::schema::metadata::Metadata,
    opts: &SweepOptions,
    kind: &str,
) -> Vec<(String, String)> {
    let kv = |k: &str, v: String| (k.to_string(), v);
    vec![
        kv("date", meta.date.clone()),
        kv("liboqs", meta.liboqs_version.clone()),
        kv("openssl", meta.openssl_version.clone()),
        kv("arch", meta.arch.clone()),
        kv("os", format!("{} {}", meta.os, meta.kernel)),
        kv("cpu", meta.cpu.clone()),
        kv("memory_mb", meta.memory_total_mb.to_string()),
        kv("warmup_seconds", opts.window.warmup.to_string()),
        kv("bench_seconds", opts.window.window.to_string()),
        kv("threads", opts.threads.to_string()),
        kv("message_bytes", opts.message.len().to_string()),
        kv("type", kind.to_string()),
        kv("hostname", meta.hostname.clone()),
        kv(
            "pqcprof",
            format!("{} ({})", meta.pqcprof_version, meta.git_commit),
        ),
    ]
}

/// CSV types, in file order.
pub const CSV_TYPES: [&str; 4] = ["traditional", "liboqs", "openssl-pqc", "composite"];

struct Writer {
    out: PathBuf,
    stamp: String,
    run_path: PathBuf,
    csv_type_of: Vec<(String, String, &'static str)>,
}

impl Writer {
    fn csv_path(&self, meta: &crate::schema::metadata::Metadata, kind: &str) -> PathBuf {
        self.out.join(crate::write::csv::file_name(
            &self.stamp,
            &meta.arch,
            &meta.hostname,
            kind,
        ))
    }
    fn write(&self, run: &RunFile, opts: &SweepOptions) -> Result<Vec<PathBuf>> {
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
fn partial(run: &RunFile) -> Option<&'static str> {
    match (run.complete, run.interrupted) {
        (true, _) => None,
        (false, true) => Some("interrupted"),
        (false, false) => Some("in progress (the sweep had not finished when this was written)"),
    }
}

fn record_label(r: &Record) -> String {
    match r.status {
        Status::Ok => format!(
            "{:>12.6} ms/op {:>14.3} ops/s {:>9} iterations",
            r.ms_per_op.unwrap_or(0.0),
            r.ops_per_sec.unwrap_or(0.0),
            r.iterations.unwrap_or(0)
        ),
        Status::Failed => format!("FAILED: {}", r.reason.as_deref().unwrap_or("")),
        Status::Skipped => format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
    }
}

/// What the run file says about the sweep as a whole, refreshed before
/// every write: its warm-up and window, its wall time so far, and each
/// hybrid's cost over its PQC component.
fn record_sweep_info(run: &mut RunFile, opts: &SweepOptions, started: std::time::Instant) {
    run.sweep = Some(crate::schema::run_file::SweepInfo {
        warmup_seconds: opts.window.warmup,
        window_seconds: opts.window.window,
        wall_seconds: started.elapsed().as_secs_f64(),
    });
    run.hybrid_overhead = crate::analyse::hybrid::overhead(&run.records);
}

/// `pqcprof sweep`.
pub fn run_sweep(args: &SweepArgs) -> Result<i32> {
    let opts = args.validate()?;
    let entries = select(&args.filter, args.slow)?;
    if args.list {
        print!("{}", list(&entries));
        return Ok(exit::OK);
    }
    let out = crate::write::output::ensure_writable_dir(&args.out)?;
    let meta = crate::probe::system::collect(None);
    let device = Device {
        kind: DeviceKind::Cpu,
        name: meta.cpu.clone(),
        memory_total_mb: meta.memory_total_mb,
    };
    // The CSVs share the run file's stamp, unique once the run file is
    // created exclusively.
    let (run_path, stamp) = crate::write::output::reserve(&out, "run-", "-sweep.json")?;
    let writer = Writer {
        run_path,
        out: out.clone(),
        stamp,
        csv_type_of: entries
            .iter()
            .map(|e| (e.name.clone(), e.provider.name().to_string(), e.csv_type()))
            .collect(),
    };
    let config = RunConfig {
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
    };
    let mut run = RunFile::new(meta, config);
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    eprintln!(
        "pqcprof sweep: {} algorithms, {} thread(s), {}s warm-up + {}s window per operation",
        entries.len(),
        opts.threads,
        opts.window.warmup,
        opts.window.window
    );
    let started = std::time::Instant::now();
    let mut interrupted = false;
    for (i, e) in entries.iter().enumerate() {
        match measure_entry(e, &opts, &device, &cancel) {
            Ok(recs) => {
                for r in &recs {
                    eprintln!(
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
            Err(crate::core::exit::Interrupted) => {
                interrupted = true;
                break;
            }
        }
        record_sweep_info(&mut run, &opts, started);
        writer.write(&run, &opts)?;
    }
    if opts.symmetric && !interrupted {
        let secs = opts.window.window.min(1.0);
        run.symmetric = symmetric::measure_all(secs, &cancel)?;
        interrupted = cancel.load(Ordering::SeqCst);
        for s in &run.symmetric {
            eprintln!(
                "[sym] {:<18} {:>6} B  {:>10.1} MB/s",
                s.algorithm, s.chunk_bytes, s.mb_per_sec
            );
        }
    }
    interrupted |= cancel.load(Ordering::SeqCst);
    run.complete = !interrupted;
    run.interrupted = interrupted;
    record_sweep_info(&mut run, &opts, started);
    let csvs = writer.write(&run, &opts)?;
    println!("Run file: {}", writer.run_path.display());
    for c in &csvs {
        println!("CSV: {}", c.display());
    }
    eprintln!(
        "pqcprof sweep: took {:.1} s",
        run.sweep.as_ref().map_or(0.0, |s| s.wall_seconds)
    );
    if interrupted {
        eprintln!(
            "pqcprof: interrupted; finished algorithms are in {}",
            writer.run_path.display()
        );
        return Ok(exit::INTERRUPTED);
    }
    Ok(crate::schema::record::exit_for_failures(&run.records))
}

/// `pqcprof sizes`.
pub fn run_sizes(args: &SizesArgs) -> Result<i32> {
    let entries = select(&args.filter, args.slow)?;
    if let Some(p) = &args.out {
        crate::write::output::check_output_file(p, &[])?;
    }
    let message = vec![0xAB; 50];
    let mut rows = vec![];
    let mut failed = 0;
    for e in &entries {
        if let Some(r) = &e.unavailable {
            eprintln!(
                "pqcprof sizes: skipped {} ({}): {r}",
                e.name,
                e.provider.name()
            );
            continue;
        }
        match sizes::size_row(e, &message) {
            Ok(r) => rows.push(r),
            Err(err) => {
                failed += 1;
                eprintln!(
                    "pqcprof sizes: {} ({}) failed: {err:#}",
                    e.name,
                    e.provider.name()
                );
            }
        }
    }
    let text = sizes::render(&rows);
    match &args.out {
        Some(p) => {
            crate::write::output::write_atomic(Path::new(p), text.as_bytes())?;
            eprintln!("pqcprof sizes: wrote {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(if failed > 0 {
        exit::SOME_FAILED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> SweepOptions {
        SweepOptions {
            window: Window {
                warmup: 0.0,
                window: 0.02,
            },
            threads: 1,
            message: vec![0xAB; 50],
            symmetric: false,
        }
    }

    fn device() -> Device {
        Device {
            kind: DeviceKind::Cpu,
            name: "test".into(),
            memory_total_mb: 1,
        }
    }

    fn entry(name: &str, provider: Provider) -> Entry {
        registry::all()
            .into_iter()
            .find(|e| e.name == name && e.provider == provider)
            .unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn every_kind_of_scheme_measures_ok() {
        for (n, p) in [
            ("ML-KEM-512", Provider::Liboqs),
            ("Falcon-512", Provider::Liboqs),
            ("Ed25519", Provider::Openssl),
            ("ECDSA-P256", Provider::Openssl),
            ("RSA-PSS-2048", Provider::Openssl),
            ("ECDH-P256", Provider::Openssl),
            ("X25519", Provider::Openssl),
            ("ML-KEM-768", Provider::Openssl),
            ("X25519MLKEM768", Provider::Openssl),
            ("ML-DSA-44", Provider::Openssl),
            ("ML-DSA-44+Ed25519", Provider::Composite),
            ("ML-KEM-512+X25519", Provider::Composite),
        ] {
            let recs =
                measure_entry(&entry(n, p), &opts(), &device(), &AtomicBool::new(false)).unwrap();
            assert_eq!(recs.len(), 3);
            for r in &recs {
                assert_eq!(r.status, Status::Ok, "{n} {}: {:?}", r.operation, r.reason);
                assert!(r.iterations.unwrap() >= 1 && r.ms_per_op.unwrap() > 0.0);
                assert!(r.gate.is_some());
            }
            assert!(recs[0].sizes.public_key_bytes > 0, "{n}");
        }
    }

    #[test]
    fn stateful_records_carry_the_keys_signature_budget() {
        let e = entry("LMS_SHA256_H5_W1", Provider::Liboqs);
        let recs = measure_entry(&e, &opts(), &device(), &AtomicBool::new(false)).unwrap();
        for r in &recs {
            assert_eq!(r.status, Status::Ok, "{}: {:?}", r.operation, r.reason);
            assert!(r
                .gate
                .as_ref()
                .unwrap()
                .checks
                .iter()
                .any(|c| c.contains("budget")));
        }
        let b: Vec<SignatureBudget> = recs.iter().map(|r| r.signature_budget.unwrap()).collect();
        assert!(b.iter().all(|b| b.total == 31));
        assert_eq!(b[0].remaining_after, 31, "key generation starts a full key");
        assert_eq!(b[1].remaining_before, 31);
        assert_eq!(
            b[1].remaining_before - b[1].remaining_after,
            recs[1].iterations.unwrap() + recs[1].warmup_runs as u64,
            "one signature of the budget per signature made"
        );
        assert_eq!(
            recs[1].timed_window.contains("no signatures left"),
            b[1].remaining_after == 0
        );
        assert_eq!(
            b[2].remaining_before, b[2].remaining_after,
            "verifying spends none"
        );
        // Stateless schemes have no budget.
        let m = measure_entry(
            &entry("Ed25519", Provider::Openssl),
            &opts(),
            &device(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(m.iter().all(|r| r.signature_budget.is_none()));
    }

    #[test]
    fn two_threads_add_up() {
        let mut o = opts();
        o.threads = 2;
        let recs = measure_entry(
            &entry("Ed25519", Provider::Openssl),
            &o,
            &device(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(recs
            .iter()
            .all(|r| r.status == Status::Ok && r.threads == 2));
    }

    #[test]
    fn an_unavailable_algorithm_is_skipped_with_its_reason() {
        let mut e = entry("Ed25519", Provider::Openssl);
        e.imp = Impl::Ossl(openssl::OsslAlg::NamedSig("NOT-A-SIG"));
        e.unavailable = openssl::available(openssl::OsslAlg::NamedSig("NOT-A-SIG"))
            .err()
            .map(|x| x.to_string());
        let recs = measure_entry(&e, &opts(), &device(), &AtomicBool::new(false)).unwrap();
        assert!(recs
            .iter()
            .all(|r| r.status == Status::Skipped
                && r.reason.as_deref().unwrap().contains("NOT-A-SIG")));
    }

    #[test]
    fn an_algorithm_that_fails_to_open_is_failed_not_timed() {
        let mut e = entry("Ed25519", Provider::Openssl);
        e.imp = Impl::Ossl(openssl::OsslAlg::NamedSig("NOT-A-SIG"));
        let recs = measure_entry(&e, &opts(), &device(), &AtomicBool::new(false)).unwrap();
        assert!(recs
            .iter()
            .all(|r| r.status == Status::Failed && r.run_seconds.is_empty()));
    }

    #[test]
    fn windows_are_validated() {
        #[derive(clap::Parser)]
        struct Sweep {
            #[command(flatten)]
            args: SweepArgs,
        }
        let a = |extra: &[&str]| {
            let mut v = vec!["sweep"];
            v.extend_from_slice(extra);
            use clap::Parser;
            Sweep::try_parse_from(v).unwrap().args
        };
        let e = a(&["--seconds", "0"]).validate().unwrap_err().to_string();
        assert!(e.contains("--seconds 0"), "{e}");
        let e = a(&["--warmup", "-1"]).validate().unwrap_err().to_string();
        assert!(e.contains("--warmup -1"), "{e}");
        let q = a(&["--quick"]).validate().unwrap();
        assert_eq!(
            q.window,
            Window {
                warmup: 0.05,
                window: 0.25
            }
        );
    }
}
