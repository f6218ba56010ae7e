//! Lesson 4, why the minimum frame is 64 bytes: the lesson's over-long bus
//! against a 2500 m one, counting late and undetected collisions.

use super::chart::{grid, wilson, Builder, LessonChart};
use super::{check, metric_row, positive, scenario_with, Check, Lesson, LessonError, Outcome};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::ethernet::{self, MacEvent, Observer, RunResult};
use crate::teach::trace;
use rayon::prelude::*;
use toml::Value;

/// The bus lengths lesson 4's charts sweep, in metres.
pub const LESSON4_LENGTHS: &[f64] = &[
    1000.0, 2500.0, 4000.0, 5000.0, 5500.0, 6000.0, 7000.0, 8000.0, 10000.0,
];

/// The latest a transmission detected its collision, after its start.
#[derive(Default)]
struct LatestDetection {
    started: Vec<Time>,
    latest: Time,
}

impl Observer for LatestDetection {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        let i = station as usize;
        match ev {
            MacEvent::TxStart { .. } => {
                if self.started.len() <= i {
                    self.started.resize(i + 1, 0);
                }
                self.started[i] = t;
            }
            MacEvent::CollisionDetected { .. } => {
                let since = t - self.started.get(i).copied().unwrap_or(t);
                self.latest = self.latest.max(since);
            }
            _ => {}
        }
    }
}

/// One bus length of the sweep: its scenario, run, and latest detection.
struct LengthRun {
    length_m: f64,
    sc: Scenario,
    result: RunResult,
    latest: Time,
}

/// The round trip between the two stations farthest apart, in µs.
fn round_trip_us(sc: &Scenario) -> f64 {
    let pos = ethernet::positions(sc, trace::run_seed(sc));
    let span = pos.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        - pos.iter().cloned().fold(f64::INFINITY, f64::min);
    2.0 * span / sc.medium.speed * 1e6
}

/// The lesson's scenario at each of [`LESSON4_LENGTHS`], run in parallel.
fn sweep_lengths(
    lesson: &Lesson,
    overrides: &[(String, Value)],
) -> Result<Vec<LengthRun>, LessonError> {
    let scs = LESSON4_LENGTHS
        .iter()
        .map(|&l| {
            let v = Value::String(format!("{l}m"));
            scenario_with(lesson, overrides, &[("medium.length", v)]).map(|sc| (l, sc))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(scs
        .into_par_iter()
        .map(|(length_m, sc)| {
            let mut seen = LatestDetection::default();
            let result = ethernet::run_observed(&sc, trace::run_seed(&sc), &mut seen);
            LengthRun {
                length_m,
                sc,
                result,
                latest: seen.latest,
            }
        })
        .collect())
}

/// Lesson 4's two charts: the latest collision detection against the
/// round trip, and the late and undetected collisions, both against the
/// bus length.
fn length_charts(runs: &[LengthRun]) -> Vec<LessonChart> {
    let km = |r: &LengthRun| r.length_m / 1000.0;
    let last = runs.last().expect("lesson 4 sweeps lengths");
    let m = &last.sc.medium;
    // Late: detected more than a slot after the preamble. Undetected: the
    // whole transmission (preamble and a 64-byte frame) ends before the
    // other signal is back. Both limits are 57.6 µs at 10 Mb/s.
    let limit_us = (m.preamble_ps + m.slot_ps) as f64 / 1e6;
    // The round trip grows in proportion to the length: where it reaches the limit.
    let per_km = round_trip_us(&last.sc) / km(last);
    let threshold_km = limit_us / per_km;
    let name = last.sc.name.clone();
    let mut d = Builder::new(
        "Why 64 bytes: the latest collision detection against the round trip",
        "bus length (km)",
        "time after the transmission's start (µs)",
    )
    .caption(format!(
        "{name}, run once per length (seed as in the lesson). Line: the round trip between \
         the two end stations, 2 L / v, the latest a collision can be detected. Flat line: \
         the preamble and one slot ({} µs); a collision detected later is late, and a \
         64-byte frame (with its preamble) has ended by then, so its collision can go \
         undetected. The two cross at {threshold_km:.2} km.",
        trace::us((m.preamble_ps + m.slot_ps) as Time)
    ));
    let top = km(last) * 1.05;
    d.theory(
        "round trip 2 L / v (theory)",
        0,
        grid(0.0, top, 40).map(|x| (x, per_km * x)),
    );
    d.theory(
        "preamble + one slot: later is late (theory)",
        1,
        [(0.0, limit_us), (top, limit_us)],
    );
    d.simulated(
        "latest collision detection (simulated)",
        0,
        runs.iter().map(|r| {
            let y = (r.result.metrics.get("collisions") > 0.0).then_some(r.latest as f64 / 1e6);
            (km(r), y, None)
        }),
    );
    let per_1000 = |r: &LengthRun, c: &str| {
        let n = r.result.metrics.get("attempts").max(1.0);
        let k = r.result.metrics.get(c);
        let (lo, hi) = wilson(k, n);
        (
            km(r),
            Some(1000.0 * k / n),
            Some((1000.0 * lo, 1000.0 * hi)),
        )
    };
    let mut c = Builder::new(
        "Late and undetected collisions against the bus length",
        "bus length (km)",
        "per 1000 transmissions",
    )
    .caption(format!(
        "{name}, run once per length. Points: late and undetected collisions per 1000 \
         transmissions, with 95 % Wilson intervals. Vertical line: the length at which \
         the round trip reaches the preamble and one slot ({threshold_km:.2} km); theory \
         allows neither to its left."
    ));
    let ymax = runs
        .iter()
        .flat_map(|r| {
            [
                per_1000(r, "late_collisions"),
                per_1000(r, "undetected_collisions"),
            ]
        })
        .filter_map(|p| p.2.map(|ci| ci.1))
        .fold(1.0, f64::max);
    // Stations all at one point never see a round trip: no threshold.
    if threshold_km.is_finite() {
        c.theory(
            "round trip = preamble + one slot (theory: none to the left)",
            1,
            [(threshold_km, 0.0), (threshold_km, ymax)],
        );
    }
    c.simulated(
        "late collisions (simulated)",
        0,
        runs.iter().map(|r| per_1000(r, "late_collisions")),
    );
    c.simulated(
        "undetected collisions (simulated)",
        2,
        runs.iter().map(|r| per_1000(r, "undetected_collisions")),
    );
    vec![
        d.done("detection-vs-length"),
        c.done("late-collisions-vs-length"),
    ]
}

pub(super) fn run(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let cols = [
        "throughput",
        "collisions",
        "late_collisions",
        "undetected_collisions",
    ];
    let long = ethernet::run(sc, trace::run_seed(sc));
    let std_sc = scenario_with(
        lesson,
        overrides,
        &[("medium.length", Value::String("2500m".into()))],
    )?;
    let short = ethernet::run(&std_sc, trace::run_seed(&std_sc));
    let rt = |s: &Scenario| trace::us(2 * s.max_delay_ps());
    let mut table = vec![["bus", "round trip (µs)"]
        .iter()
        .chain(cols.iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
    let mut row = metric_row(&format!("{} m", sc.medium.length_m), &long, &cols);
    row.insert(1, rt(sc));
    table.push(row);
    let mut row = metric_row("2500 m", &short, &cols);
    row.insert(1, rt(&std_sc));
    table.push(row);
    let mut checks = detection_checks(&format!("{} m bus", sc.medium.length_m), sc, &long);
    checks.extend(detection_checks("2500 m bus", &std_sc, &short));
    let m = &std_sc.medium;
    let rule = 2 * std_sc.max_delay_ps() + m.jam_ps;
    checks.push(check(
        "2500 m bus: 802.3's rule, round trip + jam within the slot",
        format!("<= {} µs", trace::us(m.slot_ps)),
        format!("{} µs", trace::us(rule)),
        rule <= m.slot_ps,
    ));
    checks.push(positive(
        "2500 m bus: collisions still happen, and are all detected",
        &short,
        "collisions",
    ));
    let charts = length_charts(&sweep_lengths(lesson, overrides)?);
    Ok(Outcome {
        charts,
        ..Outcome::of_table(table, checks)
    })
}

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
