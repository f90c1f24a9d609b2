//! Batch sizes a run measures: one batch, a list (`--batch 1,32,1k,32k,1M`)
//! or a sweep (`--batch-sweep`, powers of 4 from 1 up to a top). Parsing and
//! the sweep's points live here once, for every backend, CPU included.

use anyhow::bail;

/// Largest batch accepted, whatever the memory.
pub const MAX_BATCH: usize = 50_000_000;

/// Ratio between neighbouring batches of a sweep.
pub const SWEEP_FACTOR: usize = 4;

/// Top of a CPU sweep when none is named: 4^8. A CPU reaches its peak at
/// a batch of about its thread count, so larger batches only lengthen runs.
pub const CPU_SWEEP_TOP: usize = 65_536;

/// What the user asked for on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchRequest {
    /// No `--batch`: each backend's default (1000 on CPUs; on GPUs whole
    /// waves, see `gpu::waves::full_wave_batch`).
    Default,
    /// These batches, in the order given (duplicates dropped).
    List(Vec<usize>),
    /// Powers of 4 from 1 up to `top`, or, when `None`, up to what fits in
    /// the device's memory (GPU) or `CPU_SWEEP_TOP` (CPU).
    Sweep(Option<usize>),
}

/// What is valid, said once for every batch message.
const VALID: &str = "use whole numbers from 1 to 50000000, optionally with k (thousand) or M (million), e.g. --batch 1,32,1k,32k,1M";

/// Parses one count: `32`, `1k` (1000), `1M` (1,000,000).
pub fn parse_count(part: &str) -> Result<usize, String> {
    let p = part.trim();
    let (digits, scale) = match p.char_indices().last() {
        Some((i, 'k' | 'K')) => (&p[..i], 1_000u128),
        Some((i, 'm' | 'M')) => (&p[..i], 1_000_000u128),
        _ => (p, 1u128),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("'{p}' is not a batch size"));
    }
    // At most 39 digits fit a u128; anything that long is out of range.
    let n = digits
        .parse::<u128>()
        .ok()
        .and_then(|n| n.checked_mul(scale));
    match n {
        Some(0) => Err(format!("'{p}' is zero; a batch holds at least 1 operation")),
        Some(n) if n <= MAX_BATCH as u128 => Ok(n as usize),
        _ => Err(format!("'{p}' is larger than {MAX_BATCH}")),
    }
}

/// Parses `--batch`: one count or a comma-separated list.
pub fn parse_batch_list(s: &str) -> anyhow::Result<Vec<usize>> {
    let mut out = vec![];
    for part in s.split(',') {
        match parse_count(part) {
            Ok(n) if !out.contains(&n) => out.push(n),
            Ok(_) => {}
            Err(why) => bail!("invalid --batch {s}: {why}; {VALID}"),
        }
    }
    Ok(out)
}

/// Parses `--batch-sweep`'s optional top (`fit`, the default, for what fits).
pub fn parse_sweep_top(s: &str) -> anyhow::Result<Option<usize>> {
    if s.trim().eq_ignore_ascii_case("fit") {
        return Ok(None);
    }
    match parse_count(s) {
        Ok(n) => Ok(Some(n)),
        Err(why) => bail!(
            "invalid --batch-sweep {s}: {why}; give the largest batch (e.g. 1M) or `fit` for what fits in memory"
        ),
    }
}

/// Batches of a sweep up to `top`: 1, 4, 16, ... and `top` itself when it
/// is not a power of 4, so the largest batch asked for is measured.
pub fn sweep_points(top: usize) -> Vec<usize> {
    let mut v = vec![];
    let mut b = 1usize;
    while b <= top {
        v.push(b);
        match b.checked_mul(SWEEP_FACTOR) {
            Some(n) => b = n,
            None => break,
        }
    }
    if top >= 1 && v.last() != Some(&top) {
        v.push(top);
    }
    v
}

/// `1k` style for labels: 1000 -> `1k`, 1048576 -> `1048576`.
pub fn batch_label(n: usize) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_with_suffixes() {
        assert_eq!(
            parse_batch_list("1,32,1k,32k,1M").unwrap(),
            [1, 32, 1000, 32_000, 1_000_000]
        );
        assert_eq!(parse_batch_list(" 5 , 5,7K").unwrap(), [5, 7000]);
        assert_eq!(parse_batch_list("50M").unwrap(), [50_000_000]);
    }

    #[test]
    fn bad_lists_name_the_value_and_what_is_valid() {
        let e = |s: &str| parse_batch_list(s).unwrap_err().to_string();
        let zero = e("0,5");
        assert!(
            zero.contains("--batch 0,5") && zero.contains("'0' is zero"),
            "{zero}"
        );
        assert!(zero.contains("from 1 to 50000000"), "{zero}");
        let huge = e("1e99");
        assert!(huge.contains("'1e99' is not a batch size"), "{huge}");
        assert!(e("51M").contains("larger than 50000000"));
        assert!(e("99999999999999999999999999999999999999999999").contains("larger"));
        assert!(e("1,,2").contains("'' is not"));
        assert!(e("-3").contains("'-3'"));
        assert!(e("k").contains("'k'"));
        assert!(e("1.5k").contains("'1.5k'"));
    }

    #[test]
    fn sweeps_are_powers_of_four_up_to_the_top() {
        assert_eq!(sweep_points(1), [1]);
        assert_eq!(sweep_points(64), [1, 4, 16, 64]);
        assert_eq!(sweep_points(100), [1, 4, 16, 64, 100]);
        assert_eq!(sweep_points(CPU_SWEEP_TOP).len(), 9);
        assert!(sweep_points(0).is_empty());
        let big = sweep_points(usize::MAX);
        assert!(big.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(parse_sweep_top("fit").unwrap(), None);
        assert_eq!(parse_sweep_top("1M").unwrap(), Some(1_000_000));
        let e = parse_sweep_top("1G").unwrap_err().to_string();
        assert!(e.contains("--batch-sweep 1G"), "{e}");
    }

    #[test]
    fn batch_labels() {
        assert_eq!(batch_label(1000), "1k");
        assert_eq!(batch_label(1_000_000), "1M");
        assert_eq!(batch_label(65536), "65536");
        assert_eq!(batch_label(7), "7");
    }
}
