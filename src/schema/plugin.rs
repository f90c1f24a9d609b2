//! What a record says of the plugin that made it (`--backend plugin:PATH`):
//! the plugin's own name and version, the ABI it was built against, the
//! library file's SHA-256 and where its buffers live.

use crate::core::catalog::{Algorithm, Operation};
use serde::{Deserialize, Serialize};

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// Where a plugin's buffers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Memory {
    /// Host memory, the plugin called on CPU threads.
    Host,
    /// CUDA device memory, the work queued on a stream.
    Device,
}

impl Memory {
    /// `host` or `device`, as in the run file.
    pub fn name(self) -> &'static str {
        match self {
            Memory::Host => "host",
            Memory::Device => "device",
        }
    }
}

/// The plugin behind a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// The plugin's own name (its descriptor's `name`).
    pub name: String,
    /// The plugin's version string.
    pub version: String,
    /// The ABI (major) version its descriptor declares.
    pub abi_version: u32,
    /// The ABI minor version (1: ABI 1.1, whose descriptor may say which
    /// operations draw their own randomness); 0 for ABI 1.0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub abi_minor: u32,
    /// ABI 1.1: the operations that draw their own randomness ("ML-KEM
    /// keygen", "ML-KEM encaps", "ML-DSA keygen", "ML-DSA sign"), whose
    /// outputs the gate judges by round trip instead of byte equality;
    /// empty: every operation takes its randomness as input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_randomness: Vec<String>,
    /// SHA-256 of the library file loaded, hex.
    pub sha256: String,
    /// Where its buffers live.
    pub memory: Memory,
    /// Whether it may be called on several threads at once.
    pub thread_safe: bool,
    /// The library file, as given.
    pub path: String,
}

impl PluginInfo {
    /// `1` or `1.1`: the ABI version as the header names it.
    pub fn abi(&self) -> String {
        if self.abi_minor == 0 {
            self.abi_version.to_string()
        } else {
            format!("{}.{}", self.abi_version, self.abi_minor)
        }
    }

    /// Whether `op` of `alg` draws its own randomness (ABI 1.1).
    pub fn draws_own(&self, alg: Algorithm, op: Operation) -> bool {
        let name = format!("{} {}", alg.family().name(), op.cli_name());
        self.own_randomness.contains(&name)
    }

    /// "draws its own randomness for ML-KEM keygen, ML-KEM encaps", or
    /// None when it draws none.
    pub fn own_randomness_text(&self) -> Option<String> {
        (!self.own_randomness.is_empty()).then(|| {
            format!(
                "draws its own randomness for {} (ABI 1.1: judged by round trip, not byte for byte)",
                self.own_randomness.join(", ")
            )
        })
    }
}
