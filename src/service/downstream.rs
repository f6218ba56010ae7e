//! A server's calls to another server: one per attempt it serves, made as
//! a call of its hidden downstream group (its worker, if it has workers,
//! held while the call goes on) and answered upstream when the call ends;
//! with `deadline = "propagate"` the call inherits the deadline of the
//! attempt it is made for and ends there. Also whether anyone up the path
//! still waits for an attempt, which is what makes work wasted along a
//! chain.

use super::server::BAD_GATEWAY;
use super::{Outcome, Parent, Sim};
use crate::engine::Time;

impl Sim<'_> {
    /// The current server makes its downstream call for attempt `seq` of
    /// call `call` (held by `worker`, u32::MAX for none). With a
    /// propagated deadline the call gets what is left of the attempt's:
    /// none of its attempts is sent at or after it, and at it the call
    /// ends (its attempt in flight timed out, cancelled at its server if
    /// the downstream settings say `cancel`; a pending retry abandoned); an
    /// attempt whose caller has already gone makes no attempt at all.
    pub(super) fn call_downstream(&mut self, call: u32, seq: u64, worker: u32) {
        let gi = self.sc.servers[self.cur].downstream.expect("a downstream");
        let st = &self.servers[self.cur];
        let (token, epoch) = match st.tokens.get(worker as usize) {
            Some(&t) => (t, st.epoch),
            None => (0, st.epoch),
        };
        let tally = match self.calls.get(call as usize) {
            Some(Some(c)) if c.seq == seq || c.hedge.as_ref().is_some_and(|h| h.live(seq)) => {
                c.tally
            }
            _ => self.now >= self.sc.warmup,
        };
        let parent = Parent {
            server: self.cur as u32,
            call,
            seq,
            worker,
            token,
            epoch,
        };
        let deadline = if self.sc.groups[gi].propagate {
            self.deadline(call, seq)
        } else {
            Time::MAX
        };
        let quiet = std::mem::replace(&mut self.quiet, true);
        let child = self.new_call(gi, 0, 0);
        let c = self.calls[child as usize].as_mut().expect("new");
        c.parent = Some(parent);
        c.tally = tally;
        if deadline <= self.now {
            self.trace_gated(child, "deadline");
            self.end_call(child);
        } else {
            if deadline < Time::MAX {
                // The call's deadline, as a gRPC call's: its own mark
                // stands for the first attempt's seq in the deadline event.
                let mark = self.next_seq;
                self.next_seq += 1;
                c.deadline = deadline;
                c.first_seq = mark;
                self.q.push(
                    deadline,
                    super::Ev::Timeout {
                        call: child,
                        seq: mark,
                    },
                );
            }
            self.send(child);
        }
        self.quiet = quiet;
    }

    /// A downstream call ended: the attempt it was made for succeeds if
    /// it did, else fails with 502; its worker, if held and still on it,
    /// takes the next work.
    pub(super) fn upstream(&mut self, p: Parent, ok: bool) {
        let outcome = if ok {
            self.served(p.call, p.seq)
        } else {
            Outcome::Fail {
                retry_after: false,
                status: BAD_GATEWAY,
            }
        };
        if p.worker == u32::MAX {
            return self.answer(p.call, p.seq, outcome);
        }
        let w = p.worker as usize;
        let st = &self.servers[self.cur];
        let held = st.epoch == p.epoch
            && st.tokens[w] == p.token
            && matches!(st.serving[w], Some(work) if work.seq == p.seq);
        if !held {
            return;
        }
        let work = self.servers[self.cur].serving[w].take().expect("held");
        self.servers[self.cur].busy_ps += (self.now - work.started) as f64;
        self.servers[self.cur].in_system -= 1;
        if !self.wanted(work.call, work.seq) {
            self.waste((self.now - work.started) as f64);
        }
        self.answer(work.call, work.seq, outcome);
        self.next_work(p.worker);
    }

    /// Whether anyone still waits for attempt `seq` of call `call`: its
    /// caller, and, for a downstream call, whoever waits for the attempt
    /// it is made for, up to a client. Work on an attempt no one waits
    /// for is wasted.
    pub(super) fn wanted(&self, call: u32, seq: u64) -> bool {
        let (mut call, mut seq) = (call, seq);
        loop {
            match self.calls.get(call as usize) {
                Some(Some(c))
                    if (c.waiting && c.seq == seq)
                        || c.hedge.as_ref().is_some_and(|h| h.live(seq)) =>
                {
                    match c.parent {
                        Some(p) => (call, seq) = (p.call, p.seq),
                        None => return true,
                    }
                }
                _ => return false,
            }
        }
    }
}
