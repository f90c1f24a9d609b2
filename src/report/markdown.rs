//! The same summary and tables as Markdown (GitHub-flavoured tables).

use super::analysis::{Analysis, Group};
use super::load::LoadSet;
use super::model::Dataset;
use super::sections;
use super::table::{Cell, Table};
use super::{context_line, counts, file_summary, metadata_rows};
use crate::catalog::Kind;
use std::fmt::Write;

/// Escapes what would break a table cell or start markup.
fn md(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('\n', " ")
}

fn cell(c: &Cell) -> String {
    let mut s = md(&c.text);
    if let Some(sub) = &c.sub {
        let _ = write!(s, " ({})", md(sub));
    }
    if !c.src.is_empty() && c.class.is_none_or(|k| k != "src") {
        let ids: Vec<String> = c.src.iter().map(|x| x.to_string()).collect();
        let _ = write!(s, " <sub>{}</sub>", ids.join(" "));
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
    let numeric: Vec<bool> = (0..t.headers.len())
        .map(|i| {
            t.rows
                .iter()
                .filter_map(|r| r.cells.get(i))
                .any(|c| c.numeric)
        })
        .collect();
    let _ = writeln!(
        s,
        "|{}|",
        numeric
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

/// The whole document.
pub fn render(set: &LoadSet, ds: &Dataset, an: &Analysis, generated: &str) -> String {
    let mut s = String::new();
    let c = counts(ds);
    let _ = writeln!(s, "# pqcprof report\n\n{}\n", md(&file_summary(ds, &c)));
    if !set.problems.is_empty() {
        s += "**Input problems.** What could be used is reported; the rest is named here.\n\n";
        for p in &set.problems {
            let _ = writeln!(s, "- {}", md(&p.to_string()));
        }
        s += "\n";
    }
    let _ = writeln!(s, "## Executive summary\n\n{}\n", md(&context_line(ds)));
    let mut groups: Vec<Group> = an.findings.iter().map(|f| f.group).collect();
    groups.dedup();
    for g in groups {
        let _ = writeln!(s, "### {}\n", g.title());
        for f in an.findings.iter().filter(|f| f.group == g) {
            let ids: Vec<String> = f.sources.iter().map(|x| x.to_string()).collect();
            let _ = writeln!(
                s,
                "- **{} {}**: {} {} <sub>{}</sub>",
                md(&f.figure),
                md(&f.word),
                md(&f.sentence),
                md(&f.detail),
                ids.join(" ")
            );
        }
        s += "\n";
    }
    let _ = writeln!(s, "{}\n", md(&an.gpu_note));
    s += "## PQC against classical, by NIST level\n\n";
    for n in &an.pair_notes {
        let _ = writeln!(s, "{}\n", md(n));
    }
    for kind in [Kind::Kem, Kind::Signature] {
        let t = sections::pairs_table(&an.pairs, kind);
        if !t.is_empty() {
            let _ = writeln!(
                s,
                "### {}\n\n{}",
                if kind == Kind::Kem {
                    "ML-KEM against ECDH and X25519/X448"
                } else {
                    "ML-DSA against ECDSA, RSA and EdDSA"
                },
                table_md(&t)
            );
        }
    }
    s += "## GPU against CPU\n\n";
    let _ = writeln!(s, "{}\n", md(&an.gpu_note));
    let gt = sections::gpu_table(an);
    if !gt.is_empty() {
        let _ = writeln!(s, "{}", table_md(&gt));
    }
    s += "## Results\n\nMedian time per operation, with median operations per second in parentheses.\n\n";
    for kind in [Kind::Kem, Kind::Signature] {
        let t = sections::throughput_table(ds, kind);
        if !t.is_empty() {
            let _ = writeln!(
                s,
                "### {}\n\n{}",
                if kind == Kind::Kem {
                    "Key encapsulation and key exchange"
                } else {
                    "Signatures"
                },
                table_md(&t)
            );
        }
    }
    let lt = sections::latency_table(ds);
    if !lt.is_empty() {
        let _ = writeln!(s, "### Latency of single operations\n\n{}", table_md(&lt));
    }
    let _ = writeln!(s, "## Sizes\n\n{}", table_md(&sections::sizes_table(ds)));
    s += "## Symmetric context\n\n";
    let st = sections::symmetric_table(ds);
    if st.is_empty() {
        s += "No symmetric records in these files.\n\n";
    } else {
        let _ = writeln!(s, "{}", table_md(&st));
    }
    s += "## Appendix: skipped and failed records\n\n";
    let at = sections::appendix_table(ds);
    if at.is_empty() {
        s += "Every record was measured and passed its correctness gate.\n\n";
    } else {
        let _ = writeln!(s, "{}", table_md(&at));
    }
    let _ = writeln!(
        s,
        "## Standards\n\n{}",
        table_md(&sections::standards_table(ds))
    );
    s += "## Run metadata\n\nSources are written `Fn#i`: file n below, index i of its `records` array.\n\n";
    for run in ds.runs {
        let _ = writeln!(
            s,
            "### {} · {}\n\n| field | value |\n|---|---|",
            run.label,
            md(&run.file_name)
        );
        for (k, v) in metadata_rows(run) {
            let _ = writeln!(s, "| {} | {} |", md(&k), md(&v));
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
