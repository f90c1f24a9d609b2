//! The cuPQC-shaped views of a run file: which records each folder's
//! files show (`headline_records`), where they go (one folder per backend
//! and thread count, `batch-<n>/` below it, cuPQC_benchmark's own paths),
//! and which run's headline a later batch sweep must leave alone
//! (`HEADLINE_SOURCES`).

use crate::core::catalog::Family;
use crate::schema::device::DeviceKind;
use crate::schema::record::{Record, Status};
use crate::schema::run_file::RunFile;
use crate::write::cupqc_json;
use crate::write::output::{write_atomic, write_json};
use std::path::{Path, PathBuf};

/// Folder of one backend's cuPQC-shaped files: `liboqs-cpu-2t`, `native-gpu`.
pub fn view_dir(rec: &Record) -> String {
    match rec.device.kind {
        DeviceKind::Cpu => format!("{}-{}t", rec.backend, rec.threads),
        DeviceKind::Gpu => rec.backend.clone(),
    }
}

/// GPU backends whose views are also written where cuPQC_benchmark writes
/// its own (`outputs/ml*_results.json`, `outputs/latency/ml*_latency.json`),
/// so scripts made for cuPQC_benchmark read them unchanged; the first with a
/// view wins: cuPQC (what cuPQC_benchmark measures), then our own kernels.
pub const SEED_LAYOUT_BACKENDS: [&str; 2] = [
    crate::backend::cupqc::BACKEND_NAME,
    crate::backend::native_gpu::NAME,
];

/// Beside a plugin backend's cuPQC-shaped files: the plugin behind them
/// (name, version, ABI version, the library's SHA-256, memory kind, path).
pub const PLUGIN_FILE: &str = "plugin.json";

/// Which run wrote each headline cuPQC-shaped file of a folder, so that a
/// later batch sweep never replaces a benchmark's headline with its own
/// batches: `headline-sources.json` beside the run files.
pub const HEADLINE_SOURCES: &str = "headline-sources.json";

/// Where one headline file came from (an entry of `HEADLINE_SOURCES`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeadlineSource {
    /// The run file (its name in the folder) whose records the file holds.
    pub run_file: String,
    /// True when that run was a batch sweep (`--batch-sweep`): its
    /// headline is each record's largest batch, and a benchmark's
    /// headline takes precedence over it.
    pub batch_sweep: bool,
}

/// The records a view of one folder shows: for each (algorithm,
/// operation, mode) the record at the largest batch that passed (the
/// benchmark's one batch, or a sweep's top), the later one where a batch
/// was measured twice; failed and skipped records stay as they are (the
/// view leaves them out).
fn headline_records<'a>(recs: &[&'a Record]) -> Vec<&'a Record> {
    let mut out: Vec<&'a Record> = vec![];
    for r in recs.iter().copied().filter(|r| r.status == Status::Ok) {
        let same = |o: &&Record| {
            o.algorithm == r.algorithm && o.operation == r.operation && o.mode == r.mode
        };
        match out.iter().position(same) {
            Some(i) if out[i].batch <= r.batch => out[i] = r,
            Some(_) => {}
            None => out.push(r),
        }
    }
    out
}

/// One cuPQC-shaped file to write.
struct View {
    /// The folder of its backend (`view_dir`).
    dir: String,
    /// Its path below that folder.
    rel: PathBuf,
    /// Its content.
    value: serde_json::Value,
    /// Decimals its figures are printed with.
    decimals: usize,
    /// A folder's headline file (not a `batch-<n>/` one).
    headline: bool,
}

impl View {
    fn bytes(&self) -> Vec<u8> {
        cupqc_json::to_fixed_json(&self.value, self.decimals)
    }
}

/// Rewrites the run file and every cuPQC-shaped view: one folder per
/// backend (and thread count) holding the headline measurement of each
/// record (see `headline_records`), `<folder>/batch-<n>/` for every batch
/// where the run measured several, plus cuPQC_benchmark's own paths for
/// the first of `SEED_LAYOUT_BACKENDS` that has the view. A batch-sweep run
/// leaves a headline file alone where a benchmark run wrote it
/// (`HEADLINE_SOURCES` says which run did).
pub fn write_all(out: &Path, run_file: &Path, run: &RunFile) -> anyhow::Result<()> {
    write_json(run_file, run)?;
    let views = views_of(run);
    let mut headlines = Headlines::read(out, run_file, run);
    for v in &views {
        let path = Path::new(&v.dir).join(&v.rel);
        if v.headline {
            headlines.write(out, &path, &v.bytes())?;
        } else {
            write_atomic(&out.join(path), &v.bytes())?;
        }
    }
    let mut seeded: Vec<&PathBuf> = vec![];
    for backend in SEED_LAYOUT_BACKENDS {
        for v in views.iter().filter(|v| v.headline && v.dir == backend) {
            if !seeded.contains(&&v.rel) {
                headlines.write(out, &v.rel, &v.bytes())?;
                seeded.push(&v.rel);
            }
        }
    }
    headlines.save()
}

/// Every view of `run`: the records made on the CPU stand-in driver are
/// not GPU measurements and stay in the run file only; over several GPUs,
/// the views hold the first device's records.
fn views_of(run: &RunFile) -> Vec<View> {
    let first_gpu = run.records.iter().filter_map(|r| r.gpu_ordinal).min();
    let real: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| !r.emulated)
        .filter(|r| r.gpu_ordinal.is_none() || r.gpu_ordinal == first_gpu)
        .collect();
    let mut dirs: Vec<String> = real.iter().map(|r| view_dir(r)).collect();
    dirs.sort();
    dirs.dedup();
    let mut views = vec![];
    for dir in dirs {
        let recs: Vec<&Record> = real
            .iter()
            .copied()
            .filter(|r| view_dir(r) == dir)
            .collect();
        add_views(
            &mut views,
            &dir,
            Path::new(""),
            &headline_records(&recs),
            true,
        );
        // A plugin's folder says which library made its figures.
        if let Some(info) = recs.iter().find_map(|r| r.plugin.as_ref()) {
            views.push(View {
                dir: dir.clone(),
                rel: PathBuf::from(PLUGIN_FILE),
                value: serde_json::to_value(info).unwrap_or_default(),
                decimals: 0,
                headline: false,
            });
        }
        let mut batches: Vec<usize> = recs
            .iter()
            .filter(|r| r.status == Status::Ok)
            .map(|r| r.batch)
            .collect();
        batches.sort_unstable();
        batches.dedup();
        if batches.len() > 1 {
            for b in batches {
                let at: Vec<&Record> = recs.iter().copied().filter(|r| r.batch == b).collect();
                let below = PathBuf::from(format!("batch-{b}"));
                add_views(&mut views, &dir, &below, &headline_records(&at), false);
            }
        }
    }
    views
}

/// The throughput and latency views of `recs` for both families, below
/// `below` in `dir`.
fn add_views(views: &mut Vec<View>, dir: &str, below: &Path, recs: &[&Record], headline: bool) {
    for family in [Family::MlKem, Family::MlDsa] {
        if let Some(value) = cupqc_json::throughput_view(recs, family) {
            views.push(View {
                dir: dir.into(),
                rel: below.join(cupqc_json::results_file_name(family)),
                value,
                decimals: cupqc_json::THROUGHPUT_DECIMALS,
                headline,
            });
        }
        if let Some(value) = cupqc_json::latency_view(recs, family) {
            views.push(View {
                dir: dir.into(),
                rel: below
                    .join("latency")
                    .join(cupqc_json::latency_file_name(family)),
                value,
                decimals: cupqc_json::LATENCY_DECIMALS,
                headline,
            });
        }
    }
}

/// The folder's `HEADLINE_SOURCES` and this run's entry: a benchmark's
/// headline stays until another benchmark replaces it.
struct Headlines {
    path: PathBuf,
    sources: std::collections::BTreeMap<String, HeadlineSource>,
    me: HeadlineSource,
}

impl Headlines {
    fn read(out: &Path, run_file: &Path, run: &RunFile) -> Headlines {
        let path = out.join(HEADLINE_SOURCES);
        let sources = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let me = HeadlineSource {
            run_file: run_file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            batch_sweep: run.config.batch_sweep,
        };
        Headlines { path, sources, me }
    }

    /// Writes the headline file `rel` of `out` unless a benchmark's
    /// headline there must stay (this run is a batch sweep, that one was
    /// not, and it was another run).
    fn write(&mut self, out: &Path, rel: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        let key = rel.to_string_lossy().into_owned();
        let keep = self.sources.get(&key).is_some_and(|s| {
            self.me.batch_sweep && !s.batch_sweep && s.run_file != self.me.run_file
        });
        if !keep {
            write_atomic(&out.join(rel), bytes)?;
            self.sources.insert(key, self.me.clone());
        }
        Ok(())
    }

    fn save(&self) -> anyhow::Result<()> {
        if !self.sources.is_empty() {
            write_json(&self.path, &self.sources)?;
        }
        Ok(())
    }
}
