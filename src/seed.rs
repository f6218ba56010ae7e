//! Seed derivation: every random stream of a run comes from the scenario's one
//! master seed through these functions, never from the OS or a thread.
//!
//! - a sweep point's seed = `derive(master, [fnv1a(axis assignments)])`, so a
//!   point's results do not depend on the other points of the grid;
//! - replication r's seed = `derive(point_seed, [REPLICATION, r])`;
//! - station i's traffic and backoff streams = `derive(run_seed, [TRAFFIC|BACKOFF, i])`,
//!   each a ChaCha8 generator seeded with `seed_from_u64`. Separate streams
//!   mean that two policies compared on one seed see the same arrivals.

/// Tags that keep derived streams apart.
pub const REPLICATION: u64 = 0x5245_504c;
pub const TRAFFIC: u64 = 0x5452_4146;
pub const BACKOFF: u64 = 0x4241_434b;
pub const PLACEMENT: u64 = 0x504c_4143;

/// SplitMix64's output function: a bijective 64-bit mixer.
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed derived from `parent` and a path of tags.
pub fn derive(parent: u64, tags: &[u64]) -> u64 {
    tags.iter()
        .fold(splitmix(parent), |acc, &t| splitmix(acc ^ splitmix(t)))
}

/// FNV-1a over bytes: a stable hash of a sweep point's axis values.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The seed of replication `rep` of a point whose seed is `point_seed`.
pub fn replication_seed(point_seed: u64, rep: u32) -> u64 {
    derive(point_seed, &[REPLICATION, rep as u64])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivations_differ_and_repeat() {
        assert_eq!(derive(1, &[2, 3]), derive(1, &[2, 3]));
        assert_ne!(derive(1, &[2, 3]), derive(1, &[3, 2]));
        assert_ne!(replication_seed(7, 0), replication_seed(7, 1));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }
}
