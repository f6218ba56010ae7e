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
//! The index holds the signals that can still matter to a query, in three
//! trees by how long ago they left the wire (see [`WIRE`] and
//! `Sim::index_gc`).

use super::bucket_lists::{Key, Lists, BUCKET, LONGEST};
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

/// The three trees: signals still on the wire somewhere; signals gone from
/// the wire whose interframe gaps may still be running; and signals that
/// matter no more at the current time but may to a query that looks back (a
/// deferral resumed from the past). Keeping them apart keeps each tree's
/// bounds tight: a crowd's successive waves of signals would otherwise share
/// subtrees, and bounds mixing an old wave's ended signals with a new wave's
/// unarrived ones prove nothing.
pub const WIRE: usize = 0;
pub const FADING: usize = 1;
pub const BURIED: usize = 2;

/// Bounds of the side keys of a set of signals: one cache line, so that a
/// walk in one side reads one line per node.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(64))]
struct Agg {
    a_min: i64,
    a_max: i64,
    b_min: i64,
    b_max: i64,
    /// The same over the unfixed signals only.
    ua_min: i64,
    ub_max: i64,
    id_min: u64,
    id_max: u64,
}

const EMPTY: Agg = Agg {
    a_min: i64::MAX,
    a_max: i64::MIN,
    b_min: i64::MAX,
    b_max: i64::MIN,
    ua_min: i64::MAX,
    ub_max: i64::MIN,
    id_min: u64::MAX,
    id_max: 0,
};

impl Agg {
    #[inline]
    fn join(x: &Agg, y: &Agg) -> Agg {
        Agg {
            a_min: x.a_min.min(y.a_min),
            a_max: x.a_max.max(y.a_max),
            b_min: x.b_min.min(y.b_min),
            b_max: x.b_max.max(y.b_max),
            ua_min: x.ua_min.min(y.ua_min),
            ub_max: x.ub_max.max(y.ub_max),
            id_min: x.id_min.min(y.id_min),
            id_max: x.id_max.max(y.id_max),
        }
    }

    #[inline]
    fn add(&mut self, a: i64, b: i64, id: u64, fixed: bool) {
        self.a_min = self.a_min.min(a);
        self.a_max = self.a_max.max(a);
        self.add_ends(a, b, fixed);
        self.id_min = self.id_min.min(id);
        self.id_max = self.id_max.max(id);
    }

    /// Widens the bounds a fix can change (those of the ends and of the
    /// unfixed signals) by a signal's side keys.
    #[inline]
    fn add_ends(&mut self, a: i64, b: i64, fixed: bool) {
        self.b_min = self.b_min.min(b);
        self.b_max = self.b_max.max(b);
        if !fixed {
            self.ua_min = self.ua_min.min(a);
            self.ub_max = self.ub_max.max(b);
        }
    }

    /// These bounds with those a fix can change emptied.
    fn without_ends(self) -> Agg {
        Agg {
            b_min: EMPTY.b_min,
            b_max: EMPTY.b_max,
            ua_min: EMPTY.ua_min,
            ub_max: EMPTY.ub_max,
            ..self
        }
    }

    /// [`Agg::join`] of the bounds a fix can change (those of the ends and
    /// of the unfixed signals), into `self`, whose other bounds are the
    /// join's already. Whether anything changed.
    #[inline]
    fn rejoin_ends(&mut self, x: &Agg, y: &Agg) -> bool {
        let joined = [
            x.b_min.min(y.b_min),
            x.b_max.max(y.b_max),
            x.ua_min.min(y.ua_min),
            x.ub_max.max(y.ub_max),
        ];
        let held = [self.b_min, self.b_max, self.ua_min, self.ub_max];
        [self.b_min, self.b_max, self.ua_min, self.ub_max] = joined;
        joined != held
    }

    fn is_empty(&self) -> bool {
        self.a_min == i64::MAX
    }

    fn has_unfixed(&self) -> bool {
        self.ua_min != i64::MAX
    }
}

/// The signal `k`'s (start, end) keys in the left and the right side
/// (`prop`: the propagation time at each rank).
#[inline]
fn side_keys(prop: &[i64], k: &Key) -> [(i64, i64); 2] {
    let p = prop[k.rank as usize];
    let (s, e) = (sx(k.start), sx(k.end()));
    [(s - p, e - p), (s + p, e + p)]
}

/// Widens the bounds of both sides by the signal `k`.
#[inline]
fn add_key(bounds: &mut [Agg; 2], prop: &[i64], k: &Key) {
    for (g, (a, b)) in bounds.iter_mut().zip(side_keys(prop, k)) {
        g.add(a, b, k.id, k.fixed());
    }
}

/// Which trees besides [`WIRE`] a query must look at.
#[derive(Clone, Copy, Debug)]
pub struct Trees {
    pub fading: bool,
    pub buried: bool,
}

/// The latest arrivals at a station over a set of signals, in ps
/// (`i64::MIN`: the set holds none); see [`BusIndex::latest`].
#[derive(Clone, Copy, Debug)]
pub struct Latest {
    /// The latest arrival of a start.
    pub start: i64,
    /// The latest arrival of an end.
    pub end: i64,
    /// The latest arrival of the end, as known so far, of a signal whose
    /// end is not final.
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

pub struct BusIndex {
    /// Rank of each station in position order, the station at each rank,
    /// and the propagation time from the origin at each rank.
    rank: Vec<u32>,
    by_rank: Vec<u32>,
    prop: Vec<i64>,
    /// Leaves are buckets of [`BUCKET`] ranks: node `size + rank / BUCKET`.
    size: usize,
    /// Per tree ([`WIRE`], [`FADING`], [`BURIED`]) and node, the bounds in
    /// the left and the right side.
    tree: [Vec<[Agg; 2]>; 3],
    /// Per tree and bucket, the signals it holds.
    keys: [Lists; 3],
    /// Per tree, the leaves whose bounds are stale (see [`BusIndex::flush`]).
    dirty: [Vec<u32>; 3],
    dirty_flag: [Vec<bool>; 3],
}

impl BusIndex {
    pub fn new(prop: &[Time]) -> Self {
        let n = prop.len();
        let mut by_rank: Vec<u32> = (0..n as u32).collect();
        by_rank.sort_by_key(|&i| (prop[i as usize], i));
        let mut rank = crate::mem::huge_filled(n, 0u32);
        for (r, &i) in by_rank.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let buckets = n.div_ceil(BUCKET).max(1);
        let size = buckets.next_power_of_two();
        BusIndex {
            prop: {
                let mut p = crate::mem::huge_vec(n);
                p.extend(by_rank.iter().map(|&i| sx(prop[i as usize])));
                p
            },
            rank,
            by_rank,
            size,
            tree: std::array::from_fn(|_| crate::mem::huge_filled(2 * size, [EMPTY; 2])),
            keys: std::array::from_fn(|_| Lists::new(buckets)),
            dirty: std::array::from_fn(|_| Vec::new()),
            dirty_flag: std::array::from_fn(|_| vec![false; 2 * size]),
        }
    }

    /// Whether the index holds signals up to `longest` ps long (see
    /// [`LONGEST`]): a run whose signals may be longer does without it.
    pub fn holds(longest: Time) -> bool {
        longest <= LONGEST
    }

    /// Empties the index, keeping its memory for the next use: every tree
    /// and signal list as [`BusIndex::new`] left them.
    pub fn clear(&mut self) {
        for which in 0..3 {
            self.tree[which].fill([EMPTY; 2]);
            self.keys[which].clear();
            self.dirty[which].clear();
            self.dirty_flag[which].fill(false);
        }
    }

    /// Bytes per station, for the memory estimate: three trees of up to four
    /// nodes per bucket, per tree a slot for a signal of each station (with a
    /// length and a spill list per bucket), and per bucket the time of the
    /// last burial that listed it (see `Graves`). The signals beyond a slot
    /// each (in spill lists) and the queues that move signals down the trees
    /// are counted with the signals on the bus.
    pub fn bytes_per_station() -> usize {
        let per_bucket = 3 * (std::mem::size_of::<u32>() + std::mem::size_of::<Vec<Key>>())
            + std::mem::size_of::<Time>();
        (3 * 4 * std::mem::size_of::<[Agg; 2]>() + per_bucket) / BUCKET
            + 3 * std::mem::size_of::<Key>()
    }

    /// The bounds of a bucket's signals in tree `which`, in both sides.
    fn leaf_bounds(&self, bucket: usize, which: usize) -> [Agg; 2] {
        let mut bounds = [EMPTY; 2];
        for k in self.keys[which].get(bucket) {
            add_key(&mut bounds, &self.prop, k);
        }
        bounds
    }

    /// Starts loading the station's rank, which [`BusIndex::prefetch_path`]
    /// reads.
    #[inline]
    pub fn prefetch_rank(&self, station: usize) {
        if let Some(r) = self.rank.get(station) {
            crate::mem::prefetch_lines(r);
        }
    }

    /// Starts loading what queries about `station` will read first: the
    /// lowest nodes of its path in the wire and fading trees and its bucket.
    #[inline]
    pub fn prefetch_path(&self, station: usize) {
        let Some(&r) = self.rank.get(station) else {
            return;
        };
        let b = r as usize / BUCKET;
        for w in [WIRE, FADING] {
            let mut node = self.size + b;
            for _ in 0..4 {
                if let Some(n) = self.tree[w].get(node) {
                    crate::mem::prefetch_lines(n);
                }
                node /= 2;
            }
            self.keys[w].prefetch(b);
        }
    }

    /// Starts loading the signal lists that moves of the signals of
    /// `stations` out of tree `from` will read: bucket headers first, then
    /// (once some have arrived) the lists behind them. Many loads in flight
    /// at once cost little more than one.
    pub fn prefetch_moves(&self, stations: &[u32], from: usize) {
        for &st in stations {
            if let Some(r) = self.rank.get(st as usize) {
                crate::mem::prefetch_lines(r);
            }
        }
        self.prefetch_buckets(from, stations.iter().map(|&st| self.bucket(st as usize)));
    }

    /// Starts loading the signal lists of `buckets` in tree `which`.
    fn prefetch_buckets(&self, which: usize, buckets: impl Iterator<Item = usize>) {
        for b in buckets {
            self.keys[which].prefetch(b);
        }
    }

    pub fn bucket(&self, station: usize) -> usize {
        self.rank[station] as usize / BUCKET
    }

    /// Station `station` starts signal `id` on [start, end) (end not final).
    ///
    /// A new signal only widens bounds: its leaf and every ancestor take
    /// its keys in, with no look at siblings or at the bucket's other
    /// signals. (A node's bounds stay the join of its children's, as
    /// [`BusIndex::fix`] needs.) All the way up: the new id is the
    /// greatest, so the root's bounds change in any case.
    pub fn add(&mut self, station: usize, id: u64, start: Time, end: Time) {
        let r = self.rank[station];
        let b = r as usize / BUCKET;
        self.keys[WIRE].push(b, Key::new(id, start, end, r));
        let p = self.prop[r as usize];
        let (s, e) = (sx(start), sx(end));
        let tree = &mut self.tree[WIRE];
        let mut node = self.size + b;
        while node > 0 {
            let [left, right] = &mut tree[node];
            left.add(s - p, e - p, id, false);
            right.add(s + p, e + p, id, false);
            node /= 2;
        }
    }

    /// The signal's end is now `end`, for good.
    pub fn fix(&mut self, station: usize, id: u64, end: Time) {
        let b = self.bucket(station);
        let mut node = self.size + b;
        // One pass finds the signal and takes the bucket's new bounds of
        // the ends and of the unfixed signals, the only ones a fix moves.
        let mut leaf = self.tree[WIRE][node].map(Agg::without_ends);
        let mut changed = false;
        for k in self.keys[WIRE].get_mut(b) {
            if k.id == id && !(k.end() == end && k.fixed()) {
                k.fix(end);
                changed = true;
            }
            for (g, (a, e)) in leaf.iter_mut().zip(side_keys(&self.prop, k)) {
                g.add_ends(a, e, k.fixed());
            }
        }
        if !changed {
            return;
        }
        debug_assert_eq!(leaf, self.leaf_bounds(b, WIRE), "bucket {b}");
        // Only the bounds of the ends and of the unfixed signals can change,
        // in the leaf and up its path.
        let tree = &mut self.tree[WIRE];
        tree[node] = leaf;
        while node > 1 {
            node /= 2;
            let [x, y] = [tree[2 * node], tree[2 * node + 1]];
            let [l, r] = &mut tree[node];
            let changed = l.rejoin_ends(&x[0], &y[0]) | r.rejoin_ends(&x[1], &y[1]);
            debug_assert_eq!(
                tree[node],
                [Agg::join(&x[0], &y[0]), Agg::join(&x[1], &y[1])]
            );
            if !changed {
                // The ancestors' bounds are unchanged too.
                break;
            }
        }
    }

    /// Moves the bucket's [`FADING`] signals that ended by `last_end` to the
    /// [`BURIED`] tree. The bounds are stale until [`BusIndex::flush`].
    pub fn bury_ended(&mut self, bucket: usize, last_end: Time) {
        let mut moved = false;
        let [_, fading, buried] = &mut self.keys;
        fading.remove_if(
            bucket,
            |k| k.end() <= last_end,
            |k| {
                buried.push(bucket, k);
                moved = true;
            },
        );
        if moved {
            self.mark(bucket, FADING);
            self.mark(bucket, BURIED);
        }
    }

    /// Moves the signal from the [`WIRE`] tree to the [`FADING`] one (see
    /// [`BusIndex::bury_ended`] for the next move). The bounds are stale
    /// until [`BusIndex::flush`].
    pub fn fade(&mut self, station: usize, id: u64) {
        let b = self.bucket(station);
        if let Some(pos) = self.keys[WIRE].get(b).iter().position(|k| k.id == id) {
            let k = self.keys[WIRE].swap_remove(b, pos);
            self.keys[FADING].push(b, k);
            self.mark(b, WIRE);
            self.mark(b, FADING);
        }
    }

    /// Removes from the bucket's [`BURIED`] signals those that ended by
    /// `last_end`. The bounds of its leaf and ancestors keep counting them
    /// until an update passes through them: recomputing them for every
    /// removal cost more than it saved. Looser bounds are still exact for
    /// every query that looks at this tree: a removed signal is real, with its
    /// final keys, and by the time of any such query (not before
    /// `Sim::removed_floor`) it had ended everywhere an interframe gap
    /// earlier, so it passes no test that answers from bounds (an arrival
    /// after c, an end after c or in the gap window, an id of a signal newer
    /// than a schedule); it only weakens pruning.
    pub fn remove_ended(&mut self, bucket: usize, last_end: Time) {
        self.keys[BURIED].remove_if(bucket, |k| k.end() <= last_end, |_| {});
    }

    /// Starts loading the [`BURIED`] signal lists of `buckets`.
    pub fn prefetch_buried(&self, buckets: impl Iterator<Item = usize>) {
        self.prefetch_buckets(BURIED, buckets);
    }

    fn mark(&mut self, bucket: usize, which: usize) {
        let node = self.size + bucket;
        if !self.dirty_flag[which][node] {
            self.dirty_flag[which][node] = true;
            self.dirty[which].push(node as u32);
        }
    }

    /// Brings the bounds up to date after [`BusIndex::fade`],
    /// [`BusIndex::bury_ended`] and [`BusIndex::remove_ended`]: each changed
    /// leaf and each of their ancestors is recomputed once, however many
    /// signals moved.
    pub fn flush(&mut self) {
        for which in 0..3 {
            let mut level = std::mem::take(&mut self.dirty[which]);
            // In crowds the leaves are scattered: ask for all their memory
            // first (the signal lists behind the bucket headers once those
            // have had time to arrive), then do the work.
            for &n in &level {
                crate::mem::prefetch_lines(&self.tree[which][n as usize]);
            }
            self.prefetch_buckets(which, level.iter().map(|&n| n as usize - self.size));
            // Keep only the nodes whose bounds changed: their parents are
            // the next level's work.
            level.retain(|&n| {
                let n = n as usize;
                self.dirty_flag[which][n] = false;
                let bucket = n - self.size;
                let leaf = self.leaf_bounds(bucket, which);
                let changed = self.tree[which][n] != leaf;
                self.tree[which][n] = leaf;
                changed
            });
            // Sorted once: halving keeps the order, so each level above
            // only needs its duplicates (siblings) merged.
            level.sort_unstable();
            let tree = &mut self.tree[which];
            while !level.is_empty() && level[0] > 1 {
                for n in level.iter_mut() {
                    *n /= 2;
                }
                level.dedup();
                for &n in &level {
                    let n = n as usize;
                    crate::mem::prefetch_lines(&tree[2 * n..2 * n + 2]);
                    crate::mem::prefetch_lines(&tree[n]);
                }
                level.retain(|&n| {
                    let n = n as usize;
                    let (x, y) = (&tree[2 * n], &tree[2 * n + 1]);
                    let joined = [Agg::join(&x[0], &y[0]), Agg::join(&x[1], &y[1])];
                    let changed = tree[n] != joined;
                    tree[n] = joined;
                    changed
                });
            }
            level.clear();
            self.dirty[which] = level;
        }
    }

    /// Walks the stations of ranks [lo, hi) in one side: `node` judges each
    /// subtree inside the range from its bounds; `leaf` sees each signal of a
    /// station whose bounds were not enough, as (key, side start, side end),
    /// and returns false to stop. Returns false when stopped.
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
        L: FnMut(&Key, i64, i64) -> bool,
    {
        if lo >= hi {
            return true;
        }
        self.rec(which, side, 1, 0, self.size * BUCKET, lo, hi, node, leaf)
    }

    #[allow(clippy::too_many_arguments)]
    fn rec<N, L>(
        &self,
        which: usize,
        side: usize,
        n: usize,
        nlo: usize,
        nhi: usize,
        lo: usize,
        hi: usize,
        node: &mut N,
        leaf: &mut L,
    ) -> bool
    where
        N: FnMut(&Agg, bool) -> Step,
        L: FnMut(&Key, i64, i64) -> bool,
    {
        let agg = &self.tree[which][n][side];
        if agg.is_empty() {
            return true;
        }
        // Bounds of a node partly outside the range still rule it out; only
        // a node wholly inside may be answered from them.
        let inside = lo <= nlo && nhi <= hi;
        match node(agg, inside) {
            Step::Skip => return true,
            Step::Stop => return false,
            Step::Descend => {}
        }
        if nhi - nlo == BUCKET {
            // A leaf: its signals, those of stations in the range.
            for k in self.keys[which].get(nlo / BUCKET) {
                let r = k.rank as usize;
                if r < lo || r >= hi {
                    continue;
                }
                let p = self.prop[r];
                let (s, e) = (sx(k.start), sx(k.end()));
                let (a, b) = if side == LEFT {
                    (s - p, e - p)
                } else {
                    (s + p, e + p)
                };
                if !leaf(k, a, b) {
                    return false;
                }
            }
            return true;
        }
        // The farthest stations first on either side: a walk's answer does
        // not depend on the order, and in crowds this one prunes more.
        let mid = (nlo + nhi) / 2;
        if side == RIGHT {
            if mid < hi && !self.rec(which, side, 2 * n + 1, mid, nhi, lo, hi, node, leaf) {
                return false;
            }
            return lo >= mid || self.rec(which, side, 2 * n, nlo, mid, lo, hi, node, leaf);
        }
        if lo < mid && !self.rec(which, side, 2 * n, nlo, mid, lo, hi, node, leaf) {
            return false;
        }
        if mid < hi && !self.rec(which, side, 2 * n + 1, mid, nhi, lo, hi, node, leaf) {
            return false;
        }
        true
    }

    /// The two sides around station `i`: (side, rank range, offset), where
    /// a side key k is the time k + offset at `i`. `with_self` includes i's
    /// own rank (in the left side, where its delay is 0).
    #[inline]
    fn sides(
        &self,
        i: usize,
        with_self: bool,
        trees: Trees,
    ) -> impl Iterator<Item = (usize, usize, usize, usize, i64)> {
        let r = self.rank[i] as usize;
        let p = self.prop[r];
        let n = self.rank.len();
        let on = [true, trees.fading, trees.buried];
        (0..3).filter(move |&w| on[w]).flat_map(move |w| {
            [
                (w, LEFT, 0, if with_self { r + 1 } else { r }, p),
                (w, RIGHT, r + 1, n, -p),
            ]
        })
    }

    /// The latest arrivals at `i`, over every signal in `trees` (its own
    /// included, at delay 0). Exact from the roots' bounds alone: a signal
    /// sent from p_k on [s, e) reaches p_i at s + |p_i - p_k| =
    /// max(s - p_k + p_i, s + p_k - p_i), so the latest arrival over a set
    /// is the greater of the left side's greatest key plus p_i and the
    /// right side's minus p_i: two numbers per tree, whatever the number of
    /// signals. (The buried tree's bounds may still count removed signals,
    /// which had left every station an interframe gap before any query
    /// that looks at that tree: they can raise `start` and lower nothing,
    /// and an `end` they set lies an interframe gap before the query.)
    pub fn latest(&self, i: usize, trees: Trees) -> Latest {
        let p = self.prop[self.rank[i] as usize];
        let on = [true, trees.fading, trees.buried];
        let mut l = Latest {
            start: i64::MIN,
            end: i64::MIN,
            unfixed_end: i64::MIN,
        };
        for w in (0..3).filter(|&w| on[w]) {
            let [left, right] = &self.tree[w][1];
            l.start = l
                .start
                .max(left.a_max.saturating_add(p))
                .max(right.a_max.saturating_sub(p));
            l.end = l
                .end
                .max(left.b_max.saturating_add(p))
                .max(right.b_max.saturating_sub(p));
            l.unfixed_end = l
                .unfixed_end
                .max(left.ub_max.saturating_add(p))
                .max(right.ub_max.saturating_sub(p));
        }
        l
    }

    /// Whether a signal of another station is present at `i` at time `c`.
    pub fn present(&self, i: usize, c: Time, trees: Trees) -> bool {
        let found = Cell::new(false);
        for (w, side, lo, hi, off) in self.sides(i, false, trees) {
            let u = sx(c) - off;
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.a_min > u || g.b_max <= u {
                        Step::Skip
                    } else if inside && g.a_max <= u {
                        // Every signal here has reached i: one is present iff
                        // the latest end is still to pass (b_max > u, above).
                        found.set(true);
                        Step::Stop
                    } else {
                        Step::Descend
                    }
                },
                &mut |_, a, b| {
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

    /// The best time at `i` over both sides: the least if `least`, else the
    /// greatest, and only one that beats `bound` (a time, or `i64::MAX`
    /// (`i64::MIN`) for none). `walk_side(tree, side, lo, hi, offset, best)`
    /// walks one side, lowering (raising) `best`, which holds the best side
    /// key so far: keys must beat it, so each side starts from the bound or
    /// the other side' answer.
    fn best_over<F>(
        &self,
        i: usize,
        trees: Trees,
        least: bool,
        bound: i64,
        mut walk_side: F,
    ) -> Option<Time>
    where
        F: FnMut(usize, usize, usize, usize, i64, &Cell<i64>),
    {
        let none = if least { i64::MAX } else { i64::MIN };
        let mut best = bound;
        for (w, side, lo, hi, off) in self.sides(i, false, trees) {
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

    /// The earliest arrival at `i`, strictly after `c` and before `before`,
    /// of the start of another station's signal.
    pub fn first_start_after(&self, i: usize, c: Time, before: Time, trees: Trees) -> Option<Time> {
        self.best_over(i, trees, true, cap(before), |w, side, lo, hi, off, best| {
            let u = sx(c) - off;
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.a_max <= u || g.a_min >= best.get() {
                        Step::Skip
                    } else if inside && g.a_min > u {
                        best.set(g.a_min);
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |_, a, _| {
                    if a > u && a < best.get() {
                        best.set(a);
                    }
                    true
                },
            );
        })
    }

    /// The earliest time at or after `c`, and before `before`, at which a
    /// signal of another station is present at `i`: `c` itself when one is
    /// present then, else the earliest arrival of a start after `c`. One
    /// walk answers what [`BusIndex::present`] and
    /// [`BusIndex::first_start_after`] answer together: the earliest of
    /// max(arrival, c) over the signals whose end arrives after `c`.
    pub fn first_presence(&self, i: usize, c: Time, before: Time, trees: Trees) -> Option<Time> {
        self.best_over(i, trees, true, cap(before), |w, side, lo, hi, off, best| {
            let u = sx(c) - off;
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.b_max <= u || g.a_min.max(u) >= best.get() {
                        Step::Skip
                    } else if inside && g.b_min > u {
                        // Every signal here ends after c.
                        best.set(g.a_min.max(u));
                        if best.get() == u {
                            Step::Stop
                        } else {
                            Step::Skip
                        }
                    } else {
                        Step::Descend
                    }
                },
                &mut |_, a, b| {
                    if b > u && a.max(u) < best.get() {
                        best.set(a.max(u));
                    }
                    best.get() != u
                },
            );
        })
    }

    /// The latest arrival at `i` of the end of another station's signal in
    /// (lo, c].
    pub fn last_end_in(&self, i: usize, lo: i64, c: Time, trees: Trees) -> Option<Time> {
        self.best_over(i, trees, false, i64::MIN, |w, side, rlo, rhi, off, best| {
            let u = sx(c) - off;
            let l = lo - off;
            self.walk(
                w,
                side,
                rlo,
                rhi,
                &mut |g: &Agg, inside: bool| {
                    if g.b_min > u || g.b_max <= l || g.b_max <= best.get() {
                        Step::Skip
                    } else if inside && g.b_max <= u {
                        best.set(g.b_max);
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |_, _, b| {
                    if b > l && b <= u && b > best.get() {
                        best.set(b);
                    }
                    true
                },
            );
        })
    }

    /// Among other stations' signals present at `i` at time `c`: the least id
    /// of an unfixed one if any (`Err`), else the latest arrival of an end
    /// (`Ok`, `None` when none is present).
    pub fn busy_until(&self, i: usize, c: Time, trees: Trees) -> Result<Option<Time>, u64> {
        // One walk per side serves both questions: a subtree is skipped
        // when neither can learn from it, and answered from its bounds only
        // when no unfixed signal in it can be present.
        let unfixed = Cell::new(u64::MAX);
        let mut best = i64::MIN;
        for (w, side, lo, hi, off) in self.sides(i, false, trees) {
            let u = sx(c) - off;
            let side_best = Cell::new(if best == i64::MIN { best } else { best - off });
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.a_min > u || g.b_max <= u {
                        Step::Skip
                    } else if g.ua_min <= u && g.ub_max > u && g.id_min < unfixed.get() {
                        Step::Descend
                    } else if unfixed.get() != u64::MAX || g.b_max <= side_best.get() {
                        // With an unfixed signal found, ends no longer matter.
                        Step::Skip
                    } else if inside && g.a_max <= u {
                        side_best.set(g.b_max);
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |k, a, b| {
                    if a <= u && u < b {
                        if !k.fixed() && k.id < unfixed.get() {
                            unfixed.set(k.id);
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

    /// The earliest arrival at `i`, before `before`, of the start of another
    /// station's signal with id >= `seq`.
    pub fn first_arrival_since(
        &self,
        i: usize,
        seq: u64,
        before: Time,
        trees: Trees,
    ) -> Option<Time> {
        self.best_over(i, trees, true, cap(before), |w, side, lo, hi, _, best| {
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, inside: bool| {
                    if g.id_max < seq || g.a_min >= best.get() {
                        Step::Skip
                    } else if inside && g.id_min >= seq {
                        best.set(g.a_min);
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |k, a, _| {
                    if k.id >= seq && a < best.get() {
                        best.set(a);
                    }
                    true
                },
            );
        })
    }

    /// Whether any signal but `id` (of any station, `dst`'s own included) is
    /// present at `dst` at some time in [a0, b0).
    pub fn overlaps(&self, dst: usize, id: u64, a0: Time, b0: Time, trees: Trees) -> bool {
        let found = Cell::new(false);
        for (w, side, lo, hi, off) in self.sides(dst, true, trees) {
            let (l, h) = (sx(a0) - off, sx(b0) - off);
            self.walk(
                w,
                side,
                lo,
                hi,
                &mut |g: &Agg, _inside: bool| {
                    if g.a_min >= h || g.b_max <= l {
                        Step::Skip
                    } else {
                        Step::Descend
                    }
                },
                &mut |k, a, b| {
                    found.set(k.id != id && a < h && l < b);
                    !found.get()
                },
            );
            if found.get() {
                return true;
            }
        }
        false
    }

    /// The nearest stations in position order on each side of `i` (before,
    /// after) that are transmitting a signal whose end is not yet known,
    /// with that signal's id.
    pub fn nearest_unfixed(&self, i: usize) -> [Option<(usize, u64)>; 2] {
        let r = self.rank[i];
        let own = r as usize / BUCKET;
        let unfixed = |b: usize| self.keys[WIRE].get(b).iter().filter(|k| !k.fixed());
        let before = unfixed(own)
            .filter(|k| k.rank < r)
            .max_by_key(|k| k.rank)
            .or_else(|| {
                let b = self.last_unfixed_below(own)?;
                unfixed(b).max_by_key(|k| k.rank)
            });
        let after = unfixed(own)
            .filter(|k| k.rank > r)
            .min_by_key(|k| k.rank)
            .or_else(|| {
                let b = self.first_unfixed_above(own)?;
                unfixed(b).min_by_key(|k| k.rank)
            });
        [before, after].map(|k| k.map(|k| (self.by_rank[k.rank as usize] as usize, k.id)))
    }

    /// The greatest bucket < `b` with an unfixed signal.
    fn last_unfixed_below(&self, b: usize) -> Option<usize> {
        // Climb from the leaf; at the first left sibling with unfixed
        // signals, descend to its rightmost such leaf.
        let t = &self.tree[WIRE];
        let mut n = self.size + b;
        while n > 1 {
            if !n.is_multiple_of(2) && t[n - 1][0].has_unfixed() {
                let mut m = n - 1;
                while m < self.size {
                    m = if t[2 * m + 1][0].has_unfixed() {
                        2 * m + 1
                    } else {
                        2 * m
                    };
                }
                return Some(m - self.size);
            }
            n /= 2;
        }
        None
    }

    /// The least bucket > `b` with an unfixed signal.
    fn first_unfixed_above(&self, b: usize) -> Option<usize> {
        let t = &self.tree[WIRE];
        let mut n = self.size + b;
        while n > 1 {
            if n.is_multiple_of(2) && t[n + 1][0].has_unfixed() {
                let mut m = n + 1;
                while m < self.size {
                    m = if t[2 * m][0].has_unfixed() {
                        2 * m
                    } else {
                        2 * m + 1
                    };
                }
                return Some(m - self.size);
            }
            n /= 2;
        }
        None
    }
}
