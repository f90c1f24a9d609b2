//! The floor of a run: per backend and thread count, the median of its
//! records' empty windows (what a timed window costs with nothing in it).

use crate::core::stats::{percentile, Sample};
use crate::schema::record::Record;
use crate::schema::run_file::Floor;

/// One [`Floor`] per (backend, threads) whose records timed an empty
/// window, in the order first measured.
pub fn floors(records: &[Record]) -> Vec<Floor> {
    let mut groups: Vec<(Floor, Vec<f64>, Vec<f64>)> = vec![];
    for r in records {
        let Some(f) = &r.floor else { continue };
        let at = groups
            .iter()
            .position(|(g, _, _)| g.backend == r.backend && g.threads == r.threads);
        let (g, seconds, rates) = match at {
            Some(i) => &mut groups[i],
            None => {
                groups.push((
                    Floor {
                        backend: r.backend.clone(),
                        threads: r.threads,
                        seconds: 0.0,
                        records: 0,
                        samples: 0,
                        launches_per_s: None,
                        method: f.method.clone(),
                    },
                    vec![],
                    vec![],
                ));
                groups.last_mut().expect("just pushed")
            }
        };
        g.records += 1;
        g.samples += f.samples;
        seconds.push(f.seconds);
        rates.extend(f.launches_per_s);
    }
    groups
        .into_iter()
        .filter_map(|(mut g, seconds, rates)| {
            g.seconds = percentile(&Sample::new(seconds).ok()?, 50.0);
            g.launches_per_s = Sample::new(rates).ok().map(|r| percentile(&r, 50.0));
            Some(g)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::record::EmptyWindow;

    fn rec(backend: &str, threads: usize, floor: Option<f64>) -> Record {
        Record {
            threads,
            floor: floor.map(|seconds| EmptyWindow {
                seconds,
                samples: 51,
                launches_per_s: (threads == 1).then_some(1e5 * seconds),
                method: "test".into(),
            }),
            ..Record::unmeasured(
                backend.into(),
                crate::schema::device::Device {
                    kind: crate::schema::device::DeviceKind::Cpu,
                    name: "test".into(),
                    memory_total_mb: 0,
                },
                "test".into(),
                "ML-KEM-768".into(),
                "ML-KEM".into(),
                crate::core::catalog::Kind::Kem,
                crate::core::catalog::Operation::KeyGen,
            )
        }
    }

    #[test]
    fn one_floor_per_backend_and_thread_count_at_the_median() {
        let f = floors(&[
            rec("a", 1, Some(3e-8)),
            rec("a", 2, Some(5e-5)),
            rec("a", 1, Some(1e-8)),
            rec("b", 1, None),
            rec("a", 1, Some(2e-8)),
        ]);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(
            (f[0].threads, f[0].seconds, f[0].records, f[0].samples),
            (1, 2e-8, 3, 153)
        );
        assert_eq!((f[1].threads, f[1].seconds, f[1].records), (2, 5e-5, 1));
        // Launch rates where the records have them, at their median.
        assert!((f[0].launches_per_s.unwrap() - 2e-3).abs() < 1e-12, "{f:?}");
        assert_eq!(f[1].launches_per_s, None);
        assert!(floors(&[rec("b", 1, None)]).is_empty());
    }
}
