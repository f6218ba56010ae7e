//! What a service run is given: the server, the network, the client groups
//! and their retry gates, typed and already validated (scenario/service.rs).

use super::stacks::Stack;
use crate::backoff::BackoffSpec;
use crate::engine::Time;

/// A validated service scenario: clients retrying against one server.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    /// The horizon; a run ends earlier when no work is left.
    pub duration: Time,
    /// Calls started before this are neither counted nor are their attempts.
    pub warmup: Time,
    pub replications: u32,
    pub server: Server,
    /// The delay of each network leg, drawn afresh per leg.
    pub network: Delay,
    pub groups: Vec<Group>,
    /// The width of a timeseries bin.
    pub bin: Time,
}

/// The server every client calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    pub kind: ServerKind,
    /// Sent with refusals and error replies: the client waits at least this.
    pub retry_after: Option<Time>,
    /// The HTTP status of a refusal (a full, down or gated queue): 429 or
    /// 503; a flaky server's failure replies carry it too.
    pub refuse_status: u16,
}

/// The status of a connection lost with its attempt (a crash): no reply
/// came, so no HTTP status; the clients see a connection error.
pub const CONNECTION_LOST: u16 = 0;
/// The status of an OCC write after another: 409 Conflict.
pub const CONFLICT: u16 = 409;

/// Which failed attempts a client group retries: HTTP statuses (ranges,
/// so that "5xx" is 500 to 599; a lost connection counts as 5xx) and
/// whether timeouts. A failure it does not list ends the call at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryOn {
    pub statuses: Vec<(u16, u16)>,
    pub timeout: bool,
}

impl RetryOn {
    /// Whether a reply with `status` is retried.
    pub fn status(&self, status: u16) -> bool {
        let status = if status == CONNECTION_LOST {
            500
        } else {
            status
        };
        self.statuses
            .iter()
            .any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ServerKind {
    /// A FIFO queue served one attempt at a time.
    Queue {
        /// Attempts served per second.
        rate: f64,
        service: Service,
        /// Attempts in the system (queued or in service) at which an
        /// arriving attempt is refused at once.
        queue_limit: Option<u64>,
        /// An arrival that would make the attempts in the system exceed this
        /// crashes the server: everything in it is dropped.
        crash_above: Option<u64>,
        /// Down time after a crash.
        restart: Time,
        /// A gate in front of the queue that lets attempts in at a rate.
        accept: Option<Accept>,
    },
    /// Each attempt fails with probability `failure` (retryable) or
    /// `client_error` (not retryable); no capacity limit.
    Flaky { failure: f64, client_error: f64 },
    /// One optimistically locked row: read the version, then write if it is
    /// unchanged.
    Occ,
}

/// An accept-rate gate in front of a queue server (a load balancer's or a
/// listener's connection-rate limit, as nginx's `limit_req` with `burst`):
/// attempts pass at most one per `interval`; one arriving early waits at
/// the gate for its turn while fewer than `burst` wait there, and is
/// refused at once otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accept {
    /// 1 / the accept rate, in picoseconds.
    pub interval: Time,
    /// How many attempts may wait at the gate.
    pub burst: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    Deterministic,
    Exponential,
}

/// A duration drawn per use: fixed, |N(mean, sd)| or exponential.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delay {
    Fixed(Time),
    AbsNormal { mean: Time, sd: Time },
    Exponential { mean: Time },
}

impl Delay {
    /// The mean, in picoseconds (for estimates).
    pub fn mean_ps(&self) -> f64 {
        match *self {
            Delay::Fixed(t) => t as f64,
            Delay::AbsNormal { mean, .. } | Delay::Exponential { mean } => mean as f64,
        }
    }
}

/// A rate that becomes `rate` over [from, to).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surge {
    /// Calls per second during the surge.
    pub rate: f64,
    pub from: Time,
    pub to: Time,
}

/// How a group's clients start calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Calls {
    /// One call per client at `at`.
    Once { at: Time },
    /// Each client is dropped at `at` and reconnects; a crash drops the
    /// connected ones again.
    Reconnect { at: Time },
    /// Each client starts calls as a Poisson process of `rate` per second
    /// until `until`.
    Poisson { rate: f64, until: Time },
    /// One Poisson process of calls, each from a new client.
    Fresh { rate: f64, surge: Option<Surge> },
    /// Each client makes `count` calls one after another from `at`, each
    /// `gap` after the previous one's outcome (a loop over one client
    /// object).
    Sequential { count: u64, gap: Time, at: Time },
    /// Each client starts a job at `at` that is ready after `job`, and polls.
    Poll { at: Time, job: Delay },
}

/// A token bucket for retries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    pub size: f64,
    pub deposit: f64,
    pub cost: f64,
    pub start: f64,
    pub shared: bool,
}

/// A circuit breaker for retries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Breaker {
    /// No retries while the failed share of attempts over the last `window`
    /// (None: since the start) exceeds `threshold`.
    Ratio {
        threshold: f64,
        window: Option<Time>,
        shared: bool,
    },
    /// Opens after `consecutive` failed attempts in a row, for `open`; while
    /// open, calls (`all`) or only retries fail at once; one failure after it
    /// closes reopens it.
    Classic {
        consecutive: u32,
        open: Time,
        all: bool,
        shared: bool,
    },
}

impl Breaker {
    pub fn shared(&self) -> bool {
        match *self {
            Breaker::Ratio { shared, .. } | Breaker::Classic { shared, .. } => shared,
        }
    }
}

/// A group of clients with one way of calling and one retry policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    /// Clients (1 for `fresh`, where each call is a new client).
    pub count: u64,
    pub calls: Calls,
    /// The wait before the next attempt after the n-th failure; a zero
    /// constant for `none`.
    pub backoff: BackoffSpec,
    /// The policy's name as written (`none` included).
    pub policy: String,
    /// What one slot is, for window policies ("4slot", beb's r slots).
    pub slot: Time,
    pub max_retries: Option<u32>,
    pub timeout: Option<Time>,
    pub budget: Option<Budget>,
    pub breaker: Option<Breaker>,
    /// A library's retry stack (it sets the backoff and gates).
    pub stack: Option<Stack>,
    /// The failures retried (None: every retryable one).
    pub retry_on: Option<RetryOn>,
}

impl Scenario {
    pub fn client_count(&self) -> u64 {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// The surge of a `fresh` group, if any.
    pub fn surge(&self) -> Option<Surge> {
        self.groups.iter().find_map(|g| match g.calls {
            Calls::Fresh { surge, .. } => surge,
            _ => None,
        })
    }

    pub fn has_poll(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g.calls, Calls::Poll { .. }))
    }

    /// Calls expected over the run (for estimates).
    pub fn expected_calls(&self) -> f64 {
        let secs = self.duration as f64 / 1e12;
        self.groups
            .iter()
            .map(|g| match g.calls {
                Calls::Once { .. } | Calls::Reconnect { .. } | Calls::Poll { .. } => g.count as f64,
                Calls::Sequential { count, .. } => (g.count * count) as f64,
                Calls::Poisson { rate, until } => {
                    g.count as f64 * rate * (until.min(self.duration) as f64 / 1e12)
                }
                Calls::Fresh { rate, surge } => {
                    rate * secs
                        + surge.map_or(0.0, |s| {
                            s.rate * (s.to.min(self.duration) - s.from.min(self.duration)) as f64
                                / 1e12
                        })
                }
            })
            .sum()
    }
}
