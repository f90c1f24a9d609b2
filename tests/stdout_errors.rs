//! Standard output that cannot be written: every command that prints, with
//! standard output on a full device (`> /dev/full`) or closed before it
//! starts (`>&-`), ends with one error line naming standard output and
//! exit 1, never a panic or a silent success; `man --out` replaces a link
//! in its folder instead of writing through it.

mod common;

use common::{outcome, pqcprof, tiny_run};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pqcprof")
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// Every command line that prints to standard output, with `-q` so that
/// its standard error holds errors only; `dir` takes what they write.
fn printing_commands(dir: &Path) -> Vec<Vec<String>> {
    let run = tiny_run(&dir.join("runs")).display().to_string();
    let out = |name: &str| dir.join(name).display().to_string();
    let lines: Vec<Vec<String>> = vec![
        vec!["sizes".into(), "--filter".into(), "ML-KEM-768".into()],
        vec![
            "sizes".into(),
            "--filter".into(),
            "ML-KEM-768".into(),
            "--out".into(),
            out("sizes.csv"),
        ],
        vec!["check".into()],
        vec!["check".into(), "--json".into()],
        vec!["completions".into(), "bash".into()],
        vec!["man".into(), "--out".into(), out("man")],
        vec!["sweep".into(), "--list".into()],
        vec!["kernels".into(), "--variants".into()],
        vec![
            "compare".into(),
            fixture("compare/old.json"),
            fixture("compare/new.json"),
        ],
        vec!["report".into(), run.clone(), "-o".into(), "-".into()],
        vec!["report".into(), run, "-o".into(), out("report.html")],
        vec![
            "plan".into(),
            "--from".into(),
            fixture("plan/ml-kem-768-encaps.json"),
            "--alg".into(),
            "ML-KEM-768".into(),
            "--op".into(),
            "encaps".into(),
            "--rate".into(),
            "1000".into(),
            "--handoff-ms".into(),
            "0".into(),
        ],
        common::words("cpu --alg ML-KEM-512 --op keygen --batch 2 --runs 5 --threads 1 --vectors none --out")
            .into_iter()
            .map(String::from)
            .chain([out("cpu")])
            .collect(),
        common::words("offload --alg ML-KEM-768 --op encaps --rate 200 --window 0.1 --max-batch 2 --max-wait 1 --batch-top 2 --out")
            .into_iter()
            .map(String::from)
            .chain([out("offload")])
            .collect(),
        vec!["--help".into()],
        vec!["bench".into(), "-h".into()],
        vec!["--version".into()],
    ];
    lines
        .into_iter()
        .map(|l| std::iter::once("-q".to_string()).chain(l).collect())
        .collect()
}

/// Whether `err` is one line naming standard output, with no panic.
fn one_line_about_stdout(err: &str) -> bool {
    err.lines().count() == 1
        && err.contains("cannot write to standard output")
        && !err.contains("panicked")
}

#[test]
fn a_full_device_is_one_error_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = vec![];
    for args in printing_commands(dir.path()) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(bin())
            .args(&args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let (code, err) = (o.status.code(), String::from_utf8_lossy(&o.stderr));
        if code != Some(1) || !one_line_about_stdout(&err) {
            wrong.push(format!("pqcprof {}: exit {code:?}:\n{err}", args.join(" ")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_closed_standard_output_is_one_error_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = vec![];
    for args in printing_commands(dir.path()) {
        // The shell closes descriptor 1, then runs pqcprof in its place.
        let o = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(bin())
            .args(&args)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(1) || !one_line_about_stdout(&err) || !err.contains("closed") {
            wrong.push(format!(
                "pqcprof {} >&-: {:?}:\n{err}",
                args.join(" "),
                o.status
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn output_to_dev_null_is_no_error() {
    // /dev/null is written without complaint: only a closed descriptor
    // is refused.
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" sizes --filter ML-KEM-768 > /dev/null")
        .arg(bin())
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", o);
}

#[test]
fn man_replaces_a_link_in_its_folder_and_leaves_its_target_alone() {
    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("precious.txt");
    std::fs::write(&outside, b"not a man page").unwrap();
    let man = d.path().join("man");
    std::fs::create_dir(&man).unwrap();
    let page = man.join("pqcprof-bench.1");
    std::os::unix::fs::symlink(&outside, &page).unwrap();
    let (code, out, err) = outcome(pqcprof().arg("man").arg("--out").arg(&man));
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&outside).unwrap(), b"not a man page");
    let meta = std::fs::symlink_metadata(&page).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert!(std::fs::read_to_string(&page).unwrap().contains(".TH"));
    // It names the pages it wrote, each once.
    assert!(
        out.lines().any(|l| l == page.display().to_string()),
        "{out}"
    );
}
