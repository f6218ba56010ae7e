//! Running a lesson file: its scenario's replications and each variant's it
//! needs (all in parallel, as a sweep's points), then its checks and
//! questions judged on them, its table and its charts (runs.rs answers the
//! queries its expressions ask).

use super::file::{CheckSpec, LessonFile, Num, QuestionSpec, Rule, ScenarioOrSet};
use super::queries::{self, Query};
use super::runs::{Ran, Runs};
use super::{Check, LessonError, Outcome};
use crate::engine::Time;
use crate::expr::EvalError;
use crate::sweep::{self, Point};
use crate::teach::trace::{self, TraceFilter};
use toml::Value;

pub use super::runs::show;

/// A question answered by the run: the true value and how near an answer
/// must come.
#[derive(Clone, Debug)]
pub struct Answer {
    pub ask: String,
    pub unit: String,
    /// The run's value (the mean over replications when asked so), or why
    /// there is none.
    pub value: Result<f64, String>,
    /// The absolute tolerance around the value.
    pub tolerance: f64,
}

impl Answer {
    /// Whether `given` (a number, optionally followed by the unit) is right.
    pub fn grade(&self, given: &str) -> Option<bool> {
        let v = self.value.as_ref().ok()?;
        let text = given.trim();
        let text = text
            .strip_suffix(self.unit.as_str())
            .filter(|_| !self.unit.is_empty())
            .unwrap_or(text)
            .trim();
        let g: f64 = text.replace(',', ".").parse().ok()?;
        Some((g - v).abs() <= self.tolerance || (g.is_infinite() && g == *v))
    }
}

/// Which variants the lesson's checks, questions, table and charts read.
fn needed(lesson: &LessonFile) -> Vec<bool> {
    let mut used = vec![false; lesson.variants.len()];
    let mut mark = |v: Option<usize>| {
        if let Some(k) = v {
            used[k] = true;
        }
    };
    lesson.checks.iter().for_each(|c| mark(c.variant));
    for (k, v) in lesson.variants.iter().enumerate() {
        if v.picture {
            mark(Some(k));
        }
    }
    lesson.questions.iter().for_each(|q| mark(q.variant));
    if let Some(t) = &lesson.table {
        t.rows.variants().into_iter().for_each(&mut mark);
    }
    for c in &lesson.charts {
        c.rows.variants().into_iter().for_each(&mut mark);
    }
    let names = queries::names();
    for (_, e) in lesson.expressions() {
        for (id, texts) in e.host_calls(&names) {
            if matches!(Query::of(id), Query::MetricOf | Query::Ci95Of) {
                mark(lesson.variants.iter().position(|v| v.name == texts[0]));
            }
        }
    }
    used
}

/// Whether an expression asks for the signal rows of the trace.
fn wants_signals(lesson: &LessonFile) -> bool {
    let names = queries::names();
    lesson.expressions().iter().any(|(_, e)| {
        e.host_calls(&names)
            .iter()
            .any(|(_, texts)| texts.iter().any(|t| t.starts_with("signal-")))
    })
}

/// Runs lesson file `lesson` with `overrides`: its scenario and the
/// variants it needs, every replication of every one in parallel (results
/// in a fixed order, so the same on any number of threads); then its
/// checks, questions, table and charts.
pub fn run(lesson: &LessonFile, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let make = |variant: Option<usize>| {
        lesson
            .scenario_with(overrides, variant)
            .map_err(|e| match e {
                ScenarioOrSet::Scenario(e) => LessonError::Scenario(e),
                ScenarioOrSet::Set(p, m) => LessonError::Override(p, m),
            })
    };
    // The lesson's own seeds are those of `csmacd run` and `trace` on its
    // scenario; a [[variant]] runs on them too (its difference is the
    // what-if's alone), as do the grid's with common_random_numbers; else a
    // grid's variant has the seed a sweep's point of the same values has.
    let base_sc = make(None)?;
    let base = Point::new(vec![], base_sc.clone());
    let used = needed(lesson);
    let mut points = vec![(base, lesson.title.clone())];
    let mut slot = vec![None; lesson.variants.len()];
    for (k, v) in lesson.variants.iter().enumerate() {
        if !used[k] {
            continue;
        }
        let sc = make(Some(k))?;
        let point = match &v.grid {
            Some(g) if !lesson.common_random_numbers => {
                let seed = sweep::point_seed(sc.seed(), &g.keys);
                Point::seeded(g.labels.clone(), sc, seed)
            }
            _ => Point::new(vec![], sc),
        };
        slot[k] = Some(points.len());
        points.push((point, v.name.clone()));
    }
    let just: Vec<Point> = points.iter().map(|(p, _)| p.clone()).collect();
    let results = sweep::run_points(&just, &|sc, seed| sc.run(seed), &|| {});
    let signals = wants_signals(lesson);
    let mut runs: Vec<Option<Runs>> = Vec::with_capacity(points.len());
    for ((p, label), r) in points.iter().zip(results) {
        runs.push(Some(Runs::of(p, r, label, signals)?));
    }
    let base = runs[0].take().expect("the lesson's own runs");
    let variants = slot
        .iter()
        .map(|s| s.and_then(|i| runs[i].take()))
        .collect();
    let ran = Ran {
        base,
        variants,
        names: lesson.variants.iter().map(|v| v.name.clone()).collect(),
        left_out: lesson.left_out(overrides),
    };
    let checks = lesson
        .checks
        .iter()
        .filter(|c| c.variant.is_none_or(|k| !ran.left_out[k]) && applies(c, &ran))
        .map(|c| judge(c, &ran))
        .collect();
    let answers = lesson.questions.iter().map(|q| answer(q, &ran)).collect();
    let table = lesson
        .table
        .as_ref()
        .map(|t| t.render(&ran, &lesson.variants))
        .unwrap_or_default();
    let charts = lesson
        .charts
        .iter()
        .map(|c| c.build(&ran, &lesson.variants, &lesson.axes))
        .collect();
    let mut out = Outcome {
        checks,
        answers,
        table,
        charts,
        ..Default::default()
    };
    if let Some(sc) = ran.base.scenario.ethernet() {
        let window = window(lesson, &ran.base);
        // A lesson that compares runs in a table or charts prints its trace
        // only when it names the window to print.
        // Its page and pictures then look for what to show (the first
        // collision) as a built-in lesson's do.
        let compares = lesson.table.is_some() || !lesson.charts.is_empty();
        if lesson.window.is_some() || !compares {
            out.rows = trace::collect(sc, ran.base.seed(0), TraceFilter::new(sc, window, None));
            out.diagram_until = Some(window);
        }
        out.scenario = Some(sc.clone());
        if let Some(until) = out.diagram_until {
            for (k, v) in lesson.variants.iter().enumerate() {
                let drawn = ran.variants[k].as_ref().filter(|_| v.picture);
                if let Some(vsc) = drawn.and_then(|r| r.scenario.ethernet()) {
                    let mut one = vsc.clone();
                    one.replications = 1;
                    out.more_pictures.push((v.name.clone(), one, until));
                }
            }
        }
    }
    Ok(out)
}

/// The window the trace, the pictures and the page show: the file's
/// `window` (at most the run), else as `csmacd view` chooses one: one slot
/// after the first frame of every station that sent has been decided (sent
/// whole or discarded) in the first run, at most 40 slots.
fn window(lesson: &LessonFile, runs: &Runs) -> Time {
    let Some(sc) = runs.scenario.ethernet() else {
        return 0;
    };
    match lesson.window {
        Some(w) => {
            (w.to_ps(sc.medium.bit_ps, sc.medium.slot_ps).round() as Time).clamp(1, sc.duration)
        }
        // The lesson's own runs are a point without axes: replication 0
        // has the seed `csmacd view` runs.
        None => trace::default_window(sc),
    }
}

/// A bound's value on the check's runs.
fn bound(n: &Num, ran: &Ran, c: &CheckSpec) -> Result<f64, EvalError> {
    match n {
        Num::Const(v) => Ok(*v),
        Num::Expr(e) => ran.value(c.variant, e, None, &[]),
    }
}

/// How a rule reads for a reader, and whether `v` (give or take `slack`)
/// keeps it.
/// Whether a value (give or take a slack) keeps a rule.
type Keeps = Box<dyn Fn(f64, f64) -> bool>;

fn rule_of(c: &CheckSpec, ran: &Ran) -> Result<(String, Keeps), EvalError> {
    match &c.rule {
        Rule::Expect { value, tolerance } => {
            let value = bound(value, ran, c)?;
            let given = tolerance.as_ref().map(|t| bound(t, ran, c)).transpose()?;
            // "never" (infinitely late) is met only by never: no rounding.
            let exact = if value.is_finite() {
                value.abs() * EXACT
            } else {
                0.0
            };
            let tolerance = given.unwrap_or(exact);
            let text = if tolerance > value.abs() * 1e-6 && given.is_some() {
                format!("{} ± {}", show(value, ""), show(tolerance, &c.unit))
            } else {
                show(value, &c.unit)
            };
            Ok((
                text,
                Box::new(move |v, slack| {
                    (v - value).abs() <= tolerance + slack || (v.is_infinite() && v == value)
                }),
            ))
        }
        Rule::Range { lo, hi } => {
            let lo = lo
                .as_ref()
                .map(|(n, strict)| bound(n, ran, c).map(|v| (v, *strict)))
                .transpose()?;
            let hi = hi
                .as_ref()
                .map(|(n, strict)| bound(n, ran, c).map(|v| (v, *strict)))
                .transpose()?;
            let text = match (lo, hi) {
                (Some((l, false)), Some((h, false))) => {
                    format!("in [{}, {}]", show(l, ""), show(h, &c.unit))
                }
                (Some((l, sl)), Some((h, sh))) => format!(
                    "{} {} and {} {}",
                    if sl { ">" } else { ">=" },
                    show(l, &c.unit),
                    if sh { "<" } else { "<=" },
                    show(h, &c.unit)
                ),
                (Some((l, s)), None) => {
                    format!("{} {}", if s { ">" } else { ">=" }, show(l, &c.unit))
                }
                (None, Some((h, s))) => {
                    format!("{} {}", if s { "<" } else { "<=" }, show(h, &c.unit))
                }
                (None, None) => "any".into(),
            };
            Ok((
                text,
                Box::new(move |v, slack| {
                    let above =
                        lo.is_none_or(|(l, s)| if s { v + slack > l } else { v + slack >= l });
                    let below =
                        hi.is_none_or(|(h, s)| if s { v - slack < h } else { v - slack <= h });
                    above && below
                }),
            ))
        }
    }
}

/// An `expect` without a tolerance: equal up to floating-point rounding.
const EXACT: f64 = 1e-9;

/// Whether a check's `when` holds on its runs (a check without one always
/// applies; one whose condition has no value is judged, and fails).
fn applies(c: &CheckSpec, ran: &Ran) -> bool {
    c.when
        .as_ref()
        .is_none_or(|w| !matches!(ran.value(c.variant, w, None, &[]), Ok(v) if v == 0.0))
}

fn judge(c: &CheckSpec, ran: &Ran) -> Check {
    let judged = rule_of(c, ran).and_then(|(expected, keeps)| {
        if c.per_replication {
            ran.mean(c.variant, &c.value, &[]).map(|m| {
                let (slack, how) = match c.sigmas {
                    Some(k) => (k * m.se, format!("{} standard errors", show(k, ""))),
                    None => (m.half_width, "95 % interval".to_string()),
                };
                let seen = format!(
                    "{} ± {} (mean of {} runs, {how})",
                    show(m.mean, ""),
                    show(slack, &c.unit),
                    m.n
                );
                (expected, keeps(m.mean, slack), seen)
            })
        } else {
            ran.value(c.variant, &c.value, None, &[])
                .map(|v| (expected, keeps(v, 0.0), show(v, &c.unit)))
        }
    });
    let (expected, ok, seen) =
        judged.unwrap_or_else(|e| ("?".into(), false, format!("no value: {e}")));
    Check {
        what: c
            .what
            .fill(&mut |e| ran.value(c.variant, e, None, &[]).ok()),
        expected,
        seen,
        ok,
    }
}

fn answer(q: &QuestionSpec, ran: &Ran) -> Answer {
    let value = if q.per_replication {
        ran.mean(q.variant, &q.answer, &[]).map(|m| m.mean)
    } else {
        ran.value(q.variant, &q.answer, None, &[])
    };
    let value = value.map_err(|e| e.to_string());
    let tolerance = value.as_ref().map_or(0.0, |&v| q.tolerance.around(v));
    Answer {
        ask: q.ask.clone(),
        unit: q.unit.clone(),
        value,
        tolerance,
    }
}
