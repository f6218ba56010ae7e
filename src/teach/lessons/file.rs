//! Lesson files: a lesson written as data (docs/teaching.md, "Writing a
//! lesson"): its title, its text (Markdown, a file beside it or inline), its
//! scenario (a file beside it or an inline `[scenario]` table), its what-if
//! variants, the questions a class answers before the run and the checks of
//! what the text promises, both as expressions of the one expression
//! language with the run queries of [`super::host`]. Read and checked whole
//! before anything runs: an error names the file, the key and its line.

use super::check::{read_check, CHECK_KEYS};
pub use super::check::{CheckSpec, Num, Rule};
use super::queries::{self as host, Query};
use super::spec::{expression, read_list, variant_index};
pub use super::spec::{GridPoint, Rows, Text, Variant, SCENARIO_ROW};
use crate::expr::Expr;
use crate::scenario::locate;
use crate::scenario::reader::{describe, FieldError, Fields, Item};
use crate::scenario::{self, ScenarioError};
use crate::teach::trace::TRACE_COLUMNS;
use crate::units::TimeSpec;
use crate::world;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// How a lesson file's name ends, which tells it from a scenario beside it.
pub const LESSON_SUFFIX: &str = ".lesson.toml";

pub use super::spec::MAX_ITEMS;

const TOP_KEYS: &[&str] = &[
    "title",
    "number",
    "text",
    "scenario",
    "window",
    "question",
    "check",
    "variant",
    "variants",
    "set_over_variants",
    "table",
    "chart",
];
const QUESTION_KEYS: &[&str] = &[
    "ask",
    "answer",
    "unit",
    "tolerance",
    "rel_tolerance",
    "per_replication",
    "variant",
];
const VARIANT_KEYS: &[&str] = &["name", "set", "picture"];
const VARIANTS_KEYS: &[&str] = &["axes", "replications", "common_random_numbers"];

/// The most variants a lesson's `[variants]` grid may hold.
pub const MAX_GRID: usize = 256;

/// Where a lesson file's named files (its text, its scenario) are read.
#[derive(Clone, Debug)]
pub enum Origin {
    /// Beside the lesson file, in this directory.
    Dir(PathBuf),
    /// Built into the program: (file name, contents).
    Embedded(&'static [(&'static str, &'static str)]),
}

impl Origin {
    fn read(&self, name: &str) -> Result<(String, String), LessonFileError> {
        match self {
            Origin::Dir(dir) => {
                let path = dir.join(name);
                let shown = path.display().to_string();
                std::fs::read_to_string(&path)
                    .map(|t| (shown.clone(), t))
                    .map_err(|error| LessonFileError::Io { file: shown, error })
            }
            Origin::Embedded(files) => files
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(n, t)| (format!("scenarios/lessons/{n}"), t.to_string()))
                .ok_or_else(|| LessonFileError::Io {
                    file: name.to_string(),
                    error: std::io::Error::from(std::io::ErrorKind::NotFound),
                }),
        }
    }
}

/// Why a lesson file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LessonFileError {
    #[error("{file}: cannot read: {error}")]
    Io { file: String, error: std::io::Error },
    #[error(transparent)]
    Invalid(#[from] ScenarioError),
}

/// How near an answer must be to the run's value to be right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    Absolute(f64),
    Relative(f64),
}

impl Tolerance {
    /// The absolute tolerance around `value`.
    pub fn around(self, value: f64) -> f64 {
        match self {
            Tolerance::Absolute(t) => t,
            Tolerance::Relative(r) => r * value.abs(),
        }
    }
}

/// A question asked before the run and graded after it.
#[derive(Clone, Debug)]
pub struct QuestionSpec {
    pub ask: String,
    pub answer: Expr,
    pub unit: String,
    pub tolerance: Tolerance,
    pub per_replication: bool,
    /// The variant whose runs answer it (None: the lesson's scenario).
    pub variant: Option<usize>,
}

/// A lesson file, read and checked.
#[derive(Clone, Debug)]
pub struct LessonFile {
    /// The file as messages name it.
    pub file: String,
    pub number: Option<u32>,
    pub title: String,
    /// The lesson's text (Markdown).
    pub text: String,
    /// The scenario's file as messages name it, and its text (for lines).
    pub scenario_file: String,
    scenario_source: String,
    /// The key path of the scenario's table in its source ("" for a file of
    /// its own, "scenario" when inline).
    scenario_prefix: String,
    scenario_table: Table,
    /// How much of the first run the trace, the pictures and the page show.
    pub window: Option<TimeSpec>,
    pub questions: Vec<QuestionSpec>,
    pub checks: Vec<CheckSpec>,
    /// The `[variants]` grid's points first, in grid order, then the
    /// `[[variant]]`s.
    pub variants: Vec<Variant>,
    /// The `[variants]` grid's axes (empty without one).
    pub axes: Vec<crate::sweep::Axis>,
    /// Whether the grid's variants run on the lesson's own seeds.
    pub common_random_numbers: bool,
    pub table: Option<super::table::TableSpec>,
    pub charts: Vec<super::plot::ChartSpec>,
    /// Scenario keys a `--set` sets in the variants too (their own values
    /// give way); a variant that then runs as an earlier one is left out.
    pub set_over_variants: Vec<String>,
}

/// Whether `path` names a lesson file (by its name's end).
pub fn is_lesson_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(LESSON_SUFFIX))
}

/// Reads the lesson file at `path`; its named files are read beside it.
pub fn load(path: &Path) -> Result<LessonFile, LessonFileError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(ScenarioError::IsDirectory { file }.into());
    }
    let source = std::fs::read_to_string(path).map_err(|error| LessonFileError::Io {
        file: file.clone(),
        error,
    })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    parse(&file, &source, &Origin::Dir(dir))
}

/// Reads a lesson file's text `source` (named `file` in messages).
pub fn parse(file: &str, source: &str, origin: &Origin) -> Result<LessonFile, LessonFileError> {
    if source.trim().is_empty() {
        return Err(ScenarioError::Empty {
            file: file.to_string(),
        }
        .into());
    }
    let table = scenario::parse_table(file, source)?;
    let at = |e: FieldError| LessonFileError::from(ScenarioError::at(file, source, e));
    let mut f = Fields::new("", &table);
    f.allow(TOP_KEYS).map_err(at)?;
    let title = f.string("title").map_err(at)?;
    let title = f
        .require(
            "title",
            title,
            "give the lesson a title, e.g. title = \"Who wins the race\"",
        )
        .map_err(at)?;
    let number = f.integer("number", 1, 9999).map_err(at)?.map(|n| n as u32);
    let text = match f.string("text").map_err(at)? {
        Some(t) if is_file_name(&t, ".md") => origin.read(&t)?.1,
        Some(t) => t,
        None => {
            return Err(at(FieldError::new(
                "text",
                "missing; give the lesson's text, a Markdown file beside the lesson \
                 (text = \"14-far-station.md\") or the text itself",
            )))
        }
    };
    let (scenario_file, scenario_source, scenario_prefix, scenario_table) = match f.get("scenario")
    {
        Some(Value::String(name)) if is_file_name(name, ".toml") => {
            let (shown, text) = origin.read(name)?;
            let t = scenario::parse_table(&shown, &text)?;
            (shown, text, String::new(), t)
        }
        Some(Value::Table(t)) => (
            file.to_string(),
            source.to_string(),
            "scenario".to_string(),
            t.clone(),
        ),
        Some(other) => {
            return Err(at(FieldError::new(
                "scenario",
                format!(
                    "expected a scenario file's name ending in .toml or a [scenario] table, \
                     found {}",
                    describe(other)
                ),
            )))
        }
        None => {
            return Err(at(FieldError::new(
                "scenario",
                "missing; name the scenario file beside the lesson (scenario = \
                 \"14-far-station.toml\") or write it inline as a [scenario] table",
            )))
        }
    };
    let window = f.time("window").map_err(at)?;
    let set_over_variants = f
        .with("set_over_variants", |i| {
            let a = i.array()?;
            a.iter()
                .enumerate()
                .map(|(k, v)| match v {
                    Value::String(p) if !p.is_empty() && !p.split('.').any(str::is_empty) => {
                        Ok(p.clone())
                    }
                    other => Err(FieldError::new(
                        format!("{}.{k}", i.path),
                        format!(
                            "expected a dotted key of the scenario, e.g. \"medium.length\", found {}",
                            describe(other)
                        ),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(at)?
        .unwrap_or_default();
    let (axes, mut variants, common_random_numbers) = read_grid(&mut f).map_err(at)?;
    let grid_count = variants.len();
    variants.extend(read_list(&mut f, "variant", VARIANT_KEYS, read_variant).map_err(at)?);
    for (k, v) in variants.iter().enumerate().skip(grid_count) {
        let path = format!("variant.{}.name", k - grid_count);
        if v.name == SCENARIO_ROW {
            return Err(at(FieldError::new(
                path,
                format!("\"{SCENARIO_ROW}\" names the lesson's own scenario; give the variant another name"),
            )));
        }
        if variants[..k].iter().any(|w| w.name == v.name) {
            return Err(at(FieldError::new(
                path,
                format!(
                    "a variant is named \"{}\" already; each variant's name once",
                    v.name
                ),
            )));
        }
    }
    let names = host::names();
    let variant_of = |fields: &mut Fields| -> Result<Option<usize>, FieldError> {
        match fields.string("variant")? {
            None => Ok(None),
            Some(name) => variant_index(fields, "variant", &name, &variants),
        }
    };
    let questions = read_list(&mut f, "question", QUESTION_KEYS, |fields| {
        fields.allow(QUESTION_KEYS)?;
        let ask = fields.string("ask")?;
        let ask = fields.require(
            "ask",
            ask,
            "write the question, e.g. ask = \"When does S1 detect?\"",
        )?;
        let answer = expression(fields, "answer", &names)?;
        let unit = fields.string("unit")?.unwrap_or_default();
        let abs = fields.float("tolerance", 0.0, f64::MAX)?;
        let rel = fields.float("rel_tolerance", 0.0, f64::MAX)?;
        let tolerance = match (abs, rel) {
            (Some(_), Some(_)) => {
                return Err(fields.err(
                    "rel_tolerance",
                    "give either tolerance (absolute) or rel_tolerance (relative), not both",
                ))
            }
            (Some(a), None) => Tolerance::Absolute(a),
            (None, Some(r)) => Tolerance::Relative(r),
            (None, None) => Tolerance::Relative(DEFAULT_REL_TOLERANCE),
        };
        let per_replication = fields.boolean("per_replication")?.unwrap_or(false);
        let variant = variant_of(fields)?;
        Ok(QuestionSpec {
            ask,
            answer,
            unit,
            tolerance,
            per_replication,
            variant,
        })
    })
    .map_err(at)?;
    let mut check_at = 0;
    let checks = read_list(&mut f, "check", CHECK_KEYS, |fields| {
        check_at += 1;
        read_check(fields, &names, &variants, check_at - 1)
    })
    .map_err(at)?
    .into_iter()
    .flatten()
    .collect();
    let table = match f.get("table") {
        None => None,
        Some(value) => Some(
            super::table::read(
                Fields::of(Item {
                    path: "table",
                    value,
                })
                .map_err(at)?,
                &variants,
                &axes,
            )
            .map_err(at)?,
        ),
    };
    let charts = read_list(&mut f, "chart", super::plot::CHART_KEYS, |fields| {
        super::plot::read(fields, &variants, &axes)
    })
    .map_err(at)?;
    f.finish(TOP_KEYS).map_err(at)?;
    let lesson = LessonFile {
        file: file.to_string(),
        number,
        title,
        text,
        scenario_file,
        scenario_source,
        scenario_prefix,
        scenario_table,
        window,
        questions,
        checks,
        variants,
        axes,
        common_random_numbers,
        table,
        charts,
        set_over_variants,
    };
    lesson.check_queries(source)?;
    Ok(lesson)
}

/// Reads `[variants]`: its axes (as a sweep's), and the grid's points as
/// variants, named by their values' labels.
fn read_grid(f: &mut Fields) -> Result<(Vec<crate::sweep::Axis>, Vec<Variant>, bool), FieldError> {
    let path = f.key_path("variants");
    let Some(v) = f.get("variants") else {
        return Ok((Vec::new(), Vec::new(), false));
    };
    let mut g = Fields::of(Item {
        path: &path,
        value: v,
    })?;
    g.allow(VARIANTS_KEYS)?;
    let axes_path = g.key_path("axes");
    let axes = match g.get("axes") {
        Some(Value::Table(t)) => crate::sweep::read_axes(&axes_path, t)?,
        Some(other) => {
            return Err(g.err(
                "axes",
                format!(
                    "expected a table of dotted paths and their values, e.g. axes = {{ \
                     \"stations.0.traffic.load\" = [0.1, 0.5, 0.9] }}, found {}",
                    describe(other)
                ),
            ))
        }
        None => {
            return Err(g.err(
                "axes",
                "missing; give the what-if points as axes, e.g. axes = { \"medium.length\" = \
                 [\"1km\", \"5km\"] }",
            ))
        }
    };
    if axes.is_empty() {
        return Err(g.err(
            "axes",
            "names no axis; give one or two dotted paths with their values",
        ));
    }
    let total = crate::sweep::grid_size(&axes)
        .filter(|&n| n <= MAX_GRID)
        .ok_or_else(|| {
            g.err(
                "axes",
                format!("the grid has more than {MAX_GRID} points; a lesson runs at most {MAX_GRID} variants"),
            )
        })?;
    let replications = g.integer("replications", 1, 100_000)?;
    let crn = g.boolean("common_random_numbers")?.unwrap_or(false);
    g.finish(VARIANTS_KEYS)?;
    let mut variants = Vec::with_capacity(total);
    for index in 0..total {
        let choice = crate::sweep::grid_choice(&axes, index);
        let mut set: Vec<(String, Value)> = Vec::new();
        if let Some(r) = replications {
            set.push(("replications".into(), Value::Integer(r)));
        }
        let mut labels = Vec::new();
        let mut keys = Vec::new();
        for (a, &c) in axes.iter().zip(&choice) {
            set.extend(
                a.sets(c)
                    .into_iter()
                    .map(|(p, v)| (p.to_string(), v.clone())),
            );
            labels.push((a.path.clone(), a.labels[c].clone()));
            keys.push((a.path.clone(), a.keys[c].clone()));
        }
        variants.push(Variant {
            name: labels
                .iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            set,
            grid: Some(GridPoint { labels, keys }),
            picture: false,
        });
    }
    Ok((axes, variants, crn))
}

/// The relative tolerance of a question that states none.
pub const DEFAULT_REL_TOLERANCE: f64 = 0.01;

/// Whether `text` is a file's name ending in `ext` rather than inline text.
fn is_file_name(text: &str, ext: &str) -> bool {
    !text.contains('\n') && text.ends_with(ext) && !text.contains(char::is_whitespace)
}

fn read_variant(fields: &mut Fields) -> Result<Variant, FieldError> {
    fields.allow(VARIANT_KEYS)?;
    let name = fields.string("name")?;
    let name = fields.require("name", name, "name the variant, e.g. name = \"long bus\"")?;
    let set = fields.with("set", |i| match i.value {
        Value::Table(t) => Ok(t.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        other => Err(i.err(format!(
            "expected a table of dotted keys and values, e.g. set = {{ \"medium.length\" = \
             \"5500m\" }}, found {}",
            describe(other)
        ))),
    })?;
    let set = fields.require("set", set, "give the keys it changes")?;
    let picture = fields.boolean("picture")?.unwrap_or(false);
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if picture && !name.chars().all(plain) {
        return Err(fields.err(
            "picture",
            format!(
                "a variant drawn names its pictures (diagram-NAME.png): give it a name of \
                 letters, digits, '-', '_' and '.', not \"{name}\""
            ),
        ));
    }
    Ok(Variant {
        name,
        set,
        grid: None,
        picture,
    })
}

impl LessonFile {
    /// The names of events, fields and metrics the expressions use, checked
    /// against the trace and the scenario's columns.
    fn check_queries(&self, source: &str) -> Result<(), LessonFileError> {
        let sc = self.scenario_with(&[], None).map_err(|e| match e {
            ScenarioOrSet::Scenario(e) => LessonFileError::Invalid(e),
            ScenarioOrSet::Set(p, m) => LessonFileError::Invalid(ScenarioError::at(
                &self.file,
                source,
                FieldError::new(p, m),
            )),
        })?;
        let names = host::names();
        let columns = sc.columns();
        let group_columns = columns
            .tables
            .iter()
            .find(|t| t.name == "groups")
            .map_or(&[][..], |t| t.columns);
        for (path, e) in self.expressions() {
            for (id, texts) in e.host_calls(&names) {
                let bad = |allowed: &[&str], what: &str, given: &str| {
                    let hint = crate::scenario::reader::did_you_mean(given, allowed);
                    LessonFileError::Invalid(ScenarioError::at(
                        &self.file,
                        source,
                        FieldError::new(
                            path.clone(),
                            format!(
                                "{}: \"{given}\" is not {what}{hint}; allowed: {}",
                                names.funcs[id].signature,
                                allowed.join(", ")
                            ),
                        ),
                    ))
                };
                let query = Query::of(id);
                let (events, field): (&[&str], Option<&str>) = match query {
                    Query::EventTime | Query::EventCount => (&texts[..1], None),
                    Query::EventField | Query::EventCountWhere | Query::EventMax => {
                        (&texts[..1], texts.get(1).copied())
                    }
                    Query::EventGapMax => (&texts[..2], None),
                    _ => (&[], None),
                };
                for event in events {
                    if !host::EVENTS.contains(event) {
                        return Err(bad(host::EVENTS, "an event of the trace", event));
                    }
                }
                if let Some(field) = field {
                    let fields = &TRACE_COLUMNS[3..];
                    if !fields.contains(&field) && field != "time_us" {
                        return Err(bad(fields, "a column of the trace", field));
                    }
                }
                if !events.is_empty() && !matches!(sc, world::Scenario::Ethernet(_)) {
                    return Err(LessonFileError::Invalid(ScenarioError::at(
                        &self.file,
                        source,
                        FieldError::new(
                            path.clone(),
                            "the scenario is a service scenario: it has no bus trace; \
                             ask its metric(...) instead",
                        ),
                    )));
                }
                match query {
                    Query::Metric if !columns.metrics.contains(&texts[0]) => {
                        return Err(bad(columns.metrics, "a metric of this scenario", texts[0]));
                    }
                    Query::GroupMetric if !group_columns.contains(&texts[0]) => {
                        return Err(bad(group_columns, "a column of groups.csv", texts[0]));
                    }
                    Query::TableLast => {
                        let names: Vec<&str> = columns.tables.iter().map(|t| t.name).collect();
                        let Some(t) = columns.tables.iter().find(|t| t.name == &*texts[0]) else {
                            return Err(bad(
                                &names,
                                "a table of this scenario's results",
                                texts[0],
                            ));
                        };
                        if !t.columns.contains(&texts[1]) {
                            return Err(bad(t.columns, "a column of that table", texts[1]));
                        }
                    }
                    Query::MetricOf | Query::Ci95Of => {
                        let known: Vec<&str> = std::iter::once(super::spec::SCENARIO_ROW)
                            .chain(self.variants.iter().map(|v| v.name.as_str()))
                            .collect();
                        if !known.contains(&texts[0]) {
                            return Err(bad(&known, "a variant of this lesson", texts[0]));
                        }
                        if !columns.metrics.contains(&texts[1]) {
                            return Err(bad(
                                columns.metrics,
                                "a metric of this scenario",
                                texts[1],
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
        for k in 0..self.variants.len() {
            self.scenario_with(&[], Some(k)).map_err(|e| match e {
                ScenarioOrSet::Scenario(e) => LessonFileError::Invalid(e),
                ScenarioOrSet::Set(p, m) => LessonFileError::Invalid(ScenarioError::at(
                    &self.file,
                    source,
                    FieldError::new(p, m),
                )),
            })?;
        }
        for c in &self.checks {
            let reps = match c.variant {
                Some(v) => self.scenario_with(&[], Some(v)).ok(),
                None => Some(sc.clone()),
            }
            .map_or(0, |s| s.replications());
            if c.per_replication && reps < 2 {
                return Err(LessonFileError::Invalid(ScenarioError::at(
                    &self.file,
                    source,
                    FieldError::new(
                        format!("check.{}.per_replication", c.at),
                        format!(
                            "the scenario runs {reps} replication; a mean with its 95 % interval \
                             needs at least 2 (set replications in the scenario)"
                        ),
                    ),
                )));
            }
        }
        Ok(())
    }

    /// Whether a `--set` of `path` is set in the variants too.
    fn sets_over_variants(&self, path: &str) -> bool {
        self.set_over_variants
            .iter()
            .any(|p| path == p || path.starts_with(&format!("{p}.")))
    }

    /// The variants a run with `overrides` leaves out: those that, once
    /// the `--set` keys of `set_over_variants` replace their own, set the
    /// same keys to the same values as an earlier variant, or none (the
    /// lesson's own scenario).
    pub fn left_out(&self, overrides: &[(String, Value)]) -> Vec<bool> {
        let covered = |p: &str| {
            overrides.iter().any(|(o, _)| {
                self.sets_over_variants(o) && (p == o || p.starts_with(&format!("{o}.")))
            })
        };
        let own: Vec<Vec<(&String, &Value)>> = self
            .variants
            .iter()
            .map(|v| {
                let mut set: Vec<(&String, &Value)> = v
                    .set
                    .iter()
                    .filter(|(p, _)| !covered(p))
                    .map(|(p, v)| (p, v))
                    .collect();
                set.sort_by(|a, b| a.0.cmp(b.0));
                set
            })
            .collect();
        let changed = overrides.iter().any(|(o, _)| self.sets_over_variants(o));
        (0..own.len())
            .map(|k| changed && (own[k].is_empty() || own[..k].contains(&own[k])))
            .collect()
    }

    /// The line of the scenario's key `path` in the file that holds it.
    pub fn scenario_line(&self, path: &str) -> Option<usize> {
        let path = if self.scenario_prefix.is_empty() {
            path.to_string()
        } else {
            format!("{}.{path}", self.scenario_prefix)
        };
        locate::line_of(&self.scenario_source, &path)
    }

    /// Every expression of the file, with the key it is written at.
    pub fn expressions(&self) -> Vec<(String, &Expr)> {
        let mut out: Vec<(String, &Expr)> = Vec::new();
        for (k, q) in self.questions.iter().enumerate() {
            out.push((format!("question.{k}.answer"), &q.answer));
        }
        for c in &self.checks {
            let k = c.at;
            out.push((format!("check.{k}.value"), &c.value));
            out.extend(c.what.exprs().map(|e| (format!("check.{k}.what"), e)));
            out.extend(c.when.iter().map(|e| (format!("check.{k}.when"), e)));
            let nums: Vec<(&str, &Num)> = match &c.rule {
                Rule::Expect { value, tolerance } => std::iter::once(("expect", value))
                    .chain(tolerance.iter().map(|t| ("tolerance", t)))
                    .collect(),
                Rule::Range { lo, hi } => lo
                    .iter()
                    .chain(hi.iter())
                    .map(|(n, _)| ("within", n))
                    .collect(),
            };
            for (key, n) in nums {
                if let Num::Expr(e) = n {
                    out.push((format!("check.{k}.{key}"), e));
                }
            }
        }
        if let Some(t) = &self.table {
            out.extend(t.expressions());
        }
        for (k, c) in self.charts.iter().enumerate() {
            out.extend(c.expressions(k));
        }
        out
    }

    /// The scenario with the `--set` overrides and the variant's keys set,
    /// validated.
    pub fn scenario_with(
        &self,
        overrides: &[(String, Value)],
        variant: Option<usize>,
    ) -> Result<world::Scenario, ScenarioOrSet> {
        let mut table = self.scenario_table.clone();
        let variant_set = variant
            .map(|v| (v, &self.variants[v].set[..]))
            .into_iter()
            .flat_map(|(v, set)| set.iter().map(move |(p, val)| (Some(v), p, val)));
        let over = overrides
            .iter()
            .filter(|(p, _)| variant.is_some() && self.sets_over_variants(p));
        let sets = overrides
            .iter()
            .map(|(p, v)| (None, p, v))
            .chain(variant_set)
            .chain(over.map(|(p, v)| (None, p, v)));
        for (from_variant, p, v) in sets {
            crate::sweep::set_path(&mut table, p, v.clone()).map_err(|e| match from_variant {
                Some(k) => ScenarioOrSet::Set(format!("variant.{k}.set"), format!("`{p}`: {e}")),
                None => ScenarioOrSet::Set(format!("{p}={}", crate::sweep::value_label(v)), e),
            })?;
        }
        scenario::validate(&table, &self.scenario_file, &[]).map_err(|e| {
            if !overrides.is_empty() {
                let flags: Vec<String> = overrides
                    .iter()
                    .map(|(p, v)| format!("{p}={}", crate::sweep::value_label(v)))
                    .collect();
                return ScenarioOrSet::Set(
                    flags.join(" --set "),
                    format!("`{}`: {}", e.path, e.message),
                );
            }
            if let Some(k) = variant {
                return ScenarioOrSet::Set(
                    format!("variant.{k}.set"),
                    format!("`{}`: {}", e.path, e.message),
                );
            }
            let path = if self.scenario_prefix.is_empty() {
                e.path
            } else {
                format!("{}.{}", self.scenario_prefix, e.path)
            };
            let line = locate::line_of(&self.scenario_source, &path).unwrap_or(1);
            ScenarioOrSet::Scenario(ScenarioError::Invalid {
                file: self.scenario_file.clone(),
                line,
                key: path,
                message: e.message,
            })
        })
    }
}

/// Why a lesson's scenario could not be made: its own text (file, line), or
/// a key set on it (by `--set` or a variant: its path and the message).
#[derive(Debug)]
pub enum ScenarioOrSet {
    Scenario(ScenarioError),
    Set(String, String),
}
