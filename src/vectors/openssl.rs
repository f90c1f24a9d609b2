//! OpenSSL's own ML-KEM and ML-DSA (the vendored OpenSSL linked through
//! the `openssl` crate) as a vector subject, through EVP with the
//! parameters OpenSSL offers for known answers: the key-generation seed
//! (`seed`), the encapsulation randomness m (`ikme`), the signing
//! randomness (`test-entropy`), the raw message encoding for
//! `Sign_internal`/`Verify_internal` (`message-encoding` 0) and external μ
//! (`mu` 1). Keys enter as raw bytes, so OpenSSL's import checks (the
//! encapsulation key's coefficients, the decapsulation key's stored hash,
//! lengths) act as refusals.

use super::case::{DsaForm, NotApplicable, Op, SignInput, Subject, VerifyInput};
use crate::core::catalog::Algorithm;
use foreign_types::ForeignType;
use openssl::pkey::{PKey, Private};
use openssl_sys as ffi;
use std::ffi::{c_uint, c_void, CStr, CString};

/// OpenSSL's native ML-KEM and ML-DSA.
pub struct OpenSsl;

extern "C" {
    // In libcrypto since 3.0; `openssl-sys` does not declare it.
    fn EVP_PKEY_CTX_new_from_pkey(
        libctx: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propq: *const std::ffi::c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
}

/// The pending OpenSSL errors (drained), after `what`.
fn refusal(what: &str) -> String {
    let e = openssl::error::ErrorStack::get();
    let why = e
        .errors()
        .iter()
        .map(|x| x.reason().unwrap_or("unknown reason").to_string())
        .collect::<Vec<_>>()
        .join("; ");
    if why.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {why}")
    }
}

/// OSSL_PARAM arrays whose data the builder owns.
#[derive(Default)]
struct Params {
    keys: Vec<CString>,
    bytes: Vec<Vec<u8>>,
    // Boxed: the parameters point at each value, which must not move when
    // the list grows.
    #[allow(clippy::vec_box)]
    uints: Vec<Box<c_uint>>,
    list: Vec<ffi::OSSL_PARAM>,
}

impl Params {
    fn key(&mut self, k: &str) -> *const std::ffi::c_char {
        self.keys.push(CString::new(k).expect("a parameter name"));
        self.keys.last().expect("just pushed").as_ptr()
    }
    fn octets(mut self, k: &str, v: &[u8]) -> Self {
        let key = self.key(k);
        self.bytes.push(v.to_vec());
        let b = self.bytes.last_mut().expect("just pushed");
        // SAFETY: key and the buffer live (on the heap, not moved) as
        // long as `self`.
        let p = unsafe {
            ffi::OSSL_PARAM_construct_octet_string(key, b.as_mut_ptr() as *mut c_void, b.len())
        };
        self.list.push(p);
        self
    }
    fn uint(mut self, k: &str, v: c_uint) -> Self {
        let key = self.key(k);
        self.uints.push(Box::new(v));
        let b: *mut c_uint = &mut **self.uints.last_mut().expect("just pushed");
        // SAFETY: key and the boxed value live as long as `self`.
        self.list
            .push(unsafe { ffi::OSSL_PARAM_construct_uint(key, b) });
        self
    }
    /// The terminated array; valid while `self` lives.
    fn ptr(&mut self) -> *const ffi::OSSL_PARAM {
        // SAFETY: constructs the terminator; no pointers involved.
        self.list.push(unsafe { ffi::OSSL_PARAM_construct_end() });
        self.list.as_ptr()
    }
}

/// An EVP_PKEY_CTX, freed on drop.
struct Ctx(*mut ffi::EVP_PKEY_CTX);

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(self.0) }
    }
}

impl Ctx {
    fn for_key(key: &PKey<impl openssl::pkey::HasPublic>) -> Result<Ctx, String> {
        // SAFETY: a live key; default library context and properties.
        let p = unsafe {
            EVP_PKEY_CTX_new_from_pkey(std::ptr::null_mut(), key.as_ptr(), std::ptr::null())
        };
        if p.is_null() {
            return Err(refusal("EVP_PKEY_CTX_new_from_pkey"));
        }
        Ok(Ctx(p))
    }
}

/// The OpenSSL name of `alg`, or why it cannot be asked.
fn name(alg: Algorithm) -> Result<CString, NotApplicable> {
    let n = CString::new(alg.name()).expect("a catalogue name");
    // SAFETY: NUL-terminated name; the probe context is freed at once.
    let p = unsafe {
        ffi::EVP_PKEY_CTX_new_from_name(std::ptr::null_mut(), n.as_ptr(), std::ptr::null())
    };
    if p.is_null() {
        let _ = openssl::error::ErrorStack::get();
        return Err(NotApplicable(format!("this OpenSSL has no {alg}")));
    }
    drop(Ctx(p));
    Ok(n)
}

/// A key from its raw public (`public`) or private encoding.
fn import(n: &CStr, bytes: &[u8], public: bool) -> Result<PKey<Private>, String> {
    // SAFETY: the name is NUL-terminated and the buffer has its length.
    let p = unsafe {
        if public {
            ffi::EVP_PKEY_new_raw_public_key_ex(
                std::ptr::null_mut(),
                n.as_ptr(),
                std::ptr::null(),
                bytes.as_ptr(),
                bytes.len(),
            )
        } else {
            ffi::EVP_PKEY_new_raw_private_key_ex(
                std::ptr::null_mut(),
                n.as_ptr(),
                std::ptr::null(),
                bytes.as_ptr(),
                bytes.len(),
            )
        }
    };
    if p.is_null() {
        let which = if public { "public" } else { "private" };
        return Err(refusal(&format!(
            "{which} key import ({} bytes)",
            bytes.len()
        )));
    }
    // SAFETY: a fresh, owned EVP_PKEY (a public-only key behaves as one
    // here: only public operations are asked of it).
    Ok(unsafe { PKey::from_ptr(p) })
}

/// Key generation of `alg` from `seed`: (public, private) raw encodings.
fn keygen(alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
    let n = name(alg)?;
    // SAFETY: the name was just probed.
    let ctx = Ctx(unsafe {
        ffi::EVP_PKEY_CTX_new_from_name(std::ptr::null_mut(), n.as_ptr(), std::ptr::null())
    });
    let mut params = Params::default().octets("seed", seed);
    let mut key = std::ptr::null_mut();
    // SAFETY: a live context; the parameters outlive the call; key receives
    // an owned EVP_PKEY.
    let ok = unsafe {
        ffi::EVP_PKEY_keygen_init(ctx.0) > 0
            && ffi::EVP_PKEY_CTX_set_params(ctx.0, params.ptr()) > 0
            && ffi::EVP_PKEY_generate(ctx.0, &mut key) > 0
    };
    if !ok || key.is_null() {
        return Ok(Err(refusal("key generation from a seed")));
    }
    // SAFETY: owned key from EVP_PKEY_generate.
    let key: PKey<Private> = unsafe { PKey::from_ptr(key) };
    Ok(match (key.raw_public_key(), key.raw_private_key()) {
        (Ok(pk), Ok(sk)) => Ok((pk, sk)),
        _ => Err(refusal("raw key export")),
    })
}

/// Encapsulation to `ek` with the randomness `m`: (c, K).
fn encaps(alg: Algorithm, ek: &[u8], m: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let n = name(alg).map_err(|e| e.0)?;
    let key = import(&n, ek, true)?;
    let ctx = Ctx::for_key(&key)?;
    let mut params = Params::default().octets("ikme", m);
    let (mut clen, mut klen) = (0usize, 0usize);
    // SAFETY: a live context; first the lengths, then buffers of them.
    let ok = unsafe {
        ffi::EVP_PKEY_encapsulate_init(ctx.0, params.ptr()) > 0
            && ffi::EVP_PKEY_encapsulate(
                ctx.0,
                std::ptr::null_mut(),
                &mut clen,
                std::ptr::null_mut(),
                &mut klen,
            ) > 0
    };
    if !ok {
        return Err(refusal("encapsulation"));
    }
    let (mut c, mut k) = (vec![0u8; clen], vec![0u8; klen]);
    // SAFETY: the buffers hold the lengths OpenSSL reported.
    let ok = unsafe {
        ffi::EVP_PKEY_encapsulate(ctx.0, c.as_mut_ptr(), &mut clen, k.as_mut_ptr(), &mut klen) > 0
    };
    if !ok {
        return Err(refusal("encapsulation"));
    }
    c.truncate(clen);
    k.truncate(klen);
    Ok((c, k))
}

/// Decapsulation of `c` with `dk`.
fn decaps(alg: Algorithm, dk: &[u8], c: &[u8]) -> Result<Vec<u8>, String> {
    let n = name(alg).map_err(|e| e.0)?;
    let key = import(&n, dk, false)?;
    let ctx = Ctx::for_key(&key)?;
    let mut klen = 0usize;
    // SAFETY: a live context; c has its length; first the length of K.
    let ok = unsafe {
        ffi::EVP_PKEY_decapsulate_init(ctx.0, std::ptr::null()) > 0
            && ffi::EVP_PKEY_decapsulate(
                ctx.0,
                std::ptr::null_mut(),
                &mut klen,
                c.as_ptr(),
                c.len(),
            ) > 0
    };
    if !ok {
        return Err(refusal("decapsulation"));
    }
    let mut k = vec![0u8; klen];
    // SAFETY: k holds the length OpenSSL reported.
    let ok = unsafe {
        ffi::EVP_PKEY_decapsulate(ctx.0, k.as_mut_ptr(), &mut klen, c.as_ptr(), c.len()) > 0
    };
    if !ok {
        return Err(refusal("decapsulation"));
    }
    k.truncate(klen);
    Ok(k)
}

/// The signature parameters of `form`: the context (pure only), the raw
/// message encoding (internal) or μ as the message (external μ).
fn form_params(form: DsaForm, ctx: &[u8]) -> Params {
    match form {
        DsaForm::Pure => Params::default().octets("context-string", ctx),
        DsaForm::Internal => Params::default().uint("message-encoding", 0),
        DsaForm::ExternalMu => Params::default().uint("mu", 1),
    }
}

/// A context for signing (`sign`) or verifying with `key` in `params`.
fn message_ctx(
    n: &CStr,
    key: &PKey<Private>,
    sign: bool,
    params: &mut Params,
) -> Result<Ctx, String> {
    let ctx = Ctx::for_key(key)?;
    // SAFETY: NUL-terminated name; the fetched algorithm is freed after
    // the init took its own reference; the parameters outlive the call.
    let ok = unsafe {
        let alg = ffi::EVP_SIGNATURE_fetch(std::ptr::null_mut(), n.as_ptr(), std::ptr::null());
        if alg.is_null() {
            return Err(refusal("EVP_SIGNATURE_fetch"));
        }
        let r = if sign {
            ffi::EVP_PKEY_sign_message_init(ctx.0, alg, params.ptr())
        } else {
            ffi::EVP_PKEY_verify_message_init(ctx.0, alg, params.ptr())
        };
        ffi::EVP_SIGNATURE_free(alg);
        r > 0
    };
    if !ok {
        return Err(refusal("signature parameters"));
    }
    Ok(ctx)
}

fn sign(alg: Algorithm, form: DsaForm, i: &SignInput) -> Result<Vec<u8>, String> {
    let n = name(alg).map_err(|e| e.0)?;
    let key = import(&n, &i.sk, false)?;
    let mut params = form_params(form, &i.ctx).octets("test-entropy", &i.rnd);
    let ctx = message_ctx(&n, &key, true, &mut params)?;
    let mut len = 0usize;
    // SAFETY: a live context; first the length, then a buffer of it.
    let ok = unsafe {
        ffi::EVP_PKEY_sign(
            ctx.0,
            std::ptr::null_mut(),
            &mut len,
            i.msg.as_ptr(),
            i.msg.len(),
        ) > 0
    };
    if !ok {
        return Err(refusal("signing"));
    }
    let mut sig = vec![0u8; len];
    // SAFETY: sig holds the length OpenSSL reported.
    let ok = unsafe {
        ffi::EVP_PKEY_sign(
            ctx.0,
            sig.as_mut_ptr(),
            &mut len,
            i.msg.as_ptr(),
            i.msg.len(),
        ) > 0
    };
    if !ok {
        return Err(refusal("signing"));
    }
    sig.truncate(len);
    Ok(sig)
}

fn verify(alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Result<bool, String> {
    let n = name(alg).map_err(|e| e.0)?;
    let key = import(&n, &i.pk, true)?;
    let mut params = form_params(form, &i.ctx);
    let ctx = message_ctx(&n, &key, false, &mut params)?;
    // SAFETY: a live context; every buffer is passed with its length.
    let r = unsafe {
        ffi::EVP_PKEY_verify(
            ctx.0,
            i.sig.as_ptr(),
            i.sig.len(),
            i.msg.as_ptr(),
            i.msg.len(),
        )
    };
    // A rejected signature leaves its reason queued.
    let _ = openssl::error::ErrorStack::get();
    Ok(r == 1)
}

impl Subject for OpenSsl {
    fn label(&self) -> String {
        openssl::version::version().to_string()
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        keygen(alg, seed)
    }
    fn kem_encaps(&mut self, alg: Algorithm, ek: &[u8], m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        name(alg)?;
        Ok(encaps(alg, ek, m))
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        name(alg)?;
        Ok(decaps(alg, dk, c))
    }
    fn dsa_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        keygen(alg, seed)
    }
    fn dsa_sign(&mut self, alg: Algorithm, form: DsaForm, i: &SignInput) -> Op<Vec<u8>> {
        name(alg)?;
        Ok(sign(alg, form, i))
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        name(alg)?;
        Ok(verify(alg, form, i))
    }
}
