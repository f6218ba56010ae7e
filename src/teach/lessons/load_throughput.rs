//! Lesson 5, offered load against throughput: long and short frames swept
//! over the load, with no "37 %" ceiling under CSMA/CD.

use super::{by_load_points, check, metric_row, Lesson, LessonError, Outcome};
use toml::Value;

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
    Ok(Outcome::of_table(table, checks))
}
