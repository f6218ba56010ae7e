//! The run queries a lesson file's expressions may ask (`event_time`,
//! `event_count`, `event_field`, `metric`, `prop_us`) and the medium's
//! constants: their names, as the expression language is told them when a
//! lesson file is read. `runner.rs` answers them.

use crate::expr::{HostFn, Names, Param};

/// The trace's event names (`trace --format csv`'s `event` column).
pub const EVENTS: &[&str] = &[
    "arrival",
    "queue-full",
    "defer",
    "tx-start",
    "burst-gap",
    "signal-arrives",
    "signal-ends",
    "collision",
    "late-collision",
    "jam",
    "tx-end",
    "backoff",
    "backoff-end",
    "discard",
    "delivered",
    "corrupted",
];

/// The medium's constants a lesson's expressions read, in µs.
pub const VARS: &[&str] = &["slot_us", "bit_us", "preamble_us", "jam_us", "ifg_us"];

pub const FUNCS: &[HostFn] = &[
    HostFn {
        name: "event_time",
        params: &[Param::Text, Param::Number, Param::Number],
        signature: "event_time(event, station, nth)",
    },
    HostFn {
        name: "event_count",
        params: &[Param::Text, Param::Number],
        signature: "event_count(event, station)",
    },
    HostFn {
        name: "event_field",
        params: &[Param::Text, Param::Number, Param::Number, Param::Text],
        signature: "event_field(event, station, nth, field)",
    },
    HostFn {
        name: "metric",
        params: &[Param::Text],
        signature: "metric(name)",
    },
    HostFn {
        name: "metric",
        params: &[Param::Text, Param::Number],
        signature: "metric(name, group)",
    },
    HostFn {
        name: "prop_us",
        params: &[Param::Number, Param::Number],
        signature: "prop_us(a, b)",
    },
];

/// What a lesson's expressions may read.
pub fn names() -> Names<'static> {
    Names {
        vars: VARS,
        funcs: FUNCS,
        random: false,
    }
}

/// The run query a host function asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Query {
    EventTime,
    EventCount,
    EventField,
    Metric,
    GroupMetric,
    Prop,
}

impl Query {
    /// The query of [`FUNCS`]' function `id`.
    pub fn of(id: usize) -> Query {
        [
            Query::EventTime,
            Query::EventCount,
            Query::EventField,
            Query::Metric,
            Query::GroupMetric,
            Query::Prop,
        ][id]
    }
}
