//! `docs/reference.md`, the command reference, is generated from the command
//! line's own definitions (clap-markdown over `Cli::command()`), never
//! written by hand. This test fails when the checked-in file differs from
//! what the generator prints now; regenerate it with
//!
//! ```text
//! PQCPROF_BLESS=1 cargo test --release --test reference
//! ```

use clap::CommandFactory;
use pqcprof::cmd::cli::Cli;
use std::path::PathBuf;

/// The one command that rewrites `docs/reference.md`.
const REGENERATE: &str = "PQCPROF_BLESS=1 cargo test --release --test reference";

fn reference_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md")
}

/// The reference as the generator prints it for the command line as built.
fn generated() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("pqcprof command reference".to_string())
        .show_footer(false);
    let body = clap_markdown::help_markdown_command_custom(&Cli::command(), &options);
    format!(
        "<!-- Generated from the command line's definitions by tests/reference.rs; \
do not edit. Regenerate with: {REGENERATE} -->\n\n{body}"
    )
}

/// The first line where `a` and `b` differ, 1-based, with both lines.
fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (mut x, mut y) = (a.lines(), b.lines());
    for n in 1.. {
        match (x.next(), y.next()) {
            (None, None) => return None,
            (l, r) if l != r => {
                let show = |s: Option<&str>| s.map_or("(end of file)".to_string(), str::to_string);
                return Some((n, show(l), show(r)));
            }
            _ => {}
        }
    }
    unreachable!()
}

#[test]
fn the_checked_in_reference_is_what_the_generator_prints() {
    let path = reference_path();
    let now = generated();
    if std::env::var_os("PQCPROF_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &now).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    if let Some((line, kept_line, now_line)) = first_difference(&kept, &now) {
        panic!(
            "docs/reference.md is not what the command line's definitions give \
(first difference at line {line}):\n  checked in: {kept_line}\n  generated:  {now_line}\n\
regenerate with: {REGENERATE}"
        );
    }
}

#[test]
fn the_reference_covers_every_command_and_flag() {
    let text = generated();
    let mut cli = Cli::command();
    cli.build();
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        if name == "help" {
            continue;
        }
        let heading = format!("## `pqcprof {name}`");
        assert!(text.contains(&heading), "no section {heading}");
        let longs = sub
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
            .filter_map(|a| a.get_long());
        for long in longs {
            assert!(text.contains(&format!("`--{long}")), "{name} --{long}");
        }
    }
}

#[test]
fn first_difference_names_the_line() {
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    assert_eq!(
        first_difference("a\nb\n", "a\nc\n"),
        Some((2, "b".into(), "c".into()))
    );
    assert_eq!(
        first_difference("a\n", "a\nb\n"),
        Some((2, "(end of file)".into(), "b".into()))
    );
}
