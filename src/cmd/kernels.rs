//! `pqcprof kernels`: each native kernel's static cost (registers, local and
//! shared memory, resident blocks) for one architecture or all, from NVRTC
//! and ptxas, as a table or JSON.

use crate::backend::native_gpu::{self, resources};
use crate::cmd::bench_args::heading;
use crate::cmd::stdout;
use crate::core::exit;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

/// Options of `kernels`.
#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// GPU architectures, comma-separated, or all [default: sm_90]
    ///
    /// sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120, or `all`.
    #[arg(
        long,
        value_name = "ARCHS",
        value_delimiter = ',',
        default_value = "sm_90",
        hide_default_value = true,
        hide_possible_values = true,
        value_parser = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "all"],
        help_heading = heading::GPU
    )]
    pub arch: Vec<String>,
    /// Threads per block for the occupancy estimate
    ///
    /// From 1 to 1024. [default: the native-gpu launch's]
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=1024),
        allow_negative_numbers = true,
        help_heading = heading::GPU
    )]
    pub threads_per_block: Option<u32>,
    /// Print JSON instead of a table
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    /// Algorithms whose kernels to report, or groups [default: all]
    ///
    /// Names (ML-KEM-768, mldsa44, ...) or groups (all, mlkem, mldsa),
    /// comma-separated; only their families' translation units are
    /// compiled.
    #[arg(
        short = 'a',
        long = "alg",
        value_name = "ALGS",
        value_parser = super::bench_args::algorithm_list,
        help_heading = heading::MEASURE
    )]
    pub algorithms: Vec<String>,
    /// List the kernel variants of each algorithm; compiles nothing
    ///
    /// One line per variant (`warp ML-KEM-512,ML-KEM-768,ML-KEM-1024`),
    /// without compiling anything (what `--kernel` accepts for which
    /// `--alg`).
    #[arg(
        long,
        conflicts_with_all = ["json", "arch", "threads_per_block", "algorithms", "prebuild"],
        help_heading = heading::MEASURE
    )]
    pub variants: bool,
    /// Compile kernel images into DIR for a machine without NVRTC
    ///
    /// Compile the kernels of every family (every variant) asked for by
    /// `--alg` for each `--arch` into DIR, machine code, PTX and NVRTC's log,
    /// named by their sources' hash and the architecture, and list them: a
    /// run of this same binary elsewhere with PQCPROF_PTX_CACHE=DIR loads
    /// them with no NVRTC there. Images already in DIR are kept.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["json", "threads_per_block"],
        help_heading = heading::RESULTS
    )]
    pub prebuild: Option<PathBuf>,
}

/// One architecture's part of `pqcprof kernels --json`.
#[derive(Serialize)]
struct ArchResources {
    arch: String,
    nvrtc: String,
    threads_per_block: u32,
    kernels: Vec<KernelRow>,
}

#[derive(Serialize)]
struct KernelRow {
    #[serde(flatten)]
    resources: resources::KernelResources,
    /// `thread`, `warp` or `block` (see `--kernel`).
    variant: &'static str,
    /// Threads per block of its launch.
    threads_per_block: u32,
    /// Dynamic shared memory per block, bytes (none of our kernels asks for any).
    dynamic_shared_bytes: u32,
    resident_blocks_per_sm: u32,
    /// Operations one multiprocessor computes at once.
    resident_operations_per_sm: u32,
    occupancy_pct: f64,
}

/// `pqcprof kernels`: the static cost of every native kernel.
pub fn kernels(a: &KernelsArgs) -> anyhow::Result<i32> {
    if a.variants {
        stdout::print(variants_list())?;
        return Ok(exit::OK);
    }
    // Bad names are refused before NVRTC is looked for.
    let algs = crate::core::catalog::parse_algorithms(&a.algorithms)
        .map_err(|e| anyhow::anyhow!("--alg: {e}"))?;
    if let Some(dir) = &a.prebuild {
        return prebuild(dir, &a.arch, &algs);
    }
    let units = native_gpu::kernels::units_for(&algs);
    let all_archs = a.arch.iter().any(|x| x == "all");
    // Without NVRTC, prebuilt images of every unit and architecture asked
    // for still have ptxas's report in their logs.
    let nvrtc = match usable_nvrtc() {
        Ok(label) => label,
        Err(_) if !all_archs && prebuilt_cover(&a.arch, &units) => {
            "prebuilt images; no NVRTC here".into()
        }
        Err(why) => return Err(why),
    };
    // A kernel's name starts with its parameter set's (`mlkem768_`).
    let prefixes: Vec<String> = algs
        .iter()
        .map(|&alg| format!("{}_", native_gpu::kernels::set_name(alg)))
        .collect();
    let wanted = |name: &str| {
        name == native_gpu::kernels::HOLD_KERNEL || prefixes.iter().any(|p| name.starts_with(p))
    };
    let tpb = a
        .threads_per_block
        .unwrap_or(native_gpu::sizing::THREADS_PER_BLOCK);
    let mut all = vec![];
    for arch in selected_archs(&a.arch, all_archs) {
        let Some(found) = compiled_resources(arch, &units, &nvrtc, all_archs)? else {
            continue;
        };
        let limits = resources::limits(arch).expect("listed");
        all.push(ArchResources {
            arch: arch.into(),
            nvrtc: nvrtc.clone(),
            threads_per_block: tpb,
            kernels: found
                .into_iter()
                .filter(|r| wanted(&r.name))
                .map(|r| kernel_row(r, limits, tpb))
                .collect(),
        });
    }
    if a.json {
        stdout::println(serde_json::to_string_pretty(&all)?)?;
        return Ok(exit::OK);
    }
    stdout::print(tables(&all))?;
    Ok(exit::OK)
}

/// `kernels --prebuild DIR`: every unit `algs` need, for every architecture
/// asked for, compiled into `dir` (or found there already), one line each.
fn prebuild(
    dir: &std::path::Path,
    archs: &[String],
    algs: &[crate::core::catalog::Algorithm],
) -> anyhow::Result<i32> {
    use native_gpu::kernel_cache::{self, Origin};
    std::fs::create_dir_all(dir).map_err(|e| {
        anyhow::anyhow!("--prebuild {}: cannot make the folder: {e}", dir.display())
    })?;
    let units = native_gpu::kernels::units_for(algs);
    let all_archs = archs.iter().any(|x| x == "all");
    let version = crate::probe::gpu::nvrtc_version();
    for arch in selected_archs(archs, all_archs) {
        log::info!("the native kernels for {arch} into {} ...", dir.display());
        for built in kernel_cache::compile_units_cached_in(Some(dir), &units, arch) {
            let built = match built {
                Ok(b) => b,
                Err(e) if all_archs && !tested(arch) => {
                    log::warn!("{arch} skipped: {e}");
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let unit = built.compiled.unit;
            let (path, how) = match (&built.origin, version) {
                (Origin::Cache(p), _) => (p.clone(), "already there".to_string()),
                (Origin::Prebuilt(p, (x, y)), _) => {
                    (p.clone(), format!("already there, made by NVRTC {x}.{y}"))
                }
                (Origin::Compiled, Some(v)) => {
                    native_gpu::bounded_compile::clear_compile_log(dir, unit, arch, v);
                    (
                        dir.join(format!(
                            "{}.cubin",
                            kernel_cache::cache_file_stem(unit, arch, v)
                        )),
                        format!("compiled in {:.1} s", built.seconds),
                    )
                }
                (Origin::Compiled, None) => unreachable!("compiled without NVRTC"),
            };
            stdout::println(format!(
                "{} {arch}: {} ({} bytes of machine code, {} of PTX; {how})",
                native_gpu::kernels::unit_name(unit),
                path.display(),
                built.compiled.cubin.len(),
                built.compiled.ptx.len()
            ))?;
        }
    }
    Ok(exit::OK)
}

/// Whether the kernel cache holds a whole image of this binary's sources
/// for each of `units` and `archs`.
fn prebuilt_cover(archs: &[String], units: &[crate::core::catalog::Family]) -> bool {
    let Some(dir) = native_gpu::kernel_cache::cache_dir() else {
        return false;
    };
    archs.iter().all(|arch| {
        units
            .iter()
            .all(|&u| native_gpu::kernel_cache::lookup(&dir, u, arch, None).is_some())
    })
}

/// Whether every build is tested for `arch` (the others are compiled only
/// where this NVRTC knows them).
fn tested(arch: &str) -> bool {
    resources::SM_LIMITS[..resources::TESTED_ARCHS]
        .iter()
        .any(|l| l.arch == arch)
}

/// The loaded NVRTC's label, or why the kernels cannot be compiled.
fn usable_nvrtc() -> anyhow::Result<String> {
    if let Err(why) = crate::probe::gpu::nvrtc_library() {
        anyhow::bail!("NVRTC is needed to compile the kernels and cannot be used: {why}");
    }
    let Some(nvrtc) = crate::backend::native_gpu::kernels::nvrtc_label() else {
        anyhow::bail!(
            "NVRTC is needed to compile the kernels and was not found (install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc` and add its lib folder to LD_LIBRARY_PATH)"
        );
    };
    Ok(nvrtc)
}

/// The architectures `--arch` names, in the order of the limits table.
fn selected_archs(asked: &[String], all_archs: bool) -> Vec<&'static str> {
    resources::SM_LIMITS
        .iter()
        .map(|l| l.arch)
        .filter(|x| all_archs || asked.iter().any(|y| y == x))
        .collect()
}

/// ptxas's report of every kernel of `units` compiled for `arch`; `None`
/// when `--arch all` reaches an architecture this NVRTC cannot compile for
/// (Blackwell), said and skipped.
fn compiled_resources(
    arch: &str,
    units: &[crate::core::catalog::Family],
    nvrtc: &str,
    all_archs: bool,
) -> anyhow::Result<Option<Vec<resources::KernelResources>>> {
    log::info!("the native kernels for {arch}, with ptxas's report ...");
    let tested = tested(arch);
    let found = match resources::kernel_resources(arch, units) {
        Ok((f, origins)) => {
            for origin in origins {
                match origin {
                    native_gpu::kernel_cache::Origin::Cache(p) => {
                        log::info!("{arch}: from the cache ({})", p.display())
                    }
                    native_gpu::kernel_cache::Origin::Prebuilt(p, (x, y)) => log::info!(
                        "{arch}: a prebuilt image of NVRTC {x}.{y} ({})",
                        p.display()
                    ),
                    native_gpu::kernel_cache::Origin::Compiled => {}
                }
            }
            f
        }
        // Blackwell under `all`: only where this NVRTC knows it.
        Err(e) if all_archs && !tested => {
            log::warn!("{arch} skipped: {nvrtc} cannot compile for it ({e})");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    anyhow::ensure!(
        !found.is_empty(),
        "NVRTC's log for {arch} held no ptxas report"
    );
    Ok(Some(found))
}

/// One kernel's row: its variant's block size and the occupancy that
/// its registers and shared memory allow on `limits`.
fn kernel_row(r: resources::KernelResources, limits: resources::SmLimits, tpb: u32) -> KernelRow {
    use native_gpu::sizing::Variant;
    let variant = Variant::of_kernel(&r.name);
    let block = if variant == Variant::Thread {
        tpb
    } else {
        variant.threads_per_block(tpb)
    };
    let (blocks, pct) = resources::occupancy(limits, r.registers, block, r.shared_bytes);
    KernelRow {
        variant: variant.name(),
        threads_per_block: block,
        dynamic_shared_bytes: 0,
        resident_operations_per_sm: blocks * variant.operations_per_block(block),
        resources: r,
        resident_blocks_per_sm: blocks,
        occupancy_pct: pct,
    }
}

/// The text form: one table per architecture, kernels by name.
fn tables(all: &[ArchResources]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for r in all {
        let _ = writeln!(
            out,
            "{} ({}), {} threads per block for the thread variant; occupancy is the estimate from registers and shared memory (a GPU run records the driver's figure)",
            r.arch, r.nvrtc, r.threads_per_block
        );
        let _ = writeln!(
            out,
            "{:<22} {:<7} {:>5} {:>5} {:>8} {:>13} {:>8} {:>7} {:>7} {:>10}",
            "kernel",
            "variant",
            "thr",
            "regs",
            "stack B",
            "spill st/ld B",
            "smem B",
            "blk/SM",
            "ops/SM",
            "occupancy"
        );
        let mut rows: Vec<&KernelRow> = r.kernels.iter().collect();
        rows.sort_by(|x, y| x.resources.name.cmp(&y.resources.name));
        for k in rows {
            let res = &k.resources;
            let _ = writeln!(
                out,
                "{:<22} {:<7} {:>5} {:>5} {:>8} {:>13} {:>8} {:>7} {:>7} {:>9.1}%",
                res.name,
                k.variant,
                k.threads_per_block,
                res.registers,
                res.stack_bytes,
                format!("{}/{}", res.spill_store_bytes, res.spill_load_bytes),
                res.shared_bytes,
                k.resident_blocks_per_sm,
                k.resident_operations_per_sm,
                k.occupancy_pct
            );
        }
        out.push('\n');
    }
    out
}

/// `kernels --variants`: for each variant, the algorithms that have it for
/// every one of their operations, in catalogue order.
fn variants_list() -> String {
    use crate::backend::native_gpu::sizing::{variants, Variant};
    use crate::core::catalog::Algorithm;
    let algs = Algorithm::ALL;
    let mut out = String::new();
    for v in Variant::ALL {
        let have: Vec<&str> = algs
            .iter()
            .filter(|a| {
                a.operations()
                    .iter()
                    .all(|op| variants(**a, *op).contains(&v))
            })
            .map(|a| a.name())
            .collect();
        if !have.is_empty() {
            out += &format!("{} {}\n", v.name(), have.join(","));
        }
    }
    out
}

#[cfg(test)]
mod variant_list_tests {
    #[test]
    fn every_native_algorithm_has_the_thread_variant_and_kems_the_warp_one() {
        let list = super::variants_list();
        let lines: Vec<&str> = list.lines().collect();
        assert_eq!(
            lines[0],
            "thread ML-KEM-512,ML-KEM-768,ML-KEM-1024,ML-DSA-44,ML-DSA-65,ML-DSA-87"
        );
        assert_eq!(lines[1], "warp ML-KEM-512,ML-KEM-768,ML-KEM-1024");
    }
}
