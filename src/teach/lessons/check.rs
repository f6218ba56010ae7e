//! A lesson file's `[[check]]`s: the sentence printed (with numbers of the
//! run in it), the value, and what it must be (a number or an expression,
//! or a range), read and checked when the file is read.

use super::spec::{expression, variant_index, Text, Variant};
use crate::expr::{Expr, Names};
use crate::scenario::reader::{describe, FieldError, Fields, Item};
use toml::Value;

pub const CHECK_KEYS: &[&str] = &[
    "what",
    "value",
    "unit",
    "expect",
    "tolerance",
    "within",
    "above",
    "below",
    "at_least",
    "at_most",
    "when",
    "per_replication",
    "sigmas",
    "variant",
];

/// A number a lesson file writes: a constant, or an expression of the run
/// (`expect = 'stations'`).
#[derive(Clone, Debug, PartialEq)]
pub enum Num {
    Const(f64),
    Expr(Expr),
}

/// What a check's value must be.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// Equal to `value` within `tolerance` (None: up to rounding).
    Expect { value: Num, tolerance: Option<Num> },
    /// Within bounds: `within = [lo, hi]` (both included), `above` and
    /// `below` (excluded); a bound is (value, excluded).
    Range {
        lo: Option<(Num, bool)>,
        hi: Option<(Num, bool)>,
    },
}

/// A number the lesson's text promises, checked on the run.
#[derive(Clone, Debug)]
pub struct CheckSpec {
    /// The sentence printed, with numbers of the run in it (`{=...}`).
    pub what: Text,
    /// Checked only where this is true (else not shown).
    pub when: Option<Expr>,
    pub value: Expr,
    pub unit: String,
    pub rule: Rule,
    pub per_replication: bool,
    /// With `per_replication`: how many standard errors of the mean the
    /// mean may stray (else its 95 % interval's half-width).
    pub sigmas: Option<f64>,
    pub variant: Option<usize>,
    /// Its place among the file's `[[check]]` tables (one table may make
    /// a check per variant).
    pub at: usize,
}

/// Reads a check: one per variant when `variant` lists several (each
/// sentence then starts with the variant's name).
pub fn read_check(
    fields: &mut Fields,
    names: &Names,
    variants: &[Variant],
    at: usize,
) -> Result<Vec<CheckSpec>, FieldError> {
    fields.allow(CHECK_KEYS)?;
    let what = super::spec::text(fields, "what", names)?;
    let what = fields.require("what", what, "write the sentence the check prints")?;
    let when = match fields.contains("when") {
        true => Some(expression(fields, "when", names)?),
        false => None,
    };
    let value = expression(fields, "value", names)?;
    let unit = fields.string("unit")?.unwrap_or_default();
    let expect = num(fields, "expect", names)?;
    let tolerance = num(fields, "tolerance", names)?;
    if let Some(Num::Const(t)) = tolerance {
        if t < 0.0 {
            return Err(fields.err("tolerance", format!("{t} is below 0")));
        }
    }
    let within = fields.with("within", |i| {
        let a = i.array()?;
        if a.len() != 2 {
            return Err(i.err(format!(
                "expected [lo, hi], two numbers (or expressions); found {} values",
                a.len()
            )));
        }
        let bound = |k: usize| {
            num_item(
                Item {
                    path: &format!("{}.{k}", i.path),
                    value: &a[k],
                },
                names,
            )
        };
        let (lo, hi) = (bound(0)?, bound(1)?);
        if let (Num::Const(lo), Num::Const(hi)) = (&lo, &hi) {
            if lo > hi {
                return Err(i.err(format!("{lo} is above {hi}; write [lo, hi] with lo <= hi")));
            }
        }
        Ok((lo, hi))
    })?;
    let bounds = [
        ("above", true, true),
        ("at_least", true, false),
        ("below", false, true),
        ("at_most", false, false),
    ];
    let mut lo: Option<(Num, bool)> = None;
    let mut hi: Option<(Num, bool)> = None;
    let mut first_bound = None;
    for (key, low, strict) in bounds {
        let Some(n) = num(fields, key, names)? else {
            continue;
        };
        first_bound.get_or_insert(key);
        let side = if low { &mut lo } else { &mut hi };
        if side.is_some() {
            return Err(fields.err(
                key,
                if low {
                    "give one lower bound: above or at_least"
                } else {
                    "give one upper bound: below or at_most"
                },
            ));
        }
        *side = Some((n, strict));
    }
    if let Some((l, h)) = &within {
        if let Some(key) = first_bound {
            return Err(fields.err(
                key,
                "give within = [lo, hi], or above/at_least and below/at_most, not both",
            ));
        }
        lo = Some((l.clone(), false));
        hi = Some((h.clone(), false));
    }
    let ranged = lo.is_some() || hi.is_some();
    let rule =
        match (expect, ranged) {
            (Some(_), true) => return Err(fields.err(
                first_bound.unwrap_or("within"),
                "give either expect or a range (within, above, at_least, below, at_most), not both",
            )),
            (Some(value), false) => Rule::Expect { value, tolerance },
            (None, true) => {
                if tolerance.is_some() {
                    return Err(fields.err(
                        "tolerance",
                        "a tolerance goes with expect; a range (within, above, ...) is one already",
                    ));
                }
                Rule::Range { lo, hi }
            }
            (None, false) => {
                return Err(fields.err(
                    "expect",
                    "missing; say what the value must be: expect = 0.5 (with tolerance), \
                 within = [0.3, 0.45], above = 0, at_most = 1, ...",
                ))
            }
        };
    let per_replication = fields.boolean("per_replication")?.unwrap_or(false);
    let sigmas = fields.float("sigmas", 0.0, 100.0)?;
    if sigmas.is_some() && !per_replication {
        return Err(fields.err(
            "sigmas",
            "standard errors are those of a mean over the replications: add per_replication = true",
        ));
    }
    let list: Vec<Option<usize>> = match fields.get("variant") {
        None => vec![None],
        Some(Value::String(name)) => vec![variant_index(fields, "variant", name, variants)?],
        Some(Value::Array(names)) => {
            let mut out = Vec::new();
            for (k, n) in names.iter().enumerate() {
                let key = format!("variant.{k}");
                let Value::String(name) = n else {
                    return Err(fields.err(
                        &key,
                        format!("expected a variant's name, found {}", describe(n)),
                    ));
                };
                out.push(variant_index(fields, &key, name, variants)?);
            }
            if out.is_empty() {
                return Err(fields.err("variant", "is an empty list; name the variants checked"));
            }
            out
        }
        Some(other) => {
            return Err(fields.err(
                "variant",
                format!(
                    "expected a variant's name or a list of them, found {}",
                    describe(other)
                ),
            ))
        }
    };
    let several = list.len() > 1;
    Ok(list
        .into_iter()
        .map(|variant| CheckSpec {
            // A check on several variants, or on a point of the grid (named
            // by its values alone), says which it is about, unless its
            // sentence tells it with the run's numbers.
            what: match variant {
                Some(v) if (several && !what.has_numbers()) || variants[v].grid.is_some() => {
                    let mut t = Text::plain(&format!("{}: ", variants[v].name));
                    t.append(&what);
                    t
                }
                _ => what.clone(),
            },
            when: when.clone(),
            value: value.clone(),
            unit: unit.clone(),
            rule: rule.clone(),
            per_replication,
            sigmas,
            variant,
            at,
        })
        .collect())
}

/// A number or an expression at `key`.
fn num(fields: &mut Fields, key: &str, names: &Names) -> Result<Option<Num>, FieldError> {
    let path = fields.key_path(key);
    match fields.get(key) {
        None => Ok(None),
        Some(value) => num_item(Item { path: &path, value }, names).map(Some),
    }
}

fn num_item(i: Item, names: &Names) -> Result<Num, FieldError> {
    match i.value {
        Value::String(text) => Expr::parse(text, names)
            .map(Num::Expr)
            .map_err(|e| i.err(e.to_string())),
        _ => i.float().map(Num::Const),
    }
}
