//! Output files: the only writer. Every file is written whole or not at all
//! (a temporary file beside it, then a rename). A sweep stores each finished
//! point at once under `points/`; summary.csv, runs.csv and stations.csv are
//! then assembled from those files in point order, so a resumed, sharded or
//! multi-threaded sweep ends with the same bytes as a plain one.

use crate::sim::{RunResult, METRIC_COLUMNS};
use crate::stats::mean_ci95;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Columns derived from each run's core metrics, after them in runs.csv and
/// summary.csv: collisions per delivered frame, and the fraction of frames
/// whose fate was decided in the measured window that were dropped (at the
/// attempt limit or by a full queue).
pub const DERIVED_COLUMNS: &[&str] = &["collisions_per_delivered", "drop_fraction"];

/// Every per-run metric column: the core ones, then the derived ones.
pub fn metric_columns() -> Vec<&'static str> {
    METRIC_COLUMNS
        .iter()
        .chain(DERIVED_COLUMNS)
        .copied()
        .collect()
}

/// One run's values for [`metric_columns`].
pub fn run_values(run: &RunResult) -> Vec<f64> {
    let m = &run.metrics;
    let delivered = m.get("delivered");
    let dropped = m.get("dropped_excessive") + m.get("dropped_queue");
    let decided = delivered + m.get("undetected_collisions") + dropped;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
    let mut v = m.values.clone();
    v.push(ratio(m.get("collisions"), delivered));
    v.push(ratio(dropped, decided));
    v
}

/// Writes `bytes` to `path` atomically: a reader sees the old file or the new
/// one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_name(path, "");
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A hidden temporary name beside `path`, unique to this process, ending in
/// `suffix`.
fn temp_name(path: &Path, suffix: &str) -> std::path::PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.tmp{}{suffix}", std::process::id()))
}

/// A temporary file name beside `path`, ending in `.ext` (for writers, such
/// as the PNG encoder, that choose the format by extension).
pub fn temp_beside(path: &Path, ext: &str) -> std::path::PathBuf {
    temp_name(path, &format!(".{ext}"))
}

/// Writes several files into `dir` as one step: every file goes to a
/// temporary name first, and only when all are written and synced are they
/// renamed into place. A write error (e.g. a full disk) removes the temporary
/// files and leaves the directory as it was: no half-written file, and no mix
/// of new and old results.
pub fn write_files_atomic(dir: &Path, files: &[(&str, &[u8])]) -> std::io::Result<()> {
    let tmp_of = |name: &str| temp_name(&dir.join(name), "");
    let mut written = Vec::with_capacity(files.len());
    let result = (|| {
        for (name, bytes) in files {
            let tmp = tmp_of(name);
            written.push(tmp.clone());
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        // A directory in the way would fail its rename after others were
        // done: find it before anything is replaced.
        for (name, _) in files {
            if dir.join(name).is_dir() {
                return Err(std::io::Error::other(format!(
                    "{} is a directory",
                    dir.join(name).display()
                )));
            }
        }
        for (name, _) in files {
            std::fs::rename(tmp_of(name), dir.join(name))?;
        }
        Ok(())
    })();
    if result.is_err() {
        for tmp in &written {
            let _ = std::fs::remove_file(tmp);
        }
    }
    result
}

/// A number as CSV text: shortest round-trip form, empty when undefined.
pub fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{x}")
    }
}

/// One simulated point: its axis values and the runs of its replications.
pub struct PointRuns<'a> {
    pub axes: &'a [(String, String)],
    pub seeds: &'a [u64],
    pub runs: &'a [RunResult],
}

fn csv_bytes(header: &[String], rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = w.write_record(header);
    for r in rows {
        let _ = w.write_record(r);
    }
    w.into_inner().unwrap_or_default()
}

fn axis_header(points: &[PointRuns]) -> Vec<String> {
    points
        .first()
        .map(|p| p.axes.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default()
}

/// summary.csv: one row per point; the axes, then each metric's mean and its
/// Student-t 95 % half-width `<metric>_ci95` (empty with one replication).
pub fn summary_csv(points: &[PointRuns]) -> Vec<u8> {
    let names = axis_header(points);
    let values: Vec<Vec<Vec<f64>>> = points
        .iter()
        .map(|p| p.runs.iter().map(run_values).collect())
        .collect();
    summary_bytes(
        &names,
        points.iter().zip(&values).map(|(p, v)| {
            (
                p.axes.iter().map(|(_, x)| x.clone()).collect(),
                v.as_slice(),
            )
        }),
    )
}

/// summary.csv from each point's axis values and its runs' metric values.
fn summary_bytes<'a>(
    axis_names: &[String],
    points: impl Iterator<Item = (Vec<String>, &'a [Vec<f64>])>,
) -> Vec<u8> {
    let mut header = axis_names.to_vec();
    header.push("replications".into());
    let columns = metric_columns();
    for c in &columns {
        header.push(c.to_string());
        header.push(format!("{c}_ci95"));
    }
    let rows: Vec<Vec<String>> = points
        .map(|(axes, runs)| {
            let mut row = axes;
            row.push(runs.len().to_string());
            for k in 0..columns.len() {
                let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
                let (m, h) = mean_ci95(&vals);
                row.push(num(m));
                row.push(num(h));
            }
            row
        })
        .collect();
    csv_bytes(&header, &rows)
}

/// runs.csv: one row per point and replication, with the run's seed.
pub fn runs_csv(points: &[PointRuns]) -> Vec<u8> {
    let mut header = axis_header(points);
    header.push("replication".into());
    header.push("seed".into());
    header.extend(metric_columns().iter().map(|c| c.to_string()));
    let mut rows = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            row.push(r.to_string());
            row.push(p.seeds[r].to_string());
            row.extend(run_values(run).iter().map(|&v| num(v)));
            rows.push(row);
        }
    }
    csv_bytes(&header, &rows)
}

/// stations.csv: one row per point, replication and station.
pub fn stations_csv(points: &[PointRuns]) -> Vec<u8> {
    let mut header = axis_header(points);
    for h in [
        "replication",
        "station",
        "group",
        "position_m",
        "arrived",
        "delivered",
        "attempts",
        "collisions",
        "dropped_excessive",
        "dropped_queue",
        "undetected_collisions",
        "delay_mean_us",
        "throughput_share",
    ] {
        header.push(h.into());
    }
    let mut rows = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            let total: u64 = run.stations.iter().map(|s| s.delivered_bits).sum();
            for s in &run.stations {
                let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
                let share = if total > 0 {
                    s.delivered_bits as f64 / total as f64
                } else {
                    f64::NAN
                };
                row.extend([
                    r.to_string(),
                    s.id.to_string(),
                    s.group.to_string(),
                    num(s.position_m),
                    s.arrived.to_string(),
                    s.delivered.to_string(),
                    s.attempts.to_string(),
                    s.collisions.to_string(),
                    s.dropped_excessive.to_string(),
                    s.dropped_queue.to_string(),
                    s.undetected_collisions.to_string(),
                    num(s.mean_delay_us()),
                    num(share),
                ]);
                rows.push(row);
            }
        }
    }
    csv_bytes(&header, &rows)
}

/// A file that could not be written, read or trusted.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Corrupt { path: String, message: String },
    #[error("{missing} of {total} points have no results (first: point {first}); run the missing shards or `csmacd sweep FILE --resume --out DIR`")]
    Missing {
        missing: usize,
        total: usize,
        first: usize,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a file through `write`, which is given a temporary path beside
/// `path` with the same extension (a chart encoder picks its format from it),
/// then renames it into place.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), OutputError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let tmp = dir.join(format!(".{stem}.tmp{}{ext}", std::process::id()));
    let result = write(&tmp)
        .map_err(|message| OutputError::Corrupt {
            path: path.display().to_string(),
            message,
        })
        .and_then(|()| std::fs::rename(&tmp, path).map_err(io_err(path)));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

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
    /// Per replication, the values of [`metric_columns`].
    pub values: Vec<Vec<f64>>,
}

fn split_header(text: &str) -> (&str, &str) {
    match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

fn header_line(names: Vec<String>) -> String {
    let bytes = csv_bytes(&names, &[]);
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

fn runs_header(key: &PointKey) -> Vec<String> {
    let mut h: Vec<String> = key.axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.push("seed".into());
    h.extend(metric_columns().iter().map(|c| c.to_string()));
    h
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
    let header = runs_header(key);
    let (h, rows) = split_header(&runs);
    if h != header_line(header.clone()) {
        return Ok(None);
    }
    let mut reader = csv::ReaderBuilder::new()
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
    /// Per point, per replication, the values of [`metric_columns`].
    pub values: Vec<Vec<Vec<f64>>>,
}

/// Assembles summary.csv, runs.csv and stations.csv from the stored points of
/// `out`, in point order; every point must be there.
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
    let mut runs = header_line(keys.first().map(runs_header).unwrap_or_default());
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
