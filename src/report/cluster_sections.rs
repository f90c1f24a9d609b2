//! The report's scale-out sections: the cluster a merged file came from
//! (ranks, nodes, GPUs, what is missing or differs), each device's and
//! rank's own figures, and the totals over them (`crate::analyse::aggregate`).

use crate::core::units;
use crate::report::model::{Dataset, Entry, SrcRef};
use crate::report::table::{Cell, Row, Table};
use crate::schema::aggregate::Aggregate;

/// What the cluster section says about one merged file, in sentences.
pub fn cluster_notes(ds: &Dataset) -> Vec<String> {
    let mut out = vec![];
    for run in ds.runs {
        let Some(c) = &run.cluster else { continue };
        let mut nodes: Vec<&str> = c.ranks.iter().map(|r| r.node.as_str()).collect();
        nodes.sort();
        nodes.dedup();
        let mut gpus: Vec<String> = c
            .ranks
            .iter()
            .flat_map(|r| r.metadata.gpus.iter().map(|g| g.name.clone()))
            .collect();
        let gpu_count = gpus.len();
        gpus.sort();
        gpus.dedup();
        out.push(format!(
            "{}: {} rank(s) on {} node(s) ({}); {} GPU(s) seen by the ranks{}; {}.",
            match &c.job_id {
                Some(j) => format!("Slurm job {j} ({})", run.label),
                None => format!("Merged file {}", run.label),
            },
            c.ranks.len(),
            nodes.len(),
            nodes.join(", "),
            gpu_count,
            if gpus.is_empty() {
                String::new()
            } else {
                format!(" ({})", gpus.join(", "))
            },
            if c.complete {
                "every expected rank finished"
            } else {
                "INCOMPLETE: see below"
            }
        ));
        for m in &c.missing {
            out.push(format!("Missing: {m}."));
        }
        for r in c.ranks.iter().filter(|r| !r.complete) {
            out.push(format!(
                "Incomplete: {} did not finish its run; its finished records are included.",
                r.label()
            ));
        }
        for d in &c.differences {
            out.push(format!("Difference: {d}."));
        }
        let emulated = run.aggregates.iter().filter(|(_, a)| a.emulated).count();
        if emulated > 0 {
            out.push(format!(
                "{emulated} total(s) over records emulated on pqcprof's CPU stand-in driver (not a GPU) are in the run file only: they prove the path works, never a speed."
            ));
        }
    }
    out
}

/// Every rank of every merged file.
pub fn ranks_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-ranks",
        &[
            "Rank", "Node", "GPU", "Records", "Finished", "pqcprof", "File",
        ],
        false,
    );
    for run in ds.runs {
        let Some(c) = &run.cluster else { continue };
        for r in &c.ranks {
            let visible = r
                .metadata
                .slurm
                .as_ref()
                .and_then(|s| s.cuda_visible_devices.clone());
            let gpu = match (r.metadata.gpus.first(), visible) {
                (Some(g), Some(v)) => format!("{} (CUDA_VISIBLE_DEVICES={v})", g.name),
                (Some(g), None) => g.name.clone(),
                (None, Some(v)) => format!("none listed (CUDA_VISIBLE_DEVICES={v})"),
                (None, None) => "none".into(),
            };
            t.rows.push(Row {
                filters: vec![],
                cells: vec![
                    Cell::text(format!(
                        "{} {}",
                        r.role,
                        r.procid.map(|p| p.to_string()).unwrap_or_default()
                    )),
                    Cell::text(r.node.clone()),
                    Cell::text(gpu),
                    Cell::num(r.records.to_string()),
                    Cell::text(if r.complete { "yes" } else { "no" }).class(if r.complete {
                        "good"
                    } else {
                        "bad"
                    }),
                    Cell::text(r.metadata.pqcprof_version.clone())
                        .below(r.metadata.git_commit.clone()),
                    Cell::text(r.file.clone()).class("src"),
                ],
            });
        }
    }
    t
}

/// `rank 2 GPU 1 on node7`: which device or rank an entry is.
fn member_of(e: &Entry) -> Option<String> {
    let rank = e.rec.rank.and_then(|i| {
        e.run
            .cluster
            .as_ref()
            .and_then(|c| c.ranks.get(i))
            .map(|r| r.name())
    });
    match (rank, e.rec.gpu_ordinal) {
        (Some(r), Some(g)) => Some(format!("{r}, GPU {g}")),
        (Some(r), None) => Some(r),
        (None, Some(g)) => Some(format!("GPU {g}")),
        (None, None) => None,
    }
}

/// Each device's or rank's own throughput, where several took part.
pub fn devices_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-devices",
        &[
            "Algorithm",
            "Operation",
            "Backend",
            "Device or rank",
            "Ops/s",
            "Source",
        ],
        false,
    );
    for e in ds.ok() {
        let (Some(ops), Some(member)) = (e.ok_throughput(), member_of(e)) else {
            continue;
        };
        t.rows.push(Row {
            filters: crate::report::model::filters(e),
            cells: vec![
                Cell::text(e.rec.algorithm.clone()),
                Cell::text(e.rec.operation.label()),
                Cell::text(e.rec.backend.clone()),
                Cell::text(member).below(format!("{} on {}", e.rec.device.name, e.host())),
                Cell::num(units::ops(ops)).from([e.src]).value(ops),
                Cell::text(e.src.to_string()).class("src"),
            ],
        });
    }
    t
}

/// Totals over devices and ranks: sum, spread, slowest member, energy.
pub fn aggregates_table(ds: &Dataset) -> Table {
    let mut t = Table::new(
        "t-aggregates",
        &[
            "Scope",
            "Algorithm",
            "Operation",
            "Backend",
            "Members",
            "Total ops/s",
            "Min / median / max",
            "Imbalance",
            "Slowest",
            "Energy/op",
            "Peak power",
            "Source",
        ],
        false,
    );
    for (f, run) in ds.runs.iter().enumerate() {
        // Totals over emulated records are no speed: run file only.
        for (_, a) in run.aggregates.iter().filter(|(_, a)| !a.emulated) {
            t.rows.push(aggregate_row(f, a));
        }
    }
    t
}

fn aggregate_row(file: usize, a: &Aggregate) -> Row {
    let src: Vec<SrcRef> = a
        .records
        .iter()
        .map(|&index| SrcRef { file, index })
        .collect();
    let total = match a.total_ops_per_sec {
        Some(v) => Cell::num(units::ops(v))
            .below(a.overlap.clone())
            .from(src.clone())
            .value(v),
        None => Cell::text("no total").below(a.overlap.clone()).class("bad"),
    };
    let (spread, imbalance, slowest) = match &a.spread {
        Some(s) => (
            Cell::num(format!(
                "{} / {} / {}",
                units::ops(s.min_ops_per_sec),
                units::ops(s.median_ops_per_sec),
                units::ops(s.max_ops_per_sec)
            )),
            Cell::num(format!("{:.1}%", s.imbalance_pct)),
            Cell::text(s.slowest.clone()),
        ),
        None => (Cell::empty(), Cell::empty(), Cell::empty()),
    };
    let mut members = Cell::num(format!(
        "{} of {}",
        a.members.len() - a.not_ok.len(),
        a.members.len()
    ));
    if !a.not_ok.is_empty() {
        members = members.below(format!("not ok: {}", a.not_ok.join(", ")));
    }
    Row {
        filters: vec![],
        cells: vec![
            Cell::text(a.scope.clone()),
            Cell::text(a.algorithm.clone()),
            Cell::text(a.operation.label()),
            Cell::text(a.backend.clone()),
            members,
            total,
            spread,
            imbalance,
            slowest,
            a.energy_per_op_uj
                .map(|v| Cell::num(format!("{} µJ", units::sig3(v))))
                .unwrap_or_else(Cell::empty),
            a.peak_power_w
                .map(|v| Cell::num(format!("{} W", units::sig3(v))))
                .unwrap_or_else(Cell::empty),
            Cell::text(crate::report::model::src_list(src, " ")).class("src"),
        ],
    }
}
