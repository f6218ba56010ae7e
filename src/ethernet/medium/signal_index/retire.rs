//! How generations go: the oldest let go (once its ends are final, or all
//! when the index is emptied), and per generation the time by which its
//! signals have left every station, by which queries skip it.

use super::bounds::sx;
use super::BusIndex;
use crate::engine::Time;

impl BusIndex {
    /// Empties the index, keeping its memory for the next use: every
    /// generation goes, ended or not, and with them every sender.
    pub fn clear(&mut self) {
        while !self.gens.is_empty() {
            self.let_go_oldest();
        }
        self.sending.clear();
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

    /// Records generation `w`'s time by which its signals have left every
    /// station, once all their ends are final.
    pub(super) fn note_reach(&mut self, w: usize) {
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
}
