//! A set of station ranks that answers "the nearest member on each side of
//! a rank": which stations are sending, in position order, for the bus
//! index (see [`super::signal_index::BusIndex::nearest_sending`]).

/// A bit per rank, and above it a bit per word of the level below, over
/// four levels (2^24 ranks, [`crate::ethernet::MAX_STATIONS`], take one
/// word at the top): an insertion, a removal or a look for the nearest
/// member on one side touches at most one word per level, whatever the
/// number of members. It takes an eighth of a byte per rank, and 1/64 of
/// that again per level above.
#[derive(Debug)]
pub(super) struct RankSet {
    /// The levels' words, level 0 (a bit per rank) first; bit b of level
    /// l + 1 is set exactly when word b of level l is not zero.
    words: Vec<u64>,
    /// Where each level's words begin in `words`.
    base: [usize; LEVELS],
}

/// Levels of a [`RankSet`].
const LEVELS: usize = 4;
const _: () = assert!(1 << (6 * LEVELS) >= crate::ethernet::MAX_STATIONS);

impl RankSet {
    /// An empty set over ranks `0..n` (n at most 2^24).
    pub(super) fn new(n: usize) -> Self {
        assert!(n as u64 <= 1 << (6 * LEVELS), "{n} ranks");
        let mut base = [0; LEVELS];
        let mut at = 0;
        let mut bits = n.max(1);
        for b in &mut base {
            *b = at;
            let words = bits.div_ceil(64);
            at += words;
            bits = words;
        }
        RankSet {
            words: vec![0; at],
            base,
        }
    }

    /// Whether `r` is a member.
    pub(super) fn contains(&self, r: usize) -> bool {
        self.words[self.base[0] + r / 64] >> (r % 64) & 1 == 1
    }

    /// Starts loading the word that holds `r` (the levels above are few
    /// and mostly cached); a hint, no effect on results.
    #[inline]
    pub(super) fn prefetch(&self, r: usize) {
        if let Some(w) = self.words.get(self.base[0] + r / 64) {
            crate::mem::prefetch_lines(w);
        }
    }

    /// Adds `r`.
    #[inline]
    pub(super) fn insert(&mut self, r: usize) {
        let mut at = r;
        for l in 0..LEVELS {
            let word = &mut self.words[self.base[l] + at / 64];
            let was_empty = *word == 0;
            *word |= 1 << (at % 64);
            if !was_empty {
                break;
            }
            at /= 64;
        }
    }

    /// Takes `r` out (no effect if it is not a member).
    #[inline]
    pub(super) fn remove(&mut self, r: usize) {
        let mut at = r;
        for l in 0..LEVELS {
            let word = &mut self.words[self.base[l] + at / 64];
            *word &= !(1 << (at % 64));
            if *word != 0 {
                break;
            }
            at /= 64;
        }
    }

    /// Empties the set.
    pub(super) fn clear(&mut self) {
        self.words.fill(0);
    }

    /// The greatest member below `r`.
    #[inline]
    pub(super) fn before(&self, r: usize) -> Option<usize> {
        // Climb while the word holding `at` has no member below it, then
        // descend by the highest bits.
        let mut at = r;
        for l in 0..LEVELS {
            let below = self.words[self.base[l] + at / 64] & ((1u64 << (at % 64)) - 1);
            if below != 0 {
                let mut found = at / 64 * 64 + 63 - below.leading_zeros() as usize;
                for lower in (0..l).rev() {
                    let word = self.words[self.base[lower] + found];
                    found = found * 64 + 63 - word.leading_zeros() as usize;
                }
                return Some(found);
            }
            at /= 64;
        }
        None
    }

    /// The least member above `r`.
    #[inline]
    pub(super) fn after(&self, r: usize) -> Option<usize> {
        let mut at = r;
        for l in 0..LEVELS {
            // The bits above `at`'s (none when it is the word's last).
            let above = self.words[self.base[l] + at / 64] & (!1u64).wrapping_shl((at % 64) as u32);
            if above != 0 {
                let mut found = at / 64 * 64 + above.trailing_zeros() as usize;
                for lower in (0..l).rev() {
                    found =
                        found * 64 + self.words[self.base[lower] + found].trailing_zeros() as usize;
                }
                return Some(found);
            }
            at /= 64;
        }
        None
    }

    /// Bytes per rank, for the memory estimate (rounded up).
    pub(super) fn bytes_per_rank() -> usize {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::RankSet;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeSet;

    /// Insertions and removals at random, against an ordered set: every
    /// member test and every nearest member on each side of every rank
    /// agree, over sizes at and across the words' and levels' edges.
    #[test]
    fn nearest_members_match_an_ordered_set() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for n in [1, 2, 63, 64, 65, 127, 4095, 4096, 4097, 300_000] {
            let mut set = RankSet::new(n);
            let mut reference = BTreeSet::new();
            // Dense and sparse phases: from few members to many and back.
            for step in 0..3000 {
                let adding = (step / 500) % 2 == 0;
                let r = rng.random_range(0..n);
                if rng.random_bool(if adding { 0.8 } else { 0.2 }) {
                    set.insert(r);
                    reference.insert(r);
                } else {
                    set.remove(r);
                    reference.remove(&r);
                }
                let mut probes: Vec<usize> = (0..8).map(|_| rng.random_range(0..n)).collect();
                probes.extend([0, n - 1, r]);
                probes.extend(reference.iter().next().copied());
                probes.extend(reference.iter().next_back().copied());
                for q in probes {
                    assert_eq!(set.contains(q), reference.contains(&q), "n {n} step {step}");
                    assert_eq!(
                        set.before(q),
                        reference.range(..q).next_back().copied(),
                        "n {n} step {step} before {q}"
                    );
                    assert_eq!(
                        set.after(q),
                        reference.range(q + 1..).next().copied(),
                        "n {n} step {step} after {q}"
                    );
                }
            }
            set.clear();
            assert!(set.words.iter().all(|&w| w == 0));
            assert_eq!(set.before(n - 1), None);
            assert_eq!(set.after(0), None);
        }
    }

    /// A single member is found from every rank on either side of it, and
    /// its removal leaves the set empty at every level.
    #[test]
    fn one_member_is_found_from_everywhere() {
        let n = 64 * 64 * 3 + 5;
        let mut set = RankSet::new(n);
        for m in [0, 63, 64, 4095, 4096, n - 1] {
            set.insert(m);
            for q in (0..n)
                .step_by(97)
                .chain([0, m.saturating_sub(1), m, m + 1, n - 1])
            {
                let q = q.min(n - 1);
                assert_eq!(set.before(q), (m < q).then_some(m), "member {m} from {q}");
                assert_eq!(set.after(q), (m > q).then_some(m), "member {m} from {q}");
            }
            set.remove(m);
            assert!(set.words.iter().all(|&w| w == 0));
        }
    }
}
