//! Running points: each point is one scenario run for all its replications.
//! This is the only user of rayon; results come back in point order, so the
//! output bytes do not depend on the number of threads.

use crate::scenario::Scenario;
use crate::seed;
use crate::sim::{self, RunResult};
use rayon::prelude::*;

/// One point of a sweep: its axis assignments (dotted path, value as text),
/// the scenario they give, and its seed.
#[derive(Clone, Debug)]
pub struct Point {
    pub axes: Vec<(String, String)>,
    pub scenario: Scenario,
    pub seed: u64,
}

impl Point {
    /// A point whose seed derives from the master seed and its own axis
    /// values only, so adding values to a grid leaves other points unchanged.
    pub fn new(axes: Vec<(String, String)>, scenario: Scenario) -> Self {
        let key: String = axes.iter().map(|(k, v)| format!("{k}={v};")).collect();
        let seed = seed::derive(scenario.seed, &[seed::fnv1a(key.as_bytes())]);
        Point {
            axes,
            scenario,
            seed,
        }
    }

    /// The seeds of this point's replications.
    pub fn replication_seeds(&self) -> Vec<u64> {
        (0..self.scenario.replications)
            .map(|r| seed::replication_seed(self.seed, r))
            .collect()
    }
}

/// Runs every replication of every point on the current rayon pool, calling
/// `done` after each finished run; results are in point, then replication order.
pub fn run_points(points: &[Point], done: &(dyn Fn() + Sync)) -> Vec<Vec<RunResult>> {
    let jobs: Vec<(usize, u64)> = points
        .iter()
        .enumerate()
        .flat_map(|(p, pt)| pt.replication_seeds().into_iter().map(move |s| (p, s)))
        .collect();
    let results: Vec<(usize, RunResult)> = jobs
        .par_iter()
        .map(|&(p, s)| {
            let r = sim::run(&points[p].scenario, s);
            done();
            (p, r)
        })
        .collect();
    let mut out: Vec<Vec<RunResult>> = points.iter().map(|_| Vec::new()).collect();
    for (p, r) in results {
        out[p].push(r);
    }
    out
}
