//! The lessons' charts (the theory drawn as a line, the simulation over it)
//! checked against the closed forms, the lessons' what-ifs, and the
//! diagram's window, station choice, label placement and notes.

use crate::common::temp_dir;
use csmacd::output::chart::{Look, Series};
use csmacd::teach::draw::{place_labels, LabelBox, TimeUnit};
use csmacd::teach::lessons::{self, LessonChart};
use std::process::{Command, Output};

fn csmacd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_csmacd"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn charts_of(number: u32) -> Vec<LessonChart> {
    let f = lessons::find_file(number).unwrap_or_else(|| panic!("no lesson {number}"));
    let out = lessons::runner::run(&f.load().unwrap(), &[])
        .unwrap_or_else(|e| panic!("lesson {number}: {e}"));
    assert!(!out.charts.is_empty(), "lesson {number} draws a chart");
    out.charts
}

fn series<'a>(chart: &'a LessonChart, label: &str) -> &'a Series {
    chart.series(label).unwrap_or_else(|| {
        let labels: Vec<&str> = chart
            .chart
            .series
            .iter()
            .map(|s| s.label.as_str())
            .collect();
        panic!("{}: no series {label}; has {labels:?}", chart.name)
    })
}

/// The theory's value at `x` (one of its points).
fn theory_at(s: &Series, x: f64) -> f64 {
    assert!(s.look.is_theory(), "{} is a theory", s.label);
    s.points
        .iter()
        .find(|p| (p.x - x).abs() < 1e-9)
        .and_then(|p| p.y)
        .unwrap_or_else(|| panic!("{}: no point at {x}", s.label))
}

/// Every point of a theory line equals `law` at its x.
fn line_follows(s: &Series, law: impl Fn(f64) -> f64) {
    assert_eq!(s.look, Look::Theory, "{} is a theory line", s.label);
    assert!(s.points.len() >= 2, "{}", s.label);
    for p in &s.points {
        let (y, want) = (p.y.unwrap(), law(p.x));
        assert!(
            (y - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{} at {}: drawn {y}, closed form {want}",
            s.label,
            p.x
        );
    }
}

/// Lesson 3: the bars are the exact distribution of the two-station race,
/// P(C = 1, 2, 3, 4) = 1/2, 3/8, 7/64, 15/1024; each simulated fraction of
/// the 4000 runs lies within 4 standard errors sqrt(p (1 - p) / n) of it,
/// and its 95 % interval holds it.
#[test]
fn lesson_3_chart_draws_the_exact_race_under_the_runs() {
    let charts = charts_of(3);
    let c = &charts[0];
    let exact = series(c, "exact P(C = c) (theory)");
    assert_eq!(
        exact.look,
        Look::TheoryBars,
        "a distribution, drawn as bars"
    );
    for (k, p) in [
        (1.0, 0.5),
        (2.0, 0.375),
        (3.0, 7.0 / 64.0),
        (4.0, 15.0 / 1024.0),
    ] {
        assert!((theory_at(exact, k) - p).abs() < 1e-15, "P(C = {k})");
    }
    let sim = series(c, "fraction of the runs (simulated)");
    assert_eq!(sim.look, Look::Measured);
    let n = 4000.0;
    for (k, p) in [(1.0, 0.5), (2.0, 0.375), (3.0, 7.0 / 64.0)] {
        let pt = sim.points.iter().find(|q| q.x == k).unwrap();
        let f = pt.y.unwrap();
        let tol = 4.0 * (p * (1.0f64 - p) / n).sqrt();
        assert!((f - p).abs() <= tol, "C = {k}: {f} against {p} ± {tol}");
        let (lo, hi) = pt.ci.unwrap();
        assert!(lo < f && f < hi);
    }
}

/// Lesson 4: the line is the round trip 2 L / v between the end stations
/// (100 µs at 10 km, v = 2e8 m/s), the latest detection seen never passes
/// it and comes near it; no late or undetected collision left of 5.76 km,
/// where the round trip reaches the preamble and one slot; both at 10 km.
#[test]
fn lesson_4_charts_draw_the_round_trip_and_the_threshold() {
    let charts = charts_of(4);
    let d = charts
        .iter()
        .find(|c| c.name == "detection-vs-length")
        .unwrap();
    let rt = series(d, "round trip 2 L / v (theory)");
    line_follows(rt, |km| 2.0 * km * 1000.0 / 2e8 * 1e6);
    line_follows(
        series(d, "preamble + one slot: later is late (theory)"),
        |_| 57.6,
    );
    // The round trip is drawn in the colour of the detections it bounds.
    let csv = String::from_utf8(d.csv()).unwrap();
    let colour = |name: &str| {
        csv.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split(',').nth(7))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        colour("round trip 2 L / v (theory)"),
        colour("latest collision detection (simulated)")
    );
    assert_ne!(
        colour("preamble + one slot"),
        colour("latest collision detection (simulated)")
    );
    let latest = series(d, "latest collision detection (simulated)");
    for p in &latest.points {
        let bound = 2.0 * p.x * 1000.0 / 2e8 * 1e6;
        let y = p.y.unwrap();
        assert!(y <= bound + 1e-6, "{} km: {y} µs > {bound} µs", p.x);
        // Thousands of collisions: the latest comes within a quarter of
        // the bound (two stations starting a round trip apart, nearly).
        assert!(y >= 0.75 * bound, "{} km: {y} µs, bound {bound} µs", p.x);
    }
    let c = charts
        .iter()
        .find(|c| c.name == "late-collisions-vs-length")
        .unwrap();
    let threshold = series(
        c,
        "round trip = preamble + one slot (theory: none to the left)",
    );
    assert!(threshold.points.iter().all(|p| (p.x - 5.76).abs() < 1e-9));
    for label in [
        "late collisions (simulated)",
        "undetected collisions (simulated)",
    ] {
        let s = series(c, label);
        for p in &s.points {
            if p.x < 5.76 {
                assert_eq!(p.y, Some(0.0), "{label} at {} km", p.x);
            }
        }
        let at10 = s.points.iter().find(|p| p.x == 10.0).unwrap();
        assert!(at10.y.unwrap() > 0.0, "{label} at 10 km");
    }
}

/// Metcalfe and Boggs: A = (1 - 1/Q)^(Q-1), W = (1 - A)/A slots of
/// contention per frame, E = F / (F + preamble + gap + W slot).
fn metcalfe_boggs(q: f64, frame_bits: f64) -> f64 {
    let a = (1.0 - 1.0 / q).powf(q - 1.0);
    frame_bits / (frame_bits + 64.0 + 96.0 + (1.0 - a) / a * 512.0)
}

/// Lesson 5: the lines are S = min(ρ, E), ρ the offered load (the x axis,
/// not the attempt load G), with Metcalfe and Boggs's E for 20
/// stations (0.924 for 1518 B, 0.338 for 64 B). Below saturation the runs
/// carry the offered load (within 0.01, the lesson's own promise); with
/// 1518-byte frames the overloaded bus is within 5 % of E (the model's
/// contention is p-persistent, the runs' BEB); with 64-byte frames BEB does
/// better than the model.
#[test]
fn lesson_5_chart_draws_metcalfe_boggs_under_the_runs() {
    let charts = charts_of(5);
    let c = &charts[0];
    assert!(
        c.chart.x_label.starts_with("offered load ρ"),
        "{}",
        c.chart.x_label
    );
    for (frame, bits) in [("1518B", 1518.0 * 8.0), ("64B", 512.0)] {
        let e = metcalfe_boggs(20.0, bits);
        let line = c
            .chart
            .series
            .iter()
            .find(|s| s.label.starts_with(frame) && s.look == Look::Theory)
            .unwrap();
        assert!(
            line.label.contains(&format!("E = {e:.3}")),
            "{}",
            line.label
        );
        assert!(line.label.contains("min(ρ, E)"), "{}", line.label);
        line_follows(line, |g| g.min(e));
        let sim = series(c, &format!("{frame} (simulated)"));
        for p in &sim.points {
            let s = p.y.unwrap();
            if p.x < 0.4 {
                assert!((s - p.x).abs() <= 0.01, "{frame} at {}: {s}", p.x);
            }
            if p.x > 1.9 && frame == "1518B" {
                assert!((s - e).abs() <= 0.05 * e, "{frame} at {}: {s} vs {e}", p.x);
            }
            if p.x > 1.9 && frame == "64B" {
                assert!(s > e, "{frame} at {}: {s} vs {e}", p.x);
            }
        }
    }
    assert!((metcalfe_boggs(20.0, 12144.0) - 0.9236).abs() < 1e-4);
}

/// Lesson 8: the lines are G e^-2G, G e^(-G/f) (f = 512/520: frames of 512
/// bits in 520-bit slots) and Kleinrock and Tobagi's 1-persistent CSMA
/// (a = 0.5 µs / 51.2 µs); each simulated point lies within 4 standard
/// deviations of its line (the deviation of the successes among the
/// attempts, read back from the 95 % interval drawn). CSMA's closed form
/// is for infinitely many stations; the lesson's 200, each holding one
/// frame, stay within it (3.5 deviations above it at G = 2, the most).
/// CSMA/CD is drawn as points only, on or above CSMA's line.
#[test]
fn lesson_8_chart_draws_aloha_slotted_aloha_and_csma_under_the_runs() {
    let charts = charts_of(8);
    let c = &charts[0];
    let f = 512.0 / 520.0;
    let a = 0.5 / 51.2;
    let kt = |g: f64| {
        g * (1.0 + g + a * g * (1.0 + g + a * g / 2.0)) * (-g * (1.0 + 2.0 * a)).exp()
            / (g * (1.0 + 2.0 * a) - (1.0 - (-a * g).exp())
                + (1.0 + a * g) * (-g * (1.0 + a)).exp())
    };
    let aloha = |g: f64| g * (-2.0 * g).exp();
    let slotted = |g: f64| g * (-g / f).exp();
    line_follows(series(c, "aloha: G e^-2G (theory)"), aloha);
    line_follows(series(c, "slotted-aloha: G e^-G/f (theory)"), slotted);
    line_follows(
        series(c, "csma: 1-persistent, Kleinrock-Tobagi (theory)"),
        kt,
    );
    // The textbook peaks: 1/(2e) at G = 0.5, f/e at G = f; 1-persistent
    // CSMA near 0.53 at G near 1 for a small a.
    assert!((aloha(0.5) - 1.0 / (2.0 * std::f64::consts::E)).abs() < 1e-12);
    assert!((slotted(f) - f / std::f64::consts::E).abs() < 1e-12);
    assert!((kt(1.0) - 0.53).abs() < 0.01, "{}", kt(1.0));
    let laws: [(&str, &dyn Fn(f64) -> f64); 3] = [
        ("aloha", &aloha),
        ("slotted-aloha", &slotted),
        ("csma", &kt),
    ];
    for (name, law) in laws {
        let sim = series(c, &format!("{name} (simulated)"));
        assert_eq!(sim.points.len(), 6, "one point per offered load");
        for p in &sim.points {
            let (s, (lo, hi)) = (p.y.unwrap(), p.ci.unwrap());
            let sd = (hi - lo) / (2.0 * 1.96);
            let want = law(p.x);
            assert!(
                (s - want).abs() <= 4.0 * sd,
                "{name} at G = {}: {s} against {want} ± {}",
                p.x,
                4.0 * sd
            );
        }
    }
    // CSMA/CD is drawn as points only; aborting collisions at detection
    // keeps them on or above 1-persistent CSMA's line (never 4 deviations
    // below it), and above it by more than 4 deviations at the two highest
    // loads, where collisions are frequent.
    assert!(c
        .chart
        .series
        .iter()
        .all(|s| !(s.look == Look::Theory && s.label.starts_with("csma-cd"))));
    let cd = series(c, "csma-cd (simulated)");
    let n = cd.points.len();
    for (k, p) in cd.points.iter().enumerate() {
        let (s, (lo, hi)) = (p.y.unwrap(), p.ci.unwrap());
        let sd = (hi - lo) / (2.0 * 1.96);
        let csma = kt(p.x);
        assert!(
            s >= csma - 4.0 * sd,
            "csma-cd at G = {}: {s} below CSMA's {csma}",
            p.x
        );
        if k + 2 >= n {
            assert!(
                s > csma + 4.0 * sd,
                "csma-cd at G = {}: {s} not above {csma}",
                p.x
            );
        }
    }
}

/// Lesson 7: the line is the bus's limit, the frames sent back to back
/// (672 bit times = 67.2 µs a 64-byte frame with preamble and gap, the
/// first without a gap before it); the herd never gets ahead of it, and in
/// the end all 1000 frames are through (none is discarded at 1000).
#[test]
fn lesson_7_chart_keeps_the_herd_under_the_bus_limit() {
    let charts = charts_of(7);
    let c = &charts[0];
    let limit = |t_ms: f64| ((t_ms + 0.0096) / 0.0672).min(1000.0);
    line_follows(series(c, "back to back: the bus's limit (theory)"), limit);
    let sim = series(c, "frames through (simulated)");
    for p in &sim.points {
        let k = p.y.unwrap();
        assert!(k <= limit(p.x).floor(), "at {} ms: {k} through", p.x);
    }
    assert_eq!(sim.points.last().unwrap().y, Some(1000.0));
    assert_eq!(sim.points.first().unwrap().y, Some(0.0));
}

/// `lesson N --out` writes each chart as PNG with the CSV of what it draws.
#[test]
fn lesson_out_writes_the_chart_and_its_numbers() {
    let scratch = temp_dir("lesson-charts");
    let dir = scratch.join("lesson3");
    let o = csmacd(&["lesson", "3", "--quiet", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(dir.join("beb-race.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // The exact distribution's bars: filled with the tint of its colour
    // (#0072b2 mixed 0.6 towards white), thousands of pixels of it; a line
    // would have none.
    let img = image::load_from_memory(&png).unwrap().to_rgb8();
    let tint = img.pixels().filter(|p| p.0 == [153, 199, 224]).count();
    assert!(tint > 5000, "{tint} pixels of the bars' tint");
    let csv = std::fs::read_to_string(dir.join("beb-race.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("series,panel,x,y,ci_low,ci_high,kind,color,marker,dash")
    );
    let exact: Vec<&str> = csv.lines().filter(|l| l.contains(",theory,")).collect();
    assert!(
        exact[0].starts_with("exact P(C = c) (theory),,1,0.5,,,theory,#"),
        "{}",
        exact[0]
    );
    assert!(
        exact[1].starts_with("exact P(C = c) (theory),,2,0.375,,,theory,#"),
        "{}",
        exact[1]
    );
    assert!(csv.contains("fraction of the runs (simulated),,1,"));
}

/// A what-if (`--set`) that changes what a promise depends on: the lesson
/// exits 0 and marks that promise not applicable; every lesson does so.
#[test]
fn every_lesson_takes_a_what_if() {
    let cases: [(&str, &[&str]); 9] = [
        ("1", &["stations.0.frame=128B"]),
        ("2", &["medium.jam=48bit"]),
        ("3", &["stations.0.count=3", "replications=200"]),
        ("4", &["stations.0.count=1"]),
        (
            "5",
            &["medium.length=20km", "duration=0.2s", "warmup=0.02s"],
        ),
        ("6", &["stations.0.count=3", "duration=2s", "warmup=0.2s"]),
        ("7", &["stations.0.count=100"]),
        (
            "8",
            &["stations.0.frame=1518B", "duration=0.2s", "warmup=0.02s"],
        ),
        ("9", &["stations.0.backoff={kind=\"beb\"}"]),
    ];
    for (n, sets) in cases {
        let mut args = vec!["lesson", n, "--quiet"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = csmacd(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "lesson {n} {sets:?}: {}\n{out}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains("checked on this what-if"), "lesson {n}: {out}");
        assert!(out.contains("[n/a ]"), "lesson {n}: {out}");
        assert!(
            out.contains("not applicable after --set"),
            "lesson {n}: {out}"
        );
        assert!(!out.contains("[FAIL]"), "lesson {n}: {out}");
    }
    // Unchanged, a lesson checks its promises: all hold, none is n/a.
    let o = csmacd(&["lesson", "1", "--quiet"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("What you should see:") && !out.contains("n/a"),
        "{out}"
    );
}

fn boxes_of(seed: u64, n: usize) -> Vec<LabelBox> {
    // A fixed pseudo-random crowd of labels, many wanting the same spot.
    let mut x = seed;
    let mut next = move |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) % m) as i32
    };
    (0..n)
        .map(|_| LabelBox {
            x: next(600),
            y: next(400),
            w: 40 + next(200),
            h: 14 + next(8),
        })
        .collect()
}

/// No two placed labels share a pixel; each stays inside the area and
/// within one of its heights of where it asked to be; a label with room
/// at its spot is placed there.
#[test]
fn placed_labels_never_overlap() {
    let area = LabelBox {
        x: 0,
        y: 0,
        w: 800,
        h: 450,
    };
    for seed in 0..50 {
        let wanted = boxes_of(seed, 120);
        let placed = place_labels(&wanted, area);
        let got: Vec<(usize, LabelBox)> = placed
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.map(|b| (i, b)))
            .collect();
        assert!(got.len() >= 10, "seed {seed}: only {} placed", got.len());
        assert!(got.len() < wanted.len(), "seed {seed}: a crowd must thin");
        for (k, (i, a)) in got.iter().enumerate() {
            let w = wanted[*i];
            assert_eq!((a.x, a.w, a.h), (w.x, w.w, w.h));
            assert!((a.y - w.y).abs() <= w.h + 1, "seed {seed}: moved too far");
            assert!(a.x >= 0 && a.y >= 0 && a.x + a.w <= 800 && a.y + a.h <= 450);
            for (_, b) in &got[k + 1..] {
                assert!(!a.intersects(b), "seed {seed}: {a:?} and {b:?} overlap");
            }
        }
    }
    // Alone, a label goes where it asks.
    let one = LabelBox {
        x: 10,
        y: 10,
        w: 50,
        h: 16,
    };
    assert_eq!(place_labels(&[one], area), vec![Some(one)]);
    // Two at one spot: the second moves one height down, clear of the first.
    let two = place_labels(&[one, one], area);
    assert_eq!(two[1].unwrap().y, one.y + one.h + 1);
}

/// Time axes count in µs up to 9999 µs, then in ms, then in s: no tick
/// reads "1000000".
#[test]
fn time_axes_choose_their_unit() {
    assert_eq!(TimeUnit::for_axis(220.0).name, "µs");
    assert_eq!(TimeUnit::for_axis(30_000.0).name, "ms");
    assert_eq!(TimeUnit::for_axis(30_000.0).label(25_000.0), "25");
    assert_eq!(TimeUnit::for_axis(2e7).name, "s");
    assert_eq!(TimeUnit::for_axis(2e7).label(1.5e7), "15");
}

/// `diagram --from --until` draws a window; `--stations` chooses (lists
/// and ranges) and is checked; a scenario with more stations than a
/// diagram draws gets S0-S15 and a note saying so; the diagram says when
/// it stops short of the run.
#[test]
fn diagram_window_and_station_choice() {
    let scratch = temp_dir("diagram-window");
    let out = scratch.join("d.png");
    let out = out.to_str().unwrap();
    let o = csmacd(&[
        "diagram",
        "scenarios/two-saturated.toml",
        "--from",
        "5ms",
        "--until",
        "6ms",
        "--out",
        out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shown up to 6000 µs of a 10 s run"), "{err}");
    assert!(err.contains("a later --until shows more"), "{err}");
    let bad = csmacd(&[
        "diagram",
        "scenarios/two-saturated.toml",
        "--from",
        "6ms",
        "--until",
        "5ms",
        "--out",
        out,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--from 6ms is not before --until 5ms"));

    let herd = "scenarios/lessons/7-thundering-herd.toml";
    let o = csmacd(&["diagram", herd, "--until", "300us", "--out", out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shows S0-S15 of the 1000 stations"), "{err}");
    assert!(err.contains("--stations"), "{err}");
    let o = csmacd(&[
        "diagram",
        herd,
        "--until",
        "300us",
        "--stations",
        "0,500,998-999",
        "--out",
        out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("shows S0, S500, S998, S999 of the 1000 stations"),
        "{err}"
    );
    for (bad, says) in [
        (
            "1000",
            "station 1000 does not exist; this scenario has stations 0 to 999",
        ),
        ("7-3", "a range runs from the lower number up"),
        ("x", "`x` is not a station or a range"),
        ("0-16", "17 stations; a diagram draws at most 16"),
    ] {
        let o = csmacd(&[
            "diagram",
            herd,
            "--until",
            "300us",
            "--stations",
            bad,
            "--out",
            out,
        ]);
        assert_eq!(o.status.code(), Some(2), "--stations {bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "--stations {bad}: {err}");
    }
}

/// The diagram drawn with --from is the same run: the SVG of a window
/// names the events of that window only.
#[test]
fn diagram_from_draws_only_the_window() {
    let scratch = temp_dir("diagram-from");
    let svg = scratch.join("d.svg");
    let lesson = "scenarios/lessons/2-collision.toml";
    let o = csmacd(&[
        "diagram",
        lesson,
        "--from",
        "100us",
        "--until",
        "220us",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    // The frames received at 133.2 and 210.4 µs; the detections at 10 and
    // 13 µs are before the window.
    assert!(
        text.contains("S1 receives S0&apos;s frame at 133.2 µs"),
        "{text}"
    );
    assert!(!text.contains("detects at 13 µs"));
    assert!(text.contains("100 µs to 220 µs of a 2 ms run"));
}
