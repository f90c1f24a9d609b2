//! The tables `bench` prints when it ends: every record's median and
//! interval, and the GPU kernels' launch shape and resources.

use crate::schema::record::Status;
use crate::schema::run_file::RunFile;

/// A short table of what was measured.
pub fn summary_table(run: &RunFile) -> String {
    // The interval printed is the median's own (distribution-free), not the
    // mean's: the mean's can miss the median entirely on skewed runs.
    // As wide as the longest backend name (a plugin's can be long).
    let w = run
        .records
        .iter()
        .map(|r| r.backend.len())
        .max()
        .unwrap_or(0)
        .max(14);
    let mut s = format!(
        "{:<w$} {:>3}  {:<12} {:<7} {:>7}  {:>14} {:>10} {:>7} {:>14}  {}\n",
        "backend",
        "thr",
        "algorithm",
        "op",
        "status",
        "ops/s (median)",
        "ms/op",
        "batch",
        "end-to-end/s",
        "95% CI of the median (ops/s)"
    );
    for r in &run.records {
        let ci = r
            .throughput_ops_per_sec
            .as_ref()
            .and_then(|t| t.median_ci95)
            .map(|c| format!("{:.1} .. {:.1}", c.low, c.high))
            .unwrap_or_else(|| "-".into());
        let status = match r.status {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
        };
        s += &format!(
            "{:<w$} {:>3}  {:<12} {:<7} {:>7}  {:>14} {:>10} {:>7} {:>14}  {}\n",
            r.backend,
            r.threads,
            r.algorithm,
            r.operation.cli_name(),
            status,
            r.ops_per_sec
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            r.ms_per_op
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into()),
            crate::core::batching::batch_label(r.batch),
            r.end_to_end
                .as_ref()
                .and_then(|e| e.ops_per_sec)
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| "-".into()),
            ci,
        );
    }
    s
}

/// The kernels behind the GPU records: launch, registers, local memory and
/// occupancy, the first things that explain a GPU throughput. `None` when
/// no record timed one of our kernels.
pub fn kernel_table(records: &[crate::schema::record::Record]) -> Option<String> {
    let rows: Vec<_> = records
        .iter()
        .filter_map(|r| r.kernel.as_ref().map(|k| (r, k)))
        .collect();
    let image = rows.first()?.1.image.clone();
    let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let mut s = format!(
        "{:<16} {:>7} {:>7} {:>5} {:>11} {:>9} {:>10} {:>6} {:>9}\n",
        "kernel",
        "blocks",
        "thr/blk",
        "regs",
        "local B/thr",
        "blk/SM",
        "occupancy",
        "waves",
        "last wave"
    );
    for (r, k) in &rows {
        if r.mode == crate::schema::record::Mode::Latency {
            continue;
        }
        let (waves, last) = match k.waves {
            Some(w) => (
                format!("{:.2}", w.exact_waves),
                format!("{:.0}%", w.last_wave_fill_pct),
            ),
            None => ("-".into(), "-".into()),
        };
        s += &format!(
            "{:<16} {:>7} {:>7} {:>5} {:>11} {:>9} {:>10} {:>6} {:>9}\n",
            k.name,
            k.blocks,
            k.threads_per_block,
            opt(k.registers_per_thread),
            opt(k.local_bytes_per_thread),
            opt(k.resident_blocks_per_sm),
            k.occupancy_pct
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "-".into()),
            waves,
            last,
        );
    }
    s += &format!("kernels loaded as: {image}\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::Algorithm;

    #[test]
    fn kernel_table_lists_gpu_kernels_only() {
        use crate::schema::device::KernelInfo;
        assert!(kernel_table(&[]).is_none(), "no records, no table");
        let cfg = crate::measure::runner::MeasureConfig {
            batch: crate::backend::BatchConfig {
                batch: 100_000,
                threads: 1,
                message_size: 0,
                context: vec![],
                gate: Default::default(),
            },
            runs: 1,
            warmup_runs: 1,
            mode: crate::schema::record::Mode::Throughput,
            timing: Default::default(),
        };
        let mut gpu = crate::measure::runner::skipped(
            &crate::backend::mock::Mock::default(),
            Algorithm::MlKem768,
            crate::core::catalog::Operation::KeyGen,
            &cfg,
            String::from("mock (test only)"),
        );
        let mut records = vec![gpu.clone()];
        assert!(
            kernel_table(&records).is_none(),
            "a record without a kernel"
        );
        gpu.kernel = Some(KernelInfo {
            name: "mlkem768_keygen".into(),
            image: "sm_90 machine code from NVRTC 13.0 (mock)".into(),
            variant: "thread".into(),
            threads_per_block: 128,
            shared_bytes_per_block: None,
            blocks: 782,
            registers_per_thread: Some(128),
            local_bytes_per_thread: Some(3104),
            resident_blocks_per_sm: Some(4),
            occupancy_pct: Some(25.0),
            multiprocessors: Some(132),
            waves: crate::core::waves::waves(782, 132, 4),
        });
        records.push(gpu);
        let t = kernel_table(&records).unwrap();
        let row = t
            .lines()
            .find(|l| l.starts_with("mlkem768_keygen"))
            .unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "mlkem768_keygen",
                "782",
                "128",
                "128",
                "3104",
                "4",
                "25.0%",
                "1.48",
                "48%"
            ]
        );
        assert!(t.ends_with("kernels loaded as: sm_90 machine code from NVRTC 13.0 (mock)\n"));
    }
}
