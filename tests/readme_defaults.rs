//! The README's flag defaults against the command line's own: every row of
//! the README's table of defaults must be what `pqcprof COMMAND --help`
//! prints, every default `--help` prints must have its row, and every value
//! the README's synopsis shows for a flag with a default must be that
//! default. The command line is read through clap's own description of it
//! (`Cli::command()`) and through `--help` itself.

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

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The README's table of defaults (`| flag | commands | default |`), one
/// entry per command of each row.
fn readme_table(readme: &str) -> Defaults {
    let mut lines = readme.lines().skip_while(|l| {
        l.split('|').map(str::trim).collect::<Vec<_>>() != ["", "flag", "commands", "default", ""]
    });
    assert!(
        lines.next().is_some(),
        "README.md has no `| flag | commands | default |` table"
    );
    let mut out = Defaults::new();
    for row in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 5, "a row of three cells: {row}");
        let flag = cells[1]
            .split('`')
            .find(|t| t.starts_with("--"))
            .unwrap_or_else(|| panic!("no `--flag` in the first cell: {row}"));
        for command in cells[2].split(',').map(str::trim) {
            let key = (command.to_string(), flag.to_string());
            let previous = out.insert(key, unquote(cells[3]));
            assert!(previous.is_none(), "{flag} of {command} twice: {row}");
        }
    }
    out
}

/// A cell's value: what its first backticks hold (`""` for the empty
/// string), else the cell's text.
fn unquote(cell: &str) -> String {
    match cell.strip_prefix('`').and_then(|c| c.split_once('`')) {
        Some(("\"\"", _)) => String::new(),
        Some((v, _)) => v.to_string(),
        None => cell.to_string(),
    }
}

#[test]
fn every_default_in_the_readme_table_is_what_help_prints() {
    let told = help_defaults();
    let mut wrong = vec![];
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    for ((command, flag), default) in readme_table(&readme()) {
        match told.get(&(command.clone(), flag.clone())) {
            None => wrong.push(format!(
                "{command} {flag}: the README gives the default {default:?}, --help none (or no such flag)"
            )),
            Some(d) if *d != default => wrong.push(format!(
                "{command} {flag}: the README says {default:?}, --help {d:?}"
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
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_default_help_prints_is_in_the_readme_table() {
    let table = readme_table(&readme());
    let missing: Vec<String> = help_defaults()
        .into_iter()
        .filter(|(k, _)| !table.contains_key(k))
        .map(|((command, flag), d)| format!("{command} {flag} [default: {d}]"))
        .collect();
    assert!(
        missing.is_empty(),
        "defaults missing from the README's table:\n{}",
        missing.join("\n")
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

/// The flags the README's synopsis (the `sh` block under `## Commands`)
/// shows, each with its command (`None` on the line of global flags) and
/// the value after it: the next word when a single space separates them
/// (`--runs 20`, `--threads 1|N|all` gives `1`), none after `[`, `|` or
/// `]` (`--batch-sweep [MAX]`, `-q|--quiet`).
fn synopsis(readme: &str) -> Vec<Shown> {
    let commands: Vec<String> = cli()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let block: Vec<&str> = readme
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
    let shown = synopsis(&readme());
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
