//! Lesson 11, why Gigabit needed carrier extension: one station's share of
//! the bit rate with extension, with bursting and without, against their
//! closed forms (docs/model.md, "Carrier extension", "Frame bursting"), and
//! two stations without extension losing collisions they cannot see.

use super::{check, metric_row, positive, scenario_with, Lesson, LessonError, Outcome};
use crate::ethernet::{self, RunResult, Scenario};
use crate::teach::trace;
use toml::Value;

/// 64-byte frames at 1 Gb/s: extended, 512 / (64 + 4096 + 96) bit times.
const LESSON11_EXTENDED: f64 = 512.0 / 4256.0;
/// 93 frames per burst cycle of 66 080 bit times.
const LESSON11_BURST: f64 = 93.0 * 512.0 / 66_080.0;
/// Not extended: 512 / (64 + 512 + 96).
const LESSON11_PLAIN: f64 = 512.0 / 672.0;

pub(super) fn run(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let variant = |extra: &[(&str, Value)]| -> Result<(Scenario, RunResult), LessonError> {
        let s = scenario_with(lesson, overrides, extra)?;
        let r = ethernet::run(&s, trace::run_seed(&s));
        Ok((s, r))
    };
    let t = Value::Boolean(true);
    let f = Value::Boolean(false);
    let two = Value::Integer(2);
    let extended = ethernet::run(sc, trace::run_seed(sc));
    let (_, burst) = variant(&[("medium.frame_bursting", t.clone())])?;
    let (_, plain) = variant(&[("medium.carrier_extension", f.clone())])?;
    let (_, two_plain) = variant(&[
        ("medium.carrier_extension", f),
        ("stations.0.count", two.clone()),
    ])?;
    let (_, two_ext) = variant(&[("stations.0.count", two)])?;
    let cols = ["throughput", "collisions", "undetected_collisions"];
    let mut table = vec![["run"]
        .iter()
        .chain(cols.iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
    for (label, r) in [
        ("one station, extension", &extended),
        ("one station, extension + bursting", &burst),
        ("one station, no extension", &plain),
        ("two stations, no extension", &two_plain),
        ("two stations, extension", &two_ext),
    ] {
        let mut row = metric_row(label, r, &cols);
        row[1] = format!("{:.4}", r.metrics.get("throughput"));
        table.push(row);
    }
    let g = |r: &RunResult, c: &str| r.metrics.get(c);
    // Over a run of thousands of cycles a share is its closed form to
    // within one cycle in the run.
    let near = |what: &str, r: &RunResult, expected: f64| {
        let x = g(r, "throughput");
        check(
            what,
            format!("{expected:.4}"),
            format!("{x:.4}"),
            (x - expected).abs() < 0.002,
        )
    };
    let checks = vec![
        near(
            "one station, extension: 512 / 4256 of the bit rate",
            &extended,
            LESSON11_EXTENDED,
        ),
        near(
            "one station, extension and bursting: 93 x 512 / 66 080",
            &burst,
            LESSON11_BURST,
        ),
        near(
            "one station, no extension: 512 / 672",
            &plain,
            LESSON11_PLAIN,
        ),
        positive(
            "two stations, no extension: collisions go undetected",
            &two_plain,
            "undetected_collisions",
        ),
        check(
            "two stations, extension: every collision detected",
            "0 undetected, > 0 collisions",
            format!(
                "{} undetected, {} collisions",
                g(&two_ext, "undetected_collisions"),
                g(&two_ext, "collisions")
            ),
            g(&two_ext, "undetected_collisions") == 0.0 && g(&two_ext, "collisions") > 0.0,
        ),
    ];
    Ok(Outcome::of_table(table, checks))
}
