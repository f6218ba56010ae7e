//! The shipped service scenarios beyond the first anchors: the retry gates
//! of Brooker's retry_sim against their closed forms and bounds, the herd
//! let in by an accept-rate gate at its floor N / rate, the sweep over
//! policy x clients x failure rate, and the charts over time.

use csmacd::results::{Cell, RunOutput};
use csmacd::scenario;
use csmacd::sweep;
use csmacd::world;
use std::path::Path;

fn shipped(name: &str) -> sweep::Plan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    sweep::load(&path, None).unwrap_or_else(|e| panic!("{e}"))
}

fn service(text: &str) -> world::Scenario {
    let sc = scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(sc, world::Scenario::Service(_)));
    sc
}

/// (calls, attempts, successes) of the group named `group`.
fn group(r: &RunOutput, group: &str) -> (f64, f64, f64) {
    let row = r
        .table("groups")
        .iter()
        .find(|row| matches!(&row[0], Cell::Text(t) if t.as_str() == group))
        .unwrap_or_else(|| panic!("no group {group}"));
    let count = |c: &Cell| match c {
        Cell::Count(v) => *v as f64,
        other => panic!("a count, not {other:?}"),
    };
    (count(&row[2]), count(&row[3]), count(&row[4]))
}

/// scenarios/service-retry-gates.toml at p = 0.05 and 0.5: no retries and
/// three retries meet 1 - p^(N+1) and 1 + p + ... + p^N within 4 standard
/// errors; the per-client token bucket never pays more retries than its
/// tokens (5 per client at start, 0.1 per call); the breaker, at p = 0.5
/// far above its 10 %, lets almost no retry through.
#[test]
fn retry_gates_meet_the_closed_forms_and_bounds() {
    let plan = shipped("service-retry-gates.toml");
    for p in [0.05f64, 0.5] {
        let point = plan
            .points
            .iter()
            .find(|pt| pt.axes[0].1 == p.to_string())
            .unwrap_or_else(|| panic!("no point for p = {p}"));
        let r = point.scenario.run(point.replication_seeds()[0]).unwrap();
        for (name, n) in [("no-retries", 0i32), ("three-retries", 3)] {
            let (calls, attempts, successes) = group(&r, name);
            let success = 1.0 - p.powi(n + 1);
            let load: f64 = (0..=n).map(|k| p.powi(k)).sum();
            let se = (success * (1.0 - success) / calls).sqrt();
            // Attempts per call are at most N + 1: variance at most (N + 1)^2 / 4.
            let se_load = (n as f64 + 1.0) / 2.0 / calls.sqrt();
            assert!(
                (successes / calls - success).abs() <= 4.0 * se + 1e-12,
                "{name} at p = {p}: success {} vs {success}",
                successes / calls
            );
            assert!(
                (attempts / calls - load).abs() <= 4.0 * se_load,
                "{name} at p = {p}: load {} vs {load}",
                attempts / calls
            );
        }
        let (calls, attempts, _) = group(&r, "adaptive");
        let most = calls + 100.0 * 5.0 + 0.1 * calls;
        assert!(attempts <= most, "adaptive at p = {p}: {attempts} > {most}");
        if p == 0.5 {
            // Every failure that the bucket cannot pay ends a call, so the
            // bucket is near empty and the load near its bound.
            assert!(attempts / calls > 1.1, "{}", attempts / calls);
            let (calls, attempts, successes) = group(&r, "breaker");
            assert!(attempts / calls < 1.01, "{}", attempts / calls);
            let se = (0.25 / calls).sqrt();
            assert!((successes / calls - 0.5).abs() < 4.0 * se + 0.01);
        }
    }
}

/// A herd of `clients` reconnecting to a server of 1000/s that crashes
/// above 200 waiting; `gate` is the accept-rate gate's keys (or nothing).
fn herd(kind: &str, clients: u64, delay: &str, gate: &str) -> world::Scenario {
    service(&format!(
        r#"duration = "600s"
[server]
kind = "queue"
rate = "1000/s"
crash_above = 200
restart = "5s"
{gate}
[network]
delay = {delay}
[[clients]]
count = {clients}
calls = {{ kind = "reconnect", at = "0s" }}
backoff = {{ kind = "{kind}", base = "1s", cap = "64s" }}
"#
    ))
}

const FIXED: &str = r#""10ms""#;
const SPREAD: &str = r#"{ kind = "abs-normal", mean = "10ms", sd = "2ms" }"#;

/// Without jitter and with a fixed network delay the whole herd reaches the
/// gate at 1.01 s; the gate lets one in every 2 ms and holds the rest, each
/// is served in 1 ms and hears back 10 ms later: the last connects at
/// exactly 1.01 + (N - 1) / 500 + 0.001 + 0.01 s, no attempt is wasted, and
/// the server (crashing above 200 waiting) never crashes. Without the gate
/// every wave crashes it.
#[test]
fn accept_gate_lets_the_herd_in_at_its_floor() {
    let n = 1000u64;
    let gate = format!("accept_rate = \"500/s\"\naccept_burst = {n}");
    let r = herd("exponential-no-jitter", n, FIXED, &gate)
        .run(3)
        .unwrap();
    let floor_ps: u64 =
        1_010_000_000_000 + (n - 1) * 2_000_000_000 + 1_000_000_000 + 10_000_000_000;
    assert_eq!(r.metric("all_connected_s"), floor_ps as f64 / 1e12);
    assert_eq!(r.metric("crashes"), 0.0);
    assert_eq!(r.metric("attempts"), n as f64);
    let ungated = herd("exponential-no-jitter", n, FIXED, "").run(3).unwrap();
    assert!(ungated.metric("all_connected_s").is_nan());
    assert!(ungated.metric("crashes") >= 10.0);
}

/// With full jitter the herd reaches the gate spread over the first second
/// (1000 to 10 000 a second, above the gate's 500): the gate is never idle
/// for long once its queue has formed, so the last client connects within
/// the first wait (1 s) of the floor (N - 1) / rate, and never before it.
#[test]
fn accept_gate_with_jitter_is_close_to_the_floor() {
    for n in [1000u64, 10_000] {
        let gate = format!("accept_rate = \"500/s\"\naccept_burst = {n}");
        for seed in 1..=3 {
            let r = herd("full-jitter", n, SPREAD, &gate).run(seed).unwrap();
            let t = r.metric("all_connected_s");
            let floor = (n - 1) as f64 / 500.0;
            assert!(
                t >= floor && t <= floor + 1.1,
                "N = {n}: {t} s, floor {floor}"
            );
            assert_eq!(r.metric("crashes"), 0.0);
        }
    }
}

/// A gate without room to hold attempts (`accept_burst = 0`) refuses all
/// but one of a lockstep wave: each wave of a herd without jitter lets
/// exactly one client in (fixed delay: they all arrive at one instant).
#[test]
fn accept_gate_without_burst_lets_one_in_per_lockstep_wave() {
    let r = herd(
        "exponential-no-jitter",
        100,
        FIXED,
        "accept_rate = \"500/s\"\naccept_burst = 0",
    )
    .run(1)
    .unwrap();
    // Waves leave at 1, 3.02, 7.04, 15.06, 31.08, 63.1, then every 64.02 s:
    // 14 within 600 s, the k-th of 100 - (k - 1) clients.
    let waves = 14u64;
    let attempts: u64 = (0..waves).map(|k| 100 - k).sum();
    assert_eq!(r.metric("attempts"), attempts as f64);
    assert_eq!(r.metric("successes"), waves as f64);
    assert_eq!(r.metric("crashes"), 0.0);
}

/// scenarios/service-retry-grid.toml: one file sweeps policy x clients x
/// failure rate (4 x 3 x 4 points); each point's load follows the closed
/// form 1 + p + ... + p^8 within 4 standard errors, whatever the policy.
#[test]
fn policy_clients_failure_grid_sweeps_in_one_file() {
    let plan = shipped("service-retry-grid.toml");
    assert_eq!(plan.points.len(), 4 * 3 * 4);
    let axes: Vec<&str> = plan.axes.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(
        axes,
        [
            "clients.0.backoff.kind",
            "clients.0.count",
            "server.failure"
        ]
    );
    for pt in plan.points.iter().filter(|pt| pt.axes[1].1 == "1000") {
        let p: f64 = pt.axes[2].1.parse::<f64>().unwrap();
        let r = pt.scenario.run(pt.replication_seeds()[0]).unwrap();
        let load: f64 = (0..=8).map(|k| p.powi(k)).sum();
        let se = 9.0 / 2.0 / 1000f64.sqrt();
        let got = r.metric("load");
        assert!(
            (got - load).abs() <= 4.0 * se,
            "{}: {got} vs {load}",
            pt.describe()
        );
    }
}
