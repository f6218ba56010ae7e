//! `csmacd status`: the finished points of a sweep over its shards' output
//! directories, counted as `merge` counts them, and a clear refusal of a
//! directory that holds no sweep.

use crate::common::temp_dir;
use crate::sweep::{csmacd, write_file, SMALL};
use std::path::Path;
use std::process::Output;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// stdout of a successful command.
fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn status_counts_finished_points_per_shard_and_in_all() {
    let dir = temp_dir("status");
    let f = write_file(&dir, "small.toml", SMALL);
    let (s1, s2) = (dir.join("1"), dir.join("2"));
    for (shard, out) in [("1/2", &s1), ("2/2", &s2)] {
        stdout_ok(&csmacd(&[
            "sweep",
            s(&f),
            "--shard",
            shard,
            "--out",
            s(out),
        ]));
    }
    let report = stdout_ok(&csmacd(&["status", s(&s1), s(&s2)]));
    assert!(
        report.starts_with("small: 6 of 6 points finished (100%)\n"),
        "{report}"
    );
    assert!(
        report.contains(&format!("{}: shard 1/2, 3 of 3 points\n", s(&s1))),
        "{report}"
    );
    assert!(
        report.contains(&format!("{}: shard 2/2, 3 of 3 points\n", s(&s2))),
        "{report}"
    );
    assert!(report.contains("csmacd merge"), "{report}");

    // A shard cut short: point 3 (of shard 2/2) never stored its runs.
    std::fs::remove_file(s2.join("points/000003.runs.csv")).unwrap();
    let report = stdout_ok(&csmacd(&["status", s(&s1), s(&s2)]));
    assert!(
        report.starts_with("small: 5 of 6 points finished (83%), 1 to run\n"),
        "{report}"
    );
    assert!(
        report.contains(&format!("{}: shard 2/2, 2 of 3 points\n", s(&s2))),
        "{report}"
    );
    assert!(!report.contains("csmacd merge"), "{report}");
    // One shard alone: its points, of the whole sweep's.
    let report = stdout_ok(&csmacd(&["status", s(&s1)]));
    assert!(
        report.starts_with("small: 3 of 6 points finished (50%), 3 to run\n"),
        "{report}"
    );

    // Resumed (saying what it kept), merged: the merged directory holds
    // every point and the results.
    let resumed = csmacd(&[
        "sweep",
        s(&f),
        "--shard",
        "2/2",
        "--resume",
        "--out",
        s(&s2),
    ]);
    stdout_ok(&resumed);
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(
        err.contains("resuming: 2 of the 3 points of shard 2/2 are stored; running the other 1"),
        "{err}"
    );
    let all = dir.join("all");
    stdout_ok(&csmacd(&["merge", s(&s1), s(&s2), "--out", s(&all)]));
    let report = stdout_ok(&csmacd(&["status", s(&all)]));
    assert_eq!(
        report,
        format!(
            "small: 6 of 6 points finished (100%)\n  {}: 6 of 6 points, results written\n",
            s(&all)
        )
    );
}

#[test]
fn status_refuses_what_is_not_the_output_of_one_sweep() {
    let dir = temp_dir("status-refusals");
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = csmacd(&["status", s(&empty)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{} holds no sweep", s(&empty))),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = csmacd(&["status", s(&dir.join("nowhere"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such directory"));

    let (a, b) = (dir.join("a"), dir.join("b"));
    let f = write_file(&dir, "small.toml", SMALL);
    let other = write_file(&dir, "other.toml", &SMALL.replace("seed = 7", "seed = 8"));
    stdout_ok(&csmacd(&["sweep", s(&f), "--shard", "1/3", "--out", s(&a)]));
    stdout_ok(&csmacd(&[
        "sweep",
        s(&other),
        "--shard",
        "1/3",
        "--out",
        s(&b),
    ]));
    let out = csmacd(&["status", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("different sweeps"));
}
