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

impl Offer {
    /// Whether it has `op`.
    pub fn has(&self, op: Operation) -> bool {
        self.operations & op_bit(op) != 0
    }
}

/// Whether `offers` implement `op` of `alg`.
pub fn offered(offers: &[Offer], alg: Algorithm, op: Operation) -> bool {
    offers.iter().any(|o| o.alg == alg && o.has(op))
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

/// Where a call's buffers live and its work goes.
#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// Host memory; the call returns when its work is done.
    Host,
    /// Device memory on GPU `ordinal`; the work is queued on `stream` (a
    /// `CUstream`), which pqcprof synchronises.
    Device {
        /// The `CUstream` handle.
        stream: *mut c_void,
        /// The CUDA device ordinal.
        ordinal: i32,
    },
}

// SAFETY: a stream handle is an opaque driver handle, usable from any
// thread of the process (the driver API's streams are not thread-bound).
unsafe impl Send for Place {}
unsafe impl Sync for Place {}

impl Call {
    /// A call for `alg` at `place`, the plugin's message going into `msg`.
    pub fn new(alg: Algorithm, place: Place, msg: &mut [u8]) -> Call {
        let (stream, device) = match place {
            Place::Host => (std::ptr::null_mut(), -1),
            Place::Device { stream, ordinal } => (stream, ordinal),
        };
        Call {
            parameter_set: parameter_set(alg),
            stream,
            device,
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

/// `pqcprof_plugin_descriptor` of ABI 1.1: the 1.0 fields, then the ones
/// 1.1 adds (read only from a descriptor that declares 1.1).
#[repr(C)]
pub struct Descriptor11 {
    /// Read through [`Descriptor`], as which the same pointer is read first.
    #[allow(dead_code)]
    pub(super) base: Descriptor,
    pub(super) own_randomness: u32,
}

/// `PQCPROF_OWN_*`: the bit of `own_randomness` for `op` of `alg`'s family,
/// or None where the operation takes no randomness.
pub fn own_bit(alg: Algorithm, op: Operation) -> Option<u32> {
    let kem = alg.mlkem_params().is_some();
    match (op, kem) {
        (Operation::KeyGen, true) => Some(1),
        (Operation::Encaps, true) => Some(2),
        (Operation::KeyGen, false) => Some(4),
        (Operation::Sign, false) => Some(8),
        _ => None,
    }
}

/// The operations of the `PQCPROF_OWN_*` bits, by name.
pub const OWN_RANDOMNESS: [(u32, &str); 4] = [
    (1, "ML-KEM keygen"),
    (2, "ML-KEM encaps"),
    (4, "ML-DSA keygen"),
    (8, "ML-DSA sign"),
];

/// The names of an `own_randomness` value's operations, each one offered
/// by some set of `offers`; an unknown bit, or one naming an operation no
/// set offers, is refused with the value.
pub(super) fn own_randomness(bits: u32, offers: &[Offer]) -> anyhow::Result<Vec<String>> {
    ensure!(
        bits & !0xf == 0,
        "own_randomness: unknown bits {:#x} in {bits:#x} (valid: PQCPROF_OWN_MLKEM_KEYGEN 0x1, PQCPROF_OWN_MLKEM_ENCAPS 0x2, PQCPROF_OWN_MLDSA_KEYGEN 0x4, PQCPROF_OWN_MLDSA_SIGN 0x8; decapsulation and verification take no randomness)",
        bits & !0xf
    );
    let mut out = vec![];
    for (bit, name) in OWN_RANDOMNESS {
        if bits & bit == 0 {
            continue;
        }
        let offered = offers.iter().any(|o| {
            Operation::ALL
                .into_iter()
                .any(|op| o.has(op) && own_bit(o.alg, op) == Some(bit))
        });
        ensure!(
            offered,
            "own_randomness: bit {bit:#x} ({name}) names an operation no listed set implements"
        );
        out.push(name.to_string());
    }
    Ok(out)
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

/// One buffer as a plugin is handed it: an address and its length in
/// bytes.
pub trait Region {
    /// The address the plugin gets.
    fn addr(&mut self) -> *mut u8;
    /// Its length in bytes.
    fn bytes(&self) -> usize;
}

impl Region for &[u8] {
    fn addr(&mut self) -> *mut u8 {
        // The plugin only reads it (a `const uint8_t *` in the header).
        self.as_ptr().cast_mut()
    }
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl Region for &mut [u8] {
    fn addr(&mut self) -> *mut u8 {
        self.as_mut_ptr()
    }
    fn bytes(&self) -> usize {
        self.len()
    }
}

/// Device memory: a `CUdeviceptr` and its length (0 and 0 for an empty
/// buffer).
#[derive(Debug, Clone, Copy)]
pub struct DeviceRegion {
    /// The device address.
    pub ptr: u64,
    /// Bytes.
    pub len: usize,
}

impl Region for DeviceRegion {
    fn addr(&mut self) -> *mut u8 {
        self.ptr as usize as *mut u8
    }
    fn bytes(&self) -> usize {
        self.len
    }
}

/// The buffers of one batched call, as pqcprof allocated them (`I` the
/// inputs, `O` the outputs: host slices, or device memory); each field is
/// the header's parameter of the same name.
#[allow(missing_docs)]
pub enum Buffers<I, O> {
    /// ML-KEM key generation.
    KemKeygen { seeds: I, ek: O, dk: O },
    /// ML-KEM encapsulation.
    KemEncaps { ek: I, m: I, c: O, k: O },
    /// ML-KEM decapsulation.
    KemDecaps { dk: I, c: I, k: O },
    /// ML-DSA key generation.
    DsaKeygen { xi: I, pk: O, sk: O },
    /// ML-DSA signing.
    DsaSign {
        sk: I,
        msg: I,
        msg_item: usize,
        ctx: I,
        rnd: I,
        sig: O,
    },
    /// ML-DSA verification.
    DsaVerify {
        pk: I,
        msg: I,
        msg_item: usize,
        ctx: I,
        sig: I,
        ok: O,
    },
}

/// Buffers in host memory.
pub type HostBuffers<'a> = Buffers<&'a [u8], &'a mut [u8]>;

impl<I, O> Buffers<I, O> {
    /// The same call with each input mapped by `fi` and each output by
    /// `fo`, in the header's parameter order; the first error stops it.
    pub fn try_map<I2, O2>(
        &mut self,
        mut fi: impl FnMut(&mut I) -> anyhow::Result<I2>,
        mut fo: impl FnMut(&mut O) -> anyhow::Result<O2>,
    ) -> anyhow::Result<Buffers<I2, O2>> {
        Ok(match self {
            Buffers::KemKeygen { seeds, ek, dk } => Buffers::KemKeygen {
                seeds: fi(seeds)?,
                ek: fo(ek)?,
                dk: fo(dk)?,
            },
            Buffers::KemEncaps { ek, m, c, k } => Buffers::KemEncaps {
                ek: fi(ek)?,
                m: fi(m)?,
                c: fo(c)?,
                k: fo(k)?,
            },
            Buffers::KemDecaps { dk, c, k } => Buffers::KemDecaps {
                dk: fi(dk)?,
                c: fi(c)?,
                k: fo(k)?,
            },
            Buffers::DsaKeygen { xi, pk, sk } => Buffers::DsaKeygen {
                xi: fi(xi)?,
                pk: fo(pk)?,
                sk: fo(sk)?,
            },
            Buffers::DsaSign {
                sk,
                msg,
                msg_item,
                ctx,
                rnd,
                sig,
            } => Buffers::DsaSign {
                sk: fi(sk)?,
                msg: fi(msg)?,
                msg_item: *msg_item,
                ctx: fi(ctx)?,
                rnd: fi(rnd)?,
                sig: fo(sig)?,
            },
            Buffers::DsaVerify {
                pk,
                msg,
                msg_item,
                ctx,
                sig,
                ok,
            } => Buffers::DsaVerify {
                pk: fi(pk)?,
                msg: fi(msg)?,
                msg_item: *msg_item,
                ctx: fi(ctx)?,
                sig: fi(sig)?,
                ok: fo(ok)?,
            },
        })
    }

    /// The outputs, in the header's parameter order.
    pub fn outputs(&mut self) -> Vec<&mut O> {
        match self {
            Buffers::KemKeygen { ek, dk, .. } => vec![ek, dk],
            Buffers::KemEncaps { c, k, .. } => vec![c, k],
            Buffers::KemDecaps { k, .. } => vec![k],
            Buffers::DsaKeygen { pk, sk, .. } => vec![pk, sk],
            Buffers::DsaSign { sig, .. } => vec![sig],
            Buffers::DsaVerify { ok, .. } => vec![ok],
        }
    }
}

impl<I: Region, O: Region> Buffers<I, O> {
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
                    ("seeds", 64, seeds.bytes()),
                    ("ek", pk, ek.bytes()),
                    ("dk", sk, dk.bytes()),
                ]
            }
            Buffers::KemEncaps { ek, m, c, k } => vec![
                ("ek", pk, ek.bytes()),
                ("m", 32, m.bytes()),
                ("c", ct, c.bytes()),
                ("k", 32, k.bytes()),
            ],
            Buffers::KemDecaps { dk, c, k } => {
                vec![
                    ("dk", sk, dk.bytes()),
                    ("c", ct, c.bytes()),
                    ("k", 32, k.bytes()),
                ]
            }
            Buffers::DsaKeygen { xi, pk: p, sk: s } => {
                vec![
                    ("xi", 32, xi.bytes()),
                    ("pk", pk, p.bytes()),
                    ("sk", sk, s.bytes()),
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
                ("sk", sk, s.bytes()),
                ("msg", *msg_item, msg.bytes()),
                ("rnd", 32, rnd.bytes()),
                ("sig", sig, g.bytes()),
            ],
            Buffers::DsaVerify {
                pk: p,
                msg,
                msg_item,
                sig: g,
                ok,
                ..
            } => vec![
                ("pk", pk, p.bytes()),
                ("msg", *msg_item, msg.bytes()),
                ("sig", sig, g.bytes()),
                ("ok", 1, ok.bytes()),
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
                ctx.bytes() <= 255,
                "context: expected at most 255 bytes, got {}",
                ctx.bytes()
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
        mut self,
        d: &Descriptor,
        call: &Call,
        batch: usize,
    ) -> anyhow::Result<c_int> {
        let missing = || anyhow::anyhow!("the plugin has no function for these buffers");
        let c = call as *const Call;
        Ok(match &mut self {
            Buffers::KemKeygen { seeds, ek, dk } => (d.mlkem_keygen.ok_or_else(missing)?)(
                c,
                batch,
                seeds.addr(),
                seeds.bytes(),
                ek.addr(),
                ek.bytes(),
                dk.addr(),
                dk.bytes(),
            ),
            Buffers::KemEncaps { ek, m, c: ct, k } => (d.mlkem_encaps.ok_or_else(missing)?)(
                c,
                batch,
                ek.addr(),
                ek.bytes(),
                m.addr(),
                m.bytes(),
                ct.addr(),
                ct.bytes(),
                k.addr(),
                k.bytes(),
            ),
            Buffers::KemDecaps { dk, c: ct, k } => (d.mlkem_decaps.ok_or_else(missing)?)(
                c,
                batch,
                dk.addr(),
                dk.bytes(),
                ct.addr(),
                ct.bytes(),
                k.addr(),
                k.bytes(),
            ),
            Buffers::DsaKeygen { xi, pk, sk } => (d.mldsa_keygen.ok_or_else(missing)?)(
                c,
                batch,
                xi.addr(),
                xi.bytes(),
                pk.addr(),
                pk.bytes(),
                sk.addr(),
                sk.bytes(),
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
                sk.addr(),
                sk.bytes(),
                msg.addr(),
                msg.bytes(),
                *msg_item,
                ctx.addr(),
                ctx.bytes(),
                rnd.addr(),
                rnd.bytes(),
                sig.addr(),
                sig.bytes(),
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
                pk.addr(),
                pk.bytes(),
                msg.addr(),
                msg.bytes(),
                *msg_item,
                ctx.addr(),
                ctx.bytes(),
                sig.addr(),
                sig.bytes(),
                ok.addr(),
                ok.bytes(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_randomness_bits_are_named_and_checked_against_the_offers() {
        let offers = [Offer {
            alg: Algorithm::MlKem768,
            operations: 1 | 2 | 4,
        }];
        assert_eq!(
            own_randomness(0x3, &offers).unwrap(),
            ["ML-KEM keygen", "ML-KEM encaps"]
        );
        assert!(own_randomness(0, &offers).unwrap().is_empty());
        let e = own_randomness(0x13, &offers).unwrap_err().to_string();
        assert!(
            e.starts_with("own_randomness: unknown bits 0x10 in 0x13"),
            "{e}"
        );
        let e = own_randomness(0x8, &offers).unwrap_err().to_string();
        assert_eq!(
            e,
            "own_randomness: bit 0x8 (ML-DSA sign) names an operation no listed set implements"
        );
        assert_eq!(own_bit(Algorithm::MlDsa65, Operation::Sign), Some(8));
        assert_eq!(own_bit(Algorithm::MlKem512, Operation::Decaps), None);
    }

    #[test]
    fn a_buffer_of_another_size_is_named_with_both_lengths() {
        let (ek, m) = (vec![0u8; 2 * 1184], vec![0u8; 64]);
        let (mut c, mut k) = (vec![0u8; 2 * 1088 - 1], vec![0u8; 64]);
        let b: HostBuffers<'_> = Buffers::KemEncaps {
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
        let b: HostBuffers<'_> = Buffers::KemEncaps {
            ek: &ek,
            m: &m,
            c: &mut c,
            k: &mut k,
        };
        assert!(b
            .check_sizes(Algorithm::MlKem768, Operation::Encaps, 2)
            .is_ok());
        let b: HostBuffers<'_> = Buffers::KemEncaps {
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
