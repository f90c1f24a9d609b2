//! Broken GPU libraries on the loader path: a CUDA driver, NVML or NVRTC
//! that lacks functions pqcprof calls, or a driver whose `cuInit` never
//! returns. Each is built here from a few lines of C and put first on
//! `LD_LIBRARY_PATH`. GPU commands name what is wrong (no panic, no hang);
//! CPU-only commands never load a GPU library at all (each fake one records
//! being loaded).

mod common;

use common::{outcome, pqcprof};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A constructor that leaves `$PQCPROF_TEST_LOADED/<name>` when the
/// library is loaded.
fn marker(name: &str) -> String {
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {{
    const char *d = getenv("PQCPROF_TEST_LOADED");
    if (!d) return;
    char p[4096];
    snprintf(p, sizeof p, "%s/{name}", d);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}}
"#
    )
}

/// Compiles `source` into `dir/names[0]` and links the other names to it.
fn build(dir: &Path, names: &[&str], source: &str) {
    let c = dir.join(format!("{}.c", names[0]));
    std::fs::write(&c, source).unwrap();
    let o = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join(names[0]))
        .arg(&c)
        .output()
        .expect("a C compiler (cc)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in &names[1..] {
        std::os::unix::fs::symlink(names[0], dir.join(n)).unwrap();
    }
}

/// A driver with `cuInit` and a few queries but no `cuGetErrorString`
/// (or, `hang`, a `cuInit` that sleeps ten minutes), a partial NVML (no
/// `nvmlShutdown`) and an NVRTC with only `nvrtcVersion`.
fn fake_libraries(hang: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let init = if hang {
        "sleep(600); return 0;"
    } else {
        "return 0;"
    };
    build(
        d.path(),
        &["libcuda.so.1", "libcuda.so"],
        &format!(
            "{}int cuInit(unsigned f) {{ {init} }}\nint cuDriverGetVersion(int *v) {{ *v = 13000; return 0; }}\nint cuDeviceGetCount(int *n) {{ *n = 1; return 0; }}\n",
            marker("libcuda")
        ),
    );
    build(
        d.path(),
        &["libnvidia-ml.so.1"],
        &format!(
            "{}int nvmlInit_v2(void) {{ return 0; }}\nint nvmlSystemGetDriverVersion(char *v, unsigned n) {{ snprintf(v, n, \"999.1\"); return 0; }}\n",
            marker("libnvidia-ml")
        ),
    );
    build(
        d.path(),
        &["libnvrtc.so", "libnvrtc.so.13"],
        &format!(
            "{}int nvrtcVersion(int *a, int *b) {{ *a = 13; *b = 0; return 0; }}\n",
            marker("libnvrtc")
        ),
    );
    d
}

fn library_path(fakes: &Path) -> String {
    match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", fakes.display()),
        _ => fakes.display().to_string(),
    }
}

/// `pqcprof ARGS` with the fakes first on the loader path, at most `secs`.
fn with_fakes(fakes: &Path, loaded: &Path, secs: u64, args: &[&str]) -> (i32, String, String) {
    let mut c = pqcprof();
    c.env("LD_LIBRARY_PATH", library_path(fakes))
        // No prebuilt kernel image stands in for the fake NVRTC.
        .env("PQCPROF_PTX_CACHE", loaded.join("no-kernel-images"))
        .env("PQCPROF_TEST_LOADED", loaded)
        .env("PQCPROF_DRIVER_TIMEOUT_S", "2")
        .timeout(Duration::from_secs(secs))
        .args(args);
    let (code, out, err) = outcome(&mut c);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_ne!(code, 101, "{args:?}: {err}");
    (code, out, err)
}

fn loaded(dir: &Path) -> Vec<PathBuf> {
    common::files(dir, "lib", "")
}

#[test]
fn cpu_only_commands_never_load_a_gpu_library() {
    let fakes = fake_libraries(false);
    let marks = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let (code, _, err) = with_fakes(
        fakes.path(),
        marks.path(),
        120,
        &[
            &common::words("cpu --alg ML-KEM-512 --op keygen --batch 2 --runs 4 --threads 1")[..],
            &["--out", o],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    let run = common::files(out.path(), "run-", ".json")
        .pop()
        .expect("a run file");
    let r = run.to_str().unwrap();
    let merged = out.path().join("m.json");
    let report = out.path().join("r.md");
    let commands: Vec<Vec<&str>> = vec![
        vec!["sizes", "--filter", "ML-KEM-512"],
        vec![
            "sweep",
            "--filter",
            "ML-KEM-512",
            "--warmup-seconds",
            "0",
            "--seconds",
            "0.05",
            "--no-symmetric",
            "--out",
            o,
        ],
        vec![
            "report",
            r,
            "--format",
            "markdown",
            "-o",
            report.to_str().unwrap(),
        ],
        vec!["compare", r, r],
        vec!["merge", r, "-o", merged.to_str().unwrap()],
    ];
    for args in commands {
        let (code, _, err) = with_fakes(fakes.path(), marks.path(), 120, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    assert_eq!(
        loaded(marks.path()),
        Vec::<PathBuf>::new(),
        "GPU libraries loaded"
    );
}

#[test]
fn partial_gpu_libraries_are_named_not_panicked_on() {
    let fakes = fake_libraries(false);
    let marks = tempfile::tempdir().unwrap();
    let (_, out, err) = with_fakes(fakes.path(), marks.path(), 120, &["check"]);
    let all = out + &err;
    assert!(all.contains("cuGetErrorString"), "{all}");
    assert!(all.contains("nvmlShutdown"), "{all}");
    assert!(all.contains("nvrtcCreateProgram"), "{all}");
    let o = tempfile::tempdir().unwrap();
    let (_, out, err) = with_fakes(
        fakes.path(),
        marks.path(),
        120,
        &[
            &common::words("gpu --alg ML-KEM-512 --runs 2 --out")[..],
            &[o.path().to_str().unwrap()],
        ]
        .concat(),
    );
    assert!((out + &err).contains("cuGetErrorString"), "{err}");
    // offload on either GPU backend: refused by name before the GPU is
    // opened, no run file.
    for backend in ["native-gpu", "cupqc"] {
        let (code, _, err) = offload_on(&fakes, &marks, backend, 120);
        assert_eq!(code, 1, "{backend}: {err}");
        assert!(!err.contains("panicked"), "{backend}: {err}");
        if backend == "native-gpu" {
            assert!(err.contains("cuGetErrorString"), "{err}");
        }
    }
    let (code, _, err) = with_fakes(fakes.path(), marks.path(), 120, &["kernels"]);
    assert_ne!(code, 0);
    assert!(err.contains("nvrtcCreateProgram"), "{err}");
    // An empty driver: not even cuInit.
    let empty = tempfile::tempdir().unwrap();
    build(
        empty.path(),
        &["libcuda.so.1", "libcuda.so"],
        "int pqcprof_nothing;\n",
    );
    let (_, out, err) = with_fakes(empty.path(), marks.path(), 120, &["check"]);
    assert!((out + &err).contains("lacks 47 of the 47"), "{err}");
}

#[test]
fn a_hung_driver_is_named_within_its_time_limit() {
    let fakes = fake_libraries(true);
    let marks = tempfile::tempdir().unwrap();
    // The hung cuInit is in the driver the symbol check accepts: give it
    // every function pqcprof calls, as a real driver has.
    let full: String =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/probe/gpu.rs"))
            .unwrap();
    let list = full
        .split("pub const DRIVER_SYMBOLS")
        .nth(1)
        .and_then(|s| s.split("];").next())
        .unwrap();
    let mut src = marker("libcuda");
    src += "#include <unistd.h>\nint cuInit(unsigned f) { sleep(600); return 0; }\n";
    for name in list
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|n| *n != "cuInit")
    {
        src += &format!("int {name}(void) {{ return 1; }}\n");
    }
    for n in ["libcuda.so.1", "libcuda.so"] {
        std::fs::remove_file(fakes.path().join(n)).unwrap();
    }
    build(fakes.path(), &["libcuda.so.1", "libcuda.so"], &src);
    let (_, out, err) = with_fakes(fakes.path(), marks.path(), 60, &["check"]);
    assert!(
        (out + &err).contains("cuInit did not return within 2 s"),
        "{err}"
    );
    let o = tempfile::tempdir().unwrap();
    let (_, out, err) = with_fakes(
        fakes.path(),
        marks.path(),
        60,
        &[
            &common::words("gpu --alg ML-KEM-512 --runs 2 --out")[..],
            &[o.path().to_str().unwrap()],
        ]
        .concat(),
    );
    assert!((out + &err).contains("cuInit did not return"), "{err}");
    let (code, _, err) = offload_on(&fakes, &marks, "native-gpu", 60);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cuInit did not return"), "{err}");
}

/// `offload --backend BACKEND` with the fake libraries first on the loader
/// path: (exit code, stdout, stderr), after checking that it wrote no run
/// file.
fn offload_on(
    fakes: &tempfile::TempDir,
    marks: &tempfile::TempDir,
    backend: &str,
    secs: u64,
) -> (i32, String, String) {
    let o = tempfile::tempdir().unwrap();
    let line = format!(
        "offload --backend {backend} --alg ML-KEM-512 --op keygen --rate 100 --window 0.2 --out"
    );
    let got = with_fakes(
        fakes.path(),
        marks.path(),
        secs,
        &[&common::words(&line)[..], &[o.path().to_str().unwrap()]].concat(),
    );
    assert!(common::files(o.path(), "run-", ".json").is_empty());
    got
}
