//! Hostile runs, beside the hostile files of hostile_inputs.rs: scenarios
//! that are valid but could not end (a clock that cannot advance), would
//! not fit (memory), or would run for hours, and messages that must say
//! what to write. Each goes through the real CLI and checks the exit code
//! and the words of the message.

use crate::common::{bin, temp_dir};
use std::path::Path;
use std::process::Output;

/// Runs `csmacd ARGS...` with `{}` in the arguments standing for `file`,
/// written with `text` first.
fn csmacd(dir: &Path, name: &str, text: &str, args: &[&str]) -> Output {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let file = file.display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{}", &file)).collect();
    bin().args(&args).current_dir(dir).output().unwrap()
}

/// Checks the exit code, each fragment of stderr, that nothing panicked
/// and that stdout holds no error.
fn expect(out: &Output, code: i32, fragments: &[&str], what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{what}: {err}");
    for f in fragments {
        assert!(err.contains(f), "{what}: no `{f}` in: {err}");
    }
    assert!(!err.contains("panicked"), "{what}: {err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("error"), "{what}: stdout: {stdout}");
}

/// A service scenario: a server table and one client group.
fn service(server: &str, group: &str) -> String {
    format!("duration = \"60s\"\n\n[server]\n{server}\n\n[[clients]]\nname = \"app\"\n{group}\n")
}

const FAILING: &str = "kind = \"flaky\"\nfailure = 1.0";
const ONCE: &str = "count = 10\ncalls = { kind = \"once\", at = \"0s\" }";

/// Clients that retry with no wait, over a network with no delay, against
/// a server that answers every attempt with a failure at once: the clock
/// stays at one instant. Each such run stops with exit 1, naming the
/// group, the instant and the cause, instead of growing until the process
/// aborts.
#[test]
fn retries_that_cannot_advance_the_clock_stop_with_a_clear_error() {
    let dir = temp_dir("stalls");
    let cases: &[(&str, String, &str)] = &[
        (
            "no backoff, no max_retries, a server that fails every attempt",
            service(FAILING, &format!("{ONCE}\nbackoff = {{ kind = \"none\" }}")),
            "against a server that fails every attempt (`server.failure` = 1)",
        ),
        (
            "queue_limit = 1",
            service(
                "kind = \"queue\"\nrate = \"10/s\"\nqueue_limit = 1",
                &format!("{ONCE}\nbackoff = {{ kind = \"none\" }}"),
            ),
            "against a full queue that refuses every attempt at once (`server.queue_limit` = 1)",
        ),
        (
            "a crashed server and reconnecting clients",
            service(
                "kind = \"queue\"\nrate = \"100/s\"\ncrash_above = 10\nrestart = \"5s\"",
                "count = 100\ncalls = { kind = \"reconnect\", at = \"0s\" }\nbackoff = { kind = \"none\" }",
            ),
            "against a crashed server that refuses every attempt until it restarts (`server.restart` = 5s)",
        ),
        (
            "a poll against a job",
            service(
                "kind = \"flaky\"\nfailure = 0.0",
                "count = 10\ncalls = { kind = \"poll\", at = \"0s\", job = \"5s\" }\nbackoff = { kind = \"none\" }",
            ),
            "its polls repeat with no wait and no limit, over a network with no delay, against a job that is not ready yet",
        ),
        (
            "an accept gate with burst 0",
            service(
                "kind = \"queue\"\nrate = \"1000/s\"\naccept_rate = \"10/s\"\naccept_burst = 0",
                "count = 100\ncalls = { kind = \"once\", at = \"0s\" }\nbackoff = { kind = \"none\" }",
            ),
            "against an accept-rate gate that refuses every attempt before its turn (`server.accept_burst` = 0)",
        ),
        (
            "a Finagle stack with a huge reserve",
            service(
                FAILING,
                &format!("{ONCE}\nstack = {{ kind = \"finagle\", min_retries_per_sec = 1000000, ttl = \"60s\" }}"),
            ),
            "its `finagle` stack retries with no wait",
        ),
        (
            "a budget with a huge deposit",
            service(
                FAILING,
                &format!("{ONCE}\nbackoff = {{ kind = \"none\" }}\nbudget = {{ size = 1e12, deposit = 1e12, start = 1e12 }}"),
            ),
            "against a server that fails every attempt",
        ),
        (
            "max_retries = 1000000 for 1000 clients",
            service(
                FAILING,
                "count = 1000\ncalls = { kind = \"once\", at = \"0s\" }\nbackoff = { kind = \"none\" }\nmax_retries = 1000000",
            ),
            "retry with no wait up to 1000000 times",
        ),
    ];
    for (k, (what, text, cause)) in cases.iter().enumerate() {
        let out_dir = dir.join(format!("out{k}"));
        let out = csmacd(
            &dir,
            &format!("stall{k}.toml"),
            text,
            &["run", "{}", "--out", out_dir.to_str().unwrap()],
        );
        expect(
            &out,
            1,
            &[
                "the run stopped, its clock cannot advance",
                "group \"app\" (`clients.0`)",
                "events at 0s without the clock advancing",
                cause,
                "no results were written",
            ],
            what,
        );
        assert!(!out_dir.join("summary.csv").exists(), "{what}");
    }
}

/// The same loop in a sweep names the point, and in lesson 10 the variant.
#[test]
fn a_stalled_point_and_a_stalled_lesson_are_named() {
    let dir = temp_dir("stall-sweep");
    let text = format!(
        "{}\n[sweep]\n\"server.failure\" = [0.5, 1.0]\n",
        service(
            "kind = \"flaky\"\nfailure = 0.5\n[network]\ndelay = \"10ms\"",
            &format!("{ONCE}\nbackoff = {{ kind = \"none\" }}")
        )
    );
    let out = csmacd(
        &dir,
        "sweep.toml",
        &text,
        &["sweep", "{}", "--out", "out", "--jobs", "1"],
    );
    // With a delay the clock moves: no stall, whatever the failures.
    expect(&out, 0, &[], "a sweep with a network delay");
    let text = text.replace("delay = \"10ms\"", "delay = \"0s\"");
    let out = csmacd(
        &dir,
        "sweep0.toml",
        &text,
        &["sweep", "{}", "--out", "out0", "--jobs", "1"],
    );
    expect(
        &out,
        1,
        &[
            "at sweep point 1 (server.failure=1)",
            "its clock cannot advance",
            "points finished and kept in",
        ],
        "a stalled sweep point",
    );
    let out = bin()
        .args([
            "lesson",
            "10",
            "--quiet",
            "--set",
            "clients.0.backoff.kind=none",
            "--set",
            "network.delay=0s",
        ])
        .output()
        .unwrap();
    expect(
        &out,
        1,
        &[
            "the run \"The herd after a restart: why it crashes the server again\" stopped, \
             its clock cannot advance",
            "group \"app\" (`clients.0`)",
            "against a crashed server that refuses every attempt until it restarts",
            "give `backoff`",
        ],
        "lesson 10 with no backoff and no delay",
    );
}

/// A bus collision takes at least its preamble or its jam: with both 0, a
/// wait of 0 could send two stations at one place again and again at the
/// same instant, so the file is refused.
#[test]
fn a_bus_whose_collisions_take_no_time_is_refused() {
    let dir = temp_dir("zero-jam");
    let text = "duration = \"1ms\"\nnonstandard_frames = true\n\n[medium]\nlength = \"0m\"\npreamble = \"0bit\"\nifg = \"0bit\"\njam = \"0bit\"\n\n[[stations]]\ncount = 2\nframe = \"1B\"\ntraffic = { kind = \"saturated\" }\nbackoff = { kind = \"constant\", delay = \"0s\" }\n";
    for cmd in ["run", "validate", "trace"] {
        let out = csmacd(&dir, "zero.toml", text, &[cmd, "{}"]);
        expect(
            &out,
            2,
            &[
                "zero.toml:8: `medium.jam`",
                "is 0 with a preamble of 0",
                "jam = \"32bit\"",
            ],
            cmd,
        );
    }
}

/// A group that says nothing of retries retries at once, at most 3 times;
/// one that asks for no wait and no limit is warned of before it runs.
#[test]
fn retries_with_no_wait_are_bounded_by_default_and_warned_of() {
    use csmacd::scenario;
    let text = service(FAILING, ONCE);
    let sc = scenario::from_str("t.toml", "t", &text).unwrap();
    let r = sc.run(1).unwrap();
    assert_eq!(r.metric("attempts"), 40.0);
    assert_eq!(r.metric("successes"), 0.0);
    assert!(sc.warnings().is_empty(), "{:?}", sc.warnings());
    // Given a backoff, no limit but the horizon's, as before.
    let text = service(
        FAILING,
        &format!("{ONCE}\nbackoff = {{ kind = \"constant\", delay = \"1s\" }}"),
    );
    let r = scenario::from_str("t.toml", "t", &text)
        .unwrap()
        .run(1)
        .unwrap();
    assert_eq!(r.metric("attempts"), 10.0 * 61.0);
    // An OCC race with no wait and no delay ends at its one instant: each
    // round of writes has a winner, n calls take n(n + 1) / 2 attempts.
    let text = service(
        "kind = \"occ\"",
        "count = 1500\ncalls = { kind = \"once\", at = \"0s\" }\nbackoff = { kind = \"none\" }",
    );
    let sc = scenario::from_str("t.toml", "t", &text).unwrap();
    assert!(sc.warnings().is_empty(), "{:?}", sc.warnings());
    let r = sc.run(1).unwrap();
    assert_eq!(r.metric("attempts"), 1500.0 * 1501.0 / 2.0);
    assert_eq!(r.metric("completion_s"), 0.0);

    let dir = temp_dir("unbounded");
    for (delay, pace) in [
        ("0s", "at one instant, without the clock advancing"),
        (
            "1ns",
            "every 2ns (a network round trip), up to 3.000e10 attempts per call",
        ),
    ] {
        let text = format!(
            "{}\n[network]\ndelay = \"{delay}\"\n",
            service(FAILING, &format!("{ONCE}\nbackoff = {{ kind = \"none\" }}"))
        );
        let out = csmacd(&dir, "none.toml", &text, &["validate", "{}"]);
        expect(
            &out,
            0,
            &[
                "none.toml:11: `clients.0.backoff`: group \"app\" retries with no wait and no limit",
                pace,
                "max_retries = 3",
            ],
            delay,
        );
        let out = csmacd(&dir, "none.toml", &text, &["validate", "--strict", "{}"]);
        expect(&out, 2, &["--strict fails on any warning"], delay);
    }
}

/// Memory is estimated before any work, and a refusal names what drives it.
#[test]
fn memory_is_estimated_first_and_refusals_name_what_drives_it() {
    let dir = temp_dir("memory");
    // 10^7 timeseries bins: refused by run and validate, naming the bin.
    let text = "duration = \"1000000s\"\nbin = \"100ms\"\nreplications = 4\n\n[server]\nkind = \"flaky\"\nfailure = 0.1\n\n[[clients]]\ncount = 10\ncalls = { kind = \"once\" }\nmax_retries = 3\n";
    for cmd in ["run", "validate"] {
        let out = csmacd(&dir, "bins.toml", text, &[cmd, "{}"]);
        expect(
            &out,
            2,
            &[
                "bins.toml:2: `bin`: 100ms over the duration 1000000s makes 10000000 timeseries bins per run, more than the 1000000 allowed",
                "give a wider bin, e.g. bin = \"1s\", or a shorter duration",
            ],
            cmd,
        );
    }
    // A long bus run: the delays kept, so the duration, not the stations.
    let text = "duration = \"20000s\"\n\n[medium]\nbit_rate = \"1Gbps\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"poisson\", load = 0.4 }\n";
    let out = csmacd(&dir, "long.toml", text, &["validate", "{}"]);
    expect(
        &out,
        2,
        &[
            "long.toml:1: `duration`: the delays of up to 1.563e10 frames delivered over the 20000s measured x 1 replication need about",
            "more than the 64.0 GiB limit; simulate a shorter `duration`",
        ],
        "a long bus run",
    );
    // A sweep's points are counted before any is built, and what they hold
    // estimated from the first: 10^6 points of 1000 explicit positions.
    let positions: Vec<String> = (0..1000).map(|i| format!("\"{i}m\"")).collect();
    let values = |n: usize| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "duration = \"1ms\"\n\n[[stations]]\ncount = 1000\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\npositions = [{}]\n\n[sweep]\n\"seed\" = [{}]\n\"replications\" = [{}]\n",
        positions.join(", "),
        values(1000),
        values(1000)
    );
    let out = csmacd(&dir, "positions.toml", &text, &["validate", "{}"]);
    expect(
        &out,
        2,
        &[
            "positions.toml:9: `sweep`: its 1000000 points would hold about 8.6 GiB once read",
            "more than the 2.0 GiB a sweep may hold at once",
        ],
        "explicit positions at 10^6 points",
    );
    let text = format!(
        "duration = \"1ms\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n\n[sweep]\n\"seed\" = [{}]\n\"replications\" = [{}]\n\"stations.0.count\" = [{}]\n",
        values(1000),
        values(100),
        values(100)
    );
    let out = csmacd(&dir, "grid.toml", &text, &["validate", "{}"]);
    expect(
        &out,
        2,
        &["grid.toml:8: `sweep`: the grid has more than 1000000 points"],
        "10^7 points",
    );
    // One axis of 10^5 values: distinct values found without comparing
    // every pair, and the points built without copying the axis into each.
    let text = format!(
        "duration = \"1ms\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n\n[sweep]\n\"seed\" = [{}]\n",
        values(100_000)
    );
    let out = csmacd(&dir, "long-axis.toml", &text, &["validate", "{}"]);
    expect(&out, 0, &[], "an axis of 10^5 values");
    let text = text.replace("[1, 2,", "[2, 2,");
    let out = csmacd(&dir, "twice.toml", &text, &["validate", "{}"]);
    expect(
        &out,
        2,
        &["`sweep.seed`: lists `2` twice"],
        "a value given twice",
    );
    // --jobs is capped.
    let out = bin()
        .args(["run", "scenarios/one-station.toml", "--jobs", "100000"])
        .current_dir(crate::common::repo())
        .output()
        .unwrap();
    expect(
        &out,
        2,
        &["'--jobs <JOBS>': 100000 threads is more than the 1024 csmacd starts; give 1 to 1024"],
        "--jobs 100000",
    );
}

/// trace, diagram and view show one run of one bus scenario: a sweep file,
/// a service file and clients without a server say so; their memory is
/// the window's run, not the whole scenario's, and the window's end must
/// be within the simulator's clock.
#[test]
fn pictures_of_one_run_say_what_they_take() {
    let dir = temp_dir("pictures");
    let sweep = "duration = \"1ms\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n\n[sweep]\n\"stations.0.count\" = [2, 3]\n";
    let service_sweep = format!(
        "{}\n[sweep]\n\"server.failure\" = [0.1, 0.2]\n",
        service("kind = \"flaky\"\nfailure = 0.5", ONCE)
    );
    for (cmd, extra) in [
        ("trace", vec![]),
        ("diagram", vec!["--until", "1ms", "--out", "d.png"]),
        ("view", vec!["--out", "v.html"]),
    ] {
        let args: Vec<&str> = [cmd, "{}"].into_iter().chain(extra).collect();
        let out = csmacd(&dir, "sweep.toml", sweep, &args);
        expect(
            &out,
            2,
            &[
                "sweep.toml: is a sweep file ([sweep]); this command shows one run of one scenario",
                "csmacd sweep",
            ],
            cmd,
        );
        let out = csmacd(&dir, "service-sweep.toml", &service_sweep, &args);
        // A trace follows a service scenario too, but one run of it.
        let said = if cmd == "trace" {
            "service-sweep.toml: is a sweep file ([sweep]); this command shows one run of one scenario"
        } else {
            "service-sweep.toml: is a service scenario ([server]), not a bus scenario"
        };
        expect(&out, 2, &[said], cmd);
    }
    let clients = "duration = \"1s\"\n\n[[clients]]\ncount = 1\ncalls = { kind = \"once\" }\n";
    for cmd in ["run", "validate", "trace"] {
        let out = csmacd(&dir, "clients.toml", clients, &[cmd, "{}"]);
        expect(
            &out,
            2,
            &["clients.toml:3: `clients`: [[clients]] groups call a server: a service scenario needs a [server] table"],
            cmd,
        );
    }
    let lesson2 = crate::common::repo().join("scenarios/lessons/2-collision.toml");
    let lesson2 = lesson2.to_str().unwrap();
    for (cmd, until, out) in [
        ("view", "1e300s", Some("x.html")),
        ("diagram", "1e19us", Some("x.png")),
        ("trace", "2e6s", None),
    ] {
        let mut args = vec![cmd, lesson2, "--until", until];
        if let Some(o) = out {
            args.extend(["--out", o]);
        }
        let out = bin().args(&args).current_dir(&*dir).output().unwrap();
        expect(
            &out,
            2,
            &[&format!(
                "--until {until}: is later than the 1e6 s the simulator can run; give at most the scenario's duration, --until 2ms"
            )],
            cmd,
        );
    }
    // A scenario whose whole run would not fit: 17 TiB of delays over
    // 10^6 s. Its first millisecond is traced; a window too long is refused
    // for what it would need.
    let long = "duration = \"1000000s\"\n\n[medium]\nbit_rate = \"1Gbps\"\nlength = \"25m\"\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"poisson\", load = 0.4 }\n";
    let out = csmacd(&dir, "long.toml", long, &["run", "{}"]);
    expect(
        &out,
        2,
        &["long.toml:1: `duration`: the delays of up to"],
        "run",
    );
    let out = csmacd(&dir, "long.toml", long, &["trace", "{}", "--until", "20us"]);
    expect(
        &out,
        0,
        &["note: shown up to 20 µs of a 1000000 s run"],
        "trace",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("tx-start"));
    let out = csmacd(
        &dir,
        "long.toml",
        long,
        &["trace", "{}", "--until", "50000s"],
    );
    expect(
        &out,
        2,
        &[
            "--until 50000s: the run up to then needs about",
            "of memory for the delays of up to",
            "give an earlier --until",
        ],
        "a window too long",
    );
}

/// A CSV of 30 000 series: counted before anything is gathered, refused
/// with what to do; --where keeps a subset of the rows.
#[test]
fn a_plot_of_too_many_series_says_how_to_draw_fewer() {
    let dir = temp_dir("plot-series");
    let mut csv = String::from("x,y,s\n");
    for s in 0..30_000 {
        for x in 0..3 {
            csv.push_str(&format!("{x},{},{s}\n", x * s));
        }
    }
    let out = csmacd(
        &dir,
        "many.csv",
        &csv,
        &[
            "plot", "{}", "--x", "x", "--y", "y", "--series", "s", "--out", "many.png",
        ],
    );
    expect(
        &out,
        2,
        &[
            "many.csv: 30000 series (one per value of `s`): more than the 1000 a chart can tell apart",
            "--where COLUMN=VALUE",
        ],
        "30000 series",
    );
    assert!(!dir.join("many.png").exists());
    let out = csmacd(
        &dir,
        "many.csv",
        &csv,
        &[
            "plot", "{}", "--x", "x", "--y", "y", "--series", "s", "--where", "s=7", "--out",
            "one.png",
        ],
    );
    expect(
        &out,
        0,
        &["wrote one.png and one.csv (1 series)"],
        "--where",
    );
    for (w, msg) in [
        ("q=7", "--where q=7: no column `q`; columns: x, y, s"),
        ("s=x7", "--where s=x7: no row of"),
        ("s7", "--where s7: write COLUMN=VALUE"),
    ] {
        let out = csmacd(
            &dir,
            "many.csv",
            &csv,
            &[
                "plot", "{}", "--x", "x", "--y", "y", "--where", w, "--out", "w.png",
            ],
        );
        expect(&out, 2, &[msg], w);
    }
}

/// A 10 000 km bus at 1 Gb/s: about 10^5 signals on the wire at once.
const FAR_BUS: &str = "duration = \"10s\"\n\n[medium]\nbit_rate = \"1Gbps\"\nlength = \"10000km\"\n\n[[stations]]\ncount = 8\nframe = \"512B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n";

/// A run that will take long says so first, with its estimated work;
/// while it runs it reports its progress, and Ctrl-C stops it (the first
/// says that the run under way finishes first, a second quits at once).
#[cfg(unix)]
#[test]
fn a_long_run_is_announced_reports_progress_and_stops_on_ctrl_c() {
    use std::io::{BufRead, BufReader, Read};
    let dir = temp_dir("long-run");
    let out = csmacd(&dir, "far.toml", FAR_BUS, &["validate", "{}"]);
    expect(
        &out,
        0,
        &[
            "far.toml:5: `medium.length`: a slow run: up to 93993 signals can be on the wire at once",
            "about 1.8e12 looks over the 10s simulated, roughly 29 minutes",
            "Ctrl-C stops it; a shorter bus or a shorter `duration` runs faster",
        ],
        "validate",
    );
    let file = dir.join("far.toml");
    let mut child = bin()
        .args(["run", file.to_str().unwrap(), "--out"])
        .arg(dir.join("out"))
        .env("CSMACD_PROGRESS_EVERY", "0.1")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut read_until = |what: &str, seen: &mut String| {
        while !seen.contains(what) {
            assert!(err.read_line(seen).unwrap() > 0, "no `{what}`:\n{seen}");
        }
    };
    read_until("a slow run", &mut seen);
    read_until(" % of 1 run done after ", &mut seen);
    // SAFETY: kill sends a signal to the child's pid; no memory is touched.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    read_until("a second Ctrl-C quits at once", &mut seen);
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    err.into_inner().read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(!dir.join("out").join("summary.csv").exists());
}

/// Each of these messages says what to write, where.
#[test]
fn messages_say_what_to_write() {
    let dir = temp_dir("messages");
    let bus = |medium: &str| {
        format!("duration = \"1ms\"\n\n[medium]\n{medium}\n\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n")
    };
    let e40 = "é".repeat(40);
    let e65 = "é".repeat(65);
    let cases: Vec<(&str, String, Vec<String>)> = vec![
        (
            "topology = \"hub\"",
            bus("topology = \"hub\""),
            vec!["x.toml:4: `medium.topology`: `hub` alone is not a topology; write a table with its kind and what it needs, e.g. topology = { kind = \"hub\", cable = \"100m\", repeater_delay = \"46bit\" }".into()],
        ),
        (
            "burst_limit = 65536",
            bus("bit_rate = \"1Gbps\"\nframe_bursting = true\nburst_limit = 65536"),
            vec!["x.toml:6: `medium.burst_limit`: 65536 has no unit; write the quantity in quotes with its unit, e.g. \"65536bit\"".into()],
        ),
        (
            "traffic = \"saturated\"",
            bus("").replace("{ kind = \"saturated\" }", "\"saturated\""),
            vec!["`stations.0.traffic`: expected a table, found the string \"saturated\"; write it as a table with its kind, e.g. traffic = { kind = \"saturated\" }".into()],
        ),
        (
            "sweep = 5",
            format!("sweep = 5\n{}", bus("")),
            vec!["x.toml:1: `sweep`: is the integer 5, not a table of axes; write a line [sweep], then one line per axis".into(), "e.g. \"stations.0.count\" = [2, 4, 8]".into()],
        ),
        (
            "an axis of the other world",
            format!("{}\n[sweep]\n\"server.rate\" = [\"10/s\", \"20/s\"]\n", bus("")),
            vec!["`sweep.server.rate`: `server` belongs to service scenarios ([server], [[clients]]); this file is a bus scenario, whose axes are keys of its [medium], [[stations]] or top level, e.g. \"medium.length\"".into()],
        ),
        (
            "an axis of the other world, from a service file",
            format!(
                "{}\n[sweep]\n\"stations.0.count\" = [1, 2]\n",
                service("kind = \"flaky\"\nfailure = 0.5", ONCE)
            ),
            vec!["`sweep.stations.0.count`: `stations` belongs to bus scenarios ([medium], [[stations]]); this file is a service scenario ([server])".into()],
        ),
        (
            "a Polly sampling_duration",
            service(
                "kind = \"flaky\"\nfailure = 0.5",
                &format!("{ONCE}\nstack = {{ kind = \"polly-breaker\", sampling_duration = \"2d\" }}"),
            ),
            vec!["`clients.0.stack.sampling_duration`: `2d`: unknown time unit `d`".into()],
        ),
        (
            "a Polly sampling_duration too long",
            service(
                "kind = \"flaky\"\nfailure = 0.5",
                &format!("{ONCE}\nstack = {{ kind = \"polly-breaker\", sampling_duration = \"25h\" }}"),
            ),
            vec!["`clients.0.stack.sampling_duration`: is out of range; allowed: \"500ms\" to \"24h\" (a day, 86400s)".into()],
        ),
        (
            "a service base without a unit",
            service(
                "kind = \"flaky\"\nfailure = 0.5",
                &format!("{ONCE}\nbackoff = {{ kind = \"full-jitter\", base = 100, cap = \"1s\" }}"),
            ),
            vec!["`clients.0.backoff.base`: 100 has no unit; write the quantity in quotes with its unit, e.g. \"100ms\"".into()],
        ),
        (
            "a group name of 65 é",
            bus("").replace("count = 2", &format!("name = \"{e65}\"\ncount = 2")),
            vec!["`stations.0.name`: is 65 characters long; allowed: 1 to 64 printable characters".into()],
        ),
        (
            "a scenario name with an escape sequence",
            format!("name = \"a\\u001b[31mred\"\n{}", bus("")),
            vec!["x.toml:1: `name`: holds the control character U+001B; allowed: 1 to 128 printable characters".into()],
        ),
    ];
    for (what, text, fragments) in &cases {
        let f: Vec<&str> = fragments.iter().map(String::as_str).collect();
        let runs = if text.contains("[sweep]") {
            "sweep"
        } else {
            "run"
        };
        for cmd in ["validate", runs] {
            let args: &[&str] = if cmd == "validate" {
                &[cmd, "{}"]
            } else {
                &[cmd, "{}", "--out", "o"]
            };
            let out = csmacd(&dir, "x.toml", text, args);
            expect(&out, 2, &f, &format!("{what} ({cmd})"));
            assert!(!dir.join("o").exists(), "{what}");
        }
    }
    // 40 "é" are 40 characters (80 bytes): a valid name, in groups of both
    // worlds.
    let text = bus("").replace("count = 2", &format!("name = \"{e40}\"\ncount = 2"));
    let out = csmacd(&dir, "e40.toml", &text, &["validate", "{}"]);
    expect(&out, 0, &[], "40 é");
    let text = service(FAILING, ONCE).replace("name = \"app\"", &format!("name = \"{e40}\""));
    let out = csmacd(&dir, "e40s.toml", &text, &["validate", "{}"]);
    expect(&out, 0, &[], "40 é, service");

    // --out naming a file or a device.
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let good = bus("");
    for o in [file.to_str().unwrap(), "/dev/null"] {
        let out = csmacd(&dir, "good.toml", &good, &["run", "{}", "--out", o]);
        expect(
            &out,
            2,
            &[
                &format!("--out {o}: is a"),
                "not a directory; give a directory for the results",
            ],
            o,
        );
        let out = bin().args(["lesson", "2", "--out", o]).output().unwrap();
        expect(&out, 2, &[&format!("--out {o}: is a")], o);
        assert!(out.stdout.is_empty(), "the lesson printed before refusing");
    }
    // --set: the flag named, not a line of the built-in file; checked before
    // the lesson's text is printed.
    for (set, msg) in [
        (
            "=",
            "--set: `=`: the path before `=` is not a dotted key; write PATH=VALUE",
        ),
        ("x=1", "--set x=1: `x`: unknown key `x`; allowed here:"),
        (
            "stations.0.count=3",
            "--set stations.0.count=3: `stations.0.positions`: 1 positions for 3 stations",
        ),
    ] {
        let out = bin().args(["lesson", "2", "--set", set]).output().unwrap();
        expect(&out, 2, &[msg], set);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("2-collision.toml"), "{set}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{set}: the lesson printed before refusing"
        );
    }
    // Write errors are sentences.
    let lesson2 = crate::common::repo().join("scenarios/lessons/2-collision.toml");
    for o in ["/proc/csmacd/x.png", "a-file/x.png", "/proc/csmacd/x.svg"] {
        let out = bin()
            .args([
                "diagram",
                lesson2.to_str().unwrap(),
                "--until",
                "100us",
                "--out",
                o,
            ])
            .current_dir(&*dir)
            .output()
            .unwrap();
        expect(&out, 1, &[&format!("error: cannot write {o}: ")], o);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("Os {") && !err.contains("Error("),
            "{o}: {err}"
        );
    }
    let csv = "x,y\n1,2\n2,3\n";
    let out = csmacd(
        &dir,
        "t.csv",
        csv,
        &["plot", "{}", "--x", "x", "--y", "y", "--out", "/proc/p.png"],
    );
    expect(
        &out,
        1,
        &["cannot write /proc/p.png: No such file or directory"],
        "plot",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("Os {"), "{err}");
}
