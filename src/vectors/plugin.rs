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
                .filter(|&&op| o.operations & crate::backend::plugin::op_bit(op) != 0)
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
    if outputs.iter().all(|o| o.iter().all(|&b| b == 0)) {
        return Err("refused the input (its outputs all zero, as the ABI has it)".into());
    }
    Ok(())
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
        let i = &self.0.plugin().info;
        format!(
            "plugin {} {} ({}, {} memory)",
            i.name,
            i.version,
            i.path,
            i.memory.name()
        )
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

/// The worker's vector runner: the vectors of `job.algs` on the plugin,
/// the report as JSON.
pub fn run_in_worker(
    job: crate::backend::plugin::isolated::VectorsJob,
) -> anyhow::Result<serde_json::Value> {
    let plan = job
        .sample
        .map_or(super::case::Plan::Full, super::case::Plan::Sample);
    let groups = super::runner::all_groups()?
        .iter()
        .filter(|g| job.algs.contains(&g.alg));
    let mut subject = PluginSubject(job.caller);
    let report = super::runner::run(&mut subject, groups, plan);
    Ok(serde_json::to_value(report)?)
}
