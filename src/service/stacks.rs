//! Retry stacks of real client libraries: each sets a group's attempts,
//! backoff and gates to one library's semantics and defaults (docs/stacks.md
//! names the source each follows). gRPC's retry throttling, the AWS SDKs'
//! retry quota (standard mode) and client-side rate limiter (adaptive mode),
//! Finagle's RetryBudget, Envoy's retry budget, and the circuit breakers of
//! Polly and resilience4j; and the hedging of gRPC and Envoy, which
//! service/hedge.rs carries out.

use super::status::{CONFLICT, CONNECTION_LOST};
use crate::engine::Time;
use std::collections::VecDeque;

const PS: f64 = 1e12;

/// A library's retry stack, validated; `shared`: one state for the whole
/// group (one client object in one process), else one per client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stack {
    pub kind: StackKind,
    pub shared: bool,
    /// Its hedging (gRPC's hedging policy in place of its retry policy;
    /// Envoy's hedge on per-try timeout), if any.
    pub hedge: Option<Hedge>,
}

/// A stack's hedging, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hedge {
    pub kind: HedgeKind,
    /// Whether the attempts still outstanding when a call is decided are
    /// cancelled (the cancel reaches a queue server one network leg later
    /// and stops their work) or left to run.
    pub cancel_losers: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HedgeKind {
    /// gRFC A6's hedgingPolicy: the next attempt `delay` after the last
    /// one while none has succeeded, up to the group's attempt limit; the
    /// stack's retryable codes are the non-fatal ones.
    Grpc { delay: Time },
    /// Envoy's `hedge_on_per_try_timeout`: when an attempt's per-try
    /// timeout (the group's `timeout`) passes, a retry goes (after the
    /// backoff, if the retry policy and budget allow one) and the attempt
    /// stays in flight.
    PerTryTimeout,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StackKind {
    /// gRFC A6 as grpcio does it: retry throttling in thousandths of a
    /// token; backoff min(initial * multiplier^(n-1), max) * U(0.8, 1.2)
    /// (grpcio's retry filter), or A6's random(0, that) with `a6_jitter`;
    /// the codes retried (a bit per gRPC status code).
    Grpc {
        max_tokens: i64,
        token_ratio: i64,
        initial: Time,
        max: Time,
        multiplier: f64,
        a6_jitter: bool,
        retryable: u32,
    },
    /// The AWS SDKs' standard mode (and with `adaptive`, adaptive mode) as
    /// botocore does it: the retry quota, and backoff random * min(base *
    /// 2^(n-1), cap) with `throttling_base` after a throttling error.
    /// `v1_43`: botocore 1.43's classification (a 429 without an error code
    /// is not retried) and its handling of Retry-After (none).
    Aws {
        quota: u32,
        retry_cost: u32,
        throttling_retry_cost: u32,
        timeout_cost: u32,
        no_retry_increment: u32,
        base: Time,
        throttling_base: Time,
        cap: Time,
        adaptive: bool,
        v1_43: bool,
    },
    /// Finagle's RetryBudget over a sliding `ttl`, and a constant backoff.
    Finagle {
        ttl: Time,
        min_retries_per_sec: u32,
        percent_can_retry: f64,
        backoff: Time,
    },
    /// Envoy's retry budget and its jittered backoff
    /// random(0, min(base * 2^(n-1), max)).
    Envoy {
        budget_percent: f64,
        min_retry_concurrency: u32,
        base: Time,
        max: Time,
    },
    /// Polly's circuit breaker (failure ratio over a sampling duration) with
    /// Polly's retry in front of it (a constant delay).
    Polly {
        failure_ratio: f64,
        sampling_duration: Time,
        minimum_throughput: u32,
        break_duration: Time,
        delay: Time,
    },
    /// resilience4j's count-based circuit breaker with resilience4j's retry
    /// in front of it (a constant wait).
    Resilience4j {
        failure_rate_threshold: f64,
        sliding_window_size: u32,
        minimum_number_of_calls: u32,
        wait_duration_in_open_state: Time,
        permitted_calls_in_half_open_state: u32,
        wait_duration: Time,
    },
}

/// Why an attempt failed, as the stacks tell failures apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A retryable error reply (5xx, a conflict, a crash that drops it).
    Error,
    /// A throttling error (botocore: HTTP 429; without a stack, any
    /// refusal of a queue server).
    Throttled,
    /// The client's per-attempt timeout.
    Timeout,
    /// A non-retryable error (4xx).
    ClientError,
}

/// gRPC status codes (grpc/include/grpc/impl/codegen/status.h).
pub const GRPC_UNKNOWN: u32 = 2;
pub const GRPC_ABORTED: u32 = 10;
pub const GRPC_UNAVAILABLE: u32 = 14;

/// The gRPC status code a client sees for an HTTP status (grpc's
/// doc/http-grpc-status-mapping.md: 429, 502, 503, 504 are UNAVAILABLE,
/// others UNKNOWN); a conflict is ABORTED (what a gRPC server sends for
/// an optimistic write that lost), a lost connection UNAVAILABLE.
pub fn grpc_code(status: u16) -> u32 {
    match status {
        CONNECTION_LOST | 429 | 502 | 503 | 504 => GRPC_UNAVAILABLE,
        CONFLICT => GRPC_ABORTED,
        _ => GRPC_UNKNOWN,
    }
}

/// A circuit breaker's state.
#[derive(Clone, Debug, PartialEq)]
pub enum Circuit {
    Closed,
    Open {
        until: Time,
    },
    /// Probes still to let through, and the outcomes seen (failed, total).
    HalfOpen {
        permits: u32,
        failed: u32,
        seen: u32,
    },
}

/// The adaptive mode's client-side rate limiter: botocore's TokenBucket,
/// RateClocker and CubicCalculator.
#[derive(Clone, Debug)]
pub struct Limiter {
    enabled: bool,
    max_rate: f64,
    fill_rate: f64,
    capacity: f64,
    max_capacity: f64,
    last_refill: f64,
    measured: f64,
    count: f64,
    last_bucket: f64,
    last_max_rate: f64,
    k: f64,
    last_fail: f64,
}

const MIN_FILL_RATE: f64 = 0.5;
const SMOOTHING: f64 = 0.8;
const TIME_BUCKET: f64 = 0.5;
const BETA: f64 = 0.7;
const SCALE_CONSTANT: f64 = 0.4;
const MAX_RATE_ADJUST_SCALE: f64 = 2.0;

impl Limiter {
    fn new() -> Self {
        let mut l = Limiter {
            enabled: false,
            max_rate: 0.0,
            fill_rate: 0.0,
            capacity: 0.0,
            max_capacity: 0.0,
            last_refill: 0.0,
            measured: 0.0,
            count: 0.0,
            last_bucket: 0.0,
            last_max_rate: 0.0,
            k: 0.0,
            last_fail: 0.0,
        };
        l.set_max_rate(1.0, 0.0);
        l
    }

    fn refill(&mut self, now: f64) {
        let fill = (now - self.last_refill) * self.fill_rate;
        self.capacity = (self.capacity + fill).min(self.max_capacity);
        self.last_refill = now;
    }

    fn set_max_rate(&mut self, rate: f64, now: f64) {
        self.refill(now);
        self.max_rate = rate;
        self.fill_rate = rate.max(MIN_FILL_RATE);
        self.max_capacity = rate.max(1.0);
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// Takes a token for an attempt about to be sent, if there is one
    /// (botocore's TokenBucket.acquire): else the time until the bucket
    /// holds one at the current rate, after which the attempt tries again
    /// (or sooner, when a rate change wakes it).
    fn acquire(&mut self, now: f64) -> f64 {
        if !self.enabled {
            return 0.0;
        }
        self.refill(now);
        // Within rounding of a whole token: the wake was computed for it.
        if self.capacity >= 1.0 - 1e-9 {
            self.capacity = (self.capacity - 1.0).max(0.0);
            0.0
        } else {
            (1.0 - self.capacity) / self.fill_rate
        }
    }

    /// A response arrived (`throttled`: a throttling error).
    fn response(&mut self, now: f64, throttled: bool) {
        let bucket = (now / TIME_BUCKET).floor() * TIME_BUCKET;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.measured = current * SMOOTHING + self.measured * (1.0 - SMOOTHING);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        let new_rate = if throttled {
            let rate = if self.enabled {
                self.measured.min(self.max_rate)
            } else {
                self.measured
            };
            self.last_max_rate = rate;
            self.k = (rate * (1.0 - BETA) / SCALE_CONSTANT).cbrt();
            self.last_fail = now;
            self.enabled = true;
            rate * BETA
        } else {
            SCALE_CONSTANT * (now - self.last_fail - self.k).powi(3) + self.last_max_rate
        };
        self.set_max_rate(new_rate.min(MAX_RATE_ADJUST_SCALE * self.measured), now);
    }
}

/// The state of one stack scope (a client, or the whole group).
#[derive(Clone, Debug)]
pub enum StackState {
    /// Token count in thousandths.
    Grpc { tokens: i64 },
    Aws {
        quota: u32,
        limiter: Option<Box<Limiter>>,
        /// Attempts waiting for a token, in the order they began to wait
        /// (the condition's waiters): (call, ticket); entries whose call
        /// has since woken are stale.
        waiters: VecDeque<(u32, u64)>,
    },
    /// Deposits (+) and withdrawals (-) still inside the ttl, and their sum.
    Finagle {
        ledger: VecDeque<(Time, i64)>,
        sum: i64,
    },
    /// Attempts in flight (the budget's active requests), and the retries
    /// held from the decision to retry until that retry's outcome (in
    /// backoff or in flight).
    Envoy { active: u64, retries: u64 },
    Breaker {
        circuit: Circuit,
        /// Outcomes in the window: (time, failed), and the failures among them.
        window: VecDeque<(Time, bool)>,
        failed: u32,
    },
}

/// Finagle's scale: a deposit is worth 1000, a retry 1000 / percent_can_retry.
const FINAGLE_SCALE: f64 = 1000.0;

fn finagle_amounts(percent: f64) -> (i64, i64) {
    if percent == 0.0 {
        (0, 1)
    } else {
        (FINAGLE_SCALE as i64, (FINAGLE_SCALE / percent) as i64)
    }
}

impl Stack {
    /// The stack's kind as written.
    pub fn name(&self) -> &'static str {
        match self.kind {
            StackKind::Grpc { .. } => "grpc",
            StackKind::Aws {
                adaptive: false, ..
            } => "aws-standard",
            StackKind::Aws { adaptive: true, .. } => "aws-adaptive",
            StackKind::Finagle { .. } => "finagle",
            StackKind::Envoy { .. } => "envoy",
            StackKind::Polly { .. } => "polly-breaker",
            StackKind::Resilience4j { .. } => "resilience4j-breaker",
        }
    }

    /// How the library classifies a failed reply with HTTP `status` (a
    /// refusal, an error reply, a lost connection, a conflict):
    /// `ClientError` where it does not retry it.
    pub fn classify(&self, status: u16, refusal: bool) -> Failure {
        match self.kind {
            StackKind::Grpc { retryable, .. } => {
                if retryable & (1 << grpc_code(status)) != 0 {
                    Failure::Error
                } else {
                    Failure::ClientError
                }
            }
            // botocore: 500, 502, 503, 504 and connection errors are
            // transient; 1.44 takes a 429 whose error code is not modeled
            // as throttling, 1.43 retries a 429 only by its error code
            // (none here). A conflict is modeled as a transient error.
            StackKind::Aws { v1_43, .. } => match status {
                429 if v1_43 => Failure::ClientError,
                429 => Failure::Throttled,
                CONNECTION_LOST | CONFLICT | 500 | 502 | 503 | 504 => Failure::Error,
                _ => Failure::ClientError,
            },
            // The others retry what their users tell them to; a refusal is
            // told apart only for the record.
            _ if refusal => Failure::Throttled,
            _ => Failure::Error,
        }
    }

    /// The wait after a reply that carried the server's Retry-After (None:
    /// it carried none): gRPC's pushback (grpc-retry-pushback-ms, gRFC A6)
    /// sets it, botocore 1.44 raises the draw to it (at most 5 s above the
    /// draw), botocore 1.43 ignores it, the others take it as a floor.
    pub fn retry_after(&self, drawn: Time, retry_after: Option<Time>) -> Time {
        let floor = retry_after.unwrap_or(0);
        match self.kind {
            StackKind::Grpc { .. } => retry_after.unwrap_or(drawn),
            StackKind::Aws { v1_43: true, .. } => drawn,
            StackKind::Aws { .. } => drawn.max(floor.min(drawn.saturating_add(5_000_000_000_000))),
            _ => drawn.max(floor),
        }
    }

    /// Whether the group's `timeout` is the call's deadline (gRPC: the
    /// call fails with DEADLINE_EXCEEDED, never retried) rather than each
    /// attempt's.
    pub fn deadline(&self) -> bool {
        matches!(self.kind, StackKind::Grpc { .. })
    }

    /// The wait before retry n (n = 1 at the first), from a uniform draw `u`
    /// in [0, 1).
    pub fn wait(&self, n: u32, failure: Option<Failure>, u: f64) -> Time {
        let n = n.max(1);
        let full_jitter = |limit: f64| (u * limit).round() as Time;
        match self.kind {
            StackKind::Grpc {
                initial,
                max,
                multiplier,
                a6_jitter,
                ..
            } => {
                let limit = (initial as f64 * multiplier.powi(n as i32 - 1)).min(max as f64);
                if a6_jitter {
                    full_jitter(limit)
                } else {
                    // grpcio's BackOff: jitter 0.2 around the limit.
                    (limit * (0.8 + 0.4 * u)).round() as Time
                }
            }
            StackKind::Aws {
                base,
                throttling_base,
                cap,
                ..
            } => {
                let b = if failure == Some(Failure::Throttled) {
                    throttling_base
                } else {
                    base
                };
                full_jitter((b as f64 * 2f64.powi(n as i32 - 1)).min(cap as f64))
            }
            StackKind::Envoy { base, max, .. } => {
                full_jitter((base as f64 * 2f64.powi(n as i32 - 1)).min(max as f64))
            }
            StackKind::Finagle { backoff, .. } => backoff,
            StackKind::Polly { delay, .. } => delay,
            StackKind::Resilience4j { wait_duration, .. } => wait_duration,
        }
    }
}

impl StackState {
    pub fn new(stack: &Stack) -> Self {
        match stack.kind {
            StackKind::Grpc { max_tokens, .. } => StackState::Grpc { tokens: max_tokens },
            StackKind::Aws {
                quota, adaptive, ..
            } => StackState::Aws {
                quota,
                limiter: adaptive.then(|| Box::new(Limiter::new())),
                waiters: VecDeque::new(),
            },
            StackKind::Finagle { .. } => StackState::Finagle {
                ledger: VecDeque::new(),
                sum: 0,
            },
            StackKind::Envoy { .. } => StackState::Envoy {
                active: 0,
                retries: 0,
            },
            StackKind::Polly { .. } | StackKind::Resilience4j { .. } => StackState::Breaker {
                circuit: Circuit::Closed,
                window: VecDeque::new(),
                failed: 0,
            },
        }
    }

    /// Whether a breaker lets an attempt through at `now` (an open one
    /// fails the call at once; after the break it lets its probes through).
    pub fn permit(&mut self, stack: &Stack, now: Time) -> bool {
        let StackState::Breaker { circuit, .. } = self else {
            return true;
        };
        if let Circuit::Open { until } = *circuit {
            if now < until {
                return false;
            }
            let permits = match stack.kind {
                StackKind::Resilience4j {
                    permitted_calls_in_half_open_state,
                    ..
                } => permitted_calls_in_half_open_state,
                _ => 1,
            };
            *circuit = Circuit::HalfOpen {
                permits,
                failed: 0,
                seen: 0,
            };
        }
        match circuit {
            Circuit::Closed => true,
            Circuit::HalfOpen { permits, .. } if *permits > 0 => {
                *permits -= 1;
                true
            }
            _ => false,
        }
    }

    /// The wait before an attempt may try again for a token (adaptive
    /// mode's rate limiter), 0 when it has one; a waiting attempt joins
    /// the waiters as (call, ticket).
    pub fn pace(&mut self, now: Time, call: u32, ticket: u64) -> Time {
        match self {
            StackState::Aws {
                limiter: Some(l),
                waiters,
                ..
            } => {
                let hold = (l.acquire(now as f64 / PS) * PS).ceil() as Time;
                if hold > 0 {
                    waiters.push_back((call, ticket));
                }
                hold
            }
            _ => 0,
        }
    }

    /// After a rate change (every response, in adaptive mode), the waiter
    /// the condition's notify wakes: the first that still waits, as
    /// `live(call, ticket)` says.
    pub fn notify(&mut self, mut live: impl FnMut(u32, u64) -> bool) -> Option<(u32, u64)> {
        let StackState::Aws {
            limiter: Some(_),
            waiters,
            ..
        } = self
        else {
            return None;
        };
        while let Some((call, ticket)) = waiters.pop_front() {
            if live(call, ticket) {
                return Some((call, ticket));
            }
        }
        None
    }

    /// An attempt leaves (`retry`: not the call's first).
    pub fn sent(&mut self, stack: &Stack, now: Time, retry: bool) {
        match self {
            StackState::Envoy { active, .. } => *active += 1,
            StackState::Finagle { ledger, sum } if !retry => {
                let StackKind::Finagle {
                    percent_can_retry, ..
                } = stack.kind
                else {
                    return;
                };
                let (deposit, _) = finagle_amounts(percent_can_retry);
                ledger.push_back((now, deposit));
                *sum += deposit;
            }
            _ => {}
        }
    }

    /// An attempt's outcome reached its client (a reply, or its timeout).
    /// `failure`: None on success. `retried`/`paid`: for a success, whether
    /// the call retried and the quota its last retry took.
    pub fn outcome(
        &mut self,
        stack: &Stack,
        now: Time,
        retry: bool,
        failure: Option<Failure>,
        paid: u32,
    ) {
        match (self, stack.kind) {
            (
                StackState::Grpc { tokens },
                StackKind::Grpc {
                    max_tokens,
                    token_ratio,
                    ..
                },
            ) => match failure {
                None => *tokens = (*tokens + token_ratio).min(max_tokens),
                // A status it does not retry, or the call's deadline
                // (DEADLINE_EXCEEDED), is not a failure to the throttle.
                Some(Failure::ClientError | Failure::Timeout) => {}
                Some(_) => *tokens = (*tokens - 1000).max(0),
            },
            (
                StackState::Aws { quota, limiter, .. },
                StackKind::Aws {
                    quota: max,
                    no_retry_increment,
                    ..
                },
            ) => {
                if failure.is_none() {
                    let back = if paid == 0 { no_retry_increment } else { paid };
                    *quota = (*quota + back).min(max);
                }
                if let Some(l) = limiter {
                    l.response(now as f64 / PS, failure == Some(Failure::Throttled));
                }
            }
            (StackState::Envoy { active, retries }, _) => {
                *active -= 1;
                *retries -= u64::from(retry);
            }
            (
                StackState::Breaker {
                    circuit,
                    window,
                    failed,
                },
                kind,
            ) => record(circuit, window, failed, kind, now, failure.is_some()),
            _ => {}
        }
    }

    /// An attempt of a hedged call given up without an outcome (a loser
    /// cancelled or left to run, `in_flight`), or a retry waiting out its
    /// backoff when its call is decided: Envoy's budget no longer counts
    /// the request in flight, nor holds the retry.
    pub fn abandon(&mut self, _stack: &Stack, in_flight: bool, retry: bool) {
        if let StackState::Envoy { active, retries } = self {
            *active -= u64::from(in_flight);
            *retries -= u64::from(retry);
        }
    }

    /// Whether the gate lets a retry go after a failure, taking what it
    /// costs; for the AWS quota, Some(cost taken).
    pub fn retry(&mut self, stack: &Stack, now: Time, failure: Failure) -> Option<u32> {
        match (self, stack.kind) {
            (StackState::Grpc { tokens }, StackKind::Grpc { max_tokens, .. }) => {
                (*tokens * 2 > max_tokens).then_some(0)
            }
            (
                StackState::Aws { quota, .. },
                StackKind::Aws {
                    retry_cost,
                    throttling_retry_cost,
                    timeout_cost,
                    ..
                },
            ) => {
                let cost = match failure {
                    Failure::Timeout => timeout_cost,
                    Failure::Throttled => throttling_retry_cost,
                    _ => retry_cost,
                };
                (*quota >= cost).then(|| {
                    *quota -= cost;
                    cost
                })
            }
            (
                StackState::Finagle { ledger, sum },
                StackKind::Finagle {
                    ttl,
                    min_retries_per_sec,
                    percent_can_retry,
                    ..
                },
            ) => {
                while let Some(&(t, a)) = ledger.front() {
                    if t.saturating_add(ttl) > now {
                        break;
                    }
                    ledger.pop_front();
                    *sum -= a;
                }
                let (_, withdrawal) = finagle_amounts(percent_can_retry);
                let reserve =
                    i64::from(min_retries_per_sec) * (ttl / 1_000_000_000_000) as i64 * withdrawal;
                (*sum + reserve >= withdrawal).then(|| {
                    ledger.push_back((now, -withdrawal));
                    *sum -= withdrawal;
                    0
                })
            }
            (
                StackState::Envoy { active, retries },
                StackKind::Envoy {
                    budget_percent,
                    min_retry_concurrency,
                    ..
                },
            ) => {
                let limit = (u64::from(min_retry_concurrency))
                    .max((budget_percent / 100.0 * *active as f64) as u64);
                (*retries < limit).then(|| {
                    *retries += 1;
                    0
                })
            }
            _ => Some(0),
        }
    }
}

/// Records an attempt's outcome in a breaker.
fn record(
    circuit: &mut Circuit,
    window: &mut VecDeque<(Time, bool)>,
    failed: &mut u32,
    kind: StackKind,
    now: Time,
    failure: bool,
) {
    match circuit {
        Circuit::Open { .. } => {}
        Circuit::HalfOpen {
            failed: f, seen, ..
        } => {
            *seen += 1;
            *f += u32::from(failure);
            let (open_for, decided, opens) = match kind {
                // Polly: the probe's outcome decides.
                StackKind::Polly { break_duration, .. } => (break_duration, true, failure),
                // resilience4j: once the permitted calls are in, their
                // failure rate against the threshold.
                StackKind::Resilience4j {
                    failure_rate_threshold,
                    permitted_calls_in_half_open_state: n,
                    wait_duration_in_open_state,
                    ..
                } => (
                    wait_duration_in_open_state,
                    *seen >= n,
                    f64::from(*f) * 100.0 >= failure_rate_threshold * f64::from(*seen),
                ),
                _ => return,
            };
            if decided {
                *circuit = if opens {
                    Circuit::Open {
                        until: now.saturating_add(open_for),
                    }
                } else {
                    Circuit::Closed
                };
                window.clear();
                *failed = 0;
            }
        }
        Circuit::Closed => {
            window.push_back((now, failure));
            *failed += u32::from(failure);
            let (throughput_ok, ratio_ok, open_for) = match kind {
                StackKind::Polly {
                    failure_ratio,
                    sampling_duration,
                    minimum_throughput,
                    break_duration,
                    ..
                } => {
                    while let Some(&(t, f)) = window.front() {
                        if t.saturating_add(sampling_duration) > now {
                            break;
                        }
                        window.pop_front();
                        *failed -= u32::from(f);
                    }
                    let n = window.len() as f64;
                    (
                        // Polly decides when a failure is handled.
                        failure && window.len() as u32 >= minimum_throughput,
                        f64::from(*failed) >= failure_ratio * n,
                        break_duration,
                    )
                }
                StackKind::Resilience4j {
                    failure_rate_threshold,
                    sliding_window_size,
                    minimum_number_of_calls,
                    wait_duration_in_open_state,
                    ..
                } => {
                    if window.len() as u32 > sliding_window_size {
                        if let Some((_, f)) = window.pop_front() {
                            *failed -= u32::from(f);
                        }
                    }
                    let n = window.len() as f64;
                    (
                        window.len() as u32 >= minimum_number_of_calls,
                        f64::from(*failed) * 100.0 >= failure_rate_threshold * n,
                        wait_duration_in_open_state,
                    )
                }
                _ => return,
            };
            if throughput_ok && ratio_ok {
                *circuit = Circuit::Open {
                    until: now.saturating_add(open_for),
                };
                window.clear();
                *failed = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e9;

    fn grpc(a6_jitter: bool) -> Stack {
        Stack {
            kind: StackKind::Grpc {
                max_tokens: 10_000,
                token_ratio: 100,
                initial: 100_000_000_000,
                max: 1_000_000_000_000,
                multiplier: 2.0,
                a6_jitter,
                retryable: 1 << GRPC_UNAVAILABLE,
            },
            shared: true,
            hedge: None,
        }
    }

    /// grpcio's BackOff: min(initial * multiplier^(n-1), max) * U(0.8, 1.2),
    /// so the cap can be passed by a fifth; A6's text: U(0, that).
    #[test]
    fn grpc_waits_jitter_a_fifth_around_the_backoff() {
        let st = grpc(false);
        for (n, ms) in [(1, 100.0), (2, 200.0), (3, 400.0), (4, 800.0), (5, 1000.0)] {
            assert_eq!(st.wait(n, None, 0.0) as f64, 0.8 * ms * MS, "n {n}");
            assert_eq!(st.wait(n, None, 0.5) as f64, ms * MS, "n {n}");
            assert_eq!(st.wait(n, None, 1.0) as f64, 1.2 * ms * MS, "n {n}");
        }
        let a6 = grpc(true);
        assert_eq!(a6.wait(1, None, 0.0), 0);
        assert_eq!(a6.wait(1, None, 0.5) as f64, 50.0 * MS);
        assert_eq!(a6.wait(5, None, 1.0) as f64, 1000.0 * MS);
    }
}
