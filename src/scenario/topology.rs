//! `[medium] topology`: how the stations are wired (a bus, a hub, or
//! segments joined by repeaters), and each group's place on it (`cable`,
//! `segment`).

use super::reader::{FieldError, Fields, Item};
use crate::engine::Time;
use crate::ethernet::Topology;
use crate::units::{self, TimeSpec, PS_PER_S};

/// The keys of `topology = { ... }`.
pub const TOPOLOGY_KEYS: &[&str] = &["kind", "cable", "repeater_delay", "segments"];

/// 802.3's largest collision domain (clause 4.4.2, maxStations... see
/// docs/model.md): a hub or a chain of segments holds at most this many
/// stations, and the run scans every signal of it.
pub const MAX_STATIONS_WIRED: u64 = 1024;

/// The most segments a chain may have (802.3 allows five between any two
/// stations; lessons may break that rule, within reason).
const MAX_SEGMENTS: usize = 64;

/// Reads `topology = { kind = ..., ... }` for a medium of bit time `bit_ps`;
/// `length_m` is the medium's length, a hub's cable unless told.
pub fn read(item: Item, bit_ps: Time, length_m: f64) -> Result<Topology, FieldError> {
    if let Some(word) = item.value.as_str() {
        let example = match word.trim() {
            "hub" => "{ kind = \"hub\", cable = \"100m\", repeater_delay = \"46bit\" }",
            "segments" => {
                "{ kind = \"segments\", segments = [\"500m\", \"500m\"], repeater_delay = \"8bit\" }"
            }
            "bus" => "{ kind = \"bus\" } (or no `topology`: a bus of `length`)",
            _ => {
                "{ kind = \"hub\", cable = \"100m\", repeater_delay = \"46bit\" }; kind is one of \
                 bus, hub, segments"
            }
        };
        return Err(item.err(format!(
            "`{word}` alone is not a topology; write a table with its kind and what it needs, \
             e.g. topology = {example}"
        )));
    }
    let mut f = Fields::of(item)?;
    f.allow(TOPOLOGY_KEYS)?;
    let kind = f.choice("kind", Topology::KINDS)?;
    let kind = f.require(
        "kind",
        kind,
        "one of bus, hub, segments, e.g. topology = { kind = \"hub\", cable = \"100m\", repeater_delay = \"46bit\" }",
    )?;
    let only = |f: &Fields, key: &str, kinds: &str| -> Result<(), FieldError> {
        if f.contains(key) {
            return Err(f.err(
                key,
                format!("applies only to kind = {kinds}; remove it or change `kind`"),
            ));
        }
        Ok(())
    };
    let topology = match kind.as_str() {
        "bus" => {
            for key in ["cable", "repeater_delay", "segments"] {
                only(&f, key, "\"hub\" or \"segments\"")?;
            }
            Topology::Bus
        }
        "hub" => {
            only(&f, "segments", "\"segments\"")?;
            let cable_m = f.with("cable", cable)?.unwrap_or(length_m);
            Topology::Hub {
                cable_m,
                repeater_delay_ps: repeater_delay(&mut f, bit_ps)?,
            }
        }
        _ => {
            only(&f, "cable", "\"hub\" (or a group's `cable` on a hub)")?;
            let lengths_m = f.with("segments", |i| {
                let a = i.array()?;
                if a.is_empty() || a.len() > MAX_SEGMENTS {
                    return Err(i.err(format!(
                        "{} segments; allowed: 1 to {MAX_SEGMENTS}, e.g. segments = [\"500m\", \"500m\", \"500m\"]",
                        a.len()
                    )));
                }
                let mut out = Vec::with_capacity(a.len());
                for (k, v) in a.iter().enumerate() {
                    let p = format!("{}.{k}", i.path);
                    out.push(cable(Item { path: &p, value: v })?);
                }
                Ok(out)
            })?;
            let lengths_m = f.require(
                "segments",
                lengths_m,
                "the length of each segment in order, e.g. segments = [\"500m\", \"500m\"]",
            )?;
            Topology::Segments {
                lengths_m,
                repeater_delay_ps: repeater_delay(&mut f, bit_ps)?,
            }
        }
    };
    f.finish(TOPOLOGY_KEYS)?;
    Ok(topology)
}

/// A cable or segment length: 0 m to 10 000 km.
pub fn cable(i: Item) -> Result<f64, FieldError> {
    let x = i.quantity(units::parse_length, |v| format!("{v}m"))?;
    if !(0.0..=1e7).contains(&x) {
        return Err(i.err("must be between 0m and 10000km, e.g. \"100m\""));
    }
    Ok(x)
}

fn repeater_delay(f: &mut Fields, bit_ps: Time) -> Result<Time, FieldError> {
    let d = f.time("repeater_delay")?;
    let d = f.require(
        "repeater_delay",
        d,
        "a repeater's delay from one port to the others, in bits or time units, e.g. \
         repeater_delay = \"46bit\" (half the 92 bit times 802.3 counts for a Class II \
         100 Mb/s repeater, there and back)",
    )?;
    if let TimeSpec::Slots(_) = d {
        return Err(f.err(
            "repeater_delay",
            "give it in bits or time units, e.g. \"46bit\"",
        ));
    }
    let ps = d.to_ps(bit_ps, 0);
    if ps > PS_PER_S {
        return Err(f.err(
            "repeater_delay",
            "is longer than 1 s; a repeater delays a signal by some bit times, e.g. \"46bit\"",
        ));
    }
    Ok(ps.round() as Time)
}
