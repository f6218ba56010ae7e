//! Output files: the only writer. Every file is written whole or not at all
//! (a temporary file beside it, then a rename).

use crate::sim::{RunResult, METRIC_COLUMNS};
use crate::stats::mean_ci95;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a reader sees the old file or the new
/// one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
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

/// Writes several files into `dir` as one step: every file goes to a
/// temporary name first, and only when all are written and synced are they
/// renamed into place. A write error (e.g. a full disk) removes the temporary
/// files and leaves the directory as it was: no half-written file, and no mix
/// of new and old results.
pub fn write_files_atomic(dir: &Path, files: &[(&str, &[u8])]) -> std::io::Result<()> {
    let tmp_of = |name: &str| dir.join(format!(".{name}.tmp{}", std::process::id()));
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

/// A temporary file name beside `path`, ending in `.ext` (for writers, such
/// as the PNG encoder, that choose the format by extension).
pub fn temp_beside(path: &Path, ext: &str) -> std::path::PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.tmp{}.{ext}", std::process::id()))
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
    let mut header = axis_header(points);
    header.push("replications".into());
    for c in METRIC_COLUMNS {
        header.push(c.to_string());
        header.push(format!("{c}_ci95"));
    }
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            row.push(p.runs.len().to_string());
            for k in 0..METRIC_COLUMNS.len() {
                let vals: Vec<f64> = p.runs.iter().map(|r| r.metrics.values[k]).collect();
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
    header.extend(METRIC_COLUMNS.iter().map(|c| c.to_string()));
    let mut rows = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            row.push(r.to_string());
            row.push(p.seeds[r].to_string());
            row.extend(run.metrics.values.iter().map(|&v| num(v)));
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
