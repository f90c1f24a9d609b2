//! Command-line parsing only: the top-level options and the list of
//! commands. Each command's arguments, their checks and its entry function
//! live in the command's own file beside this one.

use clap::{Parser, Subcommand};

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
    next_line_help = true,
    max_term_width = 100,
    after_help = format!("{TOP_EXAMPLES}\n\n{}", crate::core::exit::HELP)
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Print errors only: no progress lines, notes, warnings or progress bars.
    #[arg(
        short,
        long,
        global = true,
        conflicts_with = "verbose",
        display_order = 1000
    )]
    pub quiet: bool,
    /// Also print debug lines (what was found and chosen, and why); twice
    /// (-vv) adds trace lines, those of the libraries pqcprof links included.
    #[arg(
        short,
        long,
        global = true,
        action = clap::ArgAction::Count,
        display_order = 1000
    )]
    pub verbose: u8,
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
    Cpu(super::bench_args::BenchArgs),
    /// Measure the GPU backends only (native-gpu and cuPQC), and plugins
    /// named with --backend plugin:PATH.
    #[command(after_help = GPU_EXAMPLES)]
    Gpu(super::bench_args::BenchArgs),
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
  pqcprof offload --alg ML-DSA-65 --op sign --rate-sweep --slo p99=5ms --threads 4
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
