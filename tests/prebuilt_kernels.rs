//! Kernel images built on one machine and run on another: `pqcprof kernels
//! --prebuild DIR` writes every family's machine code, PTX and NVRTC log
//! into DIR; a run pointed at DIR (`PQCPROF_PTX_CACHE`) loads them on the
//! CPU stand-in driver with no NVRTC reachable at all, names images of
//! other sources when it cannot use them, and a compile cut short by
//! `--deadline` still ends up in the cache.
//!
//! Needs NVRTC to make the images (here, where the tests build) and a C++
//! compiler for the stand-in.

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The images of both families for sm_90 (the stand-in's default), made in
/// the stand-in tests' shared cache (so each is compiled once per source)
/// and copied into `dir` as a carried folder would be: the files
/// `kernels --prebuild` listed, with their PTX and logs, nothing else.
fn carried_images(dir: &Path) -> Vec<PathBuf> {
    let cache = standin::ptx_cache();
    let (code, stdout, stderr) = outcome(
        common::pqcprof()
            .args(["kernels", "--prebuild"])
            .arg(&cache)
            .args(["--arch", "sm_90"]),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut copied = vec![];
    for unit in ["mlkem", "mldsa"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{unit} sm_90: ")))
            .unwrap_or_else(|| panic!("no {unit} line in\n{stdout}"));
        let cubin = PathBuf::from(line.split(' ').nth(2).unwrap());
        assert!(cubin.exists(), "{line}");
        let stem = cubin
            .to_string_lossy()
            .trim_end_matches(".cubin")
            .to_string();
        for ext in [".cubin", ".ptx", ".log"] {
            let from = PathBuf::from(format!("{stem}{ext}"));
            let to = dir.join(from.file_name().unwrap());
            std::fs::copy(&from, &to).unwrap();
            copied.push(to);
        }
    }
    copied
}

/// `pqcprof` on the stand-in with no NVRTC on the loader path (the stand-in's
/// folder alone) and its kernel cache in `cache`.
fn without_nvrtc(cache: &Path) -> assert_cmd::Command {
    let mut c = common::pqcprof();
    c.env("LD_LIBRARY_PATH", standin::lib_dir())
        .env("PQCPROF_PTX_CACHE", cache)
        .env("PQCPROF_VENV", cache.join("no-venv"))
        .env_remove("VIRTUAL_ENV")
        .env("CUDA_HOME", cache.join("no-cuda"));
    c
}

fn records(out: &Path) -> Vec<serde_json::Value> {
    common::read_json(&common::run_file_in(out))["records"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn prebuilt_images_run_all_operations_with_no_nvrtc() {
    if nvrtc_or_skip("prebuilt_images_run_all_operations_with_no_nvrtc").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let images = d.path().join("images");
    std::fs::create_dir(&images).unwrap();
    carried_images(&images);
    // `check` finds them, says they match this binary, and the backend is
    // ready although NVRTC is missing.
    let (code, stdout, stderr) = outcome(without_nvrtc(&images).arg("check"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("NVRTC         missing"), "{stdout}");
    for unit in ["mlkem", "mldsa"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{unit} ")) && l.contains("sm_90"))
            .unwrap_or_else(|| panic!("no {unit} image line in\n{stdout}"));
        assert!(line.contains("matches this binary"), "{line}");
    }
    let native = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("native-gpu"))
        .unwrap();
    common::assert_has(native, &[" ready ", "prebuilt images"]);
    // All 18 operations from the images.
    let out = d.path().join("out");
    let (code, stdout, stderr) = outcome(
        without_nvrtc(&images)
            .args(["gpu", "--backend", "native-gpu", "--batch", "129"])
            .args(["--runs", "1", "--warmup", "0", "--out"])
            .arg(&out),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let recs = records(&out);
    assert_eq!(recs.len(), 18, "{recs:#?}");
    for r in &recs {
        assert_eq!(r["status"], "ok", "{r:#}");
        assert_eq!(r["emulated"], true, "{r:#}");
        let image = r["kernel"]["image"].as_str().unwrap();
        common::assert_has(image, &["sm_90 machine code", "prebuilt"]);
    }
    // ptxas's report comes with the images: `kernels` reads it there.
    let (code, stdout, stderr) =
        outcome(without_nvrtc(&images).args(["kernels", "--arch", "sm_90"]));
    assert_eq!(code, 0, "{stderr}");
    common::assert_has(
        &stdout,
        &[
            "sm_90 (prebuilt images; no NVRTC here)",
            "mldsa87_sign_block",
            "mlkem512_keygen_warp",
        ],
    );
    // Nothing was compiled: the folder holds what was carried, and no more.
    let mut names: Vec<String> = std::fs::read_dir(&images)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
}

#[test]
fn images_of_other_sources_are_named_and_refused_without_nvrtc() {
    if nvrtc_or_skip("images_of_other_sources_are_named_and_refused_without_nvrtc").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let made = d.path().join("made");
    let images = d.path().join("images");
    std::fs::create_dir(&made).unwrap();
    std::fs::create_dir(&images).unwrap();
    // The same files under the name another pqcprof's sources would give
    // them (another hash).
    for f in carried_images(&made) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let (stem, ext) = name.rsplit_once('.').unwrap();
        let (head, hash) = stem.rsplit_once('-').unwrap();
        let other = format!("{head}-{}.{ext}", "0".repeat(hash.len()));
        std::fs::copy(&f, images.join(other)).unwrap();
    }
    let (code, stdout, _) = outcome(without_nvrtc(&images).arg("check"));
    assert_eq!(code, 0);
    common::assert_has(
        &stdout,
        &["none of this binary's sources", "1 of other sources"],
    );
    let out = d.path().join("out");
    let (code, stdout, stderr) = outcome(
        without_nvrtc(&images)
            .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
            .args(["--batch", "129", "--runs", "1", "--out"])
            .arg(&out),
    );
    // Not ready: nothing measured, the reason names what is missing.
    assert_eq!(code, 4, "{stdout}{stderr}");
    let r = &records(&out)[0];
    assert_eq!(r["status"], "skipped", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("NVRTC"), "{reason}");
    common::assert_has(
        reason,
        &[
            "of other kernel sources or options than this binary's",
            "kernels --prebuild",
        ],
    );
    // With NVRTC it says so and compiles (here cut at once by --deadline).
    let (code, stdout, stderr) = outcome(
        standin::pqcprof(&[])
            .env("PQCPROF_PTX_CACHE", &images)
            .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
            .args(["--batch", "129", "--runs", "1", "--deadline", "1", "--out"])
            .arg(d.path().join("with-nvrtc")),
    );
    assert_eq!(code, 5, "{stdout}{stderr}");
    common::assert_has(
        &stderr,
        &[
            "compiling the mlkem kernels for sm_90: the 1 image(s) in",
            "are of other kernel sources or options than this binary's",
        ],
    );
}

#[test]
fn a_deadline_during_the_compile_cuts_and_the_compile_still_fills_the_cache() {
    if nvrtc_or_skip("a_deadline_during_the_compile_cuts_and_the_compile_still_fills_the_cache")
        .is_none()
    {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    // Two runs at once on an empty cache, each with its own deadline: one
    // starts the compile, the other waits on it; both stop at their
    // deadline, cut, before ML-KEM's compile ends (the smaller unit: 10 s
    // or more of one core here, ML-DSA's about three times that).
    let start = |name: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pqcprof"));
        c.env("LD_LIBRARY_PATH", standin::library_path())
            .env("PQCPROF_PTX_CACHE", &cache)
            .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
            .args(["--batch", "129", "--runs", "1", "--deadline", "2", "--out"])
            .arg(d.path().join(name))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let t0 = Instant::now();
    let runs = [start("a"), start("b")];
    for (child, name) in runs.into_iter().zip(["a", "b"]) {
        let out = child.wait_with_output().unwrap();
        let took = t0.elapsed();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The cut exit code, with the reason in the run file.
        assert_eq!(out.status.code(), Some(5), "{name}: {text}");
        assert!(took < Duration::from_secs(30), "{name}: {took:?}\n{text}");
        let recs = records(&d.path().join(name));
        assert!(!recs.is_empty(), "{name}: {text}");
        for r in &recs {
            assert_eq!(r["status"], "skipped", "{r:#}");
            assert!(
                r["reason"]
                    .as_str()
                    .unwrap()
                    .contains("not compiled in time (--deadline 2"),
                "{r:#}"
            );
        }
    }
    // The compile goes on and writes the image; a later run uses it.
    let t1 = Instant::now();
    let image = loop {
        let found = common::files(&cache, "native-mlkem-sm_90-", ".cubin");
        if let Some(f) = found.first() {
            break f.clone();
        }
        assert!(
            t1.elapsed() < Duration::from_secs(900),
            "no ML-KEM image in {} after 15 minutes",
            cache.display()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let out = d.path().join("after");
    let (code, stdout, stderr) = outcome(
        standin::pqcprof(&[])
            .env("PQCPROF_PTX_CACHE", &cache)
            .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
            .args(["--op", "decaps", "--batch", "129", "--runs", "1"])
            .args(["--deadline", "120", "--out"])
            .arg(&out),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    common::assert_has(
        &stderr,
        &[&format!("read from the cache {}", image.display())],
    );
}
