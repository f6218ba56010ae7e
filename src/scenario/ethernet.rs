//! The bus world's scenario: `[medium]`, `[[stations]]` groups with their
//! traffic, frames and backoff, the top-level keys, and the limits that keep
//! a valid scenario inside the core's clock and memory.

use super::policies;
use super::reader::{FieldError, Fields, Item};
use super::topology::{self, MAX_STATIONS_WIRED};
use super::{MAX_DURATION_S, MAX_MEMORY_BYTES, MAX_REPLICATIONS, MAX_STATIONS, MIN_BIT_RATE};
use crate::backoff::BackoffSpec;
use crate::engine::Time;
use crate::ethernet::{Access, Group, Medium, Placement, Scenario, Standard, Topology};
use crate::results::MemoryNeed;
use crate::traffic::{Arrivals, FrameLaw, MAX_FRAME_BYTES, MIN_FRAME_BYTES};
use crate::units::{self, format_bytes, TimeSpec, PS_PER_S};
use toml::{Table, Value};

/// The top-level keys of a scenario (a sweep adds `sweep` and `chart`).
pub const TOP_KEYS: &[&str] = &[
    "name",
    "seed",
    "duration",
    "warmup",
    "replications",
    "precision",
    "precision_metric",
    "max_replications",
    "nonstandard_frames",
    "medium",
    "stations",
];

/// Checks a bus scenario table (`[medium]`, `[[stations]]`).
pub fn validate_bus(
    table: &Table,
    default_name: &str,
    extra_keys: &[&str],
) -> Result<Scenario, FieldError> {
    validate_bus_for(table, default_name, extra_keys, true)
}

/// As [`validate_bus`], for one run up to a window's end (a trace, a
/// diagram, a view): the memory of the whole scenario (its duration, its
/// replications) is not checked here; the caller checks the window's run
/// ([`check_run_memory`]).
pub fn validate_bus_window(table: &Table, default_name: &str) -> Result<Scenario, FieldError> {
    validate_bus_for(table, default_name, &[], false)
}

fn validate_bus_for(
    table: &Table,
    default_name: &str,
    extra_keys: &[&str],
    whole_run: bool,
) -> Result<Scenario, FieldError> {
    let mut top = Fields::new("", table);
    if top.contains("clients") {
        return Err(top.err(
            "clients",
            "[[clients]] groups call a server: a service scenario needs a [server] table \
             too, e.g. [server] with kind = \"flaky\" and failure = 0.1 (docs/service.md); \
             a bus scenario has [[stations]] groups instead",
        ));
    }
    let super::Common {
        name,
        seed,
        replications,
    } = super::read_common(&mut top, TOP_KEYS, extra_keys, default_name)?;
    let relative = top.float("precision", 1e-6, 1.0)?;
    let precision_metric = top.string("precision_metric")?;
    let max_replications = top
        .integer("max_replications", 2, MAX_REPLICATIONS)?
        .map(|m| m as u32);
    if relative.is_none() {
        for key in ["precision_metric", "max_replications"] {
            if top.contains(key) {
                return Err(top.err(
                    key,
                    "is only used with `precision` (e.g. precision = 0.02: replications are \
                     added until the metric's 95 % CI half-width is at most 2 % of its mean)",
                ));
            }
        }
    }
    let nonstandard_frames = top.boolean("nonstandard_frames")?.unwrap_or(false);

    let mut medium = match top.get("medium") {
        Some(Value::Table(t)) => read_medium(Fields::new("medium", t))?,
        Some(_) => return Err(top.err("medium", "expected a table: [medium]")),
        None => read_medium(Fields::new("medium", &Table::new()))?,
    };
    let to_ps = |t: TimeSpec| t.to_ps(medium.bit_ps, medium.slot_ps);

    let duration = top.time("duration")?;
    let duration = top.require(
        "duration",
        duration,
        "give the simulated time, e.g. duration = \"10s\"",
    )?;
    let duration_ps = to_ps(duration);
    if duration_ps <= 0.0 {
        return Err(top.err("duration", "must be greater than zero, e.g. \"10s\""));
    }
    if duration_ps > MAX_DURATION_S * PS_PER_S {
        return Err(top.err(
            "duration",
            format!(
                "is longer than the {MAX_DURATION_S:e} s the simulator accepts; simulate less time"
            ),
        ));
    }
    let duration = duration_ps.round() as Time;
    let warmup = top.time("warmup")?.map(to_ps).unwrap_or(0.0).round() as Time;
    if warmup >= duration {
        return Err(top.err(
            "warmup",
            format!(
                "{} is not shorter than the duration {}; statistics would cover nothing",
                units::format_ps(warmup),
                units::format_ps(duration)
            ),
        ));
    }

    let mut groups = match top.get("stations") {
        Some(Value::Array(a)) if !a.is_empty() => {
            let mut groups = Vec::with_capacity(a.len());
            for (i, v) in a.iter().enumerate() {
                let path = format!("stations.{i}");
                let item = Item {
                    path: &path,
                    value: v,
                };
                groups.push(read_group(Fields::of(item)?, &medium)?);
            }
            groups
        }
        Some(Value::Array(_)) => {
            return Err(top.err("stations", "is empty; add at least one [[stations]] group"))
        }
        Some(_) => return Err(top.err("stations", "expected an array of tables: [[stations]]")),
        None => {
            return Err(top.err(
                "stations",
                "missing; add at least one [[stations]] group with `count`",
            ))
        }
    };
    top.finish(&[TOP_KEYS, extra_keys].concat())?;
    name_groups(&mut groups)?;
    let placement_given = matches!(
        table.get("medium"),
        Some(Value::Table(t)) if matches!(t.get("placement"), Some(Value::String(p)) if p != "even")
    );
    if !placement_given {
        let unplaced = groups.iter().filter(|g| g.positions.is_none()).count();
        medium.placement = if unplaced >= 2 {
            Placement::Interleaved
        } else {
            Placement::Grouped
        };
    }

    let total: u64 = groups.iter().map(|g| g.count as u64).sum();
    if medium.topology != Topology::Bus && total > MAX_STATIONS_WIRED {
        return Err(FieldError::new(
            "stations",
            format!(
                "{total} stations in all; 802.3 allows at most {MAX_STATIONS_WIRED} in a \
                 collision domain, and a topology of kind = \"{}\" holds one",
                medium.topology.kind()
            ),
        ));
    }
    if total > MAX_STATIONS {
        return Err(FieldError::new(
            "stations",
            format!("{total} stations in all; at most {MAX_STATIONS} fit in memory"),
        ));
    }
    for (gi, g) in groups.iter().enumerate() {
        let (lo, hi) = (medium.min_frame_bytes, medium.max_frame_bytes);
        if !nonstandard_frames && (g.frame.min_bytes() < lo || g.frame.max_bytes() > hi) {
            return Err(FieldError::new(
                format!("stations.{gi}.frame"),
                format!(
                    "frames of {} to {} bytes are outside 802.3's {lo} to {hi}; \
                     set `nonstandard_frames = true` at the top of the file to simulate them anyway",
                    g.frame.min_bytes(),
                    g.frame.max_bytes()
                ),
            ));
        }
        if let Some(d) = g.destination {
            if d as u64 >= total {
                return Err(FieldError::new(
                    format!("stations.{gi}.destination"),
                    format!(
                        "station {d} does not exist; stations are numbered 0 to {}",
                        total - 1
                    ),
                ));
            }
        }
    }
    let precision = match relative {
        None => None,
        Some(relative) => {
            let metric = precision_metric.unwrap_or_else(|| "throughput".into());
            let max = max_replications.unwrap_or(100);
            if max < replications {
                return Err(FieldError::new(
                    "max_replications",
                    format!("{max} is fewer than replications = {replications}; give at least that many"),
                ));
            }
            Some(crate::stats::Precision {
                metric,
                relative,
                max,
            })
        }
    };
    let sc = Scenario {
        name,
        seed,
        duration,
        warmup,
        replications,
        precision,
        medium,
        groups,
        nonstandard_frames,
    };
    if let Some(p) = &sc.precision {
        // The metrics a run of this scenario has (a burst adds its own).
        let names = sc.columns().metrics;
        if !names.contains(&p.metric.as_str()) {
            return Err(FieldError::new(
                "precision_metric",
                format!(
                    "\"{}\" is not a metric of this scenario; allowed: {}",
                    p.metric,
                    names.join(", ")
                ),
            ));
        }
    }
    check_limits(&sc)?;
    if whole_run {
        check_memory(&sc)?;
    }
    Ok(sc)
}

/// Refuses a run of `sc` (one replication) whose memory estimate is more
/// than the 64 GiB limit; the message names what drives it.
pub fn check_run_memory(sc: &Scenario) -> Result<(), FieldError> {
    let mut one = sc.clone();
    one.replications = 1;
    one.precision = None;
    check_memory(&one)
}

/// Limits on the scenario as a whole, checked before any work: every time the
/// core adds stays far inside the 64-bit picosecond clock, and the memory a run
/// needs is bounded.
fn check_limits(sc: &Scenario) -> Result<(), FieldError> {
    let max_ps = MAX_DURATION_S * PS_PER_S;
    let end_to_end = sc.max_delay_ps() as f64;
    if end_to_end > max_ps {
        return Err(FieldError::new(
            "medium.speed",
            format!(
                "a signal would take {end_to_end:e} ps from one end of the bus to the other, \
                 longer than the {MAX_DURATION_S:e} s the simulator accepts; give a faster speed, e.g. \"2e8m/s\""
            ),
        ));
    }
    let max_bytes = sc
        .groups
        .iter()
        .map(|g| g.frame.max_bytes())
        .max()
        .unwrap_or(0);
    let longest = sc.medium.preamble_ps as f64 + 8.0 * max_bytes as f64 * sc.medium.bit_ps as f64;
    if longest > max_ps {
        return Err(FieldError::new(
            "medium.bit_rate",
            format!(
                "a {max_bytes}-byte frame would last {longest:e} ps, longer than the \
                 {MAX_DURATION_S:e} s the simulator accepts; give a faster bit rate"
            ),
        ));
    }
    Ok(())
}

/// The memory of every replication, one run at a time, within the 64 GiB
/// limit: what more threads need is checked against the machine before
/// running.
fn check_memory(sc: &Scenario) -> Result<(), FieldError> {
    let need = MemoryNeed::at_once(&[(sc.memory_need(), sc.max_replications())], 1);
    if need.is_nan() || need > MAX_MEMORY_BYTES as f64 {
        // The estimate counts every replication a point may run; it names
        // the replications when their tables' text is most of it.
        let one = MemoryNeed::at_once(&[(sc.memory_need(), 1)], 1);
        let (driver_key, driver, fix) = sc.memory_driver();
        let key = if sc.max_replications() > sc.replications && need > 2.0 * one {
            "max_replications"
        } else if sc.replications > 1 && need > 2.0 * one {
            "replications"
        } else {
            driver_key
        };
        return Err(FieldError::new(
            key,
            format!(
                "{driver} x {} need about {} of memory, more than the {} limit; {fix}{}",
                units::count(sc.max_replications().into(), "replication"),
                format_bytes(need),
                format_bytes(MAX_MEMORY_BYTES as f64),
                if sc.max_replications() > 1 {
                    ", or fewer replications"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(())
}

/// A bit rate as a scenario writes it, for a number given without a unit:
/// 10000000 -> "10Mbps", 10 -> "10bps".
fn suggest_rate(v: f64) -> String {
    let (scale, unit) = [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")]
        .into_iter()
        .find(|(s, _)| v.abs() >= *s)
        .unwrap_or((1.0, "bps"));
    format!("{}{unit}", v / scale)
}

fn bits_time(
    f: &mut Fields,
    key: &str,
    default_bits: f64,
    bit_ps: Time,
) -> Result<Time, FieldError> {
    let t = f.time(key)?.unwrap_or(TimeSpec::Bits(default_bits));
    if let TimeSpec::Slots(_) = t {
        return Err(f.err(key, "give it in bits or time units, e.g. \"96bit\""));
    }
    let ps = t.to_ps(bit_ps, 0);
    if ps > MAX_DURATION_S * PS_PER_S {
        return Err(f.err(
            key,
            format!("is longer than the {MAX_DURATION_S:e} s the simulator accepts"),
        ));
    }
    Ok(ps.round() as Time)
}

/// The keys of `[medium]`.
pub const MEDIUM_KEYS: &[&str] = &[
    "standard",
    "bit_rate",
    "length",
    "speed",
    "slot",
    "preamble",
    "ifg",
    "jam",
    "min_frame",
    "max_frame",
    "carrier_extension",
    "frame_bursting",
    "burst_limit",
    "access",
    "p",
    "placement",
    "topology",
];

/// `[medium] standard`: one of [`Standard::ALL`], or an error naming them.
fn read_standard(f: &mut Fields) -> Result<Option<&'static Standard>, FieldError> {
    let names: Vec<&str> = Standard::ALL.iter().map(|s| s.name).collect();
    f.with("standard", |i| {
        let s = i.str()?;
        if let Some(std) = Standard::by_name(s) {
            return Ok(std);
        }
        let upper = s.to_ascii_uppercase();
        let fast = [
            "10GBASE", "2.5GBASE", "5GBASE", "25GBASE", "40GBASE", "100GBASE",
        ];
        let why = if fast.iter().any(|p| upper.starts_with(p)) {
            format!("`{s}` runs full duplex only: 802.3 defines CSMA/CD (half duplex) up to 1 Gb/s")
        } else {
            format!("`{s}` is not a half-duplex 802.3 standard csmacd knows")
        };
        Err(i.err(format!("{why}; allowed: {}", names.join(", "))))
    })
}

fn read_medium(mut f: Fields) -> Result<Medium, FieldError> {
    f.allow(MEDIUM_KEYS)?;
    let standard = read_standard(&mut f)?;
    let bit_rate = f
        .with("bit_rate", |i| i.quantity(units::parse_rate, suggest_rate))?
        .unwrap_or(standard.map_or(10e6, |s| s.bit_rate));
    if bit_rate.is_nan() || bit_rate <= 0.0 {
        return Err(f.err("bit_rate", "must be greater than zero, e.g. \"10Mbps\""));
    }
    if bit_rate < MIN_BIT_RATE {
        return Err(f.err(
            "bit_rate",
            format!("{bit_rate} b/s is slower than the {MIN_BIT_RATE} b/s the simulator accepts"),
        ));
    }
    let bit_ps_f = PS_PER_S / bit_rate;
    if bit_ps_f < 1.0 || (bit_ps_f - bit_ps_f.round()).abs() > 1e-6 {
        return Err(f.err(
            "bit_rate",
            format!(
                "one bit lasts {bit_ps_f} ps, not a whole number of picoseconds; \
                 allowed: rates that divide 1 Tb/s, e.g. 1Mbps, 10Mbps, 100Mbps, 1Gbps"
            ),
        ));
    }
    let bit_ps = bit_ps_f.round() as Time;
    let length_m = f
        .with("length", |i| {
            i.quantity(units::parse_length, |v| format!("{v}m"))
        })?
        .unwrap_or(standard.map_or(2500.0, |s| s.length_m));
    if !(0.0..=1e7).contains(&length_m) {
        return Err(f.err("length", "must be between 0m and 10000km"));
    }
    let speed = f
        .with("speed", |i| {
            i.quantity(units::parse_speed, |v| format!("{v}m/s"))
        })?
        .unwrap_or(standard.map_or(2e8, |s| s.speed));
    if !(speed > 0.0 && speed <= 299_792_458.0) {
        return Err(f.err(
            "speed",
            "must be greater than zero and at most the speed of light, e.g. \"2e8m/s\"",
        ));
    }
    let slot = f.time("slot")?.unwrap_or(TimeSpec::Bits(
        standard.map_or(512.0, |s| s.slot_bits as f64),
    ));
    if let TimeSpec::Slots(_) = slot {
        return Err(f.err(
            "slot",
            "give the slot in bits or time units, e.g. \"512bit\"",
        ));
    }
    let slot_ps = slot.to_ps(bit_ps, 0);
    if slot_ps > MAX_DURATION_S * PS_PER_S {
        return Err(f.err(
            "slot",
            format!("is longer than the {MAX_DURATION_S:e} s the simulator accepts"),
        ));
    }
    let slot_ps = slot_ps.round() as Time;
    if slot_ps == 0 {
        return Err(f.err("slot", "must be greater than zero, e.g. \"512bit\""));
    }
    let preamble_ps = bits_time(&mut f, "preamble", 64.0, bit_ps)?;
    let ifg_ps = bits_time(&mut f, "ifg", 96.0, bit_ps)?;
    let jam_ps = bits_time(&mut f, "jam", 32.0, bit_ps)?;
    let min_frame_bytes = f.with("min_frame", frame_bytes)?.unwrap_or(MIN_FRAME_BYTES);
    let max_frame_bytes = f.with("max_frame", frame_bytes)?.unwrap_or(MAX_FRAME_BYTES);
    let carrier_extension = f
        .boolean("carrier_extension")?
        .unwrap_or(standard.is_some_and(|s| s.carrier_extension));
    let frame_bursting = f.boolean("frame_bursting")?.unwrap_or(false);
    let burst_limit_ps = bits_time(&mut f, "burst_limit", 65536.0, bit_ps)?;
    if min_frame_bytes > max_frame_bytes {
        return Err(f.err(
            "max_frame",
            format!("{max_frame_bytes} B is below min_frame ({min_frame_bytes} B)"),
        ));
    }
    let access = f.choice("access", Access::NAMES)?;
    let p = f.fraction("p", 0.0, 1.0)?;
    let access = match (access.as_deref(), p) {
        (Some("csma-cd-p-persistent"), Some(p)) if p > 0.0 => Access::CsmaCdPPersistent { p },
        (Some("csma-cd-p-persistent"), Some(_)) => {
            return Err(f.err("p", "must be greater than zero; allowed: 0 < p <= 1"))
        }
        (Some("csma-cd-p-persistent"), None) => {
            return Err(f.err(
                "p",
                "missing; access = \"csma-cd-p-persistent\" needs the probability p (0 < p <= 1) of sending in a slot when the medium is idle",
            ))
        }
        (_, Some(_)) => {
            return Err(f.err(
                "p",
                "applies only to access = \"csma-cd-p-persistent\"; remove it or change `access`",
            ))
        }
        (Some("csma-cd-nonpersistent"), None) => Access::CsmaCdNonPersistent,
        (Some("csma"), None) => Access::Csma,
        (Some("aloha"), None) => Access::Aloha,
        (Some("slotted-aloha"), None) => Access::SlottedAloha,
        _ => Access::CsmaCd,
    };
    // A collision sent until its detection and then jammed takes at least the
    // preamble or the jam: with neither, two stations at one place collide
    // in no time, and a wait of zero (a constant 0 s backoff, no gap) sends
    // them again at the same instant without end.
    if access.detects_collisions() && preamble_ps == 0 && jam_ps == 0 {
        return Err(f.err(
            "jam",
            "is 0 with a preamble of 0: a collision between stations at one place would \
             take no time, and the clock could stop; give a jam of at least 1 bit, e.g. \
             jam = \"32bit\" (802.3's)",
        ));
    }
    // "even" (or nothing) is decided once the groups are known: interleaved
    // when several groups are placed evenly, as grouped for one.
    let placement = match f
        .choice("placement", &["even", "interleaved", "grouped", "random"])?
        .as_deref()
    {
        Some("random") => Placement::Random,
        Some("grouped") => Placement::Grouped,
        _ => Placement::Interleaved,
    };
    let topology = f
        .with("topology", |i| topology::read(i, bit_ps, length_m))?
        .unwrap_or(Topology::Bus);
    // A hub's or a chain's extent comes from its cables.
    let length_m = match &topology {
        Topology::Bus => length_m,
        wired => {
            if f.contains("length") {
                return Err(f.err(
                    "length",
                    format!(
                        "does not apply to topology kind = \"{}\"; give the cables in                          `topology` (cable, segments) and per group (cable)",
                        wired.kind()
                    ),
                ));
            }
            if placement == Placement::Random && f.contains("placement") {
                return Err(f.err(
                    "placement",
                    format!(
                        "\"random\" applies only to a bus; on topology kind = \"{}\" \
                         stations sit at the end of their cables or where `positions` puts them \
                         on their segment",
                        wired.kind()
                    ),
                ));
            }
            match wired {
                Topology::Segments { lengths_m, .. } => lengths_m.iter().sum(),
                _ => length_m,
            }
        }
    };
    f.finish(MEDIUM_KEYS)?;
    Ok(Medium {
        bit_rate,
        bit_ps,
        length_m,
        speed,
        slot_ps,
        preamble_ps,
        ifg_ps,
        jam_ps,
        min_frame_bytes,
        max_frame_bytes,
        carrier_extension,
        frame_bursting,
        burst_limit_ps,
        access,
        placement,
        topology,
        standard,
    })
}

fn frame_bytes(item: Item) -> Result<u32, FieldError> {
    let bits = item.quantity(units::parse_bits, |v| format!("{v}B"))?;
    if bits <= 0.0 || bits % 8.0 != 0.0 || bits > 8e6 {
        return Err(item.err(format!(
            "{} is not a whole number of bytes between 1B and 1000000B",
            item.str()?
        )));
    }
    Ok((bits / 8.0) as u32)
}

fn read_frame(item: Item) -> Result<FrameLaw, FieldError> {
    match item.value {
        Value::String(s) if s == "imix" => Ok(FrameLaw::Mix {
            sizes: vec![64, 594, 1518],
            weights: vec![7.0, 4.0, 1.0],
        }),
        Value::String(_) | Value::Integer(_) | Value::Float(_) => {
            Ok(FrameLaw::Fixed(frame_bytes(item)?))
        }
        Value::Table(_) => {
            let mut f = Fields::of(item)?;
            let kind = f.choice("kind", &["fixed", "uniform", "mix"])?;
            let kind = f.require("kind", kind, "one of fixed, uniform, mix")?;
            let law = match kind.as_str() {
                "fixed" => {
                    let s = f.with("size", frame_bytes)?;
                    FrameLaw::Fixed(f.require("size", s, "the frame size, e.g. \"1518B\"")?)
                }
                "uniform" => {
                    let min = f.with("min", frame_bytes)?;
                    let min = f.require("min", min, "the smallest frame, e.g. \"64B\"")?;
                    let max = f.with("max", frame_bytes)?;
                    let max = f.require("max", max, "the largest frame, e.g. \"1518B\"")?;
                    if min > max {
                        return Err(f.err("max", format!("{max} B is smaller than min {min} B")));
                    }
                    FrameLaw::Uniform { min, max }
                }
                _ => {
                    let sizes = f.with("sizes", |i| {
                        let a = i.array()?;
                        let mut out = Vec::new();
                        for (k, v) in a.iter().enumerate() {
                            let p = format!("{}.{k}", i.path);
                            out.push(frame_bytes(Item { path: &p, value: v })?);
                        }
                        Ok(out)
                    })?;
                    let sizes = f.require("sizes", sizes, "a list of sizes, e.g. [\"64B\", \"594B\", \"1518B\"]")?;
                    let weights = f.with("weights", |i| {
                        let a = i.array()?;
                        let mut out = Vec::new();
                        for (k, v) in a.iter().enumerate() {
                            let p = format!("{}.{k}", i.path);
                            let w = Item { path: &p, value: v }.float()?;
                            if !(w > 0.0 && w.is_finite()) {
                                return Err(FieldError::new(p, "a weight must be a positive number"));
                            }
                            out.push(w);
                        }
                        Ok(out)
                    })?;
                    let weights = weights.unwrap_or_else(|| vec![1.0; sizes.len()]);
                    if !weights.iter().sum::<f64>().is_finite() {
                        return Err(f.err("weights", "the weights add up to more than a float holds; use smaller numbers, e.g. 7, 4, 1"));
                    }
                    if sizes.is_empty() || sizes.len() != weights.len() {
                        return Err(f.err(
                            "weights",
                            format!("{} weights for {} sizes; give one weight per size", weights.len(), sizes.len()),
                        ));
                    }
                    FrameLaw::Mix { sizes, weights }
                }
            };
            f.finish(&["kind", "size", "min", "max", "sizes", "weights"])?;
            Ok(law)
        }
        _ => Err(item.err(
            "expected a size such as \"1518B\", \"imix\", or a table { kind = \"uniform\", min = \"64B\", max = \"1518B\" }",
        )),
    }
}

/// Per-station frame rate from `rate` (frames/s per station) or `load` (the
/// group's share of the bit rate, frame bits only).
fn read_rate(
    f: &mut Fields,
    count: usize,
    mean_bits: f64,
    bit_rate: f64,
    required: bool,
) -> Result<Option<f64>, FieldError> {
    let load = f.fraction("load", 0.0, 1e6)?;
    let rate = f.float("rate", 0.0, 1e12)?;
    match (load, rate) {
        (Some(_), Some(_)) => Err(f.err("rate", "give either `load` or `rate`, not both")),
        (Some(l), None) => {
            if l <= 0.0 {
                return Err(f.err("load", "must be greater than zero (a fraction of the bit rate, e.g. 0.5)"));
            }
            Ok(Some(l * bit_rate / (count as f64 * mean_bits)))
        }
        (None, Some(r)) => {
            if r <= 0.0 {
                return Err(f.err("rate", "must be greater than zero (frames per second per station)"));
            }
            Ok(Some(r))
        }
        (None, None) if required => Err(f.err(
            "load",
            "missing; give `load` (the group's offered load as a fraction of the bit rate) or `rate` (frames/s per station)",
        )),
        (None, None) => Ok(None),
    }
}

fn positive_time(
    f: &mut Fields,
    key: &str,
    m: &Medium,
    what: &str,
) -> Result<Option<Time>, FieldError> {
    match f.time(key)? {
        None => Ok(None),
        Some(t) => {
            let ps = t.to_ps(m.bit_ps, m.slot_ps);
            if ps < 1.0 {
                return Err(f.err(key, format!("must be greater than zero; {what}")));
            }
            if ps > MAX_DURATION_S * PS_PER_S {
                return Err(f.err(key, "is too long"));
            }
            Ok(Some(ps.round() as Time))
        }
    }
}

fn read_traffic(
    item: Item,
    count: usize,
    frame: &FrameLaw,
    m: &Medium,
) -> Result<Arrivals, FieldError> {
    let mut f = Fields::of(item)?;
    let kinds = ["saturated", "poisson", "periodic", "burst", "on-off"];
    let kind = f.choice("kind", &kinds)?;
    let kind = f.require(
        "kind",
        kind,
        "one of saturated, poisson, periodic, burst, on-off",
    )?;
    let mean_bits = frame.mean_bits();
    let (arrivals, allowed): (Arrivals, &[&str]) = match kind.as_str() {
        "saturated" => (Arrivals::Saturated, &["kind"]),
        "poisson" => {
            let rate = read_rate(&mut f, count, mean_bits, m.bit_rate, true)?.unwrap_or(1.0);
            (Arrivals::Poisson { rate }, &["kind", "load", "rate"])
        }
        "periodic" => {
            let interval = positive_time(&mut f, "interval", m, "the time between frames")?;
            let rate = read_rate(&mut f, count, mean_bits, m.bit_rate, interval.is_none())?;
            if interval.is_some() && rate.is_some() {
                return Err(f.err("interval", "give one of `interval`, `rate` or `load`"));
            }
            let interval = match (interval, rate) {
                (Some(i), _) => i,
                (None, Some(r)) => ((PS_PER_S / r).round() as Time).max(1),
                (None, None) => 1,
            };
            let phase = f
                .time("phase")?
                .map(|t| t.to_ps(m.bit_ps, m.slot_ps).round() as Time);
            (
                Arrivals::Periodic { interval, phase },
                &["kind", "load", "rate", "interval", "phase"],
            )
        }
        "burst" => {
            let frames = f.integer("frames", 1, 1_000_000)?.unwrap_or(1) as u32;
            let at = f
                .time("at")?
                .map(|t| t.to_ps(m.bit_ps, m.slot_ps).round() as Time)
                .unwrap_or(0);
            (Arrivals::Burst { frames, at }, &["kind", "frames", "at"])
        }
        _ => {
            let rate = read_rate(&mut f, count, mean_bits, m.bit_rate, true)?.unwrap_or(1.0);
            let mean_on = positive_time(&mut f, "mean_on", m, "the mean on period")?
                .unwrap_or(100_000_000_000);
            let mean_off = positive_time(&mut f, "mean_off", m, "the mean off period")?
                .unwrap_or(100_000_000_000);
            let alpha = f.float("alpha", 1.0, 10.0)?.unwrap_or(1.5);
            if alpha <= 1.0 {
                return Err(f.err(
                    "alpha",
                    "must be greater than 1 (a finite mean); 1 < alpha < 2 gives heavy tails",
                ));
            }
            // `load`/`rate` is the long-run mean; while on, sources send faster.
            let on_fraction = mean_on as f64 / (mean_on + mean_off) as f64;
            (
                Arrivals::OnOff {
                    rate: rate / on_fraction,
                    mean_on,
                    mean_off,
                    alpha,
                },
                &["kind", "load", "rate", "mean_on", "mean_off", "alpha"],
            )
        }
    };
    f.finish(allowed)?;
    Ok(arrivals)
}

/// Gives every unnamed group a name from its policy and its place in the
/// file ("beb", or "beb-1", "beb-2" when several groups share the policy),
/// and refuses a name given twice.
fn name_groups(groups: &mut [Group]) -> Result<(), FieldError> {
    for gi in 0..groups.len() {
        if let Some(gj) =
            (0..gi).find(|&gj| groups[gj].name == groups[gi].name && !groups[gi].name.is_empty())
        {
            return Err(FieldError::new(
                format!("stations.{gi}.name"),
                format!(
                    "\"{}\" is already the name of group {gj}; every group needs its own name",
                    groups[gi].name
                ),
            ));
        }
    }
    let unnamed: Vec<bool> = groups.iter().map(|g| g.name.is_empty()).collect();
    for gi in 0..groups.len() {
        if !unnamed[gi] {
            continue;
        }
        let kind = groups[gi].backoff.kind();
        let of_kind = |gj: usize| unnamed[gj] && groups[gj].backoff.kind() == kind;
        let alone = (0..groups.len()).filter(|&gj| of_kind(gj)).count() == 1;
        let taken = |name: &str| groups.iter().any(|g| g.name == name);
        let name = if alone && !taken(kind) {
            kind.to_string()
        } else {
            let mut k = 1 + (0..gi).filter(|&gj| of_kind(gj)).count();
            while taken(&format!("{kind}-{k}")) {
                k += 1;
            }
            format!("{kind}-{k}")
        };
        groups[gi].name = name;
    }
    Ok(())
}

/// The keys of a `[[stations]]` group.
pub const GROUP_KEYS: &[&str] = &[
    "name",
    "count",
    "traffic",
    "frame",
    "backoff",
    "queue",
    "positions",
    "destination",
    "cable",
    "segment",
];

fn read_group(mut f: Fields, m: &Medium) -> Result<Group, FieldError> {
    f.allow(GROUP_KEYS)?;
    let name = f.with("name", |i| {
        super::reader::name(i, super::MAX_GROUP_NAME, "aggressive")
    })?;
    let count = f.with("count", |i| {
        let v = i.integer()?;
        if v < 1 || v as u64 > MAX_STATIONS {
            return Err(i.err(format!("{v} stations; allowed: 1 to {MAX_STATIONS}")));
        }
        Ok(v as usize)
    })?;
    let count = f.require(
        "count",
        count,
        "the number of stations in this group, e.g. count = 2",
    )?;
    let frame = f.with("frame", read_frame)?;
    let frame = f.require("frame", frame, "the frame size, e.g. frame = \"1518B\"")?;
    let arrivals = f.with("traffic", |i| read_traffic(i, count, &frame, m))?;
    let arrivals = f.require(
        "traffic",
        arrivals,
        "e.g. traffic = { kind = \"saturated\" }",
    )?;
    let policy = f
        .with("backoff", |i| Ok(policies::short_text(i.value)))?
        .unwrap_or_else(|| "beb".to_string());
    let backoff = f
        .with("backoff", |i| policies::read(i, m))?
        .unwrap_or_else(BackoffSpec::beb);
    let queue = f.integer("queue", 1, 10_000_000)?.unwrap_or(1000) as usize;
    let (cable_m, segment) = read_place(&mut f, m)?;
    let bound = match &m.topology {
        Topology::Bus => m.length_m,
        Topology::Segments { lengths_m, .. } => lengths_m[segment],
        Topology::Hub { .. } => {
            if f.contains("positions") {
                return Err(f.err(
                    "positions",
                    "does not apply on a hub: each station sits at the end of its own cable; \
                     give the group's `cable` instead, e.g. cable = \"50m\"",
                ));
            }
            0.0
        }
    };
    let positions = f.with("positions", |i| {
        let a = i.array()?;
        if a.len() != count {
            return Err(i.err(format!(
                "{} positions for {count} stations; give one per station",
                a.len()
            )));
        }
        let mut out = Vec::with_capacity(a.len());
        for (k, v) in a.iter().enumerate() {
            let p = format!("{}.{k}", i.path);
            let it = Item { path: &p, value: v };
            let x = it.quantity(units::parse_length, |v| format!("{v}m"))?;
            if !(0.0..=bound).contains(&x) {
                let on = match m.topology {
                    Topology::Segments { .. } => format!("its segment ({})", segment + 1),
                    _ => "the bus".into(),
                };
                return Err(it.err(format!("{x} m is off {on}; allowed: 0m to {bound}m")));
            }
            out.push(x);
        }
        Ok(out)
    })?;
    let destination = f.integer("destination", 0, i64::MAX)?.map(|d| d as usize);
    f.finish(GROUP_KEYS)?;
    Ok(Group {
        name: name.unwrap_or_default(),
        count,
        arrivals,
        frame,
        backoff,
        policy,
        queue,
        positions,
        destination,
        cable_m,
        segment,
    })
}

/// A group's place on a wired topology: its own cable on a hub (`cable`),
/// its segment in a chain (`segment`, counted from 1 in the file).
fn read_place(f: &mut Fields, m: &Medium) -> Result<(Option<f64>, usize), FieldError> {
    let cable_m = f.with("cable", topology::cable)?;
    if cable_m.is_some() && !matches!(m.topology, Topology::Hub { .. }) {
        return Err(f.err(
            "cable",
            "applies only on a hub: [medium] topology = { kind = \"hub\", ... }",
        ));
    }
    let segment = match &m.topology {
        Topology::Segments { lengths_m, .. } => {
            let n = lengths_m.len() as i64;
            let k = f.integer("segment", 1, n)?;
            f.require(
                "segment",
                k,
                &format!("the segment this group is on, 1 to {n}, e.g. segment = 1"),
            )? as usize
                - 1
        }
        _ => {
            if f.contains("segment") {
                return Err(f.err(
                    "segment",
                    "applies only to [medium] topology = { kind = \"segments\", ... }",
                ));
            }
            0
        }
    };
    Ok((cable_m, segment))
}
