//! The CLI: determinism of output bytes, validation of every shipped scenario,
//! and clear errors (file, key, line) with no output for broken files.

use crate::common::{bin, repo, run_into, scenario_files, temp_dir};

#[test]
fn same_scenario_and_seed_give_identical_bytes() {
    let file = repo().join("scenarios/two-saturated.toml");
    let dirs: Vec<_> = (0..2).map(|k| temp_dir(&format!("det{k}"))).collect();
    for d in &dirs {
        let out = bin()
            .arg("run")
            .arg(&file)
            .args(["--seed", "3", "--out"])
            .arg(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for f in ["summary.csv", "runs.csv", "stations.csv", "scenario.toml"] {
        let a = std::fs::read(dirs[0].join(f)).unwrap();
        let b = std::fs::read(dirs[1].join(f)).unwrap();
        assert!(!a.is_empty());
        assert_eq!(a, b, "{f} differs between identical runs");
    }
    // The resolved scenario repeats the run.
    let again = temp_dir("det-again");
    let out = bin()
        .arg("run")
        .arg(dirs[0].join("scenario.toml"))
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dirs[0].join("summary.csv")).unwrap(),
        std::fs::read(again.join("summary.csv")).unwrap()
    );
}

#[test]
fn every_shipped_scenario_validates() {
    let files = scenario_files();
    assert!(files.len() >= 5);
    let out = bin().arg("validate").args(&files).output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const GOOD: &str = "duration = \"1s\"\n\n[[stations]]\ncount = 2\nframe = \"1518B\"\ntraffic = { kind = \"saturated\" }\n";

#[test]
fn broken_scenarios_name_key_and_line_and_write_nothing() {
    // (what to break, replacement, key named, line, words the message must hold)
    let cases: &[(&str, &str, &str, usize, &str)] = &[
        (
            "duration = \"1s\"",
            "duraton = \"1s\"",
            "duraton",
            1,
            "unknown key",
        ),
        (
            "duration = \"1s\"",
            "duration = \"-1s\"",
            "duration",
            1,
            "negative",
        ),
        (
            "duration = \"1s\"",
            "duration = \"10\"",
            "duration",
            1,
            "no unit",
        ),
        (
            "count = 2",
            "count = 0",
            "stations.0.count",
            4,
            "allowed: 1",
        ),
        (
            "frame = \"1518B\"",
            "frame = \"10B\"",
            "stations.0.frame",
            5,
            "nonstandard_frames",
        ),
        (
            "count = 2",
            "count = \"two\"",
            "stations.0.count",
            4,
            "expected an integer",
        ),
        (
            "kind = \"saturated\"",
            "kind = \"flood\"",
            "stations.0.traffic.kind",
            6,
            "allowed",
        ),
    ];
    for (from, to, key, line, words) in cases {
        let text = GOOD.replace(from, to);
        assert_ne!(text, GOOD);
        let dir = temp_dir("broken");
        let file = dir.join("broken.toml");
        std::fs::write(&file, &text).unwrap();
        let out_dir = dir.join("out");
        let out = run_into(&file, &out_dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert!(
            err.contains(&format!("broken.toml:{line}:")),
            "{to}: no line {line} in {err}"
        );
        assert!(
            err.contains(&format!("`{key}`")),
            "{to}: no key {key} in {err}"
        );
        assert!(err.contains(words), "{to}: `{words}` missing from {err}");
        assert!(
            !out_dir.exists(),
            "{to}: output written for a broken scenario"
        );
    }
}

#[test]
fn missing_file_and_directory_fail_with_exit_code_2() {
    let out = bin().args(["run", "no/such/file.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.toml"));
    let out = bin()
        .arg("validate")
        .arg(repo().join("scenarios"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("directory"));
}

/// The memory refusal counts the runs that go on at once: replications of
/// a crowd that fit one at a time are refused, before any output, with as
/// many threads as the machine's available memory holds runs, plus one.
#[test]
fn memory_refusal_counts_the_runs_at_once() {
    let Some(avail) = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kib| kib * 1024.0)
    else {
        eprintln!("skipped: no /proc/meminfo");
        return;
    };
    let dir = temp_dir("mem-jobs");
    let file = dir.join("crowd.toml");
    let write = |replications: usize| {
        std::fs::write(
            &file,
            format!(
                "name = \"crowd\"\nduration = \"1s\"\nreplications = {replications}\n\n\
                 [[stations]]\ncount = 2500000\nframe = \"64B\"\n\
                 traffic = {{ kind = \"burst\", frames = 1, at = \"0s\" }}\n"
            ),
        )
        .unwrap();
        csmacd::scenario::load(&file).unwrap()
    };
    // One run of a burst of 2.5 million stations (about 1 GB by the
    // estimate): enough runs at once to need twice what is available.
    let run = write(1).memory_estimate_bytes(1);
    let jobs = (2.0 * avail / run).ceil() as usize;
    let sc = write(jobs);
    if run > avail / 2.0 || sc.memory_estimate_bytes(1) > 60.0 * f64::from(1 << 30) {
        eprintln!("skipped: {avail:.3e} bytes available fit no run, or too many for the test");
        return;
    }
    assert!(sc.memory_estimate_bytes(jobs) > 1.5 * avail);
    let valid = bin().arg("validate").arg(&file).output().unwrap();
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
    let out_dir = dir.join("out");
    let out = bin()
        .arg("run")
        .arg(&file)
        .args(["--jobs", &jobs.to_string(), "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{jobs} runs at once")) && err.contains("--jobs"),
        "{err}"
    );
    assert!(!out_dir.exists(), "an output directory was made: {err}");
}
