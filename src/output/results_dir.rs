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

/// Removes the charts (PNG and SVG files) of an earlier run, so that none
/// outlives the results it was drawn from; other files stay.
pub fn clear_charts(out: &Path) {
    if let Ok(entries) = std::fs::read_dir(charts_dir(out)) {
        for e in entries.flatten() {
            let p = e.path();
            if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("png" | "svg" | "csv")
            ) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
