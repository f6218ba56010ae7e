//! Reading a sweep file's `[[chart]]` tables into chart specs, checked
//! against the axes and the columns the world writes before any run.

use super::axes::Axis;
use crate::output::chart::{self, ChartSpec};
use crate::results::Columns;
use crate::scenario::reader::{FieldError, Fields};
use toml::{Table, Value};

/// Reads `[[chart]]` tables: x an axis or a summary column, y a summary
/// column, series axes; with `series = "group"`, one series per station
/// group, x and y then columns of the groups table. Scales, size and file
/// names are checked here, so that a bad chart stops the sweep before it runs.
/// `table = "timeseries"` (a table the world writes) draws from that table
/// (a line per server where it has a row per server);
/// `shade = "surge"` (each point's surge, in seconds: `surges`) or
/// `shade = [from, to]` shades an interval of x.
/// The column of a table with a row per server (a scenario of several
/// servers' timeseries.csv).
const SERVER_SERIES: &str = "server";

pub(super) fn read_charts(
    table: &Table,
    axes: &[Axis],
    columns: &Columns,
    surges: &[Option<(f64, f64)>],
) -> Result<Vec<ChartSpec>, FieldError> {
    use crate::scenario::reader::{Fields, Item};
    let Some(v) = table.get("chart") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(FieldError::new(
            "chart",
            "expected [[chart]] tables with x, y and optional series",
        ));
    };
    let axis_paths: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let metrics = columns.metrics;
    let groups: Option<&[&str]> = columns
        .tables
        .iter()
        .find(|t| t.name == chart::GROUP_TABLE)
        .map(|t| t.columns);
    let axis_columns: Vec<_> = axes.iter().map(Axis::column).collect();
    let mut charts: Vec<ChartSpec> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("chart.{i}");
        let mut f = Fields::of(Item {
            path: &path,
            value: item,
        })?;
        if f.contains("log_x") {
            return Err(f.err(
                "log_x",
                "is not a chart key; write x_scale = \"log\" (or \"linear\", the default)",
            ));
        }
        f.allow(KEYS)?;
        let series = f.with("series", |it| match it.value {
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let p = format!("{}.{k}", it.path);
                    Item { path: &p, value: v }.str().map(str::to_string)
                })
                .collect(),
            _ => Err(it.err("expected an axis path, \"group\", or a list of them")),
        })?;
        let series = series.unwrap_or_default();
        let per_group = series.iter().any(|s| s == chart::GROUP_SERIES);
        let tables: Vec<&str> = columns
            .tables
            .iter()
            .map(|t| t.name)
            .filter(|n| *n != chart::GROUP_TABLE)
            .collect();
        let from_table = match f.string("table")? {
            Some(t) if per_group => {
                return Err(f.err(
                    "table",
                    format!("`{t}` with series = \"group\": a per-group chart draws from groups.csv; remove one of them"),
                ))
            }
            Some(t) if tables.contains(&t.as_str()) => Some(t),
            Some(t) => {
                return Err(f.err(
                    "table",
                    format!(
                        "`{t}` is not a table this world writes per bin; allowed: {}",
                        list_or_none(&tables)
                    ),
                ))
            }
            None => None,
        };
        let from_file = from_table.as_ref().map(|t| format!("{t}.csv"));
        // The columns this chart can draw: summary.csv's, groups.csv's, or
        // the named table's.
        let (table_name, allowed): (&str, &[&str]) = if let Some(t) = &from_table {
            let cols = columns
                .tables
                .iter()
                .find(|s| s.name == t.as_str())
                .map_or(&[][..], |s| s.columns);
            (from_file.as_deref().unwrap_or_default(), cols)
        } else if per_group {
            match groups {
                Some(g) => ("groups.csv", g),
                None => {
                    return Err(f.err(
                        "series",
                        "\"group\" needs a world that writes groups.csv; this one does not",
                    ))
                }
            }
        } else {
            ("summary.csv", metrics)
        };
        let x = f.string("x")?;
        let x = f.require(
            "x",
            x,
            "the column on the x axis, e.g. x = \"stations.0.traffic.load\"",
        )?;
        if !axis_paths.contains(&x.as_str()) && !allowed.contains(&x.as_str()) {
            return Err(f.err(
                "x",
                format!(
                    "`{x}` is neither a sweep axis nor a column of {table_name}; axes: {}; columns: {}",
                    list_or_none(&axis_paths),
                    allowed.join(", ")
                ),
            ));
        }
        let y = f.string("y")?;
        let y = f.require("y", y, "the column on the y axis, e.g. y = \"throughput\"")?;
        if !allowed.contains(&y.as_str()) {
            return Err(f.err(
                "y",
                format!(
                    "`{y}` is not a column of {table_name}; allowed: {}",
                    allowed.join(", ")
                ),
            ));
        }
        // A table with a row per server and bin (several servers' timeseries)
        // draws a line per server: its `server` column splits the series
        // whether named or not.
        let mut series = series;
        if from_table.is_some()
            && allowed.contains(&SERVER_SERIES)
            && !series.iter().any(|s| s == SERVER_SERIES)
        {
            series.push(SERVER_SERIES.to_string());
        }
        for s in &series {
            let of_table =
                from_table.is_some() && s == SERVER_SERIES && allowed.contains(&SERVER_SERIES);
            if !axis_paths.contains(&s.as_str()) && s != chart::GROUP_SERIES && !of_table {
                return Err(f.err(
                    "series",
                    format!(
                        "`{s}` is neither a sweep axis nor \"group\"{}; axes: {}",
                        if from_table.is_some() {
                            " nor \"server\" of a table with a row per server"
                        } else {
                            ""
                        },
                        list_or_none(&axis_paths)
                    ),
                ));
            }
        }
        let title = f.string("title")?;
        let name = f.string("name")?;
        if let Some(n) = &name {
            if n.is_empty() || n.contains(['/', '\\']) || n.starts_with('.') {
                return Err(f.err("name", "a file stem without slashes, e.g. \"throughput\""));
            }
        }
        let scale = |f: &mut Fields, key: &str| -> Result<chart::Scale, FieldError> {
            Ok(match f.choice(key, &["linear", "log"])?.as_deref() {
                Some("log") => chart::Scale::Log,
                _ => chart::Scale::Linear,
            })
        };
        let x_scale = scale(&mut f, "x_scale")?;
        let y_scale = f.contains("y_scale").then_some(scale(&mut f, "y_scale")?);
        if x_scale == chart::Scale::Log {
            if let Some(a) = axes.iter().find(|a| a.path == x) {
                if let Some(bad) = a
                    .labels
                    .iter()
                    .find(|l| chart::parse_number(l).is_none_or(|(v, _)| v <= 0.0))
                {
                    return Err(f.err(
                        "x_scale",
                        format!("a log scale needs positive numbers; `{x}` takes `{bad}`"),
                    ));
                }
            }
        }
        let size = f.with("size", |it| {
            let bad = || it.err("expected [width, height] in pixels, e.g. size = [1200, 800]");
            let Value::Array(a) = it.value else {
                return Err(bad());
            };
            let [Value::Integer(w), Value::Integer(h)] = a.as_slice() else {
                return Err(bad());
            };
            let (w, h) = (
                u32::try_from(*w).unwrap_or(0),
                u32::try_from(*h).unwrap_or(0),
            );
            chart::check_size(w, h).map_err(|e| it.err(e))
        })?;
        let shade = f.with("shade", |it| read_shade(it, surges))?;
        let y_range = f.with("y_range", |it| {
            let bad = || it.err("expected [lo, hi] with lo < hi, in the y column's units, e.g. y_range = [0.9, 1.0]");
            let Value::Array(a) = it.value else {
                return Err(bad());
            };
            let num = |v: &Value| match v {
                Value::Integer(i) => Some(*i as f64),
                Value::Float(x) if x.is_finite() => Some(*x),
                _ => None,
            };
            match a.as_slice() {
                [lo, hi] => match (num(lo), num(hi)) {
                    (Some(lo), Some(hi)) if lo < hi => Ok((lo, hi)),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            }
        })?;
        if let (Some((lo, _)), Some(chart::Scale::Log)) = (y_range, y_scale) {
            if lo <= 0.0 {
                return Err(f.err("y_range", "a log y axis needs a range above 0"));
            }
        }
        let x_label = f.string("x_label")?;
        let y_label = f.string("y_label")?;
        let legend_title = f.string("legend_title")?;
        let mut channel = |key: &str| -> Result<Option<String>, FieldError> {
            let v = f.string(key)?;
            if let Some(c) = &v {
                if !series.contains(c) {
                    return Err(f.err(
                        key,
                        format!(
                            "`{c}` is not among this chart's series ({}); name one of them",
                            list_or_none(&series.iter().map(String::as_str).collect::<Vec<_>>())
                        ),
                    ));
                }
            }
            Ok(v)
        };
        let color_by = channel("color_by")?;
        let dash_by = channel("dash_by")?;
        if color_by.is_some() && color_by == dash_by {
            return Err(f.err(
                "dash_by",
                "names the colour's column too; give it another series column",
            ));
        }
        let share_y = f.boolean("share_y")?.unwrap_or(false);
        let lines = f.boolean("lines")?.unwrap_or(false);
        let theory = f.with("theory", read_theory)?.unwrap_or_default();
        if !theory.is_empty() {
            if let Some(a) = axes.iter().find(|a| a.path == x) {
                if let Some(bad) = a.labels.iter().find(|l| chart::parse_number(l).is_none()) {
                    return Err(f.err(
                        "theory",
                        format!("a theory line needs numbers on x; `{x}` takes `{bad}`"),
                    ));
                }
            }
        }
        f.finish(KEYS)?;
        // An axis is drawn from its column (`sweep.seed` for an axis `seed`).
        let column_of = |p: String| match axes.iter().find(|a| a.path == p) {
            Some(a) => a.column.clone(),
            None => p,
        };
        let x = column_of(x);
        let series: Vec<String> = series.into_iter().map(column_of).collect();
        let color_by = color_by.map(column_of);
        let dash_by = dash_by.map(column_of);
        let spec = ChartSpec {
            x,
            y,
            series,
            title,
            name,
            x_scale,
            y_scale,
            y_range,
            x_label,
            y_label,
            legend_title,
            color_by,
            dash_by,
            share_y,
            lines,
            size,
            table: from_table,
            shade,
            theory,
        };
        // Two charts of one name would overwrite each other.
        let file = chart::complete(&spec, &axis_columns)
            .name
            .unwrap_or_default();
        if names.contains(&file) {
            return Err(FieldError::new(
                format!("{path}.name"),
                format!(
                    "another [[chart]] is drawn as charts/{file}; give this one another `name`"
                ),
            ));
        }
        names.push(file);
        charts.push(spec);
    }
    Ok(charts)
}

/// The keys of a `[[chart]]` table.
const KEYS: &[&str] = &[
    "x",
    "y",
    "series",
    "title",
    "name",
    "x_scale",
    "y_scale",
    "y_range",
    "x_label",
    "y_label",
    "legend_title",
    "color_by",
    "dash_by",
    "share_y",
    "lines",
    "size",
    "table",
    "shade",
    "theory",
];

/// A chart's `theory`: `[{ label = "pure ALOHA", y = "x * exp(-2 * x)" }, ...]`,
/// each y an expression of the chart's x.
fn read_theory(it: crate::scenario::reader::Item) -> Result<Vec<chart::Theory>, FieldError> {
    let list = it.array()?;
    let mut out: Vec<chart::Theory> = Vec::new();
    for (k, v) in list.iter().enumerate() {
        let path = format!("{}.{k}", it.path);
        let item = crate::scenario::reader::Item {
            path: &path,
            value: v,
        };
        let mut f = Fields::of(item)?;
        let label = f.string("label")?;
        let label = f.require(
            "label",
            label,
            "the line's name in the legend, e.g. label = \"pure ALOHA\"",
        )?;
        let y = f.string("y")?;
        let y = f.require(
            "y",
            y,
            "the line as an expression of x, e.g. y = \"x * exp(-2 * x)\"",
        )?;
        f.finish(&["label", "y"])?;
        if out.iter().any(|t| t.label == label) {
            return Err(FieldError::new(
                format!("{path}.label"),
                format!("\"{label}\" names another theory line of this chart"),
            ));
        }
        let t = chart::Theory::new(&label, &y)
            .map_err(|e| FieldError::new(format!("{path}.y"), e.to_string()))?;
        out.push(t);
    }
    Ok(out)
}

/// A chart's `shade`: "surge" (the scenario's, the same at every point) or
/// [from, to] in the x axis's units.
fn read_shade(
    it: crate::scenario::reader::Item,
    surges: &[Option<(f64, f64)>],
) -> Result<chart::Shade, FieldError> {
    match it.value {
        Value::String(s) if s == "surge" => {
            let first = surges.first().copied().flatten();
            match first {
                Some((from, to)) if surges.iter().all(|s| *s == first) => Ok(chart::Shade {
                    from,
                    to,
                    label: "surge".into(),
                }),
                Some(_) => Err(it.err(
                    "the points' surges differ; shade a fixed interval, e.g. shade = [20, 30]",
                )),
                None => Err(it.err("\"surge\" needs a scenario with a surge; this one has none")),
            }
        }
        Value::Array(a) => {
            let num = |v: &Value| match v {
                Value::Integer(i) => Some(*i as f64),
                Value::Float(x) if x.is_finite() => Some(*x),
                _ => None,
            };
            match a.as_slice() {
                [a, b] => match (num(a), num(b)) {
                    (Some(from), Some(to)) if from < to => Ok(chart::Shade {
                        from,
                        to,
                        label: String::new(),
                    }),
                    _ => Err(it.err("expected [from, to] with from < to, in the x axis's units")),
                },
                _ => Err(it.err("expected [from, to] with from < to, in the x axis's units")),
            }
        }
        _ => Err(it.err("expected \"surge\" or [from, to] in the x axis's units")),
    }
}

fn list_or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
