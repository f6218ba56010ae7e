//! The CSV tables as bytes: summary.csv and runs.csv from the runs' named
//! metrics, and one file per table a world's runs give (stations.csv, ...).
//! Nothing here touches a file, and nothing here knows a world.

use crate::results::{Cell, Columns, RunOutput, TableSpec};
use crate::stats::mean_ci95;

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

/// A cell as CSV text: counts as integers, numbers as [`num`].
pub fn cell(c: &Cell) -> String {
    match c {
        Cell::Count(n) => n.to_string(),
        Cell::Number(x) => num(*x),
        Cell::Text(t) => t.to_string(),
    }
}

/// One simulated point: its axis values, the columns of its world, and the
/// runs of its replications.
pub struct PointRuns<'a> {
    pub axes: &'a [(String, String)],
    pub seeds: &'a [u64],
    pub columns: Columns,
    pub runs: &'a [RunOutput],
}

pub(super) fn csv_bytes(header: &[String], rows: &[Vec<String>]) -> Vec<u8> {
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
    let metrics = points.first().map_or(&[][..], |p| p.columns.metrics);
    let values: Vec<Vec<Vec<f64>>> = points
        .iter()
        .map(|p| p.runs.iter().map(|r| r.metrics.clone()).collect())
        .collect();
    summary_bytes(
        &names,
        metrics,
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
    metrics: &[&str],
    points: impl Iterator<Item = (Vec<String>, &'a [Vec<f64>])>,
) -> Vec<u8> {
    let mut header = axis_names.to_vec();
    header.push("replications".into());
    for c in metrics {
        header.push(c.to_string());
        header.push(format!("{c}_ci95"));
    }
    let rows: Vec<Vec<String>> = points
        .map(|(axes, runs)| {
            let mut row = axes;
            row.push(runs.len().to_string());
            for k in 0..metrics.len() {
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
    let header = match points.first() {
        Some(p) => runs_header(p.axes, &p.columns),
        None => Vec::new(),
    };
    let mut rows = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            row.push(r.to_string());
            row.push(p.seeds[r].to_string());
            row.extend(run.metrics.iter().map(|&v| num(v)));
            rows.push(row);
        }
    }
    csv_bytes(&header, &rows)
}

/// One of the world's tables (`spec`, at position `k` of its tables) as
/// `<name>.csv`: one row per point, replication and table row.
pub fn table_csv(points: &[PointRuns], k: usize) -> Vec<u8> {
    let mut text = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = table_csv_into(&mut text, points, k);
    text
}

/// [`table_csv`], written to `w` as it is made.
pub fn table_csv_into(
    w: &mut dyn std::io::Write,
    points: &[PointRuns],
    k: usize,
) -> std::io::Result<()> {
    let Some(spec) = points.first().and_then(|p| p.columns.tables.get(k)) else {
        return Ok(());
    };
    let header = table_header(points.first().map_or(&[], |p| p.axes), spec);
    // Row by row: a crowd's table has a row per station, and holding every
    // row's cells as strings first took several times the memory of the
    // text itself.
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(w);
    w.write_record(&header)?;
    let mut row: Vec<String> = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            for cells in run.tables[k].iter() {
                row.clear();
                row.extend(p.axes.iter().map(|(_, v)| v.clone()));
                row.push(r.to_string());
                row.extend(cells.iter().map(cell));
                w.write_record(&row)?;
            }
        }
    }
    w.flush()
}

/// stations.csv: one row per point, replication and station.
pub fn stations_csv(points: &[PointRuns]) -> Vec<u8> {
    let k = points
        .first()
        .and_then(|p| p.columns.tables.iter().position(|t| t.name == "stations"));
    k.map(|k| table_csv(points, k)).unwrap_or_default()
}

/// A table's columns for a point with these axes.
pub(super) fn table_header(axes: &[(String, String)], spec: &TableSpec) -> Vec<String> {
    let mut h: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.extend(spec.columns.iter().map(|c| c.to_string()));
    h
}

/// A header row as one line of CSV text, without its line end.
pub(super) fn header_line(names: Vec<String>) -> String {
    let bytes = csv_bytes(&names, &[]);
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// runs.csv's columns for a point with these axes.
pub(super) fn runs_header(axes: &[(String, String)], columns: &Columns) -> Vec<String> {
    let mut h: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.push("seed".into());
    h.extend(columns.metrics.iter().map(|c| c.to_string()));
    h
}
