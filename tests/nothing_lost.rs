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
    assert!(
        err.contains("nothing there was changed") || err.contains("were not changed"),
        "{err}"
    );
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
    // With --force it may.
    assert!(run(&b, &["--force"]).status.success());
    let toml = std::fs::read_to_string(out_dir.join("scenario.toml")).unwrap();
    assert!(toml.contains("name = \"beta\""), "{toml}");

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
