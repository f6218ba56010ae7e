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
//!
//! # Invariants
//!
//! - What it holds: every signal added and not yet let go, in the
//!   generation that was newest at its start (a generation takes the
//!   signals that start within `span` of its first start and within
//!   [`IDS`] of its first id, while one of its signals is unfixed or has
//!   ended after the new start). Generations are held oldest first, their
//!   ids `first_id..ids_end` disjoint and increasing. A signal's key lies in
//!   the bucket of its sender's rank (`rank / BUCKET`), and a bucket's
//!   keys are in id order (a list only grows within a generation).
//! - Keys: relative to their generation's first start and first id, every
//!   side key lies within [`KEY_RANGE`] of it ([`BusIndex::holds`], asked
//!   before an index is made), so it fits a node's 32 bits and never meets
//!   an empty node's bounds.
//! - Bounds: a written node's bounds of each side are the join of its
//!   children's, a leaf's those of its bucket's signals: exactly in the
//!   lanes of the starts, the ends and the ids; in the lanes of the unfixed
//!   signals they may be wider, never narrower (a fix at the end a signal
//!   was held at changes no bound), and mean nothing in a generation whose
//!   ends are all final. A dense list (from `CHUNKED` keys) has a chunk per
//!   `CHUNK` keys, with their bounds the same way and the least and
//!   greatest rank within the bucket of their senders. The debug cross-checks hold a fixed
//!   leaf and its chunks against their signals.
//! - Written nodes: a node not marked written since its generation was
//!   emptied is stale and stands for an empty subtree; the marked ones are
//!   closed upwards and come in pairs of siblings, and walks and fixes read
//!   marked nodes only.
//! - Queries: [`BusIndex::present`], [`BusIndex::busy_until`],
//!   [`BusIndex::first_start_after`], [`BusIndex::first_presence`],
//!   [`BusIndex::last_end_in`], [`BusIndex::first_arrival_since`] and
//!   [`BusIndex::overlaps`] answer exactly what a scan over every signal
//!   sent answers, whatever order a walk visits subtrees in, as long as the
//!   generations let go held no signal that could still matter to them;
//!   [`BusIndex::latest`] counts every signal still reaching a station after
//!   the time asked about and may count older ones.
//! - Generations' reach: once every end of a generation is final, its
//!   signals have left every station by its latest end plus the bus's
//!   longest delay (before that, `i64::MAX`); each generation also keeps
//!   the latest of that over itself and every older one, so that a query,
//!   newest generation first, stops where neither a generation nor any
//!   older one can matter.
//! - Senders: the set of senders holds exactly the ranks of the stations
//!   whose signal's end is not final yet (one signal each at a time).
//!
//! # Rooms
//!
//! - `bounds.rs`: a node's bounds, a signal's side keys, widening, joining
//!   and refitting bounds, and the chunks of a dense list;
//! - `generation.rs`: a generation's tree and buckets, its filling,
//!   emptying and reuse, and what a query reads to skip it;
//! - `upkeep.rs`: adds and fixes, each also built for SSE4.1;
//! - `retire.rs`: how generations go, and the time each stops mattering;
//! - `walk.rs`: the walks of one side of a tree, and the sides around a
//!   station;
//! - `queries.rs`: the questions carrier sense, deference, collision
//!   detection and delivery ask;
//! - `check.rs`: the debug cross-checks of a fix;
//! - `tests.rs`: the index held against a scan over every signal.

use super::key::{Key, BUCKET, IDS, LONGEST};
use super::rank_set::RankSet;
use crate::engine::Time;
use bounds::{Chunk, Node, CHUNK, KEY_RANGE};
use generation::{Bucket, Gen, Reach};

mod bounds;
mod check;
mod generation;
mod queries;
mod retire;
#[cfg(test)]
mod tests;
mod upkeep;
mod walk;

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
    /// were held at; see [`Agg`](bounds::Agg)).
    pub unfixed_end: i64,
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
}
