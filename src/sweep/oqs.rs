//! liboqs schemes opened by liboqs's own name (any KEM or signature the
//! build enables), called through the same C entry points its `speed_kem`
//! and `speed_sig` tools time.

use super::scheme::{KemScheme, KeyBytes, SigScheme};
use anyhow::{anyhow, ensure, Result};
use oqs::ffi::common::OQS_STATUS;
use oqs::ffi::{kem as ffi_kem, sig as ffi_sig};
use std::ffi::{CStr, CString};
use std::ptr::NonNull;

/// One algorithm liboqs knows, enabled in this build or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OqsAlg {
    /// liboqs's identifier, e.g. `ML-DSA-65`, `Falcon-padded-512`.
    pub name: String,
    /// Whether this build of liboqs includes it.
    pub enabled: bool,
}

fn cstr_list(count: usize, ident: impl Fn(usize) -> *const libc::c_char) -> Vec<String> {
    (0..count)
        .filter_map(|i| {
            let p = ident(i);
            // SAFETY: liboqs returns a pointer to a static NUL-terminated
            // name for every index below its count (NULL otherwise).
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
        .collect()
}

/// Every KEM liboqs lists, in its order.
pub fn kems() -> Vec<OqsAlg> {
    oqs::init();
    // SAFETY: plain queries of liboqs's static algorithm table.
    let n = unsafe { ffi_kem::OQS_KEM_alg_count() }.max(0) as usize;
    // SAFETY: i < count, as OQS_KEM_alg_identifier requires.
    cstr_list(n, |i| unsafe { ffi_kem::OQS_KEM_alg_identifier(i) })
        .into_iter()
        .map(|name| {
            let c = CString::new(name.clone()).expect("liboqs names have no NUL");
            // SAFETY: c is a valid NUL-terminated string.
            let enabled = unsafe { ffi_kem::OQS_KEM_alg_is_enabled(c.as_ptr()) } == 1;
            OqsAlg { name, enabled }
        })
        .collect()
}

/// Every signature scheme liboqs lists, in its order.
pub fn sigs() -> Vec<OqsAlg> {
    oqs::init();
    // SAFETY: plain queries of liboqs's static algorithm table.
    let n = unsafe { ffi_sig::OQS_SIG_alg_count() }.max(0) as usize;
    // SAFETY: i < count, as OQS_SIG_alg_identifier requires.
    cstr_list(n, |i| unsafe { ffi_sig::OQS_SIG_alg_identifier(i) })
        .into_iter()
        .map(|name| {
            let c = CString::new(name.clone()).expect("liboqs names have no NUL");
            // SAFETY: c is a valid NUL-terminated string.
            let enabled = unsafe { ffi_sig::OQS_SIG_alg_is_enabled(c.as_ptr()) } == 1;
            OqsAlg { name, enabled }
        })
        .collect()
}

fn ok(status: OQS_STATUS, what: &str) -> Result<()> {
    ensure!(
        status == OQS_STATUS::OQS_SUCCESS,
        "liboqs {what} returned {status:?}"
    );
    Ok(())
}

/// A liboqs KEM with one key pair, ciphertext and the two secrets.
pub struct OqsKem {
    kem: NonNull<ffi_kem::OQS_KEM>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    ct: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
}

impl OqsKem {
    /// Opens `name`; fails if liboqs does not have it enabled.
    pub fn open(name: &str) -> Result<Self> {
        oqs::init();
        let c = CString::new(name)?;
        // SAFETY: c is a valid NUL-terminated string; NULL means unknown or disabled.
        let kem = NonNull::new(unsafe { ffi_kem::OQS_KEM_new(c.as_ptr()) })
            .ok_or_else(|| anyhow!("liboqs could not open KEM {name} (disabled in this build)"))?;
        // SAFETY: non-null, owned by us until drop.
        let k = unsafe { kem.as_ref() };
        Ok(OqsKem {
            pk: vec![0; k.length_public_key],
            sk: vec![0; k.length_secret_key],
            ct: vec![0; k.length_ciphertext],
            ss_enc: vec![0; k.length_shared_secret],
            ss_dec: vec![0; k.length_shared_secret],
            kem,
        })
    }
    /// The NIST level liboqs claims.
    pub fn claimed_nist_level(&self) -> u8 {
        // SAFETY: non-null, owned by us until drop.
        unsafe { self.kem.as_ref() }.claimed_nist_level
    }
    /// Public key and ciphertext bytes (for composites).
    pub fn public_key(&self) -> &[u8] {
        &self.pk
    }
}

impl Drop for OqsKem {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_KEM_new, freed once.
        unsafe { ffi_kem::OQS_KEM_free(self.kem.as_ptr()) }
    }
}

impl KemScheme for OqsKem {
    fn keygen(&mut self) -> Result<()> {
        // SAFETY: pk and sk have exactly the lengths this OQS_KEM writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_keypair(
                    self.kem.as_ptr(),
                    self.pk.as_mut_ptr(),
                    self.sk.as_mut_ptr(),
                )
            },
            "keypair",
        )
    }
    fn encaps(&mut self) -> Result<()> {
        // SAFETY: buffers have exactly the lengths this OQS_KEM reads and writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_encaps(
                    self.kem.as_ptr(),
                    self.ct.as_mut_ptr(),
                    self.ss_enc.as_mut_ptr(),
                    self.pk.as_ptr(),
                )
            },
            "encaps",
        )
    }
    fn decaps(&mut self) -> Result<()> {
        // SAFETY: buffers have exactly the lengths this OQS_KEM reads and writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_decaps(
                    self.kem.as_ptr(),
                    self.ss_dec.as_mut_ptr(),
                    self.ct.as_ptr(),
                    self.sk.as_ptr(),
                )
            },
            "decaps",
        )
    }
    fn secrets(&self) -> (&[u8], &[u8]) {
        (&self.ss_enc, &self.ss_dec)
    }
    fn ciphertext_mut(&mut self) -> &mut [u8] {
        &mut self.ct
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        Ok(KeyBytes {
            public_raw: self.pk.len(),
            secret_raw: Some(self.sk.len()),
            public_der: None,
            secret_der: None,
        })
    }
}

/// A liboqs signature scheme with one key pair, message and signature.
pub struct OqsSig {
    sig: NonNull<ffi_sig::OQS_SIG>,
    pk: Vec<u8>,
    sk: Vec<u8>,
    msg: Vec<u8>,
    signature: Vec<u8>,
    max_sig: usize,
}

impl OqsSig {
    /// Opens `name` to sign `message`; fails if liboqs does not have it enabled.
    pub fn open(name: &str, message: Vec<u8>) -> Result<Self> {
        oqs::init();
        let c = CString::new(name)?;
        // SAFETY: c is a valid NUL-terminated string; NULL means unknown or disabled.
        let sig = NonNull::new(unsafe { ffi_sig::OQS_SIG_new(c.as_ptr()) }).ok_or_else(|| {
            anyhow!("liboqs could not open signature scheme {name} (disabled in this build)")
        })?;
        // SAFETY: non-null, owned by us until drop.
        let s = unsafe { sig.as_ref() };
        Ok(OqsSig {
            pk: vec![0; s.length_public_key],
            sk: vec![0; s.length_secret_key],
            signature: Vec::with_capacity(s.length_signature),
            max_sig: s.length_signature,
            msg: message,
            sig,
        })
    }
    /// The NIST level liboqs claims.
    pub fn claimed_nist_level(&self) -> u8 {
        // SAFETY: non-null, owned by us until drop.
        unsafe { self.sig.as_ref() }.claimed_nist_level
    }
}

impl Drop for OqsSig {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_SIG_new, freed once.
        unsafe { ffi_sig::OQS_SIG_free(self.sig.as_ptr()) }
    }
}

impl SigScheme for OqsSig {
    fn keygen(&mut self) -> Result<()> {
        // SAFETY: pk and sk have exactly the lengths this OQS_SIG writes.
        ok(
            unsafe {
                ffi_sig::OQS_SIG_keypair(
                    self.sig.as_ptr(),
                    self.pk.as_mut_ptr(),
                    self.sk.as_mut_ptr(),
                )
            },
            "keypair",
        )
    }
    fn sign(&mut self) -> Result<()> {
        self.signature.resize(self.max_sig, 0);
        let mut len = 0usize;
        // SAFETY: the signature buffer holds length_signature bytes, the
        // most liboqs writes; message and secret key are only read.
        let st = unsafe {
            ffi_sig::OQS_SIG_sign(
                self.sig.as_ptr(),
                self.signature.as_mut_ptr(),
                &mut len,
                self.msg.as_ptr(),
                self.msg.len(),
                self.sk.as_ptr(),
            )
        };
        ok(st, "sign")?;
        ensure!(
            len <= self.max_sig,
            "liboqs reported a signature longer than its maximum"
        );
        self.signature.truncate(len);
        Ok(())
    }
    fn verify(&mut self) -> Result<bool> {
        // SAFETY: every buffer is only read, with its own length.
        let st = unsafe {
            ffi_sig::OQS_SIG_verify(
                self.sig.as_ptr(),
                self.msg.as_ptr(),
                self.msg.len(),
                self.signature.as_ptr(),
                self.signature.len(),
                self.pk.as_ptr(),
            )
        };
        Ok(st == OQS_STATUS::OQS_SUCCESS)
    }
    fn message_mut(&mut self) -> &mut Vec<u8> {
        &mut self.msg
    }
    fn signature_mut(&mut self) -> &mut Vec<u8> {
        &mut self.signature
    }
    fn max_signature_len(&self) -> usize {
        self.max_sig
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        Ok(KeyBytes {
            public_raw: self.pk.len(),
            secret_raw: Some(self.sk.len()),
            public_der: None,
            secret_der: None,
        })
    }
}
