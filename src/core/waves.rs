//! Waves: a launch of `blocks` blocks runs in rounds of (multiprocessors x
//! resident blocks per multiprocessor) blocks, the latter from the driver's
//! occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor). A
//! last round that is only partly full leaves multiprocessors idle, so a
//! batch of 1.48 waves runs at about 1.48 / 2 of the steady-state rate.
//! GPU batches are therefore sized in whole waves, and every GPU record
//! says how many waves it ran and how full the last one was.

use serde::{Deserialize, Serialize};

/// Fewest waves a default GPU batch spans: the one partial wave a user's
/// own batch may have then costs at most 1/20 of the throughput.
pub const MIN_WAVES: u64 = 20;

/// The waves of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Waves {
    /// Blocks the device runs at once: multiprocessors x resident blocks.
    pub blocks_per_wave: u64,
    /// Waves the launch takes (the last one possibly partial).
    pub waves: u64,
    /// Exact waves: blocks / blocks_per_wave (1.48 for 1.48 waves).
    pub exact_waves: f64,
    /// How full the last wave is, percent (100 for whole waves).
    pub last_wave_fill_pct: f64,
}

/// The waves of a launch of `blocks` blocks on `sms` multiprocessors that
/// each hold `resident_per_sm` blocks; `None` when a figure is zero.
pub fn waves(blocks: u64, sms: u64, resident_per_sm: u64) -> Option<Waves> {
    let per_wave = sms.checked_mul(resident_per_sm).filter(|w| *w > 0)?;
    if blocks == 0 {
        return None;
    }
    let waves = blocks.div_ceil(per_wave);
    let rest = blocks - (waves - 1) * per_wave;
    Some(Waves {
        blocks_per_wave: per_wave,
        waves,
        exact_waves: blocks as f64 / per_wave as f64,
        last_wave_fill_pct: 100.0 * rest as f64 / per_wave as f64,
    })
}

/// The smallest batch of whole waves that spans at least `MIN_WAVES` waves
/// and holds at least `at_least` operations (one operation per thread);
/// `None` when a figure is zero.
pub fn full_wave_batch(
    sms: u64,
    resident_per_sm: u64,
    threads_per_block: u64,
    at_least: u64,
) -> Option<u64> {
    let ops_per_wave = sms
        .checked_mul(resident_per_sm)?
        .checked_mul(threads_per_block)
        .filter(|w| *w > 0)?;
    let n = MIN_WAVES.max(at_least.div_ceil(ops_per_wave));
    n.checked_mul(ops_per_wave)
}

/// The largest batch of whole waves not above `limit` (what fits in
/// memory), or `limit` itself when not even one wave fits.
pub fn whole_waves_below(limit: u64, sms: u64, resident_per_sm: u64, tpb: u64) -> u64 {
    let per_wave = sms.saturating_mul(resident_per_sm).saturating_mul(tpb);
    if per_wave == 0 || limit < per_wave {
        return limit;
    }
    limit / per_wave * per_wave
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issues_h200_example() {
        // 100,000 operations at 128 threads per block: 782 blocks. An H200
        // has 132 SMs; at 4 blocks per SM a wave is 528 blocks.
        let w = waves(782, 132, 4).unwrap();
        assert_eq!(w.waves, 2);
        assert_eq!(w.blocks_per_wave, 528);
        // Second wave: 254 of 528 blocks, 48% full.
        assert!((w.last_wave_fill_pct - 48.106).abs() < 0.01, "{w:?}");
        // 1.48 waves of work in 2 waves' time: about 74% of steady state.
        assert!((w.exact_waves / w.waves as f64 - 0.7405).abs() < 0.001);
        // At 5 blocks per SM (mlkem512_keygen): 660 per wave, 1.18 waves,
        // about 59%.
        let w5 = waves(782, 132, 5).unwrap();
        assert_eq!(w5.waves, 2);
        assert!((w5.exact_waves / 2.0 - 0.5924).abs() < 0.001);
        // Whole waves are 100% full.
        assert_eq!(waves(1056, 132, 4).unwrap().last_wave_fill_pct, 100.0);
        assert_eq!(waves(0, 132, 4), None);
        assert_eq!(waves(10, 0, 4), None);
        assert_eq!(waves(10, 132, 0), None);
    }

    #[test]
    fn default_batches_fill_at_least_twenty_whole_waves() {
        // H200, 4 blocks of 128: 67,584 operations per wave; 20 waves.
        assert_eq!(full_wave_batch(132, 4, 128, 100_000), Some(1_351_680));
        let b = full_wave_batch(132, 4, 128, 100_000).unwrap();
        let w = waves(b / 128, 132, 4).unwrap();
        assert_eq!((w.waves, w.last_wave_fill_pct), (20, 100.0));
        // A small GPU: never below cuPQC_benchmark's 100,000; whole waves.
        // 20 SMs x 2 blocks x 128 = 5,120 per wave; 20 waves = 102,400.
        assert_eq!(full_wave_batch(20, 2, 128, 100_000), Some(102_400));
        // 10 SMs x 1 block x 128 = 1,280 per wave: 79 waves for 100,000.
        assert_eq!(full_wave_batch(10, 1, 128, 100_000), Some(101_120));
        assert_eq!(full_wave_batch(0, 4, 128, 100_000), None);
    }

    #[test]
    fn memory_caps_round_down_to_whole_waves() {
        assert_eq!(whole_waves_below(1_000_000, 132, 4, 128), 946_176);
        assert_eq!(whole_waves_below(1000, 132, 4, 128), 1000);
        assert_eq!(whole_waves_below(1000, 0, 4, 128), 1000);
    }
}
