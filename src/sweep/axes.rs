//! Reading a sweep file's `[sweep]` table into axes: plain axes (a dotted
//! path and its values), linked axes (`[sweep.linked.NAME]`, paths moving
//! together), and the checks that keep axes from setting one path twice.

use crate::output::chart::AxisColumn;
use crate::scenario::reader::FieldError;
use toml::{Table, Value};

/// The most points a sweep may hold: beyond this a grid is almost surely a typo.
pub const MAX_POINTS: usize = 1_000_000;

/// One sweep axis: a dotted path into the scenario and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The dotted path the axis sets, or a linked axis's name.
    pub path: String,
    pub values: Vec<Value>,
    /// Each value as it appears in CSV columns and in the point's seed.
    pub labels: Vec<String>,
    /// A linked axis (`[sweep.linked.NAME]`): the paths it sets together,
    /// each with its own values, one per value of the axis. Empty for a
    /// plain axis, which sets `path` to `values`.
    pub linked: Vec<(String, Vec<Value>)>,
}

impl Axis {
    /// The axis as a chart sees it: its summary column and the values there.
    pub fn column(&self) -> AxisColumn<'_> {
        AxisColumn {
            name: &self.path,
            labels: &self.labels,
        }
    }
}

/// The text of an axis value: strings bare, numbers in shortest form, other
/// values as inline TOML.
pub fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f}"),
        Value::Boolean(b) => b.to_string(),
        other => other.to_string().trim().to_string(),
    }
}

/// Reads `[sweep]`: each key a dotted path (quoted, or nested tables), each
/// value a non-empty list of distinct values.
pub(super) fn read_axes(prefix: &str, t: &Table, out: &mut Vec<Axis>) -> Result<(), FieldError> {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let key = format!("sweep.{path}");
        match v {
            Value::Array(values) if values.is_empty() => {
                return Err(FieldError::new(
                    key,
                    "is an empty list; give the values this axis takes",
                ))
            }
            Value::Array(values) => {
                if path.split('.').any(str::is_empty) {
                    return Err(FieldError::new(
                        key,
                        "is not a dotted path such as \"stations.0.count\"",
                    ));
                }
                if path == "sweep"
                    || path.starts_with("sweep.")
                    || path == "chart"
                    || path.starts_with("chart.")
                {
                    return Err(FieldError::new(
                        key,
                        "a sweep cannot vary its own [sweep] or [[chart]] tables",
                    ));
                }
                if values.len() > MAX_POINTS {
                    return Err(FieldError::new(
                        key,
                        format!(
                            "lists {} values; a sweep holds at most {MAX_POINTS} points; sweep fewer values",
                            values.len()
                        ),
                    ));
                }
                let labels: Vec<String> = values.iter().map(value_label).collect();
                let mut seen = std::collections::HashSet::with_capacity(labels.len());
                for l in &labels {
                    if !seen.insert(l.as_str()) {
                        return Err(FieldError::new(
                            key,
                            format!("lists `{l}` twice; each value of an axis must be distinct"),
                        ));
                    }
                }
                out.push(Axis {
                    path,
                    values: values.clone(),
                    labels,
                    linked: Vec::new(),
                });
            }
            Value::Table(sub) if path == "linked" => read_linked(sub, out)?,
            Value::Table(sub) => read_axes(&path, sub, out)?,
            _ => {
                return Err(FieldError::new(
                    key,
                    "expected a list of values, e.g. \"stations.0.traffic.load\" = [0.2, 0.5, 0.8]",
                ))
            }
        }
    }
    Ok(())
}

/// Columns the result files write beside the axes: a linked axis may not
/// take their names.
const FIXED_COLUMNS: &[&str] = &[
    "replication",
    "replications",
    "seed",
    "group",
    "policy",
    "stations",
];

/// Refuses two axes that set one path (or a path and a part of it), which
/// would label points with values they did not run, and a linked axis
/// named as another axis or a column of the result files.
pub(super) fn check_axes_apart(axes: &[Axis]) -> Result<(), FieldError> {
    let key = |a: &Axis| {
        if a.linked.is_empty() {
            format!("sweep.{}", a.path)
        } else {
            format!("sweep.linked.{}", a.path)
        }
    };
    let sets = |a: &Axis| -> Vec<String> {
        if a.linked.is_empty() {
            vec![a.path.clone()]
        } else {
            a.linked.iter().map(|(p, _)| p.clone()).collect()
        }
    };
    let within = |p: &str, q: &str| {
        p == q || q.starts_with(&format!("{p}.")) || p.starts_with(&format!("{q}."))
    };
    for (i, a) in axes.iter().enumerate() {
        if !a.linked.is_empty() {
            if FIXED_COLUMNS.contains(&a.path.as_str()) {
                return Err(FieldError::new(
                    key(a),
                    format!("`{}` is a column the result files already have; give the linked axis another name", a.path),
                ));
            }
            for (j, b) in a.linked.iter().enumerate() {
                if let Some((c, _)) = a.linked[..j].iter().find(|(c, _)| within(c, &b.0)) {
                    return Err(FieldError::new(
                        key(a),
                        format!(
                            "sets `{}` and `{c}`, one inside the other; each path once",
                            b.0
                        ),
                    ));
                }
            }
        }
        for b in &axes[..i] {
            if a.path == b.path {
                return Err(FieldError::new(
                    key(a),
                    format!("`{}` names another axis too; give it another name", a.path),
                ));
            }
            for p in sets(a) {
                if let Some(q) = sets(b).into_iter().find(|q| within(&p, q)) {
                    return Err(FieldError::new(
                        key(a),
                        format!(
                            "sets `{p}`, which {} `{q}` also sets: the CSV would name values the points did not run; sweep each path on one axis",
                            key(b)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads `[sweep.linked.NAME]` tables: each holds dotted paths whose lists,
/// all of one length, move together as one axis named NAME; `values`, when
/// given, is what the axis's column shows (else the first path's values).
fn read_linked(t: &Table, out: &mut Vec<Axis>) -> Result<(), FieldError> {
    for (name, v) in t {
        let key = format!("sweep.linked.{name}");
        let Value::Table(members) = v else {
            return Err(FieldError::new(
                key,
                "expected a table of paths moving together, e.g. [sweep.linked.load] with \"stations.0.traffic.load\" = [0.1, 0.2] and \"stations.1.traffic.load\" = [0.1, 0.2]",
            ));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(FieldError::new(
                key,
                "a linked axis's name is its CSV column: letters, digits, `_` and `-`",
            ));
        }
        let mut linked: Vec<(String, Vec<Value>)> = Vec::new();
        let mut shown: Option<Vec<Value>> = None;
        for (path, list) in members {
            let at = format!("{key}.{path}");
            let Value::Array(values) = list else {
                return Err(FieldError::new(
                    at,
                    "expected a list of values, one per point of the axis",
                ));
            };
            if values.is_empty() {
                return Err(FieldError::new(
                    at,
                    "is an empty list; give the values this path takes",
                ));
            }
            if path == "values" {
                shown = Some(values.clone());
                continue;
            }
            if path.split('.').any(str::is_empty)
                || path.starts_with("sweep")
                || path.starts_with("chart")
            {
                return Err(FieldError::new(
                    at,
                    "is not a dotted path such as \"stations.0.traffic.load\"",
                ));
            }
            linked.push((path.clone(), values.clone()));
        }
        let Some(len) = linked.first().map(|(_, v)| v.len()) else {
            return Err(FieldError::new(
                key,
                "links no paths; give two or more, e.g. \"stations.0.traffic.load\" = [0.1, 0.2]",
            ));
        };
        let mut lists: Vec<(&str, &Vec<Value>)> =
            linked.iter().map(|(p, v)| (p.as_str(), v)).collect();
        if let Some(v) = &shown {
            lists.push(("values", v));
        }
        for (path, values) in lists {
            if values.len() != len {
                return Err(FieldError::new(
                    format!("{key}.{path}"),
                    format!(
                        "has {} values where `{}` has {len}; linked lists move together and must be of one length",
                        values.len(),
                        linked[0].0
                    ),
                ));
            }
        }
        let values = shown.unwrap_or_else(|| linked[0].1.clone());
        let labels: Vec<String> = values.iter().map(value_label).collect();
        for (i, l) in labels.iter().enumerate() {
            if labels[..i].contains(l) {
                return Err(FieldError::new(
                    key,
                    format!("shows `{l}` twice; each value of an axis must be distinct (give `values` to tell them apart)"),
                ));
            }
        }
        out.push(Axis {
            path: name.clone(),
            values,
            labels,
            linked,
        });
    }
    Ok(())
}
