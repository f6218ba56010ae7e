//! What a service run counts: calls, attempts and successes per group, the
//! latency a client sees, timeouts and the server's wasted work, the
//! server's crashes, when every reconnecting client was connected, recovery
//! after a load profile, a latency objective, and a timeseries per bin; and
//! the world's `Columns`.

use super::config::Scenario;
use crate::engine::Time;
use crate::results::{Cell, Columns, RunOutput, Table, TableSpec};

macro_rules! service_metrics {
    ($($extra:expr),*) => {
        &[
            "calls",
            "attempts",
            "successes",
            "success_rate",
            "load",
            "completion_s",
            "crashes",
            "all_connected_s",
            "in_flight",
            "timeouts",
            "wasted_work_s",
            "latency_mean_s",
            "latency_p50_s",
            "latency_p90_s",
            "latency_p99_s",
            "latency_p999_s",
            "failed_latency_mean_s",
            "hedges",
            "hedge_wins",
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
    "in_flight",
    "timeouts",
    "latency_mean_s",
    "latency_p50_s",
    "latency_p90_s",
    "latency_p99_s",
    "latency_p999_s",
    "failed_latency_mean_s",
    "hedges",
    "hedge_wins",
];

pub const TIMESERIES_COLUMNS: &[&str] = &[
    "t_s",
    "queue",
    "attempts",
    "successes",
    "failures",
    "connected",
    "server_up",
    "calls_started",
    "calls_failed",
    "failed_fast",
    "timeouts",
    "goodput",
    "latency_p50_s",
    "latency_p99_s",
];

/// timeseries.csv's columns with more than one server: a row per bin and
/// server, each the server's and its callers' (calls to it, downstream
/// calls included), with servers.csv's `served`, `refused` and
/// `wasted_work_s`.
pub const SERVER_TIMESERIES_COLUMNS: &[&str] = &[
    "t_s",
    "server",
    "queue",
    "attempts",
    "successes",
    "failures",
    "connected",
    "server_up",
    "calls_started",
    "calls_failed",
    "failed_fast",
    "timeouts",
    "goodput",
    "latency_p50_s",
    "latency_p99_s",
    "served",
    "refused",
    "wasted_work_s",
];

/// servers.csv's columns after the point's axes and the replication
/// (written for scenarios of more than one server).
pub const SERVER_COLUMNS: &[&str] = &[
    "server",
    "attempts",
    "served",
    "refused",
    "timeouts",
    "crashes",
    "wasted_work_s",
    "amplification",
];

const TABLES_SERVERS: &[TableSpec] = &[
    TableSpec {
        name: "groups",
        columns: GROUP_COLUMNS,
    },
    TableSpec {
        name: "timeseries",
        columns: SERVER_TIMESERIES_COLUMNS,
    },
    TableSpec {
        name: "servers",
        columns: SERVER_COLUMNS,
    },
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
const R: [&str; 3] = ["recovered", "recovery_s", "drain_s"];
const SLO: [&str; 3] = ["slo_good", "slo_burn", "slo_below_s"];
/// Each combination of a profile (recovery), polls (lateness) and an SLO.
const VARIANTS: [Columns; 8] = [
    COLUMNS,
    columns(service_metrics!(R[0], R[1], R[2])),
    columns(service_metrics!("lateness_s")),
    columns(service_metrics!(R[0], R[1], R[2], "lateness_s")),
    columns(service_metrics!(SLO[0], SLO[1], SLO[2])),
    columns(service_metrics!(R[0], R[1], R[2], SLO[0], SLO[1], SLO[2])),
    columns(service_metrics!("lateness_s", SLO[0], SLO[1], SLO[2])),
    columns(service_metrics!(
        R[0],
        R[1],
        R[2],
        "lateness_s",
        SLO[0],
        SLO[1],
        SLO[2]
    )),
];

impl Scenario {
    /// Load profiles add recovery; poll groups add lateness; an SLO its
    /// columns.
    pub fn columns(&self) -> Columns {
        let k = usize::from(self.surge().is_some())
            + 2 * usize::from(self.has_poll())
            + 4 * usize::from(self.slo.is_some());
        if self.servers.len() > 1 {
            Columns {
                tables: TABLES_SERVERS,
                ..VARIANTS[k]
            }
        } else {
            VARIANTS[k]
        }
    }
}

/// Latencies, in a histogram of relative width 2^-8 (a value is reported
/// as its bucket's middle, within 0.2 %), with their exact sum.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    counts: Vec<u64>,
    n: u64,
    sum_ps: f64,
}

/// The f64 bits of 1.0 shifted as a bucket index: the buckets start at 1 ps.
const ONE: u64 = 1023 << 8;

impl Latencies {
    fn index(ps: Time) -> usize {
        if ps == 0 {
            0
        } else {
            ((ps as f64).to_bits() >> 44) as usize - ONE as usize + 1
        }
    }

    /// The middle of bucket `i`, in picoseconds.
    fn middle(i: usize) -> f64 {
        if i == 0 {
            return 0.0;
        }
        let lo = f64::from_bits((i as u64 - 1 + ONE) << 44);
        let hi = f64::from_bits((i as u64 + ONE) << 44);
        (lo + hi) / 2.0
    }

    pub fn add(&mut self, ps: Time) {
        let i = Self::index(ps);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
        self.sum_ps += ps as f64;
    }

    pub fn merge(&mut self, other: &Latencies) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum_ps += other.sum_ps;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The mean, in seconds (NaN when empty).
    pub fn mean_s(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum_ps / self.n as f64 / 1e12
        }
    }

    /// The nearest-rank quantile `q`, in seconds: the least value with at
    /// least q x n values at or below it (NaN when empty).
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::middle(i) / 1e12;
            }
        }
        f64::NAN
    }
}

/// The nearest-rank quantile `q` of `v` (reordered), in seconds.
pub fn exact_quantile_s(v: &mut [Time], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    let (_, x, _) = v.select_nth_unstable(rank - 1);
    *x as f64 / 1e12
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
    /// Attempts that timed out.
    pub timeouts: u64,
    /// Calls that failed for good, and those that never sent an attempt
    /// (a gate failed them at once).
    pub failed: u64,
    pub failed_fast: u64,
    /// Calls still going at the end.
    pub in_flight: u64,
    /// Successful calls' latencies (first attempt sent to the successful
    /// reply), and the sum of failed calls' (to the final failure).
    pub latency: Latencies,
    pub failed_latency_ps: f64,
    /// Finished calls that succeeded within the SLO's latency.
    pub slo_good: u64,
    /// Attempts sent while another of their call was outstanding, and
    /// calls won by such an attempt.
    pub hedges: u64,
    pub hedge_wins: u64,
}

/// Counters of one server.
#[derive(Clone, Debug, Default)]
pub struct ServerCount {
    /// Attempts sent to it (by counted calls, or made for them).
    pub attempts: u64,
    /// Replies of success, and of refusal (a full, down or gated queue, a
    /// flaky server's failure), made after the warmup.
    pub served: u64,
    pub refused: u64,
    /// Its attempts whose caller stopped waiting.
    pub timeouts: u64,
    pub crashes: u64,
    /// Worker time spent on attempts whose caller had gone.
    pub wasted_ps: f64,
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
    pub calls_started: u64,
    pub calls_failed: u64,
    pub failed_fast: u64,
    pub timeouts: u64,
    /// Finished calls that succeeded within the SLO's latency.
    pub slo_good: u64,
    /// Successful calls' latency quantiles in the bin, in seconds.
    pub latency_p50: f64,
    pub latency_p99: f64,
    /// A server's replies of success and refusal, and its work for
    /// attempts no one waited for any more (per-server bins only).
    pub served: u64,
    pub refused: u64,
    pub wasted_ps: f64,
}

/// The results of one service run.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub columns: Columns,
    pub groups: Vec<(String, u64, GroupCount)>,
    /// Per server (with more than one), its name and counts.
    pub servers: Vec<(String, ServerCount)>,
    pub crashes: u64,
    pub all_connected: Option<Time>,
    /// With a load profile: whether goodput recovered, and when (from the
    /// profile's end); when the queue drained to at most 10 attempts.
    pub recovered: Option<bool>,
    pub recovery: Option<Time>,
    pub drain: Option<Time>,
    /// Server time spent on attempts whose client had gone.
    pub wasted_s: f64,
    /// The SLO's good share of finished calls, its error-budget burn and
    /// the time in bins below its target.
    pub slo: Option<(f64, f64, f64)>,
    pub bin: Time,
    pub duration: Time,
    pub bins: Vec<Bin>,
    /// With more than one server, per server its bins.
    pub server_bins: Vec<Vec<Bin>>,
    pub events: u64,
    /// Why the run stopped before its end, if it did.
    pub failure: Option<String>,
}

fn secs(t: Option<Time>) -> f64 {
    t.map_or(f64::NAN, |t| t as f64 / 1e12)
}

/// The mean latency of a group's failed calls, in seconds.
fn failed_mean(g: &GroupCount) -> f64 {
    if g.failed > 0 {
        g.failed_latency_ps / g.failed as f64 / 1e12
    } else {
        f64::NAN
    }
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
            t.timeouts += g.timeouts;
            t.failed += g.failed;
            t.failed_fast += g.failed_fast;
            t.in_flight += g.in_flight;
            t.latency.merge(&g.latency);
            t.failed_latency_ps += g.failed_latency_ps;
            t.slo_good += g.slo_good;
            t.hedges += g.hedges;
            t.hedge_wins += g.hedge_wins;
        }
        t
    }

    pub fn output(&self) -> RunOutput {
        let t = self.total();
        let mut metrics = vec![
            t.calls as f64,
            t.attempts as f64,
            t.successes as f64,
            ratio(t.successes, t.calls - t.in_flight),
            ratio(t.attempts, t.calls),
            secs(t.completion),
            self.crashes as f64,
            secs(self.all_connected),
            t.in_flight as f64,
            t.timeouts as f64,
            self.wasted_s,
            t.latency.mean_s(),
            t.latency.quantile_s(0.5),
            t.latency.quantile_s(0.9),
            t.latency.quantile_s(0.99),
            t.latency.quantile_s(0.999),
            failed_mean(&t),
            t.hedges as f64,
            t.hedge_wins as f64,
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
                "drain_s" => secs(self.drain),
                "slo_good" => self.slo.map_or(f64::NAN, |s| s.0),
                "slo_burn" => self.slo.map_or(f64::NAN, |s| s.1),
                "slo_below_s" => self.slo.map_or(f64::NAN, |s| s.2),
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
                    Cell::Number(ratio(g.successes, g.calls - g.in_flight)),
                    Cell::Number(ratio(g.attempts, g.calls)),
                    Cell::Number(secs(g.completion)),
                    Cell::Number(secs(g.all_connected)),
                    Cell::Number(lateness(g)),
                    Cell::Count(g.in_flight),
                    Cell::Count(g.timeouts),
                    Cell::Number(g.latency.mean_s()),
                    Cell::Number(g.latency.quantile_s(0.5)),
                    Cell::Number(g.latency.quantile_s(0.9)),
                    Cell::Number(g.latency.quantile_s(0.99)),
                    Cell::Number(g.latency.quantile_s(0.999)),
                    Cell::Number(failed_mean(g)),
                    Cell::Count(g.hedges),
                    Cell::Count(g.hedge_wins),
                ]
            })
            .collect();
        let row = |k: usize, b: &Bin, server: Option<&str>| {
            let mut r = vec![Cell::Number((k as u64 + 1) as f64 * self.bin as f64 / 1e12)];
            r.extend(server.map(|s| Cell::text(s.to_string())));
            r.extend([
                Cell::Count(b.queue),
                Cell::Count(b.attempts),
                Cell::Count(b.successes),
                Cell::Count(b.failures),
                Cell::Count(b.connected),
                Cell::Count(u64::from(b.server_up)),
                Cell::Count(b.calls_started),
                Cell::Count(b.calls_failed),
                Cell::Count(b.failed_fast),
                Cell::Count(b.timeouts),
                Cell::Number(b.successes as f64 / bin_width(self.bin, self.duration, k)),
                Cell::Number(b.latency_p50),
                Cell::Number(b.latency_p99),
            ]);
            if server.is_some() {
                r.extend([
                    Cell::Count(b.served),
                    Cell::Count(b.refused),
                    Cell::Number(b.wasted_ps / 1e12),
                ]);
            }
            r
        };
        let timeseries: Table = if self.server_bins.is_empty() {
            self.bins
                .iter()
                .enumerate()
                .map(|(k, b)| row(k, b, None))
                .collect()
        } else {
            (0..self.bins.len())
                .flat_map(|k| {
                    self.servers
                        .iter()
                        .zip(&self.server_bins)
                        .map(move |((name, _), bins)| (k, name, bins))
                })
                .map(|(k, name, bins)| row(k, &bins[k], Some(name)))
                .collect()
        };
        let mut tables = vec![groups, timeseries];
        if self.columns.tables.len() > 2 {
            tables.push(
                self.servers
                    .iter()
                    .map(|(name, c)| {
                        vec![
                            Cell::text(name.clone()),
                            Cell::Count(c.attempts),
                            Cell::Count(c.served),
                            Cell::Count(c.refused),
                            Cell::Count(c.timeouts),
                            Cell::Count(c.crashes),
                            Cell::Number(c.wasted_ps / 1e12),
                            Cell::Number(ratio(c.attempts, t.calls)),
                        ]
                    })
                    .collect(),
            );
        }
        RunOutput {
            columns: self.columns,
            metrics,
            tables,
            events: self.events,
            failure: self.failure.clone(),
        }
    }
}

/// The width of bin `k` in seconds (the last one may end early, at the
/// duration).
fn bin_width(bin: Time, duration: Time, k: usize) -> f64 {
    let from = bin * k as u64;
    ((from + bin).min(duration) - from.min(duration)) as f64 / 1e12
}

/// Recovery after a disturbance over [from, to), judged by goodput: the
/// first bin from `to` on that starts a `window` of bins whose goodput
/// (successful calls per second over the window) is within `tolerance` of
/// the undisturbed goodput (the mean over the bins wholly
/// in [warmup, from), else the calls offered outside the profile), as
/// (recovered, time from `to`).
pub fn recovery(sc: &Scenario, bins: &[Bin], from: Time, to: Time) -> (bool, Option<Time>) {
    let width = sc.bin.max(1);
    let full = (sc.duration / width) as usize;
    let before: Vec<f64> = (0..full.min(bins.len()))
        .filter(|&k| k as u64 * width >= sc.warmup && (k as u64 + 1) * width <= from)
        .map(|k| bins[k].successes as f64 / (width as f64 / 1e12))
        .collect();
    let reference = if before.is_empty() {
        sc.base_call_rate(from)
    } else {
        before.iter().sum::<f64>() / before.len() as f64
    };
    if reference.is_nan() || reference <= 0.0 {
        return (false, None);
    }
    let span = sc.recovery.window.div_ceil(width).max(1) as usize;
    let first = to.div_ceil(width) as usize;
    let end = full.min(bins.len());
    for k in first..end.saturating_sub(span - 1) {
        let calls: u64 = bins[k..k + span].iter().map(|b| b.successes).sum();
        let g = calls as f64 / (span as f64 * width as f64 / 1e12);
        if (g - reference).abs() <= sc.recovery.tolerance * reference {
            return (true, Some(k as u64 * width - to));
        }
    }
    (false, None)
}

/// The SLO's results: the good share of finished calls (succeeded within
/// its latency), the error-budget burn ((1 - good share) / (1 - target))
/// and the time in bins whose good share is below the target.
pub fn slo(
    s: &super::config::Slo,
    counts: &[GroupCount],
    bins: &[Bin],
    sc: &Scenario,
) -> (f64, f64, f64) {
    let (good, finished) = counts.iter().fold((0, 0), |(g, f), c| {
        (g + c.slo_good, f + c.successes + c.failed)
    });
    let share = ratio(good, finished);
    let burn = (1.0 - share) / (1.0 - s.target);
    let below: f64 = bins
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            let done = b.successes + b.calls_failed;
            done > 0 && (b.slo_good as f64) < s.target * done as f64
        })
        .map(|(k, _)| bin_width(sc.bin, sc.duration, k))
        .sum();
    (share, burn, below)
}
