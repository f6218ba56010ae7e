//! Backoff policies: how long a station waits after its n-th collision before it
//! contends again. Pure model: draws and per-station memory, no parsing.
//!
//! Conventions (docs/policies.md has the formulas, parameters and sources):
//! - `n` is the number of collisions of the current frame, 1 after the first.
//! - Slot-window policies (beb, exponential, fixed, linear-window, geometric,
//!   blam, mild) draw a whole number of slots `r`; the wait is r slots.
//! - Time-based exponential policies use the exponent n - 1, so the first retry
//!   waits `base` (the retry helpers' "initial delay"): t = min(cap, base * 2^(n-1)).
//! - Every wait is counted from the end of the jam (or, without collision
//!   detection, from the end of the failed frame).

mod channel;
mod expr;

pub use channel::ChannelHistory;
pub use expr::{
    Context, ExprPolicy, PolicyFault, PolicyKey, PolicyWorld, WaitUnit, Windows, BUS_VARS,
    MAX_STATE, SERVICE_VARS,
};

use crate::engine::Time;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// A validated backoff policy with its parameters. Durations are picoseconds,
/// windows are slots.
#[derive(Clone, Debug, PartialEq)]
pub enum BackoffSpec {
    /// 802.3 truncated binary exponential backoff: after the n-th collision wait
    /// r slots, r uniform on 0..2^k - 1, k = min(n, backoff_limit).
    Beb {
        backoff_limit: u32,
        attempt_limit: u32,
    },
    /// r uniform on 0..W-1 slots, W = min(max_window, ceil(factor^n)).
    Exponential {
        factor: f64,
        max_window: u64,
        attempt_limit: u32,
    },
    /// r uniform on 0..window-1 slots, whatever n.
    Fixed { window: u64, attempt_limit: u32 },
    /// Always `delay`.
    Constant { delay: Time, attempt_limit: u32 },
    /// base * n, deterministic.
    Linear { base: Time, attempt_limit: u32 },
    /// r uniform on 0..step*n slots, both ends included.
    LinearWindow { step: u64, attempt_limit: u32 },
    /// min(cap, base * 2^(n-1)), deterministic.
    ExponentialNoJitter {
        base: Time,
        cap: Time,
        attempt_limit: u32,
    },
    /// min(cap, base * 2^(n-1)) + U(0, jitter); with `cap_after_jitter`,
    /// min(cap, base * 2^(n-1) + U(0, jitter)).
    AdditiveJitter {
        base: Time,
        cap: Time,
        jitter: Time,
        cap_after_jitter: bool,
        attempt_limit: u32,
    },
    /// d_1 = min(cap, base) + U(0, jitter); d_n = min(cap, d_(n-1) * factor) + U(0, jitter).
    CompoundingJitter {
        base: Time,
        cap: Time,
        factor: f64,
        jitter: Time,
        attempt_limit: u32,
    },
    /// max(0, min(cap, base * 2^(n-1)) * (1 + U(-f, f))).
    ProportionalJitter {
        base: Time,
        cap: Time,
        f: f64,
        attempt_limit: u32,
    },
    /// U(0, min(cap, base * 2^(n-1))).
    FullJitter {
        base: Time,
        cap: Time,
        attempt_limit: u32,
    },
    /// t/2 + U(0, t/2), t = min(cap, base * 2^(n-1)).
    EqualJitter {
        base: Time,
        cap: Time,
        attempt_limit: u32,
    },
    /// d = min(cap, U(base, 3 * previous d)), previous d = base for a new frame.
    DecorrelatedJitter {
        base: Time,
        cap: Time,
        attempt_limit: u32,
    },
    /// Transmit in each slot with probability p: r geometric on {0, 1, ...},
    /// P(r = k) = (1 - p)^k p.
    Geometric { p: f64, attempt_limit: u32 },
    /// Molle's BLAM: BEB windows driven by the collisions the station observes on
    /// the channel since the channel's last success, not by its own frame's.
    Blam {
        backoff_limit: u32,
        attempt_limit: u32,
    },
    /// MACAW's multiplicative increase, linear decrease: a window W kept across
    /// frames; W = min(max, ceil(W * factor)) on each collision of the station,
    /// W = max(min, W - decrease) on each success; r uniform on 0..W-1 slots.
    Mild {
        min_window: u64,
        max_window: u64,
        factor: f64,
        decrease: u64,
        attempt_limit: u32,
    },
    /// A wait written in the expression language (`kind = "expr"`).
    Expr(Arc<ExprPolicy>),
    /// r uniform on 0..w-1 slots, w from a table (`kind = "windows"`).
    Windows(Arc<Windows>),
}

impl BackoffSpec {
    /// Whether the policy remembers anything between draws (the previous
    /// wait, MILD's window): the others draw the same from a fresh
    /// [`BackoffState`] as from one that saw every collision and success.
    pub fn keeps_state(&self) -> bool {
        match self {
            BackoffSpec::CompoundingJitter { .. }
            | BackoffSpec::DecorrelatedJitter { .. }
            | BackoffSpec::Mild { .. } => true,
            BackoffSpec::Expr(p) => p.keeps_state(),
            _ => false,
        }
    }

    /// The 802.3 default: k = min(n, 10), discard after 16 attempts.
    pub fn beb() -> Self {
        BackoffSpec::Beb {
            backoff_limit: 10,
            attempt_limit: 16,
        }
    }

    /// Collisions after which the frame is discarded.
    pub fn attempt_limit(&self) -> u32 {
        use BackoffSpec::*;
        match self {
            Beb { attempt_limit, .. }
            | Exponential { attempt_limit, .. }
            | Fixed { attempt_limit, .. }
            | Constant { attempt_limit, .. }
            | Linear { attempt_limit, .. }
            | LinearWindow { attempt_limit, .. }
            | ExponentialNoJitter { attempt_limit, .. }
            | AdditiveJitter { attempt_limit, .. }
            | CompoundingJitter { attempt_limit, .. }
            | ProportionalJitter { attempt_limit, .. }
            | FullJitter { attempt_limit, .. }
            | EqualJitter { attempt_limit, .. }
            | DecorrelatedJitter { attempt_limit, .. }
            | Geometric { attempt_limit, .. }
            | Blam { attempt_limit, .. }
            | Mild { attempt_limit, .. } => *attempt_limit,
            Expr(p) => p.attempt_limit,
            Windows(w) => w.attempt_limit,
        }
    }

    /// The policy's name as a scenario writes it.
    pub fn kind(&self) -> &'static str {
        use BackoffSpec::*;
        match self {
            Beb { .. } => "beb",
            Exponential { .. } => "exponential",
            Fixed { .. } => "fixed",
            Constant { .. } => "constant",
            Linear { .. } => "linear",
            LinearWindow { .. } => "linear-window",
            ExponentialNoJitter { .. } => "exponential-no-jitter",
            AdditiveJitter { .. } => "additive-jitter",
            CompoundingJitter { .. } => "compounding-jitter",
            ProportionalJitter { .. } => "proportional-jitter",
            FullJitter { .. } => "full-jitter",
            EqualJitter { .. } => "equal-jitter",
            DecorrelatedJitter { .. } => "decorrelated-jitter",
            Geometric { .. } => "geometric",
            Blam { .. } => "blam",
            Mild { .. } => "mild",
            Expr(_) => "expr",
            Windows(_) => "windows",
        }
    }

    /// The longest wait the policy can draw for any n (picoseconds, as f64 so
    /// that validation can refuse parameters whose waits would overflow the
    /// clock). Geometric draws are unbounded and clamped in [`BackoffState::draw`].
    pub fn max_delay_ps(&self, slot_ps: Time, attempt_limit_n: u32) -> f64 {
        use BackoffSpec::*;
        let slot = slot_ps as f64;
        let n = attempt_limit_n.max(1) as f64;
        match *self {
            Beb { backoff_limit, .. } | Blam { backoff_limit, .. } => {
                2f64.powi(backoff_limit as i32) * slot
            }
            Exponential { max_window, .. } => max_window as f64 * slot,
            Fixed { window, .. } => window as f64 * slot,
            Constant { delay, .. } => delay as f64,
            Linear { base, .. } => base as f64 * n,
            LinearWindow { step, .. } => step as f64 * n * slot,
            ExponentialNoJitter { cap, .. }
            | FullJitter { cap, .. }
            | EqualJitter { cap, .. }
            | DecorrelatedJitter { cap, .. } => cap as f64,
            AdditiveJitter { cap, jitter, .. } | CompoundingJitter { cap, jitter, .. } => {
                cap as f64 + jitter as f64
            }
            ProportionalJitter { cap, f, .. } => cap as f64 * (1.0 + f),
            // Checked by sampling when read, and at each draw.
            Geometric { .. } | Expr(_) => 0.0,
            Mild { max_window, .. } => max_window as f64 * slot,
            Windows(ref w) => w.windows.iter().copied().max().unwrap_or(1) as f64 * slot,
        }
    }
}

/// One backoff decision, with what a trace shows of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackoffDraw {
    /// The wait, counted from the end of the jam.
    pub delay: Time,
    /// The exponent used, for slot-window policies.
    pub k: Option<u32>,
    /// The number of slots drawn, for slot-based policies.
    pub r: Option<u64>,
}

impl BackoffDraw {
    fn slots(r: u64, slot: Time, k: Option<u32>) -> Self {
        BackoffDraw {
            delay: r.saturating_mul(slot),
            k,
            r: Some(r),
        }
    }

    fn time(delay: Time) -> Self {
        BackoffDraw {
            delay,
            k: None,
            r: None,
        }
    }
}

/// A station's backoff memory, for policies that keep state between draws:
/// the previous wait of the current frame (compounding and decorrelated
/// jitter) and MILD's window, which persists across frames.
#[derive(Clone, Debug)]
pub struct BackoffState {
    /// The previous wait of this frame, if any.
    prev: Option<Time>,
    /// MILD's contention window in slots.
    window: u64,
    /// An expression policy's state variables.
    state: Box<[f64]>,
}

/// min(cap, base * 2^e) in exact integers, saturating.
fn doubled(base: Time, cap: Time, e: u32) -> Time {
    let t = if e >= 64 {
        if base == 0 {
            0
        } else {
            Time::MAX
        }
    } else {
        base.checked_mul(1u64 << e).unwrap_or(Time::MAX)
    };
    t.min(cap)
}

/// Uniform on [lo, hi] picoseconds (lo when hi < lo).
fn uniform_ps(rng: &mut ChaCha8Rng, lo: Time, hi: Time) -> Time {
    if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    }
}

/// Uniform on 0..window-1 (0 for an empty window).
fn uniform_slots(rng: &mut ChaCha8Rng, window: u64) -> u64 {
    if window <= 1 {
        0
    } else {
        rng.random_range(0..window)
    }
}

impl BackoffState {
    pub fn new(spec: &BackoffSpec) -> Self {
        let window = match spec {
            BackoffSpec::Mild { min_window, .. } => *min_window,
            _ => 1,
        };
        let state = match spec {
            BackoffSpec::Expr(p) => p.initial_state(),
            _ => Box::default(),
        };
        BackoffState {
            prev: None,
            window,
            state,
        }
    }

    /// An expression policy's state variables, in `init`'s order.
    pub fn state(&self) -> &[f64] {
        &self.state
    }

    /// Replaces the state variables (a client's, kept across its calls).
    pub fn set_state(&mut self, state: &[f64]) {
        self.state.copy_from_slice(state);
    }

    /// MILD's current window, for tests and traces.
    pub fn mild_window(&self) -> u64 {
        self.window
    }

    /// The wait after the `n`-th collision (n >= 1) of the current frame;
    /// `channel` is what the station has observed of the channel,
    /// `retry_after` the server's Retry-After (0 when none). Only a policy
    /// written as an expression can fail.
    pub fn draw(
        &mut self,
        spec: &BackoffSpec,
        n: u32,
        slot: Time,
        channel: &ChannelHistory,
        retry_after: Time,
        rng: &mut ChaCha8Rng,
    ) -> Result<BackoffDraw, PolicyFault> {
        use BackoffSpec::*;
        let n = n.max(1);
        let e = n - 1;
        Ok(match *spec {
            Beb { backoff_limit, .. } => {
                let k = n.min(backoff_limit);
                let r = rng.random_range(0..(1u64 << k));
                BackoffDraw::slots(r, slot, Some(k))
            }
            Exponential {
                factor, max_window, ..
            } => {
                let w = factor.powi(n.min(i32::MAX as u32) as i32).ceil();
                let w = if w >= max_window as f64 {
                    max_window
                } else {
                    w as u64
                };
                BackoffDraw::slots(uniform_slots(rng, w), slot, None)
            }
            Fixed { window, .. } => BackoffDraw::slots(uniform_slots(rng, window), slot, None),
            Constant { delay, .. } => BackoffDraw::time(delay),
            Linear { base, .. } => BackoffDraw::time(base.saturating_mul(n as Time)),
            LinearWindow { step, .. } => {
                let top = step.saturating_mul(n as u64);
                BackoffDraw::slots(rng.random_range(0..=top), slot, None)
            }
            ExponentialNoJitter { base, cap, .. } => BackoffDraw::time(doubled(base, cap, e)),
            AdditiveJitter {
                base,
                cap,
                jitter,
                cap_after_jitter,
                ..
            } => {
                let j = uniform_ps(rng, 0, jitter);
                let d = if cap_after_jitter {
                    doubled(base, Time::MAX, e).saturating_add(j).min(cap)
                } else {
                    doubled(base, cap, e) + j
                };
                BackoffDraw::time(d)
            }
            CompoundingJitter {
                base,
                cap,
                factor,
                jitter,
                ..
            } => {
                let grown = match self.prev {
                    None => base.min(cap),
                    Some(p) => {
                        let g = p as f64 * factor;
                        if g >= cap as f64 {
                            cap
                        } else {
                            g.round() as Time
                        }
                    }
                };
                // The jitter is part of the delay the next one grows from.
                let d = grown + uniform_ps(rng, 0, jitter);
                self.prev = Some(d);
                BackoffDraw::time(d)
            }
            ProportionalJitter { base, cap, f, .. } => {
                let t = doubled(base, cap, e) as f64;
                let u: f64 = rng.random();
                let d = (t * (1.0 + f * (2.0 * u - 1.0))).max(0.0);
                BackoffDraw::time(d.round() as Time)
            }
            FullJitter { base, cap, .. } => {
                BackoffDraw::time(uniform_ps(rng, 0, doubled(base, cap, e)))
            }
            EqualJitter { base, cap, .. } => {
                let t = doubled(base, cap, e);
                let half = t / 2;
                BackoffDraw::time(half + uniform_ps(rng, 0, t - half))
            }
            DecorrelatedJitter { base, cap, .. } => {
                let prev = self.prev.unwrap_or(base);
                let d = uniform_ps(rng, base, prev.saturating_mul(3)).min(cap);
                self.prev = Some(d);
                BackoffDraw::time(d)
            }
            Geometric { p, .. } => {
                let r = if p >= 1.0 {
                    0
                } else {
                    // Inverse CDF: r = floor(ln U / ln(1 - p)), U uniform on (0, 1].
                    let u = 1.0 - rng.random::<f64>();
                    let r = (u.ln() / (1.0 - p).ln()).floor();
                    // Clamp so that the wait fits the clock (unreachable for
                    // the validated p >= 1e-6 and slot <= 1 s: r < 4e7).
                    let max = (1e18 / slot.max(1) as f64).floor();
                    r.min(max) as u64
                };
                BackoffDraw::slots(r, slot, None)
            }
            Blam { backoff_limit, .. } => {
                // The station's own collision is on the channel too, so the
                // count is at least 1 after a collision.
                let m = channel.collisions_since_success().max(1);
                let k = m.min(backoff_limit as u64) as u32;
                let r = rng.random_range(0..(1u64 << k));
                BackoffDraw::slots(r, slot, Some(k))
            }
            Mild { .. } => BackoffDraw::slots(uniform_slots(rng, self.window), slot, None),
            Windows(ref w) => BackoffDraw::slots(uniform_slots(rng, w.window(n)), slot, None),
            Expr(ref p) => {
                let c = Context {
                    slot,
                    observed: channel.collisions_since_success(),
                    retry_after,
                };
                let (delay, w) = p.wait_ps(&self.state, n, self.prev, &c, rng)?;
                self.prev = Some(delay);
                let whole = p.unit == WaitUnit::Slots && w.fract() == 0.0;
                BackoffDraw {
                    delay,
                    k: None,
                    r: whole.then_some(w as u64),
                }
            }
        })
    }

    /// Called on each collision of the station's own frame (each failed
    /// attempt of a call), the `n`-th, before the draw (or the discard)
    /// that follows it.
    pub fn on_collision(&mut self, spec: &BackoffSpec, n: u32, c: &Context) {
        if let BackoffSpec::Expr(p) = spec {
            p.update(false, &mut self.state, n, self.prev, c);
            return;
        }
        if let BackoffSpec::Mild {
            max_window, factor, ..
        } = *spec
        {
            let w = (self.window as f64 * factor).ceil();
            self.window = if w >= max_window as f64 {
                max_window
            } else {
                w as u64
            };
        }
    }

    /// Called when a frame is sent without a detected collision (a call
    /// succeeds), after `n` collisions (failures).
    pub fn on_success(&mut self, spec: &BackoffSpec, n: u32, c: &Context) {
        if let BackoffSpec::Expr(p) = spec {
            p.update(true, &mut self.state, n, self.prev, c);
        }
        self.prev = None;
        if let BackoffSpec::Mild {
            min_window,
            decrease,
            ..
        } = *spec
        {
            self.window = self.window.saturating_sub(decrease).max(min_window);
        }
    }

    /// Called when a frame is discarded at the attempt limit.
    pub fn on_discard(&mut self, _spec: &BackoffSpec) {
        self.prev = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn beb_window_is_truncated_at_the_backoff_limit() {
        let spec = BackoffSpec::beb();
        let mut st = BackoffState::new(&spec);
        let ch = ChannelHistory::default();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in 1..=16 {
            let k = n.min(10);
            let mut max = 0;
            for _ in 0..5000 {
                let d = st.draw(&spec, n, 7, &ch, 0, &mut rng).unwrap();
                assert_eq!(d.k, Some(k));
                let r = d.r.unwrap();
                assert!(r < 1 << k);
                assert_eq!(d.delay, r * 7);
                max = max.max(r);
            }
            // With 5000 draws the top of a window of at most 1024 is reached
            // or nearly: the chance of missing the top 1 % is 0.99^5000.
            assert!(max as f64 >= 0.99 * ((1u64 << k) - 1) as f64);
        }
    }

    #[test]
    fn doubling_saturates_and_caps() {
        assert_eq!(doubled(3, 100, 0), 3);
        assert_eq!(doubled(3, 100, 4), 48);
        assert_eq!(doubled(3, 100, 5), 96);
        assert_eq!(doubled(3, 100, 6), 100);
        assert_eq!(doubled(3, Time::MAX, 70), Time::MAX);
        assert_eq!(doubled(0, 100, 70), 0);
    }

    #[test]
    fn mild_increases_multiplicatively_and_decreases_linearly() {
        let spec = BackoffSpec::Mild {
            min_window: 2,
            max_window: 10,
            factor: 1.5,
            decrease: 1,
            attempt_limit: 16,
        };
        let mut st = BackoffState::new(&spec);
        let mut seen = vec![st.mild_window()];
        for _ in 0..5 {
            st.on_collision(&spec, 1, &Context::default());
            seen.push(st.mild_window());
        }
        assert_eq!(seen, [2, 3, 5, 8, 10, 10]);
        for _ in 0..20 {
            st.on_success(&spec, 1, &Context::default());
        }
        assert_eq!(st.mild_window(), 2);
    }
}
