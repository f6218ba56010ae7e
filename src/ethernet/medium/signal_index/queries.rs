//! The queries carrier sense, deference, collision detection and delivery
//! ask about one station: each answers exactly as a scan over the signals
//! would, from the roots' bounds or from walks of both sides.

use super::bounds::{sx, Agg};
use super::walk::{Keep, Step};
use super::{BusIndex, Latest, Place};
use crate::engine::Time;
use std::cell::Cell;

/// A strict upper bound for [`BusIndex::best_over`] (`Time::MAX`: none).
#[inline]
fn cap(before: Time) -> i64 {
    i64::try_from(before).unwrap_or(i64::MAX)
}

impl BusIndex {
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
