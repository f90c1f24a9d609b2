//! Inline SVG charts: dot plots on a log axis and log-log line charts.
//! Each mark carries a `<title>` with its exact figure and source record,
//! and a `data-src` attribute.

use crate::core::units;
use crate::report::model::SrcRef;
use crate::report::render::escape::esc;
use std::fmt::Write;

/// Colour-blind-safe palette (Okabe and Ito), in series order.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#444444",
];

/// One point of a dot-plot row.
#[derive(Debug, Clone)]
pub struct Dot {
    /// Series index (colour and marker).
    pub series: usize,
    /// The value (positive).
    pub value: f64,
    /// Hover text.
    pub title: String,
    /// The record behind it.
    pub src: SrcRef,
}

/// One labelled row of a dot plot.
#[derive(Debug, Clone)]
pub struct DotRow {
    /// Label on the left.
    pub label: String,
    /// Smaller second part of the label.
    pub note: String,
    /// Points.
    pub dots: Vec<Dot>,
    /// Draw a line from the smallest to the largest point (a range).
    pub range: bool,
}

const WIDTH: f64 = 1000.0;
/// The narrowest column of row labels of a dot plot; a longer label
/// widens it (and the chart), so no label is cut.
const LABEL_W: f64 = 300.0;
/// A dot plot's plotting area.
const PLOT_W: f64 = 676.0;
const RIGHT: f64 = 24.0;
const ROW_H: f64 = 20.0;
/// Room above the rows: the legend, then the axis labels (a dot plot has
/// its axis at the top and at the bottom, so a tall one is read from
/// either end).
const TOP: f64 = 52.0;
const BOTTOM: f64 = 38.0;

/// About how wide `s` is at `font_px` in the report's sans-serif, in
/// chart units (generous: a label is never cut).
fn text_width(s: &str, font_px: f64) -> f64 {
    s.chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c == 'm' || c == 'w' || c == 'M' || c == 'W' {
                0.72
            } else if c.is_ascii_digit() || c.is_ascii_lowercase() {
                0.58
            } else {
                0.45
            }
        })
        .sum::<f64>()
        * font_px
}

fn log_bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return None;
    }
    let (mut a, mut b) = (log10_clamped(lo).floor(), log10_clamped(hi).ceil());
    if b <= a {
        b = a + 1.0;
    }
    if b - a < 2.0 {
        a -= 1.0;
    }
    Some((a, b))
}

/// `1`, `10`, `1k`, `1M`.
fn decade_label(exp: i32, unit: &str) -> String {
    let v = 10f64.powi(exp);
    let s = if !(-6..=15).contains(&exp) {
        format!("1e{exp}")
    } else if exp >= 9 {
        format!("{}G", 10f64.powi(exp - 9))
    } else if exp >= 6 {
        format!("{}M", 10f64.powi(exp - 6))
    } else if exp >= 3 {
        format!("{}k", 10f64.powi(exp - 3))
    } else if exp >= 0 {
        format!("{v}")
    } else {
        units::sig3(v)
    };
    format!("{s}{unit}")
}

fn marker(series: usize, x: f64, y: f64, title: &str, src: Option<SrcRef>) -> String {
    let c = PALETTE[series % PALETTE.len()];
    let t = format!("<title>{}</title>", esc(title));
    let d = src.map_or(String::new(), |src| format!("data-src=\"{src}\""));
    match series % 4 {
        0 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{c}\" {d}>{t}</circle>"),
        1 => format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" fill=\"{c}\" {d}>{t}</rect>",
            x - 4.5,
            y - 4.5
        ),
        2 => format!(
            "<path d=\"M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z\" fill=\"{c}\" {d}>{t}</path>",
            y - 6.0,
            x + 6.0,
            y + 6.0,
            x - 6.0
        ),
        _ => format!(
            "<path d=\"M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z\" fill=\"{c}\" {d}>{t}</path>",
            y - 6.0,
            x + 5.5,
            y + 4.5,
            x - 5.5,
            y + 4.5
        ),
    }
}

fn legend(series: &[String], x0: f64, y: f64) -> String {
    let mut s = String::new();
    let mut x = x0;
    for (i, name) in series.iter().enumerate() {
        s += &marker(i, x + 6.0, y, name, None);
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lg\">{}</text>",
            x + 16.0,
            y + 4.0,
            esc(name)
        );
        x += 30.0 + text_width(name, 12.0);
    }
    s
}

/// Log10 of `v` clamped to 1e-300..1e300: a denormal or huge figure from a
/// hand-edited file stays on a finite axis (never `x="-inf"`).
fn log10_clamped(v: f64) -> f64 {
    v.clamp(1e-300, 1e300).log10()
}

/// A dot plot with a log x axis. `unit` is appended to axis labels.
pub fn dot_plot(title: &str, axis: &str, unit: &str, series: &[String], rows: &[DotRow]) -> String {
    let Some((a, b)) = log_bounds(rows.iter().flat_map(|r| r.dots.iter().map(|d| d.value))) else {
        return String::new();
    };
    // The label column as wide as the longest label needs.
    let label_w = rows
        .iter()
        .map(|r| text_width(&r.label, 12.5) + text_width(&r.note, 11.0) + 24.0)
        .fold(LABEL_W, f64::max)
        .ceil();
    let width = label_w + PLOT_W + RIGHT;
    let h = TOP + ROW_H * rows.len() as f64 + BOTTOM;
    let xpos = |v: f64| label_w + (log10_clamped(v) - a) / (b - a) * PLOT_W;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {h:.0}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        esc(title),
        esc(title)
    );
    s += &legend(series, label_w, 14.0);
    // Decade grid lines, labelled at the top and at the bottom.
    let bottom = TOP + ROW_H * rows.len() as f64;
    for e in (a as i32)..=(b as i32) {
        let x = xpos(10f64.powi(e));
        let label = decade_label(e, unit);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/><text x=\"{x:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{label}</text><text x=\"{x:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{label}</text>",
            TOP - 4.0,
            TOP - 8.0,
            bottom + 16.0,
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"end\">{} (log scale)</text>",
        width - RIGHT,
        bottom + 28.0,
        esc(axis)
    );
    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW_H * i as f64 + ROW_H / 2.0;
        if i % 2 == 0 {
            let _ = write!(
                s,
                "<rect x=\"0\" y=\"{:.1}\" width=\"{width}\" height=\"{ROW_H}\" class=\"band\"/>",
                y - ROW_H / 2.0
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"rl\" text-anchor=\"end\">{}<tspan class=\"rn\"> {}</tspan></text>",
            label_w - 10.0,
            y + 4.0,
            esc(&row.label),
            esc(&row.note)
        );
        let xs: Vec<f64> = row.dots.iter().map(|d| xpos(d.value)).collect();
        if xs.len() > 1 {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let _ = write!(
                s,
                "<line x1=\"{lo:.1}\" y1=\"{y:.1}\" x2=\"{hi:.1}\" y2=\"{y:.1}\" class=\"{}\"/>",
                if row.range { "range" } else { "conn" }
            );
        }
        for (d, x) in row.dots.iter().zip(xs) {
            s += &marker(d.series, x, y, &d.title, Some(d.src));
        }
    }
    s += "</svg>";
    s
}

/// One series of a line chart.
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend name.
    pub name: String,
    /// (x, y, source) points; drawn in x order.
    pub points: Vec<(f64, f64, SrcRef)>,
}

/// A log-log line chart of throughput against batch size.
pub fn line_chart(title: &str, x_axis: &str, y_axis: &str, lines: &[Line]) -> String {
    let hover = |name: &str, x: f64, y: f64| {
        format!("{name}: batch {} → {}", units::grouped(x), units::ops(y))
    };
    let axes = Axes {
        x: x_axis,
        y: y_axis,
        x_unit: "",
        y_unit: "/s",
        hover: &hover,
        sourced: true,
    };
    plot(title, &axes, lines, &Marks::default())
}

/// What a line chart's axes show, and how a point reads on hover.
pub struct Axes<'a> {
    /// The x axis's name.
    pub x: &'a str,
    /// The y axis's name.
    pub y: &'a str,
    /// Appended to the x axis's decade labels.
    pub x_unit: &'a str,
    /// Appended to the y axis's decade labels.
    pub y_unit: &'a str,
    /// A point's hover text from its line's name, x and y.
    pub hover: &'a dyn Fn(&str, f64, f64) -> String,
    /// Whether the points' sources are records (written as `data-src`);
    /// points of other figures name their source in the hover text.
    pub sourced: bool,
}

/// Marks over a line chart's lines.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// Horizontal lines across the chart (a bound), each with its label:
    /// (label, y).
    pub rules: Vec<(String, f64)>,
    /// Points circled, each with why: (x, y, hover text).
    pub rings: Vec<(f64, f64, String)>,
}

/// A log-log line chart with `marks` drawn over its lines; the y axis
/// spans the rules too.
pub fn plot(title: &str, axes: &Axes, lines: &[Line], marks: &Marks) -> String {
    let (Some((xa, xb)), Some((ya, yb))) = (
        log_bounds(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0))),
        log_bounds(
            lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .chain(marks.rules.iter().map(|r| r.1)),
        ),
    ) else {
        return String::new();
    };
    let (left, top, h, w) = (80.0, 20.0, 300.0, WIDTH - 80.0 - RIGHT - 10.0);
    let x = |v: f64| left + (log10_clamped(v) - xa) / (xb - xa) * w;
    let y = |v: f64| top + h - (log10_clamped(v) - ya) / (yb - ya) * h;
    // The legend below the plot, one line per series: names are whole.
    let legend_top = top + h + 56.0;
    let total_h = legend_top + 18.0 * lines.len() as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {total_h:.0}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        esc(title),
        esc(title)
    );
    for e in (xa as i32)..=(xb as i32) {
        let px = x(10f64.powi(e));
        let _ = write!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{top}\" x2=\"{px:.1}\" y2=\"{:.1}\" class=\"grid\"/><text x=\"{px:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            top + h,
            top + h + 16.0,
            decade_label(e, axes.x_unit)
        );
    }
    for e in (ya as i32)..=(yb as i32) {
        let py = y(10f64.powi(e));
        let _ = write!(
            s,
            "<line x1=\"{left}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" class=\"grid\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            left + w,
            left - 6.0,
            py + 4.0,
            decade_label(e, axes.y_unit)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{} (log)</text><text x=\"14\" y=\"{:.1}\" class=\"axis\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{} (log)</text>",
        left + w / 2.0,
        top + h + 36.0,
        esc(axes.x),
        top + h / 2.0,
        top + h / 2.0,
        esc(axes.y)
    );
    for (label, v) in &marks.rules {
        let py = y(*v);
        let _ = write!(
            s,
            "<line x1=\"{left}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" class=\"rule\"><title>{}</title></line><text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            left + w,
            esc(label),
            left + w - 4.0,
            py - 4.0,
            esc(label)
        );
    }
    for (i, l) in lines.iter().enumerate() {
        s += &series(
            i,
            l,
            axes,
            &x,
            &y,
            (left - 30.0, legend_top + 18.0 * i as f64),
        );
    }
    for (px, py, why) in &marks.rings {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"9\" class=\"ring\"><title>{}</title></circle>",
            x(*px),
            y(*py),
            esc(why)
        );
    }
    s += "</svg>";
    s
}

/// One line of a line chart in colour `i`: its polyline, a marker per
/// point and its legend entry at `(legend_x, legend_y)`; nothing for a
/// line without points.
fn series(
    i: usize,
    l: &Line,
    axes: &Axes,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
    (legend_x, ly): (f64, f64),
) -> String {
    let mut pts = l.points.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(first) = pts.first() else {
        return String::new();
    };
    let mut s = String::new();
    let c = PALETTE[i % PALETTE.len()];
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.0), y(p.1)))
        .collect();
    let _ = write!(
        s,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"/>",
        path.join(" ")
    );
    for p in &pts {
        let src = axes.sourced.then_some(p.2);
        s += &marker(i, x(p.0), y(p.1), &(axes.hover)(&l.name, p.0, p.1), src);
    }
    s += &marker(
        i,
        legend_x + 30.0,
        ly,
        &l.name,
        axes.sourced.then_some(first.2),
    );
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lg\">{}</text>",
        legend_x + 42.0,
        ly + 4.0,
        esc(&l.name)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_plot_has_every_point_and_decades() {
        let src = SrcRef { file: 0, index: 3 };
        let rows = vec![DotRow {
            label: "ML-KEM-768".into(),
            note: "liboqs 1t".into(),
            dots: vec![
                Dot {
                    series: 0,
                    value: 50_000.0,
                    title: "a".into(),
                    src,
                },
                Dot {
                    series: 1,
                    value: 120_000.0,
                    title: "b".into(),
                    src,
                },
            ],
            range: false,
        }];
        let s = dot_plot(
            "t",
            "ops/s",
            "/s",
            &["KeyGen".into(), "Encaps".into()],
            &rows,
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("data-src=\"F1#3\"").count(), 2);
        assert!(s.contains("10k/s") && s.contains("1M/s"), "{s}");
        assert!(dot_plot("t", "x", "", &[], &[]).is_empty());
    }
}
