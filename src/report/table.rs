//! A table as data, rendered by both the HTML and the Markdown writers, so
//! the two formats cannot disagree about a figure.

use crate::report::model::SrcRef;
use std::collections::BTreeMap;

/// One cell.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    /// Main text.
    pub text: String,
    /// A second, smaller line (ops/s under a time, for example).
    pub sub: Option<String>,
    /// Records the figure comes from.
    pub src: Vec<SrcRef>,
    /// Position between slowest (0) and fastest (1) within its group, for
    /// shading.
    pub shade: Option<f64>,
    /// The exact value behind the text, for `data-value`.
    pub value: Option<f64>,
    /// Right-aligned numeric cell.
    pub numeric: bool,
    /// Extra CSS class (`good`, `bad`, `muted`).
    pub class: Option<&'static str>,
    /// A ratio of two records this cell prints, for the audit
    /// (`data-fig="ratio"`).
    pub ratio: Option<Marked>,
    /// Known-answer failures of the code behind the figure, when it failed
    /// some: the mark shown with it.
    pub kat: Option<String>,
}

/// A ratio of two records' throughputs as a view prints it, written into
/// the HTML (`data-fig="ratio" data-num data-den data-value data-ci`) so
/// the audit can re-derive it from the records' runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marked {
    /// The record whose throughput is the numerator.
    pub num: SrcRef,
    /// The denominator's.
    pub den: SrcRef,
    /// `num / den` ([`crate::analyse::estimate::ratio`]).
    pub value: f64,
    /// Its 95% interval.
    pub ci95: Option<[f64; 2]>,
}

impl Marked {
    /// The ratio of `num`'s throughput over `den`'s as it is (below 1
    /// when `num` is slower).
    pub fn of(num: SrcRef, den: SrcRef, r: crate::analyse::estimate::Ratio) -> Marked {
        Marked {
            num,
            den,
            value: r.value,
            ci95: r.ci95,
        }
    }

    /// The ratio of `num`'s throughput over `den`'s, read from the side
    /// ahead (at least 1): which records, the ratio, its interval.
    pub fn ahead(num: SrcRef, den: SrcRef, r: crate::analyse::estimate::Ratio) -> Marked {
        let (m, as_is) = r.magnitude();
        let (num, den) = if as_is { (num, den) } else { (den, num) };
        Marked {
            num,
            den,
            value: m.value,
            ci95: m.ci95,
        }
    }
}

impl Cell {
    /// A plain text cell.
    pub fn text(s: impl Into<String>) -> Self {
        Cell {
            text: s.into(),
            ..Cell::default()
        }
    }

    /// A right-aligned figure.
    pub fn num(s: impl Into<String>) -> Self {
        Cell {
            text: s.into(),
            numeric: true,
            ..Cell::default()
        }
    }

    /// An empty cell (nothing measured).
    pub fn empty() -> Self {
        Cell {
            text: "–".into(),
            numeric: true,
            class: Some("muted"),
            ..Cell::default()
        }
    }

    /// Adds the records behind the figure.
    pub fn from(mut self, src: impl IntoIterator<Item = SrcRef>) -> Self {
        self.src.extend(src);
        self
    }

    /// Adds a second line.
    pub fn below(mut self, s: impl Into<String>) -> Self {
        self.sub = Some(s.into());
        self
    }

    /// Adds a CSS class.
    pub fn class(mut self, c: &'static str) -> Self {
        self.class = Some(c);
        self
    }

    /// Records the exact value.
    pub fn value(mut self, v: f64) -> Self {
        self.value = Some(v);
        self
    }

    /// Marks the cell as printing a ratio of two records.
    pub fn ratio(mut self, m: Marked) -> Self {
        self.ratio = Some(m);
        self
    }
}

/// One row with the attributes the filters test.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// `(name, value)` pairs written as `data-name="value"`; rows with any
    /// are hidden or shown by the filters.
    pub filters: Vec<(&'static str, String)>,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// A titled table.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// HTML id (also the anchor).
    pub id: String,
    /// Column headings.
    pub headers: Vec<String>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Whether shading is meaningful (adds the legend).
    pub shaded: bool,
}

impl Table {
    /// A table with these column headings and no rows yet.
    pub fn new(id: impl Into<String>, headers: &[&str], shaded: bool) -> Self {
        Table {
            id: id.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: vec![],
            shaded,
        }
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// For each column, whether any row has a numeric (right-aligned) cell
    /// in it.
    pub fn numeric_columns(&self) -> Vec<bool> {
        (0..self.headers.len())
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.cells.get(i))
                    .any(|c| c.numeric)
            })
            .collect()
    }
}

/// Compares names so that `ML-KEM-512 < ML-KEM-768 < ML-KEM-1024`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = vec![];
        for c in s.chars() {
            let d = c.is_ascii_digit();
            match out.last_mut() {
                Some((kind, text)) if *kind == d => text.push(c),
                _ => out.push((d, c.to_string())),
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                let (p, q) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            _ => x.1.to_ascii_lowercase().cmp(&y.1.to_ascii_lowercase()),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len())
}

/// Shades values on a log scale within one group: 1 for the best, 0 for
/// the worst; `None` when the group has fewer than two distinct values.
pub fn shades(values: &[f64], higher_is_better: bool) -> Vec<Option<f64>> {
    let logs: Vec<Option<f64>> = values
        .iter()
        .map(|v| (v.is_finite() && *v > 0.0).then(|| v.ln()))
        .collect();
    let lo = logs.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let hi = logs
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    if hi.is_nan() || lo.is_nan() || hi - lo <= 1e-9 {
        return vec![None; values.len()];
    }
    logs.iter()
        .map(|l| {
            l.map(|l| {
                let t = (l - lo) / (hi - lo);
                if higher_is_better {
                    t
                } else {
                    1.0 - t
                }
            })
        })
        .collect()
}

/// [`shades`] within groups: each item is `(position, group, value)`, and
/// the result has one shade per position in `0..len`, `None` where no item
/// stands or its group has fewer than two distinct values.
pub fn shades_by_group<K: Ord>(
    len: usize,
    items: impl IntoIterator<Item = (usize, K, f64)>,
    higher_is_better: bool,
) -> Vec<Option<f64>> {
    let mut groups: BTreeMap<K, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, k, v) in items {
        groups.entry(k).or_default().push((i, v));
    }
    let mut out = vec![None; len];
    for members in groups.values() {
        let vals: Vec<f64> = members.iter().map(|m| m.1).collect();
        for ((i, _), s) in members.iter().zip(shades(&vals, higher_is_better)) {
            out[*i] = s;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = vec!["ML-KEM-1024", "ML-KEM-512", "ML-KEM-768", "ECDH-P256"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["ECDH-P256", "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]);
    }

    #[test]
    fn shading() {
        let s = shades(&[10.0, 100.0, 1000.0], true);
        assert_eq!(s[0], Some(0.0));
        assert!((s[1].unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(s[2], Some(1.0));
        assert_eq!(shades(&[5.0, 5.0], true), vec![None, None]);
    }

    #[test]
    fn shading_by_group() {
        // Positions 0 and 2 form one group, 3 stands alone, 1 has no value.
        let s = shades_by_group(4, [(0, "a", 10.0), (2, "a", 1000.0), (3, "b", 5.0)], false);
        assert_eq!(s, vec![Some(1.0), None, Some(0.0), None]);
    }
}
