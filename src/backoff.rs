//! Backoff policies: how long a station waits after its n-th collision before it
//! contends again. Pure model: draws only, no parsing.

use crate::engine::Time;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// A validated backoff policy with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum BackoffSpec {
    /// 802.3 truncated binary exponential backoff: after the n-th collision wait
    /// r slots, r uniform on 0..2^k - 1, k = min(n, backoff_limit).
    Beb {
        backoff_limit: u32,
        attempt_limit: u32,
    },
}

impl BackoffSpec {
    /// The 802.3 default: k = min(n, 10), discard after 16 attempts.
    pub fn beb() -> Self {
        BackoffSpec::Beb {
            backoff_limit: 10,
            attempt_limit: 16,
        }
    }

    /// Collisions after which the frame is discarded.
    pub fn attempt_limit(&self) -> u32 {
        match self {
            BackoffSpec::Beb { attempt_limit, .. } => *attempt_limit,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            BackoffSpec::Beb { .. } => "beb",
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

/// A station's backoff memory, for policies that keep state between draws.
#[derive(Clone, Debug, Default)]
pub struct BackoffState {}

impl BackoffState {
    pub fn new(_spec: &BackoffSpec) -> Self {
        BackoffState {}
    }

    /// The wait after the `n`-th collision (n >= 1) of the current frame.
    pub fn draw(
        &mut self,
        spec: &BackoffSpec,
        n: u32,
        slot: Time,
        rng: &mut ChaCha8Rng,
    ) -> BackoffDraw {
        match spec {
            BackoffSpec::Beb { backoff_limit, .. } => {
                let k = n.min(*backoff_limit);
                let r = rng.random_range(0..(1u64 << k));
                BackoffDraw {
                    delay: r.saturating_mul(slot),
                    k: Some(k),
                    r: Some(r),
                }
            }
        }
    }

    /// Called when a frame is delivered without a detected collision.
    pub fn on_success(&mut self, _spec: &BackoffSpec) {}

    /// Called when a frame is discarded at the attempt limit.
    pub fn on_discard(&mut self, _spec: &BackoffSpec) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn beb_window_is_truncated_at_the_backoff_limit() {
        let spec = BackoffSpec::beb();
        let mut st = BackoffState::new(&spec);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in 1..=16 {
            let k = n.min(10);
            let mut max = 0;
            for _ in 0..5000 {
                let d = st.draw(&spec, n, 7, &mut rng);
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
}
