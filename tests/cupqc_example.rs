//! Programs written the way NVIDIA's cuPQC examples are (our own code, in
//! tests/fixtures/cupqc-example/) compiled with nvcc `-dlto -rdc=true`:
//! against the stand-in SDK always (it declares NVIDIA's signatures: const
//! inputs, the context overloads, `BlockDim` as a dim3), and unchanged
//! against a real SDK when `CUPQC_HOME` points at one. And the shim's guard:
//! a throwing `make_workspace` gives `PQCPROF_CUPQC_E_WORKSPACE`, not an
//! abort. Needs nvcc (`scripts/find-nvcc`); without one each test says
//! SKIPPED, and fails instead when `PQCPROF_EXPECT_CUPQC=standin` (CI).

mod common;

#[allow(dead_code)]
#[path = "../build/nvcc.rs"]
mod nvcc;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Says, on stdout and on the real stderr, that `test` did not run.
fn skip(test: &str, why: &str) {
    println!("SKIPPED {test}: {why}");
    common::skipped(test, why);
}

/// nvcc in a form that can device-link with LTO (pip's needs an overlay).
fn nvcc_or_skip(test: &str, work: &Path) -> Option<PathBuf> {
    match nvcc::find(root()) {
        Ok(p) => Some(nvcc::usable(&p, &work.join("nvcc-overlay")).unwrap()),
        Err(why) if std::env::var("PQCPROF_EXPECT_CUPQC").as_deref() == Ok("standin") => {
            panic!("PQCPROF_EXPECT_CUPQC=standin but no nvcc: {why}")
        }
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{cmd:?} failed:\n{out}");
    out
}

const ARCH: &str = "sm_80";

/// nvcc as NVIDIA's example Makefile calls it, with a named architecture
/// (a build machine may have no GPU for `-arch=native`).
fn nvcc_cmd(nvcc: &Path, sdk: &Path) -> Command {
    let mut c = Command::new(nvcc);
    c.args(["-std=c++17", "-O1", "-dlto", "-rdc=true"])
        .arg(format!("-arch={ARCH}"))
        .arg("-I")
        .arg(sdk.join("include"))
        .arg("-I")
        .arg(sdk.join("include/cupqc"));
    c
}

/// The stand-in's two libraries, built with this nvcc into `dir`.
fn standin_libs(nvcc: &Path, dir: &Path) -> PathBuf {
    let sdk = root().join("tests/fixtures/cupqc-standin");
    let lib = dir.join("standin-lib");
    std::fs::create_dir_all(&lib).unwrap();
    for (name, src) in [("cupqc-pk", "pk.cu"), ("cupqc-hash", "hash.cu")] {
        let obj = lib.join(format!("{name}.o"));
        run(nvcc_cmd(nvcc, &sdk)
            .arg("-c")
            .arg(sdk.join("src").join(src))
            .arg("-o")
            .arg(&obj));
        run(Command::new(nvcc)
            .arg("-lib")
            .arg(&obj)
            .arg("-o")
            .arg(lib.join(format!("lib{name}.a"))));
    }
    lib
}

/// Compiles and links `program` against the SDK at `sdk` (libraries in
/// `lib`, linked as `libs`), then runs it: without a GPU it only says so.
fn build_and_run(
    nvcc: &Path,
    sdk: &Path,
    lib: &Path,
    libs: &[&str],
    program: &str,
    work: &Path,
) -> String {
    let exe = work.join(program.trim_end_matches(".cu"));
    let mut c = nvcc_cmd(nvcc, sdk);
    c.arg("-I")
        .arg(root().join("cuda/cupqc"))
        .arg(root().join("tests/fixtures/cupqc-example").join(program));
    if program == "workspace_failure.cu" {
        c.arg(root().join("cuda/cupqc/shim.cu"));
    }
    c.arg("-L").arg(lib);
    for l in libs {
        c.arg(format!("-l{l}"));
    }
    run(c.arg("-o").arg(&exe));
    run(Command::new(&exe).env("PQCPROF_CUPQC_STANDIN_WORKSPACE_FAILS", "1"))
}

/// `program` built against pqcprof's stand-in SDK (its two libraries, made
/// by `standin_libs`) and run; its output.
fn build_and_run_on_standin(nvcc: &Path, program: &str, work: &Path) -> String {
    let lib = standin_libs(nvcc, work);
    let sdk = root().join("tests/fixtures/cupqc-standin");
    build_and_run(nvcc, &sdk, &lib, &["cupqc-pk", "cupqc-hash"], program, work)
}

#[test]
fn the_example_style_program_builds_against_the_standin() {
    let test = "the_example_style_program_builds_against_the_standin";
    let work = tempfile::tempdir().unwrap();
    let Some(nvcc) = nvcc_or_skip(test, work.path()) else {
        return;
    };
    let out = build_and_run_on_standin(&nvcc, "roundtrip.cu", work.path());
    assert!(
        out.contains("compiled; no GPU to run on")
            || out.contains("ML-KEM-768 secrets match; ML-DSA-65 signatures verify"),
        "{out}"
    );
}

/// The libraries a real SDK at `sdk` links, by its layout.
fn real_sdk_libs(sdk: &Path) -> Vec<&'static str> {
    let has = |l: &str| sdk.join("lib").join(format!("lib{l}.a")).is_file();
    let candidates: &[&'static str] = if sdk.join("include/cupqc/pk.hpp").is_file() {
        &["cupqc-pk", "cupqc-hash", "cupqc-bigint", "cupqc-ntt"]
    } else {
        &["cupqc", "cuhash"]
    };
    candidates.iter().copied().filter(|l| has(l)).collect()
}

#[test]
#[ignore = "needs NVIDIA's cuPQC SDK, which pqcprof may not redistribute: CUPQC_HOME=<the SDK> cargo test --release --test cupqc_example -- --ignored"]
fn the_example_style_program_builds_unchanged_against_a_real_sdk() {
    let test = "the_example_style_program_builds_unchanged_against_a_real_sdk";
    let Some(home) = std::env::var_os("CUPQC_HOME").map(|h| root().join(h)) else {
        skip(
            test,
            "CUPQC_HOME is not set: no real cuPQC SDK to build against",
        );
        return;
    };
    let headers: Vec<PathBuf> = ["pk.hpp", "cupqc.hpp"]
        .iter()
        .map(|h| home.join("include/cupqc").join(h))
        .filter(|p| p.is_file())
        .collect();
    assert!(
        !headers.is_empty(),
        "CUPQC_HOME={} has no include/cupqc/pk.hpp or cupqc.hpp",
        home.display()
    );
    let standin = headers.iter().any(|h| {
        std::fs::read_to_string(h)
            .unwrap()
            .contains("PQCPROF_STANDIN")
    });
    if standin {
        skip(test, "CUPQC_HOME is pqcprof's stand-in, not NVIDIA's SDK");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let Some(nvcc) = nvcc_or_skip(test, work.path()) else {
        return;
    };
    // The program includes pk.hpp: SDKs before 0.4 name it cupqc.hpp.
    if !home.join("include/cupqc/pk.hpp").is_file() {
        skip(
            test,
            "this SDK predates pk.hpp (0.2/0.3 layout); the program is written for 0.4+",
        );
        return;
    }
    let libs = real_sdk_libs(&home);
    let out = build_and_run(
        &nvcc,
        &home,
        &home.join("lib"),
        &libs,
        "roundtrip.cu",
        work.path(),
    );
    assert!(
        out.contains("compiled; no GPU to run on")
            || out.contains("ML-KEM-768 secrets match; ML-DSA-65 signatures verify"),
        "{out}"
    );
}

#[test]
fn a_throwing_make_workspace_is_a_named_error_not_an_abort() {
    let test = "a_throwing_make_workspace_is_a_named_error_not_an_abort";
    let work = tempfile::tempdir().unwrap();
    let Some(nvcc) = nvcc_or_skip(test, work.path()) else {
        return;
    };
    let out = build_and_run_on_standin(&nvcc, "workspace_failure.cu", work.path());
    // PQCPROF_CUPQC_E_WORKSPACE is -4 (cuda/cupqc/shim.h); "out of memory"
    // is the CUDA runtime's text for cudaErrorMemoryAllocation.
    common::assert_has(
        &out,
        &["guard: status=-4 message=make_workspace: out of memory"],
    );
    if out.contains("prepare: no GPU") {
        common::hardware_skip(
            test,
            "no GPU: pqcprof_cupqc_prepare's own workspace path is not reached (the guard's was checked)",
        );
    } else {
        common::assert_has(
            &out,
            &["prepare: status=-4 batch=none message=make_workspace: out of memory"],
        );
    }
}
