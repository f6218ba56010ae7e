//! Lesson 8, ALOHA vs CSMA vs CSMA/CD: the same stations under each access
//! method, load by load, against the ALOHA closed forms.

use super::chart::{grid, Builder, LessonChart};
use super::{by_load_points, check, Lesson, LessonError, Outcome};
use crate::ethernet::{RunResult, Scenario};
use toml::Value;

/// Pure ALOHA (Abramson): S = G e^(-2G).
pub fn aloha(g: f64) -> f64 {
    g * (-2.0 * g).exp()
}

/// Slotted ALOHA (Roberts) with frames filling `fill` of a slot: G_s = G /
/// fill attempts per slot, S = G e^(-G_s).
pub fn slotted_aloha(g: f64, fill: f64) -> f64 {
    g * (-g / fill).exp()
}

/// 1-persistent CSMA (Kleinrock and Tobagi 1975, unslotted), `a` the
/// end-to-end propagation delay over the frame time:
/// S = G [1 + G + aG (1 + G + aG/2)] e^(-G(1+2a)) / (G (1+2a) - (1 - e^(-aG)) + (1 + aG) e^(-G(1+a))).
pub fn csma_1_persistent(g: f64, a: f64) -> f64 {
    let num = g * (1.0 + g + a * g * (1.0 + g + a * g / 2.0)) * (-g * (1.0 + 2.0 * a)).exp();
    let den = g * (1.0 + 2.0 * a) - (1.0 - (-a * g).exp()) + (1.0 + a * g) * (-g * (1.0 + a)).exp();
    num / den
}

/// The access methods lesson 8 compares, in the textbook's order (worst
/// first at high load), and the offered loads it sweeps.
pub const LESSON8_ACCESS: &[&str] = &["aloha", "slotted-aloha", "csma", "csma-cd"];
pub const LESSON8_LOADS: &[f64] = &[0.1, 0.2, 0.3, 0.6, 1.0, 2.0];

/// One point of lesson 8: throughput S, attempt load G, and S's standard error.
struct AccessPoint {
    s: f64,
    g: f64,
    attempts: f64,
    sd: f64,
}

impl AccessPoint {
    fn of(r: &RunResult) -> Self {
        let (s, g) = (r.metrics.get("throughput"), r.metrics.get("attempt_load"));
        let attempts = r.metrics.get("attempts");
        let delivered = r.metrics.get("delivered");
        // Successes out of A attempts, close to Binomial(A, q): S = K G / A
        // has standard deviation sqrt(A q (1 - q)) G / A, q = K / A.
        let q = if attempts > 0.0 {
            delivered / attempts
        } else {
            0.0
        };
        let sd = if attempts > 0.0 {
            (attempts * q * (1.0 - q)).max(1.0).sqrt() * g / attempts
        } else {
            0.0
        };
        AccessPoint { s, g, attempts, sd }
    }
}

pub(super) fn run(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let points = by_load_points(
        lesson,
        overrides,
        "medium.access",
        LESSON8_ACCESS,
        LESSON8_LOADS,
    )?;
    let results = super::bus_runs(&points);
    let nl = LESSON8_LOADS.len();
    let at = |a: usize, l: usize| AccessPoint::of(&results[a * nl + l][0]);
    let mut table = vec![["offered load"]
        .iter()
        .chain(LESSON8_ACCESS.iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>()];
    for (l, load) in LESSON8_LOADS.iter().enumerate() {
        let mut row = vec![format!("{load:.1}")];
        for a in 0..LESSON8_ACCESS.len() {
            let p = at(a, l);
            row.push(format!("S {:.3} (G {:.2})", p.s, p.g));
        }
        table.push(row);
    }
    let sc = points[0]
        .scenario
        .ethernet()
        .expect("the lesson's scenarios are bus scenarios");
    // Slotted ALOHA: a frame fills frame/slot of a slot (the rest is guard).
    let frame_bits = sc.groups[0].frame.mean_bits();
    let fill = frame_bits * sc.medium.bit_ps as f64 / sc.medium.slot_ps as f64;
    let e = std::f64::consts::E;
    table.push(vec![
        "theory, peak".into(),
        format!("S {:.3} (G 0.50)", 1.0 / (2.0 * e)),
        format!("S {:.3} (G {fill:.2})", fill / e),
        String::new(),
        String::new(),
    ]);

    let mut checks = Vec::new();
    let window_ps = (sc.duration - sc.warmup) as f64;
    let slots = window_ps / sc.medium.slot_ps as f64;
    for (a, name) in [(0usize, "aloha"), (1, "slotted-aloha")] {
        for (l, load) in LESSON8_LOADS.iter().enumerate() {
            let p = at(a, l);
            if p.attempts == 0.0 {
                continue;
            }
            // Pure ALOHA: a frame survives if no other attempt starts within
            // one frame time before or after it: P = e^(-2G), S = G e^(-2G).
            // Slotted: if no other attempt shares its slot: with G_s attempts
            // per slot, P = e^(-G_s), S = G e^(-G_s). Given the A attempts, the
            // successes are close to Binomial(A, P): standard deviation
            // sqrt(A P (1 - P)) G / A; the bound is 4 of them. (Pure ALOHA on
            // a 100 m bus: a frame clean at its sender can still be hit at its
            // destination, widening the vulnerable time by at most the
            // end-to-end delay, a = 0.01 frame: S lower by at most a factor
            // e^(-aG), 2 % at G = 2, well inside the bound.)
            let survive = if a == 0 {
                (-2.0 * p.g).exp()
            } else {
                (-p.attempts / slots).exp()
            };
            let expect = p.g * survive;
            let sd = (p.attempts * survive * (1.0 - survive)).sqrt() * p.g / p.attempts;
            let law = if a == 0 { "G e^-2G" } else { "G e^-Gs" };
            checks.push(check(
                format!(
                    "{name}, offered {load:.1}: S = {law} at the measured G = {:.3}",
                    p.g
                ),
                format!("{expect:.3} ± {:.3}", 4.0 * sd),
                format!("{:.3}", p.s),
                (p.s - expect).abs() <= 4.0 * sd,
            ));
        }
    }
    let high = nl - 1;
    for a in 1..LESSON8_ACCESS.len() {
        let (lo, hi) = (at(a - 1, high), at(a, high));
        // The two throughputs are independent runs: their difference has
        // standard deviation sqrt(sd_lo^2 + sd_hi^2).
        let margin = 4.0 * (lo.sd.powi(2) + hi.sd.powi(2)).sqrt();
        checks.push(check(
            format!(
                "offered {:.1}: {} < {} (by more than 4 sd)",
                LESSON8_LOADS[high],
                LESSON8_ACCESS[a - 1],
                LESSON8_ACCESS[a]
            ),
            format!("{:.3} < {:.3} - {margin:.3}", lo.s, hi.s),
            format!("{:.3} < {:.3}", lo.s, hi.s),
            lo.s + margin < hi.s,
        ));
    }
    let measured: Vec<Vec<AccessPoint>> = (0..LESSON8_ACCESS.len())
        .map(|a| (0..nl).map(|l| at(a, l)).collect())
        .collect();
    Ok(Outcome {
        charts: vec![access_chart(sc, &measured)],
        ..Outcome::of_table(table, checks)
    })
}

/// Throughput against attempt load for each access method: the closed
/// forms as lines, the simulation as points with their binomial 95 %
/// intervals.
fn access_chart(sc: &Scenario, measured: &[Vec<AccessPoint>]) -> LessonChart {
    let m = &sc.medium;
    let frame_ps = sc.groups[0].frame.mean_bits() * m.bit_ps as f64;
    let fill = frame_ps / m.slot_ps as f64;
    let a = sc.max_delay_ps() as f64 / frame_ps;
    let top = measured.iter().flatten().map(|p| p.g).fold(2.0, f64::max) * 1.05;
    let mut b = Builder::new(
        "ALOHA, slotted ALOHA and CSMA against their closed forms, and CSMA/CD",
        "attempt load G (transmissions per frame time, retransmissions included)",
        "throughput S",
    )
    .caption(format!(
        "{}: {} stations, one run per point (offered loads {}). Lines: pure ALOHA \
         S = G e^-2G; slotted ALOHA S = G e^-G/f, frames filling f = {fill:.3} of a slot; \
         1-persistent CSMA (Kleinrock and Tobagi), a = {a:.4} (end-to-end delay over \
         the frame time). CSMA/CD has no line (its closed form, Tobagi and Hunt's \
         unslotted 1-persistent CSMA/CD, is not drawn): its collisions end after \
         detection and the jam, so it stays above CSMA. Points: the simulation, with \
         95 % intervals of the successes among the attempts.",
        sc.name,
        sc.station_count(),
        LESSON8_LOADS
            .iter()
            .map(|l| format!("{l}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let xs = || grid(0.0, top, 120);
    b.theory("aloha: G e^-2G (theory)", 0, xs().map(|g| (g, aloha(g))));
    b.theory(
        "slotted-aloha: G e^-G/f (theory)",
        1,
        xs().map(|g| (g, slotted_aloha(g, fill))),
    );
    b.theory(
        "csma: 1-persistent, Kleinrock-Tobagi (theory)",
        2,
        xs().skip(1).map(|g| (g, csma_1_persistent(g, a))),
    );
    for (k, (name, pts)) in LESSON8_ACCESS.iter().zip(measured).enumerate() {
        b.simulated(
            &format!("{name} (simulated)"),
            k,
            pts.iter().map(|p| {
                let ci = (p.attempts > 0.0).then_some((p.s - 1.96 * p.sd, p.s + 1.96 * p.sd));
                (p.g, Some(p.s), ci)
            }),
        );
    }
    b.done("throughput-vs-attempt-load")
}
