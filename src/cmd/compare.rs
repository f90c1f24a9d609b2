//! `pqcprof compare`: its arguments, and the change in median throughput
//! of every record two run files share, printed as a table or JSON, with
//! the exit code a regression gate needs.

use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::exit;
use crate::core::units::printable;
use crate::report::{change, compare};
use clap::Args;
use std::path::PathBuf;

/// Options of `compare`.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The earlier run file (the baseline).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later run file.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Exit 3 on a record slower by more than PCT percent [default: 5]
    ///
    /// Exit with code 3 when a record is `slower` and its throughput
    /// dropped by more than PCT percent (0 or more), or a record that
    /// passed before no longer does.
    #[arg(long, value_name = "PCT", allow_negative_numbers = true, value_parser = fail_pct)]
    pub fail_above: Option<f64>,
    /// A change whose 95% interval lies within +-PCT is `same` [default: 1]
    ///
    /// A change whose 95% interval lies inside +-PCT percent is `same`;
    /// one straddling +-PCT is `unclear`. From 0 to below 100.
    #[arg(
        long,
        value_name = "PCT",
        default_value = "1",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = threshold_pct
    )]
    pub noise_threshold: f64,
    /// Print the comparison as JSON instead of the table
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
}

/// `--fail-above` when not given, percent.
pub const DEFAULT_FAIL_ABOVE: f64 = 5.0;

/// A number a user gave, written back as a person would type it: `4`,
/// `0.5`, `1e-300` (not three hundred zeros), `2.5e20`.
fn shown(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-4..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `--fail-above`: a percentage of 0 or more.
fn fail_pct(s: &str) -> Result<f64, String> {
    crate::core::bounded::number(s, 0.0, f64::MAX, "a percentage of 0 or more")
        .map_err(|_| "give a percentage of 0 or more, e.g. 5".to_string())
}

/// `--noise-threshold`: a percentage from 0 to below 100.
fn threshold_pct(s: &str) -> Result<f64, String> {
    match crate::core::bounded::number(s, 0.0, 100.0, "a percentage") {
        Ok(v) if v < 100.0 => Ok(v),
        _ => Err("give a percentage of 0 or more and below 100, e.g. 1".into()),
    }
}

/// `pqcprof compare OLD NEW`: exit 3 on a regression beyond `--fail-above`
/// (5% unless given), 1 when either file cannot be used.
pub fn compare(args: &CompareArgs) -> anyhow::Result<i32> {
    let fail_above = args.fail_above.unwrap_or(DEFAULT_FAIL_ABOVE);
    let t = args.noise_threshold;
    // Read each file on its own: comparing a file with itself (or a copy)
    // is allowed here, unlike in a report.
    let mut runs = vec![];
    for (path, label) in [(&args.old, "F1"), (&args.new, "F2")] {
        match crate::schema::load::read_run(path, label) {
            Ok((run, warnings)) => {
                for w in warnings {
                    log::warn!(
                        "{}: field `{}`: {}",
                        path.display(),
                        printable(&w.field),
                        printable(&w.message)
                    );
                }
                runs.push(run);
            }
            Err(e) => {
                let field = if e.field.is_empty() {
                    String::new()
                } else {
                    format!("field `{}`: ", printable(&e.field))
                };
                log::warn!(
                    "{}: left out: {field}{}",
                    path.display(),
                    printable(&e.message)
                );
            }
        }
    }
    if runs.len() != 2 {
        log::error!("compare needs both files to be usable run files");
        return Ok(exit::ERROR);
    }
    let (old, new) = (&runs[0], &runs[1]);
    let lines = change::compare(old, new, t / 100.0);
    let emulated = [old, new]
        .iter()
        .map(|r| r.records.iter().filter(|(_, r)| r.emulated).count())
        .sum::<usize>();
    // Records both files hold: without one, nothing was compared, and a
    // record only in the old file is no regression of the new one.
    let shared = lines
        .iter()
        .filter(|l| l.old_index.is_some() && l.new_index.is_some())
        .count();
    let regressions = lines
        .iter()
        .filter(|l| shared > 0 && change::is_regression(l, fail_above))
        .count();
    let matched = lines
        .iter()
        .filter(|l| matches!(l.change, change::Change::Measured(_)))
        .count();
    if args.json {
        let mut v = compare::to_json(old, new, &lines, t, fail_above);
        v["compared"] = matched.into();
        v["emulated_left_out"] = emulated.into();
        v["regressions"] = regressions.into();
        v["shared"] = shared.into();
        // serde_json escapes every control character in the strings.
        stdout::println(serde_json::to_string_pretty(&v)?)?;
    } else {
        // Every string in the table comes from the files: printed escaped.
        if shared > 0 {
            stdout::print(printable(&compare::render(old, new, &lines, fail_above)))?;
        } else {
            stdout::println(format!(
                "The files share no record (old: {}, new: {}): no verdict.",
                old.records.len(),
                new.records.len()
            ))?;
        }
        if emulated > 0 {
            stdout::println(format!("{emulated} record(s) made on pqcprof's CPU stand-in driver (emulated, not a GPU) left out: they are no speed measurements"))?;
        }
        stdout::println(format!("{matched} record(s) compared."))?;
    }
    let duplicates = lines
        .iter()
        .filter(|l| matches!(l.change, change::Change::Duplicate(_)))
        .count();
    if duplicates > 0 {
        log::warn!("{duplicates} record(s) share their key (backend, threads, algorithm, operation, mode, batch) with another record of the same file: not compared");
    }
    let unlike = lines
        .iter()
        .filter(|l| matches!(l.change, change::Change::NotComparable(_)))
        .count();
    if unlike > 0 {
        log::warn!("{unlike} record(s) not compared: the two files measured them differently (mode, batches or a timed window, what the window holds, or the batch); each is named in the table");
    }
    for l in &lines {
        if let change::Change::Inconsistent(why) = &l.change {
            log::warn!(
                "{} {} {} batch {}: left out, not compared: {}",
                printable(&l.key.backend),
                printable(&l.key.algorithm),
                l.key.operation.cli_name(),
                l.batch,
                printable(why)
            );
        }
    }
    if regressions > 0 {
        log::error!(
            "{regressions} regression(s): slower by more than {}%, failing, missing, or not comparable",
            shown(fail_above)
        );
        return Ok(exit::SOME_FAILED);
    }
    if matched == 0 {
        // A gate that compared nothing has not passed.
        log::error!(
            "no measured record of {} matches one of {} (same backend, threads, algorithm, operation, mode and batch), so nothing was compared{}{}",
            args.old.display(),
            args.new.display(),
            if unlike > 0 {
                format!(" ({unlike} measured differently, not comparable)")
            } else {
                String::new()
            },
            match args.fail_above {
                Some(p) => format!("; --fail-above {} cannot pass on zero records", shown(p)),
                None => String::new(),
            }
        );
        return Ok(if args.fail_above.is_some() {
            exit::SOME_FAILED
        } else {
            exit::ERROR
        });
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_shown_as_typed() {
        use super::shown;
        assert_eq!(shown(4.0), "4");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(2.5e20), "2.5e20");
        assert_eq!(shown(0.0), "0");
    }
}
