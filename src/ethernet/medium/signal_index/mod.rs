//! An index of the signals on the bus by station position, so that carrier
//! sense, deferral, collision detection and delivery checks at one station
//! visit a few tree nodes instead of every signal on the bus. Crowds (a
//! thousand stations released at once put a thousand signals on the bus)
//! need it; from [`CROWD`] stations up the simulator uses it while more than
//! [`ATTACH`] signals can matter, and sets it aside below [`DETACH`].
//!
//! Why this is exact: with integer propagation times p (ps from the bus
//! origin), a signal sent by k on [s, e) is present at j on
//! [s + |p_k - p_j|, e + |p_k - p_j|). For every k left of j (p_k <= p_j) that
//! is [(s - p_k) + p_j, (e - p_k) + p_j): in the *left side* (key = time at j
//! minus p_j) the interval [s - p_k, e - p_k) does not depend on j. Likewise
//! for k right of j in the *right side*, with keys s + p_k and e + p_k. A
//! segment tree over the stations in position order keeps, per side, bounds
//! of the keys of its signals (of all, and of the unfixed ones) and of their
//! ids. A query over the stations left of j (or right of j) skips subtrees
//! whose bounds rule them out, takes a subtree's bound as the answer when the
//! bounds prove it, and looks at single signals only where neither holds. The
//! answers are those of a scan over all signals; only the work differs.
//!
//! The index holds the signals that can still matter to a query in
//! generations: each generation holds the signals of one stretch of time (in
//! a crowd, one collision's wave) in a tree of its own, so that the bounds
//! of one wave's signals never mix with the next one's. A signal stays in
//! its generation from its start until the generation goes as a whole, when
//! no query can look back to a time its signals still mattered (see
//! `Sim::index_gc`); a query skips a generation whose signals have all left
//! every station before the time it asks about.

use super::key::{Key, BUCKET, IDS, LONGEST};
use super::rank_set::RankSet;
use crate::engine::Time;
use std::cell::Cell;

/// From this many stations up, the simulator may keep a [`BusIndex`]. Below
/// it a scan over the signals on the bus is cheaper, even when all the
/// stations send at once.
pub const CROWD: usize = 1024;

/// With [`CROWD`] stations or more, the index is used while more than
/// `ATTACH` signals can matter, and set aside when fewer than `DETACH` can:
/// a crowd released at once needs it, but saturated stations soon settle
/// into collisions of a few, where a scan is several times faster and the
/// index's upkeep is pure cost (docs/performance.md has the figures).
pub const ATTACH: usize = 256;
/// See [`ATTACH`].
pub const DETACH: usize = 32;

/// Generations of signals the memory estimate allows for (see
/// [`BusIndex::bytes_per_station`]).
pub const GENERATIONS: usize = 16;

/// Bounds of the side keys of a set of signals, relative to their
/// generation's first start (times) and first id (ids): 32 bytes, so that
/// a node's two sides share one cache line. The index holds only runs
/// whose relative keys fit (see [`BusIndex::holds`]).
///
/// The least values in one array and the greatest in another, lane by lane
/// (start key [`A`], end key [`B`], the start and end keys of the unfixed
/// signals only [`U`], id [`ID`]), so that widening and joining bounds are
/// a few vector instructions rather than eight comparisons.
///
/// The lanes of the unfixed signals may be wider than theirs: a signal
/// fixed at the end it was held at (nearly every one in a crowd, see
/// [`BusIndex::fix`]) leaves every bound as it was, so those lanes may
/// still count it. They are never narrower, and mean nothing in a
/// generation whose signals are all fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
struct Agg {
    lo: [i32; 4],
    hi: [i32; 4],
}

/// The lanes of [`Agg`].
const A: usize = 0;
const B: usize = 1;
const U: usize = 2;
const ID: usize = 3;

/// A tree node: the bounds of both sides, on one cache line of its own
/// (aligned, so that no node straddles two lines).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
struct Node([Agg; 2]);

const EMPTY: Agg = Agg {
    lo: [i32::MAX; 4],
    hi: [i32::MIN; 4],
};

/// The node of a subtree that holds no signal.
const EMPTY_NODE: Node = Node([EMPTY; 2]);

/// The greatest relative side key the index holds: every key of a
/// generation lies within this of its first start (see
/// [`BusIndex::holds`]), so no key meets [`EMPTY`]'s bounds.
const KEY_RANGE: i64 = i32::MAX as i64 - 1;

impl Agg {
    #[inline]
    fn join(x: &Agg, y: &Agg) -> Agg {
        let mut r = *x;
        r.widen(y);
        r
    }

    /// Widens the bounds by those of `y`, lane by lane.
    #[inline]
    fn widen(&mut self, y: &Agg) {
        for (l, m) in self.lo.iter_mut().zip(y.lo) {
            *l = (*l).min(m);
        }
        for (h, m) in self.hi.iter_mut().zip(y.hi) {
            *h = (*h).max(m);
        }
    }

    /// Widens the bounds by a signal's relative side keys and id.
    #[inline]
    fn add(&mut self, a: i64, b: i64, id: u32, fixed: bool) {
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
    fn without_ends(mut self) -> Agg {
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
    fn rejoin(&mut self, x: &Agg, y: &Agg) -> i32 {
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
    fn join_ends(&mut self, x: &Agg) {
        for lane in [B, U] {
            self.lo[lane] = self.lo[lane].min(x.lo[lane]);
            self.hi[lane] = self.hi[lane].max(x.hi[lane]);
        }
    }

    fn is_empty(&self) -> bool {
        self.lo[A] == i32::MAX
    }

    // The bounds widened to the queries' arithmetic. Those of the starts,
    // ends and ids are those of signals in any node that is not empty;
    // those of the unfixed signals keep their "none" as i64's.

    #[inline]
    fn a_min(&self) -> i64 {
        self.lo[A] as i64
    }

    #[inline]
    fn a_max(&self) -> i64 {
        self.hi[A] as i64
    }

    #[inline]
    fn b_min(&self) -> i64 {
        self.lo[B] as i64
    }

    #[inline]
    fn b_max(&self) -> i64 {
        self.hi[B] as i64
    }

    #[inline]
    fn ua_min(&self) -> i64 {
        if self.lo[U] == i32::MAX {
            i64::MAX
        } else {
            self.lo[U] as i64
        }
    }

    #[inline]
    fn ub_max(&self) -> i64 {
        if self.hi[U] == i32::MIN {
            i64::MIN
        } else {
            self.hi[U] as i64
        }
    }

    /// The least relative id (in a node that is not empty).
    #[inline]
    fn id_min(&self) -> u64 {
        u64::from(self.lo[ID] as u32)
    }

    /// The greatest relative id (in a node that is not empty).
    #[inline]
    fn id_max(&self) -> u64 {
        u64::from(self.hi[ID] as u32)
    }
}

/// The signal `k`'s (start, end) keys in the left and the right side,
/// relative to its generation's first start.
#[inline]
fn side_keys(k: &Key) -> [(i64, i64); 2] {
    let (s, e, p) = (sx(k.start()), sx(k.end()), k.prop());
    [(s - p, e - p), (s + p, e + p)]
}

/// Whether the bounds `held` are those of `exact` but for the lanes of the
/// unfixed signals, where they may be wider (see [`Agg`]).
fn covers(held: &[Agg; 2], exact: &[Agg; 2]) -> bool {
    held.iter().zip(exact).all(|(h, x)| {
        (0..4).all(|l| {
            if l == U {
                h.lo[l] <= x.lo[l] && h.hi[l] >= x.hi[l]
            } else {
                h.lo[l] == x.lo[l] && h.hi[l] == x.hi[l]
            }
        })
    })
}

/// Widens the bounds of both sides by the signal `k`.
#[inline]
fn add_key(bounds: &mut [Agg; 2], k: &Key) {
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
fn refit(
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
fn rescan_ends(bounds: &mut [Agg; 2], keys: &[Key]) {
    *bounds = bounds.map(Agg::without_ends);
    for k in keys {
        for (l, (x, e)) in bounds.iter_mut().zip(side_keys(k)) {
            l.add_ends(x, e, k.fixed());
        }
    }
}

/// Keys per chunk of a dense bucket list (see [`Chunk`]); the unit tests
/// use short chunks, so that their lists of a few dozen signals take them.
const CHUNK: usize = if cfg!(test) { 4 } else { 32 };

/// A bucket list takes chunks once it holds this many keys: a list has
/// chunks exactly while it is this long (lists only grow within a
/// generation), so the list's length, read anyway, tells whether to look
/// at them (see [`dense`]).
const CHUNKED: usize = 2 * CHUNK;

/// Whether a bucket list has chunks (see [`CHUNKED`]).
#[inline]
fn dense(list: &[Key]) -> bool {
    list.len() >= CHUNKED
}

/// The keys of chunk `c` of a dense list.
#[inline]
fn chunk_keys(list: &[Key], c: usize) -> &[Key] {
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
struct Chunk([Agg; 2]);

/// The bits of a relative id; a chunk keeps ranks above them.
const ID_BITS: u32 = IDS.trailing_zeros();
const ID_MASK: u32 = (1 << ID_BITS) - 1;
// A rank within a bucket fits above the ids.
const _: () = assert!(BUCKET <= 1 << (32 - ID_BITS));

impl Chunk {
    fn of(keys: &[Key]) -> Chunk {
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
    fn offs(&self) -> (usize, usize) {
        let a = &self.0[0];
        (
            (a.lo[ID] as u32 >> ID_BITS) as usize,
            (a.hi[ID] as u32 >> ID_BITS) as usize,
        )
    }

    /// The bounds of one side, as a node holds them.
    #[inline]
    fn side(&self, side: usize) -> Agg {
        let mut a = self.0[side];
        a.lo[ID] = (a.lo[ID] as u32 & ID_MASK) as i32;
        a.hi[ID] = (a.hi[ID] as u32 & ID_MASK) as i32;
        a
    }

    /// Widens the chunk by the key `k`.
    #[inline]
    fn take(&mut self, k: &Key) {
        let (lo, hi) = self.offs();
        let mut c = Chunk([self.side(0), self.side(1)]);
        add_key(&mut c.0, k);
        c.pack(lo.min(k.off()) as u32, hi.max(k.off()) as u32);
        *self = c;
    }
}

/// The latest arrivals at a station over a set of signals, in ps
/// (`i64::MIN`: the set holds none); see [`BusIndex::latest`].
#[derive(Clone, Copy, Debug)]
pub struct Latest {
    /// The latest arrival of a start.
    pub start: i64,
    /// The latest arrival of an end.
    pub end: i64,
    /// At least the latest arrival of the end, as held so far, of a signal
    /// whose end is not final (it may count signals fixed at the end they
    /// were held at; see [`Agg`]).
    pub unfixed_end: i64,
}

/// What a query does with a subtree, judged from its bounds.
#[derive(PartialEq)]
enum Step {
    /// Nothing more to learn here (or the bounds were the answer).
    Skip,
    /// Look at the children.
    Descend,
    /// The query is answered: stop the walk.
    Stop,
}

/// Whether the processor has SSE4.1 (see [`BusIndex::sse41`]); a processor
/// of another kind runs the portable build.
fn sse41() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Left side (stations before the query station) and right side.
const LEFT: usize = 0;
const RIGHT: usize = 1;

/// Converts a time to the signed side arithmetic (times stay far below 2^63).
#[inline]
fn sx(t: Time) -> i64 {
    t as i64
}

/// A strict upper bound for [`BusIndex::best_over`] (`Time::MAX`: none).
#[inline]
fn cap(before: Time) -> i64 {
    i64::try_from(before).unwrap_or(i64::MAX)
}

/// Signals per bucket list that a generation given back to the pool keeps
/// room for; a longer list (a crowd's first wave) frees its memory.
const KEEP_ROOM: usize = 16;

/// Signals per bucket from which a generation is dense, and the room its
/// lists give back when it closes (see [`Gen::fit_lists`]).
const DENSE: usize = 16;

/// One generation of signals: those that started in one stretch of time
/// (ids `first_id..ids_end`), with a segment tree's bounds over the
/// stations and per bucket its signals (see [`Bucket`]). Signals never move
/// between generations; a generation goes as a whole once every signal in
/// it is too old to matter to any query.
struct Gen {
    first_id: u64,
    ids_end: u64,
    first_start: Time,
    /// Signals whose end is not final yet, and the latest final end.
    unfixed: u32,
    max_end: Time,
    /// The nodes; only those marked in `written` hold bounds, the others
    /// (stale from an earlier use of the generation) stand for empty
    /// subtrees.
    tree: Vec<Node>,
    /// A bit per node: whether it was written since the generation was
    /// last emptied. An add writes its signal's whole path, and with each
    /// node it writes afresh that node's sibling (empty): so the nodes
    /// written are closed upwards and come in pairs of siblings, and both
    /// children of a written node that holds a signal are written. A walk
    /// down from the root stops at empty nodes and a fix climbs through
    /// nodes that hold its signal, so both read written nodes only.
    written: Vec<u64>,
    /// Per bucket, its keys (see [`Bucket`]).
    buckets: Vec<Bucket>,
    /// Emptied short lists, for the next buckets to spill.
    spare: Vec<Vec<Key>>,
    /// Buckets with signals, for the reset.
    touched: Vec<u32>,
}

/// Keys a bucket holds in its own cache line: a crowd's later waves put one
/// or two signals of a generation in most buckets they reach.
const INLINE: usize = 3;
const _: () = assert!(INLINE < CHUNKED);

/// A bucket's keys in one generation, in id order, on a cache line of its
/// own: up to [`INLINE`] in the bucket itself, so that an add, a fix or a
/// walk reaching the leaf reads one line, not a list's header and then its
/// keys; more in a list, which takes all of them.
#[repr(C, align(64))]
struct Bucket {
    held: Held,
}
const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

enum Held {
    /// The first `len` of `keys`.
    Inline { keys: [Key; INLINE], len: u32 },
    /// The keys of a bucket that holds more than [`INLINE`], and the
    /// chunks of its list once it is dense (see [`Chunk`]), else none.
    Spilled { keys: Vec<Key>, chunks: Vec<Chunk> },
}

impl Held {
    const EMPTY: Held = Held::Inline {
        keys: [Key::NONE; INLINE],
        len: 0,
    };
}

impl Gen {
    /// Signal `id`'s id relative to the generation's first.
    #[inline]
    fn rel_id(&self, id: u64) -> u32 {
        (id - self.first_id) as u32
    }

    fn new(size: usize, buckets: usize) -> Gen {
        Gen {
            first_id: 0,
            ids_end: 0,
            first_start: 0,
            unfixed: 0,
            max_end: 0,
            tree: crate::mem::huge_filled(2 * size, EMPTY_NODE),
            written: vec![0; (2 * size).div_ceil(64)],
            buckets: (0..buckets).map(|_| Bucket { held: Held::EMPTY }).collect(),
            spare: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Gives back the room its lists grew beyond their keys, once it takes
    /// no more signals: only in a dense generation (a crowd's first waves,
    /// whose lists grew by doubling to up to 256 keys, half of them about
    /// half empty); a sparse one's lists are short, and looking at each
    /// would cost more than it saves.
    fn fit_lists(&mut self) {
        let signals = (self.ids_end - self.first_id) as usize;
        if signals < DENSE * self.touched.len() {
            return;
        }
        for &b in &self.touched {
            if let Held::Spilled { keys, chunks } = &mut self.buckets[b as usize].held {
                if keys.capacity() - keys.len() >= DENSE {
                    chunks.shrink_to_fit();
                    keys.shrink_to_fit();
                }
            }
        }
    }

    /// Whether node `n` was written since the generation was emptied.
    #[inline]
    fn written(&self, n: usize) -> bool {
        marked(&self.written, n)
    }

    /// The keys of bucket `b`, in id order.
    #[inline]
    fn keys(&self, b: usize) -> &[Key] {
        match &self.buckets[b].held {
            Held::Inline { keys, len } => &keys[..*len as usize],
            Held::Spilled { keys, .. } => keys,
        }
    }

    /// The keys of bucket `b`, to fix one.
    #[inline]
    fn keys_mut(&mut self, b: usize) -> &mut [Key] {
        match &mut self.buckets[b].held {
            Held::Inline { keys, len } => &mut keys[..*len as usize],
            Held::Spilled { keys, .. } => keys,
        }
    }

    /// The chunks of bucket `b` (none unless its list is dense).
    #[inline]
    fn chunks(&self, b: usize) -> &[Chunk] {
        match &self.buckets[b].held {
            Held::Inline { .. } => &[],
            Held::Spilled { chunks, .. } => chunks,
        }
    }

    /// Adds `key` (the newest of the generation) to bucket `b`.
    #[inline]
    fn push(&mut self, b: usize, key: Key) {
        let bucket = &mut self.buckets[b];
        if let Held::Inline { keys: inline, len } = &mut bucket.held {
            if *len == 0 {
                self.touched.push(b as u32);
            }
            if (*len as usize) < INLINE {
                inline[*len as usize] = key;
                *len += 1;
                return;
            }
            let mut keys = self.spare.pop().unwrap_or_default();
            keys.extend_from_slice(inline);
            bucket.held = Held::Spilled {
                keys,
                chunks: Vec::new(),
            };
        }
        let Held::Spilled { keys, chunks } = &mut bucket.held else {
            unreachable!("a bucket's keys beyond the line's room are in a list");
        };
        // A dense list grows a chunk at a time, not by doubling: a crowd's
        // second wave fills its buckets to about half, and the room
        // doubling leaves would be held while the wave lasts.
        let was_dense = dense(keys);
        if was_dense && keys.len() == keys.capacity() {
            keys.reserve_exact(CHUNK);
        }
        keys.push(key);
        if was_dense {
            match chunks.last_mut() {
                Some(c) if (keys.len() - 1) % CHUNK != 0 => c.take(&key),
                _ => {
                    chunks.reserve_exact(1);
                    chunks.push(Chunk::of(&[key]));
                }
            }
        } else if dense(keys) {
            chunks.extend(keys.chunks(CHUNK).map(Chunk::of));
        }
    }

    /// Empties the generation: the lists it touched, and its nodes by
    /// their marks alone (a node is written again before it is read).
    fn reset(&mut self) {
        for &b in &self.touched {
            let held = &mut self.buckets[b as usize].held;
            match held {
                Held::Inline { len, .. } => *len = 0,
                Held::Spilled { keys, .. } => {
                    let mut keys = std::mem::take(keys);
                    if keys.capacity() <= KEEP_ROOM {
                        keys.clear();
                        self.spare.push(keys);
                    }
                    *held = Held::EMPTY;
                }
            }
        }
        self.written.fill(0);
        self.touched.clear();
        self.unfixed = 0;
        self.max_end = 0;
    }
}

/// Whether node `n` is marked in a generation's marks of written nodes
/// (see [`Gen::written`]; apart from it for a fix, which reads them while
/// it writes the tree).
#[inline]
fn marked(written: &[u64], n: usize) -> bool {
    written[n / 64] >> (n % 64) & 1 != 0
}

/// Which generations a query looks at.
#[derive(Clone, Copy)]
enum Keep {
    /// Those whose signals may still be present somewhere after this time.
    After(i64),
    /// Those holding signals with ids from this one on.
    Since(u64),
}

/// What a query looks at to skip a generation, and to read its keys.
#[derive(Clone, Copy)]
struct Reach {
    /// When its signals will all have left every station (`i64::MAX`
    /// while any end is not final).
    by: i64,
    /// The latest `by` of this generation and every older one: a query
    /// that skips this one for its `by` stops here when this is as early.
    by_upto: i64,
    /// The id after its last signal's.
    ids_end: u64,
    /// Its first start, which its keys are relative to.
    base: i64,
}

/// The two sides around a station in each generation a query looks at,
/// newest first (see [`BusIndex::sides`]).
struct Sides<'a> {
    gens: &'a [Reach],
    w: usize,
    right: bool,
    keep: Keep,
    r: usize,
    p: i64,
    /// The end of the right side's ranks: the trees' end.
    n: usize,
    with_self: bool,
}

impl Iterator for Sides<'_> {
    type Item = (usize, usize, usize, usize, i64);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.right {
            self.right = false;
            let base = self.gens[self.w].base;
            return Some((self.w, RIGHT, self.r + 1, self.n, base - self.p));
        }
        while self.w > 0 {
            self.w -= 1;
            let reach = self.gens[self.w];
            // Whether to look at this one, and whether any older one may
            // be (ids only grow from one generation to the next).
            let (keep, older) = match self.keep {
                Keep::After(t) => (reach.by > t, reach.by_upto > t),
                Keep::Since(seq) => (reach.ids_end > seq, reach.ids_end > seq),
            };
            if !older {
                self.w = 0;
                return None;
            }
            if keep {
                self.right = true;
                let hi = if self.with_self { self.r + 1 } else { self.r };
                return Some((self.w, LEFT, 0, hi, reach.base + self.p));
            }
        }
        None
    }
}

/// A station's place on the bus, as queries about it need it first: its
/// propagation time from the origin and its rank in position order, in 8
/// bytes, made from the station's state, which its events load anyway
/// (the index holds only buses whose farthest station is below 2^31 ps,
/// see [`BusIndex::holds`]).
#[derive(Clone, Copy)]
pub(in crate::ethernet) struct Place {
    prop: u32,
    rank: u32,
}

impl Place {
    /// The place of a station at propagation time `prop` from the origin
    /// and of rank `rank` in position order (see [`by_rank`]), on a bus the
    /// index holds ([`BusIndex::holds`]), which a run checks before it
    /// makes an index: a query makes a place from the station's state
    /// without checking again.
    #[inline]
    pub(in crate::ethernet) fn new(prop: Time, rank: u32) -> Self {
        debug_assert!(
            u32::try_from(prop).is_ok(),
            "a bus longer than the index holds"
        );
        Place {
            prop: prop as u32,
            rank,
        }
    }

    /// Its propagation time, as the queries compute.
    #[inline]
    fn prop(self) -> i64 {
        i64::from(self.prop)
    }
}

/// The stations in position order: by propagation time from the origin,
/// ties by station number. A station's rank is its index here.
pub(in crate::ethernet) fn by_rank(prop: &[Time]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..prop.len() as u32).collect();
    // The keys are distinct: an unstable sort gives the same order, and
    // needs no room of its own.
    order.sort_unstable_by_key(|&i| (prop[i as usize], i));
    order
}

pub struct BusIndex {
    /// The station at each rank.
    by_rank: Vec<u32>,
    /// Leaves are buckets of [`BUCKET`] ranks: node `size + rank / BUCKET`.
    size: usize,
    buckets: usize,
    /// The generations held, oldest first, and emptied ones for reuse.
    gens: Vec<Gen>,
    /// Per generation held, what a query looks at to skip it.
    reach_by: Vec<Reach>,
    pool: Vec<Gen>,
    /// A generation takes the signals that start within this long of its
    /// first, while any of its signals is still being sent or has ended
    /// later than the new start.
    span: Time,
    /// The longest signal held (see [`BusIndex::holds`]).
    longest: Time,
    /// The ids a generation takes at most ([`IDS`], what its keys hold).
    ids: u64,
    /// The longest delay between two stations: a signal has left every
    /// station by its end plus this.
    reach: Time,
    /// The ranks of the stations sending a signal whose end is not final
    /// yet (a station sends one signal at a time), for
    /// [`BusIndex::nearest_sending`].
    sending: RankSet,
    /// Whether the processor has SSE4.1: adds and fixes then run a build
    /// of their own that takes a vector's least and greatest lanes in one
    /// instruction each (SSE2, which every x86_64 processor has, needs
    /// four), with the same results. Always false, and unread, elsewhere.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    sse41: bool,
}

impl BusIndex {
    /// An index over the stations at `places` (by station number, their
    /// ranks a permutation of 0..n, from [`by_rank`]), for signals up to
    /// `longest` ps long, with generations of `span`. The places must be
    /// those of a bus the index holds (see [`BusIndex::holds`], which a
    /// run asks before it ranks its stations): a place keeps 32 bits of
    /// the propagation time.
    pub fn new(places: impl ExactSizeIterator<Item = Place>, span: Time, longest: Time) -> Self {
        let n = places.len();
        // Read at random (the nearest senders' stations): backed by huge
        // pages.
        let mut by_rank: Vec<u32> = crate::mem::huge_filled(n, u32::MAX);
        let (mut near, mut far) = (Time::MAX, 0);
        for (i, p) in places.enumerate() {
            let slot = &mut by_rank[p.rank as usize];
            assert!(*slot == u32::MAX, "two stations of rank {}", p.rank);
            *slot = i as u32;
            (near, far) = (near.min(Time::from(p.prop)), far.max(Time::from(p.prop)));
        }
        assert!(
            Self::holds(longest, span, far),
            "signals of {longest} ps on a bus of {far} ps are longer than the bus index holds"
        );
        let buckets = n.div_ceil(BUCKET).max(1);
        let size = buckets.next_power_of_two();
        BusIndex {
            by_rank,
            size,
            buckets,
            gens: Vec::new(),
            reach_by: Vec::new(),
            pool: Vec::new(),
            span,
            longest,
            ids: IDS,
            // Ranks follow propagation times: the first and last ranks
            // are the nearest and farthest stations.
            reach: far.saturating_sub(near),
            sending: RankSet::new(n),
            sse41: sse41(),
        }
    }

    /// Whether the index holds signals up to `longest` ps long, in
    /// generations of `span`, on a bus whose farthest station is `far` ps
    /// from the origin: a key relative to its generation's first start
    /// lies within span + longest + far of it, which must fit the nodes'
    /// 32 bits (about 2.1 ms: a 1518-byte frame at 10 Mb/s is 1.21 ms on
    /// the wire). A run whose signals may be longer does without it.
    pub fn holds(longest: Time, span: Time, far: Time) -> bool {
        longest <= LONGEST
            && span
                .checked_add(longest)
                .and_then(|t| t.checked_add(far))
                .is_some_and(|t| t <= KEY_RANGE as Time)
    }

    /// Empties the index, keeping its memory for the next use: every
    /// generation goes, ended or not, and with them every sender.
    pub fn clear(&mut self) {
        while !self.gens.is_empty() {
            self.let_go_oldest();
        }
        self.sending.clear();
    }

    /// Bytes per station, for the memory estimate: the station at each
    /// rank, its bit in the set of senders (counted as a byte), and
    /// per generation (up to [`GENERATIONS`]) a tree of up to four nodes
    /// and a bucket line (its first keys, or the headers of its list and
    /// chunks) per bucket.
    pub fn bytes_per_station() -> usize {
        let per_bucket = 4 * std::mem::size_of::<Node>() + std::mem::size_of::<Bucket>();
        (GENERATIONS * per_bucket).div_ceil(BUCKET)
            + std::mem::size_of::<u32>()
            + RankSet::bytes_per_rank()
    }

    /// Bytes per signal held, for the memory estimate: its key and its
    /// share of a chunk, twice over for lists that grow by doubling.
    pub fn bytes_per_signal() -> usize {
        2 * (std::mem::size_of::<Key>() + std::mem::size_of::<Chunk>().div_ceil(CHUNK))
    }

    /// The bounds of a bucket's signals in generation `g`, in both sides.
    fn leaf_bounds(&self, bucket: usize, g: &Gen) -> [Agg; 2] {
        let mut bounds = [EMPTY; 2];
        for k in g.keys(bucket) {
            add_key(&mut bounds, k);
        }
        bounds
    }

    /// Starts loading the bucket of the station at `at` in the newest
    /// generation, which a fix of its signal reads first.
    #[inline]
    pub fn prefetch_bucket(&self, at: Place) {
        let Some(g) = self.gens.last() else {
            return;
        };
        if let Some(l) = g.buckets.get(at.rank as usize / BUCKET) {
            crate::mem::prefetch_lines(l);
        }
    }

    /// Starts loading what queries about the station at `at` will read
    /// first: the lowest nodes of its path in the newest generation, its
    /// bucket, and its word of the senders' set.
    #[inline]
    pub fn prefetch_path(&self, at: Place) {
        let Some(g) = self.gens.last() else {
            return;
        };
        let r = at.rank;
        let b = r as usize / BUCKET;
        let mut node = self.size + b;
        // The path in a slice that ends with its leaf: one bounds check.
        let Some(path) = g.tree.get(..=node) else {
            return;
        };
        for _ in 0..8 {
            crate::mem::prefetch_lines(&path[node]);
            node /= 2;
        }
        if let Some(l) = g.buckets.get(b) {
            crate::mem::prefetch_lines(l);
        }
        // A start then looks for the nearest senders on each side.
        self.sending.prefetch(r as usize);
    }

    /// The station at `at` starts signal `id` on [start, end) (end not
    /// final).
    ///
    /// A new signal only widens bounds: its leaf and every ancestor take
    /// its keys in, with no look at siblings or at the bucket's other
    /// signals. (A node's bounds stay the join of its children's, as
    /// [`BusIndex::fix`] needs.)
    pub fn add(&mut self, at: Place, id: u64, start: Time, end: Time) {
        #[cfg(target_arch = "x86_64")]
        if self.sse41 {
            // SAFETY: `sse41` is true only where the processor has SSE4.1.
            return unsafe { self.add_sse41(at, id, start, end) };
        }
        self.add_any(at, id, start, end)
    }

    /// [`BusIndex::add`], built for processors with SSE4.1.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.1")]
    fn add_sse41(&mut self, at: Place, id: u64, start: Time, end: Time) {
        self.add_any(at, id, start, end)
    }

    /// [`BusIndex::add`], for any processor.
    #[inline(always)]
    fn add_any(&mut self, at: Place, id: u64, start: Time, end: Time) {
        assert!(
            end <= start + self.longest,
            "a signal longer than the bus index holds"
        );
        let fresh = self.gens.last().is_none_or(|g| {
            (g.unfixed == 0 && start >= g.max_end)
                || start >= g.first_start + self.span
                || id - g.first_id >= self.ids
        });
        if fresh {
            if let Some(closed) = self.gens.last_mut() {
                closed.fit_lists();
            }
            let mut g = self
                .pool
                .pop()
                .unwrap_or_else(|| Gen::new(self.size, self.buckets));
            g.first_id = id;
            g.first_start = start;
            self.gens.push(g);
            self.reach_by.push(Reach {
                by: i64::MAX,
                by_upto: i64::MAX,
                ids_end: id,
                base: sx(start),
            });
        }
        let (p, r) = (at.prop(), at.rank);
        let b = r as usize / BUCKET;
        let size = self.size;
        let Some(g) = self.gens.last_mut() else {
            return;
        };
        g.ids_end = id + 1;
        g.unfixed += 1;
        debug_assert!(
            !self.sending.contains(r as usize),
            "the station of rank {r} sends two signals at once"
        );
        self.sending.insert(r as usize);
        if let Some(last) = self.reach_by.last_mut() {
            (last.by, last.by_upto, last.ids_end) = (i64::MAX, i64::MAX, id + 1);
        }
        let rel = g.rel_id(id);
        let key = Key::new(
            rel,
            start - g.first_start,
            end - g.first_start,
            r as usize,
            p,
        );
        g.push(b, key);
        let (s, e) = (sx(key.start()), sx(key.end()));
        // Below the first node written since the generation was emptied,
        // the path's nodes are written afresh, without reading their stale
        // bounds; from there up they are widened.
        let mut node = size + b;
        while node > 0 && !g.written(node) {
            let mut fresh = [EMPTY; 2];
            fresh[LEFT].add(s - p, e - p, rel, false);
            fresh[RIGHT].add(s + p, e + p, rel, false);
            g.tree[node] = Node(fresh);
            // Its sibling (the root has none) is unmarked too, since marks
            // come in pairs, and shares its word of marks.
            if node > 1 {
                debug_assert!(!g.written(node ^ 1));
                g.tree[node ^ 1] = EMPTY_NODE;
            }
            g.written[node / 64] |= if node > 1 {
                0b11 << ((node % 64) & !1)
            } else {
                1 << node
            };
            node /= 2;
        }
        // From there up, each node is widened by the signal's own bounds
        // (the nodes below `node` in a slice that ends with it, so that
        // the climb needs no bounds check).
        let mut own = [EMPTY; 2];
        own[LEFT].add(s - p, e - p, rel, false);
        own[RIGHT].add(s + p, e + p, rel, false);
        let path = &mut g.tree[..=node];
        while node > 0 {
            let [left, right] = &mut path[node].0;
            left.widen(&own[LEFT]);
            right.widen(&own[RIGHT]);
            node /= 2;
        }
    }

    /// The signal's end is now `end`, for good.
    pub fn fix(&mut self, at: Place, id: u64, end: Time) {
        #[cfg(target_arch = "x86_64")]
        if self.sse41 {
            // SAFETY: `sse41` is true only where the processor has SSE4.1.
            return unsafe { self.fix_sse41(at, id, end) };
        }
        self.fix_any(at, id, end)
    }

    /// [`BusIndex::fix`], built for processors with SSE4.1.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.1")]
    fn fix_sse41(&mut self, at: Place, id: u64, end: Time) {
        self.fix_any(at, id, end)
    }

    /// [`BusIndex::fix`], for any processor.
    #[inline(always)]
    fn fix_any(&mut self, at: Place, id: u64, end: Time) {
        let rank = at.rank as usize;
        let b = rank / BUCKET;
        let mut node = self.size + b;
        let Some(w) = self.gens.iter().rposition(|g| g.first_id <= id) else {
            return;
        };
        assert!(
            end <= self.gens[w].first_start + self.span + self.longest,
            "a signal longer than the bus index holds"
        );
        let g = &mut self.gens[w];
        let Ok(rel) = u32::try_from(id - g.first_id) else {
            return;
        };
        let rel_end = end - g.first_start;
        // A list holds its signals in id order (it only grows within a
        // generation).
        let keys = g.keys_mut(b);
        let Ok(at) = keys.binary_search_by_key(&rel, |k| k.id()) else {
            return;
        };
        let k = &mut keys[at];
        if k.end() == rel_end && k.fixed() {
            return;
        }
        let (before, was_fixed) = (side_keys(k), k.fixed());
        k.fix(rel_end);
        let after = side_keys(k);
        g.unfixed -= u32::from(!was_fixed);
        if !was_fixed {
            self.sending.remove(rank);
        }
        g.max_end = g.max_end.max(end);
        if before == after {
            // Fixed at the end it was held at: no bound changes but those
            // of the unfixed signals, which may stay as they are (they are
            // bounds, not the least ones; see [`Agg`]).
            self.note_reach(w);
            return;
        }
        // The leaf's new bounds from its old ones, unless the signal held
        // one that its fix may give up: then from its chunks, once its own
        // is found again (the same way), or else from a scan of the bucket.
        debug_assert!(g.written(node));
        let mut leaf = g.tree[node].0;
        let held = refit(&mut leaf, before, after, was_fixed);
        match &mut g.buckets[b].held {
            Held::Spilled { keys, chunks } if dense(keys) => {
                let c = &mut chunks[at / CHUNK];
                if refit(&mut c.0, before, after, was_fixed) {
                    rescan_ends(&mut c.0, chunk_keys(keys, at / CHUNK));
                }
                if held {
                    leaf = leaf.map(Agg::without_ends);
                    for c in chunks.iter() {
                        for (l, x) in leaf.iter_mut().zip(&c.0) {
                            l.join_ends(x);
                        }
                    }
                }
            }
            _ if held => rescan_ends(&mut leaf, g.keys(b)),
            _ => {}
        }
        // Only the bounds of the ends and of the unfixed signals can change,
        // in the leaf and up its path. The path and its siblings are
        // written (see [`Gen::written`]).
        let (tree, written) = (&mut g.tree, &g.written);
        tree[node] = Node(leaf);
        while node > 1 {
            node /= 2;
            debug_assert!(marked(written, 2 * node) && marked(written, 2 * node + 1));
            let [x, y] = [tree[2 * node].0, tree[2 * node + 1].0];
            // A fix changes the bounds of the ends and of the unfixed
            // signals only, but a join of every lane (the others are the
            // join's already) is fewer instructions than one of those.
            debug_assert!((0..2).all(|s| {
                let (held, j) = (&tree[node].0[s], Agg::join(&x[s], &y[s]));
                [A, ID]
                    .iter()
                    .all(|&k| held.lo[k] == j.lo[k] && held.hi[k] == j.hi[k])
            }));
            let [l, r] = &mut tree[node].0;
            let changed = (l.rejoin(&x[0], &y[0]) | r.rejoin(&x[1], &y[1])) != 0;
            if !changed {
                break;
            }
        }
        self.note_reach(w);
        debug_assert!(covers(
            &self.gens[w].tree[self.size + b].0,
            &self.leaf_bounds(b, &self.gens[w])
        ));
        debug_assert!({
            let g = &self.gens[w];
            let list = g.keys(b);
            let made = if dense(list) {
                list.len().div_ceil(CHUNK)
            } else {
                0
            };
            let chunks = g.chunks(b);
            chunks.len() == made
                && chunks
                    .iter()
                    .zip(list.chunks(CHUNK).map(Chunk::of))
                    .all(|(c, exact)| covers(&c.0, &exact.0))
        });
    }

    /// The latest end of the oldest generation, once every end in it is
    /// final (`None` while any is not, or when none is held).
    pub fn oldest_ended(&self) -> Option<Time> {
        self.gens
            .first()
            .filter(|g| g.unfixed == 0)
            .map(|g| g.max_end)
    }

    /// Lets the oldest generation go, once every end in it is final (see
    /// [`BusIndex::oldest_ended`]).
    pub fn drop_oldest(&mut self) {
        // Its senders stay in the set of senders otherwise.
        debug_assert!(self.gens.first().is_none_or(|g| g.unfixed == 0));
        self.let_go_oldest();
    }

    /// Lets the oldest generation go, ended or not.
    fn let_go_oldest(&mut self) {
        if self.gens.is_empty() {
            return;
        }
        self.reach_by.remove(0);
        self.note_upto(0);
        let mut g = self.gens.remove(0);
        g.reset();
        self.pool.push(g);
    }

    /// Walks the stations of ranks [lo, hi), a prefix or a suffix of the
    /// ranks (every side a query walks), in one side: `node` judges each
    /// subtree from its bounds (told whether it lies wholly inside the
    /// range); `leaf` sees each signal of a station whose bounds were not
    /// enough, as (key, side start, side end), and returns false to stop.
    /// Returns false when stopped.
    #[allow(clippy::too_many_arguments)]
    fn walk<N, L>(
        &self,
        which: usize,
        side: usize,
        lo: usize,
        hi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        // A build per side: the order of a node's children and the keys of
        // a bucket's signals are then known where they are used.
        if side == LEFT {
            self.walk_side::<LEFT, N, L>(which, lo, hi, node, leaf)
        } else {
            self.walk_side::<RIGHT, N, L>(which, lo, hi, node, leaf)
        }
    }

    /// [`BusIndex::walk`] in side `S`. The nodes that the range cuts lie on
    /// one path, down to its inner edge, and at each of them the child
    /// wholly inside comes first in the order of [`BusIndex::whole_below`]
    /// (the farthest first). So the path is followed in a loop, each cut
    /// node judged on the way, and only the subtrees wholly inside the
    /// range are walked, by [`BusIndex::whole`], where no range is looked
    /// at again, without a call for each cut node.
    fn walk_side<const S: usize, N, L>(
        &self,
        which: usize,
        lo: usize,
        hi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        if lo >= hi {
            return true;
        }
        let g = &self.gens[which];
        let end = self.size * BUCKET;
        let (mut n, mut nlo, mut nhi) = (1, 0, end);
        // The left side's ranges are prefixes (lo = 0), the right side's
        // suffixes (hi = end).
        let prefix = S == LEFT;
        debug_assert!(if prefix { lo == 0 } else { hi == end });
        loop {
            if if prefix { nhi <= hi } else { lo <= nlo } {
                return self.whole::<S, N, L>(g, n, nlo, nhi, node, leaf);
            }
            debug_assert!(g.written(n));
            let agg = &g.tree[n].0[S];
            if agg.is_empty() {
                return true;
            }
            // Bounds of a node partly outside the range still rule it out;
            // only a node wholly inside may be answered from them.
            match node(agg, false) {
                Step::Skip => return true,
                Step::Stop => return false,
                Step::Descend => {}
            }
            if nhi - nlo == BUCKET {
                // The leaf of the range's inner edge.
                return Self::leaf_within::<S, N, L>(g, nlo, lo, hi, node, leaf);
            }
            let mid = (nlo + nhi) / 2;
            let (cut, whole) = if prefix {
                // A prefix: the left child is wholly inside when the range
                // reaches past it, and the right one is cut or outside.
                if hi <= mid {
                    ((2 * n, nlo, mid), None)
                } else {
                    ((2 * n + 1, mid, nhi), Some((2 * n, nlo, mid)))
                }
            } else if lo >= mid {
                ((2 * n + 1, mid, nhi), None)
            } else {
                ((2 * n, nlo, mid), Some((2 * n + 1, mid, nhi)))
            };
            if let Some((c, clo, chi)) = whole {
                if !self.whole::<S, N, L>(g, c, clo, chi, node, leaf) {
                    return false;
                }
            }
            (n, nlo, nhi) = cut;
        }
    }

    /// Walks the subtree of node `n` (ranks [nlo, nhi)), wholly inside the
    /// range: judges it, and goes below it if the judge asks to. Always
    /// inlined, so that a walk judges each child in its parent's call and
    /// calls itself only for the children it goes into (about half).
    #[inline(always)]
    fn whole<const S: usize, N, L>(
        &self,
        g: &Gen,
        n: usize,
        nlo: usize,
        nhi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        debug_assert!(g.written(n));
        let agg = &g.tree[n].0[S];
        if agg.is_empty() {
            return true;
        }
        match node(agg, true) {
            Step::Skip => true,
            Step::Stop => false,
            Step::Descend => self.whole_below::<S, N, L>(g, n, nlo, nhi, node, leaf),
        }
    }

    /// The walk below node `n` (ranks [nlo, nhi), wholly inside the
    /// range), which its judge asked to descend: its bucket's signals at a
    /// leaf, else its children, the farthest stations first on either
    /// side (a walk's answer does not depend on the order, and in crowds
    /// this one prunes more).
    fn whole_below<const S: usize, N, L>(
        &self,
        g: &Gen,
        n: usize,
        nlo: usize,
        nhi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        if nhi - nlo == BUCKET {
            return Self::leaf_within::<S, N, L>(g, nlo, nlo, nhi, node, leaf);
        }
        let mid = (nlo + nhi) / 2;
        let (left, right) = ((2 * n, nlo, mid), (2 * n + 1, mid, nhi));
        let [(a, alo, ahi), (b, blo, bhi)] = if S == RIGHT {
            [right, left]
        } else {
            [left, right]
        };
        self.whole::<S, N, L>(g, a, alo, ahi, node, leaf)
            && self.whole::<S, N, L>(g, b, blo, bhi, node, leaf)
    }

    /// The signals of the leaf whose first rank is `nlo` sent by stations
    /// of rank in [lo, hi): its list's, or a dense list's chunks.
    #[inline(always)]
    fn leaf_within<const S: usize, N, L>(
        g: &Gen,
        nlo: usize,
        lo: usize,
        hi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        let list = g.keys(nlo / BUCKET);
        if !dense(list) {
            return Self::scan(g, S, list, nlo, lo, hi, leaf);
        }
        Self::dense_leaf::<S, N, L>(g, list, nlo, lo, hi, node, leaf)
    }

    /// [`BusIndex::leaf_within`] at a dense leaf (whose first rank is
    /// `nlo`, whose keys are `list`): its chunks, judged as nodes are (the
    /// farthest first on either side, as [`BusIndex::whole_below`] orders
    /// children, since in a first wave ids follow ranks). Out of line, so that the walk
    /// through the nodes keeps its registers.
    #[inline(never)]
    fn dense_leaf<const S: usize, N, L>(
        g: &Gen,
        list: &[Key],
        nlo: usize,
        lo: usize,
        hi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        let chunks = g.chunks(nlo / BUCKET);
        let mut judge = |c: usize, ch: &Chunk| {
            let (clo, chi) = ch.offs();
            let (clo, chi) = (nlo + clo, nlo + chi);
            if chi < lo || clo >= hi {
                return true;
            }
            match node(&ch.side(S), lo <= clo && chi < hi) {
                Step::Skip => true,
                Step::Stop => false,
                Step::Descend => Self::scan(g, S, chunk_keys(list, c), nlo, lo, hi, leaf),
            }
        };
        if S == RIGHT {
            chunks.iter().enumerate().rev().all(|(c, ch)| judge(c, ch))
        } else {
            chunks.iter().enumerate().all(|(c, ch)| judge(c, ch))
        }
    }

    /// Shows `leaf` each of the signals `keys` (of the bucket whose first
    /// rank is `nlo`) of a station of rank in [lo, hi), as [`BusIndex::walk`]
    /// does. Returns false when stopped.
    #[inline]
    fn scan<L>(
        g: &Gen,
        side: usize,
        keys: &[Key],
        nlo: usize,
        lo: usize,
        hi: usize,
        leaf: &mut L,
    ) -> bool
    where
        L: FnMut(u64, bool, i64, i64) -> bool,
    {
        for k in keys {
            let r = nlo + k.off();
            if r < lo || r >= hi {
                continue;
            }
            let p = k.prop();
            let (s, e) = (sx(k.start()), sx(k.end()));
            let (a, b) = if side == LEFT {
                (s - p, e - p)
            } else {
                (s + p, e + p)
            };
            if !leaf(g.first_id + u64::from(k.id()), k.fixed(), a, b) {
                return false;
            }
        }
        true
    }

    /// The two sides around the station at `at` in each generation `keep` picks:
    /// (generation, side, rank range, offset), where a side key k is the
    /// time k + offset there. `with_self` includes its own rank (in the
    /// left side, where its delay is 0).
    #[inline]
    fn sides(&self, at: Place, with_self: bool, keep: Keep) -> Sides<'_> {
        let (p, r) = (at.prop(), at.rank);
        Sides {
            gens: &self.reach_by,
            w: self.gens.len(),
            right: false,
            keep,
            r: r as usize,
            p,
            // The right side runs to the trees' end: no station holds a
            // rank past the last, and a suffix of the ranks lets a walk
            // follow one path (see [`BusIndex::walk`]).
            n: self.size * BUCKET,
            with_self,
        }
    }

    /// Records generation `w`'s time by which its signals have left every
    /// station, once all their ends are final.
    fn note_reach(&mut self, w: usize) {
        let g = &self.gens[w];
        self.reach_by[w].by = if g.unfixed > 0 {
            i64::MAX
        } else {
            sx(g.max_end + self.reach)
        };
        self.reach_by[w].ids_end = g.ids_end;
        self.note_upto(w);
    }

    /// Brings `by_upto` up to date from generation `w` on.
    fn note_upto(&mut self, w: usize) {
        let mut upto = match w.checked_sub(1) {
            Some(v) => self.reach_by[v].by_upto,
            None => i64::MIN,
        };
        for r in &mut self.reach_by[w..] {
            upto = upto.max(r.by);
            r.by_upto = upto;
        }
    }

    /// The latest arrivals at `at` over the signals whose end reaches some
    /// station after `since` (its own included, at delay 0; signals that
    /// left every station by `since` may count too). Exact from the roots'
    /// bounds alone: a signal sent from p_k on [s, e) reaches p_i at
    /// s + |p_i - p_k| = max(s - p_k + p_i, s + p_k - p_i), so the latest
    /// arrival over a set is the greater of the left side's greatest key
    /// plus p_i and the right side's minus p_i: two numbers per tree,
    /// whatever the number of signals.
    pub fn latest(&self, at: Place, since: Time) -> Latest {
        let p = at.prop();
        let since = sx(since);
        let mut l = Latest {
            start: i64::MIN,
            end: i64::MIN,
            unfixed_end: i64::MIN,
        };
        for (g, r) in self
            .gens
            .iter()
            .zip(&self.reach_by)
            .rev()
            .take_while(|(_, r)| r.by_upto > since)
        {
            if r.by <= since {
                continue;
            }
            // A generation holds a signal: its bounds are not empty, but
            // for the unfixed ones.
            debug_assert!(g.written(1));
            let [left, right] = &g.tree[1].0;
            let (pl, pr) = (r.base + p, r.base - p);
            l.start = l.start.max(left.a_max() + pl).max(right.a_max() + pr);
            l.end = l.end.max(left.b_max() + pl).max(right.b_max() + pr);
            // The bounds of the unfixed signals mean nothing once none is.
            if g.unfixed > 0 {
                l.unfixed_end = l
                    .unfixed_end
                    .max(left.ub_max().saturating_add(pl))
                    .max(right.ub_max().saturating_add(pr));
            }
        }
        l
    }

    /// Whether a signal of another station is present at `at` at time `c`.
    pub fn present(&self, at: Place, c: Time) -> bool {
        let found = Cell::new(false);
        for (w, side, lo, hi, off) in self.sides(at, false, Keep::After(sx(c))) {
            let u = sx(c) - off;
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.a_min() > u || g.b_max() <= u {
                        Step::Skip
                    } else if inside && g.a_max() <= u {
                        // Every signal here has reached the station: one is present iff
                        // the latest end is still to pass (b_max > u, above).
                        found.set(true);
                        Step::Stop
                    } else {
                        Step::Descend
                    }
                },
                &mut |_, _, a, b| {
                    found.set(a <= u && u < b);
                    !found.get()
                },
            );
            if found.get() {
                return true;
            }
        }
        false
    }

    /// The best time at `at` over both sides: the least if `least`, else the
    /// greatest, and only one that beats `bound` (a time, or `i64::MAX`
    /// (`i64::MIN`) for none). `walk_side(tree, side, lo, hi, offset, best)`
    /// walks one side, lowering (raising) `best`, which holds the best side
    /// key so far: keys must beat it, so each side starts from the bound or
    /// the other side' answer.
    fn best_over<F>(
        &self,
        at: Place,
        keep: Keep,
        least: bool,
        bound: i64,
        mut walk_side: F,
    ) -> Option<Time>
    where
        F: FnMut(usize, usize, usize, usize, i64, &Cell<i64>),
    {
        let none = if least { i64::MAX } else { i64::MIN };
        let mut best = bound;
        for (w, side, lo, hi, off) in self.sides(at, false, keep) {
            let side_best = Cell::new(if best == none { none } else { best - off });
            walk_side(w, side, lo, hi, off, &side_best);
            if side_best.get() != none {
                let t = side_best.get() + off;
                best = if best == none {
                    t
                } else if least {
                    best.min(t)
                } else {
                    best.max(t)
                };
            }
        }
        (best != bound).then_some(best as Time)
    }

    /// The earliest arrival at `at`, strictly after `c` and before `before`,
    /// of the start of another station's signal.
    pub fn first_start_after(&self, at: Place, c: Time, before: Time) -> Option<Time> {
        self.best_over(
            at,
            Keep::After(sx(c)),
            true,
            cap(before),
            |w, side, lo, hi, off, best| {
                let u = sx(c) - off;
                self.walk(
                    w,
                    side,
                    lo,
                    hi,
                    &mut |g: &Agg, inside: bool| {
                        if g.a_max() <= u || g.a_min() >= best.get() {
                            Step::Skip
                        } else if inside && g.a_min() > u {
                            best.set(g.a_min());
                            Step::Skip
                        } else {
                            Step::Descend
                        }
                    },
                    &mut |_, _, a, _| {
                        if a > u && a < best.get() {
                            best.set(a);
                        }
                        true
                    },
                );
            },
        )
    }

    /// The earliest time at or after `c`, and before `before`, at which a
    /// signal of another station is present at `at`: `c` itself when one is
    /// present then, else the earliest arrival of a start after `c`. One
    /// walk answers what [`BusIndex::present`] and
    /// [`BusIndex::first_start_after`] answer together: the earliest of
    /// max(arrival, c) over the signals whose end arrives after `c`.
    pub fn first_presence(&self, at: Place, c: Time, before: Time) -> Option<Time> {
        self.best_over(
            at,
            Keep::After(sx(c)),
            true,
            cap(before),
            |w, side, lo, hi, off, best| {
                let u = sx(c) - off;
                self.walk(
                    w,
                    side,
                    lo,
                    hi,
                    &mut |g: &Agg, inside: bool| {
                        if g.b_max() <= u || g.a_min().max(u) >= best.get() {
                            Step::Skip
                        } else if inside && g.b_min() > u {
                            // Every signal here ends after c.
                            best.set(g.a_min().max(u));
                            if best.get() == u {
                                Step::Stop
                            } else {
                                Step::Skip
                            }
                        } else {
                            Step::Descend
                        }
                    },
                    &mut |_, _, a, b| {
                        if b > u && a.max(u) < best.get() {
                            best.set(a.max(u));
                        }
                        best.get() != u
                    },
                );
            },
        )
    }

    /// The latest arrival at `at` of the end of another station's signal in
    /// (lo, c].
    pub fn last_end_in(&self, at: Place, lo: i64, c: Time) -> Option<Time> {
        self.best_over(
            at,
            Keep::After(lo),
            false,
            i64::MIN,
            |w, side, rlo, rhi, off, best| {
                let u = sx(c) - off;
                let l = lo - off;
                self.walk(
                    w,
                    side,
                    rlo,
                    rhi,
                    &mut |g: &Agg, inside: bool| {
                        if g.b_min() > u || g.b_max() <= l || g.b_max() <= best.get() {
                            Step::Skip
                        } else if inside && g.b_max() <= u {
                            best.set(g.b_max());
                            Step::Skip
                        } else {
                            Step::Descend
                        }
                    },
                    &mut |_, _, _, b| {
                        if b > l && b <= u && b > best.get() {
                            best.set(b);
                        }
                        true
                    },
                );
            },
        )
    }

    /// Among other stations' signals present at `at` at time `c`: the least id
    /// of an unfixed one if any (`Err`), else the latest arrival of an end
    /// (`Ok`, `None` when none is present).
    pub fn busy_until(&self, at: Place, c: Time) -> Result<Option<Time>, u64> {
        // One walk per side serves both questions: a subtree is skipped
        // when neither can learn from it, and answered from its bounds only
        // when no unfixed signal in it can be present.
        let unfixed = Cell::new(u64::MAX);
        let mut best = i64::MIN;
        for (w, side, lo, hi, off) in self.sides(at, false, Keep::After(sx(c))) {
            let (first_id, open) = (self.gens[w].first_id, self.gens[w].unfixed > 0);
            let u = sx(c) - off;
            let side_best = Cell::new(if best == i64::MIN { best } else { best - off });
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.a_min() > u || g.b_max() <= u {
                        Step::Skip
                    } else if open
                        && g.ua_min() <= u
                        && g.ub_max() > u
                        && first_id + g.id_min() < unfixed.get()
                    {
                        Step::Descend
                    } else if unfixed.get() != u64::MAX || g.b_max() <= side_best.get() {
                        // With an unfixed signal found, ends no longer matter.
                        Step::Skip
                    } else if inside && g.a_max() <= u {
                        side_best.set(g.b_max());
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |id, fixed, a, b| {
                    if a <= u && u < b {
                        if !fixed && id < unfixed.get() {
                            unfixed.set(id);
                        }
                        if b > side_best.get() {
                            side_best.set(b);
                        }
                    }
                    true
                },
            );
            if side_best.get() != i64::MIN {
                best = best.max(side_best.get() + off);
            }
        }
        if unfixed.get() != u64::MAX {
            return Err(unfixed.get());
        }
        Ok((best != i64::MIN).then_some(best as Time))
    }

    /// The earliest arrival at `at`, before `before`, of the start of another
    /// station's signal with id >= `seq`.
    pub fn first_arrival_since(&self, at: Place, seq: u64, before: Time) -> Option<Time> {
        self.best_over(
            at,
            Keep::Since(seq),
            true,
            cap(before),
            |w, side, lo, hi, _, best| {
                let first_id = self.gens[w].first_id;
                self.walk(
                    w,
                    side,
                    lo,
                    hi,
                    &mut |g: &Agg, inside: bool| {
                        if first_id + g.id_max() < seq || g.a_min() >= best.get() {
                            Step::Skip
                        } else if inside && first_id + g.id_min() >= seq {
                            best.set(g.a_min());
                            Step::Skip
                        } else {
                            Step::Descend
                        }
                    },
                    &mut |k, _, a, _| {
                        if k >= seq && a < best.get() {
                            best.set(a);
                        }
                        true
                    },
                );
            },
        )
    }

    /// Whether any signal but `id` (of any station, its own included) is
    /// present at `at` at some time in [a0, b0).
    pub fn overlaps(&self, at: Place, id: u64, a0: Time, b0: Time) -> bool {
        let found = Cell::new(false);
        for (w, side, lo, hi, off) in self.sides(at, true, Keep::After(sx(a0))) {
            let (l, h) = (sx(a0) - off, sx(b0) - off);
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, _inside: bool| {
                    if g.a_min() >= h || g.b_max() <= l {
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |k, _, a, b| {
                    found.set(k != id && a < h && l < b);
                    !found.get()
                },
            );
            if found.get() {
                return true;
            }
        }
        false
    }

    /// The nearest stations in position order on each side of `at` (before,
    /// after) that are sending a signal whose end is not final yet.
    #[inline]
    pub fn nearest_sending(&self, at: Place) -> [Option<usize>; 2] {
        let r = at.rank as usize;
        [self.sending.before(r), self.sending.after(r)].map(|k| k.map(|k| self.by_rank[k] as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::{by_rank, BusIndex, Place, Time, BUCKET, KEY_RANGE};
    use rand::{RngExt, SeedableRng};

    /// Each station's place on a bus at the propagation times `prop`.
    fn places(prop: &[Time]) -> Vec<Place> {
        let mut places = vec![Place::new(0, 0); prop.len()];
        for (r, &i) in by_rank(prop).iter().enumerate() {
            places[i as usize] = Place::new(prop[i as usize], r as u32);
        }
        places
    }

    /// A signal as a scan sees it.
    #[derive(Clone, Copy)]
    struct Sig {
        id: u64,
        station: usize,
        start: Time,
        end: Time,
        fixed: bool,
    }

    /// The index answers every question as a scan over every signal ever
    /// sent does, while generations come and go and emptied ones are
    /// reused: random stations (many co-located, two at the ends of the
    /// bus), waves of signals started in time order (a few of them longer
    /// than a generation's span, so that generations do not end in the
    /// order they began), ends made final when
    /// reached or cut short earlier or later than first given, and
    /// questions about any time since the last generation went, half of
    /// them at the far end of the bus just before a signal's end leaves it
    /// (where a generation is last needed).
    #[test]
    fn generations_answer_as_a_scan_over_every_signal() {
        generations_against_a_scan(None, 4, true);
    }

    /// An index emptied while transmissions are under way (set aside in a
    /// run) keeps none of their senders: taken up again, it finds only
    /// the senders added since, and takes the same station again.
    #[test]
    fn an_emptied_index_forgets_its_senders() {
        let prop: Vec<Time> = (0..600).map(|i| 10 * i).collect();
        let pl = places(&prop);
        let mut ix = BusIndex::new(pl.iter().copied(), 200_000, 1_505_000);
        ix.add(pl[100], 0, 1_000, 60_000);
        ix.add(pl[300], 1, 1_200, 60_000);
        ix.add(pl[500], 2, 1_400, 60_000);
        assert_eq!(ix.nearest_sending(pl[300]), [Some(100), Some(500)]);
        ix.clear();
        assert_eq!(ix.nearest_sending(pl[300]), [None, None]);
        assert_eq!(ix.nearest_sending(pl[0]), [None, None]);
        ix.add(pl[500], 3, 70_000, 130_000);
        assert_eq!(ix.nearest_sending(pl[300]), [None, Some(500)]);
        ix.fix(pl[500], 3, 80_000);
        assert_eq!(ix.nearest_sending(pl[300]), [None, None]);
    }

    /// The same over 40 buckets, whose tree's marks of written nodes take
    /// more than one word.
    #[test]
    fn generations_over_many_buckets_answer_as_a_scan() {
        generations_against_a_scan(None, 40, true);
    }

    /// The same, with generations cut short by their count of ids (at 7
    /// signals, where a crowd's are cut at 2^24): a generation then ends
    /// in the middle of a wave, while its signals are being sent.
    #[test]
    fn generations_cut_by_their_ids_answer_as_a_scan() {
        generations_against_a_scan(Some(7), 4, true);
    }

    /// The same, with adds and fixes in their build for any processor
    /// (on a processor with SSE4.1 the tests above run the other one).
    #[test]
    fn the_portable_build_answers_as_a_scan() {
        generations_against_a_scan(None, 40, false);
    }

    /// `fast`: adds and fixes in their SSE4.1 build where the processor
    /// has it.
    fn generations_against_a_scan(ids: Option<u64>, buckets: usize, fast: bool) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let n = buckets * BUCKET + 37;
        let prop: Vec<Time> = (0..n)
            .map(|j| match j {
                0 => 0,
                1 => 199_000,
                _ => rng.random_range(0..200u64) * 1000,
            })
            .collect();
        let pl = places(&prop);
        let reach = 199_000;
        let (ifg, keep) = (9_600, 60_000);
        let mut ix = BusIndex::new(pl.iter().copied(), 2 * reach + ifg, 1_505_000);
        if let Some(ids) = ids {
            ix.ids = ids;
        }
        ix.sse41 &= fast;
        let mut all: Vec<Sig> = Vec::new();
        let (mut now, mut floor, mut dropped) = (0u64, 0u64, 0);
        let arrival = |s: &Sig, i: usize, t: Time| t + prop[i].abs_diff(prop[s.station]);
        for step in 0..6000 {
            // Waves: bursts of starts close together, then quiet.
            let wave = step % 100 < 40;
            now += if wave {
                rng.random_range(0..300)
            } else {
                rng.random_range(0..4000)
            };
            let st = if rng.random_bool(0.2) {
                rng.random_range(0..2)
            } else {
                rng.random_range(0..n)
            };
            let sending = all.iter().any(|s| !s.fixed && s.station == st);
            if !sending && rng.random_bool(if wave { 0.6 } else { 0.03 }) {
                let id = all.len() as u64;
                // Now and then a signal longer than a generation's span,
                // whose generation then ends after newer ones.
                let end = now
                    + if rng.random_bool(0.02) {
                        rng.random_range(1..1_500_000)
                    } else {
                        rng.random_range(1..40_000)
                    };
                ix.add(pl[st], id, now, end);
                all.push(Sig {
                    id,
                    station: st,
                    start: now,
                    end,
                    fixed: false,
                });
            }
            // Ends: a transmission that reached its end is over (its end
            // final as given); one still being sent may be cut short by a
            // collision (its end from now on, shorter or longer than the
            // tentative one), or have its end made final as it was held
            // (as a detection does for most signals in a crowd).
            for s in all.iter_mut().filter(|s| !s.fixed) {
                let end = if s.end <= now {
                    s.end
                } else if s.end - s.start < 40_000 && rng.random_bool(0.05) {
                    now + rng.random_range(0..5_000)
                } else if rng.random_bool(0.05) {
                    s.end
                } else {
                    continue;
                };
                s.end = end;
                s.fixed = true;
                ix.fix(pl[s.station], s.id, end);
            }
            // As the simulator does: a generation goes once its signals
            // left every station an interframe gap and `keep` ago.
            while let Some(end) = ix.oldest_ended() {
                let gone = end + reach + ifg;
                if gone + keep > now {
                    break;
                }
                ix.drop_oldest();
                floor = floor.max(gone);
                dropped += 1;
            }
            let mut c = rng.random_range(floor..=now);
            let mut i = rng.random_range(0..n);
            let far = all
                .iter()
                .rev()
                .find(|s| s.fixed && s.station < 2 && s.end + reach <= now)
                .copied();
            if let (Some(s), true) = (far, rng.random_bool(0.5)) {
                i = 1 - s.station;
                let leaves = arrival(&s, i, s.end);
                c = leaves
                    .saturating_sub(rng.random_range(0..3))
                    .clamp(floor, now);
            }
            let before = c + rng.random_range(1..20_000);
            let seen = |s: &Sig| (arrival(s, i, s.start), arrival(s, i, s.end));
            let others = || all.iter().filter(|s| s.station != i);
            let covering: Vec<&Sig> = others()
                .filter(|s| {
                    let (a, b) = seen(s);
                    a <= c && c < b
                })
                .collect();
            assert_eq!(ix.present(pl[i], c), !covering.is_empty(), "step {step}");
            let busy = match covering.iter().filter(|s| !s.fixed).map(|s| s.id).min() {
                Some(id) => Err(id),
                None => Ok(covering.iter().map(|s| seen(s).1).max()),
            };
            assert_eq!(ix.busy_until(pl[i], c), busy, "step {step}");
            let first_start = others()
                .map(|s| seen(s).0)
                .filter(|&a| a > c && a < before)
                .min();
            assert_eq!(
                ix.first_start_after(pl[i], c, before),
                first_start,
                "step {step}"
            );
            let first_presence = others()
                .filter(|s| seen(s).1 > c)
                .map(|s| seen(s).0.max(c))
                .filter(|&a| a < before)
                .min();
            assert_eq!(
                ix.first_presence(pl[i], c, before),
                first_presence,
                "step {step}"
            );
            let lo = c as i64 - ifg as i64;
            let last_end = others()
                .map(|s| seen(s).1)
                .filter(|&b| b as i64 > lo && b <= c)
                .max();
            assert_eq!(ix.last_end_in(pl[i], lo, c), last_end, "step {step}");
            // The latest arrivals count every signal still reaching a
            // station after `c` (its own too), and may count older ones.
            let latest = ix.latest(pl[i], c);
            let max = |it: &mut dyn Iterator<Item = Time>| it.map(|t| t as i64).max();
            let must = || all.iter().filter(|s| s.end + reach > c);
            for (got, over_must, over_all) in [
                (
                    latest.start,
                    max(&mut must().map(|s| seen(s).0)),
                    max(&mut all.iter().map(|s| seen(s).0)),
                ),
                (
                    latest.end,
                    max(&mut must().map(|s| seen(s).1)),
                    max(&mut all.iter().map(|s| seen(s).1)),
                ),
            ] {
                assert!(over_must.unwrap_or(i64::MIN) <= got, "step {step}");
                assert!(got <= over_all.unwrap_or(i64::MIN), "step {step}");
            }
            // The ends not yet final: at least the latest of them, and at
            // most the latest end (a signal fixed at the end it was held
            // at may still count).
            let unfixed_end = max(&mut all.iter().filter(|s| !s.fixed).map(|s| seen(s).1));
            match unfixed_end {
                Some(t) => {
                    let any = max(&mut all.iter().map(|s| seen(s).1));
                    assert!(t <= latest.unfixed_end, "step {step}");
                    assert!(Some(latest.unfixed_end) <= any, "step {step}");
                }
                // None: far below any time.
                None => assert!(latest.unfixed_end < i64::MIN / 2, "step {step}"),
            }
            // A schedule made at a time since the floor: the signals from
            // then on.
            let made = rng.random_range(floor..=now);
            let seq = all
                .iter()
                .position(|s| s.start >= made)
                .unwrap_or(all.len()) as u64;
            let since = others()
                .filter(|s| s.id >= seq)
                .map(|s| seen(s).0)
                .filter(|&a| a < before)
                .min();
            assert_eq!(
                ix.first_arrival_since(pl[i], seq, before),
                since,
                "step {step}"
            );
            let delivered = all
                .iter()
                .rev()
                .find(|s| s.fixed && arrival(s, i, s.start) >= floor);
            if let Some(s) = delivered {
                let (a0, b0) = seen(s);
                let overlaps = all.iter().any(|k| {
                    let (a, b) = seen(k);
                    k.id != s.id && a < b0 && a0 < b
                });
                assert_eq!(ix.overlaps(pl[i], s.id, a0, b0), overlaps, "step {step}");
            }
            // The nearest stations sending on each side, in position order.
            let r = |j: usize| (prop[j], j);
            let near = [
                all.iter()
                    .filter(|s| !s.fixed && r(s.station) < r(i))
                    .max_by_key(|s| r(s.station)),
                all.iter()
                    .filter(|s| !s.fixed && r(s.station) > r(i))
                    .min_by_key(|s| r(s.station)),
            ]
            .map(|s| s.map(|s| s.station));
            assert_eq!(ix.nearest_sending(pl[i]), near, "step {step}");
        }
        assert!(dropped > 20, "only {dropped} generations went");
        if let Some(ids) = ids {
            // Generations were cut by their ids: at least about as many
            // went as the signals sent over the ids each takes (a third as
            // many go without the cut).
            assert!(
                dropped as u64 >= all.len() as u64 / ids - 2,
                "{dropped} generations went"
            );
        }
        ix.clear();
        assert!(!ix.present(pl[0], now) && ix.oldest_ended().is_none());
    }

    /// Keys at the edges of what a node's 32 bits hold, at times far from
    /// zero: the longest signal the index takes, from the far end of the
    /// bus, starting at the end of its generation's span (its right-side
    /// end key is the greatest a generation holds); and a signal one
    /// picosecond longer is refused, never held wrong.
    /// A walk follows one path down to the asking station and walks the
    /// subtrees beside it: a sender just across a bucket's or a subtree's
    /// edge from the asking station, on either side, is found, before and
    /// after its end is final (one signal on the bus, every pair of
    /// stations within two ranks of an edge).
    #[test]
    fn senders_beside_an_edge_are_found() {
        let n = 8 * BUCKET;
        let prop: Vec<Time> = (0..n as u64).map(|j| 1_000 * j).collect();
        let pl = places(&prop);
        let near: Vec<usize> = (1..8)
            .flat_map(|k| [k * BUCKET - 2, k * BUCKET - 1, k * BUCKET, k * BUCKET + 1])
            .chain([0, 1, n - 2, n - 1])
            .collect();
        let far = 1_000 * (n as u64 - 1);
        for &s in &near {
            for &q in near.iter().filter(|&&q| q != s) {
                let mut ix = BusIndex::new(pl.iter().copied(), 2 * far + 9_600, 60_000);
                ix.add(pl[s], 0, 0, 50_000);
                let d = prop[s].abs_diff(prop[q]);
                let what = format!("sender {s}, asked at {q}");
                assert_eq!(ix.first_presence(pl[q], 0, Time::MAX), Some(d), "{what}");
                assert_eq!(ix.busy_until(pl[q], d), Err(0), "{what}");
                assert!(ix.present(pl[q], d) && !ix.present(pl[q], d - 1), "{what}");
                assert_eq!(
                    ix.first_arrival_since(pl[q], 0, Time::MAX),
                    Some(d),
                    "{what}"
                );
                ix.fix(pl[s], 0, 20_000);
                assert_eq!(ix.busy_until(pl[q], d), Ok(Some(20_000 + d)), "{what}");
                assert_eq!(
                    ix.last_end_in(pl[q], 0, 20_000 + d),
                    Some(20_000 + d),
                    "{what}"
                );
                assert_eq!(ix.first_start_after(pl[q], 0, Time::MAX), Some(d), "{what}");
            }
        }
    }

    #[test]
    fn keys_at_the_edge_of_their_range_answer_exactly() {
        let far: Time = 50_000_000;
        let prop = [0, far / 2, far];
        let pl = places(&prop);
        let span = 2 * far + 9_600;
        let longest = KEY_RANGE as Time - span - far;
        assert!(BusIndex::holds(longest, span, far));
        assert!(!BusIndex::holds(longest + 1, span, far));
        let mut ix = BusIndex::new(pl.iter().copied(), span, longest);
        let t0: Time = 1 << 40;
        // A short signal from the middle, still being sent when the long
        // one starts: both in one generation.
        ix.add(pl[1], 0, t0, t0 + 1_000);
        let (s, e) = (t0 + span - 1, t0 + span - 1 + longest);
        ix.add(pl[2], 1, s, e);
        assert_eq!(ix.busy_until(pl[0], e + far - 1), Err(1));
        ix.fix(pl[1], 0, t0 + 1_000);
        ix.fix(pl[2], 1, e);
        assert_eq!(ix.busy_until(pl[0], e + far - 1), Ok(Some(e + far)));
        assert!(ix.present(pl[0], e + far - 1) && !ix.present(pl[0], e + far));
        assert_eq!(
            ix.first_start_after(pl[0], t0, Time::MAX),
            Some(t0 + far / 2)
        );
        assert_eq!(
            ix.first_start_after(pl[0], t0 + far / 2, Time::MAX),
            Some(s + far)
        );
        assert_eq!(
            ix.last_end_in(pl[0], (e + far - 10) as i64, e + far),
            Some(e + far)
        );
        let seen = ix.latest(pl[0], t0);
        assert_eq!((seen.start, seen.end), ((s + far) as i64, (e + far) as i64));
        assert_eq!(ix.first_arrival_since(pl[0], 1, Time::MAX), Some(s + far));
        assert!(ix.overlaps(pl[0], 0, s + far, s + far + 1));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ix.add(pl[0], 2, e, e + longest + 1)
        }));
        assert!(
            result.is_err(),
            "a signal longer than the index holds was taken"
        );
    }

    /// An index asked to hold longer signals than its keys can is refused.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn an_index_for_longer_signals_is_refused() {
        let far: Time = 50_000_000;
        let span = 2 * far;
        BusIndex::new(
            places(&[0, far]).into_iter(),
            span,
            KEY_RANGE as Time - span - far + 1,
        );
    }
}
