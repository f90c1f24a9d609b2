//! What a throughput-against-batch curve says: the saturation batch (the
//! smallest batch reaching 95% of the peak measured) and the break-even
//! batch against a CPU (the smallest batch from which the GPU is ahead at
//! every larger batch measured). Pure arithmetic on measured points, so the
//! report and the tests share one definition.

use serde::Serialize;

/// Share of the peak a batch must reach to count as saturating the device.
pub const SATURATION_FRACTION: f64 = 0.95;

/// One measured batch: its size and its median throughput.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Operations per batch.
    pub batch: usize,
    /// Median operations per second.
    pub ops_per_sec: f64,
}

/// Points with a usable throughput, sorted by batch; for a batch measured
/// more than once, the last point given wins.
pub fn clean(points: &[Point]) -> Vec<Point> {
    let mut v: Vec<Point> = vec![];
    for p in points
        .iter()
        .filter(|p| p.batch > 0 && p.ops_per_sec.is_finite() && p.ops_per_sec > 0.0)
    {
        match v.iter_mut().find(|q| q.batch == p.batch) {
            Some(q) => *q = *p,
            None => v.push(*p),
        }
    }
    v.sort_by_key(|p| p.batch);
    v
}

/// Saturation of one curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Saturation {
    /// Smallest batch measured at 95% of the peak or more.
    pub batch: usize,
    /// The peak throughput measured, ops/s.
    pub peak_ops_per_sec: f64,
    /// The batch the peak was measured at.
    pub peak_batch: usize,
    /// Whether the peak is the largest batch measured: the curve may still
    /// rise beyond the range, so the saturation batch is a lower bound.
    pub peak_at_top: bool,
}

/// The saturation batch of a curve; `None` with fewer than two batches
/// (one point says nothing about where a curve flattens).
pub fn saturation(points: &[Point]) -> Option<Saturation> {
    let v = clean(points);
    if v.len() < 2 {
        return None;
    }
    let peak = v
        .iter()
        .copied()
        .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))?;
    let first = v
        .iter()
        .find(|p| p.ops_per_sec >= SATURATION_FRACTION * peak.ops_per_sec)?;
    Some(Saturation {
        batch: first.batch,
        peak_ops_per_sec: peak.ops_per_sec,
        peak_batch: peak.batch,
        peak_at_top: v.last().map(|p| p.batch) == Some(peak.batch),
    })
}

/// Where a GPU curve crosses a CPU's throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BreakEven {
    /// From this batch on (it and every larger batch measured) the GPU is
    /// ahead. When it is the smallest batch measured, the GPU was ahead at
    /// every batch, so the true break-even may be smaller still.
    At {
        /// The batch.
        batch: usize,
        /// Whether it is the smallest batch measured.
        smallest_measured: bool,
    },
    /// The GPU is not ahead at the largest batch measured.
    NeverInRange {
        /// The largest batch measured.
        largest_measured: usize,
    },
}

/// The break-even batch of a GPU curve against a CPU throughput; `None`
/// without a usable point or CPU figure.
pub fn break_even(gpu: &[Point], cpu_ops_per_sec: f64) -> Option<BreakEven> {
    let v = clean(gpu);
    if v.is_empty() || !(cpu_ops_per_sec.is_finite() && cpu_ops_per_sec > 0.0) {
        return None;
    }
    // Walk down from the largest batch while the GPU stays ahead: a noisy
    // curve that dips back below the CPU resets the crossing.
    let mut from = None;
    for (i, p) in v.iter().enumerate().rev() {
        if p.ops_per_sec > cpu_ops_per_sec {
            from = Some(i);
        } else {
            break;
        }
    }
    Some(match from {
        Some(i) => BreakEven::At {
            batch: v[i].batch,
            smallest_measured: i == 0,
        },
        None => BreakEven::NeverInRange {
            largest_measured: v.last().map(|p| p.batch).unwrap_or(0),
        },
    })
}

impl BreakEven {
    /// In words: `from a batch of 4,096`, `never in the range measured (up
    /// to 1,048,576)`.
    pub fn words(&self) -> String {
        let g = |n: usize| crate::core::units::grouped(n as f64);
        match *self {
            BreakEven::At {
                batch,
                smallest_measured: false,
            } => format!("from a batch of {}", g(batch)),
            BreakEven::At {
                batch,
                smallest_measured: true,
            } => format!(
                "at every batch measured (from {}, the smallest; it may break even below)",
                g(batch)
            ),
            BreakEven::NeverInRange { largest_measured } => format!(
                "never in the range measured (up to a batch of {})",
                g(largest_measured)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(v: &[(usize, f64)]) -> Vec<Point> {
        v.iter()
            .map(|&(batch, ops_per_sec)| Point { batch, ops_per_sec })
            .collect()
    }

    #[test]
    fn saturation_of_a_rising_then_flat_curve() {
        let c = curve(&[
            (1, 10.0),
            (4, 40.0),
            (16, 150.0),
            (64, 500.0),
            (256, 960.0),
            (1024, 1000.0),
        ]);
        let s = saturation(&c).unwrap();
        assert_eq!(s.batch, 256); // 960 >= 950
        assert_eq!(s.peak_batch, 1024);
        assert_eq!(s.peak_ops_per_sec, 1000.0);
        assert!(s.peak_at_top);
        // Order of the input does not matter.
        let mut r = c.clone();
        r.reverse();
        assert_eq!(saturation(&r), Some(s));
    }

    #[test]
    fn saturation_of_a_noisy_curve_uses_the_peak_measured() {
        // A peak in the middle, then a dip: the peak is not at the top.
        let c = curve(&[(1, 100.0), (4, 380.0), (16, 400.0), (64, 370.0)]);
        let s = saturation(&c).unwrap();
        assert_eq!(s.batch, 4); // 380 >= 0.95 * 400
        assert_eq!(s.peak_batch, 16);
        assert!(!s.peak_at_top);
        // One point, or none usable: nothing to say.
        assert_eq!(saturation(&curve(&[(8, 5.0)])), None);
        assert_eq!(saturation(&curve(&[(8, 5.0), (9, f64::NAN)])), None);
        assert_eq!(saturation(&[]), None);
    }

    #[test]
    fn break_even_when_the_gpu_overtakes() {
        let gpu = curve(&[(1, 10.0), (32, 300.0), (1024, 9000.0), (32768, 40000.0)]);
        assert_eq!(
            break_even(&gpu, 5000.0),
            Some(BreakEven::At {
                batch: 1024,
                smallest_measured: false
            })
        );
        // Equal is not ahead.
        assert_eq!(
            break_even(&gpu, 9000.0),
            Some(BreakEven::At {
                batch: 32768,
                smallest_measured: false
            })
        );
        assert_eq!(
            break_even(&gpu, 1.0),
            Some(BreakEven::At {
                batch: 1,
                smallest_measured: true
            })
        );
    }

    #[test]
    fn break_even_never_in_range() {
        let gpu = curve(&[(1, 10.0), (1024, 900.0), (32768, 4000.0)]);
        let b = break_even(&gpu, 5000.0).unwrap();
        assert_eq!(
            b,
            BreakEven::NeverInRange {
                largest_measured: 32768
            }
        );
        assert!(b.words().contains("never"), "{}", b.words());
        assert!(b.words().contains("32,768"), "{}", b.words());
        assert_eq!(break_even(&gpu, 0.0), None);
        assert_eq!(break_even(&[], 10.0), None);
    }

    #[test]
    fn break_even_of_a_noisy_curve_needs_the_gpu_ahead_from_there_on() {
        // Ahead at 16, behind again at 64 (noise), ahead from 256 on.
        let gpu = curve(&[
            (4, 50.0),
            (16, 120.0),
            (64, 90.0),
            (256, 400.0),
            (1024, 800.0),
        ]);
        assert_eq!(
            break_even(&gpu, 100.0),
            Some(BreakEven::At {
                batch: 256,
                smallest_measured: false
            })
        );
        // Ahead in the middle but behind at the top: never, from there.
        let dip = curve(&[(4, 50.0), (16, 120.0), (64, 90.0)]);
        assert!(matches!(
            break_even(&dip, 100.0),
            Some(BreakEven::NeverInRange { .. })
        ));
    }
}
