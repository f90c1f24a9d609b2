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

use crate::backend::parallel::{chunk_sizes, run_chunks, Chunk};
use crate::backend::{Backend, BatchConfig, Prepared};
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::probe::system::available_cores;
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, bail, ensure, Context};
use oqs::ffi::common::OQS_STATUS;
use oqs::ffi::{kem as ffi_kem, sig as ffi_sig};
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
                    .map(|&n| KemChunk::new(alg, op, n))
                    .collect::<anyhow::Result<Vec<_>>>()
                    .with_context(|| format!("preparing {alg} {op}"))?;
                Box::new(CpuBatch {
                    chunks,
                    pinning: None,
                })
            }
            Kind::Signature => {
                let msg = cfg.message();
                let chunks = sizes
                    .iter()
                    .map(|&n| SigChunk::new(alg, op, n, msg.clone()))
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

/// A chunk that can also check its own outputs.
trait CheckedChunk: Chunk {
    fn check(&self) -> anyhow::Result<GateReport>;
}

struct CpuBatch<C> {
    chunks: Vec<C>,
    /// Where the last run's threads ran.
    pinning: Option<String>,
}

impl<C: CheckedChunk> Prepared for CpuBatch<C> {
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
    fn check(&mut self) -> anyhow::Result<GateReport> {
        let mut total = GateReport {
            checked_ops: 0,
            checks: vec![],
        };
        for (i, c) in self.chunks.iter().enumerate() {
            let r = c.check().with_context(|| format!("thread {i}"))?;
            total.checked_ops += r.checked_ops;
            if total.checks.is_empty() {
                total.checks = r.checks;
            }
        }
        Ok(total)
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

/// Flips one bit of a copy of `data`.
fn flipped(data: &[u8], bit: usize) -> Vec<u8> {
    let mut v = data.to_vec();
    let i = (bit / 8) % v.len();
    v[i] ^= 1 << (bit % 8);
    v
}

/// One thread's share of a KEM batch: its own key pair and buffers.
struct KemChunk {
    kem: RawKem,
    op: Operation,
    n: usize,
    slots: usize,
    pk: Vec<u8>,
    sk: Vec<u8>,
    ct: Vec<u8>,
    ss: Vec<u8>,
    /// For decaps: the secrets encapsulation produced, untimed.
    expected_ss: Vec<u8>,
}

impl KemChunk {
    fn new(alg: Algorithm, op: Operation, n: usize) -> anyhow::Result<Self> {
        let kem = RawKem::new(alg)?;
        let (lp, ls, lc, lss) = kem.lengths();
        let slots = n.min(RING_SLOTS);
        let keys = if op == Operation::KeyGen { slots } else { 1 };
        let mut c = KemChunk {
            op,
            n,
            slots,
            pk: vec![0; lp * keys],
            sk: vec![0; ls * keys],
            ct: vec![0; lc * slots],
            ss: vec![0; lss * slots],
            expected_ss: vec![],
            kem,
        };
        if op != Operation::KeyGen {
            c.kem.keypair(&mut c.pk, &mut c.sk)?;
        }
        if op == Operation::Decaps {
            for i in 0..slots {
                c.kem.encaps(
                    &mut c.ct[i * lc..(i + 1) * lc],
                    &mut c.ss[i * lss..(i + 1) * lss],
                    &c.pk,
                )?;
            }
            c.expected_ss = std::mem::take(&mut c.ss);
            c.ss = vec![0; lss * slots];
        }
        Ok(c)
    }
}

impl Chunk for KemChunk {
    fn run(&mut self) -> anyhow::Result<()> {
        let (lp, ls, lc, lss) = self.kem.lengths();
        for op_index in 0..self.n {
            let i = op_index % self.slots;
            match self.op {
                Operation::KeyGen => self.kem.keypair(
                    &mut self.pk[i * lp..(i + 1) * lp],
                    &mut self.sk[i * ls..(i + 1) * ls],
                )?,
                Operation::Encaps => self.kem.encaps(
                    &mut self.ct[i * lc..(i + 1) * lc],
                    &mut self.ss[i * lss..(i + 1) * lss],
                    &self.pk,
                )?,
                Operation::Decaps => self.kem.decaps(
                    &mut self.ss[i * lss..(i + 1) * lss],
                    &self.ct[i * lc..(i + 1) * lc],
                    &self.sk,
                )?,
                other => bail!("{other} is not a KEM operation"),
            }
        }
        Ok(())
    }
}

impl CheckedChunk for KemChunk {
    fn check(&self) -> anyhow::Result<GateReport> {
        let (lp, ls, lc, lss) = self.kem.lengths();
        let mut ss = vec![0u8; lss];
        let mut ct = vec![0u8; lc];
        let mut checks = vec![];
        match self.op {
            Operation::KeyGen => {
                // Every generated key pair must agree on a fresh secret.
                for i in 0..self.slots {
                    let pk = &self.pk[i * lp..(i + 1) * lp];
                    let sk = &self.sk[i * ls..(i + 1) * ls];
                    let mut ss_enc = vec![0u8; lss];
                    self.kem.encaps(&mut ct, &mut ss_enc, pk)?;
                    self.kem.decaps(&mut ss, &ct, sk)?;
                    ensure!(
                        ss == ss_enc,
                        "key pair {i}: decapsulated secret differs from the encapsulated one"
                    );
                }
                checks
                    .push("each key pair encapsulates and decapsulates to the same secret".into());
            }
            Operation::Encaps => {
                for i in 0..self.slots {
                    let c = &self.ct[i * lc..(i + 1) * lc];
                    self.kem.decaps(&mut ss, c, &self.sk)?;
                    ensure!(
                        ss == self.ss[i * lss..(i + 1) * lss],
                        "ciphertext {i}: decapsulated secret differs from the encapsulated one"
                    );
                }
                checks.push("each ciphertext decapsulates to its encapsulated secret".into());
                let bad = flipped(&self.ct[..lc], 7);
                self.kem.decaps(&mut ss, &bad, &self.sk)?;
                ensure!(
                    ss != self.ss[..lss],
                    "a ciphertext with a flipped bit gave the same secret"
                );
                checks.push("a flipped ciphertext bit gives a different secret".into());
            }
            Operation::Decaps => {
                ensure!(
                    self.ss == self.expected_ss,
                    "a decapsulated secret differs from the encapsulated one"
                );
                checks.push("each decapsulated secret equals the encapsulated one".into());
                let bad = flipped(&self.ct[..lc], 7);
                self.kem.decaps(&mut ss, &bad, &self.sk)?;
                ensure!(
                    ss != self.expected_ss[..lss],
                    "a ciphertext with a flipped bit gave the same secret"
                );
                checks.push("a flipped ciphertext bit gives a different secret".into());
            }
            other => bail!("{other} is not a KEM operation"),
        }
        Ok(GateReport {
            checked_ops: self.slots,
            checks,
        })
    }
}

/// One thread's share of a signature batch.
struct SigChunk {
    sig: RawSig,
    op: Operation,
    n: usize,
    slots: usize,
    msg: Vec<u8>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    sigs: Vec<u8>,
    sig_lens: Vec<usize>,
    /// Valid signatures the last run rejected (verify only).
    rejected: usize,
}

impl SigChunk {
    fn new(alg: Algorithm, op: Operation, n: usize, msg: Vec<u8>) -> anyhow::Result<Self> {
        let sig = RawSig::new(alg)?;
        let (lp, ls, lsig) = sig.lengths();
        let slots = n.min(RING_SLOTS);
        let keys = if op == Operation::KeyGen { slots } else { 1 };
        let mut c = SigChunk {
            op,
            n,
            slots,
            msg,
            pk: vec![0; lp * keys],
            sk: vec![0; ls * keys],
            sigs: vec![0; lsig * slots],
            sig_lens: vec![0; slots],
            rejected: 0,
            sig,
        };
        if op != Operation::KeyGen {
            c.sig.keypair(&mut c.pk, &mut c.sk)?;
        }
        if op == Operation::Verify {
            for i in 0..slots {
                c.sig_lens[i] = c
                    .sig
                    .sign(&mut c.sigs[i * lsig..(i + 1) * lsig], &c.msg, &c.sk)?;
            }
        }
        Ok(c)
    }

    fn signature(&self, i: usize) -> &[u8] {
        let lsig = self.sig.lengths().2;
        &self.sigs[i * lsig..i * lsig + self.sig_lens[i]]
    }
}

impl Chunk for SigChunk {
    fn run(&mut self) -> anyhow::Result<()> {
        let (lp, ls, lsig) = self.sig.lengths();
        self.rejected = 0;
        for op_index in 0..self.n {
            let i = op_index % self.slots;
            match self.op {
                Operation::KeyGen => self.sig.keypair(
                    &mut self.pk[i * lp..(i + 1) * lp],
                    &mut self.sk[i * ls..(i + 1) * ls],
                )?,
                Operation::Sign => {
                    self.sig_lens[i] = self.sig.sign(
                        &mut self.sigs[i * lsig..(i + 1) * lsig],
                        &self.msg,
                        &self.sk,
                    )?
                }
                Operation::Verify => {
                    let s = &self.sigs[i * lsig..i * lsig + self.sig_lens[i]];
                    if !self.sig.verify(&self.msg, s, &self.pk)? {
                        self.rejected += 1;
                    }
                }
                other => bail!("{other} is not a signature operation"),
            }
        }
        Ok(())
    }
}

impl CheckedChunk for SigChunk {
    fn check(&self) -> anyhow::Result<GateReport> {
        let (lp, ls, lsig) = self.sig.lengths();
        let mut checks = vec![];
        match self.op {
            Operation::KeyGen => {
                let mut s = vec![0u8; lsig];
                for i in 0..self.slots {
                    let pk = &self.pk[i * lp..(i + 1) * lp];
                    let sk = &self.sk[i * ls..(i + 1) * ls];
                    let len = self.sig.sign(&mut s, &self.msg, sk)?;
                    ensure!(
                        self.sig.verify(&self.msg, &s[..len], pk)?,
                        "key pair {i}: a signature made with it does not verify"
                    );
                }
                checks.push("each key pair signs and verifies".into());
            }
            Operation::Sign | Operation::Verify => {
                ensure!(
                    self.rejected == 0,
                    "{} valid signatures were rejected in the last run",
                    self.rejected
                );
                for i in 0..self.slots {
                    ensure!(
                        self.sig.verify(&self.msg, self.signature(i), &self.pk)?,
                        "signature {i} does not verify"
                    );
                }
                checks.push("each signature verifies (and verify accepted every valid one)".into());
                let bad = flipped(self.signature(0), 13);
                ensure!(
                    !self.sig.verify(&self.msg, &bad, &self.pk)?,
                    "a signature with a flipped bit verified"
                );
                // An empty message (--message-size 0) has no bit to flip.
                if !self.msg.is_empty() {
                    let bad_msg = flipped(&self.msg, 5);
                    ensure!(
                        !self.sig.verify(&bad_msg, self.signature(0), &self.pk)?,
                        "a signature verified over a message with a flipped bit"
                    );
                }
                checks.push("a flipped signature or message bit is rejected".into());
            }
            other => bail!("{other} is not a signature operation"),
        }
        Ok(GateReport {
            checked_ops: self.slots,
            checks,
        })
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
        }
    }

    #[test]
    fn every_operation_passes_its_gate() {
        let mut b = LiboqsCpu::new(device());
        for alg in Algorithm::ALL {
            for op in alg.operations() {
                let mut p = b.prepare(alg, op, &cfg(5, 2)).unwrap();
                p.run().unwrap();
                let g = p.check().unwrap_or_else(|e| panic!("{alg} {op}: {e:#}"));
                assert_eq!(g.checked_ops, 5, "{alg} {op}");
                assert_eq!(p.threads(), 2);
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
    fn the_gate_catches_corrupted_outputs() {
        let mut c = KemChunk::new(Algorithm::MlKem512, Operation::Decaps, 3).unwrap();
        c.run().unwrap();
        c.check().unwrap();
        c.ss[0] ^= 1;
        assert!(c.check().unwrap_err().to_string().contains("differs"));

        let mut s = SigChunk::new(Algorithm::MlDsa44, Operation::Sign, 2, vec![1, 2, 3]).unwrap();
        s.run().unwrap();
        s.check().unwrap();
        s.sigs[40] ^= 4;
        assert!(s
            .check()
            .unwrap_err()
            .to_string()
            .contains("does not verify"));
    }
}
