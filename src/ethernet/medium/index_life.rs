//! The life of the signal index in a crowd: taken up while many signals can
//! matter, set aside when few can, and signals moved down its trees in batches.

use super::signal_index::{BusIndex, FADING, WIRE};
use crate::engine::{EventQueue, Time};
use crate::ethernet::{Observer, Sim};
use std::collections::VecDeque;

/// The buried signals waiting for their removal, by burial: the time of each
/// collection that buried signals, with the number of buckets it buried them
/// in, and those buckets, each listed once per burial. A removal takes out
/// of a listed bucket every buried signal old enough to have been buried by
/// that time, whichever burial buried it: 4 bytes per bucket and burial, where
/// a queue of the signals themselves took 24 per signal.
#[derive(Default)]
pub(in crate::ethernet) struct Graves {
    burials: VecDeque<(Time, u32)>,
    buckets: VecDeque<u32>,
    /// Per bucket, the time of the last burial that listed it.
    listed: Vec<Time>,
}

impl Graves {
    /// Lists `bucket` for the burial at `at` (the latest), once: false if
    /// it was listed already.
    fn list(&mut self, at: Time, bucket: usize) -> bool {
        if self.listed.len() <= bucket {
            self.listed.resize(bucket + 1, Time::MAX);
        }
        if self.listed[bucket] == at {
            return false;
        }
        self.listed[bucket] = at;
        self.buckets.push_back(bucket as u32);
        match self.burials.back_mut() {
            Some((t, n)) if *t == at => *n += 1,
            _ => self.burials.push_back((at, 1)),
        }
        true
    }

    /// Empties the queue. (The burial times listed stay: later burials are
    /// at later times.)
    pub(in crate::ethernet) fn clear(&mut self) {
        self.burials.clear();
        self.buckets.clear();
    }
}

/// Moves asked for at once: enough loads in flight to hide their latency,
/// in scratch lists that stay small.
const BATCH: usize = 1024;

/// The signals off the wire, waiting for their burial: per signal, in time
/// order, when it is due (an interframe gap after it left the wire) and its
/// station. Its bucket's fading signals that ended long enough before go
/// with it, so no id is kept: 12 bytes a signal.
#[derive(Default)]
pub(in crate::ethernet) struct Burying {
    due: VecDeque<Time>,
    stations: VecDeque<u32>,
}

impl Burying {
    /// Moves to `out` the stations of up to [`BATCH`] signals due by `now`.
    fn take_due(&mut self, now: Time, out: &mut Vec<u32>) {
        out.clear();
        while out.len() < BATCH && self.due.front().is_some_and(|&t| t <= now) {
            self.due.pop_front();
            out.extend(self.stations.pop_front());
        }
    }

    pub(in crate::ethernet) fn clear(&mut self) {
        self.due.clear();
        self.stations.clear();
    }
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
        self.graves.clear();
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
    #[inline]
    pub(in crate::ethernet) fn index_gc(&mut self, now: Time) {
        if self.index.is_some() && now >= self.gc_next {
            self.move_down(now);
        }
    }

    /// [`Sim::index_gc`]'s moves, out of line: the run loop that asks for
    /// them at every event stays small (without an index, or between
    /// collections, nothing is due).
    #[inline(never)]
    fn move_down(&mut self, now: Time) {
        let Some(ix) = &mut self.index else {
            return;
        };
        self.gc_next = now + (self.ifs_part1 / 2).max(1);
        // Look-backs are shorter than a transmission plus the longest delay
        // and a gap; keep twice the horizon, and scan everything before that.
        let keep = 2 * self.horizon;
        // Each batch of moves first asks for the memory it will touch.
        let mut due = std::mem::take(&mut self.gc_stations);
        let mut moves = std::mem::take(&mut self.gc_moves);
        // Off the wire: moved to the fading tree, and queued for burial.
        loop {
            moves.clear();
            due.clear();
            while moves.len() < BATCH && self.dying.peek_time().is_some_and(|when| when <= now) {
                let Some((when, (id, station))) = self.dying.pop() else {
                    break;
                };
                moves.push(id);
                due.push(station);
                self.burying.due.push_back(when + self.ifg);
                self.burying.stations.push_back(station);
            }
            if due.is_empty() {
                break;
            }
            ix.prefetch_moves(&due, WIRE);
            for (&id, &station) in moves.iter().zip(&due) {
                ix.fade(station as usize, id);
            }
            self.fade_last = now;
        }
        // Buried: those due, and with each, the fading signals of its bucket
        // due by now (once per bucket and burial: the bucket is listed for
        // removal then).
        if let Some(last_end) = now.checked_sub(self.max_delay + self.ifg) {
            loop {
                self.burying.take_due(now, &mut due);
                if due.is_empty() {
                    break;
                }
                ix.prefetch_moves(&due, FADING);
                for &station in &due {
                    let b = ix.bucket(station as usize);
                    if self.graves.list(now, b) {
                        ix.bury_ended(b, last_end);
                    }
                }
                self.bury_last = now;
            }
        }
        // Out: the signals of each burial `keep` ago. A signal buried at `at`
        // had left every station an interframe gap before (see above): its
        // end + max_delay + ifg <= at, and every buried signal that old goes
        // with it (those buried later only sooner than their own turn).
        let graves = &mut self.graves;
        while let Some(&(at, count)) = graves.burials.front() {
            if at + keep > now {
                break;
            }
            graves.burials.pop_front();
            let count = count as usize;
            ix.prefetch_buried(graves.buckets.range(..count).map(|&b| b as usize));
            // A burial happens only from max_delay + ifg on (above).
            let last_end = at - (self.max_delay + self.ifg);
            for b in graves.buckets.drain(..count) {
                ix.remove_ended(b as usize, last_end);
            }
            self.removed_floor = self.removed_floor.max(at);
        }
        ix.flush();
        self.gc_stations = due;
        self.gc_moves = moves;
    }
}
