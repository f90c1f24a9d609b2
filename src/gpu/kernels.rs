//! The native kernels' source, assembled into one translation unit for
//! NVRTC, and its compilation.
//!
//! `cuda/native/*.cuh` are embedded at build time and concatenated in
//! dependency order with their quoted `#include` lines dropped, so NVRTC
//! needs neither an include path nor any system header. `#line` directives
//! keep NVRTC's messages pointing at the original files. Compiled PTX is
//! cached on disk (see `cache_dir`), keyed by the source, the options and
//! NVRTC's version, so a GPU machine compiles once.

use std::path::{Path, PathBuf};

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

/// NVRTC options for `arch`.
fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "-DPQCPROF_NVRTC=1".into(),
    ]
}

/// Compiles the kernels to PTX for `arch` (e.g. `sm_90`). NVRTC must be
/// present (see `gpu::probe::nvrtc_version`).
pub fn compile(arch: &str) -> Result<cudarc::nvrtc::Ptx, CompileFailure> {
    use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
    let opts = CompileOptions {
        options: nvrtc_options(arch),
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

/// Where compiled PTX is kept between runs: `$PQCPROF_PTX_CACHE`, else
/// `$XDG_CACHE_HOME/pqcprof/ptx`, else `~/.cache/pqcprof/ptx`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PQCPROF_PTX_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("pqcprof").join("ptx"))
}

/// FNV-1a, 64 bits: a stable hash for cache file names (std's hasher may
/// change between Rust releases).
fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate the parts so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Cache file name: the source, the options and NVRTC's version all count.
pub fn cache_file_name(arch: &str, nvrtc: (i32, i32)) -> String {
    let src = source();
    let opts = nvrtc_options(arch).join(" ");
    let h = fnv1a64(&[
        src.as_bytes(),
        opts.as_bytes(),
        format!("{}.{}", nvrtc.0, nvrtc.1).as_bytes(),
    ]);
    format!("native-{arch}-nvrtc{}.{}-{h:016x}.ptx", nvrtc.0, nvrtc.1)
}

/// A cached PTX text, if present and plausibly whole (it names its target
/// and ends the last entry point).
fn read_cached(path: &Path, arch: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let whole = text.contains(&format!(".target {arch}"))
        && text.contains(".entry mldsa87_verify(")
        && text.trim_end().ends_with('}');
    whole.then_some(text)
}

/// Where the kernels came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtxSource {
    /// Compiled now by NVRTC (and cached if the cache folder is writable).
    Compiled,
    /// Read from this cache file.
    Cache(PathBuf),
}

/// Like `compile`, but reuses PTX compiled earlier by the same NVRTC from
/// the same source and options.
pub fn compile_cached(arch: &str) -> Result<(cudarc::nvrtc::Ptx, PtxSource), CompileFailure> {
    let version = crate::gpu::probe::nvrtc_version();
    let path = match (cache_dir(), version) {
        (Some(d), Some(v)) => Some(d.join(cache_file_name(arch, v))),
        _ => None,
    };
    if let Some(p) = &path {
        if let Some(text) = read_cached(p, arch) {
            return Ok((
                cudarc::nvrtc::Ptx::from_src(text),
                PtxSource::Cache(p.clone()),
            ));
        }
    }
    let ptx = compile(arch)?;
    if let Some(p) = &path {
        // A cache that cannot be written only costs the next run a compile.
        let _ = crate::export::write_atomic(p, ptx.to_src().as_bytes());
    }
    Ok((ptx, PtxSource::Compiled))
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

    #[test]
    fn cache_names_change_with_arch_and_nvrtc_and_are_stable() {
        let a = cache_file_name("sm_90", (13, 0));
        assert_eq!(a, cache_file_name("sm_90", (13, 0)));
        assert_ne!(a, cache_file_name("sm_80", (13, 0)));
        assert_ne!(a, cache_file_name("sm_90", (12, 8)));
        assert!(a.starts_with("native-sm_90-nvrtc13.0-") && a.ends_with(".ptx"));
        assert_ne!(fnv1a64(&[b"ab", b"c"]), fnv1a64(&[b"a", b"bc"]));
    }

    #[test]
    fn only_whole_cached_ptx_is_used() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.ptx");
        std::fs::write(&p, ".target sm_90\n.entry mldsa87_verify(\n{\n}\n").unwrap();
        assert!(read_cached(&p, "sm_90").is_some());
        assert!(read_cached(&p, "sm_80").is_none(), "wrong target");
        std::fs::write(&p, ".target sm_90\n.entry mldsa87_verify(\n{\n").unwrap();
        assert!(read_cached(&p, "sm_90").is_none(), "truncated");
        assert!(read_cached(&d.path().join("missing.ptx"), "sm_90").is_none());
    }
}
