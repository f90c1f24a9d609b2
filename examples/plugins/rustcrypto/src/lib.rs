//! A pqcprof plugin over RustCrypto's `ml-kem` and `ml-dsa`: every
//! parameter set and operation of `include/pqcprof_plugin.h`, one item at a
//! time inside each batched call, thread-safe (no shared state).
//!
//! Build: `cargo build --release` here, then measure
//! `target/release/libpqcprof_plugin_rustcrypto.so` with
//! `pqcprof bench --backend plugin:PATH` (see docs/plugins.md).

#![allow(deprecated)] // the expanded key encodings FIPS 203/204 and pqcprof pass around

use ml_dsa::{
    EncodedVerifyingKey, ExpandedSigningKey, ExpandedSigningKeyBytes, MlDsa44, MlDsa65, MlDsa87,
    MlDsaParams, Seed, Signature, VerifyingKey,
};
use ml_kem::{Decapsulate, ExpandedKeyEncoding, KeyExport};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// `pqcprof_call`.
#[repr(C)]
pub struct Call {
    parameter_set: u32,
    stream: *mut c_void,
    device: c_int,
    error: *mut c_char,
    error_capacity: usize,
}

impl Call {
    /// Writes `msg` (cut to fit, NUL-terminated) into the caller's buffer
    /// and returns the error code `code`.
    fn fail(&self, code: c_int, msg: &str) -> c_int {
        if !self.error.is_null() && self.error_capacity > 0 {
            let n = msg.len().min(self.error_capacity - 1);
            // SAFETY: the caller's buffer holds error_capacity bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(msg.as_ptr(), self.error.cast::<u8>(), n);
                *self.error.add(n) = 0;
            }
        }
        code
    }
}

/// `pqcprof_algorithm`.
#[repr(C)]
pub struct Algorithm {
    name: *const c_char,
    operations: u32,
    public_key_bytes: usize,
    secret_key_bytes: usize,
    ciphertext_bytes: usize,
    shared_secret_bytes: usize,
    signature_bytes: usize,
}

type KeygenFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type EncapsFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type DecapsFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type SignFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type VerifyFn = SignFn;

/// `pqcprof_plugin_descriptor`.
#[repr(C)]
pub struct Descriptor {
    abi_version: u32,
    name: *const c_char,
    version: *const c_char,
    memory: u32,
    thread_safe: u32,
    algorithms: *const Algorithm,
    algorithm_count: usize,
    mlkem_keygen: Option<KeygenFn>,
    mlkem_encaps: Option<EncapsFn>,
    mlkem_decaps: Option<DecapsFn>,
    mldsa_keygen: Option<KeygenFn>,
    mldsa_sign: Option<SignFn>,
    mldsa_verify: Option<VerifyFn>,
}

// SAFETY: the descriptor is constant data (static strings and functions).
unsafe impl Sync for Descriptor {}
unsafe impl Sync for Algorithm {}

const KEM_OPS: u32 = 1 | 2 | 4;
const DSA_OPS: u32 = 1 | 8 | 16;

const fn kem(name: &'static CStr, pk: usize, sk: usize, ct: usize) -> Algorithm {
    Algorithm {
        name: name.as_ptr(),
        operations: KEM_OPS,
        public_key_bytes: pk,
        secret_key_bytes: sk,
        ciphertext_bytes: ct,
        shared_secret_bytes: 32,
        signature_bytes: 0,
    }
}

const fn dsa(name: &'static CStr, pk: usize, sk: usize, sig: usize) -> Algorithm {
    Algorithm {
        name: name.as_ptr(),
        operations: DSA_OPS,
        public_key_bytes: pk,
        secret_key_bytes: sk,
        ciphertext_bytes: 0,
        shared_secret_bytes: 0,
        signature_bytes: sig,
    }
}

static ALGORITHMS: [Algorithm; 6] = [
    kem(c"ML-KEM-512", 800, 1632, 768),
    kem(c"ML-KEM-768", 1184, 2400, 1088),
    kem(c"ML-KEM-1024", 1568, 3168, 1568),
    dsa(c"ML-DSA-44", 1312, 2560, 2420),
    dsa(c"ML-DSA-65", 1952, 4032, 3309),
    dsa(c"ML-DSA-87", 2592, 4896, 4627),
];

static DESCRIPTOR: Descriptor = Descriptor {
    abi_version: 1,
    name: c"rustcrypto".as_ptr(),
    // The crates' exact versions, from Cargo.lock (build.rs).
    version: concat!(
        "ml-kem ",
        env!("ML_KEM_VERSION"),
        " + ml-dsa ",
        env!("ML_DSA_VERSION"),
        " (plugin ",
        env!("CARGO_PKG_VERSION"),
        ")\0"
    )
    .as_ptr()
    .cast(),
    memory: 0,
    thread_safe: 1,
    algorithms: ALGORITHMS.as_ptr(),
    algorithm_count: ALGORITHMS.len(),
    mlkem_keygen: Some(mlkem_keygen),
    mlkem_encaps: Some(mlkem_encaps),
    mlkem_decaps: Some(mlkem_decaps),
    mldsa_keygen: Some(mldsa_keygen),
    mldsa_sign: Some(mldsa_sign),
    mldsa_verify: Some(mldsa_verify),
};

/// The entry point pqcprof looks up.
#[no_mangle]
pub extern "C" fn pqcprof_plugin_v1() -> *const Descriptor {
    &DESCRIPTOR
}

/// Input slice of `len` bytes (empty when `len` is 0, whatever `p` is).
///
/// # Safety
/// `p` is valid for `len` bytes when `len` > 0.
unsafe fn input<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, len)
    }
}

/// Output slice of `len` bytes.
///
/// # Safety
/// `p` is valid and writable for `len` bytes when `len` > 0.
unsafe fn output<'a>(p: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(p, len)
    }
}

/// Item `i` of a buffer of `batch` equal items.
fn item(buf: &[u8], batch: usize, i: usize) -> &[u8] {
    let n = buf.len() / batch;
    &buf[i * n..(i + 1) * n]
}

/// Item `i` of an output buffer of `batch` equal items.
fn item_mut(buf: &mut [u8], batch: usize, i: usize) -> &mut [u8] {
    let n = buf.len() / batch;
    &mut buf[i * n..(i + 1) * n]
}

type Step<'a> = &'a mut dyn FnMut(usize) -> Result<(), &'static str>;

thread_local! {
    /// The last panic on this thread, as the quiet hook kept it.
    static PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Replaces this library's panic hook, once, with one that prints nothing
/// and keeps the message and place for the call's error: a refused input
/// is then one line in pqcprof's output rather than a panic message and
/// backtrace on the worker's stderr. The hook is this library's own (a
/// cdylib links its own copy of std): pqcprof's is untouched.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let p = info.payload();
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            // `ml-dsa-0.1.2/src/encode.rs:76`: the crate and file, not the
            // registry's path.
            let at = info
                .location()
                .map(|l| {
                    let parts: Vec<&str> = l.file().rsplit('/').take(3).collect();
                    let file: Vec<&str> = parts.into_iter().rev().collect();
                    format!(" ({}:{})", file.join("/"), l.line())
                })
                .unwrap_or_default();
            PANIC.with(|k| *k.borrow_mut() = Some(format!("{msg}{at}")));
        }));
    });
}

/// Runs `step` for each item; the first failure is the call's (code 2). A
/// panic must not cross `extern "C"` (it would abort the process): one in
/// the libraries (ml-dsa asserts that an expanded secret key's
/// coefficients are in range) is caught here and fails the call (code 4),
/// its message in the call's error.
fn each(call: *const Call, batch: usize, step: Step<'_>) -> c_int {
    // SAFETY: pqcprof passes a valid call for the duration of the call.
    let call = unsafe { &*call };
    if batch == 0 {
        return call.fail(1, "batch of 0");
    }
    quiet_panics();
    for i in 0..batch {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(i))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return call.fail(2, e),
            Err(_) => {
                let why = PANIC.with(|k| k.borrow_mut().take()).unwrap_or_default();
                return call.fail(
                    4,
                    &format!("the library panicked on this input (refused): {why}"),
                );
            }
        }
    }
    0
}

/// ML-KEM by parameter set: (ek, dk) from d || z, (c, K) from (ek, m), K
/// from (dk, c).
macro_rules! mlkem_set {
    ($m:ident) => {
        mod $m {
            use super::*;
            use ml_kem::$m::{Ciphertext, DecapsulationKey, EncapsulationKey};

            pub fn keygen(seed: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), &'static str> {
                let seed = ml_kem::Seed::try_from(seed).map_err(|_| "seed is not 64 bytes")?;
                let d = DecapsulationKey::from_seed(seed);
                ek.copy_from_slice(d.encapsulation_key().to_bytes().as_slice());
                dk.copy_from_slice(d.to_expanded_bytes().as_slice());
                Ok(())
            }

            pub fn encaps(
                ek: &[u8],
                m: &[u8],
                c: &mut [u8],
                k: &mut [u8],
            ) -> Result<(), &'static str> {
                let ek = ml_kem::array::Array::try_from(ek).map_err(|_| "ek length")?;
                let key = EncapsulationKey::new(&ek).map_err(|_| "invalid ek")?;
                let m = ml_kem::B32::try_from(m).map_err(|_| "m is not 32 bytes")?;
                let (ct, ss) = key.encapsulate_deterministic(&m);
                c.copy_from_slice(ct.as_slice());
                k.copy_from_slice(ss.as_slice());
                Ok(())
            }

            pub fn decaps(dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), &'static str> {
                let dk = ml_kem::array::Array::try_from(dk).map_err(|_| "dk length")?;
                let d = DecapsulationKey::from_expanded_bytes(&dk).map_err(|_| "invalid dk")?;
                let ct = Ciphertext::try_from(c).map_err(|_| "c length")?;
                k.copy_from_slice(d.decapsulate(&ct).as_slice());
                Ok(())
            }
        }
    };
}

mlkem_set!(ml_kem_512);
mlkem_set!(ml_kem_768);
mlkem_set!(ml_kem_1024);

/// Writes into a buffer pqcprof handed over, `len` bytes.
///
/// # Safety
/// As `output`.
unsafe fn out<'a>(p: *mut u8, len: usize) -> &'a mut [u8] {
    output(p, len)
}

unsafe extern "C" fn mlkem_keygen(
    call: *const Call,
    batch: usize,
    seeds: *const u8,
    seeds_len: usize,
    ek: *mut u8,
    ek_len: usize,
    dk: *mut u8,
    dk_len: usize,
) -> c_int {
    let (seeds, ek, dk) = (input(seeds, seeds_len), out(ek, ek_len), out(dk, dk_len));
    let f = match (*call).parameter_set {
        512 => ml_kem_512::keygen,
        768 => ml_kem_768::keygen,
        1024 => ml_kem_1024::keygen,
        _ => return (*call).fail(3, "unknown ML-KEM parameter set"),
    };
    each(call, batch, &mut |i| {
        f(
            item(seeds, batch, i),
            item_mut(ek, batch, i),
            item_mut(dk, batch, i),
        )
    })
}

unsafe extern "C" fn mlkem_encaps(
    call: *const Call,
    batch: usize,
    ek: *const u8,
    ek_len: usize,
    m: *const u8,
    m_len: usize,
    c: *mut u8,
    c_len: usize,
    k: *mut u8,
    k_len: usize,
) -> c_int {
    let (ek, m, c, k) = (
        input(ek, ek_len),
        input(m, m_len),
        out(c, c_len),
        out(k, k_len),
    );
    let f = match (*call).parameter_set {
        512 => ml_kem_512::encaps,
        768 => ml_kem_768::encaps,
        1024 => ml_kem_1024::encaps,
        _ => return (*call).fail(3, "unknown ML-KEM parameter set"),
    };
    each(call, batch, &mut |i| {
        f(
            item(ek, batch, i),
            item(m, batch, i),
            item_mut(c, batch, i),
            item_mut(k, batch, i),
        )
    })
}

unsafe extern "C" fn mlkem_decaps(
    call: *const Call,
    batch: usize,
    dk: *const u8,
    dk_len: usize,
    c: *const u8,
    c_len: usize,
    k: *mut u8,
    k_len: usize,
) -> c_int {
    let (dk, c, k) = (input(dk, dk_len), input(c, c_len), out(k, k_len));
    let f = match (*call).parameter_set {
        512 => ml_kem_512::decaps,
        768 => ml_kem_768::decaps,
        1024 => ml_kem_1024::decaps,
        _ => return (*call).fail(3, "unknown ML-KEM parameter set"),
    };
    each(call, batch, &mut |i| {
        f(item(dk, batch, i), item(c, batch, i), item_mut(k, batch, i))
    })
}

fn dsa_keygen<P: MlDsaParams>(xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), &'static str> {
    let xi = Seed::try_from(xi).map_err(|_| "xi is not 32 bytes")?;
    let esk = ExpandedSigningKey::<P>::from_seed(&xi);
    pk.copy_from_slice(esk.verifying_key().encode().as_slice());
    sk.copy_from_slice(esk.to_expanded().as_slice());
    Ok(())
}

fn dsa_sign<P: MlDsaParams>(
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    rnd: &[u8],
    sig: &mut [u8],
) -> Result<(), &'static str> {
    let sk = ExpandedSigningKeyBytes::<P>::try_from(sk).map_err(|_| "sk length")?;
    let esk = ExpandedSigningKey::<P>::from_expanded(&sk);
    let rnd = ml_dsa::B32::try_from(rnd).map_err(|_| "rnd is not 32 bytes")?;
    // ML-DSA.Sign: Sign_internal over M' = 0 || |ctx| || ctx || M.
    let hdr = [0u8, ctx.len() as u8];
    let s = esk.sign_internal(&[&hdr, ctx, msg], &rnd);
    sig.copy_from_slice(s.encode().as_slice());
    Ok(())
}

fn dsa_verify<P: MlDsaParams>(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> bool {
    let Ok(pk) = EncodedVerifyingKey::<P>::try_from(pk) else {
        return false;
    };
    let vk = VerifyingKey::<P>::decode(&pk);
    match Signature::<P>::try_from(sig) {
        Ok(s) => vk.verify_with_context(msg, ctx, &s),
        Err(_) => false,
    }
}

unsafe extern "C" fn mldsa_keygen(
    call: *const Call,
    batch: usize,
    xi: *const u8,
    xi_len: usize,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> c_int {
    let (xi, pk, sk) = (input(xi, xi_len), out(pk, pk_len), out(sk, sk_len));
    let f = match (*call).parameter_set {
        44 => dsa_keygen::<MlDsa44>,
        65 => dsa_keygen::<MlDsa65>,
        87 => dsa_keygen::<MlDsa87>,
        _ => return (*call).fail(3, "unknown ML-DSA parameter set"),
    };
    each(call, batch, &mut |i| {
        f(
            item(xi, batch, i),
            item_mut(pk, batch, i),
            item_mut(sk, batch, i),
        )
    })
}

unsafe extern "C" fn mldsa_sign(
    call: *const Call,
    batch: usize,
    sk: *const u8,
    sk_len: usize,
    msg: *const u8,
    msg_len: usize,
    msg_item: usize,
    ctx: *const u8,
    ctx_len: usize,
    rnd: *const u8,
    rnd_len: usize,
    sig: *mut u8,
    sig_len: usize,
) -> c_int {
    let (sk, msg, ctx, rnd, sig) = (
        input(sk, sk_len),
        input(msg, msg_len),
        input(ctx, ctx_len),
        input(rnd, rnd_len),
        out(sig, sig_len),
    );
    let f = match (*call).parameter_set {
        44 => dsa_sign::<MlDsa44>,
        65 => dsa_sign::<MlDsa65>,
        87 => dsa_sign::<MlDsa87>,
        _ => return (*call).fail(3, "unknown ML-DSA parameter set"),
    };
    each(call, batch, &mut |i| {
        let m = &msg[i * msg_item..(i + 1) * msg_item];
        f(
            item(sk, batch, i),
            m,
            ctx,
            item(rnd, batch, i),
            item_mut(sig, batch, i),
        )
    })
}

unsafe extern "C" fn mldsa_verify(
    call: *const Call,
    batch: usize,
    pk: *const u8,
    pk_len: usize,
    msg: *const u8,
    msg_len: usize,
    msg_item: usize,
    ctx: *const u8,
    ctx_len: usize,
    sig: *const u8,
    sig_len: usize,
    ok: *mut u8,
    ok_len: usize,
) -> c_int {
    let (pk, msg, ctx, sig, ok) = (
        input(pk, pk_len),
        input(msg, msg_len),
        input(ctx, ctx_len),
        input(sig, sig_len),
        out(ok, ok_len),
    );
    let f = match (*call).parameter_set {
        44 => dsa_verify::<MlDsa44>,
        65 => dsa_verify::<MlDsa65>,
        87 => dsa_verify::<MlDsa87>,
        _ => return (*call).fail(3, "unknown ML-DSA parameter set"),
    };
    each(call, batch, &mut |i| {
        let m = &msg[i * msg_item..(i + 1) * msg_item];
        ok[i] = u8::from(f(item(pk, batch, i), m, ctx, item(sig, batch, i)));
        Ok(())
    })
}
