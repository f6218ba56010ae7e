//! The inequalities that decide whether a collision is late or goes
//! undetected, as checks (lesson 4 is a lesson file; lesson 13 reads these).

use super::{check, Check};
use crate::engine::Time;
use crate::ethernet::{RunResult, Scenario};
use crate::teach::trace;

/// The round trips that decide what a collision does on `sc`'s medium, in
/// picoseconds after the transmission's start (preamble included).
pub(super) struct Limits {
    /// Preamble + one slot: a collision detected later is late.
    pub late_ps: Time,
    /// Preamble + the shortest frame on the wire: a sender whose worst
    /// round trip is longer can finish before the collision comes back.
    pub undetected_ps: Time,
    /// How much later than its signal's arrival a station may still start:
    /// the last third of its interframe gap, where it no longer defers.
    pub slack_ps: Time,
}

impl Limits {
    pub fn of(sc: &Scenario) -> Self {
        let m = &sc.medium;
        let shortest = sc
            .groups
            .iter()
            .map(|g| m.frame_on_wire_ps(g.frame.min_bytes()))
            .min()
            .unwrap_or(m.slot_ps);
        Limits {
            late_ps: m.preamble_ps + m.slot_ps,
            undetected_ps: m.preamble_ps + shortest,
            slack_ps: m.ifg_ps - m.ifg_ps * 2 / 3,
        }
    }
}

/// The checks of late and undetected collisions on run `r` of `sc`, each
/// expected from the inequality that decides it: above zero when the worst
/// round trip passes the limit, zero when even a start in the last third
/// of the gap stays within it (in between, where they are possible but
/// rare, nothing is promised).
pub(super) fn detection_checks(name: &str, sc: &Scenario, r: &RunResult) -> Vec<Check> {
    let lim = Limits::of(sc);
    let rtt = 2 * sc.max_delay_ps();
    let rt = trace::us(rtt);
    let mut out = Vec::new();
    for (metric, what, limit, of) in [
        (
            "late_collisions",
            "late collisions",
            lim.late_ps,
            "preamble + slot",
        ),
        (
            "undetected_collisions",
            "undetected collisions",
            lim.undetected_ps,
            "preamble + shortest frame",
        ),
    ] {
        let v = r.metrics.get(metric);
        let l = trace::us(limit);
        if rtt > limit {
            out.push(check(
                format!("{name}: round trip {rt} µs > {l} µs ({of}): {what}"),
                "> 0",
                format!("{v}"),
                v > 0.0,
            ));
        } else if rtt + lim.slack_ps <= limit {
            out.push(check(
                format!("{name}: round trip {rt} µs <= {l} µs ({of}): no {what}"),
                "0",
                format!("{v}"),
                v == 0.0,
            ));
        }
    }
    out
}
