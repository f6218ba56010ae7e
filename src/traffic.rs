//! Traffic: when frames arrive at a station (arrival processes) and how long
//! they are (frame-size laws). Pure model: sampling only, no parsing.

use crate::engine::Time;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Smallest and largest MAC frame of standard 802.3, header and FCS included.
pub const MIN_FRAME_BYTES: u32 = 64;
pub const MAX_FRAME_BYTES: u32 = 1518;

/// How frames arrive at each station of a group.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// A frame is always waiting: the next one arrives when the last leaves.
    Saturated,
    /// Exponential interarrival times with `rate` frames per second per station.
    Poisson { rate: f64 },
    /// One frame every `interval`; the first at a uniform random phase in
    /// `[0, interval)` unless `phase` is given.
    Periodic { interval: Time, phase: Option<Time> },
    /// `frames` frames per station at instant `at`: a synchronised start.
    Burst { frames: u32, at: Time },
    /// Alternating on and off periods with Pareto-distributed lengths (shape
    /// `alpha`, means `mean_on`, `mean_off`); Poisson arrivals at `rate` while on.
    /// Aggregated, such sources give self-similar traffic.
    OnOff {
        rate: f64,
        mean_on: Time,
        mean_off: Time,
        alpha: f64,
    },
}

impl Arrivals {
    pub fn kind(&self) -> &'static str {
        match self {
            Arrivals::Saturated => "saturated",
            Arrivals::Poisson { .. } => "poisson",
            Arrivals::Periodic { .. } => "periodic",
            Arrivals::Burst { .. } => "burst",
            Arrivals::OnOff { .. } => "on-off",
        }
    }
}

/// The law of frame sizes, in bytes (MAC frame: header and FCS included).
#[derive(Clone, Debug, PartialEq)]
pub enum FrameLaw {
    Fixed(u32),
    /// Uniform on the whole bytes `min..=max`.
    Uniform {
        min: u32,
        max: u32,
    },
    /// Sizes drawn with the given weights, e.g. IMIX 64/594/1518 at 7:4:1.
    Mix {
        sizes: Vec<u32>,
        weights: Vec<f64>,
    },
}

impl FrameLaw {
    /// The bytes its sizes and weights hold beside the law itself.
    pub fn held_bytes(&self) -> usize {
        match self {
            FrameLaw::Mix { sizes, weights } => {
                sizes.len() * std::mem::size_of::<u32>()
                    + weights.len() * std::mem::size_of::<f64>()
            }
            _ => 0,
        }
    }

    pub fn min_bytes(&self) -> u32 {
        match self {
            FrameLaw::Fixed(b) => *b,
            FrameLaw::Uniform { min, .. } => *min,
            FrameLaw::Mix { sizes, .. } => sizes.iter().copied().min().unwrap_or(0),
        }
    }

    pub fn max_bytes(&self) -> u32 {
        match self {
            FrameLaw::Fixed(b) => *b,
            FrameLaw::Uniform { max, .. } => *max,
            FrameLaw::Mix { sizes, .. } => sizes.iter().copied().max().unwrap_or(0),
        }
    }

    /// The mean frame size in bits.
    pub fn mean_bits(&self) -> f64 {
        match self {
            FrameLaw::Fixed(b) => 8.0 * *b as f64,
            FrameLaw::Uniform { min, max } => 4.0 * (*min as f64 + *max as f64),
            FrameLaw::Mix { sizes, weights } => {
                let total: f64 = weights.iter().sum();
                sizes
                    .iter()
                    .zip(weights)
                    .map(|(s, w)| 8.0 * *s as f64 * w / total)
                    .sum()
            }
        }
    }

    /// Draws one frame size in bytes.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            FrameLaw::Fixed(b) => *b,
            FrameLaw::Uniform { min, max } => rng.random_range(*min..=*max),
            FrameLaw::Mix { sizes, weights } => {
                let total: f64 = weights.iter().sum();
                let mut u = rng.random::<f64>() * total;
                for (s, w) in sizes.iter().zip(weights) {
                    if u < *w {
                        return *s;
                    }
                    u -= w;
                }
                *sizes.last().unwrap_or(&MIN_FRAME_BYTES)
            }
        }
    }
}

/// An exponential variate with the given mean, in picoseconds (at least 1).
pub fn exponential_ps(rng: &mut ChaCha8Rng, mean_ps: f64) -> Time {
    // 1 - U lies in (0, 1], so the logarithm is finite.
    let u: f64 = 1.0 - rng.random::<f64>();
    let v = -u.ln() * mean_ps;
    (v.round() as Time).max(1)
}

/// A Pareto variate with shape `alpha` (> 1) and the given mean, in picoseconds.
pub fn pareto_ps(rng: &mut ChaCha8Rng, alpha: f64, mean_ps: f64) -> Time {
    let xm = mean_ps * (alpha - 1.0) / alpha;
    let u: f64 = 1.0 - rng.random::<f64>();
    let v = xm / u.powf(1.0 / alpha);
    (v.min(1e18).round() as Time).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn mix_mean_and_sampling_follow_weights() {
        let imix = FrameLaw::Mix {
            sizes: vec![64, 594, 1518],
            weights: vec![7.0, 4.0, 1.0],
        };
        let mean = imix.mean_bits() / 8.0;
        assert!((mean - (7.0 * 64.0 + 4.0 * 594.0 + 1518.0) / 12.0).abs() < 1e-9);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 120_000;
        let small = (0..n).filter(|_| imix.sample(&mut rng) == 64).count();
        // Binomial(n, 7/12): 5 standard deviations.
        let p = 7.0 / 12.0;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!((small as f64 - n as f64 * p).abs() < 5.0 * sd);
    }

    #[test]
    fn exponential_has_the_right_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 100_000;
        let mean = 1e6;
        let s: f64 = (0..n).map(|_| exponential_ps(&mut rng, mean) as f64).sum();
        // Standard error of the mean is mean / sqrt(n); allow 5 of them.
        assert!((s / n as f64 - mean).abs() < 5.0 * mean / (n as f64).sqrt());
    }
}
