//! `pqcprof offload` and `pqcprof plan` end to end on the CPU backend:
//! requests at a rate through the dynamic batcher, every point checked and
//! saved in the run file, the planner's predictions from a run file's batch
//! times, and bad input refused by name.

mod common;

use common::{outcome, pqcprof, read_json};
use serde_json::Value;
use std::path::Path;

/// `pqcprof` with `line`'s words and `--out dir`: exit code, stdout, stderr.
fn run_into(line: &str, dir: &Path) -> (i32, String, String) {
    outcome(pqcprof().args(common::words(line)).arg("--out").arg(dir))
}

/// `pqcprof plan --from file` with `line`'s words.
fn plan(file: &Path, line: &str) -> (i32, String, String) {
    outcome(
        pqcprof()
            .args(["plan", "--from"])
            .arg(file)
            .args(common::words(line)),
    )
}

/// A run file of ML-KEM-768 encapsulations at batches 1 to 16 (`runs`
/// runs each, at `threads`), in a folder kept as long as the handle.
fn encaps_sweep(runs: u32, threads: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run_into(
        &format!(
            "cpu --alg ML-KEM-768 --op encaps --batch-sweep 16 --runs {runs} --threads {threads}"
        ),
        d.path(),
    );
    assert_eq!(code, 0, "{err}");
    let file = common::files(d.path(), "run-", ".json").pop().unwrap();
    (d, file)
}

fn run_file(dir: &Path) -> Value {
    let files = common::files(dir, "run-", ".json");
    assert_eq!(files.len(), 1, "{files:?}");
    read_json(&files[0])
}

/// Checks one point's shape and that its figures hang together.
fn check_point(p: &Value) {
    for key in [
        "latency_ms",
        "queue_ms",
        "service_ms",
        "predicted_latency_ms",
    ] {
        let q = &p[key];
        let (p50, p99, max) = (q["p50"].as_f64(), q["p99"].as_f64(), q["max"].as_f64());
        let (p50, p99, max) = (p50.unwrap(), p99.unwrap(), max.unwrap());
        assert!(p50 > 0.0 && p50 <= p99 && p99 <= max, "{key}: {q}");
        assert!(q["p90"].as_f64().is_some() && q["p999"].as_f64().is_some());
    }
    // A request's latency is its wait plus its service.
    assert!(p["latency_ms"]["max"].as_f64() >= p["service_ms"]["max"].as_f64());
    assert!(p["gate"]["checked_ops"].as_u64().unwrap() > 0, "{p}");
    assert_eq!(p["dropped"], 0);
    assert!(p["achieved_rate"].as_f64().unwrap() > 0.0);
    let sizes = p["batch_sizes"].as_object().unwrap();
    let requests: u64 = sizes
        .iter()
        .map(|(b, n)| b.parse::<u64>().unwrap() * n.as_u64().unwrap())
        .sum();
    assert_eq!(requests, p["requests"].as_u64().unwrap(), "{p}");
}

#[test]
fn offload_serves_a_rate_and_saves_the_point() {
    // One worker serves 1,000/s with room to spare, but a stall of tens of
    // milliseconds near the window's end (other processes on the machine)
    // marks the point saturated: such a point is run again, at most three
    // times in all, and the failure says the machine's load.
    let d = tempfile::tempdir().unwrap();
    let mut tries = 0;
    let (dir, code, out, err) = loop {
        tries += 1;
        let dir = d.path().join(format!("try-{tries}"));
        std::fs::create_dir_all(&dir).unwrap();
        let (code, out, err) = run_into(
            "offload --alg ML-KEM-768 --op encaps --rate 1000 --window 0.5 --slo p90=50ms",
            &dir,
        );
        let saturated = code == 0 && run_file(&dir)["offload"]["points"][0]["saturated"] == true;
        if !saturated || tries == 3 {
            break (dir, code, out, err);
        }
    };
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1,000/s offered"), "{out}");
    let run = run_file(&dir);
    assert_eq!(run["complete"], true);
    let o = &run["offload"];
    assert_eq!(o["backend"], "liboqs-cpu");
    assert_eq!(o["algorithm"], "ML-KEM-768");
    assert_eq!(o["operation"], "encaps");
    assert!(o["curve"].as_array().unwrap().len() >= 2, "{o}");
    let points = o["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    let p = &points[0];
    check_point(p);
    assert_eq!(p["offered_rate"], 1000.0);
    // 500 requests were scheduled (a Poisson count over 0.5 s is not
    // exactly 500: the window holds rate x window arrivals).
    assert_eq!(p["requests"], 500);
    assert_eq!(
        p["saturated"],
        false,
        "saturated in {tries} tries; {}",
        common::load_note()
    );
    // A 50 ms objective on a 1,000/s load of 30 us operations is met (its
    // p90 rests on the 50 slowest of 500 requests).
    assert_eq!(p["meets_slo"], true, "{p}");
    assert_eq!(o["max_rate_under_slo"], 1000.0);
    // The planner's highest rate under the objective, from the batch
    // times measured before the point, meets it by its own prediction.
    let top = &o["predicted_max_rate_under_slo"];
    assert!(top["offered_rate"].as_f64().unwrap() > 0.0, "{o}");
    assert!(top["latency_ms"]["p90"].as_f64().unwrap() <= 50.0, "{top}");
    assert_eq!(top["meets_slo"], true);
    common::assert_has(&out, &["the planner's highest rate with p90=50ms"]);
    // The rate served is over the window the requests were offered in:
    // never above the rate offered.
    assert!(p["achieved_rate"].as_f64().unwrap() <= 1000.0, "{p}");
    // The same point as CSV beside the run file.
    let csv = common::files(&dir, "run-", ".csv");
    assert_eq!(csv.len(), 1, "{csv:?}");
    assert_eq!(
        csv[0].file_stem(),
        common::files(&dir, "run-", ".json")[0].file_stem()
    );
    let text = std::fs::read_to_string(&csv[0]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cell("offered_rate"), "1000.000");
    assert_eq!(cell("requests"), "500");
    assert_eq!(cell("dropped"), "0");
    let p99: f64 = cell("latency_p99_ms").parse().unwrap();
    assert!((p99 - p["latency_ms"]["p99"].as_f64().unwrap()).abs() < 1e-5);
    // The CPU has no energy reading: none in the point, the CSV or the
    // report; a GPU point's (SYNTHETIC here) is in the report's table.
    assert!(p.get("energy_per_request_mj").is_none(), "{p}");
    assert_eq!(cell("energy_per_request_mj"), "");
    let file = common::files(&dir, "run-", ".json").remove(0);
    let md = common::markdown_report(&file, &dir);
    common::assert_has(&md, &["Energy per request there", "no energy reading"]);
    let mut v = common::read_json(&file);
    v["offload"]["points"][0]["energy_per_request_mj"] = 0.25.into();
    v["offload"]["points"][0]["energy_source"] = "SYNTHETIC energy counter".into();
    let gpu = d.path().join("synthetic-energy.json");
    std::fs::write(&gpu, serde_json::to_vec(&v).unwrap()).unwrap();
    let md = common::markdown_report(&gpu, d.path());
    common::assert_has(&md, &["0.250 mJ", "SYNTHETIC energy counter"]);
}

#[test]
fn a_queue_limit_drops_what_finds_it_full_and_counts_it() {
    let d = tempfile::tempdir().unwrap();
    // 100,000 signatures a second for 0.5 s against one worker: far more
    // than one CPU thread signs, so the queue of 8 fills and stays full (0.5 s
    // keeps the 100 requests p90 needs served even on a busy machine).
    let (code, out, err) = run_into("offload --alg ML-DSA-65 --op sign --rate 100000 --window 0.5 --max-batch 4 --max-wait 0 --queue-limit 8 --slo p90=1s", d.path());
    assert_eq!(code, 0, "{err}");
    let o = &run_file(d.path())["offload"];
    assert_eq!(o["queue_limit"], 8);
    let p = &o["points"][0];
    let (served, dropped) = (
        p["requests"].as_u64().unwrap(),
        p["dropped"].as_u64().unwrap(),
    );
    assert_eq!(served + dropped, 50_000, "{p}");
    assert!(dropped > 25_000, "{p}");
    assert!(p["gate"]["checked_ops"].as_u64().unwrap() > 0);
    assert!(out.contains("dropped"), "{out}");
    // The requests served waited little (at most 8 ahead of them), so the
    // objective is met; but a point that drops requests did not keep up,
    // and no rate under the objective is named from it.
    assert_eq!(p["meets_slo"], true, "{p}; {}", common::load_note());
    assert!(o["max_rate_under_slo"].is_null(), "{o}");
}

#[test]
fn signing_with_two_workers_and_a_fixed_batching() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run_into("offload --alg ML-DSA-65 --op sign --rate 300 --window 0.5 --workers 2 --max-batch 4 --max-wait 1 --arrivals uniform", d.path());
    assert_eq!(code, 0, "{err}");
    let o = &run_file(d.path())["offload"];
    assert_eq!(o["workers"], 2);
    let p = &o["points"][0];
    check_point(p);
    assert_eq!(
        (p["max_batch"].as_u64(), p["max_wait_ms"].as_f64()),
        (Some(4), Some(1.0))
    );
    assert!(o["arrivals"].as_str().unwrap().starts_with("uniform"));
    let largest = p["batch_sizes"]
        .as_object()
        .unwrap()
        .keys()
        .map(|b| b.parse::<u64>().unwrap())
        .max()
        .unwrap();
    assert!(largest <= 4, "{p}");
}

#[test]
fn a_rate_sweep_doubles_until_the_batcher_falls_behind_and_a_deadline_keeps_the_points() {
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run_into("offload --alg ML-KEM-512 --op keygen --rate-sweep 500..4000 --window 0.3 --max-batch 8 --max-wait 0.5", d.path());
    assert_eq!(code, 0, "{err}");
    let points = run_file(d.path())["offload"]["points"]
        .as_array()
        .unwrap()
        .clone();
    let rates: Vec<f64> = points
        .iter()
        .map(|p| p["offered_rate"].as_f64().unwrap())
        .collect();
    // Doubling from 500 while the batcher keeps up, up to 4,000 (all four
    // on a quiet machine); after the first rate that fell behind, three
    // bisections between it and the last that kept up. Which rate falls
    // behind depends on this machine and its load; the rule does not.
    let behind = points.iter().position(|p| p["saturated"] == true);
    let doubled = behind.map_or(rates.len(), |i| i + 1);
    let expected: Vec<f64> = (0..doubled).map(|i| 500.0 * 2f64.powi(i as i32)).collect();
    assert_eq!(rates[..doubled], expected[..], "{points:?}");
    match behind {
        None => assert_eq!(rates, [500.0, 1000.0, 2000.0, 4000.0], "{points:?}"),
        Some(0) => assert_eq!(rates.len(), 1, "nothing kept up, nothing to bisect"),
        Some(i) => {
            assert_eq!(rates.len(), doubled + 3, "{points:?}");
            let (mut lo, mut hi) = (rates[i - 1], rates[i]);
            for (p, &r) in points[doubled..].iter().zip(&rates[doubled..]) {
                assert!((r - (lo * hi).sqrt()).abs() < 1e-6, "{rates:?}");
                if p["saturated"] == true {
                    hi = r;
                } else {
                    lo = r;
                }
            }
        }
    }
    // A deadline in the middle: finished points kept, exit 5, said why.
    let d = tempfile::tempdir().unwrap();
    let (code, _, err) = run_into("offload --alg ML-KEM-512 --op keygen --rate-sweep 500..64000 --window 0.5 --max-batch 8 --max-wait 0.5 --deadline 2", d.path());
    assert_eq!(code, 5, "{err}");
    let run = run_file(d.path());
    let o = &run["offload"];
    assert!(!o["points"].as_array().unwrap().is_empty(), "{o}");
    assert!(o["stopped"].as_str().unwrap().contains("deadline"), "{o}");
    assert_eq!(run["complete"], true);
}

#[test]
fn plan_predicts_from_a_batch_sweep_and_names_the_highest_rate_under_an_objective() {
    let (_d, file) = encaps_sweep(5, "1");
    let (code, out, err) = plan(
        &file,
        "--alg ML-KEM-768 --op encaps --rate 2000 --slo p99=5ms --json",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "pqcprof-plan");
    assert_eq!(v["predicted"], true);
    let batches: Vec<u64> = v["curve"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [1, 4, 16]);
    let p = &v["point"];
    assert_eq!(p["offered_rate"], 2000.0);
    assert_eq!(p["meets_slo"], true, "{p}");
    assert!(p["latency_ms"]["p99"].as_f64().unwrap() <= 5.0);
    let top = &v["max_rate_under_slo"];
    assert!(top["offered_rate"].as_f64().unwrap() > 2000.0, "{top}");
    assert!(top["latency_ms"]["p99"].as_f64().unwrap() <= 5.0);
    // The text form says it is a prediction.
    let (code, out, _) = plan(&file, "--alg ML-KEM-768 --op encaps --rate 2000");
    assert_eq!(code, 0);
    common::assert_has(&out, &["predicted", "not measured"]);
    // A percentile deeper than the simulation can resolve is said so,
    // never met.
    let (code, out, err) = plan(
        &file,
        "--alg ML-KEM-768 --op encaps --rate 2000 --slo p99.999999=1ms --handoff-ms 0",
    );
    assert_eq!(code, 0, "{err}");
    common::assert_has(&out, &["not resolvable", "1,000,000,000"]);
    assert!(!out.contains("objective p99.999999<=1 ms: met"), "{out}");
    // Records of another operation: named, with what the file has.
    let (code, _, err) = plan(&file, "--alg ML-DSA-65 --op sign --rate 100");
    assert_ne!(code, 0);
    common::assert_has(&err, &["ML-DSA-65 sign", "liboqs-cpu ML-KEM-768 encaps"]);
    // Beyond the largest measured batch: refused.
    let (code, _, err) = plan(
        &file,
        "--alg ML-KEM-768 --op encaps --rate 100 --max-batch 64 --max-wait 1",
    );
    assert_ne!(code, 0);
    common::assert_has(&err, &["--max-batch 64", "16"]);
}

#[test]
fn plan_on_two_workers_takes_their_all_busy_times_from_two_thread_records() {
    let (_d, file) = encaps_sweep(3, "1,2");
    let line = "--alg ML-KEM-768 --op encaps --rate 2000 --workers 2 --handoff-ms 0";
    let (code, out, err) = plan(&file, &format!("{line} --json"));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["curve"]["contended"];
    assert_eq!(c["busy"], 2, "{v}");
    // A batch of 16 on two threads is 8 on each at once, and so on.
    let two_threads: Vec<(u64, f64)> = read_json(&file)["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["threads"] == 2 && r["batch"].as_u64().unwrap() % 2 == 0)
        .map(|r| {
            (
                r["batch"].as_u64().unwrap() / 2,
                r["batch_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    let contended: Vec<(u64, f64)> = c["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["batch"].as_u64().unwrap(),
                p["batch_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(contended, two_threads);
    assert!(
        v["contention"].as_str().unwrap().starts_with("modelled"),
        "{v}"
    );
    // One worker: nothing to say of contention.
    let one = line.replace("--workers 2", "--workers 1");
    let (code, out, _) = plan(&file, &format!("{one} --json"));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["contention"].is_null() && v["curve"]["contended"].is_null());
    // One-thread records only: contention not modelled, and said so.
    let (_d, file) = encaps_sweep(3, "1");
    let (code, out, _) = plan(&file, &format!("{line} --json"));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["curve"]["contended"].is_null(), "{v}");
    assert!(v["contention"]
        .as_str()
        .unwrap()
        .starts_with("not modelled"));
    let (code, out, _) = plan(&file, line);
    assert_eq!(code, 0);
    common::assert_has(&out, &["contention not modelled"]);
}

#[test]
fn bad_input_is_refused_by_name_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let [empty, unsorted, words] = [
        ("empty", ""),
        ("unsorted", "0\n0.5\n0.25\n"),
        ("words", "0\nsoon\n"),
    ]
    .map(|(name, text)| {
        let f = d.path().join(format!("{name}.txt"));
        std::fs::write(&f, text).unwrap();
        f
    });
    // Each line: the arguments after `offload --alg ML-KEM-768`, `=>`,
    // what the error must say.
    let cases = format!(
        "--op encaps --rate 0 => '0' for '--rate
         --op encaps --rate -5 => '-5' for '--rate
         --op encaps --rate 100 --slo p99 => --slo 'p99'
         --op encaps --rate 100 --slo p99=fast => --slo 'p99=fast'
         --op encaps --rate 100 --max-batch 0 --max-wait 1 => '0' for '--max-batch
         --op encaps --rate 100 --max-batch 8 => --max-batch 8 with --max-wait auto
         --op encaps --rate 100 --max-batch 8 --max-wait -1 => '-1' for '--max-wait
         --op encaps --rate-sweep 5..1 => --rate-sweep '5..1'
         --op encaps --rate-sweep 5-10 => --rate-sweep '5-10'
         --op encaps --rate 100 --window 0 => '0' for '--window
         --op encaps --rate 100 --queue-limit 0 => --queue-limit 0
         --op encaps --rate 100 --queue-limit lots => --queue-limit lots
         --op encaps --rate 100 --max-batch 8 --max-wait 1 --queue-limit 4 => --queue-limit 4: at least the largest batch, 8
         --op encaps --rate 100 --queue-limit 16 => --queue-limit 16: at least the largest batch, 64
         --op encaps => --rate PER_SEC
         --op sign --rate 100 => --op sign
         --op encaps --trace {} => 0 arrival time(s)
         --op encaps --trace {} => line 3
         --op encaps --trace {} => 'soon'
         --op encaps --trace /dev/zero => --trace /dev/zero: is a device, not a trace",
        empty.display(),
        unsorted.display(),
        words.display()
    );
    for case in cases.lines() {
        let (args, says) = case.trim().split_once(" => ").unwrap();
        let args = format!("offload --alg ML-KEM-768 {args}");
        let out = d.path().join("out");
        let (code, _, err) = run_into(&args, &out);
        assert_ne!(code, 0, "{args}: accepted");
        assert!(err.contains(says), "{args}: {err}");
        assert!(
            !out.exists() || common::files(&out, "run-", ".json").is_empty(),
            "{args}"
        );
    }
}

#[test]
fn a_tls13_server_mix_counts_handshakes_and_gates_every_part() {
    let d = tempfile::tempdir().unwrap();
    let line = "offload --mix tls13-server --rate 100 --window 0.3 --batch-top 4";
    let out = match run_into(line, d.path()) {
        (0, out, _) => out,
        (code, _, err) => panic!("exit {code}: {err}"),
    };
    for says in ["mix tls13-server", "100 handshakes/s offered"] {
        assert!(out.contains(says), "{says}: {out}");
    }
    let run = run_file(d.path());
    let o = &run["offload"];
    assert_eq!(o["mix"], "tls13-server");
    let p = &o["points"][0];
    check_point(p);
    assert_eq!(p["mix"], "tls13-server");
    // Each part of the handshake passed its own check.
    let checks = p["gate"]["checks"].to_string();
    for part in ["X25519", "decapsulates", "signature verifies"] {
        assert!(checks.contains(part), "{part}: {checks}");
    }
    let csv = std::fs::read_to_string(common::files(d.path(), "run-", ".csv")[0].clone()).unwrap();
    assert!(csv.contains(",tls13-server,"), "{csv}");
    // The report labels the mix's rates as handshakes.
    let files = common::files(d.path(), "run-", ".json");
    let text = common::markdown_report(&files[0], d.path());
    assert!(text.contains("mix tls13-server"), "{text}");
    assert!(text.contains("100 handshakes/s"), "{text}");
}

#[test]
fn a_bad_or_contradicted_mix_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            "--mix tls12-client",
            "'tls12-client': no such request mix (mixes: tls13-server)",
        ),
        (
            "--mix tls13-server --alg ML-DSA-44",
            "--alg ML-DSA-44 contradicts",
        ),
        ("--mix tls13-server --op verify", "--op verify contradicts"),
    ] {
        let args = format!("offload {args} --rate 10");
        let (code, _, err) = run_into(&args, d.path());
        assert_ne!(code, 0, "{args}: accepted");
        assert!(err.contains(says), "{args}: {err}");
    }
    assert!(common::files(d.path(), "run-", ".json").is_empty());
}

/// Without `--from`, `plan` measures the batch times here first (up to
/// `--batch-top`, with the workers busy together when there are several)
/// and says so; a backend it cannot measure on is refused by name.
#[test]
fn plan_without_a_run_file_measures_the_batch_times_here_first() {
    let line = "plan --alg ML-KEM-768 --op encaps --rate 2000 --batch-top 4 --workers 2 --json";
    let (code, out, err) = outcome(pqcprof().args(common::words(line)));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["from"], "measured here just now (liboqs-cpu, 2 workers)",
        "{v}"
    );
    let batches: Vec<u64> = v["curve"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [1, 2, 4], "{v}");
    assert_eq!(v["curve"]["contended"]["busy"], 2, "{v}");
    assert!(
        v["contention"].as_str().unwrap().contains("measured here"),
        "{v}"
    );
    assert!(
        v["point"]["latency_ms"]["p99"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    common::assert_has(
        &err,
        &["measuring batch times up to 4 on one worker, then on 2"],
    );

    let (code, _, err) = outcome(pqcprof().args(common::words(
        "plan --backend liboqs --alg ML-KEM-768 --op encaps --rate 2000",
    )));
    assert_eq!(code, 2, "{err}");
    common::assert_has(&err, &["--backend liboqs", "liboqs-cpu, native-gpu, cupqc"]);
}

#[test]
fn rates_and_windows_beyond_what_a_point_can_hold_are_refused_as_usage() {
    let d = tempfile::tempdir().unwrap();
    // Each line: the arguments after `offload --alg ML-KEM-768 --op
    // encaps --workers 1`, `=>`, what the refusal must say.
    let cases = "--window 0.1 --rate 1e308 => from 0.01 to 100000000
        --rate 1e9 --window 3600 --max-batch 4 --max-wait 1 => '1e9' for '--rate
        --rate 1e7 --window 3600 --max-batch 4 --max-wait 1 => 36,000,000,000 requests in one point; at most 10,000,000
        --rate-sweep 100..1e7 --window 3600 => 36,000,000,000 requests
        --rate 100 --window inf => '--window <SECONDS>'
        --rate 100 --max-batch 4 --max-wait 1e300 => 0 to 60000
        --rate 100 --max-batch 1e3 --max-wait 1 => not a whole number
        --rate 100 --deadline 1e300 => at most a week
        --rate 100 --slo p99=1e308s => at most an hour
        --rate 0.01 --window 0.05 => offers 0.000500 requests; a point needs at least 2: use --window 200 or more";
    for case in cases.lines() {
        let (args, says) = case.trim().split_once(" => ").unwrap();
        let args = format!("offload --alg ML-KEM-768 --op encaps --workers 1 {args}");
        let out = d.path().join("out");
        let (code, _, err) = run_into(&args, &out);
        assert_eq!(code, 2, "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
        assert!(err.lines().count() <= 6, "{args}: {err}");
        assert!(!err.contains("panicked"), "{args}: {err}");
        // Refused before anything ran: no run file, broken or not.
        assert!(
            !out.exists() || common::files(&out, "run-", ".json").is_empty(),
            "{args}"
        );
    }
}

/// A percentile the point's requests cannot resolve (13 requests for
/// p99.999999) is neither met nor missed: said so in the terminal and the
/// run file, and no rate is named as meeting it.
#[test]
fn a_percentile_too_deep_for_the_sample_is_not_resolvable_not_met() {
    let d = tempfile::tempdir().unwrap();
    let (code, out, err) = run_into(
        "offload --alg ML-KEM-768 --op encaps --workers 1 --rate 100 --window 0.13 --slo p99.999999=1ms",
        d.path(),
    );
    assert_eq!(code, 0, "{err}");
    let o = &run_file(d.path())["offload"];
    let p = &o["points"][0];
    assert_eq!(p["requests"], 13, "{p}");
    assert!(p["meets_slo"].is_null(), "{p}");
    let why = p["slo_unresolved"].as_str().unwrap();
    assert!(
        why.contains("not resolvable") && why.contains("has 13"),
        "{why}"
    );
    assert!(o["max_rate_under_slo"].is_null(), "{o}");
    common::assert_has(&out, &["objective not resolvable"]);
    assert!(!out.contains("objective met"), "{out}");
    // Served over the window offered: at most 100/s.
    assert!(p["achieved_rate"].as_f64().unwrap() <= 100.0, "{p}");
}

#[test]
fn three_requests_far_apart_keep_an_idle_worker_unsaturated() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("three.txt");
    std::fs::write(&trace, "0\n0.01\n0.02\n").unwrap();
    let out = d.path().join("out");
    let line = format!(
        "offload --alg ML-KEM-768 --op encaps --workers 1 --max-batch 4 --max-wait 1 --trace {}",
        trace.display()
    );
    let (code, text, err) = run_into(&line, &out);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("SATURATED"), "{text}");
    let p = &run_file(&out)["offload"]["points"][0];
    assert_eq!(p["requests"], 3, "{p}");
    assert_eq!(p["saturated"], false, "{p}");
}

#[test]
fn plan_from_a_sweep_says_in_a_few_lines_which_record_lacks_a_batch_time() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sweep");
    let (code, _, err) = run_into(
        "sweep --warmup-seconds 0 --seconds 0.05 --filter ML-KEM --filter provider:liboqs --no-symmetric",
        &out,
    );
    assert_eq!(code, 0, "{err}");
    let file = common::files(&out, "run-", ".json").pop().unwrap();
    // The key is there, without a batch time.
    let (code, _, err) = plan(&file, "--alg ML-KEM-768 --op encaps --rate 100");
    assert_eq!(code, 1, "{err}");
    common::assert_has(
        &err,
        &[
            "no batch time for liboqs-cpu ML-KEM-768 encaps",
            "batch_ms",
            "--batch-sweep",
        ],
    );
    assert!(
        err.len() < 600 && err.lines().count() <= 4,
        "{} bytes: {err}",
        err.len()
    );
    // Another key: counted, the closest few named, the rest behind -v.
    let (code, _, err) = plan(&file, "--alg ML-DSA-65 --op sign --rate 100");
    assert_eq!(code, 1, "{err}");
    common::assert_has(
        &err,
        &["kind(s) of throughput record here, the closest:", "with -v"],
    );
    assert!(
        err.len() < 600 && err.lines().count() <= 4,
        "{} bytes: {err}",
        err.len()
    );
    // A byte-order mark before the JSON is read past.
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&file).unwrap());
    let bom = d.path().join("bom.json");
    std::fs::write(&bom, bytes).unwrap();
    let (code, _, err) = plan(&bom, "--alg ML-KEM-768 --op encaps --rate 100");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no batch time for"), "{err}");
}
