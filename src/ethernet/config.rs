//! What a bus run is given: the medium, the groups of stations, the access
//! mode and placement, typed and already validated (the scenario reader
//! builds them; nothing here parses).

use super::topology::Topology;
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

/// One half-duplex 802.3 physical layer: the values `[medium] standard`
/// sets (docs/model.md, "Standards"). Every other MAC parameter (preamble
/// 64 bits, gap 96 bits, jam 32 bits, frames of 64 to 1518 bytes) is the
/// same for all of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standard {
    pub name: &'static str,
    /// Bits per second.
    pub bit_rate: f64,
    /// slotTime in bit times.
    pub slot_bits: u32,
    /// Signal speed in the medium, m/s.
    pub speed: f64,
    /// The default length: one segment of the medium, in metres.
    pub length_m: f64,
    /// Whether frames shorter than the slot are extended to it.
    pub carrier_extension: bool,
}

/// The speed of light in vacuum, m/s.
const C: f64 = 299_792_458.0;

impl Standard {
    /// The half-duplex standards `[medium] standard` accepts.
    pub const ALL: &'static [Standard] = &[
        // Thick coax: 0.77 c, segments of 500 m.
        Standard {
            name: "10BASE5",
            bit_rate: 10e6,
            slot_bits: 512,
            speed: 0.77 * C,
            length_m: 500.0,
            carrier_extension: false,
        },
        // Thin coax: 0.65 c, segments of 185 m.
        Standard {
            name: "10BASE2",
            bit_rate: 10e6,
            slot_bits: 512,
            speed: 0.65 * C,
            length_m: 185.0,
            carrier_extension: false,
        },
        // Twisted pair: 0.585 c, links of 100 m.
        Standard {
            name: "10BASE-T",
            bit_rate: 10e6,
            slot_bits: 512,
            speed: 0.585 * C,
            length_m: 100.0,
            carrier_extension: false,
        },
        // Category 5 twisted pair: 5.56 ns/m, links of 100 m.
        Standard {
            name: "100BASE-TX",
            bit_rate: 100e6,
            slot_bits: 512,
            speed: 1.0 / 5.56e-9,
            length_m: 100.0,
            carrier_extension: false,
        },
        Standard {
            name: "1000BASE-T",
            bit_rate: 1e9,
            slot_bits: 4096,
            speed: 1.0 / 5.56e-9,
            length_m: 100.0,
            carrier_extension: true,
        },
    ];

    pub fn by_name(name: &str) -> Option<&'static Standard> {
        Standard::ALL.iter().find(|s| s.name == name)
    }
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
    /// The smallest and largest MAC frames 802.3 allows on this medium
    /// (checked unless `nonstandard_frames`).
    pub min_frame_bytes: u32,
    pub max_frame_bytes: u32,
    /// Carrier extension (1 Gb/s): a frame shorter than the slot is followed
    /// by non-data symbols up to a slot after the end of its preamble.
    pub carrier_extension: bool,
    /// Frame bursting (1 Gb/s): after a successful frame a station with
    /// another frame queued keeps the carrier up through the gap (filled
    /// with extension symbols) and sends it, while its burst timer, started
    /// at the start of the burst's first transmission, is below
    /// `burst_limit_ps` when the previous transmission ends.
    pub frame_bursting: bool,
    /// burstLimit: 65 536 bit times by default.
    pub burst_limit_ps: Time,
    pub access: Access,
    pub placement: Placement,
    /// How the stations are wired (a bus of `length_m` unless told).
    pub topology: Topology,
    /// The standard `[medium] standard` named, whose limits on segments
    /// and path delays the warnings check.
    pub standard: Option<&'static Standard>,
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
    /// The policy as the scenario writes it, in short: its kind and the
    /// parameters written ("beb backoff_limit=6"), for groups.csv.
    pub policy: String,
    /// FIFO capacity in frames.
    pub queue: usize,
    /// Explicit positions in metres, one per station.
    pub positions: Option<Vec<f64>>,
    /// Fixed destination station (global index), else uniform among the others.
    pub destination: Option<usize>,
    /// On a hub: this group's cable, overriding the topology's.
    pub cable_m: Option<f64>,
    /// With segments: the segment (from 0) this group is on.
    pub segment: usize,
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

impl Medium {
    /// How long a frame of `bytes` keeps the carrier up after its preamble:
    /// the frame, extended to the slot when carrier extension is on.
    pub fn frame_on_wire_ps(&self, bytes: u32) -> Time {
        let frame = 8 * bytes as Time * self.bit_ps;
        if self.carrier_extension {
            frame.max(self.slot_ps)
        } else {
            frame
        }
    }
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

    /// The longest propagation time between two points stations can take:
    /// end to end of a bus or of a chain of segments (repeater delays
    /// included), or the two longest cables through a hub.
    pub fn max_delay_ps(&self) -> Time {
        let m = &self.medium;
        let t = |metres: f64| (metres / m.speed * PS_PER_S).round() as Time;
        match &m.topology {
            Topology::Bus => t(m.length_m),
            Topology::Segments {
                lengths_m,
                repeater_delay_ps,
            } => t(lengths_m.iter().sum())
                .saturating_add((lengths_m.len() as Time - 1) * repeater_delay_ps),
            Topology::Hub {
                cable_m,
                repeater_delay_ps,
            } => {
                let mut cables: Vec<Time> = self
                    .groups
                    .iter()
                    .flat_map(|g| {
                        std::iter::repeat_n(t(g.cable_m.unwrap_or(*cable_m)), g.count.min(2))
                    })
                    .collect();
                cables.sort_unstable_by(|a, b| b.cmp(a));
                match cables[..] {
                    [a, b, ..] => a.saturating_add(*repeater_delay_ps).saturating_add(b),
                    _ => 0,
                }
            }
        }
    }

    /// The longest transmission: preamble plus the largest frame (extended),
    /// and with frame bursting the filled gap before it.
    pub fn max_tx_ps(&self) -> Time {
        let max_bytes = self
            .groups
            .iter()
            .map(|g| g.frame.max_bytes())
            .max()
            .unwrap_or(0);
        let m = &self.medium;
        // A later frame of a burst carries its filled gap before its preamble.
        let gap = if m.frame_bursting { m.ifg_ps } else { 0 };
        gap + m.preamble_ps + m.frame_on_wire_ps(max_bytes)
    }
}
