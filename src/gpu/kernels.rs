//! The native kernels' source, assembled into one translation unit for
//! NVRTC, and its compilation.
//!
//! `cuda/native/*.cuh` are embedded at build time and concatenated in
//! dependency order with their quoted `#include` lines dropped, so NVRTC
//! needs neither an include path nor any system header. `#line` directives
//! keep NVRTC's messages pointing at the original files.

/// The sources, in the order they must appear.
pub const PARTS: [(&str, &str); 7] = [
    ("common.cuh", include_str!("../../cuda/native/common.cuh")),
    ("keccak.cuh", include_str!("../../cuda/native/keccak.cuh")),
    ("mlkem.cuh", include_str!("../../cuda/native/mlkem.cuh")),
    ("mldsa.cuh", include_str!("../../cuda/native/mldsa.cuh")),
    (
        "mlkem_kernels.cuh",
        include_str!("../../cuda/native/mlkem_kernels.cuh"),
    ),
    (
        "mldsa_kernels.cuh",
        include_str!("../../cuda/native/mldsa_kernels.cuh"),
    ),
    ("kernels.cu", include_str!("../../cuda/native/kernels.cu")),
];

/// Kernel entry points, as named in the sources.
pub fn kernel_name(alg: crate::catalog::Algorithm, op: crate::catalog::Operation) -> String {
    let set = alg.name().to_ascii_lowercase().replace('-', "");
    format!("{set}_{}", op.cli_name())
}

/// The whole translation unit NVRTC compiles.
pub fn source() -> String {
    let mut out = String::new();
    for (name, text) in PARTS {
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
#[error("NVRTC could not compile the native kernels for {arch}: {message}\n{log}")]
pub struct CompileFailure {
    /// Target architecture.
    pub arch: String,
    /// NVRTC's status.
    pub message: String,
    /// NVRTC's program log.
    pub log: String,
}

/// Compiles the kernels to PTX for `arch` (e.g. `sm_90`). NVRTC must be
/// present (see `gpu::probe::nvrtc_version`).
pub fn compile(arch: &str) -> Result<cudarc::nvrtc::Ptx, CompileFailure> {
    use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
    let opts = CompileOptions {
        options: vec![
            format!("--gpu-architecture={arch}"),
            "--std=c++17".into(),
            "-DPQCPROF_NVRTC=1".into(),
        ],
        name: Some("pqcprof_native.cu".into()),
        ..Default::default()
    };
    compile_ptx_with_opts(source(), opts).map_err(|e| match e {
        CompileError::CompileError { nvrtc, log, .. } => CompileFailure {
            arch: arch.into(),
            message: format!("{nvrtc:?}"),
            log: log.to_string_lossy().into_owned(),
        },
        other => CompileFailure {
            arch: arch.into(),
            message: format!("{other:?}"),
            log: String::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Algorithm, Operation};

    #[test]
    fn the_unit_has_no_includes_and_names_are_stable() {
        // Entry points are made by macros; tests/nvrtc_compile.rs finds
        // every one of them in the compiled PTX.
        let s = source();
        assert!(!s.lines().any(|l| l.trim_start().starts_with("#include \"")));
        assert!(!s.contains("#include <"), "NVRTC has no system headers");
        for (name, _) in PARTS {
            assert!(s.contains(&format!("#line 1 \"{name}\"")), "{name} missing");
        }
        let _ = Algorithm::ALL;
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
