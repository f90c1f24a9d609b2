//! The `cupqc` backend: NVIDIA cuPQC's ML-KEM and ML-DSA device functions,
//! launched through the nvcc-built shim in `cuda/cupqc/` (compiled into
//! this build only with `cfg(pqcprof_cupqc)`).
//!
//! As in `native-gpu`, everything but the kernel happens before timing:
//! buffers and cuPQC's workspace are allocated, entropy is generated on the
//! host (ChaCha20 seeded by the OS) and copied over, keys, ciphertexts and
//! signatures a later operation needs are made by cuPQC's own keygen, encaps
//! and sign kernels. A timed batch is one launch (grid = batch, block =
//! `Op::BlockDim`) between two CUDA events on the batch's stream.
//!
//! cuPQC's keys come from its own entropy and its algorithms are not ours,
//! so the correctness gate uses liboqs round trips on sampled outputs
//! rather than byte comparisons with our host build.
//!
//! A build against pqcprof's stand-in SDK (tests only) refuses to measure.

use crate::backend::{Backend, BatchConfig, Prepared};

use crate::backend::cupqc::{self as shim, Batch, Role};
use crate::backend::native_gpu::gate;
use crate::core::catalog::{Algorithm, Kind, Operation};
use crate::schema::device::{Device, GateReport};
use anyhow::{anyhow, bail, ensure};
use cudarc::driver::CudaContext;
use rand::{RngCore, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

/// Backend name on the command line and in files.
pub const NAME: &str = shim::BACKEND_NAME;

/// The error a stand-in build gives wherever a measurement is asked for.
pub const STANDIN_REFUSAL: &str = "this build links pqcprof's cuPQC STAND-IN SDK (tests/fixtures/cupqc-standin: not cryptography), so the cupqc backend refuses to benchmark; rebuild against NVIDIA's SDK (scripts/fetch-cupqc, or CUPQC_HOME)";

/// Refuses the stand-in: both the build flag and the shim must say "real".
pub fn refuse_standin() -> anyhow::Result<()> {
    if cfg!(pqcprof_cupqc_standin) || shim::is_standin() {
        bail!(STANDIN_REFUSAL);
    }
    Ok(())
}

/// Checks that the SDK's descriptor constants match FIPS 203/204 (as the
/// catalogue computes them) for every operation of every parameter set.
pub fn check_sizes() -> anyhow::Result<()> {
    for alg in Algorithm::ALL {
        let s = alg.sizes();
        for op in alg.operations() {
            let i = shim::op_info(alg, op)?;
            let got = |v: u32| v as usize;
            ensure!(
                got(i.public_key_size) == s.public_key_bytes
                    && got(i.secret_key_size) == s.secret_key_bytes,
                "cuPQC {alg} {op}: key sizes {} / {} differ from FIPS ({} / {})",
                i.public_key_size,
                i.secret_key_size,
                s.public_key_bytes,
                s.secret_key_bytes
            );
            match alg.kind() {
                Kind::Kem => ensure!(
                    Some(got(i.ciphertext_size)) == s.ciphertext_bytes
                        && Some(got(i.shared_secret_size)) == s.shared_secret_bytes,
                    "cuPQC {alg} {op}: ciphertext / secret sizes {} / {} differ from FIPS 203",
                    i.ciphertext_size,
                    i.shared_secret_size
                ),
                Kind::Signature => ensure!(
                    Some(got(i.signature_size)) == s.signature_bytes,
                    "cuPQC {alg} {op}: signature size {} differs from FIPS 204",
                    i.signature_size
                ),
            }
        }
    }
    Ok(())
}

/// cuPQC on one GPU.
pub struct Cupqc {
    /// Keeps the device's primary context (which the CUDA runtime in the
    /// shim shares) alive for the backend's lifetime.
    _ctx: Arc<CudaContext>,
    ordinal: usize,
    device: Device,
    /// PCI bus id, for NVML.
    pub pci_bus_id: String,
    /// `cuPQC 0.4.1 (libcupqc-pk.a, libcupqc-hash.a)`, named in records.
    provider: String,
    /// The kernel image that runs on this GPU (`sm_90 machine code`).
    image: String,
}

impl Cupqc {
    /// Opens GPU `ordinal` for cuPQC. Refuses a stand-in build, an SDK whose
    /// sizes are not FIPS's, and a GPU the shim was not compiled for.
    pub fn new(ordinal: usize) -> anyhow::Result<Self> {
        refuse_standin()?;
        check_sizes()?;
        let ctx =
            CudaContext::new(ordinal).map_err(|e| anyhow!("cannot open GPU {ordinal}: {e:?}"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| anyhow!("compute capability: {e:?}"))?;
        let cc = (major as u32, minor as u32);
        let build = shim::build_info();
        if let Some(why) = build.no_image_reason(cc) {
            bail!("GPU {ordinal} is {major}.{minor}: {why}");
        }
        // The image the runtime really picked: machine code of the build,
        // or the embedded PTX compiled by the driver.
        let (bin, ptx) = shim::image(ordinal)?;
        let image = if build.archs.iter().any(|a| *a == bin.to_string()) {
            format!("sm_{bin} machine code")
        } else {
            format!("PTX compute_{ptx} compiled by the driver for sm_{bin}")
        };
        let (device, pci_bus_id) = crate::backend::gpu_identity(&ctx, ordinal);
        Ok(Cupqc {
            _ctx: ctx,
            ordinal,
            device,
            pci_bus_id,
            provider: build.provider(),
            image,
        })
    }

    fn batch(
        &self,
        alg: Algorithm,
        op: Operation,
        n: usize,
        msg_len: usize,
    ) -> anyhow::Result<Batch> {
        Batch::prepare(self.ordinal, alg, op, n, msg_len)
    }

    /// The GPU's free memory and the device bytes one operation of a
    /// prepared batch needs: its buffers, workspace and entropy, and
    /// those of the key-generation batch that preparing it keeps alive.
    fn memory_need(
        &self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<(usize, usize)> {
        let (free, _) = self
            ._ctx
            .mem_get_info()
            .map_err(|e| anyhow!("cuMemGetInfo: {e:?}"))?;
        let bytes = |o: Operation| -> anyhow::Result<usize> {
            let i = shim::op_info(alg, o)?;
            // Slots are 8-byte aligned: at most 7 bytes more per buffer.
            Ok(
                crate::backend::native_gpu::sizing::device_bytes_per_op(alg, o, cfg.message_size)
                    + i.entropy_size as usize
                    + i.workspace_size as usize
                    + 6 * 7,
            )
        };
        let per_op = bytes(op)?
            + if op == Operation::KeyGen {
                0
            } else {
                bytes(Operation::KeyGen)?
            };
        Ok((free, per_op))
    }

    /// Refuses a batch whose buffers and cuPQC workspaces do not fit in
    /// the GPU's free memory, naming the largest that does.
    fn check_memory(&self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> anyhow::Result<()> {
        let (free, per_op) = self.memory_need(alg, op, cfg)?;
        match crate::backend::native_gpu::sizing::memory_refusal(
            &format!("{alg} {op}"),
            cfg.batch,
            per_op,
            0,
            free,
            &self.device.name,
        ) {
            Some(why) => bail!(why),
            None => Ok(()),
        }
    }
}

/// Host copies a batch's gate needs.
#[derive(Default)]
struct HostInputs {
    pk: Vec<u8>,
    sk: Vec<u8>,
    ct: Vec<u8>,
    expected_ss: Vec<u8>,
    msg: Vec<u8>,
    msg_stride: usize,
    tampered: Vec<usize>,
}

/// One prepared cuPQC batch.
struct CupqcBatch {
    alg: Algorithm,
    op: Operation,
    batch: Batch,
    host: HostInputs,
    sample: Vec<usize>,
    msg_len: usize,
    /// The image that runs (`sm_90 machine code`), named in the record.
    image: String,
    /// Whether the batch has its pinned host copies for serving.
    staged: bool,
}

fn entropy(rng: &mut impl RngCore, b: &mut Batch) -> anyhow::Result<()> {
    let (len, _) = b.layout(Role::Entropy)?;
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    b.upload(Role::Entropy, &v)
}

impl Backend for Cupqc {
    fn name(&self) -> &str {
        NAME
    }

    fn provider(&self) -> &str {
        &self.provider
    }

    fn device(&self) -> Device {
        self.device.clone()
    }

    fn max_batch(&mut self, alg: Algorithm, op: Operation, cfg: &BatchConfig) -> Option<usize> {
        let (free, per_op) = self.memory_need(alg, op, cfg).ok()?;
        Some(crate::backend::native_gpu::sizing::max_batch(
            free, per_op, 0,
        ))
    }

    fn prepare(
        &mut self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
    ) -> anyhow::Result<Box<dyn Prepared>> {
        refuse_standin()?;
        ensure!(
            cfg.context.is_empty() || alg.kind() == Kind::Kem,
            "cuPQC's documented sign and verify take no context string; run cupqc with an empty --context"
        );
        let n = cfg.batch;
        ensure!(n > 0, "batch must be at least 1");
        self.check_memory(alg, op, cfg)?;
        let mut rng = rand_chacha::ChaCha20Rng::from_os_rng();
        let sample = gate::sample_indices(n, gate::MIN_SAMPLE);
        let mut host = HostInputs::default();
        let msg_len = cfg.message_size;

        // Key pairs first, from cuPQC's own keygen (untimed unless timed op).
        let mut keygen = self.batch(alg, Operation::KeyGen, n, 0)?;
        entropy(&mut rng, &mut keygen)?;
        let batch = if op == Operation::KeyGen {
            keygen
        } else {
            keygen.launch()?;
            host.pk = keygen.download(Role::PublicKey)?;
            host.sk = keygen.download(Role::SecretKey)?;
            drop(keygen);
            match (alg.kind(), op) {
                (Kind::Kem, _) => {
                    let mut enc = self.batch(alg, Operation::Encaps, n, 0)?;
                    enc.upload(Role::PublicKey, &host.pk)?;
                    entropy(&mut rng, &mut enc)?;
                    if op == Operation::Encaps {
                        enc
                    } else {
                        enc.launch()?;
                        host.ct = enc.download(Role::Ciphertext)?;
                        host.expected_ss = enc.download(Role::SharedSecret)?;
                        drop(enc);
                        let lct = alg.sizes().ciphertext_bytes.unwrap_or(0);
                        if n > 1 {
                            let t = sample[1];
                            host.ct[t * lct + 5] ^= 0x20;
                            host.tampered.push(t);
                        }
                        let mut dec = self.batch(alg, Operation::Decaps, n, 0)?;
                        dec.upload(Role::Ciphertext, &host.ct)?;
                        dec.upload(Role::SecretKey, &host.sk)?;
                        dec
                    }
                }
                (Kind::Signature, _) => {
                    let mut sign = self.batch(alg, Operation::Sign, n, msg_len)?;
                    let (_, stride) = sign.layout(Role::Message)?;
                    host.msg_stride = stride;
                    host.msg = vec![0u8; stride * n];
                    let m = cfg.message();
                    for i in 0..n {
                        host.msg[i * stride..i * stride + msg_len].copy_from_slice(&m);
                    }
                    sign.upload(Role::Message, &host.msg)?;
                    sign.upload(Role::SecretKey, &host.sk)?;
                    entropy(&mut rng, &mut sign)?;
                    if op == Operation::Sign {
                        sign
                    } else {
                        sign.launch()?;
                        let mut sigs = sign.download(Role::Signature)?;
                        let (_, sstride) = sign.layout(Role::Signature)?;
                        drop(sign);
                        if n > 1 {
                            let t = sample[1];
                            sigs[t * sstride + 17] ^= 0x04;
                            host.tampered.push(t);
                        }
                        let mut ver = self.batch(alg, Operation::Verify, n, msg_len)?;
                        ver.upload(Role::Message, &host.msg)?;
                        ver.upload(Role::Signature, &sigs)?;
                        ver.upload(Role::PublicKey, &host.pk)?;
                        ver
                    }
                }
            }
        };
        Ok(Box::new(CupqcBatch {
            alg,
            op,
            batch,
            host,
            sample,
            msg_len,
            image: self.image.clone(),
            staged: false,
        }))
    }
}

impl Prepared for CupqcBatch {
    fn run(&mut self) -> anyhow::Result<Duration> {
        self.batch.launch_timed()
    }

    fn prepare_serving(&mut self) -> anyhow::Result<()> {
        if !self.staged {
            self.batch.stage()?;
            self.staged = true;
        }
        Ok(())
    }

    fn serve(&mut self) -> anyhow::Result<()> {
        self.prepare_serving()?;
        self.batch.serve()
    }

    fn check(&mut self) -> anyhow::Result<GateReport> {
        let (alg, idx, h, b) = (self.alg, &self.sample, &self.host, &self.batch);
        let s = alg.sizes();
        let sampled = |role: Role| -> anyhow::Result<Vec<u8>> {
            let (_, stride) = b.layout(role)?;
            Ok(gate::pick(&b.download(role)?, idx, stride))
        };
        let check = match (alg.kind(), self.op) {
            (Kind::Kem, Operation::KeyGen) => {
                gate::mlkem_keypairs_round_trip(
                    alg,
                    idx,
                    &sampled(Role::PublicKey)?,
                    &sampled(Role::SecretKey)?,
                )?;
                "sampled key pairs have the FIPS 203 sizes and agree on a secret with liboqs (liboqs encaps, cuPQC key decaps)"
            }
            (Kind::Kem, Operation::Encaps) => {
                gate::mlkem_ciphertexts_decapsulate(
                    alg,
                    idx,
                    &h.sk,
                    &sampled(Role::Ciphertext)?,
                    &sampled(Role::SharedSecret)?,
                )?;
                "liboqs decapsulates sampled cuPQC ciphertexts to cuPQC's secrets; a flipped bit does not"
            }
            (Kind::Kem, _) => {
                gate::mlkem_decaps(
                    alg,
                    idx,
                    &h.sk,
                    &h.ct,
                    &h.expected_ss,
                    &h.tampered,
                    &sampled(Role::SharedSecret)?,
                )?;
                "sampled cuPQC decapsulations equal liboqs's, a tampered ciphertext included (implicit rejection)"
            }
            (Kind::Signature, Operation::KeyGen) => {
                gate::mldsa_keypairs_sign(
                    alg,
                    idx,
                    &sampled(Role::PublicKey)?,
                    &sampled(Role::SecretKey)?,
                    &vec![0xAB; self.msg_len],
                    &[],
                )?;
                "sampled key pairs have the FIPS 204 sizes; liboqs signs with each secret key and verifies under its public key"
            }
            (Kind::Signature, Operation::Sign) => {
                let (_, stride) = b.layout(Role::Signature)?;
                gate::mldsa_signatures_verify(
                    alg,
                    idx,
                    &h.pk,
                    &h.msg,
                    h.msg_stride,
                    self.msg_len,
                    &[],
                    &sampled(Role::Signature)?,
                    stride,
                )?;
                "sampled cuPQC signatures verify under liboqs; a flipped signature or message bit is rejected"
            }
            (Kind::Signature, _) => {
                let ok: Vec<i32> = b
                    .download(Role::Ok)?
                    .chunks_exact(4)
                    .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                gate::mldsa_verify(&ok, &h.tampered)?;
                "every valid signature accepted; the corrupted one rejected"
            }
        };
        let _ = s;
        Ok(GateReport {
            checked_ops: if self.op == Operation::Verify {
                self.batch.n
            } else {
                idx.len()
            },
            checks: vec![check.into()],
        })
    }

    fn threads(&self) -> usize {
        1
    }

    fn kernel(&self) -> Option<crate::schema::device::KernelInfo> {
        let info = shim::op_info(self.alg, self.op).ok()?;
        Some(crate::schema::device::KernelInfo {
            name: format!("cuPQC {} {}", self.alg, self.op),
            image: self.image.clone(),
            // cuPQC gives each operation one block of Op::BlockDim threads,
            // its working set in the shared memory the descriptor names.
            variant: "block".into(),
            threads_per_block: info.block_threads,
            shared_bytes_per_block: Some(info.shared_memory_size),
            blocks: self.batch.n as u32,
            registers_per_thread: None,
            local_bytes_per_thread: None,
            resident_blocks_per_sm: None,
            occupancy_pct: None,
            multiprocessors: None,
            waves: None,
        })
    }

    fn timed_window(&self) -> &'static str {
        "one cuPQC kernel launch between two CUDA events on the batch's stream; workspace, host-generated entropy and inputs prepared before, outputs copied back after, untimed"
    }
}
