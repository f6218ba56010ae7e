//! Lesson 5, offered load against throughput: long and short frames swept
//! over the load, with no "37 %" ceiling under CSMA/CD.

use super::chart::{grid, Builder, LessonChart};
use super::{by_load_points, check, metric_row, Lesson, LessonError, Outcome};
use crate::ethernet::{RunResult, Scenario};
use crate::sweep::Point;
use toml::Value;

/// Metcalfe and Boggs's efficiency of `q` stations that always have a frame
/// and each send in a contention slot with probability 1/q: a frame of F
/// bits occupies F plus preamble and gap, and each frame waits W = (1 - A)/A
/// slots of contention, A = (1 - 1/q)^(q-1) the chance that one station
/// alone sends in a slot. All lengths in bit times.
pub fn metcalfe_boggs(q: usize, frame_bits: f64, overhead_bits: f64, slot_bits: f64) -> f64 {
    let q = q as f64;
    let a = if q > 1.0 {
        (1.0 - 1.0 / q).powf(q - 1.0)
    } else {
        1.0
    };
    let w = (1.0 - a) / a;
    frame_bits / (frame_bits + overhead_bits + w * slot_bits)
}

/// Metcalfe-Boggs for the scenario `sc` (its stations, frames, preamble,
/// gap and slot).
fn metcalfe_boggs_of(sc: &Scenario) -> f64 {
    let m = &sc.medium;
    let bits = |ps: u64| ps as f64 / m.bit_ps as f64;
    metcalfe_boggs(
        sc.station_count(),
        sc.groups[0].frame.mean_bits(),
        bits(m.preamble_ps + m.ifg_ps),
        bits(m.slot_ps),
    )
}

/// The loads lesson 5 sweeps, and the frame sizes it compares.
pub const LESSON5_LOADS: &[f64] = &[0.1, 0.3, 0.5, 0.7, 0.9, 1.2, 2.0];
pub const LESSON5_FRAMES: &[&str] = &["1518B", "64B"];

pub(super) fn run(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let points = by_load_points(
        lesson,
        overrides,
        "stations.0.frame",
        LESSON5_FRAMES,
        LESSON5_LOADS,
    )?;
    let results = super::bus_runs(&points);
    let cols = [
        "offered_load",
        "throughput",
        "attempt_load",
        "collisions",
        "delay_mean_us",
    ];
    let mut table = vec![["frame"]
        .iter()
        .chain(cols.iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
    let mut checks = Vec::new();
    for (p, r) in points.iter().zip(&results) {
        let r = &r[0];
        table.push(metric_row(&p.axes[0].1, r, &cols));
        let load: f64 = p.axes[1].1.parse().unwrap_or(0.0);
        let (s, offered) = (r.metrics.get("throughput"), r.metrics.get("offered_load"));
        if load < 0.4 {
            // Below saturation every frame gets through: throughput tracks
            // the offered load measured in the same run (same frames).
            checks.push(check(
                format!("{}, load {load}: throughput = offered load", p.axes[0].1),
                format!("{offered:.3} ± 0.01"),
                format!("{s:.3}"),
                (s - offered).abs() <= 0.01,
            ));
        }
        if load >= 2.0 {
            let floor = if p.axes[0].1 == "1518B" { 0.9 } else { 0.5 };
            checks.push(check(
                format!(
                    "{}, overload (offered {load}): throughput far above 0.37",
                    p.axes[0].1
                ),
                format!("> {floor}"),
                format!("{s:.3}"),
                s > floor,
            ));
        }
    }
    Ok(Outcome {
        charts: vec![load_chart(&points, &results)],
        ..Outcome::of_table(table, checks)
    })
}

/// Throughput against the offered load ρ, each frame size against its
/// ceiling: S = ρ below Metcalfe-Boggs' efficiency E, E above.
fn load_chart(points: &[Point], results: &[Vec<RunResult>]) -> LessonChart {
    let first = points[0].scenario.ethernet().expect("lesson 5 is a bus");
    let mut b = Builder::new(
        "Throughput against offered load: no 37 % ceiling",
        "offered load ρ (frame bits offered / bit rate)",
        "throughput S (delivered / bit rate)",
    )
    .caption(format!(
        "{}: {} stations, one run per point, at the offered load ρ each run measured (new \
         frames only; the attempt load G of the lesson's table counts retransmissions too). \
         Lines: S = min(ρ, E): every offered frame is carried until the bus saturates at E, \
         Metcalfe and Boggs's efficiency for {} stations that always have a frame, every one \
         of them contending for every frame with probability 1/{} per slot (preamble and gap \
         counted). Points: the simulation, with binary exponential backoff. With 64-byte \
         frames the points sit about twice as high as E: in the model each frame waits \
         (1 - A) / A slots of contention (A = (1 - 1/q)^(q - 1)), longer than the frame \
         itself; under BEB the station that has just sent goes again after the gap while \
         the others are still backing off (lesson 6), so most frames meet no contention.",
        first.name,
        first.station_count(),
        first.station_count(),
        first.station_count()
    ));
    let top = LESSON5_LOADS.iter().cloned().fold(0.0, f64::max) * 1.05;
    for (k, frame) in LESSON5_FRAMES.iter().enumerate() {
        let mine: Vec<(&Point, &RunResult)> = points
            .iter()
            .zip(results)
            .filter(|(p, _)| p.axes[0].1 == *frame)
            .map(|(p, r)| (p, &r[0]))
            .collect();
        let sc = mine[0].0.scenario.ethernet().expect("lesson 5 is a bus");
        let e = metcalfe_boggs_of(sc);
        b.theory(
            &format!("{frame}: min(ρ, E), Metcalfe-Boggs E = {e:.3} (theory)"),
            k,
            grid(0.0, top, 80).map(|g| (g, g.min(e))),
        );
        b.simulated(
            &format!("{frame} (simulated)"),
            k,
            mine.iter().map(|(_, r)| {
                (
                    r.metrics.get("offered_load"),
                    Some(r.metrics.get("throughput")),
                    None,
                )
            }),
        );
    }
    b.done("throughput-vs-load")
}
