//! The binary as a user meets it: bad input, the files it writes, Ctrl-C.

use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::{pqcprof, read_json};

fn run_files(dir: &Path) -> Vec<PathBuf> {
    common::files(dir, "run-", ".json")
}

#[test]
fn check_reports_every_component_and_a_ready_cpu() {
    pqcprof()
        .arg("check")
        .assert()
        .success()
        .stdout(predicate::str::contains("CUDA driver"))
        .stdout(predicate::str::contains("NVRTC"))
        .stdout(predicate::str::contains("NVML"))
        .stdout(predicate::str::contains("cuPQC SDK"))
        .stdout(predicate::str::is_match(r"liboqs-cpu\s+ready").unwrap());
    let out = pqcprof().args(["check", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backends"][0]["backend"], "liboqs-cpu");
    assert_eq!(v["backends"][0]["ready"], true);
    assert!(v["system"]["cores_logical"].as_u64().unwrap() >= 1);
    assert!(v["gpu"]["driver"]["present"].is_boolean());
}

#[test]
fn bad_input_names_the_value_and_what_is_valid() {
    // Every one a usage error (2), refused before anything is measured.
    let cases: &[(&[&str], &str)] = &[
        (&["cpu", "--batch", "0"], "'0' for '--batch"),
        (&["cpu", "--batch", "100000000"], "1 to 50000000"),
        (
            &["cpu", "--alg", "ML-DSA-44", "--batch", "40000000"],
            "at most",
        ),
        (&["cpu", "--runs", "0"], "'0' for '--runs"),
        (&["cpu", "--runs", "sometimes"], "or auto"),
        (
            &["cpu", "--runs", "auto", "--max-noise", "-1"],
            "'-1' for '--max-noise",
        ),
        (
            &["cpu", "--runs", "auto", "--max-runs", "2"],
            "'2' for '--max-runs",
        ),
        (&["cpu", "--max-runs", "50"], "--runs auto only"),
        (
            &["cpu", "--cache", "cold"],
            "--cache does not apply to `pqcprof cpu`",
        ),
        (
            &["bench", "--backend", "liboqs", "--cache", "cold"],
            "--cache cold",
        ),
        (&["cpu", "--alg", "ML-KEM-2048"], "valid: ML-KEM-512"),
        (&["bench", "--backend", "tpu"], "valid: liboqs-cpu"),
        (&["cpu", "--op", "sing"], "valid: keygen"),
        (&["cpu", "--threads", "zero"], "'zero' for '--threads"),
    ];
    for (args, needle) in cases {
        let d = tempfile::tempdir().unwrap();
        pqcprof()
            .args(*args)
            .arg("--out")
            .arg(d.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*needle));
        assert!(
            run_files(d.path()).is_empty(),
            "{args:?} measured something"
        );
    }
    // `kernels` checks its architectures before compiling anything.
    for (args, needle) in [
        (
            &["kernels", "--arch", "sm_70"][..],
            "possible values: sm_75, sm_80",
        ),
        (
            &["kernels", "--threads-per-block", "0"][..],
            "0 is not in 1..=1024",
        ),
    ] {
        pqcprof()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
    // And its algorithms, before looking for NVRTC (none on this path).
    pqcprof()
        .args(["kernels", "--alg", "ML-KEM-2048"])
        .env("LD_LIBRARY_PATH", "")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "'ML-KEM-2048' for '--alg <ALGS>': unknown algorithm 'ML-KEM-2048'; valid: ML-KEM-512",
        ));
}

#[test]
fn an_unwritable_output_folder_fails_before_measuring() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    pqcprof()
        .args(["cpu", "--alg", "ML-KEM-512", "--runs", "1", "--out"])
        .arg(file.join("out"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not-a-folder"))
        .stdout(predicate::str::contains("ops/s").not());
}

#[test]
fn a_run_writes_a_run_file_and_cupqc_shaped_files() {
    let d = tempfile::tempdir().unwrap();
    let o = pqcprof()
        .args(common::words(
            "cpu --alg ML-KEM-512,ML-DSA-44 --batch 8 --runs 4 --threads 1,2",
        ))
        .args(["--message-size", "100", "--out"])
        .arg(d.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&o.get_output().stdout).into_owned();
    let files = run_files(d.path());
    assert_eq!(files.len(), 1);
    // It prints the paths it wrote, each a file that exists: no template.
    assert!(
        stdout.contains(&format!("Run file: {}", files[0].display())),
        "{stdout}"
    );
    assert!(!stdout.contains("<backend>"), "{stdout}");
    for dir in ["liboqs-cpu-1t", "liboqs-cpu-2t"] {
        for name in ["mlkem_results.json", "mldsa_results.json"] {
            let path = d.path().join(dir).join(name);
            assert!(path.is_file(), "{}", path.display());
            assert!(
                stdout.contains(&format!("cuPQC-shaped file: {}", path.display())),
                "{}: {stdout}",
                path.display()
            );
        }
    }
    let run = read_json(&files[0]);
    assert_eq!(run["format"], "pqcprof-run");
    assert_eq!(run["schema_version"], 1);
    assert_eq!(run["complete"], true);
    assert_eq!(run["interrupted"], false);
    for key in [
        "date",
        "hostname",
        "cpu",
        "cores_logical",
        "memory_total_mb",
        "os",
        "arch",
        "liboqs_version",
        "openssl_version",
        "pqcprof_version",
        "git_commit",
    ] {
        assert!(!run["metadata"][key].is_null(), "metadata.{key} missing");
    }
    assert_eq!(run["config"]["runs"], 4);
    assert_eq!(run["config"]["batch"], 8);
    let records = run["records"].as_array().unwrap();
    // 2 algorithms x 3 operations x 2 thread counts.
    assert_eq!(records.len(), 12);
    for r in records {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["backend"], "liboqs-cpu");
        assert_eq!(r["run_seconds"].as_array().unwrap().len(), 4);
        let t = &r["throughput_ops_per_sec"];
        assert_eq!(t["raw"].as_array().unwrap().len(), 4);
        assert!(t["kept"].as_array().unwrap().len() >= 2);
        for k in ["q1", "q3", "lower", "upper"] {
            assert!(t["fences"][k].is_number());
        }
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0);
        cycles_match_the_counter_rate(&run["metadata"], r);
        assert!(r["gate"]["checked_ops"].as_u64().unwrap() >= 1);
        assert!(r["peak_mem_mb"]["mean"].as_f64().unwrap() > 0.0);
        assert!(r["sizes"]["public_key_bytes"].as_u64().unwrap() > 0);
    }
    let sign = records
        .iter()
        .find(|r| r["algorithm"] == "ML-DSA-44" && r["operation"] == "Sign")
        .unwrap();
    assert_eq!(sign["message_bytes"], 100);
    assert_eq!(sign["sizes"]["signature_bytes"], 2420);

    // cuPQC_benchmark's shape, field by field, and its figures those of
    // the record of that backend, thread count, algorithm and operation.
    let same_figures = |file: &serde_json::Value, threads: u64| {
        let mut seen = 0;
        for (alg, ops) in file.as_object().unwrap() {
            if alg == "CPU" {
                continue;
            }
            for (op, m) in ops.as_object().unwrap() {
                let r = records
                    .iter()
                    .find(|r| {
                        r["algorithm"] == alg.as_str()
                            && r["operation"] == op.as_str()
                            && r["threads"] == threads
                    })
                    .unwrap_or_else(|| panic!("no record for {alg} {op} {threads}t"));
                for (key, field) in [
                    ("throughput", "throughput_ops_per_sec"),
                    ("peak_mem_mb", "peak_mem_mb"),
                    ("peak_gpu_util", "peak_util_pct"),
                ] {
                    for stat in ["mean", "std"] {
                        let (got, want) = (
                            m[key][stat].as_f64().unwrap(),
                            r[field][stat].as_f64().unwrap(),
                        );
                        // Printed with 2 decimals.
                        assert!(
                            (got - want).abs() <= 0.005 + 1e-9 * want.abs(),
                            "{alg} {op} {threads}t {key}.{stat}: file {got}, record {want}"
                        );
                    }
                }
                seen += 1;
            }
        }
        seen
    };
    for threads in ["1t", "2t"] {
        let dir = d.path().join(format!("liboqs-cpu-{threads}"));
        let n: u64 = threads[..1].parse().unwrap();
        let kem = read_json(&dir.join("mlkem_results.json"));
        assert_eq!(same_figures(&kem, n), 3);
        let obj = kem.as_object().unwrap();
        assert_eq!(obj.keys().collect::<Vec<_>>(), vec!["CPU", "ML-KEM-512"]);
        assert!(kem["CPU"]["name"].is_string());
        assert!(kem["CPU"]["memory_total_mb"].as_u64().unwrap() > 0);
        let ops = kem["ML-KEM-512"].as_object().unwrap();
        assert_eq!(
            ops.keys().collect::<Vec<_>>(),
            vec!["KeyGen", "Encaps", "Decaps"]
        );
        for (_, m) in ops {
            let m = m.as_object().unwrap();
            assert_eq!(
                m.keys().collect::<Vec<_>>(),
                vec!["throughput", "peak_mem_mb", "peak_gpu_util"]
            );
            for (_, ms) in m {
                let ms = ms.as_object().unwrap();
                assert_eq!(ms.keys().collect::<Vec<_>>(), vec!["mean", "std"]);
                assert!(ms["mean"].is_number() && ms["std"].is_number());
            }
        }
        let dsa = read_json(&dir.join("mldsa_results.json"));
        assert_eq!(same_figures(&dsa, n), 3);
        assert_eq!(
            dsa["ML-DSA-44"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            vec!["KeyGen", "Sign", "Verify"]
        );
    }
}

#[test]
fn runs_auto_says_how_many_runs_each_record_used_and_what_stopped_it() {
    let d = tempfile::tempdir().unwrap();
    common::ok_into(
        "cpu --alg ML-KEM-512 --op keygen,encaps --batch 4 --threads 1 --runs auto --max-noise 20 --max-runs 12",
        d.path(),
    );
    let run = read_json(&run_files(d.path())[0]);
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    for r in recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["runs_requested"], 12);
        assert_eq!(r["max_noise"].as_f64(), Some(0.2));
        let used = r["runs_used"].as_u64().unwrap();
        assert_eq!(r["run_seconds"].as_array().unwrap().len() as u64, used);
        // Which condition held depends on this machine's noise; either way
        // the record must agree with it.
        let reached = r["noise_reached"].as_f64().unwrap();
        match r["stopped_by"].as_str().unwrap() {
            "noise" => assert!((6..=12).contains(&used) && reached < 0.2, "{r}"),
            "max_runs" => assert!(used == 12 && reached >= 0.2, "{r}"),
            other => panic!("stopped by {other} without a time limit: {r}"),
        }
    }
    // A fixed count says nothing of the kind.
    let d = tempfile::tempdir().unwrap();
    common::ok_into(
        "cpu --alg ML-KEM-512 --op keygen --batch 4 --threads 1 --runs 3",
        d.path(),
    );
    let run = read_json(&run_files(d.path())[0]);
    let r = &run["records"][0];
    assert!(
        r.get("runs_used").is_none() && r.get("stopped_by").is_none(),
        "{r}"
    );
}

#[test]
fn latency_mode_writes_latency_files() {
    let d = tempfile::tempdir().unwrap();
    common::ok_into(
        "cpu --latency --alg ML-KEM-768 --runs 5 --threads 1",
        d.path(),
    );
    let lat = read_json(&d.path().join("liboqs-cpu-1t/latency/mlkem_latency.json"));
    assert!(
        lat["ML-KEM-768"]["Decaps"]["latency_us"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let run = read_json(&run_files(d.path())[0]);
    let r = &run["records"][0];
    assert_eq!(r["mode"], "latency");
    assert_eq!(r["batch"], 1);
    assert!(r["latency_p99_us"].as_f64().unwrap() >= r["latency_p50_us"].as_f64().unwrap());
}

#[test]
fn fresh_process_times_each_run_in_its_own_process_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    common::ok_into(
        "cpu --fresh-process --alg ML-KEM-512 --op keygen --batch 4 --runs 3 --threads 1",
        d.path(),
    );
    let run = read_json(&run_files(d.path())[0]);
    let r = &run["records"][0];
    assert_eq!(r["status"], "ok", "{r}");
    let process = r["process"].as_str().unwrap();
    assert!(process.starts_with("fresh-process"), "{process}");
    common::assert_has(process, &["each of the 3 timed runs in a new process"]);
    assert_eq!(r["run_seconds"].as_array().unwrap().len(), 3);
    assert!(
        !r["gate"]["checks"].as_array().unwrap().is_empty(),
        "gate first: {r}"
    );
    assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0);
    // The default says it is in-process.
    let d2 = tempfile::tempdir().unwrap();
    pqcprof()
        .args(common::words("cpu --alg ML-KEM-512 --op keygen --batch 4"))
        .args(["--runs", "3", "--threads", "1", "--out"])
        .arg(d2.path())
        .assert()
        .success();
    let run = read_json(&run_files(d2.path())[0]);
    assert_eq!(run["records"][0]["process"], "in-process");
    // A fresh child alone times a cold run and checks it after.
    let d3 = tempfile::tempdir().unwrap();
    pqcprof()
        .args(["bench", "--fresh-child", "--backend", "liboqs-cpu"])
        .args(["--alg", "ML-DSA-44", "--op", "sign", "--batch", "2"])
        .args(["--runs", "1", "--warmup", "0", "--threads", "1", "--out"])
        .arg(d3.path())
        .assert()
        .success();
    let run = read_json(&run_files(d3.path())[0]);
    let r = &run["records"][0];
    assert_eq!(r["status"], "ok", "{r}");
    assert!(r["gate"].is_object(), "checked after its run: {r}");
}

#[test]
fn ctrl_c_keeps_finished_records_as_valid_json() {
    let d = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("pqcprof");
    // ML-KEM-512 finishes in well under a second; ML-DSA-87 then runs long.
    let child = std::process::Command::new(bin)
        .args(common::words(
            "cpu --alg ML-KEM-512,ML-DSA-87 --batch 20 --runs 300 --threads 1 --out",
        ))
        .arg(d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done_kem = common::wait_for_records(
        || run_files(d.path()).first().cloned(),
        3,
        Duration::from_secs(120),
        "ML-KEM-512 never finished",
    );
    common::interrupted(child);
    let run = read_json(&run_files(d.path())[0]);
    assert_eq!(run["interrupted"], true);
    assert_eq!(run["complete"], false);
    let recs = run["records"].as_array().unwrap();
    assert!(recs.len() >= done_kem);
    assert!(recs.len() < 6, "ML-DSA-87 cannot all have finished");
    assert!(recs.iter().all(|r| r["status"] == "ok"));
    // The temporary files of the atomic writes are gone.
    for e in std::fs::read_dir(d.path()).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(!n.contains(".tmp-"), "{n}");
    }
}

#[test]
fn gpu_without_a_driver_says_what_is_missing_and_measures_nothing() {
    if std::path::Path::new("/dev/nvidia0").exists() {
        common::hardware_skip(
            "gpu_without_a_driver_says_what_is_missing_and_measures_nothing",
            "a GPU device node exists: this test is for machines without one",
        );
        return;
    }
    let d = tempfile::tempdir().unwrap();
    pqcprof()
        .args(["gpu", "--alg", "ML-KEM-768", "--runs", "2", "--out"])
        .arg(d.path())
        .assert()
        .code(4) // not 3: no gate failed, nothing could run
        .stderr(predicate::str::contains("native-gpu"))
        .stderr(predicate::str::contains("nothing was measured"));
    let run = read_json(&run_files(d.path())[0]);
    let recs = run["records"].as_array().unwrap();
    // Three operations each for native-gpu and cupqc.
    assert_eq!(recs.len(), 6);
    assert!(recs
        .iter()
        .all(|r| r["status"] == "skipped" && r["reason"].as_str().unwrap().len() > 10));
    // The default bench still measures the CPU, with the GPU records skipped.
    pqcprof()
        .args(common::words(
            "bench --alg ML-KEM-512 --op keygen --batch 4 --runs 2 --threads 1 --out",
        ))
        .arg(d.path().join("b"))
        .assert()
        .success()
        .stderr(predicate::str::contains("measuring the CPU baselines only"));
}

#[test]
fn a_run_on_a_busy_machine_says_so_in_one_warning_line() {
    // Two processes spinning on the CPU while a short run measures: other
    // processes take far more than a tenth of the machine's time.
    let spin = || {
        std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap()
    };
    let mut spinners = [spin(), spin()];
    let d = tempfile::tempdir().unwrap();
    let o = pqcprof()
        .args(common::words(
            "cpu --alg ML-KEM-512 --op keygen --batch 2 --runs 40 --threads 1 --vectors none --out",
        ))
        .arg(d.path())
        .output()
        .unwrap();
    for s in &mut spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("the machine was busy while measuring"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].starts_with("pqcprof: warning: "), "{err}");
    let run = read_json(&run_files(d.path())[0]);
    assert!(
        run["metadata"]["machine_load"]["other_processes_cpu_pct"].is_number(),
        "{}",
        run["metadata"]
    );
}

#[test]
fn a_plugin_that_is_no_library_is_named_for_what_it_is_with_the_loaders_reason() {
    let d = tempfile::tempdir().unwrap();
    let folder = d.path().join("a-folder.so");
    std::fs::create_dir(&folder).unwrap();
    let fifo = d.path().join("a-fifo.so");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let empty = d.path().join("empty.so");
    std::fs::write(&empty, b"").unwrap();
    let text = d.path().join("text.so");
    std::fs::write(&text, "not a shared library, only some text\n".repeat(20)).unwrap();
    for (path, says) in [
        (&folder, "a folder, not a shared library"),
        (&fifo, "a FIFO (named pipe), not a shared library"),
        (&d.path().join("none.so"), "no such file"),
        // The loader's own reason follows libloading's "dlopen failed".
        (&empty, "dlopen failed: "),
        (&text, "dlopen failed: "),
    ] {
        let o = pqcprof()
            .args(["check", "--plugin"])
            .arg(path)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", path.display());
        assert!(err.contains(says), "{}: {err}", path.display());
        let reason = err.split(says).nth(1).unwrap_or("");
        if says.starts_with("dlopen") {
            // "file too short", "invalid ELF header", ...: something.
            assert!(reason.trim().len() > 5, "{}: {err}", path.display());
        }
    }
}

/// A CPU record's cycles per operation are the file's TSC rate times its
/// threads over its median per-run throughput (where this machine has an
/// invariant TSC: x86-64 Linux; elsewhere neither is written).
fn cycles_match_the_counter_rate(metadata: &Value, r: &Value) {
    let Some(mhz) = metadata["tsc_mhz"].as_f64() else {
        assert!(r["cycles_per_op"].is_null(), "cycles without a rate: {r}");
        return;
    };
    assert!(mhz > 100.0 && mhz < 10_000.0, "tsc_mhz {mhz}");
    let threads = r["threads"].as_f64().unwrap();
    let median = r["throughput_ops_per_sec"]["median"].as_f64().unwrap();
    let cycles = r["cycles_per_op"].as_f64().expect("cycles_per_op");
    let want = mhz * 1e6 * threads / median;
    assert!((cycles / want - 1.0).abs() < 1e-9, "{cycles} vs {want}");
}
