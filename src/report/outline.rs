//! What the report shows, section by section, computed once: the
//! [`document`] walk sets it in order with its prose, for [`html`] and
//! [`markdown`] to render.
//!
//! [`document`]: crate::report::render::document
//! [`html`]: crate::report::render::html
//! [`markdown`]: crate::report::render::markdown

use crate::report::findings::Analysis;

use crate::core::catalog::Kind;
use crate::report::headline::{Finding, Group};
use crate::report::model::Dataset;
use crate::report::sections;
use crate::report::summary::{context_line, counts, file_summary, metadata_rows};
use crate::report::table::Table;
use crate::schema::load::LoadSet;

/// A table under its own sub-heading.
pub struct Headed {
    /// The sub-heading (plain text, no markup).
    pub heading: &'static str,
    /// The table; never empty.
    pub table: Table,
}

/// The findings of one group, in the order the analysis gave them.
pub struct FindingGroup<'r> {
    /// The group.
    pub group: Group,
    /// Its findings.
    pub findings: Vec<&'r Finding>,
}

/// One file's metadata.
pub struct RunCard<'r> {
    /// `F1`, `F2`, ...
    pub label: &'r str,
    /// The file's name.
    pub file_name: &'r str,
    /// `(name, value)` rows.
    pub rows: Vec<(String, String)>,
}

/// Every section's content, in report order.
pub struct Outline<'r> {
    /// `12 measured records (...) across 2 run files from vm.`
    pub file_summary: String,
    /// Input problems, one sentence each.
    pub problems: Vec<String>,
    /// The machines and software.
    pub context: String,
    /// Headline findings by group.
    pub findings: Vec<FindingGroup<'r>>,
    /// What these files lack for the summary's comparisons, each with what
    /// to add (empty when nothing is missing).
    pub missing: Vec<&'static str>,
    /// A sentence about GPU records (or their absence).
    pub gpu_note: &'r str,
    /// Where no GPU was measured, the first screen's one line saying so
    /// and how to measure one.
    pub gpu_answer: Option<String>,
    /// Each backend's known-answer failures, once per file.
    pub kat: Vec<crate::report::model::KatMark>,
    /// The caveats in short, for the first screen.
    pub first_caveats: Vec<String>,
    /// The charts, in order.
    pub charts: Vec<crate::report::render::charts::Chart>,
    /// What could not be charted, one sentence each.
    pub chart_notes: Vec<String>,
    /// Sentences about missing PQC-against-classical pairs.
    pub pair_notes: &'r [String],
    /// PQC against classical, one table per kind that has pairs.
    pub pairs: Vec<Headed>,
    /// GPU against CPU, when there are GPU rows.
    pub gpu: Option<Table>,
    /// Throughput, one table per kind that has records.
    pub throughput: Vec<Headed>,
    /// Latency of single operations, when there are latency records.
    pub latency: Option<Headed>,
    /// Our GPU kernels' launch and resources, when a record has them.
    pub kernels: Option<Headed>,
    /// Kernel variants side by side, when one operation ran with several.
    pub variants: Option<Headed>,
    /// ML-KEM and ML-DSA implementations side by side on the CPU, when
    /// one operation was measured with several.
    pub implementations: Option<Headed>,
    /// Records measured with a cold L2, beside their warm twins, when
    /// there are any.
    pub cold: Option<Headed>,
    /// Saturation and break-even batches, when an operation was measured
    /// at two batch sizes or more.
    pub scaling: Option<Headed>,
    /// The clusters merged files came from, one sentence each (empty
    /// without a merged file).
    pub cluster: Vec<String>,
    /// Their ranks.
    pub ranks: Option<Table>,
    /// Each device's or rank's own throughput, where several took part.
    pub devices: Option<Headed>,
    /// Totals over devices and ranks.
    pub aggregates: Option<Headed>,
    /// What batched requests waited, when a file is an offload run.
    pub offload: Option<crate::report::offload::OffloadSection>,
    /// Each hybrid's cost over its PQC component, when there are any.
    pub hybrid: Option<Table>,
    /// Other tools' published figures beside this report's, when files
    /// were imported.
    pub beside: Option<Table>,
    /// One sentence per imported file.
    pub imported: Vec<String>,
    /// Key, ciphertext and signature sizes.
    pub sizes: Table,
    /// Symmetric primitives, when there are any.
    pub symmetric: Option<Table>,
    /// Skipped and failed records, when there are any.
    pub appendix: Option<Table>,
    /// Records whose runs were cut short or throttled, one sentence each.
    pub caveats: Vec<String>,
    /// Records made on pqcprof's CPU stand-in CUDA driver, when there are
    /// any: correctness only.
    pub emulated: Option<Table>,
    /// The standards.
    pub standards: Table,
    /// Each file's metadata.
    pub runs: Vec<RunCard<'r>>,
}

/// `Some` for a table with rows.
fn rows(table: Table) -> Option<Table> {
    (!table.is_empty()).then_some(table)
}

/// A table under `heading`, when it has rows.
fn headed(heading: &'static str, table: Table) -> Option<Headed> {
    rows(table).map(|table| Headed { heading, table })
}

/// The findings by group, groups in the order the analysis gave them.
fn finding_groups<'a>(an: &'a Analysis<'a>) -> Vec<FindingGroup<'a>> {
    let mut groups: Vec<Group> = an.findings.iter().map(|f| f.group).collect();
    groups.dedup();
    groups
        .into_iter()
        .map(|group| FindingGroup {
            group,
            findings: an.findings.iter().filter(|f| f.group == group).collect(),
        })
        .collect()
}

/// What the files lack for the summary's comparisons, each with what to add.
fn missing(an: &Analysis) -> Vec<&'static str> {
    let mut missing = vec![];
    if an.pairs.is_empty() {
        missing.push("classical baselines (ECDH, X25519, ECDSA, RSA), so no PQC-against-classical ratios; add a run file from `pqcprof sweep`");
    }
    if an.gpu.is_empty() {
        missing.push("GPU records, so no GPU-over-CPU speed-up or energy per operation; add a run file from a machine with a ready GPU");
    }
    missing
}

impl<'r> Outline<'r> {
    /// Computes every section from the loaded files and their analysis.
    pub fn new(set: &'r LoadSet, ds: &'r Dataset, an: &'r Analysis) -> Self {
        let pairs = [
            (Kind::Kem, "ML-KEM against ECDH and X25519/X448"),
            (Kind::Signature, "ML-DSA against ECDSA, RSA and EdDSA"),
        ]
        .into_iter()
        .filter_map(|(kind, heading)| {
            headed(
                heading,
                crate::report::comparison_tables::pairs_table(&an.pairs, kind),
            )
        })
        .collect();
        let throughput = [
            (Kind::Kem, "Key encapsulation and key exchange"),
            (Kind::Signature, "Signatures"),
        ]
        .into_iter()
        .filter_map(|(kind, heading)| headed(heading, sections::throughput_table(ds, kind)))
        .collect();
        let offload = crate::report::offload::section(ds);
        let caveats = crate::report::caveats::caveats(ds);
        let kat = crate::report::model::kat_failures(ds);
        let charts: Vec<crate::report::render::charts::Chart> =
            crate::report::render::charts::throughput_charts(ds)
                .into_iter()
                .chain(crate::report::render::charts::latency_chart(ds))
                .chain(crate::report::render::charts::batch_charts(ds))
                .chain(crate::report::render::charts::sizes_chart(ds))
                .collect();
        let mut chart_notes = vec![];
        if crate::report::render::charts::latency_chart(ds).is_none() {
            chart_notes.push("No latency records (they come from runs with `--latency`).".into());
        }
        if crate::report::render::charts::batch_charts(ds).is_empty() {
            chart_notes.push("Each operation was measured at one batch size only, so there is no throughput-against-batch chart.".into());
        }
        Outline {
            gpu_answer: an.gpu_answer.clone(),
            first_caveats: crate::report::caveats::first_screen(ds, &caveats, offload.as_ref()),
            kat,
            charts,
            chart_notes,
            file_summary: file_summary(ds, &counts(ds)),
            problems: set.problems.iter().map(|p| p.to_string()).collect(),
            context: context_line(ds),
            findings: finding_groups(an),
            missing: missing(an),
            gpu_note: &an.gpu_note,
            pair_notes: &an.pair_notes,
            pairs,
            gpu: rows(crate::report::comparison_tables::gpu_table(an)),
            throughput,
            latency: headed("Latency of single operations", sections::latency_table(ds)),
            kernels: headed(
                "GPU kernels: launch and resources",
                sections::kernels_table(ds),
            ),
            variants: headed("Kernel variants side by side", sections::variants_table(ds)),
            implementations: headed(
                "ML-KEM and ML-DSA implementations on the CPU",
                crate::report::implementations::implementations_table(ds),
            ),
            cold: headed(
                "Cold L2: inputs evicted before each run",
                crate::report::cold::cold_table(ds),
            ),
            scaling: headed(
                "Saturation and break-even batches",
                crate::report::batch_curves::scaling_table(&crate::report::batch_curves::curves(
                    ds,
                )),
            ),
            cluster: crate::report::cluster_sections::cluster_notes(ds),
            ranks: rows(crate::report::cluster_sections::ranks_table(ds)),
            devices: headed(
                "Each device and rank",
                crate::report::cluster_sections::devices_table(ds),
            ),
            aggregates: headed(
                "Totals over devices and ranks",
                crate::report::cluster_sections::aggregates_table(ds),
            ),
            offload,
            hybrid: rows(sections::hybrid_table(ds)),
            beside: rows(crate::report::beside::beside_table(ds, &set.imported)),
            imported: crate::report::beside::import_notes(&set.imported),
            sizes: sections::sizes_table(ds),
            symmetric: rows(crate::report::reference_tables::symmetric_table(ds)),
            appendix: rows(crate::report::reference_tables::appendix_table(ds)),
            caveats,
            emulated: rows(crate::report::reference_tables::emulated_table(ds)),
            standards: crate::report::reference_tables::standards_table(ds),
            runs: ds
                .runs
                .iter()
                .map(|run| RunCard {
                    label: &run.label,
                    file_name: &run.file_name,
                    rows: metadata_rows(run),
                })
                .collect(),
        }
    }
}
