//! A station: its frame queue, its MAC state (idle, backoff, deferring,
//! transmitting), its backoff memory and its random streams.

use crate::backoff::BackoffState;
use crate::engine::Time;
use crate::seed::Stream;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
pub(in crate::ethernet) struct Frame {
    pub(in crate::ethernet) arrival: Time,
    pub(in crate::ethernet) bytes: u32,
    pub(in crate::ethernet) dst: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::ethernet) enum Mac {
    /// No frame to send.
    Idle,
    /// Waiting out a backoff.
    Backoff,
    /// Deferring (802.3's carrier sense): waiting for the end of signal `on`
    /// to be known; `ctx` is where the wait began.
    DeferringOnSignal { on: u64, ctx: Time },
    /// Deferring through the interframe gap: will send at the TxStart event
    /// unless a signal newer than `seq` reaches the station before
    /// `restart_before` (the gap's first part); scheduled at `since`.
    DeferringGap {
        restart_before: Time,
        seq: u64,
        since: Time,
    },
    /// Sending signal `signal` (preamble, frame, and jam if it collides).
    Transmitting { signal: u64 },
}

/// A station's FIFO of frames, with the head of the line kept inline: the
/// frame a station sends is then on the station's own cache lines, not
/// behind a pointer (most stations hold one frame or none, and never need
/// the rest's list at all).
#[derive(Default)]
pub(in crate::ethernet) struct FrameQueue {
    pub(in crate::ethernet) head: Option<Frame>,
    /// Boxed: one pointer in the station instead of a list header.
    #[allow(clippy::box_collection)]
    pub(in crate::ethernet) rest: Option<Box<VecDeque<Frame>>>,
}

impl FrameQueue {
    pub(in crate::ethernet) fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.as_ref().map_or(0, |r| r.len())
    }

    pub(in crate::ethernet) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    pub(in crate::ethernet) fn front(&self) -> Option<&Frame> {
        self.head.as_ref()
    }

    pub(in crate::ethernet) fn push_back(&mut self, f: Frame) {
        if self.head.is_none() {
            self.head = Some(f);
        } else {
            self.rest.get_or_insert_default().push_back(f);
        }
    }

    pub(in crate::ethernet) fn pop_front(&mut self) -> Option<Frame> {
        let f = self.head.take();
        self.head = self.rest.as_mut().and_then(|r| r.pop_front());
        f
    }
}

/// A station's state: three cache lines (192 bytes), fetched ahead of its
/// events in crowds (see [`Sim::prefetch`]). What only some scenarios use
/// (on-off periods, frame bursting) is kept beside it in [`Extras`], and
/// the queue's capacity is its group's.
#[repr(align(64))]
pub(in crate::ethernet) struct Station {
    pub(in crate::ethernet) prop: Time,
    pub(in crate::ethernet) group: u32,
    pub(in crate::ethernet) queue: FrameQueue,
    pub(in crate::ethernet) mac: Mac,
    /// Collisions of the head-of-line frame so far (n).
    pub(in crate::ethernet) collisions: u32,
    pub(in crate::ethernet) timer: u32,
    pub(in crate::ethernet) detect_token: u32,
    pub(in crate::ethernet) detect_at: Time,
    /// When its own last transmission ended (Time::MAX: none yet); see
    /// [`Station::own_end`].
    pub(in crate::ethernet) own_end: Time,
    pub(in crate::ethernet) backoff: BackoffState,
    pub(in crate::ethernet) rng_traffic: Stream,
    pub(in crate::ethernet) rng_backoff: Stream,
}

/// A station's frame-bursting state (1000BASE-X half duplex).
#[derive(Clone, Copy, Default)]
pub(in crate::ethernet) struct Burst {
    /// When the current burst's first transmission started.
    pub(in crate::ethernet) start: Time,
    /// The next frame continues the burst (set at a successful end while
    /// the burst timer is below the limit).
    pub(in crate::ethernet) next: bool,
    /// The current transmission is a later frame of a burst (filled gap,
    /// preamble, frame without extension).
    pub(in crate::ethernet) frame: bool,
}

/// Per-station state that only some scenarios use, indexed by station and
/// empty in the others: a million stations that never burst and never go
/// on and off carry none of it.
#[derive(Default)]
pub(in crate::ethernet) struct Extras {
    /// On-off traffic: when each station's current on period ends (empty
    /// when no group has on-off arrivals).
    pub(in crate::ethernet) on_until: Vec<Time>,
    /// Frame bursting (empty when the medium does not burst).
    pub(in crate::ethernet) bursts: Vec<Burst>,
}

impl Extras {
    pub(in crate::ethernet) fn new(stations: usize, on_off: bool, bursting: bool) -> Self {
        Extras {
            on_until: if on_off {
                vec![0; stations]
            } else {
                Vec::new()
            },
            bursts: if bursting {
                vec![Burst::default(); stations]
            } else {
                Vec::new()
            },
        }
    }

    /// Whether station `i` is inside a burst and sends its next frame
    /// without deferring (and then as a later frame of the burst).
    pub(in crate::ethernet) fn continues_burst(&mut self, i: usize) -> bool {
        match self.bursts.get_mut(i) {
            Some(b) if b.next => {
                b.next = false;
                b.frame = true;
                true
            }
            _ => false,
        }
    }

    /// Whether station `i`'s current transmission is a later frame of a burst.
    pub(in crate::ethernet) fn in_burst(&self, i: usize) -> bool {
        self.bursts.get(i).is_some_and(|b| b.frame)
    }
}

impl Station {
    /// When its own last transmission ended, if it has sent.
    pub(in crate::ethernet) fn own_end(&self) -> Option<Time> {
        (self.own_end != Time::MAX).then_some(self.own_end)
    }

    /// The end of its own last transmission if that starts a gap of
    /// `ifg` still running at `t` (ended at or before `t`).
    pub(in crate::ethernet) fn own_gap_at(&self, t: Time, ifg: Time) -> Option<Time> {
        self.own_end().filter(|&e| e <= t && e + ifg > t)
    }
}

#[cfg(test)]
mod tests {
    use super::{Frame, FrameQueue, Station};
    use crate::engine::Time;
    use std::collections::VecDeque;

    #[test]
    fn a_station_is_three_cache_lines() {
        assert_eq!(std::mem::size_of::<Station>(), 192);
    }

    #[test]
    fn frame_queue_is_first_in_first_out() {
        let f = |k: u32| Frame {
            arrival: k as Time,
            bytes: 64,
            dst: k,
        };
        let mut q = FrameQueue::default();
        let mut reference = VecDeque::new();
        assert!(q.is_empty() && q.front().is_none() && q.pop_front().is_none());
        // Five pushes, seven pops: the queue empties, and is popped empty.
        for k in 0..200u32 {
            if k % 12 < 5 {
                q.push_back(f(k));
                reference.push_back(k);
            } else {
                assert_eq!(q.pop_front().map(|x| x.dst), reference.pop_front());
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.is_empty(), reference.is_empty());
            assert_eq!(q.front().map(|x| x.dst), reference.front().copied());
        }
    }
}
