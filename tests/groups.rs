//! Station groups: names, placement along the bus, and per-group results,
//! including the symmetry that fair placement promises.

use crate::common::{run, scenario};
use csmacd::ethernet::{self, GroupResult};
use csmacd::scenario as parse;
use statrs::distribution::{ContinuousCDF, StudentsT};

fn two_groups(placement: Option<&str>, first: &str, second: &str) -> String {
    let medium = placement
        .map(|p| format!("[medium]\nlength = \"300m\"\nplacement = \"{p}\"\n"))
        .unwrap_or_else(|| "[medium]\nlength = \"300m\"\n".into());
    format!(
        "duration = \"10ms\"\n{medium}\
         [[stations]]\ncount = 2\ntraffic = {{ kind = \"saturated\" }}\nframe = \"64B\"\nbackoff = {first}\n\
         [[stations]]\ncount = 2\ntraffic = {{ kind = \"saturated\" }}\nframe = \"64B\"\nbackoff = {second}\n"
    )
}

#[test]
fn groups_are_named_from_their_policy_unless_named() {
    let sc = scenario(&two_groups(
        None,
        "{ kind = \"beb\" }",
        "{ kind = \"mild\" }",
    ));
    let names: Vec<&str> = sc.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["beb", "mild"]);
    let sc = scenario(&two_groups(
        None,
        "{ kind = \"beb\" }",
        "{ kind = \"beb\" }",
    ));
    let names: Vec<&str> = sc.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["beb-1", "beb-2"]);
    let text = two_groups(None, "{ kind = \"beb\" }", "{ kind = \"beb\" }").replacen(
        "[[stations]]\n",
        "[[stations]]\nname = \"left\"\n",
        1,
    );
    let sc = scenario(&text);
    let names: Vec<&str> = sc.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["left", "beb"]);
}

#[test]
fn a_name_given_twice_is_refused_with_its_place() {
    let text = two_groups(None, "{ kind = \"beb\" }", "{ kind = \"mild\" }")
        .replace("[[stations]]\n", "[[stations]]\nname = \"same\"\n");
    let e = parse::from_str("t.toml", "t", &text)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.toml:"), "{e}");
    assert!(
        e.contains("stations.1.name") && e.contains("already the name of group 0"),
        "{e}"
    );
    let text = two_groups(None, "{ kind = \"beb\" }", "{ kind = \"mild\" }").replacen(
        "[[stations]]\n",
        "[[stations]]\nname = \"\"\n",
        1,
    );
    let e = parse::from_str("t.toml", "t", &text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 to 64 printable characters"), "{e}");
}

#[test]
fn several_groups_alternate_along_the_bus_unless_grouped() {
    let beb = "{ kind = \"beb\" }";
    let sc = scenario(&two_groups(None, beb, beb));
    assert_eq!(ethernet::positions(&sc, 1), [0.0, 200.0, 100.0, 300.0]);
    let sc = scenario(&two_groups(Some("interleaved"), beb, beb));
    assert_eq!(ethernet::positions(&sc, 1), [0.0, 200.0, 100.0, 300.0]);
    let sc = scenario(&two_groups(Some("grouped"), beb, beb));
    assert_eq!(ethernet::positions(&sc, 1), [0.0, 100.0, 200.0, 300.0]);
    // Unequal groups are spread in proportion: one station of three sits in
    // the middle third of the other group's.
    let text = two_groups(None, beb, beb).replacen("count = 2", "count = 1", 1);
    let sc = scenario(&text);
    assert_eq!(ethernet::positions(&sc, 1), [150.0, 0.0, 300.0]);
}

/// Swapping the order of two groups (a policy's place in the file) must not
/// change what each policy gets: with interleaved placement, each group's
/// throughput share in one order lies within the 99 % confidence interval
/// of the difference from the other order (Welch's t over the replications).
#[test]
fn swapping_two_groups_leaves_their_results_within_the_interval() {
    let beb = "{ kind = \"beb\" }";
    let aggressive = "{ kind = \"fixed\", window = 4 }";
    const R: u64 = 30;
    let shares = |text: &str, policy: &str| -> Vec<f64> {
        let sc = scenario(text);
        (0..R)
            .map(|r| {
                let res = run(&sc, csmacd::seed::replication_seed(sc.seed, r as u32));
                let g: &GroupResult = res.groups.iter().find(|g| g.policy == policy).unwrap();
                g.share
            })
            .collect()
    };
    let text = |a: &str, b: &str| {
        two_groups(None, a, b)
            .replace("count = 2", "count = 4")
            .replace("\"10ms\"", "\"50ms\"")
    };
    let ab = text(beb, aggressive);
    let ba = text(aggressive, beb);
    for policy in ["beb", "fixed"] {
        let x = shares(&ab, policy);
        let y = shares(&ba, policy);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let var = |v: &[f64]| {
            let m = mean(v);
            v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (v.len() - 1) as f64
        };
        let (vx, vy) = (var(&x) / R as f64, var(&y) / R as f64);
        let se = (vx + vy).sqrt();
        let df = (vx + vy).powi(2) / (vx * vx / (R - 1) as f64 + vy * vy / (R - 1) as f64);
        let t = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.995);
        let diff = (mean(&x) - mean(&y)).abs();
        assert!(
            diff <= t * se,
            "{policy}: share {} in one order, {} in the other; difference {diff} beyond {}",
            mean(&x),
            mean(&y),
            t * se
        );
    }
    // And the comparison is a real one: the aggressive policy takes the bus.
    let x = shares(&ab, "fixed");
    assert!(x.iter().sum::<f64>() / R as f64 > 0.6);
}

#[test]
fn group_results_add_up_to_the_bus() {
    let sc = scenario(&two_groups(
        None,
        "{ kind = \"beb\" }",
        "{ kind = \"mild\" }",
    ));
    let r = run(&sc, 3);
    let sum = |f: fn(&GroupResult) -> f64| r.groups.iter().map(f).sum::<f64>();
    let m = |c: &str| r.metrics.get(c);
    assert_eq!(sum(|g| g.delivered as f64), m("delivered"));
    assert_eq!(sum(|g| g.attempts as f64), m("attempts"));
    assert_eq!(
        sum(|g| g.collision_involvements as f64),
        m("collision_involvements")
    );
    // Each collision on the bus involves stations of one group or both.
    assert!(sum(|g| g.collisions as f64) >= m("collisions"));
    assert!((sum(|g| g.throughput) - m("throughput")).abs() < 1e-12);
    assert!((sum(|g| g.share) - 1.0).abs() < 1e-12);
    for g in &r.groups {
        assert!(g.fairness > 0.0 && g.fairness <= 1.0, "{g:?}");
        assert!(g.delay_p50_us <= g.delay_p95_us && g.delay_p95_us <= g.delay_p99_us);
        // Two stations of a group collide with someone every time they
        // collide, so the episodes they took part in are at most their
        // involvements.
        assert!(g.collisions <= g.collision_involvements);
    }
}

#[test]
fn fairness_is_undefined_when_nothing_was_delivered() {
    // Frames longer than the run: nothing is delivered in the window.
    let text = "duration = \"10us\"\n[[stations]]\ncount = 2\n\
                traffic = { kind = \"saturated\" }\nframe = \"1518B\"\n";
    let r = run(&scenario(text), 1);
    assert_eq!(r.metrics.get("delivered"), 0.0);
    assert!(r.metrics.get("fairness").is_nan());
    assert!(r.groups[0].fairness.is_nan());
}

/// `csmacd run` on several groups writes groups.csv and prints one row per
/// group, and lists the files it wrote.
#[test]
fn run_prints_a_row_per_group_and_writes_groups_csv() {
    use crate::common::{bin, temp_dir};
    let dir = temp_dir("groups-run");
    let file = dir.join("two.toml");
    std::fs::write(
        &file,
        two_groups(
            None,
            "{ kind = \"beb\" }",
            "{ kind = \"fixed\", window = 4 }",
        )
        .replace(
            "duration = \"10ms\"",
            "duration = \"20ms\"\nreplications = 2",
        ),
    )
    .unwrap();
    let out = bin()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("± 95 % CI half-width over 2 replications"),
        "{stdout}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("per group"))
        .skip(2)
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows[0].trim_start().starts_with("beb ") && rows[1].trim_start().starts_with("fixed "));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(",groups}.csv"), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("out/groups.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("replication,group,policy,stations,"));
    assert_eq!(lines.count(), 4, "two groups x two replications");
}
