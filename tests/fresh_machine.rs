//! What a fresh machine needs from the scripts: libclang detected by what
//! bindgen really loads, NVRTC found in a virtual environment, no pip
//! outside one (PEP 668), and every script executable as checked in.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Creates the empty files `names` below `root`.
fn touch(root: &Path, names: &[&str]) {
    for n in names {
        let p = root.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }
}

/// `scripts/find-libclang ROOT`: (found, what it printed).
fn find_libclang(root: &Path) -> (bool, String) {
    let o = Command::new(repo().join("scripts/find-libclang"))
        .arg(root)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
    )
}

#[test]
fn libclang_cpp_alone_is_not_libclang() {
    // Debian 12 with libclang-cpp14 only: the old glob matched this.
    let d = tempfile::tempdir().unwrap();
    touch(
        d.path(),
        &[
            "usr/lib/llvm-14/lib/libclang-cpp.so.14",
            "usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
        ],
    );
    assert_eq!(find_libclang(d.path()), (false, String::new()));
}

#[test]
fn every_name_clang_sys_loads_is_found() {
    for name in [
        "usr/lib/llvm-14/lib/libclang.so",
        "usr/lib/llvm-14/lib/libclang-14.so.1",
        "usr/lib/x86_64-linux-gnu/libclang-14.so.14",
        "usr/lib64/libclang.so.17",
        "usr/local/lib/libclang-18.so",
    ] {
        let d = tempfile::tempdir().unwrap();
        touch(d.path(), &["usr/lib/llvm-14/lib/libclang-cpp.so.14", name]);
        let (found, path) = find_libclang(d.path());
        assert!(found, "{name} not found");
        assert_eq!(path, d.path().join(name).to_str().unwrap(), "{name}");
    }
}

#[test]
fn nvrtc_is_found_in_a_virtual_environment() {
    let d = tempfile::tempdir().unwrap();
    let lib = "lib/python3.11/site-packages/nvidia/cu13/lib";
    touch(d.path(), &[&format!("{lib}/libnvrtc.so.13")]);
    let o = Command::new(repo().join("scripts/find-nvrtc"))
        .env("PQCPROF_VENV", d.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        d.path().join(lib).to_str().unwrap()
    );
}

/// The shell scripts that set a machine up.
const SETUP_SCRIPTS: [&str; 2] = ["pipeline", "scripts/test"];

#[test]
fn ci_runs_exactly_the_full_test_command() {
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let code: Vec<&str> = ci
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(code.last(), Some(&"exec scripts/test"), "{ci}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first = readme
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let commands: Vec<&str> = first
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(commands, ["./pipeline", "scripts/test"], "{first}");
}

#[test]
fn setup_scripts_use_the_real_checks_and_no_system_pip() {
    for s in SETUP_SCRIPTS {
        let text = std::fs::read_to_string(repo().join(s)).unwrap();
        let code: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect();
        let code = code.join("\n");
        assert!(code.contains("scripts/find-libclang"), "{s}");
        assert!(!code.contains("libclang*.so"), "{s}: the old glob");
        assert!(code.contains("scripts/find-nvrtc"), "{s}");
        assert!(
            !code.contains("python3 -m pip"),
            "{s}: pip outside a virtual environment (PEP 668 refuses it)"
        );
    }
}

/// Tracked files, with git's mode for each; `None` outside a git checkout.
fn tracked() -> Option<Vec<(String, String)>> {
    let o = Command::new("git")
        .args(["ls-files", "-s"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                let (meta, path) = l.split_once('\t')?;
                Some((meta.split(' ').next()?.to_string(), path.to_string()))
            })
            .collect(),
    )
}

#[test]
fn every_script_is_executable() {
    let scripts: Vec<PathBuf> = std::fs::read_dir(repo().join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain(SETUP_SCRIPTS.iter().map(|s| repo().join(s)))
        .filter(|p| {
            std::fs::read(p)
                .map(|b| b.starts_with(b"#!"))
                .unwrap_or(false)
        })
        .collect();
    assert!(scripts.len() >= 8, "{scripts:?}");
    for p in &scripts {
        let mode = std::fs::metadata(p).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{} is not executable", p.display());
    }
    // What a clone gets is git's mode, not this checkout's.
    let Some(files) = tracked() else {
        common::skipped(
            "every_script_is_executable",
            "not a git checkout (or no git): the modes a clone gets are not checked",
        );
        return;
    };
    for (mode, path) in files {
        let p = repo().join(&path);
        let shebang = std::fs::read(&p)
            .map(|b| b.starts_with(b"#!"))
            .unwrap_or(false);
        if shebang {
            assert_eq!(
                mode, "100755",
                "{path} starts with #! but is not executable in git"
            );
        }
    }
}

/// The test command's own options: `--under-load` and `--full`
/// documented, anything else refused by name before anything is installed
/// or built.
#[test]
fn the_test_command_takes_under_load_and_full_and_refuses_the_rest_by_name() {
    let run = |arg: &str| {
        std::process::Command::new(repo().join("scripts/test"))
            .arg(arg)
            .output()
            .unwrap()
    };
    let help = run("--help");
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("scripts/test --under-load"), "{text}");
    assert!(text.contains("two CPU-bound processes"), "{text}");
    assert!(text.contains("scripts/test --full"), "{text}");
    assert!(text.contains("SAMPLED <test>"), "{text}");
    let bad = run("--loaded");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown argument '--loaded' (valid: --full, --under-load, --help)"),
        "{err}"
    );
}
