//! Lessons written as files (`csmacd lesson FILE`): the far-station lesson
//! against the numbers its text states, the format's errors (a wrong
//! `expect` fails naming the check; a malformed file names the key and its
//! line), the run queries and `--ask`.

use super::common::{bin, repo, temp_dir};
use csmacd::teach::lessons::{self, file, runner};
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

const FAR: &str = "scenarios/lessons/14-far-station.lesson.toml";

fn lesson(args: &[&str]) -> Output {
    bin()
        .current_dir(repo())
        .arg("lesson")
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// A copy of the far-station lesson in `dir`, its lesson file changed by
/// `edit`; returns the lesson file's path.
fn far_copy(dir: &Path, edit: impl Fn(&str) -> String) -> std::path::PathBuf {
    for name in ["14-far-station.md", "14-far-station.toml"] {
        std::fs::copy(repo().join("scenarios/lessons").join(name), dir.join(name)).unwrap();
    }
    let original = std::fs::read_to_string(repo().join(FAR)).unwrap();
    let path = dir.join("far.lesson.toml");
    std::fs::write(&path, edit(&original)).unwrap();
    path
}

#[test]
fn the_far_station_lesson_shows_its_numbers() {
    let l = file::load(&repo().join(FAR)).unwrap_or_else(|e| panic!("{e}"));
    let out = runner::run(&l, &[]).unwrap();
    for c in &out.checks {
        assert!(c.ok, "{}: expected {}, seen {}", c.what, c.expected, c.seen);
    }
    assert_eq!(out.checks.len(), 12);
    // The stated instants: 100 m at 2e8 m/s; the end of a 64-bit preamble
    // at 10 Mb/s; 2400 m to the nearer neighbour.
    let values: Vec<f64> = out
        .answers
        .iter()
        .map(|a| *a.value.as_ref().unwrap())
        .collect();
    assert_eq!(values[..3], [0.5, 6.4, 12.0]);
    // The share of races won at the first retry is a frequency of 400
    // races with p = 3/8 exactly (one of three fair draws is 0): within
    // 4 standard errors of it.
    let se = (0.375f64 * 0.625 / 400.0).sqrt();
    assert!((values[3] - 0.375).abs() < 4.0 * se, "{}", values[3]);
    // The built-in copy is the same lesson.
    let builtin = lessons::find_file(14).unwrap().load().unwrap();
    assert_eq!(builtin.title, l.title);
    assert_eq!(builtin.text, l.text);
    // And the command passes it, from the file and by its number.
    for arg in [FAR, "14"] {
        let o = lesson(&[arg, "--quiet"]);
        assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
        let s = text(&o.stdout);
        assert_eq!(s.matches("[ok  ]").count(), 12, "{s}");
        assert!(s.contains("0.5       S0   collision"), "{s}");
        // The answers read as sentences: a question, then what the run says.
        assert!(
            s.contains(
                "  1. When does S1, 100 m from S0, detect the collision? The run says 0.5 µs"
            ),
            "{s}"
        );
        assert!(!s.contains("?:"), "{s}");
    }
}

#[test]
fn every_shipped_lesson_file_reads() {
    let dir = repo().join("scenarios/lessons");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if file::is_lesson_file(&e.path()) {
            file::load(&e.path()).unwrap_or_else(|err| panic!("{err}"));
            n += 1;
        }
    }
    assert!(n >= 1);
    // The listing shows the built-in lessons, 14 among them, aligned.
    let o = lesson(&[]);
    let s = text(&o.stdout);
    assert!(s.contains("\n   1  One frame on an idle bus"), "{s}");
    assert!(s.contains("\n  14  Three stations, one far away"), "{s}");
    let o = lesson(&["scenarios/lessons"]);
    assert!(text(&o.stdout).contains("14-far-station.lesson.toml"));
}

#[test]
fn a_wrong_expect_fails_with_exit_1_naming_the_check() {
    let dir = temp_dir("lesson-wrong-expect");
    let path = far_copy(&dir, |s| s.replacen("expect = 0.5\n", "expect = 0.7\n", 1));
    let o = lesson(&[path.to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(
        s.contains(
            "[FAIL] S0 detects S1's first bit: 100 m at 2e8 m/s: expected 0.7 µs, seen 0.5 µs"
        ),
        "{s}"
    );
    assert_eq!(s.matches("[FAIL]").count(), 1, "{s}");
    assert!(text(&o.stderr).contains("1 of the lesson's numbers did not show"));
    // On a what-if the same check is n/a, and the exit code 0.
    let o = lesson(&[
        path.to_str().unwrap(),
        "--quiet",
        "--set",
        "medium.speed=1e8m/s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("[n/a ] S0 detects S1's first bit"));
}

#[test]
fn a_malformed_lesson_file_names_the_key_and_its_line() {
    let dir = temp_dir("lesson-malformed");
    let line_of = |s: &str, needle: &str| s.lines().position(|l| l.contains(needle)).unwrap() + 1;
    // (what to change, into what, the key named, the line's text, words)
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        (
            "expect = 6.4\n",
            "expect = true\n",
            "check.2.expect",
            "expect = true",
            "expected a number, found a boolean",
        ),
        // A text is an expression of the run: one with a unit in it is not.
        (
            "expect = 6.4\n",
            "expect = \"6.4 µs\"\n",
            "check.2.expect",
            "expect = \"6.4 µs\"",
            "expected an operator or the end, found `µs`",
        ),
        (
            "tolerance = 0.05\n",
            "tolerence = 0.05\n",
            "question.0.tolerence",
            "tolerence",
            "did you mean `tolerance`",
        ),
        (
            "value = 'event_time(\"jam\", 0, 1)'",
            "value = 'event_time(\"jam\", 0, 1'",
            "check.2.value",
            "value = 'event_time(\"jam\", 0, 1'",
            "column",
        ),
        (
            "value = 'event_time(\"jam\", 0, 1)'",
            "value = 'event_time(\"jamm\", 0, 1)'",
            "check.2.value",
            "jamm",
            "did you mean `jam`",
        ),
        (
            "value = 'event_count(\"delivered\", -1)'",
            "value = 'metric(\"deliverd\")'",
            "check.9.value",
            "deliverd",
            "did you mean `delivered`",
        ),
        (
            "text = \"14-far-station.md\"\n",
            "text = 14\n",
            "text",
            "text = 14",
            "expected a string",
        ),
        (
            "expect = 12\n",
            "within = [13, 12]\n",
            "check.5.within",
            "within = [13, 12]",
            "lo <= hi",
        ),
    ];
    for (from, to, key, line_text, words) in cases {
        let path = far_copy(&dir, |s| {
            assert!(s.contains(from), "{from}");
            s.replacen(from, to, 1)
        });
        let written = std::fs::read_to_string(&path).unwrap();
        let line = line_of(&written, line_text);
        let o = lesson(&[path.to_str().unwrap(), "--quiet"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{to}: {err}");
        let want = format!("{}:{line}: `{key}`", path.display());
        assert!(err.contains(&want), "{to}: wanted {want} in {err}");
        assert!(err.contains(words), "{to}: wanted {words} in {err}");
        assert!(o.stdout.is_empty(), "nothing runs: {}", text(&o.stdout));
    }
    // A bad --set is named by its flag and the key at fault.
    let o = lesson(&[FAR, "--quiet", "--set", "medium.length=-3km"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--set medium.length=-3km: `medium.length`: must be between"),
        "{}",
        text(&o.stderr)
    );
    // A file that is no lesson file is told apart from a scenario.
    let o = lesson(&["scenarios/lessons/14-far-station.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("ends in .lesson.toml"));
}

#[test]
fn ask_grades_each_answer_against_the_run() {
    let mut child = bin()
        .current_dir(repo())
        .args(["lesson", FAR, "--quiet", "--ask"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("0.5 µs\n9.6\n12\n0.4\n".as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("✓ 1. When does S1, 100 m from S0, detect the collision? You said 0.5 µs, the run says 0.5 µs"), "{s}");
    assert!(
        s.contains("✗ 2. When does S0 start its jam? You said 9.6, the run says 6.4 µs"),
        "{s}"
    );
    assert!(s.contains("✓ 3."), "{s}");
    assert!(s.contains("✓ 4."), "{s}");
    assert!(s.contains("3 of 4 right"), "{s}");
    assert!(text(&o.stderr).contains("Predict first"));
}

/// A lesson written whole in one file: inline text and scenario, a
/// variant, metric queries and a range.
const INLINE: &str = r#"
title = "One frame, two bus lengths"
text = """
# One frame

S0 sends one 64-byte frame to S1 on an idle bus.
"""
window = "80us"

[scenario]
name = "one frame"
duration = "1ms"
replications = 3
[scenario.medium]
bit_rate = "10Mbps"
length = "2000m"
speed = "2e8m/s"
[[scenario.stations]]
count = 1
positions = ["0m"]
traffic = { kind = "burst", frames = 1, at = "0us" }
frame = "64B"
destination = 1
[[scenario.stations]]
count = 1
positions = ["2000m"]
traffic = { kind = "periodic", interval = "1s", phase = "1s" }
frame = "64B"

[[variant]]
name = "short"
set = { "stations.1.positions" = ["200m"] }

[[question]]
ask = "When is the frame whole at S1?"
answer = 'event_time("delivered", 1, 1)'
unit = "µs"
rel_tolerance = 0.02

[[check]]
what = "sending takes preamble and frame"
value = 'event_field("tx-start", 0, 1, "end_us")'
expect = 57.6
unit = "µs"

[[check]]
what = "whole at S1 after the propagation delay"
value = 'event_time("delivered", 1, 1) - 57.6 - prop_us(0, 1)'
expect = 0
tolerance = 1e-9

[[check]]
what = "nearer on the short bus"
value = 'event_time("delivered", 1, 1)'
variant = "short"
expect = 58.6
tolerance = 1e-9

[[check]]
what = "one frame delivered in every run"
value = 'metric("delivered")'
within = [1, 1]

[[check]]
what = "and by group 0"
value = 'metric("delivered", 0)'
expect = 1

[[check]]
what = "no collision"
value = 'event_count("collision", -1) + metric("collisions")'
expect = 0
per_replication = true
"#;

#[test]
fn an_inline_lesson_with_a_variant_and_metrics() {
    let l = file::parse("inline.lesson.toml", INLINE, &file::Origin::Dir(".".into()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(l.text.starts_with("# One frame"));
    let out = runner::run(&l, &[]).unwrap();
    for c in &out.checks {
        assert!(c.ok, "{}: expected {}, seen {}", c.what, c.expected, c.seen);
    }
    let a = &out.answers[0];
    assert_eq!(a.value, Ok(67.6));
    assert_eq!(a.grade("67"), Some(true));
    assert_eq!(a.grade("66"), Some(false));
    assert_eq!(a.grade("67.6 µs"), Some(true));
    assert_eq!(out.diagram_until, Some(80_000_000));
    // A variant that breaks the scenario is named by its key and line.
    let bad = INLINE.replace("[\"200m\"]", "[\"2000km\"]");
    let e = file::parse("inline.lesson.toml", &bad, &file::Origin::Dir(".".into()))
        .unwrap_err()
        .to_string();
    let line = bad.lines().position(|l| l.contains("2000km")).unwrap() + 1;
    assert!(
        e.starts_with(&format!("inline.lesson.toml:{line}: `variant.0.set`")),
        "{e}"
    );
    // A key of the inline scenario is found at its line too.
    let bad = INLINE.replace(
        "frame = \"64B\"\ndestination",
        "frame = \"6B\"\ndestination",
    );
    let e = file::parse("inline.lesson.toml", &bad, &file::Origin::Dir(".".into()))
        .unwrap_err()
        .to_string();
    let line = bad.lines().position(|l| l.contains("\"6B\"")).unwrap() + 1;
    assert!(
        e.starts_with(&format!(
            "inline.lesson.toml:{line}: `scenario.stations.0.frame`"
        )),
        "{e}"
    );
}

#[test]
fn the_worked_example_in_the_docs_is_a_lesson_file() {
    let doc = std::fs::read_to_string(repo().join("docs/teaching.md")).unwrap();
    let at = doc.find("### A worked example").unwrap();
    let body = &doc[at..];
    let start = body.find("```toml\n").unwrap() + "```toml\n".len();
    let toml = &body[start..start + body[start..].find("```").unwrap()];
    let l = file::parse(
        "docs/teaching.md",
        toml,
        &file::Origin::Dir(repo().join("scenarios/lessons")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = runner::run(&l, &[]).unwrap();
    assert!(out.checks.iter().all(|c| c.ok), "{:?}", out.checks);
}

#[test]
fn views_end_one_slot_after_the_first_frames_are_decided() {
    use csmacd::teach::trace::default_window;
    let us = 1_000_000u64;
    // (scenario, the last first frame sent whole, in µs, the window)
    for (file, last_us, window_us) in [
        // S0's frame ends at 57.6 µs; S1 and S2 only listen.
        ("1-one-frame.toml", 57.6, 109),
        // Both frames, after two collisions: S1's ends at 200.4 µs.
        ("2-collision.toml", 200.4, 252),
        // The far station: the third frame ends at 314.1 µs.
        ("14-far-station.toml", 314.1, 366),
    ] {
        let sc = super::common::scenario(
            &std::fs::read_to_string(repo().join("scenarios/lessons").join(file)).unwrap(),
        );
        let w = default_window(&sc);
        assert_eq!(w, window_us * us, "{file}");
        // One 51.2 µs slot after the last first frame, rounded up to a µs.
        assert!((last_us + 51.2) <= window_us as f64 && (last_us + 51.2) > window_us as f64 - 1.0);
    }
    // Nothing sent: 40 slots, never past the run.
    let quiet = super::common::scenario(
        "duration = \"1ms\"\n[medium]\nbit_rate = \"10Mbps\"\n[[stations]]\ncount = 2\n\
         frame = \"64B\"\ntraffic = { kind = \"periodic\", interval = \"1s\", phase = \"1s\" }\n",
    );
    assert_eq!(default_window(&quiet), 1000 * us);
    // The page without --until shows that window.
    let dir = temp_dir("default-window");
    let page = dir.join("v.html");
    let o = bin()
        .current_dir(repo())
        .args(["view", "scenarios/lessons/2-collision.toml", "--out"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(
        text(&o.stderr).contains("0 to 252 µs"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn lesson_10_view_says_why_it_writes_no_page() {
    let dir = temp_dir("lesson10-view");
    let o = lesson(&["10", "--quiet", "--view", "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no bus to animate, so no page was written"));
    assert!(!dir.join("view.html").exists());
    // Its numbers are still checked.
    assert!(!text(&o.stdout).contains("[FAIL]"));
}

/// A scenario small enough to sweep in a test: six stations, 50 ms.
const GRID_SCENARIO: &str = r#"name = "grid"
seed = 7
duration = "50ms"
warmup = "5ms"
[medium]
length = "500m"
[[stations]]
count = 6
traffic = { kind = "poisson", load = 0.3 }
frame = "512B"
backoff = { kind = "beb" }
"#;

/// A lesson of `[variants]`, `[table]`, checks on variants and a chart.
const GRID_LESSON: &str = r#"
title = "A grid"
text = "Load against throughput."
scenario = "grid.toml"

[variants]
axes = { "stations.0.frame" = [{ label = "short", value = "64B" }, "512B"], "stations.0.traffic.load" = [0.2, 0.9] }

[table]
[[table.column]]
title = "frame"
label = "stations.0.frame"
[[table.column]]
title = "variant"
label = "variant"
[[table.column]]
title = "throughput"
value = 'metric("throughput")'
digits = 6

[[check]]
what = "below saturation every frame is carried ({=metric(\"offered_load\");2} offered)"
value = 'metric("throughput")'
expect = 'metric("offered_load")'
tolerance = 0.02
variant = ["short, 0.2", "512B, 0.2"]

[[check]]
what = "the 512-byte frames carry more at the high load"
variant = "512B, 0.9"
value = 'metric("throughput")'
above = 'metric_of("short, 0.9", "throughput")'

[[check]]
what = "never shown: the scenario has 6 stations"
when = 'stations > 6'
value = '1'
expect = 0

[[chart]]
name = "grid-chart"
title = "{=stations;0} stations"
series = "stations.0.frame"
x = 'metric("offered_load")'
[[chart.points]]
label = "{series} (simulated)"
y = 'metric("throughput")'
[[chart.theory]]
label = "S = ρ (theory)"
y = 'x'
x_range = [0, 1]
steps = 4
[[chart.theory]]
label = "{series}: half the frame's bits (theory)"
series = "each"
y = 'frame_bits / 2'
steps = 2
[[chart.theory]]
label = "at one"
at_x = '1'
"#;

/// A `[variants]` grid runs each point with the seed a sweep's point of
/// the same values has: the lesson's table shows the throughput `csmacd
/// sweep` writes in summary.csv, to the digit; labelled values name the
/// variants; a check per listed variant, `when` leaving one out, `{=...}`
/// numbers in the sentences; the chart's series, theory per series and a
/// vertical line; the same output on one thread and on several.
#[test]
fn a_variants_grid_runs_as_a_sweep_with_a_table_checks_and_a_chart() {
    let dir = temp_dir("lesson-grid");
    std::fs::write(dir.join("grid.toml"), GRID_SCENARIO).unwrap();
    let path = dir.join("grid.lesson.toml");
    std::fs::write(&path, GRID_LESSON).unwrap();
    let l = file::load(&path).unwrap();
    let names: Vec<&str> = l.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["short, 0.2", "short, 0.9", "512B, 0.2", "512B, 0.9"]
    );
    let out = runner::run(&l, &[]).unwrap();
    assert_eq!(out.table[0], ["frame", "variant", "throughput"]);
    assert_eq!(out.table.len(), 5);
    assert_eq!(out.table[1][..2], ["short", "short, 0.2"]);
    // The sweep of the same grid.
    let sweep = dir.join("grid-sweep.toml");
    std::fs::write(
        &sweep,
        format!(
            "{GRID_SCENARIO}\n[sweep]\n\"stations.0.frame\" = [{{ label = \"short\", value = \
             \"64B\" }}, \"512B\"]\n\"stations.0.traffic.load\" = [0.2, 0.9]\n"
        ),
    )
    .unwrap();
    let results = dir.join("results");
    let o = bin()
        .args([
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(results.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (frame, load, s) = (
        col("stations.0.frame"),
        col("stations.0.traffic.load"),
        col("throughput"),
    );
    let mut seen = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let name = format!("{}, {}", cells[frame], cells[load]);
        let row = out.table.iter().find(|r| r[1] == name).unwrap();
        let sweep_s: f64 = cells[s].parse().unwrap();
        assert_eq!(row[2], format!("{sweep_s:.6}"), "{name}");
        seen += 1;
    }
    assert_eq!(seen, 4);
    // Checks: one per listed variant, named; the one `when` excludes is
    // not shown.
    let whats: Vec<&str> = out.checks.iter().map(|c| c.what.as_str()).collect();
    assert_eq!(whats.len(), 3, "{whats:?}");
    assert!(whats[0].starts_with("short, 0.2: below saturation every frame is carried (0."));
    assert!(whats[0].ends_with(" offered)"), "{}", whats[0]);
    assert!(whats[2].starts_with("512B, 0.9: the 512-byte frames carry more"));
    assert!(out.checks.iter().all(|c| c.ok), "{:?}", out.checks);
    // The chart.
    let c = &out.charts[0];
    assert_eq!(c.name, "grid-chart");
    assert_eq!(c.chart.title, "6 stations");
    let sim = c.series("short (simulated)").unwrap();
    assert_eq!(sim.points.len(), 2);
    let line = c.series("S = ρ (theory)").unwrap();
    let xs: Vec<f64> = line.points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [0.0, 0.25, 0.5, 0.75, 1.0]);
    assert!(line.points.iter().all(|p| p.y == Some(p.x)));
    for (series, bits) in [("short", 512.0), ("512B", 4096.0)] {
        let t = c
            .series(&format!("{series}: half the frame's bits (theory)"))
            .unwrap();
        assert!(t.points.iter().all(|p| p.y == Some(bits / 2.0)), "{series}");
    }
    let v = c.series("at one").unwrap();
    assert!(v.points.iter().all(|p| p.x == 1.0));
    // The same bytes on one thread and on four.
    let run = |threads: &str| {
        bin()
            .env("RAYON_NUM_THREADS", threads)
            .args(["lesson", path.to_str().unwrap(), "--quiet"])
            .output()
            .unwrap()
    };
    let (one, four) = (run("1"), run("4"));
    assert!(one.status.success(), "{}", text(&one.stderr));
    assert_eq!(one.stdout, four.stdout);
    let printed = text(&one.stdout);
    let header = printed.lines().find(|l| l.starts_with("  frame")).unwrap();
    assert!(
        header.contains("variant") && header.ends_with("throughput"),
        "{printed}"
    );
}

/// The new keys' mistakes, each named with its key and line.
#[test]
fn a_variants_table_or_chart_mistake_names_the_key_and_its_line() {
    let dir = temp_dir("lesson-grid-errors");
    std::fs::write(dir.join("grid.toml"), GRID_SCENARIO).unwrap();
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "label = \"stations.0.frame\"\n[[table.column]]\ntitle = \"variant\"",
            "label = \"stations.0.fram\"\n[[table.column]]\ntitle = \"variant\"",
            "table.column.0.label",
            "is not \"variant\" nor an axis of [variants]",
        ),
        (
            "variant = [\"short, 0.2\", \"512B, 0.2\"]",
            "variant = [\"short, 0.2\", \"long, 0.2\"]",
            "check.0.variant.1",
            "no variant is named \"long, 0.2\"",
        ),
        (
            "above = 'metric_of(\"short, 0.9\", \"throughput\")'",
            "above = 'metric_of(\"short, 9\", \"throughput\")'",
            "check.1.within",
            "is not a variant of this lesson",
        ),
        (
            "series = \"stations.0.frame\"\nx =",
            "series = \"medium.length\"\nx =",
            "chart.0.series",
            "is not an axis of [variants]",
        ),
        (
            "when = 'stations > 6'",
            "when = 'stations > 6'\nsigmas = 4",
            "check.2.sigmas",
            "add per_replication = true",
        ),
        (
            "\"stations.0.traffic.load\" = [0.2, 0.9] }",
            "\"stations.0.traffic.load\" = [0.2, 0.9], \"stations.0.frame.x\" = [1] }",
            "variants.axes.stations.0.frame.x",
            "also sets",
        ),
        (
            "title = \"{=stations;0} stations\"",
            "title = \"{=station;0} stations\"",
            "chart.0.title",
            "did you mean `stations`",
        ),
    ];
    for (from, to, key, words) in cases {
        assert!(GRID_LESSON.contains(from), "{from}");
        let written = GRID_LESSON.replacen(from, to, 1);
        let path = dir.join("grid.lesson.toml");
        std::fs::write(&path, &written).unwrap();
        let o = lesson(&[path.to_str().unwrap(), "--quiet"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{to}: {err}");
        assert!(
            err.contains(&format!("`{key}`")),
            "{to}: wanted `{key}` in {err}"
        );
        assert!(err.contains(words), "{to}: wanted {words} in {err}");
        assert!(err.contains("grid.lesson.toml:"), "{err}");
    }
}

/// `csmacd validate` checks a lesson file as `csmacd lesson` reads it: the
/// shipped ones are valid (with their scenarios' warnings, lesson 4's
/// over-long bus); a malformed one names its key and line (exit 2).
#[test]
fn validate_checks_a_lesson_file() {
    let validate = |args: &[&str]| {
        bin()
            .current_dir(repo())
            .arg("validate")
            .args(args)
            .output()
            .unwrap()
    };
    let o = validate(&[FAR, "scenarios/lessons/4-minimum-frame.lesson.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "{FAR}: ok (lesson \"Three stations, one far away: who wins the backoff race?\": \
             4 questions, 12 checks, 0 variants; scenario \"lesson 14: three stations, one \
             far away\": 3 stations, 2ms simulated)"
        )),
        "{out}"
    );
    assert!(!out.contains("unknown key"), "{out}");
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: scenarios/lessons/4-minimum-frame.toml:14: `medium.length`"),
        "{err}"
    );
    let dir = temp_dir("validate-lesson");
    let bad = far_copy(&dir, |t| t.replace("expect = 6.4", "expect = \"6.4 µs\""));
    let o = validate(&[bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("far.lesson.toml:"), "{err}");
    assert!(err.contains("`check.2.expect`"), "{err}");
    assert!(err.contains("1 of 1 files invalid"), "{err}");
}

/// A lesson file without `window` shows what `csmacd view` would: one slot
/// after the first frames are decided, at most 40 slots. Lesson 9's
/// stations, without jitter, discard their frames only at 314.8 ms.
#[test]
fn a_lesson_file_without_window_shows_at_most_40_slots() {
    let l = file::parse(
        "jitter.lesson.toml",
        "title = \"t\"\ntext = \"x\"\nscenario = \"9-jitter.toml\"\n",
        &file::Origin::Dir(repo().join("scenarios/lessons")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = runner::run(&l, &[]).unwrap();
    let slot_ps = 51_200_000;
    assert_eq!(out.diagram_until, Some(40 * slot_ps));
    assert!(out.rows.iter().all(|r| r.t < 40 * slot_ps));
    assert!(!out.rows.is_empty());
}

/// "Never" (an event that does not happen, infinitely late) is met only by
/// never: a check expecting it fails on a time.
#[test]
fn a_check_expecting_never_fails_on_a_time() {
    let dir = temp_dir("expect-never");
    let path = far_copy(&dir, |t| {
        t.replacen(
            "value = 'event_time(\"jam\", 0, 1)'\nexpect = 6.4",
            "value = 'event_time(\"jam\", 0, 1)'\nexpect = '1 / 0'",
            1,
        )
    });
    let l = file::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = runner::run(&l, &[]).unwrap();
    let c = out
        .checks
        .iter()
        .find(|c| c.what.starts_with("S0 jams from the end"))
        .unwrap();
    assert_eq!((c.expected.as_str(), c.ok), ("never", false), "{c:?}");
    assert_eq!(c.seen, "6.4 µs");
}

/// `pivot` turns an axis's values into columns, a row per value of the
/// other axis; a `text` column holds numbers of each row's runs.
#[test]
fn a_pivoted_table_has_a_column_per_value_of_an_axis() {
    let dir = temp_dir("lesson-pivot");
    std::fs::write(dir.join("grid.toml"), GRID_SCENARIO).unwrap();
    let start = GRID_LESSON.find("[table]").unwrap();
    let end = GRID_LESSON.find("[[check]]").unwrap();
    let table = r#"[table]
pivot = "stations.0.frame"
[[table.column]]
title = "load"
label = "stations.0.traffic.load"
[[table.column]]
title = "S"
text = 'S {=metric("throughput");3} of {=metric("offered_load");2}'

"#;
    let written = format!("{}{table}{}", &GRID_LESSON[..start], &GRID_LESSON[end..]);
    let path = dir.join("pivot.lesson.toml");
    std::fs::write(&path, written).unwrap();
    let l = file::load(&path).unwrap();
    let out = runner::run(&l, &[]).unwrap();
    assert_eq!(out.table[0], ["load", "short", "512B"]);
    assert_eq!(out.table.len(), 3, "{:?}", out.table);
    assert_eq!(out.table[1][0], "0.2");
    assert_eq!(out.table[2][0], "0.9");
    // Each cell is its own variant's numbers: the throughput the plain
    // table of the same grid shows.
    std::fs::write(dir.join("plain.lesson.toml"), GRID_LESSON).unwrap();
    let plain = runner::run(&file::load(&dir.join("plain.lesson.toml")).unwrap(), &[]).unwrap();
    for (r, load) in [(1, "0.2"), (2, "0.9")] {
        for (c, frame) in [(1, "short"), (2, "512B")] {
            let name = format!("{frame}, {load}");
            let row = plain.table.iter().find(|row| row[1] == name).unwrap();
            let s: f64 = row[2].parse().unwrap();
            let want = format!("S {s:.3} of ");
            assert!(
                out.table[r][c].starts_with(&want),
                "{name}: {} against {want}",
                out.table[r][c]
            );
        }
    }
    assert_ne!(out.table[2][1], out.table[2][2]);
}
