//! What a native-kernel batch needs before it runs: the launch shape, the
//! device bytes per operation and the peak over a kernel chain, and the
//! largest batch that fits the device's free memory (or why none does).

use crate::core::catalog::{Algorithm, Kind, Operation};
use cudarc::driver::LaunchConfig;

/// Threads per block of the `thread` variant (one thread computes one
/// operation) and of the `block` variant (one block, one operation).
pub const THREADS_PER_BLOCK: u32 = 128;

/// How a kernel shares an operation among CUDA threads: what `--kernel`
/// chooses and each record names as `kernel.variant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One thread per operation, blocks of `THREADS_PER_BLOCK`.
    Thread,
    /// One warp (a block of 32 threads) per operation, its polynomials in
    /// shared memory.
    Warp,
    /// One block of up to `THREADS_PER_BLOCK` threads per operation.
    Block,
}

impl Variant {
    /// Every variant, in `--kernel`'s order.
    pub const ALL: [Variant; 3] = [Variant::Thread, Variant::Warp, Variant::Block];

    /// The name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Thread => "thread",
            Variant::Warp => "warp",
            Variant::Block => "block",
        }
    }

    /// The variant called `name`.
    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// What an entry point of this variant adds to the operation's kernel
    /// name (`mlkem768_keygen_warp`).
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Thread => "",
            Variant::Warp => "_warp",
            Variant::Block => "_block",
        }
    }

    /// The variant of the entry point `kernel`, from its name.
    pub fn of_kernel(kernel: &str) -> Variant {
        Variant::ALL
            .into_iter()
            .rev()
            .find(|v| !v.suffix().is_empty() && kernel.ends_with(v.suffix()))
            .unwrap_or(Variant::Thread)
    }

    /// Threads per block of a launch, at most `max_threads_per_block`.
    pub fn threads_per_block(self, max_threads_per_block: u32) -> u32 {
        match self {
            Variant::Warp => 32,
            Variant::Thread | Variant::Block => THREADS_PER_BLOCK.min(max_threads_per_block.max(1)),
        }
    }

    /// Operations one block computes.
    pub fn operations_per_block(self, threads_per_block: u32) -> u32 {
        match self {
            Variant::Thread => threads_per_block,
            Variant::Warp | Variant::Block => 1,
        }
    }
}

/// The variants built for `op` of `alg`, the one-thread kernel first
/// (cuda/native/*_kernels.cuh).
pub fn variants(alg: Algorithm, _op: Operation) -> &'static [Variant] {
    match alg.kind() {
        Kind::Kem => &[Variant::Thread, Variant::Warp],
        Kind::Signature => &[Variant::Thread, Variant::Block],
    }
}

/// Launch shape of the `thread` variant for `n` operations (or, for
/// signing, `n` queue threads).
pub fn launch_shape(n: u32, max_threads_per_block: u32) -> LaunchConfig {
    variant_launch_shape(Variant::Thread, n, max_threads_per_block)
}

/// Launch shape of `variant` for `n` operations: blocks of its size, one
/// block per operation for the cooperative ones.
pub fn variant_launch_shape(variant: Variant, n: u32, max_threads_per_block: u32) -> LaunchConfig {
    let block = variant.threads_per_block(max_threads_per_block);
    let per = variant.operations_per_block(block);
    LaunchConfig {
        grid_dim: (n.div_ceil(per).max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Threads of a launch of `shape`.
pub fn launch_threads(shape: &LaunchConfig) -> usize {
    shape.grid_dim.0 as usize * shape.block_dim.0 as usize
}

/// Threads of a signing launch over `n` messages with blocks of `block`:
/// the kernel's threads take messages from a queue, so more threads than
/// the device holds at once (`resident_blocks` of them per multiprocessor,
/// or `resident_threads` when the driver did not say) would only wait, each
/// with a workspace; fewer than `n` is enough.
pub fn sign_threads(
    n: usize,
    block: u32,
    resident_blocks: Option<u32>,
    sms: u32,
    resident_threads: usize,
) -> usize {
    let block = block.max(1) as usize;
    let resident = resident_blocks
        .map(|b| b as usize * sms as usize * block)
        .unwrap_or(resident_threads)
        .max(block);
    n.max(1).min(resident)
}

/// Device bytes one operation's buffers take.
pub fn device_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    match (alg.kind(), op) {
        (Kind::Kem, Operation::KeyGen) => 64 + pk + sk,
        (Kind::Kem, Operation::Encaps) => pk + 32 + s.ciphertext_bytes.unwrap_or(0) + 32,
        (Kind::Kem, _) => sk + s.ciphertext_bytes.unwrap_or(0) + 32,
        (Kind::Signature, Operation::KeyGen) => 32 + pk + sk,
        (Kind::Signature, Operation::Sign) => {
            sk + message + 32 + alg.signature_stride().unwrap_or(0)
        }
        (Kind::Signature, _) => pk + message + alg.signature_stride().unwrap_or(0) + 4,
    }
}

/// Bytes per operation of the buffers the timed kernel reads (what an
/// end-to-end run copies to the device).
pub fn input_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    let sig = alg.signature_stride().unwrap_or(0);
    match (alg.kind(), op) {
        (Kind::Kem, Operation::KeyGen) => 64,
        (Kind::Kem, Operation::Encaps) => pk + 32,
        (Kind::Kem, _) => s.ciphertext_bytes.unwrap_or(0) + sk,
        (Kind::Signature, Operation::KeyGen) => 32,
        (Kind::Signature, Operation::Sign) => message + sk + 32,
        (Kind::Signature, _) => message + sig + pk,
    }
}

/// The operations `prepare` launches for `op`, in order, the timed one
/// last: keys first, then ciphertexts or signatures when `op` needs them.
pub fn launch_chain(alg: Algorithm, op: Operation) -> Vec<Operation> {
    use Operation::*;
    match (alg.kind(), op) {
        (_, KeyGen) => vec![KeyGen],
        (Kind::Kem, Encaps) | (Kind::Signature, Sign) => vec![KeyGen, op],
        (Kind::Kem, _) => vec![KeyGen, Encaps, op],
        (Kind::Signature, _) => vec![KeyGen, Sign, op],
    }
}

/// Device bytes per operation at the peak of `prepare` and the timed runs
/// of `op`: the largest of its phases (see `prepare`), each of which holds
/// only what a later step still needs (e.g. decaps keeps keygen's `sk` and
/// encaps's `ct` on the device instead of uploading copies).
pub fn peak_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    let ct = s.ciphertext_bytes.unwrap_or(0);
    let sig = alg.signature_stride().unwrap_or(0);
    use Operation::*;
    let phases: Vec<usize> = match (alg.kind(), op) {
        // d, z, pk, sk.
        (Kind::Kem, KeyGen) => vec![64 + pk + sk],
        // Then pk, m, ct, ss (and sk when decaps follows).
        (Kind::Kem, Encaps) => vec![64 + pk + sk, pk + 32 + ct + 32],
        // Then sk, ct, ss.
        (Kind::Kem, _) => vec![64 + pk + sk, sk + pk + 32 + ct + 32, sk + ct + 32],
        // xi, pk, sk.
        (Kind::Signature, KeyGen) => vec![32 + pk + sk],
        // Then sk, msg, rnd, sig (and pk when verify follows).
        (Kind::Signature, Sign) => vec![32 + pk + sk, sk + message + 32 + sig],
        // Then pk, msg, sig, ok.
        (Kind::Signature, _) => vec![
            32 + pk + sk,
            pk + sk + message + 32 + sig,
            pk + message + sig + 4,
        ],
    };
    phases.into_iter().max().unwrap_or(0)
}

/// Device buffers alive at once at most during `prepare` (six: encaps with
/// the secret keys kept for decaps, or sign with the public keys kept for
/// verify, plus the context), each of which the driver may round up to its
/// allocation granularity.
pub const MAX_LIVE_BUFFERS: usize = 7;

/// Allocation granularity assumed per live buffer: stream-ordered pools
/// grow in 2 MiB steps.
pub const ALLOCATION_GRANULARITY_BYTES: usize = 2 << 20;

/// The largest batch whose buffers and per-thread local memory fit in
/// `free` bytes with 10% to spare.
pub fn max_batch(free: usize, per_op: usize, local_bytes_resident: usize) -> usize {
    let usable = free / 10 * 9;
    usable.saturating_sub(local_bytes_resident) / per_op.max(1)
}

/// Why a batch of `batch` operations needing `per_op` device bytes each,
/// plus `fixed` bytes whatever the batch, does not fit in `free` bytes of
/// `device`, naming the largest batch that does; `None` when it fits.
pub fn memory_refusal(
    what: &str,
    batch: usize,
    per_op: usize,
    fixed: usize,
    free: usize,
    device: &str,
) -> Option<String> {
    let fits = max_batch(free, per_op, fixed);
    let mib = |b: usize| b / (1024 * 1024);
    (batch > fits).then(|| {
        let needs = format!(
            "batch {batch} of {what} needs about {} MiB on {device} but {} MiB are free",
            mib(per_op.saturating_mul(batch).saturating_add(fixed)),
            mib(free)
        );
        if fits == 0 {
            format!(
                "{needs}; what it needs whatever the batch ({} MiB: the kernels' local memory for every thread the device holds at once, signing workspaces, and allocation granularity) leaves no room for even one operation: free device memory or use a device with more",
                mib(fixed)
            )
        } else {
            format!("{needs}; at most {fits} fits (use --batch {fits} or less)")
        }
    })
}

/// Pinned host memory of the end-to-end staging, bytes, in all: two
/// halves, one filled by the host while the other is copied, so no batch
/// pins more than this whatever its size. `PQCPROF_STAGING_BYTES` sets
/// another (at least 8 KiB).
pub const STAGING_BYTES: usize = 1 << 30;

/// The staging size in use: `PQCPROF_STAGING_BYTES`, else `STAGING_BYTES`.
pub fn staging_bytes() -> usize {
    std::env::var("PQCPROF_STAGING_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(STAGING_BYTES, |b| b.max(8 << 10))
}

/// Host bytes per operation of a native batch: the inputs generated on the
/// host along the launch chain (seeds, messages, rnd), the pageable copy of
/// the timed kernel's inputs that end-to-end runs stream through the
/// pinned staging, and verify's result flags (the gate reads them all).
/// Keys, ciphertexts and signatures stay on the device: the gate copies
/// back only the slots it samples.
pub fn host_bytes_per_op(alg: Algorithm, op: Operation, message: usize) -> usize {
    let s = alg.sizes();
    let (pk, sk) = (s.public_key_bytes, s.secret_key_bytes);
    let ct = s.ciphertext_bytes.unwrap_or(0);
    let sig = alg.signature_stride().unwrap_or(0);
    use Operation::*;
    let (generated, staged) = match (alg.kind(), op) {
        (Kind::Kem, KeyGen) => (64, 64),
        (Kind::Kem, Encaps) => (96, pk + 32),
        (Kind::Kem, _) => (96, ct + sk),
        (Kind::Signature, KeyGen) => (32, 32),
        (Kind::Signature, Sign) => (64 + message, message + sk + 32),
        (Kind::Signature, _) => (64 + message, message + sig + pk + 4),
    };
    generated + staged
}

/// Host bytes a native batch needs whatever its size: the pinned staging
/// and the context.
pub fn host_fixed_bytes(context: usize) -> usize {
    staging_bytes() + context
}

/// The largest batch whose host memory (`host_bytes_per_op` each, plus
/// `host_fixed_bytes`) fits in `available` bytes with 10% to spare.
pub fn host_fit(
    alg: Algorithm,
    op: Operation,
    cfg: &crate::backend::BatchConfig,
    available: usize,
) -> usize {
    max_batch(
        available,
        host_bytes_per_op(alg, op, cfg.message_size),
        host_fixed_bytes(cfg.context.len()),
    )
}

/// Why a batch does not fit in `available` bytes of host memory, naming the
/// largest that does; `None` when it fits.
pub fn host_refusal(
    alg: Algorithm,
    op: Operation,
    cfg: &crate::backend::BatchConfig,
    available: usize,
) -> Option<String> {
    let fits = host_fit(alg, op, cfg, available);
    let mib = |b: usize| b / (1024 * 1024);
    (cfg.batch > fits).then(|| {
        format!(
            "batch {} of {alg} {op} needs about {} MiB of host memory (inputs, their end-to-end copy and {} MiB of pinned staging) but {} MiB are available; at most {fits} fits (use --batch {fits} or less)",
            cfg.batch,
            mib(host_bytes_per_op(alg, op, cfg.message_size)
                .saturating_mul(cfg.batch)
                .saturating_add(host_fixed_bytes(cfg.context.len()))),
            mib(staging_bytes()),
            mib(available)
        )
    })
}

/// Host memory available now (`MemAvailable` in /proc/meminfo), bytes;
/// unbounded where it cannot be read.
pub fn host_available_bytes() -> usize {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<usize>().ok())
        })
        .map_or(usize::MAX, |kb| kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_accepted_batch_fits_host_memory() {
        let cfg = |batch| crate::backend::BatchConfig {
            batch,
            threads: 1,
            message_size: 1024,
            context: vec![],
            gate: Default::default(),
        };
        let available = 6usize << 30;
        for alg in Algorithm::ALL {
            for op in alg.operations() {
                let fits = host_fit(alg, op, &cfg(1), available);
                assert!(fits > 0, "{alg} {op}");
                assert_eq!(host_refusal(alg, op, &cfg(fits), available), None);
                let why = host_refusal(alg, op, &cfg(fits + 1), available).unwrap();
                assert!(why.contains(&format!("--batch {fits}")), "{why}");
                // What the accepted batch holds on the host fits, with room.
                let need = host_bytes_per_op(alg, op, 1024) * fits + host_fixed_bytes(0);
                assert!(need <= available / 10 * 9, "{alg} {op}: {need}");
                // The host holds at least the kernel's inputs once (the
                // end-to-end copy), never its outputs.
                assert!(host_bytes_per_op(alg, op, 1024) >= input_bytes_per_op(alg, op, 1024));
            }
        }
    }

    #[test]
    fn launch_shape_covers_the_batch() {
        let c = launch_shape(100_000, 1024);
        assert_eq!(c.block_dim.0, THREADS_PER_BLOCK);
        assert!(c.grid_dim.0 * c.block_dim.0 >= 100_000);
        assert_eq!(launch_shape(1, 1024).grid_dim.0, 1);
        assert_eq!(launch_shape(1000, 64).block_dim.0, 64);
    }

    #[test]
    fn variants_name_their_kernels_and_shapes() {
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Some(v));
        }
        assert_eq!(Variant::parse("lane"), None);
        assert_eq!(Variant::of_kernel("mlkem768_keygen_warp"), Variant::Warp);
        assert_eq!(Variant::of_kernel("mldsa44_sign_block"), Variant::Block);
        assert_eq!(Variant::of_kernel("mlkem768_keygen"), Variant::Thread);
        let w = variant_launch_shape(Variant::Warp, 129, 1024);
        assert_eq!((w.grid_dim.0, w.block_dim.0), (129, 32));
        let t = variant_launch_shape(Variant::Thread, 129, 1024);
        assert_eq!((t.grid_dim.0, t.block_dim.0), (2, 128));
        assert_eq!(
            variants(Algorithm::MlKem512, Operation::Decaps),
            &[Variant::Thread, Variant::Warp]
        );
        assert_eq!(
            variants(Algorithm::MlDsa65, Operation::Sign),
            &[Variant::Thread, Variant::Block]
        );
        let b = variant_launch_shape(Variant::Block, 129, 1024);
        assert_eq!((b.grid_dim.0, b.block_dim.0), (129, 128));
    }

    #[test]
    fn signing_launches_at_most_what_the_device_holds() {
        // 132 SMs holding 4 blocks of 128: 67,584 threads at most.
        assert_eq!(sign_threads(1_000_000, 128, Some(4), 132, 0), 67_584);
        assert_eq!(sign_threads(129, 128, Some(4), 132, 0), 129);
        assert_eq!(sign_threads(0, 128, Some(4), 132, 0), 1);
        // Without the driver's figure, the device's resident threads.
        assert_eq!(sign_threads(1_000_000, 128, None, 2, 4096), 4096);
        assert_eq!(launch_threads(&launch_shape(129, 1024)), 256);
    }

    #[test]
    fn memory_limits() {
        assert_eq!(max_batch(1000, 10, 0), 90);
        assert_eq!(max_batch(1000, 10, 900), 0);
        let per = device_bytes_per_op(Algorithm::MlDsa87, Operation::Sign, 1024);
        assert_eq!(per, 4896 + 1024 + 32 + 4632);
        assert_eq!(memory_refusal("x", 90, 10, 0, 1000, "GPU"), None);
        let why = memory_refusal("ML-DSA-87 sign", 91, 10, 0, 1000, "GPU").unwrap();
        assert!(why.contains("batch 91 of ML-DSA-87 sign"), "{why}");
        assert!(
            why.contains("at most 90 fits (use --batch 90 or less)"),
            "{why}"
        );
        // Fixed costs (local memory of resident threads) come off first.
        let why = memory_refusal("x", 50, 10, 500, 1000, "GPU").unwrap();
        assert!(why.contains("at most 40 fits"), "{why}");
        // When they leave no room at all, no "--batch 0" advice.
        let why = memory_refusal("x", 1, 10, 900, 1000, "GPU").unwrap();
        assert!(!why.contains("--batch"), "{why}");
        assert!(why.contains("no room for even one operation"), "{why}");
    }

    #[test]
    fn the_peak_is_the_largest_phase_of_the_chain() {
        use Operation::*;
        // ML-KEM-768: pk 1184, sk 2400, ct 1088. Decaps peaks while
        // encaps runs with the secret keys kept: sk + pk + m + ct + ss.
        let kem = Algorithm::MlKem768;
        assert_eq!(peak_bytes_per_op(kem, KeyGen, 0), 64 + 1184 + 2400);
        assert_eq!(peak_bytes_per_op(kem, Encaps, 0), 64 + 1184 + 2400);
        assert_eq!(
            peak_bytes_per_op(kem, Decaps, 0),
            2400 + 1184 + 32 + 1088 + 32
        );
        // ML-DSA-44 verify peaks while sign runs with the public keys kept.
        let dsa = Algorithm::MlDsa44;
        let stride = dsa.signature_stride().unwrap();
        assert_eq!(
            peak_bytes_per_op(dsa, Verify, 1024),
            1312 + 2560 + 1024 + 32 + stride
        );
        assert_eq!(launch_chain(dsa, Verify), vec![KeyGen, Sign, Verify]);
        assert_eq!(launch_chain(kem, KeyGen), vec![KeyGen]);
    }
}
