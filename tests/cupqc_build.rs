//! A build never breaks on cuPQC: the build script this crate was built with
//! (target/release/build/pqcprof-*/build-script-build) is run again, as
//! cargo runs it, against broken copies of the stand-in SDK: one whose
//! header does not compile and one whose library lacks a device function
//! (the device link fails). Each time the script succeeds without
//! `cfg(pqcprof_cupqc)`, warns with the cause (nvcc's first error line) and
//! records it for `pqcprof check`; with `PQCPROF_EXPECT_CUPQC=standin` the
//! same build fails. Needs nvcc (`scripts/find-nvcc`): without one it says
//! SKIPPED, and fails instead when `PQCPROF_EXPECT_CUPQC=standin` (CI).

mod common;

#[allow(dead_code)]
#[path = "../build/nvcc.rs"]
mod nvcc;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Says, on stdout and on the real stderr, that `test` did not run.
fn skip(test: &str, why: &str) {
    println!("SKIPPED {test}: {why}");
    common::skipped(test, why);
}

fn nvcc_or_skip(test: &str) -> Option<PathBuf> {
    match nvcc::find(root()) {
        Ok(p) => Some(p),
        Err(why) if std::env::var("PQCPROF_EXPECT_CUPQC").as_deref() == Ok("standin") => {
            panic!("PQCPROF_EXPECT_CUPQC=standin but no nvcc: {why}")
        }
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

/// The newest folder under target/<profile>/build/ that holds `name`.
fn newest_build_item(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    std::fs::read_dir(profile.join("build"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pqcprof-")
        })
        .map(|p| p.join(name))
        .filter(|p| p.exists())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no target/*/build/pqcprof-*/{name}"))
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), to.display());
}

/// Runs the build script with the environment cargo gives it, against the
/// SDK at `sdk`, in a copy of the existing OUT_DIR (so the cached liboqs
/// build is reused).
fn run_build_script(work: &Path, sdk: &Path, nvcc: &Path, expect: Option<&str>) -> Output {
    let out = work.join(format!("out-{}", std::process::id() ^ rand_suffix()));
    copy_dir(&newest_build_item("out"), &out);
    let arch = std::env::consts::ARCH;
    let mut c = Command::new(newest_build_item("build-script-build"));
    c.current_dir(root())
        .env("CARGO_MANIFEST_DIR", root())
        .env("OUT_DIR", &out)
        .env("CUPQC_HOME", sdk)
        .env("NVCC", nvcc)
        .env("PQCPROF_CUDA_ARCHS", "80")
        .env("TARGET", format!("{arch}-unknown-linux-gnu"))
        .env("HOST", format!("{arch}-unknown-linux-gnu"))
        .env("OPT_LEVEL", "3")
        .env("PROFILE", "release")
        .env("DEBUG", "false")
        .env("NUM_JOBS", "2")
        .env("CARGO_CFG_TARGET_ARCH", arch)
        .env("CARGO_CFG_TARGET_OS", "linux")
        .env("CARGO_CFG_TARGET_ENV", "gnu")
        .env("CARGO_CFG_TARGET_VENDOR", "unknown")
        .env("CARGO_CFG_TARGET_POINTER_WIDTH", "64")
        .env("CARGO_CFG_TARGET_ENDIAN", "little")
        .env_remove("PQCPROF_NO_CUPQC")
        .env_remove("PQCPROF_EXPECT_CUPQC");
    if let Some(v) = expect {
        c.env("PQCPROF_EXPECT_CUPQC", v);
    }
    c.output().unwrap()
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

/// A copy of the stand-in SDK with `edit` applied to one of its files.
fn broken_standin(work: &Path, name: &str, file: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let sdk = work.join(name);
    copy_dir(&root().join("tests/fixtures/cupqc-standin"), &sdk);
    let p = sdk.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    let changed = edit(text.clone());
    assert_ne!(changed, text, "the edit of {file} changed nothing");
    std::fs::write(&p, changed).unwrap();
    sdk
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The build script's `cargo:` line starting with `prefix`, if any.
fn line<'a>(stdout: &'a str, prefix: &str) -> Option<&'a str> {
    stdout.lines().find_map(|l| l.strip_prefix(prefix))
}

fn assert_left_out(o: &Output, sdk: &Path, stage: &str, first_error: &str) {
    let (stdout, stderr) = text(o);
    assert!(o.status.success(), "the build script failed:\n{stderr}");
    assert!(
        !stdout.lines().any(|l| l == "cargo:rustc-cfg=pqcprof_cupqc"),
        "{stdout}"
    );
    let warning = line(&stdout, "cargo:warning=cuPQC backend left out: ").expect("a warning");
    let want = format!("cuPQC SDK at {} failed to {stage}: ", sdk.display());
    assert!(warning.starts_with(&want), "{warning}");
    assert!(warning.contains(first_error), "{warning}");
    assert!(
        warning.ends_with("; rebuild with PQCPROF_EXPECT_CUPQC=1 to see it fail"),
        "{warning}"
    );
    // What `pqcprof check` prints as the cuPQC build's note.
    let note = line(&stdout, "cargo:rustc-env=PQCPROF_CUPQC_BUILD=").expect("the note");
    assert_eq!(note, format!("not built: {warning}"));
}

#[test]
fn an_sdk_that_does_not_compile_leaves_the_backend_out_unless_expected() {
    let test = "an_sdk_that_does_not_compile_leaves_the_backend_out_unless_expected";
    let Some(nvcc) = nvcc_or_skip(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let sdk = broken_standin(work.path(), "no-compile", "include/cupqc/cupqc.hpp", |t| {
        t.replace(
            "namespace cupqc {",
            "namespace cupqc {\nstatic_assert(false, \"pqcprof-broken-header\");",
        )
    });
    let o = run_build_script(work.path(), &sdk, &nvcc, None);
    assert_left_out(&o, &sdk, "build", "pqcprof-broken-header");

    let o = run_build_script(work.path(), &sdk, &nvcc, Some("standin"));
    let (_, stderr) = text(&o);
    assert!(
        !o.status.success(),
        "PQCPROF_EXPECT_CUPQC=standin must fail"
    );
    common::assert_has(
        &stderr,
        &[
            "PQCPROF_EXPECT_CUPQC=standin, but the cuPQC backend could not be built",
            "pqcprof-broken-header",
        ],
    );
}

#[test]
fn an_sdk_that_does_not_link_leaves_the_backend_out() {
    let test = "an_sdk_that_does_not_link_leaves_the_backend_out";
    let Some(nvcc) = nvcc_or_skip(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // The library no longer defines standin_touch, which every execute calls.
    let sdk = broken_standin(work.path(), "no-link", "src/pk.cu", |t| {
        let start = t.find("__device__ void standin_touch").unwrap();
        let end = start + t[start..].find("\n}\n").unwrap() + 3;
        format!("{}{}", &t[..start], &t[end..])
    });
    let o = run_build_script(work.path(), &sdk, &nvcc, None);
    assert_left_out(&o, &sdk, "link", "standin_touch");
}
