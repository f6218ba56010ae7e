//! Lesson 3, the BEB race: how many collisions two stations' contention
//! lasts, against the exact distribution.

use super::chart::{wilson, Builder, LessonChart};
use super::{check, Outcome};
use crate::ethernet::Scenario;

/// P(C = c): the two stations' contention lasts exactly c collisions. After
/// the j-th collision they collide again with probability 2^-min(j, 10).
pub fn contention_pmf(max: u32) -> Vec<f64> {
    let mut out = Vec::new();
    let mut again = 1.0; // P(C >= c)
    for c in 1..=max {
        let p = 0.5f64.powi(c.min(10) as i32);
        out.push(again * (1.0 - p));
        again *= p;
    }
    out
}

/// The mean and variance of C over `pmf` (P(C = 1), P(C = 2), ...).
pub(super) fn mean_and_variance(pmf: &[f64]) -> (f64, f64) {
    let mean: f64 = pmf
        .iter()
        .enumerate()
        .map(|(k, p)| (k + 1) as f64 * p)
        .sum();
    let var: f64 = pmf
        .iter()
        .enumerate()
        .map(|(k, p)| ((k + 1) as f64 - mean).powi(2) * p)
        .sum();
    (mean, var)
}

pub(super) fn run(sc: &Scenario) -> Outcome {
    let pts = vec![super::bus_point(vec![], sc.clone())];
    let results = super::bus_runs(&pts).remove(0);
    let n = results.len() as f64;
    // Each contention ends with one winner; each collision is seen by both.
    let c: Vec<u32> = results
        .iter()
        .map(|r| r.metrics.get("collisions") as u32)
        .collect();
    let pmf = contention_pmf(16);
    let (mean, var) = mean_and_variance(&pmf);
    let seen_mean = c.iter().map(|&x| x as f64).sum::<f64>() / n;
    let mut table = vec![vec![
        "collisions C".to_string(),
        "runs".into(),
        "fraction".into(),
        "exact P(C)".into(),
    ]];
    let mut checks = Vec::new();
    for k in 1..=5u32 {
        let count = c.iter().filter(|&&x| x == k).count();
        let f = count as f64 / n;
        let p = pmf[k as usize - 1];
        table.push(vec![
            k.to_string(),
            count.to_string(),
            format!("{f:.4}"),
            format!("{p:.4}"),
        ]);
        if k <= 3 {
            // A fraction of n independent runs has standard error
            // sqrt(p(1-p)/n); 4 of them leave a 6e-5 chance of a false alarm.
            let tol = 4.0 * (p * (1.0 - p) / n).sqrt();
            checks.push(check(
                format!("P(C={k})"),
                format!("{p:.4} ± {tol:.4}"),
                format!("{f:.4}"),
                (f - p).abs() <= tol,
            ));
        }
    }
    // The mean of n runs has standard error sqrt(Var C / n).
    let tol = 4.0 * (var / n).sqrt();
    checks.push(check(
        "E[C], mean collisions per contention",
        format!("{mean:.4} ± {tol:.4}"),
        format!("{seen_mean:.4}"),
        (seen_mean - mean).abs() <= tol,
    ));
    let all_delivered = results.iter().all(|r| r.metrics.get("delivered") == 2.0);
    checks.push(check(
        "every contention ends with both frames delivered",
        "yes",
        if all_delivered { "yes" } else { "no" },
        all_delivered,
    ));
    Outcome {
        charts: vec![race_chart(&c, &pmf, &sc.name)],
        ..Outcome::of_table(table, checks)
    }
}

/// The exact P(C = c) as bars, and the fraction of the runs whose
/// contention lasted c collisions, with its 95 % interval, as points.
fn race_chart(c: &[u32], pmf: &[f64], name: &str) -> LessonChart {
    let n = c.len() as f64;
    // As far as the runs reach, and the theory while a run could show it.
    let seen = c.iter().copied().max().unwrap_or(1);
    let likely = (1..=pmf.len() as u32)
        .take_while(|&k| pmf[k as usize - 1] * n >= 0.1)
        .last()
        .unwrap_or(1);
    let last = seen.max(likely).min(pmf.len() as u32);
    let mut b = Builder::new(
        "The BEB race: how many collisions two stations' contention lasts",
        "collisions C until both frames are through",
        "probability P(C = c), log scale",
    )
    .log_y()
    .caption(format!(
        "{name}: {} contentions (replications). Bars: the exact distribution, \
         P(C = c) = (1 - 2^-min(c,10)) x the product of 2^-min(j,10) for j < c. \
         Points: the fraction of the runs, with its 95 % Wilson interval; a c no run \
         reached has no point; the bars stop where fewer than 0.1 runs would show.",
        c.len()
    ));
    b.theory_bars(
        "exact P(C = c) (theory)",
        0,
        (1..=last).map(|k| (k as f64, pmf[k as usize - 1])),
    );
    b.simulated(
        "fraction of the runs (simulated)",
        1,
        (1..=last).map(|k| {
            let count = c.iter().filter(|&&x| x == k).count() as f64;
            let y = (count > 0.0).then_some(count / n);
            (k as f64, y, y.map(|_| wilson(count, n)))
        }),
    );
    b.done("beb-race")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_probabilities_match_the_textbook() {
        let p = contention_pmf(16);
        assert!((p[0] - 0.5).abs() < 1e-12);
        assert!((p[1] - 0.375).abs() < 1e-12);
        assert!((p[2] - 7.0 / 64.0).abs() < 1e-12);
        assert!((p[3] - 15.0 / 1024.0).abs() < 1e-12);
        let (mean, _) = mean_and_variance(&p);
        assert!((mean - 1.6416).abs() < 1e-4, "{mean}");
    }
}
