//! `compare OLD NEW` written out: the comparison of two runs
//! ([`super::change::compare`]) as a text table or as JSON.

use crate::core::units;
use crate::report::change::{is_regression, rounded, Change, Line};
use crate::schema::load::LoadedRun;
use crate::schema::record::Mode;

/// The mode as the run file spells it.
fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Throughput => "throughput",
        Mode::Latency => "latency",
    }
}

/// A change as printed: `+4.2%`, to the nearest tenth of a percent.
fn change_text(change: f64) -> String {
    units::pct(rounded(change * 100.0, 1, 0) / 100.0)
}

/// A change interval as text, `[-10.4%, -9.6%]`, rounded outwards to the
/// tenth of a percent the change is printed to, so the change printed
/// always lies inside it.
fn interval_text(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([low, high]) => format!(
            "[{}, {}]",
            units::pct(rounded(low * 100.0, 1, -1) / 100.0),
            units::pct(rounded(high * 100.0, 1, 1) / 100.0)
        ),
        None => format!("n/a (< {} runs)", crate::analyse::estimate::MIN_RUNS),
    }
}

/// Which of the two runs (`old`, `new`) was made on a busy machine, and
/// why: its intervals cover the noise within the run, not a load that
/// came or went between the two.
fn busy_runs(old: &LoadedRun, new: &LoadedRun) -> Vec<(&'static str, String)> {
    [("old", old), ("new", new)]
        .into_iter()
        .filter_map(|(which, run)| Some((which, run.metadata.machine_load.as_ref()?.busy()?)))
        .collect()
}

/// The comparison as a text table; `fail_above` is the regression
/// threshold in percent.
pub fn render(old: &LoadedRun, new: &LoadedRun, lines: &[Line], fail_above: f64) -> String {
    let mut s = format!(
        "old: {} ({}, {})\nnew: {} ({}, {})\n\n",
        old.path.display(),
        old.metadata.hostname,
        old.metadata.date,
        new.path.display(),
        new.metadata.hostname,
        new.metadata.date
    );
    for (which, why) in busy_runs(old, new) {
        s += &format!(
            "caution: the {which} run was made on a busy machine ({why}): a change may be the machine's load, not the code's\n"
        );
    }
    if !busy_runs(old, new).is_empty() {
        s += "\n";
    }
    s += &format!(
        "{:<12} {:>3}  {:<14} {:<7} {:<10} {:>14} {:>14} {:>9}  {:<18} {}\n",
        "backend",
        "thr",
        "algorithm",
        "op",
        "mode",
        "old ops/s",
        "new ops/s",
        "change",
        "change CI95",
        "verdict"
    );
    for l in lines {
        let (old_v, new_v, ch, ci, verdict) = cells(l, fail_above);
        s += &format!(
            "{:<12} {:>3}  {:<14} {:<7} {:<10} {:>14} {:>14} {:>9}  {:<18} {}\n",
            l.key.backend,
            l.key.threads,
            l.key.algorithm,
            l.key.operation.cli_name(),
            format!(
                "{}{}",
                mode_name(l.key.mode),
                if l.key.cold { " (cold L2)" } else { "" }
            ),
            old_v,
            new_v,
            ch,
            ci,
            verdict
        );
    }
    s
}

/// The cells of one line after its key: old and new ops/s, change, its
/// interval, verdict.
fn cells(l: &Line, fail_above: f64) -> (String, String, String, String, String) {
    match &l.change {
        Change::Measured(m) => {
            let mut verdict = m.verdict.name().to_string();
            if is_regression(l, fail_above) {
                verdict += &format!(": REGRESSION, more than {fail_above}% slower");
            }
            (
                units::grouped(m.old),
                units::grouped(m.new),
                change_text(m.change),
                interval_text(m.change_ci95),
                verdict,
            )
        }
        Change::NowFailing(r) => (
            "ok".into(),
            "not ok".into(),
            "–".into(),
            String::new(),
            format!("REGRESSION: now fails or is skipped: {r}"),
        ),
        Change::OldNotOk => (
            "not ok".into(),
            "–".into(),
            "–".into(),
            String::new(),
            "not ok in the old file; not compared".into(),
        ),
        Change::Gone => (
            "–".into(),
            "missing".into(),
            "–".into(),
            String::new(),
            "only in the old file".into(),
        ),
        Change::Lost => (
            "ok".into(),
            "missing".into(),
            "–".into(),
            String::new(),
            "REGRESSION: passed in the old file, missing from the new one".into(),
        ),
        Change::Duplicate(which) => (
            "–".into(),
            "–".into(),
            "–".into(),
            String::new(),
            format!(
                "NOT COMPARED: several records with this key and batch {} in {which}",
                l.batch
            ),
        ),
        Change::Added => (
            "missing".into(),
            "–".into(),
            "–".into(),
            String::new(),
            "only in the new file".into(),
        ),
        Change::Inconsistent(why) => (
            "–".into(),
            "–".into(),
            "–".into(),
            String::new(),
            format!("LEFT OUT: {why}"),
        ),
        Change::NotComparable(why) => (
            "–".into(),
            "–".into(),
            "–".into(),
            String::new(),
            format!("NOT COMPARABLE: {why}"),
        ),
    }
}

/// What a line's outcome is called in the JSON form.
fn outcome_name(change: &Change) -> &'static str {
    match change {
        Change::Measured(_) => "measured",
        Change::NowFailing(_) => "now_failing",
        Change::OldNotOk => "old_not_ok",
        Change::Gone => "gone",
        Change::Lost => "lost",
        Change::Duplicate(_) => "duplicate",
        Change::Added => "added",
        Change::Inconsistent(_) => "inconsistent",
        Change::NotComparable(_) => "not_comparable",
    }
}

/// The comparison as JSON (`compare --json`): one object per line with its
/// key, outcome and, for a measured record, `change`, `change_ci95`
/// (`[low, high]` of new / old - 1), `verdict` and both records' noise.
pub fn to_json(
    old: &LoadedRun,
    new: &LoadedRun,
    lines: &[Line],
    threshold_pct: f64,
    fail_above: f64,
) -> serde_json::Value {
    use serde_json::json;
    let records: Vec<_> = lines
        .iter()
        .map(|l| {
            let mut v = json!({
                "backend": l.key.backend,
                "threads": l.key.threads,
                "algorithm": l.key.algorithm,
                "operation": l.key.operation.cli_name(),
                "mode": l.key.mode,
                "cache": if l.key.cold { "cold" } else { "warm" },
                "batch": l.batch,
                "new_batch": l.new_batch,
                "old_index": l.old_index,
                "new_index": l.new_index,
                "outcome": outcome_name(&l.change),
                "regression": is_regression(l, fail_above),
            });
            match &l.change {
                Change::Measured(m) => {
                    v["old_ops_per_sec"] = json!(m.old);
                    v["new_ops_per_sec"] = json!(m.new);
                    v["change"] = json!(m.change);
                    v["change_ci95"] = json!(m.change_ci95);
                    v["verdict"] = json!(m.verdict.name());
                    v["old_noise"] = json!(m.old_noise);
                    v["new_noise"] = json!(m.new_noise);
                }
                Change::NowFailing(reason) => v["reason"] = json!(reason),
                Change::Duplicate(which) => v["duplicate_in"] = json!(which),
                Change::Inconsistent(why) => v["left_out"] = json!(why),
                Change::NotComparable(why) => v["not_comparable"] = json!(why),
                _ => {}
            }
            v
        })
        .collect();
    json!({
        "old": old.path.display().to_string(),
        "new": new.path.display().to_string(),
        "noise_threshold_pct": threshold_pct,
        "fail_above_pct": fail_above,
        "change_method": crate::analyse::estimate::RATIO_METHOD,
        "noise": "half-width of the median's distribution-free 95% interval over the median, per-run throughput",
        "busy": busy_runs(old, new).into_iter().map(|(w, why)| json!({"run": w, "why": why})).collect::<Vec<_>>(),
        "records": records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::change::compare;
    use crate::report::model::test_records::{loaded, ok_record};

    #[test]
    fn the_table_and_the_json_say_each_record_and_its_outcome() {
        let rec = |ops, cache: &str| {
            let mut r = ok_record(true, ops, 64);
            r.cache = Some(cache.into());
            r
        };
        let (old, new) = (
            loaded(vec![rec(1e6, "warm"), rec(2e5, "cold")]),
            loaded(vec![rec(1e6, "warm")]),
        );
        let lines = compare(&old, &new, 0.01);
        let text = render(&old, &new, &lines, 5.0);
        assert!(text.starts_with("old: "), "{text}");
        assert!(
            text.contains("change CI95") && text.contains("verdict"),
            "{text}"
        );
        let v = to_json(&old, &new, &lines, 1.0, 5.0);
        assert_eq!(v["fail_above_pct"], 5.0);
        let outcomes: Vec<(&str, &str, bool)> = v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["cache"].as_str().unwrap(),
                    r["outcome"].as_str().unwrap(),
                    r["regression"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            outcomes,
            [("warm", "measured", false), ("cold", "lost", true)],
            "{v:#}"
        );
        assert_eq!(outcome_name(&Change::Added), "added");
    }
}
