//! The event trace: every MAC event of a run as time-ordered rows, plus the
//! rows the MAC does not report itself but a student needs to see: a signal
//! reaching (and leaving) each station, and the end of each backoff. Rows are
//! streamed: only those still in the future of the simulation clock are held,
//! so a big scenario costs no memory beyond one propagation window.

use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::ethernet::{self, MacEvent, Observer};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happened, at one station.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceKind {
    /// A frame joins the queue (`queued` false: refused, queue full).
    Arrival { bytes: u32, queued: bool },
    /// The station has a frame but must wait: for carrier to drop (`until`
    /// None) or for the interframe gap to run out at `until`.
    Defer { until: Option<Time> },
    /// Preamble and frame go on the wire until `end` unless a collision cuts it.
    TxStart {
        dst: u32,
        bytes: u32,
        attempt: u32,
        end: Time,
        /// Carrier extension: the frame's last bit leaves at this time,
        /// extension symbols follow until `end`.
        extension_from: Option<Time>,
        /// A later frame of a burst: its transmission starts with the
        /// filled gap (the `BurstGap` row at the same instant).
        in_burst: bool,
    },
    /// Frame bursting: the gap before the burst's next frame, filled with
    /// extension symbols until `end` (the carrier stays up).
    BurstGap { end: Time },
    /// The first bit of station `from`'s transmission reaches this station.
    SignalArrives { from: u32 },
    /// The last bit of station `from`'s transmission passes this station.
    SignalEnds { from: u32 },
    /// A foreign signal reached this transmitting station.
    CollisionDetected { late: bool },
    /// The 32-bit jam, until `end`.
    Jam { end: Time },
    /// The transmission ended without a detected collision.
    TxSuccess,
    /// Backoff after the `n`-th collision: `r` slots from a window of 2^k.
    Backoff {
        n: u32,
        k: Option<u32>,
        r: Option<u64>,
        delay: Time,
    },
    /// The backoff is over: the station contends again.
    BackoffEnd,
    /// The frame was discarded after `attempts` collisions.
    Discard { attempts: u32 },
    /// A frame from `from` ended at this station, intact or corrupted.
    Delivered {
        from: u32,
        intact: bool,
        delay: Time,
    },
}

impl TraceKind {
    /// The event's short name, as in the `event` column.
    pub fn name(&self) -> &'static str {
        match self {
            TraceKind::Arrival { queued: true, .. } => "arrival",
            TraceKind::Arrival { queued: false, .. } => "queue-full",
            TraceKind::Defer { .. } => "defer",
            TraceKind::TxStart { .. } => "tx-start",
            TraceKind::BurstGap { .. } => "burst-gap",
            TraceKind::SignalArrives { .. } => "signal-arrives",
            TraceKind::SignalEnds { .. } => "signal-ends",
            TraceKind::CollisionDetected { late: false } => "collision",
            TraceKind::CollisionDetected { late: true } => "late-collision",
            TraceKind::Jam { .. } => "jam",
            TraceKind::TxSuccess => "tx-end",
            TraceKind::Backoff { .. } => "backoff",
            TraceKind::BackoffEnd => "backoff-end",
            TraceKind::Discard { .. } => "discard",
            TraceKind::Delivered { intact: true, .. } => "delivered",
            TraceKind::Delivered { intact: false, .. } => "corrupted",
        }
    }
}

/// One row of the trace: at `t`, at `station`, `kind` happened.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRow {
    pub t: Time,
    pub station: u32,
    pub kind: TraceKind,
}

/// The structured columns of the csv and jsonl formats, in order.
pub const TRACE_COLUMNS: &[&str] = &[
    "time_us", "station", "event", "peer", "bytes", "attempt", "n", "k", "r", "end_us", "delay_us",
];

impl TraceRow {
    /// The row's values for [`TRACE_COLUMNS`] after `event`: `peer` is the
    /// destination of a transmission or the sender of a signal or frame;
    /// `end_us` when a transmission, jam, gap or backoff ends.
    pub fn fields(&self) -> [Option<String>; 8] {
        let mut f: [Option<String>; 8] = Default::default();
        let [peer, bytes, attempt, n, k, r, end, delay] = &mut f;
        match &self.kind {
            TraceKind::Arrival { bytes: b, .. } => *bytes = Some(b.to_string()),
            TraceKind::Defer { until } => *end = until.map(us),
            TraceKind::TxStart {
                dst,
                bytes: b,
                attempt: a,
                end: e,
                ..
            } => {
                *peer = Some(dst.to_string());
                *bytes = Some(b.to_string());
                *attempt = Some(a.to_string());
                *end = Some(us(*e));
            }
            TraceKind::SignalArrives { from } | TraceKind::SignalEnds { from } => {
                *peer = Some(from.to_string())
            }
            TraceKind::Jam { end: e } | TraceKind::BurstGap { end: e } => *end = Some(us(*e)),
            TraceKind::Backoff {
                n: nn,
                k: kk,
                r: rr,
                delay: d,
            } => {
                *n = Some(nn.to_string());
                *k = kk.map(|x| x.to_string());
                *r = rr.map(|x| x.to_string());
                *end = Some(us(self.t + d));
                *delay = Some(us(*d));
            }
            TraceKind::Discard { attempts } => *n = Some(attempts.to_string()),
            TraceKind::Delivered { from, delay: d, .. } => {
                *peer = Some(from.to_string());
                *delay = Some(us(*d));
            }
            TraceKind::CollisionDetected { .. } | TraceKind::TxSuccess | TraceKind::BackoffEnd => {}
        }
        f
    }
}

/// Which rows a trace keeps.
#[derive(Clone, Debug)]
pub struct TraceFilter {
    /// Rows at or after this time are dropped (and the run stops there).
    pub until: Time,
    /// Only these stations' rows, or all when None.
    pub stations: Option<Vec<u32>>,
    /// Derive signal-arrival rows (costly with many stations: one row per
    /// station per transmission).
    pub signals: bool,
}

impl TraceFilter {
    /// Signal rows for a scenario: on when stations are chosen or when there
    /// are few enough stations for one row each to stay readable.
    pub fn new(sc: &Scenario, until: Time, stations: Option<Vec<u32>>) -> Self {
        let signals = stations.is_some() || sc.station_count() <= MAX_SIGNAL_STATIONS;
        TraceFilter {
            until,
            stations,
            signals,
        }
    }
}

/// With more stations than this and no `--stations`, the trace leaves out
/// the per-station signal rows (they grow as stations x transmissions).
pub const MAX_SIGNAL_STATIONS: usize = 16;

/// An observer that turns MAC events into ordered trace rows for `sink`.
pub struct Tracer<F: FnMut(&TraceRow)> {
    sink: F,
    filter: TraceFilter,
    /// Propagation time from the bus's origin, per station (as the simulator has it).
    paths: ethernet::Paths,
    /// Stations that get signal rows.
    listeners: Vec<u32>,
    selected: Vec<bool>,
    pending: BinaryHeap<Reverse<(Time, u64, usize)>>,
    rows: Vec<Option<TraceRow>>,
    free: Vec<usize>,
    seq: u64,
    /// The simulation clock: no row earlier than this can still come.
    now: Time,
    /// A frame's preamble, and one byte, on this medium.
    preamble: Time,
    byte: Time,
    /// Per station, when it last filled a burst gap.
    gap_at: Vec<Time>,
}

impl<F: FnMut(&TraceRow)> Tracer<F> {
    pub fn new(sc: &Scenario, run_seed: u64, filter: TraceFilter, sink: F) -> Self {
        let n = sc.station_count();
        let paths = ethernet::paths(sc, run_seed);
        let mut selected = vec![filter.stations.is_none(); n];
        if let Some(s) = &filter.stations {
            for &i in s {
                if let Some(b) = selected.get_mut(i as usize) {
                    *b = true;
                }
            }
        }
        let listeners = if filter.signals {
            (0..n as u32).filter(|&i| selected[i as usize]).collect()
        } else {
            Vec::new()
        };
        Tracer {
            sink,
            filter,
            paths,
            listeners,
            selected,
            pending: BinaryHeap::new(),
            rows: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now: 0,
            preamble: sc.medium.preamble_ps,
            byte: 8 * sc.medium.bit_ps,
            gap_at: vec![Time::MAX; n],
        }
    }

    fn push(&mut self, t: Time, station: u32, kind: TraceKind) {
        if t >= self.filter.until || !self.selected[station as usize] {
            return;
        }
        let row = TraceRow { t, station, kind };
        let slot = match self.free.pop() {
            Some(k) => {
                self.rows[k] = Some(row);
                k
            }
            None => {
                self.rows.push(Some(row));
                self.rows.len() - 1
            }
        };
        self.pending.push(Reverse((t, self.seq, slot)));
        self.seq += 1;
    }

    /// Hands over every row strictly before `t`.
    fn flush_before(&mut self, t: Time) {
        while let Some(&Reverse((rt, _, slot))) = self.pending.peek() {
            if rt >= t {
                break;
            }
            self.pending.pop();
            if let Some(row) = self.rows[slot].take() {
                (self.sink)(&row);
            }
            self.free.push(slot);
        }
    }

    /// Hands over every row still held; call after the run.
    pub fn finish(mut self) -> F {
        self.flush_before(Time::MAX);
        self.sink
    }

    fn signal_rows(&mut self, from: u32, t: Time, end: bool) {
        for k in 0..self.listeners.len() {
            let j = self.listeners[k];
            if j == from {
                continue;
            }
            let at = t + self.paths.delay(from as usize, j as usize);
            let kind = if end {
                TraceKind::SignalEnds { from }
            } else {
                TraceKind::SignalArrives { from }
            };
            self.push(at, j, kind);
        }
    }
}

impl<F: FnMut(&TraceRow)> Observer for Tracer<F> {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        // Every event is reported at the simulation clock; rows it implies
        // (a jam after the preamble, signal arrivals) may lie ahead.
        if t > self.now {
            self.now = t;
            self.flush_before(t);
        }
        // The event itself first, then the rows it implies, so that rows at
        // equal times read cause before effect.
        match *ev {
            MacEvent::Arrival { bytes, queued } => {
                self.push(t, station, TraceKind::Arrival { bytes, queued })
            }
            MacEvent::Defer { until } => self.push(t, station, TraceKind::Defer { until }),
            MacEvent::TxStart {
                dst,
                bytes,
                attempt,
                end,
            } => {
                let in_burst = self.gap_at[station as usize] == t;
                let data_end = t + self.preamble + bytes as Time * self.byte;
                let kind = TraceKind::TxStart {
                    dst,
                    bytes,
                    attempt,
                    end,
                    extension_from: (!in_burst && end > data_end).then_some(data_end),
                    in_burst,
                };
                self.push(t, station, kind);
                self.signal_rows(station, t, false);
            }
            MacEvent::BurstGap { until } => {
                self.gap_at[station as usize] = t;
                self.push(t, station, TraceKind::BurstGap { end: until })
            }
            MacEvent::CollisionDetected { late } => {
                self.push(t, station, TraceKind::CollisionDetected { late })
            }
            MacEvent::Jam { start, end } => {
                // Reported at detection; the jam itself starts after the
                // preamble when detection fell inside it.
                self.push(start, station, TraceKind::Jam { end });
                self.signal_rows(station, end, true);
            }
            MacEvent::TxSuccess => {
                self.push(t, station, TraceKind::TxSuccess);
                self.signal_rows(station, t, true);
            }
            MacEvent::Backoff { n, k, r, delay } => {
                self.push(t, station, TraceKind::Backoff { n, k, r, delay });
                self.push(t + delay, station, TraceKind::BackoffEnd);
            }
            MacEvent::Discard { attempts } => {
                self.push(t, station, TraceKind::Discard { attempts })
            }
            MacEvent::Delivered { dst, intact, delay } => self.push(
                t,
                dst,
                TraceKind::Delivered {
                    from: station,
                    intact,
                    delay,
                },
            ),
        }
    }
}

/// A copy of `sc` that stops at `until`: the run is the same as the full
/// one up to there (events are processed in time order), and no further.
pub fn truncated(sc: &Scenario, until: Time) -> Scenario {
    let mut sc = sc.clone();
    if until < sc.duration {
        sc.duration = until.max(1);
        // Statistics are not what a trace is for; keep the window non-empty.
        sc.warmup = 0;
    }
    sc
}

/// Runs `sc` up to `filter.until` and returns the rows in time order.
pub fn collect(sc: &Scenario, run_seed: u64, filter: TraceFilter) -> Vec<TraceRow> {
    let short = truncated(sc, filter.until);
    let mut rows = Vec::new();
    let mut tracer = Tracer::new(&short, run_seed, filter, |r: &TraceRow| {
        rows.push(r.clone())
    });
    ethernet::run_observed(&short, run_seed, &mut tracer);
    let _ = tracer.finish();
    rows
}

/// The run seed of a single-run command: replication 0 of the scenario, as
/// `csmacd run` uses it.
pub fn run_seed(sc: &Scenario) -> u64 {
    let mut one = sc.clone();
    one.replications = one.replications.max(1);
    crate::sweep::Point::new(vec![], crate::world::Scenario::Ethernet(one)).replication_seeds()[0]
}

/// The most slots a default window looks into: at 10 Mb/s, about the 2 ms
/// every page once showed.
pub const DEFAULT_WINDOW_SLOTS: u64 = 40;

/// The window a picture or page shows when none is asked: one slot after
/// every station that sent in it has had its first frame decided (sent
/// whole or discarded), rounded up to a whole µs; when that takes longer
/// than [`DEFAULT_WINDOW_SLOTS`] slots, that many. Never past the run.
pub fn default_window(sc: &Scenario) -> Time {
    let rows = collect(
        sc,
        run_seed(sc),
        TraceFilter {
            until: window_limit(sc),
            stations: None,
            signals: false,
        },
    );
    default_window_of(sc, &rows)
}

/// The most a default window shows: [`DEFAULT_WINDOW_SLOTS`] slots, never
/// past the run.
pub fn window_limit(sc: &Scenario) -> Time {
    (DEFAULT_WINDOW_SLOTS * sc.medium.slot_ps).min(sc.duration)
}

/// [`default_window`] of a run whose trace `rows` reach at least
/// [`window_limit`].
pub fn default_window_of(sc: &Scenario, rows: &[TraceRow]) -> Time {
    let limit = window_limit(sc);
    first_frames_decided(sc, rows)
        .map(|t| (t + sc.medium.slot_ps).div_ceil(1_000_000) * 1_000_000)
        .map_or(limit, |t| t.min(limit))
        .max(1)
}

/// When every station that sent in `rows` had its first frame decided.
pub fn first_frames_decided(sc: &Scenario, rows: &[TraceRow]) -> Option<Time> {
    let n = sc.station_count();
    let mut decided: Vec<Option<Time>> = vec![None; n];
    let mut sent = vec![false; n];
    for r in rows {
        let s = r.station as usize;
        match r.kind {
            TraceKind::TxStart { .. } => sent[s] = true,
            TraceKind::TxSuccess | TraceKind::Discard { .. } if decided[s].is_none() => {
                decided[s] = Some(r.t)
            }
            _ => {}
        }
    }
    if !sent.iter().any(|&x| x) {
        return None;
    }
    (0..n)
        .filter(|&s| sent[s])
        .try_fold(0, |acc: Time, s| decided[s].map(|d| acc.max(d)))
}

/// Picoseconds as exact microseconds: "12.5", "57.6", "0.0001".
pub fn us(ps: Time) -> String {
    let whole = ps / 1_000_000;
    let frac = ps % 1_000_000;
    if frac == 0 {
        return format!("{whole}");
    }
    let f = format!("{frac:06}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(us(0), "0");
        assert_eq!(us(12_500_000), "12.5");
        assert_eq!(us(57_600_000), "57.6");
        assert_eq!(us(1), "0.000001");
        assert_eq!(us(51_200_000_000), "51200");
    }
}
