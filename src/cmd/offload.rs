//! `pqcprof offload`: its arguments and their checks, then the serving
//! (in `crate::offload::serve`) and the run's table printed.

use crate::backend::cupqc;
use crate::backend::liboqs;
use crate::backend::native_gpu;
use crate::cmd::bench_args::heading;
use crate::cmd::load::LoadArgs;
use crate::cmd::stdout;
use crate::core::bounded;
use crate::core::catalog::{Algorithm, Operation};
use crate::core::exit::Usage;
use crate::offload::arrivals::{self, Arrivals};
use crate::offload::mix::Mix;
use crate::offload::request::{Batching, Rates, Request, Settings};
use clap::Args;
use std::path::PathBuf;

/// `--backend`: one of the built-in names or `plugin:PATH`.
fn offload_backend(s: &str) -> Result<String, String> {
    let built_in = [liboqs::NAME, native_gpu::NAME, cupqc::BACKEND_NAME];
    if built_in.contains(&s) {
        return Ok(s.to_string());
    }
    match super::bench_args::plugin_path(s) {
        Ok(Some(path)) => Ok(format!("{}{path}", crate::backend::plugin::PREFIX)),
        Ok(None) => Err(format!("valid: {}, plugin:PATH", built_in.join(", "))),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// `--mix`: the name of a known mix.
fn mix_name(s: &str) -> Result<String, String> {
    Mix::parse(s)?;
    Ok(s.to_string())
}

/// `message` as a usage error (exit 2).
fn usage(message: String) -> anyhow::Error {
    Usage(message).into()
}

/// Options of `offload`.
#[derive(Debug, Args, Clone)]
pub struct OffloadArgs {
    /// Backend serving the batches [default: liboqs-cpu]
    ///
    /// liboqs on CPU threads, the project's kernels on a GPU (one stream per worker), NVIDIA cuPQC
    /// on a GPU (where this build has it; each prepared batch its own
    /// stream), or plugin:PATH, a host plugin library (a worker process
    /// per serving thread) [possible values: liboqs-cpu, native-gpu,
    /// cupqc, plugin:PATH]
    #[arg(
        long,
        value_name = "NAME",
        default_value = liboqs::NAME,
        hide_default_value = true,
        hide_possible_values = true,
        value_parser = offload_backend,
        help_heading = heading::MEASURE
    )]
    pub backend: String,
    /// The GPU that serves, for native-gpu and cupqc [default: 0]
    ///
    /// Its CUDA ordinal.
    #[arg(short = 'd', long, value_name = "N", help_heading = heading::GPU)]
    pub device: Option<usize>,
    /// The algorithm, e.g. ML-KEM-768 (not with --mix)
    #[arg(
        short = 'a',
        long = "alg",
        value_name = "NAME",
        required_unless_present = "mix",
        help_heading = heading::MEASURE
    )]
    pub algorithm: Option<Algorithm>,
    /// The operation: keygen, encaps, decaps, sign, verify (not with --mix)
    #[arg(
        long = "op",
        value_name = "OP",
        required_unless_present = "mix",
        help_heading = heading::MEASURE
    )]
    pub operation: Option<Operation>,
    /// Requests of several operations instead: tls13-server
    ///
    /// Requests of several operations instead of one: tls13-server, the
    /// server side of a TLS 1.3 handshake (X25519MLKEM768 key exchange:
    /// one ML-KEM-768 encapsulation and one X25519 key pair and secret;
    /// one ML-DSA-65 signature). Rates are then handshakes per second.
    /// On native-gpu both kernels run on each worker's stream, X25519 on
    /// the host.
    #[arg(long, value_name = "NAME", value_parser = mix_name, help_heading = heading::MEASURE)]
    pub mix: Option<String>,
    /// Workers, each serving one batch at a time [default: 1]
    ///
    /// From 1 to 256: CPU threads (liboqs-cpu),
    /// or host threads with batches on streams of their own (native-gpu,
    /// cupqc). With several CPU threads the batch times are measured twice
    /// before the first point, on one worker and on all of them at once,
    /// and the predictions slow a batch by how many workers are busy when
    /// it starts.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        hide_default_value = true,
        value_parser = clap::value_parser!(u32).range(1..=256),
        help_heading = heading::BATCHING
    )]
    pub workers: u32,
    /// Requests per second offered (0.01 to 1e8)
    ///
    /// Rate x --window is at most 10,000,000 requests in one point.
    #[arg(
        long,
        value_name = "PER_SEC",
        allow_negative_numbers = true,
        conflicts_with = "rate_sweep",
        value_parser = bounded::rate,
        help_heading = heading::LOAD
    )]
    pub rate: Option<f64>,
    /// Rates from LOW, doubling, then bisecting
    ///
    /// Offered rates from LOW, doubling, then bisecting between the last
    /// rate that kept up and the first that did not; without LOW..HIGH,
    /// from a sixteenth of the capacity the batch times predict.
    #[arg(
        long,
        value_name = "LOW..HIGH",
        num_args = 0..=1,
        default_missing_value = "",
        help_heading = heading::LOAD
    )]
    pub rate_sweep: Option<String>,
    /// Replay these arrival times instead (seconds, one per line)
    ///
    /// In order, one per line.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["rate", "rate_sweep", "arrivals"],
        help_heading = heading::LOAD
    )]
    pub trace: Option<PathBuf>,
    /// The largest batch `auto` may choose [default: 64]
    ///
    /// From 1 to 4096; batch times are measured up to it, or up to a fixed
    /// --max-batch.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 64,
        hide_default_value = true,
        value_parser = clap::value_parser!(u32).range(1..=4096),
        help_heading = heading::BATCHING
    )]
    pub batch_top: u32,
    /// Seconds of arrivals per point (0.05 to 3600) [default: 2]
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 2.0,
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = bounded::window,
        help_heading = heading::HOW_LONG
    )]
    pub window: f64,
    /// Arrivals, batching and objective.
    #[command(flatten)]
    pub load: LoadArgs,
    /// Requests that may wait for a batch at most [default: no limit]
    ///
    /// At least the largest batch; an arrival that finds the queue full is
    /// dropped and counted.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = heading::BATCHING
    )]
    pub queue_limit: Option<String>,
    /// Bytes signed and verified [default: 1024]
    ///
    /// From 0 to 64 MiB, messages as `bench` makes them.
    #[arg(
        long,
        value_name = "BYTES",
        default_value = "1024",
        hide_default_value = true,
        allow_negative_numbers = true,
        value_parser = super::bench_args::message_bytes,
        help_heading = heading::MEASURE
    )]
    pub message_size: usize,
    /// Seconds the whole command may take (exit 5 when reached)
    ///
    /// From 0.001 to a week: no point starts that would end past it;
    /// finished points are kept.
    #[arg(
        long,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::deadline,
        help_heading = heading::HOW_LONG
    )]
    pub deadline: Option<f64>,
    /// Folder for the run file and its CSV [default: outputs]
    #[arg(
        short = 'o',
        long,
        value_name = "DIR",
        default_value = "outputs",
        hide_default_value = true,
        help_heading = heading::RESULTS
    )]
    pub out: PathBuf,
}

fn rates(args: &OffloadArgs) -> Result<Rates, String> {
    if let Some(t) = &args.trace {
        return Ok(Rates::One(Arrivals::Trace(arrivals::read_trace(t)?)));
    }
    let load = args.load.options();
    let arrivals_at = |rate: f64| load.at(rate);
    match (&args.rate, &args.rate_sweep) {
        (Some(r), _) => {
            let r = arrivals::check_rate("--rate", *r)?;
            bounded::requests_per_point(r, args.window)
                .map_err(|e| format!("--rate {r} with --window: {e}"))?;
            Ok(Rates::One(arrivals_at(r)))
        }
        (None, Some(s)) if s.is_empty() => Ok(Rates::Sweep {
            low: None,
            high: None,
        }),
        (None, Some(s)) => {
            let (lo, hi) = s.split_once("..").ok_or_else(|| {
                format!("--rate-sweep '{s}': write LOW..HIGH (requests per second), e.g. 100..20000, or nothing")
            })?;
            let parse = |v: &str| bounded::rate(v).map_err(|e| format!("--rate-sweep '{s}': {e}"));
            let (lo, hi) = (parse(lo)?, parse(hi)?);
            if lo >= hi {
                return Err(format!("--rate-sweep '{s}': LOW must be below HIGH"));
            }
            bounded::requests_per_point(hi, args.window)
                .map_err(|e| format!("--rate-sweep '{s}' with --window: {e}"))?;
            Ok(Rates::Sweep {
                low: Some(lo),
                high: Some(hi),
            })
        }
        (None, None) => Err(
            "offload needs a load: --rate PER_SEC, --rate-sweep [LOW..HIGH] or --trace FILE".into(),
        ),
    }
}

/// `--queue-limit`, checked against the largest batch (`top`, named by
/// `top_why`): a smaller limit could never let a full batch form.
fn queue_limit(args: &OffloadArgs, top: usize, top_why: &str) -> anyhow::Result<Option<usize>> {
    let Some(v) = &args.queue_limit else {
        return Ok(None);
    };
    let max = bounded::MAX_REQUESTS_PER_POINT as u64;
    let n = bounded::whole(v, 1, max, "a whole number of requests")
        .map_err(|e| Usage(format!("invalid --queue-limit {v}: {e}")))? as usize;
    if n < top {
        anyhow::bail!(
            "invalid --queue-limit {n}: at least the largest batch, {top} ({top_why}), or a full batch could never form"
        );
    }
    Ok(Some(n))
}

/// `--mix`, checked against the backend and against any `--alg` and
/// `--op` given with it: each must name one of the mix's own operations.
fn mix_request(args: &OffloadArgs, name: &str) -> anyhow::Result<Request> {
    let mix = Mix::parse(name).map_err(anyhow::Error::msg)?;
    let ops = mix.operations();
    let listed: Vec<String> = ops
        .iter()
        .map(|(a, o)| format!("{} {}", a.name(), o.cli_name()))
        .collect();
    let fits = ops.iter().any(|(a, o)| {
        args.algorithm.is_none_or(|x| x == *a) && args.operation.is_none_or(|x| x == *o)
    });
    if !fits {
        let given: Vec<String> = [
            args.algorithm.map(|a| format!("--alg {}", a.name())),
            args.operation.map(|o| format!("--op {}", o.cli_name())),
        ]
        .into_iter()
        .flatten()
        .collect();
        anyhow::bail!(
            "{} contradicts --mix {}: its requests are {}; leave --alg and --op out with --mix",
            given.join(" "),
            mix.name(),
            listed.join(" and ")
        );
    }
    Ok(Request::Mix(mix))
}

/// The request, from `--mix` or `--alg` and `--op`.
fn request(args: &OffloadArgs) -> anyhow::Result<Request> {
    if let Some(name) = &args.mix {
        return mix_request(args, name);
    }
    let (Some(alg), Some(op)) = (args.algorithm, args.operation) else {
        anyhow::bail!("offload needs --alg and --op, or --mix");
    };
    if !alg.has_operation(op) {
        anyhow::bail!(
            "--op {}: {} has no such operation (it has: {})",
            op.cli_name(),
            alg.name(),
            Operation::ALL
                .iter()
                .filter(|o| alg.has_operation(**o))
                .map(|o| o.cli_name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Request::One(alg, op))
}

/// The values no other check covers (window, deadline, device, message
/// size), then the request.
fn check_args(args: &OffloadArgs) -> anyhow::Result<Request> {
    bounded::window(&args.window.to_string())
        .map_err(|e| Usage(format!("invalid --window {}: {e}", args.window)))?;
    if let Some(d) = args.deadline {
        bounded::deadline(&d.to_string())
            .map_err(|e| Usage(format!("invalid --deadline {d}: {e}")))?;
    }
    if let (Some(d), false) = (args.device, crate::offload::is_gpu(&args.backend)) {
        return Err(usage(format!(
            "--device {d}: only the GPU backends ({} and {}) serve on a device, and --backend is {}",
            native_gpu::NAME,
            cupqc::BACKEND_NAME,
            args.backend
        )));
    }
    request(args).map_err(|e| usage(format!("{e:#}")))
}

/// `--max-batch`, `--max-wait`, `--batch-top` and `--queue-limit` checked
/// together.
fn batching(args: &OffloadArgs) -> anyhow::Result<Batching> {
    let top = if args.load.max_batch.eq_ignore_ascii_case("auto") {
        args.batch_top as usize
    } else {
        4096
    };
    let fixed = args
        .load
        .options()
        .policy(top, "the largest batch a worker prepares")
        .map_err(anyhow::Error::msg)?;
    let queue_limit = match fixed {
        Some(p) => queue_limit(args, p.max_batch, "--max-batch")?,
        None => queue_limit(args, top, "--batch-top, the largest batch auto may choose")?,
    };
    Ok(Batching {
        top: fixed.map_or(top, |p| p.max_batch),
        fixed,
        queue_limit,
    })
}

/// The settings `offload` serves with: every argument checked, bad values
/// named with what is valid.
pub fn settings(args: &OffloadArgs) -> anyhow::Result<Settings> {
    let request = check_args(args)?;
    // A trace that cannot be read or holds a bad line is bad input (1);
    // values of the command line that do not fit are a usage error (2).
    let rates = match &args.trace {
        Some(_) => rates(args).map_err(anyhow::Error::msg)?,
        None => rates(args).map_err(Usage)?,
    };
    let batching = batching(args).map_err(|e| usage(format!("{e:#}")))?;
    Ok(Settings {
        backend: args.backend.clone(),
        device: args.device,
        request,
        rates,
        batching,
        threads: args.workers,
        window: args.window,
        load: args.load.options(),
        trace: args.trace.clone(),
        message_size: args.message_size,
        deadline: args.deadline,
        out: args.out.clone(),
    })
}

/// `pqcprof offload`: the points measured and saved, the table printed.
pub fn offload(args: &OffloadArgs) -> anyhow::Result<i32> {
    // The deadline counts from here.
    let started = std::time::Instant::now();
    let settings = settings(args)?;
    let served = crate::offload::serve::serve(&settings, started)?;
    stdout::println(&served.summary)?;
    Ok(served.code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `pqcprof offload`'s arguments alone.
    #[derive(Parser)]
    struct Offload {
        #[command(flatten)]
        args: OffloadArgs,
    }

    fn args(extra: &[&str]) -> OffloadArgs {
        let mut v = vec!["offload"];
        v.extend_from_slice(extra);
        Offload::try_parse_from(v).unwrap().args
    }

    fn error(extra: &[&str]) -> String {
        format!("{:#}", settings(&args(extra)).unwrap_err())
    }

    #[test]
    fn a_rate_and_a_request_make_settings() {
        let s = settings(&args(&[
            "--alg",
            "ML-KEM-768",
            "--op",
            "encaps",
            "--rate",
            "500",
        ]))
        .unwrap();
        assert_eq!(
            s.request,
            Request::One(Algorithm::MlKem768, Operation::Encaps)
        );
        assert_eq!(
            s.rates,
            Rates::One(Arrivals::Poisson {
                rate: 500.0,
                seed: 1
            })
        );
        assert_eq!(
            s.batching,
            Batching {
                top: 64,
                fixed: None,
                queue_limit: None
            }
        );
        assert_eq!((s.backend.as_str(), s.message_size), (liboqs::NAME, 1024));
    }

    #[test]
    fn rate_sweeps_are_read_and_checked() {
        let r = |sweep: &str| {
            settings(&args(&[
                "--alg",
                "ML-KEM-768",
                "--op",
                "encaps",
                "--rate-sweep",
                sweep,
            ]))
            .map(|s| s.rates)
        };
        assert_eq!(
            r("100..20000").unwrap(),
            Rates::Sweep {
                low: Some(100.0),
                high: Some(20000.0)
            }
        );
        let e = error(&[
            "--alg",
            "ML-KEM-768",
            "--op",
            "encaps",
            "--rate-sweep",
            "9..3",
        ]);
        assert!(e.contains("LOW must be below HIGH"), "{e}");
        let e = error(&[
            "--alg",
            "ML-KEM-768",
            "--op",
            "encaps",
            "--rate-sweep",
            "fast",
        ]);
        assert!(
            e.contains("--rate-sweep 'fast'") && e.contains("LOW..HIGH"),
            "{e}"
        );
        let e = error(&["--alg", "ML-KEM-768", "--op", "encaps"]);
        assert!(e.contains("offload needs a load"), "{e}");
    }

    #[test]
    fn bad_values_name_themselves() {
        let one = ["--alg", "ML-KEM-768", "--op", "encaps", "--rate", "100"];
        let with = |extra: &[&str]| {
            let mut v = one.to_vec();
            v.extend_from_slice(extra);
            error(&v)
        };
        // Numbers out of their bounds stop at the parser, named.
        for (opt, bad, says) in [
            ("--window", "0.01", "from 0.05 to 3600"),
            ("--deadline", "0", "at most a week"),
            ("--rate", "1e308", "from 0.01 to 100000000"),
            ("--max-wait", "1e300", "from 0 to 60000"),
        ] {
            let e = Offload::try_parse_from([
                "offload",
                "--alg",
                "ML-KEM-768",
                "--op",
                "encaps",
                opt,
                bad,
            ])
            .err()
            .unwrap()
            .to_string();
            assert!(
                e.contains(bad) && e.contains(opt) && e.contains(says),
                "{e}"
            );
        }
        let e = settings(&args(&[
            "--alg",
            "ML-KEM-768",
            "--op",
            "encaps",
            "--rate",
            "1e7",
            "--window",
            "3600",
        ]))
        .unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e:#}");
        assert!(format!("{e:#}").contains("at most 10,000,000"), "{e:#}");
        let e = with(&["--device", "1"]);
        assert!(
            e.contains("--device 1") && e.contains(native_gpu::NAME),
            "{e}"
        );
        let e = Offload::try_parse_from(["offload", "--message-size", "99999999"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("'99999999' for '--message-size"), "{e}");
        let e = with(&["--queue-limit", "10"]);
        assert!(
            e.contains("invalid --queue-limit 10") && e.contains("64"),
            "{e}"
        );
        let e = with(&["--max-batch", "8"]);
        assert!(e.contains("--max-wait auto"), "{e}");
        let e = with(&["--max-batch", "8", "--max-wait", "1", "--queue-limit", "4"]);
        assert!(
            e.contains("--queue-limit 4") && e.contains("--max-batch"),
            "{e}"
        );
        let e = error(&["--alg", "ML-KEM-768", "--op", "sign", "--rate", "100"]);
        assert!(e.contains("--op sign") && e.contains("encaps"), "{e}");
    }

    #[test]
    fn a_fixed_batching_and_a_queue_limit() {
        let s = settings(&args(&[
            "--alg",
            "ML-DSA-65",
            "--op",
            "sign",
            "--rate",
            "100",
            "--max-batch",
            "8",
            "--max-wait",
            "2",
            "--queue-limit",
            "16",
        ]))
        .unwrap();
        assert_eq!(s.batching.top, 8);
        assert_eq!(s.batching.queue_limit, Some(16));
        let p = s.batching.fixed.unwrap();
        assert_eq!((p.max_batch, p.max_wait), (8, 0.002));
    }

    #[test]
    fn a_mix_refuses_an_operation_of_its_own_not() {
        let s = settings(&args(&["--mix", "tls13-server", "--rate", "10"])).unwrap();
        assert!(matches!(s.request, Request::Mix(_)), "{:?}", s.request);
        let e = error(&["--mix", "tls13-server", "--op", "keygen", "--rate", "10"]);
        assert!(e.contains("contradicts --mix tls13-server"), "{e}");
        let _ = Mix::parse("tls13-server").unwrap();
    }
}
