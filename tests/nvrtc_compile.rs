//! The native kernels compile with NVRTC for every supported architecture
//! (Turing to Hopper), and the PTX holds every entry point.
//!
//! Needs libnvrtc on the loader path (a CUDA toolkit, or pip's
//! nvidia-cuda-nvrtc with its lib folder in LD_LIBRARY_PATH). Without it the
//! test says so and passes, unless PQCPROF_REQUIRE_NVRTC=1 (as in CI), where
//! a missing NVRTC is a failure.

use pqcprof::catalog::Algorithm;
use pqcprof::gpu::{kernels, probe};

const ARCHS: [&str; 5] = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];

#[test]
fn kernels_compile_for_turing_to_hopper() {
    let Some((major, minor)) = probe::nvrtc_version() else {
        if std::env::var("PQCPROF_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!(
                "PQCPROF_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (LD_LIBRARY_PATH={:?})",
                std::env::var("LD_LIBRARY_PATH")
            );
        }
        eprintln!("NVRTC not found: kernel compile test NOT run (set PQCPROF_REQUIRE_NVRTC=1 to make this a failure)");
        return;
    };
    eprintln!("NVRTC {major}.{minor}");
    for arch in ARCHS {
        let t0 = std::time::Instant::now();
        let ptx = kernels::compile(arch).unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_src();
        assert!(
            text.contains(&format!(".target {arch}")),
            "{arch}: wrong target"
        );
        for alg in Algorithm::ALL {
            for op in alg.operations() {
                let name = kernels::kernel_name(alg, op);
                assert!(
                    text.contains(&format!(".entry {name}(")),
                    "{arch}: entry {name} missing"
                );
            }
        }
        eprintln!(
            "{arch}: {} bytes of PTX in {:.1?}",
            text.len(),
            t0.elapsed()
        );
    }
}

#[test]
fn compiled_ptx_is_cached_and_reused() {
    if probe::nvrtc_version().is_none() {
        if std::env::var("PQCPROF_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("PQCPROF_REQUIRE_NVRTC=1 but libnvrtc could not be loaded");
        }
        eprintln!("NVRTC not found: PTX cache test NOT run");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // The only test in this process that reads the variable.
    std::env::set_var("PQCPROF_PTX_CACHE", d.path());
    let (first, src1) = kernels::compile_cached("sm_90").unwrap();
    assert_eq!(src1, kernels::PtxSource::Compiled);
    let (second, src2) = kernels::compile_cached("sm_90").unwrap();
    match src2 {
        kernels::PtxSource::Cache(p) => assert!(p.starts_with(d.path()), "{}", p.display()),
        other => panic!("second compile did not use the cache: {other:?}"),
    }
    assert_eq!(first.to_src(), second.to_src());
}
