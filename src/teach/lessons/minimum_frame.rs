//! Lesson 4, why the minimum frame is 64 bytes: the lesson's over-long bus
//! against a 2500 m one, counting late and undetected collisions.

use super::{check, metric_row, scenario_with, Lesson, LessonError, Outcome};
use crate::ethernet::Scenario;
use crate::ethernet::{self, RunResult};
use crate::teach::trace;
use toml::Value;

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
    let g = |r: &RunResult, c: &str| r.metrics.get(c);
    let checks = vec![
        check(
            "over-long bus: round trip longer than a 64-byte frame (51.2 µs)",
            "> 51.2 µs",
            format!("{} µs", rt(sc)),
            2 * sc.max_delay_ps() > 512 * sc.medium.bit_ps,
        ),
        check(
            "over-long bus: late collisions",
            "> 0",
            format!("{}", g(&long, "late_collisions")),
            g(&long, "late_collisions") > 0.0,
        ),
        check(
            "over-long bus: undetected collisions (frames lost silently)",
            "> 0",
            format!("{}", g(&long, "undetected_collisions")),
            g(&long, "undetected_collisions") > 0.0,
        ),
        check(
            "2500 m bus: late collisions",
            "0",
            format!("{}", g(&short, "late_collisions")),
            g(&short, "late_collisions") == 0.0,
        ),
        check(
            "2500 m bus: undetected collisions",
            "0",
            format!("{}", g(&short, "undetected_collisions")),
            g(&short, "undetected_collisions") == 0.0,
        ),
        check(
            "2500 m bus: collisions still happen, and are all detected",
            "> 0",
            format!("{}", g(&short, "collisions")),
            g(&short, "collisions") > 0.0,
        ),
    ];
    Ok(Outcome::of_table(table, checks))
}
