//! OpenSSL schemes (the vendored OpenSSL 3.6 linked through the `openssl`
//! crate): RSA, ECDSA, EdDSA, ECDH and X25519/X448 modelled as KEMs, and
//! OpenSSL's own ML-KEM, ML-DSA, SLH-DSA and hybrid KEM groups.
//!
//! Contexts are initialised once per scheme and reused for every
//! operation, as `openssl speed` does; RSA and ECDSA hash the message inside
//! the timed operation (SHA-256, or SHA-384/512 for P-384/P-521).
//!
//! Longer than most files: one adapter per OpenSSL algorithm family (RSA,
//! ECDSA, EdDSA, ECDH/XDH, SM2, and the PQC schemes by name), each with the
//! same small set of calls.

use crate::sweep::scheme::{KemScheme, KeyBytes, SigScheme};
use anyhow::{bail, ensure, Context, Result};
use foreign_types::ForeignType;
use openssl::bn::BigNumContext;
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::hash::{Hasher, MessageDigest};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;
use openssl::sign::RsaPssSaltlen;
use std::ffi::CString;

/// An OpenSSL algorithm the sweep knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsslAlg {
    /// RSA signatures with SHA-256: PKCS#1 v1.5 or PSS (salt = digest length).
    Rsa {
        /// Modulus bits.
        bits: u32,
        /// PSS instead of PKCS#1 v1.5.
        pss: bool,
    },
    /// ECDSA on a NIST curve.
    Ecdsa(Curve),
    /// Ed25519 (`true`) or Ed448 (`false`), pure.
    EdDsa(bool),
    /// ECDH on a NIST curve as a KEM.
    Ecdh(Curve),
    /// X25519 (`true`) or X448 (`false`) as a KEM.
    Xdh(bool),
    /// SM2 signatures with SM3 and the default distinguishing ID
    /// (GB/T 32918), where this OpenSSL has SM2.
    Sm2,
    /// A signature algorithm OpenSSL's provider offers by name (ML-DSA, SLH-DSA).
    NamedSig(&'static str),
    /// A KEM OpenSSL's provider offers by name (ML-KEM, hybrid groups).
    NamedKem(&'static str),
}

/// The NIST curves measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// P-256 (secp256r1).
    P256,
    /// P-384 (secp384r1).
    P384,
    /// P-521 (secp521r1).
    P521,
}

impl Curve {
    fn nid(self) -> Nid {
        match self {
            Curve::P256 => Nid::X9_62_PRIME256V1,
            Curve::P384 => Nid::SECP384R1,
            Curve::P521 => Nid::SECP521R1,
        }
    }
    fn digest(self) -> MessageDigest {
        match self {
            Curve::P256 => MessageDigest::sha256(),
            Curve::P384 => MessageDigest::sha384(),
            Curve::P521 => MessageDigest::sha512(),
        }
    }
    /// `P256`, `P384`, `P521`.
    pub fn label(self) -> &'static str {
        match self {
            Curve::P256 => "P256",
            Curve::P384 => "P384",
            Curve::P521 => "P521",
        }
    }
}

fn key_bytes(pkey: &PKey<Private>, alg: OsslAlg) -> Result<KeyBytes> {
    // Not every key type has every encoding (OpenSSL's hybrid groups have
    // no PKCS#8 form): what is missing stays empty.
    let public_der = pkey.public_key_to_der().ok().map(|v| v.len());
    let secret_der = pkey.private_key_to_pkcs8().ok().map(|v| v.len());
    let (public_raw, secret_raw) = match alg {
        // RSA has no raw form: its PKCS#1 DER structures stand in.
        OsslAlg::Rsa { .. } => {
            let r = pkey.rsa()?;
            (
                r.public_key_to_der_pkcs1()?.len(),
                Some(r.private_key_to_der()?.len()),
            )
        }
        OsslAlg::Ecdsa(c) | OsslAlg::Ecdh(c) => {
            let ec = pkey.ec_key()?;
            let mut ctx = BigNumContext::new()?;
            let point = ec.public_key().to_bytes(
                ec.group(),
                PointConversionForm::UNCOMPRESSED,
                &mut ctx,
            )?;
            let field = match c {
                Curve::P256 => 32,
                Curve::P384 => 48,
                Curve::P521 => 66,
            };
            (point.len(), Some(field))
        }
        _ => (
            match pkey.raw_public_key() {
                Ok(v) => v.len(),
                Err(_) => encoded_public_key(pkey).context("public key")?.len(),
            },
            pkey.raw_private_key().ok().map(|v| v.len()),
        ),
    };
    Ok(KeyBytes {
        public_raw,
        secret_raw,
        public_der,
        secret_der,
    })
}

/// The key's "encoded-pub-key" parameter (the TLS key share: the
/// uncompressed point for EC keys; also the public key of OpenSSL's
/// SecP*MLKEM* hybrids, which have no raw form).
fn encoded_public_key(pkey: &PKey<Private>) -> Result<Vec<u8>> {
    // Fills `buf` (`size` bytes) and returns the parameter's length.
    let get = |buf: *mut u8, size: usize| -> Result<usize> {
        let mut len = 0usize;
        // SAFETY: buf is NULL with size 0 (asking only for the length) or
        // holds size bytes.
        let r = unsafe {
            openssl_sys::EVP_PKEY_get_octet_string_param(
                pkey.as_ptr(),
                c"encoded-pub-key".as_ptr(),
                buf,
                size,
                &mut len,
            )
        };
        if r <= 0 {
            return Err(openssl::error::ErrorStack::get())
                .context("EVP_PKEY_get_octet_string_param(encoded-pub-key)");
        }
        Ok(len)
    };
    // First the length, then the bytes into a buffer of that length.
    let mut buf = vec![0u8; get(std::ptr::null_mut(), 0)?];
    let len = get(buf.as_mut_ptr(), buf.len())?;
    buf.truncate(len);
    Ok(buf)
}

/// Key generation through a provider algorithm named `name`.
fn keygen_named(name: &str) -> Result<PKey<Private>> {
    let c = CString::new(name)?;
    // SAFETY: c is NUL-terminated; a NULL library context and property
    // query mean the defaults. The returned context is owned by PkeyCtx.
    let raw = unsafe {
        openssl_sys::EVP_PKEY_CTX_new_from_name(std::ptr::null_mut(), c.as_ptr(), std::ptr::null())
    };
    if raw.is_null() {
        bail!("OpenSSL has no key type {name}");
    }
    // SAFETY: raw is a fresh, non-null EVP_PKEY_CTX whose ownership moves here.
    let mut ctx: PkeyCtx<()> = unsafe { PkeyCtx::from_ptr(raw) };
    ctx.keygen_init()
        .with_context(|| format!("OpenSSL keygen init for {name}"))?;
    ctx.keygen()
        .with_context(|| format!("OpenSSL keygen for {name}"))
}

fn keygen(alg: OsslAlg) -> Result<PKey<Private>> {
    Ok(match alg {
        OsslAlg::Rsa { bits, .. } => {
            let mut ctx = PkeyCtx::new_id(Id::RSA)?;
            ctx.keygen_init()?;
            ctx.set_rsa_keygen_bits(bits)?;
            ctx.keygen()?
        }
        OsslAlg::Ecdsa(c) | OsslAlg::Ecdh(c) => {
            // Through EVP, as `openssl speed` makes its keys (a provider key,
            // not a legacy EC_KEY).
            let mut ctx = PkeyCtx::new_id(Id::EC)?;
            ctx.keygen_init()?;
            ctx.set_ec_paramgen_curve_nid(c.nid())?;
            ctx.keygen()?
        }
        OsslAlg::EdDsa(true) => PKey::generate_ed25519()?,
        OsslAlg::EdDsa(false) => PKey::generate_ed448()?,
        OsslAlg::Xdh(true) => PKey::generate_x25519()?,
        OsslAlg::Xdh(false) => PKey::generate_x448()?,
        OsslAlg::NamedSig(n) | OsslAlg::NamedKem(n) => keygen_named(n)?,
        OsslAlg::Sm2 => keygen_named("SM2")?,
    })
}

/// Checks OpenSSL can make a key of this type (cheaply, for named algorithms).
pub fn available(alg: OsslAlg) -> Result<()> {
    let named = match alg {
        OsslAlg::NamedSig(n) | OsslAlg::NamedKem(n) => Some(n),
        OsslAlg::Sm2 => Some("SM2"),
        _ => None,
    };
    if let Some(n) = named {
        let c = CString::new(n)?;
        // SAFETY: as in keygen_named; the context is freed at once.
        let raw = unsafe {
            openssl_sys::EVP_PKEY_CTX_new_from_name(
                std::ptr::null_mut(),
                c.as_ptr(),
                std::ptr::null(),
            )
        };
        if raw.is_null() {
            bail!(
                "this OpenSSL ({}) does not offer {n}",
                openssl::version::version()
            );
        }
        // SAFETY: raw is non-null and owned here.
        unsafe { openssl_sys::EVP_PKEY_CTX_free(raw) };
    }
    Ok(())
}

// ---------------------------------------------------------------- signatures

enum SignWith {
    /// Hash, then sign the digest on a context initialised once.
    Digest {
        md: Hasher,
        sign: PkeyCtx<Private>,
        verify: PkeyCtx<Private>,
    },
    /// The message itself on a context initialised once (ML-DSA, SLH-DSA).
    Message {
        sign: PkeyCtx<Private>,
        verify: PkeyCtx<Private>,
    },
    /// EVP_DigestSign/Verify with no digest on contexts bound to the key
    /// once and re-initialised per call (NULL key), as `openssl speed`
    /// does for EdDSA.
    OneShot(DigestCtx<true>, DigestCtx<false>),
}

/// An EVP_MD_CTX bound to a key for one-shot signing (`SIGN`) or
/// verifying, with its digest (NULL for EdDSA, SM3 for SM2).
struct DigestCtx<const SIGN: bool>(*mut openssl_sys::EVP_MD_CTX, *const openssl_sys::EVP_MD);

impl<const SIGN: bool> DigestCtx<SIGN> {
    fn new(pkey: &PKey<Private>) -> Result<Self> {
        Self::with_digest(pkey, std::ptr::null())
    }

    /// As `new`, hashing with `md` (a static EVP_MD such as EVP_sm3()).
    fn with_digest(pkey: &PKey<Private>, md: *const openssl_sys::EVP_MD) -> Result<Self> {
        // SAFETY: allocation only; checked for NULL below.
        let ctx = DigestCtx(unsafe { openssl_sys::EVP_MD_CTX_new() }, md);
        ensure!(!ctx.0.is_null(), "EVP_MD_CTX_new failed");
        // SAFETY: ctx.0 and pkey are valid.
        if unsafe { ctx.init(pkey.as_ptr()) } <= 0 {
            return Err(openssl::error::ErrorStack::get()).context("EVP_Digest(Sign|Verify)Init");
        }
        Ok(ctx)
    }

    /// EVP_DigestSignInit or EVP_DigestVerifyInit with the context's
    /// digest (none for EdDSA) and no engine; a NULL `pkey` keeps the key
    /// the context is bound to.
    ///
    /// # Safety
    /// `pkey` is NULL (once the context is bound to a key) or a valid key.
    unsafe fn init(&self, pkey: *mut openssl_sys::EVP_PKEY) -> libc::c_int {
        let init = if SIGN {
            openssl_sys::EVP_DigestSignInit
        } else {
            openssl_sys::EVP_DigestVerifyInit
        };
        // SAFETY: self.0 is a valid context; self.1 is NULL or a static
        // EVP_MD; pkey as the caller guarantees.
        unsafe {
            init(
                self.0,
                std::ptr::null_mut(),
                self.1,
                std::ptr::null_mut(),
                pkey,
            )
        }
    }
}

impl<const SIGN: bool> Drop for DigestCtx<SIGN> {
    fn drop(&mut self) {
        // SAFETY: allocated by EVP_MD_CTX_new, freed once.
        unsafe { openssl_sys::EVP_MD_CTX_free(self.0) }
    }
}

/// An OpenSSL signature scheme.
pub struct OsslSig {
    alg: OsslAlg,
    pkey: PKey<Private>,
    with: SignWith,
    msg: Vec<u8>,
    sig: Vec<u8>,
    max_sig: usize,
}

fn rsa_ctx(pkey: &PKey<Private>, pss: bool, sign: bool) -> Result<PkeyCtx<Private>> {
    let mut ctx = PkeyCtx::new(pkey)?;
    if sign {
        ctx.sign_init()?;
    } else {
        ctx.verify_init()?;
    }
    if pss {
        ctx.set_rsa_padding(Padding::PKCS1_PSS)?;
        ctx.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    } else {
        ctx.set_rsa_padding(Padding::PKCS1)?;
    }
    ctx.set_signature_md(openssl::md::Md::sha256())?;
    Ok(ctx)
}

/// A context set up once with EVP_PKEY_sign_message_init or
/// EVP_PKEY_verify_message_init for the signature algorithm `name`, as
/// `openssl speed` sets up ML-DSA and SLH-DSA.
fn message_ctx(pkey: &PKey<Private>, name: &str, sign: bool) -> Result<PkeyCtx<Private>> {
    let ctx = PkeyCtx::new(pkey)?;
    let c = CString::new(name)?;
    // SAFETY: c is NUL-terminated; NULL library context and properties mean the defaults.
    let alg = unsafe {
        openssl_sys::EVP_SIGNATURE_fetch(std::ptr::null_mut(), c.as_ptr(), std::ptr::null())
    };
    if alg.is_null() {
        return Err(openssl::error::ErrorStack::get())
            .with_context(|| format!("EVP_SIGNATURE_fetch({name})"));
    }
    // SAFETY: ctx and alg are valid; the context takes its own reference to
    // alg, so ours is freed right after.
    let r = unsafe {
        let r = if sign {
            openssl_sys::EVP_PKEY_sign_message_init(ctx.as_ptr(), alg, std::ptr::null())
        } else {
            openssl_sys::EVP_PKEY_verify_message_init(ctx.as_ptr(), alg, std::ptr::null())
        };
        openssl_sys::EVP_SIGNATURE_free(alg);
        r
    };
    if r <= 0 {
        return Err(openssl::error::ErrorStack::get()).with_context(|| {
            format!(
                "EVP_PKEY_{}_message_init({name})",
                if sign { "sign" } else { "verify" }
            )
        });
    }
    Ok(ctx)
}

impl OsslSig {
    /// Opens `alg` (a signature algorithm) to sign `message`, with a first key pair.
    pub fn open(alg: OsslAlg, message: Vec<u8>) -> Result<Self> {
        let pkey = keygen(alg)?;
        Ok(OsslSig {
            alg,
            with: Self::contexts(alg, &pkey)?,
            max_sig: pkey.size(),
            pkey,
            msg: message,
            sig: vec![],
        })
    }

    fn contexts(alg: OsslAlg, pkey: &PKey<Private>) -> Result<SignWith> {
        Ok(match alg {
            OsslAlg::Rsa { pss, .. } => SignWith::Digest {
                md: Hasher::new(MessageDigest::sha256())?,
                sign: rsa_ctx(pkey, pss, true)?,
                verify: rsa_ctx(pkey, pss, false)?,
            },
            OsslAlg::Ecdsa(c) => {
                let mut sign = PkeyCtx::new(pkey)?;
                sign.sign_init()?;
                let mut verify = PkeyCtx::new(pkey)?;
                verify.verify_init()?;
                SignWith::Digest {
                    md: Hasher::new(c.digest())?,
                    sign,
                    verify,
                }
            }
            OsslAlg::EdDsa(_) => SignWith::OneShot(DigestCtx::new(pkey)?, DigestCtx::new(pkey)?),
            OsslAlg::Sm2 => {
                // SAFETY: EVP_sm3 returns a static digest description.
                let sm3 = unsafe { openssl_sys::EVP_sm3() };
                SignWith::OneShot(
                    DigestCtx::with_digest(pkey, sm3)?,
                    DigestCtx::with_digest(pkey, sm3)?,
                )
            }
            OsslAlg::NamedSig(n) => SignWith::Message {
                sign: message_ctx(pkey, n, true)?,
                verify: message_ctx(pkey, n, false)?,
            },
            other => bail!("{other:?} is not a signature algorithm"),
        })
    }
}

impl SigScheme for OsslSig {
    fn keygen(&mut self) -> Result<()> {
        self.pkey = keygen(self.alg)?;
        self.with = Self::contexts(self.alg, &self.pkey)?;
        Ok(())
    }
    fn sign(&mut self) -> Result<()> {
        self.sig.resize(self.max_sig, 0);
        let n = match &mut self.with {
            SignWith::Digest { md, sign, .. } => {
                md.update(&self.msg)?;
                let d = md.finish()?;
                sign.sign(&d, Some(&mut self.sig))?
            }
            SignWith::Message { sign, .. } => sign.sign(&self.msg, Some(&mut self.sig))?,
            SignWith::OneShot(ctx, _) => {
                let mut len = self.sig.len();
                // SAFETY: ctx is bound to the key; re-initialising with all
                // NULL arguments keeps it. sig holds EVP_PKEY_get_size bytes.
                let r = unsafe {
                    ctx.init(std::ptr::null_mut()) > 0
                        && openssl_sys::EVP_DigestSign(
                            ctx.0,
                            self.sig.as_mut_ptr(),
                            &mut len,
                            self.msg.as_ptr(),
                            self.msg.len(),
                        ) > 0
                };
                if !r {
                    return Err(openssl::error::ErrorStack::get()).context("EVP_DigestSign");
                }
                len
            }
        };
        self.sig.truncate(n);
        Ok(())
    }
    fn verify(&mut self) -> Result<bool> {
        // OpenSSL reports a rejection as an error on its queue; either way
        // it is a rejection, and the queue is cleared by the crate.
        Ok(match &mut self.with {
            SignWith::Digest { md, verify, .. } => {
                md.update(&self.msg)?;
                let d = md.finish()?;
                verify.verify(&d, &self.sig).unwrap_or(false)
            }
            SignWith::Message { verify, .. } => {
                verify.verify(&self.msg, &self.sig).unwrap_or(false)
            }
            SignWith::OneShot(_, ctx) => {
                // SAFETY: as in sign; message and signature are only read.
                let r = unsafe {
                    ctx.init(std::ptr::null_mut()) > 0
                        && openssl_sys::EVP_DigestVerify(
                            ctx.0,
                            self.sig.as_ptr(),
                            self.sig.len(),
                            self.msg.as_ptr(),
                            self.msg.len(),
                        ) == 1
                };
                // A rejection leaves an error on OpenSSL's queue: drop it.
                let _ = openssl::error::ErrorStack::get();
                r
            }
        })
    }
    fn message_mut(&mut self) -> &mut Vec<u8> {
        &mut self.msg
    }
    fn signature_mut(&mut self) -> &mut Vec<u8> {
        &mut self.sig
    }
    fn max_signature_len(&self) -> usize {
        self.max_sig
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        key_bytes(&self.pkey, self.alg)
    }
}

// ---------------------------------------------------------------- KEMs

/// An EVP_PKEY_CTX set up for encapsulation or decapsulation.
struct KemCtx(PkeyCtx<Private>);

impl KemCtx {
    fn new(pkey: &PKey<Private>, encaps: bool) -> Result<Self> {
        let ctx = PkeyCtx::new(pkey)?;
        // SAFETY: ctx holds a valid context; NULL means no parameters.
        let r = unsafe {
            if encaps {
                openssl_sys::EVP_PKEY_encapsulate_init(ctx.as_ptr(), std::ptr::null())
            } else {
                openssl_sys::EVP_PKEY_decapsulate_init(ctx.as_ptr(), std::ptr::null())
            }
        };
        if r <= 0 {
            return Err(openssl::error::ErrorStack::get())
                .context("EVP_PKEY_(en|de)capsulate_init");
        }
        Ok(KemCtx(ctx))
    }
    fn ptr(&self) -> *mut openssl_sys::EVP_PKEY_CTX {
        self.0.as_ptr()
    }
}

enum KemWith {
    /// EVP_PKEY encapsulate/decapsulate on contexts initialised once.
    Evp {
        enc: KemCtx,
        dec: KemCtx,
        /// Ciphertext and shared-secret lengths OpenSSL reported.
        lens: (usize, usize),
    },
    /// ECDH: encaps = ephemeral keygen + derive; decaps = parse + derive.
    Dh,
}

/// An OpenSSL KEM, or a Diffie-Hellman key exchange modelled as one.
pub struct OsslKem {
    alg: OsslAlg,
    pkey: PKey<Private>,
    with: KemWith,
    ct: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
}

impl OsslKem {
    /// Opens `alg` (a KEM or key exchange), with a first key pair.
    pub fn open(alg: OsslAlg) -> Result<Self> {
        let pkey = keygen(alg)?;
        let mut k = OsslKem {
            alg,
            pkey,
            with: KemWith::Dh,
            ct: vec![],
            ss_enc: vec![],
            ss_dec: vec![],
        };
        k.with = k.contexts()?;
        Ok(k)
    }

    fn contexts(&self) -> Result<KemWith> {
        Ok(match self.alg {
            OsslAlg::NamedKem(_) => {
                let enc = KemCtx::new(&self.pkey, true)?;
                let dec = KemCtx::new(&self.pkey, false)?;
                let (mut lc, mut ls) = (0usize, 0usize);
                // SAFETY: NULL outputs ask only for the lengths.
                let r = unsafe {
                    openssl_sys::EVP_PKEY_encapsulate(
                        enc.ptr(),
                        std::ptr::null_mut(),
                        &mut lc,
                        std::ptr::null_mut(),
                        &mut ls,
                    )
                };
                if r <= 0 {
                    return Err(openssl::error::ErrorStack::get())
                        .context("EVP_PKEY_encapsulate (lengths)");
                }
                KemWith::Evp {
                    enc,
                    dec,
                    lens: (lc, ls),
                }
            }
            OsslAlg::Ecdh(_) | OsslAlg::Xdh(_) => KemWith::Dh,
            other => bail!("{other:?} is not a KEM"),
        })
    }

    fn encode_public(&self, key: &PKey<Private>) -> Result<Vec<u8>> {
        Ok(match self.alg {
            // The uncompressed point, as a TLS key share.
            OsslAlg::Ecdh(_) => encoded_public_key(key)?,
            _ => key.raw_public_key()?,
        })
    }

    fn decode_public(&self, bytes: &[u8]) -> Result<PKey<Public>> {
        Ok(match self.alg {
            OsslAlg::Ecdh(c) => {
                let group = EcGroup::from_curve_name(c.nid())?;
                let mut ctx = BigNumContext::new()?;
                let p = EcPoint::from_bytes(&group, bytes, &mut ctx)?;
                PKey::from_ec_key(EcKey::from_public_key(&group, &p)?)?
            }
            OsslAlg::Xdh(x25519) => {
                PKey::public_key_from_raw_bytes(bytes, if x25519 { Id::X25519 } else { Id::X448 })?
            }
            other => bail!("{other:?} is not a key exchange"),
        })
    }
}

impl KemScheme for OsslKem {
    fn keygen(&mut self) -> Result<()> {
        self.pkey = keygen(self.alg)?;
        self.with = self.contexts()?;
        Ok(())
    }
    fn encaps(&mut self) -> Result<()> {
        match &self.with {
            KemWith::Evp { enc, lens, .. } => {
                let (mut lc, mut ls) = *lens;
                self.ct.resize(lc, 0);
                self.ss_enc.resize(ls, 0);
                // SAFETY: the buffers hold the lengths OpenSSL just reported.
                let r = unsafe {
                    openssl_sys::EVP_PKEY_encapsulate(
                        enc.ptr(),
                        self.ct.as_mut_ptr(),
                        &mut lc,
                        self.ss_enc.as_mut_ptr(),
                        &mut ls,
                    )
                };
                if r <= 0 {
                    return Err(openssl::error::ErrorStack::get()).context("EVP_PKEY_encapsulate");
                }
                self.ct.truncate(lc);
                self.ss_enc.truncate(ls);
            }
            KemWith::Dh => {
                let eph = keygen(self.alg)?;
                let mut d = Deriver::new(&eph)?;
                d.set_peer(&self.pkey)?;
                self.ss_enc = d.derive_to_vec()?;
                self.ct = self.encode_public(&eph)?;
            }
        }
        Ok(())
    }
    fn decaps(&mut self) -> Result<()> {
        match &self.with {
            KemWith::Evp { dec, lens, .. } => {
                let mut ls = lens.1;
                self.ss_dec.resize(ls, 0);
                // SAFETY: ss_dec holds the length OpenSSL reported; ct is read only.
                let r = unsafe {
                    openssl_sys::EVP_PKEY_decapsulate(
                        dec.ptr(),
                        self.ss_dec.as_mut_ptr(),
                        &mut ls,
                        self.ct.as_ptr(),
                        self.ct.len(),
                    )
                };
                if r <= 0 {
                    return Err(openssl::error::ErrorStack::get()).context("EVP_PKEY_decapsulate");
                }
                self.ss_dec.truncate(ls);
            }
            KemWith::Dh => {
                let peer = self.decode_public(&self.ct)?;
                let mut d = Deriver::new(&self.pkey)?;
                d.set_peer(&peer)?;
                self.ss_dec = d.derive_to_vec()?;
            }
        }
        Ok(())
    }
    fn secrets(&self) -> (&[u8], &[u8]) {
        (&self.ss_enc, &self.ss_dec)
    }
    fn ciphertext_mut(&mut self) -> &mut [u8] {
        &mut self.ct
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        key_bytes(&self.pkey, self.alg)
    }
}
