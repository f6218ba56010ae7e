//! A results directory's rules: writable before any simulation, whose results
//! it holds, its stored plan, no stale charts. Advice on a refusal is the CLI's.

use super::points::{plan_path, points_dir};
use super::write_atomic;
use std::path::{Path, PathBuf};

/// Result files a run writes; a directory holding any of them holds results.
pub const RESULT_FILES: &[&str] = &["summary.csv", "runs.csv", "stations.csv", "scenario.toml"];

/// Writes and removes a small file in `out`, so that a directory that cannot
/// be written is found before any simulation, not after it.
pub fn probe(out: &Path) -> std::io::Result<()> {
    let probe = out.join(format!(".csmacd-write-test{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The sweeps a results directory already holds, each as resolved (`None`
/// when there is none, or it cannot be read).
#[derive(Clone, Debug, Default)]
pub struct Existing {
    /// The top-level scenario.toml: the sweep the finished CSV files are from.
    pub finished: Option<String>,
    /// points/scenario.toml: the sweep the stored points (the work in
    /// progress) belong to.
    pub pending: Option<String>,
}

/// Reads what `out` holds.
pub fn existing(out: &Path) -> Existing {
    Existing {
        finished: std::fs::read_to_string(out.join("scenario.toml")).ok(),
        pending: std::fs::read_to_string(plan_path(out)).ok(),
    }
}

/// Whether `out` holds the results of a scenario other than `new` (both as
/// resolved), given `old`, the resolved file found there: one that names
/// another scenario or cannot be read as one, or, without one, result files
/// that no scenario.toml describes (another program's, or a damaged run's).
pub fn holds_other_results(out: &Path, old: Option<&str>, new: &str) -> bool {
    let name = |s: &str| {
        s.parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("name").and_then(|v| v.as_str()).map(str::to_string))
    };
    match old {
        Some(old) => old.parse::<toml::Table>().is_err() || name(old) != name(new),
        None if out.join("scenario.toml").exists() => true,
        None => RESULT_FILES.iter().any(|f| out.join(f).exists()),
    }
}

/// Records `resolved` as the sweep whose points `out` stores (creating
/// points/), before the first point is stored.
pub fn store_plan(out: &Path, resolved: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(points_dir(out))?;
    write_atomic(&plan_path(out), resolved.as_bytes())
}

/// The resolved sweep an output directory was made from, and where it was
/// read: a shard keeps it in points/, a finished run also on top. The path is
/// points/scenario.toml when neither exists.
pub fn stored_plan(dir: &Path) -> (PathBuf, std::io::Result<String>) {
    let path = [plan_path(dir), dir.join("scenario.toml")]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| plan_path(dir));
    let text = std::fs::read_to_string(&path);
    (path, text)
}

/// Where the charts of a run go.
pub fn charts_dir(out: &Path) -> PathBuf {
    out.join("charts")
}

/// Removes what an earlier, failed assembly left in a directory of new
/// results being built: its CSV files, scenario.toml and charts/ (its points stay).
pub fn clear_results(dir: &Path) {
    let _ = std::fs::remove_dir_all(charts_dir(dir));
    let _ = std::fs::remove_file(dir.join("scenario.toml"));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "csv") && p.is_file() {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// The real path of the results directory `out` (which exists), checked to
/// be one that can be swapped whole by a rename: not the current directory
/// or one holding it, not a mount point, not the root.
pub fn swappable(out: &Path) -> anyhow::Result<PathBuf> {
    let real = out
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
    let why = |what: &str| {
        anyhow::anyhow!(
            "--out {}: {what}; csmacd replaces a results directory whole, by renaming it, \
             so give a directory inside it, e.g. --out {}",
            out.display(),
            out.join("results").display()
        )
    };
    let Some(parent) = real.parent() else {
        return Err(why("is the root directory"));
    };
    // A directory below the current one's results (a folder of one's own)
    // is carried over into the new results; the current directory itself
    // would be renamed from under the shell that ran csmacd.
    if std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .is_ok_and(|cwd| cwd == real)
    {
        return Err(why("is the current directory"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev());
        if let (Ok(a), Ok(b)) = (dev(&real), dev(parent)) {
            if a != b {
                return Err(why("is a mount point"));
            }
        }
    }
    Ok(real)
}
