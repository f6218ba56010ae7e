//! The service world: clients making calls to servers (a server may call
//! another for every attempt it serves), failing and retrying with the
//! shared backoff policies. No I/O, no wall clock. Once a
//! scenario is validated a run fails in one way only: when its clock cannot
//! advance (events without end at one instant, [`Stalled`]), which it
//! reports instead of running on.
//!
//! `config` is what a run is given; `client` starts calls, sends attempts and
//! decides retries; `server` answers them (a FIFO queue that can crash, a
//! flaky server, an optimistically locked row), each server with its own
//! state and stream; `downstream` a server's calls to another (a worker
//! held while one goes on, deadlines propagated); `gates` holds retry budgets
//! and breakers; `hedge` sends a hedged call's attempts while others are
//! outstanding and settles it at the first success; `metrics` counts. This
//! file holds the run's state and the
//! event loop.

mod checks;
mod client;
mod config;
mod cost;
mod downstream;
mod gates;
mod hedge;
mod metrics;
mod server;
mod stacks;
mod status;
mod trace;

pub use checks::amplification_figure;
pub use config::{
    Accept, Breaker, Budget, Calls, Delay, Empirical, Group, Recovery, RetryAfter, RetryOn,
    Scenario, Server, ServerKind, Service, Slo, Surge,
};
pub use metrics::{
    Bin, GroupCount, RunResult, ServerCount, COLUMNS, GROUP_COLUMNS, SERVER_COLUMNS,
    SERVER_TIMESERIES_COLUMNS, TIMESERIES_COLUMNS,
};
pub use stacks::{Hedge, HedgeKind, Stack, StackKind, GRPC_UNAVAILABLE};
pub use status::{CONFLICT, CONNECTION_LOST};
pub use trace::AttemptRow;

use crate::backoff::BackoffState;
use crate::engine::{EventQueue, Time};
use crate::progress::{Meter, REPORT_EVERY};
use crate::results::Stalled;
use crate::seed::{self, Stream};
use gates::GateState;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use server::{Waiting, Work};
use std::collections::{HashMap, HashSet, VecDeque};

/// Stream tags of the service world (beside the bus's in `seed`).
const NETWORK: u64 = 0x4e45_5457;
const SERVER: u64 = 0x5345_5256;

/// Events at one instant of simulated time beyond which a run is stopped as
/// stalled, besides [`STALL_EVENTS_PER_CALL`] per call in flight: a burst at
/// one instant takes a few events per attempt (sent, at the server,
/// answered), so this allows about 20 attempts of every call in flight, and
/// a million events more, before the clock must move.
pub const STALL_EVENTS: u64 = 1_000_000;
/// See [`STALL_EVENTS`].
pub const STALL_EVENTS_PER_CALL: u64 = 64;

/// Why the last attempt failed, for the message of a stalled run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Why {
    #[default]
    Unknown,
    /// A flaky server's failure reply.
    Error,
    /// A queue at its `queue_limit`.
    Full,
    /// A crashed server, down until it restarts (or the crash itself).
    Down,
    /// An accept-rate gate with no room to wait.
    Gate,
    /// An OCC write after another.
    Conflict,
    /// A poll before its job is ready.
    NotReady,
}

/// What a reply tells its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// A poll answered before the job is ready.
    NotReady,
    /// A failure (refusal, 5xx, conflict, crash) with its HTTP status
    /// ([`CONNECTION_LOST`] for a crash), with Retry-After or not.
    Fail {
        retry_after: bool,
        status: u16,
    },
    /// A non-retryable error: the call fails at once.
    ClientError,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The next call of a `poisson` or `fresh` group.
    Arrival {
        group: u32,
    },
    /// A call's next attempt leaves its client.
    Send {
        call: u32,
    },
    /// An attempt (or an OCC write) reaches the server.
    AtServer {
        server: u32,
        call: u32,
        seq: u64,
        version: u64,
    },
    /// A hedged call's timer: its next hedge, or a retry after its backoff.
    Hedge {
        call: u32,
        ticket: u64,
    },
    /// An attempt held by a rate limiter tries again for a token.
    Paced {
        call: u32,
        ticket: u64,
    },
    /// A client of a `sequential` group starts its next call.
    Next {
        group: u32,
        client: u64,
    },
    /// An OCC read reaches the server.
    OccRead {
        server: u32,
        call: u32,
        seq: u64,
    },
    /// An OCC read's reply reaches the client.
    OccVersion {
        server: u32,
        call: u32,
        seq: u64,
        version: u64,
    },
    Reply {
        call: u32,
        seq: u64,
        outcome: Outcome,
    },
    Timeout {
        call: u32,
        seq: u64,
    },
    /// An attempt that waited at the accept-rate gate passes it.
    Admit {
        server: u32,
        call: u32,
        seq: u64,
    },
    /// A worker of the queue server finishes its work.
    Done {
        server: u32,
        epoch: u32,
        worker: u32,
        token: u32,
    },
    /// A client's cancel of a timed-out attempt reaches the server.
    Cancel {
        server: u32,
        seq: u64,
    },
    Restart {
        server: u32,
    },
    /// A server's downstream call ended: the attempt it serves for its
    /// caller is answered (and its worker freed, if it held one).
    Upstream {
        parent: Parent,
        ok: bool,
    },
}

/// The attempt a downstream call is made for: at `server`, attempt `seq`
/// of call `call`, held by `worker` (u32::MAX: none) as its `token` in the
/// server's `epoch`.
#[derive(Clone, Copy, Debug)]
struct Parent {
    server: u32,
    call: u32,
    seq: u64,
    worker: u32,
    token: u32,
    epoch: u32,
}

/// A call in progress.
struct Call {
    group: u32,
    client: u64,
    /// Failures so far (the backoff's n after the next one).
    n: u32,
    retries: u32,
    /// Attempts sent so far.
    sent: u32,
    /// The attempt being waited for (unique in the run), if waiting.
    seq: u64,
    /// When the current attempt was sent, and the call's first.
    sent_at: Time,
    first_sent: Time,
    /// The Retry-After of the last failure's reply.
    retry_after: Time,
    waiting: bool,
    counted: bool,
    /// The call's number in the run.
    id: u64,
    /// Poll: when the job is ready.
    ready_at: Time,
    /// The stack's rate limiter has already given this attempt its token.
    paced: bool,
    /// The ticket of its wait for a token, while the limiter holds it.
    ticket: u64,
    /// The retry quota the call's last retry took (AWS stacks).
    paid: u32,
    /// A gRPC call's deadline (Time::MAX: none), and its first attempt's
    /// seq, which its deadline event carries.
    deadline: Time,
    first_seq: u64,
    /// For a server's downstream call: the attempt it is made for.
    parent: Option<Parent>,
    /// Whether its attempts count in servers.csv (a counted call's, or
    /// one made for such a call).
    tally: bool,
    backoff: BackoffState,
    rng: Stream,
    /// A hedged call's outstanding attempts and timer.
    hedge: Option<Box<hedge::Attempts>>,
}

/// The gate scopes of one group.
#[derive(Default)]
struct GroupGates {
    shared: GateState,
    per_client: HashMap<u64, GateState>,
}

/// The queue server's state (also what the timeseries shows for the others).
struct ServerState {
    up: bool,
    /// Attempts waiting for a worker, oldest first (some perhaps
    /// cancelled: those in `cancelled` are skipped when taken).
    waiting: VecDeque<Waiting>,
    cancelled: HashSet<u64>,
    /// Refusals waiting for a worker to make them (`reject_cost`).
    refusals: VecDeque<Waiting>,
    /// Per worker, its work; the idle workers, the lowest last; per worker
    /// the token of its pending `Done`.
    serving: Vec<Option<Work>>,
    idle: Vec<u32>,
    tokens: Vec<u32>,
    /// Attempts in the system: waiting (not cancelled) or in service.
    in_system: u64,
    /// Worker time spent so far.
    busy_ps: f64,
    /// Bumped by a crash, so that the pending `Done`s of lost work are ignored.
    epoch: u32,
    /// The OCC row's version.
    version: u64,
    /// The accept-rate gate: the earliest time the next attempt may pass,
    /// and how many attempts wait for their turn.
    next_pass: Time,
    at_gate: u64,
}

impl ServerState {
    fn new(server: &Server) -> Self {
        let workers = match server.kind {
            ServerKind::Queue { workers, .. } => workers as usize,
            _ => 0,
        };
        ServerState {
            up: true,
            waiting: VecDeque::new(),
            cancelled: HashSet::new(),
            refusals: VecDeque::new(),
            serving: vec![None; workers],
            idle: (0..workers as u32).rev().collect(),
            tokens: vec![0; workers],
            in_system: 0,
            busy_ps: 0.0,
            epoch: 0,
            version: 0,
            next_pass: 0,
            at_gate: 0,
        }
    }
}

struct Sim<'a> {
    sc: &'a Scenario,
    run_seed: u64,
    q: EventQueue<Ev>,
    now: Time,
    calls: Vec<Option<Call>>,
    free: Vec<u32>,
    /// Calls started so far, for their streams.
    serial: u64,
    next_seq: u64,
    /// Per reconnect group, whether each client is connected.
    connected: Vec<Vec<bool>>,
    connected_total: u64,
    reconnect_total: u64,
    /// Fresh clients started per group.
    fresh_clients: Vec<u64>,
    /// Per `sequential` group, the calls each client has still to start.
    sequential_left: Vec<Vec<u64>>,
    gates: Vec<GroupGates>,
    net: ChaCha8Rng,
    /// Per server, its draws (the first's stream is the one-server run's)
    /// and its state; `cur` is the server an event is handled at.
    server_rngs: Vec<ChaCha8Rng>,
    arrivals: Vec<ChaCha8Rng>,
    servers: Vec<ServerState>,
    cur: usize,
    /// Per server, what servers.csv shows.
    server_counts: Vec<ServerCount>,
    /// The call being handled is a server's downstream call: it counts in
    /// no timeseries bin.
    quiet: bool,
    counts: Vec<GroupCount>,
    crashes: u64,
    all_connected: Option<Time>,
    bins: Vec<Bin>,
    cur_bin: usize,
    /// After a load profile: the first time the queue is at most 10 (its
    /// drain time), and the largest queue over the horizon's last 20 s.
    recovery: Option<Time>,
    surge_checked: bool,
    tail_from: Time,
    tail_max: Option<u64>,
    events: u64,
    /// A policy's state kept per client across its calls (policies written
    /// as expressions that declare state), by (group, client).
    policy_state: HashMap<(u32, u64), Box<[f64]>>,
    /// Why the run stopped before its end (a policy gave no valid wait).
    fault: Option<String>,
    /// Per group, attempts sent at the instant given beside them.
    sends: Vec<(Time, u64)>,
    /// Why the last failed attempt failed.
    why: Why,
    /// Server time spent on attempts whose client had gone.
    wasted_ps: f64,
    /// Attempts a worker dropped unserved (`drop_expired`).
    dropped_expired: u64,
    /// The latencies of the calls that succeeded in the current bin.
    bin_latencies: Vec<Time>,
    /// With more than one server, per server its bins and the latencies
    /// of the calls to it that succeeded in the current bin (downstream
    /// calls included); empty with one server.
    server_bins: Vec<Vec<Bin>>,
    server_latencies: Vec<Vec<Time>>,
    /// Rows per attempt, when traced.
    trace: Option<trace::Trace>,
}

/// Runs one replication of `sc` with the given run seed; [`Stalled`] when
/// its clock cannot advance.
pub fn run(sc: &Scenario, run_seed: u64) -> Result<RunResult, Stalled> {
    run_metered(sc, run_seed, &mut Meter::none())
}

/// [`run`], reporting to `meter` the share of the duration simulated, or,
/// when every client group reconnects, the greatest share of the clients
/// connected so far if that is more: such a run ends once every client is
/// connected, often long before its duration.
pub fn run_metered(sc: &Scenario, run_seed: u64, meter: &mut Meter) -> Result<RunResult, Stalled> {
    let mut sim = Sim::new(sc, run_seed);
    drive(&mut sim, Some(meter))?;
    Ok(sim.finish())
}

/// Runs one replication of `sc` (with the seed `csmacd run` gives its
/// first) and returns a row per attempt, in order of sending.
pub fn run_traced(sc: &Scenario, run_seed: u64) -> Result<Vec<AttemptRow>, Stalled> {
    let mut sim = Sim::new(sc, run_seed);
    sim.trace = Some(trace::Trace::default());
    drive(&mut sim, None)?;
    Ok(sim.trace.take().map(|t| t.rows).unwrap_or_default())
}

/// The event loop of one run, from its start to its duration (or a
/// policy's fault), stopping a run whose clock cannot advance; the share
/// done goes to `meter` when there is one.
fn drive(sim: &mut Sim, mut meter: Option<&mut Meter>) -> Result<(), Stalled> {
    let sc = sim.sc;
    let reconnecting = sc
        .groups
        .iter()
        .all(|g| matches!(g.calls, Calls::Reconnect { .. }));
    sim.start();
    // The instant of the last event, and the events handled at it.
    let mut instant: (Time, u64) = (0, 0);
    while let Some((t, ev)) = sim.q.pop() {
        if t > sc.duration {
            break;
        }
        if t == instant.0 {
            instant.1 += 1;
            if instant.1 > STALL_EVENTS && instant.1 > sim.stall_limit() {
                return Err(sim.stalled(t, instant.1));
            }
        } else {
            instant = (t, 1);
        }
        sim.advance(t);
        sim.now = t;
        sim.events += 1;
        if let Some(meter) = meter.as_deref_mut() {
            if sim.events.is_multiple_of(REPORT_EVERY) {
                let mut share = t as f64 / sc.duration.max(1) as f64;
                if reconnecting && sim.reconnect_total > 0 {
                    share = share.max(sim.connected_total as f64 / sim.reconnect_total as f64);
                }
                meter.set(share);
            }
        }
        sim.handle(ev);
        sim.after_event();
        if sim.fault.is_some() {
            break;
        }
    }
    Ok(())
}

impl<'a> Sim<'a> {
    fn new(sc: &'a Scenario, run_seed: u64) -> Self {
        let rng = |tags: &[u64]| ChaCha8Rng::seed_from_u64(seed::derive(run_seed, tags));
        let bins = sc.duration.div_ceil(sc.bin.max(1)) as usize;
        let connected = sc
            .groups
            .iter()
            .map(|g| match g.calls {
                Calls::Reconnect { .. } => vec![false; g.count as usize],
                _ => Vec::new(),
            })
            .collect();
        let reconnect_total = sc
            .groups
            .iter()
            .filter(|g| matches!(g.calls, Calls::Reconnect { .. }))
            .map(|g| g.count)
            .sum();
        let gates = sc
            .groups
            .iter()
            .map(|g| GroupGates {
                shared: GateState::new(g.budget.as_ref(), g.stack.as_ref()),
                per_client: HashMap::new(),
            })
            .collect();
        Sim {
            sc,
            run_seed,
            q: EventQueue::new(),
            now: 0,
            calls: Vec::new(),
            free: Vec::new(),
            serial: 0,
            next_seq: 0,
            connected,
            connected_total: 0,
            reconnect_total,
            fresh_clients: vec![0; sc.groups.len()],
            sequential_left: sc
                .groups
                .iter()
                .map(|g| match g.calls {
                    Calls::Sequential { count, .. } => vec![count - 1; g.count as usize],
                    _ => Vec::new(),
                })
                .collect(),
            gates,
            net: rng(&[NETWORK]),
            server_rngs: (0..sc.servers.len() as u64)
                .map(|k| {
                    if k == 0 {
                        rng(&[SERVER])
                    } else {
                        rng(&[SERVER, k])
                    }
                })
                .collect(),
            arrivals: (0..sc.groups.len() as u64)
                .map(|g| rng(&[seed::TRAFFIC, g]))
                .collect(),
            servers: sc.servers.iter().map(ServerState::new).collect(),
            cur: 0,
            server_counts: vec![ServerCount::default(); sc.servers.len()],
            quiet: false,
            counts: vec![GroupCount::default(); sc.groups.len()],
            crashes: 0,
            all_connected: None,
            bins: vec![Bin::default(); bins],
            cur_bin: 0,
            recovery: None,
            surge_checked: false,
            tail_from: sc.duration.saturating_sub(20_000_000_000_000),
            tail_max: None,
            events: 0,
            policy_state: HashMap::new(),
            fault: None,
            sends: vec![(0, 0); sc.groups.len()],
            why: Why::Unknown,
            wasted_ps: 0.0,
            dropped_expired: 0,
            bin_latencies: Vec::new(),
            server_bins: match sc.servers.len() {
                1 => Vec::new(),
                n => vec![vec![Bin::default(); bins]; n],
            },
            server_latencies: vec![Vec::new(); sc.servers.len()],
            trace: None,
        }
    }

    /// The events one instant may take before the run is stalled:
    /// [`STALL_EVENTS`] and [`STALL_EVENTS_PER_CALL`] per call in flight.
    /// An OCC race always ends, whatever its delays: every round of writes
    /// has a winner (n calls at one instant take n(n+1)/2 attempts).
    fn stall_limit(&self) -> u64 {
        if self.sc.servers[self.cur].kind == ServerKind::Occ {
            return u64::MAX;
        }
        let live = (self.calls.len() - self.free.len()) as u64;
        STALL_EVENTS.saturating_add(STALL_EVENTS_PER_CALL.saturating_mul(live))
    }

    /// Counts an attempt of group `gi` sent now.
    fn count_send(&mut self, gi: usize) {
        let s = &mut self.sends[gi];
        if s.0 == self.now {
            s.1 += 1;
        } else {
            *s = (self.now, 1);
        }
    }

    /// What stops a run whose clock stands at `at` after `events` there:
    /// the group that sent the most attempts at that instant, and why they
    /// go on without end.
    fn stalled(&self, at: Time, events: u64) -> Stalled {
        let (gi, attempts) = self
            .sends
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 == at)
            .map(|(gi, s)| (gi, s.1))
            .max_by_key(|&(gi, n)| (n, std::cmp::Reverse(gi)))
            .unwrap_or((0, 0));
        let g = &self.sc.groups[gi];
        Stalled {
            at,
            events,
            group: g.name.clone(),
            key: format!("clients.{gi}"),
            cause: self.cause(gi, attempts),
        }
    }

    /// Why group `gi`'s attempts keep coming at one instant, and what to
    /// change: "its calls retry with no wait and no limit, over a network
    /// with no delay, against a server that fails every attempt ...".
    fn cause(&self, gi: usize, attempts: u64) -> String {
        let g = &self.sc.groups[gi];
        if attempts == 0 {
            return "events keep coming at one instant of simulated time; \
                    give the network a `delay` or the clients a `backoff`"
                .into();
        }
        let poll = matches!(g.calls, Calls::Poll { .. });
        let who = match (&g.stack, poll) {
            (Some(st), _) => format!("its `{}` stack retries", st.name()),
            (None, true) => "its polls repeat".into(),
            (None, false) => "its calls retry".into(),
        };
        let limit = match g.max_retries {
            None => " and no limit".to_string(),
            Some(m) => format!(" up to {m} times"),
        };
        let net = if self.sc.network == Delay::Fixed(0) {
            ", over a network with no delay,"
        } else {
            ""
        };
        let server = match (self.why, &self.sc.servers[self.cur].kind) {
            (Why::Error, ServerKind::Flaky { failure, .. }) if *failure >= 1.0 => {
                format!("a server that fails every attempt (`server.failure` = {failure})")
            }
            (Why::Error, _) => "a server that fails attempts at once".into(),
            (Why::Full, ServerKind::Queue { queue_limit, .. }) => format!(
                "a full queue that refuses every attempt at once (`server.queue_limit` = {})",
                queue_limit.unwrap_or(0)
            ),
            (Why::Down, ServerKind::Queue { restart, .. }) => format!(
                "a crashed server that refuses every attempt until it restarts \
                 (`server.restart` = {})",
                crate::units::format_ps(*restart)
            ),
            (Why::Gate, ServerKind::Queue { accept, .. }) => format!(
                "an accept-rate gate that refuses every attempt before its turn \
                 (`server.accept_burst` = {})",
                accept.map_or(0, |a| a.burst)
            ),
            (Why::Conflict, _) => {
                "an optimistically locked row whose writes keep conflicting".into()
            }
            (Why::NotReady, _) => "a job that is not ready yet".into(),
            _ => "a server that fails every attempt".into(),
        };
        let example = if poll {
            "backoff = { kind = \"constant\", delay = \"1s\" }"
        } else {
            "backoff = { kind = \"full-jitter\", base = \"100ms\", cap = \"10s\" }"
        };
        let fewer = if g.max_retries.is_some() {
            "a smaller "
        } else {
            ""
        };
        let fix = match &g.stack {
            Some(_) => {
                "give the stack a wait between attempts or a smaller `max_attempts`".to_string()
            }
            None => format!("give `backoff` (e.g. {example}) or {fewer}`max_retries`"),
        };
        format!("{who} with no wait{limit}{net} against {server}: {attempts} attempts at this instant; {fix}")
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::AtServer { server, .. }
            | Ev::OccRead { server, .. }
            | Ev::Admit { server, .. }
            | Ev::Done { server, .. }
            | Ev::Cancel { server, .. }
            | Ev::Restart { server } => self.cur = server as usize,
            Ev::Upstream { parent, .. } => self.cur = parent.server as usize,
            Ev::Send { call }
            | Ev::Hedge { call, .. }
            | Ev::Paced { call, .. }
            | Ev::OccVersion { call, .. }
            | Ev::Reply { call, .. }
            | Ev::Timeout { call, .. } => {
                self.quiet =
                    matches!(self.calls.get(call as usize), Some(Some(c)) if c.parent.is_some());
            }
            Ev::Arrival { .. } | Ev::Next { .. } => {}
        }
        match ev {
            Ev::Arrival { group } => self.arrival(group as usize),
            Ev::Send { call } => self.send(call),
            Ev::Paced { call, ticket } => self.paced(call, ticket),
            Ev::Hedge { call, ticket } => self.hedge_fire(call, ticket),
            Ev::Next { group, client } => self.next_call(group as usize, client),
            Ev::AtServer {
                call, seq, version, ..
            } => self.at_server(call, seq, version),
            Ev::OccRead { server, call, seq } => {
                let version = self.servers[self.cur].version;
                let d = self.delay();
                self.q.push(
                    self.now + d,
                    Ev::OccVersion {
                        server,
                        call,
                        seq,
                        version,
                    },
                );
            }
            Ev::OccVersion {
                server,
                call,
                seq,
                version,
            } => self.occ_write(server, call, seq, version),
            Ev::Reply { call, seq, outcome } => self.reply(call, seq, outcome),
            Ev::Timeout { call, seq } => self.timeout(call, seq),
            Ev::Admit { call, seq, .. } => {
                self.servers[self.cur].at_gate -= 1;
                self.enqueue(call, seq);
            }
            Ev::Done {
                epoch,
                worker,
                token,
                ..
            } => self.done(epoch, worker, token),
            Ev::Cancel { seq, .. } => self.cancel(seq),
            Ev::Restart { .. } => self.servers[self.cur].up = true,
            Ev::Upstream { parent, ok } => self.upstream(parent, ok),
        }
        self.quiet = false;
    }

    /// Attempts in the system of a queue server.
    fn in_system(&self) -> u64 {
        self.servers[self.cur].in_system
    }

    /// Closes the timeseries bins that end at or before `t`, with the state
    /// that held until then, and takes the surge and tail marks due by `t`.
    fn advance(&mut self, t: Time) {
        let bin = self.sc.bin.max(1);
        while self.cur_bin < self.bins.len() && (self.cur_bin as u64 + 1) * bin <= t {
            self.close_bin();
        }
        if let Some((_, to)) = self.sc.surge() {
            if t >= to && !self.surge_checked {
                self.surge_checked = true;
                if self.servers[0].in_system <= 10 {
                    self.recovery = Some(0);
                }
            }
            if t >= self.tail_from && self.tail_max.is_none() {
                self.tail_max = Some(self.servers[0].in_system);
            }
        }
    }

    fn close_bin(&mut self) {
        let queue = self.servers[0].in_system;
        let p50 = metrics::exact_quantile_s(&mut self.bin_latencies, 0.5);
        let p99 = metrics::exact_quantile_s(&mut self.bin_latencies, 0.99);
        self.bin_latencies.clear();
        let b = &mut self.bins[self.cur_bin];
        b.latency_p50 = p50;
        b.latency_p99 = p99;
        b.queue = queue;
        b.connected = self.connected_total;
        b.server_up = self.servers[0].up;
        let k = self.cur_bin;
        for (s, bins) in self.server_bins.iter_mut().enumerate() {
            let lat = &mut self.server_latencies[s];
            let b = &mut bins[k];
            b.latency_p50 = metrics::exact_quantile_s(lat, 0.5);
            b.latency_p99 = metrics::exact_quantile_s(lat, 0.99);
            lat.clear();
            b.queue = self.servers[s].in_system;
            b.server_up = self.servers[s].up;
            b.connected = self
                .sc
                .groups
                .iter()
                .zip(&self.counts)
                .filter(|(g, _)| g.server == s && g.downstream_of.is_none())
                .map(|(_, c)| c.connected)
                .sum();
        }
        self.cur_bin += 1;
    }

    fn after_event(&mut self) {
        if let Some((_, to)) = self.sc.surge() {
            let q = self.servers[0].in_system;
            if self.now >= to && self.recovery.is_none() && q <= 10 {
                self.recovery = Some(self.now - to);
            }
            if let Some(m) = self.tail_max.as_mut() {
                *m = (*m).max(q);
            }
        }
    }

    /// Counts in the current bin for a call of group `gi`: the run's (not
    /// for a server's downstream call) and, with several servers, its
    /// server's.
    fn tick(&mut self, gi: usize, f: impl Fn(&mut Bin)) {
        self.tick_in(self.cur_bin, gi, f);
    }

    /// [`Sim::tick`] in the bin of the current time, also before the
    /// first event.
    fn tick_now(&mut self, gi: usize, f: impl Fn(&mut Bin)) {
        self.tick_in((self.now / self.sc.bin.max(1)) as usize, gi, f);
    }

    fn tick_in(&mut self, k: usize, gi: usize, f: impl Fn(&mut Bin)) {
        if !self.quiet {
            if let Some(b) = self.bins.get_mut(k) {
                f(b);
            }
        }
        let server = self.sc.groups[gi].server;
        if let Some(b) = self.server_bins.get_mut(server).and_then(|v| v.get_mut(k)) {
            f(b);
        }
    }

    /// The current bin of server `cur`, with several servers.
    fn server_bin(&mut self) -> Option<&mut Bin> {
        let k = self.cur_bin;
        self.server_bins
            .get_mut(self.cur)
            .and_then(|v| v.get_mut(k))
    }

    /// A call of group `gi` succeeded after `latency`.
    fn bin_latency(&mut self, gi: usize, latency: Time) {
        if !self.quiet {
            self.bin_latencies.push(latency);
        }
        if self.server_bins.is_empty() {
            return;
        }
        self.server_latencies[self.sc.groups[gi].server].push(latency);
    }

    fn finish(mut self) -> RunResult {
        self.advance(self.sc.duration);
        while self.cur_bin < self.bins.len() {
            self.close_bin();
        }
        for c in self.calls.iter().flatten() {
            if c.counted {
                self.counts[c.group as usize].in_flight += 1;
            }
        }
        let (recovered, recovery) = match self.sc.surge() {
            Some((from, to)) => {
                let (ok, at) = metrics::recovery(self.sc, &self.bins, from, to);
                (Some(ok), at)
            }
            None => (None, None),
        };
        let slo = self
            .sc
            .slo
            .map(|s| metrics::slo(&s, &self.counts, &self.bins, self.sc));
        RunResult {
            columns: self.sc.columns(),
            groups: self
                .sc
                .groups
                .iter()
                .zip(self.counts)
                .filter(|(g, _)| g.downstream_of.is_none())
                .map(|(g, c)| (g.name.clone(), g.count, c))
                .collect(),
            servers: self
                .sc
                .servers
                .iter()
                .zip(self.server_counts)
                .map(|(s, c)| (s.name.clone(), c))
                .collect(),
            crashes: self.crashes,
            all_connected: self.all_connected,
            recovered,
            recovery,
            drain: self.recovery,
            wasted_s: self.wasted_ps / 1e12,
            slo,
            bin: self.sc.bin,
            duration: self.sc.duration,
            bins: self.bins,
            server_bins: self.server_bins,
            events: self.events,
            failure: self.fault,
        }
    }

    /// Notes in the trace, if any, what happened to attempt `seq`.
    fn note(&mut self, seq: u64, f: impl FnOnce(&mut AttemptRow)) {
        if let Some(r) = self.trace.as_mut().and_then(|t| t.row(seq)) {
            f(r);
        }
    }

    /// One network leg's delay.
    fn delay(&mut self) -> Time {
        draw_delay(&self.sc.network, &mut self.net)
    }
}

/// The longest drawn duration, 10^6 s: sums of a few stay inside the clock.
const MAX_DRAW: f64 = 1e18;

/// A draw of `d` in picoseconds.
fn draw_delay(d: &Delay, rng: &mut ChaCha8Rng) -> Time {
    match *d {
        Delay::Fixed(t) => t,
        Delay::AbsNormal { mean, sd } => {
            // Box-Muller: one standard normal from two uniforms.
            let u1 = 1.0 - rng.random::<f64>();
            let u2: f64 = rng.random();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (mean as f64 + sd as f64 * z).abs().min(MAX_DRAW).round() as Time
        }
        Delay::Exponential { mean } => {
            let u = 1.0 - rng.random::<f64>();
            (-(mean as f64) * u.ln()).min(MAX_DRAW).round() as Time
        }
    }
}
