//! One row per attempt of a service run, for `csmacd trace`: who sent it
//! and when, when it reached the server and began service, how it ended,
//! and what the client's gates and policy decided after it.

use crate::engine::Time;
use std::collections::HashMap;

/// One attempt (or a call failed by a gate before any attempt).
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRow {
    pub group: String,
    pub client: u64,
    /// The call's number in the run (in order of start).
    pub call: u64,
    /// 1 for the first attempt (0: the call sent none).
    pub attempt: u32,
    pub sent: Time,
    pub arrives: Option<Time>,
    pub starts: Option<Time>,
    /// When its client learnt the outcome (a reply, or its timeout).
    pub ends: Option<Time>,
    /// ok, not-ready, refused, error, conflict, crash, client-error,
    /// timeout, gated; empty while unknown.
    pub outcome: &'static str,
    /// The wait drawn before the next attempt.
    pub wait: Option<Time>,
    /// What the gates decided after it: retry, or why the call ends
    /// (max_retries, breaker, budget, stack, not retryable), or succeeded.
    pub decision: &'static str,
}

/// The rows being made, by attempt.
#[derive(Default)]
pub(super) struct Trace {
    pub rows: Vec<AttemptRow>,
    pub by_seq: HashMap<u64, usize>,
}

impl Trace {
    pub fn row(&mut self, seq: u64) -> Option<&mut AttemptRow> {
        let k = *self.by_seq.get(&seq)?;
        self.rows.get_mut(k)
    }
}
