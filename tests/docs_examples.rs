//! The documents keep true. Every ```` ```console ```` block in README.md and
//! the guides under docs/ is run by trycmd: each `$ pqcprof ...` line runs
//! the binary just built, from the repository root, and what it prints
//! (standard output and error together) must match the lines below it,
//! where `...` stands for any lines and `[..]` for any part of a line; a
//! `? N` line after the command gives the exit code it must end with.
//! And every relative link in those documents, with its `#anchor`, must
//! lead somewhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, as paths from the root.
/// `docs/cluster-example/` is a report pqcprof wrote, not a guide.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![PathBuf::from("README.md")];
    let mut docs = vec![];
    walk(&repo().join("docs"), &mut docs);
    out.extend(
        docs.into_iter()
            .map(|p| p.strip_prefix(repo()).unwrap().to_path_buf())
            .filter(|p| !p.starts_with("docs/cluster-example")),
    );
    out
}

/// Opening fences without a language: trycmd would run such a block as
/// commands, and a reader cannot tell what it holds.
fn bare_fences(text: &str) -> Vec<usize> {
    let mut open = false;
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            if !open && rest.trim().is_empty() {
                out.push(n + 1);
            }
            open = !open;
        }
    }
    out
}

#[test]
fn every_console_example_prints_what_the_document_shows() {
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("pqcprof", Path::new(env!("CARGO_BIN_EXE_pqcprof")))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .timeout(std::time::Duration::from_secs(60));
    let mut examples = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(repo().join(&doc)).unwrap();
        let bare = bare_fences(&text);
        assert!(
            bare.is_empty(),
            "{}: fenced blocks without a language at lines {bare:?} (```text, ```sh, ```console ...)",
            doc.display()
        );
        if text.contains("```console") {
            examples += text.matches("\n$ pqcprof").count();
            cases.case(repo().join(&doc));
        }
    }
    assert!(examples >= 8, "only {examples} `$ pqcprof` examples found");
    cases.run();
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of inline links `[text](target)` outside fenced blocks and
/// code spans, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                let target = rest[..end].split_whitespace().next().unwrap_or("");
                out.push((n + 1, target.to_string()));
                rest = &rest[end..];
            }
        }
    }
    out
}

/// Why `target`, linked from `doc`, leads nowhere; `None` when it resolves.
fn broken(doc: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        repo().join(doc)
    } else {
        repo().join(doc).parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if file.is_dir() || file.extension().is_none_or(|x| x != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&file).unwrap();
    (!anchors(&text).contains(anchor))
        .then(|| format!("no heading #{anchor} in {}", file.display()))
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut wrong = vec![];
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(repo().join(&doc)).unwrap();
        for (line, target) in links(&text) {
            checked += 1;
            if let Some(why) = broken(&doc, &target) {
                wrong.push(format!("{}:{line}: ({target}): {why}", doc.display()));
            }
        }
    }
    assert!(checked >= 20, "only {checked} links found");
    assert!(
        wrong.is_empty(),
        "links that lead nowhere:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_link_reader_finds_links_anchors_and_bare_fences() {
    let text = "# A title, with: punctuation\n\nSee [x](docs/a.md#b-c) and `[no](code)`.\n\n```sh\n[no](fenced)\n```\n\n## B c\n```\nbare\n```\n";
    assert_eq!(links(text), [(3, "docs/a.md#b-c".to_string())]);
    let found = anchors(text);
    assert!(found.contains("a-title-with-punctuation") && found.contains("b-c"));
    assert_eq!(bare_fences(text), [10]);
    assert_eq!(
        slug(" `--runs auto` and IQR "),
        "--runs-auto-and-iqr".to_string()
    );
    assert!(broken(Path::new("README.md"), "docs/no-such-guide.md").is_some());
    assert!(broken(Path::new("README.md"), "README.md#no-such-heading").is_some());
    assert!(broken(Path::new("README.md"), "https://example.org/x").is_none());
}
