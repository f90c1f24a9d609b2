//! The documented flag defaults against the command line's own. The
//! command reference, docs/reference.md, is generated from clap's
//! definitions (tests/reference.rs keeps it equal to the generator): every
//! default it gives must be what `pqcprof COMMAND --help` prints, every
//! default `--help` prints must be in it, on that command's flag, and every
//! value the hand-written synopsis in docs/commands.md shows for a flag with
//! a default must be that default. The command line is read through clap's
//! own description of it (`Cli::command()`) and through `--help` itself.

mod common;

use clap::CommandFactory;
use common::pqcprof;
use pqcprof::cmd::cli::Cli;
use std::collections::BTreeMap;

/// (command, `--flag`) -> default.
type Defaults = BTreeMap<(String, String), String>;

/// The command line, global flags propagated to every command.
fn cli() -> clap::Command {
    let mut c = Cli::command();
    c.build();
    c
}

/// The default `--help` states for `arg`: clap's default value, or the
/// `[default: ...]` its help text writes out; `None` for a switch or a
/// flag without one.
fn stated_default(arg: &clap::Arg) -> Option<String> {
    if !matches!(
        arg.get_action(),
        clap::ArgAction::Set | clap::ArgAction::Append
    ) {
        return None;
    }
    let values = arg.get_default_values();
    if !values.is_empty() {
        let v: Vec<String> = values
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        return Some(v.join(","));
    }
    let help = one_line(&arg.get_long_help().or(arg.get_help())?.to_string());
    let start = help.find("[default: ")? + "[default: ".len();
    let end = start + help[start..].find(']')?;
    Some(help[start..end].to_string())
}

/// `text` with every run of white space made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every default the command line states, by command and long flag.
fn help_defaults() -> Defaults {
    let mut out = Defaults::new();
    for sub in cli().get_subcommands() {
        for arg in sub.get_arguments() {
            if arg.is_hide_set() || arg.is_positional() {
                continue;
            }
            if let (Some(long), Some(d)) = (arg.get_long(), stated_default(arg)) {
                out.insert((sub.get_name().to_string(), format!("--{long}")), d);
            }
        }
    }
    out
}

fn read(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The generated command reference.
fn reference() -> String {
    read("docs/reference.md")
}

/// The guide holding the synopsis of every command.
fn commands_guide() -> String {
    read("docs/commands.md")
}

/// The defaults the reference gives, one entry per command and long flag:
/// a flag's `Default value: `X`` (`Default values: `a`, `b`` joined with
/// commas), else the `[default: ...]` its help text writes out. Sections
/// are `## `pqcprof COMMAND``; a flag's entry is its `* `--flag ...`` item
/// and the indented lines after it.
fn reference_defaults(text: &str) -> Defaults {
    let mut out = Defaults::new();
    let mut command: Option<String> = None;
    let mut item: Option<(String, String)> = None;
    let mut flush = |command: &Option<String>, item: &mut Option<(String, String)>| {
        if let (Some(c), Some((flag, body))) = (command, item.take()) {
            if let Some(d) = item_default(&body) {
                let previous = out.insert((c.clone(), flag.clone()), d);
                assert!(previous.is_none(), "{c} {flag} twice in the reference");
            }
        }
    };
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## `pqcprof") {
            flush(&command, &mut item);
            command = h
                .trim_end_matches('`')
                .split_whitespace()
                .next()
                .map(str::to_string);
        } else if line.starts_with('#') || line.starts_with("* ") {
            flush(&command, &mut item);
            if let Some(rest) = line.strip_prefix("* ") {
                let flag = rest
                    .split('`')
                    .map(|t| t.split_whitespace().next().unwrap_or(""))
                    .find(|t| t.starts_with("--"));
                item = flag.map(|f| (f.to_string(), rest.to_string()));
            }
        } else if let Some((_, body)) = item.as_mut() {
            body.push(' ');
            body.push_str(line);
        }
    }
    flush(&command, &mut item);
    out
}

/// A reference item's default, if it states one.
fn item_default(body: &str) -> Option<String> {
    let body = one_line(body);
    for key in ["Default value: ", "Default values: "] {
        if let Some(i) = body.find(key) {
            // `a`, `b`, ... up to the first text that is not another value.
            let mut rest = &body[i + key.len()..];
            let mut values = vec![];
            while let Some((value, after)) = rest.strip_prefix('`').and_then(|r| r.split_once('`'))
            {
                values.push(value);
                match after.strip_prefix(", ") {
                    Some(next) => rest = next,
                    None => break,
                }
            }
            return Some(values.join(","));
        }
    }
    let start = body.find("[default: ")? + "[default: ".len();
    let end = start + body[start..].find(']')?;
    Some(body[start..end].to_string())
}

#[test]
fn every_default_in_the_reference_is_what_help_prints() {
    let told = help_defaults();
    let given = reference_defaults(&reference());
    assert!(given.len() > 20, "too few defaults read: {given:?}");
    let mut wrong = vec![];
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    for ((command, flag), default) in given {
        match told.get(&(command.clone(), flag.clone())) {
            None => wrong.push(format!(
                "{command} {flag}: the reference gives the default {default:?}, --help none (or no such flag)"
            )),
            Some(d) if *d != default => wrong.push(format!(
                "{command} {flag}: the reference says {default:?}, --help {d:?}"
            )),
            Some(_) => {
                // And the help text itself, as a user reads it.
                let help = helps.entry(command.clone()).or_insert_with(|| {
                    let out = pqcprof().args([&command, "--help"]).output().unwrap();
                    assert!(out.status.success(), "{command} --help");
                    one_line(&String::from_utf8_lossy(&out.stdout))
                });
                // clap writes an empty default as "".
                let shown = match default.as_str() {
                    "" => "[default: \"\"]".to_string(),
                    d => one_line(&format!("[default: {d}]")),
                };
                if !help.contains(&shown) {
                    wrong.push(format!(
                        "{command} {flag}: `pqcprof {command} --help` does not print {shown}"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\nregenerate the reference with: PQCPROF_BLESS=1 cargo test --release --test reference",
        wrong.join("\n")
    );
}

#[test]
fn every_default_help_prints_is_in_the_reference() {
    let given = reference_defaults(&reference());
    let missing: Vec<String> = help_defaults()
        .into_iter()
        .filter(|(k, _)| !given.contains_key(k))
        .map(|((command, flag), d)| format!("{command} {flag} [default: {d}]"))
        .collect();
    assert!(
        missing.is_empty(),
        "defaults missing from docs/reference.md (regenerate with: \
PQCPROF_BLESS=1 cargo test --release --test reference):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_reference_reader_takes_defaults_apart() {
    let text = "## `pqcprof bench`\n\n###### **Options:**\n\n* `--runs <N>` — Timed runs\n\n  Default value: `20`\n\n  Possible values: `1`, `20`\n* `--threads <T>` — Threads\n\n  Default values: `1`, `all`\n* `--kernel <V>` — Variant [default: the\n   fastest]\n* `--json` — JSON\n## `pqcprof merge`\n\n* `-o`, `--output <FILE>` — Where\n\n  Default value: `cluster-run.json`\n";
    let got: Vec<String> = reference_defaults(text)
        .into_iter()
        .map(|((c, f), d)| format!("{c} {f} {d}"))
        .collect();
    assert_eq!(
        got,
        [
            "bench --kernel the fastest",
            "bench --runs 20",
            "bench --threads 1,all",
            "merge --output cluster-run.json",
        ]
    );
}

/// A flag of the synopsis and the value written after it, if any.
#[derive(Debug)]
struct Shown {
    command: Option<String>,
    flag: String,
    value: Option<String>,
    line: String,
}

/// The flags the synopsis (the `sh` block under `## Commands` in
/// docs/commands.md)
/// shows, each with its command (`None` on the line of global flags) and
/// the value after it: the next word when a single space separates them
/// (`--runs 20`, `--threads 1|N|all` gives `1`), none after `[`, `|` or
/// `]` (`--batch-sweep [MAX]`, `-q|--quiet`).
fn synopsis(text: &str) -> Vec<Shown> {
    let commands: Vec<String> = cli()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "## Commands")
        .skip_while(|l| *l != "```sh")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    assert!(!block.is_empty(), "no synopsis under ## Commands");
    let mut out = vec![];
    let mut command = None;
    for line in block {
        if let Some(rest) = line.strip_prefix("pqcprof ") {
            let word = rest.split_whitespace().next().unwrap_or("");
            command = commands.iter().find(|c| *c == word).cloned();
        }
        // Words and the delimiters before each.
        let mut words: Vec<(String, String)> = vec![];
        let (mut gap, mut word) = (String::new(), String::new());
        for c in line.chars() {
            if matches!(c, ' ' | '[' | ']' | '|') {
                if !word.is_empty() {
                    words.push((std::mem::take(&mut gap), std::mem::take(&mut word)));
                }
                gap.push(c);
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            words.push((gap, word));
        }
        for (i, (_, w)) in words.iter().enumerate() {
            let is_flag = |w: &str| {
                w.strip_prefix("--")
                    .or_else(|| w.strip_prefix('-'))
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_lowercase()))
            };
            if !is_flag(w) {
                continue;
            }
            let value = words
                .get(i + 1)
                .filter(|(g, v)| g == " " && !is_flag(v) && !v.starts_with('('))
                .map(|(_, v)| v.clone());
            out.push(Shown {
                command: command.clone(),
                flag: w.clone(),
                value,
                line: line.to_string(),
            });
        }
    }
    out
}

/// A placeholder, not a value: capitals (`N`, `HEX`, `MAX`, `FILE`).
fn placeholder(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_uppercase()) && !value.chars().any(|c| c.is_ascii_lowercase())
}

/// Whether `shown` is `default`, or how it begins (`1` of `1; 0.05 with
/// --quick`, `report.html` of `report.html, or report.md ...`).
fn shows_default(shown: &str, default: &str) -> bool {
    default == shown
        || default.strip_prefix(shown).is_some_and(|rest| {
            rest.starts_with(' ') || rest.starts_with("; ") || rest.starts_with(", ")
        })
}

#[test]
fn the_synopsis_shows_real_flags_and_their_defaults() {
    let cli = cli();
    let mut wrong = vec![];
    let shown = synopsis(&commands_guide());
    assert!(shown.len() > 20, "too few flags found: {shown:?}");
    for s in &shown {
        let args: Vec<&clap::Arg> = match &s.command {
            Some(c) => cli.find_subcommand(c).unwrap().get_arguments().collect(),
            None => cli.get_arguments().filter(|a| a.is_global_set()).collect(),
        };
        let arg = args.into_iter().find(|a| match s.flag.strip_prefix("--") {
            Some(long) => a.get_long() == Some(long),
            None => a.get_short().map(|c| format!("-{c}")).as_deref() == Some(s.flag.as_str()),
        });
        let Some(arg) = arg else {
            wrong.push(format!(
                "{} is not a flag of {}: {}",
                s.flag,
                s.command.as_deref().unwrap_or("every command"),
                s.line
            ));
            continue;
        };
        if let (Some(v), Some(d)) = (&s.value, stated_default(arg)) {
            if !placeholder(v) && !shows_default(v, &d) {
                wrong.push(format!(
                    "{} {}: the synopsis shows {v:?}, --help's default is {d:?}: {}",
                    s.command.as_deref().unwrap_or(""),
                    s.flag,
                    s.line
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_synopsis_reader_takes_values_and_placeholders_apart() {
    let text = "## Commands\n\n```sh\npqcprof [-q|--quiet] COMMAND\npqcprof sweep [--warmup 1] [--threads 1|N|all] [--filter PATTERN|x]\n              [--batch-sweep [MAX]] [--slow]\n```\n";
    let got: Vec<String> = synopsis(text)
        .iter()
        .map(|s| format!("{:?} {} {:?}", s.command, s.flag, s.value))
        .collect();
    assert_eq!(
        got,
        [
            "None -q None",
            "None --quiet None",
            "Some(\"sweep\") --warmup Some(\"1\")",
            "Some(\"sweep\") --threads Some(\"1\")",
            "Some(\"sweep\") --filter Some(\"PATTERN\")",
            "Some(\"sweep\") --batch-sweep None",
            "Some(\"sweep\") --slow None",
        ]
    );
    assert!(placeholder("PATTERN") && placeholder("N[,N...]") && !placeholder("sm_90"));
    assert!(shows_default("1", "1; 0.05 with --quick"));
    assert!(shows_default(
        "report.html",
        "report.html, or report.md with --format markdown"
    ));
    assert!(!shows_default("1", "1,all") && !shows_default("10", "100"));
}
