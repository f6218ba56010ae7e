//! Backoff policies: each policy's draws follow its formula (chi-square or
//! Kolmogorov-Smirnov on many draws with a fixed seed), caps and attempt
//! limits hold, draws repeat for a seed; and the policies' behaviour on the
//! bus: synchronised retries without jitter, the capture effect, groups.
//!
//! Significance: every goodness-of-fit test uses level 0.001 (critical value
//! from the chi-square quantile, or 1.949/sqrt(n) for KS), so with fixed seeds
//! a correct draw fails with probability 1/1000 per test before the seed is
//! fixed, and never after.

use csmacd::backoff::{BackoffSpec, BackoffState, ChannelHistory};
use csmacd::engine::Time;
use csmacd::ethernet;
use csmacd::scenario;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ChiSquared, ContinuousCDF};

const SLOT: Time = 51_200_000;
const N: usize = 20_000;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Chi-square goodness of fit of integer draws to `probs` (cells 0..probs.len()).
fn chi_square_ok(draws: &[u64], probs: &[f64]) {
    let mut counts = vec![0f64; probs.len()];
    for &d in draws {
        assert!((d as usize) < probs.len(), "draw {d} outside the support");
        counts[d as usize] += 1.0;
    }
    let n = draws.len() as f64;
    let stat: f64 = counts
        .iter()
        .zip(probs)
        .map(|(c, p)| (c - n * p).powi(2) / (n * p))
        .sum();
    let crit = ChiSquared::new((probs.len() - 1) as f64)
        .unwrap()
        .inverse_cdf(0.999);
    assert!(stat < crit, "chi-square {stat:.2} >= {crit:.2}");
}

/// One-sample KS test of values in [0, 1] against the uniform law.
fn ks_uniform_ok(mut u: Vec<f64>) {
    u.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = u.len() as f64;
    let d = u
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            assert!((0.0..=1.0).contains(&x), "{x} outside [0, 1]");
            (x - i as f64 / n).max((i + 1) as f64 / n - x)
        })
        .fold(0.0, f64::max);
    // Asymptotic KS critical value at level 0.001.
    let crit = 1.949 / n.sqrt();
    assert!(d < crit, "KS D = {d:.4} >= {crit:.4}");
}

fn draws(spec: &BackoffSpec, n: u32, seed: u64) -> Vec<Time> {
    let ch = ChannelHistory::default();
    let mut r = rng(seed);
    (0..N)
        .map(|_| {
            let mut st = BackoffState::new(spec);
            st.draw(spec, n, SLOT, &ch, 0, &mut r).unwrap().delay
        })
        .collect()
}

fn slots(d: &[Time]) -> Vec<u64> {
    d.iter()
        .map(|&x| {
            assert_eq!(x % SLOT, 0);
            x / SLOT
        })
        .collect()
}

fn uniform(w: usize) -> Vec<f64> {
    vec![1.0 / w as f64; w]
}

#[test]
fn slot_window_policies_are_uniform_on_their_windows() {
    let beb = BackoffSpec::beb();
    chi_square_ok(&slots(&draws(&beb, 3, 1)), &uniform(8));
    chi_square_ok(&slots(&draws(&beb, 14, 2)), &uniform(1024));
    // factor 1.5, n = 4: W = ceil(5.0625) = 6.
    let exp = BackoffSpec::Exponential {
        factor: 1.5,
        max_window: 1024,
        attempt_limit: 16,
    };
    chi_square_ok(&slots(&draws(&exp, 4, 3)), &uniform(6));
    // Truncated: 3^10 > 50.
    let exp = BackoffSpec::Exponential {
        factor: 3.0,
        max_window: 50,
        attempt_limit: 16,
    };
    chi_square_ok(&slots(&draws(&exp, 10, 4)), &uniform(50));
    let fixed = BackoffSpec::Fixed {
        window: 10,
        attempt_limit: 16,
    };
    chi_square_ok(&slots(&draws(&fixed, 1, 5)), &uniform(10));
    chi_square_ok(&slots(&draws(&fixed, 9, 6)), &uniform(10));
    // step 2, n = 3: 0..=6.
    let lw = BackoffSpec::LinearWindow {
        step: 2,
        attempt_limit: 16,
    };
    chi_square_ok(&slots(&draws(&lw, 3, 7)), &uniform(7));
}

#[test]
fn geometric_draws_follow_the_geometric_law() {
    let p = 0.3;
    let spec = BackoffSpec::Geometric {
        p,
        attempt_limit: 16,
    };
    // Cells 0..14 and a tail cell for r >= 15.
    let r: Vec<u64> = slots(&draws(&spec, 1, 8))
        .into_iter()
        .map(|x| x.min(15))
        .collect();
    let mut probs: Vec<f64> = (0..15).map(|k| (1.0 - p).powi(k) * p).collect();
    probs.push((1.0 - p).powi(15));
    chi_square_ok(&r, &probs);
}

#[test]
fn deterministic_policies_give_their_formula() {
    let ch = ChannelHistory::default();
    let mut r = rng(9);
    let check = |spec: BackoffSpec, expect: &dyn Fn(u32) -> Time, r: &mut ChaCha8Rng| {
        let mut st = BackoffState::new(&spec);
        for n in 1..=20 {
            assert_eq!(
                st.draw(&spec, n, SLOT, &ch, 0, r).unwrap().delay,
                expect(n),
                "{spec:?} n={n}"
            );
        }
    };
    check(
        BackoffSpec::Constant {
            delay: 7_000,
            attempt_limit: 16,
        },
        &|_| 7_000,
        &mut r,
    );
    check(
        BackoffSpec::Linear {
            base: 300,
            attempt_limit: 16,
        },
        &|n| 300 * n as Time,
        &mut r,
    );
    check(
        BackoffSpec::ExponentialNoJitter {
            base: 100,
            cap: 30_000,
            attempt_limit: 16,
        },
        &|n| (100u64 << (n - 1)).min(30_000),
        &mut r,
    );
}

fn t_of(base: Time, cap: Time, n: u32) -> Time {
    (base << (n - 1)).min(cap)
}

#[test]
fn jitter_policies_follow_their_formulas() {
    let (base, cap, jitter) = (100_000, 3_000_000, 100_000);
    for n in [1, 3, 6, 9] {
        let t = t_of(base, cap, n);
        let add = BackoffSpec::AdditiveJitter {
            base,
            cap,
            jitter,
            cap_after_jitter: false,
            attempt_limit: 16,
        };
        ks_uniform_ok(
            draws(&add, n, 10 + n as u64)
                .iter()
                .map(|&d| (d - t) as f64 / jitter as f64)
                .collect(),
        );
        let full = BackoffSpec::FullJitter {
            base,
            cap,
            attempt_limit: 16,
        };
        ks_uniform_ok(
            draws(&full, n, 20 + n as u64)
                .iter()
                .map(|&d| d as f64 / t as f64)
                .collect(),
        );
        let equal = BackoffSpec::EqualJitter {
            base,
            cap,
            attempt_limit: 16,
        };
        ks_uniform_ok(
            draws(&equal, n, 30 + n as u64)
                .iter()
                .map(|&d| (d - t / 2) as f64 / (t - t / 2) as f64)
                .collect(),
        );
        let prop = BackoffSpec::ProportionalJitter {
            base,
            cap,
            f: 0.2,
            attempt_limit: 16,
        };
        // (d/t - 1)/f is uniform on (-1, 1); rounding to a picosecond moves it
        // by at most 1/(0.2 t) = 5e-5, far below the KS resolution.
        ks_uniform_ok(
            draws(&prop, n, 40 + n as u64)
                .iter()
                .map(|&d| ((d as f64 / t as f64 - 1.0) / 0.2 + 1.0) / 2.0)
                .map(|x| x.clamp(0.0, 1.0))
                .collect(),
        );
    }
    // cap_after_jitter: the cap holds after the jitter; once base * 2^(n-1)
    // passes the cap every draw is the cap.
    let capped = BackoffSpec::AdditiveJitter {
        base,
        cap,
        jitter,
        cap_after_jitter: true,
        attempt_limit: 16,
    };
    assert!(draws(&capped, 5, 50).iter().all(|&d| d <= cap));
    assert!(draws(&capped, 7, 51).iter().all(|&d| d == cap));
    // Without it the cap applies before the jitter.
    let uncapped = BackoffSpec::AdditiveJitter {
        base,
        cap,
        jitter,
        cap_after_jitter: false,
        attempt_limit: 16,
    };
    let d = draws(&uncapped, 9, 52);
    assert!(d.iter().all(|&x| (cap..=cap + jitter).contains(&x)));
}

#[test]
fn proportional_jitter_is_floored_at_zero() {
    // f = 2: 1 + U(-2, 2) < 0 with probability 1/4. Binomial bound: 4 sd of
    // the fraction of zeros over N draws is 4 sqrt(0.25 * 0.75 / N) = 0.0122.
    let spec = BackoffSpec::ProportionalJitter {
        base: 1_000_000,
        cap: 1_000_000,
        f: 2.0,
        attempt_limit: 16,
    };
    let d = draws(&spec, 1, 53);
    let zeros = d.iter().filter(|&&x| x == 0).count() as f64 / N as f64;
    assert!((zeros - 0.25).abs() < 4.0 * (0.25f64 * 0.75 / N as f64).sqrt());
}

#[test]
fn compounding_and_decorrelated_jitter_follow_the_previous_delay() {
    let (base, cap, jitter) = (100_000u64, 5_000_000u64, 50_000u64);
    let spec = BackoffSpec::CompoundingJitter {
        base,
        cap,
        factor: 1.7,
        jitter,
        attempt_limit: 16,
    };
    let ch = ChannelHistory::default();
    let mut r = rng(60);
    let mut residuals = Vec::new();
    for _ in 0..2_000 {
        let mut st = BackoffState::new(&spec);
        let mut prev: Option<Time> = None;
        for n in 1..=10 {
            let d = st.draw(&spec, n, SLOT, &ch, 0, &mut r).unwrap().delay;
            let grown = match prev {
                None => base,
                Some(p) => ((p as f64 * 1.7).round() as Time).min(cap),
            };
            assert!(d >= grown && d <= grown + jitter, "n={n}: {d} vs {grown}");
            residuals.push((d - grown) as f64 / jitter as f64);
            prev = Some(d);
        }
        // A new frame starts from base again.
        st.on_success(&spec, 1, &Default::default());
        let d = st.draw(&spec, 1, SLOT, &ch, 0, &mut r).unwrap().delay;
        assert!(d >= base && d <= base + jitter);
    }
    ks_uniform_ok(residuals);

    let spec = BackoffSpec::DecorrelatedJitter {
        base,
        cap,
        attempt_limit: 16,
    };
    let mut u = Vec::new();
    for _ in 0..2_000 {
        let mut st = BackoffState::new(&spec);
        let mut prev = base;
        for n in 1..=10 {
            let d = st.draw(&spec, n, SLOT, &ch, 0, &mut r).unwrap().delay;
            let hi = prev * 3;
            assert!(
                d >= base && d <= hi.min(cap),
                "{d} outside [{base}, {}]",
                hi.min(cap)
            );
            if hi <= cap {
                u.push((d - base) as f64 / (hi - base) as f64);
            }
            prev = d;
        }
    }
    ks_uniform_ok(u);
}

#[test]
fn blam_windows_follow_the_channel_and_mild_keeps_its_window() {
    let spec = BackoffSpec::Blam {
        backoff_limit: 10,
        attempt_limit: 16,
    };
    let mut ch = ChannelHistory::default();
    ch.observe_collision(0, 10);
    ch.observe_collision(20, 30);
    ch.observe_collision(40, 50);
    let mut r = rng(70);
    let mut st = BackoffState::new(&spec);
    // Three collisions on the channel since its last success: window 8,
    // whatever the station's own count.
    let d: Vec<u64> = (0..N)
        .map(|_| st.draw(&spec, 1, SLOT, &ch, 0, &mut r).unwrap().r.unwrap())
        .collect();
    chi_square_ok(&d, &uniform(8));
    ch.observe_success();
    ch.observe_collision(60, 70);
    let d: Vec<u64> = (0..N)
        .map(|_| st.draw(&spec, 9, SLOT, &ch, 0, &mut r).unwrap().r.unwrap())
        .collect();
    chi_square_ok(&d, &uniform(2));

    let spec = BackoffSpec::Mild {
        min_window: 2,
        max_window: 1024,
        factor: 1.5,
        decrease: 1,
        attempt_limit: 16,
    };
    let mut st = BackoffState::new(&spec);
    st.on_collision(&spec, 1, &Default::default()); // 3
    st.on_collision(&spec, 1, &Default::default()); // 5
    assert_eq!(st.mild_window(), 5);
    let d: Vec<u64> = (0..N)
        .map(|_| st.draw(&spec, 1, SLOT, &ch, 0, &mut r).unwrap().r.unwrap())
        .collect();
    chi_square_ok(&d, &uniform(5));
    // The window outlives the frame: a discard keeps it, a success lowers it by one.
    st.on_discard(&spec);
    assert_eq!(st.mild_window(), 5);
    st.on_success(&spec, 1, &Default::default());
    assert_eq!(st.mild_window(), 4);
}

#[test]
fn draws_repeat_for_a_seed() {
    for text in [
        "beb",
        "full-jitter",
        "decorrelated-jitter",
        "geometric",
        "mild",
    ] {
        let sc = two_stations(&format!("{{ kind = \"{text}\" }}"), "saturated", "2s");
        let a = ethernet::run(&sc, 11);
        let b = ethernet::run(&sc, 11);
        assert_eq!(a.metrics, b.metrics, "{text}");
        assert_eq!(a.stations, b.stations, "{text}");
    }
}

fn two_stations(backoff: &str, traffic: &str, duration: &str) -> csmacd::ethernet::Scenario {
    let text = format!(
        "duration = \"{duration}\"\n\
         [[stations]]\ncount = 2\ntraffic = {{ kind = \"{traffic}\" }}\nframe = \"1518B\"\nbackoff = {backoff}\n"
    );
    scenario::bus_from_str("test.toml", "test", &text).unwrap()
}

#[test]
fn synchronised_deterministic_retries_collide_until_discarded_and_jitter_resolves() {
    // Two stations at the two ends of the bus each get one frame at t = 0:
    // they start together, detect together, jam together. Without jitter their
    // waits are equal, so they start together again, every time, until the
    // attempt limit discards both frames. Full jitter separates them.
    let sync = "{ kind = \"burst\", frames = 1, at = \"0s\" }";
    let run = |backoff: &str| {
        let text = format!(
            "duration = \"1s\"\n\
             [[stations]]\ncount = 2\ntraffic = {sync}\nframe = \"1518B\"\nbackoff = {backoff}\n"
        );
        let sc = scenario::bus_from_str("t.toml", "t", &text).unwrap();
        ethernet::run(&sc, 1)
    };
    let r = run("{ kind = \"exponential-no-jitter\", base = \"1slot\", cap = \"64slot\" }");
    assert_eq!(r.metrics.get("delivered"), 0.0);
    assert_eq!(r.metrics.get("dropped_excessive"), 2.0);
    // Every attempt collided: 16 each.
    assert_eq!(r.metrics.get("attempts"), 32.0);
    assert_eq!(r.metrics.get("collisions"), 16.0);
    assert_eq!(r.metrics.get("collision_involvements"), 32.0);
    let r = run("{ kind = \"full-jitter\", base = \"1slot\", cap = \"64slot\" }");
    assert_eq!(r.metrics.get("delivered"), 2.0);
    assert_eq!(r.metrics.get("dropped_excessive"), 0.0);
}

#[test]
fn attempt_limit_holds_on_the_bus() {
    // Deterministic equal waits keep two synchronised stations colliding: each
    // frame is discarded after exactly attempt_limit collisions.
    for limit in [1u32, 3, 7] {
        let text = format!(
            "duration = \"1s\"\n[[stations]]\ncount = 2\n\
             traffic = {{ kind = \"burst\", frames = 2, at = \"0s\" }}\nframe = \"64B\"\n\
             backoff = {{ kind = \"constant\", delay = \"2slot\", attempt_limit = {limit} }}\n"
        );
        let sc = scenario::bus_from_str("t.toml", "t", &text).unwrap();
        let r = ethernet::run(&sc, 1);
        assert_eq!(r.metrics.get("dropped_excessive"), 4.0);
        assert_eq!(r.metrics.get("collisions"), 2.0 * limit as f64);
        assert_eq!(r.metrics.get("collision_involvements"), 4.0 * limit as f64);
        assert!(r.stations.iter().all(|s| s.conserves_frames()));
    }
}

#[test]
fn blam_shortens_capture_runs_and_cuts_excessive_collision_drops() {
    // Two saturated stations, 1518-byte frames, 5 replications of 10 s (1 s
    // warm-up). Measured (seed 1): beb capture_mean_run 129.8, 46 frames
    // dropped per run; blam 2.0 and 22.2. The bounds below are far from
    // both, so they test the mechanism, not the seed.
    let mean = |kind: &str, col: &str| {
        let text = format!(
            "duration = \"10s\"\nwarmup = \"1s\"\n[[stations]]\ncount = 2\n\
             traffic = {{ kind = \"saturated\" }}\nframe = \"1518B\"\nbackoff = {{ kind = \"{kind}\" }}\n"
        );
        let sc = scenario::bus_from_str("t.toml", "t", &text).unwrap();
        (0..5)
            .map(|r| {
                ethernet::run(&sc, csmacd::seed::replication_seed(1, r))
                    .metrics
                    .get(col)
            })
            .sum::<f64>()
            / 5.0
    };
    let beb_run = mean("beb", "capture_mean_run");
    let beb_drop = mean("beb", "dropped_excessive");
    let blam_run = mean("blam", "capture_mean_run");
    let blam_drop = mean("blam", "dropped_excessive");
    assert!(beb_run >= 10.0, "beb capture_mean_run {beb_run}");
    assert!(beb_drop >= 10.0, "beb dropped_excessive {beb_drop}");
    assert!(
        blam_run < beb_run / 10.0,
        "blam {blam_run} vs beb {beb_run}"
    );
    assert!(
        blam_drop < 0.75 * beb_drop,
        "blam {blam_drop} vs beb {beb_drop}"
    );
}

#[test]
fn three_groups_on_three_policies_share_one_bus() {
    let text = "duration = \"5s\"\nwarmup = \"0.5s\"\n\
        [[stations]]\ncount = 3\ntraffic = { kind = \"saturated\" }\nframe = \"1518B\"\nbackoff = { kind = \"beb\" }\n\
        [[stations]]\ncount = 3\ntraffic = { kind = \"saturated\" }\nframe = \"1518B\"\nbackoff = { kind = \"full-jitter\", base = \"1slot\", cap = \"64slot\" }\n\
        [[stations]]\ncount = 3\ntraffic = { kind = \"saturated\" }\nframe = \"1518B\"\nbackoff = { kind = \"mild\" }\n";
    let sc = scenario::bus_from_str("t.toml", "t", text).unwrap();
    let run = ethernet::run(&sc, 1);
    let seeds = [1u64];
    let runs = [run.clone().output()];
    let pr = [csmacd::output::PointRuns {
        axes: &[],
        seeds: &seeds,
        columns: csmacd::ethernet::COLUMNS,
        runs: &runs,
    }];
    let csv = String::from_utf8(csmacd::output::stations_csv(&pr)).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let g = header.iter().position(|h| *h == "group").unwrap();
    let s = header
        .iter()
        .position(|h| *h == "throughput_share")
        .unwrap();
    let mut share = [0.0f64; 3];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        share[f[g].parse::<usize>().unwrap()] += f[s].parse::<f64>().unwrap();
    }
    assert!((share.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // Each group's share equals its delivered bits over the total.
    let total: u64 = run.stations.iter().map(|s| s.delivered_bits).sum();
    for (gi, sh) in share.iter().enumerate() {
        let bits: u64 = run
            .stations
            .iter()
            .filter(|s| s.group == gi)
            .map(|s| s.delivered_bits)
            .sum();
        assert!((sh - bits as f64 / total as f64).abs() < 1e-9);
        assert!(*sh > 0.0, "group {gi} got nothing");
    }
}

#[test]
fn every_policy_parses_with_its_defaults_and_bad_values_are_named() {
    for d in scenario::policies::POLICIES {
        let sc = two_stations(&format!("{{ kind = \"{}\" }}", d.kind), "saturated", "10ms");
        assert_eq!(sc.groups[0].backoff.kind(), d.kind);
        assert_eq!(sc.groups[0].backoff.attempt_limit(), 16);
    }
    let bad = |backoff: &str, key: &str| {
        let text = format!(
            "duration = \"1s\"\n[[stations]]\ncount = 2\ntraffic = {{ kind = \"saturated\" }}\n\
             frame = \"64B\"\nbackoff = {backoff}\n"
        );
        let e = scenario::bus_from_str("f.toml", "f", &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("f.toml:6"), "{e}");
    };
    bad(
        "{ kind = \"exponential\", factor = 1.0 }",
        "stations.0.backoff.factor",
    );
    bad(
        "{ kind = \"full-jitter\", base = \"10ms\", cap = \"1ms\" }",
        "stations.0.backoff.cap",
    );
    bad("{ kind = \"geometric\", p = 0 }", "stations.0.backoff.p");
    bad(
        "{ kind = \"beb\", window = 3 }",
        "stations.0.backoff.window",
    );
    bad("{ kind = \"nope\" }", "stations.0.backoff.kind");
    bad(
        "{ kind = \"mild\", min_window = 8, max_window = 4 }",
        "stations.0.backoff.max_window",
    );
}

/// The policies that keep no state draw the same from a fresh state as from
/// one that saw collisions, successes and discards (a bus run keeps a
/// station's state only for the others), and the three that keep one do
/// not: the check can fail.
#[test]
fn policies_without_memory_draw_the_same_from_a_fresh_state() {
    let ch = ChannelHistory::default();
    let mut differ = Vec::new();
    // The built-in policies (written ones are checked in written_policies).
    for kind in scenario::policies::POLICIES.iter().map(|d| d.kind) {
        let spec = two_stations(&format!("{{ kind = \"{kind}\" }}"), "saturated", "1s").groups[0]
            .backoff
            .clone();
        let mut used = BackoffState::new(&spec);
        let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(3));
        let mut same = true;
        for round in 0..200u32 {
            let n = 1 + round % 12;
            used.on_collision(&spec, 1, &Default::default());
            let x = used.draw(&spec, n, SLOT, &ch, 0, &mut a).unwrap();
            let y = BackoffState::new(&spec)
                .draw(&spec, n, SLOT, &ch, 0, &mut b)
                .unwrap();
            same &= (x.delay, x.k, x.r) == (y.delay, y.k, y.r);
            match round % 7 {
                3 => used.on_success(&spec, 1, &Default::default()),
                5 => used.on_discard(&spec),
                _ => {}
            }
        }
        assert_eq!(same, !spec.keeps_state(), "{kind}");
        if !same {
            differ.push(kind);
        }
    }
    assert_eq!(
        differ,
        ["compounding-jitter", "decorrelated-jitter", "mild"]
    );
}
