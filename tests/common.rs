//! Helpers shared by the integration tests.

#![allow(dead_code)]

use csmacd::ethernet::Scenario;
use csmacd::ethernet::{self, RunResult};
use csmacd::scenario;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Builds a scenario from TOML text, panicking with the error if it is invalid.
pub fn scenario(text: &str) -> Scenario {
    scenario::bus_from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs one replication and checks frame conservation at every station.
pub fn run(sc: &Scenario, seed: u64) -> RunResult {
    let r = ethernet::run(sc, seed);
    assert_conserved(&r);
    r
}

pub fn assert_conserved(r: &RunResult) {
    for s in &r.stations {
        assert!(
            s.conserves_frames(),
            "frames not conserved at station {}: {s:?}",
            s.id
        );
    }
}

/// A scratch directory, removed with everything in it when the test is done
/// with it (also when the test fails: the guard drops while unwinding).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh empty directory under the system temp dir, unique to this
/// process and call.
pub fn temp_dir(tag: &str) -> Scratch {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "csmacd-test-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// The csmacd binary built for these tests.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_csmacd"))
}

/// `csmacd run FILE --out DIR`, its output collected.
pub fn run_into(
    file: impl AsRef<std::path::Path>,
    out: impl AsRef<std::path::Path>,
) -> std::process::Output {
    bin()
        .arg("run")
        .arg(file.as_ref())
        .arg("--out")
        .arg(out.as_ref())
        .output()
        .unwrap()
}

/// The repository's top directory.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every scenario file under scenarios/ (.toml, not a lesson file's
/// .lesson.toml), recursively, sorted.
pub fn scenario_files() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml")
                && !p.to_string_lossy().ends_with(".lesson.toml")
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo().join("scenarios"), &mut out);
    out.sort();
    out
}

/// Proptest case count: `PROPTEST_CASES` when set (for long runs), else the
/// given default, chosen to keep `cargo test` fast.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
