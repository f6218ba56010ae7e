//! The life of the signal index in a crowd: taken up while many signals can
//! matter, set aside when few can, and its oldest generations let go once no
//! query can need them.

use super::signal_index::BusIndex;
use crate::engine::Time;
use crate::ethernet::station::Station;
use crate::ethernet::{Observer, Sim};

impl<O: Observer> Sim<'_, O> {
    /// Puts the bus index in use at `now`, holding every signal that can
    /// matter from then on (those from [`Sim::live_index`]). Queries about
    /// earlier times (a deferral resumed from the past, a delivery check
    /// that looks back) scan, as they do for times before a removal: the
    /// index may lack signals that mattered then.
    pub(in crate::ethernet) fn attach_index(&mut self, now: Time) {
        let mut ix = self.spare_index.take().unwrap_or_else(|| {
            BusIndex::new(
                self.stations.iter().map(Station::place),
                crate::ethernet::index_span(self.max_delay, self.ifg),
                self.longest,
            )
        });
        let first = self.live_index(now);
        for (id, s) in (self.signals.first_id() + first as u64..).zip(self.signals.range(first)) {
            let at = self.stations[s.station as usize].place();
            ix.add(at, id, s.start, s.end);
            if s.fixed() {
                // Into the index's life cycle as if fixed now: it leaves the
                // wire tree at the next collection if it is already off the
                // wire (moving a signal down late is exact).
                ix.fix(at, id, s.end);
            }
        }
        self.removed_floor = self.removed_floor.max(now);
        self.index = Some(ix);
    }

    /// Sets the bus index aside (emptied, its memory kept for the next
    /// use): from now on questions scan the signals.
    pub(in crate::ethernet) fn detach_index(&mut self) {
        if let Some(mut ix) = self.index.take() {
            ix.clear();
            self.spare_index = Some(ix);
        }
    }

    /// Signal `id` of station `i` now ends at `end`, for good.
    pub(in crate::ethernet) fn index_fixed(&mut self, i: usize, id: u64, end: Time) {
        if let Some(ix) = &mut self.index {
            ix.fix(self.stations[i].place(), id, end);
        }
    }

    /// Lets the index's oldest generations go once no query can look back
    /// to a time when any of their signals still mattered.
    #[inline]
    pub(in crate::ethernet) fn index_gc(&mut self, now: Time) {
        if self.index.is_some() && now >= self.gc_next {
            self.drop_old(now);
        }
    }

    #[inline(never)]
    fn drop_old(&mut self, now: Time) {
        let Some(ix) = &mut self.index else {
            return;
        };
        self.gc_next = now + (self.ifs_part1 / 2).max(1);
        // Look-backs are shorter than a transmission plus the longest delay
        // and a gap; keep twice the horizon, and scan everything before that.
        let keep = 2 * self.horizon;
        while let Some(end) = ix.oldest_ended() {
            // Every signal of the generation has left every station an
            // interframe gap before `gone`: it matters to no query about
            // a later time.
            let gone = end + self.max_delay + self.ifg;
            if gone + keep > now {
                break;
            }
            ix.drop_oldest();
            self.removed_floor = self.removed_floor.max(gone);
        }
    }
}
