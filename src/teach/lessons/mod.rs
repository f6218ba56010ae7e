//! The guided lessons: every lesson is a lesson file (scenarios/lessons/,
//! docs/teaching.md "Writing a lesson"), read by `file.rs` and run by
//! `runner.rs`; this module holds what every lesson shares: the built-in
//! lesson files, what a run shows (`Outcome`, `Check`), its errors and
//! `--set`.
//!
//! The built-in files are embedded, so `csmacd lesson N` works from any
//! directory. The tests run every lesson's checks, so a lesson's text
//! cannot silently stop being true.

mod chart;
mod check;
pub mod file;
mod plot;
pub mod queries;
pub mod runner;
mod runs;
mod spec;
mod table;

pub use chart::LessonChart;

use super::trace::TraceRow;
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::scenario::ScenarioError;
use toml::{Table, Value};

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
    lesson_file!(2, "2-collision"),
    lesson_file!(3, "3-beb-race"),
    lesson_file!(4, "4-minimum-frame"),
    lesson_file!(5, "5-load-throughput"),
    lesson_file!(6, "6-capture-blam"),
    lesson_file!(7, "7-thundering-herd"),
    lesson_file!(8, "8-aloha-csma-csmacd"),
    lesson_file!(9, "9-jitter"),
    lesson_file!(10, "10-herd-restart"),
    lesson_file!(11, "11-carrier-extension"),
    lesson_file!(12, "12-hub-vs-coax"),
    lesson_file!(13, "13-minimum-frame-speeds"),
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

impl BuiltinFile {
    /// One of the files the lesson names (its scenario, its text), by name:
    /// the name as messages give it (`scenarios/lessons/NAME`) and the text.
    pub fn named(&self, name: &str) -> Option<(String, &'static str)> {
        self.files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, t)| (format!("scenarios/lessons/{n}"), *t))
    }
}

/// The built-in lesson file numbered `number`.
pub fn find_file(number: u32) -> Option<&'static BuiltinFile> {
    FILE_LESSONS.iter().find(|l| l.number == number)
}

/// Every built-in lesson's number and title, in order.
pub fn catalogue() -> Vec<(u32, String)> {
    let mut all: Vec<(u32, String)> = Vec::new();
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

/// A number the lesson promises, and what the run shows.
#[derive(Clone, Debug)]
pub struct Check {
    pub what: String,
    pub expected: String,
    pub seen: String,
    pub ok: bool,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::set_path;

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
