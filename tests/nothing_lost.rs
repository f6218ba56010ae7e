//! Nothing half-written, nothing overwritten: a write error leaves the output
//! directory as it was, and a run refuses another scenario's results without
//! `--force`. (Killing a sweep and `--resume` belong to the sweep command.)

use crate::common::{bin, run_into, temp_dir};
use csmacd::output::write_files_atomic;
use std::path::Path;

const GOOD: &str = "name = \"alpha\"\nduration = \"2ms\"\n\n[[stations]]\ncount = 300\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_directory_in_the_way_changes_nothing() {
    let dir = temp_dir("in-the-way");
    std::fs::write(dir.join("summary.csv"), "old summary\n").unwrap();
    std::fs::create_dir(dir.join("runs.csv")).unwrap();
    let before = listing(&dir);
    let e = write_files_atomic(
        &dir,
        &[
            ("summary.csv", b"new summary\n"),
            ("runs.csv", b"new runs\n"),
        ],
    )
    .unwrap_err();
    assert!(e.to_string().contains("runs.csv"), "{e}");
    // The old summary is still there, unchanged; no temporary file is left.
    assert_eq!(listing(&dir), before);
}

/// A full disk, simulated with a file-size limit (`ulimit -f`, SIGXFSZ
/// ignored so the write fails with EFBIG instead of killing the process):
/// stations.csv is larger than the limit, so its write fails half-way.
#[test]
fn a_write_error_leaves_no_half_written_csv() {
    let dir = temp_dir("full-disk");
    let file = dir.join("alpha.toml");
    std::fs::write(&file, GOOD).unwrap();
    let out_dir = dir.join("out");
    // A first, complete run.
    let ok = run_into(&file, &out_dir);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let stations = std::fs::metadata(out_dir.join("stations.csv"))
        .unwrap()
        .len();
    assert!(
        stations > 4096,
        "stations.csv too small ({stations} B) to cut"
    );
    let before = listing(&out_dir);

    // Again with another seed (new contents) under a 4 KiB file-size limit
    // (`ulimit -f` counts 1024-byte blocks in bash, 512 in POSIX sh: use
    // bash, and fall back to skipping where it is missing).
    let Ok(bash) = which_bash() else {
        eprintln!("bash not found; skipping the full-disk test");
        return;
    };
    let out = std::process::Command::new(bash)
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4; exec \"$0\" run \"$1\" --seed 99 --out \"$2\"")
        .arg(env!("CARGO_BIN_EXE_csmacd"))
        .arg(&file)
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write the results into"), "{err}");
    assert!(err.contains("it was not changed"), "{err}");
    // Every file is exactly as the first run left it; no temporary file.
    assert_eq!(listing(&out_dir), before);
}

fn which_bash() -> Result<String, ()> {
    ["/bin/bash", "/usr/bin/bash"]
        .iter()
        .find(|p| Path::new(p).exists())
        .map(|p| p.to_string())
        .ok_or(())
}

#[test]
fn another_scenarios_results_need_force() {
    let dir = temp_dir("force");
    let a = dir.join("alpha.toml");
    let b = dir.join("beta.toml");
    std::fs::write(&a, GOOD).unwrap();
    std::fs::write(&b, GOOD.replace("alpha", "beta")).unwrap();
    let out_dir = dir.join("out");
    let run = |f: &Path, extra: &[&str]| {
        bin()
            .arg("run")
            .arg(f)
            .arg("--out")
            .arg(&out_dir)
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(run(&a, &[]).status.success());
    // The same scenario again (another seed) may replace its own results.
    assert!(run(&a, &["--seed", "5"]).status.success());
    let before = listing(&out_dir);
    // Another scenario may not, and nothing changes.
    let out = run(&b, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds results of another scenario"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(listing(&out_dir), before);
    // With --force it may; a file of one's own in it is kept.
    std::fs::write(out_dir.join("notes.txt"), "mine\n").unwrap();
    assert!(run(&b, &["--force"]).status.success());
    let toml = std::fs::read_to_string(out_dir.join("scenario.toml")).unwrap();
    assert!(toml.contains("name = \"beta\""), "{toml}");
    assert_eq!(std::fs::read(out_dir.join("notes.txt")).unwrap(), b"mine\n");

    // A directory with result files but no scenario.toml is someone else's.
    let foreign = dir.join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("summary.csv"), "mine\n").unwrap();
    let out = run_into(&a, &foreign);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read(foreign.join("summary.csv")).unwrap(),
        b"mine\n"
    );

    // A scenario without a name is named by its file, and reruns in place.
    let nameless = dir.join("gamma.toml");
    std::fs::write(&nameless, GOOD.replace("name = \"alpha\"\n", "")).unwrap();
    let out_g = dir.join("out-g");
    for _ in 0..2 {
        let out = run_into(&nameless, &out_g);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---- results directories replaced whole: a full disk, a kill ----

/// Every file under `dir` with its bytes, by path relative to it.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    let mut v = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut v);
    }
    v.sort();
    v
}

/// A tree without the temporary files a killed run may leave in a
/// directory it works in (`.NAME.tmpPID`, removed by the next run).
fn without_temporaries(t: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    t.into_iter()
        .filter(|(n, _)| {
            let name = n.rsplit('/').next().unwrap_or(n);
            !(name.starts_with('.') && name.contains(".tmp"))
        })
        .collect()
}

/// What a tree is: `old`, `new`, or neither (its file names, to say how).
fn which(
    t: &[(String, Vec<u8>)],
    old: &[(String, Vec<u8>)],
    new: &[(String, Vec<u8>)],
) -> &'static str {
    if t == old {
        "old"
    } else if t == new {
        "new"
    } else {
        "neither"
    }
}

/// The names beside `dir` that a run left (`DIR.tmp-N`, `DIR.old-N`).
fn left_beside(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut v: Vec<String> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{name}.")))
        .collect();
    v.sort();
    v
}

/// A sweep of 4 points whose default charts make 12 files.
const SWEEP: &str = "name = \"sweep\"\nseed = 1\nduration = \"5ms\"\n\n[[stations]]\ncount = 40\nframe = \"64B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n\n[sweep]\n\"stations.0.traffic.load\" = [0.2, 0.4, 0.6, 0.8]\n";

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> std::process::Command {
    let mut c = bin();
    c.arg("sweep")
        .arg(file)
        .arg("--out")
        .arg(out)
        .arg("-q")
        .args(extra);
    c
}

/// A small tmpfs mounted for a test, unmounted when dropped; `None` where
/// mounting is not allowed (not root).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    /// Free kilobytes.
    fn free_kb(&self) -> u64 {
        let out = std::process::Command::new("df")
            .args(["-k", "--output=avail"])
            .arg(&self.0)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).output();
    }
}

/// A disk that fills at every stage of a rerun with another seed (while
/// points are stored, the tables written, the charts drawn): the run exits
/// 1 and the results directory is the old one byte for byte, or, with room
/// enough, exits 0 and is the new one.
#[test]
fn a_disk_that_fills_leaves_the_old_results_or_the_new_byte_for_byte() {
    let dir = temp_dir("disk-fills");
    let file = dir.join("sweep.toml");
    std::fs::write(&file, SWEEP).unwrap();
    // The new results, as a run with room makes them.
    let reference = dir.join("reference");
    assert!(sweep(&file, &reference, &["--seed", "2"])
        .status()
        .unwrap()
        .success());
    let new = tree(&reference);
    // Six charts, each as PNG, SVG and the CSV of its points.
    assert_eq!(
        new.iter().filter(|(n, _)| n.starts_with("charts/")).count(),
        18
    );
    let Some(disk) = Tmpfs::mount(&dir.join("disk"), "4m") else {
        eprintln!("SKIPPED: cannot mount a tmpfs here (not root?)");
        return;
    };
    let out = disk.0.join("results");
    let ok = sweep(&file, &out, &[]).output().unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let old = tree(&out);
    // What the new results take on the tmpfs: whole pages per file.
    let new_kb = new
        .iter()
        .map(|(_, b)| (b.len() as u64).div_ceil(4096) * 4)
        .sum::<u64>();
    let mut seen = std::collections::BTreeMap::new();
    // Room for nothing up to room for it all, in about 30 steps.
    let step = (new_kb as usize / 30).max(4);
    for room in (0..new_kb + 200).step_by(step) {
        let filler = disk.0.join("filler");
        let _ = std::fs::remove_file(&filler);
        let fill = disk.free_kb().saturating_sub(room);
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![1u8; 1024];
        for _ in 0..fill {
            if std::io::Write::write_all(&mut f, &block).is_err() {
                break;
            }
        }
        drop(f);
        let run = sweep(&file, &out, &["--seed", "2"]).output().unwrap();
        let err = String::from_utf8_lossy(&run.stderr).into_owned();
        let now = tree(&out);
        let is = which(&now, &old, &new);
        match run.status.code() {
            Some(1) => {
                assert_eq!(
                    is, "old",
                    "room {room} KB: exit 1 but the results are {is}: {err}"
                );
                assert!(err.contains("error: cannot write"), "{err}");
                let stage = if err.contains("/charts/") {
                    "charts"
                } else {
                    "points or tables"
                };
                *seen.entry(stage).or_insert(0) += 1;
            }
            Some(0) => {
                assert_eq!(is, "new", "room {room} KB: exit 0 but the results are {is}");
                *seen.entry("done").or_insert(0) += 1;
                break;
            }
            other => panic!("room {room} KB: exit {other:?}: {err}"),
        }
        // What the failed run kept beside it (its points, for --resume) goes.
        for n in left_beside(&out) {
            std::fs::remove_dir_all(disk.0.join(n)).unwrap();
        }
    }
    eprintln!("failures by stage, and successes: {seen:?}");
    for stage in ["charts", "done"] {
        assert!(
            seen.contains_key(stage),
            "never failed at {stage}: {seen:?}"
        );
    }
    assert!(left_beside(&out).is_empty(), "{:?}", left_beside(&out));
}

/// `kill -9` at instants spread over the assembly of a resumed sweep (all
/// its points stored, the tables and charts still to write) and over a
/// rerun with another seed: the results directory is, after each, the old
/// one or the new one byte for byte; the next run clears what was left.
#[test]
fn a_kill_at_any_instant_leaves_the_old_results_or_the_new() {
    let dir = temp_dir("kill-assembly");
    let file = dir.join("sweep.toml");
    std::fs::write(&file, SWEEP).unwrap();
    let reference = dir.join("reference");
    assert!(sweep(&file, &reference, &[]).status().unwrap().success());
    let new = tree(&reference);
    // The old directory of a resumed sweep: its points only.
    let old: Vec<_> = new
        .iter()
        .filter(|(n, _)| n.starts_with("points/"))
        .cloned()
        .collect();
    let lay = |at: &Path, files: &[(String, Vec<u8>)]| {
        let _ = std::fs::remove_dir_all(at);
        for (n, b) in files {
            let p = at.join(n);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b).unwrap();
        }
    };
    let out = dir.join("results");
    // How long the whole assembly takes.
    lay(&out, &old);
    let t = std::time::Instant::now();
    assert!(sweep(&file, &out, &["--resume"])
        .status()
        .unwrap()
        .success());
    let whole = t.elapsed();
    assert_eq!(tree(&out), new);
    let mut seen = std::collections::BTreeMap::new();
    let kill_after = |delay: std::time::Duration, extra: &[&str]| {
        let mut child = sweep(&file, &out, extra)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap()
    };
    // Instants spread over twice the time it took alone, then, on a busy
    // machine where none of them came after the swap, later ones.
    let delays = (0..16u32)
        .map(|k| whole * k / 8)
        .chain((1..12u32).map(|k| whole * (2 + k)));
    for delay in delays {
        if seen.len() == 2 && delay > whole * 2 {
            break;
        }
        lay(&out, &old);
        kill_after(delay, &["--resume"]);
        // A resumed sweep stores its points in place, so a kill may leave
        // one temporary file among them (`points/.NAME.tmpPID`), which the
        // next run removes; the results themselves are old or new.
        let is = which(&without_temporaries(tree(&out)), &old, &new);
        assert_ne!(
            is,
            "neither",
            "killed after {delay:?}: {:?}",
            tree(&out).iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        *seen.entry(is).or_insert(0) += 1;
    }
    eprintln!("a resumed assembly ({whole:?}) killed at instants over it: {seen:?}");
    assert!(
        seen.contains_key("old") && seen.contains_key("new"),
        "{seen:?}"
    );
    // A rerun with another seed over the finished results, killed while
    // it runs and assembles.
    lay(&out, &old);
    assert!(sweep(&file, &out, &["--resume"])
        .status()
        .unwrap()
        .success());
    let reseeded_ref = dir.join("reseeded");
    let t = std::time::Instant::now();
    assert!(sweep(&file, &reseeded_ref, &["--seed", "2"])
        .status()
        .unwrap()
        .success());
    let whole = t.elapsed();
    let reseeded = tree(&reseeded_ref);
    let mut seen = std::collections::BTreeMap::new();
    for k in 0..10u32 {
        let delay = whole * k / 8;
        kill_after(delay, &["--seed", "2"]);
        let is = which(&tree(&out), &new, &reseeded);
        assert_ne!(is, "neither", "killed after {delay:?}");
        *seen.entry(is).or_insert(0) += 1;
        if is == "new" {
            // Back to the seed-1 results for the next kill.
            let run = sweep(&file, &out, &[]).output().unwrap();
            assert!(run.status.success());
        }
    }
    eprintln!("a rerun with another seed ({whole:?}) killed 10 times: {seen:?}");
    assert!(seen.contains_key("old"), "{seen:?}");
    // The next run clears what the killed ones left beside the directory.
    assert!(sweep(&file, &out, &["--seed", "2"])
        .status()
        .unwrap()
        .success());
    assert_eq!(tree(&out), reseeded);
    assert!(left_beside(&out).is_empty(), "{:?}", left_beside(&out));
}

/// `--force` over another scenario's results, failing on a write: the
/// directory, points/ included, is as it was.
#[test]
fn force_over_other_results_that_fails_changes_nothing() {
    let dir = temp_dir("force-fails");
    let a = dir.join("alpha.toml");
    let b = dir.join("beta.toml");
    std::fs::write(&a, GOOD).unwrap();
    std::fs::write(&b, GOOD.replace("alpha", "beta")).unwrap();
    let out_dir = dir.join("out");
    assert!(run_into(&a, &out_dir).status.success());
    let before = tree(&out_dir);
    let Ok(bash) = which_bash() else {
        eprintln!("bash not found; skipping");
        return;
    };
    let out = std::process::Command::new(bash)
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4; exec \"$0\" run \"$1\" --force --out \"$2\"")
        .arg(env!("CARGO_BIN_EXE_csmacd"))
        .arg(&b)
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("it was not changed"), "{err}");
    assert_eq!(tree(&out_dir), before, "points/ or results changed");
}

/// The current directory cannot be a results directory (it is replaced by a
/// rename): refused before any work, and nothing is written there.
#[test]
fn the_current_directory_is_refused_as_the_output() {
    let dir = temp_dir("out-here");
    std::fs::write(dir.join("alpha.toml"), GOOD).unwrap();
    let out = bin()
        .current_dir(&dir)
        .args(["run", "alpha.toml", "--out", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--out .: is the current directory"), "{err}");
    assert!(err.contains("e.g. --out ./results"), "{err}");
    assert_eq!(
        listing(&dir)
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        ["alpha.toml"]
    );
}
