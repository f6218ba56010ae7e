//! The points/ store: each finished point under its index, read back only
//! when it is the same point, and the final tables assembled from it.

use super::csv::{header_line, runs_csv, runs_header, stations_csv, summary_bytes, PointRuns};
use super::{io_err, write_atomic, OutputError};
use std::path::{Path, PathBuf};

/// Where a sweep keeps its finished points.
pub fn points_dir(out: &Path) -> PathBuf {
    out.join("points")
}

/// The resolved sweep whose points are in points/: it identifies the work in
/// progress (for `--resume` and `merge`). The top-level scenario.toml is only
/// written with the final CSVs, so that it always describes them.
pub fn plan_path(out: &Path) -> PathBuf {
    points_dir(out).join("scenario.toml")
}

fn point_path(out: &Path, index: usize, what: &str) -> PathBuf {
    points_dir(out).join(format!("{index:06}.{what}.csv"))
}

/// Stores one finished point: its stations file, then its runs file, each
/// atomically. A point is finished once its runs file exists, so an
/// interrupted write (even `kill -9`) leaves either a whole point or none.
pub fn write_point(out: &Path, index: usize, point: &PointRuns) -> Result<(), OutputError> {
    let dir = points_dir(out);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let one = std::slice::from_ref(point);
    let stations = point_path(out, index, "stations");
    write_atomic(&stations, &stations_csv(one)).map_err(io_err(&stations))?;
    let runs = point_path(out, index, "runs");
    write_atomic(&runs, &runs_csv(one)).map_err(io_err(&runs))
}

/// What a point must hold to count as finished: its axis values and the seeds
/// of its replications.
pub struct PointKey<'a> {
    pub axes: &'a [(String, String)],
    pub seeds: &'a [u64],
}

/// A finished point read back from `points/`.
pub struct StoredPoint {
    /// runs.csv rows and stations.csv rows, without headers.
    pub runs_rows: String,
    pub stations_rows: String,
    /// Per replication, the values of [`metric_columns`](super::metric_columns).
    pub values: Vec<Vec<f64>>,
}

fn split_header(text: &str) -> (&str, &str) {
    match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

/// Reads point `index` from `dir`'s points/ if it is there and is the point
/// described by `key` (same axes, replications and seeds); `Ok(None)` when it
/// is missing or belongs to another grid.
pub fn read_point(
    dir: &Path,
    index: usize,
    key: &PointKey,
) -> Result<Option<StoredPoint>, OutputError> {
    let runs_path = point_path(dir, index, "runs");
    let stations_path = point_path(dir, index, "stations");
    let (Ok(runs), Ok(stations)) = (
        std::fs::read_to_string(&runs_path),
        std::fs::read_to_string(&stations_path),
    ) else {
        return Ok(None);
    };
    let header = runs_header(key.axes);
    let (h, rows) = split_header(&runs);
    if h != header_line(header.clone()) {
        return Ok(None);
    }
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(rows.as_bytes());
    let n_axes = key.axes.len();
    let mut values = Vec::new();
    for (r, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| OutputError::Corrupt {
            path: runs_path.display().to_string(),
            message: e.to_string(),
        })?;
        let expected_seed = key.seeds.get(r).map(|s| s.to_string());
        let axes_match = key
            .axes
            .iter()
            .enumerate()
            .all(|(i, (_, v))| rec.get(i) == Some(v.as_str()));
        if rec.len() != header.len()
            || !axes_match
            || rec.get(n_axes) != Some(r.to_string().as_str())
            || rec.get(n_axes + 1).map(str::to_string) != expected_seed
        {
            return Ok(None);
        }
        let v: Vec<f64> = (n_axes + 2..rec.len())
            .map(|i| match &rec[i] {
                "" => f64::NAN,
                t => t.parse().unwrap_or(f64::NAN),
            })
            .collect();
        values.push(v);
    }
    if values.len() != key.seeds.len() {
        return Ok(None);
    }
    Ok(Some(StoredPoint {
        runs_rows: rows.to_string(),
        stations_rows: split_header(&stations).1.to_string(),
        values,
    }))
}

/// Removes every stored point (a fresh start) and any temporary file a
/// killed run left behind.
pub fn clear_points(out: &Path) -> Result<(), OutputError> {
    let dir = points_dir(out);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(&dir)(e)),
        _ => Ok(()),
    }
}

/// Removes temporary files a killed run left in points/.
pub fn clean_temporaries(out: &Path) {
    if let Ok(entries) = std::fs::read_dir(points_dir(out)) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with('.') {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Copies point `index` from one output directory to another.
pub fn copy_point(from: &Path, to: &Path, index: usize) -> Result<(), OutputError> {
    let dir = points_dir(to);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    for what in ["stations", "runs"] {
        let src = point_path(from, index, what);
        let bytes = std::fs::read(&src).map_err(io_err(&src))?;
        let dst = point_path(to, index, what);
        write_atomic(&dst, &bytes).map_err(io_err(&dst))?;
    }
    Ok(())
}

/// The assembled tables of a whole sweep.
pub struct Assembled {
    pub summary: Vec<u8>,
    pub runs: Vec<u8>,
    pub stations: Vec<u8>,
    /// Per point, per replication, the values of [`metric_columns`](super::metric_columns).
    pub values: Vec<Vec<Vec<f64>>>,
}

/// Assembles summary.csv, runs.csv and stations.csv from the stored points of
/// `out`, in point order; every point must be there. Only the store is read,
/// so a resumed, sharded or multi-threaded sweep ends with the same bytes as
/// a plain one.
pub fn assemble(out: &Path, keys: &[PointKey]) -> Result<Assembled, OutputError> {
    let mut stored = Vec::with_capacity(keys.len());
    let mut missing = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match read_point(out, i, k)? {
            Some(p) => stored.push(p),
            None => missing.push(i),
        }
    }
    if let Some(&first) = missing.first() {
        return Err(OutputError::Missing {
            missing: missing.len(),
            total: keys.len(),
            first,
        });
    }
    let axis_names: Vec<String> = keys
        .first()
        .map(|k| k.axes.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let mut runs = header_line(
        keys.first()
            .map(|k| runs_header(k.axes))
            .unwrap_or_default(),
    );
    runs.push('\n');
    let empty = PointRuns {
        axes: keys.first().map(|k| k.axes).unwrap_or(&[]),
        seeds: &[],
        runs: &[],
    };
    let mut stations =
        String::from_utf8_lossy(&stations_csv(std::slice::from_ref(&empty))).into_owned();
    for p in &stored {
        runs.push_str(&p.runs_rows);
        stations.push_str(&p.stations_rows);
    }
    let summary = summary_bytes(
        &axis_names,
        keys.iter().zip(&stored).map(|(k, p)| {
            (
                k.axes.iter().map(|(_, v)| v.clone()).collect(),
                p.values.as_slice(),
            )
        }),
    );
    Ok(Assembled {
        summary,
        runs: runs.into_bytes(),
        stations: stations.into_bytes(),
        values: stored.into_iter().map(|p| p.values).collect(),
    })
}
