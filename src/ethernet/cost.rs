//! What a bus run will cost, estimated before it starts: its memory (a
//! scenario that cannot fit is refused; the core knows its own sizes) and
//! its work (sweeps start the longest points first).

use super::medium::signal_index::{BusIndex, CROWD};
use super::medium::Signal;
use super::metrics::Recorder;
use super::station::{Burst, Generators, Station};
use super::topology::Topology;
use super::{Scenario, PARK_FROM};
use crate::backoff::BackoffState;
use crate::engine::Time;
use crate::traffic::Arrivals;
use crate::units::PS_PER_S;
use std::mem::size_of;

impl Scenario {
    /// An upper estimate of the memory a run of this scenario needs, in bytes:
    /// per station its MAC state, its random generators, its counters, its
    /// result row and the frames its queue can hold (saturated: one; burst: the burst, up to the queue; other kinds:
    /// the expected arrivals over the duration plus one, up to the queue),
    /// plus, in crowds, the bus index and the signals of the first waves,
    /// plus the per-station result rows of every replication, which are kept
    /// until the output is written. Checked before any work is done.
    pub fn memory_estimate_bytes(&self) -> f64 {
        // Sizes of sim::StationResult and a queued frame, rounded up;
        // exactness does not matter, the order of magnitude does.
        const RESULT_BYTES: f64 = 192.0;
        const FRAME_BYTES: f64 = 24.0;
        // A station's state, its generators (parked in crowds on a line,
        // see Sim::new), its counters, and what on-off traffic, frame
        // bursting and the policies with a memory keep beside it.
        let n = self.station_count();
        let parked = n >= PARK_FROM && !matches!(self.medium.topology, Topology::Hub { .. });
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
            }) as f64;
        let duration_s = self.duration as f64 / PS_PER_S;
        let mut per_run = 0.0;
        for g in &self.groups {
            let queued = match g.arrivals {
                Arrivals::Saturated => 1.0,
                Arrivals::Burst { frames, .. } => frames as f64,
                Arrivals::Poisson { rate } | Arrivals::OnOff { rate, .. } => {
                    rate * duration_s + 1.0
                }
                Arrivals::Periodic { interval, .. } => {
                    self.duration as f64 / interval.max(1) as f64 + 1.0
                }
            }
            .min(g.queue as f64);
            per_run += g.count as f64 * (station_bytes + RESULT_BYTES + queued * FRAME_BYTES);
        }
        if n >= CROWD {
            // The bus index, and the signals of a crowd's first waves with
            // their index keys: at the 10^6 burst's peak the signal list
            // holds 2.5 signals per station (80 bytes) and the index's
            // lists their keys (16 bytes each, in lists that grow by
            // doubling); counted twice over.
            const SIGNALS_PER_STATION: f64 = 5.0;
            per_run += n as f64
                * (BusIndex::bytes_per_station() as f64
                    + SIGNALS_PER_STATION
                        * (size_of::<Signal>() + BusIndex::bytes_per_signal()) as f64);
        }
        let results = self.max_replications() as f64 * self.station_count() as f64 * RESULT_BYTES;
        per_run + results
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
