//! What a chart is asked to show: its spec (axes, series, scales, size, as
//! `[[chart]]` and `csmacd plot` give them), and the default charts of a
//! sweep's axes.

use super::{parse_number, AxisColumn};

/// How an axis maps values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

impl std::str::FromStr for Scale {
    type Err = String;
    fn from_str(s: &str) -> Result<Scale, String> {
        match s {
            "linear" => Ok(Scale::Linear),
            "log" => Ok(Scale::Log),
            _ => Err(format!("`{s}` is not a scale; allowed: linear, log")),
        }
    }
}

/// A chart to draw: one a sweep file asks for (`[[chart]]`), one chosen by
/// default, or one `csmacd plot` is given.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ChartSpec {
    /// The column on the x axis: a sweep axis or a column of the table.
    pub x: String,
    /// The column on the y axis.
    pub y: String,
    /// Columns whose values split the rows into series (one per value);
    /// [`GROUP_SERIES`] among them draws from the groups table.
    pub series: Vec<String>,
    pub title: Option<String>,
    /// The file stem under charts/; default `<y>-vs-<x>`.
    pub name: Option<String>,
    pub x_scale: Scale,
    /// The y scale; None: linear, or log for a delay whose values span more
    /// than two decades (said in the caption).
    pub y_scale: Option<Scale>,
    /// A fixed y range [lo, hi] in the column's units.
    pub y_range: Option<(f64, f64)>,
    /// Axis titles in place of the columns' documented meanings.
    pub x_label: Option<String>,
    pub y_label: Option<String>,
    /// The legend's title in place of the series columns' meanings.
    pub legend_title: Option<String>,
    /// The series column whose values choose the colour (default the first)
    /// and the one whose values choose the marker and dash (default the
    /// second).
    pub color_by: Option<String>,
    pub dash_by: Option<String>,
    /// One y range for every panel of small multiples and every chart of a
    /// sweep drawing this y (with `share_y` too).
    pub share_y: bool,
    /// Join the points of a two-value x axis with lines (by default they
    /// are not: two points make no trend).
    pub lines: bool,
    /// Width and height in pixels; default by the number of panels.
    pub size: Option<(u32, u32)>,
    /// The table drawn from when it is neither summary.csv nor groups.csv
    /// (e.g. "timeseries", one row per bin): a line per series, without
    /// markers or whiskers.
    pub table: Option<String>,
    /// An interval of x shaded behind the data, with its label.
    pub shade: Option<Shade>,
    /// Closed forms drawn as lines over the data.
    pub theory: Vec<Theory>,
}

/// A closed form drawn on a chart: y as an expression of `x`, the chart's
/// x value, in the expression language (`crate::expr`).
#[derive(Clone, Debug, PartialEq)]
pub struct Theory {
    pub label: String,
    pub y: crate::expr::Expr,
}

impl Theory {
    /// Reads `y` as an expression of `x`; the error says where in it.
    pub fn new(label: &str, y: &str) -> Result<Theory, crate::expr::SyntaxError> {
        Ok(Theory {
            label: label.to_string(),
            y: crate::expr::Expr::parse(y, &crate::expr::Names::exact(&["x"]))?,
        })
    }
}

/// An interval of x shaded behind a chart's data (a surge), named on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shade {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// The series that splits a chart by station group: such a chart is drawn
/// from [`GROUP_TABLE`] (one row per point, replication and group).
pub const GROUP_SERIES: &str = "group";
/// The table per-group charts are drawn from.
pub const GROUP_TABLE: &str = "groups";

impl ChartSpec {
    /// Whether the chart draws one series per station group.
    pub fn per_group(&self) -> bool {
        self.series.iter().any(|s| s == GROUP_SERIES)
    }
}

/// The smallest and largest chart, in pixels (width, height).
pub const MIN_SIZE: (u32, u32) = (400, 300);
pub const MAX_SIZE: (u32, u32) = (4000, 4000);

/// Checks a chart size against [`MIN_SIZE`] and [`MAX_SIZE`].
pub fn check_size(w: u32, h: u32) -> Result<(u32, u32), String> {
    let ok = |v: u32, lo: u32, hi: u32| (lo..=hi).contains(&v);
    if ok(w, MIN_SIZE.0, MAX_SIZE.0) && ok(h, MIN_SIZE.1, MAX_SIZE.1) {
        Ok((w, h))
    } else {
        Err(format!(
            "{w}x{h} is not a chart size; width {} to {}, height {} to {} pixels",
            MIN_SIZE.0, MAX_SIZE.0, MIN_SIZE.1, MAX_SIZE.1
        ))
    }
}

/// Reads a size written `WIDTHxHEIGHT` ("1200x800") and checks its bounds.
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}` is not a size; write WIDTHxHEIGHT in pixels, e.g. 1200x800");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    check_size(w, h)
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
/// series too (so no line zigzags across hidden axes), and a file name.
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
        let per = if s.per_group() { "-per-group" } else { "" };
        s.name = Some(format!("{}{per}-vs-{xs}", s.y));
    }
    s
}
