//! Lesson 12, a hub versus a long coax: the same stations and traffic on a
//! 500 m 10BASE5 segment and on 100 m links to a 10BASE-T hub; the worst
//! and mean delays between stations, and what they do to collisions.

use super::{check, metric_row, scenario_with, Lesson, LessonError, Outcome};
use crate::engine::Time;
use crate::ethernet::{self, RunResult, Scenario};
use crate::teach::trace;
use toml::{Table, Value};

/// The hub of the lesson: 100 m links, 8 bit times through the hub.
fn hub() -> Value {
    let mut t = Table::new();
    t.insert("kind".into(), Value::String("hub".into()));
    t.insert("cable".into(), Value::String("100m".into()));
    t.insert("repeater_delay".into(), Value::String("8bit".into()));
    Value::Table(t)
}

/// The largest and the mean delay over all pairs of stations, in ps.
fn delays(sc: &Scenario) -> (Time, f64) {
    let p = ethernet::paths(sc, trace::run_seed(sc));
    let n = p.props.len();
    let (mut max, mut sum, mut pairs) = (0, 0.0, 0u64);
    for i in 0..n {
        for j in i + 1..n {
            let d = p.delay(i, j);
            max = max.max(d);
            sum += d as f64;
            pairs += 1;
        }
    }
    (max, sum / pairs.max(1) as f64)
}

pub(super) fn run(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let hub_sc = scenario_with(
        lesson,
        overrides,
        &[
            ("medium.standard", Value::String("10BASE-T".into())),
            ("medium.topology", hub()),
        ],
    )?;
    let coax = ethernet::run(sc, trace::run_seed(sc));
    let star = ethernet::run(&hub_sc, trace::run_seed(&hub_sc));
    let cols = [
        "throughput",
        "collisions",
        "delivered",
        "late_collisions",
        "undetected_collisions",
    ];
    let mut table = vec![["wiring", "worst delay (µs)", "mean delay (µs)"]
        .iter()
        .chain(cols.iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
    let (coax_max, coax_mean) = delays(sc);
    let (hub_max, hub_mean) = delays(&hub_sc);
    let us = |ps: f64| format!("{:.3}", ps / 1e6);
    for (label, r, max, mean) in [
        ("500 m coax", &coax, coax_max, coax_mean),
        ("hub, 100 m links", &star, hub_max, hub_mean),
    ] {
        let mut row = metric_row(label, r, &cols);
        row[1] = format!("{:.3}", r.metrics.get("throughput"));
        row.insert(1, us(max as f64));
        row.insert(2, us(mean));
        table.push(row);
    }
    let g = |r: &RunResult, c: &str| r.metrics.get(c);
    let per_frame = |r: &RunResult| g(r, "collisions") / g(r, "delivered");
    let delay_check = |what: &str, seen: f64, expected_us: f64| {
        check(
            what,
            format!("{expected_us:.3} µs"),
            format!("{} µs", us(seen)),
            (seen / 1e6 - expected_us).abs() < 0.0005,
        )
    };
    let mut checks = vec![
        delay_check("coax: worst delay, 500 m at 0.77 c", coax_max as f64, 2.166),
        delay_check(
            "hub: worst delay, 2 x 100 m at 0.585 c + 8 bit times",
            hub_max as f64,
            1.940,
        ),
        delay_check(
            "coax: mean delay over all pairs (3/7 of 500 m)",
            coax_mean,
            0.928,
        ),
        delay_check(
            "hub: mean delay over all pairs (every pair alike)",
            hub_mean,
            1.940,
        ),
        check(
            "more collisions per delivered frame on the hub",
            format!("> {:.4} (the coax's)", per_frame(&coax)),
            format!("{:.4}", per_frame(&star)),
            per_frame(&star) > per_frame(&coax),
        ),
    ];
    for (label, r) in [("coax", &coax), ("hub", &star)] {
        let x = g(r, "throughput");
        checks.push(check(
            format!("{label}: carries the offered load"),
            "0.50 ± 0.02",
            format!("{x:.3}"),
            (x - 0.5).abs() <= 0.02,
        ));
        checks.push(check(
            format!("{label}: no late or undetected collisions"),
            "0",
            format!(
                "{}",
                g(r, "late_collisions") + g(r, "undetected_collisions")
            ),
            g(r, "late_collisions") + g(r, "undetected_collisions") == 0.0,
        ));
    }
    Ok(Outcome::of_table(table, checks))
}
