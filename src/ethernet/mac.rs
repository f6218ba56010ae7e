//! The 802.3 MAC's transitions: contend, defer, transmit, collisionDetect and
//! jam, backoff, discard, and the check of a frame at its destination.

use super::medium::{Signal, NO_WAITERS};
use super::station::{Draws, Frame, Mac};
use super::topology::between;
use super::{Event, IndexUse, MacEvent, Observer, Sim};
use crate::backoff::{BackoffState, Context, PolicyFault};
use crate::engine::Time;
use crate::ethernet::Access;
use crate::mem::prefetch_lines;
use crate::traffic::Arrivals;
use rand::RngExt;

impl<O: Observer> Sim<'_, O> {
    pub(super) fn add_frame(&mut self, t: Time, i: usize) {
        let n = self.stations.len() as u32;
        let gi = self.group_of(i);
        let g = &self.sc.groups[gi];
        let (law, fixed_dst, capacity) = (&g.frame, g.destination, g.queue);
        let s = &mut self.stations[i];
        let (bytes, dst) = self
            .generators
            .with(i, Draws::Traffic, &mut s.streams_at, |rng| {
                let bytes = law.sample(rng);
                let dst = match fixed_dst {
                    Some(d) => d as u32,
                    None if n > 1 => {
                        let r = rng.random_range(0..n - 1);
                        if r >= i as u32 {
                            r + 1
                        } else {
                            r
                        }
                    }
                    None => i as u32,
                };
                (bytes, dst)
            });
        let queued = s.queue.len() < capacity;
        let row = &mut self.stations[i].row;
        self.recorder.arrival(t, (i, row), gi, bytes, queued);
        self.observer
            .on(t, i as u32, &MacEvent::Arrival { bytes, queued });
        if !queued {
            return;
        }
        let s = &mut self.stations[i];
        s.queue.push_back(Frame {
            arrival: t,
            bytes,
            dst,
        });
        if s.mac == Mac::Idle {
            self.contend(t, i, t);
        }
    }

    /// After a frame leaves (sent or discarded): contend for the next one.
    #[inline]
    pub(super) fn next_frame(&mut self, t: Time, i: usize) {
        if self.stations[i].queue.is_empty() {
            self.stations[i].mac = Mac::Idle;
            if let Arrivals::Saturated = self.group_arrivals(i) {
                self.add_frame(t, i);
            }
        } else {
            self.contend(t, i, t);
        }
    }

    /// Station `i` has a frame at the head of its queue and may contend,
    /// deferring as it must from time `from` (<= now).
    pub(super) fn contend(&mut self, now: Time, i: usize, from: Time) {
        if self.extras.continues_burst(i) {
            // Inside a burst the carrier never dropped: no deferral.
            return self.start_tx(now, i);
        }
        if self.access != Access::CsmaCd && self.contend_by_mode(now, i) {
            return;
        }
        let from = self.slot_sample_time(now, i, from);
        match self.deference(i, from) {
            Ok((at, _)) if at <= now => self.send_now(now, i),
            Ok((at, restart_before)) => self.schedule_start(now, i, at, restart_before),
            Err(_) if self.access == Access::CsmaCdNonPersistent => self.sense_later(now, i),
            Err((ctx, on)) => {
                self.stations[i].mac = Mac::DeferringOnSignal { on, ctx };
                self.signals.add_waiter(on, i as u32);
                self.observer
                    .on(now, i as u32, &MacEvent::Defer { until: None });
            }
        }
    }

    /// Station `i` will send at `at` unless a signal that starts from now on
    /// reaches it before `restart_before`.
    pub(super) fn schedule_start(&mut self, now: Time, i: usize, at: Time, restart_before: Time) {
        let s = &mut self.stations[i];
        s.mac = Mac::DeferringGap {
            restart_before,
            seq: self.signals.next_id(),
            since: now,
        };
        s.timer = s.timer.wrapping_add(1);
        self.events.push(at, Event::TxStart(i as u32, s.timer));
        self.observer
            .on(now, i as u32, &MacEvent::Defer { until: Some(at) });
    }

    /// The scheduled send time has come: send, unless a signal that started
    /// after the schedule reached the station early enough to restart the gap.
    pub(super) fn scheduled_start(&mut self, t: Time, i: usize) {
        let Mac::DeferringGap {
            restart_before,
            seq,
            since,
        } = self.stations[i].mac
        else {
            return;
        };
        let me = self.stations[i].prop;
        // Signals start in id order, and arrive nowhere before they start:
        // none with id >= seq can reach i before `restart_before` when the
        // first of them starts no earlier (in a crowd, the next collision
        // starts a full gap after the last one's carrier dropped).
        let none_new = seq >= self.signals.next_id()
            || (seq >= self.signals.first_id() && self.signal(seq).start >= restart_before);
        let looked = || {
            if let (Some(ix), true) = (&self.index, since >= self.removed_floor) {
                // Signals with id >= seq started at or after `since`, and
                // the index holds every signal that can matter from then on.
                ix.first_arrival_since(self.stations[i].place(), seq, restart_before)
            } else {
                self.signals
                    .range(
                        seq.saturating_sub(self.signals.first_id())
                            .min(self.signals.len() as u64) as usize,
                    )
                    .filter(|s| s.station as usize != i)
                    .map(|s| s.start + between(self.hub, me, s.prop, false))
                    .filter(|&a| a < restart_before)
                    .min()
            }
        };
        let first_new = if none_new {
            debug_assert_eq!(looked(), None);
            None
        } else {
            looked()
        };
        match first_new {
            None => self.send_now(t, i),
            Some(a) => self.contend(t, i, a),
        }
    }

    pub(super) fn start_tx(&mut self, t: Time, i: usize) {
        let m = &self.sc.medium;
        let Some(&frame) = self.stations[i].queue.front() else {
            self.stations[i].mac = Mac::Idle;
            return;
        };
        // Preamble, frame and, at 1 Gb/s, the carrier extension: the sender
        // watches for collisions through all of it. A later frame of a burst
        // is its filled gap, preamble and frame, never extended.
        let in_burst = self.extras.in_burst(i);
        let full_end = if in_burst {
            t + m.ifg_ps + m.preamble_ps + 8 * frame.bytes as Time * m.bit_ps
        } else {
            if let Some(b) = self.extras.bursts.get_mut(i) {
                b.start = t;
            }
            t + m.preamble_ps + m.frame_on_wire_ps(frame.bytes)
        };
        let me = self.stations[i].prop;
        // Collision detection at i: the first foreign signal present during
        // its transmission; and i's signal may reach transmitting stations
        // before anything else does.
        if let IndexUse::WhileBusy { attach, .. } = self.index_use {
            if self.index.is_none() && self.signals.len() - self.live_index(t) > attach {
                self.attach_index(t);
            }
        }
        let mut detect = Time::MAX;
        let mut updates = std::mem::take(&mut self.updates);
        if let Some(ix) = &self.index {
            let place = self.stations[i].place();
            // Removed signals have left every station before now.
            // Only an arrival before the end matters: a later one schedules
            // no detection, and `detect_at` is compared only with arrivals
            // before this signal's end.
            detect = ix.first_presence(place, t, full_end).unwrap_or(Time::MAX);
            // Only the nearest transmitter on each side can be reached by
            // this signal first: a farther one j has a nearer one j' between
            // it and i, whose signal (sent no later than now) reaches j no
            // later than this one does, and j's detection time already
            // accounts for j' (set at j's start or lowered at j''s).
            // Each is sending its own signal, whose end is not final: the
            // one its state names.
            let senders = ix.nearest_sending(place);
            let mut near = senders.map(|j| {
                j.and_then(|j| match self.stations[j].mac {
                    Mac::Transmitting { signal, .. } => Some((j, signal)),
                    _ => None,
                })
            });
            debug_assert!(senders.iter().flatten().count() == near.iter().flatten().count());
            // In the order of their signals.
            if let [Some(x), Some(y)] = near {
                if y.1 < x.1 {
                    near = [Some(y), Some(x)];
                }
            }
            for (j, sid) in near.into_iter().flatten() {
                debug_assert!(!self.signal(sid).fixed());
                let arrive = t + self.delay(i, j);
                if arrive < self.stations[j].detect_at() && arrive < self.signal(sid).end {
                    updates.push((j, arrive));
                }
            }
        } else {
            for s in self.signals.range(self.live_index(t)) {
                let j = s.station as usize;
                if j == i {
                    continue;
                }
                let d = between(self.hub, me, s.prop, false);
                if s.end + d > t {
                    detect = detect.min((s.start + d).max(t));
                }
                // A signal is unfixed exactly while its sender is transmitting it
                // (detect and tx_end fix it before the sender moves on), so this
                // needs no look at the sender's state.
                if !s.fixed() {
                    debug_assert!(matches!(
                        self.stations[j].mac,
                        Mac::Transmitting { signal, .. } if std::ptr::eq(self.signal(signal), s)
                    ));
                    let arrive = t + d;
                    if arrive < self.stations[j].detect_at() && arrive < s.end {
                        updates.push((j, arrive));
                    }
                }
            }
        }
        for &(j, at) in &updates {
            let sj = &mut self.stations[j];
            sj.set_detect_at(at);
            sj.detect_token = sj.detect_token.wrapping_add(1);
            self.events
                .push(at, Event::CollisionDetect(j as u32, sj.detect_token));
        }
        updates.clear();
        self.updates = updates;
        self.note_start(i, t);
        let id = self.signals.next_id();
        // Until the detection fixes it, the signal's end is held at the
        // latest it can be: the jam after the detection expected now (a
        // later start can only bring the detection earlier), and at least
        // a picosecond past that detection, which must find the signal
        // still being sent when the jam is empty (`jam = "0bit"`); or the
        // frame's end when no detection is expected. So in a crowd nearly
        // every signal is fixed at the end it was held at, which changes
        // no bound of the bus index, and a deferral waits on a signal in
        // progress only while it can still be present. (On a hub, whose
        // collision enforcement reads the ends of signals in progress, and
        // where the index is not used, the frame's end is held.)
        let detected = self.detects_collisions && detect < full_end;
        let bound = if detected && self.hub.is_none() {
            self.jam_end(in_burst, t, detect).max(detect + 1)
        } else {
            full_end
        };
        if let Some(ix) = &mut self.index {
            ix.add(self.stations[i].place(), id, t, bound);
        }
        self.signals.push_back(Signal::new(i as u32, me, t, bound));
        let s = &mut self.stations[i];
        s.mac = Mac::Transmitting {
            signal: id,
            detect_at: detect,
        };
        s.detect_token = s.detect_token.wrapping_add(1);
        if detect < full_end {
            self.events
                .push(detect, Event::CollisionDetect(i as u32, s.detect_token));
        }
        s.timer = s.timer.wrapping_add(1);
        // A detection before the end fixes a new end (and pushes its own
        // TxEnd), which would leave this one stale: only push it when it can
        // fire. A later start_tx can only move detection earlier.
        if !detected {
            self.events.push(full_end, Event::TxEnd(i as u32, s.timer));
        }
        let attempt = s.collisions + 1;
        if in_burst {
            let until = t + self.sc.medium.ifg_ps;
            self.observer.on(t, i as u32, &MacEvent::BurstGap { until });
        }
        self.recorder.attempt(t, (i, &mut s.row), frame.bytes);
        self.observer.on(
            t,
            i as u32,
            &MacEvent::TxStart {
                dst: frame.dst,
                bytes: frame.bytes,
                attempt,
                end: full_end,
            },
        );
    }

    /// The end of the jam of a transmission started at `start` (`in_burst`:
    /// a later frame of a burst) when its sender detects a collision at
    /// `t`: the preamble is always finished, then the jam is sent. In a
    /// burst, after its first frame, every collision is late, and the
    /// preamble follows the filled gap.
    #[inline]
    fn jam_end(&self, in_burst: bool, start: Time, t: Time) -> Time {
        let m = &self.sc.medium;
        let lead = if in_burst { m.ifg_ps } else { 0 } + m.preamble_ps;
        t.max(start + lead) + m.jam_ps
    }

    pub(super) fn detect(&mut self, t: Time, i: usize) {
        let Mac::Transmitting { signal, .. } = self.stations[i].mac else {
            return;
        };
        if !self.detects_collisions {
            // Without collision detection the frame runs to its end.
            return;
        }
        let m = &self.sc.medium;
        let (start, end) = {
            let s = self.signal(signal);
            (s.start, s.end)
        };
        if t >= end {
            return;
        }
        let in_burst = self.extras.in_burst(i);
        let jam_end = self.jam_end(in_burst, start, t);
        let jam_start = jam_end - m.jam_ps;
        let late = in_burst || t > start + m.preamble_ps + m.slot_ps;
        {
            let s = self.signal_mut(signal);
            s.end = jam_end;
            s.set_collided();
        }
        self.index_fixed(i, signal, jam_end);
        let st = &mut self.stations[i];
        // The jam's end draws a backoff: its generator, out of line and
        // seldom in cache in a crowd, can load during the jam.
        self.generators.prefetch(i, Draws::Backoff);
        st.set_detect_at(Time::MAX);
        st.timer = st.timer.wrapping_add(1);
        self.events.push(jam_end, Event::TxEnd(i as u32, st.timer));
        self.recorder.collision_detected(t, (i, &mut st.row), late);
        self.observer
            .on(t, i as u32, &MacEvent::CollisionDetected { late });
        self.observer.on(
            t,
            i as u32,
            &MacEvent::Jam {
                start: jam_start,
                end: jam_end,
            },
        );
    }

    pub(super) fn tx_end(&mut self, t: Time, i: usize) {
        let Mac::Transmitting { signal, .. } = self.stations[i].mac else {
            return;
        };
        let (collided, waiting, start, was_fixed) = {
            let s = self.signal_mut(signal);
            let was_fixed = s.fixed();
            s.set_fixed();
            let waiters = s.waiters();
            s.set_waiters(NO_WAITERS);
            (s.collided(), waiters, s.start, was_fixed)
        };
        let mut waiters = self.signals.release_waiters(waiting);
        if !was_fixed {
            self.index_fixed(i, signal, t);
        }
        // Without collision detection the sender learns at the end of its
        // frame whether another signal overlapped it (at the sender).
        let collided = collided || (!self.detects_collisions && self.overlapped_at(signal, i));
        if collided {
            self.channel.observe_collision(start, t);
        } else {
            self.channel.observe_success();
        }
        self.stations[i].own_end = t;
        self.stations[i].set_detect_at(Time::MAX);
        if let Some(b) = self.extras.bursts.get_mut(i) {
            b.frame = false;
        }
        if collided {
            let g = self.group_of(i);
            self.recorder
                .collision_ended(start, t, (i, &mut self.stations[i].row), g);
            let spec = self.spec(i);
            let mut fresh = BackoffState::new(spec);
            let memory = self.backoffs.get_mut(i).unwrap_or(&mut fresh);
            let s = &mut self.stations[i];
            s.collisions += 1;
            let n = s.collisions;
            let slot = self.sc.medium.slot_ps;
            let seen = Context {
                slot,
                observed: self.channel.collisions_since_success(),
                retry_after: 0,
            };
            memory.on_collision(spec, n, &seen);
            if n >= spec.attempt_limit() {
                s.queue.pop_front();
                s.collisions = 0;
                memory.on_discard(spec);
                self.recorder.discard(t, (i, &mut s.row), g);
                self.observer
                    .on(t, i as u32, &MacEvent::Discard { attempts: n });
                self.next_frame(t, i);
            } else {
                let draw = self
                    .generators
                    .with(i, Draws::Backoff, &mut s.streams_at, |r| {
                        memory.draw(spec, n, slot, &self.channel, 0, r)
                    });
                let draw = match draw {
                    Ok(d) => d,
                    Err(f) => return self.policy_fault(i, f),
                };
                s.mac = Mac::Backoff;
                s.timer = s.timer.wrapping_add(1);
                // Saturating: a wait past the end of the clock means "never again in
                // this run", which is what a huge backoff window asks for.
                self.events.push(
                    t.saturating_add(draw.delay),
                    Event::Contend(i as u32, s.timer),
                );
                self.observer.on(
                    t,
                    i as u32,
                    &MacEvent::Backoff {
                        n,
                        k: draw.k,
                        r: draw.r,
                        delay: draw.delay,
                    },
                );
            }
        } else {
            let spec = self.spec(i);
            // The frame sent is still the head of the sender's queue.
            if let Some(frame) = self.stations[i].queue.pop_front() {
                let d = self.delay(i, frame.dst as usize);
                self.events.push(t + d, Event::Deliver(signal));
                self.deliveries.push((signal, frame));
            }
            if let Some(memory) = self.backoffs.get_mut(i) {
                let seen = Context {
                    slot: self.sc.medium.slot_ps,
                    observed: self.channel.collisions_since_success(),
                    retry_after: 0,
                };
                memory.on_success(spec, self.stations[i].collisions, &seen);
            }
            let s = &mut self.stations[i];
            s.collisions = 0;
            self.recorder.success(t, i);
            self.observer.on(t, i as u32, &MacEvent::TxSuccess);
            // The burst goes on with the next frame, if one is queued (see
            // `contend`), while the burst timer is below the limit.
            let limit = self.sc.medium.burst_limit_ps;
            if let Some(b) = self.extras.bursts.get_mut(i) {
                b.next = t - b.start < limit;
            }
            if let Access::CsmaCdPPersistent { .. } = self.access {
                // The sender contends for its next frame after the stations
                // that waited on this one, so that they start their slots
                // from this end as it does.
                self.wake_waiters(t, signal, std::mem::take(&mut waiters));
            }
            self.next_frame(t, i);
            if let Some(b) = self.extras.bursts.get_mut(i) {
                b.next = false;
            }
        }
        self.wake_waiters(t, signal, waiters);
        self.prune(t);
    }

    /// The end of a successful transmission reaches its destination: it is
    /// intact unless any other signal overlapped it there.
    pub(super) fn deliver(&mut self, t: Time, id: u64) {
        let Some(k) = self.deliveries.iter().position(|&(s, _)| s == id) else {
            return;
        };
        let frame = self.deliveries.swap_remove(k).1;
        let (i, start, end) = {
            let s = self.signal(id);
            (s.station as usize, s.start, s.end)
        };
        let dst = frame.dst as usize;
        let d = self.delay(i, dst);
        let (a0, b0) = (start + d, end + d);
        let corrupted = self.overlapped(id, dst, a0, b0);
        let delay = end - frame.arrival;
        let g = self.group_of(i);
        let row = &mut self.stations[i].row;
        self.recorder
            .delivered(end, (i, row, g), frame.bytes, delay, !corrupted);
        self.observer.on(
            t,
            i as u32,
            &MacEvent::Delivered {
                dst: frame.dst,
                intact: !corrupted,
                delay,
            },
        );
    }

    //
    // Kept apart from the carrier-sense machinery above: each mode branches off
    // at `contend` (before deferral), `send_now` (the moment a station would
    // send), `detect` (ignored without collision detection) and `tx_end`
    // (failure judged at the end of the frame). csma-cd takes none of them.

    /// The stations blocked on `signal` contend again, now that its end is
    /// known.
    pub(super) fn wake_waiters(&mut self, t: Time, signal: u64, waiters: Vec<u32>) {
        // In a crowd their states are scattered: ask for all of them first.
        for &w in &waiters {
            if let Some(s) = self.stations.get(w as usize) {
                prefetch_lines(s);
            }
        }
        for w in waiters {
            let w = w as usize;
            if let Mac::DeferringOnSignal { on, ctx } = self.stations[w].mac {
                if on == signal {
                    self.contend(t, w, ctx);
                }
            }
        }
    }

    /// The station may send now: p-persistent stations toss their coin first.
    pub(super) fn send_now(&mut self, t: Time, i: usize) {
        if let Access::CsmaCdPPersistent { p } = self.access {
            let s = &mut self.stations[i];
            let u: f64 = self
                .generators
                .with(i, Draws::Backoff, &mut s.streams_at, |r| r.random());
            if u >= p {
                // Wait a slot and sense again.
                let at = t + self.sc.medium.slot_ps;
                s.mac = Mac::Backoff;
                s.timer = s.timer.wrapping_add(1);
                self.events.push(at, Event::Contend(i as u32, s.timer));
                self.observer
                    .on(t, i as u32, &MacEvent::Defer { until: Some(at) });
                return;
            }
        }
        self.start_tx(t, i)
    }

    /// Non-persistent: the medium is busy, so sense again after one slot plus
    /// the wait the station's policy would draw now (n = max(1, collisions)),
    /// without touching the policy's memory. The extra slot guarantees
    /// progress for policies that can draw zero.
    pub(super) fn sense_later(&mut self, now: Time, i: usize) {
        let spec = self.spec(i);
        let slot = self.sc.medium.slot_ps;
        let mut probe = self
            .backoffs
            .get(i)
            .cloned()
            .unwrap_or_else(|| BackoffState::new(spec));
        let s = &mut self.stations[i];
        let n = s.collisions.max(1);
        let draw = self
            .generators
            .with(i, Draws::Backoff, &mut s.streams_at, |r| {
                probe.draw(spec, n, slot, &self.channel, 0, r)
            });
        let draw = match draw {
            Ok(d) => d,
            Err(f) => return self.policy_fault(i, f),
        };
        let at = now.saturating_add(slot).saturating_add(draw.delay);
        s.mac = Mac::Backoff;
        s.timer = s.timer.wrapping_add(1);
        self.events.push(at, Event::Contend(i as u32, s.timer));
        self.observer
            .on(now, i as u32, &MacEvent::Defer { until: Some(at) });
    }

    /// A policy written as an expression gave no valid wait: the run stops
    /// here and says where.
    #[cold]
    fn policy_fault(&mut self, i: usize, f: PolicyFault) {
        let g = self.group_of(i);
        let first = self.sc.groups[..g].iter().map(|g| g.count).sum::<usize>();
        self.fault.get_or_insert_with(|| {
            format!(
                "stations.{g} (`{}`), station {} of the group (n = {}): {}",
                self.sc.groups[g].name,
                i - first,
                f.n,
                f.message
            )
        });
    }
}
