//! A plugin as a subject of the vector runner (`check --plugin PATH`):
//! each case is one batched call of one item, the randomness the vector
//! gives passed as the plugin's inputs.

use super::case::{na, DsaForm, Op, SignInput, Subject, VerifyInput};
use crate::backend::plugin::batch::Caller;
use crate::backend::plugin::ffi::HostBuffers;
use crate::backend::plugin::{Offer, PluginInfo};
use crate::core::catalog::{Algorithm, Operation};
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

/// A loaded plugin under the vectors, called through `0` (device copies
/// for a device plugin).
pub struct PluginSubject(pub Arc<dyn Caller>);

impl PluginSubject {
    /// The plugin's answer, or "not applicable" when it lacks `op` of `alg`.
    fn call<T>(
        &self,
        alg: Algorithm,
        op: Operation,
        bufs: HostBuffers<'_>,
        out: impl FnOnce() -> T,
    ) -> Op<T> {
        if !self.0.plugin().supports(alg, op) {
            return na(&format!("the plugin does not implement {alg} {op}"));
        }
        Ok(self
            .0
            .call(alg, op, 1, bufs)
            .map(|()| out())
            .map_err(|e| format!("{e:#}")))
    }

    fn only_pure<T>(form: DsaForm) -> Option<Op<T>> {
        (form != DsaForm::Pure).then(|| na("the plugin ABI has the pure form only"))
    }
}

impl Subject for PluginSubject {
    fn label(&self) -> String {
        label(&self.0.plugin().info)
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let s = alg.sizes();
        let (mut ek, mut dk) = (vec![0; s.public_key_bytes], vec![0; s.secret_key_bytes]);
        let b: HostBuffers<'_> = crate::backend::plugin::ffi::Buffers::KemKeygen {
            seeds: seed,
            ek: &mut ek,
            dk: &mut dk,
        };
        let r = self.call(alg, Operation::KeyGen, b, || ());
        r.map(|x| x.map(|()| (ek, dk)))
    }
    fn kem_encaps(&mut self, alg: Algorithm, ek: &[u8], m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let mut c = vec![0; alg.sizes().ciphertext_bytes.unwrap_or(0)];
        let mut k = vec![0; 32];
        let b: HostBuffers<'_> = crate::backend::plugin::ffi::Buffers::KemEncaps {
            ek,
            m,
            c: &mut c,
            k: &mut k,
        };
        let r = self.call(alg, Operation::Encaps, b, || ());
        // The ABI's per-item refusal: c and K all zero.
        r.map(|x| x.and_then(|()| refused(&[&c, &k]).map(|()| (c, k))))
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        let mut k = vec![0; 32];
        let b: HostBuffers<'_> =
            crate::backend::plugin::ffi::Buffers::KemDecaps { dk, c, k: &mut k };
        let r = self.call(alg, Operation::Decaps, b, || ());
        r.map(|x| x.and_then(|()| refused(&[&k]).map(|()| k)))
    }
    fn dsa_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let s = alg.sizes();
        let (mut pk, mut sk) = (vec![0; s.public_key_bytes], vec![0; s.secret_key_bytes]);
        let b: HostBuffers<'_> = crate::backend::plugin::ffi::Buffers::DsaKeygen {
            xi: seed,
            pk: &mut pk,
            sk: &mut sk,
        };
        let r = self.call(alg, Operation::KeyGen, b, || ());
        r.map(|x| x.map(|()| (pk, sk)))
    }
    fn dsa_sign(&mut self, alg: Algorithm, form: DsaForm, i: &SignInput) -> Op<Vec<u8>> {
        if let Some(n) = Self::only_pure(form) {
            return n;
        }
        let mut sig = vec![0; alg.sizes().signature_bytes.unwrap_or(0)];
        let b: HostBuffers<'_> = crate::backend::plugin::ffi::Buffers::DsaSign {
            sk: &i.sk,
            msg: &i.msg,
            msg_item: i.msg.len(),
            ctx: &i.ctx,
            rnd: &i.rnd,
            sig: &mut sig,
        };
        let r = self.call(alg, Operation::Sign, b, || ());
        r.map(|x| x.map(|()| sig))
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        // Credited only with what it offers: the rejections below are made
        // without a call.
        if !self.0.plugin().supports(alg, Operation::Verify) {
            return na(&format!(
                "the plugin does not implement {alg} {}",
                Operation::Verify
            ));
        }
        if let Some(n) = Self::only_pure(form) {
            return n;
        }
        let s = alg.sizes();
        // A signature or key of another length is rejected without a call:
        // the ABI's buffers have the standard's sizes.
        if i.sig.len() != s.signature_bytes.unwrap_or(0) || i.pk.len() != s.public_key_bytes {
            return Ok(Ok(false));
        }
        let mut ok = [0u8];
        let b: HostBuffers<'_> = crate::backend::plugin::ffi::Buffers::DsaVerify {
            pk: &i.pk,
            msg: &i.msg,
            msg_item: i.msg.len(),
            ctx: &i.ctx,
            sig: &i.sig,
            ok: &mut ok,
        };
        let r = self.call(alg, Operation::Verify, b, || ());
        r.map(|x| x.map(|()| ok[0] == 1))
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
    let mut subject = PluginSubject(job.caller);
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
