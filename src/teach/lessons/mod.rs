//! The guided lessons: the table of lessons (scenario and explanation from
//! scenarios/lessons/), running one, and the helpers several lessons share.
//!
//! The files are embedded, so `csmacd lesson N` works from any directory.
//! Each lesson's own file computes the numbers its explanation promises and
//! checks them; the tests run the same checks, so a lesson's text cannot
//! silently stop being true.

mod beb_race;
mod capture;
mod carrier_extension;
mod chart;
mod check;
mod collision;
pub mod file;
mod herd_restart;
mod hub_vs_coax;
mod jitter;
mod minimum_frame;
mod minimum_frame_speeds;
mod plot;
pub mod queries;
pub mod runner;
mod runs;
mod spec;
mod table;

pub use chart::LessonChart;
pub use jitter::LESSON9_REPLICATIONS;

use super::trace::{self, TraceFilter, TraceKind, TraceRow};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::ethernet::{self, RunResult};
use crate::scenario::{self, reader::FieldError, ScenarioError};
use crate::sweep::{self, set_path, Point};
use crate::world;
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

/// The lessons still written in Rust, in order (the others are lesson
/// files, [`FILE_LESSONS`]).
pub const LESSONS: &[Lesson] = &[
    lesson!(2, "Two stations collide, jam and back off", "2-collision"),
    lesson!(6, "The capture effect, and BLAM", "6-capture-blam"),
    lesson!(
        9,
        "Jitter: why backoff without it keeps colliding",
        "9-jitter"
    ),
    lesson!(
        10,
        "The herd after a restart: why it crashes the server again",
        "10-herd-restart"
    ),
    lesson!(
        11,
        "Why Gigabit needed carrier extension",
        "11-carrier-extension"
    ),
    lesson!(12, "A hub versus a long coax", "12-hub-vs-coax"),
    lesson!(
        13,
        "The minimum frame against the diameter at each speed",
        "13-minimum-frame-speeds"
    ),
];

/// A lesson written as a file and built into the program: its number, the
/// lesson file's name and every file it names (read from `scenarios/lessons/`).
pub struct BuiltinFile {
    pub number: u32,
    pub file: &'static str,
    pub files: &'static [(&'static str, &'static str)],
}

macro_rules! lesson_file {
    ($n:expr, $stem:literal) => {
        BuiltinFile {
            number: $n,
            file: concat!($stem, ".lesson.toml"),
            files: &[
                (
                    concat!($stem, ".lesson.toml"),
                    include_str!(concat!(
                        "../../../scenarios/lessons/",
                        $stem,
                        ".lesson.toml"
                    )),
                ),
                (
                    concat!($stem, ".md"),
                    include_str!(concat!("../../../scenarios/lessons/", $stem, ".md")),
                ),
                (
                    concat!($stem, ".toml"),
                    include_str!(concat!("../../../scenarios/lessons/", $stem, ".toml")),
                ),
            ],
        }
    };
}

/// The lessons written as files that every build carries.
pub const FILE_LESSONS: &[BuiltinFile] = &[
    lesson_file!(1, "1-one-frame"),
    lesson_file!(3, "3-beb-race"),
    lesson_file!(4, "4-minimum-frame"),
    lesson_file!(5, "5-load-throughput"),
    lesson_file!(7, "7-thundering-herd"),
    lesson_file!(8, "8-aloha-csma-csmacd"),
    lesson_file!(14, "14-far-station"),
];

impl BuiltinFile {
    /// The lesson file, read from the program's own copy.
    pub fn load(&self) -> Result<file::LessonFile, file::LessonFileError> {
        let text = self
            .files
            .iter()
            .find(|(n, _)| *n == self.file)
            .map_or("", |(_, t)| t);
        file::parse(
            &format!("scenarios/lessons/{}", self.file),
            text,
            &file::Origin::Embedded(self.files),
        )
    }
}

/// The built-in lesson file numbered `number`.
pub fn find_file(number: u32) -> Option<&'static BuiltinFile> {
    FILE_LESSONS.iter().find(|l| l.number == number)
}

/// Every built-in lesson's number and title, in order.
pub fn catalogue() -> Vec<(u32, String)> {
    let mut all: Vec<(u32, String)> = LESSONS
        .iter()
        .map(|l| (l.number, l.title.to_string()))
        .collect();
    for f in FILE_LESSONS {
        let title = f
            .load()
            .map(|l| l.title)
            .unwrap_or_else(|e| format!("(cannot be read: {e})"));
        all.push((f.number, title));
    }
    all.sort_by_key(|(n, _)| *n);
    all
}

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

/// The check that run `r`'s metric `metric` is above zero.
fn positive(what: &str, r: &RunResult, metric: &str) -> Check {
    let v = r.metrics.get(metric);
    check(what, "> 0", format!("{v}"), v > 0.0)
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
    /// Charts of the theory with the simulation drawn over it.
    pub charts: Vec<LessonChart>,
    /// A lesson file's questions with the run's answers.
    pub answers: Vec<runner::Answer>,
}

impl Outcome {
    /// A lesson that shows its events one by one, drawn up to `until`.
    fn of_trace(rows: Vec<TraceRow>, checks: Vec<Check>, until: Time) -> Self {
        Outcome {
            rows,
            checks,
            diagram_until: Some(until),
            ..Default::default()
        }
    }

    /// A lesson that shows a table of runs.
    fn of_table(table: Vec<Vec<String>>, checks: Vec<Check>) -> Self {
        Outcome {
            table,
            checks,
            ..Default::default()
        }
    }
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
    /// A run of the lesson (the variant named) could not advance its clock.
    #[error("the run \"{0}\" stopped, its clock cannot advance: {1}")]
    Stalled(String, crate::results::Stalled),
    /// A run of the lesson (the variant named) stopped on a policy's fault.
    #[error("the run \"{0}\" stopped: {1}")]
    Failed(String, String),
    #[error(transparent)]
    File(#[from] file::LessonFileError),
}

/// Parses `PATH=VALUE` (VALUE as TOML, else as a string).
pub fn parse_override(text: &str) -> Result<(String, Value), String> {
    let (path, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not PATH=VALUE, e.g. stations.0.count=100000"))?;
    if path.trim().is_empty() || path.split('.').any(|s| s.trim().is_empty()) {
        return Err(format!(
            "`{text}`: the path before `=` is not a dotted key; write PATH=VALUE, e.g. \
             stations.0.count=100000"
        ));
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(value.to_string()));
    Ok((path.trim().to_string(), parsed))
}

/// Sets each dotted path of `changes` in `table`, by the rule of a sweep axis.
fn set_all<'a>(
    table: &mut Table,
    changes: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> Result<(), LessonError> {
    for (p, v) in changes {
        set_path(table, p, v.clone()).map_err(|e| LessonError::Override(p.to_string(), e))?;
    }
    Ok(())
}

/// The lesson's scenario table with `overrides` applied, not yet validated.
fn table_with(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Table, LessonError> {
    let mut table = scenario::parse_table(lesson.file, lesson.scenario)?;
    set_all(&mut table, overrides.iter().map(|(p, v)| (p.as_str(), v)))?;
    Ok(table)
}

/// The lesson's scenario with `overrides` applied and `extra` changes.
fn scenario_with(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    extra: &[(&str, Value)],
) -> Result<Scenario, LessonError> {
    let mut table = table_with(lesson, overrides)?;
    set_all(&mut table, extra.iter().map(|(p, v)| (*p, v)))?;
    scenario::validate_bus(&table, lesson.file, &[]).map_err(|e| invalid(lesson, overrides, e))
}

/// A lesson's scenario made invalid: by a `--set` (the lesson's own file is
/// valid), named by its flag and the key at fault, not by a line of the
/// built-in file the user did not write.
fn invalid(lesson: &Lesson, overrides: &[(String, Value)], e: FieldError) -> LessonError {
    if overrides.is_empty() {
        return LessonError::Scenario(ScenarioError::at(lesson.file, lesson.scenario, e));
    }
    let related = |p: &str| {
        p == e.path
            || e.path.starts_with(&format!("{p}."))
            || p.starts_with(&format!("{}.", e.path))
    };
    let flag = |(p, v): &(String, Value)| format!("{p}={}", crate::sweep::value_label(v));
    let flags = match overrides.iter().find(|(p, _)| related(p)) {
        Some(o) => flag(o),
        None => overrides
            .iter()
            .map(flag)
            .collect::<Vec<_>>()
            .join(" --set "),
    };
    LessonError::Override(flags, format!("`{}`: {}", e.path, e.message))
}

/// Checks `overrides` on lesson `number`'s scenario without running it, so
/// that a bad `--set` is refused before the lesson's text is printed.
pub fn check_overrides(number: u32, overrides: &[(String, Value)]) -> Result<(), LessonError> {
    let Some(lesson) = find(number) else {
        let list: Vec<String> = catalogue().iter().map(|(n, _)| n.to_string()).collect();
        return Err(LessonError::Unknown(number, list.join(", ")));
    };
    let table = table_with(lesson, overrides)?;
    scenario::validate(&table, lesson.file, &[]).map_err(|e| invalid(lesson, overrides, e))?;
    Ok(())
}

/// Runs lesson `number` with `overrides` (dotted path, value) on its scenario.
pub fn run(number: u32, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let unknown = || {
        let list: Vec<String> = catalogue().iter().map(|(n, _)| n.to_string()).collect();
        LessonError::Unknown(number, list.join(", "))
    };
    let lesson = find(number).ok_or_else(unknown)?;
    if number == 10 {
        // A service scenario: no bus, no trace, no pictures.
        return herd_restart::run(lesson, overrides);
    }
    let sc = scenario_with(lesson, overrides, &[])?;
    let mut out = match number {
        2 => collision::run(&sc),
        6 => capture::run(lesson, overrides, &sc)?,
        9 => jitter::run(lesson, overrides, &sc)?,
        11 => carrier_extension::run(lesson, overrides, &sc)?,
        12 => hub_vs_coax::run(lesson, overrides, &sc)?,
        13 => minimum_frame_speeds::run(lesson, overrides)?,
        _ => return Err(unknown()),
    };
    out.scenario = Some(sc);
    Ok(out)
}

/// The trace of the scenario's first run, up to `until`.
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

/// Checks that the row `r` happens exactly at `expected_ps`.
fn time_check(what: &str, r: Option<&TraceRow>, expected_ps: Time) -> Check {
    check(
        what,
        format!("{} µs", trace::us(expected_ps)),
        at(r),
        r.map(|r| r.t) == Some(expected_ps),
    )
}

/// Propagation time between two stations, in picoseconds, as the simulator rounds it.
fn delay(sc: &Scenario, i: usize, j: usize) -> Time {
    ethernet::paths(sc, trace::run_seed(sc)).delay(i, j)
}

/// A table row: `label`, then each of `cols`, whole numbers without decimals.
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

/// A mean with its 95 % half-width, when there is one.
fn fmt_ci((m, hw): (f64, f64)) -> String {
    if hw.is_finite() {
        format!("{m:.3} ± {hw:.3}")
    } else {
        format!("{m:.3}")
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
    let table = table_with(lesson, overrides)?;
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

/// A sweep point of a bus scenario.
pub(super) fn bus_point(axes: Vec<(String, String)>, sc: Scenario) -> Point {
    Point::new(axes, world::Scenario::Ethernet(sc))
}

/// Runs the points' replications in parallel, keeping the bus world's own
/// results (the lessons read its stations and counters).
pub(super) fn bus_runs(points: &[Point]) -> Vec<Vec<RunResult>> {
    sweep::run_points(
        points,
        &|sc, seed| {
            let sc = sc.ethernet().expect("lessons run bus scenarios");
            ethernet::run(sc, seed)
        },
        &|| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
