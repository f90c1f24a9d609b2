//! Safe wrappers over our FIPS 203/204 code compiled for the host
//! (`cuda/native/host_*.cpp`, built by build.rs). The same sources run on the
//! GPU, so what the tests prove here is what the kernels compute.

use std::os::raw::c_int;

mod ffi {
    use std::os::raw::c_int;
    extern "C" {
        pub fn pqcprof_mlkem_keygen(
            k: c_int,
            pk: *mut u8,
            sk: *mut u8,
            d: *const u8,
            z: *const u8,
        ) -> c_int;
        pub fn pqcprof_mlkem_encaps(
            k: c_int,
            ct: *mut u8,
            ss: *mut u8,
            pk: *const u8,
            m: *const u8,
        ) -> c_int;
        pub fn pqcprof_mlkem_decaps(k: c_int, ss: *mut u8, ct: *const u8, sk: *const u8) -> c_int;
        pub fn pqcprof_sha3_256(out: *mut u8, input: *const u8, len: usize) -> c_int;
        pub fn pqcprof_sha3_512(out: *mut u8, input: *const u8, len: usize) -> c_int;
        pub fn pqcprof_shake128(
            out: *mut u8,
            outlen: usize,
            input: *const u8,
            inlen: usize,
        ) -> c_int;
        pub fn pqcprof_shake256(
            out: *mut u8,
            outlen: usize,
            input: *const u8,
            inlen: usize,
        ) -> c_int;
        pub fn pqcprof_mldsa_keygen(level: c_int, pk: *mut u8, sk: *mut u8, xi: *const u8)
            -> c_int;
        pub fn pqcprof_mldsa_sign(
            level: c_int,
            sig: *mut u8,
            msg: *const u8,
            msglen: usize,
            ctx: *const u8,
            ctxlen: usize,
            sk: *const u8,
            rnd: *const u8,
        ) -> c_int;
        pub fn pqcprof_mldsa_sign_attempts(
            level: c_int,
            sig: *mut u8,
            msg: *const u8,
            msglen: usize,
            ctx: *const u8,
            ctxlen: usize,
            sk: *const u8,
            rnd: *const u8,
            attempts: *mut c_int,
        ) -> c_int;
        pub fn pqcprof_mldsa_sign_workspace_bytes(level: c_int) -> usize;
        pub fn pqcprof_mldsa_sign_block_workspace_bytes(level: c_int) -> usize;
        pub fn pqcprof_keccak_permutations() -> i64;
        pub fn pqcprof_mldsa_verify(
            level: c_int,
            msg: *const u8,
            msglen: usize,
            ctx: *const u8,
            ctxlen: usize,
            sig: *const u8,
            siglen: usize,
            pk: *const u8,
            pklen: usize,
        ) -> c_int;
    }
}

/// Return code of the C entry points (see cuda/native/common.cuh).
pub type Code = i32;

fn mlkem_alg(k: usize) -> Result<crate::core::catalog::Algorithm, Code> {
    use crate::core::catalog::Algorithm::*;
    match k {
        2 => Ok(MlKem512),
        3 => Ok(MlKem768),
        4 => Ok(MlKem1024),
        _ => Err(-1),
    }
}

fn mldsa_alg(level: u32) -> Result<crate::core::catalog::Algorithm, Code> {
    use crate::core::catalog::Algorithm::*;
    match level {
        44 => Ok(MlDsa44),
        65 => Ok(MlDsa65),
        87 => Ok(MlDsa87),
        _ => Err(-1),
    }
}

fn check(rc: c_int) -> Result<(), Code> {
    if rc == 0 {
        Ok(())
    } else {
        Err(rc)
    }
}

/// ML-KEM.KeyGen_internal(d, z) for module rank `k` (2, 3, 4): (ek, dk).
pub fn mlkem_keygen(k: usize, d: &[u8; 32], z: &[u8; 32]) -> Result<(Vec<u8>, Vec<u8>), Code> {
    let s = mlkem_alg(k)?.sizes();
    let mut pk = vec![0u8; s.public_key_bytes];
    let mut sk = vec![0u8; s.secret_key_bytes];
    // SAFETY: buffers have the FIPS 203 sizes for k; seeds are 32 bytes.
    check(unsafe {
        ffi::pqcprof_mlkem_keygen(
            k as c_int,
            pk.as_mut_ptr(),
            sk.as_mut_ptr(),
            d.as_ptr(),
            z.as_ptr(),
        )
    })?;
    Ok((pk, sk))
}

/// ML-KEM.Encaps_internal(ek, m): (ciphertext, shared secret).
pub fn mlkem_encaps(k: usize, pk: &[u8], m: &[u8; 32]) -> Result<(Vec<u8>, [u8; 32]), Code> {
    let s = mlkem_alg(k)?.sizes();
    if pk.len() != s.public_key_bytes {
        return Err(-2);
    }
    let mut ct = vec![0u8; s.ciphertext_bytes.unwrap_or(0)];
    let mut ss = [0u8; 32];
    // SAFETY: buffers have the FIPS 203 sizes for k.
    check(unsafe {
        ffi::pqcprof_mlkem_encaps(
            k as c_int,
            ct.as_mut_ptr(),
            ss.as_mut_ptr(),
            pk.as_ptr(),
            m.as_ptr(),
        )
    })?;
    Ok((ct, ss))
}

/// ML-KEM.Decaps_internal(dk, c): the shared secret (implicit rejection).
pub fn mlkem_decaps(k: usize, ct: &[u8], sk: &[u8]) -> Result<[u8; 32], Code> {
    let s = mlkem_alg(k)?.sizes();
    if ct.len() != s.ciphertext_bytes.unwrap_or(0) || sk.len() != s.secret_key_bytes {
        return Err(-2);
    }
    let mut ss = [0u8; 32];
    // SAFETY: buffers have the FIPS 203 sizes for k.
    check(unsafe {
        ffi::pqcprof_mlkem_decaps(k as c_int, ss.as_mut_ptr(), ct.as_ptr(), sk.as_ptr())
    })?;
    Ok(ss)
}

/// SHA3-256.
pub fn sha3_256(input: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    // SAFETY: out is 32 bytes; input is read with its own length.
    unsafe { ffi::pqcprof_sha3_256(out.as_mut_ptr(), input.as_ptr(), input.len()) };
    out
}

/// SHA3-512.
pub fn sha3_512(input: &[u8]) -> [u8; 64] {
    let mut out = [0u8; 64];
    // SAFETY: out is 64 bytes; input is read with its own length.
    unsafe { ffi::pqcprof_sha3_512(out.as_mut_ptr(), input.as_ptr(), input.len()) };
    out
}

/// SHAKE128 with `outlen` bytes of output.
pub fn shake128(input: &[u8], outlen: usize) -> Vec<u8> {
    let mut out = vec![0u8; outlen];
    // SAFETY: out has outlen bytes; input is read with its own length.
    unsafe { ffi::pqcprof_shake128(out.as_mut_ptr(), outlen, input.as_ptr(), input.len()) };
    out
}

/// SHAKE256 with `outlen` bytes of output.
pub fn shake256(input: &[u8], outlen: usize) -> Vec<u8> {
    let mut out = vec![0u8; outlen];
    // SAFETY: out has outlen bytes; input is read with its own length.
    unsafe { ffi::pqcprof_shake256(out.as_mut_ptr(), outlen, input.as_ptr(), input.len()) };
    out
}

/// ML-DSA.KeyGen_internal(xi) for level 44, 65 or 87: (pk, sk).
pub fn mldsa_keygen(level: u32, xi: &[u8; 32]) -> Result<(Vec<u8>, Vec<u8>), Code> {
    let s = mldsa_alg(level)?.sizes();
    let mut pk = vec![0u8; s.public_key_bytes];
    let mut sk = vec![0u8; s.secret_key_bytes];
    // SAFETY: buffers have the FIPS 204 sizes for the level.
    check(unsafe {
        ffi::pqcprof_mldsa_keygen(
            level as c_int,
            pk.as_mut_ptr(),
            sk.as_mut_ptr(),
            xi.as_ptr(),
        )
    })?;
    Ok((pk, sk))
}

/// Pure ML-DSA signing with context `ctx` and explicit `rnd` (all zero for
/// the deterministic variant).
pub fn mldsa_sign(
    level: u32,
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    rnd: &[u8; 32],
) -> Result<Vec<u8>, Code> {
    let s = mldsa_alg(level)?.sizes();
    if sk.len() != s.secret_key_bytes {
        return Err(-2);
    }
    let mut sig = vec![0u8; s.signature_bytes.unwrap_or(0)];
    // SAFETY: sig has the FIPS 204 size; the inputs are read with their lengths.
    check(unsafe {
        ffi::pqcprof_mldsa_sign(
            level as c_int,
            sig.as_mut_ptr(),
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sk.as_ptr(),
            rnd.as_ptr(),
        )
    })?;
    Ok(sig)
}

/// What one signature cost the host build: iterations of the rejection
/// loop and Keccak-f1600 permutations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignWork {
    /// Iterations of FIPS 204 Algorithm 7's loop (1 when the first z and
    /// hint were accepted).
    pub attempts: u32,
    /// Keccak-f1600 permutations, mu's hash included.
    pub permutations: u64,
}

/// `mldsa_sign`, with the work it took.
pub fn mldsa_sign_counted(
    level: u32,
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    rnd: &[u8; 32],
) -> Result<(Vec<u8>, SignWork), Code> {
    let s = mldsa_alg(level)?.sizes();
    if sk.len() != s.secret_key_bytes {
        return Err(-2);
    }
    let mut sig = vec![0u8; s.signature_bytes.unwrap_or(0)];
    let mut attempts: c_int = 0;
    let before = keccak_permutations();
    // SAFETY: sig has the FIPS 204 size; the inputs are read with their
    // lengths; attempts is one c_int the call writes.
    check(unsafe {
        ffi::pqcprof_mldsa_sign_attempts(
            level as c_int,
            sig.as_mut_ptr(),
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sk.as_ptr(),
            rnd.as_ptr(),
            &mut attempts,
        )
    })?;
    let permutations = keccak_permutations().saturating_sub(before);
    Ok((
        sig,
        SignWork {
            attempts: attempts.max(0) as u32,
            permutations,
        },
    ))
}

/// Keccak-f1600 permutations the host build has run on this OS thread.
pub fn keccak_permutations() -> u64 {
    // SAFETY: reads a thread-local counter.
    unsafe { ffi::pqcprof_keccak_permutations() }.max(0) as u64
}

/// Bytes of one ML-DSA signing workspace (cuda/native/mldsa.cuh,
/// `mldsa_sign_layout`): what each thread of a signing kernel needs; 0 for
/// an algorithm that is not ML-DSA.
pub fn mldsa_sign_workspace_bytes(alg: crate::core::catalog::Algorithm) -> usize {
    // SAFETY: a pure function of its argument.
    mldsa_level(alg).map_or(0, |l| unsafe { ffi::pqcprof_mldsa_sign_workspace_bytes(l) })
}

/// Bytes of the workspace one block of the `block` signing kernel needs
/// (cuda/native/mldsa.cuh, `mldsa_sign_block_layout`: A^, NTT(s1), NTT(s2),
/// NTT(t0) of the signature the block works on); 0 for an algorithm that
/// is not ML-DSA.
pub fn mldsa_sign_block_workspace_bytes(alg: crate::core::catalog::Algorithm) -> usize {
    // SAFETY: a pure function of its argument.
    mldsa_level(alg).map_or(0, |l| unsafe {
        ffi::pqcprof_mldsa_sign_block_workspace_bytes(l)
    })
}

fn mldsa_level(alg: crate::core::catalog::Algorithm) -> Option<c_int> {
    use crate::core::catalog::Algorithm::*;
    match alg {
        MlDsa44 => Some(44),
        MlDsa65 => Some(65),
        MlDsa87 => Some(87),
        _ => None,
    }
}

/// Pure ML-DSA verification with context `ctx`.
pub fn mldsa_verify(
    level: u32,
    pk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    sig: &[u8],
) -> Result<bool, Code> {
    mldsa_alg(level)?;
    // SAFETY: every buffer is read only and passed with its own length.
    let rc = unsafe {
        ffi::pqcprof_mldsa_verify(
            level as c_int,
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sig.as_ptr(),
            sig.len(),
            pk.as_ptr(),
            pk.len(),
        )
    };
    match rc {
        1 => Ok(true),
        0 => Ok(false),
        e => Err(e),
    }
}
