//! What a bus run is given: the medium, the groups of stations, the access
//! mode and placement, typed and already validated (the scenario reader
//! builds them; nothing here parses).

use crate::backoff::BackoffSpec;
use crate::engine::Time;
use crate::traffic::{Arrivals, FrameLaw};
use crate::units::PS_PER_S;

/// How stations reach the medium (`[medium] access`). docs/policies.md and
/// ARCHITECTURE.md "Model choices" give the exact rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Access {
    /// 1-persistent CSMA/CD, as 802.3.
    CsmaCd,
    /// Non-persistent CSMA/CD: a station that senses carrier does not wait
    /// for the medium, it backs off and senses again later.
    CsmaCdNonPersistent,
    /// p-persistent CSMA/CD: when the medium is idle (after the gap), send with
    /// probability `p`, else wait a slot and sense again.
    CsmaCdPPersistent { p: f64 },
    /// 1-persistent carrier sense without collision detection: collided frames
    /// run to their end.
    Csma,
    /// No carrier sense, no collision detection: send at once.
    Aloha,
    /// As ALOHA, but transmissions start on slot boundaries (multiples of `slot`).
    SlottedAloha,
}

impl Access {
    /// The names `[medium] access` accepts.
    pub const NAMES: &'static [&'static str] = &[
        "csma-cd",
        "csma-cd-nonpersistent",
        "csma-cd-p-persistent",
        "csma",
        "aloha",
        "slotted-aloha",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Access::CsmaCd => "csma-cd",
            Access::CsmaCdNonPersistent => "csma-cd-nonpersistent",
            Access::CsmaCdPPersistent { .. } => "csma-cd-p-persistent",
            Access::Csma => "csma",
            Access::Aloha => "aloha",
            Access::SlottedAloha => "slotted-aloha",
        }
    }

    /// Whether a transmitting station detects collisions and jams.
    pub fn detects_collisions(&self) -> bool {
        matches!(
            self,
            Access::CsmaCd | Access::CsmaCdNonPersistent | Access::CsmaCdPPersistent { .. }
        )
    }

    /// Whether a station senses carrier before sending.
    pub fn senses_carrier(&self) -> bool {
        !matches!(self, Access::Aloha | Access::SlottedAloha)
    }
}

/// Where stations sit when no group gives positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Placement {
    /// Evenly spread from 0 to the bus length, both ends included, in
    /// station order: each group in its own stretch of the bus.
    Grouped,
    /// Evenly spread as `Grouped`, but the groups alternate along the bus
    /// in proportion to their sizes, so that no group owns the middle (which
    /// hears everyone first) or the ends.
    Interleaved,
    /// Uniform at random along the bus, drawn per replication.
    Random,
}

/// The shared bus and the MAC timing constants.
#[derive(Clone, Debug, PartialEq)]
pub struct Medium {
    pub bit_rate: f64,
    /// One bit time in picoseconds.
    pub bit_ps: Time,
    pub length_m: f64,
    pub speed: f64,
    pub slot_ps: Time,
    pub preamble_ps: Time,
    pub ifg_ps: Time,
    pub jam_ps: Time,
    pub access: Access,
    pub placement: Placement,
}

/// One group of identical stations.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Unique within the scenario; names the group in groups.csv.
    pub name: String,
    pub count: usize,
    pub arrivals: Arrivals,
    pub frame: FrameLaw,
    pub backoff: BackoffSpec,
    /// FIFO capacity in frames.
    pub queue: usize,
    /// Explicit positions in metres, one per station.
    pub positions: Option<Vec<f64>>,
    /// Fixed destination station (global index), else uniform among the others.
    pub destination: Option<usize>,
}

/// A checked scenario, ready to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: Time,
    pub warmup: Time,
    /// The replications every point runs at least.
    pub replications: u32,
    /// Replications added until this precision is reached (`precision`).
    pub precision: Option<crate::stats::Precision>,
    pub medium: Medium,
    pub groups: Vec<Group>,
    pub nonstandard_frames: bool,
}

impl Scenario {
    /// The most replications a point may run: `replications`, or with a
    /// target precision its `max_replications`.
    pub fn max_replications(&self) -> u32 {
        self.precision
            .as_ref()
            .map_or(self.replications, |p| p.max.max(self.replications))
    }
    pub fn station_count(&self) -> usize {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// The measured interval T = duration - warmup, in seconds.
    pub fn measured_s(&self) -> f64 {
        (self.duration - self.warmup) as f64 / PS_PER_S
    }

    /// Propagation time from one end of the bus to the other.
    pub fn max_delay_ps(&self) -> Time {
        (self.medium.length_m / self.medium.speed * PS_PER_S).round() as Time
    }

    /// The longest transmission: preamble plus the largest frame.
    pub fn max_tx_ps(&self) -> Time {
        let max_bytes = self
            .groups
            .iter()
            .map(|g| g.frame.max_bytes())
            .max()
            .unwrap_or(0);
        self.medium.preamble_ps + 8 * max_bytes as Time * self.medium.bit_ps
    }
}
