//! Lesson 13, the minimum frame against the diameter at each speed: the
//! largest bus a slot allows, L* = (slot - jam) / 2 x v, at 10 Mb/s,
//! 100 Mb/s and 1 Gb/s (with and without carrier extension), a bus a
//! little shorter (no late or undetected collisions) and one twice as long
//! (both).

use super::{check, scenario_with, Lesson, LessonError, Outcome};
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

pub(super) fn run(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let mut table = vec![[
        "speed",
        "slot (bits)",
        "L* (m)",
        "bus (m)",
        "late_collisions",
        "undetected_collisions",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<_>>()];
    let mut checks = Vec::new();
    let s = |v: &str| Value::String(v.into());
    for &(name, rate, slot, extension, duration) in SPEEDS {
        let base = [
            ("medium.bit_rate", s(rate)),
            ("medium.slot", s(&format!("{slot}bit"))),
            ("medium.carrier_extension", Value::Boolean(extension)),
            ("duration", s(duration)),
        ];
        let at = |factor: f64| -> Result<(Scenario, f64), LessonError> {
            let probe = scenario_with(lesson, overrides, &base)?;
            let l = diameter(&probe) * factor;
            let mut extra = base.to_vec();
            extra.push(("medium.length", s(&format!("{l}m"))));
            Ok((scenario_with(lesson, overrides, &extra)?, l))
        };
        for factor in [0.9, 2.0] {
            let (sc, l) = at(factor)?;
            let r = ethernet::run(&sc, trace::run_seed(&sc));
            let late = r.metrics.get("late_collisions");
            let lost = r.metrics.get("undetected_collisions");
            table.push(vec![
                name.to_string(),
                slot.to_string(),
                format!("{:.1}", diameter(&sc)),
                format!("{l:.1}"),
                late.to_string(),
                lost.to_string(),
            ]);
            let seen = format!("{late} late, {lost} undetected");
            checks.push(if factor < 1.0 {
                check(
                    format!("{name}, {l:.1} m (0.9 L*): nothing late or undetected"),
                    "0 late, 0 undetected",
                    seen,
                    late == 0.0 && lost == 0.0,
                )
            } else {
                check(
                    format!("{name}, {l:.1} m (2 L*): late and undetected collisions"),
                    "> 0 late, > 0 undetected",
                    seen,
                    late > 0.0 && lost > 0.0,
                )
            });
        }
    }
    Ok(Outcome::of_table(table, checks))
}
