//! A lesson file's `[[chart]]`: points over its variants (or over the values
//! of a name), a series per value of one axis, and `theory` lines and bars,
//! expressions of `x` drawn under them, as the lessons' charts are drawn
//! (chart.rs).

use super::chart::{Builder, LessonChart};
use super::queries::{self, FUNCS, VARS};
use super::runs::Ran;
use super::spec::{expression, read_list, read_rows, rows_variant, text, Rows, Text, Variant};
use crate::expr::{Expr, Names};
use crate::scenario::reader::{describe, FieldError, Fields, Item};
use crate::sweep::Axis;

pub const CHART_KEYS: &[&str] = &[
    "name", "title", "x_label", "y_label", "caption", "log_y", "over", "variant", "x", "series",
    "points", "theory",
];
const POINTS_KEYS: &[&str] = &["label", "y", "ci", "per_replication"];
const THEORY_KEYS: &[&str] = &[
    "label", "y", "at_x", "series", "bars", "x_range", "steps", "like",
];

/// A point's runs (None: the lesson's scenario) and the value of the name
/// it is drawn over, if any.
type Row = (Option<usize>, Vec<f64>);

/// A chart a lesson file draws.
#[derive(Clone, Debug)]
pub struct ChartSpec {
    /// The files' name: NAME.png and NAME.csv.
    pub name: String,
    /// The title and caption, with numbers of the lesson's scenario (as
    /// run, `--set` included) in them (`{=...}`).
    pub title: Text,
    pub x_label: String,
    pub y_label: String,
    pub caption: Text,
    pub log_y: bool,
    pub rows: Rows,
    pub x: Expr,
    /// The axis whose values make the series (its path).
    pub series: Option<String>,
    pub points: Vec<PointsSpec>,
    pub theory: Vec<TheorySpec>,
}

/// Simulated points: one per row (per series).
#[derive(Clone, Debug)]
pub struct PointsSpec {
    /// The legend's label; `{series}` stands for the series' value.
    pub label: Text,
    pub y: Expr,
    /// The 95 % interval, [lo, hi], when given.
    pub ci: Option<(Expr, Expr)>,
    pub per_replication: bool,
}

/// For which series a theory line is drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum For {
    /// The runs of the chart's rows' first variant (the lesson's scenario
    /// when over a name), in a colour of its own.
    Chart,
    /// Each series, on the scenario of its first variant, in its colour.
    Each,
    /// One series (by its label).
    One(String),
}

/// A closed form drawn under the points.
#[derive(Clone, Debug)]
pub struct TheorySpec {
    /// The legend's label (`{series}`, and `{=...}` numbers of its scenario).
    pub label: Text,
    /// y as an expression of `x` (and the scenario's constants).
    pub y: Option<Expr>,
    /// A vertical line at this x, over the y range drawn.
    pub at_x: Option<Expr>,
    pub series: For,
    /// Bars at the points' x values, for a distribution.
    pub bars: bool,
    pub x_range: Option<(f64, f64)>,
    pub steps: usize,
    /// Drawn in the colour of these points (their index): the closed form
    /// of what they measure.
    pub like: Option<usize>,
}

/// Reads one `[[chart]]`.
pub fn read(f: &mut Fields, variants: &[Variant], axes: &[Axis]) -> Result<ChartSpec, FieldError> {
    let name = f.string("name")?;
    let name = f.require(
        "name",
        name,
        "name the chart's files, e.g. name = \"throughput-vs-load\"",
    )?;
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(f.err(
            "name",
            format!("\"{name}\" is not a file name of a-z, 0-9 and -, at most 64 characters"),
        ));
    }
    let plain = |f: &mut Fields, key: &str| f.string(key).map(Option::unwrap_or_default);
    let x_label = plain(f, "x_label")?;
    let y_label = plain(f, "y_label")?;
    let title = text(f, "title", &names_of(VARS))?.unwrap_or_else(|| Text::plain(""));
    let caption = text(f, "caption", &names_of(VARS))?.unwrap_or_else(|| Text::plain(""));
    let log_y = f.boolean("log_y")?.unwrap_or(false);
    let mut reserved: Vec<&str> = VARS.to_vec();
    reserved.push("x");
    let mut rows = read_rows(f, "over", variants, &reserved)?;
    rows_variant(f, &mut rows, variants)?;
    let extra: Vec<String> = rows.name().map(str::to_string).into_iter().collect();
    let vars = queries::vars_with(&extra);
    let names = Names {
        vars: &vars,
        funcs: FUNCS,
        random: false,
    };
    let x = match (f.contains("x"), rows.name()) {
        (false, Some(n)) => Expr::parse(n, &names).map_err(|e| f.err("over", e.to_string()))?,
        _ => expression(f, "x", &names)?,
    };
    let series = f.string("series")?;
    if let Some(s) = &series {
        if !axes.iter().any(|a| a.path == *s) {
            let known: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
            return Err(f.err(
                "series",
                format!(
                    "\"{s}\" is not an axis of [variants]; its axes: {}",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
        let grid_only = match &rows {
            Rows::Variants(v) => v
                .iter()
                .all(|v| v.is_some_and(|k| variants[k].grid.is_some())),
            Rows::Values { .. } => false,
        };
        if !grid_only {
            return Err(f.err(
                "series",
                "series split the points of the [variants] grid; over = \"variants\" (or the \
                 grid's variants by name) only",
            ));
        }
    }
    let points = read_list(f, "points", POINTS_KEYS, |p| {
        let label = text(p, "label", &names_of(VARS))?;
        let label = p.require(
            "label",
            label,
            "give the legend's label, e.g. label = \"{series} (simulated)\"",
        )?;
        let y = expression(p, "y", &names)?;
        let ci = p.with("ci", |i| {
            let a = i.array()?;
            if a.len() != 2 {
                return Err(i.err("expected [lo, hi], two expressions"));
            }
            let one = |k: usize| match &a[k] {
                toml::Value::String(t) => Expr::parse(t, &names)
                    .map_err(|e| FieldError::new(format!("{}.{k}", i.path), e.to_string())),
                other => Err(FieldError::new(
                    format!("{}.{k}", i.path),
                    format!(
                        "expected an expression in quotes, found {}",
                        describe(other)
                    ),
                )),
            };
            Ok((one(0)?, one(1)?))
        })?;
        let per_replication = p.boolean("per_replication")?.unwrap_or(false);
        if per_replication && ci.is_some() {
            return Err(p.err(
                "ci",
                "per_replication gives the 95 % interval already; give one or the other",
            ));
        }
        Ok(PointsSpec {
            label,
            y,
            ci,
            per_replication,
        })
    })?;
    if points.is_empty() {
        return Err(f.err(
            "points",
            "missing; give what the chart draws as [[chart.points]] with a label and y",
        ));
    }
    let x_name = ["x".to_string()];
    let theory_vars = queries::vars_with(&x_name);
    let theory_names = Names {
        vars: &theory_vars,
        funcs: FUNCS,
        random: false,
    };
    let series_labels: Vec<String> = series
        .as_ref()
        .and_then(|s| axes.iter().find(|a| a.path == *s))
        .map(|a| a.labels.clone())
        .unwrap_or_default();
    let theory = read_list(f, "theory", THEORY_KEYS, |t| {
        let label = text(t, "label", &names_of(VARS))?;
        let label = t.require(
            "label",
            label,
            "give the legend's label, e.g. label = \"G e^-2G (theory)\"",
        )?;
        let y = match t.contains("y") {
            true => Some(expression(t, "y", &theory_names)?),
            false => None,
        };
        let at_x = match t.contains("at_x") {
            true => Some(expression(t, "at_x", &names_of(&theory_vars))?),
            false => None,
        };
        if y.is_some() == at_x.is_some() {
            return Err(t.err(
                "y",
                "give y (an expression of x) or at_x (a vertical line), one of them",
            ));
        }
        let bars = t.boolean("bars")?.unwrap_or(false);
        if bars && at_x.is_some() {
            return Err(t.err("bars", "bars go with y"));
        }
        let for_ = match t.string("series")? {
            None => For::Chart,
            Some(s) if series.is_none() => {
                return Err(t.err(
                    "series",
                    format!("\"{s}\": the chart has no series; give the chart series = \"<axis>\""),
                ))
            }
            Some(s) if s == "each" => For::Each,
            Some(s) if series_labels.contains(&s) => For::One(s),
            Some(s) => {
                return Err(t.err(
                    "series",
                    format!(
                        "\"{s}\" is not a value of the series' axis; its values: {}, or \"each\"",
                        series_labels.join(", ")
                    ),
                ))
            }
        };
        let x_range = t.with("x_range", |i| {
            let a = i.array()?;
            let v: Vec<f64> = a
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    Item {
                        path: &format!("{}.{k}", i.path),
                        value: v,
                    }
                    .float()
                })
                .collect::<Result<_, _>>()?;
            match v[..] {
                [lo, hi] if lo < hi => Ok((lo, hi)),
                _ => Err(i.err("expected [lo, hi], two numbers with lo < hi")),
            }
        })?;
        let steps = t.integer("steps", 1, 10_000)?.unwrap_or(120) as usize;
        let like = match t.string("like")? {
            None => None,
            Some(_) if for_ != For::Chart => {
                return Err(t.err("like", "a line of a series has that series' colour already"))
            }
            Some(l) => match points.iter().position(|p| p.label == Text::plain(&l)) {
                Some(k) => Some(k),
                None => {
                    return Err(t.err(
                        "like",
                        format!("\"{l}\" is not the label of one of the chart's [[chart.points]]"),
                    ))
                }
            },
        };
        Ok(TheorySpec {
            label,
            y,
            at_x,
            series: for_,
            bars,
            x_range,
            steps,
            like,
        })
    })?;
    Ok(ChartSpec {
        name,
        title,
        x_label,
        y_label,
        caption,
        log_y,
        rows,
        x,
        series,
        points,
        theory,
    })
}

fn names_of<'a>(vars: &'a [&'a str]) -> Names<'a> {
    Names {
        vars,
        funcs: FUNCS,
        random: false,
    }
}

impl ChartSpec {
    /// Its expressions, with the keys they are written at (chart `k`).
    pub fn expressions(&self, k: usize) -> Vec<(String, &Expr)> {
        let mut out = vec![(format!("chart.{k}.x"), &self.x)];
        out.extend(self.title.exprs().map(|e| (format!("chart.{k}.title"), e)));
        out.extend(
            self.caption
                .exprs()
                .map(|e| (format!("chart.{k}.caption"), e)),
        );
        for (j, p) in self.points.iter().enumerate() {
            out.push((format!("chart.{k}.points.{j}.y"), &p.y));
            out.extend(
                p.label
                    .exprs()
                    .map(|e| (format!("chart.{k}.points.{j}.label"), e)),
            );
            if let Some((lo, hi)) = &p.ci {
                out.push((format!("chart.{k}.points.{j}.ci"), lo));
                out.push((format!("chart.{k}.points.{j}.ci"), hi));
            }
        }
        for (j, t) in self.theory.iter().enumerate() {
            out.extend(
                t.label
                    .exprs()
                    .map(|e| (format!("chart.{k}.theory.{j}.label"), e)),
            );
            if let Some(y) = &t.y {
                out.push((format!("chart.{k}.theory.{j}.y"), y));
            }
            if let Some(a) = &t.at_x {
                out.push((format!("chart.{k}.theory.{j}.at_x"), a));
            }
        }
        out
    }

    /// The series: (label, the rows of each), in the order of the axis's
    /// values (one unnamed series without a series axis).
    fn groups(&self, variants: &[Variant], axes: &[Axis]) -> Vec<(String, Vec<Row>)> {
        let rows: Vec<Row> = match &self.rows {
            Rows::Variants(v) => v.iter().map(|&v| (v, Vec::new())).collect(),
            Rows::Values {
                values, variant, ..
            } => values.iter().map(|&x| (*variant, vec![x])).collect(),
        };
        let Some(path) = &self.series else {
            return vec![(String::new(), rows)];
        };
        let axis = axes
            .iter()
            .find(|a| a.path == *path)
            .expect("checked when read");
        let label_of = |v: Option<usize>| {
            v.and_then(|k| variants[k].grid.as_ref())
                .and_then(|g| g.labels.iter().find(|(p, _)| p == path))
                .map(|(_, l)| l.clone())
        };
        axis.labels
            .iter()
            .map(|l| {
                let mine = rows
                    .iter()
                    .filter(|(v, _)| label_of(*v).as_ref() == Some(l))
                    .cloned()
                    .collect();
                (l.clone(), mine)
            })
            .filter(|(_, r): &(String, Vec<_>)| !r.is_empty())
            .collect()
    }

    /// The chart drawn from the runs.
    pub fn build(&self, ran: &Ran, variants: &[Variant], axes: &[Axis]) -> LessonChart {
        let groups = self.groups(variants, axes);
        let first = groups.first().and_then(|g| g.1.first()).and_then(|r| r.0);
        let on = |v: Option<usize>| move |e: &Expr| ran.value(v, e, None, &[]).ok();
        let mut b = Builder::new(
            &self.title.fill(&mut on(first)),
            &self.x_label,
            &self.y_label,
        )
        .caption(self.caption.fill(&mut on(first)));
        if self.log_y {
            b = b.log_y();
        }
        let several = self.series.is_some();
        // Without series, the closed forms take the first colours and the
        // points the next; with series, each series' colour is its own and
        // the closed forms of the whole chart follow them.
        let chart_theories = self
            .theory
            .iter()
            .filter(|t| t.series == For::Chart && t.like.is_none())
            .count();
        let mut xs_drawn: Vec<f64> = Vec::new();
        let mut ys_drawn: Vec<f64> = Vec::new();
        let mut measured = Vec::new();
        for (pi, p) in self.points.iter().enumerate() {
            for (si, (label, rows)) in groups.iter().enumerate() {
                let style = if several { si } else { chart_theories + pi };
                let mut pts = Vec::new();
                for (v, extra) in rows {
                    let Ok(x) = ran.value(*v, &self.x, None, extra) else {
                        continue;
                    };
                    if !x.is_finite() {
                        continue;
                    }
                    let (y, ci) = if p.per_replication {
                        match ran.mean(*v, &p.y, extra) {
                            Ok(m) if m.share.is_some() => (m.mean, m.share),
                            Ok(m) if m.half_width.is_finite() => {
                                (m.mean, Some((m.mean - m.half_width, m.mean + m.half_width)))
                            }
                            Ok(m) => (m.mean, None),
                            Err(_) => (f64::NAN, None),
                        }
                    } else {
                        let y = ran.value(*v, &p.y, None, extra).unwrap_or(f64::NAN);
                        let ci = p.ci.as_ref().and_then(|(lo, hi)| {
                            let lo = ran.value(*v, lo, None, extra).ok()?;
                            let hi = ran.value(*v, hi, None, extra).ok()?;
                            (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
                        });
                        (y, ci)
                    };
                    let shown = y.is_finite() && !(self.log_y && y <= 0.0);
                    let y = shown.then_some(y);
                    let ci = ci.filter(|_| shown).map(|(lo, hi)| {
                        if self.log_y {
                            (lo.max(f64::MIN_POSITIVE), hi)
                        } else {
                            (lo, hi)
                        }
                    });
                    xs_drawn.push(x);
                    if let Some(y) = y {
                        ys_drawn.push(y);
                    }
                    if let Some((_, hi)) = ci {
                        ys_drawn.push(hi);
                    }
                    pts.push((x, y, ci));
                }
                let on_series = rows.first().and_then(|r| r.0);
                let text = p.label.fill(&mut on(on_series)).replace("{series}", label);
                measured.push((text, style, pts));
            }
        }
        let x_top = xs_drawn.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let y_top = ys_drawn.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let x_hi = if x_top.is_finite() { x_top * 1.05 } else { 1.0 };
        let mut next_style = if several { groups.len() } else { 0 };
        for t in &self.theory {
            let targets: Vec<(String, usize, Option<usize>, &Vec<Row>)> = match &t.series {
                For::Chart => {
                    let style = match t.like {
                        Some(k) => chart_theories + k,
                        None => {
                            next_style += 1;
                            next_style - 1
                        }
                    };
                    let first = groups.first().map(|g| &g.1);
                    match first {
                        Some(rows) => {
                            vec![(String::new(), style, rows.first().and_then(|r| r.0), rows)]
                        }
                        None => Vec::new(),
                    }
                }
                For::Each => groups
                    .iter()
                    .enumerate()
                    .map(|(si, (l, rows))| (l.clone(), si, rows.first().and_then(|r| r.0), rows))
                    .collect(),
                For::One(want) => groups
                    .iter()
                    .enumerate()
                    .filter(|(_, (l, _))| l == want)
                    .map(|(si, (l, rows))| (l.clone(), si, rows.first().and_then(|r| r.0), rows))
                    .collect(),
            };
            for (series, style, variant, rows) in targets {
                let label = t.label.fill(&mut on(variant)).replace("{series}", &series);
                if let Some(at) = &t.at_x {
                    if let Ok(x) = ran.value(variant, at, None, &[f64::NAN]) {
                        if x.is_finite() && y_top.is_finite() {
                            b.theory(&label, style, [(x, 0.0), (x, y_top)]);
                        }
                    }
                    continue;
                }
                let y = t.y.as_ref().expect("y or at_x");
                let xs: Vec<f64> = if t.bars {
                    rows.iter()
                        .filter_map(|(v, extra)| ran.value(*v, &self.x, None, extra).ok())
                        .filter(|x| x.is_finite())
                        .collect()
                } else {
                    let (lo, hi) = t.x_range.unwrap_or((0.0, x_hi));
                    super::chart::grid(lo, hi, t.steps).collect()
                };
                let pts: Vec<(f64, f64)> = xs
                    .into_iter()
                    .filter_map(|x| {
                        let v = ran.value(variant, y, None, &[x]).ok()?;
                        (v.is_finite() && !(self.log_y && v <= 0.0)).then_some((x, v))
                    })
                    .collect();
                if t.bars {
                    b.theory_bars(&label, style, pts);
                } else {
                    b.theory(&label, style, pts);
                }
            }
        }
        for (label, style, pts) in measured {
            b.simulated(&label, style, pts);
        }
        b.done(&self.name)
    }
}
