//! Hostile inputs: run files, folders and arguments made to mislead, hang
//! or exhaust `merge`, `report`, `compare`, `sweep` and `sizes`, and the
//! signals and kills a measuring command must survive. Each case is refused
//! with a message naming the value, or handled, and never hangs.

mod common;

use assert_cmd::Command;
use common::{files, outcome, pqcprof, read_json, tiny_run};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A command that must end within `secs` seconds (a hang fails the test).
fn bounded(secs: u64) -> Command {
    let mut c = pqcprof();
    c.timeout(Duration::from_secs(secs));
    c
}

/// `merge JOB -o OUT`, bounded to a minute: exit code, stdout, stderr.
fn merge(job: &Path, out: &Path) -> (i32, String, String) {
    outcome(bounded(60).arg("merge").arg(job).arg("-o").arg(out))
}

/// A run file of a rank: the tiny run with a Slurm block.
fn rank_file(template: &Value, path: &Path, procid: usize, ntasks: usize) {
    let mut v = template.clone();
    v["metadata"]["slurm"] = serde_json::json!({
        "job_id": "77", "procid": procid, "ntasks": ntasks, "node": "n1", "role": "cpu"
    });
    v["metadata"]["date"] = format!("2026-01-01T00:00:00Z#{procid}").into();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn merge_counts_each_file_once_and_refuses_loops_and_fifos() {
    let d = tempfile::tempdir().unwrap();
    let t = read_json(&tiny_run(&d.path().join("t")));

    // One rank, reached through a hard link, a folder link and a copy.
    let job = d.path().join("job");
    rank_file(&t, &job.join("a/run-0.json"), 0, 1);
    std::fs::create_dir_all(job.join("b")).unwrap();
    std::fs::hard_link(job.join("a/run-0.json"), job.join("b/run-0.json")).unwrap();
    std::os::unix::fs::symlink("a", job.join("c")).unwrap();
    std::fs::create_dir_all(job.join("d")).unwrap();
    std::fs::copy(job.join("a/run-0.json"), job.join("d/run-0.json")).unwrap();
    let out = d.path().join("merged.json");
    let (code, _, err) = merge(&job, &out);
    assert_eq!(code, 0, "{err}");
    let merged = read_json(&out);
    assert_eq!(merged["records"].as_array().unwrap().len(), 1, "{err}");
    assert_eq!(merged["cluster"]["ranks"].as_array().unwrap().len(), 1);
    assert!(err.contains("the same file as"), "{err}");
    assert!(err.contains("the same run as"), "{err}");

    // A link back up: `self -> .` and `up -> ..` are a loop, refused.
    std::os::unix::fs::symlink(".", job.join("a/self")).unwrap();
    std::os::unix::fs::symlink("..", job.join("a/up")).unwrap();
    let (code, _, err) = merge(&job, &out);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("a loop of links"), "{err}");
    std::fs::remove_file(job.join("a/self")).unwrap();
    std::fs::remove_file(job.join("a/up")).unwrap();

    // A FIFO named like a run file: refused, not read (a read would block).
    mkfifo(&job.join("d/run-1.json"));
    let (code, _, err) = merge(&job, &out);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("named pipe (FIFO)"), "{err}");
}

#[test]
fn merge_never_writes_over_an_input_or_a_run_file() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(&d.path().join("t"));
    let t = read_json(&run);
    let job = d.path().join("job");
    let rank = job.join("run-0.json");
    rank_file(&t, &rank, 0, 1);
    let before = std::fs::read(&rank).unwrap();
    for target in [&rank, &run] {
        let (code, _, err) = merge(&job, target);
        assert_ne!(code, 0, "{err}");
        assert!(err.contains("refusing to write over"), "{err}");
    }
    assert_eq!(std::fs::read(&rank).unwrap(), before);
    // An earlier merge's own output may be replaced: merging again works.
    let out = job.join("cluster-run.json");
    for _ in 0..2 {
        let (code, _, err) = merge(&job, &out);
        assert_eq!(code, 0, "{err}");
    }
}

#[test]
fn merge_bounds_and_checks_rank_counts() {
    let d = tempfile::tempdir().unwrap();
    let t = read_json(&tiny_run(&d.path().join("t")));
    let job = d.path().join("job");
    rank_file(&t, &job.join("run-0.json"), 0, 1);
    let out = d.path().join("m.json");
    for (text, named) in [
        (
            "cpu 18446744073709551615\ncpu 2\n",
            "cpu 18446744073709551615",
        ),
        ("cpu 100000000\n", "cpu 100000000"),
        ("cpu 60000\ncpu 60000\n", "more than 100000"),
    ] {
        std::fs::write(job.join("expected-ranks"), text).unwrap();
        let (code, _, err) = merge(&job, &out);
        assert_ne!(code, 0, "{text}: {err}");
        assert!(err.contains(named), "{text}: {err}");
    }
    std::fs::remove_file(job.join("expected-ranks")).unwrap();
    // A rank claiming 100,000,000 tasks: named, not expanded into memory.
    rank_file(&t, &job.join("run-0.json"), 0, 100_000_000);
    let (code, _, err) = merge(&job, &out);
    assert!(err.contains("task count of 100000000"), "{err}");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn ten_thousand_files_report_and_merge_in_linear_time() {
    let d = tempfile::tempdir().unwrap();
    let t = read_json(&tiny_run(&d.path().join("t")));
    // Every rank's record ran in the same windows: every pair overlaps,
    // the worst case for a pairwise overlap test.
    let job = d.path().join("job");
    std::fs::create_dir_all(&job).unwrap();
    let text = serde_json::to_string(&t).unwrap();
    let date = t["metadata"]["date"].as_str().unwrap().to_string();
    // The same commands on 1,000 files and on 10,000, timed in this test:
    // linear time takes about 10 times as long for ten times the files,
    // quadratic about 100 times (it took minutes). The bound is 30 times
    // the 1,000 files' time, so a machine slowed by other work slows both
    // alike; a hang is cut by `bounded` at 120 s.
    let small = d.path().join("job-1000");
    std::fs::create_dir_all(&small).unwrap();
    let mut paths = vec![];
    for i in 0..10_000 {
        let p = job.join(format!("run-{i:05}.json"));
        std::fs::write(&p, text.replacen(&date, &format!("{date}#{i}"), 1)).unwrap();
        if i < 1_000 {
            std::fs::copy(&p, small.join(format!("run-{i:05}.json"))).unwrap();
        }
        paths.push(p);
    }
    let timed = |c: &mut Command| {
        let start = Instant::now();
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        start.elapsed().as_secs_f64()
    };
    let merge = |dir: &Path, out: &str| {
        timed(
            bounded(120)
                .arg("merge")
                .arg(dir)
                .arg("-o")
                .arg(d.path().join(out)),
        )
    };
    let report = |files: &[PathBuf], out: &str| {
        timed(
            bounded(120)
                .arg("report")
                .args(files)
                .arg("-o")
                .arg(d.path().join(out)),
        )
    };
    for (what, thousand, ten_thousand) in [
        ("merge", merge(&small, "m1.json"), merge(&job, "m.json")),
        (
            "report",
            report(&paths[..1_000], "r1.html"),
            report(&paths, "r.html"),
        ),
    ] {
        assert!(
            ten_thousand <= 30.0 * thousand + 1.0,
            "{what}: 10,000 files took {ten_thousand:.1} s, 1,000 took {thousand:.2} s (more than 30 times; {})",
            common::load_note()
        );
    }
}

#[test]
fn oversized_inputs_devices_and_fifos_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let t = read_json(&tiny_run(&d.path().join("t")));
    let html = d.path().join("r.html");
    // 500,001 empty records: refused from the count, never built.
    let mut v = t.clone();
    v["records"] = Value::Array(vec![]);
    let text = serde_json::to_string(&v).unwrap().replacen(
        "\"records\":[]",
        &format!("\"records\":[{}{{}}]", "{},".repeat(500_000)),
        1,
    );
    let many = d.path().join("many.json");
    std::fs::write(&many, text).unwrap();
    // One record with 100,001 run times.
    let mut v = t.clone();
    v["records"][0]["run_seconds"] = Value::Array(vec![Value::from(0.001); 100_001]);
    let samples = d.path().join("samples.json");
    std::fs::write(&samples, serde_json::to_vec(&v).unwrap()).unwrap();
    let fifo = d.path().join("run-fifo.json");
    mkfifo(&fifo);
    for (input, named) in [
        (many.as_path(), "more than 500000 entries"),
        (samples.as_path(), "records[0].run_seconds"),
        (Path::new("/dev/zero"), "is a device"),
        (fifo.as_path(), "named pipe (FIFO)"),
    ] {
        for cmd in ["report", "merge"] {
            let mut c = bounded(60);
            c.arg(cmd).arg(input).arg("-o").arg(&html);
            let (code, _, err) = outcome(&mut c);
            assert_ne!(code, 0, "{cmd} {}: {err}", input.display());
            assert!(err.contains(named), "{cmd} {}: {err}", input.display());
        }
    }
}

#[test]
fn repeated_keys_and_rates_that_are_not_rates_are_named() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(&d.path().join("t"));
    let text = std::fs::read_to_string(&run).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let rate = v["records"][0]["ops_per_sec"].to_string();
    // The last of two `ops_per_sec` would win in a forgiving reader.
    let dup = d.path().join("dup.json");
    std::fs::write(
        &dup,
        text.replacen(
            &format!("\"ops_per_sec\": {rate}"),
            &format!("\"ops_per_sec\": {rate}, \"ops_per_sec\": 1e12"),
            1,
        ),
    )
    .unwrap();
    let md = d.path().join("r.md");
    let (code, _, err) = outcome(
        pqcprof()
            .arg("report")
            .arg(&dup)
            .args(["--format", "markdown", "-o"])
            .arg(&md),
    );
    assert_ne!(code, 0, "{err}");
    common::assert_has(&err, &["records[0].ops_per_sec", "appears twice"]);
    for bad in ["0.0", "-5.0"] {
        let mut w = v.clone();
        w["records"][0]["ops_per_sec"] = bad.parse::<f64>().unwrap().into();
        let f = d.path().join("rate.json");
        std::fs::write(&f, serde_json::to_vec(&w).unwrap()).unwrap();
        let (code, _, err) = outcome(
            pqcprof()
                .arg("report")
                .arg(&f)
                .args(["--format", "markdown", "-o"])
                .arg(&md),
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("records[0].ops_per_sec"), "{bad}: {err}");
        assert!(err.contains("is not a rate"), "{bad}: {err}");
        let page = std::fs::read_to_string(&md).unwrap();
        assert!(page.contains("is not a rate"), "the page lists the problem");
    }
}

#[test]
fn a_compare_with_nothing_compared_does_not_pass() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(&d.path().join("t"));
    let mut v = read_json(&run);
    v["records"] = Value::Array(vec![]);
    let empty = d.path().join("empty.json");
    std::fs::write(&empty, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out, err) = outcome(
        pqcprof()
            .arg("compare")
            .arg(&empty)
            .arg(&empty)
            .args(["--fail-above", "10"]),
    );
    assert_eq!(code, 3, "{out}{err}");
    common::assert_has(&err, &["nothing was compared", "--fail-above 10"]);
    let (code, _, err) = outcome(pqcprof().arg("compare").arg(&empty).arg(&empty));
    assert_eq!(code, 1, "{err}");
    // A real comparison still passes.
    let (code, _, err) = outcome(
        pqcprof()
            .arg("compare")
            .arg(&run)
            .arg(&run)
            .args(["--fail-above", "10"]),
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn empty_filter_terms_are_refused() {
    for f in ["", "family:", ",", " ", "ML-KEM-512,", "level: "] {
        for cmd in ["sizes", "sweep"] {
            let mut c = pqcprof();
            c.arg(cmd).args(["--filter", f]);
            if cmd == "sweep" {
                c.arg("--list");
            }
            let (code, out, err) = outcome(&mut c);
            assert_ne!(code, 0, "{cmd} --filter {f:?}: {out}");
            assert!(
                err.contains(&format!("invalid --filter {f:?}")),
                "{cmd} {f:?}: {err}"
            );
            assert!(err.contains("empty term"), "{err}");
        }
    }
    let (code, out, _) = outcome(pqcprof().args(["sweep", "--filter", "ML-KEM-512", "--list"]));
    assert_eq!(code, 0);
    assert!(out.contains("ML-KEM-512"));
}

/// A string that would retitle the terminal, clear a line and, in
/// Markdown, make a link and an image.
const HOSTILE: &str =
    "ML-KEM-512\u{1b}]0;owned\u{7}\u{1b}[2K\u{9b}31m[x](javascript:alert(1))![i](http://e.example/x.png)";

fn assert_clean(what: &str, text: &str) {
    for c in ['\u{1b}', '\u{7}', '\u{9b}'] {
        assert!(
            !text.contains(c),
            "{what}: control character {c:?} printed raw"
        );
    }
}

#[test]
fn run_file_strings_cannot_drive_the_terminal_or_make_markdown_links() {
    let d = tempfile::tempdir().unwrap();
    let run = tiny_run(&d.path().join("t"));
    let mut v = read_json(&run);
    v["records"][0]["algorithm"] = HOSTILE.into();
    v["metadata"]["hostname"] = HOSTILE.into();
    v["metadata"]["pqcprof_version"] = HOSTILE.into();
    let f = d.path().join("hostile.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();

    let (_, out, err) = outcome(pqcprof().arg("compare").arg(&f).arg(&f));
    assert!(
        out.contains("\\u{1b}]0;owned"),
        "escaped, still visible: {out}"
    );
    assert_clean("compare", &(out + &err));

    let job = d.path().join("job");
    std::fs::create_dir_all(&job).unwrap();
    std::fs::copy(&run, job.join("run-a.json")).unwrap();
    std::fs::copy(&f, job.join("run-b.json")).unwrap();
    let (code, out, err) = outcome(
        pqcprof()
            .arg("merge")
            .arg(&job)
            .arg("-o")
            .arg(d.path().join("m.json")),
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("pqcprof version differs"), "{err}");
    assert_clean("merge", &(out + &err));

    let md = d.path().join("r.md");
    let (code, _, err) = outcome(
        pqcprof()
            .arg("report")
            .arg(&f)
            .args(["--format", "markdown", "-o"])
            .arg(&md),
    );
    assert_eq!(code, 0, "{err}");
    assert_clean("report stderr", &err);
    let page = std::fs::read_to_string(&md).unwrap();
    assert_clean("markdown", &page);
    assert!(page.contains("owned"), "the string is still shown");
    assert!(!page.contains("[x](javascript:"), "a link survived");
    assert!(!page.contains("![i](http"), "an image survived");
}

#[test]
fn sizes_out_dash_is_standard_output() {
    let d = tempfile::tempdir().unwrap();
    let (code, out, err) = outcome(
        pqcprof()
            .current_dir(d.path())
            .args(common::words("sizes --filter ML-KEM-512 --out -")),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ML-KEM-512"), "{out}");
    assert!(!d.path().join("-").exists(), "a file named - was written");
}

#[test]
fn latency_with_a_batch_sweep_names_the_batch_sweep() {
    let (code, _, err) = outcome(pqcprof().args(common::words(
        "cpu --latency --batch-sweep 16 --alg ML-KEM-512",
    )));
    assert_ne!(code, 0);
    assert!(err.contains("--batch-sweep 16"), "{err}");
    assert!(!err.contains("--batch 16"), "{err}");
}

fn spawn(args: &[&str], out: &Path) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("pqcprof"))
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The first `run-*.json` in `dir`, waited for (at most 60 s).
fn wait_for_run_file(dir: &Path) -> PathBuf {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(p) = files(dir, "run-", ".json").into_iter().next() {
            return p;
        }
        assert!(Instant::now() < until, "no run file appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_second_signal_keeps_the_run_marked_interrupted() {
    // Runs of about a second: both signals arrive inside one run.
    let long = [
        "cpu",
        "--alg",
        "ML-DSA-87",
        "--op",
        "sign",
        "--batch",
        "4000",
        "--runs",
        "50",
        "--threads",
        "1",
    ];
    for (first, second) in [(libc::SIGINT, libc::SIGINT), (libc::SIGTERM, libc::SIGHUP)] {
        let d = tempfile::tempdir().unwrap();
        let child = spawn(&long, d.path());
        let run = wait_for_run_file(d.path());
        std::thread::sleep(Duration::from_millis(300));
        common::signal(&child, first);
        std::thread::sleep(Duration::from_millis(20));
        common::signal(&child, second);
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v = read_json(&run);
        assert_eq!(v["interrupted"], true, "signals {first} then {second}");
        assert_eq!(v["complete"], false);
    }
}

#[test]
fn a_run_killed_at_once_leaves_no_empty_run_file() {
    for args in [
        "sweep --filter ML-KEM-512 --warmup-seconds 0 --seconds 0.2 --no-symmetric",
        "cpu --alg ML-KEM-512 --op keygen --batch 2 --runs 50 --threads 1",
    ] {
        let args = &common::words(args)[..];
        let d = tempfile::tempdir().unwrap();
        let child = spawn(args, d.path());
        let run = wait_for_run_file(d.path());
        common::signal(&child, libc::SIGKILL);
        let _ = child.wait_with_output().unwrap();
        let bytes = std::fs::read(&run).unwrap();
        assert!(!bytes.is_empty(), "{args:?}: {} is empty", run.display());
        let v: Value = serde_json::from_slice(&bytes).expect("a whole run file");
        assert_eq!(v["format"], "pqcprof-run");
    }
}

#[test]
fn plan_leaves_out_records_at_odds_with_their_runs_or_out_of_bounds() {
    let d = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plan/ml-kem-768-encaps.json");
    let mut v = read_json(&fixture);
    // Test only: batch 64's batch time a thousand times its runs', batch
    // 256 made a batch of 0.
    let records = v["records"].as_array_mut().unwrap();
    let r64 = records.iter_mut().find(|r| r["batch"] == 64).unwrap();
    let ms = r64["batch_ms"].as_f64().unwrap() * 1000.0;
    r64["batch_ms"] = ms.into();
    let r256 = records.iter_mut().find(|r| r["batch"] == 256).unwrap();
    r256["batch"] = 0.into();
    let f = d.path().join("odd.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out, err) = outcome(
        bounded(60)
            .args(["plan", "--from"])
            .arg(&f)
            .args(["--alg", "ML-KEM-768", "--op", "encaps", "--rate", "2000"])
            .args(["--handoff-ms", "0", "--json"]),
    );
    assert_eq!(code, 0, "{err}");
    let named = |batch: &str, what: &str| {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("ML-KEM-768 encaps on liboqs-cpu, batch {batch}")))
            .unwrap_or_else(|| panic!("batch {batch}: {err}"));
        common::assert_has(line, &["odd.json", what, "left out"]);
    };
    named("64", "batch_ms (as a rate)");
    named("0", "batch 0: an ok record");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let batches: Vec<u64> = plan["curve"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [1, 4, 16], "{out}");
}

/// Every line of `err` that mentions `what`, checked to be few and short:
/// at most `lines` lines (however long the list behind them), each at
/// most 400 characters.
fn few_lines<'a>(err: &'a str, what: &str, lines: usize) -> Vec<&'a str> {
    let found: Vec<&str> = err.lines().filter(|l| l.contains(what)).collect();
    assert!(
        !found.is_empty() && found.len() <= lines && found.iter().all(|l| l.len() <= 400),
        "{} lines:\n{err}",
        found.len()
    );
    found
}

#[test]
fn long_lists_are_said_as_a_count_and_the_first_few() {
    let d = tempfile::tempdir().unwrap();
    let t = read_json(&tiny_run(&d.path().join("t")));
    // Sixty folders with no run file: the error names the count, not each.
    let empty: Vec<PathBuf> = (0..60)
        .map(|i| {
            let p = d.path().join(format!("empty-folder-number-{i:02}"));
            std::fs::create_dir_all(&p).unwrap();
            p
        })
        .collect();
    let (code, _, err) = outcome(
        bounded(60)
            .arg("merge")
            .args(&empty)
            .arg("-o")
            .arg(d.path().join("m.json")),
    );
    assert_eq!(code, 1, "{err}");
    let said = few_lines(&err, "no usable run file", 2);
    common::assert_has(said[0], &["the 60 inputs", "and 57 more", "-v"]);
    // A job of 1000 ranks of which one wrote its file: 999 missing ranks,
    // three named and a count of the rest.
    let job = d.path().join("job");
    rank_file(&t, &job.join("r0/run-0.json"), 0, 1000);
    let out = d.path().join("merged.json");
    let (code, _, err) = merge(&job, &out);
    assert_eq!(code, 3, "{err}");
    let said = few_lines(&err, "missing:", 4);
    assert!(said[3].contains("996 more, 999 in all"), "{err}");
    assert_eq!(
        read_json(&out)["cluster"]["missing"]
            .as_array()
            .unwrap()
            .len(),
        999
    );
    // A file of 200 records at odds with their runs: three named, then one
    // line with the count.
    let mut v = t.clone();
    let mut r = v["records"][0].clone();
    r["ops_per_sec"] = 1e-3.into();
    v["records"] = Value::Array(vec![r; 200]);
    let f = d.path().join("odd.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let (_, _, err) = outcome(
        bounded(60)
            .arg("report")
            .arg(&f)
            .args(["--format", "markdown", "-o", "-"]),
    );
    let said = few_lines(&err, "left out", 4);
    assert!(
        said[3].contains("197 more record(s) left out, 200 in all"),
        "{err}"
    );
    // A file of 200 records that cannot be read at all (a batch that is
    // not a number): three named, then one line with the count, in every
    // reader.
    let mut v = t.clone();
    let mut r = v["records"][0].clone();
    r["batch"] = "eight".into();
    v["records"] = Value::Array(vec![r; 200]);
    let f = d.path().join("unreadable.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let good = d.path().join("good.json");
    std::fs::write(&good, serde_json::to_vec(&t).unwrap()).unwrap();
    let (f, good) = (f.display().to_string(), good.display().to_string());
    for args in [
        vec!["report".to_string(), f.clone(), "-o".into(), "-".into()],
        vec!["compare".to_string(), good, f],
    ] {
        let (_, _, err) = outcome(bounded(60).args(&args));
        let said = few_lines(&err, "unreadable.json", 5);
        assert!(
            said.iter()
                .any(|l| l.contains("197 more warning(s) about this file, 200 in all")),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn plan_names_the_backend_nearest_a_mistyped_one_first() {
    let d = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plan/ml-kem-768-encaps.json");
    let mut v = read_json(&fixture);
    // Test only: the same records under five backends, liboqs-cpu last.
    let first = v["records"][0].clone();
    let records: Vec<Value> = [
        "openssl-cpu",
        "native-gpu",
        "cupqc",
        "other-cpu",
        "liboqs-cpu",
    ]
    .iter()
    .map(|b| {
        let mut r = first.clone();
        r["backend"] = (*b).into();
        r
    })
    .collect();
    v["records"] = Value::Array(records);
    let f = d.path().join("five.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, _, err) = outcome(
        bounded(60)
            .args(["plan", "--from"])
            .arg(&f)
            .args([
                "--backend",
                "libqs-cpu",
                "--alg",
                "ML-KEM-768",
                "--op",
                "encaps",
            ])
            .args(["--rate", "100", "--handoff-ms", "0"]),
    );
    assert_eq!(code, 1, "{err}");
    let said = few_lines(&err, "kind(s) of throughput record here", 1);
    common::assert_has(
        said[0],
        &[
            "5 kind(s)",
            "the closest: liboqs-cpu ML-KEM-768 encaps",
            "with -v",
        ],
    );
}
