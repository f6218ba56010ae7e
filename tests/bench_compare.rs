//! scripts/bench-compare.sh: two builds run alternately on the benchmark's
//! scenarios, one table row per scenario, and a verdict on their output
//! that tells identical builds from ones whose results differ.

use crate::common::{repo, temp_dir};
use std::path::Path;
use std::process::{Command, Output};

fn compare(args: &[&str]) -> Output {
    compare_in(&repo(), args)
}

/// The script run from `dir` (its binaries' relative paths are from there).
fn compare_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(repo().join("scripts/bench-compare.sh"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("scripts/bench-compare.sh starts")
}

/// Whether GNU time, which the script reads peaks with, is there; when it
/// is not, a loud message. `.ci/run` installs it and sets
/// CSMACD_REQUIRE_GNU_TIME, which makes a missing one a failure.
fn gnu_time() -> bool {
    let found = Path::new("/usr/bin/time").is_file();
    if !found {
        assert!(
            std::env::var_os("CSMACD_REQUIRE_GNU_TIME").is_none(),
            "GNU time is required (CSMACD_REQUIRE_GNU_TIME) but not at /usr/bin/time"
        );
        eprintln!(
            "\n!!!!! SKIP: GNU time is not installed, so scripts/bench-compare.sh's runs were not tested.\n\
             !!!!! Install it (apt-get install time) to test them; .ci/run does.\n"
        );
    }
    found
}

/// An executable shell script `name` in `dir` with `body` after its first line.
fn wrapper(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.to_str().unwrap().to_string()
}

/// The table's row for `scenario`, split into its cells.
fn row(table: &str, scenario: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {scenario} |")))
        .unwrap_or_else(|| panic!("no row for {scenario} in:\n{table}"));
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// "median (min to max)" or a single value: the three numbers.
fn spread(cell: &str) -> (f64, f64, f64) {
    let nums: Vec<f64> = cell
        .replace(['(', ')'], " ")
        .replace(" to ", " ")
        .split_whitespace()
        .map(|x| {
            x.parse()
                .unwrap_or_else(|_| panic!("not a number in {cell:?}"))
        })
        .collect();
    match nums[..] {
        [m] => (m, m, m),
        [m, lo, hi] => (m, lo, hi),
        _ => panic!("not a spread: {cell:?}"),
    }
}

#[test]
fn one_build_against_itself_gives_a_row_per_scenario_and_identical_output() {
    if !gnu_time() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_csmacd");
    let out = compare(&[bin, bin, "2", "c-burst-1000", "saturated-10"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("| scenario | before, wall s | after, wall s |"));
    assert!(stderr.contains("round 2 of 2: saturated-10"), "{stderr}");
    for scenario in ["c-burst-1000", "saturated-10"] {
        let cells = row(&stdout, scenario);
        assert_eq!(cells.len(), 7, "{cells:?}");
        for (k, cell) in cells[1..6].iter().enumerate() {
            let (m, lo, hi) = spread(cell);
            assert!(
                lo <= m && m <= hi && lo > 0.0,
                "column {k} of {scenario}: {cell}"
            );
        }
        // A peak of a few MiB, not KiB or bytes.
        let (peak, _, _) = spread(&cells[4]);
        assert!((1.0..200.0).contains(&peak), "{cells:?}");
        assert_eq!(cells[6], "yes", "{cells:?}");
    }
    assert!(stdout.contains("2 round(s)"));
}

/// A slower "after" build (the same one, started 0.4 s late), given by a
/// path relative to where the script is run: its column, and the ratio,
/// say so, and its output is the same.
#[test]
fn a_slower_build_is_told_apart_by_its_times() {
    if !gnu_time() {
        return;
    }
    let dir = temp_dir("bench-compare-slow");
    let bin = env!("CARGO_BIN_EXE_csmacd");
    wrapper(&dir, "late", &format!("sleep 0.4\nexec '{bin}' \"$@\""));
    let out = compare_in(&dir, &[bin, "./late", "3", "c-burst-1000"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cells = row(&String::from_utf8_lossy(&out.stdout), "c-burst-1000");
    let ((before, _, before_hi), (after, after_lo, _)) = (spread(&cells[1]), spread(&cells[2]));
    assert!(after_lo > before_hi && after - before > 0.3, "{cells:?}");
    let (ratio, ratio_lo, _) = spread(&cells[3]);
    assert!(
        ratio_lo > 1.0 && (ratio - after / before).abs() < 0.5 * ratio,
        "{cells:?}"
    );
    assert_eq!(cells[6], "yes", "{cells:?}");
}

#[test]
fn builds_whose_output_differs_are_told_apart() {
    if !gnu_time() {
        return;
    }
    let dir = temp_dir("bench-compare");
    // A "build" whose runs use another seed than the scenario's.
    let bin = env!("CARGO_BIN_EXE_csmacd");
    let other = wrapper(&dir, "other-seed", &format!("exec '{bin}' \"$@\" --seed 5"));
    let out = compare(&[bin, &other, "1", "c-burst-1000"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let cells = row(&String::from_utf8_lossy(&out.stdout), "c-burst-1000");
    assert_eq!(cells[6], "no", "{cells:?}");
    assert!(
        stderr.contains("c-burst-1000: the two builds' outputs differ")
            && stderr.contains("\n  summary.csv\n"),
        "{stderr}"
    );
}

#[test]
fn bad_arguments_are_refused_with_what_is_allowed() {
    let bin = env!("CARGO_BIN_EXE_csmacd");
    for (args, says) in [
        (vec![bin], "usage: scripts/bench-compare.sh BEFORE AFTER"),
        (
            vec![bin, "/nonexistent/csmacd"],
            "is not an executable csmacd",
        ),
        (
            vec![bin, bin, "0"],
            "ROUNDS must be a whole number of at least 1",
        ),
        (
            vec![bin, bin, "1", "nope"],
            "no scenario benches/scenarios/nope.toml",
        ),
    ] {
        let out = compare(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
