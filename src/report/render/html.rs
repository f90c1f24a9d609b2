//! The self-contained HTML page: inline CSS, inline SVG, a little plain
//! JavaScript for the filters. Nothing is fetched from the network.

use crate::report::findings::Analysis;

use crate::report::headline::Group;
use crate::report::model::{src_list, Dataset, SrcRef};
use crate::report::outline::{Headed, Outline};
use crate::report::reference_tables::filter_values;
use crate::report::render::charts;
use crate::report::render::escape::{esc, esc_code};
use crate::report::sections;
use crate::report::table::{Cell, Table};
use crate::schema::load::LoadSet;
use std::fmt::Write;

const CSS: &str = r#"
:root{--ink:#1d2330;--muted:#5d6675;--line:#dde1e7;--soft:#f5f6f8;--accent:#0b5cad;--good:#1f7a4d;--bad:#b3471d}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
main{max-width:1180px;margin:0 auto;padding:28px 28px 60px}
h1{font-size:28px;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:21px;margin:44px 0 8px;padding-top:10px;border-top:1px solid var(--line)}
h3{font-size:16px;margin:26px 0 6px}
p{margin:6px 0 10px;max-width:78ch}
.lede{color:var(--muted);margin-bottom:14px}
nav{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:14px;margin:8px 0 0}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.problems{border-left:4px solid var(--bad);background:#fdf3ee;padding:8px 14px;margin:16px 0;font-size:14px}
.problems li{margin:2px 0}
.context{font-size:14px;color:var(--muted)}
.findings{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:12px;margin:8px 0 4px}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fff}
.card .fig{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums;letter-spacing:-.01em}
.card .word{font-size:15px;font-weight:600;margin-left:6px;color:var(--muted)}
.g-faster .fig{color:var(--good)}.g-costs .fig{color:var(--bad)}.g-gpu .fig{color:var(--accent)}
.card .sent{margin:4px 0 2px;font-weight:500}
.card .det{font-size:13px;color:var(--muted)}
.src,.card .srcs{font-size:11.5px;color:#8a919c;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:nowrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em;background:#eef0f3;padding:0 3px;border-radius:3px}
.note{font-size:14px;color:var(--muted);background:var(--soft);border-radius:6px;padding:8px 12px;max-width:none}
.scroll{overflow-x:auto;margin:8px 0 4px;border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%;font-size:13.5px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:12.5px;color:var(--muted);position:sticky;top:0}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td small{display:block;color:var(--muted);font-size:11.5px}
td.good{color:var(--good);font-weight:600}td.bad{color:var(--bad);font-weight:600}td.muted{color:#9aa1ab}
td.good small,td.bad small{font-weight:400}
.count{font-size:12.5px;color:var(--muted);margin:2px 0 0}
.legend{font-size:12.5px;color:var(--muted)}
.sw{display:inline-block;width:26px;height:11px;border-radius:2px;vertical-align:-1px;margin:0 4px}
#filters{border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:var(--soft);display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:8px 18px;font-size:13.5px}
#filters fieldset{border:0;margin:0;padding:0;min-width:0}
#filters legend{font-weight:600;font-size:12.5px;color:var(--muted);padding:0;margin-bottom:2px}
#filters label{display:inline-block;margin:0 10px 2px 0;white-space:nowrap}
#filters select{width:100%;font:inherit;font-size:13px}
#filters .wide{grid-column:1/-1;display:flex;gap:12px;align-items:center;font-size:12.5px;color:var(--muted)}
button{white-space:nowrap;font:inherit;font-size:13px;padding:3px 10px;border:1px solid #b9c0ca;border-radius:5px;background:#fff;cursor:pointer}
svg.chart{width:100%;height:auto;display:block;margin:6px 0 2px}
svg .grid{stroke:#e3e6eb;stroke-width:1}svg .band{fill:#f7f8fa}
svg .tick{font-size:11px;fill:#6b7380}svg .axis{font-size:12px;fill:#4a5260}
svg .rl{font-size:12.5px;fill:#1d2330}svg .rn{fill:#7b8390;font-size:11px}svg .lg{font-size:12px;fill:#333}
svg .conn{stroke:#b8bec8;stroke-width:1.5}svg .range{stroke:#6a7382;stroke-width:3}
dl.meta{display:grid;grid-template-columns:minmax(130px,max-content) 1fr;gap:2px 16px;font-size:13.5px;margin:6px 0}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0;overflow-wrap:anywhere}
.files{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}
footer{margin-top:40px;font-size:12.5px;color:var(--muted)}
[hidden]{display:none!important}
@media print{#filters,nav{display:none}.scroll{overflow:visible;border:0}}
"#;

const JS: &str = r#"
(function () {
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message || e)); });
  var panel = document.getElementById('filters');
  function chosen() {
    var g = {}, i, j;
    var boxes = panel ? panel.querySelectorAll('input[type=checkbox]') : [];
    for (i = 0; i < boxes.length; i++) {
      if (boxes[i].checked && boxes[i].name) { (g[boxes[i].name] = g[boxes[i].name] || []).push(boxes[i].value); }
    }
    var sels = panel ? panel.querySelectorAll('select') : [];
    for (i = 0; i < sels.length; i++) {
      for (j = 0; j < sels[i].options.length; j++) {
        if (sels[i].options[j].selected) { (g[sels[i].name] = g[sels[i].name] || []).push(sels[i].options[j].value); }
      }
    }
    return g;
  }
  function apply() {
    var g = chosen(), total = 0, tables = document.querySelectorAll('table.data');
    var every = document.getElementById('all-batches'), showExtra = !!(every && every.checked);
    for (var t = 0; t < tables.length; t++) {
      var rows = tables[t].tBodies[0] ? tables[t].tBodies[0].rows : [], n = 0, shown = 0;
      for (var r = 0; r < rows.length; r++) {
        var row = rows[r];
        if (!row.hasAttribute('data-kind')) { continue; }
        if (row.hasAttribute('data-extra') && !showExtra) { row.hidden = true; continue; }
        n++;
        var ok = true;
        for (var k in g) {
          var v = row.getAttribute('data-' + k);
          if (v !== null && g[k].indexOf(v) < 0) { ok = false; break; }
        }
        row.hidden = !ok;
        if (ok) { shown++; }
      }
      total += shown;
      var c = document.getElementById(tables[t].id + '-count');
      if (c && n) { c.textContent = shown === n ? n + ' rows' : shown + ' of ' + n + ' rows shown by the filters'; }
    }
    return total;
  }
  var everyBox = document.getElementById('all-batches');
  if (everyBox) { everyBox.addEventListener('change', apply); }
  if (panel) {
    panel.addEventListener('change', apply);
    var reset = document.getElementById('reset');
    if (reset) {
      reset.addEventListener('click', function () {
        var i, inputs = panel.querySelectorAll('input[type=checkbox]');
        for (i = 0; i < inputs.length; i++) { inputs[i].checked = false; }
        var opts = panel.querySelectorAll('option');
        for (i = 0; i < opts.length; i++) { opts[i].selected = false; }
        apply();
      });
    }
  }
  var all = apply();
  if (location.hash === '#selftest') {
    var result = { rows: all, kemOnly: null, signatureOnly: null, reset: null, errors: errors,
      scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth };
    var box = panel && panel.querySelector('input[name=kind][value=kem]');
    if (box) { box.checked = true; result.kemOnly = apply(); box.checked = false; }
    box = panel && panel.querySelector('input[name=kind][value=signature]');
    if (box) { box.checked = true; result.signatureOnly = apply(); box.checked = false; }
    result.reset = apply();
    if (everyBox) { everyBox.checked = true; result.everyBatch = apply(); everyBox.checked = false; }
    result.triangles = document.querySelectorAll('td.num').length ? Array.prototype.filter.call(
      document.querySelectorAll('table.data tr:not([hidden]) td'), function (c) { return c.textContent.indexOf('\u25B2') >= 0; }).length : 0;
    // Rows with a tier (origin) each tier (origin) box shows on its own.
    ['tier', 'origin'].forEach(function (name) {
      var sel = 'table.data tr[data-' + name + ']:not([hidden])';
      var counts = {}, boxes = panel ? panel.querySelectorAll('input[name=' + name + ']') : [];
      for (var i = 0; i < boxes.length; i++) {
        boxes[i].checked = true; apply();
        counts[boxes[i].value] = document.querySelectorAll(sel).length;
        boxes[i].checked = false;
      }
      apply();
      result[name] = counts;
      result[name + 'Rows'] = document.querySelectorAll(sel).length;
    });
    var out = document.createElement('pre');
    out.id = 'selftest-result';
    out.textContent = JSON.stringify(result);
    document.body.appendChild(out);
  }
})();
"#;

/// Background for a shade position: green for the best, amber for the
/// worst, clear in the middle.
fn shade_css(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    if t >= 0.5 {
        format!("background:rgba(38,150,95,{:.3})", (t - 0.5) * 2.0 * 0.26)
    } else {
        format!("background:rgba(226,128,40,{:.3})", (0.5 - t) * 2.0 * 0.26)
    }
}

fn src_title(ds: &Dataset, src: &[SrcRef]) -> String {
    src.iter()
        .map(|s| ds.describe(*s))
        .collect::<Vec<_>>()
        .join("; ")
}

fn cell_html(ds: &Dataset, c: &Cell, header: bool) -> String {
    let tag = if header { "th" } else { "td" };
    let mut classes = vec![];
    if c.numeric {
        classes.push("num");
    }
    if let Some(k) = c.class {
        classes.push(k);
    }
    let mut attrs = String::new();
    if !classes.is_empty() {
        let _ = write!(attrs, " class=\"{}\"", classes.join(" "));
    }
    if let Some(s) = c.shade {
        let _ = write!(attrs, " style=\"{}\"", shade_css(s));
    }
    if !c.src.is_empty() {
        let _ = write!(
            attrs,
            " data-src=\"{}\" title=\"{}\"",
            esc(&src_list(c.src.iter().copied(), " ")),
            esc(&src_title(ds, &c.src))
        );
    }
    if let Some(v) = c.value.filter(|v| v.is_finite()) {
        // Exponent form for extremes: 5e-324 would print 324 digits.
        let a = v.abs();
        if a != 0.0 && !(1e-6..1e15).contains(&a) {
            let _ = write!(attrs, " data-value=\"{v:e}\"");
        } else {
            let _ = write!(attrs, " data-value=\"{v}\"");
        }
    }
    let sub = c
        .sub
        .as_ref()
        .map(|s| {
            if s.starts_with("https://") {
                format!(
                    "<small><a href=\"{}\" target=\"_blank\" rel=\"noopener\">{}</a></small>",
                    esc(s),
                    esc(s.trim_start_matches("https://"))
                )
            } else {
                format!("<small>{}</small>", esc(s))
            }
        })
        .unwrap_or_default();
    format!("<{tag}{attrs}>{}{sub}</{tag}>", esc(&c.text))
}

/// Renders a table inside its scrolling box, with a row counter.
pub fn table_html(ds: &Dataset, t: &Table) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<div class=\"scroll\"><table class=\"data\" id=\"{}\"><thead><tr>",
        esc(&t.id)
    );
    let numeric_col = t.numeric_columns();
    for (i, h) in t.headers.iter().enumerate() {
        let _ = write!(
            s,
            "<th{}>{}</th>",
            if numeric_col[i] { " class=\"num\"" } else { "" },
            esc(h)
        );
    }
    s += "</tr></thead><tbody>";
    for r in &t.rows {
        s += "<tr";
        for (k, v) in &r.filters {
            let _ = write!(s, " data-{k}=\"{}\"", esc(v));
        }
        s += ">";
        for c in &r.cells {
            s += &cell_html(ds, c, false);
        }
        s += "</tr>";
    }
    s += "</tbody></table></div>";
    if t.rows.iter().any(|r| !r.filters.is_empty()) {
        let _ = write!(
            s,
            "<p class=\"count\" id=\"{}-count\">{} rows</p>",
            esc(&t.id),
            t.rows.len()
        );
    }
    if t.shaded {
        s += "<p class=\"legend\">Shading compares rows within each NIST level: <span class=\"sw\" style=\"background:rgba(38,150,95,.26)\"></span>best <span class=\"sw\" style=\"background:rgba(226,128,40,.26)\"></span>worst. Hover a figure for the record it comes from.</p>";
    }
    s
}

/// A table under its `<h3>` heading.
fn headed_html(ds: &Dataset, h: &Headed) -> String {
    format!("<h3>{}</h3>{}", h.heading, table_html(ds, &h.table))
}

/// A section's table after its `intro` paragraph, or only the `absent`
/// note when the section has no table (both are HTML already).
fn table_or_note(ds: &Dataset, t: Option<&Table>, intro: &str, absent: &str) -> String {
    match t {
        Some(t) => format!("<p>{intro}</p>{}", table_html(ds, t)),
        None => format!("<p class=\"note\">{absent}</p>"),
    }
}

fn filters_html(ds: &Dataset) -> String {
    let mut s = String::from(
        "<form id=\"filters\" onsubmit=\"return false\" aria-label=\"Filter the tables\">",
    );
    let groups = [
        ("level", "NIST level"),
        ("kind", "Kind"),
        ("class", "Class"),
        ("tier", "Tier"),
        ("origin", "Program / origin"),
        ("provider", "Provider"),
        ("backend", "Backend"),
        ("family", "Family"),
    ];
    for (name, label) in groups {
        let values = filter_values(ds, name);
        if values.is_empty() {
            continue;
        }
        let _ = write!(s, "<fieldset><legend>{label}</legend>");
        for v in values {
            let shown = match (name, v.as_str()) {
                ("level", "none") => "none".to_string(),
                ("level", l) => format!("Level {l}"),
                _ => v.clone(),
            };
            let _ = write!(
                s,
                "<label><input type=\"checkbox\" name=\"{name}\" value=\"{}\"> {}</label>",
                esc(&v),
                esc(&shown)
            );
        }
        s += "</fieldset>";
    }
    let algs = filter_values(ds, "alg");
    let _ = write!(
        s,
        "<fieldset><legend>Algorithm</legend><select name=\"alg\" multiple size=\"{}\" aria-label=\"Algorithm\">",
        algs.len().clamp(2, 6)
    );
    for a in algs {
        let _ = write!(s, "<option value=\"{0}\">{0}</option>", esc(&a));
    }
    s += "</select></fieldset>";
    s += "<div class=\"wide\"><button type=\"button\" id=\"reset\">Show all</button><span>Within a group, ticked values are combined (any of them); across groups they narrow (all of them). Nothing ticked in a group means all. Filters apply to every table with those columns; charts always show everything.</span></div></form>";
    s
}

/// The whole page.
pub fn render(set: &LoadSet, ds: &Dataset, an: &Analysis, generated: &str) -> String {
    let o = Outline::new(set, ds, an);
    let mut s = String::new();
    s += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
    s += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
    s += "<title>pqcprof report</title><style>";
    s += CSS;
    s += "</style></head><body><main>";
    s += "<h1>pqcprof report</h1>";
    let _ = write!(
        s,
        "<p class=\"lede\">Post-quantum cryptography measured on CPUs and GPUs, every operation checked for correctness before it was timed. {}</p>",
        esc(&o.file_summary)
    );
    s += "<nav><a href=\"#summary\">Summary</a><a href=\"#vs-classical\">PQC vs classical</a><a href=\"#gpu\">GPU vs CPU</a><a href=\"#results\">Results</a><a href=\"#charts\">Charts</a><a href=\"#sizes\">Sizes</a><a href=\"#symmetric\">Symmetric</a><a href=\"#appendix\">Skipped and failed</a><a href=\"#standards\">Standards</a><a href=\"#metadata\">Run metadata</a></nav>";
    if !o.problems.is_empty() {
        s += "<div class=\"problems\"><strong>Input problems.</strong> What could be used is reported; the rest is named here.<ul>";
        for p in &o.problems {
            let _ = write!(s, "<li>{}</li>", esc(p));
        }
        s += "</ul></div>";
    }

    // Executive summary.
    s += "<h2 id=\"summary\">Executive summary</h2>";
    let _ = write!(s, "<p class=\"context\">{}</p>", esc(&o.context));
    for g in &o.findings {
        let class = match g.group {
            Group::PqcFaster => "g-faster",
            Group::PqcCosts => "g-costs",
            Group::Gpu | Group::Energy => "g-gpu",
            Group::Cpu => "g-cpu",
        };
        let _ = write!(
            s,
            "<h3>{}</h3><div class=\"findings {class}\">",
            g.group.title()
        );
        for f in &g.findings {
            let _ = write!(
                s,
                "<div class=\"card\" data-src=\"{}\" title=\"{}\"><div><span class=\"fig\">{}</span><span class=\"word\">{}</span></div><p class=\"sent\">{}</p><div class=\"det\">{}</div><div class=\"srcs\">{}</div></div>",
                esc(&src_list(f.sources.iter().copied(), " ")),
                esc(&src_title(ds, &f.sources)),
                esc(&f.figure),
                esc(&f.word),
                esc(&f.sentence),
                esc(&f.detail),
                esc(&src_list(f.sources.iter().copied(), " · "))
            );
        }
        s += "</div>";
    }
    let mut missing = vec![];
    if an.pairs.is_empty() {
        missing.push("classical baselines (ECDH, X25519, ECDSA, RSA), so no PQC-against-classical ratios; add a run file from `pqcprof sweep`");
    }
    if an.gpu.is_empty() {
        missing.push("GPU records, so no GPU-over-CPU speed-up or energy per operation; add a run file from a machine with a ready GPU");
    }
    if !missing.is_empty() {
        let _ = write!(
            s,
            "<p class=\"note\"><strong>Not in these files:</strong> {}.</p>",
            esc_code(&missing.join("; and "))
        );
    }

    s += "<h2 id=\"filters-h\">Filters</h2>";
    s += &filters_html(ds);

    // PQC against classical.
    s += "<h2 id=\"vs-classical\">PQC against classical, by NIST level</h2>";
    s += "<p>Each row sets a post-quantum algorithm against a classical one of equivalent strength, measured on the same host with the same number of threads. Times are median time per operation; the ratio reads from the post-quantum side. ML-DSA-44 (category 2) is compared in the level 1 column.</p>";
    for n in o.pair_notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc_code(n));
    }
    for h in &o.pairs {
        s += &headed_html(ds, h);
    }

    // GPU against CPU.
    s += "<h2 id=\"gpu\">GPU against CPU</h2>";
    let _ = write!(s, "<p class=\"note\">{}</p>", esc_code(o.gpu_note));
    if let Some(t) = &o.gpu {
        s += &table_html(ds, t);
    }
    if let Some(h) = &o.scaling {
        let _ = write!(s, "<p>{}</p>", esc(crate::report::batch_curves::INTRO));
        s += &headed_html(ds, h);
    }

    // Main tables.
    s += "<h2 id=\"results\">Results</h2><p>Median time per operation (large) and median operations per second (small) of every successful throughput record. A row is one backend, thread count and algorithm from one file, at its largest batch (sweep figures: a timed window per operation); other batch sizes are shown on demand.</p>";
    let _ = write!(
        s,
        "<p class=\"legend\"><label><input type=\"checkbox\" id=\"all-batches\"> Show every batch size measured</label> · {}</p>",
        esc(sections::MARKER_LEGEND)
    );
    for h in o
        .throughput
        .iter()
        .chain(&o.latency)
        .chain(&o.kernels)
        .chain(&o.variants)
    {
        s += &headed_html(ds, h);
    }

    // Clusters, devices and totals.
    if !o.cluster.is_empty() {
        s += "<h2 id=\"cluster\">Cluster</h2><ul>";
        for n in &o.cluster {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s += "</ul>";
        if let Some(t) = &o.ranks {
            s += &table_html(ds, t);
        }
    }
    if o.devices.is_some() || o.aggregates.is_some() {
        let _ = write!(
            s,
            "<h2 id=\"scale\">Several devices and ranks</h2><p>{}</p>",
            esc(crate::report::render::markdown::SCALE_INTRO)
        );
        for h in o.devices.iter().chain(&o.aggregates) {
            s += &headed_html(ds, h);
        }
    }

    // Charts.
    s += "<h2 id=\"charts\">Charts</h2>";
    let mut any_chart = false;
    for ch in charts::throughput_charts(ds)
        .into_iter()
        .chain(charts::latency_chart(ds))
        .chain(charts::batch_charts(ds))
        .chain(charts::sizes_chart(ds))
    {
        any_chart = true;
        let _ = write!(
            s,
            "<h3>{}</h3><p class=\"legend\">{}</p>{}",
            esc(&ch.title),
            esc(&ch.caption),
            ch.svg
        );
    }
    if !any_chart {
        s += "<p class=\"note\">Nothing was measured successfully, so there is nothing to chart.</p>";
    }
    if charts::latency_chart(ds).is_none() {
        s += "<p class=\"note\">No latency records (they come from runs with <code>--latency</code>).</p>";
    }
    if charts::batch_charts(ds).is_empty() {
        s += "<p class=\"note\">Each operation was measured at one batch size only, so there is no throughput-against-batch chart.</p>";
    }

    if let Some(t) = &o.hybrid {
        s += "<h2 id=\"hybrid\">Hybrid overhead</h2><p>What each hybrid costs over its pure post-quantum component measured in the same file: extra median time per operation and extra bytes (wire: public key plus ciphertext or signature).</p>";
        s += &table_html(ds, t);
    }

    if let Some(t) = &o.beside {
        s += &format!(
            "<h2 id=\"beside\">Beside published results</h2><p>{}</p><ul>",
            esc(crate::report::beside::BESIDE_INTRO)
        );
        for n in &o.imported {
            s += &format!("<li>{}</li>", esc(n));
        }
        s += "</ul>";
        s += &table_html(ds, t);
    }

    s += "<h2 id=\"sizes\">Sizes</h2><p>Bytes of keys, ciphertexts and signatures as the records state them (for ML-KEM and ML-DSA, FIPS 203 and FIPS 204). On the wire: what one side sends, public key plus ciphertext or signature.</p>";
    s += &table_html(ds, &o.sizes);

    s += "<h2 id=\"symmetric\">Symmetric context</h2>";
    s += &table_or_note(
        ds,
        o.symmetric.as_ref(),
        "Hashes and AEADs on the same machines, in megabytes (10<sup>6</sup> bytes) per second, for scale: symmetric primitives are not threatened by quantum computers beyond Grover's square-root speed-up.",
        "No symmetric records in these files: hashes and AEADs are measured by the CPU sweep and give a sense of scale (how many bytes a PQC operation costs in hashing time).",
    );

    s += "<h2 id=\"appendix\">Appendix: skipped and failed records</h2>";
    s += &table_or_note(
        ds,
        o.appendix.as_ref(),
        "Records that were not measured as fine: a failed correctness gate or run, or a backend that could not run here. None of them contributes a figure above.",
        "Every record in these files was measured and passed its correctness gate.",
    );

    let caveats = crate::report::caveats::caveats(ds);
    if !caveats.is_empty() {
        s += "<h2 id=\"caveats\">Records cut short or throttled</h2><p>Their figures are over the runs that finished, or were measured while the GPU held its clocks down for power or heat.</p><ul>";
        for c in &caveats {
            s += &format!("<li>{}</li>", crate::report::render::escape::esc(c));
        }
        s += "</ul>";
    }
    if let Some(t) = &o.emulated {
        s += "<h2 id=\"emulated\">Correctness on the CPU stand-in driver (emulated, not a GPU)</h2><p>These records ran the project's GPU kernels through the real launch path on pqcprof's CPU stand-in CUDA driver, a test fixture. They prove correctness and the launch path only: their timings are of an emulation on the CPU, say nothing about any GPU, and appear in no figure, chart or comparison above.</p>";
        s += &table_html(ds, t);
    }

    s += "<h2 id=\"standards\">Standards</h2><p>Where each algorithm family is specified. Links open in a new tab; the report itself loads nothing.</p>";
    s += &table_html(ds, &o.standards);

    s += "<h2 id=\"metadata\">Run metadata</h2><p>Every figure above names its source as <code>F<i>n</i>#<i>i</i></code>: file <i>n</i> below, index <i>i</i> of its <code>records</code> array.</p><div class=\"files\">";
    for run in &o.runs {
        let _ = write!(
            s,
            "<div class=\"card\"><h3 style=\"margin-top:0\">{} · {}</h3><dl class=\"meta\">",
            esc(run.label),
            esc(run.file_name)
        );
        for (k, v) in &run.rows {
            let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
        }
        s += "</dl></div>";
    }
    s += "</div>";
    let _ = write!(
        s,
        "<footer>Generated by pqcprof {} on {}. Self-contained: no scripts, fonts or images are loaded from elsewhere.</footer>",
        esc(env!("CARGO_PKG_VERSION")),
        esc(generated)
    );
    s += "</main><script>";
    s += JS;
    s += "</script></body></html>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn shading_is_restrained() {
        assert!(shade_css(1.0).contains("0.260"));
        assert!(shade_css(0.5).contains(",0.000)"));
        assert!(shade_css(0.0).contains("226,128,40"));
    }
}
