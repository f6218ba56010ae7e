//! A signal as the signal index holds it, and the size of the index's
//! leaves.

use crate::engine::Time;

/// One signal as the index sees it, in 16 bytes: its id and start relative
/// to its generation's first (see `Gen` in the signal index), its end as a
/// length from its start (see [`LONGEST`]), with whether that end is final
/// in the length's top bit.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key {
    /// Its id less its generation's first.
    pub(super) id: u32,
    start: u32,
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
    /// final: id and times relative to its generation's first.
    #[inline]
    pub(super) fn new(id: u32, start: Time, end: Time, rank: u32) -> Key {
        Key {
            id,
            start: u32::try_from(start).unwrap_or_else(|_| too_long()),
            len_fixed: Key::len(start, end),
            rank,
        }
    }

    #[inline]
    fn len(start: Time, end: Time) -> u32 {
        match u32::try_from(end - start) {
            Ok(len) if len < FIXED => len,
            _ => too_long(),
        }
    }

    /// Its start, relative to its generation's first.
    #[inline]
    pub(super) fn start(&self) -> Time {
        self.start as Time
    }

    /// Its end (as known so far), relative to its generation's first start.
    #[inline]
    pub(super) fn end(&self) -> Time {
        self.start() + (self.len_fixed & !FIXED) as Time
    }

    #[inline]
    pub(super) fn fixed(&self) -> bool {
        self.len_fixed & FIXED != 0
    }

    /// The signal now ends at `end` (relative, as [`Key::end`]), for good.
    #[inline]
    pub(super) fn fix(&mut self, end: Time) {
        self.len_fixed = Key::len(self.start(), end) | FIXED;
    }
}

#[cold]
fn too_long() -> ! {
    panic!("a signal longer than the bus index holds")
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
    /// and is 16 bytes.
    #[test]
    fn keys_hold_their_signals_at_the_limits() {
        assert_eq!(std::mem::size_of::<Key>(), 16);
        let start = u32::MAX as u64;
        let top = u32::MAX;
        let mut k = Key::new(top, start, start + LONGEST, top);
        assert_eq!(
            (k.id, k.start(), k.end(), k.rank, k.fixed()),
            (top, start, start + LONGEST, top, false)
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

    /// So is a start too late in its generation.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn keys_refuse_later_starts() {
        Key::new(1, u32::MAX as u64 + 1, u32::MAX as u64 + 2, 0);
    }
}
