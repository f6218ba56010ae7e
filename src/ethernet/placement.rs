//! Where stations sit on the bus: explicit positions, evenly spread (groups
//! in their own stretches, or interleaved), or uniform at random per
//! replication.

use crate::ethernet::{Placement, Scenario, Topology};
use crate::seed;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Station positions in metres, as the scenario places them for this run:
/// along the bus, along a chain of segments (each group on its segment, as
/// its positions say or evenly from end to end), or on a hub each
/// station's distance from the hub (its cable).
pub fn positions(sc: &Scenario, run_seed: u64) -> Vec<f64> {
    match &sc.medium.topology {
        Topology::Bus => on_bus(sc, run_seed),
        Topology::Hub { cable_m, .. } => sc
            .groups
            .iter()
            .flat_map(|g| std::iter::repeat_n(g.cable_m.unwrap_or(*cable_m), g.count))
            .collect(),
        Topology::Segments { lengths_m, .. } => {
            let mut out = Vec::with_capacity(sc.station_count());
            for g in &sc.groups {
                let before: f64 = lengths_m[..g.segment].iter().sum();
                let l = lengths_m[g.segment];
                for k in 0..g.count {
                    let x = match &g.positions {
                        Some(p) => p[k],
                        None if g.count > 1 => l * k as f64 / (g.count - 1) as f64,
                        None => 0.0,
                    };
                    out.push(before + x);
                }
            }
            out
        }
    }
}

fn on_bus(sc: &Scenario, run_seed: u64) -> Vec<f64> {
    let n = sc.station_count();
    let l = sc.medium.length_m;
    let mut rng = ChaCha8Rng::seed_from_u64(seed::derive(run_seed, &[seed::PLACEMENT]));
    let slot = match sc.medium.placement {
        Placement::Interleaved => interleaved_slots(sc),
        _ => (0..n).collect(),
    };
    let mut out = Vec::with_capacity(n);
    for g in &sc.groups {
        for k in 0..g.count {
            let i = out.len();
            let x = match (&g.positions, sc.medium.placement) {
                (Some(p), _) => p[k],
                (None, Placement::Random) => rng.random::<f64>() * l,
                (None, _) if n > 1 => l * slot[i] as f64 / (n - 1) as f64,
                (None, _) => 0.0,
            };
            out.push(x);
        }
    }
    out
}

/// Each station's slot (0 to n - 1, in position order) when groups
/// alternate: station k of a group of c stations stands at the fraction
/// (k + 1/2) / c of the way through its group, and slots go in the order of
/// those fractions (ties by group), so every group is spread over the whole
/// bus in proportion to its size.
fn interleaved_slots(sc: &Scenario) -> Vec<usize> {
    let mut keys: Vec<(u64, usize, usize)> = Vec::with_capacity(sc.station_count());
    let mut i = 0;
    for (gi, g) in sc.groups.iter().enumerate() {
        for k in 0..g.count {
            // (2k + 1) / 2c compared exactly: scaled by the product of the
            // counts would overflow, so compare as a rational via u128 below.
            keys.push(((2 * k + 1) as u64, gi, i));
            i += 1;
        }
    }
    let count = |gi: usize| 2 * sc.groups[gi].count as u128;
    keys.sort_by(|a, b| {
        (a.0 as u128 * count(b.1))
            .cmp(&(b.0 as u128 * count(a.1)))
            .then(a.1.cmp(&b.1))
    });
    let mut slot = vec![0; keys.len()];
    for (s, &(_, _, i)) in keys.iter().enumerate() {
        slot[i] = s;
    }
    slot
}
