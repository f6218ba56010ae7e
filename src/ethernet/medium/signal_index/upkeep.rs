//! Adds and fixes: a new signal widens its path's bounds, and a signal's
//! end made final refits its leaf, chunk and path; each also built for
//! SSE4.1 and chosen at run time.

use super::super::key::{Key, BUCKET};
use super::bounds::{
    chunk_keys, dense, refit, rescan_ends, side_keys, sx, Agg, Node, A, CHUNK, EMPTY, EMPTY_NODE,
    ID, LEFT, RIGHT,
};
use super::generation::{marked, Gen, Held, Reach};
use super::{BusIndex, Place};
use crate::engine::Time;

impl BusIndex {
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
        debug_assert!(self.leaf_covers_its_signals(w, b));
        debug_assert!(self.chunks_cover_their_keys(w, b));
    }
}
