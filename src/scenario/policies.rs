//! Reading `backoff = { kind = ..., ... }` into a [`BackoffSpec`], and the
//! catalogue of policies (formula, parameters, defaults, source) that
//! `csmacd policies` prints and docs/policies.md expands. The defaults used
//! when a key is absent are read from the catalogue, so the two cannot drift.

use super::reader::{FieldError, Fields, Item};
use super::{Medium, MAX_DURATION_S};
use crate::backoff::{BackoffSpec, ExprPolicy, PolicyWorld, WaitUnit, Windows};
use crate::engine::Time;
use crate::units::{self, PS_PER_S};
use std::sync::Arc;

/// One parameter of a policy: its key, its default as a scenario writes it,
/// and what it means.
pub struct Param {
    pub key: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// One policy as `csmacd policies` lists it.
pub struct PolicyDoc {
    pub kind: &'static str,
    pub formula: &'static str,
    pub params: &'static [Param],
    pub source: &'static str,
    /// The policy with its defaults written in the expression language
    /// (`kind = "expr"`, in slots), which draws what it draws.
    pub written: Written,
}

/// A policy as `kind = "expr"` writes it: its keys, "" for none.
pub struct Written {
    pub wait: &'static str,
    pub init: &'static str,
    pub on_failure: &'static str,
    pub on_success: &'static str,
}

const fn w(wait: &'static str) -> Written {
    Written {
        wait,
        init: "",
        on_failure: "",
        on_success: "",
    }
}

impl Written {
    /// The TOML table that writes it.
    pub fn toml(&self) -> String {
        let mut s = format!("{{ kind = \"expr\", wait = \"{}\"", self.wait);
        for (k, v) in [
            ("init", self.init),
            ("on_failure", self.on_failure),
            ("on_success", self.on_success),
        ] {
            if !v.is_empty() {
                s += &format!(", {k} = \"{v}\"");
            }
        }
        s + ", unit = \"slots\" }"
    }
}

const fn p(key: &'static str, default: &'static str, meaning: &'static str) -> Param {
    Param {
        key,
        default,
        meaning,
    }
}

const ATTEMPT: Param = p(
    "attempt_limit",
    "16",
    "collisions after which the frame is discarded",
);
const BASE: Param = p("base", "1slot", "first wait (duration or slots)");
const CAP: Param = p(
    "cap",
    "1024slot",
    "longest wait before jitter (duration or slots)",
);

/// Every policy, in the order `csmacd policies` prints them. n counts the
/// collisions of the current frame (1 after the first); U(a, b) is uniform.
pub const POLICIES: &[PolicyDoc] = &[
    PolicyDoc {
        kind: "beb",
        formula: "r uniform on 0..2^k-1 slots, k = min(n, backoff_limit)",
        params: &[p("backoff_limit", "10", "largest exponent k"), ATTEMPT],
        source: "IEEE 802.3 clause 4.2.3.2.5 (truncated binary exponential backoff)",
        written: w("randint(0, pow(2, min(n, 10)) - 1)"),
    },
    PolicyDoc {
        kind: "exponential",
        formula: "r uniform on 0..W-1 slots, W = min(max_window, ceil(factor^n))",
        params: &[
            p("factor", "2", "window growth per collision, any real > 1"),
            p("max_window", "1024", "largest window in slots"),
            ATTEMPT,
        ],
        source: "generalised BEB; factor 2 and max_window 1024 give beb",
        written: w("randint(0, min(1024, ceil(pow(2, n))) - 1)"),
    },
    PolicyDoc {
        kind: "fixed",
        formula: "r uniform on 0..window-1 slots, whatever n",
        params: &[p("window", "16", "window in slots"), ATTEMPT],
        source: "the non-adaptive baseline",
        written: w("randint(0, 15)"),
    },
    PolicyDoc {
        kind: "constant",
        formula: "delay, deterministic",
        params: &[p("delay", "1slot", "the wait (duration or slots)"), ATTEMPT],
        source: "fixed-interval retry",
        written: w("1"),
    },
    PolicyDoc {
        kind: "linear",
        formula: "base * n, deterministic",
        params: &[BASE, ATTEMPT],
        source: "linear retry",
        written: w("1 * n"),
    },
    PolicyDoc {
        kind: "linear-window",
        formula: "r uniform on 0..step*n slots (both ends included)",
        params: &[p("step", "1", "window growth per collision in slots"), ATTEMPT],
        source: "linear backoff (e.g. Tanenbaum's comparison with BEB)",
        written: w("randint(0, 1 * n)"),
    },
    PolicyDoc {
        kind: "exponential-no-jitter",
        formula: "min(cap, base * 2^(n-1)), deterministic",
        params: &[BASE, CAP, ATTEMPT],
        source: "AWS Architecture Blog, 'Exponential Backoff and Jitter' (Brooker, 2015)",
        written: w("min(1024, 1 * pow(2, n - 1))"),
    },
    PolicyDoc {
        kind: "additive-jitter",
        formula: "min(cap, base * 2^(n-1)) + U(0, jitter); cap_after_jitter: min(cap, base * 2^(n-1) + U(0, jitter))",
        params: &[
            BASE,
            CAP,
            p("jitter", "1slot", "largest added jitter (duration or slots)"),
            p("cap_after_jitter", "false", "apply the cap after adding the jitter"),
            ATTEMPT,
        ],
        source: "retry helpers such as 100 ms initial, 30 s cap, 0-100 ms jitter (e.g. Google Cloud client libraries)",
        written: w("min(1024, 1 * pow(2, n - 1)) + uniform(0, 1)"),
    },
    PolicyDoc {
        kind: "compounding-jitter",
        formula: "d_1 = min(cap, base) + U(0, jitter); d_n = min(cap, d_(n-1) * factor) + U(0, jitter)",
        params: &[
            BASE,
            CAP,
            p("factor", "2", "growth per collision, > 1"),
            p("jitter", "1slot", "largest added jitter, carried into the next wait"),
            ATTEMPT,
        ],
        source: "retry loops that grow the previous (jittered) sleep",
        written: w("(n == 1 ? min(1024, 1) : min(1024, prev * 2)) + uniform(0, 1)"),
    },
    PolicyDoc {
        kind: "proportional-jitter",
        formula: "max(0, min(cap, base * 2^(n-1)) * (1 + U(-f, f)))",
        params: &[BASE, CAP, p("f", "0.2", "relative jitter, >= 0"), ATTEMPT],
        source: "randomization factor of Google's HTTP client / gRPC connection backoff",
        written: w("max(0, min(1024, 1 * pow(2, n - 1)) * (1 + uniform(-0.2, 0.2)))"),
    },
    PolicyDoc {
        kind: "full-jitter",
        formula: "U(0, min(cap, base * 2^(n-1)))",
        params: &[BASE, CAP, ATTEMPT],
        source: "AWS Architecture Blog, 'Exponential Backoff and Jitter' (Brooker, 2015)",
        written: w("uniform(0, min(1024, 1 * pow(2, n - 1)))"),
    },
    PolicyDoc {
        kind: "equal-jitter",
        formula: "t/2 + U(0, t/2), t = min(cap, base * 2^(n-1))",
        params: &[BASE, CAP, ATTEMPT],
        source: "AWS Architecture Blog, 'Exponential Backoff and Jitter' (Brooker, 2015)",
        written: w("min(1024, pow(2, n - 1)) / 2 + uniform(0, min(1024, pow(2, n - 1)) / 2)"),
    },
    PolicyDoc {
        kind: "decorrelated-jitter",
        formula: "d = min(cap, U(base, 3 * previous d)), previous d = base for a new frame",
        params: &[BASE, CAP, ATTEMPT],
        source: "AWS Architecture Blog, 'Exponential Backoff and Jitter' (Brooker, 2015)",
        written: w("min(1024, uniform(1, 3 * (n == 1 ? 1 : prev)))"),
    },
    PolicyDoc {
        kind: "geometric",
        formula: "transmit in each slot with probability p: r slots, P(r = k) = (1-p)^k p",
        params: &[p("p", "0.5", "per-slot transmission probability, 1e-6 to 1"), ATTEMPT],
        source: "Metcalfe & Boggs 1976, 'Ethernet: distributed packet switching for local computer networks' (p = 1/Q optimal)",
        written: w("geometric(0.5)"),
    },
    PolicyDoc {
        kind: "blam",
        formula: "r uniform on 0..2^k-1 slots, k = min(m, backoff_limit), m = collisions observed on the channel since its last success",
        params: &[p("backoff_limit", "10", "largest exponent k"), ATTEMPT],
        source: "Molle 1994, 'A New Binary Logarithmic Arbitration Method for Ethernet' (IEEE 802.3w proposal); see docs/policies.md for this reading",
        written: w("randint(0, pow(2, min(max(observed, 1), 10)) - 1)"),
    },
    PolicyDoc {
        kind: "mild",
        formula: "r uniform on 0..W-1 slots; on each own collision W = min(max_window, ceil(W * factor)), on each success W = max(min_window, W - decrease); W kept across frames",
        params: &[
            p("min_window", "2", "smallest window in slots"),
            p("max_window", "1024", "largest window in slots"),
            p("factor", "1.5", "multiplicative increase, > 1"),
            p("decrease", "1", "linear decrease in slots"),
            ATTEMPT,
        ],
        source: "Bharghavan, Demers, Shenker & Zhang 1994, 'MACAW: a media access protocol for wireless LANs'",
        written: Written { wait: "randint(0, w - 1)", init: "w = 2", on_failure: "w = min(1024, ceil(w * 1.5))", on_success: "w = max(2, w - 1)" },
    },
];

/// The policy names a scenario may use.
/// A policy as written, in one short line: its kind, then each other key
/// as `key=value` in the order written ("beb backoff_limit=6"); nested
/// tables by dotted keys.
pub fn short_text(v: &toml::Value) -> String {
    fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
        match v {
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, x, out);
                }
            }
            // A percentage stands for its fraction, as everywhere.
            toml::Value::String(s) => match s
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<f64>().ok())
            {
                Some(p) => out.push(format!("{prefix}={}", p / 100.0)),
                None => out.push(format!("{prefix}={s}")),
            },
            other => out.push(format!("{prefix}={}", other.to_string().trim())),
        }
    }
    // A bare name is its table with the defaults.
    if let toml::Value::String(s) = v {
        return s.clone();
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(k) = v.get("kind").and_then(toml::Value::as_str) {
        parts.push(k.to_string());
    }
    let mut rest = Vec::new();
    if let toml::Value::Table(t) = v {
        for (k, x) in t.iter().filter(|(k, _)| *k != "kind") {
            walk(k, x, &mut rest);
        }
    } else {
        walk("", v, &mut rest);
    }
    parts.extend(rest);
    parts.join(" ")
}

pub fn kinds() -> Vec<&'static str> {
    POLICIES
        .iter()
        .map(|p| p.kind)
        .chain(["expr", "windows"])
        .collect()
}

fn doc(kind: &str) -> &'static PolicyDoc {
    POLICIES
        .iter()
        .find(|d| d.kind == kind)
        .unwrap_or(&POLICIES[0])
}

/// Reads the keys of one policy table, falling back on the catalogue's defaults.
struct PolicyReader<'a> {
    f: Fields<'a>,
    doc: &'static PolicyDoc,
    /// One bit time and one slot in picoseconds: what "96bit" and "4slot" mean.
    bit_ps: Time,
    slot_ps: Time,
}

impl PolicyReader<'_> {
    fn default(&self, key: &str) -> &'static str {
        self.doc
            .params
            .iter()
            .find(|p| p.key == key)
            .map_or("0", |p| p.default)
    }

    fn integer(&mut self, key: &str, min: i64, max: i64) -> Result<u64, FieldError> {
        let d = self.default(key).parse::<i64>().unwrap_or(min);
        Ok(self.f.integer(key, min, max)?.unwrap_or(d) as u64)
    }

    fn float(&mut self, key: &str, min: f64, max: f64) -> Result<f64, FieldError> {
        let d = self.default(key).parse::<f64>().unwrap_or(min);
        Ok(self.f.float(key, min, max)?.unwrap_or(d))
    }

    /// A probability or relative amount: a number, or a percentage ("20%").
    fn fraction(&mut self, key: &str, min: f64, max: f64) -> Result<f64, FieldError> {
        let d = self.default(key).parse::<f64>().unwrap_or(min);
        Ok(self.f.fraction(key, min, max)?.unwrap_or(d))
    }

    /// A real number strictly greater than 1 (a growth factor).
    fn factor(&mut self, key: &str) -> Result<f64, FieldError> {
        let v = self.float(key, 1.0, 1e6)?;
        if v <= 1.0 {
            return Err(self.f.err(
                key,
                format!("{v} does not grow; allowed: a real number > 1 (and <= 1e6)"),
            ));
        }
        Ok(v)
    }

    /// A duration ("51.2us", "10ms") or a slot count ("4slot").
    fn duration(&mut self, key: &str) -> Result<Time, FieldError> {
        let spec = match self.f.time(key)? {
            Some(t) => t,
            None => units::parse_time(self.default(key)).map_err(|e| self.f.err(key, e.0))?,
        };
        let ps = spec.to_ps(self.bit_ps, self.slot_ps);
        if ps > MAX_DURATION_S * PS_PER_S {
            return Err(self.f.err(
                key,
                format!("is longer than the {MAX_DURATION_S:e} s the simulator accepts"),
            ));
        }
        Ok(ps.round() as Time)
    }

    /// `base` and `cap`, with 0 < base <= cap.
    fn base_cap(&mut self) -> Result<(Time, Time), FieldError> {
        let base = self.duration("base")?;
        if base == 0 {
            return Err(self.f.err(
                "base",
                "must be greater than zero, e.g. \"51.2us\" or \"1slot\"",
            ));
        }
        let cap = self.duration("cap")?;
        if cap < base {
            return Err(self.f.err(
                "cap",
                format!(
                    "{} is shorter than base {}; allowed: cap >= base",
                    units::format_ps(cap),
                    units::format_ps(base)
                ),
            ));
        }
        Ok((base, cap))
    }
}

/// Reads `backoff = { kind = ..., ... }`: the keys its kind allows, the
/// catalogue's defaults for the others. A bare name (`backoff = "beb"`)
/// stands for `{ kind = "beb" }` when every parameter of that policy has a
/// default.
pub fn read(item: Item, m: &Medium) -> Result<BackoffSpec, FieldError> {
    read_in_units(item, m.bit_ps, m.slot_ps)
}

/// As [`read`], where "96bit" and "4slot" mean `bit_ps` and `slot_ps`
/// picoseconds (a world without a medium gives its own slot).
pub fn read_in_units(item: Item, bit_ps: Time, slot_ps: Time) -> Result<BackoffSpec, FieldError> {
    read_policy(item, bit_ps, slot_ps, PolicyWorld::Bus)
}

/// As [`read_in_units`], for the world the policy is written in (which
/// names a written policy may read, and its default unit).
pub fn read_policy(
    item: Item,
    bit_ps: Time,
    slot_ps: Time,
    world: PolicyWorld,
) -> Result<BackoffSpec, FieldError> {
    if matches!(item.value.as_str(), Some("expr" | "windows")) {
        let name = item.value.as_str().unwrap_or_default();
        return Err(item.err(format!(
            "`{name}` needs its keys; write a table, e.g. {}",
            if name == "expr" {
                "{ kind = \"expr\", wait = \"randint(0, pow(2, min(n, 10)) - 1)\", unit = \"slots\" }"
            } else {
                "{ kind = \"windows\", windows = [2, 3, 5, 8, 13], repeat = false }"
            }
        )));
    }
    if let toml::Value::String(name) = item.value {
        let all = kinds();
        let Some(d) = POLICIES.iter().find(|d| d.kind == name.as_str()) else {
            return Err(item.err(format!(
                "`{name}` is not a backoff policy{}; allowed: {} (or a table, e.g. {{ kind = \"beb\", attempt_limit = 16 }})",
                super::reader::did_you_mean(name, &all),
                all.join(", ")
            )));
        };
        if let Some(p) = d.params.iter().find(|p| p.default.is_empty()) {
            return Err(item.err(format!(
                "`{name}` needs `{}`; write a table, e.g. {{ kind = \"{name}\", {} = ... }}",
                p.key, p.key
            )));
        }
        let mut table = toml::Table::new();
        table.insert("kind".into(), item.value.clone());
        let value = toml::Value::Table(table);
        return read_in_units(
            Item {
                path: item.path,
                value: &value,
            },
            bit_ps,
            slot_ps,
        );
    }
    let mut f = Fields::of(item)?;
    let all = kinds();
    let kind = f.choice("kind", &all)?;
    let kind = f.require("kind", kind, &format!("one of {}", all.join(", ")))?;
    if kind == "expr" {
        return read_expr(f, slot_ps, world);
    }
    if kind == "windows" {
        return read_windows(f, slot_ps);
    }
    let doc = doc(&kind);
    let mut r = PolicyReader {
        f,
        doc,
        bit_ps,
        slot_ps,
    };
    let attempt_limit = r.integer("attempt_limit", 1, 1_000_000)? as u32;
    use BackoffSpec::*;
    let spec = match kind.as_str() {
        "beb" | "blam" => {
            // 2^40 slots of 51.2 us are 1.8 years: ample, and far from overflow.
            let backoff_limit = r.integer("backoff_limit", 0, 40)? as u32;
            if kind == "beb" {
                Beb {
                    backoff_limit,
                    attempt_limit,
                }
            } else {
                Blam {
                    backoff_limit,
                    attempt_limit,
                }
            }
        }
        "exponential" => Exponential {
            factor: r.factor("factor")?,
            max_window: r.integer("max_window", 1, 1 << 40)?,
            attempt_limit,
        },
        "fixed" => Fixed {
            window: r.integer("window", 1, 1 << 40)?,
            attempt_limit,
        },
        "constant" => Constant {
            delay: r.duration("delay")?,
            attempt_limit,
        },
        "linear" => Linear {
            base: r.duration("base")?,
            attempt_limit,
        },
        "linear-window" => LinearWindow {
            step: r.integer("step", 1, 1 << 20)?,
            attempt_limit,
        },
        "exponential-no-jitter" | "full-jitter" | "equal-jitter" | "decorrelated-jitter" => {
            let (base, cap) = r.base_cap()?;
            match kind.as_str() {
                "exponential-no-jitter" => ExponentialNoJitter {
                    base,
                    cap,
                    attempt_limit,
                },
                "full-jitter" => FullJitter {
                    base,
                    cap,
                    attempt_limit,
                },
                "equal-jitter" => EqualJitter {
                    base,
                    cap,
                    attempt_limit,
                },
                _ => DecorrelatedJitter {
                    base,
                    cap,
                    attempt_limit,
                },
            }
        }
        "additive-jitter" => {
            let (base, cap) = r.base_cap()?;
            let jitter = r.duration("jitter")?;
            let cap_after_jitter = r.f.boolean("cap_after_jitter")?.unwrap_or(false);
            AdditiveJitter {
                base,
                cap,
                jitter,
                cap_after_jitter,
                attempt_limit,
            }
        }
        "compounding-jitter" => {
            let (base, cap) = r.base_cap()?;
            CompoundingJitter {
                base,
                cap,
                factor: r.factor("factor")?,
                jitter: r.duration("jitter")?,
                attempt_limit,
            }
        }
        "proportional-jitter" => {
            let (base, cap) = r.base_cap()?;
            ProportionalJitter {
                base,
                cap,
                f: r.fraction("f", 0.0, 100.0)?,
                attempt_limit,
            }
        }
        "geometric" => {
            let pr = r.fraction("p", 1e-6, 1.0)?;
            Geometric {
                p: pr,
                attempt_limit,
            }
        }
        _ => {
            let min_window = r.integer("min_window", 1, 1 << 40)?;
            let max_window = r.integer("max_window", 1, 1 << 40)?;
            if max_window < min_window {
                return Err(r.f.err(
                    "max_window",
                    format!("{max_window} is below min_window {min_window}; allowed: max_window >= min_window"),
                ));
            }
            Mild {
                min_window,
                max_window,
                factor: r.factor("factor")?,
                decrease: r.integer("decrease", 0, 1 << 40)?,
                attempt_limit,
            }
        }
    };
    let max = spec.max_delay_ps(slot_ps, attempt_limit);
    if max > MAX_DURATION_S * PS_PER_S {
        return Err(r.f.err(
            "kind",
            format!(
                "these parameters allow waits of {max:.3e} ps, beyond the {MAX_DURATION_S:e} s the simulator accepts; use smaller windows or caps"
            ),
        ));
    }
    let keys: Vec<&str> = std::iter::once("kind")
        .chain(doc.params.iter().map(|p| p.key))
        .collect();
    r.f.finish(&keys)?;
    Ok(spec)
}

/// The units a written policy's wait may be in, with picoseconds per unit.
const WAIT_UNITS: &[(&str, f64)] = &[("s", 1e12), ("ms", 1e9), ("us", 1e6)];

/// `{ kind = "expr", wait = "...", unit = ..., init, on_success,
/// on_failure, attempt_limit }`: read, checked, and sampled.
fn read_expr(mut f: Fields, slot_ps: Time, world: PolicyWorld) -> Result<BackoffSpec, FieldError> {
    let allowed: &[&str] = match world {
        PolicyWorld::Bus => &[
            "kind",
            "wait",
            "unit",
            "init",
            "on_success",
            "on_failure",
            "attempt_limit",
        ],
        PolicyWorld::Service => &["kind", "wait", "unit", "init", "on_success", "on_failure"],
    };
    // (A client group's `attempt_limit` is refused before: read_backoff in
    // scenario/service_group.rs.)
    f.allow(allowed)?;
    let wait = f.string("wait")?;
    let wait = f.require(
        "wait",
        wait,
        "the wait after the n-th failure, e.g. wait = \"randint(0, pow(2, min(n, 10)) - 1)\"",
    )?;
    let units: Vec<&str> = std::iter::once("slots")
        .chain(WAIT_UNITS.iter().map(|(u, _)| *u))
        .collect();
    let unit_name = f.choice("unit", &units)?.unwrap_or_else(|| {
        match world {
            PolicyWorld::Bus => "slots",
            PolicyWorld::Service => "s",
        }
        .to_string()
    });
    let unit = match WAIT_UNITS.iter().find(|(u, _)| *u == unit_name) {
        Some((_, ps)) => WaitUnit::Time(*ps),
        None if slot_ps == 0 => {
            return Err(f.err(
                "unit",
                "`slots` needs the group's `slot` (e.g. slot = \"10ms\"); or give a time unit: s, ms, us",
            ))
        }
        None => WaitUnit::Slots,
    };
    let attempt_limit = match world {
        PolicyWorld::Bus => f.integer("attempt_limit", 1, 1_000_000)?.unwrap_or(16) as u32,
        PolicyWorld::Service => u32::MAX,
    };
    let text = |f: &mut Fields, k: &str| f.string(k).map(Option::unwrap_or_default);
    let init = text(&mut f, "init")?;
    let on_success = text(&mut f, "on_success")?;
    let on_failure = text(&mut f, "on_failure")?;
    let policy = ExprPolicy::read(
        world,
        &wait,
        &init,
        &on_success,
        &on_failure,
        unit,
        &unit_name,
        attempt_limit,
    )
    .map_err(|(key, e)| f.err(key.key(), e.to_string()))?;
    let spec = BackoffSpec::Expr(Arc::new(policy));
    // Sampled once when read: an expression that cannot give a wait for
    // some n fails here, with the n, rather than in the middle of a run.
    // (A client group samples its own, once it knows its `max_retries`.)
    if world == PolicyWorld::Bus {
        if let Err(e) = sample_waits(&spec, slot_ps, 1) {
            return Err(f.err("wait", e));
        }
    }
    f.finish(allowed)?;
    Ok(spec)
}

/// `{ kind = "windows", windows = [2, 3, 5, 8, 13], repeat = false,
/// attempt_limit = 16 }`.
fn read_windows(mut f: Fields, slot_ps: Time) -> Result<BackoffSpec, FieldError> {
    let keys = ["kind", "windows", "repeat", "attempt_limit"];
    f.allow(&keys)?;
    let list = f.with("windows", |item| {
        let a = item.array()?;
        if a.is_empty() {
            return Err(
                item.err("is empty; give at least one window, e.g. windows = [2, 3, 5, 8, 13]")
            );
        }
        a.iter()
            .enumerate()
            .map(|(k, v)| match v.as_integer() {
                Some(w) if (1..=1 << 40).contains(&w) => Ok(w as u64),
                _ => Err(FieldError::new(
                    format!("{}.{k}", item.path),
                    format!("{v} is not a window; allowed: whole numbers of slots from 1 to 2^40"),
                )),
            })
            .collect::<Result<Vec<u64>, FieldError>>()
    })?;
    let windows = f.require(
        "windows",
        list,
        "the window (in slots) after each failure, e.g. windows = [2, 3, 5, 8, 13]",
    )?;
    let repeat = f.boolean("repeat")?.unwrap_or(false);
    let attempt_limit = f.integer("attempt_limit", 1, 1_000_000)?.unwrap_or(16) as u32;
    if slot_ps == 0 {
        return Err(f.err(
            "kind",
            "`windows` waits a whole number of slots; give the group's `slot`, e.g. slot = \"10ms\"",
        ));
    }
    let spec = BackoffSpec::Windows(Arc::new(Windows {
        windows,
        repeat,
        attempt_limit,
    }));
    let max = spec.max_delay_ps(slot_ps, attempt_limit);
    if max > MAX_DURATION_S * PS_PER_S {
        return Err(f.err(
            "windows",
            format!("allows waits of {max:.3e} ps, beyond the {MAX_DURATION_S:e} s the simulator accepts"),
        ));
    }
    f.finish(&keys)?;
    Ok(spec)
}

/// The n a written policy is sampled at: 1 to its attempt limit, at most
/// this many (clients without `max_retries` retry without limit).
pub const SAMPLED_FAILURES: u32 = 64;

/// The range of waits (picoseconds) a policy draws after each failure n = 1,
/// 2, ... (up to its attempt limit, at most [`SAMPLED_FAILURES`]), from
/// `draws` draws each on a fixed stream, with the state as a station's
/// first frame has it and every earlier draw of the frame made; an
/// expression that cannot give a wait is an error naming n.
pub fn sample_waits(
    spec: &BackoffSpec,
    slot_ps: Time,
    draws: u32,
) -> Result<Vec<(u32, f64, f64)>, String> {
    use crate::backoff::{BackoffState, ChannelHistory};
    use rand::SeedableRng;
    let limit = spec.attempt_limit().clamp(1, SAMPLED_FAILURES + 1) - 1;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5a3_1e5);
    let mut out = Vec::new();
    let mut frames: Vec<BackoffState> =
        (0..draws.max(1)).map(|_| BackoffState::new(spec)).collect();
    let seen = crate::backoff::Context {
        slot: slot_ps,
        observed: 0,
        retry_after: 0,
    };
    for n in 1..=limit.max(1) {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for st in &mut frames {
            st.on_collision(spec, n, &seen);
            let d = st
                .draw(spec, n, slot_ps, &ChannelHistory::default(), 0, &mut rng)
                .map_err(|e| format!("at n = {n}: {}", e.message))?;
            let s = d.delay as f64;
            lo = lo.min(s);
            hi = hi.max(s);
        }
        out.push((n, lo, hi));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_defaults_parse() {
        for d in POLICIES {
            for p in d.params {
                let ok = p.default.parse::<f64>().is_ok()
                    || p.default.parse::<bool>().is_ok()
                    || units::parse_time(p.default).is_ok();
                assert!(ok, "{}: default of {} = {}", d.kind, p.key, p.default);
            }
        }
    }
}
