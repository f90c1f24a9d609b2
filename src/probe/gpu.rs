//! What this machine offers for GPU work: the CUDA driver and its GPUs (as
//! the driver reports them, never guessed from names), NVML, NVRTC and the
//! cuPQC SDK. Every library is loaded dynamically and probed before use:
//! cudarc panics when a library or a function it needs is missing, so each
//! library's whole list of functions is resolved first
//! ([`crate::core::dynlib`]), and nothing here calls into one that failed.
//! The first driver call (`cuInit`) runs under a time limit: a hung driver
//! is named, not waited for.

use crate::schema::metadata::GpuInfo;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A library or component: found or not, and what was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Whether it can be used.
    pub present: bool,
    /// Version or location when present; what went wrong when not.
    pub detail: String,
}

impl Component {
    fn yes(detail: impl Into<String>) -> Self {
        Component {
            present: true,
            detail: detail.into(),
        }
    }
    fn no(detail: impl Into<String>) -> Self {
        Component {
            present: false,
            detail: detail.into(),
        }
    }
}

/// Everything `check` reports about GPU support.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProbe {
    /// libcuda and its version.
    pub driver: Component,
    /// CUDA driver API version, e.g. 13000 for CUDA 13.0.
    pub driver_api_version: Option<u32>,
    /// GPUs the driver lists.
    pub gpus: Vec<GpuInfo>,
    /// NVML (libnvidia-ml) and the driver version it reports.
    pub nvml: Component,
    /// NVRTC and its version.
    pub nvrtc: Component,
    /// The cuPQC SDK's location, if found.
    pub cupqc_sdk: Component,
    /// Driver symbols the native backend calls that this driver lacks.
    #[serde(default)]
    pub missing_driver_symbols: Vec<String>,
    /// When the loaded libcuda is pqcprof's CPU stand-in driver (a test
    /// fixture, not a GPU): its own description. See `standin_driver`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<String>,
}

/// Driver entry points pqcprof's cudarc build (feature `cuda-13000`) calls
/// that older drivers lack, with the CUDA driver API version that added
/// each: cudarc times events with `cuEventElapsedTime_v2`, which its
/// bindings have from CUDA 12.8 on (and panics on a driver without it).
pub const NEWER_DRIVER_SYMBOLS: [(&str, u32); 1] = [("cuEventElapsedTime_v2", 12080)];

/// Every CUDA driver function pqcprof's cudarc calls (device queries,
/// contexts, memory, copies, modules, launches, events, error strings),
/// resolved before the first call. The newer ones of
/// [`NEWER_DRIVER_SYMBOLS`] are checked apart, to name the driver to install.
pub const DRIVER_SYMBOLS: [&str; 47] = [
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetUuid_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxGetDevice",
    "cuCtxSynchronize",
    "cuStreamCreate",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuMemAlloc_v2",
    "cuMemAllocAsync",
    "cuMemFree_v2",
    "cuMemFreeAsync",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemGetInfo_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8_v2",
    "cuMemsetD8Async",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
];

/// Every NVRTC function pqcprof calls, resolved before the first call.
pub const NVRTC_SYMBOLS: [&str; 11] = [
    "nvrtcVersion",
    "nvrtcGetErrorString",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
];

/// How long the first driver call (`cuInit`) may take before the driver is
/// taken as hung: `PQCPROF_DRIVER_TIMEOUT_S` seconds, else 30.
pub fn driver_timeout() -> std::time::Duration {
    let secs = std::env::var("PQCPROF_DRIVER_TIMEOUT_S")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 3600.0)
        .unwrap_or(30.0);
    std::time::Duration::from_secs_f64(secs)
}

/// The libraries cudarc would try for `name` (`cuda`, `nvrtc`), in its order.
fn candidates(names: &[&str]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| cudarc::get_lib_name_candidates(n))
        .collect()
}

/// The CUDA driver library checked once: `Ok(true)` when it loads with
/// every function of [`DRIVER_SYMBOLS`], `Ok(false)` when there is none,
/// `Err` naming what is wrong.
fn driver_library() -> Result<bool, String> {
    static CHECKED: std::sync::OnceLock<Result<bool, String>> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            crate::core::dynlib::first_complete(&candidates(&["cuda", "nvcuda"]), &DRIVER_SYMBOLS)
                .map(|found| found.is_some())
        })
        .clone()
}

/// NVRTC checked once: `Ok(true)` when it loads with every function of
/// [`NVRTC_SYMBOLS`], `Ok(false)` when there is none, `Err` naming what is
/// wrong.
pub fn nvrtc_library() -> Result<bool, String> {
    static CHECKED: std::sync::OnceLock<Result<bool, String>> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            crate::core::dynlib::first_complete(&candidates(&["nvrtc"]), &NVRTC_SYMBOLS)
                .map(|found| found.is_some())
        })
        .clone()
}

/// `cuInit(0)` on a thread of its own, waited for at most `limit`: `None`
/// when it did not return in time (the thread is left blocked; nothing
/// else calls into the driver afterwards).
fn init_within(limit: std::time::Duration) -> Option<Result<(), cudarc::driver::DriverError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("pqcprof-cuinit".into())
        .spawn(move || {
            let _ = tx.send(cudarc::driver::result::init());
        })
        .ok()?;
    rx.recv_timeout(limit).ok()
}

/// The oldest CUDA driver API version with every symbol we call.
pub fn min_driver_api() -> u32 {
    NEWER_DRIVER_SYMBOLS
        .iter()
        .map(|(_, v)| *v)
        .max()
        .unwrap_or(0)
}

/// Why no GPU can be used here at all: no driver, no GPU listed, or none
/// of the compute capability pqcprof needs; `None` when one can.
pub fn no_usable_gpu(gpu: &GpuProbe) -> Option<String> {
    let (major, minor) = crate::schema::metadata::MIN_COMPUTE_CAPABILITY;
    if !gpu.driver.present {
        Some(format!("no CUDA driver: {}", gpu.driver.detail))
    } else if gpu.gpus.is_empty() {
        Some("the CUDA driver lists no GPU".to_string())
    } else if !gpu.gpus.iter().any(|g| g.supported()) {
        Some(format!(
            "no GPU of compute capability {major}.{minor} or newer"
        ))
    } else {
        None
    }
}

/// Why this process cannot open a GPU through the CUDA driver (none, one
/// that does not load, or one too old for the calls pqcprof makes), found
/// without loading anything that would abort; `None` when it can. Unlike
/// [`probe`], it never starts the binary again.
pub fn driver_unusable() -> Option<String> {
    let (driver, api, _) = probe_driver();
    if !driver.present {
        return Some(format!("no CUDA driver: {}", driver.detail));
    }
    driver_too_old(api, &missing_symbols())
}

/// Why the native backend cannot use this driver, naming the driver to
/// install; `None` when it has every symbol we call.
pub fn driver_too_old(api: Option<u32>, missing: &[String]) -> Option<String> {
    let need = min_driver_api();
    let old = api.is_some_and(|v| v < need);
    (old || !missing.is_empty()).then(|| {
        format!(
            "the CUDA driver (API {}) is too old: pqcprof times kernels with {} (CUDA driver API {} or newer){}; install an NVIDIA driver of the R570 series or newer (CUDA 12.8+)",
            api.map(driver_version_string)
                .unwrap_or_else(|| "version unknown".into()),
            NEWER_DRIVER_SYMBOLS
                .iter()
                .map(|(s, _)| *s)
                .collect::<Vec<_>>()
                .join(", "),
            driver_version_string(need),
            if missing.is_empty() {
                String::new()
            } else {
                format!(", and it lacks {}", missing.join(", "))
            }
        )
    })
}

/// Why the NVRTC found cannot serve this driver, and what to do: NVRTC
/// emits machine code and PTX for its own CUDA version, which a driver
/// for an older CUDA major version refuses at module load. `None` when
/// they match or a version is unknown.
pub fn nvrtc_driver_mismatch(nvrtc: Option<(i32, i32)>, api: Option<u32>) -> Option<String> {
    let ((major, minor), api) = (nvrtc?, api?);
    let driver_major = (api / 1000) as i32;
    (major > driver_major).then(|| {
        let series = match major {
            13 => " (R580 or newer)",
            12 => " (R525 or newer)",
            _ => "",
        };
        format!(
            "NVRTC {major}.{minor} needs a driver for CUDA {major}{series}; this driver supports CUDA {}: install nvidia-cuda-nvrtc {driver_major}.x (`pip install \"nvidia-cuda-nvrtc-cu{driver_major}\"` or the CUDA {driver_major} toolkit) and put its lib folder first on LD_LIBRARY_PATH, or upgrade the driver",
            driver_version_string(api)
        )
    })
}

/// The symbols of `NEWER_DRIVER_SYMBOLS` libcuda does not export.
fn missing_symbols() -> Vec<String> {
    if driver_library() != Ok(true) {
        return vec![];
    }
    // SAFETY: the library is present (checked above), so culib() loads it
    // without panicking; looking a symbol up calls nothing.
    let lib = unsafe { cudarc::driver::sys::culib() };
    NEWER_DRIVER_SYMBOLS
        .iter()
        .filter(|(name, _)| {
            let sym = format!("{name}\0");
            // SAFETY: the symbol is only looked up, never called.
            unsafe { lib.get::<unsafe extern "C" fn()>(sym.as_bytes()) }.is_err()
        })
        .map(|(name, _)| name.to_string())
        .collect()
}

fn driver_version_string(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn probe_driver() -> (Component, Option<u32>, Vec<GpuInfo>) {
    static PROBED: std::sync::OnceLock<(Component, Option<u32>, Vec<GpuInfo>)> =
        std::sync::OnceLock::new();
    PROBED.get_or_init(probe_driver_once).clone()
}

fn probe_driver_once() -> (Component, Option<u32>, Vec<GpuInfo>) {
    use cudarc::driver::{result, sys};
    match driver_library() {
        Ok(true) => {}
        Ok(false) => {
            return (
                Component::no("libcuda.so not found: no NVIDIA driver is installed or it is not on the loader path"),
                None,
                vec![],
            )
        }
        Err(why) => {
            return (
                Component::no(format!("the CUDA driver cannot be used: {why}")),
                None,
                vec![],
            )
        }
    }
    let limit = driver_timeout();
    let Some(init) = init_within(limit) else {
        return (
            Component::no(format!(
                "the CUDA driver is hung: cuInit did not return within {:.0} s (check `nvidia-smi` and the kernel log; PQCPROF_DRIVER_TIMEOUT_S sets the limit); no GPU is used",
                limit.as_secs_f64()
            )),
            None,
            vec![],
        );
    };
    match init {
        Ok(()) => {}
        // A driver with no device says so through cuInit: the driver is
        // there, the GPU list is empty (a normal state, not an error).
        Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE => {
            return (
                Component::yes("present, but it finds no device (cuInit: CUDA_ERROR_NO_DEVICE)"),
                None,
                vec![],
            )
        }
        Err(e) => return (Component::no(format!("cuInit failed: {e:?}")), None, vec![]),
    }
    let mut v: std::os::raw::c_int = 0;
    // SAFETY: the library is present and initialised; v is a valid out pointer.
    let api = unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .ok()
        .map(|_| v as u32);
    let count = result::device::get_count().unwrap_or(0);
    let mut gpus = vec![];
    for ordinal in 0..count {
        let Ok(dev) = result::device::get(ordinal) else {
            continue;
        };
        let attr = |a| {
            // SAFETY: dev is a valid device handle from cuDeviceGet.
            unsafe { result::device::get_attribute(dev, a) }.unwrap_or(0) as u32
        };
        let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        // SAFETY: as above.
        let mem = unsafe { result::device::total_mem(dev) }.unwrap_or(0) as u64;
        gpus.push(GpuInfo {
            ordinal: ordinal as usize,
            name: result::device::get_name(dev).unwrap_or_else(|_| "unknown".into()),
            compute_capability: (major, minor),
            memory_total_mb: mem / (1024 * 1024),
        });
    }
    let detail = match api {
        Some(v) => format!("CUDA driver API {}", driver_version_string(v)),
        None => "present (version unknown)".into(),
    };
    (Component::yes(detail), api, gpus)
}

/// NVML and its driver version, each call bounded as the sampler's are
/// (`monitor::nvml::bounded`): one that hangs is named, not waited for.
fn probe_nvml() -> Component {
    use crate::monitor::nvml::{bounded, library, INIT_CALLS};
    if let Err(why) = library() {
        return Component::no(why);
    }
    let nvml = match bounded(INIT_CALLS, || {
        nvml_wrapper::Nvml::init().map_err(|e| e.to_string())
    }) {
        Ok(Ok(nvml)) => nvml,
        Ok(Err(e)) => return Component::no(format!("NVML could not be loaded: {e}")),
        Err(hung) => return Component::no(hung),
    };
    match bounded("nvmlSystemGetDriverVersion", move || {
        nvml.sys_driver_version().map_err(|e| e.to_string())
    }) {
        Ok(Ok(v)) => Component::yes(format!("driver {v}")),
        Ok(Err(e)) => Component::yes(format!("present (driver version unavailable: {e})")),
        Err(hung) => Component::no(hung),
    }
}

/// NVRTC's (major, minor) version, when the library loads.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    use cudarc::nvrtc::sys;
    if nvrtc_library() != Ok(true) {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; out pointers are valid.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .ok()
        .map(|_| (major, minor))
}

fn probe_nvrtc() -> Component {
    if let Err(why) = nvrtc_library() {
        return Component::no(format!("NVRTC cannot be used: {why}"));
    }
    match nvrtc_version() {
        Some((a, b)) => Component::yes(match crate::probe::nvrtc_choice::chosen_note() {
            Some(note) => format!("NVRTC {a}.{b}: {note}"),
            None => format!("NVRTC {a}.{b}"),
        }),
        None => Component::no(
            "libnvrtc not found on the loader path (install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc` and add its lib folder to LD_LIBRARY_PATH)",
        ),
    }
}

/// Where the cuPQC SDK would be: `$CUPQC_HOME`, else `third_party/cupqc`.
pub fn cupqc_sdk_dir() -> PathBuf {
    std::env::var_os("CUPQC_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("third_party/cupqc"))
}

fn probe_cupqc() -> Component {
    let dir = cupqc_sdk_dir();
    let headers = [
        "include/cupqc/pk.hpp",
        "include/pk.hpp",
        "include/cupqc.hpp",
        "include/cupqc/cupqc.hpp",
    ];
    match headers.iter().map(|h| dir.join(h)).find(|p| p.exists()) {
        Some(h) => Component::yes(format!("SDK headers at {}", h.display())),
        None => Component::no(format!(
            "no cuPQC SDK at {} (set CUPQC_HOME or unpack the SDK there)",
            dir.display()
        )),
    }
}

/// What a command that runs no GPU backend records: nothing probed, no
/// GPU library loaded.
pub fn not_probed() -> GpuProbe {
    let skipped = || Component::no("not probed: this command runs no GPU backend");
    GpuProbe {
        driver: skipped(),
        driver_api_version: None,
        gpus: vec![],
        nvml: skipped(),
        nvrtc: skipped(),
        cupqc_sdk: skipped(),
        missing_driver_symbols: vec![],
        emulation: None,
    }
}

/// Probes everything; never panics when libraries are missing.
pub fn probe() -> GpuProbe {
    let (driver, driver_api_version, gpus) = probe_driver();
    // An NVRTC too new for this driver, with a compatible one installed:
    // the binary starts again with that one (and this does not return).
    crate::probe::nvrtc_choice::restart_if_incompatible(nvrtc_version(), driver_api_version);
    crate::probe::nvrtc_choice::forget_link_dir();
    GpuProbe {
        missing_driver_symbols: if driver.present {
            missing_symbols()
        } else {
            vec![]
        },
        driver,
        driver_api_version,
        gpus,
        nvml: probe_nvml(),
        nvrtc: probe_nvrtc(),
        cupqc_sdk: probe_cupqc(),
        emulation: standin_driver(),
    }
}

/// The marker symbol the CPU stand-in driver (tests/fixtures/cuda-standin/)
/// exports, and no real driver does.
const STANDIN_MARKER: &[u8] = b"pqcprof_standin_driver\0";

/// When the libcuda this process loads is pqcprof's CPU stand-in driver,
/// its description; `None` for a real driver or none. The stand-in runs
/// the kernels on the CPU to prove correctness and the launch path: every
/// record made on it is marked `emulated` and kept out of speed claims.
pub fn standin_driver() -> Option<String> {
    static FOUND: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            use cudarc::driver::sys;
            if driver_library() != Ok(true) {
                return None;
            }
            // SAFETY: present (checked above), so `culib` loads rather than
            // panics; looking a symbol up calls nothing.
            let lib = unsafe { sys::culib() };
            // SAFETY: the stand-in exports it as `const char *(void)`.
            let describe = unsafe {
                lib.get::<unsafe extern "C" fn() -> *const std::os::raw::c_char>(STANDIN_MARKER)
            }
            .ok()?;
            // SAFETY: the stand-in returns a static NUL-terminated string.
            let text = unsafe { std::ffi::CStr::from_ptr(describe()) };
            Some(text.to_string_lossy().into_owned())
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics() {
        // On a machine without a driver every component says why.
        let p = probe();
        if !p.driver.present {
            assert!(p.gpus.is_empty());
            assert!(!p.driver.detail.is_empty());
        } else {
            // A driver: its version as the detail says it, and each GPU
            // it lists, in order, with a name, a capability and memory
            // (tests/cuda_standin.rs checks the figures themselves).
            match p.driver_api_version {
                Some(v) => assert_eq!(
                    p.driver.detail,
                    format!("CUDA driver API {}", driver_version_string(v))
                ),
                None => assert!(
                    (p.driver.detail.contains("finds no device") && p.gpus.is_empty())
                        || p.driver.detail == "present (version unknown)",
                    "{p:?}"
                ),
            }
            for (i, g) in p.gpus.iter().enumerate() {
                assert_eq!(g.ordinal, i, "{p:?}");
                assert!(!g.name.is_empty() && g.name != "unknown", "{p:?}");
                assert!(g.compute_capability.0 >= 1, "{p:?}");
                assert!(g.memory_total_mb > 0, "{p:?}");
            }
        }
        assert!(!p.nvml.detail.is_empty());
        assert!(!p.nvrtc.detail.is_empty());
    }

    #[test]
    fn versions_print_like_cuda() {
        assert_eq!(driver_version_string(12080), "12.8");
        let m = nvrtc_driver_mismatch(Some((13, 0)), Some(12040)).unwrap();
        assert!(
            m.contains("NVRTC 13.0 needs a driver for CUDA 13 (R580 or newer)")
                && m.contains("supports CUDA 12.4")
                && m.contains("nvidia-cuda-nvrtc 12.x"),
            "{m}"
        );
        assert_eq!(nvrtc_driver_mismatch(Some((12, 8)), Some(13000)), None);
        assert_eq!(nvrtc_driver_mismatch(Some((13, 5)), Some(13000)), None);
        assert_eq!(nvrtc_driver_mismatch(None, Some(12040)), None);
        assert_eq!(driver_version_string(13000), "13.0");
    }

    #[test]
    fn drivers_without_our_symbols_are_refused_by_name() {
        assert_eq!(min_driver_api(), 12080);
        assert_eq!(driver_too_old(Some(12080), &[]), None);
        assert_eq!(driver_too_old(Some(13000), &[]), None);
        let why = driver_too_old(Some(12040), &[]).unwrap();
        assert!(why.contains("API 12.4"), "{why}");
        assert!(why.contains("cuEventElapsedTime_v2"), "{why}");
        assert!(why.contains("12.8 or newer"), "{why}");
        assert!(why.contains("install an NVIDIA driver"), "{why}");
        let why = driver_too_old(Some(12090), &["cuEventElapsedTime_v2".into()]).unwrap();
        assert!(why.contains("lacks cuEventElapsedTime_v2"), "{why}");
        // Version unknown but the symbol is there: fine.
        assert_eq!(driver_too_old(None, &[]), None);
    }

    #[test]
    fn capability_floor() {
        let g = |cc| GpuInfo {
            ordinal: 0,
            name: "x".into(),
            compute_capability: cc,
            memory_total_mb: 1,
        };
        assert!(g((7, 5)).supported());
        assert!(g((9, 0)).supported());
        assert!(!g((7, 0)).supported());
    }
}
