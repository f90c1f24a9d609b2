//! The layout's rules, checked on the source itself: every file under `src/`
//! sits in a layer folder, a module imports only from its own layer or the
//! layers below it, no two files import each other in a loop, and only the
//! commands (`src/cmd/`, and `main.rs`) write to standard output.
//!
//! The module graph is read from the text: every `crate::`, `super::` and
//! `self::` path (in `use` lines and in code, grouped imports included) and
//! every path through a child module a file declares. Comments and string
//! literals are skipped. The layer order is written once, in [`LAYERS`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, from the bottom up. A module may import from its own layer
/// and from any layer before it in this list, never from one after it.
///
/// The order follows what the code needs, not only the flow of a run: the
/// samplers (`monitor`) import nothing and the run file stores what they
/// measure, so they sit below `schema`; the writers need only the schema
/// (and the native kernels' PTX cache writes through them), so `write` sits
/// right above it; totals and curves (`analyse`) are pure functions over
/// records that `measure` (several GPUs) and `sweep` (hybrids) call, so
/// they sit below both.
const LAYERS: [&str; 14] = [
    "core",    // catalogue, statistics, batch sizes, exit codes, units: imports nothing
    "monitor", // samplers: host, NVML, energy
    "schema",  // the run file: records, devices, aggregates, cluster, metadata, reading one
    "write",   // atomic output paths, cuPQC-shaped JSON, CSV
    "probe",   // system metadata, GPU driver/NVML/NVRTC probes, Slurm rank
    "backend", // the Backend trait, liboqs, parallel, mock, native_gpu/, cupqc/
    "analyse", // aggregates, saturation and break-even, hybrid overhead
    "measure", // plan builder, runner, session, several devices, fresh processes, signals
    "offload", // arrivals, the dynamic batcher, latency histograms, the planner
    "sweep",   // the whole-catalogue CPU sweep and sizes
    "vectors", // ACVP and Wycheproof known answers on any implementation
    "report",  // model, findings, sections, render/, compare
    "cluster", // Slurm ranks merged
    "cmd",     // command-line parsing and one file per command
];

/// The folder whose files may write to standard output (with `main.rs`):
/// the stages return values, and the commands print them.
const PRINTS: &str = "cmd";

/// The places in `text` (one file's source, comments and strings blanked)
/// that write to standard output: `print!`, `println!`, `stdout()` (not
/// a child process's `.stdout(...)`).
fn stdout_writes(text: &str) -> Vec<(usize, String)> {
    let mut found = vec![];
    for (n, line) in text.lines().enumerate() {
        for what in ["println!", "print!", "stdout("] {
            let mut from = 0;
            while let Some(i) = line[from..].find(what) {
                let at = from + i;
                let before = line[..at].chars().next_back();
                // `.stdout(...)` sets a child process's, not this one's.
                let method = what == "stdout(" && before == Some('.');
                if !method && !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    found.push((n + 1, what.trim_end_matches('(').to_string()));
                }
                from = at + what.len();
            }
        }
    }
    found
}

/// One `crate::` (or relative) path in a file, resolved to the file it
/// reaches.
#[derive(Debug, Clone)]
struct Import {
    from: String,
    to: String,
    line: usize,
    text: String,
}

/// What the analysis found: the file modules, their imports, and the
/// problems (one line each, naming the file and the import).
#[derive(Debug, Default)]
struct Analysis {
    modules: BTreeSet<String>,
    imports: Vec<Import>,
    problems: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

/// Source text with comments, string and character literals blanked out
/// (newlines kept, so line numbers stay right).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r')))
            && !c[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
            && {
                let mut j = i + if c[i] == 'b' { 2 } else { 1 };
                while c.get(j) == Some(&'#') {
                    j += 1;
                }
                c.get(j) == Some(&'"')
            }
        {
            // Raw string r#"..."#.
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &c[i..j.min(c.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' {
            // A character literal ('a', '\n', '\u{1F}'), or a lifetime ('a).
            let end = if c.get(i + 1) == Some(&'\\') {
                (i + 2..c.len()).find(|&j| c[j] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for &ch in &c[i..=e] {
                        blank(&mut out, ch);
                    }
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[s..i].iter().collect();
            let word = word.strip_prefix("r#").map(str::to_string).unwrap_or(word);
            toks.push((Tok::Ident(word), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            toks.push((Tok::PathSep, line));
            i += 2;
        } else {
            toks.push((
                match ch {
                    '{' => Tok::Open,
                    '}' => Tok::Close,
                    ',' => Tok::Comma,
                    ';' => Tok::Semi,
                    '*' => Tok::Star,
                    _ => Tok::Other,
                },
                line,
            ));
            i += 1;
        }
    }
    toks
}

/// The module path of a file below `src/`: `a/b.rs` is `a::b`, `a/mod.rs`
/// is `a`; `lib.rs` and `main.rs` are the crate root (empty).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && !(parts.is_empty() && (stem == "lib" || stem == "main")) {
        parts.push(stem);
    }
    parts
}

/// Parses the path that starts at `toks[i]` (after `prefix`), pushing every
/// full path it names (a group `{a, b::c}` names several). Returns the index
/// after the path.
fn parse_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                i += 1;
            }
            Some(Tok::Star) => {
                i += 1;
                out.push(path);
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Close) => {
                            i += 1;
                            break;
                        }
                        Some(Tok::Comma) => i += 1,
                        None => return i,
                        Some(_) => {
                            let before = i;
                            i = parse_tree(toks, i, path.clone(), out);
                            // Skip `as name` and anything else up to the next `,` or `}`.
                            while let Some(t) = toks.get(i) {
                                if matches!(t.0, Tok::Comma | Tok::Close) {
                                    break;
                                }
                                i += 1;
                            }
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
                return i;
            }
            _ => {
                out.push(path);
                return i;
            }
        }
        if toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep) {
            i += 1;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// Reads every `.rs` file below `src` and checks the rules.
fn analyse(src: &Path) -> Analysis {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut a = Analysis::default();
    let mut by_file: BTreeMap<String, PathBuf> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let m = module_of(rel);
        if m.is_empty() {
            continue;
        }
        if rel.components().count() == 1 {
            a.problems.push(format!(
                "src/{}: a file at the top of src/ (only main.rs, lib.rs and layer folders belong there)",
                rel.display()
            ));
        }
        let name = m.join("::");
        a.modules.insert(name.clone());
        by_file.insert(name, rel.to_path_buf());
    }
    let modules = a.modules.clone();
    let resolve = |abs: &[String]| -> Option<String> {
        (1..=abs.len())
            .rev()
            .map(|n| abs[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    for (name, rel) in &by_file {
        let text = fs::read_to_string(src.join(rel)).unwrap_or_default();
        if !rel.starts_with(PRINTS) {
            for (line, what) in stdout_writes(&strip(&text)) {
                a.problems.push(format!(
                    "src/{}:{line}: `{what}` writes to standard output outside src/{PRINTS}/ (return the text; the command prints it)",
                    rel.display()
                ));
            }
        }
        let toks = tokenize(&strip(&text));
        let me: Vec<String> = name.split("::").map(str::to_string).collect();
        let is_mod_rs = rel.file_name().is_some_and(|f| f == "mod.rs");
        // Child modules this file declares with `mod x;` at its top level.
        let mut children = BTreeSet::new();
        // Inline modules (`mod tests { ... }`): (name, brace depth inside).
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0usize;
        let mut i = 0;
        while i < toks.len() {
            let (t, line) = &toks[i];
            match t {
                Tok::Open => depth += 1,
                Tok::Close => {
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                Tok::Ident(w) if w == "mod" => {
                    if let (Some((Tok::Ident(n), _)), Some((next, _))) =
                        (toks.get(i + 1), toks.get(i + 2))
                    {
                        match next {
                            Tok::Semi if inline.is_empty() => {
                                children.insert(n.clone());
                            }
                            Tok::Open => {
                                inline.push((n.clone(), depth + 1));
                                depth += 1;
                                i += 3;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                Tok::Ident(w) => {
                    let after_sep = i > 0 && toks[i - 1].0 == Tok::PathSep;
                    let starts = w == "crate"
                        || w == "super"
                        || w == "self"
                        || (children.contains(w) && inline.is_empty());
                    if !after_sep && starts && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep)
                    {
                        let mut paths = Vec::new();
                        let end = parse_tree(&toks, i, Vec::new(), &mut paths);
                        // The module this code is in: the file's, then its inline modules.
                        let mut here = me.clone();
                        here.extend(inline.iter().map(|(n, _)| n.clone()));
                        for p in paths {
                            let mut abs: Vec<String> = Vec::new();
                            let mut rest = p.as_slice();
                            match rest.first().map(String::as_str) {
                                Some("crate") => rest = &rest[1..],
                                Some("self") | Some("super") => {
                                    abs = here.clone();
                                    while let Some(s) = rest.first() {
                                        match s.as_str() {
                                            "self" => {}
                                            "super" => {
                                                abs.pop();
                                            }
                                            _ => break,
                                        }
                                        rest = &rest[1..];
                                    }
                                }
                                _ => abs = me.clone(),
                            }
                            for s in rest {
                                if s != "self" {
                                    abs.push(s.clone());
                                }
                            }
                            if let Some(to) = resolve(&abs) {
                                if &to != name {
                                    a.imports.push(Import {
                                        from: name.clone(),
                                        to,
                                        line: *line,
                                        text: p.join("::"),
                                    });
                                }
                            }
                        }
                        i = end.max(i + 1);
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let _ = is_mod_rs;
    }
    let layer = |m: &str| -> Option<usize> {
        let top = m.split("::").next().unwrap_or("");
        LAYERS.iter().position(|l| *l == top)
    };
    for m in &a.modules {
        if layer(m).is_none() {
            a.problems.push(format!(
                "src/{}: in no layer (the layers, bottom up: {})",
                by_file[m].display(),
                LAYERS.join(", ")
            ));
        }
    }
    for imp in &a.imports {
        if let (Some(f), Some(t)) = (layer(&imp.from), layer(&imp.to)) {
            if t > f {
                a.problems.push(format!(
                    "src/{}:{}: `{}` imports `{}` from the higher layer `{}` (this file is in `{}`)",
                    by_file[&imp.from].display(),
                    imp.line,
                    imp.from,
                    imp.text,
                    LAYERS[t],
                    LAYERS[f]
                ));
            }
        }
    }
    for scc in cycles(&a.modules, &a.imports) {
        let members: BTreeSet<&String> = scc.iter().collect();
        let edges: Vec<String> = a
            .imports
            .iter()
            .filter(|e| members.contains(&e.from) && members.contains(&e.to))
            .map(|e| {
                format!(
                    "src/{}:{} -> {} (`{}`)",
                    by_file[&e.from].display(),
                    e.line,
                    e.to,
                    e.text
                )
            })
            .collect();
        a.problems.push(format!(
            "import circle between {}: {}",
            scc.join(", "),
            edges.join("; ")
        ));
    }
    a
}

/// The strongly connected components of more than one file (Tarjan).
fn cycles(modules: &BTreeSet<String>, imports: &[Import]) -> Vec<Vec<String>> {
    let names: Vec<&String> = modules.iter().collect();
    let idx: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut adj = vec![BTreeSet::new(); names.len()];
    for e in imports {
        if let (Some(&f), Some(&t)) = (idx.get(&e.from), idx.get(&e.to)) {
            adj[f].insert(t);
        }
    }
    struct St {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[BTreeSet<usize>], s: &mut St) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(w, adj, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let n = names.len();
    let mut s = St {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &adj, &mut s);
        }
    }
    s.out
        .into_iter()
        .map(|c| {
            let mut v: Vec<String> = c.into_iter().map(|i| names[i].clone()).collect();
            v.sort();
            v
        })
        .collect()
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            fs::copy(&p, &dest).unwrap();
        }
    }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pqcprof-arch-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    copy_tree(&src_dir(), &dir);
    dir
}

fn append(path: &Path, text: &str) {
    let mut s = fs::read_to_string(path).unwrap();
    s.push_str(text);
    fs::write(path, s).unwrap();
}

#[test]
fn layers_point_down_and_no_file_imports_in_a_loop() {
    let a = analyse(&src_dir());
    assert!(
        a.modules.len() > 50,
        "read only {} modules under src/",
        a.modules.len()
    );
    assert!(
        a.imports.len() > 100,
        "found only {} imports",
        a.imports.len()
    );
    assert!(
        a.problems.is_empty(),
        "{} layout problem(s):\n{}",
        a.problems.len(),
        a.problems.join("\n")
    );
}

#[test]
fn an_upward_import_fails_and_names_the_file_and_the_import() {
    let dir = scratch("up");
    append(
        &dir.join("core/stats.rs"),
        "\n#[allow(unused_imports)]\nuse crate::cmd::cli::Cli as _Upward;\n",
    );
    let a = analyse(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        a.problems.iter().any(|p| p.contains("src/core/stats.rs:")
            && p.contains("crate::cmd::cli::Cli")
            && p.contains("higher layer `cmd`")),
        "an upward import went unnoticed: {:?}",
        a.problems
    );
}

#[test]
fn a_circle_between_two_files_of_one_layer_fails() {
    let dir = scratch("loop");
    // core/batching never imports core/stats and the reverse; make both do it.
    append(
        &dir.join("core/stats.rs"),
        "\nfn _loop_a() { let _ = crate::core::batching::parse_batch; }\n",
    );
    append(
        &dir.join("core/batching.rs"),
        "\nuse crate::core::{stats::{self as _s}, catalog};\n",
    );
    let a = analyse(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        a.problems
            .iter()
            .any(|p| p.starts_with("import circle between")
                && p.contains("core::batching")
                && p.contains("core::stats")),
        "a circle went unnoticed: {:?}",
        a.problems
    );
}

#[test]
fn printing_outside_the_commands_fails_and_names_the_place() {
    let dir = scratch("print");
    append(
        &dir.join("report/table.rs"),
        "\nfn _said() { println!(\"x\"); }\nfn _put() { let _ = std::io::stdout(); }\n// println! in a comment\nfn _ok() -> &'static str { \"print!\" }\n",
    );
    append(
        &dir.join("cmd/tables.rs"),
        "\nfn _said_here() { println!(\"x\"); }\n",
    );
    let a = analyse(&dir);
    let _ = fs::remove_dir_all(&dir);
    let found: Vec<&String> = a
        .problems
        .iter()
        .filter(|p| p.contains("standard output"))
        .filter(|p| p.starts_with("src/report/table.rs:") || p.starts_with("src/cmd/"))
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("src/report/table.rs:") && found[0].contains("`println!`"),
        "{found:?}"
    );
    assert!(found[1].contains("`stdout`"), "{found:?}");
}

#[test]
fn a_loose_file_at_the_top_of_src_fails() {
    let dir = scratch("loose");
    fs::write(dir.join("helpers.rs"), "//! Loose.\n").unwrap();
    let a = analyse(&dir);
    let _ = fs::remove_dir_all(&dir);
    assert!(
        a.problems
            .iter()
            .any(|p| p.contains("src/helpers.rs") && p.contains("top of src/")),
        "{:?}",
        a.problems
    );
}

#[test]
fn comments_strings_and_relative_paths_are_read_right() {
    let dir = std::env::temp_dir().join(format!("pqcprof-arch-parse-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("core")).unwrap();
    fs::create_dir_all(dir.join("cmd")).unwrap();
    fs::write(dir.join("lib.rs"), "pub mod core; pub mod cmd;\n").unwrap();
    fs::write(dir.join("cmd/mod.rs"), "//! Commands.\npub mod run;\n").unwrap();
    fs::write(
        dir.join("cmd/run.rs"),
        "//! Run.\nuse super::super::core::a::X;\n",
    )
    .unwrap();
    fs::write(
        dir.join("core/mod.rs"),
        "//! Core.\npub mod a;\npub mod b;\n// crate::cmd::run in a comment\nconst S: &str = \"crate::cmd::run\";\nconst R: &str = r#\"crate::cmd\"#;\nfn f<'a>(x: &'a str) -> char { let _ = b::Y; 'x' }\n",
    )
    .unwrap();
    fs::write(dir.join("core/a.rs"), "//! A.\npub struct X;\n#[cfg(test)]\nmod tests { use super::*; use super::super::b::Y; }\n").unwrap();
    fs::write(dir.join("core/b.rs"), "//! B.\npub struct Y;\n").unwrap();
    let a = analyse(&dir);
    let _ = fs::remove_dir_all(&dir);
    let edges: BTreeSet<(String, String)> = a
        .imports
        .iter()
        .map(|i| (i.from.clone(), i.to.clone()))
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("cmd::run", "core::a"),
        ("core", "core::b"),
        ("core::a", "core::b"),
    ]
    .iter()
    .map(|(f, t)| (f.to_string(), t.to_string()))
    .collect();
    assert_eq!(edges, want, "imports read: {:?}", a.imports);
    assert!(a.problems.is_empty(), "{:?}", a.problems);
}
