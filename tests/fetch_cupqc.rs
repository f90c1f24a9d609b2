//! scripts/fetch-cupqc's error paths and its --from path, with archives made
//! here. Nothing is downloaded: the one network case points the script at a
//! closed local port.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-cupqc")
}

fn fetch(args: &[&str], dest: &Path) -> Output {
    Command::new(script())
        .args(args)
        .arg("--dest")
        .arg(dest)
        // Never the real server, whatever a test asks for.
        .env("PQCPROF_CUPQC_BASE_URL", "http://127.0.0.1:9/")
        .output()
        .expect("run scripts/fetch-cupqc")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A tiny archive with the 0.4+ SDK layout under one top folder.
fn fake_sdk_archive(dir: &Path, name: &str) -> PathBuf {
    let top = dir.join("src-tree").join("cupqc-sdk-0.4.1-x86_64");
    std::fs::create_dir_all(top.join("include/cupqc")).unwrap();
    std::fs::create_dir_all(top.join("lib")).unwrap();
    std::fs::write(top.join("include/cupqc/pk.hpp"), "// test header\n").unwrap();
    for lib in ["libcupqc-pk.a", "libcupqc-hash.a"] {
        std::fs::write(top.join("lib").join(lib), "!<arch>\n").unwrap();
    }
    let archive = dir.join(name);
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.join("src-tree"))
        .arg("cupqc-sdk-0.4.1-x86_64")
        .status()
        .unwrap()
        .success();
    assert!(ok, "tar could not make the test archive");
    archive
}

#[test]
fn unknown_version_lists_the_valid_ones() {
    let d = tempfile::tempdir().unwrap();
    let o = fetch(&["--version", "0.5.0"], &d.path().join("sdk"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    common::assert_has(
        &e,
        &[
            "unknown cuPQC version '0.5.0'",
            "0.6.0",
            "0.4.1",
            "0.3.0",
            "0.2.0",
        ],
    );
    assert!(!d.path().join("sdk").exists());
}

#[test]
fn list_and_bad_arguments() {
    let d = tempfile::tempdir().unwrap();
    let o = fetch(&["--list"], &d.path().join("sdk"));
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0.6.0\n0.4.1\n0.3.0\n0.2.0\n"
    );
    let o = fetch(&["--frobnicate"], &d.path().join("sdk"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown argument"));
}

#[test]
fn from_a_file_that_is_not_an_archive_fails_clearly() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("cupqc-sdk-0.4.1-x86_64.tar.gz");
    std::fs::write(&junk, "this is not an archive").unwrap();
    let dest = d.path().join("sdk");
    let o = fetch(&["--from", junk.to_str().unwrap()], &dest);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a gzip-compressed tar archive"),
        "{}",
        stderr(&o)
    );
    assert!(!dest.exists());

    let o = fetch(&["--from", "/nonexistent/x.tar.gz"], &dest);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no such file"));
}

#[test]
fn from_an_archive_without_the_sdk_layout_fails_clearly() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("t/other")).unwrap();
    std::fs::write(d.path().join("t/other/readme.txt"), "x").unwrap();
    let archive = d.path().join("other.tar.gz");
    assert!(Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(d.path().join("t"))
        .arg("other")
        .status()
        .unwrap()
        .success());
    let o = fetch(
        &["--from", archive.to_str().unwrap()],
        &d.path().join("sdk"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a cuPQC SDK"), "{}", stderr(&o));
}

#[test]
fn from_a_tiny_sdk_archive_unpacks_it_and_records_the_version() {
    let d = tempfile::tempdir().unwrap();
    let archive = fake_sdk_archive(d.path(), "cupqc-sdk-0.4.1-x86_64.tar.gz");
    let dest = d.path().join("third_party/cupqc");
    // An older unpack is replaced.
    std::fs::create_dir_all(dest.join("stale")).unwrap();
    let o = fetch(&["--from", archive.to_str().unwrap()], &dest);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dest.join("include/cupqc/pk.hpp").is_file());
    assert!(dest.join("lib/libcupqc-pk.a").is_file());
    assert!(!dest.join("stale").exists());
    let stamp = std::fs::read_to_string(dest.join(".pqcprof-fetched")).unwrap();
    assert!(stamp.contains("version=0.4.1"), "{stamp}");
    common::assert_has(&stamp, &["archive=cupqc-sdk-0.4.1-x86_64.tar.gz"]);
}

#[test]
fn without_network_the_error_says_so_and_suggests_from() {
    let have = |c: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !have("curl") && !have("wget") {
        common::skipped(
            "without_network_the_error_says_so_and_suggests_from",
            "neither curl nor wget here: the download path cannot run",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = fetch(&["--version", "0.4.1"], &d.path().join("sdk"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("--from"), "{e}");
    if have("curl") {
        assert!(e.contains("cannot reach"), "{e}");
    }
    assert!(!d.path().join("sdk").exists());
}

#[test]
fn a_wrong_sha256_is_refused_and_the_right_one_verified() {
    let d = tempfile::tempdir().unwrap();
    let archive = fake_sdk_archive(d.path(), "cupqc-sdk-0.4.1-x86_64.tar.gz");
    let dest = d.path().join("sdk");
    let a = archive.to_str().unwrap();
    let bad = "00".repeat(32);
    let o = fetch(&["--from", a, "--sha256", &bad], &dest);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing it"), "{}", stderr(&o));
    assert!(!dest.exists(), "nothing unpacked");
    let sum = Command::new("sha256sum").arg(&archive).output().unwrap();
    let hex = String::from_utf8_lossy(&sum.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_ascii_uppercase();
    let o = fetch(&["--from", a, "--sha256", &hex], &dest);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("SHA-256 verified"), "{}", stderr(&o));
    let facts = std::fs::read_to_string(dest.join(".pqcprof-fetched")).unwrap();
    assert!(facts.contains("sha256_verified=yes"), "{facts}");
}

/// A tiny archive of one release's layout: `top` folder, the header, the
/// libraries and, when given, the cmake version file.
fn layout_archive(
    dir: &Path,
    top: &str,
    header: &str,
    libs: &[&str],
    cmake: Option<&str>,
) -> PathBuf {
    let root = dir.join("tree").join(top);
    std::fs::create_dir_all(root.join("include/cupqc")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::create_dir_all(root.join("cmake")).unwrap();
    std::fs::write(root.join("include/cupqc").join(header), "// test header\n").unwrap();
    for lib in libs {
        std::fs::write(root.join("lib").join(lib), "!<arch>\n").unwrap();
    }
    if let Some(v) = cmake {
        std::fs::write(
            root.join("cmake/cupqc-config-version.cmake"),
            format!("set(PACKAGE_VERSION \"{v}\")\n"),
        )
        .unwrap();
    }
    let archive = dir.join(format!("{top}.tar.gz"));
    assert!(Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.join("tree"))
        .arg(top)
        .status()
        .unwrap()
        .success());
    archive
}

#[test]
fn each_release_layout_is_checked_and_its_version_recorded() {
    let d = tempfile::tempdir().unwrap();
    // 0.2.0: cupqc.hpp and one libcupqc.a; the version from its cmake file.
    let a = layout_archive(
        d.path(),
        "cupqc-pkg-0.2.0",
        "cupqc.hpp",
        &["libcupqc.a"],
        Some("0.2.0"),
    );
    let dest = d.path().join("sdk02");
    let o = fetch(&["--from", a.to_str().unwrap()], &dest);
    assert!(o.status.success(), "{}", stderr(&o));
    let facts = std::fs::read_to_string(dest.join(".pqcprof-fetched")).unwrap();
    assert!(facts.contains("version=0.2.0"), "{facts}");
    // 0.3.0 needs libcuhash.a next to libcupqc.a.
    let a = layout_archive(
        d.path(),
        "cupqc-sdk-0.3.0-x86_64",
        "cupqc.hpp",
        &["libcupqc.a"],
        Some("0.3.0"),
    );
    let o = fetch(&["--from", a.to_str().unwrap()], &d.path().join("sdk03"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no libcuhash.a"), "{}", stderr(&o));
    // 0.6.0 without its optional libraries is fine; with a 0.2 header it is not.
    let a = layout_archive(
        d.path(),
        "cupqc-sdk-0.6.0-x86_64",
        "cupqc.hpp",
        &["libcupqc-pk.a", "libcupqc-hash.a"],
        None,
    );
    let o = fetch(&["--from", a.to_str().unwrap()], &d.path().join("sdk06"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no include/cupqc/pk.hpp"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_default_is_the_newest_release_the_found_nvcc_supports() {
    let d = tempfile::tempdir().unwrap();
    let nvcc = d.path().join("nvcc");
    std::fs::write(
        &nvcc,
        "#!/bin/sh\necho 'Cuda compilation tools, release 12.5, V12.5.40'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(script())
        .arg("--dest")
        .arg(d.path().join("sdk"))
        .env("PQCPROF_CUPQC_BASE_URL", "http://127.0.0.1:9/")
        .env("NVCC", &nvcc)
        .output()
        .unwrap();
    let e = stderr(&o);
    // 0.6.0 and 0.4.1 need 12.8; 0.3.0 is the newest for 12.5.
    assert!(e.contains("choosing cuPQC 0.3.0"), "{e}");
    assert!(e.contains("nvcc 12.5"), "{e}");
    assert!(e.contains("cupqc-sdk-0.3.0-"), "{e}");
    assert_eq!(o.status.code(), Some(1), "offline here: {e}");
}
