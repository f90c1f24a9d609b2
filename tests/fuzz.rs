//! Bounded mutation fuzzing of what pqcprof reads from outside: run files
//! (`schema::read::parse_run`), trace files (`offload::arrivals::parse_trace`)
//! and command lines (clap's parser, then `offload`'s and `plan`'s checks).
//!
//! The seeds are the files under `tests/corpus/`; each round mutates one
//! (flips, inserts, deletes, repeats a slice, or splices in a hostile token:
//! `1e308`, `NaN`, a byte-order mark, a deep bracket) and feeds it to the
//! reader. A reader may refuse anything; it may not panic. A panic prints
//! the input (and writes it under the target folder) so it can become a
//! seed and a regression test.
//!
//! Mutation on the stable toolchain rather than libFuzzer: `cargo fuzz`
//! needs a nightly compiler and a sanitizer runtime this project's CI does
//! not install; the mutator here is seeded, so a failure repeats. Each
//! target runs for `PQCPROF_FUZZ_SECONDS` (default 5) seconds.

use clap::Parser;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

fn mutate(rng: &mut impl Rng, input: &mut Vec<u8>) {
    for _ in 0..rng.random_range(1..=4) {
        let len = input.len();
        match rng.random_range(0..6) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                input[i] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let i = rng.random_range(0..=len);
                input.insert(i, rng.random());
            }
            2 if len > 0 => {
                let i = rng.random_range(0..len);
                let j = (i + rng.random_range(1..=16)).min(len);
                input.drain(i..j);
            }
            3 if len > 0 => {
                let i = rng.random_range(0..len);
                let j = (i + rng.random_range(1..=64)).min(len);
                let slice = input[i..j].to_vec();
                input.splice(j..j, slice);
            }
            _ => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                let i = rng.random_range(0..=len);
                // Replace the number or word there, when there is one.
                let end = input[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || b".-+".contains(c)))
                    .map_or(len, |p| i + p);
                input.splice(i..end, t.iter().copied());
            }
        }
    }
}

/// Feeds mutated seeds of `kind` to `target` for the time allowed; a
/// panic fails with the input.
fn fuzz(kind: &str, seed: u64, target: impl Fn(&[u8])) {
    let seeds = corpus(kind);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let until = Instant::now() + seconds();
    let mut rounds = 0u64;
    // The seeds themselves first.
    for s in &seeds {
        target(s);
    }
    while Instant::now() < until {
        let mut input = seeds[rng.random_range(0..seeds.len())].clone();
        mutate(&mut rng, &mut input);
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target(&input)));
        if ok.is_err() {
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{kind}-crash"));
            std::fs::write(&out, &input).unwrap();
            panic!(
                "{kind}: round {rounds} panicked on {} bytes, written to {}: {:?}",
                input.len(),
                out.display(),
                String::from_utf8_lossy(&input)
            );
        }
        rounds += 1;
    }
    eprintln!("{kind}: {rounds} mutated inputs, no panic");
    assert!(rounds > 0);
}

#[test]
fn the_run_file_reader_never_panics() {
    fuzz("run", 1, |b| {
        if let Ok((run, _)) = pqcprof::schema::read::parse_run(b, Path::new("f.json"), "F1") {
            // What was read compares with itself without a panic.
            let _ = pqcprof::report::change::compare(&run, &run, 0.01);
        }
    });
}

#[test]
fn the_trace_reader_never_panics() {
    fuzz("trace", 2, |b| {
        if let Ok(t) = pqcprof::offload::arrivals::parse_trace(&String::from_utf8_lossy(b)) {
            assert!(t.len() >= 2 && t.windows(2).all(|w| w[0] <= w[1]));
            assert!(*t.last().unwrap() <= pqcprof::core::bounded::WINDOW_MAX);
        }
    });
}

#[test]
fn the_argument_parsers_never_panic() {
    use pqcprof::cmd::cli::{Cli, Command};
    fuzz("args", 3, |b| {
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
    });
}
