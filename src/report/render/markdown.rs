//! The same summary and tables as Markdown (GitHub-flavoured tables).

use crate::report::findings::Analysis;
use crate::report::model::{src_list, Dataset};
use crate::report::outline::{FindingGroup, Outline, RunCard};
use crate::report::render::document::{self, FindingText, Markup, Renderer, Span, Style};
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

/// A cell as plain words: its text, its second line in brackets, a
/// known-answer mark, and its records in brackets (no markup, so the file
/// reads as it renders).
fn cell(c: &Cell, kat: Option<&str>) -> String {
    let mut s = md(&c.text);
    if let Some(sub) = c.sub.as_ref().filter(|x| !x.is_empty()) {
        let _ = write!(s, " ({})", md(sub));
    }
    if let Some(k) = kat {
        let _ = write!(s, " {}", md(k));
    }
    if !c.src.is_empty() && c.class.is_none_or(|k| k != "src") {
        let _ = write!(s, " ({})", src_list(c.src.iter().copied(), " "));
    }
    s
}

/// A Markdown table; a row showing a figure of code that failed
/// known-answer vectors carries the mark in its first cell of words.
pub fn table_md(ds: &Dataset, t: &Table) -> String {
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
        let srcs: Vec<_> = r.cells.iter().flat_map(|c| c.src.iter().copied()).collect();
        let mut kat = ds.kat_of(&srcs).map(|k| k.short());
        let cells: Vec<String> = r
            .cells
            .iter()
            .map(|c| cell(c, kat.take_if(|_| !c.numeric).as_deref()))
            .collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s
}

/// The Markdown document, written piece by piece as the document walk
/// tells it.
pub struct MarkdownDoc<'d> {
    ds: &'d Dataset<'d>,
    out: String,
}

impl<'d> MarkdownDoc<'d> {
    /// An empty document for the records of `ds`.
    pub fn new(ds: &'d Dataset<'d>) -> Self {
        MarkdownDoc {
            ds,
            out: String::new(),
        }
    }

    /// The document written so far.
    pub fn into_string(self) -> String {
        self.out
    }
}

impl Renderer for MarkdownDoc<'_> {
    fn markup(&self) -> Markup {
        Markup::Markdown
    }

    fn begin(&mut self, title: &str) {
        let _ = writeln!(self.out, "# {}\n", md(title));
    }

    fn callout(&mut self, lead: &str, sentence: &str, items: &[String]) {
        let _ = writeln!(self.out, "**{}** {}\n", md(lead), md(sentence));
        self.list(items);
    }

    fn section(&mut self, _id: &str, title: &str) {
        let _ = writeln!(self.out, "## {}\n", md(title));
    }

    fn subheading(&mut self, text: &str) {
        let _ = writeln!(self.out, "### {}\n", md(text));
    }

    fn fold(&mut self, summary: &str, _open: bool) {
        self.subheading(summary);
    }

    fn paragraph(&mut self, _style: Style, spans: &[Span]) {
        for span in spans {
            match span {
                Span::Text(t) | Span::Code(t) => self.out += &md(t),
                Span::Raw(_, t) => self.out += t,
            }
        }
        self.out += "\n\n";
    }

    fn list(&mut self, items: &[String]) {
        for item in items {
            let _ = writeln!(self.out, "- {}", md(item));
        }
        self.out += "\n";
    }

    fn table(&mut self, table: &Table) {
        let _ = writeln!(self.out, "{}", table_md(self.ds, table));
    }

    fn findings(&mut self, group: &FindingGroup) {
        for f in &group.findings {
            let t = FindingText::of(f, md, |i| format!(" ({i})"));
            let _ = writeln!(
                self.out,
                "- **{} {}**{}: {} {}{} (sources: {})",
                t.figure,
                t.word,
                t.interval,
                t.sentence,
                t.detail,
                f.kat
                    .as_deref()
                    .map(|k| format!(" {}", md(k)))
                    .unwrap_or_default(),
                src_list(f.sources.iter().copied(), " ")
            );
        }
        self.out += "\n";
    }

    fn run_cards(&mut self, runs: &[RunCard]) {
        for run in runs {
            let _ = writeln!(
                self.out,
                "### {} · {}\n\n| field | value |\n|---|---|",
                run.label,
                md(run.file_name)
            );
            for (k, v) in &run.rows {
                let _ = writeln!(self.out, "| {} | {} |", md(k), md(v));
            }
            self.out += "\n";
        }
    }

    fn end(&mut self, generated: &str) {
        let _ = writeln!(
            self.out,
            "_Generated by pqcprof {} on {}._",
            env!("CARGO_PKG_VERSION"),
            generated
        );
    }
}

/// The whole document.
pub fn render(set: &LoadSet, ds: &Dataset, an: &Analysis, generated: &str) -> String {
    let mut doc = MarkdownDoc::new(ds);
    document::walk(&Outline::new(set, ds, an), generated, &mut doc);
    doc.into_string()
}
