//! Warnings about valid scenarios: late and undetected collisions, overload,
//! one replication; the offered load as information; `validate --strict`;
//! and the shipped scenarios, which draw a warning only where their
//! comment says it is intended.

use crate::common::{bin, scenario, scenario_files, temp_dir};
use csmacd::advice::Share;
use csmacd::sweep::{self, checks};

fn kinds(text: &str) -> Vec<&'static str> {
    scenario(text).warnings().iter().map(|w| w.kind).collect()
}

const FAST_LONG_BUS: &str = "duration = \"10ms\"\n[medium]\nbit_rate = \"100Mbps\"\nlength = \"2500m\"\n\n[[stations]]\ncount = 2\nframe = \"1518B\"\ntraffic = { kind = \"saturated\" }\n";

const GOOD: &str = "duration = \"10ms\"\nreplications = 3\n\n[[stations]]\ncount = 4\nframe = \"1518B\"\ntraffic = { kind = \"poisson\", load = 0.4 }\n";

#[test]
fn a_bus_too_long_for_its_slot_warns_of_late_collisions_with_the_numbers() {
    let sc = scenario(FAST_LONG_BUS);
    let w = sc.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, "late-collisions");
    assert_eq!(w[0].key, "medium.length");
    let m = &w[0].message;
    for words in [
        "25 µs, 2500 bit times",
        "2500 m apart",
        "0.32 µs, 32 bit times",
        "25.32 µs (2532 bit times)",
        "slot (5.12 µs, 512 bit times)",
        "later than the preamble and the first slot (576 bit times): such collisions are late",
        "at most 480 m",
        "slot = \"2532bit\"",
    ] {
        assert!(m.contains(words), "`{words}` missing from {m}");
    }
    // The warning is true: the run shows late collisions.
    let r = crate::common::run(&sc, 1);
    assert!(r.metrics.get("late_collisions") > 0.0);
    // Following the advice removes it.
    let shorter = FAST_LONG_BUS.replace("2500m", "480m");
    assert!(
        kinds(&shorter).is_empty(),
        "{:?}",
        scenario(&shorter).warnings()
    );
    let slot = FAST_LONG_BUS.replace("length", "slot = \"2532bit\"\nlength");
    assert!(kinds(&slot).is_empty());
}

#[test]
fn outside_the_rule_but_not_late_says_so() {
    // 10 Mb/s, 5000 m: round trip 500 + jam 32 > 512 bit times, but every
    // collision is detected within preamble + slot (576 bit times).
    let text = FAST_LONG_BUS
        .replace("100Mbps", "10Mbps")
        .replace("2500m", "5000m");
    let sc = scenario(&text);
    let w = sc.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].message.contains("outside 802.3's rule"),
        "{}",
        w[0].message
    );
    assert!(w[0].message.contains("at most 4800 m"), "{}", w[0].message);
    assert!(
        w[0].message.contains("none can be late"),
        "{}",
        w[0].message
    );
    // True: a saturated run there shows none.
    let r = crate::common::run(&sc, 1);
    assert!(r.metrics.get("collisions") > 0.0);
    assert_eq!(r.metrics.get("late_collisions"), 0.0);
    // Within a third of a gap below preamble + slot (5500 m: a round trip
    // of 55 µs against 57.6 µs), only a start in the last third of a gap
    // can make one late: the warning says so, and that a run may show none.
    let grey = scenario(&text.replace("5000m", "5500m"));
    let m = &grey.warnings()[0].message;
    assert!(
        m.contains(
            "only such collisions, rare, can be late (late_collisions), and a run may show none"
        ),
        "{m}"
    );
    // Within the rule: 4800 m (round trip 480 + jam 32 = 512).
    assert!(kinds(&text.replace("5000m", "4800m")).is_empty());
}

#[test]
fn frames_shorter_than_the_round_trip_warn_of_undetected_collisions() {
    let text = "duration = \"10ms\"\nnonstandard_frames = true\n[medium]\nlength = \"2500m\"\n\n[[stations]]\nname = \"short\"\ncount = 2\nframe = \"20B\"\ntraffic = { kind = \"saturated\" }\n";
    let w = scenario(text).warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, "undetected-collisions");
    assert_eq!(w[0].key, "stations.0.frame");
    let m = &w[0].message;
    for words in [
        "group short",
        "20 B (160 bit times, less than a slot of 512 bit times",
        "22.4 µs (224 bit times) with the preamble",
        "25 µs, 250 bit times",
        "collisions will go undetected",
        "at least 24 B",
        "at most 2240 m",
    ] {
        assert!(m.contains(words), "`{words}` missing from {m}");
    }
    let r = crate::common::run(&scenario(text), 1);
    assert!(r.metrics.get("undetected_collisions") > 0.0);
    // Frames shorter than the slot on a bus short enough: nothing is missed.
    assert!(kinds(&text.replace("20B", "40B")).is_empty());
    // Without collision detection there is nothing to miss or detect late.
    let aloha = text.replace("[medium]", "[medium]\naccess = \"aloha\"");
    assert!(kinds(&aloha).is_empty());
    // One station alone cannot collide.
    assert!(kinds(&text.replace("count = 2", "count = 1")).is_empty());
}

#[test]
fn explicit_positions_set_the_worst_round_trip() {
    let text = "duration = \"10ms\"\n[medium]\nbit_rate = \"100Mbps\"\nlength = \"2500m\"\n\n[[stations]]\ncount = 2\npositions = [\"0m\", \"100m\"]\nframe = \"1518B\"\ntraffic = { kind = \"saturated\" }\n";
    assert!(kinds(text).is_empty());
    let far = text.replace("\"100m\"", "\"2000m\"");
    let w = scenario(&far).warnings();
    assert!(w[0].message.contains("2000 m apart"), "{}", w[0].message);
}

#[test]
fn offered_load_per_group_and_overload() {
    let two = "duration = \"10ms\"\n\n[[stations]]\ncount = 4\nframe = \"1518B\"\ntraffic = { kind = \"poisson\", load = 0.49 }\n\n[[stations]]\nname = \"aggressive\"\ncount = 4\nframe = \"1518B\"\ntraffic = { kind = \"poisson\", load = 0.49 }\n";
    let sc = scenario(two);
    assert_eq!(
        sc.offered_load().to_string(),
        "offered load: beb 0.49, aggressive 0.49, total 0.98 of the bit rate"
    );
    assert!(sc.warnings().is_empty());
    let over = two.replace("0.49", "0.6");
    let w = scenario(&over).warnings();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, "overload");
    assert!(
        w[0].message.contains("totals 1.2 of the bit rate"),
        "{}",
        w[0].message
    );
    // Rates, intervals and on-off sources count by their long-run mean.
    let kinds_of_load = "duration = \"10ms\"\n\n[[stations]]\ncount = 2\nframe = \"1250B\"\ntraffic = { kind = \"periodic\", interval = \"10ms\" }\n\n[[stations]]\ncount = 1\nframe = \"1250B\"\ntraffic = { kind = \"on-off\", load = 0.3, mean_on = \"10ms\", mean_off = \"30ms\" }\n\n[[stations]]\ncount = 5\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";
    let load = scenario(kinds_of_load).offered_load();
    for (g, expected) in [(0, 0.2), (1, 0.3)] {
        match load.groups[g].1 {
            Share::Fraction(f) => assert!((f - expected).abs() < 1e-9, "{f}"),
            s => panic!("{s:?}"),
        }
    }
    assert_eq!(load.total(), Share::Saturated);
    assert!(
        load.to_string().ends_with("saturated, total saturated"),
        "{load}"
    );
}

fn validate(args: &[&std::path::Path], strict: bool) -> std::process::Output {
    let mut c = bin();
    c.arg("validate");
    if strict {
        c.arg("--strict");
    }
    c.args(args).output().unwrap()
}

#[test]
fn validate_prints_warnings_and_strict_fails_on_them() {
    let dir = temp_dir("warn");
    let bad = dir.join("fast.toml");
    std::fs::write(&bad, FAST_LONG_BUS).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, GOOD).unwrap();

    let out = validate(&[&bad, &good], false);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: ")
            && err.contains("fast.toml:4: `medium.length`: the worst round trip"),
        "{err}"
    );
    assert!(text.contains("fast.toml: ok"), "{text}");
    assert!(text.contains("  offered load: beb saturated"), "{text}");
    assert!(
        text.contains("  offered load: beb 0.4 of the bit rate"),
        "{text}"
    );

    let out = validate(&[&bad, &good], true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("1 warning in 1 of 2 files"), "{err}");

    let out = validate(&[&good], true);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sweep_tells_each_warning_once_at_its_axis() {
    let text = "duration = \"10ms\"\nreplications = 2\n\n[[stations]]\ncount = 2\nframe = \"512B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n\n[sweep]\n\"stations.0.count\" = [2, 4]\n\"stations.0.traffic.load\" = [0.5, 1.1, 1.5]\n";
    let plan = sweep::from_str("s.toml", "s", text, None).unwrap();
    let w = checks::warnings(&plan, "s.toml", text);
    assert_eq!(w.len(), 1, "{w:?}");
    let line = w[0].to_string();
    assert!(
        line.starts_with("s.toml:11: `stations`: the offered load totals 1.1"),
        "{line}"
    );
    assert!(
        line.ends_with("(at 4 of 6 sweep points; first: point 1, stations.0.count=2, stations.0.traffic.load=1.1)"),
        "{line}"
    );
    assert_eq!(
        checks::load_summary(&plan).unwrap(),
        "offered load over the 6 points: total 0.5 to 1.5 of the bit rate"
    );
    assert!(checks::replications_warning(&plan, "s.toml", text).is_none());
    // Points whose groups differ in name: the totals speak for them.
    let kinds = "duration = \"10ms\"\n\n[[stations]]\ncount = 2\nframe = \"512B\"\ntraffic = { kind = \"saturated\" }\n\n[sweep]\n\"stations.0.backoff\" = [\"beb\", \"blam\"]\n";
    let plan = sweep::from_str("k.toml", "k", kinds, None).unwrap();
    assert_eq!(
        checks::load_summary(&plan).unwrap(),
        "offered load over the 2 points: saturated"
    );
    let w = checks::replications_warning(&plan, "k.toml", kinds).unwrap();
    assert_eq!(w.line, None, "{w}");
    assert!(
        w.to_string()
            .contains("(at all 2 sweep points; first: point 0"),
        "{w}"
    );
}

#[test]
fn run_and_sweep_warn_before_running_without_failing() {
    let dir = temp_dir("warn-run");
    let f = dir.join("fast.toml");
    std::fs::write(&f, FAST_LONG_BUS.replace("10ms", "1ms")).unwrap();
    let out = bin()
        .arg("run")
        .arg(&f)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("`medium.length`: the worst round trip"),
        "{err}"
    );
    assert!(
        err.contains(
            "`replications`: one replication gives no confidence interval; set replications = 5"
        ),
        "{err}"
    );
    // Warnings come before the results.
    assert!(err.find("warning:") < err.find("wrote"), "{err}");

    let g = dir.join("good.toml");
    std::fs::write(&g, GOOD).unwrap();
    let out = bin()
        .arg("sweep")
        .arg(&g)
        .arg("--quiet")
        .arg("--out")
        .arg(dir.join("out2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

/// The marker a scenario's comment carries when a warning is intended.
const INTENDED: &str = "`csmacd validate` warns";

#[test]
fn shipped_scenarios_warn_only_where_their_comment_says_it_is_intended() {
    let files = scenario_files();
    assert!(files.len() >= 20, "{} files", files.len());
    let mut wrong = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.display().to_string();
        let plan = sweep::from_str(&name, "x", &text, None).unwrap_or_else(|e| panic!("{e}"));
        let w = checks::warnings(&plan, &name, &text);
        let said = text.contains(INTENDED);
        if w.is_empty() == said {
            wrong.push(format!(
                "{name}: {} warnings, comment says intended: {said}: {}",
                w.len(),
                w.iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
