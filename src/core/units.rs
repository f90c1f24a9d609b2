//! How figures are written in the report: grouped digits, units that fit
//! the magnitude, ratios with the right number of digits.

/// `1234567.8` as `1,234,568`.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    // Beyond a quadrillion digits say nothing: 1e308 would print 309.
    if v.abs() >= 1e15 {
        return format!("{v:.3e}");
    }
    let neg = v < 0.0;
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

/// Three significant digits, grouped when large: `0.0123`, `4.56`, `78.9`,
/// `1,234`.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        grouped(v)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else if a < 1e-6 {
        // 5e-324 would print 325 decimals.
        format!("{v:.2e}")
    } else {
        let decimals = (-a.log10().floor()) as usize + 2;
        format!("{v:.decimals$}")
    }
}

/// Operations per second: `83,791/s`, `1.24 M/s`.
pub fn ops(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v >= 1e9 {
        format!("{} G/s", sig3(v / 1e9))
    } else if v >= 1e7 {
        format!("{} M/s", sig3(v / 1e6))
    } else if v >= 100.0 {
        format!("{}/s", grouped(v))
    } else {
        format!("{}/s", sig3(v))
    }
}

/// A duration given in milliseconds, in the unit that suits it.
pub fn time_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "–".into()
    } else if ms >= 1000.0 {
        format!("{} s", sig3(ms / 1000.0))
    } else if ms >= 1.0 {
        format!("{} ms", sig3(ms))
    } else if ms >= 0.001 {
        format!("{} µs", sig3(ms * 1000.0))
    } else {
        format!("{} ns", sig3(ms * 1e6))
    }
}

/// Bytes: `1,184 B`.
pub fn bytes(b: usize) -> String {
    format!("{} B", grouped(b as f64))
}

/// A ratio ≥ 1: `7.6×`, `12×`, `1,081×`.
pub fn ratio(r: f64) -> String {
    if !r.is_finite() {
        "–".into()
    } else if r >= 100.0 {
        format!("{}×", grouped(r))
    } else if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

/// A percentage change: `+12.3%`, `-50.0%`.
pub fn pct(change: f64) -> String {
    if !change.is_finite() {
        "–".into()
    } else {
        format!("{:+.1}%", change * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(grouped(1234567.8), "1,234,568");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(ops(83790.7), "83,791/s");
        assert_eq!(ops(12_345_678.0), "12.3 M/s");
        assert_eq!(ops(12.345), "12.3/s");
        assert_eq!(time_ms(0.0119), "11.9 µs");
        assert_eq!(time_ms(284.7), "285 ms");
        assert_eq!(time_ms(0.0000123), "12.3 ns");
        assert_eq!(ratio(7.64), "7.6×");
        assert_eq!(ratio(3062.0), "3,062×");
        assert_eq!(sig3(0.00456), "0.00456");
        assert_eq!(pct(-0.5), "-50.0%");
        assert_eq!(bytes(1184), "1,184 B");
    }
}

/// `s` safe to print on a terminal: every control character (C0, DEL, C1,
/// and the bidirectional overrides that reorder what is shown) written out
/// as `\u{1b}`, so a string from a run file cannot set a title, move the
/// cursor or clear a line. Newlines and tabs stay.
pub fn printable(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod printable_tests {
    use super::printable;

    #[test]
    fn control_characters_are_written_out() {
        assert_eq!(printable("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(printable("\u{9b}2K\u{202e}"), "\\u{9b}2K\\u{202e}");
        assert_eq!(printable("ML-KEM-768\tok\n"), "ML-KEM-768\tok\n");
    }
}
