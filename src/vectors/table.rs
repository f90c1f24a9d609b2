//! The vector tally as a text table, and the per-suite summary a run file
//! keeps.

use super::case::{Report, Subject};
use std::collections::BTreeMap;
use std::fmt::Write;

pub use crate::schema::vectors::SuiteResult;

/// Per source: the summary of a report.
pub fn suites(r: &Report) -> Vec<SuiteResult> {
    let mut by: BTreeMap<&str, SuiteResult> = BTreeMap::new();
    for g in &r.groups {
        let e = by.entry(g.source.as_str()).or_insert_with(|| SuiteResult {
            source: g.source.clone(),
            version: match g.source.as_str() {
                "ACVP" => super::acvp::VERSION.to_string(),
                super::plugin::ROUND_TRIP_SOURCE => super::plugin::ROUND_TRIP_VERSION.to_string(),
                _ => super::wycheproof::VERSION.to_string(),
            },
            cases: 0,
            passed: 0,
            failed: 0,
            not_applicable: 0,
        });
        e.cases += g.ran;
        e.passed += g.passed;
        e.failed += g.failed;
        e.not_applicable += g.na();
    }
    by.into_values().collect()
}

/// The report as a text table: one row per group, totals, the reasons for
/// "not applicable" and the first failures.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Vectors on {} ({})", r.subject, r.plan);
    let w = r
        .groups
        .iter()
        .map(|g| g.group.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        s,
        "  {:<10}  {:<w$}  {:>5}  {:>6}  {:>6}  {:>4}",
        "source", "group", "cases", "passed", "failed", "n/a"
    );
    for g in &r.groups {
        let _ = writeln!(
            s,
            "  {:<10}  {:<w$}  {:>5}  {:>6}  {:>6}  {:>4}{}",
            g.source,
            g.group,
            g.ran,
            g.passed,
            g.failed,
            g.na(),
            if g.ran < g.cases {
                format!("  (of {})", g.cases)
            } else {
                String::new()
            }
        );
    }
    let (cases, passed, failed, na) = r.totals();
    let _ = writeln!(
        s,
        "  {:<10}  {:<w$}  {cases:>5}  {passed:>6}  {failed:>6}  {na:>4}",
        "total", ""
    );
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &r.groups {
        for (why, n) in &g.not_applicable {
            *reasons.entry(why).or_default() += n;
        }
    }
    for (why, n) in reasons {
        let _ = writeln!(s, "  n/a {n:>5}: {why}");
    }
    for g in r.groups.iter().filter(|g| g.failed > 0) {
        for f in &g.failures {
            let _ = writeln!(s, "  FAILED {} {}: {f}", g.source, g.group);
        }
    }
    s
}

/// Runs every group on `subject`: the report, or why the vectors could not
/// be read.
pub fn run_all(subject: &mut dyn Subject, plan: super::case::Plan) -> anyhow::Result<Report> {
    let groups = super::runner::all_groups()?;
    Ok(super::runner::run(subject, groups, plan))
}
