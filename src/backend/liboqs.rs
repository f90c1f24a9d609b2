//! The liboqs CPU backend (liboqs built from source by the `oqs` crate and
//! linked statically).
//!
//! Operations call liboqs's C entry points (`OQS_KEM_keypair`,
//! `OQS_SIG_sign`, ...) on preallocated buffers, the same calls its own
//! `speed_kem` and `speed_sig` time, so our single-core figures can be
//! compared with theirs. Key generation, encapsulation and signing draw
//! randomness from liboqs's RNG inside the call, as in those tools.
//!
//! Longer than most files: one adapter per liboqs operation (KEM and
//! signature, keygen to verify), the ring of key slots, and their gates.

use crate::backend::gate::reference::Sampled;
use crate::backend::gate::slots::{Guarded, Slots};
use crate::backend::gate::{self, inputs, Runs};
use crate::backend::parallel::{chunk_sizes, run_chunks, Chunk};
use crate::backend::{Backend, BatchConfig, Checkpoint, Prepared};
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::probe::system::available_cores;
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, bail, ensure, Context};
use oqs::ffi::common::OQS_STATUS;
use oqs::ffi::{kem as ffi_kem, sig as ffi_sig};
use rand::SeedableRng;
use std::ptr::NonNull;
use std::time::Duration;

/// Backend name on the command line and in files.
pub const NAME: &str = "liboqs-cpu";

/// Each thread cycles its operations through this many slots of inputs and
/// outputs, so an operation's cost is measured with warm caches, as
/// liboqs's speed tools (one buffer reused) and pqc-sig-bench-c measure it,
/// rather than streaming megabytes of keys through memory. The gate checks
/// every slot after each pass.
pub const RING_SLOTS: usize = 32;

fn ok(status: OQS_STATUS, what: &str) -> anyhow::Result<()> {
    ensure!(
        status == OQS_STATUS::OQS_SUCCESS,
        "liboqs {what} returned {status:?}"
    );
    Ok(())
}

/// An owned `OQS_KEM` handle.
pub struct RawKem(NonNull<ffi_kem::OQS_KEM>);

// SAFETY: an OQS_KEM is an immutable table of sizes and function pointers;
// the functions keep no state in it, so it may move between threads.
unsafe impl Send for RawKem {}

impl RawKem {
    /// Opens `alg` (an ML-KEM set).
    pub fn new(alg: Algorithm) -> anyhow::Result<Self> {
        let id = alg
            .liboqs_kem()
            .ok_or_else(|| anyhow!("{alg} is not a KEM"))?;
        ensure!(id.is_enabled(), "{alg} is disabled in this liboqs build");
        // SAFETY: `to_id` gives liboqs's own static name for the algorithm.
        let p = unsafe { ffi_kem::OQS_KEM_new(id.to_id()) };
        NonNull::new(p)
            .map(RawKem)
            .ok_or_else(|| anyhow!("liboqs could not open {alg}"))
    }
    fn get(&self) -> &ffi_kem::OQS_KEM {
        // SAFETY: the pointer is non-null and owned until drop.
        unsafe { self.0.as_ref() }
    }
    /// (public key, secret key, ciphertext, shared secret) lengths.
    pub fn lengths(&self) -> (usize, usize, usize, usize) {
        let k = self.get();
        (
            k.length_public_key,
            k.length_secret_key,
            k.length_ciphertext,
            k.length_shared_secret,
        )
    }
    /// Key generation into caller buffers of the right lengths.
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> anyhow::Result<()> {
        let (lp, ls, _, _) = self.lengths();
        ensure!(pk.len() == lp && sk.len() == ls, "key buffer sizes");
        // SAFETY: buffers have exactly the lengths liboqs writes.
        ok(
            unsafe { ffi_kem::OQS_KEM_keypair(self.0.as_ptr(), pk.as_mut_ptr(), sk.as_mut_ptr()) },
            "keypair",
        )
    }
    /// Encapsulation against `pk`.
    pub fn encaps(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> anyhow::Result<()> {
        let (lp, _, lc, lss) = self.lengths();
        ensure!(
            pk.len() == lp && ct.len() == lc && ss.len() == lss,
            "encaps buffer sizes"
        );
        // SAFETY: buffers have exactly the lengths liboqs reads and writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_encaps(
                    self.0.as_ptr(),
                    ct.as_mut_ptr(),
                    ss.as_mut_ptr(),
                    pk.as_ptr(),
                )
            },
            "encaps",
        )
    }
    /// Decapsulation of `ct` with `sk`.
    pub fn decaps(&self, ss: &mut [u8], ct: &[u8], sk: &[u8]) -> anyhow::Result<()> {
        let (_, ls, lc, lss) = self.lengths();
        ensure!(
            sk.len() == ls && ct.len() == lc && ss.len() == lss,
            "decaps buffer sizes"
        );
        // SAFETY: buffers have exactly the lengths liboqs reads and writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_decaps(self.0.as_ptr(), ss.as_mut_ptr(), ct.as_ptr(), sk.as_ptr())
            },
            "decaps",
        )
    }
}

impl Drop for RawKem {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_KEM_new and freed once.
        unsafe { ffi_kem::OQS_KEM_free(self.0.as_ptr()) }
    }
}

/// An owned `OQS_SIG` handle.
pub struct RawSig(NonNull<ffi_sig::OQS_SIG>);

// SAFETY: as for RawKem, an immutable table of sizes and function pointers.
unsafe impl Send for RawSig {}

impl RawSig {
    /// Opens `alg` (an ML-DSA set).
    pub fn new(alg: Algorithm) -> anyhow::Result<Self> {
        let id = alg
            .liboqs_sig()
            .ok_or_else(|| anyhow!("{alg} is not a signature scheme"))?;
        ensure!(id.is_enabled(), "{alg} is disabled in this liboqs build");
        // SAFETY: `to_id` gives liboqs's own static name for the algorithm.
        let p = unsafe { ffi_sig::OQS_SIG_new(id.to_id()) };
        NonNull::new(p)
            .map(RawSig)
            .ok_or_else(|| anyhow!("liboqs could not open {alg}"))
    }
    fn get(&self) -> &ffi_sig::OQS_SIG {
        // SAFETY: the pointer is non-null and owned until drop.
        unsafe { self.0.as_ref() }
    }
    /// (public key, secret key, maximum signature) lengths.
    pub fn lengths(&self) -> (usize, usize, usize) {
        let s = self.get();
        (s.length_public_key, s.length_secret_key, s.length_signature)
    }
    /// Key generation.
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> anyhow::Result<()> {
        let (lp, ls, _) = self.lengths();
        ensure!(pk.len() == lp && sk.len() == ls, "key buffer sizes");
        // SAFETY: buffers have exactly the lengths liboqs writes.
        ok(
            unsafe { ffi_sig::OQS_SIG_keypair(self.0.as_ptr(), pk.as_mut_ptr(), sk.as_mut_ptr()) },
            "keypair",
        )
    }
    /// Signs `msg` (pure ML-DSA, empty context); returns the signature length.
    pub fn sign(&self, sig: &mut [u8], msg: &[u8], sk: &[u8]) -> anyhow::Result<usize> {
        let (_, ls, lsig) = self.lengths();
        ensure!(sk.len() == ls && sig.len() >= lsig, "sign buffer sizes");
        let mut len = 0usize;
        // SAFETY: sig holds the maximum signature length; the others are read only.
        ok(
            unsafe {
                ffi_sig::OQS_SIG_sign(
                    self.0.as_ptr(),
                    sig.as_mut_ptr(),
                    &mut len,
                    msg.as_ptr(),
                    msg.len(),
                    sk.as_ptr(),
                )
            },
            "sign",
        )?;
        Ok(len)
    }
    /// Verifies; `Ok(false)` for a signature liboqs rejects.
    pub fn verify(&self, msg: &[u8], sig: &[u8], pk: &[u8]) -> anyhow::Result<bool> {
        let (lp, _, _) = self.lengths();
        ensure!(pk.len() == lp, "public key size");
        // SAFETY: every buffer is read only and passed with its own length.
        let st = unsafe {
            ffi_sig::OQS_SIG_verify(
                self.0.as_ptr(),
                msg.as_ptr(),
                msg.len(),
                sig.as_ptr(),
                sig.len(),
                pk.as_ptr(),
            )
        };
        Ok(st == OQS_STATUS::OQS_SUCCESS)
    }
}

impl Drop for RawSig {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_SIG_new and freed once.
        unsafe { ffi_sig::OQS_SIG_free(self.0.as_ptr()) }
    }
}

/// The liboqs CPU backend.
pub struct LiboqsCpu {
    device: Device,
}

impl LiboqsCpu {
    /// Initialises liboqs once.
    pub fn new(device: Device) -> Self {
        oqs::init();
        LiboqsCpu { device }
    }
}

impl Backend for LiboqsCpu {
    fn name(&self) -> &str {
        NAME
    }
    fn provider(&self) -> &str {
        "liboqs"
    }
    fn device(&self) -> Device {
        self.device.clone()
    }
    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        ensure!(alg.has_operation(op), "{alg} has no {op} operation");
        let threads = if cfg.threads == 0 {
            available_cores()
        } else {
            cfg.threads
        };
        let sizes = chunk_sizes(cfg.batch, threads);
        let prepared: Box<dyn Prepared> = match alg.kind() {
            Kind::Kem => {
                let chunks = sizes
                    .iter()
                    .enumerate()
                    .map(|(t, &n)| KemChunk::new(alg, op, n, cfg, t))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .with_context(|| format!("preparing {alg} {op}"))?;
                Box::new(CpuBatch {
                    chunks,
                    pinning: None,
                })
            }
            Kind::Signature => {
                let chunks = sizes
                    .iter()
                    .enumerate()
                    .map(|(t, &n)| SigChunk::new(alg, op, n, cfg, t))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .with_context(|| format!("preparing {alg} {op}"))?;
                Box::new(CpuBatch {
                    chunks,
                    pinning: None,
                })
            }
        };
        Ok(prepared)
    }
}

/// A chunk whose last run the gate can check: its outputs poisoned and
/// its inputs refreshed by `arm`, the run read back by `check`.
trait CheckedChunk: Chunk {
    fn arm(&mut self) -> anyhow::Result<()>;
    fn check(&self, cross: bool) -> anyhow::Result<GateReport>;
}

struct CpuBatch<C> {
    chunks: Vec<C>,
    /// Where the last run's threads ran.
    pinning: Option<String>,
}

impl<C: CheckedChunk> Prepared for CpuBatch<C> {
    fn arm(&mut self) -> anyhow::Result<()> {
        self.chunks.iter_mut().try_for_each(|c| c.arm())
    }
    fn run(&mut self) -> anyhow::Result<Duration> {
        let r = run_chunks(&mut self.chunks)?;
        self.pinning = r.pinning;
        Ok(r.window)
    }
    fn empty_window(&mut self) -> Option<anyhow::Result<Duration>> {
        Some(crate::backend::parallel::empty_window(self.chunks.len()))
    }
    fn empty_window_method(&self) -> &'static str {
        "the batch's own window around chunks with no operations: two clock reads on one thread; with several, the threads spawned, pinned and released at a barrier, the window from the first start to the last end"
    }
    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        let threads = self.chunks.len();
        let reports = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                c.check(at.cross_checks())
                    .with_context(|| format!("thread {} of {threads}", i + 1))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        gate::parts(reports)
    }
    fn threads(&self) -> usize {
        self.chunks.len()
    }
    fn pinning(&self) -> Option<String> {
        self.pinning.clone()
    }
    fn timed_window(&self) -> &'static str {
        "wall clock from releasing all threads to the last thread's end; liboqs calls on preallocated buffers (a ring of 32 slots per thread), randomness drawn inside the call"
    }
}

/// What a liboqs record says of its inputs.
const INPUTS: &str = "liboqs draws its own randomness; one key pair and the 0xAB message per thread; outputs in a ring of 32 slots per thread, each written by every 32nd operation; decapsulation's ciphertexts made afresh by liboqs each run and verification's signatures once, a bit flipped in about one in 16 at slots drawn each run";

/// A buffer between guards, named, with its slot length.
struct Ring {
    name: &'static str,
    item: usize,
    g: Guarded,
    before: Vec<u8>,
}

impl Ring {
    fn new(name: &'static str, item: usize, items: usize, seed: u64) -> Ring {
        Ring {
            name,
            item,
            g: Guarded::new(item * items, seed),
            before: vec![],
        }
    }
    fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let l = self.item;
        &mut self.g.body_mut()[i * l..(i + 1) * l]
    }
    fn slots(&self) -> Slots<'_> {
        if self.g.body().len() == self.item {
            Slots::shared(self.g.body())
        } else {
            Slots::packed(self.g.body(), self.item)
        }
    }
    fn input(&self) -> gate::Input<'_> {
        gate::Input {
            name: self.name,
            before: Slots::packed(&self.before, self.item.max(1)),
            after: Slots::packed(self.g.body(), self.item.max(1)),
        }
    }
    fn output(&self) -> gate::Output<'_> {
        gate::Output {
            name: self.name,
            slots: Slots::packed(self.g.body(), self.item),
        }
    }
}

/// Arms the rings of one chunk: a copy of its inputs kept, its outputs
/// filled with the run's poison byte.
fn arm_rings(runs: &mut Runs, ins: &mut [&mut Ring], outs: &mut [&mut Ring]) {
    for r in ins.iter_mut() {
        r.before = r.g.body().to_vec();
    }
    let poison = runs.arm();
    for r in outs.iter_mut() {
        r.g.body_mut().fill(poison);
    }
}

/// The gate over one chunk's last run: its rings, its verdicts, every slot
/// judged.
#[allow(clippy::too_many_arguments)]
fn check_rings(
    alg: Algorithm,
    op: Operation,
    runs: &Runs,
    ins: &[&Ring],
    outs: &[&Ring],
    valid: Option<&[bool]>,
    sampled: Sampled<'_>,
    cross: bool,
) -> anyhow::Result<GateReport> {
    ensure!(
        runs.run() > 0,
        "the gate checks runs it prepared, and no run was prepared (arm) before this one"
    );
    let items: Vec<usize> = (0..runs.n).collect();
    gate::check_run(&gate::RunIo {
        alg,
        op,
        runs,
        guards: ins
            .iter()
            .chain(outs)
            .flat_map(|r| r.g.guards(r.name))
            .collect(),
        inputs: ins.iter().map(|r| r.input()).collect(),
        outputs: outs.iter().map(|r| r.output()).collect(),
        valid,
        sampled,
        items: &items,
        cross_check: cross,
        inputs_made: INPUTS,
    })
}

/// One thread's share of a KEM batch: its own key pair and rings.
struct KemChunk {
    kem: RawKem,
    alg: Algorithm,
    op: Operation,
    n: usize,
    slots: usize,
    pk: Ring,
    sk: Ring,
    ct: Ring,
    ss: Ring,
    runs: Runs,
    rng: rand_chacha::ChaCha20Rng,
}

impl KemChunk {
    fn new(
        alg: Algorithm,
        op: Operation,
        n: usize,
        cfg: &BatchConfig,
        part: usize,
    ) -> anyhow::Result<Self> {
        let kem = RawKem::new(alg)?;
        let (lp, ls, lc, lss) = kem.lengths();
        let slots = n.min(RING_SLOTS);
        let keys = if op == Operation::KeyGen { slots } else { 1 };
        let seed = cfg.gate.seed ^ ((part as u64) << 32);
        let mut c = KemChunk {
            alg,
            op,
            n,
            slots,
            pk: Ring::new("ek", lp, keys, seed ^ 1),
            sk: Ring::new("dk", ls, keys, seed ^ 2),
            ct: Ring::new("c", lc, slots, seed ^ 3),
            ss: Ring::new("K", lss, slots, seed ^ 4),
            runs: Runs::new(cfg.gate, slots, part),
            rng: rand_chacha::ChaCha20Rng::from_os_rng(),
            kem,
        };
        if op != Operation::KeyGen {
            c.kem.keypair(c.pk.g.body_mut(), c.sk.g.body_mut())?;
        }
        Ok(c)
    }
}

impl Chunk for KemChunk {
    fn run(&mut self) -> anyhow::Result<()> {
        let (lp, ls, lc, lss) = self.kem.lengths();
        let (pk, sk) = (self.pk.g.body_mut(), self.sk.g.body_mut());
        let (ct, ss) = (self.ct.g.body_mut(), self.ss.g.body_mut());
        for op_index in 0..self.n {
            let i = op_index % self.slots;
            match self.op {
                Operation::KeyGen => self
                    .kem
                    .keypair(&mut pk[i * lp..(i + 1) * lp], &mut sk[i * ls..(i + 1) * ls])?,
                Operation::Encaps => self.kem.encaps(
                    &mut ct[i * lc..(i + 1) * lc],
                    &mut ss[i * lss..(i + 1) * lss],
                    pk,
                )?,
                Operation::Decaps => self.kem.decaps(
                    &mut ss[i * lss..(i + 1) * lss],
                    &ct[i * lc..(i + 1) * lc],
                    sk,
                )?,
                other => bail!("{other} is not a KEM operation"),
            }
        }
        Ok(())
    }
}

impl CheckedChunk for KemChunk {
    fn arm(&mut self) -> anyhow::Result<()> {
        let lc = self.ct.item;
        if self.op == Operation::Decaps {
            // Fresh ciphertexts for every run, some tampered with.
            let mut k = vec![0u8; self.ss.item];
            for i in 0..self.slots {
                let mut c = vec![0u8; lc];
                self.kem.encaps(&mut c, &mut k, self.pk.g.body())?;
                self.ct.slot_mut(i).copy_from_slice(&c);
            }
            for i in inputs::invalid_positions(self.slots, &mut self.rng) {
                inputs::flip(self.ct.g.body_mut(), i, lc, lc, &mut self.rng);
            }
        }
        let KemChunk {
            runs,
            pk,
            sk,
            ct,
            ss,
            op,
            ..
        } = self;
        match op {
            Operation::KeyGen => arm_rings(runs, &mut [], &mut [pk, sk]),
            Operation::Encaps => arm_rings(runs, &mut [pk], &mut [ct, ss]),
            _ => arm_rings(runs, &mut [sk, ct], &mut [ss]),
        }
        Ok(())
    }
    fn check(&self, cross: bool) -> anyhow::Result<GateReport> {
        let (alg, op, runs) = (self.alg, self.op, &self.runs);
        match op {
            Operation::KeyGen => check_rings(
                alg,
                op,
                runs,
                &[],
                &[&self.pk, &self.sk],
                None,
                Sampled::KemKeygen {
                    seeds: None,
                    ek: self.pk.slots(),
                    dk: self.sk.slots(),
                },
                cross,
            ),
            Operation::Encaps => check_rings(
                alg,
                op,
                runs,
                &[&self.pk],
                &[&self.ct, &self.ss],
                None,
                Sampled::KemEncaps {
                    ek: self.pk.slots(),
                    m: None,
                    dk: Some(Slots::shared(self.sk.g.body())),
                    c: self.ct.slots(),
                    k: self.ss.slots(),
                },
                cross,
            ),
            Operation::Decaps => check_rings(
                alg,
                op,
                runs,
                &[&self.sk, &self.ct],
                &[&self.ss],
                None,
                Sampled::KemDecaps {
                    dk: Slots::shared(self.sk.g.body()),
                    c: Slots::packed(self.ct.g.body(), self.ct.item),
                    k: self.ss.slots(),
                },
                cross,
            ),
            other => bail!("{other} is not a KEM operation"),
        }
    }
}

/// One thread's share of a signature batch.
struct SigChunk {
    sig: RawSig,
    alg: Algorithm,
    op: Operation,
    n: usize,
    slots: usize,
    msg: Ring,
    pk: Ring,
    sk: Ring,
    sigs: Ring,
    /// Verify: the valid signatures made at the start.
    valid_sigs: Vec<u8>,
    /// Verify: each slot's verdict (1 accepted, 0 rejected).
    ok: Ring,
    /// Verify: which slots of this run hold a valid signature.
    valid: Vec<bool>,
    runs: Runs,
    rng: rand_chacha::ChaCha20Rng,
}

impl SigChunk {
    fn new(
        alg: Algorithm,
        op: Operation,
        n: usize,
        cfg: &BatchConfig,
        part: usize,
    ) -> anyhow::Result<Self> {
        let sig = RawSig::new(alg)?;
        let (lp, ls, lsig) = sig.lengths();
        let slots = n.min(RING_SLOTS);
        let keys = if op == Operation::KeyGen { slots } else { 1 };
        let seed = cfg.gate.seed ^ ((part as u64) << 32);
        let msg = cfg.message();
        let mut c = SigChunk {
            alg,
            op,
            n,
            slots,
            msg: Ring {
                name: "msg",
                item: msg.len(),
                g: Guarded::from_slice(&msg, seed ^ 5),
                before: vec![],
            },
            pk: Ring::new("pk", lp, keys, seed ^ 1),
            sk: Ring::new("sk", ls, keys, seed ^ 2),
            sigs: Ring::new("signature", lsig, slots, seed ^ 3),
            valid_sigs: vec![],
            ok: Ring::new("ok", 1, slots, seed ^ 4),
            valid: vec![true; slots],
            runs: Runs::new(cfg.gate, slots, part),
            rng: rand_chacha::ChaCha20Rng::from_os_rng(),
            sig,
        };
        if op != Operation::KeyGen {
            c.sig.keypair(c.pk.g.body_mut(), c.sk.g.body_mut())?;
        }
        if op == Operation::Verify {
            for i in 0..slots {
                let mut s = vec![0u8; lsig];
                let len = c.sig.sign(&mut s, c.msg.g.body(), c.sk.g.body())?;
                ensure!(
                    len == lsig,
                    "liboqs made a {len}-byte {alg} signature, not {lsig}"
                );
                c.sigs.slot_mut(i).copy_from_slice(&s);
            }
            c.valid_sigs = c.sigs.g.body().to_vec();
        }
        Ok(c)
    }
}

impl Chunk for SigChunk {
    fn run(&mut self) -> anyhow::Result<()> {
        let (lp, ls, lsig) = self.sig.lengths();
        let msg = self.msg.g.body();
        let (pk, sk) = (self.pk.g.body_mut(), self.sk.g.body_mut());
        let (sigs, ok) = (self.sigs.g.body_mut(), self.ok.g.body_mut());
        for op_index in 0..self.n {
            let i = op_index % self.slots;
            match self.op {
                Operation::KeyGen => self
                    .sig
                    .keypair(&mut pk[i * lp..(i + 1) * lp], &mut sk[i * ls..(i + 1) * ls])?,
                Operation::Sign => {
                    let len = self
                        .sig
                        .sign(&mut sigs[i * lsig..(i + 1) * lsig], msg, sk)?;
                    ensure!(
                        len == lsig,
                        "liboqs made a {len}-byte signature, not {lsig}"
                    );
                }
                Operation::Verify => {
                    let s = &sigs[i * lsig..(i + 1) * lsig];
                    ok[i] = u8::from(self.sig.verify(msg, s, pk)?);
                }
                other => bail!("{other} is not a signature operation"),
            }
        }
        Ok(())
    }
}

impl CheckedChunk for SigChunk {
    fn arm(&mut self) -> anyhow::Result<()> {
        if self.op == Operation::Verify {
            let lsig = self.sigs.item;
            self.sigs.g.body_mut().copy_from_slice(&self.valid_sigs);
            self.valid = vec![true; self.slots];
            for i in inputs::invalid_positions(self.slots, &mut self.rng) {
                inputs::flip(self.sigs.g.body_mut(), i, lsig, lsig, &mut self.rng);
                self.valid[i] = false;
            }
        }
        let SigChunk {
            runs,
            msg,
            pk,
            sk,
            sigs,
            ok,
            op,
            ..
        } = self;
        match op {
            Operation::KeyGen => arm_rings(runs, &mut [], &mut [pk, sk]),
            Operation::Sign => arm_rings(runs, &mut [sk, msg], &mut [sigs]),
            _ => arm_rings(runs, &mut [pk, msg, sigs], &mut [ok]),
        }
        Ok(())
    }
    fn check(&self, cross: bool) -> anyhow::Result<GateReport> {
        let (alg, op, runs) = (self.alg, self.op, &self.runs);
        match op {
            Operation::KeyGen => check_rings(
                alg,
                op,
                runs,
                &[],
                &[&self.pk, &self.sk],
                None,
                Sampled::DsaKeygen {
                    xi: None,
                    pk: self.pk.slots(),
                    sk: self.sk.slots(),
                },
                cross,
            ),
            Operation::Sign => check_rings(
                alg,
                op,
                runs,
                &[&self.sk, &self.msg],
                &[&self.sigs],
                None,
                Sampled::DsaSign {
                    sk: Slots::shared(self.sk.g.body()),
                    pk: Some(Slots::shared(self.pk.g.body())),
                    msg: Slots::shared(self.msg.g.body()),
                    ctx: &[],
                    rnd: None,
                    sig: self.sigs.slots(),
                },
                cross,
            ),
            Operation::Verify => check_rings(
                alg,
                op,
                runs,
                &[&self.pk, &self.msg, &self.sigs],
                &[&self.ok],
                Some(&self.valid),
                Sampled::Nothing,
                cross,
            ),
            other => bail!("{other} is not a signature operation"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::device::DeviceKind;

    fn device() -> Device {
        Device {
            kind: DeviceKind::Cpu,
            name: "test".into(),
            memory_total_mb: 1,
        }
    }

    fn cfg(batch: usize, threads: usize) -> BatchConfig {
        BatchConfig {
            batch,
            threads,
            message_size: 64,
            context: vec![],
            gate: Default::default(),
        }
    }

    #[test]
    fn every_operation_passes_its_gate() {
        let mut b = LiboqsCpu::new(device());
        for alg in Algorithm::ALL {
            for op in alg.operations() {
                let mut p = b.prepare(alg, op, &cfg(5, 2)).unwrap();
                p.arm().unwrap();
                p.run().unwrap();
                let g = p
                    .check(Checkpoint::BeforeTiming)
                    .unwrap_or_else(|e| panic!("{alg} {op}: {e:#}"));
                assert_eq!(g.checked_ops, 5, "{alg} {op}");
                assert_eq!(p.threads(), 2);
                let c = g.coverage.unwrap();
                assert_eq!((c.runs, c.written_per_run, c.guard_bytes), (1, 5, 64));
            }
        }
    }

    #[test]
    fn sizes_agree_with_the_catalogue() {
        oqs::init();
        for alg in Algorithm::ALL {
            let s = alg.sizes();
            if let Ok(k) = RawKem::new(alg) {
                let (lp, ls, lc, lss) = k.lengths();
                assert_eq!(
                    (lp, ls, Some(lc), Some(lss)),
                    (
                        s.public_key_bytes,
                        s.secret_key_bytes,
                        s.ciphertext_bytes,
                        s.shared_secret_bytes
                    ),
                    "{alg}"
                );
            } else {
                let g = RawSig::new(alg).unwrap();
                let (lp, ls, lsig) = g.lengths();
                assert_eq!(
                    (lp, ls, Some(lsig)),
                    (s.public_key_bytes, s.secret_key_bytes, s.signature_bytes)
                );
                // And a real signature has exactly that length (ML-DSA is fixed-size).
                let (mut pk, mut sk, mut sig) = (vec![0; lp], vec![0; ls], vec![0; lsig]);
                g.keypair(&mut pk, &mut sk).unwrap();
                assert_eq!(g.sign(&mut sig, b"m", &sk).unwrap(), lsig, "{alg}");
            }
        }
    }

    #[test]
    fn the_gate_catches_corrupted_outputs_a_skipped_run_and_a_write_past_a_buffer() {
        let c3 = BatchConfig {
            message_size: 3,
            ..cfg(3, 1)
        };
        let mut c = KemChunk::new(Algorithm::MlKem512, Operation::Decaps, 3, &c3, 0).unwrap();
        c.arm().unwrap();
        c.run().unwrap();
        c.check(true).unwrap();
        c.ss.g.body_mut()[33] ^= 1;
        let e = c.check(false).unwrap_err().to_string();
        assert!(
            e.contains("operation 1: K differs from the reference"),
            "{e}"
        );
        // A run armed and not made: every output still poisoned.
        c.arm().unwrap();
        let e = c.check(false).unwrap_err().to_string();
        assert!(e.contains("operation 0: K not written by the call"), "{e}");
        // A byte written just past the secrets.
        c.run().unwrap();
        c.ss.g.raw_mut()[64 + 3 * 32] ^= 1;
        let e = c.check(false).unwrap_err().to_string();
        assert!(
            e.contains("the guard bytes after K were overwritten"),
            "{e}"
        );

        let mut s = SigChunk::new(Algorithm::MlDsa44, Operation::Sign, 2, &c3, 0).unwrap();
        s.arm().unwrap();
        s.run().unwrap();
        s.check(true).unwrap();
        s.sigs.g.body_mut()[2420 + 40] ^= 4;
        let e = s.check(false).unwrap_err().to_string();
        assert!(
            e.contains("operation 1: the signature does not verify"),
            "{e}"
        );
        // The message, an input, changed by the call.
        s.arm().unwrap();
        s.run().unwrap();
        s.msg.g.body_mut()[1] ^= 8;
        let e = s.check(false).unwrap_err().to_string();
        assert!(e.contains("the call changed its input msg"), "{e}");
    }

    #[test]
    fn verification_slots_mix_invalid_signatures_at_new_places_each_run() {
        let mut v =
            SigChunk::new(Algorithm::MlDsa44, Operation::Verify, 64, &cfg(64, 1), 0).unwrap();
        let mut seen = vec![];
        for _ in 0..4 {
            v.arm().unwrap();
            v.run().unwrap();
            v.check(false).unwrap();
            assert_eq!(v.valid.iter().filter(|&&x| !x).count(), 2);
            seen.push(v.valid.clone());
        }
        assert!(seen.windows(2).any(|w| w[0] != w[1]));
        // A verifier that accepts every slot is caught.
        v.arm().unwrap();
        v.run().unwrap();
        v.ok.g.body_mut().fill(1);
        let e = v.check(false).unwrap_err().to_string();
        assert!(
            e.contains("an invalid signature") && e.contains("was accepted"),
            "{e}"
        );
    }
}
