//! The report in a real browser (headless Chromium): no script errors,
//! the filters change what is shown, nothing wider than a 1280-px window,
//! and a screenshot.
//!
//! Without Chromium the test says so and passes, unless
//! `PQCPROF_REQUIRE_CHROMIUM=1` (CI sets it).

mod common;

use common::{cpu_run, pqcprof};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs Chromium headless on `url` with `extra` flags; returns (stdout,
/// stderr). Fresh profile, no network features, killed after two minutes.
fn run_chromium(bin: &Path, profile: &Path, url: &str, extra: &[&str]) -> (String, String) {
    let mut child = std::process::Command::new(bin)
        .args(common::words("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars --enable-logging=stderr --v=0 --window-size=1280,2400 --virtual-time-budget=5000"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (out_t.join().unwrap(), err_t.join().unwrap())
}

/// Console messages Chromium logged that are errors from the page.
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("uncaught") || l.contains("refused")
        })
        .collect()
}

/// Chromium, or `None` (the test passes, saying so) when it is missing
/// and not required.
fn chromium_or_skip() -> Option<PathBuf> {
    let bin = chromium();
    if bin.is_none() {
        if std::env::var("PQCPROF_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("PQCPROF_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)");
        }
        common::skipped(
            "report_browser",
            "chromium is not installed (apt-get install chromium); set PQCPROF_REQUIRE_CHROMIUM=1 to make this a failure",
        );
    }
    bin
}

/// Opens `html` with `#selftest`: the DOM and the page's self-test result
/// (after checking the console has no errors).
fn selftest_dom(bin: &Path, html: &Path, profile: &Path) -> (String, Value) {
    let url = format!("file://{}#selftest", html.display());
    let (dom, log) = run_chromium(bin, profile, &url, &["--dump-dom"]);
    let errors = console_errors(&log);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let start = dom.find("<pre id=\"selftest-result\">").unwrap_or_else(|| {
        panic!(
            "no self-test result in the DOM:\n{}",
            &dom[..dom.len().min(2000)]
        )
    });
    let rest = &dom[start + "<pre id=\"selftest-result\">".len()..];
    let json = &rest[..rest.find("</pre>").unwrap()];
    let r = serde_json::from_str(&json.replace("&quot;", "\"").replace("&amp;", "&"))
        .unwrap_or_else(|e| panic!("{e}: {json}"));
    (dom, r)
}

/// The page's self-test result alone.
fn selftest(bin: &Path, html: &Path, profile: &Path) -> Value {
    selftest_dom(bin, html, profile).1
}

/// `pqcprof report RUNS -o html`, then the page's self-test in Chromium
/// (it toggles the kind filter and writes the visible row counts and any
/// script error into the DOM): the DOM and the self-test's result, after
/// checking that the page logged no error and its script raised none.
fn report_in_chromium(bin: &Path, dir: &Path, runs: &[PathBuf]) -> (PathBuf, String, Value) {
    let html = dir.join("report.html");
    pqcprof()
        .arg("report")
        .args(runs)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let (dom, r) = selftest_dom(bin, &html, &dir.join("profile1"));
    assert_eq!(r["errors"], Value::Array(vec![]), "{r}");
    assert!(
        r["scrollWidth"].as_u64().unwrap() <= r["innerWidth"].as_u64().unwrap(),
        "the page scrolls sideways at 1280 px: {r}"
    );
    (html, dom, r)
}

#[test]
fn report_works_in_headless_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = cpu_run(&dir.path().join("outputs"), "1,all");
    let (html, _, r) = report_in_chromium(&bin, dir.path(), &[run]);
    let rows = r["rows"].as_u64().unwrap();
    let kem = r["kemOnly"].as_u64().unwrap();
    let sig = r["signatureOnly"].as_u64().unwrap();
    assert!(rows >= 4, "{r}");
    assert!(kem > 0 && kem < rows, "the kind filter hides rows: {r}");
    assert!(sig > 0 && sig < rows, "{r}");
    assert_eq!(
        kem + sig,
        rows,
        "every filterable row is a KEM or a signature: {r}"
    );
    assert_eq!(r["reset"].as_u64().unwrap(), rows, "{r}");

    // A screenshot at 1280 px.
    let shot = dir.path().join("report.png");
    let (_, log) = run_chromium(
        &bin,
        &dir.path().join("profile2"),
        &format!("file://{}", html.display()),
        &[&format!("--screenshot={}", shot.display())],
    );
    let errors = console_errors(&log);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
    // PNG width and height are big-endian at bytes 16..24.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(width, 1280);
    if let Some(keep) = std::env::var_os("PQCPROF_SCREENSHOT_OUT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// SYNTHETIC, for this test only: a GPU curve made from a real CPU batch
/// sweep's records (kernel only 5 x the CPU per batch step, end to end
/// behind at small batches), so the report's scaling sections have a GPU
/// line that the CI machine cannot measure. No figure here was measured on
/// a GPU.
fn synthetic_gpu_curve(cpu_run: &Path, dir: &Path) -> PathBuf {
    let mut v: Value = serde_json::from_slice(&std::fs::read(cpu_run).unwrap()).unwrap();
    let recs = v["records"].as_array().unwrap().clone();
    let gpu: Vec<Value> = recs
        .iter()
        .filter(|r| r["status"] == "ok")
        .map(|r| {
            let mut g = r.clone();
            let batch = g["batch"].as_f64().unwrap();
            let ops = g["ops_per_sec"].as_f64().unwrap() * batch / 4.0;
            g["backend"] = "native-gpu".into();
            g["provider"] = "pqcprof-native".into();
            g["threads"] = 1.into();
            g["device"] =
                serde_json::json!({"kind": "gpu", "name": "SYNTHETIC GPU", "memory_total_mb": 1});
            g["ops_per_sec"] = ops.into();
            // The runs, batch time and throughput samples scaled alike, so
            // the record agrees with its own runs (every reader checks).
            let k = batch / 4.0;
            let scaled = |v: &Value, f: f64| Value::from(v.as_f64().unwrap() * f);
            if let Some(a) = g["run_seconds"].as_array_mut() {
                a.iter_mut().for_each(|s| *s = scaled(s, 1.0 / k));
            }
            if g["batch_ms"].is_number() {
                g["batch_ms"] = scaled(&g["batch_ms"], 1.0 / k);
            }
            let t = &mut g["throughput_ops_per_sec"];
            if t.is_object() {
                t["median"] = scaled(&t["median"], k);
                if let Some(a) = t["raw"].as_array_mut() {
                    a.iter_mut().for_each(|s| *s = scaled(s, k));
                }
            }
            g["end_to_end"] = serde_json::json!({
                "timed_window": "SYNTHETIC", "run_seconds": [], "ops_per_sec": ops / 8.0
            });
            g
        })
        .collect();
    v["records"] = Value::Array(gpu);
    let p = dir.join("synthetic-gpu-run.json");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn batch_sweep_sections_render_in_headless_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("outputs");
    common::ok_into(
        "cpu --alg ML-KEM-512 --op encaps --batch-sweep 64 --runs 3 --threads all",
        &out,
    );
    let cpu = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .unwrap();
    let batches: Vec<u64> = serde_json::from_slice::<Value>(&std::fs::read(&cpu).unwrap()).unwrap()
        ["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, [1, 4, 16, 64], "the sweep's batches");
    let gpu = synthetic_gpu_curve(&cpu, dir.path());
    let (_, dom, _) = report_in_chromium(&bin, dir.path(), &[cpu, gpu]);
    // The table, with a CPU row and a GPU row, and the break-even finding.
    let table = &dom[dom
        .find("id=\"t-scaling\"")
        .expect("scaling table in the DOM")..];
    let table = &table[..table.find("</table>").unwrap()];
    common::assert_has(table, &["liboqs-cpu", "SYNTHETIC GPU"]);
    assert!(dom.contains("break-even batch"));
    // One chart for the operation: the GPU's two lines and the CPU's (a
    // CPU batch smaller than the core count runs on fewer threads, so the
    // sweep's smallest batches are their own, flat, lines), each a polyline.
    let title = "ML-KEM-512 encaps: throughput against batch size";
    let chart = &dom[dom.find(title).expect("the chart's heading")..];
    let chart = &chart[chart.find("<svg").unwrap()..chart.find("</svg>").unwrap()];
    assert!(chart.matches("<polyline").count() >= 3, "{chart}");
    for line in [
        "native-gpu · SYNTHETIC GPU · F2 (kernel only): batch 64",
        "native-gpu · SYNTHETIC GPU · F2 (end to end): batch 64",
        "liboqs-cpu · 1t · F1",
    ] {
        assert!(chart.contains(line), "{line}: {chart}");
    }
}

#[test]
fn tier_origin_filters_markers_and_other_batches_work_in_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sweep = common::mixed_sweep(&dir.path().join("sweep"));
    // A real CPU run, plus (test only) a copy of each record at twice the
    // batch in the same file: rows of other batch sizes, shown on demand.
    let run = cpu_run(&dir.path().join("bench"), "1");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let recs = v["records"].as_array().unwrap().clone();
    for mut r in recs {
        r["batch"] = Value::from(r["batch"].as_u64().unwrap() * 2);
        v["records"].as_array_mut().unwrap().push(r);
    }
    let batches = dir.path().join("synthetic-batches.json");
    std::fs::write(&batches, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = dir.path().join("report.html");
    pqcprof()
        .arg("report")
        .arg(&sweep)
        .arg(&batches)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    let r = selftest(&bin, &html, &dir.path().join("profile"));
    assert_eq!(r["errors"], Value::Array(vec![]), "{r}");
    let rows = r["reset"].as_u64().unwrap();
    // Each tier (and each origin) box alone shows some of the rows that
    // have one but not all, and every such row has exactly one.
    for name in ["tier", "origin"] {
        let counts = r[name].as_object().unwrap();
        let with = r[format!("{name}Rows")].as_u64().unwrap();
        assert!(counts.len() >= 3 && with > 0 && with <= rows, "{name}: {r}");
        let sum: u64 = counts.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(sum, with, "{name}: {r}");
        assert!(counts.values().all(|c| c.as_u64().unwrap() < with), "{r}");
    }
    assert!(
        r["tier"]["additional signatures on-ramp"].as_u64().unwrap() > 0,
        "{r}"
    );
    // The doubled batches stay hidden until asked for.
    let extra = page.matches("data-extra=\"batch\"").count() as u64;
    assert_eq!(extra, 2, "ML-KEM-512 and ML-DSA-44 at batch 8");
    assert_eq!(r["everyBatch"].as_u64().unwrap(), rows + extra, "{r}");
    // Every ▲ of the page is in a visible cell.
    assert_eq!(
        r["triangles"].as_u64().unwrap(),
        page.matches(" ▲<small>").count() as u64,
        "{r}"
    );
}

#[test]
fn the_offload_section_renders_in_headless_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = common::offload_run(&dir.path().join("outputs"));
    let (_, dom, _) = report_in_chromium(&bin, dir.path(), &[file]);
    // Laid out by the browser: the section, its two tables and the chart
    // with its three lines, the objective and the circled saturated point.
    assert!(dom.contains("<h2 id=\"offload\">Offload</h2>"));
    assert!(dom.contains("id=\"t-offload\"") && dom.contains("id=\"t-offload-points\""));
    let chart = &dom[dom
        .find("ML-KEM-768 encaps latency against offered rate")
        .expect("the chart")..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert_eq!(chart.matches("<polyline").count(), 3, "{chart}");
    assert!(chart.contains("class=\"rule\"") && chart.contains("class=\"ring\""));
}

/// The page at `width` px opened with `#layout` (the page's own layout
/// check, see the report's script): its height with every fold closed,
/// and with every fold open what overflows the page, which tables scroll
/// sideways in their box and which chart text lies outside its chart.
fn layout(bin: &Path, html: &Path, profile: &Path, width: u32) -> Value {
    let url = format!("file://{}#layout", html.display());
    let size = format!("--window-size={width},1000");
    let (dom, log) = run_chromium(bin, profile, &url, &["--dump-dom", &size]);
    let errors = console_errors(&log);
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let start = dom
        .find("<pre id=\"layout-result\">")
        .unwrap_or_else(|| panic!("no layout result:\n{}", &dom[..dom.len().min(2000)]));
    let rest = &dom[start + "<pre id=\"layout-result\">".len()..];
    let json = &rest[..rest.find("</pre>").unwrap()];
    serde_json::from_str(&json.replace("&quot;", "\"").replace("&amp;", "&"))
        .unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// A report of runs made the way `./pipeline` makes them (small): the
/// first screen answers first (GPU against CPU, here one line that none
/// was measured and how to measure one; PQC against classical), the
/// navigation lists every section, and the page fits: at most 15,000 px
/// tall at 1,400 px with its folds closed; with them open, nothing
/// overflows the page and no table scrolls sideways at 1,400 px, nothing
/// overflows at 800 px (tables may scroll in their box there), and every
/// chart's text lies inside its chart.
#[test]
fn the_report_fits_its_page_and_its_first_screen_answers() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bench = cpu_run(&d.join("bench"), "1,all");
    common::ok_into(
        "cpu --alg ML-KEM-512 --op encaps --batch-sweep 64 --runs 3 --threads all",
        d.join("batches"),
    );
    let batches = common::run_file_in(&d.join("batches"));
    let offload = common::offload_run(&d.join("offload"));
    let sweep = common::quick_sweep(
        &d.join("sweep"),
        "ML-KEM-512,ML-KEM-768,ML-DSA-44,SecP256r1MLKEM768,X25519MLKEM768,ECDSA-P256,X25519,Ed25519,SPHINCS+-SHA2-128f-simple,SLH-DSA-SHA2-128f",
        &["--symmetric"],
    );
    let (html, dom, _) = report_in_chromium(&bin, d, &[bench, batches, offload, sweep]);
    // The first screen: the GPU line before PQC against classical, both
    // before any other section.
    let at = |s: &str| dom.find(s).unwrap_or_else(|| panic!("{s} missing"));
    let gpu = at("No GPU was measured in these files");
    assert!(
        dom[gpu..].starts_with("No GPU was measured")
            && dom[gpu..at("docs/gpu.md")].contains("scripts/gpu-check")
    );
    assert!(
        gpu < at(">PQC against classical<")
            && at(">PQC against classical<") < at("id=\"vs-classical\"")
    );
    let nav = &dom[at("<nav")..];
    let nav = &nav[..nav.find("</nav>").unwrap()];
    for s in [
        "#offload",
        "#hybrid",
        "#caveats",
        "#charts",
        "#sizes",
        "#appendix",
    ] {
        assert!(nav.contains(s), "{s} not in the navigation: {nav}");
    }
    let wide = layout(&bin, &html, &d.join("profile-wide"), 1400);
    assert!(wide["folds"].as_u64().unwrap() >= 5, "{wide}");
    assert!(wide["closedHeight"].as_u64().unwrap() <= 15_000, "{wide}");
    assert_eq!(wide["overflowingCount"], 0, "{wide}");
    assert_eq!(wide["tablesScrolling"], Value::Array(vec![]), "{wide}");
    assert!(wide["charts"].as_u64().unwrap() >= 3, "{wide}");
    assert_eq!(wide["chartTextOutsideCount"], 0, "{wide}");
    let narrow = layout(&bin, &html, &d.join("profile-narrow"), 800);
    assert_eq!(narrow["overflowingCount"], 0, "{narrow}");
    assert_eq!(narrow["chartTextOutsideCount"], 0, "{narrow}");
}
