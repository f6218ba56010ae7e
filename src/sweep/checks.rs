//! A plan's warnings, placed in its file: each point's warnings told once per
//! kind and key for the whole grid, at the line of the key or of the sweep
//! axis that sets it; the replications; the offered load in one line.

use super::axes::Axis;
use super::plan::Plan;
use crate::advice::{short_fraction, Share, Warning};
use crate::scenario::locate;
use std::fmt;

/// A warning about a scenario or sweep file: where, what, and at which points.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanWarning {
    pub file: String,
    /// The line of the key (or of the axis that sets it), when the file has one.
    pub line: Option<usize>,
    pub kind: &'static str,
    pub key: String,
    pub message: String,
    /// For a sweep: at how many of its points, and the first of them.
    pub points: Option<String>,
}

impl fmt::Display for PlanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "`{}`: {}", self.key, self.message)?;
        if let Some(p) = &self.points {
            write!(f, " ({p})")?;
        }
        Ok(())
    }
}

/// The warnings of every point of `plan` (read from `text`, named `file`),
/// each kind about each key once, in the order they first appear.
pub fn warnings(plan: &Plan, file: &str, text: &str) -> Vec<PlanWarning> {
    let per_point: Vec<Vec<Warning>> = plan.points.iter().map(|p| p.scenario.warnings()).collect();
    gather(plan, file, text, &per_point)
}

/// A warning when some point runs a single replication: its results then
/// have no confidence interval.
pub fn replications_warning(plan: &Plan, file: &str, text: &str) -> Option<PlanWarning> {
    let per_point: Vec<Vec<Warning>> = plan
        .points
        .iter()
        .map(|p| {
            if p.scenario.replications() == 1 {
                vec![Warning {
                    kind: "one-replication",
                    key: "replications".into(),
                    message: "one replication gives no confidence interval; set replications = 5 \
                              (or more) for 95 % confidence intervals"
                        .into(),
                }]
            } else {
                Vec::new()
            }
        })
        .collect();
    gather(plan, file, text, &per_point).into_iter().next()
}

fn gather(plan: &Plan, file: &str, text: &str, per_point: &[Vec<Warning>]) -> Vec<PlanWarning> {
    // (warning as first seen, its point, how many points)
    let mut seen: Vec<(&Warning, usize, usize)> = Vec::new();
    for (i, ws) in per_point.iter().enumerate() {
        for w in ws {
            match seen
                .iter_mut()
                .find(|(s, _, _)| s.kind == w.kind && s.key == w.key)
            {
                Some(entry) => entry.2 += 1,
                None => seen.push((w, i, 1)),
            }
        }
    }
    let total = plan.points.len();
    seen.into_iter()
        .map(|(w, first, count)| PlanWarning {
            file: file.to_string(),
            line: line_of_key(text, &plan.axes, &w.key),
            kind: w.kind,
            key: w.key.clone(),
            message: w.message.clone(),
            points: (total > 1).then(|| {
                let which = if count == total {
                    format!("at all {total} sweep points")
                } else {
                    format!("at {count} of {total} sweep points")
                };
                format!(
                    "{which}; first: point {first}, {}",
                    plan.points[first].describe()
                )
            }),
        })
        .collect()
}

/// The line of `key`, or of the sweep axis that sets it or something in it
/// (the longest such axis path).
fn line_of_key(text: &str, axes: &[Axis], key: &str) -> Option<usize> {
    let related = |a: &str| {
        a == key || key.starts_with(&format!("{a}.")) || a.starts_with(&format!("{key}."))
    };
    match axes
        .iter()
        .filter(|a| related(&a.path))
        .max_by_key(|a| a.path.len())
    {
        Some(a) => locate::line_of(text, &format!("sweep.{}", a.path)),
        None => locate::line_of(text, key),
    }
}

/// The offered load of the plan in one line: the line of its points when
/// they agree, else the range of their totals.
pub fn load_summary(plan: &Plan) -> Option<String> {
    let loads: Vec<_> = plan
        .points
        .iter()
        .filter_map(|p| p.scenario.offered_load())
        .collect();
    let first = loads.first()?;
    let line = first.to_string();
    if loads.iter().all(|l| l.to_string() == line) {
        return Some(line);
    }
    let totals: Vec<f64> = loads
        .iter()
        .filter_map(|l| match l.total() {
            Share::Fraction(f) => Some(f),
            _ => None,
        })
        .collect();
    let saturated = loads
        .iter()
        .filter(|l| l.total() == Share::Saturated)
        .count();
    let n = loads.len();
    let mut parts = Vec::new();
    if !totals.is_empty() {
        let lo = totals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = totals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = if short_fraction(lo) == short_fraction(hi) {
            short_fraction(lo)
        } else {
            format!("{} to {}", short_fraction(lo), short_fraction(hi))
        };
        parts.push(format!("total {range} of {}", first.of));
    }
    if saturated == n {
        parts.push("saturated".into());
    } else if saturated > 0 {
        parts.push(format!("saturated at {saturated} of them"));
    }
    if parts.is_empty() {
        parts.push("bursts".into());
    }
    Some(format!(
        "offered load over the {n} points: {}",
        parts.join("; ")
    ))
}
