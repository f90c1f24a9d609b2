//! The self-contained HTML page: inline CSS, inline SVG, a little plain
//! JavaScript for the filters. Nothing is fetched from the network.

use crate::report::findings::Analysis;

use crate::report::headline::Group;
use crate::report::model::{src_list, Dataset, SrcRef};
use crate::report::outline::{FindingGroup, Outline, RunCard};
use crate::report::reference_tables::filter_values;
use crate::report::render::document::{self, FindingText, Markup, Renderer, Span, Style};
use crate::report::render::escape::{esc, esc_code};
use crate::report::table::{Cell, Table};
use crate::schema::load::LoadSet;
use std::fmt::Write;

const CSS: &str = r#"
:root{--ink:#1d2330;--muted:#5d6675;--line:#dde1e7;--soft:#f5f6f8;--accent:#0b5cad;--good:#1f7a4d;--bad:#b3471d}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
main{max-width:1320px;margin:0 auto;padding:28px 28px 60px}
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
.findings{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:12px;margin:8px 0 4px}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fff}
.card .fig{font-size:26px;font-weight:650;font-variant-numeric:tabular-nums;letter-spacing:-.01em}
.card .word{font-size:15px;font-weight:600;margin-left:6px;color:var(--muted)}
.card .ci{display:block;font-size:12px;color:var(--muted);font-variant-numeric:tabular-nums}
.g-faster .fig{color:var(--good)}.g-costs .fig{color:var(--bad)}.g-gpu .fig{color:var(--accent)}
.card .sent{margin:4px 0 2px;font-weight:500}
.card .det{font-size:13px;color:var(--muted)}
.src,.card .srcs{font-size:11.5px;color:#8a919c;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.kat{color:var(--bad);font-weight:600;font-size:12.5px}td small.kat{color:var(--bad);font-weight:600}.card .kat{margin:4px 0 2px}
details.fold{margin:10px 0;border:1px solid var(--line);border-radius:8px;padding:4px 12px}
details.fold>summary{cursor:pointer;padding:4px 0;color:var(--ink)}details.fold>summary>h3{display:inline;font-size:14.5px;margin:0}
details.fold[open]>summary{margin-bottom:6px}
details.fold .scroll{margin-left:0;margin-right:0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em;background:#eef0f3;padding:0 3px;border-radius:3px}
.note{font-size:14px;color:var(--muted);background:var(--soft);border-radius:6px;padding:8px 12px;max-width:none}
.scroll{overflow-x:auto;margin:8px 0 4px;border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:12.5px;color:var(--muted);position:sticky;top:0}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
th{overflow-wrap:anywhere}td{overflow-wrap:break-word}
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
svg .conn{stroke:#b8bec8;stroke-width:1.5}svg .rule{stroke:#b3471d;stroke-width:1.5;stroke-dasharray:6 4}svg .ring{fill:none;stroke:#b3471d;stroke-width:2}svg .range{stroke:#6a7382;stroke-width:3}
dl.meta{display:grid;grid-template-columns:minmax(130px,max-content) 1fr;gap:2px 16px;font-size:13.5px;margin:6px 0}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0;overflow-wrap:anywhere}
.files{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}
footer{margin-top:40px;font-size:12.5px;color:var(--muted)}
[hidden]{display:none!important}
@media print{#filters,nav{display:none}.scroll{overflow:visible;border:0}details.fold{border:0}}
@media (max-width:900px){main{padding:16px 12px 40px}.findings{grid-template-columns:1fr}}
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
  if (location.hash === '#layout') {
    // How the page lays out at this width: its height with every fold
    // closed, then, every fold open, what overflows the page, which table
    // scrolls sideways in its box, and which chart text lies outside its
    // chart.
    var layout = { width: window.innerWidth, closedHeight: document.documentElement.scrollHeight };
    var folds = document.querySelectorAll('details');
    for (var f = 0; f < folds.length; f++) { folds[f].open = true; }
    layout.folds = folds.length;
    layout.openHeight = document.documentElement.scrollHeight;
    layout.pageScrollWidth = document.documentElement.scrollWidth;
    var vw = document.documentElement.clientWidth, over = [], wide = [], text = [];
    var els = document.querySelectorAll('body *');
    for (var e = 0; e < els.length; e++) {
      var el = els[e], b = el.getBoundingClientRect();
      if (!b.width) { continue; }
      var boxed = el.closest('.scroll') && el.closest('.scroll') !== el;
      if (!boxed && (b.right > vw + 0.5 || b.left < -0.5)) {
        over.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') + ' right ' + Math.round(b.right));
      }
    }
    var boxes = document.querySelectorAll('.scroll');
    for (var s = 0; s < boxes.length; s++) {
      if (boxes[s].scrollWidth > boxes[s].clientWidth + 1) {
        var t = boxes[s].querySelector('table');
        wide.push((t ? t.id : '?') + ' ' + boxes[s].scrollWidth + '>' + boxes[s].clientWidth);
      }
    }
    var svgs = document.querySelectorAll('svg.chart');
    for (var g = 0; g < svgs.length; g++) {
      var sb = svgs[g].getBoundingClientRect(), texts = svgs[g].querySelectorAll('text');
      for (var k = 0; k < texts.length; k++) {
        var tb = texts[k].getBoundingClientRect();
        if (tb.width && (tb.left < sb.left - 0.5 || tb.right > sb.right + 0.5 || tb.top < sb.top - 0.5 || tb.bottom > sb.bottom + 0.5)) {
          text.push(texts[k].textContent.slice(0, 60));
        }
      }
    }
    layout.overflowing = over.slice(0, 20); layout.overflowingCount = over.length;
    layout.tablesScrolling = wide;
    layout.chartTextOutside = text.slice(0, 20); layout.chartTextOutsideCount = text.length;
    layout.charts = svgs.length;
    var pre = document.createElement('pre');
    pre.id = 'layout-result';
    pre.textContent = JSON.stringify(layout);
    document.body.appendChild(pre);
  }
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
    if let Some(v) = c.value.filter(|v| v.is_finite() && c.ratio.is_none()) {
        let _ = write!(attrs, " data-value=\"{}\"", attr_number(v));
    }
    if let Some(m) = &c.ratio {
        attrs += &marked_attrs(m);
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
    let kat = c
        .kat
        .as_ref()
        .map(|k| {
            format!(
                "<small class=\"kat\" title=\"{}: the code behind this figure gave other answers than the standard's vectors\">{}</small>",
                esc(crate::report::model::KAT_COMMAND),
                esc(k)
            )
        })
        .unwrap_or_default();
    format!("<{tag}{attrs}>{}{sub}{kat}</{tag}>", esc(&c.text))
}

/// A number as an attribute value, in exponent form at the extremes
/// (5e-324 would print 324 digits).
fn attr_number(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-6..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The attributes that mark a ratio of two records for the audit.
fn marked_attrs(m: &crate::report::table::Marked) -> String {
    let mut s = format!(
        " data-fig=\"ratio\" data-num=\"{}\" data-den=\"{}\" data-value=\"{}\"",
        m.num,
        m.den,
        attr_number(m.value)
    );
    if let Some([l, h]) = m.ci95 {
        let _ = write!(s, " data-ci=\"{} {}\"", attr_number(l), attr_number(h));
    }
    s
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
        // A row showing a figure of code that failed known-answer vectors
        // carries the mark in its first cell of words.
        let srcs: Vec<SrcRef> = r.cells.iter().flat_map(|c| c.src.iter().copied()).collect();
        let mut kat = ds.kat_of(&srcs);
        for c in &r.cells {
            match kat.take_if(|_| !c.numeric) {
                Some(k) => {
                    let mut marked = c.clone();
                    marked.kat = Some(k.short());
                    s += &cell_html(ds, &marked, false);
                }
                None => s += &cell_html(ds, c, false),
            }
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

/// The HTML page, written piece by piece as the document walk tells it.
pub struct HtmlPage<'d> {
    ds: &'d Dataset<'d>,
    out: String,
}

impl<'d> HtmlPage<'d> {
    /// An empty page for the records of `ds`.
    pub fn new(ds: &'d Dataset<'d>) -> Self {
        HtmlPage {
            ds,
            out: String::new(),
        }
    }

    /// The page written so far.
    pub fn into_string(self) -> String {
        self.out
    }
}

impl Renderer for HtmlPage<'_> {
    fn markup(&self) -> Markup {
        Markup::Html
    }

    fn begin(&mut self, title: &str) {
        self.out += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
        self.out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
        let _ = write!(
            self.out,
            "<title>{0}</title><style>{CSS}</style></head><body><main><h1>{0}</h1>",
            esc(title)
        );
    }

    fn contents(&mut self, sections: &[(&str, &str)]) {
        self.out += "<nav aria-label=\"Sections\">";
        for (id, title) in sections {
            let _ = write!(self.out, "<a href=\"#{}\">{}</a>", esc(id), esc(title));
        }
        self.out += "</nav>";
    }

    fn fold(&mut self, summary: &str, open: bool) {
        let _ = write!(
            self.out,
            "<details class=\"fold\"{}><summary><h3>{}</h3></summary>",
            if open { " open" } else { "" },
            esc(summary)
        );
    }

    fn unfold(&mut self) {
        self.out += "</details>";
    }

    fn callout(&mut self, lead: &str, sentence: &str, items: &[String]) {
        let _ = write!(
            self.out,
            "<div class=\"problems\"><strong>{}</strong> {}<ul>",
            esc(lead),
            esc(sentence)
        );
        // `backticked` words (a command to run) set as code.
        for item in items {
            let _ = write!(self.out, "<li>{}</li>", esc_code(item));
        }
        self.out += "</ul></div>";
    }

    fn section(&mut self, id: &str, title: &str) {
        let _ = write!(self.out, "<h2 id=\"{}\">{}</h2>", esc(id), esc(title));
    }

    fn subheading(&mut self, text: &str) {
        let _ = write!(self.out, "<h3>{}</h3>", esc(text));
    }

    fn paragraph(&mut self, style: Style, spans: &[Span]) {
        self.out += match style {
            Style::Plain => "<p>",
            Style::Lede => "<p class=\"lede\">",
            Style::Context => "<p class=\"context\">",
            Style::Note => "<p class=\"note\">",
            Style::Legend => "<p class=\"legend\">",
        };
        for span in spans {
            match span {
                Span::Text(t) => self.out += &esc(t),
                Span::Code(t) => self.out += &esc_code(t),
                Span::Raw(_, t) => self.out += t,
            }
        }
        self.out += "</p>";
    }

    fn list(&mut self, items: &[String]) {
        self.out += "<ul>";
        for item in items {
            let _ = write!(self.out, "<li>{}</li>", esc(item));
        }
        self.out += "</ul>";
    }

    fn table(&mut self, table: &Table) {
        self.out += &table_html(self.ds, table);
    }

    fn findings(&mut self, group: &FindingGroup) {
        let class = match group.group {
            Group::PqcFaster => "g-faster",
            Group::PqcCosts => "g-costs",
            Group::Gpu | Group::Energy => "g-gpu",
            Group::Cpu => "g-cpu",
        };
        let _ = write!(self.out, "<div class=\"findings {class}\">");
        for f in &group.findings {
            let t = FindingText::of(f, esc, |i| format!("<span class=\"ci\">{i}</span>"));
            let _ = write!(
                self.out,
                "<div class=\"card\" data-src=\"{}\"{} title=\"{}\"><div><span class=\"fig\">{}</span><span class=\"word\">{}</span>{}</div><p class=\"sent\">{}</p><div class=\"det\">{}</div>{}<div class=\"srcs\">{}</div></div>",
                esc(&src_list(f.sources.iter().copied(), " ")),
                f.ratio.as_ref().map(marked_attrs).unwrap_or_default(),
                esc(&src_title(self.ds, &f.sources)),
                t.figure,
                t.word,
                t.interval,
                t.sentence,
                t.detail,
                f.kat
                    .as_deref()
                    .map(|k| format!("<div class=\"kat\">{}</div>", esc_code(k)))
                    .unwrap_or_default(),
                esc(&src_list(f.sources.iter().copied(), " · "))
            );
        }
        self.out += "</div>";
    }

    fn filters(&mut self) {
        self.fold("Filter the tables", false);
        self.out += &filters_html(self.ds);
        self.unfold();
    }

    fn figure(&mut self, svg: &str) {
        self.out += svg;
    }

    fn run_cards(&mut self, runs: &[RunCard]) {
        self.out += "<div class=\"files\">";
        for run in runs {
            let _ = write!(
                self.out,
                "<div class=\"card\"><h3 style=\"margin-top:0\">{} · {}</h3><dl class=\"meta\">",
                esc(run.label),
                esc(run.file_name)
            );
            for (k, v) in &run.rows {
                let _ = write!(self.out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
            }
            self.out += "</dl></div>";
        }
        self.out += "</div>";
    }

    fn end(&mut self, generated: &str) {
        let _ = writeln!(
            self.out,
            "<footer>Generated by pqcprof {} on {}. Self-contained: no scripts, fonts or images are loaded from elsewhere.</footer></main><script>{JS}</script></body></html>",
            esc(env!("CARGO_PKG_VERSION")),
            esc(generated)
        );
    }
}

/// The whole page.
pub fn render(set: &LoadSet, ds: &Dataset, an: &Analysis, generated: &str) -> String {
    let mut page = HtmlPage::new(ds);
    document::walk(&Outline::new(set, ds, an), generated, &mut page);
    page.into_string()
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
