//! The two-station BEB race's exact law (lesson 3 is a lesson file; lesson
//! 9 reads this law).

/// P(C = c): the two stations' contention lasts exactly c collisions. After
/// the j-th collision they collide again with probability 2^-min(j, 10).
pub(super) fn contention_pmf(max: u32) -> Vec<f64> {
    let mut out = Vec::new();
    let mut again = 1.0; // P(C >= c)
    for c in 1..=max {
        let p = 0.5f64.powi(c.min(10) as i32);
        out.push(again * (1.0 - p));
        again *= p;
    }
    out
}

/// The mean and variance of C over `pmf` (P(C = 1), P(C = 2), ...).
pub(super) fn mean_and_variance(pmf: &[f64]) -> (f64, f64) {
    let mean: f64 = pmf
        .iter()
        .enumerate()
        .map(|(k, p)| (k + 1) as f64 * p)
        .sum();
    let var: f64 = pmf
        .iter()
        .enumerate()
        .map(|(k, p)| ((k + 1) as f64 - mean).powi(2) * p)
        .sum();
    (mean, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_probabilities_match_the_textbook() {
        let p = contention_pmf(16);
        assert!((p[0] - 0.5).abs() < 1e-12);
        assert!((p[1] - 0.375).abs() < 1e-12);
        assert!((p[2] - 7.0 / 64.0).abs() < 1e-12);
        assert!((p[3] - 15.0 / 1024.0).abs() < 1e-12);
        let (mean, _) = mean_and_variance(&p);
        assert!((mean - 1.6416).abs() < 1e-4, "{mean}");
    }
}
