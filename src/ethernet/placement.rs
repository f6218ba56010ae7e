//! Where stations sit on the bus: explicit positions, evenly spread, or
//! uniform at random per replication.

use crate::ethernet::{Placement, Scenario};
use crate::seed;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
