//! The host build's operations with every input's length checked, and
//! ML-DSA's three signing forms (FIPS 204 Algorithms 2/3, 7/8 on M′, and 7/8
//! from an external μ). A wrong length is refused with a message naming the
//! length and the one the parameter set takes; the C entry points
//! (`pqcprof_*_ext` in `cuda/native/host_*.cpp`) check the lengths again.

use crate::core::catalog::Algorithm;
use std::os::raw::c_int;

mod ffi {
    use std::os::raw::c_int;
    extern "C" {
        pub fn pqcprof_mlkem_encaps_ext(
            k: c_int,
            ct: *mut u8,
            ctlen: usize,
            ss: *mut u8,
            pk: *const u8,
            pklen: usize,
            m: *const u8,
            mlen: usize,
        ) -> c_int;
        pub fn pqcprof_mlkem_decaps_ext(
            k: c_int,
            ss: *mut u8,
            ct: *const u8,
            ctlen: usize,
            sk: *const u8,
            sklen: usize,
        ) -> c_int;
        pub fn pqcprof_mldsa_sign_ext(
            level: c_int,
            form: c_int,
            sig: *mut u8,
            siglen: usize,
            msg: *const u8,
            msglen: usize,
            ctx: *const u8,
            ctxlen: usize,
            sk: *const u8,
            sklen: usize,
            rnd: *const u8,
            rndlen: usize,
        ) -> c_int;
        pub fn pqcprof_mldsa_verify_ext(
            level: c_int,
            form: c_int,
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

/// What ML-DSA signs or verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsaForm {
    /// ML-DSA.Sign / Verify (Algorithms 2, 3): the message M with a context.
    Pure,
    /// Sign_internal / Verify_internal (Algorithms 7, 8) on a formatted M′.
    Internal,
    /// Algorithms 7 and 8 from μ itself (64 bytes), computed elsewhere.
    ExternalMu,
}

impl DsaForm {
    fn code(self) -> c_int {
        match self {
            DsaForm::Pure => 0,
            DsaForm::Internal => 1,
            DsaForm::ExternalMu => 2,
        }
    }
}

/// `Err` with the length of `what` and the one `alg` takes, when they differ.
pub fn expect_len(alg: Algorithm, what: &str, got: usize, want: usize) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what} is {got} bytes; {alg} takes {want}"))
    }
}

fn explain(alg: Algorithm, rc: c_int) -> String {
    match rc {
        -1 => format!("{alg}: unknown parameter set"),
        -2 => format!("{alg}: input failed a FIPS 203/204 input check"),
        -3 => "context is longer than 255 bytes".to_string(),
        -4 => format!("{alg}: secret key has s1 or s2 coefficients outside [-eta, eta]"),
        -5 => format!("{alg}: an input has the wrong length"),
        e => format!("{alg}: error {e}"),
    }
}

fn kem_rank(alg: Algorithm) -> Result<usize, String> {
    match alg {
        Algorithm::MlKem512 => Ok(2),
        Algorithm::MlKem768 => Ok(3),
        Algorithm::MlKem1024 => Ok(4),
        _ => Err(format!("{alg} is not ML-KEM")),
    }
}

fn dsa_level(alg: Algorithm) -> Result<u32, String> {
    match alg {
        Algorithm::MlDsa44 => Ok(44),
        Algorithm::MlDsa65 => Ok(65),
        Algorithm::MlDsa87 => Ok(87),
        _ => Err(format!("{alg} is not ML-DSA")),
    }
}

/// ML-KEM.KeyGen_internal from the 64-byte seed d ‖ z: (ek, dk).
pub fn mlkem_keygen_seed(alg: Algorithm, seed: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let k = kem_rank(alg)?;
    expect_len(alg, "seed d||z", seed.len(), 64)?;
    let d: [u8; 32] = seed[..32].try_into().expect("32 bytes");
    let z: [u8; 32] = seed[32..].try_into().expect("32 bytes");
    super::host::mlkem_keygen(k, &d, &z).map_err(|rc| explain(alg, rc))
}

/// ML-KEM.Encaps_internal(ek, m) with the section 7.2 checks: (c, K).
pub fn mlkem_encaps(alg: Algorithm, ek: &[u8], m: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let k = kem_rank(alg)?;
    let s = alg.sizes();
    expect_len(alg, "encapsulation key", ek.len(), s.public_key_bytes)?;
    expect_len(alg, "m", m.len(), 32)?;
    let mut ct = vec![0u8; s.ciphertext_bytes.unwrap_or(0)];
    let mut ss = vec![0u8; 32];
    // SAFETY: every buffer is passed with its own length, which the C side
    // checks against the parameter set's before reading or writing.
    let rc = unsafe {
        ffi::pqcprof_mlkem_encaps_ext(
            k as c_int,
            ct.as_mut_ptr(),
            ct.len(),
            ss.as_mut_ptr(),
            ek.as_ptr(),
            ek.len(),
            m.as_ptr(),
            m.len(),
        )
    };
    if rc == 0 {
        Ok((ct, ss))
    } else {
        Err(explain(alg, rc))
    }
}

/// ML-KEM.Decaps_internal(dk, c) with the section 7.3 checks: K.
pub fn mlkem_decaps(alg: Algorithm, dk: &[u8], ct: &[u8]) -> Result<Vec<u8>, String> {
    let k = kem_rank(alg)?;
    let s = alg.sizes();
    expect_len(alg, "decapsulation key", dk.len(), s.secret_key_bytes)?;
    expect_len(alg, "ciphertext", ct.len(), s.ciphertext_bytes.unwrap_or(0))?;
    let mut ss = vec![0u8; 32];
    // SAFETY: as in mlkem_encaps.
    let rc = unsafe {
        ffi::pqcprof_mlkem_decaps_ext(
            k as c_int,
            ss.as_mut_ptr(),
            ct.as_ptr(),
            ct.len(),
            dk.as_ptr(),
            dk.len(),
        )
    };
    if rc == 0 {
        Ok(ss)
    } else {
        Err(explain(alg, rc))
    }
}

/// ML-DSA.KeyGen_internal from the 32-byte seed xi: (pk, sk).
pub fn mldsa_keygen_seed(alg: Algorithm, seed: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let level = dsa_level(alg)?;
    expect_len(alg, "seed xi", seed.len(), 32)?;
    let xi: [u8; 32] = seed.try_into().expect("32 bytes");
    super::host::mldsa_keygen(level, &xi).map_err(|rc| explain(alg, rc))
}

/// Signs `msg` (M, M′ or μ by `form`; `ctx` only for [`DsaForm::Pure`])
/// with randomness `rnd` (32 zero bytes: deterministic).
pub fn mldsa_sign(
    alg: Algorithm,
    form: DsaForm,
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    rnd: &[u8],
) -> Result<Vec<u8>, String> {
    let level = dsa_level(alg)?;
    let s = alg.sizes();
    expect_len(alg, "secret key", sk.len(), s.secret_key_bytes)?;
    expect_len(alg, "rnd", rnd.len(), 32)?;
    if form == DsaForm::ExternalMu {
        expect_len(alg, "mu", msg.len(), 64)?;
    }
    if ctx.len() > 255 {
        return Err(format!(
            "context is {} bytes; at most 255 are allowed",
            ctx.len()
        ));
    }
    let mut sig = vec![0u8; s.signature_bytes.unwrap_or(0)];
    // SAFETY: every buffer is passed with its own length, which the C side
    // checks against the parameter set's before reading or writing.
    let rc = unsafe {
        ffi::pqcprof_mldsa_sign_ext(
            level as c_int,
            form.code(),
            sig.as_mut_ptr(),
            sig.len(),
            msg.as_ptr(),
            msg.len(),
            ctx.as_ptr(),
            ctx.len(),
            sk.as_ptr(),
            sk.len(),
            rnd.as_ptr(),
            rnd.len(),
        )
    };
    if rc == 0 {
        Ok(sig)
    } else {
        Err(explain(alg, rc))
    }
}

/// Verifies `sig` on `msg` (M, M′ or μ by `form`). A public key or
/// signature of the wrong length, or a context over 255 bytes, is an
/// invalid signature (`Ok(false)`), as FIPS 204 has it; an external μ of
/// the wrong length is refused.
pub fn mldsa_verify(
    alg: Algorithm,
    form: DsaForm,
    pk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    sig: &[u8],
) -> Result<bool, String> {
    let level = dsa_level(alg)?;
    if form == DsaForm::ExternalMu {
        expect_len(alg, "mu", msg.len(), 64)?;
    }
    // SAFETY: every buffer is read only and passed with its own length.
    let rc = unsafe {
        ffi::pqcprof_mldsa_verify_ext(
            level as c_int,
            form.code(),
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
        e => Err(explain(alg, e)),
    }
}
