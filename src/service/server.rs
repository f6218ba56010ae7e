//! The server's side: a queue served by workers in parallel (FIFO or LIFO,
//! refusing when full at a cost, dropping attempts whose client has gone,
//! cancelling on request, crashing above a backlog and restarting), a
//! flaky server that fails attempts at random, and one optimistically
//! locked row.

use super::config::{Empirical, RetryAfter};
use super::{Calls, Ev, Outcome, ServerKind, Service, Sim, Why, CONFLICT, CONNECTION_LOST};
use crate::engine::Time;
use rand::RngExt;

/// An attempt waiting for a worker.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    pub call: u32,
    pub seq: u64,
    /// When its client stops waiting for it (`Time::MAX`: never).
    pub deadline: Time,
}

/// What a worker is doing.
#[derive(Clone, Copy, Debug)]
pub(super) struct Work {
    pub call: u32,
    pub seq: u64,
    pub started: Time,
    /// A refusal being made (`reject_cost`), not an attempt being served.
    pub refusal: bool,
}

/// What the client of an attempt lost in a crash hears: its connection
/// closed, with no status and no Retry-After.
const LOST: Outcome = Outcome::Fail {
    retry_after: false,
    status: CONNECTION_LOST,
};

/// What an attempt whose downstream call failed returns.
pub(super) const BAD_GATEWAY: u16 = 502;

impl Sim<'_> {
    /// Server time spent on an attempt whose caller had gone.
    pub(super) fn waste(&mut self, ps: f64) {
        self.wasted_ps += ps;
        self.server_counts[self.cur].wasted_ps += ps;
        if let Some(b) = self.server_bin() {
            b.wasted_ps += ps;
        }
    }

    /// An attempt (or an OCC write carrying the version it read) arrives.
    pub(super) fn at_server(&mut self, call: u32, seq: u64, version: u64) {
        let now = self.now;
        self.note(seq, |r| r.arrives = Some(now));
        match self.sc.servers[self.cur].kind {
            ServerKind::Queue { accept, .. } => {
                if !self.servers[self.cur].up {
                    self.why = Why::Down;
                    return self.refuse(call, seq, false);
                }
                match accept {
                    Some(gate) if self.servers[self.cur].next_pass > self.now => {
                        if self.servers[self.cur].at_gate >= gate.burst {
                            self.why = Why::Gate;
                            return self.refuse(call, seq, false);
                        }
                        let at = self.servers[self.cur].next_pass;
                        self.servers[self.cur].next_pass = at.saturating_add(gate.interval);
                        self.servers[self.cur].at_gate += 1;
                        let server = self.cur as u32;
                        self.q.push(at, Ev::Admit { server, call, seq });
                    }
                    Some(gate) => {
                        self.servers[self.cur].next_pass = self.now.saturating_add(gate.interval);
                        self.enqueue(call, seq);
                    }
                    None => self.enqueue(call, seq),
                }
            }
            ServerKind::Flaky {
                failure,
                client_error,
            } => {
                let u: f64 = self.server_rngs[self.cur].random();
                let outcome = if u < failure {
                    self.why = Why::Error;
                    self.note_retry_after(call, seq);
                    self.refusal()
                } else if u < failure + client_error {
                    Outcome::ClientError
                } else if self.sc.servers[self.cur].downstream.is_some() {
                    return self.call_downstream(call, seq, u32::MAX);
                } else {
                    self.served(call, seq)
                };
                self.answer(call, seq, outcome);
            }
            ServerKind::Occ => {
                let outcome = if version == self.servers[self.cur].version {
                    self.servers[self.cur].version += 1;
                    Outcome::Ok
                } else {
                    self.why = Why::Conflict;
                    Outcome::Fail {
                        retry_after: false,
                        status: CONFLICT,
                    }
                };
                self.answer(call, seq, outcome);
            }
        }
    }

    /// A refusal with Retry-After: at once, or, for a full queue with a
    /// `reject_cost`, once a worker has spent that time on it.
    fn refuse(&mut self, call: u32, seq: u64, costs: bool) {
        let cost = match self.sc.servers[self.cur].kind {
            ServerKind::Queue { reject_cost, .. } if costs => reject_cost,
            _ => 0,
        };
        if cost == 0 {
            self.note_retry_after(call, seq);
            return self.answer(call, seq, self.refusal());
        }
        let w = Waiting {
            call,
            seq,
            deadline: Time::MAX,
        };
        match self.servers[self.cur].idle.pop() {
            Some(worker) => self.start_work(worker, w, true),
            None => self.servers[self.cur].refusals.push_back(w),
        }
    }

    /// Keeps the Retry-After the server sends with this failure in the
    /// call (a fixed value, or the backlog's drain time now).
    fn note_retry_after(&mut self, call: u32, seq: u64) {
        let ra = match self.sc.servers[self.cur].retry_after {
            None => return,
            Some(RetryAfter::Fixed(t)) => t,
            Some(RetryAfter::Backlog { cap }) => {
                let drain = match &self.sc.servers[self.cur].kind {
                    ServerKind::Queue {
                        service, workers, ..
                    } => self.in_system() as f64 * service.mean_ps() / f64::from(*workers),
                    _ => 0.0,
                };
                (drain.min(cap as f64).round() as Time).min(cap)
            }
        };
        if let Some(Some(c)) = self.calls.get_mut(call as usize) {
            if c.seq == seq || c.hedge.as_ref().is_some_and(|h| h.live(seq)) {
                c.retry_after = ra;
            }
        }
    }

    /// An attempt reaches the queue server's queue (past the accept-rate
    /// gate, if any): refused when the server is down or the queue full; a
    /// crash when it would make the attempts in the system exceed
    /// `crash_above`.
    pub(super) fn enqueue(&mut self, call: u32, seq: u64) {
        let ServerKind::Queue {
            queue_limit,
            crash_above,
            ..
        } = self.sc.servers[self.cur].kind
        else {
            return;
        };
        if !self.servers[self.cur].up {
            self.why = Why::Down;
            return self.refuse(call, seq, false);
        }
        let n = self.in_system();
        if queue_limit.is_some_and(|l| n >= l) {
            self.why = Why::Full;
            return self.refuse(call, seq, true);
        }
        if crash_above.is_some_and(|c| n + 1 > c) {
            self.why = Why::Down;
            self.crash();
            return self.answer(call, seq, LOST);
        }
        let w = Waiting {
            call,
            seq,
            deadline: self.deadline(call, seq),
        };
        self.servers[self.cur].in_system += 1;
        match self.servers[self.cur].idle.pop() {
            Some(worker) => {
                if !self.serve_or_drop(worker, w) {
                    self.servers[self.cur].idle.push(worker);
                }
            }
            None => self.servers[self.cur].waiting.push_back(w),
        }
    }

    /// When the client of attempt `seq` stops waiting for it: its send time
    /// plus its group's timeout, or the call's deadline (gRPC's, or one
    /// propagated from its caller) if sooner; now, if it has stopped
    /// already.
    pub(super) fn deadline(&self, call: u32, seq: u64) -> Time {
        match self.calls.get(call as usize) {
            // A hedged call waits for each outstanding attempt until its
            // deadline (gRPC) or its answer (Envoy's per-try timeout does
            // not stop the wait).
            Some(Some(c)) if c.hedge.as_ref().is_some_and(|h| h.live(seq)) => c.deadline,
            Some(Some(c)) if c.seq == seq && c.waiting => self.sc.groups[c.group as usize]
                .timeout
                .map_or(Time::MAX, |t| c.sent_at.saturating_add(t))
                .min(c.deadline),
            _ => self.now,
        }
    }

    /// What a served attempt returns: a poll before its job is ready learns
    /// that it is not; everything else succeeds.
    pub(super) fn served(&mut self, call: u32, seq: u64) -> Outcome {
        match self.calls.get(call as usize).and_then(Option::as_ref) {
            Some(c)
                if c.seq == seq
                    && matches!(self.sc.groups[c.group as usize].calls, Calls::Poll { .. })
                    && self.now < c.ready_at =>
            {
                self.why = Why::NotReady;
                Outcome::NotReady
            }
            _ => Outcome::Ok,
        }
    }

    /// A refusal (or a flaky server's failure reply): the server's status,
    /// with Retry-After.
    fn refusal(&self) -> Outcome {
        Outcome::Fail {
            retry_after: true,
            status: self.sc.servers[self.cur].refuse_status,
        }
    }

    /// Sends a reply back over the network.
    pub(super) fn answer(&mut self, call: u32, seq: u64, outcome: Outcome) {
        if let Some(b) = self.server_bin() {
            match outcome {
                Outcome::Ok => b.served += 1,
                Outcome::Fail { status, .. }
                    if status != CONNECTION_LOST && status != BAD_GATEWAY =>
                {
                    b.refused += 1
                }
                _ => {}
            }
        }
        if self.now >= self.sc.warmup {
            let c = &mut self.server_counts[self.cur];
            match outcome {
                Outcome::Ok => c.served += 1,
                Outcome::Fail { status, .. }
                    if status != CONNECTION_LOST && status != BAD_GATEWAY =>
                {
                    c.refused += 1
                }
                _ => {}
            }
        }
        if self.trace.is_some() {
            let label = match outcome {
                Outcome::Ok => "ok",
                Outcome::NotReady => "not-ready",
                Outcome::ClientError => "client-error",
                Outcome::Fail { .. } => match self.why {
                    Why::Full => "refused",
                    Why::Down => "down",
                    Why::Gate => "refused at gate",
                    Why::Conflict => "conflict",
                    _ => "error",
                },
            };
            self.note(seq, |r| {
                if r.outcome.is_empty() {
                    r.outcome = label;
                }
            });
        }
        let d = self.delay();
        self.q.push(self.now + d, Ev::Reply { call, seq, outcome });
    }

    fn service_time(&mut self) -> Time {
        let ServerKind::Queue { service, .. } = &self.sc.servers[self.cur].kind else {
            return 0;
        };
        let t = draw_service(service, &mut self.server_rngs[self.cur]);
        (t.min(1e18).round() as Time).max(1)
    }

    /// Worker `worker` (idle) takes attempt `w`, or drops it unserved when
    /// the server drops expired attempts and its client has gone; false
    /// when it dropped it.
    fn serve_or_drop(&mut self, worker: u32, w: Waiting) -> bool {
        let drop_expired = matches!(
            self.sc.servers[self.cur].kind,
            ServerKind::Queue {
                drop_expired: true,
                ..
            }
        );
        if drop_expired && w.deadline <= self.now {
            self.servers[self.cur].in_system -= 1;
            self.dropped_expired += 1;
            return false;
        }
        self.start_work(worker, w, false);
        true
    }

    fn start_work(&mut self, worker: u32, w: Waiting, refusal: bool) {
        let t = if refusal {
            match self.sc.servers[self.cur].kind {
                ServerKind::Queue { reject_cost, .. } => reject_cost,
                _ => 0,
            }
        } else {
            self.service_time()
        };
        if !refusal {
            let now = self.now;
            self.note(w.seq, |r| r.starts = Some(now));
        }
        self.servers[self.cur].serving[worker as usize] = Some(Work {
            call: w.call,
            seq: w.seq,
            started: self.now,
            refusal,
        });
        // A cancel bumps the worker's token, so that the Done pushed here
        // is then ignored.
        let token = self.servers[self.cur].tokens[worker as usize].wrapping_add(1);
        self.servers[self.cur].tokens[worker as usize] = token;
        let epoch = self.servers[self.cur].epoch;
        self.q.push(
            self.now + t,
            Ev::Done {
                server: self.cur as u32,
                epoch,
                worker,
                token,
            },
        );
    }

    /// The next work for a free worker: a refusal to make first, then the
    /// oldest (FIFO) or newest (LIFO) waiting attempt not cancelled; idle
    /// when there is none.
    pub(super) fn next_work(&mut self, worker: u32) {
        if let Some(r) = self.servers[self.cur].refusals.pop_front() {
            return self.start_work(worker, r, true);
        }
        let lifo = matches!(
            self.sc.servers[self.cur].kind,
            ServerKind::Queue { lifo: true, .. }
        );
        loop {
            let w = if lifo {
                self.servers[self.cur].waiting.pop_back()
            } else {
                self.servers[self.cur].waiting.pop_front()
            };
            let Some(w) = w else { break };
            if self.servers[self.cur].cancelled.remove(&w.seq) {
                continue;
            }
            if self.serve_or_drop(worker, w) {
                return;
            }
        }
        self.servers[self.cur].idle.push(worker);
    }

    /// Worker `worker` finishes its work.
    pub(super) fn done(&mut self, epoch: u32, worker: u32, token: u32) {
        if epoch != self.servers[self.cur].epoch
            || self.servers[self.cur].tokens[worker as usize] != token
        {
            return;
        }
        let Some(work) = self.servers[self.cur].serving[worker as usize] else {
            return;
        };
        if !work.refusal && self.sc.servers[self.cur].downstream.is_some() {
            // The worker waits for the downstream call, held.
            return self.call_downstream(work.call, work.seq, worker);
        }
        self.servers[self.cur].serving[worker as usize] = None;
        self.servers[self.cur].busy_ps += (self.now - work.started) as f64;
        if work.refusal {
            self.note_retry_after(work.call, work.seq);
            let refusal = self.refusal();
            self.answer(work.call, work.seq, refusal);
        } else {
            self.servers[self.cur].in_system -= 1;
            if !self.wanted(work.call, work.seq) {
                self.waste((self.now - work.started) as f64);
            }
            let outcome = self.served(work.call, work.seq);
            self.answer(work.call, work.seq, outcome);
        }
        self.next_work(worker);
    }

    /// A cancel for attempt `seq` reaches the server: it leaves the queue,
    /// or its worker stops and takes the next (a downstream call it holds
    /// the worker for goes on, and is then answered to no one).
    pub(super) fn cancel(&mut self, seq: u64) {
        let found = self.servers[self.cur]
            .serving
            .iter()
            .position(|s| matches!(s, Some(w) if w.seq == seq && !w.refusal));
        if let Some(worker) = found {
            let work = self.servers[self.cur].serving[worker]
                .take()
                .expect("found");
            self.servers[self.cur].busy_ps += (self.now - work.started) as f64;
            self.waste((self.now - work.started) as f64);
            self.servers[self.cur].in_system -= 1;
            // The pending Done no longer matches.
            self.servers[self.cur].tokens[worker] =
                self.servers[self.cur].tokens[worker].wrapping_add(1);
            return self.next_work(worker as u32);
        }
        if self.servers[self.cur].waiting.iter().any(|w| w.seq == seq)
            && self.servers[self.cur].cancelled.insert(seq)
        {
            self.servers[self.cur].in_system -= 1;
        }
    }

    /// The queue server crashes: every attempt in it is lost (its client
    /// hears of it), every connected client is dropped, and it is down for
    /// `restart`.
    fn crash(&mut self) {
        let ServerKind::Queue { restart, .. } = self.sc.servers[self.cur].kind else {
            return;
        };
        self.crashes += 1;
        self.server_counts[self.cur].crashes += 1;
        self.servers[self.cur].up = false;
        self.servers[self.cur].epoch = self.servers[self.cur].epoch.wrapping_add(1);
        let mut lost = Vec::new();
        for worker in 0..self.servers[self.cur].serving.len() {
            if let Some(w) = self.servers[self.cur].serving[worker].take() {
                self.servers[self.cur].busy_ps += (self.now - w.started) as f64;
                lost.push((w.call, w.seq, w.refusal));
                self.servers[self.cur].idle.push(worker as u32);
            }
        }
        self.servers[self.cur]
            .idle
            .sort_unstable_by(|a, b| b.cmp(a));
        let cancelled = std::mem::take(&mut self.servers[self.cur].cancelled);
        for w in std::mem::take(&mut self.servers[self.cur].waiting) {
            if !cancelled.contains(&w.seq) {
                lost.push((w.call, w.seq, false));
            }
        }
        for r in std::mem::take(&mut self.servers[self.cur].refusals) {
            lost.push((r.call, r.seq, true));
        }
        self.servers[self.cur].in_system = 0;
        for (call, seq, _) in lost {
            self.answer(call, seq, LOST);
        }
        let server = self.cur as u32;
        self.q.push(self.now + restart, Ev::Restart { server });
        self.drop_connected();
    }
}

/// A service time of law `s`, in picoseconds (not yet rounded or capped).
pub(super) fn draw_service(s: &Service, rng: &mut rand_chacha::ChaCha8Rng) -> f64 {
    match s {
        Service::Deterministic { mean } => *mean,
        Service::Exponential { mean } => {
            let u = 1.0 - rng.random::<f64>();
            -mean * u.ln()
        }
        Service::Lognormal { mu, sigma } => {
            // Box-Muller: one standard normal from two uniforms.
            let u1 = 1.0 - rng.random::<f64>();
            let u2: f64 = rng.random();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (mu + sigma * z).exp() * 1e12
        }
        Service::Pareto { scale, shape } => {
            let u = 1.0 - rng.random::<f64>();
            scale * u.powf(-1.0 / shape)
        }
        Service::Empirical(e) => {
            let u: f64 = rng.random();
            Empirical::quantile(e, u)
        }
    }
}
