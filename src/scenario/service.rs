//! Reading a service scenario (`[server]`, `[network]`, `[[clients]]`) into
//! a checked [`service::Scenario`]: every key through the path-tracking
//! reader, units required, each bad value named with what is allowed.

use super::durations::{self, duration, positive_duration};
use super::reader::{FieldError, Fields, Item};
use super::service_time::{rate, read_service, required};
use super::{policies, stacks, MAX_MEMORY_BYTES, MAX_STATIONS};
use crate::backoff::{BackoffSpec, PolicyWorld};
use crate::engine::Time;
use crate::results::MemoryNeed;
use crate::service::{
    Accept, Breaker, Budget, Calls, Delay, Group, HedgeKind, Recovery, RetryAfter, RetryOn,
    Scenario, Server, ServerKind, Slo, Surge,
};
use crate::units::{self, format_bytes};
use toml::{Table, Value};

type Result<T> = std::result::Result<T, FieldError>;

const TOP_KEYS: &[&str] = &[
    "name",
    "seed",
    "duration",
    "warmup",
    "replications",
    "bin",
    "server",
    "servers",
    "network",
    "clients",
    "recovery",
    "slo",
];

/// `max_retries` of a group that gives neither it nor a `backoff`: retries
/// with no wait, so a few only, as a library's default (AWS SDKs, Polly,
/// resilience4j: 2 to 3).
pub const DEFAULT_RETRIES: u32 = 3;

/// The most calls a run may make, by estimate.
pub const MAX_CALLS: f64 = 1e9;

/// The most timeseries bins a run may keep: a bin of 1 s (the default)
/// over the longest duration, 10^6 s. Each costs about 200 bytes while the
/// run goes on and a row of timeseries.csv per replication.
pub const MAX_BINS: u64 = 1_000_000;

/// Policies whose waits are whole slots: they need the group's `slot`.
const WINDOW_POLICIES: &[&str] = &[
    "beb",
    "exponential",
    "fixed",
    "linear-window",
    "geometric",
    "mild",
];

/// Checks a service scenario table. `extra_keys` are top-level keys that a
/// caller reads itself (e.g. `sweep`, `chart`).
pub fn validate(table: &Table, default_name: &str, extra_keys: &[&str]) -> Result<Scenario> {
    let mut top = Fields::new("", table);
    for k in ["medium", "stations", "nonstandard_frames"] {
        if top.contains(k) {
            return Err(top.err(
                k,
                "belongs to a bus scenario; a scenario with [server] models clients and a server (remove one of the two)",
            ));
        }
    }
    let super::Common {
        name,
        seed,
        replications,
    } = super::read_common(&mut top, TOP_KEYS, extra_keys, default_name)?;
    let duration = required(
        &mut top,
        "duration",
        positive_duration,
        "give the horizon, e.g. duration = \"60s\"",
    )?;
    let warmup = top.with("warmup", durations::duration)?.unwrap_or(0);
    if warmup >= duration {
        return Err(top.err(
            "warmup",
            format!(
                "{} is not shorter than the duration {}; statistics would cover nothing",
                units::format_ps(warmup),
                units::format_ps(duration)
            ),
        ));
    }
    let bin = top
        .with("bin", positive_duration)?
        .unwrap_or(1_000_000_000_000);
    let bins = duration / bin;
    if bins > MAX_BINS {
        // The narrowest bin that keeps the count, rounded up to a whole
        // number of milliseconds, seconds or minutes.
        let least = duration.div_ceil(MAX_BINS);
        let wide = [1_000_000_000, 1_000_000_000_000, 60_000_000_000_000]
            .into_iter()
            .find(|&u| least <= 1000 * u)
            .map_or(least, |u| least.div_ceil(u) * u);
        return Err(top.err(
            "bin",
            format!(
                "{} over the duration {} makes {bins} timeseries bins per run, more than the \
                 {MAX_BINS} allowed (each run keeps them all, and timeseries.csv has a row per \
                 bin and replication); give a wider bin, e.g. bin = \"{}\", or a shorter duration",
                units::format_ps(bin),
                units::format_ps(duration),
                units::format_ps(wide)
            ),
        ));
    }
    let (mut servers, downstreams) = read_servers(&mut top)?;
    let network = match top.get("network") {
        None => Delay::Fixed(0),
        Some(Value::Table(t)) => {
            let mut f = Fields::new("network", t);
            let d = f.with("delay", read_delay)?.unwrap_or(Delay::Fixed(0));
            f.finish(&["delay"])?;
            d
        }
        Some(_) => return Err(top.err("network", "expected a table: [network] with `delay`")),
    };
    let groups = match top.get("clients") {
        Some(Value::Array(a)) if !a.is_empty() => {
            let mut groups: Vec<Group> = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                let path = format!("clients.{i}");
                let (v, server) = take_server(v, &path, &servers)?;
                let mut g = read_group(Fields::of(Item {
                    path: &path,
                    value: &v,
                })?)?;
                g.server = server;
                if let Some(j) = groups.iter().position(|h| h.name == g.name) {
                    return Err(FieldError::new(
                        format!("{path}.name"),
                        format!("\"{}\" is already the name of group {j}; every group needs its own name (unnamed groups are named after their policy)", g.name),
                    ));
                }
                groups.push(g);
            }
            groups
        }
        _ => {
            return Err(top.err(
                "clients",
                "missing; add at least one [[clients]] group with `count` and `calls`",
            ))
        }
    };
    let recovery = match top.get("recovery") {
        None => Recovery::default(),
        Some(Value::Table(t)) => {
            let mut f = Fields::new("recovery", t);
            let d = Recovery::default();
            let tolerance = f.float("tolerance", 0.0, 1.0)?.unwrap_or(d.tolerance);
            let window = f.with("window", positive_duration)?.unwrap_or(d.window);
            f.finish(&["tolerance", "window"])?;
            Recovery { tolerance, window }
        }
        Some(_) => {
            return Err(top.err(
                "recovery",
                "expected a table, e.g. recovery = { tolerance = 0.1, window = \"5s\" }",
            ))
        }
    };
    let slo = match top.get("slo") {
        None => None,
        Some(Value::Table(t)) => {
            let mut f = Fields::new("slo", t);
            let latency = required(
                &mut f,
                "latency",
                positive_duration,
                "the latency a call must succeed within, e.g. latency = \"250ms\"",
            )?;
            let target = f.float("target", 0.0, 1.0)?;
            let target = f.require(
                "target",
                target,
                "the share of calls that must meet it, e.g. target = 0.99",
            )?;
            if !(target < 1.0 && target > 0.0) {
                return Err(f.err(
                    "target",
                    format!(
                        "{target} leaves no error budget; allowed: above 0 and below 1, e.g. 0.99"
                    ),
                ));
            }
            f.finish(&["latency", "target"])?;
            Some(Slo { latency, target })
        }
        Some(_) => {
            return Err(top.err(
                "slo",
                "expected a table, e.g. slo = { latency = \"250ms\", target = 0.99 }",
            ))
        }
    };
    top.finish(&[TOP_KEYS, extra_keys].concat())?;
    let mut groups = groups;
    for (s, table, path) in downstreams {
        let gi = groups.len();
        groups.push(read_downstream(s, &table, &path, &servers)?);
        servers[s].downstream = Some(gi);
    }
    for (gi, g) in groups.iter().enumerate() {
        let server = &servers[g.server];
        if matches!(g.calls, Calls::Poll { .. }) && server.kind == ServerKind::Occ {
            return Err(FieldError::new(
                format!("clients.{gi}.calls"),
                "polls need a server that answers them: kind = \"queue\" or \"flaky\", not \"occ\"",
            ));
        }
    }
    for (gi, g) in groups.iter().enumerate() {
        if g.stack.is_some_and(|s| s.hedge.is_some()) && servers[g.server].kind == ServerKind::Occ {
            return Err(FieldError::new(
                format!("clients.{gi}.stack"),
                "hedges, and hedged writes to one optimistically locked row race each other; hedge against a \"queue\" or \"flaky\" server",
            ));
        }
        if g.cancel && !matches!(servers[g.server].kind, ServerKind::Queue { .. }) {
            let path = match g.downstream_of {
                Some(s) => format!("servers.{s}.downstream"),
                None => format!("clients.{gi}"),
            };
            return Err(FieldError::new(
                format!("{path}.cancel"),
                "cancels work at a queue server; this server does none (kind = \"queue\" only)",
            ));
        }
    }
    let sc = Scenario {
        name,
        seed,
        duration,
        warmup,
        replications,
        servers,
        network,
        groups,
        bin,
        recovery,
        slo,
    };
    let clients = sc.client_count();
    if clients > MAX_STATIONS {
        return Err(FieldError::new(
            "clients",
            format!("{clients} clients in all; allowed: at most {MAX_STATIONS}"),
        ));
    }
    // One run at a time: what more threads need is checked against the
    // machine before running.
    let need = MemoryNeed::at_once(&[(sc.memory_need(), sc.replications)], 1);
    if sc.expected_calls() > MAX_CALLS {
        return Err(FieldError::new(
            "clients",
            format!(
                "{clients} clients make about {:.3e} calls over the {}, more than the {MAX_CALLS:e} a run may make; simulate fewer clients or calls, or a shorter duration",
                sc.expected_calls(),
                units::format_ps(sc.duration),
            ),
        ));
    }
    if need.is_nan() || need > MAX_MEMORY_BYTES as f64 {
        let one = MemoryNeed::at_once(&[(sc.memory_need(), 1)], 1);
        let (driver_key, driver, fix) = sc.memory_driver();
        let key = if sc.replications > 1 && need > 2.0 * one {
            "replications"
        } else {
            driver_key
        };
        return Err(FieldError::new(
            key,
            format!(
                "{driver} x {} need about {} of memory, more than the {} limit; {fix}{}",
                units::count(sc.replications.into(), "replication"),
                format_bytes(need),
                format_bytes(MAX_MEMORY_BYTES as f64),
                if sc.replications > 1 {
                    ", or fewer replications"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(sc)
}

const QUEUE_KEYS: &[&str] = &[
    "kind",
    "rate",
    "service",
    "queue_limit",
    "crash_above",
    "restart",
    "retry_after",
    "retry_after_cap",
    "accept_rate",
    "accept_burst",
    "workers",
    "discipline",
    "drop_expired",
    "reject_cost",
    "refuse_status",
];
const FLAKY_KEYS: &[&str] = &[
    "kind",
    "failure",
    "client_error",
    "retry_after",
    "failure_status",
];
const OCC_KEYS: &[&str] = &["kind", "retry_after"];

fn read_server(mut f: Fields) -> Result<Server> {
    let kind = f.choice("kind", &["queue", "flaky", "occ"])?;
    let kind = f.require("kind", kind, "one of queue, flaky, occ")?;
    let allowed = match kind.as_str() {
        "queue" => QUEUE_KEYS,
        "flaky" => FLAKY_KEYS,
        _ => OCC_KEYS,
    };
    f.allow(allowed).map_err(|e| FieldError {
        message: format!("{} (for kind = \"{kind}\")", e.message),
        ..e
    })?;
    let retry_after = f.with("retry_after", |i| {
        if i.value.as_str() == Some("backlog") {
            if kind != "queue" {
                return Err(i.err(
                    "\"backlog\" is the drain time of a queue server's backlog; give a duration, e.g. \"1s\"",
                ));
            }
            return Ok(RetryAfter::Backlog { cap: 0 });
        }
        durations::duration(i).map(RetryAfter::Fixed)
    })?;
    let cap = f.with("retry_after_cap", positive_duration)?;
    let retry_after = match (retry_after, cap) {
        (Some(RetryAfter::Backlog { .. }), cap) => Some(RetryAfter::Backlog {
            cap: cap.unwrap_or(DEFAULT_RETRY_AFTER_CAP),
        }),
        (_, Some(_)) => {
            return Err(f.err(
                "retry_after_cap",
                "applies only with retry_after = \"backlog\"",
            ))
        }
        (ra, None) => ra,
    };
    // The HTTP status of a queue's refusals, of a flaky server's failures.
    let status = |f: &mut Fields, key: &str, allowed: &[i64]| -> Result<u16> {
        let Some(v) = f.with(key, |i| i.integer())? else {
            return Ok(503);
        };
        if !allowed.contains(&v) {
            let list: Vec<String> = allowed.iter().map(i64::to_string).collect();
            return Err(f.err(
                key,
                format!("{v} is not allowed; allowed: {}", list.join(", ")),
            ));
        }
        Ok(v as u16)
    };
    let refuse_status = match kind.as_str() {
        "queue" => status(&mut f, "refuse_status", &[429, 503])?,
        "flaky" => status(&mut f, "failure_status", &[429, 500, 502, 503, 504])?,
        _ => 503,
    };
    let kind = match kind.as_str() {
        "queue" => {
            let (rate, service) = read_service(&mut f)?;
            let queue_limit = f.integer("queue_limit", 1, 1 << 40)?.map(|v| v as u64);
            let crash_above = f.integer("crash_above", 1, 1 << 40)?.map(|v| v as u64);
            let restart = f.with("restart", duration)?;
            let restart = match (crash_above, restart) {
                (Some(_), Some(r)) => r,
                (Some(_), None) => return Err(f.err(
                    "restart",
                    "missing; a server that crashes needs its down time, e.g. restart = \"10s\"",
                )),
                (None, Some(_)) => {
                    return Err(f.err(
                        "restart",
                        "applies only with `crash_above`; remove it or say when the server crashes",
                    ))
                }
                (None, None) => 0,
            };
            let accept_rate = f.with("accept_rate", self::rate)?;
            let accept_burst = f.integer("accept_burst", 0, 1 << 40)?.map(|v| v as u64);
            let accept = match (accept_rate, accept_burst) {
                (Some(r), burst) => Some(Accept {
                    interval: ((1e12 / r).round() as Time).max(1),
                    burst: burst.unwrap_or(0),
                }),
                (None, Some(_)) => return Err(f.err(
                    "accept_burst",
                    "applies only with `accept_rate`; add the rate, e.g. accept_rate = \"1000/s\"",
                )),
                (None, None) => None,
            };
            let workers = f.integer("workers", 1, MAX_WORKERS)?.unwrap_or(1) as u32;
            let lifo = f.choice("discipline", &["fifo", "lifo"])?.as_deref() == Some("lifo");
            let drop_expired = f.boolean("drop_expired")?.unwrap_or(false);
            let reject_cost = f.with("reject_cost", duration)?.unwrap_or(0);
            if reject_cost > 0 && queue_limit.is_none() {
                return Err(f.err(
                    "reject_cost",
                    "is what a refusal of a full queue costs; give the queue a `queue_limit`, or remove it",
                ));
            }
            ServerKind::Queue {
                rate,
                service,
                workers,
                lifo,
                drop_expired,
                reject_cost,
                queue_limit,
                crash_above,
                restart,
                accept,
            }
        }
        "flaky" => {
            let failure = f.float("failure", 0.0, 1.0)?;
            let failure = f.require(
                "failure",
                failure,
                "the probability that an attempt fails, 0 to 1, e.g. failure = 0.5",
            )?;
            let client_error = f.float("client_error", 0.0, 1.0)?.unwrap_or(0.0);
            if failure + client_error > 1.0 {
                return Err(f.err(
                    "client_error",
                    format!("{failure} + {client_error} is above 1; allowed: failure + client_error <= 1"),
                ));
            }
            ServerKind::Flaky {
                failure,
                client_error,
            }
        }
        _ => ServerKind::Occ,
    };
    f.finish(allowed)?;
    Ok(Server {
        name: "server".into(),
        downstream: None,
        kind,
        retry_after,
        refuse_status,
    })
}

/// The longest Retry-After "backlog" gives unless `retry_after_cap` says.
pub const DEFAULT_RETRY_AFTER_CAP: Time = 60_000_000_000_000;

/// The most workers a queue server may have.
pub const MAX_WORKERS: i64 = 1_000_000;

/// A delay: a fixed duration, or { kind = "abs-normal", mean, sd },
/// { kind = "exponential", mean }.
fn read_delay(item: Item) -> Result<Delay> {
    if let Value::String(_) = item.value {
        return Ok(Delay::Fixed(duration(item)?));
    }
    let mut f = Fields::of(item)?;
    let kind = f.choice("kind", &["fixed", "abs-normal", "exponential"])?;
    let kind = f.require("kind", kind, "one of fixed, abs-normal, exponential")?;
    let (d, keys): (Delay, &[&str]) = match kind.as_str() {
        "fixed" => (
            Delay::Fixed(required(
                &mut f,
                "value",
                duration,
                "the delay, e.g. \"5ms\"",
            )?),
            &["kind", "value"],
        ),
        "abs-normal" => (
            Delay::AbsNormal {
                mean: required(&mut f, "mean", duration, "the mean, e.g. \"10ms\"")?,
                sd: required(
                    &mut f,
                    "sd",
                    duration,
                    "the standard deviation, e.g. \"2ms\"",
                )?,
            },
            &["kind", "mean", "sd"],
        ),
        _ => (
            Delay::Exponential {
                mean: required(&mut f, "mean", positive_duration, "the mean, e.g. \"10ms\"")?,
            },
            &["kind", "mean"],
        ),
    };
    f.finish(keys)?;
    Ok(d)
}

const GROUP_KEYS: &[&str] = &[
    "name",
    "count",
    "calls",
    "backoff",
    "slot",
    "max_retries",
    "timeout",
    "cancel",
    "budget",
    "breaker",
    "stack",
    "retry_on",
    "profile",
];

fn read_group(mut f: Fields) -> Result<Group> {
    f.allow(GROUP_KEYS)?;
    let name = f.with("name", |i| {
        super::reader::name(i, super::MAX_GROUP_NAME, "app")
    })?;
    let (calls, surge) = required(
        &mut f,
        "calls",
        read_calls,
        "how clients call, e.g. calls = { kind = \"once\", at = \"0s\" }",
    )?;
    let profile = match f.with("profile", |i| read_profile(i, &calls))? {
        Some(p) if surge.is_some() => {
            let _ = p;
            return Err(f.err(
                "profile",
                "and `calls.surge` both change the rate; give the surge as a stretch of the profile",
            ));
        }
        Some(p) => p,
        None => surge.into_iter().collect(),
    };
    let count = f.with("count", |i| {
        let v = i.integer()?;
        if v < 1 || v as u64 > MAX_STATIONS {
            return Err(i.err(format!("{v} clients; allowed: 1 to {MAX_STATIONS}")));
        }
        Ok(v as u64)
    })?;
    let count =
        match (count, calls) {
            (Some(c), Calls::Fresh { .. }) if c != 1 => return Err(f.err(
                "count",
                "with calls of kind \"fresh\" each call is a new client; omit `count` (or give 1)",
            )),
            (_, Calls::Fresh { .. }) => 1,
            (Some(c), _) => c,
            (None, _) => {
                return Err(f.err(
                    "count",
                    "missing; the number of clients in this group, e.g. count = 100",
                ))
            }
        };
    // "none" stands for no stack, so that a sweep can compare it.
    let stack = f
        .with("stack", |i| match i.value.as_str() {
            Some("none") => Ok(None),
            Some(other) => Err(i.err(format!(
                "`{other}` is not a stack; allowed: \"none\" or a table, e.g. {{ kind = \"grpc\" }} with kind one of {}",
                stacks::KINDS.join(", ")
            ))),
            None => stacks::read_stack(i).map(Some),
        })?
        .flatten();
    if stack.is_some() {
        if let Some(k) = stacks::SET_BY_STACK.iter().find(|k| f.contains(k)) {
            return Err(f.err(
                k,
                "is set by `stack`; give the library's own parameter inside the stack table instead (docs/stacks.md lists them)",
            ));
        }
    }
    let slot = f.with("slot", positive_duration)?;
    let (backoff, policy) = match f.get("backoff") {
        None => (none(), "none".to_string()),
        Some(v) => {
            let path = f.key_path("backoff");
            read_backoff(
                Item {
                    path: &path,
                    value: v,
                },
                slot,
            )?
        }
    };
    // A group that gives no backoff retries at once, so by default only a
    // few times; with a backoff, as often as the horizon allows.
    let max_retries = match stack {
        Some((_, attempts)) => attempts.map(|a| a - 1),
        None => f
            .integer("max_retries", 0, 1_000_000)?
            .map(|v| v as u32)
            .or((!f.contains("backoff")).then_some(DEFAULT_RETRIES)),
    };
    let policy = match stack {
        Some((s, _)) => s.name().to_string(),
        None => policy,
    };
    // A written policy is sampled as far as the group's retries go: n up
    // to max_retries (one more where a call starts with a failure, as a
    // reconnect or a poll does), else up to the sampling's own limit.
    let backoff = match backoff {
        BackoffSpec::Expr(p) => {
            let mut p = (*p).clone();
            p.attempt_limit = max_retries.map_or(u32::MAX, |m| m.saturating_add(2));
            let spec = BackoffSpec::Expr(std::sync::Arc::new(p));
            if let Err(e) = policies::sample_waits(&spec, slot.unwrap_or(0), 1) {
                let hint = if max_retries.is_none() {
                    "; these clients retry without limit (no `max_retries`): bound the wait, e.g. min(..., 60)"
                } else {
                    ""
                };
                return Err(f.err("backoff.wait", format!("{e}{hint}")));
            }
            spec
        }
        other => other,
    };
    let timeout = f.with("timeout", positive_duration)?;
    if let Some(h) = stack.and_then(|(s, _)| s.hedge) {
        if h.kind == HedgeKind::PerTryTimeout && timeout.is_none() {
            return Err(f.err(
                "stack",
                "hedges when an attempt's per-try timeout passes (hedge_on_per_try_timeout = true), and the group's `timeout` is that per-try timeout; give one, e.g. timeout = \"50ms\"",
            ));
        }
        if matches!(calls, Calls::Poll { .. }) {
            return Err(f.err(
                "stack",
                "hedges, and a poll is not a request to race: hedging is for calls of kind once, reconnect, poisson, fresh or sequential",
            ));
        }
    }
    let cancel = f.boolean("cancel")?.unwrap_or(false);
    if cancel && timeout.is_none() {
        return Err(f.err(
            "cancel",
            "cancels an attempt when its `timeout` passes; give the group a timeout, e.g. timeout = \"250ms\"",
        ));
    }
    // "none" stands for an absent gate, so that a sweep can compare it.
    let budget = f.with("budget", |i| none_or(i, read_budget))?.flatten();
    let breaker = f.with("breaker", |i| none_or(i, read_breaker))?.flatten();
    if let (Some(b), Some(br)) = (budget, breaker) {
        if b.shared != br.shared() {
            return Err(f.err(
                "breaker",
                "has another scope than `budget`; give both the same scope (\"client\" or \"shared\")",
            ));
        }
    }
    let retry_on = f.with("retry_on", read_retry_on)?;
    f.finish(GROUP_KEYS)?;
    Ok(Group {
        retry_on,
        name: name.unwrap_or_else(|| policy.clone()),
        count,
        calls,
        backoff,
        policy,
        slot: slot.unwrap_or(0),
        max_retries,
        timeout,
        cancel,
        profile,
        budget,
        breaker,
        stack: stack.map(|(s, _)| s),
        server: 0,
        downstream_of: None,
        propagate: false,
    })
}

/// Keys of a `downstream` table besides a group's client settings.
const DOWNSTREAM_OWN: &[&str] = &["server", "deadline", "cancel"];
/// Group keys a downstream call does not take: it is made once per
/// attempt served, by the server itself.
const NOT_DOWNSTREAM: &[&str] = &["name", "count", "calls", "profile"];

/// A server's `downstream` table: the server, the table and its path.
type Downstream = (usize, Table, String);

/// `[server]`, or `[[servers]]` each with a `name` (and perhaps a
/// `downstream`): the servers, and each downstream table with its server
/// and path, read once the servers' names are known.
fn read_servers(top: &mut Fields) -> Result<(Vec<Server>, Vec<Downstream>)> {
    let one = top.get("server").cloned();
    let many = top.get("servers").cloned();
    match (one.as_ref(), many.as_ref()) {
        (Some(_), Some(_)) => Err(top.err(
            "servers",
            "and [server] both give servers; [server] is the one-server shorthand: use [[servers]] alone",
        )),
        (Some(Value::Table(t)), None) => Ok((vec![read_server(Fields::new("server", t))?], Vec::new())),
        (Some(_), None) => Err(top.err("server", "expected a table: [server] with `kind`")),
        (None, Some(Value::Array(a))) if !a.is_empty() => {
            let mut servers: Vec<Server> = Vec::with_capacity(a.len());
            let mut downstreams = Vec::new();
            for (i, v) in a.iter().enumerate() {
                let path = format!("servers.{i}");
                let Value::Table(t) = v else {
                    return Err(FieldError::new(path, "expected a table: [[servers]] with `name` and `kind`"));
                };
                let mut t = t.clone();
                let name = match t.remove("name") {
                    Some(Value::String(n)) if !n.is_empty() => n,
                    Some(other) => {
                        return Err(FieldError::new(
                            format!("{path}.name"),
                            format!("`{other}` is not a name; give a string, e.g. name = \"api\""),
                        ))
                    }
                    None => {
                        return Err(FieldError::new(
                            format!("{path}.name"),
                            "missing; every [[servers]] entry needs a name, e.g. name = \"api\"",
                        ))
                    }
                };
                if let Some(j) = servers.iter().position(|s| s.name == name) {
                    return Err(FieldError::new(
                        format!("{path}.name"),
                        format!("\"{name}\" is already the name of server {j}; every server needs its own name"),
                    ));
                }
                match t.remove("downstream") {
                    None => {}
                    Some(Value::Table(d)) => downstreams.push((i, d, format!("{path}.downstream"))),
                    Some(_) => {
                        return Err(FieldError::new(
                            format!("{path}.downstream"),
                            "expected a table, e.g. downstream = { server = \"db\", max_retries = 3 }",
                        ))
                    }
                }
                let mut s = read_server(Fields::new(path.clone(), &t))?;
                s.name = name;
                servers.push(s);
            }
            for (i, d, path) in &downstreams {
                if servers[*i].kind == ServerKind::Occ {
                    return Err(FieldError::new(
                        path.clone(),
                        "is for a server that serves attempts (kind = \"queue\" or \"flaky\"); an \"occ\" row calls no other server",
                    ));
                }
                let _ = d;
            }
            check_cycles(&servers, &downstreams)?;
            Ok((servers, downstreams))
        }
        (None, Some(_)) => Err(top.err(
            "servers",
            "expected [[servers]] entries, each with `name` and `kind`",
        )),
        (None, None) => Err(top.err("server", "expected a table: [server] with `kind`")),
    }
}

/// The index of the server named by `item`'s `server` key at `path`.
fn server_named(v: Option<&Value>, path: &str, servers: &[Server]) -> Result<Option<usize>> {
    let names = || {
        servers
            .iter()
            .map(|s| format!("\"{}\"", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match v {
        None => Ok(None),
        Some(Value::String(n)) => match servers.iter().position(|s| &s.name == n) {
            Some(k) => Ok(Some(k)),
            None => Err(FieldError::new(
                format!("{path}.server"),
                format!(
                    "\"{n}\" is not a server of this scenario; allowed: {}",
                    names()
                ),
            )),
        },
        Some(other) => Err(FieldError::new(
            format!("{path}.server"),
            format!("`{other}` is not a server name; allowed: {}", names()),
        )),
    }
}

/// A [[clients]] entry without its `server` key, and the server it calls
/// (the first by default).
fn take_server(v: &Value, path: &str, servers: &[Server]) -> Result<(Value, usize)> {
    let Value::Table(t) = v else {
        return Ok((v.clone(), 0));
    };
    let mut t = t.clone();
    let k = server_named(t.remove("server").as_ref(), path, servers)?.unwrap_or(0);
    Ok((Value::Table(t), k))
}

/// Servers calling each other in a ring are refused, naming the ring.
fn check_cycles(servers: &[Server], downstreams: &[Downstream]) -> Result<()> {
    let mut next = vec![None; servers.len()];
    for (i, d, path) in downstreams {
        let k = server_named(d.get("server"), path, servers)?;
        let Some(k) = k else {
            return Err(FieldError::new(
                format!("{path}.server"),
                "missing; the server this one calls, e.g. server = \"db\"",
            ));
        };
        next[*i] = Some((k, path.clone()));
    }
    for start in 0..servers.len() {
        let mut ring = vec![start];
        let mut s = start;
        while let Some((k, path)) = &next[s] {
            if *k == start {
                let names: Vec<&str> = ring
                    .iter()
                    .chain([&start])
                    .map(|&j| servers[j].name.as_str())
                    .collect();
                return Err(FieldError::new(
                    format!("{path}.server"),
                    format!(
                        "makes servers call each other in a ring ({}), so that a call would never end; break the ring",
                        names.join(" -> ")
                    ),
                ));
            }
            if ring.contains(k) {
                break;
            }
            ring.push(*k);
            s = *k;
        }
    }
    Ok(())
}

/// Server `s`'s `downstream` table: the client settings of its calls, as
/// a hidden group.
fn read_downstream(s: usize, d: &Table, path: &str, servers: &[Server]) -> Result<Group> {
    for key in NOT_DOWNSTREAM {
        if d.contains_key(*key) {
            return Err(FieldError::new(
                format!("{path}.{key}"),
                "is not for a downstream call: the server makes one per attempt it serves; remove it",
            ));
        }
    }
    let target = server_named(d.get("server"), path, servers)?.expect("checked with the ring");
    let mut own = Fields::new(path, d);
    let propagate = own.choice("deadline", &["own", "propagate"])?.as_deref() == Some("propagate");
    let cancel = own.boolean("cancel")?.unwrap_or(false);
    if cancel && !propagate && !d.contains_key("timeout") {
        return Err(own.err(
            "cancel",
            "cancels an attempt when its `timeout` passes (or, with deadline = \"propagate\", its caller's deadline); give a timeout, e.g. timeout = \"250ms\", or deadline = \"propagate\"",
        ));
    }
    let mut t = d.clone();
    for key in DOWNSTREAM_OWN {
        t.remove(*key);
    }
    let mut calls = Table::new();
    calls.insert("kind".into(), Value::String("once".into()));
    calls.insert("at".into(), Value::String("0s".into()));
    t.insert("calls".into(), Value::Table(calls));
    t.insert("count".into(), Value::Integer(1));
    let value = Value::Table(t);
    let mut g = read_group(Fields::of(Item {
        path,
        value: &value,
    })?)?;
    g.count = 0;
    g.name = format!("{}->{}", servers[s].name, servers[target].name);
    g.server = target;
    g.downstream_of = Some(s);
    g.propagate = propagate;
    g.cancel = cancel;
    Ok(g)
}

/// `retry_on = ["5xx", "429", "timeout"]`: the classes a group retries.
fn read_retry_on(item: Item) -> Result<RetryOn> {
    let mut on = RetryOn {
        statuses: Vec::new(),
        timeout: false,
    };
    let allowed =
        "allowed: \"5xx\", \"4xx\", \"timeout\" or a status from 400 to 599, e.g. \"429\"";
    for v in item.array()? {
        let Some(s) = v.as_str() else {
            return Err(item.err(format!("`{v}` is not a failure class; {allowed}")));
        };
        match s {
            "timeout" => on.timeout = true,
            "5xx" => on.statuses.push((500, 599)),
            "4xx" => on.statuses.push((400, 499)),
            _ => match s.parse::<u16>() {
                Ok(code) if (400..=599).contains(&code) => on.statuses.push((code, code)),
                _ => return Err(item.err(format!("`{s}` is not a failure class; {allowed}"))),
            },
        }
    }
    Ok(on)
}

/// `none`: the next attempt goes at once.
fn none() -> BackoffSpec {
    BackoffSpec::Constant {
        delay: 0,
        attempt_limit: u32::MAX,
    }
}

/// The bus world's policy table, in seconds: window policies need the
/// group's `slot`; `none` retries at once; `attempt_limit` is the group's
/// `max_retries` here, and BLAM (which observes a bus) has no meaning.
fn read_backoff(item: Item, slot: Option<Time>) -> Result<(BackoffSpec, String)> {
    let t = match item.value {
        Value::Table(t) => t,
        _ => return Err(item.err("expected a table, e.g. backoff = { kind = \"full-jitter\", base = \"100ms\", cap = \"10s\" }")),
    };
    let kind = t.get("kind").and_then(Value::as_str).unwrap_or("");
    let at = |k: &str| FieldError::new(format!("{}.{k}", item.path), "");
    if kind == "none" {
        // `base` and `cap` are allowed and unused, so that a sweep over
        // `backoff.kind` can include `none`.
        let mut f = Fields::of(item)?;
        for k in ["kind", "base", "cap"] {
            f.get(k);
        }
        f.finish(&["kind", "base", "cap"])?;
        return Ok((none(), "none".into()));
    }
    if kind == "blam" {
        return Err(FieldError {
            message: "blam observes collisions on a bus; the service world has none. Allowed: none and the other policies of `csmacd policies`".into(),
            ..at("kind")
        });
    }
    if t.contains_key("attempt_limit") {
        return Err(FieldError {
            message: "is not used by clients; the group's `max_retries` limits retries".into(),
            ..at("attempt_limit")
        });
    }
    for (k, v) in t {
        if let Some(s) = v.as_str() {
            let s = s.trim_end();
            if s.ends_with("bit") || s.ends_with("bits") {
                return Err(FieldError {
                    message: format!("`{s}` is in bit times, which the service world has not; give a time such as \"100ms\""),
                    ..at(k)
                });
            }
            if slot.is_none() && (s.ends_with("slot") || s.ends_with("slots")) {
                return Err(FieldError {
                    message: format!("`{s}` is in slots; give the group's `slot` (e.g. slot = \"10ms\") or a time such as \"100ms\""),
                    ..at(k)
                });
            }
        }
    }
    if slot.is_none() {
        if WINDOW_POLICIES.contains(&kind) {
            return Err(FieldError {
                message: format!("`{kind}` waits a whole number of slots; give the group's `slot`, e.g. slot = \"10ms\""),
                ..at("kind")
            });
        }
        for k in ["base", "cap", "delay", "jitter"] {
            let wants = policies::POLICIES
                .iter()
                .find(|d| d.kind == kind)
                .is_some_and(|d| {
                    d.params
                        .iter()
                        .any(|p| p.key == k && p.default.ends_with("slot"))
                });
            if wants && !t.contains_key(k) {
                return Err(FieldError {
                    message: format!("missing; the bus default is in slots, so give it as a time here, e.g. {k} = \"100ms\""),
                    ..at(k)
                });
            }
        }
    }
    let spec = policies::read_policy(item, 0, slot.unwrap_or(0), PolicyWorld::Service)?;
    let policy = spec.kind().to_string();
    Ok((spec, policy))
}

/// `"none"` (no gate), or the gate's table.
fn none_or<T>(item: Item, read: impl FnOnce(Item) -> Result<T>) -> Result<Option<T>> {
    match item.value.as_str() {
        Some("none") => Ok(None),
        Some(other) => Err(item.err(format!(
            "`{other}` is not a gate; allowed: \"none\" or a table, e.g. {{ size = 10, scope = \"shared\" }} or {{ threshold = 0.1, window = \"5s\" }}"
        ))),
        None => read(item).map(Some),
    }
}

fn scope(f: &mut Fields) -> Result<bool> {
    Ok(f.choice("scope", &["client", "shared"])?.as_deref() == Some("shared"))
}

fn read_budget(item: Item) -> Result<Budget> {
    let mut f = Fields::of(item)?;
    let size = f.float("size", 0.0, 1e12)?;
    let size = f.require(
        "size",
        size,
        "the bucket's capacity in tokens, e.g. size = 10",
    )?;
    if size <= 0.0 {
        return Err(f.err("size", "must be greater than zero"));
    }
    let deposit = f.float("deposit", 0.0, 1e12)?.unwrap_or(0.1);
    let cost = f.float("cost", 0.0, 1e12)?.unwrap_or(1.0);
    if cost <= 0.0 {
        return Err(f.err("cost", "must be greater than zero (tokens a retry takes)"));
    }
    if cost > size {
        return Err(f.err(
            "cost",
            format!("{cost} is above the bucket's size {size}; no retry could ever be paid; allowed: cost <= size"),
        ));
    }
    let start = f.float("start", 0.0, 1e12)?.unwrap_or(size);
    if start > size {
        return Err(f.err(
            "start",
            format!("{start} is above the bucket's size {size}; allowed: 0 to size"),
        ));
    }
    let shared = scope(&mut f)?;
    f.finish(&["size", "deposit", "cost", "start", "scope"])?;
    Ok(Budget {
        size,
        deposit,
        cost,
        start,
        shared,
    })
}

fn read_breaker(item: Item) -> Result<Breaker> {
    let mut f = Fields::of(item)?;
    let shared = scope(&mut f)?;
    if f.contains("threshold") || !f.contains("consecutive") {
        let threshold = f.float("threshold", 0.0, 1.0)?;
        let threshold = f.require(
            "threshold",
            threshold,
            "the failed share of attempts above which retries stop, e.g. threshold = 0.1 (or a classic breaker: consecutive = 5, open = \"30s\")",
        )?;
        let window = f.with("window", |i| {
            if i.value.as_str() == Some("all") {
                Ok(None)
            } else {
                positive_duration(i).map(Some)
            }
        })?;
        f.finish(&["threshold", "window", "scope"])?;
        return Ok(Breaker::Ratio {
            threshold,
            window: window.flatten(),
            shared,
        });
    }
    let consecutive = f.integer("consecutive", 1, 1_000_000)?.unwrap_or(5) as u32;
    let open = required(
        &mut f,
        "open",
        positive_duration,
        "how long the breaker stays open, e.g. open = \"30s\"",
    )?;
    let all = f.choice("mode", &["all", "retries"])?.as_deref() != Some("retries");
    let probes = f.integer("probes", 1, 1_000_000)?.unwrap_or(1) as u32;
    f.finish(&["consecutive", "open", "mode", "scope", "probes"])?;
    Ok(Breaker::Classic {
        consecutive,
        open,
        all,
        shared,
        probes,
    })
}

/// The most stretches a load profile may have.
const MAX_PROFILE: usize = 10_000;

/// `profile = [{ from, to, factor }]`: stretches in time order, not
/// overlapping, each multiplying the group's rate.
fn read_profile(item: Item, calls: &Calls) -> Result<Vec<Surge>> {
    let base = match *calls {
        Calls::Poisson { rate, .. } | Calls::Fresh { rate } => rate,
        _ => {
            return Err(
                item.err("applies to calls of kind \"poisson\" or \"fresh\", which have a rate")
            )
        }
    };
    let list = item.array()?;
    if list.len() > MAX_PROFILE {
        return Err(item.err(format!(
            "{} stretches; allowed: at most {MAX_PROFILE}",
            list.len()
        )));
    }
    let mut out: Vec<Surge> = Vec::with_capacity(list.len());
    for (k, v) in list.iter().enumerate() {
        let path = format!("{}.{k}", item.path);
        let mut s = Fields::of(Item {
            path: &path,
            value: v,
        })?;
        let from = required(
            &mut s,
            "from",
            duration,
            "when the stretch starts, e.g. from = \"20s\"",
        )?;
        let to = required(&mut s, "to", duration, "when it ends, e.g. to = \"40s\"")?;
        let factor = s.float("factor", 0.0, 1e6)?;
        let factor = s.require(
            "factor",
            factor,
            "what the rate is multiplied by, e.g. factor = 3",
        )?;
        if to <= from {
            return Err(s.err(
                "to",
                format!(
                    "{} is not after from = {}; a stretch must end after it starts",
                    units::format_ps(to),
                    units::format_ps(from)
                ),
            ));
        }
        if let Some(prev) = out.last() {
            if from < prev.to {
                return Err(s.err(
                    "from",
                    format!(
                        "{} is before the end of the stretch before it ({}); give stretches in time order, not overlapping",
                        units::format_ps(from),
                        units::format_ps(prev.to)
                    ),
                ));
            }
        }
        s.finish(&["from", "to", "factor"])?;
        out.push(Surge {
            rate: base * factor,
            from,
            to,
        });
    }
    Ok(out)
}

fn read_calls(item: Item) -> Result<(Calls, Option<Surge>)> {
    let mut f = Fields::of(item)?;
    let all = [
        "once",
        "reconnect",
        "poisson",
        "fresh",
        "poll",
        "sequential",
    ];
    let kind = f.choice("kind", &all)?;
    let kind = f.require(
        "kind",
        kind,
        "one of once, reconnect, poisson, fresh, poll, sequential",
    )?;
    let at = |f: &mut Fields| -> Result<Time> { Ok(f.with("at", duration)?.unwrap_or(0)) };
    let mut surge = None;
    let (calls, keys): (Calls, &[&str]) = match kind.as_str() {
        "once" => (Calls::Once { at: at(&mut f)? }, &["kind", "at"]),
        "reconnect" => (Calls::Reconnect { at: at(&mut f)? }, &["kind", "at"]),
        "sequential" => {
            let count = f.integer("count", 1, 1 << 40)?;
            let count = f.require(
                "count",
                count,
                "the calls each client makes one after another, e.g. count = 1000",
            )? as u64;
            let gap = f.with("gap", duration)?.unwrap_or(0);
            (
                Calls::Sequential {
                    count,
                    gap,
                    at: at(&mut f)?,
                },
                &["kind", "count", "gap", "at"],
            )
        }
        "poisson" => {
            let rate = required(
                &mut f,
                "rate",
                rate,
                "calls per second per client, e.g. rate = \"10/s\"",
            )?;
            let until = required(
                &mut f,
                "until",
                positive_duration,
                "when clients stop starting calls, e.g. until = \"10s\"",
            )?;
            (Calls::Poisson { rate, until }, &["kind", "rate", "until"])
        }
        "fresh" => {
            let base = required(
                &mut f,
                "rate",
                rate,
                "calls per second, e.g. rate = \"70/s\"",
            )?;
            surge = f.with("surge", |i| {
                let mut s = Fields::of(i)?;
                let rate = required(
                    &mut s,
                    "rate",
                    rate,
                    "the rate during the surge, e.g. rate = \"150/s\"",
                )?;
                let from = required(
                    &mut s,
                    "from",
                    duration,
                    "when the surge starts, e.g. from = \"20s\"",
                )?;
                let to = required(
                    &mut s,
                    "to",
                    duration,
                    "when the surge ends, e.g. to = \"30s\"",
                )?;
                if to <= from {
                    return Err(s.err(
                        "to",
                        format!(
                            "{} is not after from = {}; a surge must end after it starts",
                            units::format_ps(to),
                            units::format_ps(from)
                        ),
                    ));
                }
                s.finish(&["rate", "from", "to"])?;
                Ok(Surge { rate, from, to })
            })?;
            (Calls::Fresh { rate: base }, &["kind", "rate", "surge"])
        }
        _ => {
            let at = at(&mut f)?;
            let job = f.with("job", read_delay)?;
            let job = f.require("job", job, "how long the job takes, e.g. job = \"5s\"")?;
            (Calls::Poll { at, job }, &["kind", "at", "job"])
        }
    };
    f.finish(keys)?;
    Ok((calls, surge))
}
