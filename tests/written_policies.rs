//! Policies written in the scenario (`kind = "expr"`, `kind = "windows"`):
//! each built-in re-expressed draws what the built-in draws, the shorthand
//! tables draw from their windows, and every bad input is a clear error.

use crate::common::{bin, temp_dir};
use csmacd::backoff::BackoffSpec;
use csmacd::engine::Time;
use csmacd::ethernet::{MacEvent, Observer};
use csmacd::results::{Cell, RunOutput};
use csmacd::scenario;
use csmacd::scenario::policies::POLICIES;

/// A busy bus where frames collide up to many times.
fn bus(backoff: &str) -> String {
    format!(
        r#"name = "written"
seed = 11
duration = "300ms"
[[stations]]
name = "g"
count = 12
traffic = {{ kind = "poisson", load = 0.9 }}
frame = "512B"
backoff = {backoff}
"#
    )
}

fn run(text: &str, seed: u64) -> RunOutput {
    scenario::from_str("t.toml", "t", text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .run(seed)
        .unwrap_or_else(|stalled| panic!("{stalled}"))
}

/// Values as bits, so that NaN equals NaN.
fn metrics_bits(r: &RunOutput) -> Vec<u64> {
    r.metrics.iter().map(|v| v.to_bits()).collect()
}

fn stations_table(r: &RunOutput) -> Vec<String> {
    r.table("stations")
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| match c {
                    Cell::Text(s) => s.to_string(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Built-ins whose draws the written form makes differently: a continuous
/// factor drawn as a fraction of the unit's picosecond grid. Compared in
/// distribution instead.
const SAME_IN_DISTRIBUTION: &[&str] = &["proportional-jitter"];

#[test]
fn every_built_in_written_as_an_expression_draws_the_same() {
    for d in POLICIES {
        let built = bus(&format!("{{ kind = \"{}\" }}", d.kind));
        let written = bus(&d.written.toml());
        if SAME_IN_DISTRIBUTION.contains(&d.kind) {
            same_in_distribution(d.kind, &built, &written);
            continue;
        }
        for seed in [1, 2] {
            let (a, b) = (run(&built, seed), run(&written, seed));
            assert!(a.failure.is_none() && b.failure.is_none());
            assert_eq!(
                metrics_bits(&a),
                metrics_bits(&b),
                "{}: metrics differ from its written form {}",
                d.kind,
                d.written.toml()
            );
            assert_eq!(
                stations_table(&a),
                stations_table(&b),
                "{}: stations differ",
                d.kind
            );
            assert!(
                a.metric("collisions") > 0.0,
                "{}: the test needs collisions",
                d.kind
            );
        }
    }
}

/// The means of the main metrics over 20 replications each agree within
/// 4 standard errors of their difference (a false alarm about once in
/// 16 000 per metric).
fn same_in_distribution(kind: &str, a: &str, b: &str) {
    const R: u64 = 20;
    for metric in ["throughput", "delay_mean_us", "collisions_per_delivered"] {
        let sample = |text: &str| -> (f64, f64) {
            let v: Vec<f64> = (0..R).map(|s| run(text, 100 + s).metric(metric)).collect();
            let m = v.iter().sum::<f64>() / R as f64;
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (R - 1) as f64;
            (m, var / R as f64)
        };
        let ((ma, va), (mb, vb)) = (sample(a), sample(b));
        assert!(ma.is_finite(), "{kind}: no {metric}");
        let se = (va + vb).sqrt();
        assert!(
            (ma - mb).abs() <= 4.0 * se,
            "{kind}: {metric} {ma} against written {mb}, difference beyond 4 standard errors ({se})"
        );
    }
}

/// 802.3 BEB and full jitter through the CLI: every file byte-identical
/// but the group's policy label.
#[test]
fn beb_and_full_jitter_written_give_the_same_bytes() {
    let dir = temp_dir("written-bytes");
    let service = |backoff: &str| {
        format!(
            r#"name = "written"
seed = 5
duration = "60s"
replications = 2
[server]
kind = "queue"
rate = "1000/s"
crash_above = 2000
restart = "5s"
[network]
delay = {{ kind = "abs-normal", mean = "10ms", sd = "2ms" }}
[[clients]]
name = "app"
count = 3000
calls = {{ kind = "reconnect", at = "0s" }}
backoff = {backoff}
"#
        )
    };
    let cases = [
        (
            bus("{ kind = \"beb\" }"),
            bus("{ kind = \"expr\", wait = \"randint(0, pow(2, min(n, 10)) - 1)\", unit = \"slots\" }"),
        ),
        (
            service("{ kind = \"full-jitter\", base = \"100ms\", cap = \"10s\" }"),
            service("{ kind = \"expr\", wait = \"uniform(0, min(10, 0.1 * pow(2, n - 1)))\", unit = \"s\" }"),
        ),
    ];
    for (k, (a, b)) in cases.iter().enumerate() {
        let mut outs = Vec::new();
        for (j, text) in [a, b].iter().enumerate() {
            let file = dir.join(format!("{k}-{j}.toml"));
            std::fs::write(&file, text).unwrap();
            let out = dir.join(format!("out-{k}-{j}"));
            let st = bin()
                .args([
                    "run",
                    file.to_str().unwrap(),
                    "-j",
                    "1",
                    "--out",
                    out.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            assert!(
                st.status.success(),
                "{}",
                String::from_utf8_lossy(&st.stderr)
            );
            outs.push(out);
        }
        for f in [
            "summary.csv",
            "runs.csv",
            "stations.csv",
            "timeseries.csv",
            "groups.csv",
        ] {
            let (pa, pb) = (outs[0].join(f), outs[1].join(f));
            if !pa.exists() {
                continue;
            }
            let (ta, tb) = (
                std::fs::read_to_string(pa).unwrap(),
                std::fs::read_to_string(pb).unwrap(),
            );
            // groups.csv names the policy as written: the only column
            // allowed to differ.
            let strip = |t: &str| {
                let mut r = csv::Reader::from_reader(t.as_bytes());
                let h = r.headers().unwrap().clone();
                let policy = h.iter().position(|c| c == "policy");
                let rows: Vec<String> = r
                    .records()
                    .map(|rec| {
                        let rec = rec.unwrap();
                        rec.iter()
                            .enumerate()
                            .map(|(i, c)| if Some(i) == policy { "P" } else { c })
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .collect();
                format!(
                    "{}\n{}",
                    h.iter().collect::<Vec<_>>().join(","),
                    rows.join("\n")
                )
                .replace("full-jitter", "P")
                .replace("expr", "P")
                .replace("beb", "P")
            };
            assert_eq!(strip(&ta), strip(&tb), "case {k}: {f} differs");
        }
    }
}

#[test]
fn windows_draw_from_their_table() {
    let text = bus("{ kind = \"windows\", windows = [2, 3, 5, 8, 13], repeat = true }");
    let sc = scenario::bus_from_str("t.toml", "t", &text).unwrap();
    struct Draws(Vec<(u32, u64)>);
    impl Observer for Draws {
        fn on(&mut self, _: Time, _: u32, ev: &MacEvent) {
            if let MacEvent::Backoff { n, r: Some(r), .. } = *ev {
                self.0.push((n, r));
            }
        }
    }
    let mut obs = Draws(Vec::new());
    csmacd::ethernet::run_observed(&sc, 3, &mut obs);
    let table = [2u64, 3, 5, 8, 13];
    let mut seen = [0u64; 5];
    let mut draws = 0;
    for &(n, r) in &obs.0 {
        let w = table[(n as usize - 1) % 5];
        assert!(r < w, "n = {n}: r = {r} outside 0..{}", w - 1);
        seen[(n as usize - 1) % 5] = seen[(n as usize - 1) % 5].max(r);
        draws += 1;
    }
    assert!(draws > 100, "{draws} backoffs");
    // The tops of the first windows are reached.
    assert_eq!(&seen[..2], &[1, 2], "{seen:?}");
}

#[test]
fn written_state_reproduces_mild() {
    let d = POLICIES.iter().find(|d| d.kind == "mild").unwrap();
    let sc = scenario::bus_from_str("t.toml", "t", &bus(&d.written.toml())).unwrap();
    assert!(matches!(sc.groups[0].backoff, BackoffSpec::Expr(ref p) if p.keeps_state()));
}

fn validate(text: &str) -> (i32, String) {
    let dir = temp_dir("written-bad");
    let file = dir.join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let out = bin()
        .args(["validate", file.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_written_policies_are_clear_errors() {
    let cases: &[(&str, &[&str])] = &[
        // A syntax error points at its column.
        (
            "{ kind = \"expr\", wait = \"randint(0, pow(2, n) - 1\" }",
            &["backoff.wait", "column 25", "expected `)`", "^"],
        ),
        // An unknown name suggests the nearest.
        (
            "{ kind = \"expr\", wait = \"randint(0, pow(2, min(nn, 10)) - 1)\" }",
            &["column 23", "unknown name `nn`; did you mean `n`?"],
        ),
        (
            "{ kind = \"expr\", wait = \"rand_int(0, 3)\" }",
            &["did you mean `randint`?"],
        ),
        // The service world's names are not the bus's.
        (
            "{ kind = \"expr\", wait = \"retry_after\" }",
            &["unknown name `retry_after`"],
        ),
        // Negative, NaN and infinite waits, with n.
        ("{ kind = \"expr\", wait = \"n - 3\" }", &["at n = 1", "-2 slots", "negative"]),
        ("{ kind = \"expr\", wait = \"ln(n - 1)\" }", &["at n = 1", "-inf"]),
        ("{ kind = \"expr\", wait = \"sqrt(2 - n)\" }", &["at n = 3", "NaN", "not a number"]),
        ("{ kind = \"expr\", wait = \"pow(10, 30)\" }", &["longer than any run"]),
        (
            "{ kind = \"expr\", wait = \"randint(0, 2.5)\" }",
            &["whole numbers", "floor()"],
        ),
        // Too long for the operation cap.
        (
            &*Box::leak(
                format!("{{ kind = \"expr\", wait = \"{}\" }}", vec!["n"; 2100].join(" + ")).into_boxed_str(),
            ),
            &["4096 operations"],
        ),
        // State.
        (
            "{ kind = \"expr\", wait = \"w\", on_failure = \"w = w * 2\" }",
            &["backoff.wait", "unknown name `w`"],
        ),
        (
            "{ kind = \"expr\", wait = \"n\", init = \"n = 2\" }",
            &["backoff.init", "cannot be assigned"],
        ),
        (
            "{ kind = \"expr\", wait = \"w\", init = \"w = 1\", on_success = \"w = uniform(0, 1)\" }",
            &["backoff.on_success", "draws at random"],
        ),
        ("{ kind = \"expr\" }", &["backoff.wait", "missing"]),
        ("{ kind = \"expr\", wait = \"1\", unit = \"sec\" }", &["backoff.unit", "allowed: slots, s, ms, us"]),
        ("{ kind = \"expr\", wait = \"1\", wiat = \"2\" }", &["wiat"]),
        ("\"expr\"", &["needs its keys"]),
        ("{ kind = \"windows\", windows = [] }", &["is empty"]),
        ("{ kind = \"windows\", windows = [2, 0] }", &["windows.1", "not a window"]),
    ];
    for (backoff, wants) in cases {
        let (code, err) = validate(&bus(backoff));
        assert_eq!(code, 2, "{backoff}: {err}");
        for w in *wants {
            assert!(err.contains(w), "{backoff}: wanted {w:?} in\n{err}");
        }
    }
}

#[test]
fn a_wait_gone_wrong_during_the_run_stops_it_and_says_where() {
    let dir = temp_dir("written-fault");
    let file = dir.join("f.toml");
    // Valid when sampled (nothing observed then), negative once three
    // collisions are on the channel.
    std::fs::write(
        &file,
        bus("{ kind = \"expr\", wait = \"observed > 3 ? -1 : randint(0, 3)\" }"),
    )
    .unwrap();
    let out_dir = dir.join("out");
    let out = bin()
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for w in [
        "stations.0 (`g`)",
        "station ",
        "n = ",
        "the wait is -1 slots, negative",
    ] {
        assert!(err.contains(w), "wanted {w:?} in {err}");
    }
    assert!(!out_dir.join("summary.csv").exists());
}

#[test]
fn validate_prints_the_range_of_waits() {
    let dir = temp_dir("written-range");
    let file = dir.join("ok.toml");
    std::fs::write(&file, bus("{ kind = \"windows\", windows = [2, 3, 5] }")).unwrap();
    let out = bin()
        .args(["validate", file.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("waits in slots after failure n"), "{text}");
    assert!(
        text.contains("n=1: 0-1, n=2: 0-2, n=3: 0-4, n=4: 0-4"),
        "{text}"
    );
}

#[test]
fn service_policies_read_retry_after_and_keep_state_per_client() {
    // Seed 004's formula, literally: min(2^n * base + jitter, 64 s).
    let text = r#"name = "seed 004"
seed = 1
duration = "30s"
[server]
kind = "flaky"
failure = 0.5
[network]
delay = "1ms"
[[clients]]
count = 50
calls = { kind = "poisson", rate = "2/s", until = "25s" }
max_retries = 8
backoff = { kind = "expr", wait = "min(pow(2, n) * 0.1 + uniform(0, 0.1), 64)", unit = "s" }
"#;
    let r = run(text, 1);
    assert!(r.failure.is_none());
    assert!(
        r.metric("success_rate") > 0.99,
        "{}",
        r.metric("success_rate")
    );
}

#[test]
fn docs_list_every_built_in_as_written() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policies.md")).unwrap();
    for d in POLICIES {
        let row = format!(
            "| {} | `{}` |",
            d.kind,
            d.written.toml().replace('|', "\\|")
        );
        assert!(doc.contains(&row), "docs/policies.md lacks {row}");
    }
}

/// A theory line's points in charts/<name>.csv are its formula at their x,
/// across the data's x range, marked as theory and drawn without markers.
#[test]
fn theory_lines_are_written_with_the_chart() {
    let dir = temp_dir("theory");
    let file = dir.join("aloha.toml");
    std::fs::write(
        &file,
        r#"name = "aloha theory"
seed = 3
duration = "300ms"
[medium]
access = "aloha"
length = "0m"
preamble = "0bit"
ifg = "0bit"
[[stations]]
count = 100
traffic = { kind = "poisson", load = 0.1 }
frame = "64B"
queue = 1
backoff = { kind = "geometric", p = 0.01 }
[sweep]
"stations.0.traffic.load" = [0.05, 0.1, 0.2]
[[chart]]
name = "aloha"
x = "attempt_load"
y = "throughput"
theory = [{ label = "pure ALOHA", y = "x * exp(-2 * x)" }, { label = "half", y = "x / 2" }]
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let st = bin()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-j",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let csv = std::fs::read_to_string(out.join("charts/aloha.csv")).unwrap();
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let h = r.headers().unwrap().clone();
    assert_eq!(
        h.iter().collect::<Vec<_>>(),
        ["series", "panel", "x", "y", "ci_low", "ci_high", "kind", "color", "marker", "dash"]
    );
    let (mut theory, mut sim, mut xs) = (0, 0, Vec::new());
    for rec in r.records() {
        let rec = rec.unwrap();
        let x: f64 = rec[2].parse().unwrap();
        let y: f64 = rec[3].parse().unwrap();
        match &rec[6] {
            "theory" => {
                let want = if &rec[0] == "pure ALOHA" {
                    x * (-2.0 * x).exp()
                } else {
                    x / 2.0
                };
                assert!(
                    (y - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "{x}: {y} against {want}"
                );
                assert_eq!(&rec[8], "none");
                theory += 1;
            }
            "simulation" => {
                sim += 1;
                xs.push(x);
            }
            k => panic!("kind {k}"),
        }
    }
    assert_eq!(theory, 400);
    assert_eq!(sim, 3);
    let svg = std::fs::read_to_string(out.join("charts/aloha.svg")).unwrap();
    assert!(
        svg.contains("pure ALOHA"),
        "the legend names the theory line"
    );
    assert!(svg.contains("theory, computed, not simulated"));
}

#[test]
fn bad_theory_lines_are_clear_errors() {
    let dir = temp_dir("theory-bad");
    let file = dir.join("t.toml");
    let text = |theory: &str| {
        format!(
            "{}\n[sweep]\n\"stations.0.traffic.load\" = [0.1, 0.2]\n[[chart]]\nx = \"stations.0.traffic.load\"\ny = \"throughput\"\ntheory = {theory}\n",
            bus("\"beb\"")
        )
    };
    for (theory, want) in [
        (
            "[{ label = \"t\", y = \"x * exp(-2 * xx)\" }]",
            "did you mean `x`?",
        ),
        (
            "[{ label = \"t\", y = \"uniform(0, x)\" }]",
            "draws at random",
        ),
        ("[{ y = \"x\" }]", "label"),
        (
            "[{ label = \"t\", y = \"x\" }, { label = \"t\", y = \"x\" }]",
            "names another theory line",
        ),
    ] {
        std::fs::write(&file, text(theory)).unwrap();
        let o = bin()
            .args(["validate", file.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{theory}: {err}");
        assert!(err.contains(want), "{theory}: wanted {want:?} in {err}");
    }
    let o = bin()
        .args([
            "plot", "x.csv", "--x", "a", "--y", "b", "--out", "x.png", "--theory", "t=x+",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("column 3"));
}

/// A client's state outlives its calls: a policy that counts the client's
/// failures across its calls and waits 1000 s from the sixth on makes every
/// later call stop at its first failure (one attempt a call, and six more);
/// kept per call, the count would start again with each call, which then
/// retries until it succeeds (two attempts a call on average).
#[test]
fn a_clients_state_is_kept_across_its_calls() {
    let text = |fail: &str| {
        format!(
            r#"name = "state"
seed = 2
duration = "200s"
[server]
kind = "flaky"
failure = 0.5
[network]
delay = "1ms"
[[clients]]
count = 1
calls = {{ kind = "poisson", rate = "1/s", until = "200s" }}
backoff = {{ kind = "expr", wait = "k > 5 ? 1000 : 0.01", init = "k = 0", on_failure = "{fail}", unit = "s" }}
"#
        )
    };
    let kept = run(&text("k = k + 1"), 1);
    assert!(kept.failure.is_none());
    let (calls, attempts) = (kept.metric("calls"), kept.metric("attempts"));
    assert!(calls > 150.0, "{calls} calls");
    assert!(
        attempts <= calls + 6.0,
        "{attempts} attempts for {calls} calls"
    );
    let per_call = run(&text("k = n"), 1);
    let ratio = per_call.metric("attempts") / per_call.metric("calls");
    // Geometric with p = 1/2: mean 2, sd of the mean over ~200 calls 0.1.
    assert!((ratio - 2.0).abs() < 0.4, "{ratio} attempts a call");
}

fn service_with(extra: &str, backoff: &str) -> String {
    format!(
        r#"name = "svc"
seed = 1
duration = "20s"
[server]
kind = "flaky"
failure = 0.5
[network]
delay = "1ms"
[[clients]]
count = 20
calls = {{ kind = "reconnect", at = "0s" }}
{extra}
backoff = {backoff}
"#
    )
}

#[test]
fn client_policies_are_sampled_as_far_as_their_retries_go() {
    // Past n = 9 this wait is past any run, but 8 retries never get there.
    let wait = "{ kind = \"expr\", wait = \"pow(2, n) * 0.1\", unit = \"s\" }";
    let (code, err) = validate(&service_with("max_retries = 8", wait));
    assert_eq!(code, 0, "{err}");
    let (code, err) = validate(&service_with("", wait));
    assert_eq!(code, 2);
    assert!(
        err.contains("clients.0.backoff.wait") && err.contains("without limit"),
        "{err}"
    );
}

#[test]
fn a_reconnect_runs_on_failure_before_its_first_wait() {
    // The drop is the call's first failure: on_failure has run when the
    // first wait is drawn, in the run as when the file was read.
    let text = service_with(
        "max_retries = 3",
        "{ kind = \"expr\", wait = \"f == 0 ? 1e7 : 0.01\", init = \"f = 0\", on_failure = \"f = f + 1\", unit = \"s\" }",
    );
    assert_eq!(validate(&text).0, 0);
    let r = run(&text, 1);
    assert!(r.failure.is_none(), "{:?}", r.failure);
}

#[test]
fn statement_lists_and_not_a_number_are_bounded() {
    let many = vec!["w = w + 1"; 65].join("; ");
    let (code, err) = validate(&bus(&format!(
        "{{ kind = \"expr\", wait = \"w\", init = \"w = 0\", on_success = \"{many}\" }}"
    )));
    assert_eq!(code, 2);
    assert!(err.contains("more than 64 statements"), "{err}");
    // min() does not hide a NaN.
    let (code, err) = validate(&bus("{ kind = \"expr\", wait = \"min(sqrt(-n), 5)\" }"));
    assert_eq!(code, 2);
    assert!(err.contains("NaN"), "{err}");
    let (code, err) = validate(&bus("{ kind = \"expr\", wait = \"(0/0) ? 1 : 2\" }"));
    assert_eq!(code, 2);
    assert!(err.contains("condition is not a number"), "{err}");
}

#[test]
fn axes_that_set_one_path_are_refused() {
    let base = bus("\"beb\"");
    for (sweep, want) in [
        (
            "[sweep]\n\"stations.0.traffic.load\" = [0.3, 0.4]\n[sweep.linked.gl]\n\"stations.0.traffic.load\" = [0.1, 0.2]\n",
            "sweep.linked.gl",
        ),
        (
            "[sweep.linked.a]\n\"stations.0.traffic\" = [{ kind = \"poisson\", load = 0.1 }]\n[sweep.linked.b]\n\"stations.0.traffic.load\" = [0.2]\n",
            "also sets",
        ),
        ("[sweep.linked.replication]\n\"stations.0.count\" = [2, 3]\n", "column the result files"),
    ] {
        let (code, err) = validate(&format!("{base}{sweep}"));
        assert_eq!(code, 2, "{sweep}: {err}");
        assert!(err.contains(want), "{sweep}: wanted {want:?} in {err}");
    }
}
