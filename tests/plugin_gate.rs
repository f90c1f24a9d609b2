//! The correctness gate against implementations that cheat or cut corners:
//! the gallery of tests/fixtures/plugins/dishonest.c (lazy, memoising,
//! caching per key, a verifier that accepts whole batches, wrong now and
//! then, one item never written, a write past a buffer, inputs changed, a
//! false claim of thread safety), each measured beside liboqs. Every one
//! gets a failed record naming what gave it away, and nothing of it is
//! timed; liboqs's records are kept; the honest build of the same file
//! passes.

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
    let out = tempfile::tempdir().unwrap();
    let backend = format!("liboqs,plugin:{}", gallery(flaw).display());
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
    let (recs, err, code) = bench(flaw, alg, op, batch, extra);
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
