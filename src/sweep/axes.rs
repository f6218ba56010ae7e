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
    /// Its column in the result files: the path, or `sweep.PATH` for a
    /// top-level key that a result file has a column of (`seed`,
    /// `stations`, `replications`), so that no file has two columns of one
    /// name.
    pub column: String,
    pub values: Vec<Value>,
    /// Each value as it appears in CSV columns, legends and progress lines:
    /// its `label` when written `{ label = "...", value = ... }`, else a
    /// scalar's text or a table's short automatic label ([`short_labels`]).
    pub labels: Vec<String>,
    /// Each value's full text (inline TOML for tables), from which the
    /// point's seed derives: naming a value does not change its results.
    pub keys: Vec<String>,
    /// A linked axis (`[sweep.linked.NAME]`): the paths it sets together,
    /// each with its own values, one per value of the axis. Empty for a
    /// plain axis, which sets `path` to `values`.
    pub linked: Vec<(String, Vec<Value>)>,
}

impl Axis {
    /// The axis as a chart sees it: its summary column and the values there.
    pub fn column(&self) -> AxisColumn<'_> {
        AxisColumn {
            name: &self.column,
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

/// Reads a table of axes (a sweep file's `[sweep]`, a lesson's `[variants]
/// axes`, named `root` in messages) and checks them apart.
pub fn read(root: &str, t: &Table) -> Result<Vec<Axis>, FieldError> {
    let mut axes = Vec::new();
    read_axes(root, "", t, &mut axes)?;
    check_axes_apart(root, &axes)?;
    Ok(axes)
}

/// The number of points of the grid of `axes`, if at most [`MAX_POINTS`].
pub fn grid_size(axes: &[Axis]) -> Option<usize> {
    axes.iter()
        .try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS)
}

/// The grid's point `index`: the index of each axis's value, the last axis
/// moving fastest.
pub fn grid_choice(axes: &[Axis], index: usize) -> Vec<usize> {
    let mut rem = index;
    let mut choice = vec![0; axes.len()];
    for (a, axis) in axes.iter().enumerate().rev() {
        choice[a] = rem % axis.values.len();
        rem /= axis.values.len();
    }
    choice
}

impl Axis {
    /// The paths and values the axis's value `c` sets (several for a linked axis).
    pub fn sets(&self, c: usize) -> Vec<(&str, &Value)> {
        if self.linked.is_empty() {
            vec![(self.path.as_str(), &self.values[c])]
        } else {
            self.linked
                .iter()
                .map(|(p, v)| (p.as_str(), &v[c]))
                .collect()
        }
    }
}

/// Reads `[sweep]` (or another table of axes, `root`): each key a dotted
/// path (quoted, or nested tables), each value a non-empty list of distinct
/// values.
pub(super) fn read_axes(
    root: &str,
    prefix: &str,
    t: &Table,
    out: &mut Vec<Axis>,
) -> Result<(), FieldError> {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let key = format!("{root}.{path}");
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
                let (values, named) = unwrap_labels(&key, values)?;
                let keys: Vec<String> = values.iter().map(value_label).collect();
                check_distinct(&key, &keys, "lists")?;
                let labels = labels_of(&values, &named);
                check_distinct(&key, &labels, "labels two values")?;
                out.push(Axis {
                    column: path.clone(),
                    path,
                    values,
                    labels,
                    keys,
                    linked: Vec::new(),
                });
            }
            Value::Table(sub) if path == "linked" => read_linked(root, sub, out)?,
            Value::Table(sub) => read_axes(root, &path, sub, out)?,
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
/// take their names, and a plain axis of one of these keys is written as
/// `sweep.KEY`.
pub(super) const FIXED_COLUMNS: &[&str] = &[
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
pub(super) fn check_axes_apart(root: &str, axes: &[Axis]) -> Result<(), FieldError> {
    let key = |a: &Axis| {
        if a.linked.is_empty() {
            format!("{root}.{}", a.path)
        } else {
            format!("{root}.linked.{}", a.path)
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
fn read_linked(root: &str, t: &Table, out: &mut Vec<Axis>) -> Result<(), FieldError> {
    for (name, v) in t {
        let key = format!("{root}.linked.{name}");
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
        // Per linked path, the labels its values were given.
        let mut names: Vec<Vec<Option<String>>> = Vec::new();
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
            let (values, named) = unwrap_labels(&at, values)?;
            if path.split('.').any(str::is_empty)
                || path.starts_with("sweep")
                || path.starts_with("chart")
            {
                return Err(FieldError::new(
                    at,
                    "is not a dotted path such as \"stations.0.traffic.load\"",
                ));
            }
            linked.push((path.clone(), values));
            names.push(named);
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
        // The column shows `values` (each labelled or not), else the first
        // path's values with their labels.
        let (values, named) = match shown {
            Some(v) => unwrap_labels(&format!("{key}.values"), &v)?,
            None => (linked[0].1.clone(), names[0].clone()),
        };
        let labels = labels_of(&values, &named);
        for (i, l) in labels.iter().enumerate() {
            if labels[..i].contains(l) {
                return Err(FieldError::new(
                    key,
                    format!("shows `{l}` twice; each value of an axis must be distinct (give `values` to tell them apart)"),
                ));
            }
        }
        // The seed of a linked point derives from every path's value.
        let keys: Vec<String> = (0..len)
            .map(|i| {
                linked
                    .iter()
                    .map(|(p, v)| format!("{p}={}", value_label(&v[i])))
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .collect();
        out.push(Axis {
            path: name.clone(),
            column: name.clone(),
            values,
            labels,
            keys,
            linked,
        });
    }
    Ok(())
}

/// Splits a list of axis values written `{ label = "BEB-6", value = ... }`
/// into the values and the labels given (None where a value has none).
fn unwrap_labels(
    key: &str,
    values: &[Value],
) -> Result<(Vec<Value>, Vec<Option<String>>), FieldError> {
    let mut out = Vec::with_capacity(values.len());
    let mut names = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        match v {
            Value::Table(t) if t.contains_key("label") || t.contains_key("value") => {
                let at = format!("{key}.{i}");
                if let Some(k) = t.keys().find(|k| *k != "label" && *k != "value") {
                    return Err(FieldError::new(
                        at,
                        format!("`{k}` is not allowed beside `label` and `value`; write {{ label = \"BEB-6\", value = {{ kind = \"beb\", backoff_limit = 6 }} }}"),
                    ));
                }
                let label = match t.get("label") {
                    Some(Value::String(l)) if !l.trim().is_empty() => l.trim().to_string(),
                    _ => {
                        return Err(FieldError::new(
                            format!("{at}.label"),
                            "a labelled value needs label = \"...\", a non-empty text, beside its value",
                        ))
                    }
                };
                let Some(value) = t.get("value") else {
                    return Err(FieldError::new(
                        format!("{at}.value"),
                        format!("the value labelled \"{label}\" is missing; write value = ... beside label"),
                    ));
                };
                out.push(value.clone());
                names.push(Some(label));
            }
            other => {
                out.push(other.clone());
                names.push(None);
            }
        }
    }
    Ok((out, names))
}

/// Refuses a list in which one text appears twice.
fn check_distinct(key: &str, texts: &[String], verb: &str) -> Result<(), FieldError> {
    let mut seen = std::collections::HashSet::with_capacity(texts.len());
    for l in texts {
        if !seen.insert(l.as_str()) {
            return Err(FieldError::new(
                key,
                format!("{verb} `{l}` twice; each value of an axis must be distinct"),
            ));
        }
    }
    Ok(())
}

/// The label of each value: the one given, else the automatic one.
fn labels_of(values: &[Value], named: &[Option<String>]) -> Vec<String> {
    let auto = short_labels(values);
    named
        .iter()
        .zip(auto)
        .map(|(n, a)| n.clone().unwrap_or(a))
        .collect()
}

/// Short labels for an axis's values: scalars as their text; a table (or
/// list) as its `kind` (when it has one) followed by the keys whose values
/// tell it apart from the other values of its kind, e.g. `beb` and
/// `beb backoff_limit=6`, never a page of TOML. Falls back to the full
/// text when two short labels would be equal.
pub fn short_labels(values: &[Value]) -> Vec<String> {
    let flat: Vec<Option<Vec<(String, String)>>> = values
        .iter()
        .map(|v| match v {
            Value::Table(_) | Value::Array(_) => {
                let mut out = Vec::new();
                flatten("", v, &mut out);
                Some(out)
            }
            _ => None,
        })
        .collect();
    let kind_of =
        |f: &[(String, String)]| f.iter().find(|(k, _)| k == "kind").map(|(_, v)| v.clone());
    let labels: Vec<String> = values
        .iter()
        .zip(&flat)
        .map(|(v, f)| {
            let Some(f) = f else {
                return value_label(v);
            };
            let kind = kind_of(f);
            // The values of this one's kind (all values when none has a kind).
            let peers: Vec<&Vec<(String, String)>> = flat
                .iter()
                .flatten()
                .filter(|g| kind_of(g) == kind)
                .collect();
            let get = |g: &[(String, String)], k: &str| {
                g.iter().find(|(gk, _)| gk == k).map(|(_, v)| v.clone())
            };
            let mut parts: Vec<String> = kind.iter().cloned().collect();
            for (k, val) in f {
                if k == "kind" {
                    continue;
                }
                if peers
                    .iter()
                    .any(|g| get(g, k).as_deref() != Some(val.as_str()))
                {
                    parts.push(format!("{k}={val}"));
                }
            }
            if parts.is_empty() {
                // Nothing tells it apart from its peers (it stands among
                // words, say): its keys and values, without braces.
                f.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                parts.join(" ")
            }
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    if labels.iter().all(|l| seen.insert(l.as_str())) {
        labels
    } else {
        values.iter().map(value_label).collect()
    }
}

/// A table or list as (dotted key, scalar text) pairs, in order.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Table(t) => {
            for (k, x) in t {
                flatten(&join(k), x, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&join(&i.to_string()), x, out);
            }
        }
        other => out.push((prefix.to_string(), value_label(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<Value> {
        let t: Table = format!("v = {text}").parse().unwrap();
        t["v"].as_array().unwrap().clone()
    }

    #[test]
    fn short_labels_name_the_kind_and_what_differs() {
        let v = values(
            r#"[{ kind = "beb" }, { kind = "beb", backoff_limit = 6 }, { kind = "mild" },
                { kind = "full-jitter", base = "1slot", cap = "1024slot" }]"#,
        );
        assert_eq!(
            short_labels(&v),
            ["beb", "beb backoff_limit=6", "mild", "full-jitter"]
        );
        let v = values(r#"[[{ count = 2, load = 0.1 }], [{ count = 2, load = 0.2 }]]"#);
        assert_eq!(short_labels(&v), ["0.load=0.1", "0.load=0.2"]);
        assert_eq!(short_labels(&values("[1, 2.5, \"x\"]")), ["1", "2.5", "x"]);
        let v = values(r#"["none", { size = 10, scope = "shared" }]"#);
        assert_eq!(short_labels(&v), ["none", "size=10 scope=shared"]);
    }

    #[test]
    fn labelled_values_are_unwrapped() {
        let v = values(
            r#"[{ label = "BEB-6", value = { kind = "beb", backoff_limit = 6 } }, { kind = "beb" }]"#,
        );
        let (vals, named) = unwrap_labels("sweep.x", &v).unwrap();
        assert_eq!(labels_of(&vals, &named), ["BEB-6", "beb"]);
        assert_eq!(
            value_label(&vals[0]),
            "{ kind = \"beb\", backoff_limit = 6 }"
        );
        let bad = values(r#"[{ label = "a", value = 1, extra = 2 }]"#);
        assert!(unwrap_labels("sweep.x", &bad)
            .unwrap_err()
            .message
            .contains("`extra`"));
        let bad = values(r#"[{ label = "a" }]"#);
        assert!(unwrap_labels("sweep.x", &bad)
            .unwrap_err()
            .message
            .contains("missing"));
    }
}
