//! The CPU stand-in CUDA driver (tests/fixtures/cuda-standin/): built once
//! per test process with the system `c++`, cached by a hash of its sources
//! and of cuda/native/*, and a `pqcprof` command that loads it instead of a
//! real driver. It is not a GPU: it proves correctness and the launch path,
//! never speed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture's sources, then the kernels it compiles: what the cache key
/// covers.
fn sources() -> Vec<PathBuf> {
    let mut v = vec![];
    for dir in ["tests/fixtures/cuda-standin", "cuda/native"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        v.extend(files);
    }
    v
}

/// FNV-1a over every source's name and bytes.
fn source_hash() -> String {
    files_hash(&sources())
}

/// FNV-1a over each file's name and bytes, in the order given.
fn files_hash(files: &[PathBuf]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        for b in name.bytes().chain(std::fs::read(p).unwrap()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The files of `dir` (not its subfolders), sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Builds the stand-in from the sources under `src` (the checkout, or a
/// scratch copy of it) into `dir` with the fixture's own build script
/// (`racecheck`: its racecheck mode), objects cached under
/// `target/cuda-standin-objects`.
fn build(src: &Path, dir: &Path, racecheck: bool) {
    build_with(src, dir, racecheck, &[]);
}

/// `build`, with the extern "C" kernels of the CUDA sources `kernels`
/// added to the stand-in's table (`build --kernels`).
fn build_with(src: &Path, dir: &Path, racecheck: bool, kernels: &[PathBuf]) {
    let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
    let mut c = std::process::Command::new(root().join("tests/fixtures/cuda-standin/build"));
    if racecheck {
        c.arg("--racecheck");
    }
    for k in kernels {
        c.arg("--kernels").arg(k);
    }
    let out = c
        .arg(src)
        .arg(&tmp)
        .env(
            "PQCPROF_STANDIN_OBJECTS",
            root().join("target").join("cuda-standin-objects"),
        )
        .output()
        .expect("tests/fixtures/cuda-standin/build runs (bash and the system C++ compiler, c++)");
    assert!(
        out.status.success(),
        "building the CUDA stand-in failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Another test process may have finished the same build first.
    if std::fs::rename(&tmp, dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(dir.join("libcuda.so.1").exists());
    }
}

/// The folder holding the stand-in's `libcuda.so` and `libcuda.so.1`,
/// built on first use (once per test process, thread-safe).
pub fn lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    built_once(&DIR, "cuda-standin", false)
}

/// The build (`racecheck`: its racecheck mode) in
/// `target/<folder>/<source hash>`, made on first use and kept in `cell`
/// for the rest of the test process.
fn built_once(cell: &'static OnceLock<PathBuf>, folder: &str, racecheck: bool) -> PathBuf {
    cell.get_or_init(|| {
        let dir = root().join("target").join(folder).join(source_hash());
        if !dir.join("libcuda.so.1").exists() {
            build(&root(), &dir, racecheck);
        }
        dir
    })
    .clone()
}

/// The folder of the racecheck build of the stand-in (every CUDA thread an
/// OS thread under ThreadSanitizer), built on first use and cached like
/// `lib_dir`'s.
pub fn racecheck_lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    built_once(&DIR, "cuda-standin-racecheck", true)
}

/// The racecheck build of the sources under `src` (a scratch copy with a
/// change), into `dir`, not cached.
pub fn racecheck_build_from(src: &Path, dir: &Path) {
    build(src, dir, true);
}

/// The folder of a stand-in that also runs the extern "C" kernels of the
/// CUDA sources `kernels` (a device plugin's, e.g.
/// examples/plugins/cuda-mlkem/kernels.cu: `build --kernels`), built on
/// first use into `target/cuda-standin-kernels/<hash>`. The hash covers the
/// stand-in's sources, cuda/native/*, and each file of the folders holding
/// `kernels` (what they include from beside them).
pub fn lib_dir_with_kernels(kernels: &[&Path]) -> PathBuf {
    static DIRS: std::sync::Mutex<Vec<(Vec<PathBuf>, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let kernels: Vec<PathBuf> = kernels
        .iter()
        .map(|k| {
            let k = if k.is_absolute() {
                k.to_path_buf()
            } else {
                root().join(k)
            };
            assert!(k.is_file(), "no kernel source {}", k.display());
            k
        })
        .collect();
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, dir)) = dirs.iter().find(|(k, _)| *k == kernels) {
        return dir.clone();
    }
    let mut files = sources();
    for k in &kernels {
        files.push(k.clone());
        files.extend(files_in(k.parent().unwrap()));
    }
    let dir = root()
        .join("target")
        .join("cuda-standin-kernels")
        .join(files_hash(&files));
    if !dir.join("libcuda.so.1").exists() {
        build_with(&root(), &dir, false, &kernels);
    }
    dirs.push((kernels, dir.clone()));
    dir
}

/// The example device plugin (examples/plugins/cuda-mlkem/), built once per
/// test process by its own build script (nvcc from `$NVCC`, PATH or
/// `$PQCPROF_VENV`) into `target/cuda-mlkem-plugin/<hash of its folder,
/// include/pqcprof_plugin.h and cuda/native/*>`: the path of its `.so`. The
/// stand-in that runs its kernels is
/// `lib_dir_with_kernels(&[Path::new(CUDA_MLKEM_KERNELS)])`.
pub fn cuda_mlkem_plugin() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let example = root().join("examples/plugins/cuda-mlkem");
        let mut files = files_in(&example);
        files.push(root().join("include/pqcprof_plugin.h"));
        files.extend(files_in(&root().join("cuda/native")));
        let dir = root()
            .join("target")
            .join("cuda-mlkem-plugin")
            .join(files_hash(&files));
        let lib = dir.join("libpqcprof_cuda_mlkem.so");
        if !lib.exists() {
            let out = std::process::Command::new(example.join("build"))
                .arg(&dir)
                .output()
                .expect("examples/plugins/cuda-mlkem/build runs (bash, nvcc and the system C++ compiler)");
            assert!(
                out.status.success(),
                "building the cuda-mlkem example plugin failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        lib
    })
    .clone()
}

/// The example device plugin's kernel source, relative to the checkout.
pub const CUDA_MLKEM_KERNELS: &str = "examples/plugins/cuda-mlkem/kernels.cu";

/// `pqcprof` on the stand-in in `lib` (e.g. [`lib_dir_with_kernels`]'s),
/// with `knobs` as `PQCPROF_STANDIN_<NAME>=<value>`, without the vectors at
/// the start of a run ([`NO_VECTORS`]).
pub fn pqcprof_on(lib: &Path, knobs: &[(&str, &str)]) -> assert_cmd::Command {
    let mut path = lib.display().to_string();
    if let Ok(rest) = std::env::var("LD_LIBRARY_PATH") {
        if !rest.is_empty() {
            path.push(':');
            path.push_str(&rest);
        }
    }
    let mut c = super::pqcprof();
    c.env("LD_LIBRARY_PATH", path)
        .env("PQCPROF_PTX_CACHE", ptx_cache())
        .env("PQCPROF_VECTORS", NO_VECTORS);
    for (k, v) in knobs {
        c.env(format!("PQCPROF_STANDIN_{k}"), v);
    }
    c
}

/// ThreadSanitizer's runtime, which an uninstrumented process must load
/// first (LD_PRELOAD) to open an instrumented library.
pub fn tsan_runtime() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let out = std::process::Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()))
            .arg("-print-file-name=libtsan.so")
            .output()
            .expect("the system C++ compiler (c++) names its ThreadSanitizer runtime");
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        assert!(
            p.is_absolute() && p.exists(),
            "no ThreadSanitizer runtime (libtsan.so) beside the C++ compiler: install GCC's (Debian: libgcc-12-dev)"
        );
        p
    })
    .clone()
}

/// The environment of a process on the racecheck build in `lib`:
/// (name, value) pairs. ThreadSanitizer's reports go to a log under
/// `reports` that the stand-in reads back after each launch.
pub fn racecheck_env(lib: &Path, reports: &Path) -> Vec<(String, String)> {
    let mut path = lib.display().to_string();
    if let Ok(rest) = std::env::var("LD_LIBRARY_PATH") {
        if !rest.is_empty() {
            path.push(':');
            path.push_str(&rest);
        }
    }
    vec![
        ("LD_LIBRARY_PATH".into(), path),
        ("LD_PRELOAD".into(), tsan_runtime().display().to_string()),
        (
            "TSAN_OPTIONS".into(),
            "halt_on_error=0 report_signal_unsafe=0 detect_deadlocks=0 exitcode=0".into(),
        ),
        (
            "PQCPROF_STANDIN_RACECHECK_DIR".into(),
            reports.display().to_string(),
        ),
    ]
}

/// `pqcprof` on the racecheck build in `lib`, its reports under `reports`.
pub fn racecheck_pqcprof(lib: &Path, reports: &Path) -> assert_cmd::Command {
    let mut c = super::pqcprof();
    c.env("PQCPROF_PTX_CACHE", ptx_cache())
        .env("PQCPROF_VECTORS", NO_VECTORS);
    for (k, v) in racecheck_env(lib, reports) {
        c.env(k, v);
    }
    c
}

/// Where the stand-in runs keep NVRTC's output: one cache for every test,
/// so the kernels are compiled once per architecture and source.
pub fn ptx_cache() -> PathBuf {
    root().join("target").join("cuda-standin").join("ptx-cache")
}

/// `LD_LIBRARY_PATH` with the stand-in first, then what the environment
/// gives (NVRTC's folder).
pub fn library_path() -> String {
    let mut p = lib_dir().display().to_string();
    if let Ok(rest) = std::env::var("LD_LIBRARY_PATH") {
        if !rest.is_empty() {
            p.push(':');
            p.push_str(&rest);
        }
    }
    p
}

/// `--vectors` for the stand-in runs of tests about other things: the
/// known-answer vectors a measuring run begins with would add launches
/// that their knobs (a fault at the Nth launch, a slow device, copy logs)
/// count. tests/vectors.rs runs them on the stand-in.
pub const NO_VECTORS: &str = "none";

/// `pqcprof` running on the stand-in, with `knobs` as
/// `PQCPROF_STANDIN_<NAME>=<value>` (e.g. `("SMS", "1")`), without the
/// vectors at the start of a run ([`NO_VECTORS`]).
pub fn pqcprof(knobs: &[(&str, &str)]) -> assert_cmd::Command {
    let mut c = super::pqcprof();
    c.env("LD_LIBRARY_PATH", library_path())
        .env("PQCPROF_PTX_CACHE", ptx_cache())
        .env("PQCPROF_VECTORS", NO_VECTORS);
    for (k, v) in knobs {
        c.env(format!("PQCPROF_STANDIN_{k}"), v);
    }
    c
}

/// Runs `c` to its end: (success, stdout then stderr as text).
pub fn run_for_text(c: &mut std::process::Command) -> (bool, String) {
    let out = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// FNV-1a over the stand-in NVML's sources and the header it shares with
/// the driver.
fn nvml_source_hash() -> String {
    let dir = root().join("tests/fixtures/nvml-standin");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files.push(root().join("tests/fixtures/cuda-standin/gpu_state.h"));
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        for b in name.bytes().chain(std::fs::read(&p).unwrap()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The folder holding the stand-in NVML's `libnvidia-ml.so.1`
/// (tests/fixtures/nvml-standin/), built on first use into
/// `target/nvml-standin/<source hash>`.
pub fn nvml_lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = root()
            .join("target")
            .join("nvml-standin")
            .join(nvml_source_hash());
        if !dir.join("libnvidia-ml.so.1").exists() {
            let out = std::process::Command::new(root().join("tests/fixtures/nvml-standin/build"))
                .arg(root())
                .arg(&dir)
                .output()
                .expect("tests/fixtures/nvml-standin/build runs (bash and the system C++ compiler, c++)");
            assert!(
                out.status.success(),
                "building the stand-in NVML failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        dir
    })
    .clone()
}

/// `pqcprof` on the stand-in driver with the stand-in NVML beside it,
/// `knobs` as `PQCPROF_STANDIN_<NAME>=<value>` (the NVML's own knobs are
/// `NVML_*`, e.g. `("NVML_ORDER", "reversed")`).
pub fn pqcprof_with_nvml(knobs: &[(&str, &str)]) -> assert_cmd::Command {
    let mut c = pqcprof(knobs);
    c.env(
        "LD_LIBRARY_PATH",
        format!("{}:{}", nvml_lib_dir().display(), library_path()),
    );
    c
}
