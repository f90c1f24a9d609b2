//! Running groups of cases on a subject, every case or a sample.

use super::case::{Case, Group, GroupTally, Outcome, Plan, Report, Subject};
use std::collections::BTreeMap;

/// Every group of both sources, read (and decompressed) once a process:
/// a run that checks several implementations asks each the same cases.
pub fn all_groups() -> anyhow::Result<&'static [Group]> {
    static GROUPS: std::sync::OnceLock<Result<Vec<Group>, String>> = std::sync::OnceLock::new();
    let read = || -> anyhow::Result<Vec<Group>> {
        let mut g = super::acvp::groups()?;
        g.extend(super::wycheproof::groups()?);
        Ok(g)
    };
    match GROUPS.get_or_init(|| read().map_err(|e| format!("{e:#}"))) {
        Ok(g) => Ok(g),
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

/// Runs `groups` on `subject` by `plan`.
pub fn run<'a>(
    subject: &mut dyn Subject,
    groups: impl IntoIterator<Item = &'a Group>,
    plan: Plan,
) -> Report {
    let mut out = Vec::new();
    for g in groups {
        let mut order: Vec<&Case> = g.cases.iter().collect();
        if let Plan::Sample(_) = plan {
            order.sort_by_key(|c| !c.invalid);
        }
        order.truncate(plan.asks(order.len()));
        let mut t = GroupTally {
            source: g.source.to_string(),
            group: g.name.clone(),
            cases: g.cases.len(),
            ran: order.len(),
            passed: 0,
            failed: 0,
            not_applicable: BTreeMap::new(),
            failures: Vec::new(),
        };
        for c in order {
            match (c.run)(subject) {
                Outcome::Pass => t.passed += 1,
                Outcome::Fail(why) => {
                    t.failed += 1;
                    if t.failures.len() < 3 {
                        t.failures.push(format!("tcId {}: {why}", c.id));
                    }
                }
                Outcome::NotApplicable(why) => *t.not_applicable.entry(why).or_default() += 1,
            }
        }
        out.push(t);
    }
    Report {
        subject: subject.label(),
        plan: plan.describe(),
        groups: out,
    }
}
