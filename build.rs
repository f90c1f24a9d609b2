//! Build script: records the git commit and rustc version for run files,
//! and compiles our FIPS 203/204 sources (cuda/native, shared with the GPU
//! kernels) for the host so tests can prove them against liboqs, OpenSSL and
//! RustCrypto. The optional cuPQC backend's build lives in build/cupqc.rs,
//! the second, stateful-only liboqs build (XMSS, LMS) in build/stfl.rs.

use std::process::Command;

#[path = "build/cupqc.rs"]
mod cupqc;
#[path = "build/nvcc.rs"]
mod nvcc;
#[path = "build/stfl.rs"]
mod stfl;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit =
        output("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // --no-optional-locks: `git status` would otherwise rewrite .git/index
    // when it refreshes stat data (always, on a fresh clone), and .git/index
    // is watched below: the next cargo command would rebuild the crate.
    let dirty = output(
        "git",
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )
    .map(|s| !s.is_empty())
    .unwrap_or(false);
    println!(
        "cargo:rustc-env=PQCPROF_GIT_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!(
        "cargo:rustc-env=PQCPROF_RUSTC={}",
        output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into())
    );
    // The C compiler the cc crate picks (CC, else cc): the one the
    // vendored liboqs and OpenSSL builds use too, named in run metadata.
    let cc_path = cc::Build::new().get_compiler().path().to_path_buf();
    let cc_version = output(&cc_path.to_string_lossy(), &["--version"])
        .and_then(|v| v.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    println!(
        "cargo:rustc-env=PQCPROF_CC={} ({cc_version})",
        cc_path.display()
    );
    // Where git keeps them: `.git` is a file in a linked worktree, and a
    // path that does not exist would rerun this script (and rebuild the
    // crate) on every build. Outside a checkout there is nothing to watch.
    for file in ["HEAD", "index"] {
        if let Some(p) = output("git", &["rev-parse", "--git-path", file]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }

    // The native sources, compiled for the host exactly as written for the GPU.
    let native = "cuda/native";
    println!("cargo:rerun-if-changed={native}");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++14")
        .opt_level(2)
        .include(native)
        .warnings(true)
        .flag_if_supported("-Wno-unused-function")
        // The host build counts Keccak-f1600 permutations per OS thread
        // (cuda/native/keccak.cuh) so tests can state each operation's
        // Keccak work; NVRTC and the stand-in never define it.
        .define("PQCPROF_COUNT_KECCAK", None);
    for src in ["host_mlkem.cpp", "host_mldsa.cpp"] {
        build.file(format!("{native}/{src}"));
    }
    build.compile("pqcprof_native");

    // NVIDIA cuPQC through nvcc and bindgen, when the SDK and nvcc are found.
    cupqc::configure();

    // XMSS and LMS from a second, symbol-isolated build of oqs-sys's liboqs source.
    stfl::configure();
}
