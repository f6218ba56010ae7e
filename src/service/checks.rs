//! What a valid service scenario will do that its author may not mean, said
//! before it runs: clients that retry with no wait and no limit against a
//! server that can fail every attempt, which then retry as fast as the
//! network carries them (and, with no network delay, without the clock
//! advancing).

use super::config::{Calls, Delay, Group, Scenario, ServerKind};
use super::stacks::HedgeKind;
use crate::advice::{OfferedLoad, Share, Warning};
use crate::backoff::BackoffSpec;
use crate::units::format_ps;

/// Whether every wait `spec` draws is zero, whatever the failure.
fn waits_nothing(spec: &BackoffSpec) -> bool {
    use BackoffSpec::*;
    match *spec {
        Constant { delay, .. } => delay == 0,
        Linear { base, .. } => base == 0,
        ExponentialNoJitter { base, cap, .. }
        | FullJitter { base, cap, .. }
        | EqualJitter { base, cap, .. }
        | ProportionalJitter { base, cap, .. } => base == 0 || cap == 0,
        _ => false,
    }
}

/// An amplification as `validate` writes it: whole, or to two decimals.
pub fn amplification_figure(a: f64) -> String {
    if (a - a.round()).abs() < 1e-9 {
        format!("{}", a.round())
    } else {
        format!("{a:.2}")
    }
}

/// Attempts per top-level call above which `validate` warns of a server.
pub const AMPLIFICATION_WARN: f64 = 10.0;

impl Scenario {
    /// The warnings about this scenario, in the order of its groups, then
    /// the server's.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out: Vec<Warning> = self
            .groups
            .iter()
            .enumerate()
            .filter_map(|(gi, g)| self.unbounded_retries(gi, g))
            .collect();
        out.extend(
            self.groups
                .iter()
                .enumerate()
                .filter_map(|(gi, g)| self.one_off_gates(gi, g)),
        );
        out.extend(
            self.groups
                .iter()
                .enumerate()
                .filter_map(|(gi, g)| self.idle_hedges(gi, g)),
        );
        out.extend(self.overload());
        out.extend(self.amplification());
        out
    }

    /// Hedging that cannot act: gRPC hedges due at or after the call's
    /// deadline, Envoy's hedge with no retry to send or with a `cancel`
    /// its hedged attempts never meet.
    fn idle_hedges(&self, gi: usize, g: &Group) -> Option<Warning> {
        let h = g.stack.and_then(|s| s.hedge)?;
        let attempts = g.max_retries.map_or(u32::MAX, |m| m.saturating_add(1));
        let warn = |key: &str, message: String| Warning {
            kind: "idle-hedging",
            key: format!("clients.{gi}.{key}"),
            message,
        };
        match h.kind {
            HedgeKind::Grpc { delay } => {
                let deadline = g.timeout?;
                // Hedge k goes k x delay after the first attempt (sooner
                // only after a non-fatal status).
                let before = match deadline.saturating_sub(1).checked_div(delay) {
                    None => attempts,
                    Some(k) => k.min(u64::from(attempts - 1)) as u32 + 1,
                };
                if before >= attempts {
                    return None;
                }
                Some(warn(
                    "stack.hedging.delay",
                    format!(
                        "group \"{}\" hedges every {} but its calls' deadline (`timeout`) is {}: \
                         only {before} of its {attempts} attempts can go before the deadline \
                         (more only after a non-fatal status); give a shorter delay or a longer timeout",
                        g.name,
                        format_ps(delay),
                        format_ps(deadline)
                    ),
                ))
            }
            HedgeKind::PerTryTimeout if attempts <= 1 => Some(warn(
                "stack.hedge_on_per_try_timeout",
                format!(
                    "group \"{}\" hedges on per-try timeout with no retry to send \
                     (max_attempts = 1, num_retries = 0): no hedge ever goes; give num_retries = 1 or more",
                    g.name
                ),
            )),
            HedgeKind::PerTryTimeout if g.cancel => Some(warn(
                "cancel",
                format!(
                    "group \"{}\" hedges on per-try timeout, which leaves the timed-out attempt \
                     running: `cancel` never acts; `cancel_losers` in the stack decides whether the \
                     attempts that lose are cancelled",
                    g.name
                ),
            )),
            HedgeKind::PerTryTimeout => None,
        }
    }

    /// Servers that may see more than [`AMPLIFICATION_WARN`] attempts per
    /// top-level call, by the attempt limits along their path.
    fn amplification(&self) -> Vec<Warning> {
        if self.servers.len() < 2 {
            return Vec::new();
        }
        self.worst_amplification()
            .into_iter()
            .enumerate()
            .filter(|(_, a)| *a > AMPLIFICATION_WARN)
            .map(|(k, a)| Warning {
                kind: "amplification",
                key: format!("servers.{k}"),
                message: format!(
                    "server \"{}\" may see up to {} attempts per top-level call (retries multiply \
                     along the path: the product of each layer's attempt limit, max_retries + 1 \
                     or a stack's max_attempts, or 1 + deposit / cost of its retry budget); \
                     retry at one layer only, or give the layers a `budget`",
                    self.servers[k].name,
                    if a.is_finite() {
                        amplification_figure(a)
                    } else {
                        "unboundedly many".into()
                    }
                ),
            })
            .collect()
    }

    /// The first server's capacity, if a queue server.
    pub fn capacity(&self) -> Option<f64> {
        self.capacity_of(0)
    }

    /// Server `k`'s capacity in attempts per second, if a queue server:
    /// workers over the mean service time.
    pub fn capacity_of(&self, k: usize) -> Option<f64> {
        match &self.servers[k].kind {
            ServerKind::Queue {
                service, workers, ..
            } => Some(f64::from(*workers) * 1e12 / service.mean_ps()),
            _ => None,
        }
    }

    /// First attempts per second offered to each server at the groups'
    /// base rates, before any retry: its clients' calls, and for a server
    /// that others call, the attempts they serve (each makes one call;
    /// a queue server serves at most its capacity, a flaky one its
    /// successful share).
    pub fn offered_rates(&self) -> Vec<f64> {
        let n = self.servers.len();
        let mut rate = vec![0.0; n];
        for g in self.client_groups() {
            if let Some((base, _)) = self.rates(g) {
                rate[g.server] += base;
            }
        }
        let target = |s: usize| self.servers[s].downstream.map(|d| self.groups[d].server);
        // Callers before the servers they call (servers form no ring).
        let mut callers = vec![0usize; n];
        for s in 0..n {
            if let Some(t) = target(s) {
                callers[t] += 1;
            }
        }
        let mut ready: Vec<usize> = (0..n).filter(|&s| callers[s] == 0).collect();
        while let Some(s) = ready.pop() {
            let Some(t) = target(s) else { continue };
            rate[t] += match &self.servers[s].kind {
                ServerKind::Queue { .. } => {
                    rate[s].min(self.capacity_of(s).unwrap_or(f64::INFINITY))
                }
                ServerKind::Flaky {
                    failure,
                    client_error,
                } => rate[s] * (1.0 - failure - client_error).max(0.0),
                ServerKind::Occ => rate[s],
            };
            callers[t] -= 1;
            if callers[t] == 0 {
                ready.push(t);
            }
        }
        rate
    }

    /// Each group's first attempts per second at its base rate and at the
    /// peak of its profile (None for groups that call at one instant).
    fn rates(&self, g: &Group) -> Option<(f64, f64)> {
        match g.calls {
            Calls::Poisson { rate, .. } => {
                let n = g.count as f64;
                Some((rate * n, g.peak_rate(rate) * n))
            }
            Calls::Fresh { rate } => Some((rate, g.peak_rate(rate))),
            _ => None,
        }
    }

    /// The offered load of first attempts against the queue server's
    /// capacity, per group, as information (one server; with several,
    /// `validate` gives each server's utilisation instead).
    pub fn offered_load(&self) -> Option<OfferedLoad> {
        if self.servers.len() > 1 {
            return None;
        }
        let cap = self.capacity()?;
        // Groups that call at one instant have no rate to compare.
        let groups: Vec<(String, Share)> = self
            .groups
            .iter()
            .filter_map(|g| {
                let (base, _) = self.rates(g)?;
                Some((g.name.clone(), Share::Fraction(base / cap)))
            })
            .collect();
        if groups.is_empty() {
            return None;
        }
        Some(OfferedLoad {
            of: "the server's capacity (workers x service rate; first attempts only)",
            groups,
        })
    }

    /// Each queue server's first attempts alone past its capacity at the
    /// base rates (its callers' included): utilisation ρ = λ E[S] /
    /// workers above 1 (a profile's stretch above it is a disturbance the
    /// scenario asks for, and is not warned of).
    fn overload(&self) -> Vec<Warning> {
        let rates = self.offered_rates();
        let fig = |x: f64| {
            if x >= 100.0 {
                format!("{x:.0}")
            } else {
                format!("{x:.3}")
            }
        };
        let mut out = Vec::new();
        for (k, &base) in rates.iter().enumerate() {
            let Some(cap) = self.capacity_of(k) else {
                continue;
            };
            let rho = base / cap;
            if rho <= 1.0 {
                continue;
            }
            let (key, who, what) = if self.servers.len() == 1 {
                (
                    "server".to_string(),
                    "the server".to_string(),
                    "first attempts",
                )
            } else {
                (
                    format!("servers.{k}"),
                    format!("server \"{}\"", self.servers[k].name),
                    "first attempts (its clients' and its callers' downstream calls)",
                )
            };
            out.push(Warning {
                kind: "overload",
                key,
                message: format!(
                    "{who} serves at most {} attempts/s (workers x 1 / mean service time) \
                     and is offered {}/s of {what}, utilisation {rho:.3}, before any retry: \
                     its queue grows without end; give more `workers` or a faster `service`, \
                     or fewer calls",
                    fig(cap),
                    fig(base)
                ),
            });
        }
        out
    }

    /// A per-client budget or breaker on `fresh` clients, each of which makes
    /// one call: it never sees a second call, so it only limits that call's
    /// retries.
    fn one_off_gates(&self, gi: usize, g: &Group) -> Option<Warning> {
        if !matches!(g.calls, Calls::Fresh { .. }) {
            return None;
        }
        let (key, what) = match (g.budget, g.breaker) {
            (_, Some(br)) if !br.shared() => ("breaker", "breaker"),
            (Some(b), _) if !b.shared => ("budget", "retry budget"),
            _ => return None,
        };
        Some(Warning {
            kind: "one-off-gate",
            key: format!("clients.{gi}.{key}"),
            message: format!(
                "group \"{}\" has a per-client {what}, but its calls are `fresh`: each comes \
                 from a new client, so the {what} sees one call and acts only as a limit on \
                 its retries; give it scope = \"shared\" to gate the group as a whole",
                g.name
            ),
        })
    }

    /// A group whose retries wait nothing and have no limit (no
    /// `max_retries`, budget, breaker or stack).
    fn unbounded_retries(&self, gi: usize, g: &Group) -> Option<Warning> {
        let unlimited = g.max_retries.is_none()
            && g.budget.is_none()
            && g.breaker.is_none()
            && g.stack.is_none();
        if !unlimited || !waits_nothing(&g.backoff) {
            return None;
        }
        // Whom a call may keep failing against, at once and without end (an
        // OCC race always ends: every round of writes has a winner; a queue
        // without a limit, a crash or a gate refuses nothing).
        let against = match (&self.servers[g.server].kind, g.calls) {
            (_, Calls::Poll { .. }) => "polling a job not yet ready, each call polls",
            (ServerKind::Flaky { failure, .. }, _) if *failure >= 1.0 => {
                "against this server, which fails every attempt (`server.failure` = 1), each call retries"
            }
            (
                ServerKind::Queue {
                    queue_limit,
                    crash_above,
                    accept,
                    ..
                },
                _,
            ) if queue_limit.is_some() || crash_above.is_some() || accept.is_some() => {
                "against a queue server that refuses every attempt while it is full, down or at its \
                 accept gate, each call retries"
            }
            _ => return None,
        };
        // Against a server that fails every attempt, a call retries once per
        // round trip: two network legs.
        let round_trip = 2.0 * self.network.mean_ps();
        let pace = if self.network == Delay::Fixed(0) || round_trip < 1.0 {
            "at one instant, without the clock advancing (no network delay): such a run \
             stops with an error"
                .to_string()
        } else {
            let per_call = self.duration as f64 / round_trip;
            format!(
                "every {} (a network round trip), up to {per_call:.3e} attempts per call over the {} simulated",
                format_ps(round_trip.round() as u64),
                format_ps(self.duration)
            )
        };
        Some(Warning {
            kind: "unbounded-retries",
            key: format!("{}.backoff", self.group_path(gi)),
            message: format!(
                "group \"{}\" retries with no wait and no limit (backoff `{}`, no `max_retries`): \
                 {against} {pace}; \
                 give a wait, e.g. backoff = {{ kind = \"full-jitter\", base = \"100ms\", cap = \"10s\" }}, \
                 or a limit, e.g. max_retries = 3",
                g.name, g.policy
            ),
        })
    }
}
