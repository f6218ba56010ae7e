//! What channel-aware policies (BLAM) observe of the channel: collision
//! episodes since the last success, updated in O(1) per transmission end.

use crate::engine::Time;

/// What every station can observe of the channel, kept once per run and
/// updated in O(1) per transmission end: the input of channel-aware policies
/// (BLAM). Observation is idealised as instantaneous: propagation delay to the
/// observer is ignored.
#[derive(Clone, Debug, Default)]
pub struct ChannelHistory {
    /// Collision episodes so far; the transmissions of one collision overlap in
    /// time and count once.
    episodes: u64,
    /// `episodes` at the last successful transmission.
    episodes_at_success: u64,
    /// Latest end of a collided transmission seen so far.
    episode_end: Time,
}

impl ChannelHistory {
    /// A collided transmission on [start, end) has ended.
    pub fn observe_collision(&mut self, start: Time, end: Time) {
        // Transmissions of one collision overlap in time (each heard the other
        // while sending), so one that started before the previous collided
        // transmission ended belongs to the same episode.
        if self.episodes == 0 || start >= self.episode_end {
            self.episodes += 1;
        }
        self.episode_end = self.episode_end.max(end);
    }

    /// A transmission ended without collision.
    pub fn observe_success(&mut self) {
        self.episodes_at_success = self.episodes;
    }

    /// Collision episodes on the channel since its last success.
    pub fn collisions_since_success(&self) -> u64 {
        self.episodes - self.episodes_at_success
    }
}

#[cfg(test)]
mod tests {
    use super::ChannelHistory;

    #[test]
    fn channel_history_counts_overlapping_collisions_once() {
        let mut ch = ChannelHistory::default();
        ch.observe_collision(10, 20);
        ch.observe_collision(0, 30); // the other party of the same collision
        assert_eq!(ch.collisions_since_success(), 1);
        ch.observe_collision(40, 50);
        assert_eq!(ch.collisions_since_success(), 2);
        ch.observe_success();
        assert_eq!(ch.collisions_since_success(), 0);
    }
}
