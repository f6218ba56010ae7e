//! The core model against closed-form results (docs/model.md, "Reference results"), exact
//! probabilities, geometry and invariants.

use crate::common::{run, scenario};
use csmacd::backoff::{BackoffSpec, BackoffState, ChannelHistory};
use csmacd::engine::Time;
use csmacd::ethernet::{self, MacEvent, Observer};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Pearson's chi-square p-value for observed counts against expected probabilities.
fn chi_square_p(observed: &[u64], probs: &[f64]) -> f64 {
    let n: u64 = observed.iter().sum();
    let stat: f64 = observed
        .iter()
        .zip(probs)
        .map(|(&o, &p)| {
            let e = p * n as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    let df = (observed.len() - 1) as f64;
    1.0 - ChiSquared::new(df).unwrap().cdf(stat)
}

#[test]
fn one_saturated_station_reaches_f_over_f_plus_160() {
    for bytes in [64u64, 512, 1518] {
        let f = 8 * bytes;
        // A whole number of frame + preamble + gap cycles, so the ratio is exact.
        let cycles = 20_000;
        let text = format!(
            "duration = \"{}bit\"\n[[stations]]\ncount = 1\nframe = \"{bytes}B\"\ntraffic = {{ kind = \"saturated\" }}\n",
            cycles * (f + 160)
        );
        let r = run(&scenario(&text), 1);
        let expected = f as f64 / (f as f64 + 160.0);
        let got = r.metrics.get("throughput");
        assert!(
            (got - expected).abs() < 1e-6,
            "{bytes} B: {got} vs {expected}"
        );
        assert_eq!(r.metrics.get("collisions"), 0.0);
        assert_eq!(r.metrics.get("attempts"), r.metrics.get("delivered"));
    }
    // And the figures of docs/model.md, to four places.
    for (bytes, model) in [(64.0, 0.7619), (512.0, 0.9624), (1518.0, 0.9870)] {
        let f: f64 = 8.0 * bytes;
        assert!((f / (f + 160.0) - model).abs() < 5e-5);
    }
}

/// P(C = c) for the number of collisions in a two-station contention,
/// including the 16-attempt cap at which both frames are discarded.
fn contention_distribution() -> Vec<f64> {
    let q = |m: u32| 0.5f64.powi(m.min(10) as i32);
    let mut probs = Vec::new();
    let mut reach = 1.0; // P(C >= c)
    for c in 1..=16u32 {
        if c == 16 {
            probs.push(reach);
        } else {
            probs.push(reach * (1.0 - q(c)));
            reach *= q(c);
        }
    }
    probs
}

#[test]
fn two_station_contention_matches_beb_probabilities() {
    let probs = contention_distribution();
    let mean_c: f64 = probs
        .iter()
        .enumerate()
        .map(|(k, p)| (k + 1) as f64 * p)
        .sum();
    assert!((mean_c - 1.6416).abs() < 1e-4, "E[C] = {mean_c}");
    assert!((probs[0] - 0.5).abs() < 1e-15);
    assert!((probs[1] - 0.375).abs() < 1e-15);
    assert!((probs[2] - 7.0 / 64.0).abs() < 1e-15);
    assert!((probs[3] - 15.0 / 1024.0).abs() < 1e-15);
    let var_c: f64 = probs
        .iter()
        .enumerate()
        .map(|(k, p)| ((k + 1) as f64 - mean_c).powi(2) * p)
        .sum();

    let sc = scenario(
        "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"burst\", frames = 1 }\n",
    );
    let reps = 20_000u64;
    let mut counts = [0u64; 4]; // C = 1, 2, 3, >= 4
    let mut total = 0.0;
    for seed in 0..reps {
        let r = run(&sc, seed);
        // One collision on the bus, two collided transmissions.
        let collisions = r.metrics.get("collisions");
        assert_eq!(r.metrics.get("collision_involvements"), 2.0 * collisions);
        let c = collisions as usize;
        assert!(c >= 1, "two frames at t = 0 always collide");
        assert_eq!(
            r.metrics.get("delivered") + r.metrics.get("dropped_excessive"),
            2.0
        );
        counts[(c - 1).min(3)] += 1;
        total += collisions;
    }
    // Mean collisions per replication is E[C]; its standard error is
    // sd(C) / sqrt(reps). Allow 4 standard errors (two-sided p ~ 6e-5).
    let mean = total / reps as f64;
    let bound = 4.0 * var_c.sqrt() / (reps as f64).sqrt();
    assert!(
        (mean - 1.6416).abs() < bound,
        "mean collisions {mean}, expected 1.6416 +- {bound}"
    );
    let tail = 1.0 - probs[0] - probs[1] - probs[2];
    let p = chi_square_p(&counts, &[probs[0], probs[1], probs[2], tail]);
    assert!(p > 1e-3, "chi-square p = {p}, counts {counts:?}");
}

#[test]
fn beb_draws_are_uniform_on_the_truncated_window() {
    let spec = BackoffSpec::beb();
    let mut st = BackoffState::new(&spec);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    for n in [1u32, 2, 3, 5, 8, 10, 11, 16] {
        let w = 1usize << n.min(10);
        let draws = 100 * w as u64;
        let mut counts = vec![0u64; w];
        for _ in 0..draws {
            let d = st
                .draw(&spec, n, 1, &ChannelHistory::default(), 0, &mut rng)
                .unwrap();
            counts[d.r.unwrap() as usize] += 1;
        }
        let p = chi_square_p(&counts, &vec![1.0 / w as f64; w]);
        assert!(p > 1e-3, "n = {n}: chi-square p = {p}");
    }
}

/// Collects every MAC event of a run.
#[derive(Default)]
struct Log(Vec<(Time, u32, MacEvent)>);

impl Observer for Log {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        self.0.push((t, station, ev.clone()));
    }
}

const US: Time = 1_000_000;

#[test]
fn backoff_is_counted_from_the_end_of_the_jam() {
    // Two stations, one frame each at t = 0: after each collision, a station
    // that drew r slots starts again r slots after its jam ended (or a gap
    // after it, for r = 0), unless the other station's carrier holds it off.
    let sc = scenario(
        "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"burst\" }\n",
    );
    let slot = 512 * 100_000;
    let ifg = 96 * 100_000;
    let mut checked = 0;
    let mut r_counts = [0u64; 2];
    for seed in 0..300 {
        let mut log = Log::default();
        ethernet::run_observed(&sc, seed, &mut log);
        let ev = &log.0;
        for (k, (t, s, e)) in ev.iter().enumerate() {
            let MacEvent::Backoff {
                n,
                r: Some(r),
                delay,
                ..
            } = e
            else {
                continue;
            };
            assert_eq!(*delay, r * slot);
            if *n == 1 {
                r_counts[*r as usize] += 1;
            }
            // The backoff is drawn at the end of the jam: the jam's end.
            let jam_end = ev[..k]
                .iter()
                .rev()
                .find_map(|(_, s2, e2)| match e2 {
                    MacEvent::Jam { end, .. } if s2 == s => Some(*end),
                    _ => None,
                })
                .unwrap();
            assert_eq!(*t, jam_end);
            let next_start = ev[k..].iter().find_map(|(t2, s2, e2)| match e2 {
                MacEvent::TxStart { .. } if s2 == s => Some(*t2),
                _ => None,
            });
            if let Some(start) = next_start {
                // Did the other station start a transmission in between? If
                // not, the start time is exact.
                let other_busy = ev.iter().any(|(t2, s2, e2)| {
                    s2 != s
                        && *t2 > jam_end
                        && *t2 < start
                        && matches!(e2, MacEvent::TxStart { .. })
                });
                if other_busy {
                    continue;
                }
                let expected = if *r >= 1 {
                    // r slots (>= 51.2 us) outlast the gap and the other
                    // jam's tail (at most 12.5 us of propagation).
                    jam_end + r * slot
                } else {
                    // The other station's jam is still passing here for
                    // 12.5 us after it ends: carrier, then a full gap.
                    let other_end = ev[..k]
                        .iter()
                        .rev()
                        .find_map(|(_, s2, e2)| match e2 {
                            MacEvent::Jam { end, .. } if s2 != s => Some(*end),
                            _ => None,
                        })
                        .unwrap();
                    jam_end.max(other_end + 12_500_000) + ifg
                };
                assert_eq!(start, expected, "seed {seed}, station {s}, r = {r}");
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "only {checked} exact checks");
    // r after the first collision is 0 or 1 with probability 1/2 each.
    let p = chi_square_p(&r_counts, &[0.5, 0.5]);
    assert!(p > 1e-3, "{r_counts:?}");
}

#[test]
fn sixteenth_collision_discards_the_frame() {
    // backoff_limit = 0 makes every backoff 0 slots: two synchronised
    // stations collide on every attempt.
    let sc = scenario(
        "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"burst\" }\nbackoff = { kind = \"beb\", backoff_limit = 0 }\n",
    );
    let r = run(&sc, 1);
    assert_eq!(r.metrics.get("collisions"), 16.0);
    assert_eq!(r.metrics.get("collision_involvements"), 32.0);
    assert_eq!(r.metrics.get("attempts"), 32.0);
    assert_eq!(r.metrics.get("dropped_excessive"), 2.0);
    assert_eq!(r.metrics.get("delivered"), 0.0);
    let sc = scenario(
        "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"burst\", frames = 2 }\nbackoff = { kind = \"beb\", backoff_limit = 0, attempt_limit = 3 }\n",
    );
    let r = run(&sc, 1);
    // Two frames each, three collisions per frame, all discarded.
    assert_eq!(r.metrics.get("collisions"), 6.0);
    assert_eq!(r.metrics.get("collision_involvements"), 12.0);
    assert_eq!(r.metrics.get("dropped_excessive"), 4.0);
}

#[test]
fn detection_and_jam_follow_the_geometry() {
    // Station 0 at 0 m starts at t = 0; station 1 at 1000 m starts at 3 us.
    // The delay between them is 1000 m / 2e8 m/s = 5 us.
    let sc = scenario(
        r#"
duration = "1ms"
[[stations]]
count = 1
positions = ["0m"]
frame = "64B"
traffic = { kind = "burst", at = "0us" }
[[stations]]
count = 1
positions = ["1000m"]
frame = "64B"
traffic = { kind = "burst", at = "3us" }
"#,
    );
    let mut log = Log::default();
    let r = ethernet::run_observed(&sc, 1, &mut log);
    crate::common::assert_conserved(&r);
    let find = |station: u32, f: &dyn Fn(&MacEvent) -> bool| {
        log.0
            .iter()
            .find(|(_, s, e)| *s == station && f(e))
            .map(|(t, _, e)| (*t, e.clone()))
            .unwrap()
    };
    let is_detect = |e: &MacEvent| matches!(e, MacEvent::CollisionDetected { .. });
    let is_jam = |e: &MacEvent| matches!(e, MacEvent::Jam { .. });
    // Station 1 hears station 0 at 0 + 5 us; station 0 hears station 1 at 3 + 5 us.
    assert_eq!(find(1, &is_detect).0, 5 * US);
    assert_eq!(find(0, &is_detect).0, 8 * US);
    // Station 0 is past its 6.4 us preamble: it jams at once, for 32 bits.
    let (_, MacEvent::Jam { start: t0, end: e0 }) = find(0, &is_jam) else {
        unreachable!()
    };
    assert_eq!((t0, e0 - t0), (8 * US, 32 * 100_000));
    // Station 1 detected inside its preamble (3 to 9.4 us): it finishes it first.
    let (_, MacEvent::Jam { start: t1, end: e1 }) = find(1, &is_jam) else {
        unreachable!()
    };
    assert_eq!((t1, e1 - t1), (9 * US + 400_000, 32 * 100_000));
    assert_eq!(r.metrics.get("delivered"), 2.0);
}

/// Two saturated stations at the same place both have a frame at t = 0 and
/// both find the medium idle: a signal is sensed only after it starts, so
/// neither sees the other's as it decides, both send, and both detect the
/// collision at once (docs/model.md, "Carrier sense and deferral").
#[test]
fn colocated_stations_starting_together_collide() {
    for placement in [
        "[medium]\nlength = \"0m\"\n[[stations]]\ncount = 2\n",
        "[[stations]]\ncount = 2\npositions = [\"700m\", \"700m\"]\n",
    ] {
        let sc = scenario(&format!(
            "duration = \"2ms\"\n{placement}frame = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n"
        ));
        let mut log = Log::default();
        let r = ethernet::run_observed(&sc, 1, &mut log);
        crate::common::assert_conserved(&r);
        let first = |station: u32, f: &dyn Fn(&MacEvent) -> bool| {
            log.0
                .iter()
                .find(|(_, s, e)| *s == station && f(e))
                .map(|(t, _, _)| *t)
        };
        let is_start = |e: &MacEvent| matches!(e, MacEvent::TxStart { .. });
        let is_detect = |e: &MacEvent| matches!(e, MacEvent::CollisionDetected { .. });
        for station in 0..2 {
            assert_eq!(first(station, &is_start), Some(0), "{placement}");
            // Detected at once, inside the preamble: the jam follows it.
            assert_eq!(first(station, &is_detect), Some(0), "{placement}");
        }
        assert!(r.metrics.get("collisions") >= 1.0);
        assert!(r.metrics.get("delivered") > 0.0);
    }
}

#[test]
fn over_long_bus_gives_undetected_and_late_collisions() {
    // 10 km: one-way delay 50 us, round trip 100 us. A 64-byte frame with its
    // preamble lasts 57.6 us, shorter than the round trip: collisions can go
    // unseen by the sender but corrupt the frame at its destination.
    let short = scenario(
        "duration = \"2s\"\n[medium]\nlength = \"10km\"\n[[stations]]\ncount = 10\nframe = \"64B\"\ntraffic = { kind = \"poisson\", load = 0.3 }\n",
    );
    let r = run(&short, 1);
    assert!(
        r.metrics.get("undetected_collisions") > 0.0,
        "{:?}",
        r.metrics
    );
    // 1518-byte frames outlast the round trip, so collisions are seen, but
    // some only after the first slot: late collisions.
    let long = scenario(
        "duration = \"2s\"\n[medium]\nlength = \"10km\"\n[[stations]]\ncount = 10\nframe = \"1518B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n",
    );
    let r = run(&long, 1);
    assert!(r.metrics.get("late_collisions") > 0.0, "{:?}", r.metrics);
    assert_eq!(r.metrics.get("undetected_collisions"), 0.0);
    // Within 802.3 limits (2500 m, 64-byte minimum) neither happens.
    let ok = scenario(
        "duration = \"2s\"\n[[stations]]\ncount = 20\nframe = { kind = \"uniform\", min = \"64B\", max = \"1518B\" }\ntraffic = { kind = \"poisson\", load = 0.9 }\n",
    );
    let r = run(&ok, 1);
    assert!(r.metrics.get("collisions") > 100.0);
    assert_eq!(r.metrics.get("undetected_collisions"), 0.0);
    assert_eq!(r.metrics.get("late_collisions"), 0.0);
}

#[test]
fn frames_are_conserved_in_every_traffic_kind() {
    for traffic in [
        "{ kind = \"saturated\" }",
        "{ kind = \"poisson\", load = 1.5 }",
        "{ kind = \"periodic\", rate = 300 }",
        "{ kind = \"burst\", frames = 5, at = \"1ms\" }",
        "{ kind = \"on-off\", load = 0.8, mean_on = \"5ms\", mean_off = \"20ms\" }",
    ] {
        let text = format!(
            "duration = \"300ms\"\nwarmup = \"10ms\"\n[[stations]]\ncount = 12\nqueue = 4\nframe = \"imix\"\ntraffic = {traffic}\n"
        );
        let r = run(&scenario(&text), 3);
        let arrived: u64 = r.stations.iter().map(|s| s.total_arrived).sum();
        assert!(arrived > 0, "{traffic}: nothing arrived");
    }
}

#[test]
fn same_seed_same_result_and_other_seed_differs() {
    let sc = scenario(
        "duration = \"200ms\"\n[[stations]]\ncount = 8\nframe = \"imix\"\ntraffic = { kind = \"poisson\", load = 0.9 }\n",
    );
    let a = run(&sc, 5);
    let b = run(&sc, 5);
    let c = run(&sc, 6);
    assert_eq!(a.metrics, b.metrics);
    assert_ne!(a.metrics, c.metrics);
}

#[test]
fn successful_transmissions_never_overlap_at_any_station() {
    // Within 802.3 limits, a transmission that saw no collision had the bus to
    // itself: at every station's position, successful transmissions are disjoint.
    let sc = scenario(
        "duration = \"500ms\"\n[[stations]]\ncount = 16\nframe = \"imix\"\ntraffic = { kind = \"poisson\", load = 1.2 }\n[[stations]]\ncount = 4\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let mut log = Log::default();
    let r = ethernet::run_observed(&sc, 11, &mut log);
    crate::common::assert_conserved(&r);
    let pos = ethernet::positions(&sc, 11);
    let prop: Vec<i128> = pos
        .iter()
        .map(|x| (x / 2e8 * 1e12).round() as i128)
        .collect();
    let mut started = vec![0u64; pos.len()];
    let mut successes = Vec::new();
    for (t, s, e) in &log.0 {
        match e {
            MacEvent::TxStart { .. } => started[*s as usize] = *t,
            MacEvent::TxSuccess => successes.push((started[*s as usize], *t, *s as usize)),
            _ => {}
        }
    }
    assert!(successes.len() > 1000);
    for at in 0..pos.len() {
        let mut iv: Vec<(i128, i128)> = successes
            .iter()
            .map(|&(a, b, s)| {
                let d = (prop[s] - prop[at]).abs();
                (a as i128 + d, b as i128 + d)
            })
            .collect();
        iv.sort();
        for w in iv.windows(2) {
            assert!(w[0].1 <= w[1].0, "overlap at station {at}: {w:?}");
        }
    }
}

#[test]
fn an_empty_jam_ends_the_transmission_at_its_detection() {
    // With `jam = "0bit"` a colliding sender stops as it detects the
    // collision (after its preamble): the run goes on, the two saturated
    // stations deliver frames, and each collision ends both transmissions.
    let sc = scenario(
        "duration = \"50ms\"\n[medium]\njam = \"0bit\"\n[[stations]]\ncount = 2\nframe = \"1518B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    // Some seeds put a detection inside the preamble (the jam then ends
    // with it), others after it (the transmission ends at the detection).
    for seed in 1..=8 {
        let r = run(&sc, seed);
        // 1518-byte frames take 1.2 ms each: about 40 fit in 50 ms.
        let delivered = r.metrics.get("delivered");
        assert!(delivered >= 30.0, "seed {seed}: delivered {delivered}");
        // Every attempt delivered or collided, but those still under way
        // at the end (one per station at most).
        let settled = delivered + r.metrics.get("collision_involvements");
        let attempts = r.metrics.get("attempts");
        assert!(
            (settled..=settled + 2.0).contains(&attempts),
            "seed {seed}: {attempts} attempts, {settled} settled"
        );
    }
}
