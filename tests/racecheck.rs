//! The racecheck build of the CPU stand-in CUDA driver
//! (tests/fixtures/cuda-standin/racecheck.cpp): every CUDA thread of a
//! block a real OS thread under ThreadSanitizer, barriers that synchronise
//! exactly whom CUDA says they do, shared memory full of garbage at block
//! start. It finds what the fiber stand-in cannot: a missing barrier gives
//! the right bytes there, and a race here.
//!
//!   * each synchronisation bug injected into a small test kernel
//!     (race_kernels.cu) is caught by its named check, and what CUDA allows
//!     (a thread that returns while the others wait at a `__syncthreads`)
//!     is not reported;
//!   * the 18 cooperative kernels (ML-KEM warp, ML-DSA block) run through
//!     `pqcprof gpu --backend native-gpu --kernel warp|block` with no report
//!     and pass the GPU gate, which compares every output of these batches
//!     with the host build's, byte for byte, as it does on the fiber
//!     stand-in; with the same inputs (`PQCPROF_INPUT_SEED`) both builds
//!     copy back the same bytes;
//!   * one barrier removed from mlkem_warp.cuh and one from mldsa_block.cuh
//!     (scratch copies) are caught.
//!
//! Needs NVRTC, a C++ compiler and its ThreadSanitizer runtime.

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const RACE_KERNEL: &str = "pqcprof_standin_race_test";
const THREADS: u32 = 64;
const N: u32 = 150;

/// The 1-based line of race_kernels.cu that holds `text` (the `nth`
/// occurrence, from 0), so that the expected reports follow the source.
fn race_line(text: &str, nth: usize) -> String {
    let src = std::fs::read_to_string(root().join("tests/fixtures/cuda-standin/race_kernels.cu"))
        .unwrap();
    let i = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .nth(nth)
        .unwrap_or_else(|| panic!("race_kernels.cu has no line with {text:?}"))
        .0;
    format!("tests/fixtures/cuda-standin/race_kernels.cu:{}", i + 1)
}

/// Runs the ignored test `child_race_kernel` of this binary in a child
/// process on the racecheck build, with bug `bug` and the kernel's PTX from
/// `ptx`: (success, stdout + stderr).
fn race_child(bug: u32, ptx: &Path) -> (bool, String) {
    let reports = tempfile::tempdir().unwrap();
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args([
        "child_race_kernel",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in standin::racecheck_env(&standin::racecheck_lib_dir(), reports.path()) {
        c.env(k, v);
    }
    c.env("PQCPROF_RACE_BUG", bug.to_string())
        .env("PQCPROF_RACE_PTX", ptx);
    standin::run_for_text(&mut c)
}

/// What pqcprof_standin_race_test computes (race_kernels.cu) without a bug,
/// or with bug 5 (the last thread of each block returns early).
fn race_expected(bug: u32) -> Vec<u32> {
    let mut out = vec![0; 2 * N as usize];
    for i in 0..N {
        let (b, t) = (i / THREADS, i % THREADS);
        if bug == 5 && t == THREADS - 1 {
            continue;
        }
        let lane = t % 32;
        let j = b * THREADS + (t & !31) + (lane + 1) % 32;
        out[2 * i as usize] = (7 * j + 1) ^ 0x5555;
        out[2 * i as usize + 1] = if bug == 5 && t == THREADS - 2 {
            0
        } else {
            7 * (b * THREADS + (t + 1) % THREADS) + 1
        };
    }
    out
}

#[test]
#[ignore = "run by injected_bugs_are_caught_by_their_named_check in a child process on the racecheck build"]
fn child_race_kernel() {
    use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    let bug: u32 = std::env::var("PQCPROF_RACE_BUG").unwrap().parse().unwrap();
    let ptx = std::fs::read_to_string(std::env::var("PQCPROF_RACE_PTX").unwrap()).unwrap();
    let ctx = CudaContext::new(0).unwrap();
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).unwrap();
    let f = module.load_function(RACE_KERNEL).unwrap();
    let stream = ctx.default_stream();
    let mut out = stream.alloc_zeros::<u32>(2 * N as usize).unwrap();
    let mut b = stream.launch_builder(&f);
    b.arg(&mut out).arg(&N).arg(&bug);
    let cfg = LaunchConfig {
        grid_dim: (N.div_ceil(THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: if bug == 7 { 4 * THREADS } else { 0 },
    };
    // SAFETY: (u32 *out, u32 n, u32 bug), out of 2n elements, THREADS u32
    // of dynamic shared memory for bug 7; a bug is caught by the stand-in.
    let launched = unsafe { b.launch(cfg) };
    let copied = launched.and_then(|_| stream.clone_dtoh(&out));
    match copied {
        Ok(v) => {
            assert_eq!(v, race_expected(bug), "bug {bug}: wrong output");
            println!("race kernel: bug {bug} ran, output right");
        }
        Err(e) => panic!("race kernel: bug {bug} failed: {e:?}"),
    }
}

#[test]
fn injected_bugs_are_caught_by_their_named_check() {
    if nvrtc_or_skip("injected_bugs_are_caught_by_their_named_check").is_none() {
        return;
    }
    let src = std::fs::read_to_string(root().join("tests/fixtures/cuda-standin/race_kernels.cu"))
        .unwrap();
    let ptx_dir = tempfile::tempdir().unwrap();
    let ptx = ptx_dir.path().join("race_kernels.ptx");
    std::fs::write(&ptx, cudarc::nvrtc::compile_ptx(src).unwrap().to_src()).unwrap();
    let kernel = format!("kernel {RACE_KERNEL}, block 0");
    let store = race_line("slots[t] = v", 0);
    let load = race_line("slots[(t + 1) % B]", 0);
    // (bug, what the launch must report, or None: it must run clean)
    let cases: Vec<(u32, Option<Vec<String>>)> = vec![
        (0, None),
        (
            1,
            Some(vec![
                format!("data race in {kernel}"),
                store.clone(),
                load.clone(),
                "__shared__ vals".into(),
            ]),
        ),
        (
            2,
            Some(vec![
                format!("data race in {kernel}"),
                race_line("lanes[t] = v", 0),
                race_line("const unsigned int neighbour", 0),
                "__shared__ lanes".into(),
            ]),
        ),
        (
            3,
            Some(vec![
                format!("divergent __syncthreads in {kernel}"),
                race_line("__syncthreads();", 0),
                race_line("__syncthreads();", 1),
            ]),
        ),
        (
            4,
            Some(vec![
                format!("read of never-written shared memory in {kernel}"),
                "of __shared__ pqcprof_standin_race_test::vals".into(),
                load.clone(),
            ]),
        ),
        (5, None),
        (
            6,
            Some(vec![
                format!("divergent warp rendezvous in {kernel}"),
                "exited while lanes 0-30 wait for it at".into(),
                race_line("__syncwarp()", 0),
                "mask 0xffffffff".into(),
            ]),
        ),
        (
            7,
            Some(vec![
                format!("read of never-written shared memory in {kernel}"),
                "of the block's dynamic shared memory".into(),
                load.clone(),
            ]),
        ),
    ];
    let results: Vec<(u32, bool, String)> = std::thread::scope(|s| {
        let jobs: Vec<_> = cases
            .iter()
            .map(|(bug, _)| {
                let ptx = &ptx;
                s.spawn(move || {
                    let (ok, text) = race_child(*bug, ptx);
                    (*bug, ok, text)
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for ((bug, want), (_, ok, text)) in cases.iter().zip(&results) {
        assert!(
            text.contains("racecheck mode"),
            "bug {bug}: not the racecheck build:\n{text}"
        );
        match want {
            None => {
                assert!(*ok, "bug {bug} must run clean:\n{text}");
                common::assert_has(
                    text,
                    &[&format!("race kernel: bug {bug} ran, output right")],
                );
                assert!(!text.contains("kernel failed"), "bug {bug}:\n{text}");
            }
            Some(parts) => {
                assert!(!*ok, "bug {bug} was not caught:\n{text}");
                let failed = text
                    .lines()
                    .find(|l| l.contains("kernel failed: "))
                    .unwrap_or_else(|| panic!("bug {bug}: no failed launch logged:\n{text}"));
                for p in parts {
                    assert!(
                        failed.contains(p.as_str()),
                        "bug {bug}: {p:?} not in\n{failed}\n\n{text}"
                    );
                }
                assert!(
                    text.contains("CUDA_ERROR_LAUNCH_FAILED"),
                    "bug {bug}:\n{text}"
                );
            }
        }
    }
}

/// What one `pqcprof gpu --backend native-gpu` run on a stand-in left.
struct GpuRun {
    code: i32,
    stdout: String,
    stderr: String,
    /// The run file's records.
    records: Vec<serde_json::Value>,
    /// One line per device-to-host copy: its bytes and their digest.
    digests: Vec<String>,
}

/// The seed of every run's inputs here, so that two builds of the
/// stand-in get the same inputs and must copy back the same bytes.
const INPUT_SEED: &str = "20261204";

/// `pqcprof gpu --backend native-gpu --runs 1 --warmup 0 ARGS`, inputs
/// from `INPUT_SEED`, on the racecheck build in `lib`, or on the fiber
/// stand-in when `lib` is None (it also fills the PTX cache the racecheck
/// runs load: NVRTC under ThreadSanitizer's allocator is several times
/// slower).
fn gpu_run(lib: Option<&Path>, args: &[&str]) -> GpuRun {
    let reports = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let digests = reports.path().join("copies");
    let mut c = match lib {
        Some(lib) => standin::racecheck_pqcprof(lib, reports.path()),
        None => standin::pqcprof(&[]),
    };
    c.env("PQCPROF_INPUT_SEED", INPUT_SEED)
        .env("PQCPROF_STANDIN_COPY_DIGESTS", &digests)
        .args([
            "gpu",
            "--backend",
            "native-gpu",
            "--runs",
            "1",
            "--warmup",
            "0",
        ])
        .args(args)
        .arg("--out")
        .arg(out.path());
    let (code, stdout, stderr) = outcome(&mut c);
    let records = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .map(|p| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            v["records"].as_array().unwrap().clone()
        })
        .unwrap_or_default();
    let digests = std::fs::read_to_string(&digests)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    GpuRun {
        code,
        stdout,
        stderr,
        records,
        digests,
    }
}

#[test]
fn every_cooperative_kernel_is_race_free_and_right() {
    if nvrtc_or_skip("every_cooperative_kernel_is_race_free_and_right").is_none() {
        return;
    }
    let lib = standin::racecheck_lib_dir();
    // ML-KEM: three warps (blocks) per operation; ML-DSA: four blocks, and
    // four messages signed by a queue (1 in 4.25, 5.1 and 3.85 attempts
    // succeed for ML-DSA-44/65/87: several rejection iterations per batch).
    // The sample: one parameter set of each family (the same cooperative
    // code at every level, its loops a different length).
    let all = common::full(
        "every_cooperative_kernel_is_race_free_and_right",
        "ML-KEM-512/1024 and ML-DSA-44/87 under the racecheck build",
    );
    let (kem, dsa, n) = if all {
        ("mlkem", "mldsa", 9)
    } else {
        ("ML-KEM-768", "ML-DSA-65", 3)
    };
    for (kernel, alg, batch) in [("warp", kem, "3"), ("block", dsa, "4")] {
        let args = ["--kernel", kernel, "--alg", alg, "--batch", batch];
        let what = format!("{alg} --kernel {kernel} --batch {batch}");
        let fiber = gpu_run(None, &args);
        assert_eq!(
            fiber.code, 0,
            "{what} on the fiber stand-in:\n{}\n{}",
            fiber.stdout, fiber.stderr
        );
        let t0 = std::time::Instant::now();
        let GpuRun {
            code,
            stdout,
            stderr,
            records,
            digests,
        } = gpu_run(Some(&lib), &args);
        assert_eq!(code, 0, "{what}:\n{stdout}\n{stderr}");
        assert!(stderr.contains("racecheck mode"), "{what}:\n{stderr}");
        for l in stderr.lines().filter(|l| l.contains("racecheck: ")) {
            assert!(
                l.contains("outside the kernels' sources ignored"),
                "{what}: a report:\n{l}"
            );
        }
        assert!(!stderr.contains("kernel failed"), "{what}:\n{stderr}");
        assert_eq!(records.len(), n, "{what}: {records:#?}");
        for r in &records {
            assert_eq!(r["status"], "ok", "{what}: {r:#}");
            assert_eq!(r["emulated"], true, "{what}: {r:#}");
            assert_eq!(r["kernel"]["variant"], kernel, "{what}: {r:#}");
            assert_eq!(r["batch"], batch.parse::<u64>().unwrap(), "{what}: {r:#}");
        }
        // The gate compared every output of these batches with the host
        // build's; the same inputs on both builds of the stand-in must also
        // bring back the same bytes, copy for copy.
        assert!(
            digests.len() >= n,
            "{what}: {} copies back logged",
            digests.len()
        );
        assert_eq!(
            digests, fiber.digests,
            "{what}: the racecheck build copied back other bytes than the fiber stand-in"
        );
        eprintln!("racecheck of {what}: {:.1} s", t0.elapsed().as_secs_f64());
    }
}

/// A scratch copy of the stand-in's and the kernels' sources with the first
/// barrier `barrier` after the line holding `after` in `file` removed (the
/// line kept, so that every other line keeps its number): its racecheck
/// build under `dir`, and the removed line's number.
fn mutant(dir: &Path, file: &str, after: &str, barrier: &str) -> (PathBuf, usize) {
    let src = dir.join("src");
    for sub in ["tests/fixtures/cuda-standin", "cuda/native"] {
        std::fs::create_dir_all(src.join(sub)).unwrap();
        for e in std::fs::read_dir(root().join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                std::fs::copy(&p, src.join(sub).join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let start = lines
        .iter()
        .position(|l| l.contains(after))
        .unwrap_or_else(|| panic!("{file} has no line with {after:?}"));
    let at = (start..lines.len())
        .find(|&i| lines[i].trim() == barrier)
        .unwrap_or_else(|| panic!("no {barrier} after {after:?} in {file}"));
    lines[at] = lines[at].replace(barrier, "/* barrier removed */;");
    std::fs::write(src.join(file), lines.join("\n") + "\n").unwrap();
    let lib = dir.join("lib");
    standin::racecheck_build_from(&src, &lib);
    (lib, at + 1)
}

#[test]
fn a_removed_barrier_of_each_cooperative_source_is_caught() {
    if nvrtc_or_skip("a_removed_barrier_of_each_cooperative_source_is_caught").is_none() {
        return;
    }
    for (file, after, barrier, kernel, alg) in [
        (
            "cuda/native/mlkem_warp.cuh",
            "void pqc_mlkem_warp_ntt(",
            "__syncwarp();",
            "warp",
            "ML-KEM-512",
        ),
        (
            "cuda/native/mldsa_block.cuh",
            "void mldsa_blk_ntt(",
            "__syncthreads();",
            "block",
            "ML-DSA-44",
        ),
    ] {
        let args = [
            "--kernel", kernel, "--alg", alg, "--op", "keygen", "--batch", "1",
        ];
        assert_eq!(
            gpu_run(None, &args).code,
            0,
            "{alg} {kernel} on the fiber stand-in"
        );
        let d = tempfile::tempdir().unwrap();
        let (lib, line) = mutant(d.path(), file, after, barrier);
        let GpuRun {
            code,
            stdout,
            stderr,
            ..
        } = gpu_run(Some(&lib), &args);
        let what = format!("{file}:{line} removed");
        assert_ne!(code, 0, "{what}: not caught\n{stdout}\n{stderr}");
        let failed = stderr
            .lines()
            .find(|l| l.contains("kernel failed: "))
            .unwrap_or_else(|| panic!("{what}: no failed launch\n{stderr}"));
        assert!(
            failed.contains("data race in kernel")
                || failed.contains("read of never-written shared memory"),
            "{what}: {failed}"
        );
        assert!(failed.contains("cuda/native/"), "{what}: {failed}");
    }
}
