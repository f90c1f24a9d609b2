//! The run file as a whole: metadata, the settings, every record, the
//! aggregates over devices and ranks, the cluster a merged file came from,
//! and the sweep's own context (symmetric primitives, hybrid overheads).

use crate::core::catalog::Operation;
use crate::schema::metadata::Metadata;
use crate::schema::record::{Record, RunConfig, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};

/// A whole run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// Always `pqcprof-run`.
    pub format: String,
    /// `SCHEMA_VERSION` of the writer.
    pub schema_version: u32,
    /// The machine and the software measured.
    pub metadata: Metadata,
    /// The settings.
    pub config: RunConfig,
    /// True while records may still be added, false once the run ended.
    pub complete: bool,
    /// True when the run was stopped by Ctrl-C: what is here is finished work.
    pub interrupted: bool,
    /// One entry per measured (backend, threads, algorithm, operation, mode).
    pub records: Vec<Record>,
    /// Symmetric primitives for context (hashes, AEADs), MB/s.
    #[serde(default)]
    pub symmetric: Vec<SymmetricRecord>,
    /// Totals over several devices or ranks that measured the same
    /// (backend, algorithm, operation, batch): see `crate::analyse::aggregate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<crate::schema::aggregate::Aggregate>,
    /// A run file merged from the ranks of a cluster job (`pqcprof merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::schema::cluster::Cluster>,
    /// The sweep's own timing settings and wall time (sweep run files only;
    /// `config.runs`/`warmup_runs`/`batch` do not apply to a sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepInfo>,
    /// Per hybrid (composite or hybrid KEM group) and operation, what it
    /// costs over its pure PQC component measured in the same file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hybrid_overhead: Vec<HybridOverhead>,
    /// The floor of the measurement per backend and thread count: the
    /// median over its records of their empty windows (`Record::floor`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floor: Vec<Floor>,
    /// What batched requests waited (`pqcprof offload` run files only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<crate::schema::offload::OffloadRun>,
    /// The known-answer vectors run on each measured implementation's code
    /// when the run began (absent in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<crate::schema::vectors::BackendVectors>,
}

/// The floor of one backend at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// Backend name.
    pub backend: String,
    /// Threads its batches ran on.
    pub threads: usize,
    /// Median of its records' empty windows, seconds.
    pub seconds: f64,
    /// Records that measured one.
    pub records: usize,
    /// Empty windows timed in all.
    pub samples: usize,
    /// GPU: the median over its records of the empty kernel's launch rate,
    /// launches per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches_per_s: Option<f64>,
    /// What an empty window holds.
    pub method: String,
}

/// How a sweep timed each operation, and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepInfo {
    /// Warm-up before each operation's window, seconds.
    pub warmup_seconds: f64,
    /// Timed window per operation, seconds.
    pub window_seconds: f64,
    /// Wall time of the whole sweep so far (final once `complete`),
    /// seconds: every algorithm, gate and symmetric primitive.
    pub wall_seconds: f64,
    /// The algorithms whose CSV rows carry pqc-sig-bench-c's spelling
    /// instead of the record's name: record name to CSV name
    /// (`ECDSA-P256` to `P-256`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub csv_names: std::collections::BTreeMap<String, String>,
}

/// The extra cost of a hybrid over its pure PQC component, one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HybridOverhead {
    /// The hybrid, e.g. `ML-KEM-768+X25519`.
    pub hybrid: String,
    /// Its provider.
    pub provider: String,
    /// The pure PQC component, e.g. `ML-KEM-768`.
    pub component: String,
    /// The component's provider (liboqs for pqcprof's composites).
    pub component_provider: String,
    /// Operation.
    pub operation: Operation,
    /// Hybrid and component, microseconds per operation.
    pub hybrid_us: f64,
    /// The pure component, microseconds per operation.
    pub component_us: f64,
    /// `hybrid_us - component_us`.
    pub extra_us: f64,
    /// Extra bytes on the wire: public key plus ciphertext or signature;
    /// `null` when either side's are not known.
    #[serde(default)]
    pub extra_wire_bytes: Option<i64>,
    /// Extra secret-key bytes; `null` when either side's secret key size
    /// is not known (a provider that does not export it).
    #[serde(default)]
    pub extra_secret_key_bytes: Option<i64>,
}

/// Throughput of one symmetric primitive at one input size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymmetricRecord {
    /// e.g. `SHA-256`, `AES-256-GCM`.
    pub algorithm: String,
    /// `hash` or `aead`.
    pub kind: String,
    /// Library, e.g. `openssl`.
    pub provider: String,
    /// Input size per call, bytes.
    pub chunk_bytes: usize,
    /// Megabytes (10^6 bytes) per second.
    pub mb_per_sec: f64,
    /// Calls made in the window.
    pub iterations: u64,
    /// Length of the timed window, seconds.
    pub seconds: f64,
}

impl RunFile {
    /// An empty run file.
    pub fn new(metadata: Metadata, config: RunConfig) -> Self {
        RunFile {
            format: "pqcprof-run".into(),
            schema_version: SCHEMA_VERSION,
            metadata,
            config,
            complete: false,
            interrupted: false,
            records: vec![],
            symmetric: vec![],
            aggregates: vec![],
            cluster: None,
            sweep: None,
            hybrid_overhead: vec![],
            floor: vec![],
            offload: None,
            vectors: vec![],
        }
    }
}
