//! Whole-run benchmarks: runs the scenarios under `benches/scenarios/` and
//! prints wall time, simulated frames (for a service scenario: calls) per
//! wall second, events per second and peak memory, then checks the
//! performance targets of docs/performance.md.
//!
//! ```text
//! cargo run --release --example bench_runs            # every scenario
//! cargo run --release --example bench_runs -- --quick # skip the 10^5 and 10^6 crowds
//! cargo run --release --example bench_runs -- burst   # scenarios whose name contains "burst"
//! cargo run --release --example bench_runs -- saturated-10   # that scenario only (an exact name)
//! cargo run --release --example bench_runs -- --limit 600  # give each scenario up to 600 s (default 120)
//! cargo run --release --example bench_runs -- --repeat 5   # best of 5 runs for the light scenarios (default 3)
//! ```
//!
//! Each scenario runs in a child process of this program, so that the peak
//! resident memory (VmHWM from /proc/self/status) belongs to that scenario
//! alone. The light scenarios run `--repeat` times and report the fastest
//! run: on a shared machine, other work only ever adds to a run's wall time,
//! so the minimum is the best estimate of the simulator's own cost. (Every
//! repeat must count the same events, frames and attempts: runs are
//! deterministic.) The crowds of 10^5 and 10^6 run once.

use csmacd::results::MemoryNeed;
use csmacd::scenario;
use csmacd::sweep::Point;
use csmacd::world::Scenario;
use csmacd::{ethernet, service};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The scenarios, in the order they run; `heavy` ones are left out by `--quick`.
const SCENARIOS: &[(&str, bool)] = &[
    ("a-saturated-50", false),
    ("b-poisson-10", false),
    ("saturated-10", false),
    ("saturated-1000", false),
    ("saturated-3000", false),
    ("c-burst-1000", false),
    ("c-burst-100000", true),
    ("d-burst-1000000", true),
    ("e-herd-100000", false),
    ("e-herd-1000000", true),
];

/// What one child process measured.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    wall_s: f64,
    events: u64,
    frames: u64,
    attempts: u64,
    peak_kib: u64,
    /// Resident at the child's start, before the scenario is loaded: the
    /// program itself.
    base_kib: u64,
    /// What csmacd estimates one run of the scenario needs.
    estimate_bytes: f64,
}

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scenarios")
}

/// Peak resident set size of this process, in KiB (Linux only; 0 elsewhere).
fn peak_kib() -> u64 {
    status_kib("VmHWM:")
}

/// A size from /proc/self/status, in KiB (Linux only; 0 elsewhere).
fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Runs one scenario (a name under benches/scenarios, or a path to a .toml
/// file) in this process and prints its figures on one line.
fn child(name: &str) -> anyhow::Result<()> {
    let base_kib = status_kib("VmRSS:");
    let path = if name.ends_with(".toml") {
        PathBuf::from(name)
    } else {
        scenario_dir().join(format!("{name}.toml"))
    };
    let sc = scenario::load(&path)?;
    // One replication is what runs here.
    let estimate = MemoryNeed::at_once(&[(sc.memory_need(), 1)], 1);
    // The same run seed `csmacd run` uses for the first replication.
    let seed = Point::new(Vec::new(), sc.clone()).replication_seeds()[0];
    let t0 = Instant::now();
    // Frames delivered, lost or dropped; for a service run, calls.
    let (events, frames, attempts, wall_s) = match &sc {
        Scenario::Ethernet(sc) => {
            let r = ethernet::run(sc, seed);
            let frames: u64 = r
                .stations
                .iter()
                .map(|s| {
                    s.total_delivered
                        + s.total_lost
                        + s.total_dropped_excessive
                        + s.total_dropped_queue
                })
                .sum();
            let attempts: u64 = r.stations.iter().map(|s| s.attempts).sum();
            let (events, wall_s) = (r.events, t0.elapsed().as_secs_f64());
            // Its output made too, as `csmacd run` makes it (untimed).
            drop(r.output());
            (events, frames, attempts, wall_s)
        }
        Scenario::Service(sc) => {
            let r = service::run(sc, seed).expect("a benchmark scenario advances its clock");
            let calls = r.groups.iter().map(|(_, _, c)| c.calls).sum();
            let attempts = r.groups.iter().map(|(_, _, c)| c.attempts).sum();
            let (events, wall_s) = (r.events, t0.elapsed().as_secs_f64());
            drop(r.output());
            (events, calls, attempts, wall_s)
        }
    };
    println!(
        "FIGURES {wall_s} {events} {frames} {attempts} {} {base_kib} {estimate}",
        peak_kib()
    );
    Ok(())
}

/// Runs `name` in a child process, killed after `limit_s` seconds (`None`:
/// it ran out of time).
fn measure(name: &str, limit_s: f64) -> anyhow::Result<Option<Figures>> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--child", name])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let t0 = Instant::now();
    while child.try_wait()?.is_none() {
        if t0.elapsed().as_secs_f64() > limit_s {
            child.kill()?;
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("FIGURES "))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{name}: child failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    let v: Vec<&str> = line.split_whitespace().collect();
    Ok(Some(Figures {
        wall_s: v[0].parse()?,
        events: v[1].parse()?,
        frames: v[2].parse()?,
        attempts: v[3].parse()?,
        peak_kib: v[4].parse()?,
        base_kib: v[5].parse()?,
        estimate_bytes: v[6].parse()?,
    }))
}

/// The value after `flag` in `args`, or `default` when the flag is absent.
fn flag_value<T: std::str::FromStr>(
    args: &[String],
    flag: &str,
    default: T,
    what: &str,
) -> anyhow::Result<T> {
    match args.iter().position(|a| a == flag) {
        Some(k) => args
            .get(k + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{flag} needs {what}")),
        None => Ok(default),
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, name] = args.as_slice() {
        if flag == "--child" {
            return child(name);
        }
    }
    let quick = args.iter().any(|a| a == "--quick");
    let limit_s: f64 = flag_value(&args, "--limit", 120.0, "a number of seconds")?;
    let repeat: usize = flag_value(&args, "--repeat", 3, "a whole number of runs")?;
    anyhow::ensure!(repeat >= 1, "--repeat needs at least 1 run");
    let filters: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(k, a)| {
            !(a.starts_with("--")
                || (*k > 0 && (args[k - 1] == "--limit" || args[k - 1] == "--repeat")))
        })
        .map(|(_, a)| a)
        .collect();
    let chosen: Vec<(&str, bool)> = SCENARIOS
        .iter()
        .copied()
        .filter(|(_, heavy)| !(quick && *heavy))
        .filter(|(n, _)| {
            // A filter that names a scenario exactly runs that one only
            // ("saturated-10" would otherwise match "saturated-1000" too).
            filters.is_empty()
                || filters.iter().any(|f| {
                    *n == f.as_str()
                        || (!SCENARIOS.iter().any(|(m, _)| *m == f.as_str())
                            && n.contains(f.as_str()))
                })
        })
        .collect();

    println!(
        "{:<18} {:>5} {:>9} {:>12} {:>13} {:>13} {:>14} {:>10} {:>12}",
        "scenario",
        "runs",
        "wall s",
        "frames/calls",
        "per s",
        "events/s",
        "ns/attempt",
        "peak MiB",
        "estimate MiB"
    );
    let mut got = Vec::new();
    let mut timed_out = Vec::new();
    for (name, heavy) in chosen {
        let runs = if heavy { 1 } else { repeat };
        let mut best: Option<Figures> = None;
        for _ in 0..runs {
            let Some(f) = measure(name, limit_s)? else {
                best = None;
                break;
            };
            if let Some(b) = best {
                anyhow::ensure!(
                    (b.events, b.frames, b.attempts) == (f.events, f.frames, f.attempts),
                    "{name}: two runs of the same scenario and seed differ"
                );
            }
            if best.is_none_or(|b| f.wall_s < b.wall_s) {
                best = Some(f);
            }
        }
        let Some(f) = best else {
            println!("{name:<18} stopped after {limit_s} s (--limit)");
            timed_out.push(name);
            continue;
        };
        println!(
            "{:<18} {:>5} {:>9.3} {:>12} {:>13.0} {:>13.0} {:>14.1} {:>10.1} {:>12.1}",
            name,
            runs,
            f.wall_s,
            f.frames,
            f.frames as f64 / f.wall_s,
            f.events as f64 / f.wall_s,
            f.wall_s * 1e9 / f.attempts.max(1) as f64,
            f.peak_kib as f64 / 1024.0,
            f.estimate_bytes / (1 << 20) as f64
        );
        got.push((name, f));
    }

    println!();
    let find = |n: &str| got.iter().find(|(g, _)| *g == n).map(|(_, f)| *f);
    let mut all_met = true;
    let mut checked = 0;
    let mut check = |what: String, met: bool| {
        all_met &= met;
        checked += 1;
        println!("{} {what}", if met { "MET   " } else { "MISSED" });
    };
    if let Some(f) = find("a-saturated-50") {
        check(
            format!("(a) 50 saturated, 60 s: {:.3} s wall < 0.5 s", f.wall_s),
            f.wall_s < 0.5,
        );
    }
    if let (Some(s10), Some(s1000)) = (find("saturated-10"), find("saturated-1000")) {
        let per = |f: Figures| f.wall_s / f.attempts.max(1) as f64;
        let ratio = per(s1000) / per(s10);
        check(
            format!(
                "cost per attempt, 1000 vs 10 saturated: {:.1} ns / {:.1} ns = {ratio:.2} <= 2",
                per(s1000) * 1e9,
                per(s10) * 1e9
            ),
            ratio <= 2.0,
        );
    }
    if let Some(f) = find("c-burst-100000") {
        check(
            format!("(c) 100 000 burst: {:.3} s wall < 1.5 s", f.wall_s),
            f.wall_s < 1.5,
        );
    }
    if let Some(f) = find("d-burst-1000000") {
        let mb = f.peak_kib as f64 * 1024.0 / 1e6;
        check(
            format!(
                "(d) 1 000 000 burst: {:.3} s wall < 15 s, peak {mb:.0} MB < 300 MB",
                f.wall_s
            ),
            f.wall_s < 15.0 && mb < 300.0,
        );
    }
    if let Some(f) = find("e-herd-1000000") {
        let mib = f.peak_kib as f64 / 1024.0;
        check(
            format!(
                "(e) 1 000 000-client herd: {:.3} s wall < 20 s, peak {mib:.0} MiB < 1024 MiB",
                f.wall_s
            ),
            f.wall_s < 20.0 && mib < 1024.0,
        );
    }
    for name in timed_out {
        check(format!("{name}: did not finish within --limit"), false);
    }
    // The estimate with which `run` refuses what cannot fit must bound what
    // a run takes beyond the program itself.
    let worst = got
        .iter()
        .map(|(n, f)| {
            let used = f.peak_kib.saturating_sub(f.base_kib) as f64 * 1024.0;
            (used / f.estimate_bytes.max(1.0), *n)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((ratio, name)) = worst {
        let met = ratio <= 1.0;
        all_met &= met;
        println!(
            "{} memory estimate: every peak beyond the program's own is within it \
             (largest share {ratio:.2}, {name})",
            if met { "MET   " } else { "MISSED" }
        );
    }
    // Five targets: (a), the cost ratio, (c), (d) and (e).
    println!(
        "{}",
        match (all_met, checked) {
            (false, _) => "some targets missed".to_string(),
            (true, n) if n >= 5 => "all targets met".to_string(),
            (true, 0) => "no target checked: their scenarios did not run".to_string(),
            (true, n) => format!(
                "{n} of 5 targets checked and met; the others need scenarios that did not run"
            ),
        }
    );
    Ok(())
}
