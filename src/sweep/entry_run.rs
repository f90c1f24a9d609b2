//! Measuring one catalogue entry: each operation gated, then timed on one
//! thread or several (each with its own keys, started together), and its
//! records filled from the measurements.

use crate::core::catalog::{Kind, Operation, Sizes};
use crate::core::stats::{summarize, Sample};
use crate::schema::device::{Device, GateReport};
use crate::schema::record::{Record, SignatureBudget, Status};
use crate::sweep::options::SweepOptions;
use crate::sweep::registry::{Entry, Impl};
use crate::sweep::scheme::Scheme;
use crate::sweep::timing::{Measurement, Window};
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

/// What the timed window of an operation covers, for the record.
pub(crate) fn window_text(e: &Entry, op: Operation, w: Window) -> String {
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
        (Impl::Ossl(crate::sweep::openssl::OsslAlg::Ecdh(_) | crate::sweep::openssl::OsslAlg::Xdh(_)), o) => match o {
            Operation::KeyGen => "static key generation (key exchange modelled as a KEM)".into(),
            Operation::Encaps => "\"encaps\" = ephemeral key generation + derive with the static public key + encoding the ephemeral public key as the ciphertext (key exchange modelled as a KEM)".into(),
            _ => "\"decaps\" = decoding and validating the ephemeral public key + derive with the static key (key exchange modelled as a KEM)".into(),
        },
        (Impl::Ossl(crate::sweep::openssl::OsslAlg::Rsa { .. } | crate::sweep::openssl::OsslAlg::Ecdsa(_)), Operation::Sign | Operation::Verify) => {
            format!("hashing the message + EVP_PKEY_{op} on a context set up once")
        }
        (Impl::Ossl(crate::sweep::openssl::OsslAlg::EdDsa(_)), Operation::Sign | Operation::Verify) => {
            format!("EVP_DigestSign/Verify init + one-shot {op} (as openssl speed)")
        }
        (Impl::Ossl(crate::sweep::openssl::OsslAlg::Sm2), Operation::Sign | Operation::Verify) => {
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

pub(crate) const ANOTHER_THREAD: &str = "another thread's setup failed";

/// What one thread saw for one algorithm.
pub(crate) enum ThreadOut {
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

pub(crate) fn sizes_of(s: &Scheme) -> Result<Sizes> {
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

/// One measuring thread of an entry: opens it and gates it, waits for the
/// others, then measures each operation in step with them.
pub(crate) fn one_thread(
    e: &Entry,
    opts: &SweepOptions,
    cancel: &AtomicBool,
    barrier: &Barrier,
    setup_failed: &AtomicBool,
    together: &[crate::sweep::timing::Together],
) -> ThreadOut {
    let setup = open_and_gate(e, opts);
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
        let (r, budget) = measure_op(&mut s, op, Some(g.first[i]), opts, cancel, &together[i]);
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
    let after = crate::sweep::timing::check_after(&mut s).map_err(|err| format!("{err:#}"));
    ThreadOut::Done {
        gate: g.report,
        sizes,
        ops,
        budgets,
        after,
    }
}

/// Opens the entry with a first key pair, passes it through the
/// correctness gate, and reads its sizes.
fn open_and_gate(
    e: &Entry,
    opts: &SweepOptions,
) -> Result<(Scheme, crate::sweep::timing::GateOutcome, Sizes)> {
    let mut s = e.open(&opts.message).context("opening")?;
    let g = crate::sweep::timing::gate(&mut s).context("correctness gate failed before timing")?;
    let mut sizes = sizes_of(&s)?;
    if let Scheme::Kem(k) = &mut s {
        sizes.ciphertext_bytes = Some(k.ciphertext_mut().len());
    }
    Ok((s, g, sizes))
}

/// Measures one operation (`known`: one call's time from the gate), alone
/// or in one window shared with the other threads, with a stateful key's
/// budget before and after it.
fn measure_op(
    s: &mut Scheme,
    op: Operation,
    known: Option<std::time::Duration>,
    opts: &SweepOptions,
    cancel: &AtomicBool,
    together: &crate::sweep::timing::Together,
) -> (Result<Measurement>, Option<SignatureBudget>) {
    let before = crate::sweep::timing::budget(s);
    // Signing spends a stateful key's budget: never past its last signature.
    let cap = match (&before, op) {
        (Ok(Some((left, _))), Operation::Sign) => Some(*left),
        _ => None,
    };
    if let (Err(_), true) = (&before, opts.threads > 1) {
        // Keep step with the other threads of the shared window.
        let mut fail = || -> Result<()> { anyhow::bail!("the key's budget is unknown") };
        let _ = crate::sweep::timing::measure_together(
            &mut fail,
            opts.window,
            known,
            cancel,
            cap,
            together,
        );
    }
    let r = before.and_then(|before| {
        let mut run = || crate::sweep::timing::run_op(s, op);
        // Several threads share one window (one start, one end), so
        // their operations add up over the same time.
        let m = if opts.threads > 1 {
            crate::sweep::timing::measure_together(
                &mut run,
                opts.window,
                known,
                cancel,
                cap,
                together,
            )
        } else {
            crate::sweep::timing::measure_capped(&mut run, opts.window, known, cancel, cap)
        }?;
        let budget = match (before, crate::sweep::timing::budget(s)?) {
            (Some((b, _)), Some((a, total))) => Some(SignatureBudget {
                total,
                remaining_before: b,
                remaining_after: a,
            }),
            _ => None,
        };
        Ok((m, budget))
    });
    match r {
        Ok((m, b)) => (Ok(m), b),
        Err(e) => (Err(e), None),
    }
}

pub(crate) fn blank(e: &Entry, op: Operation, device: &Device, opts: &SweepOptions) -> Record {
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
    let outs = run_threads(e, opts, cancel, ops.len());
    if cancel.load(Ordering::SeqCst) {
        return Err(crate::core::exit::Interrupted);
    }
    if let Some(reason) = first_failure(&outs) {
        for rec in &mut recs {
            rec.status = Status::Failed;
            rec.reason = Some(reason.clone());
        }
        return Ok(recs);
    }
    fill_records(&mut recs, outs);
    Ok(recs)
}

/// Runs `--threads` measuring threads of `e` together (`ops` operations
/// each), and what each saw.
fn run_threads(e: &Entry, opts: &SweepOptions, cancel: &AtomicBool, ops: usize) -> Vec<ThreadOut> {
    let n = opts.threads.max(1);
    let barrier = Barrier::new(n);
    let setup_failed = AtomicBool::new(false);
    let together: Vec<crate::sweep::timing::Together> = (0..ops)
        .map(|_| crate::sweep::timing::Together::new(n))
        .collect();
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|_| sc.spawn(|| one_thread(e, opts, cancel, &barrier, &setup_failed, &together)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| ThreadOut::Failed("a measuring thread panicked".into()))
            })
            .collect()
    })
}

/// The first real reason a thread failed (not "another thread's setup
/// failed"), if one did.
fn first_failure(outs: &[ThreadOut]) -> Option<String> {
    let mut failures: Vec<&String> = outs
        .iter()
        .filter_map(|o| match o {
            ThreadOut::Failed(r) => Some(r),
            ThreadOut::Done { .. } => None,
        })
        .collect();
    failures.sort_by_key(|r| r.as_str() == ANOTHER_THREAD);
    failures.first().map(|r| r.to_string())
}

/// Fills each operation's record from every thread's measurement of it,
/// the first thread's gate, sizes and budgets; the last record fails when
/// a thread's outputs were wrong after timing.
fn fill_records(recs: &mut [Record], outs: Vec<ThreadOut>) {
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
}

/// Fills an ok record from the threads' measurements of one operation.
/// One thread: its window as measured. Several threads share one window
/// (see `timing::measure_together`): each sample is one round (every
/// thread's batch, from the first start to the last end); each thread's
/// own part is in `per_thread`. Either way `ops_per_sec` is all operations
/// over the time of the timed runs, `iterations / sum(run_seconds)`: the
/// same runs as the per-run figures, so the two agree by construction (the
/// barriers between rounds, where no operation runs, are outside it, as the
/// loop between one thread's batches is).
pub(crate) fn fill(rec: &mut Record, ms: &[&Measurement]) {
    let iterations: u64 = ms.iter().map(|m| m.iterations).sum();
    rec.iterations = Some(iterations);
    rec.warmup_runs = ms.iter().map(|m| m.warmup_ops as usize).sum();
    if ms.len() == 1 {
        let m = ms[0];
        let ops_per_sec = m.iterations as f64 / m.seconds;
        rec.batch = m.batches.first().map(|b| b.0 as usize).unwrap_or(1);
        rec.runs = m.batches.len();
        rec.run_seconds = m.batches.iter().map(|b| b.1).collect();
        rec.ops_per_sec = Some(ops_per_sec);
        rec.ms_per_op = Some(1000.0 / ops_per_sec);
        let samples = m.batches.iter().map(|b| b.0 as f64 / b.1).collect();
        rec.throughput_ops_per_sec = Sample::new(samples).ok().map(|s| summarize(&s));
        rec.cycles_per_op = rec
            .throughput_ops_per_sec
            .as_ref()
            .and_then(|s| crate::probe::tsc::cycles_per_op(s.median, rec.threads));
    } else {
        let rounds = ms.iter().map(|m| m.spans.len()).min().unwrap_or(0);
        let mut run_seconds = vec![];
        let mut samples = vec![];
        let mut per_round = 0;
        for i in 0..rounds {
            let ops: u64 = ms.iter().map(|m| m.batches[i].0).sum();
            let t0 = ms.iter().map(|m| m.spans[i].0).min().expect("threads");
            let t1 = ms.iter().map(|m| m.spans[i].1).max().expect("threads");
            let secs = (t1 - t0).as_secs_f64();
            if i == 0 {
                per_round = ops as usize;
            }
            run_seconds.push(secs);
            samples.push(ops as f64 / secs);
        }
        let timed: f64 = run_seconds.iter().sum();
        let counted: u64 = (0..rounds)
            .map(|i| ms.iter().map(|m| m.batches[i].0).sum::<u64>())
            .sum();
        let ops_per_sec = counted as f64 / timed;
        rec.batch = per_round.max(1);
        rec.runs = rounds;
        rec.run_seconds = run_seconds;
        rec.ops_per_sec = Some(ops_per_sec);
        rec.ms_per_op = Some(1000.0 / ops_per_sec);
        rec.throughput_ops_per_sec = Sample::new(samples).ok().map(|s| summarize(&s));
        rec.cycles_per_op = rec
            .throughput_ops_per_sec
            .as_ref()
            .and_then(|s| crate::probe::tsc::cycles_per_op(s.median, rec.threads));
        rec.per_thread = ms
            .iter()
            .map(|m| crate::schema::record::ThreadShare {
                operations: m.iterations,
                busy_seconds: m.seconds,
                ops_per_sec: m.iterations as f64 / m.seconds,
                warmup_operations: m.warmup_ops,
            })
            .collect();
        rec.timed_window += &format!(
            "; {} threads in one shared window: every round starts all threads together after a barrier; a round runs from the first thread's start to the last thread's end, and the figures count all threads' operations over the rounds' time",
            ms.len()
        );
    }
    rec.status = Status::Ok;
    if ms.iter().any(|m| m.once) {
        rec.timed_window += "; ran once (slower than the window)";
    }
    if ms.iter().any(|m| m.budget_ran_out) {
        rec.timed_window += "; the window stopped early: the stateful key had no signatures left";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::device::DeviceKind;
    use crate::sweep::registry::Provider;

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
        crate::sweep::registry::all()
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
        for r in &recs {
            assert!(r.status == Status::Ok && r.threads == 2, "{r:?}");
            // The whole, not thread 0: both threads' operations and
            // warm-ups, over one shared window.
            assert_eq!(r.per_thread.len(), 2, "{r:?}");
            let ops: u64 = r.per_thread.iter().map(|t| t.operations).sum();
            assert_eq!(r.iterations, Some(ops));
            let warm: u64 = r.per_thread.iter().map(|t| t.warmup_operations).sum();
            assert_eq!(r.warmup_runs as u64, warm);
            assert_eq!(r.run_seconds.len(), r.runs);
            // The rate is the operations over the rounds' own time, the
            // same runs the per-run figures come from, so the reader's
            // agreement check holds by construction.
            let timed: f64 = r.run_seconds.iter().sum();
            let rate = ops as f64 / timed;
            assert!(
                (r.ops_per_sec.unwrap() - rate).abs() <= 1e-9 * rate,
                "{r:?}"
            );
            assert_eq!(crate::schema::agreement::problem(r), None);
            for t in &r.per_thread {
                assert!(timed >= t.busy_seconds * 0.999, "{r:?}");
            }
            // A round is both threads' batches.
            let raw = &r.throughput_ops_per_sec.as_ref().unwrap().raw;
            assert!((raw[0] - r.batch as f64 / r.run_seconds[0]).abs() <= 1e-6 * raw[0]);
            assert!(
                r.timed_window.contains("shared window"),
                "{}",
                r.timed_window
            );
        }
    }

    #[test]
    fn an_unavailable_algorithm_is_skipped_with_its_reason() {
        let mut e = entry("Ed25519", Provider::Openssl);
        e.imp = Impl::Ossl(crate::sweep::openssl::OsslAlg::NamedSig("NOT-A-SIG"));
        e.unavailable =
            crate::sweep::openssl::available(crate::sweep::openssl::OsslAlg::NamedSig("NOT-A-SIG"))
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
        e.imp = Impl::Ossl(crate::sweep::openssl::OsslAlg::NamedSig("NOT-A-SIG"));
        let recs = measure_entry(&e, &opts(), &device(), &AtomicBool::new(false)).unwrap();
        assert!(recs
            .iter()
            .all(|r| r.status == Status::Failed && r.run_seconds.is_empty()));
    }
}
