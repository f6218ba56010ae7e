//! A signal as the signal index holds it, and the size of the index's
//! leaves.

use crate::engine::Time;

/// One signal as the index sees it, in 16 bytes: its id relative to its
/// generation's first (see `Gen` in the signal index) with its sender's
/// place in its bucket, its start relative to its generation's first, its
/// end as a length from its start (see [`LONGEST`]) with whether that end
/// is final in the length's top bit, and its sender's propagation time from
/// the origin: a scan of a bucket reads nothing but its list.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key {
    /// Its id less its generation's first, above the sender's rank within
    /// its bucket ([`BUCKET`] ranks, the low [`OFF_BITS`] bits).
    id_off: u32,
    start: u32,
    len_fixed: u32,
    prop: u32,
}

/// The bits of a rank within its bucket.
const OFF_BITS: u32 = BUCKET.trailing_zeros();

/// The ids a generation may take: a key holds its id in the bits above its
/// rank within its bucket (16 777 216 signals, more than a generation of a
/// crowd of 10^6 stations takes).
pub(super) const IDS: u64 = 1 << (32 - OFF_BITS);

/// The longest signal a [`Key`] holds, in ps (2.1 ms: a 1518-byte frame at
/// 10 Mb/s is 1.21 ms on the wire). A run whose signals may be longer does
/// without the index (see `Sim::new`).
pub(super) const LONGEST: Time = (FIXED - 1) as Time;

const FIXED: u32 = 1 << 31;

impl Key {
    /// A place holder in a bucket's unused room (see `Bucket` in the
    /// signal index): never read as a signal.
    pub(super) const NONE: Key = Key {
        id_off: 0,
        start: 0,
        len_fixed: 0,
        prop: 0,
    };

    /// Signal `id` of the station at `rank`, `prop` ps from the origin, on
    /// [start, end), its end not final: id and times relative to its
    /// generation's first (`id` below [`IDS`]; `prop` below 2^32, as the
    /// index holds only buses that short).
    #[inline]
    pub(super) fn new(id: u32, start: Time, end: Time, rank: usize, prop: i64) -> Key {
        debug_assert!(u64::from(id) < IDS);
        Key {
            id_off: id << OFF_BITS | (rank % BUCKET) as u32,
            start: u32::try_from(start).unwrap_or_else(|_| too_long()),
            len_fixed: Key::len(start, end),
            prop: narrow_prop(prop),
        }
    }

    /// Its id less its generation's first.
    #[inline]
    pub(super) fn id(&self) -> u32 {
        self.id_off >> OFF_BITS
    }

    /// Its sender's rank within its bucket.
    #[inline]
    pub(super) fn off(&self) -> usize {
        (self.id_off as usize) % BUCKET
    }

    /// Its sender's propagation time from the origin.
    #[inline]
    pub(super) fn prop(&self) -> i64 {
        i64::from(self.prop)
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

/// A sender's propagation time in the 32 bits a key keeps it in (the index
/// holds only buses below 2^31 ps, see `BusIndex::holds`; a station's place
/// narrows it once, unchecked, after the run has asked that).
#[inline]
pub(super) fn narrow_prop(prop: i64) -> u32 {
    u32::try_from(prop).unwrap_or_else(|_| too_long())
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
    use super::{Key, BUCKET, IDS, LONGEST};

    /// A key gives back what it was made with, at the limits of its fields,
    /// and is 16 bytes.
    #[test]
    fn keys_hold_their_signals_at_the_limits() {
        assert_eq!(std::mem::size_of::<Key>(), 16);
        let start = u32::MAX as u64;
        let top = (IDS - 1) as u32;
        let rank = 5 * BUCKET - 1;
        let far = u32::MAX as i64;
        let mut k = Key::new(top, start, start + LONGEST, rank, far);
        assert_eq!(
            (k.id(), k.start(), k.end(), k.off(), k.prop(), k.fixed()),
            (top, start, start + LONGEST, BUCKET - 1, far, false)
        );
        k.fix(start + 1);
        assert_eq!(
            (k.end(), k.off(), k.id(), k.fixed()),
            (start + 1, BUCKET - 1, top, true)
        );
        k.fix(start + LONGEST);
        assert_eq!((k.end(), k.prop(), k.fixed()), (start + LONGEST, far, true));
        let k = Key::new(7, 0, 0, 3 * BUCKET, 0);
        assert_eq!(
            (k.id(), k.end(), k.off(), k.prop(), k.fixed()),
            (7, 0, 0, 0, false)
        );
    }

    /// A signal too long for a key is refused, never held wrong.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn keys_refuse_longer_signals() {
        Key::new(1, 5, 5 + LONGEST + 1, 0, 0);
    }

    /// So is a start too late in its generation.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn keys_refuse_later_starts() {
        Key::new(1, u32::MAX as u64 + 1, u32::MAX as u64 + 2, 0, 0);
    }
}
