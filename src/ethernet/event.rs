//! What a run reports: the MAC events observers receive (trace, diagrams,
//! lessons, tests), and the internal events the run loop schedules.

use crate::engine::Time;
use std::num::NonZeroU64;

/// What a station does, for observers (the trace and the diagrams).
#[derive(Clone, Debug, PartialEq)]
pub enum MacEvent {
    /// A frame joins the queue (`queued` false: refused, queue full).
    Arrival { bytes: u32, queued: bool },
    /// The station has a frame but the medium is busy or the gap is running;
    /// it will send at `until` unless carrier restarts the gap.
    Defer { until: Option<Time> },
    /// Preamble and frame go on the wire; `attempt` counts from 1.
    TxStart {
        dst: u32,
        bytes: u32,
        attempt: u32,
        end: Time,
    },
    /// Frame bursting: the gap before the next frame of a burst is filled
    /// with extension symbols until `until`, so the carrier stays up; the
    /// frame's [`MacEvent::TxStart`] follows at the same instant.
    BurstGap { until: Time },
    /// Another station's signal reached this transmitting station.
    CollisionDetected { late: bool },
    /// Reported when the collision is detected: the jam runs on
    /// [`start`, `end`), `start` later than now when the preamble must be
    /// finished first. (Reported now, not at `start`, so that observers see
    /// events in time order.)
    Jam { start: Time, end: Time },
    /// The transmission ended without a detected collision.
    TxSuccess,
    /// Backoff after the `n`-th collision: `delay` ps, from `k` and `r` where the policy draws slots.
    Backoff {
        n: u32,
        k: Option<u32>,
        r: Option<u64>,
        delay: Time,
    },
    /// The frame was discarded after `attempts` collisions.
    Discard { attempts: u32 },
    /// The frame reached its destination intact (`intact`) or corrupted.
    Delivered { dst: u32, intact: bool, delay: Time },
}

/// Receives every MAC event of a run, in time order. `()` ignores them.
pub trait Observer {
    fn on(&mut self, _t: Time, _station: u32, _ev: &MacEvent) {}
}

impl Observer for () {}

#[derive(Clone, Copy, Debug)]
pub(in crate::ethernet) enum Event {
    /// A frame arrives at station i.
    Arrival(u32),
    /// Station i contends for the medium: its backoff ended, or it is time
    /// to sense again (the second field is the timer token it was set with).
    Contend(u32, u32),
    /// Station i's deferral ends and it starts to send.
    TxStart(u32, u32),
    /// 802.3's collisionDetect at station i: a foreign signal reached it.
    CollisionDetect(u32, u32),
    /// Station i's transmission (frame or jam) ends.
    TxEnd(u32, u32),
    /// Signal i's last bit reaches its destination.
    Deliver(u64),
}

/// The most stations a bus run can number: a queued event names its
/// station in 24 bits (scenarios allow fewer, and check it).
pub const MAX_STATIONS: u64 = 1 << STATION_BITS;

/// An [`Event`] in 8 bytes, as the event queue holds it (with its time, 16
/// bytes; a crowd keeps an event per station queued): its kind in the top
/// 8 bits, then the station in 24 bits ([`MAX_STATIONS`]) and the token
/// in 32, or a delivery's signal id in 56 (2^56 transmissions would take a
/// run of centuries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::ethernet) struct Packed(NonZeroU64);

const STATION_BITS: u32 = 24;
const KIND_SHIFT: u32 = 56;

/// What a packed event is, named as [`Event`]'s variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::ethernet) enum Kind {
    Arrival = 1,
    Contend = 2,
    TxStart = 3,
    CollisionDetect = 4,
    TxEnd = 5,
    Deliver = 6,
}

/// The packed word of a kind and its payload: never zero, as no kind is,
/// so that an `Option` of a queued event takes no more room or work.
#[inline]
fn word(kind: u64, payload: u64) -> Packed {
    Packed(NonZeroU64::new(kind << KIND_SHIFT | payload).unwrap_or(NonZeroU64::MAX))
}

impl From<Event> for Packed {
    #[inline]
    fn from(e: Event) -> Packed {
        let at = |kind: u64, i: u32, token: u32| {
            debug_assert!(u64::from(i) < MAX_STATIONS);
            word(kind, u64::from(i) << 32 | u64::from(token))
        };
        match e {
            Event::Arrival(i) => at(Kind::Arrival as u64, i, 0),
            Event::Contend(i, tok) => at(Kind::Contend as u64, i, tok),
            Event::TxStart(i, tok) => at(Kind::TxStart as u64, i, tok),
            Event::CollisionDetect(i, tok) => at(Kind::CollisionDetect as u64, i, tok),
            Event::TxEnd(i, tok) => at(Kind::TxEnd as u64, i, tok),
            Event::Deliver(id) => {
                assert!(id < 1 << KIND_SHIFT, "signal id {id} past 2^56");
                word(Kind::Deliver as u64, id)
            }
        }
    }
}

impl Packed {
    /// The event packed.
    #[inline]
    pub(in crate::ethernet) fn unpack(self) -> Event {
        let (i, tok) = (self.station_bits(), self.token());
        match self.kind() {
            Kind::Arrival => Event::Arrival(i),
            Kind::Contend => Event::Contend(i, tok),
            Kind::TxStart => Event::TxStart(i, tok),
            Kind::CollisionDetect => Event::CollisionDetect(i, tok),
            Kind::TxEnd => Event::TxEnd(i, tok),
            Kind::Deliver => Event::Deliver(self.signal()),
        }
    }

    /// Its kind.
    #[inline]
    pub(in crate::ethernet) fn kind(self) -> Kind {
        match self.0.get() >> KIND_SHIFT {
            1 => Kind::Arrival,
            2 => Kind::Contend,
            3 => Kind::TxStart,
            4 => Kind::CollisionDetect,
            5 => Kind::TxEnd,
            _ => Kind::Deliver,
        }
    }

    /// Its station, when it is for one (meaningless for a delivery).
    #[inline]
    pub(in crate::ethernet) fn station_bits(self) -> u32 {
        (self.0.get() >> 32) as u32 & ((1 << STATION_BITS) - 1)
    }

    /// Its token, when it is for a station.
    #[inline]
    pub(in crate::ethernet) fn token(self) -> u32 {
        self.0.get() as u32
    }

    /// A delivery's signal id.
    #[inline]
    pub(in crate::ethernet) fn signal(self) -> u64 {
        self.0.get() & ((1 << KIND_SHIFT) - 1)
    }

    /// The station the event is for (a delivery is for the signal).
    #[inline]
    pub(in crate::ethernet) fn station(self) -> Option<usize> {
        (self.kind() != Kind::Deliver).then_some(self.station_bits() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::{Event, Packed, MAX_STATIONS};

    /// Every kind of event comes back as it went in, at the ends of its
    /// fields' ranges, and the packed form with its time is 16 bytes.
    #[test]
    fn events_pack_and_unpack() {
        assert_eq!(std::mem::size_of::<(crate::engine::Time, Packed)>(), 16);
        assert_eq!(
            std::mem::size_of::<Option<(crate::engine::Time, Packed)>>(),
            16
        );
        let last = (MAX_STATIONS - 1) as u32;
        for (i, tok) in [(0, 0), (1, 1), (last, u32::MAX), (12_345, 1 << 31)] {
            for e in [
                Event::Arrival(i),
                Event::Contend(i, tok),
                Event::TxStart(i, tok),
                Event::CollisionDetect(i, tok),
                Event::TxEnd(i, tok),
            ] {
                let p = Packed::from(e);
                assert_eq!(format!("{:?}", p.unpack()), format!("{e:?}"));
                assert_eq!(p.station(), Some(i as usize));
            }
        }
        for id in [0, 1, u64::from(u32::MAX) + 7, (1 << 56) - 1] {
            let p = Packed::from(Event::Deliver(id));
            assert_eq!(
                format!("{:?}", p.unpack()),
                format!("{:?}", Event::Deliver(id))
            );
            assert_eq!(p.station(), None);
        }
    }
}
