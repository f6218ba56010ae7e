//! A station: its frame queue, its MAC state (idle, backoff, deferring,
//! transmitting), its backoff memory and its random streams.

use super::medium::signal_index::Place;
use super::metrics::Row;
use crate::engine::Time;
use crate::seed;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
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
    /// Sending signal `signal` (preamble, frame, and jam if it collides);
    /// a collision will be detected at `detect_at` (Time::MAX: none known).
    Transmitting { signal: u64, detect_at: Time },
}

/// A station's FIFO of frames, with the head of the line kept inline: the
/// frame a station sends is then on the station's own cache lines, not
/// behind a pointer (most stations hold one frame or none, and never need
/// the rest's list at all). An empty head is marked by a destination no
/// station has ([`NO_FRAME`]), which keeps the head at 16 bytes.
pub(in crate::ethernet) struct FrameQueue {
    head: Frame,
    /// Boxed: one pointer in the station instead of a list header.
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<Frame>>>,
}

/// The destination of an empty head: stations are numbered in `u32` below
/// their count, so none is `u32::MAX` (a run of 2^32 stations would need
/// over 500 GiB and is refused).
const NO_FRAME: u32 = u32::MAX;

impl Default for FrameQueue {
    fn default() -> Self {
        FrameQueue {
            head: Frame {
                arrival: 0,
                bytes: 0,
                dst: NO_FRAME,
            },
            rest: None,
        }
    }
}

impl FrameQueue {
    pub(in crate::ethernet) fn len(&self) -> usize {
        usize::from(!self.is_empty()) + self.rest.as_ref().map_or(0, |r| r.len())
    }

    pub(in crate::ethernet) fn is_empty(&self) -> bool {
        self.head.dst == NO_FRAME
    }

    pub(in crate::ethernet) fn front(&self) -> Option<&Frame> {
        (!self.is_empty()).then_some(&self.head)
    }

    pub(in crate::ethernet) fn push_back(&mut self, f: Frame) {
        assert!(f.dst != NO_FRAME, "station {} does not exist", f.dst);
        if self.is_empty() {
            self.head = f;
        } else {
            self.rest.get_or_insert_default().push_back(f);
        }
    }

    pub(in crate::ethernet) fn pop_front(&mut self) -> Option<Frame> {
        let f = self.front().copied();
        self.head.dst = NO_FRAME;
        if let Some(next) = self.rest.as_mut().and_then(|r| r.pop_front()) {
            self.head = next;
        }
        f
    }
}

/// A station's state and its counters for the results: 128 bytes aligned
/// to 64, two whole cache lines, fetched ahead of its events in crowds (see
/// [`Sim::prefetch`]). What only some scenarios use (on-off periods, frame
/// bursting, the memory of the backoff policies that keep one) is kept
/// beside it ([`Extras`], `Sim::backoffs`), its random generators in
/// [`Generators`], and the queue's capacity is its group's (groups are
/// runs of station numbers, `Sim::group_of`).
#[repr(align(64))]
pub(in crate::ethernet) struct Station {
    pub(in crate::ethernet) prop: Time,
    /// Its rank in position order (see [`super::medium::signal_index::by_rank`])
    /// when the run can use the bus index, else 0. With `prop`, its place
    /// in the index ([`Station::place`]), on the lines its events read
    /// anyway.
    pub(in crate::ethernet) rank: u32,
    /// Collisions of the head-of-line frame so far (n).
    pub(in crate::ethernet) collisions: u32,
    pub(in crate::ethernet) timer: u32,
    pub(in crate::ethernet) detect_token: u32,
    pub(in crate::ethernet) queue: FrameQueue,
    pub(in crate::ethernet) mac: Mac,
    /// When its own last transmission ended (Time::MAX: none yet); see
    /// [`Station::own_end`].
    pub(in crate::ethernet) own_end: Time,
    /// Where its traffic and backoff streams stand when the generators are
    /// parked (see [`Generators`]): the low 32 bits of their word positions.
    pub(in crate::ethernet) streams_at: [u32; 2],
    /// Its counters for the results, on the station's cache lines, which
    /// its events read anyway.
    pub(in crate::ethernet) row: Row,
}

/// One of a station's two random streams.
#[derive(Clone, Copy)]
pub(in crate::ethernet) enum Draws {
    /// Frame sizes, destinations and arrival times.
    Traffic = 0,
    /// Backoff waits and p-persistence.
    Backoff = 1,
}

/// The stations' random generators: ChaCha8, one per station and stream,
/// seeded from the run's seed, the stream and the station's number. Live:
/// the generators themselves, beside the stations (a generator carries a
/// 256-byte buffer). Parked, in crowds: none kept, each rebuilt at its
/// station's word position for each use. Both give the same numbers: a
/// stream is addressed by word position.
pub(in crate::ethernet) struct Generators {
    /// Per stream, the seed its stations' seeds are derived from
    /// (`derive(run_seed, [tag])`), mixed once.
    stems: [u64; 2],
    live: Vec<[ChaCha8Rng; 2]>,
    /// A parked stream's word position above its 32 low bits, kept in the
    /// station, by station and stream: a stream gets there after 2^32
    /// words, which a crowd's station never draws. Looked up, never
    /// iterated.
    highs: std::collections::HashMap<(usize, u8), u32>,
}

impl Generators {
    pub(in crate::ethernet) fn new(run_seed: u64, stations: usize, parked: bool) -> Self {
        // In the order of `Draws` (Traffic 0, Backoff 1).
        const _: () = assert!(Draws::Traffic as usize == 0 && Draws::Backoff as usize == 1);
        let stems = [seed::TRAFFIC, seed::BACKOFF].map(|tag| seed::derive(run_seed, &[tag]));
        let live = if parked {
            Vec::new()
        } else {
            (0..stations)
                .map(|i| stems.map(|stem| ChaCha8Rng::seed_from_u64(Self::seed(stem, i))))
                .collect()
        };
        Generators {
            stems,
            live,
            highs: std::collections::HashMap::new(),
        }
    }

    /// What the generators take per station beside it (parked: nothing,
    /// their positions are in the station).
    pub(in crate::ethernet) fn bytes_per_station(parked: bool) -> usize {
        if parked {
            0
        } else {
            std::mem::size_of::<[ChaCha8Rng; 2]>()
        }
    }

    /// Station `i`'s seed in the stream of `stem`: `derive(run_seed, [tag,
    /// i])`.
    #[inline]
    fn seed(stem: u64, i: usize) -> u64 {
        seed::extend(stem, &[i as u64])
    }

    /// Runs `f` with station `i`'s generator `d`, at `at` (the low bits of
    /// its position) if parked, and moves `at` past what `f` drew.
    #[inline]
    pub(in crate::ethernet) fn with<R>(
        &mut self,
        i: usize,
        d: Draws,
        at: &mut [u32; 2],
        f: impl FnOnce(&mut ChaCha8Rng) -> R,
    ) -> R {
        if let Some(pair) = self.live.get_mut(i) {
            return f(&mut pair[d as usize]);
        }
        let key = (i, d as u8);
        let high = if self.highs.is_empty() {
            0
        } else {
            self.highs.get(&key).copied().unwrap_or(0)
        };
        let low = &mut at[d as usize];
        let mut pos = u64::from(high) << 32 | u64::from(*low);
        let out = seed::draw_parked(Self::seed(self.stems[d as usize], i), &mut pos, f);
        *low = pos as u32;
        let past = (pos >> 32) as u32;
        if past != high {
            self.set_high(key, past);
        }
        out
    }

    #[cold]
    fn set_high(&mut self, key: (usize, u8), high: u32) {
        self.highs.insert(key, high);
    }

    /// Starts loading station `i`'s live generator `d`, which the next draw
    /// reads (no effect on the numbers).
    #[inline]
    pub(in crate::ethernet) fn prefetch(&self, i: usize, d: Draws) {
        if let Some(pair) = self.live.get(i) {
            crate::mem::prefetch_lines(&pair[d as usize]);
        }
    }
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
    /// Its place in the bus index (only while the run has one: the index
    /// holds only buses whose propagation times fit its place).
    #[inline]
    pub(in crate::ethernet) fn place(&self) -> Place {
        Place::new(self.prop, self.rank)
    }

    /// When a collision will be detected at the station, while it
    /// transmits (Time::MAX: none known, or not transmitting).
    pub(in crate::ethernet) fn detect_at(&self) -> Time {
        match self.mac {
            Mac::Transmitting { detect_at, .. } => detect_at,
            _ => Time::MAX,
        }
    }

    /// Sets when a collision will be detected at the transmitting station.
    pub(in crate::ethernet) fn set_detect_at(&mut self, at: Time) {
        if let Mac::Transmitting { detect_at, .. } = &mut self.mac {
            *detect_at = at;
        }
    }

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

    /// A station, its counters included, is two whole cache lines.
    #[test]
    fn a_station_is_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Station>(), 128);
        assert_eq!(std::mem::align_of::<Station>(), 64);
    }

    /// A parked stream whose position passes 2^32 words (its high part
    /// kept beside the station) draws what a live generator draws.
    #[test]
    fn parked_positions_past_32_bits_draw_as_live_ones() {
        use super::{Draws, Generators};
        use rand::{RngExt, SeedableRng};
        let mut parked = Generators::new(7, 3, true);
        let mut at = [u32::MAX - 40, 5];
        let seed = crate::seed::derive(7, &[crate::seed::TRAFFIC, 2]);
        let mut live = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        live.set_word_pos(u128::from(u32::MAX - 40));
        for k in 0..200u64 {
            let want: u64 = if k % 3 == 0 {
                live.random()
            } else {
                u64::from(live.random::<u32>())
            };
            let got = parked.with(2, Draws::Traffic, &mut at, |r| {
                if k % 3 == 0 {
                    r.random()
                } else {
                    u64::from(r.random::<u32>())
                }
            });
            assert_eq!(got, want);
        }
        assert_eq!(at[1], 5);
        let pos = u64::from(parked.highs[&(2, Draws::Traffic as u8)]) << 32 | u64::from(at[0]);
        assert_eq!(u128::from(pos), live.get_word_pos());
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
