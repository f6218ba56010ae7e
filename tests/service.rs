//! The service world against numbers nobody here chose: the closed forms of
//! retries against a flaky server, the ordering of policies in the AWS
//! blog's OCC race (and its figures, measured with its own code), and the
//! herd that never recovers without jitter. Fixed seeds throughout.

use csmacd::results::RunOutput;
use csmacd::scenario;
use csmacd::world;

fn service(text: &str) -> world::Scenario {
    let sc = scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(sc, world::Scenario::Service(_)));
    sc
}

fn runs(sc: &world::Scenario, reps: u64) -> Vec<RunOutput> {
    (0..reps).map(|r| sc.run(1000 + r).unwrap()).collect()
}

fn mean(runs: &[RunOutput], metric: &str) -> f64 {
    runs.iter().map(|r| r.metric(metric)).sum::<f64>() / runs.len() as f64
}

fn flaky(p: f64, retries: Option<u32>, calls: u64) -> world::Scenario {
    let retries = retries.map_or(String::new(), |n| format!("max_retries = {n}\n"));
    service(&format!(
        r#"duration = "600s"
[server]
kind = "flaky"
failure = {p}
[network]
delay = "5ms"
[[clients]]
count = {calls}
calls = {{ kind = "once", at = "0s" }}
backoff = {{ kind = "full-jitter", base = "10ms", cap = "1s" }}
{retries}"#
    ))
}

/// With failure probability p and at most N retries a call succeeds with
/// probability 1 - p^(N+1) and costs 1 + p + ... + p^N attempts on average;
/// both within 4 standard errors of `calls` independent calls.
#[test]
fn flaky_server_meets_the_closed_forms() {
    let calls = 20_000u64;
    for p in [0.1, 0.5, 0.9] {
        for n in [0u32, 1, 3, 8] {
            let r = flaky(p, Some(n), calls).run(7).unwrap();
            assert_eq!(r.metric("calls"), calls as f64);
            let success = 1.0 - p.powi(n as i32 + 1);
            // Attempts K of one call: P(K = k) = p^(k-1) (1 - p) for k <= N,
            // P(K = N + 1) = p^N.
            let pk = |k: u32| {
                if k <= n {
                    p.powi(k as i32 - 1) * (1.0 - p)
                } else {
                    p.powi(n as i32)
                }
            };
            let load: f64 = (0..=n).map(|k| p.powi(k as i32)).sum();
            let k2: f64 = (1..=n + 1).map(|k| (k * k) as f64 * pk(k)).sum();
            let se_load = ((k2 - load * load).max(0.0) / calls as f64).sqrt();
            let se_success = (success * (1.0 - success) / calls as f64).sqrt();
            let (got_s, got_l) = (r.metric("success_rate"), r.metric("load"));
            assert!(
                (got_s - success).abs() <= 4.0 * se_success + 1e-12,
                "p {p}, N {n}: success {got_s}, closed form {success} ± {se_success}"
            );
            assert!(
                (got_l - load).abs() <= 4.0 * se_load + 1e-12,
                "p {p}, N {n}: load {got_l}, closed form {load} ± {se_load}"
            );
            if n == 0 {
                assert_eq!(got_l, 1.0);
            }
        }
    }
}

/// Without a limit every call succeeds in the end, after 1 / (1 - p)
/// attempts on average.
#[test]
fn unlimited_retries_always_succeed() {
    let r = flaky(0.5, None, 20_000).run(3).unwrap();
    assert_eq!(r.metric("success_rate"), 1.0);
    let se = (0.5f64 / 0.25 / 20_000.0).sqrt();
    assert!(
        (r.metric("load") - 2.0).abs() < 4.0 * se,
        "{}",
        r.metric("load")
    );
}

/// The anchor's model: 100 clients, four legs of |N(10, 2)| ms, waits
/// min(2000, 5 * 2^n) ms (n = 1 at the first retry: base 10 ms here), and
/// its decorrelated jitter from 5 ms.
fn occ(kind: &str) -> world::Scenario {
    let base = if kind == "decorrelated-jitter" {
        "5ms"
    } else {
        "10ms"
    };
    service(&format!(
        r#"duration = "3600s"
[server]
kind = "occ"
[network]
delay = {{ kind = "abs-normal", mean = "10ms", sd = "2ms" }}
[[clients]]
count = 100
calls = {{ kind = "once", at = "0s" }}
backoff = {{ kind = "{kind}", base = "{base}", cap = "2000ms" }}
"#
    ))
}

/// The figures of aws-samples/aws-arch-backoff-simulator, run with its own
/// code (100 clients, mean over 100 runs, Python's `random` seeded with 1):
/// (policy, writes per race, completion in ms).
pub const AWS_OCC: &[(&str, f64, f64)] = &[
    ("none", 2425.4, 2036.0),
    ("exponential-no-jitter", 1851.2, 62983.6),
    ("decorrelated-jitter", 1002.9, 4558.6),
    ("equal-jitter", 812.3, 6552.2),
    ("full-jitter", 796.4, 4964.9),
];

#[test]
fn occ_race_orders_policies_as_the_aws_blog() {
    let mut calls = Vec::new();
    for &(kind, aws_calls, aws_ms) in AWS_OCC {
        let rs = runs(&occ(kind), 100);
        let (c, t) = (mean(&rs, "attempts"), mean(&rs, "completion_s") * 1e3);
        assert!(rs.iter().all(|r| r.metric("success_rate") == 1.0));
        println!("{kind}: {c:.1} writes, {t:.0} ms (anchor {aws_calls}, {aws_ms} ms)");
        // Within 10 % of the anchor's own figures.
        assert!(
            (c / aws_calls - 1.0).abs() < 0.10,
            "{kind}: {c} writes vs {aws_calls}"
        );
        assert!(
            (t / aws_ms - 1.0).abs() < 0.15,
            "{kind}: {t} ms vs {aws_ms}"
        );
        calls.push(c);
    }
    // none > exponential > decorrelated > equal and full.
    assert!(calls[0] > calls[1] && calls[1] > calls[2]);
    assert!(calls[2] > calls[3] && calls[2] > calls[4]);
}

fn herd(kind: &str, clients: u64) -> world::Scenario {
    service(&format!(
        r#"duration = "1200s"
[server]
kind = "queue"
rate = "1000/s"
crash_above = 2000
restart = "5s"
[network]
delay = {{ kind = "abs-normal", mean = "10ms", sd = "2ms" }}
[[clients]]
count = {clients}
calls = {{ kind = "reconnect", at = "0s" }}
backoff = {{ kind = "{kind}", base = "1s", cap = "64s" }}
"#
    ))
}

/// Without jitter the herd comes back in lockstep and crashes the server on
/// every wave: it never has every client connected within the horizon. With
/// full jitter every client connects, after a few crashes at most.
#[test]
fn herd_without_jitter_never_recovers_and_full_jitter_does() {
    let plain = herd("exponential-no-jitter", 10_000).run(1).unwrap();
    assert!(plain.metric("all_connected_s").is_nan());
    assert!(
        plain.metric("crashes") >= 10.0,
        "{}",
        plain.metric("crashes")
    );
    let full = herd("full-jitter", 10_000).run(1).unwrap();
    let t = full.metric("all_connected_s");
    println!(
        "no jitter: {} crashes, never all connected; full jitter: {} crashes, all connected after {t} s",
        plain.metric("crashes"),
        full.metric("crashes")
    );
    assert!(t.is_finite() && t < 1200.0, "{t}");
    assert!(full.metric("crashes") < plain.metric("crashes"));
}

/// The timeseries adds up to the summary, and a run is the same twice.
#[test]
fn timeseries_adds_up_and_runs_repeat() {
    let sc = herd("full-jitter", 2_000);
    let r = sc.run(5).unwrap();
    assert_eq!(format!("{r:?}"), format!("{:?}", sc.run(5).unwrap()));
    let ts = r.table("timeseries");
    assert_eq!(ts.len(), 1200);
    let sum = |col: usize| -> u64 {
        ts.iter()
            .map(|row| match row[col] {
                csmacd::results::Cell::Count(c) => c,
                _ => panic!("a count"),
            })
            .sum()
    };
    assert_eq!(sum(2) as f64, r.metric("attempts"));
    assert_eq!(sum(3) as f64, r.metric("successes"));
}

#[test]
fn bus_only_commands_refuse_a_service_scenario() {
    let text = "duration = \"1s\"\n[server]\nkind = \"occ\"\n[[clients]]\ncount = 2\ncalls = { kind = \"once\" }\n";
    let e = scenario::bus_from_str("occ.toml", "occ", text).unwrap_err();
    assert!(e.to_string().contains("not a bus scenario"), "{e}");
}

// The retry gates end to end, against a server whose every attempt fails
// (or fails at random), with exact counts where the arithmetic gives them.

fn always_failing(
    clients: &str,
    retry_after: &str,
    delay: &str,
    duration: &str,
) -> world::Scenario {
    service(&format!(
        r#"duration = "{duration}"
[server]
kind = "flaky"
failure = 1.0
{retry_after}
[network]
delay = "{delay}"
[[clients]]
{clients}
"#
    ))
}

/// The attempts of each timeseries bin.
fn attempts_per_bin(r: &RunOutput) -> Vec<u64> {
    r.table("timeseries")
        .iter()
        .map(|row| match row[2] {
            csmacd::results::Cell::Count(c) => c,
            _ => panic!("a count"),
        })
        .collect()
}

fn retries(r: &RunOutput) -> u64 {
    (r.metric("attempts") - r.metric("calls")) as u64
}

/// A shared bucket, calls spread over time and overlapping: every first
/// attempt deposits, every retry pays `cost`, and the call whose failure
/// finds less than `cost` ends; the last call to end ends after every
/// deposit, on a bucket holding less than `cost`. While the bucket never
/// reaches its size, the retries of M calls are therefore exactly
/// floor((start + M * deposit) / cost), whatever the timing.
#[test]
fn budget_allows_exactly_what_the_bucket_holds_over_time() {
    for (seed, deposit, cost, start) in [
        (1, 0.25, 1.0, 5.0),
        (2, 0.5, 2.0, 0.0),
        (3, 0.125, 1.0, 3.0),
    ] {
        let sc = always_failing(
            &format!(
                r#"count = 20
calls = {{ kind = "poisson", rate = "2/s", until = "20s" }}
backoff = {{ kind = "full-jitter", base = "10ms", cap = "200ms" }}
budget = {{ size = 1000, deposit = {deposit}, cost = {cost}, start = {start}, scope = "shared" }}"#
            ),
            "",
            "5ms",
            "100s",
        );
        let r = sc.run(seed).unwrap();
        let m = r.metric("calls");
        assert!(m > 600.0 && start + m * deposit < 1000.0, "{m} calls");
        let allowed = ((start + m * deposit) / cost).floor() as u64;
        assert_eq!(
            retries(&r),
            allowed,
            "M {m}, deposit {deposit}, cost {cost}, start {start}"
        );
        assert_eq!(r.metric("successes"), 0.0);
    }
}

/// All M first attempts go out at once and deposit before any reply comes
/// back, so the bucket holds min(size, start + M * deposit) when the
/// failures start paying: that many over `cost` retries, no more. Per
/// client, each bucket holds min(size, start + deposit) for its one call.
#[test]
fn budget_caps_at_its_size_shared_and_per_client() {
    let group = |scope: &str, m: u64| {
        format!(
            r#"count = {m}
calls = {{ kind = "once", at = "0s" }}
backoff = {{ kind = "none" }}
budget = {{ size = 10, deposit = 0.5, cost = 2, start = 4, scope = "{scope}" }}"#
        )
    };
    for (m, allowed) in [(4u64, 3u64), (12, 5), (1000, 5)] {
        // min(10, 4 + 0.5 M) / 2: M = 4 -> 6 / 2 = 3; M >= 12 -> 10 / 2 = 5.
        let r = always_failing(&group("shared", m), "", "5ms", "60s")
            .run(1)
            .unwrap();
        assert_eq!(r.metric("calls"), m as f64);
        assert_eq!(retries(&r), allowed, "shared, M {m}");
        // Per client: min(10, 4 + 0.5) / 2 = 2 retries per call.
        let r = always_failing(&group("client", m), "", "5ms", "60s")
            .run(1)
            .unwrap();
        assert_eq!(retries(&r), 2 * m, "per client, M {m}");
    }
}

/// `max_retries = N` against a server that always fails: exactly N + 1
/// attempts per call.
#[test]
fn max_retries_is_exact() {
    for n in [0u64, 1, 3, 8] {
        let r = always_failing(
            &format!(
                "count = 500\ncalls = {{ kind = \"once\", at = \"0s\" }}\nbackoff = {{ kind = \"full-jitter\", base = \"10ms\", cap = \"1s\" }}\nmax_retries = {n}"
            ),
            "",
            "5ms",
            "600s",
        )
        .run(2).unwrap();
        assert_eq!(r.metric("attempts"), 500.0 * (n + 1) as f64, "N {n}");
        assert_eq!(r.metric("load"), (n + 1) as f64);
        assert_eq!(r.metric("success_rate"), 0.0);
    }
}

/// A server's `retry_after` is a floor on the wait: with waits under it
/// every retry waits exactly `retry_after` (with no network delay the
/// attempts of calls made at 0 s fall at 0, 2, 4, 6 s); with a policy wait
/// above it the policy's wait holds (0, 3, 6, 9 s).
#[test]
fn retry_after_is_a_floor_on_the_wait() {
    let group = |backoff: &str| {
        format!(
            "count = 100\ncalls = {{ kind = \"once\", at = \"0s\" }}\nbackoff = {backoff}\nmax_retries = 3"
        )
    };
    let short = always_failing(
        &group(r#"{ kind = "full-jitter", base = "10ms", cap = "100ms" }"#),
        "retry_after = \"2s\"",
        "0s",
        "20s",
    )
    .run(1)
    .unwrap();
    let mut want = vec![0u64; 20];
    for k in [0, 2, 4, 6] {
        want[k] = 100;
    }
    assert_eq!(attempts_per_bin(&short), want);
    let long = always_failing(
        &group(r#"{ kind = "exponential-no-jitter", base = "3s", cap = "3s" }"#),
        "retry_after = \"2s\"",
        "0s",
        "20s",
    )
    .run(1)
    .unwrap();
    let mut want = vec![0u64; 20];
    for k in [0, 3, 6, 9] {
        want[k] = 100;
    }
    assert_eq!(attempts_per_bin(&long), want);
    // Without retry_after the jittered waits stay under 100 ms each.
    let free = always_failing(
        &group(r#"{ kind = "full-jitter", base = "10ms", cap = "100ms" }"#),
        "",
        "0s",
        "20s",
    )
    .run(1)
    .unwrap();
    assert_eq!(attempts_per_bin(&free)[0], 400);
}

/// The ratio breaker, shared: against a server that always fails, the
/// first failure makes the failed share 1, above any threshold below 1, so
/// no call ever retries. Against a server failing half the attempts, a
/// threshold above 0.5 lets retries go (nearly every call succeeds), and
/// one below stops most of them (success near 1 - p, load near 1).
#[test]
fn ratio_breaker_stops_retries_above_its_threshold() {
    let r = always_failing(
        r#"count = 20
calls = { kind = "poisson", rate = "2/s", until = "20s" }
backoff = { kind = "none" }
breaker = { threshold = 0.9, window = "all", scope = "shared" }"#,
        "",
        "5ms",
        "60s",
    )
    .run(1)
    .unwrap();
    assert!(r.metric("calls") > 600.0);
    assert_eq!(retries(&r), 0);
    let half = |threshold: f64, window: &str| {
        service(&format!(
            r#"duration = "60s"
[server]
kind = "flaky"
failure = 0.5
[network]
delay = "5ms"
[[clients]]
count = 20
calls = {{ kind = "poisson", rate = "2/s", until = "20s" }}
backoff = {{ kind = "full-jitter", base = "10ms", cap = "100ms" }}
breaker = {{ threshold = {threshold}, window = "{window}", scope = "shared" }}
"#
        ))
        .run(4)
        .unwrap()
    };
    for window in ["all", "5s"] {
        let open = half(0.7, window);
        let shut = half(0.3, window);
        assert!(
            open.metric("success_rate") > 0.99,
            "{window}: {}",
            open.metric("success_rate")
        );
        assert!(
            (open.metric("load") - 2.0).abs() < 0.2,
            "{window}: {}",
            open.metric("load")
        );
        assert!(
            shut.metric("success_rate") < 0.6,
            "{window}: {}",
            shut.metric("success_rate")
        );
        assert!(
            shut.metric("load") < 1.1,
            "{window}: {}",
            shut.metric("load")
        );
    }
}

/// The classic breaker, mode all, against a server that always fails and
/// answers at once: one client calls 1000 times a second without retries.
/// The first 5 calls reach the server and fail; the breaker opens for 10 s,
/// during which every call fails at once without an attempt; then one call
/// goes through, fails, and reopens it: one attempt every 10 s and a little.
/// Over 100 s: 5 attempts in the first second, then one in each of the bins
/// starting at 10, 20, ..., 90 s.
#[test]
fn classic_breaker_fails_fast_while_open_then_lets_attempts_through() {
    let breaker = |mode: &str| {
        always_failing(
            &format!(
                r#"count = 1
calls = {{ kind = "poisson", rate = "1000/s", until = "100s" }}
backoff = {{ kind = "none" }}
max_retries = 0
breaker = {{ consecutive = 5, open = "10s", mode = "{mode}", scope = "shared" }}"#
            ),
            "",
            "0s",
            "100s",
        )
        .run(1)
        .unwrap()
    };
    let r = breaker("all");
    let mut want = vec![0u64; 100];
    want[0] = 5;
    for k in 1..10 {
        want[10 * k] = 1;
    }
    assert_eq!(attempts_per_bin(&r), want);
    assert!(r.metric("calls") > 99_000.0, "{}", r.metric("calls"));
    // Mode `retries` refuses only retries: with none to refuse, every call
    // reaches the server.
    let r = breaker("retries");
    assert_eq!(r.metric("attempts"), r.metric("calls"));
}

/// The metastable scenario as shipped, without its sweep, with one backoff
/// policy and gate.
fn metastable(backoff: &str, budget: &str, breaker: &str) -> world::Scenario {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/service-metastable.toml"
    ))
    .unwrap();
    let text = text.split("[sweep]").next().unwrap();
    let text = text
        .replace(
            r#"backoff = { kind = "full-jitter","#,
            &format!(r#"backoff = {{ kind = "{backoff}","#),
        )
        .replace(r#"budget = "none""#, &format!("budget = {budget}"))
        .replace(r#"breaker = "none""#, &format!("breaker = {breaker}"));
    service(&text)
}

/// A surge pushes the queue past the timeout; afterwards plain and jittered
/// retries (up to 3 per call) offer up to 4 x 70 attempts/s to a server of
/// 100/s and the overload sustains itself: the queue never comes back and
/// nothing succeeds after the surge. A shared retry budget or a shared
/// breaker keeps the load under capacity and the queue drains.
#[test]
fn metastable_failure_sustains_itself_unless_retries_are_gated() {
    const NONE: &str = r#""none""#;
    const BUDGET: &str = r#"{ size = 10, scope = "shared" }"#;
    const BREAKER: &str = r#"{ threshold = 0.1, window = "5s", scope = "shared" }"#;
    for backoff in ["none", "full-jitter"] {
        for seed in [1, 2, 3] {
            let r = metastable(backoff, NONE, NONE).run(seed).unwrap();
            assert_eq!(r.metric("recovered"), 0.0, "{backoff}, seed {seed}");
            assert!(r.metric("recovery_s").is_nan(), "{backoff}, seed {seed}");
            // Nothing succeeds long after the surge, and the retries are used.
            assert!(
                r.metric("completion_s") < 40.0,
                "{}",
                r.metric("completion_s")
            );
            assert!(r.metric("load") > 3.0, "{}", r.metric("load"));
            let queue_at_end = match r.table("timeseries").last().unwrap()[1] {
                csmacd::results::Cell::Count(q) => q,
                _ => panic!("a count"),
            };
            assert!(queue_at_end > 10_000, "{queue_at_end}");
            for (budget, breaker) in [(BUDGET, NONE), (NONE, BREAKER), (BUDGET, BREAKER)] {
                let r = metastable(backoff, budget, breaker).run(seed).unwrap();
                let what = format!("{backoff}, budget {budget}, breaker {breaker}, seed {seed}");
                assert_eq!(r.metric("recovered"), 1.0, "{what}");
                let t = r.metric("recovery_s");
                assert!(t > 5.0 && t < 60.0, "{what}: recovered after {t} s");
                assert!(r.metric("load") < 1.1, "{what}: {}", r.metric("load"));
                assert!(r.metric("completion_s") > 110.0, "{what}");
            }
        }
    }
}

/// `"none"` is an absent gate (so that a sweep can compare it); any other
/// word is refused with its line and what is allowed.
#[test]
fn a_gate_of_none_is_no_gate() {
    let text = |gate: &str| {
        format!(
            "duration = \"10s\"\n[server]\nkind = \"flaky\"\nfailure = 0.5\n[[clients]]\ncount = 10\ncalls = {{ kind = \"once\" }}\nbackoff = {{ kind = \"none\" }}\n{gate}\n"
        )
    };
    let bare = service(&text(""));
    for gate in ["budget = \"none\"", "breaker = \"none\""] {
        assert_eq!(service(&text(gate)), bare, "{gate}");
    }
    let e = scenario::from_str("gate.toml", "gate", &text("budget = \"off\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gate.toml:9")
            && e.contains("clients.0.budget")
            && e.contains("allowed: \"none\" or a table"),
        "{e}"
    );
}
