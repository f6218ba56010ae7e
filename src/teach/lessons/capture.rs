//! Lesson 6, the capture effect: two saturated stations under beb and under
//! blam, on the same seeds, compared by capture runs, discards and throughput.

use super::{backoff_of_kind, check, fmt_ci, scenario_with, Lesson, LessonError, Outcome};
use crate::ethernet::RunResult;
use crate::ethernet::Scenario;
use toml::Value;

/// The mean of a metric over a point's replications, with its 95 % half-width.
fn mean_of(results: &[RunResult], column: &str) -> (f64, f64) {
    let v: Vec<f64> = results.iter().map(|r| r.metrics.get(column)).collect();
    crate::stats::mean_ci95(&v)
}

/// Runs the scenario as written (beb) and with blam, on the same seeds
/// (common random numbers), so the difference is the policy's alone.
/// Lesson 6's pictures cover this much: the first runs of one station's
/// frames, a few dozen 1518-byte frames.
const LESSON6_WINDOW: crate::engine::Time = 30_000_000_000;

pub(super) fn run(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    beb_sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let blam = backoff_of_kind(
        lesson,
        overrides,
        "blam",
        &["backoff_limit", "attempt_limit"],
    )?;
    let blam_sc = scenario_with(lesson, overrides, &[("stations.0.backoff", blam)])?;
    let pts = vec![
        super::bus_point(vec![], beb_sc.clone()),
        super::bus_point(vec![], blam_sc),
    ];
    let res = super::bus_runs(&pts);
    let (beb, blam) = (&res[0], &res[1]);
    let cols = [
        "capture_mean_run",
        "capture_max_run",
        "dropped_excessive",
        "collision_involvements",
        "throughput",
        "fairness",
    ];
    let reps = beb.len();
    let mut table = vec![[format!("policy (mean of {reps} runs)")]
        .into_iter()
        .chain(cols.iter().map(|s| s.to_string()))
        .collect::<Vec<_>>()];
    for (name, r) in [(beb_sc.groups[0].backoff.kind(), beb), ("blam", blam)] {
        let mut row = vec![name.to_string()];
        for c in cols {
            let (m, _) = mean_of(r, c);
            row.push(if c == "throughput" || c == "fairness" {
                format!("{m:.3}")
            } else {
                format!("{m:.1}")
            });
        }
        table.push(row);
    }
    let fair = 2.0;
    let (beb_run, _) = mean_of(beb, "capture_mean_run");
    let (beb_max, _) = mean_of(beb, "capture_max_run");
    let (blam_run, _) = mean_of(blam, "capture_mean_run");
    // Under a fair coin each success goes to either station with probability
    // 1/2, independently: run lengths are geometric on 1, 2, ... with mean 2
    // and variance 2. Over M runs in all, the mean run has standard error
    // sqrt(2 / M); 4 of them leave a 6e-5 chance of a false alarm. M is the
    // successes divided by the mean run, summed over the replications.
    let runs_total: f64 = blam
        .iter()
        .map(|r| {
            let m = r.metrics.get("capture_mean_run");
            if m > 0.0 {
                r.metrics.get("delivered") / m
            } else {
                0.0
            }
        })
        .sum();
    let tol = 4.0 * (2.0 / runs_total.max(1.0)).sqrt();
    let beb_drops: f64 = beb.iter().map(|r| r.metrics.get("dropped_excessive")).sum();
    let blam_drops: f64 = blam
        .iter()
        .map(|r| r.metrics.get("dropped_excessive"))
        .sum();
    // Discards are rare, nearly independent events: their counts are close
    // to Poisson, so the difference of the two totals has standard deviation
    // sqrt(a + b).
    let drop_margin = 4.0 * (beb_drops + blam_drops).sqrt();
    let (beb_s, beb_hw) = mean_of(beb, "throughput");
    let (blam_s, blam_hw) = mean_of(blam, "throughput");
    let m = &beb_sc.medium;
    let frame_bits = beb_sc.groups[0].frame.mean_bits();
    let ceiling = frame_bits / (frame_bits + (m.preamble_ps + m.ifg_ps) as f64 / m.bit_ps as f64);
    let checks = vec![
        check(
            "beb: mean capture run, far above a fair coin's 2 (at least 10 times)",
            format!(">= {}", 10.0 * fair),
            format!("{beb_run:.1}"),
            beb_run >= 10.0 * fair,
        ),
        check(
            "beb: the longest capture run (mean over the runs), hundreds of frames",
            ">= 100",
            format!("{beb_max:.0}"),
            beb_max >= 100.0,
        ),
        check(
            "beb: frames discarded after 16 collisions (starved by capture)",
            "> 0",
            format!("{:.1} per run", beb_drops / reps as f64),
            beb_drops > 0.0,
        ),
        check(
            "beb: throughput near one station's ceiling F / (F + preamble + gap)",
            format!("> {:.3} - 0.01", ceiling),
            fmt_ci((beb_s, beb_hw)),
            beb_s > ceiling - 0.01,
        ),
        check(
            "blam: mean capture run = a fair coin's 2",
            format!("{fair} ± {tol:.3}"),
            format!("{blam_run:.3}"),
            (blam_run - fair).abs() <= tol,
        ),
        check(
            "blam: fewer discards than beb (by more than 4 Poisson sd)",
            format!("< {:.0} in all", beb_drops - drop_margin),
            format!("{blam_drops:.0} in all (beb {beb_drops:.0})"),
            blam_drops < beb_drops - drop_margin,
        ),
        check(
            "blam: lower throughput than beb (95 % intervals apart): the price of fair contention",
            format!("< {:.3}", beb_s - beb_hw - blam_hw.max(0.0)),
            fmt_ci((blam_s, blam_hw)),
            blam_s + blam_hw < beb_s - beb_hw,
        ),
    ];
    Ok(Outcome {
        diagram_until: Some(LESSON6_WINDOW),
        ..Outcome::of_table(table, checks)
    })
}
