//! The life of the signal index in a crowd: taken up while many signals can
//! matter, set aside when few can, and signals moved down its trees in batches.

use super::signal_index::{BusIndex, BURIED, FADING, WIRE};
use crate::engine::{EventQueue, Time};
use crate::ethernet::{Observer, Sim};

/// Sets `out` to the stations of the leading entries of a time-ordered move
/// queue that are due at `now`.
fn due_stations<'q>(
    queue: impl Iterator<Item = &'q (Time, u64, u32)>,
    now: Time,
    out: &mut Vec<u32>,
) {
    out.clear();
    out.extend(queue.take_while(|e| e.0 <= now).map(|e| e.2));
}

impl<O: Observer> Sim<'_, O> {
    /// Puts the bus index in use at `now`, holding every signal that can
    /// matter from then on (those from [`Sim::live_index`]). Queries about
    /// earlier times (a deferral resumed from the past, a delivery check
    /// that looks back) scan, as they do for times before a removal: the
    /// index may lack signals that mattered then.
    pub(in crate::ethernet) fn attach_index(&mut self, now: Time) {
        let mut ix = self.spare_index.take().unwrap_or_else(|| {
            BusIndex::new(&self.stations.iter().map(|s| s.prop).collect::<Vec<_>>())
        });
        let first = self.live_index(now);
        for (id, s) in (self.signals.first_id() + first as u64..).zip(self.signals.range(first)) {
            let i = s.station as usize;
            ix.add(i, id, s.start, s.end);
            if s.fixed {
                // Into the index's life cycle as if fixed now: it leaves the
                // wire tree at the next collection if it is already off the
                // wire (moving a signal down late is exact).
                ix.fix(i, id, s.end);
                self.dying.push(s.end + self.max_delay, (id, i as u32));
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
        self.dying = EventQueue::new();
        self.burying.clear();
        self.removing.clear();
    }

    /// Signal `id` of station `i` now ends at `end`, for good.
    pub(in crate::ethernet) fn index_fixed(&mut self, i: usize, id: u64, end: Time) {
        if let Some(ix) = &mut self.index {
            ix.fix(i, id, end);
            self.dying.push(end + self.max_delay, (id, i as u32));
        }
    }

    /// Moves signals down the index's trees as time passes: off the wire once
    /// they have left every station; buried an interframe gap later, when from
    /// now on they cover nothing, start no running gap and arrive nowhere; and
    /// removed once no query can look back to before their burial.
    pub(in crate::ethernet) fn index_gc(&mut self, now: Time) {
        let Some(ix) = &mut self.index else {
            return;
        };
        if now < self.gc_next {
            return;
        }
        self.gc_next = now + (self.ifs_part1 / 2).max(1);
        // Look-backs are shorter than a transmission plus the longest delay
        // and a gap; keep twice the horizon, and scan everything before that.
        let keep = 2 * self.horizon;
        // Each batch of moves first asks for the memory it will touch.
        let mut due = std::mem::take(&mut self.gc_stations);
        // Off the wire: moved to the fading tree, and queued for burial.
        let first = self.burying.len();
        while self.dying.peek_time().is_some_and(|when| when <= now) {
            let Some((when, (id, station))) = self.dying.pop() else {
                break;
            };
            self.burying.push_back((when + self.ifg, id, station));
        }
        let faded = self.burying.range(first..);
        due_stations(faded.clone(), Time::MAX, &mut due);
        ix.prefetch_moves(&due, WIRE);
        for &(_, id, station) in faded {
            ix.demote(station as usize, id, FADING);
        }
        if !due.is_empty() {
            self.fade_last = now;
        }
        due_stations(self.burying.iter(), now, &mut due);
        ix.prefetch_moves(&due, FADING);
        for (_, id, station) in self.burying.drain(..due.len()) {
            ix.demote(station as usize, id, BURIED);
            self.removing.push_back((now + keep, id, station));
        }
        if !due.is_empty() {
            self.bury_last = now;
        }
        due_stations(self.removing.iter(), now, &mut due);
        ix.prefetch_moves(&due, BURIED);
        for (when, id, station) in self.removing.drain(..due.len()) {
            ix.remove(station as usize, id);
            self.removed_floor = self.removed_floor.max(when - keep);
        }
        ix.flush();
        self.gc_stations = due;
    }
}
