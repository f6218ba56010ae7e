//! Lesson files: a lesson written as data (docs/teaching.md, "Writing a
//! lesson"): its title, its text (Markdown, a file beside it or inline), its
//! scenario (a file beside it or an inline `[scenario]` table), its what-if
//! variants, the questions a class answers before the run and the checks of
//! what the text promises, both as expressions of the one expression
//! language with the run queries of [`super::host`]. Read and checked whole
//! before anything runs: an error names the file, the key and its line.

use super::queries::{self as host, Query};
use crate::expr::{Expr, Names};
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

/// The most questions, checks and variants a lesson file may hold.
pub const MAX_ITEMS: usize = 64;

const TOP_KEYS: &[&str] = &[
    "title", "number", "text", "scenario", "window", "question", "check", "variant",
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
const CHECK_KEYS: &[&str] = &[
    "what",
    "value",
    "unit",
    "expect",
    "tolerance",
    "within",
    "per_replication",
    "variant",
];
const VARIANT_KEYS: &[&str] = &["name", "set"];

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

/// What a check's value must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    Expect { value: f64, tolerance: f64 },
    Within { lo: f64, hi: f64 },
}

/// A number the lesson's text promises, checked on the run.
#[derive(Clone, Debug)]
pub struct CheckSpec {
    pub what: String,
    pub value: Expr,
    pub unit: String,
    pub rule: Rule,
    pub per_replication: bool,
    pub variant: Option<usize>,
}

/// A what-if of the lesson's own: its scenario with these keys set.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub set: Vec<(String, Value)>,
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
    pub variants: Vec<Variant>,
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
    let variants = read_list(&mut f, "variant", read_variant).map_err(at)?;
    let names = host::names();
    let variant_of = |fields: &mut Fields| -> Result<Option<usize>, FieldError> {
        let Some(name) = fields.string("variant")? else {
            return Ok(None);
        };
        match variants.iter().position(|v| v.name == name) {
            Some(i) => Ok(Some(i)),
            None => {
                let known: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                Err(fields.err(
                    "variant",
                    format!(
                        "no [[variant]] is named \"{name}\"; the lesson's variants: {}",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                ))
            }
        }
    };
    let questions = read_list(&mut f, "question", |fields| {
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
    let checks = read_list(&mut f, "check", |fields| {
        fields.allow(CHECK_KEYS)?;
        let what = fields.string("what")?;
        let what = fields.require("what", what, "write the sentence the check prints")?;
        let value = expression(fields, "value", &names)?;
        let unit = fields.string("unit")?.unwrap_or_default();
        let expect = fields.float("expect", f64::MIN, f64::MAX)?;
        let tolerance = fields.float("tolerance", 0.0, f64::MAX)?;
        let within = fields.with("within", |i| {
            let a = i.array()?;
            let bound = |k: usize| {
                a.get(k).map_or_else(
                    || Err(i.err("expected [lo, hi], two numbers")),
                    |v| {
                        Item {
                            path: &format!("{}.{k}", i.path),
                            value: v,
                        }
                        .float()
                    },
                )
            };
            if a.len() != 2 {
                return Err(i.err(format!(
                    "expected [lo, hi], two numbers; found {} values",
                    a.len()
                )));
            }
            let (lo, hi) = (bound(0)?, bound(1)?);
            if lo > hi {
                return Err(i.err(format!("{lo} is above {hi}; write [lo, hi] with lo <= hi")));
            }
            Ok((lo, hi))
        })?;
        let rule = match (expect, within) {
            (Some(_), Some(_)) => {
                return Err(fields.err("within", "give either expect or within, not both"))
            }
            (Some(value), None) => Rule::Expect {
                value,
                tolerance: tolerance.unwrap_or(value.abs() * EXACT),
            },
            (None, Some((lo, hi))) => {
                if tolerance.is_some() {
                    return Err(fields.err(
                        "tolerance",
                        "a tolerance goes with expect; within = [lo, hi] is a range already",
                    ));
                }
                Rule::Within { lo, hi }
            }
            (None, None) => {
                return Err(fields.err(
                    "expect",
                    "missing; say what the value must be: expect = 0.5 (with tolerance) or \
                     within = [0.3, 0.45]",
                ))
            }
        };
        let per_replication = fields.boolean("per_replication")?.unwrap_or(false);
        let variant = variant_of(fields)?;
        Ok(CheckSpec {
            what,
            value,
            unit,
            rule,
            per_replication,
            variant,
        })
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
    };
    lesson.check_queries(source)?;
    Ok(lesson)
}

/// The relative tolerance of a question that states none.
pub const DEFAULT_REL_TOLERANCE: f64 = 0.01;

/// An `expect` without a tolerance: equal up to floating-point rounding.
const EXACT: f64 = 1e-9;

/// Whether `text` is a file's name ending in `ext` rather than inline text.
fn is_file_name(text: &str, ext: &str) -> bool {
    !text.contains('\n') && text.ends_with(ext) && !text.contains(char::is_whitespace)
}

fn expression(fields: &mut Fields, key: &str, names: &Names) -> Result<Expr, FieldError> {
    let text = fields.string(key)?;
    let text = fields.require(
        key,
        text,
        "write an expression, e.g. event_time(\"collision\", 1, 1)",
    )?;
    Expr::parse(&text, names).map_err(|e| fields.err(key, e.to_string()))
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
    Ok(Variant { name, set })
}

/// Reads the array of tables at `key` (`[[key]]`), each through `read`.
fn read_list<T>(
    f: &mut Fields,
    key: &str,
    mut read: impl FnMut(&mut Fields) -> Result<T, FieldError>,
) -> Result<Vec<T>, FieldError> {
    let path = f.key_path(key);
    let Some(v) = f.get(key) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(FieldError::new(
            path,
            format!("expected [[{key}]] tables, found {}", describe(v)),
        ));
    };
    if items.len() > MAX_ITEMS {
        return Err(FieldError::new(
            path,
            format!("{} tables; a lesson holds at most {MAX_ITEMS}", items.len()),
        ));
    }
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let p = format!("{path}.{k}");
        let mut fields = Fields::of(Item {
            path: &p,
            value: item,
        })?;
        out.push(read(&mut fields)?);
        let allowed = match key {
            "question" => QUESTION_KEYS,
            "check" => CHECK_KEYS,
            _ => VARIANT_KEYS,
        };
        fields.finish(allowed)?;
    }
    Ok(out)
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
        let exprs = self
            .questions
            .iter()
            .enumerate()
            .map(|(k, q)| (format!("question.{k}.answer"), &q.answer))
            .chain(
                self.checks
                    .iter()
                    .enumerate()
                    .map(|(k, c)| (format!("check.{k}.value"), &c.value)),
            );
        for (path, e) in exprs {
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
                match Query::of(id) {
                    Query::EventTime | Query::EventCount | Query::EventField => {
                        if !host::EVENTS.contains(&texts[0]) {
                            return Err(bad(host::EVENTS, "an event of the trace", texts[0]));
                        }
                        if let (Query::EventField, Some(field)) = (Query::of(id), texts.get(1)) {
                            let fields = &TRACE_COLUMNS[3..];
                            if !fields.contains(field) && *field != "time_us" {
                                return Err(bad(fields, "a column of the trace", field));
                            }
                        }
                        if !matches!(sc, world::Scenario::Ethernet(_)) {
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
                    }
                    Query::Metric => {
                        if !columns.metrics.contains(&texts[0]) {
                            return Err(bad(
                                columns.metrics,
                                "a metric of this scenario",
                                texts[0],
                            ));
                        }
                    }
                    Query::GroupMetric => {
                        if !group_columns.contains(&texts[0]) {
                            return Err(bad(group_columns, "a column of groups.csv", texts[0]));
                        }
                    }
                    Query::Prop => {}
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
        for (k, c) in self.checks.iter().enumerate() {
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
                        format!("check.{k}.per_replication"),
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

    /// The line of the scenario's key `path` in the file that holds it.
    pub fn scenario_line(&self, path: &str) -> Option<usize> {
        let path = if self.scenario_prefix.is_empty() {
            path.to_string()
        } else {
            format!("{}.{path}", self.scenario_prefix)
        };
        locate::line_of(&self.scenario_source, &path)
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
        let sets = overrides
            .iter()
            .map(|(p, v)| (None, p, v))
            .chain(variant_set);
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
