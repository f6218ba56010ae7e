//! Small statistics: means, Student-t 95 % confidence half-widths.

/// The 0.975 quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            // Cornish-Fisher expansion around the normal quantile.
            let z: f64 = 1.959_963_984_540_054;
            let n = df as f64;
            z + (z.powi(3) + z) / (4.0 * n)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
                + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z)
                    / (384.0 * n * n * n)
        }
    }
}

/// Mean and 95 % half-width of the mean (NaN half-width for fewer than 2
/// values). NaN values (a metric undefined in a run) are left out.
pub fn mean_ci95(values: &[f64]) -> (f64, f64) {
    let v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t975(n as u64 - 1) * (var / n as f64).sqrt())
}

/// A target precision for a point: replications are added until the 95 %
/// half-width of `metric`'s mean is at most `relative` x |mean|, or `max`
/// replications have run.
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    pub metric: String,
    pub relative: f64,
    pub max: u32,
}

impl Precision {
    /// Whether the runs' values of the metric reach the precision (never
    /// with fewer than two values, or with an undefined mean).
    pub fn met(&self, values: &[f64]) -> bool {
        let (m, h) = mean_ci95(values);
        m.is_finite() && h.is_finite() && h <= self.relative * m.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1), 12.706);
        assert!((t975(60) - 2.000).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3);
        assert!((t975(100_000) - 1.960).abs() < 1e-3);
    }

    #[test]
    fn precision_is_met_only_with_a_narrow_enough_interval() {
        let p = Precision {
            metric: "x".into(),
            relative: 0.02,
            max: 10,
        };
        assert!(!p.met(&[1.0]));
        assert!(p.met(&[1.0, 1.0]));
        // Half-width 12.706 x 0.005 = 0.064 against 2 % of 1.005.
        assert!(!p.met(&[1.0, 1.01]));
        assert!(p.met(&[1.0, 1.001, 1.0, 1.001, 1.0005]));
        assert!(!p.met(&[f64::NAN, f64::NAN]));
    }

    #[test]
    fn mean_and_half_width() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((h - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!(mean_ci95(&[5.0]).1.is_nan());
    }
}
