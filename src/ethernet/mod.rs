//! The bus world: one run of CSMA/CD stations on a shared bus, driven by the
//! event engine. No I/O, no wall clock; once a scenario is validated nothing
//! here can fail.
//!
//! The rooms follow 802.3's processes: `station` (a station's state),
//! `arrivals` (traffic into its queue), `mac` (contend, defer, transmit,
//! detect and jam, backoff), `access` (the non-802.3 access modes),
//! `medium` (the signals on the wire and what a station senses), `placement`
//! (where stations sit) and `metrics` (what a run counts). This file holds
//! the run's state, its assembly and the event loop.

mod access;
mod arrivals;
mod budget;
mod checks;
mod columns;
mod config;
mod cost;
mod event;
mod mac;
mod medium;
mod metrics;
mod placement;
mod station;
mod topology;

pub use columns::{
    ALL_METRIC_COLUMNS, BURST_COLUMNS, BURST_METRIC_COLUMNS, COLUMNS, DERIVED_COLUMNS,
    GROUP_COLUMNS, METRIC_COLUMNS,
};
pub use config::{Access, Group, Medium, Placement, Scenario, Standard};
pub use event::{MacEvent, Observer, MAX_STATIONS};
pub use medium::signal_index::CROWD;
pub use metrics::{BurstResult, GroupResult, RunMetrics, RunResult, StationResult};
pub use placement::positions;
pub use topology::{paths, Paths, Topology};

use crate::backoff::{BackoffSpec, BackoffState, ChannelHistory};
use crate::engine::{EventQueue, Time};
use crate::mem::{huge_vec, prefetch_lines};
use crate::progress::{Meter, REPORT_EVERY};
use crate::traffic::Arrivals;
use event::{Event, Kind, Packed};
use medium::signal_index::{self as bus, BusIndex};
use medium::signal_list::SignalList;
use medium::Seen;
use metrics::{Recorder, Row};
use station::{Extras, Frame, FrameQueue, Generators, Mac, Station};

/// Runs one replication of `sc` with the given run seed.
pub fn run(sc: &Scenario, run_seed: u64) -> RunResult {
    run_observed(sc, run_seed, &mut ())
}

/// [`run`], reporting to `meter` how far it has got.
pub fn run_metered(sc: &Scenario, run_seed: u64, meter: &mut Meter) -> RunResult {
    run_sim(sc, run_seed, index_use(sc), &mut (), meter)
}

/// Runs one replication, reporting every MAC event to `observer`.
pub fn run_observed<O: Observer>(sc: &Scenario, run_seed: u64, observer: &mut O) -> RunResult {
    run_with_index(sc, run_seed, index_use(sc), observer)
}

/// The bus index for crowds, while many signals can matter.
fn index_use(sc: &Scenario) -> IndexUse {
    if sc.station_count() >= CROWD {
        IndexUse::WhileBusy {
            attach: bus::ATTACH,
            detach: bus::DETACH,
        }
    } else {
        IndexUse::Off
    }
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
/// [`Generators`]): two live generators take some 700 bytes per station.
const PARK_FROM: usize = 1 << 16;

/// Up to this many stations, their state (128 bytes each, counters
/// included) takes at most 32 KiB and mostly stays in the first-level
/// cache, so the run loop loads nothing ahead: the prefetches would mostly
/// cost their instructions.
const PREFETCH_FROM: usize = 256;

/// Runs one replication with the bus index used as `index` says, whatever
/// the number of stations. Results and events are the same in every case;
/// the tests check that.
#[doc(hidden)]
pub fn run_with_index<O: Observer>(
    sc: &Scenario,
    run_seed: u64,
    index: IndexUse,
    observer: &mut O,
) -> RunResult {
    run_sim(sc, run_seed, index, observer, &mut Meter::none())
}

fn run_sim<O: Observer>(
    sc: &Scenario,
    run_seed: u64,
    index: IndexUse,
    observer: &mut O,
    meter: &mut Meter,
) -> RunResult {
    let mut sim = Sim::new(sc, run_seed, observer, index);
    sim.run(meter);
    sim.finish(run_seed)
}

/// Groups of stations at the same propagation time from the origin: per
/// station its group (`u32::MAX` when alone), and per group an empty latest
/// start. Both empty when every station is alone at its position.
fn twins(stations: &[Station]) -> (Vec<u32>, Vec<(Time, u32, u32)>) {
    let mut order: Vec<usize> = (0..stations.len()).collect();
    order.sort_by_key(|&i| stations[i].prop);
    let mut group = vec![u32::MAX; stations.len()];
    let mut groups = 0u32;
    for run in order.chunk_by(|&a, &b| stations[a].prop == stations[b].prop) {
        if run.len() > 1 {
            for &i in run {
                group[i] = groups;
            }
            groups += 1;
        }
    }
    if groups == 0 {
        return (Vec::new(), Vec::new());
    }
    (group, vec![(Time::MAX, u32::MAX, 0); groups as usize])
}

struct Sim<'a, O: Observer> {
    sc: &'a Scenario,
    events: EventQueue<Packed>,
    stations: Vec<Station>,
    /// What only some scenarios keep per station (see [`Extras`]).
    extras: Extras,
    /// Each station's backoff memory, when some group's policy keeps one
    /// ([`BackoffSpec::keeps_state`]); empty otherwise, and each draw then
    /// starts from a fresh state, which those policies do not read.
    backoffs: Vec<BackoffState>,
    generators: Generators,
    signals: SignalList,
    ifg: Time,
    /// The first two thirds of the gap, during which carrier restarts it.
    ifs_part1: Time,
    horizon: Time,
    recorder: Recorder,
    observer: &'a mut O,
    /// `[medium] access`, and whether it detects collisions (else a collided
    /// frame runs to its end and fails there).
    access: Access,
    detects_collisions: bool,
    /// Whether the run loop asks the processor to load the next event's
    /// station ahead (see [`Sim::prefetch`]): only for more stations than
    /// [`PREFETCH_FROM`].
    prefetching: bool,
    /// What channel-aware backoff policies (BLAM) observe.
    channel: ChannelHistory,
    /// Why the run stopped before its end: a policy written as an
    /// expression gave no valid wait.
    fault: Option<String>,
    /// Signals with ids below `live_from` are dead for every query at times
    /// >= `live_since` (see [`Sim::live_index`]).
    live_from: u64,
    live_since: Time,
    /// The largest propagation delay between two stations.
    max_delay: Time,
    /// The longest signal (a frame, and a jam that starts just before its
    /// end), for the bus index.
    longest: Time,
    /// Reused by [`Sim::deference`] and [`Sim::start_tx`], so that they
    /// allocate nothing.
    scratch: Vec<Seen>,
    updates: Vec<(usize, Time)>,
    /// The frames of successful transmissions on their way to their
    /// destinations, by signal id (a few at a time): a signal does not
    /// carry its frame, which only a success needs once it has left its
    /// sender's queue.
    deliveries: Vec<(u64, Frame)>,
    /// For crowds: the signals that matter at the current time, by station
    /// position (see [`bus`]); None while the index is not in use.
    index: Option<BusIndex>,
    /// When the index is used, and its memory while it is set aside (see
    /// [`Sim::attach_index`]).
    index_use: IndexUse,
    spare_index: Option<BusIndex>,
    /// Queries about times before this need the full scan (a signal that
    /// could matter then may have left the index).
    removed_floor: Time,
    /// The next time the index's oldest generations are looked at: letting
    /// them go late is exact (queries skip them by their bounds).
    gc_next: Time,
    /// [`Sim::prune`] looks again from this time on: pruning late is exact
    /// (scans only see a few more signals that can no longer matter), and
    /// running its loops at every transmission end costs more than it saves.
    prune_next: Time,
    /// The hub's delay when the stations hang on a hub (see [`topology`]).
    hub: Option<Time>,
    /// For stations that share their position with others (empty when none
    /// do): the number of each one's group of co-located stations
    /// (`u32::MAX`: alone), and per group its latest start (time, first
    /// station to start then, starts then). See [`Sim::colocated_start_at`].
    twin_group: Vec<u32>,
    twin_starts: Vec<(Time, u32, u32)>,
    /// Where each group's station numbers end (see [`Sim::group_of`]).
    group_ends: Vec<usize>,
}

impl<'a, O: Observer> Sim<'a, O> {
    fn new(sc: &'a Scenario, run_seed: u64, observer: &'a mut O, index_use: IndexUse) -> Self {
        let n = sc.station_count();
        if n >= CROWD_MEMORY {
            crate::mem::map_large_blocks();
        }
        // Queued events name their station in 24 bits; scenarios allow
        // fewer stations (checked where they are read), and a scenario
        // built in code must too.
        assert!(
            n as u64 <= MAX_STATIONS,
            "{n} stations; a bus run takes at most {MAX_STATIONS}"
        );
        let paths = paths(sc, run_seed);
        // The bus index orders stations along a line: a hub is no line. It
        // holds signals up to a length: the longest frame, and a jam that
        // starts just before its end.
        let longest = sc.max_tx_ps() + sc.medium.jam_ps;
        let far = paths.props.iter().copied().max().unwrap_or(0);
        let span = index_span(paths.max_delay(), sc.medium.ifg_ps);
        let index_use = if paths.hub.is_some() || !BusIndex::holds(longest, span, far) {
            IndexUse::Off
        } else {
            index_use
        };
        let indexed = index_use != IndexUse::Off;
        // Parked streams give the same numbers: the tests that force the
        // index on check them too.
        let parked = index_use == IndexUse::On || (indexed && n >= PARK_FROM);
        let mut stations = huge_vec(n);
        for i in 0..n {
            stations.push(Station {
                prop: paths.props[i],
                rank: 0,
                queue: FrameQueue::default(),
                mac: Mac::Idle,
                collisions: 0,
                timer: 0,
                detect_token: 0,
                own_end: Time::MAX,
                streams_at: [0; 2],
                row: Row::default(),
            });
        }
        if indexed {
            for (r, &i) in bus::by_rank(&paths.props).iter().enumerate() {
                stations[i as usize].rank = r as u32;
            }
        }
        let group_ends = sc
            .groups
            .iter()
            .scan(0, |end, g| {
                *end += g.count;
                Some(*end)
            })
            .collect();
        // From the stations' actual propagation times, so it bounds every
        // delay (on a hub, a station's own signal enforced back to it too).
        let max_delay = match paths.hub {
            Some(r) => paths
                .max_delay()
                .max(2 * paths.props.iter().max().unwrap_or(&0) + r),
            None => paths.max_delay(),
        };
        let m = &sc.medium;
        let horizon = 2 * sc.max_delay_ps() + sc.max_tx_ps() + m.jam_ps + 2 * m.ifg_ps;
        let (twin_group, twin_starts) = twins(&stations);
        // (Only without a hub, where `max_delay` is the paths' and `span`
        // the one checked above.)
        let index = (index_use == IndexUse::On)
            .then(|| BusIndex::new(stations.iter().map(Station::place), span, longest));
        Sim {
            sc,
            events: EventQueue::with_capacity(n.min(1 << 20) + 16),
            recorder: Recorder::new(sc, n),
            stations,
            extras: Extras::new(
                n,
                sc.groups
                    .iter()
                    .any(|g| matches!(g.arrivals, Arrivals::OnOff { .. })),
                m.frame_bursting,
            ),
            backoffs: if sc.groups.iter().any(|g| g.backoff.keeps_state()) {
                sc.groups
                    .iter()
                    .flat_map(|g| std::iter::repeat_n(BackoffState::new(&g.backoff), g.count))
                    .collect()
            } else {
                Vec::new()
            },
            generators: Generators::new(run_seed, n, parked),
            signals: SignalList::new(n),
            ifg: m.ifg_ps,
            ifs_part1: m.ifg_ps * 2 / 3,
            horizon,
            observer,
            access: m.access,
            detects_collisions: m.access.detects_collisions(),
            prefetching: sc.station_count() > PREFETCH_FROM,
            channel: ChannelHistory::default(),
            fault: None,
            live_from: 0,
            live_since: 0,
            max_delay,
            longest,
            scratch: Vec::new(),
            updates: Vec::new(),
            deliveries: Vec::new(),
            index,
            removed_floor: 0,
            index_use,
            spare_index: None,
            gc_next: 0,
            prune_next: 0,
            hub: paths.hub,
            twin_group,
            twin_starts,
            group_ends,
        }
    }

    /// Station `i`'s group: groups are runs of station numbers, in order.
    #[inline]
    fn group_of(&self, i: usize) -> usize {
        match self.group_ends.as_slice() {
            [_] => 0,
            ends => ends.partition_point(|&end| end <= i),
        }
    }

    fn group_arrivals(&self, i: usize) -> &'a Arrivals {
        &self.sc.groups[self.group_of(i)].arrivals
    }

    fn spec(&self, i: usize) -> &'a BackoffSpec {
        &self.sc.groups[self.group_of(i)].backoff
    }

    fn run(&mut self, meter: &mut Meter) {
        for i in 0..self.stations.len() {
            self.start_traffic(i);
        }
        let duration = self.sc.duration;
        // A run of bursts alone ends when every frame met its fate, which
        // may be long before the duration: its progress is the greater of
        // the frames finished and the attempts made, each against its most
        // (a herd's frames mostly finish at their last attempt).
        let bursts = self
            .sc
            .groups
            .iter()
            .map(|g| match g.arrivals {
                Arrivals::Burst { frames, .. } => {
                    let frames = g.count as f64 * f64::from(frames);
                    Some((frames, frames * f64::from(g.backoff.attempt_limit().max(1))))
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|b| !b.is_empty());
        let (burst_frames, burst_attempts) = bursts.map_or((f64::INFINITY, f64::INFINITY), |b| {
            b.iter()
                .fold((0.0, 0.0), |(f, a), (gf, ga)| (f + gf, a + ga))
        });
        let mut past_end = None;
        while let Some((t, packed)) = self.events.pop() {
            if t >= duration {
                past_end = Some((t, packed));
                break;
            }
            self.recorder.events += 1;
            if self.recorder.events.is_multiple_of(REPORT_EVERY) {
                let (frames, attempts) = self.recorder.burst_progress();
                meter.set(
                    (t as f64 / duration as f64)
                        .max(frames as f64 / burst_frames)
                        .max(attempts as f64 / burst_attempts),
                );
            }
            if self.prefetching {
                if let Some(next) = self.events.peek().and_then(|e| e.station()) {
                    self.prefetch(next);
                }
            }
            // The station (its place in the index with it) was asked for
            // one event ago: the path can be now, for the events that
            // mostly walk or climb it. A detection mostly fixes a signal at
            // the end it was held at, which reads its bucket alone; the end
            // of a transmission in a crowd is mostly a collided one's,
            // which asks the index nothing.
            if let (Some(index), Some(i)) = (&self.index, packed.station()) {
                match packed.kind() {
                    Kind::TxEnd => {}
                    Kind::CollisionDetect => index.prefetch_bucket(self.stations[i].place()),
                    _ => index.prefetch_path(self.stations[i].place()),
                }
            }
            self.index_gc(t);
            self.dispatch(t, packed);
            if self.fault.is_some() {
                return;
            }
        }
        // Transmissions that ended before the duration still reach their
        // destinations: settle them, and nothing else.
        let mut next = past_end;
        while let Some((t, ev)) = next {
            if let Event::Deliver(id) = ev.unpack() {
                self.recorder.events += 1;
                self.deliver(t, id);
            }
            next = self.events.pop();
        }
    }

    /// Asks the processor to start loading the station of the next event
    /// (its state, counters and place in the index included) while this
    /// one is handled: in crowds they are scattered over megabytes, and
    /// waiting for them one by one is much of the cost of an event.
    #[inline]
    fn prefetch(&self, i: usize) {
        if let Some(s) = self.stations.get(i) {
            prefetch_lines(s);
        }
    }

    /// Handles an event as the queue holds it, without unpacking it
    /// first (see [`Packed`]).
    fn dispatch(&mut self, t: Time, ev: Packed) {
        let (i, tok) = (ev.station_bits() as usize, ev.token());
        match ev.kind() {
            Kind::Arrival => self.arrival(t, i),
            Kind::Contend if self.stations[i].timer == tok => self.contend(t, i, t),
            Kind::TxStart if self.stations[i].timer == tok => self.scheduled_start(t, i),
            Kind::CollisionDetect if self.stations[i].detect_token == tok => self.detect(t, i),
            Kind::TxEnd if self.stations[i].timer == tok => self.tx_end(t, i),
            Kind::Deliver => self.deliver(t, ev.signal()),
            _ => {}
        }
    }

    /// The run's results. The stations' positions, needed only here, are
    /// placed again (the same for the same seed) rather than held through
    /// the run.
    fn finish(self, run_seed: u64) -> RunResult {
        let Sim {
            sc,
            events,
            stations,
            extras,
            backoffs,
            generators,
            signals,
            recorder,
            index,
            spare_index,
            fault,
            ..
        } = self;
        let crowd = stations.len() >= CROWD_MEMORY;
        // A crowd's run state goes before its results are built, so that
        // the two never take memory at once: all of it but the stations
        // first, then the stations once their queues' lengths and their
        // counters are copied out.
        drop((
            events,
            extras,
            backoffs,
            generators,
            signals,
            index,
            spare_index,
        ));
        let queued: Vec<u64> = stations.iter().map(|s| s.queue.len() as u64).collect();
        let mut rows: Vec<Row> = huge_vec(stations.len());
        rows.extend(stations.iter().map(|s| s.row));
        drop(stations);
        if crowd {
            crate::mem::give_back_freed();
        }
        let mut result = recorder.finish(sc, rows, &queued, &positions(sc, run_seed));
        result.failure = fault;
        result
    }
}

/// Runs of at least this many stations have their large blocks mapped on
/// their own, and give the memory of their run state back to the system
/// before building their results (see [`crate::mem::map_large_blocks`] and
/// [`crate::mem::give_back_freed`]); smaller ones free too little to matter.
const CROWD_MEMORY: usize = 1 << 16;

/// How long after its first start a generation of the bus index takes new
/// signals while its earlier ones are still on the wire.
fn index_span(max_delay: Time, ifg: Time) -> Time {
    2 * max_delay + ifg
}
