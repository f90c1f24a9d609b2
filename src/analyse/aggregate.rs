//! Totals over several devices or ranks that measured the same (backend,
//! algorithm, operation, batch) at the same time: the GPUs of one node
//! (`--device all`) or the ranks of a cluster job (`pqcprof merge`).
//!
//! A total is only honest over runs that really ran together, so each
//! member contributes the median throughput of its runs that overlapped in
//! time with a run of every other member (by the records' run windows).
//! Records without windows are summed on their own medians, and the
//! aggregate says so. The spread (min, median, max, imbalance) shows
//! whether one device or rank held the others back.

use crate::core::catalog::Operation;
use crate::core::stats::{summarize, Sample};
use crate::schema::aggregate::{Aggregate, GroupTotal, Spread};
use crate::schema::record::{Mode, Record, Status};

/// One record taking part in an aggregate.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// Index of the record in its file.
    pub index: usize,
    /// The record.
    pub rec: &'a Record,
    /// Node the member ran on.
    pub node: &'a str,
    /// The rank that measured it, in a merged cluster file (`gpu rank 3`).
    pub rank: Option<&'a str>,
}

impl Member<'_> {
    /// `GPU 1 on vm` / `rank 3 on node7`: how the member is named.
    fn label(&self) -> String {
        match (self.rank, self.rec.gpu_ordinal) {
            (Some(r), Some(g)) => format!("{r} GPU {g} on {}", self.node),
            (Some(r), None) => format!("{r} on {}", self.node),
            (None, Some(g)) => format!("GPU {g} on {}", self.node),
            (None, None) => format!("{} on {}", self.rec.device.name, self.node),
        }
    }
}

/// The key members must share to be added up.
pub type Key = (String, String, Operation, usize, usize);

/// (backend, algorithm, operation, batch, threads) of a throughput record.
pub fn key(rec: &Record) -> Option<Key> {
    (rec.mode == Mode::Throughput).then(|| {
        (
            rec.backend.clone(),
            rec.algorithm.clone(),
            rec.operation,
            rec.batch,
            rec.threads,
        )
    })
}

/// For each member's windows, whether the window shares a moment with a
/// window of every other member (`[a, b]` and `[c, d]` do when `a < d`
/// and `c < b`). One sweep over the
/// windows sorted by start, with a tree holding, for each member, the
/// latest end among its windows started so far: O(n log n) in the number
/// of windows, where comparing every pair of members would be quadratic.
fn overlapping_runs(w: &[&Vec<[f64; 2]>]) -> Vec<Vec<bool>> {
    let m = w.len();
    let size = m.next_power_of_two();
    // Leaves: a member's latest end so far; inner nodes: the minimum.
    let mut tree = vec![f64::INFINITY; 2 * size];
    for leaf in &mut tree[size..size + m] {
        *leaf = f64::NEG_INFINITY;
    }
    for p in (1..size).rev() {
        tree[p] = tree[2 * p].min(tree[2 * p + 1]);
    }
    // The least latest end over members in [lo, hi).
    let min_in = |tree: &[f64], lo: usize, hi: usize| {
        let (mut lo, mut hi, mut best) = (lo + size, hi + size, f64::INFINITY);
        while lo < hi {
            if lo & 1 == 1 {
                best = best.min(tree[lo]);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                best = best.min(tree[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        best
    };
    let finite = |o: &[f64; 2]| !o[0].is_nan() && !o[1].is_nan();
    let mut starts: Vec<(f64, usize, f64)> = w
        .iter()
        .enumerate()
        .flat_map(|(j, ws)| {
            ws.iter()
                .filter(|o| finite(o))
                .map(move |o| (o[0], j, o[1]))
        })
        .collect();
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut queries: Vec<(f64, usize, usize)> = w
        .iter()
        .enumerate()
        .flat_map(|(i, ws)| {
            ws.iter()
                .enumerate()
                .filter(|(_, o)| finite(o))
                .map(move |(k, o)| (o[1], i, k))
        })
        .collect();
    queries.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Vec<bool>> = w.iter().map(|ws| vec![false; ws.len()]).collect();
    let mut next = 0;
    for (end, i, k) in queries {
        // Every window that starts before this one ends.
        while next < starts.len() && starts[next].0 < end {
            let (_, j, o_end) = starts[next];
            let mut p = size + j;
            tree[p] = tree[p].max(o_end);
            while p > 1 {
                p /= 2;
                tree[p] = tree[2 * p].min(tree[2 * p + 1]);
            }
            next += 1;
        }
        let others = min_in(&tree, 0, i).min(min_in(&tree, i + 1, m));
        out[i][k] = others > w[i][k][0];
    }
    out
}

/// Throughput of each timed run, operations per second.
fn per_run(rec: &Record) -> Vec<f64> {
    rec.run_seconds
        .iter()
        .map(|s| rec.batch as f64 / s)
        .collect()
}

/// The spread of `(label, ops/s)` values; `None` when empty.
pub fn spread(values: &[(String, f64)]) -> Option<Spread> {
    let slowest = values.iter().min_by(|a, b| a.1.total_cmp(&b.1))?.0.clone();
    let sample = Sample::new(values.iter().map(|v| v.1).collect()).ok()?;
    let percentile = |p| crate::core::stats::percentile(&sample, p);
    let (min, max) = (percentile(0.0), percentile(100.0));
    Some(Spread {
        min_ops_per_sec: min,
        median_ops_per_sec: percentile(50.0),
        max_ops_per_sec: max,
        imbalance_pct: if max > 0.0 {
            (max - min) / max * 100.0
        } else {
            0.0
        },
        slowest,
    })
}

/// Adds up `members` (all of one `key`) measured together in `scope`.
/// `model` names a member's GPU or CPU model for the per-model spread.
pub fn aggregate(scope: &str, members: &[Member]) -> Option<Aggregate> {
    let first = members.first()?.rec;
    let (ok, not_ok): (Vec<&Member>, Vec<&Member>) = members
        .iter()
        .partition(|m| m.rec.status == Status::Ok && !m.rec.run_seconds.is_empty());
    let (counted, mut overlap) = counted_runs(&ok);
    let medians: Vec<Option<f64>> = counted
        .iter()
        .map(|v| Sample::new(v.clone()).ok().map(|s| summarize(&s).median))
        .collect();
    let member_ops_per_sec: Vec<f64> = medians.iter().map(|m| m.unwrap_or(0.0)).collect();
    let lacking: Vec<String> = ok
        .iter()
        .zip(&medians)
        .filter(|(_, m)| m.is_none())
        .map(|(m, _)| m.label())
        .collect();
    let total_ops_per_sec =
        (!ok.is_empty() && lacking.is_empty()).then(|| member_ops_per_sec.iter().sum::<f64>());
    if !lacking.is_empty() {
        overlap += &format!(
            "; no total: no run of {} overlapped every other member's",
            lacking.join(", ")
        );
    }
    if !not_ok.is_empty() {
        overlap += &format!(
            "; left out (not ok): {}",
            not_ok
                .iter()
                .map(|m| m.label())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let labelled: Vec<(String, f64)> = ok
        .iter()
        .zip(&medians)
        .filter_map(|(m, v)| v.map(|v| (m.label(), v)))
        .collect();
    let peak_power = peak_power_of(&ok);
    Some(Aggregate {
        scope: scope.to_string(),
        backend: first.backend.clone(),
        algorithm: first.algorithm.clone(),
        operation: first.operation,
        mode: first.mode,
        batch: first.batch,
        threads: first.threads,
        records: members.iter().map(|m| m.index).collect(),
        members: members.iter().map(|m| m.label()).collect(),
        not_ok: not_ok.iter().map(|m| m.label()).collect(),
        overlapped_runs: counted.iter().map(Vec::len).collect(),
        member_ops_per_sec,
        total_ops_per_sec,
        overlap,
        spread: spread(&labelled),
        energy_per_op_uj: energy_of(&ok)
            .filter(|(_, ops)| *ops > 0.0)
            .map(|(joules, ops)| joules * 1e6 / ops),
        peak_power_w: peak_power.filter(|p| !p.is_empty()).map(|p| p.iter().sum()),
        emulated: members.iter().any(|m| m.rec.emulated),
        by_node: group_totals(&ok, &medians, &|m| m.node.to_string()),
        by_model: group_totals(&ok, &medians, &|m| m.rec.device.name.clone()),
    })
}

/// Per passing member, the throughputs of its runs that count, and how
/// they were chosen: the runs that overlapped every other member's when
/// all have run windows, else all of them.
fn counted_runs(ok: &[&Member]) -> (Vec<Vec<f64>>, String) {
    let windows: Option<Vec<&Vec<[f64; 2]>>> = ok
        .iter()
        .map(|m| {
            m.rec
                .run_windows_unix_s
                .as_ref()
                .filter(|w| w.len() == m.rec.run_seconds.len())
        })
        .collect();
    match &windows {
        Some(w) if ok.len() > 1 => {
            let counts = overlapping_runs(w);
            (
                ok.iter()
                    .zip(&counts)
                    .map(|(m, keep)| {
                        per_run(m.rec)
                            .into_iter()
                            .zip(keep)
                            .filter(|(_, k)| **k)
                            .map(|(t, _)| t)
                            .collect()
                    })
                    .collect(),
                "runs that overlapped in time (host clock) with a run of every other member".into(),
            )
        }
        _ => (
            ok.iter().map(|m| per_run(m.rec)).collect(),
            if ok.len() > 1 {
                "not recorded (records without run windows): each member's median over all its runs, assumed to have run at the same time".into()
            } else {
                "one member: its own runs".into()
            },
        ),
    }
}

/// Joules and operations summed over the members' energy windows, when
/// every member has one. Energy from each member's energy window (at least
/// `energy::MIN_WINDOW_S` of back-to-back batches), never from the timed
/// runs' own readings: those are shorter than NVML's averaging.
fn energy_of(ok: &[&Member]) -> Option<(f64, f64)> {
    ok.iter()
        .map(|m| m.rec.energy.as_ref().map(|e| (e.joules, e.ops as f64)))
        .collect::<Option<Vec<_>>>()
        .filter(|v| !v.is_empty())
        .map(|v| v.iter().fold((0.0, 0.0), |a, e| (a.0 + e.0, a.1 + e.1)))
}

/// Each member's highest mean power, when every member recorded one.
fn peak_power_of(ok: &[&Member]) -> Option<Vec<f64>> {
    ok.iter()
        .map(|m| {
            m.rec
                .usage
                .iter()
                .filter_map(|u| u.mean_power_w)
                .max_by(f64::total_cmp)
        })
        .collect()
}

/// Totals per group (node, model) named by `name_of`, when the members
/// fall into two groups or more.
fn group_totals(
    ok: &[&Member],
    medians: &[Option<f64>],
    name_of: &dyn Fn(&Member) -> String,
) -> Vec<GroupTotal> {
    let mut names: Vec<String> = ok.iter().map(|m| name_of(m)).collect();
    names.sort();
    names.dedup();
    if names.len() < 2 {
        return vec![];
    }
    names
        .into_iter()
        .filter_map(|name| {
            let vals: Vec<(String, f64)> = ok
                .iter()
                .zip(medians)
                .filter(|(m, _)| name_of(m) == name)
                .filter_map(|(m, v)| v.map(|v| (m.label(), v)))
                .collect();
            Some(GroupTotal {
                members: vals.len(),
                total_ops_per_sec: vals.iter().map(|v| v.1).sum(),
                spread: spread(&vals)?,
                name,
            })
        })
        .collect()
}

/// Aggregates of every key that more than one record of `records` has
/// and at least one passed, in first-seen order; `node_of` names the
/// node of a record and, in a merged file, its rank.
pub fn aggregate_all<'a>(
    scope: &str,
    records: impl IntoIterator<Item = (usize, &'a Record)>,
    node_of: &dyn Fn(&Record) -> (&'a str, Option<&'a str>),
) -> Vec<Aggregate> {
    let mut groups: Vec<(Key, Vec<Member<'a>>)> = vec![];
    let mut group_of: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    for (index, rec) in records {
        let Some(k) = key(rec) else { continue };
        let (node, rank) = node_of(rec);
        let m = Member {
            index,
            rec,
            node,
            rank,
        };
        match group_of.get(&k) {
            Some(&g) => groups[g].1.push(m),
            None => {
                group_of.insert(k.clone(), groups.len());
                groups.push((k, vec![m]));
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, v)| v.len() > 1 && v.iter().any(|m| m.rec.status == Status::Ok))
        .filter_map(|(_, v)| aggregate(scope, &v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::Kind;
    use crate::monitor::RunUsage;
    use crate::schema::device::{Device, DeviceKind};

    /// An ok GPU record of batch 100 with these run times and windows.
    fn rec(gpu: usize, seconds: &[f64], windows: Option<&[[f64; 2]]>) -> Record {
        let mut r = Record::unmeasured(
            "native-gpu".into(),
            Device {
                kind: DeviceKind::Gpu,
                name: "test GPU".into(),
                memory_total_mb: 1,
            },
            "pqcprof-native".into(),
            "ML-KEM-768".into(),
            "ML-KEM".into(),
            Kind::Kem,
            Operation::KeyGen,
        );
        r.status = Status::Ok;
        r.batch = 100;
        r.gpu_ordinal = Some(gpu);
        r.run_seconds = seconds.to_vec();
        r.run_windows_unix_s = windows.map(|w| w.to_vec());
        r
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    fn agg(recs: &[Record]) -> Aggregate {
        let members: Vec<Member> = recs
            .iter()
            .enumerate()
            .map(|(index, rec)| Member {
                index,
                rec,
                node: "vm",
                rank: None,
            })
            .collect();
        aggregate("test", &members).unwrap()
    }

    /// Whether two `[start, end]` windows share a moment.
    fn overlaps(a: [f64; 2], b: [f64; 2]) -> bool {
        a[0] < b[1] && b[0] < a[1]
    }

    #[test]
    fn the_sweep_agrees_with_comparing_every_pair() {
        // Small integer windows, so ties and touching ends are common.
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % 12
        };
        for _ in 0..300 {
            let members = 2 + next() as usize % 4;
            let w: Vec<Vec<[f64; 2]>> = (0..members)
                .map(|_| {
                    (0..next() % 4)
                        .map(|_| {
                            let a = next() as f64;
                            [a, a + next() as f64 % 4.0]
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&Vec<[f64; 2]>> = w.iter().collect();
            let pairwise: Vec<Vec<bool>> = w
                .iter()
                .enumerate()
                .map(|(i, ws)| {
                    ws.iter()
                        .map(|win| {
                            w.iter()
                                .enumerate()
                                .filter(|(j, _)| *j != i)
                                .all(|(_, other)| other.iter().any(|o| overlaps(*win, *o)))
                        })
                        .collect()
                })
                .collect();
            assert_eq!(overlapping_runs(&refs), pairwise, "{w:?}");
        }
    }

    #[test]
    fn overlapping_runs_add_up_and_the_spread_names_the_slowest() {
        // GPU 0: 100 ops in 0.1 s (1000/s) three times; GPU 1: 100 ops in
        // 0.2 s (500/s), its windows cover GPU 0's.
        let a = rec(
            0,
            &[0.1, 0.1, 0.1],
            Some(&[[0.0, 0.1], [0.1, 0.2], [0.2, 0.3]]),
        );
        let b = rec(1, &[0.2, 0.2], None);
        let b = Record {
            run_windows_unix_s: Some(vec![[0.0, 0.2], [0.2, 0.4]]),
            ..b
        };
        let g = agg(&[a, b]);
        assert_eq!(g.overlapped_runs, [3, 2]);
        assert!(close(g.total_ops_per_sec.unwrap(), 1500.0), "{g:?}");
        let s = g.spread.unwrap();
        assert!(close(s.min_ops_per_sec, 500.0) && close(s.max_ops_per_sec, 1000.0));
        assert!(close(s.imbalance_pct, 50.0));
        assert_eq!(s.slowest, "GPU 1 on vm");
        assert!(g.overlap.starts_with("runs that overlapped"));
    }

    #[test]
    fn runs_outside_the_common_time_do_not_count() {
        // GPU 0's third run (2000/s) starts after GPU 1 ended: left out.
        let a = rec(
            0,
            &[0.1, 0.1, 0.05],
            Some(&[[0.0, 0.1], [0.1, 0.2], [5.0, 5.05]]),
        );
        let b = rec(1, &[0.2], Some(&[[0.0, 0.2]]));
        let g = agg(&[a, b]);
        assert_eq!(g.overlapped_runs, [2, 1]);
        assert!(close(g.member_ops_per_sec[0], 1000.0));
        assert!(close(g.total_ops_per_sec.unwrap(), 1500.0));
    }

    #[test]
    fn no_overlap_means_no_total() {
        let a = rec(0, &[0.1], Some(&[[0.0, 0.1]]));
        let b = rec(1, &[0.1], Some(&[[1.0, 1.1]]));
        let g = agg(&[a, b]);
        assert_eq!(g.total_ops_per_sec, None);
        assert!(g.overlap.contains("no total"), "{}", g.overlap);
    }

    #[test]
    fn without_windows_medians_are_summed_and_it_says_so() {
        let g = agg(&[rec(0, &[0.1, 0.1], None), rec(1, &[0.25, 0.25], None)]);
        assert!(close(g.total_ops_per_sec.unwrap(), 1400.0));
        assert!(g.overlap.starts_with("not recorded"));
    }

    #[test]
    fn failed_members_are_named_and_left_out() {
        let mut bad = rec(1, &[], None);
        bad.status = Status::Failed;
        let g = agg(&[rec(0, &[0.1], None), bad]);
        assert_eq!(g.not_ok, ["GPU 1 on vm"]);
        assert!(close(g.total_ops_per_sec.unwrap(), 1000.0));
        assert_eq!(g.records, [0, 1]);
    }

    #[test]
    fn energy_comes_from_the_energy_windows_and_peak_power_is_summed() {
        let usage = |e: f64, w: f64| RunUsage {
            energy_j: Some(e),
            mean_power_w: Some(w),
            ..RunUsage::default()
        };
        let window = |joules: f64, ops: usize| {
            crate::monitor::energy::figure(joules, ops, 1, 1.2, "test only")
        };
        let mut a = rec(0, &[0.1, 0.1], None);
        a.usage = vec![usage(100.0, 100.0), usage(100.0, 300.0)];
        a.energy = window(30.0, 1000);
        let mut b = rec(1, &[0.1, 0.1], None);
        b.usage = vec![usage(2.0, 200.0), usage(2.0, 250.0)];
        b.energy = window(10.0, 1000);
        // 40 J over the windows' 2000 operations: 20000 uJ per operation
        // (the short runs' own readings would give 510000).
        let g = agg(&[a.clone(), b.clone()]);
        assert!(close(g.energy_per_op_uj.unwrap(), 20_000.0), "{g:?}");
        assert!(close(g.peak_power_w.unwrap(), 550.0));
        // A member without an energy window: no energy total.
        b.energy = None;
        assert_eq!(agg(&[a, b]).energy_per_op_uj, None);
    }

    #[test]
    fn groups_by_node_and_model() {
        let a = rec(0, &[0.1], None);
        let mut b = rec(0, &[0.2], None);
        b.device.name = "other GPU".into();
        let members = [
            Member {
                index: 0,
                rec: &a,
                node: "n1",
                rank: Some("cpu rank 0"),
            },
            Member {
                index: 1,
                rec: &b,
                node: "n2",
                rank: Some("cpu rank 1"),
            },
        ];
        let g = aggregate("cluster", &members).unwrap();
        assert_eq!(g.by_node.len(), 2);
        assert_eq!(g.by_node[0].name, "n1");
        assert!(close(g.by_node[1].total_ops_per_sec, 500.0));
        assert_eq!(g.by_node[1].spread.slowest, "cpu rank 1 GPU 0 on n2");
        assert_eq!(g.by_model.len(), 2);
    }

    #[test]
    fn aggregate_all_needs_two_members_of_a_key() {
        let a = rec(0, &[0.1], None);
        let b = rec(1, &[0.1], None);
        let mut c = rec(0, &[0.1], None);
        c.algorithm = "ML-KEM-512".into();
        let recs = [a, b, c];
        let all = aggregate_all("t", recs.iter().enumerate(), &|_| ("vm", None));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].records, [0, 1]);
    }
}
