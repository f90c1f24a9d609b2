//! The compiled-kernel cache: where NVRTC's PTX, machine code and log are
//! kept between runs (`cache_dir`), how an entry is named (the unit, its
//! source, the options and NVRTC's version), which files count as whole,
//! and the lock through which processes sharing a cache take turns (one
//! compiles, the others wait and read what it wrote). Compiling within a
//! command's time, in processes of their own, is [`super::bounded_compile`].

use super::kernels::*;
use crate::core::catalog::Family;
use std::path::{Path, PathBuf};

/// Where compiled kernels are kept between runs: `$PQCPROF_PTX_CACHE`, else
/// `$XDG_CACHE_HOME/pqcprof/ptx`, else `~/.cache/pqcprof/ptx`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PQCPROF_PTX_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("pqcprof").join("ptx"))
}

/// FNV-1a, 64 bits: a stable hash for cache file names (std's hasher may
/// change between Rust releases).
fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate the parts so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Cache file stem (`.ptx`, `.cubin`, `.log` and `.lock` are added): the
/// unit, its source, the options and NVRTC's version all count.
pub fn cache_file_stem(unit: Family, arch: &str, nvrtc: (i32, i32)) -> String {
    let src = source(unit);
    let opts = nvrtc_options(arch).join(" ");
    let h = fnv1a64(&[
        src.as_bytes(),
        opts.as_bytes(),
        format!("{}.{}", nvrtc.0, nvrtc.1).as_bytes(),
    ]);
    format!(
        "native-{}-{arch}-nvrtc{}.{}-{h:016x}",
        unit_name(unit),
        nvrtc.0,
        nvrtc.1
    )
}

/// Whether `ptx` is plausibly whole PTX for `arch`: it names its target and
/// ends the last entry point.
fn is_whole_ptx(ptx: &str, arch: &str) -> bool {
    ptx.contains(&format!(".target {arch}"))
        && ptx.contains(&format!(".entry {LAST_ENTRY}("))
        && ptx.trim_end().ends_with('}')
}

/// The `sm_XY` a CUDA ELF image was built for, from its header: with ELF
/// ABI version 8 (CUDA 12.8 onwards) the SM number sits in bits 8-15 of
/// `e_flags`, before that in bits 0-7.
pub fn cubin_arch(cubin: &[u8]) -> Option<String> {
    let flags = u32::from_le_bytes(cubin.get(0x30..0x34)?.try_into().ok()?);
    let abi = *cubin.get(8)?;
    let sm = if abi >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    };
    (sm > 0).then(|| format!("sm_{sm}"))
}

/// Where the kernels came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled now by NVRTC (and cached if the cache folder is writable).
    Compiled,
    /// Read from the cache; the path of the machine code.
    Cache(PathBuf),
    /// A prebuilt image in the cache folder, made from this binary's
    /// sources and options by another NVRTC (or where none is installed):
    /// the path of the machine code and the version of the NVRTC that
    /// made it.
    Prebuilt(PathBuf, (i32, i32)),
}

/// The NVRTC version a cache file name holds (`...-nvrtc13.5-...`).
fn stem_nvrtc(name: &str) -> Option<(i32, i32)> {
    let rest = name.split("-nvrtc").nth(1)?;
    let version = rest.split('-').next()?;
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The kernel images of one unit and architecture in a cache folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Images {
    /// Made from this binary's sources and options, by the NVRTC versions
    /// given: entry stems (the files without their type), newest NVRTC
    /// first.
    pub matching: Vec<(PathBuf, (i32, i32))>,
    /// Made from other sources or options (another pqcprof): their stems.
    pub other: Vec<PathBuf>,
}

/// The images (machine code present) of `unit` for `arch` in `dir`,
/// whatever NVRTC made them: an entry matches when its name is the one
/// this binary gives its sources and options with the NVRTC version the
/// name holds.
pub fn images_in(dir: &Path, unit: Family, arch: &str) -> Images {
    let prefix = format!("native-{}-{arch}-nvrtc", unit_name(unit));
    let mut found = Images::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".cubin").map(str::to_string))
        .filter(|n| n.starts_with(&prefix))
        .collect();
    names.sort();
    for name in names {
        match stem_nvrtc(&name) {
            Some(v) if cache_file_stem(unit, arch, v) == name => {
                found.matching.push((dir.join(&name), v))
            }
            _ => found.other.push(dir.join(&name)),
        }
    }
    found.matching.sort_by_key(|m| std::cmp::Reverse(m.1));
    found
}

/// The CUDA driver API version of the driver this process opened, once a
/// GPU is opened (`note_driver_api`).
static DRIVER_API: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Notes the driver's CUDA API version: prebuilt images from an NVRTC
/// newer than the driver supports are passed over from then on (the driver
/// would refuse their machine code and PTX alike).
pub fn note_driver_api(api: u32) {
    let _ = DRIVER_API.set(api);
}

/// A whole entry for `unit` and `arch` already in `dir`: the one this
/// NVRTC (`nvrtc`) would write, else a prebuilt one of another NVRTC
/// (newest first) that the driver, once noted, can load.
pub fn lookup(
    dir: &Path,
    unit: Family,
    arch: &str,
    nvrtc: Option<(i32, i32)>,
) -> Option<(Compiled, Origin)> {
    if let Some(v) = nvrtc {
        let stem = dir.join(cache_file_stem(unit, arch, v));
        if let Some(hit) = read_cached(&stem, unit, arch) {
            return Some((hit, Origin::Cache(cache_file(&stem, ".cubin"))));
        }
    }
    images_in(dir, unit, arch)
        .matching
        .into_iter()
        .filter(|(_, v)| Some(*v) != nvrtc)
        .filter(|(_, v)| {
            crate::probe::gpu::nvrtc_driver_mismatch(Some(*v), DRIVER_API.get().copied()).is_none()
        })
        .find_map(|(stem, v)| {
            read_cached(&stem, unit, arch)
                .map(|hit| (hit, Origin::Prebuilt(cache_file(&stem, ".cubin"), v)))
        })
}

/// Says, before a compile, that the images of `unit` for `arch` in `dir`
/// are of other sources, when there are any (a folder prebuilt by another
/// pqcprof).
pub(super) fn say_why_compiling(dir: &Path, unit: Family, arch: &str) {
    let other = images_in(dir, unit, arch).other;
    if !other.is_empty() {
        log::info!(
            "compiling the {} kernels for {arch}: the {} image(s) in {} are of other kernel sources or options than this binary's ({})",
            unit_name(unit),
            other.len(),
            dir.display(),
            other
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Why no image of `unit` for `arch` in `dir` can be used here and none
/// can be compiled (no NVRTC): what was looked for, what was found.
pub fn no_image_reason(dir: Option<&Path>, unit: Family, arch: &str) -> String {
    let name = unit_name(unit);
    let Some(dir) = dir else {
        return format!(
            "no NVRTC to compile the {name} kernels for {arch}, and no kernel cache folder (set PQCPROF_PTX_CACHE to a folder of prebuilt images)"
        );
    };
    let images = images_in(dir, unit, arch);
    let found = if images.other.is_empty() {
        format!("no {name} image for {arch} there")
    } else {
        format!(
            "{} {name} image(s) for {arch} there are of other kernel sources or options than this binary's ({})",
            images.other.len(),
            images
                .other
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "no NVRTC to compile the {name} kernels for {arch} (install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc` and add its lib folder to LD_LIBRARY_PATH), and no prebuilt image of this binary's sources in {}: {found} (make them where NVRTC is: `pqcprof kernels --prebuild DIR --arch {arch}` with the same binary, and point PQCPROF_PTX_CACHE at DIR)",
        dir.display()
    )
}

/// The files of a cache entry, named by adding a type to `stem` (not
/// `Path::with_extension`: the stem holds a dot, in NVRTC's version).
pub(super) fn cache_file(stem: &Path, ext: &str) -> PathBuf {
    let mut name = stem.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

/// The PTX, machine-code and log files of a cache entry.
fn cache_paths(stem: &Path) -> (PathBuf, PathBuf, PathBuf) {
    (
        cache_file(stem, ".ptx"),
        cache_file(stem, ".cubin"),
        cache_file(stem, ".log"),
    )
}

/// Whether NVRTC's `log` holds ptxas's report up to the last entry point.
fn is_whole_log(log: &str) -> bool {
    log.contains(&format!("Compiling entry function '{LAST_ENTRY}'"))
}

/// Cached kernels, if all three files are present and plausibly whole.
pub(super) fn read_cached(stem: &Path, unit: Family, arch: &str) -> Option<Compiled> {
    let (ptx_path, cubin_path, log_path) = cache_paths(stem);
    let ptx = std::fs::read_to_string(ptx_path).ok()?;
    let cubin = std::fs::read(cubin_path).ok()?;
    let log = std::fs::read_to_string(log_path).ok()?;
    let ok = is_whole_ptx(&ptx, arch)
        && is_whole_cubin(&cubin)
        && cubin_arch(&cubin).as_deref() == Some(arch)
        && is_whole_log(&log);
    ok.then(|| Compiled {
        unit,
        arch: arch.into(),
        ptx,
        cubin,
        log,
    })
}

/// How long a process waits for another one compiling the same kernels
/// before it compiles them itself (a compile takes one to two minutes; a
/// process that died let go of the lock already).
const CACHE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// An exclusive lock on a cache entry (`flock` on `<stem>.lock`), held
/// while it is compiled and written; let go when dropped, or by the kernel
/// when the process ends however it ends.
struct CacheLock(std::fs::File);

impl CacheLock {
    /// Takes the lock of `stem`, waiting up to `wait` for another holder
    /// (saying so once). `None` when the lock file cannot be made (a
    /// read-only cache) or the wait ran out: the caller compiles unlocked.
    fn take(stem: &Path, wait: std::time::Duration) -> Option<CacheLock> {
        use std::os::fd::AsRawFd;
        let path = cache_file(stem, ".lock");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok()?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok()?;
        let t0 = std::time::Instant::now();
        let mut said = false;
        loop {
            // SAFETY: a plain system call on a descriptor `file` owns.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Some(CacheLock(file));
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK)
                && err.raw_os_error() != Some(libc::EINTR)
            {
                return None;
            }
            if t0.elapsed() >= wait {
                log::warn!(
                    "{} is still locked after {:.0?}; compiling the kernels without waiting longer",
                    path.display(),
                    wait
                );
                return None;
            }
            if !said {
                log::info!(
                    "another pqcprof is compiling the same kernels ({}); waiting for it",
                    path.display()
                );
                said = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for CacheLock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as in `take`; closing the file would let go as well.
        let _ = unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Like `compile`, but reuses what the same NVRTC compiled earlier from the
/// same source and options (in `cache_dir`).
pub fn compile_cached(unit: Family, arch: &str) -> Result<(Compiled, Origin), CompileFailure> {
    compile_cached_in(cache_dir().as_deref(), unit, arch)
}

/// `compile_cached` with the cache in `dir` (none: no cache).
pub fn compile_cached_in(
    dir: Option<&Path>,
    unit: Family,
    arch: &str,
) -> Result<(Compiled, Origin), CompileFailure> {
    let version = crate::probe::gpu::nvrtc_version();
    if let Some(hit) = dir.and_then(|d| lookup(d, unit, arch, version)) {
        return Ok(hit);
    }
    let Some(version) = version else {
        return Err(CompileFailure {
            unit,
            arch: arch.into(),
            message: no_image_reason(dir, unit, arch),
            log: String::new(),
        });
    };
    let Some(d) = dir else {
        return compile(unit, arch).map(|c| (c, Origin::Compiled));
    };
    say_why_compiling(d, unit, arch);
    let stem = d.join(cache_file_stem(unit, arch, version));
    cached_or(&stem, unit, arch, CACHE_LOCK_WAIT, || compile(unit, arch))
}

/// What compiling (or reading) one unit gave, and how long it took.
pub struct UnitBuild {
    /// The kernels.
    pub compiled: Compiled,
    /// Compiled now, or read from the cache.
    pub origin: Origin,
    /// Seconds it took.
    pub seconds: f64,
}

/// `compile_cached` for each of `units`, each in its own thread (NVRTC
/// compiles separate programs concurrently); in the order given.
pub fn compile_units_cached(
    units: &[Family],
    arch: &str,
) -> Vec<Result<UnitBuild, CompileFailure>> {
    compile_units_cached_in(cache_dir().as_deref(), units, arch)
}

/// `compile_units_cached` with the cache in `dir` (none: no cache).
pub fn compile_units_cached_in(
    dir: Option<&Path>,
    units: &[Family],
    arch: &str,
) -> Vec<Result<UnitBuild, CompileFailure>> {
    std::thread::scope(|s| {
        let jobs: Vec<_> = units
            .iter()
            .map(|&unit| {
                s.spawn(move || {
                    let t0 = std::time::Instant::now();
                    compile_cached_in(dir, unit, arch).map(|(compiled, origin)| UnitBuild {
                        compiled,
                        origin,
                        seconds: t0.elapsed().as_secs_f64(),
                    })
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| j.join().expect("an NVRTC thread panicked"))
            .collect()
    })
}

/// The entry at `stem` if it is whole, else what `make` returns, written
/// there. The lock is taken before the second look, so of processes that
/// start together one runs `make` and the others read its files.
fn cached_or(
    stem: &Path,
    unit: Family,
    arch: &str,
    wait: std::time::Duration,
    make: impl FnOnce() -> Result<Compiled, CompileFailure>,
) -> Result<(Compiled, Origin), CompileFailure> {
    let (ptx_path, cubin_path, log_path) = cache_paths(stem);
    if let Some(hit) = read_cached(stem, unit, arch) {
        return Ok((hit, Origin::Cache(cubin_path)));
    }
    let _lock = CacheLock::take(stem, wait);
    if let Some(hit) = read_cached(stem, unit, arch) {
        return Ok((hit, Origin::Cache(cubin_path)));
    }
    let compiled = make()?;
    // A cache that cannot be written only costs the next run a compile.
    // The machine code goes last: an entry is whole only with all three.
    let _ = crate::write::output::write_atomic(&log_path, compiled.log.as_bytes())
        .and_then(|_| crate::write::output::write_atomic(&ptx_path, compiled.ptx.as_bytes()))
        .and_then(|_| crate::write::output::write_atomic(&cubin_path, &compiled.cubin));
    Ok((compiled, Origin::Compiled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cache_names_change_with_arch_and_nvrtc_and_are_stable() {
        let a = cache_file_stem(Family::MlDsa, "sm_90", (13, 0));
        assert_eq!(a, cache_file_stem(Family::MlDsa, "sm_90", (13, 0)));
        assert_ne!(a, cache_file_stem(Family::MlDsa, "sm_80", (13, 0)));
        assert_ne!(a, cache_file_stem(Family::MlDsa, "sm_90", (12, 8)));
        assert_ne!(a, cache_file_stem(Family::MlKem, "sm_90", (13, 0)));
        assert!(a.starts_with("native-mldsa-sm_90-nvrtc13.0-"));
        // The dot in the version must survive adding the file types.
        let (ptx, cubin, log) = cache_paths(Path::new(&a));
        assert_eq!(ptx.to_str().unwrap(), format!("{a}.ptx"));
        assert_eq!(cubin.to_str().unwrap(), format!("{a}.cubin"));
        assert_eq!(log.to_str().unwrap(), format!("{a}.log"));
        assert_ne!(fnv1a64(&[b"ab", b"c"]), fnv1a64(&[b"a", b"bc"]));
    }

    /// A minimal ELF64 image: header, `body`, then `shnum` section headers
    /// of 64 bytes each.
    fn fake_cubin(body: &[u8], shnum: u16) -> Vec<u8> {
        let mut v = vec![0u8; 64];
        v[..6].copy_from_slice(b"\x7fELF\x02\x01");
        // CUDA ABI version 8, sm_90 (as ptxas 13 writes them).
        v[8] = 8;
        v[0x30..0x34].copy_from_slice(&0x0600_5a04u32.to_le_bytes());
        v.extend_from_slice(body);
        let shoff = v.len() as u64;
        v[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        v[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        v[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        v.extend(std::iter::repeat_n(0u8, 64 * shnum as usize));
        v
    }

    #[test]
    fn cubin_arch_reads_both_abi_versions() {
        let mut c = fake_cubin(b"pqcprof_hold", 1);
        assert_eq!(cubin_arch(&c).as_deref(), Some("sm_90"));
        c[0x30..0x34].copy_from_slice(&0x0600_4b04u32.to_le_bytes());
        assert_eq!(cubin_arch(&c).as_deref(), Some("sm_75"));
        // ABI 7 and older: the SM number is the low byte.
        c[8] = 7;
        c[0x30..0x34].copy_from_slice(&0x0050_0550u32.to_le_bytes());
        assert_eq!(cubin_arch(&c).as_deref(), Some("sm_80"));
        assert_eq!(cubin_arch(&c[..0x31]), None);
    }

    #[test]
    fn only_whole_cubins_pass() {
        let good = fake_cubin(b"..pqcprof_hold..", 3);
        assert!(is_whole_cubin(&good));
        assert!(!is_whole_cubin(&good[..good.len() - 1]), "truncated");
        assert!(
            !is_whole_cubin(&fake_cubin(b"..mldsa87_verify..", 3)),
            "last entry missing"
        );
        let mut big_endian = good.clone();
        big_endian[5] = 2;
        assert!(!is_whole_cubin(&big_endian));
        assert!(!is_whole_cubin(b"\x7fELF"), "header cut short");
        assert!(!is_whole_cubin(&[]));
    }

    #[test]
    fn only_whole_cached_kernels_are_used() {
        let d = tempfile::tempdir().unwrap();
        let stem = d.path().join("native-sm_90-nvrtc13.0-x");
        let (ptx_path, cubin_path, log_path) = cache_paths(&stem);
        let ptx = ".target sm_90\n.entry pqcprof_hold(\n{\n}\n";
        std::fs::write(&ptx_path, ptx).unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_90").is_none(),
            "no machine code yet"
        );
        std::fs::write(&cubin_path, fake_cubin(b"pqcprof_hold", 2)).unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_90").is_none(),
            "no log yet"
        );
        std::fs::write(
            &log_path,
            "ptxas info    : Compiling entry function 'mldsa87_verify' for 'sm_90'\n",
        )
        .unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_90").is_none(),
            "log cut short"
        );
        std::fs::write(&log_path, LOG).unwrap();
        let hit = read_cached(&stem, Family::MlDsa, "sm_90").expect("all three files whole");
        assert_eq!((hit.ptx.as_str(), hit.arch.as_str()), (ptx, "sm_90"));
        assert_eq!(hit.log, LOG);
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_80").is_none(),
            "wrong target"
        );
        let other = ".target sm_80\n.entry pqcprof_hold(\n{\n}\n";
        std::fs::write(&ptx_path, other).unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_80").is_none(),
            "machine code for sm_90"
        );
        std::fs::write(&ptx_path, ptx).unwrap();
        std::fs::write(&ptx_path, &ptx[..ptx.len() - 2]).unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_90").is_none(),
            "truncated PTX"
        );
        std::fs::write(&ptx_path, ptx).unwrap();
        let cut = fake_cubin(b"pqcprof_hold", 2);
        std::fs::write(&cubin_path, &cut[..cut.len() - 10]).unwrap();
        assert!(
            read_cached(&stem, Family::MlDsa, "sm_90").is_none(),
            "truncated machine code"
        );
    }

    const LOG: &str = "ptxas info    : Compiling entry function 'pqcprof_hold' for 'sm_90'\n";

    /// What a compile of `arch` might return, standing in for NVRTC.
    fn fake_compiled(arch: &str) -> Compiled {
        Compiled {
            unit: Family::MlDsa,
            arch: arch.into(),
            ptx: format!(".target {arch}\n.entry pqcprof_hold(\n{{\n}}\n"),
            cubin: fake_cubin(b"pqcprof_hold", 2),
            log: LOG.into(),
        }
    }

    /// Writes `c` as the entry `stem` of `dir`, as a compile would.
    fn write_entry(dir: &Path, stem: &str, c: &Compiled) {
        let (ptx, cubin, log) = cache_paths(&dir.join(stem));
        std::fs::write(ptx, &c.ptx).unwrap();
        std::fs::write(cubin, &c.cubin).unwrap();
        std::fs::write(log, &c.log).unwrap();
    }

    #[test]
    fn images_of_this_binary_are_found_whatever_nvrtc_made_them() {
        let d = tempfile::tempdir().unwrap();
        let c = fake_compiled("sm_90");
        let old = cache_file_stem(Family::MlDsa, "sm_90", (12, 8));
        let new = cache_file_stem(Family::MlDsa, "sm_90", (13, 0));
        // Another pqcprof's sources: same unit, architecture and NVRTC,
        // another hash.
        let foreign = format!("native-mldsa-sm_90-nvrtc13.0-{}", "0".repeat(16));
        assert_ne!(foreign, new);
        for stem in [&old, &new, &foreign] {
            write_entry(d.path(), stem, &c);
        }
        // Another architecture and unit are not this one's.
        write_entry(
            d.path(),
            &cache_file_stem(Family::MlKem, "sm_90", (13, 0)),
            &c,
        );
        let found = images_in(d.path(), Family::MlDsa, "sm_90");
        assert_eq!(
            found.matching,
            vec![
                (d.path().join(&new), (13, 0)),
                (d.path().join(&old), (12, 8))
            ]
        );
        assert_eq!(found.other, vec![d.path().join(&foreign)]);
        assert_eq!(
            images_in(d.path(), Family::MlDsa, "sm_80"),
            Images::default()
        );
        assert_eq!(stem_nvrtc(&old), Some((12, 8)));
        assert_eq!(stem_nvrtc("native-mldsa-sm_90-x"), None);
        // No NVRTC here: the newest one's image, named as prebuilt.
        let (_, origin) = lookup(d.path(), Family::MlDsa, "sm_90", None).unwrap();
        let cubin = |stem: &str| d.path().join(format!("{stem}.cubin"));
        assert_eq!(origin, Origin::Prebuilt(cubin(&new), (13, 0)));
        // This NVRTC's own entry first; then another's.
        let (_, origin) = lookup(d.path(), Family::MlDsa, "sm_90", Some((12, 8))).unwrap();
        assert_eq!(origin, Origin::Cache(cubin(&old)));
        let (_, origin) = lookup(d.path(), Family::MlDsa, "sm_90", Some((13, 5))).unwrap();
        assert_eq!(origin, Origin::Prebuilt(cubin(&new), (13, 0)));
        // An entry cut short is passed over for a whole one.
        std::fs::write(cubin(&new), b"\x7fELF").unwrap();
        let (_, origin) = lookup(d.path(), Family::MlDsa, "sm_90", None).unwrap();
        assert_eq!(origin, Origin::Prebuilt(cubin(&old), (12, 8)));
        // What is missing is said, with what was found instead.
        let why = no_image_reason(Some(d.path()), Family::MlDsa, "sm_90");
        assert!(why.contains("no NVRTC"), "{why}");
        assert!(why.contains(&foreign), "{why}");
        let empty = tempfile::tempdir().unwrap();
        let why = no_image_reason(Some(empty.path()), Family::MlKem, "sm_90");
        assert!(why.contains("no mlkem image for sm_90 there"), "{why}");
    }

    #[test]
    fn processes_sharing_a_cache_compile_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let d = tempfile::tempdir().unwrap();
        let stem = d.path().join("native-sm_90-nvrtc13.0-y");
        let makes = AtomicUsize::new(0);
        // Four at once (flock locks between open files, so threads stand in
        // for processes): one compiles, slowly; the others wait and read.
        let origins: Vec<Origin> = std::thread::scope(|s| {
            let jobs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        cached_or(
                            &stem,
                            Family::MlDsa,
                            "sm_90",
                            Duration::from_secs(60),
                            || {
                                makes.fetch_add(1, Ordering::SeqCst);
                                std::thread::sleep(Duration::from_millis(300));
                                Ok(fake_compiled("sm_90"))
                            },
                        )
                        .unwrap()
                        .1
                    })
                })
                .collect();
            jobs.into_iter().map(|j| j.join().unwrap()).collect()
        });
        assert_eq!(makes.load(Ordering::SeqCst), 1, "{origins:?}");
        assert_eq!(
            origins.iter().filter(|o| **o == Origin::Compiled).count(),
            1,
            "{origins:?}"
        );
        let hit = read_cached(&stem, Family::MlDsa, "sm_90").expect("written whole");
        assert_eq!(hit.log, LOG);
    }

    #[test]
    fn a_lock_held_too_long_is_not_waited_for_forever() {
        let d = tempfile::tempdir().unwrap();
        let stem = d.path().join("native-sm_90-nvrtc13.0-z");
        let held = CacheLock::take(&stem, Duration::ZERO).expect("free");
        let t0 = std::time::Instant::now();
        let (_, origin) = cached_or(
            &stem,
            Family::MlDsa,
            "sm_90",
            Duration::from_millis(300),
            || Ok(fake_compiled("sm_90")),
        )
        .unwrap();
        assert_eq!(origin, Origin::Compiled);
        let waited = t0.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert!(
            CacheLock::take(&stem, Duration::ZERO).is_none(),
            "still held"
        );
        drop(held);
        assert!(CacheLock::take(&stem, Duration::ZERO).is_some(), "let go");
        // A failed compile writes nothing.
        let other = d.path().join("native-sm_80-nvrtc13.0-z");
        let failed = cached_or(&other, Family::MlDsa, "sm_80", Duration::ZERO, || {
            Err(CompileFailure {
                unit: Family::MlDsa,
                arch: "sm_80".into(),
                message: "boom".into(),
                log: String::new(),
            })
        });
        assert!(failed.is_err());
        assert!(read_cached(&other, Family::MlDsa, "sm_80").is_none());
    }
}
