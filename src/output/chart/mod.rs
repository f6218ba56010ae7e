//! Charts from a CSV table: y against x, one line per series (one point per
//! category when x is words), 95 % CI whiskers within the metric's bounds.
//! This file holds the chart's types; `figure` turns a table and a spec
//! into a [`Chart`]; `draw` lays it out.
//! It knows sweep axes only as columns.

mod columns;
mod data;
mod draw;
mod figure;
mod spec;
mod ticks;

pub use columns::{clip_interval, describe, describe_among, describe_in, domain};
pub use spec::{
    check_size, complete, default_specs, parse_size, ChartSpec, Scale, Shade, Theory, GROUP_SERIES,
    GROUP_TABLE, MAX_SIZE, MIN_SIZE,
};

pub use data::{points_csv, points_csv_with, HEADER as POINTS_HEADER};
pub use draw::{render_png, render_png_with, render_svg, render_svg_with};
pub use figure::{build, build_figure, default_size, share_y};

use crate::output::style::Styles;

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
    #[error(
        "{rows} rows share x = {x}{series} and are not replications of one another \
         (rows are averaged only when their `replication` numbers differ); \
         add the column that tells them apart as a series{hint}"
    )]
    Ambiguous {
        rows: usize,
        x: String,
        series: String,
        hint: String,
    },
    #[error(
        "{n} series (one per value of {columns}): more than the {max} a chart can tell \
         apart; draw fewer: choose a series column with fewer values, or plot a subset of \
         the rows (csmacd plot --where COLUMN=VALUE)"
    )]
    TooManySeries {
        n: usize,
        columns: String,
        max: usize,
    },
    #[error("a log scale needs positive numbers; `{column}` has {value}")]
    LogScale { column: String, value: String },
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    #[error("{0}")]
    Style(String),
    #[error("{0}")]
    Theory(String),
    /// Writing the drawn chart failed (its I/O error, as a sentence).
    #[error("{0}")]
    Write(String),
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

    pub fn column(&self, name: &str) -> Result<usize, ChartError> {
        self.find(name).ok_or_else(|| ChartError::NoColumn {
            column: name.to_string(),
            available: self.header.join(", "),
        })
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// What a chart's caption says about where its numbers come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The file the numbers were read from (`csmacd plot`'s CSV).
    pub source: Option<String>,
    /// The scenario's name.
    pub scenario: Option<String>,
    /// The master seed.
    pub seed: Option<u64>,
}

/// One point of a series: x, the mean y (None: undefined there, the line
/// breaks), and the 95 % interval's ends, already cut to the metric's bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Look {
    /// Markers (with whiskers) joined by a line: a sweep's measurements.
    #[default]
    Joined,
    /// A line without markers: a closed form, computed, not measured.
    Theory,
    /// Markers with whiskers, not joined: measurements drawn over a theory.
    Measured,
    /// A bar from the axis up to each point, without markers: a closed form
    /// of a discrete distribution (a probability at each whole x).
    TheoryBars,
}

impl Look {
    /// A closed form (a line or bars): computed, not measured, so it keeps
    /// its place and carries no markers.
    pub fn is_theory(self) -> bool {
        matches!(self, Look::Theory | Look::TheoryBars)
    }
}

/// One series: its legend label, the panel it is drawn in, its points by x.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub panel: usize,
    pub points: Vec<Point>,
    pub look: Look,
}

/// What stands beside the plot to name the series.
#[derive(Clone, Debug, PartialEq)]
pub enum Legend {
    /// One entry per distinct label, under an optional title.
    Entries { title: Option<String> },
    /// Nothing: one unnamed series, or small multiples titled by series.
    Hidden,
    /// Too many series to name: a sentence instead.
    Note(String),
}

/// A chart ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// For words on x: the categories, at x = 0, 1, 2, ..., drawn as points.
    pub categories: Option<Vec<String>>,
    pub series: Vec<Series>,
    /// Panel titles of small multiples (series drawn side by side, on the
    /// same axes); empty for one plot.
    pub panels: Vec<String>,
    pub legend: Legend,
    /// What the numbers are: scenario, seed, replications and interval.
    pub caption: String,
    /// Width and height in pixels.
    pub size: (u32, u32),
    /// An interval of x shaded behind the data.
    pub shade: Option<Shade>,
    /// Many points per series (a table per bin): lines only, no markers
    /// or whiskers.
    pub lines_only: bool,
}

impl Chart {
    /// The labels that need a style, in legend order: each series' label.
    pub fn labels(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.series {
            if !out.contains(&s.label) {
                out.push(s.label.clone());
            }
        }
        out
    }
}

/// How a chart is drawn beyond its data: what [`build_figure`] decides
/// from the spec and the table, which the drawing and the points' CSV follow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// A fixed y range (asked for, shared, or 0 to 1 for all zeros).
    pub y_range: Option<(f64, f64)>,
    /// Points past saturation, drawn hollow: (series, point) indices.
    pub hollow: Vec<(usize, usize)>,
    /// Series at one numeric x are drawn a few pixels apart (their whiskers
    /// would overlap otherwise).
    pub dodge: bool,
}

/// A chart with its styles (one per value of its series axes) and options.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub chart: Chart,
    pub styles: Styles,
    pub options: Options,
}

/// Above this many lines one plot is unreadable: small multiples instead.
/// Styles tell apart at least this many ([`crate::output::style`]).
pub const MAX_LINES: usize = 12;
/// The most panels of small multiples; beyond, one plot with a note.
pub const MAX_PANELS: usize = 16;
/// The most series a chart draws (in one plot, with a note that they are
/// too many to name); beyond, the chart is refused and says how to draw
/// fewer.
pub const MAX_SERIES: usize = 1000;
/// The default size of a chart of one plot.
pub const DEFAULT_SIZE: (u32, u32) = (900, 560);

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

#[cfg(test)]
mod tests {
    use super::*;

    fn table(header: &[&str], rows: &[&[&str]]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect(),
        }
    }

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
        let t = table(
            &["n", "x", "y", "y_ci95"],
            &[
                &["2", "0.5", "0.4", "0.01"],
                &["2", "0.1", "0.1", ""],
                &["8", "0.1", "0.1", "0.02"],
            ],
        );
        let spec = ChartSpec {
            x: "x".into(),
            y: "y".into(),
            series: vec!["n".into()],
            ..Default::default()
        };
        let c = build(&t, &spec, &Context::default()).unwrap();
        assert_eq!(c.series.len(), 2);
        assert_eq!(c.series[0].label, "n=2");
        assert_eq!(
            c.series[0].points,
            vec![
                Point {
                    x: 0.1,
                    y: Some(0.1),
                    ci: None
                },
                Point {
                    x: 0.5,
                    y: Some(0.4),
                    ci: Some((0.39, 0.41000000000000003))
                }
            ]
        );
        assert_eq!(c.x_scale, Scale::Linear);
        assert_eq!(c.size, DEFAULT_SIZE);
    }

    #[test]
    fn replications_are_averaged_and_other_repeats_refused() {
        let t = table(
            &["replication", "group", "throughput"],
            &[
                &["0", "a", "0.5"],
                &["1", "a", "0.7"],
                &["0", "b", "0.1"],
                &["1", "b", "0.1"],
            ],
        );
        let spec = ChartSpec {
            x: "group".into(),
            y: "throughput".into(),
            ..Default::default()
        };
        let c = build(&t, &spec, &Context::default()).unwrap();
        assert_eq!(c.categories, Some(vec!["a".into(), "b".into()]));
        let p = &c.series[0].points[0];
        assert!((p.y.unwrap() - 0.6).abs() < 1e-12);
        // 12.706 x 0.1 either side, cut to [0, 1].
        assert_eq!(p.ci.unwrap().0, 0.0);
        assert_eq!(p.ci.unwrap().1, 1.0);
        assert!(
            c.caption.contains("95 % CI over 2 replications"),
            "{}",
            c.caption
        );
        // Without replication numbers, repeated rows are refused.
        let t2 = table(&["x", "y", "k"], &[&["1", "2", "a"], &["1", "3", "b"]]);
        let spec2 = ChartSpec {
            x: "x".into(),
            y: "y".into(),
            ..Default::default()
        };
        let e = build(&t2, &spec2, &Context::default()).unwrap_err();
        assert!(e.to_string().contains("they differ in: k"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1200x800"), Ok((1200, 800)));
        assert!(parse_size("1200").is_err());
        assert!(parse_size("10x10")
            .unwrap_err()
            .contains("width 400 to 4000"));
    }
}
