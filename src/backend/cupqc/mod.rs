//! NVIDIA cuPQC: what this build contains, and (only when the build
//! included it, `cfg(pqcprof_cupqc)`) safe wrappers over the nvcc-built
//! launch shim in `cuda/cupqc/`, whose bindings bindgen generated.
//!
//! The build facts come from build.rs (build/cupqc.rs) at compile time, so
//! `check` can say what was built, with which SDK and nvcc, on a machine
//! that has neither.

#[cfg(pqcprof_cupqc)]
pub mod device;

/// Backend name on the command line and in files.
pub const BACKEND_NAME: &str = "cupqc";

/// What build.rs found and did about cuPQC.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BuildInfo {
    /// Whether the backend is part of this build.
    pub built: bool,
    /// Whether it was built against pqcprof's stand-in SDK (tests only).
    pub standin: bool,
    /// The SDK build.rs found (version or layout, and where), if any.
    pub sdk: String,
    /// The SDK's version (`0.4.1`, from its cmake version file), or
    /// `stand-in (0.4 layout)`; empty when no SDK was found.
    pub version: String,
    /// The SDK's library files linked in (`libcupqc-pk.a libcupqc-hash.a`).
    pub libraries: Vec<String>,
    /// The nvcc build.rs found, with its version, if any.
    pub nvcc: String,
    /// Architectures the shim has machine code (SASS) for (`80`, `90`).
    pub archs: Vec<String>,
    /// The architecture whose PTX is embedded too (the highest of `archs`),
    /// which a driver compiles for a newer GPU.
    pub ptx: Option<u32>,
    /// `built...` or `not built: <why>`.
    pub note: String,
}

/// How to get a build with the backend.
pub const HOW_TO_ENABLE: &str = "run scripts/fetch-cupqc (or set CUPQC_HOME to an unpacked SDK), make nvcc 12.8 or newer reachable (scripts/find-nvcc looks at $NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda and pip's nvidia-cuda-nvcc in .venv or $PQCPROF_VENV), then rebuild";

/// This build's cuPQC facts.
pub fn build_info() -> BuildInfo {
    BuildInfo {
        built: cfg!(pqcprof_cupqc),
        standin: cfg!(pqcprof_cupqc_standin),
        sdk: env!("PQCPROF_CUPQC_SDK").to_string(),
        version: env!("PQCPROF_CUPQC_VERSION").to_string(),
        libraries: env!("PQCPROF_CUPQC_LIBS")
            .split_whitespace()
            .map(String::from)
            .collect(),
        nvcc: env!("PQCPROF_CUPQC_NVCC").to_string(),
        archs: env!("PQCPROF_CUPQC_ARCHS")
            .split(';')
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect(),
        ptx: env!("PQCPROF_CUPQC_PTX").parse().ok(),
        note: env!("PQCPROF_CUPQC_BUILD").to_string(),
    }
}

impl BuildInfo {
    /// The build's note without the advice the build script adds for its
    /// warning (`; to enable it: ...`): `check` gives a fuller one once.
    pub fn finding(&self) -> &str {
        self.note
            .split("; to enable it:")
            .next()
            .unwrap_or_default()
    }

    /// Whether the compiled code runs on a GPU of compute capability `cc`:
    /// SASS for `XY` runs on `X.Y'` with `Y' >= Y`; the embedded PTX of `XY`
    /// is compiled by the driver for any `cc` at or above `X.Y`.
    pub fn runs_on(&self, cc: (u32, u32)) -> bool {
        self.image_for(cc).is_some()
    }

    /// What runs on a GPU of compute capability `cc`: `sm_86` machine code,
    /// `PTX compute_90 (compiled by the driver)`, or `None`.
    pub fn image_for(&self, cc: (u32, u32)) -> Option<String> {
        let want = cc.0 * 10 + cc.1;
        let sass = self
            .archs
            .iter()
            .filter_map(|a| a.parse::<u32>().ok())
            .filter(|n| n / 10 == cc.0 && *n <= want)
            .max();
        match (sass, self.ptx) {
            (Some(n), _) => Some(format!("sm_{n}")),
            (None, Some(p)) if p <= want => {
                Some(format!("PTX compute_{p} (compiled by the driver)"))
            }
            _ => None,
        }
    }

    /// `cuPQC 0.4.1 has no code for sm_120 (built for sm_75, ..., PTX
    /// compute_90)`, when nothing in the build runs on `cc`.
    pub fn no_image_reason(&self, cc: (u32, u32)) -> Option<String> {
        if self.runs_on(cc) {
            return None;
        }
        let ptx = self
            .ptx
            .map(|p| format!(", PTX compute_{p}"))
            .unwrap_or_default();
        Some(format!(
            "cuPQC {} has no code for sm_{}{} (built for sm_{}{ptx}); rebuild with PQCPROF_CUDA_ARCHS={}{}",
            self.version,
            cc.0,
            cc.1,
            self.archs.join(", sm_"),
            cc.0,
            cc.1
        ))
    }

    /// `cuPQC 0.4.1 (libcupqc-pk.a, libcupqc-hash.a)`: the provider named
    /// in every cupqc record.
    pub fn provider(&self) -> String {
        format!("cuPQC {} ({})", self.version, self.libraries.join(", "))
    }
}

/// The CUDA runtime version linked into the shim (`13050` for 13.5), in
/// builds that include it.
pub fn linked_runtime() -> Option<i32> {
    #[cfg(pqcprof_cupqc)]
    return Some(shim::runtime_version());
    #[cfg(not(pqcprof_cupqc))]
    None
}

/// Whether a driver of CUDA API version `driver` runs a runtime of version
/// `runtime`: the same major version or newer (minor version compatibility).
pub fn driver_runs(driver: u32, runtime: i32) -> bool {
    i64::from(driver / 1000) >= i64::from(runtime / 1000)
}

#[cfg(pqcprof_cupqc)]
pub use shim::*;

#[cfg(pqcprof_cupqc)]
mod shim {
    use crate::core::catalog::{Algorithm, Operation};
    use anyhow::{anyhow, bail};
    use std::ffi::CStr;
    use std::time::Duration;

    #[allow(
        non_camel_case_types,
        non_upper_case_globals,
        dead_code,
        missing_docs,
        clippy::all
    )]
    mod ffi {
        include!(concat!(env!("OUT_DIR"), "/cupqc_shim.rs"));
    }

    /// The constants of one composed cuPQC operation type, in bytes.
    pub type OpInfo = ffi::pqcprof_cupqc_op_info;

    /// A buffer of a prepared batch.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Role {
        /// Public keys.
        PublicKey,
        /// Secret keys.
        SecretKey,
        /// KEM ciphertexts.
        Ciphertext,
        /// KEM shared secrets.
        SharedSecret,
        /// Signatures, strided at `((signature_size + 7) / 8) * 8`.
        Signature,
        /// Messages, strided at the message length rounded up to 8.
        Message,
        /// Host-generated entropy, `entropy_size` (rounded up to 8) per op.
        Entropy,
        /// Verify results, one `i32` per operation.
        Ok,
    }

    impl Role {
        fn id(self) -> i32 {
            (match self {
                Role::PublicKey => ffi::PQCPROF_CUPQC_PK,
                Role::SecretKey => ffi::PQCPROF_CUPQC_SK,
                Role::Ciphertext => ffi::PQCPROF_CUPQC_CT,
                Role::SharedSecret => ffi::PQCPROF_CUPQC_SS,
                Role::Signature => ffi::PQCPROF_CUPQC_SIG,
                Role::Message => ffi::PQCPROF_CUPQC_MSG,
                Role::Entropy => ffi::PQCPROF_CUPQC_ENTROPY,
                Role::Ok => ffi::PQCPROF_CUPQC_OK,
            }) as i32
        }
    }

    fn alg_id(alg: Algorithm) -> i32 {
        (match alg {
            Algorithm::MlKem512 => ffi::PQCPROF_CUPQC_ML_KEM_512,
            Algorithm::MlKem768 => ffi::PQCPROF_CUPQC_ML_KEM_768,
            Algorithm::MlKem1024 => ffi::PQCPROF_CUPQC_ML_KEM_1024,
            Algorithm::MlDsa44 => ffi::PQCPROF_CUPQC_ML_DSA_44,
            Algorithm::MlDsa65 => ffi::PQCPROF_CUPQC_ML_DSA_65,
            Algorithm::MlDsa87 => ffi::PQCPROF_CUPQC_ML_DSA_87,
        }) as i32
    }

    fn op_id(op: Operation) -> i32 {
        (match op {
            Operation::KeyGen => ffi::PQCPROF_CUPQC_KEYGEN,
            Operation::Encaps => ffi::PQCPROF_CUPQC_ENCAPS,
            Operation::Decaps => ffi::PQCPROF_CUPQC_DECAPS,
            Operation::Sign => ffi::PQCPROF_CUPQC_SIGN,
            Operation::Verify => ffi::PQCPROF_CUPQC_VERIFY,
        }) as i32
    }

    /// What a shim status means.
    pub fn status_string(status: i32) -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let p = unsafe { ffi::pqcprof_cupqc_status_string(status) };
        if p.is_null() {
            return format!("status {status}");
        }
        // SAFETY: non-null, static, NUL-terminated (shim.cu).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The shim's name for a negative status (`PQCPROF_CUPQC_E_WORKSPACE`);
    /// `None` for success and CUDA runtime errors.
    pub fn status_name(status: i32) -> Option<&'static str> {
        Some(match status {
            ffi::PQCPROF_CUPQC_E_UNSUPPORTED => "PQCPROF_CUPQC_E_UNSUPPORTED",
            ffi::PQCPROF_CUPQC_E_ARGUMENT => "PQCPROF_CUPQC_E_ARGUMENT",
            ffi::PQCPROF_CUPQC_E_ROLE => "PQCPROF_CUPQC_E_ROLE",
            ffi::PQCPROF_CUPQC_E_WORKSPACE => "PQCPROF_CUPQC_E_WORKSPACE",
            ffi::PQCPROF_CUPQC_E_EXCEPTION => "PQCPROF_CUPQC_E_EXCEPTION",
            ffi::PQCPROF_CUPQC_E_HOST_MEMORY => "PQCPROF_CUPQC_E_HOST_MEMORY",
            _ => return None,
        })
    }

    /// The message of the last C++ exception the shim caught on this thread.
    pub fn last_error() -> String {
        // SAFETY: returns a pointer to a thread-local NUL-terminated buffer.
        let p = unsafe { ffi::pqcprof_cupqc_last_error() };
        if p.is_null() {
            return String::new();
        }
        // SAFETY: non-null and NUL-terminated (guard.hpp); copied at once.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    fn check(status: i32, what: &str) -> anyhow::Result<()> {
        if status == 0 {
            return Ok(());
        }
        let caught = matches!(
            status,
            ffi::PQCPROF_CUPQC_E_WORKSPACE
                | ffi::PQCPROF_CUPQC_E_EXCEPTION
                | ffi::PQCPROF_CUPQC_E_HOST_MEMORY
        );
        let message = if caught { last_error() } else { String::new() };
        Err(anyhow!(
            "cuPQC shim: {what} failed: {}{} (status {status}{})",
            status_string(status),
            if message.is_empty() {
                String::new()
            } else {
                format!(" ({message})")
            },
            status_name(status)
                .map(|n| format!(", {n}"))
                .unwrap_or_default()
        ))
    }

    /// The image the CUDA runtime runs on GPU `device`: (architecture of
    /// the machine code, PTX version), e.g. `(90, 90)`.
    pub fn image(device: usize) -> anyhow::Result<(u32, u32)> {
        let (mut bin, mut ptx) = (0i32, 0i32);
        // SAFETY: both out pointers are valid for writes.
        check(
            unsafe { ffi::pqcprof_cupqc_image(device as i32, &mut bin, &mut ptx) },
            &format!("the kernel image for GPU {device}"),
        )?;
        Ok((bin as u32, ptx as u32))
    }

    /// Whether the linked SDK is pqcprof's stand-in, as the shim reports it.
    pub fn is_standin() -> bool {
        // SAFETY: no arguments, no state.
        unsafe { ffi::pqcprof_cupqc_is_standin() != 0 }
    }

    /// CUDA runtime version the shim was linked with (`13050` for 13.5).
    pub fn runtime_version() -> i32 {
        // SAFETY: returns a compile-time constant.
        unsafe { ffi::pqcprof_cupqc_runtime_version() }
    }

    /// The constants of (alg, op) as the SDK's descriptor types define them.
    pub fn op_info(alg: Algorithm, op: Operation) -> anyhow::Result<OpInfo> {
        let mut info = OpInfo::default();
        // SAFETY: `info` is a valid, writable pqcprof_cupqc_op_info.
        check(
            unsafe { ffi::pqcprof_cupqc_get_op_info(alg_id(alg), op_id(op), &mut info) },
            &format!("sizes of {alg} {op}"),
        )?;
        Ok(info)
    }

    /// One prepared batch on the GPU: buffers, workspace, stream, events.
    /// Released when dropped.
    pub struct Batch {
        raw: *mut ffi::pqcprof_cupqc_batch,
        /// Operations in the batch.
        pub n: usize,
    }

    impl Batch {
        /// Allocates everything (alg, op) needs for `n` operations on GPU
        /// `device`; buffers start zeroed.
        pub fn prepare(
            device: usize,
            alg: Algorithm,
            op: Operation,
            n: usize,
            msg_len: usize,
        ) -> anyhow::Result<Batch> {
            let n32 = u32::try_from(n).map_err(|_| anyhow!("batch {n} is too large"))?;
            let msg32 =
                u32::try_from(msg_len).map_err(|_| anyhow!("message of {msg_len} bytes"))?;
            let mut raw = std::ptr::null_mut();
            // SAFETY: `raw` is a valid out pointer; the shim checks the rest.
            let status = unsafe {
                ffi::pqcprof_cupqc_prepare(
                    device as i32,
                    alg_id(alg),
                    op_id(op),
                    n32,
                    msg32,
                    &mut raw,
                )
            };
            check(status, &format!("preparing {n} × {alg} {op}"))?;
            if raw.is_null() {
                bail!("cuPQC shim: prepare returned no batch");
            }
            Ok(Batch { raw, n })
        }

        /// (length of the whole buffer, distance between two slots).
        pub fn layout(&self, role: Role) -> anyhow::Result<(usize, usize)> {
            let (mut len, mut stride) = (0usize, 0usize);
            // SAFETY: `raw` is a live batch; out pointers are valid.
            check(
                unsafe { ffi::pqcprof_cupqc_buffer(self.raw, role.id(), &mut len, &mut stride) },
                &format!("buffer {role:?}"),
            )?;
            Ok((len, stride))
        }

        /// Copies `data` (the whole buffer) to the GPU.
        pub fn upload(&mut self, role: Role, data: &[u8]) -> anyhow::Result<()> {
            // SAFETY: `raw` is live; `data` is readable for its length, which
            // the shim checks against the buffer's.
            check(
                unsafe {
                    ffi::pqcprof_cupqc_upload(self.raw, role.id(), data.as_ptr(), data.len())
                },
                &format!("upload of {role:?}"),
            )
        }

        /// Copies the whole buffer back.
        pub fn download(&self, role: Role) -> anyhow::Result<Vec<u8>> {
            let (len, _) = self.layout(role)?;
            let mut v = vec![0u8; len];
            // SAFETY: `raw` is live; `v` is writable for `len` bytes.
            check(
                unsafe { ffi::pqcprof_cupqc_download(self.raw, role.id(), v.as_mut_ptr(), len) },
                &format!("download of {role:?}"),
            )?;
            Ok(v)
        }

        /// One kernel launch over the batch between two CUDA events; the
        /// window is the kernel only.
        pub fn launch_timed(&mut self) -> anyhow::Result<Duration> {
            let mut ms = 0f32;
            // SAFETY: `raw` is live; `ms` is a valid out pointer.
            check(
                unsafe { ffi::pqcprof_cupqc_launch(self.raw, &mut ms) },
                "kernel launch",
            )?;
            Ok(Duration::from_secs_f64(f64::from(ms) / 1000.0))
        }

        /// Gives the batch pinned host copies of its buffers, filled with
        /// the inputs as prepared (once; `serve` needs it).
        pub fn stage(&mut self) -> anyhow::Result<()> {
            // SAFETY: `raw` is live; the shim allocates and fills the copies.
            check(
                unsafe { ffi::pqcprof_cupqc_stage(self.raw) },
                "pinned host copies for serving",
            )
        }

        /// One batch served: inputs copied in from the pinned copies, one
        /// launch, outputs copied back, on the batch's stream, waited for.
        pub fn serve(&mut self) -> anyhow::Result<()> {
            // SAFETY: `raw` is live; the shim refuses a batch not staged.
            check(
                unsafe { ffi::pqcprof_cupqc_serve(self.raw) },
                "served batch",
            )
        }

        /// One launch, untimed (to make a later operation's inputs).
        pub fn launch(&mut self) -> anyhow::Result<()> {
            // SAFETY: `raw` is live; a null `ms` asks for no timing.
            check(
                unsafe { ffi::pqcprof_cupqc_launch(self.raw, std::ptr::null_mut()) },
                "kernel launch",
            )
        }
    }

    impl Drop for Batch {
        fn drop(&mut self) {
            // SAFETY: `raw` came from prepare and is released once.
            unsafe { ffi::pqcprof_cupqc_release(self.raw) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_and_driver_compatibility() {
        let mut b = build_info();
        b.archs = vec!["80".into(), "90".into()];
        b.ptx = None;
        b.version = "0.4.1".into();
        assert!(b.runs_on((8, 0)) && b.runs_on((8, 9)) && b.runs_on((9, 0)));
        assert!(!b.runs_on((7, 5)) && !b.runs_on((10, 0)) && !b.runs_on((12, 0)));
        assert_eq!(b.image_for((8, 6)).as_deref(), Some("sm_80"));
        let why = b.no_image_reason((12, 0)).unwrap();
        assert!(
            why.starts_with("cuPQC 0.4.1 has no code for sm_120 (built for sm_80, sm_90)"),
            "{why}"
        );
        // With PTX of 9.0 embedded, newer GPUs run it through the driver,
        // older ones still have nothing.
        b.archs = vec!["75".into(), "80".into(), "86".into(), "90".into()];
        b.ptx = Some(90);
        assert_eq!(b.image_for((8, 9)).as_deref(), Some("sm_86"));
        assert_eq!(b.image_for((9, 0)).as_deref(), Some("sm_90"));
        assert_eq!(
            b.image_for((12, 0)).as_deref(),
            Some("PTX compute_90 (compiled by the driver)")
        );
        assert!(b.runs_on((10, 0)) && !b.runs_on((7, 0)));
        assert!(b
            .no_image_reason((7, 0))
            .unwrap()
            .contains("PTX compute_90"));
        assert!(driver_runs(13000, 13050) && driver_runs(13020, 13050));
        assert!(!driver_runs(12080, 13050));
        assert_eq!(b.built, linked_runtime().is_some());
    }
}
