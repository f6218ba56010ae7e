//! The discrete-event engine: a queue of events ordered by (time, sequence
//! number), first-in first-out among equal times. It knows nothing of Ethernet.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated time in integer picoseconds.
pub type Time = u64;

/// `key` is (time << 64) | sequence: one integer comparison orders the heap.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed, so that the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A future-event list. Events scheduled for the same time come out in the
/// order they were scheduled, which makes runs deterministic.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            seq: 0,
            now: 0,
        }
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `time`, which must not be in the past.
    pub fn push(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        self.seq += 1;
        self.heap.push(Entry {
            key: (time as u128) << 64 | self.seq as u128,
            event,
        });
    }

    /// Removes the earliest event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.now = (e.key >> 64) as Time;
        Some((self.now, e.event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
