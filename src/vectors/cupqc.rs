//! NVIDIA cuPQC through pqcprof's shim (`cuda/cupqc/`), one launch per
//! case, in builds made with the SDK (`cfg(pqcprof_cupqc)`): ML-KEM
//! decapsulation and pure ML-DSA verification with an empty context, the
//! two operations whose every input the shim takes from the caller. Key
//! generation, encapsulation and signing take cuPQC's entropy buffer, whose
//! layout NVIDIA does not document as FIPS 203's d ‖ z and m or FIPS 204's
//! ξ and rnd, so they are not asked; the shim passes no context string.
//! A build against the stand-in SDK (tests only) is refused, as the
//! `cupqc` backend refuses it.

use super::case::Subject;

/// cuPQC on GPU `ordinal` as a vector subject, or why it cannot be.
pub fn open(ordinal: usize) -> anyhow::Result<Box<dyn Subject>> {
    #[cfg(pqcprof_cupqc)]
    {
        imp::Cupqc::open(ordinal).map(|c| Box::new(c) as Box<dyn Subject>)
    }
    #[cfg(not(pqcprof_cupqc))]
    {
        let _ = ordinal;
        anyhow::bail!(
            "this build has no cupqc backend ({})",
            crate::backend::cupqc::build_info().note
        )
    }
}

#[cfg(pqcprof_cupqc)]
mod imp {
    use super::super::case::{na, DsaForm, Op, Subject, VerifyInput, DEVICE_ERROR};
    use crate::backend::cupqc::{self as shim, device, Batch, Role};
    use crate::core::catalog::{Algorithm, Operation};
    use std::sync::Arc;

    /// cuPQC on one GPU; the context keeps the device's primary context
    /// (which the shim's CUDA runtime shares) alive.
    pub struct Cupqc {
        _ctx: Arc<cudarc::driver::CudaContext>,
        ordinal: usize,
    }

    impl Cupqc {
        pub fn open(ordinal: usize) -> anyhow::Result<Self> {
            device::refuse_standin()?;
            device::check_sizes()?;
            let ctx = cudarc::driver::CudaContext::new(ordinal)
                .map_err(|e| anyhow::anyhow!("cannot open GPU {ordinal}: {e:?}"))?;
            Ok(Cupqc { _ctx: ctx, ordinal })
        }

        /// One batch of one operation: `inputs` uploaded (each padded with
        /// zeros to its buffer), one launch, `output` downloaded.
        fn one(
            &self,
            alg: Algorithm,
            op: Operation,
            msg_len: usize,
            inputs: &[(Role, &[u8])],
            output: Role,
        ) -> anyhow::Result<Vec<u8>> {
            let mut b = Batch::prepare(self.ordinal, alg, op, 1, msg_len)?;
            for (role, data) in inputs {
                let (len, _) = b.layout(*role)?;
                anyhow::ensure!(data.len() <= len, "{role:?}: {} bytes", data.len());
                let mut buf = data.to_vec();
                buf.resize(len, 0);
                b.upload(*role, &buf)?;
            }
            b.launch()?;
            b.download(output)
        }
    }

    fn device_error(e: anyhow::Error) -> String {
        format!("{DEVICE_ERROR}{e:#}")
    }

    impl Subject for Cupqc {
        fn label(&self) -> String {
            format!("{} on GPU {}", shim::build_info().provider(), self.ordinal)
        }

        fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
            let s = alg.sizes();
            if dk.len() != s.secret_key_bytes || Some(c.len()) != s.ciphertext_bytes {
                return Ok(Err(format!(
                    "wrong length: dk {} bytes (expected {}), c {} bytes (expected {:?})",
                    dk.len(),
                    s.secret_key_bytes,
                    c.len(),
                    s.ciphertext_bytes
                )));
            }
            let inputs = [(Role::SecretKey, dk), (Role::Ciphertext, c)];
            match self.one(alg, Operation::Decaps, 0, &inputs, Role::SharedSecret) {
                Ok(mut k) => {
                    k.truncate(s.shared_secret_bytes.unwrap_or(32));
                    Ok(Ok(k))
                }
                Err(e) => na(&device_error(e)),
            }
        }

        fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
            if form != DsaForm::Pure {
                return na("the shim verifies pure ML-DSA only");
            }
            if !i.ctx.is_empty() {
                return na("the shim passes no context string");
            }
            if i.msg.is_empty() {
                return na("the shim takes no empty message");
            }
            let s = alg.sizes();
            if i.pk.len() != s.public_key_bytes || Some(i.sig.len()) != s.signature_bytes {
                return Ok(Err(format!(
                    "wrong length: pk {} bytes (expected {}), signature {} bytes (expected {:?})",
                    i.pk.len(),
                    s.public_key_bytes,
                    i.sig.len(),
                    s.signature_bytes
                )));
            }
            let inputs = [
                (Role::PublicKey, i.pk.as_slice()),
                (Role::Signature, i.sig.as_slice()),
                (Role::Message, i.msg.as_slice()),
            ];
            match self.one(alg, Operation::Verify, i.msg.len(), &inputs, Role::Ok) {
                Ok(ok) if ok.len() >= 4 => {
                    Ok(Ok(i32::from_ne_bytes([ok[0], ok[1], ok[2], ok[3]]) != 0))
                }
                Ok(ok) => na(&format!(
                    "{DEVICE_ERROR}verify result of {} bytes",
                    ok.len()
                )),
                Err(e) => na(&device_error(e)),
            }
        }
    }
}
