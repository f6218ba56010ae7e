//! Reading `backoff = { kind = ..., ... }` into a [`BackoffSpec`].

use super::reader::{FieldError, Fields, Item};
use super::Medium;
use crate::backoff::BackoffSpec;

/// The policy names a scenario may use.
pub const KINDS: &[&str] = &["beb"];

pub fn read(item: Item, _m: &Medium) -> Result<BackoffSpec, FieldError> {
    let mut f = Fields::of(item)?;
    let kind = f.choice("kind", KINDS)?;
    let kind = f.require("kind", kind, &format!("one of {}", KINDS.join(", ")))?;
    let attempt_limit = f.integer("attempt_limit", 1, 1_000_000)?.unwrap_or(16) as u32;
    // Only `beb` so far; `kind` was checked against KINDS.
    let _ = kind;
    let backoff_limit = f.integer("backoff_limit", 0, 62)?.unwrap_or(10) as u32;
    f.finish(&["kind", "backoff_limit", "attempt_limit"])?;
    Ok(BackoffSpec::Beb {
        backoff_limit,
        attempt_limit,
    })
}
