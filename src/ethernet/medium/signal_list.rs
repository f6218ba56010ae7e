//! The list of signals on the bus, in id order: pushed at the back as
//! transmissions start, dropped from the front once they can no longer
//! matter, read by id and scanned from a position (an id less the first
//! held) on. It is held in chunks of a fixed number of signals, each its
//! own allocation: a crowd's wave of signals grows it by chunks without
//! ever copying one, and a chunk goes once its front has passed it (one is
//! kept for the next push, so that a steady run reuses its memory). The
//! list takes the room of the signals it holds plus at most two chunks (the
//! first's dropped signals, the last's free room) and the one kept.

use super::Signal;
use crate::mem::huge_vec;

pub(in crate::ethernet) struct SignalList {
    /// Every chunk but the last is full; the first holds `head` signals
    /// already dropped (released with their chunk).
    chunks: Vec<Vec<Signal>>,
    head: usize,
    len: usize,
    /// The id of the first chunk's first signal (ids are given in push
    /// order from 0), and of the first signal held (`origin + head`, kept
    /// as it is read on every deferral).
    origin: u64,
    first: u64,
    /// Signals per chunk: `1 << shift`; `mask` is one less.
    shift: u32,
    mask: usize,
    /// An emptied chunk, kept for the next one needed.
    spare: Option<Vec<Signal>>,
    /// The stations waiting for a signal's end, for the few signals that
    /// have any (see [`Signal::waiters`]), and the places free among them.
    waiting: Vec<Vec<u32>>,
    free_waiting: Vec<u32>,
}

/// [`Signal::waiters`] of a signal no station waits for.
/// The greatest a signal holds (30 bits: its flags share the word).
pub(in crate::ethernet) const NO_WAITERS: u32 = (1 << 30) - 1;

impl SignalList {
    /// An empty list for a bus of `stations` stations: chunks of about half
    /// a signal per station (small runs keep a few signals, in the cache;
    /// a crowd's waves hold a few per station), from 64 to 65 536 signals
    /// (2 MiB of 32-byte signals; asked for on huge pages, which such a
    /// chunk, placed by the allocator just past a page's start, does not
    /// get: it never spans a whole aligned 2 MiB).
    pub(in crate::ethernet) fn new(stations: usize) -> Self {
        let shift = (stations.next_power_of_two().trailing_zeros())
            .saturating_sub(1)
            .clamp(6, 16);
        SignalList {
            chunks: Vec::new(),
            head: 0,
            len: 0,
            origin: 0,
            first: 0,
            shift,
            mask: (1 << shift) - 1,
            spare: None,
            waiting: Vec::new(),
            free_waiting: Vec::new(),
        }
    }

    /// The id of the first signal held (of the next one pushed, when
    /// none is).
    #[inline]
    pub(in crate::ethernet) fn first_id(&self) -> u64 {
        self.first
    }

    /// The id the next signal pushed takes.
    #[inline]
    pub(in crate::ethernet) fn next_id(&self) -> u64 {
        self.first_id() + self.len as u64
    }

    /// The number of signals held.
    #[inline]
    pub(in crate::ethernet) fn len(&self) -> usize {
        self.len
    }

    /// The chunk and the place in it of the signal `g` places after the
    /// first chunk's first.
    #[inline]
    fn place(&self, g: usize) -> (usize, usize) {
        (g >> self.shift, g & self.mask)
    }

    /// The signal with id `id`, which must be held.
    #[inline]
    pub(in crate::ethernet) fn by_id(&self, id: u64) -> &Signal {
        let (c, o) = self.place((id - self.origin) as usize);
        debug_assert!(c > 0 || o >= self.head);
        &self.chunks[c][o]
    }

    #[inline]
    pub(in crate::ethernet) fn by_id_mut(&mut self, id: u64) -> &mut Signal {
        let (c, o) = self.place((id - self.origin) as usize);
        debug_assert!(c > 0 || o >= self.head);
        &mut self.chunks[c][o]
    }

    #[inline]
    pub(in crate::ethernet) fn front(&self) -> Option<&Signal> {
        self.chunks.first().and_then(|c| c.get(self.head))
    }

    /// Appends a signal; its id must be the next after the last one's.
    #[inline]
    pub(in crate::ethernet) fn push_back(&mut self, s: Signal) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < c.capacity() => c.push(s),
            _ => self.push_in_new_chunk(s),
        }
        self.len += 1;
    }

    #[cold]
    fn push_in_new_chunk(&mut self, s: Signal) {
        let mut chunk = self.spare.take().unwrap_or_else(|| huge_vec(self.mask + 1));
        chunk.push(s);
        self.chunks.push(chunk);
    }

    /// Drops the first signal; its chunk goes once all its signals have.
    #[inline]
    pub(in crate::ethernet) fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.len -= 1;
        self.head += 1;
        self.first += 1;
        if self.head > self.mask {
            self.drop_first_chunk();
        }
    }

    #[cold]
    fn drop_first_chunk(&mut self) {
        let mut chunk = self.chunks.remove(0);
        chunk.clear();
        self.spare = Some(chunk);
        self.head = 0;
        self.origin += (self.mask + 1) as u64;
    }

    /// Station `i`'s deferral waits for the end of signal `id`.
    pub(in crate::ethernet) fn add_waiter(&mut self, id: u64, i: u32) {
        let mut place = self.by_id(id).waiters();
        if place == NO_WAITERS {
            place = self.free_waiting.pop().unwrap_or_else(|| {
                self.waiting.push(Vec::new());
                (self.waiting.len() - 1) as u32
            });
            // A list per signal held that has waiters: 2^30 of them would
            // take over 32 GiB of signals.
            assert!(place < NO_WAITERS, "more than 2^30 waiter lists");
            self.by_id_mut(id).set_waiters(place);
        }
        self.waiting[place as usize].push(i);
    }

    /// The stations of a signal's waiter list `place` (taken from the
    /// signal), in the order they began to wait; the place is free again.
    #[inline]
    pub(in crate::ethernet) fn release_waiters(&mut self, place: u32) -> Vec<u32> {
        if place == NO_WAITERS {
            return Vec::new();
        }
        self.free_waiting.push(place);
        std::mem::take(&mut self.waiting[place as usize])
    }

    /// The signals from position `from` on, in order.
    #[inline]
    pub(in crate::ethernet) fn range(&self, from: usize) -> Range<'_> {
        assert!(from <= self.len, "signal position out of range");
        let (c, o) = self.place(self.head + from);
        match self.chunks.get(c) {
            Some(first) => Range {
                cur: first[o..].iter(),
                rest: self.chunks[c + 1..].iter(),
                left: self.len - from,
            },
            None => Range {
                cur: [].iter(),
                rest: [].iter(),
                left: 0,
            },
        }
    }

    /// The signals from position `from` on, in order, each with its id (a
    /// signal's id is its place in the list: it does not carry it).
    #[inline]
    pub(in crate::ethernet) fn with_ids(
        &self,
        from: usize,
    ) -> std::iter::Zip<std::ops::RangeFrom<u64>, Range<'_>> {
        (self.first + from as u64..).zip(self.range(from))
    }
}

/// The signals of a [`SignalList`] from a position on.
#[derive(Clone)]
pub(in crate::ethernet) struct Range<'a> {
    cur: std::slice::Iter<'a, Signal>,
    rest: std::slice::Iter<'a, Vec<Signal>>,
    left: usize,
}

impl<'a> Iterator for Range<'a> {
    type Item = &'a Signal;

    #[inline]
    fn next(&mut self) -> Option<&'a Signal> {
        loop {
            if let Some(s) = self.cur.next() {
                self.left -= 1;
                return Some(s);
            }
            self.cur = self.rest.next()?.iter();
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a Signal) -> B>(self, init: B, mut f: F) -> B {
        let mut acc = self.cur.fold(init, &mut f);
        for chunk in self.rest {
            acc = chunk.iter().fold(acc, &mut f);
        }
        acc
    }
}

impl ExactSizeIterator for Range<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signal that carries its id as its start, to be told apart.
    fn signal(id: u64) -> Signal {
        Signal::new(0, 0, id, 0)
    }

    /// Against a plain deque, through pushes and pops that cross chunk
    /// boundaries in every phase.
    #[test]
    fn matches_a_deque() {
        let mut list = SignalList::new(1);
        let mut ids = std::collections::VecDeque::new();
        let mut next = 0;
        for round in 0..40 {
            for _ in 0..(round * 7) % 150 {
                list.push_back(signal(next));
                ids.push_back(next);
                next += 1;
            }
            for _ in 0..(round * 5) % 130 {
                if ids.pop_front().is_some() {
                    list.pop_front();
                }
            }
            assert_eq!(list.len(), ids.len());
            assert_eq!(list.front().map(|s| s.start), ids.front().copied());
            assert_eq!(list.first_id(), ids.front().copied().unwrap_or(next));
            assert_eq!(list.next_id(), next);
            for k in [0, ids.len() / 3, ids.len()] {
                let got: Vec<u64> = list.range(k).map(|s| s.start).collect();
                let want: Vec<u64> = ids.range(k..).copied().collect();
                assert_eq!(got, want);
                let ids: Vec<u64> = list.with_ids(k).map(|(id, _)| id).collect();
                assert_eq!(ids, want);
                assert_eq!(list.range(k).len(), want.len());
                assert_eq!(
                    list.range(k).fold(0, |n, s| n + s.start),
                    want.iter().sum::<u64>()
                );
            }
            for &id in &ids {
                assert_eq!(list.by_id(id).start, id);
            }
            if let Some(&id) = ids.back() {
                list.by_id_mut(id).station = 7;
                assert_eq!(
                    list.range(ids.len() - 1)
                        .next()
                        .map(|s| (s.start, s.station)),
                    Some((id, 7))
                );
            }
        }
        assert!(list.chunks.len() <= ids.len() / 64 + 2);
    }

    /// A signal takes 32 bytes (docs/performance.md, "Memory").
    #[test]
    fn a_signal_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Signal>(), 32);
    }

    /// A signal's flags and its waiters' place share a word without
    /// touching each other.
    #[test]
    fn flags_and_waiters_share_a_word() {
        let mut s = signal(3);
        assert!(!s.fixed() && !s.collided() && s.waiters() == NO_WAITERS);
        s.set_waiters(0);
        assert!(!s.fixed() && !s.collided() && s.waiters() == 0);
        s.set_fixed();
        assert!(s.fixed() && !s.collided() && s.waiters() == 0);
        s.set_waiters(NO_WAITERS - 1);
        s.set_collided();
        assert!(s.fixed() && s.collided() && s.waiters() == NO_WAITERS - 1);
        s.set_waiters(NO_WAITERS);
        assert!(s.fixed() && s.collided() && s.waiters() == NO_WAITERS);
        let mut t = signal(4);
        t.set_collided();
        assert!(t.fixed() && t.collided() && t.waiters() == NO_WAITERS);
    }

    /// Waiter lists are kept per signal, in order, and their places reused.
    #[test]
    fn waiters_per_signal() {
        let mut list = SignalList::new(1);
        for id in 0..3 {
            list.push_back(signal(id));
        }
        list.add_waiter(1, 5);
        list.add_waiter(2, 6);
        list.add_waiter(1, 4);
        assert_eq!(list.by_id(0).waiters(), NO_WAITERS);
        let place = list.by_id(1).waiters();
        list.by_id_mut(1).set_waiters(NO_WAITERS);
        assert_eq!(list.release_waiters(place), vec![5, 4]);
        assert_eq!(list.release_waiters(NO_WAITERS), Vec::<u32>::new());
        list.add_waiter(0, 9);
        assert_eq!(list.by_id(0).waiters(), place);
        let other = list.by_id(2).waiters();
        assert_eq!(list.release_waiters(other), vec![6]);
    }
}
