//! Progress of long work on stderr: where stderr is not a terminal, a line
//! at the interval `CSMACD_PROGRESS_EVERY` sets, rising through a run or
//! all of a sweep's runs, with the same results as without it; a bad
//! interval is refused before anything is written.

use crate::common::{bin, temp_dir};
use std::path::Path;
use std::process::Output;

/// A herd big enough to take a while in a test build.
const HERD: &str = r#"name = "herd"
seed = 1
duration = "1000s"

[[stations]]
count = 20000
traffic = { kind = "burst", frames = 1, at = "0s" }
frame = "64B"
backoff = { kind = "beb" }
"#;

fn run(file: &Path, out: &Path, every: Option<&str>) -> Output {
    let mut c = bin();
    c.arg("run").arg(file).arg("--out").arg(out);
    match every {
        Some(e) => c.env("CSMACD_PROGRESS_EVERY", e),
        None => c.env_remove("CSMACD_PROGRESS_EVERY"),
    };
    c.output().unwrap()
}

/// Runs the scenario `toml` (in a directory named `name`) with progress
/// lines every 0.01 s and without them, checks that both succeed and write
/// the same `files`, and gives the percentages of each run's lines, with
/// the stderr of the run with them.
fn with_and_without(name: &str, toml: &str, files: &[&str]) -> (Vec<f64>, Vec<f64>, String) {
    let d = temp_dir(name);
    let file = d.join("herd.toml");
    std::fs::write(&file, toml).unwrap();
    let with = run(&file, &d.join("with"), Some("0.01"));
    let err = String::from_utf8_lossy(&with.stderr).into_owned();
    assert!(with.status.success(), "{err}");
    let without = run(&file, &d.join("without"), None);
    assert!(without.status.success());
    for f in files {
        let a = std::fs::read(d.join("with").join(f)).unwrap();
        let b = std::fs::read(d.join("without").join(f)).unwrap();
        assert_eq!(a, b, "{f} differs with progress lines");
    }
    (shares(&with.stderr), shares(&without.stderr), err)
}

/// The percentages of the progress lines, in order.
fn shares(stderr: &[u8]) -> Vec<f64> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| {
            let (pct, rest) = l.split_once(" % of 1 run done after ")?;
            rest.ends_with(" s").then(|| pct.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_long_run_reports_its_progress_and_the_same_results() {
    let files = ["summary.csv", "runs.csv", "stations.csv", "completions.csv"];
    let (seen, unseen, err) = with_and_without("progress", HERD, &files);
    assert!(
        seen.len() >= 2 && seen.iter().any(|&s| s > 0.0 && s < 100.0),
        "progress lines every 0.01 s through the run:\n{err}"
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(seen.iter().all(|&s| (0.0..=100.0).contains(&s)), "{seen:?}");
    // Ten seconds apart by default: this run is over before the first.
    assert!(unseen.is_empty());
}

/// 100 000 clients reconnecting after a restart: every one is connected
/// after about 77 of the 600 simulated seconds, and the run ends there.
const RECONNECTING: &str = r#"name = "reconnecting herd"
seed = 1
duration = "600s"

[server]
kind = "queue"
rate = "10000/s"
crash_above = 20000
restart = "5s"

[network]
delay = { kind = "abs-normal", mean = "10ms", sd = "2ms" }

[[clients]]
name = "app"
count = 100000
calls = { kind = "reconnect", at = "0s" }
backoff = { kind = "full-jitter", base = "1s", cap = "64s" }
"#;

/// A herd that reconnects reports the share of its clients connected
/// (the most so far), not only the share of its duration simulated, which
/// would stay under 13 % and then jump to the end.
#[test]
fn a_reconnecting_herd_reports_the_share_of_its_clients_connected() {
    let files = ["summary.csv", "runs.csv", "groups.csv", "timeseries.csv"];
    let (seen, _, err) = with_and_without("progress-herd", RECONNECTING, &files);
    assert!(
        seen.iter().any(|&s| (20.0..100.0).contains(&s)),
        "progress past the share of the duration simulated:\n{err}"
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
}

#[test]
fn a_sweep_reports_the_share_of_all_its_runs() {
    let d = temp_dir("progress-sweep");
    let file = d.join("herds.toml");
    std::fs::write(
        &file,
        format!("{HERD}\n[sweep]\nstations.0.count = [20000, 20001]\n"),
    )
    .unwrap();
    let r = bin()
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(d.join("out"))
        .args(["--jobs", "1"])
        .env("CSMACD_PROGRESS_EVERY", "0.01")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    let seen: Vec<f64> = err
        .lines()
        .filter_map(|l| l.split_once(" % of 2 runs done after ")?.0.parse().ok())
        .collect();
    assert!(
        seen.iter().any(|&s| s > 0.0 && s < 50.0) && seen.iter().any(|&s| s > 50.0),
        "lines through both points' runs:\n{err}"
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
}

#[test]
fn a_bad_progress_interval_is_refused_before_anything_is_written() {
    let d = temp_dir("progress-bad");
    let file = d.join("herd.toml");
    std::fs::write(&file, HERD).unwrap();
    for bad in ["0", "-1", "soon", "inf"] {
        let out = d.join(format!("out-{bad}"));
        let r = run(&file, &out, Some(bad));
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("CSMACD_PROGRESS_EVERY") && err.contains("a number above zero"),
            "{bad}: {err}"
        );
        assert!(!out.exists(), "{bad}: {} was created", out.display());
    }
}

#[cfg(unix)]
#[test]
fn an_interrupted_run_says_it_finishes_the_runs_under_way() {
    use std::io::{BufRead, BufReader, Read};
    let d = temp_dir("progress-stop");
    let file = d.join("herd.toml");
    std::fs::write(&file, HERD.replace("count = 20000", "count = 60000")).unwrap();
    let mut child = bin()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(d.join("out"))
        .env("CSMACD_PROGRESS_EVERY", "0.02")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // Once the run is under way, one Ctrl-C.
    while !seen.contains(" % of 1 run done after ") {
        assert!(
            err.read_line(&mut seen).unwrap() > 0,
            "no progress:\n{seen}"
        );
    }
    // SAFETY: kill sends a signal to the child's pid; no memory is touched.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    err.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert!(
        seen.contains("stopping: the runs under way finish first")
            && seen.contains("a second Ctrl-C quits at once"),
        "{seen}"
    );
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("interrupted:"), "{seen}");
}
