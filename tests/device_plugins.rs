//! Device plugins (`memory = PQCPROF_MEMORY_DEVICE`): the example in
//! examples/plugins/cuda-mlkem (C++ launching its kernels through the CUDA
//! driver API on the stream pqcprof hands it) on the CPU stand-in driver
//! built with the plugin's kernel source (`build --kernels`). These prove
//! the device path (pqcprof's context, device buffers, the stream, events,
//! the gate over copied-back outputs, the vectors through device copies,
//! the worker replaced after a failure), never speed: every record is
//! emulated.

mod common;

use common::standin;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The stand-in that runs the example's kernels.
fn standin_lib() -> PathBuf {
    standin::lib_dir_with_kernels(&[Path::new(standin::CUDA_MLKEM_KERNELS)])
}

/// The example plugin as a `--backend` value.
fn backend() -> String {
    format!("plugin:{}", standin::cuda_mlkem_plugin().display())
}

/// The one run file in `dir`, parsed.
fn run_file(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(common::run_file_in(dir)).unwrap()).unwrap()
}

fn records_of<'a>(run: &'a Value, backend: &str) -> Vec<&'a Value> {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["backend"] == backend)
        .collect()
}

const PLUGIN: &str = "plugin-cuda-mlkem-example";

#[test]
fn the_device_example_is_measured_beside_liboqs_and_the_native_kernels() {
    if common::nvrtc_or_skip("the_device_example_is_measured_beside_liboqs_and_the_native_kernels")
        .is_none()
    {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let backends = format!("liboqs,native,{}", backend());
    let o = standin::pqcprof_on(&standin_lib(), &[])
        .args([
            "bench",
            "--backend",
            &backends,
            "--alg",
            "ML-KEM-512,ML-KEM-1024",
        ])
        .args(["--batch", "130", "--runs", "2", "--threads", "1"])
        .args(["--kernel", "thread", "--vectors", "sample", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let run = run_file(out.path());
    let plugin = records_of(&run, PLUGIN);
    assert_eq!(plugin.len(), 6, "{plugin:#?}");
    for r in &plugin {
        assert_eq!(r["status"], "ok", "{r:#}");
        assert_eq!(r["emulated"], true, "the stand-in's records say so: {r:#}");
        assert_eq!(r["device"]["kind"], "gpu", "{r:#}");
        assert_eq!(r["batch"], 130);
        let p = &r["plugin"];
        assert_eq!(p["name"], "cuda-mlkem-example");
        assert_eq!(p["memory"], "device");
        assert_eq!(p["abi_version"], 1);
        let checks = r["gate"]["checks"].to_string();
        assert!(
            checks.contains("byte for byte") || checks.contains("implicit-rejection"),
            "{checks}"
        );
        assert!(
            r["timed_window"]
                .as_str()
                .unwrap_or("")
                .contains("CUDA events recorded on the stream"),
            "{r:#}"
        );
    }
    // Beside the built-in backends, in the same run.
    assert_eq!(records_of(&run, "native-gpu").len(), 6);
    assert!(records_of(&run, "liboqs-cpu")
        .iter()
        .all(|r| r["status"] == "ok"));
    // The run began with the plugin's vectors, a sample through device copies.
    let v = run["vectors"].as_array().unwrap();
    let entry = v
        .iter()
        .find(|e| e["backend"] == PLUGIN)
        .unwrap_or_else(|| panic!("{v:#?}"));
    assert!(
        entry["plan"]
            .as_str()
            .unwrap()
            .contains("the first 4 of each group"),
        "{entry:#}"
    );
    assert!(
        entry["implementation"]
            .as_str()
            .unwrap()
            .contains("device memory"),
        "{entry:#}"
    );
    let suites = entry["suites"].as_array().unwrap();
    let sum = |k: &str| -> u64 { suites.iter().map(|s| s[k].as_u64().unwrap()).sum() };
    assert!(sum("passed") > 0, "{entry:#}");
    assert_eq!(sum("failed"), 0, "{entry:#}");
}

#[test]
fn check_plugin_runs_the_vectors_on_the_device_example() {
    let o = standin::pqcprof_on(&standin_lib(), &[])
        .args(["check", "--sample", "3", "--plugin"])
        .arg(standin::cuda_mlkem_plugin())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{text}\n{err}");
    assert!(
        text.contains("plugin cuda-mlkem-example") && text.contains("device memory"),
        "{text}"
    );
    assert!(text.contains("the CPU stand-in driver"), "{text}");
    assert!(
        text.contains("ML-KEM-768 (keygen, encaps, decaps)"),
        "{text}"
    );
}

#[test]
fn offload_serves_through_the_device_example() {
    let out = tempfile::tempdir().unwrap();
    let o = standin::pqcprof_on(&standin_lib(), &[])
        .args(["offload", "--backend", &backend()])
        .args(["--alg", "ML-KEM-512", "--op", "encaps", "--rate", "200"])
        .args(["--window", "1", "--workers", "1", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let json = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let run: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let plugin = &run["offload"]["plugin"];
    assert_eq!(plugin["name"], "cuda-mlkem-example", "{run:#}");
    assert_eq!(plugin["memory"], "device");
    // Served on the (emulated) GPU the plugin's worker opened.
    assert_eq!(run["offload"]["emulated"], true, "{run:#}");
    assert_eq!(run["offload"]["device_ordinal"], 0, "{run:#}");
    assert!(
        run["offload"]["device"]
            .as_str()
            .unwrap()
            .contains("stand-in"),
        "{run:#}"
    );
}

#[test]
fn a_wrong_output_from_the_device_fails_that_gate_and_keeps_every_other_record() {
    // The stand-in leaves the key generation kernel's last block unrun: at
    // batch 129 (blocks of 128), item 128's ek and dk stay all zero.
    let out = tempfile::tempdir().unwrap();
    let backends = format!("liboqs,{}", backend());
    let knob = [("SKIP_LAST_BLOCK", "example_mlkem768_keygen")];
    let o = standin::pqcprof_on(&standin_lib(), &knob)
        .args(["bench", "--backend", &backends, "--alg", "ML-KEM-768"])
        .args(["--batch", "129", "--runs", "2", "--threads", "1", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    let run = run_file(out.path());
    let plugin = records_of(&run, PLUGIN);
    assert_eq!(plugin.len(), 3, "{plugin:#?}");
    let keygen = plugin.iter().find(|r| r["operation"] == "KeyGen").unwrap();
    assert_eq!(keygen["status"], "failed", "{keygen:#}");
    assert!(
        keygen["run_seconds"]
            .as_array()
            .is_none_or(|v| v.is_empty()),
        "a failed gate is never timed: {keygen:#}"
    );
    let why = keygen["reason"].as_str().unwrap();
    assert!(
        why.contains("plugin cuda-mlkem-example ML-KEM-768 keygen gate")
            && why.contains("operation 128: ek not written by the call")
            && why.contains("(1 of 129 items left so)"),
        "{why}"
    );
    // The plugin's other operations are measured after the failure.
    for r in plugin.iter().filter(|r| r["operation"] != "KeyGen") {
        assert_eq!(r["status"], "ok", "{r:#}");
    }
    assert!(records_of(&run, "liboqs-cpu")
        .iter()
        .all(|r| r["status"] == "ok"));
}

#[test]
fn a_device_plugin_without_a_gpu_is_refused_naming_why() {
    let out = tempfile::tempdir().unwrap();
    let backends = format!("liboqs,{}", backend());
    let o = standin::pqcprof_on(&standin_lib(), &[("DEVICES", "0")])
        .args(["bench", "--backend", &backends, "--alg", "ML-KEM-512"])
        .args(["--batch", "8", "--runs", "2", "--threads", "1", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    let run = run_file(out.path());
    let refused: Vec<&Value> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["backend"].as_str().unwrap().starts_with("plugin-"))
        .collect();
    assert_eq!(refused.len(), 3, "{refused:#?}");
    for r in refused {
        assert_eq!(r["status"], "failed");
        let why = r["reason"].as_str().unwrap();
        assert!(
            why.contains("declares device memory") && why.contains("cannot open GPU 0"),
            "{why}"
        );
    }
    assert_eq!(records_of(&run, "liboqs-cpu").len(), 3);
}

#[test]
fn a_device_plugins_rows_stand_in_the_gpu_against_cpu_table() {
    // Measured on the stand-in, then its emulated flag cleared, as a GPU's
    // records have it: the report's GPU section is where they go (emulated
    // ones are kept out of every speed section).
    let out = tempfile::tempdir().unwrap();
    let backends = format!("liboqs,{}", backend());
    standin::pqcprof_on(&standin_lib(), &[])
        .args(["bench", "--backend", &backends, "--alg", "ML-KEM-512"])
        .args(["--batch", "32", "--runs", "2", "--threads", "1", "--out"])
        .arg(out.path())
        .assert()
        .success();
    let mut run = run_file(out.path());
    for r in run["records"].as_array_mut().unwrap() {
        r["emulated"] = Value::Bool(false);
    }
    let file = out.path().join("as-on-a-gpu.json");
    std::fs::write(&file, serde_json::to_vec(&run).unwrap()).unwrap();
    let md = common::markdown_report(&file, out.path());
    let section = md
        .split("\n## GPU against CPU")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("no GPU section:\n{md}"));
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.contains(&format!("| {PLUGIN} (")))
        .collect();
    assert_eq!(rows.len(), 3, "{section}");
    // Every row has its best CPU figure, however far apart liboqs's two
    // runs were on a loaded machine (a reader once left out a record whose
    // runs differed 30 times); if not, what the run file says of liboqs's
    // records and the machine's load.
    let liboqs: Vec<String> = records_of(&run, "liboqs-cpu")
        .iter()
        .map(|r| {
            format!(
                "{} {} status {} reason {} ops/s {} runs {}",
                r["algorithm"],
                r["operation"],
                r["status"],
                r["reason"],
                r["ops_per_sec"],
                r["throughput_ops_per_sec"]["raw"]
            )
        })
        .collect();
    assert!(
        rows.iter().all(|r| r.contains("liboqs-cpu")),
        "{section}\nliboqs's records:\n{}\n{}",
        liboqs.join("\n"),
        common::load_note()
    );
    assert!(md.contains("| Plugins |"), "{md}");
}
