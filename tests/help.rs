//! `--help` as the conventions of command-line tools want it, for the top
//! level and every command, read from the command line's own definitions
//! (`Cli::command()`): no line wider than 100 columns, every option that
//! takes a value with a value name that says what it takes (not clap's
//! stand-in, the field's name in capitals), and an example block.

use clap::CommandFactory;
use pqcprof::cmd::cli::{Cli, HELP_WIDTH};

/// The command line, global flags propagated to every command.
fn cli() -> clap::Command {
    let mut c = Cli::command();
    c.build();
    c
}

/// `-h` and `--help` of the top level and of every command, by name.
fn every_help() -> Vec<(String, String)> {
    let mut c = cli();
    let mut out = vec![
        ("pqcprof -h".to_string(), c.render_help().to_string()),
        (
            "pqcprof --help".to_string(),
            c.render_long_help().to_string(),
        ),
    ];
    // Every command but clap's own `help`, which prints the others' help.
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    for name in names {
        let sub = c.find_subcommand_mut(&name).unwrap();
        out.push((format!("pqcprof {name} -h"), sub.render_help().to_string()));
        out.push((
            format!("pqcprof {name} --help"),
            sub.render_long_help().to_string(),
        ));
    }
    out
}

/// The lines of `help` wider than `HELP_WIDTH` columns.
fn too_wide(help: &str) -> Vec<String> {
    help.lines()
        .filter(|l| l.chars().count() > HELP_WIDTH)
        .map(|l| format!("{} columns: {l}", l.chars().count()))
        .collect()
}

/// The options of `cmd` that take a value but show clap's stand-in name
/// (`<WARMUP>` for `warmup`) or none.
fn default_value_names(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .filter(|a| a.get_num_args().is_none_or(|n| n.takes_values()))
        .filter(|a| {
            matches!(
                a.get_action(),
                clap::ArgAction::Set | clap::ArgAction::Append
            )
        })
        .filter_map(|a| {
            let stand_in = a.get_id().as_str().to_ascii_uppercase();
            let names: Vec<String> = a
                .get_value_names()
                .map(|v| v.iter().map(|n| n.to_string()).collect())
                .unwrap_or_default();
            (names.is_empty() || names.contains(&stand_in)).then(|| {
                format!(
                    "{} --{}: value name {}",
                    cmd.get_name(),
                    a.get_long().unwrap_or("?"),
                    if names.is_empty() {
                        format!("not set (clap shows <{stand_in}>)")
                    } else {
                        format!("<{stand_in}>, clap's stand-in")
                    }
                )
            })
        })
        .collect()
}

#[test]
fn no_help_line_is_wider_than_100_columns() {
    let helps = every_help();
    assert!(helps.len() >= 24, "{} helps", helps.len());
    let wide: Vec<String> = helps
        .iter()
        .flat_map(|(name, help)| {
            too_wide(help)
                .into_iter()
                .map(move |l| format!("{name}: {l}"))
        })
        .collect();
    assert!(wide.is_empty(), "{}", wide.join("\n"));
}

#[test]
fn every_option_names_what_it_takes() {
    let c = cli();
    let mut wrong = default_value_names(&c);
    for sub in c.get_subcommands() {
        wrong.extend(default_value_names(sub));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_command_shows_examples() {
    let missing: Vec<String> = every_help()
        .into_iter()
        .filter(|(_, help)| {
            !help
                .lines()
                .skip_while(|l| *l != "Examples:")
                .nth(1)
                .is_some_and(|l| l.starts_with("  pqcprof "))
        })
        .map(|(name, _)| name)
        .collect();
    assert!(missing.is_empty(), "no example block: {missing:?}");
}

/// The option lines of a help text that are not the first line of an
/// option: continuations of a help that did not fit beside its option,
/// or a help put on the next line. Sections of options are those whose
/// lines start with `  -` (the commands, examples and exit codes aside).
fn continued_option_lines(help: &str) -> Vec<String> {
    let mut out = vec![];
    let mut in_options = false;
    for line in help.lines() {
        if !line.starts_with(' ') {
            in_options =
                line.ends_with(':') && !matches!(line, "Commands:" | "Examples:" | "Exit codes:");
            continue;
        }
        let option = line.trim_start().starts_with('-') || line.trim_start().starts_with('<');
        if in_options && !option && !line.trim().is_empty() {
            out.push(line.to_string());
        }
    }
    out
}

/// `-h` of the top level and of every command, at 100 columns.
fn every_short_help() -> Vec<(String, String)> {
    let mut c = Cli::command().term_width(HELP_WIDTH);
    c.build();
    let mut out = vec![("pqcprof -h".to_string(), c.render_help().to_string())];
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    for name in names {
        let sub = c.find_subcommand_mut(&name).unwrap();
        out.push((format!("pqcprof {name} -h"), sub.render_help().to_string()));
    }
    out
}

#[test]
fn short_help_gives_each_option_one_line() {
    let mut long = vec![];
    for (name, help) in every_short_help() {
        for line in continued_option_lines(&help) {
            long.push(format!("{name}: {line}"));
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn long_help_puts_each_options_help_on_its_own_lines() {
    // `--help` is the long form: the option's name and value name on one
    // line, its help indented below (as `--help` of hyperfine and ripgrep).
    let mut same_line = vec![];
    for (name, help) in every_help()
        .into_iter()
        .filter(|(n, _)| n.ends_with("--help"))
    {
        for line in help.lines() {
            // An option's line: two spaces, then `-x, --name` or `--name`.
            if line.starts_with("  -") && line[2..].contains("  ") {
                same_line.push(format!("{name}: {line}"));
            }
        }
    }
    assert!(same_line.is_empty(), "{}", same_line.join("\n"));
}

#[test]
fn the_measuring_commands_group_their_options_under_the_shared_headings() {
    use pqcprof::cmd::bench_args::heading;
    let shared = [
        heading::MEASURE,
        heading::HOW_LONG,
        heading::CPU,
        heading::GPU,
        heading::RESULTS,
        heading::OUTPUT,
        heading::LOAD,
        heading::BATCHING,
    ];
    let c = cli();
    let mut wrong = vec![];
    for sub in c.get_subcommands() {
        for a in sub
            .get_arguments()
            .filter(|a| !a.is_positional() && !a.is_hide_set())
        {
            let long = a.get_long().unwrap_or("?");
            match a.get_help_heading() {
                Some(h) if shared.contains(&h) => {}
                // Commands of a few options may keep clap's `Options:`.
                None if !matches!(
                    sub.get_name(),
                    "bench" | "cpu" | "gpu" | "sweep" | "offload" | "plan"
                ) => {}
                h => wrong.push(format!("{} --{long}: heading {h:?}", sub.get_name())),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // `cpu` offers no GPU option, `gpu` no CPU option.
    let sub = |n: &str| c.find_subcommand(n).unwrap();
    let headings = |n: &str| -> Vec<&str> {
        sub(n)
            .get_arguments()
            .filter_map(|a| a.get_help_heading())
            .collect()
    };
    assert!(!headings("cpu").contains(&heading::GPU));
    assert!(!headings("gpu").contains(&heading::CPU));
    assert!(headings("bench").contains(&heading::GPU) && headings("bench").contains(&heading::CPU));
}

#[test]
fn every_output_is_dash_o_out_and_says_folder_or_file() {
    let c = cli();
    let mut wrong = vec![];
    for sub in c.get_subcommands() {
        let Some(out) = sub.get_arguments().find(|a| a.get_long() == Some("out")) else {
            continue;
        };
        let kind = out
            .get_value_names()
            .and_then(|v| v.first().map(|n| n.to_string()))
            .unwrap_or_default();
        let help = out.get_help().map(|h| h.to_string()).unwrap_or_default();
        let said = match kind.as_str() {
            "DIR" => help.starts_with("Folder"),
            "FILE" => help.starts_with("File"),
            _ => false,
        };
        if out.get_short() != Some('o') || !said {
            wrong.push(format!(
                "{} -{:?} --out <{kind}>: {help}",
                sub.get_name(),
                out.get_short()
            ));
        }
        if sub.get_arguments().any(|a| a.get_long() == Some("output")) {
            wrong.push(format!("{} still has --output", sub.get_name()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_checks_catch_what_they_look_for() {
    let wrapped = "Options:\n      --alg <A>  Algorithms\n                 continued\n\nExamples:\n  pqcprof x\n      y\n";
    assert_eq!(
        continued_option_lines(wrapped),
        ["                 continued"]
    );
    assert_eq!(too_wide(&"x".repeat(101)).len(), 1);
    assert!(too_wide(&"x".repeat(100)).is_empty());
    let bare = clap::Command::new("t").arg(clap::Arg::new("warmup").long("warmup"));
    assert_eq!(default_value_names(&bare).len(), 1);
    let named =
        clap::Command::new("t").arg(clap::Arg::new("warmup").long("warmup").value_name("N"));
    assert!(default_value_names(&named).is_empty());
    let stand_in = clap::Command::new("t").arg(clap::Arg::new("out").long("out").value_name("OUT"));
    assert_eq!(default_value_names(&stand_in).len(), 1);
}
