//! What the CPU stand-in CUDA driver (tests/fixtures/cuda-standin/) refuses
//! or reports because a GPU would refuse it, hang on it or silently corrupt
//! memory: shared memory beyond a block's limit, a divergent
//! `__syncthreads`, more threads than `__launch_bounds__` allows, and stores
//! just outside a shared array or a device allocation. Each bug is injected
//! into a small test kernel (check_kernels.cu) and the launch must fail with
//! a logged message naming the kernel; dynamic shared memory, and
//! cuFuncSetAttribute raising its limit, must work.
//!
//! Needs NVRTC (the kernels are compiled by it) and a C++ compiler, like
//! tests/cuda_standin.rs.

mod common;

use common::{nvrtc_or_skip, standin};
use cudarc::driver::sys::CUfunction_attribute_enum::{
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::path::Path;
use std::sync::Arc;

/// The stand-in's default device (sm_90): a block may opt in to this much
/// shared memory.
const OPTIN: u32 = 232_448;
/// Static shared memory of pqcprof_standin_check_test (`st[64]`).
const STATIC: u32 = 256;
const N: u32 = 300;
const B: u32 = 128;
const KERNEL: &str = "pqcprof_standin_check_test";

/// Runs the ignored test `name` of this binary in a child process whose
/// CUDA driver is the stand-in, with `env` set: (success, stdout + stderr).
fn in_child(name: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("LD_LIBRARY_PATH", standin::library_path())
    .env("PQCPROF_STANDIN_CHILD", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    standin::run_for_text(&mut c)
}

/// The check kernels, compiled by NVRTC and loaded on the stand-in.
fn load(name: &str) -> (Arc<CudaStream>, CudaFunction) {
    assert!(std::env::var_os("PQCPROF_STANDIN_CHILD").is_some());
    assert!(pqcprof::probe::gpu::standin_driver().is_some());
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cuda-standin/check_kernels.cu"),
    )
    .unwrap();
    let ctx = CudaContext::new(0).unwrap();
    let module = ctx
        .load_module(cudarc::nvrtc::compile_ptx(src).unwrap())
        .unwrap();
    let f = module.load_function(name).unwrap();
    (ctx.default_stream(), f)
}

fn cfg(threads: u32, blocks: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// Launches pqcprof_standin_check_test over N outputs with `words` u32 of
/// dynamic shared memory and bug `bug`: the launch's own result, and the
/// output (None when the launch or the copy failed).
fn launch_check(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    words: u32,
    bug: u32,
) -> (Result<(), String>, Option<Vec<u32>>) {
    let mut out = stream.alloc_zeros::<u32>(N as usize).unwrap();
    let mut b = stream.launch_builder(f);
    b.arg(&mut out).arg(&N).arg(&words).arg(&bug);
    // SAFETY: (u32 *out, u32 n, u32 words, u32 bug), out of n elements,
    // `words` u32 of dynamic shared memory; a bug is caught by the stand-in.
    let launched = unsafe { b.launch(cfg(B, N.div_ceil(B), 4 * words)) };
    if let Err(e) = launched {
        return (Err(format!("{e:?}")), None);
    }
    match stream.clone_dtoh(&out) {
        Ok(v) => (Ok(()), Some(v)),
        Err(e) => (Err(format!("{e:?}")), None),
    }
}

/// What pqcprof_standin_check_test computes without a bug.
fn expected(words: u32) -> Vec<u32> {
    (0..N)
        .map(|i| {
            let (blk, t) = (i / B, i % B);
            let k = (words - 1 - t) % words;
            (3 * k + blk) + ((t + 1) % 64 + blk)
        })
        .collect()
}

#[test]
fn dynamic_shared_memory_works_and_its_limit_can_be_raised() {
    if nvrtc_or_skip("dynamic_shared_memory_works_and_its_limit_can_be_raised").is_none() {
        return;
    }
    let (ok, text) = in_child("child_dynamic_shared", &[]);
    assert!(ok, "{text}");
    assert!(text.contains("dynamic shared memory: checked"), "{text}");
    // Beyond 48 KiB without the attribute: refused, the kernel named.
    assert!(
        text.contains(&format!(
            "cuLaunchKernel {KERNEL}: 65536 bytes of dynamic shared memory with 256 static exceed the kernel's limit of 48896"
        )),
        "{text}"
    );
    // The attribute itself stops at the device's opt-in maximum.
    common::assert_has(
        &text,
        &[&format!("cuFuncSetAttribute {KERNEL}: 232193 bytes")],
    );
}

#[test]
#[ignore = "run by dynamic_shared_memory_works_and_its_limit_can_be_raised in a child process on the stand-in"]
fn child_dynamic_shared() {
    let (stream, f) = load(KERNEL);
    assert_eq!(f.shared_size_bytes().unwrap(), STATIC as i32);
    assert_eq!(
        f.get_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
            .unwrap(),
        (49152 - STATIC) as i32
    );
    // A little dynamic shared memory, under the default limit.
    let (r, out) = launch_check(&stream, &f, 100, 0);
    r.unwrap();
    assert_eq!(out.unwrap(), expected(100));
    // 64 KiB: refused until the kernel opts in, then right.
    let words = 16_384;
    let (r, _) = launch_check(&stream, &f, words, 0);
    assert!(r.unwrap_err().contains("CUDA_ERROR_INVALID_VALUE"));
    f.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65_536)
        .unwrap();
    assert_eq!(
        f.get_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
            .unwrap(),
        65_536
    );
    let (r, out) = launch_check(&stream, &f, words, 0);
    r.unwrap();
    assert_eq!(out.unwrap(), expected(words));
    // No further than the opt-in maximum less the static shared memory.
    assert!(f
        .set_attribute(
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            (OPTIN - STATIC + 1) as i32
        )
        .is_err());
    f.set_attribute(
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (OPTIN - STATIC) as i32,
    )
    .unwrap();
    let (r, out) = launch_check(&stream, &f, (OPTIN - STATIC) / 4, 0);
    r.unwrap();
    assert_eq!(out.unwrap(), expected((OPTIN - STATIC) / 4));
    // Occupancy counts static + dynamic + the 1 KiB reserved per block
    // against 228 KiB per multiprocessor, and no block fits beyond the
    // opt-in maximum.
    let occ = |smem: u32| {
        f.occupancy_max_active_blocks_per_multiprocessor(B, smem as usize, None)
            .unwrap()
    };
    assert_eq!(occ(0), 16); // 2048 threads per SM / 128
    assert_eq!(occ(65_536), 233_472 / (65_536 + STATIC + 1024));
    assert_eq!(occ(OPTIN - STATIC), 1);
    assert_eq!(occ(OPTIN - STATIC + 4), 0);
    println!("dynamic shared memory: checked");
}

#[test]
fn shared_memory_beyond_a_blocks_limit_is_refused_by_name() {
    if nvrtc_or_skip("shared_memory_beyond_a_blocks_limit_is_refused_by_name").is_none() {
        return;
    }
    let (ok, text) = in_child("child_shared_over_limit", &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains(
            "cuLaunchKernel pqcprof_standin_big_shared_test: 49156 bytes of static shared memory per block (at most 49152)"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "cuLaunchKernel {KERNEL}: 232196 bytes of dynamic shared memory with 256 static exceed the kernel's limit of 232192"
        )),
        "{text}"
    );
}

#[test]
#[ignore = "run by shared_memory_beyond_a_blocks_limit_is_refused_by_name in a child process on the stand-in"]
fn child_shared_over_limit() {
    // Static: 4 bytes more than 48 KiB.
    let (stream, big) = load("pqcprof_standin_big_shared_test");
    assert_eq!(big.shared_size_bytes().unwrap(), 49_156);
    let mut out = stream.alloc_zeros::<u32>(64).unwrap();
    let mut b = stream.launch_builder(&big);
    b.arg(&mut out);
    // SAFETY: (u32 *out) of 64 elements; the stand-in refuses the launch.
    let e = unsafe { b.launch(cfg(64, 1, 0)) }.unwrap_err();
    assert!(
        format!("{e:?}").contains("CUDA_ERROR_INVALID_VALUE"),
        "{e:?}"
    );
    // Dynamic: one u32 beyond the opt-in maximum, after opting in to it all.
    let (stream, f) = load(KERNEL);
    f.set_attribute(
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (OPTIN - STATIC) as i32,
    )
    .unwrap();
    let (r, _) = launch_check(&stream, &f, (OPTIN - STATIC) / 4 + 1, 0);
    assert!(r.unwrap_err().contains("CUDA_ERROR_INVALID_VALUE"));
    // Refusals are not faults: the context still works.
    let (r, out) = launch_check(&stream, &f, 100, 0);
    r.unwrap();
    assert_eq!(out.unwrap(), expected(100));
}

#[test]
fn more_threads_than_launch_bounds_are_refused_by_name() {
    if nvrtc_or_skip("more_threads_than_launch_bounds_are_refused_by_name").is_none() {
        return;
    }
    let (ok, text) = in_child("child_launch_bounds", &[]);
    assert!(ok, "{text}");
    common::assert_has(&text, &["cuLaunchKernel pqcprof_standin_bounds_test: grid (1,1,1) block (128,1,1) is invalid (at most 64 threads per block)"]);
}

#[test]
#[ignore = "run by more_threads_than_launch_bounds_are_refused_by_name in a child process on the stand-in"]
fn child_launch_bounds() {
    let (stream, f) = load("pqcprof_standin_bounds_test");
    assert_eq!(
        f.get_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .unwrap(),
        64
    );
    let mut out = stream.alloc_zeros::<u32>(128).unwrap();
    let mut b = stream.launch_builder(&f);
    b.arg(&mut out);
    // SAFETY: (u32 *out), out of 128 elements; refused before it runs.
    let e = unsafe { b.launch(cfg(128, 1, 0)) }.unwrap_err();
    assert!(
        format!("{e:?}").contains("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
        "{e:?}"
    );
    let mut b = stream.launch_builder(&f);
    b.arg(&mut out);
    // SAFETY: as above, two blocks of 64 threads.
    unsafe { b.launch(cfg(64, 2, 0)) }.unwrap();
    assert_eq!(
        stream.clone_dtoh(&out).unwrap(),
        (0..128).collect::<Vec<u32>>()
    );
}

/// Injects bug `bug` of pqcprof_standin_check_test: the launch must fail
/// with `code`, sticky, and the log must say each of `says`.
fn assert_bug_caught(bug: u32, code: &str, says: &[&str]) {
    let (ok, text) = in_child(
        "child_injected_bug",
        &[
            ("PQCPROF_CHECK_BUG", &bug.to_string()),
            ("PQCPROF_CHECK_CODE", code),
        ],
    );
    assert!(ok, "bug {bug}: {text}");
    assert!(
        text.contains("the injected bug was caught"),
        "bug {bug}: {text}"
    );
    for s in says {
        assert!(text.contains(s), "bug {bug}: no {s:?} in\n{text}");
    }
}

#[test]
fn a_store_past_the_end_of_dynamic_shared_memory_fails_the_launch() {
    if nvrtc_or_skip("a_store_past_the_end_of_dynamic_shared_memory_fails_the_launch").is_none() {
        return;
    }
    assert_bug_caught(
        1,
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        &[
            "kernel failed: out-of-bounds shared memory write in kernel pqcprof_standin_check_test, block 0",
            "a store 0 bytes past the end of its dynamic shared memory (400 bytes)",
        ],
    );
}

#[test]
fn a_store_past_the_end_of_a_shared_array_fails_the_launch() {
    if nvrtc_or_skip("a_store_past_the_end_of_a_shared_array_fails_the_launch").is_none() {
        return;
    }
    assert_bug_caught(
        4,
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        &[
            "kernel failed: out-of-bounds shared memory write in kernel pqcprof_standin_check_test, block 0",
            "a store 0 bytes past the end of the __shared__ variable declared at",
            "check_kernels.cu:",
        ],
    );
}

#[test]
fn a_divergent_syncthreads_fails_the_launch() {
    if nvrtc_or_skip("a_divergent_syncthreads_fails_the_launch").is_none() {
        return;
    }
    // `if (threadIdx.x < 16) __syncthreads();`
    assert_bug_caught(
        2,
        "CUDA_ERROR_LAUNCH_FAILED",
        &["kernel failed: divergent __syncthreads in kernel pqcprof_standin_check_test, block 0: thread 16 exited while 16 of the block's 128 threads"],
    );
    // The block's last thread returns before the barrier.
    assert_bug_caught(
        3,
        "CUDA_ERROR_LAUNCH_FAILED",
        &["kernel failed: divergent __syncthreads in kernel pqcprof_standin_check_test, block 0: thread 127 exited while 127 of the block's 128 threads"],
    );
    // `if (t < 16) __syncthreads(); else __syncthreads();`: every thread
    // arrives, but at two different barriers.
    assert_bug_caught(
        7,
        "CUDA_ERROR_LAUNCH_FAILED",
        &[
            "kernel failed: divergent __syncthreads in kernel pqcprof_standin_check_test, block 0: threads wait at different __syncthreads (thread 0 at ",
            "check_kernels.cu:",
            ", thread 16 at ",
        ],
    );
}

#[test]
fn a_store_just_outside_a_device_allocation_fails_the_launch() {
    if nvrtc_or_skip("a_store_just_outside_a_device_allocation_fails_the_launch").is_none() {
        return;
    }
    // out[n] of n = 300 u32: inside the allocation's last 256-byte unit,
    // before its guard page, so only the guard bytes see it.
    assert_bug_caught(
        5,
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        &["kernel failed: out-of-bounds write in kernel pqcprof_standin_check_test (found in the guard bytes after the launch): at offset 1200 (0 bytes past the end of device allocation"],
    );
    // out[-1].
    assert_bug_caught(
        6,
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        &["kernel failed: out-of-bounds write in kernel pqcprof_standin_check_test (found in the guard bytes after the launch): at offset -4 (4 bytes before the start of device allocation"],
    );
}

#[test]
#[ignore = "run by the tests above in a child process on the stand-in"]
fn child_injected_bug() {
    let bug: u32 = std::env::var("PQCPROF_CHECK_BUG").unwrap().parse().unwrap();
    let code = std::env::var("PQCPROF_CHECK_CODE").unwrap();
    let (stream, f) = load(KERNEL);
    // The same launch without the bug is right.
    let (r, out) = launch_check(&stream, &f, 100, 0);
    r.unwrap();
    assert_eq!(out.unwrap(), expected(100));
    // With it: the launch is queued, then the queue fails, sticky.
    let mut out = stream.alloc_zeros::<u32>(N as usize).unwrap();
    let words = 100u32;
    let mut b = stream.launch_builder(&f);
    b.arg(&mut out).arg(&N).arg(&words).arg(&bug);
    // SAFETY: as in launch_check; the stand-in catches the injected bug.
    unsafe { b.launch(cfg(B, N.div_ceil(B), 4 * words)) }.unwrap();
    let e = stream.synchronize().unwrap_err();
    assert!(format!("{e:?}").contains(&code), "{e:?}");
    let mut b = stream.launch_builder(&f);
    let none = 0u32;
    b.arg(&mut out).arg(&N).arg(&words).arg(&none);
    // SAFETY: as above, without the bug; refused, the context being broken.
    let again = unsafe { b.launch(cfg(B, N.div_ceil(B), 4 * words)) }.unwrap_err();
    assert!(format!("{again:?}").contains(&code), "{again:?}");
    println!("the injected bug was caught: {e:?}");
}

/// Each stream is a queue of its own on the stand-in: work on two streams
/// overlaps, so a copy on one stream of what another is still computing,
/// with no event between them, gets wrong bytes; with the wait (or with
/// cudarc's own event tracking, which pqcprof relies on) the right ones.
#[test]
fn two_streams_overlap_and_a_missing_wait_gives_wrong_bytes() {
    if nvrtc_or_skip("two_streams_overlap_and_a_missing_wait_gives_wrong_bytes").is_none() {
        return;
    }
    // Each launch takes 384 x 1 ms after writing its outputs: long enough
    // that the other stream's copy is queued inside it even when other
    // processes hold the cores for tens of milliseconds.
    let (ok, text) = in_child(
        "child_two_streams",
        &[("PQCPROF_STANDIN_NS_PER_OP", "1000000")],
    );
    assert!(ok, "{text}");
    common::assert_has(
        &text,
        &[
            "cudarc tracking, no wait: right bytes",
            "no tracking, no wait: wrong bytes",
            "no tracking, a wait: right bytes",
        ],
    );
}

#[test]
#[ignore = "run by two_streams_overlap_and_a_missing_wait_gives_wrong_bytes in a child process on the stand-in"]
fn child_two_streams() {
    let (default, f) = load(KERNEL);
    let ctx = default.context().clone();
    let words = 64;
    for (case, wait) in [
        ("cudarc tracking, no wait", false),
        ("no tracking, no wait", false),
        ("no tracking, a wait", true),
    ] {
        if case.starts_with("no tracking") {
            // SAFETY: the streams below are ordered by the test itself, or
            // on purpose not at all; every slice is freed after both
            // streams are done with it.
            unsafe { ctx.disable_event_tracking() };
        }
        let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
        let mut first = a.alloc_zeros::<u32>(N as usize).unwrap();
        let mut out = a.alloc_zeros::<u32>(N as usize).unwrap();
        a.synchronize().unwrap();
        // On a: a slow launch, then the one whose outputs b copies back.
        for buf in [&mut first, &mut out] {
            let mut l = a.launch_builder(&f);
            l.arg(buf).arg(&N).arg(&words).arg(&0u32);
            // SAFETY: (u32 *out, u32 n, u32 words, u32 bug) as in launch_check.
            unsafe { l.launch(cfg(B, N.div_ceil(B), 4 * words)) }.unwrap();
        }
        if wait {
            b.wait(&a.record_event(None).unwrap()).unwrap();
        }
        let got = b.clone_dtoh(&out).unwrap();
        let verdict = if got == expected(words) {
            "right bytes"
        } else {
            "wrong bytes"
        };
        println!("{case}: {verdict}");
        a.synchronize().unwrap();
        b.synchronize().unwrap();
    }
}
