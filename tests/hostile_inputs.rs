//! The table of hostile inputs (tests/hostile/, expected.txt), each run through
//! the CLI: the right exit code, the file, line and key named, the expected
//! words, and no output written. Plus the hostile cases that are not files:
//! a missing file, a directory, an output directory that cannot be written.

use crate::common::{bin, repo, run_into, temp_dir};

struct Expected {
    file: String,
    exit: i32,
    line: Option<usize>,
    key: Option<String>,
    fragment: String,
}

fn table() -> Vec<Expected> {
    let text = std::fs::read_to_string(repo().join("tests/hostile/expected.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(" | ").map(str::trim).collect();
            assert_eq!(f.len(), 5, "bad row: {l}");
            let opt = |s: &str| (s != "-").then(|| s.to_string());
            Expected {
                file: f[0].to_string(),
                exit: f[1].parse().unwrap(),
                line: opt(f[2]).map(|s| s.parse().unwrap()),
                key: opt(f[3]),
                fragment: f[4].to_string(),
            }
        })
        .collect()
}

#[test]
fn every_hostile_input_fails_clearly_and_writes_nothing() {
    let rows = table();
    assert!(rows.len() >= 30, "only {} hostile inputs", rows.len());
    // Every file has a row and every row a file.
    let mut files: Vec<String> = std::fs::read_dir(repo().join("tests/hostile"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f != "expected.txt")
        .collect();
    files.sort();
    let listed: Vec<String> = rows.iter().map(|r| r.file.clone()).collect();
    assert_eq!(files, listed, "tests/hostile and expected.txt disagree");

    let tmp = temp_dir("hostile");
    let mut failures = Vec::new();
    for r in &rows {
        let path = repo().join("tests/hostile").join(&r.file);
        let out_dir = tmp.join(&r.file);
        let out = run_into(&path, &out_dir);
        let err = String::from_utf8_lossy(&out.stderr);
        let mut wrong = Vec::new();
        if out.status.code() != Some(r.exit) {
            wrong.push(format!("exit {:?}, expected {}", out.status.code(), r.exit));
        }
        let place = match r.line {
            Some(l) => format!("{}:{l}: ", r.file),
            None => format!("{}: ", r.file),
        };
        if !err.contains(&place) {
            wrong.push(format!("no `{place}`"));
        }
        if let Some(k) = &r.key {
            if !err.contains(&format!("`{k}`")) {
                wrong.push(format!("key `{k}` not named"));
            }
        }
        if !err.contains(&r.fragment) {
            wrong.push(format!("no `{}`", r.fragment));
        }
        if err.contains("panicked") {
            wrong.push("panicked".into());
        }
        if out_dir.exists() {
            wrong.push("output written".into());
        }
        if !wrong.is_empty() {
            failures.push(format!("{}: {} -- stderr: {err}", r.file, wrong.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn validate_agrees_with_run_on_every_hostile_input() {
    for r in table() {
        let out = bin()
            .arg("validate")
            .arg(repo().join("tests/hostile").join(&r.file))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", r.file);
        assert!(err.contains(&r.fragment), "{}: {err}", r.file);
    }
}

const GOOD: &str = "duration = \"1ms\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";

#[test]
fn missing_file_directory_and_unwritable_output() {
    let dir = temp_dir("paths");
    // A missing file: exit 2, named, and the OS's reason.
    let missing = dir.join("nope.toml");
    let out = bin().arg("run").arg(&missing).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nope.toml: cannot read the scenario"), "{err}");

    // A directory given as the scenario.
    let out = bin().arg("run").arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a directory"), "{err}");

    // An output directory that cannot be created (a file is in the way):
    // exit 1, naming the directory, before any simulation.
    let file = dir.join("good.toml");
    std::fs::write(&file, GOOD).unwrap();
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, "not a directory").unwrap();
    let out_dir = blocker.join("out");
    let out = run_into(&file, &out_dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot create output directory"), "{err}");
    assert!(err.contains(&out_dir.display().to_string()), "{err}");
    assert!(
        out.stdout.is_empty(),
        "simulated before checking the output"
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let out = bin().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Exit codes: 0 success, 1 a failure while running"),
        "{text}"
    );
    assert!(
        text.contains("2 bad usage or an invalid scenario"),
        "{text}"
    );
}
