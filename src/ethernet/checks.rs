//! What a valid bus scenario will show that its author may not mean, said
//! before it runs: late collisions from a bus too long for its slot, missed
//! collisions from frames too short for the bus, more load than the bus
//! carries; and the offered load of each group as information.

use super::medium::signal_index::CROWD;
use super::{Placement, Scenario, Topology};

/// Looks at signals on the wire above which a run is said to be slow (a
/// minute at [`CHECKS_PER_S`]; the estimate is from above).
const SLOW_CHECKS: f64 = 6e10;
/// Looks a second, for the time the warning gives: about what this build
/// does on one core of a current machine, measured on a 10 000 km bus.
const CHECKS_PER_S: f64 = 1e9;
use crate::advice::{short_fraction, OfferedLoad, Share, Warning};
use crate::engine::Time;
use crate::traffic::{Arrivals, MAX_FRAME_BYTES};
use crate::units::PS_PER_S;

impl Scenario {
    /// The warnings about this scenario, in the order of its keys: the
    /// medium's timing, each group's frames, the offered load.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out = Vec::new();
        let span = self.worst_span_m();
        let wired = self.medium.topology != Topology::Bus;
        if self.medium.access.detects_collisions() && self.station_count() > 1 {
            if wired {
                out.extend(self.wired_round_trip());
            } else {
                out.extend(self.late_collisions(span));
                out.extend(self.undetected_collisions(span));
            }
        }
        out.extend(self.standard_limits());
        out.extend(self.slow_run());
        if let Share::Fraction(total) = self.offered_load().total() {
            // A load given as 1 comes back as 1 within rounding.
            if total > 1.0 + 1e-9 {
                out.push(Warning {
                    kind: "overload",
                    key: "stations".into(),
                    message: format!(
                        "the offered load totals {} of the bit rate, more than the bus can carry: \
                         queues fill, frames are dropped (dropped_queue) and delays grow with \
                         the length of the run; offer at most 1 in all (a smaller `load` or `rate`)",
                        short_fraction(total)
                    ),
                });
            }
        }
        out
    }

    /// A run that will be slow because many signals are on the wire at
    /// once: a bus or a hub whose end-to-end delay holds many transmissions
    /// (a long cable, a slow repeater), without the crowds' bus index, where
    /// every transmission and deferral looks at each signal still on the
    /// wire. Estimated from above: each station sends as often as its
    /// traffic and its attempt limit allow, at most back to back.
    fn slow_run(&self) -> Option<Warning> {
        let m = &self.medium;
        let hub = matches!(m.topology, Topology::Hub { .. });
        if self.station_count() >= CROWD && !hub {
            return None;
        }
        let duration_s = self.duration as f64 / PS_PER_S;
        let per_s: f64 = self
            .groups
            .iter()
            .map(|g| {
                let tx = m.preamble_ps + m.frame_on_wire_ps(g.frame.min_bytes()) + m.ifg_ps;
                let back_to_back = PS_PER_S / tx.max(1) as f64;
                let tries = f64::from(g.backoff.attempt_limit().clamp(1, 1024));
                let offered = match g.arrivals {
                    Arrivals::Saturated => f64::INFINITY,
                    Arrivals::Poisson { rate } | Arrivals::OnOff { rate, .. } => rate * tries,
                    Arrivals::Periodic { interval, .. } => {
                        PS_PER_S / interval.max(1) as f64 * tries
                    }
                    Arrivals::Burst { frames, .. } => f64::from(frames) * tries / duration_s,
                };
                g.count as f64 * back_to_back.min(offered)
            })
            .sum();
        let life_ps = self.max_delay_ps() + self.max_tx_ps() + m.jam_ps;
        let on_wire = per_s * life_ps as f64 / PS_PER_S;
        let checks = per_s * duration_s * on_wire;
        if checks < SLOW_CHECKS || on_wire < 100.0 {
            return None;
        }
        let minutes = checks / CHECKS_PER_S / 60.0;
        let takes = if minutes >= 120.0 {
            format!("{:.0} hours", minutes / 60.0)
        } else {
            format!("{:.0} minutes", minutes.max(1.0))
        };
        let (key, fix) = match m.topology {
            Topology::Bus => ("medium.length", "a shorter bus"),
            Topology::Hub { .. } => (
                "medium.topology",
                "shorter cables or a shorter repeater_delay",
            ),
            Topology::Segments { .. } => (
                "medium.topology",
                "shorter segments or a shorter repeater_delay",
            ),
        };
        Some(Warning {
            kind: "slow-run",
            key: key.into(),
            message: format!(
                "a slow run: up to {on_wire:.0} signals can be on the wire at once (a signal \
                 lasts up to {} from its start until it has passed every station, against \
                 transmissions of {}), and every transmission and deferral looks at each: \
                 about {checks:.1e} looks over the {} simulated, roughly {takes} at 10^9 a \
                 second; progress is shown while it runs and Ctrl-C stops it; {fix} or a \
                 shorter `duration` runs faster",
                crate::units::format_ps(life_ps),
                crate::units::format_ps(
                    m.preamble_ps
                        + m.frame_on_wire_ps(
                            self.groups
                                .iter()
                                .map(|g| g.frame.min_bytes())
                                .min()
                                .unwrap_or(0)
                        )
                ),
                crate::units::format_ps(self.duration)
            ),
        })
    }

    /// Each group's offered load as a fraction of the bit rate (frame bits
    /// only, as `load` is given), or saturated, or a burst.
    pub fn offered_load(&self) -> OfferedLoad {
        let bit_rate = self.medium.bit_rate;
        let groups = self
            .groups
            .iter()
            .map(|g| {
                let per_station = |rate: f64| {
                    Share::Fraction(g.count as f64 * rate * g.frame.mean_bits() / bit_rate)
                };
                let share = match g.arrivals {
                    Arrivals::Saturated => Share::Saturated,
                    Arrivals::Burst { frames, .. } => Share::Burst {
                        frames: frames as u64 * g.count as u64,
                    },
                    Arrivals::Poisson { rate } => per_station(rate),
                    Arrivals::Periodic { interval, .. } => per_station(PS_PER_S / interval as f64),
                    Arrivals::OnOff {
                        rate,
                        mean_on,
                        mean_off,
                        ..
                    } => per_station(rate * mean_on as f64 / (mean_on + mean_off) as f64),
                };
                (g.name.clone(), share)
            })
            .collect();
        OfferedLoad {
            of: "the bit rate",
            groups,
        }
    }

    /// The largest distance two stations can be apart, in metres: the bus
    /// length when stations are spread over it (evenly, both ends included,
    /// or at random), else as their positions place them.
    fn worst_span_m(&self) -> f64 {
        let n = self.station_count();
        if n < 2 {
            return 0.0;
        }
        let unplaced = self.groups.iter().any(|g| g.positions.is_none());
        let explicit = self.groups.iter().any(|g| g.positions.is_some());
        if !explicit || (unplaced && self.medium.placement == Placement::Random) {
            return self.medium.length_m;
        }
        // Some positions are given: where the others go does not depend on
        // the seed unless they are random, which was handled above.
        let pos = super::positions(self, 0);
        let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        hi - lo
    }

    /// The round trip between stations `span` metres apart, as the run
    /// counts it (integer one-way delays).
    fn round_trip_ps(&self, span: f64) -> Time {
        2 * (span / self.medium.speed * PS_PER_S).round() as Time
    }

    fn late_collisions(&self, span: f64) -> Option<Warning> {
        let m = &self.medium;
        let rtt = self.round_trip_ps(span);
        if rtt + m.jam_ps <= m.slot_ps {
            return None;
        }
        let bits = |ps: Time| self.bits(ps);
        let head = format!(
            "the worst round trip ({}, {}, between stations {} m apart) plus the jam ({}, {}) \
             is {} ({}), longer than the slot ({}, {})",
            us(rtt),
            bits(rtt),
            metres(span),
            us(m.jam_ps),
            bits(m.jam_ps),
            us(rtt + m.jam_ps),
            bits(rtt + m.jam_ps),
            us(m.slot_ps),
            bits(m.slot_ps),
        );
        let what = self.late_verdict(rtt);
        let slot_bits = ((rtt + m.jam_ps) as f64 / m.bit_ps as f64).ceil();
        let (key, fix) = if m.jam_ps < m.slot_ps {
            let max_span = (m.slot_ps - m.jam_ps) as f64 / 2.0 / PS_PER_S * m.speed;
            (
                "medium.length",
                format!(
                    "shorten the bus to at most {} m, or give a longer slot: slot = \"{slot_bits}bit\"",
                    metres_down(max_span)
                ),
            )
        } else {
            (
                "medium.jam",
                format!(
                    "give a jam shorter than the slot minus the round trip, or a longer slot: \
                     slot = \"{slot_bits}bit\""
                ),
            )
        };
        Some(Warning {
            kind: "late-collisions",
            key: key.into(),
            message: format!("{head}: {what}; {fix}"),
        })
    }

    /// What a round trip `rtt` longer than 802.3's rule allows does to
    /// collisions, as docs/model.md defines a late one (detected more than
    /// a slot after the preamble): the detection comes at most `rtt` after
    /// a start, or a third of the gap later when the other station started
    /// in the last third of its interframe gap, where it no longer defers.
    pub(super) fn late_verdict(&self, rtt: Time) -> String {
        let m = &self.medium;
        let limit = m.preamble_ps + m.slot_ps;
        let slack = m.ifg_ps - m.ifg_ps * 2 / 3;
        let bits = |ps: Time| self.bits(ps);
        if rtt > limit {
            format!(
                "a collision can then be detected up to {} after the sender's start, later than \
                 the preamble and the first slot ({}): such collisions are late \
                 (late_collisions)",
                bits(rtt),
                bits(limit)
            )
        } else if rtt + slack > limit {
            format!(
                "outside 802.3's rule that one slot holds both; a collision is still detected \
                 within the preamble and the first slot ({}) unless the other station started \
                 in the last third of its interframe gap, where it no longer defers to carrier \
                 (up to {} after the signal reached it): only such collisions, rare, can be late \
                 (late_collisions), and a run may show none",
                bits(limit),
                bits(slack)
            )
        } else {
            format!(
                "outside 802.3's rule that one slot holds both, though every collision is still \
                 detected within the preamble and the first slot ({}), even after a start in \
                 the last third of an interframe gap: none can be late",
                bits(limit)
            )
        }
    }

    fn undetected_collisions(&self, span: f64) -> Vec<Warning> {
        let m = &self.medium;
        let rtt = self.round_trip_ps(span);
        let mut out = Vec::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let bytes = g.frame.min_bytes();
            let frame_ps = 8 * bytes as Time * m.bit_ps;
            let tx = m.preamble_ps + frame_ps;
            if tx >= rtt {
                continue;
            }
            let shorter = if frame_ps < m.slot_ps {
                format!(
                    ", less than a slot of {}, 802.3's minimum frame",
                    self.bits(m.slot_ps)
                )
            } else {
                String::new()
            };
            let min_bytes = ((rtt - m.preamble_ps) as f64 / (8 * m.bit_ps) as f64).ceil();
            let longer = if self.nonstandard_frames || min_bytes <= MAX_FRAME_BYTES as f64 {
                format!("use frames of at least {min_bytes} B, or ")
            } else {
                String::new()
            };
            let max_span = tx as f64 / 2.0 / PS_PER_S * m.speed;
            out.push(Warning {
                kind: "undetected-collisions",
                key: format!("stations.{gi}.frame"),
                message: format!(
                    "group {}: its shortest frames, {bytes} B ({}{shorter}), last {} ({}) with \
                     the preamble, less than the worst round trip ({}, {}, between stations \
                     {} m apart): a sender can finish before a distant station's signal reaches \
                     it, so collisions will go undetected (undetected_collisions); {longer}\
                     shorten the bus to at most {} m",
                    g.name,
                    self.bits(frame_ps),
                    us(tx),
                    self.bits(tx),
                    us(rtt),
                    self.bits(rtt),
                    metres(span),
                    metres_down(max_span)
                ),
            });
        }
        out
    }

    /// A time in bit times of this medium: "2532 bit times".
    pub(super) fn bits(&self, ps: Time) -> String {
        let b = ps as f64 / self.medium.bit_ps as f64;
        let s = format!("{b:.1}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "1" {
            "1 bit time".into()
        } else {
            format!("{s} bit times")
        }
    }
}

/// Picoseconds as microseconds with at most three decimals: "25.32 µs".
pub(super) fn us(ps: Time) -> String {
    format!("{} µs", short_fraction(ps as f64 / 1e6))
}

/// Metres with at most one decimal.
pub(super) fn metres(m: f64) -> String {
    let s = format!("{m:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Metres rounded down (to a tenth below 100 m), so that the advice holds.
fn metres_down(m: f64) -> String {
    if m < 100.0 {
        metres((m * 10.0 + 1e-6).floor() / 10.0)
    } else {
        format!("{}", (m + 1e-6).floor())
    }
}
