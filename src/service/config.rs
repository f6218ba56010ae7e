//! What a service run is given: the server, the network, the client groups
//! and their retry gates, typed and already validated (scenario/service.rs).

use super::stacks::Stack;
use super::status::CONNECTION_LOST;
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
    /// The servers, the first called by default; `[server]` is one
    /// unnamed server.
    pub servers: Vec<Server>,
    /// The delay of each network leg, drawn afresh per leg.
    pub network: Delay,
    pub groups: Vec<Group>,
    /// The width of a timeseries bin.
    pub bin: Time,
    /// How recovery after a load profile's disturbance is judged.
    pub recovery: Recovery,
    /// A latency objective, if any.
    pub slo: Option<Slo>,
}

/// Recovery after a disturbance: the first time goodput stays within
/// `tolerance` of the undisturbed rate for `window`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recovery {
    pub tolerance: f64,
    pub window: Time,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery {
            tolerance: 0.1,
            window: 5_000_000_000_000,
        }
    }
}

/// A latency objective: a share `target` of calls succeeds within `latency`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slo {
    pub latency: Time,
    pub target: f64,
}

/// A server the clients (or other servers) call.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    /// Its name in servers.csv ("server" for `[server]`).
    pub name: String,
    /// The group in `Scenario::groups` (a hidden one) holding the client
    /// settings of its calls to another server: every attempt it serves
    /// makes such a call and succeeds only if that call does.
    pub downstream: Option<usize>,
    pub kind: ServerKind,
    /// Sent with refusals and error replies: the client waits at least this.
    pub retry_after: Option<RetryAfter>,
    /// The HTTP status of a refusal (a full, down or gated queue): 429 or
    /// 503; a flaky server's failure replies carry it too.
    pub refuse_status: u16,
}

/// What a server's Retry-After says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// A fixed value.
    Fixed(Time),
    /// The queue's drain time at the service rate (the attempts in the
    /// system times the mean service time over the workers), at most `cap`.
    Backlog { cap: Time },
}

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
    /// A queue served by `workers` in parallel.
    Queue {
        /// Attempts one worker serves per second (1 / the mean service time).
        rate: f64,
        service: Service,
        /// Attempts served at once.
        workers: u32,
        /// Which waiting attempt a free worker takes: the newest (LIFO) or
        /// the oldest (FIFO).
        lifo: bool,
        /// A worker drops unserved an attempt whose client's timeout has
        /// passed.
        drop_expired: bool,
        /// Server time a refusal of a full queue takes from a worker.
        reject_cost: Time,
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

/// The law of a queue server's service time.
#[derive(Clone, Debug, PartialEq)]
pub enum Service {
    /// Always `mean` picoseconds.
    Deterministic { mean: f64 },
    /// Exponential of mean `mean` picoseconds.
    Exponential { mean: f64 },
    /// exp(N(mu, sigma^2)) seconds.
    Lognormal { mu: f64, sigma: f64 },
    /// Pareto: `scale` picoseconds (the least value) times U^(-1/shape).
    Pareto { scale: f64, shape: f64 },
    /// Drawn from a file's values or histogram.
    Empirical(std::sync::Arc<Empirical>),
}

/// Service times read from a file: values drawn with equal probability,
/// or a histogram's buckets drawn by their counts and uniformly within.
#[derive(Clone, Debug, PartialEq)]
pub enum Empirical {
    /// The values, in picoseconds, sorted.
    Values(Vec<f64>),
    /// Buckets: (lower bound, upper bound, cumulative probability at the
    /// upper bound), in picoseconds, in order; the last ends at 1.
    Histogram(Vec<(f64, f64, f64)>),
}

impl Empirical {
    /// The mean, in picoseconds.
    pub fn mean_ps(&self) -> f64 {
        match self {
            Empirical::Values(v) => v.iter().sum::<f64>() / v.len().max(1) as f64,
            Empirical::Histogram(b) => {
                let mut prev = 0.0;
                let mut m = 0.0;
                for &(lo, hi, c) in b {
                    m += (c - prev) * (lo + hi) / 2.0;
                    prev = c;
                }
                m
            }
        }
    }

    /// The value at quantile `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        match self {
            Empirical::Values(v) => v[((u * v.len() as f64) as usize).min(v.len() - 1)],
            Empirical::Histogram(b) => {
                let k = b.partition_point(|&(_, _, c)| c <= u).min(b.len() - 1);
                let (lo, hi, c) = b[k];
                let below = if k == 0 { 0.0 } else { b[k - 1].2 };
                let share = if c > below {
                    (u - below) / (c - below)
                } else {
                    0.0
                };
                lo + (hi - lo) * share.clamp(0.0, 1.0)
            }
        }
    }
}

impl Service {
    /// The mean service time, in picoseconds (infinite for a Pareto law of
    /// shape at most 1).
    pub fn mean_ps(&self) -> f64 {
        match self {
            Service::Deterministic { mean } | Service::Exponential { mean } => *mean,
            Service::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp() * 1e12,
            Service::Pareto { scale, shape } => {
                if *shape > 1.0 {
                    scale * shape / (shape - 1.0)
                } else {
                    f64::INFINITY
                }
            }
            Service::Empirical(e) => e.mean_ps(),
        }
    }

    /// The second moment E[S^2], in ps^2 (for Pollaczek-Khinchine).
    pub fn second_moment_ps2(&self) -> f64 {
        match self {
            Service::Deterministic { mean } => mean * mean,
            Service::Exponential { mean } => 2.0 * mean * mean,
            Service::Lognormal { mu, sigma } => (2.0 * mu + 2.0 * sigma * sigma).exp() * 1e24,
            Service::Pareto { scale, shape } => {
                if *shape > 2.0 {
                    scale * scale * shape / (shape - 2.0)
                } else {
                    f64::INFINITY
                }
            }
            Service::Empirical(e) => match &**e {
                Empirical::Values(v) => v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64,
                Empirical::Histogram(b) => {
                    let mut prev = 0.0;
                    let mut m = 0.0;
                    for &(lo, hi, c) in b {
                        m += (c - prev) * (lo * lo + lo * hi + hi * hi) / 3.0;
                        prev = c;
                    }
                    m
                }
            },
        }
    }
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

/// A stretch of a load profile: over [from, to) a group's calls come at
/// `rate` per second (per client for `poisson`) instead of its base rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surge {
    /// Calls per second during the stretch.
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
    Fresh { rate: f64 },
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
    /// open, calls (`all`) or only retries fail at once. Then half open: at
    /// most `probes` attempts go through; a failure among them reopens it,
    /// `probes` successes close it.
    Classic {
        consecutive: u32,
        open: Time,
        all: bool,
        shared: bool,
        probes: u32,
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
    /// The per-attempt timeout: the client stops waiting and may retry.
    pub timeout: Option<Time>,
    /// Whether a timed-out attempt is cancelled at the server (the cancel
    /// reaches it one network leg later).
    pub cancel: bool,
    /// The load profile of a `poisson` or `fresh` group: stretches in time
    /// order, not overlapping, each with its rate.
    pub profile: Vec<Surge>,
    pub budget: Option<Budget>,
    pub breaker: Option<Breaker>,
    /// A library's retry stack (it sets the backoff and gates).
    pub stack: Option<Stack>,
    /// The failures retried (None: every retryable one).
    pub retry_on: Option<RetryOn>,
    /// The server its calls go to.
    pub server: usize,
    /// For a server's downstream calls (a hidden group, not in groups.csv
    /// nor the run's totals): that server.
    pub downstream_of: Option<usize>,
    /// A downstream call's `deadline = "propagate"`: it ends when the
    /// attempt it is made for is given up by its caller.
    pub propagate: bool,
}

impl Group {
    /// The most attempts per call its gates allow: its attempt limit
    /// (`max_retries` + 1, a stack's `max_attempts`), or with a retry
    /// budget 1 + deposit / cost if less: over many calls the budget
    /// lets through at most that many attempts per call (its `start`
    /// tokens allow a burst beyond it at first). Infinite with neither.
    pub fn attempts_bound(&self) -> f64 {
        let limit = self
            .max_retries
            .map_or(f64::INFINITY, |m| f64::from(m) + 1.0);
        match self.budget {
            Some(b) => limit.min(1.0 + b.deposit / b.cost),
            None => limit,
        }
    }

    /// Calls its profile adds over [0, end) beyond the base `rate` (per
    /// client for `poisson`).
    pub fn extra_calls(&self, rate: f64, end: Time) -> f64 {
        self.profile
            .iter()
            .map(|s| (s.rate - rate) * (s.to.min(end) - s.from.min(end)) as f64 / 1e12)
            .sum()
    }

    /// The highest rate of its profile, or `rate` (per client for `poisson`).
    pub fn peak_rate(&self, rate: f64) -> f64 {
        self.profile.iter().map(|s| s.rate).fold(rate, f64::max)
    }
}

impl Scenario {
    /// The first server (the one `[server]` gives).
    pub fn server(&self) -> &Server {
        &self.servers[0]
    }

    /// Where group `gi` is written: `clients.N`, or a server's
    /// `servers.N.downstream`.
    pub fn group_path(&self, gi: usize) -> String {
        match self.groups[gi].downstream_of {
            Some(s) => format!("servers.{s}.downstream"),
            None => format!("clients.{gi}"),
        }
    }

    /// The client groups of the scenario, without servers' downstream ones.
    pub fn client_groups(&self) -> impl Iterator<Item = &Group> {
        self.groups.iter().filter(|g| g.downstream_of.is_none())
    }

    /// Attempts at each server per top-level call at most: the product of
    /// the layers' bounds along the path to it (see [`Group::attempts_bound`]);
    /// infinite where a layer has none.
    pub fn worst_amplification(&self) -> Vec<f64> {
        let limit = Group::attempts_bound;
        let mut amp = vec![0.0f64; self.servers.len()];
        for g in self.client_groups() {
            let mut a = limit(g);
            let mut s = g.server;
            // Servers form no cycle (checked when read): at most one pass
            // per server.
            for _ in 0..self.servers.len() {
                amp[s] = amp[s].max(a);
                match self.servers[s].downstream {
                    Some(d) => {
                        a *= limit(&self.groups[d]);
                        s = self.groups[d].server;
                    }
                    None => break,
                }
            }
        }
        amp
    }

    pub fn client_count(&self) -> u64 {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// The disturbance of the load profiles, if any: from the first
    /// stretch's start to the last one's end.
    pub fn surge(&self) -> Option<(Time, Time)> {
        let stretches = self.groups.iter().flat_map(|g| g.profile.iter());
        let from = stretches.clone().map(|s| s.from).min()?;
        let to = stretches.map(|s| s.to).max()?;
        Some((from, to))
    }

    pub fn has_poll(&self) -> bool {
        self.groups
            .iter()
            .any(|g| matches!(g.calls, Calls::Poll { .. }))
    }

    /// Calls per second offered outside the load profiles at time `at`.
    pub fn base_call_rate(&self, at: Time) -> f64 {
        self.groups
            .iter()
            .map(|g| match g.calls {
                Calls::Poisson { rate, until } if at < until => rate * g.count as f64,
                Calls::Fresh { rate } => rate,
                _ => 0.0,
            })
            .sum()
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
                    let end = until.min(self.duration);
                    g.count as f64 * (rate * (end as f64 / 1e12) + g.extra_calls(rate, end))
                }
                Calls::Fresh { rate } => rate * secs + g.extra_calls(rate, self.duration),
            })
            .sum()
    }
}
