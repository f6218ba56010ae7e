//! 802.3's limits on a collision domain, checked before a run on any
//! wiring: the worst round trip between two stations (cables, speed and
//! repeater delays) against the slot, the length of each segment or cable,
//! and the standards' path rules: the 5-4-3 rule at 10 Mb/s (clause 13),
//! the path delay value at 100 Mb/s (clause 29) and at 1 Gb/s (clause 42).
//! Warnings, never errors: lessons need broken networks.

use super::checks::{metres, us};
use super::{paths, Scenario, Topology};
use crate::advice::Warning;

/// A standard's path delay budget: the round trip of the two stations'
/// interfaces (DTE pair) and the largest path delay value, in bit times.
struct PathBudget {
    clause: &'static str,
    dte_pair_bits: f64,
    max_bits: f64,
}

fn path_budget(standard: &str) -> Option<PathBudget> {
    match standard {
        "100BASE-TX" => Some(PathBudget {
            clause: "clause 29, Table 29-3",
            dte_pair_bits: 100.0,
            max_bits: 512.0,
        }),
        "1000BASE-T" => Some(PathBudget {
            clause: "clause 42",
            dte_pair_bits: 864.0,
            max_bits: 4096.0,
        }),
        _ => None,
    }
}

impl Scenario {
    /// The worst pair of stations through a hub or a chain of segments:
    /// their round trip plus the jam against the slot.
    pub(super) fn wired_round_trip(&self) -> Option<Warning> {
        let m = &self.medium;
        let p = paths(self, 0);
        let (i, j, d) = p.worst_pair()?;
        let rtt = 2 * d;
        if rtt + m.jam_ps <= m.slot_ps {
            return None;
        }
        let what = self.late_verdict(rtt);
        Some(Warning {
            kind: "late-collisions",
            key: "medium.topology".into(),
            message: format!(
                "stations {i} and {j} are {} ({}) apart {}: their round trip ({}, {}) plus the \
                 jam ({}) is {} ({}), longer than the slot ({}, {}): {what}; shorten the cables, \
                 use fewer repeaters or give a longer slot",
                us(d),
                self.bits(d),
                self.path_words(i, j),
                us(rtt),
                self.bits(rtt),
                self.bits(m.jam_ps),
                us(rtt + m.jam_ps),
                self.bits(rtt + m.jam_ps),
                us(m.slot_ps),
                self.bits(m.slot_ps),
            ),
        })
    }

    /// "through cables of 100 m and 90 m and the hub (46 bit times)".
    fn path_words(&self, i: usize, j: usize) -> String {
        let pos = super::positions(self, 0);
        match &self.medium.topology {
            Topology::Bus => format!(
                "at {} m and {} m on the bus",
                metres(pos[i]),
                metres(pos[j])
            ),
            Topology::Hub {
                repeater_delay_ps, ..
            } => format!(
                "through cables of {} m and {} m and the hub ({})",
                metres(pos[i]),
                metres(pos[j]),
                self.bits(*repeater_delay_ps)
            ),
            Topology::Segments {
                repeater_delay_ps, ..
            } => {
                let (a, b) = (self.segment_of(i), self.segment_of(j));
                let n = a.abs_diff(b);
                format!(
                    "on segments {} and {}, {} m of cable and {n} repeater{} ({} each) between them",
                    a + 1,
                    b + 1,
                    metres((pos[i] - pos[j]).abs()),
                    if n == 1 { "" } else { "s" },
                    self.bits(*repeater_delay_ps)
                )
            }
        }
    }

    fn segment_of(&self, station: usize) -> usize {
        let mut k = station;
        for g in &self.groups {
            if k < g.count {
                return g.segment;
            }
            k -= g.count;
        }
        0
    }

    /// The standard's limits: segment and cable lengths, and the path rules.
    pub(super) fn standard_limits(&self) -> Vec<Warning> {
        let m = &self.medium;
        let Some(std) = m.standard else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let max = std.length_m;
        let long = |what: String, key: String, len: f64| Warning {
            kind: "802.3-limits",
            key,
            message: format!(
                "{what} is {} m long; {} allows segments and links of at most {} m (docs/model.md, \
                 \"Standards\"): its signals may not reach the far end strong enough, and its \
                 delays break the standard's timing budget",
                metres(len),
                std.name,
                metres(max)
            ),
        };
        match &m.topology {
            Topology::Bus if m.length_m > max => out.push(long(
                format!("the bus (one segment of {})", std.name),
                "medium.length".into(),
                m.length_m,
            )),
            Topology::Bus => {}
            Topology::Hub { cable_m, .. } => {
                for (gi, g) in self.groups.iter().enumerate() {
                    let (c, key) = match g.cable_m {
                        Some(c) => (c, format!("stations.{gi}.cable")),
                        None => (*cable_m, "medium.topology.cable".into()),
                    };
                    if c > max {
                        out.push(long(format!("group {}'s cable", g.name), key, c));
                    }
                }
            }
            Topology::Segments { lengths_m, .. } => {
                for (k, &l) in lengths_m.iter().enumerate() {
                    if l > max {
                        out.push(long(
                            format!("segment {}", k + 1),
                            format!("medium.topology.segments.{k}"),
                            l,
                        ));
                    }
                }
            }
        }
        let p = paths(self, 0);
        let Some((i, j, d)) = p.worst_pair() else {
            return out;
        };
        if let Some(b) = path_budget(std.name) {
            // The path delay value counts the round trip of the cables and
            // repeaters, and the two stations' interfaces.
            let pdv = b.dte_pair_bits + 2.0 * d as f64 / m.bit_ps as f64;
            if pdv > b.max_bits {
                out.push(Warning {
                    kind: "802.3-limits",
                    key: "medium.topology".into(),
                    message: format!(
                        "stations {i} and {j}, {}, have a path delay value of {} bit times \
                         ({} for the two interfaces + {} there and back), more than the {} bit times \
                         {} allows ({}); shorten the cables or use fewer repeaters",
                        self.path_words(i, j),
                        round1(pdv),
                        b.dte_pair_bits,
                        round1(2.0 * d as f64 / m.bit_ps as f64),
                        b.max_bits,
                        std.name,
                        b.clause
                    ),
                });
            }
        }
        if std.bit_rate == 10e6 {
            if let Topology::Segments { .. } = m.topology {
                let repeaters = self.segment_of(i).abs_diff(self.segment_of(j));
                if repeaters > 4 {
                    out.push(Warning {
                        kind: "802.3-limits",
                        key: "medium.topology.segments".into(),
                        message: format!(
                            "stations {i} and {j} are {}: {} segments and {repeaters} repeaters \
                             on their path, more than the 5 segments and 4 repeaters 802.3 \
                             allows at 10 Mb/s (the 5-4-3 rule, clause 13)",
                            self.path_words(i, j),
                            repeaters + 1
                        ),
                    });
                }
            }
        }
        out
    }
}

/// A number with at most one decimal.
fn round1(x: f64) -> String {
    metres(x)
}
