//! Plugins (`--backend plugin:PATH`, `check --plugin PATH`): the RustCrypto
//! example measured beside liboqs and through `offload`, its vectors passed,
//! and the flawed fixtures of tests/fixtures/plugins/flawed.c (a missing
//! symbol, another ABI version, a wrong size, an unknown algorithm, a wrong
//! output byte, a crash, a hang) each refused or failed with a message
//! naming the plugin, what was checked and the value, every other record of
//! the run kept.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pqcprof() -> Command {
    Command::cargo_bin("pqcprof").unwrap()
}

/// The RustCrypto example plugin, built once (its own crate and lock file)
/// where `scripts/build-plugins` (and so `./pipeline`) builds it, so a suite
/// run after the pipeline finds it built.
fn rustcrypto() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let target = root().join("examples/plugins/rustcrypto/target");
        let manifest = root().join("examples/plugins/rustcrypto/Cargo.toml");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        common::must_run(
            &cargo,
            &[
                "build",
                "--release",
                "--locked",
                "--manifest-path",
                manifest.to_str().unwrap(),
                "--target-dir",
                target.to_str().unwrap(),
            ],
        );
        target.join("release/libpqcprof_plugin_rustcrypto.so")
    })
}

/// The fixture plugin with `flaw` ("" for none), built with cc and c++.
fn fixture(flaw: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let name = if flaw.is_empty() { "good" } else { flaw };
    let define = format!("-DFLAW_{flaw}");
    let define = (!flaw.is_empty()).then_some(define.as_str());
    common::c_plugin(&DIR, "flawed.c", &["host_mlkem"], name, define)
}

/// The one run file in `dir`, parsed.
fn run_json(dir: &Path) -> Value {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .expect("a run file");
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// The records of the one run file in `dir`.
fn records(dir: &Path) -> Vec<Value> {
    run_json(dir)["records"].as_array().unwrap().clone()
}

/// `bench` of ML-KEM-512 on liboqs and the plugin at `lib`; the records
/// and what the command wrote to standard error.
fn bench_beside_liboqs(lib: &Path, extra: &[&str]) -> (Vec<Value>, String, i32) {
    let out = tempfile::tempdir().unwrap();
    let backend = format!("liboqs,plugin:{}", lib.display());
    let o = pqcprof()
        .args(["bench", "--backend", &backend, "--alg", "ML-KEM-512"])
        .args(["--batch", "8", "--runs", "2", "--threads", "1"])
        .args(extra)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (records(out.path()), err, o.status.code().unwrap_or(-1))
}

fn plugin_records(recs: &[Value]) -> Vec<&Value> {
    recs.iter()
        .filter(|r| r["backend"].as_str().unwrap().starts_with("plugin-"))
        .collect()
}

fn liboqs_all_ok(recs: &[Value]) {
    let liboqs: Vec<&Value> = recs
        .iter()
        .filter(|r| r["backend"] == "liboqs-cpu")
        .collect();
    assert_eq!(liboqs.len(), 3, "liboqs's records are kept");
    assert!(liboqs.iter().all(|r| r["status"] == "ok"), "{liboqs:#?}");
}

fn reason(r: &Value) -> String {
    r["reason"].as_str().unwrap_or("").to_string()
}

#[test]
fn the_rustcrypto_example_is_measured_beside_liboqs_and_says_what_ran() {
    let lib = rustcrypto();
    let out = tempfile::tempdir().unwrap();
    let backend = format!("liboqs,plugin:{}", lib.display());
    pqcprof()
        .args([
            "bench",
            "--backend",
            &backend,
            "--alg",
            "ML-KEM-768,ML-DSA-44",
        ])
        .args(["--batch", "16", "--runs", "3", "--threads", "1,2", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let recs = records(out.path());
    let plugin = plugin_records(&recs);
    // Thread-safe: measured at both thread counts, every operation.
    assert_eq!(plugin.len(), 12, "{plugin:#?}");
    let sha = common::must_run("sha256sum", &[lib.to_str().unwrap()]);
    let sha = String::from_utf8_lossy(&sha.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    for r in &plugin {
        assert_eq!(r["status"], "ok", "{r:#}");
        assert_eq!(r["backend"], "plugin-rustcrypto");
        let p = &r["plugin"];
        assert_eq!(p["name"], "rustcrypto");
        assert_eq!(p["abi_version"], 1);
        assert_eq!(p["memory"], "host");
        assert_eq!(p["sha256"], sha.as_str());
        assert!(p["version"].as_str().unwrap().contains("ml-kem 0.3"));
        let checks = r["gate"]["checks"].to_string();
        assert!(
            checks.contains("every item's outputs written in every run"),
            "{checks}"
        );
        if r["operation"] == "Verify" {
            assert!(
                checks.contains("invalid ones (at positions drawn each run) rejected"),
                "{checks}"
            );
        } else {
            assert!(checks.contains("byte for byte"), "{checks}");
        }
    }
    assert!(plugin.iter().any(|r| r["threads"] == 2));
    assert_eq!(
        recs.iter().filter(|r| r["backend"] == "liboqs-cpu").count(),
        12
    );
}

#[test]
fn check_plugin_runs_the_vectors_on_the_rustcrypto_example() {
    let lib = rustcrypto();
    // Every case: among them Wycheproof's out-of-range secret keys, on
    // which ml-dsa panics; the plugin refuses them instead of aborting.
    let o = pqcprof()
        .args(["check", "--plugin"])
        .arg(lib)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{text}\n{err}");
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap();
    let n: Vec<u64> = total
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!((n[0], n[2]), (3274, 0), "{total}");
    assert!(n[1] > 3000, "{total}");
    // The panics are the call's error, never a message or backtrace on
    // the worker's stderr.
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert!(text.contains("plugin rustcrypto"), "{text}");
    assert!(
        text.contains("ABI version 1, host memory, thread-safe"),
        "{text}"
    );
    assert!(text.contains("ML-DSA-87 (keygen, sign, verify)"), "{text}");
}

#[test]
fn offload_serves_through_the_rustcrypto_example() {
    let lib = rustcrypto();
    let out = tempfile::tempdir().unwrap();
    let backend = format!("plugin:{}", lib.display());
    let o = pqcprof()
        .args(["offload", "--backend", &backend])
        .args(["--alg", "ML-KEM-512", "--op", "encaps", "--rate", "200"])
        .args(["--window", "1", "--workers", "1", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The run file and the CSV say which plugin served.
    let files: Vec<PathBuf> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let json = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"));
    let run: Value = serde_json::from_slice(&std::fs::read(json.unwrap()).unwrap()).unwrap();
    let plugin = &run["offload"]["plugin"];
    assert_eq!(plugin["name"], "rustcrypto", "{run:#}");
    assert_eq!(plugin["abi_version"], 1);
    let csv = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "csv"));
    let csv = std::fs::read_to_string(csv.unwrap()).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(at("plugin"), "rustcrypto", "{csv}");
    assert_eq!(at("plugin_abi"), "1");
    assert_eq!(at("plugin_memory"), "host");
    assert_eq!(at("plugin_sha256").len(), 64);
}

#[test]
fn a_correct_c_plugin_passes_its_gate_and_its_vectors() {
    let lib = fixture("");
    let (recs, err, code) = bench_beside_liboqs(&lib, &[]);
    assert_eq!(code, 0, "{err}");
    liboqs_all_ok(&recs);
    let p = plugin_records(&recs);
    assert_eq!(p.len(), 3);
    assert!(p.iter().all(|r| r["status"] == "ok"), "{p:#?}");
    pqcprof()
        .args(["check", "--sample", "2", "--plugin"])
        .arg(&lib)
        .assert()
        .success();
}

/// A plugin refused at load: every record it was asked for fails with the
/// reason, liboqs's are kept, and `check --plugin` says the same.
fn refused(flaw: &str, says: &[&str]) {
    let lib = fixture(flaw);
    let (recs, err, code) = bench_beside_liboqs(&lib, &[]);
    assert_ne!(code, 0, "{err}");
    liboqs_all_ok(&recs);
    let p = plugin_records(&recs);
    assert_eq!(p.len(), 3, "{recs:#?}");
    for r in p {
        assert_eq!(r["status"], "failed", "{r:#}");
        let why = reason(r);
        assert!(why.contains(lib.to_str().unwrap()), "{why}");
        for s in says {
            assert!(why.contains(s), "{flaw}: {why:?} lacks {s:?}");
        }
    }
    let o = pqcprof()
        .args(["check", "--plugin"])
        .arg(&lib)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(lib.to_str().unwrap()), "{err}");
    for s in says {
        assert!(err.contains(s), "{flaw}: {err:?} lacks {s:?}");
    }
}

#[test]
fn a_missing_entry_symbol_is_refused() {
    refused("MISSING_SYMBOL", &["missing symbol pqcprof_plugin_v1"]);
}

#[test]
fn another_abi_version_is_refused() {
    refused("ABI", &["ABI version: expected 1, got 2"]);
}

#[test]
fn an_unknown_minor_version_is_refused() {
    refused(
        "MINOR",
        &["ABI version: expected 1.0 (1) or 1.1 (0x00010001), got 1.2 (0x00020001)"],
    );
}

#[test]
fn own_randomness_for_an_operation_not_offered_is_refused() {
    refused(
        "OWN_BITS",
        &["own_randomness: bit 0x8 (ML-DSA sign) names an operation no listed set implements"],
    );
}

#[test]
fn a_size_that_is_not_the_standards_is_refused() {
    refused(
        "SIZE",
        &["ML-KEM-512 ciphertext_bytes: expected 768 (FIPS 203), got 767"],
    );
}

#[test]
fn an_unknown_algorithm_name_is_refused() {
    refused("UNKNOWN_ALG", &["algorithm name", "got \"ML-KEM-513\""]);
}

#[test]
fn a_wrong_output_byte_fails_the_gate_and_nothing_is_timed() {
    let lib = fixture("BYTE");
    let (recs, err, code) = bench_beside_liboqs(&lib, &[]);
    assert_ne!(code, 0, "{err}");
    liboqs_all_ok(&recs);
    let p = plugin_records(&recs);
    let keygen = p.iter().find(|r| r["operation"] == "KeyGen").unwrap();
    assert_eq!(keygen["status"], "failed");
    assert!(
        keygen["run_seconds"]
            .as_array()
            .is_none_or(|v| v.is_empty()),
        "a failed gate is never timed: {keygen:#}"
    );
    let why = reason(keygen);
    for s in [
        "plugin fixture-c ML-KEM-512 keygen",
        "operation 3: ek differs from the reference",
        "at byte 5",
        lib.to_str().unwrap(),
    ] {
        assert!(why.contains(s), "{why:?} lacks {s:?}");
    }
    // Its other operations are correct and measured.
    let ok = p.iter().filter(|r| r["status"] == "ok").count();
    assert_eq!(ok, 2, "{p:#?}");
}

#[test]
fn a_crash_mid_run_is_a_failed_record_naming_the_signal() {
    let lib = fixture("CRASH");
    let (recs, err, code) = bench_beside_liboqs(&lib, &[]);
    assert_ne!(code, 0, "{err}");
    liboqs_all_ok(&recs);
    let p = plugin_records(&recs);
    assert_eq!(p.len(), 3, "{recs:#?}");
    for r in &p {
        if r["operation"] == "Decaps" {
            assert_eq!(r["status"], "failed");
            let why = reason(r);
            assert!(why.contains("SIGSEGV"), "{why}");
            assert!(why.contains("ML-KEM-512 decaps"), "{why}");
            assert!(why.contains(lib.to_str().unwrap()), "{why}");
        } else {
            assert_eq!(
                r["status"], "ok",
                "the records before the crash are kept: {r:#}"
            );
        }
    }
}

#[test]
fn a_hang_is_bounded_by_the_deadline() {
    let lib = fixture("HANG");
    let t = std::time::Instant::now();
    let (recs, err, _) = bench_beside_liboqs(&lib, &["--deadline", "20"]);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(40),
        "took {:?}",
        t.elapsed()
    );
    liboqs_all_ok(&recs);
    let p = plugin_records(&recs);
    let decaps = p.iter().find(|r| r["operation"] == "Decaps").unwrap();
    assert_eq!(decaps["status"], "failed", "{err}");
    let why = reason(decaps);
    assert!(why.contains("no answer within"), "{why}");
    assert!(why.contains("ML-KEM-512 decaps"), "{why}");
    assert!(why.contains(lib.to_str().unwrap()), "{why}");
    let ok = p.iter().filter(|r| r["status"] == "ok").count();
    assert_eq!(ok, 2, "keygen and encaps measured before the hang: {p:#?}");
}

#[test]
fn what_a_plugin_prints_is_never_taken_for_an_answer() {
    // Each key generation prints a line shaped like the worker's answer
    // with a timing of a nanosecond.
    let lib = fixture("PRINTS");
    let (recs, err, code) = bench_beside_liboqs(&lib, &["--op", "keygen"]);
    assert_eq!(code, 0, "{err}");
    let p = plugin_records(&recs);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0]["status"], "ok", "{:#}", p[0]);
    let seconds = p[0]["run_seconds"].as_array().unwrap();
    assert!(
        seconds.iter().all(|s| s.as_f64().unwrap() > 1e-7),
        "{seconds:?}"
    );
    assert!(
        err.contains("Seconds"),
        "the plugin's line goes to standard error"
    );
}

#[test]
fn a_bad_plugin_name_on_the_command_line_is_refused() {
    pqcprof()
        .args(["bench", "--backend", "plugin:", "--runs", "1"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "plugin: takes the plugin library's path",
        ));
}

/// The run file's `vectors` section of the one run file in `dir`.
fn run_vectors(dir: &Path) -> Vec<Value> {
    run_json(dir)["vectors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_run_keeps_the_vectors_the_plugin_passed_in_its_worker() {
    let lib = rustcrypto();
    let out = tempfile::tempdir().unwrap();
    let backend = format!("plugin:{}", lib.display());
    // `gpu` takes plugins as `cpu` does: where one runs is its own.
    pqcprof()
        .args(["gpu", "--backend", &backend, "--alg", "ML-KEM-768"])
        .args(["--op", "keygen", "--batch", "4", "--runs", "2", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let v = run_vectors(out.path());
    let entry = v
        .iter()
        .find(|e| e["backend"] == "plugin-rustcrypto")
        .unwrap_or_else(|| panic!("{v:#?}"));
    assert_eq!(entry["parameter_sets"], serde_json::json!(["ML-KEM-768"]));
    assert!(
        entry["implementation"]
            .as_str()
            .unwrap()
            .contains("plugin rustcrypto"),
        "{entry:#}"
    );
    let suites = entry["suites"].as_array().unwrap();
    let passed: u64 = suites.iter().map(|s| s["passed"].as_u64().unwrap()).sum();
    let failed: u64 = suites.iter().map(|s| s["failed"].as_u64().unwrap()).sum();
    assert!(passed > 0, "{entry:#}");
    assert_eq!(failed, 0, "{entry:#}");
    // Its cuPQC-shaped folder says which library made the figures.
    let info: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("plugin-rustcrypto-1t/plugin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(info["name"], "rustcrypto");
    assert_eq!(info["memory"], "host");
    assert_eq!(info["sha256"].as_str().unwrap().len(), 64);
    // The report says what each plugin is and which vectors it passed.
    let run_file = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .unwrap();
    let md = out.path().join("r.md");
    pqcprof()
        .arg("report")
        .arg(&run_file)
        .args(["--format", "markdown", "-o"])
        .arg(&md)
        .assert()
        .success();
    let md = std::fs::read_to_string(md).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| Plugins |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("plugin-rustcrypto: rustcrypto"), "{row}");
    assert!(row.contains("ABI 1, host memory, SHA-256"), "{row}");
    let vectors = md
        .lines()
        .find(|l| l.starts_with("| Known-answer vectors |"))
        .unwrap();
    assert!(
        vectors.contains("plugin-rustcrypto: ML-KEM-768"),
        "{vectors}"
    );
}

#[test]
fn check_plugin_survives_a_plugin_that_crashes_and_names_the_signal() {
    // Decapsulation crashes; each group runs in a worker of its own turn,
    // so the crash costs the decapsulation groups one failed case each and
    // every other group is still asked.
    let lib = fixture("CRASH");
    let o = pqcprof()
        .args(["check", "--sample", "2", "--plugin"])
        .arg(&lib)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    // pqcprof itself ends with its own code (3: a case failed), not by the
    // plugin's signal.
    assert_eq!(o.status.code(), Some(3), "{text}\n{err}");
    let decaps = text
        .lines()
        .find(|l| l.contains("tg4 ML-KEM-512 decapsulation"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = decaps.split_whitespace().collect();
    let failed = cells[cells.len() - 4];
    assert_eq!(failed, "1", "{decaps}");
    assert!(
        text.contains("FAILED ACVP ML-KEM-encapDecap-FIPS203 tg4 ML-KEM-512 decapsulation")
            && text.contains(
                "known-answer vectors: its worker process was killed by SIGSEGV (signal 11)"
            ),
        "{text}"
    );
    assert!(text.contains(lib.to_str().unwrap()), "{text}");
    // Wycheproof's groups come after ACVP's: asked of a new worker, they pass.
    let later_passed = text
        .lines()
        .filter(|l| l.trim_start().starts_with("Wycheproof") && l.contains("mlkem_512"))
        .any(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            c.len() > 5 && c[c.len() - 5].parse::<u64>().unwrap_or(0) > 0
        });
    assert!(later_passed, "{text}");
}
