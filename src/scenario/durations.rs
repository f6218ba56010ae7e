//! Durations in a service scenario and its client stacks: a time with a
//! unit ("10ms", "2s"), never bits or slots, which have a meaning there
//! only inside `backoff`.

use super::reader::{FieldError, Item};
use super::MAX_DURATION_S;
use crate::engine::Time;
use crate::units::{TimeSpec, PS_PER_S};

type Result<T> = std::result::Result<T, FieldError>;

/// A duration with a time unit ("10ms", "2s"): bit times and slots have no
/// meaning outside a backoff policy here.
pub fn duration(item: Item) -> Result<Time> {
    if let Some(v) = bare_number(item) {
        return Err(item.err(unitless(v)));
    }
    let t = item.time()?;
    let TimeSpec::Ps(ps) = t else {
        return Err(item.err(format!(
            "`{}` is in bits or slots, which a service scenario has only inside `backoff`; give a time such as \"10ms\"",
            item.str()?
        )));
    };
    if ps > MAX_DURATION_S * PS_PER_S {
        return Err(item.err(format!(
            "is longer than the {MAX_DURATION_S:e} s the simulator accepts"
        )));
    }
    Ok(ps.round() as Time)
}

pub fn positive_duration(item: Item) -> Result<Time> {
    let t = duration(item)?;
    if t == 0 {
        return Err(item.err("must be greater than zero, e.g. \"10ms\""));
    }
    Ok(t)
}

/// A number written without quotes or unit, if that is what `item` holds.
fn bare_number(item: Item) -> Option<f64> {
    match *item.value {
        toml::Value::Integer(i) => Some(i as f64),
        toml::Value::Float(f) if f.is_finite() => Some(f),
        _ => None,
    }
}

/// What to say of a duration written as a bare number: both readings, in
/// seconds and in milliseconds, with units the service world accepts.
fn unitless(v: f64) -> String {
    let seconds = if v.abs() < 1.0 {
        format!(
            " (= {})",
            crate::units::format_ps((v.abs() * PS_PER_S).round() as Time)
        )
    } else {
        String::new()
    };
    format!(
        "{v} has no unit; write the duration in quotes with its unit: \"{v}s\"{seconds} or \"{v}ms\""
    )
}
