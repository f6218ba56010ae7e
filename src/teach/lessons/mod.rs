//! The guided lessons of scenarios/lessons/: each a scenario file and an
//! explanation (embedded, so `csmacd lesson N` works from any directory),
//! plus the numbers the explanation promises. Running a lesson computes
//! those numbers from the simulator and checks them; the tests run the same
//! checks, so a lesson's text cannot silently stop being true.

use super::trace::{self, TraceFilter, TraceKind, TraceRow};
use crate::backoff::BackoffSpec;
use crate::engine::Time;
use crate::scenario::{self, reader::FieldError, Scenario, ScenarioError};
use crate::sim::{self, MacEvent, Observer, RunResult};
use crate::sweep::{self, Point};
use toml::{Table, Value};

/// One lesson: its number, files and title.
pub struct Lesson {
    pub number: u32,
    pub title: &'static str,
    /// The scenario's path in the repository, for messages.
    pub file: &'static str,
    pub scenario: &'static str,
    pub text: &'static str,
}

macro_rules! lesson {
    ($n:expr, $title:expr, $stem:literal) => {
        Lesson {
            number: $n,
            title: $title,
            file: concat!("scenarios/lessons/", $stem, ".toml"),
            scenario: include_str!(concat!("../../../scenarios/lessons/", $stem, ".toml")),
            text: include_str!(concat!("../../../scenarios/lessons/", $stem, ".md")),
        }
    };
}

/// Every lesson that runs on this build, in order.
pub const LESSONS: &[Lesson] = &[
    lesson!(1, "One frame on an idle bus", "1-one-frame"),
    lesson!(2, "Two stations collide, jam and back off", "2-collision"),
    lesson!(3, "The BEB race and its probabilities", "3-beb-race"),
    lesson!(4, "Why the minimum frame is 64 bytes", "4-minimum-frame"),
    lesson!(
        5,
        "Offered load vs throughput: the 37 % myth",
        "5-load-throughput"
    ),
    lesson!(6, "The capture effect, and BLAM", "6-capture-blam"),
    lesson!(
        7,
        "The thundering herd and BEB's 1024-slot cap",
        "7-thundering-herd"
    ),
    lesson!(8, "ALOHA vs CSMA vs CSMA/CD", "8-aloha-csma-csmacd"),
    lesson!(
        9,
        "Jitter: why backoff without it keeps colliding",
        "9-jitter"
    ),
];

pub fn find(number: u32) -> Option<&'static Lesson> {
    LESSONS.iter().find(|l| l.number == number)
}

/// A number the lesson promises, and what the run shows.
#[derive(Clone, Debug)]
pub struct Check {
    pub what: String,
    pub expected: String,
    pub seen: String,
    pub ok: bool,
}

fn check(
    what: impl Into<String>,
    expected: impl Into<String>,
    seen: impl Into<String>,
    ok: bool,
) -> Check {
    Check {
        what: what.into(),
        expected: expected.into(),
        seen: seen.into(),
        ok,
    }
}

/// What running a lesson shows.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The trace rows, for lessons that show the events one by one.
    pub rows: Vec<TraceRow>,
    /// A table to print (header first), for lessons that compare runs.
    pub table: Vec<Vec<String>>,
    pub checks: Vec<Check>,
    /// The window a diagram of this lesson should draw, if one helps.
    pub diagram_until: Option<Time>,
    /// The scenario as run (after overrides).
    pub scenario: Option<Scenario>,
    /// Further pictures beside the main one: (name, scenario, window).
    pub more_pictures: Vec<(String, Scenario, Time)>,
}

/// Why a lesson could not run: its scenario (with the overrides) is invalid.
#[derive(Debug, thiserror::Error)]
pub enum LessonError {
    #[error("no lesson {0}; lessons: {1}")]
    Unknown(u32, String),
    #[error("--set {0}: {1}")]
    Override(String, String),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// Sets a dotted path ("stations.0.count") in a scenario table: the same
/// rule as a sweep axis.
pub use crate::sweep::set_path;

/// Parses `PATH=VALUE` (VALUE as TOML, else as a string).
pub fn parse_override(text: &str) -> Result<(String, Value), String> {
    let (path, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not PATH=VALUE, e.g. stations.0.count=100000"))?;
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(value.to_string()));
    Ok((path.trim().to_string(), parsed))
}

/// The lesson's scenario with `overrides` applied and `extra` changes.
fn scenario_with(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    extra: &[(&str, Value)],
) -> Result<Scenario, LessonError> {
    let mut table = scenario::parse_table(lesson.file, lesson.scenario)?;
    for (p, v) in overrides {
        set_path(&mut table, p, v.clone()).map_err(|e| LessonError::Override(p.clone(), e))?;
    }
    for (p, v) in extra {
        set_path(&mut table, p, v.clone()).map_err(|e| LessonError::Override(p.to_string(), e))?;
    }
    scenario::validate(&table, lesson.file, &[]).map_err(|e: FieldError| {
        LessonError::Scenario(ScenarioError::at(lesson.file, lesson.scenario, e))
    })
}

/// Runs lesson `number` with `overrides` (dotted path, value) on its scenario.
pub fn run(number: u32, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let lesson = find(number).ok_or_else(|| {
        let list: Vec<String> = LESSONS.iter().map(|l| l.number.to_string()).collect();
        LessonError::Unknown(number, list.join(", "))
    })?;
    let sc = scenario_with(lesson, overrides, &[])?;
    let mut out = match number {
        1 => one_frame(&sc),
        2 => collision(&sc),
        3 => beb_race(&sc),
        4 => minimum_frame(lesson, overrides, &sc)?,
        5 => load_throughput(lesson, overrides)?,
        6 => capture(lesson, overrides)?,
        7 => thundering_herd(&sc),
        8 => access_methods(lesson, overrides)?,
        _ => jitter(lesson, overrides, &sc)?,
    };
    out.scenario = Some(sc);
    Ok(out)
}

fn rows_of(sc: &Scenario, until: Time) -> Vec<TraceRow> {
    let seed = trace::run_seed(sc);
    trace::collect(sc, seed, TraceFilter::new(sc, until, None))
}

fn first(rows: &[TraceRow], station: u32, pred: impl Fn(&TraceKind) -> bool) -> Option<&TraceRow> {
    rows.iter().find(|r| r.station == station && pred(&r.kind))
}

fn at(r: Option<&TraceRow>) -> String {
    r.map(|r| format!("{} µs", trace::us(r.t)))
        .unwrap_or_else(|| "never".into())
}

fn time_check(what: &str, r: Option<&TraceRow>, expected_ps: Time) -> Check {
    check(
        what,
        format!("{} µs", trace::us(expected_ps)),
        at(r),
        r.map(|r| r.t) == Some(expected_ps),
    )
}

/// Propagation time between two stations, in picoseconds, as the sim rounds it.
fn delay(sc: &Scenario, i: usize, j: usize) -> Time {
    let pos = sim::positions(sc, trace::run_seed(sc));
    let p = |x: f64| (x / sc.medium.speed * crate::units::PS_PER_S).round() as Time;
    p(pos[i]).abs_diff(p(pos[j]))
}

fn one_frame(sc: &Scenario) -> Outcome {
    let until = 100_000_000;
    let rows = rows_of(sc, until);
    let m = &sc.medium;
    let tx = m.preamble_ps + 64 * 8 * m.bit_ps;
    let checks = vec![
        time_check(
            "S0 starts sending (idle bus: no wait)",
            first(&rows, 0, |k| matches!(k, TraceKind::TxStart { .. })),
            0,
        ),
        time_check(
            "S0's first bit reaches S1 (1250 m at 2e8 m/s)",
            first(&rows, 1, |k| matches!(k, TraceKind::SignalArrives { .. })),
            delay(sc, 0, 1),
        ),
        time_check(
            "S0's first bit reaches S2 (2500 m)",
            first(&rows, 2, |k| matches!(k, TraceKind::SignalArrives { .. })),
            delay(sc, 0, 2),
        ),
        time_check(
            "S0 stops: 64 preamble bits + 512 frame bits at 0.1 µs/bit",
            first(&rows, 0, |k| matches!(k, TraceKind::TxSuccess)),
            tx,
        ),
        time_check(
            "S2 has the whole frame",
            first(&rows, 2, |k| {
                matches!(k, TraceKind::Delivered { intact: true, .. })
            }),
            tx + delay(sc, 0, 2),
        ),
        check(
            "collisions",
            "0",
            rows.iter()
                .filter(|r| matches!(r.kind, TraceKind::CollisionDetected { .. }))
                .count()
                .to_string(),
            !rows
                .iter()
                .any(|r| matches!(r.kind, TraceKind::CollisionDetected { .. })),
        ),
    ];
    Outcome {
        rows,
        checks,
        diagram_until: Some(until),
        ..Default::default()
    }
}

fn collision(sc: &Scenario) -> Outcome {
    let until = 220_000_000;
    let rows = rows_of(sc, until);
    let d = delay(sc, 0, 1);
    let m = &sc.medium;
    let start = |s: u32| {
        first(&rows, s, |k| matches!(k, TraceKind::TxStart { .. }))
            .map(|r| r.t)
            .unwrap_or(0)
    };
    let (s0, s1) = (start(0), start(1));
    let mut checks = vec![
        time_check(
            "S1 detects: S0's first bit arrives (S0's start + 10 µs)",
            first(&rows, 1, |k| {
                matches!(k, TraceKind::CollisionDetected { .. })
            }),
            s0 + d,
        ),
        time_check(
            "S0 detects: S1's first bit arrives (S1's start + 10 µs)",
            first(&rows, 0, |k| {
                matches!(k, TraceKind::CollisionDetected { .. })
            }),
            s1 + d,
        ),
    ];
    for s in [0, 1] {
        let jam = first(&rows, s, |k| matches!(k, TraceKind::Jam { .. }));
        let bits = jam.and_then(|r| match r.kind {
            TraceKind::Jam { end } => Some((end - r.t) / m.bit_ps),
            _ => None,
        });
        checks.push(check(
            format!("S{s}'s jam"),
            "32 bits",
            bits.map(|b| format!("{b} bits"))
                .unwrap_or_else(|| "none".into()),
            bits == Some(32),
        ));
        let n1 = first(&rows, s, |k| matches!(k, TraceKind::Backoff { n: 1, .. }));
        let r_ok = matches!(
            n1.map(|r| &r.kind),
            Some(TraceKind::Backoff {
                k: Some(1),
                r: Some(0 | 1),
                ..
            })
        );
        checks.push(check(
            format!("S{s}'s first backoff: n=1, r drawn from {{0, 1}}"),
            "k=1, r in {0, 1}",
            match n1.map(|r| &r.kind) {
                Some(TraceKind::Backoff {
                    k: Some(k),
                    r: Some(r),
                    ..
                }) => format!("k={k}, r={r}"),
                Some(TraceKind::Backoff { .. }) => "a wait without k and r".into(),
                _ => "none".into(),
            },
            r_ok,
        ));
    }
    let delivered = rows
        .iter()
        .filter(|r| matches!(r.kind, TraceKind::Delivered { intact: true, .. }))
        .count();
    checks.push(check(
        "frames delivered in the end",
        "2",
        delivered.to_string(),
        delivered == 2,
    ));
    Outcome {
        rows,
        checks,
        diagram_until: Some(until),
        ..Default::default()
    }
}

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

fn runs(sc: &Scenario) -> Vec<RunResult> {
    let pts = vec![Point::new(vec![], sc.clone())];
    sweep::run_points(&pts, &|| {}).remove(0)
}

fn beb_race(sc: &Scenario) -> Outcome {
    let results = runs(sc);
    let n = results.len() as f64;
    // Each contention ends with one winner; each collision is seen by both.
    let c: Vec<u32> = results
        .iter()
        .map(|r| (r.metrics.get("collisions") / 2.0).round() as u32)
        .collect();
    let pmf = contention_pmf(16);
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
        table,
        checks,
        ..Default::default()
    }
}

fn metric_row(label: &str, r: &RunResult, cols: &[&str]) -> Vec<String> {
    let mut row = vec![label.to_string()];
    for c in cols {
        let v = r.metrics.get(c);
        row.push(if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.3}")
        });
    }
    row
}

fn minimum_frame(
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
    let long = sim::run(sc, trace::run_seed(sc));
    let std_sc = scenario_with(
        lesson,
        overrides,
        &[("medium.length", Value::String("2500m".into()))],
    )?;
    let short = sim::run(&std_sc, trace::run_seed(&std_sc));
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
    Ok(Outcome {
        table,
        checks,
        ..Default::default()
    })
}

/// The points of a two-axis grid over the lesson's scenario: `axis` takes
/// each of `values` (outer), the offered load each of `loads` (inner).
fn by_load_points(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    axis: &str,
    values: &[&str],
    loads: &[f64],
) -> Result<Vec<Point>, LessonError> {
    let mut points = Vec::new();
    for &v in values {
        for &load in loads {
            let sc = scenario_with(
                lesson,
                overrides,
                &[
                    (axis, Value::String(v.into())),
                    ("stations.0.traffic.load", Value::Float(load)),
                ],
            )?;
            points.push(Point::new(
                vec![
                    (axis.into(), v.into()),
                    ("stations.0.traffic.load".into(), load.to_string()),
                ],
                sc,
            ));
        }
    }
    Ok(points)
}

/// The loads lesson 5 sweeps, and the frame sizes it compares.
pub const LESSON5_LOADS: &[f64] = &[0.1, 0.3, 0.5, 0.7, 0.9, 1.2, 2.0];
pub const LESSON5_FRAMES: &[&str] = &["1518B", "64B"];

fn load_throughput(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let points = by_load_points(
        lesson,
        overrides,
        "stations.0.frame",
        LESSON5_FRAMES,
        LESSON5_LOADS,
    )?;
    let results = sweep::run_points(&points, &|| {});
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
    Ok(Outcome {
        table,
        checks,
        ..Default::default()
    })
}

/// Counts what the thundering herd shows: backoff windows and the end.
#[derive(Default)]
struct HerdStats {
    max_n: u32,
    capped_draws: u64,
    draws: u64,
    last_tx_end: Time,
    successes: u64,
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
                self.last_tx_end = self.last_tx_end.max(t);
            }
            MacEvent::Discard { .. } => self.last_tx_end = self.last_tx_end.max(t),
            _ => {}
        }
    }
}

fn thundering_herd(sc: &Scenario) -> Outcome {
    let mut stats = HerdStats::default();
    let r = sim::run_observed(sc, trace::run_seed(sc), &mut stats);
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
            "collisions (each seen by every party)".into(),
            format!("{}", g("collisions")),
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
        table,
        checks,
        ..Default::default()
    }
}

/// A backoff table of another `kind`, carrying over the parameters named in
/// `keep` from the lesson's `stations.0.backoff` (after `overrides`).
fn backoff_of_kind(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    kind: &str,
    keep: &[&str],
) -> Result<Value, LessonError> {
    let mut table = scenario::parse_table(lesson.file, lesson.scenario)?;
    for (p, v) in overrides {
        set_path(&mut table, p, v.clone()).map_err(|e| LessonError::Override(p.clone(), e))?;
    }
    let old = table
        .get("stations")
        .and_then(|s| s.get(0))
        .and_then(|g| g.get("backoff"))
        .and_then(Value::as_table)
        .cloned()
        .unwrap_or_default();
    let mut backoff = Table::new();
    backoff.insert("kind".into(), Value::String(kind.into()));
    for key in keep {
        if let Some(v) = old.get(*key) {
            backoff.insert(key.to_string(), v.clone());
        }
    }
    Ok(Value::Table(backoff))
}

/// The mean of a metric over a point's replications, with its 95 % half-width.
fn mean_of(results: &[RunResult], column: &str) -> (f64, f64) {
    let v: Vec<f64> = results.iter().map(|r| r.metrics.get(column)).collect();
    crate::stats::mean_ci95(&v)
}

fn fmt_ci((m, hw): (f64, f64)) -> String {
    if hw.is_finite() {
        format!("{m:.3} ± {hw:.3}")
    } else {
        format!("{m:.3}")
    }
}

/// Lesson 6: two saturated stations under `beb` (the scenario as written)
/// and under `blam`, on the same seeds (common random numbers).
fn capture(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let beb_sc = scenario_with(lesson, overrides, &[])?;
    let blam = backoff_of_kind(
        lesson,
        overrides,
        "blam",
        &["backoff_limit", "attempt_limit"],
    )?;
    let blam_sc = scenario_with(lesson, overrides, &[("stations.0.backoff", blam)])?;
    let pts = vec![
        Point::new(vec![], beb_sc.clone()),
        Point::new(vec![], blam_sc),
    ];
    let res = sweep::run_points(&pts, &|| {});
    let (beb, blam) = (&res[0], &res[1]);
    let cols = [
        "capture_mean_run",
        "capture_max_run",
        "dropped_excessive",
        "collisions",
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
        table,
        checks,
        ..Default::default()
    })
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

/// Lesson 8: the same stations under each access method, load by load.
fn access_methods(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let points = by_load_points(
        lesson,
        overrides,
        "medium.access",
        LESSON8_ACCESS,
        LESSON8_LOADS,
    )?;
    let results = sweep::run_points(&points, &|| {});
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
    let sc = &points[0].scenario;
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
    Ok(Outcome {
        table,
        checks,
        ..Default::default()
    })
}

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

/// Lesson 9: synchronised stations under exponential backoff without jitter
/// (the scenario as written), then with full jitter and with beb.
fn jitter(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    sc: &Scenario,
) -> Result<Outcome, LessonError> {
    let n = sc.station_count() as f64;
    let mut stats = RetryStats::default();
    let r = sim::run_observed(sc, trace::run_seed(sc), &mut stats);
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
        .map(|(_, v)| Point::new(vec![], v.clone()))
        .collect();
    let res = sweep::run_points(&pts, &|| {});

    let mut table = vec![vec![
        "policy".to_string(),
        "runs".into(),
        "delivered".into(),
        "discarded".into(),
        "collisions per frame".into(),
    ]];
    let per_frame = |rs: &[RunResult]| {
        let v: Vec<f64> = rs.iter().map(|r| r.metrics.get("collisions") / n).collect();
        crate::stats::mean_ci95(&v)
    };
    let total = |rs: &[RunResult], c: &str| rs.iter().map(|r| r.metrics.get(c)).sum::<f64>();
    table.push(vec![
        spec.kind().to_string(),
        "1 (all alike)".into(),
        format!("{}", g("delivered")),
        format!("{}", g("dropped_excessive")),
        format!("{}", g("collisions") / n),
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
            format!("{} and {}", g("attempts"), g("collisions")),
            g("attempts") == limit as f64 * n && g("collisions") == limit as f64 * n,
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
        let pmf = contention_pmf(16);
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
        table,
        checks,
        diagram_until: Some(LESSON9_WINDOW),
        more_pictures: vec![("full-jitter".into(), fj, LESSON9_WINDOW)],
        ..Default::default()
    })
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
        let mean: f64 = p.iter().enumerate().map(|(k, q)| (k + 1) as f64 * q).sum();
        assert!((mean - 1.6416).abs() < 1e-4, "{mean}");
    }

    #[test]
    fn overrides_set_nested_paths() {
        let mut t: Table = "[[stations]]\ncount = 2\n".parse().unwrap();
        let (p, v) = parse_override("stations.0.count=100000").unwrap();
        set_path(&mut t, &p, v).unwrap();
        assert_eq!(t["stations"][0]["count"].as_integer(), Some(100000));
        let (p, v) = parse_override("medium.length=10km").unwrap();
        set_path(&mut t, &p, v).unwrap();
        assert_eq!(t["medium"]["length"].as_str(), Some("10km"));
        assert!(set_path(&mut t, "stations.5.count", Value::Integer(1)).is_err());
    }
}
