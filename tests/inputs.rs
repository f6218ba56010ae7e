//! What users write: numbers without units get the quantity as it should be
//! written, percentages stand for fractions, a bare policy name for its
//! table, misspelt words a suggestion.

use crate::common::scenario;
use csmacd::scenario::{self as parser, policies::POLICIES};
use csmacd::sweep;

const BASE: &str = "duration = \"10ms\"\n\n[[stations]]\ncount = 2\nframe = \"1518B\"\ntraffic = { kind = \"poisson\", load = 0.5 }\n";

fn error(text: &str) -> String {
    match parser::bus_from_str("t.toml", "t", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn numbers_without_units_get_the_quantity_to_write() {
    // (from, to, key, suggestion)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "duration = \"10ms\"",
            "duration = 10",
            "`duration`",
            "e.g. \"10s\"",
        ),
        (
            "duration = \"10ms\"",
            "duration = \"10\"",
            "`duration`",
            "write e.g. \"10s\"",
        ),
        (
            "duration = \"10ms\"",
            "duration = \"10ms\"\nwarmup = 0.5",
            "`warmup`",
            "e.g. \"0.5s\"",
        ),
        (
            "[[stations]]",
            "[medium]\nslot = 512\n[[stations]]",
            "`medium.slot`",
            "e.g. \"512bit\"",
        ),
        (
            "[[stations]]",
            "[medium]\njam = \"32\"\n[[stations]]",
            "`medium.jam`",
            "write e.g. \"32bit\"",
        ),
        (
            "[[stations]]",
            "[medium]\nbit_rate = 10000000\n[[stations]]",
            "`medium.bit_rate`",
            "e.g. \"10Mbps\"",
        ),
        (
            "[[stations]]",
            "[medium]\nbit_rate = 100\n[[stations]]",
            "`medium.bit_rate`",
            "e.g. \"100bps\"",
        ),
        (
            "[[stations]]",
            "[medium]\nlength = 2500\n[[stations]]",
            "`medium.length`",
            "e.g. \"2500m\"",
        ),
        (
            "[[stations]]",
            "[medium]\nspeed = 2e8\n[[stations]]",
            "`medium.speed`",
            "e.g. \"200000000m/s\"",
        ),
        (
            "frame = \"1518B\"",
            "frame = 1518",
            "`stations.0.frame`",
            "e.g. \"1518B\"",
        ),
        (
            "frame = \"1518B\"",
            "frame = { kind = \"mix\", sizes = [64, \"1518B\"] }",
            "`stations.0.frame.sizes.0`",
            "e.g. \"64B\"",
        ),
        (
            "count = 2",
            "count = 2\npositions = [0, \"10m\"]",
            "`stations.0.positions.0`",
            "e.g. \"0m\"",
        ),
        (
            "count = 2",
            "count = 2\nbackoff = { kind = \"full-jitter\", base = 1 }",
            "`stations.0.backoff.base`",
            "e.g. \"1slot\"",
        ),
        (
            "\"poisson\", load = 0.5",
            "\"periodic\", interval = 10",
            "`stations.0.traffic.interval`",
            "e.g. \"10s\"",
        ),
    ];
    for (from, to, key, hint) in cases {
        let text = BASE.replace(from, to);
        assert_ne!(text, BASE, "{to}");
        let e = error(&text);
        assert!(e.starts_with("t.toml:"), "{e}");
        assert!(e.contains(key), "{to}: no {key} in {e}");
        assert!(e.contains("has no unit"), "{to}: {e}");
        assert!(e.contains(hint), "{to}: no {hint} in {e}");
    }
    // Not finite: no suggestion, the type is wrong.
    let e = error(&BASE.replace("duration = \"10ms\"", "duration = nan"));
    assert!(e.contains("expected a string, found a float"), "{e}");
}

#[test]
fn percentages_stand_for_fractions() {
    let with = |from: &str, to: &str| scenario(&BASE.replace(from, to));
    assert_eq!(with("load = 0.5", "load = \"50%\""), scenario(BASE));
    assert_eq!(
        with("load = 0.5", "load = \" 80 %\""),
        with("load = 0.5", "load = 0.8")
    );
    // Above 1: more load than the bit rate, as with numbers.
    assert_eq!(
        with("load = 0.5", "load = \"150%\""),
        with("load = 0.5", "load = 1.5")
    );
    let p = "[medium]\naccess = \"csma-cd-p-persistent\"\np = P\n[[stations]]";
    assert_eq!(
        with("[[stations]]", &p.replace("P", "\"10%\"")),
        with("[[stations]]", &p.replace("P", "0.1"))
    );
    for (policy, key) in [("geometric", "p"), ("proportional-jitter", "f")] {
        let b = |v: &str| {
            with(
                "count = 2",
                &format!("count = 2\nbackoff = {{ kind = \"{policy}\", {key} = {v} }}"),
            )
        };
        assert_eq!(b("\"25%\""), b("0.25"), "{policy}");
    }
    // What is not a fraction says what to write.
    for (v, words) in [
        ("\"0.8\"", "is text; write a number without quotes"),
        ("\"80 percent\"", "is not a number; write a fraction"),
        ("\"x%\"", "is not a percentage"),
        ("\"-5%\"", "`-5%` is out of range; allowed: 0 to"),
        ("true", "expected a number or a percentage such as \"80%\""),
    ] {
        let e = error(&BASE.replace("load = 0.5", &format!("load = {v}")));
        assert!(
            e.contains("`stations.0.traffic.load`") && e.contains(words),
            "{v}: {e}"
        );
    }
    let e = error(&BASE.replace("load = 0.5", "load = \"0%\""));
    assert!(e.contains("must be greater than zero"), "{e}");
}

#[test]
fn a_bare_policy_name_is_its_table_with_the_defaults() {
    for d in POLICIES {
        let bare = BASE.replace("count = 2", &format!("count = 2\nbackoff = \"{}\"", d.kind));
        let table = BASE.replace(
            "count = 2",
            &format!("count = 2\nbackoff = {{ kind = \"{}\" }}", d.kind),
        );
        assert_eq!(scenario(&bare), scenario(&table), "{}", d.kind);
    }
    let e = error(&BASE.replace("count = 2", "count = 2\nbackoff = \"full_jitter\""));
    assert!(e.starts_with("t.toml:5: `stations.0.backoff`"), "{e}");
    assert!(
        e.contains("`full_jitter` is not a backoff policy (did you mean `full-jitter`?)"),
        "{e}"
    );
    assert!(e.contains("allowed: beb, exponential, fixed"), "{e}");
    let e = error(&BASE.replace("count = 2", "count = 2\nbackoff = 3"));
    assert!(e.contains("expected a table"), "{e}");
}

#[test]
fn a_sweep_can_vary_a_bare_policy_name() {
    let text = BASE.replace("count = 2", "count = 2\nbackoff = \"beb\"")
        + "\n[sweep]\n\"stations.0.backoff\" = [\"beb\", \"full-jitter\"]\n";
    let plan = sweep::from_str("s.toml", "s", &text, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.points.len(), 2);
    assert_eq!(
        plan.points[1].scenario.ethernet().unwrap().groups[0].name,
        "full-jitter"
    );
    // Varying a key inside it says what to do instead.
    let inside = text.replace("\"stations.0.backoff\" =", "\"stations.0.backoff.kind\" =");
    let e = sweep::from_str("s.toml", "s", &inside, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("sweep `stations.0.backoff` itself"), "{e}");
}

#[test]
fn misspelt_words_get_a_suggestion() {
    let e = error(&BASE.replace(
        "[[stations]]",
        "[medium]\naccess = \"csmacd\"\n[[stations]]",
    ));
    assert!(e.contains("(did you mean `csma-cd`?)"), "{e}");
    let e = error(&BASE.replace("\"poisson\"", "\"poison\""));
    assert!(e.contains("(did you mean `poisson`?)"), "{e}");
}
