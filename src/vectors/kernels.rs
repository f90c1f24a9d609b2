//! The native kernels (`cuda/native/*_kernels.cuh`) as a vector subject,
//! one variant at a time, through the CUDA driver: on a GPU, or on the CPU
//! stand-in driver in the tests. Each case is one launch of one operation
//! (n = 1). The kernels take M and a context only (no M′, no external μ),
//! and report a refused input as an all-zero output, which is read here
//! as a refusal; a wrong length is refused before any launch.

use super::case::{all_zero, na, DsaForm, NotApplicable, Op, SignInput, Subject, VerifyInput};
use crate::backend::native_gpu::host_checked::expect_len;
use crate::backend::native_gpu::launch::{launch_kernel, KernelArgs};
use crate::backend::native_gpu::sizing::{variant_launch_shape, variants, Variant};
use crate::backend::native_gpu::{host, kernel_cache, kernels};
use crate::core::catalog::{Algorithm, Family, Operation};
use anyhow::anyhow;
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream};
use std::sync::Arc;

/// One kernel variant on GPU `ordinal` (or the stand-in).
pub struct Kernels {
    variant: Variant,
    device: String,
    stream: Arc<CudaStream>,
    modules: Vec<(Family, Arc<CudaModule>)>,
    max_threads: u32,
}

impl Kernels {
    /// Opens GPU `ordinal` and loads both families' kernels (NVRTC or the
    /// kernel cache). The caller has checked that a driver is usable.
    pub fn open(ordinal: usize, variant: Variant) -> anyhow::Result<Kernels> {
        let ctx = CudaContext::new(ordinal).map_err(|e| anyhow!("opening GPU {ordinal}: {e:?}"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| anyhow!("compute capability: {e:?}"))?;
        let arch = kernels::arch_for((major as u32, minor as u32));
        let mut modules = Vec::new();
        for unit in kernels::UNITS {
            let (c, _) = kernel_cache::compile_cached(unit, &arch).map_err(|f| {
                anyhow!(
                    "compiling the {} kernels for {arch}: {}",
                    kernels::unit_name(unit),
                    f.message
                )
            })?;
            let m = match ctx.load_module(cudarc::nvrtc::Ptx::from_binary(c.cubin)) {
                Ok(m) => m,
                Err(_) => ctx
                    .load_module(cudarc::nvrtc::Ptx::from_src(c.ptx))
                    .map_err(|e| {
                        anyhow!("loading the {} kernels: {e:?}", kernels::unit_name(unit))
                    })?,
            };
            modules.push((unit, m));
        }
        let name = ctx.name().unwrap_or_else(|_| "GPU".into());
        Ok(Kernels {
            variant,
            device: format!("{name} (GPU {ordinal}, {arch})"),
            stream: ctx.default_stream(),
            modules,
            max_threads: 1024,
        })
    }

    fn ready(
        &self,
        alg: Algorithm,
        op: Operation,
    ) -> Result<cudarc::driver::CudaFunction, NotApplicable> {
        if !variants(alg, op).contains(&self.variant) {
            return Err(NotApplicable(format!(
                "no {} kernel for {alg}",
                self.variant.name()
            )));
        }
        let module = self
            .modules
            .iter()
            .find(|(u, _)| *u == alg.family())
            .map(|(_, m)| m)
            .ok_or_else(|| NotApplicable(format!("no kernels loaded for {alg}")))?;
        let name = kernels::variant_kernel_name(alg, op, self.variant);
        module
            .load_function(&name)
            .map_err(|e| NotApplicable(format!("kernel {name} missing: {e:?}")))
    }

    fn up(&self, bytes: &[u8]) -> anyhow::Result<CudaSlice<u8>> {
        // A zero-length input still gets a buffer: every pointer argument
        // of a launch is a live allocation.
        let padded: Vec<u8> = if bytes.is_empty() {
            vec![0]
        } else {
            bytes.to_vec()
        };
        self.stream
            .clone_htod(&padded)
            .map_err(|e| anyhow!("copy to the device: {e:?}"))
    }

    fn zeros(&self, n: usize) -> anyhow::Result<CudaSlice<u8>> {
        self.stream
            .alloc_zeros::<u8>(n.max(1))
            .map_err(|e| anyhow!("device allocation: {e:?}"))
    }

    fn down(&self, d: &CudaSlice<u8>, len: usize) -> anyhow::Result<Vec<u8>> {
        let mut v = self
            .stream
            .clone_dtoh(d)
            .map_err(|e| anyhow!("copy from the device: {e:?}"))?;
        v.truncate(len);
        Ok(v)
    }

    fn launch(
        &self,
        f: &cudarc::driver::CudaFunction,
        args: &mut KernelArgs,
    ) -> anyhow::Result<()> {
        let shape = variant_launch_shape(self.variant, 1, self.max_threads);
        launch_kernel(&self.stream, f, shape, 1, args)?;
        self.stream
            .synchronize()
            .map_err(|e| anyhow!("kernel failed: {e:?}"))
    }
}

/// A device error, carried as "not applicable" with a marker that
/// [`super::case::judge`] counts as a failure.
fn dev<T>(r: anyhow::Result<T>) -> Result<T, NotApplicable> {
    r.map_err(|e| NotApplicable(format!("{}{e:#}", super::case::DEVICE_ERROR)))
}

impl Subject for Kernels {
    fn label(&self) -> String {
        format!(
            "native kernels, {} variant, on {}",
            self.variant.name(),
            self.device
        )
    }
    fn kem_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let f = self.ready(alg, Operation::KeyGen)?;
        if let Err(e) = expect_len(alg, "seed d||z", seed.len(), 64) {
            return Ok(Err(e));
        }
        let s = alg.sizes();
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::KemKeygen {
                pk: self.zeros(s.public_key_bytes)?,
                sk: self.zeros(s.secret_key_bytes)?,
                d: self.up(&seed[..32])?,
                z: self.up(&seed[32..])?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::KemKeygen { pk, sk, .. } = &a else {
            unreachable!()
        };
        Ok(Ok((
            dev(self.down(pk, s.public_key_bytes))?,
            dev(self.down(sk, s.secret_key_bytes))?,
        )))
    }
    fn kem_encaps(&mut self, alg: Algorithm, ek: &[u8], m: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let f = self.ready(alg, Operation::Encaps)?;
        let s = alg.sizes();
        let ct_len = s.ciphertext_bytes.unwrap_or(0);
        let checked = expect_len(alg, "encapsulation key", ek.len(), s.public_key_bytes)
            .and_then(|_| expect_len(alg, "m", m.len(), 32));
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::KemEncaps {
                ct: self.zeros(ct_len)?,
                ss: self.zeros(32)?,
                pk: self.up(ek)?,
                m: self.up(m)?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::KemEncaps { ct, ss, .. } = &a else {
            unreachable!()
        };
        let (ct, ss) = (dev(self.down(ct, ct_len))?, dev(self.down(ss, 32))?);
        if all_zero(&ct) && all_zero(&ss) {
            return Ok(Err(
                "the kernel refused the encapsulation key (all-zero output)".into(),
            ));
        }
        Ok(Ok((ct, ss)))
    }
    fn kem_decaps(&mut self, alg: Algorithm, dk: &[u8], c: &[u8]) -> Op<Vec<u8>> {
        let f = self.ready(alg, Operation::Decaps)?;
        let s = alg.sizes();
        let checked = expect_len(alg, "decapsulation key", dk.len(), s.secret_key_bytes)
            .and_then(|_| expect_len(alg, "ciphertext", c.len(), s.ciphertext_bytes.unwrap_or(0)));
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::KemDecaps {
                ss: self.zeros(32)?,
                ct: self.up(c)?,
                sk: self.up(dk)?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::KemDecaps { ss, .. } = &a else {
            unreachable!()
        };
        let ss = dev(self.down(ss, 32))?;
        if all_zero(&ss) {
            return Ok(Err(
                "the kernel refused the decapsulation key (all-zero output)".into(),
            ));
        }
        Ok(Ok(ss))
    }
    fn dsa_keygen(&mut self, alg: Algorithm, seed: &[u8]) -> Op<(Vec<u8>, Vec<u8>)> {
        let f = self.ready(alg, Operation::KeyGen)?;
        if let Err(e) = expect_len(alg, "seed xi", seed.len(), 32) {
            return Ok(Err(e));
        }
        let s = alg.sizes();
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::DsaKeygen {
                pk: self.zeros(s.public_key_bytes)?,
                sk: self.zeros(s.secret_key_bytes)?,
                xi: self.up(seed)?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::DsaKeygen { pk, sk, .. } = &a else {
            unreachable!()
        };
        Ok(Ok((
            dev(self.down(pk, s.public_key_bytes))?,
            dev(self.down(sk, s.secret_key_bytes))?,
        )))
    }
    fn dsa_sign(&mut self, alg: Algorithm, form: DsaForm, i: &SignInput) -> Op<Vec<u8>> {
        if form != DsaForm::Pure {
            return na(&format!(
                "the kernels take M and a context, not {}",
                super::case::form_name(form)
            ));
        }
        let f = self.ready(alg, Operation::Sign)?;
        let s = alg.sizes();
        let sig_len = s.signature_bytes.unwrap_or(0);
        let checked = expect_len(alg, "secret key", i.sk.len(), s.secret_key_bytes)
            .and_then(|_| expect_len(alg, "rnd", i.rnd.len(), 32));
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        if i.ctx.len() > 255 {
            return Ok(Err(format!(
                "context is {} bytes; at most 255 are allowed",
                i.ctx.len()
            )));
        }
        let shape = variant_launch_shape(self.variant, 1, self.max_threads);
        let scratch = match self.variant {
            Variant::Block => {
                host::mldsa_sign_block_workspace_bytes(alg) * shape.grid_dim.0 as usize
            }
            _ => {
                host::mldsa_sign_workspace_bytes(alg)
                    * (shape.grid_dim.0 * shape.block_dim.0) as usize
            }
        };
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::DsaSign {
                sig: self.zeros(sig_len)?,
                stride: sig_len as u32,
                msg: self.up(&i.msg)?,
                msg_len: i.msg.len() as u32,
                ctx: self.up(&i.ctx)?,
                ctx_len: i.ctx.len() as u32,
                sk: self.up(&i.sk)?,
                rnd: self.up(&i.rnd)?,
                scratch: self.zeros(scratch)?,
                queue: self.zeros(4)?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::DsaSign { sig, .. } = &a else {
            unreachable!()
        };
        let sig = dev(self.down(sig, sig_len))?;
        if all_zero(&sig) {
            return Ok(Err(
                "the kernel refused the secret key (all-zero signature)".into(),
            ));
        }
        Ok(Ok(sig))
    }
    fn dsa_verify(&mut self, alg: Algorithm, form: DsaForm, i: &VerifyInput) -> Op<bool> {
        if form != DsaForm::Pure {
            return na(&format!(
                "the kernels take M and a context, not {}",
                super::case::form_name(form)
            ));
        }
        let f = self.ready(alg, Operation::Verify)?;
        let s = alg.sizes();
        // FIPS 204: a signature or key of another length, or a context
        // over 255 bytes, does not verify; no launch is needed to say so.
        if i.pk.len() != s.public_key_bytes
            || i.sig.len() != s.signature_bytes.unwrap_or(0)
            || i.ctx.len() > 255
        {
            return Ok(Ok(false));
        }
        let mut a = dev((|| {
            Ok::<_, anyhow::Error>(KernelArgs::DsaVerify {
                ok: self
                    .stream
                    .alloc_zeros::<i32>(1)
                    .map_err(|e| anyhow!("device allocation: {e:?}"))?,
                msg: self.up(&i.msg)?,
                msg_len: i.msg.len() as u32,
                ctx: self.up(&i.ctx)?,
                ctx_len: i.ctx.len() as u32,
                sig: self.up(&i.sig)?,
                stride: i.sig.len() as u32,
                pk: self.up(&i.pk)?,
            })
        })())?;
        dev(self.launch(&f, &mut a))?;
        let KernelArgs::DsaVerify { ok, .. } = &a else {
            unreachable!()
        };
        let ok = dev(self
            .stream
            .clone_dtoh(ok)
            .map_err(|e| anyhow!("copy from the device: {e:?}")))?;
        Ok(Ok(ok[0] == 1))
    }
}
