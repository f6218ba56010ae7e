//! The half-duplex standards (`[medium] standard`): the values each one
//! sets, single keys overriding them, the refusal of speeds that have no
//! half duplex, and one saturated station's share of the bit rate on each
//! against its closed form (docs/model.md, "Standards").

use crate::common::{run, scenario};
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
