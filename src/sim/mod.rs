//! The CSMA/CD simulation of one run: stations with FIFO queues and backoff
//! state on a shared bus, driven by the event engine. No I/O, no wall clock;
//! once a scenario is validated nothing here can fail.
//!
//! Speed: the bus keeps only the signals actually on it ([`Signal`]), so carrier
//! sense, deferral and collision detection cost O(signals), never O(stations);
//! a station gets events only for its own arrivals, timers and transmissions.

mod bus;
mod metrics;

pub use bus::CROWD;

/// Bytes the bus index holds per station, when it is used (see [`CROWD`]).
pub fn index_bytes_per_station() -> usize {
    BusIndex::bytes_per_station()
}

pub use metrics::{RunMetrics, RunResult, StationResult, METRIC_COLUMNS};

use crate::backoff::{BackoffSpec, BackoffState, ChannelHistory};
use crate::engine::{EventQueue, Time};
use crate::scenario::{Access, Placement, Scenario};
use crate::seed;
use crate::traffic::{exponential_ps, pareto_ps, Arrivals, FrameLaw};
use bus::{BusIndex, Trees, BURIED, FADING, WIRE};
use metrics::Recorder;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

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
enum Event {
    Arrival(u32),
    Ready(u32, u32),
    TxStart(u32, u32),
    Detect(u32, u32),
    TxEnd(u32, u32),
    Deliver(u64),
}

impl Event {
    /// The station the event is for (a delivery is for the signal).
    #[inline]
    fn station(self) -> Option<usize> {
        match self {
            Event::Arrival(i)
            | Event::Ready(i, _)
            | Event::TxStart(i, _)
            | Event::Detect(i, _)
            | Event::TxEnd(i, _) => Some(i as usize),
            Event::Deliver(_) => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    arrival: Time,
    bytes: u32,
    dst: u32,
}

/// One transmission on the bus: present at station j on [start + d, end + d).
#[derive(Debug)]
struct Signal {
    id: u64,
    station: u32,
    /// The sender's propagation time from the origin (copied from its
    /// station so that bus scans stay within this array).
    prop: Time,
    start: Time,
    end: Time,
    /// The end is known for good (collision detected, or transmission over).
    fixed: bool,
    collided: bool,
    frame: Frame,
    /// Stations whose deferral waits for this signal's end to be known.
    waiters: Vec<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mac {
    /// No frame to send.
    Idle,
    /// Waiting out a backoff.
    Backoff,
    /// Deferring until a signal's end is known; `ctx` is where the wait began.
    Blocked {
        on: u64,
        ctx: Time,
    },
    /// Will send at the TxStart event unless a signal newer than `seq`
    /// reaches the station before `restart_before`; scheduled at `since`.
    Scheduled {
        restart_before: Time,
        seq: u64,
        since: Time,
    },
    Transmitting {
        signal: u64,
    },
}

/// A station's FIFO of frames, with the head of the line kept inline: the
/// frame a station sends is then on the station's own cache lines, not
/// behind a pointer (most stations hold one frame or none, and never need
/// the rest's list at all).
#[derive(Default)]
struct FrameQueue {
    head: Option<Frame>,
    /// Boxed: one pointer in the station instead of a list header.
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<Frame>>>,
}

impl FrameQueue {
    fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.as_ref().map_or(0, |r| r.len())
    }

    fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    fn front(&self) -> Option<&Frame> {
        self.head.as_ref()
    }

    fn push_back(&mut self, f: Frame) {
        if self.head.is_none() {
            self.head = Some(f);
        } else {
            self.rest.get_or_insert_default().push_back(f);
        }
    }

    fn pop_front(&mut self) -> Option<Frame> {
        let f = self.head.take();
        self.head = self.rest.as_mut().and_then(|r| r.pop_front());
        f
    }
}

/// A station's state: three cache lines, fetched ahead of its events in
/// crowds (see [`Sim::prefetch`]).
#[repr(align(64))]
struct Station {
    prop: Time,
    group: u32,
    queue: FrameQueue,
    capacity: usize,
    mac: Mac,
    /// Collisions of the head-of-line frame so far (n).
    collisions: u32,
    timer: u32,
    detect_token: u32,
    detect_at: Time,
    /// When its own last transmission ended (Time::MAX: none yet); see
    /// [`Station::own_end`].
    own_end: Time,
    on_until: Time,
    backoff: BackoffState,
    rng_traffic: Stream,
    rng_backoff: Stream,
}

impl Station {
    /// When its own last transmission ended, if it has sent.
    fn own_end(&self) -> Option<Time> {
        (self.own_end != Time::MAX).then_some(self.own_end)
    }

    /// The end of its own last transmission if that starts a gap of
    /// `ifg` still running at `t` (ended at or before `t`).
    fn own_gap_at(&self, t: Time, ifg: Time) -> Option<Time> {
        self.own_end().filter(|&e| e <= t && e + ifg > t)
    }
}

/// A station's random stream: a ChaCha8 generator, boxed (it carries a
/// 256-byte buffer, and keeping it out of line keeps the fields touched on
/// every event close together); or, in crowds, only its seed and position,
/// the generator being rebuilt at that position for each use. Both give the
/// same numbers: the stream is addressed by word position.
enum Stream {
    Live(Box<ChaCha8Rng>),
    Parked { seed: u64, word_pos: u64 },
}

impl Stream {
    fn new(seed: u64, parked: bool) -> Self {
        if parked {
            Stream::Parked { seed, word_pos: 0 }
        } else {
            Stream::Live(Box::new(ChaCha8Rng::seed_from_u64(seed)))
        }
    }

    /// Starts loading a live generator's state, which the next draw reads
    /// (no effect on the numbers).
    #[inline]
    fn prefetch(&self) {
        if let Stream::Live(rng) = self {
            prefetch_lines(&**rng);
        }
    }

    /// Runs `f` with the generator at the stream's position, and moves the
    /// position past what `f` drew.
    fn with<R>(&mut self, f: impl FnOnce(&mut ChaCha8Rng) -> R) -> R {
        match self {
            Stream::Live(rng) => f(rng),
            Stream::Parked { seed, word_pos } => {
                let mut rng = ChaCha8Rng::seed_from_u64(*seed);
                rng.set_word_pos(u128::from(*word_pos));
                let out = f(&mut rng);
                // A station would have to draw 2^64 words (2^70 bytes) to
                // pass u64.
                *word_pos = rng.get_word_pos() as u64;
                out
            }
        }
    }
}

/// Hints the processor to load the cache lines of `*v`; no effect on results.
#[inline]
pub(crate) fn prefetch_lines<T: ?Sized>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (v as *const T).cast::<i8>();
        for off in (0..std::mem::size_of_val(v)).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults and reads
            // nothing into the program; SSE is part of every x86_64 target.
            // The address is formed with wrapping_add, without a dereference.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// An empty vector with room for `n` items, whose memory the kernel is
/// asked to back with huge pages (Linux, where they are given on request):
/// a crowd's arrays span gigabytes, read at random, and with small pages
/// most reads would first miss the address translation cache. Only a
/// hint; no effect on results.
pub(crate) fn huge_vec<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: the range lies inside the vector's own allocation, not
            // yet touched; MADV_HUGEPAGE changes how pages are backed, never
            // their contents. A failure (no huge pages here) is harmless.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// Doubles a full deque's room on memory asked for as [`huge_vec`] does
/// (a plain `push_back` would grow it onto small pages): a crowd's signal
/// list outgrows its first room, and is then read at random by id.
fn grow_huge<T>(d: &mut VecDeque<T>) {
    let mut v = huge_vec((2 * d.capacity()).max(16));
    v.extend(d.drain(..));
    *d = VecDeque::from(v);
}

/// [`huge_vec`] holding `n` copies of `value`.
pub(crate) fn huge_filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = huge_vec(n);
    v.resize(n, value);
    v
}

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

/// Runs one replication of `sc` with the given run seed.
pub fn run(sc: &Scenario, run_seed: u64) -> RunResult {
    run_observed(sc, run_seed, &mut ())
}

/// Runs one replication, reporting every MAC event to `obs`.
pub fn run_observed<O: Observer>(sc: &Scenario, run_seed: u64, obs: &mut O) -> RunResult {
    let index = if sc.station_count() >= CROWD {
        IndexUse::WhileBusy {
            attach: bus::ATTACH,
            detach: bus::DETACH,
        }
    } else {
        IndexUse::Off
    };
    run_with_index(sc, run_seed, index, obs)
}

/// When a run keeps the bus index (see [`bus`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexUse {
    /// Never: every question scans the signals that can matter.
    Off,
    /// From the first event to the last.
    On,
    /// While more than `attach` signals can matter, until fewer than
    /// `detach` can.
    WhileBusy { attach: usize, detach: usize },
}

/// Stations from which their random streams are parked between uses (see
/// [`Stream`]): two live generators take some 700 bytes per station.
const PARK_FROM: usize = 1 << 16;

/// Runs one replication with the bus index used as `index` says, whatever
/// the number of stations. Results and events are the same in every case;
/// the tests check that.
#[doc(hidden)]
pub fn run_with_index<O: Observer>(
    sc: &Scenario,
    run_seed: u64,
    index: IndexUse,
    obs: &mut O,
) -> RunResult {
    let mut sim = Sim::new(sc, run_seed, obs, index);
    sim.run();
    sim.finish()
}

/// Station positions in metres, as the scenario places them for this run.
pub fn positions(sc: &Scenario, run_seed: u64) -> Vec<f64> {
    let n = sc.station_count();
    let l = sc.medium.length_m;
    let mut rng = ChaCha8Rng::seed_from_u64(seed::derive(run_seed, &[seed::PLACEMENT]));
    let mut out = Vec::with_capacity(n);
    for g in &sc.groups {
        for k in 0..g.count {
            let i = out.len();
            let x = match (&g.positions, sc.medium.placement) {
                (Some(p), _) => p[k],
                (None, Placement::Random) => rng.random::<f64>() * l,
                (None, Placement::Even) if n > 1 => l * i as f64 / (n - 1) as f64,
                (None, Placement::Even) => 0.0,
            };
            out.push(x);
        }
    }
    out
}

/// A signal as one station sees it: present there on [arrive, leave).
#[derive(Clone, Copy, Debug)]
struct Seen {
    arrive: Time,
    leave: Time,
    fixed: bool,
    id: u64,
}

struct Sim<'a, O: Observer> {
    sc: &'a Scenario,
    q: EventQueue<Event>,
    st: Vec<Station>,
    signals: VecDeque<Signal>,
    /// Id of `signals[0]`.
    base_id: u64,
    next_id: u64,
    ifg: Time,
    /// The first two thirds of the gap, during which carrier restarts it.
    ifg_part1: Time,
    horizon: Time,
    rec: Recorder,
    obs: &'a mut O,
    /// `[medium] access`, and whether it detects collisions (else a collided
    /// frame runs to its end and fails there).
    access: Access,
    cd: bool,
    /// What channel-aware backoff policies (BLAM) observe.
    channel: ChannelHistory,
    /// Signals with ids below `live_from` are dead for every query at times
    /// >= `live_since` (see [`Sim::live_index`]).
    live_from: u64,
    live_since: Time,
    /// The largest propagation delay between two stations.
    max_delay: Time,
    /// Reused by [`Sim::deference`] and [`Sim::start_tx`], so that they
    /// allocate nothing.
    scratch: Vec<Seen>,
    updates: Vec<(usize, Time)>,
    /// For crowds: the signals that matter at the current time, by station
    /// position (see [`bus`]); None while the index is not in use.
    ix: Option<BusIndex>,
    /// When the index is used, and its memory while it is set aside (see
    /// [`Sim::attach_index`]).
    index_use: IndexUse,
    ix_spare: Option<BusIndex>,
    /// Fixed signals in the index, by the time they next change trees:
    /// (when, id, station): to the fading tree at end + max_delay (gone from
    /// the wire), to the buried tree an interframe gap later (gone for any
    /// query from then on), and out after the longest look-back. The last two
    /// are queued in time order as they are pushed. (The order among equal
    /// times does not matter: tree bounds do not depend on it.)
    dying: EventQueue<(u64, u32)>,
    burying: VecDeque<(Time, u64, u32)>,
    removing: VecDeque<(Time, u64, u32)>,
    /// The last time a signal left the wire tree, and the last time one was
    /// buried: a query about a later time need not look at those trees.
    fade_last: Time,
    bury_last: Time,
    /// Queries about times before this need the full scan (a signal buried
    /// then has been removed).
    removed_floor: Time,
    /// The next time signals move down the trees: moving them late is exact
    /// (a query looks at every tree a signal might still matter in), and
    /// moving many at once shares the updates of their common ancestors.
    gc_next: Time,
    /// Reused by [`Sim::index_gc`], so that it allocates nothing.
    gc_stations: Vec<u32>,
    /// [`Sim::prune`] looks again from this time on: pruning late is exact
    /// (scans only see a few more signals that can no longer matter), and
    /// its loops, run at every transmission end, mispredicted their exits.
    prune_next: Time,
}

impl<'a, O: Observer> Sim<'a, O> {
    fn new(sc: &'a Scenario, run_seed: u64, obs: &'a mut O, index: IndexUse) -> Self {
        let n = sc.station_count();
        let indexed = index != IndexUse::Off;
        // Parked streams give the same numbers: the tests that force the
        // index on check them too.
        let parked = index == IndexUse::On || (indexed && n >= PARK_FROM);
        let pos = positions(sc, run_seed);
        let mut st = huge_vec(n);
        for (gi, g) in sc.groups.iter().enumerate() {
            for _ in 0..g.count {
                let i = st.len();
                st.push(Station {
                    prop: (pos[i] / sc.medium.speed * crate::units::PS_PER_S).round() as Time,
                    group: gi as u32,
                    queue: FrameQueue::default(),
                    capacity: g.queue,
                    mac: Mac::Idle,
                    collisions: 0,
                    timer: 0,
                    detect_token: 0,
                    detect_at: Time::MAX,
                    own_end: Time::MAX,
                    on_until: 0,
                    backoff: BackoffState::new(&g.backoff),
                    rng_traffic: Stream::new(
                        seed::derive(run_seed, &[seed::TRAFFIC, i as u64]),
                        parked,
                    ),
                    rng_backoff: Stream::new(
                        seed::derive(run_seed, &[seed::BACKOFF, i as u64]),
                        parked,
                    ),
                });
            }
        }
        // From the stations' actual propagation times, so it bounds every delay.
        let max_delay = st.iter().map(|s| s.prop).max().unwrap_or(0)
            - st.iter().map(|s| s.prop).min().unwrap_or(0);
        let m = &sc.medium;
        let horizon = 2 * sc.max_delay_ps() + sc.max_tx_ps() + m.jam_ps + 2 * m.ifg_ps;
        let ix = (index == IndexUse::On)
            .then(|| BusIndex::new(&st.iter().map(|s| s.prop).collect::<Vec<_>>()));
        Sim {
            sc,
            q: EventQueue::with_capacity(n.min(1 << 20) + 16),
            rec: Recorder::new(sc, pos),
            st,
            // A crowd's first wave puts a signal per station on the bus:
            // room for it from the start (no doubling and copying on the
            // way), on huge pages like the other big arrays.
            signals: if indexed {
                VecDeque::from(huge_vec(n))
            } else {
                VecDeque::new()
            },
            base_id: 0,
            next_id: 0,
            ifg: m.ifg_ps,
            ifg_part1: m.ifg_ps * 2 / 3,
            horizon,
            obs,
            access: m.access,
            cd: m.access.detects_collisions(),
            channel: ChannelHistory::default(),
            live_from: 0,
            live_since: 0,
            max_delay,
            scratch: Vec::new(),
            updates: Vec::new(),
            ix,
            dying: EventQueue::new(),
            burying: VecDeque::new(),
            removing: VecDeque::new(),
            fade_last: 0,
            bury_last: 0,
            removed_floor: 0,
            index_use: index,
            ix_spare: None,
            gc_next: 0,
            gc_stations: Vec::new(),
            prune_next: 0,
        }
    }

    fn group_arrivals(&self, i: usize) -> &'a Arrivals {
        &self.sc.groups[self.st[i].group as usize].arrivals
    }

    fn spec(&self, i: usize) -> &'a BackoffSpec {
        &self.sc.groups[self.st[i].group as usize].backoff
    }

    fn frame_law(&self, i: usize) -> &'a FrameLaw {
        &self.sc.groups[self.st[i].group as usize].frame
    }

    fn delay(&self, i: usize, j: usize) -> Time {
        self.st[i].prop.abs_diff(self.st[j].prop)
    }

    fn signal(&self, id: u64) -> &Signal {
        &self.signals[(id - self.base_id) as usize]
    }

    fn signal_mut(&mut self, id: u64) -> &mut Signal {
        &mut self.signals[(id - self.base_id) as usize]
    }

    fn run(&mut self) {
        for i in 0..self.st.len() {
            self.start_traffic(i);
        }
        let duration = self.sc.duration;
        let mut past_end = None;
        while let Some((t, ev)) = self.q.pop() {
            if t >= duration {
                past_end = Some((t, ev));
                break;
            }
            self.rec.events += 1;
            if let Some(&next) = self.q.peek() {
                self.prefetch(next);
            }
            // The rank was asked for one event ago: the path can be now.
            if let (Some(ix), Some(i)) = (&self.ix, ev.station()) {
                ix.prefetch_path(i);
            }
            self.index_gc(t);
            self.dispatch(t, ev);
        }
        // Transmissions that ended before the duration still reach their
        // destinations: settle them, and nothing else.
        let mut next = past_end;
        while let Some((t, ev)) = next {
            if let Event::Deliver(id) = ev {
                self.rec.events += 1;
                self.deliver(t, id);
            }
            next = self.q.pop();
        }
    }

    /// Asks the processor to start loading the station of the next event
    /// (its state, result row and position rank) while this one is handled:
    /// in crowds they are scattered over megabytes, and waiting for them one
    /// by one is much of the cost of an event.
    #[inline]
    fn prefetch(&self, ev: Event) {
        let Some(i) = ev.station() else {
            return;
        };
        if let Some(s) = self.st.get(i) {
            prefetch_lines(s);
        }
        self.rec.prefetch(i);
        if let Some(ix) = &self.ix {
            ix.prefetch_rank(i);
        }
    }

    fn dispatch(&mut self, t: Time, ev: Event) {
        match ev {
            Event::Arrival(i) => self.arrival(t, i as usize),
            Event::Ready(i, tok) if self.st[i as usize].timer == tok => {
                self.contend(t, i as usize, t)
            }
            Event::TxStart(i, tok) if self.st[i as usize].timer == tok => {
                self.scheduled_start(t, i as usize)
            }
            Event::Detect(i, tok) if self.st[i as usize].detect_token == tok => {
                self.detect(t, i as usize)
            }
            Event::TxEnd(i, tok) if self.st[i as usize].timer == tok => self.tx_end(t, i as usize),
            Event::Deliver(id) => self.deliver(t, id),
            _ => {}
        }
    }

    // ---- traffic -------------------------------------------------------

    fn start_traffic(&mut self, i: usize) {
        match *self.group_arrivals(i) {
            Arrivals::Saturated => {
                self.add_frame(0, i);
            }
            Arrivals::Poisson { rate } => {
                let first = self.st[i]
                    .rng_traffic
                    .with(|r| exponential_ps(r, 1e12 / rate));
                self.q.push(first, Event::Arrival(i as u32));
            }
            Arrivals::Periodic { interval, phase } => {
                let first = match phase {
                    Some(p) => p,
                    None => self.st[i].rng_traffic.with(|r| r.random_range(0..interval)),
                };
                self.q.push(first, Event::Arrival(i as u32));
            }
            Arrivals::Burst { at, .. } => self.q.push(at, Event::Arrival(i as u32)),
            Arrivals::OnOff {
                rate,
                mean_on,
                alpha,
                ..
            } => {
                let s = &mut self.st[i];
                let (on_until, first) = s.rng_traffic.with(|r| {
                    let on = pareto_ps(r, alpha, mean_on as f64);
                    (on, exponential_ps(r, 1e12 / rate))
                });
                s.on_until = on_until;
                self.schedule_on_off(i, first);
            }
        }
    }

    /// Schedules the next on-off arrival at `next`, skipping off periods.
    fn schedule_on_off(&mut self, i: usize, mut next: Time) {
        if let Arrivals::OnOff {
            rate,
            mean_on,
            mean_off,
            alpha,
        } = *self.group_arrivals(i)
        {
            let s = &mut self.st[i];
            // Exponential interarrivals are memoryless, so an arrival that
            // falls past the on period restarts at the next on period.
            // An arrival past the duration is never processed, so stop there:
            // with saturated times, `next` could otherwise never fall inside.
            let duration = self.sc.duration;
            while next >= s.on_until && next < duration {
                let on_until = s.on_until;
                let (on_start, on, gap) = s.rng_traffic.with(|r| {
                    let off = pareto_ps(r, alpha, mean_off as f64);
                    let on_start = on_until.saturating_add(off);
                    let on = pareto_ps(r, alpha, mean_on as f64);
                    (on_start, on, exponential_ps(r, 1e12 / rate))
                });
                s.on_until = on_start.saturating_add(on);
                next = on_start.saturating_add(gap);
            }
            self.q.push(next, Event::Arrival(i as u32));
        }
    }

    fn arrival(&mut self, t: Time, i: usize) {
        match *self.group_arrivals(i) {
            Arrivals::Saturated => {}
            Arrivals::Poisson { rate } => {
                self.add_frame(t, i);
                let gap = self.st[i]
                    .rng_traffic
                    .with(|r| exponential_ps(r, 1e12 / rate));
                self.q.push(t.saturating_add(gap), Event::Arrival(i as u32));
            }
            Arrivals::Periodic { interval, .. } => {
                self.add_frame(t, i);
                self.q
                    .push(t.saturating_add(interval), Event::Arrival(i as u32));
            }
            Arrivals::Burst { frames, .. } => {
                for _ in 0..frames {
                    self.add_frame(t, i);
                }
            }
            Arrivals::OnOff { rate, .. } => {
                self.add_frame(t, i);
                let gap = self.st[i]
                    .rng_traffic
                    .with(|r| exponential_ps(r, 1e12 / rate));
                self.schedule_on_off(i, t.saturating_add(gap));
            }
        }
    }

    fn add_frame(&mut self, t: Time, i: usize) {
        let n = self.st.len() as u32;
        let law = self.frame_law(i);
        let fixed_dst = self.sc.groups[self.st[i].group as usize].destination;
        let s = &mut self.st[i];
        let (bytes, dst) = s.rng_traffic.with(|rng| {
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
        let queued = s.queue.len() < s.capacity;
        self.rec.arrival(t, i, bytes, queued);
        self.obs
            .on(t, i as u32, &MacEvent::Arrival { bytes, queued });
        if !queued {
            return;
        }
        let s = &mut self.st[i];
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
    fn next_frame(&mut self, t: Time, i: usize) {
        if self.st[i].queue.is_empty() {
            self.st[i].mac = Mac::Idle;
            if let Arrivals::Saturated = self.group_arrivals(i) {
                self.add_frame(t, i);
            }
        } else {
            self.contend(t, i, t);
        }
    }

    // ---- deferral --------------------------------------------------------

    /// The earliest time >= `t0` at which station `i` may send, by 802.3's
    /// two-part deferral: after carrier drops (or the station's own
    /// transmission ends) it waits the gap; carrier in the first 2/3 of the
    /// gap restarts the wait, carrier in the last 1/3 is ignored.
    ///
    /// Returns `Ok((send_at, restart_before))`, or `Err((ctx, signal))` when the
    /// answer needs the end of a transmission still in progress.
    fn deference(&mut self, i: usize, t0: Time) -> Result<(Time, Time), (Time, u64)> {
        if let (Some(ix), true) = (&self.ix, t0 >= self.removed_floor) {
            return self.defer_indexed(ix, i, t0);
        }
        let me = self.st[i].prop;
        let ifg = self.ifg;
        // One pass keeps the foreign signals that can still matter, as seen
        // at i, in id order; the loops below then run over few of them. A
        // signal whose carrier left i an interframe gap before t0 cannot: it
        // covers no cand >= t0, its drop is too old to start a gap that
        // reaches cand, and it arrived before any gap that does.
        let mut seen = std::mem::take(&mut self.scratch);
        let live = self.signals.range(self.live_index(t0)..);
        // Every signal is written, and kept by advancing past it: whether
        // one is kept is a coin toss in a crowd, which a branch would
        // mispredict.
        seen.resize(
            live.len(),
            Seen {
                arrive: 0,
                leave: 0,
                fixed: true,
                id: 0,
            },
        );
        let mut kept = 0;
        for s in live {
            let d = me.abs_diff(s.prop);
            seen[kept] = Seen {
                arrive: s.start + d,
                leave: s.end + d,
                fixed: s.fixed,
                id: s.id,
            };
            kept += usize::from((s.station as usize != i) & (s.end + d + ifg > t0));
        }
        seen.truncate(kept);
        let r = self.defer_over(i, t0, &seen);
        self.scratch = seen;
        r
    }

    /// [`Sim::deference`] over the signals `seen` at station `i`.
    fn defer_over(&self, i: usize, t0: Time, seen: &[Seen]) -> Result<(Time, Time), (Time, u64)> {
        let ifg = self.ifg;
        let part1 = self.ifg_part1;
        let foreign = seen.iter().map(|s| (s.arrive, s.leave, s));
        let mut cand = t0;
        loop {
            let mut covered = false;
            let mut last_drop = self.st[i].own_gap_at(cand, ifg);
            for (a, b, _) in foreign.clone() {
                if a <= cand && cand < b {
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
            // The gap runs from c; carrier starting in its first part restarts it.
            let restart = foreign
                .clone()
                .map(|(a, _, _)| a)
                .filter(|&a| a > c && a < c + part1)
                .min();
            match restart {
                Some(a) => cand = a,
                None => return Ok((c + ifg, c + part1)),
            }
        }
    }

    /// The trees a query about time `t` must look at.
    fn trees(&self, t: Time) -> Trees {
        Trees {
            fading: t < self.fade_last,
            buried: t < self.bury_last,
        }
    }

    /// [`Sim::deference`] by the bus index: the loop of [`Sim::defer_over`],
    /// asking the index the same questions.
    fn defer_indexed(
        &self,
        ix: &BusIndex,
        i: usize,
        t0: Time,
    ) -> Result<(Time, Time), (Time, u64)> {
        let ifg = self.ifg;
        let part1 = self.ifg_part1;
        let mut cand = t0;
        loop {
            // Carrier at cand: follow the busy period to its end.
            let busy = match ix.busy_until(i, cand, self.trees(cand)) {
                Err(id) => return Err((cand, id)),
                Ok(end) => end,
            };
            let c = if let Some(first_end) = busy {
                let mut c = first_end;
                loop {
                    match ix.busy_until(i, c, self.trees(c)) {
                        Err(id) => return Err((c, id)),
                        Ok(Some(e)) => c = e,
                        Ok(None) => break,
                    }
                }
                c
            } else {
                let lo = cand as i64 - ifg as i64;
                let own = self.st[i].own_gap_at(cand, ifg);
                // Ends in the gap window: fading signals always count.
                let trees = Trees {
                    fading: true,
                    ..self.trees(cand)
                };
                match own.max(ix.last_end_in(i, lo, cand, trees)) {
                    Some(c) => c,
                    None => return Ok((cand, cand)),
                }
            };
            let restart = ix.first_start_after(i, c, c + part1, self.trees(c));
            match restart {
                Some(a) => cand = a,
                None => return Ok((c + ifg, c + part1)),
            }
        }
    }

    /// Station `i` has a frame at the head of its queue and may contend,
    /// deferring as it must from time `from` (<= now).
    fn contend(&mut self, now: Time, i: usize, from: Time) {
        if self.access != Access::CsmaCd && self.contend_by_mode(now, i) {
            return;
        }
        let from = self.slot_sample_time(now, i, from);
        match self.deference(i, from) {
            Ok((at, _)) if at <= now => self.send_now(now, i),
            Ok((at, restart_before)) => self.schedule_start(now, i, at, restart_before),
            Err(_) if self.access == Access::CsmaCdNonPersistent => self.sense_later(now, i),
            Err((ctx, on)) => {
                self.st[i].mac = Mac::Blocked { on, ctx };
                self.signal_mut(on).waiters.push(i as u32);
                self.obs.on(now, i as u32, &MacEvent::Defer { until: None });
            }
        }
    }

    /// Station `i` will send at `at` unless a signal that starts from now on
    /// reaches it before `restart_before`.
    fn schedule_start(&mut self, now: Time, i: usize, at: Time, restart_before: Time) {
        let s = &mut self.st[i];
        s.mac = Mac::Scheduled {
            restart_before,
            seq: self.next_id,
            since: now,
        };
        s.timer = s.timer.wrapping_add(1);
        self.q.push(at, Event::TxStart(i as u32, s.timer));
        self.obs
            .on(now, i as u32, &MacEvent::Defer { until: Some(at) });
    }

    /// The scheduled send time has come: send, unless a signal that started
    /// after the schedule reached the station early enough to restart the gap.
    fn scheduled_start(&mut self, t: Time, i: usize) {
        let Mac::Scheduled {
            restart_before,
            seq,
            since,
        } = self.st[i].mac
        else {
            return;
        };
        let me = self.st[i].prop;
        let first_new = if let (Some(ix), true) = (&self.ix, since >= self.removed_floor) {
            // Signals with id >= seq started at or after `since`: those moved
            // to the fading or buried trees were moved after it.
            ix.first_arrival_since(i, seq, restart_before, self.trees(since))
        } else {
            self.signals
                .range(
                    seq.saturating_sub(self.base_id)
                        .min(self.signals.len() as u64) as usize..,
                )
                .filter(|s| s.station as usize != i)
                .map(|s| s.start + me.abs_diff(s.prop))
                .filter(|&a| a < restart_before)
                .min()
        };
        match first_new {
            None => self.send_now(t, i),
            Some(a) => self.contend(t, i, a),
        }
    }

    // ---- transmission ------------------------------------------------------

    fn start_tx(&mut self, t: Time, i: usize) {
        let m = &self.sc.medium;
        let Some(&frame) = self.st[i].queue.front() else {
            self.st[i].mac = Mac::Idle;
            return;
        };
        let full_end = t + m.preamble_ps + 8 * frame.bytes as Time * m.bit_ps;
        let me = self.st[i].prop;
        // Collision detection at i: the first foreign signal present during
        // its transmission; and i's signal may reach transmitting stations
        // before anything else does.
        if let IndexUse::WhileBusy { attach, .. } = self.index_use {
            if self.ix.is_none() && self.signals.len() - self.live_index(t) > attach {
                self.attach_index(t);
            }
        }
        let mut detect = Time::MAX;
        let mut updates = std::mem::take(&mut self.updates);
        if let Some(ix) = &self.ix {
            // Removed signals have left every station before now.
            let trees = self.trees(t);
            detect = if ix.present(i, t, trees) {
                t
            } else {
                // Only an arrival before the end matters: a later one
                // schedules no detection, and `detect_at` is compared
                // only with arrivals before this signal's end.
                ix.first_start_after(i, t, full_end, trees)
                    .unwrap_or(Time::MAX)
            };
            // Only the nearest transmitter on each side can be reached by
            // this signal first: a farther one j has a nearer one j' between
            // it and i, whose signal (sent no later than now) reaches j no
            // later than this one does, and j's detection time already
            // accounts for j' (set at j's start or lowered at j''s).
            let mut near = ix.nearest_unfixed(i);
            if let [Some(x), Some(y)] = near {
                if y.1 < x.1 {
                    near = [Some(y), Some(x)];
                }
            }
            for (j, sid) in near.into_iter().flatten() {
                debug_assert!(self.st[j].mac == Mac::Transmitting { signal: sid });
                let arrive = t + me.abs_diff(self.st[j].prop);
                if arrive < self.st[j].detect_at && arrive < self.signal(sid).end {
                    updates.push((j, arrive));
                }
            }
        } else {
            for s in self.signals.range(self.live_index(t)..) {
                let j = s.station as usize;
                if j == i {
                    continue;
                }
                let d = me.abs_diff(s.prop);
                if s.end + d > t {
                    detect = detect.min((s.start + d).max(t));
                }
                // A signal is unfixed exactly while its sender is transmitting it
                // (detect and tx_end fix it before the sender moves on), so this
                // needs no look at the sender's state.
                if !s.fixed {
                    debug_assert!(self.st[j].mac == Mac::Transmitting { signal: s.id });
                    let arrive = t + d;
                    if arrive < self.st[j].detect_at && arrive < s.end {
                        updates.push((j, arrive));
                    }
                }
            }
        }
        for &(j, at) in &updates {
            let sj = &mut self.st[j];
            sj.detect_at = at;
            sj.detect_token = sj.detect_token.wrapping_add(1);
            self.q.push(at, Event::Detect(j as u32, sj.detect_token));
        }
        updates.clear();
        self.updates = updates;
        let id = self.next_id;
        self.next_id += 1;
        if let Some(ix) = &mut self.ix {
            ix.add(i, id, t, full_end);
        }
        if self.signals.len() == self.signals.capacity() {
            grow_huge(&mut self.signals);
        }
        self.signals.push_back(Signal {
            id,
            station: i as u32,
            prop: me,
            start: t,
            end: full_end,
            fixed: false,
            collided: false,
            frame,
            waiters: Vec::new(),
        });
        let s = &mut self.st[i];
        s.mac = Mac::Transmitting { signal: id };
        s.detect_at = detect;
        s.detect_token = s.detect_token.wrapping_add(1);
        if detect < full_end {
            self.q.push(detect, Event::Detect(i as u32, s.detect_token));
        }
        s.timer = s.timer.wrapping_add(1);
        // A detection before the end fixes a new end (and pushes its own
        // TxEnd), which would leave this one stale: only push it when it can
        // fire. A later start_tx can only move detection earlier.
        if !(self.cd && detect < full_end) {
            self.q.push(full_end, Event::TxEnd(i as u32, s.timer));
        }
        let attempt = s.collisions + 1;
        self.rec.attempt(t, i, frame.bytes);
        self.obs.on(
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

    fn detect(&mut self, t: Time, i: usize) {
        let Mac::Transmitting { signal } = self.st[i].mac else {
            return;
        };
        if !self.cd {
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
        // The preamble is always finished, then the jam is sent.
        let jam_start = t.max(start + m.preamble_ps);
        let jam_end = jam_start + m.jam_ps;
        let late = t > start + m.preamble_ps + m.slot_ps;
        {
            let s = self.signal_mut(signal);
            s.end = jam_end;
            s.fixed = true;
            s.collided = true;
        }
        self.index_fixed(i, signal, jam_end);
        let st = &mut self.st[i];
        // The jam's end draws a backoff: its generator, out of line and
        // seldom in cache in a crowd, can load during the jam.
        st.rng_backoff.prefetch();
        st.detect_at = Time::MAX;
        st.timer = st.timer.wrapping_add(1);
        self.q.push(jam_end, Event::TxEnd(i as u32, st.timer));
        self.rec.collision_detected(t, i, late);
        self.obs
            .on(t, i as u32, &MacEvent::CollisionDetected { late });
        self.obs.on(
            t,
            i as u32,
            &MacEvent::Jam {
                start: jam_start,
                end: jam_end,
            },
        );
    }

    fn tx_end(&mut self, t: Time, i: usize) {
        let Mac::Transmitting { signal } = self.st[i].mac else {
            return;
        };
        let (collided, frame, mut waiters, start, was_fixed) = {
            let s = self.signal_mut(signal);
            let was_fixed = s.fixed;
            s.fixed = true;
            (
                s.collided,
                s.frame,
                std::mem::take(&mut s.waiters),
                s.start,
                was_fixed,
            )
        };
        if !was_fixed {
            self.index_fixed(i, signal, t);
        }
        // Without collision detection the sender learns at the end of its
        // frame whether another signal overlapped it (at the sender).
        let collided = collided || (!self.cd && self.overlapped_at(signal, i));
        if collided {
            self.channel.observe_collision(start, t);
        } else {
            self.channel.observe_success();
        }
        self.st[i].own_end = t;
        self.st[i].detect_at = Time::MAX;
        if collided {
            self.rec.collision_ended(t, i);
            let spec = self.spec(i);
            let s = &mut self.st[i];
            s.collisions += 1;
            s.backoff.on_collision(spec);
            let n = s.collisions;
            if n >= spec.attempt_limit() {
                s.queue.pop_front();
                s.collisions = 0;
                s.backoff.on_discard(spec);
                self.rec.discard(t, i);
                self.obs.on(t, i as u32, &MacEvent::Discard { attempts: n });
                self.next_frame(t, i);
            } else {
                let slot = self.sc.medium.slot_ps;
                let draw = s
                    .rng_backoff
                    .with(|r| s.backoff.draw(spec, n, slot, &self.channel, r));
                s.mac = Mac::Backoff;
                s.timer = s.timer.wrapping_add(1);
                // Saturating: a wait past the end of the clock means "never again in
                // this run", which is what a huge backoff window asks for.
                self.q.push(
                    t.saturating_add(draw.delay),
                    Event::Ready(i as u32, s.timer),
                );
                self.obs.on(
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
            let d = self.delay(i, frame.dst as usize);
            self.q.push(t + d, Event::Deliver(signal));
            let spec = self.spec(i);
            let s = &mut self.st[i];
            s.queue.pop_front();
            s.collisions = 0;
            s.backoff.on_success(spec);
            self.rec.success(t, i);
            self.obs.on(t, i as u32, &MacEvent::TxSuccess);
            if let Access::CsmaCdPPersistent { .. } = self.access {
                // The sender contends for its next frame after the stations
                // that waited on this one, so that they start their slots
                // from this end as it does.
                self.wake_waiters(t, signal, std::mem::take(&mut waiters));
            }
            self.next_frame(t, i);
        }
        self.wake_waiters(t, signal, waiters);
        self.prune(t);
    }

    /// Drops signals that can no longer matter to any station, and moves the
    /// start of the live signals past those that have left every station an
    /// interframe gap ago.
    fn prune(&mut self, now: Time) {
        if now < self.prune_next {
            return;
        }
        self.prune_next = now + self.ifg_part1;
        while let Some(s) = self.signals.front() {
            if s.fixed && s.waiters.is_empty() && s.end + self.horizon < now {
                self.signals.pop_front();
                self.base_id += 1;
            } else {
                break;
            }
        }
        let mut k = self.live_from.max(self.base_id);
        while k < self.next_id {
            let s = self.signal(k);
            if s.fixed && s.end + self.max_delay + self.ifg <= now {
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
            if self.ix.is_some() && self.signals.len() - self.live_index(now) < detach {
                self.detach_index();
            }
        }
    }

    /// Puts the bus index in use at `now`, holding every signal that can
    /// matter from then on (those from [`Sim::live_index`]). Queries about
    /// earlier times (a deferral resumed from the past, a delivery check
    /// that looks back) scan, as they do for times before a removal: the
    /// index may lack signals that mattered then.
    fn attach_index(&mut self, now: Time) {
        let mut ix = self
            .ix_spare
            .take()
            .unwrap_or_else(|| BusIndex::new(&self.st.iter().map(|s| s.prop).collect::<Vec<_>>()));
        let first = self.live_index(now);
        for (id, s) in (self.base_id + first as u64..).zip(self.signals.range(first..)) {
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
        self.ix = Some(ix);
    }

    /// Sets the bus index aside (emptied, its memory kept for the next
    /// use): from now on questions scan the signals.
    fn detach_index(&mut self) {
        if let Some(mut ix) = self.ix.take() {
            ix.clear();
            self.ix_spare = Some(ix);
        }
        self.dying = EventQueue::new();
        self.burying.clear();
        self.removing.clear();
    }

    /// Signal `id` of station `i` now ends at `end`, for good.
    fn index_fixed(&mut self, i: usize, id: u64, end: Time) {
        if let Some(ix) = &mut self.ix {
            ix.fix(i, id, end);
            self.dying.push(end + self.max_delay, (id, i as u32));
        }
    }

    /// Moves signals down the index's trees as time passes: off the wire once
    /// they have left every station; buried an interframe gap later, when from
    /// now on they cover nothing, start no running gap and arrive nowhere; and
    /// removed once no query can look back to before their burial.
    fn index_gc(&mut self, now: Time) {
        let Some(ix) = &mut self.ix else {
            return;
        };
        if now < self.gc_next {
            return;
        }
        self.gc_next = now + (self.ifg_part1 / 2).max(1);
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

    /// Index in `signals` of the first signal that can matter to carrier
    /// sense, deferral or detection at any time >= `t`. The signals before
    /// `live_from` had left every station an interframe gap before
    /// `live_since`: at `t >= live_since` they cover nothing, start no gap
    /// that is still running and arrive nowhere. Earlier `t` (a deferral
    /// resumed from the past) scans everything.
    fn live_index(&self, t: Time) -> usize {
        if t >= self.live_since {
            (self.live_from.max(self.base_id) - self.base_id) as usize
        } else {
            0
        }
    }

    /// The end of a successful transmission reaches its destination: it is
    /// intact unless any other signal overlapped it there.
    fn deliver(&mut self, t: Time, id: u64) {
        let (i, start, end, frame) = {
            let s = self.signal(id);
            (s.station as usize, s.start, s.end, s.frame)
        };
        let dst = frame.dst as usize;
        let d = self.delay(i, dst);
        let (a0, b0) = (start + d, end + d);
        let corrupted = self.overlapped(id, dst, a0, b0);
        let delay = end - frame.arrival;
        self.rec.delivered(end, i, frame.bytes, delay, !corrupted);
        self.obs.on(
            t,
            i as u32,
            &MacEvent::Delivered {
                dst: frame.dst,
                intact: !corrupted,
                delay,
            },
        );
    }

    // ---- channel-access modes other than 1-persistent CSMA/CD -------------
    //
    // Kept apart from the carrier-sense machinery above: each mode branches off
    // at `contend` (before deferral), `send_now` (the moment a station would
    // send), `detect` (ignored without collision detection) and `tx_end`
    // (failure judged at the end of the frame). csma-cd takes none of them.

    /// Handles `contend` for modes that do not simply defer; returns whether
    /// it did.
    fn contend_by_mode(&mut self, now: Time, i: usize) -> bool {
        match self.access {
            Access::Aloha | Access::SlottedAloha => {
                // No carrier sense: send at once, after the station's own gap;
                // slotted, at the next slot boundary. Slotted stations keep no
                // gap: slots keep them apart, and a gap would push a retry
                // drawn for the very next slot (r = 0) into the one after, the
                // same slot as r = 1, so that pairs could never separate.
                let at = if self.access == Access::SlottedAloha {
                    let slot = self.sc.medium.slot_ps;
                    now.div_ceil(slot).saturating_mul(slot)
                } else {
                    self.st[i].own_end().map_or(now, |e| now.max(e + self.ifg))
                };
                if at <= now {
                    self.start_tx(now, i);
                } else {
                    // No carrier can restart it: `restart_before` 0.
                    self.schedule_start(now, i, at, 0);
                }
                true
            }
            Access::CsmaCdNonPersistent if self.carrier_at(i, now) => {
                self.sense_later(now, i);
                true
            }
            _ => false,
        }
    }

    /// p-persistent: a station whose slot wait or backoff ends at `now` samples
    /// the carrier just before its slot begins, so a signal reaching it at that
    /// very instant (sent in the same slot elsewhere) is not sensed and the two
    /// collide, as in Metcalfe and Boggs's slotted model.
    fn slot_sample_time(&self, now: Time, i: usize, from: Time) -> Time {
        match self.access {
            Access::CsmaCdPPersistent { .. } if from == now && self.st[i].mac == Mac::Backoff => {
                now.saturating_sub(1)
            }
            _ => from,
        }
    }

    /// The stations blocked on `signal` contend again, now that its end is
    /// known.
    fn wake_waiters(&mut self, t: Time, signal: u64, waiters: Vec<u32>) {
        // In a crowd their states are scattered: ask for all of them first.
        for &w in &waiters {
            if let Some(s) = self.st.get(w as usize) {
                prefetch_lines(s);
            }
        }
        for w in waiters {
            let w = w as usize;
            if let Mac::Blocked { on, ctx } = self.st[w].mac {
                if on == signal {
                    self.contend(t, w, ctx);
                }
            }
        }
    }

    /// The station may send now: p-persistent stations toss their coin first.
    fn send_now(&mut self, t: Time, i: usize) {
        if let Access::CsmaCdPPersistent { p } = self.access {
            let s = &mut self.st[i];
            if s.rng_backoff.with(|r| r.random::<f64>()) >= p {
                // Wait a slot and sense again.
                let at = t + self.sc.medium.slot_ps;
                s.mac = Mac::Backoff;
                s.timer = s.timer.wrapping_add(1);
                self.q.push(at, Event::Ready(i as u32, s.timer));
                self.obs
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
    fn sense_later(&mut self, now: Time, i: usize) {
        let spec = self.spec(i);
        let slot = self.sc.medium.slot_ps;
        let s = &mut self.st[i];
        let mut probe = s.backoff.clone();
        let n = s.collisions.max(1);
        let draw = s
            .rng_backoff
            .with(|r| probe.draw(spec, n, slot, &self.channel, r));
        let at = now + slot + draw.delay;
        s.mac = Mac::Backoff;
        s.timer = s.timer.wrapping_add(1);
        self.q.push(at, Event::Ready(i as u32, s.timer));
        self.obs
            .on(now, i as u32, &MacEvent::Defer { until: Some(at) });
    }

    /// Whether another station's signal is present at station `i` at `t`.
    fn carrier_at(&self, i: usize, t: Time) -> bool {
        if let Some(ix) = &self.ix {
            // Only called at the current time: removed signals are gone.
            return ix.present(i, t, self.trees(t));
        }
        let me = self.st[i].prop;
        self.signals.range(self.live_index(t)..).any(|s| {
            let j = s.station as usize;
            let d = me.abs_diff(s.prop);
            j != i && s.start + d <= t && t < s.end + d
        })
    }

    /// Whether any other signal overlapped signal `id` at station `at`.
    fn overlapped_at(&self, id: u64, at: usize) -> bool {
        let (start, end, from) = {
            let s = self.signal(id);
            (s.start, s.end, s.station as usize)
        };
        let d = self.st[at].prop.abs_diff(self.st[from].prop);
        self.overlapped(id, at, start + d, end + d)
    }

    /// Whether any signal but `id` is present at station `at` at some time in
    /// [a0, b0).
    fn overlapped(&self, id: u64, at: usize, a0: Time, b0: Time) -> bool {
        let pa = self.st[at].prop;
        let hit = |id_k: u64, prop: Time, start: Time, end: Time| {
            let dk = pa.abs_diff(prop);
            id_k != id && start + dk < b0 && a0 < end + dk
        };
        match &self.ix {
            // A signal removed at r has left every station by r, so only
            // those removed after a0 can overlap.
            Some(ix) if a0 >= self.removed_floor => ix.overlaps(at, id, a0, b0, self.trees(a0)),
            _ => self
                .signals
                .iter()
                .any(|s| hit(s.id, s.prop, s.start, s.end)),
        }
    }

    fn finish(self) -> RunResult {
        let Sim {
            sc,
            q,
            st,
            signals,
            rec,
            ix,
            ix_spare,
            dying,
            ..
        } = self;
        let queued: Vec<u64> = st.iter().map(|s| s.queue.len() as u64).collect();
        // A crowd's run state goes before its results are built, so that
        // the two never take memory at once.
        drop((q, st, signals, ix, ix_spare, dying));
        rec.finish(sc, &queued)
    }
}

#[cfg(test)]
mod tests {
    use super::{Frame, FrameQueue, Stream, Time};
    use rand::RngExt;
    use std::collections::VecDeque;

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

    /// A parked stream, rebuilt at its word position for each use, draws the
    /// same numbers as a live generator, whatever mix of widths is drawn
    /// (u32, u64, f64 and ranges straddle the generator's buffer edges).
    #[test]
    fn parked_stream_draws_what_a_live_one_draws() {
        let (mut live, mut parked) = (Stream::new(42, false), Stream::new(42, true));
        for k in 0..2000u32 {
            let draw = |s: &mut Stream| {
                s.with(|r| match k % 4 {
                    0 => r.random::<u32>() as u64,
                    1 => r.random::<u64>(),
                    2 => r.random::<f64>().to_bits(),
                    _ => r.random_range(0..=k as u64),
                })
            };
            assert_eq!(draw(&mut live), draw(&mut parked), "draw {k}");
        }
    }
}
