//! `pqcprof completions SHELL` and `pqcprof man --out DIR`: made from the
//! command line's own definitions, so they name every command.

mod common;

use clap::CommandFactory;
use common::pqcprof;
use pqcprof::cmd::cli::Cli;

/// The commands a user can type (clap's own `help` aside).
fn commands() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = pqcprof().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in commands() {
            assert!(script.contains(&command), "{shell}: no {command}");
        }
        // fish spells an option `-l batch-sweep`, the others `--batch-sweep`.
        assert!(
            script.contains("--batch-sweep") || script.contains("-l batch-sweep"),
            "{shell}: no bench flag"
        );
    }
}

#[test]
fn an_unknown_shell_is_refused_with_the_valid_ones() {
    let out = pqcprof().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'tcsh'") && err.contains("bash, elvish, fish, powershell, zsh"),
        "{err}"
    );
}

#[test]
fn man_writes_one_page_per_command_and_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man/1");
    let out = pqcprof()
        .args(["man", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8(out.stdout).unwrap();
    let mut pages = vec!["pqcprof.1".to_string()];
    pages.extend(commands().iter().map(|c| format!("pqcprof-{c}.1")));
    for page in &pages {
        let path = out_dir.join(page);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{page}: not a man page"
        );
        assert!(
            listed.contains(&path.display().to_string()),
            "{page} not listed: {listed}"
        );
    }
    let bench = std::fs::read_to_string(out_dir.join("pqcprof-bench.1")).unwrap();
    assert!(
        bench.contains("batch\\-sweep"),
        "bench's page lacks its flags"
    );
    assert_eq!(listed.lines().count(), pages.len(), "{listed}");
}

#[test]
fn man_refuses_a_file_for_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pages");
    std::fs::write(&file, "kept").unwrap();
    let out = pqcprof()
        .args(["man", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept");
}
