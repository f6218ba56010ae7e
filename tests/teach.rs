//! The trace, the pictures and the lessons, through the library and the CLI.

use crate::common::temp_dir;
use csmacd::engine::Time;
use csmacd::scenario;
use csmacd::teach::lessons;
use csmacd::teach::trace::{self, TraceFilter, TraceKind, TraceRow};
use std::path::PathBuf;
use std::process::Command;

const US: Time = 1_000_000;

fn two_stations(distance_m: u32, second_at_us: f64) -> csmacd::ethernet::Scenario {
    let text = format!(
        r#"
duration = "1ms"
[medium]
length = "{distance_m}m"
[[stations]]
count = 1
positions = ["0m"]
traffic = {{ kind = "burst", frames = 1, at = "0us" }}
frame = "64B"
[[stations]]
count = 1
positions = ["{distance_m}m"]
traffic = {{ kind = "burst", frames = 1, at = "{second_at_us}us" }}
frame = "64B"
"#
    );
    scenario::bus_from_str("two.toml", "two", &text).unwrap()
}

fn rows(sc: &csmacd::ethernet::Scenario, until: Time) -> Vec<TraceRow> {
    trace::collect(sc, trace::run_seed(sc), TraceFilter::new(sc, until, None))
}

fn first(rows: &[TraceRow], station: u32, pred: impl Fn(&TraceKind) -> bool) -> &TraceRow {
    rows.iter()
        .find(|r| r.station == station && pred(&r.kind))
        .expect("event present")
}

/// Detection at i happens when j's first bit arrives: start_j + d; the jam
/// starts then (or when i's 64-bit preamble ends, if later) and lasts 32 bits.
#[test]
fn two_station_collision_detection_and_jam_follow_the_geometry() {
    // (distance, S1's start, expected detection at S0, at S1, jam start S0, S1)
    // 1500 m = 7.5 us; 500 m = 2.5 us, inside the 6.4 us preamble.
    let cases: &[(u32, f64, Time, Time, Time, Time)] = &[
        (1500, 0.0, 7_500_000, 7_500_000, 7_500_000, 7_500_000),
        (2000, 3.0, 13 * US, 10 * US, 13 * US, 10 * US),
        (500, 0.0, 2_500_000, 2_500_000, 6_400_000, 6_400_000),
    ];
    for &(d, s1, det0, det1, jam0, jam1) in cases {
        let sc = two_stations(d, s1);
        let r = rows(&sc, 200 * US);
        for (st, det, jam) in [(0, det0, jam0), (1, det1, jam1)] {
            let c = first(&r, st, |k| matches!(k, TraceKind::CollisionDetected { .. }));
            assert_eq!(c.t, det, "detection at S{st}, {d} m");
            let j = first(&r, st, |k| matches!(k, TraceKind::Jam { .. }));
            assert_eq!(j.t, jam, "jam start at S{st}, {d} m");
            let TraceKind::Jam { end } = j.kind else {
                unreachable!()
            };
            assert_eq!(end - j.t, 32 * sc.medium.bit_ps, "32-bit jam at S{st}");
            // The signal row that caused it arrives at the same instant.
            let s = first(&r, st, |k| matches!(k, TraceKind::SignalArrives { .. }));
            assert_eq!(s.t, det);
            let b = first(&r, st, |k| matches!(k, TraceKind::Backoff { .. }));
            assert!(matches!(
                b.kind,
                TraceKind::Backoff {
                    n: 1,
                    k: Some(1),
                    r: Some(0 | 1),
                    ..
                }
            ));
            assert_eq!(b.t, end, "backoff counted from the end of the jam");
        }
    }
}

#[test]
fn trace_rows_are_in_time_order_and_stop_at_until() {
    let sc = scenario::load_bus(&repo("scenarios/two-saturated.toml")).unwrap();
    let until = 3_000 * US;
    let r = rows(&sc, until);
    assert!(r.len() > 20);
    assert!(r.windows(2).all(|w| w[0].t <= w[1].t));
    assert!(r.iter().all(|x| x.t < until));
    // The trace's run is replication 0 of `csmacd run`: the same events as
    // the first 3 ms of the full run, since events are processed in time order.
    let mut full = Vec::new();
    let mut tracer = trace::Tracer::new(
        &sc,
        trace::run_seed(&sc),
        TraceFilter::new(&sc, until, None),
        |x: &TraceRow| full.push(x.clone()),
    );
    let mut short_sc = sc.clone();
    short_sc.duration = 2 * until;
    short_sc.warmup = 0;
    csmacd::ethernet::run_observed(&short_sc, trace::run_seed(&sc), &mut tracer);
    let _ = tracer.finish();
    assert_eq!(full, r);
}

fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn csmacd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_csmacd"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn diagram_is_a_valid_svg_and_png_naming_both_stations() {
    let scratch = temp_dir("teach-diagram");
    let svg = scratch.join("collision.svg");
    let png = scratch.join("collision.png");
    let tl = scratch.join("timeline.png");
    let lesson = "scenarios/lessons/2-collision.toml";
    let o = csmacd(&[
        "diagram",
        lesson,
        "--until",
        "220us",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.trim_start().starts_with("<svg"), "SVG root element");
    assert!(text.trim_end().ends_with("</svg>"));
    assert!(text.contains("S0 (0 m)") && text.contains("S1 (2000 m)"));
    assert!(text.contains("S1 detects at 10 µs") && text.contains("S0 detects at 13 µs"));
    let o = csmacd(&[
        "diagram",
        lesson,
        "--until",
        "220us",
        "--out",
        png.to_str().unwrap(),
        "--timeline",
        tl.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for p in [&png, &tl] {
        let bytes = std::fs::read(p).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        // IHDR: width and height, big-endian, at bytes 16..24.
        let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        assert_eq!(w, 1200);
    }
    let o = csmacd(&["diagram", lesson, "--until", "1ms", "--out", "x.gif"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "unknown picture format is a usage error"
    );
}

#[test]
fn trace_cli_formats_and_filters() {
    let lesson = "scenarios/lessons/2-collision.toml";
    let o = csmacd(&["trace", lesson, "--until", "20us"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\x1b'), "plain text when piped");
    assert!(text.contains("jam: 32 bits, until 13.2 µs"));
    assert!(!text.contains("attempt 2"), "--until cuts the run at 20 us");
    let o = csmacd(&[
        "trace",
        lesson,
        "--until",
        "20us",
        "--stations",
        "1",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(o.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("time_us,station,event,peer,bytes,attempt,n,k,r,end_us,delay_us")
    );
    assert!(lines.clone().all(|l| l.split(',').nth(1) == Some("1")));
    assert!(csv.contains("10,1,collision,"));
    let o = csmacd(&["trace", lesson, "--until", "20us", "--format", "jsonl"]);
    let jl = String::from_utf8(o.stdout).unwrap();
    assert!(jl
        .lines()
        .all(|l| l.starts_with("{\"time_us\":") && l.ends_with('}')));
    assert!(jl.contains("{\"time_us\":10,\"station\":1,\"event\":\"jam\",\"end_us\":13.2}"));
    let o = csmacd(&["trace", lesson, "--stations", "5"]);
    assert_eq!(o.status.code(), Some(2));
    let o = csmacd(&["trace", lesson, "--until", "soon"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Runs built-in lesson `number` (a lesson file) as `csmacd lesson N`
/// does, and asserts every number its text promises (the lesson's own
/// checks); returns the outcome.
fn lesson_shows_its_numbers(number: u32) -> lessons::Outcome {
    let l = lessons::find_file(number)
        .unwrap_or_else(|| panic!("lesson {number} is built in"))
        .load()
        .unwrap_or_else(|e| panic!("lesson {number}: {e}"));
    assert!(l.text.starts_with(&format!("# Lesson {number}")));
    let out = lessons::runner::run(&l, &[]).unwrap_or_else(|e| panic!("lesson {number}: {e}"));
    assert!(out.checks.len() >= 3, "lesson {number} states its numbers");
    for c in &out.checks {
        assert!(
            c.ok,
            "lesson {number}: {}: expected {}, seen {}",
            c.what, c.expected, c.seen
        );
    }
    out
}

#[test]
fn lessons_are_numbered_1_to_14() {
    let numbers: Vec<u32> = lessons::catalogue().iter().map(|l| l.0).collect();
    assert_eq!(numbers, (1..=14).collect::<Vec<_>>());
    // Every one is a lesson file, read from the program's own copy.
    for f in lessons::FILE_LESSONS {
        let l = f
            .load()
            .unwrap_or_else(|e| panic!("lesson {}: {e}", f.number));
        assert_eq!(l.number, Some(f.number), "{}", f.file);
    }
}

#[test]
fn lesson_1_shows_its_numbers() {
    // A lesson file: the numbers its Rust form checked, unchanged.
    let l = lessons::find_file(1).unwrap().load().unwrap();
    let out = lessons::runner::run(&l, &[]).unwrap();
    let seen: Vec<(&str, &str, bool)> = out
        .checks
        .iter()
        .map(|c| (c.expected.as_str(), c.seen.as_str(), c.ok))
        .collect();
    assert_eq!(
        seen,
        [
            ("0 µs", "0 µs", true),
            ("6.25 µs", "6.25 µs", true),
            ("12.5 µs", "12.5 µs", true),
            ("57.6 µs", "57.6 µs", true),
            ("70.1 µs", "70.1 µs", true),
            ("0", "0", true),
        ]
    );
    assert_eq!(out.diagram_until, Some(100_000_000));
}

/// The check of `out` whose sentence starts with `what`: its seen value.
fn seen<'a>(out: &'a lessons::Outcome, what: &str) -> &'a str {
    out.checks
        .iter()
        .find(|c| c.what.starts_with(what))
        .unwrap_or_else(|| panic!("no check \"{what}\": {:?}", out.checks))
        .seen
        .as_str()
}

#[test]
fn lesson_2_shows_its_numbers() {
    let out = lesson_shows_its_numbers(2);
    // The geometry: 2000 m at 2e8 m/s; S0 starts at 0, S1 at 3 µs.
    let d_us = 2000.0 / 2e8 * 1e6;
    assert_eq!(seen(&out, "S1 detects"), format!("{d_us} µs"));
    assert_eq!(seen(&out, "S0 detects"), format!("{} µs", 3.0 + d_us));
    // 802.3's jamSize, 32 bits, for each.
    assert_eq!(seen(&out, "S0's jam"), "32 bits");
    assert_eq!(seen(&out, "S1's jam"), "32 bits");
    assert_eq!(seen(&out, "frames delivered"), "2");
    assert_eq!(out.diagram_until, Some(220_000_000));
}

/// Lesson 3: its table's exact P(C) column is the textbook's law (the
/// product of the chances of colliding again, computed here), and its
/// E[C] check expects the mean of that law to c = 16.
#[test]
fn lesson_3_shows_its_numbers() {
    let out = lesson_shows_its_numbers(3);
    let mut pmf = Vec::new();
    let mut again = 1.0;
    for c in 1..=16 {
        let p = 0.5f64.powi(c.min(10));
        pmf.push(again * (1.0 - p));
        again *= p;
    }
    assert_eq!(out.table[0][2], "exact P(C)");
    for c in 1..=5 {
        assert_eq!(out.table[c][2], format!("{:.4}", pmf[c - 1]), "C = {c}");
    }
    let mean: f64 = pmf
        .iter()
        .enumerate()
        .map(|(k, p)| (k + 1) as f64 * p)
        .sum();
    assert!((mean - 1.6416).abs() < 1e-4);
    let e = out
        .checks
        .iter()
        .find(|c| c.what.starts_with("E[C]"))
        .unwrap();
    assert_eq!(e.expected, format!("{mean:.6}"));
}

#[test]
fn lesson_4_shows_its_numbers() {
    lesson_shows_its_numbers(4);
}

#[test]
fn lesson_5_shows_its_numbers() {
    lesson_shows_its_numbers(5);
}

#[test]
fn lesson_6_capture_under_beb_and_a_fair_coin_under_blam() {
    let out = lesson_shows_its_numbers(6);
    // The checks cover: beb's mean run >= 20 and its drops, blam's mean run
    // within 4 standard errors of 2, blam's fewer drops and lower throughput.
    assert!(out.checks.iter().any(|c| c.what.contains("fair coin's 2")));
    assert_eq!(out.table.len(), 3, "header, beb, blam");
    // One station's ceiling, F / (F + preamble + gap) for 1518-byte frames
    // at 10 Mb/s: 12144 / (12144 + 64 + 96), less the check's 0.01.
    let ceiling = 12144.0 / (12144.0 + 64.0 + 96.0);
    assert_eq!(
        out.checks[3].expected,
        format!("> {}", show(ceiling - 0.01))
    );
    // blam's mean run against the coin's 2, within 4 standard errors
    // sqrt(2 / M) of M runs in all: a tolerance of a few hundredths.
    let blam = &out.checks[4];
    assert!(blam.expected.starts_with("2 ± 0.0"), "{}", blam.expected);
}

#[test]
fn lesson_7_shows_its_numbers() {
    lesson_shows_its_numbers(7);
}

#[test]
fn lesson_8_orders_aloha_slotted_csma_csmacd_and_matches_the_closed_forms() {
    let out = lesson_shows_its_numbers(8);
    // One closed-form check per ALOHA point (6 loads) and three ordering
    // checks.
    let n = 6;
    assert_eq!(
        out.checks
            .iter()
            .filter(|c| c.what.contains("at the measured G"))
            .count(),
        2 * n
    );
    assert_eq!(
        out.checks
            .iter()
            .filter(|c| c.what.contains("by more than 4 sd"))
            .count(),
        3
    );
}

#[test]
fn lesson_9_no_jitter_collides_every_time_and_jitter_resolves() {
    let out = lesson_shows_its_numbers(9);
    assert!(out.checks.iter().any(|c| c.what.contains("same instant")));
    assert_eq!(out.more_pictures.len(), 1, "the full-jitter picture");
    assert_eq!(out.more_pictures[0].0, "full-jitter");
    assert_eq!(out.more_pictures[0].1.replications, 1);
    // S0 gives up after 16 attempts of (12.5 µs to detect + 3.2 µs of jam)
    // and the waits min(1024, 2^(n-1)) slots of 51.2 µs for n = 1 to 15.
    let waits: u64 = (1..16).map(|n: u32| (1u64 << (n - 1)).min(1024)).sum();
    assert_eq!(waits, 6143);
    let give_up_ps = 16 * (12_500_000 + 3_200_000) + waits * 51_200_000;
    assert_eq!(
        seen(&out, "no jitter: S0 gives up"),
        format!("{} µs", csmacd::teach::trace::us(give_up_ps))
    );
    // beb's collisions per frame against lesson 3's E[C]: the exact law of
    // the two-station race, after the j-th collision again with
    // probability 2^-min(j, 10), to the attempt limit.
    let (mut again, mut mean, mut second) = (1.0_f64, 0.0, 0.0);
    for c in 1..=16 {
        let p = 0.5_f64.powi(c.min(10));
        let pc = again * (1.0 - p);
        mean += c as f64 * pc;
        second += (c * c) as f64 * pc;
        again *= p;
    }
    let var: f64 = second - mean * mean;
    let ec = out
        .checks
        .iter()
        .find(|c| c.what.starts_with("beb: collisions per frame"))
        .unwrap();
    let tol = 4.0 * (var / 1000.0).sqrt();
    assert_eq!(
        ec.expected,
        format!("{} ± {}", show(mean), show(tol)),
        "E[C] = {mean}, 4 standard errors of 1000 runs = {tol}"
    );
}

#[test]
fn lesson_9_out_draws_both_diagrams() {
    let scratch = temp_dir("teach-lesson9");
    let dir = scratch.join("lesson9");
    let o = csmacd(&["lesson", "9", "--quiet", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "diagram.png",
        "timeline.png",
        "diagram-full-jitter.png",
        "timeline-full-jitter.png",
    ] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{f} is a PNG");
    }
}

#[test]
fn lesson_cli_prints_text_and_checks_and_refuses_unknown_lessons() {
    let o = csmacd(&["lesson", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("# Lesson 2"));
    assert!(text.contains("[ok  ] S1 detects"));
    let o = csmacd(&["lesson", "42"]);
    assert_eq!(o.status.code(), Some(2));
    let o = csmacd(&["lesson", "4", "--quiet", "--set", "medium.length=12km"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("12000 m"));
}

#[test]
fn lesson_11_shows_its_numbers() {
    let out = lesson_shows_its_numbers(11);
    // One station's share at 1 Gb/s: 64-byte frames (512 bits) after a
    // 64-bit preamble and before a 96-bit gap; extended to the 4096-bit
    // slot; in bursts of 93 frames within 66 080 bit times.
    let shares = [
        512.0 / (64.0 + 4096.0 + 96.0),
        93.0 * 512.0 / 66_080.0,
        512.0 / (64.0 + 512.0 + 96.0),
    ];
    for (c, share) in out.checks.iter().zip(shares) {
        assert_eq!(c.expected, format!("{} ± 0.002", show(share)), "{}", c.what);
    }
    // A burst of 64-byte frames: the first extended (64 + 4096 bits), then
    // each later one 96 + 64 + 512 bits, while 65 536 bit times have not
    // passed at a frame's start: 92 more frames, 93 in all.
    let later = 96 + 64 + 512;
    let more = (65_536 - (64 + 4096)) / later + 1;
    assert_eq!(1 + more, 93);
    assert_eq!(64 + 4096 + more * later + 96, 66_080);
}

#[test]
fn lesson_12_shows_its_numbers() {
    let out = lesson_shows_its_numbers(12);
    // The coax: 500 m at 0.77 c; the hub: two 100 m links at 0.585 c and
    // 8 bit times (0.8 µs) through it; eight stations evenly over the coax
    // are on average 3/7 of it apart (the mean of |i - j| / 7 over pairs).
    let c = 299_792_458.0;
    let coax = 500.0 / (0.77 * c) * 1e6;
    let hub = 2.0 * 100.0 / (0.585 * c) * 1e6 + 0.8;
    let pairs: Vec<f64> = (0..8)
        .flat_map(|i| (i + 1..8).map(move |j| (j - i) as f64 / 7.0))
        .collect();
    let mean = pairs.iter().sum::<f64>() / pairs.len() as f64;
    assert!((mean - 3.0 / 7.0).abs() < 1e-12);
    for (what, us) in [
        ("coax: worst delay", coax),
        ("hub: worst delay", hub),
        ("coax: mean delay", coax * mean),
        ("hub: mean delay", hub),
    ] {
        let check = out
            .checks
            .iter()
            .find(|c| c.what.starts_with(what))
            .unwrap();
        let expected: f64 = check.expected.split(' ').next().unwrap().parse().unwrap();
        assert!(
            (expected - us).abs() < 0.0005,
            "{what}: {expected} against {us}"
        );
    }
}

#[test]
fn lesson_13_shows_its_numbers() {
    let out = lesson_shows_its_numbers(13);
    // L* = (slot - jam) / 2 x v at 2e8 m/s, and the length from which a
    // collision can be late, (preamble + slot) / 2 x v, at each speed.
    for (speed, bit_ns, slot) in [
        ("10 Mb/s", 100.0, 512.0),
        ("100 Mb/s", 10.0, 512.0),
        ("1 Gb/s, no extension", 1.0, 512.0),
        ("1 Gb/s, carrier extension", 1.0, 4096.0),
    ] {
        let metres = |bits: f64| bits * bit_ns * 1e-9 / 2.0 * 2e8;
        let row = out.table.iter().find(|r| r[0] == speed).unwrap();
        assert_eq!(row[2], format!("{:.1}", metres(slot - 32.0)), "{speed}");
        assert_eq!(row[3], format!("{:.1}", metres(64.0 + slot)), "{speed}");
        assert_eq!(
            row[4],
            format!("{:.1}", 0.9 * metres(slot - 32.0)),
            "{speed}"
        );
        let long = out
            .table
            .iter()
            .find(|r| r[0] == format!("{speed}, 2 L*"))
            .unwrap();
        assert_eq!(
            long[4],
            format!("{:.1}", 2.0 * metres(slot - 32.0)),
            "{speed}"
        );
    }
    // Each bus is promised none or some of each, never nothing: 16 checks.
    assert_eq!(out.checks.len(), 16);
}

/// What-ifs on the lessons of the faster standards show their numbers and
/// exit 0: 512-byte frames fill the Gigabit slot by themselves (extension
/// and bursting no longer change the share as lesson 11 says), and frames
/// of 1518 bytes alone leave nothing undetected in lesson 13.
#[test]
fn what_ifs_on_the_speed_lessons_show_numbers_and_exit_0() {
    for (n, set) in [
        ("11", "stations.0.frame=\"512B\""),
        ("12", "stations.0.count=2"),
    ] {
        let o = csmacd(&["lesson", n, "--quiet", "--set", set]);
        assert!(
            o.status.success(),
            "{n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("[FAIL]"), "{n}: {out}");
        assert!(out.contains("not applicable after --set"), "{n}: {out}");
    }
}

/// Lessons 4 and 13 follow a `--set medium.length` by the inequalities of
/// docs/model.md: late and undetected collisions promised (and seen) where
/// the round trip 2L/v passes preamble + slot (57.6 µs at 10 Mb/s, 5.76 µs
/// at 100 Mb/s, 0.576 µs at 1 Gb/s, 4.16 µs with carrier extension), none
/// where it stays a third of a gap below; nothing marked n/a.
#[test]
fn lessons_4_and_13_follow_the_length_set() {
    let lesson = |n: &str, set: &str| {
        let o = csmacd(&["lesson", n, "--quiet", "--set", set]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(!out.contains("[n/a ]") && !out.contains("[FAIL]"), "{out}");
        out
    };
    let out = lesson("4", "medium.length=6km");
    assert!(
        out.contains(
            "[ok  ] 6000 m bus: round trip 60 µs > 57.6 µs (preamble + slot): late collisions"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "6000 m bus: round trip 60 µs > 57.6 µs (preamble + shortest frame): undetected"
        ),
        "{out}"
    );
    let out = lesson("4", "medium.length=5km");
    assert!(
        out.contains(
            "[ok  ] 5000 m bus: round trip 50 µs <= 57.6 µs (preamble + slot): no late collisions"
        ),
        "{out}"
    );
    let out = lesson("13", "medium.length=500m");
    for (speed, slot, limit, some) in [
        ("10 Mb/s", 512, "57.6", false),
        ("100 Mb/s", 512, "5.76", false),
        ("1000 Mb/s", 512, "0.576", true),
        ("1000 Mb/s", 4096, "4.16", true),
    ] {
        let rel = if some { ">" } else { "<=" };
        let what = if some {
            "late collisions"
        } else {
            "no late collisions"
        };
        let line = format!(
            "[ok  ] {speed}, slot {slot} bits, 500 m: round trip 5 µs {rel} {limit} µs \
             (preamble + slot): {what}"
        );
        assert!(out.contains(&line), "{line}\n{out}");
    }
    // Every speed on that one bus: four rows, the 2 L* ones left out.
    assert!(!out.contains("2 L*"), "{out}");
    assert_eq!(out.matches(" 500.0  ").count(), 4, "{out}");
}

/// `--set` turns a lesson into a what-if: promises that no longer hold are
/// marked n/a, not FAIL, and the lesson exits 0; an unchanged lesson still
/// checks every promise.
#[test]
fn a_what_if_marks_broken_promises_not_applicable() {
    // Slotted ALOHA's S = G e^-G assumes frames that fit a slot: with
    // 1518-byte frames in 512-bit slots its promises cannot hold.
    let o = csmacd(&[
        "lesson",
        "8",
        "--quiet",
        "--set",
        "stations.0.frame=\"1518B\"",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("checked on this what-if"), "{out}");
    assert!(out.contains("[n/a ] slotted-aloha"), "{out}");
    assert!(!out.contains("[FAIL]"), "{out}");
    assert!(out.contains("not applicable after --set"), "{out}");
    let o = csmacd(&["lesson", "8", "--quiet"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("What you should see:") && !out.contains("n/a"),
        "{out}"
    );
}

/// `trace --from` prints the events of the window only, the same events the
/// whole run has there; the trace says on stderr when it stops short.
#[test]
fn trace_from_shows_a_window_of_the_full_run() {
    let file = "scenarios/two-saturated.toml";
    let all = csmacd(&["trace", file, "--until", "2ms", "--format", "csv"]);
    let part = csmacd(&[
        "trace", file, "--from", "1ms", "--until", "2ms", "--format", "csv",
    ]);
    assert!(
        part.status.success(),
        "{}",
        String::from_utf8_lossy(&part.stderr)
    );
    let rows = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    let time = |r: &String| -> f64 { r.split(',').next().unwrap().parse().unwrap() };
    let expected: Vec<String> = rows(&all)
        .into_iter()
        .filter(|r| time(r) >= 1000.0)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(rows(&part), expected);
    assert!(String::from_utf8_lossy(&part.stderr).contains("shown up to 2000 µs of a 10 s run"));
    let bad = csmacd(&["trace", file, "--from", "3ms", "--until", "2ms"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--from 3ms is not before --until 2ms"));
}

/// Lesson 10 (the service world): no jitter crashes the server on every
/// wave, as the lockstep arithmetic predicts; the budget's attempts are
/// exact; the accept-rate gate connects the herd exactly at its floor.
#[test]
fn lesson_10_herd_crashes_the_server_again_and_the_gate_reaches_the_floor() {
    let out = lesson_shows_its_numbers(10);
    assert_eq!(out.table.len(), 6, "a header and five variants");
    // The waves' arithmetic: 2000 clients dropped at 0 s wait 1, 2, 4, ...,
    // 64 s (no jitter) after each failure heard one 10 ms leg after their
    // attempt arrived; a wave that finds the server up crashes it (more
    // than 400 wait) and keeps it down 5 s, one that finds it down is
    // refused.
    let (leg, restart, horizon) = (0.01, 5.0, 600.0);
    let (mut waves, mut crashes, mut down_until, mut n) = (0, 0, 0.0_f64, 1);
    let mut send = 1.0;
    while send <= horizon {
        waves += 1;
        let arrive = send + leg;
        if arrive >= down_until {
            crashes += usize::from(arrive <= horizon);
            down_until = arrive + restart;
        }
        n += 1;
        send = arrive + leg + f64::from(1u32 << (n - 1).min(6));
    }
    assert_eq!(out.table[1][1], crashes.to_string(), "no jitter: crashes");
    assert_eq!(
        out.table[1][2],
        (2000 * waves).to_string(),
        "every wave whole"
    );
    // The budget: 2000 first attempts and floor(min(100, 100 + 0.1 x 2000))
    // retries.
    assert_eq!(out.table[3][2], (2000 + 100).to_string());
    // The gate: the first wave at 1.01 s, then one client every 1/190 s
    // (rounded to the picosecond), one 5 ms service and the 10 ms leg back.
    let interval_ps = (1e12_f64 / 190.0).round();
    let floor = (1e12 + 1e10 + 1999.0 * interval_ps + 5e9 + 1e10) / 1e12;
    assert_eq!(out.table[5][4], format!("{floor:.3}"), "the gate's floor");
    assert_eq!(out.table[5][4], "11.546");
}

/// A what-if on lesson 10 shows its numbers, marks the promises that no
/// longer hold n/a, and exits 0.
#[test]
fn lesson_10_what_if_marks_checks_not_applicable() {
    let o = crate::sweep::csmacd(&["lesson", "10", "--quiet", "--set", "clients.0.count=300"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("[n/a ]") && text.contains("  300  "),
        "{text}"
    );
    assert!(!text.contains("FAIL"), "{text}");
}

/// A number as a lesson prints it: up to six decimals, no trailing zeros.
fn show(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
