//! Seed derivation: every random stream of a run comes from the scenario's one
//! master seed through these functions, never from the OS or a thread.
//!
//! - a sweep point's seed = `derive(master, [fnv1a(axis assignments)])`, so a
//!   point's results do not depend on the other points of the grid;
//! - replication r's seed = `derive(point_seed, [REPLICATION, r])`;
//! - station i's traffic and backoff streams = `derive(run_seed, [TRAFFIC|BACKOFF, i])`,
//!   each a ChaCha8 generator seeded with `seed_from_u64`. Separate streams
//!   mean that two policies compared on one seed see the same arrivals.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Tags that keep derived streams apart.
pub const REPLICATION: u64 = 0x5245_504c;
pub const TRAFFIC: u64 = 0x5452_4146;
pub const BACKOFF: u64 = 0x4241_434b;
pub const PLACEMENT: u64 = 0x504c_4143;
/// The seed every point of a sweep with common random numbers shares.
pub const COMMON: u64 = 0x434f_4d4d;

/// SplitMix64's output function: a bijective 64-bit mixer.
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed derived from `parent` and a path of tags.
pub fn derive(parent: u64, tags: &[u64]) -> u64 {
    extend(splitmix(parent), tags)
}

/// The seed derived from `parent` along `path` and then `tags`, from
/// `derived = derive(parent, path)`: many seeds that share a path's start
/// mix it once.
pub fn extend(derived: u64, tags: &[u64]) -> u64 {
    tags.iter()
        .fold(derived, |acc, &t| splitmix(acc ^ splitmix(t)))
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

/// A station's random stream: a ChaCha8 generator, boxed (it carries a
/// 256-byte buffer, and keeping it out of line keeps the fields touched on
/// every event close together); or, in crowds, only its seed and position,
/// the generator being rebuilt at that position for each use. Both give the
/// same numbers: the stream is addressed by word position.
pub enum Stream {
    Live(Box<ChaCha8Rng>),
    Parked { seed: u64, word_pos: u64 },
}

impl Stream {
    pub fn new(seed: u64, parked: bool) -> Self {
        if parked {
            Stream::Parked { seed, word_pos: 0 }
        } else {
            Stream::Live(Box::new(ChaCha8Rng::seed_from_u64(seed)))
        }
    }

    /// Starts loading a live generator's state, which the next draw reads
    /// (no effect on the numbers).
    #[inline]
    pub fn prefetch(&self) {
        if let Stream::Live(rng) = self {
            crate::mem::prefetch_lines(&**rng);
        }
    }

    /// Runs `f` with the generator at the stream's position, and moves the
    /// position past what `f` drew.
    pub fn with<R>(&mut self, f: impl FnOnce(&mut ChaCha8Rng) -> R) -> R {
        match self {
            Stream::Live(rng) => f(rng),
            Stream::Parked { seed, word_pos } => draw_parked(*seed, word_pos, f),
        }
    }
}

/// Runs `f` with the ChaCha8 stream of `seed` rebuilt at `word_pos`, and
/// moves `word_pos` past what `f` drew: a parked stream gives the numbers
/// the live one would, since a stream is addressed by word position.
#[inline]
pub fn draw_parked<R>(seed: u64, word_pos: &mut u64, f: impl FnOnce(&mut ChaCha8Rng) -> R) -> R {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_word_pos(u128::from(*word_pos));
    let out = f(&mut rng);
    // A stream would have to draw 2^64 words (2^70 bytes) to pass u64.
    *word_pos = rng.get_word_pos() as u64;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivations_differ_and_repeat() {
        assert_eq!(derive(1, &[2, 3]), derive(1, &[2, 3]));
        assert_ne!(derive(1, &[2, 3]), derive(1, &[3, 2]));
        assert_ne!(replication_seed(7, 0), replication_seed(7, 1));
        assert_eq!(extend(derive(1, &[2]), &[3]), derive(1, &[2, 3]));
        assert_eq!(extend(derive(1, &[]), &[2, 3]), derive(1, &[2, 3]));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }
}

#[cfg(test)]
mod stream_tests {
    use super::Stream;
    use rand::RngExt;

    /// A parked stream, rebuilt at its word position for each use, draws the
    /// same numbers as a live generator, whatever mix of widths is drawn
    /// (u32, u64, f64 and ranges straddle the generator's buffer edges).
    #[test]
    fn parked_stream_draws_what_a_live_one_draws() {
        let (mut live, mut parked) = (Stream::new(42, false), Stream::new(42, true));
        for k in 0..2000u32 {
            let draw = |s: &mut Stream| {
                s.with(|r| match k % 4 {
                    0 => r.random::<u32>() as u64,
                    1 => r.random::<u64>(),
                    2 => r.random::<f64>().to_bits(),
                    _ => r.random_range(0..=k as u64),
                })
            };
            assert_eq!(draw(&mut live), draw(&mut parked), "draw {k}");
        }
    }
}
