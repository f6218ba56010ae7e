//! Sweeps: grid expansion and naming, seeds that depend only on a point's own
//! values, validation naming axis and point, and byte-identical outputs for
//! any thread count, for shards merged, and for resumed runs.

use crate::common::temp_dir;
use csmacd::sweep;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn csmacd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_csmacd"))
        .args(args)
        .output()
        .expect("the csmacd binary runs")
}

/// A small sweep: 3 station counts x 2 loads, 2 replications, short runs.
pub const SMALL: &str = r#"
name = "small"
seed = 7
duration = "50ms"
warmup = "5ms"
replications = 2

[[stations]]
count = 2
traffic = { kind = "poisson", load = 0.5 }
frame = "512B"
backoff = { kind = "beb" }

[sweep]
"stations.0.count" = [2, 8, 32]
"stations.0.traffic.load" = [0.3, 0.9]
"#;

pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (relative path, bytes), sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&ta), names(&tb), "different files");
    for ((n, x), (_, y)) in ta.iter().zip(&tb) {
        assert!(
            x == y,
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn grid_expands_in_order_with_dotted_names() {
    let plan = sweep::from_str("small.toml", "small", SMALL, None).unwrap();
    assert_eq!(plan.points.len(), 6);
    assert_eq!(plan.runs(), 12);
    let paths: Vec<&str> = plan.axes.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["stations.0.count", "stations.0.traffic.load"]);
    // First axis slowest, last fastest.
    let got: Vec<String> = plan.points.iter().map(|p| p.describe()).collect();
    assert_eq!(got[0], "stations.0.count=2, stations.0.traffic.load=0.3");
    assert_eq!(got[1], "stations.0.count=2, stations.0.traffic.load=0.9");
    assert_eq!(got[5], "stations.0.count=32, stations.0.traffic.load=0.9");
    // Each point is its own scenario.
    assert_eq!(
        plan.points[4].scenario.ethernet().unwrap().station_count(),
        32
    );
    let mut seeds: Vec<u64> = plan.points.iter().map(|p| p.seed).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), 6, "every point has its own seed");
    // Nested tables are the same axes as quoted dotted keys.
    let nested = SMALL.replace(
        "\"stations.0.count\" = [2, 8, 32]\n\"stations.0.traffic.load\" = [0.3, 0.9]",
        "stations.0.count = [2, 8, 32]\nstations.0.traffic.load = [0.3, 0.9]",
    );
    let plan2 = sweep::from_str("n.toml", "small", &nested, None).unwrap();
    assert_eq!(plan2.axes, plan.axes);
}

#[test]
fn a_point_keeps_its_seed_when_values_are_added() {
    let a = sweep::from_str("a", "a", SMALL, None).unwrap();
    let more = SMALL.replace("[2, 8, 32]", "[2, 4, 8, 16, 32]");
    let b = sweep::from_str("b", "b", &more, None).unwrap();
    for p in &a.points {
        let q = b.points.iter().find(|q| q.axes == p.axes).unwrap();
        assert_eq!(p.seed, q.seed, "{}", p.describe());
        assert_eq!(p.replication_seeds(), q.replication_seeds());
    }
}

#[test]
fn a_bad_value_names_its_axis_point_and_line() {
    let bad = SMALL.replace("[0.3, 0.9]", "[0.3, -0.5]");
    let e = sweep::from_str("bad.toml", "bad", &bad, None)
        .unwrap_err()
        .to_string();
    // The axis is on line 16 of SMALL (which starts with a newline).
    assert!(
        e.starts_with("bad.toml:16: sweep axis `stations.0.traffic.load` = -0.5 at point 1 "),
        "{e}"
    );
    assert!(e.contains("stations.0.count=2"), "{e}");
    let missing = SMALL.replace("stations.0.count", "stations.3.count");
    let e = sweep::from_str("m.toml", "m", &missing, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`stations.3.count`") && e.contains("1 item"),
        "{e}"
    );
    let empty = SMALL.replace("[0.3, 0.9]", "[]");
    let e = sweep::from_str("e.toml", "e", &empty, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("e.toml:16:") && e.contains("empty list"), "{e}");
    // Through the CLI: exit code 2 and the message on stderr.
    let dir = temp_dir("sweep-bad-value");
    let f = write_file(&dir, "bad.toml", &bad);
    let out = csmacd(&["sweep", s(&f), "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sweep axis `stations.0.traffic.load`"));
}

#[test]
fn dry_run_lists_the_points_of_a_shard() {
    let dir = temp_dir("sweep-dry");
    let f = write_file(&dir, "small.toml", SMALL);
    let out = csmacd(&["sweep", s(&f), "--dry-run", "--shard", "2/4"]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("small: 2 points of 6, 4 runs in all"),
        "{text}"
    );
    assert!(text.contains("stations.0.count=2, stations.0.traffic.load=0.9"));
    assert!(text.contains("stations.0.count=32, stations.0.traffic.load=0.9"));
    assert_eq!(text.lines().count(), 3);
}

#[test]
fn one_thread_and_two_threads_give_the_same_bytes() {
    let dir = temp_dir("sweep-jobs");
    let f = write_file(&dir, "small.toml", SMALL);
    let (a, b) = (dir.join("j1"), dir.join("j2"));
    ok(&csmacd(&["sweep", s(&f), "--jobs", "1", "--out", s(&a)]));
    ok(&csmacd(&["sweep", s(&f), "--jobs", "2", "--out", s(&b)]));
    assert_same_tree(&a, &b);
    let summary = std::fs::read_to_string(a.join("summary.csv")).unwrap();
    assert!(summary.starts_with(
        "stations.0.count,stations.0.traffic.load,replications,throughput,throughput_ci95,"
    ));
    assert_eq!(summary.lines().count(), 7);
    let runs = std::fs::read_to_string(a.join("runs.csv")).unwrap();
    assert!(
        runs.starts_with("stations.0.count,stations.0.traffic.load,replication,seed,throughput,")
    );
    assert_eq!(runs.lines().count(), 13);
}

#[test]
fn merged_shards_equal_the_full_run() {
    let dir = temp_dir("sweep-shards");
    let f = write_file(&dir, "small.toml", SMALL);
    let full = dir.join("full");
    ok(&csmacd(&["sweep", s(&f), "--out", s(&full)]));
    let (s1, s2) = run_two_shards(&f, &dir);
    assert!(
        !s1.join("summary.csv").exists(),
        "a shard writes only its points"
    );
    // One shard alone is not a whole sweep.
    let part = csmacd(&["merge", s(&s1), "--out", s(&dir.join("part"))]);
    assert_eq!(part.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&part.stderr).contains("3 of 6 points"));
    let merged = dir.join("merged");
    ok(&csmacd(&["merge", s(&s1), s(&s2), "--out", s(&merged)]));
    assert_same_tree(&full, &merged);
    // Shards of another sweep are refused.
    let other = write_file(&dir, "other.toml", &SMALL.replace("seed = 7", "seed = 8"));
    let s3 = dir.join("s3");
    ok(&csmacd(&[
        "sweep",
        s(&other),
        "--shard",
        "2/2",
        "--out",
        s(&s3),
    ]));
    let mixed = csmacd(&["merge", s(&s1), s(&s3), "--out", s(&dir.join("mixed"))]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&mixed.stderr).contains("different sweeps"));
}

/// Every directory under `dir`, files or not (relative paths), sorted.
fn dirs(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
                walk(root, &p, out);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

#[test]
fn a_failed_merge_leaves_no_trace() {
    let dir = temp_dir("sweep-merge-fail");
    let f = write_file(&dir, "small.toml", SMALL);
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    for (k, d) in [("1/2", &s1), ("2/2", &s2)] {
        ok(&csmacd(&["sweep", s(&f), "--shard", k, "--out", s(d)]));
    }
    let shard_before = tree(&s1);

    // A missing shard: nothing is created, not even the directory.
    let fresh = dir.join("new").join("merged");
    let out = csmacd(&["merge", s(&s1), "--out", s(&fresh)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("3 of 6 points") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(
        !dir.join("new").exists(),
        "a failed merge created its output"
    );

    // Into an input directory: it stays as it was.
    let out = csmacd(&["merge", s(&s1), "--out", s(&s1)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(tree(&s1), shard_before);

    // Into a directory holding other results (--force), failing when the
    // result files are written (under a 4 KiB file-size limit, which the
    // stations table passes): nothing there changes, nothing is left beside it.
    let other = write_file(&dir, "other.toml", &SMALL.replace("seed = 7", "seed = 8"));
    let held = dir.join("held");
    ok(&csmacd(&[
        "sweep",
        s(&other),
        "--shard",
        "1/2",
        "--out",
        s(&held),
    ]));
    let (files, folders) = (tree(&held), dirs(&held));
    let out = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4; exec \"$0\" merge \"$1\" \"$2\" --out \"$3\" --force")
        .arg(env!("CARGO_BIN_EXE_csmacd"))
        .args([&s1, &s2, &held])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("it was not changed"), "{err}");
    assert_eq!(tree(&held), files, "files changed by a failed merge");
    assert_eq!(dirs(&held), folders, "directories left by a failed merge");
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("held."))
        .collect();
    assert!(beside.is_empty(), "left beside it: {beside:?}");

    // The same merge succeeds without the limit, and equals a full run.
    ok(&csmacd(&[
        "merge",
        s(&s1),
        s(&s2),
        "--out",
        s(&held),
        "--force",
    ]));
    let full = dir.join("full");
    ok(&csmacd(&["sweep", s(&f), "--out", s(&full)]));
    assert_same_tree(&full, &held);
    assert_eq!(tree(&s1), shard_before, "a merge changed its input");
}

#[test]
fn a_resumed_run_equals_a_clean_one() {
    let dir = temp_dir("sweep-resume");
    let f = write_file(&dir, "small.toml", SMALL);
    let clean = dir.join("clean");
    ok(&csmacd(&["sweep", s(&f), "--out", s(&clean)]));
    // An interrupted run: some points finished, no summary, a stray temporary.
    let cut = dir.join("cut");
    ok(&csmacd(&[
        "sweep",
        s(&f),
        "--shard",
        "1/3",
        "--out",
        s(&cut),
    ]));
    std::fs::write(cut.join("points").join(".000004.runs.tmp99.csv"), "half").unwrap();
    ok(&csmacd(&["sweep", s(&f), "--resume", "--out", s(&cut)]));
    assert_same_tree(&clean, &cut);
    // Resuming with another file is refused.
    let other = write_file(&dir, "other.toml", &SMALL.replace("seed = 7", "seed = 9"));
    let out = csmacd(&["sweep", s(&other), "--resume", "--out", s(&cut)]);
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(unix)]
#[test]
fn ctrl_c_keeps_finished_points_and_resume_completes_them() {
    interrupt_then_resume(libc::SIGINT, "interrupt");
}

/// `kill -9` gives the sweep no chance to clean up: every point it finished
/// is still on disk (each stored whole, by rename), and `--resume` runs only
/// the rest and ends with the bytes of an uninterrupted run.
#[cfg(unix)]
#[test]
fn kill_9_keeps_finished_points_and_resume_completes_them() {
    interrupt_then_resume(libc::SIGKILL, "kill9");
}

#[cfg(unix)]
fn interrupt_then_resume(signal: i32, tag: &str) {
    let dir = temp_dir(&format!("sweep-{tag}"));
    // 24 points of about equal cost, run one at a time.
    let text = SMALL
        .replace("duration = \"50ms\"", "duration = \"400ms\"")
        .replace("[2, 8, 32]", "[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]")
        .replace("replications = 2", "replications = 1");
    let f = write_file(&dir, "long.toml", &text);
    let out = dir.join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_csmacd"))
        .args(["sweep", s(&f), "--jobs", "1", "--out", s(&out)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let count = |d: &Path| {
        std::fs::read_dir(d.join("points"))
            .map(|r| {
                r.flatten()
                    .filter(|e| {
                        let n = e.file_name().to_string_lossy().into_owned();
                        n.ends_with(".runs.csv") && !n.starts_with('.')
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let start = std::time::Instant::now();
    while count(&out) < 2 && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe { libc::kill(child.id() as i32, signal) };
    let result = child.wait_with_output().unwrap();
    let kept = count(&out);
    eprintln!("{tag}: exit {:?}, {kept} points kept", result.status.code());
    if result.status.code() == Some(0) {
        // The sweep outran the signal; nothing to check about interruption.
        assert_eq!(kept, 24);
    } else {
        if signal == libc::SIGINT {
            assert_eq!(result.status.code(), Some(130));
            let err = String::from_utf8_lossy(&result.stderr);
            assert!(
                err.contains("interrupted") && err.contains("--resume"),
                "{err}"
            );
        } else {
            assert_eq!(result.status.code(), None, "killed by the signal");
        }
        assert!((2..24).contains(&kept), "{kept} points kept");
        assert!(!out.join("summary.csv").exists());
    }
    ok(&csmacd(&["sweep", s(&f), "--resume", "--out", s(&out)]));
    let clean = dir.join("clean");
    ok(&csmacd(&["sweep", s(&f), "--out", s(&clean)]));
    assert_same_tree(&clean, &out);
}

#[test]
fn run_is_the_one_point_case() {
    let dir = temp_dir("sweep-run");
    let one = SMALL.split("[sweep]").next().unwrap();
    let f = write_file(&dir, "one.toml", one);
    let out = dir.join("out");
    ok(&csmacd(&["run", s(&f), "--out", s(&out)]));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.starts_with("replications,throughput,"));
    assert_eq!(summary.lines().count(), 2);
    // The same file through `sweep` gives the same bytes.
    let out2 = dir.join("out2");
    ok(&csmacd(&["sweep", s(&f), "--out", s(&out2)]));
    assert_same_tree(&out, &out2);
    // A sweep file is refused by `run`.
    let g = write_file(&dir, "sweep.toml", SMALL);
    assert_eq!(csmacd(&["run", s(&g)]).status.code(), Some(2));
}

#[test]
fn every_scenario_file_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) == Some("toml") {
            let plan = sweep::load(&p, None).unwrap_or_else(|e| panic!("{e}"));
            assert!(!plan.points.is_empty());
            n += 1;
        }
    }
    assert!(n >= 8, "{n} scenario files");
}

/// `precision` adds replications until the metric's 95 % interval is within
/// the asked share of its mean (or `max_replications` is reached), and the
/// replications a point takes do not depend on threads or shards.
#[test]
fn precision_adds_replications_until_the_interval_is_narrow() {
    let dir = temp_dir("sweep-precision");
    let text = SMALL
        .replace(
            "replications = 2\n",
            "replications = 2\nprecision = 0.03\nmax_replications = 32\n",
        )
        .replace(
            "\"stations.0.count\" = [2, 8, 32]",
            "\"stations.0.count\" = [2, 8]",
        );
    let f = write_file(&dir, "precise.toml", &text);
    let (one, two) = (dir.join("one"), dir.join("two"));
    ok(&csmacd(&["sweep", s(&f), "--jobs", "1", "--out", s(&one)]));
    ok(&csmacd(&["sweep", s(&f), "--jobs", "2", "--out", s(&two)]));
    assert_same_tree(&one, &two);
    let (s1, s2) = run_two_shards(&f, &dir);
    let merged = dir.join("merged");
    ok(&csmacd(&["merge", s(&s1), s(&s2), "--out", s(&merged)]));
    assert_same_tree(&one, &merged);
    let summary = std::fs::read_to_string(one.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (r, m, h) = (
        col("replications"),
        col("throughput"),
        col("throughput_ci95"),
    );
    let mut added = 0;
    for line in lines {
        let v: Vec<&str> = line.split(',').collect();
        let reps: u32 = v[r].parse().unwrap();
        let (mean, half): (f64, f64) = (v[m].parse().unwrap(), v[h].parse().unwrap());
        assert!((2..=32).contains(&reps), "{line}");
        // Either the precision is reached, or the maximum was.
        assert!(half <= 0.03 * mean || reps == 32, "{line}");
        added += usize::from(reps > 2);
    }
    assert!(
        added > 0,
        "some point needed more than 2 replications:\n{summary}"
    );
    // Keys that only make sense with `precision` are refused without it.
    let bad = write_file(
        &dir,
        "bad.toml",
        &SMALL.replace(
            "replications = 2\n",
            "replications = 2\nmax_replications = 9\n",
        ),
    );
    let out = csmacd(&["validate", s(&bad)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only used with `precision`"));
}

/// Runs shards 1/2 and 2/2 of sweep file `f` into `dir`/s1 and `dir`/s2.
fn run_two_shards(f: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    for (shard, out) in [("1/2", &s1), ("2/2", &s2)] {
        ok(&csmacd(&["sweep", s(f), "--shard", shard, "--out", s(out)]));
    }
    (s1, s2)
}

/// A linked axis sets its paths together: one point per value, not the
/// product, with its own column; lists of different lengths are refused.
#[test]
fn linked_axes_move_together() {
    let text = |second: &str| {
        format!(
            r#"name = "linked"
duration = "50ms"
[[stations]]
count = 2
traffic = {{ kind = "poisson", load = 0.1 }}
frame = "512B"
[[stations]]
count = 2
traffic = {{ kind = "poisson", load = 0.1 }}
frame = "512B"
[sweep]
"stations.0.count" = [2, 3]
[sweep.linked.group_load]
"stations.0.traffic.load" = [0.1, 0.2, 0.3]
"stations.1.traffic.load" = {second}
"#
        )
    };
    let plan = csmacd::sweep::from_str("t.toml", "t", &text("[0.15, 0.25, 0.35]"), None).unwrap();
    assert_eq!(plan.points.len(), 6, "2 x 3 points, not 2 x 3 x 3");
    let loads: Vec<(f64, f64)> = plan
        .points
        .iter()
        .map(|p| {
            let s = p.scenario.ethernet().unwrap();
            let load = |g: usize| match s.offered_load().groups[g].1 {
                csmacd::advice::Share::Fraction(f) => f,
                _ => unreachable!(),
            };
            (load(0), load(1))
        })
        .collect();
    for (a, b) in &loads {
        assert!(((b - a) - 0.05).abs() < 1e-3, "{loads:?}");
    }
    assert_eq!(plan.axes[1].path, "group_load");
    assert_eq!(plan.axes[1].labels, ["0.1", "0.2", "0.3"]);
    let e = csmacd::sweep::from_str("t.toml", "t", &text("[0.15, 0.25]"), None).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("sweep.linked.group_load.stations.1.traffic.load"),
        "{msg}"
    );
    assert!(
        msg.contains("has 2 values where `stations.0.traffic.load` has 3"),
        "{msg}"
    );
}
