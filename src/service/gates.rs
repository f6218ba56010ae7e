//! The gates a retry must pass: a token bucket (retry budget) and a circuit
//! breaker, each per client or shared by a group. First attempts are never
//! gated, except by an open classic breaker in mode `all`.

use super::config::{Breaker, Budget};
use super::stacks::{Stack, StackState};
use crate::engine::Time;
use std::collections::VecDeque;

/// The gate state of one scope (a client, or a whole group when shared).
#[derive(Clone, Debug, Default)]
pub struct GateState {
    /// The library stack's state, when the group has one.
    pub stack: Option<StackState>,
    tokens: f64,
    /// Outcomes in the ratio breaker's window: (time, failed).
    window: VecDeque<(Time, bool)>,
    failed: u64,
    total: u64,
    /// Classic breaker: failures in a row, open until, whether it is half
    /// open once that time has passed, and then the probes let through and
    /// those that succeeded.
    consecutive: u32,
    open_until: Time,
    half_open: bool,
    probes_out: u32,
    probes_ok: u32,
}

impl GateState {
    pub fn new(budget: Option<&Budget>, stack: Option<&Stack>) -> Self {
        GateState {
            stack: stack.map(StackState::new),
            tokens: budget.map_or(0.0, |b| b.start),
            ..GateState::default()
        }
    }

    /// A first attempt deposits into the bucket.
    pub fn deposit(&mut self, budget: &Budget) {
        self.tokens = (self.tokens + budget.deposit).min(budget.size);
    }

    /// Takes the cost of a retry if the bucket holds it.
    pub fn pay(&mut self, budget: &Budget) -> bool {
        if self.tokens >= budget.cost {
            self.tokens -= budget.cost;
            true
        } else {
            false
        }
    }

    /// Whether the breaker stops retries at `now`.
    pub fn blocks_retry(&mut self, breaker: &Breaker, now: Time) -> bool {
        match *breaker {
            Breaker::Ratio {
                threshold, window, ..
            } => {
                self.prune(window, now);
                self.total > 0 && self.failed as f64 > threshold * self.total as f64
            }
            Breaker::Classic { probes, .. } => self.classic_blocks(probes, now),
        }
    }

    /// Open, or half open with all its probes out.
    fn classic_blocks(&self, probes: u32, now: Time) -> bool {
        now < self.open_until || (self.half_open && self.probes_out >= probes)
    }

    /// Whether an open classic breaker in mode `all` fails a call at once.
    pub fn blocks_call(&self, breaker: &Breaker, now: Time) -> bool {
        match *breaker {
            Breaker::Classic {
                all: true, probes, ..
            } => self.classic_blocks(probes, now),
            _ => false,
        }
    }

    /// An attempt the breaker let through goes: half open, it is a probe.
    pub fn admit(&mut self, breaker: &Breaker, now: Time) {
        if matches!(breaker, Breaker::Classic { .. }) && self.half_open && now >= self.open_until {
            self.probes_out += 1;
        }
    }

    /// Records an attempt's outcome.
    pub fn record(&mut self, breaker: &Breaker, now: Time, failed: bool) {
        match *breaker {
            Breaker::Ratio { window, .. } => {
                if window.is_some() {
                    self.window.push_back((now, failed));
                }
                self.total += 1;
                self.failed += u64::from(failed);
                self.prune(window, now);
            }
            Breaker::Classic {
                consecutive,
                open,
                probes,
                ..
            } => {
                if now < self.open_until {
                    // An attempt sent before it opened; the breaker is open already.
                    return;
                }
                if self.half_open {
                    if failed {
                        self.open_until = now.saturating_add(open);
                        self.probes_out = 0;
                        self.probes_ok = 0;
                    } else {
                        self.probes_ok += 1;
                        if self.probes_ok >= probes {
                            self.half_open = false;
                            self.consecutive = 0;
                        }
                    }
                    return;
                }
                if !failed {
                    self.consecutive = 0;
                    return;
                }
                self.consecutive += 1;
                if self.consecutive >= consecutive {
                    self.open_until = now.saturating_add(open);
                    self.half_open = true;
                    self.consecutive = 0;
                    self.probes_out = 0;
                    self.probes_ok = 0;
                }
            }
        }
    }

    fn prune(&mut self, window: Option<Time>, now: Time) {
        let Some(w) = window else { return };
        while let Some(&(t, failed)) = self.window.front() {
            if t.saturating_add(w) > now {
                break;
            }
            self.window.pop_front();
            self.total -= 1;
            self.failed -= u64::from(failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_pays_only_what_it_holds() {
        let b = Budget {
            size: 2.0,
            deposit: 0.5,
            cost: 1.0,
            start: 1.0,
            shared: true,
        };
        let mut g = GateState::new(Some(&b), None);
        assert!(g.pay(&b));
        assert!(!g.pay(&b));
        for _ in 0..10 {
            g.deposit(&b);
        }
        assert!(g.pay(&b) && g.pay(&b) && !g.pay(&b));
    }

    #[test]
    fn ratio_breaker_forgets_outside_its_window() {
        let br = Breaker::Ratio {
            threshold: 0.5,
            window: Some(10),
            shared: true,
        };
        let mut g = GateState::new(None, None);
        g.record(&br, 0, true);
        g.record(&br, 1, true);
        assert!(g.blocks_retry(&br, 5));
        assert!(!g.blocks_retry(&br, 11));
    }

    #[test]
    fn classic_breaker_opens_and_reopens_on_one_failure() {
        let br = Breaker::Classic {
            consecutive: 3,
            open: 100,
            all: true,
            shared: false,
            probes: 2,
        };
        let mut g = GateState::new(None, None);
        for t in 0..3 {
            assert!(!g.blocks_call(&br, t));
            g.record(&br, t, true);
        }
        assert!(g.blocks_call(&br, 50) && g.blocks_retry(&br, 50));
        // Half open: two probes go, a third waits.
        for _ in 0..2 {
            assert!(!g.blocks_call(&br, 103));
            g.admit(&br, 103);
        }
        assert!(g.blocks_call(&br, 103));
        g.record(&br, 104, true);
        assert!(g.blocks_call(&br, 105));
        for _ in 0..2 {
            assert!(!g.blocks_call(&br, 204));
            g.admit(&br, 204);
        }
        g.record(&br, 300, false);
        assert!(g.blocks_call(&br, 300));
        g.record(&br, 301, false);
        assert!(!g.blocks_call(&br, 302));
        g.admit(&br, 302);
        g.record(&br, 303, true);
        assert!(!g.blocks_call(&br, 304));
    }
}
