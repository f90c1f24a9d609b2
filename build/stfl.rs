//! The stateful-signature part of the build script (included by build.rs).
//!
//! oqs-sys builds liboqs without XMSS and LMS: it never turns
//! `OQS_ENABLE_SIG_STFL_*` on, and liboqs only generates stateful keys and
//! signatures with `OQS_HAZARDOUS_EXPERIMENTAL_ENABLE_SIG_STFL_KEY_SIG_GEN`.
//! Rebuilding oqs-sys's liboqs with them would change the library every
//! other liboqs baseline runs (and `scripts/liboqs-speed`'s oqsconfig.h
//! guard). So this makes a *second* static build of the very same vendored
//! liboqs source tree, configured as oqs-sys configures it (Release,
//! `OQS_DIST_BUILD`, no OpenSSL) but with every KEM and stateless signature
//! family off and only XMSS and LMS on, then:
//!
//! 1. `ld -r --whole-archive` joins the archive into one relocatable object,
//!    resolving every internal reference inside it;
//! 2. `objcopy --keep-global-symbols` makes every symbol it defines local
//!    except the few entry points pqcprof calls ([`ENTRY_POINTS`]);
//! 3. `objcopy --redefine-syms` renames those with the `pqcprof_stfl_`
//!    prefix ([`PREFIX`]);
//! 4. `nm` checks the result defines exactly those globals, and `ar` wraps
//!    it as `libpqcprof_stfl.a`.
//!
//! Nothing in it can clash with, or be picked instead of, oqs-sys's copy of
//! liboqs. The result is kept in OUT_DIR with a stamp naming its source and
//! recipe, so later builds (the script reruns on every commit) reuse it.
//! `PQCPROF_STFL_BUILD` says what was built. A failure stops the build with
//! its reason: it needs nothing beyond what oqs-sys already needs (cmake, a
//! C compiler) and binutils (ld, objcopy, nm, ar), which come with gcc.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Prefix of the renamed entry points (src/sweep/stfl.rs declares them).
pub const PREFIX: &str = "pqcprof_stfl_";

/// The liboqs functions pqcprof calls in the stateful build (sig_stfl.h).
pub const ENTRY_POINTS: [&str; 14] = [
    "OQS_version",
    "OQS_SIG_STFL_alg_count",
    "OQS_SIG_STFL_alg_identifier",
    "OQS_SIG_STFL_alg_is_enabled",
    "OQS_SIG_STFL_new",
    "OQS_SIG_STFL_free",
    "OQS_SIG_STFL_keypair",
    "OQS_SIG_STFL_sign",
    "OQS_SIG_STFL_verify",
    "OQS_SIG_STFL_sigs_remaining",
    "OQS_SIG_STFL_sigs_total",
    "OQS_SIG_STFL_SECRET_KEY_new",
    "OQS_SIG_STFL_SECRET_KEY_free",
    "OQS_SIG_STFL_SECRET_KEY_SET_store_cb",
];

/// The families oqs-sys turns on, all off here (alg_support.cmake's names).
const OTHER_FAMILIES: [&str; 14] = [
    "KEM_BIKE",
    "KEM_FRODOKEM",
    "KEM_NTRUPRIME",
    "KEM_CLASSIC_MCELIECE",
    "KEM_HQC",
    "KEM_KYBER",
    "KEM_ML_KEM",
    "SIG_DILITHIUM",
    "SIG_ML_DSA",
    "SIG_FALCON",
    "SIG_SPHINCS",
    "SIG_MAYO",
    "SIG_CROSS",
    "SIG_UOV",
];

/// Bumped whenever the recipe below changes, so a cached build is redone.
const RECIPE: u32 = 1;

/// Entry point from build.rs.
pub fn configure() {
    println!("cargo:rerun-if-changed=build/stfl.rs");
    println!("cargo:rerun-if-env-changed=PQCPROF_LIBOQS_SRC");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("liboqs-stfl");
    match build(&out) {
        Ok(what) => {
            println!("cargo:rustc-link-search=native={}", out.display());
            println!("cargo:rustc-link-lib=static=pqcprof_stfl");
            println!("cargo:rustc-env=PQCPROF_STFL_BUILD={what}");
        }
        Err(reason) => panic!(
            "pqcprof's stateful-signature (XMSS/LMS) build of liboqs failed: {reason}. It needs cmake, a C compiler and binutils (ld, objcopy, nm, ar)"
        ),
    }
}

/// The liboqs source tree oqs-sys builds: `$PQCPROF_LIBOQS_SRC`, else the
/// oqs-sys version in Cargo.lock under `$CARGO_HOME/registry/src/*/`.
fn liboqs_source() -> Result<(PathBuf, String), String> {
    if let Some(p) = env::var_os("PQCPROF_LIBOQS_SRC").filter(|p| !p.is_empty()) {
        return Ok((PathBuf::from(p), "from PQCPROF_LIBOQS_SRC".into()));
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let lock = fs::read_to_string(manifest.join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    let version = loop {
        match lines.next() {
            Some("name = \"oqs-sys\"") => {
                break lines
                    .next()
                    .and_then(|l| l.strip_prefix("version = \""))
                    .and_then(|l| l.strip_suffix('"'))
                    .ok_or("Cargo.lock: no version after oqs-sys")?
                    .to_string()
            }
            Some(_) => {}
            None => return Err("Cargo.lock has no oqs-sys".into()),
        }
    };
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let registry = cargo_home.join("registry/src");
    let dirs = fs::read_dir(&registry).map_err(|e| format!("{}: {e}", registry.display()))?;
    dirs.filter_map(|d| d.ok())
        .map(|d| d.path().join(format!("oqs-sys-{version}")).join("liboqs"))
        .find(|p| p.join("CMakeLists.txt").is_file())
        .map(|p| (p, format!("oqs-sys {version}")))
        .ok_or_else(|| {
            format!(
                "oqs-sys {version}'s liboqs source not found under {} (set PQCPROF_LIBOQS_SRC)",
                registry.display()
            )
        })
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let o = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let tail: Vec<&str> = err.lines().rev().take(15).collect();
        return Err(format!(
            "{what} failed ({}): {}",
            o.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Builds (or reuses) `out/libpqcprof_stfl.a`; returns what was built.
fn build(out: &Path) -> Result<String, String> {
    let (src, origin) = liboqs_source()?;
    let lib = out.join("libpqcprof_stfl.a");
    let stamp_path = out.join("stamp");
    let target = env::var("TARGET").unwrap_or_default();
    let stamp = format!(
        "recipe {RECIPE}\nsource {}\ntarget {target}\n",
        src.display()
    );
    if lib.is_file() && fs::read_to_string(&stamp_path).ok().as_deref() == Some(&stamp) {
        return Ok(fs::read_to_string(out.join("what")).unwrap_or_default());
    }
    let started = Instant::now();
    let _ = fs::remove_dir_all(out);
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let cmake_dir = out.join("cmake");
    let mut cfg = Command::new("cmake");
    cfg.arg("-S").arg(&src).arg("-B").arg(&cmake_dir).args([
        "-DCMAKE_BUILD_TYPE=Release",
        "-DBUILD_SHARED_LIBS=OFF",
        "-DOQS_BUILD_ONLY_LIB=ON",
        "-DOQS_DIST_BUILD=ON",
        "-DOQS_USE_OPENSSL=OFF",
        "-DOQS_ENABLE_SIG_STFL_XMSS=ON",
        "-DOQS_ENABLE_SIG_STFL_LMS=ON",
        "-DOQS_HAZARDOUS_EXPERIMENTAL_ENABLE_SIG_STFL_KEY_SIG_GEN=ON",
    ]);
    for f in OTHER_FAMILIES {
        cfg.arg(format!("-DOQS_ENABLE_{f}=OFF"));
    }
    run(&mut cfg, "cmake configure")?;
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".into());
    run(
        Command::new("cmake")
            .arg("--build")
            .arg(&cmake_dir)
            .args(["--target", "oqs", "-j", &jobs]),
        "cmake --build",
    )?;
    let archive = cmake_dir.join("lib/liboqs.a");
    let joined = out.join("joined.o");
    run(
        Command::new("ld")
            .arg("-r")
            .arg("--whole-archive")
            .arg(&archive)
            .arg("-o")
            .arg(&joined),
        "ld -r",
    )?;
    // Two objcopy passes, so the keep list names the original symbols and
    // the rename applies to what stayed global.
    let local = out.join("local.o");
    let renamed = out.join("pqcprof_stfl.o");
    // (objcopy option, its list's line for an entry point, input, output)
    type Pass<'a> = (&'a str, fn(&str) -> String, &'a Path, &'a Path);
    let passes: [Pass; 2] = [
        ("keep-global-symbols", |s| format!("{s}\n"), &joined, &local),
        (
            "redefine-syms",
            |s| format!("{s} {PREFIX}{s}\n"),
            &local,
            &renamed,
        ),
    ];
    for (option, line, input, output) in passes {
        let list = out.join(format!("{option}.txt"));
        let text: String = ENTRY_POINTS.iter().map(|s| line(s)).collect();
        fs::write(&list, text).map_err(|e| e.to_string())?;
        run(
            Command::new("objcopy")
                .arg(format!("--{option}={}", list.display()))
                .arg(input)
                .arg(output),
            &format!("objcopy --{option}"),
        )?;
    }
    check_globals(&renamed)?;
    run(Command::new("ar").arg("crs").arg(&lib).arg(&renamed), "ar")?;
    for f in [&joined, &local] {
        let _ = fs::remove_file(f);
    }
    let _ = fs::remove_dir_all(&cmake_dir);
    let what = format!(
        "a second static build of the liboqs source of {origin} with only XMSS and LMS, its symbols kept apart ({} {PREFIX}* entry points); built in {:.0} s",
        ENTRY_POINTS.len(),
        started.elapsed().as_secs_f64()
    );
    fs::write(out.join("what"), &what).map_err(|e| e.to_string())?;
    fs::write(&stamp_path, stamp).map_err(|e| e.to_string())?;
    Ok(what)
}

/// The object must define exactly the renamed entry points as globals.
fn check_globals(obj: &Path) -> Result<(), String> {
    let listing = run(
        Command::new("nm").args(["-g", "--defined-only"]).arg(obj),
        "nm",
    )?;
    let mut defined: Vec<String> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    defined.sort();
    let mut want: Vec<String> = ENTRY_POINTS
        .iter()
        .map(|s| format!("{PREFIX}{s}"))
        .collect();
    want.sort();
    if defined != want {
        return Err(format!(
            "the joined object's global symbols are {defined:?}, expected {want:?}"
        ));
    }
    Ok(())
}
