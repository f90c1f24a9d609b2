//! `pqcprof bench`, `cpu` and `gpu`: the arguments checked
//! ([`crate::cmd::bench_args`]), the plan built by
//! [`crate::measure::builder`] (which backends on which devices, opened
//! there), the session run, and the summary printed with the exit code.

use crate::backend::cupqc;
use crate::backend::liboqs;
use crate::backend::native_gpu;
use crate::cmd::bench_args::BenchArgs;
use crate::cmd::check::verdicts;
use crate::cmd::stdout;
use crate::cmd::tables::{kernel_table, summary_table};
use crate::core::batching::BatchRequest;
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::core::exit;
use crate::core::exit::Usage;
use crate::measure::builder::{self, want_backend, BenchOptions, Readiness, DEFAULT_CPU_BATCH};
use crate::measure::session::{self, Slot};
use crate::probe::gpu::{self, GpuProbe};
use crate::probe::system;
use crate::schema::record::exit_for_failures;
use crate::schema::record::{RunConfig, Status};
use crate::schema::run_file::RunFile;
use anyhow::bail;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Host bytes one operation's buffers need in a CPU batch (inputs and outputs).
fn host_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    match (alg.kind(), op) {
        (_, Operation::KeyGen) => s.public_key_bytes + s.secret_key_bytes,
        (Kind::Kem, _) => 2 * (s.ciphertext_bytes.unwrap_or(0) + 32),
        (Kind::Signature, _) => s.signature_bytes.unwrap_or(0) + 16 + message / 1024,
    }
}

/// Refuses a CPU batch whose buffers would take more than half the RAM.
fn check_host_memory(opts: &BenchOptions, batch: usize, total_mb: u64) -> anyhow::Result<()> {
    let worst = opts
        .algorithms
        .iter()
        .flat_map(|&a| a.operations().into_iter().map(move |o| (a, o)))
        .filter(|(_, o)| opts.operations.is_empty() || opts.operations.contains(o))
        .map(|(a, o)| host_bytes_per_op(a, o, opts.message_size))
        .max()
        .unwrap_or(1);
    let budget = total_mb as u128 * 1024 * 1024 / 2;
    let need = worst as u128 * batch as u128;
    if need > budget {
        let fits = (budget / worst as u128) as usize;
        let option = match opts.batch {
            BatchRequest::Sweep(_) => "--batch-sweep",
            _ => "--batch",
        };
        bail!(
            "invalid {option} {batch}: its buffers need about {} MiB, more than half of this machine's {total_mb} MiB; at most {fits} fits",
            need / (1024 * 1024)
        );
    }
    Ok(())
}

/// `bench` (every backend asked for), `cpu` (`only` liboqs) and `gpu` (`only`
/// the GPU backends): measures, prints the summary, returns the exit code.
pub fn bench(args: &BenchArgs, only: Option<&[&str]>) -> anyhow::Result<i32> {
    // The deadline counts from here: opening the backends (NVRTC) included.
    let started = std::time::Instant::now();
    let mut opts = options(args, only)?;
    let out = crate::write::output::ensure_writable_dir(&opts.out)?;
    let host = system::host();
    let cpu_batch = match &opts.batch {
        BatchRequest::List(v) => v.first().copied().unwrap_or(DEFAULT_CPU_BATCH),
        _ => DEFAULT_CPU_BATCH,
    };
    if want_backend(&opts, liboqs::NAME) {
        check_host_memory(
            &opts,
            builder::largest_cpu_batch(&opts.batch),
            host.memory_total_mb,
        )
        .map_err(usage)?;
    }

    // A CPU-only run never loads a GPU library: a broken or hung driver on
    // the loader path cannot stop it.
    let wants_gpu =
        want_backend(&opts, native_gpu::NAME) || want_backend(&opts, cupqc::BACKEND_NAME);
    let gpu = if wants_gpu {
        gpu::probe()
    } else {
        log::debug!("no GPU backend asked for: the GPU libraries are not loaded");
        gpu::not_probed()
    };
    let meta = system::collect(wants_gpu.then_some(&gpu));
    let ordinals = if wants_gpu {
        let listed: Vec<usize> = gpu.gpus.iter().map(|g| g.ordinal).collect();
        opts.devices.resolve(&listed).map_err(usage)?
    } else {
        vec![]
    };
    if let [one] = ordinals.as_slice() {
        opts.device = *one;
    }
    let ready = if wants_gpu {
        readiness(&gpu)
    } else {
        Readiness::default()
    };
    let mut slots = builder::slots(&opts, &gpu, &host, &ordinals, &ready)?;
    log_slots(&slots);
    builder::check_sweep_top(&mut slots, &opts).map_err(usage)?;
    let settings = builder::backend_settings(&slots, &opts);
    let config = run_config(&opts, cpu_batch, settings);
    let mut plan = builder::plan(&opts, slots, cpu_batch)?;
    plan.measure.timing.deadline = opts
        .deadline_s
        .map(|s| (started + std::time::Duration::from_secs_f64(s), s));
    let cancel = Arc::new(AtomicBool::new(false));
    crate::measure::signals::install(cancel.clone());
    let mut run = RunFile::new(meta, config);
    run.vectors = run_vectors(&plan, &opts, args.measure.vectors);
    let warned_busy = warn_if_busy_now();
    let outcome = session::run(plan, run, &out, &cancel)?;
    conclude(&outcome, &opts, only, &out, warned_busy)
}

/// Warns, before measuring, when the load average is already above the
/// cores; returns whether it did (the run's end warns otherwise, from the
/// whole run's figures).
fn warn_if_busy_now() -> bool {
    match system::LoadMeter::start().now().busy() {
        Some(why) => {
            log::warn!("{}", busy_warning(&why));
            true
        }
        None => false,
    }
}

/// The vectors of the measured parameter sets on the code behind each
/// backend ready to measure: every case on liboqs, a sample on the native
/// kernel variant asked for (each variant when none was). None in a
/// `--fresh-process` child: its parent ran them.
fn run_vectors(
    plan: &crate::measure::plan::Plan,
    opts: &BenchOptions,
    extent: crate::vectors::record::Extent,
) -> Vec<crate::schema::vectors::BackendVectors> {
    if opts.fresh_child {
        return vec![];
    }
    let variants = match opts.kernel {
        Some(v) => vec![v],
        None => crate::backend::native_gpu::sizing::Variant::ALL.to_vec(),
    };
    let mut out = vec![];
    for slot in &plan.slots {
        if let crate::measure::plan::Slot::Ready { backend, .. } = slot {
            let name = backend.name();
            if out
                .iter()
                .any(|v: &crate::schema::vectors::BackendVectors| v.backend == name)
            {
                continue;
            }
            if let Some(info) = backend.plugin() {
                let device = info.memory == crate::schema::plugin::Memory::Device;
                let algs: Vec<_> = plan
                    .algorithms
                    .iter()
                    .copied()
                    .filter(|&a| a.operations().iter().any(|&op| backend.supports(a, op)))
                    .collect();
                out.extend(crate::vectors::record::for_plugin(
                    name,
                    &algs,
                    device,
                    extent,
                    &info,
                    |sample, groups| {
                        backend
                            .plugin_vectors(&algs, sample, groups)
                            .unwrap_or_else(|| Err(anyhow::anyhow!("not a plugin")))
                    },
                ));
            } else {
                out.extend(crate::vectors::record::for_backend(
                    name,
                    &plan.algorithms,
                    &variants,
                    opts.device,
                    extent,
                ));
            }
        }
    }
    out
}

/// What `check` says of the GPU backends, for the plan's slots.
fn readiness(gpu: &GpuProbe) -> Readiness {
    let verdicts = verdicts(gpu);
    let not_ready = |name: &str| {
        verdicts
            .iter()
            .find(|v| v.backend == name && !v.ready)
            .map(|v| v.detail.clone())
    };
    Readiness {
        native: not_ready(native_gpu::NAME),
        cupqc: not_ready(cupqc::BACKEND_NAME),
        any_gpu: verdicts
            .iter()
            .any(|v| v.ready && v.backend != liboqs::NAME),
    }
}

/// Says, as debug lines, what each backend asked for will do.
fn log_slots(slots: &[Slot]) {
    for slot in slots {
        match slot {
            Slot::Ready {
                backend,
                threads,
                batches,
                ..
            } => log::debug!(
                "backend {}: ready on {}, threads {threads:?}, batches {}",
                backend.name(),
                backend.device().name,
                batches.describe(backend.calibrates_default_batch())
            ),
            Slot::MultiDevice(m) => log::debug!(
                "backend {}: on GPUs {:?} at once, batch {} each",
                m.name,
                m.ordinals,
                m.batch
            ),
            Slot::NotReady { name, reason } => {
                log::debug!("backend {name}: not ready: {reason}")
            }
        }
    }
}

/// `e`, a value the command line gave that this machine or the other
/// values cannot take, as a usage error (exit 2).
fn usage(e: anyhow::Error) -> anyhow::Error {
    Usage(format!("{e:#}")).into()
}

/// The validated options, with `cpu`'s and `gpu`'s backends filled in.
fn options(args: &BenchArgs, only: Option<&[&str]>) -> anyhow::Result<BenchOptions> {
    let mut opts = args.validate()?;
    fitting(args, only, &mut opts).map_err(usage)?;
    Ok(opts)
}

/// The backends `cpu` and `gpu` run, and the GPU options of a run on the
/// CPU backend only refused.
fn fitting(args: &BenchArgs, only: Option<&[&str]>, opts: &mut BenchOptions) -> anyhow::Result<()> {
    if let Some(names) = only {
        // `cpu` and `gpu` also take plugins (plugin:PATH): the plugin's
        // descriptor says where it runs (host or device memory).
        let plugin = |b: &str| b.starts_with(crate::backend::plugin::PREFIX);
        if opts
            .backends
            .iter()
            .any(|b| !names.contains(&b.as_str()) && !plugin(b))
        {
            bail!(
                "this command runs only {}; use `pqcprof bench --backend ...` for others",
                names.join(", ")
            );
        }
        if opts.backends.is_empty() {
            opts.backends = names.iter().map(|n| n.to_string()).collect();
        }
    }
    let cpu_only = opts.backends.iter().all(|b| b == liboqs::NAME) && !opts.backends.is_empty();
    if opts.cold_cache && cpu_only {
        bail!("--cache cold: only GPU backends flush their L2 between runs, and this command runs liboqs-cpu only; use `pqcprof gpu` or `pqcprof bench`");
    }
    if let Some(d) = &args.gpu.device {
        if cpu_only {
            bail!("--device {d}: only GPU backends use a device, and this command runs liboqs-cpu only; use `pqcprof gpu` or `pqcprof bench`");
        }
    }
    Ok(())
}

/// The run file's `config`: the settings the whole run was made with.
fn run_config(
    opts: &BenchOptions,
    cpu_batch: usize,
    per_backend: Vec<crate::schema::record::BackendSettings>,
) -> RunConfig {
    RunConfig {
        command_line: std::env::args().collect(),
        runs: opts.runs,
        // One warm-up always runs before the gate (a fresh child runs none:
        // its parent warmed up and passed the gate).
        warmup_runs: if opts.fresh_child {
            0
        } else {
            opts.warmup.max(1)
        },
        batch: cpu_batch,
        threads: opts.threads.clone(),
        message_bytes: opts.message_size,
        context_hex: opts.context_hex.to_ascii_lowercase(),
        sample_period_ms: opts.sample_period_ms.unwrap_or(builder::HOST_PERIOD_MS),
        randomness: "liboqs-cpu: liboqs's RNG inside each call (system randomness), as its speed tools; native-gpu: seeds, m and rnd from ChaCha20 seeded by the OS, generated before timing; cupqc: entropy from ChaCha20 seeded by the OS, generated on the host and copied to the GPU before timing".into(),
        backends: opts.backends.clone(),
        algorithms: opts.algorithms.clone(),
        operations: opts.operations.clone(),
        per_backend,
        batch_sweep: matches!(opts.batch, BatchRequest::Sweep(_)),
    }
}

/// Prints the summary and the paths of the files written; warns when
/// the machine was busy; returns the exit code.
fn conclude(
    outcome: &session::Outcome,
    opts: &BenchOptions,
    only: Option<&[&str]>,
    out: &std::path::Path,
    warned_busy: bool,
) -> anyhow::Result<i32> {
    let mut text = summary_table(&outcome.run);
    if let Some(t) = kernel_table(&outcome.run.records) {
        text += &format!("\n{t}");
    }
    text += &format!("Run file: {}\n", outcome.run_file.display());
    let emulated = outcome.run.records.iter().any(|r| r.emulated);
    if emulated {
        text += "GPU records were made on pqcprof's CPU stand-in driver (emulated, not a GPU): they prove correctness only, their timings mean nothing, and they are kept out of the cuPQC-shaped files\n";
    }
    for line in written_views(outcome, out) {
        text += &line;
        text.push('\n');
    }
    stdout::print(text)?;
    if !warned_busy {
        if let Some(why) = outcome
            .run
            .metadata
            .machine_load
            .as_ref()
            .and_then(|l| l.busy())
        {
            log::warn!("{}", busy_warning(&why));
        }
    }
    let measured = outcome
        .run
        .records
        .iter()
        .filter(|r| r.status == Status::Ok)
        .count();
    if outcome.interrupted {
        log::warn!(
            "interrupted; finished records are in {}",
            outcome.run_file.display()
        );
        return Ok(exit::INTERRUPTED);
    }
    // A failed gate is exit 3 whatever else happened: "not ready" is only
    // for a run where nothing failed and nothing was measured.
    let code = exit_for_failures(&outcome.run.records);
    let cut: Vec<&crate::schema::record::Record> = outcome
        .run
        .records
        .iter()
        .filter(|r| r.cut.is_some())
        .collect();
    for r in &cut {
        log::warn!(
            "{} {} {} batch {}: {}",
            r.backend,
            r.algorithm,
            r.operation,
            r.batch,
            r.cut.as_deref().unwrap_or("")
        );
    }
    let by_deadline = outcome.deadline_reached
        || cut
            .iter()
            .any(|r| r.cut.as_deref().is_some_and(|c| c.contains("--deadline")));
    // Kernels not compiled within --deadline or --max-seconds: their
    // records are skipped with the reason, and the command was cut.
    let not_compiled = outcome.run.records.iter().any(|r| {
        r.status == Status::Skipped
            && r.reason
                .as_deref()
                .is_some_and(|c| c.contains(native_gpu::bounded_compile::NOT_IN_TIME))
    });
    if code == exit::OK && (by_deadline || not_compiled) {
        return Ok(exit::DEADLINE);
    }
    if code == exit::OK && measured == 0 && (only.is_some() || !opts.backends.is_empty()) {
        log::error!(
            "nothing was measured: the backends asked for are not ready (see `pqcprof check`)"
        );
        return Ok(exit::NOT_READY);
    }
    Ok(code)
}

/// The one line that says the machine was busy while measuring, and why.
fn busy_warning(why: &str) -> String {
    format!("the machine was busy while measuring ({why}): figures may be slower and noisier than on a quiet machine (the run file's metadata.machine_load has the figures)")
}

/// Where the cuPQC-shaped files this run wrote are, one line each: the
/// headline files its run file is named for in the folder's
/// `headline-sources.json` (a later batch sweep leaves a benchmark's
/// alone; a run without the folder's lock writes none), then each
/// folder's `batch-<n>/` folders when it measured several batches.
fn written_views(outcome: &session::Outcome, out: &std::path::Path) -> Vec<String> {
    use crate::measure::views::{view_dir, HeadlineSource, HEADLINE_SOURCES};
    let me = outcome
        .run_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sources: std::collections::BTreeMap<String, HeadlineSource> =
        std::fs::read(out.join(HEADLINE_SOURCES))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
    let mut lines: Vec<String> = sources
        .iter()
        .filter(|(_, s)| s.run_file == me)
        .map(|(rel, _)| format!("cuPQC-shaped file: {}", out.join(rel).display()))
        .collect();
    if lines.is_empty() {
        return lines;
    }
    let mut batches: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for r in outcome
        .run
        .records
        .iter()
        .filter(|r| r.status == Status::Ok && !r.emulated)
    {
        let b = batches.entry(view_dir(r)).or_default();
        if !b.contains(&r.batch) {
            b.push(r.batch);
        }
    }
    for (dir, mut b) in batches.into_iter().filter(|(_, b)| b.len() > 1) {
        b.sort_unstable();
        let folders: Vec<String> = b
            .iter()
            .map(|n| {
                out.join(&dir)
                    .join(format!("batch-{n}"))
                    .display()
                    .to_string()
            })
            .collect();
        lines.push(format!("Per-batch folders: {}", folders.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_batches_are_refused_with_the_limit() {
        let o = BenchOptions {
            algorithms: vec![Algorithm::MlDsa87],
            operations: vec![],
            backends: vec![],
            batch: BatchRequest::Default,
            runs: 1,
            until_noise: None,
            warmup: 1,
            threads: vec![1],
            message_size: 1024,
            context: vec![],
            device: 0,
            devices: crate::measure::builder::DeviceSelection::One(0),
            sample_period_ms: None,
            latency: false,
            cold_cache: false,
            kernel: None,
            max_seconds: None,
            deadline_s: None,
            launch_target_s: 0.1,
            out: "x".into(),
            started: std::time::Instant::now(),
            context_hex: String::new(),
            fresh_process: false,
            fresh_child: false,
            gate: Default::default(),
        };
        assert!(check_host_memory(&o, 1000, 1024).is_ok());
        let e = check_host_memory(&o, 10_000_000, 1024)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--batch 10000000") && e.contains("at most"),
            "{e}"
        );
    }
}
