//! What each native kernel costs a GPU before it runs: registers, stack
//! (local memory) and spills as ptxas reports them through NVRTC, and the
//! occupancy those registers allow on each architecture. Needs NVRTC, not a
//! GPU: `pqcprof kernels`. A GPU run records the driver's own figures in
//! each record's `kernel` field; this is the static side of the same story.

use serde::Serialize;

/// One entry point's resources, from ptxas's `-v` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    /// Entry point, e.g. `mlkem768_keygen`.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Stack frame per thread, bytes (lives in local memory).
    pub stack_bytes: u32,
    /// Bytes of registers spilled to local memory per thread (stores).
    pub spill_store_bytes: u32,
    /// Bytes reloaded from those spills per thread.
    pub spill_load_bytes: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
}

/// The first unsigned number in `s` that ends right before `unit` (e.g.
/// `"126 registers"` for unit `" registers"`).
fn number_before(s: &str, unit: &str) -> Option<u32> {
    let end = s.find(unit)?;
    let head = s[..end].trim_end();
    let start = head
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    head[start..].parse().ok()
}

/// The name between the first pair of single quotes.
fn quoted(s: &str) -> Option<&str> {
    let a = s.find('\'')? + 1;
    let b = a + s[a..].find('\'')?;
    Some(&s[a..b])
}

/// Reads ptxas's `-v` report (as NVRTC's log carries it): every entry
/// point's registers, stack frame and spills, in the order compiled. Lines
/// for device functions that were not inlined are skipped: their costs are
/// already in the cumulative figures of the entries that call them.
pub fn parse_ptxas_log(log: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = vec![];
    // The function whose "Function properties" block is open.
    let mut properties_of: Option<String> = None;
    for line in log.lines() {
        if line.contains("Compiling entry function") {
            if let Some(name) = quoted(line) {
                out.push(KernelResources {
                    name: name.to_string(),
                    registers: 0,
                    stack_bytes: 0,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                    shared_bytes: 0,
                });
            }
            properties_of = None;
        } else if let Some(i) = line.find("Function properties for ") {
            properties_of = Some(
                line[i + "Function properties for ".len()..]
                    .trim()
                    .to_string(),
            );
        } else if line.contains("bytes stack frame") {
            let target = properties_of.take();
            if let Some(k) = out
                .last_mut()
                .filter(|k| target.as_deref() == Some(k.name.as_str()))
            {
                k.stack_bytes = number_before(line, " bytes stack frame").unwrap_or(0);
                k.spill_store_bytes = number_before(line, " bytes spill stores").unwrap_or(0);
                k.spill_load_bytes = number_before(line, " bytes spill loads").unwrap_or(0);
            }
        } else if line.contains(" registers") && line.contains("Used ") {
            if let (Some(k), Some(r)) = (out.last_mut(), number_before(line, " registers")) {
                k.registers = r;
                k.shared_bytes = number_before(line, " bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

/// Per-multiprocessor limits of one compute capability, from the CUDA C++
/// Programming Guide's "Technical Specifications per Compute Capability"
/// table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SmLimits {
    /// `sm_XY`.
    pub arch: &'static str,
    /// Resident warps per multiprocessor.
    pub max_warps: u32,
    /// Resident blocks per multiprocessor.
    pub max_blocks: u32,
    /// 32-bit registers per multiprocessor.
    pub registers: u32,
    /// Shared memory per multiprocessor, bytes.
    pub shared_bytes: u32,
    /// Shared memory the system reserves per resident block, bytes.
    pub shared_reserved_per_block: u32,
}

/// Register allocation unit, registers per warp (every architecture here).
const REGISTER_UNIT: u32 = 256;

/// The architectures the kernels are built and tested for (Turing to
/// Hopper), then Blackwell's (compiled where NVRTC knows them). Shared
/// memory per multiprocessor: 64 / 164 / 100 / 100 / 228 / 228 / 128 KiB, as
/// the Programming Guide's table gives them.
pub const SM_LIMITS: [SmLimits; 7] = [
    SmLimits {
        arch: "sm_75",
        shared_bytes: 65536,
        shared_reserved_per_block: 0,
        max_warps: 32,
        max_blocks: 16,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_80",
        shared_bytes: 167936,
        shared_reserved_per_block: 1024,
        max_warps: 64,
        max_blocks: 32,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_86",
        shared_bytes: 102400,
        shared_reserved_per_block: 1024,
        max_warps: 48,
        max_blocks: 16,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_89",
        shared_bytes: 102400,
        shared_reserved_per_block: 1024,
        max_warps: 48,
        max_blocks: 24,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_90",
        shared_bytes: 233472,
        shared_reserved_per_block: 1024,
        max_warps: 64,
        max_blocks: 32,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_100",
        shared_bytes: 233472,
        shared_reserved_per_block: 1024,
        max_warps: 64,
        max_blocks: 32,
        registers: 65536,
    },
    SmLimits {
        arch: "sm_120",
        shared_bytes: 131072,
        shared_reserved_per_block: 1024,
        max_warps: 48,
        max_blocks: 32,
        registers: 65536,
    },
];

/// The architectures every build is tested for; the others of `SM_LIMITS`
/// are compiled where this NVRTC supports them.
pub const TESTED_ARCHS: usize = 5;

/// The limits of `arch`, if it is one of `SM_LIMITS`.
pub fn limits(arch: &str) -> Option<SmLimits> {
    SM_LIMITS.iter().copied().find(|l| l.arch == arch)
}

/// Blocks of `threads_per_block` threads using `registers` registers each
/// and `shared` bytes of shared memory per block that one multiprocessor
/// holds at once, and the resulting occupancy in percent of its warps.
pub fn occupancy(l: SmLimits, registers: u32, threads_per_block: u32, shared: u32) -> (u32, f64) {
    let warps_per_block = threads_per_block.div_ceil(32).max(1);
    let regs_per_warp = (registers.max(1) * 32).div_ceil(REGISTER_UNIT) * REGISTER_UNIT;
    let by_registers = (l.registers / regs_per_warp) / warps_per_block;
    let by_warps = l.max_warps / warps_per_block;
    let by_shared = if shared == 0 {
        u32::MAX
    } else {
        l.shared_bytes / (shared + l.shared_reserved_per_block)
    };
    let blocks = by_registers.min(by_warps).min(l.max_blocks).min(by_shared);
    let pct = 100.0 * f64::from(blocks * warps_per_block) / f64::from(l.max_warps);
    (blocks, pct)
}

/// The kernels of `units` for `arch` (compiled, each unit in its own
/// thread, or read from the cache with the log of the compile that made
/// them) and ptxas's report in those logs, every entry point once (each
/// unit has its own copy of the device-side wait); with where each unit came
/// from.
pub fn kernel_resources(
    arch: &str,
    units: &[crate::core::catalog::Family],
) -> Result<
    (
        Vec<KernelResources>,
        Vec<crate::backend::native_gpu::kernel_cache::Origin>,
    ),
    crate::backend::native_gpu::kernels::CompileFailure,
> {
    let mut found: Vec<KernelResources> = vec![];
    let mut origins = vec![];
    for built in crate::backend::native_gpu::kernel_cache::compile_units_cached(units, arch) {
        let built = built?;
        for k in parse_ptxas_log(&built.compiled.log) {
            if !found.iter().any(|f| f.name == k.name) {
                found.push(k);
            }
        }
        origins.push(built.origin);
    }
    Ok((found, origins))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like ptxas's report: an entry, a device function that was
    /// not inlined (its own properties block), then the entry's totals.
    const LOG: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'mldsa87_sign' for 'sm_90'
ptxas info    : Function properties for mldsa87_sign
    18464 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Function properties for helper_not_inlined
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 124 registers, used 0 barriers, 18464 bytes cumulative stack size, 8324 bytes smem
ptxas info    : Compiling entry function 'mlkem512_keygen' for 'sm_90'
ptxas info    : Function properties for mlkem512_keygen
    2512 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 96 registers, used 0 barriers, 2512 bytes cumulative stack size
";

    #[test]
    fn reads_entries_and_skips_device_functions() {
        let k = parse_ptxas_log(LOG);
        assert_eq!(
            k,
            vec![
                KernelResources {
                    name: "mldsa87_sign".into(),
                    registers: 124,
                    stack_bytes: 18464,
                    spill_store_bytes: 8,
                    spill_load_bytes: 12,
                    shared_bytes: 8324,
                },
                KernelResources {
                    name: "mlkem512_keygen".into(),
                    registers: 96,
                    stack_bytes: 2512,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                    shared_bytes: 0,
                },
            ]
        );
        assert!(parse_ptxas_log("").is_empty());
        assert!(parse_ptxas_log("error: something else\n").is_empty());
    }

    #[test]
    fn occupancy_by_hand() {
        let sm90 = limits("sm_90").unwrap();
        // 128 regs x 32 threads = 4096 per warp; 65536 / 4096 = 16 warps
        // = 4 blocks of 4 warps = 16 of 64 warps.
        assert_eq!(occupancy(sm90, 128, 128, 0), (4, 25.0));
        // 12,932 bytes of shared memory per warp-block (+1 KiB reserved):
        // 228 KiB hold 16 of them.
        assert_eq!(occupancy(sm90, 64, 32, 12932), (16, 25.0));
        // 96 regs: 3072 per warp, 21 warps, 5 blocks = 20 warps.
        assert_eq!(occupancy(sm90, 96, 128, 0), (5, 31.25));
        // 130 regs round up to 4352 per warp: 15 warps, 3 blocks.
        assert_eq!(occupancy(sm90, 130, 128, 0), (3, 18.75));
        // 32 regs: limited by warps (64 / 4 = 16 blocks), not registers.
        assert_eq!(occupancy(sm90, 32, 128, 0), (16, 100.0));
        // Turing: 32 warps at most; 64 regs allow 8 blocks but warps only 8.
        let sm75 = limits("sm_75").unwrap();
        assert_eq!(occupancy(sm75, 64, 128, 0), (8, 100.0));
        // Tiny blocks hit the block limit.
        assert_eq!(occupancy(sm90, 32, 32, 0), (32, 50.0));
        assert!(limits("sm_70").is_none());
    }

    #[test]
    fn numbers_are_read_next_to_their_units() {
        assert_eq!(
            number_before("Used 126 registers, used 0", " registers"),
            Some(126)
        );
        assert_eq!(
            number_before("    0 bytes spill loads", " bytes spill loads"),
            Some(0)
        );
        assert_eq!(number_before("no number registers", " registers"), None);
    }
}
