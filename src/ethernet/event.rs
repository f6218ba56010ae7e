//! What a run reports: the MAC events observers receive (trace, diagrams,
//! lessons, tests), and the internal events the run loop schedules.

use crate::engine::Time;

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

impl Event {
    /// The station the event is for (a delivery is for the signal).
    #[inline]
    pub(in crate::ethernet) fn station(self) -> Option<usize> {
        match self {
            Event::Arrival(i)
            | Event::Contend(i, _)
            | Event::TxStart(i, _)
            | Event::CollisionDetect(i, _)
            | Event::TxEnd(i, _) => Some(i as usize),
            Event::Deliver(_) => None,
        }
    }
}
