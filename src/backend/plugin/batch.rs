//! One host plugin batch: its inputs made before timing (seeds, m, rnd,
//! messages drawn at random; keys, ciphertexts and signatures made by the
//! reference, pqcprof's host build of FIPS 203/204), the plugin called over
//! it on one thread or, when it is thread-safe, on several (each a disjoint
//! part), and the correctness gate over the outputs.
//!
//! The gate compares sampled outputs byte for byte with the reference for
//! the same inputs, has liboqs check them too (a round trip, a decapsulation,
//! a verification), and makes untimed calls with a tampered input: the
//! implicit-rejection key for a flipped ciphertext bit, a rejection for a
//! flipped signature bit.

use super::ffi::{Buffers, HostBuffers, Place};
use super::Plugin;
use crate::backend::native_gpu::gate::{self, sample_indices, MIN_SAMPLE};
use crate::backend::native_gpu::host;
use crate::backend::parallel::{chunk_sizes, run_chunks, Chunk};
use crate::backend::{BatchConfig, Prepared};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use anyhow::{anyhow, bail, ensure, Context};
use rand::{RngCore, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

/// Distinct key pairs a part cycles through (made by the reference, untimed).
const KEYS: usize = 16;

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

/// One thread's part of a batch: its inputs, outputs and reference.
pub(super) struct Part {
    caller: Arc<dyn Caller>,
    pub(super) alg: Algorithm,
    pub(super) op: Operation,
    pub(super) n: usize,
    /// keygen: d || z (ML-KEM) or xi (ML-DSA); encaps: m; sign: rnd.
    seeds: Vec<u8>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    /// decaps: the ciphertexts; verify: the signatures.
    given: Vec<u8>,
    msg: Vec<u8>,
    msg_item: usize,
    ctx: Vec<u8>,
    /// decaps: the secrets the reference encapsulated.
    expected: Vec<u8>,
    out_a: Vec<u8>,
    out_b: Vec<u8>,
}

fn random(rng: &mut rand_chacha::ChaCha20Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

/// `n` items of `len` bytes: those of `first` in turn.
fn cyclic(first: Vec<u8>, len: usize, n: usize) -> Vec<u8> {
    if len == 0 {
        return first;
    }
    first
        .chunks(len)
        .cycle()
        .take(n)
        .flatten()
        .copied()
        .collect()
}

fn arr32(b: &[u8]) -> anyhow::Result<[u8; 32]> {
    b.try_into().map_err(|_| anyhow!("a 32-byte seed"))
}

fn code(what: &str) -> impl Fn(i32) -> anyhow::Error + '_ {
    move |c| anyhow!("the reference {what} failed with {c}")
}

fn mlkem_k(alg: Algorithm) -> usize {
    alg.mlkem_params().map(|p| p.k).unwrap_or(0)
}

fn mldsa_level(alg: Algorithm) -> u32 {
    match alg {
        Algorithm::MlDsa44 => 44,
        Algorithm::MlDsa65 => 65,
        _ => 87,
    }
}

/// Slot `i` of `len`-byte slots.
fn slot(buf: &[u8], i: usize, len: usize) -> &[u8] {
    &buf[i * len..(i + 1) * len]
}

/// `got` equals the reference's `want`, else the first differing byte.
fn same(what: &str, i: usize, got: &[u8], want: &[u8]) -> anyhow::Result<()> {
    if let Some(b) = (0..got.len().min(want.len())).find(|&b| got[b] != want[b]) {
        bail!(
            "operation {i}: {what} differs from the reference (pqcprof's host build of FIPS 203/204) at byte {b}: expected 0x{:02x}, got 0x{:02x}",
            want[b],
            got[b]
        );
    }
    ensure!(got.len() == want.len(), "operation {i}: {what} length");
    Ok(())
}

impl Part {
    pub(super) fn new(
        caller: Arc<dyn Caller>,
        alg: Algorithm,
        op: Operation,
        n: usize,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Part> {
        let mut rng = rand_chacha::ChaCha20Rng::from_os_rng();
        let s = alg.sizes();
        let seed_bytes = match op {
            Operation::KeyGen if alg.mlkem_params().is_some() => 64,
            Operation::Verify | Operation::Decaps => 0,
            _ => 32,
        };
        let signs = matches!(op, Operation::Sign | Operation::Verify);
        let mut p = Part {
            caller,
            alg,
            op,
            n,
            seeds: random(&mut rng, seed_bytes * n),
            pk: vec![],
            sk: vec![],
            given: vec![],
            msg: if signs {
                let first = random(&mut rng, cfg.message_size * KEYS.min(n));
                cyclic(first, cfg.message_size, n)
            } else {
                vec![]
            },
            msg_item: cfg.message_size,
            ctx: cfg.context.clone(),
            expected: vec![],
            out_a: vec![],
            out_b: vec![],
        };
        if op != Operation::KeyGen {
            p.make_keys(&mut rng)?;
        }
        p.make_given(&mut rng)?;
        let (a, b) = match op {
            Operation::KeyGen => (s.public_key_bytes, s.secret_key_bytes),
            Operation::Encaps => (s.ciphertext_bytes.unwrap_or(0), 32),
            Operation::Decaps => (32, 0),
            Operation::Sign => (s.signature_bytes.unwrap_or(0), 0),
            Operation::Verify => (1, 0),
        };
        p.out_a = vec![0; a * n];
        p.out_b = vec![0; b * n];
        Ok(p)
    }

    /// `n` public and secret keys, `KEYS` distinct ones in turn.
    fn make_keys(&mut self, rng: &mut rand_chacha::ChaCha20Rng) -> anyhow::Result<()> {
        let mut pairs = vec![];
        for _ in 0..KEYS.min(self.n) {
            let seed = arr32(&random(rng, 32))?;
            pairs.push(match self.alg.mlkem_params() {
                Some(p) => host::mlkem_keygen(p.k, &seed, &arr32(&random(rng, 32))?)
                    .map_err(code("keygen"))?,
                None => host::mldsa_keygen(mldsa_level(self.alg), &seed).map_err(code("keygen"))?,
            });
        }
        for i in 0..self.n {
            let (pk, sk) = &pairs[i % pairs.len()];
            self.pk.extend_from_slice(pk);
            self.sk.extend_from_slice(sk);
        }
        Ok(())
    }

    /// Decaps: ciphertexts and their secrets; verify: valid signatures.
    fn make_given(&mut self, rng: &mut rand_chacha::ChaCha20Rng) -> anyhow::Result<()> {
        let s = self.alg.sizes();
        let distinct = KEYS.min(self.n);
        for i in 0..distinct {
            match self.op {
                Operation::Decaps => {
                    let pk = slot(&self.pk, i, s.public_key_bytes);
                    let m = arr32(&random(rng, 32))?;
                    let (ct, ss) =
                        host::mlkem_encaps(mlkem_k(self.alg), pk, &m).map_err(code("encaps"))?;
                    self.given.extend_from_slice(&ct);
                    self.expected.extend_from_slice(&ss);
                }
                Operation::Verify => {
                    let sk = slot(&self.sk, i, s.secret_key_bytes);
                    let msg = slot(&self.msg, i, self.msg_item);
                    let rnd = arr32(&random(rng, 32))?;
                    let sig = host::mldsa_sign(mldsa_level(self.alg), sk, msg, &self.ctx, &rnd)
                        .map_err(code("sign"))?;
                    self.given.extend_from_slice(&sig);
                }
                _ => return Ok(()),
            }
        }
        // Later items repeat the first ones, each with the same key.
        let per = |buf: &Vec<u8>| buf.len() / distinct;
        let (lg, le) = (per(&self.given), per(&self.expected));
        for i in distinct..self.n {
            let j = i % distinct;
            self.given.extend_from_within(j * lg..(j + 1) * lg);
            self.expected.extend_from_within(j * le..(j + 1) * le);
        }
        Ok(())
    }

    /// Calls the plugin over the whole part with `given` in place of the
    /// part's ciphertexts or signatures (an untimed call with a tampered
    /// one), writing into `out`.
    fn call_with(&self, given: &[u8], out: &mut [u8], n: usize) -> anyhow::Result<()> {
        let bufs = match self.op {
            Operation::Decaps => Buffers::KemDecaps {
                dk: &self.sk[..self.sk.len() / self.n * n],
                c: given,
                k: out,
            },
            _ => Buffers::DsaVerify {
                pk: &self.pk[..self.pk.len() / self.n * n],
                msg: &self.msg[..self.msg_item * n],
                msg_item: self.msg_item,
                ctx: &self.ctx,
                sig: given,
                ok: out,
            },
        };
        self.caller.call(self.alg, self.op, n, bufs)
    }

    /// The buffers of the timed call over the whole part.
    pub(super) fn buffers(&mut self) -> HostBuffers<'_> {
        let kem = self.alg.mlkem_params().is_some();
        match (self.op, kem) {
            (Operation::KeyGen, true) => Buffers::KemKeygen {
                seeds: &self.seeds,
                ek: &mut self.out_a,
                dk: &mut self.out_b,
            },
            (Operation::KeyGen, false) => Buffers::DsaKeygen {
                xi: &self.seeds,
                pk: &mut self.out_a,
                sk: &mut self.out_b,
            },
            (Operation::Encaps, _) => Buffers::KemEncaps {
                ek: &self.pk,
                m: &self.seeds,
                c: &mut self.out_a,
                k: &mut self.out_b,
            },
            (Operation::Decaps, _) => Buffers::KemDecaps {
                dk: &self.sk,
                c: &self.given,
                k: &mut self.out_a,
            },
            (Operation::Sign, _) => Buffers::DsaSign {
                sk: &self.sk,
                msg: &self.msg,
                msg_item: self.msg_item,
                ctx: &self.ctx,
                rnd: &self.seeds,
                sig: &mut self.out_a,
            },
            (Operation::Verify, _) => Buffers::DsaVerify {
                pk: &self.pk,
                msg: &self.msg,
                msg_item: self.msg_item,
                ctx: &self.ctx,
                sig: &self.given,
                ok: &mut self.out_a,
            },
        }
    }
}

impl Chunk for Part {
    fn run(&mut self) -> anyhow::Result<()> {
        let (caller, alg, op, n) = (self.caller.clone(), self.alg, self.op, self.n);
        caller.call(alg, op, n, self.buffers())
    }
}

impl Part {
    /// The gate over this part; the checks made, one line each.
    pub(super) fn check(&self) -> anyhow::Result<Vec<String>> {
        let idx = sample_indices(self.n, MIN_SAMPLE);
        let s = self.alg.sizes();
        let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
        let pick = |buf: &[u8], len: usize| gate::pick(buf, &idx, len);
        match (self.op, self.alg.mlkem_params()) {
            (Operation::KeyGen, Some(p)) => {
                for &i in &idx {
                    let d = arr32(&self.seeds[i * 64..i * 64 + 32])?;
                    let z = arr32(&self.seeds[i * 64 + 32..i * 64 + 64])?;
                    let (pk, sk) = host::mlkem_keygen(p.k, &d, &z).map_err(code("keygen"))?;
                    same("ek", i, slot(&self.out_a, i, lpk), &pk)?;
                    same("dk", i, slot(&self.out_b, i, lsk), &sk)?;
                }
                gate::mlkem_keypairs_round_trip(
                    self.alg,
                    &idx,
                    &pick(&self.out_a, lpk),
                    &pick(&self.out_b, lsk),
                )?;
                Ok(vec!["sampled (ek, dk) equal the reference's for the same d || z, byte for byte; liboqs round trip on each".into()])
            }
            (Operation::Encaps, Some(p)) => {
                let lct = s.ciphertext_bytes.unwrap_or(0);
                for &i in &idx {
                    let m = arr32(slot(&self.seeds, i, 32))?;
                    let (ct, ss) = host::mlkem_encaps(p.k, slot(&self.pk, i, lpk), &m)
                        .map_err(code("encaps"))?;
                    same("c", i, slot(&self.out_a, i, lct), &ct)?;
                    same("K", i, slot(&self.out_b, i, 32), &ss)?;
                }
                gate::mlkem_ciphertexts_decapsulate(
                    self.alg,
                    &idx,
                    &self.sk,
                    &pick(&self.out_a, lct),
                    &pick(&self.out_b, 32),
                )?;
                Ok(vec!["sampled (c, K) equal the reference's for the same m, byte for byte; liboqs decapsulates each to K".into()])
            }
            (Operation::Decaps, Some(p)) => self.check_decaps(p.k, &idx),
            (Operation::KeyGen, None) => {
                for &i in &idx {
                    let xi = arr32(slot(&self.seeds, i, 32))?;
                    let (pk, sk) =
                        host::mldsa_keygen(mldsa_level(self.alg), &xi).map_err(code("keygen"))?;
                    same("pk", i, slot(&self.out_a, i, lpk), &pk)?;
                    same("sk", i, slot(&self.out_b, i, lsk), &sk)?;
                }
                gate::mldsa_keypairs_sign(
                    self.alg,
                    &idx,
                    &pick(&self.out_a, lpk),
                    &pick(&self.out_b, lsk),
                    b"pqcprof",
                    &[],
                )?;
                Ok(vec!["sampled (pk, sk) equal the reference's for the same xi, byte for byte; a liboqs signature with each verifies".into()])
            }
            (Operation::Sign, None) => {
                let lsig = s.signature_bytes.unwrap_or(0);
                for &i in &idx {
                    let rnd = arr32(slot(&self.seeds, i, 32))?;
                    let msg = slot(&self.msg, i, self.msg_item);
                    let sig = host::mldsa_sign(
                        mldsa_level(self.alg),
                        slot(&self.sk, i, lsk),
                        msg,
                        &self.ctx,
                        &rnd,
                    )
                    .map_err(code("sign"))?;
                    same("signature", i, slot(&self.out_a, i, lsig), &sig)?;
                }
                let m = self.msg_item;
                gate::mldsa_signatures_verify(
                    self.alg,
                    &idx,
                    &self.pk,
                    &self.msg,
                    m,
                    m,
                    &self.ctx,
                    &pick(&self.out_a, lsig),
                    lsig,
                )?;
                Ok(vec!["sampled signatures equal the reference's for the same rnd, byte for byte; liboqs verifies each and rejects a flipped bit".into()])
            }
            (Operation::Verify, None) => self.check_verify(),
            (op, _) => bail!("{op} is not an operation of {}", self.alg),
        }
    }

    /// Decaps: each secret the reference's; a flipped ciphertext bit gives
    /// the implicit-rejection key (the reference's and liboqs's).
    fn check_decaps(&self, k: usize, idx: &[usize]) -> anyhow::Result<Vec<String>> {
        let lct = self.alg.sizes().ciphertext_bytes.unwrap_or(0);
        let lsk = self.alg.sizes().secret_key_bytes;
        for &i in idx {
            same(
                "K",
                i,
                slot(&self.out_a, i, 32),
                slot(&self.expected, i, 32),
            )?;
        }
        let mut bad = self.given[..lct].to_vec();
        bad[lct / 2] ^= 0x01;
        let mut got = vec![0u8; 32];
        self.call_with(&bad, &mut got, 1)
            .context("the untimed call with a tampered ciphertext")?;
        let want = host::mlkem_decaps(k, &bad, &self.sk[..lsk]).map_err(code("decaps"))?;
        same(
            "K of a tampered ciphertext (implicit rejection)",
            0,
            &got,
            &want,
        )?;
        gate::mlkem_decaps(
            self.alg,
            &[0],
            &self.sk[..lsk],
            &bad,
            &self.expected[..32],
            &[0],
            &got,
        )?;
        Ok(vec![
            "sampled K equal the secrets the reference encapsulated, byte for byte".into(),
            "a flipped ciphertext bit gives the implicit-rejection key (the reference's and liboqs's)".into(),
        ])
    }

    /// Verify: every valid signature accepted, a flipped bit rejected.
    fn check_verify(&self) -> anyhow::Result<Vec<String>> {
        if let Some(i) = self.out_a.iter().position(|&v| v != 1) {
            bail!(
                "operation {i}: a valid signature was not accepted: expected ok = 1, got {}",
                self.out_a[i]
            );
        }
        let lsig = self.alg.sizes().signature_bytes.unwrap_or(0);
        let mut bad = self.given[..lsig].to_vec();
        bad[lsig / 2] ^= 0x01;
        let mut ok = [9u8];
        self.call_with(&bad, &mut ok, 1)
            .context("the untimed call with a tampered signature")?;
        ensure!(
            ok[0] == 0,
            "operation 0 with a flipped signature bit: expected ok = 0 (rejected), got {}",
            ok[0]
        );
        Ok(vec![
            "every valid signature of the batch accepted".into(),
            "a signature with a flipped bit rejected".into(),
        ])
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
            .map(|n| Part::new(caller.clone(), alg, op, n, cfg))
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("preparing {label}"))?;
        Ok(HostBatch {
            parts,
            pinning: None,
            label,
        })
    }
}

impl Prepared for HostBatch {
    fn run(&mut self) -> anyhow::Result<Duration> {
        let r = run_chunks(&mut self.parts)?;
        self.pinning = r.pinning;
        Ok(r.window)
    }
    fn check(&mut self) -> anyhow::Result<GateReport> {
        let mut report = GateReport {
            checked_ops: 0,
            checks: vec![],
        };
        for (t, p) in self.parts.iter().enumerate() {
            let checks = p
                .check()
                .with_context(|| format!("{} gate (thread {t})", self.label))?;
            report.checked_ops += sample_indices(p.n, MIN_SAMPLE).len();
            if report.checks.is_empty() {
                report.checks = checks;
            }
        }
        Ok(report)
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
