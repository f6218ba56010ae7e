//! Lesson 13, the minimum frame against the diameter at each speed: the
//! largest bus 802.3's rule allows, L* = (slot - jam) / 2 x v, at 10 Mb/s,
//! 100 Mb/s and 1 Gb/s (with and without carrier extension), a bus a
//! little shorter (no late or undetected collisions) and one twice as long
//! (both), or the length a `--set medium.length` gives, each checked
//! against the round trips that decide detection (lesson 4).

use super::minimum_frame::detection_checks;
use super::{scenario_with, Lesson, LessonError, Outcome};
use crate::ethernet::{self, Scenario};
use crate::teach::trace;
use crate::units::PS_PER_S;
use toml::Value;

/// Each speed: its name, bit rate, slot in bits, carrier extension, and
/// the simulated time (fewer seconds at higher rates).
const SPEEDS: &[(&str, &str, u32, bool, &str)] = &[
    ("10 Mb/s", "10Mbps", 512, false, "2s"),
    ("100 Mb/s", "100Mbps", 512, false, "0.2s"),
    ("1 Gb/s, no extension", "1Gbps", 512, false, "0.02s"),
    ("1 Gb/s, carrier extension", "1Gbps", 4096, true, "0.02s"),
];

/// The largest diameter `sc`'s slot allows: (slot - jam) / 2 x v, metres.
fn diameter(sc: &Scenario) -> f64 {
    let m = &sc.medium;
    (m.slot_ps - m.jam_ps) as f64 / 2.0 / PS_PER_S * m.speed
}

/// The longest bus on which no collision is late: (preamble + slot) / 2 x v,
/// metres (the round trip reaches the preamble and one slot).
fn detection_limit(sc: &Scenario) -> f64 {
    let m = &sc.medium;
    (m.preamble_ps + m.slot_ps) as f64 / 2.0 / PS_PER_S * m.speed
}

pub(super) fn run(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let mut table = vec![[
        "speed",
        "slot (bits)",
        "L* (m)",
        "no late to (m)",
        "bus (m)",
        "late_collisions",
        "undetected_collisions",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let mut checks = Vec::new();
    let s = |v: &str| Value::String(v.into());
    // A length given with --set is run at every speed in place of the
    // lesson's 0.9 L* and 2 L*.
    let fixed_length = overrides.iter().any(|(p, _)| p == "medium.length");
    for &(name, rate, slot, extension, duration) in SPEEDS {
        let base = [
            ("medium.bit_rate", s(rate)),
            ("medium.slot", s(&format!("{slot}bit"))),
            ("medium.carrier_extension", Value::Boolean(extension)),
            ("duration", s(duration)),
        ];
        let at = |factor: Option<f64>| -> Result<Scenario, LessonError> {
            let Some(factor) = factor else {
                return scenario_with(lesson, overrides, &base);
            };
            let probe = scenario_with(lesson, overrides, &base)?;
            let l = diameter(&probe) * factor;
            let mut extra = base.to_vec();
            extra.push(("medium.length", s(&format!("{l}m"))));
            scenario_with(lesson, overrides, &extra)
        };
        let factors: &[Option<f64>] = if fixed_length {
            &[None]
        } else {
            &[Some(0.9), Some(2.0)]
        };
        for &factor in factors {
            let sc = at(factor)?;
            let l = sc.medium.length_m;
            let r = ethernet::run(&sc, trace::run_seed(&sc));
            table.push(vec![
                name.to_string(),
                slot.to_string(),
                format!("{:.1}", diameter(&sc)),
                format!("{:.1}", detection_limit(&sc)),
                format!("{l:.1}"),
                r.metrics.get("late_collisions").to_string(),
                r.metrics.get("undetected_collisions").to_string(),
            ]);
            let bus = match factor {
                Some(f) => format!("{name}, {l:.1} m ({f} L*)"),
                None => format!("{name}, {l:.1} m"),
            };
            checks.extend(detection_checks(&bus, &sc, &r));
        }
    }
    Ok(Outcome::of_table(table, checks))
}
