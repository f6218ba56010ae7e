//! What a bus run will cost, estimated before it starts: its memory (a
//! scenario that cannot fit is refused; the core knows its own sizes) and
//! its work (sweeps start the longest points first).

use super::medium::signal_index::{BusIndex, CROWD};
use super::Scenario;
use crate::traffic::Arrivals;
use crate::units::PS_PER_S;

impl Scenario {
    /// An upper estimate of the memory a run of this scenario needs, in bytes:
    /// per station its MAC state, its result row and the frames its queue can
    /// hold (saturated: one; burst: the burst, up to the queue; other kinds:
    /// the expected arrivals over the duration plus one, up to the queue),
    /// plus the per-station result rows of every replication, which are kept
    /// until the output is written. Checked before any work is done.
    pub fn memory_estimate_bytes(&self) -> f64 {
        // Sizes of sim::Station (with its two boxed generators),
        // sim::StationResult and a queued frame, rounded up; exactness does
        // not matter, the order of magnitude does.
        const STATION_BYTES: f64 = 1024.0;
        const RESULT_BYTES: f64 = 192.0;
        const FRAME_BYTES: f64 = 24.0;
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
            per_run += g.count as f64 * (STATION_BYTES + RESULT_BYTES + queued * FRAME_BYTES);
        }
        if self.station_count() >= CROWD {
            per_run += self.station_count() as f64 * BusIndex::bytes_per_station() as f64;
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
