//! What a bus run will cost, estimated before it starts: its memory (a
//! scenario that cannot fit is refused; the core knows its own sizes) and
//! its work (sweeps start the longest points first).

use super::columns::STATION_COLUMNS;
use super::medium::signal_index::{BusIndex, CROWD};
use super::medium::Signal;
use super::metrics::{Recorder, Row, StationResult};
use super::station::{Burst, Generators, Station};
use super::topology::Topology;
use super::{index_span, Scenario, PARK_FROM};
use crate::backoff::BackoffState;
use crate::engine::Time;
use crate::results::{Cell, MemoryNeed};
use crate::traffic::Arrivals;
use crate::units::PS_PER_S;
use std::mem::size_of;

/// A run's memory estimate, and its largest parts in bytes (with the
/// counts behind them) for a refusal to name.
struct MemoryParts {
    need: MemoryNeed,
    /// The stations' state (and a crowd's bus index).
    stations: f64,
    /// The frames their queues can hold, and the most one queue holds.
    queues: f64,
    queued: f64,
    /// The delays kept for the percentiles, and the frames behind them.
    delays: f64,
    delivered: f64,
    /// A burst's completion times, and its frames.
    bursts: f64,
    burst_frames: f64,
}

impl Scenario {
    /// An upper estimate of the memory one run of this scenario needs, in
    /// bytes (see [`MemoryNeed`]; docs/performance.md has the measured
    /// peaks it bounds):
    ///
    /// - while it goes on, per station its MAC state, its random generators
    ///   (parked where the run keeps the bus index, see `Sim::new`), its
    ///   counters and what some scenarios keep beside it, two pending
    ///   events, and the frames its queue can hold (saturated: one; other
    ///   kinds: the frames that can arrive, up to the queue); the delay of
    ///   every frame delivered in the measured window (at most those that
    ///   can arrive, and those the line can carry) and a burst's completion
    ///   times; in crowds, the bus index and room for 3 signals per station
    ///   with their index keys (a burst, the worst case, holds 2.5 at its
    ///   peak);
    /// - at its end, once its state is freed, if that is more: the
    ///   counters, each station's queue length and position, its result, a
    ///   burst's completion times and the delays, sorted in a copy, while
    ///   the stations table is made;
    /// - its output kept: the stations table, 12 cells of 16 bytes a
    ///   station; and the text of its tables, at most
    ///   [`MemoryNeed::ROW_TEXT`] a row.
    pub fn memory_need(&self) -> MemoryNeed {
        self.memory_parts().need
    }

    /// What drives a run's memory most, for a refusal to name: the key to
    /// change, what it is, in a few words ("10000000 stations", "the
    /// delays of about 3.6e11 frames delivered over the 1e6 s measured"),
    /// and what to do.
    pub fn memory_driver(&self) -> (&'static str, String, &'static str) {
        let p = self.memory_parts();
        let parts = [
            (p.stations, "stations"),
            (p.queues, "queues"),
            (p.delays, "delays"),
            (p.bursts, "bursts"),
        ];
        let largest = parts
            .iter()
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map_or("stations", |p| p.1);
        let n = self.station_count();
        match largest {
            "queues" => (
                "stations",
                format!("{n} stations' queues of up to {:.3e} frames", p.queued),
                "give the groups a smaller `queue` or fewer stations",
            ),
            "delays" => (
                "duration",
                format!(
                    "the delays of up to {:.3e} frames delivered over the {} measured",
                    p.delivered,
                    crate::units::format_ps(self.duration - self.warmup)
                ),
                "simulate a shorter `duration` (or a later `warmup`) or less traffic",
            ),
            "bursts" => (
                "stations",
                format!("bursts of {:.3e} frames in all", p.burst_frames),
                "send fewer frames per burst or from fewer stations",
            ),
            _ => (
                "stations",
                format!("{n} stations"),
                "simulate fewer stations",
            ),
        }
    }

    /// The bytes this scenario itself holds once read (a sweep holds one
    /// per point): its tables, and per group its name, its explicit
    /// positions and its frame sizes.
    pub fn held_bytes(&self) -> f64 {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                size_of::<super::Group>()
                    + g.name.len()
                    + g.policy.len()
                    + g.positions
                        .as_ref()
                        .map_or(0, |p| p.len() * size_of::<f64>())
                    + g.frame.held_bytes()
            })
            .sum();
        let segments = match &self.medium.topology {
            Topology::Segments { lengths_m, .. } => lengths_m.len() * size_of::<f64>(),
            _ => 0,
        };
        (size_of::<Scenario>() + self.name.len() + groups + segments) as f64
    }

    /// The parts of [`Scenario::memory_need`]'s estimate, apart.
    fn memory_parts(&self) -> MemoryParts {
        const FRAME_BYTES: f64 = 24.0;
        const EVENT_BYTES: f64 = 32.0;
        const SIGNALS_PER_STATION: f64 = 3.0;
        let n = self.station_count();
        // Streams are parked only where the run keeps the bus index (see
        // `Sim::new`); the longest delay stands for the farthest station's,
        // which is at most that, so a run counted as parked is one.
        let parked = n >= PARK_FROM
            && !matches!(self.medium.topology, Topology::Hub { .. })
            && BusIndex::holds(
                self.max_tx_ps() + self.medium.jam_ps,
                index_span(self.max_delay_ps(), self.medium.ifg_ps),
                self.max_delay_ps(),
            );
        let on_off = self
            .groups
            .iter()
            .any(|g| matches!(g.arrivals, Arrivals::OnOff { .. }));
        let station_bytes = (size_of::<Station>()
            + Generators::bytes_per_station(parked)
            + Recorder::bytes_per_station()
            + if on_off { size_of::<Time>() } else { 0 }
            + if self.medium.frame_bursting {
                size_of::<Burst>()
            } else {
                0
            }
            + if self.groups.iter().any(|g| g.backoff.keeps_state()) {
                size_of::<BackoffState>()
            } else {
                0
            }) as f64
            + EVENT_BYTES;
        let duration_s = self.duration as f64 / PS_PER_S;
        let mut run = 0.0;
        let (mut stations, mut queues, mut most_queued) = (0.0, 0.0, 0.0_f64);
        let mut burst_frames = 0.0;
        // The frames that can arrive at a station over the run (saturated:
        // no bound; Poisson counts bounded six standard deviations out),
        // which bound what its queue holds (saturated: one) and the delays
        // kept: one for each frame that ends in the measured window,
        // whenever it arrived.
        let mut arrivals = 0.0;
        for g in &self.groups {
            let per_station = match g.arrivals {
                Arrivals::Saturated => f64::INFINITY,
                Arrivals::Burst { frames, .. } => {
                    burst_frames += g.count as f64 * f64::from(frames);
                    f64::from(frames)
                }
                Arrivals::Poisson { rate } | Arrivals::OnOff { rate, .. } => {
                    let mean = rate * duration_s;
                    mean + 6.0 * mean.sqrt() + 1.0
                }
                Arrivals::Periodic { interval, .. } => {
                    self.duration as f64 / interval.max(1) as f64 + 1.0
                }
            };
            arrivals += g.count as f64 * per_station;
            // A saturated station queues its one frame again and again.
            let queued = if per_station.is_finite() {
                per_station.min(g.queue as f64)
            } else {
                1.0
            };
            run += g.count as f64 * (station_bytes + queued * FRAME_BYTES);
            stations += g.count as f64 * station_bytes;
            queues += g.count as f64 * queued * FRAME_BYTES;
            most_queued = most_queued.max(queued);
        }
        // The delay of every frame delivered in the window is kept for the
        // percentiles, in vectors that grow by doubling (16 bytes a frame),
        // and sorted in one more copy at the end (24): at most the frames
        // that arrive, and those the line can carry, back to back.
        let shortest = self.medium.preamble_ps as f64
            + 8.0
                * self
                    .groups
                    .iter()
                    .map(|g| g.frame.min_bytes())
                    .min()
                    .unwrap_or(0) as f64
                * self.medium.bit_ps as f64;
        let delivered = arrivals.min(self.measured_s() * PS_PER_S / shortest.max(1.0));
        run += delivered * 2.0 * size_of::<Time>() as f64;
        // A burst's completion times, in a vector that grows by doubling.
        run += burst_frames * 2.0 * size_of::<Time>() as f64;
        let n = n as f64;
        if n >= CROWD as f64 {
            let index = n
                * (BusIndex::bytes_per_station() as f64
                    + SIGNALS_PER_STATION
                        * (size_of::<Signal>() + BusIndex::bytes_per_signal()) as f64);
            run += index;
            stations += index;
        }
        let output = n * (STATION_COLUMNS.len() * size_of::<Cell>()) as f64;
        let end = n
            * (size_of::<Row>()
                + Recorder::bytes_per_station()
                + 2 * size_of::<u64>()
                + size_of::<StationResult>()) as f64
            + burst_frames * 2.0 * size_of::<Time>() as f64
            + delivered * 3.0 * size_of::<Time>() as f64;
        // The tables' rows: a station's, a group's, and 21 percentiles.
        let rows = n + self.groups.len() as f64 + 21.0;
        MemoryParts {
            need: MemoryNeed {
                run: run.max(end),
                output,
                text: rows * MemoryNeed::ROW_TEXT,
            },
            stations,
            queues,
            queued: most_queued,
            delays: delivered * 3.0 * size_of::<Time>() as f64,
            delivered,
            bursts: burst_frames * 2.0 * size_of::<Time>() as f64,
            burst_frames,
        }
    }

    /// A rough relative cost of one run, for scheduling only: simulated
    /// seconds x (frames offered per second, where a saturated group offers
    /// what the line can carry, plus the number of stations).
    pub fn work_estimate(&self) -> f64 {
        let line_frames = |g: &super::Group| self.medium.bit_rate / (g.frame.mean_bits() + 160.0);
        let per_s: f64 = self
            .groups
            .iter()
            .map(|g| match g.arrivals {
                Arrivals::Saturated => line_frames(g),
                Arrivals::Poisson { rate } | Arrivals::OnOff { rate, .. } => {
                    (rate * g.count as f64).min(10.0 * line_frames(g))
                }
                Arrivals::Periodic { interval, .. } => {
                    (1e12 / interval.max(1) as f64 * g.count as f64).min(10.0 * line_frames(g))
                }
                Arrivals::Burst { frames, .. } => {
                    frames as f64 * g.count as f64 / (self.duration as f64 / 1e12)
                }
            })
            .sum();
        (self.duration as f64 / 1e12) * (per_s + self.station_count() as f64)
    }
}
