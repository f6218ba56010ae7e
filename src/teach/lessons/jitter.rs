//! Lesson 9, jitter: synchronised stations under backoff without jitter
//! collide at every attempt; with full jitter or beb every frame gets through.

use super::beb_race::{contention_pmf, mean_and_variance};
use super::{backoff_of_kind, check, delay, fmt_ci, scenario_with, Lesson, LessonError, Outcome};
use crate::backoff::BackoffSpec;
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::ethernet::{self, MacEvent, Observer, RunResult};
use crate::sweep::Point;
use crate::teach::trace;
use toml::Value;

/// What lesson 9 watches in its traced run: each attempt's start per
/// station, each backoff wait, and the discards.
#[derive(Default)]
struct RetryStats {
    /// starts[attempt - 1]: the start times of that attempt, all stations.
    starts: Vec<Vec<Time>>,
    /// (station, n, wait).
    waits: Vec<(u32, u32, Time)>,
    discards: Vec<(u32, Time)>,
}

impl Observer for RetryStats {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        match ev {
            MacEvent::TxStart { attempt, .. } => {
                let i = (*attempt as usize).saturating_sub(1);
                if self.starts.len() <= i {
                    self.starts.resize(i + 1, Vec::new());
                }
                self.starts[i].push(t);
            }
            MacEvent::Backoff { n, delay, .. } => self.waits.push((station, *n, *delay)),
            MacEvent::Discard { .. } => self.discards.push((station, t)),
            _ => {}
        }
    }
}

/// Replications of lesson 9's jittered variants: enough to show that a
/// jittered contention always ends, and to measure its mean length.
pub const LESSON9_REPLICATIONS: u32 = 1000;
/// Lesson 9's pictures cover this much: five synchronised collisions.
const LESSON9_WINDOW: Time = 900_000_000;

/// The scenario as written (exponential backoff without jitter), traced,
/// then full jitter and beb, each over many replications.
pub(super) fn run(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let n = sc.station_count() as f64;
    let mut stats = RetryStats::default();
    let r = ethernet::run_observed(sc, trace::run_seed(sc), &mut stats);
    let g = |c: &str| r.metrics.get(c);
    let spec = &sc.groups[0].backoff;
    let limit = spec.attempt_limit();

    let mut variants = Vec::new();
    for (kind, keep) in [
        ("full-jitter", &["base", "cap", "attempt_limit"][..]),
        ("beb", &["attempt_limit"][..]),
    ] {
        let b = backoff_of_kind(lesson, overrides, kind, keep)?;
        let v = scenario_with(
            lesson,
            overrides,
            &[
                ("stations.0.backoff", b),
                ("replications", Value::Integer(LESSON9_REPLICATIONS as i64)),
            ],
        )?;
        variants.push((kind, v));
    }
    let pts: Vec<Point> = variants
        .iter()
        .map(|(_, v)| super::bus_point(vec![], v.clone()))
        .collect();
    let res = super::bus_runs(&pts);

    let mut table = vec![vec![
        "policy".to_string(),
        "runs".into(),
        "delivered".into(),
        "discarded".into(),
        "collisions per frame".into(),
    ]];
    let per_frame = |rs: &[RunResult]| {
        let v: Vec<f64> = rs
            .iter()
            .map(|r| r.metrics.get("collision_involvements") / n)
            .collect();
        crate::stats::mean_ci95(&v)
    };
    let total = |rs: &[RunResult], c: &str| rs.iter().map(|r| r.metrics.get(c)).sum::<f64>();
    table.push(vec![
        spec.kind().to_string(),
        "1 (all alike)".into(),
        format!("{}", g("delivered")),
        format!("{}", g("dropped_excessive")),
        format!("{}", g("collision_involvements") / n),
    ]);
    for ((kind, _), rs) in variants.iter().zip(&res) {
        table.push(vec![
            kind.to_string(),
            rs.len().to_string(),
            format!("{}", total(rs, "delivered")),
            format!("{}", total(rs, "dropped_excessive")),
            fmt_ci(per_frame(rs)),
        ]);
    }

    let mut checks = Vec::new();
    if let BackoffSpec::ExponentialNoJitter { base, cap, .. } = *spec {
        // Every attempt starts at one instant for all stations.
        let split = stats
            .starts
            .iter()
            .position(|s| s.iter().any(|&t| t != s[0]) || s.len() as f64 != n);
        checks.push(check(
            "no jitter: at every attempt all stations start at the same instant",
            format!("attempts 1 to {limit}, together"),
            match split {
                None => format!("attempts 1 to {}, together", stats.starts.len()),
                Some(i) => format!("attempt {} apart", i + 1),
            },
            split.is_none() && stats.starts.len() == limit as usize,
        ));
        let law = |k: u32| -> Time {
            let shift = k.saturating_sub(1).min(62);
            base.saturating_mul(1u64 << shift).min(cap)
        };
        let wrong = stats.waits.iter().find(|&&(_, k, d)| d != law(k));
        let shown: Vec<String> = (1..limit)
            .map(|k| format!("{}", law(k) / sc.medium.slot_ps.max(1)))
            .collect();
        checks.push(check(
            "no jitter: the wait after collision n is exactly min(cap, base 2^(n-1)), in slots",
            shown.join(", "),
            match wrong {
                None => format!("all {} waits so", stats.waits.len()),
                Some(&(s, k, d)) => format!("S{s} after n={k}: {} µs", trace::us(d)),
            },
            wrong.is_none() && !stats.waits.is_empty(),
        ));
        checks.push(check(
            "no jitter: every attempt collides (attempts = collisions = limit x stations)",
            format!("{} and {}", limit as f64 * n, limit as f64 * n),
            format!("{} and {}", g("attempts"), g("collision_involvements")),
            g("attempts") == limit as f64 * n && g("collision_involvements") == limit as f64 * n,
        ));
        checks.push(check(
            "no jitter: frames delivered, and discarded at the attempt limit",
            format!("0 and {n}"),
            format!("{} and {}", g("delivered"), g("dropped_excessive")),
            g("delivered") == 0.0 && g("dropped_excessive") == n,
        ));
        // Station 0's discard: each of its `limit` attempts lasts until its
        // jam ends (detection when the nearest station's first bit arrives,
        // the jam after the preamble at the earliest, 32 bits), and the
        // waits after collisions 1 to limit - 1 lie between them.
        let m = &sc.medium;
        let nearest = (1..sc.station_count())
            .map(|j| delay(sc, 0, j))
            .min()
            .unwrap_or(0);
        let cycle = nearest.max(m.preamble_ps) + m.jam_ps;
        let expect: Time = limit as Time * cycle + (1..limit).map(law).sum::<Time>();
        let seen = stats.discards.iter().find(|d| d.0 == 0).map(|d| d.1);
        checks.push(check(
            "no jitter: S0 gives up at limit x (detect + jam) + the sum of the waits",
            format!("{:.4} ms", expect as f64 / 1e9),
            seen.map(|t| format!("{:.4} ms", t as f64 / 1e9))
                .unwrap_or_else(|| "never".into()),
            seen == Some(expect),
        ));
    } else {
        checks.push(check(
            "the lesson's scenario uses backoff exponential-no-jitter",
            "exponential-no-jitter",
            spec.kind(),
            false,
        ));
    }
    for ((kind, _), rs) in variants.iter().zip(&res) {
        // Jitter makes a further collision ever less likely (the windows
        // double), so that a contention lasts to the attempt limit has a
        // probability far below 1e-9 per run: any discard is a failure.
        let frames = n * rs.len() as f64;
        let delivered = total(rs, "delivered");
        checks.push(check(
            format!("{kind}: every frame delivered, in every run"),
            format!("{frames}"),
            format!("{delivered}"),
            delivered == frames,
        ));
    }
    if sc.station_count() == 2 {
        // beb with two stations is lesson 3's race: E[C] = 1.6416 exactly.
        let (mean, var) = mean_and_variance(&contention_pmf(16));
        let rs = &res[1];
        let (seen, _) = per_frame(rs);
        let tol = 4.0 * (var / rs.len() as f64).sqrt();
        checks.push(check(
            "beb: collisions per frame = lesson 3's E[C] (whole-slot jitter)",
            format!("{mean:.4} ± {tol:.4}"),
            format!("{seen:.4}"),
            (seen - mean).abs() <= tol,
        ));
    }
    let mut fj = variants[0].1.clone();
    fj.replications = 1;
    fj.name = if sc.name.contains(spec.kind()) {
        sc.name.replace(spec.kind(), "full-jitter")
    } else {
        format!("{} (full-jitter)", sc.name)
    };
    Ok(Outcome {
        diagram_until: Some(LESSON9_WINDOW),
        more_pictures: vec![("full-jitter".into(), fj, LESSON9_WINDOW)],
        ..Outcome::of_table(table, checks)
    })
}
