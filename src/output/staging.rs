//! A results directory is replaced whole: the new one is built beside it,
//! as `DIR.tmp-PID`, and exchanged with it in one rename once it is
//! complete; the old one, renamed `DIR.old-PID`, is then removed. A reader
//! (or a run killed at any instant) finds DIR as it was or as it is meant to
//! be, never a mix. What an interrupted run left beside DIR is cleaned up, or
//! put back, by the next run ([`clean_beside`]).

use super::points::{plan_path, points_dir};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What a name beside DIR is for: the new results being built, or the old
/// ones being removed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    New,
    Old,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::New => "tmp",
            Kind::Old => "old",
        }
    }
}

/// `DIR.tmp-PID` or `DIR.old-PID` beside `dir`.
fn beside(dir: &Path, kind: Kind, pid: u32) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{pid}", kind.tag()));
    dir.with_file_name(name)
}

/// Where this process builds the new results of `dir`.
pub fn staging_path(dir: &Path) -> PathBuf {
    beside(dir, Kind::New, std::process::id())
}

/// The directories beside `dir` that a run of csmacd named for it: what
/// each is for and the process that made it.
fn leftovers(dir: &Path) -> Vec<(PathBuf, Kind, u32)> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, Kind, u32)> = entries
        .flatten()
        .filter_map(|e| {
            let file = e.file_name();
            let file = file.to_str()?;
            let rest = file.strip_prefix(name.as_ref())?.strip_prefix('.')?;
            let (tag, pid) = rest.split_once('-')?;
            let kind = [Kind::New, Kind::Old]
                .into_iter()
                .find(|k| k.tag() == tag)?;
            if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let pid = pid.parse().ok()?;
            e.file_type().ok()?.is_dir().then(|| (e.path(), kind, pid))
        })
        .collect();
    found.sort();
    found
}

/// Whether process `pid` is running (Linux: /proc; elsewhere every other
/// process counts as gone).
fn alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// The new results a run of the sweep `resolved` was building beside `dir`
/// when it was interrupted (its points/ stores that sweep), if any.
pub fn interrupted_run(dir: &Path, resolved: &str) -> Option<PathBuf> {
    leftovers(dir)
        .into_iter()
        .filter(|(_, kind, pid)| *kind == Kind::New && !alive(*pid))
        .map(|(path, _, _)| path)
        .find(|p| std::fs::read_to_string(plan_path(p)).is_ok_and(|t| t == resolved))
}

/// Takes over the directory an interrupted run left (see
/// [`interrupted_run`]) as this process's own staging directory.
pub fn claim(dir: &Path, found: &Path) -> std::io::Result<PathBuf> {
    let mine = staging_path(dir);
    std::fs::rename(found, &mine)?;
    Ok(mine)
}

/// Cleans up what interrupted runs of other processes left beside `dir`:
/// an old results directory is put back when `dir` is missing (a swap cut
/// between its two renames), else removed with the new ones they were
/// building, except `keep`.
pub fn clean_beside(dir: &Path, keep: Option<&Path>) {
    for (path, kind, pid) in leftovers(dir) {
        if alive(pid) || Some(path.as_path()) == keep {
            continue;
        }
        if kind == Kind::Old && !dir.exists() && std::fs::rename(&path, dir).is_ok() {
            continue;
        }
        let _ = std::fs::remove_dir_all(&path);
    }
}

/// Makes sure a directory can be made beside `dir` (where the new results
/// are built), before any simulation.
pub fn probe_beside(dir: &Path) -> std::io::Result<()> {
    let probe = staging_path(dir);
    std::fs::create_dir(&probe)?;
    std::fs::remove_dir(&probe)
}

/// Whether `dir` holds nothing (but the probe of a write).
pub fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.all(|e| {
            e.is_ok_and(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".csmacd-write-test")
            })
        })
    })
}

/// Starts an empty staging directory for `dir`, with the permissions of
/// `dir` when it exists.
pub fn start(dir: &Path) -> std::io::Result<PathBuf> {
    let staging = staging_path(dir);
    match std::fs::remove_dir_all(&staging) {
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::create_dir(&staging)?;
    if let Ok(meta) = std::fs::metadata(dir) {
        let _ = std::fs::set_permissions(&staging, meta.permissions());
    }
    Ok(staging)
}

/// Removes a staging directory whose results could not be completed.
pub fn discard(staging: &Path) {
    let _ = std::fs::remove_dir_all(staging);
}

/// Puts the stored points of `from` (each file of its points/, but the
/// marks of shards and temporary files) into `to`'s points/, as hard links
/// where the file system allows (they are never written again), else as copies.
pub fn link_points(from: &Path, to: &Path) -> std::io::Result<()> {
    let (src, dst) = (points_dir(from), points_dir(to));
    std::fs::create_dir_all(&dst)?;
    let Ok(entries) = std::fs::read_dir(&src) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        let name = e.file_name();
        let text = name.to_string_lossy();
        if text.starts_with('.') || text.starts_with("shard-") || !e.file_type()?.is_file() {
            continue;
        }
        super::points::link_or_copy(&e.path(), &dst.join(&name))?;
    }
    Ok(())
}

/// Whether an entry of a results directory is csmacd's: its CSV files,
/// scenario.toml, points/, charts/ and temporary files. The rest (a
/// person's notes, ...) is carried over to the new results.
fn is_result(name: &str) -> bool {
    name.ends_with(".csv")
        || name == "scenario.toml"
        || name == "points"
        || name == "charts"
        || name.starts_with('.')
}

/// Carries the entries of `old` that are not results into `new` (files as
/// hard links, or copies; directories entry by entry; links as links).
pub fn carry_over(old: &Path, new: &Path) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(old) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        let name = e.file_name();
        if is_result(&name.to_string_lossy()) {
            continue;
        }
        copy_tree(&e.path(), &new.join(&name))?;
    }
    Ok(())
}

fn copy_tree(src: &Path, dst: &Path) -> std::io::Result<()> {
    let kind = std::fs::symlink_metadata(src)?.file_type();
    if kind.is_symlink() {
        #[cfg(unix)]
        return std::os::unix::fs::symlink(std::fs::read_link(src)?, dst);
        #[cfg(not(unix))]
        return Ok(());
    }
    if kind.is_dir() {
        std::fs::create_dir(dst)?;
        for e in std::fs::read_dir(src)? {
            let e = e?;
            copy_tree(&e.path(), &dst.join(e.file_name()))?;
        }
        return Ok(());
    }
    if kind.is_file() {
        return super::points::link_or_copy(src, dst);
    }
    Ok(())
}

/// Flushes a directory's entries to the disk (where the system allows).
fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Puts the complete `staging` in place of `dir` and removes the old
/// results. Where the system can exchange two names in one step (Linux),
/// DIR is at every instant the old results or the new; elsewhere it is
/// missing between two renames, and [`clean_beside`] puts the old back
/// if the run is killed there.
pub fn publish(staging: &Path, dir: &Path) -> std::io::Result<()> {
    for d in [points_dir(staging), staging.join("charts")] {
        sync_dir(&d);
    }
    sync_dir(staging);
    let old = beside(dir, Kind::Old, std::process::id());
    let _ = std::fs::remove_dir_all(&old);
    if !dir.exists() {
        std::fs::rename(staging, dir)?;
    } else if exchange(staging, dir).is_ok() {
        // The new results are in place: nothing after this may fail. The
        // old ones now have the staging name: give them theirs, so that a
        // kill while they are removed leaves no staging directory of them.
        if std::fs::rename(staging, &old).is_err() {
            let _ = std::fs::remove_dir_all(staging);
        }
    } else {
        std::fs::rename(dir, &old)?;
        if let Err(e) = std::fs::rename(staging, dir) {
            let _ = std::fs::rename(&old, dir);
            return Err(e);
        }
    }
    if let Some(parent) = dir.parent() {
        sync_dir(parent);
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("csmacd-staging-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn publish_swaps_whole_directories_and_keeps_a_persons_files() {
        let root = scratch("publish");
        let dir = root.join("results");
        std::fs::create_dir_all(dir.join("points")).unwrap();
        std::fs::write(dir.join("summary.csv"), "old").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        std::fs::write(dir.join("points/000000.runs.csv"), "p").unwrap();
        let new = start(&dir).unwrap();
        link_points(&dir, &new).unwrap();
        std::fs::write(new.join("summary.csv"), "new").unwrap();
        carry_over(&dir, &new).unwrap();
        publish(&new, &dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("points/000000.runs.csv")).unwrap(),
            "p"
        );
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_swap_cut_between_its_renames_is_put_back() {
        let root = scratch("cut");
        let dir = root.join("r");
        // A dead process's old results, with DIR missing, and its new ones.
        let old = beside(&dir, Kind::Old, u32::MAX);
        let new = beside(&dir, Kind::New, u32::MAX - 1);
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("summary.csv"), "old").unwrap();
        std::fs::create_dir_all(&new).unwrap();
        // Not csmacd's: kept.
        std::fs::create_dir_all(root.join("r.tmp-x1")).unwrap();
        clean_beside(&dir, None);
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "old"
        );
        assert!(leftovers(&dir).is_empty());
        assert!(root.join("r.tmp-x1").exists());
        let _ = std::fs::remove_dir_all(&root);
    }
}
