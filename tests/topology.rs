//! Hubs and chains of repeaters (`[medium] topology`): the delay between two
//! stations is the path's (cables at the medium's speed, plus a repeater's
//! delay at each repeater), a hub enforces a collision by jamming every
//! port, co-located stations on a hub collide, scaling the bit rate and the
//! cables together scales every time, and bad keys are refused naming what
//! is allowed (docs/model.md, "Hubs and repeaters").

use crate::common::{run, scenario};
use csmacd::engine::Time;
use csmacd::ethernet::{self, MacEvent, Observer};

#[derive(Default)]
struct Log(Vec<(Time, u32, MacEvent)>);

impl Observer for Log {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        self.0.push((t, station, ev.clone()));
    }
}

impl Log {
    fn detections(&self) -> Vec<(Time, u32)> {
        self.0
            .iter()
            .filter_map(|(t, s, e)| {
                matches!(e, MacEvent::CollisionDetected { .. }).then_some((*t, *s))
            })
            .collect()
    }
    fn starts(&self, station: u32) -> Vec<Time> {
        self.0
            .iter()
            .filter_map(|(t, s, e)| {
                (*s == station && matches!(e, MacEvent::TxStart { .. })).then_some(*t)
            })
            .collect()
    }
}

/// Picoseconds over `metres` at `speed` m/s, rounded as the run rounds.
fn ps(metres: f64, speed: f64) -> Time {
    (metres / speed * 1e12).round() as Time
}

const TP: f64 = 0.585 * 299_792_458.0;

fn hub(cables: [&str; 2], starts: [&str; 2], extra: &str) -> String {
    format!(
        "duration = \"1ms\"\n[medium]\nstandard = \"10BASE-T\"\n\
         topology = {{ kind = \"hub\", cable = \"100m\", repeater_delay = \"46bit\" }}\n{extra}\
         [[stations]]\ncount = 1\ncable = \"{}\"\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"{}\" }}\n\
         [[stations]]\ncount = 1\ncable = \"{}\"\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"{}\" }}\n",
        cables[0], starts[0], cables[1], starts[1]
    )
}

/// Two stations on a 10BASE-T hub (cables of 30 m and 90 m, 46 bit times
/// through the hub) that start together each detect the other's signal
/// after cable/speed + repeater delay + cable/speed, and a listener's rows
/// in the trace put the signal there at its own cable's delay.
#[test]
fn collisions_across_a_hub_come_after_both_cables_and_the_repeater_delay() {
    let sc = scenario(&hub(["30m", "90m"], ["0ns", "0ns"], ""));
    let d = ps(30.0, TP) + 46 * 100_000 + ps(90.0, TP);
    let mut log = Log::default();
    let r = ethernet::run_observed(&sc, 1, &mut log);
    assert_eq!(log.detections(), vec![(d, 0), (d, 1)]);
    assert_eq!(r.metrics.get("delivered"), 2.0);
    // Station 1 starts later, by less than the path: station 0 still
    // detects at the path's delay after station 1's start, station 1 at
    // the path's delay after station 0's.
    let sc = scenario(&hub(["30m", "90m"], ["0ns", "2us"], ""));
    let mut log = Log::default();
    ethernet::run_observed(&sc, 1, &mut log);
    assert_eq!(log.detections(), vec![(d, 1), (2_000_000 + d, 0)]);
}

/// On a hub with no cables and no delay two stations are at the same
/// place; on equal cables they are not, but they decide at the same
/// instant: both find the medium idle and collide, as 802.3 stations do.
#[test]
fn stations_starting_together_on_a_hub_collide() {
    for (cable, delay, at) in [
        ("0m", "0bit", 0),
        ("100m", "46bit", 2 * ps(100.0, TP) + 4_600_000),
    ] {
        let sc = scenario(&format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"10BASE-T\"\n\
             topology = {{ kind = \"hub\", cable = \"{cable}\", repeater_delay = \"{delay}\" }}\n\
             [[stations]]\ncount = 3\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"0ns\" }}\n"
        ));
        let mut log = Log::default();
        let r = ethernet::run_observed(&sc, 7, &mut log);
        assert_eq!(
            log.detections()[..3],
            [(at, 0), (at, 1), (at, 2)],
            "{cable}"
        );
        assert_eq!(r.metrics.get("delivered"), 3.0, "{cable}");
    }
}

/// Collision enforcement: a hub that finds two ports active jams every
/// port until its last input falls idle. Station 1 starts at 0, station 0
/// 1 µs later, both on cables of 100 m (c each way, d = 2c + 46 bit times
/// between them). Station 0 detects at d, within its preamble, and ends
/// its jam at 1 + 6.4 + 3.2 µs; station 1 detects at 1 µs + d and ends
/// 3.2 µs later. Station 0's signal leaves the hub last, so the hub's jam
/// brings it back to station 0 until its end + d: a station 0 that draws
/// no backoff sends a gap (9.6 µs) after that, where without the
/// enforcement it would send a gap after station 1's signal, 0.66 µs
/// earlier. Drawing one slot it sends at 1 + 9.6 + 51.2 µs, or, when
/// station 1 went first, a gap after station 1's frame.
#[test]
fn a_hub_enforces_a_collision_back_to_the_sender_whose_signal_is_last() {
    let d = 2 * ps(100.0, TP) + 4_600_000;
    let end0 = 10_600_000;
    let enforced = end0 + d + 9_600_000;
    let one_slot = end0 + 51_200_000;
    // Station 1 sent first (at `enforced`, a gap after station 0's signal
    // left it): 64 B and preamble, 57.6 µs, then d to station 0, then a gap.
    let after_one = enforced + 57_600_000 + d + 9_600_000;
    let mut seen = [0; 3];
    for seed in 1..=40 {
        let sc = scenario(&hub(["100m", "100m"], ["1us", "0ns"], ""));
        let mut log = Log::default();
        ethernet::run_observed(&sc, seed, &mut log);
        let second = log.starts(0)[1];
        let k = [enforced, one_slot, after_one]
            .iter()
            .position(|&t| t == second);
        let k = k.unwrap_or_else(|| panic!("seed {seed}: {second}"));
        seen[k] += 1;
    }
    // Station 0's first draw is a fair coin: 40 draws land all on one side
    // with probability 2^-39.
    assert!(seen[0] > 0 && seen[1] + seen[2] > 0, "{seen:?}");
}

/// Segments joined end to end by repeaters: a station at the start of the
/// first of three 500 m coax segments and one at the end of the third are
/// 1500 m of coax and two repeaters apart.
#[test]
fn a_chain_of_segments_adds_each_repeaters_delay() {
    let sc = scenario(
        "duration = \"1ms\"\n[medium]\nstandard = \"10BASE5\"\n\
         topology = { kind = \"segments\", segments = [\"500m\", \"500m\", \"500m\"], repeater_delay = \"8bit\" }\n\
         [[stations]]\ncount = 1\nsegment = 1\npositions = [\"0m\"]\nframe = \"64B\"\ntraffic = { kind = \"burst\", at = \"0ns\" }\n\
         [[stations]]\ncount = 1\nsegment = 3\npositions = [\"500m\"]\nframe = \"64B\"\ntraffic = { kind = \"burst\", at = \"0ns\" }\n",
    );
    let d = ps(1500.0, 0.77 * 299_792_458.0) + 2 * 800_000;
    let paths = ethernet::paths(&sc, 1);
    assert_eq!(paths.delay(0, 1), d);
    let mut log = Log::default();
    ethernet::run_observed(&sc, 1, &mut log);
    assert_eq!(log.detections(), vec![(d, 0), (d, 1)]);
}

/// Ten times the bit rate over a tenth of the cable (at the same speed,
/// whole picoseconds both ways) is the same network in bit times: the same
/// seeds give the same counts and every delay a tenth as long, on a bus and
/// through a hub.
#[test]
fn ten_times_the_bit_rate_over_a_tenth_of_the_cable_scales_every_time() {
    let net = |rate: &str, scale: f64, topology: &str| {
        let m = |x: f64| format!("{}m", x * scale);
        let topology = match topology {
            "hub" => format!(
                "topology = {{ kind = \"hub\", cable = \"{}\", repeater_delay = \"46bit\" }}\n",
                m(100.0)
            ),
            _ => format!("length = \"{}\"\n", m(1000.0)),
        };
        scenario(&format!(
            "duration = \"{}us\"\n[medium]\nbit_rate = \"{rate}\"\nspeed = \"2e8m/s\"\n{topology}\
             [[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n",
            20_000.0 * scale
        ))
    };
    for topology in ["bus", "hub"] {
        let slow = run(&net("10Mbps", 1.0, topology), 3);
        let fast = run(&net("100Mbps", 0.1, topology), 3);
        for col in ["delivered", "attempts", "collisions", "dropped_excessive"] {
            assert_eq!(
                slow.metrics.get(col),
                fast.metrics.get(col),
                "{topology} {col}"
            );
        }
        let (a, b) = (
            slow.metrics.get("delay_mean_us"),
            fast.metrics.get("delay_mean_us"),
        );
        assert!(
            a > 0.0 && (a - 10.0 * b).abs() <= 1e-9 * a,
            "{topology}: {a} {b}"
        );
    }
}

fn refused(text: &str) -> String {
    csmacd::scenario::bus_from_str("t.toml", "t", text)
        .unwrap_err()
        .to_string()
}

const ONE: &str = "[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";

#[test]
fn bad_topologies_are_refused_naming_the_key_and_what_is_allowed() {
    let cases = [
        (
            "topology = { kind = \"ring\" }\n",
            "",
            "medium.topology.kind",
            "allowed: bus, hub, segments",
        ),
        (
            "topology = { cable = \"10m\" }\n",
            "",
            "medium.topology.kind",
            "missing",
        ),
        (
            "topology = { kind = \"hub\" }\n",
            "",
            "medium.topology.repeater_delay",
            "46bit",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1slot\" }\n",
            "",
            "medium.topology.repeater_delay",
            "bits or time",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1bit\", segments = [\"1m\"] }\n",
            "",
            "medium.topology.segments",
            "only to kind = \"segments\"",
        ),
        (
            "topology = { kind = \"bus\", cable = \"1m\" }\n",
            "",
            "medium.topology.cable",
            "only to kind",
        ),
        (
            "topology = { kind = \"segments\", repeater_delay = \"1bit\" }\n",
            "",
            "medium.topology.segments",
            "missing",
        ),
        (
            "topology = { kind = \"segments\", segments = [], repeater_delay = \"1bit\" }\n",
            "",
            "medium.topology.segments",
            "allowed: 1 to 64",
        ),
        (
            "topology = { kind = \"hub\", cable = \"-1m\", repeater_delay = \"1bit\" }\n",
            "",
            "medium.topology.cable",
            "between 0m",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1bit\", speed = 1 }\n",
            "",
            "medium.topology.speed",
            "allowed here: kind",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1bit\" }\nlength = \"10m\"\n",
            "",
            "medium.length",
            "does not apply",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1bit\" }\nplacement = \"random\"\n",
            "",
            "medium.placement",
            "only to a bus",
        ),
        (
            "topology = { kind = \"hub\", repeater_delay = \"1bit\" }\n",
            "positions = [\"1m\", \"2m\"]\n",
            "stations.0.positions",
            "give the group's `cable`",
        ),
        ("", "cable = \"5m\"\n", "stations.0.cable", "only on a hub"),
        (
            "",
            "segment = 1\n",
            "stations.0.segment",
            "only to [medium] topology",
        ),
        (
            "topology = { kind = \"segments\", segments = [\"10m\"], repeater_delay = \"1bit\" }\n",
            "",
            "stations.0.segment",
            "1 to 1",
        ),
        (
            "topology = { kind = \"segments\", segments = [\"10m\"], repeater_delay = \"1bit\" }\n",
            "segment = 2\n",
            "stations.0.segment",
            "1",
        ),
        (
            "topology = { kind = \"segments\", segments = [\"10m\"], repeater_delay = \"1bit\" }\n",
            "segment = 1\npositions = [\"0m\", \"11m\"]\n",
            "stations.0.positions.1",
            "off its segment (1)",
        ),
    ];
    for (medium, group, key, what) in cases {
        let text = format!(
            "duration = \"1ms\"\n[medium]\n{medium}[[stations]]\ncount = 2\nframe = \"64B\"\n\
             traffic = {{ kind = \"saturated\" }}\n{group}"
        );
        let e = refused(&text);
        assert!(e.contains(key) && e.contains(what), "{medium} {group}: {e}");
    }
    let e = refused(&format!(
        "duration = \"1ms\"\n[medium]\ntopology = {{ kind = \"hub\", repeater_delay = \"1bit\" }}\n{}",
        ONE.replace("count = 2", "count = 1025")
    ));
    assert!(e.contains("stations") && e.contains("at most 1024"), "{e}");
}

fn warnings(text: &str) -> Vec<(String, String, String)> {
    scenario(text)
        .warnings()
        .into_iter()
        .map(|w| (w.kind.to_string(), w.key, w.message))
        .collect()
}

/// A 100BASE-TX hub within 802.3's rules gives no warning; cables of
/// 150 m break the 100 m link and the path delay value: 100 bit times for
/// the two interfaces + 2 x (2 x 150 m x 0.556 bit times/m + 46) = 525.6,
/// more than 512 (clause 29), though the round trip itself (425.6 + the
/// jam's 32) still fits the slot.
#[test]
fn a_fast_ethernet_hub_is_checked_against_its_path_delay_budget() {
    let net = |cable: &str| {
        format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"100BASE-TX\"\n\
             topology = {{ kind = \"hub\", cable = \"{cable}\", repeater_delay = \"46bit\" }}\n{ONE}"
        )
    };
    assert_eq!(warnings(&net("100m")), vec![]);
    let w = warnings(&net("150m"));
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(
        (w[0].0.as_str(), w[0].1.as_str()),
        ("802.3-limits", "medium.topology.cable")
    );
    assert!(
        w[0].2.contains("150 m") && w[0].2.contains("at most 100 m"),
        "{}",
        w[0].2
    );
    assert_eq!(w[1].1, "medium.topology");
    assert!(
        w[1].2.contains("stations 0 and 1")
            && w[1].2.contains("525.6 bit times")
            && w[1].2.contains("512"),
        "{}",
        w[1].2
    );
}

/// Six 10BASE5 segments in a chain: the stations at both ends are 3000 m
/// of coax (at 0.77 c, 129.96 bit times) and five repeaters of 40 bit times
/// apart, 329.96 bit times one way: the round trip and the jam (691.9) pass
/// the slot, and the path breaks the 5-4-3 rule.
#[test]
fn a_chain_of_six_coax_segments_breaks_the_slot_and_the_5_4_3_rule() {
    let w = warnings(
        "duration = \"1ms\"\n[medium]\nstandard = \"10BASE5\"\n\
         topology = { kind = \"segments\", segments = [\"500m\", \"500m\", \"500m\", \"500m\", \"500m\", \"500m\"], repeater_delay = \"40bit\" }\n\
         [[stations]]\ncount = 1\nsegment = 1\npositions = [\"0m\"]\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n\
         [[stations]]\ncount = 1\nsegment = 6\npositions = [\"500m\"]\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let kinds: Vec<&str> = w.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(kinds, ["late-collisions", "802.3-limits"], "{w:?}");
    assert!(
        w[0].2.contains("stations 0 and 1") && w[0].2.contains("691.9 bit times"),
        "{}",
        w[0].2
    );
    assert!(w[1].2.contains("6 segments and 5 repeaters"), "{}", w[1].2);
}

/// The trace tells a burst's later frames and extended frames apart: at
/// 1 Gb/s a 64-byte frame's last bit leaves at 0.576 µs and the extension
/// runs to 4.16 µs; the next frame of the burst starts with its filled gap
/// and is not extended.
#[test]
fn the_trace_names_extension_and_frames_in_a_burst() {
    use csmacd::teach::text;
    use csmacd::teach::trace::{self, TraceFilter, TraceKind};
    let sc = scenario(
        "duration = \"10us\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\n\
         [[stations]]\ncount = 1\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let rows = trace::collect(&sc, 1, TraceFilter::new(&sc, sc.duration, None));
    let starts: Vec<_> = rows
        .iter()
        .filter(|r| matches!(r.kind, TraceKind::TxStart { .. }))
        .collect();
    assert!(matches!(
        starts[0].kind,
        TraceKind::TxStart {
            extension_from: Some(576_000),
            in_burst: false,
            end: 4_160_000,
            ..
        }
    ));
    assert!(matches!(
        starts[1].kind,
        TraceKind::TxStart {
            extension_from: None,
            in_burst: true,
            ..
        }
    ));
    let said = |r: &trace::TraceRow| text::line(r, &sc.medium, false);
    assert!(
        said(starts[0]).contains("carrier extension until 4.16 µs"),
        "{}",
        said(starts[0])
    );
    assert!(
        said(starts[1]).contains("in a burst"),
        "{}",
        said(starts[1])
    );
}

/// A space-time diagram and the interactive view draw one cable: a hub is
/// refused by both, naming the topology and what to use instead, and
/// nothing is written.
#[test]
fn the_diagram_and_the_view_refuse_a_hub_and_point_to_the_trace() {
    let dir = crate::common::temp_dir("hub-diagram");
    let file = dir.join("hub.toml");
    std::fs::write(&file, hub(["10m", "20m"], ["0ns", "0ns"], "")).unwrap();
    for (command, out) in [("diagram", "d.png"), ("view", "v.html")] {
        let o = crate::common::bin()
            .args([command, file.to_str().unwrap(), "--until", "10us", "--out"])
            .arg(dir.join(out))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{command}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("kind = \"hub\"") && e.contains("csmacd trace"),
            "{command}: {e}"
        );
        assert!(!dir.join(out).exists(), "{command}");
    }
}
