//! The run file's `vectors` section: when a run begins, the vectors of the
//! parameter sets it measures run on the code behind each backend it
//! measures (every case on the CPU libraries, a sample on each GPU kernel
//! variant by default), so each figure is read beside the suites its
//! implementation passed, from the same binary and libraries.

use super::case::Report;
use super::case::{Plan, Subject};
use super::kernels::Kernels;
use super::table::{render, suites};
use crate::backend::native_gpu::sizing::Variant;
use crate::core::catalog::Algorithm;
use crate::schema::vectors::BackendVectors;

/// Cases per group on a GPU kernel variant (one launch each), the invalid
/// cases first.
pub const GPU_SAMPLE: usize = 4;

/// How much of the vectors a run begins with (`--vectors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Extent {
    /// Every case on the CPU libraries, the first 4 of each group (the
    /// invalid cases first) on each GPU kernel variant.
    Sample,
    /// Every case everywhere (on a GPU: one launch per case).
    Full,
    /// None: the run file says the vectors were not run.
    None,
}

impl Extent {
    /// The plan on a GPU kernel variant; `None` when nothing runs.
    fn gpu_plan(self) -> Option<Plan> {
        match self {
            Extent::Sample => Some(Plan::Sample(GPU_SAMPLE)),
            Extent::Full => Some(Plan::Full),
            Extent::None => None,
        }
    }
}

/// The entry of a backend whose vectors were not run, and why.
fn not_run(
    backend: &str,
    variant: Option<Variant>,
    algs: &[Algorithm],
    why: &str,
) -> BackendVectors {
    BackendVectors {
        backend: backend.to_string(),
        variant: variant.map(|v| v.name().to_string()),
        implementation: String::new(),
        parameter_sets: algs.iter().map(|a| a.name().to_string()).collect(),
        plan: String::new(),
        suites: vec![],
        error: Some(why.to_string()),
    }
}

fn run_on(
    backend: &str,
    variant: Option<Variant>,
    algs: &[Algorithm],
    plan: Plan,
    subject: anyhow::Result<Box<dyn Subject>>,
) -> Vec<BackendVectors> {
    let run = |mut s: Box<dyn Subject>| -> anyhow::Result<_> {
        let groups = super::runner::all_groups()?
            .iter()
            .filter(|g| algs.contains(&g.alg));
        Ok(super::runner::run(s.as_mut(), groups, plan))
    };
    entry(backend, variant, algs, subject.and_then(run))
}

/// The entries of `backend` (and `variant`) from the vectors' report, one
/// per parameter set of `algs` (so a failure in one set marks that set's
/// figures only), or one entry with the error that stopped them.
fn entry(
    backend: &str,
    variant: Option<Variant>,
    algs: &[Algorithm],
    report: anyhow::Result<Report>,
) -> Vec<BackendVectors> {
    let r = match report {
        Ok(r) => r,
        Err(e) => {
            let mut out = not_run(backend, variant, algs, "");
            out.error = Some(format!("{e:#}"));
            return vec![out];
        }
    };
    let set_of = |source: &str, group: &str| {
        super::runner::all_groups()
            .ok()?
            .iter()
            .find(|g| g.source == source && g.name == group)
            .map(|g| g.alg)
    };
    algs.iter()
        .filter_map(|&alg| {
            let groups: Vec<_> = r
                .groups
                .iter()
                .filter(|g| set_of(&g.source, &g.group) == Some(alg))
                .cloned()
                .collect();
            if groups.is_empty() {
                return None;
            }
            let part = Report {
                subject: r.subject.clone(),
                plan: r.plan.clone(),
                groups,
            };
            let mut out = not_run(backend, variant, &[alg], "");
            out.error = None;
            warn_failed(&format!("{} ({})", out.name(), alg.name()), &part);
            out.suites = suites(&part);
            out.implementation = part.subject;
            out.plan = part.plan;
            Some(out)
        })
        .collect()
}

/// The vectors of `algs` on the plugin `info` (backend `backend`), run in
/// its worker by `ask` (given the cases per group, `None` for every case,
/// and the groups, one at a time): every case on a host plugin, the GPU
/// sample on a device plugin unless `--vectors full`.
pub fn for_plugin(
    backend: &str,
    algs: &[Algorithm],
    device: bool,
    extent: Extent,
    info: &crate::schema::plugin::PluginInfo,
    ask: impl FnMut(Option<usize>, &[usize]) -> anyhow::Result<serde_json::Value>,
) -> Vec<BackendVectors> {
    if algs.is_empty() {
        return vec![];
    }
    if extent == Extent::None {
        return vec![not_run(backend, None, algs, "skipped (--vectors none)")];
    }
    let sample = (device && extent == Extent::Sample).then_some(GPU_SAMPLE);
    let mut ask = ask;
    let plan = sample.map_or(Plan::Full, Plan::Sample);
    let report = super::plugin::remote_report(info, algs, plan, |ids| ask(sample, ids));
    entry(backend, None, algs, report)
}

/// One warning line when cases failed on `name` (backend[:variant]): how many, in which
/// groups (the first few), and where to see them; the whole table at
/// debug level (`-v`).
fn warn_failed(name: &str, r: &Report) {
    let (cases, _, failed, _) = r.totals();
    if failed == 0 {
        return;
    }
    let groups: Vec<String> = r
        .groups
        .iter()
        .filter(|g| g.failed > 0)
        .map(|g| format!("{} {} ({})", g.source, g.group, g.failed))
        .collect();
    log::warn!(
        "known-answer vectors: {failed} of {cases} case(s) failed on {name}, in {}; the run goes on and its file says so (the table: pqcprof check --vectors)",
        crate::core::listing::few("groups with failed vectors", &groups, 3, ", ")
    );
    log::debug!("{}", render(r));
}

/// The vectors of `algs` on the code behind `backend` as a run's records
/// name it, by `extent`: `liboqs-cpu` and `openssl-cpu` every case;
/// `native-gpu` each of `variants` and `cupqc` on GPU `ordinal`, the
/// sample or every case. Other backends: none.
pub fn for_backend(
    backend: &str,
    algs: &[Algorithm],
    variants: &[Variant],
    ordinal: usize,
    extent: Extent,
) -> Vec<BackendVectors> {
    const SKIPPED: &str = "skipped (--vectors none)";
    if algs.is_empty() {
        return vec![];
    }
    let cpu = |s: Box<dyn Subject>| match extent {
        Extent::None => vec![not_run(backend, None, algs, SKIPPED)],
        _ => run_on(backend, None, algs, Plan::Full, Ok(s)),
    };
    match backend {
        crate::backend::liboqs::NAME => cpu(Box::new(super::subjects::Liboqs)),
        "openssl" | "openssl-cpu" => cpu(Box::new(super::openssl::OpenSsl)),
        crate::backend::native_gpu::NAME => variants
            .iter()
            .flat_map(|&v| match extent.gpu_plan() {
                None => vec![not_run(backend, Some(v), algs, SKIPPED)],
                Some(plan) => {
                    let k = Kernels::open(ordinal, v).map(|k| Box::new(k) as Box<dyn Subject>);
                    run_on(backend, Some(v), algs, plan, k)
                }
            })
            .collect(),
        crate::backend::cupqc::BACKEND_NAME => match extent.gpu_plan() {
            None => vec![not_run(backend, None, algs, SKIPPED)],
            Some(plan) => run_on(backend, None, algs, plan, super::cupqc::open(ordinal)),
        },
        _ => vec![],
    }
}
