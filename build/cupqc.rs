//! The cuPQC part of the build script (included by build.rs).
//!
//! When the cuPQC SDK (`$CUPQC_HOME`, else `third_party/cupqc/`) and nvcc
//! (`$NVCC`, else `$CUDA_HOME/bin/nvcc`, else `nvcc` on PATH) are both
//! found, this compiles `cuda/cupqc/shim.cu` with nvcc for every
//! architecture in `PQCPROF_CUDA_ARCHS` (default `80;90`) as LTO
//! intermediate code, device-links it with the SDK's LTO archives
//! (`nvcc -dlink -dlto`), archives shim + device-link objects into a static
//! library for cargo, links the SDK's libraries and the static CUDA runtime,
//! generates Rust bindings for `cuda/cupqc/shim.h` with bindgen, and sets
//! `cfg(pqcprof_cupqc)` (plus `cfg(pqcprof_cupqc_standin)` for the test
//! stand-in). Otherwise the crate builds without the backend and exactly one
//! `cargo:warning` says how to enable it.
//!
//! The `PQCPROF_CUPQC_*` environment variables it sets for the crate let
//! `pqcprof check` say what was built (see `src/gpu/cupqc.rs`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCHS: &str = "80;90";
const SHIM_DIR: &str = "cuda/cupqc";

/// Which SDK layout was found.
struct Sdk {
    root: PathBuf,
    /// `pk.hpp` (0.4+) or `cupqc.hpp` (0.2).
    legacy_header: bool,
    /// The libraries to link, without `lib` and `.a`.
    libs: Vec<String>,
    /// Where they are (the stand-in's are built into OUT_DIR).
    lib_dir: PathBuf,
    /// Human description: version and layout.
    version: String,
    /// The minimum nvcc (major, minor) this SDK needs.
    min_nvcc: (u32, u32),
    standin: bool,
}

/// Entry point from build.rs.
pub fn configure() {
    println!("cargo::rustc-check-cfg=cfg(pqcprof_cupqc)");
    println!("cargo::rustc-check-cfg=cfg(pqcprof_cupqc_standin)");
    for var in [
        "CUPQC_HOME",
        "NVCC",
        "CUDA_HOME",
        "PATH",
        "PQCPROF_CUDA_ARCHS",
        "PQCPROF_CUPQC_NAMESPACE",
        "NVCC_CCBIN",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed={SHIM_DIR}");
    println!("cargo:rerun-if-changed={SHIM_DIR}/shim.h");
    println!("cargo:rerun-if-changed={SHIM_DIR}/shim.cu");
    println!("cargo:rerun-if-changed=build/cupqc.rs");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let sdk_dir = match env::var_os("CUPQC_HOME").filter(|v| !v.is_empty()) {
        Some(p) => manifest.join(p),
        None => manifest.join("third_party/cupqc"),
    };
    // A missing path would make cargo rerun this script on every build:
    // then watch the parent folder (third_party/), so unpacking an SDK there
    // is noticed, unless that parent is the crate root or missing too.
    if sdk_dir.exists() {
        println!("cargo:rerun-if-changed={}", sdk_dir.display());
    } else if let Some(parent) = sdk_dir
        .parent()
        .filter(|p| p.is_dir() && *p != manifest.as_path() && p.parent().is_some())
    {
        println!("cargo:rerun-if-changed={}", parent.display());
    }

    let sdk = find_sdk(&sdk_dir);
    let nvcc = find_nvcc();
    let nvcc_version = nvcc.as_ref().and_then(|n| nvcc_version(n));
    let env_out = |k: &str, v: &str| println!("cargo:rustc-env=PQCPROF_CUPQC_{k}={v}");
    env_out(
        "SDK",
        &sdk.as_ref()
            .map(|s| format!("{} at {}", s.version, s.root.display()))
            .unwrap_or_default(),
    );
    env_out(
        "NVCC",
        &match (&nvcc, nvcc_version) {
            (Some(p), Some((a, b))) => format!("nvcc {a}.{b} ({})", p.display()),
            (Some(p), None) => format!("nvcc of unknown version ({})", p.display()),
            _ => String::new(),
        },
    );

    let reason = match (&sdk, &nvcc, nvcc_version) {
        (Err(e), _, _) => Some(e.clone()),
        (Ok(_), None, _) => Some("no nvcc found ($NVCC, $CUDA_HOME/bin/nvcc, PATH)".into()),
        (Ok(s), Some(_), Some(v)) if v < s.min_nvcc => Some(format!(
            "nvcc {}.{} is older than the {}.{} this SDK needs",
            v.0, v.1, s.min_nvcc.0, s.min_nvcc.1
        )),
        _ => None,
    };
    if let Some(reason) = reason {
        env_out("ARCHS", "");
        env_out("BUILD", &format!("not built: {reason}"));
        println!(
            "cargo:warning=cuPQC backend not built ({reason}); to enable it: scripts/fetch-cupqc (or set CUPQC_HOME), make nvcc 12.8+ reachable (CUDA toolkit, $NVCC, or pip install nvidia-cuda-nvcc), and rebuild"
        );
        return;
    }
    let (Ok(mut sdk), Some(nvcc)) = (sdk, nvcc) else {
        unreachable!("checked above")
    };
    let archs = archs();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it"));
    let nvcc = usable_nvcc(&nvcc, &out.join("nvcc-overlay"));
    if sdk.standin {
        build_standin_libs(&nvcc, &mut sdk, &archs, &out);
    }
    build_shim(&nvcc, &sdk, &archs, &out);
    link_cudart(&nvcc);
    bindings(&out);

    env_out("ARCHS", &archs.join(";"));
    env_out(
        "BUILD",
        &format!(
            "built{}",
            if sdk.standin {
                " against the STAND-IN SDK (tests only, not cryptography)"
            } else {
                ""
            }
        ),
    );
    println!("cargo:rustc-cfg=pqcprof_cupqc");
    if sdk.standin {
        println!("cargo:rustc-cfg=pqcprof_cupqc_standin");
    }
}

fn find_sdk(root: &Path) -> Result<Sdk, String> {
    let inc = root.join("include");
    let header = |name: &str| {
        [inc.join("cupqc").join(name), inc.join(name)]
            .into_iter()
            .find(|p| p.is_file())
    };
    let (header_path, legacy) = match (header("pk.hpp"), header("cupqc.hpp")) {
        (Some(h), _) => (h, false),
        (None, Some(h)) => (h, true),
        _ => return Err(format!("no cuPQC SDK at {}", root.display())),
    };
    let standin = fs::read_to_string(&header_path)
        .map(|s| s.contains("PQCPROF_STANDIN"))
        .unwrap_or(false);
    let lib_dir = ["lib", "lib64"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| root.join("lib"));
    let has = |name: &str| lib_dir.join(format!("lib{name}.a")).is_file();
    let fetched = fs::read_to_string(root.join(".pqcprof-fetched"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("version=").map(str::to_string))
        });
    let (libs, layout): (Vec<&str>, &str) = if standin {
        (vec!["cupqc-pk", "cupqc-hash"], "stand-in (0.4+ layout)")
    } else if legacy {
        // 0.2: -lcupqc, with its hash library when present.
        let mut l = vec!["cupqc"];
        if has("cuhash") {
            l.push("cuhash");
        }
        (l, "0.2 layout (cupqc.hpp, libcupqc)")
    } else {
        let mut l = vec!["cupqc-pk", "cupqc-hash"];
        let newer = has("cupqc-bigint") || has("cupqc-ntt");
        for extra in ["cupqc-bigint", "cupqc-ntt"] {
            if has(extra) {
                l.push(extra);
            }
        }
        (
            l,
            if newer {
                "0.6+ layout (pk.hpp, -pk -hash -bigint -ntt)"
            } else {
                "0.4 layout (pk.hpp, -pk -hash)"
            },
        )
    };
    if !standin {
        if let Some(missing) = libs.iter().find(|l| !has(l)) {
            return Err(format!(
                "the cuPQC SDK at {} has headers but no lib{missing}.a in {}",
                root.display(),
                lib_dir.display()
            ));
        }
    }
    let version = match fetched {
        Some(v) => format!("cuPQC {v} ({layout})"),
        None if standin => "cuPQC stand-in".to_string(),
        None => format!("cuPQC SDK, {layout}"),
    };
    Ok(Sdk {
        root: root.to_path_buf(),
        legacy_header: legacy,
        libs: libs.into_iter().map(String::from).collect(),
        lib_dir,
        version,
        min_nvcc: if legacy { (12, 4) } else { (12, 8) },
        standin,
    })
}

fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = env::var_os("NVCC").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(home) = env::var_os("CUDA_HOME").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(home).join("bin/nvcc");
        if p.is_file() {
            return Some(p);
        }
    }
    env::split_paths(&env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("nvcc"))
        .find(|p| p.is_file())
}

/// `release X.Y` from `nvcc --version`.
fn nvcc_version(nvcc: &Path) -> Option<(u32, u32)> {
    let out = Command::new(nvcc).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = text.split("release ").nth(1)?;
    let ver = rest.split([',', ' ', '\n']).next()?;
    let mut it = ver.split('.').map(|x| x.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// The architectures to build for, as two-digit numbers (`80`, `90`).
fn archs() -> Vec<String> {
    let raw = env::var("PQCPROF_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.into());
    let list: Vec<String> = raw
        .split([';', ',', ' '])
        .map(|a| a.trim().trim_start_matches("sm_").to_string())
        .filter(|a| !a.is_empty())
        .collect();
    for a in &list {
        if !(a.len() >= 2 && a.chars().all(|c| c.is_ascii_digit())) {
            panic!(
                "PQCPROF_CUDA_ARCHS: '{a}' is not an architecture number like 80 or 90 (\"native\" is refused: the build machine may have no GPU)"
            );
        }
    }
    if list.is_empty() {
        panic!("PQCPROF_CUDA_ARCHS is empty; use e.g. \"80;90\"");
    }
    list
}

/// nvcc from pip (nvidia-cuda-nvcc) ships libnvvm as `lib/libnvvm.so.4`,
/// while nvlink's LTO step loads `<nvcc>/../nvvm/lib64/libnvvm.so`. In that
/// case an overlay of symbolic links in OUT_DIR gives nvcc the toolkit
/// layout it expects; nvcc finds its tree relative to where it is called.
fn usable_nvcc(nvcc: &Path, overlay: &Path) -> PathBuf {
    let Some(bin) = nvcc.parent() else {
        return nvcc.to_path_buf();
    };
    let top = bin.join("..");
    if top.join("nvvm/lib64/libnvvm.so").exists() {
        return nvcc.to_path_buf();
    }
    let Some(libnvvm) = ["lib/libnvvm.so", "lib/libnvvm.so.4", "lib64/libnvvm.so"]
        .iter()
        .map(|p| top.join(p))
        .find(|p| p.exists())
    else {
        return nvcc.to_path_buf();
    };
    let link = |from: &Path, to: &Path| {
        let _ = fs::remove_file(to);
        std::os::unix::fs::symlink(from, to)
            .unwrap_or_else(|e| panic!("nvcc overlay: linking {}: {e}", to.display()));
    };
    let _ = fs::remove_dir_all(overlay);
    fs::create_dir_all(overlay.join("bin")).expect("nvcc overlay");
    fs::create_dir_all(overlay.join("nvvm/lib64")).expect("nvcc overlay");
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for entry in fs::read_dir(bin).expect("nvcc's folder").flatten() {
        link(
            &canon(&entry.path()),
            &overlay.join("bin").join(entry.file_name()),
        );
    }
    for d in ["include", "lib", "lib64"] {
        if top.join(d).exists() {
            link(&canon(&top.join(d)), &overlay.join(d));
        }
    }
    for d in ["bin", "libdevice"] {
        if top.join("nvvm").join(d).exists() {
            link(
                &canon(&top.join("nvvm").join(d)),
                &overlay.join("nvvm").join(d),
            );
        }
    }
    link(&canon(&libnvvm), &overlay.join("nvvm/lib64/libnvvm.so"));
    overlay
        .join("bin")
        .join(nvcc.file_name().expect("nvcc file name"))
}

fn run(cmd: &mut Command, what: &str) {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {shown}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{shown}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// nvcc with the flags every compile shares. The documented `-dlto` is
/// spelled `-gencode arch=compute_XY,code=lto_XY` per architecture: nvcc
/// refuses `-dlto` together with `-gencode`, and one `-arch` cannot name
/// several architectures.
fn nvcc_compile(nvcc: &Path, archs: &[String]) -> Command {
    let mut c = Command::new(nvcc);
    c.args(["-std=c++17", "-O3", "-rdc=true", "-Xcompiler", "-fPIC"]);
    for a in archs {
        c.arg("-gencode")
            .arg(format!("arch=compute_{a},code=lto_{a}"));
    }
    if let Some(cc) = env::var_os("NVCC_CCBIN").filter(|v| !v.is_empty()) {
        c.arg("-ccbin").arg(cc);
    }
    c
}

/// The stand-in's libraries, compiled from its sources with this nvcc (an
/// LTO archive only links with the nvcc that made it).
fn build_standin_libs(nvcc: &Path, sdk: &mut Sdk, archs: &[String], out: &Path) {
    let dir = out.join("cupqc-standin-lib");
    fs::create_dir_all(&dir).expect("OUT_DIR");
    for (lib, src) in [("cupqc-pk", "pk.cu"), ("cupqc-hash", "hash.cu")] {
        let src = sdk.root.join("src").join(src);
        let obj = dir.join(format!("{lib}.o"));
        run(
            nvcc_compile(nvcc, archs)
                .arg("-I")
                .arg(sdk.root.join("include/cupqc"))
                .arg("-c")
                .arg(&src)
                .arg("-o")
                .arg(&obj),
            "compiling the cuPQC stand-in",
        );
        run(
            Command::new(nvcc)
                .arg("-lib")
                .arg(&obj)
                .arg("-o")
                .arg(dir.join(format!("lib{lib}.a"))),
            "archiving the cuPQC stand-in",
        );
    }
    sdk.lib_dir = dir;
}

fn build_shim(nvcc: &Path, sdk: &Sdk, archs: &[String], out: &Path) {
    let shim_o = out.join("cupqc_shim.o");
    let dlink_o = out.join("cupqc_shim_dlink.o");
    let lib = out.join("libpqcprof_cupqc.a");
    let mut c = nvcc_compile(nvcc, archs);
    c.arg("-I")
        .arg(sdk.root.join("include"))
        .arg("-I")
        .arg(sdk.root.join("include/cupqc"));
    if sdk.legacy_header {
        c.arg("-DPQCPROF_CUPQC_LEGACY_HEADER");
    }
    if let Ok(ns) = env::var("PQCPROF_CUPQC_NAMESPACE") {
        c.arg(format!("-DPQCPROF_CUPQC_NAMESPACE={ns}"));
    }
    c.arg("-c")
        .arg(format!("{SHIM_DIR}/shim.cu"))
        .arg("-o")
        .arg(&shim_o);
    run(&mut c, "compiling cuda/cupqc/shim.cu with nvcc");

    // Device link with the SDK's LTO archives: real SASS per architecture.
    let mut d = Command::new(nvcc);
    d.args(["-dlink", "-dlto", "-Xcompiler", "-fPIC"]);
    for a in archs {
        d.arg("-gencode")
            .arg(format!("arch=compute_{a},code=sm_{a}"));
    }
    d.arg(&shim_o).arg("-L").arg(&sdk.lib_dir);
    for l in &sdk.libs {
        d.arg(format!("-l{l}"));
    }
    d.arg("-o").arg(&dlink_o);
    run(&mut d, "device-linking the cuPQC shim (nvcc -dlink -dlto)");

    let _ = fs::remove_file(&lib);
    run(
        Command::new(env::var("AR").unwrap_or_else(|_| "ar".into()))
            .arg("crs")
            .arg(&lib)
            .arg(&shim_o)
            .arg(&dlink_o),
        "archiving the cuPQC shim",
    );
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=pqcprof_cupqc");
    println!("cargo:rustc-link-search=native={}", sdk.lib_dir.display());
    for l in &sdk.libs {
        println!("cargo:rustc-link-lib=static={l}");
    }
}

/// The CUDA runtime, statically, from the toolkit next to nvcc: the binary
/// then starts on machines without a GPU or a CUDA install (the driver is
/// only needed when a batch is prepared).
fn link_cudart(nvcc: &Path) {
    let top = fs::canonicalize(nvcc)
        .ok()
        .and_then(|p| p.parent().and_then(|b| b.parent()).map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let candidates = [
        top.join("lib64"),
        top.join("lib"),
        top.join(format!("targets/{arch}-linux/lib")),
        top.join("targets/sbsa-linux/lib"),
    ];
    match candidates
        .iter()
        .find(|d| d.join("libcudart_static.a").is_file())
    {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static=cudart_static");
        }
        None => panic!(
            "libcudart_static.a not found next to {} (looked in {:?}); with nvcc from pip, `pip install nvidia-cuda-runtime`",
            nvcc.display(),
            candidates
        ),
    }
    for l in ["stdc++", "dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
}

fn bindings(out: &Path) {
    let b = bindgen::Builder::default()
        .header(format!("{SHIM_DIR}/shim.h"))
        .allowlist_function("pqcprof_cupqc_.*")
        .allowlist_type("pqcprof_cupqc_.*")
        .allowlist_var("PQCPROF_CUPQC_.*")
        .derive_default(true)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .expect("bindgen could not read cuda/cupqc/shim.h (is libclang installed?)");
    b.write_to_file(out.join("cupqc_shim.rs"))
        .expect("writing the cuPQC bindings");
}
