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

#[test]
fn every_option_help_sits_on_its_own_line() {
    // One style everywhere: the option's name and value name on one line,
    // its help indented below (as `--help` of hyperfine and ripgrep).
    let mut same_line = vec![];
    for (name, help) in every_help() {
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
fn the_checks_catch_what_they_look_for() {
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
