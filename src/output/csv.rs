//! The CSV tables as bytes: summary.csv, runs.csv and stations.csv, and the
//! columns derived from each run's metrics. Nothing here touches a file.

use crate::sim::{RunResult, METRIC_COLUMNS};
use crate::stats::mean_ci95;

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
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
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
pub(super) fn summary_bytes<'a>(
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
    let header = runs_header(points.first().map(|p| p.axes).unwrap_or(&[]));
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

/// A header row as one line of CSV text, without its line end.
pub(super) fn header_line(names: Vec<String>) -> String {
    let bytes = csv_bytes(&names, &[]);
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// runs.csv's columns for a point with these axes.
pub(super) fn runs_header(axes: &[(String, String)]) -> Vec<String> {
    let mut h: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.push("seed".into());
    h.extend(metric_columns().iter().map(|c| c.to_string()));
    h
}
