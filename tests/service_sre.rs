//! The service world's queues, timeouts and gates against closed forms:
//! M/M/c mean latency by Erlang C (FIFO and LIFO), M/G/1 with lognormal
//! service by Pollaczek-Khinchine, the timed-out share 1 - Φ((ln T - μ)/σ)
//! with free workers and the work those attempts take, exact half-open
//! probe counts, Retry-After from the backlog, the cost of refusals, calls
//! in flight, an SLO, and load profiles. Fixed seeds throughout; statistical
//! checks within 5 standard errors.

use crate::common::temp_dir;
use csmacd::results::RunOutput;
use csmacd::scenario;
use csmacd::world;
use statrs::distribution::{ContinuousCDF, Normal};

fn service(text: &str) -> world::Scenario {
    scenario::from_str("test.toml", "test", text).unwrap_or_else(|e| panic!("{e}"))
}

fn phi(x: f64) -> f64 {
    Normal::new(0.0, 1.0).unwrap().cdf(x)
}

/// Mean and standard error of a metric over independent replications.
fn over_reps(sc: &world::Scenario, reps: u64, metric: &str) -> (f64, f64) {
    let v: Vec<f64> = (0..reps)
        .map(|r| sc.run(500 + r).unwrap().metric(metric))
        .collect();
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

fn within(got: f64, want: f64, se: f64, what: &str) {
    assert!(
        (got - want).abs() <= 5.0 * se,
        "{what}: {got} against the closed form {want} (5 standard errors: {})",
        5.0 * se
    );
}

/// Erlang C: the probability that an arrival waits in M/M/c at offered
/// load a = λ/μ.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 * c as f64 / (c as f64 - a);
    last / (sum + last)
}

fn mmc(workers: u32, discipline: &str) -> world::Scenario {
    service(&format!(
        r#"duration = "210s"
warmup = "10s"
[server]
kind = "queue"
service = {{ kind = "exponential", mean = "10ms" }}
workers = {workers}
discipline = "{discipline}"
[[clients]]
calls = {{ kind = "fresh", rate = "300/s" }}
max_retries = 0
"#
    ))
}

/// M/M/4 at λ = 300/s, μ = 100/s: the mean latency is the Erlang C wait
/// C(c, a) / (cμ - λ) plus the mean service time, for FIFO and for LIFO
/// (whose mean wait is the same; its tail is longer).
#[test]
fn mmc_mean_latency_is_erlang_c() {
    let (c, lambda, mu) = (4, 300.0, 100.0);
    let want = erlang_c(c, lambda / mu) / (c as f64 * mu - lambda) + 1.0 / mu;
    let fifo = mmc(c, "fifo");
    let (m, se) = over_reps(&fifo, 8, "latency_mean_s");
    within(m, want, se, "M/M/4 FIFO mean latency");
    let lifo = mmc(c, "lifo");
    let (m, se) = over_reps(&lifo, 8, "latency_mean_s");
    within(m, want, se, "M/M/4 LIFO mean latency");
    let p999 = |sc: &world::Scenario| sc.run(9).unwrap().metric("latency_p999_s");
    assert!(p999(&lifo) > p999(&fifo));
}

/// M/G/1 with lognormal service (median 10 ms, sigma 0.5) at λ = 50/s:
/// Pollaczek-Khinchine gives the mean wait λ E[S²] / (2 (1 - ρ)).
#[test]
fn mg1_lognormal_mean_wait_is_pollaczek_khinchine() {
    let (mu, sigma, lambda) = ((0.01f64).ln(), 0.5f64, 50.0);
    let sc = service(&format!(
        r#"duration = "410s"
warmup = "10s"
[server]
kind = "queue"
service = {{ kind = "lognormal", mu = {mu}, sigma = {sigma} }}
[[clients]]
calls = {{ kind = "fresh", rate = "{lambda}/s" }}
max_retries = 0
"#
    ));
    let es = (mu + sigma * sigma / 2.0).exp();
    let es2 = (2.0 * mu + 2.0 * sigma * sigma).exp();
    let rho = lambda * es;
    let want = lambda * es2 / (2.0 * (1.0 - rho)) + es;
    let (m, se) = over_reps(&sc, 8, "latency_mean_s");
    within(m, want, se, "M/G/1 lognormal mean latency");
}

fn free_workers(cancel: bool) -> world::Scenario {
    service(&format!(
        r#"duration = "400s"
[server]
kind = "queue"
service = {{ kind = "lognormal", median = "20ms", p99 = "400ms" }}
workers = 100000
[[clients]]
calls = {{ kind = "fresh", rate = "50/s" }}
timeout = "250ms"
cancel = {cancel}
max_retries = 0
"#
    ))
}

/// With free workers an attempt times out iff its service time passes T:
/// P = 1 - Φ((ln T - μ)/σ) (2.49 % for median 20 ms, p99 400 ms, T =
/// 250 ms). Not cancelled, those attempts take E[S; S > T] each of the
/// server's time (25 % of its work); cancelled (with no network delay),
/// exactly T each.
#[test]
fn timed_out_share_and_wasted_work_meet_the_lognormal_closed_forms() {
    let mu = (0.02f64).ln();
    let sigma = (20.0f64).ln() / 2.326_347_874_040_841;
    let t = 0.25f64;
    let p = 1.0 - phi((t.ln() - mu) / sigma);
    assert!((p - 0.0249).abs() < 0.0005);
    let r = free_workers(false).run(3).unwrap();
    let n = r.metric("attempts");
    let timeouts = r.metric("timeouts");
    within(
        timeouts / n,
        p,
        (p * (1.0 - p) / n).sqrt(),
        "timed-out share",
    );
    // E[S^k; S > T] = exp(kμ + k²σ²/2) (1 - Φ((ln T - μ - kσ²)/σ)).
    let partial = |k: f64| {
        (k * mu + k * k * sigma * sigma / 2.0).exp()
            * (1.0 - phi((t.ln() - mu - k * sigma * sigma) / sigma))
    };
    let (m1, m2) = (partial(1.0), partial(2.0));
    let es = (mu + sigma * sigma / 2.0).exp();
    assert!((m1 / es - 0.25).abs() < 0.01, "{}", m1 / es);
    // The attempts still in service at the end are not counted yet: a few
    // of the last second's.
    within(
        r.metric("wasted_work_s"),
        n * m1,
        (n * (m2 - m1 * m1)).sqrt(),
        "wasted work without cancel",
    );
    let r = free_workers(true).run(3).unwrap();
    let wasted = r.metric("wasted_work_s");
    let timeouts = r.metric("timeouts");
    assert!(
        (wasted - t * timeouts).abs() < 1e-9 * timeouts,
        "cancelled: {wasted} s for {timeouts} timeouts"
    );
    // Successful calls' latency: the service time below T.
    let p50 = r.metric("latency_p50_s");
    let median_ok = (mu + sigma * normal_quantile(0.5 * (1.0 - p))).exp();
    assert!(
        (p50 / median_ok - 1.0).abs() < 0.03,
        "{p50} against {median_ok}"
    );
}

fn normal_quantile(q: f64) -> f64 {
    Normal::new(0.0, 1.0).unwrap().inverse_cdf(q)
}

/// Half open, a classic breaker lets `probes` attempts through; against a
/// server that always fails the first failure reopens it. With a round
/// trip of 20 ms, calls at 10^4/s and `open` = 10 s, each cycle takes
/// 10.02 s and sends exactly `probes` attempts: after the first opening
/// (before the 1 s warmup), 9 cycles fit in 95 s.
#[test]
fn half_open_breaker_sends_exactly_its_probes() {
    for probes in [1u32, 2, 3] {
        let sc = service(&format!(
            r#"duration = "95s"
warmup = "1s"
[server]
kind = "flaky"
failure = 1
[network]
delay = "10ms"
[[clients]]
calls = {{ kind = "fresh", rate = "10000/s" }}
max_retries = 0
breaker = {{ consecutive = 5, open = "10s", probes = {probes}, scope = "shared" }}
"#
        ));
        let r = sc.run(1).unwrap();
        assert_eq!(r.metric("attempts"), 9.0 * probes as f64, "probes {probes}");
        assert_eq!(r.metric("successes"), 0.0);
    }
}

fn backlog(cap: &str, workers: u32) -> RunOutput {
    service(&format!(
        r#"duration = "10s"
[server]
kind = "queue"
rate = "100/s"
workers = {workers}
queue_limit = 10
retry_after = "backlog"
{cap}
[[clients]]
count = 100
calls = {{ kind = "once", at = "0s" }}
max_retries = 1
"#
    ))
    .run(1)
    .unwrap()
}

/// Retry-After "backlog": the 90 attempts refused at once by a full queue
/// of 10 (10 ms each) are told 100 ms and all come back then, when the
/// queue has just emptied: 10 more succeed. Capped at 50 ms they come back
/// to half a queue: 5 more. Two workers halve the drain time (50 ms) and
/// double the service: the queue is empty again at their return.
#[test]
fn retry_after_backlog_is_the_queues_drain_time() {
    assert_eq!(backlog("", 1).metric("successes"), 20.0);
    assert_eq!(
        backlog("retry_after_cap = \"50ms\"", 1).metric("successes"),
        15.0
    );
    assert_eq!(backlog("", 2).metric("successes"), 20.0);
}

/// A refusal costs a worker `reject_cost`: 99 refusals of 1 ms each,
/// made after the one attempt served (10 ms), reach their clients at
/// 11 ms, ..., 109 ms: a mean failed latency of 60 ms.
#[test]
fn refusals_cost_the_server_time() {
    let sc = |cost: &str| {
        service(&format!(
            r#"duration = "10s"
[server]
kind = "queue"
rate = "100/s"
queue_limit = 1
reject_cost = "{cost}"
[[clients]]
count = 100
calls = {{ kind = "once", at = "0s" }}
max_retries = 0
"#
        ))
        .run(1)
        .unwrap()
    };
    let r = sc("1ms");
    assert_eq!(r.metric("successes"), 1.0);
    assert!((r.metric("failed_latency_mean_s") - 0.060).abs() < 1e-12);
    assert_eq!(sc("0s").metric("failed_latency_mean_s"), 0.0);
}

/// Calls still going at the end are their own count, not failures; an SLO
/// counts the calls within its latency.
#[test]
fn calls_in_flight_and_the_slo_are_exact() {
    let r = service(
        r#"duration = "25s"
slo = { latency = "15s", target = 0.9 }
[server]
kind = "queue"
rate = "0.1/s"
[[clients]]
count = 5
calls = { kind = "once", at = "0s" }
"#,
    )
    .run(1)
    .unwrap();
    assert_eq!(r.metric("successes"), 2.0);
    assert_eq!(r.metric("in_flight"), 3.0);
    assert_eq!(r.metric("success_rate"), 1.0);
    assert_eq!(r.metric("latency_mean_s"), 15.0);
    // Latencies 10 s and 20 s: one of the two within 15 s.
    assert_eq!(r.metric("slo_good"), 0.5);
    assert!((r.metric("slo_burn") - 5.0).abs() < 1e-9);
}

/// A profile multiplies a Poisson group's rate over its stretch: 10
/// clients at 2/s for 60 s with x3 over 20 s make 2000 calls on average.
#[test]
fn profile_multiplies_a_poisson_groups_rate() {
    let sc = service(
        r#"duration = "60s"
[server]
kind = "flaky"
failure = 0
[[clients]]
count = 10
calls = { kind = "poisson", rate = "2/s", until = "60s" }
profile = [{ from = "20s", to = "40s", factor = 3 }]
"#,
    );
    let calls = sc.run(4).unwrap().metric("calls");
    within(calls, 2000.0, 2000f64.sqrt(), "calls with a x3 stretch");
}

/// An empirical law draws the file's values with equal probability, and a
/// Prometheus histogram's buckets by their counts, uniformly within.
#[test]
fn empirical_service_times_come_from_the_file() {
    let dir = temp_dir("empirical");
    std::fs::write(dir.join("values.txt"), "# ms\n10ms\n30ms\n").unwrap();
    std::fs::write(
        dir.join("hist.prom"),
        "# TYPE x histogram\nx_bucket{le=\"0.01\"} 0\nx_bucket{le=\"0.02\"} 50\nx_bucket{le=\"0.04\"} 100\nx_bucket{le=\"+Inf\"} 100\nx_sum 2.2\nx_count 100\n",
    )
    .unwrap();
    let sc = |file: &str| {
        let text = format!(
            r#"duration = "200s"
[server]
kind = "queue"
service = {{ kind = "empirical", file = "{file}" }}
workers = 100000
[[clients]]
calls = {{ kind = "fresh", rate = "100/s" }}
"#
        );
        let path = dir.join("sc.toml");
        std::fs::write(&path, text).unwrap();
        scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
    };
    let r = sc("values.txt").run(2).unwrap();
    let n = r.metric("successes");
    within(
        r.metric("latency_mean_s"),
        0.020,
        0.010 / n.sqrt(),
        "values",
    );
    // Buckets (10, 20] and (20, 40] ms at 1/2 each: mean 22.5 ms, E[S²]
    // = (100+200+400)/3/2 + (400+800+1600)/3/2 ms².
    let r = sc("hist.prom").run(2).unwrap();
    let n = r.metric("successes");
    let var = (700.0 / 6.0 + 2800.0 / 6.0) * 1e-6 - 0.0225f64.powi(2);
    within(
        r.metric("latency_mean_s"),
        0.0225,
        (var / n).sqrt(),
        "histogram",
    );
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "12\n").unwrap();
    let err = scenario::from_str(
        "x.toml",
        "x",
        &format!(
            "duration = \"1s\"\n[server]\nkind = \"queue\"\nservice = {{ kind = \"empirical\", file = \"{}\" }}\n[[clients]]\ncalls = {{ kind = \"fresh\", rate = \"1/s\" }}\n",
            bad.display()
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("line 1") && err.contains("no unit"), "{err}");
}

/// `validate` compares first attempts with workers x service rate, and
/// warns of a per-client gate on one-off clients.
#[test]
fn validate_warns_of_overload_and_of_one_off_gates() {
    let sc = |rate: &str, scope: &str| {
        service(&format!(
            r#"duration = "60s"
[server]
kind = "queue"
service = {{ kind = "exponential", mean = "4ms" }}
workers = 2
[[clients]]
calls = {{ kind = "fresh", rate = "{rate}" }}
breaker = {{ consecutive = 5, open = "30s", scope = "{scope}" }}
"#
        ))
    };
    let kinds =
        |s: &world::Scenario| -> Vec<&str> { s.warnings().iter().map(|w| w.kind).collect() };
    assert_eq!(kinds(&sc("400/s", "shared")), Vec::<&str>::new());
    assert_eq!(kinds(&sc("600/s", "shared")), ["overload"]);
    assert_eq!(kinds(&sc("400/s", "client")), ["one-off-gate"]);
    let load = sc("400/s", "shared").offered_load().unwrap();
    assert_eq!(load.total(), csmacd::advice::Share::Fraction(0.8));
}

/// `csmacd trace` of a service scenario: a row per attempt with the wait
/// the policy drew (here Retry-After "backlog": 2 attempts x 200 ms) and
/// the gates' decision, the same in CSV and JSON lines.
#[test]
fn trace_lists_each_attempt_with_its_decision() {
    let dir = temp_dir("service-trace");
    let file = dir.join("t.toml");
    std::fs::write(
        &file,
        r#"duration = "3s"
[server]
kind = "queue"
rate = "5/s"
queue_limit = 2
retry_after = "backlog"
[network]
delay = "10ms"
[[clients]]
count = 4
calls = { kind = "once", at = "0s" }
timeout = "500ms"
backoff = { kind = "full-jitter", base = "100ms", cap = "1s" }
max_retries = 3
"#,
    )
    .unwrap();
    let out = crate::common::bin()
        .args(["trace", "--format", "csv"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "group,client,call,attempt,sent_s,arrives_s,starts_s,ends_s,outcome,wait_s,decision"
    );
    assert_eq!(lines[3], "full-jitter,2,2,1,0,0.01,,0.02,refused,0.4,retry");
    assert_eq!(lines.len(), 7);
    assert!(
        lines[1..]
            .iter()
            .filter(|l| l.ends_with("succeeded"))
            .count()
            == 4
    );
    let out = crate::common::bin()
        .args(["trace", "--format", "jsonl"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["ends_s"], 0.22);
    assert_eq!(first["outcome"], "ok");
}

fn expiring(extra: &str) -> RunOutput {
    service(&format!(
        r#"duration = "10s"
[server]
kind = "queue"
rate = "10/s"
{extra}
[[clients]]
count = 5
calls = {{ kind = "once", at = "0s" }}
timeout = "150ms"
max_retries = 0
"#
    ))
    .run(1)
    .unwrap()
}

/// One worker, 100 ms a service, five attempts at once with a 150 ms
/// timeout: four time out. The server finishes all of them (400 ms of
/// work for clients that had gone); dropping expired attempts it serves
/// only the second (100 ms); cancelled at 150 ms, the second stops after
/// 50 ms and the rest leave the queue.
#[test]
fn expired_and_cancelled_attempts_take_only_the_work_begun_for_them() {
    let r = expiring("");
    assert_eq!((r.metric("successes"), r.metric("timeouts")), (1.0, 4.0));
    assert!((r.metric("wasted_work_s") - 0.4).abs() < 1e-12);
    let r = expiring("drop_expired = true");
    assert_eq!(r.metric("timeouts"), 4.0);
    assert!((r.metric("wasted_work_s") - 0.1).abs() < 1e-12);
    let r = service(
        r#"duration = "10s"
[server]
kind = "queue"
rate = "10/s"
[[clients]]
count = 5
calls = { kind = "once", at = "0s" }
timeout = "150ms"
cancel = true
max_retries = 0
"#,
    )
    .run(1)
    .unwrap();
    assert_eq!(r.metric("timeouts"), 4.0);
    assert!((r.metric("wasted_work_s") - 0.05).abs() < 1e-12);
}

/// After a x3 stretch (100/s to 300/s over 10 s) against 150/s, the
/// backlog of about 1500 calls drains at the 50/s headroom in about 30 s;
/// goodput stays at 150/s meanwhile, so it recovers when the queue has
/// drained (within the window's second of it), not when the stretch ends.
#[test]
fn recovery_is_judged_on_goodput_beside_the_drain_time() {
    let sc = service(
        r#"duration = "120s"
[server]
kind = "queue"
rate = "150/s"
[[clients]]
calls = { kind = "fresh", rate = "100/s" }
profile = [{ from = "20s", to = "30s", factor = 3 }]
"#,
    );
    let r = sc.run(2).unwrap();
    let (drain, recovery) = (r.metric("drain_s"), r.metric("recovery_s"));
    assert_eq!(r.metric("recovered"), 1.0);
    // The backlog's standard deviation: sqrt(3000) calls over 50/s.
    within(drain, 30.0, 3000f64.sqrt() / 50.0 + 1.0, "drain time");
    assert!(
        (recovery - drain).abs() <= 2.0,
        "{recovery} against {drain}"
    );
}
