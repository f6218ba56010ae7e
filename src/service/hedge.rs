//! Hedging: more attempts of a call sent while earlier ones are still
//! outstanding; the first success wins and the others are cancelled (or
//! left to run). gRPC's hedging policy (gRFC A6: an attempt every `delay`
//! until one succeeds, up to `max_attempts`, the next at once after a
//! non-fatal status, none while the retry throttle is at or below half,
//! the call over at a fatal status) and Envoy's hedge on per-try timeout
//! (a retry sent when an attempt's per-try timeout passes, the attempt
//! left running).

use super::stacks::{Failure, Hedge, HedgeKind, StackKind, StackState};
use super::{Ev, Outcome, ServerKind, Sim};
use crate::engine::Time;

/// An attempt of a hedged call still outstanding.
#[derive(Clone, Copy, Debug)]
pub(super) struct Live {
    seq: u64,
    /// Sent while another attempt of its call was outstanding.
    hedge: bool,
    /// Not the call's first attempt (Envoy's budget holds it as a retry).
    retry: bool,
    /// Its per-try timeout has passed (Envoy): it has been hedged already.
    soft: bool,
}

/// A hedged call's attempts.
#[derive(Clone, Debug, Default)]
pub(super) struct Attempts {
    live: Vec<Live>,
    /// No more hedges for this call (the throttle stopped them).
    frozen: bool,
    /// The ticket of the pending timer: the next hedge (gRPC), or a retry
    /// waiting out its backoff (Envoy), if `timer_set`.
    timer: u64,
    timer_set: bool,
}

impl Attempts {
    /// Whether attempt `seq` is outstanding.
    pub(super) fn live(&self, seq: u64) -> bool {
        self.live.iter().any(|l| l.seq == seq)
    }
}

impl Sim<'_> {
    /// The hedging of group `gi`'s stack, if any.
    pub(super) fn hedging(&self, gi: usize) -> Option<Hedge> {
        self.sc.groups[gi].stack.and_then(|s| s.hedge)
    }

    /// Whether call `call` is hedged (its group's stack hedges).
    pub(super) fn hedged(&self, call: u32) -> bool {
        match self.calls.get(call as usize) {
            Some(Some(c)) => self.hedging(c.group as usize).is_some(),
            _ => false,
        }
    }

    /// The gRPC throttle is at or below half its tokens: no hedge may go.
    fn throttled(&mut self, call: u32) -> bool {
        let (gi, client) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client)
        };
        let Some(st) = self.sc.groups[gi].stack else {
            return false;
        };
        match (st.kind, &*self.stack(gi, client)) {
            (StackKind::Grpc { max_tokens, .. }, StackState::Grpc { tokens }) => {
                *tokens * 2 <= max_tokens
            }
            _ => false,
        }
    }

    /// Attempt `seq` of a hedged call has just been sent: it is
    /// outstanding, and (gRPC) the next hedge is due `delay` later.
    pub(super) fn hedge_sent(&mut self, call: u32, seq: u64) {
        let gi = self.call_mut(call).group as usize;
        let Some(h) = self.hedging(gi) else { return };
        let limit = self.sc.groups[gi].max_retries.map_or(u32::MAX, |m| m + 1);
        let c = self.call_mut(call);
        let (sent, counted) = (c.sent, c.counted);
        let a = c.hedge.get_or_insert_with(Default::default);
        let hedge = !a.live.is_empty();
        a.live.push(Live {
            seq,
            hedge,
            retry: sent > 1,
            soft: false,
        });
        if hedge && counted {
            self.counts[gi].hedges += 1;
        }
        if let HedgeKind::Grpc { delay } = h.kind {
            if sent < limit && !self.attempts(call).frozen {
                self.hedge_timer(call, self.now.saturating_add(delay));
            }
        }
    }

    fn attempts(&mut self, call: u32) -> &mut Attempts {
        self.call_mut(call)
            .hedge
            .get_or_insert_with(Default::default)
    }

    /// Sets the call's one timer (replacing any pending one) to fire at `at`.
    fn hedge_timer(&mut self, call: u32, at: Time) {
        let ticket = self.next_seq;
        self.next_seq += 1;
        let a = self.attempts(call);
        a.timer = ticket;
        a.timer_set = true;
        self.q.push(at, Ev::Hedge { call, ticket });
    }

    /// A hedged call's timer fires: the next hedge (gRPC) or a retry after
    /// its backoff (Envoy) goes, if still wanted.
    pub(super) fn hedge_fire(&mut self, call: u32, ticket: u64) {
        let due = matches!(self.calls.get(call as usize),
            Some(Some(c)) if c.hedge.as_ref().is_some_and(|a| a.timer_set && a.timer == ticket));
        if !due {
            return;
        }
        self.attempts(call).timer_set = false;
        let gi = self.call_mut(call).group as usize;
        let Some(h) = self.hedging(gi) else { return };
        if let HedgeKind::Grpc { .. } = h.kind {
            // A6: hedged RPCs go only while the throttle is above half.
            if self.attempts(call).frozen || self.throttled(call) {
                self.attempts(call).frozen = true;
                return self.hedges_over(call);
            }
        }
        self.send(call);
    }

    /// No hedge is pending: the call fails once no attempt is outstanding.
    fn hedges_over(&mut self, call: u32) {
        let a = self.attempts(call);
        if a.live.is_empty() && !a.timer_set {
            self.call_mut(call).waiting = false;
            self.decide(call, "hedges over", None);
            self.end_call(call);
        }
    }

    /// Cancels (or leaves to run) every outstanding attempt of a call that
    /// is decided, and lets go of its pending timer.
    fn hedge_settle(&mut self, call: u32) {
        let (gi, client) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client)
        };
        let cancel = self.hedging(gi).is_some_and(|h| h.cancel_losers);
        let a = self.attempts(call);
        let live = std::mem::take(&mut a.live);
        let held = std::mem::replace(&mut a.timer_set, false);
        if let Some(st) = self.sc.groups[gi].stack {
            // Envoy's budget: the losers leave the requests in flight, a
            // retry waiting out its backoff is no longer held.
            let state = self.stack(gi, client);
            for l in &live {
                state.abandon(&st, true, l.retry);
            }
            if held {
                state.abandon(&st, false, true);
            }
        }
        for l in live {
            let now = self.now;
            self.note(l.seq, |r| {
                if r.outcome.is_empty() {
                    r.outcome = if cancel { "cancelled" } else { "abandoned" };
                    r.ends = Some(now);
                }
            });
            if cancel {
                self.cancel_at_server(gi, l.seq);
            }
        }
        self.call_mut(call).waiting = false;
    }

    /// A reply to attempt `seq` of a hedged call: the first success wins,
    /// a fatal failure ends the call, a non-fatal one lets the next attempt
    /// go (gRPC: at once; Envoy: a retry, unless this attempt was hedged
    /// already).
    pub(super) fn hedge_reply(&mut self, call: u32, seq: u64, outcome: Outcome) {
        let Some(Some(c)) = self.calls.get_mut(call as usize) else {
            return;
        };
        let Some(a) = c.hedge.as_mut() else { return };
        let Some(k) = a.live.iter().position(|l| l.seq == seq) else {
            return;
        };
        let l = a.live.remove(k);
        let (gi, client, paid, counted) = (c.group as usize, c.client, c.paid, c.counted);
        let now = self.now;
        self.note(seq, |r| r.ends = Some(now));
        let h = self.hedging(gi).expect("a hedged call's group hedges");
        let st = self.sc.groups[gi].stack.expect("hedging is a stack's");
        let target = &self.sc.servers[self.sc.groups[gi].server];
        let queue = matches!(target.kind, ServerKind::Queue { .. });
        let pushback = target.retry_after.is_some();
        let (failure, retry_after) = match outcome {
            Outcome::Ok => (None, false),
            Outcome::NotReady => (Some(Failure::Error), false),
            Outcome::Fail {
                retry_after,
                status,
            } => (
                Some(self.classify(gi, status, retry_after && queue)),
                retry_after,
            ),
            Outcome::ClientError => (Some(Failure::ClientError), false),
        };
        self.stack(gi, client)
            .outcome(&st, now, l.retry, failure, paid);
        let Some(f) = failure else {
            if l.hedge && counted {
                self.counts[gi].hedge_wins += 1;
            }
            self.call_mut(call).seq = seq;
            self.hedge_settle(call);
            return self.succeeded(call);
        };
        self.tick(gi, |b| b.failures += 1);
        if f == Failure::ClientError {
            // A fatal status (or one Envoy's retry_on does not list) ends
            // the call at once.
            self.call_mut(call).seq = seq;
            self.hedge_settle(call);
            self.decide(call, "fatal", None);
            return self.end_call(call);
        }
        match h.kind {
            HedgeKind::Grpc { .. } => {
                let limit = self.sc.groups[gi].max_retries.map_or(u32::MAX, |m| m + 1);
                if self.throttled(call) {
                    let a = self.attempts(call);
                    a.frozen = true;
                    a.timer_set = false;
                }
                let more = self.call_mut(call).sent < limit && !self.attempts(call).frozen;
                if more {
                    // A6: the next hedge at once, or after the server's
                    // pushback (its Retry-After); later ones resume at
                    // `delay` after it.
                    let wait = if pushback && retry_after {
                        self.call_mut(call).retry_after
                    } else {
                        0
                    };
                    if wait == 0 {
                        self.attempts(call).timer_set = false;
                        self.send(call);
                    } else {
                        self.hedge_timer(call, now.saturating_add(wait));
                    }
                    return;
                }
                self.hedges_over(call)
            }
            HedgeKind::PerTryTimeout => {
                if !l.soft && !self.attempts(call).timer_set {
                    let ra = (pushback && retry_after).then(|| self.call_mut(call).retry_after);
                    if self.envoy_retry(call, f, ra) {
                        return;
                    }
                }
                // Discarded while other attempts or a retry may still
                // answer; else the call fails with it.
                self.hedges_over(call)
            }
        }
    }

    /// Envoy's retry decision for a hedged call after failure `f`: within
    /// the attempt limit and the budget, a retry goes after the backoff.
    fn envoy_retry(&mut self, call: u32, f: Failure, retry_after: Option<Time>) -> bool {
        let (gi, client, retries) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client, c.retries)
        };
        let g = &self.sc.groups[gi];
        if g.max_retries.is_some_and(|m| retries >= m) {
            return false;
        }
        let st = g.stack.expect("hedging is a stack's");
        let now = self.now;
        if self.stack(gi, client).retry(&st, now, f).is_none() {
            return false;
        }
        let c = self.call_mut(call);
        c.n = c.n.saturating_add(1);
        c.retries += 1;
        let wait = self.wait(call, retry_after, Some(f));
        self.hedge_timer(call, now.saturating_add(wait));
        true
    }

    /// A timeout of a hedged call: gRPC's deadline ends the call and every
    /// attempt still outstanding; Envoy's per-try timeout hedges the
    /// attempt, leaving it in flight.
    pub(super) fn hedge_timeout(&mut self, call: u32, seq: u64) {
        let Some(Some(c)) = self.calls.get(call as usize) else {
            return;
        };
        let gi = c.group as usize;
        let deadline = c.first_seq == seq && c.deadline < Time::MAX;
        let Some(h) = self.hedging(gi) else { return };
        match h.kind {
            HedgeKind::Grpc { .. } if deadline => {
                let live: Vec<u64> = self.attempts(call).live.iter().map(|l| l.seq).collect();
                let now = self.now;
                for &s in &live {
                    self.note(s, |r| {
                        r.outcome = "timeout";
                        r.ends = Some(now);
                    });
                    self.count_timeout(call);
                }
                // Deadline exceeded: gRPC cancels what is outstanding (as
                // the group's `cancel` says, as for any timed-out attempt).
                let cancel = self.sc.groups[gi].cancel;
                let a = self.attempts(call);
                a.live.clear();
                a.timer_set = false;
                if cancel {
                    for s in live {
                        self.cancel_at_server(gi, s);
                    }
                }
                self.call_mut(call).waiting = false;
                self.decide(call, "deadline", None);
                self.end_call(call)
            }
            HedgeKind::Grpc { .. } => {}
            HedgeKind::PerTryTimeout => {
                let a = self.attempts(call);
                let Some(l) = a.live.iter_mut().find(|l| l.seq == seq && !l.soft) else {
                    return;
                };
                l.soft = true;
                self.count_timeout(call);
                if !self.attempts(call).timer_set {
                    self.envoy_retry(call, Failure::Timeout, None);
                }
            }
        }
    }

    /// Counts an attempt of `call` as timed out.
    fn count_timeout(&mut self, call: u32) {
        let c = self.call_mut(call);
        let (gi, counted, tally) = (c.group as usize, c.counted, c.tally);
        if counted {
            self.counts[gi].timeouts += 1;
        }
        let server = self.sc.groups[gi].server;
        if tally {
            self.server_counts[server].timeouts += 1;
        }
        self.tick(gi, |b| b.timeouts += 1);
    }

    /// Sends a cancel of attempt `seq` to group `gi`'s server (a queue
    /// server; others do no work to stop).
    fn cancel_at_server(&mut self, gi: usize, seq: u64) {
        let server = self.sc.groups[gi].server;
        if matches!(self.sc.servers[server].kind, ServerKind::Queue { .. }) {
            let d = self.delay();
            self.q.push(
                self.now + d,
                Ev::Cancel {
                    server: server as u32,
                    seq,
                },
            );
        }
    }
}
