//! What a valid service scenario will do that its author may not mean, said
//! before it runs: clients that retry with no wait and no limit against a
//! server that can fail every attempt, which then retry as fast as the
//! network carries them (and, with no network delay, without the clock
//! advancing).

use super::config::{Calls, Delay, Group, Scenario, ServerKind};
use crate::advice::Warning;
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

impl Scenario {
    /// The warnings about this scenario, in the order of its groups.
    pub fn warnings(&self) -> Vec<Warning> {
        self.groups
            .iter()
            .enumerate()
            .filter_map(|(gi, g)| self.unbounded_retries(gi, g))
            .collect()
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
        let against = match (&self.server.kind, g.calls) {
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
            key: format!("clients.{gi}.backoff"),
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
