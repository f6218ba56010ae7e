//! Charts from a CSV table (y against x, a line per series, CI whiskers),
//! drawn by plotters as PNG or SVG. It knows sweep axes only as columns.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

/// A chart to draw: one a sweep file asks for (`[[chart]]`), one chosen by
/// default, or one `csmacd plot` is given.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ChartSpec {
    /// The column on the x axis: a sweep axis or a summary column.
    pub x: String,
    /// The summary column on the y axis.
    pub y: String,
    /// Columns whose values split the rows into lines (one line per value).
    pub series: Vec<String>,
    pub title: Option<String>,
    /// The file stem under charts/; default `<y>-vs-<x>`.
    pub name: Option<String>,
    /// Logarithmic x axis; default: when x spans a factor of 16 or more.
    pub log_x: Option<bool>,
}

/// A sweep axis as a chart sees it: its column in summary.csv and the values
/// it takes there.
#[derive(Clone, Copy, Debug)]
pub struct AxisColumn<'a> {
    /// The column name: the axis's dotted path.
    pub name: &'a str,
    /// Each value as written in the column.
    pub labels: &'a [String],
}

/// A CSV table held as text.
#[derive(Clone, Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A chart that cannot be made from the data it was given.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("not a CSV table: {0}")]
    Csv(String),
    #[error("no column `{column}`; columns: {available}")]
    NoColumn { column: String, available: String },
    #[error("column `{column}` has no numbers to plot")]
    NoData { column: String },
    #[error("cannot draw the chart: {0}")]
    Draw(String),
}

impl Table {
    pub fn from_csv(bytes: &[u8]) -> Result<Table, ChartError> {
        let mut r = csv::ReaderBuilder::new().from_reader(bytes);
        let header = r
            .headers()
            .map_err(|e| ChartError::Csv(e.to_string()))?
            .iter()
            .map(str::to_string)
            .collect();
        let mut rows = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| ChartError::Csv(e.to_string()))?;
            rows.push(rec.iter().map(str::to_string).collect());
        }
        Ok(Table { header, rows })
    }

    fn column(&self, name: &str) -> Result<usize, ChartError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ChartError::NoColumn {
                column: name.to_string(),
                available: self.header.join(", "),
            })
    }
}

/// One line: its legend label and points (x, y, 95 % half-width).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64, Option<f64>)>,
}

/// A chart ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub log_x: bool,
    /// Logarithmic y axis: for delays that span a factor of 100 or more.
    pub log_y: bool,
    /// For a categorical x: the categories, drawn at x = 0, 1, 2, ...
    pub x_categories: Option<Vec<String>>,
}

/// A number with an optional unit suffix ("0.5", "1518B", "10Mbps").
pub fn parse_number(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some((v, ""));
    }
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .map(|(i, _)| i)?;
    // Take the longest numeric prefix (an `e` may start the unit, as in "1e").
    (1..=end).rev().find_map(|k| {
        let v: f64 = t[..k].parse().ok()?;
        let unit = &t[k..];
        (v.is_finite() && unit.chars().all(|c| c.is_alphabetic() || c == '/')).then_some((v, unit))
    })
}

/// A column's name as a reader would say it, with its unit.
pub fn describe(column: &str) -> String {
    let last = column.rsplit('.').next().unwrap_or(column);
    match (column, last) {
        ("throughput", _) => "throughput (fraction of bit rate)".into(),
        ("throughput_mbps", _) => "throughput (Mb/s)".into(),
        ("offered_load", _) => "measured offered load (fraction of bit rate)".into(),
        ("attempt_load", _) => "attempt load G (fraction of bit rate)".into(),
        ("delay_mean_us", _) => "mean delay (µs)".into(),
        ("delay_p50_us", _) => "median delay (µs)".into(),
        ("delay_p95_us", _) => "p95 delay (µs)".into(),
        ("delay_p99_us", _) => "p99 delay (µs)".into(),
        ("fairness", _) => "Jain's fairness index (1 = equal shares)".into(),
        ("collisions_per_delivered", _) => "collisions per delivered frame".into(),
        ("drop_fraction", _) => "dropped frames (fraction)".into(),
        ("capture_mean_run", _) => "mean run of successes by one station (frames)".into(),
        ("capture_max_run", _) => "longest run of successes by one station (frames)".into(),
        (_, "load") => "offered load (fraction of bit rate)".into(),
        (_, "count") => "stations".into(),
        (_, "frame") | (_, "size") => "frame size".into(),
        (_, "length") => "bus length".into(),
        (_, "backoff_limit") => "backoff limit (max exponent k)".into(),
        (_, "attempt_limit") => "attempt limit".into(),
        (c, _) if !c.contains('.') && !c.contains('_') => format!("{c} (frames)"),
        (c, _) => c.to_string(),
    }
}

/// A short name for titles ("throughput", "offered load").
fn short(column: &str) -> String {
    let d = describe(column);
    match d.find(" (") {
        Some(i) => d[..i].to_string(),
        None => d,
    }
}

/// Builds the chart `spec` asks for from `table`.
pub fn build(table: &Table, spec: &ChartSpec) -> Result<Chart, ChartError> {
    let xi = table.column(&spec.x)?;
    let yi = table.column(&spec.y)?;
    let ci = table.column(&format!("{}_ci95", spec.y)).ok();
    let si: Vec<usize> = spec
        .series
        .iter()
        .map(|s| table.column(s))
        .collect::<Result<_, _>>()?;

    let xs: Vec<Option<(f64, &str)>> = table.rows.iter().map(|r| parse_number(&r[xi])).collect();
    let numeric = !xs.is_empty() && xs.iter().all(Option::is_some);
    let (x_values, x_unit, categories): (Vec<f64>, String, Option<Vec<String>>) = if numeric {
        let unit = xs[0].map(|(_, u)| u.to_string()).unwrap_or_default();
        (xs.iter().flatten().map(|(v, _)| *v).collect(), unit, None)
    } else {
        let mut cats: Vec<String> = Vec::new();
        let idx = table
            .rows
            .iter()
            .map(|r| match cats.iter().position(|c| *c == r[xi]) {
                Some(i) => i as f64,
                None => {
                    cats.push(r[xi].clone());
                    (cats.len() - 1) as f64
                }
            })
            .collect();
        (idx, String::new(), Some(cats))
    };

    // Series in order of first appearance; a column of numbers is labelled
    // "name=value", one of words by the word alone.
    let numeric_col: Vec<bool> = si
        .iter()
        .map(|&c| table.rows.iter().all(|r| parse_number(&r[c]).is_some()))
        .collect();
    let mut series: Vec<Series> = Vec::new();
    for (row, &x) in table.rows.iter().zip(&x_values) {
        let label = si
            .iter()
            .zip(&numeric_col)
            .map(|(&c, &num)| {
                let name = match table.header[c].rsplit('.').next().unwrap_or("") {
                    "count" => "N",
                    other => other,
                };
                if num {
                    format!("{name}={}", row[c])
                } else {
                    row[c].clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let Some((y, _)) = parse_number(&row[yi]) else {
            continue;
        };
        let half = ci.and_then(|c| parse_number(&row[c])).map(|(h, _)| h);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((x, y, half)),
            None => series.push(Series {
                label,
                points: vec![(x, y, half)],
            }),
        }
    }
    if series.is_empty() {
        return Err(ChartError::NoData {
            column: spec.y.clone(),
        });
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (lo, hi) = x_values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let log_x = numeric && lo > 0.0 && spec.log_x.unwrap_or(hi / lo >= 16.0);
    let (ylo, yhi) = series
        .iter()
        .flat_map(|s| s.points.iter())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let log_y = spec.y.starts_with("delay_") && ylo > 0.0 && yhi / ylo >= 100.0;
    let x_label = if x_unit.is_empty() {
        describe(&spec.x)
    } else {
        format!("{} ({x_unit})", describe(&spec.x))
    };
    let title = spec.title.clone().unwrap_or_else(|| {
        let y = short(&spec.y);
        let mut t = format!("{}{} vs {}", y[..1].to_uppercase(), &y[1..], short(&spec.x));
        if series
            .iter()
            .any(|s| s.points.iter().any(|p| p.2.is_some()))
        {
            t.push_str(" (95 % CI)");
        }
        t
    });
    Ok(Chart {
        title,
        x_label,
        y_label: describe(&spec.y),
        series,
        log_x,
        log_y,
        x_categories: categories,
    })
}

/// The charts a sweep draws when it names none: each main metric against
/// the most telling numeric axis (offered load, then stations, then frame
/// size, then the first), and collisions per frame against stations.
pub fn default_specs(axes: &[AxisColumn]) -> Vec<ChartSpec> {
    let varying: Vec<&AxisColumn> = axes.iter().filter(|a| a.labels.len() > 1).collect();
    let numeric = |a: &AxisColumn| a.labels.iter().all(|l| parse_number(l).is_some());
    let rank = |a: &AxisColumn| {
        let last = a.name.rsplit('.').next().unwrap_or("");
        match last {
            "load" | "rate" => 0,
            "count" => 1,
            "frame" | "size" => 2,
            _ => 3,
        }
    };
    let x = varying
        .iter()
        .filter(|a| numeric(a))
        .min_by_key(|a| rank(a))
        .or_else(|| varying.first());
    let Some(x) = x else {
        return Vec::new();
    };
    let mut specs: Vec<ChartSpec> = [
        "throughput",
        "delay_mean_us",
        "delay_p99_us",
        "collisions_per_delivered",
        "drop_fraction",
        "fairness",
    ]
    .iter()
    .map(|y| ChartSpec {
        x: x.name.to_string(),
        y: y.to_string(),
        ..Default::default()
    })
    .collect();
    if let Some(count) = varying
        .iter()
        .find(|a| a.name.ends_with(".count") && a.name != x.name && numeric(a))
    {
        specs.push(ChartSpec {
            x: count.name.to_string(),
            y: "collisions_per_delivered".into(),
            ..Default::default()
        });
    }
    specs
}

/// Completes a spec for a sweep: every other axis that varies splits the
/// lines too (so no line zigzags across hidden axes), and a file name.
pub fn complete(spec: &ChartSpec, axes: &[AxisColumn]) -> ChartSpec {
    let mut s = spec.clone();
    for a in axes {
        if a.labels.len() > 1 && a.name != s.x && !s.series.iter().any(|c| c == a.name) {
            s.series.push(a.name.to_string());
        }
    }
    if s.name.is_none() {
        let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_string();
        let xs = last(&s.x);
        let clash = axes.iter().filter(|a| last(a.name) == xs).count() > 1;
        let xs = if clash { s.x.replace('.', "-") } else { xs };
        s.name = Some(format!("{}-vs-{xs}", s.y));
    }
    s
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Chart size in pixels.
pub const SIZE: (u32, u32) = (800, 500);

/// Draws the chart as SVG text.
pub fn render_svg(chart: &Chart) -> Result<String, ChartError> {
    super::style::register();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, chart).map_err(ChartError::Draw)?;
    }
    Ok(svg)
}

/// Draws the chart as a PNG file at `path` (which must end in .png): plotters'
/// encoder writes the file itself, so callers pass a temporary path
/// ([`super::write_atomic_with`]) to keep the write atomic.
pub fn render_png(chart: &Chart, path: &std::path::Path) -> Result<(), ChartError> {
    let root = super::png::Png::new(path, SIZE).into_drawing_area();
    draw(&root, chart).map_err(ChartError::Draw)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    c: &Chart,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let all = c.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) =
        (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, f64::NEG_INFINITY);
    for &(x, y, h) in all {
        let h = h.filter(|h| h.is_finite()).unwrap_or(0.0);
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y - h);
        y1 = y1.max(y + h);
    }
    if !y1.is_finite() || y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let pad = (y1 - y0) * 0.05;
    let (y0, y1) = (if y0 < 0.0 { y0 - pad } else { y0 }, y1 + pad);
    let mut b = ChartBuilder::on(root);
    b.caption(&c.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72);
    let span = if x1 > x0 { x1 - x0 } else { 1.0 };
    let m = if c.x_categories.is_some() {
        0.5
    } else {
        span * 0.03
    };
    let (xl, xh) = (x0 - m, x1 + m);
    // Logarithmic axes: the points' own range, widened a little.
    let (ly0, ly1) = c
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .fold((f64::INFINITY, 0.0f64), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    match (c.log_x, c.log_y) {
        (false, false) => fill(b.build_cartesian_2d(xl..xh, y0..y1).map_err(err)?, c)?,
        (true, false) => fill(
            b.build_cartesian_2d((x0 / 1.15..x1 * 1.15).log_scale(), y0..y1)
                .map_err(err)?,
            c,
        )?,
        (false, true) => fill(
            b.build_cartesian_2d(xl..xh, (ly0 / 1.5..ly1 * 1.5).log_scale())
                .map_err(err)?,
            c,
        )?,
        (true, true) => fill(
            b.build_cartesian_2d(
                (x0 / 1.15..x1 * 1.15).log_scale(),
                (ly0 / 1.5..ly1 * 1.5).log_scale(),
            )
            .map_err(err)?,
            c,
        )?,
    }
    root.present().map_err(err)
}

/// A tick label: plain up to 10^4, then with an SI suffix ("250k", "1.5M").
fn tick(v: f64) -> String {
    let plain = |v: f64| {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", plain(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", plain(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", plain(v / 1e3))
    } else {
        plain(v)
    }
}

fn fill<'a, DB, X, Y>(
    mut cc: ChartContext<'a, DB, Cartesian2d<X, Y>>,
    c: &Chart,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let cats = c.x_categories.clone();
    let x_fmt = move |v: &f64| -> String {
        match &cats {
            Some(cats) => {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                    cats[i as usize].clone()
                } else {
                    String::new()
                }
            }
            None => tick(*v),
        }
    };
    let y_fmt = |v: &f64| tick(*v);
    let mut mesh = cc.configure_mesh();
    mesh.x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(215, 215, 215));
    if let Some(cats) = &c.x_categories {
        mesh.x_labels(cats.len() * 2 + 1);
    }
    mesh.draw().map_err(err)?;
    for (i, s) in c.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
        cc.draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(2))
            });
        cc.draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
        for &(x, y, h) in &s.points {
            let Some(h) = h.filter(|h| h.is_finite() && *h > 0.0) else {
                continue;
            };
            let style = color.stroke_width(1);
            // On a log axis a whisker cannot reach zero; stop it at y/100.
            let lower = if c.log_y {
                (y - h).max(y / 100.0)
            } else {
                y - h
            };
            cc.draw_series([PathElement::new(vec![(x, lower), (x, y + h)], style)])
                .map_err(err)?;
            for end in [lower, y + h] {
                cc.draw_series([
                    EmptyElement::at((x, end)) + PathElement::new(vec![(-4, 0), (4, 0)], style)
                ])
                .map_err(err)?;
            }
        }
    }
    cc.configure_series_labels()
        .position(legend_corner(c))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)
}

/// The corner of the plot with the fewest points, for the legend.
fn legend_corner(c: &Chart) -> SeriesLabelPosition {
    let pts: Vec<(f64, f64)> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| (p.0, p.1)))
        .collect();
    let norm = |v: f64, lo: f64, hi: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let (x0, x1) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let (y0, y1) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let tx = |x: f64| {
        if c.log_x && x0 > 0.0 {
            norm(x.ln(), x0.ln(), x1.ln())
        } else {
            norm(x, x0, x1)
        }
    };
    let corners = [
        (SeriesLabelPosition::UpperRight, 1.0, 1.0),
        (SeriesLabelPosition::UpperLeft, 0.0, 1.0),
        (SeriesLabelPosition::LowerRight, 1.0, 0.0),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
    ];
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (pos, cx, cy) in corners {
        let n = pts
            .iter()
            .filter(|p| (tx(p.0) - cx).abs() < 0.45 && (norm(p.1, y0, y1) - cy).abs() < 0.45)
            .count();
        if n < best.0 {
            best = (n, pos);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_units() {
        assert_eq!(parse_number("0.5"), Some((0.5, "")));
        assert_eq!(parse_number("1518B"), Some((1518.0, "B")));
        assert_eq!(parse_number("10Mbps"), Some((10.0, "Mbps")));
        assert_eq!(parse_number("2e8m/s"), Some((2e8, "m/s")));
        assert_eq!(parse_number("beb"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn series_split_and_sort() {
        let t = Table {
            header: vec!["n".into(), "x".into(), "y".into(), "y_ci95".into()],
            rows: vec![
                vec!["2".into(), "0.5".into(), "0.4".into(), "0.01".into()],
                vec!["2".into(), "0.1".into(), "0.1".into(), "".into()],
                vec!["8".into(), "0.1".into(), "0.1".into(), "0.02".into()],
            ],
        };
        let spec = ChartSpec {
            x: "x".into(),
            y: "y".into(),
            series: vec!["n".into()],
            ..Default::default()
        };
        let c = build(&t, &spec).unwrap();
        assert_eq!(c.series.len(), 2);
        assert_eq!(c.series[0].label, "n=2");
        assert!(!c.log_y);
        assert_eq!(
            c.series[0].points,
            vec![(0.1, 0.1, None), (0.5, 0.4, Some(0.01))]
        );
        assert!(!c.log_x);
    }
}
