//! Scenario files: TOML text -> checked, typed [`world::Scenario`]. Every value is read
//! through a path-tracking reader, so an error names the file, key, line and what
//! is allowed; once a scenario is built here a run fails only when its clock
//! cannot advance, which it reports ([`crate::results::Stalled`]).

mod durations;
mod ethernet;
pub mod locate;
pub mod policies;
pub mod reader;
pub mod service;
mod service_group;
mod service_time;
mod stacks;
mod topology;

pub use ethernet::{check_run_memory, validate_bus, GROUP_KEYS, MEDIUM_KEYS, TOP_KEYS};

use crate::ethernet::{Medium, Scenario};
use crate::world;
use reader::FieldError;
use std::path::Path;
use toml::Table;

/// The largest simulated duration: 10^6 s, far inside the 64-bit picosecond clock.
pub const MAX_DURATION_S: f64 = 1e6;
/// The most stations a scenario may hold (the crowd benchmark uses 10^6).
pub const MAX_STATIONS: u64 = 10_000_000;
const _: () = assert!(MAX_STATIONS <= crate::ethernet::MAX_STATIONS);
pub const MAX_REPLICATIONS: i64 = 1_000_000;
/// The most memory a scenario may ask for, whatever the machine: 64 GiB. The
/// CLI also refuses a scenario whose estimate exceeds the memory available.
pub const MAX_MEMORY_BYTES: u64 = 64 << 30;
/// The longest scenario name, in characters.
pub const MAX_NAME: usize = 128;
/// The longest group name, in characters.
pub const MAX_GROUP_NAME: usize = 64;
/// The slowest bit rate, 1 b/s, so that one bit time fits the picosecond clock.
pub const MIN_BIT_RATE: f64 = 1.0;

/// A scenario that cannot be used: where, and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    // The message carries the I/O error; it is not also chained as a source,
    // which would print it twice.
    #[error("{file}: cannot read the scenario: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: is a service scenario ([server]), not a bus scenario; this command shows the Ethernet bus only (run it with `csmacd run`, or `csmacd sweep` for a sweep file)")]
    NotBus { file: String },
    #[error("{file}: is a sweep file ([sweep]); this command shows one run of one scenario: run every point with `csmacd sweep {file}`, or give the values to see in a copy of the file without its [sweep] table")]
    SweepFile { file: String },
    #[error("{file}: is a directory; give a scenario file (.toml)")]
    IsDirectory { file: String },
    #[error("{file}: is not UTF-8 text; a scenario is a TOML text file")]
    NotUtf8 { file: String },
    #[error("{file}: is empty; a scenario needs at least `duration` and one [[stations]] group")]
    Empty { file: String },
    #[error("{file}:{line}: TOML syntax error: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}:{line}: `{key}`: {message}")]
    Invalid {
        file: String,
        line: usize,
        key: String,
        message: String,
    },
}

impl ScenarioError {
    /// Attaches file and line to a field error found in `source`.
    pub fn at(file: &str, source: &str, e: FieldError) -> Self {
        let line = locate::line_of(source, &e.path).unwrap_or(1);
        ScenarioError::Invalid {
            file: file.to_string(),
            line,
            key: e.path,
            message: e.message,
        }
    }
}

/// Reads a scenario file's text, refusing directories, non-UTF-8 and empty files.
pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(ScenarioError::IsDirectory { file });
    }
    let bytes = std::fs::read(path).map_err(|error| ScenarioError::Io {
        file: file.clone(),
        error,
    })?;
    let text =
        String::from_utf8(bytes).map_err(|_| ScenarioError::NotUtf8 { file: file.clone() })?;
    if text.trim().is_empty() {
        return Err(ScenarioError::Empty { file });
    }
    Ok(text)
}

/// Parses TOML text into a table, with the line of any syntax error.
pub fn parse_table(file: &str, text: &str) -> Result<Table, ScenarioError> {
    // TOML forbids control characters; say which and where rather than let
    // the parser guess at what was meant.
    if let Some((at, c)) = text
        .char_indices()
        .find(|(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(ScenarioError::Syntax {
            file: file.to_string(),
            line: locate::line_of_offset(text, at),
            message: format!(
                "the control character U+{:04X} is not allowed; a scenario is plain text",
                c as u32
            ),
        });
    }
    let mut table = text.parse::<Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| locate::line_of_offset(text, s.start))
            .unwrap_or(1);
        ScenarioError::Syntax {
            file: file.to_string(),
            line,
            message: e.message().trim().to_string(),
        }
    })?;
    resolve_files(&mut table, file);
    Ok(table)
}

/// Makes a relative `server.service.file` (an empirical service time law)
/// relative to the scenario file's directory, as a reader expects.
fn resolve_files(table: &mut Table, file: &str) {
    let Some(dir) = Path::new(file)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    else {
        return;
    };
    let service = table
        .get_mut("server")
        .and_then(toml::Value::as_table_mut)
        .and_then(|s| s.get_mut("service"))
        .and_then(toml::Value::as_table_mut);
    if let Some(toml::Value::String(f)) = service.and_then(|s| s.get_mut("file")) {
        if Path::new(f.as_str()).is_relative() {
            *f = dir.join(f.as_str()).display().to_string();
        }
    }
}

/// Loads and validates a single-point scenario file.
pub fn load(path: &Path) -> Result<world::Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    from_str(&file, &stem, &text)
}

/// Validates scenario text; `file` names it in errors, `default_name` names
/// the scenario when it has no `name`.
pub fn from_str(
    file: &str,
    default_name: &str,
    text: &str,
) -> Result<world::Scenario, ScenarioError> {
    let table = parse_table(file, text)?;
    validate(&table, default_name, &[]).map_err(|e| ScenarioError::at(file, text, e))
}

/// As [`load`], for what only the bus world has (traces, diagrams): a
/// scenario of another world is refused with a message that says so.
pub fn load_bus(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let table = parse_table(&file, &text)?;
    if table.contains_key("sweep") && !is_service(&table) {
        return Err(ScenarioError::SweepFile { file });
    }
    load(path)?
        .into_ethernet()
        .ok_or(ScenarioError::NotBus { file })
}

/// As [`load_bus`], for one run up to a window's end (a trace, a diagram, a
/// view): the whole scenario's memory (its duration and replications) is
/// not checked, the window's run is ([`check_run_memory`]).
pub fn load_bus_window(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    let table = parse_table(&file, &text)?;
    if is_service(&table) {
        return Err(ScenarioError::NotBus { file });
    }
    if table.contains_key("sweep") {
        return Err(ScenarioError::SweepFile { file });
    }
    ethernet::validate_bus_window(&table, &stem).map_err(|e| ScenarioError::at(&file, &text, e))
}

/// As [`from_str`], for a scenario that must be a bus scenario.
pub fn bus_from_str(file: &str, default_name: &str, text: &str) -> Result<Scenario, ScenarioError> {
    from_str(file, default_name, text)?
        .into_ethernet()
        .ok_or_else(|| ScenarioError::NotBus {
            file: file.to_string(),
        })
}

/// Whether a scenario table is the service world's (`[server]` or
/// `[[servers]]`).
pub(crate) fn is_service(table: &Table) -> bool {
    table.contains_key("server") || table.contains_key("servers")
}

/// Checks a scenario table and builds the typed scenario of its world.
/// `extra_keys` are top-level keys that a caller reads itself (e.g. `sweep`,
/// `chart`).
pub fn validate(
    table: &Table,
    default_name: &str,
    extra_keys: &[&str],
) -> Result<world::Scenario, FieldError> {
    if is_service(table) {
        return service::validate(table, default_name, extra_keys).map(world::Scenario::Service);
    }
    validate_bus(table, default_name, extra_keys).map(world::Scenario::Ethernet)
}

/// The keys every world's scenario has, read the same way for all.
pub(crate) struct Common {
    pub name: String,
    pub seed: u64,
    pub replications: u32,
}

/// Refuses top-level keys other than the world's `keys` and the caller's
/// `extra_keys` (which the caller reads itself, e.g. `sweep`, `chart`), then
/// reads `name` (default: `default_name`), `seed` (default 1) and
/// `replications` (default 1).
pub(crate) fn read_common(
    top: &mut reader::Fields,
    keys: &[&str],
    extra_keys: &[&str],
    default_name: &str,
) -> Result<Common, FieldError> {
    top.allow(&[keys, extra_keys].concat())?;
    for k in extra_keys {
        top.get(k);
    }
    let name = top
        .with("name", |i| reader::name(i, MAX_NAME, "my study"))?
        .unwrap_or_else(|| default_name.to_string());
    let seed = top.with("seed", |i| {
        let v = i.integer()?;
        u64::try_from(v).map_err(|_| {
            i.err(format!(
                "{v} is negative; a seed is an integer from 0 to {}",
                i64::MAX
            ))
        })
    })?;
    let replications = top
        .integer("replications", 1, MAX_REPLICATIONS)?
        .unwrap_or(1) as u32;
    Ok(Common {
        name,
        seed: seed.unwrap_or(1),
        replications,
    })
}
