//! The report's one document walk: every section in report order, its
//! heading, prose, tables and lists, told to a [`Renderer`]. The formats
//! ([`html`], [`markdown`]) only say how each piece looks, so a new section
//! is written here once and appears in both.
//!
//! [`html`]: crate::report::render::html
//! [`markdown`]: crate::report::render::markdown

use crate::report::headline::Group;
use crate::report::outline::{FindingGroup, Headed, Outline, RunCard};
use crate::report::table::Table;

/// The markup a renderer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Markup {
    /// The self-contained HTML page.
    Html,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// How a paragraph is set (HTML gives each its own class; Markdown sets
/// them all as plain paragraphs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Running text.
    Plain,
    /// The line under the title.
    Lede,
    /// The machines and software under the summary's heading.
    Context,
    /// An aside: what is missing, or how to read a section.
    Note,
    /// The key to the tables' markers.
    Legend,
}

/// A piece of a paragraph.
#[derive(Debug, Clone, Copy)]
pub enum Span<'a> {
    /// Plain words, in every markup, escaped for each.
    Text(&'a str),
    /// Plain words with `backticked` names set as code, in every markup.
    Code(&'a str),
    /// Words already written in one markup, its tags included; the other
    /// leaves them out.
    Raw(Markup, &'a str),
}

/// What a format does with each piece of the document. The walk decides
/// what comes in which order; an implementation writes it.
pub trait Renderer {
    /// The markup it writes: which [`Span::Raw`] words and which
    /// one-markup paragraphs it is given.
    fn markup(&self) -> Markup;
    /// The document's start and its title.
    fn begin(&mut self, title: &str);
    /// A table of contents listing every section `(anchor, title)`, where
    /// the format has one.
    fn contents(&mut self, _sections: &[(&str, &str)]) {}
    /// Folds what follows, up to [`Renderer::unfold`], under one line that
    /// says what it holds (HTML `<details>`, open or closed); Markdown
    /// sets the line as a sub-heading.
    fn fold(&mut self, summary: &str, open: bool);
    /// Ends the fold [`Renderer::fold`] began.
    fn unfold(&mut self) {}
    /// A boxed warning: a bold lead, a sentence, then one item each.
    fn callout(&mut self, lead: &str, sentence: &str, items: &[String]);
    /// A section's heading; `id` is its anchor.
    fn section(&mut self, id: &str, title: &str);
    /// A sub-heading inside a section (plain words).
    fn subheading(&mut self, text: &str);
    /// A paragraph: only spans for this markup reach it, never none.
    fn paragraph(&mut self, style: Style, spans: &[Span]);
    /// A bulleted list of plain sentences.
    fn list(&mut self, items: &[String]);
    /// A table.
    fn table(&mut self, table: &Table);
    /// One group's headline findings.
    fn findings(&mut self, group: &FindingGroup);
    /// Controls that narrow the tables, where the format can run them
    /// (Markdown cannot).
    fn filters(&mut self) {}
    /// An inline SVG chart, where the format can draw one (Markdown
    /// cannot).
    fn figure(&mut self, _svg: &str) {}
    /// Each file's metadata.
    fn run_cards(&mut self, runs: &[RunCard]);
    /// The document's end: when and by what it was made.
    fn end(&mut self, generated: &str);
}

/// What the totals over devices and ranks mean (both formats say it).
pub const SCALE_INTRO: &str = "Devices of one node ran together, one host thread each, their timed runs started at one barrier; a cluster's ranks ran as Slurm started them. A total adds up each member's median throughput over its runs that overlapped in time with a run of every other member (host clocks), so only work done together is summed; where records lack run windows the medians are summed and the row says so. Imbalance is (max - min) / max. Energy per operation is all members' energy over all their operations; peak power is the sum of each member's highest per-run mean power.";

/// A paragraph in every markup, with the spans for the renderer's own; left
/// out where none is.
fn say(r: &mut dyn Renderer, style: Style, spans: &[Span]) {
    let markup = r.markup();
    let mine: Vec<Span> = spans
        .iter()
        .copied()
        .filter(|s| !matches!(s, Span::Raw(m, _) if *m != markup))
        .collect();
    if !mine.is_empty() {
        r.paragraph(style, &mine);
    }
}

/// Words in HTML, with their tags, and none in Markdown.
fn html(s: &str) -> Span<'_> {
    Span::Raw(Markup::Html, s)
}

/// Words in Markdown only.
fn markdown(s: &str) -> Span<'_> {
    Span::Raw(Markup::Markdown, s)
}

/// A finding's words, each escaped for the format at hand; the interval
/// already wrapped as the format writes it. Both formats write a finding
/// from these.
pub struct FindingText {
    /// The headline figure.
    pub figure: String,
    /// The word after it.
    pub word: String,
    /// The interval, wrapped; empty when there is none.
    pub interval: String,
    /// The sentence.
    pub sentence: String,
    /// The figures behind it.
    pub detail: String,
}

impl FindingText {
    /// `f`'s words through `esc`, the interval then through `interval`.
    pub fn of(
        f: &crate::report::headline::Finding,
        esc: impl Fn(&str) -> String,
        interval: impl Fn(String) -> String,
    ) -> Self {
        FindingText {
            figure: esc(&f.figure),
            word: esc(&f.word),
            interval: f
                .interval
                .as_deref()
                .map(|i| interval(esc(i)))
                .unwrap_or_default(),
            sentence: esc(&f.sentence),
            detail: esc(&f.detail),
        }
    }
}

/// A table longer than this many rows is folded away (HTML `<details>`,
/// closed) under a line that says what it holds; shorter ones are shown.
pub const FOLD_ROWS: usize = 12;

/// A table under its sub-heading, folded when long.
fn headed(r: &mut dyn Renderer, h: &Headed) {
    folded_table(r, h.heading, &h.table);
}

/// A table, folded under `what` when it has more than [`FOLD_ROWS`] rows,
/// else under its sub-heading.
fn folded_table(r: &mut dyn Renderer, what: &str, t: &Table) {
    if t.rows.len() > FOLD_ROWS {
        r.fold(&format!("{what} ({} rows)", t.rows.len()), false);
        r.table(t);
        r.unfold();
    } else {
        r.subheading(what);
        r.table(t);
    }
}

/// The sections of the page in order, each `(anchor, title)`: what the
/// navigation lists, in full.
pub fn sections(o: &Outline) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("summary", "Summary")];
    v.push(("vs-classical", "PQC vs classical"));
    v.push(("gpu", "GPU vs CPU"));
    v.push(("results", "Results"));
    if o.implementations.is_some() {
        v.push(("implementations", "Implementations"));
    }
    if !o.cluster.is_empty() {
        v.push(("cluster", "Cluster"));
    }
    if o.devices.is_some() || o.aggregates.is_some() {
        v.push(("scale", "Several devices"));
    }
    if o.offload.is_some() {
        v.push(("offload", "Offload"));
    }
    v.push(("charts", "Charts"));
    if o.hybrid.is_some() {
        v.push(("hybrid", "Hybrid overhead"));
    }
    if o.beside.is_some() {
        v.push(("beside", "Published results"));
    }
    v.push(("sizes", "Sizes"));
    v.push(("symmetric", "Symmetric"));
    v.push(("appendix", "Skipped and failed"));
    if !o.caveats.is_empty() || !o.kat.is_empty() {
        v.push(("caveats", "Caveats"));
    }
    if o.emulated.is_some() {
        v.push(("emulated", "Emulated"));
    }
    v.push(("standards", "Standards"));
    v.push(("metadata", "Run metadata"));
    v
}

/// Walks the whole document, section by section: first the answer a
/// reader comes for (GPU against CPU, PQC against classical, known-answer
/// failures and caveats), then the sections the navigation lists, long
/// tables and charts folded.
pub fn walk(o: &Outline, generated: &str, r: &mut dyn Renderer) {
    r.begin("pqcprof report");
    say(
        r,
        Style::Lede,
        &[
            html("Post-quantum cryptography measured on CPUs and GPUs, every operation checked for correctness before it was timed. "),
            Span::Text(&o.file_summary),
        ],
    );
    r.contents(&sections(o));
    if !o.problems.is_empty() {
        r.callout(
            "Input problems.",
            "What could be used is reported; the rest is named here.",
            &o.problems,
        );
    }
    summary(o, r);
    pqc_against_classical(o, r);
    gpu_against_cpu(o, r);
    results(o, r);
    implementations(o, r);
    several_devices(o, r);
    offload(o, r);
    charts(o, r);
    published_and_sizes(o, r);
    records_apart(o, r);
    r.section("standards", "Standards");
    say(
        r,
        Style::Plain,
        &[html("Where each algorithm family is specified. Links open in a new tab; the report itself loads nothing.")],
    );
    folded_table(r, "The standards of every family present", &o.standards);
    r.section("metadata", "Run metadata");
    say(
        r,
        Style::Plain,
        &[
            html("Every figure above names its source as <code>F<i>n</i>#<i>i</i></code>: file <i>n</i> below, index <i>i</i> of its <code>records</code> array."),
            markdown("Sources are written `Fn#i`: file n below, index i of its `records` array."),
        ],
    );
    r.fold(
        &format!(
            "Machine, software and settings of each file ({})",
            o.runs.len()
        ),
        o.runs.len() == 1,
    );
    r.run_cards(&o.runs);
    r.unfold();
    r.end(generated);
}

/// The first screen: GPU against CPU (or one line that no GPU was
/// measured and how to measure one), PQC against classical, known-answer
/// failures, the caveats in short, then what the CPU figures alone say.
fn summary(o: &Outline, r: &mut dyn Renderer) {
    r.section("summary", "Summary");
    say(r, Style::Context, &[Span::Text(&o.context)]);
    let group = |g: Group| o.findings.iter().find(|f| f.group == g);
    r.subheading("GPU against CPU");
    match (group(Group::Gpu), &o.gpu_answer) {
        (Some(g), _) => {
            r.findings(g);
            if let Some(e) = group(Group::Energy) {
                r.findings(e);
            }
        }
        (None, Some(line)) => say(r, Style::Note, &[Span::Code(line)]),
        (None, None) => say(r, Style::Note, &[Span::Code(o.gpu_note)]),
    }
    r.subheading("PQC against classical");
    let mut any = false;
    for g in [Group::PqcFaster, Group::PqcCosts] {
        if let Some(f) = group(g) {
            any = true;
            r.findings(f);
        }
    }
    if !any {
        for n in o.pair_notes {
            say(r, Style::Note, &[Span::Code(n)]);
        }
    }
    if !o.kat.is_empty() {
        let items: Vec<String> = o.kat.iter().map(|k| k.long()).collect();
        r.callout(
            "Known-answer failures.",
            "The code behind these backends gave other answers than the standards' vectors; every figure of theirs below carries ✗.",
            &items,
        );
    }
    if !o.first_caveats.is_empty() {
        r.callout(
            "Caveats.",
            "Read the figures below with these in mind (each is listed in full under Caveats):",
            &o.first_caveats,
        );
    }
    if let Some(g) = group(Group::Cpu) {
        r.subheading("On the CPU");
        r.findings(g);
    }
    if !o.missing.is_empty() {
        let missing = o.missing.join("; and ");
        say(
            r,
            Style::Note,
            &[
                html("<strong>Not in these files:</strong> "),
                markdown("Not in these files: "),
                Span::Code(&missing),
                Span::Text("."),
            ],
        );
    }
}

/// PQC against classical, by NIST level.
fn pqc_against_classical(o: &Outline, r: &mut dyn Renderer) {
    r.section("vs-classical", "PQC against classical, by NIST level");
    say(
        r,
        Style::Plain,
        &[html("Each row sets a post-quantum algorithm against a classical one of equivalent strength, measured on the same host with the same number of threads. Times are median time per operation; the ratio reads from the post-quantum side, with its 95% interval. ML-DSA-44 (category 2) is compared in the level 1 column.")],
    );
    for n in o.pair_notes {
        say(r, Style::Note, &[Span::Code(n)]);
    }
    for h in &o.pairs {
        headed(r, h);
    }
}

/// GPU against CPU, and where batches saturate and break even.
fn gpu_against_cpu(o: &Outline, r: &mut dyn Renderer) {
    r.section("gpu", "GPU against CPU");
    say(r, Style::Note, &[Span::Code(o.gpu_note)]);
    if let Some(t) = &o.gpu {
        folded_table(r, "Each GPU figure against the best CPU figure", t);
    }
    if let Some(h) = &o.scaling {
        say(
            r,
            Style::Plain,
            &[Span::Text(crate::report::batch_curves::INTRO)],
        );
        headed(r, h);
    }
}

/// Every successful record's throughput and latency, and our kernels.
fn results(o: &Outline, r: &mut dyn Renderer) {
    r.section("results", "Results");
    say(
        r,
        Style::Plain,
        &[
            html("Median time per operation (large) and median operations per second (small) of every successful throughput record: the median of its timed runs. A row is one backend, thread count and algorithm from one file, at its largest batch (sweep figures: a timed window per operation); other batch sizes are shown on demand."),
            markdown("Median time per operation, with median operations per second in parentheses: the median of each record's timed runs."),
        ],
    );
    r.filters();
    say(
        r,
        Style::Legend,
        &[
            html("<label><input type=\"checkbox\" id=\"all-batches\"> Show every batch size measured</label> · "),
            Span::Text(crate::report::sections::MARKER_LEGEND),
        ],
    );
    for h in o
        .throughput
        .iter()
        .chain(&o.latency)
        .chain(&o.kernels)
        .chain(&o.variants)
    {
        headed(r, h);
    }
    if let Some(h) = &o.cold {
        say(r, Style::Plain, &[Span::Text(crate::report::cold::INTRO)]);
        headed(r, h);
    }
}

/// The implementations of one parameter set and operation side by side.
fn implementations(o: &Outline, r: &mut dyn Renderer) {
    if let Some(h) = &o.implementations {
        r.section("implementations", "Implementations");
        say(
            r,
            Style::Plain,
            &[Span::Text(crate::report::implementations::INTRO)],
        );
        headed(r, h);
    }
}

/// Clusters, and devices and ranks that ran together with their totals.
fn several_devices(o: &Outline, r: &mut dyn Renderer) {
    if !o.cluster.is_empty() {
        r.section("cluster", "Cluster");
        r.list(&o.cluster);
        if let Some(t) = &o.ranks {
            folded_table(r, "Ranks", t);
        }
    }
    if o.devices.is_some() || o.aggregates.is_some() {
        r.section("scale", "Several devices and ranks");
        say(r, Style::Plain, &[Span::Text(SCALE_INTRO)]);
        for h in o.devices.iter().chain(&o.aggregates) {
            headed(r, h);
        }
    }
}

/// What batched requests waited, from offload run files: the measured
/// figures beside the planner's predictions, with a caveat where they are
/// far apart.
fn offload(o: &Outline, r: &mut dyn Renderer) {
    let Some(s) = &o.offload else { return };
    r.section("offload", "Offload");
    say(
        r,
        Style::Plain,
        &[Span::Text(crate::report::offload::INTRO)],
    );
    if !s.caveats.is_empty() {
        r.callout(
            "Predictions far from what was measured.",
            "Where a measured figure is more than twice the prediction, or under half of it, the planner's model of this machine (batch times and hand-off measured before the first point) did not hold while serving:",
            &s.caveats,
        );
    }
    r.subheading("Highest rate under the objective");
    r.table(&s.summary);
    for c in &crate::report::render::charts::offload_charts(&s.runs) {
        r.subheading(&c.title);
        say(
            r,
            Style::Legend,
            &[
                Span::Text(&c.caption),
                markdown(" The chart is drawn in the HTML report; every figure it shows is in the table below."),
            ],
        );
        r.figure(&c.svg);
    }
    folded_table(r, "Every rate measured", &s.points);
}

/// The charts, each folded under its title (HTML only: Markdown has no
/// inline SVG, and every figure of a chart is in a table).
fn charts(o: &Outline, r: &mut dyn Renderer) {
    r.section("charts", "Charts");
    if r.markup() != Markup::Html {
        say(
            r,
            Style::Plain,
            &[Span::Text("The charts are drawn in the HTML report; every figure they show is in a table here.")],
        );
        return;
    }
    if o.charts.is_empty() {
        say(
            r,
            Style::Note,
            &[Span::Text(
                "Nothing was measured successfully, so there is nothing to chart.",
            )],
        );
    }
    for (i, c) in o.charts.iter().enumerate() {
        r.fold(&c.title, i == 0 && o.charts.len() == 1);
        say(r, Style::Legend, &[Span::Text(&c.caption)]);
        r.figure(&c.svg);
        r.unfold();
    }
    for n in &o.chart_notes {
        say(r, Style::Note, &[Span::Code(n)]);
    }
}

/// Hybrid overhead, other tools' published figures, and sizes.
fn published_and_sizes(o: &Outline, r: &mut dyn Renderer) {
    if let Some(t) = &o.hybrid {
        r.section("hybrid", "Hybrid overhead");
        say(
            r,
            Style::Plain,
            &[html("What each hybrid costs over its pure post-quantum component measured in the same file: extra median time per operation and extra bytes (wire: public key plus ciphertext or signature). A dash is a size the provider does not disclose.")],
        );
        folded_table(r, "Each hybrid and operation", t);
    }
    if let Some(t) = &o.beside {
        r.section("beside", "Beside published results");
        say(
            r,
            Style::Plain,
            &[Span::Text(crate::report::beside::BESIDE_INTRO)],
        );
        r.list(&o.imported);
        folded_table(r, "Each published figure beside this report's", t);
    }
    r.section("sizes", "Sizes");
    say(
        r,
        Style::Plain,
        &[html("Bytes of keys, ciphertexts and signatures as the records state them (for ML-KEM and ML-DSA, FIPS 203 and FIPS 204). On the wire: what one side sends, public key plus ciphertext or signature. A dash is a size the provider does not disclose.")],
    );
    folded_table(r, "Sizes of every algorithm", &o.sizes);
}

/// A section every report has, with its table when there is one, else a
/// note saying why not.
struct Kept<'a> {
    id: &'a str,
    title: &'a str,
    table: Option<&'a Table>,
    /// Before the table (HTML only).
    intro: &'a str,
    /// The folded table's line.
    what: &'a str,
    /// Instead of the table, in HTML and in Markdown.
    absent: [&'a str; 2],
}

/// Records that give no figure: symmetric context, skipped and failed
/// records, caveats, and emulated records.
fn records_apart(o: &Outline, r: &mut dyn Renderer) {
    let kept = [
        Kept {
            id: "symmetric",
            title: "Symmetric context",
            table: o.symmetric.as_ref(),
            intro: "Hashes and AEADs on the same machines, in megabytes (10<sup>6</sup> bytes) per second, for scale: symmetric primitives are not threatened by quantum computers beyond Grover's square-root speed-up.",
            what: "Every hash and AEAD measured",
            absent: [
                "No symmetric records in these files: hashes and AEADs are measured by the CPU sweep and give a sense of scale (how many bytes a PQC operation costs in hashing time).",
                "No symmetric records in these files.",
            ],
        },
        Kept {
            id: "appendix",
            title: "Appendix: skipped and failed records",
            table: o.appendix.as_ref(),
            intro: "Records that were not measured as fine: a failed correctness gate or run, or a backend that could not run here. None of them contributes a figure above.",
            what: "Every skipped and failed record",
            absent: [
                "Every record in these files was measured and passed its correctness gate.",
                "Every record was measured and passed its correctness gate.",
            ],
        },
    ];
    for k in kept {
        r.section(k.id, k.title);
        match k.table {
            Some(t) => {
                say(r, Style::Plain, &[html(k.intro)]);
                folded_table(r, k.what, t);
            }
            None => say(r, Style::Note, &[html(k.absent[0]), markdown(k.absent[1])]),
        }
    }
    if !o.caveats.is_empty() || !o.kat.is_empty() {
        r.section("caveats", "Caveats");
        say(
            r,
            Style::Plain,
            &[Span::Text("Figures whose code failed known-answer vectors, that are over the runs that finished, were measured while the GPU held its clocks down for power or heat, or were timed in windows that hold more than the work: the timer's own cost (a window close to its floor) or host time (a device-side hold that ended before the work was queued; a latency with no window free of it is refused).")],
        );
        let all: Vec<String> = o
            .kat
            .iter()
            .map(|k| k.long())
            .chain(o.caveats.iter().cloned())
            .collect();
        if all.len() > FOLD_ROWS {
            r.fold(&format!("Every caveat ({})", all.len()), false);
            r.list(&all);
            r.unfold();
        } else {
            r.list(&all);
        }
    }
    if let Some(t) = &o.emulated {
        r.section(
            "emulated",
            "Correctness on the CPU stand-in driver (emulated, not a GPU)",
        );
        say(
            r,
            Style::Plain,
            &[
                html("These records ran the project's GPU kernels through the real launch path on pqcprof's CPU stand-in CUDA driver, a test fixture. They prove correctness and the launch path only: their timings are of an emulation on the CPU, say nothing about any GPU, and appear in no figure, chart or comparison above."),
                markdown("These records ran the GPU kernels on pqcprof's CPU stand-in CUDA driver, a test fixture: correctness and the launch path only. Their timings say nothing about any GPU and appear in no figure above."),
            ],
        );
        folded_table(r, "Every emulated record", t);
    }
}
