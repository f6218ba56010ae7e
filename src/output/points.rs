//! The points/ store: each finished point under its index, read back only
//! when it is the same point, and the final tables assembled from it.

use super::csv::{
    header_line, runs_csv, runs_header, summary_bytes, table_csv_into, table_header, PointRuns,
};
use super::{io_err, write_atomic, write_atomic_by, OutputError};
use crate::results::Columns;
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

/// Stores one finished point: each of its tables' files, then its runs
/// file, each atomically. A point is finished once its runs file exists, so
/// an interrupted write (even `kill -9`) leaves either a whole point or none.
pub fn write_point(out: &Path, index: usize, point: &PointRuns) -> Result<(), OutputError> {
    let dir = points_dir(out);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let one = std::slice::from_ref(point);
    for (k, spec) in point.columns.tables.iter().enumerate() {
        let path = point_path(out, index, spec.name);
        write_atomic_by(&path, |w| table_csv_into(w, one, k)).map_err(io_err(&path))?;
    }
    let runs = point_path(out, index, "runs");
    write_atomic(&runs, &runs_csv(one)).map_err(io_err(&runs))
}

/// What a point must hold to count as finished: its axis values, the columns
/// of its world and the seeds of its replications.
pub struct PointKey<'a> {
    pub axes: &'a [(String, String)],
    /// The seeds of every replication the point may have run, in order.
    pub seeds: &'a [u64],
    /// How many of them it ran at least (fewer than `seeds` when it adds
    /// replications until a precision is reached).
    pub min_runs: usize,
    pub columns: Columns,
}

/// A finished point read back from `points/`.
pub struct StoredPoint {
    /// runs.csv rows, without its header.
    pub runs_rows: String,
    /// Each table's file, its header line included, and where its rows
    /// start: kept whole, so that the first point's text becomes the
    /// table's (a crowd's stations table is tens of megabytes).
    pub table_rows: Vec<(String, usize)>,
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
    let Ok(runs) = std::fs::read_to_string(&runs_path) else {
        return Ok(None);
    };
    let mut table_rows = Vec::with_capacity(key.columns.tables.len());
    for spec in key.columns.tables {
        let Ok(mut text) = std::fs::read_to_string(point_path(dir, index, spec.name)) else {
            return Ok(None);
        };
        let (h, _) = split_header(&text);
        if h != header_line(table_header(key.axes, spec)) {
            return Ok(None);
        }
        let start = h.len() + 1;
        if text.len() < start {
            text.push('\n');
        }
        table_rows.push((text, start));
    }
    let header = runs_header(key.axes, &key.columns);
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
    if values.len() < key.min_runs || values.len() > key.seeds.len() {
        return Ok(None);
    }
    Ok(Some(StoredPoint {
        runs_rows: rows.to_string(),
        table_rows,
        values,
    }))
}

/// Removes every stored point (a fresh start) and any temporary file a
/// killed run left behind.
pub fn clear_points(out: &Path) -> Result<(), OutputError> {
    remove_tree(&points_dir(out))
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

/// The name of the mark a shard leaves in points/: `shard-K-of-N`.
fn shard_mark(k: usize, n: usize) -> String {
    format!("shard-{k}-of-{n}")
}

/// Records in `out`'s points/ that shard `k`/`n` works there, so that
/// `csmacd status` knows how many points the directory is to hold. Shards
/// sharing a directory each leave their own mark; `merge` copies none.
pub fn mark_shard(out: &Path, k: usize, n: usize) -> std::io::Result<()> {
    write_atomic(
        &points_dir(out).join(shard_mark(k, n)),
        format!("{k}/{n}\n").as_bytes(),
    )
}

/// The shards (K, N) that left their mark in `dir`'s points/, in order.
pub fn marked_shards(dir: &Path) -> Vec<(usize, usize)> {
    let Ok(entries) = std::fs::read_dir(points_dir(dir)) else {
        return Vec::new();
    };
    let mut shards: Vec<(usize, usize)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (k, n) = name.strip_prefix("shard-")?.split_once("-of-")?;
            let (k, n) = (k.parse().ok()?, n.parse().ok()?);
            (name == shard_mark(k, n)).then_some((k, n))
        })
        .collect();
    shards.sort_unstable();
    shards
}

/// Removes the marks of shards from `out`'s points/: a whole run works there now.
pub fn unmark_shards(out: &Path) {
    for (k, n) in marked_shards(out) {
        let _ = std::fs::remove_file(points_dir(out).join(shard_mark(k, n)));
    }
}

/// Puts point `index` (its tables, then its runs file) of the output
/// directory `from` into the points/ of `to`, as hard links where the file
/// system allows (stored points are never written again), else as copies.
pub fn link_point(
    from: &Path,
    index: usize,
    columns: &Columns,
    to: &Path,
) -> Result<(), OutputError> {
    let dir = points_dir(to);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let names = columns.tables.iter().map(|t| t.name).chain(["runs"]);
    for what in names {
        let src = point_path(from, index, what);
        let dst = point_path(to, index, what);
        link_or_copy(&src, &dst).map_err(io_err(&dst))?;
    }
    Ok(())
}

/// Removes a directory and everything in it; one that does not exist is fine.
fn remove_tree(dir: &Path) -> Result<(), OutputError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(dir)(e)),
        _ => Ok(()),
    }
}

/// The assembled tables of a whole sweep.
pub struct Assembled {
    pub summary: Vec<u8>,
    pub runs: Vec<u8>,
    /// Each table of the world's runs: its file name and bytes.
    pub tables: Vec<(String, Vec<u8>)>,
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
    let Some(first) = keys.first() else {
        return Ok(Assembled {
            summary: Vec::new(),
            runs: Vec::new(),
            tables: Vec::new(),
            values: Vec::new(),
        });
    };
    let mut runs = header_line(runs_header(first.axes, &first.columns));
    runs.push('\n');
    // The first point's text, its header the table's (checked as it was
    // read), then each other point's rows: each point's text is let go
    // once copied, so that the tables and what is left of the points take
    // about the text once.
    let mut texts: Vec<Option<String>> = vec![None; first.columns.tables.len()];
    let mut values = Vec::with_capacity(stored.len());
    let rows_after: Vec<usize> = (0..texts.len())
        .map(|k| {
            stored
                .iter()
                .skip(1)
                .filter_map(|p| p.table_rows.get(k))
                .map(|(text, start)| text.len() - start)
                .sum()
        })
        .collect();
    for p in stored {
        runs.push_str(&p.runs_rows);
        for ((text, (point_text, start)), more) in
            texts.iter_mut().zip(p.table_rows).zip(&rows_after)
        {
            match text {
                Some(text) => text.push_str(&point_text[start..]),
                None => {
                    let mut whole = point_text;
                    whole.reserve_exact(*more);
                    *text = Some(whole);
                }
            }
        }
        values.push(p.values);
    }
    let tables: Vec<(String, String)> = first
        .columns
        .tables
        .iter()
        .zip(texts)
        .map(|(spec, text)| {
            let text = text.unwrap_or_else(|| {
                let mut header = header_line(table_header(first.axes, spec));
                header.push('\n');
                header
            });
            (format!("{}.csv", spec.name), text)
        })
        .collect();
    let summary = summary_bytes(
        &axis_names,
        first.columns.metrics,
        keys.iter().zip(&values).map(|(k, runs)| {
            (
                k.axes.iter().map(|(_, v)| v.clone()).collect(),
                runs.as_slice(),
            )
        }),
    );
    Ok(Assembled {
        summary,
        runs: runs.into_bytes(),
        tables: tables
            .into_iter()
            .map(|(name, text)| (name, text.into_bytes()))
            .collect(),
        values,
    })
}

/// A hard link of `src` at `dst` (one already there is kept), or a copy
/// where links cannot be made: a point's files are written once and never
/// changed, so both names may share them.
pub(super) fn link_or_copy(src: &Path, dst: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(_) => super::write_atomic(dst, &std::fs::read(src)?),
    }
}
