//! The clients' side: calls start (once, after a drop, as Poisson processes,
//! from fresh clients, as polls of a job), attempts go out, replies and
//! timeouts come back, and after a failure the gates and the backoff policy
//! decide whether and when the next attempt goes.

use super::gates::GateState;
use super::stacks::{Failure, StackKind, StackState};
use super::{AttemptRow, Breaker, Call, Calls, Ev, Outcome, ServerKind, Sim};
use crate::backoff::{BackoffSpec, BackoffState, ChannelHistory, Context};
use crate::engine::Time;
use crate::seed::{self, Stream};
use rand::RngExt;

impl Sim<'_> {
    /// Schedules what every group does first.
    pub(super) fn start(&mut self) {
        for gi in 0..self.sc.groups.len() {
            let g = &self.sc.groups[gi];
            match g.calls {
                Calls::Once { at } => {
                    self.now = at;
                    for c in 0..g.count {
                        let call = self.new_call(gi, c, 0);
                        self.q.push(at, Ev::Send { call });
                    }
                }
                Calls::Reconnect { at } | Calls::Poll { at, .. } => {
                    self.now = at;
                    for c in 0..g.count {
                        let call = self.new_call(gi, c, 1);
                        if let Calls::Poll { job, .. } = g.calls {
                            let ready = super::draw_delay(&job, &mut self.arrivals[gi]);
                            self.call_mut(call).ready_at = at + ready;
                        }
                        // The drop (or the job not yet ready) is the
                        // call's first failure.
                        self.policy_update(call, false, 1, 0);
                        let wait = self.wait(call, None, None);
                        self.q.push(at + wait, Ev::Send { call });
                    }
                }
                Calls::Sequential { at, .. } => {
                    self.now = at;
                    for c in 0..g.count {
                        let call = self.new_call(gi, c, 0);
                        self.q.push(at, Ev::Send { call });
                    }
                }
                Calls::Poisson { .. } | Calls::Fresh { .. } => {
                    self.now = 0;
                    if let Some(t) = self.next_arrival(gi) {
                        self.q.push(t, Ev::Arrival { group: gi as u32 });
                    }
                }
            }
        }
        self.now = 0;
    }

    /// The next call time of a `poisson` or `fresh` group after now, if
    /// before its end: the rate is piecewise constant (its profile changes it).
    fn next_arrival(&mut self, gi: usize) -> Option<Time> {
        let g = &self.sc.groups[gi];
        let end = self.sc.duration;
        let rng = &mut self.arrivals[gi];
        let mut e = -(1.0 - rng.random::<f64>()).ln();
        let mut t = self.now;
        loop {
            // The rate from t, and until when it holds.
            let (base, per, until) = match g.calls {
                Calls::Poisson { rate, until } => {
                    if t >= until {
                        return None;
                    }
                    (rate, g.count as f64, until)
                }
                Calls::Fresh { rate } => (rate, 1.0, Time::MAX),
                _ => return None,
            };
            let (rate, until) = match g.profile.iter().find(|s| t < s.to) {
                Some(s) if t < s.from => (base * per, s.from.min(until)),
                Some(s) => (s.rate * per, s.to.min(until)),
                None => (base * per, until),
            };
            let dt = e / rate * 1e12;
            if (t as f64 + dt) < until as f64 {
                let at = (t as f64 + dt).round() as Time;
                return (at <= end).then_some(at.max(self.now));
            }
            if until >= end {
                return None;
            }
            e -= (until - t) as f64 / 1e12 * rate;
            t = until;
        }
    }

    pub(super) fn arrival(&mut self, gi: usize) {
        let g = &self.sc.groups[gi];
        let client = match g.calls {
            Calls::Fresh { .. } => {
                self.fresh_clients[gi] += 1;
                self.fresh_clients[gi] - 1
            }
            _ => self.arrivals[gi].random_range(0..g.count),
        };
        let call = self.new_call(gi, client, 0);
        self.send(call);
        if let Some(t) = self.next_arrival(gi) {
            self.q.push(t, Ev::Arrival { group: gi as u32 });
        }
    }

    /// The next call of client `client` of a `sequential` group.
    pub(super) fn next_call(&mut self, gi: usize, client: u64) {
        let call = self.new_call(gi, client, 0);
        self.send(call);
    }

    /// A new call of client `client` of group `gi`, with `n` failures behind it.
    pub(super) fn new_call(&mut self, gi: usize, client: u64, n: u32) -> u32 {
        let _ = &self.sc.groups[gi];
        let counted = self.now >= self.sc.warmup;
        if counted {
            self.counts[gi].calls += 1;
        }
        self.tick_now(gi, |b| b.calls_started += 1);
        let stream = seed::derive(self.run_seed, &[seed::BACKOFF, self.serial]);
        self.serial += 1;
        let c = Call {
            group: gi as u32,
            client,
            n,
            retries: 0,
            sent: 0,
            seq: u64::MAX,
            id: self.serial - 1,
            sent_at: 0,
            first_sent: 0,
            retry_after: 0,
            waiting: false,
            counted,
            ready_at: 0,
            paced: false,
            ticket: u64::MAX,
            paid: 0,
            deadline: Time::MAX,
            first_seq: u64::MAX,
            parent: None,
            tally: counted,
            backoff: self.client_backoff(gi, client),
            rng: Stream::new(stream, true),
            hedge: None,
        };
        match self.free.pop() {
            Some(k) => {
                self.calls[k as usize] = Some(c);
                k
            }
            None => {
                self.calls.push(Some(c));
                (self.calls.len() - 1) as u32
            }
        }
    }

    pub(super) fn call_mut(&mut self, call: u32) -> &mut Call {
        self.calls[call as usize]
            .as_mut()
            .expect("a scheduled call is live")
    }

    /// The gate state of a call's scope.
    fn gate(&mut self, gi: usize, client: u64) -> &mut GateState {
        let g = &self.sc.groups[gi];
        let shared = match g.stack {
            Some(s) => s.shared,
            None => g.breaker.is_none_or(|b| b.shared()) && g.budget.is_none_or(|b| b.shared),
        };
        let gates = &mut self.gates[gi];
        if shared {
            &mut gates.shared
        } else {
            gates
                .per_client
                .entry(client)
                .or_insert_with(|| GateState::new(g.budget.as_ref(), g.stack.as_ref()))
        }
    }

    /// The stack state of a call's scope (its group has a stack).
    pub(super) fn stack(&mut self, gi: usize, client: u64) -> &mut StackState {
        self.gate(gi, client)
            .stack
            .as_mut()
            .expect("a group with a stack has its state")
    }

    /// The policy's (or the stack's) wait after the call's n-th failure,
    /// at least `at_least`.
    pub(super) fn wait(
        &mut self,
        call: u32,
        at_least: Option<Time>,
        failure: Option<Failure>,
    ) -> Time {
        let gi = self.call_mut(call).group as usize;
        let g = &self.sc.groups[gi];
        let c = self.calls[call as usize].as_mut().expect("live call");
        let n = c.n;
        let (backoff, rng) = (&mut c.backoff, &mut c.rng);
        let retry_after = at_least.unwrap_or(0);
        let d = match g.stack {
            Some(st) => {
                let drawn = st.wait(n, failure, rng.with(|r| r.random::<f64>()));
                return st
                    .retry_after(drawn, at_least)
                    .min(1_000_000_000_000_000_000);
            }
            None => {
                let drawn = rng.with(|r| {
                    backoff.draw(
                        &g.backoff,
                        n,
                        g.slot,
                        &ChannelHistory::default(),
                        retry_after,
                        r,
                    )
                });
                match drawn {
                    // A written policy reads `retry_after` and decides.
                    Ok(d) if matches!(g.backoff, BackoffSpec::Expr(_)) => return d.delay,
                    Ok(d) => d.delay,
                    Err(f) => {
                        let client = c.client;
                        self.fault.get_or_insert_with(|| {
                            format!(
                                "clients.{gi} (`{}`), client {client} (n = {}): {}",
                                g.name, f.n, f.message
                            )
                        });
                        return 0;
                    }
                }
            }
        };
        d.max(at_least.unwrap_or(0)).min(1_000_000_000_000_000_000)
    }

    /// A new call's backoff memory: a written policy's state carries over
    /// from the client's previous call.
    fn client_backoff(&self, gi: usize, client: u64) -> BackoffState {
        let spec = &self.sc.groups[gi].backoff;
        let mut b = BackoffState::new(spec);
        if let Some(state) = self.policy_state.get(&(gi as u32, client)) {
            b.set_state(state);
        }
        b
    }

    /// Runs a written policy's `on_success` or `on_failure` for the call's
    /// n-th failure (or success after n failures), keeping the state for
    /// the client's next call.
    fn policy_update(&mut self, call: u32, success: bool, n: u32, retry_after: Time) {
        let gi = self.call_mut(call).group as usize;
        let g = &self.sc.groups[gi];
        let BackoffSpec::Expr(p) = &g.backoff else {
            return;
        };
        let c = self.calls[call as usize].as_mut().expect("live call");
        let seen = Context {
            slot: g.slot,
            observed: 0,
            retry_after,
        };
        if success {
            c.backoff.on_success(&g.backoff, n, &seen);
        } else {
            c.backoff.on_collision(&g.backoff, n, &seen);
        }
        // A fresh client makes one call: its state ends with it.
        if !p.state.is_empty() && !matches!(g.calls, Calls::Fresh { .. }) {
            let key = (gi as u32, c.client);
            self.policy_state.insert(key, c.backoff.state().into());
        }
    }

    /// The call's next attempt leaves its client.
    pub(super) fn send(&mut self, call: u32) {
        let (gi, client, first) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client, c.sent == 0)
        };
        let g = &self.sc.groups[gi];
        if let Some(st) = g.stack {
            // A breaker fails the call at once while open; the rate limiter
            // of adaptive mode holds the attempt until it has a token.
            let now = self.now;
            if !std::mem::take(&mut self.call_mut(call).paced) {
                if !self.stack(gi, client).permit(&st, now) {
                    self.trace_gated(call, "stack");
                    return self.end_call(call);
                }
                if self.hold(call) {
                    return;
                }
            }
            self.stack(gi, client).sent(&st, now, !first);
        }
        if first {
            if let Some(br) = g.breaker {
                let now = self.now;
                let gate = self.gate(gi, client);
                if gate.blocks_call(&br, now) {
                    self.trace_gated(call, "breaker");
                    return self.end_call(call);
                }
                if matches!(br, Breaker::Classic { all: true, .. }) {
                    gate.admit(&br, now);
                }
            }
            if let Some(b) = g.budget {
                self.gate(gi, client).deposit(&b);
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.count_send(gi);
        let deadline = g.stack.is_some_and(|s| s.deadline());
        let now = self.now;
        let c = self.call_mut(call);
        if c.sent == 0 {
            c.first_sent = now;
        }
        c.sent += 1;
        c.seq = seq;
        c.sent_at = now;
        c.waiting = true;
        let (id, attempt) = (c.id, c.sent);
        match g.timeout {
            // gRPC: the call's deadline, from its first attempt (unless a
            // deadline propagated to the call comes first).
            Some(t) if deadline && first && now.saturating_add(t) < c.deadline => {
                c.deadline = now.saturating_add(t);
                c.first_seq = seq;
                self.q
                    .push(now.saturating_add(t), Ev::Timeout { call, seq });
            }
            Some(_) if deadline => {}
            Some(t) => self.q.push(now + t, Ev::Timeout { call, seq }),
            None => {}
        }
        if let Some(t) = self.trace.as_mut() {
            t.by_seq.insert(seq, t.rows.len());
            t.rows.push(AttemptRow {
                group: g.name.clone(),
                client,
                call: id,
                attempt,
                sent: now,
                arrives: None,
                starts: None,
                ends: None,
                outcome: "",
                wait: None,
                decision: "",
            });
        }
        let d = self.delay();
        let server = g.server as u32;
        match self.sc.servers[g.server].kind {
            ServerKind::Occ => self.q.push(self.now + d, Ev::OccRead { server, call, seq }),
            _ => {
                self.count_attempt(call);
                self.q.push(
                    self.now + d,
                    Ev::AtServer {
                        server,
                        call,
                        seq,
                        version: 0,
                    },
                );
            }
        }
        self.hedge_sent(call, seq);
    }

    /// A call failed by a gate before its first attempt, in the trace.
    pub(super) fn trace_gated(&mut self, call: u32, gate: &'static str) {
        let now = self.now;
        let c = self.calls[call as usize].as_ref().expect("live call");
        let (group, client, id) = (c.group as usize, c.client, c.id);
        if let Some(t) = self.trace.as_mut() {
            t.rows.push(AttemptRow {
                group: self.sc.groups[group].name.clone(),
                client,
                call: id,
                attempt: 0,
                sent: now,
                arrives: None,
                starts: None,
                ends: Some(now),
                outcome: "gated",
                wait: None,
                decision: gate,
            });
        }
    }

    /// The gates' decision after the call's current attempt, in the trace.
    pub(super) fn decide(&mut self, call: u32, decision: &'static str, wait: Option<Time>) {
        let seq = self.call_mut(call).seq;
        self.note(seq, |r| {
            r.decision = decision;
            r.wait = wait;
        });
    }

    /// Whether adaptive mode's rate limiter holds the call's attempt (it
    /// then tries again when its wait is over or a rate change wakes it).
    fn hold(&mut self, call: u32) -> bool {
        let (gi, client) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client)
        };
        let ticket = self.next_seq;
        let now = self.now;
        let hold = self.stack(gi, client).pace(now, call, ticket);
        if hold == 0 {
            return false;
        }
        self.next_seq += 1;
        self.call_mut(call).ticket = ticket;
        self.q.push(now + hold, Ev::Paced { call, ticket });
        true
    }

    /// A held attempt wakes (its wait over, or woken by a rate change):
    /// it leaves if it now gets a token.
    pub(super) fn paced(&mut self, call: u32, ticket: u64) {
        if !matches!(self.calls.get(call as usize), Some(Some(c)) if c.ticket == ticket) {
            return;
        }
        self.call_mut(call).ticket = u64::MAX;
        if !self.hold(call) {
            self.call_mut(call).paced = true;
            self.send(call);
        }
    }

    fn count_attempt(&mut self, call: u32) {
        let c = self.call_mut(call);
        let (gi, counted, tally) = (c.group as usize, c.counted, c.tally);
        if counted {
            self.counts[gi].attempts += 1;
        }
        if tally {
            self.server_counts[self.sc.groups[gi].server].attempts += 1;
        }
        self.tick(gi, |b| b.attempts += 1);
    }

    /// The live call waiting for attempt `seq`, if any.
    pub(super) fn waiting(&mut self, call: u32, seq: u64) -> bool {
        matches!(self.calls.get(call as usize), Some(Some(c))
            if (c.waiting && c.seq == seq) || c.hedge.as_ref().is_some_and(|h| h.live(seq)))
    }

    /// An OCC read came back: write with the version read.
    pub(super) fn occ_write(&mut self, server: u32, call: u32, seq: u64, version: u64) {
        if !self.waiting(call, seq) {
            return;
        }
        self.count_attempt(call);
        let d = self.delay();
        self.q.push(
            self.now + d,
            Ev::AtServer {
                server,
                call,
                seq,
                version,
            },
        );
    }

    pub(super) fn timeout(&mut self, call: u32, seq: u64) {
        if self.hedged(call) {
            return self.hedge_timeout(call, seq);
        }
        // A gRPC call's deadline: it ends the call, in its backoff or with
        // the attempt in flight.
        let deadline = matches!(self.calls.get(call as usize), Some(Some(c)) if c.first_seq == seq);
        if deadline {
            if !self.call_mut(call).waiting {
                // In its backoff, its retry already known to come too late:
                // no attempt fails now, the call does.
                return self.end_call(call);
            }
        } else if !self.waiting(call, seq) {
            return;
        }
        let now = self.now;
        let current = self.call_mut(call).seq;
        self.note(current, |r| {
            r.outcome = "timeout";
            r.ends = Some(now);
        });
        let c = self.call_mut(call);
        c.waiting = false;
        let (gi, counted, tally) = (c.group as usize, c.counted, c.tally);
        if counted {
            self.counts[gi].timeouts += 1;
        }
        let server = self.sc.groups[gi].server;
        if tally {
            self.server_counts[server].timeouts += 1;
        }
        self.tick(gi, |b| b.timeouts += 1);
        if self.sc.groups[gi].cancel
            && matches!(self.sc.servers[server].kind, ServerKind::Queue { .. })
        {
            let d = self.delay();
            let server = server as u32;
            self.q.push(
                self.now + d,
                Ev::Cancel {
                    server,
                    seq: current,
                },
            );
        }
        self.stack_outcome(call, Some(Failure::Timeout));
        let unretried = self.sc.groups[gi]
            .retry_on
            .as_ref()
            .is_some_and(|r| !r.timeout);
        if deadline || unretried {
            return self.failed_for_good(call);
        }
        self.failed(call, None, Some(Failure::Timeout));
    }

    /// The call fails with a failure it does not retry.
    fn failed_for_good(&mut self, call: u32) {
        self.decide(call, "not retried", None);
        let gi = self.call_mut(call).group as usize;
        self.tick(gi, |b| b.failures += 1);
        self.decide(call, "not retryable", None);
        self.end_call(call)
    }

    /// How the call's group sees a failed reply with HTTP `status`
    /// (`refusal`: a queue server's): not retried if its `retry_on` does
    /// not list it, else as its stack classifies it.
    pub(super) fn classify(&self, gi: usize, status: u16, refusal: bool) -> Failure {
        let g = &self.sc.groups[gi];
        if g.retry_on.as_ref().is_some_and(|r| !r.status(status)) {
            return Failure::ClientError;
        }
        match g.stack {
            Some(st) => st.classify(status, refusal),
            None if refusal => Failure::Throttled,
            None => Failure::Error,
        }
    }

    /// Tells the call's stack, if any, how its attempt ended.
    fn stack_outcome(&mut self, call: u32, failure: Option<Failure>) {
        let (gi, client, retry, paid) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client, c.sent > 1, c.paid)
        };
        if let Some(st) = self.sc.groups[gi].stack {
            let now = self.now;
            self.stack(gi, client)
                .outcome(&st, now, retry, failure, paid);
            // The rate changed: the limiter's first waiter wakes.
            let calls = &self.calls;
            let live =
                |c: u32, t: u64| matches!(calls.get(c as usize), Some(Some(k)) if k.ticket == t);
            let gate = match st.shared {
                true => &mut self.gates[gi].shared,
                false => self.gates[gi]
                    .per_client
                    .get_mut(&client)
                    .expect("a client's stack state exists once it has sent"),
            };
            if let Some((call, ticket)) = gate.stack.as_mut().and_then(|s| s.notify(live)) {
                self.q.push(now, Ev::Paced { call, ticket });
            }
        }
    }

    pub(super) fn reply(&mut self, call: u32, seq: u64, outcome: Outcome) {
        if self.hedged(call) {
            return self.hedge_reply(call, seq, outcome);
        }
        if !self.waiting(call, seq) {
            return;
        }
        let now = self.now;
        self.note(seq, |r| r.ends = Some(now));
        self.call_mut(call).waiting = false;
        let gi = self.call_mut(call).group as usize;
        // A refusal from a full or down queue is the server throttling.
        let target = &self.sc.servers[self.sc.groups[gi].server];
        let queue = matches!(target.kind, ServerKind::Queue { .. });
        let failure = match outcome {
            Outcome::Ok | Outcome::NotReady => None,
            Outcome::Fail {
                retry_after,
                status,
            } => Some(self.classify(gi, status, retry_after && queue)),
            Outcome::ClientError => Some(Failure::ClientError),
        };
        self.stack_outcome(call, failure);
        match (outcome, failure) {
            (Outcome::Ok, _) => self.succeeded(call),
            (Outcome::NotReady, _) => self.failed(call, None, None),
            (_, Some(Failure::ClientError)) => self.failed_for_good(call),
            (Outcome::Fail { retry_after, .. }, _) => {
                let ra = (retry_after && target.retry_after.is_some())
                    .then(|| self.call_mut(call).retry_after);
                self.failed(call, ra, failure)
            }
            (Outcome::ClientError, _) => self.failed_for_good(call),
        }
    }

    pub(super) fn succeeded(&mut self, call: u32) {
        let (gi, client, counted, ready_at, n, first_sent) = {
            let c = self.call_mut(call);
            (
                c.group as usize,
                c.client,
                c.counted,
                c.ready_at,
                c.n,
                c.first_sent,
            )
        };
        self.decide(call, "succeeded", None);
        let latency = self.now - first_sent;
        let good = self.sc.slo.is_some_and(|s| latency <= s.latency);
        self.bin_latency(gi, latency);
        self.policy_update(call, true, n, 0);
        let now = self.now;
        if let Some(br) = self.sc.groups[gi].breaker {
            self.gate(gi, client).record(&br, now, false);
        }
        self.tick(gi, |b| {
            b.successes += 1;
            b.slo_good += u64::from(good);
        });
        let cnt = &mut self.counts[gi];
        if counted {
            cnt.successes += 1;
            cnt.latency.add(latency);
            cnt.slo_good += u64::from(good);
            cnt.completion = Some(now);
            if let Calls::Poll { .. } = self.sc.groups[gi].calls {
                cnt.lateness_ps += now.saturating_sub(ready_at) as f64;
                cnt.lateness_n += 1;
            }
        }
        if let Calls::Reconnect { .. } = self.sc.groups[gi].calls {
            let flag = &mut self.connected[gi][client as usize];
            if !*flag {
                *flag = true;
                self.connected_total += 1;
                let cnt = &mut self.counts[gi];
                cnt.connected += 1;
                if cnt.connected == self.sc.groups[gi].count && cnt.all_connected.is_none() {
                    cnt.all_connected = Some(now);
                }
                if self.connected_total == self.reconnect_total && self.all_connected.is_none() {
                    self.all_connected = Some(now);
                }
            }
        }
        self.tell_parent(call, true);
        self.release(call);
    }

    /// An attempt failed (`failure`: a failure the gates count; a poll
    /// answered "not ready" is not one). Retries if the gates let it.
    fn failed(&mut self, call: u32, retry_after: Option<Time>, failure: Option<Failure>) {
        let error = failure.is_some();
        let (gi, client, retries, n) = {
            let c = self.call_mut(call);
            (c.group as usize, c.client, c.retries, c.n)
        };
        self.policy_update(call, false, n.saturating_add(1), retry_after.unwrap_or(0));
        let g = &self.sc.groups[gi];
        let now = self.now;
        if error {
            self.tick(gi, |b| b.failures += 1);
            if let Some(br) = g.breaker {
                self.gate(gi, client).record(&br, now, true);
            }
        }
        if g.max_retries.is_some_and(|m| retries >= m) {
            self.decide(call, "max_retries", None);
            return self.end_call(call);
        }
        if let Some(br) = g.breaker {
            if self.gate(gi, client).blocks_retry(&br, now) {
                self.decide(call, "breaker", None);
                return self.end_call(call);
            }
        }
        if let Some(b) = g.budget {
            if !self.gate(gi, client).pay(&b) {
                self.decide(call, "budget", None);
                return self.end_call(call);
            }
        }
        if let (Some(st), Some(f)) = (g.stack, failure) {
            match self.stack(gi, client).retry(&st, now, f) {
                Some(paid) => self.call_mut(call).paid = paid,
                None => {
                    self.decide(call, "stack", None);
                    return self.end_call(call);
                }
            }
        }
        if let Some(br) = g.breaker {
            self.gate(gi, client).admit(&br, now);
        }
        let c = self.call_mut(call);
        c.n = c.n.saturating_add(1);
        c.retries += 1;
        let wait = self.wait(call, retry_after, failure);
        if retry_after.is_some()
            && g.stack
                .is_some_and(|s| matches!(s.kind, StackKind::Grpc { .. }))
        {
            // gRPC after pushback: the next backoff starts again from
            // initial_backoff (gRFC A6).
            self.call_mut(call).n = 0;
        }
        // A retry due at or after the call's deadline never goes: the
        // deadline ends the call.
        if now.saturating_add(wait) < self.call_mut(call).deadline {
            self.decide(call, "retry", Some(wait));
            self.q.push(now + wait, Ev::Send { call });
        } else {
            self.decide(call, "deadline", Some(wait));
        }
    }

    /// The call has failed for good.
    pub(super) fn end_call(&mut self, call: u32) {
        let now = self.now;
        let c = self.call_mut(call);
        let (gi, counted, sent, first_sent) = (c.group as usize, c.counted, c.sent, c.first_sent);
        let latency = if sent == 0 { 0 } else { now - first_sent };
        self.tick(gi, |b| {
            b.calls_failed += 1;
            b.failed_fast += u64::from(sent == 0);
        });
        if counted {
            let cnt = &mut self.counts[gi];
            cnt.failed += 1;
            cnt.failed_fast += u64::from(sent == 0);
            cnt.failed_latency_ps += latency as f64;
        }
        self.tell_parent(call, false);
        self.release(call);
    }

    /// A server's downstream call has ended: its server hears of it now.
    fn tell_parent(&mut self, call: u32, ok: bool) {
        if let Some(parent) = self.call_mut(call).parent {
            self.q.push(self.now, Ev::Upstream { parent, ok });
        }
    }

    /// The call is over (succeeded or failed for good).
    fn release(&mut self, call: u32) {
        if let Some(c) = self.calls[call as usize].take() {
            let gi = c.group as usize;
            match self.sc.groups[gi].calls {
                Calls::Fresh { .. } => {
                    self.gates[gi].per_client.remove(&c.client);
                }
                Calls::Sequential { gap, .. } => {
                    let left = &mut self.sequential_left[gi][c.client as usize];
                    if *left > 0 {
                        *left -= 1;
                        let group = gi as u32;
                        let client = c.client;
                        self.q
                            .push(self.now.saturating_add(gap), Ev::Next { group, client });
                    }
                }
                _ => {}
            }
        }
        self.free.push(call);
    }

    /// A crash drops every connected client: each starts a new call with
    /// the drop as its first failure.
    pub(super) fn drop_connected(&mut self) {
        for gi in 0..self.sc.groups.len() {
            if !matches!(self.sc.groups[gi].calls, Calls::Reconnect { .. })
                || self.sc.groups[gi].server != self.cur
            {
                continue;
            }
            for client in 0..self.sc.groups[gi].count {
                if !std::mem::take(&mut self.connected[gi][client as usize]) {
                    continue;
                }
                self.connected_total -= 1;
                self.counts[gi].connected -= 1;
                let call = self.new_call(gi, client, 1);
                self.policy_update(call, false, 1, 0);
                let wait = self.wait(call, None, None);
                self.q.push(self.now + wait, Ev::Send { call });
            }
        }
    }
}
