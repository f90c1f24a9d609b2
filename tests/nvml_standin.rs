//! The NVML sampler end to end on the stand-in NVML
//! (tests/fixtures/nvml-standin/, docs/nvml-standin.md), which answers from
//! the CPU stand-in driver's own account of its devices: each figure a
//! `native-gpu` record carries (peak memory, utilisation, power, energy per
//! operation, SM clock, throttle reasons) is held against the driver's
//! truth or the stand-in's stated power model, the NVML device is matched
//! to the CUDA device by PCI bus id when the two orders differ, and an NVML
//! that refuses a field, hangs or disappears mid-run leaves a named gap,
//! never a panic, a hang or a zero. Not a GPU: the figures prove the
//! sampler's plumbing (fields, units, device match), not any GPU's power.
//!
//! Needs NVRTC and a C++ compiler, as tests/cuda_standin.rs does.

mod common;

use common::{nvrtc_or_skip, outcome, standin};
use serde_json::Value;
use std::path::Path;

/// The stand-in NVML's power model in these tests (its defaults): watts
/// while no kernel runs and while one does.
const IDLE_W: f64 = 60.0;
const BUSY_W: f64 = 300.0;

/// A slow device (1 ms per operation, so a batch of 64 runs for 64 ms)
/// and a utilisation window of 4 ms: a sampler every millisecond sees the
/// batch running, in tens of samples per run.
const SLOW: [(&str, &str); 2] = [("NS_PER_OP", "1000000"), ("NVML_WINDOW_MS", "4")];

/// `pqcprof gpu --backend native-gpu` on the stand-in driver and NVML with
/// `knobs` (beside [`SLOW`]) and `args`, into `out`: (exit code, stdout,
/// stderr).
fn gpu(out: &Path, knobs: &[(&str, &str)], args: &str) -> (i32, String, String) {
    let mut all = SLOW.to_vec();
    all.extend_from_slice(knobs);
    let mut c = standin::pqcprof_with_nvml(&all);
    c.args(["gpu", "--backend", "native-gpu", "--warmup", "0"])
        .args(common::words(args))
        .arg("--out")
        .arg(out);
    outcome(&mut c)
}

/// The one record of the run file in `out`, which must be ok.
fn the_record(out: &Path) -> Value {
    let files = common::files(out, "run-", ".json");
    assert_eq!(files.len(), 1, "{files:?}");
    let recs = common::read_json(&files[0])["records"].clone();
    let recs = recs.as_array().unwrap();
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["status"], "ok", "{:#}", recs[0]);
    recs[0].clone()
}

/// A record of ML-KEM-512 keygen, batch 64, 3 runs, with `knobs`.
fn keygen_record(knobs: &[(&str, &str)]) -> Value {
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(
        d.path(),
        knobs,
        "--alg ML-KEM-512 --op keygen --batch 64 --runs 3",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    the_record(d.path())
}

fn usage(r: &Value) -> Vec<Value> {
    r["usage"].as_array().unwrap().clone()
}

fn gaps(u: &Value) -> String {
    u["gaps"]
        .as_array()
        .map(|g| {
            g.iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn a_record_carries_the_stand_in_gpus_truth() {
    if nvrtc_or_skip("a_record_carries_the_stand_in_gpus_truth").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let peak_file = d.path().join("peak.json");
    let peak_knob = peak_file.display().to_string();
    let r = keygen_record(&[("PEAK_FILE", peak_knob.as_str())]);
    common::assert_has(
        r["sampler"].as_str().unwrap(),
        &[
            "NVML sampler on device 0 (matched by PCI bus id)",
            "instantaneous",
        ],
    );
    // The driver's true peak (allocations and local memory) over the whole
    // process: every sample is at most that, and the timed runs hold all
    // of the batch's buffers, so the sampled peak is within 1% of it.
    let truth_mib = common::read_json(&peak_file)["peak_bytes"]
        .as_f64()
        .unwrap()
        / 1048576.0;
    let runs = usage(&r);
    assert_eq!(runs.len(), 3, "{r:#}");
    for u in &runs {
        assert_eq!(gaps(u), "", "{u:#}");
        let mem = u["peak_mem_mb"].as_f64().unwrap();
        assert!(
            mem <= truth_mib + 1e-9 && mem >= truth_mib * 0.99,
            "sampled {mem} MiB, driver's peak {truth_mib} MiB"
        );
        // A kernel ran through most of each sample's 4 ms window.
        assert!(u["peak_util_pct"].as_f64().unwrap() >= 90.0, "{u:#}");
        assert_eq!(u["peak_sm_clock_mhz"], 1980.0, "{u:#}");
        assert_eq!(u["energy_source"], "energy counter", "{u:#}");
        let w = u["mean_power_w"].as_f64().unwrap();
        // The mean of the samples: busy ones, and an idle one or two at
        // either end of the run.
        assert!(
            (IDLE_W..=BUSY_W).contains(&w) && w > 150.0,
            "mean power {w} W: {u:#}"
        );
        assert!(u["samples"].as_u64().unwrap() >= 5, "{u:#}");
    }
    assert!(r["peak_util_pct"]["max"].as_f64().unwrap() >= 90.0, "{r:#}");
    // Energy per operation: the counter's delta over the window of
    // back-to-back launches, over its operations. The model's power is
    // idle watts plus the busy surplus while a kernel runs, so the mean
    // power of a window of back-to-back launches lies between the two,
    // near the busy end.
    let e = &r["energy"];
    common::assert_has(
        e["method"].as_str().unwrap(),
        &["nvmlDeviceGetTotalEnergyConsumption"],
    );
    let (j, ops, secs) = (
        e["joules"].as_f64().unwrap(),
        e["ops"].as_f64().unwrap(),
        e["window_seconds"].as_f64().unwrap(),
    );
    assert!(secs >= 1.0, "{e:#}");
    assert!(
        (e["joules_per_op"].as_f64().unwrap() - j / ops).abs() < 1e-12 * (j / ops).max(1.0),
        "{e:#}"
    );
    let watts = j / secs;
    assert!(
        (200.0..=BUSY_W * 1.01).contains(&watts),
        "{watts} W over the window: {e:#}"
    );
    let clocks = &r["clocks"];
    assert_eq!(clocks["throttled"], false, "{clocks:#}");
    assert_eq!(clocks["sm_clock_max_mhz"], 1980.0, "{clocks:#}");
}

/// A stand-in for pqcprof in `scripts/gpu-check` (a shell script, test
/// only): `kernels --prebuild` lists its family's image at once, `gpu
/// --alg mlkem` copies the run file `$NVML_RUN_FILE` into its `--out`;
/// everything else succeeds at once and writes nothing.
const GPU_CHECK_BIN: &str = r#"#!/usr/bin/env bash
cmd=$1; shift
alg=; out=; pre=; arch=
while [ $# -gt 0 ]; do
  case "$1" in
    --alg) alg=$2; shift ;;
    --out) out=$2; shift ;;
    --prebuild) pre=$2; shift ;;
    --arch) arch=$2; shift ;;
  esac
  shift
done
if [ "$cmd" = kernels ] && [ -n "$pre" ]; then
  echo "$alg $arch: $pre/native-$alg-$arch-stand-in.cubin (1 bytes of machine code, 1 of PTX; compiled in 0.1 s)"
fi
if [ "$cmd" = gpu ] && [ "$alg" = mlkem ]; then mkdir -p "$out"; cp "$NVML_RUN_FILE" "$out/"; fi
exit 0
"#;

#[test]
fn a_throttle_reason_set_during_a_run_reaches_the_record_the_report_and_gpu_check() {
    if nvrtc_or_skip(
        "a_throttle_reason_set_during_a_run_reaches_the_record_the_report_and_gpu_check",
    )
    .is_none()
    {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    // A software power cap from the process's first finished kernel on.
    let (code, stdout, stderr) = gpu(
        &out,
        &[("NVML_THROTTLE", "sw_power_cap@1")],
        "--alg ML-KEM-512 --op keygen --batch 64 --runs 2",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = the_record(&out);
    let clocks = &r["clocks"];
    assert_eq!(clocks["throttled"], true, "{clocks:#}");
    assert_eq!(
        clocks["throttle_reasons"],
        serde_json::json!(["sw_power_cap"]),
        "{clocks:#}"
    );
    // The stand-in holds the SM clock at 60% under a power cap (of 1980
    // MHz busy, 345 idle).
    assert_eq!(clocks["sm_clock_max_mhz"], 1188.0, "{clocks:#}");
    assert!(
        [207.0, 1188.0].contains(&clocks["sm_clock_min_mhz"].as_f64().unwrap()),
        "{clocks:#}"
    );
    let run_file = common::files(&out, "run-", ".json").remove(0);
    // The report's caveats.
    let (code, text, err) = outcome(
        common::pqcprof()
            .args(["report", "--format", "markdown", "-o", "-"])
            .arg(&run_file),
    );
    assert_eq!(code, 0, "{err}");
    common::assert_has(
        &text,
        &["measured while throttled (sw_power_cap; SM clock "],
    );
    // gpu-check's summary.
    use std::os::unix::fs::PermissionsExt;
    let bin = d.path().join("pqcprof-stand-in");
    std::fs::write(&bin, GPU_CHECK_BIN).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let check_out = d.path().join("check");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu-check");
    let res = std::process::Command::new("bash")
        .arg(&script)
        .arg(&check_out)
        .args(["--deadline", "60", "--runs", "2", "--no-cpu", "--no-curve"])
        .env("PQCPROF_BIN", &bin)
        .env("NVML_RUN_FILE", &run_file)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(check_out.join("summary.txt"))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&res.stdout)));
    let line = summary
        .lines()
        .find(|l| l.starts_with("throughput-mlkem "))
        .unwrap();
    common::assert_has(
        line,
        &["1 ok records", "1 measured while throttled (sw_power_cap)"],
    );
}

#[test]
fn the_nvml_device_is_the_cuda_device_with_its_pci_bus_id_when_the_orders_differ() {
    if nvrtc_or_skip(
        "the_nvml_device_is_the_cuda_device_with_its_pci_bus_id_when_the_orders_differ",
    )
    .is_none()
    {
        return;
    }
    // Two devices, NVML listing them in the reverse of CUDA's order: CUDA
    // device 1 is NVML device 0. Only the device that runs the batch is
    // busy and holds memory, so a match by index samples an idle device
    // (utilisation 0, no memory in use).
    let d = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gpu(
        d.path(),
        &[("DEVICES", "2"), ("NVML_ORDER", "reversed")],
        "--alg ML-KEM-512 --op keygen --batch 64 --runs 2 --device 1",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = the_record(d.path());
    common::assert_has(
        r["sampler"].as_str().unwrap(),
        &["NVML sampler on device 0 (matched by PCI bus id)"],
    );
    for u in usage(&r) {
        assert!(u["peak_util_pct"].as_f64().unwrap() >= 90.0, "{u:#}");
        assert!(u["peak_mem_mb"].as_f64().unwrap() > 0.0, "{u:#}");
    }
}

#[test]
fn a_refused_field_is_a_named_gap_and_the_rest_is_measured() {
    if nvrtc_or_skip("a_refused_field_is_a_named_gap_and_the_rest_is_measured").is_none() {
        return;
    }
    let r = keygen_record(&[("NVML_REFUSE", "nvmlDeviceGetMemoryInfo_v2")]);
    for u in usage(&r) {
        assert!(u["peak_mem_mb"].is_null(), "{u:#}");
        common::assert_has(
            &gaps(&u),
            &["memory used: not measured, NVML answered no sample (nvmlDeviceGetMemoryInfo_v2: "],
        );
        assert!(u["peak_util_pct"].as_f64().unwrap() >= 90.0, "{u:#}");
    }
    assert!(r["peak_mem_mb"].is_null(), "{r:#}");
}

#[test]
fn without_the_energy_counter_energy_comes_from_integrated_power() {
    if nvrtc_or_skip("without_the_energy_counter_energy_comes_from_integrated_power").is_none() {
        return;
    }
    let r = keygen_record(&[("NVML_REFUSE", "nvmlDeviceGetTotalEnergyConsumption")]);
    for u in usage(&r) {
        assert_eq!(u["energy_source"], "integrated power samples", "{u:#}");
        assert_eq!(gaps(&u), "", "{u:#}");
    }
    let e = &r["energy"];
    common::assert_has(e["method"].as_str().unwrap(), &["power samples integrated"]);
    let watts = e["joules"].as_f64().unwrap() / e["window_seconds"].as_f64().unwrap();
    // Trapezoids over 1 ms samples of a power that steps between 60 and
    // 300 W: near the busy end for back-to-back launches.
    assert!((200.0..=BUSY_W * 1.01).contains(&watts), "{watts} W: {e:#}");
}

#[test]
fn a_hung_nvml_call_is_bounded_and_named() {
    if nvrtc_or_skip("a_hung_nvml_call_is_bounded_and_named").is_none() {
        return;
    }
    let t0 = std::time::Instant::now();
    let r = keygen_record(&[("NVML_HANG", "nvmlDeviceGetUtilizationRates")]);
    let took = t0.elapsed().as_secs_f64();
    assert!(took < 60.0, "{took} s");
    let runs = usage(&r);
    // The first run waits out the bound, then NVML is not called again.
    common::assert_has(
        &gaps(&runs[0]),
        &["NVML hung: the sampler's calls did not return within 2 s"],
    );
    for u in &runs[1..] {
        common::assert_has(&gaps(u), &["NVML hung: "]);
    }
    for u in &runs {
        assert!(
            u["peak_util_pct"].is_null() && u["energy_j"].is_null(),
            "{u:#}"
        );
    }
    assert!(r["energy"].is_null(), "{r:#}");
}

#[test]
fn check_names_a_hung_nvml_call_and_finishes() {
    if nvrtc_or_skip("check_names_a_hung_nvml_call_and_finishes").is_none() {
        return;
    }
    // `check` on this machine takes a few seconds; an NVML call that never
    // returns costs it the 2 s bound once. Past BOUND the run is killed, so
    // a hang fails the test rather than holding it up.
    const BOUND: std::time::Duration = std::time::Duration::from_secs(30);
    // nvml-wrapper's initialisation reads the driver version after
    // nvmlInit_v2, so either hang stops it there, and the line names both.
    for call in ["nvmlInit_v2", "nvmlSystemGetDriverVersion"] {
        let t0 = std::time::Instant::now();
        let (code, stdout, stderr) = outcome(
            standin::pqcprof_with_nvml(&[("NVML_HANG", call)])
                .arg("check")
                .timeout(BOUND),
        );
        let took = t0.elapsed();
        assert!(
            took < BOUND,
            "check with {call} hung: killed after {took:?}"
        );
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with("NVML"))
            .unwrap();
        common::assert_has(
            line,
            &[
                "missing (NVML hung: nvmlInit_v2 or the nvmlSystemGetDriverVersion ",
                "initialisation makes after it did not return within 2 s",
            ],
        );
    }
}

#[test]
fn nvml_gone_mid_run_leaves_named_gaps_and_no_partial_energy() {
    if nvrtc_or_skip("nvml_gone_mid_run_leaves_named_gaps_and_no_partial_energy").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("calls.log");
    let log_knob = log.display().to_string();
    // First log the launches of a whole run, then make NVML disappear
    // once the kernel of the second timed run has finished (the first
    // launch of the batch's kernel is the gate's): the later runs see it
    // gone.
    let (code, stdout, stderr) = gpu(
        &d.path().join("count"),
        &[("CALL_LOG", log_knob.as_str())],
        "--alg ML-KEM-512 --op keygen --batch 64 --runs 4",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let launches: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("launch ").map(str::to_string))
        .collect();
    let third = launches
        .iter()
        .enumerate()
        .filter(|(_, k)| k.starts_with("mlkem512_keygen"))
        .nth(2)
        .unwrap()
        .0;
    let gone = format!("all@{}", third + 1);
    let (code, stdout, stderr) = gpu(
        &d.path().join("out"),
        &[("NVML_GONE", gone.as_str())],
        "--alg ML-KEM-512 --op keygen --batch 64 --runs 4",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let r = the_record(&d.path().join("out"));
    let runs = usage(&r);
    let all_gaps: Vec<String> = runs.iter().map(gaps).collect();
    assert!(
        all_gaps
            .iter()
            .any(|g| g.contains("memory used: not measured, NVML answered no sample")),
        "{all_gaps:#?}"
    );
    assert!(
        all_gaps
            .iter()
            .any(|g| g.contains("samples failed, the first at sample")
                && g.contains("fell off the bus")),
        "{all_gaps:#?}"
    );
    for u in &runs {
        if gaps(u).is_empty() {
            continue;
        }
        // A run NVML left part way has no energy: neither the counter's
        // closing read nor a partial integral stands for the run.
        assert!(u["energy_j"].is_null(), "{u:#}");
        assert_eq!(u["energy_source"], "unavailable", "{u:#}");
    }
    assert!(r["energy"].is_null(), "{r:#}");
    // The report: one caveat for the record, naming the figures NVML left.
    let line = the_gap_caveat(&d.path().join("out"));
    common::assert_has(
        &line,
        &[
            "ML-KEM-512 keygen throughput batch 64",
            " of 4 runs (memory used, utilisation, SM clock, throttle reasons, power",
            "fell off the bus",
        ],
    );
}

/// The report's one caveat line on NVML's gaps for the run in `out`.
fn the_gap_caveat(out: &Path) -> String {
    let run_file = common::files(out, "run-", ".json").remove(0);
    let (code, text, err) = outcome(
        common::pqcprof()
            .args(["report", "--format", "markdown", "-o", "-"])
            .arg(&run_file),
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("NVML left gaps in "))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(text.matches("NVML left gaps in ").count(), 1, "{text}");
    lines[0].to_string()
}

#[test]
fn a_refused_field_and_a_hung_call_reach_the_reports_caveats() {
    if nvrtc_or_skip("a_refused_field_and_a_hung_call_reach_the_reports_caveats").is_none() {
        return;
    }
    for (knob, says) in [
        (
            "NVML_REFUSE",
            "NVML left gaps in 2 of 2 runs (memory used), the first: memory used: not measured, NVML answered no sample (nvmlDeviceGetMemoryInfo_v2: ",
        ),
        (
            "NVML_HANG",
            "NVML left gaps in 2 of 2 runs (NVML hung), the first: NVML hung: the sampler's calls did not return within 2 s",
        ),
    ] {
        let call = if knob == "NVML_REFUSE" {
            "nvmlDeviceGetMemoryInfo_v2"
        } else {
            "nvmlDeviceGetUtilizationRates"
        };
        let d = tempfile::tempdir().unwrap();
        let (code, stdout, stderr) = gpu(
            d.path(),
            &[(knob, call)],
            "--alg ML-KEM-512 --op keygen --batch 64 --runs 2",
        );
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        common::assert_has(&the_gap_caveat(d.path()), &[says]);
    }
}

#[test]
fn offload_energy_per_request_and_the_check_line_come_from_nvml() {
    if nvrtc_or_skip("offload_energy_per_request_and_the_check_line_come_from_nvml").is_none() {
        return;
    }
    let (code, stdout, stderr) = outcome(standin::pqcprof_with_nvml(&[]).arg("check"));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("NVML"))
        .unwrap();
    common::assert_has(line, &["found (driver pqcprof-nvml-standin)"]);
    let d = tempfile::tempdir().unwrap();
    let mut c = standin::pqcprof_with_nvml(&[]);
    c.args(["offload", "--backend", "native-gpu"])
        .args(common::words(
            "--alg ML-KEM-768 --op encaps --rate 100 --window 0.5 --max-batch 8 --max-wait 2",
        ))
        .arg("--out")
        .arg(d.path());
    let (code, stdout, stderr) = outcome(&mut c);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let run = common::read_json(&common::files(d.path(), "run-", ".json")[0]);
    let p = &run["offload"]["points"][0];
    assert_eq!(p["energy_source"], "energy counter", "{p:#}");
    let served = p["requests"].as_f64().unwrap() - p["not_served"].as_f64().unwrap();
    let joules = p["energy_per_request_mj"].as_f64().unwrap() * served / 1000.0;
    // The window is 0.5 s of arrivals (and the drain after it): at least
    // the idle power over it, at most the busy power over a few seconds.
    assert!(
        (IDLE_W * 0.5 * 0.9..=BUSY_W * 5.0).contains(&joules),
        "{joules} J: {p:#}"
    );
}

/// pqcprof's sampler in this process on a stand-in device that runs
/// nothing: no utilisation, no memory in use, the idle clock, and the
/// energy counter rising at the idle power.
#[test]
fn an_idle_device_reads_idle() {
    use pqcprof::monitor::Sampler;
    let cuda = standin::lib_dir().join("libcuda.so");
    let nvml = standin::nvml_lib_dir().join("libnvidia-ml.so.1");
    // SAFETY: the test fixtures' initialisers only set up their own state.
    // The driver is loaded globally, where the stand-in NVML finds its
    // state; the NVML by its path, so nvml-wrapper's load by name (its
    // soname) finds it.
    let _cuda = unsafe {
        libloading::os::unix::Library::open(Some(&cuda), libc::RTLD_NOW | libc::RTLD_GLOBAL)
    }
    .unwrap();
    let _nvml = unsafe { libloading::Library::new(&nvml) }.unwrap();
    let mut s = pqcprof::monitor::nvml::NvmlSampler::new(
        "00000000:5c:00.0",
        0,
        std::time::Duration::from_millis(1),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    s.start().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let u = s.stop().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert!(u.gaps.is_empty(), "{u:#?}");
    assert_eq!(u.peak_util_pct, Some(0.0), "{u:#?}");
    assert_eq!(u.peak_mem_mb, Some(0.0), "{u:#?}");
    assert_eq!(u.peak_sm_clock_mhz, Some(345.0), "{u:#?}");
    assert_eq!(u.mean_power_w, Some(IDLE_W), "{u:#?}");
    assert_eq!(u.energy_source.as_deref(), Some("energy counter"), "{u:#?}");
    let j = u.energy_j.unwrap();
    assert!(
        j <= IDLE_W * secs && j >= IDLE_W * 0.3 * 0.95,
        "{j} J in {secs} s"
    );
}
