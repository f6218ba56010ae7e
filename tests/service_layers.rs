//! Servers that call servers: retries multiply along the path (exact
//! attempt counts against an always-failing leaf), a worker held while
//! its downstream call goes on, and the file's errors (rings, unknown
//! names).

use csmacd::results::{Cell, RunOutput};
use csmacd::scenario;
use csmacd::world;

fn service(text: &str) -> world::Scenario {
    scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    match scenario::from_str("test.toml", "test", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// A chain of `layers` servers, each retrying 3 times (4 attempts), the
/// last failing every attempt; `calls` clients call the first once.
fn chain(layers: usize, calls: u64) -> String {
    let mut s = String::from("duration = \"100s\"\n");
    for k in 0..layers {
        s += &format!("[[servers]]\nname = \"s{k}\"\nkind = \"flaky\"\n");
        if k + 1 < layers {
            s += &format!(
                "failure = 0.0\ndownstream = {{ server = \"s{}\", max_retries = 3 }}\n",
                k + 1
            );
        } else {
            s += "failure = 1.0\n";
        }
    }
    s += &format!("[[clients]]\ncount = {calls}\ncalls = {{ kind = \"once\", at = \"0s\" }}\nmax_retries = 3\n");
    s
}

/// servers.csv's rows: name, attempts, served, refused, amplification.
fn servers(out: &RunOutput) -> Vec<(String, u64, u64, u64, f64)> {
    out.table("servers")
        .iter()
        .map(|r| {
            let count = |c: &Cell| match c {
                Cell::Count(n) => *n,
                other => panic!("not a count: {other:?}"),
            };
            let name = match &r[0] {
                Cell::Text(t) => t.to_string(),
                other => panic!("not a name: {other:?}"),
            };
            let amp = match r[7] {
                Cell::Number(x) => x,
                ref other => panic!("not a number: {other:?}"),
            };
            (name, count(&r[1]), count(&r[2]), count(&r[3]), amp)
        })
        .collect()
}

#[test]
fn retries_multiply_along_a_chain_exactly() {
    let calls = 10;
    for (layers, leaf) in [(2, 16u64), (3, 64)] {
        let sc = service(&chain(layers, calls));
        let out = sc.run(1).unwrap();
        let rows = servers(&out);
        assert_eq!(rows.len(), layers);
        for (k, (name, attempts, served, refused, amp)) in rows.iter().enumerate() {
            let per_call = 4u64.pow(k as u32 + 1);
            assert_eq!(name, &format!("s{k}"));
            assert_eq!(*attempts, per_call * calls, "{layers} layers, server {k}");
            assert_eq!(*amp, per_call as f64, "{layers} layers, server {k}");
            // Nothing succeeds: the leaf refuses all, the others serve none.
            assert_eq!(*served, 0);
            let leaf_refusals = if k + 1 == layers { *attempts } else { 0 };
            assert_eq!(*refused, leaf_refusals);
        }
        assert_eq!(rows[layers - 1].1, leaf * calls);
        // The top-level totals are the clients' alone.
        assert_eq!(out.metric("calls"), calls as f64);
        assert_eq!(out.metric("attempts"), 4.0 * calls as f64);
        assert_eq!(out.metric("successes"), 0.0);
        // validate's worst case is the same product.
        let world::Scenario::Service(s) = &sc else {
            panic!("a service scenario")
        };
        let worst: Vec<f64> = (1..=layers as i32).map(|k| 4f64.powi(k)).collect();
        assert_eq!(s.worst_amplification(), worst);
    }
}

#[test]
fn a_healthy_chain_succeeds_with_one_attempt_per_layer() {
    let text = chain(3, 5).replace("failure = 1.0", "failure = 0.0");
    let out = service(&text).run(1).unwrap();
    for (_, attempts, served, refused, amp) in servers(&out) {
        assert_eq!((attempts, served, refused, amp), (5, 5, 0, 1.0));
    }
    assert_eq!(out.metric("success_rate"), 1.0);
}

#[test]
fn a_worker_is_held_while_its_downstream_call_goes_on() {
    // One worker at the front; the back end takes exactly 1 s with many
    // workers. Two calls at once: the second waits for the front's one
    // worker, held through the first's downstream second, so the calls
    // take 1 s and 2 s (plus the front's 1 us of work each).
    let out = service(
        r#"duration = "10s"
[[servers]]
name = "front"
kind = "queue"
service = { kind = "deterministic", value = "1us" }
workers = 1
downstream = { server = "back", max_retries = 0 }
[[servers]]
name = "back"
kind = "queue"
service = { kind = "deterministic", value = "1s" }
workers = 8
[[clients]]
count = 2
calls = { kind = "once", at = "0s" }
max_retries = 0
"#,
    )
    .run(1)
    .unwrap();
    assert_eq!(out.metric("successes"), 2.0);
    let mean = out.metric("latency_mean_s");
    let want = (1.000_001 + 2.000_002) / 2.0;
    assert!((mean - want).abs() < 0.005 * want, "{mean} against {want}");
}

#[test]
fn servers_in_a_ring_and_unknown_names_are_refused() {
    let ring = r#"duration = "10s"
[[servers]]
name = "a"
kind = "flaky"
failure = 0.5
downstream = { server = "b" }
[[servers]]
name = "b"
kind = "flaky"
failure = 0.5
downstream = { server = "a" }
[[clients]]
count = 1
calls = { kind = "once", at = "0s" }
"#;
    let e = error(ring);
    assert!(e.contains("ring (a -> b -> a)"), "{e}");
    let unknown = ring.replace("server = \"a\" }", "server = \"c\" }");
    let e = error(&unknown);
    assert!(
        e.contains("\"c\" is not a server") && e.contains("\"a\", \"b\""),
        "{e}"
    );
    let line = ring.replace("downstream = { server = \"a\" }\n", "");
    let e = error(&line.replace("[[clients]]\n", "[[clients]]\nserver = \"z\"\n"));
    assert!(e.contains("clients.0.server"), "{e}");
    let e = error(&line.replace("name = \"b\"\n", ""));
    assert!(e.contains("servers.1.name"), "{e}");
}

/// An api answering at once that calls a slow db for every attempt: the
/// clients time out after 100 ms and retry; the api's calls to the db
/// retry after their own 300 ms timeouts, with `deadline` given.
fn deadline_chain(deadline: &str, db: &str) -> String {
    format!(
        r#"duration = "30s"
[network]
delay = {{ kind = "abs-normal", mean = "2ms", sd = "1ms" }}
[[servers]]
name = "api"
kind = "flaky"
failure = 0.0
downstream = {{ server = "db", timeout = "300ms", max_retries = 5, backoff = {{ kind = "constant", delay = "20ms" }}{deadline} }}
[[servers]]
name = "db"
kind = "queue"
service = {{ kind = "exponential", mean = "40ms" }}
workers = 2
{db}
[[clients]]
count = 50
calls = {{ kind = "poisson", rate = "0.4/s", until = "25s" }}
timeout = "100ms"
max_retries = 2
backoff = {{ kind = "constant", delay = "50ms" }}
"#
    )
}

fn service_of(sc: &world::Scenario) -> &csmacd::service::Scenario {
    match sc {
        world::Scenario::Service(s) => s,
        _ => panic!("a service scenario"),
    }
}

/// A downstream call: its caller's deadline, and its attempts' send and
/// service start times.
type DownstreamCall = (u64, Vec<(u64, Option<u64>)>);

/// Per downstream call of the trace, its caller's deadline (the client
/// attempt's send time plus its 100 ms timeout: the api answers at once,
/// so the call is made when that attempt reaches it) and its rows'
/// (sent, starts).
fn downstream_calls(rows: &[csmacd::service::AttemptRow]) -> Vec<DownstreamCall> {
    use std::collections::HashMap;
    let timeout = 100_000_000_000u64;
    let mut by_arrival: HashMap<u64, u64> = HashMap::new();
    for r in rows.iter().filter(|r| r.group != "api->db") {
        let at = r.arrives.expect("every client attempt reaches the api");
        assert!(
            by_arrival.insert(at, r.sent + timeout).is_none(),
            "two arrivals at {at}"
        );
    }
    let mut calls: HashMap<u64, DownstreamCall> = HashMap::new();
    for r in rows.iter().filter(|r| r.group == "api->db") {
        let e = calls.entry(r.call).or_insert_with(|| {
            let deadline = *by_arrival
                .get(&r.sent)
                .expect("a downstream call starts when its caller's attempt arrives");
            (deadline, Vec::new())
        });
        e.1.push((r.sent, r.starts));
    }
    let mut v: Vec<_> = calls.into_values().collect();
    v.sort();
    v
}

#[test]
fn a_propagated_deadline_stops_downstream_attempts_and_cuts_wasted_work() {
    let mut wasted = Vec::new();
    for (deadline, db) in [
        ("", ""),
        (", deadline = \"propagate\"", ""),
        (", deadline = \"propagate\", cancel = true", ""),
        (", deadline = \"propagate\"", "drop_expired = true"),
    ] {
        let sc = service(&deadline_chain(deadline, db));
        let rows = csmacd::service::run_traced(service_of(&sc), sc.seed()).unwrap();
        let calls = downstream_calls(&rows);
        assert!(calls.len() > 500, "{} downstream calls", calls.len());
        let late_sent = calls
            .iter()
            .flat_map(|(d, rs)| rs.iter().filter(move |(sent, _)| sent >= d))
            .count();
        let late_start = calls
            .iter()
            .flat_map(|(d, rs)| rs.iter().filter(move |(_, s)| s.is_some_and(|s| s >= *d)))
            .count();
        let propagate = !deadline.is_empty();
        if propagate {
            assert_eq!(late_sent, 0, "{deadline}: attempts sent after the deadline");
        } else {
            // Without propagation the api keeps calling after its client
            // has gone: the check above can fail.
            assert!(
                late_sent > 100,
                "{late_sent} late attempts without propagation"
            );
        }
        if db.contains("drop_expired") {
            assert_eq!(
                late_start, 0,
                "{deadline}: service begun after the deadline"
            );
        } else if !propagate {
            assert!(
                late_start > 100,
                "{late_start} begun late without propagation"
            );
        }
        let out = sc.run(sc.seed()).unwrap();
        wasted.push(out.metric("wasted_work_s"));
    }
    eprintln!("wasted work: {wasted:?}");
    // Propagation cuts the db's wasted work; cancelling or dropping what
    // is left cuts it more.
    assert!(wasted[1] < 0.8 * wasted[0], "{wasted:?}");
    assert!(wasted[2] < wasted[1] && wasted[3] < wasted[1], "{wasted:?}");
}

#[test]
fn a_retry_budget_in_the_middle_layer_holds_the_leaf_to_its_bound() {
    // client (4 attempts) -> s0 -> s1 (4 attempts each) -> s2, always
    // failing; s0's calls to s1 retry without a limit of their own but
    // behind a shared budget: each call deposits d, each retry costs c,
    // the bucket starts with s (and never fills). Its documented bound
    // (docs/service.md, "The retry gates, exactly"): M calls make at most
    // floor((s + M d) / c) retries, so s1 sees at most M + that and the
    // leaf 4 times as many.
    let (d, c, s) = (0.25, 1.0, 5.0);
    let text = format!(
        r#"duration = "60s"
[network]
delay = {{ kind = "exponential", mean = "5ms" }}
[[servers]]
name = "s0"
kind = "flaky"
failure = 0.0
downstream = {{ server = "s1", max_retries = 1000, budget = {{ size = 100000, deposit = {d}, cost = {c}, start = {s}, scope = "shared" }} }}
[[servers]]
name = "s1"
kind = "flaky"
failure = 0.0
downstream = {{ server = "s2", max_retries = 3 }}
[[servers]]
name = "s2"
kind = "flaky"
failure = 1.0
[[clients]]
count = 1
calls = {{ kind = "poisson", rate = "20/s", until = "10s" }}
max_retries = 3
"#
    );
    let out = service(&text).run(7).unwrap();
    let n = out.metric("calls");
    assert!(n > 150.0, "{n} calls");
    let rows = servers(&out);
    // Every call fails: 4 attempts each at s0, each one call to s1.
    let middle_calls = 4.0 * n;
    assert_eq!(rows[0].1 as f64, middle_calls);
    let retries = ((s + middle_calls * d) / c).floor();
    let bound = 4.0 * (middle_calls + retries) / n;
    let leaf = rows[2].4;
    assert!(
        leaf <= bound,
        "{leaf} attempts per call at the leaf, bound {bound}"
    );
    // Against an always-failing leaf every retry the budget allows is
    // taken: the bound is met to within one retry (its floor).
    assert!(leaf >= bound - 4.0 / n, "{leaf} against {bound}");
}

#[test]
fn the_timeseries_has_a_row_per_server_and_bin_summing_to_servers_csv() {
    let text = chain(3, 10).replace(
        "calls = { kind = \"once\", at = \"0s\" }",
        "calls = { kind = \"once\", at = \"2.5s\" }",
    );
    let sc = service(&text);
    let out = sc.run(1).unwrap();
    let ts = out.table("timeseries");
    let cols = csmacd::service::SERVER_TIMESERIES_COLUMNS;
    assert_eq!(cols[..2], ["t_s", "server"]);
    let at = |name: &str| cols.iter().position(|c| *c == name).unwrap();
    // 100 s in 1 s bins, three servers each.
    assert_eq!(ts.len(), 300);
    let count = |c: &Cell| match c {
        Cell::Count(n) => *n,
        other => panic!("not a count: {other:?}"),
    };
    for (k, (name, attempts, served, refused, _)) in servers(&out).into_iter().enumerate() {
        let rows: Vec<_> = ts
            .iter()
            .filter(|r| matches!(&r[1], Cell::Text(t) if t.to_string() == name))
            .collect();
        assert_eq!(rows.len(), 100, "{name}");
        let sum = |c: usize| rows.iter().map(|r| count(&r[c])).sum::<u64>();
        assert_eq!(sum(at("attempts")), attempts, "{name}");
        assert_eq!(sum(at("served")), served, "{name}");
        assert_eq!(sum(at("refused")), refused, "{name}");
        // Every attempt is made in the bin of 2.5 s: the calls start then,
        // the flaky servers answer at once, with no network delay.
        assert_eq!(count(&rows[2][at("attempts")]), attempts, "{name}");
        // Calls to each server: the clients' 10 at the first, one per
        // attempt served above it at the others.
        let calls = sum(at("calls_started"));
        assert_eq!(calls, 10 * 4u64.pow(k as u32), "{name}");
    }
}

#[test]
fn a_timeseries_chart_of_several_servers_draws_a_line_per_server() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/service-layers.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let plan = csmacd::sweep::from_str(path, "service-layers", &text, None).unwrap();
    let chart = &plan.charts[0];
    assert_eq!(chart.table.as_deref(), Some("timeseries"));
    assert_eq!(chart.series, ["server"]);
    // `server` is no column of a one-server timeseries.
    let one = "duration = \"10s\"\n[server]\nkind = \"flaky\"\nfailure = 0.5\n[[clients]]\ncount = 1\ncalls = { kind = \"once\", at = \"0s\" }\n[sweep]\n\"server.failure\" = [0.1, 0.2]\n[[chart]]\ntable = \"timeseries\"\nx = \"t_s\"\ny = \"attempts\"\nseries = \"server\"\n";
    let e = csmacd::sweep::from_str("one.toml", "one", one, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("chart.0.series") && e.contains("`server`"),
        "{e}"
    );
}

#[test]
fn validate_checks_every_server_with_its_downstream_load_and_budgets() {
    // 100 calls/s reach the api, 90 % of them served: 90/s of downstream
    // calls offered to a db serving 2 x 1 / 25 ms = 80/s.
    let text = r#"duration = "10s"
[[servers]]
name = "api"
kind = "flaky"
failure = 0.1
downstream = { server = "db", max_retries = 3, budget = { size = 10, deposit = 0.2, cost = 2 } }
[[servers]]
name = "db"
kind = "queue"
service = { kind = "deterministic", value = "25ms" }
workers = 2
[[clients]]
count = 10
calls = { kind = "poisson", rate = "10/s", until = "10s" }
max_retries = 4
"#;
    let sc = service(text);
    let s = service_of(&sc);
    let rates = s.offered_rates();
    assert!(
        (rates[0] - 100.0).abs() < 1e-9 && (rates[1] - 90.0).abs() < 1e-9,
        "{rates:?}"
    );
    let w = s.warnings();
    let over: Vec<_> = w.iter().filter(|w| w.kind == "overload").collect();
    assert_eq!(over.len(), 1, "{w:?}");
    assert_eq!(over[0].key, "servers.1");
    assert!(
        over[0].message.contains("utilisation 1.125"),
        "{}",
        over[0].message
    );
    // The db's calls retry at most 3 times, but the budget lets through
    // 1 + 0.2 / 2 = 1.1 attempts per call: 5 x 1.1 at the db.
    let amp = s.worst_amplification();
    assert_eq!(amp[0], 5.0);
    assert!((amp[1] - 5.5).abs() < 1e-12, "{amp:?}");
    assert_eq!(csmacd::service::amplification_figure(amp[1]), "5.50");
}
