//! The inputs of one batch, made before timing: seeds, messages and rnd on
//! the host and copied over, and the keys, ciphertexts and signatures an
//! operation needs made on the device by the kernels of the operations
//! before it (keygen, then encaps or sign), with the slots the correctness
//! gate samples copied back.
//!
//! Each step frees what no later step needs and hands on what it does (keys
//! and ciphertexts stay on the device), so the device holds at most one
//! phase's buffers at a time: what `sizing::peak_bytes_per_op` counts.

use super::batch::HostSide;
use super::launch::{dtoh_slots, flip_on_device, htod, random_bytes, zeros, KernelArgs};
use crate::backend::BatchConfig;
use crate::core::catalog::{Algorithm, Operation};
use anyhow::anyhow;
use cudarc::driver::{CudaSlice, CudaStream};
use rand::SeedableRng;
use std::sync::Arc;

/// What a batch being prepared keeps on the host: the gate's inputs and
/// expected outputs, the slots it samples, and the random source.
pub(crate) struct Staging {
    pub(crate) n: usize,
    pub(crate) host: HostSide,
    pub(crate) sample: Vec<usize>,
    rng: rand_chacha::ChaCha20Rng,
}

impl Staging {
    /// An empty staging area for a batch of `n`, its inputs drawn from
    /// `input_rng`.
    pub(crate) fn new(n: usize) -> anyhow::Result<Self> {
        Ok(Staging {
            n,
            host: HostSide::default(),
            sample: super::gate::sample_indices(n, super::gate::MIN_SAMPLE),
            rng: input_rng()?,
        })
    }

    fn random(&mut self, bytes_per_op: usize) -> Vec<u8> {
        random_bytes(&mut self.rng, bytes_per_op * self.n)
    }

    /// The sampled slot the gate expects to be rejected, when there are
    /// two slots or more: one of them is changed in the GPU's own buffer,
    /// no round trip, so the batch exercises rejection too.
    fn tamper(
        &mut self,
        buf: &mut CudaSlice<u8>,
        st: &Arc<CudaStream>,
        at: usize,
        stride: usize,
        mask: u8,
    ) -> anyhow::Result<()> {
        if self.n > 1 {
            let t = self.sample[1];
            flip_on_device(st, buf, t * stride + at, mask)?;
            self.host.tampered.push(t);
        }
        Ok(())
    }
}

/// The variable that makes a run's inputs again: a number seeds them.
pub const INPUT_SEED_VAR: &str = "PQCPROF_INPUT_SEED";

/// The random source of a batch's inputs: the operating system's, or,
/// where `PQCPROF_INPUT_SEED` holds a number, a ChaCha20 stream seeded
/// with it, so that the very inputs of a run can be made again (a failed
/// gate reproduced, two drivers' outputs compared byte for byte). Every
/// batch of such a run gets the same inputs.
fn input_rng() -> anyhow::Result<rand_chacha::ChaCha20Rng> {
    let value = std::env::var(INPUT_SEED_VAR).ok();
    let rng = rng_from(value.as_deref())?;
    if let Some(v) = value {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            log::warn!("native-gpu inputs are not random: drawn from {INPUT_SEED_VAR}={v}")
        });
    }
    Ok(rng)
}

/// The source `input_rng` makes of the variable's value (None: unset).
fn rng_from(value: Option<&str>) -> anyhow::Result<rand_chacha::ChaCha20Rng> {
    let Some(v) = value else {
        return Ok(rand_chacha::ChaCha20Rng::from_os_rng());
    };
    let seed: u64 = v.trim().parse().map_err(|_| {
        anyhow!(
            "{INPUT_SEED_VAR}={v:?} is not a seed: a whole number from 0 to {}",
            u64::MAX
        )
    })?;
    Ok(rand_chacha::ChaCha20Rng::seed_from_u64(seed))
}

/// What making the inputs needs of the GPU: its stream, a way to run an
/// operation's kernel over the whole batch (untimed, waited for), and the
/// signing workspace's size.
pub(crate) struct Maker<'a> {
    /// The stream every buffer lives on.
    pub(crate) stream: &'a Arc<CudaStream>,
    /// Runs the kernel of an operation over the batch and waits for it.
    pub(crate) run: &'a dyn Fn(Operation, &mut KernelArgs) -> anyhow::Result<()>,
    /// Bytes of the signing kernel's per-batch workspace (0 when the batch
    /// signs nothing).
    pub(crate) sign_scratch: usize,
}

impl Maker<'_> {
    /// The kernel arguments of `op` of the ML-KEM set `alg`.
    pub(crate) fn kem_args(
        &self,
        alg: Algorithm,
        op: Operation,
        p: &mut Staging,
    ) -> anyhow::Result<KernelArgs> {
        let st = self.stream;
        let s = alg.sizes();
        p.host.d = p.random(32);
        p.host.z = p.random(32);
        let mut keygen = KernelArgs::KemKeygen {
            pk: zeros(st, s.public_key_bytes * p.n)?,
            sk: zeros(st, s.secret_key_bytes * p.n)?,
            d: htod(st, &p.host.d)?,
            z: htod(st, &p.host.z)?,
        };
        if op == Operation::KeyGen {
            return Ok(keygen);
        }
        // Keys made on the GPU, before timing.
        (self.run)(Operation::KeyGen, &mut keygen)?;
        let KernelArgs::KemKeygen { pk, sk, d, z } = keygen else {
            unreachable!("built as KemKeygen above")
        };
        drop((d, z));
        // The gate's keys: the sampled slots only.
        p.host.pk = dtoh_slots(st, &pk, &p.sample, s.public_key_bytes)?;
        p.host.sk = dtoh_slots(st, &sk, &p.sample, s.secret_key_bytes)?;
        p.host.d = vec![];
        p.host.z = vec![];
        // Encaps's gate needs the secret keys on the host only.
        let sk = (op != Operation::Encaps).then_some(sk);
        p.host.m = p.random(32);
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let mut encaps = KernelArgs::KemEncaps {
            ct: zeros(st, lct * p.n)?,
            ss: zeros(st, 32 * p.n)?,
            pk,
            m: htod(st, &p.host.m)?,
        };
        if op == Operation::Encaps {
            return Ok(encaps);
        }
        (self.run)(Operation::Encaps, &mut encaps)?;
        let KernelArgs::KemEncaps { mut ct, ss, pk, m } = encaps else {
            unreachable!("built as KemEncaps above")
        };
        drop((pk, m));
        p.host.m = vec![];
        p.host.expected_ss = dtoh_slots(st, &ss, &p.sample, 32)?;
        drop(ss);
        // One sampled ciphertext is tampered with: implicit rejection.
        p.tamper(&mut ct, st, 5, lct, 0x20)?;
        p.host.ct = dtoh_slots(st, &ct, &p.sample, lct)?;
        Ok(KernelArgs::KemDecaps {
            ss: zeros(st, 32 * p.n)?,
            ct,
            sk: sk.ok_or_else(|| anyhow!("decaps lost its secret keys"))?,
        })
    }

    /// The kernel arguments of `op` of the ML-DSA set `alg`.
    pub(crate) fn dsa_args(
        &self,
        alg: Algorithm,
        op: Operation,
        cfg: &BatchConfig,
        p: &mut Staging,
    ) -> anyhow::Result<KernelArgs> {
        let st = self.stream;
        let s = alg.sizes();
        p.host.xi = p.random(32);
        let mut keygen = KernelArgs::DsaKeygen {
            pk: zeros(st, s.public_key_bytes * p.n)?,
            sk: zeros(st, s.secret_key_bytes * p.n)?,
            xi: htod(st, &p.host.xi)?,
        };
        if op == Operation::KeyGen {
            return Ok(keygen);
        }
        (self.run)(Operation::KeyGen, &mut keygen)?;
        let KernelArgs::DsaKeygen { pk, sk, xi } = keygen else {
            unreachable!("built as DsaKeygen above")
        };
        drop(xi);
        p.host.xi = vec![];
        p.host.pk = dtoh_slots(st, &pk, &p.sample, s.public_key_bytes)?;
        p.host.sk = dtoh_slots(st, &sk, &p.sample, s.secret_key_bytes)?;
        // Sign's gate needs the public keys on the host only.
        let pk = (op != Operation::Sign).then_some(pk);
        p.host.msg = cfg.message().repeat(p.n);
        p.host.rnd = p.random(32);
        let stride = alg.signature_stride().unwrap_or(0);
        let mut sign = KernelArgs::DsaSign {
            sig: zeros(st, stride * p.n)?,
            stride: stride as u32,
            msg: htod(st, &p.host.msg)?,
            msg_len: cfg.message_size as u32,
            ctx: htod(st, &cfg.context)?,
            ctx_len: cfg.context.len() as u32,
            sk,
            rnd: htod(st, &p.host.rnd)?,
            scratch: zeros(st, self.sign_scratch)?,
            queue: zeros(st, 8)?,
        };
        if op == Operation::Sign {
            return Ok(sign);
        }
        (self.run)(Operation::Sign, &mut sign)?;
        let KernelArgs::DsaSign {
            mut sig,
            msg,
            ctx,
            sk,
            rnd,
            scratch,
            queue,
            ..
        } = sign
        else {
            unreachable!("built as DsaSign above")
        };
        drop((sk, rnd, scratch, queue));
        p.host.msg = vec![];
        p.host.rnd = vec![];
        // One sampled signature is tampered with: verify must reject it.
        p.tamper(&mut sig, st, 17, stride, 0x04)?;
        Ok(KernelArgs::DsaVerify {
            ok: st
                .alloc_zeros::<i32>(p.n)
                .map_err(|e| anyhow!("cuMemAlloc: {e:?}"))?,
            msg,
            msg_len: cfg.message_size as u32,
            ctx,
            ctx_len: cfg.context.len() as u32,
            sig,
            stride: stride as u32,
            pk: pk.ok_or_else(|| anyhow!("verify lost its public keys"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn draw(value: Option<&str>) -> [u8; 32] {
        let mut b = [0; 32];
        rng_from(value).unwrap().fill_bytes(&mut b);
        b
    }

    #[test]
    fn a_seed_makes_the_same_inputs_and_none_makes_new_ones() {
        assert_eq!(draw(Some("7")), draw(Some(" 7 ")));
        assert_ne!(draw(Some("7")), draw(Some("8")));
        assert_ne!(draw(None), draw(None));
    }

    #[test]
    fn a_seed_that_is_not_a_number_is_refused_by_name() {
        for bad in ["", "x1", "-1", "1.5", "18446744073709551616"] {
            let e = rng_from(Some(bad)).unwrap_err().to_string();
            assert!(e.contains(&format!("PQCPROF_INPUT_SEED={bad:?}")), "{e}");
            assert!(
                e.contains("a whole number from 0 to 18446744073709551615"),
                "{e}"
            );
        }
    }
}
