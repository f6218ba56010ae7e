//! The walks: the stations of a prefix or a suffix of the ranks in one side
//! of a generation's tree, a build per side, subtrees and a dense leaf's
//! chunks judged from their bounds; and the sides a query walks around a
//! station, newest generation first.

use super::super::key::{Key, BUCKET};
use super::bounds::{chunk_keys, dense, sx, Agg, Chunk, LEFT, RIGHT};
use super::generation::{Gen, Reach};
use super::{BusIndex, Place};

/// What a query does with a subtree, judged from its bounds.
#[derive(PartialEq)]
pub(super) enum Step {
    /// Nothing more to learn here (or the bounds were the answer).
    Skip,
    /// Look at the children.
    Descend,
    /// The query is answered: stop the walk.
    Stop,
}

/// Which generations a query looks at.
#[derive(Clone, Copy)]
pub(super) enum Keep {
    /// Those whose signals may still be present somewhere after this time.
    After(i64),
    /// Those holding signals with ids from this one on.
    Since(u64),
}

/// The two sides around a station in each generation a query looks at,
/// newest first (see [`BusIndex::sides`]).
pub(super) struct Sides<'a> {
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

impl BusIndex {
    /// Walks the stations of ranks [lo, hi), a prefix or a suffix of the
    /// ranks (every side a query walks), in one side: `node` judges each
    /// subtree from its bounds (told whether it lies wholly inside the
    /// range); `leaf` sees each signal of a station whose bounds were not
    /// enough, as (key, side start, side end), and returns false to stop.
    /// Returns false when stopped.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn walk<N, L>(
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
    pub(super) fn sides(&self, at: Place, with_self: bool, keep: Keep) -> Sides<'_> {
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
}
