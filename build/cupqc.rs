//! The cuPQC part of the build script (included by build.rs).
//!
//! When the cuPQC SDK (`$CUPQC_HOME`, else `third_party/cupqc/`) and nvcc
//! (`scripts/find-nvcc`, the search `./pipeline` uses too) are both found,
//! this compiles `cuda/cupqc/shim.cu` with nvcc as LTO intermediate code for
//! every architecture the SDK release supports and this nvcc knows (or
//! `PQCPROF_CUDA_ARCHS`), device-links it with the SDK's LTO archives
//! (`nvcc -dlink -dlto`: SASS per architecture plus PTX of the highest),
//! archives shim and device-link objects into a static library, proves the
//! host link with a small program, generates Rust bindings for
//! `cuda/cupqc/shim.h` with bindgen, and sets `cfg(pqcprof_cupqc)` (plus
//! `cfg(pqcprof_cupqc_standin)` for the test stand-in).
//!
//! Nothing here stops the build: a missing SDK or nvcc, or an SDK that fails
//! to compile or link, leaves the backend out with one `cargo:warning`
//! naming the cause, recorded for `pqcprof check`. Only
//! `PQCPROF_EXPECT_CUPQC` (any value but `none`) turns a failure into a
//! build error with nvcc's whole output. `PQCPROF_NO_CUPQC=1` leaves the
//! backend out on purpose.
//!
//! The `PQCPROF_CUPQC_*` environment variables it sets for the crate let
//! `pqcprof check` and the records say what was built (see
//! `src/backend/cupqc/mod.rs`).

use super::nvcc;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM_DIR: &str = "cuda/cupqc";

/// What one cuPQC release looks like unpacked, from NVIDIA's packages:
/// 0.2.0 and 0.3.0 as published in the repository ngkore/cuPQC (version in
/// cmake/cupqc-config-version.cmake), 0.4.1 as in sadcup/cuPQC
/// (cupqc-sdk-0.4.1-x86_64), 0.6 from NVIDIA's cuPQC README (libraries
/// -bigint and -ntt added, SM 8.0 and newer).
struct Release {
    /// `major.minor`.
    series: &'static str,
    /// The header a program includes.
    header: &'static str,
    /// Libraries every program links (without `lib` and `.a`).
    libs: &'static [&'static str],
    /// Libraries linked when present.
    optional_libs: &'static [&'static str],
    /// Architectures NVIDIA lists for the release.
    archs: &'static [u32],
    /// The oldest nvcc it documents.
    min_nvcc: (u32, u32),
}

const RELEASES: [Release; 4] = [
    Release {
        series: "0.2",
        header: "cupqc.hpp",
        libs: &["cupqc"],
        optional_libs: &[],
        archs: &[70, 75, 80, 86, 87, 89, 90],
        min_nvcc: (12, 4),
    },
    Release {
        series: "0.3",
        header: "cupqc.hpp",
        libs: &["cupqc", "cuhash"],
        optional_libs: &[],
        archs: &[70, 75, 80, 86, 87, 89, 90],
        min_nvcc: (12, 4),
    },
    Release {
        series: "0.4",
        header: "pk.hpp",
        libs: &["cupqc-pk", "cupqc-hash"],
        optional_libs: &[],
        archs: &[70, 75, 80, 86, 87, 89, 90],
        min_nvcc: (12, 8),
    },
    Release {
        series: "0.6",
        header: "pk.hpp",
        libs: &["cupqc-pk", "cupqc-hash"],
        optional_libs: &["cupqc-bigint", "cupqc-ntt"],
        archs: &[80, 86, 87, 89, 90],
        min_nvcc: (12, 8),
    },
];

/// The SDK found.
struct Sdk {
    root: PathBuf,
    release: &'static Release,
    /// `0.4.1`, or `stand-in`.
    version: String,
    /// The libraries to link, without `lib` and `.a`.
    libs: Vec<String>,
    /// Where they are (the stand-in's are built into OUT_DIR).
    lib_dir: PathBuf,
    standin: bool,
}

/// Why the backend is not part of the build.
struct Left {
    /// One line: what failed, for the warning and `pqcprof check`.
    cause: String,
    /// The whole story (commands and output), for PQCPROF_EXPECT_CUPQC.
    detail: String,
}

impl Left {
    fn plain(cause: impl Into<String>) -> Left {
        let cause = cause.into();
        Left {
            detail: cause.clone(),
            cause,
        }
    }
}

type Step<T> = Result<T, Left>;

/// Entry point from build.rs.
pub fn configure() {
    println!("cargo::rustc-check-cfg=cfg(pqcprof_cupqc)");
    println!("cargo::rustc-check-cfg=cfg(pqcprof_cupqc_standin)");
    for var in [
        "CUPQC_HOME",
        "NVCC",
        "CUDA_HOME",
        "PATH",
        "PQCPROF_VENV",
        "VIRTUAL_ENV",
        "PQCPROF_CUDA_ARCHS",
        "PQCPROF_CUPQC_NAMESPACE",
        "PQCPROF_EXPECT_CUPQC",
        "PQCPROF_NO_CUPQC",
        "NVCC_CCBIN",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    for f in ["shim.h", "shim.cu", "guard.hpp"] {
        println!("cargo:rerun-if-changed={SHIM_DIR}/{f}");
    }
    println!("cargo:rerun-if-changed={SHIM_DIR}");
    println!("cargo:rerun-if-changed=build/cupqc.rs");
    println!("cargo:rerun-if-changed=build/nvcc.rs");
    println!("cargo:rerun-if-changed=scripts/find-nvcc");

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
    let expect = env::var("PQCPROF_EXPECT_CUPQC")
        .ok()
        .filter(|v| !v.is_empty() && v != "none");
    let env_out = |k: &str, v: &str| println!("cargo:rustc-env=PQCPROF_CUPQC_{k}={v}");

    match build(&manifest, &sdk_dir) {
        Ok(done) => {
            env_out(
                "SDK",
                &format!("cuPQC {} at {}", done.sdk.version, done.sdk.root.display()),
            );
            env_out("VERSION", &done.sdk.version);
            env_out("LIBS", &lib_files(&done.sdk.libs).join(" "));
            env_out("NVCC", &done.nvcc);
            env_out("ARCHS", &join(&done.archs));
            env_out("PTX", &done.ptx.map(|p| p.to_string()).unwrap_or_default());
            let what = if done.sdk.standin {
                " against the STAND-IN SDK (tests only, not cryptography)"
            } else {
                ""
            };
            env_out("BUILD", &format!("built{what}"));
            println!("cargo:rustc-cfg=pqcprof_cupqc");
            if done.sdk.standin {
                println!("cargo:rustc-cfg=pqcprof_cupqc_standin");
            }
        }
        Err(failed) => {
            let (left, found) = *failed;
            if let Some(want) = expect {
                panic!(
                    "PQCPROF_EXPECT_CUPQC={want}, but the cuPQC backend could not be built: {}\n{}",
                    left.cause, left.detail
                );
            }
            env_out(
                "SDK",
                &found
                    .sdk
                    .as_ref()
                    .map(|s| format!("cuPQC {} at {}", s.version, s.root.display()))
                    .unwrap_or_default(),
            );
            env_out(
                "VERSION",
                found.sdk.as_ref().map_or("", |s| s.version.as_str()),
            );
            env_out("LIBS", "");
            env_out("NVCC", &found.nvcc);
            env_out("ARCHS", "");
            env_out("PTX", "");
            env_out("BUILD", &format!("not built: {}", left.cause));
            println!("cargo:warning=cuPQC backend left out: {}", left.cause);
        }
    }
}

/// What a successful build made.
struct Built {
    sdk: Sdk,
    nvcc: String,
    archs: Vec<u32>,
    /// The architecture whose PTX is embedded, if any.
    ptx: Option<u32>,
}

/// What was found before a step failed (for `check`).
#[derive(Default)]
struct Found {
    sdk: Option<Sdk>,
    nvcc: String,
}

fn build(manifest: &Path, sdk_dir: &Path) -> Result<Built, Box<(Left, Found)>> {
    let mut found = Found::default();
    if env::var("PQCPROF_NO_CUPQC").as_deref() == Ok("1") {
        return Err(Box::new((Left::plain("PQCPROF_NO_CUPQC=1 was set"), found)));
    }
    let sdk = match find_sdk(sdk_dir) {
        Ok(s) => s,
        Err(e) => {
            return Err(Box::new((
                Left::plain(format!(
                    "{e}; to enable it: scripts/fetch-cupqc (or set CUPQC_HOME), make nvcc 12.8+ reachable (CUDA toolkit, $NVCC, or pip install nvidia-cuda-nvcc), and rebuild"
                )),
                found,
            )))
        }
    };
    let nvcc_path = match nvcc::find(manifest) {
        Ok(p) => p,
        Err(e) => {
            found.sdk = Some(sdk);
            return Err(Box::new((Left::plain(e), found)));
        }
    };
    let version = nvcc::version(&nvcc_path);
    found.nvcc = match version {
        Some((a, b)) => format!("nvcc {a}.{b} ({})", nvcc_path.display()),
        None => format!("nvcc of unknown version ({})", nvcc_path.display()),
    };
    if let Some(v) = version.filter(|v| *v < sdk.release.min_nvcc) {
        let (a, b) = sdk.release.min_nvcc;
        let cause = format!(
            "nvcc {}.{} is older than the {a}.{b} cuPQC {} needs",
            v.0, v.1, sdk.version
        );
        found.sdk = Some(sdk);
        return Err(Box::new((Left::plain(cause), found)));
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it"));
    let result = (|| -> Step<(Sdk, Vec<u32>, Option<u32>)> {
        let mut sdk = sdk;
        let nvcc_here = nvcc::usable(&nvcc_path, &out.join("nvcc-overlay")).map_err(Left::plain)?;
        let archs = archs(&sdk, &nvcc_here)?;
        let highest = *archs.last().expect("archs() never returns an empty list");
        let failed = |what: &str| format!("cuPQC SDK at {} failed to {what}", sdk_dir.display());
        if sdk.standin {
            build_standin_libs(&nvcc_here, &mut sdk, &archs, &out)
                .map_err(|e| e.context(&failed("build")))?;
        }
        let embedded = build_shim(&nvcc_here, &sdk, &archs, highest, &out)
            .map_err(|(stage, e)| e.context(&failed(stage)))?;
        if !embedded {
            println!("cargo:warning=cuPQC shim built without PTX: this nvcc's device-link steps were not the expected ones (nvcc -dlink -dlto --dryrun)");
        }
        let ptx = embedded.then_some(highest);
        let cudart = nvcc::cudart_static_dir(
            &nvcc_here,
            &env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default(),
        )
        .map_err(Left::plain)?;
        host_link_probe(&sdk, &cudart, &out).map_err(|e| e.context(&failed("link")))?;
        bindings(&out)?;
        emit_links(&sdk, &cudart, &out);
        Ok((sdk, archs, ptx))
    })();
    match result {
        Ok((sdk, archs, ptx)) => Ok(Built {
            sdk,
            nvcc: found.nvcc,
            archs,
            ptx,
        }),
        Err(e) => Err(Box::new((e, found))),
    }
}

impl Left {
    /// `<what>: <first error line>; rebuild with PQCPROF_EXPECT_CUPQC=1 to see it fail`.
    fn context(self, what: &str) -> Left {
        Left {
            cause: format!(
                "{what}: {}; rebuild with PQCPROF_EXPECT_CUPQC=1 to see it fail",
                self.cause
            ),
            detail: self.detail,
        }
    }
}

fn join(archs: &[u32]) -> String {
    archs
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(";")
}

fn lib_files(libs: &[String]) -> Vec<String> {
    libs.iter().map(|l| format!("lib{l}.a")).collect()
}

/// `set(PACKAGE_VERSION "0.4.1")` in the SDK's cmake version file.
fn cmake_version(root: &Path) -> Option<String> {
    let text = fs::read_to_string(root.join("cmake/cupqc-config-version.cmake")).ok()?;
    let rest = text.split("set(PACKAGE_VERSION \"").nth(1)?;
    Some(rest.split('"').next()?.to_string())
}

fn find_sdk(root: &Path) -> Result<Sdk, String> {
    let inc = root.join("include");
    let header = |name: &str| {
        [inc.join("cupqc").join(name), inc.join(name)]
            .into_iter()
            .find(|p| p.is_file())
    };
    let Some(header_path) = header("pk.hpp").or_else(|| header("cupqc.hpp")) else {
        return Err(format!(
            "no cuPQC SDK at {} (no include/cupqc/pk.hpp or cupqc.hpp)",
            root.display()
        ));
    };
    let has_pk = header("pk.hpp").is_some();
    let standin = fs::read_to_string(&header_path)
        .map(|s| s.contains("PQCPROF_STANDIN"))
        .unwrap_or(false)
        || header("cupqc.hpp")
            .and_then(|h| fs::read_to_string(h).ok())
            .is_some_and(|s| s.contains("PQCPROF_STANDIN"));
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
        })
        .filter(|v| v != "unknown");
    let version = cmake_version(root).or(fetched);
    let by_series = |v: &str| {
        RELEASES
            .iter()
            .find(|r| v == r.series || v.starts_with(&format!("{}.", r.series)))
    };
    let release = match version.as_deref().and_then(by_series) {
        Some(r) => r,
        // No version file: tell the releases apart by their files.
        None if has_pk && (has("cupqc-bigint") || has("cupqc-ntt")) => &RELEASES[3],
        None if has_pk => &RELEASES[2],
        None if has("cuhash") => &RELEASES[1],
        None => &RELEASES[0],
    };
    if !standin && release.header == "pk.hpp" && !has_pk {
        return Err(format!(
            "the cuPQC {} SDK at {} has no include/cupqc/pk.hpp",
            version.as_deref().unwrap_or(release.series),
            root.display()
        ));
    }
    let mut libs: Vec<String> = release.libs.iter().map(|l| l.to_string()).collect();
    libs.extend(
        release
            .optional_libs
            .iter()
            .filter(|l| has(l))
            .map(|l| l.to_string()),
    );
    if !standin {
        if let Some(missing) = libs.iter().find(|l| !has(l)) {
            return Err(format!(
                "the cuPQC SDK at {} has headers but no lib{missing}.a in {}",
                root.display(),
                lib_dir.display()
            ));
        }
    }
    let version = if standin {
        format!("stand-in ({} layout)", release.series)
    } else {
        version.unwrap_or_else(|| format!("{}.x (no version file)", release.series))
    };
    Ok(Sdk {
        root: root.to_path_buf(),
        release,
        version,
        libs,
        lib_dir,
        standin,
    })
}

/// The architectures to build for: `PQCPROF_CUDA_ARCHS`, else those of the
/// SDK release that this nvcc supports. Sorted, so the last is the highest.
fn archs(sdk: &Sdk, nvcc: &Path) -> Step<Vec<u32>> {
    let supported = nvcc::architectures(nvcc);
    let mut list: Vec<u32> = match env::var("PQCPROF_CUDA_ARCHS") {
        Ok(raw) => {
            let mut l = Vec::new();
            for a in raw
                .split([';', ',', ' '])
                .map(|a| a.trim().trim_start_matches("sm_"))
            {
                if a.is_empty() {
                    continue;
                }
                match a.parse::<u32>() {
                    Ok(n) if n >= 10 => l.push(n),
                    _ => panic!(
                        "PQCPROF_CUDA_ARCHS: '{a}' is not an architecture number like 80 or 90 (\"native\" is refused: the build machine may have no GPU)"
                    ),
                }
            }
            if l.is_empty() {
                panic!("PQCPROF_CUDA_ARCHS is empty; use e.g. \"80;90\"");
            }
            l
        }
        Err(_) => sdk
            .release
            .archs
            .iter()
            .copied()
            .filter(|a| supported.as_ref().is_none_or(|s| s.contains(a)))
            .collect(),
    };
    list.sort_unstable();
    list.dedup();
    if list.is_empty() {
        return Err(Left::plain(format!(
            "{} supports none of cuPQC {}'s architectures ({}); set PQCPROF_CUDA_ARCHS",
            nvcc.display(),
            sdk.version,
            join(sdk.release.archs)
        )));
    }
    Ok(list)
}

/// The first line of a tool's output that says "error" (else the first
/// non-empty one).
fn first_error(text: &str) -> String {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or_else(|| lines().next())
        .unwrap_or("no output")
        .to_string()
}

fn run(cmd: &mut Command, what: &str) -> Step<()> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| Left::plain(format!("{what}: cannot run {shown}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Err(Left {
        cause: first_error(&text),
        detail: format!("{what} failed ({}):\n{shown}\n{text}", out.status),
    })
}

/// nvcc with the flags every compile shares. The documented `-dlto` is
/// spelled `-gencode arch=compute_XY,code=lto_XY` per architecture: nvcc
/// refuses `-dlto` together with `-gencode`, and one `-arch` cannot name
/// several architectures.
fn nvcc_compile(nvcc: &Path, archs: &[u32]) -> Command {
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
fn build_standin_libs(nvcc: &Path, sdk: &mut Sdk, archs: &[u32], out: &Path) -> Step<()> {
    let dir = out.join("cupqc-standin-lib");
    fs::create_dir_all(&dir).map_err(|e| Left::plain(format!("{}: {e}", dir.display())))?;
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
        )?;
        run(
            Command::new(nvcc)
                .arg("-lib")
                .arg(&obj)
                .arg("-o")
                .arg(dir.join(format!("lib{lib}.a"))),
            "archiving the cuPQC stand-in",
        )?;
    }
    sdk.lib_dir = dir;
    Ok(())
}

/// Compiles and device-links the shim into `libpqcprof_cupqc.a`; a failure
/// says whether it was the compile ("build") or the device link ("link").
fn build_shim(
    nvcc: &Path,
    sdk: &Sdk,
    archs: &[u32],
    ptx: u32,
    out: &Path,
) -> Result<bool, (&'static str, Left)> {
    let shim_o = out.join("cupqc_shim.o");
    let dlink_o = out.join("cupqc_shim_dlink.o");
    let lib = out.join("libpqcprof_cupqc.a");
    let mut c = nvcc_compile(nvcc, archs);
    c.arg("-I")
        .arg(sdk.root.join("include"))
        .arg("-I")
        .arg(sdk.root.join("include/cupqc"))
        .arg("-I")
        .arg(SHIM_DIR);
    if sdk.release.header == "cupqc.hpp" {
        c.arg("-DPQCPROF_CUPQC_LEGACY_HEADER");
    }
    if let Ok(ns) = env::var("PQCPROF_CUPQC_NAMESPACE") {
        c.arg(format!("-DPQCPROF_CUPQC_NAMESPACE={ns}"));
    }
    c.arg("-c")
        .arg(format!("{SHIM_DIR}/shim.cu"))
        .arg("-o")
        .arg(&shim_o);
    run(&mut c, "compiling cuda/cupqc/shim.cu with nvcc").map_err(|e| ("build", e))?;

    // Device link with the SDK's LTO archives: SASS per architecture, and
    // PTX of the highest so a newer GPU's driver can compile it.
    let dlink = || {
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
        d
    };
    let embedded = device_link_with_ptx(dlink(), ptx, out).map_err(|e| ("link", e))?;
    if !embedded {
        run(
            &mut dlink(),
            "device-linking the cuPQC shim (nvcc -dlink -dlto)",
        )
        .map_err(|e| ("link", e))?;
    }

    let _ = fs::remove_file(&lib);
    run(
        Command::new(env::var("AR").unwrap_or_else(|_| "ar".into()))
            .arg("crs")
            .arg(&lib)
            .arg(&shim_o)
            .arg(&dlink_o),
        "archiving the cuPQC shim",
    )
    .map_err(|e| ("build", e))?;
    Ok(embedded)
}

/// The nvlink step of `nvcc --dryrun` turned into one that writes PTX to
/// `ptx_file`: `--emit-ptx`, no `-report-arch`, its own output, and no
/// second write of the registration file (the SASS step writes it).
fn emit_ptx_step(step: &str, ptx_file: &Path) -> Option<String> {
    let mut s = step
        .replacen("nvlink ", "nvlink --emit-ptx ", 1)
        .replace(" -report-arch", "");
    let reg = " --register-link-binaries=\"";
    if let Some(a) = s.find(reg) {
        let end = a + reg.len() + s[a + reg.len()..].find('"')? + 1;
        s.replace_range(a..end, "");
    }
    let o = s.rfind(" -o \"")? + 5;
    let end = o + s[o..].find('"')?;
    s.replace_range(o..end, &ptx_file.display().to_string());
    Some(s)
}

/// `nvcc -dlink -dlto` cannot emit PTX (`code=compute_XY` is ignored with
/// LTO), but its nvlink can (`--emit-ptx`). So this runs the steps nvcc
/// would (`--dryrun` lists them), plus one nvlink for `ptx` with
/// `--emit-ptx`, whose output joins the fatbinary as a PTX image. Returns
/// false, having run nothing, when the steps are not the expected ones
/// (the caller then links without PTX).
fn device_link_with_ptx(mut dlink: Command, ptx: u32, out: &Path) -> Step<bool> {
    let listed = dlink.arg("--dryrun").output();
    let Ok(listed) = listed else { return Ok(false) };
    if !listed.status.success() {
        return Ok(false);
    }
    let ptx_file = out.join(format!("cupqc_shim_compute_{ptx}.ptx"));
    let mut script = vec!["set -e".to_string()];
    let (mut linked, mut bundled) = (false, false);
    for line in String::from_utf8_lossy(&listed.stderr).lines() {
        let Some(step) = line.strip_prefix("#$ ") else {
            continue;
        };
        if let Some((name, _)) = step.split_once('=').filter(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }) {
            // nvcc's own variables; only the search paths matter to the steps.
            if name == "PATH" || name == "LD_LIBRARY_PATH" {
                script.push(format!("export {step}"));
            }
            continue;
        }
        if let Some(rest) = step.strip_prefix("rm ") {
            script.push(format!("rm -f {rest}"));
        } else if step.starts_with("nvlink ") && step.contains(&format!("--arch=sm_{ptx} ")) {
            script.push(step.to_string());
            let Some(emit) = emit_ptx_step(step, &ptx_file) else {
                return Ok(false);
            };
            script.push(emit);
            linked = true;
        } else if step.starts_with("fatbinary ") && step.contains("--embedded-fatbin=") {
            script.push(step.replacen(
                "--embedded-fatbin=",
                &format!(
                    "\"--image3=kind=ptx,sm={ptx},file={}\" --embedded-fatbin=",
                    ptx_file.display()
                ),
                1,
            ));
            bundled = true;
        } else {
            script.push(step.to_string());
        }
    }
    if !(linked && bundled) {
        return Ok(false);
    }
    let path = out.join("cupqc_dlink_steps.sh");
    fs::write(&path, script.join("\n") + "\n")
        .map_err(|e| Left::plain(format!("{}: {e}", path.display())))?;
    run(
        Command::new("bash").arg(&path),
        "device-linking the cuPQC shim with PTX (nvcc -dlink -dlto steps)",
    )?;
    Ok(true)
}

/// Links a small C program against the shim, the SDK's libraries and the
/// static CUDA runtime, as the final link will: a missing symbol then
/// leaves the backend out here instead of failing the whole build later.
fn host_link_probe(sdk: &Sdk, cudart: &Path, out: &Path) -> Step<()> {
    let src = out.join("cupqc_link_probe.c");
    fs::write(
        &src,
        "#include \"shim.h\"\nint main(void) { return pqcprof_cupqc_runtime_version() > 0 ? 0 : 1; }\n",
    )
    .map_err(|e| Left::plain(format!("{}: {e}", src.display())))?;
    let cc = cc::Build::new().cpp(true).get_compiler();
    let mut c = Command::new(cc.path());
    c.arg("-x")
        .arg("c")
        .arg("-I")
        .arg(SHIM_DIR)
        .arg(&src)
        .arg("-x")
        .arg("none")
        .arg(out.join("libpqcprof_cupqc.a"))
        .arg("-L")
        .arg(&sdk.lib_dir);
    for l in &sdk.libs {
        c.arg(format!("-l{l}"));
    }
    c.arg("-L")
        .arg(cudart)
        .args([
            "-lcudart_static",
            "-lstdc++",
            "-ldl",
            "-lrt",
            "-lpthread",
            "-o",
        ])
        .arg(out.join("cupqc_link_probe"));
    run(&mut c, "host-linking a program against the cuPQC shim")
}

/// What cargo links: the shim, the SDK's libraries and the static CUDA
/// runtime (the binary then starts on machines without a GPU or a CUDA
/// install; the driver is only needed when a batch is prepared).
fn emit_links(sdk: &Sdk, cudart: &Path, out: &Path) {
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=pqcprof_cupqc");
    println!("cargo:rustc-link-search=native={}", sdk.lib_dir.display());
    for l in &sdk.libs {
        println!("cargo:rustc-link-lib=static={l}");
    }
    println!("cargo:rustc-link-search=native={}", cudart.display());
    println!("cargo:rustc-link-lib=static=cudart_static");
    for l in ["stdc++", "dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
}

fn bindings(out: &Path) -> Step<()> {
    let b = bindgen::Builder::default()
        .header(format!("{SHIM_DIR}/shim.h"))
        .allowlist_function("pqcprof_cupqc_.*")
        .allowlist_type("pqcprof_cupqc_.*")
        .allowlist_var("PQCPROF_CUPQC_.*")
        .derive_default(true)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .map_err(|e| {
            Left::plain(format!(
                "bindgen could not read cuda/cupqc/shim.h (is libclang installed?): {e}"
            ))
        })?;
    b.write_to_file(out.join("cupqc_shim.rs"))
        .map_err(|e| Left::plain(format!("writing the cuPQC bindings: {e}")))
}
