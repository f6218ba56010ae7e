//! How the stations are wired: one cable (the bus), a star of cables to one
//! hub, or segments joined in a chain by repeaters. The medium asks this
//! room one question, the delay between two stations; the rest of the run
//! does not know which wiring it has.
//!
//! A chain of segments is a line with a repeater's delay at each joint, so
//! it keeps the bus's `|a - b|` delays (and its index). A hub is not a line:
//! every path crosses it, `cable_i + repeater + cable_j`, so a hub run
//! answers every question by scanning the live signals. 802.3 limits a
//! collision domain to 1024 stations, so that is O(stations) per signal at
//! worst (docs/model.md, "Hubs and repeaters").

use super::{positions, Scenario};
use crate::engine::Time;
use crate::units::PS_PER_S;

/// How stations are wired (`[medium] topology`).
#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    /// One cable, `[medium] length` long, stations along it.
    Bus,
    /// Each station on its own cable to one hub, which repeats every signal
    /// to all other ports after `repeater_delay_ps` and, when two ports are
    /// active at once, jams all ports (collision enforcement).
    Hub {
        /// The cable of stations whose group gives none, in metres.
        cable_m: f64,
        repeater_delay_ps: Time,
    },
    /// Segments joined end to end by repeaters: segment k's far end is
    /// wired to segment k + 1's near end through a repeater.
    Segments {
        lengths_m: Vec<f64>,
        repeater_delay_ps: Time,
    },
}

impl Topology {
    /// The names `topology.kind` accepts.
    pub const KINDS: &'static [&'static str] = &["bus", "hub", "segments"];

    pub fn kind(&self) -> &'static str {
        match self {
            Topology::Bus => "bus",
            Topology::Hub { .. } => "hub",
            Topology::Segments { .. } => "segments",
        }
    }
}

/// The propagation times of one run: per station a time, and the rule that
/// makes a delay of two of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Paths {
    /// On a bus or a chain of segments, the propagation time from the
    /// origin of the line (repeater delays included); on a hub, the time
    /// along the station's own cable to the hub.
    pub props: Vec<Time>,
    /// The hub's delay when the stations hang on a hub.
    pub hub: Option<Time>,
}

/// The delay from a station at `a` to another at `b` (see [`Paths::props`]).
/// A station's own signal is at its own position: `same` gives zero.
#[inline]
pub(super) fn between(hub: Option<Time>, a: Time, b: Time, same: bool) -> Time {
    match hub {
        None => a.abs_diff(b),
        Some(_) if same => 0,
        Some(r) => a + r + b,
    }
}

impl Paths {
    /// The delay from station `i` to station `j`.
    pub fn delay(&self, i: usize, j: usize) -> Time {
        between(self.hub, self.props[i], self.props[j], i == j)
    }

    /// The largest delay between two stations (zero for one station).
    pub fn max_delay(&self) -> Time {
        let lo = self.props.iter().copied().min().unwrap_or(0);
        let hi = self.props.iter().copied().max().unwrap_or(0);
        match self.hub {
            None => hi - lo,
            Some(_) if self.props.len() < 2 => 0,
            Some(r) => {
                // The two longest cables.
                let mut top = [0, 0];
                for &p in &self.props {
                    if p > top[0] {
                        top = [p, top[0]];
                    } else if p > top[1] {
                        top[1] = p;
                    }
                }
                top[0] + r + top[1]
            }
        }
    }

    /// The pair of stations furthest apart in time, and their delay.
    pub fn worst_pair(&self) -> Option<(usize, usize, Time)> {
        let n = self.props.len();
        if n < 2 {
            return None;
        }
        let order = |rev: bool| {
            let mut ix: Vec<usize> = (0..n).collect();
            ix.sort_by_key(|&i| (self.props[i], i));
            if rev {
                ix.reverse();
            }
            ix
        };
        let (i, j) = match self.hub {
            None => (order(false)[0], order(true)[0]),
            Some(_) => {
                let o = order(true);
                (o[1].min(o[0]), o[1].max(o[0]))
            }
        };
        let (i, j) = (i.min(j), i.max(j));
        Some((i, j, self.delay(i, j)))
    }
}

/// The propagation times of the stations as `sc` wires them for this run.
pub fn paths(sc: &Scenario, run_seed: u64) -> Paths {
    let pos = positions(sc, run_seed);
    let m = &sc.medium;
    let t = |metres: f64| (metres / m.speed * PS_PER_S).round() as Time;
    match &m.topology {
        Topology::Bus => Paths {
            props: pos.iter().map(|&x| t(x)).collect(),
            hub: None,
        },
        Topology::Hub {
            repeater_delay_ps, ..
        } => Paths {
            props: pos.iter().map(|&x| t(x)).collect(),
            hub: Some(*repeater_delay_ps),
        },
        Topology::Segments {
            repeater_delay_ps, ..
        } => {
            // Positions run along the chain; each repeater before a
            // station's segment adds its delay.
            let mut props = Vec::with_capacity(pos.len());
            for g in &sc.groups {
                for _ in 0..g.count {
                    let k = props.len();
                    props.push(t(pos[k]) + g.segment as Time * repeater_delay_ps);
                }
            }
            Paths { props, hub: None }
        }
    }
}
