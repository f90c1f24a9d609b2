//! The C types of `include/pqcprof_plugin.h`, laid out as C lays them out,
//! and the one place that calls a plugin's functions.

use crate::core::catalog::{Algorithm, Operation};
use anyhow::anyhow;
use anyhow::{bail, ensure};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// One parameter set a plugin implements and the operations it has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offer {
    /// The parameter set.
    pub alg: Algorithm,
    /// PQCPROF_OP_* bits.
    pub operations: u32,
}

/// The PQCPROF_OP_* bit of `op`.
pub fn op_bit(op: Operation) -> u32 {
    match op {
        Operation::KeyGen => 1,
        Operation::Encaps => 2,
        Operation::Decaps => 4,
        Operation::Sign => 8,
        Operation::Verify => 16,
    }
}

/// A C string of the descriptor as UTF-8, or why not.
pub(super) fn text(p: *const std::os::raw::c_char, what: &str) -> anyhow::Result<String> {
    if p.is_null() {
        bail!("its {what} is NULL");
    }
    // SAFETY: a non-null pointer the descriptor gives for a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(str::to_string)
        .map_err(|_| anyhow!("its {what} is not UTF-8"))
}

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
    /// A host call for `alg`, the plugin's message going into `msg`.
    pub fn host(alg: Algorithm, msg: &mut [u8]) -> Call {
        Call {
            parameter_set: parameter_set(alg),
            stream: std::ptr::null_mut(),
            device: -1,
            error: msg.as_mut_ptr().cast(),
            error_capacity: msg.len(),
        }
    }
}

/// 512, 768, 1024 for ML-KEM; 44, 65, 87 for ML-DSA.
fn parameter_set(alg: Algorithm) -> u32 {
    match alg {
        Algorithm::MlKem512 => 512,
        Algorithm::MlKem768 => 768,
        Algorithm::MlKem1024 => 1024,
        Algorithm::MlDsa44 => 44,
        Algorithm::MlDsa65 => 65,
        Algorithm::MlDsa87 => 87,
    }
}

type KemKeygenFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type KemEncapsFn = unsafe extern "C" fn(
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
type KemDecapsFn = unsafe extern "C" fn(
    *const Call,
    usize,
    *const u8,
    usize,
    *const u8,
    usize,
    *mut u8,
    usize,
) -> c_int;
type DsaSignFn = unsafe extern "C" fn(
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
type DsaVerifyFn = unsafe extern "C" fn(
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

/// `pqcprof_algorithm`.
#[repr(C)]
pub struct AlgorithmEntry {
    name: *const c_char,
    operations: u32,
    public_key_bytes: usize,
    secret_key_bytes: usize,
    ciphertext_bytes: usize,
    shared_secret_bytes: usize,
    signature_bytes: usize,
}

/// `pqcprof_plugin_descriptor`.
#[repr(C)]
pub struct Descriptor {
    pub(super) abi_version: u32,
    pub(super) name: *const c_char,
    pub(super) version: *const c_char,
    pub(super) memory: u32,
    pub(super) thread_safe: u32,
    algorithms: *const AlgorithmEntry,
    algorithm_count: usize,
    mlkem_keygen: Option<KemKeygenFn>,
    mlkem_encaps: Option<KemEncapsFn>,
    mlkem_decaps: Option<KemDecapsFn>,
    mldsa_keygen: Option<KemKeygenFn>,
    mldsa_sign: Option<DsaSignFn>,
    mldsa_verify: Option<DsaVerifyFn>,
}

impl Descriptor {
    fn has_function(&self, op: Operation, kem: bool) -> bool {
        match (op, kem) {
            (Operation::KeyGen, true) => self.mlkem_keygen.is_some(),
            (Operation::Encaps, _) => self.mlkem_encaps.is_some(),
            (Operation::Decaps, _) => self.mlkem_decaps.is_some(),
            (Operation::KeyGen, false) => self.mldsa_keygen.is_some(),
            (Operation::Sign, _) => self.mldsa_sign.is_some(),
            (Operation::Verify, _) => self.mldsa_verify.is_some(),
        }
    }
}

/// The sets a descriptor lists, each name known, its operations its own
/// family's with a function behind each, and its sizes the standard's.
pub(super) fn offers(desc: &Descriptor) -> anyhow::Result<Vec<Offer>> {
    ensure!(
        !desc.algorithms.is_null() && desc.algorithm_count > 0 && desc.algorithm_count <= 64,
        "algorithms: expected 1 to 64 entries, got {} (pointer {})",
        desc.algorithm_count,
        if desc.algorithms.is_null() {
            "NULL"
        } else {
            "set"
        }
    );
    // SAFETY: a non-null array of `algorithm_count` entries, as the ABI says.
    let entries = unsafe { std::slice::from_raw_parts(desc.algorithms, desc.algorithm_count) };
    let mut out = vec![];
    for e in entries {
        let name = text(e.name, "algorithm name")?;
        let Some(alg) = Algorithm::ALL.into_iter().find(|a| a.name() == name) else {
            let valid: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            bail!(
                "algorithm name: expected one of {}, got {name:?}",
                valid.join(", ")
            );
        };
        let s = alg.sizes();
        let kem = s.ciphertext_bytes.is_some();
        let want = [
            ("public_key_bytes", s.public_key_bytes, e.public_key_bytes),
            ("secret_key_bytes", s.secret_key_bytes, e.secret_key_bytes),
            (
                "ciphertext_bytes",
                s.ciphertext_bytes.unwrap_or(0),
                e.ciphertext_bytes,
            ),
            (
                "shared_secret_bytes",
                s.shared_secret_bytes.unwrap_or(0),
                e.shared_secret_bytes,
            ),
            (
                "signature_bytes",
                s.signature_bytes.unwrap_or(0),
                e.signature_bytes,
            ),
        ];
        let standard = if kem { "FIPS 203" } else { "FIPS 204" };
        for (field, expected, got) in want {
            ensure!(
                expected == got,
                "{name} {field}: expected {expected} ({standard}), got {got}"
            );
        }
        for op in Operation::ALL {
            if e.operations & op_bit(op) == 0 {
                continue;
            }
            ensure!(
                alg.has_operation(op),
                "{name} operations: {op} is not an operation of {name}"
            );
            ensure!(
                desc.has_function(op, kem),
                "{name} {op}: the operation is listed but its function is NULL"
            );
        }
        ensure!(
            e.operations & !0x1f == 0,
            "{name} operations: unknown bits {:#x}",
            e.operations & !0x1f
        );
        out.push(Offer {
            alg,
            operations: e.operations,
        });
    }
    Ok(out)
}

/// The buffers of one batched call, as pqcprof allocated them; each field
/// is the header's parameter of the same name.
#[allow(missing_docs)]
pub enum Buffers<'a> {
    /// ML-KEM key generation.
    KemKeygen {
        seeds: &'a [u8],
        ek: &'a mut [u8],
        dk: &'a mut [u8],
    },
    /// ML-KEM encapsulation.
    KemEncaps {
        ek: &'a [u8],
        m: &'a [u8],
        c: &'a mut [u8],
        k: &'a mut [u8],
    },
    /// ML-KEM decapsulation.
    KemDecaps {
        dk: &'a [u8],
        c: &'a [u8],
        k: &'a mut [u8],
    },
    /// ML-DSA key generation.
    DsaKeygen {
        xi: &'a [u8],
        pk: &'a mut [u8],
        sk: &'a mut [u8],
    },
    /// ML-DSA signing.
    DsaSign {
        sk: &'a [u8],
        msg: &'a [u8],
        msg_item: usize,
        ctx: &'a [u8],
        rnd: &'a [u8],
        sig: &'a mut [u8],
    },
    /// ML-DSA verification.
    DsaVerify {
        pk: &'a [u8],
        msg: &'a [u8],
        msg_item: usize,
        ctx: &'a [u8],
        sig: &'a [u8],
        ok: &'a mut [u8],
    },
}

impl Buffers<'_> {
    /// Each buffer's (name, bytes per item, length), for the size check.
    fn lengths(&self, alg: Algorithm) -> Vec<(&'static str, usize, usize)> {
        let s = alg.sizes();
        let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
        let (ct, sig) = (
            s.ciphertext_bytes.unwrap_or(0),
            s.signature_bytes.unwrap_or(0),
        );
        match self {
            Buffers::KemKeygen { seeds, ek, dk } => {
                vec![
                    ("seeds", 64, seeds.len()),
                    ("ek", pk, ek.len()),
                    ("dk", sk, dk.len()),
                ]
            }
            Buffers::KemEncaps { ek, m, c, k } => vec![
                ("ek", pk, ek.len()),
                ("m", 32, m.len()),
                ("c", ct, c.len()),
                ("k", 32, k.len()),
            ],
            Buffers::KemDecaps { dk, c, k } => {
                vec![("dk", sk, dk.len()), ("c", ct, c.len()), ("k", 32, k.len())]
            }
            Buffers::DsaKeygen { xi, pk: p, sk: s } => {
                vec![
                    ("xi", 32, xi.len()),
                    ("pk", pk, p.len()),
                    ("sk", sk, s.len()),
                ]
            }
            Buffers::DsaSign {
                sk: s,
                msg,
                msg_item,
                rnd,
                sig: g,
                ..
            } => vec![
                ("sk", sk, s.len()),
                ("msg", *msg_item, msg.len()),
                ("rnd", 32, rnd.len()),
                ("sig", sig, g.len()),
            ],
            Buffers::DsaVerify {
                pk: p,
                msg,
                msg_item,
                sig: g,
                ok,
                ..
            } => vec![
                ("pk", pk, p.len()),
                ("msg", *msg_item, msg.len()),
                ("sig", sig, g.len()),
                ("ok", 1, ok.len()),
            ],
        }
    }

    /// Every buffer holds `batch` items of its FIPS 203/204 size, the
    /// operation is the buffers' own, and a context is at most 255 bytes.
    pub fn check_sizes(&self, alg: Algorithm, op: Operation, batch: usize) -> anyhow::Result<()> {
        ensure!(batch > 0, "batch: expected at least 1, got 0");
        let matches = match self {
            Buffers::KemKeygen { .. } | Buffers::DsaKeygen { .. } => op == Operation::KeyGen,
            Buffers::KemEncaps { .. } => op == Operation::Encaps,
            Buffers::KemDecaps { .. } => op == Operation::Decaps,
            Buffers::DsaSign { .. } => op == Operation::Sign,
            Buffers::DsaVerify { .. } => op == Operation::Verify,
        };
        let kem_buffers = matches!(
            self,
            Buffers::KemKeygen { .. } | Buffers::KemEncaps { .. } | Buffers::KemDecaps { .. }
        );
        ensure!(
            matches && kem_buffers == alg.mlkem_params().is_some(),
            "the buffers are not those of {alg} {op}"
        );
        for (name, per_item, len) in self.lengths(alg) {
            ensure!(
                len == per_item * batch,
                "buffer {name}: expected {} bytes ({batch} x {per_item}), got {len}",
                per_item * batch
            );
        }
        if let Buffers::DsaSign { ctx, .. } | Buffers::DsaVerify { ctx, .. } = self {
            ensure!(
                ctx.len() <= 255,
                "context: expected at most 255 bytes, got {}",
                ctx.len()
            );
        }
        Ok(())
    }

    /// Calls the descriptor's function for these buffers.
    ///
    /// # Safety
    /// `check_sizes` passed for the batch, and `call`'s message buffer is
    /// valid for its capacity.
    pub(super) unsafe fn invoke(
        self,
        d: &Descriptor,
        call: &Call,
        batch: usize,
    ) -> anyhow::Result<c_int> {
        let missing = || anyhow::anyhow!("the plugin has no function for these buffers");
        let c = call as *const Call;
        Ok(match self {
            Buffers::KemKeygen { seeds, ek, dk } => (d.mlkem_keygen.ok_or_else(missing)?)(
                c,
                batch,
                seeds.as_ptr(),
                seeds.len(),
                ek.as_mut_ptr(),
                ek.len(),
                dk.as_mut_ptr(),
                dk.len(),
            ),
            Buffers::KemEncaps { ek, m, c: ct, k } => (d.mlkem_encaps.ok_or_else(missing)?)(
                c,
                batch,
                ek.as_ptr(),
                ek.len(),
                m.as_ptr(),
                m.len(),
                ct.as_mut_ptr(),
                ct.len(),
                k.as_mut_ptr(),
                k.len(),
            ),
            Buffers::KemDecaps { dk, c: ct, k } => (d.mlkem_decaps.ok_or_else(missing)?)(
                c,
                batch,
                dk.as_ptr(),
                dk.len(),
                ct.as_ptr(),
                ct.len(),
                k.as_mut_ptr(),
                k.len(),
            ),
            Buffers::DsaKeygen { xi, pk, sk } => (d.mldsa_keygen.ok_or_else(missing)?)(
                c,
                batch,
                xi.as_ptr(),
                xi.len(),
                pk.as_mut_ptr(),
                pk.len(),
                sk.as_mut_ptr(),
                sk.len(),
            ),
            Buffers::DsaSign {
                sk,
                msg,
                msg_item,
                ctx,
                rnd,
                sig,
            } => (d.mldsa_sign.ok_or_else(missing)?)(
                c,
                batch,
                sk.as_ptr(),
                sk.len(),
                msg.as_ptr(),
                msg.len(),
                msg_item,
                ctx.as_ptr(),
                ctx.len(),
                rnd.as_ptr(),
                rnd.len(),
                sig.as_mut_ptr(),
                sig.len(),
            ),
            Buffers::DsaVerify {
                pk,
                msg,
                msg_item,
                ctx,
                sig,
                ok,
            } => (d.mldsa_verify.ok_or_else(missing)?)(
                c,
                batch,
                pk.as_ptr(),
                pk.len(),
                msg.as_ptr(),
                msg.len(),
                msg_item,
                ctx.as_ptr(),
                ctx.len(),
                sig.as_ptr(),
                sig.len(),
                ok.as_mut_ptr(),
                ok.len(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_of_another_size_is_named_with_both_lengths() {
        let (ek, m) = (vec![0u8; 2 * 1184], vec![0u8; 64]);
        let (mut c, mut k) = (vec![0u8; 2 * 1088 - 1], vec![0u8; 64]);
        let b = Buffers::KemEncaps {
            ek: &ek,
            m: &m,
            c: &mut c,
            k: &mut k,
        };
        let e = b
            .check_sizes(Algorithm::MlKem768, Operation::Encaps, 2)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "buffer c: expected 2176 bytes (2 x 1088), got 2175");
        // The right sizes pass; the buffers of another operation do not.
        c.push(0);
        let b = Buffers::KemEncaps {
            ek: &ek,
            m: &m,
            c: &mut c,
            k: &mut k,
        };
        assert!(b
            .check_sizes(Algorithm::MlKem768, Operation::Encaps, 2)
            .is_ok());
        let b = Buffers::KemEncaps {
            ek: &ek,
            m: &m,
            c: &mut c,
            k: &mut k,
        };
        let e = b
            .check_sizes(Algorithm::MlDsa65, Operation::Encaps, 2)
            .unwrap_err();
        assert!(e.to_string().contains("not those of ML-DSA-65"), "{e}");
    }
}
