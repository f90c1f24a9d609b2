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
//! so the correctness gate ([`crate::backend::gate`]) judges its sampled
//! outputs by round trips rather than byte comparisons with our host build
//! (decapsulation, deterministic, byte for byte); it poisons every output
//! and fills the entropy buffer afresh before every run.
//!
//! A build against pqcprof's stand-in SDK (tests only) refuses to measure.

use crate::backend::{Backend, BatchConfig, Checkpoint, Prepared};

use crate::backend::cupqc::{self as shim, Batch, Role};
use crate::backend::gate::reference::Sampled;
use crate::backend::gate::slots::Slots;
use crate::backend::gate::{self, inputs as fresh, Runs};
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

/// One prepared cuPQC batch: the shim's buffers, and a host copy of every
/// input the gate compares and judges with.
struct CupqcBatch {
    alg: Algorithm,
    op: Operation,
    batch: Batch,
    /// The host copy of each input role (what was uploaded for the run).
    inputs: Vec<(Role, Vec<u8>)>,
    /// Keys the gate judges with: the secret keys of encaps' public keys,
    /// the public keys of sign's secret keys.
    pair: Vec<u8>,
    /// Decaps: the valid ciphertexts; verify: the valid signatures.
    valid_given: Vec<u8>,
    /// Verify: which items of this run hold a valid signature.
    valid: Vec<bool>,
    /// Decaps: the items of this run whose ciphertext was tampered with.
    tampered: Vec<usize>,
    msg_len: usize,
    rng: rand_chacha::ChaCha20Rng,
    runs: Runs,
    /// The image that runs (`sm_90 machine code`), named in the record.
    image: String,
    /// Whether the batch has its pinned host copies for serving.
    staged: bool,
}

/// What a cuPQC record says of its inputs.
const INPUTS_MADE: &str = "cuPQC draws its randomness from an entropy buffer pqcprof fills afresh before every run; every item its own key pair (cuPQC's keygen) and message; decapsulation's ciphertexts (cuPQC's encaps) and verification's signatures (cuPQC's sign) made before timing, a bit flipped in about one in 16 at positions drawn for every run";

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
        let msg_len = cfg.message_size;
        let (mut pair, mut valid_given) = (vec![], vec![]);
        let mut inputs: Vec<(Role, Vec<u8>)> = vec![];

        // Key pairs first, from cuPQC's own keygen (untimed unless timed op).
        let mut keygen = self.batch(alg, Operation::KeyGen, n, 0)?;
        entropy(&mut rng, &mut keygen)?;
        let batch = if op == Operation::KeyGen {
            keygen
        } else {
            keygen.launch()?;
            let pk = keygen.download(Role::PublicKey)?;
            let sk = keygen.download(Role::SecretKey)?;
            drop(keygen);
            match (alg.kind(), op) {
                (Kind::Kem, _) => {
                    let mut enc = self.batch(alg, Operation::Encaps, n, 0)?;
                    enc.upload(Role::PublicKey, &pk)?;
                    entropy(&mut rng, &mut enc)?;
                    if op == Operation::Encaps {
                        inputs.push((Role::PublicKey, pk));
                        pair = sk;
                        enc
                    } else {
                        enc.launch()?;
                        valid_given = enc.download(Role::Ciphertext)?;
                        drop(enc);
                        let mut dec = self.batch(alg, Operation::Decaps, n, 0)?;
                        dec.upload(Role::Ciphertext, &valid_given)?;
                        dec.upload(Role::SecretKey, &sk)?;
                        inputs.push((Role::Ciphertext, valid_given.clone()));
                        inputs.push((Role::SecretKey, sk));
                        dec
                    }
                }
                (Kind::Signature, _) => {
                    let mut sign = self.batch(alg, Operation::Sign, n, msg_len)?;
                    let (len, _) = sign.layout(Role::Message)?;
                    // Every item its own message.
                    let mut msg = vec![0u8; len];
                    rng.fill_bytes(&mut msg);
                    sign.upload(Role::Message, &msg)?;
                    sign.upload(Role::SecretKey, &sk)?;
                    entropy(&mut rng, &mut sign)?;
                    if op == Operation::Sign {
                        inputs.push((Role::Message, msg));
                        inputs.push((Role::SecretKey, sk));
                        pair = pk;
                        sign
                    } else {
                        sign.launch()?;
                        valid_given = sign.download(Role::Signature)?;
                        drop(sign);
                        let mut ver = self.batch(alg, Operation::Verify, n, msg_len)?;
                        ver.upload(Role::Message, &msg)?;
                        ver.upload(Role::Signature, &valid_given)?;
                        ver.upload(Role::PublicKey, &pk)?;
                        inputs.push((Role::Message, msg));
                        inputs.push((Role::Signature, valid_given.clone()));
                        inputs.push((Role::PublicKey, pk));
                        ver
                    }
                }
            }
        };
        Ok(Box::new(CupqcBatch {
            alg,
            op,
            batch,
            inputs,
            pair,
            valid_given,
            valid: vec![true; n],
            tampered: vec![],
            msg_len,
            rng,
            runs: Runs::new(cfg.gate, n, 0),
            image: self.image.clone(),
            staged: false,
        }))
    }
}

impl CupqcBatch {
    /// The roles the operation writes.
    fn output_roles(&self) -> &'static [Role] {
        match (self.alg.kind(), self.op) {
            (_, Operation::KeyGen) => &[Role::PublicKey, Role::SecretKey],
            (Kind::Kem, Operation::Encaps) => &[Role::Ciphertext, Role::SharedSecret],
            (Kind::Kem, _) => &[Role::SharedSecret],
            (Kind::Signature, Operation::Sign) => &[Role::Signature],
            (Kind::Signature, _) => &[Role::Ok],
        }
    }

    /// The name and item length of a role in the gate's messages.
    fn role_name(&self, role: Role) -> (&'static str, usize) {
        let s = self.alg.sizes();
        let kem = self.alg.kind() == Kind::Kem;
        match role {
            Role::PublicKey => (if kem { "ek" } else { "pk" }, s.public_key_bytes),
            Role::SecretKey => (if kem { "dk" } else { "sk" }, s.secret_key_bytes),
            Role::Ciphertext => ("c", s.ciphertext_bytes.unwrap_or(0)),
            Role::SharedSecret => ("K", 32),
            Role::Signature => ("signature", s.signature_bytes.unwrap_or(0)),
            Role::Message => ("msg", self.msg_len),
            Role::Entropy => ("entropy", 0),
            Role::Ok => ("ok", 4),
        }
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

    fn arm(&mut self) -> anyhow::Result<()> {
        let n = self.batch.n;
        let rng = &mut self.rng;
        if matches!(
            self.op,
            Operation::KeyGen | Operation::Encaps | Operation::Sign
        ) {
            entropy(rng, &mut self.batch)?;
        }
        for (role, bytes) in &mut self.inputs {
            let (_, stride) = self.batch.layout(*role)?;
            match (self.op, *role) {
                (Operation::Decaps, Role::Ciphertext) => {
                    let lct = self.alg.sizes().ciphertext_bytes.unwrap_or(0);
                    bytes.copy_from_slice(&self.valid_given);
                    self.tampered = fresh::invalid_positions(n, rng);
                    for &i in &self.tampered {
                        fresh::flip(bytes, i, stride, lct, rng);
                    }
                }
                (Operation::Verify, Role::Signature) => {
                    let lsig = self.alg.sizes().signature_bytes.unwrap_or(0);
                    bytes.copy_from_slice(&self.valid_given);
                    self.valid = vec![true; n];
                    for i in fresh::invalid_positions(n, rng) {
                        fresh::flip(bytes, i, stride, lsig, rng);
                        self.valid[i] = false;
                    }
                }
                _ => continue,
            }
            self.batch.upload(*role, bytes)?;
        }
        // The outputs poisoned (a copy of the poison, untimed).
        let poison = self.runs.arm();
        for &role in self.output_roles() {
            let (len, _) = self.batch.layout(role)?;
            self.batch.upload(role, &vec![poison; len])?;
        }
        Ok(())
    }

    fn check(&mut self, at: Checkpoint) -> anyhow::Result<GateReport> {
        ensure!(
            self.runs.run() > 0,
            "the gate checks runs it prepared, and no run was prepared (arm) before this one"
        );
        let items = self.runs.sample(&self.tampered, at);
        let b = &self.batch;
        let outs: Vec<(Role, Vec<u8>, usize)> = self
            .output_roles()
            .iter()
            .map(|&r| Ok((r, b.download(r)?, b.layout(r)?.1)))
            .collect::<anyhow::Result<_>>()?;
        let afters: Vec<Vec<u8>> = self
            .inputs
            .iter()
            .map(|(r, _)| b.download(*r))
            .collect::<anyhow::Result<_>>()?;
        let mut input_slots = vec![];
        for ((role, before), after) in self.inputs.iter().zip(&afters) {
            let (name, len) = self.role_name(*role);
            let stride = b.layout(*role)?.1.max(len);
            input_slots.push(gate::Input {
                name,
                before: Slots {
                    bytes: before,
                    stride,
                    len,
                },
                after: Slots {
                    bytes: after,
                    stride,
                    len,
                },
            });
        }
        let outputs: Vec<gate::Output<'_>> = outs
            .iter()
            .map(|(r, bytes, stride)| {
                let (name, len) = self.role_name(*r);
                gate::Output {
                    name,
                    slots: Slots {
                        bytes,
                        stride: (*stride).max(len),
                        len,
                    },
                }
            })
            .collect();
        // The sample gathered, slot j holding item items[j].
        let pick = |bytes: &[u8], stride: usize, len: usize| -> Vec<u8> {
            items
                .iter()
                .flat_map(|&i| bytes[i * stride..i * stride + len].iter().copied())
                .collect()
        };
        let gathered = |role: Role| -> anyhow::Result<Vec<u8>> {
            let (_, len) = self.role_name(role);
            let stride = b.layout(role)?.1.max(len);
            let bytes = match outs.iter().find(|(r, _, _)| *r == role) {
                Some((_, bytes, _)) => bytes,
                None => {
                    &self
                        .inputs
                        .iter()
                        .find(|(r, _)| *r == role)
                        .ok_or_else(|| anyhow!("no buffer {role:?}"))?
                        .1
                }
            };
            Ok(pick(bytes, stride, len))
        };
        let pair_len = self.pair.len().checked_div(b.n).unwrap_or(0);
        let pair = pick(&self.pair, pair_len, pair_len);
        let roles = [
            Role::PublicKey,
            Role::SecretKey,
            Role::Ciphertext,
            Role::SharedSecret,
            Role::Message,
            Role::Signature,
        ];
        let mut g: Vec<(&str, Vec<u8>, usize)> = vec![];
        for role in roles {
            let (name, len) = self.role_name(role);
            let held = outs.iter().any(|(r, _, _)| *r == role)
                || self.inputs.iter().any(|(r, _)| *r == role);
            if held && self.op != Operation::Verify {
                g.push((name, gathered(role)?, len));
            }
        }
        let get = |name: &str| -> Option<Slots<'_>> {
            g.iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, v, len)| Slots::packed(v, *len))
        };
        let sampled = Sampled::from_buffers(
            self.alg,
            self.op,
            &get,
            (!pair.is_empty()).then(|| Slots::packed(&pair, pair_len)),
            &[],
        )?;
        gate::check_run(&gate::RunIo {
            alg: self.alg,
            op: self.op,
            runs: &self.runs,
            guards: vec![],
            inputs: input_slots,
            outputs,
            valid: (self.op == Operation::Verify).then_some(&self.valid[..]),
            sampled,
            items: &items,
            cross_check: at.cross_checks(),
            inputs_made: INPUTS_MADE,
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
