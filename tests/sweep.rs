//! `pqcprof sweep` and `pqcprof sizes` as a user meets them. Tiny windows
//! and small filters keep this to seconds.

use pqcprof::write::csv;
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::pqcprof;

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn a_quick_filtered_sweep_writes_csvs_in_the_pqc_sig_bench_c_layout() {
    let d = tempfile::tempdir().unwrap();
    pqcprof()
        .args(common::words("sweep --quick --warmup-seconds 0.01 --seconds 0.05 --filter ML-DSA-44,Ed25519,X25519,ML-KEM-512 --out"))
        .arg(d.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("CSV:"));

    let runs = files(d.path(), "-sweep.json");
    assert_eq!(runs.len(), 1);
    let run: Value = serde_json::from_slice(&std::fs::read(&runs[0]).unwrap()).unwrap();
    assert_eq!(run["complete"], true);
    assert!(
        run["symmetric"].as_array().unwrap().is_empty(),
        "symmetric needs --symmetric with a filter"
    );
    let recs = run["records"].as_array().unwrap();
    // liboqs ML-DSA-44 and ML-KEM-512, OpenSSL's too, Ed25519, X25519, and
    // the composites built on them.
    let names: Vec<String> = recs
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["provider"].as_str().unwrap(),
                r["algorithm"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "liboqs/ML-DSA-44",
        "openssl/ML-DSA-44",
        "openssl/Ed25519",
        "openssl/X25519",
        "composite/ML-DSA-44+Ed25519",
        "composite/ML-KEM-512+X25519",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    for r in recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["device"]["kind"], "cpu");
        assert!(r["iterations"].as_u64().unwrap() >= 1);
        assert!(r["ms_per_op"].as_f64().unwrap() > 0.0);
        assert!(r["gate"]["checks"].as_array().unwrap().len() >= 2);
        assert!(r["throughput_ops_per_sec"]["median"].as_f64().unwrap() > 0.0);
        if let Some(mhz) = run["metadata"]["tsc_mhz"].as_f64() {
            let want = mhz * 1e6 * r["threads"].as_f64().unwrap()
                / r["throughput_ops_per_sec"]["median"].as_f64().unwrap();
            let cycles = r["cycles_per_op"].as_f64().expect("cycles_per_op");
            assert!((cycles / want - 1.0).abs() < 1e-9, "{cycles} vs {want}");
        }
        assert!(["liboqs-cpu", "openssl-cpu", "composite-cpu"]
            .contains(&r["backend"].as_str().unwrap()));
    }
    let x = recs
        .iter()
        .find(|r| r["algorithm"] == "X25519" && r["operation"] == "Encaps")
        .unwrap();
    assert!(x["timed_window"]
        .as_str()
        .unwrap()
        .contains("modelled as a KEM"));

    let csvs = files(d.path(), ".csv");
    let kinds: Vec<String> = csvs
        .iter()
        .map(|p| {
            p.file_stem()
                .unwrap()
                .to_string_lossy()
                .rsplit('_')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds.len(), 4, "{csvs:?}");
    for k in ["traditional", "liboqs", "openssl-pqc", "composite"] {
        assert!(kinds.iter().any(|x| x == k), "{k} CSV missing: {csvs:?}");
    }
    let mut rows = 0;
    for p in &csvs {
        // <timestamp>_<arch>_<hostname>_<type>.csv
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let arch = format!("_{}_", std::env::consts::ARCH);
        assert!(stem.contains(&arch), "{stem}");
        assert!(stem.split('_').next().unwrap().ends_with('Z'), "{stem}");
        let text = std::fs::read_to_string(p).unwrap();
        let parsed = csv::parse(&text).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
        let keys: Vec<&str> = parsed.meta.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            &keys[..9],
            [
                "date",
                "liboqs",
                "openssl",
                "arch",
                "os",
                "cpu",
                "memory_mb",
                "warmup_seconds",
                "bench_seconds"
            ]
        );
        assert!(text.contains("# algorithm,operation,ms_per_op,ops_per_sec,iterations\n"));
        let kind = stem.rsplit('_').next().unwrap();
        let provider = match kind {
            "liboqs" | "composite" => kind,
            _ => "openssl",
        };
        for row in &parsed.rows {
            assert!(["keygen", "encaps", "decaps", "sign", "verify"].contains(&row[1].as_str()));
            // The row is its run-file record, and the record's figures are
            // its own window's: iterations over the time they took.
            let r = recs
                .iter()
                .find(|r| {
                    r["provider"] == provider
                        && r["algorithm"] == row[0].as_str()
                        && r["operation"].as_str().unwrap().to_lowercase() == row[1]
                })
                .unwrap_or_else(|| panic!("{}: no record for {row:?}", p.display()));
            let (ms, ops) = (
                r["ms_per_op"].as_f64().unwrap(),
                r["ops_per_sec"].as_f64().unwrap(),
            );
            let iterations = r["iterations"].as_u64().unwrap();
            assert_eq!(
                row[2..],
                [
                    format!("{ms:.6}"),
                    format!("{ops:.3}"),
                    iterations.to_string()
                ],
                "{r}"
            );
            assert_eq!(r["threads"], 1);
            let window: f64 = r["run_seconds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_f64().unwrap())
                .sum();
            let rate = iterations as f64 / window;
            assert!((ops - rate).abs() <= 1e-9 * rate, "{ops} != {rate}: {r}");
            assert!((ms * ops - 1000.0).abs() <= 1e-9 * 1000.0, "{r}");
        }
        rows += parsed.rows.len();
    }
    assert_eq!(rows, recs.len());
}

#[test]
fn list_prints_what_would_run() {
    pqcprof()
        .args(["sweep", "--list", "--filter", "provider:openssl,family:RSA"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("RSA-PSS-3072")
                .and(predicate::str::contains("RSA-PKCS1-2048")),
        )
        .stdout(predicate::str::contains("RSA-PSS-8192").not());
    pqcprof()
        .args(["sweep", "--list", "--slow", "--filter", "RSA-PSS-8192"])
        .assert()
        .success()
        .stdout(predicate::str::contains("RSA-PSS-8192"));
    // Every liboqs family this build enables is listed.
    pqcprof()
        .args(["sweep", "--list", "--filter", "provider:liboqs"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("Falcon-padded-512")
                .and(predicate::str::contains("Classic-McEliece-348864")),
        );
}

#[test]
fn a_filter_matching_nothing_names_the_closest() {
    pqcprof()
        .args(["sweep", "--filter", "Falcon-513", "--seconds", "0.01"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no algorithm matches 'Falcon-513'")
                .and(predicate::str::contains("Falcon-512")),
        );
}

#[test]
fn zero_or_negative_windows_are_errors() {
    pqcprof()
        .args(["sweep", "--seconds", "0", "--filter", "Ed25519"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'0' for '--seconds"));
    pqcprof()
        .args(["sweep", "--seconds", "-2", "--filter", "Ed25519"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'-2' for '--seconds"));
    pqcprof()
        .args(["sweep", "--warmup-seconds", "-1", "--filter", "Ed25519"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'-1' for '--warmup-seconds"));
}

#[test]
fn sizes_match_fips_203_204_205() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sizes.csv");
    pqcprof()
        .args([
            "sizes",
            "--filter",
            "family:ML-KEM,family:ML-DSA,family:SLH-DSA,Ed25519",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut checked = 0;
    for (name, pk, sk, third) in pqcprof::sweep::sizes::FIPS_SIZES {
        for r in rows.iter().filter(|r| r[col("algorithm")] == name) {
            let third_col = if name.starts_with("ML-KEM") {
                "ciphertext"
            } else {
                "signature_observed"
            };
            assert_eq!(r[col("public_key")], pk.to_string(), "{name}");
            assert_eq!(r[col("secret_key")], sk.to_string(), "{name}");
            assert_eq!(r[col(third_col)], third.to_string(), "{name}");
            checked += 1;
        }
    }
    // Twelve SLH-DSA sets (OpenSSL), ML-KEM and ML-DSA from both libraries.
    assert_eq!(checked, 12 + 2 * 6, "{text}");
    let ed = rows.iter().find(|r| r[0] == "Ed25519").unwrap();
    assert_eq!(
        (
            ed[col("public_key")],
            ed[col("public_key_der")],
            ed[col("signature_max")]
        ),
        ("32", "44", "64")
    );
}

#[test]
fn sizes_print_to_stdout() {
    pqcprof()
        .args(["sizes", "--filter", "X25519"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "algorithm,provider,kind,nist_level,public_key",
        ));
}

#[test]
fn ctrl_c_keeps_finished_algorithms_and_exits_130() {
    use std::time::Duration;
    let d = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pqcprof"))
        .args(common::words("sweep --warmup-seconds 0 --seconds 1 --filter ML-KEM-512,ML-KEM-1024 --filter provider:liboqs --out"))
        .arg(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_records(
        || files(d.path(), "-sweep.json").first().cloned(),
        3,
        Duration::from_secs(60),
        "ML-KEM-512 never finished",
    );
    common::interrupted(child);
    let f = &files(d.path(), "-sweep.json")[0];
    let run: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
    assert_eq!(run["interrupted"], true);
    assert_eq!(run["complete"], false);
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3, "only ML-KEM-512 finished");
    assert!(recs
        .iter()
        .all(|r| r["status"] == "ok" && r["algorithm"] == "ML-KEM-512"));
    assert_eq!(files(d.path(), ".csv").len(), 1);
}

/// XMSS and LMS: a real `sweep --quick --filter` measures the
/// required sets with their gates, and every record carries the key's
/// signature budget; OpenSSL's LMS row is skipped with its reason.
#[test]
fn a_quick_sweep_measures_xmss_and_lms_with_their_signature_budgets() {
    let d = tempfile::tempdir().unwrap();
    common::ok_into(
        "sweep --quick --filter LMS_SHA256_H5_W1,LMS_SHA256_H10_W2,XMSS-SHA2_10_256",
        d.path(),
    );
    let run: Value =
        serde_json::from_slice(&std::fs::read(&files(d.path(), "-sweep.json")[0]).unwrap())
            .unwrap();
    let recs = run["records"].as_array().unwrap();
    for name in ["LMS_SHA256_H5_W1", "LMS_SHA256_H10_W2", "XMSS-SHA2_10_256"] {
        let ops: Vec<&Value> = recs
            .iter()
            .filter(|r| r["algorithm"] == name && r["provider"] == "liboqs")
            .collect();
        assert_eq!(ops.len(), 3, "{name}: {ops:?}");
        for r in &ops {
            assert_eq!(r["status"], "ok", "{r}");
            let checks = r["gate"]["checks"].to_string();
            common::assert_has(&checks, &["flipped signature bit is rejected"]);
            assert!(checks.contains("one signature spends one"), "{checks}");
            assert!(r["timed_window"]
                .as_str()
                .unwrap()
                .contains("OQS_SIG_STFL_"));
        }
        let budget = |op: &str, k: &str| {
            ops.iter().find(|r| r["operation"] == op).unwrap()["signature_budget"][k]
                .as_u64()
                .unwrap_or_else(|| panic!("{name} {op}: no signature_budget.{k}"))
        };
        let total = budget("Sign", "total");
        assert!(total == 31 || total == 1023, "{name}: {total}");
        assert_eq!(budget("KeyGen", "remaining_after"), total);
        let signed = ops.iter().find(|r| r["operation"] == "Sign").unwrap();
        let spent =
            signed["iterations"].as_u64().unwrap() + signed["warmup_runs"].as_u64().unwrap();
        assert_eq!(
            budget("Sign", "remaining_before") - budget("Sign", "remaining_after"),
            spent,
            "{name}: the budget goes down by one per signature"
        );
        assert_eq!(
            budget("Verify", "remaining_before"),
            budget("Verify", "remaining_after")
        );
    }
    let ossl = recs
        .iter()
        .find(|r| r["algorithm"] == "LMS_SHA256_H5_W1" && r["provider"] == "openssl")
        .expect("the OpenSSL LMS row");
    assert_eq!(ossl["status"], "skipped");
    assert!(
        ossl["reason"].as_str().unwrap().contains("enable-lms"),
        "{ossl}"
    );
    // The CSV in pqc-sig-bench-c's layout has them with the other liboqs rows.
    let text = std::fs::read_to_string(&files(d.path(), "_liboqs.csv")[0]).unwrap();
    assert!(text.contains("\nXMSS-SHA2_10_256,sign,"), "{text}");
}

#[test]
fn tall_xmss_and_lms_trees_need_slow_or_are_skipped_with_a_reason() {
    pqcprof()
        .args(["sweep", "--list", "--filter", "family:XMSS,family:LMS"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("XMSSMT-SHA2_60/12_256")
                .and(predicate::str::contains("LMS_SHA256_H10_W8 ").not())
                .and(predicate::str::contains("2^20 one-time keys")),
        );
    pqcprof()
        .args(["sweep", "--list", "--slow", "--filter", "LMS_SHA256_H10_W8"])
        .assert()
        .success()
        .stdout(predicate::str::contains("LMS_SHA256_H10_W8 "));
}

/// `scripts/liboqs-speed`'s guard: a fresh configure of oqs-sys's liboqs
/// source still gives the oqsconfig.h pqcprof's baselines were built with
/// (the stateful build sits elsewhere and changes nothing there).
#[test]
fn the_liboqs_speed_guard_still_matches_pqcprofs_liboqs() {
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_pqcprof"));
    let profile_dir = bin.parent().unwrap();
    let d = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("scripts/liboqs-speed")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PQCPROF_PROFILE_DIR", profile_dir)
        .arg("--check-only")
        .arg(d.path().join("b"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("oqsconfig.h identical"), "{err}");
}

/// The run file and the CSVs of a sweep in `dir`.
fn sweep_outputs(dir: &Path) -> (Value, Vec<PathBuf>) {
    let runs = files(dir, "-sweep.json");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run: Value = serde_json::from_slice(&std::fs::read(&runs[0]).unwrap()).unwrap();
    (run, files(dir, ".csv"))
}

#[test]
fn csvs_carry_pqc_sig_bench_c_names_and_date_the_run_file_ours() {
    let d = tempfile::tempdir().unwrap();
    pqcprof()
        .args([
            "sweep",
            "--quick",
            "--warmup-seconds",
            "0.01",
            "--seconds",
            "0.05",
        ])
        .args([
            "--filter",
            "family:RSA,family:ECDSA,family:EdDSA,provider:openssl",
        ])
        .arg("--out")
        .arg(d.path())
        .assert()
        .success();
    let (run, csvs) = sweep_outputs(d.path());
    assert_eq!(csvs.len(), 1, "{csvs:?}");
    let text = std::fs::read_to_string(&csvs[0]).unwrap();
    let parsed = csv::parse(&text).unwrap();
    let mut in_csv: Vec<&str> = parsed.rows.iter().map(|r| r[0].as_str()).collect();
    in_csv.dedup();
    // Every name of the table this build produces without --slow (RSA-8192
    // and RSA-16384 need it), and nothing else.
    let mut want: Vec<&str> = pqcprof::core::catalog::SIG_BENCH_NAMES
        .iter()
        .filter(|(ours, _)| !ours.ends_with("-8192") && !ours.ends_with("-16384"))
        .map(|(_, theirs)| *theirs)
        .collect();
    let mut got = in_csv.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{text}");
    for n in [
        "RSA-PKCS1v15-2048",
        "RSA-PSS-4096",
        "P-256",
        "P-384",
        "P-521",
        "Ed25519",
        "Ed448",
    ] {
        assert!(in_csv.contains(&n), "{n} missing: {text}");
    }
    // The run file keeps pqcprof's names and records each alias.
    let recs = run["records"].as_array().unwrap();
    assert!(recs.iter().any(|r| r["algorithm"] == "ECDSA-P256"));
    assert!(!recs.iter().any(|r| r["algorithm"] == "P-256"));
    let names = &run["sweep"]["csv_names"];
    assert_eq!(names["ECDSA-P256"], "P-256", "{names}");
    assert_eq!(names["RSA-PKCS1-2048"], "RSA-PKCS1v15-2048", "{names}");
    assert!(
        names.get("Ed25519").is_none(),
        "same name, no alias: {names}"
    );
    // pqc-sig-bench-c's date: seconds, no zone suffix (the run file's is UTC).
    let meta = |k: &str| {
        parsed
            .meta
            .iter()
            .find(|(key, _)| key == k)
            .unwrap()
            .1
            .clone()
    };
    let date = meta("date");
    assert!(
        chrono::NaiveDateTime::parse_from_str(&date, "%Y-%m-%dT%H:%M:%S").is_ok(),
        "{date}"
    );
    assert_eq!(run["metadata"]["date"], format!("{date}Z"));
    assert_eq!(meta("timezone"), "UTC");
    assert_eq!(meta("bench_seconds"), "0.05");
}

#[test]
fn whole_windows_are_written_as_integer_seconds() {
    let d = tempfile::tempdir().unwrap();
    pqcprof()
        .args(common::words(
            "sweep --warmup-seconds 0 --seconds 1 --filter Ed448",
        ))
        .arg("--out")
        .arg(d.path())
        .assert()
        .success();
    let (_, csvs) = sweep_outputs(d.path());
    let text = std::fs::read_to_string(&csvs[0]).unwrap();
    assert!(text.contains("# warmup_seconds: 0\n"), "{text}");
    assert!(text.contains("# bench_seconds:  1\n"), "{text}");
}

#[test]
fn exclusion_filters_leave_out_what_they_name() {
    let listed = |filter: &str| -> String {
        let o = pqcprof()
            .args(["sweep", "--list", "--filter", filter])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{filter}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let all = listed("provider:liboqs");
    assert!(all.contains("XMSS-SHA2_10_256") && all.contains("LMS_SHA256_H5_W1"));
    // pqc-sig-bench-c's run_liboqs_no_stfl.
    let no_stfl = listed("provider:liboqs,!family:XMSS,!family:LMS");
    assert!(
        !no_stfl.contains("XMSS") && !no_stfl.contains("LMS_"),
        "{no_stfl}"
    );
    assert!(no_stfl.contains("ML-DSA-44") && no_stfl.contains("Falcon-512"));
    // Exclusions alone start from everything; names and providers too.
    let v = listed("!family:XMSS,!family:LMS,!provider:composite,!Falcon-512");
    assert!(v.contains("Ed25519") && v.contains("Falcon-1024"), "{v}");
    assert!(!v.contains("Falcon-512 ") && !v.contains("+Ed25519") && !v.contains("XMSS"));
    // A misspelt exclusion is an error naming the closest family.
    pqcprof()
        .args(["sweep", "--list", "--filter", "!family:XMSZ"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no algorithm matches '!family:XMSZ'")
                .and(predicate::str::contains("XMSS")),
        );
    pqcprof()
        .args(["sweep", "--list", "--filter", "!famly:XMSS"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'famly:'").and(predicate::str::contains("leading !")));
}

#[test]
fn sizes_can_use_pqc_sig_bench_c_names() {
    let o = pqcprof()
        .args(common::words(
            "sizes --format sig-bench --filter ECDSA-P256,RSA-PKCS1-2048,ML-DSA-44",
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert!(
        names.contains(&"P-256") && names.contains(&"RSA-PKCS1v15-2048"),
        "{text}"
    );
    assert!(names.contains(&"ML-DSA-44"), "{text}");
    assert!(!names.contains(&"ECDSA-P256"), "{text}");
    pqcprof()
        .args(["sizes", "--format", "seed", "--filter", "Ed25519"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("seed").and(predicate::str::contains("sig-bench")));
}

/// Whether pip's index answers from here.
fn pypi_reachable() -> bool {
    std::process::Command::new("python3")
        .args([
            "-c",
            "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/pandas/', timeout=15)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn sig_charts_dataset_reads_back_with_pandas() {
    let d = tempfile::tempdir().unwrap();
    pqcprof()
        .args([
            "sweep",
            "--quick",
            "--warmup-seconds",
            "0.01",
            "--seconds",
            "0.05",
        ])
        .args(["--filter", "ML-DSA-44,ECDSA-P256,kind:sig", "--out"])
        .arg(d.path())
        .assert()
        .success();
    let csvs = files(d.path(), ".csv");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = d.path().join("dataset.zst");
    let o = std::process::Command::new(root.join("scripts/sig-charts-dataset"))
        .args(&csvs)
        .arg("-o")
        .arg(&out)
        .env("PQCPROF_BIN", env!("CARGO_BIN_EXE_pqcprof"))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if o.status.code() == Some(75) && !pypi_reachable() {
        common::skipped(
            "sig_charts_dataset_reads_back_with_pandas",
            "pandas and zstandard are not installed and pip cannot reach PyPI",
        );
        return;
    }
    assert!(o.status.success(), "{said}");
    assert!(said.contains("wrote"), "{said}");
    // Read back with pandas, in the same virtual environment.
    let venv = std::env::var_os("PQCPROF_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv"));
    let back = std::process::Command::new(venv.join("bin/python3"))
        .args([
            "-c",
            "import json, sys, pandas as pd\n\
             df = pd.read_pickle(sys.argv[1], compression='zstd')\n\
             print(json.dumps({'index': df.index.name, 'columns': list(df.columns),\n\
               'dtypes': [str(t) for t in df.dtypes],\n\
               'rows': {k: {c: (None if pd.isna(v) else float(v)) for c, v in r.items()} for k, r in df.iterrows()}}))",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    let v: Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(v["index"], "Algorithm");
    assert_eq!(
        v["columns"],
        serde_json::json!([
            "NIST Security Level",
            "Pubkey (bytes)",
            "Privkey (bytes)",
            "Signature (bytes)",
            "Keygen (μs)",
            "Sign (μs)",
            "Verify (μs)"
        ])
    );
    assert_eq!(v["dtypes"][0], "Int64", "{v}");
    let rows = &v["rows"];
    assert!(
        rows.get("ECDSA-P256").is_none(),
        "pqc-sig-bench-c's names: {rows}"
    );
    let row = |n: &str| rows.get(n).unwrap_or_else(|| panic!("{n} missing: {rows}"));
    // FIPS 204 sizes, NIST category 2.
    let mldsa = row("ML-DSA-44");
    assert_eq!(
        [
            &mldsa["NIST Security Level"],
            &mldsa["Pubkey (bytes)"],
            &mldsa["Privkey (bytes)"],
            &mldsa["Signature (bytes)"]
        ],
        [2.0, 1312.0, 2560.0, 2420.0]
    );
    // ECDSA P-256: DER public key, largest DER signature.
    let p256 = row("P-256");
    assert_eq!(
        (
            p256["Pubkey (bytes)"].as_f64(),
            p256["Signature (bytes)"].as_f64()
        ),
        (Some(91.0), Some(72.0))
    );
    // Times: the CSV's ms_per_op in microseconds (the liboqs CSV's, the first given).
    let liboqs = csvs
        .iter()
        .find(|p| p.to_string_lossy().ends_with("_liboqs.csv"))
        .unwrap();
    let parsed = csv::parse(&std::fs::read_to_string(liboqs).unwrap()).unwrap();
    for (op, column) in [
        ("keygen", "Keygen (μs)"),
        ("sign", "Sign (μs)"),
        ("verify", "Verify (μs)"),
    ] {
        let ms: f64 = parsed
            .rows
            .iter()
            .find(|r| r[0] == "ML-DSA-44" && r[1] == op)
            .unwrap()[2]
            .parse()
            .unwrap();
        let us = mldsa[column].as_f64().unwrap();
        assert!(
            (us - ms * 1000.0).abs() <= 1e-6 * us.max(1.0),
            "{op}: {us} against {ms} ms"
        );
    }
    // Bad input is named.
    let o = std::process::Command::new(root.join("scripts/sig-charts-dataset"))
        .arg(root.join("README.md"))
        .arg("-o")
        .arg(d.path().join("x.zst"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("README.md"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
