//! Building a figure: a table's rows gathered by series and x (means with
//! their 95 % intervals, styles fixed by first appearance, small multiples,
//! theory lines, saturation marks) and the caption that says how; and the
//! shared y range of a sweep's paired figures.

use super::*;
use crate::output::style::{StyleIndex, Styles};
use crate::stats;
use std::collections::HashMap;

/// A short name for titles ("throughput", "offered load").
fn short(column: &str, header: &[String]) -> String {
    let d = describe_among(column, header);
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

/// One series as gathered: its label parts, its raw values in the series
/// columns, its points, whether each lies past saturation, and its style.
struct Gathered {
    key: Vec<String>,
    raw: Vec<String>,
    points: Vec<Point>,
    past: Vec<bool>,
    style: StyleIndex,
}

/// Whether the rows of one point lie past saturation: the offered load
/// exceeds the throughput by more than the 95 % interval of their
/// difference, or more than 1 % of frames are dropped. Such a point's delay
/// counts only the frames that got through.
fn saturated(table: &Table, rows: &[usize]) -> bool {
    let col = |name: &str| table.find(name);
    let value = |c: usize, r: usize| parse_number(&table.rows[r][c]).map(|(v, _)| v);
    let mean = |c: usize| {
        let v: Vec<f64> = rows.iter().filter_map(|&r| value(c, r)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    if let Some(d) = col("drop_fraction").and_then(mean) {
        if d > 0.01 {
            return true;
        }
    }
    let (Some(o), Some(t)) = (col("offered_load"), col("throughput")) else {
        return false;
    };
    let diffs: Vec<f64> = rows
        .iter()
        .filter_map(|&r| Some(value(o, r)? - value(t, r)?))
        .collect();
    if diffs.is_empty() {
        return false;
    }
    let (m, half) = if diffs.len() == 1 {
        // One row: summary.csv's intervals of each, combined.
        let h = |name: &str| {
            col(&format!("{name}_ci95"))
                .and_then(|c| value(c, rows[0]))
                .unwrap_or(0.0)
        };
        (diffs[0], h("offered_load").hypot(h("throughput")))
    } else {
        stats::mean_ci95(&diffs)
    };
    m > half.max(0.0) && m > 0.0
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
    build_figure(table, table, spec, context).map(|f| f.chart)
}

/// The values of column `name` of `t` in order of first appearance: a
/// sweep's tables list an axis's values in the order the file gives them.
fn first_appearance(t: &Table, name: &str) -> Vec<String> {
    let Some(c) = t.find(name) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &t.rows {
        if seen.insert(r[c].as_str()) {
            out.push(r[c].clone());
        }
    }
    out
}

/// [`build`], with each series styled by its values: the colour from the
/// value of the colour column (`color_by`, else the first series column),
/// the marker and dash from the value of the next (`dash_by`), each value's
/// index taken from `order` (the whole table the rows come from, in its
/// order of first appearance), so that a value keeps its style on every
/// chart drawn from that table, whatever the other series columns.
pub fn build_figure(
    table: &Table,
    order: &Table,
    spec: &ChartSpec,
    context: &Context,
) -> Result<Figure, ChartError> {
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
    // Per series, its raw cell in each series column.
    let mut raws: Vec<Vec<String>> = Vec::new();
    let mut cells: Vec<Vec<Cell>> = Vec::new();
    let mut key_of: HashMap<&Vec<String>, usize> = HashMap::new();
    // Per series, the cell of each x (by its bits, 0 and -0 as one).
    let mut cell_of: Vec<HashMap<u64, usize>> = Vec::new();
    for (i, row) in table.rows.iter().enumerate() {
        let k = *key_of.entry(&parts[i]).or_insert_with(|| {
            keys.push(parts[i].clone());
            raws.push(si.iter().map(|&c| row[c].clone()).collect());
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
    // A delay spanning more than two decades is drawn on a log axis unless
    // the spec says otherwise: a linear one squashes every value below
    // saturation against zero.
    let means: Vec<f64> = cells
        .iter()
        .flatten()
        .map(|c| c.ys.iter().sum::<f64>() / c.ys.len().max(1) as f64)
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    let span = means.iter().copied().fold(0.0f64, f64::max)
        / means.iter().copied().fold(f64::INFINITY, f64::min);
    let is_delay = spec.y.starts_with("delay_") || spec.y.starts_with("completion_");
    let auto_log = spec.y_scale.is_none() && is_delay && !lines_only && span > 100.0;
    let y_scale = spec
        .y_scale
        .unwrap_or(if auto_log { Scale::Log } else { Scale::Linear });
    let mut replication_counts: Vec<u64> = Vec::new();
    let mut below_zero = 0usize;
    let mut to_zero = 0usize;
    let mut whole: Vec<Gathered> = Vec::new();
    for ((key, raw), cs) in keys.iter().zip(&raws).zip(&mut cells) {
        cs.sort_by(|a, b| a.x.total_cmp(&b.x));
        let mut points = Vec::with_capacity(cs.len());
        let mut past = Vec::with_capacity(cs.len());
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
            if y_scale == Scale::Log && y.is_some_and(|v| v <= 0.0) {
                y = None;
                below_zero += 1;
            }
            let ci = y
                .filter(|_| !lines_only)
                .and_then(|y| clip_interval(y, half, dom));
            if y_scale == Scale::Log && ci.is_some_and(|(lo, _)| lo <= 0.0) {
                to_zero += 1;
            }
            points.push(Point { x: c.x, y, ci });
            past.push(!lines_only && saturated(table, &c.rows));
        }
        whole.push(Gathered {
            key: key.clone(),
            raw: raw.clone(),
            points,
            past,
            style: StyleIndex::default(),
        });
    }
    if !whole.iter().any(|g| g.points.iter().any(|p| p.y.is_some())) {
        return Err(ChartError::NoData {
            column: spec.y.clone(),
        });
    }
    // Each series' style from its values.
    let channel = |name: &Option<String>, what: &str| -> Result<Option<usize>, ChartError> {
        match name {
            None => Ok(None),
            Some(n) => spec
                .series
                .iter()
                .position(|s| s == n)
                .map(Some)
                .ok_or_else(|| {
                    ChartError::Style(format!(
                        "{what} `{n}` is not a series column of this chart; its series: {}",
                        if spec.series.is_empty() {
                            "none".to_string()
                        } else {
                            spec.series.join(", ")
                        }
                    ))
                }),
        }
    };
    let colour_col = channel(&spec.color_by, "color_by")?.unwrap_or(0);
    let dash_col =
        channel(&spec.dash_by, "dash_by")?.or_else(|| (0..si.len()).find(|&k| k != colour_col));
    let orders: Vec<Vec<String>> = spec
        .series
        .iter()
        .map(|name| {
            let o = first_appearance(order, name);
            if o.is_empty() {
                first_appearance(table, name)
            } else {
                o
            }
        })
        .collect();
    let index_of = |k: usize, v: &str| orders[k].iter().position(|o| o == v).unwrap_or(0);
    for g in &mut whole {
        if si.is_empty() {
            continue;
        }
        let c = index_of(colour_col, &g.raw[colour_col]);
        g.style = match dash_col {
            None => StyleIndex::all(c),
            Some(d) => {
                // The columns beyond colour and dash share the marker and
                // dash, in mixed radix after the dash column's.
                let mut m = index_of(d, &g.raw[d]);
                let mut radix = orders[d].len().max(1);
                for k in (0..si.len()).filter(|&k| k != colour_col && k != d) {
                    m += radix * index_of(k, &g.raw[k]);
                    radix *= orders[k].len().max(1);
                }
                StyleIndex {
                    colour: c,
                    marker: m,
                    dash: m,
                }
            }
        };
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
            .flat_map(|g| g.points.iter())
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
            for p in whole.iter_mut().flat_map(|g| g.points.iter_mut()) {
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
    // Two values on x make no trend: their points are not joined unless
    // the spec asks (categories never are).
    let distinct_x = {
        let mut xs: Vec<u64> = x_values.iter().map(|x| x.to_bits()).collect();
        xs.sort_unstable();
        xs.dedup();
        xs.len()
    };
    let look = if categories.is_none() && distinct_x <= 2 && !spec.lines && !lines_only {
        Look::Measured
    } else {
        Look::Joined
    };
    let all: Vec<usize> = (0..si.len()).collect();
    let n_series = whole.len();
    let facet = if n_series > MAX_LINES {
        facet_column(&keys)
    } else {
        None
    };
    let mut styled: Vec<(String, StyleIndex)> = Vec::new();
    let mut hollow_at: Vec<(usize, Vec<bool>)> = Vec::new();
    let mut series: Vec<Series> = Vec::with_capacity(n_series);
    let mut panels: Vec<String> = Vec::new();
    for (i, g) in whole.into_iter().enumerate() {
        let (label, panel) = if n_series <= MAX_LINES {
            (g.key.join(", "), 0)
        } else if let Some(f) = facet {
            let panel = match panels.iter().position(|p| *p == g.key[f]) {
                Some(p) => p,
                None => {
                    panels.push(g.key[f].clone());
                    panels.len() - 1
                }
            };
            let rest: Vec<&str> = g
                .key
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != f)
                .map(|(_, s)| s.as_str())
                .collect();
            (rest.join(", "), panel)
        } else if n_series <= MAX_PANELS {
            panels.push(g.key.join(", "));
            (g.key.join(", "), i)
        } else {
            (g.key.join(", "), 0)
        };
        if !styled.iter().any(|(l, _)| *l == label) {
            styled.push((label.clone(), g.style));
        }
        hollow_at.push((series.len(), g.past));
        series.push(Series {
            label,
            panel,
            points: g.points,
            look,
        });
    }
    let legend = if n_series <= MAX_LINES {
        if series.len() == 1 && series[0].label.is_empty() {
            Legend::Hidden
        } else {
            Legend::Entries {
                title: spec.legend_title.clone().or_else(|| word_titles(&all)),
            }
        }
    } else if let Some(f) = facet {
        let rest: Vec<usize> = all.iter().copied().filter(|&k| k != f).collect();
        Legend::Entries {
            title: spec.legend_title.clone().or_else(|| word_titles(&rest)),
        }
    } else if n_series <= MAX_PANELS {
        Legend::Hidden
    } else {
        Legend::Note(format!(
            "{n_series} series: too many to name or tell apart. Draw fewer (a [[chart]] \
             with fewer series, or csmacd plot --where on a subset of the rows)."
        ))
    };
    // Points past saturation are drawn hollow, where they show.
    let mut hollow: Vec<(usize, usize)> = Vec::new();
    for (k, past) in &hollow_at {
        for (p, &yes) in past.iter().enumerate() {
            if yes && series[*k].points[p].y.is_some() {
                hollow.push((*k, p));
            }
        }
    }
    // Whiskers at one numeric x that overlap are moved apart.
    let dodge = categories.is_none() && !lines_only && whiskers_overlap(&series);

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
        let first_free = styled
            .iter()
            .map(|(_, st)| st.colour + 1)
            .max()
            .unwrap_or(0);
        for (k, t) in spec.theory.iter().enumerate() {
            styled.push((
                t.label.clone(),
                StyleIndex {
                    colour: first_free + k,
                    marker: first_free + k,
                    dash: 1 + k,
                },
            ));
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
                            .filter(|v| v.is_finite() && (y_scale != Scale::Log || *v > 0.0));
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

    let x_label = spec.x_label.clone().unwrap_or_else(|| {
        if x_unit.is_empty() {
            describe_among(&spec.x, &table.header)
        } else {
            format!("{} ({x_unit})", describe_among(&spec.x, &table.header))
        }
    });
    let y_label = spec.y_label.clone().unwrap_or(y_label);
    let title = spec.title.clone().unwrap_or_else(|| {
        let y = short(&spec.y, &table.header);
        let mut t = format!(
            "{}{} vs {}",
            y[..1].to_uppercase(),
            &y[1..],
            short(&spec.x, &table.header)
        );
        if spec.per_group() {
            t.push_str(", per station group");
        }
        t
    });
    // The seed is no context on a chart that varies it.
    let mut context = context.clone();
    let is_seed = |c: &str| c == "seed" || c == "sweep.seed";
    if is_seed(&spec.x) || spec.series.iter().any(|s| is_seed(s)) {
        context.seed = None;
    }
    let mut caption = caption(
        &context,
        &replication_counts,
        ci.is_some() && !lines_only,
        below_zero,
        to_zero,
    );
    let mut note = |text: &str| {
        if !caption.is_empty() && !caption.ends_with('.') {
            caption.push('.');
        }
        if !caption.is_empty() {
            caption.push(' ');
        }
        caption.push_str(text);
    };
    if auto_log {
        note("Log y axis: the values span more than two decades.");
    }
    if dodge {
        note("Points at one x are drawn slightly apart so that their whiskers do not hide each other.");
    }
    if !hollow.is_empty() {
        note(&format!(
            "Hollow markers: past saturation (offered load above throughput by more than its 95 % CI, \
             or over 1 % of frames dropped){}.",
            if is_delay {
                "; their delays count only the frames delivered"
            } else {
                ""
            }
        ));
    }
    if !spec.theory.is_empty() {
        let names: Vec<String> = spec
            .theory
            .iter()
            .map(|t| format!("{} = {}", t.label, t.y.text()))
            .collect();
        note(&format!(
            "Lines without markers: theory, computed, not simulated ({}){}.",
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
    let y_range = spec.y_range.map(|(lo, hi)| (lo * y_factor, hi * y_factor));
    Ok(Figure {
        chart: Chart {
            title,
            x_label,
            y_label,
            x_scale: spec.x_scale,
            y_scale,
            categories,
            series,
            panels,
            legend,
            caption,
            size,
            shade: spec.shade.clone(),
            lines_only,
        },
        styles: Styles::of_parts(styled),
        options: Options {
            y_range,
            hollow,
            dodge,
        },
    })
}

/// The y values a chart draws, whiskers included: (lowest, highest).
fn y_extent(chart: &Chart) -> Option<(f64, f64)> {
    let mut out: Option<(f64, f64)> = None;
    for p in chart.series.iter().flat_map(|s| s.points.iter()) {
        let Some(y) = p.y else { continue };
        let (a, b) = p.ci.unwrap_or((y, y));
        let (lo, hi) = out.unwrap_or((f64::INFINITY, f64::NEG_INFINITY));
        out = Some((lo.min(a).min(y), hi.max(b).max(y)));
    }
    out
}

/// Gives the figures that ask for it (`Some(y)`: their y column) one y
/// range per y column: the union of their data's, so that charts of one
/// metric read against one scale. A figure with a fixed range keeps it.
pub fn share_y<'a>(figures: impl IntoIterator<Item = (Option<&'a str>, &'a mut Figure)>) {
    let mut groups: Vec<(&str, Vec<&mut Figure>)> = Vec::new();
    for (y, f) in figures {
        let Some(y) = y else { continue };
        match groups.iter_mut().find(|(g, _)| *g == y) {
            Some((_, v)) => v.push(f),
            None => groups.push((y, vec![f])),
        }
    }
    for (_, figs) in groups {
        // Units must agree (a delay in µs on one chart and ms on another
        // cannot share numbers).
        let labels: Vec<&str> = figs.iter().map(|f| f.chart.y_label.as_str()).collect();
        if labels.iter().any(|l| *l != labels[0]) {
            continue;
        }
        let union = figs
            .iter()
            .filter_map(|f| y_extent(&f.chart))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
        let Some((lo, hi)) = union else { continue };
        for f in figs {
            if f.options.y_range.is_some() {
                continue;
            }
            let lo = if f.chart.y_scale == Scale::Linear {
                lo.min(0.0)
            } else {
                lo
            };
            let pad = if f.chart.y_scale == Scale::Linear {
                (hi - lo) * 0.05
            } else {
                0.0
            };
            let (lo, hi) = if f.chart.y_scale == Scale::Log {
                (lo / 1.2, hi * 1.2)
            } else {
                (lo, hi + pad)
            };
            if hi > lo && (f.chart.y_scale == Scale::Linear || lo > 0.0) {
                f.options.y_range = Some((lo, hi));
            }
        }
    }
}

/// Whether two series of one panel have whiskers (or points) that overlap
/// at one x: only then are they drawn apart.
fn whiskers_overlap(series: &[Series]) -> bool {
    let mut at: HashMap<(usize, u64), Vec<(f64, f64)>> = HashMap::new();
    for s in series.iter().filter(|s| s.look != Look::Theory) {
        for p in &s.points {
            let Some(y) = p.y else { continue };
            let (lo, hi) = p.ci.unwrap_or((y, y));
            at.entry((s.panel, p.x.to_bits()))
                .or_default()
                .push((lo, hi));
        }
    }
    at.values().any(|v| {
        v.iter().enumerate().any(|(i, a)| {
            v[..i]
                .iter()
                .any(|b| a.0 <= b.1 && b.0 <= a.1 && (a.1 > a.0 || b.1 > b.0))
        })
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
    if let Some(f) = &context.source {
        parts.push(format!("from {f}"));
    }
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
                "whiskers: 95 % CI over {lo} to {hi} replications{}",
                if lo == 1 { " (none where 1)" } else { "" }
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
