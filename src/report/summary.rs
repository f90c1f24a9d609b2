//! What the report says about its input before any finding: how many files
//! and records it read (and of which kind), one line per file, the context
//! line under the title, and each run's metadata rows.

use crate::report::model::Dataset;
use crate::schema::load::LoadedRun;
use crate::schema::metadata::{MachineLoad, Metadata, SlurmRank};
use crate::schema::record::RunConfig;
use crate::schema::run_file::SweepInfo;
use std::collections::BTreeSet;

/// Ok, failed and skipped record counts.
pub struct Counts {
    /// Status ok.
    pub ok: usize,
    /// Status failed.
    pub failed: usize,
    /// Status skipped.
    pub skipped: usize,
}

/// Counts records by status.
pub fn counts(ds: &Dataset) -> Counts {
    use crate::schema::record::Status;
    let n = |s: Status| ds.entries.iter().filter(|e| e.rec.status == s).count();
    Counts {
        ok: n(Status::Ok),
        failed: n(Status::Failed),
        skipped: n(Status::Skipped),
    }
}

/// `12 measured records (2 failed, 1 skipped) across 2 run files from vm.`
pub fn file_summary(ds: &Dataset, c: &Counts) -> String {
    let hosts: BTreeSet<&str> = ds
        .runs
        .iter()
        .map(|r| r.metadata.hostname.as_str())
        .collect();
    let mut extra = vec![];
    if c.failed > 0 {
        extra.push(format!("{} failed", c.failed));
    }
    if c.skipped > 0 {
        extra.push(format!("{} skipped", c.skipped));
    }
    if !ds.symmetric.is_empty() {
        extra.push(format!("{} symmetric", ds.symmetric.len()));
    }
    if !ds.emulated.is_empty() {
        extra.push(format!(
            "{} emulated on the CPU stand-in driver, correctness only",
            ds.emulated.len()
        ));
    }
    let said = format!(
        "{} measured record{}{} across {} run file{} from {}.",
        c.ok,
        if c.ok == 1 { "" } else { "s" },
        if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join(", "))
        },
        ds.runs.len(),
        if ds.runs.len() == 1 { "" } else { "s" },
        hosts.into_iter().collect::<Vec<_>>().join(", ")
    );
    said
}

/// Which files were measured on a busy machine, or `None`.
pub fn busy_note(ds: &Dataset) -> Option<String> {
    let busy: Vec<String> = ds
        .runs
        .iter()
        .filter_map(|r| {
            let why = r.metadata.machine_load.as_ref()?.busy()?;
            Some(format!("{} ({why})", r.label))
        })
        .collect();
    (!busy.is_empty()).then(|| {
        format!(
            "The machine was busy while measuring {}: those figures are slower and noisier than on an idle machine.",
            busy.join("; ")
        )
    })
}

/// How many records are noisy, or `None`.
pub fn noisy_note(ds: &Dataset) -> Option<String> {
    let n = ds.ok().filter(|e| e.is_noisy()).count();
    (n > 0).then(|| {
        format!(
            "{n} record{} noisy (runs vary more than ±{:.0}% around their median): marked in the tables and kept out of the headline findings.",
            if n == 1 { " is" } else { "s are" },
            crate::core::stats::NOISY_RCV * 100.0
        )
    })
}

/// The machines and software, in one line per host.
pub fn context_line(ds: &Dataset) -> String {
    let mut by_host: Vec<(&str, Vec<&LoadedRun>)> = vec![];
    for r in ds.runs {
        match by_host.iter_mut().find(|(h, _)| *h == r.metadata.hostname) {
            Some((_, v)) => v.push(r),
            None => by_host.push((&r.metadata.hostname, vec![r])),
        }
    }
    let parts: Vec<String> = by_host
        .iter()
        .map(|(host, runs)| {
            let m = &runs[0].metadata;
            let gpus: BTreeSet<&str> = runs
                .iter()
                .flat_map(|r| r.metadata.gpus.iter().map(|g| g.name.as_str()))
                .collect();
            let dates: BTreeSet<&str> = runs
                .iter()
                .map(|r| r.metadata.date.get(..10).unwrap_or(&r.metadata.date))
                .collect();
            format!(
                "{host}: {} ({} logical cores, {}/{}){}, liboqs {}, {}; {} run file{} ({})",
                m.cpu,
                m.cores_logical,
                m.os,
                m.arch,
                if gpus.is_empty() {
                    String::new()
                } else {
                    format!(", {}", gpus.into_iter().collect::<Vec<_>>().join(", "))
                },
                m.liboqs_version,
                m.openssl_version,
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                dates.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let lead = if parts.len() == 1 {
        "Single machine"
    } else {
        "Several machines"
    };
    format!("{lead}. {}.", parts.join(". "))
}

/// A row of the metadata table: `(name, value)`.
type MetaRow = (String, String);

/// Which vector suites the code behind each measured backend passed:
/// `backend[:variant]: ACVP … + Wycheproof …, P/N passed`, or "not run"
/// for a backend the file has no vectors for (every backend of an older
/// file).
fn vectors_row(run: &LoadedRun) -> Option<MetaRow> {
    let mut backends: Vec<&str> = run
        .records
        .iter()
        .map(|(_, r)| r.backend.as_str())
        .collect();
    backends.sort_unstable();
    backends.dedup();
    let mut each = vec![];
    for b in backends {
        let mut found = run
            .vectors
            .iter()
            .filter(|(_, v)| v.backend == b)
            .peekable();
        if found.peek().is_none() {
            each.push(format!("{b}: not run"));
        }
        for (_, v) in found {
            each.push(format!("{}: {}", v.name(), v.line()));
        }
    }
    (!each.is_empty()).then(|| ("Known-answer vectors".into(), each.join("; ")))
}

/// What each plugin behind the file's records is: `plugin-NAME: VERSION,
/// ABI N, host|device memory, SHA-256 <first 16 hex digits>…, PATH`.
fn plugins_row(run: &LoadedRun) -> Option<MetaRow> {
    let mut each: Vec<String> = run
        .records
        .iter()
        .filter_map(|(_, r)| r.plugin.as_ref().map(|p| (r.backend.as_str(), p)))
        .map(|(b, p)| {
            format!(
                "{b}: {} {}, ABI {}, {} memory, SHA-256 {}…, {}{}",
                p.name,
                p.version,
                p.abi(),
                p.memory.name(),
                p.sha256.get(..16).unwrap_or(&p.sha256),
                p.path,
                p.own_randomness_text()
                    .map_or(String::new(), |t| format!(", {t}"))
            )
        })
        .collect();
    each.sort();
    each.dedup();
    (!each.is_empty()).then(|| ("Plugins".into(), each.join("; ")))
}

/// The metadata and settings of one file as (name, value) rows: the
/// machine, its GPUs and Slurm rank, how the run ended and how busy the
/// machine was, then the settings.
pub fn metadata_rows(run: &LoadedRun) -> Vec<MetaRow> {
    let m = &run.metadata;
    let mut v = vec![("Source file".into(), run.path.display().to_string())];
    v.extend(machine_rows(m));
    v.extend(gpu_rows(m));
    v.extend(m.slurm.as_ref().map(slurm_row));
    v.push(("Run".into(), run_state(run).into()));
    v.extend(m.machine_load.as_ref().map(load_row));
    v.push(("Schema version".into(), run.schema_version.to_string()));
    match &run.config {
        Some(c) => v.extend(settings_rows(c, run.sweep.as_ref())),
        None => v.push(("Settings".into(), "not readable in this file".into())),
    }
    if !run.floor.is_empty() {
        let each: Vec<String> = run
            .floor
            .iter()
            .map(|(_, f)| {
                format!(
                    "{} {}t {}{}",
                    f.backend,
                    f.threads,
                    crate::core::units::time_ms(f.seconds * 1000.0),
                    f.launches_per_s.map_or(String::new(), |r| format!(
                        " ({} empty launches/s)",
                        crate::core::units::grouped(r)
                    ))
                )
            })
            .collect();
        v.push(("Floor (median empty window)".into(), each.join(", ")));
    }
    v.extend(plugins_row(run));
    v.extend(vectors_row(run));
    v.push((
        "Records".into(),
        format!(
            "{} readable, {} symmetric",
            run.records.len(),
            run.symmetric.len()
        ),
    ));
    v
}

/// The host, its CPU, memory and system, and the software that measured.
fn machine_rows(m: &Metadata) -> Vec<MetaRow> {
    let or_unknown = |s: String| {
        if s.is_empty() {
            "not recorded (older run file)".to_string()
        } else {
            s
        }
    };
    vec![
        ("Host".into(), m.hostname.clone()),
        ("Started (UTC)".into(), m.date.clone()),
        ("CPU".into(), m.cpu.clone()),
        (
            "Cores".into(),
            format!(
                "{} logical{}",
                m.cores_logical,
                m.cores_physical
                    .map(|p| format!(", {p} physical"))
                    .unwrap_or_default()
            ),
        ),
        ("Memory".into(), format!("{} MiB", m.memory_total_mb)),
        (
            "OS / arch".into(),
            format!("{} / {} (kernel {})", m.os, m.arch, m.kernel),
        ),
        ("liboqs".into(), m.liboqs_version.clone()),
        ("OpenSSL".into(), m.openssl_version.clone()),
        (
            "pqcprof".into(),
            format!(
                "{} (commit {}, {} build, {})",
                m.pqcprof_version, m.git_commit, m.profile, m.rustc
            ),
        ),
        ("C compiler".into(), or_unknown(m.c_compiler.clone())),
        (
            "OpenSSL providers".into(),
            or_unknown(m.openssl_providers.join(", ")),
        ),
        ("Timer".into(), or_unknown(m.timer.clone())),
    ]
}

/// The CUDA and NVIDIA drivers and each GPU, where recorded.
fn gpu_rows(m: &Metadata) -> Vec<MetaRow> {
    let mut v = vec![];
    if let Some(d) = &m.cuda_driver {
        v.push(("CUDA driver API".into(), d.clone()));
    }
    if let Some(d) = &m.nvidia_driver {
        v.push(("NVIDIA driver".into(), d.clone()));
    }
    for g in &m.gpus {
        v.push((
            format!("GPU {}", g.ordinal),
            format!(
                "{}, compute capability {}.{}, {} MiB",
                g.name, g.compute_capability.0, g.compute_capability.1, g.memory_total_mb
            ),
        ));
    }
    v
}

/// The Slurm job and rank the run was one of.
fn slurm_row(r: &SlurmRank) -> MetaRow {
    (
        "Slurm rank".into(),
        format!(
            "job {}, {}rank {}{} on {}{}",
            r.job_id,
            r.role
                .as_deref()
                .map(|x| format!("{x} "))
                .unwrap_or_default(),
            r.procid,
            r.ntasks.map(|n| format!(" of {n}")).unwrap_or_default(),
            r.node,
            r.cuda_visible_devices
                .as_deref()
                .map(|c| format!(", CUDA_VISIBLE_DEVICES={c}"))
                .unwrap_or_default()
        ),
    )
}

/// Whether the run finished, was interrupted, or was still going.
fn run_state(run: &LoadedRun) -> &'static str {
    match (run.complete, run.interrupted) {
        (true, false) => "complete",
        (_, true) => "interrupted by Ctrl-C: finished records only",
        (false, false) => "incomplete: the run had not finished when this was written",
    }
}

/// Other processes' CPU time and the load average over the run.
fn load_row(l: &MachineLoad) -> MetaRow {
    let pct = l
        .other_processes_cpu_pct
        .map(|p| format!("other processes {p:.0}% of all CPU time"))
        .unwrap_or_else(|| "other processes' CPU time unknown".into());
    let avg = |x: Option<f64>| x.map_or("?".to_string(), |v| format!("{v:.2}"));
    (
        "Machine load".into(),
        format!(
            "{pct} over {:.0} s; load average {} to {} on {} cores{}",
            l.seconds,
            avg(l.load_average_start),
            avg(l.load_average_end),
            l.cores,
            if l.busy().is_some() { " (busy)" } else { "" }
        ),
    )
}

/// The command and the settings it ran with; a sweep times windows, so
/// runs, batch and sampler do not apply to it.
fn settings_rows(c: &RunConfig, sweep: Option<&SweepInfo>) -> Vec<MetaRow> {
    let mut v = vec![("Command".into(), c.command_line.join(" "))];
    match sweep {
        Some(sw) => {
            v.push((
                "Warm-up / window per operation".into(),
                format!("{} s / {} s", sw.warmup_seconds, sw.window_seconds),
            ));
            v.push((
                "Sweep wall time".into(),
                format!("{:.1} s", sw.wall_seconds),
            ));
        }
        None => v.push((
            "Runs / warm-up / batch".into(),
            format!("{} / {} / {}", c.runs, c.warmup_runs, c.batch),
        )),
    }
    v.push((
        "Threads".into(),
        c.threads
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    ));
    v.push((
        "Message / context".into(),
        format!(
            "{} bytes of 0xAB / {}",
            c.message_bytes,
            if c.context_hex.is_empty() {
                "empty".to_string()
            } else {
                c.context_hex.clone()
            }
        ),
    ));
    if sweep.is_none() {
        v.push((
            "Sampler period".into(),
            format!("{} ms", c.sample_period_ms),
        ));
    }
    v.push(("Randomness".into(), c.randomness.clone()));
    v
}
