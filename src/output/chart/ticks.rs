//! Axis ranges and ticks: on the data's own values when there are few of
//! them, else at round steps (1, 2, 5 x 10^k) or decades; labels in their
//! shortest form, thinned so that no two overlap.

use super::Scale;

/// With at most this many distinct x values, the ticks sit on the values.
pub const DATA_TICKS: usize = 12;

/// An axis's span of values and how they map to positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    /// Where `v` falls, as a fraction of the way from `lo` to `hi`.
    pub fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        }
    }
}

/// The span of numbers `lo..=hi` widened by `pad` of itself on each side
/// (on a log axis, in logarithms); a single value gets room around it.
pub fn padded(scale: Scale, lo: f64, hi: f64, pad: f64) -> Range {
    match scale {
        Scale::Linear => {
            let (lo, hi) = if hi > lo {
                (lo, hi)
            } else {
                let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                (lo - d, hi + d)
            };
            let m = (hi - lo) * pad;
            Range {
                scale,
                lo: lo - m,
                hi: hi + m,
            }
        }
        Scale::Log => {
            let (a, b) = (lo.ln(), hi.ln());
            let m = ((b - a) * pad).max(0.1);
            Range {
                scale,
                lo: (a - m).exp(),
                hi: (b + m).exp(),
            }
        }
    }
}

/// The round step (1, 2 or 5 x 10^k) that cuts `span` into at most `max`
/// parts.
pub fn round_step(span: f64, max: usize) -> f64 {
    let max = max.max(1) as f64;
    let raw = span / max;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= max + 1e-9)
        .unwrap_or(10.0 * mag)
}

/// A linear value axis: from `lo` to `hi` widened to whole round steps, a
/// little room beyond, and the ticks (at most about `max`).
pub fn linear_axis(lo: f64, hi: f64, max: usize) -> (Range, Vec<f64>, f64) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - d, hi + d)
    };
    let step = round_step(hi - lo, max);
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let ticks: Vec<f64> = (first..=last).map(|k| clean(k as f64 * step)).collect();
    let (a, b) = (first as f64 * step, last as f64 * step);
    let m = (b - a) * 0.02;
    (
        Range {
            scale: Scale::Linear,
            lo: a - m,
            hi: b + m,
        },
        ticks,
        step,
    )
}

/// Round ticks within `range` (linear), at most about `max`, and their step.
pub fn round_ticks(range: Range, max: usize) -> (Vec<f64>, f64) {
    let step = round_step(range.hi - range.lo, max);
    let first = (range.lo / step - 1e-9).ceil() as i64;
    let last = (range.hi / step + 1e-9).floor() as i64;
    (
        (first..=last).map(|k| clean(k as f64 * step)).collect(),
        step,
    )
}

/// Ticks on a log axis: the decades within `range` (every second or third
/// when there are more than `max`), with 2 and 5 between them when fewer
/// than three decades show.
pub fn log_ticks(range: Range, max: usize) -> Vec<f64> {
    let (a, b) = (range.lo.log10(), range.hi.log10());
    let (first, last) = ((a - 1e-9).ceil() as i32, (b + 1e-9).floor() as i32);
    let decades = (last - first + 1).max(0) as usize;
    if decades >= 3 {
        let every = decades.div_ceil(max.max(2)).max(1) as i32;
        return (first..=last)
            .filter(|k| (k - first) % every == 0)
            .map(|k| clean(10f64.powi(k)))
            .collect();
    }
    let mut out: Vec<f64> = Vec::new();
    for k in (first - 1)..=(last + 1) {
        for m in [1.0, 2.0, 5.0] {
            let v = clean(m * 10f64.powi(k));
            if v >= range.lo * (1.0 - 1e-9) && v <= range.hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    if out.len() < 2 {
        // Less than a factor of 2.5 shown: round linear ticks read better.
        return round_ticks(range, max).0;
    }
    out
}

/// `v` rounded to 12 significant digits, so that 3 x 0.1 prints as 0.3.
fn clean(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { 0.0 } else { v };
    }
    let digits = 12 - v.abs().log10().ceil() as i32;
    let f = 10f64.powi(digits.clamp(-300, 300));
    (v * f).round() / f
}

/// A tick label: the value in its shortest form, with an SI suffix from
/// 10^4 on ("250k", "1.5M").
pub fn label(v: f64) -> String {
    let plain = |v: f64| format!("{}", clean(v));
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", plain(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", plain(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", plain(v / 1e3))
    } else if v == 0.0 {
        "0".into()
    } else {
        plain(v)
    }
}

/// A label of round ticks `step` apart: all with the same decimals ("0.0",
/// "0.5", "1.0"), or whole numbers with SI suffixes.
pub fn label_step(v: f64, step: f64) -> String {
    if step >= 1.0 || v.abs() >= 1e4 {
        return label(v);
    }
    let decimals = (-step.log10() - 1e-9).ceil().max(0.0) as usize;
    let s = format!("{:.*}", decimals, v);
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// Which labels centred at `centres` (ascending pixels), `widths` wide, can
/// be shown without two coming closer than `gap`: greedily from the first,
/// and the last always (its neighbour gives way).
pub fn thin(centres: &[f64], widths: &[f64], gap: f64) -> Vec<bool> {
    let n = centres.len();
    let mut shown = vec![false; n];
    let mut right = f64::NEG_INFINITY;
    for i in 0..n {
        if centres[i] - widths[i] / 2.0 >= right + gap {
            shown[i] = true;
            right = centres[i] + widths[i] / 2.0;
        }
    }
    if n > 1 && !shown[n - 1] {
        shown[n - 1] = true;
        let left = centres[n - 1] - widths[n - 1] / 2.0;
        for i in (0..n - 1).rev() {
            if shown[i] && centres[i] + widths[i] / 2.0 + gap > left {
                shown[i] = false;
            } else if shown[i] {
                break;
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_steps() {
        assert_eq!(round_step(1.0, 5), 0.2);
        assert_eq!(round_step(1.0, 10), 0.1);
        assert_eq!(round_step(900.0, 5), 200.0);
        let (r, t, step) = linear_axis(0.0, 0.93, 6);
        assert_eq!(step, 0.2);
        assert_eq!(t, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert!(r.lo < 0.0 && r.hi > 1.0);
    }

    #[test]
    fn labels() {
        assert_eq!(label(0.1 + 0.2), "0.3");
        assert_eq!(label(250_000.0), "250k");
        assert_eq!(label(1518.0), "1518");
        assert_eq!(label_step(0.5, 0.1), "0.5");
        assert_eq!(label_step(1.0, 0.2), "1.0");
        assert_eq!(label_step(0.05, 0.05), "0.05");
    }

    #[test]
    fn decades() {
        let r = Range {
            scale: Scale::Log,
            lo: 40.0,
            hi: 2e6,
        };
        assert_eq!(log_ticks(r, 8), vec![100.0, 1e3, 1e4, 1e5, 1e6]);
        let r = Range {
            scale: Scale::Log,
            lo: 1.5,
            hi: 70.0,
        };
        assert_eq!(log_ticks(r, 8), vec![2.0, 5.0, 10.0, 20.0, 50.0]);
    }

    #[test]
    fn thinning_keeps_first_and_last() {
        let shown = thin(&[0.0, 10.0, 20.0, 100.0, 105.0], &[8.0; 5], 4.0);
        assert_eq!(shown, vec![true, false, true, false, true]);
    }
}
