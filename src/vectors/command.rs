//! `pqcprof check --vectors`: the vector table for each chosen
//! implementation, as text or JSON; exit 3 when any case failed.

use super::case::{Plan, Report, Subject};
use super::kernels::Kernels;
use super::subjects;
use super::table::{render, run_all, suites, SuiteResult};
use crate::backend::native_gpu::sizing::Variant;
use crate::core::exit;
use crate::probe::gpu;
use serde::Serialize;

/// The names `--backend` takes with `--vectors`, and what each runs.
pub const BACKENDS: [(&str, &str); 7] = [
    (
        "native-host",
        "cuda/native compiled for the CPU (the kernels' own source)",
    ),
    ("liboqs", "liboqs, statically linked"),
    (
        "openssl",
        "OpenSSL's own ML-KEM and ML-DSA (the vendored OpenSSL)",
    ),
    (
        "native-gpu:thread",
        "the one-thread-per-operation kernels, on GPU 0",
    ),
    (
        "native-gpu:warp",
        "the warp-per-operation ML-KEM kernels, on GPU 0",
    ),
    (
        "native-gpu:block",
        "the block-per-operation ML-DSA kernels, on GPU 0",
    ),
    (
        "cupqc",
        "NVIDIA cuPQC's decapsulation and verification, on GPU 0 (builds with its SDK)",
    ),
];

/// The names `--backend` was given, each list split, `native-gpu` standing
/// for its three variants; the default: the CPU ones, and the GPU ones when
/// a GPU is usable.
fn expand(backends: &[String]) -> Vec<String> {
    let given: Vec<String> = backends
        .iter()
        .flat_map(|b| b.split(','))
        .map(|b| b.trim().to_ascii_lowercase())
        .filter(|b| !b.is_empty())
        .collect();
    let given = if given.is_empty() {
        let mut d = vec![
            "native-host".to_string(),
            "liboqs".to_string(),
            "openssl".to_string(),
        ];
        if gpu::no_usable_gpu(&gpu::probe()).is_none() {
            d.push("native-gpu".into());
            let cupqc = crate::backend::cupqc::build_info();
            if cupqc.built && !cupqc.standin {
                d.push("cupqc".into());
            }
        }
        d
    } else {
        given
    };
    given
        .into_iter()
        .flat_map(|b| match b.as_str() {
            "native-gpu" | "native-gpu:all" => Variant::ALL
                .iter()
                .map(|v| format!("native-gpu:{}", v.name()))
                .collect(),
            _ => vec![b],
        })
        .collect()
}

fn subject(name: &str) -> Result<Box<dyn Subject>, String> {
    let valid = || BACKENDS.map(|b| b.0).join(", ") + ", native-gpu (its three variants)";
    match name {
        "native-host" | "native" | "host" => return Ok(Box::new(subjects::NativeHost)),
        "liboqs" | "liboqs-cpu" => return Ok(Box::new(subjects::Liboqs)),
        "openssl" | "openssl-cpu" => return Ok(Box::new(super::openssl::OpenSsl)),
        "cupqc" => {
            return super::cupqc::open(0).map_err(|e| format!("--backend cupqc: {e:#}"));
        }
        _ => {}
    }
    let variant = name
        .strip_prefix("native-gpu:")
        .and_then(Variant::parse)
        .ok_or_else(|| format!("--backend {name:?} cannot run vectors; valid: {}", valid()))?;
    if let Some(why) = gpu::no_usable_gpu(&gpu::probe()) {
        return Err(format!("--backend {name}: {why}"));
    }
    Kernels::open(0, variant)
        .map(|k| Box::new(k) as Box<dyn Subject>)
        .map_err(|e| format!("--backend {name}: {e:#}"))
}

/// One implementation's report and summary in the JSON output.
#[derive(Serialize)]
struct Entry {
    report: Report,
    suites: Vec<SuiteResult>,
}

/// Runs the vectors on `backends` (every one in [`BACKENDS`] when empty),
/// every case or the first `sample` of each group; writes the tables to
/// `out` as each implementation finishes (or the JSON at the end); exit 0
/// when no case failed, 3 when one did, 1 for an unknown backend.
pub fn run(
    backends: &[String],
    sample: Option<u32>,
    json: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<i32> {
    let plan = sample.map_or(Plan::Full, |n| Plan::Sample(n as usize));
    let names = expand(backends);
    let mut chosen = Vec::new();
    for n in &names {
        match subject(n) {
            Ok(s) => chosen.push(s),
            Err(msg) => {
                eprintln!("error: {msg}");
                return Ok(exit::ERROR);
            }
        }
    }
    run_subjects(chosen, plan, json, out)
}

/// `check --plugin PATH`: loads each plugin in a worker process (refused
/// with why on a missing symbol, another ABI version, an unknown algorithm
/// or a size that is not the standard's; a device plugin on GPU 0), says
/// what it is and runs the vectors on it there, so a plugin that crashes
/// or hangs ends its worker, not this command. Each group is a request,
/// announced on standard error as it starts; `deadline` bounds the whole
/// (each load and group answered by it, else [`VECTORS_BOUND`] a group):
/// the groups it cut are not run, and the exit code is then
/// [`exit::DEADLINE`].
///
/// [`VECTORS_BOUND`]: crate::backend::plugin::isolated::VECTORS_BOUND
pub fn run_plugins(
    paths: &[std::path::PathBuf],
    sample: Option<u32>,
    json: bool,
    deadline: Option<(std::time::Instant, f64)>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<i32> {
    use crate::backend::plugin::isolated::{Hung, PluginBackend, CALL_BOUND, VECTORS_BOUND};
    use std::time::Instant;
    let by = |bound: std::time::Duration| match deadline {
        Some((at, s)) => (at, format!("check's --deadline {s}")),
        None => (
            Instant::now() + bound,
            format!("the {} s bound", bound.as_secs()),
        ),
    };
    let passed = || deadline.is_some_and(|(at, _)| Instant::now() >= at);
    let groups = super::runner::all_groups()?;
    let mut entries = Vec::new();
    let mut cut = false;
    for p in paths {
        if passed() {
            log::warn!(
                "plugin {}: not checked: the --deadline was reached",
                p.display()
            );
            cut = true;
            continue;
        }
        let host = crate::schema::device::Device {
            kind: crate::schema::device::DeviceKind::Cpu,
            name: "host".into(),
            memory_total_mb: 0,
        };
        let plugin =
            PluginBackend::open_within(p, host, 0, deadline.map(|(at, _)| at), by(CALL_BOUND))?;
        if !json {
            writeln!(
                out,
                "{}",
                super::plugin::describe(&plugin.info, plugin.offers())
            )?;
            if let Some(g) = &plugin.gpu {
                let standin = if g.emulated {
                    " (the CPU stand-in driver: correctness only)"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "  device buffers on GPU {}, {}{standin}",
                    g.ordinal, g.device.name
                )?;
            }
        }
        let all = crate::core::catalog::Algorithm::ALL;
        let sample = sample.map(|n| n as usize);
        let plan = sample.map_or(Plan::Full, Plan::Sample);
        let name = &plugin.info.name;
        let round_trips: &[super::case::Group] = if super::plugin::has_round_trips(&plugin.info) {
            super::plugin::round_trip_groups()
        } else {
            &[]
        };
        let listed: Vec<&super::case::Group> = groups.iter().chain(round_trips).collect();
        let report = super::plugin::remote_report(&plugin.info, &all, plan, |asked| {
            let offered = |g: &&super::case::Group| plugin.offers().iter().any(|o| o.alg == g.alg);
            for g in asked
                .iter()
                .filter_map(|&i| listed.get(i).copied())
                .filter(offered)
            {
                let cases = plan.asks(g.cases.len());
                log::info!(
                    "plugin {name}: vectors of {} {} ({cases} case(s))",
                    g.source,
                    g.name
                );
            }
            let r = plugin.vectors_by(&all, sample, asked, by(VECTORS_BOUND));
            if let Err(e) = &r {
                cut |= e.downcast_ref::<Hung>().is_some() && passed();
            }
            r
        })?;
        emit(report, json, out, &mut entries)?;
    }
    let code = conclude(entries, json, out)?;
    if cut {
        if let Some((_, s)) = deadline {
            log::warn!("--deadline {s} reached: the groups and plugins it cut were not run");
        }
        return Ok(exit::DEADLINE);
    }
    Ok(code)
}

/// Writes one implementation's table (unless `json`) and keeps its entry.
fn emit(
    report: Report,
    json: bool,
    out: &mut dyn std::io::Write,
    entries: &mut Vec<Entry>,
) -> anyhow::Result<()> {
    if !json {
        writeln!(out, "{}", render(&report))?;
        out.flush()?;
    }
    entries.push(Entry {
        suites: suites(&report),
        report,
    });
    Ok(())
}

/// The JSON of every entry (with `json`); exit 0 when no case failed, 3
/// when one did.
fn conclude(entries: Vec<Entry>, json: bool, out: &mut dyn std::io::Write) -> anyhow::Result<i32> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&entries)?)?;
    }
    let failed: usize = entries.iter().map(|e| e.report.totals().2).sum();
    Ok(if failed > 0 {
        exit::SOME_FAILED
    } else {
        exit::OK
    })
}

/// Runs the vectors on each subject and writes the tables (or the JSON);
/// exit 0 when no case failed, 3 when one did.
fn run_subjects(
    chosen: Vec<Box<dyn Subject>>,
    plan: Plan,
    json: bool,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<i32> {
    let mut entries = Vec::new();
    for mut s in chosen {
        let report = run_all(s.as_mut(), plan)?;
        emit(report, json, out, &mut entries)?;
    }
    conclude(entries, json, out)
}
