//! Timing as pqc-sig-bench-c: a warm-up of `warmup` seconds, then a
//! measurement window of `window` seconds that fast operations fill with
//! repetitions (timed in batches, so a median and a spread of per-batch
//! throughputs come with the total), while an operation slower than the
//! window runs once. ms/op is the total time over the operations done.
//!
//! Also the correctness gate every algorithm passes before it is timed.

use crate::core::catalog::Operation;
use crate::core::exit::Interrupted;
use crate::schema::device::GateReport;
use crate::sweep::scheme::{KemScheme, Scheme, SigScheme};
use anyhow::{bail, ensure, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Batches a measurement window is cut into (about; at least one operation each).
pub const BATCHES_PER_WINDOW: f64 = 20.0;

/// Warm-up and window lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Warm-up, seconds (0 allowed).
    pub warmup: f64,
    /// Measurement window, seconds (> 0).
    pub window: f64,
}

/// What one (algorithm, operation) measured on one thread.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    /// Operations done in the window.
    pub iterations: u64,
    /// Time the window's operations took in total, seconds.
    pub seconds: f64,
    /// Per-batch (operations, seconds).
    pub batches: Vec<(u64, f64)>,
    /// Operations run during the warm-up.
    pub warmup_ops: u64,
    /// True when one operation outlasted the window and ran once.
    pub once: bool,
    /// True when the window stopped early because a stateful key had no
    /// signatures left (see [`measure_capped`]).
    pub budget_ran_out: bool,
    /// Start and end of each batch ([`measure_together`] only): the rounds
    /// of a window shared by several threads.
    pub spans: Vec<(Instant, Instant)>,
}

/// What the threads measuring one operation together share: one timed
/// window, cut into rounds that every thread starts after the same barrier,
/// so the window's operations are counted over one common start and end.
pub struct Together {
    barrier: std::sync::Barrier,
    /// The slowest thread's warm-up estimate of one operation, nanoseconds:
    /// every thread sizes its batches (and decides "runs once") from it.
    per_op_ns: std::sync::atomic::AtomicU64,
    /// Whether another round runs, decided by one thread per round.
    go: AtomicBool,
    /// Set by a thread that failed or ran out of signatures: no more rounds.
    stop: AtomicBool,
    start: std::sync::OnceLock<Instant>,
}

impl Together {
    /// For `threads` threads measuring one operation.
    pub fn new(threads: usize) -> Self {
        Together {
            barrier: std::sync::Barrier::new(threads.max(1)),
            per_op_ns: std::sync::atomic::AtomicU64::new(0),
            go: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            start: std::sync::OnceLock::new(),
        }
    }
}

/// The warm-up: `op` repeated until `warmup` has passed (at most `cap`
/// times, counted in `m.warmup_ops`), giving the time per operation; none
/// when a `known` time per operation already covers the warm-up.
fn warm_up(
    op: &mut dyn FnMut() -> Result<()>,
    m: &mut Measurement,
    warmup: Duration,
    cap: u64,
    known: Option<Duration>,
    cancel: &AtomicBool,
) -> Result<Duration> {
    if let Some(d) = known.filter(|d| *d >= warmup && *d > Duration::ZERO) {
        return Ok(d);
    }
    let start = Instant::now();
    loop {
        if cancel.load(Ordering::SeqCst) {
            bail!(Interrupted);
        }
        if m.warmup_ops >= cap {
            break;
        }
        op()?;
        m.warmup_ops += 1;
        if start.elapsed() >= warmup {
            break;
        }
    }
    Ok(start.elapsed() / m.warmup_ops.max(1) as u32)
}

/// [`measure_capped`] on one of several threads that share one window
/// (`with`): each warms up on its own, then the window runs in rounds of one
/// batch per thread, each round started by all threads together, until the
/// window has passed since the first round began. A thread that fails keeps
/// step with the others (so no one waits for it) and returns its error.
pub fn measure_together(
    op: &mut dyn FnMut() -> Result<()>,
    w: Window,
    known: Option<Duration>,
    cancel: &AtomicBool,
    cap: Option<u64>,
    with: &Together,
) -> Result<Measurement> {
    let mut m = Measurement::default();
    let window = Duration::from_secs_f64(w.window);
    let mut err = warm_up_shared(op, &mut m, w, known, cancel, cap, with).err();
    with.barrier.wait();
    let per_op = Duration::from_nanos(with.per_op_ns.load(Ordering::SeqCst).max(1));
    m.once = per_op >= window;
    let batch = if m.once {
        1
    } else {
        ((w.window / BATCHES_PER_WINDOW) / per_op.as_secs_f64())
            .floor()
            .max(1.0) as u64
    };
    let mut left = cap.map_or(u64::MAX, |c| c.saturating_sub(m.warmup_ops));
    let mut rounds = 0usize;
    while another_round(with, cancel, rounds, m.once, window) {
        rounds += 1;
        if err.is_some() {
            continue;
        }
        let n = batch.min(left);
        if n == 0 {
            m.budget_ran_out = true;
            with.stop.store(true, Ordering::SeqCst);
            continue;
        }
        let t0 = Instant::now();
        if let Err(e) = (0..n).try_for_each(|_| op()) {
            err = Some(e);
            with.stop.store(true, Ordering::SeqCst);
            continue;
        }
        let t1 = Instant::now();
        left -= n;
        if left == 0 {
            m.budget_ran_out = true;
            with.stop.store(true, Ordering::SeqCst);
        }
        m.batches.push((n, (t1 - t0).as_secs_f64()));
        m.spans.push((t0, t1));
        m.iterations += n;
    }
    if cancel.load(Ordering::SeqCst) {
        bail!(Interrupted);
    }
    if let Some(e) = err {
        return Err(e);
    }
    m.seconds = m.batches.iter().map(|b| b.1).sum();
    Ok(m)
}

/// This thread's warm-up in a shared window: its time per operation is
/// offered to the others (the slowest sets the batch); a failure tells
/// them to stop.
fn warm_up_shared(
    op: &mut dyn FnMut() -> Result<()>,
    m: &mut Measurement,
    w: Window,
    known: Option<Duration>,
    cancel: &AtomicBool,
    cap: Option<u64>,
    with: &Together,
) -> Result<()> {
    let warm = (|| -> Result<Duration> {
        if cap == Some(0) {
            bail!("the key has no signatures left to measure");
        }
        let warmup_cap = cap.map_or(u64::MAX, |c| c / 2);
        warm_up(
            op,
            m,
            Duration::from_secs_f64(w.warmup),
            warmup_cap,
            known,
            cancel,
        )
    })();
    match warm {
        Ok(d) => {
            with.per_op_ns.fetch_max(
                (d.as_nanos() as u64).max(1),
                std::sync::atomic::Ordering::SeqCst,
            );
            Ok(())
        }
        Err(e) => {
            with.stop.store(true, Ordering::SeqCst);
            Err(e)
        }
    }
}

/// Whether every thread runs one more round: once all have arrived, one of
/// them decides for all (nobody stopped, no Ctrl-C, and the window, which
/// starts with the first batch of every thread, not yet over; always at
/// least one batch each).
fn another_round(
    with: &Together,
    cancel: &AtomicBool,
    rounds: usize,
    once: bool,
    window: Duration,
) -> bool {
    if with.barrier.wait().is_leader() {
        let start = *with.start.get_or_init(Instant::now);
        let more = !with.stop.load(Ordering::SeqCst)
            && !cancel.load(Ordering::SeqCst)
            && (rounds == 0 || (!once && start.elapsed() < window));
        with.go.store(more, Ordering::SeqCst);
    }
    with.barrier.wait();
    with.go.load(Ordering::SeqCst)
}

/// Measures `op`. `known` is how long one operation took already (in the
/// gate): when that alone covers the warm-up, no extra warm-up runs.
pub fn measure_window(
    op: &mut dyn FnMut() -> Result<()>,
    w: Window,
    known: Option<Duration>,
    cancel: &AtomicBool,
) -> Result<Measurement> {
    measure_capped(op, w, known, cancel, None)
}

/// [`measure_window`], running `op` at most `cap` times in all (a stateful key's
/// signatures left): the warm-up takes at most half of them, and the window
/// stops early when none are left.
pub fn measure_capped(
    op: &mut dyn FnMut() -> Result<()>,
    w: Window,
    known: Option<Duration>,
    cancel: &AtomicBool,
    cap: Option<u64>,
) -> Result<Measurement> {
    if cap == Some(0) {
        bail!("the key has no signatures left to measure");
    }
    let mut left = cap.unwrap_or(u64::MAX);
    let warmup_cap = cap.map_or(u64::MAX, |c| c / 2);
    let mut m = Measurement::default();
    let warmup = Duration::from_secs_f64(w.warmup);
    let window = Duration::from_secs_f64(w.window);
    // Warm-up: repeat until the warm-up time has passed; it also estimates
    // the time per operation.
    let per_op = warm_up(op, &mut m, warmup, warmup_cap, known, cancel)?;
    left -= m.warmup_ops;
    if per_op >= window {
        // Slower than the window: one operation, as long as it needs.
        let t = Instant::now();
        op()?;
        let s = t.elapsed().as_secs_f64();
        m.iterations = 1;
        m.seconds = s;
        m.batches.push((1, s));
        m.once = true;
        return Ok(m);
    }
    let batch = ((w.window / BATCHES_PER_WINDOW) / per_op.as_secs_f64().max(1e-9))
        .floor()
        .max(1.0) as u64;
    let mut total = Duration::ZERO;
    while total < window {
        if cancel.load(Ordering::SeqCst) {
            bail!(Interrupted);
        }
        if left == 0 {
            m.budget_ran_out = true;
            break;
        }
        let n = batch.min(left);
        let t = Instant::now();
        for _ in 0..n {
            op()?;
        }
        let d = t.elapsed();
        total += d;
        left -= n;
        m.batches.push((n, d.as_secs_f64()));
        m.iterations += n;
    }
    m.seconds = total.as_secs_f64();
    Ok(m)
}

/// Runs `op` of an opened scheme once (keys, ciphertexts and signatures
/// stay in the scheme for the next operation).
pub fn run_op(s: &mut Scheme, op: Operation) -> Result<()> {
    match (s, op) {
        (Scheme::Kem(k), Operation::KeyGen) => k.keygen(),
        (Scheme::Kem(k), Operation::Encaps) => k.encaps(),
        (Scheme::Kem(k), Operation::Decaps) => k.decaps(),
        (Scheme::Sig(g), Operation::KeyGen) => g.keygen(),
        (Scheme::Sig(g), Operation::Sign) => g.sign(),
        (Scheme::Sig(g), Operation::Verify) => {
            ensure!(g.verify()?, "a valid signature was rejected");
            Ok(())
        }
        (_, op) => bail!("{op} does not belong to this kind of algorithm"),
    }
}

/// The gate's verdict and how long each first operation took.
pub struct GateOutcome {
    /// The checks made.
    pub report: GateReport,
    /// Duration of the gate's keygen, encaps/sign and decaps/verify.
    pub first: [Duration; 3],
}

fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Duration)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed()))
}

fn kem_gate(k: &mut dyn KemScheme) -> Result<GateOutcome> {
    let ((), t0) = timed(|| k.keygen())?;
    let ((), t1) = timed(|| k.encaps())?;
    let ((), t2) = timed(|| k.decaps())?;
    let (e, d) = k.secrets();
    ensure!(!e.is_empty(), "the shared secret is empty");
    ensure!(
        e == d,
        "decapsulation gave a different shared secret than encapsulation"
    );
    let good = e.to_vec();
    let ct = k.ciphertext_mut();
    ensure!(!ct.is_empty(), "the ciphertext is empty");
    let bit = ct.len() / 2;
    ct[bit] ^= 0x01;
    let flipped = match k.decaps() {
        Ok(()) => {
            ensure!(
                k.secrets().1 != good.as_slice(),
                "a flipped ciphertext bit still gave the same shared secret"
            );
            "a flipped ciphertext bit gives a different shared secret"
        }
        Err(_) => "a flipped ciphertext bit is rejected",
    };
    k.ciphertext_mut()[bit] ^= 0x01;
    k.decaps()?;
    ensure!(
        k.secrets().1 == good.as_slice(),
        "restored ciphertext no longer decapsulates"
    );
    Ok(GateOutcome {
        report: GateReport {
            checked_ops: 1,
            checks: vec![
                "encapsulation and decapsulation agree on the shared secret".into(),
                flipped.into(),
            ],
            coverage: None,
        },
        first: [t0, t1, t2],
    })
}

fn sig_gate(g: &mut dyn SigScheme) -> Result<GateOutcome> {
    let ((), t0) = timed(|| g.keygen())?;
    let fresh = g.signature_budget().transpose()?;
    let ((), t1) = timed(|| g.sign())?;
    let (ok, t2) = timed(|| g.verify())?;
    ensure!(ok, "a fresh signature does not verify");
    ensure!(
        g.signature_mut().len() <= g.max_signature_len(),
        "signature longer than the scheme's maximum"
    );
    let mi = g.message_mut().len() / 2;
    ensure!(!g.message_mut().is_empty(), "the message is empty");
    g.message_mut()[mi] ^= 0x01;
    ensure!(!g.verify()?, "a flipped message bit is accepted");
    g.message_mut()[mi] ^= 0x01;
    let si = g.signature_mut().len() / 2;
    g.signature_mut()[si] ^= 0x01;
    ensure!(!g.verify()?, "a flipped signature bit is accepted");
    g.signature_mut()[si] ^= 0x01;
    ensure!(g.verify()?, "the restored signature no longer verifies");
    let mut checks: Vec<String> = vec![
        "a fresh signature verifies".into(),
        "a flipped message bit is rejected".into(),
        "a flipped signature bit is rejected".into(),
    ];
    if let Some((left, total)) = fresh {
        let (after, _) = g
            .signature_budget()
            .transpose()?
            .expect("a stateful scheme stays stateful");
        ensure!(
            left == total && after + 1 == left,
            "a stateful key's budget did not go down by one signature: {left} of {total} left after key generation, {after} after one signature"
        );
        checks.push(format!(
            "a new key has its whole budget ({total} signatures) and one signature spends one ({after} left)"
        ));
    }
    Ok(GateOutcome {
        report: GateReport {
            checked_ops: 1,
            checks,
            coverage: None,
        },
        first: [t0, t1, t2],
    })
}

/// A stateful signature scheme's budget: (signatures left, in all); `None`
/// for KEMs and stateless signatures.
pub fn budget(s: &Scheme) -> Result<Option<(u64, u64)>> {
    match s {
        Scheme::Sig(g) => g.signature_budget().transpose(),
        Scheme::Kem(_) => Ok(None),
    }
}

/// The correctness gate: KEM secrets match and a flipped ciphertext bit
/// changes the secret (or is rejected); signatures verify and flipped
/// message and signature bits are rejected.
pub fn gate(s: &mut Scheme) -> Result<GateOutcome> {
    match s {
        Scheme::Kem(k) => kem_gate(k.as_mut()),
        Scheme::Sig(g) => sig_gate(g.as_mut()),
    }
}

/// After the timed operations: the last decapsulation still matches its
/// encapsulation, or the last signature still verifies.
pub fn check_after(s: &mut Scheme) -> Result<()> {
    match s {
        Scheme::Kem(k) => {
            let (e, d) = k.secrets();
            ensure!(
                e == d,
                "after timing, decapsulation disagrees with encapsulation"
            );
        }
        Scheme::Sig(g) => ensure!(
            g.verify()?,
            "after timing, the signature no longer verifies"
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads, the second warming up 1 s longer than the first (long
    /// beside what a busy machine adds to a sleep, so the checks below
    /// hold under load).
    fn two_threads_one_slow_to_start(w: Window) -> Vec<Result<Measurement>> {
        let with = Together::new(2);
        let cancel = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2)
                .map(|t| {
                    let (with, cancel) = (&with, &cancel);
                    sc.spawn(move || {
                        let mut first = true;
                        let mut op = || {
                            if first && t == 1 {
                                std::thread::sleep(Duration::from_millis(1000));
                            }
                            first = false;
                            std::thread::sleep(Duration::from_micros(500));
                            Ok(())
                        };
                        measure_together(&mut op, w, None, cancel, None, with)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn threads_sharing_a_window_start_and_end_together() {
        let w = Window {
            warmup: 0.0,
            window: 0.3,
        };
        let ms: Vec<Measurement> = two_threads_one_slow_to_start(w)
            .into_iter()
            .map(|m| m.unwrap())
            .collect();
        // Each on its own, the first thread's window would be over before
        // the second's began; shared, every round starts together.
        let rounds = ms[0].spans.len();
        assert!(rounds >= 1 && ms[1].spans.len() == rounds, "{ms:?}");
        for i in 0..rounds {
            let (a, b) = (ms[0].spans[i].0, ms[1].spans[i].0);
            let gap = if a > b { a - b } else { b - a };
            assert!(gap < Duration::from_millis(500), "round {i}: {gap:?}");
        }
        let start = ms.iter().map(|m| m.spans[0].0).min().unwrap();
        let end = ms.iter().map(|m| m.spans[rounds - 1].1).max().unwrap();
        // The 1 s warm-up of one thread is not inside the 0.3 s window
        // (with it the span would pass 1.3 s).
        assert!(
            end - start < Duration::from_millis(900),
            "{:?}",
            end - start
        );
        assert_eq!(
            ms[0].batches[0].0, ms[1].batches[0].0,
            "one batch size for all threads"
        );
    }

    #[test]
    fn a_failing_thread_in_a_shared_window_stops_it_without_a_hang() {
        let with = Together::new(2);
        let cancel = AtomicBool::new(false);
        let w = Window {
            warmup: 0.0,
            window: 5.0,
        };
        let t = Instant::now();
        let out: Vec<Result<Measurement>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2)
                .map(|i| {
                    let (with, cancel) = (&with, &cancel);
                    sc.spawn(move || {
                        let mut calls = 0;
                        let mut op = || {
                            calls += 1;
                            std::thread::sleep(Duration::from_micros(200));
                            if i == 1 && calls > 5 {
                                bail!("broken");
                            }
                            Ok(())
                        };
                        measure_together(&mut op, w, None, cancel, None, with)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(out[1].is_err());
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    }

    #[test]
    fn a_fast_operation_fills_the_window_in_batches() {
        let mut n = 0u64;
        let m = measure_window(
            &mut || {
                n += 1;
                std::hint::black_box(n);
                Ok(())
            },
            // Long enough that a preemption of tens of milliseconds on a
            // busy machine leaves room for a second batch.
            Window {
                warmup: 0.01,
                window: 0.5,
            },
            None,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(m.seconds >= 0.5 && !m.once);
        assert!(m.batches.len() >= 2, "{:?}", m.batches.len());
        assert_eq!(m.batches.iter().map(|b| b.0).sum::<u64>(), m.iterations);
        assert!(m.warmup_ops > 0);
    }

    #[test]
    fn a_slow_operation_runs_once() {
        let m = measure_window(
            &mut || {
                std::thread::sleep(Duration::from_millis(30));
                Ok(())
            },
            Window {
                warmup: 0.0,
                window: 0.02,
            },
            Some(Duration::from_millis(30)),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(m.once);
        assert_eq!(m.iterations, 1);
        assert_eq!(m.warmup_ops, 0);
    }

    #[test]
    fn cancel_stops_a_measurement() {
        let r = measure_window(
            &mut || Ok(()),
            Window {
                warmup: 0.0,
                window: 1.0,
            },
            None,
            &AtomicBool::new(true),
        );
        assert!(r.unwrap_err().downcast_ref::<Interrupted>().is_some());
    }

    /// A KEM that ignores its ciphertext: the gate must catch it.
    struct DeafKem(Vec<u8>);
    impl KemScheme for DeafKem {
        fn keygen(&mut self) -> Result<()> {
            Ok(())
        }
        fn encaps(&mut self) -> Result<()> {
            Ok(())
        }
        fn decaps(&mut self) -> Result<()> {
            Ok(())
        }
        fn secrets(&self) -> (&[u8], &[u8]) {
            (&[7; 32], &[7; 32])
        }
        fn ciphertext_mut(&mut self) -> &mut [u8] {
            &mut self.0
        }
        fn key_bytes(&self) -> Result<crate::sweep::scheme::KeyBytes> {
            Ok(Default::default())
        }
    }

    /// A signature scheme that accepts anything.
    struct Gullible(Vec<u8>, Vec<u8>);
    impl SigScheme for Gullible {
        fn keygen(&mut self) -> Result<()> {
            Ok(())
        }
        fn sign(&mut self) -> Result<()> {
            self.1 = vec![1; 8];
            Ok(())
        }
        fn verify(&mut self) -> Result<bool> {
            Ok(true)
        }
        fn message_mut(&mut self) -> &mut Vec<u8> {
            &mut self.0
        }
        fn signature_mut(&mut self) -> &mut Vec<u8> {
            &mut self.1
        }
        fn max_signature_len(&self) -> usize {
            8
        }
        fn key_bytes(&self) -> Result<crate::sweep::scheme::KeyBytes> {
            Ok(Default::default())
        }
    }

    #[test]
    fn the_gate_catches_broken_schemes() {
        let e = gate(&mut Scheme::Kem(Box::new(DeafKem(vec![0; 16]))))
            .err()
            .unwrap();
        assert!(e.to_string().contains("flipped ciphertext bit"), "{e}");
        let e = gate(&mut Scheme::Sig(Box::new(Gullible(vec![0; 16], vec![]))))
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("flipped message bit is accepted"),
            "{e}"
        );
    }
}
