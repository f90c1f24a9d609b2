//! One headline of the report's executive summary: a figure, a word, a
//! sentence and the records behind it, and the group of the summary it
//! belongs to. Made by [`crate::report::findings`] and
//! [`crate::report::batch_curves`].

use crate::report::model::SrcRef;

/// Where a finding belongs in the executive summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// PQC beats the classical algorithm of its level.
    PqcFaster,
    /// PQC costs more (time or bytes).
    PqcCosts,
    /// GPU over CPU.
    Gpu,
    /// Energy per operation.
    Energy,
    /// What the CPU figures alone say.
    Cpu,
}

impl Group {
    /// Heading of the group.
    pub fn title(self) -> &'static str {
        match self {
            Group::PqcFaster => "Where PQC is faster",
            Group::PqcCosts => "Where PQC costs more",
            Group::Gpu => "GPU over CPU",
            Group::Energy => "Energy per operation",
            Group::Cpu => "On the CPU",
        }
    }
}

/// One headline: a figure, a word, a sentence and the records behind it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Group it belongs to.
    pub group: Group,
    /// The headline figure: `7.6×`, `0.42 µJ`.
    pub figure: String,
    /// The word after it: `faster`, `larger`, `per op`.
    pub word: String,
    /// The sentence, in words.
    pub sentence: String,
    /// The figures behind it.
    pub detail: String,
    /// The figure's 95% interval (`95% CI 7.4×–7.8×`), or what the figure
    /// is when it has none (`ratio of medians, no runs to compare`).
    pub interval: Option<String>,
    /// Records used.
    pub sources: Vec<SrcRef>,
    /// The ratio of two records the figure is, where it is one.
    pub ratio: Option<crate::report::table::Marked>,
    /// Known-answer failures of the code behind the figure, when its
    /// records' code failed some: the mark the card carries.
    pub kat: Option<String>,
}
