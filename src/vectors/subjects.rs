//! The implementations the vectors run on in this binary: the host build of
//! `cuda/native` (the GPU kernels' own source, compiled for the CPU) and
//! liboqs. Each exposes what its API can express; the rest is "not
//! applicable" with the reason.

use super::case::{na, DsaForm, NotApplicable, Op, SignInput, Subject, VerifyInput};
use crate::backend::native_gpu::host_checked as host;
use crate::core::catalog::Algorithm;
use oqs::ffi::common::OQS_STATUS;
use oqs::ffi::{kem as ffi_kem, sig as ffi_sig};

/// The host build of cuda/native: every operation and form.
pub struct NativeHost;

impl Subject for NativeHost {
    fn label(&self) -> String {
        "native host build (cuda/native on the CPU)".into()
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        Ok(host::mlkem_keygen_seed(alg, seed))
    }
    fn kem_encaps(&mut self, alg: Algorithm, ek: &[u8], m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        Ok(host::mlkem_encaps(alg, ek, m))
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        Ok(host::mlkem_decaps(alg, dk, c))
    }
    fn dsa_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        Ok(host::mldsa_keygen_seed(alg, seed))
    }
    fn dsa_sign(&mut self, alg: Algorithm, form: DsaForm, i: &SignInput) -> Op<Vec<u8>> {
        Ok(host::mldsa_sign(alg, form, &i.sk, &i.msg, &i.ctx, &i.rnd))
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        Ok(host::mldsa_verify(alg, form, &i.pk, &i.msg, &i.ctx, &i.sig))
    }
}

/// liboqs (statically linked): derandomized ML-KEM key generation,
/// decapsulation, and pure ML-DSA verification with a context. Its API
/// takes no m for encapsulation, no seed for ML-DSA key generation and no
/// rnd for signing, and has no internal or external-mu interface.
pub struct Liboqs;

fn status(st: OQS_STATUS) -> bool {
    st == OQS_STATUS::OQS_SUCCESS
}

/// An OQS_KEM handle, freed on drop.
struct Kem(*mut ffi_kem::OQS_KEM);

impl Kem {
    fn open(alg: Algorithm) -> Result<Kem, NotApplicable> {
        let id = alg
            .liboqs_kem()
            .filter(|id| id.is_enabled())
            .ok_or_else(|| NotApplicable(format!("{alg} is not in this liboqs build")))?;
        // SAFETY: `to_id` gives liboqs's own static name for the algorithm.
        let p = unsafe { ffi_kem::OQS_KEM_new(id.to_id()) };
        if p.is_null() {
            return Err(NotApplicable(format!("liboqs could not open {alg}")));
        }
        Ok(Kem(p))
    }
    fn get(&self) -> &ffi_kem::OQS_KEM {
        // SAFETY: non-null, owned until drop.
        unsafe { &*self.0 }
    }
}

impl Drop for Kem {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_KEM_new, freed once.
        unsafe { ffi_kem::OQS_KEM_free(self.0) }
    }
}

impl Subject for Liboqs {
    fn label(&self) -> String {
        format!("liboqs {}", crate::probe::libraries::liboqs_version())
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let kem = Kem::open(alg)?;
        let k = kem.get();
        if let Err(e) = host::expect_len(alg, "seed d||z", seed.len(), k.length_keypair_seed) {
            return Ok(Err(e));
        }
        let mut pk = vec![0u8; k.length_public_key];
        let mut sk = vec![0u8; k.length_secret_key];
        // SAFETY: buffers have the lengths liboqs writes; the seed has its length.
        let st = unsafe {
            ffi_kem::OQS_KEM_keypair_derand(kem.0, pk.as_mut_ptr(), sk.as_mut_ptr(), seed.as_ptr())
        };
        Ok(if status(st) {
            Ok((pk, sk))
        } else {
            Err(format!("liboqs keypair_derand: {st:?}"))
        })
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        let kem = Kem::open(alg)?;
        let k = kem.get();
        let checked = host::expect_len(alg, "decapsulation key", dk.len(), k.length_secret_key)
            .and_then(|_| host::expect_len(alg, "ciphertext", c.len(), k.length_ciphertext));
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        let mut ss = vec![0u8; k.length_shared_secret];
        // SAFETY: buffers have exactly the lengths liboqs reads and writes.
        let st =
            unsafe { ffi_kem::OQS_KEM_decaps(kem.0, ss.as_mut_ptr(), c.as_ptr(), dk.as_ptr()) };
        Ok(if status(st) {
            Ok(ss)
        } else {
            Err(format!("liboqs decaps: {st:?}"))
        })
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        if form != DsaForm::Pure {
            return na(&format!(
                "liboqs has no {} interface",
                super::case::form_name(form)
            ));
        }
        let id = alg
            .liboqs_sig()
            .filter(|id| id.is_enabled())
            .ok_or_else(|| NotApplicable(format!("{alg} is not in this liboqs build")))?;
        // SAFETY: `to_id` gives liboqs's own static name for the algorithm.
        let p = unsafe { ffi_sig::OQS_SIG_new(id.to_id()) };
        if p.is_null() {
            return na(&format!("liboqs could not open {alg}"));
        }
        // SAFETY: p is a live OQS_SIG.
        let pk_len = unsafe { (*p).length_public_key };
        let ok = if i.pk.len() != pk_len {
            false
        } else {
            // SAFETY: every buffer is read only and passed with its length;
            // pk has the length liboqs reads.
            status(unsafe {
                ffi_sig::OQS_SIG_verify_with_ctx_str(
                    p,
                    i.msg.as_ptr(),
                    i.msg.len(),
                    i.sig.as_ptr(),
                    i.sig.len(),
                    i.ctx.as_ptr(),
                    i.ctx.len(),
                    i.pk.as_ptr(),
                )
            })
        };
        // SAFETY: allocated by OQS_SIG_new, freed once.
        unsafe { ffi_sig::OQS_SIG_free(p) };
        Ok(Ok(ok))
    }
}
