//! The one place that names every world. A world is a model beside the
//! others, sharing the engine, backoff policies, seeds, sweeps, output and
//! charts; what it must provide is here: a validated scenario with a name,
//! seed and replications, a run that cannot fail, what a run will cost, and
//! its results as named columns ([`crate::results`]). Nothing above this
//! file matches on a world, and worlds never import each other.

use crate::advice::{OfferedLoad, Warning};
use crate::engine::Time;
use crate::ethernet;
use crate::results::{Columns, RunOutput};

/// A validated scenario of one world.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    /// Stations on a shared Ethernet bus (`[medium]`, `[[stations]]`).
    Ethernet(ethernet::Scenario),
}

impl Scenario {
    pub fn name(&self) -> &str {
        match self {
            Scenario::Ethernet(s) => &s.name,
        }
    }

    /// The master seed every random stream derives from.
    pub fn seed(&self) -> u64 {
        match self {
            Scenario::Ethernet(s) => s.seed,
        }
    }

    pub fn set_seed(&mut self, seed: u64) {
        match self {
            Scenario::Ethernet(s) => s.seed = seed,
        }
    }

    /// The simulated time of a run, and the warmup at its start that
    /// statistics leave out.
    pub fn duration(&self) -> Time {
        match self {
            Scenario::Ethernet(s) => s.duration,
        }
    }

    pub fn warmup(&self) -> Time {
        match self {
            Scenario::Ethernet(s) => s.warmup,
        }
    }

    /// What a run simulates, in a few words ("50 stations").
    pub fn size(&self) -> String {
        match self {
            Scenario::Ethernet(s) => format!("{} stations", s.station_count()),
        }
    }

    pub fn replications(&self) -> u32 {
        match self {
            Scenario::Ethernet(s) => s.replications,
        }
    }

    /// The most replications a point may run (see [`Scenario::precision`]).
    pub fn max_replications(&self) -> u32 {
        match self {
            Scenario::Ethernet(s) => s.max_replications(),
        }
    }

    /// A target precision: replications are added, from `replications()`
    /// up to `max_replications()`, until it is reached.
    pub fn precision(&self) -> Option<&crate::stats::Precision> {
        match self {
            Scenario::Ethernet(s) => s.precision.as_ref(),
        }
    }

    /// The metric columns and tables of this world's runs.
    pub fn columns(&self) -> Columns {
        match self {
            Scenario::Ethernet(s) => s.columns(),
        }
    }

    /// Runs one replication with the given run seed.
    pub fn run(&self, run_seed: u64) -> RunOutput {
        match self {
            Scenario::Ethernet(s) => ethernet::run(s, run_seed).output(),
        }
    }

    /// An upper estimate of the memory one run and the kept results of all
    /// replications need, in bytes.
    pub fn memory_estimate_bytes(&self) -> f64 {
        match self {
            Scenario::Ethernet(s) => s.memory_estimate_bytes(),
        }
    }

    /// A rough relative cost of all replications, for scheduling only.
    pub fn work_estimate(&self) -> f64 {
        match self {
            Scenario::Ethernet(s) => s.max_replications() as f64 * s.work_estimate(),
        }
    }

    /// What the scenario will show that its author may not mean (see
    /// [`crate::advice`]); empty when nothing stands out.
    pub fn warnings(&self) -> Vec<Warning> {
        match self {
            Scenario::Ethernet(s) => s.warnings(),
        }
    }

    /// Each group's offered load, as information.
    pub fn offered_load(&self) -> OfferedLoad {
        match self {
            Scenario::Ethernet(s) => s.offered_load(),
        }
    }

    /// The bus scenario, taken out of the world (see [`Scenario::ethernet`]).
    pub fn into_ethernet(self) -> Option<ethernet::Scenario> {
        match self {
            Scenario::Ethernet(s) => Some(s),
        }
    }

    /// The bus scenario, for what only the bus world has (traces, diagrams,
    /// lessons); None for another world.
    pub fn ethernet(&self) -> Option<&ethernet::Scenario> {
        match self {
            Scenario::Ethernet(s) => Some(s),
        }
    }
}
