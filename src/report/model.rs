//! The records of every loaded file as one flat list, each with where it
//! came from, and the classifications the report groups by.

use crate::core::catalog::{Kind, Operation};
use crate::report::families;
use crate::report::families::Class;
use crate::schema::device::DeviceKind;
use crate::schema::load::LoadedRun;
use crate::schema::record::{Mode, Record, Status};
use crate::schema::run_file::SymmetricRecord;
use std::collections::BTreeSet;
use std::fmt;

/// Where a figure came from: file label and index in its `records` (or
/// `symmetric`) array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SrcRef {
    /// Index into the loaded files (0-based; shown as `F1`, `F2`, ...).
    pub file: usize,
    /// Index in the file's array.
    pub index: usize,
}

impl fmt::Display for SrcRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "F{}#{}", self.file + 1, self.index)
    }
}

/// Sources as written in the report (`F1#0 F1#3`), joined by `sep`.
pub fn src_list(src: impl IntoIterator<Item = SrcRef>, sep: &str) -> String {
    src.into_iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

/// Families whose security rests on factoring or discrete logarithms.
const CLASSICAL_MARKERS: [&str; 9] = [
    "ECDH", "ECDSA", "EDDSA", "ED25519", "ED448", "X25519", "X448", "RSA", "FFDH",
];
/// Markers of post-quantum components inside a hybrid name.
const PQC_MARKERS: [&str; 8] = [
    "MLKEM",
    "ML-KEM",
    "MLDSA",
    "ML-DSA",
    "KYBER",
    "DILITHIUM",
    "FALCON",
    "SLH",
];

/// Classifies an algorithm: from the families catalogue
/// (`families::FAMILIES`) and the hybrid groups the sweep knows by name;
/// only a family the catalogue lacks falls back to markers in the names
/// (never to a `+`, which SPHINCS+ has).
pub fn classify(provider: &str, family: &str, algorithm: &str) -> Class {
    let known_hybrid = crate::core::catalog::OPENSSL_HYBRIDS
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(algorithm));
    if known_hybrid || provider.eq_ignore_ascii_case("composite") {
        return Class::Hybrid;
    }
    if let Some(f) = crate::report::families::lookup(family) {
        return f.class;
    }
    let fam = family.to_ascii_uppercase();
    let name = algorithm.to_ascii_uppercase();
    if fam.contains("HYBRID") || fam.contains("COMPOSITE") {
        return Class::Hybrid;
    }
    let classical_name = CLASSICAL_MARKERS.iter().any(|m| name.contains(m));
    let pqc_name = PQC_MARKERS.iter().any(|m| name.contains(m));
    if classical_name && pqc_name {
        return Class::Hybrid;
    }
    if CLASSICAL_MARKERS.iter().any(|m| fam.contains(m)) || (classical_name && !pqc_name) {
        return Class::Classical;
    }
    Class::Pqc
}

/// NIST level rounded to the columns PQC is compared in: 1 (categories 1
/// and 2), 3 (3 and 4) and 5.
pub fn level_bucket(level: Option<u8>) -> Option<u8> {
    match level? {
        1 | 2 => Some(1),
        3 | 4 => Some(3),
        5.. => Some(5),
        0 => None,
    }
}

/// One record and its context.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Where it came from.
    pub src: SrcRef,
    /// The record.
    pub rec: &'a Record,
    /// The file it is in.
    pub run: &'a LoadedRun,
    /// Its class.
    pub class: Class,
}

impl Entry<'_> {
    /// Host name of the file's machine.
    pub fn host(&self) -> &str {
        // In a merged cluster file, the node of the rank that measured it.
        let node = self.rec.rank.and_then(|i| {
            self.run
                .cluster
                .as_ref()
                .and_then(|c| c.ranks.get(i))
                .map(|r| r.node.as_str())
        });
        node.unwrap_or(&self.run.metadata.hostname)
    }

    /// Whether the record ran on a GPU.
    pub fn is_gpu(&self) -> bool {
        self.rec.device.kind == DeviceKind::Gpu
    }

    /// Whether it was measured with a cold L2 (`--cache cold`): such
    /// records are set apart (`report::cold`) and back no other figure.
    pub fn is_cold(&self) -> bool {
        self.rec.cache.as_deref() == Some("cold")
    }

    /// Its throughput, when it is an ok throughput record measured with a
    /// warm L2: the median of its kept runs
    /// ([`crate::analyse::estimate::throughput`]), the one figure every
    /// table, card, chart and comparison shows for it.
    pub fn ok_throughput(&self) -> Option<f64> {
        (self.rec.mode == Mode::Throughput && !self.is_cold())
            .then(|| crate::analyse::estimate::throughput(self.rec))
            .flatten()
            .map(|e| e.value)
    }

    /// The record's noise figure: the robust coefficient of variation of
    /// its raw throughput (or latency) samples; `None` without samples.
    pub fn noise(&self) -> Option<f64> {
        self.rec
            .throughput_ops_per_sec
            .as_ref()
            .or(self.rec.latency_us.as_ref())
            .and_then(|s| s.robust_cv)
            .filter(|v| v.is_finite())
    }

    /// Whether its runs differ by more than `NOISY_RCV`: the report marks
    /// it, and no headline rests on it.
    pub fn is_noisy(&self) -> bool {
        self.noise()
            .is_some_and(|n| n > crate::core::stats::NOISY_RCV)
    }

    /// `noisy: runs vary ±23%` for a noisy record, else nothing.
    pub fn noise_note(&self) -> Option<String> {
        self.is_noisy().then(|| {
            format!(
                "noisy: runs vary ±{:.0}%",
                self.noise().unwrap_or(0.0) * 100.0
            )
        })
    }

    /// Milliseconds per operation of an ok throughput record: 1000 over
    /// [`Entry::ok_throughput`] (wall time per operation, amortised over
    /// its threads), so a time and a rate shown for one record are one
    /// figure.
    pub fn ms(&self) -> Option<f64> {
        Some(1000.0 / self.ok_throughput()?)
    }

    /// The known-answer failures of the code behind it, if any.
    pub fn kat(&self) -> Option<KatMark> {
        kat_mark(self.run, self.rec)
    }

    /// Where it ran, in a few words: `liboqs-cpu, 1 thread` or
    /// `native-gpu, NVIDIA H200`.
    pub fn setup(&self) -> String {
        if self.is_gpu() {
            match self.rec.gpu_ordinal {
                Some(n) => format!("{} on {} (GPU {n})", self.rec.backend, self.rec.device.name),
                None => format!("{} on {}", self.rec.backend, self.rec.device.name),
            }
        } else {
            format!(
                "{}, {} thread{}",
                self.rec.backend,
                self.rec.threads,
                if self.rec.threads == 1 { "" } else { "s" }
            )
        }
    }

    /// `KEM` or `signature`.
    pub fn kind_name(&self) -> &'static str {
        kind_name(self.rec.kind)
    }
}

/// `KEM` or `signature`.
pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Kem => "KEM",
        Kind::Signature => "signature",
    }
}

/// One symmetric record and its context.
#[derive(Debug, Clone, Copy)]
pub struct SymEntry<'a> {
    /// Where it came from (index into `symmetric`).
    pub src: SrcRef,
    /// The record.
    pub rec: &'a SymmetricRecord,
    /// The file it is in.
    pub run: &'a LoadedRun,
}

/// Every record of every file.
pub struct Dataset<'a> {
    /// The files.
    pub runs: &'a [LoadedRun],
    /// Records in file order, then record order; never an emulated one.
    pub entries: Vec<Entry<'a>>,
    /// Records made on pqcprof's CPU stand-in CUDA driver (`emulated`):
    /// correctness only, kept out of every figure and comparison.
    pub emulated: Vec<Entry<'a>>,
    /// Symmetric records.
    pub symmetric: Vec<SymEntry<'a>>,
}

impl<'a> Dataset<'a> {
    /// Flattens the files.
    pub fn new(runs: &'a [LoadedRun]) -> Self {
        let mut entries = vec![];
        let mut emulated = vec![];
        let mut symmetric = vec![];
        for (f, run) in runs.iter().enumerate() {
            for (i, rec) in &run.records {
                let list = if rec.emulated {
                    &mut emulated
                } else {
                    &mut entries
                };
                list.push(Entry {
                    src: SrcRef { file: f, index: *i },
                    rec,
                    run,
                    class: classify(&rec.provider, &rec.family, &rec.algorithm),
                });
            }
            for (i, rec) in &run.symmetric {
                symmetric.push(SymEntry {
                    src: SrcRef { file: f, index: *i },
                    rec,
                    run,
                });
            }
        }
        Dataset {
            runs,
            entries,
            emulated,
            symmetric,
        }
    }

    /// Records that were measured and passed.
    pub fn ok(&self) -> impl Iterator<Item = &Entry<'a>> {
        self.entries.iter().filter(|e| e.rec.status == Status::Ok)
    }

    /// Records of one kind with a usable median throughput, and the
    /// operations among them in catalog order.
    pub fn throughput(&self, kind: Kind) -> (Vec<&Entry<'a>>, Vec<Operation>) {
        let entries: Vec<&Entry<'a>> = self
            .ok()
            .filter(|e| e.rec.kind == kind && e.ok_throughput().is_some())
            .collect();
        let ops = Operation::ALL
            .into_iter()
            .filter(|o| entries.iter().any(|e| e.rec.operation == *o))
            .collect();
        (entries, ops)
    }

    /// The first record of each algorithm that states its sizes.
    pub fn sized(&self) -> Vec<&Entry<'a>> {
        let mut seen = BTreeSet::new();
        self.entries
            .iter()
            .filter(|e| e.rec.sizes.public_key_bytes > 0 && seen.insert(e.rec.algorithm.as_str()))
            .collect()
    }

    /// The known-answer failures behind a source's record, if any.
    pub fn kat(&self, src: SrcRef) -> Option<KatMark> {
        let run = self.runs.get(src.file)?;
        let rec = run.records.iter().find(|(i, _)| *i == src.index)?;
        kat_mark(run, &rec.1)
    }

    /// The known-answer failures behind any of `srcs`, the largest.
    pub fn kat_of(&self, srcs: &[SrcRef]) -> Option<KatMark> {
        srcs.iter()
            .filter_map(|s| self.kat(*s))
            .max_by_key(|m| m.failed)
    }

    /// File name of a source.
    pub fn file_name(&self, src: SrcRef) -> &str {
        &self.runs[src.file].file_name
    }

    /// `run-x.json, records[3]`.
    pub fn describe(&self, src: SrcRef) -> String {
        format!("{}, records[{}]", self.file_name(src), src.index)
    }
}

/// Known-answer failures of the code behind a record: its file's vectors
/// for its backend (and kernel variant) failed some cases, and its
/// algorithm is among the parameter sets those vectors ran.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct KatMark {
    /// The backend as the vectors name it (`liboqs-cpu`, `native-gpu:warp`).
    pub backend: String,
    /// The file's label (`F1`).
    pub file: String,
    /// Cases failed.
    pub failed: usize,
    /// Cases asked.
    pub cases: usize,
    /// The parameter sets those vectors were of (`ML-DSA-65`), joined.
    pub sets: String,
}

/// The command that lists the failed known-answer cases.
pub const KAT_COMMAND: &str = "pqcprof check --vectors";

impl KatMark {
    /// The mark beside a figure: `✗ failed 130 known-answer cases`.
    pub fn short(&self) -> String {
        format!("✗ failed {} known-answer cases", self.failed)
    }

    /// The mark on a card: `✗ liboqs-cpu (F1) failed 42 known-answer
    /// cases (ML-DSA-65)`.
    pub fn card(&self) -> String {
        format!(
            "✗ {} ({}) failed {} known-answer cases{}",
            self.backend,
            self.file,
            self.failed,
            self.of_sets("")
        )
    }

    /// In full: `✗ liboqs-cpu (F1) failed 42 known-answer cases
    /// (ML-DSA-65, of 1,105); pqcprof check --vectors lists them`.
    pub fn long(&self) -> String {
        format!(
            "✗ {} ({}) failed {} known-answer cases{}; `{KAT_COMMAND}` lists them",
            self.backend,
            self.file,
            self.failed,
            self.of_sets(&format!(
                "of {}",
                crate::core::units::grouped(self.cases as f64)
            ))
        )
    }

    /// ` (ML-DSA-65, of 1,105)`: the sets and `more`, whichever there are.
    fn of_sets(&self, more: &str) -> String {
        let parts: Vec<&str> = [self.sets.as_str(), more]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    }
}

/// The known-answer failures behind `rec` of `run`, if any.
pub fn kat_mark(run: &LoadedRun, rec: &Record) -> Option<KatMark> {
    let variant = rec.kernel.as_ref().map(|k| k.variant.as_str());
    run.vectors
        .iter()
        .map(|(_, v)| v)
        .filter(|v| {
            v.backend == rec.backend
                && v.variant.as_deref().is_none_or(|k| Some(k) == variant)
                && (v.parameter_sets.is_empty() || v.parameter_sets.contains(&rec.algorithm))
        })
        .map(|v| (v, v.totals()))
        .filter(|(_, t)| t.2 > 0)
        .map(|(v, t)| KatMark {
            backend: v.name(),
            file: run.label.clone(),
            failed: t.2,
            cases: t.0,
            sets: v.parameter_sets.join(", "),
        })
        .max_by_key(|m| m.failed)
}

/// Every backend's known-answer failures in the files, once per
/// parameter set (or group of sets) its vectors were run on.
pub fn kat_failures(ds: &Dataset) -> Vec<KatMark> {
    let mut out: Vec<KatMark> = ds
        .runs
        .iter()
        .flat_map(|run| {
            run.vectors.iter().filter_map(|(_, v)| {
                let t = v.totals();
                (t.2 > 0).then(|| KatMark {
                    backend: v.name(),
                    file: run.label.clone(),
                    failed: t.2,
                    cases: t.0,
                    sets: v.parameter_sets.join(", "),
                })
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Filter attributes of a record's row.
pub fn filters(e: &Entry) -> Vec<(&'static str, String)> {
    vec![
        (
            "level",
            level_bucket(e.rec.nist_level)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "none".into()),
        ),
        ("kind", kind_name(e.rec.kind).to_ascii_lowercase()),
        ("class", e.class.name().into()),
        ("tier", families::tier(&e.rec.family).name().into()),
        ("origin", families::origin(&e.rec.family).into()),
        ("provider", e.rec.provider.clone()),
        ("backend", e.rec.backend.clone()),
        ("family", e.rec.family.clone()),
        ("alg", e.rec.algorithm.clone()),
    ]
}

/// Records and run files made in memory for the report's unit tests.
#[cfg(test)]
pub(crate) mod test_records {
    use crate::core::catalog::{Kind, Operation};
    use crate::schema::device::{Device, DeviceKind};
    use crate::schema::load::LoadedRun;
    use crate::schema::record::{Record, RunConfig, Status};
    use crate::schema::run_file::RunFile;

    /// An ok ML-KEM-768 encapsulation record, on a GPU (`native-gpu`) or
    /// one CPU thread (`liboqs-cpu`): six runs of `batch` at `ops`
    /// operations per second.
    pub(crate) fn ok_record(gpu: bool, ops: f64, batch: usize) -> Record {
        let (backend, kind, name, provider) = match gpu {
            true => ("native-gpu", DeviceKind::Gpu, "GPU X", "pqcprof"),
            false => ("liboqs-cpu", DeviceKind::Cpu, "cpu", "liboqs"),
        };
        let device = Device {
            kind,
            name: name.into(),
            memory_total_mb: 0,
        };
        let mut r = Record::unmeasured(
            backend.into(),
            device,
            provider.into(),
            "ML-KEM-768".into(),
            "ML-KEM".into(),
            Kind::Kem,
            Operation::Encaps,
        );
        r.status = Status::Ok;
        r.batch = batch;
        r.run_seconds = vec![batch as f64 / ops; 6];
        let s =
            crate::core::stats::summarize(&crate::core::stats::Sample::new(vec![ops; 6]).unwrap());
        r.ops_per_sec = Some(s.median);
        r.throughput_ops_per_sec = Some(s);
        r
    }

    /// A run file of `records`, written and loaded back.
    pub(crate) fn loaded(records: Vec<Record>) -> LoadedRun {
        let mut run = RunFile::new(crate::probe::system::collect(None), RunConfig::for_tests());
        run.records = records;
        let bytes = serde_json::to_vec(&run).unwrap();
        crate::schema::load::parse_run(&bytes, std::path::Path::new("run.json"), "F1")
            .unwrap()
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(classify("liboqs", "ML-KEM", "ML-KEM-768"), Class::Pqc);
        assert_eq!(classify("openssl", "ECDH", "ECDH-P256"), Class::Classical);
        assert_eq!(classify("openssl", "X25519", "X25519"), Class::Classical);
        assert_eq!(classify("openssl", "RSA", "RSA-3072-PSS"), Class::Classical);
        assert_eq!(classify("openssl", "EdDSA", "Ed25519"), Class::Classical);
        assert_eq!(
            classify("openssl", "ML-KEM", "X25519MLKEM768"),
            Class::Hybrid
        );
        assert_eq!(
            classify("composite", "ML-DSA", "ML-DSA-65+Ed25519"),
            Class::Hybrid
        );
        assert_eq!(
            classify("liboqs", "SLH-DSA", "SLH-DSA-SHA2-128s"),
            Class::Pqc
        );
        assert_eq!(classify("liboqs", "Falcon", "Falcon-512"), Class::Pqc);
        // From the catalogue, not the `+` in the name.
        assert_eq!(
            classify("liboqs", "SPHINCS+", "SPHINCS+-SHA2-128f-simple"),
            Class::Pqc
        );
        assert_eq!(
            classify("openssl", "Hybrid KEM", "SecP256r1MLKEM768"),
            Class::Hybrid
        );
        assert_eq!(
            classify("composite", "Composite KEM", "ML-KEM-768+X25519"),
            Class::Hybrid
        );
        // A family the catalogue lacks: markers in its name, never `+`.
        assert_eq!(classify("liboqs", "NewScheme", "NewScheme+1"), Class::Pqc);
    }

    #[test]
    fn buckets() {
        assert_eq!(level_bucket(Some(2)), Some(1));
        assert_eq!(level_bucket(Some(4)), Some(3));
        assert_eq!(level_bucket(Some(5)), Some(5));
        assert_eq!(level_bucket(None), None);
        assert_eq!(level_bucket(Some(0)), None);
    }
}
