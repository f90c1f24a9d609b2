//! `pqcprof report --audit` re-derives every figure of the HTML and
//! Markdown report and of `compare --json` from the run files' raw runs:
//! over a run made the way `./pipeline` makes one (a benchmark, a batch
//! sweep, an offload sweep and the CPU sweep, small), and over every run
//! file among the test fixtures, it finds no disagreement; on a file made
//! to disagree, it names each figure.

mod common;
use common::{ok_into, outcome, pqcprof, run_file_in};
use std::path::{Path, PathBuf};

/// `report FILES --audit`: exit code and standard output.
fn audit(files: &[PathBuf]) -> (i32, String) {
    let (code, out, err) = outcome(pqcprof().arg("report").args(files).arg("--audit"));
    assert!(
        out.contains("audit: "),
        "no audit line: {out}\nstderr: {err}"
    );
    (code, out)
}

/// A small run of each kind `./pipeline` makes, each in its own folder:
/// ML-KEM/ML-DSA at one thread and all threads (twice, so `compare` has
/// like records to set against each other), a batch sweep at every
/// thread, an offload rate sweep, and a quick CPU sweep of algorithms that
/// cover hybrids (one whose secret key OpenSSL does not disclose),
/// classical baselines, SLH-DSA and the symmetric primitives.
fn pipeline_style(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![
        common::cpu_run(&dir.join("bench"), "1,all"),
        common::cpu_run(&dir.join("bench-again"), "1,all"),
    ];
    let batches = dir.join("batches");
    ok_into(
        "cpu --alg ML-KEM-512 --op encaps --batch-sweep 64 --runs 5 --threads all",
        &batches,
    );
    files.push(run_file_in(&batches));
    files.push(common::offload_run(&dir.join("offload")));
    files.push(common::quick_sweep(
        &dir.join("sweep"),
        "ML-KEM-512,ML-KEM-768,ML-DSA-44,SecP256r1MLKEM768,X25519MLKEM768,ECDSA-P256,X25519,Ed25519,SLH-DSA-SHA2-128f",
        &["--symmetric"],
    ));
    files
}

#[test]
fn the_audit_of_a_pipeline_style_run_finds_no_disagreement() {
    let dir = tempfile::tempdir().unwrap();
    let files = pipeline_style(dir.path());
    let (code, out) = audit(&files);
    assert_eq!(code, 0, "{out}");
    let summary = out.lines().last().unwrap();
    assert!(summary.ends_with(": 0 disagreements"), "{out}");
    // Every kind of check ran on something.
    for check in [
        "interval",
        "quotient",
        "runs",
        "change",
        "comparable",
        "size",
        "count",
    ] {
        let n: usize = summary
            .split(&format!("{check} "))
            .nth(1)
            .and_then(|s| s.split([',', ')']).next())
            .map(|n| n.replace(',', "").parse().unwrap())
            .unwrap_or(0);
        assert!(n > 0, "no {check} figure checked: {summary}");
    }
}

/// Every run file among the fixtures, alone, and with the published
/// results beside one of them.
#[test]
fn the_audit_of_every_report_fixture_finds_no_disagreement() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let runs = [
        fixtures.join("compare/old.json"),
        fixtures.join("compare/new.json"),
        fixtures.join("plan/ml-kem-768-encaps.json"),
    ];
    for r in &runs {
        let (code, out) = audit(std::slice::from_ref(r));
        assert_eq!(code, 0, "{}: {out}", r.display());
    }
    let (code, out) = audit(&runs);
    assert_eq!(code, 0, "{out}");
    let published = fixtures.join("published");
    let mut with: Vec<PathBuf> = vec![runs[0].clone()];
    with.extend(common::files(&published, "", ".csv"));
    with.extend(common::files(&published, "", ".json"));
    with.push(published.join("latency/mldsa_latency.json"));
    let (code, out) = audit(&with);
    assert_eq!(code, 0, "{out}");
}

/// A file made to disagree (test only): one record's hybrid overhead with a
/// negative size, as files written before sizes were made unknown-aware
/// hold them. The audit names it and exits 3.
#[test]
fn the_audit_names_a_figure_that_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = common::quick_sweep(&dir.path().join("s"), "ML-KEM-768,SecP256r1MLKEM768", &[]);
    let mut v = common::read_json(&sweep);
    let hybrid = v["hybrid_overhead"].as_array_mut().unwrap();
    let secp = hybrid
        .iter_mut()
        .find(|h| h["hybrid"] == "SecP256r1MLKEM768")
        .unwrap_or_else(|| panic!("no SecP256r1MLKEM768 overhead in {}", sweep.display()));
    // OpenSSL does not disclose this hybrid's secret key: not known.
    assert!(secp["extra_secret_key_bytes"].is_null(), "{secp}");
    secp["extra_secret_key_bytes"] = (-2400).into();
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out) = audit(&[edited]);
    assert_eq!(code, 3, "{out}");
    common::assert_has(&out, &["[size]", "extra_secret_key_bytes -2400"]);
}
