//! Reading a client group's `stack`: a library's retry stack with its
//! defaults (docs/stacks.md), each parameter overridable, each checked
//! against what the library itself accepts.

use super::durations::{duration, positive_duration};
use super::reader::{FieldError, Fields, Item};
use crate::engine::Time;
use crate::service::{Hedge, HedgeKind, Stack, StackKind, GRPC_UNAVAILABLE};

type Result<T> = std::result::Result<T, FieldError>;

pub const KINDS: &[&str] = &[
    "grpc",
    "aws-standard",
    "aws-adaptive",
    "finagle",
    "envoy",
    "polly-breaker",
    "resilience4j-breaker",
];

/// Keys of a group that a stack sets: they are given inside the stack.
pub const SET_BY_STACK: &[&str] = &["backoff", "slot", "max_retries", "budget", "breaker"];

const MS: Time = 1_000_000_000;
const S: Time = 1_000 * MS;

/// gRPC's status code names, in code order (0 to 16).
const GRPC_CODES: &[&str] = &[
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// `retryable_status_codes = ["UNAVAILABLE", ...]` (or a hedging policy's
/// `non_fatal`, `what` saying which): a bit per code.
fn grpc_codes(item: Item, what: &str) -> Result<u32> {
    let mut bits = 0;
    for v in item.array()? {
        let name = v.as_str().unwrap_or("");
        // The service config takes the names in any case (A6).
        let Some(code) = GRPC_CODES
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .filter(|&c| c != 0)
        else {
            return Err(item.err(format!(
                "`{v}` is not a {what} gRPC status code; allowed: {}",
                GRPC_CODES[1..].join(", ")
            )));
        };
        bits |= 1 << code;
    }
    if bits == 0 {
        return Err(item.err("is empty; A6 requires at least one code, e.g. [\"UNAVAILABLE\"]"));
    }
    Ok(bits)
}

/// A stack, and the most attempts a call makes (None: no limit).
pub fn read_stack(item: Item) -> Result<(Stack, Option<u32>)> {
    let mut f = Fields::of(item)?;
    let kind = f.choice("kind", KINDS)?;
    let kind = f.require(
        "kind",
        kind,
        &format!("the library, one of {}", KINDS.join(", ")),
    )?;
    let keys: &[&str] = match kind.as_str() {
        "grpc" => &[
            "max_attempts",
            "max_tokens",
            "token_ratio",
            "initial_backoff",
            "max_backoff",
            "backoff_multiplier",
            "jitter",
            "retryable_status_codes",
            "hedging",
        ],
        "aws-standard" | "aws-adaptive" => &[
            "max_attempts",
            "version",
            "dynamodb",
            "quota",
            "retry_cost",
            "throttling_retry_cost",
            "timeout_cost",
            "no_retry_increment",
            "base",
            "throttling_base",
            "cap",
        ],
        "finagle" => &[
            "max_attempts",
            "ttl",
            "min_retries_per_sec",
            "percent_can_retry",
            "backoff",
        ],
        "envoy" => &[
            "max_attempts",
            "num_retries",
            "hedge_on_per_try_timeout",
            "cancel_losers",
            "budget_percent",
            "min_retry_concurrency",
            "base",
            "max",
        ],
        "polly-breaker" => &[
            "max_attempts",
            "failure_ratio",
            "sampling_duration",
            "minimum_throughput",
            "break_duration",
            "delay",
        ],
        _ => &[
            "max_attempts",
            "failure_rate_threshold",
            "sliding_window_size",
            "minimum_number_of_calls",
            "wait_duration_in_open_state",
            "permitted_number_of_calls_in_half_open_state",
            "wait_duration",
        ],
    };
    let allowed = [&["kind", "scope"], keys].concat();
    f.allow(&allowed).map_err(|e| FieldError {
        message: format!("{} (for kind = \"{kind}\")", e.message),
        ..e
    })?;
    let shared = f.choice("scope", &["client", "shared"])?.as_deref() != Some("client");
    let time = |f: &mut Fields, key: &str, default: Time| -> Result<Time> {
        Ok(f.with(key, duration)?.unwrap_or(default))
    };
    let positive = |f: &mut Fields, key: &str, default: Time| -> Result<Time> {
        Ok(f.with(key, positive_duration)?.unwrap_or(default))
    };
    let attempts =
        |f: &mut Fields, lo: i64, hi: i64, default: Option<i64>| -> Result<Option<u32>> {
            Ok(f.integer("max_attempts", lo, hi)?
                .or(default)
                .map(|v| v as u32))
        };
    let mut hedge = None;
    let (kind, max_attempts) = match kind.as_str() {
        "grpc" if f.contains("hedging") => {
            // gRFC A6: a method has a retry policy or a hedging policy,
            // never both; the throttle applies to either.
            if let Some(k) = GRPC_RETRY_POLICY.iter().find(|k| f.contains(k)) {
                return Err(f.err(
                    k,
                    "belongs to the retry policy, and a gRPC method has a retry policy or a hedging policy, not both (gRFC A6); with `hedging` give max_attempts inside it, or drop `hedging` to retry",
                ));
            }
            let (max_attempts, delay, non_fatal, cancel_losers) =
                f.with("hedging", read_grpc_hedging)?.expect("present");
            let (max_tokens, token_ratio) = read_throttle(&mut f)?;
            hedge = Some(Hedge {
                kind: HedgeKind::Grpc { delay },
                cancel_losers,
            });
            (
                StackKind::Grpc {
                    max_tokens,
                    token_ratio,
                    initial: 100 * MS,
                    max: S,
                    multiplier: 2.0,
                    a6_jitter: false,
                    retryable: non_fatal,
                },
                Some(max_attempts),
            )
        }
        "grpc" => {
            // gRFC A6: maxAttempts > 1 (above 5 gRPC uses 5); maxTokens in
            // (0, 1000], tokenRatio > 0 with three decimals.
            let max_attempts = attempts(&mut f, 2, 5, Some(5))?;
            let (max_tokens, token_ratio) = read_throttle(&mut f)?;
            let initial = positive(&mut f, "initial_backoff", 100 * MS)?;
            let max = positive(&mut f, "max_backoff", S)?;
            if max < initial {
                return Err(f.err(
                    "max_backoff",
                    "is below initial_backoff; allowed: max_backoff >= initial_backoff",
                ));
            }
            let multiplier = f.float("backoff_multiplier", 1e-9, 1e6)?.unwrap_or(2.0);
            // grpcio's retry filter jitters by 0.2 around the backoff; A6's
            // text draws random(0, backoff).
            let a6_jitter = f.choice("jitter", &["grpcio", "a6"])?.as_deref() == Some("a6");
            let retryable = f
                .with("retryable_status_codes", |i| grpc_codes(i, "retryable"))?
                .unwrap_or(1 << GRPC_UNAVAILABLE);
            (
                StackKind::Grpc {
                    max_tokens,
                    token_ratio,
                    initial,
                    max,
                    multiplier,
                    a6_jitter,
                    retryable,
                },
                max_attempts,
            )
        }
        "aws-standard" | "aws-adaptive" => {
            // botocore 1.44 (retries/standard.py): costs 14 and 5 (a
            // throttling error), no cost of its own for a timeout, base
            // 50 ms (DynamoDB: 25 ms and 4 attempts), 1 s after a
            // throttling error. 1.43: costs 5 and 10 (a timeout), and
            // random(0, 1 s * 2^(n-1)) after any error.
            let v1_43 = f.choice("version", &["1.44", "1.43"])?.as_deref() == Some("1.43");
            let dynamodb = f.boolean("dynamodb")?.unwrap_or(false);
            let default_attempts = if dynamodb && !v1_43 { 4 } else { 3 };
            let max_attempts = attempts(&mut f, 1, 1_000_000, Some(default_attempts))?;
            let quota = f.integer("quota", 0, 1 << 31)?.unwrap_or(500) as u32;
            let cost = |f: &mut Fields, key: &str, default: i64| -> Result<u32> {
                let c = f.integer(key, 1, 1 << 31)?.unwrap_or(default) as u32;
                if c > quota && quota > 0 {
                    return Err(f.err(
                        key,
                        format!("{c} is above the quota {quota}; no retry could ever be paid; allowed: 1 to quota"),
                    ));
                }
                Ok(c)
            };
            let retry_cost = cost(&mut f, "retry_cost", if v1_43 { 5 } else { 14 })?;
            let throttling_retry_cost = cost(
                &mut f,
                "throttling_retry_cost",
                if v1_43 { i64::from(retry_cost) } else { 5 },
            )?;
            let timeout_cost = cost(
                &mut f,
                "timeout_cost",
                if v1_43 { 10 } else { i64::from(retry_cost) },
            )?;
            let no_retry_increment =
                f.integer("no_retry_increment", 0, 1 << 31)?.unwrap_or(1) as u32;
            let base_default = match (v1_43, dynamodb) {
                (true, _) => S,
                (false, true) => 25 * MS,
                (false, false) => 50 * MS,
            };
            let base = positive(&mut f, "base", base_default)?;
            let throttling_base = positive(&mut f, "throttling_base", S)?;
            let cap = positive(&mut f, "cap", 20 * S)?;
            (
                StackKind::Aws {
                    quota,
                    retry_cost,
                    throttling_retry_cost,
                    timeout_cost,
                    no_retry_increment,
                    base,
                    throttling_base,
                    cap,
                    adaptive: kind == "aws-adaptive",
                    v1_43,
                },
                max_attempts,
            )
        }
        "finagle" => {
            let max_attempts = attempts(&mut f, 1, 1_000_000, None)?;
            // RetryBudget.apply: ttl within [1 s, 60 s], percentCanRetry
            // within [0, 1000], minRetriesPerSec >= 0.
            let ttl = positive(&mut f, "ttl", 10 * S)?;
            if !(S..=60 * S).contains(&ttl) {
                return Err(f.err("ttl", "is out of range; allowed: \"1s\" to \"60s\""));
            }
            let min_retries_per_sec = f
                .integer("min_retries_per_sec", 0, 1_000_000)?
                .unwrap_or(10) as u32;
            let percent_can_retry = f.float("percent_can_retry", 0.0, 1000.0)?.unwrap_or(0.2);
            if min_retries_per_sec == 0 && percent_can_retry == 0.0 {
                return Err(f.err(
                    "percent_can_retry",
                    "is 0 with min_retries_per_sec = 0: the budget would allow no retry at all; give one of them above 0",
                ));
            }
            let backoff = time(&mut f, "backoff", 0)?;
            (
                StackKind::Finagle {
                    ttl,
                    min_retries_per_sec,
                    percent_can_retry,
                    backoff,
                },
                max_attempts,
            )
        }
        "envoy" => {
            // Envoy's retry policy counts retries (num_retries, default
            // 1); max_attempts is that plus one.
            if f.contains("num_retries") && f.contains("max_attempts") {
                return Err(f.err(
                    "num_retries",
                    "and max_attempts both give the attempt limit (max_attempts = num_retries + 1); give one",
                ));
            }
            let max_attempts = match f.integer("num_retries", 0, 999_999)? {
                Some(n) => Some(n as u32 + 1),
                None => attempts(&mut f, 1, 1_000_000, Some(2))?,
            };
            if f.boolean("hedge_on_per_try_timeout")?.unwrap_or(false) {
                hedge = Some(Hedge {
                    kind: HedgeKind::PerTryTimeout,
                    cancel_losers: f.boolean("cancel_losers")?.unwrap_or(true),
                });
            } else if f.contains("cancel_losers") {
                return Err(f.err(
                    "cancel_losers",
                    "applies to hedged attempts; give hedge_on_per_try_timeout = true (or drop cancel_losers)",
                ));
            }
            let budget_percent = f.float("budget_percent", 0.0, 100.0)?.unwrap_or(20.0);
            let min_retry_concurrency = f
                .integer("min_retry_concurrency", 0, 1_000_000)?
                .unwrap_or(3) as u32;
            let base = positive(&mut f, "base", 25 * MS)?;
            let max = positive(&mut f, "max", base.saturating_mul(10))?;
            if max < base {
                return Err(f.err("max", "is below base; allowed: max >= base"));
            }
            (
                StackKind::Envoy {
                    budget_percent,
                    min_retry_concurrency,
                    base,
                    max,
                },
                max_attempts,
            )
        }
        "polly-breaker" => {
            // Polly's retry: MaxRetryAttempts = 3, so 4 attempts.
            let max_attempts = attempts(&mut f, 1, 1_000_000, Some(4))?;
            // CircuitBreakerStrategyOptions' ranges: FailureRatio 0 to 1,
            // MinimumThroughput >= 2, SamplingDuration and BreakDuration
            // 0.5 s to 1 day.
            let failure_ratio = f.float("failure_ratio", 0.0, 1.0)?.unwrap_or(0.1);
            let in_range = |f: &Fields, key: &str, t: Time| -> Result<Time> {
                if (500 * MS..=86_400 * S).contains(&t) {
                    Ok(t)
                } else {
                    Err(f.err(
                        key,
                        "is out of range; allowed: \"500ms\" to \"24h\" (a day, 86400s)",
                    ))
                }
            };
            let sampling_duration = positive(&mut f, "sampling_duration", 30 * S)?;
            let sampling_duration = in_range(&f, "sampling_duration", sampling_duration)?;
            let minimum_throughput =
                f.integer("minimum_throughput", 2, 1 << 31)?.unwrap_or(100) as u32;
            let break_duration = positive(&mut f, "break_duration", 5 * S)?;
            let break_duration = in_range(&f, "break_duration", break_duration)?;
            let delay = time(&mut f, "delay", 2 * S)?;
            (
                StackKind::Polly {
                    failure_ratio,
                    sampling_duration,
                    minimum_throughput,
                    break_duration,
                    delay,
                },
                max_attempts,
            )
        }
        _ => {
            // resilience4j's Retry: maxAttempts 3, waitDuration 500 ms.
            let max_attempts = attempts(&mut f, 1, 1_000_000, Some(3))?;
            let threshold = f
                .float("failure_rate_threshold", 0.0, 100.0)?
                .unwrap_or(50.0);
            if threshold <= 0.0 {
                return Err(f.err(
                    "failure_rate_threshold",
                    "must be above 0 (a percentage); allowed: above 0 to 100",
                ));
            }
            let size = f.integer("sliding_window_size", 1, 1 << 24)?.unwrap_or(100) as u32;
            let min_calls = f
                .integer("minimum_number_of_calls", 1, 1 << 24)?
                .unwrap_or(100) as u32;
            if min_calls > size {
                let given = if f.contains("minimum_number_of_calls") {
                    ""
                } else {
                    " (the default)"
                };
                return Err(f.err(
                    "minimum_number_of_calls",
                    format!("{min_calls}{given} is above sliding_window_size = {size}: a window of {size} calls never holds that many; allowed: 1 to sliding_window_size"),
                ));
            }
            let wait_open = positive(&mut f, "wait_duration_in_open_state", 60 * S)?;
            let half_open = f
                .integer("permitted_number_of_calls_in_half_open_state", 1, 1 << 24)?
                .unwrap_or(10) as u32;
            let wait = time(&mut f, "wait_duration", 500 * MS)?;
            (
                StackKind::Resilience4j {
                    failure_rate_threshold: threshold,
                    sliding_window_size: size,
                    minimum_number_of_calls: min_calls,
                    wait_duration_in_open_state: wait_open,
                    permitted_calls_in_half_open_state: half_open,
                    wait_duration: wait,
                },
                max_attempts,
            )
        }
    };
    f.finish(&allowed)?;
    Ok((
        Stack {
            kind,
            shared,
            hedge,
        },
        max_attempts,
    ))
}

/// A grpc stack's keys of its retry policy, which a hedging policy
/// replaces.
const GRPC_RETRY_POLICY: &[&str] = &[
    "max_attempts",
    "initial_backoff",
    "max_backoff",
    "backoff_multiplier",
    "jitter",
    "retryable_status_codes",
];

/// gRPC's retry throttling: `max_tokens` in (0, 1000] and `token_ratio`
/// with three decimals (gRFC A6), in thousandths of a token.
fn read_throttle(f: &mut Fields) -> Result<(i64, i64)> {
    let max_tokens = f.float("max_tokens", 0.001, 1000.0)?.unwrap_or(10.0);
    let token_ratio = f.float("token_ratio", 0.001, 1000.0)?.unwrap_or(0.1);
    if token_ratio > max_tokens {
        return Err(f.err(
            "token_ratio",
            format!("{token_ratio} is above max_tokens = {max_tokens}; a success gives back at most the whole bucket; allowed: 0.001 to max_tokens"),
        ));
    }
    Ok((
        (max_tokens * 1000.0).round() as i64,
        (token_ratio * 1000.0).round() as i64,
    ))
}

const HEDGING_KEYS: &[&str] = &["max_attempts", "delay", "non_fatal", "cancel_losers"];

/// A grpc stack's `hedging = { max_attempts, delay, non_fatal,
/// cancel_losers }` (gRFC A6's hedgingPolicy): the attempts, the delay
/// between them, the non-fatal codes as bits, and whether the losers are
/// cancelled.
fn read_grpc_hedging(item: Item) -> Result<(u32, Time, u32, bool)> {
    let mut f = Fields::of(item)?;
    f.allow(HEDGING_KEYS)?;
    // A6: maxAttempts is required and at least 2; gRPC clients treat
    // values above 5 as 5.
    let max_attempts = match f.integer("max_attempts", i64::MIN, i64::MAX)? {
        None => {
            return Err(f.err(
                "max_attempts",
                "missing; the attempts a call may send, the first included (gRFC A6 requires it), e.g. max_attempts = 3",
            ))
        }
        Some(n) if n < 2 => {
            return Err(f.err(
                "max_attempts",
                format!("{n}: a hedging policy sends at least 2 attempts; allowed: 2 to 5"),
            ))
        }
        Some(n) if n > 5 => {
            return Err(f.err(
                "max_attempts",
                format!("{n}: gRPC clients treat values above 5 as 5 (gRFC A6's client-side limit); allowed: 2 to 5"),
            ))
        }
        Some(n) => n as u32,
    };
    // A6: "0s", or unset, sends all attempts at once.
    let delay = f.with("delay", duration)?.unwrap_or(0);
    let Some(non_fatal) = f.with("non_fatal", |i| grpc_codes(i, "non-fatal"))? else {
        return Err(f.err(
            "non_fatal",
            "missing; the gRPC codes after which the other attempts may still succeed (gRFC A6 requires them), e.g. non_fatal = [\"UNAVAILABLE\"]",
        ));
    };
    let cancel_losers = f.boolean("cancel_losers")?.unwrap_or(true);
    f.finish(HEDGING_KEYS)?;
    Ok((max_attempts, delay, non_fatal, cancel_losers))
}
