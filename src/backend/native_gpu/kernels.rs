//! The native kernels' sources, assembled into one translation unit per
//! family (ML-KEM, ML-DSA) for NVRTC, and their compilation.
//!
//! `cuda/native/*.cuh` are embedded at build time and concatenated in
//! dependency order with their quoted `#include` lines dropped, so NVRTC
//! needs neither an include path nor any system header. `#line` directives
//! keep NVRTC's messages pointing at the original files. A run compiles
//! only the families it measures, each in its own thread: ML-DSA's unit
//! costs several times ML-KEM's. NVRTC makes both PTX and machine code
//! (cubin) for the device's own architecture, with ptxas's report of every
//! kernel's registers and memory in its log; all three are cached on disk
//! (see `cache_dir`), keyed by the unit, its source, the options and
//! NVRTC's version, so a machine compiles once. Processes that share a
//! cache (one task per GPU of a node) take turns: one compiles, the others
//! wait for it and read what it wrote (`super::kernel_cache`).

use crate::core::catalog::Family;

const COMMON: (&str, &str) = (
    "common.cuh",
    include_str!("../../../cuda/native/common.cuh"),
);
const KECCAK: (&str, &str) = (
    "keccak.cuh",
    include_str!("../../../cuda/native/keccak.cuh"),
);
const HOLD: (&str, &str) = ("hold.cuh", include_str!("../../../cuda/native/hold.cuh"));

/// ML-KEM's unit, in the order its sources must appear.
const MLKEM_PARTS: [(&str, &str); 6] = [
    COMMON,
    KECCAK,
    ("mlkem.cuh", include_str!("../../../cuda/native/mlkem.cuh")),
    (
        "mlkem_warp.cuh",
        include_str!("../../../cuda/native/mlkem_warp.cuh"),
    ),
    (
        "mlkem_kernels.cuh",
        include_str!("../../../cuda/native/mlkem_kernels.cuh"),
    ),
    HOLD,
];

/// ML-DSA's unit, in the order its sources must appear.
const MLDSA_PARTS: [(&str, &str); 6] = [
    COMMON,
    KECCAK,
    ("mldsa.cuh", include_str!("../../../cuda/native/mldsa.cuh")),
    (
        "mldsa_block.cuh",
        include_str!("../../../cuda/native/mldsa_block.cuh"),
    ),
    (
        "mldsa_kernels.cuh",
        include_str!("../../../cuda/native/mldsa_kernels.cuh"),
    ),
    HOLD,
];

/// The translation units, one per family.
pub const UNITS: [Family; 2] = [Family::MlKem, Family::MlDsa];

/// The sources of `unit`'s translation unit, in order. Each ends with
/// `hold.cuh`: every module holds its own device-side wait.
pub fn parts(unit: Family) -> &'static [(&'static str, &'static str)] {
    match unit {
        Family::MlKem => &MLKEM_PARTS,
        Family::MlDsa => &MLDSA_PARTS,
    }
}

/// `mlkem` or `mldsa`: the unit's name in cache files and messages.
pub fn unit_name(unit: Family) -> &'static str {
    match unit {
        Family::MlKem => "mlkem",
        Family::MlDsa => "mldsa",
    }
}

/// The units `algs` need, in `UNITS` order.
pub fn units_for(algs: &[crate::core::catalog::Algorithm]) -> Vec<Family> {
    UNITS
        .into_iter()
        .filter(|u| algs.iter().any(|a| a.family() == *u))
        .collect()
}

/// Kernel entry points, as named in the sources.
pub fn kernel_name(
    alg: crate::core::catalog::Algorithm,
    op: crate::core::catalog::Operation,
) -> String {
    format!("{}_{}", set_name(alg), op.cli_name())
}

/// The parameter set as kernel names begin with it (`mlkem768`).
pub fn set_name(alg: crate::core::catalog::Algorithm) -> String {
    alg.name().to_ascii_lowercase().replace('-', "")
}

/// The entry point of `op` of `alg` in `variant` (`mlkem768_keygen_warp`).
pub fn variant_kernel_name(
    alg: crate::core::catalog::Algorithm,
    op: crate::core::catalog::Operation,
    variant: crate::backend::native_gpu::sizing::Variant,
) -> String {
    format!("{}{}", kernel_name(alg, op), variant.suffix())
}

/// A one-thread kernel that waits on the device (cuda/native/hold.cuh):
/// timed launches are queued behind it so the host's launch call stays out
/// of the timed window.
pub const HOLD_KERNEL: &str = "pqcprof_hold";

/// The translation unit NVRTC compiles for `unit`.
pub fn source(unit: Family) -> String {
    let mut out = String::new();
    for (name, text) in parts(unit) {
        out.push_str(&format!("#line 1 \"{name}\"\n"));
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("#include \"") {
                out.push_str("// (include dropped: all sources are concatenated)\n");
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// `sm_XY` for a compute capability.
pub fn arch_for(cc: (u32, u32)) -> String {
    format!("sm_{}{}", cc.0, cc.1)
}

/// A compile failure with NVRTC's log.
#[derive(Debug, thiserror::Error)]
#[error("NVRTC could not compile the native {} kernels for {arch}: {message}\n{log}", unit_name(*.unit))]
pub struct CompileFailure {
    /// The unit.
    pub unit: Family,
    /// Target architecture.
    pub arch: String,
    /// NVRTC's status.
    pub message: String,
    /// NVRTC's program log.
    pub log: String,
}

/// Extra NVRTC options for experiments, from `$PQCPROF_NVRTC_OPTIONS`
/// (space-separated, e.g. `--maxrregcount=128`): they join the cache key,
/// and GPU records name them in their kernel image.
pub fn experiment_options() -> Vec<String> {
    std::env::var("PQCPROF_NVRTC_OPTIONS")
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// `NVRTC 13.5`, with the experiment options when there are any (`NVRTC
/// 13.5 with --maxrregcount=64`): what records and `kernels` name as the
/// compiler. `None` without NVRTC.
pub fn nvrtc_label() -> Option<String> {
    let (major, minor) = crate::probe::gpu::nvrtc_version()?;
    let extra = experiment_options();
    Some(if extra.is_empty() {
        format!("NVRTC {major}.{minor}")
    } else {
        format!("NVRTC {major}.{minor} with {}", extra.join(" "))
    })
}

/// NVRTC options for `arch`.
pub(crate) fn nvrtc_options(arch: &str) -> Vec<String> {
    let mut v = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "-DPQCPROF_NVRTC=1".into(),
        // ptxas's report (registers, stack, spills, shared memory) in the
        // log, kept with the kernels for `pqcprof kernels`; it changes no
        // code.
        "--ptxas-options=-v".into(),
    ];
    v.extend(experiment_options());
    v
}

/// What NVRTC made of the unit for one architecture.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The unit.
    pub unit: Family,
    /// `sm_XY` it was compiled for.
    pub arch: String,
    /// The PTX, kept for inspection and as a fallback the driver can
    /// JIT-compile.
    pub ptx: String,
    /// Machine code for `arch` (NVRTC runs ptxas itself for a real `sm_XY`
    /// target): loads with no JIT step, so a driver older than this NVRTC,
    /// which would refuse the newer PTX ISA, still runs it.
    pub cubin: Vec<u8>,
    /// NVRTC's log, with ptxas's report of every entry point
    /// (`resources::parse_ptxas_log` reads it).
    pub log: String,
}

/// Compiles `unit`'s kernels for `arch` (e.g. `sm_90`) to PTX and machine
/// code. NVRTC must be present (see `gpu::probe::nvrtc_version`).
pub fn compile(unit: Family, arch: &str) -> Result<Compiled, CompileFailure> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    let fail = |message: String, log: String| CompileFailure {
        unit,
        arch: arch.into(),
        message,
        log,
    };
    let src = CString::new(source(unit)).map_err(|e| fail(format!("{e}"), String::new()))?;
    let file = CString::new(format!("pqcprof_{}.cu", unit_name(unit)))
        .map_err(|e| fail(format!("{e}"), String::new()))?;
    let name = file.as_c_str();
    let prog = result::create_program(&src, Some(name))
        .map_err(|e| fail(format!("nvrtcCreateProgram: {e:?}"), String::new()))?;
    // Destroys the program however this function returns.
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created above, destroyed once, here.
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    let log = || {
        // SAFETY: `prog.0` is a live program.
        unsafe { result::get_program_log(prog.0) }
            .map(|raw| {
                // SAFETY: NVRTC's log is NUL-terminated.
                unsafe { CStr::from_ptr(raw.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            })
            .unwrap_or_default()
    };
    let options = nvrtc_options(arch);
    // SAFETY: `prog.0` is a live program; the options are plain strings.
    unsafe { result::compile_program(prog.0, &options) }
        .map_err(|e| fail(format!("{e:?}"), log()))?;
    // SAFETY: compiled above.
    let ptx = unsafe { result::get_ptx(prog.0) }
        .map_err(|e| fail(format!("nvrtcGetPTX: {e:?}"), log()))?;
    // SAFETY: `get_ptx` returns a NUL-terminated buffer.
    let ptx = unsafe { CStr::from_ptr(ptx.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut size = 0usize;
    // SAFETY: compiled for a real architecture; `size` is a valid out pointer.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| fail(format!("nvrtcGetCUBINSize: {e:?}"), log()))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds the `size` bytes NVRTC asked for.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| fail(format!("nvrtcGetCUBIN: {e:?}"), log()))?;
    if !is_whole_cubin(&cubin) {
        return Err(fail(
            format!("NVRTC returned {size} bytes that are not a whole kernel image"),
            log(),
        ));
    }
    Ok(Compiled {
        unit,
        arch: arch.into(),
        ptx,
        cubin,
        log: log(),
    })
}

/// The last entry point every unit defines (hold.cuh comes last): a file
/// that names it was not cut short.
pub(crate) const LAST_ENTRY: &str = HOLD_KERNEL;

/// Whether `cubin` is plausibly a whole kernel image: an ELF file whose
/// section headers lie inside it and that names the last entry point.
pub(crate) fn is_whole_cubin(cubin: &[u8]) -> bool {
    let u64_at = |o: usize| {
        cubin
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let u16_at = |o: usize| {
        cubin
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
    };
    // ELF64, little-endian; e_shoff at 0x28, e_shentsize 0x3a, e_shnum 0x3c.
    let header_ok = cubin.starts_with(b"\x7fELF\x02\x01");
    let sections_end = match (u64_at(0x28), u16_at(0x3a), u16_at(0x3c)) {
        (Some(off), Some(size), Some(n)) => off.checked_add(size * n),
        _ => None,
    };
    header_ok
        && sections_end.is_some_and(|end| end > 0 && end <= cubin.len() as u64)
        && cubin
            .windows(LAST_ENTRY.len())
            .any(|w| w == LAST_ENTRY.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{Algorithm, Operation};

    #[test]
    fn the_units_have_no_includes_and_names_are_stable() {
        // Entry points are made by macros; tests/nvrtc_compile.rs finds
        // every one of them in the compiled PTX.
        for unit in UNITS {
            let s = source(unit);
            assert!(!s.lines().any(|l| l.trim_start().starts_with("#include \"")));
            assert!(!s.contains("#include <"), "NVRTC has no system headers");
            for (name, _) in parts(unit) {
                assert!(s.contains(&format!("#line 1 \"{name}\"")), "{name} missing");
            }
            assert_eq!(parts(unit).last().unwrap().0, "hold.cuh");
        }
        // Each unit holds its own family's kernels only.
        assert!(source(Family::MlKem).contains("mlkem_kernels.cuh"));
        assert!(!source(Family::MlKem).contains("mldsa_kernels.cuh"));
        assert!(source(Family::MlDsa).contains("mldsa_kernels.cuh"));
        assert!(!source(Family::MlDsa).contains("mlkem_kernels.cuh"));
        assert_eq!(units_for(&[Algorithm::MlDsa65]), vec![Family::MlDsa]);
        assert_eq!(
            units_for(&[Algorithm::MlDsa44, Algorithm::MlKem512]),
            vec![Family::MlKem, Family::MlDsa]
        );
        assert_eq!(
            kernel_name(Algorithm::MlKem768, Operation::KeyGen),
            "mlkem768_keygen"
        );
        assert_eq!(
            kernel_name(Algorithm::MlDsa44, Operation::Verify),
            "mldsa44_verify"
        );
        assert_eq!(arch_for((9, 0)), "sm_90");
    }
}
