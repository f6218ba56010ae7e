//! Output files: the only writer. Every file is written whole or not at all
//! (a temporary file beside it, then a rename); the child modules say what.

pub mod chart;
mod csv;
pub mod png;
mod points;
pub mod results_dir;
pub mod staging;
pub mod style;

pub use self::csv::{num, runs_csv, stations_csv, summary_csv, table_csv, PointRuns};
pub use points::{
    assemble, clean_temporaries, clear_points, link_point, mark_shard, marked_shards, plan_path,
    points_dir, read_point, unmark_shards, write_point, Assembled, PointKey, StoredPoint,
};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates a directory and any missing parents; one that exists is fine.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// As [`create_dir`], returning the directories it created, deepest first,
/// for [`remove_empty_dirs`] to take back.
pub fn create_dir_tracked(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let created: Vec<PathBuf> = dir
        .ancestors()
        .filter(|d| !d.as_os_str().is_empty())
        .take_while(|d| !d.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir)?;
    Ok(created)
}

/// Removes the given directories, in order, each only if it is empty.
pub fn remove_empty_dirs(dirs: &[PathBuf]) {
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
}

/// Writes `bytes` to `path` atomically: a reader sees the old file or the new
/// one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_by(path, |w| w.write_all(bytes))
}

/// Writes what `write` writes to `path` atomically, through a buffer: the
/// text is never held whole (a crowd's stations table is tens of bytes a
/// row, and a row per station and replication).
pub fn write_atomic_by(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_name(path, "");
    let result = (|| {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write(&mut w)?;
        let f = w
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
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
fn temp_name(path: &Path, suffix: &str) -> PathBuf {
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

/// A file that could not be written, read or trusted.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    // The message carries the I/O error; it is not also chained as a source,
    // which would print it twice.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {message}")]
    Corrupt { path: String, message: String },
    #[error("{missing} of {total} points have no results (first: point {first}); run the missing shards or `csmacd sweep FILE --resume --out DIR`")]
    Missing {
        missing: usize,
        total: usize,
        first: usize,
    },
}

/// Names the file an I/O error happened on.
fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |error| OutputError::Io {
        path: path.display().to_string(),
        error,
    }
}
