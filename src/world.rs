//! The one place that names every world. A world is a model beside the
//! others, sharing the engine, backoff policies, seeds, sweeps, output and
//! charts; what it must provide is here: a validated scenario with a name,
//! seed and replications, a run that cannot panic and stops early only when
//! its clock cannot advance ([`Stalled`]) or a policy the scenario writes
//! gives no valid wait (`RunOutput::failure`), what a run will cost, and
//! its results as named columns ([`crate::results`]). Nothing above this
//! file matches on a world, and worlds never import each other.

use crate::advice::{OfferedLoad, Warning};
use crate::engine::Time;
use crate::ethernet;
use crate::progress::Meter;
use crate::results::{Columns, MemoryNeed, RunOutput, Stalled};
use crate::service;

/// A validated scenario of one world.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    /// Stations on a shared Ethernet bus (`[medium]`, `[[stations]]`).
    Ethernet(ethernet::Scenario),
    /// Clients retrying against one server (`[server]`, `[[clients]]`).
    Service(service::Scenario),
}

impl Scenario {
    pub fn name(&self) -> &str {
        match self {
            Scenario::Ethernet(s) => &s.name,
            Scenario::Service(s) => &s.name,
        }
    }

    /// The master seed every random stream derives from.
    pub fn seed(&self) -> u64 {
        match self {
            Scenario::Ethernet(s) => s.seed,
            Scenario::Service(s) => s.seed,
        }
    }

    pub fn set_seed(&mut self, seed: u64) {
        match self {
            Scenario::Ethernet(s) => s.seed = seed,
            Scenario::Service(s) => s.seed = seed,
        }
    }

    /// The simulated time of a run, and the warmup at its start that
    /// statistics leave out.
    pub fn duration(&self) -> Time {
        match self {
            Scenario::Ethernet(s) => s.duration,
            Scenario::Service(s) => s.duration,
        }
    }

    pub fn warmup(&self) -> Time {
        match self {
            Scenario::Ethernet(s) => s.warmup,
            Scenario::Service(s) => s.warmup,
        }
    }

    /// What a run simulates, in a few words ("50 stations").
    pub fn size(&self) -> String {
        match self {
            Scenario::Ethernet(s) => format!("{} stations", s.station_count()),
            Scenario::Service(s) => format!("{} clients", s.client_count()),
        }
    }

    pub fn replications(&self) -> u32 {
        match self {
            Scenario::Ethernet(s) => s.replications,
            Scenario::Service(s) => s.replications,
        }
    }

    /// The most replications a point may run (see [`Scenario::precision`]).
    pub fn max_replications(&self) -> u32 {
        match self {
            Scenario::Ethernet(s) => s.max_replications(),
            Scenario::Service(s) => s.replications,
        }
    }

    /// A target precision: replications are added, from `replications()`
    /// up to `max_replications()`, until it is reached.
    pub fn precision(&self) -> Option<&crate::stats::Precision> {
        match self {
            Scenario::Ethernet(s) => s.precision.as_ref(),
            Scenario::Service(_) => None,
        }
    }

    /// The metric columns and tables of this world's runs.
    pub fn columns(&self) -> Columns {
        match self {
            Scenario::Ethernet(s) => s.columns(),
            Scenario::Service(s) => s.columns(),
        }
    }

    /// Runs one replication with the given run seed: its results, or
    /// [`Stalled`] when its clock cannot advance (a bus run always
    /// advances: every transmission, jam and gap takes time).
    pub fn run(&self, run_seed: u64) -> Result<RunOutput, Stalled> {
        self.run_metered(run_seed, &mut Meter::none())
    }

    /// [`Scenario::run`], reporting to `meter` how far it has got.
    pub fn run_metered(&self, run_seed: u64, meter: &mut Meter) -> Result<RunOutput, Stalled> {
        match self {
            Scenario::Ethernet(s) => Ok(ethernet::run_metered(s, run_seed, meter).output()),
            Scenario::Service(s) => service::run_metered(s, run_seed, meter).map(|r| r.output()),
        }
    }

    /// An upper estimate of the memory one run needs, and its output.
    pub fn memory_need(&self) -> MemoryNeed {
        match self {
            Scenario::Ethernet(s) => s.memory_need(),
            Scenario::Service(s) => s.memory_need(),
        }
    }

    /// What drives a run's memory most, for a refusal to name: the key to
    /// change, what it is ("10000000 stations", "10000001 timeseries
    /// bins (...)"), and what to do.
    pub fn memory_driver(&self) -> (&'static str, String, &'static str) {
        match self {
            Scenario::Ethernet(s) => s.memory_driver(),
            Scenario::Service(s) => s.memory_driver(),
        }
    }

    /// The bytes the scenario itself holds once read (a sweep holds one
    /// per point).
    pub fn held_bytes(&self) -> f64 {
        match self {
            Scenario::Ethernet(s) => s.held_bytes(),
            Scenario::Service(s) => s.held_bytes(),
        }
    }

    /// An upper estimate of the memory all replications of this scenario
    /// need with up to `jobs` runs at once, in bytes (see
    /// [`MemoryNeed::at_once`]).
    pub fn memory_estimate_bytes(&self, jobs: usize) -> f64 {
        MemoryNeed::at_once(&[(self.memory_need(), self.max_replications())], jobs)
    }

    /// A rough relative cost of all replications, for scheduling only.
    pub fn work_estimate(&self) -> f64 {
        match self {
            Scenario::Ethernet(s) => s.max_replications() as f64 * s.work_estimate(),
            Scenario::Service(s) => s.replications as f64 * s.work_estimate(),
        }
    }

    /// What the scenario will show that its author may not mean (see
    /// [`crate::advice`]); empty when nothing stands out.
    pub fn warnings(&self) -> Vec<Warning> {
        match self {
            Scenario::Ethernet(s) => s.warnings(),
            Scenario::Service(s) => s.warnings(),
        }
    }

    /// Each group's offered load, as information, where the world has a
    /// capacity to measure it against (the bus's bit rate).
    pub fn offered_load(&self) -> Option<OfferedLoad> {
        match self {
            Scenario::Ethernet(s) => Some(s.offered_load()),
            Scenario::Service(s) => s.offered_load(),
        }
    }

    /// The scenario's surge (from, to) in seconds, where its world has one.
    pub fn surge_s(&self) -> Option<(f64, f64)> {
        match self {
            Scenario::Ethernet(_) => None,
            Scenario::Service(s) => s
                .surge()
                .map(|(from, to)| (from as f64 / 1e12, to as f64 / 1e12)),
        }
    }

    /// Each group's backoff policy with the group's key and name and its
    /// slot (picoseconds; 0 where it has none).
    pub fn policies(&self) -> Vec<(String, String, &crate::backoff::BackoffSpec, Time)> {
        match self {
            Scenario::Ethernet(s) => s
                .groups
                .iter()
                .enumerate()
                .map(|(k, g)| {
                    (
                        format!("stations.{k}"),
                        g.name.clone(),
                        &g.backoff,
                        s.medium.slot_ps,
                    )
                })
                .collect(),
            Scenario::Service(s) => s
                .groups
                .iter()
                .enumerate()
                .map(|(k, g)| (format!("clients.{k}"), g.name.clone(), &g.backoff, g.slot))
                .collect(),
        }
    }

    /// The bus scenario, taken out of the world (see [`Scenario::ethernet`]).
    pub fn into_ethernet(self) -> Option<ethernet::Scenario> {
        match self {
            Scenario::Ethernet(s) => Some(s),
            Scenario::Service(_) => None,
        }
    }

    /// The bus scenario, for what only the bus world has (traces, diagrams,
    /// lessons); None for another world.
    pub fn ethernet(&self) -> Option<&ethernet::Scenario> {
        match self {
            Scenario::Ethernet(s) => Some(s),
            Scenario::Service(_) => None,
        }
    }
}
