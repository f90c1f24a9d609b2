//! What the gallery's plugins share: the types of `include/pqcprof_plugin.h`
//! in Rust, and the six batched `extern "C"` functions over an
//! [`Implementation`] that handles one item at a time.
//!
//! A plugin implements [`Implementation`] for a type, builds a static
//! [`Descriptor`] with [`descriptor`] and returns it from its
//! `pqcprof_plugin_v1`. One whose library draws its own randomness for
//! some operations (ABI 1.1) builds a [`Descriptor11`] with
//! [`descriptor_own_randomness`] instead, naming them with the `OWN_*` bits;
//! its [`Implementation`] ignores those operations' seeds, m or rnd.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// `PQCPROF_PLUGIN_ABI_VERSION`.
pub const ABI_VERSION: u32 = 1;

/// `PQCPROF_PLUGIN_ABI_VERSION_1_1`: major 1, minor 1 in the high 16 bits.
pub const ABI_VERSION_1_1: u32 = (1 << 16) | ABI_VERSION;

/// `PQCPROF_OWN_MLKEM_KEYGEN`: ML-KEM keygen ignores its d || z.
pub const OWN_MLKEM_KEYGEN: u32 = 1;
/// `PQCPROF_OWN_MLKEM_ENCAPS`: ML-KEM encaps ignores its m.
pub const OWN_MLKEM_ENCAPS: u32 = 2;
/// `PQCPROF_OWN_MLDSA_KEYGEN`: ML-DSA keygen ignores its xi.
pub const OWN_MLDSA_KEYGEN: u32 = 4;
/// `PQCPROF_OWN_MLDSA_SIGN`: ML-DSA signing ignores its rnd.
pub const OWN_MLDSA_SIGN: u32 = 8;

/// `pqcprof_call`.
#[repr(C)]
pub struct Call {
    pub parameter_set: u32,
    pub stream: *mut c_void,
    pub device: c_int,
    pub error: *mut c_char,
    pub error_capacity: usize,
}

impl Call {
    /// Writes `msg` (cut to fit, NUL-terminated) into the caller's error
    /// buffer and returns `code`.
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
    pub name: *const c_char,
    pub operations: u32,
    pub public_key_bytes: usize,
    pub secret_key_bytes: usize,
    pub ciphertext_bytes: usize,
    pub shared_secret_bytes: usize,
    pub signature_bytes: usize,
}

pub type KeygenFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
pub type EncapsFn = unsafe extern "C" fn(
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
pub type DecapsFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
pub type SignFn = unsafe extern "C" fn(
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
pub type VerifyFn = SignFn;

/// `pqcprof_plugin_descriptor`.
#[repr(C)]
pub struct Descriptor {
    pub abi_version: u32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub memory: u32,
    pub thread_safe: u32,
    pub algorithms: *const Algorithm,
    pub algorithm_count: usize,
    pub mlkem_keygen: Option<KeygenFn>,
    pub mlkem_encaps: Option<EncapsFn>,
    pub mlkem_decaps: Option<DecapsFn>,
    pub mldsa_keygen: Option<KeygenFn>,
    pub mldsa_sign: Option<SignFn>,
    pub mldsa_verify: Option<VerifyFn>,
}

/// `pqcprof_plugin_descriptor` of ABI 1.1: the 1.0 fields, then
/// `own_randomness`.
#[repr(C)]
pub struct Descriptor11 {
    pub base: Descriptor,
    pub own_randomness: u32,
}

impl Descriptor11 {
    /// The pointer `pqcprof_plugin_v1` returns (the 1.1 fields follow the
    /// 1.0 ones, which pqcprof reads first).
    pub fn as_entry(&'static self) -> *const Descriptor {
        (self as *const Descriptor11).cast()
    }
}

// SAFETY: descriptors and algorithms are constant data (static strings and
// functions), never written after they are made.
unsafe impl Sync for Descriptor {}
unsafe impl Sync for Descriptor11 {}
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

/// Every parameter set with every operation, sized as FIPS 203/204 say.
pub static ALL_ALGORITHMS: [Algorithm; 6] = [
    kem(c"ML-KEM-512", 800, 1632, 768),
    kem(c"ML-KEM-768", 1184, 2400, 1088),
    kem(c"ML-KEM-1024", 1568, 3168, 1568),
    dsa(c"ML-DSA-44", 1312, 2560, 2420),
    dsa(c"ML-DSA-65", 1952, 4032, 3309),
    dsa(c"ML-DSA-87", 2592, 4896, 4627),
];

/// A failure of one item, shown by pqcprof.
pub type Failure = &'static str;

/// One implementation, one item at a time. `set` is the parameter set
/// (512, 768, 1024; 44, 65, 87); every slice has exactly the size FIPS
/// 203/204 give for it (pqcprof checked the batch's lengths).
pub trait Implementation {
    /// (ek, dk) from the 64 bytes d || z.
    fn mlkem_keygen(set: u32, dz: &[u8], ek: &mut [u8], dk: &mut [u8]) -> Result<(), Failure>;
    /// (c, K) from ek and m; an ek that fails the modulus check is refused.
    fn mlkem_encaps(
        set: u32,
        ek: &[u8],
        m: &[u8],
        c: &mut [u8],
        k: &mut [u8],
    ) -> Result<(), Failure>;
    /// K from dk and c; a dk that fails the hash check is refused.
    fn mlkem_decaps(set: u32, dk: &[u8], c: &[u8], k: &mut [u8]) -> Result<(), Failure>;
    /// (pk, sk) from the 32-byte xi.
    fn mldsa_keygen(set: u32, xi: &[u8], pk: &mut [u8], sk: &mut [u8]) -> Result<(), Failure>;
    /// The signature of msg under sk, with the context ctx and the 32-byte rnd.
    fn mldsa_sign(
        set: u32,
        sk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        rnd: &[u8],
        sig: &mut [u8],
    ) -> Result<(), Failure>;
    /// Whether sig is a valid signature of msg under pk and ctx.
    fn mldsa_verify(
        set: u32,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<bool, Failure>;
}

/// A host plugin's descriptor: every set of [`ALL_ALGORITHMS`], every
/// operation through `I`. `name` and `version` must be NUL-terminated.
pub const fn descriptor<I: Implementation>(
    name: &'static CStr,
    version: &'static CStr,
    thread_safe: bool,
) -> Descriptor {
    Descriptor {
        abi_version: ABI_VERSION,
        name: name.as_ptr(),
        version: version.as_ptr(),
        memory: 0,
        thread_safe: thread_safe as u32,
        algorithms: ALL_ALGORITHMS.as_ptr(),
        algorithm_count: ALL_ALGORITHMS.len(),
        mlkem_keygen: Some(mlkem_keygen::<I>),
        mlkem_encaps: Some(mlkem_encaps::<I>),
        mlkem_decaps: Some(mlkem_decaps::<I>),
        mldsa_keygen: Some(mldsa_keygen::<I>),
        mldsa_sign: Some(mldsa_sign::<I>),
        mldsa_verify: Some(mldsa_verify::<I>),
    }
}

/// An ABI 1.1 host plugin's descriptor: as [`descriptor`], and `own`
/// (`OWN_*` bits) the operations whose randomness the library draws
/// itself (their seeds, m or rnd are handed to `I` and ignored).
pub const fn descriptor_own_randomness<I: Implementation>(
    name: &'static CStr,
    version: &'static CStr,
    thread_safe: bool,
    own: u32,
) -> Descriptor11 {
    let mut base = descriptor::<I>(name, version, thread_safe);
    base.abi_version = ABI_VERSION_1_1;
    Descriptor11 {
        base,
        own_randomness: own,
    }
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

/// Runs `step` for each item; the first failure is the call's (code 2). A
/// panic must not cross `extern "C"` (it would abort the worker): one is
/// caught here and fails the call (code 4).
///
/// # Safety
/// `call` is valid for the duration of the call.
unsafe fn each(
    call: *const Call,
    batch: usize,
    mut step: impl FnMut(u32, usize) -> Result<(), Failure>,
) -> c_int {
    let call = &*call;
    if batch == 0 {
        return call.fail(1, "batch of 0");
    }
    let set = call.parameter_set;
    for i in 0..batch {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(set, i))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return call.fail(2, e),
            Err(_) => return call.fail(4, "the library panicked on this input"),
        }
    }
    0
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mlkem_keygen<I: Implementation>(
    call: *const Call,
    batch: usize,
    seeds: *const u8,
    seeds_len: usize,
    ek: *mut u8,
    ek_len: usize,
    dk: *mut u8,
    dk_len: usize,
) -> c_int {
    let (seeds, ek, dk) = (
        input(seeds, seeds_len),
        output(ek, ek_len),
        output(dk, dk_len),
    );
    each(call, batch, |set, i| {
        I::mlkem_keygen(
            set,
            item(seeds, batch, i),
            item_mut(ek, batch, i),
            item_mut(dk, batch, i),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mlkem_encaps<I: Implementation>(
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
    let (ek, m) = (input(ek, ek_len), input(m, m_len));
    let (c, k) = (output(c, c_len), output(k, k_len));
    each(call, batch, |set, i| {
        I::mlkem_encaps(
            set,
            item(ek, batch, i),
            item(m, batch, i),
            item_mut(c, batch, i),
            item_mut(k, batch, i),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mlkem_decaps<I: Implementation>(
    call: *const Call,
    batch: usize,
    dk: *const u8,
    dk_len: usize,
    c: *const u8,
    c_len: usize,
    k: *mut u8,
    k_len: usize,
) -> c_int {
    let (dk, c, k) = (input(dk, dk_len), input(c, c_len), output(k, k_len));
    each(call, batch, |set, i| {
        I::mlkem_decaps(
            set,
            item(dk, batch, i),
            item(c, batch, i),
            item_mut(k, batch, i),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mldsa_keygen<I: Implementation>(
    call: *const Call,
    batch: usize,
    xi: *const u8,
    xi_len: usize,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> c_int {
    let (xi, pk, sk) = (input(xi, xi_len), output(pk, pk_len), output(sk, sk_len));
    each(call, batch, |set, i| {
        I::mldsa_keygen(
            set,
            item(xi, batch, i),
            item_mut(pk, batch, i),
            item_mut(sk, batch, i),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mldsa_sign<I: Implementation>(
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
    let (sk, msg, ctx, rnd) = (
        input(sk, sk_len),
        input(msg, msg_len),
        input(ctx, ctx_len),
        input(rnd, rnd_len),
    );
    let sig = output(sig, sig_len);
    each(call, batch, |set, i| {
        let m = &msg[i * msg_item..(i + 1) * msg_item];
        I::mldsa_sign(
            set,
            item(sk, batch, i),
            m,
            ctx,
            item(rnd, batch, i),
            item_mut(sig, batch, i),
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mldsa_verify<I: Implementation>(
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
    let (pk, msg, ctx, sig) = (
        input(pk, pk_len),
        input(msg, msg_len),
        input(ctx, ctx_len),
        input(sig, sig_len),
    );
    let ok = output(ok, ok_len);
    each(call, batch, |set, i| {
        let m = &msg[i * msg_item..(i + 1) * msg_item];
        ok[i] = u8::from(I::mldsa_verify(
            set,
            item(pk, batch, i),
            m,
            ctx,
            item(sig, batch, i),
        )?);
        Ok(())
    })
}

/// The version Cargo.lock (at `lock`, its text) pins for the package
/// `name`: for build scripts, which turn it into the version string a
/// plugin reports.
pub fn locked_version(lock: &str, name: &str) -> Option<String> {
    let want = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == want {
            let v = lines.next()?.trim();
            return v
                .strip_prefix("version = \"")
                .and_then(|s| s.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

/// `s` (which must end in its one NUL) as a C string, at compile time.
pub const fn cstr(s: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("not a NUL-terminated string without inner NULs"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn locked_version_reads_the_package_entry() {
        let lock = "[[package]]\nname = \"a\"\nversion = \"1.2.3\"\n\n[[package]]\nname = \"ab\"\nversion = \"0.0.1\"\n";
        assert_eq!(super::locked_version(lock, "a").as_deref(), Some("1.2.3"));
        assert_eq!(super::locked_version(lock, "ab").as_deref(), Some("0.0.1"));
        assert_eq!(super::locked_version(lock, "b"), None);
    }
}
