//! Hedging (docs/service.md, docs/stacks.md): the latency of a hedged call
//! against the closed form for independent service times, gRPC's retry
//! throttle stopping hedges at the count A6's token arithmetic gives, a
//! fatal status ending the call at once, Envoy's hedge on per-try timeout
//! with and without cancelling the losers (the wasted work exactly), and
//! determinism.

use crate::common::{bin, temp_dir};
use csmacd::results::RunOutput;
use csmacd::scenario;
use csmacd::service;
use csmacd::world;

fn scenario(text: &str) -> world::Scenario {
    scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn service_of(sc: &world::Scenario) -> &service::Scenario {
    match sc {
        world::Scenario::Service(s) => s,
        _ => panic!("a service scenario"),
    }
}

/// P(S > t) for a lognormal S of median `median` and log-sd `sigma`.
fn lognormal_survival(t: f64, median: f64, sigma: f64) -> f64 {
    0.5 * libm::erfc((t / median).ln() / (sigma * std::f64::consts::SQRT_2))
}

/// With free workers, no network delay and independent lognormal service
/// times S, a call hedged once after d takes T = S1 if S1 <= d, else
/// min(S1, d + S2): P(T > t) = P(S > t) for t <= d and P(S > t) P(S > t - d)
/// after. The empirical survival of about 28 000 calls against it, within
/// 5 standard errors of a proportion, at times on both sides of d.
#[test]
fn hedged_latency_is_the_product_of_two_survivals() {
    let (median, p99, d): (f64, f64, f64) = (0.020, 0.200, 0.030);
    let sigma = (p99 / median).ln() / 2.326_347_874_040_841;
    let sc = scenario(&format!(
        r#"duration = "300s"
[server]
kind = "queue"
workers = 1000
service = {{ kind = "lognormal", median = "20ms", p99 = "200ms" }}
[network]
delay = "0s"
[[clients]]
calls = {{ kind = "fresh", rate = "100/s" }}
stack = {{ kind = "grpc", hedging = {{ max_attempts = 2, delay = "{}ms", non_fatal = ["UNAVAILABLE"] }} }}
"#,
        d * 1e3
    ));
    let rows = service::run_traced(service_of(&sc), 7).unwrap();
    // Free workers: no attempt ever waited for one.
    assert!(rows
        .iter()
        .all(|r| r.starts.is_none() || r.starts == r.arrives));
    // Calls started 20 s before the end or earlier: all are over (a call
    // longer than 20 s has probability below 1e-12).
    let horizon = 280_000_000_000_000u64;
    let mut first: std::collections::HashMap<u64, u64> = Default::default();
    let mut won: std::collections::HashMap<u64, u64> = Default::default();
    for r in &rows {
        if r.attempt == 1 {
            first.insert(r.call, r.sent);
        }
        if r.decision == "succeeded" {
            won.insert(r.call, r.ends.expect("a winner ends"));
        }
    }
    let latencies: Vec<f64> = first
        .iter()
        .filter(|(_, &sent)| sent <= horizon)
        .map(|(call, &sent)| (won[call] - sent) as f64 / 1e12)
        .collect();
    let n = latencies.len() as f64;
    assert!(n > 27_000.0, "{n} calls");
    for t in [
        0.005, 0.015, 0.025, 0.035, 0.045, 0.060, 0.080, 0.120, 0.200,
    ] {
        let s = |x: f64| lognormal_survival(x, median, sigma);
        let p = if t <= d { s(t) } else { s(t) * s(t - d) };
        let seen = latencies.iter().filter(|&&x| x > t).count() as f64 / n;
        let se = (p * (1.0 - p) / n).sqrt();
        assert!(
            (seen - p).abs() <= 5.0 * se,
            "t = {t}: P(T > t) seen {seen:.5}, closed form {p:.5} (5 SE = {:.5})",
            5.0 * se
        );
    }
    // Unhedged, the same calls' p99 is the service's, 200 ms; hedged, the
    // closed form's 99th percentile is far below it.
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let p99_seen = sorted[(0.99 * n).ceil() as usize - 1];
    assert!(p99_seen < 0.120, "hedged p99 {p99_seen}");
}

/// A flaky server failing every attempt with 503 (UNAVAILABLE, non-fatal),
/// M calls one after another from one client, 5 attempts per call.
fn throttled(max_tokens: u32, delay: &str, m: u64) -> RunOutput {
    let sc = scenario(&format!(
        r#"duration = "100s"
[server]
kind = "flaky"
failure = 1.0
[network]
delay = "1ms"
[[clients]]
count = 1
calls = {{ kind = "sequential", count = {m} }}
stack = {{ kind = "grpc", max_tokens = {max_tokens}, hedging = {{ max_attempts = 5, delay = "{delay}", non_fatal = ["UNAVAILABLE"] }} }}
"#
    ));
    sc.run(1).unwrap()
}

/// gRFC A6's throttle by its own arithmetic: the count starts at
/// max_tokens, each failed attempt takes 1 (at least 0), and a hedge goes
/// only while the count is above max_tokens / 2; the first attempt of a
/// call always goes. `together`: all hedges of a call go at once (delay
/// 0: each checked as it is sent, before any failure), else each after
/// the previous attempt's failure (the delay longer than a reply takes).
fn a6_attempts(max_tokens: f64, m: u64, together: bool) -> u64 {
    let mut tokens = max_tokens;
    let mut total = 0;
    for _ in 0..m {
        let mut sent = 1;
        if together {
            while sent < 5 && tokens > max_tokens / 2.0 {
                sent += 1;
            }
            tokens = (tokens - sent as f64).max(0.0);
        } else {
            loop {
                tokens = (tokens - 1.0).max(0.0);
                if sent < 5 && tokens > max_tokens / 2.0 {
                    sent += 1;
                } else {
                    break;
                }
            }
        }
        total += sent;
    }
    total
}

#[test]
fn the_throttle_stops_hedges_at_the_count_a6_gives() {
    for (max_tokens, delay, together) in [
        (10, "10ms", false),
        (13, "10ms", false),
        (13, "0s", true),
        (20, "0s", true),
        (20, "10ms", false),
    ] {
        let m = 50;
        let r = throttled(max_tokens, delay, m);
        let want = a6_attempts(f64::from(max_tokens), m, together);
        assert_eq!(r.metric("calls") as u64, m);
        assert_eq!(r.metric("successes"), 0.0);
        assert_eq!(
            r.metric("attempts") as u64,
            want,
            "max_tokens {max_tokens}, delay {delay}"
        );
    }
    // The arithmetic's figures: 5 + 2 + 48 after one another, 5 + 5 + 48
    // all at once, for max_tokens = 13.
    assert_eq!(a6_attempts(13.0, 50, false), 55);
    assert_eq!(a6_attempts(13.0, 50, true), 58);
}

/// Every reply is an error after one network leg each way (10 ms), hedges
/// every 5 ms up to 5 attempts: a fatal status (500, UNKNOWN) ends the
/// call at its first reply, 20 ms, with the 4 attempts sent by then; a
/// non-fatal one sends the fifth at once and the call fails when the last
/// reply comes, at 40 ms.
#[test]
fn a_fatal_status_ends_the_call_at_once() {
    let run = |non_fatal: &str| {
        scenario(&format!(
            r#"duration = "10s"
[server]
kind = "flaky"
failure = 1.0
failure_status = 500
[network]
delay = "10ms"
[[clients]]
count = 10
calls = {{ kind = "once", at = "0s" }}
stack = {{ kind = "grpc", max_tokens = 1000, hedging = {{ max_attempts = 5, delay = "5ms", non_fatal = [{non_fatal}] }} }}
"#
        ))
        .run(1)
        .unwrap()
    };
    let fatal = run("\"UNAVAILABLE\"");
    assert_eq!(fatal.metric("attempts"), 40.0);
    assert_eq!(fatal.metric("hedges"), 30.0);
    assert!((fatal.metric("failed_latency_mean_s") - 0.020).abs() < 1e-12);
    let non_fatal = run("\"UNKNOWN\"");
    assert_eq!(non_fatal.metric("attempts"), 50.0);
    assert!((non_fatal.metric("failed_latency_mean_s") - 0.040).abs() < 1e-12);
    assert_eq!(non_fatal.metric("successes"), 0.0);
}

/// Envoy's hedge on per-try timeout: a server taking 100 ms, a per-try
/// timeout of 30 ms, 2 retries with a backoff under a microsecond. Each
/// timeout sends a retry and leaves the attempt running: 3 attempts, the
/// first answers at 100 ms and wins. Cancelled, the two losers cost the
/// server 70 and 40 ms; left to run, their whole 100 ms each (their caller
/// has gone). Without hedging every attempt times out and the call fails.
#[test]
fn envoy_hedges_on_per_try_timeout() {
    let run = |hedge: &str| {
        scenario(&format!(
            r#"duration = "60s"
[server]
kind = "queue"
rate = "10/s"
workers = 10
[network]
delay = "0s"
[[clients]]
count = 1
calls = {{ kind = "sequential", count = 20 }}
timeout = "30ms"
stack = {{ kind = "envoy", num_retries = 2, base = "1us", max = "1us"{hedge} }}
"#
        ))
        .run(1)
        .unwrap()
    };
    let cancelled = run(", hedge_on_per_try_timeout = true");
    assert_eq!(cancelled.metric("calls"), 20.0);
    assert_eq!(cancelled.metric("successes"), 20.0);
    assert_eq!(cancelled.metric("attempts"), 60.0);
    assert_eq!(cancelled.metric("hedges"), 40.0);
    assert_eq!(cancelled.metric("hedge_wins"), 0.0);
    assert!((cancelled.metric("latency_mean_s") - 0.100).abs() < 1e-9);
    // The retries' backoff (under 1 us each) shortens the losers' run.
    let wasted = cancelled.metric("wasted_work_s");
    assert!(
        wasted <= 20.0 * 0.110 && wasted > 20.0 * 0.110 - 20.0 * 3e-6,
        "{wasted}"
    );
    let left = run(", hedge_on_per_try_timeout = true, cancel_losers = false");
    assert_eq!(left.metric("successes"), 20.0);
    assert!((left.metric("wasted_work_s") - 20.0 * 0.200).abs() < 1e-9);
    let plain = run("");
    assert_eq!(plain.metric("successes"), 0.0);
    assert_eq!(plain.metric("attempts"), 60.0);
    assert_eq!(plain.metric("hedges"), 0.0);
}

/// A hedge that wins: the first attempt slow (a queue with one worker
/// busy), the hedge answered first.
#[test]
fn hedge_wins_are_counted_and_the_loser_cancelled() {
    // Service 50 ms, two workers; calls once at 0 from 1 client, hedge at
    // 10 ms. The first attempt takes 50 ms; the hedge 50 ms more from
    // 10 ms: the first wins at 50 ms, the hedge is cancelled at once
    // (no network delay) after 40 ms of work.
    let sc = scenario(
        r#"duration = "1s"
[server]
kind = "queue"
rate = "20/s"
workers = 2
[network]
delay = "0s"
[[clients]]
count = 1
calls = { kind = "once", at = "0s" }
stack = { kind = "grpc", hedging = { max_attempts = 2, delay = "10ms", non_fatal = ["UNAVAILABLE"] } }
"#,
    );
    let r = sc.run(1).unwrap();
    assert_eq!(r.metric("attempts"), 2.0);
    assert_eq!(r.metric("hedges"), 1.0);
    assert_eq!(r.metric("hedge_wins"), 0.0);
    assert!((r.metric("latency_mean_s") - 0.050).abs() < 1e-12);
    assert!((r.metric("wasted_work_s") - 0.040).abs() < 1e-12);
    // One worker serving the newest waiting attempt first (LIFO), 50 ms
    // each. Call A at 0 ms is served at once; its hedge waits from 20 ms.
    // Call B at 10 ms waits, and so does its hedge from 30 ms. At 50 ms A's
    // first attempt answers (A's hedge is cancelled) and the worker takes
    // the newest, B's hedge, which answers at 100 ms and wins: B's first
    // attempt is cancelled unserved.
    let sc = scenario(
        r#"duration = "2s"
[server]
kind = "queue"
workers = 1
discipline = "lifo"
service = { kind = "deterministic", value = "50ms" }
[network]
delay = "0s"
[[clients]]
name = "a"
count = 1
calls = { kind = "once", at = "0s" }
stack = { kind = "grpc", hedging = { max_attempts = 2, delay = "20ms", non_fatal = ["UNAVAILABLE"] } }
[[clients]]
name = "b"
count = 1
calls = { kind = "once", at = "10ms" }
stack = { kind = "grpc", hedging = { max_attempts = 2, delay = "20ms", non_fatal = ["UNAVAILABLE"] } }
"#,
    );
    let r = sc.run(1).unwrap();
    assert_eq!(r.metric("attempts"), 4.0);
    assert_eq!(r.metric("hedges"), 2.0);
    assert_eq!(r.metric("hedge_wins"), 1.0);
    assert_eq!(r.metric("successes"), 2.0);
    assert!((r.metric("latency_mean_s") - (0.050 + 0.090) / 2.0).abs() < 1e-12);
    assert_eq!(r.metric("wasted_work_s"), 0.0);
}

/// The same scenario and seed give the same results, and a sweep's files
/// are byte-identical on one thread or several.
#[test]
fn hedging_is_deterministic() {
    let text = r#"name = "hedging determinism"
seed = 3
duration = "5s"
replications = 2
[server]
kind = "queue"
workers = 8
service = { kind = "lognormal", median = "10ms", p99 = "200ms" }
[network]
delay = { kind = "exponential", mean = "1ms" }
[[clients]]
calls = { kind = "fresh", rate = "300/s" }
timeout = "300ms"
stack = { kind = "grpc", hedging = { max_attempts = 3, delay = "15ms", non_fatal = ["UNAVAILABLE"] } }
[sweep]
"clients.0.stack.hedging.cancel_losers" = [true, false]
"#;
    let dir = temp_dir("hedging-determinism");
    let file = dir.join("hedging.toml");
    std::fs::write(&file, text).unwrap();
    let mut outputs = Vec::new();
    for jobs in ["1", "2"] {
        let out = dir.join(format!("out-{jobs}"));
        let o = bin()
            .args(["sweep", "-q", "-j", jobs, "--out"])
            .arg(&out)
            .arg(&file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let files: Vec<Vec<u8>> = ["summary.csv", "runs.csv", "groups.csv", "timeseries.csv"]
            .iter()
            .map(|f| std::fs::read(out.join(f)).unwrap())
            .collect();
        outputs.push(files);
    }
    assert_eq!(outputs[0], outputs[1]);
    let summary = String::from_utf8(outputs[0][0].clone()).unwrap();
    assert!(summary.lines().next().unwrap().contains("hedge_wins"));
}

/// A one-group scenario against `server`, the group given by `group`.
fn with_group(server: &str, group: &str) -> String {
    format!(
        "duration = \"10s\"\n[server]\n{server}\n[network]\ndelay = \"1ms\"\n[[clients]]\ncount = 2\ncalls = {{ kind = \"once\" }}\n{group}\n"
    )
}

const QUEUE: &str = "kind = \"queue\"\nrate = \"100/s\"";

/// Bad hedging is refused at its key, with what is allowed.
#[test]
fn bad_hedging_is_refused_clearly() {
    let hedging = |h: &str| format!("stack = {{ kind = \"grpc\", hedging = {{ {h} }} }}");
    let cases: Vec<(String, String, &str, &str)> = vec![
        (
            QUEUE.into(),
            "stack = { kind = \"grpc\", initial_backoff = \"10ms\", hedging = { max_attempts = 2, non_fatal = [\"UNAVAILABLE\"] } }".into(),
            "clients.0.stack.initial_backoff",
            "a retry policy or a hedging policy, not both",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 6, non_fatal = [\"UNAVAILABLE\"]"),
            "clients.0.stack.hedging.max_attempts",
            "above 5 as 5",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 1, non_fatal = [\"UNAVAILABLE\"]"),
            "clients.0.stack.hedging.max_attempts",
            "allowed: 2 to 5",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 2"),
            "clients.0.stack.hedging.non_fatal",
            "missing",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 2, non_fatal = [\"SLOW\"]"),
            "clients.0.stack.hedging.non_fatal",
            "not a non-fatal gRPC status code",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 2, delay = \"-1ms\", non_fatal = [\"UNAVAILABLE\"]"),
            "clients.0.stack.hedging.delay",
            "",
        ),
        (
            QUEUE.into(),
            hedging("max_attempts = 2, non_fatal = [\"UNAVAILABLE\"], cancel = false"),
            "clients.0.stack.hedging",
            "cancel_losers",
        ),
        (
            QUEUE.into(),
            "stack = { kind = \"envoy\", hedge_on_per_try_timeout = true }".into(),
            "clients.0.stack",
            "give one, e.g. timeout",
        ),
        (
            QUEUE.into(),
            "timeout = \"50ms\"\nstack = { kind = \"envoy\", num_retries = 2, max_attempts = 3 }".into(),
            "clients.0.stack.num_retries",
            "give one",
        ),
        (
            QUEUE.into(),
            "timeout = \"50ms\"\nstack = { kind = \"envoy\", cancel_losers = false }".into(),
            "clients.0.stack.cancel_losers",
            "hedge_on_per_try_timeout = true",
        ),
        (
            "kind = \"occ\"".into(),
            hedging("max_attempts = 2, non_fatal = [\"ABORTED\"]"),
            "clients.0.stack",
            "race each other",
        ),
    ];
    for (server, group, key, says) in cases {
        let text = with_group(&server, &group);
        let e = match scenario::from_str("t.toml", "t", &text) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(key), "{e}\nwanted key {key}");
        assert!(e.contains(says), "{e}\nwanted {says:?}");
    }
}

/// `validate` warns of hedging that cannot act, and of nothing else.
#[test]
fn hedging_that_cannot_act_is_warned_of() {
    let kinds = |group: &str| -> Vec<&'static str> {
        scenario(&with_group(QUEUE, group))
            .warnings()
            .iter()
            .map(|w| w.kind)
            .collect()
    };
    // gRPC: hedges at 100 and 200 ms, a deadline of 150 ms: the third
    // attempt can never go.
    let late = kinds("timeout = \"150ms\"\nstack = { kind = \"grpc\", hedging = { max_attempts = 3, delay = \"100ms\", non_fatal = [\"UNAVAILABLE\"] } }");
    assert_eq!(late, ["idle-hedging"]);
    let fits = kinds("timeout = \"250ms\"\nstack = { kind = \"grpc\", hedging = { max_attempts = 3, delay = \"100ms\", non_fatal = [\"UNAVAILABLE\"] } }");
    assert!(fits.is_empty(), "{fits:?}");
    let no_retry = kinds("timeout = \"50ms\"\nstack = { kind = \"envoy\", num_retries = 0, hedge_on_per_try_timeout = true }");
    assert_eq!(no_retry, ["idle-hedging"]);
    let cancel = kinds("timeout = \"50ms\"\ncancel = true\nstack = { kind = \"envoy\", hedge_on_per_try_timeout = true }");
    assert_eq!(cancel, ["idle-hedging"]);
    let fine =
        kinds("timeout = \"50ms\"\nstack = { kind = \"envoy\", hedge_on_per_try_timeout = true }");
    assert!(fine.is_empty(), "{fine:?}");
}

/// gRPC's pushback: a failure reply carrying the server's Retry-After
/// (50 ms) sends the next hedge after it, not at once. Every reply an
/// UNAVAILABLE after 1 ms each way, 3 attempts 10 ms apart: with pushback
/// they go at 0, 52 and 104 ms and the call fails at 106 ms; without, at
/// 0, 2 and 4 ms (each non-fatal status sends the next at once), failing
/// at 6 ms.
#[test]
fn pushback_delays_the_next_hedge() {
    let run = |retry_after: &str| {
        scenario(&format!(
            r#"duration = "10s"
[server]
kind = "flaky"
failure = 1.0
{retry_after}
[network]
delay = "1ms"
[[clients]]
count = 1
calls = {{ kind = "once", at = "0s" }}
stack = {{ kind = "grpc", max_tokens = 1000, hedging = {{ max_attempts = 3, delay = "10ms", non_fatal = ["UNAVAILABLE"] }} }}
"#
        ))
        .run(1)
        .unwrap()
    };
    let pushed = run("retry_after = \"50ms\"");
    assert_eq!(pushed.metric("attempts"), 3.0);
    assert!((pushed.metric("failed_latency_mean_s") - 0.106).abs() < 1e-12);
    let at_once = run("");
    assert_eq!(at_once.metric("attempts"), 3.0);
    assert!((at_once.metric("failed_latency_mean_s") - 0.006).abs() < 1e-12);
}

/// The retry policy takes pushback too: the server's Retry-After of
/// 300 ms sets every wait (no jitter), so a call's 5 attempts against an
/// always-failing server with no network delay go at 0, 0.3, 0.6, 0.9 and
/// 1.2 s.
#[test]
fn grpc_retries_wait_exactly_the_pushback() {
    let sc = scenario(
        r#"duration = "10s"
[server]
kind = "flaky"
failure = 1.0
retry_after = "300ms"
[network]
delay = "0s"
[[clients]]
count = 1
calls = { kind = "once", at = "0s" }
stack = { kind = "grpc", max_tokens = 1000 }
"#,
    );
    let r = sc.run(1).unwrap();
    assert_eq!(r.metric("attempts"), 5.0);
    assert!((r.metric("failed_latency_mean_s") - 1.2).abs() < 1e-12);
}
