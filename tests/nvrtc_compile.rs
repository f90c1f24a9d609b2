//! The native kernels compile with NVRTC for every supported architecture
//! (Turing to Hopper), to PTX and to machine code, and both hold every entry
//! point.
//!
//! Needs libnvrtc on the loader path (a CUDA toolkit, or pip's
//! nvidia-cuda-nvrtc with its lib folder in LD_LIBRARY_PATH). Without it the
//! test says so and passes, unless PQCPROF_REQUIRE_NVRTC=1 (as in CI), where
//! a missing NVRTC is a failure.

use pqcprof::backend::native_gpu::kernel_cache;
use pqcprof::backend::native_gpu::kernels;
use pqcprof::backend::native_gpu::sizing::{variants, Variant};
use pqcprof::core::catalog::{Algorithm, Family};

mod common;
use common::nvrtc_or_skip;

const ARCHS: [&str; 5] = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];

/// Every kernel entry point of `unit` (every variant of every operation of
/// its algorithms, and its own device-side wait), sorted; `None`: of every
/// unit, the wait once.
fn entry_points_of(unit: Option<Family>) -> Vec<String> {
    let mut v: Vec<String> = Algorithm::ALL
        .iter()
        .filter(|a| unit.is_none_or(|u| a.family() == u))
        .flat_map(|&a| {
            a.operations().into_iter().flat_map(move |op| {
                variants(a, op)
                    .iter()
                    .map(move |&var| kernels::variant_kernel_name(a, op, var))
            })
        })
        .chain([kernels::HOLD_KERNEL.to_string()])
        .collect();
    v.sort();
    v
}

fn entry_points() -> Vec<String> {
    entry_points_of(None)
}

/// `pqcprof kernels --arch ARCH --json ARGS` with `env` set: its one
/// architecture's entry.
fn kernels_json(arch: &str, args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqcprof"))
        .args(["kernels", "--arch", arch, "--json"])
        .args(args)
        // The cache the stand-in tests share: sm_90 is compiled once a run.
        .env("PQCPROF_PTX_CACHE", common::standin::ptx_cache())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().unwrap()[0].clone()
}

#[test]
fn kernels_compile_for_turing_to_hopper_and_are_cached() {
    let Some((major, minor)) = nvrtc_or_skip("kernel compile test") else {
        return;
    };
    eprintln!("NVRTC {major}.{minor}");
    // Turing to Ada are compiled here, into an empty cache; Hopper comes
    // from the cache the stand-in tests share (compiled by whichever test
    // needed it first, perhaps this one): every architecture is checked,
    // and no source is compiled twice for one of them in a test run.
    let fresh = tempfile::tempdir().unwrap();
    let shared = common::standin::ptx_cache();
    let dir = |arch: &str| {
        if arch == "sm_90" {
            shared.clone()
        } else {
            fresh.path().to_path_buf()
        }
    };
    // The sample: ML-KEM's unit for every architecture, ML-DSA's (about
    // three times its compile) for the oldest, Turing, and for Hopper; the
    // architectures between take the same source through the same NVRTC
    // options.
    let all = common::full(
        "kernels_compile_for_turing_to_hopper_and_are_cached",
        "the ML-DSA unit for sm_80, sm_86 and sm_89",
    );
    let sampled_out = |arch: &str, unit: Family| {
        !all && unit == Family::MlDsa && matches!(arch, "sm_80" | "sm_86" | "sm_89")
    };
    // One NVRTC program per thread: the architectures and units compile in
    // parallel.
    let jobs: Vec<(&str, Family)> = ARCHS
        .iter()
        .flat_map(|&a| kernels::UNITS.map(|u| (a, u)))
        .filter(|&(a, u)| !sampled_out(a, u))
        .collect();
    let compiled: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|&(arch, unit)| {
                let d = dir(arch);
                s.spawn(move || {
                    let t0 = std::time::Instant::now();
                    (
                        kernel_cache::compile_cached_in(Some(&d), unit, arch),
                        t0.elapsed(),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|j| j.join().unwrap()).collect()
    });
    let mut sm75 = None;
    for ((arch, unit), (compiled, took)) in jobs.iter().copied().zip(compiled) {
        let (compiled, origin) = compiled.unwrap_or_else(|e| panic!("{e}"));
        if arch != "sm_90" {
            assert_eq!(origin, kernel_cache::Origin::Compiled, "{arch} {unit:?}");
        }
        assert_eq!((compiled.arch.as_str(), compiled.unit), (arch, unit));
        let text = &compiled.ptx;
        let cubin = &compiled.cubin;
        assert!(
            cubin.starts_with(b"\x7fELF"),
            "{arch} {unit:?}: machine code is not ELF"
        );
        assert_eq!(kernel_cache::cubin_arch(cubin).as_deref(), Some(arch));
        assert!(
            text.contains(&format!(".target {arch}")),
            "{arch} {unit:?}: wrong target"
        );
        let mine = entry_points_of(Some(unit));
        for name in entry_points() {
            let needle = format!("\0{name}\0");
            let in_cubin = cubin.windows(needle.len()).any(|w| w == needle.as_bytes());
            let in_ptx = text.contains(&format!(".entry {name}("));
            // Each unit holds its own family's entry points, and only those.
            let expected = mine.contains(&name);
            assert_eq!(in_ptx, expected, "{arch} {unit:?}: PTX entry {name}");
            assert_eq!(
                in_cubin, expected,
                "{arch} {unit:?}: entry {name} in the machine code"
            );
        }
        // ptxas's report of every entry point is in the log kept with it.
        let mut reported: Vec<String> =
            pqcprof::backend::native_gpu::resources::parse_ptxas_log(&compiled.log)
                .into_iter()
                .map(|k| k.name)
                .collect();
        reported.sort();
        assert_eq!(reported, mine, "{arch} {unit:?}");
        eprintln!(
            "{arch} {unit:?}: {} bytes of PTX, {} bytes of machine code in {:.1?} ({origin:?})",
            text.len(),
            cubin.len(),
            took
        );
        if arch == "sm_75" && unit == Family::MlDsa {
            sm75 = Some(compiled);
        }
    }
    // Asked again, an architecture comes from the cache, unchanged.
    let first = sm75.unwrap();
    let (second, origin) =
        kernel_cache::compile_cached_in(Some(fresh.path()), Family::MlDsa, "sm_75").unwrap();
    match origin {
        kernel_cache::Origin::Cache(p) => assert!(p.starts_with(fresh.path()), "{}", p.display()),
        other => panic!("second compile did not use the cache: {other:?}"),
    }
    assert_eq!(first.ptx, second.ptx);
    assert_eq!(first.cubin, second.cubin);
    assert_eq!(first.log, second.log);
    // Four files per unit and architecture compiled here: PTX, machine
    // code, NVRTC's log and the lock its compile held; nothing else (no
    // temporary file left behind).
    let mut files: Vec<String> = std::fs::read_dir(fresh.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let entries = jobs.iter().filter(|(arch, _)| *arch != "sm_90").count();
    assert_eq!(files.len(), 4 * entries, "{files:?}");
    for ext in [".cubin", ".ptx", ".log", ".lock"] {
        assert_eq!(
            files.iter().filter(|f| f.ends_with(ext)).count(),
            entries,
            "{ext}: {files:?}"
        );
    }
}

#[test]
fn kernels_command_reports_every_entry_point() {
    if nvrtc_or_skip("`pqcprof kernels` test").is_none() {
        return;
    }
    // From the cache the stand-in tests share (its log holds ptxas's
    // report): no second compile of sm_90 in a test run.
    let arch = kernels_json("sm_90", &[], &[]);
    assert_eq!(arch["arch"], "sm_90");
    assert_eq!(arch["threads_per_block"], 128);
    let kernels = arch["kernels"].as_array().unwrap();
    let mut names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, entry_points());
    let mut cooperative = 0;
    for k in kernels {
        let regs = k["registers"].as_u64().unwrap();
        // No kernel of any variant spills.
        assert_eq!(k["spill_store_bytes"], 0, "{k}");
        assert_eq!(k["spill_load_bytes"], 0, "{k}");
        // The device-side wait is tiny: a few registers, no stack.
        if k["name"] == kernels::HOLD_KERNEL {
            assert!(regs <= 32 && k["stack_bytes"] == 0, "{k}");
            continue;
        }
        assert!((16..=255).contains(&regs), "{k}");
        let name = k["name"].as_str().unwrap();
        let variant = Variant::of_kernel(name);
        assert_eq!(k["variant"], variant.name(), "{k}");
        if variant == Variant::Thread {
            // A one-thread kernel keeps its polynomials on the stack.
            assert!(k["stack_bytes"].as_u64().unwrap() > 0, "{k}");
            assert_eq!(k["threads_per_block"], 128, "{k}");
        } else {
            // A cooperative one keeps them, and its Keccak states, in shared
            // memory: no local array at all.
            cooperative += 1;
            assert_eq!(k["stack_bytes"], 0, "{k}");
            let smem = k["shared_bytes"].as_u64().unwrap();
            assert!(smem > 0 && smem <= 48 * 1024, "{k}");
            assert_eq!(
                k["resident_operations_per_sm"], k["resident_blocks_per_sm"],
                "{k}"
            );
        }
        let occ = k["occupancy_pct"].as_f64().unwrap();
        assert!(occ > 0.0 && occ <= 100.0, "{k}");
    }
    // The warp variant of the nine ML-KEM operations, the block variant of
    // the nine ML-DSA ones.
    assert_eq!(cooperative, 18);
}

#[test]
fn experiment_options_reach_nvrtc_and_are_named() {
    if nvrtc_or_skip("PQCPROF_NVRTC_OPTIONS test").is_none() {
        return;
    }
    // ML-DSA's unit only (`--alg mldsa`): its one-thread kernels use over
    // 100 registers uncapped and all but ML-DSA-65's signing declare no
    // launch bounds, so the cap shows (ML-KEM's one-thread kernels declare
    // bounds since they were cut to fewer registers).
    let arch = kernels_json(
        "sm_80",
        &["--alg", "mldsa"],
        &[("PQCPROF_NVRTC_OPTIONS", "--maxrregcount=64")],
    );
    let names: Vec<&str> = arch["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    let mut names: Vec<String> = names.into_iter().map(String::from).collect();
    names.sort();
    assert_eq!(names, entry_points_of(Some(Family::MlDsa)));
    assert!(
        arch["nvrtc"]
            .as_str()
            .unwrap()
            .ends_with("with --maxrregcount=64"),
        "{}",
        arch["nvrtc"]
    );
    // `--maxrregcount` binds the kernels without `__launch_bounds__` (ML-DSA's
    // one-thread variant but mldsa65_sign); the block ones and mldsa65_sign
    // declare launch bounds, which take precedence over it (CUDA C++
    // Programming Guide, "Launch Bounds").
    let capped: Vec<&serde_json::Value> = arch["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["variant"] == "thread" && k["name"] != "mldsa65_sign")
        .collect();
    assert!(!capped.is_empty());
    for k in capped {
        assert!(k["registers"].as_u64().unwrap() <= 64, "{k}");
    }
}
