//! The library stacks' gates against a server whose every attempt fails,
//! with the exact counts their arithmetic gives: gRPC's retry throttling,
//! the AWS retry quota, Finagle's RetryBudget, Envoy's budget (which
//! counts retries waiting in backoff, so a failing wave retries less than
//! its percentage), and the breakers of resilience4j and Polly (docs/stacks.md);
//! and the retries each gate allows in the shipped reconnect herd.

use csmacd::results::{Cell, RunOutput};
use csmacd::scenario;
use csmacd::world;

fn service(text: &str) -> world::Scenario {
    scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A flaky server that fails every attempt (a retryable 5xx), and one
/// client group.
fn always_failing(group: &str, delay: &str, duration: &str) -> world::Scenario {
    service(&format!(
        r#"duration = "{duration}"
[server]
kind = "flaky"
failure = 1.0
[network]
delay = "{delay}"
[[clients]]
{group}
"#
    ))
}

fn attempts(r: &RunOutput) -> u64 {
    r.metric("attempts") as u64
}

fn calls(r: &RunOutput) -> u64 {
    r.metric("calls") as u64
}

/// The attempts of each timeseries bin.
fn attempts_per_bin(r: &RunOutput) -> Vec<u64> {
    r.table("timeseries")
        .iter()
        .map(|row| match row[2] {
            Cell::Count(c) => c,
            _ => panic!("a count"),
        })
        .collect()
}

/// The ways calls overlap: all at once, a few clients calling in a Poisson
/// process, fresh clients at a steady rate.
const OVERLAPS: &[&str] = &[
    "count = {m}\ncalls = { kind = \"once\", at = \"0s\" }",
    "count = {m}\ncalls = { kind = \"poisson\", rate = \"2/s\", until = \"5s\" }",
    "calls = { kind = \"fresh\", rate = \"{m}/s\" }",
];

/// gRFC A6: the count starts at max_tokens, each failed attempt takes 1 and
/// a retry goes only while the count is above max_tokens / 2. So whatever
/// the calls and however they overlap, exactly the failures that leave the
/// count above half retry: 4 for max_tokens = 10 (9, 8, 7, 6), 3 for 7
/// (6, 5, 4), 1 for 4 and 3; every other failure ends its call.
#[test]
fn grpc_throttling_allows_exactly_the_tokens_above_half() {
    for (max_tokens, retries) in [(10, 4), (7, 3), (4, 1), (3, 1)] {
        for overlap in OVERLAPS {
            for m in [1u64, 2, 3, 7, 50] {
                let group = overlap.replace("{m}", &m.to_string())
                    + &format!(
                        "\nstack = {{ kind = \"grpc\", max_tokens = {max_tokens}, token_ratio = 0.1 }}"
                    );
                let r = always_failing(&group, "5ms", "10s").run(11).unwrap();
                assert!(calls(&r) >= 1, "{group}");
                assert_eq!(
                    attempts(&r),
                    calls(&r) + retries,
                    "max_tokens {max_tokens}, {group}"
                );
            }
        }
    }
}

/// A flaky server that fails every attempt with `status`, and one group.
fn always_failing_with(status: u16, group: &str, delay: &str, duration: &str) -> world::Scenario {
    service(&format!(
        r#"duration = "{duration}"
[server]
kind = "flaky"
failure = 1.0
failure_status = {status}
[network]
delay = "{delay}"
[[clients]]
{group}
"#
    ))
}

/// AWS standard mode as botocore 1.44 counts it (retries/standard.py,
/// RetryQuotaChecker): a 500-token quota, 14 per retry after an error or a
/// timeout, 5 after a throttling error (a 429), nothing back while every
/// call fails: floor(500 / 14) = 35 retries in all, or 100 after 429s;
/// fewer calls retry twice each (three times for DynamoDB). botocore 1.43:
/// 5 per retry, 10 after a timeout: 100 and 50; it does not retry a 429
/// that carries no error code.
#[test]
fn aws_standard_quota_pays_exactly_the_retries_its_costs_allow() {
    // (stack keys, status, retries allowed in all, retries per call)
    let cases: &[(&str, u16, u64, u64)] = &[
        ("", 503, 35, 2),
        ("", 500, 35, 2),
        ("", 429, 100, 2),
        ("dynamodb = true", 503, 35, 3),
        ("dynamodb = true", 429, 100, 3),
        ("version = \"1.43\"", 503, 100, 2),
        ("version = \"1.43\"", 429, 0, 0),
        ("retry_cost = 10", 503, 50, 2),
        ("throttling_retry_cost = 50", 429, 10, 2),
    ];
    for &(keys, status, total, per_call) in cases {
        let stack = format!("stack = {{ kind = \"aws-standard\", {keys} }}").replace(", }", " }");
        for m in [10u64, 50, 80, 400] {
            let group = format!("count = {m}\ncalls = {{ kind = \"once\", at = \"0s\" }}\n{stack}");
            let r = always_failing_with(status, &group, "5ms", "600s")
                .run(3)
                .unwrap();
            assert_eq!(
                attempts(&r),
                m + (per_call * m).min(total),
                "{m} calls, {stack}, {status}"
            );
        }
        for overlap in OVERLAPS {
            let group = overlap.replace("{m}", "60") + "\n" + &stack;
            let r = always_failing_with(status, &group, "5ms", "200s")
                .run(5)
                .unwrap();
            assert!(calls(&r) >= 50, "{group}");
            assert_eq!(attempts(&r), calls(&r) + total, "{group}, {status}");
        }
    }
    // Every reply comes after the 1 s timeout: 14 per retry in 1.44, 10 in 1.43.
    for (version, total) in [("1.44", 35u64), ("1.43", 50)] {
        for m in [30u64, 200] {
            let group = format!(
                "count = {m}\ncalls = {{ kind = \"once\", at = \"0s\" }}\ntimeout = \"1s\"\nstack = {{ kind = \"aws-standard\", version = \"{version}\" }}"
            );
            let r = always_failing(&group, "2s", "600s").run(3).unwrap();
            assert_eq!(
                attempts(&r),
                m + (2 * m).min(total),
                "{m} calls timing out, {version}"
            );
        }
    }
}

/// M calls one after another from one client object, as the real-client
/// check runs botocore: exactly M calls and the quota's retries; and a gap
/// after each outcome spaces them: three round trips of 10 ms and a gap of
/// 70 ms make a call every 100 ms, so 10 calls start in 950 ms.
#[test]
fn sequential_calls_are_counted_exactly() {
    for m in [1u64, 7, 200] {
        let group = format!(
            "count = 1\ncalls = {{ kind = \"sequential\", count = {m} }}\nstack = {{ kind = \"aws-standard\" }}"
        );
        let r = always_failing(&group, "1ms", "3600s").run(1).unwrap();
        assert_eq!(calls(&r), m);
        assert_eq!(attempts(&r), m + (2 * m).min(35), "{m} calls");
    }
    for clients in [1u64, 3] {
        let group = format!(
            "count = {clients}\ncalls = {{ kind = \"sequential\", count = 1000, gap = \"70ms\" }}\nmax_retries = 2"
        );
        let r = always_failing(&group, "5ms", "950ms").run(1).unwrap();
        assert_eq!(calls(&r), 10 * clients);
        assert_eq!(attempts(&r), 30 * clients);
    }
}

/// A group's `retry_on` lists what it retries: a refusal or failure whose
/// status it does not list ends the call at once, as a timeout does when
/// "timeout" is missing; a queue's refusals carry its `refuse_status`.
#[test]
fn retry_on_ends_the_calls_it_does_not_list() {
    let retried = |status: u16, retry_on: &str| {
        let group = format!(
            "count = 20\ncalls = {{ kind = \"once\" }}\nmax_retries = 3\nretry_on = {retry_on}"
        );
        let r = always_failing_with(status, &group, "5ms", "10s")
            .run(1)
            .unwrap();
        attempts(&r) - calls(&r)
    };
    assert_eq!(retried(503, r#"["5xx"]"#), 60);
    assert_eq!(retried(500, r#"["429"]"#), 0);
    assert_eq!(retried(429, r#"["429", "timeout"]"#), 60);
    assert_eq!(retried(429, r#"["5xx", "timeout"]"#), 0);
    assert_eq!(retried(502, r#"["503"]"#), 0);
    // A full queue refuses with 429: retried only where 429 is listed.
    for (retry_on, extra) in [(r#"["5xx"]"#, 0u64), (r#"["4xx"]"#, 3)] {
        let r = service(&format!(
            r#"duration = "10s"
[server]
kind = "queue"
rate = "1/s"
queue_limit = 1
refuse_status = 429
[network]
delay = "5ms"
[[clients]]
count = 2
calls = {{ kind = "once" }}
max_retries = 3
retry_on = {retry_on}
"#
        ))
        .run(1)
        .unwrap();
        assert_eq!(attempts(&r), 2 + extra, "{retry_on}");
    }
    // Timeouts: retried only with "timeout".
    for (retry_on, attempts_each) in [(r#"["5xx", "timeout"]"#, 4u64), (r#"["5xx"]"#, 1)] {
        let group = format!(
            "count = 5\ncalls = {{ kind = \"once\" }}\nmax_retries = 3\ntimeout = \"1s\"\nretry_on = {retry_on}"
        );
        let r = always_failing(&group, "2s", "60s").run(1).unwrap();
        assert_eq!(attempts(&r), 5 * attempts_each, "{retry_on}");
    }
}

/// gRPC's `timeout` is the call's deadline (A6: DEADLINE_EXCEEDED ends
/// the call, never retried, and the retry throttle does not count it).
/// Replies 10 ms after each attempt and grpcio's waits of 100 ms and
/// 200 ms times U(0.8, 1.2): the second attempt leaves by 130 ms, a third
/// could leave at 260 ms at the earliest, past a 250 ms deadline: exactly
/// 2 attempts per call, and no attempt starts after its deadline. A reply
/// later than the deadline ends the call at its first attempt.
#[test]
fn grpc_timeout_is_the_calls_deadline() {
    let group = "count = 1\ncalls = { kind = \"sequential\", count = 50 }\ntimeout = \"250ms\"\nstack = { kind = \"grpc\", max_tokens = 1000 }";
    let r = always_failing(group, "5ms", "600s").run(1).unwrap();
    assert_eq!(calls(&r), 50);
    assert_eq!(attempts(&r), 100);
    // The deadline passes before any reply: one attempt per call, and the
    // throttle (10 tokens, no retry at 5 or fewer) never closes.
    let group = "count = 1\ncalls = { kind = \"sequential\", count = 50 }\ntimeout = \"250ms\"\nstack = { kind = \"grpc\" }";
    let r = always_failing(group, "1s", "600s").run(1).unwrap();
    assert_eq!((calls(&r), attempts(&r)), (50, 50));
    // Without a deadline the throttle allows its 4 retries.
    let group =
        "count = 1\ncalls = { kind = \"sequential\", count = 50 }\nstack = { kind = \"grpc\" }";
    let r = always_failing(group, "1s", "3600s").run(1).unwrap();
    assert_eq!((calls(&r), attempts(&r)), (50, 54));
}

/// gRPC maps a refusal's HTTP status to its code (429, 502, 503, 504:
/// UNAVAILABLE; else UNKNOWN) and retries only its retryable codes.
#[test]
fn grpc_retries_only_its_retryable_status_codes() {
    let run = |status: u16, codes: &str| {
        let group = format!(
            "count = 3\ncalls = {{ kind = \"once\" }}\nstack = {{ kind = \"grpc\" {codes} }}"
        );
        let r = always_failing_with(status, &group, "5ms", "60s")
            .run(1)
            .unwrap();
        attempts(&r) - calls(&r)
    };
    assert_eq!(run(503, ""), 4);
    assert_eq!(run(429, ""), 4);
    assert_eq!(run(500, ""), 0);
    assert_eq!(run(500, r#", retryable_status_codes = ["UNKNOWN"]"#), 4);
}

/// A success without a retry gives 1 token back and a retry that succeeds
/// gives back what it took, so against a server that fails 10 % of the
/// attempts the quota never runs dry, and each call makes the attempts of
/// plain 3-attempt retries: 1 + p + p^2 = 1.11 on average (variance 0.1179),
/// and succeeds with probability 1 - p^3.
#[test]
fn aws_quota_refills_from_successes() {
    let r = service(
        r#"duration = "600s"
[server]
kind = "flaky"
failure = 0.1
[network]
delay = "5ms"
[[clients]]
calls = { kind = "fresh", rate = "50/s" }
stack = { kind = "aws-standard" }
"#,
    )
    .run(9)
    .unwrap();
    let n = r.metric("calls");
    let load = r.metric("load");
    assert!(
        (load - 1.11).abs() < 4.0 * (0.1179 / n).sqrt(),
        "load {load} over {n} calls"
    );
    let s = r.metric("success_rate");
    assert!((s - 0.999).abs() < 4.0 * (0.999 * 0.001 / n).sqrt(), "{s}");
}

/// Finagle's RetryBudget: a reserve of min_retries_per_sec * ttl retries,
/// plus percent_can_retry of the requests deposited within the ttl. Calls
/// all made at once, with no limit on attempts, retry until the budget is
/// spent: floor((1000 m + 10 * 10 * 5000) / 5000) retries.
#[test]
fn finagle_budget_allows_reserve_plus_percent_of_requests() {
    for (m, percent, min) in [
        (7u64, 0.2, 10u64),
        (100, 0.2, 10),
        (1000, 0.2, 10),
        (500, 0.5, 2),
    ] {
        let group = format!(
            "count = {m}\ncalls = {{ kind = \"once\", at = \"0s\" }}\nstack = {{ kind = \"finagle\", percent_can_retry = {percent}, min_retries_per_sec = {min} }}"
        );
        let r = always_failing(&group, "5ms", "5s").run(1).unwrap();
        let withdrawal = (1000.0 / percent) as u64;
        let expected = (1000 * m + min * 10 * withdrawal) / withdrawal;
        assert_eq!(attempts(&r) - m, expected, "{m} calls, {percent}, {min}/s");
    }
}

/// Past the ttl the budget's deposits and withdrawals expire: a client
/// that keeps failing gets min_retries_per_sec * ttl retries per ttl again,
/// so about 10 retries per second on top of 20 % of its calls.
#[test]
fn finagle_budget_refills_over_its_ttl() {
    let group = "calls = { kind = \"fresh\", rate = \"20/s\" }\nstack = { kind = \"finagle\" }";
    let r = always_failing(group, "5ms", "100s").run(2).unwrap();
    let retries = (attempts(&r) - calls(&r)) as f64;
    let expected = 10.0 * 100.0 + 0.2 * calls(&r) as f64;
    // Within a ttl's worth of edge effects.
    assert!(
        (retries - expected).abs() < 10.0 * 10.0 + 0.2 * 20.0 * 10.0,
        "{retries} retries, about {expected} expected"
    );
}

/// Envoy's budget: a retry may be scheduled while the retries held (from
/// the decision to retry until that retry's outcome, so those waiting in
/// backoff too) are fewer than max(min_retry_concurrency, budget_percent of
/// the requests in flight). Requests waiting in backoff are not in flight,
/// so when m calls fail at once the limit shrinks with every failure while
/// the count of held retries grows: the k-th failure retries iff the
/// retries allowed so far are below max(3, 20 % of m - k). With a budget of
/// 100 % and no minimum only half the calls retry.
#[test]
fn envoy_budget_counts_retries_in_backoff_but_not_their_requests() {
    for (m, percent, min) in [
        (10u64, 20.0, 3u64),
        (100, 20.0, 3),
        (1000, 20.0, 3),
        (100, 100.0, 0),
    ] {
        let group = format!(
            "count = {m}\ncalls = {{ kind = \"once\", at = \"0s\" }}\nstack = {{ kind = \"envoy\", budget_percent = {percent}, min_retry_concurrency = {min} }}"
        );
        let r = always_failing(&group, "5ms", "10s").run(4).unwrap();
        let mut allowed = 0u64;
        for k in 1..=m {
            let limit = min.max((percent / 100.0 * (m - k) as f64) as u64);
            if allowed < limit {
                allowed += 1;
            }
        }
        assert_eq!(
            attempts(&r),
            m + allowed,
            "{m} calls, {percent} %, min {min}"
        );
        if percent == 100.0 {
            assert_eq!(allowed, m / 2);
        }
    }
}

/// resilience4j's defaults: 100 calls fail (the minimum number), the
/// breaker opens for 60 s and fails every call at once; then it lets 10
/// calls through (the half-open permits), they fail, and it opens for
/// another 60 s. Replies come back at once (no network delay), so no call
/// slips in between a failure and the breaker opening. Fresh calls at
/// 100/s for 130 s: exactly 100 + 10 + 10
/// attempts, none in the open minutes.
#[test]
fn resilience4j_breaker_opens_for_its_wait_then_lets_ten_through() {
    let group = "calls = { kind = \"fresh\", rate = \"100/s\" }\nstack = { kind = \"resilience4j-breaker\", max_attempts = 1 }";
    for seed in [1, 2, 3] {
        let r = always_failing(group, "0s", "130s").run(seed).unwrap();
        assert_eq!(attempts(&r), 120, "seed {seed}");
        let bins = attempts_per_bin(&r);
        // Open from about 1 s to 61 s and from about 62 s to 122 s.
        assert!(bins[3..60].iter().all(|&a| a == 0), "{bins:?}");
        assert!(bins[63..120].iter().all(|&a| a == 0), "{bins:?}");
        assert_eq!(bins[60..63].iter().sum::<u64>(), 10, "{bins:?}");
        assert!(calls(&r) > 12_000);
    }
}

/// Polly's defaults: once 100 attempts in the 30 s sampling window have
/// failed at a ratio of at least 0.1, the breaker opens for 5 s; then one
/// probe goes, fails, and it opens again. In 28 s: 100 attempts, then one
/// probe about every 5 s: 5 more.
#[test]
fn polly_breaker_opens_for_five_seconds_then_probes_once() {
    let group = "calls = { kind = \"fresh\", rate = \"100/s\" }\nstack = { kind = \"polly-breaker\", max_attempts = 1 }";
    for seed in [1, 2, 3] {
        let r = always_failing(group, "0s", "28s").run(seed).unwrap();
        assert_eq!(attempts(&r), 105, "seed {seed}");
        let bins = attempts_per_bin(&r);
        let probes: Vec<usize> = (3..28).filter(|&k| bins[k] > 0).collect();
        assert_eq!(probes.len(), 5, "{bins:?}");
        // 5 s and the wait for the next call apart: bins 5 (or 6) apart.
        assert!(
            probes.windows(2).all(|w| (5..=6).contains(&(w[1] - w[0]))),
            "{probes:?}"
        );
    }
}

/// The stacks run the same twice, and the reader names what it sets.
#[test]
fn every_stack_runs_and_repeats() {
    for kind in [
        "grpc",
        "aws-standard",
        "aws-adaptive",
        "finagle",
        "envoy",
        "polly-breaker",
        "resilience4j-breaker",
    ] {
        let sc = service(&format!(
            r#"duration = "60s"
[server]
kind = "queue"
rate = "100/s"
service = "exponential"
queue_limit = 200
[network]
delay = {{ kind = "abs-normal", mean = "10ms", sd = "2ms" }}
[[clients]]
calls = {{ kind = "fresh", rate = "70/s", surge = {{ rate = "150/s", from = "20s", to = "30s" }} }}
timeout = "1s"
stack = {{ kind = "{kind}" }}
"#
        ));
        let r = sc.run(3).unwrap();
        assert_eq!(
            format!("{r:?}"),
            format!("{:?}", sc.run(3).unwrap()),
            "{kind}"
        );
        assert!(r.metric("successes") > 0.0, "{kind}");
    }
}

/// The shipped herd (scenarios/stacks-herd.toml, docs/stacks.md): 10 000
/// first attempts crash the server once under every stack, since the gates
/// ration retries and not first attempts; the retries then allowed are the
/// gates' arithmetic: Finagle's reserve 10 x 10 plus 20 % of the 10 000
/// requests, Envoy's budget about 1/6 of the wave (20 % of the requests
/// still in flight: m / 6 when every retry is refused), none for the
/// breakers, which the first 100 failures open; and fewer than 1 % of the
/// reconnects succeed.
#[test]
fn the_shipped_herd_crashes_once_under_every_stack_and_the_gates_count_its_retries() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/stacks-herd.toml");
    let plan = csmacd::sweep::load(&path, None).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = 0;
    for pt in &plan.points {
        let kind = pt.axes[0].1.as_str();
        if kind == "aws-adaptive" {
            // Its limiter keeps connecting slowly for the whole 600 s.
            continue;
        }
        let r = pt.scenario.run(pt.replication_seeds()[0]).unwrap();
        let retries = attempts(&r) - calls(&r);
        assert_eq!(r.metric("crashes"), 1.0, "{kind}");
        assert!(r.metric("success_rate") < 0.01, "{kind}");
        match kind {
            "finagle" => assert_eq!(retries, 10 * 10 + 2000),
            "envoy" => assert!(retries.abs_diff(10_000 / 6) <= 20, "{retries}"),
            "polly-breaker" | "resilience4j-breaker" => assert_eq!(retries, 0, "{kind}"),
            _ => {}
        }
        seen += 1;
    }
    assert_eq!(seen, 6);
}

/// A bare number for a duration or a rate is refused with readings in the
/// units the service world takes, never slots.
#[test]
fn bare_numbers_get_service_units() {
    let err = |group: &str| {
        let text = format!(
            "duration = \"10s\"\n[server]\nkind = \"flaky\"\nfailure = 1.0\n[[clients]]\n{group}\n"
        );
        scenario::from_str("t.toml", "t", &text)
            .unwrap_err()
            .to_string()
    };
    let e = err(
        "count = 1\ncalls = { kind = \"once\" }\nstack = { kind = \"aws-standard\", base = 0.05 }",
    );
    assert!(e.contains("\"0.05s\" (= 50ms) or \"0.05ms\""), "{e}");
    assert!(!e.contains("slot"), "{e}");
    let e = err("calls = { kind = \"fresh\", rate = 0.1 }");
    assert!(e.contains("\"0.1/s\""), "{e}");
    let e = err("count = 1\ncalls = { kind = \"once\" }\ntimeout = 2");
    assert!(e.contains("\"2s\" or \"2ms\""), "{e}");
}
