//! Reading a service scenario (`[server]`, `[network]`, `[[clients]]`) into
//! a checked [`service::Scenario`]: every key through the path-tracking
//! reader, units required, each bad value named with what is allowed.

use super::durations::{self, duration, positive_duration};
use super::reader::{FieldError, Fields, Item};
use super::service_group::read_group;
pub use super::service_group::DEFAULT_RETRIES;
use super::service_time::{rate, read_delay, read_service, required};
use super::{MAX_MEMORY_BYTES, MAX_STATIONS};
use crate::engine::Time;
use crate::results::MemoryNeed;
use crate::service::{
    Accept, Calls, Delay, Group, Recovery, RetryAfter, Scenario, Server, ServerKind, Slo,
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

/// The most calls a run may make, by estimate.
pub const MAX_CALLS: f64 = 1e9;

/// The most timeseries bins a run may keep: a bin of 1 s (the default)
/// over the longest duration, 10^6 s. Each costs about 200 bytes while the
/// run goes on and a row of timeseries.csv per replication.
pub const MAX_BINS: u64 = 1_000_000;

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
