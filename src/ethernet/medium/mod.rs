//! The signals on the wire: the list of transmissions, their pruning, carrier
//! sense, the deference query and overlap at a receiver. Answers questions;
//! calls no MAC code.

pub(super) mod index_life;
mod key;
mod rank_set;
pub(super) mod signal_index;
pub(super) mod signal_list;

use super::topology::between;
use super::{IndexUse, Observer, Sim};
use crate::engine::Time;
use signal_index::{BusIndex, Latest};
pub(in crate::ethernet) use signal_list::NO_WAITERS;

/// One transmission on the bus: present at station j on [start + d, end + d).
/// 32 bytes: its two flags share a word with its waiters' place.
#[derive(Debug)]
pub(in crate::ethernet) struct Signal {
    pub(in crate::ethernet) station: u32,
    /// Stations whose deferral waits for this signal's end to be known: a
    /// place among the signal list's waiter lists, or [`NO_WAITERS`]
    /// (almost every signal: a list in each would double its size), in the
    /// low 30 bits; [`FIXED`] and [`COLLIDED`] above them.
    marks: u32,
    /// The sender's propagation time from the origin (copied from its
    /// station so that bus scans stay within this array).
    pub(in crate::ethernet) prop: Time,
    pub(in crate::ethernet) start: Time,
    pub(in crate::ethernet) end: Time,
}

/// The end is known for good (collision detected, or transmission over).
const FIXED: u32 = 1 << 31;
/// The transmission collided.
const COLLIDED: u32 = 1 << 30;

impl Signal {
    /// A transmission just started: its end not yet fixed, no collision
    /// known, no station waiting for it.
    #[inline]
    pub(in crate::ethernet) fn new(station: u32, prop: Time, start: Time, end: Time) -> Self {
        Signal {
            station,
            marks: NO_WAITERS,
            prop,
            start,
            end,
        }
    }

    /// Whether its end is known for good.
    #[inline]
    pub(in crate::ethernet) fn fixed(&self) -> bool {
        self.marks & FIXED != 0
    }

    /// Whether it collided.
    #[inline]
    pub(in crate::ethernet) fn collided(&self) -> bool {
        self.marks & COLLIDED != 0
    }

    /// Its end is known for good.
    #[inline]
    pub(in crate::ethernet) fn set_fixed(&mut self) {
        self.marks |= FIXED;
    }

    /// It collided, and its end is known for good.
    #[inline]
    pub(in crate::ethernet) fn set_collided(&mut self) {
        self.marks |= FIXED | COLLIDED;
    }

    /// The place of its waiters' list, or [`NO_WAITERS`].
    #[inline]
    pub(in crate::ethernet) fn waiters(&self) -> u32 {
        self.marks & NO_WAITERS
    }

    /// Sets the place of its waiters' list ([`NO_WAITERS`]: none).
    #[inline]
    pub(in crate::ethernet) fn set_waiters(&mut self, place: u32) {
        assert!(
            place <= NO_WAITERS,
            "waiter list place {place} out of range"
        );
        self.marks = (self.marks & !NO_WAITERS) | place;
    }
}

/// A signal as one station sees it: present there on [arrive, leave).
#[derive(Clone, Copy, Debug)]
pub(in crate::ethernet) struct Seen {
    pub(in crate::ethernet) arrive: Time,
    pub(in crate::ethernet) leave: Time,
    pub(in crate::ethernet) fixed: bool,
    /// Sent from the station's own position (no propagation delay).
    pub(in crate::ethernet) colocated: bool,
    pub(in crate::ethernet) id: u64,
}

/// Whether a signal present at a station at time `t` is sensed there at
/// `t`: only after it starts, strictly. A signal arriving from elsewhere
/// started before it arrives; one sent from the same position at `t` itself
/// is not sensed yet, so two co-located stations that decide at the same
/// instant both find the medium idle (and collide), as 802.3 stations do.
#[inline]
fn sensed(arrive: Time, colocated: bool, t: Time) -> bool {
    arrive < t || (arrive == t && !colocated)
}

/// One round of the deferral by tree walks.
enum Step {
    Done(Result<(Time, Time), (Time, u64)>),
    /// A start arriving at this time restarts the gap.
    Restart(Time),
}

impl<O: Observer> Sim<'_, O> {
    pub(in crate::ethernet) fn delay(&self, i: usize, j: usize) -> Time {
        between(
            self.hub,
            self.stations[i].prop,
            self.stations[j].prop,
            i == j,
        )
    }

    /// On a hub, how station `i` sees its own signal `s` come back: a hub
    /// that finds two ports active jams every port until its inputs fall
    /// idle (collision enforcement), so a sender whose signal met another
    /// at the hub hears carrier until its own signal has gone through the
    /// hub and back, `2 cable + repeater` after it (docs/model.md, "Hubs
    /// and repeaters"). Never a collision to the sender: it only defers.
    fn enforced_back(&self, i: usize, id: u64, s: &Signal) -> Option<Seen> {
        let r = self.hub?;
        if s.station as usize != i || !s.collided() {
            return None;
        }
        let c = s.prop;
        let (a, b) = (s.start + c, s.end + c);
        let meets =
            |k: &Signal| k.station != s.station && k.start + k.prop < b && a < k.end + k.prop;
        // Ids follow starts, so only the signals near s can meet it at the
        // hub: after it, those that start before b; before it, those that
        // start late enough to end, a signal and a cable later, after a.
        // (A scan of every signal here made each deferral on a hub with a
        // long repeater delay cost the square of the signals on the wire.)
        let reach = self.longest.saturating_add(self.max_delay);
        let signals = &self.signals;
        let after = (id + 1..signals.next_id())
            .map(|k| signals.by_id(k))
            .take_while(|k| k.start < b);
        let before = (signals.first_id()..id)
            .rev()
            .map(|k| signals.by_id(k))
            .take_while(|k| k.start.saturating_add(reach) > a);
        let met = after.chain(before).any(meets);
        debug_assert_eq!(met, signals.range(0).any(meets), "a hub's scan window");
        met.then(|| Seen {
            arrive: s.start + 2 * c + r,
            leave: s.end + 2 * c + r,
            fixed: s.fixed(),
            colocated: false,
            id,
        })
    }

    pub(in crate::ethernet) fn signal(&self, id: u64) -> &Signal {
        self.signals.by_id(id)
    }

    pub(in crate::ethernet) fn signal_mut(&mut self, id: u64) -> &mut Signal {
        self.signals.by_id_mut(id)
    }

    /// The earliest time >= `t0` at which station `i` may send, by 802.3's
    /// two-part deferral: after carrier drops (or the station's own
    /// transmission ends) it waits the gap; carrier in the first 2/3 of the
    /// gap restarts the wait, carrier in the last 1/3 is ignored.
    ///
    /// Returns `Ok((send_at, restart_before))`, or `Err((ctx, signal))` when the
    /// answer needs the end of a transmission still in progress.
    pub(in crate::ethernet) fn deference(
        &mut self,
        i: usize,
        t0: Time,
    ) -> Result<(Time, Time), (Time, u64)> {
        if let (Some(ix), true) = (&self.index, t0 >= self.removed_floor) {
            if !self.colocated_start_at(i, t0) {
                return self.defer_indexed(ix, i, t0);
            }
        }
        let me = self.stations[i].prop;
        let ifg = self.ifg;
        // One pass keeps the foreign signals that can still matter, as seen
        // at i, in id order; the loops below then run over few of them. A
        // signal whose carrier left i an interframe gap before t0 cannot: it
        // covers no cand >= t0, its drop is too old to start a gap that
        // reaches cand, and it arrived before any gap that does.
        let mut seen = std::mem::take(&mut self.scratch);
        let from = self.live_index(t0);
        // Every signal is written, and kept by advancing past it: whether
        // one is kept is a coin toss in a crowd, which a branch would
        // mispredict.
        seen.resize(
            self.signals.len() - from,
            Seen {
                arrive: 0,
                leave: 0,
                fixed: true,
                colocated: false,
                id: 0,
            },
        );
        let mut kept = 0;
        let hub = self.hub;
        for (id, s) in self.signals.with_ids(from) {
            let d = between(hub, me, s.prop, s.station as usize == i);
            seen[kept] = Seen {
                arrive: s.start + d,
                leave: s.end + d,
                fixed: s.fixed(),
                colocated: d == 0,
                id,
            };
            kept += usize::from((s.station as usize != i) & (s.end + d + ifg > t0));
        }
        seen.truncate(kept);
        if hub.is_some() {
            seen.extend(
                self.signals
                    .with_ids(from)
                    .filter_map(|(id, s)| self.enforced_back(i, id, s))
                    .filter(|e| e.leave + ifg > t0),
            );
        }
        let r = self.defer_over(i, t0, &seen);
        self.scratch = seen;
        r
    }

    /// [`Sim::deference`] over the signals `seen` at station `i`.
    pub(in crate::ethernet) fn defer_over(
        &self,
        i: usize,
        t0: Time,
        seen: &[Seen],
    ) -> Result<(Time, Time), (Time, u64)> {
        let ifg = self.ifg;
        let part1 = self.ifs_part1;
        let foreign = seen.iter().map(|s| (s.arrive, s.leave, s));
        let mut cand = t0;
        // At t0 the station senses (see `sensed`); once deferring, carrier
        // that arrives is followed from its arrival.
        let mut first = true;
        loop {
            let mut covered = false;
            let mut last_drop = self.stations[i].own_gap_at(cand, ifg);
            for (a, b, s) in foreign.clone() {
                let on = if first {
                    sensed(a, s.colocated, cand)
                } else {
                    a <= cand
                };
                if on && cand < b {
                    covered = true;
                    break;
                }
                if b <= cand && b + ifg > cand {
                    last_drop = Some(last_drop.map_or(b, |c: Time| c.max(b)));
                }
            }
            let c = if covered {
                // Follow the busy period to its end.
                let mut c = cand;
                loop {
                    let mut ext: Option<Time> = None;
                    for (a, b, s) in foreign.clone() {
                        if a <= c && c < b {
                            if !s.fixed {
                                return Err((c, s.id));
                            }
                            ext = Some(ext.map_or(b, |e: Time| e.max(b)));
                        }
                    }
                    match ext {
                        Some(e) => c = e,
                        None => break,
                    }
                }
                c
            } else if let Some(c) = last_drop {
                c
            } else {
                return Ok((cand, cand));
            };
            first = false;
            // The gap runs from c; carrier starting in its first part restarts
            // it. (Carrier arriving at c itself is only possible from a
            // co-located signal not yet sensed at t0 = c.)
            let restart = foreign
                .clone()
                .map(|(a, _, _)| a)
                .filter(|&a| a >= c && a < c + part1)
                .min();
            match restart {
                Some(a) => cand = a,
                None => return Ok((c + ifg, c + part1)),
            }
        }
    }

    /// [`Sim::deference`] by the bus index: the loop of [`Sim::defer_over`],
    /// asking the index the same questions.
    pub(in crate::ethernet) fn defer_indexed(
        &self,
        ix: &BusIndex,
        i: usize,
        t0: Time,
    ) -> Result<(Time, Time), (Time, u64)> {
        let mut cand = t0;
        let answer = loop {
            if let Some(answer) = self.defer_settled(ix, i, cand) {
                break Ok(answer);
            }
            match self.defer_walked_step(ix, i, cand, true) {
                Step::Done(r) => break r,
                Step::Restart(a) => cand = a,
            }
        };
        debug_assert_eq!(answer, self.defer_walked(ix, i, t0), "station {i} at {t0}");
        answer
    }

    /// [`Sim::defer_indexed`] by the tree walks alone (for checks).
    fn defer_walked(&self, ix: &BusIndex, i: usize, t0: Time) -> Result<(Time, Time), (Time, u64)> {
        let mut cand = t0;
        loop {
            match self.defer_walked_step(ix, i, cand, false) {
                Step::Done(r) => return r,
                Step::Restart(a) => cand = a,
            }
        }
    }

    /// The latest arrivals at station `i` over the trees a query about
    /// time `c` looks at, when every start among them has reached `i` by
    /// `c`, no end still unknown arrives after `c` and its own signals
    /// ended by `c`: then the busy period at `c` (if any) ends with the
    /// latest end, and no start arrives after it. `None` otherwise.
    fn arrived_by(&self, ix: &BusIndex, i: usize, c: Time) -> Option<Latest> {
        // Its own signals are in the index too (at delay 0), and must not
        // pass for another station's: they all ended by its last end.
        if self.stations[i].own_end().is_some_and(|e| e > c) {
            return None;
        }
        let seen = ix.latest(self.stations[i].place(), c);
        let c = c as i64;
        (seen.start <= c && seen.unfixed_end <= c).then_some(seen)
    }

    /// The deferral from `cand` when every signal the index holds has
    /// already reached station `i` and none whose end is still unknown is
    /// present there: then the busy period at `cand` ends with the latest
    /// end to arrive, and no start can arrive after it to restart the gap,
    /// so the answer needs only [`BusIndex::latest`], not a walk. This is
    /// the common case in a crowd, where a station waking from its backoff
    /// finds a collision that has already spread over the whole bus.
    /// `None` when the case does not apply (the walks answer).
    fn defer_settled(&self, ix: &BusIndex, i: usize, cand: Time) -> Option<(Time, Time)> {
        let (ifg, part1) = (self.ifg, self.ifs_part1);
        let c = cand as i64;
        let seen = self.arrived_by(ix, i, cand)?;
        if seen.end > c {
            // Busy until the latest end; nothing arrives after it.
            let end = seen.end as Time;
            return Some((end + ifg, end + part1));
        }
        // Idle: the latest end in the gap window, its own included.
        let lo = cand.saturating_sub(ifg);
        let seen = ix.latest(self.stations[i].place(), lo);
        if seen.start > c || seen.end > c {
            return None;
        }
        let lo = c - ifg as i64;
        let last = (seen.end > lo).then_some(seen.end as Time);
        let Some(drop) = last.max(self.stations[i].own_gap_at(cand, ifg)) else {
            return Some((cand, cand));
        };
        // A start arriving after `drop` would end after the latest end:
        // none does among the signals just seen, and the others had left
        // every station by the gap window's start, before `drop`.
        Some((drop + ifg, drop + part1))
    }

    /// One round of [`Sim::defer_indexed`] by tree walks: the answer, or
    /// the arrival that restarts the gap. With `roots`, the roots' bounds
    /// answer what they can once every signal has reached `i` (see
    /// [`Sim::arrived_by`]): in a crowd the follow-up questions of a busy
    /// period mostly come after the collision's farthest signal arrived.
    fn defer_walked_step(&self, ix: &BusIndex, i: usize, cand: Time, roots: bool) -> Step {
        let ifg = self.ifg;
        let part1 = self.ifs_part1;
        let place = self.stations[i].place();
        {
            // Carrier at cand: follow the busy period to its end.
            let busy = match ix.busy_until(place, cand) {
                Err(id) => return Step::Done(Err((cand, id))),
                Ok(end) => end,
            };
            let c = if let Some(first_end) = busy {
                let mut c = first_end;
                loop {
                    if let Some(seen) = roots.then(|| self.arrived_by(ix, i, c)).flatten() {
                        // Busy until the latest end (if after c), after
                        // which nothing arrives to restart the gap.
                        let end = c.max(seen.end.max(0) as Time);
                        return Step::Done(Ok((end + ifg, end + part1)));
                    }
                    match ix.busy_until(place, c) {
                        Err(id) => return Step::Done(Err((c, id))),
                        Ok(Some(e)) => c = e,
                        Ok(None) => break,
                    }
                }
                c
            } else {
                let lo = cand as i64 - ifg as i64;
                let own = self.stations[i].own_gap_at(cand, ifg);
                match own.max(ix.last_end_in(place, lo, cand)) {
                    Some(c) => c,
                    None => return Step::Done(Ok((cand, cand))),
                }
            };
            // No start arrives after c when every start had arrived by c.
            if roots && ix.latest(place, c).start <= c as i64 {
                return Step::Done(Ok((c + ifg, c + part1)));
            }
            match ix.first_start_after(place, c, c + part1) {
                Some(a) => Step::Restart(a),
                None => Step::Done(Ok((c + ifg, c + part1))),
            }
        }
    }

    /// Drops signals that can no longer matter to any station, and moves the
    /// start of the live signals past those that have left every station an
    /// interframe gap ago.
    pub(in crate::ethernet) fn prune(&mut self, now: Time) {
        if now < self.prune_next {
            return;
        }
        self.prune_next = now + self.ifs_part1;
        while let Some(s) = self.signals.front() {
            if s.fixed() && s.waiters() == NO_WAITERS && s.end + self.horizon < now {
                self.signals.pop_front();
            } else {
                break;
            }
        }
        let mut k = self.live_from.max(self.signals.first_id());
        while k < self.signals.next_id() {
            let s = self.signal(k);
            if s.fixed() && s.end + self.max_delay + self.ifg <= now {
                k += 1;
            } else {
                break;
            }
        }
        if k > self.live_from {
            self.live_from = k;
            self.live_since = now;
        }
        if let IndexUse::WhileBusy { detach, .. } = self.index_use {
            if self.index.is_some() && self.signals.len() - self.live_index(now) < detach {
                self.detach_index();
            }
        }
    }

    /// Index in `signals` of the first signal that can matter to carrier
    /// sense, deferral or detection at any time >= `t`. The signals before
    /// `live_from` had left every station an interframe gap before
    /// `live_since`: at `t >= live_since` they cover nothing, start no gap
    /// that is still running and arrive nowhere. Earlier `t` (a deferral
    /// resumed from the past) scans everything.
    pub(in crate::ethernet) fn live_index(&self, t: Time) -> usize {
        if t >= self.live_since {
            let first = self.signals.first_id();
            (self.live_from.max(first) - first) as usize
        } else {
            0
        }
    }

    /// Whether another station's signal is present at station `i` at `t`.
    pub(in crate::ethernet) fn carrier_at(&self, i: usize, t: Time) -> bool {
        if let (Some(ix), false) = (&self.index, self.colocated_start_at(i, t)) {
            // Only called at the current time: removed signals are gone.
            return ix.present(self.stations[i].place(), t);
        }
        let me = self.stations[i].prop;
        let from = self.live_index(t);
        self.signals.with_ids(from).any(|(id, s)| {
            let j = s.station as usize;
            let d = between(self.hub, me, s.prop, j == i);
            let foreign = j != i && sensed(s.start + d, d == 0, t) && t < s.end + d;
            foreign
                || self
                    .enforced_back(i, id, s)
                    .is_some_and(|e| e.arrive <= t && t < e.leave)
        })
    }

    /// Whether another station at `i`'s position may have started a signal
    /// at `t`, which `i` must not sense at `t` (see `sensed`): the bus index
    /// does not tell such signals apart, so these queries scan. (It may
    /// answer yes when the twins started later: the scan is exact anyway.)
    fn colocated_start_at(&self, i: usize, t: Time) -> bool {
        let Some(&g) = self.twin_group.get(i) else {
            return false;
        };
        self.twin_starts
            .get(g as usize)
            .is_some_and(|&(at, first, k)| at > t || (at == t && (k > 1 || first as usize != i)))
    }

    /// Notes that station `i` starts a signal at `t`, for
    /// [`Sim::colocated_start_at`].
    pub(in crate::ethernet) fn note_start(&mut self, i: usize, t: Time) {
        let Some(&g) = self.twin_group.get(i) else {
            return;
        };
        if let Some(e) = self.twin_starts.get_mut(g as usize) {
            *e = if e.0 == t {
                (t, e.1, e.2 + 1)
            } else {
                (t, i as u32, 1)
            };
        }
    }

    /// Whether any other signal overlapped signal `id` at station `at`.
    pub(in crate::ethernet) fn overlapped_at(&self, id: u64, at: usize) -> bool {
        let (start, end, from) = {
            let s = self.signal(id);
            (s.start, s.end, s.station as usize)
        };
        let d = self.delay(at, from);
        self.overlapped(id, at, start + d, end + d)
    }

    /// Whether any signal but `id` is present at station `at` at some time in
    /// [a0, b0).
    pub(in crate::ethernet) fn overlapped(&self, id: u64, at: usize, a0: Time, b0: Time) -> bool {
        let pa = self.stations[at].prop;
        match &self.index {
            // A signal removed at r has left every station by r, so only
            // those removed after a0 can overlap.
            Some(ix) if a0 >= self.removed_floor => {
                ix.overlaps(self.stations[at].place(), id, a0, b0)
            }
            _ => self.signals.with_ids(0).any(|(k, s)| {
                let dk = between(self.hub, pa, s.prop, s.station as usize == at);
                k != id && s.start + dk < b0 && a0 < s.end + dk
            }),
        }
    }
}
