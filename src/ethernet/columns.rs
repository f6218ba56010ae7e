//! The bus world's named columns: its metrics (with the derived ones and,
//! for a burst, how it drained) and its tables (stations, groups,
//! completions), and a run's results written as them for output.

use super::metrics::{GroupResult, RunResult, StationResult};
use super::Scenario;
use crate::results::{Cell, Columns, RunOutput, Table, TableSpec};

/// The metrics a bus run counts (docs/model.md, "Metric columns"), in
/// output order; [`DERIVED_COLUMNS`] follow them.
pub const METRIC_COLUMNS: &[&str] = ALL_METRIC_COLUMNS.split_at(19).0;

/// Metrics derived from the ones above, after them in runs.csv and
/// summary.csv: collided transmissions per delivered frame, and the
/// fraction of frames whose fate was decided in the measured window that
/// were dropped (at the attempt limit or by a full queue).
pub const DERIVED_COLUMNS: &[&str] = ALL_METRIC_COLUMNS.split_at(19).1;

/// The metric names of a bus run, then `$extra`.
macro_rules! bus_metrics {
    ($($extra:literal),*) => {
        &[
            "throughput",
            "throughput_mbps",
            "offered_load",
            "attempt_load",
            "delivered",
            "attempts",
            "collisions",
            "collision_involvements",
            "late_collisions",
            "undetected_collisions",
            "dropped_excessive",
            "dropped_queue",
            "delay_mean_us",
            "delay_p50_us",
            "delay_p95_us",
            "delay_p99_us",
            "fairness",
            "capture_mean_run",
            "capture_max_run",
            "collisions_per_delivered",
            "drop_fraction",
            $($extra),*
        ]
    };
}

/// Every metric column of a bus run, in output order.
pub const ALL_METRIC_COLUMNS: &[&str] = bus_metrics!();

/// A scenario with a burst group (a herd released at once) adds how the
/// burst drained: its frames, the fraction delivered, the time from the
/// release to the last frame's fate (delivered, lost or discarded), and
/// percentiles of the frames' completion times.
pub const BURST_METRIC_COLUMNS: &[&str] = bus_metrics!(
    "burst_frames",
    "delivered_fraction",
    "drain_us",
    "completion_p50_us",
    "completion_p90_us",
    "completion_p99_us"
);

/// completions.csv's columns: the distribution of the burst frames'
/// completion times, from the release, at every 5th percentile.
pub const COMPLETION_COLUMNS: &[&str] = &["percentile", "completion_us"];

/// stations.csv's columns after the point's axes and the replication.
pub const STATION_COLUMNS: &[&str] = &[
    "station",
    "group",
    "position_m",
    "arrived",
    "delivered",
    "attempts",
    "collisions",
    "dropped_excessive",
    "dropped_queue",
    "undetected_collisions",
    "delay_mean_us",
    "throughput_share",
];

/// groups.csv's columns after the point's axes and the replication.
pub const GROUP_COLUMNS: &[&str] = &[
    "group",
    "policy",
    "stations",
    "offered_load",
    "throughput",
    "throughput_mbps",
    "share",
    "delivered",
    "delay_mean_us",
    "delay_p50_us",
    "delay_p95_us",
    "delay_p99_us",
    "attempts",
    "collisions",
    "collision_involvements",
    "dropped_excessive",
    "dropped_queue",
    "fairness",
    "collisions_per_delivered",
    "drop_fraction",
];

const HEADLINE: &[&str] = &[
    "throughput",
    "delay_mean_us",
    "collisions_per_delivered",
    "fairness",
];

const TABLES: &[TableSpec] = &[
    TableSpec {
        name: "stations",
        columns: STATION_COLUMNS,
    },
    TableSpec {
        name: "groups",
        columns: GROUP_COLUMNS,
    },
];

/// The columns of a bus run.
pub const COLUMNS: Columns = Columns {
    metrics: ALL_METRIC_COLUMNS,
    headline: HEADLINE,
    tables: TABLES,
};

/// The columns of a bus run with a burst group.
pub const BURST_COLUMNS: Columns = Columns {
    metrics: BURST_METRIC_COLUMNS,
    headline: &["drain_us", "delivered_fraction", "throughput", "collisions"],
    tables: &[
        TABLES[0],
        TABLES[1],
        TableSpec {
            name: "completions",
            columns: COMPLETION_COLUMNS,
        },
    ],
};

impl Scenario {
    /// Whether a group releases a burst (the columns then say how it drained).
    pub fn has_burst(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g.arrivals, crate::traffic::Arrivals::Burst { .. }))
    }

    /// The columns of this scenario's runs.
    pub fn columns(&self) -> Columns {
        if self.has_burst() {
            BURST_COLUMNS
        } else {
            COLUMNS
        }
    }
}

impl GroupResult {
    /// The group's row of groups.csv: its collisions per delivered frame
    /// and drop fraction as the run's (docs/model.md, "Metric columns").
    fn row(&self) -> Vec<Cell> {
        let dropped = self.dropped_excessive + self.dropped_queue;
        vec![
            Cell::text(self.name.clone()),
            Cell::text(self.policy_label.clone()),
            Cell::Count(self.stations),
            Cell::Number(self.offered_load),
            Cell::Number(self.throughput),
            Cell::Number(self.throughput_mbps),
            Cell::Number(self.share),
            Cell::Count(self.delivered),
            Cell::Number(self.delay_mean_us),
            Cell::Number(self.delay_p50_us),
            Cell::Number(self.delay_p95_us),
            Cell::Number(self.delay_p99_us),
            Cell::Count(self.attempts),
            Cell::Count(self.collisions),
            Cell::Count(self.collision_involvements),
            Cell::Count(self.dropped_excessive),
            Cell::Count(self.dropped_queue),
            Cell::Number(self.fairness),
            Cell::Number(ratio(
                self.collision_involvements as f64,
                self.delivered as f64,
            )),
            Cell::Number(ratio(
                dropped as f64,
                (self.delivered + self.undetected_collisions + dropped) as f64,
            )),
        ]
    }
}

/// A station's row of the stations table; `total`: the delivered bits of
/// every station.
fn station_row(s: &StationResult, total: u64) -> Vec<Cell> {
    let share = if total > 0 {
        s.delivered_bits as f64 / total as f64
    } else {
        f64::NAN
    };
    vec![
        Cell::Count(s.id as u64),
        Cell::Count(s.group as u64),
        Cell::Number(s.position_m),
        Cell::Count(s.arrived),
        Cell::Count(s.delivered),
        Cell::Count(s.attempts),
        Cell::Count(s.collisions),
        Cell::Count(s.dropped_excessive),
        Cell::Count(s.dropped_queue),
        Cell::Count(s.undetected_collisions),
        Cell::Number(s.mean_delay_us()),
        Cell::Number(share),
    ]
}

/// The stations table, made from the per-station results while they go:
/// taken from the end, their vector shrinks every 65 536 stations, so that
/// a crowd's results (160 bytes a station) and its rows (192) never take
/// memory at once (the table's room is asked for at once, and the system
/// gives it as rows fill it).
fn station_rows(results: &mut Vec<StationResult>) -> Table {
    const STEP: usize = 1 << 16;
    let total: u64 = results.iter().map(|s| s.delivered_bits).sum();
    let mut rows = Table::with_capacity(STATION_COLUMNS.len(), results.len());
    while let Some(s) = results.pop() {
        rows.push(station_row(&s, total));
        if results.len().is_multiple_of(STEP) {
            results.shrink_to_fit();
        }
    }
    rows.reverse_rows();
    rows
}

/// a / b, NaN when b is 0.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

impl RunResult {
    /// The run as named columns: the metrics, the derived ones, and the
    /// stations table (which takes the per-station results, see
    /// [`station_rows`]).
    pub fn output(mut self) -> RunOutput {
        let m = &self.metrics;
        let delivered = m.get("delivered");
        let dropped = m.get("dropped_excessive") + m.get("dropped_queue");
        let decided = delivered + m.get("undetected_collisions") + dropped;
        let mut metrics = m.values.clone();
        metrics.push(ratio(m.get("collision_involvements"), delivered));
        metrics.push(ratio(dropped, decided));

        let stations = station_rows(&mut self.stations);
        let mut tables = vec![stations, self.groups.iter().map(GroupResult::row).collect()];
        let columns = match &self.burst {
            None => COLUMNS,
            Some(b) => {
                metrics.extend([
                    b.frames as f64,
                    ratio(b.delivered as f64, b.frames as f64),
                    b.percentile_us(1.0),
                    b.percentile_us(0.50),
                    b.percentile_us(0.90),
                    b.percentile_us(0.99),
                ]);
                tables.push(
                    (1..=20)
                        .map(|k| {
                            vec![
                                Cell::Count(5 * k),
                                Cell::Number(b.percentile_us(k as f64 / 20.0)),
                            ]
                        })
                        .collect(),
                );
                BURST_COLUMNS
            }
        };
        RunOutput {
            columns,
            metrics,
            tables,
            events: self.events,
            failure: self.failure.take(),
        }
    }
}
