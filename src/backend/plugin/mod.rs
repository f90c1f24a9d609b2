//! Plugins: a user's own batched ML-KEM / ML-DSA in a shared library that
//! exports `pqcprof_plugin_v1` (the ABI of `include/pqcprof_plugin.h`),
//! gated, timed and reported like the built-in backends.
//!
//! [`Plugin::load`] opens the library, reads its descriptor and refuses it,
//! naming the path, what was checked and the value (expected and got), on a
//! missing symbol, another ABI version, an unknown algorithm name or a size
//! that disagrees with FIPS 203/204. [`Plugin`]'s safe calls check every
//! buffer against the standard's size times the batch before the plugin sees
//! it. Measurement runs in a worker process ([`isolated`]) so that a plugin
//! that crashes or hangs costs one failed record, not the run.

pub mod batch;
pub mod device;
pub mod ffi;
pub mod isolated;

use crate::core::catalog::{Algorithm, Operation};
pub use crate::schema::plugin::{Memory, PluginInfo};
use anyhow::{anyhow, bail, ensure, Context};
pub use ffi::{op_bit, own_bit, Offer, Place};
use ffi::{text, Call, Descriptor};
use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The ABI (major) version this build speaks (`PQCPROF_PLUGIN_ABI_VERSION`).
pub const ABI_VERSION: u32 = 1;
/// The highest minor version of it this build reads
/// (`PQCPROF_PLUGIN_ABI_MINOR`): 1.1, whose descriptor may say which
/// operations draw their own randomness.
pub const ABI_MINOR: u32 = 1;
/// `abi_version` of an ABI 1.1 descriptor (`PQCPROF_PLUGIN_ABI_VERSION_1_1`):
/// the minor version in the high 16 bits.
pub const ABI_VERSION_1_1: u32 = (ABI_MINOR << 16) | ABI_VERSION;
/// The symbol every plugin exports.
pub const ENTRY: &str = "pqcprof_plugin_v1";
/// How a plugin backend is named on the command line: `plugin:PATH`.
pub const PREFIX: &str = "plugin:";

/// A loaded, checked plugin.
pub struct Plugin {
    /// What records say of it.
    pub info: PluginInfo,
    /// The sets it implements.
    pub offers: Vec<Offer>,
    desc: &'static Descriptor,
    // Declared last: dropped after everything that points into it.
    _lib: libloading::Library,
}

// SAFETY: the descriptor is constant data and function pointers; whether the
// functions may run on several threads at once is what `thread_safe` says,
// and the batch code calls them from one thread unless it says so.
unsafe impl Send for Plugin {}
unsafe impl Sync for Plugin {}

/// Refuses what cannot be a plugin library before loading it, naming
/// what it is: nothing at all, a folder, a FIFO, a device.
fn not_a_library(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("no such file (a plugin is a shared library: --backend plugin:PATH)")
        }
        Err(e) => bail!("cannot read it: {e}"),
        Ok(m) if m.is_file() => return Ok(()),
        Ok(m) if m.is_dir() => "a folder",
        Ok(m) if m.file_type().is_fifo() => "a FIFO (named pipe)",
        Ok(m) if m.file_type().is_socket() => "a socket",
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_block_device() => "a device",
        Ok(_) => "not a regular file",
    };
    bail!("{kind}, not a shared library (a plugin is a shared library: --backend plugin:PATH)")
}

/// The SHA-256 of the file at `path`, hex.
fn file_sha256(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let digest = openssl::sha::sha256(&bytes);
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
}

impl Plugin {
    /// Opens the library at `path` and checks its descriptor.
    pub fn load(path: &Path) -> anyhow::Result<Plugin> {
        Self::open(path).with_context(|| format!("plugin {}", path.display()))
    }

    fn open(path: &Path) -> anyhow::Result<Plugin> {
        not_a_library(path)?;
        let sha256 = file_sha256(path)?;
        // SAFETY: loading runs the library's initialisers; choosing to load
        // it is the user's (--backend plugin:PATH).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            // libloading says only "dlopen failed"; the loader's reason is
            // its source.
            match std::error::Error::source(&e) {
                Some(why) => anyhow!("cannot load it: {e}: {why}"),
                None => anyhow!("cannot load it: {e}"),
            }
        })?;
        // SAFETY: the ABI fixes the entry's type: no arguments, a pointer to
        // a descriptor.
        let entry: libloading::Symbol<unsafe extern "C" fn() -> *const Descriptor> =
            unsafe { lib.get(ENTRY.as_bytes()) }.map_err(|e| {
                anyhow!("missing symbol {ENTRY}: every plugin exports it (include/pqcprof_plugin.h); the loader said: {e}")
            })?;
        // SAFETY: the entry takes nothing and returns a pointer that stays
        // valid while the library is loaded, which `_lib` keeps it.
        let desc = unsafe { entry() };
        if desc.is_null() {
            bail!("{ENTRY} returned NULL, not a descriptor");
        }
        let raw: *const Descriptor = desc;
        // SAFETY: non-null; the ABI says it points to a constant descriptor
        // valid while the library stays loaded (as long as this Plugin).
        let desc: &'static Descriptor = unsafe { &*desc };
        let (major, minor) = (desc.abi_version & 0xffff, desc.abi_version >> 16);
        if major != ABI_VERSION {
            bail!(
                "ABI version: expected {ABI_VERSION}, got {} (rebuild it against this pqcprof's include/pqcprof_plugin.h)",
                desc.abi_version
            );
        }
        if minor > ABI_MINOR {
            bail!(
                "ABI version: expected 1.0 ({ABI_VERSION}) or 1.{ABI_MINOR} ({:#010x}), got 1.{minor} ({:#010x}) (rebuild it against this pqcprof's include/pqcprof_plugin.h)",
                ABI_VERSION_1_1,
                desc.abi_version
            );
        }
        let name = text(desc.name, "name")?;
        check_name(&name)?;
        let version = text(desc.version, "version")?;
        let memory = match desc.memory {
            0 => Memory::Host,
            1 => Memory::Device,
            m => bail!("memory kind: expected 0 (host) or 1 (device), got {m}"),
        };
        let offers = ffi::offers(desc)?;
        let own_randomness = if minor >= 1 {
            // SAFETY: a descriptor declaring ABI 1.1 is a 1.1 descriptor,
            // the 1.0 fields followed by the ones 1.1 adds.
            let d11 = unsafe { &*raw.cast::<ffi::Descriptor11>() };
            ffi::own_randomness(d11.own_randomness, &offers)?
        } else {
            vec![]
        };
        Ok(Plugin {
            info: PluginInfo {
                name,
                version,
                abi_version: major,
                abi_minor: minor,
                own_randomness,
                sha256,
                memory,
                thread_safe: desc.thread_safe != 0,
                path: path.display().to_string(),
            },
            offers,
            desc,
            _lib: lib,
        })
    }

    /// Whether it implements `op` of `alg`.
    pub fn supports(&self, alg: Algorithm, op: Operation) -> bool {
        ffi::offered(&self.offers, alg, op)
    }

    /// The backend name of records: `plugin-NAME` (safe in file names).
    pub fn backend_name(&self) -> String {
        backend_name(&self.info.name)
    }

    /// Calls `op` of `alg` over `batch` items with `bufs` (each checked
    /// against its FIPS size times the batch first).
    pub fn call<I: ffi::Region, O: ffi::Region>(
        &self,
        alg: Algorithm,
        op: Operation,
        batch: usize,
        bufs: ffi::Buffers<I, O>,
        place: Place,
    ) -> anyhow::Result<()> {
        if !self.supports(alg, op) {
            bail!("plugin {} does not implement {alg} {op}", self.info.name);
        }
        let on_device = matches!(place, Place::Device { .. });
        ensure!(
            on_device == (self.info.memory == Memory::Device),
            "plugin {} takes {} memory; pqcprof was about to hand it {} buffers",
            self.info.name,
            self.info.memory.name(),
            if on_device { "device" } else { "host" }
        );
        bufs.check_sizes(alg, op, batch)
            .with_context(|| format!("plugin {} {alg} {op}", self.info.name))?;
        let mut msg = [0u8; 512];
        let call = Call::new(alg, place, &mut msg);
        // SAFETY: every buffer has the length passed beside it, checked
        // against the standard above; the function pointer is the one the
        // descriptor gives for this operation (non-null: `supports`).
        let rc = unsafe { bufs.invoke(self.desc, &call, batch) }?;
        if rc != 0 {
            let said = CStr::from_bytes_until_nul(&msg)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            bail!(
                "plugin {} {alg} {op} returned {rc}{}",
                self.info.name,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            );
        }
        Ok(())
    }
}

/// A plugin name is safe in files, CSV cells and command lines.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !ok {
        bail!("name: expected 1 to 64 letters, digits, '-', '_' or '.', got {name:?}");
    }
    Ok(())
}

/// The backend name of a plugin's records: `plugin-NAME`.
pub fn backend_name(plugin: &str) -> String {
    format!("plugin-{plugin}")
}

/// The library paths of `plugin:PATH` backend names.
pub fn paths(backends: &[String]) -> Vec<PathBuf> {
    backends
        .iter()
        .filter_map(|b| b.strip_prefix(PREFIX))
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("rustcrypto-0.3").is_ok());
        assert!(check_name("a,b")
            .unwrap_err()
            .to_string()
            .contains("\"a,b\""));
        assert!(check_name("").is_err());
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = Plugin::load(Path::new("/nonexistent/p.so")).err().unwrap();
        assert!(format!("{e:#}").contains("/nonexistent/p.so"));
    }
}
