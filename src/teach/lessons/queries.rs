//! The run queries a lesson file's expressions may ask (`event_time`,
//! `event_count`, `event_field`, `event_max`, `event_gap_max`, `metric`,
//! `metric_of`, `prop_us`) and the scenario's constants: their names, as
//! the expression language is told them when a lesson file is read.
//! `runner.rs` answers them.

use crate::expr::{HostFn, Names, Param};

/// The name a table's `rows`, a chart's `over` and `metric_of` give the
/// lesson's own scenario (no variant).
pub const SCENARIO_ROW: &str = "scenario";

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

/// The scenario's constants a lesson's expressions read: the medium's
/// times in µs, then the stations, the bus, the frames and the run.
pub const VARS: &[&str] = &[
    "slot_us",
    "bit_us",
    "preamble_us",
    "jam_us",
    "ifg_us",
    "stations",
    "length_m",
    "speed_m_per_us",
    "max_prop_us",
    "frame_bits",
    "min_frame_bits",
    "duration_us",
    "warmup_us",
    "replications",
];

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
    HostFn {
        name: "event_count",
        params: &[Param::Text, Param::Number, Param::Text, Param::Number],
        signature: "event_count(event, station, field, value)",
    },
    HostFn {
        name: "event_max",
        params: &[Param::Text, Param::Number, Param::Text],
        signature: "event_max(event, station, field)",
    },
    HostFn {
        name: "event_gap_max",
        params: &[Param::Text, Param::Text],
        signature: "event_gap_max(from, to)",
    },
    HostFn {
        name: "metric_of",
        params: &[Param::Text, Param::Text],
        signature: "metric_of(variant, name)",
    },
    HostFn {
        name: "ci95_of",
        params: &[Param::Text, Param::Text],
        signature: "ci95_of(variant, name)",
    },
    HostFn {
        name: "table_last",
        params: &[Param::Text, Param::Text],
        signature: "table_last(table, column)",
    },
    HostFn {
        name: "prop_mean_us",
        params: &[],
        signature: "prop_mean_us()",
    },
];

/// The most stations `prop_mean_us()` averages the pairs of (a million
/// pairs).
pub const MAX_MEAN_STATIONS: usize = 1414;

/// What a lesson's expressions may read.
pub fn names() -> Names<'static> {
    Names {
        vars: VARS,
        funcs: FUNCS,
        random: false,
    }
}

/// What a lesson's expressions may read where `extra` names are given too
/// (a table's row name, a chart's `x`), after [`VARS`].
pub fn vars_with(extra: &[String]) -> Vec<&str> {
    VARS.iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
        .collect()
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
    EventCountWhere,
    EventMax,
    EventGapMax,
    MetricOf,
    Ci95Of,
    TableLast,
    PropMean,
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
            Query::EventCountWhere,
            Query::EventMax,
            Query::EventGapMax,
            Query::MetricOf,
            Query::Ci95Of,
            Query::TableLast,
            Query::PropMean,
        ][id]
    }
}
