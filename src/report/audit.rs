//! The self-audit (`pqcprof report --audit`): every figure the HTML and
//! Markdown reports print, and every line of `compare --json`, re-derived
//! from the run files' raw runs and checked, with one line per
//! disagreement.
//!
//! It reads what the views wrote, not the values they were made from, so
//! it catches a figure that was printed from another estimator, rounded the
//! wrong way or taken from the wrong record. The checks ([`CHECKS`]):
//!
//! - `interval`: a figure printed with a 95% interval lies inside it (as
//!   printed: each number within its last digit).
//! - `quotient`: a ratio printed beside the two figures it sets against
//!   each other (`12× faster` over `130 µs vs 1.49 ms`) is their quotient,
//!   to the digits printed.
//! - `runs`: a record's figure a table gives (`data-value`, and `compare
//!   --json`'s `old_ops_per_sec`/`new_ops_per_sec`) is the one its raw runs
//!   give ([`crate::analyse::estimate::throughput`]); a ratio a page marks
//!   as one (`data-fig="ratio"`) is [`crate::analyse::estimate::ratio`] of
//!   its records, interval included.
//! - `change`: `compare --json`'s change is what its two medians give, and
//!   lies inside its own interval.
//! - `comparable`: `compare` set against each other only records that
//!   measured the same thing: mode, batch timing or a timed window, the
//!   timed window, and the batch (unless calibrated or a window).
//! - `size`: no size is negative, in the views or the run files, and an
//!   unknown size is not printed as 0.
//! - `count`: the counts of records (measured, failed, skipped) and of
//!   known-answer failures agree between the HTML, the Markdown and the
//!   files.

use crate::analyse::estimate;
use crate::report::model::SrcRef;
use crate::schema::load::{LoadSet, LoadedRun};
use crate::schema::record::{Record, Status};
use std::collections::BTreeMap;

/// Each check the audit makes, and what it holds to.
pub const CHECKS: [(&str, &str); 7] = [
    (
        "interval",
        "a figure printed with a 95% interval lies inside it",
    ),
    (
        "quotient",
        "a ratio is the quotient of the two figures printed beside it",
    ),
    (
        "runs",
        "a record's figure (and a marked ratio with its interval) is what its raw runs give",
    ),
    (
        "change",
        "compare's change is what its two medians give and lies inside its interval",
    ),
    (
        "comparable",
        "compare sets against each other only records that measured the same thing",
    ),
    (
        "size",
        "no size is negative, and an unknown size is not printed as 0",
    ),
    (
        "count",
        "counts of records and of known-answer failures agree between views and files",
    ),
];

/// One figure that does not agree with the data.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// `html`, `markdown`, `compare F1 F2`, `run file F3`.
    pub view: String,
    /// Which check (a name of [`CHECKS`]).
    pub check: &'static str,
    /// Where in the view, and what is wrong, in words.
    pub what: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]: {}", self.view, self.check, self.what)
    }
}

/// What the audit checked and found.
#[derive(Debug, Default)]
pub struct Audit {
    /// Figures checked, per check.
    pub checked: BTreeMap<&'static str, usize>,
    /// Every disagreement, in the order found.
    pub disagreements: Vec<Disagreement>,
}

impl Audit {
    fn check(&mut self, check: &'static str, ok: bool, view: &str, what: impl FnOnce() -> String) {
        *self.checked.entry(check).or_default() += 1;
        if !ok {
            self.disagreements.push(Disagreement {
                view: view.to_string(),
                check,
                what: crate::core::units::printable(&what()),
            });
        }
    }

    /// Figures checked in all.
    pub fn total(&self) -> usize {
        self.checked.values().sum()
    }

    /// One line: `audit: 1,234 figures checked (interval 40, ...): 0 disagreements`.
    pub fn summary(&self) -> String {
        let per: Vec<String> = self
            .checked
            .iter()
            .map(|(k, v)| format!("{k} {}", crate::core::units::grouped(*v as f64)))
            .collect();
        format!(
            "audit: {} figures checked ({}): {} disagreement{}",
            crate::core::units::grouped(self.total() as f64),
            per.join(", "),
            self.disagreements.len(),
            if self.disagreements.len() == 1 {
                ""
            } else {
                "s"
            }
        )
    }
}

/// Audits the report of `set` (both formats, rendered here), `compare
/// --json` of every pair of its run files that hold records, and the run
/// files themselves.
pub fn run(set: &LoadSet) -> Audit {
    let mut a = Audit::default();
    let html = crate::report::render(set, crate::report::Format::Html);
    let md = crate::report::render(set, crate::report::Format::Markdown);
    audit_html(set, &html, &mut a);
    audit_markdown(set, &md, &mut a);
    audit_counts(set, &html, &md, &mut a);
    audit_run_files(set, &mut a);
    let with_records: Vec<&LoadedRun> = set.runs.iter().filter(|r| !r.records.is_empty()).collect();
    for (i, old) in with_records.iter().enumerate() {
        for new in &with_records[i + 1..] {
            let lines =
                crate::report::change::compare(old, new, crate::report::change::NOISE_THRESHOLD);
            let v = crate::report::compare::to_json(old, new, &lines, 1.0, 5.0);
            audit_compare_json(old, new, &v, &mut a);
        }
    }
    a
}

// ---------------------------------------------------------------------
// Numbers as printed.

/// A number as printed, with half its last digit: `9.9` is 9.9 ± 0.05,
/// `1,234` is 1234 ± 0.5.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Printed {
    /// The value.
    pub value: f64,
    /// Half a unit of its last digit.
    pub half: f64,
}

impl Printed {
    fn scaled(self, k: f64) -> Printed {
        Printed {
            value: self.value * k,
            half: self.half * k.abs(),
        }
    }
    fn low(self) -> f64 {
        self.value - self.half
    }
    fn high(self) -> f64 {
        self.value + self.half
    }
}

/// Reads a printed number at the start of `s` (digits, thousands commas,
/// one point, an exponent, a sign `+`, `-` or `−`): the number and the
/// rest of `s`.
pub fn read_number(s: &str) -> Option<(Printed, &str)> {
    let b = s.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let (neg, mut i) = if s.starts_with('−') {
        (true, '−'.len_utf8())
    } else if s.starts_with('-') {
        (true, 1)
    } else if s.starts_with('+') {
        (false, 1)
    } else {
        (false, 0)
    };
    let mut text = String::new();
    let mut decimals: Option<i32> = None;
    let mut exp = 0i32;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            text.push(c as char);
            if let Some(d) = decimals.as_mut() {
                *d += 1;
            }
            i += 1;
        } else if c == b','
            && !text.is_empty()
            && decimals.is_none()
            && digit(i + 1)
            && digit(i + 2)
            && digit(i + 3)
            && !digit(i + 4)
        {
            i += 1;
        } else if c == b'.' && !text.is_empty() && decimals.is_none() && digit(i + 1) {
            text.push('.');
            decimals = Some(0);
            i += 1;
        } else if (c == b'e' || c == b'E') && !text.is_empty() {
            let mut j = i + 1;
            let minus = b.get(j) == Some(&b'-');
            if matches!(b.get(j), Some(b'-' | b'+')) {
                j += 1;
            }
            let k = j;
            while digit(j) {
                j += 1;
            }
            if j == k {
                break;
            }
            exp = s[k..j].parse().ok()?;
            if minus {
                exp = -exp;
            }
            i = j;
            break;
        } else {
            break;
        }
    }
    if text.is_empty() {
        return None;
    }
    let scale = 10f64.powi(exp);
    let v: f64 = text.parse::<f64>().ok()? * scale;
    let half = 0.5 * 10f64.powi(-decimals.unwrap_or(0)) * scale;
    Some((
        Printed {
            value: if neg { -v } else { v },
            half,
        },
        &s[i..],
    ))
}

/// Every `N×` (or `Nx` right after digits) in `s`, in order.
fn ratios_in(s: &str) -> Vec<Printed> {
    let mut out = vec![];
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        let starts = rest.starts_with(|c: char| c.is_ascii_digit())
            && (i == 0
                || !s[..i].ends_with(|c: char| {
                    c.is_ascii_alphanumeric() || c == '.' || c == ',' || c == '-'
                }));
        if starts {
            if let Some((n, after)) = read_number(rest) {
                let after_trim = after.trim_start_matches(' ');
                if after_trim.starts_with('×')
                    || (after.starts_with('x')
                        && !after[1..].starts_with(|c: char| c.is_ascii_alphanumeric()))
                {
                    out.push(n);
                }
                i = s.len() - after.len();
                continue;
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// The `95% CI a×–b×` in `s`, if any.
fn interval_in(s: &str) -> Option<(Printed, Printed)> {
    let at = s.find("95% CI ")?;
    let rest = &s[at + "95% CI ".len()..];
    let (a, rest) = read_number(rest)?;
    let rest = rest.trim_start_matches(['×', 'x', ' ']);
    let rest = rest
        .strip_prefix('–')
        .or_else(|| rest.strip_prefix('-'))
        .or_else(|| rest.strip_prefix(" to "))?;
    let (b, _) = read_number(rest.trim_start())?;
    Some((a, b))
}

/// A quantity with its unit, in a base unit of its dimension: seconds for
/// times, bytes, operations per second (`/s`, `k/s`, `M/s`, `G/s`).
fn quantity(s: &str) -> Option<(Printed, &'static str, &str)> {
    let (n, rest) = read_number(s)?;
    let r = rest.trim_start_matches(' ');
    let units: [(&str, f64, &'static str); 10] = [
        ("ns", 1e-9, "s"),
        ("µs", 1e-6, "s"),
        ("ms", 1e-3, "s"),
        ("s", 1.0, "s"),
        ("B", 1.0, "B"),
        ("/s", 1.0, "/s"),
        ("k/s", 1e3, "/s"),
        ("M/s", 1e6, "/s"),
        ("G/s", 1e9, "/s"),
        ("µJ", 1e-6, "J"),
    ];
    let after_unit = |u: &str| {
        let tail = &r[u.len()..];
        !tail.starts_with(|c: char| c.is_alphanumeric())
    };
    // Longest unit first where one is the prefix of another.
    let mut best: Option<(&str, f64, &'static str)> = None;
    for (u, k, dim) in units {
        if r.starts_with(u) && after_unit(u) && best.is_none_or(|b| u.len() > b.0.len()) {
            best = Some((u, k, dim));
        }
    }
    let (u, k, dim) = best?;
    Some((n.scaled(k), dim, &r[u.len()..]))
}

/// Every `A vs B` and `A against B` of two quantities of one dimension in
/// `s`.
fn pairs_in(s: &str) -> Vec<(Printed, Printed)> {
    let mut out = vec![];
    for sep in [" vs ", " against "] {
        let mut from = 0;
        while let Some(at) = s[from..].find(sep) {
            let at = from + at;
            from = at + sep.len();
            // The quantity that ends right before the separator.
            let before = &s[..at];
            let start = before
                .char_indices()
                .rev()
                .take_while(|(_, c)| {
                    c.is_ascii_digit()
                        || matches!(
                            c,
                            ',' | '.'
                                | ' '
                                | '/'
                                | 'µ'
                                | 'k'
                                | 'M'
                                | 'G'
                                | 'n'
                                | 'm'
                                | 's'
                                | 'B'
                                | 'J'
                        )
                })
                .last()
                .map(|(i, _)| i);
            let Some(start) = start else { continue };
            let left = before[start..].trim_start();
            let left = left.trim_start_matches(|c: char| !c.is_ascii_digit());
            let (Some((a, da, tail)), Some((b, db, _))) = (quantity(left), quantity(&s[from..]))
            else {
                continue;
            };
            if tail.trim().is_empty() && da == db {
                out.push((a, b));
            }
        }
    }
    out
}

/// Whether a printed ratio `x` can be the quotient of the printed `a` and
/// `b` (either way round: a ratio is read from the side ahead).
fn quotient_fits(x: Printed, a: Printed, b: Printed) -> bool {
    let (hi, lo) = if a.value >= b.value { (a, b) } else { (b, a) };
    if lo.low() <= 0.0 {
        return true;
    }
    let (qmin, qmax) = (hi.low() / lo.high(), hi.high() / lo.low());
    x.high() >= qmin && x.low() <= qmax
}

/// Whether a printed figure can lie inside the printed interval: some
/// value that prints as the figure lies between values that print as the
/// ends (a value half a digit off prints as the next digit).
fn inside(x: Printed, lo: Printed, hi: Printed) -> bool {
    x.high() > lo.low() && x.low() < hi.high()
}

// ---------------------------------------------------------------------
// The report's own markup.

/// Text without tags, entities read.
pub fn text_of(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in an opening tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')?;
    Some(&tag[at..at + end])
}

/// Every element `<tag ...>...</tag>` in `html` whose opening tag contains
/// `marker`: (opening tag, inner markup), nested elements of the same tag
/// counted.
fn elements<'a>(html: &'a str, tag: &str, marker: &str) -> Vec<(&'a str, &'a str)> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = vec![];
    let mut from = 0;
    while let Some(at) = html[from..].find(&open) {
        let start = from + at;
        let Some(gt) = html[start..].find('>') else {
            break;
        };
        let head = &html[start..start + gt + 1];
        from = start + gt + 1;
        let next = html[start + open.len()..].chars().next();
        if !matches!(next, Some(' ' | '>')) || !head.contains(marker) {
            continue;
        }
        // Find the matching close, counting nested opens.
        let mut depth = 1;
        let mut pos = from;
        let mut end = None;
        while depth > 0 {
            let o = html[pos..].find(&open).map(|i| pos + i);
            let c = html[pos..].find(&close).map(|i| pos + i);
            match (o, c) {
                (Some(o), Some(c)) if o < c => {
                    depth += 1;
                    pos = o + open.len();
                }
                (_, Some(c)) => {
                    depth -= 1;
                    pos = c + close.len();
                    if depth == 0 {
                        end = Some(c);
                    }
                }
                _ => break,
            }
        }
        if let Some(end) = end {
            out.push((head, &html[from..end]));
        }
    }
    out
}

/// One table of the page: its id, its headers and each row's cells
/// (opening tag, inner markup).
struct PageTable<'a> {
    id: String,
    headers: Vec<String>,
    rows: Vec<Vec<(&'a str, &'a str)>>,
}

fn tables(html: &str) -> Vec<PageTable<'_>> {
    elements(html, "table", "class=\"data\"")
        .into_iter()
        .map(|(head, inner)| PageTable {
            id: attr(head, "id").unwrap_or_default().to_string(),
            headers: elements(inner, "th", "")
                .into_iter()
                .map(|(_, t)| text_of(t))
                .collect(),
            rows: elements(inner, "tr", "")
                .into_iter()
                .map(|(_, tr)| elements(tr, "td", ""))
                .filter(|cells| !cells.is_empty())
                .collect(),
        })
        .collect()
}

/// The record a source reference (`F2#14`) names.
fn record_of<'s>(set: &'s LoadSet, src: &str) -> Option<&'s Record> {
    let (f, i) = src.trim().strip_prefix('F')?.split_once('#')?;
    let f: usize = f.parse().ok()?;
    let i: usize = i.parse().ok()?;
    let run = set.runs.get(f.checked_sub(1)?)?;
    run.records.iter().find(|(j, _)| *j == i).map(|(_, r)| r)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// The interval and quotient checks on one piece of text (a card, a
/// cell), where `figure` is its headline ratio, if it has one.
fn text_checks(view: &str, place: &str, figure: Option<Printed>, text: &str, a: &mut Audit) {
    let Some(x) = figure else { return };
    if let Some((lo, hi)) = interval_in(text) {
        a.check("interval", inside(x, lo, hi), view, || {
            format!(
                "{place}: {} printed with 95% CI {}–{}: outside it ({text})",
                x.value, lo.value, hi.value
            )
        });
    }
    let pairs = pairs_in(text);
    if !pairs.is_empty() {
        let fits = pairs.iter().any(|(p, q)| quotient_fits(x, *p, *q));
        a.check("quotient", fits, view, || {
            let given: Vec<String> = pairs
                .iter()
                .map(|(p, q)| {
                    format!(
                        "{:.4} over {:.4} = {:.4}",
                        p.value.max(q.value),
                        p.value.min(q.value),
                        p.value.max(q.value) / p.value.min(q.value)
                    )
                })
                .collect();
            format!(
                "{place}: ratio {} is not the quotient of the figures beside it ({}): {text}",
                x.value,
                given.join("; ")
            )
        });
    }
}

/// The HTML page: cards and table cells.
pub fn audit_html(set: &LoadSet, html: &str, a: &mut Audit) {
    let view = "html";
    for (head, inner) in elements(html, "div", "class=\"card\"") {
        let figure = elements(inner, "span", "class=\"fig\"")
            .first()
            .and_then(|(_, t)| ratios_in(&text_of(t)).into_iter().last());
        let text = text_of(inner);
        let place = format!("card [{}]", attr(head, "data-src").unwrap_or(""));
        text_checks(view, &place, figure, &text, a);
        marked_ratio(set, view, &place, head, a);
    }
    for t in tables(html) {
        for row in &t.rows {
            for (col, (head, inner)) in row.iter().enumerate() {
                let text = text_of(inner);
                let header = t.headers.get(col).map(String::as_str).unwrap_or("");
                let place = format!(
                    "table {} column '{header}' [{}]",
                    t.id,
                    attr(head, "data-src").unwrap_or("")
                );
                let figure = ratios_in(&text).into_iter().next();
                text_checks(view, &place, figure, &text, a);
                marked_ratio(set, view, &place, head, a);
                record_figure(set, view, &place, &t.id, head, a);
                let main = text_of(inner.split("<small").next().unwrap_or(inner));
                size_cell(view, &place, header, &t.id, &main, a);
            }
        }
    }
}

/// A cell or card a page marks as a ratio of two records
/// (`data-fig="ratio" data-num="F1#2" data-den="F3#4"`, `data-value`,
/// `data-ci="low high"`): the estimator's ratio of those records.
fn marked_ratio(set: &LoadSet, view: &str, place: &str, head: &str, a: &mut Audit) {
    if attr(head, "data-fig") != Some("ratio") {
        return;
    }
    let (Some(num), Some(den)) = (
        attr(head, "data-num").and_then(|s| record_of(set, s)),
        attr(head, "data-den").and_then(|s| record_of(set, s)),
    ) else {
        a.check("runs", false, view, || {
            format!("{place}: a ratio whose records are not in the files")
        });
        return;
    };
    let shown: Option<f64> = attr(head, "data-value").and_then(|v| v.parse().ok());
    let ci: Option<Vec<f64>> =
        attr(head, "data-ci").map(|c| c.split(' ').filter_map(|x| x.parse().ok()).collect());
    let r = estimate::ratio(num, den);
    a.check(
        "runs",
        matches!((r, shown), (Some(r), Some(v)) if close(r.value, v, 1e-9)),
        view,
        || {
            format!(
                "{place}: ratio {shown:?}; its records' runs give {:?}",
                r.map(|r| r.value)
            )
        },
    );
    let want = r.and_then(|r| r.ci95);
    let same_ci = match (&ci, want) {
        (None, None) => true,
        (Some(c), Some([l, h])) => c.len() == 2 && close(c[0], l, 1e-9) && close(c[1], h, 1e-9),
        _ => false,
    };
    a.check("runs", same_ci, view, || {
        format!("{place}: interval {ci:?}; its records' runs give {want:?}")
    });
    if let (Some(v), Some(c)) = (shown, &ci) {
        a.check(
            "interval",
            c.len() == 2 && c[0] <= v && v <= c[1],
            view,
            || format!("{place}: ratio {v} outside its interval {c:?}"),
        );
    }
}

/// A record's own figure in the throughput tables (`data-value`, ops/s,
/// with one `data-src`): what its runs give.
fn record_figure(set: &LoadSet, view: &str, place: &str, table: &str, head: &str, a: &mut Audit) {
    let marked = attr(head, "data-fig") == Some("ops");
    let throughput_table = matches!(table, "t-kem" | "t-signature");
    if !(marked || throughput_table) {
        return;
    }
    let (Some(src), Some(v)) = (attr(head, "data-src"), attr(head, "data-value")) else {
        return;
    };
    if src.contains(' ') {
        return;
    }
    let Ok(v) = v.parse::<f64>() else { return };
    let rec = record_of(set, src);
    let want = rec.and_then(estimate::throughput).map(|e| e.value);
    a.check(
        "runs",
        want.is_some_and(|w| close(w, v, 1e-9)),
        view,
        || {
            format!(
                "{place}: shows {} ops/s{}; its runs give {}",
                crate::core::units::sig3(v),
                match rec.and_then(|r| r.ops_per_sec) {
                    Some(o) if close(o, v, 1e-9) && rec.is_some_and(|r| r.iterations.is_some()) =>
                        " (its window figure ops_per_sec)",
                    _ => "",
                },
                want.map_or("none".into(), crate::core::units::sig3)
            )
        },
    );
}

/// A size cell: never negative, and not 0 (an unknown size is a dash).
fn size_cell(view: &str, place: &str, header: &str, table: &str, text: &str, a: &mut Audit) {
    let sizes = table == "t-sizes"
        && [
            "Public key",
            "Secret key",
            "Ciphertext / signature",
            "On the wire",
        ]
        .contains(&header);
    let extra = table == "t-hybrid" && header.to_ascii_lowercase().contains("bytes");
    if !(sizes || extra) {
        return;
    }
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches([';', ',']);
    if first == "–" || first == "-" || first.is_empty() {
        a.check("size", true, view, String::new);
        return;
    }
    let n = read_number(first).map(|(n, _)| n.value);
    a.check("size", n.is_some_and(|n| n >= 0.0), view, || {
        format!("{place}: a negative size {text}")
    });
    if sizes {
        a.check("size", n != Some(0.0), view, || {
            format!("{place}: a size of 0 ({text}): an unknown size is a dash")
        });
    }
}

/// The Markdown report: findings and table cells.
pub fn audit_markdown(set: &LoadSet, md: &str, a: &mut Audit) {
    let _ = set;
    let view = "markdown";
    let mut headers: Vec<String> = vec![];
    let mut heading = String::new();
    for (n, line) in md.lines().enumerate() {
        let place = |what: &str| format!("line {} {what}", n + 1);
        if let Some(h) = line.strip_prefix("## ") {
            heading = h.to_string();
        }
        if let Some(item) = line.strip_prefix("- ") {
            let figure = item
                .strip_prefix("**")
                .and_then(|s| s.split("**").next())
                .and_then(|s| ratios_in(s).into_iter().last());
            text_checks(view, &place("finding"), figure, item, a);
            continue;
        }
        if !line.starts_with('|') {
            headers.clear();
            continue;
        }
        let cells = md_cells(line);
        if headers.is_empty() {
            headers = cells;
            continue;
        }
        if cells
            .iter()
            .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
        {
            continue;
        }
        for (col, c) in cells.iter().enumerate() {
            let header = headers.get(col).map(String::as_str).unwrap_or("");
            let p = place(&format!("column '{header}'"));
            let figure = ratios_in(c).into_iter().next();
            text_checks(view, &p, figure, c, a);
            let table = match heading.as_str() {
                "Sizes" => "t-sizes",
                "Hybrid overhead" => "t-hybrid",
                _ => "",
            };
            size_cell(view, &p, header, table, c, a);
        }
    }
}

/// A Markdown table row's cells, `\|` kept inside a cell.
fn md_cells(line: &str) -> Vec<String> {
    let mut cells = vec![];
    let mut cur = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '|' => {
                cells.push(cur.trim().to_string());
                cur.clear();
            }
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        cells.push(cur.trim().to_string());
    }
    cells
}

/// The record counts the lede states (`534 measured records (2 failed,
/// 108 skipped, ...) across 5 run files`), as (measured, failed, skipped,
/// files).
fn lede_counts(text: &str) -> Option<[usize; 4]> {
    let at = text.find(" measured record")?;
    let before = text[..at]
        .rsplit(|c: char| !(c.is_ascii_digit() || c == ','))
        .next()?;
    let measured = read_number(before)?.0.value as usize;
    let after = &text[at..];
    let count = |word: &str| -> usize {
        after
            .find(word)
            .and_then(|i| {
                after[..i]
                    .trim_end()
                    .rsplit([' ', '('])
                    .next()
                    .and_then(|n| read_number(n).map(|x| x.0.value as usize))
            })
            .unwrap_or(0)
    };
    let end = after.find('.').unwrap_or(after.len());
    let head = &after[..end];
    let failed = if head.contains(" failed") {
        count(" failed")
    } else {
        0
    };
    let skipped = if head.contains(" skipped") {
        count(" skipped")
    } else {
        0
    };
    let files = count(" run file");
    Some([measured, failed, skipped, files])
}

/// Known-answer failures a view states: each `failed N known-answer`.
fn kat_counts(text: &str) -> Vec<usize> {
    let mut out = vec![];
    let mut from = 0;
    while let Some(at) = text[from..].find(" known-answer") {
        let at = from + at;
        from = at + 1;
        let before = text[..at].trim_end();
        let word = before.rsplit(' ').next().unwrap_or("");
        if let Some((n, _)) = read_number(word) {
            out.push(n.value as usize);
        }
    }
    out.sort_unstable();
    out
}

/// Counts between the views and against the files.
pub fn audit_counts(set: &LoadSet, html: &str, md: &str, a: &mut Audit) {
    let ds = crate::report::model::Dataset::new(&set.runs);
    let c = crate::report::summary::counts(&ds);
    let files = [c.ok, c.failed, c.skipped, set.runs.len()];
    let lede_html = elements(html, "p", "class=\"lede\"")
        .first()
        .map(|(_, t)| text_of(t))
        .unwrap_or_default();
    let lede_md = md
        .lines()
        .find(|l| l.contains(" measured record"))
        .unwrap_or("")
        .to_string();
    for (view, text) in [("html", &lede_html), ("markdown", &lede_md)] {
        let got = lede_counts(text);
        a.check("count", got == Some(files), view, || {
            format!("the summary line counts (measured, failed, skipped, files) {got:?}; the files hold {files:?}: {text}")
        });
    }
    // The appendix lists every failed and skipped record.
    let appendix = tables(html)
        .into_iter()
        .find(|t| t.id == "t-appendix")
        .map_or(0, |t| t.rows.len());
    a.check("count", appendix == c.failed + c.skipped, "html", || {
        format!(
            "the appendix lists {appendix} records; {} failed and {} skipped in the files",
            c.failed, c.skipped
        )
    });
    let (kh, km) = (kat_counts(&text_of(html)), kat_counts(md));
    let mut from_files: Vec<usize> = set
        .runs
        .iter()
        .flat_map(|r| r.vectors.iter().map(|(_, v)| v.totals().2))
        .filter(|n| *n > 0)
        .collect();
    from_files.sort_unstable();
    from_files.dedup();
    let distinct = |v: &[usize]| {
        let mut v = v.to_vec();
        v.dedup();
        v
    };
    a.check(
        "count",
        distinct(&kh) == distinct(&km),
        "html and markdown",
        || format!("known-answer failures stated: {kh:?} in the HTML, {km:?} in the Markdown"),
    );
    a.check("count", distinct(&kh) == from_files, "html", || {
        format!(
            "known-answer failures stated {:?}; the files hold {from_files:?}",
            distinct(&kh)
        )
    });
}

/// The run files: no negative size in a sweep's hybrid overhead.
pub fn audit_run_files(set: &LoadSet, a: &mut Audit) {
    for run in &set.runs {
        let view = format!("run file {}", run.label);
        let Ok(bytes) = std::fs::read(&run.path) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        for (i, h) in v["hybrid_overhead"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            for field in ["extra_wire_bytes", "extra_secret_key_bytes"] {
                let x = &h[field];
                a.check("size", !x.as_f64().is_some_and(|n| n < 0.0), &view, || {
                    format!(
                        "hybrid_overhead[{i}] ({} over {}): {field} {x}",
                        h["hybrid"], h["component"]
                    )
                });
            }
        }
        for (i, r) in &run.records {
            let s = &r.sizes;
            let known = s.public_key_bytes > 0;
            a.check(
                "size",
                !known
                    || s.secret_key_bytes > 0
                    || v["records"][*i]["sizes"]["secret_key_bytes"].is_null(),
                &view,
                || {
                    format!(
                        "records[{i}] {}: secret_key_bytes 0 (unknown is null)",
                        r.algorithm
                    )
                },
            );
        }
    }
}

/// Whether two records measured the same thing, and if not, why.
pub fn not_comparable(old: &Record, new: &Record) -> Option<String> {
    crate::report::change::unlike(old, new)
}

/// `compare --json` of `old` and `new`.
pub fn audit_compare_json(old: &LoadedRun, new: &LoadedRun, v: &serde_json::Value, a: &mut Audit) {
    let view = format!("compare {} {}", old.label, new.label);
    for (n, r) in v["records"].as_array().into_iter().flatten().enumerate() {
        if r["outcome"] != "measured" {
            continue;
        }
        let (Some(o), Some(nw), Some(ch)) = (
            r["old_ops_per_sec"].as_f64(),
            r["new_ops_per_sec"].as_f64(),
            r["change"].as_f64(),
        ) else {
            continue;
        };
        let name = format!(
            "records[{n}] {} {} {} {}t batch {}",
            r["backend"].as_str().unwrap_or(""),
            r["algorithm"].as_str().unwrap_or(""),
            r["operation"].as_str().unwrap_or(""),
            r["threads"],
            r["batch"]
        );
        let given = nw / o - 1.0;
        a.check(
            "change",
            (ch - given).abs() <= 1e-9 * given.abs().max(1.0),
            &view,
            || {
                format!(
                    "{name}: change {} where its medians {o} and {nw} give {}",
                    crate::core::units::pct(ch),
                    crate::core::units::pct(given)
                )
            },
        );
        if let Some(ci) = r["change_ci95"].as_array() {
            let (l, h) = (
                ci[0].as_f64().unwrap_or(f64::NAN),
                ci[1].as_f64().unwrap_or(f64::NAN),
            );
            a.check("interval", l <= ch && ch <= h, &view, || {
                format!(
                    "{name}: change {} outside its interval [{}, {}]",
                    crate::core::units::pct(ch),
                    crate::core::units::pct(l),
                    crate::core::units::pct(h)
                )
            });
        }
        let find =
            |run: &'_ LoadedRun, index: &serde_json::Value, batch: Option<u64>| -> Option<Record> {
                if let Some(i) = index.as_u64() {
                    return run
                        .records
                        .iter()
                        .find(|(j, _)| *j as u64 == i)
                        .map(|(_, r)| r.clone());
                }
                let same = |x: &Record| {
                    x.backend == r["backend"].as_str().unwrap_or("")
                        && x.threads as u64 == r["threads"].as_u64().unwrap_or(0)
                        && x.algorithm == r["algorithm"].as_str().unwrap_or("")
                        && x.operation.cli_name() == r["operation"].as_str().unwrap_or("")
                        && !x.emulated
                        && x.status == Status::Ok
                };
                let all: Vec<&Record> = run
                    .records
                    .iter()
                    .map(|(_, x)| x)
                    .filter(|x| same(x))
                    .collect();
                if all.len() == 1 {
                    return Some(all[0].clone());
                }
                all.into_iter()
                    .find(|x| batch.is_none_or(|b| x.batch as u64 == b))
                    .cloned()
            };
        let or = find(old, &r["old_index"], r["batch"].as_u64());
        let nr = find(
            new,
            &r["new_index"],
            r["new_batch"].as_u64().or(r["batch"].as_u64()),
        );
        for (side, rec, shown) in [("old", &or, o), ("new", &nr, nw)] {
            let want = rec.as_ref().and_then(estimate::throughput).map(|e| e.value);
            a.check(
                "runs",
                want.is_some_and(|w| close(w, shown, 1e-9)),
                &view,
                || {
                    format!(
                        "{name}: {side} {shown}/s; its runs give {}",
                        want.map_or("none".into(), |w| format!("{w}/s"))
                    )
                },
            );
        }
        if let (Some(x), Some(y)) = (&or, &nr) {
            let why = not_comparable(x, y);
            a.check("comparable", why.is_none(), &view, || {
                format!(
                    "{name}: compared records that measured different things: {}",
                    why.unwrap_or_default()
                )
            });
        }
    }
}

/// A source reference's record, for tests.
#[allow(dead_code)]
fn src_ref(s: SrcRef) -> String {
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Printed {
        read_number(s).unwrap().0
    }

    #[test]
    fn printed_numbers_keep_their_last_digit() {
        assert!((p("9.9").value - 9.9).abs() < 1e-12 && (p("9.9").half - 0.05).abs() < 1e-12);
        assert_eq!(p("1,234").value, 1234.0);
        assert_eq!(p("1,234").half, 0.5);
        assert_eq!(p("−2,400").value, -2400.0);
        assert_eq!(p("+4.2").value, 4.2);
        assert_eq!(p("2.5e-3").value, 0.0025);
        assert_eq!(read_number("12, 13").unwrap().0.value, 12.0);
        assert_eq!(
            ratios_in("up to 23,528× slower, 9.9x faster, ML-KEM-768x"),
            vec![p("23,528"), p("9.9")]
        );
        let (lo, hi) = interval_in("23× faster (95% CI 24×–25×)").unwrap();
        assert_eq!((lo.value, hi.value), (24.0, 25.0));
        let pr = pairs_in("ML-DSA-65 vs ECDSA-P384 · NIST level 3 · 55.4 µs vs 1.29 ms · 1 thread");
        assert_eq!(pr.len(), 1, "{pr:?}");
        assert!((pr[0].0.value - 55.4e-6).abs() < 1e-12 && (pr[0].1.value - 1.29e-3).abs() < 1e-12);
        assert_eq!(pairs_in("2.55/s vs 43,767/s").len(), 1);
        assert_eq!(pairs_in("12.3 M/s against 4,000/s").len(), 1);
    }

    #[test]
    fn the_text_checks_catch_a_figure_outside_its_interval_and_a_wrong_quotient() {
        let mut a = Audit::default();
        let t = "23× faster (95% CI 24×–25×) 55.4 µs vs 1.29 ms";
        text_checks("html", "card", ratios_in(t).first().copied(), t, &mut a);
        let checks: Vec<&str> = a.disagreements.iter().map(|d| d.check).collect();
        // 1.29 ms / 55.4 µs = 23.3: the quotient fits; the interval does not.
        assert_eq!(checks, ["interval"], "{:?}", a.disagreements);
        let mut a = Audit::default();
        let t = "15× faster (95% CI 10×–16×) 130 µs vs 1.49 ms";
        text_checks("html", "card", ratios_in(t).first().copied(), t, &mut a);
        let checks: Vec<&str> = a.disagreements.iter().map(|d| d.check).collect();
        assert_eq!(checks, ["quotient"], "{:?}", a.disagreements);
        let mut a = Audit::default();
        let t = "9.87× faster (95% CI 9.27×–9.88×) 10.0 µs vs 98.7 µs";
        text_checks("html", "card", ratios_in(t).first().copied(), t, &mut a);
        assert!(a.disagreements.is_empty(), "{:?}", a.disagreements);
        assert_eq!(a.total(), 2);
    }

    #[test]
    fn sizes_and_counts_are_read_as_printed() {
        let mut a = Audit::default();
        size_cell(
            "html",
            "x",
            "Extra secret-key bytes",
            "t-hybrid",
            "−2,400",
            &mut a,
        );
        size_cell("html", "x", "Secret key", "t-sizes", "0 B", &mut a);
        size_cell("html", "x", "Secret key", "t-sizes", "–", &mut a);
        size_cell("html", "x", "Public key", "t-sizes", "1,184 B", &mut a);
        assert_eq!(a.disagreements.len(), 2, "{:?}", a.disagreements);
        assert_eq!(
            lede_counts("534 measured records (2 failed, 108 skipped, 20 symmetric) across 5 run files from vm."),
            Some([534, 2, 108, 5])
        );
        assert_eq!(
            lede_counts("3 measured records across 1 run file from vm."),
            Some([3, 0, 0, 1])
        );
        assert_eq!(
            kat_counts("it failed 130 known-answer cases; failed 3 known-answer"),
            vec![3, 130]
        );
        assert_eq!(md_cells("| a \\| b | c |"), vec!["a | b", "c"]);
    }
}
