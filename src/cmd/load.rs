//! The arguments `offload` and `plan` share: how requests arrive, how
//! they are batched, and the latency objective a result is judged by.

use crate::cmd::bench_args::heading;
use crate::core::bounded;
use crate::offload::latency::Slo;
use crate::offload::options::LoadOptions;
use clap::Args;

/// Arrivals, batching and objective.
#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    /// How requests arrive at a rate [default: poisson]
    #[arg(
        long,
        value_name = "poisson|uniform",
        default_value = "poisson",
        hide_default_value = true,
        hide_possible_values = true,
        value_parser = ["poisson", "uniform"],
        help_heading = heading::LOAD
    )]
    pub arrivals: String,
    /// Seed of the Poisson arrivals [default: 1]
    ///
    /// The same seed gives the same arrival times.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        hide_default_value = true,
        help_heading = heading::LOAD
    )]
    pub seed: u64,
    /// A latency objective, e.g. p99=2ms, p99.9=500us
    ///
    /// Each point says whether it is met, and the highest rate that meets
    /// it is named.
    #[arg(long, value_name = "pNN=TIME", help_heading = heading::LOAD)]
    pub slo: Option<Slo>,
    /// Requests in one batch at most, or auto [default: auto]
    ///
    /// From 1 to 4096, or `auto`: per rate, the batching the planner
    /// predicts keeps latency lowest while keeping up.
    #[arg(
        long,
        value_name = "N|auto",
        default_value = "auto",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = batch_or_auto,
        help_heading = heading::BATCHING
    )]
    pub max_batch: String,
    /// Longest wait for a batch to fill, ms, or auto [default: auto]
    ///
    /// Milliseconds the oldest request may wait for a batch to fill, from 0
    /// to 60000, or `auto` (with --max-batch auto).
    #[arg(
        long,
        value_name = "MS|auto",
        default_value = "auto",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = wait_or_auto,
        help_heading = heading::BATCHING
    )]
    pub max_wait: String,
}

/// `auto`, or a batch of 1 to 4096 requests.
pub fn batch_or_auto(s: &str) -> Result<String, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok("auto".into());
    }
    bounded::batch(s)
        .map(|b| b.to_string())
        .map_err(|e| format!("{e}, or auto"))
}

/// `auto`, or a wait of 0 to 60000 milliseconds.
pub fn wait_or_auto(s: &str) -> Result<String, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok("auto".into());
    }
    bounded::wait_ms(s)
        .map(|_| s.trim().to_string())
        .map_err(|e| format!("{e}, or auto"))
}

impl LoadArgs {
    /// The stage's copy of these arguments.
    pub fn options(&self) -> LoadOptions {
        LoadOptions {
            arrivals: self.arrivals.clone(),
            seed: self.seed,
            slo: self.slo.clone(),
            max_batch: self.max_batch.clone(),
            max_wait: self.max_wait.clone(),
        }
    }
}
