//! Stateful hash-based signatures: XMSS and XMSS^MT (RFC 8391) and LMS/HSS
//! (RFC 8554), both in NIST SP 800-208, from pqcprof's second build of the
//! same liboqs source oqs-sys vendors, with only these schemes in it and
//! every symbol kept apart from oqs-sys's liboqs (build/stfl.rs).
//!
//! A stateful key signs a limited number of times (its budget) and must
//! never reuse a one-time key: liboqs counts the signatures left and, after
//! each signature, hands the updated secret key to a store callback before
//! the signature counts as made. pqcprof's callback keeps the latest copy
//! in memory; a real signer would write it to durable storage first.
//!
//! pqcprof never signs past the count liboqs gives at key generation: on
//! this liboqs (0.13) signing goes on succeeding once the count is spent,
//! LMS reusing its last one-time key (signatures 32, 33... of an H5 key all
//! carry leaf 31) and XMSS making one more signature that does not verify.
//!
//! Longer than most files: the FFI of the symbol-isolated liboqs build, the
//! signature budget of each of XMSS, XMSS^MT, LMS and HSS, and their tests
//! belong together.

use crate::sweep::scheme::{KeyBytes, SigScheme};
use anyhow::{anyhow, bail, ensure, Result};
use libc::{c_char, c_int, c_ulonglong, c_void};
use std::ffi::{CStr, CString};
use std::ptr::NonNull;

/// What the build made (source, recipe, build time), for `check` and docs.
pub const BUILD: &str = env!("PQCPROF_STFL_BUILD");

/// `OQS_SUCCESS` (liboqs's `OQS_STATUS` is a C enum: 0 success, -1 error).
const OQS_SUCCESS: c_int = 0;

/// The leading fields of liboqs's `OQS_SIG_STFL` (sig_stfl.h, with
/// `OQS_ALLOW_STFL_KEY_AND_SIG_GEN`); liboqs allocates it, pqcprof only
/// reads these through a pointer, so the function pointers after them are
/// not declared. Only the lengths are read; the fields before them are
/// declared for the layout.
#[repr(C)]
#[allow(dead_code)]
struct RawStfl {
    oid: u32,
    method_name: *const c_char,
    alg_version: *const c_char,
    euf_cma: bool,
    suf_cma: bool,
    length_public_key: usize,
    length_secret_key: usize,
    length_signature: usize,
}

/// liboqs's `OQS_SIG_STFL_SECRET_KEY`, used only through pointers.
#[repr(C)]
struct RawSecretKey {
    _opaque: [u8; 0],
}

/// liboqs's `secure_store_sk` callback type.
type StoreCallback = unsafe extern "C" fn(*mut u8, usize, *mut c_void) -> c_int;

/// The renamed entry points of the stateful build (build/stfl.rs's
/// `ENTRY_POINTS` with the `pqcprof_stfl_` prefix); declarations from
/// liboqs 0.13's sig_stfl.h and common.h.
mod ffi {
    use super::{RawSecretKey, RawStfl, StoreCallback};
    use libc::{c_char, c_int, c_ulonglong, c_void};
    extern "C" {
        #[link_name = "pqcprof_stfl_OQS_version"]
        pub fn version() -> *const c_char;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_alg_count"]
        pub fn alg_count() -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_alg_identifier"]
        pub fn alg_identifier(i: usize) -> *const c_char;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_alg_is_enabled"]
        pub fn alg_is_enabled(name: *const c_char) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_new"]
        pub fn new(name: *const c_char) -> *mut RawStfl;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_free"]
        pub fn free(sig: *mut RawStfl);
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_keypair"]
        pub fn keypair(sig: *const RawStfl, pk: *mut u8, sk: *mut RawSecretKey) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_sign"]
        pub fn sign(
            sig: *const RawStfl,
            signature: *mut u8,
            signature_len: *mut usize,
            message: *const u8,
            message_len: usize,
            sk: *mut RawSecretKey,
        ) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_verify"]
        pub fn verify(
            sig: *const RawStfl,
            message: *const u8,
            message_len: usize,
            signature: *const u8,
            signature_len: usize,
            pk: *const u8,
        ) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_sigs_remaining"]
        pub fn sigs_remaining(
            sig: *const RawStfl,
            remain: *mut c_ulonglong,
            sk: *const RawSecretKey,
        ) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_sigs_total"]
        pub fn sigs_total(
            sig: *const RawStfl,
            total: *mut c_ulonglong,
            sk: *const RawSecretKey,
        ) -> c_int;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_SECRET_KEY_new"]
        pub fn secret_key_new(name: *const c_char) -> *mut RawSecretKey;
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_SECRET_KEY_free"]
        pub fn secret_key_free(sk: *mut RawSecretKey);
        #[link_name = "pqcprof_stfl_OQS_SIG_STFL_SECRET_KEY_SET_store_cb"]
        pub fn secret_key_set_store_cb(
            sk: *mut RawSecretKey,
            cb: StoreCallback,
            context: *mut c_void,
        );
    }
}

/// The liboqs version of the stateful build (the same source as oqs-sys's).
pub fn version() -> String {
    // SAFETY: returns a pointer to liboqs's static version string.
    unsafe { CStr::from_ptr(ffi::version()) }
        .to_string_lossy()
        .into_owned()
}

/// Every stateful scheme the stateful build lists, with whether it is enabled.
pub fn algs() -> Vec<crate::sweep::oqs::OqsAlg> {
    // SAFETY: plain query of liboqs's static algorithm table.
    let n = unsafe { ffi::alg_count() }.max(0) as usize;
    (0..n)
        .filter_map(|i| {
            // SAFETY: i < count; liboqs returns a static NUL-terminated name or NULL.
            let p = unsafe { ffi::alg_identifier(i) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
        .map(|name| {
            let c = CString::new(name.clone()).expect("liboqs names have no NUL");
            // SAFETY: c is a valid NUL-terminated string.
            let enabled = unsafe { ffi::alg_is_enabled(c.as_ptr()) } == 1;
            crate::sweep::oqs::OqsAlg { name, enabled }
        })
        .collect()
}

/// One layer of a hash-based tree: its height and (LMS) Winternitz width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    /// Tree height: the layer has 2^height one-time keys.
    pub height: u32,
    /// LM-OTS Winternitz parameter w in bits (1, 2, 4, 8); XMSS's WOTS+ uses w = 16, given as 4.
    pub w_bits: u32,
}

/// A stateful parameter set, read from its liboqs name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// `LMS`, `XMSS` or `XMSS^MT`.
    pub family: &'static str,
    /// Layers from the top (HSS levels; XMSS^MT's d equal layers).
    pub layers: Vec<Layer>,
    /// Hash output bytes n.
    pub n: u32,
}

impl Params {
    /// Parses `LMS_SHA256_H10_W4_H5_W8`, `XMSS-SHA2_10_256`,
    /// `XMSS-SHAKE256_10_192`, `XMSSMT-SHA2_20/4_256`.
    pub fn parse(name: &str) -> Result<Params> {
        let bad = || anyhow!("not a liboqs XMSS/LMS name: {name}");
        if let Some(rest) = name.strip_prefix("LMS_SHA256_") {
            let parts: Vec<&str> = rest.split('_').collect();
            ensure!(!parts.is_empty() && parts.len() % 2 == 0, bad());
            let layers = parts
                .chunks(2)
                .map(|c| {
                    let h = c[0].strip_prefix('H').and_then(|v| v.parse().ok());
                    let w = c[1].strip_prefix('W').and_then(|v| v.parse().ok());
                    h.zip(w).map(|(height, w_bits)| Layer { height, w_bits })
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(bad)?;
            return Ok(Params {
                family: "LMS",
                layers,
                n: 32,
            });
        }
        let (family, rest) = if let Some(r) = name.strip_prefix("XMSSMT-") {
            ("XMSS^MT", r)
        } else if let Some(r) = name.strip_prefix("XMSS-") {
            ("XMSS", r)
        } else {
            bail!(bad());
        };
        // <hash>_<h>[/<d>]_<bits>
        let parts: Vec<&str> = rest.split('_').collect();
        ensure!(parts.len() == 3, bad());
        let (h, d) = match parts[1].split_once('/') {
            Some((h, d)) => (h.parse::<u32>(), d.parse::<u32>()),
            None => (parts[1].parse::<u32>(), Ok(1)),
        };
        let (h, d) = (h.map_err(|_| bad())?, d.map_err(|_| bad())?);
        let bits: u32 = parts[2].parse().map_err(|_| bad())?;
        ensure!(d >= 1 && h % d == 0 && bits % 8 == 0, bad());
        Ok(Params {
            family,
            layers: vec![
                Layer {
                    height: h / d,
                    w_bits: 4
                };
                d as usize
            ],
            n: bits / 8,
        })
    }

    /// Total tree height: the key allows 2^height signatures.
    pub fn height(&self) -> u32 {
        self.layers.iter().map(|l| l.height).sum()
    }

    /// (public key, signature) bytes the standards give for this set.
    ///
    /// LMS/HSS, RFC 8554: an LM-OTS signature is 4 + n + p*n bytes with
    /// p = u + v, u = ceil(8n/w), v = ceil((floor(log2((2^w - 1) u)) + 1) / w)
    /// (Appendix B); an LMS signature adds 4 + h*n (§5.4); an LMS public key
    /// is 4 + 4 + 16 + n (§5.3); HSS (§6) prefixes the level count to the
    /// top public key and, to the signature, the number of signed lower
    /// public keys followed by each upper level's LMS signature and the
    /// next level's public key.
    ///
    /// XMSS and XMSS^MT, RFC 8391 with w = 16: len = len1 + len2, len1 =
    /// 2n, len2 = floor(log2(len1 * 15) / 4) + 1 (§3.1.1); an XMSS signature
    /// is 4 + n + (len + h) n bytes (§4.1.8) and an XMSS^MT one
    /// ceil(h/8) + n + (h + d len) n (§4.2.3); liboqs's public key is the
    /// 4-byte OID followed by root and seed, 4 + 2n (§4.1.7). SP 800-208
    /// adds the n = 24 sets with the same layout.
    pub fn standard_sizes(&self) -> (usize, usize) {
        let n = self.n as usize;
        let log2_floor = |x: usize| (usize::BITS - 1 - x.leading_zeros()) as usize;
        if self.family == "LMS" {
            let lms_pk = 4 + 4 + 16 + n;
            let lms_sig = |l: &Layer| {
                let w = l.w_bits as usize;
                let u = (8 * n).div_ceil(w);
                let v = (log2_floor(((1 << w) - 1) * u) + 1).div_ceil(w);
                4 + (4 + n + (u + v) * n) + 4 + l.height as usize * n
            };
            let levels = self.layers.len();
            let sig = 4
                + self.layers[..levels - 1]
                    .iter()
                    .map(|l| lms_sig(l) + lms_pk)
                    .sum::<usize>()
                + lms_sig(&self.layers[levels - 1]);
            return (4 + lms_pk, sig);
        }
        let len1 = 2 * n;
        let len = len1 + log2_floor(len1 * 15) / 4 + 1;
        let (h, d) = (self.height() as usize, self.layers.len());
        let sig = if self.family == "XMSS" {
            4 + n + (len + h) * n
        } else {
            h.div_ceil(8) + n + (h + d * len) * n
        };
        (4 + 2 * n, sig)
    }

    /// How costly key generation (and, in liboqs's LMS, every signature,
    /// which rebuilds the tree from the seed) is. Measured on a 2-core x86
    /// machine: a height-10 layer takes 0.2 to 0.4 s for LMS W1 to W4,
    /// 2.5 s for LMS W8, 1 to 1.6 s for XMSS with n = 24 or 32 and 5 s with
    /// n = 64; each extra level of height multiplies that by 2.
    pub fn cost(&self) -> Cost {
        let top = self.layers.iter().map(|l| l.height).max().unwrap_or(0);
        let at_top: Vec<&Layer> = self.layers.iter().filter(|l| l.height == top).collect();
        match top {
            t if t >= 20 => Cost::TooTall(t),
            t if t > 10 => Cost::Slow,
            10 if at_top.len() > 1
                || self.n > 32
                || (self.family == "LMS" && at_top.iter().any(|l| l.w_bits == 8)) =>
            {
                Cost::Slow
            }
            _ => Cost::Quick,
        }
    }
}

/// Whether a parameter set runs in every sweep, only with `--slow`, or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// Key generation and signing take about a second or less.
    Quick,
    /// Seconds to minutes per key: only with `--slow`.
    Slow,
    /// A layer of this height (2^20 one-time keys or more): from about half
    /// an hour to about a day per key on one core, extrapolated from the
    /// height-10 sets; not measured.
    TooTall(u32),
}

/// A liboqs stateful signature scheme with one key pair, message and signature.
pub struct StflSig {
    alg: NonNull<RawStfl>,
    name: CString,
    sk: Option<NonNull<RawSecretKey>>,
    /// The store callback's context: the latest serialised secret key,
    /// boxed so the address liboqs holds stays put when the scheme moves.
    #[allow(clippy::box_collection)]
    stored: Box<Vec<u8>>,
    pk: Vec<u8>,
    msg: Vec<u8>,
    signature: Vec<u8>,
    max_sig: usize,
    secret_len: usize,
    /// Signatures the key has left, counted by pqcprof from liboqs's count
    /// at key generation; signing refuses at 0.
    left: u64,
}

/// The store callback: keeps liboqs's serialised secret key in memory.
unsafe extern "C" fn store(buf: *mut u8, len: usize, context: *mut c_void) -> c_int {
    if buf.is_null() || context.is_null() {
        return -1;
    }
    // SAFETY: context is the `Box<Vec<u8>>` of the StflSig that registered
    // this callback (alive while its key is); liboqs passes `len` readable bytes.
    let (dst, src) = unsafe {
        (
            &mut *(context as *mut Vec<u8>),
            std::slice::from_raw_parts(buf, len),
        )
    };
    dst.clear();
    dst.extend_from_slice(src);
    OQS_SUCCESS
}

fn ok(status: c_int, what: &str) -> Result<()> {
    ensure!(status == OQS_SUCCESS, "liboqs {what} returned {status}");
    Ok(())
}

impl StflSig {
    /// Opens `name` (a liboqs stateful name) to sign `message`.
    pub fn open(name: &str, message: Vec<u8>) -> Result<Self> {
        let c = CString::new(name)?;
        // SAFETY: c is a valid NUL-terminated string; NULL means unknown or disabled.
        let alg = NonNull::new(unsafe { ffi::new(c.as_ptr()) })
            .ok_or_else(|| anyhow!("liboqs could not open stateful scheme {name}"))?;
        // SAFETY: non-null, allocated by liboqs, owned until drop.
        let info = unsafe { alg.as_ref() };
        Ok(StflSig {
            pk: vec![0; info.length_public_key],
            max_sig: info.length_signature,
            secret_len: info.length_secret_key,
            signature: Vec::with_capacity(info.length_signature),
            alg,
            name: c,
            sk: None,
            stored: Box::default(),
            msg: message,
            left: 0,
        })
    }

    fn free_key(&mut self) {
        if let Some(sk) = self.sk.take() {
            // SAFETY: made by OQS_SIG_STFL_SECRET_KEY_new, freed once.
            unsafe { ffi::secret_key_free(sk.as_ptr()) }
        }
    }

    fn key(&self) -> Result<NonNull<RawSecretKey>> {
        self.sk.ok_or_else(|| anyhow!("no key pair yet"))
    }

    /// The serialised secret key liboqs stored after the last signature.
    pub fn stored_secret_key(&self) -> &[u8] {
        &self.stored
    }
}

impl Drop for StflSig {
    fn drop(&mut self) {
        self.free_key();
        // SAFETY: made by OQS_SIG_STFL_new, freed once.
        unsafe { ffi::free(self.alg.as_ptr()) }
    }
}

impl SigScheme for StflSig {
    fn keygen(&mut self) -> Result<()> {
        self.free_key();
        // SAFETY: name is a valid NUL-terminated string; NULL means failure.
        let sk = NonNull::new(unsafe { ffi::secret_key_new(self.name.as_ptr()) })
            .ok_or_else(|| anyhow!("liboqs could not make a secret key object"))?;
        self.sk = Some(sk);
        // SAFETY: pk has length_public_key bytes; sk is a fresh key object.
        ok(
            unsafe { ffi::keypair(self.alg.as_ptr(), self.pk.as_mut_ptr(), sk.as_ptr()) },
            "OQS_SIG_STFL_keypair",
        )?;
        let context = &mut *self.stored as *mut Vec<u8> as *mut c_void;
        // SAFETY: the context outlives the key (both are freed by this
        // struct, the key first); the callback only copies bytes into it.
        unsafe { ffi::secret_key_set_store_cb(sk.as_ptr(), store, context) };
        self.left = match self.signature_budget() {
            Some(r) => r?.0,
            None => unreachable!("a stateful scheme has a budget"),
        };
        Ok(())
    }
    fn sign(&mut self) -> Result<()> {
        let sk = self.key()?;
        ensure!(
            self.left > 0,
            "the key's signatures are spent; pqcprof does not sign past liboqs's count (liboqs 0.13 would go on, reusing a one-time key in LMS)"
        );
        let (alg, msg) = (self.alg, &self.msg);
        crate::sweep::oqs::sign_into(&mut self.signature, self.max_sig, |out, len| {
            // SAFETY: `out` holds length_signature bytes, the most liboqs
            // writes; the message is only read; sk is this scheme's key.
            let st =
                unsafe { ffi::sign(alg.as_ptr(), out, len, msg.as_ptr(), msg.len(), sk.as_ptr()) };
            ok(st, "OQS_SIG_STFL_sign")
        })?;
        self.left -= 1;
        Ok(())
    }
    fn verify(&mut self) -> Result<bool> {
        // SAFETY: every buffer is only read, with its own length; pk has
        // length_public_key bytes.
        let st = unsafe {
            ffi::verify(
                self.alg.as_ptr(),
                self.msg.as_ptr(),
                self.msg.len(),
                self.signature.as_ptr(),
                self.signature.len(),
                self.pk.as_ptr(),
            )
        };
        Ok(st == OQS_SUCCESS)
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
            secret_raw: Some(self.secret_len),
            public_der: None,
            secret_der: None,
        })
    }
    fn signature_budget(&self) -> Option<Result<(u64, u64)>> {
        Some((|| {
            let sk = self.key()?;
            let (mut left, mut total): (c_ulonglong, c_ulonglong) = (0, 0);
            // SAFETY: sk is this scheme's live key; the outputs are plain integers.
            ok(
                unsafe { ffi::sigs_remaining(self.alg.as_ptr(), &mut left, sk.as_ptr()) },
                "OQS_SIG_STFL_sigs_remaining",
            )?;
            // SAFETY: as above.
            ok(
                unsafe { ffi::sigs_total(self.alg.as_ptr(), &mut total, sk.as_ptr()) },
                "OQS_SIG_STFL_sigs_total",
            )?;
            Ok((left, total))
        })())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_into_layers() {
        let p = Params::parse("LMS_SHA256_H10_W4_H5_W8").unwrap();
        assert_eq!(p.family, "LMS");
        assert_eq!(
            p.layers,
            vec![
                Layer {
                    height: 10,
                    w_bits: 4
                },
                Layer {
                    height: 5,
                    w_bits: 8
                }
            ]
        );
        assert_eq!(p.height(), 15);
        let x = Params::parse("XMSSMT-SHA2_40/8_256").unwrap();
        assert_eq!(
            (x.family, x.layers.len(), x.height(), x.n),
            ("XMSS^MT", 8, 40, 32)
        );
        let y = Params::parse("XMSS-SHAKE256_10_192").unwrap();
        assert_eq!((y.height(), y.n), (10, 24));
        assert!(Params::parse("ML-DSA-65").is_err());
        assert!(Params::parse("XMSSMT-SHA2_20/3_256").is_err());
    }

    #[test]
    fn standard_sizes_follow_the_rfcs() {
        let z = |n: &str| Params::parse(n).unwrap().standard_sizes();
        // Worked by hand from RFC 8554 Table 1 (p = 265, 133, 67, 34 for
        // n = 32 and w = 1, 2, 4, 8) and RFC 8391 (len = 67 for n = 32).
        assert_eq!(
            z("LMS_SHA256_H5_W1"),
            (60, 4 + 4 + 4 + 32 + 265 * 32 + 4 + 5 * 32)
        );
        assert_eq!(
            z("LMS_SHA256_H10_W2"),
            (60, 4 + 4 + 4 + 32 + 133 * 32 + 4 + 10 * 32)
        );
        let lms58 = 4 + 4 + 32 + 34 * 32 + 4 + 5 * 32;
        assert_eq!(z("LMS_SHA256_H5_W8_H5_W8"), (60, 4 + lms58 + 56 + lms58));
        assert_eq!(z("XMSS-SHA2_10_256"), (68, 4 + 32 + (67 + 10) * 32));
        assert_eq!(z("XMSS-SHA2_10_512"), (132, 4 + 64 + (131 + 10) * 64));
        assert_eq!(z("XMSS-SHA2_10_192"), (52, 4 + 24 + (51 + 10) * 24));
        assert_eq!(z("XMSSMT-SHA2_20/2_256"), (68, 3 + 32 + (20 + 2 * 67) * 32));
    }

    #[test]
    fn a_key_signs_exactly_its_budget_then_refuses() {
        let mut s = StflSig::open("LMS_SHA256_H5_W1", b"budget".to_vec()).unwrap();
        assert!(s.signature_budget().unwrap().is_err(), "no key yet");
        s.keygen().unwrap();
        let (left, total) = s.signature_budget().unwrap().unwrap();
        assert_eq!(left, total);
        // liboqs counts 2^5 - 1 = 31 signatures for a height-5 tree.
        assert_eq!(total, 31);
        for i in 1..=total {
            s.sign().unwrap();
            assert!(s.verify().unwrap());
            assert_eq!(s.signature_budget().unwrap().unwrap(), (total - i, total));
            assert!(!s.stored_secret_key().is_empty(), "the store callback ran");
        }
        // liboqs itself would go on (see the module's doc); pqcprof stops.
        let e = s.sign().unwrap_err();
        assert!(e.to_string().contains("signatures are spent"), "{e}");
        assert!(
            s.verify().unwrap(),
            "the last good signature still verifies"
        );
        s.keygen().unwrap();
        assert_eq!(s.signature_budget().unwrap().unwrap(), (31, 31));
    }

    #[test]
    fn a_window_longer_than_the_budget_stops_at_the_last_signature() {
        use crate::sweep::timing::{measure_capped, Window};
        let mut s = StflSig::open("LMS_SHA256_H5_W1", b"window".to_vec()).unwrap();
        s.keygen().unwrap();
        let (left, _) = s.signature_budget().unwrap().unwrap();
        let m = measure_capped(
            &mut || s.sign(),
            Window {
                warmup: 0.01,
                window: 600.0,
            },
            None,
            &std::sync::atomic::AtomicBool::new(false),
            Some(left),
        )
        .unwrap();
        assert!(m.budget_ran_out);
        assert_eq!(m.iterations + m.warmup_ops, left);
        assert!(m.warmup_ops <= left / 2);
        assert_eq!(s.signature_budget().unwrap().unwrap().0, 0);
        assert!(s.verify().unwrap());
    }

    /// The renamed copy has XMSS/LMS; oqs-sys's liboqs, which every other
    /// baseline runs, still has them disabled: two separate libraries of
    /// the same version.
    #[test]
    fn the_stateful_build_is_kept_apart_from_oqs_sys() {
        extern "C" {
            // oqs-sys's liboqs (sig_stfl.c is always compiled; oqs-sys's
            // bindings leave OQS_SIG_STFL_* out). Declared from sig_stfl.h.
            fn OQS_SIG_STFL_alg_is_enabled(name: *const c_char) -> c_int;
        }
        let name = CString::new("XMSS-SHA2_10_256").unwrap();
        // SAFETY: name is NUL-terminated; a plain table look-up.
        assert_eq!(unsafe { OQS_SIG_STFL_alg_is_enabled(name.as_ptr()) }, 0);
        // SAFETY: as above, in the stateful build.
        assert_eq!(unsafe { ffi::alg_is_enabled(name.as_ptr()) }, 1);
        assert_eq!(version(), crate::probe::libraries::liboqs_version());
        let on = algs();
        assert_eq!(on.len(), 70, "sig_stfl.h lists 70 sets");
        for n in [
            "LMS_SHA256_H5_W1",
            "LMS_SHA256_H10_W2",
            "XMSSMT-SHA2_60/12_256",
        ] {
            assert!(on.iter().any(|a| a.name == n && a.enabled), "{n}");
        }
    }

    #[test]
    fn tall_trees_are_slow_or_not_measured() {
        let c = |n: &str| Params::parse(n).unwrap().cost();
        assert_eq!(c("LMS_SHA256_H5_W1"), Cost::Quick);
        assert_eq!(c("LMS_SHA256_H10_W2"), Cost::Quick);
        assert_eq!(c("XMSS-SHA2_10_256"), Cost::Quick);
        assert_eq!(c("XMSSMT-SHA2_60/12_256"), Cost::Quick);
        assert_eq!(c("LMS_SHA256_H10_W8"), Cost::Slow);
        assert_eq!(c("XMSS-SHA2_10_512"), Cost::Slow);
        assert_eq!(c("XMSS-SHA2_16_256"), Cost::Slow);
        assert_eq!(c("XMSSMT-SHA2_20/2_256"), Cost::Slow);
        assert_eq!(c("XMSS-SHA2_20_256"), Cost::TooTall(20));
        assert_eq!(c("LMS_SHA256_H20_W8_H5_W8"), Cost::TooTall(20));
    }
}
