//! Statistics of one run: counters per station inside the measured window
//! [warmup, duration), whole-run totals for the conservation check, delays, and
//! runs of consecutive successes (the capture effect).

use super::Scenario;
use crate::engine::Time;

/// One run's metrics, aligned with [`METRIC_COLUMNS`](super::METRIC_COLUMNS).
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetrics {
    pub values: Vec<f64>,
}

impl RunMetrics {
    pub fn get(&self, column: &str) -> f64 {
        super::METRIC_COLUMNS
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

/// Per-group results of one run, inside the measured window.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupResult {
    pub name: String,
    pub policy: &'static str,
    /// The policy as written, kind and parameters ([`super::Group::policy`]).
    pub policy_label: String,
    pub stations: u64,
    /// Offered and carried load as fractions of the bit rate.
    pub offered_load: f64,
    pub throughput: f64,
    pub throughput_mbps: f64,
    /// The group's part of all delivered bits.
    pub share: f64,
    pub delivered: u64,
    pub delay_mean_us: f64,
    pub delay_p50_us: f64,
    pub delay_p95_us: f64,
    pub delay_p99_us: f64,
    pub attempts: u64,
    /// Collision episodes a station of the group took part in.
    pub collisions: u64,
    /// Collided transmissions of the group's stations.
    pub collision_involvements: u64,
    pub dropped_excessive: u64,
    pub dropped_queue: u64,
    /// Frames lost to collisions the senders did not detect.
    pub undetected_collisions: u64,
    /// Jain's index over the group's stations (NaN: nothing delivered).
    pub fairness: f64,
}

/// Mean, p50, p95 and p99 of sorted delays in microseconds (nearest rank;
/// NaN when there are none).
fn delay_figures(sorted: &[Time]) -> (f64, f64, f64, f64) {
    if sorted.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    }
    let pct = |p: f64| {
        let k = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[k - 1] as f64 / 1e6
    };
    let mean = sorted.iter().map(|&d| d as f64).sum::<f64>() / sorted.len() as f64 / 1e6;
    (mean, pct(0.50), pct(0.95), pct(0.99))
}

/// Jain's fairness index of the stations' delivered bits; NaN when none
/// delivered anything (fairness is not defined then).
fn jain<'s>(stations: impl Iterator<Item = &'s StationResult>) -> f64 {
    let (n, sx, sxx) = stations.fold((0.0, 0.0, 0.0), |(n, a, b), s| {
        let x = s.delivered_bits as f64;
        (n + 1.0, a + x, b + x * x)
    });
    if sxx > 0.0 {
        sx * sx / (n * sxx)
    } else {
        f64::NAN
    }
}

/// How a burst drained: every burst frame's completion time (delivered,
/// lost or discarded) from its group's release, sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct BurstResult {
    /// Frames the burst groups released.
    pub frames: u64,
    /// Of them, delivered intact.
    pub delivered: u64,
    /// Sorted completion times of the frames whose fate was decided; frames
    /// still queued at the end have none.
    pub completions: Vec<Time>,
}

impl BurstResult {
    /// The completion time below which a fraction `p` of the burst's frames
    /// finished (nearest rank over all its frames), in microseconds; empty
    /// (NaN) when that rank falls on a frame still queued at the end.
    pub fn percentile_us(&self, p: f64) -> f64 {
        if self.frames == 0 {
            return f64::NAN;
        }
        let k = ((p * self.frames as f64).ceil() as u64).clamp(1, self.frames) as usize;
        self.completions
            .get(k - 1)
            .map_or(f64::NAN, |&t| t as f64 / 1e6)
    }
}

/// Everything one run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub metrics: RunMetrics,
    pub stations: Vec<StationResult>,
    pub groups: Vec<GroupResult>,
    /// For a scenario with a burst group, how the burst drained.
    pub burst: Option<BurstResult>,
    /// Events processed, for the benchmarks.
    pub events: u64,
    /// Why the run stopped before its end, if it did (a policy written as
    /// an expression gave no valid wait): its results are not to be used.
    pub failure: Option<String>,
    /// Medium busy time in the measured window [warmup, duration): the length
    /// of the union of all transmission intervals [start, end) as sent (at the
    /// senders' positions, preamble and jam included, gaps excluded). Overlapping
    /// transmissions (collisions) count once, so busy_ps <= duration - warmup.
    pub busy_ps: u128,
}

/// A station's counters while the run goes on: the fields of
/// [`StationResult`] that change, 32 of the 128 bytes of the station's
/// state (see [`super::station::Station`]), on the cache lines its events
/// read anyway; id, group and position are only needed at the end. Counts
/// are kept in 16 bits, delivered frames as bytes, and the delay sum in
/// 32: what overflows is carried into [`Carries`], so every count stays
/// exact however long the run (a count carries at most once per 65 536 of
/// a station's frames, attempts or bytes; a crowd's stations never get
/// there).
#[derive(Clone, Copy, Default)]
#[repr(align(32))]
pub(in crate::ethernet) struct Row {
    arrived: u16,
    delivered: u16,
    /// Delivered bits over 8 (frames are whole bytes).
    delivered_bytes: u16,
    attempts: u16,
    collisions: u16,
    late_collisions: u16,
    undetected_collisions: u16,
    dropped_excessive: u16,
    dropped_queue: u16,
    total_arrived: u16,
    total_delivered: u16,
    total_lost: u16,
    total_dropped_excessive: u16,
    total_dropped_queue: u16,
    delay_sum_ps: u32,
}

/// A counter of [`Row`], naming its carries.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Counter {
    Arrived,
    Delivered,
    DeliveredBytes,
    Attempts,
    Collisions,
    LateCollisions,
    UndetectedCollisions,
    DroppedExcessive,
    DroppedQueue,
    TotalArrived,
    TotalDelivered,
    TotalLost,
    TotalDroppedExcessive,
    TotalDroppedQueue,
}

/// Adds `v` to a 16-bit count, returning what overflowed, in units of 2^16.
#[inline]
fn add(count: &mut u16, v: u64) -> u64 {
    let sum = u128::from(*count) + u128::from(v);
    *count = sum as u16;
    (sum >> 16) as u64
}

/// The high parts of the counters that overflowed [`Row`]'s widths: per
/// station and counter, in units of 2^16; per station, the delay sum's
/// next 32 bits in an array (a backlogged station's delays pass 2^32 ps,
/// 4.3 ms, every few frames) and the rest in units of 2^64. Looked up,
/// never iterated: the order of a hash map does not reach the results.
#[derive(Default)]
struct Carries {
    counts: std::collections::HashMap<(usize, Counter), u64>,
    /// Zeroed at the start: its pages take memory only where a station's
    /// delays passed 2^32 ps.
    delay_mids: Vec<u32>,
    delay_highs: std::collections::HashMap<usize, u64>,
}

impl Carries {
    fn new(stations: usize) -> Self {
        Carries {
            delay_mids: vec![0; stations],
            ..Carries::default()
        }
    }

    /// Adds `v` to station `i`'s counter `c`, whose low part is `count`,
    /// carrying what overflows.
    #[inline]
    fn add(&mut self, i: usize, c: Counter, count: &mut u16, v: u64) {
        let over = add(count, v);
        if over > 0 {
            self.count(i, c, over);
        }
    }

    #[cold]
    fn count(&mut self, i: usize, c: Counter, units: u64) {
        *self.counts.entry((i, c)).or_default() += units;
    }

    /// Adds `delay` to station `i`'s delay sum, whose low part is `low`.
    #[inline]
    fn add_delay(&mut self, i: usize, low: &mut u32, delay: Time) {
        let sum = u128::from(*low) + u128::from(delay);
        *low = sum as u32;
        let over = (sum >> 32) as u64;
        if over > 0 {
            let mid = &mut self.delay_mids[i];
            let m = u64::from(*mid) + over;
            *mid = m as u32;
            if m >> 32 > 0 {
                self.delay_high(i, m >> 32);
            }
        }
    }

    #[cold]
    fn delay_high(&mut self, i: usize, units: u64) {
        *self.delay_highs.entry(i).or_default() += units;
    }

    /// The whole value of counter `c` of station `i`, whose low part is `low`.
    fn wide(&self, i: usize, c: Counter, low: u16) -> u64 {
        let high = if self.counts.is_empty() {
            0
        } else {
            self.counts.get(&(i, c)).copied().unwrap_or(0)
        };
        (high << 16) + u64::from(low)
    }

    /// The whole delay sum of station `i`, whose low part is `low`.
    fn wide_delay_sum(&self, i: usize, low: u32) -> u128 {
        let high = if self.delay_highs.is_empty() {
            0
        } else {
            self.delay_highs.get(&i).copied().unwrap_or(0)
        };
        let mid = self.delay_mids.get(i).copied().unwrap_or(0);
        (u128::from(high) << 64) + (u128::from(mid) << 32) + u128::from(low)
    }
}

pub(super) struct Recorder {
    warmup: Time,
    duration: Time,
    carries: Carries,
    /// Delivery delays in the window, per group.
    delays: Vec<Vec<Time>>,
    /// Offered bits in the window, per group.
    group_arrived_bits: Vec<u128>,
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
    /// Collision episodes (one per collision on the bus, however many took
    /// part): all so far, the latest end of a collided transmission, those
    /// ending in the window, and per group those its stations took part in.
    episodes_all: u64,
    episode_end: Time,
    /// Transmission attempts over the whole run (the window's are counted
    /// per station).
    attempts_all: u64,
    episodes: u64,
    group_episodes: Vec<u64>,
    group_last_episode: Vec<u64>,
    /// Per group, its burst's release time (None: not a burst group); the
    /// burst frames' completion times from their release, and how many
    /// were delivered intact (whole run, not only the window: a herd's
    /// drain is a property of the whole burst).
    burst_at: Vec<Option<Time>>,
    completions: Vec<Time>,
    burst_delivered: u64,
    /// Transmissions in progress, and since when at least one has been.
    on_air: u32,
    busy_since: Time,
}

impl Recorder {
    pub fn new(sc: &Scenario, stations: usize) -> Self {
        let groups = sc.groups.len();
        Recorder {
            warmup: sc.warmup,
            duration: sc.duration,
            carries: Carries::new(stations),
            delays: vec![Vec::new(); groups],
            group_arrived_bits: vec![0; groups],
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
            episodes_all: 0,
            attempts_all: 0,
            episode_end: 0,
            episodes: 0,
            group_episodes: vec![0; groups],
            group_last_episode: vec![0; groups],
            burst_at: sc
                .groups
                .iter()
                .map(|g| match g.arrivals {
                    crate::traffic::Arrivals::Burst { at, .. } => Some(at),
                    _ => None,
                })
                .collect(),
            completions: Vec::new(),
            burst_delivered: 0,
            on_air: 0,
            busy_since: 0,
        }
    }

    /// What the recorder keeps per station while the run goes on, beside
    /// the counters in the station's state: the middle of its delay sum
    /// (counted, though only stations whose delays pass 2^32 ps touch it).
    /// A station's group follows from its number (`Sim::group_of`) and is
    /// passed with each count that needs it.
    pub fn bytes_per_station() -> usize {
        std::mem::size_of::<u32>()
    }

    /// Counts one more of station `i`'s counter `c`.
    #[inline]
    fn count(
        &mut self,
        (i, row): (usize, &mut Row),
        c: Counter,
        field: impl FnOnce(&mut Row) -> &mut u16,
    ) {
        self.carries.add(i, c, field(row), 1);
    }

    fn in_window(&self, t: Time) -> bool {
        t >= self.warmup && t < self.duration
    }

    /// A frame arrived at station `i` of group `g`.
    pub fn arrival(
        &mut self,
        t: Time,
        (i, row): (usize, &mut Row),
        g: usize,
        bytes: u32,
        queued: bool,
    ) {
        if !queued {
            self.burst_done(t, g);
        }
        let carries = &mut self.carries;
        carries.add(i, Counter::TotalArrived, &mut row.total_arrived, 1);
        if !queued {
            carries.add(
                i,
                Counter::TotalDroppedQueue,
                &mut row.total_dropped_queue,
                1,
            );
        }
        if t >= self.warmup && t < self.duration {
            carries.add(i, Counter::Arrived, &mut row.arrived, 1);
            self.arrived_bits += 8 * bytes as u128;
            self.group_arrived_bits[g] += 8 * bytes as u128;
            if !queued {
                carries.add(i, Counter::DroppedQueue, &mut row.dropped_queue, 1);
            }
        }
    }

    pub fn attempt(&mut self, t: Time, (i, row): (usize, &mut Row), bytes: u32) {
        self.attempts_all += 1;
        if self.on_air == 0 {
            self.busy_since = t;
        }
        self.on_air += 1;
        if self.in_window(t) {
            self.count((i, row), Counter::Attempts, |r| &mut r.attempts);
            self.attempted_bits += 8 * bytes as u128;
        }
    }

    pub fn collision_detected(&mut self, t: Time, (i, row): (usize, &mut Row), late: bool) {
        if late && self.in_window(t) {
            self.count((i, row), Counter::LateCollisions, |r| {
                &mut r.late_collisions
            });
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

    /// A collided transmission on [start, t) ended. Transmissions of one
    /// collision overlap in time, so one that started before the previous
    /// collided transmission ended belongs to the same episode.
    pub fn collision_ended(&mut self, start: Time, t: Time, (i, row): (usize, &mut Row), g: usize) {
        self.busy(t);
        let new_episode = self.episodes_all == 0 || start >= self.episode_end;
        if new_episode {
            self.episodes_all += 1;
        }
        self.episode_end = self.episode_end.max(t);
        if self.in_window(t) {
            self.count((i, row), Counter::Collisions, |r| &mut r.collisions);
            if new_episode {
                self.episodes += 1;
            }
            if self.group_last_episode[g] != self.episodes_all {
                self.group_last_episode[g] = self.episodes_all;
                self.group_episodes[g] += 1;
            }
        }
    }

    /// Burst frames that met their fate so far, and attempts made.
    pub fn burst_progress(&self) -> (u64, u64) {
        (self.completions.len() as u64, self.attempts_all)
    }

    /// A frame of a station of group `g` met its fate at `t`: when `g` is a
    /// burst group, that is one of the burst's completions (and the answer
    /// is true).
    #[inline]
    fn burst_done(&mut self, t: Time, g: usize) -> bool {
        let at = self.burst_at[g];
        if let Some(at) = at {
            self.completions.push(t.saturating_sub(at));
        }
        at.is_some()
    }

    pub fn discard(&mut self, t: Time, (i, row): (usize, &mut Row), g: usize) {
        self.burst_done(t, g);
        self.count((i, &mut *row), Counter::TotalDroppedExcessive, |r| {
            &mut r.total_dropped_excessive
        });
        if self.in_window(t) {
            self.count((i, row), Counter::DroppedExcessive, |r| {
                &mut r.dropped_excessive
            });
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
    pub fn delivered(
        &mut self,
        end: Time,
        (i, row, g): (usize, &mut Row, usize),
        bytes: u32,
        delay: Time,
        intact: bool,
    ) {
        if self.burst_done(end, g) && intact {
            self.burst_delivered += 1;
        }
        let w = self.in_window(end);
        let carries = &mut self.carries;
        if intact {
            carries.add(i, Counter::TotalDelivered, &mut row.total_delivered, 1);
        } else {
            carries.add(i, Counter::TotalLost, &mut row.total_lost, 1);
        }
        if !w {
            return;
        }
        if intact {
            carries.add(i, Counter::Delivered, &mut row.delivered, 1);
            let b = u64::from(bytes);
            carries.add(i, Counter::DeliveredBytes, &mut row.delivered_bytes, b);
            carries.add_delay(i, &mut row.delay_sum_ps, delay);
            self.delivered_bits += 8 * bytes as u128;
            self.delays[g].push(delay);
        } else {
            let n = &mut row.undetected_collisions;
            carries.add(i, Counter::UndetectedCollisions, n, 1);
        }
    }

    /// The run's results; `rows`: the stations' counters, in station
    /// order; `positions`: the stations' positions in metres.
    pub fn finish(
        mut self,
        sc: &Scenario,
        rows: Vec<Row>,
        queued: &[u64],
        positions: &[f64],
    ) -> RunResult {
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
        let carries = std::mem::take(&mut self.carries);
        // On huge pages, as the stations' table made from it (see
        // `Table::with_capacity`).
        let mut stations: Vec<StationResult> = crate::mem::huge_vec(rows.len());
        stations.extend(
            rows.into_iter()
                .zip(groups)
                .zip(positions.iter().zip(queued))
                .enumerate()
                .map(|(id, ((r, group), (&position_m, &queued_at_end)))| {
                    let w = |c, low| carries.wide(id, c, low);
                    StationResult {
                        id,
                        group,
                        position_m,
                        arrived: w(Counter::Arrived, r.arrived),
                        delivered: w(Counter::Delivered, r.delivered),
                        delivered_bits: 8 * w(Counter::DeliveredBytes, r.delivered_bytes),
                        attempts: w(Counter::Attempts, r.attempts),
                        collisions: w(Counter::Collisions, r.collisions),
                        late_collisions: w(Counter::LateCollisions, r.late_collisions),
                        undetected_collisions: w(
                            Counter::UndetectedCollisions,
                            r.undetected_collisions,
                        ),
                        dropped_excessive: w(Counter::DroppedExcessive, r.dropped_excessive),
                        dropped_queue: w(Counter::DroppedQueue, r.dropped_queue),
                        delay_sum_ps: carries.wide_delay_sum(id, r.delay_sum_ps),
                        total_arrived: w(Counter::TotalArrived, r.total_arrived),
                        total_delivered: w(Counter::TotalDelivered, r.total_delivered),
                        total_lost: w(Counter::TotalLost, r.total_lost),
                        total_dropped_excessive: w(
                            Counter::TotalDroppedExcessive,
                            r.total_dropped_excessive,
                        ),
                        total_dropped_queue: w(Counter::TotalDroppedQueue, r.total_dropped_queue),
                        queued_at_end,
                    }
                }),
        );
        let rt = sc.medium.bit_rate * sc.measured_s();
        let sum = |f: fn(&StationResult) -> u64| stations.iter().map(f).sum::<u64>() as f64;
        let mut delays: Vec<Time> = self.delays.concat();
        delays.sort_unstable();
        let (delay_mean, p50, p95, p99) = delay_figures(&delays);
        let fairness = jain(stations.iter());
        let groups = sc
            .groups
            .iter()
            .enumerate()
            .map(|(gi, g)| {
                let members = stations.iter().filter(|s| s.group == gi);
                let gsum = |f: fn(&StationResult) -> u64| members.clone().map(f).sum::<u64>();
                let delivered_bits = gsum(|s| s.delivered_bits);
                let mut d = std::mem::take(&mut self.delays[gi]);
                d.sort_unstable();
                let (delay_mean_us, delay_p50_us, delay_p95_us, delay_p99_us) = delay_figures(&d);
                GroupResult {
                    name: g.name.clone(),
                    policy: g.backoff.kind(),
                    policy_label: g.policy.clone(),
                    stations: g.count as u64,
                    offered_load: self.group_arrived_bits[gi] as f64 / rt,
                    throughput: delivered_bits as f64 / rt,
                    throughput_mbps: delivered_bits as f64 / sc.measured_s() / 1e6,
                    share: if self.delivered_bits > 0 {
                        delivered_bits as f64 / self.delivered_bits as f64
                    } else {
                        f64::NAN
                    },
                    delivered: gsum(|s| s.delivered),
                    delay_mean_us,
                    delay_p50_us,
                    delay_p95_us,
                    delay_p99_us,
                    attempts: gsum(|s| s.attempts),
                    collisions: self.group_episodes[gi],
                    collision_involvements: gsum(|s| s.collisions),
                    dropped_excessive: gsum(|s| s.dropped_excessive),
                    dropped_queue: gsum(|s| s.dropped_queue),
                    undetected_collisions: gsum(|s| s.undetected_collisions),
                    fairness: jain(members),
                }
            })
            .collect();
        let (cap_mean, cap_max) = if self.runs > 0 {
            (self.run_sum as f64 / self.runs as f64, self.run_max as f64)
        } else {
            (0.0, 0.0)
        };
        let burst = self.burst_at.iter().any(Option::is_some).then(|| {
            let frames = sc
                .groups
                .iter()
                .map(|g| match g.arrivals {
                    crate::traffic::Arrivals::Burst { frames, .. } => {
                        g.count as u64 * frames as u64
                    }
                    _ => 0,
                })
                .sum();
            let mut completions = std::mem::take(&mut self.completions);
            completions.sort_unstable();
            BurstResult {
                frames,
                delivered: self.burst_delivered,
                completions,
            }
        });
        let values = vec![
            self.delivered_bits as f64 / rt,
            self.delivered_bits as f64 / sc.measured_s() / 1e6,
            self.arrived_bits as f64 / rt,
            self.attempted_bits as f64 / rt,
            sum(|s| s.delivered),
            sum(|s| s.attempts),
            self.episodes as f64,
            sum(|s| s.collisions),
            sum(|s| s.late_collisions),
            sum(|s| s.undetected_collisions),
            sum(|s| s.dropped_excessive),
            sum(|s| s.dropped_queue),
            delay_mean,
            p50,
            p95,
            p99,
            fairness,
            cap_mean,
            cap_max,
        ];
        debug_assert_eq!(values.len(), super::METRIC_COLUMNS.len());
        RunResult {
            metrics: RunMetrics { values },
            stations,
            groups,
            burst,
            events: self.events,
            failure: None,
            busy_ps: self.busy_ps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Carries, Counter, Row};

    #[test]
    fn a_row_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Row>(), 32);
        assert_eq!(std::mem::align_of::<Row>(), 32);
    }

    #[test]
    fn counts_past_their_width_stay_exact() {
        // Against the same sums in 64 and 128 bits: increments across 2^16,
        // jumps of several times 2^16 and of 2^40 at once.
        let mut carries = Carries::new(8);
        let mut low = u16::MAX - 1;
        let mut exact = u64::from(low);
        for v in [1, 1, 1, 8_000_000, 3 * u64::from(u16::MAX), 1 << 40, 1] {
            carries.add(7, Counter::Attempts, &mut low, v);
            exact += v;
            assert_eq!(carries.wide(7, Counter::Attempts, low), exact);
        }
        assert_eq!(carries.wide(7, Counter::Delivered, 5), 5);
        assert_eq!(carries.wide(6, Counter::Attempts, 5), 5);

        // A delay sum across 2^32 many times, then across 2^64 (the middle
        // part overflowing), with delays up to the largest time.
        let mut sum = u32::MAX - 10;
        let mut exact = u128::from(sum);
        for d in [5, 6, u64::from(u32::MAX), 7 << 33, u64::MAX, u64::MAX, 1] {
            carries.add_delay(3, &mut sum, d);
            exact += u128::from(d);
            assert_eq!(carries.wide_delay_sum(3, sum), exact);
        }
        assert!(!carries.delay_highs.is_empty());
        assert_eq!(carries.wide_delay_sum(2, 9), 9);
    }
}
