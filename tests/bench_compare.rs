//! scripts/bench-compare.sh: two builds run alternately on the benchmark's
//! scenarios, one table row per scenario, and a verdict on their output
//! that tells identical builds from ones whose results differ.

use crate::common::{repo, temp_dir};
use std::process::{Command, Output};

fn compare(args: &[&str]) -> Output {
    Command::new(repo().join("scripts/bench-compare.sh"))
        .args(args)
        .output()
        .expect("scripts/bench-compare.sh starts")
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

#[test]
fn builds_whose_output_differs_are_told_apart() {
    let dir = temp_dir("bench-compare");
    // A "build" whose runs use another seed than the scenario's.
    let other = dir.join("other-seed");
    std::fs::write(
        &other,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" --seed 5\n",
            env!("CARGO_BIN_EXE_csmacd")
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_csmacd");
    let out = compare(&[bin, other.to_str().unwrap(), "1", "c-burst-1000"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cells = row(&String::from_utf8_lossy(&out.stdout), "c-burst-1000");
    assert_eq!(cells[6], "no", "{cells:?}");
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
