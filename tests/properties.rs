//! Property tests over the option space of `offload`, `plan` and
//! `compare`, and over the batcher and the planner: whatever the values,
//! a command either runs and its figures hold together (percentiles in
//! order, no more served than offered, no NaN written) or refuses with
//! exit 1 or 2; never a panic. Library functions are called, not the
//! binary, so a few hundred cases take seconds.

mod common;

use clap::Parser;
use pqcprof::cmd::cli::{Cli, Command};
use pqcprof::core::bounded;
use pqcprof::offload::arrivals::Arrivals;
use pqcprof::offload::batcher::{self, Policy};
use pqcprof::offload::curve::{Curve, Handoff};
use pqcprof::offload::planner::Planner;
use pqcprof::offload::request::Rates;
use pqcprof::schema::offload::{Percentiles, Point};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Numbers as a hostile user writes them: ordinary, at and past every
/// bound, not finite, not numbers.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0", "-1", "0.001", "0.01", "0.05", "1", "4", "8", "64", "100", "4096", "4097", "3600",
            "3601", "60000", "1e7", "1e8", "1e9", "1e308", "-1e308", "5e-324", "inf", "-inf",
            "NaN", "auto", "", "1.5", "0x10", "1_000", " 7 ",
        ])
        .prop_map(str::to_string),
        (-1e12f64..1e12).prop_map(|v| v.to_string()),
        (0u64..100_000).prop_map(|v| v.to_string()),
    ]
}

/// One option of `offload` or `plan` with a value.
fn option(names: &'static [&'static str]) -> impl Strategy<Value = (String, String)> {
    (prop::sample::select(names), number_text()).prop_map(|(n, v)| (n.to_string(), v))
}

const OFFLOAD_NUMBERS: &[&str] = &[
    "--rate",
    "--window",
    "--max-batch",
    "--max-wait",
    "--batch-top",
    "--queue-limit",
    "--deadline",
    "--workers",
    "--seed",
    "--message-size",
];

fn argv(cmd: &[&str], options: &[(String, String)]) -> Vec<String> {
    let mut v: Vec<String> = ["pqcprof"]
        .iter()
        .chain(cmd)
        .map(|s| s.to_string())
        .collect();
    for (n, val) in options {
        v.push(format!("{n}={val}"));
    }
    v
}

fn ordered(p: &Percentiles) -> bool {
    let v = [p.p50, p.p90, p.p99, p.p999, p.max];
    v.iter().all(|x| x.is_finite() && *x >= 0.0) && v.windows(2).all(|w| w[0] <= w[1])
}

/// Every figure of a point finite and in order, no more requests than
/// arrived, and no NaN (a `null` in a figure) in its JSON.
fn check_point(p: &Point, arrived: usize) -> Result<(), TestCaseError> {
    for q in [&p.waits.latency_ms, &p.waits.queue_ms, &p.waits.service_ms] {
        prop_assert!(ordered(q), "{q:?}");
    }
    prop_assert!(p.requests + p.dropped as usize <= arrived, "{p:?}");
    let served: u64 = p.waits.batch_sizes.iter().map(|(b, n)| *b as u64 * n).sum();
    prop_assert_eq!(served, p.requests as u64);
    prop_assert!(p
        .waits
        .batch_sizes
        .keys()
        .all(|b| *b >= 1 && *b <= p.max_batch.max(1)));
    let text = serde_json::to_string(p).unwrap();
    prop_assert!(!text.contains("NaN") && !text.contains(":null"), "{text}");
    Ok(())
}

/// Batch times rising with the batch: `fixed` seconds plus `per` per
/// request.
fn curve(fixed: f64, per: f64, top: usize) -> Curve {
    let points: Vec<(usize, f64)> = (0..)
        .map(|k| 1usize << k)
        .take_while(|b| *b <= top)
        .map(|b| (b, fixed + per * b as f64))
        .collect();
    Curve {
        spread: points.iter().map(|_| vec![]).collect(),
        points,
        cpu: true,
        basis: "a test curve",
        handoff: Handoff::default(),
        contended: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any combination of `offload`'s numbers is either refused (clap's
    /// usage error, 2; or a message, 1 or 2) or gives settings every later
    /// stage can hold: a point's requests within the memory bound.
    #[test]
    fn offload_options_are_bounded_or_refused(
        options in prop::collection::vec(option(OFFLOAD_NUMBERS), 0..5)
    ) {
        let mut all = vec![("--rate".to_string(), "100".to_string())];
        all.extend(options);
        let args = argv(&["offload", "--alg", "ML-KEM-768", "--op", "encaps"], &all);
        let cli = match Cli::try_parse_from(&args) {
            Ok(c) => c,
            Err(e) => {
                prop_assert!(matches!(e.exit_code(), 2), "{args:?}: {e}");
                return Ok(());
            }
        };
        let Command::Offload(a) = cli.command else { unreachable!() };
        match pqcprof::cmd::offload::settings(&a) {
            Err(e) => {
                let msg = format!("{e:#}");
                prop_assert!(!msg.is_empty() && msg.lines().count() <= 3, "{msg}");
            }
            Ok(s) => {
                prop_assert!((bounded::WINDOW_MIN..=bounded::WINDOW_MAX).contains(&s.window));
                if let Rates::One(arr) = &s.rates {
                    prop_assert!(bounded::requests_per_point(arr.rate(), s.window).is_ok());
                }
                if let Some(p) = s.batching.fixed {
                    prop_assert!(p.max_batch >= 1 && p.max_wait.is_finite());
                    prop_assert!(bounded::duration(p.max_wait, "wait").is_ok());
                }
                if let Some(d) = s.deadline {
                    prop_assert!(bounded::duration(d, "deadline").is_ok());
                }
            }
        }
    }

    /// `plan`'s numbers: refused by the parser, or in their bounds.
    #[test]
    fn plan_options_are_bounded_or_refused(
        options in prop::collection::vec(option(&["--rate", "--max-batch", "--max-wait", "--workers", "--batch-top", "--handoff-ms"]), 0..4)
    ) {
        let args = argv(&["plan", "--alg", "ML-KEM-768", "--op", "encaps"], &options);
        match Cli::try_parse_from(&args) {
            Err(e) => prop_assert_eq!(e.exit_code(), 2, "{:?}: {}", args, e),
            Ok(cli) => {
                let Command::Plan(p) = cli.command else { unreachable!() };
                if let Some(r) = p.rate {
                    prop_assert!((bounded::RATE_MIN..=bounded::RATE_MAX).contains(&r));
                }
                prop_assert!(p.load.options().policy(4096, "top").is_ok()
                    || p.load.max_batch == "auto" || p.load.max_wait == "auto");
            }
        }
    }

    /// The batcher: every arrival served or dropped, each after it
    /// arrived, in batches no larger than the policy's.
    #[test]
    fn the_batcher_serves_every_arrival_in_order(
        gaps in prop::collection::vec(0.0f64..0.01, 1..300),
        max_batch in 1usize..64,
        wait_ms in 0.0f64..20.0,
        workers in 1usize..5,
        limit in prop::option::of(64usize..200),
        fixed in 1e-6f64..1e-2,
        per in 0.0f64..1e-3,
    ) {
        let mut t = 0.0;
        let arrivals: Vec<f64> = gaps.iter().map(|g| { t += g; t }).collect();
        let policy = Policy { max_batch, max_wait: wait_ms / 1e3 };
        let (served, dropped) = batcher::simulate_limited(
            &arrivals, policy, workers, limit, 0.0, &mut |n, _| fixed + per * n as f64,
        );
        prop_assert_eq!(served.len() + dropped, arrivals.len());
        for s in &served {
            prop_assert!(s.arrival <= s.dispatch && s.dispatch < s.done, "{s:?}");
            prop_assert!(s.batch >= 1 && s.batch <= max_batch);
        }
        let _ = batcher::saturated(&served, policy.max_wait);
        if served.len() >= 2 {
            let window = arrivals.last().copied().unwrap_or(0.0);
            let rate = batcher::achieved_rate(&served, window);
            prop_assert!(!rate.is_nan());
            prop_assert!(rate <= arrivals.len() as f64 / window * (1.0 + 1e-12));
        }
    }

}

proptest! {
    // The planner simulates thousands of requests per case (and `auto`
    // tries every candidate batching): fewer cases keep this to seconds.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The planner at any bounded rate and batching, fixed or chosen:
    /// percentiles in order, nothing served that did not arrive, no NaN.
    #[test]
    fn the_planner_predicts_ordered_finite_figures(
        rate_text in number_text(),
        max_batch in 1usize..=16,
        wait_ms in 0.0f64..10.0,
        workers in 1usize..4,
        limit in prop::option::of(16usize..64),
        fixed in 1e-5f64..1e-3,
        per in 1e-6f64..1e-4,
        uniform in any::<bool>(),
        auto in any::<bool>(),
    ) {
        let Ok(rate) = bounded::rate(&rate_text) else { return Ok(()) };
        // Keep each case small: the planner simulates thousands of requests.
        let rate = rate.min(2e5);
        let c = curve(fixed, per, 16);
        let model = Planner { backend: "test", curve: &c, workers, queue_limit: limit };
        let a = if uniform { Arrivals::Uniform { rate } } else { Arrivals::Poisson { rate, seed: 3 } };
        let p = if auto {
            model.best(&a, None)
        } else {
            model.predict(&a, Policy { max_batch, max_wait: wait_ms / 1e3 }, None)
        };
        // The planner simulates at most this many arrivals.
        check_point(&p, usize::MAX)?;
        prop_assert!(p.offered_rate.is_finite() && p.offered_rate > 0.0);
    }
}

/// A real run file's records, edited by the strategy below and compared:
/// `compare` exits 0, 1 or 3 and never panics; with no record shared it
/// is never 3 unless a gate was asked for.
#[test]
fn compare_over_edited_run_files_never_panics_and_nothing_shared_is_no_regression() {
    let d = tempfile::tempdir().unwrap();
    let base = common::read_json(&common::tiny_run(d.path()));
    let edit = (
        prop::sample::select(vec!["liboqs-cpu", "elsewhere"]),
        prop::sample::select(vec![1e-300, 0.5, 1.0, 2.0, 1e300, f64::MAX]),
        prop::sample::select(vec![1e-300, 1.0, 1e300]),
        prop::sample::select(vec![0usize, 1, 2, 1000]),
        any::<bool>(),
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    });
    let n = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&(edit.clone(), edit), |(o, nw)| {
            let k = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let file =
                |name: &str, (backend, ops, secs, batch, fail): (&str, f64, f64, usize, bool)| {
                    let mut v: Value = base.clone();
                    for r in v["records"].as_array_mut().unwrap() {
                        r["backend"] = json!(backend);
                        let ops = r["ops_per_sec"].as_f64().unwrap() * ops;
                        r["ops_per_sec"] = json!(ops);
                        let s: Vec<f64> = r["run_seconds"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap() * secs)
                            .collect();
                        r["run_seconds"] = json!(s);
                        r["batch"] = json!(batch);
                        if fail {
                            r["status"] = json!("failed");
                        }
                    }
                    let p = d.path().join(format!("{name}-{k}.json"));
                    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
                    p
                };
            let (old, new) = (file("old", o), file("new", nw));
            let args = pqcprof::cmd::compare::CompareArgs {
                old,
                new,
                fail_above: None,
                noise_threshold: 1.0,
                json: true,
            };
            let code = pqcprof::cmd::compare::compare(&args).unwrap_or(1);
            prop_assert!([0, 1, 3].contains(&code), "{code}");
            if o.0 != nw.0 {
                // Different backends: no record shared.
                prop_assert_eq!(code, 1);
            }
            Ok(())
        })
        .unwrap();
}

/// Trace files as a hostile user writes them: read or refused with the
/// line named, never a panic, and a trace read is in order and within a
/// point's bounds.
#[test]
fn traces_are_read_within_bounds_or_refused_by_line() {
    let line = prop_oneof![
        number_text(),
        Just("# a comment".to_string()),
        (0.0f64..4000.0).prop_map(|t| t.to_string()),
    ];
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&prop::collection::vec(line, 0..40), |lines| {
            match pqcprof::offload::arrivals::parse_trace(&lines.join("\n")) {
                Ok(t) => {
                    prop_assert!(t.len() >= 2 && t[0] == 0.0);
                    prop_assert!(t.windows(2).all(|w| w[0] <= w[1]));
                    prop_assert!(*t.last().unwrap() <= bounded::WINDOW_MAX);
                }
                Err(e) => prop_assert!(
                    e.starts_with("line ") || e.contains("arrival time(s)"),
                    "{e}"
                ),
            }
            Ok(())
        })
        .unwrap();
}
