//! The inputs of one batch, made before timing: seeds, messages and rnd on
//! the host and copied over, and the keys, ciphertexts and signatures an
//! operation needs made on the device by the kernels of the operations
//! before it (keygen, then encaps or sign): every item its own key pair and
//! message. The batch then keeps a host copy of every input for the gate
//! (`batch.rs`), and makes seeds, m, rnd and messages afresh before every
//! run, tampering with ciphertexts and signatures at positions drawn then.
//!
//! Each step frees what no later step needs and hands on what it does (keys
//! and ciphertexts stay on the device), so the device holds at most one
//! phase's buffers at a time: what `sizing::peak_bytes_per_op` counts.

use super::launch::{dtoh, htod, random_bytes, zeros, KernelArgs};
use crate::backend::BatchConfig;
use crate::core::catalog::{Algorithm, Operation};
use anyhow::anyhow;
use cudarc::driver::CudaStream;
use rand::SeedableRng;
use std::sync::Arc;

/// What a batch being prepared keeps on the host: the other half of each
/// item's key pair (encaps: the decapsulation keys; sign: the public keys),
/// for the gate's cross-check with liboqs, and the random source.
pub(crate) struct Staging {
    pub(crate) n: usize,
    pub(crate) pair: Vec<u8>,
    pub(crate) rng: rand_chacha::ChaCha20Rng,
}

impl Staging {
    /// An empty staging area for a batch of `n`, its inputs drawn from
    /// `input_rng`.
    pub(crate) fn new(n: usize) -> anyhow::Result<Self> {
        Ok(Staging {
            n,
            pair: vec![],
            rng: input_rng()?,
        })
    }

    fn random(&mut self, bytes_per_op: usize) -> Vec<u8> {
        random_bytes(&mut self.rng, bytes_per_op * self.n)
    }
}

pub use crate::backend::gate::inputs::INPUT_SEED_VAR;

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
        let mut keygen = KernelArgs::KemKeygen {
            pk: zeros(st, s.public_key_bytes * p.n)?,
            sk: zeros(st, s.secret_key_bytes * p.n)?,
            d: htod(st, &p.random(32))?,
            z: htod(st, &p.random(32))?,
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
        // Encaps's gate needs the decapsulation keys on the host only.
        let sk = if op == Operation::Encaps {
            p.pair = dtoh(st, &sk)?;
            None
        } else {
            Some(sk)
        };
        let lct = s.ciphertext_bytes.unwrap_or(0);
        let mut encaps = KernelArgs::KemEncaps {
            ct: zeros(st, lct * p.n)?,
            ss: zeros(st, 32 * p.n)?,
            pk,
            m: htod(st, &p.random(32))?,
        };
        if op == Operation::Encaps {
            return Ok(encaps);
        }
        (self.run)(Operation::Encaps, &mut encaps)?;
        let KernelArgs::KemEncaps { ct, ss, pk, m } = encaps else {
            unreachable!("built as KemEncaps above")
        };
        drop((pk, m, ss));
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
        let mut keygen = KernelArgs::DsaKeygen {
            pk: zeros(st, s.public_key_bytes * p.n)?,
            sk: zeros(st, s.secret_key_bytes * p.n)?,
            xi: htod(st, &p.random(32))?,
        };
        if op == Operation::KeyGen {
            return Ok(keygen);
        }
        (self.run)(Operation::KeyGen, &mut keygen)?;
        let KernelArgs::DsaKeygen { pk, sk, xi } = keygen else {
            unreachable!("built as DsaKeygen above")
        };
        drop(xi);
        // Sign's gate needs the public keys on the host only.
        let pk = if op == Operation::Sign {
            p.pair = dtoh(st, &pk)?;
            None
        } else {
            Some(pk)
        };
        let stride = alg.signature_stride().unwrap_or(0);
        // Every item its own message.
        let msg = p.random(cfg.message_size);
        let mut sign = KernelArgs::DsaSign {
            sig: zeros(st, stride * p.n)?,
            stride: stride as u32,
            msg: htod(st, &msg)?,
            msg_len: cfg.message_size as u32,
            ctx: htod(st, &cfg.context)?,
            ctx_len: cfg.context.len() as u32,
            sk,
            rnd: htod(st, &p.random(32))?,
            scratch: zeros(st, self.sign_scratch)?,
            queue: zeros(st, 8)?,
        };
        if op == Operation::Sign {
            return Ok(sign);
        }
        (self.run)(Operation::Sign, &mut sign)?;
        let KernelArgs::DsaSign {
            sig,
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
