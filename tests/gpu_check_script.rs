//! `scripts/gpu-check`'s own logic, run here with a stand-in binary (a
//! shell script, test only) in place of pqcprof: each step has a time limit
//! that cuts it short without losing the other steps, and the headline
//! figures are read from the run files against published ones. What the
//! real binary does on a GPU is not tested here (no GPU on CI).

mod common;

use std::path::Path;
use std::process::Command;

/// A stand-in for pqcprof: `check` passes, `gpu --alg mlkem` writes a run
/// file with one ML-KEM-768 keygen record, `gpu --alg mldsa` hangs until
/// Ctrl-C, the ML-KEM-768 batch curve (which must be asked for as a sweep)
/// writes one measured and one failed batch, everything else succeeds and
/// writes nothing.
const STAND_IN: &str = r#"#!/usr/bin/env bash
cmd=$1; shift
alg=; out=; o=; sweep=
while [ $# -gt 0 ]; do
  case "$1" in
    --alg) alg=$2; shift ;;
    --batch-sweep) sweep=$2; shift ;;
    --out) out=$2; shift ;;
    -o) o=$2; shift ;;
  esac
  shift
done
case "$cmd" in
  check) echo "stand-in check (test only)" ;;
  gpu)
    if [ "$alg" = mldsa ]; then
      trap 'kill $!; echo "stand-in interrupted (test only)"; exit 130' INT
      sleep 60 & wait
      exit 0
    fi
    if [ "$alg" = mlkem ]; then
      mkdir -p "$out"
      cat > "$out/run-20260101T000000Z.json" <<'JSON'
{"records": [{"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "ok", "ops_per_sec": 14000000.0}]}
JSON
    fi
    if [ "$alg" = ML-KEM-768 ]; then
      [ "$sweep" = 1M ] || exit 9
      mkdir -p "$out"
      cat > "$out/run-20260101T000100Z.json" <<'JSON'
{"records": [{"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "ok", "batch": 1024, "ops_per_sec": 2000000.0,
  "end_to_end": {"ops_per_sec": 1000000.0},
  "kernel": {"waves": {"exact_waves": 0.02, "last_wave_fill_pct": 2.0}}},
 {"backend": "native-gpu", "algorithm": "ML-KEM-768", "operation": "keygen",
  "mode": "throughput", "status": "failed", "batch": 1048576,
  "reason": "stand-in failure (test only)"}]}
JSON
    fi ;;
  report) echo "stand-in report (test only)" > "$o" ;;
esac
exit 0
"#;

fn write_stand_in(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("pqcprof-stand-in");
    std::fs::write(&p, STAND_IN).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_step_at_its_limit_is_cut_short_and_the_others_still_run() {
    let d = tempfile::tempdir().unwrap();
    let bin = write_stand_in(d.path());
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .args(["--runs", "2"])
        .env("PQCPROF_BIN", &bin)
        // Limits of 1-2 s instead of minutes.
        .env("GPU_CHECK_SCALE", "0.016")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(
        r.status.code(),
        Some(1),
        "a cut-short step fails the check\n{stdout}"
    );
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap();
    assert!(log.contains("throughput-mlkem: ok"), "{log}");
    assert!(
        log.contains("throughput-mldsa: CUT SHORT at its 2s limit (exit 130)"),
        "{log}"
    );
    // The steps after the cut one still ran.
    assert!(
        log.contains("latency: ok")
            && log.contains("curve-mlkem: ok")
            && log.contains("curve-mldsa: ok")
            && log.contains("cpu: ok")
            && log.contains("cpu-curve: ok"),
        "{log}"
    );
    let mldsa = std::fs::read_to_string(out.join("throughput-mldsa.txt")).unwrap();
    assert!(mldsa.contains("stand-in interrupted"), "{mldsa}");
    let targets = std::fs::read_to_string(out.join("targets.txt")).unwrap();
    assert!(
        targets.contains("ML-KEM-768 keygen: 14.000M ops/s, target 13.3M/s")
            && targets.contains(": MET"),
        "{targets}"
    );
    assert!(
        targets.contains("ML-DSA-44 sign: no result (not measured)"),
        "{targets}"
    );
    assert!(
        targets.contains(
            "curve ML-KEM-768 keygen batch 1024: 2.000M ops/s kernel only, 1.000M end to end, 0.02 waves (last 2% full)"
        ),
        "{targets}"
    );
    assert!(
        targets.contains("curve ML-KEM-768 keygen batch 1048576: stand-in failure (test only)"),
        "{targets}"
    );
    assert!(out.join("report.html").exists() && out.join("report.md").exists());
}

#[test]
fn without_a_gpu_it_stops_after_check() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let bin = env!("CARGO_BIN_EXE_pqcprof");
    let gpu_ready = Command::new(bin)
        .args(["check", "--require-gpu"])
        .output()
        .unwrap()
        .status
        .success();
    if gpu_ready {
        common::hardware_skip(
            "without_a_gpu_it_stops_after_check",
            "a GPU backend is ready here (and the full check is not started from a test)",
        );
        return;
    }
    let r = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .env("PQCPROF_BIN", bin)
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    let log = std::fs::read_to_string(out.join("gpu-check.log")).unwrap();
    assert!(log.contains("no GPU backend is ready: stopping"), "{log}");
    assert!(out.join("check.json").exists());
}
