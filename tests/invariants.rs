//! Invariants of the simulator over random valid scenarios (proptest): 1 to 200
//! stations, positions within 802.3 limits, every traffic kind, frame law,
//! backoff policy and access mode, random loads, sizes and durations.
//!
//! Each run is watched through [`ethernet::run_observed`]; from its MAC events the
//! test rebuilds every transmission [start, end) and checks, independently of
//! the simulator's own bookkeeping:
//! - simulated time never goes backwards (events arrive in time order);
//! - frames are conserved at every station;
//! - within 802.3 limits, no successful transmission overlaps any other
//!   signal at any station's position, so nothing is lost undetected;
//! - a frame delivered intact met no other signal at its destination (also
//!   outside 802.3 limits, where undetected collisions are possible);
//! - the medium busy time equals the union of the transmissions inside the
//!   window, and never exceeds the measured interval;
//! - throughput never exceeds the one-station ceiling F/(F + preamble + gap)
//!   by more than the one frame that may straddle the start of the window.
//!
//! A panic anywhere fails the case. `PROPTEST_CASES=n` runs more cases.
//!
//! To add a backoff policy or an access mode: add its TOML to [`BACKOFFS`] or
//! [`ACCESS_MODES`]; every property then covers it.

use crate::common::{assert_conserved, cases, scenario};
use csmacd::engine::Time;
use csmacd::ethernet::Scenario;
use csmacd::ethernet::{self, IndexUse, MacEvent, Observer, RunResult};
use proptest::prelude::*;
use std::collections::HashMap;

/// Backoff policies, as `backoff = ...` values. `{k}` and `{a}` are replaced
/// by a random backoff limit (0..=10) and attempt limit (1..=16).
const BACKOFFS: &[&str] = &[
    "{ kind = \"beb\", backoff_limit = {k}, attempt_limit = {a} }",
    "{ kind = \"exponential\", factor = 1.5, max_window = 64, attempt_limit = {a} }",
    "{ kind = \"fixed\", window = 8, attempt_limit = {a} }",
    "{ kind = \"constant\", delay = \"3slot\", attempt_limit = {a} }",
    "{ kind = \"linear\", base = \"1slot\", attempt_limit = {a} }",
    "{ kind = \"linear-window\", step = 2, attempt_limit = {a} }",
    "{ kind = \"exponential-no-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = {a} }",
    "{ kind = \"additive-jitter\", base = \"1slot\", cap = \"64slot\", jitter = \"2slot\", attempt_limit = {a} }",
    "{ kind = \"compounding-jitter\", base = \"1slot\", cap = \"64slot\", jitter = \"1slot\", attempt_limit = {a} }",
    "{ kind = \"proportional-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = {a} }",
    "{ kind = \"full-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = {a} }",
    "{ kind = \"equal-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = {a} }",
    "{ kind = \"decorrelated-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = {a} }",
    "{ kind = \"geometric\", p = 0.2, attempt_limit = {a} }",
    "{ kind = \"blam\", backoff_limit = {k}, attempt_limit = {a} }",
    "{ kind = \"mild\", attempt_limit = {a} }",
];

/// Access modes, as `[medium] access = ...` values.
const ACCESS_MODES: &[&str] = &[
    "\"csma-cd\"",
    "\"csma-cd-nonpersistent\"",
    "\"csma-cd-p-persistent\"\np = 0.3",
    "\"csma\"",
    "\"aloha\"",
    "\"slotted-aloha\"",
];

/// Bit rates with the longest bus 802.3 allows at each (1BASE5, 10BASE5,
/// 100BASE-T's ~200 m collision domain).
const RATES: &[(&str, f64)] = &[("1Mbps", 2500.0), ("10Mbps", 2500.0), ("100Mbps", 200.0)];

fn traffic(duration_slots: u32) -> BoxedStrategy<String> {
    prop_oneof![
        Just("{ kind = \"saturated\" }".to_string()),
        (0.02f64..3.0).prop_map(|l| format!("{{ kind = \"poisson\", load = {l} }}")),
        (0.02f64..3.0).prop_map(|l| format!("{{ kind = \"periodic\", load = {l} }}")),
        (1u32..=10, 0..duration_slots)
            .prop_map(|(f, at)| format!("{{ kind = \"burst\", frames = {f}, at = \"{at}slot\" }}")),
        (0.02f64..2.0, 1u32..50, 1u32..50, 1.1f64..2.0).prop_map(|(l, on, off, a)| format!(
            "{{ kind = \"on-off\", load = {l}, mean_on = \"{on}slot\", mean_off = \"{off}slot\", alpha = {a} }}"
        )),
    ]
    .boxed()
}

/// Frame laws within `min..=max` bytes.
fn frame(min: u32, max: u32) -> BoxedStrategy<String> {
    let imix = if min <= 64 && max >= 1518 {
        Just("\"imix\"".to_string()).boxed()
    } else {
        (min..=max).prop_map(|b| format!("\"{b}B\"")).boxed()
    };
    prop_oneof![
        (min..=max).prop_map(|b| format!("\"{b}B\"")),
        (min..=max, min..=max).prop_map(|(a, b)| format!(
            "{{ kind = \"uniform\", min = \"{}B\", max = \"{}B\" }}",
            a.min(b),
            a.max(b)
        )),
        prop::collection::vec((min..=max, 1u32..10), 1..4).prop_map(|sw| {
            let sizes: Vec<String> = sw.iter().map(|(s, _)| format!("\"{s}B\"")).collect();
            let weights: Vec<String> = sw.iter().map(|(_, w)| w.to_string()).collect();
            format!(
                "{{ kind = \"mix\", sizes = [{}], weights = [{}] }}",
                sizes.join(", "),
                weights.join(", ")
            )
        }),
        imix,
    ]
    .boxed()
}

fn backoff() -> impl Strategy<Value = String> {
    (prop::sample::select(BACKOFFS), 0u32..=10, 1u32..=16).prop_map(|(b, k, a)| {
        b.replace("{k}", &k.to_string())
            .replace("{a}", &a.to_string())
    })
}

/// One group of stations: count, traffic, frame, backoff, queue, and
/// explicit positions (as fractions of the bus) or none.
fn group(
    max_count: usize,
    duration_slots: u32,
    min_bytes: u32,
    max_bytes: u32,
) -> impl Strategy<Value = (usize, String, String, String, usize, Option<Vec<f64>>)> {
    (1..=max_count).prop_flat_map(move |count| {
        (
            Just(count),
            traffic(duration_slots),
            frame(min_bytes, max_bytes),
            backoff(),
            1usize..=50,
            prop::option::of(prop::collection::vec(0.0f64..=1.0, count)),
        )
    })
}

/// A random scenario as TOML text. `standard`: frames of 64 to 1518 bytes
/// and buses within 802.3's limits; otherwise frames down to 1 byte and buses
/// up to 20 km, where collisions can go undetected.
fn scenario_text(standard: bool) -> impl Strategy<Value = String> {
    (1usize..=3, 50u32..=400)
        .prop_flat_map(move |(ngroups, slots)| {
            let (min_b, max_b) = if standard { (64, 1518) } else { (1, 200) };
            (
                prop::sample::select(RATES),
                0.0f64..=1.0,
                prop::sample::select(ACCESS_MODES),
                prop::bool::ANY,
                Just(slots),
                0.0f64..0.5,
                prop::collection::vec(group(200 / ngroups, slots, min_b, max_b), ngroups),
                any::<u64>(),
            )
        })
        .prop_map(
            move |((rate, max_len), len_frac, access, random, slots, warm, groups, seed)| {
                let length = if standard {
                    max_len * len_frac
                } else {
                    20_000.0 * len_frac
                };
                let mut t = format!(
                    "seed = {}\nduration = \"{slots}slot\"\nwarmup = \"{}slot\"\nnonstandard_frames = {}\n\n\
                     [medium]\nbit_rate = \"{rate}\"\nlength = \"{length}m\"\naccess = {access}\nplacement = \"{}\"\n",
                    seed >> 1,
                    (slots as f64 * warm).floor(),
                    !standard,
                    if random { "random" } else { "even" },
                );
                for (count, tr, fr, bo, queue, pos) in groups {
                    t += &format!(
                        "\n[[stations]]\ncount = {count}\ntraffic = {tr}\nframe = {fr}\nbackoff = {bo}\nqueue = {queue}\n"
                    );
                    if let Some(p) = pos {
                        let p: Vec<String> =
                            p.iter().map(|f| format!("\"{}m\"", f * length)).collect();
                        t += &format!("positions = [{}]\n", p.join(", "));
                    }
                }
                t
            },
        )
}

/// Every MAC event of a run, as reported.
#[derive(Default)]
struct Tape {
    events: Vec<(Time, u32, MacEvent)>,
}

impl Observer for Tape {
    fn on(&mut self, t: Time, station: u32, ev: &MacEvent) {
        self.events.push((t, station, ev.clone()));
    }
}

/// One transmission rebuilt from the events.
#[derive(Clone, Copy, Debug)]
struct Tx {
    station: usize,
    start: Time,
    end: Time,
    success: bool,
    /// A collision was detected (a jam was reported).
    jammed: bool,
    /// A later frame of a burst (its filled gap comes before its preamble).
    in_burst: bool,
}

/// Propagation times from the bus's origin, rounded as the simulator does.
fn props(sc: &Scenario, seed: u64) -> Vec<Time> {
    ethernet::positions(sc, seed)
        .iter()
        .map(|x| (x / sc.medium.speed * 1e12).round() as Time)
        .collect()
}

/// Transmissions whose start lies in `[lo, hi)`, from a list sorted by start.
fn starting_in(txs: &[Tx], lo: Time, hi: Time) -> &[Tx] {
    let a = txs.partition_point(|t| t.start < lo);
    let b = txs.partition_point(|t| t.start < hi);
    &txs[a..b.max(a)]
}

/// The ends of the transmissions still being sent when the run stops (at
/// its duration: no success, no jam reported, and a frame end at or past
/// the duration). Their senders had not yet met the signals already on the
/// wire, but would have: each detects the first foreign signal to reach it
/// before its frame's end and stops after its jam (the preamble finished
/// first, behind the filled gap in a burst; at least a picosecond past the
/// detection when the jam is empty). The frames still in flight are judged
/// at their destinations against these ends: the frame's own end, which no
/// sender would reach, would see collisions that cannot happen. Signals
/// that start after the duration are not simulated, so they cannot bring a
/// detection earlier.
fn cut_at_run_end(sc: &Scenario, txs: &mut [Tx], d: &dyn Fn(usize, usize) -> Time) {
    let m = &sc.medium;
    let full: Vec<Tx> = txs.to_vec();
    for b in txs.iter_mut() {
        if b.success || b.jammed || b.end < sc.duration {
            continue;
        }
        let detect = full
            .iter()
            .filter(|c| c.station != b.station && c.end + d(c.station, b.station) > b.start)
            .map(|c| (c.start + d(c.station, b.station)).max(b.start))
            .min();
        if let Some(at) = detect.filter(|&at| at < b.end) {
            let lead = if b.in_burst { m.ifg_ps } else { 0 } + m.preamble_ps;
            b.end = (at.max(b.start + lead) + m.jam_ps).max(at + 1);
        }
    }
}

/// Runs `sc` and checks every invariant; `standard` adds those that hold only
/// within 802.3's limits.
fn check(sc: &Scenario, seed: u64, standard: bool) -> Result<RunResult, TestCaseError> {
    let mut tape = Tape::default();
    let r = ethernet::run_observed(sc, seed, &mut tape);
    assert_conserved(&r);
    let prop = props(sc, seed);
    let d = |i: usize, j: usize| prop[i].abs_diff(prop[j]);
    let (warmup, duration) = (sc.warmup, sc.duration);

    // Time order, and the transmissions.
    let mut txs: Vec<Tx> = Vec::new();
    let mut current: HashMap<usize, usize> = HashMap::new();
    let mut last = 0;
    let mut gap_at: HashMap<usize, Time> = HashMap::new();
    for (t, st, ev) in &tape.events {
        prop_assert!(*t >= last, "time went back from {last} to {t} at {ev:?}");
        last = *t;
        let st = *st as usize;
        match ev {
            MacEvent::BurstGap { .. } => {
                gap_at.insert(st, *t);
            }
            MacEvent::TxStart { end, .. } => {
                current.insert(st, txs.len());
                txs.push(Tx {
                    station: st,
                    start: *t,
                    end: *end,
                    success: false,
                    jammed: false,
                    in_burst: gap_at.get(&st) == Some(t),
                });
            }
            MacEvent::Jam { end, .. } => {
                let tx = &mut txs[current[&st]];
                tx.end = *end;
                tx.jammed = true;
            }
            MacEvent::TxSuccess => {
                let tx = &mut txs[current[&st]];
                prop_assert_eq!(tx.end, *t, "success reported before the end");
                tx.success = true;
            }
            _ => {}
        }
    }
    if sc.medium.access.detects_collisions() {
        cut_at_run_end(sc, &mut txs, &d);
    }
    // Starts come in time order, so `txs` is sorted by start.
    let max_len = txs.iter().map(|t| t.end - t.start).max().unwrap_or(0);
    let max_d = prop.iter().max().copied().unwrap_or(0) - prop.iter().min().copied().unwrap_or(0);

    // Attempts as counted by the metrics.
    let attempts = txs
        .iter()
        .filter(|t| t.start >= warmup && t.start < duration)
        .count();
    prop_assert_eq!(r.metrics.get("attempts"), attempts as f64);

    // Busy time: the union of the transmissions, clipped to the window.
    let mut busy: u128 = 0;
    let mut reach = warmup;
    for t in &txs {
        let (a, b) = (t.start.max(reach), t.end.min(duration));
        if b > a {
            busy += (b - a) as u128;
        }
        reach = reach.max(t.end.min(duration));
    }
    prop_assert_eq!(
        r.busy_ps,
        busy,
        "busy time is not the union of transmissions"
    );
    prop_assert!(r.busy_ps <= (duration - warmup) as u128);

    // Deliveries: each matches a success of its sender; an intact one met no
    // other signal at its destination.
    let by_end: HashMap<(usize, Time), usize> = txs
        .iter()
        .enumerate()
        .filter(|(_, t)| t.success)
        .map(|(k, t)| ((t.station, t.end), k))
        .collect();
    for (t, st, ev) in &tape.events {
        if let MacEvent::Delivered { dst, intact, .. } = ev {
            let (i, dst) = (*st as usize, *dst as usize);
            let end = t - d(i, dst);
            let Some(&k) = by_end.get(&(i, end)) else {
                return Err(TestCaseError::fail(format!(
                    "delivery at {t} from {i} matches no success"
                )));
            };
            let a = txs[k];
            let (a0, a1) = (a.start + d(i, dst), a.end + d(i, dst));
            let lo = a0.saturating_sub(max_d + max_len);
            let hit = starting_in(&txs, lo, a1).iter().any(|b| {
                !(b.station == a.station && b.start == a.start)
                    && b.start + d(b.station, dst) < a1
                    && a0 < b.end + d(b.station, dst)
            });
            prop_assert_eq!(*intact, !hit, "delivery from {} to {} misjudged", i, dst);
        }
    }

    if standard && sc.medium.access.detects_collisions() {
        // A success is disjoint from every other signal at every position:
        // over positions y, the largest overlap of [s_a + |y - x_a|, e_a + ..)
        // with a later [s_b + |y - x_b|, ..) is at y = x_b, so it suffices
        // that s_b >= e_a + d_ab (and symmetrically).
        for a in txs.iter().filter(|t| t.success) {
            let lo = a.start.saturating_sub(max_len + max_d);
            for b in starting_in(&txs, lo, a.end + max_d + 1) {
                if b.station == a.station && b.start == a.start {
                    continue;
                }
                let dab = d(a.station, b.station);
                let apart = if a.start <= b.start {
                    b.start >= a.end + dab
                } else {
                    a.start >= b.end + dab
                };
                prop_assert!(apart, "success {a:?} overlaps {b:?} somewhere on the bus");
            }
        }
        let lost: u64 = r.stations.iter().map(|s| s.total_lost).sum();
        prop_assert_eq!(lost, 0, "undetected collisions within 802.3 limits");

        // The one-station ceiling: successes end at least preamble + F + gap
        // apart, so delivered bits < c * R * T + F_max, c = F/(F + pre + gap)
        // at F = F_max. In integers: bits * (F + pre + gap) * bit_ps
        // <= F * T_ps + F * (F + pre + gap) * bit_ps.
        let m = &sc.medium;
        let f_max = sc
            .groups
            .iter()
            .map(|g| g.frame.max_bytes())
            .max()
            .unwrap_or(0) as u128
            * 8;
        let over = (m.preamble_ps + m.ifg_ps) as u128 / m.bit_ps as u128;
        let bits: u128 = r.stations.iter().map(|s| s.delivered_bits as u128).sum();
        let t_ps = (duration - warmup) as u128;
        prop_assert!(
            bits * (f_max + over) * m.bit_ps as u128
                <= f_max * t_ps + f_max * (f_max + over) * m.bit_ps as u128,
            "throughput {} above the one-station ceiling",
            r.metrics.get("throughput")
        );
    }
    Ok(r)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_within_802_3_limits(text in scenario_text(true), seed in any::<u64>()) {
        let sc = scenario(&text);
        check(&sc, seed, true)?;
    }

    #[test]
    fn invariants_hold_outside_802_3_limits(text in scenario_text(false), seed in any::<u64>()) {
        let sc = scenario(&text);
        check(&sc, seed, false)?;
    }
}

/// The bus index (used from `ethernet::CROWD` stations up) answers every carrier,
/// deferral, detection and delivery question exactly as the scan over all
/// signals does: the same events in the same order, and the same results.
fn same_with_and_without_index(sc: &Scenario, seed: u64) -> Result<(), TestCaseError> {
    let mut plain = Tape::default();
    let a = ethernet::run_with_index(sc, seed, IndexUse::Off, &mut plain);
    let bits = |r: &RunResult| {
        r.metrics
            .values
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    // Throughout, and taken up and set aside many times in one run (as a
    // crowd's run does a few times); set aside at the run's own threshold
    // too, where transmissions are still under way when it goes (their
    // senders must leave the index with it).
    let busy = IndexUse::WhileBusy {
        attach: 3,
        detach: 2,
    };
    let busy_open = IndexUse::WhileBusy {
        attach: 40,
        detach: 32,
    };
    for index in [IndexUse::On, busy, busy_open] {
        let mut indexed = Tape::default();
        let b = ethernet::run_with_index(sc, seed, index, &mut indexed);
        prop_assert_eq!(plain.events.len(), indexed.events.len());
        for (x, y) in plain.events.iter().zip(&indexed.events) {
            prop_assert_eq!(x, y);
        }
        prop_assert_eq!(a.events, b.events);
        prop_assert_eq!(a.busy_ps, b.busy_ps);
        prop_assert_eq!(&a.stations, &b.stations);
        prop_assert_eq!(bits(&a), bits(&b));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    #[test]
    fn bus_index_is_exact_within_802_3_limits(text in scenario_text(true), seed in any::<u64>()) {
        same_with_and_without_index(&scenario(&text), seed)?;
    }

    #[test]
    fn bus_index_is_exact_outside_802_3_limits(text in scenario_text(false), seed in any::<u64>()) {
        same_with_and_without_index(&scenario(&text), seed)?;
    }
}

/// A crowd released at once, the case the index is for: 2000 stations on a
/// full-length bus (8 leaves of the index's trees, four levels), each with
/// a burst of frames, on every access mode; and on a bus of 20 m, where
/// places rounded to whole picoseconds put many senders at equal
/// distances on both sides of a start (their detections, at the same
/// time, go in the order of their signals).
#[test]
fn bus_index_is_exact_for_crowds() {
    let crowd = |access: &str, length: &str| {
        scenario(&format!(
            "duration = \"3000slot\"\n[medium]\naccess = {access}\nlength = \"{length}\"\nplacement = \"random\"\n\
             [[stations]]\ncount = 2000\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", frames = 2, at = \"0s\" }}\n"
        ))
    };
    for access in ACCESS_MODES {
        same_with_and_without_index(&crowd(access, "2500m"), 7).unwrap();
    }
    same_with_and_without_index(&crowd(ACCESS_MODES[0], "20m"), 7).unwrap();
}

/// Stations that share positions (a bus of 0 m, and 1 m with random places
/// rounded to whole picoseconds) start together and must not sense each
/// other at that instant: the index gives the scan's answers there too.
#[test]
fn bus_index_is_exact_for_colocated_stations() {
    for (length, placement) in [("0m", "even"), ("1m", "random")] {
        let sc = scenario(&format!(
            "duration = \"300slot\"\n[medium]\nlength = \"{length}\"\nplacement = \"{placement}\"\n\
             [[stations]]\ncount = 24\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n"
        ));
        same_with_and_without_index(&sc, 3).unwrap();
    }
}

/// Signals longer than the index holds (a 1518-byte frame at 1 Mb/s is
/// 12 ms on the wire) make a run do without it, with the same results.
#[test]
fn bus_index_gives_way_to_signals_longer_than_it_holds() {
    let sc = scenario(
        "duration = \"200ms\"\n[medium]\nbit_rate = \"1Mbps\"\n\
         [[stations]]\ncount = 8\nframe = \"1518B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    same_with_and_without_index(&sc, 5).unwrap();
}

/// Many saturated stations on a full-length bus: the busiest case, once, with
/// a known seed.
#[test]
fn two_hundred_saturated_stations() {
    let sc = scenario(
        "duration = \"400slot\"\n[[stations]]\ncount = 200\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    check(&sc, 1, true).unwrap();
}

/// Found by the properties: the jam was reported at its start, which lies
/// after the detection when the preamble is unfinished, so an observer saw
/// time go backwards. Now reported at detection, carrying its start.
#[test]
fn regression_jam_is_reported_in_time_order() {
    let sc = scenario(
        "duration = \"100slot\"\n[medium]\nbit_rate = \"1Mbps\"\nlength = \"0m\"\n[[stations]]\ncount = 8\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let mut tape = Tape::default();
    ethernet::run_observed(&sc, 16308714877215693751, &mut tape);
    let mut jams = 0;
    for w in tape.events.windows(2) {
        assert!(w[0].0 <= w[1].0, "{:?} then {:?}", w[0], w[1]);
    }
    for (t, _, ev) in &tape.events {
        if let MacEvent::Jam { start, end } = ev {
            jams += 1;
            assert!(start >= t && end > start);
        }
    }
    assert!(jams > 0);
}

/// Frame bursting at 1 Gb/s, within 802.3's limits: the invariants hold
/// (time order, conservation, no success overlapped anywhere), and the bus
/// index gives the scan's answers, for a crowd released at once and for
/// saturated stations whose bursts meet.
#[test]
fn frame_bursting_keeps_the_invariants_and_the_index_exact() {
    for (count, traffic) in [
        (300, "{ kind = \"burst\", frames = 4, at = \"0s\" }"),
        (24, "{ kind = \"saturated\" }"),
    ] {
        let sc = scenario(&format!(
            "duration = \"300slot\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\nplacement = \"random\"\n\
             [[stations]]\ncount = {count}\nframe = {{ kind = \"uniform\", min = \"64B\", max = \"1518B\" }}\ntraffic = {traffic}\n"
        ));
        check(&sc, 5, true).unwrap();
        same_with_and_without_index(&sc, 5).unwrap();
    }
}

/// Found by the properties: a frame still in flight when the run stops is
/// settled at its destination (station 2, 44 449 099 ps from its sender)
/// against the signals on the wire. Station 2 had started a 127-byte frame
/// at 1 241 278 095 ps (its end 1 252 078 095 ps) and would detect the frame
/// of station 0 sent at 1 202 397 660 ps when it arrived at 1 246 846 759 ps,
/// its jam ending at 1 247 166 759 ps; the run stops at 1 244 160 000 ps,
/// before that detection is reported. The frame of station 0 sent at
/// 1 207 597 660 ps arrives there from 1 252 046 759 ps: intact, as the
/// simulator says, though the end of the frame station 2 never finishes
/// would have overlapped it by 31 336 ps.
#[test]
fn regression_frame_in_flight_at_the_end_meets_cut_signals() {
    let sc = scenario(
        "seed = 0\nduration = \"243slot\"\nwarmup = \"0slot\"\nnonstandard_frames = true\n\
         [medium]\nbit_rate = \"100Mbps\"\nlength = \"19478.999660990394m\"\n\
         access = \"csma-cd-nonpersistent\"\nplacement = \"random\"\n\
         [[stations]]\ncount = 1\ntraffic = { kind = \"on-off\", load = 1.268657455631806, mean_on = \"40slot\", mean_off = \"35slot\", alpha = 1.1 }\n\
         frame = \"45B\"\nbackoff = { kind = \"blam\", backoff_limit = 9, attempt_limit = 3 }\nqueue = 1\n\
         positions = [\"10869.569057912315m\"]\n\
         [[stations]]\ncount = 1\ntraffic = { kind = \"poisson\", load = 0.5573383811582597 }\nframe = \"12B\"\n\
         backoff = { kind = \"geometric\", p = 0.2, attempt_limit = 6 }\nqueue = 3\npositions = [\"1533.6858609202218m\"]\n\
         [[stations]]\ncount = 1\ntraffic = { kind = \"burst\", frames = 1, at = \"223slot\" }\n\
         frame = { kind = \"uniform\", min = \"103B\", max = \"132B\" }\n\
         backoff = { kind = \"equal-jitter\", base = \"1slot\", cap = \"64slot\", attempt_limit = 4 }\nqueue = 1\n\
         positions = [\"1979.749299177457m\"]\n",
    );
    let seed = 16460338311661047451;
    let mut tape = Tape::default();
    ethernet::run_observed(&sc, seed, &mut tape);
    let at = |t: Time, st: u32| tape.events.iter().filter(move |e| e.0 == t && e.1 == st);
    assert!(at(1_241_278_095, 2).any(|e| matches!(
        e.2,
        MacEvent::TxStart {
            end: 1_252_078_095,
            ..
        }
    )));
    assert!(at(1_256_286_759, 0).any(|e| matches!(
        e.2,
        MacEvent::Delivered {
            dst: 2,
            intact: true,
            ..
        }
    )));
    assert!(tape
        .events
        .iter()
        .all(|e| e.0 <= sc.duration || matches!(e.2, MacEvent::Delivered { .. })));
    check(&sc, seed, false).unwrap();
}
