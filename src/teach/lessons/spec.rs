//! What the parts of a lesson file share: its variants, the rows a table
//! or a chart is made of, and the readers of expressions and lists of
//! tables.

use crate::expr::{Expr, Names};
use crate::scenario::reader::{describe, FieldError, Fields, Item};
use toml::Value;

/// The most questions, checks, variants, columns or charts a lesson file
/// may hold of each.
pub const MAX_ITEMS: usize = 64;

pub use super::queries::SCENARIO_ROW;

/// A what-if of the lesson's own: its scenario with these keys set.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub set: Vec<(String, Value)>,
    /// A point of the `[variants]` grid: its value's label on each axis
    /// (by the axis's path) and the texts its seed derives from, as a
    /// sweep's point's would. None for a `[[variant]]`, which runs on the
    /// lesson's own seeds.
    pub grid: Option<GridPoint>,
    /// Whether its first run is drawn beside the lesson's own (`picture =
    /// true`: `--out` writes diagram-NAME.png and timeline-NAME.png).
    pub picture: bool,
}

/// Where a variant of the `[variants]` grid sits.
#[derive(Clone, Debug)]
pub struct GridPoint {
    /// (axis path, the label of its value), one per axis.
    pub labels: Vec<(String, String)>,
    /// (axis path, its value's full text), for the seed.
    pub keys: Vec<(String, String)>,
}

/// Which runs a table's rows or a chart's points are made of.
#[derive(Clone, Debug, PartialEq)]
pub enum Rows {
    /// One per variant (None: the lesson's own scenario), in this order.
    Variants(Vec<Option<usize>>),
    /// One per value of a name the expressions read, all on one variant's
    /// runs (None: the lesson's scenario).
    Values {
        name: String,
        values: Vec<f64>,
        variant: Option<usize>,
    },
}

/// The index of the variant named `name` (None for the lesson's scenario,
/// [`SCENARIO_ROW`]), or an error listing the names.
pub(super) fn variant_index(
    fields: &Fields,
    key: &str,
    name: &str,
    variants: &[Variant],
) -> Result<Option<usize>, FieldError> {
    if name == SCENARIO_ROW {
        return Ok(None);
    }
    match variants.iter().position(|v| v.name == name) {
        Some(i) => Ok(Some(i)),
        None => {
            let known: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
            Err(fields.err(
                key,
                format!(
                    "no variant is named \"{name}\"; the lesson's variants: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ))
        }
    }
}

pub(super) fn expression(
    fields: &mut Fields,
    key: &str,
    names: &Names,
) -> Result<Expr, FieldError> {
    let text = fields.string(key)?;
    let text = fields.require(
        key,
        text,
        "write an expression, e.g. event_time(\"collision\", 1, 1)",
    )?;
    Expr::parse(&text, names).map_err(|e| fields.err(key, e.to_string()))
}

/// Reads the array of tables at `key` (`[[key]]`), each through `read`,
/// each holding only the keys `allowed`.
pub(super) fn read_list<T>(
    f: &mut Fields,
    key: &str,
    allowed: &[&str],
    mut read: impl FnMut(&mut Fields) -> Result<T, FieldError>,
) -> Result<Vec<T>, FieldError> {
    let path = f.key_path(key);
    let Some(v) = f.get(key) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(FieldError::new(
            path,
            format!("expected [[{key}]] tables, found {}", describe(v)),
        ));
    };
    if items.len() > MAX_ITEMS {
        return Err(FieldError::new(
            path,
            format!("{} tables; a lesson holds at most {MAX_ITEMS}", items.len()),
        ));
    }
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let p = format!("{path}.{k}");
        let mut fields = Fields::of(Item {
            path: &p,
            value: item,
        })?;
        out.push(read(&mut fields)?);
        fields.finish(allowed)?;
    }
    Ok(out)
}

/// Reads the rows of a table (`rows`) or the points of a chart (`over`) at
/// `key`: "variants" (every variant), a list of variants' names
/// ("scenario": the lesson's own), or `{ NAME = [values] }` (or `{ NAME =
/// { from, to, step } }`): one per value of a name the expressions read, on
/// the runs of `variant` (default: the lesson's scenario). Absent: every
/// variant, or the lesson's scenario alone when it has none.
pub fn read_rows(
    fields: &mut Fields,
    key: &str,
    variants: &[Variant],
    reserved: &[&str],
) -> Result<Rows, FieldError> {
    let every = || {
        if variants.is_empty() {
            vec![None]
        } else {
            (0..variants.len()).map(Some).collect()
        }
    };
    let path = fields.key_path(key);
    let rows = match fields.get(key) {
        None => Rows::Variants(every()),
        Some(Value::String(s)) if s == "variants" => {
            if variants.is_empty() {
                return Err(fields.err(
                    key,
                    "the lesson has no variants; add [variants] axes or [[variant]] tables",
                ));
            }
            Rows::Variants(every())
        }
        Some(Value::Array(list)) => {
            if list.is_empty() || list.len() > MAX_ITEMS {
                return Err(fields.err(
                    key,
                    format!(
                        "expected 1 to {MAX_ITEMS} variants' names, found {}",
                        list.len()
                    ),
                ));
            }
            let mut out = Vec::new();
            for (k, v) in list.iter().enumerate() {
                let at = format!("{key}.{k}");
                let Value::String(name) = v else {
                    return Err(fields.err(
                        &at,
                        format!(
                            "expected a variant's name (or \"{SCENARIO_ROW}\"), found {}",
                            describe(v)
                        ),
                    ));
                };
                out.push(variant_index(fields, &at, name, variants)?);
            }
            Rows::Variants(out)
        }
        Some(Value::Table(t)) if t.len() == 1 => {
            let (name, v) = t.iter().next().expect("one key");
            let at = format!("{path}.{name}");
            if !name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || reserved.contains(&name.as_str())
            {
                return Err(FieldError::new(
                    &at,
                    format!(
                        "`{name}` cannot name the rows' value: a name of letters, digits and _, \
                         not one of {}",
                        reserved.join(", ")
                    ),
                ));
            }
            let values = values_of(Item {
                path: &at,
                value: v,
            })?;
            Rows::Values {
                name: name.clone(),
                values,
                variant: None,
            }
        }
        Some(other) => {
            return Err(fields.err(
                key,
                format!(
                    "expected \"variants\", a list of variants' names, or a table of one name \
                     and its values, e.g. {{ c = [1, 2, 3] }}; found {}",
                    describe(other)
                ),
            ))
        }
    };
    Ok(rows)
}

/// The most values a row name takes.
const MAX_VALUES: usize = 10_000;

/// A list of numbers, or `{ from, to, step }`.
fn values_of(i: Item) -> Result<Vec<f64>, FieldError> {
    let out = match i.value {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(k, v)| {
                Item {
                    path: &format!("{}.{k}", i.path),
                    value: v,
                }
                .float()
            })
            .collect::<Result<Vec<f64>, _>>()?,
        Value::Table(_) => {
            let mut f = Fields::of(Item {
                path: i.path,
                value: i.value,
            })?;
            let keys = &["from", "to", "step"];
            f.allow(keys)?;
            let from = f.float("from", f64::MIN, f64::MAX)?;
            let from = f.require("from", from, "give the first value")?;
            let to = f.float("to", f64::MIN, f64::MAX)?;
            let to = f.require("to", to, "give the last value")?;
            let step = f.float("step", 1e-12, f64::MAX)?.unwrap_or(1.0);
            f.finish(keys)?;
            if to < from {
                return Err(i.err(format!("to = {to} is below from = {from}")));
            }
            let n = ((to - from) / step + 1e-9).floor() as usize + 1;
            if n > MAX_VALUES {
                return Err(i.err(format!("{n} values; at most {MAX_VALUES}")));
            }
            (0..n).map(|k| from + k as f64 * step).collect()
        }
        other => {
            return Err(i.err(format!(
                "expected a list of numbers or {{ from = 1, to = 10, step = 1 }}, found {}",
                describe(other)
            )))
        }
    };
    if out.is_empty() || out.len() > MAX_VALUES {
        return Err(i.err(format!(
            "expected 1 to {MAX_VALUES} values, found {}",
            out.len()
        )));
    }
    Ok(out)
}

/// The rows' `variant` key: on which runs a `{ NAME = [...] }` is evaluated.
pub fn rows_variant(
    fields: &mut Fields,
    rows: &mut Rows,
    variants: &[Variant],
) -> Result<(), FieldError> {
    let Some(name) = fields.string("variant")? else {
        return Ok(());
    };
    match rows {
        Rows::Values { variant, .. } => {
            *variant = variant_index(fields, "variant", &name, variants)?;
            Ok(())
        }
        Rows::Variants(_) => Err(fields.err(
            "variant",
            "goes with rows of a name's values ({ c = [1, 2, 3] }); rows of variants name them",
        )),
    }
}

impl Rows {
    /// The extra name the expressions read, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            Rows::Values { name, .. } => Some(name),
            Rows::Variants(_) => None,
        }
    }

    /// The variants the rows need run.
    pub fn variants(&self) -> Vec<Option<usize>> {
        match self {
            Rows::Variants(v) => v.clone(),
            Rows::Values { variant, .. } => vec![*variant],
        }
    }
}

/// A text with numbers of the run in it: `{=EXPR}` is replaced by the
/// expression's value (3 decimals at most), `{=EXPR;N}` with N decimals.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    /// Each literal piece, and the number after it (with its decimals).
    parts: Vec<(String, Option<Number>)>,
}

/// A number in a text: its expression and decimals.
type Number = (Expr, Option<usize>);

impl Text {
    /// Reads `raw`, each `{=...}` an expression of `names`.
    pub fn parse(raw: &str, names: &Names) -> Result<Text, String> {
        let mut parts = Vec::new();
        let mut rest = raw;
        while let Some(start) = rest.find("{=") {
            let lit = rest[..start].to_string();
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| "a `{=` without its `}`; write {=expression}".to_string())?;
            let inside = &after[..end];
            let (text, digits) = match inside.rsplit_once(';') {
                Some((e, d)) => {
                    let d: usize = d.trim().parse().ok().filter(|d| *d <= 12).ok_or_else(|| {
                        format!("`{{={inside}}}`: after `;` give the decimals, 0 to 12")
                    })?;
                    (e, Some(d))
                }
                None => (inside, None),
            };
            let e = Expr::parse(text, names).map_err(|e| format!("`{{={inside}}}`: {e}"))?;
            parts.push((lit, Some((e, digits))));
            rest = &after[end + 1..];
        }
        parts.push((rest.to_string(), None));
        Ok(Text { parts })
    }

    /// A text without numbers in it.
    pub fn plain(raw: &str) -> Text {
        Text {
            parts: vec![(raw.to_string(), None)],
        }
    }

    /// The text with each expression's value (`?` where it has none).
    pub fn fill(&self, eval: &mut dyn FnMut(&Expr) -> Option<f64>) -> String {
        let mut out = String::new();
        for (lit, e) in &self.parts {
            out.push_str(lit);
            if let Some((e, digits)) = e {
                match eval(e) {
                    Some(v) if v.is_finite() => {
                        let d = digits.unwrap_or(3);
                        let s = format!("{v:.d$}");
                        let s = if digits.is_none() && s.contains('.') {
                            s.trim_end_matches('0').trim_end_matches('.').to_string()
                        } else {
                            s
                        };
                        out.push_str(if s == "-0" { "0" } else { &s });
                    }
                    Some(v) => out.push_str(&super::runs::show(v, "")),
                    None => out.push('?'),
                }
            }
        }
        out
    }

    /// This text followed by `more`.
    pub fn append(&mut self, more: &Text) {
        let (last, e) = self.parts.pop().expect("a text has a part");
        debug_assert!(e.is_none());
        let mut more = more.parts.clone();
        more[0].0 = format!("{last}{}", more[0].0);
        self.parts.extend(more);
    }

    /// Whether it holds numbers of the run.
    pub fn has_numbers(&self) -> bool {
        self.parts.iter().any(|(_, e)| e.is_some())
    }

    /// Its expressions.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.parts
            .iter()
            .filter_map(|(_, e)| e.as_ref().map(|(e, _)| e))
    }
}

/// Reads the text at `key` (required when `what` says what to write).
pub fn text(fields: &mut Fields, key: &str, names: &Names) -> Result<Option<Text>, FieldError> {
    let Some(raw) = fields.string(key)? else {
        return Ok(None);
    };
    Text::parse(&raw, names)
        .map(Some)
        .map_err(|m| fields.err(key, m))
}
