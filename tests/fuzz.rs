//! Fuzzing of what pqcprof reads from outside: run files
//! (`schema::read::parse_run`, then the checks every reader applies),
//! trace files (`offload::arrivals::parse_trace`) and command lines
//! (clap's parser, then `offload`'s and `plan`'s checks), with `bolero`.
//!
//! Each input bolero makes is read as a seed and its mutations: the first
//! byte picks one of the files under `tests/corpus/<kind>/`, and each
//! following group of four bytes is one mutation of it (flip a bit, insert,
//! delete or repeat a slice, overwrite a byte, or splice in a hostile token:
//! `1e308`, `NaN`, a byte-order mark, a deep bracket), at a position the
//! group gives. A first byte of 255 feeds the rest as it is. A reader may
//! refuse anything; it may not panic.
//!
//! Under `cargo test` bolero's random engine runs each target for
//! `PQCPROF_FUZZ_SECONDS` seconds (default 5, at most 60; the three run at
//! once), after the seeds themselves and every input kept under
//! `tests/__fuzz__/<target>/crashes/` and `corpus/`: a panic prints
//! `BOLERO_RANDOM_SEED=...`, which repeats it, and the input, which is
//! kept there as a regression test. `scripts/fuzz SECONDS` runs the same
//! targets longer, under libFuzzer (`cargo bolero test`) where
//! cargo-bolero and a nightly toolchain are installed, else with the same
//! random engine.

use bolero::check;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const TOKENS: &[&[u8]] = &[
    b"1e308",
    b"-1e308",
    b"NaN",
    b"inf",
    b"-0",
    b"0",
    b"5e-324",
    b"18446744073709551616",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b"\"\"",
    b"\xEF\xBB\xBF",
    b"\x00",
    b"\xFF",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"\"records\": [",
    b"\"run_seconds\": [1e-300]",
    b"\"ops_per_sec\": 1e-300",
    b"\n",
    b"#",
    b"=",
    b"auto",
    b"--rate",
    b"--window",
    b"--max-wait",
];

fn seconds() -> Duration {
    let s = std::env::var("PQCPROF_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 60.0)
        .unwrap_or(5.0);
    Duration::from_secs_f64(s)
}

fn corpus(kind: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seed in {}", dir.display());
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Applies one mutation `[what, position (2 bytes), argument]` to `input`.
fn apply(input: &mut Vec<u8>, op: &[u8]) {
    let len = input.len();
    let at = ((usize::from(op[1]) << 8 | usize::from(op[2])) * (len + 1)) >> 16;
    let arg = op[3];
    match op[0] % 6 {
        0 if at < len => input[at] ^= 1 << (arg % 8),
        1 => input.insert(at, arg),
        2 if at < len => {
            let end = (at + usize::from(arg % 16) + 1).min(len);
            input.drain(at..end);
        }
        3 if at < len => {
            let end = (at + usize::from(arg % 64) + 1).min(len);
            let slice = input[at..end].to_vec();
            input.splice(end..end, slice);
        }
        4 => {
            let t = TOKENS[usize::from(arg) % TOKENS.len()];
            // Replace the number or word there, when there is one.
            let end = input[at..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || b".-+".contains(c)))
                .map_or(len, |p| at + p);
            input.splice(at..end, t.iter().copied());
        }
        5 if at < len => input[at] = arg,
        _ => {}
    }
}

/// The input bolero's `bytes` stand for: a seed and its mutations (at
/// most 64), or, after a first byte of 255, the bytes themselves.
fn decode(seeds: &[Vec<u8>], bytes: &[u8]) -> Vec<u8> {
    match bytes.split_first() {
        None => seeds[0].clone(),
        Some((255, raw)) => raw.to_vec(),
        Some((pick, ops)) => {
            let mut input = seeds[usize::from(*pick) % seeds.len()].clone();
            for op in ops.chunks_exact(4).take(64) {
                apply(&mut input, op);
            }
            input
        }
    }
}

/// A run file read as `report`, `merge` and `plan` read one, and compared
/// with itself as `compare` does.
fn run_file(b: &[u8]) {
    if let Ok((mut run, _)) = pqcprof::schema::read::parse_run(b, Path::new("f.json"), "F1") {
        let _ = pqcprof::report::change::compare(&run, &run, 0.01);
        for w in pqcprof::schema::agreement::leave_out(&mut run) {
            assert!(w.message.contains("left out"), "{w:?}");
        }
        assert!(run
            .records
            .iter()
            .all(|(_, r)| pqcprof::schema::agreement::problem(r).is_none()));
    }
}

fn trace(b: &[u8]) {
    if let Ok(t) = pqcprof::offload::arrivals::parse_trace(&String::from_utf8_lossy(b)) {
        assert!(t.len() >= 2 && t.windows(2).all(|w| w[0] <= w[1]));
        assert!(*t.last().unwrap() <= pqcprof::core::bounded::WINDOW_MAX);
    }
}

fn args(b: &[u8]) {
    use pqcprof::cmd::cli::{Cli, Command};
    let text = String::from_utf8_lossy(b);
    let words = std::iter::once("pqcprof").chain(text.split_whitespace());
    let Ok(cli) = Cli::try_parse_from(words) else {
        return;
    };
    match cli.command {
        Command::Offload(a) => {
            if let Ok(s) = pqcprof::cmd::offload::settings(&a) {
                assert!(s.window.is_finite());
            }
        }
        Command::Plan(p) => {
            let _ = p.load.options().policy(4096, "top");
        }
        _ => {}
    }
}

#[test]
fn the_run_file_reader_never_panics() {
    let seeds = corpus("run");
    seeds.iter().for_each(|s| run_file(s));
    let n = AtomicUsize::new(0);
    check!(name = "run_file")
        .with_test_time(seconds())
        .with_max_len(1024)
        .for_each(|b| {
            n.fetch_add(1, Ordering::Relaxed);
            run_file(&decode(&seeds, b))
        });
    eprintln!("run_file: {} inputs, no panic", n.into_inner());
}

#[test]
fn the_trace_reader_never_panics() {
    let seeds = corpus("trace");
    seeds.iter().for_each(|s| trace(s));
    let n = AtomicUsize::new(0);
    check!(name = "trace")
        .with_test_time(seconds())
        .with_max_len(1024)
        .for_each(|b| {
            n.fetch_add(1, Ordering::Relaxed);
            trace(&decode(&seeds, b))
        });
    eprintln!("trace: {} inputs, no panic", n.into_inner());
}

#[test]
fn the_argument_parsers_never_panic() {
    let seeds = corpus("args");
    seeds.iter().for_each(|s| args(s));
    let n = AtomicUsize::new(0);
    check!(name = "args")
        .with_test_time(seconds())
        .with_max_len(1024)
        .for_each(|b| {
            n.fetch_add(1, Ordering::Relaxed);
            args(&decode(&seeds, b))
        });
    eprintln!("args: {} inputs, no panic", n.into_inner());
}
