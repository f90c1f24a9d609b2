//! The run file's `vectors` section: the vectors run, when a run begins, on
//! the code behind each backend it measures (every case on the CPU
//! libraries, a sample on each GPU kernel variant), so each figure is read
//! beside the suites its implementation passed.

use super::case::{Plan, Subject};
use super::kernels::Kernels;
use super::table::{run_all, suites};
use crate::backend::native_gpu::sizing::Variant;
use crate::schema::vectors::BackendVectors;

/// Cases per group on a GPU kernel variant (one launch each), the invalid
/// cases first.
pub const GPU_SAMPLE: usize = 4;

fn run_on(
    backend: &str,
    variant: Option<Variant>,
    plan: Plan,
    subject: anyhow::Result<Box<dyn Subject>>,
) -> BackendVectors {
    let mut out = BackendVectors {
        backend: backend.to_string(),
        variant: variant.map(|v| v.name().to_string()),
        implementation: String::new(),
        plan: String::new(),
        suites: vec![],
        error: None,
    };
    match subject.and_then(|mut s| run_all(s.as_mut(), plan)) {
        Ok(r) => {
            out.suites = suites(&r);
            out.implementation = r.subject;
            out.plan = r.plan;
        }
        Err(e) => out.error = Some(format!("{e:#}")),
    }
    out
}

/// The vectors on the code behind `backend` as a run's records name it:
/// `liboqs-cpu` and `openssl-cpu` every case; `native-gpu` a sample of each
/// of `variants` on GPU `ordinal`. Other backends: none.
pub fn for_backend(backend: &str, variants: &[Variant], ordinal: usize) -> Vec<BackendVectors> {
    let full = |s: Box<dyn Subject>| run_on(backend, None, Plan::Full, Ok(s));
    match backend {
        crate::backend::liboqs::NAME => vec![full(Box::new(super::subjects::Liboqs))],
        "openssl" | "openssl-cpu" => vec![full(Box::new(super::openssl::OpenSsl))],
        crate::backend::native_gpu::NAME => variants
            .iter()
            .map(|&v| {
                let k = Kernels::open(ordinal, v).map(|k| Box::new(k) as Box<dyn Subject>);
                run_on(backend, Some(v), Plan::Sample(GPU_SAMPLE), k)
            })
            .collect(),
        _ => vec![],
    }
}
