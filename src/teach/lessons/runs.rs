//! A lesson file's runs and the queries its expressions ask of them: the
//! replications of its scenario and of each variant it needs, their traces
//! made when first asked, and the [`Host`] that answers `event_time`,
//! `metric`, ... (the one expression language knows nothing of lessons).

use super::queries::{Query, FUNCS, VARS};
use super::LessonError;
use crate::engine::Time;
use crate::expr::{EvalError, Expr, Host};
use crate::results::{Cell, RunOutput, Stalled};
use crate::stats;
use crate::sweep::Point;
use crate::teach::trace::{self, TraceFilter, TraceRow, TRACE_COLUMNS};
use crate::world;
use std::cell::OnceCell;

/// The replications of one scenario, and their traces made when first asked.
pub struct Runs {
    pub scenario: world::Scenario,
    seeds: Vec<u64>,
    outputs: Vec<RunOutput>,
    rows: Vec<OnceCell<Vec<TraceRow>>>,
    /// Whether the traces hold the signal rows (costly with many stations).
    signals: bool,
}

impl Runs {
    /// The runs of `point` (`results` in replication order), or why one
    /// stopped (named `label`).
    pub fn of(
        point: &Point,
        results: Vec<Result<RunOutput, Stalled>>,
        label: &str,
        signals: bool,
    ) -> Result<Runs, LessonError> {
        let mut outputs = Vec::with_capacity(results.len());
        for r in results {
            let out = r.map_err(|s| LessonError::Stalled(label.to_string(), s))?;
            if let Some(f) = &out.failure {
                return Err(LessonError::Failed(label.to_string(), f.clone()));
            }
            outputs.push(out);
        }
        let seeds = point.replication_seeds();
        let rows = seeds.iter().map(|_| OnceCell::new()).collect();
        Ok(Runs {
            scenario: point.scenario.clone(),
            seeds,
            outputs,
            rows,
            signals,
        })
    }

    pub fn replications(&self) -> usize {
        self.outputs.len()
    }

    /// The seed of replication `rep`.
    pub fn seed(&self, rep: usize) -> u64 {
        self.seeds[rep]
    }

    /// Replication `rep`'s trace over the whole run.
    pub fn rows(&self, rep: usize) -> &[TraceRow] {
        self.rows[rep].get_or_init(|| match self.scenario.ethernet() {
            Some(sc) => {
                let mut filter = TraceFilter::new(sc, sc.duration, None);
                filter.signals &= self.signals;
                trace::collect(sc, self.seeds[rep], filter)
            }
            None => Vec::new(),
        })
    }

    /// The scenario's constants, in the order of [`VARS`].
    fn constants(&self) -> Vec<f64> {
        let reps = self.replications() as f64;
        match self.scenario.ethernet() {
            Some(sc) => {
                let m = &sc.medium;
                let shortest = sc
                    .groups
                    .iter()
                    .map(|g| m.frame_on_wire_ps(g.frame.min_bytes()))
                    .min()
                    .unwrap_or(0);
                vec![
                    micros(m.slot_ps),
                    micros(m.bit_ps),
                    micros(m.preamble_ps),
                    micros(m.jam_ps),
                    micros(m.ifg_ps),
                    sc.station_count() as f64,
                    m.length_m,
                    m.speed / 1e6,
                    micros(sc.max_delay_ps()),
                    sc.groups.first().map_or(f64::NAN, |g| g.frame.mean_bits()),
                    shortest as f64 / m.bit_ps as f64,
                    micros(sc.duration),
                    micros(sc.warmup),
                    reps,
                ]
            }
            None => {
                let mut v = vec![f64::NAN; VARS.len()];
                v[VARS.len() - 1] = reps;
                v
            }
        }
    }
}

pub fn micros(ps: Time) -> f64 {
    ps as f64 / 1e6
}

/// A mean over replications: its 95 % half-width, its standard error and
/// how many replications it has.
#[derive(Clone, Copy, Debug)]
pub struct Mean {
    pub mean: f64,
    pub half_width: f64,
    pub se: f64,
    pub n: usize,
    /// When every value is 0 or 1 (a share of the runs): the 95 % Wilson
    /// interval, which stays within [0, 1] and is not 0 wide at 0 or 1.
    pub share: Option<(f64, f64)>,
}

/// Every run of a lesson: its scenario's, and each variant's it needs
/// (None: not needed).
pub struct Ran {
    pub base: Runs,
    pub variants: Vec<Option<Runs>>,
    pub names: Vec<String>,
    /// The variants a `--set` over them made the same as an earlier one
    /// (`set_over_variants`): run, but not shown again.
    pub left_out: Vec<bool>,
}

impl Ran {
    /// The runs of variant `v` (None: the lesson's scenario).
    pub fn runs(&self, v: Option<usize>) -> &Runs {
        match v {
            Some(k) => self.variants[k]
                .as_ref()
                .expect("a variant asked for has run"),
            None => &self.base,
        }
    }

    /// The value of `e` on variant `v`'s replication `rep`, or with `metric`
    /// the mean over every replication and the event queries on the first
    /// (None); `extra` the values of the names after [`VARS`].
    pub fn value(
        &self,
        v: Option<usize>,
        e: &Expr,
        rep: Option<usize>,
        extra: &[f64],
    ) -> Result<f64, EvalError> {
        let runs = self.runs(v);
        let mut vars = runs.constants();
        vars.extend_from_slice(extra);
        e.value_with(
            &vars,
            &mut At {
                ran: self,
                runs,
                rep,
            },
        )
    }

    /// The mean of `e` over variant `v`'s replications.
    pub fn mean(&self, v: Option<usize>, e: &Expr, extra: &[f64]) -> Result<Mean, EvalError> {
        let values = (0..self.runs(v).replications())
            .map(|r| self.value(v, e, Some(r), extra))
            .collect::<Result<Vec<f64>, _>>()?;
        let (mean, half_width) = stats::mean_ci95(&values);
        let n = values.len();
        let se = if n > 1 {
            let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            (var / n as f64).sqrt()
        } else {
            f64::NAN
        };
        let share = (n > 0 && values.iter().all(|&x| x == 0.0 || x == 1.0)).then(|| {
            let k = values.iter().sum::<f64>();
            super::chart::wilson(k, n as f64)
        });
        Ok(Mean {
            mean,
            half_width,
            se,
            n,
            share,
        })
    }
}

/// The queries as one replication (or the whole run) answers them.
struct At<'a> {
    ran: &'a Ran,
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

    /// Row `row`'s `field` (a trace column, or "time_us"), if it has one.
    fn field(row: &TraceRow, field: &str) -> Option<f64> {
        if field == "time_us" {
            return Some(micros(row.t));
        }
        let k = TRACE_COLUMNS[3..].iter().position(|c| *c == field)?;
        row.fields()[k]
            .as_deref()
            .and_then(|v| v.parse::<f64>().ok())
    }

    fn metric(
        runs: &Runs,
        rep: Option<usize>,
        name: &str,
        group: Option<f64>,
    ) -> Result<f64, EvalError> {
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
        match rep {
            Some(r) => one(&runs.outputs[r]),
            None => {
                let values = runs
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
            Query::EventCountWhere => {
                let station = self.station(f, n[0], true)?;
                let want = n[1];
                Ok(self
                    .matching(&texts[0], station)
                    .filter(|r| Self::field(r, &texts[1]) == Some(want))
                    .count() as f64)
            }
            Query::EventMax => {
                let station = self.station(f, n[0], true)?;
                // No row: -infinity, below every value, so that max(...)
                // of several reads right.
                Ok(self
                    .matching(&texts[0], station)
                    .filter_map(|r| Self::field(r, &texts[1]))
                    .fold(f64::NEG_INFINITY, f64::max))
            }
            Query::EventGapMax => {
                let (from, to) = (&*texts[0], &*texts[1]);
                let mut last: std::collections::HashMap<u32, Time> = Default::default();
                let mut most = f64::NEG_INFINITY;
                for r in self.runs.rows(self.rep.unwrap_or(0)) {
                    let name = r.kind.name();
                    if name == to {
                        if let Some(&t0) = last.get(&r.station) {
                            most = most.max(micros(r.t - t0));
                        }
                    }
                    if name == from {
                        last.insert(r.station, r.t);
                    }
                }
                Ok(most)
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
                Self::field(row, field).ok_or_else(|| {
                    EvalError(format!(
                        "event_field: a \"{event}\" row has no {field} (it is empty in the trace)"
                    ))
                })
            }
            Query::Metric => Self::metric(self.runs, self.rep, &texts[0], None),
            Query::GroupMetric => Self::metric(self.runs, self.rep, &texts[0], Some(n[0])),
            Query::TableLast => {
                let (table, column) = (&*texts[0], &*texts[1]);
                let one = |out: &RunOutput| -> f64 {
                    let col = out
                        .columns
                        .tables
                        .iter()
                        .find(|t| t.name == table)
                        .and_then(|t| t.columns.iter().position(|c| *c == column));
                    match (out.table(table).last(), col) {
                        (Some(row), Some(c)) => match &row[c] {
                            Cell::Count(v) => *v as f64,
                            Cell::Number(v) => *v,
                            _ => f64::NAN,
                        },
                        _ => f64::NAN,
                    }
                };
                Ok(match self.rep {
                    Some(r) => one(&self.runs.outputs[r]),
                    None => {
                        let values: Vec<f64> = self.runs.outputs.iter().map(one).collect();
                        stats::mean_ci95(&values).0
                    }
                })
            }
            Query::MetricOf | Query::Ci95Of => {
                let runs = if *texts[0] == *super::queries::SCENARIO_ROW {
                    &self.ran.base
                } else {
                    let v = self
                        .ran
                        .names
                        .iter()
                        .position(|name| **name == *texts[0])
                        .ok_or_else(|| EvalError(format!("{f}: no variant \"{}\"", texts[0])))?;
                    self.ran.runs(Some(v))
                };
                if Query::of(id) == Query::MetricOf {
                    return Self::metric(runs, None, &texts[1], None);
                }
                let values: Vec<f64> = (0..runs.replications())
                    .map(|r| Self::metric(runs, Some(r), &texts[1], None))
                    .collect::<Result<_, _>>()?;
                Ok(stats::mean_ci95(&values).1)
            }
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
            Query::PropMean => {
                let sc = self.runs.scenario.ethernet().ok_or_else(|| {
                    EvalError("prop_mean_us: a service scenario has no bus".into())
                })?;
                let n = sc.station_count();
                if !(2..=super::queries::MAX_MEAN_STATIONS).contains(&n) {
                    return Err(EvalError(format!(
                        "prop_mean_us: the scenario has {n} stations; it averages the pairs of 2 \
                         to {} stations",
                        super::queries::MAX_MEAN_STATIONS
                    )));
                }
                let seed = self.runs.seeds[self.rep.unwrap_or(0)];
                let p = crate::ethernet::paths(sc, seed);
                let mut sum = 0.0;
                for i in 0..n {
                    for j in i + 1..n {
                        sum += p.delay(i, j) as f64;
                    }
                }
                Ok(micros(1) * sum / (n * (n - 1) / 2) as f64)
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
