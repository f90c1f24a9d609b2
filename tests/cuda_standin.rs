//! The `native-gpu` path end to end on the CPU stand-in CUDA driver
//! (tests/fixtures/cuda-standin/): the real kernels from cuda/native/,
//! compiled by NVRTC and loaded from the image NVRTC made, launched through
//! the unchanged cudarc path, checked by the real GPU gate. The stand-in is
//! not a GPU: these tests prove correctness and the launch path, never
//! speed, and check that pqcprof labels every such record `emulated`.
//!
//! Needs NVRTC (the kernels are compiled by it) and a C++ compiler. Without
//! NVRTC every test here says loudly that it did not run, and fails under
//! PQCPROF_REQUIRE_NVRTC=1 (as in CI).

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The run file `pqcprof` wrote into `out` (the newest).
fn run_file(out: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .collect();
    files.sort();
    files.pop().expect("a run file")
}

fn records(out: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(run_file(out)).unwrap()).unwrap();
    v["records"].as_array().unwrap().clone()
}

/// `pqcprof gpu --backend native-gpu` on the stand-in with `knobs`, then
/// `args`, into `out`: (exit code, stdout, stderr).
fn gpu(out: &Path, knobs: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut c = standin::pqcprof(knobs);
    c.args(["gpu", "--backend", "native-gpu", "--warmup", "0"])
        .args(args)
        .arg("--out")
        .arg(out);
    outcome(&mut c)
}

/// Every record is an ok, emulated GPU record on the stand-in, and nothing
/// reached the cuPQC-shaped files.
fn assert_all_ok_and_emulated(out: &Path, expect: usize, what: &str) {
    let recs = records(out);
    assert_eq!(recs.len(), expect, "{what}: {recs:#?}");
    for r in &recs {
        assert_eq!(r["status"], "ok", "{what}: {r:#}");
        assert_eq!(r["emulated"], true, "{what}: {r:#}");
        let name = r["device"]["name"].as_str().unwrap();
        common::assert_has(name, &["CPU stand-in", "not a GPU"]);
    }
    assert_no_cupqc_files(out);
}

/// `check --json` reports what the driver lists: its version and each
/// device's name, capability and memory, in order.
#[test]
fn check_reports_what_the_driver_lists() {
    let knobs = [("DEVICES", "2"), ("CC", "86"), ("MEMORY_MIB", "2048")];
    let (code, stdout, stderr) = outcome(standin::pqcprof(&knobs).args(["check", "--json"]));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let g = &v["gpu"];
    assert_eq!(g["driver"]["present"], true, "{g}");
    assert_eq!(g["driver"]["detail"], "CUDA driver API 13.0", "{g}");
    assert_eq!(g["driver_api_version"], 13000, "{g}");
    let gpus = g["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2, "{g}");
    for (i, d) in gpus.iter().enumerate() {
        assert_eq!(d["ordinal"], i, "{d}");
        assert_eq!(d["compute_capability"], serde_json::json!([8, 6]), "{d}");
        assert_eq!(d["memory_total_mb"], 2048, "{d}");
        assert!(
            d["name"]
                .as_str()
                .unwrap()
                .starts_with(&format!("pqcprof CPU stand-in {i} (emulated sm_86")),
            "{d}"
        );
    }
    assert!(g["emulation"].is_string(), "{g}");
}

/// No emulated record may look like a GPU measurement.
fn assert_no_cupqc_files(out: &Path) {
    for f in [
        "mlkem_results.json",
        "mldsa_results.json",
        "latency/mlkem_latency.json",
        "latency/mldsa_latency.json",
        "native-gpu",
    ] {
        assert!(
            !out.join(f).exists(),
            "{f} was written from emulated records"
        );
    }
}

#[test]
fn every_operation_passes_its_gate_at_batch_1_and_129() {
    if nvrtc_or_skip("every_operation_passes_its_gate_at_batch_1_and_129").is_none() {
        return;
    }
    // The default variant (the static cost's choice: one warp per ML-KEM
    // operation, one block per ML-DSA one), then the one-thread kernels
    // asked for by name. Each gate compares the outputs with the host
    // build's for the same inputs (signing: the same randomness), so every
    // variant's outputs are byte-identical to every other's.
    for (kernel, algs, expect) in [(None, "all", 18), (Some("thread"), "all", 18)] {
        for batch in ["1", "129"] {
            let d = tempfile::tempdir().unwrap();
            let mut args = vec!["--alg", algs, "--batch", batch, "--runs", "2"];
            if let Some(k) = kernel {
                args.extend(["--kernel", k]);
            }
            let (code, stdout, stderr) = gpu(d.path(), &[], &args);
            let what = format!("{kernel:?} batch {batch}");
            assert_eq!(code, 0, "{what}:\n{stdout}\n{stderr}");
            assert!(stdout.contains("CPU stand-in driver"), "{stdout}");
            assert_all_ok_and_emulated(d.path(), expect, &what);
            for r in records(d.path()) {
                let k = &r["kernel"];
                let kem = r["algorithm"].as_str().unwrap().starts_with("ML-KEM");
                let variant = kernel.unwrap_or(if kem { "warp" } else { "block" });
                assert_eq!(k["variant"], variant, "{what}: {k}");
                let name = k["name"].as_str().unwrap();
                assert_eq!(name.ends_with("_warp"), variant == "warp", "{what}: {k}");
                assert_eq!(name.ends_with("_block"), variant == "block", "{what}: {k}");
                if variant != "thread" {
                    let size = if variant == "warp" { 32 } else { 128 };
                    assert_eq!(k["threads_per_block"], size, "{k}");
                    // One block per operation; signing's blocks take
                    // messages from a queue, at most one per message.
                    if r["operation"] == "Sign" {
                        let b = k["blocks"].as_u64().unwrap();
                        assert!(b >= 1 && b <= r["batch"].as_u64().unwrap(), "{k}");
                    } else {
                        assert_eq!(k["blocks"], r["batch"], "{k}");
                    }
                    assert!(k["shared_bytes_per_block"].as_u64().unwrap() > 0, "{k}");
                }
            }
        }
    }
}

#[test]
fn a_variant_that_is_not_built_is_refused_by_name() {
    if nvrtc_or_skip("a_variant_that_is_not_built_is_refused_by_name").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--kernel",
        "warp",
        "--alg",
        "ML-DSA-44",
        "--op",
        "sign",
        "--batch",
        "1",
        "--runs",
        "1",
    ];
    let (code, stdout, stderr) = gpu(d.path(), &[], &args);
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    assert!(
        format!("{stdout}{stderr}")
            .contains("ML-DSA-44 sign has no warp kernel (built: thread, block)"),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn several_full_waves_of_a_small_device() {
    if nvrtc_or_skip("several_full_waves_of_a_small_device").is_none() {
        return;
    }
    // One multiprocessor holding 256 threads: a wave is at most two blocks
    // of 128, so 777 operations are three full waves and a partial one.
    // One warp per ML-KEM operation: 777 blocks of 32, eight resident at
    // once (256 threads), so many waves.
    // The sample: one parameter set of each family (each variant and
    // signing's queue are the same code at every level).
    let all = common::full(
        "several_full_waves_of_a_small_device",
        "ML-KEM-768/1024 and ML-DSA-65/87",
    );
    let algs: &[&str] = if all {
        &[]
    } else {
        &["--alg", "ML-KEM-512,ML-DSA-44"]
    };
    let n = if all { 18 } else { 6 };
    let d = tempfile::tempdir().unwrap();
    let knobs = [("SMS", "1"), ("THREADS_PER_SM", "256")];
    let args = [&["--batch", "777", "--runs", "1"][..], algs].concat();
    let (code, stdout, stderr) = gpu(d.path(), &knobs, &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_all_ok_and_emulated(d.path(), n, "batch 777");
    for r in records(d.path()) {
        let k = &r["kernel"];
        // Signing's threads take messages from a queue: its grid is what
        // the device holds at once (two blocks); the other one-thread
        // kernels one thread per operation.
        // One block of 128 per ML-DSA operation: two resident at once, and
        // signing's grid is those two.
        let (blocks, most) = match (k["variant"].as_str().unwrap(), r["operation"].as_str()) {
            ("warp", _) => (777, 8),
            (_, Some("Sign")) => (2, 2),
            ("block", _) => (777, 2),
            _ => (7, 2),
        };
        assert_eq!(k["blocks"], blocks, "{k}");
        assert!(k["resident_blocks_per_sm"].as_u64().unwrap() <= most, "{k}");
        assert!(
            k["waves"]["waves"].as_u64().unwrap() >= 3 || blocks == 2,
            "{k}"
        );
    }
    // The one-thread kernels at the same batch.
    let d = tempfile::tempdir().unwrap();
    let args = [
        &["--kernel", "thread", "--batch", "777", "--runs", "1"][..],
        algs,
    ]
    .concat();
    let (code, stdout, stderr) = gpu(d.path(), &knobs, &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_all_ok_and_emulated(d.path(), n, "thread batch 777");
    for r in records(d.path()) {
        let blocks = if r["operation"] == "Sign" { 2 } else { 7 };
        assert_eq!(r["kernel"]["blocks"], blocks, "{r:#}");
    }
}

#[test]
fn latency_mode_runs_single_operations() {
    if nvrtc_or_skip("latency_mode_runs_single_operations").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(d.path(), &[], &["--latency", "--runs", "3"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_all_ok_and_emulated(d.path(), 18, "latency");
    for r in records(d.path()) {
        assert_eq!(r["mode"], "latency");
        assert_eq!(r["batch"], 1);
        assert!(r["latency_p50_us"].as_f64().unwrap() > 0.0);
        // The floor: the empty kernel between the batch's events, and the
        // empty kernel's launch rate.
        let f = &r["floor"];
        assert!(f["seconds"].as_f64().unwrap() > 0.0, "{r:#}");
        assert!(f["launches_per_s"].as_f64().unwrap() > 0.0, "{r:#}");
        assert!(
            f["method"].as_str().unwrap().contains("empty kernel"),
            "{r:#}"
        );
        assert!(r["window_over_floor"].as_f64().unwrap() > 0.0, "{r:#}");
    }
    let run: Value = serde_json::from_slice(&std::fs::read(run_file(d.path())).unwrap()).unwrap();
    let floors = run["floor"].as_array().unwrap();
    assert_eq!(floors.len(), 1, "{floors:#?}");
    assert_eq!(floors[0]["backend"], "native-gpu");
    assert_eq!(floors[0]["records"], 18);
    assert!(floors[0]["launches_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn empty_message_and_longest_context_sign_and_verify() {
    if nvrtc_or_skip("empty_message_and_longest_context_sign_and_verify").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let ctx255 = "c3".repeat(255);
    let args = [
        "--alg",
        "mldsa",
        "--batch",
        "129",
        "--runs",
        "1",
        "--message-size",
        "0",
        "--context",
        &ctx255,
    ];
    let (code, stdout, stderr) = gpu(d.path(), &[], &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_all_ok_and_emulated(d.path(), 9, "message 0, context 255");
    // 256 bytes is refused before anything runs.
    let d = tempfile::tempdir().unwrap();
    let ctx256 = "c3".repeat(256);
    let (code, _, stderr) = gpu(d.path(), &[], &["--alg", "mldsa", "--context", &ctx256]);
    assert_ne!(code, 0);
    assert!(stderr.contains("256 bytes, at most 255"), "{stderr}");
}

/// Runs `pqcprof gpu` with one injected fault and checks the gate caught it
/// in `op` of `alg` (exit 3, the operation named, the record failed).
fn assert_fault_caught(knob: &str, kernel: &str, alg: &str, op: &str) {
    let d = tempfile::tempdir().unwrap();
    let variant = ["warp", "block"]
        .into_iter()
        .find(|v| kernel.ends_with(&format!("_{v}")))
        .unwrap_or("thread");
    let args = [
        "--alg", alg, "--op", op, "--batch", "129", "--runs", "1", "--kernel", variant,
    ];
    let (code, stdout, stderr) = gpu(d.path(), &[(knob, kernel)], &args);
    assert_eq!(code, 3, "{knob}={kernel}: {stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("{alg} {op}: Failed: correctness gate failed")),
        "{knob}={kernel}: {stderr}"
    );
    let recs = records(d.path());
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["status"], "failed");
    assert_eq!(recs[0]["emulated"], true);
}

#[test]
fn the_gate_catches_every_injected_fault() {
    if nvrtc_or_skip("the_gate_catches_every_injected_fault").is_none() {
        return;
    }
    for (kernel, alg, op) in [
        ("mlkem512_keygen", "ML-KEM-512", "keygen"),
        ("mlkem768_encaps", "ML-KEM-768", "encaps"),
        ("mlkem1024_decaps", "ML-KEM-1024", "decaps"),
        ("mldsa44_keygen", "ML-DSA-44", "keygen"),
        ("mldsa65_sign", "ML-DSA-65", "sign"),
        ("mldsa87_verify", "ML-DSA-87", "verify"),
        ("mlkem512_keygen_warp", "ML-KEM-512", "keygen"),
        ("mlkem768_encaps_warp", "ML-KEM-768", "encaps"),
        ("mlkem1024_decaps_warp", "ML-KEM-1024", "decaps"),
        ("mldsa44_keygen_block", "ML-DSA-44", "keygen"),
        ("mldsa65_sign_block", "ML-DSA-65", "sign"),
        ("mldsa87_verify_block", "ML-DSA-87", "verify"),
    ] {
        assert_fault_caught("CORRUPT", kernel, alg, op);
        if op != "sign" {
            assert_fault_caught("SKIP_LAST_BLOCK", kernel, alg, op);
        }
    }
    // Signing's threads (or blocks) take messages from one queue: when a
    // block never runs, the others sign its messages and every signature
    // is right.
    for variant in ["thread", "block"] {
        let d = tempfile::tempdir().unwrap();
        let args = [
            "--alg",
            "ML-DSA-65",
            "--op",
            "sign",
            "--batch",
            "300",
            "--runs",
            "1",
            "--kernel",
            variant,
        ];
        let skipped = if variant == "block" {
            "mldsa65_sign_block"
        } else {
            "mldsa65_sign"
        };
        let knobs = [("SKIP_LAST_BLOCK", skipped)];
        let (code, stdout, stderr) = gpu(d.path(), &knobs, &args);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        assert_all_ok_and_emulated(d.path(), 1, "sign with its last block skipped");
        let k = &records(d.path())[0]["kernel"];
        assert_eq!(k["name"], skipped, "{k}");
        assert!(k["blocks"].as_u64().unwrap() >= 2, "{k}");
    }
}

#[test]
fn ptx_fallback_and_no_memory_pools_pass() {
    if nvrtc_or_skip("ptx_fallback_and_no_memory_pools_pass").is_none() {
        return;
    }
    let args = [
        "--alg",
        "ML-KEM-768,ML-DSA-44",
        "--batch",
        "129",
        "--runs",
        "1",
    ];
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(d.path(), &[("REFUSE_CUBIN", "1")], &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("it compiled the PTX instead"), "{stderr}");
    assert_all_ok_and_emulated(d.path(), 6, "PTX fallback");
    for r in records(d.path()) {
        let image = r["kernel"]["image"].as_str().unwrap();
        assert!(image.starts_with("PTX from NVRTC"), "{image}");
    }
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(d.path(), &[("POOLS", "0")], &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("cuMemAllocAsync"), "{stderr}");
    assert_all_ok_and_emulated(d.path(), 6, "no memory pools");
}

#[test]
fn an_old_gpu_and_no_gpu_are_normal_states() {
    if nvrtc_or_skip("an_old_gpu_and_no_gpu_are_normal_states").is_none() {
        return;
    }
    // Compute capability 7.0: listed by `check`, skipped with the reason.
    let (code, stdout, stderr) = outcome(standin::pqcprof(&[("CC", "70")]).arg("check"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("compute capability 7.0"), "{stdout}");
    assert!(stdout.contains("(below 7.5: unsupported)"), "{stdout}");
    common::assert_has(&stdout, &["CPU STAND-IN DRIVER, NOT A GPU"]);
    let d = tempfile::tempdir().unwrap();
    let (code, _, stderr) = gpu(d.path(), &[("CC", "70")], &["--alg", "ML-KEM-512"]);
    // Nothing measured because no backend asked for is ready: exit 4.
    assert_eq!(code, 4, "{stderr}");
    common::assert_has(&stderr, &["no GPU of compute capability 7.5 or newer"]);
    for r in records(d.path()) {
        assert_eq!(r["status"], "skipped");
        assert_eq!(r["emulated"], true);
    }
    // A driver that finds no device: said plainly, nothing crashes.
    let (code, stdout, stderr) = outcome(standin::pqcprof(&[("DEVICES", "0")]).arg("check"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("GPUs          none"), "{stdout}");
    assert!(stdout.contains("finds no device"), "{stdout}");
    let d = tempfile::tempdir().unwrap();
    let (code, _, stderr) = gpu(d.path(), &[("DEVICES", "0")], &["--alg", "ML-KEM-512"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("the CUDA driver lists no GPU"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn too_little_memory_is_refused_and_the_batch_named_then_runs() {
    if nvrtc_or_skip("too_little_memory_is_refused_and_the_batch_named_then_runs").is_none() {
        return;
    }
    // Decaps and verify are the operations whose preparation peaks highest.
    for (alg, op) in [("ML-KEM-768", "decaps"), ("ML-DSA-44", "verify")] {
        let d = tempfile::tempdir().unwrap();
        let peak = d.path().join("peak.json");
        let peak_knob = peak.display().to_string();
        let knobs = [
            ("MEMORY_MIB", "40"),
            ("SMS", "1"),
            ("THREADS_PER_SM", "256"),
            ("PEAK_FILE", peak_knob.as_str()),
        ];
        let run = |batch: &str| {
            let args = ["--alg", alg, "--op", op, "--runs", "1", "--batch", batch];
            gpu(d.path(), &knobs, &args)
        };
        let (code, _, stderr) = run("1000000");
        assert_eq!(code, 3, "{stderr}");
        let fits: usize = stderr
            .split("at most ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no batch named: {stderr}"));
        assert!(fits > 100, "{alg} {op}: {stderr}");
        common::assert_has(&stderr, &[&format!("(use --batch {fits} or less)")]);
        // The batch it names really runs, and the device's peak stayed
        // within its memory.
        let (code, stdout, stderr) = run(&fits.to_string());
        assert_eq!(code, 0, "{alg} {op} --batch {fits}: {stdout}\n{stderr}");
        let p: Value = serde_json::from_slice(&std::fs::read(&peak).unwrap()).unwrap();
        let (used, total) = (
            p["peak_bytes"].as_u64().unwrap(),
            p["total_bytes"].as_u64().unwrap(),
        );
        assert!(used <= total, "{p}");
        // The estimate is honest, not wildly conservative: the batch named
        // uses at least half the device.
        assert!(used * 2 >= total, "{alg} {op}: peak {used} of {total}");
    }
}

/// The fixture's test kernels (coop_kernel.cu), for NVRTC.
fn test_kernels_source() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cuda-standin/coop_kernel.cu"),
    )
    .unwrap()
}

/// Runs the ignored test `name` of this binary in a child process whose
/// CUDA driver is the stand-in (the loader reads LD_LIBRARY_PATH only when
/// a process starts): (success, stdout + stderr).
fn in_child(name: &str) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LD_LIBRARY_PATH", standin::library_path())
        .env("PQCPROF_STANDIN_CHILD", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_cooperative_kernel_runs_as_on_a_gpu() {
    if nvrtc_or_skip("a_cooperative_kernel_runs_as_on_a_gpu").is_none() {
        return;
    }
    let (ok, text) = in_child("child_cooperative_kernel");
    assert!(ok, "{text}");
    common::assert_has(&text, &["cooperative kernel: 300 threads checked"]);
}

#[test]
#[ignore = "run by a_cooperative_kernel_runs_as_on_a_gpu in a child process on the stand-in"]
fn child_cooperative_kernel() {
    use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    assert!(std::env::var_os("PQCPROF_STANDIN_CHILD").is_some());
    assert!(pqcprof::probe::gpu::standin_driver().is_some());
    let ptx = cudarc::nvrtc::compile_ptx(test_kernels_source()).unwrap();
    let ctx = CudaContext::new(0).unwrap();
    let module = ctx.load_module(ptx).unwrap();
    let f = module.load_function("pqcprof_standin_coop_test").unwrap();
    let stream = ctx.default_stream();
    const N: u32 = 300;
    const B: u32 = 128;
    let input: Vec<u32> = (0..N).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let d_in = stream.clone_htod(&input).unwrap();
    let mut d_out = stream.alloc_zeros::<u32>(4 * N as usize).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (N.div_ceil(B), 1, 1),
        block_dim: (B, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = stream.launch_builder(&f);
    b.arg(&mut d_out).arg(&d_in).arg(&N);
    // SAFETY: (u32 *out, const u32 *in, u32 n), out 4n and in n elements.
    unsafe { b.launch(cfg) }.unwrap();
    let out = stream.clone_dtoh(&d_out).unwrap();
    let v = |i: u32| if i < N { input[i as usize] } else { 0 };
    for i in 0..N {
        let (blk, t) = (i / B, i % B);
        let base = blk * B;
        let total: u32 = (base..base + B).map(v).fold(0, u32::wrapping_add);
        let warp = base + t / 32 * 32;
        let next_lane = v(warp + (t % 32 + 1) % 32);
        let odd = (0..32)
            .filter(|l| v(warp + l) & 1 == 1)
            .fold(0u32, |m, l| m | 1 << l);
        let next = v(base + (t + 1) % B);
        let got = &out[4 * i as usize..4 * i as usize + 4];
        assert_eq!(got, [total, next_lane, odd, next], "thread {i}");
    }
    println!("cooperative kernel: {N} threads checked");
}

#[test]
fn faults_in_the_launch_path_are_caught_and_named() {
    if nvrtc_or_skip("faults_in_the_launch_path_are_caught_and_named").is_none() {
        return;
    }
    let (ok, text) = in_child("child_launch_faults");
    assert!(ok, "{text}");
    assert!(text.contains("differ from the host function's"), "{text}");
    assert!(text.contains("is not a live device allocation"), "{text}");
    common::assert_has(
        &text,
        &["out-of-bounds write in kernel pqcprof_standin_oob_test"],
    );
    common::assert_has(&text, &["0 bytes past the end of device allocation"]);
}

#[test]
#[ignore = "run by faults_in_the_launch_path_are_caught_and_named in a child process on the stand-in"]
fn child_launch_faults() {
    use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    assert!(std::env::var_os("PQCPROF_STANDIN_CHILD").is_some());
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // An image whose kernel takes other parameters than the host build's.
    let other =
        "extern \"C\" __global__ void pqcprof_standin_oob_test(unsigned int *out) { out[0] = 1; }";
    let module = ctx
        .load_module(cudarc::nvrtc::compile_ptx(other).unwrap())
        .unwrap();
    assert!(module.load_function("pqcprof_standin_oob_test").is_err());
    let module = ctx
        .load_module(cudarc::nvrtc::compile_ptx(test_kernels_source()).unwrap())
        .unwrap();
    let f = module.load_function("pqcprof_standin_oob_test").unwrap();
    // A pointer argument that is no device allocation.
    let n = 100u32;
    let bogus = 0x1000u64;
    let mut b = stream.launch_builder(&f);
    b.arg(&bogus).arg(&n);
    // SAFETY: the stand-in refuses the launch before running anything.
    assert!(unsafe { b.launch(cfg) }.is_err());
    // One element past the end: stopped at the guard page, named, and the
    // context's error is sticky, as on a GPU.
    let mut out = stream.alloc_zeros::<u32>(n as usize).unwrap();
    let mut b = stream.launch_builder(&f);
    b.arg(&mut out).arg(&n);
    // SAFETY: the kernel writes out of bounds on purpose; the stand-in's
    // guard page stops it.
    unsafe { b.launch(cfg) }.unwrap();
    let err = stream.synchronize().unwrap_err();
    println!("synchronize after the faulty kernel: {err:?}");
    assert!(format!("{err:?}").contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
}

#[test]
fn the_report_keeps_emulated_records_out_of_every_speed_claim() {
    if nvrtc_or_skip("the_report_keeps_emulated_records_out_of_every_speed_claim").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let gpu_dir = d.path().join("gpu");
    let (code, stdout, stderr) = gpu(
        &gpu_dir,
        &[],
        &[
            "--alg",
            "ML-KEM-512,ML-DSA-44",
            "--batch",
            "64",
            "--runs",
            "2",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let cpu = common::cpu_run(&d.path().join("cpu"), "1");
    let (code, md, stderr) = outcome(
        common::pqcprof()
            .arg("report")
            .arg(run_file(&gpu_dir))
            .arg(cpu)
            .args(["--format", "markdown", "-o", "-"]),
    );
    assert_eq!(code, 0, "{stderr}");
    let section = "## Correctness on the CPU stand-in driver (emulated, not a GPU)";
    let at = md
        .find(section)
        .unwrap_or_else(|| panic!("no emulated section:\n{md}"));
    // All six emulated records are listed there, each ok.
    let rows = md[at..].lines().filter(|l| l.starts_with("| ok |")).count();
    assert!(rows >= 6, "{}", &md[at..]);
    // Everything before it, findings, comparisons and tables, mentions the
    // stand-in only to say what it is, and never times it.
    for line in md[..at].lines().filter(|l| l.contains("stand-in")) {
        assert!(
            line.contains("not a GPU") || line.contains("correctness only"),
            "an unlabelled mention of the stand-in: {line}"
        );
        assert!(!line.starts_with('|'), "the stand-in in a table: {line}");
    }
    assert!(!md[..at].contains("native-gpu on"), "{}", &md[..at]);
    // `compare` times nothing of them either, and a gate that compared
    // nothing does not pass.
    let gpu_run = run_file(&gpu_dir);
    let (code, text, stderr) = outcome(
        common::pqcprof()
            .arg("compare")
            .args([&gpu_run, &gpu_run])
            .args(["--fail-above", "0"]),
    );
    assert_eq!(code, 3, "{text}\n{stderr}");
    assert!(stderr.contains("nothing was compared"), "{stderr}");
    common::assert_has(
        &text,
        &["12 record(s) made on pqcprof's CPU stand-in driver"],
    );
    assert!(!text.lines().any(|l| l.starts_with("native-gpu")), "{text}");
}

/// `--alg ML-KEM-512 --op keygen` and `more`.
fn kem512_keygen<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--alg", "ML-KEM-512", "--op", "keygen"];
    v.extend_from_slice(more);
    v
}

/// `config.per_backend` of the newest run file in `out`.
fn per_backend(out: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(run_file(out)).unwrap()).unwrap();
    v["config"]["per_backend"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_batch_sweep_runs_kernel_only_and_end_to_end_with_waves() {
    if nvrtc_or_skip("a_batch_sweep_runs_kernel_only_and_end_to_end_with_waves").is_none() {
        return;
    }
    // Two multiprocessors of 256 threads: two blocks of 128 each, so a
    // wave is 4 blocks (512 operations).
    let d = tempfile::tempdir().unwrap();
    let knobs = [("SMS", "2"), ("THREADS_PER_SM", "256")];
    // The one-thread kernels (the warp ones give a block to an operation).
    let args = kem512_keygen(&["--batch-sweep", "1k", "--runs", "2", "--kernel", "thread"]);
    let (code, stdout, stderr) = gpu(d.path(), &knobs, &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_all_ok_and_emulated(d.path(), 6, "sweep");
    let recs = records(d.path());
    let batches: Vec<u64> = recs.iter().map(|r| r["batch"].as_u64().unwrap()).collect();
    assert_eq!(batches, [1, 4, 16, 64, 256, 1000]);
    for r in &recs {
        let w = &r["kernel"]["waves"];
        assert_eq!(w["blocks_per_wave"], 4, "{r:#}");
        let blocks = r["kernel"]["blocks"].as_f64().unwrap();
        assert!((w["exact_waves"].as_f64().unwrap() - blocks / 4.0).abs() < 1e-9);
        // 1000 operations: 8 blocks, two whole waves.
        if r["batch"] == 1000 {
            assert_eq!(
                (w["waves"].as_u64(), w["last_wave_fill_pct"].as_f64()),
                (Some(2), Some(100.0))
            );
        }
        assert!(r["timed_window"]
            .as_str()
            .unwrap()
            .starts_with("kernel only"));
        let e2e = &r["end_to_end"];
        assert_eq!(e2e["run_seconds"].as_array().unwrap().len(), 2, "{e2e}");
        assert!(e2e["ops_per_sec"].as_f64().unwrap() > 0.0, "{e2e}");
        assert!(e2e["timed_window"]
            .as_str()
            .unwrap()
            .contains("pinned host memory"));
        assert!(r["batch_ms"].as_f64().unwrap() > 0.0);
    }
    let pb = per_backend(d.path());
    assert_eq!(pb.len(), 1, "{pb:?}");
    assert_eq!(pb[0]["backend"], "native-gpu");
    assert!(pb[0]["batches"]
        .as_str()
        .unwrap()
        .contains("sweep: powers of 4 from 1 to 1000"));
    assert_eq!(pb[0]["sample_period_ms"], 1.0);
    // Emulated curves make no speed claim: no saturation or break-even.
    let html = d.path().join("r.html");
    let report = common::pqcprof()
        .arg("report")
        .arg(run_file(d.path()))
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(report.status.success());
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(!html.contains("id=\"t-scaling\"") && !html.contains("break-even batch"));

    // Without --batch, the default is calibrated: one launch of a whole
    // wave (512 operations here), then whole waves within the launch time
    // aimed at, never less than one wave.
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(
        d.path(),
        &knobs,
        &kem512_keygen(&["--runs", "1", "--kernel", "thread"]),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = &records(d.path())[0];
    let b = r["batch"].as_u64().unwrap();
    assert!(b >= 512 && b % 512 == 0, "{r:#}");
    assert_eq!(r["kernel"]["waves"]["last_wave_fill_pct"], 100.0);
    let basis = &r["batch_basis"];
    assert_eq!(basis["method"], "calibrated", "{r:#}");
    assert_eq!(basis["calibration_batch"], 512, "{r:#}");
    assert_eq!(basis["ops_per_wave"], 512, "{r:#}");
    let wave_s = basis["calibration_seconds"].as_f64().unwrap();
    // The waves chosen fit the 100 ms target, or are the one-wave floor.
    assert!(b == 512 || (b / 512) as f64 * wave_s <= 0.1 + 1e-9, "{r:#}");

    // A sweep top that does not fit: a usage error (exit 2) naming what
    // fits, and nothing measured.
    let d = tempfile::tempdir().unwrap();
    let small = [
        ("SMS", "2"),
        ("THREADS_PER_SM", "256"),
        ("MEMORY_MIB", "64"),
    ];
    let (code, _, stderr) = gpu(d.path(), &small, &kem512_keygen(&["--batch-sweep", "50M"]));
    assert_eq!(code, 2, "{stderr}");
    common::assert_has(&stderr, &["invalid --batch-sweep 50000000: the top batch does not fit: ML-KEM-512 keygen on native-gpu", "fits at most"]);
}

#[test]
fn the_gate_reads_every_output_back_after_every_run_and_the_samples_inputs() {
    if nvrtc_or_skip("the_gate_reads_every_output_back_after_every_run_and_the_samples_inputs")
        .is_none()
    {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("copies.txt");
    let knobs = [("COPY_LOG", log.to_str().unwrap())];
    let args = kem512_keygen(&["--batch", "1000", "--runs", "3"]);
    let (code, stdout, stderr) = gpu(&d.path().join("out"), &knobs, &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let sizes: Vec<usize> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.strip_prefix("dtoh ").unwrap().parse().unwrap())
        .collect();
    let count = |n: usize| sizes.iter().filter(|s| **s == n).count();
    // ML-KEM-512: 800-byte public keys, 1632-byte secret keys, each read
    // back whole by the gate after every run it checks (the warm-up's, 3
    // timed, 3 end-to-end and the last) and by each end-to-end run (3).
    assert_eq!(count(800 * 1000), 8 + 3, "{sizes:?}");
    assert_eq!(count(1632 * 1000), 8 + 3, "{sizes:?}");
    // The inputs d and z: whole when the batch is made and around the
    // timed runs (3 times each), and the sample's 8 slots (the ends and 6
    // drawn) after each of the 6 runs between.
    assert_eq!(count(32 * 1000), 2 * 3, "{sizes:?}");
    assert_eq!(count(32), 2 * 6 * 8, "{sizes:?}");

    // Latency records name how they were timed.
    let d = tempfile::tempdir().unwrap();
    let args = kem512_keygen(&["--latency", "--runs", "3"]);
    let (code, stdout, stderr) = gpu(d.path(), &[], &args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = &records(d.path())[0];
    assert!(
        r["latency_method"]
            .as_str()
            .unwrap()
            .contains("pqcprof_hold"),
        "{r:#}"
    );
}

/// `args` (a latency run of 3) on the default stand-in: an ok record whose
/// hold was timed in every run and whose `run_seconds` are the covered
/// runs; the record.
fn covered_latency(args: &[&str]) -> Value {
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(d.path(), &[], args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = records(d.path()).remove(0);
    assert_eq!(r["status"], "ok", "{r:#}");
    let h = &r["hold"];
    assert_eq!(h["requested_ms"], 0.5, "{r:#}");
    assert_eq!(h["measured_ms"].as_array().unwrap().len(), 3, "{r:#}");
    let covered = h["covered_runs"].as_u64().unwrap();
    assert_eq!(covered + h["uncovered_runs"].as_u64().unwrap(), 3, "{r:#}");
    assert_eq!(r["run_seconds"].as_array().unwrap().len() as u64, covered);
    r
}

/// `args` (a latency run of 3) with the stand-in's hold ignored: exit 3, a
/// failed record whose reason names the hold in all 3 runs; (the record,
/// stderr).
fn refused_latency(args: &[&str]) -> (Value, String) {
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(d.path(), &[("HOLD", "ignore")], args);
    assert_eq!(code, 3, "refused is failed: {stdout}\n{stderr}");
    let r = records(d.path()).remove(0);
    assert_eq!(r["status"], "failed", "{r:#}");
    let why = r["reason"].as_str().unwrap();
    assert!(
        why.starts_with("latency refused: the 0.5 ms device-side hold")
            && why.contains("in 3 of 3 timed runs"),
        "{why}"
    );
    assert!(r.get("latency_p50_us").is_none(), "{r:#}");
    assert!(r.get("latency_us").is_none(), "{r:#}");
    assert_eq!(r["hold"]["uncovered_runs"], 3, "{r:#}");
    (r, stderr)
}

/// The hold before every latency window: the stand-in waits as asked, so
/// it outlasts the host's queueing and the run file says so, with its
/// length; with the stand-in's hold ignored (and a host slower than the
/// device) no window is covered, and the latency is refused, not reported.
#[test]
fn a_latency_whose_hold_ended_before_the_kernel_was_queued_is_refused() {
    if nvrtc_or_skip("a_latency_whose_hold_ended_before_the_kernel_was_queued_is_refused").is_none()
    {
        return;
    }
    let args = kem512_keygen(&["--latency", "--runs", "3"]);
    let r = covered_latency(&args);
    // Covered in every run on an idle machine; a loaded one may stall the
    // host past the hold now and then, and those runs are dropped.
    let h = &r["hold"];
    assert!(h["covered_runs"].as_u64().unwrap() >= 1, "{r:#}");
    for m in h["measured_ms"].as_array().unwrap() {
        assert!(m.as_f64().unwrap() >= 0.5, "{r:#}");
    }
    assert!(h["measured_ms_median"].as_f64().unwrap() >= 0.5);

    let (r, stderr) = refused_latency(&args);
    let why = r["reason"].as_str().unwrap();
    assert!(stderr.contains(why), "the command says why: {stderr}");
    let dropped = r["hold"]["dropped_run_seconds"].as_array().unwrap();
    assert_eq!(dropped.len(), 3, "{r:#}");
}

/// `--fresh-process --latency`: each child times one cold run and records
/// its hold; the parent keeps the covered ones over all its children and
/// refuses the latency when none was.
#[test]
fn a_fresh_process_latency_judges_the_hold_over_all_its_children() {
    if nvrtc_or_skip("a_fresh_process_latency_judges_the_hold_over_all_its_children").is_none() {
        return;
    }
    let args = kem512_keygen(&["--latency", "--runs", "3", "--fresh-process"]);
    covered_latency(&args);
    refused_latency(&args);
}

/// The timed windows of a kernel in a stand-in call log: each from a
/// launch of the hold followed by its start event to the line before the
/// next launch of the hold (or the log's end), less the event queued right
/// before that next hold (the one its length is measured from), holding a
/// launch of a kernel other than the hold; as (index of the hold's line,
/// the lines after it). Windows of nothing but the hold (the floor) are
/// left out.
fn windows(log: &[String]) -> Vec<(usize, &[String])> {
    let holds: Vec<usize> = (0..log.len())
        .filter(|&i| log[i] == "launch pqcprof_hold")
        .chain([log.len()])
        .collect();
    holds
        .windows(2)
        .map(|p| {
            let end = match p[1] < log.len() && log[p[1] - 1] == "event" {
                true => p[1] - 1,
                false => p[1],
            };
            (p[0], &log[p[0] + 1..end.max(p[0] + 1)])
        })
        .filter(|(_, seg)| {
            seg.first().is_some_and(|l| l == "event")
                && seg
                    .iter()
                    .any(|l| l.starts_with("launch ") && l != "launch pqcprof_hold")
        })
        .collect()
}

#[test]
fn cache_cold_flushes_l2_before_each_timed_run_outside_its_window() {
    if nvrtc_or_skip("cache_cold_flushes_l2_before_each_timed_run_outside_its_window").is_none() {
        return;
    }
    // The stand-in reports a 1 MiB L2: the flush writes 2 MiB.
    let flush = "memset 2097152";
    for cache in ["cold", "warm"] {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("calls.log");
        let (code, stdout, stderr) = gpu(
            d.path(),
            &[("CALL_LOG", log.to_str().unwrap())],
            &[
                "--alg",
                "ML-KEM-512",
                "--op",
                "keygen",
                "--batch",
                "32",
                "--runs",
                "3",
                "--cache",
                cache,
            ],
        );
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        assert_all_ok_and_emulated(d.path(), 1, cache);
        assert_eq!(records(d.path())[0]["cache"], cache);
        let lines: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let w = windows(&lines);
        // The warm-up, 3 kernel-only runs and 3 end-to-end runs.
        assert_eq!(w.len(), 7, "{cache}: {lines:#?}");
        for (i, seg) in w {
            // Cold: the flush is queued right before the hold (and the
            // event its length is measured from), so before the window's
            // start event; warm: no flush at all.
            assert_eq!(lines[i - 1], "event", "{cache}: line {i}: {lines:#?}");
            let flushed = i > 1 && lines[i - 2] == flush;
            assert_eq!(
                flushed,
                cache == "cold",
                "{cache}: hold at line {i}: {lines:#?}"
            );
            // After this window's end event come the next run's poison (a
            // memset of each output, the gate's) and, cold, its flush;
            // nothing is written inside the window.
            let end = seg
                .iter()
                .rposition(|l| l == "event")
                .unwrap_or_else(|| panic!("{cache}: line {i}: {seg:#?}"));
            assert!(
                seg[end + 1..].iter().all(|l| l.starts_with("memset")),
                "{cache}: line {i}: {seg:#?}"
            );
            assert!(
                !seg[..end].iter().any(|l| l.starts_with("memset")),
                "{cache}: line {i}: {seg:#?}"
            );
        }
        if cache == "warm" {
            assert!(!lines.iter().any(|l| l == flush), "{lines:#?}");
        }
    }
}
