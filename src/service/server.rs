//! The server's side: a FIFO queue served one attempt at a time (refusing
//! when full, crashing above a backlog and restarting), a flaky server that
//! fails attempts at random, and one optimistically locked row.

use super::{Calls, Ev, Outcome, ServerKind, Service, Sim, Why, CONFLICT, CONNECTION_LOST};
use crate::engine::Time;
use rand::RngExt;

/// What the client of an attempt lost in a crash hears: its connection
/// closed, with no status and no Retry-After.
const LOST: Outcome = Outcome::Fail {
    retry_after: false,
    status: CONNECTION_LOST,
};

impl Sim<'_> {
    /// An attempt (or an OCC write carrying the version it read) arrives.
    pub(super) fn at_server(&mut self, call: u32, seq: u64, version: u64) {
        match self.sc.server.kind {
            ServerKind::Queue { accept, .. } => {
                if !self.server.up {
                    self.why = Why::Down;
                    return self.answer(call, seq, self.refusal());
                }
                match accept {
                    Some(gate) if self.server.next_pass > self.now => {
                        if self.server.at_gate >= gate.burst {
                            self.why = Why::Gate;
                            return self.answer(call, seq, self.refusal());
                        }
                        let at = self.server.next_pass;
                        self.server.next_pass = at.saturating_add(gate.interval);
                        self.server.at_gate += 1;
                        self.q.push(at, Ev::Admit { call, seq });
                    }
                    Some(gate) => {
                        self.server.next_pass = self.now.saturating_add(gate.interval);
                        self.enqueue(call, seq);
                    }
                    None => self.enqueue(call, seq),
                }
            }
            ServerKind::Flaky {
                failure,
                client_error,
            } => {
                let u: f64 = self.server_rng.random();
                let outcome = if u < failure {
                    self.why = Why::Error;
                    self.refusal()
                } else if u < failure + client_error {
                    Outcome::ClientError
                } else {
                    self.served(call, seq)
                };
                self.answer(call, seq, outcome);
            }
            ServerKind::Occ => {
                let outcome = if version == self.server.version {
                    self.server.version += 1;
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

    /// An attempt reaches the queue server's queue (past the accept-rate
    /// gate, if any): refused when the server is down or the queue full; a
    /// crash when it would make the attempts in the system exceed
    /// `crash_above`.
    pub(super) fn enqueue(&mut self, call: u32, seq: u64) {
        let ServerKind::Queue {
            queue_limit,
            crash_above,
            ..
        } = self.sc.server.kind
        else {
            return;
        };
        let fail = self.refusal();
        if !self.server.up {
            self.why = Why::Down;
            return self.answer(call, seq, fail);
        }
        let n = self.in_system();
        if queue_limit.is_some_and(|l| n >= l) {
            self.why = Why::Full;
            return self.answer(call, seq, fail);
        }
        if crash_above.is_some_and(|c| n + 1 > c) {
            self.why = Why::Down;
            self.crash();
            return self.answer(call, seq, LOST);
        }
        self.server.queue.push_back((call, seq));
        if !self.server.busy {
            self.start_service();
        }
    }

    /// What a served attempt returns: a poll before its job is ready learns
    /// that it is not; everything else succeeds.
    fn served(&mut self, call: u32, seq: u64) -> Outcome {
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
            status: self.sc.server.refuse_status,
        }
    }

    /// Sends a reply back over the network.
    fn answer(&mut self, call: u32, seq: u64, outcome: Outcome) {
        let d = self.delay();
        self.q.push(self.now + d, Ev::Reply { call, seq, outcome });
    }

    fn service_time(&mut self) -> Time {
        let ServerKind::Queue { rate, service, .. } = self.sc.server.kind else {
            return 0;
        };
        let mean = 1e12 / rate;
        let t = match service {
            Service::Deterministic => mean,
            Service::Exponential => {
                let u = 1.0 - self.server_rng.random::<f64>();
                -mean * u.ln()
            }
        };
        (t.min(1e18).round() as Time).max(1)
    }

    fn start_service(&mut self) {
        self.server.busy = true;
        let t = self.service_time();
        let epoch = self.server.epoch;
        self.q.push(self.now + t, Ev::Done { epoch });
    }

    /// The attempt at the head is served.
    pub(super) fn done(&mut self, epoch: u32) {
        if epoch != self.server.epoch {
            return;
        }
        self.server.busy = false;
        if let Some((call, seq)) = self.server.queue.pop_front() {
            let outcome = self.served(call, seq);
            self.answer(call, seq, outcome);
        }
        if !self.server.queue.is_empty() {
            self.start_service();
        }
    }

    /// The queue server crashes: every attempt in it is lost (its client
    /// hears of it), every connected client is dropped, and it is down for
    /// `restart`.
    fn crash(&mut self) {
        let ServerKind::Queue { restart, .. } = self.sc.server.kind else {
            return;
        };
        self.crashes += 1;
        self.server.up = false;
        self.server.busy = false;
        self.server.epoch = self.server.epoch.wrapping_add(1);
        let lost = std::mem::take(&mut self.server.queue);
        for (call, seq) in lost {
            self.answer(call, seq, LOST);
        }
        self.q.push(self.now + restart, Ev::Restart);
        self.drop_connected();
    }
}
