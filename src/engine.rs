//! The discrete-event engine: a queue of events ordered by time, first-in
//! first-out among equal times. It knows nothing of Ethernet.
//!
//! The queue is a radix heap: simulated time never goes backwards, so every
//! time pushed is at least the last time popped, and times can be binned by
//! where they first differ from it. Bins go by digits of [`DIGIT_BITS`] bits:
//! a time lands in the bin of the highest digit in which it differs from the
//! last time popped and of its value in that digit. A pop empties the lowest
//! non-empty bin into lower ones; each move takes an event down at least one
//! digit, not one bit (fewer moves per event than binary bins), instead of
//! sifting through log2(n)
//! levels of a binary heap on every operation, which keeps the cost per
//! event nearly flat as the number of pending events (one timer per
//! station) grows.
//!
//! Ties need no sequence number: every bin holds its events in the order
//! they were pushed. A bin is appended to by pushes, and filled from a
//! higher bin only while it is empty (the bin being emptied is the lowest
//! non-empty one, and its events all land in lower bins), in that bin's
//! order; so bin 0, which holds the events at exactly the last time popped,
//! hands them out first-in first-out.

/// Simulated time in integer picoseconds.
pub type Time = u64;

/// Bits per digit of the bins.
const DIGIT_BITS: u32 = 6;
/// Values of a digit (at most 64: a block's bins are the bits of a u64).
const RADIX: usize = 1 << DIGIT_BITS;
const _: () = assert!(RADIX <= 64);
/// Digits of a time.
const LEVELS: usize = 64_usize.div_ceil(DIGIT_BITS as usize);
/// Bins: 0 for the time equal to the last popped one, then one per digit
/// and value, in time order: `(level + 1) * RADIX + value` (the rest of
/// the first block of RADIX is unused).
const BINS: usize = (LEVELS + 1) * RADIX;

/// Events an emptied bin keeps room for.
const KEEP: usize = 1024;

/// Popped events at the head of bin 0 after which they are let go, once
/// they are at least as many as the events still there: a run whose events
/// keep coming at one instant (a retry with no wait over a network with no
/// delay) would otherwise keep every event it ever handled at that instant.
const COMPACT: usize = 1 << 16;

/// A future-event list. Events scheduled for the same time come out in the
/// order they were scheduled, which makes runs deterministic.
pub struct EventQueue<E> {
    /// Bin 0 holds events at exactly `last`; bin `(level + 1) * RADIX + v`
    /// those whose time first differs from `last` in digit `level` (counted
    /// from the least significant) and has the value v there. Each in push
    /// order.
    bins: Vec<Bin<E>>,
    /// Events of bin 0 before this one have been popped.
    head: usize,
    /// The last time popped; every time in the queue is at least this.
    last: Time,
    /// Per block of RADIX bins, bit v set when bin `block * RADIX + v` may
    /// be non-empty; and bit `block` of `levels` set when any of that
    /// block's may be (block 0, bin 0's, is never looked at).
    occupied: [u64; LEVELS + 1],
    levels: u64,
    len: usize,
}

/// One bin: its events, its least time (Time::MAX when empty) and a copy of
/// the first event at that time (kept here, where [`EventQueue::peek`] finds
/// it without reaching into a large bin). On a cache line of its own: filing
/// an event touches the line and the end of the list, nothing else.
#[repr(align(64))]
struct Bin<E> {
    min: Time,
    first: Option<E>,
    items: Vec<(Time, E)>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bin of `time` when the last time popped is `last` (`time >= last`).
#[inline]
fn bin(time: Time, last: Time) -> usize {
    let x = time ^ last;
    if x == 0 {
        return 0;
    }
    let level = (63 - x.leading_zeros()) / DIGIT_BITS;
    let value = (time >> (level * DIGIT_BITS)) as usize & (RADIX - 1);
    (level as usize + 1) * RADIX + value
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            bins: (0..BINS)
                .map(|_| Bin {
                    min: Time::MAX,
                    first: None,
                    items: Vec::new(),
                })
                .collect(),
            head: 0,
            last: 0,
            occupied: [0; LEVELS + 1],
            levels: 0,
            len: 0,
        }
    }

    /// A queue; the capacity is a hint only (bins grow as needed).
    pub fn with_capacity(_n: usize) -> Self {
        Self::new()
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.last
    }

    /// Schedules `event` at `time`, which must not be in the past.
    #[inline]
    pub fn push(&mut self, time: Time, event: impl Into<E>) {
        let event = event.into();
        debug_assert!(time >= self.last, "event scheduled in the past");
        // An event in the past would break the heap's order; the simulation
        // never asks for one, and if it did, it runs now rather than never.
        let time = time.max(self.last);
        self.put(time, event);
        self.len += 1;
    }

    /// Files an event in its bin (no branch on which: bins are filled on
    /// every refill, where a branch would be mispredicted often).
    #[inline]
    fn put(&mut self, time: Time, event: E) {
        let b = bin(time, self.last);
        let bin = &mut self.bins[b];
        bin.items.push((time, event));
        // Selects, not a branch: whether an event is its bin's earliest is
        // a coin toss during a refill.
        let earlier = time < bin.min;
        bin.first = std::hint::select_unpredictable(earlier, Some(event), bin.first);
        bin.min = bin.min.min(time);
        self.occupied[b / RADIX] |= 1 << (b % RADIX);
        self.levels |= 1 << (b / RADIX);
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.head == self.bins[0].items.len() {
            let b = self.lowest()?;
            if self.bins[b].items.len() == 1 {
                // The bin's one event is the earliest: hand it out without
                // filing it in bin 0 first (the other bins stay valid, as
                // for a refill).
                return Some(self.take_single(b));
            }
            self.refill(b);
        }
        let (time, event) = self.bins[0].items[self.head];
        self.head += 1;
        self.len -= 1;
        if self.head >= COMPACT && 2 * self.head >= self.bins[0].items.len() {
            // Amortised: at least as many events were popped as are moved.
            self.bins[0].items.drain(..self.head);
            self.head = 0;
        }
        Some((time, event))
    }

    /// The lowest bin above 0 that may be non-empty.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        let levels = self.levels & !1;
        (levels != 0).then(|| {
            let block = levels.trailing_zeros() as usize;
            block * RADIX + self.occupied[block].trailing_zeros() as usize
        })
    }

    /// Removes the only event of bin `b`, the lowest non-empty one above 0,
    /// and advances the clock to it. Bin 0 must have been popped empty.
    fn take_single(&mut self, b: usize) -> (Time, E) {
        self.leave_for(b);
        self.bins[b].min = Time::MAX;
        let (time, event) = self.bins[b].items[0];
        self.bins[b].items.clear();
        self.last = time;
        self.len -= 1;
        (time, event)
    }

    /// Empties the popped bin 0 and marks bin `b`, about to be emptied,
    /// empty in the occupancy bits.
    #[inline]
    fn leave_for(&mut self, b: usize) {
        self.bins[0].items.clear();
        self.head = 0;
        self.bins[0].min = Time::MAX;
        let (block, value) = (b / RADIX, b % RADIX);
        self.occupied[block] &= !(1 << value);
        if self.occupied[block] == 0 {
            self.levels &= !(1 << block);
        }
    }

    /// Empties bin `b`, the lowest non-empty one above 0, into lower ones,
    /// advancing `last` to its least time (whose events land in bin 0, in
    /// push order). Bin 0 must have been popped empty.
    fn refill(&mut self, b: usize) {
        self.leave_for(b);
        let mut moving = std::mem::take(&mut self.bins[b].items);
        self.last = std::mem::replace(&mut self.bins[b].min, Time::MAX);
        // Every time in bin b agrees with the new minimum down to its digit
        // (block - 1), so each lands in a lower bin; and no other bin changes:
        // the new minimum agrees with the old one above that digit.
        for &(t, e) in &moving {
            self.put(t, e);
        }
        // A large emptied bin gives its memory back: otherwise every bin
        // keeps the largest size it ever had, several times the number of
        // pending events in all (a crowd's timers pass through many bins).
        if moving.capacity() <= KEEP {
            moving.clear();
            self.bins[b].items = moving;
        }
        if self.bins[0].items.capacity() > KEEP && self.bins[0].items.len() <= KEEP / 2 {
            self.bins[0].items.shrink_to(KEEP);
        }
    }

    /// The time of the earliest event, without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if self.head < self.bins[0].items.len() {
            return Some(self.last);
        }
        self.lowest().map(|b| self.bins[b].min)
    }

    /// The event that [`EventQueue::pop`] would return now (events pushed
    /// before that pop may come first). For prefetching its data.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        if let Some((_, e)) = self.bins[0].items.get(self.head) {
            return Some(e);
        }
        self.bins[self.lowest()?].first.as_ref()
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
                let peeked = q.peek().copied();
                popped.push(q.pop().unwrap());
                assert_eq!(peeked, popped.last().map(|p| p.1));
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

    #[test]
    fn large_bins_keep_order_when_their_memory_is_given_back() {
        // 100 000 pending events: bins far above KEEP are emptied, freed and
        // refilled; the order must be the sorted one all the same.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut q = EventQueue::new();
        let mut reference = Vec::new();
        for id in 0..100_000u64 {
            let t = rng.random_range(0..1u64 << 36) & !0xfff;
            q.push(t, id);
            reference.push((t, id));
        }
        reference.sort();
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(popped, reference);
        // Every bin above 0 has been emptied, and kept at most KEEP's room.
        assert!(q.bins[1..].iter().all(|b| b.items.capacity() <= KEEP));
    }

    #[test]
    fn events_at_one_instant_do_not_pile_up() {
        // A loop at one instant: each event popped schedules the next at the
        // same time. Bin 0 holds the few pending, not all ever handled.
        let mut q = EventQueue::new();
        for id in 0..10u64 {
            q.push(7, id);
        }
        let mut seen = Vec::new();
        for _ in 0..1_000_000 {
            let (t, id) = q.pop().unwrap();
            assert_eq!(t, 7);
            seen.push(id);
            q.push(7, id + 10);
        }
        assert!(seen.iter().enumerate().all(|(k, &id)| id == k as u64));
        assert_eq!(q.len(), 10);
        assert!(q.bins[0].items.len() <= 2 * COMPACT + 10);
        q.push(8, 99u64);
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest.len(), 11);
        assert_eq!(rest[10], (8, 99));
    }
}
