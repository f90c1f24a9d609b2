//! A compatible NVRTC chosen when several are installed, on the CPU stand-in
//! driver made to report a CUDA 12.8 driver: with NVRTC 13 first on the
//! loader path and NVRTC 12 after it, `check` finds the native backend
//! ready with NVRTC 12, says why, and a GPU record is compiled and measured
//! with it; with NVRTC 13 alone, `check` names what to install. The older
//! NVRTC is pip's `nvidia-cuda-nvrtc-cu12`, which `scripts/test` installs
//! apart from the virtual environment's own packages and names in
//! `PQCPROF_OLDER_NVRTC_DIR`.

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use std::path::PathBuf;

/// The folder of an NVRTC for CUDA 12, or `None` after saying why.
fn older_nvrtc(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PQCPROF_OLDER_NVRTC_DIR").map(PathBuf::from);
    let found = dir.filter(|d| d.join("libnvrtc.so.12").exists());
    if found.is_none() {
        if std::env::var("PQCPROF_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("PQCPROF_REQUIRE_NVRTC=1 but PQCPROF_OLDER_NVRTC_DIR names no folder with libnvrtc.so.12 (scripts/test installs nvidia-cuda-nvrtc-cu12 and sets it)");
        }
        common::skipped(
            test,
            "no NVRTC for CUDA 12 (PQCPROF_OLDER_NVRTC_DIR; scripts/test installs one)",
        );
    }
    found
}

#[test]
fn a_driver_for_cuda_12_gets_the_nvrtc_it_supports() {
    let test = "a_driver_for_cuda_12_gets_the_nvrtc_it_supports";
    if nvrtc_or_skip(test).is_none() {
        return;
    }
    let Some(older) = older_nvrtc(test) else {
        return;
    };
    // The stand-in first, NVRTC 13 next (the test environment's), then 12.
    let path = format!("{}:{}", standin::library_path(), older.display());
    let knobs = [("DRIVER_API", "12080")];

    let mut check = standin::pqcprof(&knobs);
    check.env("LD_LIBRARY_PATH", &path).arg("check");
    let (code, out, err) = outcome(&mut check);
    assert_eq!(code, 0, "{out}\n{err}");
    let native = out
        .lines()
        .find(|l| l.contains("native-gpu"))
        .unwrap_or_else(|| panic!("no native-gpu line\n{out}"));
    assert!(
        native.contains("ready") && !native.contains("not ready"),
        "{out}"
    );
    assert!(
        out.contains("NVRTC 12.") && out.contains("chosen because the NVRTC 13."),
        "{out}\n{err}"
    );
    assert!(err.contains("pqcprof: using NVRTC"), "{err}");

    let d = tempfile::tempdir().unwrap();
    let mut gpu = standin::pqcprof(&knobs);
    gpu.env("LD_LIBRARY_PATH", &path)
        .args(["gpu", "--backend", "native-gpu", "--alg", "ML-KEM-512"])
        .args(["--op", "keygen", "--batch", "129", "--runs", "2", "--out"])
        .arg(d.path());
    let (code, out, err) = outcome(&mut gpu);
    assert_eq!(code, 0, "{out}\n{err}");
    let run = common::read_json(&common::run_file_in(d.path()));
    let rec = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["backend"] == "native-gpu")
        .unwrap();
    assert_eq!(rec["status"], "ok", "{rec:#}");
    assert!(
        rec["kernel"].to_string().contains("NVRTC 12."),
        "compiled by the chosen NVRTC: {rec:#}"
    );
    // The private link folder of the restart is gone.
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("pqcprof-nvrtc-")
        })
        .filter(|e| e.path().join("libnvrtc.so").exists())
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // NVRTC 13 alone: not ready, and what to install.
    let mut alone = standin::pqcprof(&knobs);
    alone.arg("check");
    let (_, out, _) = outcome(&mut alone);
    common::assert_has(
        &out,
        &["needs a driver for CUDA 13", "nvidia-cuda-nvrtc-cu12"],
    );
}
