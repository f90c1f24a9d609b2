//! Nothing lost, nothing clobbered: unique run files under concurrency,
//! SIGTERM/SIGHUP handled like Ctrl-C, stale temporary files removed,
//! outputs that never replace devices, links, inputs or run files, no
//! panics (empty messages, closed pipes), the median's own interval,
//! compare's lost and duplicate records, bad values named with their flag,
//! and reports of hostile run files kept bounded.

mod common;

use common::{outcome, pqcprof};
use serde_json::Value;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pqcprof")
}

use common::{files, read_json, tiny_run, TINY};

/// A liboqs sweep of `algs` into `out` (`seconds` per window, no warm-up,
/// no symmetric primitives), started in the background.
fn spawn_sweep(out: &Path, algs: &str, seconds: &str) -> std::process::Child {
    Command::new(bin())
        .args([
            "sweep",
            "--warmup-seconds",
            "0",
            "--seconds",
            seconds,
            "--filter",
            algs,
        ])
        .args(["--filter", "provider:liboqs", "--no-symmetric", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child`; its exit code, failing the test with its stderr
/// when it is not `code`.
fn finish(child: std::process::Child, code: i32) {
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

// ---------------------------------------------------------------- names

#[test]
fn back_to_back_runs_in_one_second_keep_every_run_file() {
    let d = tempfile::tempdir().unwrap();
    for _ in 0..4 {
        tiny_run(d.path());
    }
    let runs = files(d.path(), "run-", ".json");
    assert_eq!(runs.len(), 4, "{runs:?}");
    for r in &runs {
        assert_eq!(read_json(r)["records"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn concurrent_runs_into_one_folder_keep_both() {
    let d = tempfile::tempdir().unwrap();
    let spawn = || {
        Command::new(bin())
            .args(common::words(TINY))
            .arg(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    finish(a, 0);
    finish(b, 0);
    assert_eq!(files(d.path(), "run-", ".json").len(), 2);
}

#[test]
fn concurrent_sweeps_keep_both_run_files_and_their_csvs() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (
        spawn_sweep(d.path(), "ML-KEM-512", "0.05"),
        spawn_sweep(d.path(), "ML-KEM-512", "0.05"),
    );
    finish(a, 0);
    finish(b, 0);
    assert_eq!(files(d.path(), "run-", "-sweep.json").len(), 2);
    assert_eq!(files(d.path(), "", ".csv").len(), 2);
}

// ---------------------------------------------------------------- signals

/// A CPU run long enough to be stopped midway: ML-KEM-512 then ML-DSA-87.
fn long_run(out: &Path) -> std::process::Child {
    Command::new(bin())
        .args(common::words(
            "cpu --alg ML-KEM-512,ML-DSA-87 --batch 64 --runs 200 --threads 1 --out",
        ))
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_and_sighup_save_like_ctrl_c() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let d = tempfile::tempdir().unwrap();
        let child = long_run(d.path());
        common::wait_for_records(
            || files(d.path(), "run-", ".json").first().cloned(),
            3,
            Duration::from_secs(120),
            "ML-KEM-512 never finished",
        );
        common::signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(130),
            "signal {sig}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let run = read_json(&files(d.path(), "run-", ".json")[0]);
        assert_eq!(run["interrupted"], true, "signal {sig}");
        assert!(run["records"].as_array().unwrap().len() >= 3);
    }
}

#[test]
fn temporary_files_of_killed_runs_are_removed_by_the_next() {
    let d = tempfile::tempdir().unwrap();
    // A pid no process has: above every pid in use, below the kernel's limit.
    let dead = (100_000u32..4_000_000)
        .rev()
        .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let alive = std::process::id();
    let stale = [
        d.path().join(format!(".run-x.json.tmp-{dead}")),
        d.path()
            .join("liboqs-cpu-1t")
            .join(format!(".mlkem_results.json.tmp-{dead}")),
    ];
    let live = d.path().join(format!(".run-y.json.tmp-{alive}"));
    let other = d.path().join("notes.tmp-1");
    for p in stale.iter().chain([&live, &other]) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"half").unwrap();
    }
    tiny_run(d.path());
    for p in &stale {
        assert!(!p.exists(), "{} is still there", p.display());
    }
    assert!(live.exists(), "a live process's file was removed");
    assert!(other.exists(), "a file pqcprof did not write was removed");
}

#[test]
fn an_interrupted_sweeps_csvs_say_partial() {
    let d = tempfile::tempdir().unwrap();
    let child = spawn_sweep(d.path(), "ML-KEM-512,ML-KEM-1024", "1");
    common::wait_for_records(
        || files(d.path(), "run-", "-sweep.json").first().cloned(),
        3,
        Duration::from_secs(60),
        "ML-KEM-512 never finished",
    );
    common::interrupt(&child);
    finish(child, 130);
    let csvs = files(d.path(), "", ".csv");
    assert_eq!(csvs.len(), 1);
    let text = std::fs::read_to_string(&csvs[0]).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("# partial:") && first.ends_with(" interrupted"),
        "{text}"
    );

    // A finished sweep's CSVs carry no such line.
    let d = tempfile::tempdir().unwrap();
    finish(spawn_sweep(d.path(), "ML-KEM-512", "0.05"), 0);
    let text = std::fs::read_to_string(&files(d.path(), "", ".csv")[0]).unwrap();
    assert!(!text.contains("partial"), "{text}");
}

// ---------------------------------------------------------------- outputs

#[test]
fn devices_and_links_are_written_through_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(&d.path().join("o"));
    // /dev/full: the write error is reported and the device stays a device.
    let (code, _, err) = outcome(pqcprof().arg("report").arg(&run).args(["-o", "/dev/full"]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/dev/full"), "{err}");
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    let (code, _, err) =
        outcome(pqcprof().args(["sizes", "--filter", "ML-KEM-512", "--out", "/dev/full"]));
    assert_eq!(code, 1, "{err}");
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    // /dev/null takes the report and stays a device.
    let (code, _, err) = outcome(pqcprof().arg("report").arg(&run).args(["-o", "/dev/null"]));
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A symbolic link: the file it points at gets the report.
    let real = d.path().join("real.html");
    let link = d.path().join("link.html");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    pqcprof()
        .arg("report")
        .arg(&run)
        .arg("-o")
        .arg(&link)
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("<html"));
}

#[test]
fn a_report_never_overwrites_an_input_or_a_run_file() {
    let d = tempfile::tempdir().unwrap();
    let a = tiny_run(d.path());
    let b = tiny_run(d.path());
    let before = std::fs::read(&a).unwrap();
    // `report X -o X`, and `report -o run-*.json` after the shell expanded it.
    for (inputs, out) in [(vec![&a], &a), (vec![&b], &a)] {
        let (code, _, err) = outcome(pqcprof().arg("report").args(inputs).arg("-o").arg(out));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("refusing to write over"), "{err}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), before);
}

#[test]
fn sizes_checks_its_output_before_working() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for (out, needle) in [
        (d.path().to_path_buf(), "folder"),
        (file.join("sizes.csv"), "a-file"),
    ] {
        let t0 = Instant::now();
        let (code, _, err) = outcome(pqcprof().args(["sizes", "--out"]).arg(&out));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(5), "it worked first");
    }
}

// ---------------------------------------------------------------- panics

#[test]
fn an_empty_message_is_signed_and_verified() {
    for extra in [&["--op", "sign"][..], &["--op", "verify"], &["--latency"]] {
        let d = tempfile::tempdir().unwrap();
        let (code, _, err) = outcome(
            pqcprof()
                .args(common::words(
                    "cpu --alg ML-DSA-44 --message-size 0 --runs 2",
                ))
                .args(["--threads", "1"])
                .args(extra)
                .arg("--out")
                .arg(d.path()),
        );
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        let run = read_json(&files(d.path(), "run-", ".json")[0]);
        assert_eq!(run["config"]["message_bytes"], 0);
        let recs = run["records"].as_array().unwrap();
        assert!(
            !recs.is_empty() && recs.iter().all(|r| r["status"] == "ok"),
            "{recs:?}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(d.path());
    let runs = [run.to_str().unwrap()];
    let cases: Vec<Vec<&str>> = vec![
        vec!["check", "--json"],
        vec!["check"],
        vec!["sweep", "--list"],
        vec!["report", runs[0], "-o", "-"],
        vec!["compare", runs[0], runs[0]],
    ];
    for args in cases {
        let mut child = Command::new(bin())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Nobody reads: the first write meets a closed pipe.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert!(
            o.status.success() || o.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?} {err}",
            o.status
        );
    }
}

// ---------------------------------------------------------------- statistics

#[test]
fn the_table_shows_the_median_with_its_own_interval() {
    let d = tempfile::tempdir().unwrap();
    let (code, out, err) = outcome(
        pqcprof()
            .args(["cpu", "--alg", "ML-KEM-512", "--batch", "4", "--runs", "20"])
            .args(["--threads", "1", "--out"])
            .arg(d.path()),
    );
    assert_eq!(code, 0, "{err}");
    let header = out.lines().next().unwrap();
    assert!(header.contains("ops/s (median)"), "{header}");
    assert!(header.contains("95% CI of the median"), "{header}");
    let run = read_json(&files(d.path(), "run-", ".json")[0]);
    let records = run["records"].as_array().unwrap();
    // One table row per record, in order.
    for (r, row) in records.iter().zip(out.lines().skip(1)) {
        let t = &r["throughput_ops_per_sec"];
        let (m, lo, hi) = (
            t["median"].as_f64().unwrap(),
            t["median_ci95"]["low"].as_f64().unwrap(),
            t["median_ci95"]["high"].as_f64().unwrap(),
        );
        assert!(lo <= m && m <= hi, "{lo} {m} {hi}");
        assert!(t["ci95"]["low"].is_f64(), "the mean's interval is kept too");
        assert!(row.contains(&format!("{lo:.1} .. {hi:.1}")), "{row}");
    }
}

/// `compare OLD NEW --fail-above 10` on two edited copies of `run`.
fn compare_edited(run: &Path, edit: impl Fn(&mut Value)) -> (i32, String, String) {
    let d = tempfile::tempdir().unwrap();
    let mut v = read_json(run);
    let new = d.path().join("new.json");
    edit(&mut v);
    std::fs::write(&new, serde_json::to_vec(&v).unwrap()).unwrap();
    outcome(
        pqcprof()
            .arg("compare")
            .arg(run)
            .arg(&new)
            .args(["--fail-above", "10"]),
    )
}

#[test]
fn compare_counts_lost_records_and_flags_duplicate_keys() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = outcome(
        pqcprof()
            .args(["cpu", "--alg", "ML-KEM-512", "--batch", "4", "--runs", "6"])
            .args(["--threads", "1", "--out"])
            .arg(d.path()),
    );
    assert_eq!(code, 0, "{err}");
    let run = files(d.path(), "run-", ".json").remove(0);
    // The same file: nothing to say.
    let (code, _, err) = compare_edited(&run, |_| {});
    assert_eq!(code, 0, "{err}");
    // Every record gone: nothing shared, so no verdict, and a gate asked
    // for (--fail-above) cannot pass on nothing compared.
    let (code, out, err) = compare_edited(&run, |v| v["records"] = Value::Array(vec![]));
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("share no record") && !out.contains("REGRESSION"),
        "{out}"
    );
    assert!(err.contains("nothing was compared"), "{err}");
    // One record failed now.
    let (code, _, _) = compare_edited(&run, |v| v["records"][0]["status"] = "failed".into());
    assert_eq!(code, 3);
    // A duplicate key: said, not compared as a change.
    let (code, out, err) = compare_edited(&run, |v| {
        let mut dup = v["records"][0].clone();
        dup["ops_per_sec"] = Value::from(dup["ops_per_sec"].as_f64().unwrap() / 2.0);
        v["records"].as_array_mut().unwrap().push(dup);
    });
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("NOT COMPARED"), "{out}");
    assert!(!out.contains("-50"), "{out}");
    assert!(err.contains("share their key"), "{err}");
}

// ---------------------------------------------------------------- bad values

#[test]
fn every_bad_value_names_its_flag() {
    // Each a usage error (2): a value out of its range where it is
    // parsed, or values that do not fit together.
    let cases: &[(&[&str], i32, &[&str])] = &[
        (
            &["cpu", "--threads", "999", "--batch", "5"],
            2,
            &["--threads 999", "--batch"],
        ),
        (
            &["cpu", "--latency", "--batch", "5"],
            2,
            &["--batch 5", "--latency"],
        ),
        (
            &["cpu", "--alg", "ML-KEM-768", "--context", "00"],
            2,
            &["--context 00", "ML-DSA"],
        ),
        (
            &["gpu", "--device", "1,1"],
            2,
            &["'1,1' for '--device", "twice"],
        ),
        (
            &["cpu", "--device", "99"],
            2,
            &["--device does not apply to `pqcprof cpu`", "`pqcprof gpu`"],
        ),
        (&["cpu", "--alg", ""], 2, &["'' for '--alg", "valid:"]),
        (&["cpu", "--alg", ","], 2, &["',' for '--alg"]),
        (&["cpu", "--op", ""], 2, &["'' for '--op", "keygen"]),
        (&["cpu", "--backend", ""], 2, &["'' for '--backend"]),
        (
            &["sweep", "--seconds", "1e-9"],
            2,
            &["'1e-9' for '--seconds", "0.01"],
        ),
        (
            &["cpu", "--runs", "-1"],
            2,
            &["'-1' for '--runs", "or auto"],
        ),
        (&["cpu", "--batch", "-5"], 2, &["'-5' for '--batch"]),
        (&["gpu", "--device", "-1"], 2, &["'-1' for '--device"]),
        (
            &["cpu", "--message-size", "-1"],
            2,
            &["--message-size", "-1"],
        ),
        (&["cpu", "--threads", "-1"], 2, &["--threads", "-1"]),
        (
            &["sweep", "--message-size", "-1"],
            2,
            &["--message-size", "-1"],
        ),
        (
            &["cpu", "--context", "zz"],
            2,
            &["'zz' for '--context", "not a hex digit"],
        ),
        (
            &["cpu", "--context", "abc"],
            2,
            &["'abc' for '--context", "odd"],
        ),
    ];
    for (args, code, needles) in cases {
        let d = tempfile::tempdir().unwrap();
        let (c, _, err) = outcome(pqcprof().args(*args).arg("--out").arg(d.path()));
        assert_eq!(c, *code, "{args:?}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: no {n:?} in {err}");
        }
        assert!(
            files(d.path(), "run-", ".json").is_empty(),
            "{args:?} measured something"
        );
    }
}

#[test]
fn backend_names_ignore_case_as_algorithms_do() {
    let d = tempfile::tempdir().unwrap();
    let mut args = common::words(TINY);
    args[0] = "bench";
    let (code, _, err) = outcome(
        pqcprof()
            .args(&args)
            .arg(d.path())
            .args(["--backend", "LIBOQS"]),
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn every_exit_code_is_documented() {
    let (_, help, _) = outcome(pqcprof().arg("--help"));
    for code in [
        "0 success",
        "1 error",
        "2 command-line",
        "3 finished",
        "4 nothing measured",
        "130 interrupted",
    ] {
        assert!(help.contains(code), "{code}: {help}");
    }
    common::assert_has(&help, &["SIGTERM", "SIGHUP"]);
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for code in ["4 nothing measured", "SIGTERM", "SIGHUP"] {
        assert!(readme.contains(code), "README: {code}");
    }
}

// ---------------------------------------------------------------- bounded input

#[test]
fn huge_strings_are_cut_and_the_page_stays_small() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(d.path());
    let mut v = read_json(&run);
    v["metadata"]["hostname"] = Value::String("h".repeat(1_000_000));
    v["records"][0]["reason"] = Value::String("r".repeat(1_000_000));
    let big = d.path().join("big.json");
    std::fs::write(&big, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = d.path().join("r.html");
    let (code, _, err) = outcome(pqcprof().arg("report").arg(&big).arg("-o").arg(&html));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("were cut"), "{err}");
    let len = std::fs::metadata(&html).unwrap().len();
    assert!(len < 2_000_000, "{len} bytes");
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("cut by pqcprof report"));
}

/// The largest resident size of any child this process has waited for, bytes.
fn children_max_rss_bytes() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN covers children already waited for.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    u.ru_maxrss as u64 * 1024
}

#[test]
fn thirty_thousand_records_report_in_bounded_memory() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(d.path());
    let mut v = read_json(&run);
    let rec = v["records"][0].clone();
    let algs = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"];
    let recs: Vec<Value> = (0..30_000)
        .map(|i| {
            let mut r = rec.clone();
            r["threads"] = Value::from(1 + i / 3);
            r["algorithm"] = Value::from(algs[i % 3]);
            r
        })
        .collect();
    v["records"] = Value::Array(recs);
    let big = d.path().join("big.json");
    std::fs::write(&big, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = d.path().join("r.html");
    // Its own process, so the resident size measured is the report's.
    let o = Command::new(bin())
        .arg("report")
        .arg(&big)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rss = children_max_rss_bytes();
    assert!(rss < 2 << 30, "{} MiB", rss >> 20);
}

#[test]
fn extreme_figures_are_drawn_and_printed_finitely() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(d.path());
    let mut v = read_json(&run);
    let rec = v["records"][0].clone();
    let mut tiny = rec.clone();
    tiny["algorithm"] = "ML-KEM-768".into();
    // Each with runs that give its figure: a record at odds with its runs
    // is left out before anything is drawn.
    let batch = rec["batch"].as_f64().unwrap();
    let runs = |ops: f64| Value::from(vec![batch / ops; 6]);
    tiny["ops_per_sec"] = Value::from(1e-300);
    tiny["throughput_ops_per_sec"]["median"] = Value::from(1e-300);
    tiny["run_seconds"] = runs(1e-300);
    tiny.as_object_mut().unwrap().remove("batch_ms");
    let mut huge = rec.clone();
    huge["algorithm"] = "ML-KEM-1024".into();
    huge["ops_per_sec"] = Value::from(1e300);
    huge["throughput_ops_per_sec"]["median"] = Value::from(1e300);
    huge["run_seconds"] = runs(1e300);
    huge.as_object_mut().unwrap().remove("batch_ms");
    v["records"] = Value::Array(vec![rec, tiny, huge]);
    let f = d.path().join("extreme.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = d.path().join("r.html");
    let out = pqcprof()
        .arg("report")
        .arg(&f)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("left out"), "{err}");
    let text = std::fs::read_to_string(&html).unwrap();
    for bad in [
        "=\"-inf",
        "=\"inf",
        "=\"NaN",
        "0000000000000000000000000000",
    ] {
        assert!(!text.contains(bad), "{bad} in the page");
    }
}
