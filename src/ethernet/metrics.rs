//! Statistics of one run: counters per station inside the measured window
//! [warmup, duration), whole-run totals for the conservation check, delays, and
//! runs of consecutive successes (the capture effect).

use super::Scenario;
use crate::engine::Time;
use crate::results::{Cell, Columns, RunOutput, TableSpec};

/// The metrics a bus run counts (docs/model.md, "Metric columns"), in
/// output order; [`DERIVED_COLUMNS`] follow them.
pub const METRIC_COLUMNS: &[&str] = ALL_METRIC_COLUMNS.split_at(18).0;

/// Metrics derived from the ones above, after them in runs.csv and
/// summary.csv: collisions per delivered frame, and the fraction of frames
/// whose fate was decided in the measured window that were dropped (at the
/// attempt limit or by a full queue).
pub const DERIVED_COLUMNS: &[&str] = ALL_METRIC_COLUMNS.split_at(18).1;

/// Every metric column of a bus run, in output order.
pub const ALL_METRIC_COLUMNS: &[&str] = &[
    "throughput",
    "throughput_mbps",
    "offered_load",
    "attempt_load",
    "delivered",
    "attempts",
    "collisions",
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
];

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

/// The columns of every bus run.
pub const COLUMNS: Columns = Columns {
    metrics: ALL_METRIC_COLUMNS,
    headline: &[
        "throughput",
        "delay_mean_us",
        "collisions_per_delivered",
        "fairness",
    ],
    tables: &[TableSpec {
        name: "stations",
        columns: STATION_COLUMNS,
    }],
};

/// One run's metrics, aligned with [`METRIC_COLUMNS`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetrics {
    pub values: Vec<f64>,
}

impl RunMetrics {
    pub fn get(&self, column: &str) -> f64 {
        METRIC_COLUMNS
            .iter()
            .position(|c| *c == column)
            .map(|k| self.values[k])
            .unwrap_or(f64::NAN)
    }
}

/// Per-station results of one run.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StationResult {
    pub id: usize,
    pub group: usize,
    pub position_m: f64,
    /// Inside the measured window:
    pub arrived: u64,
    pub delivered: u64,
    pub delivered_bits: u64,
    pub attempts: u64,
    pub collisions: u64,
    pub late_collisions: u64,
    pub undetected_collisions: u64,
    pub dropped_excessive: u64,
    pub dropped_queue: u64,
    pub delay_sum_ps: u128,
    /// Over the whole run, for conservation: arrived = delivered + lost +
    /// dropped + queued.
    pub total_arrived: u64,
    pub total_delivered: u64,
    pub total_lost: u64,
    pub total_dropped_excessive: u64,
    pub total_dropped_queue: u64,
    pub queued_at_end: u64,
}

impl StationResult {
    pub fn mean_delay_us(&self) -> f64 {
        if self.delivered == 0 {
            f64::NAN
        } else {
            self.delay_sum_ps as f64 / self.delivered as f64 / 1e6
        }
    }

    /// Whether every frame that arrived is accounted for.
    pub fn conserves_frames(&self) -> bool {
        self.total_arrived
            == self.total_delivered
                + self.total_lost
                + self.total_dropped_excessive
                + self.total_dropped_queue
                + self.queued_at_end
    }
}

/// Everything one run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub metrics: RunMetrics,
    pub stations: Vec<StationResult>,
    /// Events processed, for the benchmarks.
    pub events: u64,
    /// Medium busy time in the measured window [warmup, duration): the length
    /// of the union of all transmission intervals [start, end) as sent (at the
    /// senders' positions, preamble and jam included, gaps excluded). Overlapping
    /// transmissions (collisions) count once, so busy_ps <= duration - warmup.
    pub busy_ps: u128,
}

impl RunResult {
    /// The run as named columns: the metrics, the derived ones, and the
    /// stations table.
    pub fn output(&self) -> RunOutput {
        let m = &self.metrics;
        let delivered = m.get("delivered");
        let dropped = m.get("dropped_excessive") + m.get("dropped_queue");
        let decided = delivered + m.get("undetected_collisions") + dropped;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        let mut metrics = m.values.clone();
        metrics.push(ratio(m.get("collisions"), delivered));
        metrics.push(ratio(dropped, decided));
        let total: u64 = self.stations.iter().map(|s| s.delivered_bits).sum();
        let stations = self
            .stations
            .iter()
            .map(|s| {
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
            })
            .collect();
        RunOutput {
            columns: COLUMNS,
            metrics,
            tables: vec![stations],
            events: self.events,
        }
    }
}

/// A station's counters while the run goes on: the fields of
/// [`StationResult`] that change, on two cache lines of their own (a crowd
/// fetches them ahead of the station's events; id, group and position are
/// only needed at the end).
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Row {
    arrived: u64,
    delivered: u64,
    delivered_bits: u64,
    attempts: u64,
    collisions: u64,
    late_collisions: u64,
    undetected_collisions: u64,
    dropped_excessive: u64,
    dropped_queue: u64,
    total_arrived: u64,
    total_delivered: u64,
    total_lost: u64,
    total_dropped_excessive: u64,
    total_dropped_queue: u64,
    delay_sum_ps: u128,
}

pub(super) struct Recorder {
    warmup: Time,
    duration: Time,
    st: Vec<Row>,
    positions: Vec<f64>,
    delays: Vec<Time>,
    arrived_bits: u128,
    attempted_bits: u128,
    delivered_bits: u128,
    run_station: Option<usize>,
    run_len: u64,
    runs: u64,
    run_sum: u64,
    run_max: u64,
    pub events: u64,
    busy_ps: u128,
    /// Transmissions in progress, and since when at least one has been.
    on_air: u32,
    busy_since: Time,
}

impl Recorder {
    pub fn new(sc: &Scenario, positions: Vec<f64>) -> Self {
        Recorder {
            warmup: sc.warmup,
            duration: sc.duration,
            st: crate::mem::huge_filled(positions.len(), Row::default()),
            positions,
            delays: Vec::new(),
            arrived_bits: 0,
            attempted_bits: 0,
            delivered_bits: 0,
            run_station: None,
            run_len: 0,
            runs: 0,
            run_sum: 0,
            run_max: 0,
            events: 0,
            busy_ps: 0,
            on_air: 0,
            busy_since: 0,
        }
    }

    /// Starts loading station `i`'s row (see `Sim::prefetch`).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(r) = self.st.get(i) {
            crate::mem::prefetch_lines(r);
        }
    }

    fn in_window(&self, t: Time) -> bool {
        t >= self.warmup && t < self.duration
    }

    pub fn arrival(&mut self, t: Time, i: usize, bytes: u32, queued: bool) {
        let s = &mut self.st[i];
        s.total_arrived += 1;
        if !queued {
            s.total_dropped_queue += 1;
        }
        if t >= self.warmup && t < self.duration {
            s.arrived += 1;
            self.arrived_bits += 8 * bytes as u128;
            if !queued {
                s.dropped_queue += 1;
            }
        }
    }

    pub fn attempt(&mut self, t: Time, i: usize, bytes: u32) {
        if self.on_air == 0 {
            self.busy_since = t;
        }
        self.on_air += 1;
        if self.in_window(t) {
            self.st[i].attempts += 1;
            self.attempted_bits += 8 * bytes as u128;
        }
    }

    pub fn collision_detected(&mut self, t: Time, i: usize, late: bool) {
        if late && self.in_window(t) {
            self.st[i].late_collisions += 1;
        }
    }

    /// A transmission ended at `t`: when it was the last on the air, the busy
    /// period [busy_since, t) ends, and its part inside the window counts.
    fn busy(&mut self, t: Time) {
        self.on_air = self.on_air.saturating_sub(1);
        if self.on_air == 0 {
            self.add_busy(t);
        }
    }

    fn add_busy(&mut self, t: Time) {
        let start = self.busy_since.max(self.warmup);
        let end = t.min(self.duration);
        if end > start {
            self.busy_ps += (end - start) as u128;
        }
    }

    pub fn collision_ended(&mut self, t: Time, i: usize) {
        self.busy(t);
        if self.in_window(t) {
            self.st[i].collisions += 1;
        }
    }

    pub fn discard(&mut self, t: Time, i: usize) {
        self.st[i].total_dropped_excessive += 1;
        if self.in_window(t) {
            self.st[i].dropped_excessive += 1;
        }
    }

    /// A transmission ended without a detected collision.
    pub fn success(&mut self, t: Time, i: usize) {
        self.busy(t);
        if !self.in_window(t) {
            return;
        }
        if self.run_station == Some(i) {
            self.run_len += 1;
        } else {
            self.close_run();
            self.run_station = Some(i);
            self.run_len = 1;
        }
    }

    fn close_run(&mut self) {
        if self.run_len > 0 {
            self.runs += 1;
            self.run_sum += self.run_len;
            self.run_max = self.run_max.max(self.run_len);
        }
        self.run_len = 0;
    }

    /// The frame sent at `end` reached its destination, intact or not.
    pub fn delivered(&mut self, end: Time, i: usize, bytes: u32, delay: Time, intact: bool) {
        let w = self.in_window(end);
        let s = &mut self.st[i];
        if intact {
            s.total_delivered += 1;
        } else {
            s.total_lost += 1;
        }
        if !w {
            return;
        }
        if intact {
            s.delivered += 1;
            s.delivered_bits += 8 * bytes as u64;
            s.delay_sum_ps += delay as u128;
            self.delivered_bits += 8 * bytes as u128;
            self.delays.push(delay);
        } else {
            s.undetected_collisions += 1;
        }
    }

    pub fn finish(mut self, sc: &Scenario, queued: &[u64]) -> RunResult {
        self.close_run();
        if self.on_air > 0 {
            // Transmissions still on the air at the end keep the medium busy
            // to the end of the window.
            self.add_busy(self.duration);
        }
        let groups = sc
            .groups
            .iter()
            .enumerate()
            .flat_map(|(gi, g)| std::iter::repeat_n(gi, g.count));
        let rows = std::mem::take(&mut self.st);
        let stations: Vec<StationResult> = rows
            .into_iter()
            .zip(groups)
            .zip(self.positions.iter().zip(queued))
            .enumerate()
            .map(
                |(id, ((r, group), (&position_m, &queued_at_end)))| StationResult {
                    id,
                    group,
                    position_m,
                    arrived: r.arrived,
                    delivered: r.delivered,
                    delivered_bits: r.delivered_bits,
                    attempts: r.attempts,
                    collisions: r.collisions,
                    late_collisions: r.late_collisions,
                    undetected_collisions: r.undetected_collisions,
                    dropped_excessive: r.dropped_excessive,
                    dropped_queue: r.dropped_queue,
                    delay_sum_ps: r.delay_sum_ps,
                    total_arrived: r.total_arrived,
                    total_delivered: r.total_delivered,
                    total_lost: r.total_lost,
                    total_dropped_excessive: r.total_dropped_excessive,
                    total_dropped_queue: r.total_dropped_queue,
                    queued_at_end,
                },
            )
            .collect();
        let rt = sc.medium.bit_rate * sc.measured_s();
        let sum = |f: fn(&StationResult) -> u64| stations.iter().map(f).sum::<u64>() as f64;
        self.delays.sort_unstable();
        let pct = |p: f64| -> f64 {
            if self.delays.is_empty() {
                return f64::NAN;
            }
            // Nearest rank.
            let k = ((p * self.delays.len() as f64).ceil() as usize).clamp(1, self.delays.len());
            self.delays[k - 1] as f64 / 1e6
        };
        let delay_mean = if self.delays.is_empty() {
            f64::NAN
        } else {
            self.delays.iter().map(|&d| d as f64).sum::<f64>() / self.delays.len() as f64 / 1e6
        };
        let (sx, sxx) = stations.iter().fold((0.0, 0.0), |(a, b), s| {
            let x = s.delivered_bits as f64;
            (a + x, b + x * x)
        });
        let fairness = if sxx > 0.0 {
            sx * sx / (stations.len() as f64 * sxx)
        } else {
            1.0
        };
        let (cap_mean, cap_max) = if self.runs > 0 {
            (self.run_sum as f64 / self.runs as f64, self.run_max as f64)
        } else {
            (0.0, 0.0)
        };
        let values = vec![
            self.delivered_bits as f64 / rt,
            self.delivered_bits as f64 / sc.measured_s() / 1e6,
            self.arrived_bits as f64 / rt,
            self.attempted_bits as f64 / rt,
            sum(|s| s.delivered),
            sum(|s| s.attempts),
            sum(|s| s.collisions),
            sum(|s| s.late_collisions),
            sum(|s| s.undetected_collisions),
            sum(|s| s.dropped_excessive),
            sum(|s| s.dropped_queue),
            delay_mean,
            pct(0.50),
            pct(0.95),
            pct(0.99),
            fairness,
            cap_mean,
            cap_max,
        ];
        debug_assert_eq!(values.len(), METRIC_COLUMNS.len());
        RunResult {
            metrics: RunMetrics { values },
            stations,
            events: self.events,
            busy_ps: self.busy_ps,
        }
    }
}
