//! CSV in pqc-sig-bench-c's layout: `# key: value` metadata lines, then the
//! column header as a `# ` comment line, then one row per (algorithm,
//! operation):
//!
//! ```text
//! # date:           2026-05-20T08:19:30
//! # liboqs:         0.13.0
//! ...
//! # algorithm,operation,ms_per_op,ops_per_sec,iterations
//! ML-DSA-44,keygen,0.028086,35604.490,356045
//! ```
//!
//! The columns are defined once, in [`COLUMNS`]. Algorithms are named as
//! pqc-sig-bench-c names them ([`crate::core::catalog::sig_bench_name`]),
//! so rows join with its datasets; the run file keeps pqcprof's names.

use crate::core::catalog::sig_bench_name;
use crate::schema::record::{Record, Status};
use anyhow::{bail, Context, Result};

/// One column: its header name and how a record fills it.
pub struct Column {
    /// Header name.
    pub name: &'static str,
    /// The cell for a record.
    pub cell: fn(&Record) -> String,
}

/// The columns, in order (pqc-sig-bench-c's).
pub const COLUMNS: [Column; 5] = [
    Column {
        name: "algorithm",
        cell: |r| sig_bench_name(&r.algorithm).to_string(),
    },
    Column {
        name: "operation",
        cell: |r| r.operation.cli_name().to_string(),
    },
    Column {
        name: "ms_per_op",
        cell: |r| format!("{:.6}", r.ms_per_op.unwrap_or(f64::NAN)),
    },
    Column {
        name: "ops_per_sec",
        cell: |r| format!("{:.3}", r.ops_per_sec.unwrap_or(f64::NAN)),
    },
    Column {
        name: "iterations",
        cell: |r| r.iterations.unwrap_or(0).to_string(),
    },
];

/// `cell` as a spreadsheet will read it as text, never as a formula: text
/// that starts with `=`, `+`, `-` or `@` (or a tab or carriage return,
/// which some spreadsheets skip before one) gets a leading `'`, as OWASP's
/// advice on CSV injection has it. A number, negative or not, is kept.
pub fn neutral(cell: &str) -> std::borrow::Cow<'_, str> {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && cell.trim().parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// The header line (without the `# ` prefix).
pub fn header() -> String {
    COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(",")
}

/// The whole file: `meta` as `# key: value` lines, the header, then every
/// `ok` record in order.
pub fn render(meta: &[(String, String)], records: &[&Record]) -> String {
    let width = meta.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    let mut s = String::new();
    for (k, v) in meta {
        s += &format!("# {:<width$} {}\n", format!("{k}:"), v.replace('\n', " "));
    }
    s += &format!("# {}\n", header());
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|c| neutral(&(c.cell)(r)).into_owned())
            .collect();
        s += &cells.join(",");
        s.push('\n');
    }
    s
}

/// The `date` line as pqc-sig-bench-c writes it, `2026-05-20T08:19:30`:
/// seconds, no zone suffix (Python 3.10's `datetime.fromisoformat` rejects
/// a trailing `Z`). pqcprof's dates are UTC, which the `timezone` line
/// says. A date that is not RFC 3339 is kept as it is.
pub fn sig_bench_date(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|d| {
            d.with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// Seconds as pqc-sig-bench-c writes its windows: an integer when whole
/// (`1`, `10`), else the shortest decimal (`0.25`).
pub fn seconds(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e15 {
        format!("{}", s as i64)
    } else {
        s.to_string()
    }
}

/// A parsed CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Metadata, in order.
    pub meta: Vec<(String, String)>,
    /// Rows: one string per column of [`COLUMNS`].
    pub rows: Vec<Vec<String>>,
}

/// Parses a file in this layout, checking the header and every row.
pub fn parse(text: &str) -> Result<Parsed> {
    let mut meta = vec![];
    let mut rows = vec![];
    let mut seen_header = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            if rest == header() {
                seen_header = true;
            } else if let Some((k, v)) = rest.split_once(':') {
                if seen_header {
                    bail!("line {}: metadata after the header", i + 1);
                }
                meta.push((k.trim().to_string(), v.trim().to_string()));
            } else {
                bail!("line {}: neither metadata nor the header: {line}", i + 1);
            }
            continue;
        }
        if !seen_header {
            bail!("line {}: a row before the header", i + 1);
        }
        let cells: Vec<String> = line.split(',').map(str::to_string).collect();
        if cells.len() != COLUMNS.len() {
            bail!(
                "line {}: {} cells, expected {}",
                i + 1,
                cells.len(),
                COLUMNS.len()
            );
        }
        cells[2]
            .parse::<f64>()
            .with_context(|| format!("line {}: ms_per_op", i + 1))?;
        cells[3]
            .parse::<f64>()
            .with_context(|| format!("line {}: ops_per_sec", i + 1))?;
        cells[4]
            .parse::<u64>()
            .with_context(|| format!("line {}: iterations", i + 1))?;
        rows.push(cells);
    }
    if !seen_header {
        bail!("no header line '# {}'", header());
    }
    Ok(Parsed { meta, rows })
}

/// `<timestamp>_<arch>_<hostname>_<type>.csv` (as pqc-sig-bench-c:
/// `x86_64` keeps its underscore), with characters unsafe in file names
/// replaced by `-`.
pub fn file_name(timestamp: &str, arch: &str, hostname: &str, kind: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-._".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    format!(
        "{}_{}_{}_{}.csv",
        clean(timestamp),
        clean(arch),
        clean(hostname),
        clean(kind)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{Kind, Operation};
    use crate::schema::device::{Device, DeviceKind};

    #[test]
    fn header_comes_from_the_columns() {
        assert_eq!(
            header(),
            "algorithm,operation,ms_per_op,ops_per_sec,iterations"
        );
    }

    #[test]
    fn render_then_parse() {
        let meta = vec![
            ("date".to_string(), "2026-01-01T00:00:00".to_string()),
            ("cpu".into(), "x: y".into()),
        ];
        let text = render(&meta, &[]);
        let p = parse(&text).unwrap();
        assert_eq!(p.meta[1], ("cpu".to_string(), "x: y".to_string()));
        assert!(p.rows.is_empty());
        assert!(parse("a,b\n").is_err());
        assert_eq!(
            sig_bench_date("2026-05-20T08:19:30Z"),
            "2026-05-20T08:19:30"
        );
        assert_eq!(
            sig_bench_date("2026-05-20T10:19:30+02:00"),
            "2026-05-20T08:19:30"
        );
        assert_eq!(seconds(1.0), "1");
        assert_eq!(seconds(10.0), "10");
        assert_eq!(seconds(0.25), "0.25");
        assert_eq!(
            file_name("20260101T000000", "x86_64", "my host", "liboqs"),
            "20260101T000000_x86_64_my-host_liboqs.csv"
        );
    }

    #[test]
    fn a_cell_is_never_a_formula() {
        assert_eq!(neutral("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(neutral("+1+1"), "'+1+1");
        assert_eq!(neutral("-cmd"), "'-cmd");
        assert_eq!(neutral("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(neutral("\t=1"), "'\t=1");
        // Numbers and plain text are kept as they are.
        assert_eq!(neutral("-0.250000"), "-0.250000");
        assert_eq!(neutral("+3"), "+3");
        assert_eq!(neutral("ML-KEM-512"), "ML-KEM-512");
        assert_eq!(neutral(""), "");
        let mut r = measured("=1+1", Operation::Sign, 3, 1.0);
        r.status = Status::Ok;
        let text = render(&[], &[&r]);
        assert!(text.lines().last().unwrap().starts_with("'=1+1,"), "{text}");
    }

    /// A sweep-like record: `iterations` operations in `seconds`.
    fn measured(alg: &str, op: Operation, iterations: u64, seconds: f64) -> Record {
        let mut r = Record::unmeasured(
            "liboqs-cpu".into(),
            Device {
                kind: DeviceKind::Cpu,
                name: "test CPU".into(),
                memory_total_mb: 1,
            },
            "liboqs".into(),
            alg.into(),
            "test".into(),
            Kind::Signature,
            op,
        );
        r.status = Status::Ok;
        r.iterations = Some(iterations);
        r.ops_per_sec = Some(iterations as f64 / seconds);
        r.ms_per_op = Some(seconds * 1000.0 / iterations as f64);
        r
    }

    #[test]
    fn rows_are_the_ok_records_and_failed_ones_are_left_out() {
        let sign = measured("ML-DSA-44", Operation::Sign, 3000, 0.25);
        let verify = measured("ML-DSA-44", Operation::Verify, 7, 0.5);
        let mut failed = measured("Falcon-512", Operation::Sign, 5, 1.0);
        failed.status = Status::Failed;
        let text = render(&[], &[&sign, &failed, &verify]);
        let p = parse(&text).unwrap();
        assert_eq!(
            p.rows,
            [
                ["ML-DSA-44", "sign", "0.083333", "12000.000", "3000"],
                ["ML-DSA-44", "verify", "71.428571", "14.000", "7"],
            ]
        );
    }
}
