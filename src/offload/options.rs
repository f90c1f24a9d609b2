//! What `offload` and `plan` share: how requests arrive, how they are
//! batched, and the latency objective a result is judged by.

use super::arrivals::Arrivals;
use super::batcher;
use super::latency::Slo;
use crate::core::bounded;

/// Arrivals, batching and objective, as `--arrivals`, `--seed`, `--slo`,
/// `--max-batch` and `--max-wait` gave them.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// How requests arrive at a rate: `poisson` or `uniform`.
    pub arrivals: String,
    /// Seed of the Poisson arrivals.
    pub seed: u64,
    /// The latency objective, if any.
    pub slo: Option<Slo>,
    /// Requests in one batch at most, or `auto`.
    pub max_batch: String,
    /// Milliseconds the oldest request may wait, or `auto`.
    pub max_wait: String,
}

impl LoadOptions {
    /// Arrivals at `rate` as `--arrivals` and `--seed` say.
    pub fn at(&self, rate: f64) -> Arrivals {
        match self.arrivals.as_str() {
            "uniform" => Arrivals::Uniform { rate },
            _ => Arrivals::Poisson {
                rate,
                seed: self.seed,
            },
        }
    }

    /// The fixed batching (`--max-batch`, `--max-wait`), or `None` for
    /// auto; bad values named, and a batch above `top` (`top_why` says why
    /// it is the top).
    pub fn policy(&self, top: usize, top_why: &str) -> Result<Option<batcher::Policy>, String> {
        let (max_batch_arg, max_wait_arg) = (self.max_batch.as_str(), self.max_wait.as_str());
        let auto = |s: &str| s.eq_ignore_ascii_case("auto");
        match (auto(max_batch_arg), auto(max_wait_arg)) {
            (true, true) => return Ok(None),
            (true, false) | (false, true) => {
                return Err(format!(
                    "--max-batch {} with --max-wait {}: give both as numbers, or both as auto",
                    max_batch_arg, max_wait_arg
                ))
            }
            _ => {}
        }
        let max_batch = bounded::batch(max_batch_arg)
            .map_err(|e| format!("--max-batch {max_batch_arg}: {e}, or auto"))?;
        if max_batch > top {
            return Err(format!(
                "--max-batch {max_batch}: at most {top} here ({top_why})"
            ));
        }
        let max_wait = bounded::wait_ms(max_wait_arg)
            .map_err(|e| format!("--max-wait {max_wait_arg}: {e}, or auto"))?;
        Ok(Some(batcher::Policy {
            max_batch,
            max_wait: max_wait / 1e3,
        }))
    }
}
