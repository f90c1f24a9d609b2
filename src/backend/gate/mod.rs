//! The correctness gate every backend's batches pass through, so that no
//! implementation (a plugin, liboqs, cuPQC, our own kernels) can earn a
//! figure by skipping work, caching it or writing where it should not, and
//! a new backend gets every check by handing its buffers here.
//!
//! Around every run, untimed:
//! - before it ([`Runs::arm`]): the outputs are filled with a poison byte
//!   that changes from run to run (on a GPU an asynchronous memset queued
//!   before the window's first event), and inputs are made afresh where the
//!   operation allows it (the backend's part, with [`inputs`]);
//! - after it ([`check_run`]): guard bytes around every buffer intact,
//!   inputs unchanged, every item's outputs written (no poison left),
//!   every verdict of a verification the one its input calls for, and a
//!   fresh seeded sample of items (every item with `--gate full`) equal to
//!   the reference for the same inputs, or, where the implementation draws
//!   its own randomness, passing liboqs round trips.
//!
//! The checks are pure functions over host bytes ([`slots::Slots`]): a GPU
//! backend copies back what they read. They are tested here on outputs of
//! the host build and corrupted copies of them.

pub mod inputs;
pub mod reference;
pub mod slots;

use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::{GateCoverage, GateReport};
use anyhow::{bail, Context};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use slots::Slots;

/// Items the gates before and after the timed runs check against the
/// reference (at least; all of a smaller batch).
pub const MIN_SAMPLE: usize = 64;

/// Items each timed run between those gates checks against the reference:
/// the first, the last and the rest drawn afresh (all of a batch of
/// [`MIN_SAMPLE`] or fewer, which costs little to judge whole).
/// An implementation that skips or fakes a share `f` of the items escapes
/// one such run with odds of about `(1 - f)^6` and a record of 20 runs
/// with `(1 - f)^120` (under 1 in 400 at f = 5%), beside the 64-item gates
/// and the every-item written check; `--gate full` judges every item.
pub const RUN_SAMPLE: usize = 8;

/// Items of a run's special ones (a decapsulation's tampered
/// ciphertexts) that a timed run between the gates judges, drawn afresh;
/// the gates before and after judge every one.
pub const RUN_SPECIAL: usize = 2;

pub use slots::{Guard, GUARD_BYTES};

/// Which check of a batch's runs is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Checkpoint {
    /// After the warm-up, before anything is timed: the gate that decides
    /// whether the batch is timed at all.
    BeforeTiming,
    /// After one timed run.
    AfterRun,
    /// After the record's last run (its end-to-end and energy windows).
    Last,
}

impl Checkpoint {
    /// Whether this check also asks liboqs about the sample (the ones
    /// around the timed runs; the per-run checks use the reference only).
    pub fn cross_checks(self) -> bool {
        self != Checkpoint::AfterRun
    }
}

/// How much of each run the gate checks against the reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    /// 64 items before and after the timed runs and 8 after each timed run,
    /// the first, the last and the rest drawn afresh (every item of a batch
    /// of 64 or fewer); every item's outputs still checked written

    #[default]
    Sample,
    /// Every item of every run
    Full,
}

impl GateMode {
    /// The name on the command line and in run files.
    pub fn name(self) -> &'static str {
        match self {
            GateMode::Sample => "sample",
            GateMode::Full => "full",
        }
    }
}

/// What the gate of one batch is asked to do: the mode and the seed its
/// samples are drawn from (kept in every record, so a run's sample can be
/// drawn again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSettings {
    /// Sample or every item.
    pub mode: GateMode,
    /// The samples' seed.
    pub seed: u64,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings::new(GateMode::Sample)
    }
}

impl GateSettings {
    /// `mode` with a seed from the operating system, or, where
    /// `PQCPROF_INPUT_SEED` makes a run's inputs again, one derived from it:
    /// the same samples and poison bytes with the same inputs.
    pub fn new(mode: GateMode) -> Self {
        let fixed = std::env::var(inputs::INPUT_SEED_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok());
        GateSettings {
            mode,
            seed: fixed.map_or_else(|| rand::rng().random(), |s| s ^ 0x6761_7465_7365_6564),
        }
    }
}

/// The random source of one purpose in one run of one part of a batch,
/// derived from the gate's seed: the same seed gives the same sample and
/// poison again.
fn derived(seed: u64, part: usize, run: u64, purpose: u64) -> rand_chacha::ChaCha20Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&(part as u64).to_le_bytes());
    key[16..24].copy_from_slice(&run.to_le_bytes());
    key[24..].copy_from_slice(&purpose.to_le_bytes());
    rand_chacha::ChaCha20Rng::from_seed(key)
}

/// The runs of one part of a batch (a thread's share, or the whole batch):
/// which run is next, its poison byte and its sample.
#[derive(Debug, Clone)]
pub struct Runs {
    settings: GateSettings,
    /// Items in this part.
    pub n: usize,
    part: usize,
    armed: u64,
    poison: u8,
}

impl Runs {
    /// The runs of part `part` (of `n` items) of a batch gated by `settings`.
    pub fn new(settings: GateSettings, n: usize, part: usize) -> Self {
        Runs {
            settings,
            n,
            part,
            armed: 0,
            poison: 0,
        }
    }

    /// The next run: its number (from 1) and poison byte. The byte is never
    /// 0x00, 0x01 or 0xFF, so a verdict (0 or 1) and the zero padding of
    /// encodings never look like it.
    pub fn arm(&mut self) -> u8 {
        self.armed += 1;
        self.poison = derived(self.settings.seed, self.part, self.armed, 1).random_range(2..=0xFE);
        self.poison
    }

    /// The run armed last (0 before the first).
    pub fn run(&self) -> u64 {
        self.armed
    }

    /// The poison byte of the run armed last.
    pub fn poison(&self) -> u8 {
        self.poison
    }

    /// The gate's settings.
    pub fn settings(&self) -> GateSettings {
        self.settings
    }

    /// The items this run checks against the reference, in order: every
    /// item with `--gate full` or a batch of [`MIN_SAMPLE`] or fewer;
    /// otherwise the first, the last and a fresh seeded draw, [`MIN_SAMPLE`]
    /// in all at the gates before and after the timed runs (`at` is not
    /// [`Checkpoint::AfterRun`]) with every item of `always` (items whose
    /// answer the run made special: a tampered input), and [`RUN_SAMPLE`]
    /// with [`RUN_SPECIAL`] of `always` after each timed run.
    pub fn sample(&self, always: &[usize], at: Checkpoint) -> Vec<usize> {
        let n = self.n;
        let between = at == Checkpoint::AfterRun;
        if self.settings.mode == GateMode::Full || n <= MIN_SAMPLE {
            return (0..n).collect();
        }
        let size = if between { RUN_SAMPLE } else { MIN_SAMPLE };
        let mut rng = derived(self.settings.seed, self.part, self.armed, 2);
        // The ends, and size - 2 drawn between them.
        let mut v: Vec<usize> = rand::seq::index::sample(&mut rng, n - 2, size - 2)
            .into_iter()
            .map(|i| i + 1)
            .collect();
        v.extend([0, n - 1]);
        let special: Vec<usize> = always.iter().copied().filter(|&i| i < n).collect();
        if between && special.len() > RUN_SPECIAL {
            v.extend(
                rand::seq::index::sample(&mut rng, special.len(), RUN_SPECIAL)
                    .into_iter()
                    .map(|k| special[k]),
            );
        } else {
            v.extend(special);
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One output buffer of a run, every item of it.
pub struct Output<'a> {
    /// Its name in the ABI and in messages (`ek`, `K`, `signature`...).
    pub name: &'static str,
    /// Its items.
    pub slots: Slots<'a>,
}

/// One input buffer of a run: as it was made before the call and as the
/// call left it, item for item (every item, or the sample's where the
/// backend copies only those back: a GPU between the timed runs).
pub struct Input<'a> {
    /// Its name.
    pub name: &'static str,
    /// Before the call (the copy the reference is computed from).
    pub before: Slots<'a>,
    /// After it.
    pub after: Slots<'a>,
}

/// Everything one run's check reads, as the backend hands it over.
pub struct RunIo<'a> {
    /// The parameter set.
    pub alg: Algorithm,
    /// The operation.
    pub op: Operation,
    /// The run's number, its poison byte and its part.
    pub runs: &'a Runs,
    /// The guard zones around every buffer (empty where pqcprof allocated
    /// none: a GPU's own allocations).
    pub guards: Vec<Guard<'a>>,
    /// Every input buffer, before and after the call.
    pub inputs: Vec<Input<'a>>,
    /// Every output buffer (a verification's verdicts included).
    pub outputs: Vec<Output<'a>>,
    /// A verification's expected verdicts, one per item.
    pub valid: Option<&'a [bool]>,
    /// The sampled items, gathered, and how to judge them.
    pub sampled: reference::Sampled<'a>,
    /// The items `sampled` holds, in its order.
    pub items: &'a [usize],
    /// Cross-check the sample with liboqs as well (the gates before and
    /// after the timed runs).
    pub cross_check: bool,
    /// How the inputs were made (said in the record).
    pub inputs_made: &'a str,
}

/// Checks one run: guards, inputs, every output written, verdicts, the
/// sample against the reference. The first failure names the item, the
/// buffer and what was wrong; nothing after it is checked.
pub fn check_run(io: &RunIo<'_>) -> anyhow::Result<GateReport> {
    let run = io.runs.run();
    let mut checks = vec![];
    for g in &io.guards {
        slots::guard_intact(&g.name, g.expected, g.found)?;
    }
    if !io.guards.is_empty() {
        checks.push(format!(
            "{GUARD_BYTES} guard bytes before and after every buffer intact after every run"
        ));
    }
    for i in &io.inputs {
        slots::unchanged(i.name, i.before, i.after)?;
    }
    checks.push("inputs unchanged by every call".into());
    for o in &io.outputs {
        if o.name == "ok" {
            continue;
        }
        slots::written(o.name, o.slots, io.runs.poison(), run)?;
    }
    checks.push(
        "every item's outputs written in every run (a poison byte, changed each run, filled them before)"
            .into(),
    );
    if let Some(valid) = io.valid {
        let ok = io
            .outputs
            .iter()
            .find(|o| o.name == "ok")
            .context("a verification's verdicts")?;
        slots::verdicts(ok.slots, valid, io.runs.poison(), run)?;
        checks.push(
            "every verdict as its input calls for: valid signatures accepted, invalid ones (at positions drawn each run) rejected"
                .into(),
        );
    }
    checks.extend(reference::check(
        io.alg,
        io.op,
        io.items,
        &io.sampled,
        io.cross_check,
    )?);
    let written = io
        .outputs
        .first()
        .map_or(0, |o| o.slots.items().unwrap_or(1));
    // A verification's every verdict is judged; otherwise the sample.
    let judged = io.valid.map_or(io.items.len(), <[bool]>::len);
    Ok(GateReport {
        checked_ops: judged,
        checks,
        coverage: Some(Box::new(GateCoverage {
            mode: io.runs.settings().mode.name().into(),
            seed: io.runs.settings().seed,
            runs: 1,
            written_per_run: written,
            sampled: judged,
            guard_bytes: if io.guards.is_empty() { 0 } else { GUARD_BYTES },
            inputs: io.inputs_made.to_string(),
            seconds: 0.0,
        })),
    })
}

/// The reports of a batch's parts (threads) checked in one run, as one:
/// their items added, each line once.
pub fn parts(reports: Vec<GateReport>) -> anyhow::Result<GateReport> {
    let mut it = reports.into_iter();
    let Some(mut total) = it.next() else {
        bail!("a batch of no parts");
    };
    for r in it {
        total.checked_ops += r.checked_ops;
        if let (Some(a), Some(b)) = (total.coverage.as_mut(), r.coverage.as_ref()) {
            a.written_per_run += b.written_per_run;
            a.sampled += b.sampled;
        }
        for c in r.checks {
            if !total.checks.contains(&c) {
                total.checks.push(c);
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(mode: GateMode, n: usize) -> Runs {
        Runs::new(GateSettings { mode, seed: 7 }, n, 0)
    }

    #[test]
    fn the_poison_changes_every_run_and_is_never_a_verdict_or_padding() {
        let mut r = runs(GateMode::Sample, 10);
        let bytes: Vec<u8> = (0..200).map(|_| r.arm()).collect();
        assert!(bytes.iter().all(|&b| (2..=0xFE).contains(&b)));
        assert!(bytes.windows(2).any(|w| w[0] != w[1]));
        let distinct: std::collections::BTreeSet<u8> = bytes.iter().copied().collect();
        assert!(distinct.len() > 100, "{}", distinct.len());
        assert_eq!(r.run(), 200);
        // The same seed draws the same bytes again.
        let mut again = runs(GateMode::Sample, 10);
        assert_eq!((0..200).map(|_| again.arm()).collect::<Vec<_>>(), bytes);
    }

    #[test]
    fn each_run_samples_afresh_within_the_batch_with_its_ends_and_the_special_items() {
        use Checkpoint::{AfterRun, BeforeTiming, Last};
        let mut r = runs(GateMode::Sample, 100_000);
        r.arm();
        let a = r.sample(&[77_777], BeforeTiming);
        r.arm();
        let b = r.sample(&[], Last);
        assert_eq!(b.len(), MIN_SAMPLE);
        assert!(a.len() == MIN_SAMPLE || a.len() == MIN_SAMPLE + 1);
        assert!(a.contains(&0) && a.contains(&99_999) && a.contains(&77_777));
        assert!(a.windows(2).all(|w| w[0] < w[1]) && *a.last().unwrap() < 100_000);
        assert_ne!(a, b, "a new run, a new sample");
        // Between the gates: fewer items, still the ends, still fresh, and
        // a few of the special ones, not the same few every run.
        let special: Vec<usize> = (0..100).map(|i| 1000 * i + 17).collect();
        let mut seen = std::collections::BTreeSet::new();
        let mut last = vec![];
        for _ in 0..20 {
            r.arm();
            let c = r.sample(&special, AfterRun);
            assert!(c.contains(&0) && c.contains(&99_999), "{c:?}");
            assert!(
                c.len() <= RUN_SAMPLE + RUN_SPECIAL && c.len() >= RUN_SAMPLE,
                "{c:?}"
            );
            let judged: Vec<usize> = c.iter().copied().filter(|i| special.contains(i)).collect();
            assert!(judged.len() >= RUN_SPECIAL, "{c:?}");
            seen.extend(judged);
            assert_ne!(c, last, "a new run, a new sample");
            last = c;
        }
        assert!(
            seen.len() > 2 * RUN_SPECIAL,
            "the special items judged vary: {seen:?}"
        );
        // Every special item at the gates around the timed runs.
        let d = r.sample(&special, Last);
        assert!(special.iter().all(|i| d.contains(i)));
        // A small batch, or --gate full: every item.
        assert_eq!(
            runs(GateMode::Sample, 5).sample(&[], BeforeTiming),
            vec![0, 1, 2, 3, 4]
        );
        assert_eq!(runs(GateMode::Sample, 64).sample(&[], AfterRun).len(), 64);
        assert_eq!(
            runs(GateMode::Sample, 65).sample(&[], AfterRun).len(),
            RUN_SAMPLE
        );
        let mut full = runs(GateMode::Full, 1000);
        full.arm();
        assert_eq!(full.sample(&[], AfterRun).len(), 1000);
    }
}
