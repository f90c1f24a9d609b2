//! One host plugin batch: its inputs made before timing by the reference
//! (pqcprof's host build of FIPS 203/204; [`crate::backend::gate::inputs`]),
//! every item its own (its own key pair, message, ciphertext, signature),
//! each buffer between guard zones; the plugin called over it on one thread
//! or, when it is thread-safe, on several (each a disjoint part); and the
//! gate ([`crate::backend::gate`]) around every run.
//!
//! Before each run ([`Part::arm`]): seeds, m, rnd and messages are drawn
//! afresh, a decapsulation's ciphertexts are encapsulated afresh (some
//! tampered with, at positions drawn for the run), a verification's
//! signatures are the ones made at the start with a bit flipped in some,
//! again at positions drawn for the run; a copy of every input is kept; the
//! outputs are filled with the run's poison byte. After it
//! ([`Part::check`]): the gate reads the guards, the inputs against the
//! copy, every output, every verdict and a sample against the reference.

use super::ffi::{Buffers, HostBuffers, Place};
use super::Plugin;
use crate::backend::gate::inputs::{self, random};
use crate::backend::gate::reference::Sampled;
use crate::backend::gate::slots::{Guarded, Slots};
use crate::backend::gate::{self, Runs};
use crate::backend::parallel::{chunk_sizes, run_chunks, Chunk};
use crate::backend::{BatchConfig, Checkpoint, Prepared};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use anyhow::{ensure, Context};
use rand::SeedableRng;
use std::sync::Arc;
use std::time::Duration;

/// How a part's buffers reach the plugin: directly (a host plugin), or
/// copied to device memory and back around the call (a device plugin's
/// untimed calls).
pub trait Caller: Send + Sync {
    /// Calls `op` of `alg` over `n` items with `bufs`, its outputs written
    /// into `bufs`' outputs by the time it returns.
    fn call(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        bufs: HostBuffers<'_>,
    ) -> anyhow::Result<()>;
    /// The plugin called.
    fn plugin(&self) -> &Plugin;
}

/// A host plugin, called on the part's own buffers.
pub struct HostCaller(pub Arc<Plugin>);

impl Caller for HostCaller {
    fn call(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        bufs: HostBuffers<'_>,
    ) -> anyhow::Result<()> {
        self.0.call(alg, op, n, bufs, Place::Host)
    }
    fn plugin(&self) -> &Plugin {
        &self.0
    }
}

/// One buffer of a part: its ABI name, bytes per item, the bytes between
/// their guards, and (an input) the copy taken before the call.
pub(super) struct Buf {
    pub(super) name: &'static str,
    item: usize,
    pub(super) g: Guarded,
    before: Vec<u8>,
}

impl Buf {
    fn new(name: &'static str, item: usize, bytes: &[u8], seed: u64) -> Buf {
        Buf {
            name,
            item,
            g: Guarded::from_slice(bytes, seed),
            before: vec![],
        }
    }

    fn slots(&self) -> Slots<'_> {
        Slots::packed(self.g.body(), self.item)
    }
}

/// What the inputs were made of, said in the record.
const FRESH: &str = "every item its own, made by the reference before timing; fresh for every run";

/// The same, for an operation that draws its own randomness (ABI 1.1).
const OWN: &str = "every item its own, made by the reference before timing; fresh for every run; the plugin draws its own randomness for this operation (ABI 1.1): the seeds, m or rnd it is handed are ignored, and its outputs are judged by round trip";

/// The randomness inputs of the ABI, which an operation that draws its own
/// randomness ignores.
const RANDOMNESS: [&str; 4] = ["seeds", "xi", "m", "rnd"];

/// One thread's part of a batch: its inputs, outputs and gate.
pub(super) struct Part {
    caller: Arc<dyn Caller>,
    pub(super) alg: Algorithm,
    pub(super) op: Operation,
    pub(super) n: usize,
    msg_item: usize,
    /// The inputs in the ABI's order (the context, shared, last).
    pub(super) ins: Vec<Buf>,
    /// The outputs in the ABI's order.
    pub(super) outs: Vec<Buf>,
    /// The other half of each item's key pair (encaps: dk; sign: pk), for
    /// the cross-check with liboqs.
    pair: Vec<u8>,
    /// Verify: the valid signatures made at the start.
    valid_sigs: Vec<u8>,
    /// Verify: which items of this run hold a valid signature.
    valid: Vec<bool>,
    /// Decaps: the items of this run whose ciphertext was tampered with.
    tampered: Vec<usize>,
    rng: rand_chacha::ChaCha20Rng,
    pub(super) runs: Runs,
    /// Key generation that draws its own randomness: a digest of every
    /// judged item's public key with the run it came from, so a key given
    /// twice (in one run, or again in a later one: keys made once and
    /// copied) fails the gate, which round trips alone would not catch.
    keys_seen: std::sync::Mutex<Vec<(u64, u64)>>,
}

impl Part {
    pub(super) fn new(
        caller: Arc<dyn Caller>,
        alg: Algorithm,
        op: Operation,
        n: usize,
        cfg: &BatchConfig,
        part: usize,
    ) -> anyhow::Result<Part> {
        let mut rng = rand_chacha::ChaCha20Rng::from_os_rng();
        let s = alg.sizes();
        let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let lsig = s.signature_bytes.unwrap_or(0);
        let mi = cfg.message_size;
        let seed = cfg.gate.seed ^ ((part as u64) << 32);
        let buf = |name, item, bytes: &[u8], k: u64| Buf::new(name, item, bytes, seed ^ k);
        let kem = alg.mlkem_params().is_some();
        let mut pair = vec![];
        let mut valid_sigs = vec![];
        // The inputs: every item its own key pair (made once), the rest
        // drawn in `arm` for every run.
        let ins = match (op, kem) {
            (Operation::KeyGen, true) => vec![buf("seeds", 64, &vec![0; 64 * n], 1)],
            (Operation::KeyGen, false) => vec![buf("xi", 32, &vec![0; 32 * n], 1)],
            (Operation::Encaps, _) => {
                let (ek, dk) = inputs::key_pairs(alg, n, &mut rng)?;
                pair = dk;
                vec![buf("ek", lpk, &ek, 1), buf("m", 32, &vec![0; 32 * n], 2)]
            }
            (Operation::Decaps, _) => {
                let (ek, dk) = inputs::key_pairs(alg, n, &mut rng)?;
                pair = ek;
                vec![buf("dk", lsk, &dk, 1), buf("c", lct, &vec![0; lct * n], 2)]
            }
            (Operation::Sign, _) => {
                let (pk, sk) = inputs::key_pairs(alg, n, &mut rng)?;
                pair = pk;
                vec![
                    buf("sk", lsk, &sk, 1),
                    buf("msg", mi, &vec![0; mi * n], 2),
                    buf("rnd", 32, &vec![0; 32 * n], 3),
                    buf("ctx", cfg.context.len(), &cfg.context, 4),
                ]
            }
            (Operation::Verify, _) => {
                let (pk, sk) = inputs::key_pairs(alg, n, &mut rng)?;
                let msg = random(&mut rng, mi * n);
                valid_sigs = inputs::signatures(
                    alg,
                    Slots::packed(&sk, lsk),
                    Slots::packed(&msg, mi),
                    &cfg.context,
                    n,
                    lsig,
                    &mut rng,
                )?;
                vec![
                    buf("pk", lpk, &pk, 1),
                    buf("msg", mi, &msg, 2),
                    buf("signature", lsig, &valid_sigs, 3),
                    buf("ctx", cfg.context.len(), &cfg.context, 4),
                ]
            }
        };
        let outs = match (op, kem) {
            (Operation::KeyGen, true) => vec![("ek", lpk), ("dk", lsk)],
            (Operation::KeyGen, false) => vec![("pk", lpk), ("sk", lsk)],
            (Operation::Encaps, _) => vec![("c", lct), ("K", 32)],
            (Operation::Decaps, _) => vec![("K", 32)],
            (Operation::Sign, _) => vec![("signature", lsig)],
            (Operation::Verify, _) => vec![("ok", 1)],
        };
        let outs = outs
            .into_iter()
            .enumerate()
            .map(|(k, (name, item))| buf(name, item, &vec![0; item * n], 10 + k as u64))
            .collect();
        Ok(Part {
            caller,
            alg,
            op,
            n,
            msg_item: mi,
            ins,
            outs,
            pair,
            valid: vec![true; n],
            valid_sigs,
            tampered: vec![],
            rng,
            runs: Runs::new(cfg.gate, n, part),
            keys_seen: std::sync::Mutex::new(vec![]),
        })
    }

    /// The next run made ready, untimed: fresh inputs, their copy, the
    /// outputs poisoned.
    pub(super) fn arm(&mut self) -> anyhow::Result<()> {
        let (alg, n) = (self.alg, self.n);
        let s = alg.sizes();
        let rng = &mut self.rng;
        match self.op {
            Operation::KeyGen | Operation::Encaps | Operation::Sign => {
                // Seeds, m, messages and rnd: every byte drawn again.
                for b in self.ins.iter_mut().filter(|b| b.name != "ctx") {
                    if matches!(b.name, "seeds" | "xi" | "m" | "msg" | "rnd") {
                        let fresh = random(rng, b.g.body().len());
                        b.g.body_mut().copy_from_slice(&fresh);
                    }
                }
            }
            Operation::Decaps => {
                let lct = s.ciphertext_bytes.unwrap_or(0);
                let (c, _) = inputs::encapsulations(
                    alg,
                    Slots::packed(&self.pair, s.public_key_bytes),
                    n,
                    rng,
                )?;
                let mut c = c;
                self.tampered = inputs::invalid_positions(n, rng);
                for &i in &self.tampered {
                    inputs::flip(&mut c, i, lct, lct, rng);
                }
                self.ins[1].g.body_mut().copy_from_slice(&c);
            }
            Operation::Verify => {
                let lsig = s.signature_bytes.unwrap_or(0);
                let mut sig = self.valid_sigs.clone();
                let bad = inputs::invalid_positions(n, rng);
                self.valid = vec![true; n];
                for &i in &bad {
                    inputs::flip(&mut sig, i, lsig, lsig, rng);
                    self.valid[i] = false;
                }
                self.ins[2].g.body_mut().copy_from_slice(&sig);
            }
        }
        for b in &mut self.ins {
            b.before = b.g.body().to_vec();
        }
        let poison = self.runs.arm();
        for b in &mut self.outs {
            b.g.body_mut().fill(poison);
        }
        Ok(())
    }

    /// Calls the plugin over the part with its own buffers.
    pub(super) fn buffers(&mut self) -> HostBuffers<'_> {
        let mi = self.msg_item;
        let ins: Vec<&[u8]> = self.ins.iter().map(|b| b.g.body()).collect();
        let mut outs = self.outs.iter_mut().map(|b| b.g.body_mut());
        let mut out = || outs.next().expect("an output of this operation");
        let kem = self.alg.mlkem_params().is_some();
        match (self.op, kem) {
            (Operation::KeyGen, true) => Buffers::KemKeygen {
                seeds: ins[0],
                ek: out(),
                dk: out(),
            },
            (Operation::KeyGen, false) => Buffers::DsaKeygen {
                xi: ins[0],
                pk: out(),
                sk: out(),
            },
            (Operation::Encaps, _) => Buffers::KemEncaps {
                ek: ins[0],
                m: ins[1],
                c: out(),
                k: out(),
            },
            (Operation::Decaps, _) => Buffers::KemDecaps {
                dk: ins[0],
                c: ins[1],
                k: out(),
            },
            (Operation::Sign, _) => Buffers::DsaSign {
                sk: ins[0],
                msg: ins[1],
                msg_item: mi,
                rnd: ins[2],
                ctx: ins[3],
                sig: out(),
            },
            (Operation::Verify, _) => Buffers::DsaVerify {
                pk: ins[0],
                msg: ins[1],
                msg_item: mi,
                sig: ins[2],
                ctx: ins[3],
                ok: out(),
            },
        }
    }

    /// Whether the plugin draws this operation's randomness itself (ABI
    /// 1.1), ignoring the seeds, m or rnd it is handed.
    fn own_randomness(&self) -> bool {
        self.caller.plugin().info.draws_own(self.alg, self.op)
    }

    /// How the inputs were made, said in the record.
    fn inputs_made(&self) -> &'static str {
        match self.op {
            Operation::Verify => "every item its own key pair, message and signature, made by the reference before timing; a bit flipped in about one signature in 16, at positions drawn for every run",
            Operation::Decaps => "every item its own key pair, made by the reference before timing; fresh ciphertexts for every run (liboqs encapsulates to each key), about one in 16 tampered with at positions drawn for the run",
            _ if self.own_randomness() => OWN,
            _ => FRESH,
        }
    }

    /// The gate over this part's last run.
    pub(super) fn check(&self, at: Checkpoint) -> anyhow::Result<GateReport> {
        ensure!(
            self.runs.run() > 0,
            "the gate checks runs it prepared, and no run was prepared (arm) before this one"
        );
        let items = self.runs.sample(&self.tampered, at);
        let gathered: Vec<(&str, Vec<u8>, usize)> = self
            .ins
            .iter()
            .filter(|b| b.name != "ctx")
            .map(|b| (b.name, gate_pick(&b.before, &items, b.item), b.item))
            .chain(
                self.outs
                    .iter()
                    .map(|b| (b.name, gate_pick(b.g.body(), &items, b.item), b.item)),
            )
            .collect();
        // An operation that draws its own randomness (ABI 1.1) ignored the
        // seeds, m or rnd it was handed: without them the sample is judged
        // by round trip.
        let own = self.own_randomness();
        let get = |name: &str| -> Option<Slots<'_>> {
            if own && RANDOMNESS.contains(&name) {
                return None;
            }
            gathered
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, bytes, item)| Slots::packed(bytes, *item))
        };
        if own && self.op == Operation::KeyGen {
            self.keys_are_fresh(&gathered, &items)?;
        }
        let pair_len = self.pair.len().checked_div(self.n).unwrap_or(0);
        let pair = gate_pick(&self.pair, &items, pair_len);
        let ctx = &self
            .ins
            .iter()
            .find(|b| b.name == "ctx")
            .map(|b| b.before.clone())
            .unwrap_or_default();
        let sampled = Sampled::from_buffers(
            self.alg,
            self.op,
            &get,
            (!pair.is_empty()).then(|| Slots::packed(&pair, pair_len)),
            ctx,
        )?;
        let io = gate::RunIo {
            alg: self.alg,
            op: self.op,
            runs: &self.runs,
            guards: self
                .ins
                .iter()
                .chain(&self.outs)
                .flat_map(|b| b.g.guards(b.name))
                .collect(),
            inputs: self
                .ins
                .iter()
                .map(|b| gate::Input {
                    name: b.name,
                    before: Slots::packed(&b.before, b.item.max(1)),
                    after: Slots::packed(b.g.body(), b.item.max(1)),
                })
                .collect(),
            outputs: self
                .outs
                .iter()
                .map(|b| gate::Output {
                    name: b.name,
                    slots: b.slots(),
                })
                .collect(),
            valid: (self.op == Operation::Verify).then_some(&self.valid[..]),
            sampled,
            items: &items,
            cross_check: at.cross_checks(),
            inputs_made: self.inputs_made(),
        };
        gate::check_run(&io)
    }
}

impl Part {
    /// Own-randomness key generation: every judged public key differs from
    /// the others of its run and from every one judged in an earlier run.
    /// Fresh randomness gives that (two equal ML-KEM or ML-DSA keys from
    /// 256 bits of it do not happen); keys made once and copied into every
    /// run, or one key for every item, do not, though each passes the
    /// round trips.
    fn keys_are_fresh(
        &self,
        gathered: &[(&str, Vec<u8>, usize)],
        items: &[usize],
    ) -> anyhow::Result<()> {
        use std::hash::{Hash, Hasher};
        let Some((name, bytes, len)) = gathered.iter().find(|(n, _, _)| *n == "ek" || *n == "pk")
        else {
            return Ok(());
        };
        let run = self.runs.run();
        let mut seen = self.keys_seen.lock().unwrap_or_else(|e| e.into_inner());
        // Judged again in the same run (another checkpoint): compared anew.
        seen.retain(|(r, _)| *r != run);
        let mut this_run: Vec<(u64, usize)> = vec![];
        for (chunk, &item) in bytes.chunks((*len).max(1)).zip(items) {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            chunk.hash(&mut h);
            let h = h.finish();
            if let Some(&(_, other)) = this_run.iter().find(|(d, i)| *d == h && *i != item) {
                anyhow::bail!(
                    "operation {item}: {name} equals operation {other}'s in the same run: key generation that draws its own randomness gave the same key twice"
                );
            }
            if seen.iter().any(|(_, d)| *d == h) {
                anyhow::bail!(
                    "operation {item}: {name} was already given in an earlier run of this record: key generation that draws its own randomness gave a key again (keys made once and copied?)"
                );
            }
            this_run.push((h, item));
        }
        seen.extend(this_run.into_iter().map(|(h, _)| (run, h)));
        Ok(())
    }
}

/// The items `items` of a buffer of `len`-byte items, back to back.
fn gate_pick(buf: &[u8], items: &[usize], len: usize) -> Vec<u8> {
    if len == 0 {
        return vec![];
    }
    items
        .iter()
        .flat_map(|&i| buf[i * len..(i + 1) * len].iter().copied())
        .collect()
}

impl Chunk for Part {
    fn run(&mut self) -> anyhow::Result<()> {
        let (caller, alg, op, n) = (self.caller.clone(), self.alg, self.op, self.n);
        caller.call(alg, op, n, self.buffers())
    }
}

/// A host plugin batch, ready to time.
pub struct HostBatch {
    parts: Vec<Part>,
    pinning: Option<String>,
    label: String,
}

impl HostBatch {
    /// Inputs for `op` of `alg` over `cfg.batch` items on `cfg.threads`
    /// threads (one unless the plugin is thread-safe).
    pub fn new(
        caller: Arc<dyn Caller>,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<HostBatch> {
        let plugin = caller.plugin();
        ensure!(
            plugin.supports(alg, op),
            "plugin {} does not implement {alg} {op}",
            plugin.info.name
        );
        let threads = if plugin.info.thread_safe {
            cfg.threads
        } else {
            1
        };
        let label = format!("plugin {} {alg} {op}", plugin.info.name);
        let parts = chunk_sizes(cfg.batch, threads)
            .into_iter()
            .enumerate()
            .map(|(t, n)| Part::new(caller.clone(), alg, op, n, cfg, t))
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("preparing {label}"))?;
        Ok(HostBatch {
            parts,
            pinning: None,
            label,
        })
    }
}

/// The gate over every part of a batch: one report, or the first failure
/// naming the part's thread when there are several (a plugin that declared
/// itself thread-safe and is not fails here).
pub(super) fn check_parts(
    parts: &[Part],
    label: &str,
    at: Checkpoint,
) -> anyhow::Result<GateReport> {
    let threads = parts.len();
    // The parts are judged at once, one thread each, as they ran.
    let results: Vec<anyhow::Result<GateReport>> = std::thread::scope(|s| {
        let handles: Vec<_> = parts.iter().map(|p| s.spawn(move || p.check(at))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the gate's thread panicked")))
            })
            .collect()
    });
    let mut reports = vec![];
    for (t, r) in results.into_iter().enumerate() {
        let r = r.with_context(|| {
            if threads > 1 {
                format!("{label} gate (thread {} of {threads}, on its own part of the batch: the plugin declares itself thread-safe)", t + 1)
            } else {
                format!("{label} gate")
            }
        })?;
        reports.push(r);
    }
    gate::parts(reports)
}

impl Prepared for HostBatch {
    fn arm(&mut self) -> anyhow::Result<()> {
        for p in &mut self.parts {
            p.arm()
                .with_context(|| format!("preparing the next run of {}", self.label))?;
        }
        Ok(())
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        let r = run_chunks(&mut self.parts)?;
        self.pinning = r.pinning;
        Ok(r.window)
    }
    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        check_parts(&self.parts, &self.label, at)
    }
    fn threads(&self) -> usize {
        self.parts.len()
    }
    fn pinning(&self) -> Option<String> {
        self.pinning.clone()
    }
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        Some(crate::backend::parallel::empty_window(self.parts.len()))
    }
    fn empty_window_method(&self) -> &'static str {
        "the batch's own window around parts with no call: two clock reads on one thread; with several, the threads spawned, pinned and released at a barrier, the window from the first start to the last end"
    }
    fn timed_window(&self) -> &'static str {
        "wall clock around the plugin's batched call on buffers pqcprof allocated (in the plugin's worker process); with several threads, one call per thread on a disjoint part, from releasing all threads to the last one's end; randomness given as inputs"
    }
}
