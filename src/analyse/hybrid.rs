//! What a hybrid costs over its pure PQC component: for each hybrid record
//! (pqcprof's composites, OpenSSL's hybrid KEM groups) and operation, the
//! extra microseconds per operation and the extra bytes, against the
//! component measured in the same run by the same provider stack, both on
//! one thread.

use crate::core::catalog::Sizes;
use crate::core::catalog::OPENSSL_HYBRIDS;
use crate::schema::record::{Mode, Record, Status};
use crate::schema::run_file::HybridOverhead;

/// The pure PQC component of a hybrid record and its provider: `ML-DSA-65`
/// (liboqs) for the composite `ML-DSA-65+Ed25519`, `ML-KEM-768` (openssl)
/// for OpenSSL's `X25519MLKEM768`. `None` for anything else.
pub fn component(rec: &Record) -> Option<(String, &'static str)> {
    if rec.provider == "composite" {
        let (pqc, _) = rec.algorithm.split_once('+')?;
        return Some((pqc.to_string(), "liboqs"));
    }
    if rec.provider == "openssl" && OPENSSL_HYBRIDS.iter().any(|(n, _)| *n == rec.algorithm) {
        let i = rec.algorithm.find("MLKEM")?;
        return Some((format!("ML-KEM-{}", &rec.algorithm[i + 5..]), "openssl"));
    }
    None
}

/// Microseconds per operation of an ok one-thread throughput record: one
/// over its throughput ([`crate::analyse::estimate::throughput`], the
/// figure every view shows for it). At several threads the throughput is
/// all threads' operations over the wall time, not what one operation
/// costs, so those records are left out.
fn usable(r: &Record) -> Option<f64> {
    (r.status == Status::Ok && r.mode == Mode::Throughput && r.threads == 1)
        .then(|| crate::analyse::estimate::throughput(r))
        .flatten()
        .map(|e| 1e6 / e.value)
}

/// Public key plus ciphertext or signature: what one side sends; `None`
/// when either is not known.
fn wire(s: &Sizes) -> Option<i64> {
    Some((s.public_key()? + s.ciphertext_bytes.or(s.signature_bytes)?) as i64)
}

/// `hybrid - component` of two sizes, when both are known.
fn extra(hybrid: Option<i64>, component: Option<i64>) -> Option<i64> {
    Some(hybrid? - component?)
}

/// Each hybrid record with a measured component, in record order: the
/// overhead and the indices (in `records`) of the hybrid and component.
pub fn overhead_of(records: &[&Record]) -> Vec<(HybridOverhead, usize, usize)> {
    let mut v = vec![];
    for (hi, h) in records.iter().enumerate() {
        let (Some((name, provider)), Some(hybrid_us)) = (component(h), usable(h)) else {
            continue;
        };
        let Some((ci, c, component_us)) = records.iter().enumerate().find_map(|(ci, c)| {
            (c.algorithm == name
                && c.provider == provider
                && c.operation == h.operation
                && c.threads == h.threads)
                .then(|| usable(c).map(|us| (ci, c, us)))
                .flatten()
        }) else {
            continue;
        };
        let o = HybridOverhead {
            hybrid: h.algorithm.clone(),
            provider: h.provider.clone(),
            component: name,
            component_provider: provider.into(),
            operation: h.operation,
            hybrid_us,
            component_us,
            extra_us: hybrid_us - component_us,
            extra_wire_bytes: extra(wire(&h.sizes), wire(&c.sizes)),
            extra_secret_key_bytes: extra(
                h.sizes.secret_key().map(|v| v as i64),
                c.sizes.secret_key().map(|v| v as i64),
            ),
        };
        v.push((o, hi, ci));
    }
    v
}

/// Every hybrid record with a measured component, in record order.
pub fn overhead(records: &[Record]) -> Vec<HybridOverhead> {
    let refs: Vec<&Record> = records.iter().collect();
    overhead_of(&refs).into_iter().map(|(o, ..)| o).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{Kind, Operation};
    use crate::schema::device::{Device, DeviceKind};

    fn rec(provider: &str, alg: &str, ms: f64, pk: usize, ct: usize, sk: usize) -> Record {
        let device = Device {
            kind: DeviceKind::Cpu,
            name: "test CPU (test only)".into(),
            memory_total_mb: 0,
        };
        let mut r = Record::unmeasured(
            format!("{provider}-cpu"),
            device,
            provider.into(),
            alg.into(),
            "test".into(),
            Kind::Kem,
            Operation::Encaps,
        );
        r.status = Status::Ok;
        // Six runs of one operation at `ms` each.
        r.batch = 1;
        r.run_seconds = vec![ms / 1000.0; 6];
        r.sizes = Sizes {
            public_key_bytes: pk,
            secret_key_bytes: sk,
            ciphertext_bytes: Some(ct),
            ..Sizes::default()
        };
        r
    }

    #[test]
    fn extra_time_and_bytes_over_the_component() {
        let recs = vec![
            rec("liboqs", "ML-KEM-768", 0.020, 1184, 1088, 2400),
            rec("composite", "ML-KEM-768+X25519", 0.070, 1216, 1120, 2432),
            rec("openssl", "ML-KEM-768", 0.030, 1184, 1088, 2400),
            rec("openssl", "X25519MLKEM768", 0.080, 1216, 1120, 2432),
            // No component measured: no row.
            rec("composite", "HQC-256+X25519", 30.0, 7277, 14453, 7349),
        ];
        let o = overhead(&recs);
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!(o[0].component, "ML-KEM-768");
        assert_eq!(o[0].component_provider, "liboqs");
        assert!((o[0].extra_us - 50.0).abs() < 1e-9, "{o:?}");
        assert_eq!(o[0].extra_wire_bytes, Some(64));
        assert_eq!(o[0].extra_secret_key_bytes, Some(32));
        assert_eq!(o[1].component_provider, "openssl");
        assert!((o[1].extra_us - 50.0).abs() < 1e-9, "{o:?}");
    }

    #[test]
    fn an_unknown_secret_key_gives_no_extra_bytes_not_a_negative_count() {
        // OpenSSL does not export SecP256r1MLKEM768's secret key: its size
        // is not known (0 in memory, null in files).
        let recs = vec![
            rec("openssl", "ML-KEM-768", 0.030, 1184, 1088, 2400),
            rec("openssl", "SecP256r1MLKEM768", 0.080, 1249, 1153, 0),
        ];
        let o = overhead(&recs);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].extra_secret_key_bytes, None, "{o:?}");
        assert_eq!(o[0].extra_wire_bytes, Some(130));
        let json = serde_json::to_value(&o[0]).unwrap();
        assert!(json["extra_secret_key_bytes"].is_null(), "{json}");
        let mut sized = recs[1].clone();
        sized.sizes.public_key_bytes = 0;
        let json = serde_json::to_value(&sized).unwrap();
        assert!(json["sizes"]["public_key_bytes"].is_null(), "{json}");
        assert!(json["sizes"]["secret_key_bytes"].is_null(), "{json}");
        let back: Record = serde_json::from_value(json).unwrap();
        assert_eq!(back.sizes, sized.sizes);
    }

    #[test]
    fn only_one_thread_records_give_an_overhead() {
        // At 2 threads ms_per_op is amortised over both threads: half of
        // what one operation costs. No overhead is made from it.
        let two = |mut r: Record| {
            r.threads = 2;
            r
        };
        let recs = vec![
            two(rec("liboqs", "ML-KEM-768", 0.010, 1184, 1088, 2400)),
            two(rec(
                "composite",
                "ML-KEM-768+X25519",
                0.035,
                1216,
                1120,
                2432,
            )),
            rec("liboqs", "ML-KEM-768", 0.020, 1184, 1088, 2400),
            rec("composite", "ML-KEM-768+X25519", 0.070, 1216, 1120, 2432),
        ];
        let o = overhead(&recs);
        assert_eq!(o.len(), 1, "{o:?}");
        assert!((o[0].extra_us - 50.0).abs() < 1e-9, "{o:?}");
    }
}
