//! Shared libraries opened at run time (the CUDA driver, NVRTC, NVML),
//! checked before any of their functions is called.
//!
//! The crates that wrap them (cudarc, nvml-wrapper) look each function up
//! on its first call and panic when it is missing, so a partial or
//! mismatched library (an old driver, a stub, a broken install) would end
//! the process in the middle of a command. Resolving the whole list of
//! functions pqcprof calls, first, turns that into a message.

use std::ffi::OsStr;

/// The first of `candidates` that loads, as the wrapping crate would pick
/// it: `Ok(name)` when it exports every one of `symbols`; `Err` naming the
/// library and what it lacks, or `Ok(None)` when none loads at all.
pub fn first_complete(candidates: &[String], symbols: &[&str]) -> Result<Option<String>, String> {
    for name in candidates {
        // SAFETY: loading runs the library's initialisers, as the wrapping
        // crate's own loading would; no function of it is called here.
        let Ok(lib) = (unsafe { libloading::Library::new(OsStr::new(name)) }) else {
            continue;
        };
        let missing: Vec<&str> = symbols
            .iter()
            .copied()
            .filter(|s| {
                let mut sym = s.as_bytes().to_vec();
                sym.push(0);
                // SAFETY: the symbol is only looked up, never called.
                unsafe { lib.get::<unsafe extern "C" fn()>(sym.as_slice()) }.is_err()
            })
            .collect();
        if missing.is_empty() {
            return Ok(Some(name.clone()));
        }
        return Err(format!(
            "{name} lacks {} of the {} functions pqcprof calls ({}): it is partial or from another version; install a complete one",
            missing.len(),
            symbols.len(),
            crate::core::listing::few(
                &format!("the functions {name} lacks"),
                &missing,
                crate::core::listing::SHOWN,
                ", "
            )
        ));
    }
    Ok(None)
}
