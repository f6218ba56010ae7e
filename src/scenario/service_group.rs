//! Reading a service scenario's client group (`[[clients]]`, and a
//! server's `downstream`, which takes a group's settings): its calls and
//! their load profile, backoff, limits, timeout, retry classes, budget and
//! breaker.

use super::durations::{duration, positive_duration};
use super::reader::{FieldError, Fields, Item};
use super::service_time::{rate, read_delay, required};
use super::{policies, stacks, MAX_STATIONS};
use crate::backoff::{BackoffSpec, PolicyWorld};
use crate::engine::Time;
use crate::service::{Breaker, Budget, Calls, Group, HedgeKind, RetryOn, Surge};
use crate::units;
use toml::Value;

type Result<T> = std::result::Result<T, FieldError>;

/// `max_retries` of a group that gives neither it nor a `backoff`: retries
/// with no wait, so a few only, as a library's default (AWS SDKs, Polly,
/// resilience4j: 2 to 3).
pub const DEFAULT_RETRIES: u32 = 3;

/// Policies whose waits are whole slots: they need the group's `slot`.
const WINDOW_POLICIES: &[&str] = &[
    "beb",
    "exponential",
    "fixed",
    "linear-window",
    "geometric",
    "mild",
];

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

pub(super) fn read_group(mut f: Fields) -> Result<Group> {
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
