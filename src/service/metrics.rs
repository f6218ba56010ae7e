//! What a service run counts: calls, attempts and successes per group, the
//! server's crashes, when every reconnecting client was connected, recovery
//! after a surge, and a timeseries per bin; and the world's `Columns`.

use super::config::Scenario;
use crate::engine::Time;
use crate::results::{Cell, Columns, RunOutput, Table, TableSpec};

macro_rules! service_metrics {
    ($($extra:literal),*) => {
        &[
            "calls",
            "attempts",
            "successes",
            "success_rate",
            "load",
            "completion_s",
            "crashes",
            "all_connected_s",
            $($extra),*
        ]
    };
}

const HEADLINE: &[&str] = &["success_rate", "load", "completion_s", "crashes"];

pub const GROUP_COLUMNS: &[&str] = &[
    "group",
    "clients",
    "calls",
    "attempts",
    "successes",
    "success_rate",
    "load",
    "completion_s",
    "all_connected_s",
    "lateness_s",
];

pub const TIMESERIES_COLUMNS: &[&str] = &[
    "t_s",
    "queue",
    "attempts",
    "successes",
    "failures",
    "connected",
    "server_up",
];

const TABLES: &[TableSpec] = &[
    TableSpec {
        name: "groups",
        columns: GROUP_COLUMNS,
    },
    TableSpec {
        name: "timeseries",
        columns: TIMESERIES_COLUMNS,
    },
];

const fn columns(metrics: &'static [&'static str]) -> Columns {
    Columns {
        metrics,
        headline: HEADLINE,
        tables: TABLES,
    }
}

pub const COLUMNS: Columns = columns(service_metrics!());
pub const SURGE_COLUMNS: Columns = columns(service_metrics!("recovered", "recovery_s"));
pub const POLL_COLUMNS: Columns = columns(service_metrics!("lateness_s"));
pub const SURGE_POLL_COLUMNS: Columns =
    columns(service_metrics!("recovered", "recovery_s", "lateness_s"));

impl Scenario {
    /// Surge scenarios add recovery; poll groups add lateness.
    pub fn columns(&self) -> Columns {
        match (self.surge().is_some(), self.has_poll()) {
            (false, false) => COLUMNS,
            (true, false) => SURGE_COLUMNS,
            (false, true) => POLL_COLUMNS,
            (true, true) => SURGE_POLL_COLUMNS,
        }
    }
}

/// Counters of one group.
#[derive(Clone, Debug, Default)]
pub struct GroupCount {
    pub calls: u64,
    pub attempts: u64,
    pub successes: u64,
    /// When the last successful reply reached its client.
    pub completion: Option<Time>,
    /// First time every client of this (reconnect) group was connected.
    pub all_connected: Option<Time>,
    pub connected: u64,
    /// Sum of (successful poll - job ready), and the polls summed.
    pub lateness_ps: f64,
    pub lateness_n: u64,
}

/// One timeseries bin.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bin {
    pub queue: u64,
    pub attempts: u64,
    pub successes: u64,
    pub failures: u64,
    pub connected: u64,
    pub server_up: bool,
}

/// The results of one service run.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub columns: Columns,
    pub groups: Vec<(String, u64, GroupCount)>,
    pub crashes: u64,
    pub all_connected: Option<Time>,
    /// With a surge: whether the queue recovered, and when (from the surge's end).
    pub recovered: Option<bool>,
    pub recovery: Option<Time>,
    pub bin: Time,
    pub bins: Vec<Bin>,
    pub events: u64,
    /// Why the run stopped before its end, if it did.
    pub failure: Option<String>,
}

fn secs(t: Option<Time>) -> f64 {
    t.map_or(f64::NAN, |t| t as f64 / 1e12)
}

fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        f64::NAN
    }
}

impl RunResult {
    pub fn total(&self) -> GroupCount {
        let mut t = GroupCount::default();
        for (_, _, g) in &self.groups {
            t.calls += g.calls;
            t.attempts += g.attempts;
            t.successes += g.successes;
            t.completion = t.completion.max(g.completion);
            t.lateness_ps += g.lateness_ps;
            t.lateness_n += g.lateness_n;
        }
        t
    }

    pub fn output(&self) -> RunOutput {
        let t = self.total();
        let mut metrics = vec![
            t.calls as f64,
            t.attempts as f64,
            t.successes as f64,
            ratio(t.successes, t.calls),
            ratio(t.attempts, t.calls),
            secs(t.completion),
            self.crashes as f64,
            secs(self.all_connected),
        ];
        let lateness = |g: &GroupCount| {
            if g.lateness_n > 0 {
                g.lateness_ps / g.lateness_n as f64 / 1e12
            } else {
                f64::NAN
            }
        };
        for name in &self.columns.metrics[metrics.len()..] {
            metrics.push(match *name {
                "recovered" => self.recovered.map_or(f64::NAN, |r| f64::from(u8::from(r))),
                "recovery_s" => secs(self.recovery),
                _ => lateness(&t),
            });
        }
        let groups: Table = self
            .groups
            .iter()
            .map(|(name, clients, g)| {
                vec![
                    Cell::text(name.clone()),
                    Cell::Count(*clients),
                    Cell::Count(g.calls),
                    Cell::Count(g.attempts),
                    Cell::Count(g.successes),
                    Cell::Number(ratio(g.successes, g.calls)),
                    Cell::Number(ratio(g.attempts, g.calls)),
                    Cell::Number(secs(g.completion)),
                    Cell::Number(secs(g.all_connected)),
                    Cell::Number(lateness(g)),
                ]
            })
            .collect();
        let timeseries: Table = self
            .bins
            .iter()
            .enumerate()
            .map(|(k, b)| {
                vec![
                    Cell::Number((k as u64 + 1) as f64 * self.bin as f64 / 1e12),
                    Cell::Count(b.queue),
                    Cell::Count(b.attempts),
                    Cell::Count(b.successes),
                    Cell::Count(b.failures),
                    Cell::Count(b.connected),
                    Cell::Count(u64::from(b.server_up)),
                ]
            })
            .collect();
        RunOutput {
            columns: self.columns,
            metrics,
            tables: vec![groups, timeseries],
            events: self.events,
            failure: self.failure.clone(),
        }
    }
}
