//! A plugin as a subject of the vector runner (`check --plugin PATH`):
//! each case is asked inside a batch, at a position drawn at random among
//! items the reference made (for a verification, one valid signature and
//! one invalid), each of which must be answered as the reference does, so
//! that an implementation cannot answer a batch otherwise than it answers
//! one item. The randomness the vector gives is passed as the plugin's
//! inputs.

use super::case::{na, DsaForm, Op, SignInput, Subject, VerifyInput};
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
    format!(
        "plugin {} {}: ABI version {}, {} memory, {}\n  file {} (SHA-256 {})\n  implements {}\n  sizes checked against FIPS 203/204: all agree",
        i.name,
        i.version,
        i.abi_version,
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

/// One filler item: its inputs in the ABI's order, and the outputs the
/// reference gives for them.
struct Filler {
    ins: Vec<Vec<u8>>,
    want: Vec<Vec<u8>>,
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
                }
            }
            (Operation::KeyGen, false) => {
                let xi = random(32);
                let (pk, sk) = host::mldsa_keygen_seed(alg, &xi)?;
                Filler {
                    ins: vec![xi],
                    want: vec![pk, sk],
                }
            }
            (Operation::Encaps, _) => {
                let m = random(32);
                let (c, k) = host::mlkem_encaps(alg, &rpk, &m)?;
                Filler {
                    ins: vec![rpk.clone(), m],
                    want: vec![c, k],
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
                }
            }
            (Operation::Sign, _) => {
                let (msg, rnd) = (random(ml), random(32));
                let sig = host::mldsa_sign(alg, DsaForm::Pure, &rsk, &msg, ctx, &rnd)?;
                Filler {
                    ins: vec![rsk.clone(), msg, rnd],
                    want: vec![sig],
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
        if let Some(f) = &fillers {
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
    let groups = super::runner::all_groups()?
        .iter()
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
    for (i, g) in super::runner::all_groups()?.iter().enumerate() {
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
