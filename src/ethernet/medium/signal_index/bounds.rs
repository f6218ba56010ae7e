//! The bounds the index keeps: a tree node's bounds of both sides' keys
//! and ids ([`Agg`], [`Node`]), a signal's side keys, the widening, joining
//! and refitting of bounds, and the chunks of a dense bucket list.

use super::super::key::{Key, BUCKET, IDS};
use crate::engine::Time;

/// Bounds of the side keys of a set of signals, relative to their
/// generation's first start (times) and first id (ids): 32 bytes, so that
/// a node's two sides share one cache line. The index holds only runs
/// whose relative keys fit (see [`BusIndex::holds`](super::BusIndex::holds)).
///
/// The least values in one array and the greatest in another, lane by lane
/// (start key [`A`], end key [`B`], the start and end keys of the unfixed
/// signals only [`U`], id [`ID`]), so that widening and joining bounds are
/// a few vector instructions rather than eight comparisons.
///
/// The lanes of the unfixed signals may be wider than theirs: a signal
/// fixed at the end it was held at (nearly every one in a crowd, see
/// [`BusIndex::fix`](super::BusIndex::fix)) leaves every bound as it was,
/// so those lanes may still count it. They are never narrower, and mean
/// nothing in a generation whose signals are all fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub(super) struct Agg {
    pub(super) lo: [i32; 4],
    pub(super) hi: [i32; 4],
}

/// The lanes of [`Agg`].
pub(super) const A: usize = 0;
const B: usize = 1;
pub(super) const U: usize = 2;
pub(super) const ID: usize = 3;

/// A tree node: the bounds of both sides, on one cache line of its own
/// (aligned, so that no node straddles two lines).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(super) struct Node(pub(super) [Agg; 2]);

pub(super) const EMPTY: Agg = Agg {
    lo: [i32::MAX; 4],
    hi: [i32::MIN; 4],
};

/// The node of a subtree that holds no signal.
pub(super) const EMPTY_NODE: Node = Node([EMPTY; 2]);

/// The greatest relative side key the index holds: every key of a
/// generation lies within this of its first start (see
/// [`BusIndex::holds`](super::BusIndex::holds)), so no key meets
/// [`EMPTY`]'s bounds.
pub(super) const KEY_RANGE: i64 = i32::MAX as i64 - 1;

/// Left side (stations before the query station) and right side.
pub(super) const LEFT: usize = 0;
pub(super) const RIGHT: usize = 1;

/// Converts a time to the signed side arithmetic (times stay far below 2^63).
#[inline]
pub(super) fn sx(t: Time) -> i64 {
    t as i64
}

impl Agg {
    #[inline]
    pub(super) fn join(x: &Agg, y: &Agg) -> Agg {
        let mut r = *x;
        r.widen(y);
        r
    }

    /// Widens the bounds by those of `y`, lane by lane.
    #[inline]
    pub(super) fn widen(&mut self, y: &Agg) {
        for (l, m) in self.lo.iter_mut().zip(y.lo) {
            *l = (*l).min(m);
        }
        for (h, m) in self.hi.iter_mut().zip(y.hi) {
            *h = (*h).max(m);
        }
    }

    /// Widens the bounds by a signal's relative side keys and id.
    #[inline]
    pub(super) fn add(&mut self, a: i64, b: i64, id: u32, fixed: bool) {
        debug_assert!(a.abs() <= KEY_RANGE && b.abs() <= KEY_RANGE);
        debug_assert!(id < ID_MASK);
        let (a, b, id) = (a as i32, b as i32, id as i32);
        let (ua, ub) = if fixed { (i32::MAX, i32::MIN) } else { (a, b) };
        self.widen(&Agg {
            lo: [a, b, ua, id],
            hi: [a, b, ub, id],
        });
    }

    /// Widens the bounds a fix can change (those of the ends and of the
    /// unfixed signals) by a signal's relative side keys.
    #[inline]
    fn add_ends(&mut self, a: i64, b: i64, fixed: bool) {
        debug_assert!(a.abs() <= KEY_RANGE && b.abs() <= KEY_RANGE);
        let (a, b) = (a as i32, b as i32);
        self.lo[B] = self.lo[B].min(b);
        self.hi[B] = self.hi[B].max(b);
        if !fixed {
            self.lo[U] = self.lo[U].min(a);
            self.hi[U] = self.hi[U].max(b);
        }
    }

    /// These bounds with those a fix can change emptied.
    pub(super) fn without_ends(mut self) -> Agg {
        for lane in [B, U] {
            (self.lo[lane], self.hi[lane]) = (EMPTY.lo[lane], EMPTY.hi[lane]);
        }
        self
    }

    /// Sets the bounds to [`Agg::join`] of `x` and `y`, every lane, and
    /// returns a word that is zero when nothing changed. Written lane by
    /// lane with the difference gathered by exclusive or, so that the
    /// compiler keeps each half in one vector register (a comparison of
    /// arrays, or a selection of lanes, makes it go lane by lane).
    #[inline]
    pub(super) fn rejoin(&mut self, x: &Agg, y: &Agg) -> i32 {
        let mut diff = 0;
        for l in 0..4 {
            let (lo, hi) = (x.lo[l].min(y.lo[l]), x.hi[l].max(y.hi[l]));
            diff |= (lo ^ self.lo[l]) | (hi ^ self.hi[l]);
            (self.lo[l], self.hi[l]) = (lo, hi);
        }
        diff
    }

    /// Widens the bounds a fix can change by those of `x`.
    #[inline]
    pub(super) fn join_ends(&mut self, x: &Agg) {
        for lane in [B, U] {
            self.lo[lane] = self.lo[lane].min(x.lo[lane]);
            self.hi[lane] = self.hi[lane].max(x.hi[lane]);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lo[A] == i32::MAX
    }

    // The bounds widened to the queries' arithmetic. Those of the starts,
    // ends and ids are those of signals in any node that is not empty;
    // those of the unfixed signals keep their "none" as i64's.

    #[inline]
    pub(super) fn a_min(&self) -> i64 {
        self.lo[A] as i64
    }

    #[inline]
    pub(super) fn a_max(&self) -> i64 {
        self.hi[A] as i64
    }

    #[inline]
    pub(super) fn b_min(&self) -> i64 {
        self.lo[B] as i64
    }

    #[inline]
    pub(super) fn b_max(&self) -> i64 {
        self.hi[B] as i64
    }

    #[inline]
    pub(super) fn ua_min(&self) -> i64 {
        if self.lo[U] == i32::MAX {
            i64::MAX
        } else {
            self.lo[U] as i64
        }
    }

    #[inline]
    pub(super) fn ub_max(&self) -> i64 {
        if self.hi[U] == i32::MIN {
            i64::MIN
        } else {
            self.hi[U] as i64
        }
    }

    /// The least relative id (in a node that is not empty).
    #[inline]
    pub(super) fn id_min(&self) -> u64 {
        u64::from(self.lo[ID] as u32)
    }

    /// The greatest relative id (in a node that is not empty).
    #[inline]
    pub(super) fn id_max(&self) -> u64 {
        u64::from(self.hi[ID] as u32)
    }
}

/// The signal `k`'s (start, end) keys in the left and the right side,
/// relative to its generation's first start.
#[inline]
pub(super) fn side_keys(k: &Key) -> [(i64, i64); 2] {
    let (s, e, p) = (sx(k.start()), sx(k.end()), k.prop());
    [(s - p, e - p), (s + p, e + p)]
}

/// Widens the bounds of both sides by the signal `k`.
#[inline]
pub(super) fn add_key(bounds: &mut [Agg; 2], k: &Key) {
    for (b, (x, e)) in bounds.iter_mut().zip(side_keys(k)) {
        b.add(x, e, k.id(), k.fixed());
    }
}

/// The bounds of both sides after a fix of one of their signals from the
/// side keys `before` to `after` (`was_fixed`: whether its end was final
/// already): widened by its new end, and whether the signal held a bound
/// that the fix may give up (the bounds must then be found again from
/// their signals).
#[inline]
pub(super) fn refit(
    bounds: &mut [Agg; 2],
    before: [(i64, i64); 2],
    after: [(i64, i64); 2],
    was_fixed: bool,
) -> bool {
    let mut held = false;
    for ((l, (a0, b0)), (_, b1)) in bounds.iter_mut().zip(before).zip(after) {
        held |= (!was_fixed && (a0 == l.ua_min() || b0 == l.ub_max()))
            || (b0 == l.b_max() && b1 < b0)
            || (b0 == l.b_min() && b1 > b0);
        l.lo[B] = l.lo[B].min(b1 as i32);
        l.hi[B] = l.hi[B].max(b1 as i32);
    }
    held
}

/// The bounds a fix can change, found again from the signals `keys`.
#[inline]
pub(super) fn rescan_ends(bounds: &mut [Agg; 2], keys: &[Key]) {
    *bounds = bounds.map(Agg::without_ends);
    for k in keys {
        for (l, (x, e)) in bounds.iter_mut().zip(side_keys(k)) {
            l.add_ends(x, e, k.fixed());
        }
    }
}

/// Keys per chunk of a dense bucket list (see [`Chunk`]); the unit tests
/// use short chunks, so that their lists of a few dozen signals take them.
pub(super) const CHUNK: usize = if cfg!(test) { 4 } else { 32 };

/// A bucket list takes chunks once it holds this many keys: a list has
/// chunks exactly while it is this long (lists only grow within a
/// generation), so the list's length, read anyway, tells whether to look
/// at them (see [`dense`]).
pub(super) const CHUNKED: usize = 2 * CHUNK;

/// Whether a bucket list has chunks (see [`CHUNKED`]).
#[inline]
pub(super) fn dense(list: &[Key]) -> bool {
    list.len() >= CHUNKED
}

/// The keys of chunk `c` of a dense list.
#[inline]
pub(super) fn chunk_keys(list: &[Key], c: usize) -> &[Key] {
    &list[c * CHUNK..list.len().min(c * CHUNK + CHUNK)]
}

/// The bounds of [`CHUNK`] consecutive keys of a bucket list (in id order),
/// and the least and greatest rank within the bucket of their senders: a
/// level of the tree below a leaf, kept only for dense lists (a crowd's
/// first waves put up to [`BUCKET`] signals in a bucket). A walk that
/// reaches such a leaf judges its chunks as it judges nodes, and a fix
/// finds again the bounds of one chunk from its keys, and those of the
/// leaf from its chunks, instead of scanning the whole list.
///
/// 64 bytes, as a node: a relative id takes the low [`ID_BITS`] bits of a
/// 32-bit bound (see [`IDS`]), so the top bits of the id bounds hold the
/// least (in `id_min`) and greatest (in `id_max`) rank within the bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Chunk(pub(super) [Agg; 2]);

/// The bits of a relative id; a chunk keeps ranks above them.
const ID_BITS: u32 = IDS.trailing_zeros();
const ID_MASK: u32 = (1 << ID_BITS) - 1;
// A rank within a bucket fits above the ids.
const _: () = assert!(BUCKET <= 1 << (32 - ID_BITS));

impl Chunk {
    pub(super) fn of(keys: &[Key]) -> Chunk {
        let mut c = Chunk([EMPTY; 2]);
        let (mut lo, mut hi) = (u32::MAX, 0);
        for k in keys {
            add_key(&mut c.0, k);
            lo = lo.min(k.off() as u32);
            hi = hi.max(k.off() as u32);
        }
        c.pack(lo, hi);
        c
    }

    /// Puts the ranks `lo` and `hi` above the ids.
    #[inline]
    fn pack(&mut self, lo: u32, hi: u32) {
        for a in &mut self.0 {
            a.lo[ID] = (a.lo[ID] as u32 & ID_MASK | lo << ID_BITS) as i32;
            a.hi[ID] = (a.hi[ID] as u32 & ID_MASK | hi << ID_BITS) as i32;
        }
    }

    /// The least and greatest rank within the bucket.
    #[inline]
    pub(super) fn offs(&self) -> (usize, usize) {
        let a = &self.0[0];
        (
            (a.lo[ID] as u32 >> ID_BITS) as usize,
            (a.hi[ID] as u32 >> ID_BITS) as usize,
        )
    }

    /// The bounds of one side, as a node holds them.
    #[inline]
    pub(super) fn side(&self, side: usize) -> Agg {
        let mut a = self.0[side];
        a.lo[ID] = (a.lo[ID] as u32 & ID_MASK) as i32;
        a.hi[ID] = (a.hi[ID] as u32 & ID_MASK) as i32;
        a
    }

    /// Widens the chunk by the key `k`.
    #[inline]
    pub(super) fn take(&mut self, k: &Key) {
        let (lo, hi) = self.offs();
        let mut c = Chunk([self.side(0), self.side(1)]);
        add_key(&mut c.0, k);
        c.pack(lo.min(k.off()) as u32, hi.max(k.off()) as u32);
        *self = c;
    }
}
