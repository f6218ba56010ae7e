//! The half-duplex standards (`[medium] standard`): the values each one
//! sets, single keys overriding them, the refusal of speeds that have no
//! half duplex, and one saturated station's share of the bit rate on each
//! against its closed form (docs/model.md, "Standards").

use crate::common::{self, run, scenario};
use csmacd::ethernet::{self, MacEvent, Observer, Standard};

/// The parameters 802.3 gives each standard (docs/model.md, "Standards").
#[test]
fn each_standard_sets_its_medium() {
    for (name, rate, slot_bits, speed, length) in [
        ("10BASE5", 10e6, 512, 0.77 * 299_792_458.0, 500.0),
        ("10BASE2", 10e6, 512, 0.65 * 299_792_458.0, 185.0),
        ("10BASE-T", 10e6, 512, 0.585 * 299_792_458.0, 100.0),
        ("100BASE-TX", 100e6, 512, 1.0 / 5.56e-9, 100.0),
        ("1000BASE-T", 1e9, 4096, 1.0 / 5.56e-9, 100.0),
    ] {
        let sc = scenario(&format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"{name}\"\n\
             [[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n"
        ));
        let m = &sc.medium;
        let bit_ps = (1e12 / rate) as u64;
        assert_eq!(m.bit_rate, rate, "{name}");
        assert_eq!(m.bit_ps, bit_ps, "{name}");
        assert_eq!(m.slot_ps, slot_bits * bit_ps, "{name}");
        assert_eq!(m.preamble_ps, 64 * bit_ps, "{name}");
        assert_eq!(m.ifg_ps, 96 * bit_ps, "{name}");
        assert_eq!(m.jam_ps, 32 * bit_ps, "{name}");
        assert_eq!((m.min_frame_bytes, m.max_frame_bytes), (64, 1518), "{name}");
        assert!((m.speed - speed).abs() < 1.0, "{name}: {}", m.speed);
        assert_eq!(m.length_m, length, "{name}");
        assert!(Standard::by_name(name).is_some());
    }
}

#[test]
fn a_single_key_overrides_the_standard() {
    let sc = scenario(
        "duration = \"1ms\"\n[medium]\nstandard = \"100BASE-TX\"\nlength = \"20m\"\nslot = \"1024bit\"\n\
         [[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    assert_eq!(sc.medium.bit_rate, 100e6);
    assert_eq!(sc.medium.length_m, 20.0);
    assert_eq!(sc.medium.slot_ps, 1024 * 10_000);
    assert_eq!(sc.medium.ifg_ps, 96 * 10_000);
}

#[test]
fn half_duplex_above_a_gigabit_is_refused_naming_what_is_allowed() {
    for (name, why) in [
        ("10GBASE-T", "full duplex"),
        ("token-ring", "not a half-duplex"),
    ] {
        let text = format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"{name}\"\n\
             [[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n"
        );
        let e = csmacd::scenario::bus_from_str("s.toml", "s", &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.toml:3"), "{e}");
        assert!(e.contains("medium.standard") && e.contains(why), "{e}");
        assert!(e.contains("10BASE5") && e.contains("1000BASE-T"), "{e}");
    }
}

/// One saturated station never collides: it sends a frame of F bits, its
/// preamble (64 bits) and its gap (96 bits) over and over, so its share of
/// the bit rate is F / (F + 64 + 96) on every standard: 0.7619 for 64 B,
/// 0.98700 for 1518 B (at 1 Gb/s without carrier extension). Over a whole
/// number of cycles the run gives it to rounding.
#[test]
fn one_saturated_station_gets_f_over_f_plus_preamble_and_gap_on_every_standard() {
    for std in Standard::ALL {
        for bytes in [64u64, 1518] {
            let f = 8 * bytes;
            let cycles = 5_000;
            let sc = scenario(&format!(
                "duration = \"{}bit\"\n[medium]\nstandard = \"{}\"\ncarrier_extension = false\n\
                 [[stations]]\ncount = 1\nframe = \"{bytes}B\"\ntraffic = {{ kind = \"saturated\" }}\n",
                cycles * (f + 160),
                std.name
            ));
            let r = run(&sc, 1);
            let expected = f as f64 / (f + 64 + 96) as f64;
            let got = r.metrics.get("throughput");
            assert!(
                (got - expected).abs() < 1e-6,
                "{} {bytes} B: {got} vs {expected}",
                std.name
            );
            assert_eq!(r.metrics.get("collisions"), 0.0);
        }
    }
}

/// Carrier extension at 1 Gb/s: a 64-byte frame (512 bits) keeps the carrier
/// up to a slot (4096 bits) after its preamble, so one saturated station's
/// cycle is 64 + 4096 + 96 bits for 512 bits of frame:
/// 64·8 / ((8 + 512)·8 + 96) = 0.1203. Frames of a slot or more are not
/// extended: 1518 B still gets 12144 / 12304 = 0.98700.
#[test]
fn carrier_extension_gives_one_station_512_over_4256_for_64_byte_frames() {
    for (bytes, cycle_bits, expected) in [
        (64u64, 64 + 4096 + 96, 512.0 / 4256.0),
        (1518, 64 + 12144 + 96, 12144.0 / 12304.0),
    ] {
        let sc = scenario(&format!(
            "duration = \"{}bit\"\n[medium]\nstandard = \"1000BASE-T\"\n\
             [[stations]]\ncount = 1\nframe = \"{bytes}B\"\ntraffic = {{ kind = \"saturated\" }}\n",
            5_000 * cycle_bits
        ));
        assert!(sc.medium.carrier_extension);
        let got = run(&sc, 1).metrics.get("throughput");
        assert!(
            (got - expected).abs() < 1e-6,
            "{bytes} B: {got} vs {expected}"
        );
    }
    assert!((512.0f64 / 4256.0 - 0.1203).abs() < 5e-5);
}

/// Collects every MAC event of a run.
#[derive(Default)]
struct Log(Vec<(u64, u32, MacEvent)>);

impl Observer for Log {
    fn on(&mut self, t: u64, station: u32, ev: &MacEvent) {
        self.0.push((t, station, ev.clone()));
    }
}

/// The sender watches for collisions through the extension. Station 0 at
/// 0 m sends a 64-byte frame at t = 0 (preamble and frame end at 576 ns);
/// station 1 at 100 m (556 ns away at 5.56 ns/m) starts at 100 ns, before
/// station 0's signal reaches it. Its signal reaches station 0 at 656 ns:
/// inside the extension (which lasts to 64 + 4096 = 4160 ns), so station 0
/// detects the collision there, not late. Without extension station 0 has
/// finished at 576 ns and never knows: its frame is lost undetected.
#[test]
fn a_collision_during_the_extension_is_detected_and_not_late() {
    for extension in [true, false] {
        let sc = scenario(&format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"1000BASE-T\"\ncarrier_extension = {extension}\n\
             [[stations]]\ncount = 1\npositions = [\"0m\"]\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"0ns\" }}\n\
             [[stations]]\ncount = 1\npositions = [\"100m\"]\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"100ns\" }}\n"
        ));
        let mut log = Log::default();
        let r = ethernet::run_observed(&sc, 1, &mut log);
        let detect = log.0.iter().find_map(|(t, s, e)| match e {
            MacEvent::CollisionDetected { late } if *s == 0 => Some((*t, *late)),
            _ => None,
        });
        if extension {
            assert_eq!(detect, Some((656_000, false)));
            assert_eq!(r.metrics.get("undetected_collisions"), 0.0);
            assert_eq!(r.metrics.get("delivered"), 2.0);
        } else {
            assert_eq!(detect, None);
            assert!(r.metrics.get("undetected_collisions") >= 1.0);
        }
    }
}

/// One saturated station's share of the bit rate with frame bursting
/// (docs/model.md, "Frame bursting"): the burst's first transmission is
/// 64 + max(F, 4096) bits, each later one 96 (filled gap) + 64 + F bits, a
/// later frame is sent when the previous transmission ends before the
/// 65 536-bit limit (counted from the start of the first), and the burst
/// ends with the normal 96-bit gap. Returns (frames per burst, cycle bits).
fn burst_cycle(f: u64) -> (u64, u64) {
    let (first, later, limit) = (64 + f.max(4096), 96 + 64 + f, 65_536);
    let n_later = if first >= limit {
        0
    } else {
        (limit - first - 1) / later + 1
    };
    (1 + n_later, first + n_later * later + 96)
}

#[test]
fn frame_bursting_gives_one_station_the_burst_cycles_share() {
    // 64 B: 1 + 92 frames per burst, 47 616 bits in 66 080 bit times.
    assert_eq!(burst_cycle(512), (93, 66_080));
    assert!((93.0 * 512.0 / 66_080.0 - 0.720_581_113_801_453_f64).abs() < 1e-12);
    for bytes in [64u64, 512, 1518] {
        let f = 8 * bytes;
        let (frames, cycle) = burst_cycle(f);
        let sc = scenario(&format!(
            "duration = \"{}bit\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\n\
             [[stations]]\ncount = 1\nframe = \"{bytes}B\"\ntraffic = {{ kind = \"saturated\" }}\n",
            500 * cycle
        ));
        let r = run(&sc, 1);
        let expected = (frames * f) as f64 / cycle as f64;
        let got = r.metrics.get("throughput");
        assert!(
            (got - expected).abs() < 1e-9,
            "{bytes} B: {got} vs {expected}"
        );
        assert_eq!(r.metrics.get("delivered"), (500 * frames) as f64);
        assert_eq!(r.metrics.get("collisions"), 0.0);
    }
}

/// `burst_limit` overrides the 65 536 bit times: with 8192 bits a 64-byte
/// burst carries 1 + ceil((8192 - 4160) / 672) = 7 frames.
#[test]
fn the_burst_limit_can_be_overridden() {
    let cycle = 4160 + 6 * 672 + 96;
    let sc = scenario(&format!(
        "duration = \"{}bit\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\nburst_limit = \"8192bit\"\n\
         [[stations]]\ncount = 1\nframe = \"64B\"\ntraffic = {{ kind = \"saturated\" }}\n",
        500 * cycle
    ));
    let got = run(&sc, 1).metrics.get("throughput");
    let expected = 7.0 * 512.0 / cycle as f64;
    assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
}

/// Two saturated stations bursting against each other: the other station
/// keeps deferring through a burst's filled gaps, so no frame is lost
/// unseen, no collision is late, and every frame is accounted for
/// (delivered, dropped at the attempt limit or still queued: `run` checks
/// it). Drops at the attempt limit do happen: a station that wins holds the
/// medium for a whole burst while the loser's backoff grows (the capture
/// effect, stronger with bursts).
#[test]
fn two_stations_bursting_against_each_other_lose_nothing() {
    for seed in 1..=5 {
        let sc = scenario(
            "duration = \"20ms\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\n\
             [[stations]]\ncount = 2\npositions = [\"0m\", \"100m\"]\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
        );
        let r = run(&sc, seed);
        assert_eq!(r.metrics.get("undetected_collisions"), 0.0, "seed {seed}");
        assert_eq!(r.metrics.get("late_collisions"), 0.0, "seed {seed}");
        assert!(r.metrics.get("delivered") > 10_000.0, "seed {seed}");
        // Bursts carry the bit rate far above the 0.12 of extension alone.
        assert!(r.metrics.get("throughput") > 0.6, "seed {seed}");
    }
}

/// With `frame_bursting = false` (the default) a run is the run without
/// the key; tests/golden.rs holds the outputs byte for byte.
#[test]
fn bursting_off_changes_nothing() {
    for text in [
        "duration = \"2ms\"\n[medium]\nstandard = \"1000BASE-T\"\n\
         [[stations]]\ncount = 4\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
        "duration = \"20ms\"\n[medium]\n\
         [[stations]]\ncount = 5\nframe = \"512B\"\ntraffic = { kind = \"poisson\", load = 0.8 }\n",
    ] {
        let off = text.replace("[medium]\n", "[medium]\nframe_bursting = false\n");
        let (a, b) = (run(&scenario(text), 3), run(&scenario(&off), 3));
        assert_eq!(a.metrics, b.metrics);
    }
}

/// A collision detected after a burst's first frame is late. On a bus too
/// long for the slot (1000 m, 5560 ns end to end) station 0 at 0 m starts a
/// burst of 20 frames at t = 0 and station 1 at 1000 m sends at 5000 ns,
/// before station 0's carrier reaches it. Station 1's signal reaches
/// station 0 at 10 560 ns, inside its tenth frame (4160 + 9 x 672 = 10 208
/// to 10 880 ns): late. Without bursting station 0 is then 2048 ns into its
/// third transmission (8512 to 12 672 ns), within the slot: not late.
#[test]
fn a_collision_after_the_first_frame_of_a_burst_is_late() {
    for bursting in [true, false] {
        let sc = scenario(&format!(
            "duration = \"1ms\"\n[medium]\nstandard = \"1000BASE-T\"\nlength = \"1000m\"\nframe_bursting = {bursting}\n\
             [[stations]]\ncount = 1\npositions = [\"0m\"]\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", frames = 20, at = \"0ns\" }}\n\
             [[stations]]\ncount = 1\npositions = [\"1000m\"]\nframe = \"64B\"\ntraffic = {{ kind = \"burst\", at = \"5000ns\" }}\n"
        ));
        let mut log = Log::default();
        let r = ethernet::run_observed(&sc, 1, &mut log);
        common::assert_conserved(&r);
        let detect = log.0.iter().find_map(|(t, s, e)| match e {
            MacEvent::CollisionDetected { late } if *s == 0 => Some((*t, *late)),
            _ => None,
        });
        assert_eq!(detect, Some((10_560_000, bursting)), "bursting {bursting}");
        assert_eq!(r.metrics.get("late_collisions") >= 1.0, bursting);
    }
}

/// The trace shows each filled gap of a burst: one saturated station with
/// 64-byte frames fills 92 gaps per burst of 93 frames, each 96 bit times
/// (96 ns) long, and the frame's transmission starts with it.
#[test]
fn the_trace_shows_each_filled_gap_of_a_burst() {
    use csmacd::teach::trace::{self, TraceFilter, TraceKind};
    let sc = scenario(
        "duration = \"66080bit\"\n[medium]\nstandard = \"1000BASE-T\"\nframe_bursting = true\n\
         [[stations]]\ncount = 1\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let rows = trace::collect(&sc, 1, TraceFilter::new(&sc, sc.duration, None));
    let gaps: Vec<_> = rows
        .iter()
        .filter_map(|r| match r.kind {
            TraceKind::BurstGap { end } => Some((r.t, end)),
            _ => None,
        })
        .collect();
    assert_eq!(gaps.len(), 92);
    assert_eq!(gaps[0], (4_160_000, 4_256_000));
    assert!(gaps.iter().all(|&(t, end)| end - t == 96_000));
    assert!(rows.iter().any(|r| r.kind.name() == "burst-gap"));
}
