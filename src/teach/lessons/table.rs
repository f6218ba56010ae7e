//! A lesson file's `[table]`: what the lesson prints as rows (one per
//! variant, or per value of a name), its columns expressions of the runs
//! (a mean with its 95 % interval where asked) or a variant's labels.

use super::queries::{self, FUNCS, VARS};
use super::runs::{show, Ran};
use super::spec::{self, expression, read_list, read_rows, rows_variant, Rows, Text, Variant};
use crate::expr::{Expr, Names};
use crate::scenario::reader::{FieldError, Fields};
use crate::sweep::Axis;

const TABLE_KEYS: &[&str] = &[
    "rows",
    "variant",
    "transpose",
    "pivot",
    "scenario_label",
    "column",
];
const COLUMN_KEYS: &[&str] = &[
    "title",
    "value",
    "label",
    "text",
    "digits",
    "per_replication",
];

/// What a table shows.
#[derive(Clone, Debug)]
pub struct TableSpec {
    pub rows: Rows,
    pub columns: Vec<Column>,
    /// Columns printed as rows (a table of one run's numbers reads better
    /// down the page).
    pub transpose: bool,
    /// What a `label = "variant"` column calls the lesson's own runs
    /// (default "scenario").
    pub scenario_label: Option<String>,
    /// An axis of the grid whose values become columns: a row per value of
    /// the other axes, the columns of numbers repeated per value of this one.
    pub pivot: Option<String>,
}

/// One column: its header and what each row shows in it.
#[derive(Clone, Debug)]
pub struct Column {
    pub title: String,
    pub show: Shown,
    /// Decimals (default: whole numbers bare, others with 3).
    pub digits: Option<usize>,
    /// The mean over the replications with its 95 % interval.
    pub per_replication: bool,
}

/// What a column shows.
#[derive(Clone, Debug)]
pub enum Shown {
    Value(Expr),
    /// The variant's name.
    Name,
    /// The variant's label on the grid's axis of this path.
    Axis(String),
    /// A text with numbers of the row's runs in it (`{=...}`).
    Text(Text),
}

/// Reads `[table]`.
pub fn read(mut f: Fields, variants: &[Variant], axes: &[Axis]) -> Result<TableSpec, FieldError> {
    f.allow(TABLE_KEYS)?;
    let mut rows = read_rows(&mut f, "rows", variants, VARS)?;
    rows_variant(&mut f, &mut rows, variants)?;
    let transpose = f.boolean("transpose")?.unwrap_or(false);
    let scenario_label = f.string("scenario_label")?;
    let pivot = f.string("pivot")?;
    if let Some(p) = &pivot {
        let grid_only = match &rows {
            Rows::Variants(v) => v
                .iter()
                .all(|v| v.is_some_and(|k| variants[k].grid.is_some())),
            Rows::Values { .. } => false,
        };
        if !axes.iter().any(|a| a.path == *p) || axes.len() < 2 || !grid_only {
            return Err(f.err(
                "pivot",
                format!(
                    "\"{p}\": pivot names one of two or more [variants] axes, over the grid's \
                     variants; its axes: {}",
                    axes.iter()
                        .map(|a| a.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    let extra: Vec<String> = rows.name().map(str::to_string).into_iter().collect();
    let vars = queries::vars_with(&extra);
    let names = Names {
        vars: &vars,
        funcs: FUNCS,
        random: false,
    };
    let columns = read_list(&mut f, "column", COLUMN_KEYS, |c| {
        read_column(c, &names, axes, &rows)
    })?;
    if columns.is_empty() {
        return Err(f.err(
            "column",
            "missing; give the table's columns as [[table.column]] tables with a title and a \
             value (an expression) or label = \"variant\"",
        ));
    }
    f.finish(TABLE_KEYS)?;
    Ok(TableSpec {
        rows,
        columns,
        transpose,
        scenario_label,
        pivot,
    })
}

fn read_column(
    c: &mut Fields,
    names: &Names,
    axes: &[Axis],
    rows: &Rows,
) -> Result<Column, FieldError> {
    let title = c.string("title")?;
    let title = c.require(
        "title",
        title,
        "give the column's header, e.g. title = \"throughput\"",
    )?;
    let label = c.string("label")?;
    if let Some(t) = spec::text(c, "text", names)? {
        if label.is_some() || c.contains("value") {
            return Err(c.err("text", "give one of value, label and text"));
        }
        return Ok(Column {
            title,
            show: Shown::Text(t),
            digits: None,
            per_replication: false,
        });
    }
    let show = match (label, c.contains("value")) {
        (Some(_), true) => {
            return Err(c.err(
                "label",
                "give either value (an expression) or label, not both",
            ))
        }
        (Some(l), false) => {
            if matches!(rows, Rows::Values { .. }) {
                return Err(c.err(
                    "label",
                    "rows of a name's values have no variant to label; show the name as value",
                ));
            }
            if l == "variant" {
                Shown::Name
            } else if axes.iter().any(|a| a.path == l) {
                Shown::Axis(l)
            } else {
                let mut allowed = vec!["variant".to_string()];
                allowed.extend(axes.iter().map(|a| a.path.clone()));
                return Err(c.err(
                    "label",
                    format!(
                        "\"{l}\" is not \"variant\" nor an axis of [variants]; allowed: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        (None, _) => Shown::Value(expression(c, "value", names)?),
    };
    let digits = c.integer("digits", 0, 12)?.map(|d| d as usize);
    let per_replication = c.boolean("per_replication")?.unwrap_or(false);
    Ok(Column {
        title,
        show,
        digits,
        per_replication,
    })
}

impl TableSpec {
    /// Its expressions, with the keys they are written at.
    pub fn expressions(&self) -> Vec<(String, &Expr)> {
        self.columns
            .iter()
            .enumerate()
            .flat_map(|(k, c)| match &c.show {
                Shown::Value(e) => vec![(format!("table.column.{k}.value"), e)],
                Shown::Text(t) => t
                    .exprs()
                    .map(|e| (format!("table.column.{k}.text"), e))
                    .collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The table as text cells, header first.
    pub fn render(&self, ran: &Ran, variants: &[Variant]) -> Vec<Vec<String>> {
        let own = self.scenario_label.as_deref();
        let mut out: Vec<Vec<String>> =
            vec![self.columns.iter().map(|c| c.title.clone()).collect()];
        let rows: Vec<(Option<usize>, Vec<f64>)> = match &self.rows {
            // A variant a --set made the same as an earlier one is left out.
            Rows::Variants(v) => v
                .iter()
                .filter(|v| v.is_none_or(|k| !ran.left_out[k]))
                .map(|&v| (v, Vec::new()))
                .collect(),
            Rows::Values {
                values, variant, ..
            } => values.iter().map(|&x| (*variant, vec![x])).collect(),
        };
        match &self.pivot {
            None => {
                for (v, extra) in rows {
                    out.push(
                        self.columns
                            .iter()
                            .map(|c| cell(c, ran, v, &extra, variants, own))
                            .collect(),
                    );
                }
            }
            Some(p) => out = self.pivoted(p, ran, variants, &rows),
        }
        if self.transpose {
            let cols = out[0].len();
            out = (0..cols)
                .map(|c| out.iter().map(|r| r[c].clone()).collect())
                .collect();
        }
        out
    }
}

/// A variant's (axis path, label) on the grid's axes.
type Labels = Vec<(String, String)>;

impl TableSpec {
    /// The rows grouped by their labels on the axes but `pivot`; the label
    /// columns once, then the other columns once per value of `pivot`.
    fn pivoted(
        &self,
        pivot: &str,
        ran: &Ran,
        variants: &[Variant],
        rows: &[(Option<usize>, Vec<f64>)],
    ) -> Vec<Vec<String>> {
        let labels_of = |v: Option<usize>| {
            v.and_then(|k| variants[k].grid.as_ref())
                .map(|g| g.labels.clone())
                .unwrap_or_default()
        };
        let mut values: Vec<String> = Vec::new();
        // (the labels on the other axes, the variants of that row)
        let mut groups: Vec<(Labels, Vec<Option<usize>>)> = Vec::new();
        for (v, _) in rows {
            let labels = labels_of(*v);
            let (here, rest): (Vec<_>, Vec<_>) = labels.into_iter().partition(|(p, _)| p == pivot);
            let value = here.first().map(|(_, l)| l.clone()).unwrap_or_default();
            if !values.contains(&value) {
                values.push(value);
            }
            match groups.iter_mut().find(|(key, _)| *key == rest) {
                Some((_, members)) => members.push(*v),
                None => groups.push((rest, vec![*v])),
            }
        }
        let keeps = |c: &Column| matches!(c.show, Shown::Name | Shown::Axis(_));
        let fixed: Vec<&Column> = self
            .columns
            .iter()
            .filter(|c| keeps(c) && !matches!(&c.show, Shown::Axis(p) if p == pivot))
            .collect();
        let each: Vec<&Column> = self.columns.iter().filter(|c| !keeps(c)).collect();
        let mut header: Vec<String> = fixed.iter().map(|c| c.title.clone()).collect();
        for value in &values {
            for c in &each {
                header.push(if each.len() == 1 {
                    value.clone()
                } else {
                    format!("{value}: {}", c.title)
                });
            }
        }
        let mut out = vec![header];
        for (_, members) in &groups {
            let first = members[0];
            let mut row: Vec<String> = fixed
                .iter()
                .map(|c| cell(c, ran, first, &[], variants, self.scenario_label.as_deref()))
                .collect();
            for value in &values {
                let at = members
                    .iter()
                    .find(|v| labels_of(**v).iter().any(|(p, l)| p == pivot && l == value));
                for c in &each {
                    row.push(at.map_or_else(String::new, |v| {
                        cell(c, ran, *v, &[], variants, self.scenario_label.as_deref())
                    }));
                }
            }
            out.push(row);
        }
        out
    }
}

fn cell(
    c: &Column,
    ran: &Ran,
    v: Option<usize>,
    extra: &[f64],
    variants: &[Variant],
    own: Option<&str>,
) -> String {
    let label = |path: Option<&str>| match v {
        None => own.unwrap_or(spec::SCENARIO_ROW).to_string(),
        Some(k) => {
            let var = &variants[k];
            match (path, &var.grid) {
                (Some(p), Some(g)) => g
                    .labels
                    .iter()
                    .find(|(q, _)| q == p)
                    .map_or_else(String::new, |(_, l)| l.clone()),
                (Some(_), None) => String::new(),
                (None, _) => var.name.clone(),
            }
        }
    };
    match &c.show {
        Shown::Name => label(None),
        Shown::Text(t) => t.fill(&mut |e| ran.value(v, e, None, extra).ok()),
        Shown::Axis(p) => label(Some(p)),
        Shown::Value(e) if c.per_replication => match ran.mean(v, e, extra) {
            Ok(m) if m.half_width.is_finite() => format!(
                "{} ± {}",
                number(m.mean, c.digits),
                number(m.half_width, c.digits)
            ),
            Ok(m) => number(m.mean, c.digits),
            Err(e) => format!("({e})"),
        },
        Shown::Value(e) => match ran.value(v, e, None, extra) {
            Ok(x) => number(x, c.digits),
            Err(e) => format!("({e})"),
        },
    }
}

/// A number with `digits` decimals, or whole numbers bare and others with 3.
pub fn number(v: f64, digits: Option<usize>) -> String {
    if !v.is_finite() {
        return show(v, "");
    }
    match digits {
        Some(d) => format!("{v:.d$}"),
        None if v.fract() == 0.0 => format!("{v:.0}"),
        None => format!("{v:.3}"),
    }
}
