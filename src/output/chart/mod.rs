//! Charts from a CSV table: y against x, one line per series (one point per
//! category when x is words), 95 % CI whiskers within the metric's bounds.
//! This file turns a table and a spec into a [`Chart`]; `draw` lays it out.
//! It knows sweep axes only as columns.

mod columns;
mod data;
mod draw;
mod spec;
mod ticks;

pub use columns::{clip_interval, describe, describe_among, describe_in, domain};
pub use spec::{
    check_size, complete, default_specs, parse_size, ChartSpec, Scale, Shade, Theory, GROUP_SERIES,
    GROUP_TABLE, MAX_SIZE, MIN_SIZE,
};

pub use data::{points_csv, HEADER as POINTS_HEADER};
pub use draw::{render_png, render_svg};

use crate::stats;
use std::collections::HashMap;

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

/// Above this many lines one plot is unreadable: small multiples instead.
pub const MAX_LINES: usize = 8;
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

/// A short name for titles ("throughput", "offered load").
fn short(column: &str) -> String {
    let d = describe(column);
    match d.find(" (") {
        Some(i) => d[..i].to_string(),
        None => d,
    }
}

/// One cell's contribution to a series label: "N=8" for numbers, the word
/// itself for words.
fn label_part(column: &str, value: &str, numeric: bool) -> String {
    if !numeric {
        return value.to_string();
    }
    let name = match column.rsplit('.').next().unwrap_or("") {
        "count" => "N",
        other => other,
    };
    format!("{name}={value}")
}

/// Rows gathered for one series at one x.
struct Cell {
    x: f64,
    ys: Vec<f64>,
    half: Option<f64>,
    replications: Option<u64>,
    /// Replication numbers, when the table has them.
    numbers: Vec<String>,
    rows: Vec<usize>,
}

/// Builds the chart `spec` asks for from `table`. Rows that share x and
/// series are replications (the table needs a `replication` column for
/// that): they are averaged with a Student-t 95 % interval, as summary.csv is.
pub fn build(table: &Table, spec: &ChartSpec, context: &Context) -> Result<Chart, ChartError> {
    let xi = table.column(&spec.x)?;
    let yi = table.column(&spec.y)?;
    let ci = table.find(&format!("{}_ci95", spec.y));
    let reps = table.find("replications");
    let rep = table.find("replication");
    let si: Vec<usize> = spec
        .series
        .iter()
        .map(|s| table.column(s))
        .collect::<Result<_, _>>()?;

    // x: numbers (with one unit) or categories in order of appearance.
    let xs: Vec<Option<(f64, &str)>> = table.rows.iter().map(|r| parse_number(&r[xi])).collect();
    let numeric = !xs.is_empty() && xs.iter().all(Option::is_some);
    let (x_values, x_unit, categories): (Vec<f64>, String, Option<Vec<String>>) = if numeric {
        let unit = xs[0].map(|(_, u)| u.to_string()).unwrap_or_default();
        (xs.iter().flatten().map(|(v, _)| *v).collect(), unit, None)
    } else {
        let mut cats: Vec<String> = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let idx = table
            .rows
            .iter()
            .map(|r| {
                *seen.entry(r[xi].as_str()).or_insert_with(|| {
                    cats.push(r[xi].clone());
                    cats.len() - 1
                }) as f64
            })
            .collect();
        (idx, String::new(), Some(cats))
    };
    if spec.x_scale == Scale::Log {
        if categories.is_some() {
            return Err(ChartError::LogScale {
                column: spec.x.clone(),
                value: "words".into(),
            });
        }
        if let Some((_, r)) = x_values.iter().zip(&table.rows).find(|(v, _)| **v <= 0.0) {
            return Err(ChartError::LogScale {
                column: spec.x.clone(),
                value: r[xi].clone(),
            });
        }
    }

    // Series label parts per row: a column of numbers gives "name=value",
    // one of words the word alone.
    let numeric_col: Vec<bool> = si
        .iter()
        .map(|&c| table.rows.iter().all(|r| parse_number(&r[c]).is_some()))
        .collect();
    let parts: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| {
            si.iter()
                .zip(&numeric_col)
                .map(|(&c, &num)| label_part(&table.header[c], &row[c], num))
                .collect()
        })
        .collect();

    // Series are counted before anything is gathered: a chart tells apart
    // at most MAX_SERIES of them.
    let distinct: std::collections::HashSet<&Vec<String>> = parts.iter().collect();
    if distinct.len() > MAX_SERIES {
        return Err(ChartError::TooManySeries {
            n: distinct.len(),
            columns: spec
                .series
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" and "),
            max: MAX_SERIES,
        });
    }
    // Gather rows by series (in order of first appearance) and x.
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut cells: Vec<Vec<Cell>> = Vec::new();
    let mut key_of: HashMap<&Vec<String>, usize> = HashMap::new();
    // Per series, the cell of each x (by its bits, 0 and -0 as one).
    let mut cell_of: Vec<HashMap<u64, usize>> = Vec::new();
    for (i, row) in table.rows.iter().enumerate() {
        let k = *key_of.entry(&parts[i]).or_insert_with(|| {
            keys.push(parts[i].clone());
            cells.push(Vec::new());
            cell_of.push(HashMap::new());
            keys.len() - 1
        });
        let x = x_values[i];
        let bits = if x == 0.0 { 0 } else { x.to_bits() };
        let cell = match cell_of[k].get(&bits) {
            Some(&c) => &mut cells[k][c],
            None => {
                cell_of[k].insert(bits, cells[k].len());
                cells[k].push(Cell {
                    x,
                    ys: Vec::new(),
                    half: None,
                    replications: None,
                    numbers: Vec::new(),
                    rows: Vec::new(),
                });
                cells[k].last_mut().expect("just pushed")
            }
        };
        cell.ys
            .push(parse_number(&row[yi]).map_or(f64::NAN, |(v, _)| v));
        cell.half = ci.and_then(|c| parse_number(&row[c])).map(|(h, _)| h);
        cell.replications = reps
            .and_then(|c| parse_number(&row[c]))
            .map(|(v, _)| v as u64);
        if let Some(c) = rep {
            cell.numbers.push(row[c].clone());
        }
        cell.rows.push(i);
    }

    let dom = domain(&spec.y);
    let lines_only = spec.table.is_some();
    let mut replication_counts: Vec<u64> = Vec::new();
    let mut below_zero = 0usize;
    let mut to_zero = 0usize;
    let mut whole: Vec<(Vec<String>, Vec<Point>)> = Vec::new();
    for (key, cs) in keys.iter().zip(&mut cells) {
        cs.sort_by(|a, b| a.x.total_cmp(&b.x));
        let mut points = Vec::with_capacity(cs.len());
        for c in cs.iter() {
            let (y, half, r) = if c.rows.len() == 1 {
                let r = c.replications.or(rep.map(|_| 1));
                (c.ys[0], c.half, r)
            } else {
                let mut numbers = c.numbers.clone();
                numbers.sort();
                numbers.dedup();
                if ci.is_some() || rep.is_none() || numbers.len() < c.rows.len() {
                    return Err(ambiguous(table, &c.rows, xi, &si, key));
                }
                let (m, h) = stats::mean_ci95(&c.ys);
                (m, Some(h), Some(c.rows.len() as u64))
            };
            if let Some(r) = r {
                replication_counts.push(r);
            }
            let mut y = Some(y).filter(|y| y.is_finite());
            if spec.y_scale == Scale::Log && y.is_some_and(|v| v <= 0.0) {
                y = None;
                below_zero += 1;
            }
            let ci = y
                .filter(|_| !lines_only)
                .and_then(|y| clip_interval(y, half, dom));
            if spec.y_scale == Scale::Log && ci.is_some_and(|(lo, _)| lo <= 0.0) {
                to_zero += 1;
            }
            points.push(Point { x: c.x, y, ci });
        }
        whole.push((key.clone(), points));
    }
    if !whole.iter().any(|(_, ps)| ps.iter().any(|p| p.y.is_some())) {
        return Err(ChartError::NoData {
            column: spec.y.clone(),
        });
    }

    // Delays of 10^4 µs and more read better in ms (10^7: in s).
    let mut y_label = match spec.table.as_deref() {
        Some("timeseries") => describe_in(spec.table.as_deref(), &spec.y),
        _ => describe_among(&spec.y, &table.header),
    };
    let mut y_factor = 1.0;
    if spec.y.ends_with("_us") {
        let top = whole
            .iter()
            .flat_map(|(_, ps)| ps.iter())
            .filter_map(|p| p.y)
            .fold(0.0f64, |a, y| a.max(y.abs()));
        let (factor, unit) = if top >= 1e7 {
            (1e-6, "s")
        } else if top >= 1e4 {
            (1e-3, "ms")
        } else {
            (1.0, "µs")
        };
        y_factor = factor;
        if factor != 1.0 {
            for p in whole.iter_mut().flat_map(|(_, ps)| ps.iter_mut()) {
                p.y = p.y.map(|v| v * factor);
                p.ci = p.ci.map(|(a, b)| (a * factor, b * factor));
            }
            y_label = y_label.replace("(µs)", &format!("({unit})"));
        }
    }

    // One plot, or small multiples when there are too many lines.
    let word_titles = |cols: &[usize]| -> Option<String> {
        (!cols.is_empty() && cols.iter().all(|&k| !numeric_col[k])).then(|| {
            cols.iter()
                .map(|&k| describe_among(&table.header[si[k]], &table.header))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let all: Vec<usize> = (0..si.len()).collect();
    let (mut series, panels, legend) = if whole.len() <= MAX_LINES {
        let series = whole
            .into_iter()
            .map(|(k, points)| Series {
                label: k.join(", "),
                panel: 0,
                points,
                look: Look::Joined,
            })
            .collect::<Vec<_>>();
        let legend = if series.len() == 1 && series[0].label.is_empty() {
            Legend::Hidden
        } else {
            Legend::Entries {
                title: word_titles(&all),
            }
        };
        (series, Vec::new(), legend)
    } else if let Some(f) = facet_column(&keys) {
        let mut panels: Vec<String> = Vec::new();
        let series = whole
            .into_iter()
            .map(|(k, points)| {
                let panel = match panels.iter().position(|p| *p == k[f]) {
                    Some(p) => p,
                    None => {
                        panels.push(k[f].clone());
                        panels.len() - 1
                    }
                };
                let rest: Vec<&str> = k
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != f)
                    .map(|(_, s)| s.as_str())
                    .collect();
                Series {
                    label: rest.join(", "),
                    panel,
                    points,
                    look: Look::Joined,
                }
            })
            .collect();
        let rest: Vec<usize> = all.iter().copied().filter(|&k| k != f).collect();
        (
            series,
            panels,
            Legend::Entries {
                title: word_titles(&rest),
            },
        )
    } else if whole.len() <= MAX_PANELS {
        let panels: Vec<String> = whole.iter().map(|(k, _)| k.join(", ")).collect();
        let series = whole
            .into_iter()
            .enumerate()
            .map(|(i, (k, points))| Series {
                label: k.join(", "),
                panel: i,
                points,
                look: Look::Joined,
            })
            .collect();
        (series, panels, Legend::Hidden)
    } else {
        let n = whole.len();
        let series = whole
            .into_iter()
            .map(|(k, points)| Series {
                label: k.join(", "),
                panel: 0,
                points,
                look: Look::Joined,
            })
            .collect();
        (
            series,
            Vec::new(),
            Legend::Note(format!(
                "{n} series: too many to name or tell apart. Draw fewer (a [[chart]] \
                 with fewer series, or csmacd plot on a subset of summary.csv)."
            )),
        )
    };

    let mut theory_clipped = false;
    if !spec.theory.is_empty() {
        if categories.is_some() {
            return Err(ChartError::Theory(format!(
                "a theory line needs numbers on x; `{}` holds words",
                spec.x
            )));
        }
        let (lo, hi) = x_values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        // A theory line is drawn within the data's y range widened by its
        // span on each side: a formula that runs off to huge values never
        // squashes the data it is drawn over.
        let (ylo, yhi) = series
            .iter()
            .flat_map(|s| s.points.iter())
            .flat_map(|p| {
                p.y.into_iter()
                    .chain(p.ci.into_iter().flat_map(|(a, b)| [a, b]))
            })
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            });
        let span = (yhi - ylo).max(yhi.abs().max(ylo.abs()) * 0.1).max(1e-300);
        let keep = (ylo - span)..=(yhi + span);
        for t in &spec.theory {
            if series
                .iter()
                .any(|s| s.label == t.label && s.look != Look::Theory)
            {
                return Err(ChartError::Theory(format!(
                    "the theory line \"{}\" has the name of a series of the data; name it apart (e.g. \"{} (theory)\")",
                    t.label, t.label
                )));
            }
            let points: Vec<Point> = theory_xs(lo, hi, spec.x_scale)
                .into_iter()
                .map(|x| {
                    let y =
                        t.y.value(&[x])
                            .ok()
                            .map(|v| v * y_factor)
                            .filter(|v| v.is_finite() && (spec.y_scale != Scale::Log || *v > 0.0));
                    let kept = y.filter(|v| keep.contains(v));
                    theory_clipped |= y.is_some() && kept.is_none();
                    Point {
                        x,
                        y: kept,
                        ci: None,
                    }
                })
                .collect();
            // Drawn in every panel of small multiples.
            for panel in 0..panels.len().max(1) {
                series.push(Series {
                    label: t.label.clone(),
                    panel,
                    points: points.clone(),
                    look: Look::Theory,
                });
            }
        }
    }

    let x_label = if x_unit.is_empty() {
        describe(&spec.x)
    } else {
        format!("{} ({x_unit})", describe(&spec.x))
    };
    let title = spec.title.clone().unwrap_or_else(|| {
        let y = short(&spec.y);
        let mut t = format!("{}{} vs {}", y[..1].to_uppercase(), &y[1..], short(&spec.x));
        if spec.per_group() {
            t.push_str(", per station group");
        }
        t
    });
    let mut caption = caption(
        context,
        &replication_counts,
        ci.is_some() && !lines_only,
        below_zero,
        to_zero,
    );
    if !spec.theory.is_empty() {
        let names: Vec<String> = spec
            .theory
            .iter()
            .map(|t| format!("{} = {}", t.label, t.y.text()))
            .collect();
        if !caption.is_empty() && !caption.ends_with('.') {
            caption.push('.');
        }
        caption.push_str(&format!(
            " Lines without markers: theory, computed, not simulated ({}){}.",
            names.join("; "),
            if theory_clipped {
                "; drawn where within the data's range widened by its span"
            } else {
                ""
            }
        ));
    }
    if lines_only {
        caption = caption.replace("whiskers: 95 % CI over", "lines: mean over");
        caption = caption.replace(" (none where 1)", "");
    }
    let size = spec.size.unwrap_or_else(|| default_size(panels.len()));
    Ok(Chart {
        title,
        x_label,
        y_label,
        x_scale: spec.x_scale,
        y_scale: spec.y_scale,
        categories,
        series,
        panels,
        legend,
        caption,
        size,
        shade: spec.shade.clone(),
        lines_only,
    })
}

/// Where a theory line is computed: 200 points over the data's x range,
/// evenly spaced on the axis's scale.
fn theory_xs(lo: f64, hi: f64, scale: Scale) -> Vec<f64> {
    const N: usize = 200;
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    (0..N)
        .map(|k| {
            let f = k as f64 / (N - 1) as f64;
            match scale {
                Scale::Log => (lo.ln() + f * (hi.ln() - lo.ln())).exp(),
                Scale::Linear => lo + f * (hi - lo),
            }
        })
        .collect()
}

/// The size of a chart with `panels` small multiples (0: one plot).
pub fn default_size(panels: usize) -> (u32, u32) {
    if panels <= 1 {
        return DEFAULT_SIZE;
    }
    let (_, rows) = draw::grid(panels);
    (1000, (170 + 250 * rows as u32).min(1600))
}

/// The series column to split panels by: the one with the fewest values
/// that leaves at most [`MAX_LINES`] lines in each panel.
fn facet_column(keys: &[Vec<String>]) -> Option<usize> {
    let columns = keys.first().map_or(0, Vec::len);
    if columns < 2 {
        return None;
    }
    (0..columns)
        .filter_map(|f| {
            let mut panels: Vec<&str> = keys.iter().map(|k| k[f].as_str()).collect();
            panels.sort();
            panels.dedup();
            let mut rest: Vec<Vec<&String>> = keys
                .iter()
                .map(|k| {
                    k.iter()
                        .enumerate()
                        .filter(|(i, _)| *i != f)
                        .map(|(_, s)| s)
                        .collect()
                })
                .collect();
            rest.sort();
            rest.dedup();
            (rest.len() <= MAX_LINES && panels.len() <= MAX_PANELS).then_some((panels.len(), f))
        })
        .min()
        .map(|(_, f)| f)
}

/// The error for rows that repeat an x and a series with nothing to tell
/// them apart as replications: names the columns in which they differ.
fn ambiguous(table: &Table, rows: &[usize], xi: usize, si: &[usize], key: &[String]) -> ChartError {
    let first = &table.rows[rows[0]];
    let differ: Vec<&str> = (0..table.header.len())
        .filter(|&c| c != xi && !si.contains(&c))
        .filter(|&c| rows.iter().any(|&r| table.rows[r][c] != first[c]))
        .filter(|&c| {
            // Measured values differ anyway: name only sweep axes (dotted
            // paths) and columns of words.
            table.header[c].contains('.')
                || rows
                    .iter()
                    .all(|&r| parse_number(&table.rows[r][c]).is_none())
        })
        .map(|c| table.header[c].as_str())
        .collect();
    ChartError::Ambiguous {
        rows: rows.len(),
        x: table.rows[rows[0]][xi].clone(),
        series: if key.is_empty() {
            String::new()
        } else {
            format!(" in series `{}`", key.join(", "))
        },
        hint: if differ.is_empty() {
            String::new()
        } else {
            format!(" (they differ in: {})", differ.join(", "))
        },
    }
}

/// The caption: scenario, seed, and what the whiskers are.
fn caption(
    context: &Context,
    counts: &[u64],
    has_ci: bool,
    below_zero: usize,
    to_zero: usize,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(s) = &context.scenario {
        parts.push(format!("scenario \u{201c}{s}\u{201d}"));
    }
    if let Some(seed) = context.seed {
        parts.push(format!("seed {seed}"));
    }
    let lo = counts.iter().copied().min();
    let hi = counts.iter().copied().max();
    match (lo, hi) {
        (Some(1), Some(1)) => {
            parts.push("1 replication: no confidence interval".into());
        }
        (Some(lo), Some(hi)) if lo == hi => {
            parts.push(format!("whiskers: 95 % CI over {lo} replications"));
        }
        (Some(lo), Some(hi)) => {
            parts.push(format!(
                "whiskers: 95 % CI over {lo} to {hi} replications (none where 1)"
            ));
        }
        _ if has_ci => parts.push("whiskers: 95 % CI".into()),
        _ => {}
    }
    if to_zero > 0 {
        parts.push("a whisker reaching 0 runs to the foot of the log axis".into());
    }
    if below_zero > 0 {
        parts.push(format!(
            "{below_zero} point{} at or below 0 not shown on the log axis",
            if below_zero == 1 { "" } else { "s" }
        ));
    }
    parts.join("; ")
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
