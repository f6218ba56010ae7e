//! Fuzzing the scenario parser and validator with proptest (cargo-fuzz needs a
//! nightly compiler; proptest runs on stable inside `cargo test`). Inputs are
//! arbitrary bytes, and TOML documents built from the real keys with hostile
//! values (NaN, infinities, huge and negative numbers, wrong types, unknown
//! keys, unit garbage), then possibly cut or spliced at the byte level.
//!
//! Properties: `scenario::from_str` never panics; every error names the file
//! and a line inside the text, and a key when the TOML was well formed; every
//! scenario it accepts runs (shortened) without panicking and conserves frames.
//!
//! The default case counts keep `cargo test` fast; a long run is
//! `PROPTEST_CASES=20000 cargo test --test main parser_fuzz`. Inputs that ever
//! failed are kept as named regression tests at the end of this file and in
//! tests/hostile/.

use crate::common::{assert_conserved, cases};
use csmacd::scenario::{self, ScenarioError};
use proptest::prelude::*;
use toml::{Table, Value};

/// Numbers as text, biased towards the edges that break arithmetic.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..5000).prop_map(|n| n.to_string()),
        (-5000i64..0).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        prop::sample::select(vec![
            "0",
            "-0",
            "1e308",
            "1e-308",
            "1e30",
            "1e-30",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "1.7976931348623157e308",
            "18446744073709551616",
            "9223372036854775807",
            "0.5",
            "1_000",
            "1e",
            "e5",
            ".",
            "+",
            "--1",
            "1..2",
        ])
        .prop_map(str::to_string),
    ]
}

/// Every unit a quantity might carry, and some that no quantity takes.
const UNITS: &[&str] = &[
    "", "s", "ms", "us", "µs", "ns", "ps", "min", "h", "bit", "bits", "slot", "slots", "B", "kB",
    "KB", "bps", "kbps", "Mbps", "Gbps", "m", "km", "m/s", "km/s", "furlong", " s", "s ", "Mb",
    "%", "\u{0}", "é",
];

fn quantity() -> impl Strategy<Value = Value> {
    (number_text(), prop::sample::select(UNITS)).prop_map(|(n, u)| Value::String(format!("{n}{u}")))
}

/// Any TOML value, weighted towards the types the keys want.
fn hostile_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        4 => quantity(),
        2 => any::<i64>().prop_map(Value::Integer),
        2 => prop::sample::select(vec![0i64, 1, -1, 2, 16, 62, 63, 64, 1_000_000, 10_000_000,
            10_000_001, i64::MAX, i64::MIN]).prop_map(Value::Integer),
        2 => any::<f64>().prop_map(Value::Float),
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0,
            1e-300, 1e300]).prop_map(Value::Float),
        1 => any::<bool>().prop_map(Value::Boolean),
        2 => prop::sample::select(vec!["saturated", "poisson", "periodic", "burst", "on-off",
            "beb", "csma-cd", "even", "random", "imix", "fixed", "uniform", "mix", ""])
            .prop_map(|s| Value::String(s.to_string())),
        1 => ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key_name(), inner), 0..4)
                .prop_map(|kv| Value::Table(kv.into_iter().collect())),
        ]
    })
    .boxed()
}

/// The keys a scenario knows, at every level, and a few it does not.
fn key_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "kind",
        "load",
        "rate",
        "interval",
        "phase",
        "frames",
        "at",
        "mean_on",
        "mean_off",
        "alpha",
        "size",
        "min",
        "max",
        "sizes",
        "weights",
        "backoff_limit",
        "attempt_limit",
        "count",
        "unknown",
        "Kind",
        "",
    ])
    .prop_map(str::to_string)
}

fn strs(v: &'static [&'static str]) -> BoxedStrategy<Value> {
    prop::sample::select(v)
        .prop_map(|s| Value::String(s.to_string()))
        .boxed()
}

fn ints(v: &'static [i64]) -> BoxedStrategy<Value> {
    prop::sample::select(v).prop_map(Value::Integer).boxed()
}

fn floats(v: &'static [f64]) -> BoxedStrategy<Value> {
    prop::sample::select(v).prop_map(Value::Float).boxed()
}

/// Values a user might plausibly write for `key`, valid or at the edge of
/// validity, so that many inputs pass validation and reach the simulator.
fn plausible(key: &str) -> BoxedStrategy<Value> {
    match key {
        "duration" => strs(&[
            "1ms",
            "10ms",
            "1s",
            "1e6s",
            "100slot",
            "1e5bit",
            "3153600000s",
        ]),
        "warmup" => strs(&["0s", "1ms", "0.5ms", "2slot"]),
        "seed" => any::<i64>().prop_map(Value::Integer).boxed(),
        "replications" => ints(&[1, 2, 3, 1_000_000]),
        "nonstandard_frames" => any::<bool>().prop_map(Value::Boolean).boxed(),
        "name" => ".{0,8}".prop_map(Value::String).boxed(),
        "bit_rate" => strs(&[
            "1Mbps",
            "10Mbps",
            "100Mbps",
            "1bps",
            "1000Gbps",
            "3Mbps",
            "1e-300bps",
        ]),
        "length" => strs(&["0m", "2500m", "1e7m", "1m", "10km"]),
        "speed" => strs(&["2e8m/s", "1m/s", "299792458m/s", "1e-300m/s"]),
        "slot" | "preamble" | "ifg" | "jam" => strs(&[
            "0bit", "1bit", "64bit", "96bit", "512bit", "1e18ps", "1e6s", "1e30bit",
        ]),
        "access" => strs(&["csma-cd"]),
        "placement" => strs(&["even", "random"]),
        "count" => ints(&[1, 2, 3, 5, 10_000_000]),
        "frame" => prop_oneof![
            strs(&["64B", "1518B", "1B", "1000000B", "imix", "512bit"]),
            Just(Value::Table(
                toml::from_str("kind = \"uniform\"\nmin = \"64B\"\nmax = \"1518B\"")
                    .unwrap_or_default()
            )),
            Just(Value::Table(
                toml::from_str(
                    "kind = \"mix\"\nsizes = [\"64B\", \"1518B\"]\nweights = [1e308, 1e308]"
                )
                .unwrap_or_default()
            )),
        ]
        .boxed(),
        "backoff" => (0i64..70, 0i64..20)
            .prop_map(|(k, a)| {
                let mut t = Table::new();
                t.insert("kind".into(), Value::String("beb".into()));
                t.insert("backoff_limit".into(), Value::Integer(k));
                t.insert("attempt_limit".into(), Value::Integer(a));
                Value::Table(t)
            })
            .boxed(),
        "queue" => ints(&[1, 2, 1000, 10_000_000]),
        "positions" => prop::collection::vec(strs(&["0m", "100m", "2500m", "2501m", "-1m"]), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        "destination" => ints(&[0, 1, 2, 7]),
        "kind" => strs(&["saturated", "poisson", "periodic", "burst", "on-off"]),
        "load" => floats(&[0.5, 1e-300, 1e6, 0.0, 2.0]),
        "rate" => floats(&[1.0, 1e-300, 1e12, 100.0]),
        "interval" | "phase" | "at" | "mean_on" | "mean_off" => {
            strs(&["1ms", "1ps", "0s", "1e30s", "3slot"])
        }
        "frames" => ints(&[1, 10, 1_000_000]),
        "alpha" => floats(&[1.5, 1.0, 10.0, 1.0000001]),
        _ => hostile_value(),
    }
}

fn entries(keys: &'static [&'static str]) -> impl Strategy<Value = Table> {
    prop::collection::vec(
        prop_oneof![
            12 => prop::sample::select(keys).prop_flat_map(|k| (Just(k.to_string()), plausible(k))),
            3 => (prop::sample::select(keys).prop_map(str::to_string), hostile_value()),
            1 => (key_name(), hostile_value()),
        ],
        0..4,
    )
    .prop_map(|kv| kv.into_iter().collect())
}

/// A valid base scenario, then hostile overrides at every level.
fn hostile_table() -> impl Strategy<Value = Table> {
    let top = entries(&[
        "name",
        "seed",
        "duration",
        "warmup",
        "replications",
        "nonstandard_frames",
        "medium",
        "stations",
    ]);
    let medium = entries(&[
        "bit_rate",
        "length",
        "speed",
        "slot",
        "preamble",
        "ifg",
        "jam",
        "access",
        "placement",
    ]);
    let group = entries(&[
        "count",
        "traffic",
        "frame",
        "backoff",
        "queue",
        "positions",
        "destination",
    ]);
    let traffic = entries(&[
        "kind", "load", "rate", "interval", "phase", "frames", "at", "mean_on", "mean_off", "alpha",
    ]);
    (top, medium, prop::collection::vec((group, traffic), 0..3), any::<u8>()).prop_map(
        |(top, medium, groups, drop)| {
            let mut t: Table = toml::from_str(
                "duration = \"2ms\"\n[medium]\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n",
            )
            .unwrap_or_default();
            // Sometimes drop a required key.
            match drop % 8 {
                0 => {
                    t.remove("duration");
                }
                1 => {
                    t.remove("stations");
                }
                _ => {}
            }
            if let Some(Value::Table(m)) = t.get_mut("medium") {
                m.extend(medium);
            }
            if let Some(Value::Array(gs)) = t.get_mut("stations") {
                for (g, tr) in groups {
                    let mut base = gs[0].as_table().cloned().unwrap_or_default();
                    if let Some(Value::Table(x)) = base.get_mut("traffic") {
                        x.extend(tr);
                    }
                    base.extend(g);
                    gs.push(Value::Table(base));
                }
            }
            t.extend(top);
            t
        },
    )
}

/// Checks one input: no panic (proptest reports a panic as a failure), and an
/// error that says where.
fn check_text(text: &str) -> Result<(), TestCaseError> {
    match scenario::bus_from_str("fuzz.toml", "fuzz", text) {
        Ok(sc) => run_shortened(sc),
        Err(e) => {
            let msg = e.to_string();
            let lines = text.split('\n').count();
            let (line, key) = match &e {
                ScenarioError::Syntax { line, .. } => (*line, None),
                ScenarioError::Invalid { line, key, .. } => (*line, Some(key.clone())),
                other => {
                    return Err(TestCaseError::fail(format!(
                        "unexpected error kind: {other}"
                    )))
                }
            };
            prop_assert!(
                msg.starts_with(&format!("fuzz.toml:{line}: ")),
                "no file:line in {msg}"
            );
            prop_assert!(
                line >= 1 && line <= lines,
                "line {line} outside 1..={lines}: {msg}"
            );
            if let Some(key) = key {
                prop_assert!(!key.is_empty(), "no key named: {msg}");
                prop_assert!(msg.contains(&format!("`{key}`")), "key not quoted: {msg}");
            }
            // Nothing but the message: the part after the location says something.
            prop_assert!(msg.len() > format!("fuzz.toml:{line}: ").len() + 5, "{msg}");
            Ok(())
        }
    }
}

/// Runs an accepted scenario, cut down so the fuzzer stays fast: at most 40
/// stations, 1 ms simulated. The medium and traffic values stay as given, so
/// the core's arithmetic meets them.
fn run_shortened(mut sc: csmacd::ethernet::Scenario) -> Result<(), TestCaseError> {
    let mut left = 40usize;
    for g in &mut sc.groups {
        g.count = g.count.min(left).max(1);
        left = left.saturating_sub(g.count);
        if let Some(p) = &mut g.positions {
            p.truncate(g.count);
        }
        g.queue = g.queue.min(1000);
        if let csmacd::traffic::Arrivals::Burst { frames, .. } = &mut g.arrivals {
            *frames = (*frames).min(100);
        }
    }
    let n = sc.station_count();
    for g in &mut sc.groups {
        if g.destination.is_some_and(|d| d >= n) {
            g.destination = None;
        }
    }
    sc.duration = sc.duration.min(1_000_000_000);
    sc.warmup = sc.warmup.min(sc.duration / 2);
    // Rates so high that every picosecond brings a frame are legal but slow;
    // the fuzzer only needs the arithmetic, so cap the arrivals it simulates.
    for g in &mut sc.groups {
        use csmacd::traffic::Arrivals::*;
        match &mut g.arrivals {
            Poisson { rate } | OnOff { rate, .. } => *rate = rate.min(1e6),
            Periodic { interval, .. } => *interval = (*interval).max(1_000_000),
            _ => {}
        }
    }
    let r = csmacd::ethernet::run(&sc, sc.seed);
    assert_conserved(&r);
    prop_assert!(r.busy_ps <= (sc.duration - sc.warmup) as u128);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        // What `read_text` would refuse (non-UTF-8) becomes replacement characters.
        check_text(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn arbitrary_toml_never_panics_and_errors_say_where(t in hostile_table()) {
        let text = toml::to_string(&t).unwrap_or_default();
        check_text(&text)?;
    }

    #[test]
    fn cut_and_spliced_toml_never_panics(
        t in hostile_table(),
        cut in any::<prop::sample::Index>(),
        junk in prop::sample::select(vec!["", "\"", "[", "]", "=", "\n", "[[stations]]\n", "#", "\\", "{", "'''"]),
    ) {
        let text = toml::to_string(&t).unwrap_or_default();
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let spliced = format!("{}{junk}{}", &text[..at], &text[at..]);
        check_text(&spliced)?;
    }
}

// ---- Inputs that broke the parser or the core, kept as regression tests ----------------------

/// A tiny bit rate made one bit last longer than the clock holds (infinite
/// picoseconds passed the "whole number of ps" check), and the longest
/// transmission overflowed.
#[test]
fn regression_tiny_bit_rate_is_refused() {
    let text = "duration = \"1s\"\n[medium]\nbit_rate = \"1e-300bps\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";
    let e = scenario::bus_from_str("t.toml", "t", text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml:3: `medium.bit_rate`"), "{e}");
}

/// A huge interframe gap overflowed the signal-pruning horizon (2 * ifg).
#[test]
fn regression_huge_gap_is_refused() {
    let text = "duration = \"1s\"\n[medium]\nifg = \"1e30bit\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";
    let e = scenario::bus_from_str("t.toml", "t", text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml:3: `medium.ifg`"), "{e}");
}

/// A speed so slow that the end-to-end delay overflows the clock.
#[test]
fn regression_crawling_signal_is_refused() {
    let text = "duration = \"1s\"\n[medium]\nspeed = \"1e-300m/s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n";
    let e = scenario::bus_from_str("t.toml", "t", text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`medium.speed`"), "{e}");
}

/// A backoff window of 2^40 slots overflowed `r * slot` and `t + delay`.
/// Validation now refuses windows whose waits pass the clock's range, and
/// the largest window it accepts runs.
#[test]
fn regression_huge_backoff_window_is_refused_or_runs() {
    let text = |limit: u32| {
        format!("duration = \"50ms\"\n[[stations]]\ncount = 3\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\nbackoff = {{ kind = \"beb\", backoff_limit = {limit}, attempt_limit = 1000 }}\n")
    };
    let e = scenario::bus_from_str("t.toml", "t", &text(40))
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml:6:") && e.contains("beyond"), "{e}");
    let sc = crate::common::scenario(&text(20));
    let r = crate::common::run(&sc, 5);
    assert!(r.metrics.get("collisions") > 0.0);
}

/// A rate so small that the next arrival lies past the end of the clock: the
/// on-off source looped for ever, and Poisson's `t + gap` overflowed.
#[test]
fn regression_vanishing_rates_terminate() {
    for kind in ["on-off", "poisson"] {
        let sc = crate::common::scenario(&format!(
            "duration = \"10ms\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"{kind}\", rate = 1e-300 }}\n"
        ));
        let r = crate::common::run(&sc, 1);
        assert_eq!(r.metrics.get("delivered"), 0.0);
    }
}

/// Mix weights whose sum overflows to infinity made the mean frame size NaN,
/// and a `load` then turned into a NaN rate: one arrival per picosecond.
#[test]
fn regression_infinite_weight_sum_is_refused() {
    let text = "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = { kind = \"mix\", sizes = [\"64B\", \"1518B\"], weights = [1e308, 1e308] }\ntraffic = { kind = \"poisson\", load = 0.5 }\n";
    let e = scenario::bus_from_str("t.toml", "t", text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.toml:4: `stations.0.frame.weights`"), "{e}");
}

/// The draw itself: a window of 2^40 slots of 51.2 us overflows `r * slot`
/// (reachable with backoff_limit = 40 and a large attempt_limit, though only
/// after improbably short waits); the delay now saturates.
#[test]
fn regression_backoff_draw_saturates() {
    use csmacd::backoff::{BackoffSpec, BackoffState};
    use rand::SeedableRng;
    let spec = BackoffSpec::Beb {
        backoff_limit: 40,
        attempt_limit: 1000,
    };
    let mut st = BackoffState::new(&spec);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let slot = 51_200_000;
    for _ in 0..100 {
        let d = st
            .draw(
                &spec,
                40,
                slot,
                &csmacd::backoff::ChannelHistory::default(),
                0,
                &mut rng,
            )
            .unwrap();
        let r = d.r.unwrap_or(0);
        assert_eq!(d.delay, r.saturating_mul(slot));
    }
}
