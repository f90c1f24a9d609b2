//! Command-line parsing only: the top-level options, the list of
//! commands, and the messages of a command line that does not parse (an
//! option renamed or belonging to another command named with what to write
//! instead; a usage error found after parsing shown as clap shows its own,
//! exit 2). Each command's arguments, their checks and its entry function
//! live in the command's own file beside this one.

use super::bench_args::heading;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser, Subcommand};

/// The widest `--help` is, whatever the terminal: clap wraps to the
/// terminal below this.
pub const HELP_WIDTH: usize = 100;

/// The top level's examples.
const TOP_EXAMPLES: &str = "\
Examples:
  pqcprof check                      what this machine offers; each backend ready or why not
  pqcprof bench                      measure every ready backend (outputs/run-*.json)
  pqcprof report outputs/run-*.json  one HTML report from the run files
  pqcprof bench --help               one command's options and examples";

/// pqcprof: batched post-quantum cryptography throughput on GPUs and CPUs.
#[derive(Debug, Parser)]
#[command(
    name = "pqcprof",
    version,
    about,
    max_term_width = 100,
    disable_help_flag = true,
    after_help = format!("{TOP_EXAMPLES}\n\n{}", crate::core::exit::HELP)
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Print errors only
    ///
    /// Errors only: no progress lines, notes, warnings or progress bars.
    #[arg(
        short,
        long,
        global = true,
        conflicts_with = "verbose",
        help_heading = heading::OUTPUT,
        display_order = 1000
    )]
    pub quiet: bool,
    /// Also print debug lines (-vv: trace lines)
    ///
    /// Debug lines say what was found and chosen, and why; twice (-vv)
    /// adds trace lines, those of the libraries pqcprof links included.
    #[arg(
        short,
        long,
        global = true,
        action = clap::ArgAction::Count,
        help_heading = heading::OUTPUT,
        display_order = 1000
    )]
    pub verbose: u8,
    /// Print help (-h: one line per option, --help: the long form)
    #[arg(
        short,
        long,
        global = true,
        action = clap::ArgAction::Help,
        help_heading = heading::OUTPUT,
        display_order = 1001
    )]
    pub help: Option<bool>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report the machine, CUDA driver, GPUs, NVML, NVRTC and cuPQC SDK, and
    /// whether each backend is ready.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(super::check::CheckArgs),
    /// Measure every ready backend (the pipeline's main step).
    #[command(after_help = BENCH_EXAMPLES)]
    Bench(super::bench_args::BenchArgs),
    /// Measure the CPU baselines only (liboqs), and plugins named with
    /// --backend plugin:PATH.
    #[command(after_help = CPU_EXAMPLES)]
    Cpu(super::bench_args::CpuCommandArgs),
    /// Measure the GPU backends only (native-gpu and cuPQC), and plugins
    /// named with --backend plugin:PATH.
    #[command(after_help = GPU_EXAMPLES)]
    Gpu(super::bench_args::GpuCommandArgs),
    /// Measure every algorithm liboqs and OpenSSL enable, plus composites
    /// (pqc-sig-bench-c-style windows and CSVs).
    #[command(after_help = SWEEP_EXAMPLES)]
    Sweep(super::sweep::SweepArgs),
    /// Print key, ciphertext, signature and secret sizes of every algorithm as CSV.
    #[command(after_help = SIZES_EXAMPLES)]
    Sizes(super::sizes::SizesArgs),
    /// Write one self-contained HTML (or Markdown) report from run files.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(super::report::ReportArgs),
    /// Compare two run files: change in median throughput per record.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(super::compare::CompareArgs),
    /// Predict what a batched request waits: for a rate (and a latency
    /// objective), the best batching, latency percentiles and the highest
    /// rate under the objective, from a run file's batch times.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan(super::plan::PlanArgs),
    /// Measure what a batched request waits: requests arriving at a rate,
    /// a dynamic batcher, latency percentiles from each request's intended
    /// arrival, and the highest rate under a latency objective.
    #[command(after_help = OFFLOAD_EXAMPLES)]
    Offload(super::offload::OffloadArgs),
    /// Merge the run files of a cluster job's ranks into one, with cluster
    /// totals; names missing ranks and differences between them.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(super::merge::MergeArgs),
    /// Registers, stack and spills of every native kernel (ptxas's report
    /// through NVRTC) and the occupancy they allow; needs NVRTC, not a GPU.
    #[command(after_help = KERNELS_EXAMPLES)]
    Kernels(super::kernels::KernelsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    /// to standard output.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(super::completions::CompletionsArgs),
    /// Write man pages (pqcprof.1 and one per command) into a folder.
    #[command(after_help = MAN_EXAMPLES)]
    Man(super::completions::ManArgs),
    /// Internal: the process a plugin (--backend plugin:PATH) is measured
    /// in, answering its parent pqcprof on a pipe.
    #[command(name = "plugin-worker", hide = true, after_help = PLUGIN_WORKER_EXAMPLES)]
    PluginWorker(super::plugin_worker::PluginWorkerArgs),
}

/// `plugin-worker`'s example (pqcprof starts it itself).
const PLUGIN_WORKER_EXAMPLES: &str = "\
Examples:
  pqcprof plugin-worker ./libmykem.so    what `bench --backend plugin:./libmykem.so` starts";

/// `check`'s examples.
const CHECK_EXAMPLES: &str = "\
Examples:
  pqcprof check                  what this machine offers, each backend ready or why not
  pqcprof check --json           the same as JSON
  pqcprof check --require-gpu    exit 3 unless a GPU backend is ready
  pqcprof check --vectors --backend native-host
                                 NIST ACVP and Wycheproof vectors on the kernels' host build
  pqcprof check --plugin ./libmykem.so
                                 a plugin's ABI and sizes checked, then the vectors on it
  pqcprof check --plugin ./libmykem.so --deadline 600
                                 the same, ended after 600 s whatever the plugin does";

/// `bench`'s examples.
const BENCH_EXAMPLES: &str = "\
Examples:
  pqcprof bench                                        every ready backend, default settings
  pqcprof bench --alg ML-KEM-768 --op encaps --batch 1,32,1k
  pqcprof bench --backend native --batch-sweep --runs auto
  pqcprof bench --backend native --device all --batch 100k   every GPU of the node at once
  pqcprof bench --backend liboqs,plugin:./libmykem.so --alg mlkem   a plugin beside liboqs";

/// `cpu`'s examples.
const CPU_EXAMPLES: &str = "\
Examples:
  pqcprof cpu --alg mlkem --threads 1,all
  pqcprof cpu --alg ML-DSA-65 --op sign --latency
  pqcprof cpu --batch-sweep 4k --threads 1
  pqcprof cpu --backend liboqs,plugin:./libmykem.so --threads 1,all";

/// `gpu`'s examples.
const GPU_EXAMPLES: &str = "\
Examples:
  pqcprof gpu                                  native-gpu and cuPQC, where ready
  pqcprof gpu --alg ML-KEM-768 --cache cold --runs auto
  pqcprof gpu --backend native --kernel warp --deadline 600
  pqcprof gpu --backend native,plugin:./libmygpukem.so   a device plugin beside the native kernels";

/// `sweep`'s examples.
const SWEEP_EXAMPLES: &str = "\
Examples:
  pqcprof sweep --quick                                  every algorithm, short windows
  pqcprof sweep --list --filter family:ML-DSA            what would run, and what is skipped
  pqcprof sweep --filter provider:openssl --seconds 2 --threads all";

/// `sizes`'s examples.
const SIZES_EXAMPLES: &str = "\
Examples:
  pqcprof sizes
  pqcprof sizes --filter kind:kem
  pqcprof sizes --format sig-bench --out sizes.csv";

/// `report`'s examples.
const REPORT_EXAMPLES: &str = "\
Examples:
  pqcprof report outputs/run-*.json                        report.html
  pqcprof report outputs/run-*.json mlkem_results.json     a published result beside them
  pqcprof report --format markdown -o - outputs/run-*.json";

/// `compare`'s examples.
const COMPARE_EXAMPLES: &str = "\
Examples:
  pqcprof compare old-run.json new-run.json
  pqcprof compare old-run.json new-run.json --fail-above 3 --json";

/// `plan`'s examples.
const PLAN_EXAMPLES: &str = "\
Examples:
  pqcprof plan --alg ML-KEM-768 --op encaps --rate 5000
  pqcprof plan --alg ML-DSA-65 --op sign --slo p99=2ms --workers 4
  pqcprof plan --from outputs/run-X.json --alg ML-KEM-768 --op encaps --rate 2000";

/// `offload`'s examples.
const OFFLOAD_EXAMPLES: &str = "\
Examples:
  pqcprof offload --alg ML-KEM-768 --op encaps --rate 2000
  pqcprof offload --alg ML-DSA-65 --op sign --rate-sweep --slo p99=5ms --workers 4
  pqcprof offload --backend native-gpu --mix tls13-server --rate-sweep 1000..100000";

/// `merge`'s examples.
const MERGE_EXAMPLES: &str = "\
Examples:
  pqcprof merge outputs/slurm-1234 -o cluster-run.json
  pqcprof merge rank0/run-a.json rank1/run-b.json";

/// `kernels`'s examples.
const KERNELS_EXAMPLES: &str = "\
Examples:
  pqcprof kernels --arch sm_90 --alg ML-KEM-768
  pqcprof kernels --variants
  pqcprof kernels --prebuild kernel-images --arch sm_80,sm_90";

/// `completions`'s examples.
const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  pqcprof completions bash > ~/.local/share/bash-completion/completions/pqcprof
  pqcprof completions zsh > ~/.zfunc/_pqcprof
  pqcprof completions fish > ~/.config/fish/completions/pqcprof.fish";

/// `man`'s examples.
const MAN_EXAMPLES: &str = "\
Examples:
  pqcprof man --out man
  man -l man/pqcprof-bench.1";

/// Options renamed, each refused under its old name by a message naming
/// the new one: (command, old name, new name, why).
pub const RENAMED: &[(&str, &str, &str, &str)] = &[
    (
        "sweep",
        "--warmup",
        "--warmup-seconds",
        "sweep's warm-up is seconds before each window; --warmup counts runs, in bench, cpu and gpu",
    ),
    (
        "offload",
        "--threads",
        "--workers",
        "the workers that each serve one batch at a time, as `plan --workers`",
    ),
    (
        "report",
        "--output",
        "--out",
        "-o/--out names what every command writes",
    ),
    (
        "merge",
        "--output",
        "--out",
        "-o/--out names what every command writes",
    ),
];

/// The command a command line runs: its first word that is not an option
/// (the global options, `-q` and `-v`, take no value).
pub fn command_name(argv: &[String]) -> Option<&str> {
    argv.iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

/// The command line's definition, built (global options propagated).
fn built() -> clap::Command {
    let mut cli = Cli::command();
    cli.build();
    cli
}

/// `name`'s definition, or the top level's when `name` is no command.
fn command_or_top(cli: &clap::Command, name: Option<&str>) -> clap::Command {
    name.and_then(|n| cli.find_subcommand(n))
        .cloned()
        .unwrap_or_else(|| cli.clone())
}

/// The long name of the option `given` (`--kernel`, `--kernel=warp`, `-d`)
/// among `cmd`'s options, if it is one of them.
fn long_of(cmd: &clap::Command, given: &str) -> Option<String> {
    let given = given.split('=').next().unwrap_or(given);
    cmd.get_arguments().find_map(|a| {
        let long = a.get_long()?;
        let matches = match given.strip_prefix("--") {
            Some(l) => l == long,
            None => {
                let mut short = given.strip_prefix('-')?.chars();
                let c = short.next()?;
                a.get_short() == Some(c)
            }
        };
        matches.then(|| format!("--{long}"))
    })
}

/// What to say of the option `given`, unknown to the command `name`:
/// its new name when it was renamed, else the commands that take it.
fn unknown_option(cli: &clap::Command, name: &str, given: &str) -> Option<String> {
    let bare = given.split('=').next().unwrap_or(given);
    if let Some((_, old, new, why)) = RENAMED
        .iter()
        .find(|(c, old, _, _)| *c == name && *old == bare)
    {
        return Some(format!("`pqcprof {name} {old}` is now {new}: {why}"));
    }
    let mut long = None;
    let takers: Vec<&str> = cli
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != name)
        .filter_map(|s| {
            let l = long_of(s, given)?;
            long.get_or_insert(l);
            Some(s.get_name())
        })
        .collect();
    let long = long?;
    let what = match name {
        "cpu" => " (it measures the CPU backends only)",
        "gpu" => " (it measures the GPU backends only)",
        _ => "",
    };
    Some(format!(
        "{long} does not apply to `pqcprof {name}`{what}; it is an option of {}",
        takers
            .iter()
            .map(|t| format!("`pqcprof {t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// `e`, a command line clap refused, with an option that was renamed or
/// belongs to another command named as such (exit 2 either way).
pub fn explain(e: clap::Error, argv: &[String]) -> clap::Error {
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let cli = built();
    let name = command_name(argv);
    match name.and_then(|n| unknown_option(&cli, n, given)) {
        Some(message) => command_or_top(&cli, name).error(ErrorKind::UnknownArgument, message),
        None => e,
    }
}

/// A usage error found after parsing (values that do not fit together),
/// shown as clap shows its own: the message, the command's usage, exit 2.
pub fn usage_error(message: &str, argv: &[String]) -> clap::Error {
    let cli = built();
    command_or_top(&cli, command_name(argv)).error(ErrorKind::ValueValidation, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// The message clap would print for `words`, after [`explain`].
    fn refused(words: &[&str]) -> (ErrorKind, String) {
        let e = Cli::try_parse_from(words).unwrap_err();
        let e = explain(e, &argv(words));
        (e.kind(), e.to_string())
    }

    #[test]
    fn the_command_is_the_first_word_not_an_option() {
        assert_eq!(
            command_name(&argv(&["pqcprof", "-q", "cpu", "-v"])),
            Some("cpu")
        );
        assert_eq!(command_name(&argv(&["pqcprof", "--help"])), None);
    }

    #[test]
    fn a_renamed_option_names_its_new_name() {
        let (kind, text) = refused(&["pqcprof", "sweep", "--warmup", "1"]);
        assert_eq!(kind, ErrorKind::UnknownArgument);
        assert!(text.contains("is now --warmup-seconds"), "{text}");
        let (_, text) = refused(&["pqcprof", "report", "x.json", "--output", "r.html"]);
        assert!(text.contains("is now --out"), "{text}");
        let (_, text) = refused(&["pqcprof", "offload", "--threads=4"]);
        assert!(text.contains("is now --workers"), "{text}");
    }

    #[test]
    fn an_option_of_another_command_names_the_commands_that_take_it() {
        let (kind, text) = refused(&["pqcprof", "cpu", "--kernel", "warp"]);
        assert_eq!(kind, ErrorKind::UnknownArgument);
        assert!(
            text.contains("--kernel does not apply to `pqcprof cpu`")
                && text.contains("`pqcprof bench`, `pqcprof gpu`"),
            "{text}"
        );
        let (_, text) = refused(&["pqcprof", "gpu", "-j", "2"]);
        assert!(
            text.contains("--threads does not apply to `pqcprof gpu`")
                && text.contains("`pqcprof cpu`"),
            "{text}"
        );
        // An option no command has keeps clap's own message.
        let (_, text) = refused(&["pqcprof", "cpu", "--frobnicate"]);
        assert!(
            text.contains("unexpected argument '--frobnicate'"),
            "{text}"
        );
    }

    #[test]
    fn every_renamed_option_is_gone_from_its_command_and_its_new_name_there() {
        let cli = built();
        for (command, old, new, _) in RENAMED {
            let sub = cli.find_subcommand(command).unwrap();
            assert_eq!(long_of(sub, old), None, "{command} {old}");
            assert_eq!(long_of(sub, new).as_deref(), Some(*new), "{command} {new}");
        }
    }
}
