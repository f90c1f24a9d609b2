//! `pqcprof offload`'s files: the run file and the CSV of its points,
//! opened before the first point, saved after each, and closed with the
//! run's figures and the exit code.

use super::curve::Curve;
use super::gpu::ServedOn;
use super::planner::Point;
use super::request::{Request, Settings};
use crate::backend::cupqc;
use crate::backend::native_gpu;
use crate::probe::system;
use crate::schema::offload::{kept_up, OffloadRun};
use crate::schema::record::RunConfig;
use crate::schema::run_file::RunFile;
use std::path::{Path, PathBuf};

/// The run file being written, and the CSV of its points beside it,
/// saved after every point.
pub struct Saved {
    /// The run file.
    pub path: PathBuf,
    /// The CSV of its points.
    pub csv: PathBuf,
    /// What it holds.
    pub run: RunFile,
}

impl Saved {
    /// Writes the run file and the CSV.
    pub fn save(&self) -> anyhow::Result<()> {
        crate::measure::signals::saving(&self.path, || {
            crate::write::output::write_json(&self.path, &self.run)
        })?;
        let o = self.run.offload.as_ref().expect("an offload run file");
        crate::measure::signals::saving(&self.csv, || {
            crate::write::output::write_atomic(
                &self.csv,
                crate::write::offload_csv::render(o).as_bytes(),
            )
        })
    }
    /// The run file's offload block.
    pub fn offload(&mut self) -> &mut OffloadRun {
        self.run.offload.as_mut().expect("an offload run file")
    }
}

/// The run's closing figures saved, and the exit code that says how the
/// points ended.
pub fn finish(saved: &mut Saved, stopped: Option<Stop>) -> anyhow::Result<i32> {
    let o = saved.offload();
    o.max_rate_under_slo = o
        .points
        .iter()
        .filter(|p| kept_up(p) && p.meets_slo == Some(true))
        .map(|p| p.offered_rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    o.stopped = stopped.as_ref().map(|s| s.to_string());
    saved.run.complete = true;
    saved.run.interrupted = matches!(stopped, Some(Stop::Interrupted));
    saved.save()?;
    Ok(match stopped {
        None => crate::core::exit::OK,
        Some(Stop::Deadline) => crate::core::exit::DEADLINE,
        Some(Stop::Interrupted) => crate::core::exit::INTERRUPTED,
        Some(Stop::Failed(_)) => crate::core::exit::SOME_FAILED,
    })
}

/// The run file, reserved in `out` with the batch times measured and no
/// point yet, and the CSV beside it.
pub fn open_run_file(
    args: &Settings,
    req: Request,
    out: &Path,
    curve: &Curve,
    queue_limit: Option<usize>,
    predicted_top: Option<Point>,
    served_on: &ServedOn,
) -> anyhow::Result<Saved> {
    let config = RunConfig {
        command_line: std::env::args().collect(),
        runs: 1,
        warmup_runs: 1,
        batch: curve.max_batch(),
        threads: vec![args.threads as usize],
        message_bytes: args.message_size,
        context_hex: String::new(),
        sample_period_ms: 0.0,
        randomness: if args.backend == native_gpu::NAME {
            "native-gpu: every input generated on the host before timing (seeds, messages, rnd)"
                .into()
        } else if args.backend == cupqc::BACKEND_NAME {
            "cupqc: entropy generated on the host (ChaCha20 seeded by the OS) before timing".into()
        } else if args.backend.starts_with(crate::backend::plugin::PREFIX) {
            "plugin: every input generated on the host before timing (seeds, m, rnd, messages), passed to the plugin".into()
        } else {
            "liboqs-cpu: liboqs's RNG inside each call (system randomness)".into()
        },
        backends: vec![args.backend.clone()],
        algorithms: req.operations().iter().map(|o| o.0).collect(),
        operations: req.operations().iter().map(|o| o.1).collect(),
        per_backend: vec![],
        batch_sweep: false,
    };
    let mut run = RunFile::new(system::collect(None), config);
    run.offload = Some(OffloadRun {
        backend: args.backend.clone(),
        plugin: served_on.plugin.clone(),
        algorithm: req.algorithm(),
        operation: req.operation(),
        mix: req.mix(),
        workers: args.threads as usize,
        device: served_on.device.name.clone(),
        device_ordinal: served_on
            .pci_bus_id
            .is_some()
            .then_some(args.device.unwrap_or(0)),
        emulated: served_on.emulated,
        arrivals: match &args.trace {
            Some(t) => format!("trace {}", t.display()),
            None => format!("{}, seed {}", args.load.arrivals, args.load.seed),
        },
        window_seconds: args.window,
        curve_basis: curve.basis.into(),
        curve: curve.rows(),
        handoff: Some(curve.handoff),
        contended: curve.contended_rows(),
        slo: args
            .load
            .slo
            .as_ref()
            .map(|s| format!("{}={}ms", s.percentile, s.bound_ms)),
        queue_limit,
        points: vec![],
        max_rate_under_slo: None,
        predicted_max_rate_under_slo: predicted_top,
        stopped: None,
    });
    let (path, _) = crate::write::output::reserve(
        out,
        "run-",
        ".json",
        &crate::write::output::json_bytes(&run)?,
    )?;
    let csv = path.with_extension("csv");
    Ok(Saved { path, csv, run })
}

/// Why the points stopped early.
#[derive(Debug)]
pub enum Stop {
    /// `--deadline` left no time for the next point.
    Deadline,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// A point failed, with why.
    Failed(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Deadline => write!(f, "the deadline (--deadline): finished points are kept"),
            Stop::Interrupted => write!(
                f,
                "interrupted (Ctrl-C, SIGTERM or SIGHUP): finished points are kept"
            ),
            Stop::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}
