//! `pqcprof kernels`: each native kernel's static cost (registers, local and
//! shared memory, resident blocks) for one architecture or all, from NVRTC
//! and ptxas, as a table or JSON.

use crate::backend::native_gpu::{self};
use crate::core::exit;
use serde::Serialize;

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
    resources: crate::backend::native_gpu::resources::KernelResources,
    resident_blocks_per_sm: u32,
    occupancy_pct: f64,
}

/// `pqcprof kernels`: the static cost of every native kernel.
pub fn kernels(a: &crate::cmd::cli::KernelsArgs) -> anyhow::Result<i32> {
    use crate::backend::native_gpu::resources;
    if let Err(why) = crate::probe::gpu::nvrtc_library() {
        anyhow::bail!("NVRTC is needed to compile the kernels and cannot be used: {why}");
    }
    let Some(nvrtc) = crate::backend::native_gpu::kernels::nvrtc_label() else {
        anyhow::bail!(
            "NVRTC is needed to compile the kernels and was not found (install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc` and add its lib folder to LD_LIBRARY_PATH)"
        );
    };
    let archs: Vec<&'static str> = if a.arch.iter().any(|x| x == "all") {
        resources::SM_LIMITS.iter().map(|l| l.arch).collect()
    } else {
        resources::SM_LIMITS
            .iter()
            .map(|l| l.arch)
            .filter(|x| a.arch.iter().any(|y| y == x))
            .collect()
    };
    let tpb = a
        .threads_per_block
        .unwrap_or(native_gpu::sizing::THREADS_PER_BLOCK);
    let mut all = vec![];
    for arch in archs {
        let limits = resources::limits(arch).expect("listed");
        eprintln!("pqcprof: compiling the native kernels for {arch} with ptxas's report ...");
        let found = resources::kernel_resources(arch)?;
        anyhow::ensure!(
            !found.is_empty(),
            "NVRTC's log for {arch} held no ptxas report"
        );
        let kernels = found
            .into_iter()
            .map(|r| {
                let (blocks, pct) = resources::occupancy(limits, r.registers, tpb);
                KernelRow {
                    resources: r,
                    resident_blocks_per_sm: blocks,
                    occupancy_pct: pct,
                }
            })
            .collect();
        all.push(ArchResources {
            arch: arch.into(),
            nvrtc: nvrtc.clone(),
            threads_per_block: tpb,
            kernels,
        });
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(exit::OK);
    }
    for r in &all {
        println!(
            "{} ({}), {} threads per block; occupancy is the estimate from registers alone (a GPU run records the driver's figure)",
            r.arch, r.nvrtc, r.threads_per_block
        );
        println!(
            "{:<16} {:>5} {:>9} {:>13} {:>7} {:>10}",
            "kernel", "regs", "stack B", "spill st/ld B", "blk/SM", "occupancy"
        );
        let mut rows: Vec<&KernelRow> = r.kernels.iter().collect();
        rows.sort_by(|x, y| x.resources.name.cmp(&y.resources.name));
        for k in rows {
            let res = &k.resources;
            println!(
                "{:<16} {:>5} {:>9} {:>13} {:>7} {:>9.1}%",
                res.name,
                res.registers,
                res.stack_bytes,
                format!("{}/{}", res.spill_store_bytes, res.spill_load_bytes),
                k.resident_blocks_per_sm,
                k.occupancy_pct
            );
        }
        println!();
    }
    Ok(exit::OK)
}
