//! The sweep file -> Plan: `[sweep]` axes expanded into a grid of validated
//! points, each with its own seed; `[[chart]]` specs; shards. It runs nothing.

use super::axes::{self, Axis, FIXED_COLUMNS, MAX_POINTS};
use super::charts::read_charts;
use crate::output::chart::{self, ChartSpec};
use crate::results::Columns;
use crate::scenario::reader::FieldError;
use crate::scenario::{self, ScenarioError};
use crate::seed;
use crate::units::format_bytes;
use crate::world::Scenario;
use std::path::Path;
use toml::{Table, Value};

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
        let seed = point_seed(scenario.seed(), &axes);
        Point {
            axes,
            scenario,
            seed,
        }
    }

    /// A point of a sweep whose seed is given: derived from its values'
    /// full texts ([`point_seed`]), or common to every point of a sweep
    /// with common random numbers ([`common_seed`]).
    pub fn seeded(axes: Vec<(String, String)>, scenario: Scenario, seed: u64) -> Self {
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

/// The seed of a point from the master seed and its axis values (path,
/// value text), sorted by path so that the order of the axes in the file
/// does not matter: adding values to a grid leaves other points unchanged.
pub fn point_seed(master: u64, axes: &[(String, String)]) -> u64 {
    let mut sorted: Vec<&(String, String)> = axes.iter().collect();
    sorted.sort();
    let key: String = sorted.iter().map(|(k, v)| format!("{k}={v};")).collect();
    seed::derive(master, &[seed::fnv1a(key.as_bytes())])
}

/// The seed every point of a sweep with `common_random_numbers = true`
/// shares: replication r of every point then runs on one seed.
pub fn common_seed(master: u64) -> u64 {
    seed::derive(master, &[seed::COMMON])
}

/// A checked sweep: every point validated, ready to run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub axes: Vec<Axis>,
    /// The grid in order: the first axis varies slowest, the last fastest.
    pub points: Vec<Point>,
    pub charts: Vec<ChartSpec>,
    /// Whether every point runs on the same seeds (`common_random_numbers`).
    pub common_random_numbers: bool,
    /// The file as run, seed and name made explicit: running it repeats the sweep.
    pub resolved: String,
}

impl Plan {
    /// The master seed (None for a plan without points).
    pub fn seed(&self) -> Option<u64> {
        self.points.first().map(|p| p.scenario.seed())
    }

    /// The charts the sweep draws, completed ([`chart::complete`]): those
    /// its `[[chart]]` tables ask for, else the default ones a world has
    /// the columns for (a world without the bus's metrics gets its headline
    /// metrics against the same axis).
    pub fn chart_specs(&self) -> Vec<ChartSpec> {
        let axes: Vec<_> = self.axes.iter().map(Axis::column).collect();
        let specs = if self.charts.is_empty() {
            let mut specs = chart::default_specs(&axes);
            if let Some(columns) = self.points.first().map(|p| p.scenario.columns()) {
                let x = specs.first().map(|s| s.x.clone());
                specs.retain(|s| columns.metrics.contains(&s.y.as_str()));
                if let (true, Some(x)) = (specs.is_empty(), x) {
                    specs = columns
                        .headline
                        .iter()
                        .map(|y| ChartSpec {
                            x: x.clone(),
                            y: y.to_string(),
                            ..Default::default()
                        })
                        .collect();
                }
            }
            specs
        } else {
            self.charts.clone()
        };
        specs.iter().map(|s| chart::complete(s, &axes)).collect()
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

/// The top-level key that gives every point of a sweep the same seeds.
pub const CRN_KEY: &str = "common_random_numbers";

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
        Some(Value::Table(t)) => axes::read("sweep", t).map_err(at)?,
        Some(v) => {
            let example = if crate::scenario::is_service(&table) {
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
    let service = crate::scenario::is_service(&table);
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
    let total = axes::grid_size(&axes).ok_or_else(|| {
        at(FieldError::new(
            "sweep",
            format!("the grid has more than {MAX_POINTS} points; sweep fewer values"),
        ))
    })?;

    let common_random_numbers =
        match table.get(CRN_KEY) {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(_) => return Err(at(FieldError::new(
                CRN_KEY,
                "expected true or false: whether every point of the sweep runs on the same seeds",
            ))),
        };
    let extra = &["sweep", "chart", CRN_KEY];
    // Each point starts from the scenario without its [sweep] and [[chart]]
    // tables: copying an axis of n values into each of n points would take
    // n^2 steps.
    let mut base = table.clone();
    base.remove("sweep");
    base.remove("chart");
    base.remove(CRN_KEY);
    let mut points = Vec::with_capacity(total);
    let mut held = 0.0;
    for index in 0..total {
        let choice = axes::grid_choice(&axes, index);
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
            if let Err(message) = axis
                .sets(c)
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
        let seed = if common_random_numbers {
            common_seed(sc.seed())
        } else {
            let keys: Vec<(String, String)> = axes
                .iter()
                .zip(&choice)
                .map(|(a, &c)| (a.path.clone(), a.keys[c].clone()))
                .collect();
            point_seed(sc.seed(), &keys)
        };
        points.push(Point::seeded(assignments, sc, seed));
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
    // A top-level axis named as a column a result file writes (`seed` in
    // runs.csv, `stations` in groups.csv) is written as `sweep.NAME`.
    let mut axes = axes;
    for (i, a) in axes.iter_mut().enumerate() {
        let taken = FIXED_COLUMNS.contains(&a.path.as_str())
            || columns.metrics.contains(&a.path.as_str())
            || columns
                .tables
                .iter()
                .any(|t| t.columns.contains(&a.path.as_str()));
        if a.linked.is_empty() && taken {
            a.column = format!("sweep.{}", a.path);
            for p in &mut points {
                p.axes[i].0 = a.column.clone();
            }
        }
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
        common_random_numbers,
        resolved,
    })
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
