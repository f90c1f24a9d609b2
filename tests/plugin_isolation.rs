//! Plugins that attack the process they run in (tests/fixtures/plugins/
//! hostile.c, built once per behaviour): each is measured beside liboqs
//! (and through `offload` and `check --plugin` where it matters), and the
//! measuring pqcprof survives it: a failed record naming why (or, where
//! nothing is wrong with the outputs, an ok one), every liboqs record kept
//! and ok, the run file complete, the exit code docs/plugins.md gives, and
//! no process left behind: every process a command started carries a
//! marker in its environment, and none with it is alive once the command
//! has ended.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The fixture plugin with `behaviour` (`-DHOSTILE_<behaviour>`), built
/// with cc and c++ over pqcprof's host build of FIPS 203.
fn fixture(behaviour: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let define = format!("-DHOSTILE_{behaviour}");
    common::c_plugin(&DIR, "hostile.c", &["host_mlkem"], behaviour, Some(&define))
}

/// The environment variable every process a command starts inherits.
const MARK: &str = "PQCPROF_ISOLATION_TEST_MARK";

/// A marker of its own for one command.
fn marker() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// The processes alive with `mark` in their environment (zombies have
/// none left): pid and command line.
fn marked(mark: &str) -> Vec<(String, String)> {
    let want = format!("{MARK}={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let pid = e.ok()?.file_name().to_str()?.to_string();
            pid.parse::<u32>().ok()?;
            let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            env.split(|&b| b == 0)
                .any(|v| v == want.as_bytes())
                .then(|| {
                    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    (pid, String::from_utf8_lossy(&cmd).replace('\0', " "))
                })
        })
        .collect()
}

/// No process the command marked `mark` started is alive (given a moment
/// for the kernel to deliver the last SIGKILL).
fn nothing_left(mark: &str) {
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        let left = marked(mark);
        if left.is_empty() {
            return;
        }
        if Instant::now() > until {
            for (pid, _) in &left {
                // Not to disturb the tests after this one.
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", pid])
                    .status();
            }
            panic!("processes left behind: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What a finished command left.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
    /// The run file, if the command wrote one.
    run: Option<Value>,
    out: tempfile::TempDir,
}

impl Outcome {
    fn records(&self) -> Vec<Value> {
        let run = self.run.as_ref().expect("a run file");
        run["records"].as_array().unwrap().clone()
    }
    fn of(&self, backend: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["backend"] == backend)
            .collect()
    }
    fn plugin(&self) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["backend"].as_str().unwrap().starts_with("plugin-"))
            .collect()
    }
    /// The plugin's record of `op` (`KeyGen`, `Encaps`, `Decaps`).
    fn plugin_op(&self, op: &str) -> Value {
        self.plugin()
            .into_iter()
            .find(|r| r["operation"] == op)
            .unwrap_or_else(|| panic!("no plugin {op} record: {:#?}", self.records()))
    }
    /// Every liboqs record kept and ok, and the run file complete.
    fn liboqs_kept(&self, ops: usize) {
        let liboqs = self.of("liboqs-cpu");
        assert_eq!(liboqs.len(), ops, "{}", self.stderr);
        assert!(liboqs.iter().all(|r| r["status"] == "ok"), "{liboqs:#?}");
        assert_eq!(self.run.as_ref().unwrap()["complete"], true);
    }
    fn file(&self, ext: &str) -> PathBuf {
        std::fs::read_dir(self.out.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == ext))
            .unwrap_or_else(|| panic!("no .{ext} in {}", self.out.path().display()))
    }
}

/// Runs pqcprof with `args` (and `--out` a new folder unless `no_out`),
/// marked, with `env` set; checks that nothing it started is left.
fn pqcprof(args: &[&str], env: &[(&str, &str)], no_out: bool) -> Outcome {
    let out = tempfile::tempdir().unwrap();
    let mark = marker();
    let mut cmd = Command::cargo_bin("pqcprof").unwrap();
    cmd.args(args)
        .env(MARK, &mark)
        .timeout(Duration::from_secs(120));
    if !no_out {
        cmd.arg("--out").arg(out.path());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t = Instant::now();
    let o = cmd.output().unwrap();
    let took = t.elapsed();
    nothing_left(&mark);
    let run = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap());
    Outcome {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        took,
        run,
        out,
    }
}

/// `bench` of ML-KEM-512 beside liboqs: batch 8, 2 runs, no vectors.
fn beside_liboqs(libs: &[&Path], extra: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut backend = "liboqs".to_string();
    for l in libs {
        backend += &format!(",plugin:{}", l.display());
    }
    let mut args = vec!["bench", "--backend", &backend, "--alg", "ML-KEM-512"];
    args.extend(["--batch", "8", "--runs", "2", "--threads", "1"]);
    args.extend(["--vectors", "none"]);
    args.extend(extra);
    pqcprof(&args, env, false)
}

/// `offload` through the plugin at `lib`: `op`, a short window.
fn offload(lib: &Path, op: &str, extra: &[&str]) -> Outcome {
    let backend = format!("plugin:{}", lib.display());
    let mut args = vec!["offload", "--backend", &backend, "--alg", "ML-KEM-512"];
    args.extend(["--op", op, "--rate", "200", "--window", "0.2"]);
    args.extend(["--workers", "1"]);
    args.extend(extra);
    pqcprof(&args, &[], false)
}

fn reason(r: &Value) -> String {
    r["reason"].as_str().unwrap_or_default().to_string()
}

#[test]
fn closing_the_standard_streams_harms_nothing() {
    // The requests and answers travel on a descriptor above 2: a plugin
    // that closes 0 to 2 (in every call, or when it is loaded) is measured
    // as any other, and pqcprof never dies of SIGPIPE.
    for behaviour in ["CLOSE_STDIO", "CLOSE_STDIO_CTOR"] {
        let lib = fixture(behaviour);
        let o = beside_liboqs(&[&lib], &[], &[]);
        assert_eq!(o.code, 0, "{behaviour}: {}", o.stderr);
        o.liboqs_kept(3);
        let p = o.plugin();
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|r| r["status"] == "ok"), "{behaviour}: {p:#?}");
    }
    let o = offload(&fixture("CLOSE_STDIO"), "encaps", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.run.unwrap()["offload"]["plugin"]["name"], "hostile");
}

#[test]
fn closing_every_descriptor_fails_its_record_naming_the_lost_channel() {
    let lib = fixture("CLOSE_ALL");
    let o = beside_liboqs(&[&lib], &[], &[]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    let decaps = o.plugin_op("Decaps");
    assert_eq!(decaps["status"], "failed");
    let why = reason(&decaps);
    for s in [
        lib.to_str().unwrap(),
        "ML-KEM-512 decaps",
        "its worker process exited with code 86: it lost its channel to pqcprof",
    ] {
        assert!(why.contains(s), "{why:?} lacks {s:?}");
    }
    // The records before are kept.
    assert_eq!(o.plugin_op("KeyGen")["status"], "ok");
    assert_eq!(o.plugin_op("Encaps")["status"], "ok");
}

#[test]
fn a_fork_then_a_crash_fails_at_once_and_leaves_no_child() {
    // The crash is seen when the worker ends, not when the child it forked
    // (which holds the channel) lets go; the child is killed with it.
    let lib = fixture("FORK_CRASH");
    let o = beside_liboqs(&[&lib], &["--deadline", "60"], &[]);
    assert!(o.took < Duration::from_secs(30), "took {:?}", o.took);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    let why = reason(&o.plugin_op("Decaps"));
    assert!(
        why.contains("its worker process was killed by SIGSEGV (signal 11)"),
        "{why}"
    );
    assert!(!why.contains("no answer"), "{why}");
}

#[test]
fn a_leak_is_the_workers_memory_and_is_bounded() {
    // 32 MiB leaked a call: the records' peak is the worker's.
    let lib = fixture("LEAK");
    let o = beside_liboqs(&[&lib], &["--op", "keygen"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o.liboqs_kept(1);
    let keygen = o.plugin_op("KeyGen");
    assert_eq!(keygen["status"], "ok", "{keygen:#}");
    let peak = keygen["peak_mem_mb"]["max"].as_f64().unwrap();
    assert!(peak > 60.0, "peak {peak} MiB: not the worker's");
    assert!(
        keygen["sampler"]
            .as_str()
            .unwrap()
            .contains("the plugin's worker process"),
        "{keygen:#}"
    );
    // Past the bound, the worker is killed and the record says how far it got.
    let o = beside_liboqs(
        &[&lib],
        &["--op", "keygen"],
        &[("PQCPROF_PLUGIN_MEMORY_MB", "64")],
    );
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(1);
    let keygen = o.plugin_op("KeyGen");
    assert_eq!(keygen["status"], "failed");
    let why = reason(&keygen);
    for s in [
        "its worker process reached",
        "MiB of resident memory, past the bound of 64 MiB (PQCPROF_PLUGIN_MEMORY_MB)",
        lib.to_str().unwrap(),
    ] {
        assert!(why.contains(s), "{why:?} lacks {s:?}");
    }
    // A bound that is not a number of MiB is refused, naming it.
    let o = beside_liboqs(
        &[&lib],
        &["--op", "keygen"],
        &[("PQCPROF_PLUGIN_MEMORY_MB", "lots")],
    );
    assert_eq!(o.code, 3, "{}", o.stderr);
    let why = reason(&o.plugin()[0]);
    assert!(why.contains("PQCPROF_PLUGIN_MEMORY_MB=\"lots\""), "{why}");
}

/// No escape sequence (ESC, BEL, CSI) in `text`.
fn no_escapes(what: &str, text: &str) {
    assert!(
        !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
        "{what} holds a raw control character: {text:?}"
    );
}

#[test]
fn a_plugins_escapes_are_shown_escaped_and_csv_cells_are_text() {
    let lib = fixture("ESCAPES");
    let o = beside_liboqs(&[&lib], &[], &[]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    no_escapes("bench's standard error", &o.stderr);
    no_escapes("bench's standard output", &o.stdout);
    let why = reason(&o.plugin_op("Decaps"));
    assert!(
        why.contains(r"returned 1: \x1b[2J\x1b]0;pwned\x07decaps \x1b[31mfailed\x1b[0m"),
        "{why}"
    );
    assert!(o.stderr.contains(r"\x1b[2J\x1b]0;pwned"), "{}", o.stderr);
    let version = o.plugin_op("KeyGen")["plugin"]["version"].clone();
    assert_eq!(version, r"=1+1\x1b]0;pwned\x07\x1b[2J");
    // `check --plugin` describes it escaped.
    let plugin = lib.to_str().unwrap();
    let c = pqcprof(&["check", "--sample", "1", "--plugin", plugin], &[], true);
    no_escapes("check's standard output", &c.stdout);
    no_escapes("check's standard error", &c.stderr);
    assert!(
        c.stdout
            .contains(r"plugin hostile =1+1\x1b]0;pwned\x07\x1b[2J: ABI version 1"),
        "{}",
        c.stdout
    );
    // offload's CSV: the version that starts with '=' is text, not a formula.
    let o = offload(&lib, "keygen", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let csv = std::fs::read_to_string(o.file("csv")).unwrap();
    no_escapes("the offload CSV", &csv);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(at("plugin_version"), r"'=1+1\x1b]0;pwned\x07\x1b[2J");
}

#[test]
fn two_libraries_of_one_name_are_refused_naming_both() {
    let (a, b) = (fixture("TWIN_A"), fixture("TWIN_B"));
    let o = beside_liboqs(&[&a, &b], &[], &[]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    // The first keeps its name and its records; the second is refused, its
    // records named by its file, never mixed into plugin-twin's.
    let first = o.of("plugin-twin");
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|r| r["status"] == "ok"), "{first:#?}");
    assert!(first
        .iter()
        .all(|r| r["plugin"]["path"] == a.to_str().unwrap()));
    let second = o.of("plugin-libTWIN_B.so");
    assert_eq!(second.len(), 3, "{:#?}", o.records());
    for r in &second {
        assert_eq!(r["status"], "failed");
        let why = reason(r);
        let both = format!(
            "plugin {}: its name \"twin\" is already declared by plugin {}",
            b.display(),
            a.display()
        );
        assert!(why.contains(&both), "{why}");
    }
}

#[test]
fn a_slow_constructor_fails_the_plugin_not_liboqs() {
    // Its load gets a quarter of the time left to the deadline; liboqs the rest.
    let lib = fixture("SLOW_CTOR");
    let o = beside_liboqs(&[&lib], &["--deadline", "12"], &[]);
    assert!(o.took < Duration::from_secs(25), "took {:?}", o.took);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    let p = o.plugin();
    assert_eq!(p.len(), 3, "{p:#?}");
    for r in &p {
        assert_eq!(r["status"], "failed");
        let why = reason(r);
        assert!(
            why.contains("loading: no answer within")
                && why.contains("(a quarter of the time left to the run's deadline"),
            "{why}"
        );
    }
}

#[test]
fn offload_and_check_end_by_their_deadline_when_a_plugin_hangs() {
    let lib = fixture("HANG");
    let o = offload(&lib, "encaps", &["--deadline", "6"]);
    assert!(o.took < Duration::from_secs(15), "took {:?}", o.took);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("ML-KEM-512 encaps run: no answer within"),
        "{}",
        o.stderr
    );
    // check --plugin: the group it waits on is named as it starts; at the
    // deadline the worker is killed, that group fails, the rest are not run.
    let plugin = lib.to_str().unwrap();
    let args = [
        "check",
        "--sample",
        "2",
        "--deadline",
        "6",
        "--plugin",
        plugin,
    ];
    let c = pqcprof(&args, &[], true);
    assert!(c.took < Duration::from_secs(15), "took {:?}", c.took);
    assert_eq!(c.code, 5, "{}\n{}", c.stdout, c.stderr);
    let waiting = "plugin hostile: vectors of ACVP ML-KEM-encapDecap-FIPS203 tg1 ML-KEM-512 encapsulation (2 case(s))";
    assert!(c.stderr.contains(waiting), "{}", c.stderr);
    assert!(
        c.stdout
            .contains("FAILED ACVP ML-KEM-encapDecap-FIPS203 tg1 ML-KEM-512 encapsulation")
            && c.stdout.contains("(check's --deadline 6)"),
        "{}",
        c.stdout
    );
    assert!(
        c.stdout
            .contains("not run: the plugin did not answer on an earlier group"),
        "{}",
        c.stdout
    );
}

#[test]
fn check_plugin_refuses_a_deadline_out_of_bounds() {
    let plugin = fixture("HANG");
    let c = pqcprof(
        &[
            "check",
            "--deadline",
            "0",
            "--plugin",
            plugin.to_str().unwrap(),
        ],
        &[],
        true,
    );
    assert_eq!(c.code, 2, "{}", c.stderr);
    assert!(c.stderr.contains("--deadline"), "{}", c.stderr);
    // --deadline belongs to --plugin.
    let c = pqcprof(&["check", "--deadline", "5"], &[], true);
    assert_eq!(c.code, 2, "{}", c.stderr);
}

#[test]
fn a_device_plugin_without_a_cuda_driver_is_a_message_not_a_panic() {
    if ::pqcprof::probe::gpu::driver_unusable().is_none() {
        common::hardware_skip(
            "a_device_plugin_without_a_cuda_driver_is_a_message_not_a_panic",
            "a CUDA driver is present",
        );
        return;
    }
    let lib = fixture("DEVICE");
    let c = pqcprof(&["check", "--plugin", lib.to_str().unwrap()], &[], true);
    assert_eq!(c.code, 1, "{}", c.stderr);
    assert!(!c.stderr.contains("panicked"), "{}", c.stderr);
    assert!(
        c.stderr
            .contains("plugin hostile declares device memory: no CUDA driver"),
        "{}",
        c.stderr
    );
    let o = beside_liboqs(&[&lib], &[], &[]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    o.liboqs_kept(3);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    for r in o.plugin() {
        assert!(reason(&r).contains("no CUDA driver"), "{r:#}");
    }
}

#[test]
fn a_kem_only_plugin_is_credited_with_no_mldsa_case() {
    // Wycheproof's ML-DSA verify groups open with signatures of another
    // length, rejected without a call: a plugin without ML-DSA is not asked
    // them, so it passes none.
    let lib = fixture("TWIN_A");
    let c = pqcprof(
        &["check", "--sample", "10", "--plugin", lib.to_str().unwrap()],
        &[],
        true,
    );
    assert_eq!(c.code, 0, "{}", c.stderr);
    let rows: Vec<&str> = c
        .stdout
        .lines()
        .filter(|l| l.contains("ML-DSA") || l.contains("mldsa"))
        .filter(|l| !l.trim_start().starts_with("n/a"))
        .collect();
    assert!(rows.len() > 10, "{}", c.stdout);
    for row in rows {
        // `cases passed failed n/a`, then `(of N)` where a sample ran.
        let cells: Vec<&str> = row
            .split(" (of ")
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let passed = cells[cells.len() - 3];
        assert_eq!(passed, "0", "credited with an ML-DSA case: {row}");
    }
}
