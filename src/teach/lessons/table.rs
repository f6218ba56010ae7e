//! A lesson file's `[table]`: what the lesson prints as rows (one per
//! variant, or per value of a name), its columns expressions of the runs
//! (a mean with its 95 % interval where asked) or a variant's labels.

use super::queries::{self, FUNCS, VARS};
use super::runs::{show, Ran};
use super::spec::{self, expression, read_list, read_rows, rows_variant, Rows, Variant};
use crate::expr::{Expr, Names};
use crate::scenario::reader::{FieldError, Fields};
use crate::sweep::Axis;

const TABLE_KEYS: &[&str] = &["rows", "variant", "transpose", "scenario_label", "column"];
const COLUMN_KEYS: &[&str] = &["title", "value", "label", "digits", "per_replication"];

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
}

/// Reads `[table]`.
pub fn read(mut f: Fields, variants: &[Variant], axes: &[Axis]) -> Result<TableSpec, FieldError> {
    f.allow(TABLE_KEYS)?;
    let mut rows = read_rows(&mut f, "rows", variants, VARS)?;
    rows_variant(&mut f, &mut rows, variants)?;
    let transpose = f.boolean("transpose")?.unwrap_or(false);
    let scenario_label = f.string("scenario_label")?;
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
            .filter_map(|(k, c)| match &c.show {
                Shown::Value(e) => Some((format!("table.column.{k}.value"), e)),
                _ => None,
            })
            .collect()
    }

    /// The table as text cells, header first.
    pub fn render(&self, ran: &Ran, variants: &[Variant]) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> =
            vec![self.columns.iter().map(|c| c.title.clone()).collect()];
        let rows: Vec<(Option<usize>, Vec<f64>)> = match &self.rows {
            Rows::Variants(v) => v.iter().map(|&v| (v, Vec::new())).collect(),
            Rows::Values {
                values, variant, ..
            } => values.iter().map(|&x| (*variant, vec![x])).collect(),
        };
        for (v, extra) in rows {
            if v.is_some_and(|k| ran.left_out[k]) {
                continue;
            }
            out.push(
                self.columns
                    .iter()
                    .map(|c| {
                        let own = self.scenario_label.as_deref();
                        cell(c, ran, v, &extra, variants, own)
                    })
                    .collect(),
            );
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
