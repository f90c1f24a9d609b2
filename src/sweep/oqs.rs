//! liboqs schemes opened by liboqs's own name (any KEM or signature the
//! build enables), called through the same C entry points its `speed_kem`
//! and `speed_sig` tools time.

use crate::sweep::scheme::{KemScheme, KeyBytes, SigScheme};
use anyhow::{anyhow, ensure, Result};
use libc::{c_char, c_int};
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

/// What liboqs offers alike, each under its own names, for its KEMs
/// (`OQS_KEM`) and its signature schemes (`OQS_SIG`).
trait Family: Sized {
    /// The family in messages: `KEM`, `signature scheme`.
    const WHAT: &'static str;
    /// `OQS_*_alg_count`.
    const ALG_COUNT: unsafe extern "C" fn() -> c_int;
    /// `OQS_*_alg_identifier`.
    const ALG_IDENTIFIER: unsafe extern "C" fn(usize) -> *const c_char;
    /// `OQS_*_alg_is_enabled`.
    const ALG_IS_ENABLED: unsafe extern "C" fn(*const c_char) -> c_int;
    /// `OQS_*_new`.
    const NEW: unsafe extern "C" fn(*const c_char) -> *mut Self;
    /// `OQS_*_free`.
    const FREE: unsafe extern "C" fn(*mut Self);
    /// `OQS_*_keypair`.
    const KEYPAIR: unsafe extern "C" fn(*const Self, *mut u8, *mut u8) -> OQS_STATUS;
    /// `length_public_key` and `length_secret_key`.
    fn key_lengths(&self) -> (usize, usize);
}

impl Family for ffi_kem::OQS_KEM {
    const WHAT: &'static str = "KEM";
    const ALG_COUNT: unsafe extern "C" fn() -> c_int = ffi_kem::OQS_KEM_alg_count;
    const ALG_IDENTIFIER: unsafe extern "C" fn(usize) -> *const c_char =
        ffi_kem::OQS_KEM_alg_identifier;
    const ALG_IS_ENABLED: unsafe extern "C" fn(*const c_char) -> c_int =
        ffi_kem::OQS_KEM_alg_is_enabled;
    const NEW: unsafe extern "C" fn(*const c_char) -> *mut Self = ffi_kem::OQS_KEM_new;
    const FREE: unsafe extern "C" fn(*mut Self) = ffi_kem::OQS_KEM_free;
    const KEYPAIR: unsafe extern "C" fn(*const Self, *mut u8, *mut u8) -> OQS_STATUS =
        ffi_kem::OQS_KEM_keypair;
    fn key_lengths(&self) -> (usize, usize) {
        (self.length_public_key, self.length_secret_key)
    }
}

impl Family for ffi_sig::OQS_SIG {
    const WHAT: &'static str = "signature scheme";
    const ALG_COUNT: unsafe extern "C" fn() -> c_int = ffi_sig::OQS_SIG_alg_count;
    const ALG_IDENTIFIER: unsafe extern "C" fn(usize) -> *const c_char =
        ffi_sig::OQS_SIG_alg_identifier;
    const ALG_IS_ENABLED: unsafe extern "C" fn(*const c_char) -> c_int =
        ffi_sig::OQS_SIG_alg_is_enabled;
    const NEW: unsafe extern "C" fn(*const c_char) -> *mut Self = ffi_sig::OQS_SIG_new;
    const FREE: unsafe extern "C" fn(*mut Self) = ffi_sig::OQS_SIG_free;
    const KEYPAIR: unsafe extern "C" fn(*const Self, *mut u8, *mut u8) -> OQS_STATUS =
        ffi_sig::OQS_SIG_keypair;
    fn key_lengths(&self) -> (usize, usize) {
        (self.length_public_key, self.length_secret_key)
    }
}

/// Every algorithm of family `F` liboqs lists, in its order.
fn algs<F: Family>() -> Vec<OqsAlg> {
    oqs::init();
    // SAFETY: plain query of liboqs's static algorithm table.
    let n = unsafe { (F::ALG_COUNT)() }.max(0) as usize;
    (0..n)
        .filter_map(|i| {
            // SAFETY: i < count, as OQS_*_alg_identifier requires; liboqs
            // returns a pointer to a static NUL-terminated name (NULL otherwise).
            let p = unsafe { (F::ALG_IDENTIFIER)(i) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
        .map(|name| {
            let c = CString::new(name.clone()).expect("liboqs names have no NUL");
            // SAFETY: c is a valid NUL-terminated string.
            let enabled = unsafe { (F::ALG_IS_ENABLED)(c.as_ptr()) } == 1;
            OqsAlg { name, enabled }
        })
        .collect()
}

/// Every KEM liboqs lists, in its order.
pub fn kems() -> Vec<OqsAlg> {
    algs::<ffi_kem::OQS_KEM>()
}

/// Every signature scheme liboqs lists, in its order.
pub fn sigs() -> Vec<OqsAlg> {
    algs::<ffi_sig::OQS_SIG>()
}

fn ok(status: OQS_STATUS, what: &str) -> Result<()> {
    ensure!(
        status == OQS_STATUS::OQS_SUCCESS,
        "liboqs {what} returned {status:?}"
    );
    Ok(())
}

/// An `OQS_KEM` or `OQS_SIG` opened by name, freed on drop, with one key
/// pair in buffers of the lengths it states.
struct Opened<F: Family> {
    obj: NonNull<F>,
    pk: Vec<u8>,
    sk: Vec<u8>,
}

impl<F: Family> Opened<F> {
    /// Opens `name`; fails if liboqs does not have it enabled.
    fn open(name: &str) -> Result<Self> {
        oqs::init();
        let c = CString::new(name)?;
        // SAFETY: c is a valid NUL-terminated string; NULL means unknown or disabled.
        let obj = NonNull::new(unsafe { (F::NEW)(c.as_ptr()) }).ok_or_else(|| {
            anyhow!(
                "liboqs could not open {} {name} (disabled in this build)",
                F::WHAT
            )
        })?;
        // SAFETY: non-null, owned by us until drop.
        let (pk, sk) = unsafe { obj.as_ref() }.key_lengths();
        Ok(Opened {
            obj,
            pk: vec![0; pk],
            sk: vec![0; sk],
        })
    }
    /// liboqs's description of the algorithm (lengths, claimed level).
    fn info(&self) -> &F {
        // SAFETY: non-null, owned by us until drop.
        unsafe { self.obj.as_ref() }
    }
    /// The pointer the `OQS_*` calls take.
    fn ptr(&self) -> *const F {
        self.obj.as_ptr()
    }
    fn keygen(&mut self) -> Result<()> {
        // SAFETY: pk and sk have exactly the lengths this object writes.
        ok(
            unsafe { (F::KEYPAIR)(self.ptr(), self.pk.as_mut_ptr(), self.sk.as_mut_ptr()) },
            "keypair",
        )
    }
    fn key_bytes(&self) -> KeyBytes {
        KeyBytes {
            public_raw: self.pk.len(),
            secret_raw: Some(self.sk.len()),
            public_der: None,
            secret_der: None,
        }
    }
}

impl<F: Family> Drop for Opened<F> {
    fn drop(&mut self) {
        // SAFETY: allocated by OQS_*_new, freed once.
        unsafe { (F::FREE)(self.obj.as_ptr()) }
    }
}

/// A liboqs KEM with one key pair, ciphertext and the two secrets.
pub struct OqsKem {
    kem: Opened<ffi_kem::OQS_KEM>,
    ct: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
}

impl OqsKem {
    /// Opens `name`; fails if liboqs does not have it enabled.
    pub fn open(name: &str) -> Result<Self> {
        let kem = Opened::<ffi_kem::OQS_KEM>::open(name)?;
        let k = kem.info();
        Ok(OqsKem {
            ct: vec![0; k.length_ciphertext],
            ss_enc: vec![0; k.length_shared_secret],
            ss_dec: vec![0; k.length_shared_secret],
            kem,
        })
    }
    /// The NIST level liboqs claims.
    pub fn claimed_nist_level(&self) -> u8 {
        self.kem.info().claimed_nist_level
    }
    /// Public key and ciphertext bytes (for composites).
    pub fn public_key(&self) -> &[u8] {
        &self.kem.pk
    }
}

impl KemScheme for OqsKem {
    fn keygen(&mut self) -> Result<()> {
        self.kem.keygen()
    }
    fn encaps(&mut self) -> Result<()> {
        // SAFETY: buffers have exactly the lengths this OQS_KEM reads and writes.
        ok(
            unsafe {
                ffi_kem::OQS_KEM_encaps(
                    self.kem.ptr(),
                    self.ct.as_mut_ptr(),
                    self.ss_enc.as_mut_ptr(),
                    self.kem.pk.as_ptr(),
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
                    self.kem.ptr(),
                    self.ss_dec.as_mut_ptr(),
                    self.ct.as_ptr(),
                    self.kem.sk.as_ptr(),
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
        Ok(self.kem.key_bytes())
    }
}

/// Signs through a liboqs call that writes at most `max` bytes to its
/// first argument and the length to its second; `signature` ends up
/// holding exactly the signature.
pub(super) fn sign_into(
    signature: &mut Vec<u8>,
    max: usize,
    call: impl FnOnce(*mut u8, &mut usize) -> Result<()>,
) -> Result<()> {
    signature.resize(max, 0);
    let mut len = 0usize;
    call(signature.as_mut_ptr(), &mut len)?;
    ensure!(
        len <= max,
        "liboqs reported a signature longer than its maximum"
    );
    signature.truncate(len);
    Ok(())
}

/// A liboqs signature scheme with one key pair, message and signature.
pub struct OqsSig {
    sig: Opened<ffi_sig::OQS_SIG>,
    msg: Vec<u8>,
    signature: Vec<u8>,
    max_sig: usize,
}

impl OqsSig {
    /// Opens `name` to sign `message`; fails if liboqs does not have it enabled.
    pub fn open(name: &str, message: Vec<u8>) -> Result<Self> {
        let sig = Opened::<ffi_sig::OQS_SIG>::open(name)?;
        let max_sig = sig.info().length_signature;
        Ok(OqsSig {
            signature: Vec::with_capacity(max_sig),
            max_sig,
            msg: message,
            sig,
        })
    }
    /// The NIST level liboqs claims.
    pub fn claimed_nist_level(&self) -> u8 {
        self.sig.info().claimed_nist_level
    }
}

impl SigScheme for OqsSig {
    fn keygen(&mut self) -> Result<()> {
        self.sig.keygen()
    }
    fn sign(&mut self) -> Result<()> {
        let (sig, msg) = (&self.sig, &self.msg);
        sign_into(&mut self.signature, self.max_sig, |out, len| {
            // SAFETY: `out` holds length_signature bytes, the most liboqs
            // writes; message and secret key are only read.
            let st = unsafe {
                ffi_sig::OQS_SIG_sign(
                    sig.ptr(),
                    out,
                    len,
                    msg.as_ptr(),
                    msg.len(),
                    sig.sk.as_ptr(),
                )
            };
            ok(st, "sign")
        })
    }
    fn verify(&mut self) -> Result<bool> {
        // SAFETY: every buffer is only read, with its own length.
        let st = unsafe {
            ffi_sig::OQS_SIG_verify(
                self.sig.ptr(),
                self.msg.as_ptr(),
                self.msg.len(),
                self.signature.as_ptr(),
                self.signature.len(),
                self.sig.pk.as_ptr(),
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
        Ok(self.sig.key_bytes())
    }
}
