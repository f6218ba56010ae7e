//! The debug cross-checks: after a fix, a leaf's and its chunks' bounds
//! held against those found again from their signals.

use super::bounds::{add_key, dense, Agg, Chunk, CHUNK, EMPTY, U};
use super::generation::Gen;
use super::BusIndex;

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

impl BusIndex {
    /// The bounds of a bucket's signals in generation `g`, in both sides.
    fn leaf_bounds(&self, bucket: usize, g: &Gen) -> [Agg; 2] {
        let mut bounds = [EMPTY; 2];
        for k in g.keys(bucket) {
            add_key(&mut bounds, k);
        }
        bounds
    }

    /// Whether the leaf of bucket `b` in generation `w` holds the bounds of
    /// its signals (see [`covers`]).
    pub(super) fn leaf_covers_its_signals(&self, w: usize, b: usize) -> bool {
        covers(
            &self.gens[w].tree[self.size + b].0,
            &self.leaf_bounds(b, &self.gens[w]),
        )
    }

    /// Whether bucket `b` in generation `w` has its chunks exactly while
    /// its list is dense, each holding the bounds of its keys (see
    /// [`covers`]).
    pub(super) fn chunks_cover_their_keys(&self, w: usize, b: usize) -> bool {
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
    }
}
