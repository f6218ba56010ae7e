//! A signal as the signal index holds it, and the size of the index's
//! leaves.

use crate::engine::Time;

/// One signal as the index sees it, in 24 bytes: its end as a length from
/// its start (see [`LONGEST`]), with whether that end is final in the
/// length's top bit.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key {
    pub(super) id: u64,
    pub(super) start: Time,
    len_fixed: u32,
    /// The sender's rank in position order.
    pub(super) rank: u32,
}

/// The longest signal a [`Key`] holds, in ps (2.1 ms: a 1518-byte frame at
/// 10 Mb/s is 1.21 ms on the wire). A run whose signals may be longer does
/// without the index (see `Sim::new`).
pub(super) const LONGEST: Time = (FIXED - 1) as Time;

const FIXED: u32 = 1 << 31;

impl Key {
    /// Signal `id` of the station at `rank`, on [start, end), its end not
    /// final.
    #[inline]
    pub(super) fn new(id: u64, start: Time, end: Time, rank: u32) -> Key {
        Key {
            id,
            start,
            len_fixed: Key::len(start, end),
            rank,
        }
    }

    #[inline]
    fn len(start: Time, end: Time) -> u32 {
        match u32::try_from(end - start) {
            Ok(len) if len < FIXED => len,
            _ => panic!("a signal longer than the bus index holds"),
        }
    }

    #[inline]
    pub(super) fn end(&self) -> Time {
        self.start + (self.len_fixed & !FIXED) as Time
    }

    #[inline]
    pub(super) fn fixed(&self) -> bool {
        self.len_fixed & FIXED != 0
    }

    /// The signal now ends at `end`, for good.
    #[inline]
    pub(super) fn fix(&mut self, end: Time) {
        self.len_fixed = Key::len(self.start, end) | FIXED;
    }
}

/// Stations per leaf of the trees (a bucket): a leaf's signals are scanned,
/// which keeps the trees shallow and small enough to stay in cache (smaller
/// buckets make deeper trees, whose node updates and cache misses cost more
/// than the shorter scans save).
pub(super) const BUCKET: usize = 256;

#[cfg(test)]
mod tests {
    use super::{Key, LONGEST};

    /// A key gives back what it was made with, at the limits of its fields,
    /// and is 24 bytes.
    #[test]
    fn keys_hold_their_signals_at_the_limits() {
        assert_eq!(std::mem::size_of::<Key>(), 24);
        let start = 1 << 60;
        let top = u32::MAX;
        let mut k = Key::new(u64::MAX, start, start + LONGEST, top);
        assert_eq!(
            (k.id, k.start, k.end(), k.rank, k.fixed()),
            (u64::MAX, start, start + LONGEST, top, false)
        );
        k.fix(start + 1);
        assert_eq!((k.end(), k.rank, k.fixed()), (start + 1, top, true));
        k.fix(start + LONGEST);
        assert_eq!((k.end(), k.rank, k.fixed()), (start + LONGEST, top, true));
        let k = Key::new(7, 0, 0, 0);
        assert_eq!((k.end(), k.rank, k.fixed()), (0, 0, false));
    }

    /// A signal too long for a key is refused, never held wrong.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn keys_refuse_longer_signals() {
        Key::new(1, 5, 5 + LONGEST + 1, 0);
    }
}
