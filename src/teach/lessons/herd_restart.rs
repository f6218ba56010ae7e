//! Lesson 10, the herd after a restart: clients dropped together come back
//! together and crash the server again; what jitter, a retry budget and an
//! accept-rate gate at the server change.

use super::{check, set_all, table_with, Check, Lesson, LessonError, Outcome};
use crate::backoff::{BackoffState, ChannelHistory};
use crate::engine::Time;
use crate::scenario;
use crate::service::{self, Calls, Delay, RunResult, Scenario, ServerKind};
use crate::sweep::Point;
use crate::world;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use toml::{Table, Value};

/// The retry budget of the lesson's budget rows: 100 tokens, 0.1 per call.
const BUDGET: &str = "{ size = 100, deposit = 0.1, cost = 1, start = 100, scope = \"shared\" }";

/// What the lockstep arithmetic predicts for clients that all wait the same:
/// every client's attempt of one wave reaches the server at one instant.
#[derive(Debug, Default, PartialEq)]
struct Waves {
    /// Waves sent within the horizon (each of `count` attempts).
    sent: u64,
    crashes: u64,
}

/// Follows the waves of a herd without jitter: a wave that finds the server
/// up with more clients than `crash_above` crashes it, one that finds it
/// down is refused; either way every client hears of it one leg later and
/// waits the policy's next wait.
fn predict_waves(sc: &Scenario) -> Option<Waves> {
    let g = sc.groups.first()?;
    let Calls::Reconnect { at } = g.calls else {
        return None;
    };
    let ServerKind::Queue {
        crash_above: Some(crash_above),
        restart,
        ..
    } = sc.server().kind
    else {
        return None;
    };
    let d = sc.network.mean_ps().round() as Time;
    let mut state = BackoffState::new(&g.backoff);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut wait = |n: u32| {
        state
            .draw(
                &g.backoff,
                n,
                g.slot,
                &ChannelHistory::default(),
                0,
                &mut rng,
            )
            // A policy that gives no wait fails the run itself; the
            // prediction only needs not to stop.
            .map_or(0, |d| d.delay)
    };
    let mut w = Waves::default();
    let (mut n, mut down_until) = (1, 0);
    let mut send = at + wait(1);
    while send <= sc.duration {
        w.sent += 1;
        let arrive = send + d;
        if arrive >= down_until {
            if g.count <= crash_above {
                break;
            }
            if arrive <= sc.duration {
                w.crashes += 1;
            }
            down_until = arrive + restart;
        }
        n += 1;
        send = arrive + d + wait(n);
    }
    Some(w)
}

/// The lesson's scenario with `changes` on top of the overrides.
fn variant(
    lesson: &Lesson,
    overrides: &[(String, Value)],
    changes: &[(&str, Value)],
) -> Result<Scenario, LessonError> {
    let mut table = table_with(lesson, overrides)?;
    set_all(&mut table, changes.iter().map(|(p, v)| (*p, v)))?;
    match scenario::validate(&table, lesson.file, &[])
        .map_err(|e| super::invalid(lesson, overrides, e))?
    {
        world::Scenario::Service(sc) => Ok(sc),
        world::Scenario::Ethernet(_) => Err(LessonError::Override(
            "server".into(),
            "lesson 10 is a service scenario: keep its [server] table".into(),
        )),
    }
}

/// One run, with the seed `csmacd run` gives the first replication; the
/// variant's label and the report of a run whose clock cannot advance.
fn run_one(label: &str, sc: &Scenario) -> Result<RunResult, LessonError> {
    let seed = Point::new(Vec::new(), world::Scenario::Service(sc.clone())).replication_seeds()[0];
    service::run(sc, seed).map_err(|stalled| LessonError::Stalled(label.to_string(), stalled))
}

fn toml_value(text: &str) -> Value {
    format!("v = {text}")
        .parse::<Table>()
        .expect("the lesson's own TOML")
        .remove("v")
        .expect("the key just written")
}

fn secs(t: Option<Time>) -> String {
    t.map_or_else(|| "never".into(), |t| format!("{:.3} s", t as f64 / 1e12))
}

/// The lesson's rows: what each variant changes, and its numbers.
pub(super) fn run(lesson: &Lesson, overrides: &[(String, Value)]) -> Result<Outcome, LessonError> {
    let base = variant(lesson, overrides, &[])?;
    let g = &base.groups[0];
    let n = g.count;
    let backoff = |kind: &str| {
        let t = table_with(lesson, overrides)?;
        let mut b = t
            .get("clients")
            .and_then(|c| c.get(0))
            .and_then(|g| g.get("backoff"))
            .and_then(Value::as_table)
            .cloned()
            .unwrap_or_default();
        b.insert("kind".into(), Value::String(kind.into()));
        Ok::<_, LessonError>(Value::Table(b))
    };
    let rate = match base.server().kind {
        ServerKind::Queue { rate, .. } => rate,
        _ => 0.0,
    };
    // The gate lets clients in a little below the service rate, and holds
    // every early one in its queue.
    let gate_rate = (rate * 0.95).max(1e-3);
    let jitter = variant(
        lesson,
        overrides,
        &[("clients.0.backoff", backoff("full-jitter")?)],
    )?;
    let budget = variant(
        lesson,
        overrides,
        &[("clients.0.budget", toml_value(BUDGET))],
    )?;
    let both = variant(
        lesson,
        overrides,
        &[
            ("clients.0.backoff", backoff("full-jitter")?),
            ("clients.0.budget", toml_value(BUDGET)),
        ],
    )?;
    let gate = variant(
        lesson,
        overrides,
        &[
            (
                "server.accept_rate",
                Value::String(format!("{gate_rate}/s")),
            ),
            ("server.accept_burst", Value::Integer(n as i64)),
        ],
    )?;
    let runs: Vec<(&str, &Scenario, RunResult)> = [
        ("as written: no jitter", &base),
        ("full jitter", &jitter),
        ("no jitter, shared budget", &budget),
        ("full jitter, shared budget", &both),
        ("no jitter, accept-rate gate", &gate),
    ]
    .into_iter()
    .map(|(label, sc)| Ok((label, sc, run_one(label, sc)?)))
    .collect::<Result<_, LessonError>>()?;

    let mut table = vec![vec![
        "variant".to_string(),
        "crashes".into(),
        "attempts".into(),
        "connected at the end".into(),
        "all connected at".into(),
    ]];
    for (label, _, r) in &runs {
        let c = &r.groups[0].2;
        table.push(vec![
            label.to_string(),
            r.crashes.to_string(),
            c.attempts.to_string(),
            format!("{} of {n}", c.connected),
            secs(r.all_connected),
        ]);
    }
    let mut checks = lockstep_checks(&base, &runs[0].2);
    let (plain, jittered) = (&runs[0].2, &runs[1].2);
    checks.push(check(
        "full jitter: every client connected within the horizon, after fewer crashes",
        format!("all {n} connected, crashes < {}", plain.crashes),
        format!(
            "{} connected at {}, {} crashes",
            jittered.groups[0].2.connected,
            secs(jittered.all_connected),
            jittered.crashes
        ),
        jittered.all_connected.is_some() && jittered.crashes < plain.crashes,
    ));
    checks.extend(budget_checks(&budget, &runs[2].2));
    let after_both = &runs[3].2;
    checks.push(check(
        "full jitter and a budget: the crashes stop early, and clients whose retries it refused stay disconnected",
        format!("crashes <= 1, connected < {n}"),
        format!(
            "{} crashes, {} connected",
            after_both.crashes, after_both.groups[0].2.connected
        ),
        after_both.crashes <= 1 && after_both.groups[0].2.connected < n,
    ));
    checks.extend(gate_checks(&gate, &runs[4].2));
    Ok(Outcome::of_table(table, checks))
}

/// No jitter: the waves the arithmetic predicts, every one a crash or a refusal.
fn lockstep_checks(sc: &Scenario, r: &RunResult) -> Vec<Check> {
    let n = sc.groups[0].count;
    let c = &r.groups[0].2;
    let Some(w) = predict_waves(sc) else {
        return vec![check(
            "no jitter: the lockstep arithmetic applies",
            "a reconnect group and a queue server that crashes",
            "another scenario",
            false,
        )];
    };
    vec![
        check(
            "no jitter: crashes, as the waves' arithmetic predicts",
            w.crashes.to_string(),
            r.crashes.to_string(),
            r.crashes == w.crashes,
        ),
        check(
            "no jitter: every wave is the whole herd (attempts = clients x waves)",
            format!("{n} x {} = {}", w.sent, n * w.sent),
            c.attempts.to_string(),
            c.attempts == n * w.sent,
        ),
        check(
            "no jitter: never all connected within the horizon",
            "never",
            secs(r.all_connected),
            r.all_connected.is_none(),
        ),
    ]
}

/// A shared budget: after the first wave fails, it pays the retries its
/// tokens allow, then refuses: floor(min(size, start + deposit N) / cost).
fn budget_checks(sc: &Scenario, r: &RunResult) -> Vec<Check> {
    let g = &sc.groups[0];
    let Some(b) = g.budget else {
        return Vec::new();
    };
    let n = g.count;
    let retries = ((b.start + b.deposit * n as f64).min(b.size) / b.cost).floor() as u64;
    let c = &r.groups[0].2;
    vec![
        check(
            "no jitter, shared budget: attempts = clients + the retries the bucket holds",
            format!("{n} + {retries} = {}", n + retries),
            c.attempts.to_string(),
            c.attempts == n + retries,
        ),
        check(
            "no jitter, shared budget: one crash, then no retries left to crash it again",
            "1",
            r.crashes.to_string(),
            r.crashes == 1,
        ),
    ]
}

/// The accept-rate gate: clients pass one per 1/rate, so the last connects
/// at the floor (N - 1) / rate after the first wave arrives, plus one
/// service time and one leg back.
fn gate_checks(sc: &Scenario, r: &RunResult) -> Vec<Check> {
    let g = &sc.groups[0];
    let ServerKind::Queue {
        rate,
        accept: Some(gate),
        ..
    } = sc.server().kind
    else {
        return Vec::new();
    };
    let (Calls::Reconnect { at }, Delay::Fixed(d)) = (g.calls, sc.network) else {
        return Vec::new();
    };
    let first = {
        let mut st = BackoffState::new(&g.backoff);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        st.draw(
            &g.backoff,
            1,
            g.slot,
            &ChannelHistory::default(),
            0,
            &mut rng,
        )
        .map_or(0, |d| d.delay)
    };
    let service = ((1e12 / rate).round() as Time).max(1);
    let floor = at + first + d + (g.count - 1) * gate.interval + service + d;
    vec![
        check(
            "accept-rate gate: no crash",
            "0",
            r.crashes.to_string(),
            r.crashes == 0,
        ),
        check(
            "accept-rate gate: all connected at the floor, first wave + (N - 1) / rate + service + leg",
            secs(Some(floor)),
            secs(r.all_connected),
            r.all_connected == Some(floor),
        ),
    ]
}
