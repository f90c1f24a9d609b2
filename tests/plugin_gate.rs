//! The correctness gate against implementations that cheat or cut corners:
//! the gallery of tests/fixtures/plugins/dishonest.c (lazy, memoising,
//! caching per key, a verifier that accepts whole batches, wrong now and
//! then, one item never written, a write past a buffer, inputs changed, a
//! false claim of thread safety), each measured beside liboqs. Every one
//! gets a failed record naming what gave it away, and nothing of it is
//! timed; liboqs's records are kept; the honest build of the same file
//! passes. The same for an ABI 1.1 plugin that draws its own randomness
//! (tests/fixtures/plugins/own_randomness.c), judged by round trip: a K
//! its c does not decapsulate to, a dk that is not ek's, a signature of
//! something else, and the same plugin declaring ABI 1.0.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The gallery plugin with `flaw` ("" for none), built with cc and c++
/// over the host build's ML-KEM and ML-DSA.
fn gallery(flaw: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let name = if flaw.is_empty() { "honest" } else { flaw };
    let define = format!("-DBROKEN_{flaw}");
    let define = (!flaw.is_empty()).then_some(define.as_str());
    common::c_plugin(
        &DIR,
        "dishonest.c",
        &["host_mlkem", "host_mldsa"],
        name,
        define,
    )
}

/// `bench` of `alg` `op` on liboqs and the gallery plugin with `flaw`,
/// batch `batch`, 4 runs (every operation when `op` is empty): its
/// records, standard error and exit code.
fn bench(
    flaw: &str,
    alg: &str,
    op: &str,
    batch: &str,
    extra: &[&str],
) -> (Vec<Value>, String, i32) {
    bench_lib(&gallery(flaw), alg, op, batch, extra)
}

/// The own-randomness plugin (ABI 1.1) with `flaw` ("" for none).
fn own(flaw: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let name = if flaw.is_empty() { "own" } else { flaw };
    let define = format!("-DBROKEN_{flaw}");
    let define = (!flaw.is_empty()).then_some(define.as_str());
    common::c_plugin(
        &DIR,
        "own_randomness.c",
        &["host_mlkem", "host_mldsa"],
        name,
        define,
    )
}

/// `bench` as [`bench`] of the plugin at `lib`.
fn bench_lib(
    lib: &Path,
    alg: &str,
    op: &str,
    batch: &str,
    extra: &[&str],
) -> (Vec<Value>, String, i32) {
    let out = tempfile::tempdir().unwrap();
    let backend = format!("liboqs,plugin:{}", lib.display());
    let ops: &[&str] = if op.is_empty() { &[] } else { &["--op", op] };
    let o = Command::cargo_bin("pqcprof")
        .unwrap()
        .args(["bench", "--backend", &backend, "--alg", alg])
        .args(ops)
        .args(["--batch", batch, "--runs", "4", "--vectors", "none"])
        .args(extra)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let run = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .expect("a run file");
    let v: Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
    (
        v["records"].as_array().unwrap().clone(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

/// The plugin's records failed, untimed, each reason holding every part
/// of `says`; liboqs's records of the same run are ok; exit 3.
fn caught(flaw: &str, alg: &str, op: &str, batch: &str, extra: &[&str], says: &[&str]) {
    caught_lib(&gallery(flaw), flaw, alg, op, batch, extra, says)
}

/// As [`caught`], of the plugin at `lib`.
fn caught_lib(
    lib: &Path,
    flaw: &str,
    alg: &str,
    op: &str,
    batch: &str,
    extra: &[&str],
    says: &[&str],
) {
    let (recs, err, code) = bench_lib(lib, alg, op, batch, extra);
    let (plugin, liboqs): (Vec<&Value>, Vec<&Value>) = recs
        .iter()
        .partition(|r| r["backend"].as_str().unwrap().starts_with("plugin-"));
    assert!(!plugin.is_empty() && !liboqs.is_empty(), "{recs:#?}");
    for r in &plugin {
        let why = r["reason"].as_str().unwrap_or("");
        assert_eq!(r["status"], "failed", "{flaw}: {r:#}");
        for s in says {
            assert!(why.contains(s), "{flaw}: expected {s:?} in {why}");
        }
        assert!(
            r["ops_per_sec"].is_null() && r["throughput_ops_per_sec"].is_null(),
            "{flaw}: no figure is kept: {r:#}"
        );
    }
    for r in &liboqs {
        assert_eq!(r["status"], "ok", "{flaw}: liboqs is kept: {r:#}");
    }
    assert_eq!(code, 3, "{flaw}: {err}");
}

#[test]
fn the_honest_build_passes_every_check_of_every_run() {
    let (recs, err, code) = bench("", "ML-KEM-512,ML-DSA-44", "", "40", &["--threads", "1,2"]);
    assert_eq!(code, 0, "{err}");
    // ML-KEM-512's three operations and ML-DSA-44 verify, at 1 and 2
    // threads (ML-DSA-44 keygen and sign are not offered: skipped).
    let plugin: Vec<&Value> = recs
        .iter()
        .filter(|r| r["backend"] == "plugin-gallery" && r["status"] != "skipped")
        .collect();
    assert_eq!(plugin.len(), 8, "{recs:#?}");
    for r in plugin {
        assert_eq!(r["status"], "ok", "{r:#}");
        let c = &r["gate"]["coverage"];
        // The gate before timing, each of the 4 timed runs, the last.
        assert_eq!(c["runs"], 6, "{r:#}");
        assert_eq!(c["written_per_run"], 40, "{r:#}");
        assert_eq!(c["guard_bytes"], 64, "{r:#}");
        assert_eq!(c["mode"], "sample");
        assert!(c["seed"].as_u64().is_some());
    }
}

#[test]
fn a_plugin_that_works_only_on_some_calls_is_caught_in_the_first_run_it_skips() {
    caught(
        "LAZY",
        "ML-KEM-512",
        "keygen",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed after timed run 1",
            "operation 0: ek not written by the call: all of its 800 bytes still hold run 2's poison byte",
            "(40 of 40 items left so)",
        ],
    );
}

#[test]
fn a_plugin_that_skips_outputs_already_holding_data_is_caught_before_timing() {
    caught(
        "MEMO",
        "ML-KEM-512",
        "decaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "operation 0: K not written by the call",
        ],
    );
}

#[test]
fn a_plugin_that_remembers_a_secret_per_key_is_caught_by_the_fresh_ciphertexts() {
    caught(
        "CACHE",
        "ML-KEM-512",
        "decaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed after timed run 1",
            "K differs from the reference (pqcprof's host build of FIPS 203/204) at byte",
        ],
    );
}

/// A batch larger than the gates' 64 items: each timed run between them
/// judges only 8, and the cache (wrong on every item after the warm-up)
/// still cannot hide in it.
#[test]
fn the_same_cache_is_caught_at_batch_1000_by_the_runs_smaller_sample() {
    caught(
        "CACHE",
        "ML-KEM-512",
        "decaps",
        "1000",
        &["--threads", "1"],
        &[
            "correctness gate failed after timed run 1",
            "K differs from the reference (pqcprof's host build of FIPS 203/204) at byte",
        ],
    );
}

#[test]
fn a_verifier_that_accepts_whole_batches_is_caught_by_the_gate_and_the_vectors() {
    caught(
        "ACCEPT",
        "ML-DSA-44",
        "verify",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "an invalid signature (a flipped bit, at a position drawn for run 1) was accepted (ok = 1)",
        ],
    );
    // The known-answer vectors ask each case inside a batch too.
    let o = Command::cargo_bin("pqcprof")
        .unwrap()
        .args(["check", "--plugin"])
        .arg(gallery("ACCEPT"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("mldsa_44_verify"))
        .unwrap_or_else(|| panic!("{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    let failed: usize = cols[cols.len() - 2].parse().unwrap();
    assert!(failed > 50, "every invalid case accepted: {row}");
}

#[test]
fn a_plugin_wrong_on_every_third_call_is_caught_in_the_run_it_is_wrong() {
    caught(
        "SOMETIMES",
        "ML-KEM-512",
        "encaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed after timed run 2",
            "operation 20: K differs from the reference",
        ],
    );
}

#[test]
fn one_item_never_written_is_found_whatever_the_sample() {
    caught(
        "UNWRITTEN",
        "ML-KEM-512",
        "encaps",
        "1000",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "operation 500: c not written by the call",
            "(1 of 1000 items left so)",
        ],
    );
}

#[test]
fn a_write_past_the_end_of_an_output_is_found_in_its_guard_bytes() {
    caught(
        "OVERFLOW",
        "ML-KEM-512",
        "encaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "the guard bytes after K were overwritten (byte 0 of 64: the call wrote outside the buffer it was given)",
        ],
    );
}

#[test]
fn a_plugin_that_changes_its_const_inputs_is_caught() {
    caught(
        "INPUTS",
        "ML-KEM-512",
        "keygen",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "the call changed its input seeds (a const buffer) at byte",
        ],
    );
}

#[test]
fn a_false_claim_of_thread_safety_fails_on_several_threads_and_names_them() {
    // One thread: fine.
    let (recs, err, code) = bench("THREADS", "ML-KEM-512", "keygen", "40", &["--threads", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(recs.iter().all(|r| r["status"] == "ok"), "{recs:#?}");
    caught(
        "THREADS",
        "ML-KEM-512",
        "keygen",
        "40",
        &["--threads", "2"],
        &[
            "of 2, on its own part of the batch: the plugin declares itself thread-safe",
            "differs from the reference",
        ],
    );
}

/// The fixture's ML-DSA path needs host_mldsa.o: a sanity check that the
/// honest gallery verifies what the reference signs (its vectors pass).
#[test]
fn the_honest_gallery_passes_its_vectors() {
    let o = Command::cargo_bin("pqcprof")
        .unwrap()
        .args(["check", "--sample", "4", "--plugin"])
        .arg(gallery(""))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(Path::new(&gallery("")).exists());
}

#[test]
fn a_plugin_drawing_its_own_randomness_is_judged_by_round_trip_and_passes() {
    let (recs, err, code) = bench_lib(
        &own(""),
        "ML-KEM-512,ML-DSA-44",
        "",
        "40",
        &["--threads", "1"],
    );
    assert_eq!(code, 0, "{err}");
    let plugin: Vec<&Value> = recs
        .iter()
        .filter(|r| r["backend"] == "plugin-own")
        .collect();
    assert_eq!(plugin.len(), 6, "{recs:#?}");
    for r in plugin {
        assert_eq!(r["status"], "ok", "{r:#}");
        let p = &r["plugin"];
        assert_eq!(p["abi_version"], 1, "{r:#}");
        assert_eq!(p["abi_minor"], 1, "{r:#}");
        assert_eq!(
            p["own_randomness"],
            serde_json::json!([
                "ML-KEM keygen",
                "ML-KEM encaps",
                "ML-DSA keygen",
                "ML-DSA sign"
            ]),
            "{r:#}"
        );
        let checks = r["gate"]["checks"].to_string();
        let inputs = r["gate"]["coverage"]["inputs"].as_str().unwrap();
        match r["operation"].as_str().unwrap() {
            "KeyGen" | "Encaps" | "Sign" => {
                assert!(
                    checks.contains("(the implementation draws its own"),
                    "{checks}"
                );
                assert!(
                    inputs.contains("draws its own randomness for this operation (ABI 1.1)"),
                    "{inputs}"
                );
                assert!(!checks.contains("byte for byte"), "{checks}");
            }
            // Decapsulation and verification take no randomness: exact.
            _ => assert!(!inputs.contains("ABI 1.1"), "{inputs}"),
        }
    }
}

#[test]
fn an_encapsulation_whose_k_its_c_does_not_give_is_caught_by_the_round_trip() {
    caught_lib(
        &own("WRONG_K"),
        "WRONG_K",
        "ML-KEM-512",
        "encaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "c does not decapsulate to K under the key pair's dk (the reference's decapsulation)",
        ],
    );
}

/// Keys made once and copied into every run pass every round trip: the
/// gate catches them as keys given again.
#[test]
fn key_pairs_copied_from_run_to_run_are_caught_as_keys_given_again() {
    caught_lib(
        &own("REPEATED"),
        "REPEATED",
        "ML-KEM-512",
        "keygen",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed",
            "ek was already given in an earlier run of this record",
        ],
    );
}

#[test]
fn a_key_pair_whose_dk_is_not_eks_is_caught_by_the_round_trip() {
    caught_lib(
        &own("MISMATCHED"),
        "MISMATCHED",
        "ML-KEM-512",
        "keygen",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "liboqs round trip failed on the key pair",
        ],
    );
}

#[test]
fn a_signature_of_something_else_is_caught_by_the_reference_verifying_it() {
    caught_lib(
        &own("BAD_SIGNATURE"),
        "BAD_SIGNATURE",
        "ML-DSA-44",
        "sign",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "the signature does not verify (the reference's verification)",
        ],
    );
}

#[test]
fn drawing_its_own_randomness_without_declaring_it_fails_byte_equality() {
    caught_lib(
        &own("UNDECLARED"),
        "UNDECLARED",
        "ML-KEM-512",
        "encaps",
        "40",
        &["--threads", "1"],
        &[
            "correctness gate failed before timing",
            "differs from the reference",
        ],
    );
}

/// The counts of the round-trip group of `alg` in a `check` table: cases
/// asked, passed, failed, not applicable.
fn round_trip_row(out: &str, alg: &str) -> [u64; 4] {
    let group = format!("{alg} round trip with the reference");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("round trip") && l.contains(&group))
        .unwrap_or_else(|| panic!("no {group} row: {out}"));
    let after = &row[row.find(&group).unwrap() + group.len()..];
    let n: Vec<u64> = after
        .split_whitespace()
        .take(4)
        .map(|w| w.parse().unwrap())
        .collect();
    [n[0], n[1], n[2], n[3]]
}

/// `check --plugin` on the own-randomness plugin: (stdout, exit code).
fn check_own(flaw: &str) -> (String, i32) {
    let o = Command::cargo_bin("pqcprof")
        .unwrap()
        .args(["check", "--sample", "4", "--plugin"])
        .arg(own(flaw))
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn check_says_the_plugin_draws_its_own_randomness_and_runs_the_round_trips() {
    let (out, code) = check_own("");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ABI version 1.1"), "{out}");
    assert!(
        out.contains(
            "draws its own randomness for ML-KEM keygen, ML-KEM encaps, ML-DSA keygen, ML-DSA sign"
        ),
        "{out}"
    );
    // Vectors of an operation that draws its own randomness: not
    // applicable, with the reason; the round-trip groups pass.
    assert!(
        out.contains("the plugin draws its own randomness for ML-KEM keygen (ABI 1.1)"),
        "{out}"
    );
    for alg in ["ML-KEM-512", "ML-DSA-44"] {
        let [ran, passed, failed, na] = round_trip_row(&out, alg);
        assert_eq!((ran, passed, failed, na), (4, 4, 0, 0), "{out}");
    }
    // Decapsulation and verification vectors still run, byte for byte:
    // the total passes more cases than the round trips alone.
    let total = out
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap_or_else(|| panic!("{out}"));
    let passed: u64 = total.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(passed > 20, "{total}");
}

#[test]
fn check_fails_the_round_trip_of_a_wrong_k_and_of_a_mismatched_key_pair() {
    for (flaw, says) in [
        ("WRONG_K", "the plugin's ML-KEM-512 encaps judged as the gate judges it: operation 0: c does not decapsulate to K"),
        ("MISMATCHED", "the plugin's ML-KEM-512 keygen judged as the gate judges it: operation 0: liboqs round trip failed on the key pair"),
    ] {
        let (out, code) = check_own(flaw);
        assert_eq!(code, 3, "{flaw}: {out}");
        let [ran, _, failed, _] = round_trip_row(&out, "ML-KEM-512");
        assert_eq!((ran, failed), (4, 4), "{flaw}: every round trip fails: {out}");
        assert!(out.contains(says), "{flaw}: expected {says:?} in {out}");
    }
}
