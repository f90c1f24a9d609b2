//! The same summary and tables as Markdown (GitHub-flavoured tables).

use crate::report::findings::Analysis;
use crate::report::model::{src_list, Dataset};
use crate::report::outline::{Headed, Outline};
use crate::report::table::{Cell, Table};
use crate::schema::load::LoadSet;
use std::fmt::Write;

/// Escapes what would break a table cell or start markup: `|`, backslashes,
/// `<` (raw HTML, autolinks), `[` and `]` (so a run file's string can make
/// no link nor image, `[x](javascript:...)`, `![i](http://...)`), and every
/// control character, written out (`u{1b}` after a backslash).
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::core::units::printable(s).chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '<' => out.push_str("&lt;"),
            '\n' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn cell(c: &Cell) -> String {
    let mut s = md(&c.text);
    if let Some(sub) = &c.sub {
        let _ = write!(s, " ({})", md(sub));
    }
    if !c.src.is_empty() && c.class.is_none_or(|k| k != "src") {
        let _ = write!(s, " <sub>{}</sub>", src_list(c.src.iter().copied(), " "));
    }
    s
}

/// A Markdown table.
pub fn table_md(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| {} |",
        t.headers
            .iter()
            .map(|h| md(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        s,
        "|{}|",
        t.numeric_columns()
            .iter()
            .map(|n| if *n { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in &t.rows {
        let _ = writeln!(
            s,
            "| {} |",
            r.cells.iter().map(cell).collect::<Vec<_>>().join(" | ")
        );
    }
    s
}

/// A table under its `###` heading.
fn headed_md(h: &Headed) -> String {
    format!("### {}\n\n{}\n", md(h.heading), table_md(&h.table))
}

/// A section's table, or only the `absent` sentence when it has none.
fn table_or_note(t: Option<&Table>, absent: &str) -> String {
    match t {
        Some(t) => format!("{}\n", table_md(t)),
        None => format!("{absent}\n\n"),
    }
}

/// What the totals over devices and ranks mean (both formats say it).
pub const SCALE_INTRO: &str = "Devices of one node ran together, one host thread each, their timed runs started at one barrier; a cluster's ranks ran as Slurm started them. A total adds up each member's median throughput over its runs that overlapped in time with a run of every other member (host clocks), so only work done together is summed; where records lack run windows the medians are summed and the row says so. Imbalance is (max - min) / max. Energy per operation is all members' energy over all their operations; peak power is the sum of each member's highest per-run mean power.";

/// The whole document.
pub fn render(set: &LoadSet, ds: &Dataset, an: &Analysis, generated: &str) -> String {
    let o = Outline::new(set, ds, an);
    let mut s = String::new();
    let _ = writeln!(s, "# pqcprof report\n\n{}\n", md(&o.file_summary));
    if !o.problems.is_empty() {
        s += "**Input problems.** What could be used is reported; the rest is named here.\n\n";
        for p in &o.problems {
            let _ = writeln!(s, "- {}", md(p));
        }
        s += "\n";
    }
    let _ = writeln!(s, "## Executive summary\n\n{}\n", md(&o.context));
    for g in &o.findings {
        let _ = writeln!(s, "### {}\n", g.group.title());
        for f in &g.findings {
            let _ = writeln!(
                s,
                "- **{} {}**: {} {} <sub>{}</sub>",
                md(&f.figure),
                md(&f.word),
                md(&f.sentence),
                md(&f.detail),
                src_list(f.sources.iter().copied(), " ")
            );
        }
        s += "\n";
    }
    let _ = writeln!(s, "{}\n", md(o.gpu_note));
    s += "## PQC against classical, by NIST level\n\n";
    for n in o.pair_notes {
        let _ = writeln!(s, "{}\n", md(n));
    }
    for h in &o.pairs {
        s += &headed_md(h);
    }
    s += "## GPU against CPU\n\n";
    let _ = writeln!(s, "{}\n", md(o.gpu_note));
    if let Some(t) = &o.gpu {
        let _ = writeln!(s, "{}", table_md(t));
    }
    if let Some(h) = &o.scaling {
        let _ = writeln!(s, "{}\n", md(crate::report::batch_curves::INTRO));
        s += &headed_md(h);
    }
    s += "## Results\n\nMedian time per operation, with median operations per second in parentheses.\n\n";
    let _ = writeln!(s, "{}\n", md(crate::report::sections::MARKER_LEGEND));
    for h in o
        .throughput
        .iter()
        .chain(&o.latency)
        .chain(&o.kernels)
        .chain(&o.variants)
    {
        s += &headed_md(h);
    }
    if !o.cluster.is_empty() {
        s += "## Cluster\n\n";
        for n in &o.cluster {
            let _ = writeln!(s, "- {}", md(n));
        }
        s += "\n";
        if let Some(t) = &o.ranks {
            let _ = writeln!(s, "{}", table_md(t));
        }
    }
    if o.devices.is_some() || o.aggregates.is_some() {
        s += &format!("## Several devices and ranks\n\n{SCALE_INTRO}\n\n");
        for h in o.devices.iter().chain(&o.aggregates) {
            s += &headed_md(h);
        }
    }
    if let Some(t) = &o.hybrid {
        let _ = writeln!(s, "## Hybrid overhead\n\n{}", table_md(t));
    }
    if let Some(t) = &o.beside {
        let _ = writeln!(
            s,
            "## Beside published results\n\n{}\n",
            crate::report::beside::BESIDE_INTRO
        );
        for n in &o.imported {
            let _ = writeln!(s, "- {}", md(n));
        }
        let _ = writeln!(s, "\n{}", table_md(t));
    }
    let _ = writeln!(s, "## Sizes\n\n{}", table_md(&o.sizes));
    s += "## Symmetric context\n\n";
    s += &table_or_note(o.symmetric.as_ref(), "No symmetric records in these files.");
    s += "## Appendix: skipped and failed records\n\n";
    s += &table_or_note(
        o.appendix.as_ref(),
        "Every record was measured and passed its correctness gate.",
    );
    let caveats = crate::report::caveats::caveats(ds);
    if !caveats.is_empty() {
        s += "## Records cut short or throttled\n\nTheir figures are over the runs that finished, or were measured while the GPU held its clocks down for power or heat.\n\n";
        for c in &caveats {
            let _ = writeln!(s, "- {}", md(c));
        }
        s += "\n";
    }
    if let Some(t) = &o.emulated {
        s += "## Correctness on the CPU stand-in driver (emulated, not a GPU)\n\nThese records ran the GPU kernels on pqcprof's CPU stand-in CUDA driver, a test fixture: correctness and the launch path only. Their timings say nothing about any GPU and appear in no figure above.\n\n";
        let _ = writeln!(s, "{}", table_md(t));
    }
    let _ = writeln!(s, "## Standards\n\n{}", table_md(&o.standards));
    s += "## Run metadata\n\nSources are written `Fn#i`: file n below, index i of its `records` array.\n\n";
    for run in &o.runs {
        let _ = writeln!(
            s,
            "### {} · {}\n\n| field | value |\n|---|---|",
            run.label,
            md(run.file_name)
        );
        for (k, v) in &run.rows {
            let _ = writeln!(s, "| {} | {} |", md(k), md(v));
        }
        s += "\n";
    }
    let _ = writeln!(
        s,
        "_Generated by pqcprof {} on {}._",
        env!("CARGO_PKG_VERSION"),
        generated
    );
    s
}
