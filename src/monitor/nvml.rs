//! The NVML sampler: while a GPU batch is timed, a thread samples device
//! memory in use, GPU utilisation, board power and SM clock about every
//! millisecond (configurable) and records their peaks and mean power.
//! Power is the instantaneous reading (`NVML_FI_DEV_POWER_INSTANT`, a field
//! value) where the driver offers it; otherwise `nvmlDeviceGetPowerUsage`,
//! which NVIDIA documents as a one-second average on Ampere (except GA100)
//! and newer, and `describe` says so. A run's energy comes from the GPU's
//! energy counter (Volta and newer) read at start and stop, else from
//! integrated power samples; the record's energy per operation is measured
//! over a window of at least a second (see `monitor::energy` and the runner).
//!
//! Memory is absolute device memory in use, as cuPQC_benchmark reports it.
//! NVML's utilisation is itself an average over its own sampling window
//! (1/6 s to 1 s depending on the GPU), so short runs see coarse figures.

use crate::monitor::{energy, RunUsage, Sampler};
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::Nvml;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The sampler thread's result: what it saw, and the energy integrated
/// from its power samples where power answered in every sample.
type Sampled = (RunUsage, Option<f64>);

struct Running {
    stop: Arc<AtomicBool>,
    energy_start_mj: Result<u64, String>,
    result: mpsc::Receiver<Sampled>,
}

/// Samples one GPU through NVML.
pub struct NvmlSampler {
    nvml: Arc<Nvml>,
    index: u32,
    period: Duration,
    running: Option<Running>,
    matched: &'static str,
    /// Whether the instantaneous power field answers (cleared on refusal).
    instant_ok: Arc<AtomicBool>,
    /// Set once an NVML call did not return within [`CALL_TIMEOUT`]: what
    /// hung. NVML is not called again; every later run names the gap.
    hung: Option<String>,
}

/// Longest one NVML call may take. Past it the call is taken as hung: the
/// run's record names the gap and the sampler calls NVML no more (the
/// thread that waits on it is left behind).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// What hung: set by the first NVML call in this process that did not
/// return within [`CALL_TIMEOUT`] (see [`bounded`]); NVML is not called
/// after it.
static HUNG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Marks NVML hung in this process, for good; the first mark is kept and
/// returned.
fn mark_hung(why: String) -> String {
    HUNG.get_or_init(|| why).clone()
}

/// `f`, an NVML call named `what`, on a thread of its own, waited for at
/// most [`CALL_TIMEOUT`]. `Err` says it did not return in time (NVML is
/// then called no more in this process: every later `bounded` call answers
/// that first `Err` at once), or that no thread could be started. Every
/// NVML call pqcprof makes goes through here: the sampler's and `check`'s.
pub fn bounded<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    if let Some(h) = HUNG.get() {
        return Err(h.clone());
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("pqcprof-nvml-call".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| format!("no thread for the NVML call {what}: {e}"))?;
    rx.recv_timeout(CALL_TIMEOUT).map_err(|_| {
        mark_hung(format!(
            "NVML hung: {what} did not return within {} s; NVML is not called again in this process",
            CALL_TIMEOUT.as_secs()
        ))
    })
}

/// The calls `Nvml::init` makes, as [`bounded`] names them: nvml-wrapper
/// reads the driver version right after `nvmlInit_v2`.
pub const INIT_CALLS: &str =
    "nvmlInit_v2 or the nvmlSystemGetDriverVersion nvml-wrapper's initialisation makes after it";

/// Every NVML function pqcprof calls through nvml-wrapper (which panics on
/// a missing one, `nvmlShutdown` included, when it is dropped).
pub const NVML_SYMBOLS: [&str; 12] = [
    "nvmlInit_v2",
    "nvmlShutdown",
    "nvmlSystemGetDriverVersion",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetHandleByPciBusId_v2",
    "nvmlDeviceGetIndex",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetFieldValues",
    "nvmlDeviceGetTotalEnergyConsumption",
];

/// NVML (`libnvidia-ml.so.1`, the name nvml-wrapper loads) checked once,
/// before its first call: `Err` when it is missing or lacks a function of
/// [`NVML_SYMBOLS`].
pub fn library() -> Result<(), String> {
    static CHECKED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    CHECKED
        .get_or_init(|| {
            match crate::core::dynlib::first_complete(
                &["libnvidia-ml.so.1".to_string()],
                &NVML_SYMBOLS,
            ) {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(
                    "NVML could not be loaded: libnvidia-ml.so.1 is not on the loader path".into(),
                ),
                Err(why) => Err(format!("NVML cannot be used: {why}")),
            }
        })
        .clone()
}

/// NVML opened, and the index of the device with `pci_bus_id`, or of
/// `cuda_ordinal` where NVML cannot resolve the id, with how it matched.
fn open(pci_bus_id: &str, cuda_ordinal: usize) -> anyhow::Result<(Nvml, u32, &'static str)> {
    let nvml = Nvml::init().map_err(|e| anyhow::anyhow!("NVML could not be loaded: {e}"))?;
    let (index, matched) = match nvml
        .device_by_pci_bus_id(pci_bus_id)
        .and_then(|d| d.index())
    {
        Ok(i) => (i, "by PCI bus id"),
        Err(_) => {
            let i = u32::try_from(cuda_ordinal)?;
            nvml.device_by_index(i).map_err(|e| {
                anyhow::anyhow!(
                    "NVML has no device at PCI bus id {pci_bus_id} nor at index {i}: {e}"
                )
            })?;
            (i, "by CUDA ordinal (PCI bus id not found by NVML)")
        }
    };
    Ok((nvml, index, matched))
}

impl NvmlSampler {
    /// Opens NVML and finds the device with this PCI bus id
    /// (`00000000:01:00.0`), so CUDA and NVML name the same GPU. If NVML
    /// cannot resolve the id, it falls back to the CUDA ordinal (the same
    /// GPU unless CUDA_VISIBLE_DEVICES reorders them) and says so. An NVML
    /// that does not answer within [`CALL_TIMEOUT`] is an error.
    pub fn new(pci_bus_id: &str, cuda_ordinal: usize, period: Duration) -> anyhow::Result<Self> {
        library().map_err(anyhow::Error::msg)?;
        let id = pci_bus_id.to_string();
        let (nvml, index, matched) =
            bounded(&format!("{INIT_CALLS}, or the device lookup"), move || {
                open(&id, cuda_ordinal)
            })
            .map_err(anyhow::Error::msg)??;
        Ok(NvmlSampler {
            nvml: Arc::new(nvml),
            index,
            period,
            running: None,
            matched,
            instant_ok: Arc::new(AtomicBool::new(true)),
            hung: None,
        })
    }

    /// The energy counter, millijoules, or why not; a read that hangs
    /// marks the sampler hung.
    fn energy_mj(&mut self) -> Result<u64, String> {
        if let Some(h) = &self.hung {
            return Err(h.clone());
        }
        let (nvml, index) = (self.nvml.clone(), self.index);
        let r = bounded("nvmlDeviceGetTotalEnergyConsumption", move || {
            nvml.device_by_index(index)
                .and_then(|d| d.total_energy_consumption())
                .map_err(|e| format!("nvmlDeviceGetTotalEnergyConsumption: {e}"))
        });
        match r {
            Ok(v) => v,
            Err(hung) => {
                self.hung = Some(hung.clone());
                Err(hung)
            }
        }
    }
}

/// NVML's field id of instantaneous board power, milliwatts
/// (`NVML_FI_DEV_POWER_INSTANT` in nvml.h).
pub const FI_DEV_POWER_INSTANT: u32 = 186;

/// Instantaneous power, milliwatts, while `ok` holds; a device that refuses
/// the field once clears `ok` and is not asked again.
fn instant_power_mw(dev: &nvml_wrapper::Device, ok: &AtomicBool) -> Option<u32> {
    use nvml_wrapper::enums::device::SampleValue;
    use nvml_wrapper::structs::device::FieldId;
    if !ok.load(Ordering::Relaxed) {
        return None;
    }
    let v = dev
        .field_values_for(&[FieldId(FI_DEV_POWER_INSTANT)])
        .ok()
        .and_then(|mut v| v.pop())
        .and_then(|s| s.ok())
        .and_then(|s| s.value.ok())
        .and_then(|v| match v {
            SampleValue::U32(x) => Some(x),
            SampleValue::U64(x) => u32::try_from(x).ok(),
            SampleValue::I64(x) => u32::try_from(x).ok(),
            SampleValue::F64(x) if x.is_finite() && x >= 0.0 => Some(x as u32),
            _ => None,
        });
    if v.is_none() {
        ok.store(false, Ordering::Relaxed);
    }
    v
}

/// NVML's clock throttle reason bits (nvml.h,
/// `nvmlClocksThrottleReason*`) and the names records use for them.
/// (User-defined clocks share bit 0x2 with application clocks.)
pub const THROTTLE_REASONS: [(u64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// The names of the throttle reason bits set in `bits`.
pub fn throttle_reason_names(bits: u64) -> Vec<&'static str> {
    THROTTLE_REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// Reasons that mean the clocks were held down by power or heat (as
/// nvbench flags a throttled measurement); idle, application clocks,
/// sync boost and display settings do not.
pub const SLOWING_REASONS: [&str; 5] = [
    "sw_power_cap",
    "hw_slowdown",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
];

/// One sampled figure's answers over a run: how many samples NVML
/// refused or failed, the first of them, and its last error.
#[derive(Default)]
struct Answers {
    failed: usize,
    first_failed: Option<usize>,
    error: String,
}

impl Answers {
    fn note<T, E: std::fmt::Display>(&mut self, r: Result<T, E>, sample: usize) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed += 1;
                self.first_failed.get_or_insert(sample);
                self.error = e.to_string();
                None
            }
        }
    }

    /// The gap for `what` (read by `call`) over `samples`, if any failed.
    fn gap(&self, what: &str, call: &str, samples: usize) -> Option<String> {
        let first = self.first_failed?;
        Some(if self.failed >= samples {
            format!(
                "{what}: not measured, NVML answered no sample ({call}: {})",
                self.error
            )
        } else {
            format!(
                "{what}: {} of {samples} samples failed, the first at sample {} ({call}: {}); the figure covers the samples that answered",
                self.failed,
                first + 1,
                self.error
            )
        })
    }
}

/// Each figure's answers, in the order gaps are named.
#[derive(Default)]
struct AllAnswers {
    memory: Answers,
    util: Answers,
    clock: Answers,
    throttle: Answers,
    power: Answers,
}

impl AllAnswers {
    fn gaps(&self, samples: usize) -> Vec<String> {
        [
            ("memory used", "nvmlDeviceGetMemoryInfo_v2", &self.memory),
            ("utilisation", "nvmlDeviceGetUtilizationRates", &self.util),
            ("SM clock", "nvmlDeviceGetClockInfo", &self.clock),
            (
                "throttle reasons",
                "nvmlDeviceGetCurrentClocksThrottleReasons",
                &self.throttle,
            ),
            ("power", "nvmlDeviceGetPowerUsage", &self.power),
        ]
        .iter()
        .filter_map(|(what, call, a)| a.gap(what, call, samples))
        .collect()
    }
}

/// One sample of every figure into `u`; the power read, watts.
fn sample_once(
    dev: &nvml_wrapper::Device,
    u: &mut RunUsage,
    a: &mut AllAnswers,
    instant_ok: &AtomicBool,
    util_sum: &mut f64,
) -> Option<f64> {
    let n = u.samples;
    let max = |a: Option<f64>, b: f64| Some(a.map_or(b, |x| x.max(b)));
    if let Some(m) = a.memory.note(dev.memory_info(), n) {
        u.peak_mem_mb = max(u.peak_mem_mb, m.used as f64 / (1024.0 * 1024.0));
    }
    if let Some(r) = a.util.note(dev.utilization_rates(), n) {
        u.peak_util_pct = max(u.peak_util_pct, f64::from(r.gpu));
        *util_sum += f64::from(r.gpu);
    }
    if let Some(c) = a.clock.note(dev.clock_info(Clock::SM), n) {
        let c = f64::from(c);
        u.peak_sm_clock_mhz = max(u.peak_sm_clock_mhz, c);
        u.min_sm_clock_mhz = Some(u.min_sm_clock_mhz.map_or(c, |x| x.min(c)));
    }
    if let Some(r) = a.throttle.note(dev.current_throttle_reasons(), n) {
        for name in throttle_reason_names(r.bits()) {
            if !u.throttle_reasons.iter().any(|x| x == name) {
                u.throttle_reasons.push(name.to_string());
            }
        }
    }
    let mw = match instant_power_mw(dev, instant_ok) {
        Some(mw) => Some(mw),
        None => a.power.note(dev.power_usage(), n),
    };
    mw.map(|mw| f64::from(mw) / 1000.0)
}

fn sample_until(
    nvml: &Nvml,
    index: u32,
    stop: &AtomicBool,
    period: Duration,
    instant_ok: &AtomicBool,
) -> Sampled {
    let mut u = RunUsage::default();
    let dev = match nvml.device_by_index(index) {
        Ok(d) => d,
        Err(e) => {
            u.gaps.push(format!(
                "every figure: NVML gave no handle for device {index} (nvmlDeviceGetHandleByIndex_v2: {e})"
            ));
            return (u, None);
        }
    };
    let mut a = AllAnswers::default();
    let (mut power_sum, mut power_n, mut joules, mut util_sum) = (0.0f64, 0usize, 0.0f64, 0.0f64);
    let mut last = Instant::now();
    let mut last_w: Option<f64> = None;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let w = sample_once(&dev, &mut u, &mut a, instant_ok, &mut util_sum);
        let now = Instant::now();
        if let Some(w) = w {
            power_sum += w;
            power_n += 1;
            // Trapezoids between samples.
            if let Some(prev) = last_w {
                joules += (prev + w) / 2.0 * (now - last).as_secs_f64();
            }
            last_w = Some(w);
        }
        last = now;
        u.samples += 1;
        if stopping {
            break;
        }
        std::thread::sleep(period);
    }
    if power_n > 0 {
        u.mean_power_w = Some(power_sum / power_n as f64);
    }
    let util_n = u.samples - a.util.failed;
    if util_n > 0 {
        u.mean_util_pct = Some(util_sum / util_n as f64);
    }
    u.gaps = a.gaps(u.samples);
    // Integrated energy only where power answered in every sample: a part
    // of the run is not the run's energy.
    let integrated = (a.power.failed == 0 && power_n >= 2 && joules > 0.0).then_some(joules);
    (u, integrated)
}

impl Sampler for NvmlSampler {
    fn start(&mut self) -> anyhow::Result<()> {
        anyhow::ensure!(self.running.is_none(), "NVML sampler already running");
        let stop = Arc::new(AtomicBool::new(false));
        let energy_start_mj = self.energy_mj();
        let (tx, rx) = mpsc::channel();
        if self.hung.is_none() {
            let (nvml, index, period, flag) =
                (self.nvml.clone(), self.index, self.period, stop.clone());
            let instant = self.instant_ok.clone();
            std::thread::Builder::new()
                .name("pqcprof-nvml-sampler".into())
                .spawn(move || {
                    let _ = tx.send(sample_until(&nvml, index, &flag, period, &instant));
                })?;
        }
        self.running = Some(Running {
            stop,
            energy_start_mj,
            result: rx,
        });
        Ok(())
    }

    fn stop(&mut self) -> anyhow::Result<RunUsage> {
        let r = self
            .running
            .take()
            .ok_or_else(|| anyhow::anyhow!("NVML sampler was not started"))?;
        r.stop.store(true, Ordering::Release);
        let (mut usage, integrated_j) = match &self.hung {
            Some(h) => (RunUsage::default(), None).with_gap(h),
            None => match r.result.recv_timeout(CALL_TIMEOUT + self.period * 2) {
                Ok(sampled) => sampled,
                Err(_) => {
                    let h = format!(
                        "NVML hung: the sampler's calls did not return within {} s; nothing of this run was recorded and NVML is not called again in this process",
                        CALL_TIMEOUT.as_secs()
                    );
                    mark_hung(h.clone());
                    self.hung = Some(h.clone());
                    (RunUsage::default(), None).with_gap(&h)
                }
            },
        };
        let end_mj = self.energy_mj();
        let counter = match (&r.energy_start_mj, &end_mj) {
            (Ok(a), Ok(b)) => energy::counter_joules(*a, *b),
            (Ok(_), Err(why)) if self.hung.is_none() => {
                usage
                    .gaps
                    .push(format!("energy counter: the closing read failed ({why})"));
                None
            }
            _ => None,
        };
        let (j, source) = match (counter, integrated_j) {
            (Some(j), _) => (Some(j), "energy counter"),
            (None, Some(j)) => (Some(j), energy::INTEGRATED),
            (None, None) => (None, "unavailable"),
        };
        usage.energy_j = j;
        usage.energy_source = Some(source.to_string());
        Ok(usage)
    }

    fn describe(&self) -> String {
        format!(
            "NVML sampler on device {} (matched {}): memory used, GPU utilisation, power, SM clock every {} us; power {}",
            self.index,
            self.matched,
            self.period.as_micros(),
            if self.instant_ok.load(Ordering::Relaxed) {
                "instantaneous (NVML_FI_DEV_POWER_INSTANT)"
            } else {
                "from nvmlDeviceGetPowerUsage, a one-second average on Ampere and newer (the instantaneous field is not offered here)"
            }
        )
    }

    fn energy_counter_mj(&mut self) -> Option<u64> {
        self.energy_mj().ok()
    }

    fn measures_power(&self) -> bool {
        self.hung.is_none()
    }
}

/// A sampler result with one more gap.
trait WithGap {
    fn with_gap(self, gap: &str) -> Self;
}

impl WithGap for Sampled {
    fn with_gap(mut self, gap: &str) -> Self {
        self.0.gaps.push(gap.to_string());
        self
    }
}

/// A sampler for when NVML is missing: records nothing and says why.
pub struct NoSampler(pub String);

impl Sampler for NoSampler {
    fn start(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    fn stop(&mut self) -> anyhow::Result<RunUsage> {
        Ok(RunUsage::default())
    }
    fn describe(&self) -> String {
        format!("no sampler: {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn throttle_bits_have_names() {
        use super::*;
        assert_eq!(throttle_reason_names(0), Vec::<&str>::new());
        assert_eq!(
            throttle_reason_names(0x4 | 0x40),
            ["sw_power_cap", "hw_thermal_slowdown"]
        );
        assert_eq!(throttle_reason_names(0x1), ["gpu_idle"]);
        assert!(!SLOWING_REASONS.contains(&"gpu_idle"));
    }

    use super::*;

    #[test]
    fn a_missing_nvml_is_an_error_not_a_panic() {
        // On machines without the NVIDIA driver this must be a clean Err.
        if let Err(e) = NvmlSampler::new("00000000:01:00.0", 0, Duration::from_millis(1)) {
            assert!(!e.to_string().is_empty());
        }
        let mut s = NoSampler("NVML missing".into());
        s.start().unwrap();
        assert_eq!(s.stop().unwrap(), RunUsage::default());
        assert!(s.describe().contains("NVML missing"));
    }
}
