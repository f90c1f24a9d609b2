//! A plugin as a subject of the vector runner (`check --plugin PATH`):
//! each case is asked inside a batch, at a position drawn at random among
//! items the reference made (for a verification, one valid signature and
//! one invalid), each of which must be answered as the reference does, so
//! that an implementation cannot answer a batch otherwise than it answers
//! one item. The randomness the vector gives is passed as the plugin's
//! inputs.
//!
//! An operation that draws its own randomness (ABI 1.1) cannot give a
//! vector's output: its cases are asked only where the answer does not
//! depend on the randomness (an input the reference refuses, which it must
//! refuse too), the rest are not applicable with the reason; its fillers are
//! judged by round trip. Such a plugin also gets the round-trip groups
//! ([`round_trip_groups`]): its keys, ciphertexts and signatures against the
//! reference's, and the reference's against it.

use super::case::{
    judge_round_trip, na, Case, DsaForm, Group, Op, SignInput, Subject, VerifyInput,
};
use crate::backend::gate::reference::{self, Sampled};
use crate::backend::gate::slots::Slots;
use crate::backend::native_gpu::host_checked as host;
use crate::backend::plugin::batch::Caller;
use crate::backend::plugin::ffi::{Buffers, HostBuffers};
use crate::backend::plugin::{Offer, PluginInfo};
use crate::core::catalog::{Algorithm, Operation};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// What a loaded plugin is and offers, in a few lines.
pub fn describe(i: &PluginInfo, offers: &[Offer]) -> String {
    let sets: Vec<String> = offers
        .iter()
        .map(|o| {
            let ops: Vec<&str> = Operation::ALL
                .iter()
                .filter(|&&op| o.has(op))
                .map(|op| op.cli_name())
                .collect();
            format!("{} ({})", o.alg, ops.join(", "))
        })
        .collect();
    let own = i.own_randomness_text().map_or(String::new(), |t| {
        format!("\n  {t}: those operations' vectors are asked only where the answer does not depend on the randomness (a refusal), the rest not applicable; the pqcprof round-trip groups below judge them: its keys, ciphertexts and signatures against the reference and the reference's against it")
    });
    format!(
        "plugin {} {}: ABI version {}, {} memory, {}\n  file {} (SHA-256 {})\n  implements {}\n  sizes checked against FIPS 203/204: all agree{own}",
        i.name,
        i.version,
        i.abi(),
        i.memory.name(),
        if i.thread_safe { "thread-safe" } else { "one thread only" },
        i.path,
        i.sha256,
        sets.join("; ")
    )
}

/// How the ABI lets a batched call refuse one item's input (an ML-KEM key
/// failing FIPS 203's input check) without failing the batch: that item's
/// outputs all zero, read here as a refusal.
fn refused(outputs: &[&[u8]]) -> Result<(), String> {
    if outputs.iter().all(|o| super::case::all_zero(o)) {
        return Err("refused the input (its outputs all zero, as the ABI has it)".into());
    }
    Ok(())
}

/// How the vectors' tables name a plugin.
pub fn label(i: &PluginInfo) -> String {
    format!(
        "plugin {} {} ({}, {} memory)",
        i.name,
        i.version,
        i.path,
        i.memory.name()
    )
}

/// Items in the batch each case is asked in: the case and the reference's
/// fillers around it.
pub const CASE_BATCH: usize = 3;

/// One filler item: its inputs in the ABI's order, the outputs the
/// reference gives for them, and the other half of its key pair (encaps:
/// dk; sign: pk) to judge by round trip an operation that draws its own
/// randomness.
struct Filler {
    ins: Vec<Vec<u8>>,
    want: Vec<Vec<u8>>,
    pair: Vec<u8>,
}

/// Whether `got`, the outputs of an operation that draws its own
/// randomness for the filler `f`, come back by round trip: the reference
/// decapsulates c to K under the filler's dk; the reference verifies the
/// signature under its pk.
fn filler_round_trips(
    alg: Algorithm,
    op: Operation,
    f: &Filler,
    got: &[&[u8]],
    ctx: &[u8],
) -> bool {
    match op {
        Operation::Encaps => host::mlkem_decaps(alg, &f.pair, got[0]).is_ok_and(|k| k == got[1]),
        Operation::Sign => {
            host::mldsa_verify(alg, DsaForm::Pure, &f.pair, &f.ins[1], ctx, got[0]).unwrap_or(false)
        }
        _ => false,
    }
}

/// What fillers are made for: an operation of a set, a message length and
/// a context (a batch has one of each).
type FillerKey = (Algorithm, Operation, usize, Vec<u8>);

/// A loaded plugin under the vectors, called through `caller` (device
/// copies for a device plugin).
pub struct PluginSubject {
    caller: Arc<dyn Caller>,
    /// The two fillers of each kind of batch, made once by the reference.
    fillers: HashMap<FillerKey, Rc<[Filler; 2]>>,
}

impl PluginSubject {
    /// The plugin behind `caller`.
    pub fn new(caller: Arc<dyn Caller>) -> Self {
        PluginSubject {
            caller,
            fillers: HashMap::new(),
        }
    }
}

fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut v);
    v
}

/// The reference's two filler items of `key`: random inputs around one
/// fixed key pair (for decapsulation one valid ciphertext and one
/// tampered; for verification one valid signature and one with a flipped
/// bit).
fn make_fillers(key: &FillerKey) -> Result<[Filler; 2], String> {
    let (alg, op, ml, ctx) = (key.0, key.1, key.2, &key.3);
    let kem = alg.mlkem_params().is_some();
    let (rpk, rsk) = match kem {
        true => host::mlkem_keygen_seed(alg, &[0x5A; 64])?,
        false => host::mldsa_keygen_seed(alg, &[0x5A; 32])?,
    };
    let one = |j: usize| -> Result<Filler, String> {
        Ok(match (op, kem) {
            (Operation::KeyGen, true) => {
                let seed = random(64);
                let (ek, dk) = host::mlkem_keygen_seed(alg, &seed)?;
                Filler {
                    ins: vec![seed],
                    want: vec![ek, dk],
                    pair: vec![],
                }
            }
            (Operation::KeyGen, false) => {
                let xi = random(32);
                let (pk, sk) = host::mldsa_keygen_seed(alg, &xi)?;
                Filler {
                    ins: vec![xi],
                    want: vec![pk, sk],
                    pair: vec![],
                }
            }
            (Operation::Encaps, _) => {
                let m = random(32);
                let (c, k) = host::mlkem_encaps(alg, &rpk, &m)?;
                Filler {
                    ins: vec![rpk.clone(), m],
                    want: vec![c, k],
                    pair: rsk.clone(),
                }
            }
            (Operation::Decaps, _) => {
                let (mut c, _) = host::mlkem_encaps(alg, &rpk, &random(32))?;
                if j == 1 {
                    let at = c.len() / 3;
                    c[at] ^= 0x04;
                }
                let k = host::mlkem_decaps(alg, &rsk, &c)?;
                Filler {
                    ins: vec![rsk.clone(), c],
                    want: vec![k],
                    pair: vec![],
                }
            }
            (Operation::Sign, _) => {
                let (msg, rnd) = (random(ml), random(32));
                let sig = host::mldsa_sign(alg, DsaForm::Pure, &rsk, &msg, ctx, &rnd)?;
                Filler {
                    ins: vec![rsk.clone(), msg, rnd],
                    want: vec![sig],
                    pair: rpk.clone(),
                }
            }
            (Operation::Verify, _) => {
                let msg = random(ml);
                let mut sig = host::mldsa_sign(alg, DsaForm::Pure, &rsk, &msg, ctx, &[0; 32])?;
                if j == 1 {
                    sig[0] ^= 0x01;
                }
                Filler {
                    ins: vec![rpk.clone(), msg, sig],
                    want: vec![vec![u8::from(j == 0)]],
                    pair: vec![],
                }
            }
        })
    };
    Ok([one(0)?, one(1)?])
}

/// The ABI's buffers of `op` over `ins` and `outs`.
fn buffers<'a>(
    alg: Algorithm,
    op: Operation,
    ins: &'a [Vec<u8>],
    outs: &'a mut [Vec<u8>],
    ml: usize,
    ctx: &'a [u8],
) -> HostBuffers<'a> {
    let mut o = outs.iter_mut().map(|v| &mut v[..]);
    let mut out = || o.next().expect("an output of this operation");
    match (op, alg.mlkem_params().is_some()) {
        (Operation::KeyGen, true) => Buffers::KemKeygen {
            seeds: &ins[0],
            ek: out(),
            dk: out(),
        },
        (Operation::KeyGen, false) => Buffers::DsaKeygen {
            xi: &ins[0],
            pk: out(),
            sk: out(),
        },
        (Operation::Encaps, _) => Buffers::KemEncaps {
            ek: &ins[0],
            m: &ins[1],
            c: out(),
            k: out(),
        },
        (Operation::Decaps, _) => Buffers::KemDecaps {
            dk: &ins[0],
            c: &ins[1],
            k: out(),
        },
        (Operation::Sign, _) => Buffers::DsaSign {
            sk: &ins[0],
            msg: &ins[1],
            msg_item: ml,
            ctx,
            rnd: &ins[2],
            sig: out(),
        },
        (Operation::Verify, _) => Buffers::DsaVerify {
            pk: &ins[0],
            msg: &ins[1],
            msg_item: ml,
            ctx,
            sig: &ins[2],
            ok: out(),
        },
    }
}

impl PluginSubject {
    /// Asks the case (`case`: its inputs in the ABI's order, each of the
    /// standard's length) in a batch of [`CASE_BATCH`] at a random
    /// position among the reference's fillers, whose answers must be the
    /// reference's; the case's outputs (`lens` bytes each). Inputs of
    /// another length, which no batch can hold, are asked alone (the
    /// plugin call refuses them as it would any).
    fn ask(
        &mut self,
        alg: Algorithm,
        op: Operation,
        case: &[&[u8]],
        lens: (&[usize], &[usize]),
        ml: usize,
        ctx: &[u8],
    ) -> Op<Vec<Vec<u8>>> {
        if !self.caller.plugin().supports(alg, op) {
            return na(&format!("the plugin does not implement {alg} {op}"));
        }
        let (in_lens, out_lens) = lens;
        let batched = ctx.len() <= 255 && case.iter().zip(in_lens).all(|(c, &l)| c.len() == l);
        let key: FillerKey = (alg, op, ml, ctx.to_vec());
        let fillers = match (batched, self.fillers.get(&key)) {
            (false, _) => None,
            (true, Some(f)) => Some(f.clone()),
            (true, None) => match make_fillers(&key) {
                Ok(f) => {
                    let f = Rc::new(f);
                    self.fillers.insert(key, f.clone());
                    Some(f)
                }
                Err(e) => return Ok(Err(e)),
            },
        };
        let at = rand::Rng::random_range(&mut rand::rng(), 0..CASE_BATCH);
        let n = if fillers.is_some() { CASE_BATCH } else { 1 };
        // Batch position i holds the case (i == at) or filler j.
        let who = |i: usize| -> Option<usize> {
            match i.cmp(&at) {
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Less => Some(i),
                std::cmp::Ordering::Greater => Some(i - 1),
            }
        };
        let ins: Vec<Vec<u8>> = match &fillers {
            None => case.iter().map(|c| c.to_vec()).collect(),
            Some(f) => (0..case.len())
                .map(|k| {
                    (0..CASE_BATCH)
                        .flat_map(|i| match who(i) {
                            None => case[k].to_vec(),
                            Some(j) => f[j].ins[k].clone(),
                        })
                        .collect()
                })
                .collect(),
        };
        let mut outs: Vec<Vec<u8>> = out_lens.iter().map(|&l| vec![0x77; l * n]).collect();
        let called = self
            .caller
            .call(alg, op, n, buffers(alg, op, &ins, &mut outs, ml, ctx))
            .map_err(|e| format!("{e:#}"));
        if let Err(e) = called {
            return Ok(Err(e));
        }
        let item = |k: usize, i: usize| &outs[k][i * out_lens[k]..(i + 1) * out_lens[k]];
        let own = self.caller.plugin().info.draws_own(alg, op);
        if let (Some(f), true) = (&fillers, own) {
            for i in 0..CASE_BATCH {
                let Some(j) = who(i) else { continue };
                let got: Vec<&[u8]> = (0..outs.len()).map(|k| item(k, i)).collect();
                if !filler_round_trips(alg, op, &f[j], &got, ctx) {
                    return Ok(Err(format!(
                        "the case was asked in a batch of {CASE_BATCH} (at a position drawn at random), and the plugin's output for the reference's item at position {i} does not come back by round trip ({})",
                        if op == Operation::Encaps { "the reference decapsulates its c to another secret than its K" } else { "the reference rejects its signature" }
                    )));
                }
            }
        } else if let Some(f) = &fillers {
            for i in 0..CASE_BATCH {
                let Some(j) = who(i) else { continue };
                if let Some(k) = (0..outs.len()).find(|&k| item(k, i) != f[j].want[k]) {
                    return Ok(Err(format!(
                        "the case was asked in a batch of {CASE_BATCH} (at a position drawn at random), and the plugin's output {k} for the reference's item at position {i} differs from the reference's{}",
                        if op == Operation::Verify { " (a valid signature rejected, or one with a flipped bit accepted)" } else { "" }
                    )));
                }
            }
        }
        let mine = if fillers.is_some() { at } else { 0 };
        Ok(Ok((0..outs.len())
            .map(|k| item(k, mine).to_vec())
            .collect()))
    }

    fn only_pure<T>(form: DsaForm) -> Option<Op<T>> {
        (form != DsaForm::Pure).then(|| na("the plugin ABI has the pure form only"))
    }

    /// Whether the plugin draws the randomness of `op` of `alg` itself.
    fn own(&self, alg: Algorithm, op: Operation) -> bool {
        self.caller.plugin().info.draws_own(alg, op)
    }

    /// The outputs of an operation that draws its own randomness, asked a
    /// case: a refusal is the answer (right where the vector expects one);
    /// outputs for an input the reference refuses too are the answer (the
    /// judge fails them); otherwise no vector can say what they should be.
    fn own_answer<T>(
        &self,
        alg: Algorithm,
        op: Operation,
        got: Op<Vec<Vec<u8>>>,
        reference_refuses: bool,
        pack: impl FnOnce(Vec<Vec<u8>>) -> T,
    ) -> Op<T> {
        match got? {
            Err(e) => Ok(Err(e)),
            Ok(v) => {
                let outs: Vec<&[u8]> = v.iter().map(|o| &o[..]).collect();
                if let Err(e) = refused(&outs) {
                    return Ok(Err(e));
                }
                if reference_refuses {
                    return Ok(Ok(pack(v)));
                }
                na(&own_reason(alg, op))
            }
        }
    }
}

/// Why a case of an operation that draws its own randomness is not
/// applicable.
fn own_reason(alg: Algorithm, op: Operation) -> String {
    format!(
        "the plugin draws its own randomness for {} {} (ABI 1.1): no output from the vector's randomness to compare; judged by the round-trip groups",
        alg.family().name(),
        op.cli_name()
    )
}

/// The source name of the round-trip groups in the tables.
pub const ROUND_TRIP_SOURCE: &str = "round trip";

/// What the round-trip groups are, where a source has its version.
pub const ROUND_TRIP_VERSION: &str =
    "pqcprof's round trips with its reference (keys, messages and randomness drawn afresh each case)";

/// Round trips in each of the round-trip groups.
pub const ROUND_TRIP_CASES: u64 = 8;

/// Items in each batched call of a round trip.
const ROUND_TRIP_BATCH: usize = 2;

/// The reference's key generation from a seed: (public, secret).
type ReferenceKeygen = fn(Algorithm, &[u8]) -> Result<(Vec<u8>, Vec<u8>), String>;

/// The round trip's outputs of `op` (every item of `ROUND_TRIP_BATCH`)
/// judged as the gate judges them ([`reference::check`]).
fn round_trip_gate(alg: Algorithm, op: Operation, sampled: &Sampled<'_>) -> Result<(), String> {
    let items: Vec<usize> = (0..ROUND_TRIP_BATCH).collect();
    reference::check(alg, op, &items, sampled, true)
        .map(|_| ())
        .map_err(|e| {
            format!(
                "the plugin's {} {} judged as the gate judges it: {e:#}",
                alg,
                op.cli_name()
            )
        })
}

/// One group per parameter set for a plugin that draws its own randomness
/// (ABI 1.1), each of [`ROUND_TRIP_CASES`] round trips
/// ([`Subject::round_trip`]); made once a process. Their indices in a
/// worker's request follow the vector groups'.
pub fn round_trip_groups() -> &'static [Group] {
    static GROUPS: std::sync::OnceLock<Vec<Group>> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| {
        Algorithm::ALL
            .into_iter()
            .map(|alg| Group {
                source: ROUND_TRIP_SOURCE,
                name: format!("{alg} round trip with the reference"),
                alg,
                cases: (1..=ROUND_TRIP_CASES)
                    .map(|id| Case {
                        id,
                        invalid: false,
                        run: Box::new(move |s: &mut dyn Subject| {
                            judge_round_trip(s.round_trip(alg))
                        }),
                    })
                    .collect(),
            })
            .collect()
    })
}

/// Whether a plugin gets the round-trip groups: it draws its own
/// randomness for some operation.
pub fn has_round_trips(info: &PluginInfo) -> bool {
    !info.own_randomness.is_empty()
}

fn flip(v: &mut [u8]) {
    let at = rand::Rng::random_range(&mut rand::rng(), 0..v.len());
    v[at] ^= 1 << rand::Rng::random_range(&mut rand::rng(), 0..8u32);
}

impl PluginSubject {
    /// Calls `op` over `n` items (`ins` in the ABI's order, each `n` items
    /// back to back), its outputs of `out_lens` bytes an item.
    fn call_n(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        ins: &[Vec<u8>],
        out_lens: &[usize],
        (ml, ctx): (usize, &[u8]),
    ) -> Result<Vec<Vec<u8>>, String> {
        let mut outs: Vec<Vec<u8>> = out_lens.iter().map(|&l| vec![0x77; l * n]).collect();
        self.caller
            .call(alg, op, n, buffers(alg, op, ins, &mut outs, ml, ctx))
            .map_err(|e| format!("the plugin's {} {}: {e:#}", alg, op.cli_name()))?;
        Ok(outs)
    }

    /// A round trip's `ROUND_TRIP_BATCH` key pairs (public, secret) and
    /// whose they are: the plugin's, from seeds of `seed_len` bytes, judged
    /// as the gate judges key generation (`keygen` builds its sample), or
    /// the reference's (`reference`) where the plugin has no key generation.
    fn round_trip_keys(
        &self,
        alg: Algorithm,
        seed_len: usize,
        keygen: for<'a> fn(Slots<'a>, Slots<'a>) -> Sampled<'a>,
        reference: ReferenceKeygen,
    ) -> Result<(Vec<u8>, Vec<u8>, &'static str), String> {
        let s = alg.sizes();
        let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
        let n = ROUND_TRIP_BATCH;
        if !self.caller.plugin().supports(alg, Operation::KeyGen) {
            let (mut pk, mut sk) = (vec![], vec![]);
            for _ in 0..n {
                let (a, b) = reference(alg, &random(seed_len))?;
                pk.extend(a);
                sk.extend(b);
            }
            return Ok((pk, sk, "the reference's"));
        }
        let mut v = self.call_n(
            alg,
            Operation::KeyGen,
            n,
            &[random(seed_len * n)],
            &[lpk, lsk],
            (0, &[]),
        )?;
        let sk = v.pop().unwrap_or_default();
        let pk = v.pop().unwrap_or_default();
        round_trip_gate(
            alg,
            Operation::KeyGen,
            &keygen(Slots::packed(&pk, lpk), Slots::packed(&sk, lsk)),
        )?;
        Ok((pk, sk, "the plugin's"))
    }

    /// ML-KEM: the plugin's key pairs (the reference's where it has no key
    /// generation) judged as the gate judges them ([`reference::check`]:
    /// liboqs encapsulates to each ek and the dk gives the same secret, by
    /// liboqs and the reference); the plugin decapsulates the reference's
    /// encapsulations to them to the reference's secret; its own
    /// encapsulations to them judged as the gate does (the reference
    /// decapsulates each c under the key pair's dk to its K, not with a
    /// flipped bit; liboqs agrees), and its implicit rejection of each
    /// with a bit flipped is the reference's.
    fn kem_round_trip(&self, alg: Algorithm) -> Result<(), String> {
        let s = alg.sizes();
        let (lpk, lsk, lct) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.ciphertext_bytes.unwrap_or(0),
        );
        let n = ROUND_TRIP_BATCH;
        let gate = |op, sampled: &Sampled<'_>| round_trip_gate(alg, op, sampled);
        let has = |op| self.caller.plugin().supports(alg, op);
        let (ek, dk, whose) = self.round_trip_keys(
            alg,
            64,
            |ek, dk| Sampled::KemKeygen {
                seeds: None,
                ek,
                dk,
            },
            host::mlkem_keygen_seed,
        )?;
        let dk_i = |i: usize| &dk[i * lsk..(i + 1) * lsk];
        if has(Operation::Decaps) {
            let (mut rc, mut rk) = (vec![], vec![]);
            for i in 0..n {
                let (c, k) = host::mlkem_encaps(alg, &ek[i * lpk..(i + 1) * lpk], &random(32))
                    .map_err(|e| format!("item {i}: the reference refuses {whose} ek: {e}"))?;
                rc.extend(c);
                rk.extend(k);
            }
            let v = self.call_n(
                alg,
                Operation::Decaps,
                n,
                &[dk.clone(), rc],
                &[32],
                (0, &[]),
            )?;
            if v[0] != rk {
                return Err(format!("the plugin decapsulates the reference's ciphertexts to {whose} keys to another secret than the reference's"));
            }
        }
        if has(Operation::Encaps) {
            let v = self.call_n(
                alg,
                Operation::Encaps,
                n,
                &[ek.clone(), random(32 * n)],
                &[lct, 32],
                (0, &[]),
            )?;
            gate(
                Operation::Encaps,
                &Sampled::KemEncaps {
                    ek: Slots::packed(&ek, lpk),
                    m: None,
                    dk: Some(Slots::packed(&dk, lsk)),
                    c: Slots::packed(&v[0], lct),
                    k: Slots::packed(&v[1], 32),
                },
            )?;
            if has(Operation::Decaps) {
                let (mut tampered, mut rejections) = (vec![], vec![]);
                for i in 0..n {
                    let mut bad = v[0][i * lct..(i + 1) * lct].to_vec();
                    flip(&mut bad);
                    rejections.extend(host::mlkem_decaps(alg, dk_i(i), &bad)?);
                    tampered.extend(bad);
                }
                let w = self.call_n(
                    alg,
                    Operation::Decaps,
                    n,
                    &[dk.clone(), tampered],
                    &[32],
                    (0, &[]),
                )?;
                if w[0] != rejections {
                    return Err("the plugin's implicit rejection of its own ciphertexts with a flipped bit differs from the reference's".into());
                }
            }
        }
        Ok(())
    }

    /// ML-DSA: the plugin's key pairs (the reference's where it has no key
    /// generation) judged as the gate judges them (a liboqs signature with
    /// each sk verifies under its pk, by liboqs and the reference); its
    /// signatures judged as the gate does (the reference verifies each,
    /// and rejects it with a flipped bit; liboqs agrees); it accepts the
    /// reference's signatures with its keys and rejects them with a flipped
    /// bit.
    fn dsa_round_trip(&self, alg: Algorithm) -> Result<(), String> {
        let s = alg.sizes();
        let (lpk, lsk, lsig) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.signature_bytes.unwrap_or(0),
        );
        let n = ROUND_TRIP_BATCH;
        // The empty context, which every ML-DSA API offers (the vectors
        // ask the others).
        let (ml, ctx): (usize, &[u8]) = (48, b"");
        let gate = |op, sampled: &Sampled<'_>| round_trip_gate(alg, op, sampled);
        let has = |op| self.caller.plugin().supports(alg, op);
        let (pk, sk, whose) = self.round_trip_keys(
            alg,
            32,
            |pk, sk| Sampled::DsaKeygen { xi: None, pk, sk },
            host::mldsa_keygen_seed,
        )?;
        let msg = random(ml * n);
        if has(Operation::Sign) {
            let v = self.call_n(
                alg,
                Operation::Sign,
                n,
                &[sk.clone(), msg.clone(), random(32 * n)],
                &[lsig],
                (ml, ctx),
            )?;
            gate(
                Operation::Sign,
                &Sampled::DsaSign {
                    sk: Slots::packed(&sk, lsk),
                    pk: Some(Slots::packed(&pk, lpk)),
                    msg: Slots::packed(&msg, ml),
                    ctx,
                    rnd: None,
                    sig: Slots::packed(&v[0], lsig),
                },
            )?;
        }
        if has(Operation::Verify) {
            // The reference's signatures with the key pairs, then the same
            // with a bit flipped.
            let mut good = vec![];
            for i in 0..n {
                let g = host::mldsa_sign(
                    alg,
                    DsaForm::Pure,
                    &sk[i * lsk..(i + 1) * lsk],
                    &msg[i * ml..(i + 1) * ml],
                    ctx,
                    &random(32),
                )
                .map_err(|e| {
                    format!("item {i}: the reference refuses to sign with {whose} sk: {e}")
                })?;
                good.extend(g);
            }
            let mut bad = good.clone();
            for i in 0..n {
                flip(&mut bad[i * lsig..(i + 1) * lsig]);
            }
            let twice = |b: &[u8]| [b, b].concat();
            let sigs = [good, bad].concat();
            let v = self.call_n(
                alg,
                Operation::Verify,
                2 * n,
                &[twice(&pk), twice(&msg), sigs],
                &[1],
                (ml, ctx),
            )?;
            let want: Vec<u8> = (0..2 * n).map(|i| u8::from(i < n)).collect();
            if v[0] != want {
                return Err(format!("the plugin's verdicts on the reference's signatures with {whose} keys (valid, then with a flipped bit) are {:?}, expected {want:?}", v[0]));
            }
        }
        Ok(())
    }
}

/// Two outputs as a pair.
fn pair(mut v: Vec<Vec<u8>>) -> (Vec<u8>, Vec<u8>) {
    let b = v.pop().unwrap_or_default();
    (v.pop().unwrap_or_default(), b)
}

impl Subject for PluginSubject {
    fn label(&self) -> String {
        label(&self.caller.plugin().info)
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        if self.own(alg, Operation::KeyGen) && self.caller.plugin().supports(alg, Operation::KeyGen)
        {
            return na(&own_reason(alg, Operation::KeyGen));
        }
        let s = alg.sizes();
        let lens: (&[usize], &[usize]) = (&[64], &[s.public_key_bytes, s.secret_key_bytes]);
        let r = self.ask(alg, Operation::KeyGen, &[seed], lens, 0, &[]);
        r.map(|x| x.map(pair))
    }
    fn kem_encaps(&mut self, alg: Algorithm, ek: &[u8], m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let s = alg.sizes();
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let lens: (&[usize], &[usize]) = (&[s.public_key_bytes, 32], &[lct, 32]);
        let r = self.ask(alg, Operation::Encaps, &[ek, m], lens, 0, &[]);
        if self.own(alg, Operation::Encaps) {
            let refuses = host::mlkem_encaps(alg, ek, &[0; 32]).is_err();
            return self.own_answer(alg, Operation::Encaps, r, refuses, pair);
        }
        // The ABI's per-item refusal: c and K all zero.
        r.map(|x| {
            x.and_then(|v| {
                refused(&[&v[0], &v[1]])?;
                Ok(pair(v))
            })
        })
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        let s = alg.sizes();
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let lens: (&[usize], &[usize]) = (&[s.secret_key_bytes, lct], &[32]);
        let r = self.ask(alg, Operation::Decaps, &[dk, c], lens, 0, &[]);
        r.map(|x| {
            x.and_then(|mut v| {
                refused(&[&v[0]])?;
                Ok(v.remove(0))
            })
        })
    }
    fn dsa_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        if self.own(alg, Operation::KeyGen) && self.caller.plugin().supports(alg, Operation::KeyGen)
        {
            return na(&own_reason(alg, Operation::KeyGen));
        }
        let s = alg.sizes();
        let lens: (&[usize], &[usize]) = (&[32], &[s.public_key_bytes, s.secret_key_bytes]);
        let r = self.ask(alg, Operation::KeyGen, &[seed], lens, 0, &[]);
        r.map(|x| x.map(pair))
    }
    fn dsa_sign(&mut self, alg: Algorithm, form: DsaForm, i: &SignInput) -> Op<Vec<u8>> {
        if let Some(n) = Self::only_pure(form) {
            return n;
        }
        let s = alg.sizes();
        let ml = i.msg.len();
        let lens: (&[usize], &[usize]) = (
            &[s.secret_key_bytes, ml, 32],
            &[s.signature_bytes.unwrap_or(0)],
        );
        let case: [&[u8]; 3] = [&i.sk, &i.msg, &i.rnd];
        let r = self.ask(alg, Operation::Sign, &case, lens, ml, &i.ctx);
        if self.own(alg, Operation::Sign) {
            let refuses =
                host::mldsa_sign(alg, DsaForm::Pure, &i.sk, &i.msg, &i.ctx, &[0; 32]).is_err();
            return self.own_answer(alg, Operation::Sign, r, refuses, |mut v| v.remove(0));
        }
        r.map(|x| x.map(|mut v| v.remove(0)))
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        // Credited only with what it offers: the rejections below are made
        // without a call.
        if !self.caller.plugin().supports(alg, Operation::Verify) {
            return na(&format!(
                "the plugin does not implement {alg} {}",
                Operation::Verify
            ));
        }
        if let Some(n) = Self::only_pure(form) {
            return n;
        }
        let s = alg.sizes();
        let lsig = s.signature_bytes.unwrap_or(0);
        // A signature or key of another length, or a context over 255
        // bytes, is rejected without a call: the ABI's buffers have the
        // standard's sizes.
        if i.sig.len() != lsig || i.pk.len() != s.public_key_bytes || i.ctx.len() > 255 {
            return Ok(Ok(false));
        }
        let ml = i.msg.len();
        let lens: (&[usize], &[usize]) = (&[s.public_key_bytes, ml, lsig], &[1]);
        let case: [&[u8]; 3] = [&i.pk, &i.msg, &i.sig];
        let r = self.ask(alg, Operation::Verify, &case, lens, ml, &i.ctx);
        r.map(|x| x.map(|v| v[0][0] == 1))
    }
    fn round_trip(&mut self, alg: Algorithm) -> Op<()> {
        if !self.caller.plugin().offers.iter().any(|o| o.alg == alg) {
            return na(&format!("the plugin does not implement {alg}"));
        }
        Ok(if alg.mlkem_params().is_some() {
            self.kem_round_trip(alg)
        } else {
            self.dsa_round_trip(alg)
        })
    }
}

/// The worker's vector runner: the vectors of `job.algs` on the plugin
/// (only `job.groups` when any are named), the report as JSON.
pub fn run_in_worker(
    job: crate::backend::plugin::isolated::VectorsJob,
) -> anyhow::Result<serde_json::Value> {
    let plan = job
        .sample
        .map_or(super::case::Plan::Full, super::case::Plan::Sample);
    let named = |i: &usize| job.groups.is_empty() || job.groups.contains(i);
    let vectors = super::runner::all_groups()?;
    let round_trips: &[Group] = if has_round_trips(&job.caller.plugin().info) {
        round_trip_groups()
    } else {
        &[]
    };
    let groups = vectors
        .iter()
        .chain(round_trips)
        .enumerate()
        .filter(|(i, g)| named(i) && job.algs.contains(&g.alg))
        .map(|(_, g)| g);
    let mut subject = PluginSubject::new(job.caller);
    let report = super::runner::run(&mut subject, groups, plan);
    Ok(serde_json::to_value(report)?)
}

/// The vectors of `algs` on a plugin in its worker, one request a group
/// (`ask(group indices)` answers the vector runner's report as JSON), so
/// that a plugin that crashes on a case costs that group only: the group
/// counts one failed case, naming how the worker ended, and its other cases
/// are not applicable; the next group starts a new worker. After a plugin
/// that did not answer in time, the groups left are not run (each would
/// wait as long).
pub fn remote_report(
    info: &PluginInfo,
    algs: &[crate::core::catalog::Algorithm],
    plan: super::case::Plan,
    mut ask: impl FnMut(&[usize]) -> anyhow::Result<serde_json::Value>,
) -> anyhow::Result<super::case::Report> {
    use super::case::{GroupTally, Report};
    let mut out = Report {
        subject: label(info),
        plan: String::new(),
        groups: vec![],
    };
    let mut hung = false;
    let round_trips: &[Group] = if has_round_trips(info) {
        round_trip_groups()
    } else {
        &[]
    };
    for (i, g) in super::runner::all_groups()?
        .iter()
        .chain(round_trips)
        .enumerate()
    {
        if !algs.contains(&g.alg) {
            continue;
        }
        let ran = plan.asks(g.cases.len());
        // A group the worker did not finish: `failed` cases (the one it
        // ended on) with `why`, the rest not reached.
        let lost = |why: String, failed: usize, rest: &str| GroupTally {
            source: g.source.to_string(),
            group: g.name.clone(),
            cases: g.cases.len(),
            ran,
            passed: 0,
            failed,
            not_applicable: [(rest.to_string(), ran - failed)]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .collect(),
            failures: if failed > 0 { vec![why] } else { vec![] },
        };
        if hung {
            let rest = "not run: the plugin did not answer on an earlier group";
            out.groups.push(lost(String::new(), 0, rest));
            continue;
        }
        let answer = ask(&[i]).and_then(|v| {
            serde_json::from_value::<Report>(v).map_err(|e| {
                anyhow::anyhow!("the plugin worker's vectors report is unreadable: {e}")
            })
        });
        match answer {
            Ok(r) => {
                out.subject = r.subject;
                out.plan = r.plan;
                out.groups.extend(r.groups);
            }
            Err(e) => {
                hung = e
                    .downcast_ref::<crate::backend::plugin::isolated::Hung>()
                    .is_some();
                let rest = "not reached: the plugin's worker ended on an earlier case of the group";
                out.groups.push(lost(format!("{e:#}"), 1, rest));
            }
        }
    }
    if out.plan.is_empty() {
        out.plan = plan.describe();
    }
    Ok(out)
}
