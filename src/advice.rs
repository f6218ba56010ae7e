//! What a world says about a valid scenario before it runs: warnings (the
//! scenario runs, but its results will show something its author likely did
//! not mean) and the offered load, as information. Worlds compute them; the
//! CLI prints them.

use std::fmt;

/// A scenario that is valid but likely not what was meant.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// What kind of trouble ("late-collisions", "overload", ...): warnings of
    /// one kind about one key are told once for a whole sweep.
    pub kind: &'static str,
    /// The dotted key to look at and change ("medium.length", "stations.0.frame").
    pub key: String,
    /// What will happen, with the numbers, and what to change.
    pub message: String,
}

/// One group's share of the offered load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Share {
    /// A fraction of the capacity (of the bit rate, on a bus).
    Fraction(f64),
    /// Always something to send: as much as the medium takes.
    Saturated,
    /// A fixed number of frames at one instant, not a rate.
    Burst { frames: u64 },
}

/// The offered load of a scenario, per group.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedLoad {
    /// What the fractions are fractions of ("the bit rate").
    pub of: &'static str,
    /// Each group's name and share.
    pub groups: Vec<(String, Share)>,
}

impl OfferedLoad {
    /// The total: saturated when any group is; else the sum of the
    /// fractions (bursts left out); a burst when there is nothing else.
    pub fn total(&self) -> Share {
        let mut sum = None;
        let mut frames = 0;
        for (_, s) in &self.groups {
            match *s {
                Share::Saturated => return Share::Saturated,
                Share::Fraction(f) => sum = Some(sum.unwrap_or(0.0) + f),
                Share::Burst { frames: n } => frames += n,
            }
        }
        match sum {
            Some(f) => Share::Fraction(f),
            None => Share::Burst { frames },
        }
    }

    /// Whether some group sends bursts besides groups with a rate.
    fn bursts_left_out(&self) -> bool {
        matches!(self.total(), Share::Fraction(_))
            && self
                .groups
                .iter()
                .any(|(_, s)| matches!(s, Share::Burst { .. }))
    }
}

/// A fraction with at most three decimals, trailing zeros dropped (0.98,
/// 0.333, 1); smaller ones with two significant digits (0.0001, 0.000012).
pub fn short_fraction(f: f64) -> String {
    let decimals = if f != 0.0 && f.abs() < 0.001 && f.is_finite() {
        ((-f.abs().log10()).ceil() as usize + 1).min(20)
    } else {
        3
    };
    let s = format!("{f:.decimals$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Share::Fraction(x) => f.write_str(&short_fraction(*x)),
            Share::Saturated => f.write_str("saturated"),
            Share::Burst { frames: 1 } => f.write_str("a burst of 1 frame"),
            Share::Burst { frames } => write!(f, "a burst of {frames} frames"),
        }
    }
}

impl fmt::Display for OfferedLoad {
    /// "offered load: beb 0.49, aggressive 0.49, total 0.98 of the bit rate".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("offered load:")?;
        let parts: Vec<String> = self
            .groups
            .iter()
            .map(|(name, s)| format!("{name} {s}"))
            .collect();
        f.write_str(" ")?;
        f.write_str(&parts.join(", "))?;
        let total = self.total();
        if self.groups.len() > 1 {
            write!(f, ", total {total}")?;
        }
        if let Share::Fraction(_) = total {
            write!(f, " of {}", self.of)?;
            if self.bursts_left_out() {
                f.write_str(", bursts aside")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(groups: &[(&str, Share)]) -> OfferedLoad {
        OfferedLoad {
            of: "the bit rate",
            groups: groups.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
        }
    }

    #[test]
    fn lines_read_as_the_docs_show() {
        let two = load(&[
            ("beb", Share::Fraction(0.49)),
            ("aggressive", Share::Fraction(0.49)),
        ]);
        assert_eq!(
            two.to_string(),
            "offered load: beb 0.49, aggressive 0.49, total 0.98 of the bit rate"
        );
        let one = load(&[("beb", Share::Saturated)]);
        assert_eq!(one.to_string(), "offered load: beb saturated");
        let mixed = load(&[("a", Share::Fraction(0.5)), ("b", Share::Saturated)]);
        assert_eq!(
            mixed.to_string(),
            "offered load: a 0.5, b saturated, total saturated"
        );
        let burst = load(&[("herd", Share::Burst { frames: 1000 })]);
        assert_eq!(
            burst.to_string(),
            "offered load: herd a burst of 1000 frames"
        );
        let both = load(&[
            ("a", Share::Fraction(0.2)),
            ("b", Share::Burst { frames: 3 }),
        ]);
        assert_eq!(
            both.to_string(),
            "offered load: a 0.2, b a burst of 3 frames, total 0.2 of the bit rate, bursts aside"
        );
        assert_eq!(short_fraction(7.0 * 0.14), "0.98");
        assert_eq!(short_fraction(1.0 / 3.0), "0.333");
        assert_eq!(short_fraction(1.0), "1");
        assert_eq!(short_fraction(1.024e-4), "0.0001");
        assert_eq!(short_fraction(1.2e-5), "0.000012");
        assert_eq!(short_fraction(0.0), "0");
    }
}
