//! The discrete-event engine: a queue of events ordered by (time, sequence
//! number), first-in first-out among equal times. It knows nothing of Ethernet.
//!
//! The queue is a radix heap: simulated time never goes backwards, so every
//! key pushed is at least the last key popped, and keys can be binned by the
//! highest bit in which they differ from it. A pop empties the lowest
//! non-empty bin into lower ones; each event moves down a few bins in its
//! life instead of sifting through log2(n) levels of a binary heap on every
//! operation, which keeps the cost per event nearly flat as the number of
//! pending events (one timer per station) grows.

/// Simulated time in integer picoseconds.
pub type Time = u64;

/// Bins: 0 for the key equal to the last popped one, then one per bit of a
/// 128-bit key.
const BINS: usize = 129;

/// A future-event list. Events scheduled for the same time come out in the
/// order they were scheduled, which makes runs deterministic.
pub struct EventQueue<E> {
    /// `key` is (time << 64) | sequence: unique, and ordered as events must be.
    bins: Vec<Vec<(u128, E)>>,
    /// The last key popped; every key in the queue is larger.
    last: u128,
    /// Bit b set when bin b + 1 is non-empty (bin 0 is checked directly).
    occupied: u128,
    len: usize,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

fn bin(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            bins: (0..BINS).map(|_| Vec::new()).collect(),
            last: 0,
            occupied: 0,
            len: 0,
            seq: 0,
            now: 0,
        }
    }

    /// A queue; the capacity is a hint only (bins grow as needed).
    pub fn with_capacity(_n: usize) -> Self {
        Self::new()
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `time`, which must not be in the past.
    pub fn push(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        // An event in the past would break the heap's order; the simulation
        // never asks for one, and if it did, it runs now rather than never.
        let time = time.max(self.now);
        self.seq += 1;
        let key = (time as u128) << 64 | self.seq as u128;
        let b = bin(key, self.last);
        self.bins[b].push((key, event));
        if b > 0 {
            self.occupied |= 1 << (b - 1);
        }
        self.len += 1;
    }

    /// Removes the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.bins[0].is_empty() {
            if self.occupied == 0 {
                return None;
            }
            let b = self.occupied.trailing_zeros() as usize + 1;
            self.occupied &= !(1 << (b - 1));
            let mut moving = std::mem::take(&mut self.bins[b]);
            let min = moving.iter().map(|(k, _)| *k).min()?;
            self.last = min;
            // Every key in bin b differs from the new minimum only below
            // bit b - 1, so each lands in a lower bin.
            for (k, e) in moving.drain(..) {
                let nb = bin(k, min);
                self.bins[nb].push((k, e));
                if nb > 0 {
                    self.occupied |= 1 << (nb - 1);
                }
            }
            self.bins[b] = moving;
        }
        let (key, event) = self.bins[0].pop()?;
        self.len -= 1;
        self.now = (key >> 64) as Time;
        Some((self.now, event))
    }

    /// The time of the earliest event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some((k, _)) = self.bins[0].last() {
            return Some((k >> 64) as Time);
        }
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        self.bins[b].iter().map(|(k, _)| (k >> 64) as Time).min()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn pops_in_time_order_and_fifo_among_ties() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(1, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        q.push(5, 'e');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1, 'b'), (3, 'd'), (5, 'a'), (5, 'c'), (5, 'e')]
        );
        assert_eq!(q.now(), 5);
    }

    #[test]
    fn matches_a_sorted_reference_under_interleaved_pushes_and_pops() {
        // The discipline a simulation follows: pushes at or after the clock,
        // interleaved with pops. The reference is a stable sort by time.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u64)> = Vec::new();
        let mut id = 0u64;
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..20_000 {
            if rng.random::<f64>() < 0.55 || q.is_empty() {
                let spread: u64 = [1, 1000, 1 << 40][rng.random_range(0..3usize)];
                let t = q.now() + rng.random_range(0..spread);
                q.push(t, id);
                reference.push((t, id));
                id += 1;
            } else {
                assert_eq!(q.peek_time(), reference.iter().map(|r| r.0).min());
                popped.push(q.pop().unwrap());
                // The earliest time, first pushed among equals.
                let k = (0..reference.len())
                    .min_by_key(|&k| (reference[k].0, reference[k].1))
                    .unwrap();
                expected.push(reference.remove(k));
            }
            assert_eq!(q.len(), reference.len());
        }
        assert_eq!(popped, expected);
    }
}
