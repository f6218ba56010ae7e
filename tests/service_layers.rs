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
