//! Lesson 7, the thundering herd: a crowd of stations sending at once, and
//! what binary exponential backoff's 1024-slot cap does to it.

use super::chart::{grid, Builder, LessonChart};
use super::{check, Outcome};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::ethernet::{self, MacEvent, Observer};
use crate::teach::trace;

/// Counts what the thundering herd shows: backoff windows and the end.
#[derive(Default)]
struct HerdStats {
    max_n: u32,
    capped_draws: u64,
    draws: u64,
    last_tx_end: Time,
    successes: u64,
    /// When each frame got through, in time order.
    through: Vec<Time>,
}

impl Observer for HerdStats {
    fn on(&mut self, t: Time, _station: u32, ev: &MacEvent) {
        match ev {
            MacEvent::Backoff { n, k, .. } => {
                self.draws += 1;
                self.max_n = self.max_n.max(*n);
                if *k == Some(10) {
                    self.capped_draws += 1;
                }
            }
            MacEvent::TxSuccess => {
                self.successes += 1;
                self.through.push(t);
                self.last_tx_end = self.last_tx_end.max(t);
            }
            MacEvent::Discard { .. } => self.last_tx_end = self.last_tx_end.max(t),
            _ => {}
        }
    }
}

pub(super) fn run(sc: &Scenario) -> Outcome {
    let mut stats = HerdStats::default();
    let r = ethernet::run_observed(sc, trace::run_seed(sc), &mut stats);
    let n = sc.station_count() as f64;
    let g = |c: &str| r.metrics.get(c);
    let slot_us = sc.medium.slot_ps as f64 / 1e6;
    let table = vec![
        vec!["stations".into(), format!("{n}")],
        vec!["delivered".into(), format!("{}", g("delivered"))],
        vec![
            "dropped_excessive (16 collisions)".into(),
            format!("{}", g("dropped_excessive")),
        ],
        vec![
            "collisions (episodes on the bus)".into(),
            format!("{}", g("collisions")),
        ],
        vec![
            "collided transmissions (one per party)".into(),
            format!("{}", g("collision_involvements")),
        ],
        vec!["backoff draws".into(), stats.draws.to_string()],
        vec![
            "draws at the 1024-slot cap (k = 10)".into(),
            stats.capped_draws.to_string(),
        ],
        vec!["largest n reached".into(), stats.max_n.to_string()],
        vec![
            "the herd is through after".into(),
            format!(
                "{:.3} ms = {:.0} slots",
                stats.last_tx_end as f64 / 1e9,
                stats.last_tx_end as f64 / 1e6 / slot_us
            ),
        ],
    ];
    let done = g("delivered") + g("dropped_excessive");
    let checks = vec![
        check(
            "every frame delivered or discarded",
            format!("{n}"),
            format!("{done}"),
            done == n,
        ),
        check(
            "backoff windows reach the 1024-slot cap (k = 10)",
            "> 0 draws",
            stats.capped_draws.to_string(),
            stats.capped_draws > 0,
        ),
        if n <= 1024.0 {
            // The capped window (1024 slots) still outnumbers the herd.
            check(
                "frames discarded after 16 collisions: few or none (the window outgrows the herd)",
                format!("<= {:.0} (1 %)", n * 0.01),
                format!("{}", g("dropped_excessive")),
                g("dropped_excessive") <= n * 0.01,
            )
        } else {
            // 1024 slots cannot spread more than 1024 stations: most collide
            // until the attempt limit.
            check(
                "most frames discarded after 16 collisions (the herd outnumbers 1024 slots)",
                format!("> {:.0} (50 %)", n * 0.5),
                format!("{}", g("dropped_excessive")),
                g("dropped_excessive") > n * 0.5,
            )
        },
        check(
            "the largest collision count n goes past 10: backoff at the cap, again and again",
            "> 10",
            stats.max_n.to_string(),
            stats.max_n > 10,
        ),
        check(
            "the herd takes longer than its frames sent back to back (N × 67.2 µs)",
            format!("> {:.1} ms", n * 67.2e-3),
            format!("{:.1} ms", stats.last_tx_end as f64 / 1e9),
            stats.last_tx_end as f64 / 1e9 > n * 67.2e-3,
        ),
    ];
    Outcome {
        charts: vec![herd_chart(sc, &stats)],
        ..Outcome::of_table(table, checks)
    }
}

/// The frames through against time, under the bus's own limit: one frame
/// (preamble, frame, gap) after another, the k-th ending no earlier than
/// k (preamble + frame) + (k - 1) gap.
fn herd_chart(sc: &Scenario, stats: &HerdStats) -> LessonChart {
    let m = &sc.medium;
    let n = sc.station_count() as f64;
    let bits = sc.groups[0].frame.mean_bits();
    let cycle_ms = (m.preamble_ps as f64 + bits * m.bit_ps as f64 + m.ifg_ps as f64) / 1e9;
    let gap_ms = m.ifg_ps as f64 / 1e9;
    let end_ms = stats.last_tx_end as f64 / 1e9;
    let mut b = Builder::new(
        "The thundering herd: frames through against time",
        "time (ms)",
        "frames through (cumulative)",
    )
    .caption(format!(
        "{}: {n} stations, each with one frame at t = 0, one run. Line: the bus's limit, \
         the frames sent back to back ({:.1} µs each with preamble and gap), \
         (t + gap) / cycle, at most {n}. Points: the frames through by then in the run. \
         The gap between them is the time the herd spends colliding and backing off.",
        sc.name,
        cycle_ms * 1e3
    ));
    b.theory(
        "back to back: the bus's limit (theory)",
        0,
        grid(0.0, end_ms, 200).map(|t| (t, ((t + gap_ms) / cycle_ms).min(n))),
    );
    b.simulated(
        "frames through (simulated)",
        1,
        grid(0.0, end_ms, 40).map(|t| {
            let ps = (t * 1e9).round() as Time;
            let k = stats.through.partition_point(|&x| x <= ps);
            (t, Some(k as f64), None)
        }),
    );
    b.done("herd-through")
}
