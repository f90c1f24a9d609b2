//! What a record says of the plugin that made it (`--backend plugin:PATH`):
//! the plugin's own name and version, the ABI it was built against, the
//! library file's SHA-256 and where its buffers live.

use serde::{Deserialize, Serialize};

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
    /// The ABI version its descriptor declares.
    pub abi_version: u32,
    /// SHA-256 of the library file loaded, hex.
    pub sha256: String,
    /// Where its buffers live.
    pub memory: Memory,
    /// Whether it may be called on several threads at once.
    pub thread_safe: bool,
    /// The library file, as given.
    pub path: String,
}
