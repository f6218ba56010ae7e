//! Running a lesson file: its scenario's replications (and each variant's),
//! the answers to the run queries its expressions ask (a [`Host`] of the
//! one expression language, which knows nothing of lessons), and its checks
//! and questions judged on them.

use super::file::{CheckSpec, LessonFile, QuestionSpec, Rule, ScenarioOrSet};
use super::queries::{Query, FUNCS, VARS};
use super::{Check, LessonError, Outcome};
use crate::engine::Time;
use crate::expr::{EvalError, Expr, Host};
use crate::results::{Cell, RunOutput};
use crate::stats;
use crate::sweep::{self, Point};
use crate::teach::trace::{self, TraceFilter, TraceRow, TRACE_COLUMNS};
use crate::world;
use std::cell::OnceCell;
use toml::Value;

/// The replications of one scenario, and their traces made when first asked.
pub struct Runs {
    pub scenario: world::Scenario,
    seeds: Vec<u64>,
    outputs: Vec<RunOutput>,
    rows: Vec<OnceCell<Vec<TraceRow>>>,
}

impl Runs {
    /// Runs every replication of `scenario` (in parallel; results in
    /// replication order, so the same on any number of threads).
    pub fn new(scenario: world::Scenario, label: &str) -> Result<Runs, LessonError> {
        // The seeds of a point without axes: replication 0's is the one
        // `csmacd trace` and `run` use.
        let point = Point::new(vec![], scenario.clone());
        let seeds = point.replication_seeds();
        let results = sweep::run_points(&[point], &|sc, seed| sc.run(seed), &|| {})
            .pop()
            .unwrap_or_default();
        let mut outputs = Vec::with_capacity(results.len());
        for r in results {
            let out = r.map_err(|s| LessonError::Stalled(label.to_string(), s))?;
            if let Some(f) = &out.failure {
                return Err(LessonError::Failed(label.to_string(), f.clone()));
            }
            outputs.push(out);
        }
        let rows = seeds.iter().map(|_| OnceCell::new()).collect();
        Ok(Runs {
            scenario,
            seeds,
            outputs,
            rows,
        })
    }

    pub fn replications(&self) -> usize {
        self.outputs.len()
    }

    /// Replication `rep`'s trace over the whole run.
    pub fn rows(&self, rep: usize) -> &[TraceRow] {
        self.rows[rep].get_or_init(|| match self.scenario.ethernet() {
            Some(sc) => {
                trace::collect(sc, self.seeds[rep], TraceFilter::new(sc, sc.duration, None))
            }
            None => Vec::new(),
        })
    }

    /// Replication `rep`'s trace before `until`: read from the whole run's
    /// when a query has made it, else made up to `until` only.
    pub fn rows_until(&self, rep: usize, until: Time) -> Vec<TraceRow> {
        if let Some(rows) = self.rows[rep].get() {
            return rows.iter().filter(|r| r.t < until).cloned().collect();
        }
        match self.scenario.ethernet() {
            Some(sc) => trace::collect(
                sc,
                self.seeds[rep],
                TraceFilter::new(sc, until.min(sc.duration), None),
            ),
            None => Vec::new(),
        }
    }

    /// The value of `e` on replication `rep`, or with `metric` the mean
    /// over every replication and the event queries on the first (None).
    pub fn value(&self, e: &Expr, rep: Option<usize>) -> Result<f64, EvalError> {
        let vars = self.constants();
        e.value_with(&vars, &mut At { runs: self, rep })
    }

    /// The mean of `e` over the replications, its 95 % half-width and the
    /// count of replications.
    pub fn mean(&self, e: &Expr) -> Result<(f64, f64, usize), EvalError> {
        let values = (0..self.replications())
            .map(|r| self.value(e, Some(r)))
            .collect::<Result<Vec<f64>, _>>()?;
        let (m, hw) = stats::mean_ci95(&values);
        Ok((m, hw, values.len()))
    }

    fn constants(&self) -> Vec<f64> {
        match self.scenario.ethernet() {
            Some(sc) => {
                let m = &sc.medium;
                [m.slot_ps, m.bit_ps, m.preamble_ps, m.jam_ps, m.ifg_ps]
                    .iter()
                    .map(|&ps| micros(ps))
                    .collect()
            }
            None => vec![f64::NAN; VARS.len()],
        }
    }
}

fn micros(ps: Time) -> f64 {
    ps as f64 / 1e6
}

/// The queries as one replication (or the whole run) answers them.
struct At<'a> {
    runs: &'a Runs,
    rep: Option<usize>,
}

impl At<'_> {
    fn station(&self, f: &str, x: f64, all: bool) -> Result<Option<u32>, EvalError> {
        let n = self
            .runs
            .scenario
            .ethernet()
            .map_or(0, |sc| sc.station_count());
        if all && x == -1.0 {
            return Ok(None);
        }
        if x.fract() == 0.0 && x >= 0.0 && x < n as f64 {
            return Ok(Some(x as u32));
        }
        Err(EvalError(format!(
            "{f}: station {x} is not one of the scenario's stations 0 to {}{}",
            n.saturating_sub(1),
            if all { ", or -1 for all" } else { "" }
        )))
    }

    fn nth(f: &str, x: f64) -> Result<usize, EvalError> {
        if x.fract() == 0.0 && (1.0..=1e9).contains(&x) {
            Ok(x as usize)
        } else {
            Err(EvalError(format!("{f}: nth is {x}; it counts from 1")))
        }
    }

    fn matching<'r>(
        &'r self,
        event: &'r str,
        station: Option<u32>,
    ) -> impl Iterator<Item = &'r TraceRow> + 'r {
        self.runs
            .rows(self.rep.unwrap_or(0))
            .iter()
            .filter(move |r| r.kind.name() == event && station.is_none_or(|s| r.station == s))
    }

    fn metric(&self, name: &str, group: Option<f64>) -> Result<f64, EvalError> {
        let one = |out: &RunOutput| -> Result<f64, EvalError> {
            let Some(g) = group else {
                return Ok(out.metric(name));
            };
            let table = out.table("groups");
            let spec = out.columns.tables.iter().find(|t| t.name == "groups");
            let col = spec.and_then(|t| t.columns.iter().position(|c| *c == name));
            let rows = table.len();
            if !(g.fract() == 0.0 && g >= 0.0 && (g as usize) < rows) {
                return Err(EvalError(format!(
                    "metric(\"{name}\", {g}): the scenario has groups 0 to {}",
                    rows.saturating_sub(1)
                )));
            }
            Ok(match col.map(|c| &table[g as usize][c]) {
                Some(Cell::Count(v)) => *v as f64,
                Some(Cell::Number(v)) => *v,
                _ => f64::NAN,
            })
        };
        match self.rep {
            Some(r) => one(&self.runs.outputs[r]),
            None => {
                let values = self
                    .runs
                    .outputs
                    .iter()
                    .map(one)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(stats::mean_ci95(&values).0)
            }
        }
    }
}

impl Host for At<'_> {
    fn call(&mut self, id: usize, n: &[f64], texts: &[Box<str>]) -> Result<f64, EvalError> {
        let f = FUNCS[id].signature;
        match Query::of(id) {
            Query::EventTime => {
                let station = self.station(f, n[0], true)?;
                let nth = Self::nth(f, n[1])?;
                // Never: infinitely late, so that `event_time(a, ...) <
                // event_time(b, ...)` reads "a happens first".
                Ok(self
                    .matching(&texts[0], station)
                    .nth(nth - 1)
                    .map_or(f64::INFINITY, |r| micros(r.t)))
            }
            Query::EventCount => {
                let station = self.station(f, n[0], true)?;
                Ok(self.matching(&texts[0], station).count() as f64)
            }
            Query::EventField => {
                let station = self.station(f, n[0], true)?;
                let nth = Self::nth(f, n[1])?;
                let (event, field) = (&*texts[0], &*texts[1]);
                let row = self.matching(event, station).nth(nth - 1).ok_or_else(|| {
                    EvalError(format!(
                        "event_field: no {nth}{} \"{event}\" row {}",
                        ordinal(nth),
                        station.map_or("at any station".into(), |s| format!("at station {s}"))
                    ))
                })?;
                if field == "time_us" {
                    return Ok(micros(row.t));
                }
                let k = TRACE_COLUMNS[3..]
                    .iter()
                    .position(|c| *c == field)
                    .ok_or_else(|| EvalError(format!("event_field: no column \"{field}\"")))?;
                row.fields()[k]
                    .as_deref()
                    .and_then(|v| v.parse::<f64>().ok())
                    .ok_or_else(|| {
                        EvalError(format!(
                            "event_field: a \"{event}\" row has no {field} (it is empty in the trace)"
                        ))
                    })
            }
            Query::Metric => self.metric(&texts[0], None),
            Query::GroupMetric => self.metric(&texts[0], Some(n[0])),
            Query::Prop => {
                let a = self.station(f, n[0], false)?.unwrap_or(0) as usize;
                let b = self.station(f, n[1], false)?.unwrap_or(0) as usize;
                let sc =
                    self.runs.scenario.ethernet().ok_or_else(|| {
                        EvalError("prop_us: a service scenario has no bus".into())
                    })?;
                let seed = self.runs.seeds[self.rep.unwrap_or(0)];
                Ok(micros(crate::ethernet::paths(sc, seed).delay(a, b)))
            }
        }
    }
}

fn ordinal(n: usize) -> &'static str {
    match (n % 10, n % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    }
}

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

/// Runs lesson file `lesson` with `overrides`: its scenario, each variant,
/// then its checks and questions.
pub fn run(lesson: &LessonFile, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let make = |variant: Option<usize>| {
        lesson
            .scenario_with(overrides, variant)
            .map_err(|e| match e {
                ScenarioOrSet::Scenario(e) => LessonError::Scenario(e),
                ScenarioOrSet::Set(p, m) => LessonError::Override(p, m),
            })
    };
    let base = Runs::new(make(None)?, &lesson.title)?;
    let mut variants = Vec::new();
    for (k, v) in lesson.variants.iter().enumerate() {
        let used = lesson.checks.iter().any(|c| c.variant == Some(k))
            || lesson.questions.iter().any(|q| q.variant == Some(k));
        variants.push(if used {
            Some(Runs::new(make(Some(k))?, &v.name)?)
        } else {
            None
        });
    }
    let runs_of = |v: Option<usize>| match v {
        Some(k) => variants[k].as_ref().expect("a variant asked for has run"),
        None => &base,
    };
    let checks = lesson
        .checks
        .iter()
        .map(|c| judge(c, runs_of(c.variant)))
        .collect();
    let answers = lesson
        .questions
        .iter()
        .map(|q| answer(q, runs_of(q.variant)))
        .collect();
    let window = window(lesson, &base);
    let mut out = Outcome {
        checks,
        answers,
        ..Default::default()
    };
    if let Some(sc) = base.scenario.ethernet() {
        out.rows = base.rows_until(0, window);
        out.diagram_until = Some(window);
        out.scenario = Some(sc.clone());
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
    if let Some(w) = lesson.window {
        return (w.to_ps(sc.medium.bit_ps, sc.medium.slot_ps).round() as Time)
            .clamp(1, sc.duration);
    }
    trace::default_window_of(sc, &runs.rows_until(0, trace::window_limit(sc)))
}

/// A number printed for a reader: "never" for an infinitely late event,
/// else up to six significant digits.
pub fn show(v: f64, unit: &str) -> String {
    let n = if v.is_infinite() && v > 0.0 {
        return "never".into();
    } else if v.is_nan() {
        "not a number".to_string()
    } else {
        let s = format!("{v:.6}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".into()
        } else {
            s
        }
    };
    if unit.is_empty() {
        n
    } else {
        format!("{n} {unit}")
    }
}

fn judge(c: &CheckSpec, runs: &Runs) -> Check {
    let expected = match c.rule {
        Rule::Expect { value, tolerance } if tolerance > value.abs() * 1e-6 => {
            format!("{} ± {}", show(value, ""), show(tolerance, &c.unit))
        }
        Rule::Expect { value, .. } => show(value, &c.unit),
        Rule::Within { lo, hi } => format!("in [{}, {}]", show(lo, ""), show(hi, &c.unit)),
    };
    let judged = if c.per_replication {
        runs.mean(&c.value).map(|(m, hw, n)| {
            let ok = match c.rule {
                Rule::Expect { value, tolerance } => (m - value).abs() <= hw + tolerance,
                Rule::Within { lo, hi } => lo <= m && m <= hi,
            };
            let seen = format!(
                "{} ± {} (mean of {n} runs, 95 % interval)",
                show(m, ""),
                show(hw, &c.unit)
            );
            (ok, seen)
        })
    } else {
        runs.value(&c.value, None).map(|v| {
            let ok = match c.rule {
                Rule::Expect { value, tolerance } => {
                    (v - value).abs() <= tolerance || (v.is_infinite() && v == value)
                }
                Rule::Within { lo, hi } => lo <= v && v <= hi,
            };
            (ok, show(v, &c.unit))
        })
    };
    let (ok, seen) = judged.unwrap_or_else(|e| (false, format!("no value: {e}")));
    Check {
        what: c.what.clone(),
        expected,
        seen,
        ok,
    }
}

fn answer(q: &QuestionSpec, runs: &Runs) -> Answer {
    let value = if q.per_replication {
        runs.mean(&q.answer).map(|(m, _, _)| m)
    } else {
        runs.value(&q.answer, None)
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
