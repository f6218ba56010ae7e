//! Quantities with units, as written in scenario files ("51.2us", "1518B",
//! "10Mbps", "2500m", "2e8m/s"), parsed into exact integer picoseconds and bits.

use std::fmt;

/// Picoseconds per second: the simulator's clock runs in integer picoseconds.
pub const PS_PER_S: f64 = 1e12;

/// A span of time as written: absolute, or in bit times or slots of the medium.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeSpec {
    Ps(f64),
    Bits(f64),
    Slots(f64),
}

impl TimeSpec {
    /// Resolves to picoseconds, given one bit time and one slot in picoseconds.
    pub fn to_ps(self, bit_ps: u64, slot_ps: u64) -> f64 {
        match self {
            TimeSpec::Ps(p) => p,
            TimeSpec::Bits(b) => b * bit_ps as f64,
            TimeSpec::Slots(s) => s * slot_ps as f64,
        }
    }
}

/// Why a quantity could not be read; the caller adds the file, key and line.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Splits "51.2us" into (51.2, "us"). The number may carry a sign and an exponent.
fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let s = text.trim();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
        i += 1;
    }
    if i == digits_start {
        return Err(UnitError(format!("`{text}` does not start with a number")));
    }
    // An exponent only if digits follow the `e`, so that "2e8m/s" reads as 2e8 m/s.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_digits = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_digits {
            i = j;
        }
    }
    let num: String = s[..i].chars().filter(|&c| c != '_').collect();
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError(format!("`{text}` does not start with a valid number")))?;
    if !value.is_finite() {
        return Err(UnitError(format!("`{text}` is not a finite number")));
    }
    Ok((value, s[i..].trim()))
}

fn unit_list(units: &[(&str, f64)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

fn scaled(text: &str, what: &str, units: &[(&str, f64)]) -> Result<(f64, String), UnitError> {
    let (v, unit) = split_number(text)?;
    if unit.is_empty() {
        return Err(UnitError(format!(
            "`{text}` has no unit ({what} units: {})",
            unit_list(units)
        )));
    }
    for (u, f) in units {
        if *u == unit {
            return Ok((v * f, unit.to_string()));
        }
    }
    Err(UnitError(format!(
        "`{text}`: unknown {what} unit `{unit}`; allowed: {}",
        unit_list(units)
    )))
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("ps", 1.0),
    ("ns", 1e3),
    ("us", 1e6),
    ("µs", 1e6),
    ("ms", 1e9),
    ("s", 1e12),
    ("min", 60e12),
    ("h", 3600e12),
    ("bit", f64::NAN),
    ("bits", f64::NAN),
    ("slot", f64::NAN),
    ("slots", f64::NAN),
];

/// A duration: "10s", "51.2us", "96bit", "4slot".
pub fn parse_time(text: &str) -> Result<TimeSpec, UnitError> {
    let (v, unit) = split_number(text)?;
    match unit {
        "bit" | "bits" => return Ok(TimeSpec::Bits(v)),
        "slot" | "slots" => return Ok(TimeSpec::Slots(v)),
        _ => {}
    }
    let (ps, _) = scaled(text, "time", TIME_UNITS)?;
    Ok(TimeSpec::Ps(ps))
}

/// A size in bits: "1518B", "512bit", "1.5kB".
pub fn parse_bits(text: &str) -> Result<f64, UnitError> {
    Ok(scaled(
        text,
        "size",
        &[
            ("bit", 1.0),
            ("bits", 1.0),
            ("B", 8.0),
            ("kB", 8e3),
            ("KiB", 8192.0),
        ],
    )?
    .0)
}

/// A bit rate in bits per second: "10Mbps", "1Gbps".
pub fn parse_rate(text: &str) -> Result<f64, UnitError> {
    Ok(scaled(
        text,
        "bit rate",
        &[
            ("bps", 1.0),
            ("kbps", 1e3),
            ("Kbps", 1e3),
            ("Mbps", 1e6),
            ("Gbps", 1e9),
            ("b/s", 1.0),
            ("kb/s", 1e3),
            ("Mb/s", 1e6),
            ("Gb/s", 1e9),
        ],
    )?
    .0)
}

/// A length in metres: "2500m", "2.5km".
pub fn parse_length(text: &str) -> Result<f64, UnitError> {
    Ok(scaled(text, "length", &[("m", 1.0), ("km", 1e3), ("cm", 0.01)])?.0)
}

/// A signal speed in metres per second: "2e8m/s", "0.66c".
pub fn parse_speed(text: &str) -> Result<f64, UnitError> {
    Ok(scaled(
        text,
        "speed",
        &[("m/s", 1.0), ("km/s", 1e3), ("c", 299_792_458.0)],
    )?
    .0)
}

/// Formats picoseconds as a scenario file writes them: "51.2us", "1.5s".
pub fn format_ps(ps: u64) -> String {
    let (v, u) = in_unit(ps);
    format!("{v}{u}")
}

/// Formats picoseconds for a reader, in the unit that suits them and
/// exactly: "2 s", "10 µs", "51.2 µs", "52.3776 ms".
pub fn show_ps(ps: u64) -> String {
    if ps == 0 {
        return "0 s".into();
    }
    let (v, u) = in_unit(ps);
    format!("{v} {}", if u == "us" { "µs" } else { u })
}

/// `ps` in the largest unit it reaches, as an exact decimal: (52.3776, "ms").
fn in_unit(ps: u64) -> (String, &'static str) {
    let units: [(u64, &str); 5] = [
        (1_000_000_000_000, "s"),
        (1_000_000_000, "ms"),
        (1_000_000, "us"),
        (1_000, "ns"),
        (1, "ps"),
    ];
    let (per, unit) = units
        .into_iter()
        .find(|&(per, _)| ps >= per)
        .unwrap_or((1, "ps"));
    let (whole, frac) = (ps / per, ps % per);
    if frac == 0 {
        return (whole.to_string(), unit);
    }
    let digits = per.ilog10() as usize;
    let frac = format!("{frac:0digits$}");
    (format!("{whole}.{}", frac.trim_end_matches('0')), unit)
}

/// "1 replication", "5 replications": a count and its noun.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Bytes as a short human figure ("12.5 GiB").
pub fn format_bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u + 1 == UNITS.len() && v >= 1024.0 {
        return format!("{b:.3e} B");
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_every_unit() {
        assert_eq!(parse_time("51.2us").unwrap(), TimeSpec::Ps(51.2e6));
        assert_eq!(parse_time("10s").unwrap(), TimeSpec::Ps(1e13));
        assert_eq!(parse_time("96bit").unwrap(), TimeSpec::Bits(96.0));
        assert_eq!(parse_time("4 slot").unwrap(), TimeSpec::Slots(4.0));
        assert_eq!(parse_time("1e-3s").unwrap(), TimeSpec::Ps(1e9));
        assert!(parse_time("10").unwrap_err().0.contains("no unit"));
        assert!(parse_time("10 parsecs").unwrap_err().0.contains("allowed"));
        assert!(parse_time("fast").is_err());
    }

    #[test]
    fn sizes_rates_lengths_speeds() {
        assert_eq!(parse_bits("1518B").unwrap(), 12144.0);
        assert_eq!(parse_bits("512bit").unwrap(), 512.0);
        assert_eq!(parse_rate("10Mbps").unwrap(), 1e7);
        assert_eq!(parse_length("2.5km").unwrap(), 2500.0);
        assert_eq!(parse_speed("2e8m/s").unwrap(), 2e8);
        assert!(parse_bits("1518").is_err());
    }

    #[test]
    fn formats_times() {
        assert_eq!(format_ps(51_200_000), "51.2us");
        assert_eq!(format_ps(10_000_000_000_000), "10s");
        // For readers: the same units, spaced, with µs.
        assert_eq!(show_ps(60_000_000_000_000), "60 s");
        assert_eq!(show_ps(2_000_000_000), "2 ms");
        assert_eq!(show_ps(10_000_000), "10 µs");
        assert_eq!(show_ps(51_200_000), "51.2 µs");
        assert_eq!(show_ps(52_377_600_000), "52.3776 ms");
        assert_eq!(format_ps(52_377_600_000), "52.3776ms");
        assert_eq!(show_ps(1_500), "1.5 ns");
        assert_eq!(show_ps(7), "7 ps");
        assert_eq!(show_ps(60_000_000_000_001), "60.000000000001 s");
        assert_eq!(show_ps(100_000), "100 ns");
        assert_eq!(show_ps(0), "0 s");
    }
}
