//! Every command's options, walked through the command line's own
//! definition (`Cli::command()`): each option that takes a value is given
//! one it must refuse, and each command an option that belongs to another
//! command; both must end in a usage error (exit 2) naming the option,
//! before anything runs. An option gets its bad value by its long name
//! alone, so a name means the same thing, in the same unit, in every
//! command that has it. The runs stop where arguments are parsed and
//! checked, so the walk takes seconds.

use clap::CommandFactory;
use pqcprof::cmd::cli::{Cli, RENAMED};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A value each option refuses, by long name, whatever the command.
const BAD: &[(&str, &str)] = &[
    ("--alg", "ML-KEM-999"),
    ("--op", "frobnicate"),
    ("--backend", "fpga"),
    ("--batch", "0"),
    ("--batch-sweep", "0"),
    ("--message-size", "-1"),
    ("--context", "zz"),
    ("--vectors", "most"),
    ("--gate", "most"),
    ("--sample-period-ms", "0"),
    ("--runs", "0"),
    ("--max-noise", "1e-300"),
    ("--max-runs", "1"),
    ("--warmup", "-1"),
    ("--max-seconds", "0"),
    ("--deadline", "0"),
    ("--threads", "0"),
    ("--device", "x"),
    ("--kernel", "wide"),
    ("--cache", "tepid"),
    ("--launch-target-ms", "0"),
    ("--filter", "Falcon-513"),
    ("--seconds", "0"),
    ("--warmup-seconds", "-1"),
    ("--format", "pdf"),
    ("--fail-above", "-2"),
    ("--noise-threshold", "100"),
    ("--rate", "0"),
    ("--rate-sweep", "9..3"),
    ("--batch-top", "0"),
    ("--window", "0.01"),
    ("--workers", "0"),
    ("--arrivals", "bursty"),
    ("--seed", "x"),
    ("--slo", "p99"),
    ("--max-batch", "0"),
    ("--max-wait", "-1"),
    ("--queue-limit", "0"),
    ("--mix", "tls99-server"),
    ("--handoff-ms", "-1"),
    ("--arch", "sm_70"),
    ("--threads-per-block", "0"),
    ("--sample", "0"),
];

/// Options whose every value parses, and why: a path is checked when it
/// is read or written (an I/O error, exit 1; tests/cli.rs and
/// tests/robustness.rs cover those).
const ANY_VALUE: &[(&str, &str)] = &[
    ("--out", "a folder or file to write"),
    ("--from", "a run file to read"),
    ("--trace", "a file of arrival times to read"),
    ("--plugin", "a plugin library to load"),
    ("--prebuild", "a folder to write kernel images into"),
];

/// What a command needs beside the option tried for its checks to run:
/// (option, value) pairs, left out where the option tried is one of them
/// or cannot go with them, then positional arguments.
fn base(command: &str, tried: &str, dir: &Path) -> Vec<String> {
    let pairs: &[(&str, &str)] = match command {
        "offload" => &[
            ("--alg", "ML-KEM-768"),
            ("--op", "encaps"),
            ("--rate", "100"),
        ],
        "plan" => &[("--alg", "ML-KEM-768"), ("--op", "encaps")],
        "check" if tried == "--backend" => &[("--vectors", "")],
        "check" if tried == "--sample" => &[("--vectors", "")],
        _ => &[],
    };
    // --rate-sweep and --mix stand in for --rate and --alg/--op.
    let conflicts: &[&str] = match tried {
        "--rate-sweep" => &["--rate"],
        "--mix" => &["--alg", "--op"],
        _ => &[],
    };
    let mut out = vec![];
    for (opt, value) in pairs {
        if *opt == tried || conflicts.contains(opt) {
            continue;
        }
        out.push(opt.to_string());
        if !value.is_empty() {
            out.push(value.to_string());
        }
    }
    let file = |name: &str| dir.join(name).display().to_string();
    match command {
        "report" => out.push(file("run.json")),
        "compare" => out.extend([file("old.json"), file("new.json")]),
        "merge" => out.push(file("ranks")),
        "completions" => out.push("bash".into()),
        "man" if tried != "--out" => out.extend(["--out".into(), file("man")]),
        _ => {}
    }
    out
}

/// Runs `pqcprof args` in `dir` (where a measuring command left to run
/// would write `outputs/`), killed after 30 s; its exit code and standard
/// error.
fn run(args: &[String], dir: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("pqcprof"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The commands a user types, with their options that take a value
/// (long names), hidden ones and clap's own aside.
fn commands() -> Vec<(String, Vec<String>)> {
    let mut cli = Cli::command();
    cli.build();
    cli.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| {
            let takes_values = s
                .get_arguments()
                .filter(|a| !a.is_positional() && !a.is_hide_set() && !a.is_global_set())
                .filter(|a| {
                    matches!(
                        a.get_action(),
                        clap::ArgAction::Set | clap::ArgAction::Append
                    )
                })
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .collect();
            (s.get_name().to_string(), takes_values)
        })
        .collect()
}

#[test]
fn every_option_refuses_a_bad_value_as_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = vec![];
    let mut tried = 0;
    for (command, options) in commands() {
        for option in options {
            if ANY_VALUE.iter().any(|(o, _)| *o == option) {
                continue;
            }
            let Some((_, bad)) = BAD.iter().find(|(o, _)| *o == option) else {
                wrong.push(format!(
                    "{command} {option}: no bad value to try; add one to BAD (or the option to ANY_VALUE, with why)"
                ));
                continue;
            };
            let mut args = vec![command.clone()];
            args.extend(base(&command, &option, dir.path()));
            args.push(option.clone());
            args.push(bad.to_string());
            let (code, err) = run(&args, dir.path());
            tried += 1;
            let named = err.contains(&option) && err.contains(bad);
            if code != Some(2) || !named || err.contains("panicked") {
                wrong.push(format!(
                    "pqcprof {}: exit {code:?}, {}:\n{err}",
                    args.join(" "),
                    if named {
                        "named"
                    } else {
                        "the option or value not named"
                    }
                ));
            }
        }
    }
    assert!(tried >= 60, "only {tried} options tried");
    assert!(
        !dir.path().join("outputs").exists(),
        "a refused command line wrote its output folder"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_command_refuses_an_option_of_another_naming_the_commands_that_take_it() {
    let all = commands();
    let of = |name: &str| -> Vec<String> {
        all.iter()
            .find(|(c, _)| c == name)
            .map(|(_, o)| o.clone())
            .unwrap_or_default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = vec![];
    let mut cases: Vec<(String, String)> = vec![];
    // Every option `bench` has and `cpu` or `gpu` does not: the GPU's in
    // `cpu`, the CPU's in `gpu`.
    for narrow in ["cpu", "gpu"] {
        for option in of("bench").into_iter().filter(|o| !of(narrow).contains(o)) {
            cases.push((narrow.to_string(), option));
        }
    }
    // And one foreign option in every other command.
    for (command, options) in &all {
        let foreign = ["--runs", "--rate", "--filter"]
            .into_iter()
            .find(|o| !options.iter().any(|x| x == o))
            .unwrap();
        cases.push((command.clone(), foreign.to_string()));
    }
    assert!(cases.len() > all.len() + 4, "{cases:?}");
    for (command, option) in cases {
        let mut args = vec![command.clone()];
        args.extend(base(&command, &option, dir.path()));
        args.extend([option.clone(), "1".into()]);
        let (code, err) = run(&args, dir.path());
        let takers: Vec<&str> = all
            .iter()
            .filter(|(_, o)| o.contains(&option))
            .map(|(c, _)| c.as_str())
            .collect();
        let names_a_taker = takers
            .iter()
            .any(|t| err.contains(&format!("`pqcprof {t}`")));
        if code != Some(2)
            || !err.contains(&format!("{option} does not apply to `pqcprof {command}`"))
            || !names_a_taker
        {
            wrong.push(format!("pqcprof {}: exit {code:?}:\n{err}", args.join(" ")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_renamed_option_is_refused_naming_its_new_name() {
    let dir = tempfile::tempdir().unwrap();
    for (command, old, new, _) in RENAMED {
        let mut args = vec![command.to_string()];
        args.extend(base(command, old, dir.path()));
        args.extend([old.to_string(), "1".into()]);
        let (code, err) = run(&args, dir.path());
        assert_eq!(code, Some(2), "pqcprof {}: {err}", args.join(" "));
        assert!(
            err.contains(&format!("{old}` is now {new}")),
            "pqcprof {}: {err}",
            args.join(" ")
        );
    }
}

#[test]
fn the_walk_tells_a_bad_value_from_a_good_one() {
    // The same command lines with a good value get past the checks: the
    // walk's failures are the bad values', not the command lines'.
    let dir = tempfile::tempdir().unwrap();
    let good = |command: &str, option: &str, value: &str| {
        let mut args = vec![command.to_string()];
        args.extend(base(command, option, dir.path()));
        args.extend([option.to_string(), value.to_string()]);
        args.push("--help".into());
        run(&args, dir.path())
    };
    for (command, option, value) in [
        ("offload", "--rate", "100"),
        ("plan", "--workers", "2"),
        ("bench", "--runs", "5"),
        ("sweep", "--warmup-seconds", "0.5"),
    ] {
        let (code, err) = good(command, option, value);
        assert_eq!(code, Some(0), "{command} {option} {value}: {err}");
    }
    let (code, _) = good("bench", "--runs", "0");
    assert_eq!(code, Some(2));
}
