//! The sweep file -> Plan: `[sweep]` axes expanded into a grid of validated
//! points, each with its own seed; `[[chart]]` specs; shards. It runs nothing.

use crate::output::chart::{self, AxisColumn, ChartSpec};
use crate::results::Columns;
use crate::scenario::reader::FieldError;
use crate::scenario::{self, ScenarioError};
use crate::seed;
use crate::units::format_bytes;
use crate::world::Scenario;
use std::path::Path;
use toml::{Table, Value};

/// The most points a sweep may hold: beyond this a grid is almost surely a typo.
pub const MAX_POINTS: usize = 1_000_000;

/// The most a sweep's points may hold in memory once read, by estimate
/// ([`point_bytes`]): about 10^6 points of a small scenario (a point of
/// one group takes about 1 KiB, measured), fewer of scenarios with
/// explicit positions (8 bytes each, per point).
pub const MAX_PLAN_BYTES: f64 = (2u64 << 30) as f64;

/// What a point holds beyond its scenario's own data and its axis
/// values: its seed, the vectors' headers and the allocator's share.
const POINT_BYTES: f64 = 512.0;

/// An upper estimate of the bytes a point holds: its scenario
/// ([`Scenario::held_bytes`]), its axis assignments and [`POINT_BYTES`].
fn point_bytes(sc: &Scenario, assignments: &[(String, String)]) -> f64 {
    let axes: usize = assignments
        .iter()
        .map(|(k, v)| k.len() + v.len() + 64)
        .sum();
    sc.held_bytes() + axes as f64 + POINT_BYTES
}

/// One point of a sweep: its axis assignments (dotted path, value as text),
/// the scenario they give, and its seed.
#[derive(Clone, Debug)]
pub struct Point {
    pub axes: Vec<(String, String)>,
    pub scenario: Scenario,
    pub seed: u64,
}

impl Point {
    /// A point whose seed derives from the master seed and its own axis
    /// values only (sorted by path, so the order of the axes in the file does
    /// not matter either): adding values to a grid leaves other points unchanged.
    pub fn new(axes: Vec<(String, String)>, scenario: Scenario) -> Self {
        let mut sorted: Vec<&(String, String)> = axes.iter().collect();
        sorted.sort();
        let key: String = sorted.iter().map(|(k, v)| format!("{k}={v};")).collect();
        let seed = seed::derive(scenario.seed(), &[seed::fnv1a(key.as_bytes())]);
        Point {
            axes,
            scenario,
            seed,
        }
    }

    /// The seeds of the replications this point runs at least.
    pub fn replication_seeds(&self) -> Vec<u64> {
        self.seeds_upto(self.scenario.replications())
    }

    /// The seeds of every replication this point may run: with a target
    /// precision, up to `max_replications`; the first ones are
    /// [`Point::replication_seeds`].
    pub fn all_replication_seeds(&self) -> Vec<u64> {
        self.seeds_upto(self.scenario.max_replications())
    }

    fn seeds_upto(&self, n: u32) -> Vec<u64> {
        (0..n)
            .map(|r| seed::replication_seed(self.seed, r))
            .collect()
    }

    /// "path=value, path=value", or "base scenario" for a point without axes.
    pub fn describe(&self) -> String {
        if self.axes.is_empty() {
            return "the base scenario".into();
        }
        self.axes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One sweep axis: a dotted path into the scenario and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The dotted path the axis sets, or a linked axis's name.
    pub path: String,
    pub values: Vec<Value>,
    /// Each value as it appears in CSV columns and in the point's seed.
    pub labels: Vec<String>,
    /// A linked axis (`[sweep.linked.NAME]`): the paths it sets together,
    /// each with its own values, one per value of the axis. Empty for a
    /// plain axis, which sets `path` to `values`.
    pub linked: Vec<(String, Vec<Value>)>,
}

impl Axis {
    /// The axis as a chart sees it: its summary column and the values there.
    pub fn column(&self) -> AxisColumn<'_> {
        AxisColumn {
            name: &self.path,
            labels: &self.labels,
        }
    }
}

/// A checked sweep: every point validated, ready to run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub axes: Vec<Axis>,
    /// The grid in order: the first axis varies slowest, the last fastest.
    pub points: Vec<Point>,
    pub charts: Vec<ChartSpec>,
    /// The file as run, seed and name made explicit: running it repeats the sweep.
    pub resolved: String,
}

impl Plan {
    /// The master seed (None for a plan without points).
    pub fn seed(&self) -> Option<u64> {
        self.points.first().map(|p| p.scenario.seed())
    }

    /// Total simulation runs: points times their replications.
    pub fn runs(&self) -> u64 {
        self.points
            .iter()
            .map(|p| p.scenario.replications() as u64)
            .sum()
    }
}

/// The K-th of N slices of a grid (1-based): point i belongs to slice
/// `i mod N + 1`, so every slice gets a mix of cheap and costly points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    pub fn contains(&self, index: usize) -> bool {
        index % self.n + 1 == self.k
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a shard; write K/N with 1 <= K <= N, e.g. 2/8");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

/// A sweep file that cannot be run: where, and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Point(Box<PointFault>),
}

/// A point of the grid that is not a valid scenario: the axis value behind
/// it when one is (else the key at fault), the point and all its values.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {}", self.describe())]
pub struct PointFault {
    pub file: String,
    pub line: usize,
    /// The axis and value at fault, when the fault lies under an axis.
    pub axis: Option<(String, String)>,
    pub point: usize,
    pub assignments: String,
    pub key: String,
    pub message: String,
}

impl PointFault {
    fn describe(&self) -> String {
        match &self.axis {
            Some((axis, value)) => format!(
                "sweep axis `{axis}` = {value} at point {} ({}): `{}`: {}",
                self.point, self.assignments, self.key, self.message
            ),
            None => format!(
                "`{}`: {} (at sweep point {}: {})",
                self.key, self.message, self.point, self.assignments
            ),
        }
    }
}

/// Loads a sweep file (or a plain scenario: a sweep of one point).
pub fn load(path: &Path, seed: Option<u64>) -> Result<Plan, SweepError> {
    let file = path.display().to_string();
    let text = scenario::read_text(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    from_str(&file, &stem, &text, seed)
}

/// The text of an axis value: strings bare, numbers in shortest form, other
/// values as inline TOML.
pub fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f}"),
        Value::Boolean(b) => b.to_string(),
        other => other.to_string().trim().to_string(),
    }
}

/// Checks a sweep file's text and expands its grid, validating every point.
/// `file` names it in errors; `default_name` names the sweep when it has no
/// `name`; `seed` replaces the master seed.
pub fn from_str(
    file: &str,
    default_name: &str,
    text: &str,
    seed: Option<u64>,
) -> Result<Plan, SweepError> {
    let at = |e: FieldError| SweepError::Scenario(ScenarioError::at(file, text, e));
    let mut table = scenario::parse_table(file, text)?;
    if let Some(s) = seed {
        table.insert("seed".into(), Value::Integer(s as i64));
    }
    let axes = match table.get("sweep") {
        None => Vec::new(),
        Some(Value::Table(t)) => {
            let mut axes = Vec::new();
            read_axes("", t, &mut axes).map_err(at)?;
            check_axes_apart(&axes).map_err(at)?;
            axes
        }
        Some(v) => {
            let example = if table.contains_key("server") {
                "\"clients.0.count\" = [10, 100, 1000]"
            } else {
                "\"stations.0.count\" = [2, 4, 8]"
            };
            return Err(at(FieldError::new(
                "sweep",
                format!(
                    "is {}, not a table of axes; write a line [sweep], then one line per axis: \
                     a dotted path into the scenario and the list of its values, e.g. {example}",
                    crate::scenario::reader::describe(v)
                ),
            )));
        }
    };
    // An axis must stay within the scenario's world: a key of the other
    // world would turn each point into a scenario of it.
    let service = table.contains_key("server");
    for a in &axes {
        let root = a.path.split('.').next().unwrap_or_default();
        let (other, whose, this): (&[&str], &str, &str) = if service {
            (
                &["medium", "stations", "nonstandard_frames"],
                "bus scenarios ([medium], [[stations]])",
                "a service scenario ([server]), whose axes are keys of its [server], [network], \
                 [[clients]] or top level, e.g. \"server.failure\"",
            )
        } else {
            (
                &["server", "network", "clients"],
                "service scenarios ([server], [[clients]])",
                "a bus scenario, whose axes are keys of its [medium], [[stations]] or top \
                 level, e.g. \"medium.length\"",
            )
        };
        if other.contains(&root) {
            return Err(at(FieldError::new(
                format!("sweep.{}", a.path),
                format!("`{root}` belongs to {whose}; this file is {this}"),
            )));
        }
    }
    let total = axes
        .iter()
        .try_fold(1usize, |acc, a| acc.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| {
            at(FieldError::new(
                "sweep",
                format!("the grid has more than {MAX_POINTS} points; sweep fewer values"),
            ))
        })?;

    let extra = &["sweep", "chart"];
    // Each point starts from the scenario without its [sweep] and [[chart]]
    // tables: copying an axis of n values into each of n points would take
    // n^2 steps.
    let mut base = table.clone();
    base.remove("sweep");
    base.remove("chart");
    let mut points = Vec::with_capacity(total);
    let mut held = 0.0;
    for index in 0..total {
        // Mixed radix, last axis fastest.
        let mut rem = index;
        let mut choice = vec![0; axes.len()];
        for (a, axis) in axes.iter().enumerate().rev() {
            choice[a] = rem % axis.values.len();
            rem /= axis.values.len();
        }
        let assignments: Vec<(String, String)> = axes
            .iter()
            .zip(&choice)
            .map(|(a, &c)| (a.path.clone(), a.labels[c].clone()))
            .collect();
        let describe = || {
            assignments
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut point_table = base.clone();
        for (axis, &c) in axes.iter().zip(&choice) {
            let sets: Vec<(&str, &Value)> = if axis.linked.is_empty() {
                vec![(axis.path.as_str(), &axis.values[c])]
            } else {
                axis.linked
                    .iter()
                    .map(|(p, v)| (p.as_str(), &v[c]))
                    .collect()
            };
            if let Err(message) = sets
                .into_iter()
                .try_for_each(|(p, v)| set_path(&mut point_table, p, v.clone()))
            {
                return Err(SweepError::Point(Box::new(PointFault {
                    file: file.into(),
                    line: axis_line(text, &axis.path),
                    axis: Some((axis.path.clone(), axis.labels[c].clone())),
                    point: index,
                    assignments: describe(),
                    key: axis.path.clone(),
                    message,
                })));
            }
        }
        let sc = match scenario::validate(&point_table, default_name, extra) {
            Ok(sc) => sc,
            Err(e) if axes.is_empty() => return Err(at(e)),
            Err(e) => {
                return Err(point_error(
                    file,
                    text,
                    &axes,
                    &choice,
                    index,
                    describe(),
                    e,
                ))
            }
        };
        // The points are held together: refuse, from the first one, a grid
        // that would not fit, and stop once the points built do not.
        let bytes = point_bytes(&sc, &assignments);
        let projected = if index == 0 {
            bytes * total as f64
        } else {
            held + bytes
        };
        if projected > MAX_PLAN_BYTES {
            return Err(at(FieldError::new(
                "sweep",
                format!(
                    "its {total} points would hold about {} once read (about {} a point, its \
                     scenario's explicit positions and frame sizes included), more than the {} \
                     a sweep may hold at once; sweep fewer values, or split the grid into \
                     several sweep files",
                    format_bytes(bytes * total as f64),
                    format_bytes(bytes),
                    format_bytes(MAX_PLAN_BYTES)
                ),
            )));
        }
        held += bytes;
        points.push(Point::new(assignments, sc));
    }
    let name = points
        .first()
        .map(|p| p.scenario.name().to_string())
        .unwrap_or_else(|| default_name.to_string());
    let master = points.first().map(|p| p.scenario.seed()).unwrap_or(1);
    let columns = points.first().map_or(
        Columns {
            metrics: &[],
            headline: &[],
            tables: &[],
        },
        |p| p.scenario.columns(),
    );
    if let Some(a) = axes
        .iter()
        .find(|a| !a.linked.is_empty() && columns.metrics.contains(&a.path.as_str()))
    {
        return Err(at(FieldError::new(
            format!("sweep.linked.{}", a.path),
            format!(
                "`{}` is a column of summary.csv already; give the linked axis another name",
                a.path
            ),
        )));
    }
    let surges: Vec<Option<(f64, f64)>> = points.iter().map(|p| p.scenario.surge_s()).collect();
    let charts = read_charts(&table, &axes, &columns, &surges).map_err(at)?;

    // The resolved file names its scenario and seed, so it repeats the sweep
    // wherever it is copied.
    table.insert("name".into(), Value::String(name.clone()));
    table.insert("seed".into(), Value::Integer(master as i64));
    let body = toml::to_string(&table).map_err(|e| at(FieldError::new("", e.to_string())))?;
    let mut resolved = format!(
        "# As run by csmacd {}: `csmacd sweep` on this file repeats it.\n{body}",
        env!("CARGO_PKG_VERSION")
    );
    if !resolved.ends_with('\n') {
        resolved.push('\n');
    }
    Ok(Plan {
        name,
        axes,
        points,
        charts,
        resolved,
    })
}

/// Reads `[sweep]`: each key a dotted path (quoted, or nested tables), each
/// value a non-empty list of distinct values.
fn read_axes(prefix: &str, t: &Table, out: &mut Vec<Axis>) -> Result<(), FieldError> {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let key = format!("sweep.{path}");
        match v {
            Value::Array(values) if values.is_empty() => {
                return Err(FieldError::new(
                    key,
                    "is an empty list; give the values this axis takes",
                ))
            }
            Value::Array(values) => {
                if path.split('.').any(str::is_empty) {
                    return Err(FieldError::new(
                        key,
                        "is not a dotted path such as \"stations.0.count\"",
                    ));
                }
                if path == "sweep"
                    || path.starts_with("sweep.")
                    || path == "chart"
                    || path.starts_with("chart.")
                {
                    return Err(FieldError::new(
                        key,
                        "a sweep cannot vary its own [sweep] or [[chart]] tables",
                    ));
                }
                if values.len() > MAX_POINTS {
                    return Err(FieldError::new(
                        key,
                        format!(
                            "lists {} values; a sweep holds at most {MAX_POINTS} points; sweep fewer values",
                            values.len()
                        ),
                    ));
                }
                let labels: Vec<String> = values.iter().map(value_label).collect();
                let mut seen = std::collections::HashSet::with_capacity(labels.len());
                for l in &labels {
                    if !seen.insert(l.as_str()) {
                        return Err(FieldError::new(
                            key,
                            format!("lists `{l}` twice; each value of an axis must be distinct"),
                        ));
                    }
                }
                out.push(Axis {
                    path,
                    values: values.clone(),
                    labels,
                    linked: Vec::new(),
                });
            }
            Value::Table(sub) if path == "linked" => read_linked(sub, out)?,
            Value::Table(sub) => read_axes(&path, sub, out)?,
            _ => {
                return Err(FieldError::new(
                    key,
                    "expected a list of values, e.g. \"stations.0.traffic.load\" = [0.2, 0.5, 0.8]",
                ))
            }
        }
    }
    Ok(())
}

/// Columns the result files write beside the axes: a linked axis may not
/// take their names.
const FIXED_COLUMNS: &[&str] = &[
    "replication",
    "replications",
    "seed",
    "group",
    "policy",
    "stations",
];

/// Refuses two axes that set one path (or a path and a part of it), which
/// would label points with values they did not run, and a linked axis
/// named as another axis or a column of the result files.
fn check_axes_apart(axes: &[Axis]) -> Result<(), FieldError> {
    let key = |a: &Axis| {
        if a.linked.is_empty() {
            format!("sweep.{}", a.path)
        } else {
            format!("sweep.linked.{}", a.path)
        }
    };
    let sets = |a: &Axis| -> Vec<String> {
        if a.linked.is_empty() {
            vec![a.path.clone()]
        } else {
            a.linked.iter().map(|(p, _)| p.clone()).collect()
        }
    };
    let within = |p: &str, q: &str| {
        p == q || q.starts_with(&format!("{p}.")) || p.starts_with(&format!("{q}."))
    };
    for (i, a) in axes.iter().enumerate() {
        if !a.linked.is_empty() {
            if FIXED_COLUMNS.contains(&a.path.as_str()) {
                return Err(FieldError::new(
                    key(a),
                    format!("`{}` is a column the result files already have; give the linked axis another name", a.path),
                ));
            }
            for (j, b) in a.linked.iter().enumerate() {
                if let Some((c, _)) = a.linked[..j].iter().find(|(c, _)| within(c, &b.0)) {
                    return Err(FieldError::new(
                        key(a),
                        format!(
                            "sets `{}` and `{c}`, one inside the other; each path once",
                            b.0
                        ),
                    ));
                }
            }
        }
        for b in &axes[..i] {
            if a.path == b.path {
                return Err(FieldError::new(
                    key(a),
                    format!("`{}` names another axis too; give it another name", a.path),
                ));
            }
            for p in sets(a) {
                if let Some(q) = sets(b).into_iter().find(|q| within(&p, q)) {
                    return Err(FieldError::new(
                        key(a),
                        format!(
                            "sets `{p}`, which {} `{q}` also sets: the CSV would name values the points did not run; sweep each path on one axis",
                            key(b)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads `[sweep.linked.NAME]` tables: each holds dotted paths whose lists,
/// all of one length, move together as one axis named NAME; `values`, when
/// given, is what the axis's column shows (else the first path's values).
fn read_linked(t: &Table, out: &mut Vec<Axis>) -> Result<(), FieldError> {
    for (name, v) in t {
        let key = format!("sweep.linked.{name}");
        let Value::Table(members) = v else {
            return Err(FieldError::new(
                key,
                "expected a table of paths moving together, e.g. [sweep.linked.load] with \"stations.0.traffic.load\" = [0.1, 0.2] and \"stations.1.traffic.load\" = [0.1, 0.2]",
            ));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(FieldError::new(
                key,
                "a linked axis's name is its CSV column: letters, digits, `_` and `-`",
            ));
        }
        let mut linked: Vec<(String, Vec<Value>)> = Vec::new();
        let mut shown: Option<Vec<Value>> = None;
        for (path, list) in members {
            let at = format!("{key}.{path}");
            let Value::Array(values) = list else {
                return Err(FieldError::new(
                    at,
                    "expected a list of values, one per point of the axis",
                ));
            };
            if values.is_empty() {
                return Err(FieldError::new(
                    at,
                    "is an empty list; give the values this path takes",
                ));
            }
            if path == "values" {
                shown = Some(values.clone());
                continue;
            }
            if path.split('.').any(str::is_empty)
                || path.starts_with("sweep")
                || path.starts_with("chart")
            {
                return Err(FieldError::new(
                    at,
                    "is not a dotted path such as \"stations.0.traffic.load\"",
                ));
            }
            linked.push((path.clone(), values.clone()));
        }
        let Some(len) = linked.first().map(|(_, v)| v.len()) else {
            return Err(FieldError::new(
                key,
                "links no paths; give two or more, e.g. \"stations.0.traffic.load\" = [0.1, 0.2]",
            ));
        };
        let mut lists: Vec<(&str, &Vec<Value>)> =
            linked.iter().map(|(p, v)| (p.as_str(), v)).collect();
        if let Some(v) = &shown {
            lists.push(("values", v));
        }
        for (path, values) in lists {
            if values.len() != len {
                return Err(FieldError::new(
                    format!("{key}.{path}"),
                    format!(
                        "has {} values where `{}` has {len}; linked lists move together and must be of one length",
                        values.len(),
                        linked[0].0
                    ),
                ));
            }
        }
        let values = shown.unwrap_or_else(|| linked[0].1.clone());
        let labels: Vec<String> = values.iter().map(value_label).collect();
        for (i, l) in labels.iter().enumerate() {
            if labels[..i].contains(l) {
                return Err(FieldError::new(
                    key,
                    format!("shows `{l}` twice; each value of an axis must be distinct (give `values` to tell them apart)"),
                ));
            }
        }
        out.push(Axis {
            path: name.clone(),
            values,
            labels,
            linked,
        });
    }
    Ok(())
}

/// Sets the value at a dotted path (`stations.0.traffic.load`; numbers index
/// arrays), creating missing tables on the way.
pub fn set_path(table: &mut Table, path: &str, value: Value) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    let (first, rest) = segs.split_first().ok_or("empty path")?;
    if rest.is_empty() {
        table.insert(first.to_string(), value);
        return Ok(());
    }
    let child = table
        .entry(first.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    set_in(child, &segs, 1, value)
}

fn set_in(cur: &mut Value, segs: &[&str], i: usize, value: Value) -> Result<(), String> {
    let seg = segs[i];
    let here = segs[..i].join(".");
    let last = i + 1 == segs.len();
    let next: &mut Value = match cur {
        Value::Table(t) if last => {
            t.insert(seg.to_string(), value);
            return Ok(());
        }
        Value::Table(t) => t
            .entry(seg.to_string())
            .or_insert_with(|| Value::Table(Table::new())),
        Value::Array(a) => {
            let n = a.len();
            let idx: usize = seg
                .parse()
                .map_err(|_| format!("`{here}` is a list of {n}; `{seg}` is not an index"))?;
            let item = a.get_mut(idx).ok_or_else(|| {
                format!("`{here}.{seg}` does not exist: `{here}` has {n} item(s), indexed from 0")
            })?;
            if last {
                *item = value;
                return Ok(());
            }
            item
        }
        _ => {
            return Err(format!(
                "`{here}` is a single value, not a table; sweep `{here}` itself, or write it as a table"
            ))
        }
    };
    set_in(next, segs, i + 1, value)
}

fn axis_line(text: &str, axis: &str) -> usize {
    scenario::locate::line_of(text, &format!("sweep.{axis}")).unwrap_or(1)
}

/// Names the axis behind a point's validation error: the longest axis path
/// that is the error's key, inside it, or around it.
fn point_error(
    file: &str,
    text: &str,
    axes: &[Axis],
    choice: &[usize],
    point: usize,
    assignments: String,
    e: FieldError,
) -> SweepError {
    let related = |a: &str| {
        a == e.path
            || e.path.starts_with(&format!("{a}."))
            || a.starts_with(&format!("{}.", e.path))
    };
    let axis = axes
        .iter()
        .enumerate()
        .filter(|(_, a)| related(&a.path))
        .max_by_key(|(_, a)| a.path.len());
    let (line, axis) = match axis {
        Some((i, a)) => (
            axis_line(text, &a.path),
            Some((a.path.clone(), a.labels[choice[i]].clone())),
        ),
        None => (scenario::locate::line_of(text, &e.path).unwrap_or(1), None),
    };
    SweepError::Point(Box::new(PointFault {
        file: file.into(),
        line,
        axis,
        point,
        assignments,
        key: e.path,
        message: e.message,
    }))
}

/// Reads `[[chart]]` tables: x an axis or a summary column, y a summary
/// column, series axes; with `series = "group"`, one series per station
/// group, x and y then columns of the groups table. Scales, size and file
/// names are checked here, so that a bad chart stops the sweep before it runs.
/// `table = "timeseries"` (a table the world writes) draws from that table;
/// `shade = "surge"` (each point's surge, in seconds: `surges`) or
/// `shade = [from, to]` shades an interval of x.
fn read_charts(
    table: &Table,
    axes: &[Axis],
    columns: &Columns,
    surges: &[Option<(f64, f64)>],
) -> Result<Vec<ChartSpec>, FieldError> {
    use crate::scenario::reader::{Fields, Item};
    let Some(v) = table.get("chart") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(FieldError::new(
            "chart",
            "expected [[chart]] tables with x, y and optional series",
        ));
    };
    let axis_paths: Vec<&str> = axes.iter().map(|a| a.path.as_str()).collect();
    let metrics = columns.metrics;
    let groups: Option<&[&str]> = columns
        .tables
        .iter()
        .find(|t| t.name == chart::GROUP_TABLE)
        .map(|t| t.columns);
    let axis_columns: Vec<_> = axes.iter().map(Axis::column).collect();
    let mut charts: Vec<ChartSpec> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("chart.{i}");
        let mut f = Fields::of(Item {
            path: &path,
            value: item,
        })?;
        if f.contains("log_x") {
            return Err(f.err(
                "log_x",
                "is not a chart key; write x_scale = \"log\" (or \"linear\", the default)",
            ));
        }
        f.allow(KEYS)?;
        let series = f.with("series", |it| match it.value {
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let p = format!("{}.{k}", it.path);
                    Item { path: &p, value: v }.str().map(str::to_string)
                })
                .collect(),
            _ => Err(it.err("expected an axis path, \"group\", or a list of them")),
        })?;
        let series = series.unwrap_or_default();
        let per_group = series.iter().any(|s| s == chart::GROUP_SERIES);
        let tables: Vec<&str> = columns
            .tables
            .iter()
            .map(|t| t.name)
            .filter(|n| *n != chart::GROUP_TABLE)
            .collect();
        let from_table = match f.string("table")? {
            Some(t) if per_group => {
                return Err(f.err(
                    "table",
                    format!("`{t}` with series = \"group\": a per-group chart draws from groups.csv; remove one of them"),
                ))
            }
            Some(t) if tables.contains(&t.as_str()) => Some(t),
            Some(t) => {
                return Err(f.err(
                    "table",
                    format!(
                        "`{t}` is not a table this world writes per bin; allowed: {}",
                        list_or_none(&tables)
                    ),
                ))
            }
            None => None,
        };
        let from_file = from_table.as_ref().map(|t| format!("{t}.csv"));
        // The columns this chart can draw: summary.csv's, groups.csv's, or
        // the named table's.
        let (table_name, allowed): (&str, &[&str]) = if let Some(t) = &from_table {
            let cols = columns
                .tables
                .iter()
                .find(|s| s.name == t.as_str())
                .map_or(&[][..], |s| s.columns);
            (from_file.as_deref().unwrap_or_default(), cols)
        } else if per_group {
            match groups {
                Some(g) => ("groups.csv", g),
                None => {
                    return Err(f.err(
                        "series",
                        "\"group\" needs a world that writes groups.csv; this one does not",
                    ))
                }
            }
        } else {
            ("summary.csv", metrics)
        };
        let x = f.string("x")?;
        let x = f.require(
            "x",
            x,
            "the column on the x axis, e.g. x = \"stations.0.traffic.load\"",
        )?;
        if !axis_paths.contains(&x.as_str()) && !allowed.contains(&x.as_str()) {
            return Err(f.err(
                "x",
                format!(
                    "`{x}` is neither a sweep axis nor a column of {table_name}; axes: {}; columns: {}",
                    list_or_none(&axis_paths),
                    allowed.join(", ")
                ),
            ));
        }
        let y = f.string("y")?;
        let y = f.require("y", y, "the column on the y axis, e.g. y = \"throughput\"")?;
        if !allowed.contains(&y.as_str()) {
            return Err(f.err(
                "y",
                format!(
                    "`{y}` is not a column of {table_name}; allowed: {}",
                    allowed.join(", ")
                ),
            ));
        }
        for s in &series {
            if !axis_paths.contains(&s.as_str()) && s != chart::GROUP_SERIES {
                return Err(f.err(
                    "series",
                    format!(
                        "`{s}` is neither a sweep axis nor \"group\"; axes: {}",
                        list_or_none(&axis_paths)
                    ),
                ));
            }
        }
        let title = f.string("title")?;
        let name = f.string("name")?;
        if let Some(n) = &name {
            if n.is_empty() || n.contains(['/', '\\']) || n.starts_with('.') {
                return Err(f.err("name", "a file stem without slashes, e.g. \"throughput\""));
            }
        }
        let scale = |f: &mut Fields, key: &str| -> Result<chart::Scale, FieldError> {
            Ok(match f.choice(key, &["linear", "log"])?.as_deref() {
                Some("log") => chart::Scale::Log,
                _ => chart::Scale::Linear,
            })
        };
        let x_scale = scale(&mut f, "x_scale")?;
        let y_scale = scale(&mut f, "y_scale")?;
        if x_scale == chart::Scale::Log {
            if let Some(a) = axes.iter().find(|a| a.path == x) {
                if let Some(bad) = a
                    .labels
                    .iter()
                    .find(|l| chart::parse_number(l).is_none_or(|(v, _)| v <= 0.0))
                {
                    return Err(f.err(
                        "x_scale",
                        format!("a log scale needs positive numbers; `{x}` takes `{bad}`"),
                    ));
                }
            }
        }
        let size = f.with("size", |it| {
            let bad = || it.err("expected [width, height] in pixels, e.g. size = [1200, 800]");
            let Value::Array(a) = it.value else {
                return Err(bad());
            };
            let [Value::Integer(w), Value::Integer(h)] = a.as_slice() else {
                return Err(bad());
            };
            let (w, h) = (
                u32::try_from(*w).unwrap_or(0),
                u32::try_from(*h).unwrap_or(0),
            );
            chart::check_size(w, h).map_err(|e| it.err(e))
        })?;
        let shade = f.with("shade", |it| read_shade(it, surges))?;
        let theory = f.with("theory", read_theory)?.unwrap_or_default();
        if !theory.is_empty() {
            if let Some(a) = axes.iter().find(|a| a.path == x) {
                if let Some(bad) = a.labels.iter().find(|l| chart::parse_number(l).is_none()) {
                    return Err(f.err(
                        "theory",
                        format!("a theory line needs numbers on x; `{x}` takes `{bad}`"),
                    ));
                }
            }
        }
        f.finish(KEYS)?;
        let spec = ChartSpec {
            x,
            y,
            series,
            title,
            name,
            x_scale,
            y_scale,
            size,
            table: from_table,
            shade,
            theory,
        };
        // Two charts of one name would overwrite each other.
        let file = chart::complete(&spec, &axis_columns)
            .name
            .unwrap_or_default();
        if names.contains(&file) {
            return Err(FieldError::new(
                format!("{path}.name"),
                format!(
                    "another [[chart]] is drawn as charts/{file}; give this one another `name`"
                ),
            ));
        }
        names.push(file);
        charts.push(spec);
    }
    Ok(charts)
}

/// The keys of a `[[chart]]` table.
const KEYS: &[&str] = &[
    "x", "y", "series", "title", "name", "x_scale", "y_scale", "size", "table", "shade", "theory",
];

/// A chart's `theory`: `[{ label = "pure ALOHA", y = "x * exp(-2 * x)" }, ...]`,
/// each y an expression of the chart's x.
fn read_theory(it: crate::scenario::reader::Item) -> Result<Vec<chart::Theory>, FieldError> {
    let list = it.array()?;
    let mut out: Vec<chart::Theory> = Vec::new();
    for (k, v) in list.iter().enumerate() {
        let path = format!("{}.{k}", it.path);
        let item = crate::scenario::reader::Item {
            path: &path,
            value: v,
        };
        let mut f = crate::scenario::reader::Fields::of(item)?;
        let label = f.string("label")?;
        let label = f.require(
            "label",
            label,
            "the line's name in the legend, e.g. label = \"pure ALOHA\"",
        )?;
        let y = f.string("y")?;
        let y = f.require(
            "y",
            y,
            "the line as an expression of x, e.g. y = \"x * exp(-2 * x)\"",
        )?;
        f.finish(&["label", "y"])?;
        if out.iter().any(|t| t.label == label) {
            return Err(FieldError::new(
                format!("{path}.label"),
                format!("\"{label}\" names another theory line of this chart"),
            ));
        }
        let t = chart::Theory::new(&label, &y)
            .map_err(|e| FieldError::new(format!("{path}.y"), e.to_string()))?;
        out.push(t);
    }
    Ok(out)
}

/// A chart's `shade`: "surge" (the scenario's, the same at every point) or
/// [from, to] in the x axis's units.
fn read_shade(
    it: crate::scenario::reader::Item,
    surges: &[Option<(f64, f64)>],
) -> Result<chart::Shade, FieldError> {
    match it.value {
        Value::String(s) if s == "surge" => {
            let first = surges.first().copied().flatten();
            match first {
                Some((from, to)) if surges.iter().all(|s| *s == first) => Ok(chart::Shade {
                    from,
                    to,
                    label: "surge".into(),
                }),
                Some(_) => Err(it.err(
                    "the points' surges differ; shade a fixed interval, e.g. shade = [20, 30]",
                )),
                None => Err(it.err("\"surge\" needs a scenario with a surge; this one has none")),
            }
        }
        Value::Array(a) => {
            let num = |v: &Value| match v {
                Value::Integer(i) => Some(*i as f64),
                Value::Float(x) if x.is_finite() => Some(*x),
                _ => None,
            };
            match a.as_slice() {
                [a, b] => match (num(a), num(b)) {
                    (Some(from), Some(to)) if from < to => Ok(chart::Shade {
                        from,
                        to,
                        label: String::new(),
                    }),
                    _ => Err(it.err("expected [from, to] with from < to, in the x axis's units")),
                },
                _ => Err(it.err("expected [from, to] with from < to, in the x axis's units")),
            }
        }
        _ => Err(it.err("expected \"surge\" or [from, to] in the x axis's units")),
    }
}

fn list_or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parsing_and_slicing() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s, Shard { k: 2, n: 3 });
        let mine: Vec<usize> = (0..7).filter(|&i| s.contains(i)).collect();
        assert_eq!(mine, vec![1, 4]);
        for bad in ["0/2", "3/2", "1/0", "x/2", "2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn set_path_walks_tables_and_arrays() {
        let mut t: Table =
            "[[stations]]\ncount = 2\ntraffic = { kind = \"poisson\", load = 0.1 }\n"
                .parse()
                .unwrap();
        set_path(&mut t, "stations.0.traffic.load", Value::Float(0.5)).unwrap();
        set_path(&mut t, "medium.length", Value::String("100m".into())).unwrap();
        assert_eq!(t["stations"][0]["traffic"]["load"].as_float(), Some(0.5));
        assert_eq!(t["medium"]["length"].as_str(), Some("100m"));
        let e = set_path(&mut t, "stations.3.count", Value::Integer(1)).unwrap_err();
        assert!(e.contains("1 item"), "{e}");
        let e = set_path(&mut t, "stations.0.count.x", Value::Integer(1)).unwrap_err();
        assert!(e.contains("single value"), "{e}");
    }
}
