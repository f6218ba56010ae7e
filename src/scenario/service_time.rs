//! A queue server's service time: `rate` (deterministic or exponential) or
//! a `service` table with its law (lognormal by median and p99 or mu and
//! sigma, exponential, deterministic, pareto, empirical from a file of
//! durations or a Prometheus histogram).

use super::durations::{duration, positive_duration};
use super::reader::{FieldError, Fields, Item};
use crate::service::{Delay, Empirical, Service};
use crate::units;
use toml::Value;

type Result<T> = std::result::Result<T, FieldError>;

/// A rate per second: "10000/s", "600/min", "2/h".
pub(super) fn rate(item: Item) -> Result<f64> {
    if let Some(v) = item
        .value
        .as_float()
        .or(item.value.as_integer().map(|i| i as f64))
    {
        return Err(item.err(format!(
            "{v} has no unit; write a rate in quotes with its unit of time, e.g. \"{v}/s\""
        )));
    }
    let s = item.str()?;
    let wrong = || {
        item.err(format!(
            "`{s}` is not a rate; write a number per unit of time, e.g. \"10000/s\", \"600/min\""
        ))
    };
    let (num, unit) = s.split_once('/').ok_or_else(wrong)?;
    let per = match unit.trim() {
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(wrong()),
    };
    let v: f64 = num.trim().replace('_', "").parse().map_err(|_| wrong())?;
    let r = v / per;
    if !(r > 0.0 && r.is_finite()) {
        return Err(item.err(format!(
            "`{s}` is not a positive rate; allowed: > 0, e.g. \"10/s\""
        )));
    }
    if !(1e-6..=1e12).contains(&r) {
        return Err(item.err(format!("`{s}` is out of range; allowed: 1e-6/s to 1e12/s")));
    }
    Ok(r)
}

/// A key that must be given, read by `read`; missing, an error saying what it is.
pub(super) fn required<T>(
    f: &mut Fields,
    key: &str,
    read: fn(Item) -> Result<T>,
    what: &str,
) -> Result<T> {
    let v = f.with(key, read)?;
    f.require(key, v, what)
}

/// The most values or buckets an empirical service time file may hold.
pub const MAX_EMPIRICAL: usize = 10_000_000;

/// The 0.99 quantile of the standard normal law.
const Z99: f64 = 2.326_347_874_040_841;

/// A queue server's service time: `rate` alone (deterministic) or with
/// `service = "exponential"`, or a `service` table with its law; as the
/// rate of one worker and the law.
pub(super) fn read_service(f: &mut Fields) -> Result<(f64, Service)> {
    let table = matches!(f.get("service"), Some(Value::Table(_)));
    if !table {
        let rate = required(
            f,
            "rate",
            rate,
            "the service rate, e.g. rate = \"10000/s\", or a service time law, e.g. service = { kind = \"lognormal\", median = \"20ms\", p99 = \"400ms\" }",
        )?;
        let mean = 1e12 / rate;
        let service = match f
            .choice("service", &["deterministic", "exponential"])?
            .as_deref()
        {
            Some("exponential") => Service::Exponential { mean },
            _ => Service::Deterministic { mean },
        };
        return Ok((rate, service));
    }
    if f.contains("rate") {
        return Err(f.err(
            "rate",
            "is the shorthand for a deterministic service time; give either `rate` or the `service` table, not both",
        ));
    }
    let service = f.with("service", read_service_law)?.expect("present");
    let mean = service.mean_ps();
    Ok((1e12 / mean, service))
}

fn read_service_law(item: Item) -> Result<Service> {
    let mut f = Fields::of(item)?;
    let kinds = [
        "deterministic",
        "exponential",
        "lognormal",
        "pareto",
        "empirical",
    ];
    let kind = f.choice("kind", &kinds)?;
    let kind = f.require("kind", kind, &format!("one of {}", kinds.join(", ")))?;
    let (service, keys): (Service, &[&str]) = match kind.as_str() {
        "deterministic" => {
            let v = required(
                &mut f,
                "value",
                positive_duration,
                "the service time, e.g. value = \"2ms\"",
            )?;
            (
                Service::Deterministic { mean: v as f64 },
                &["kind", "value"],
            )
        }
        "exponential" => {
            let v = required(
                &mut f,
                "mean",
                positive_duration,
                "the mean service time, e.g. mean = \"20ms\"",
            )?;
            (Service::Exponential { mean: v as f64 }, &["kind", "mean"])
        }
        "lognormal" => {
            let keys: &[&str] = &["kind", "median", "p99", "mu", "sigma"];
            let by_mu = f.contains("mu") || f.contains("sigma");
            let by_median = f.contains("median") || f.contains("p99");
            if by_mu && by_median {
                return Err(f.err(
                    if f.contains("mu") { "mu" } else { "sigma" },
                    "give either `median` and `p99` or `mu` and `sigma`, not both",
                ));
            }
            if by_mu {
                let mu = f.float("mu", -50.0, 50.0)?;
                let mu = f.require(
                    "mu",
                    mu,
                    "the mean of ln(service time in seconds), e.g. mu = -3.912 (a median of 20 ms)",
                )?;
                let sigma = f.float("sigma", 0.0, 10.0)?;
                let sigma = f.require(
                    "sigma",
                    sigma,
                    "the standard deviation of ln(service time), e.g. sigma = 1.288",
                )?;
                (Service::Lognormal { mu, sigma }, keys)
            } else {
                let median = required(
                    &mut f,
                    "median",
                    positive_duration,
                    "the median service time, e.g. median = \"20ms\" (with p99 = \"400ms\")",
                )?;
                let p99 = required(
                    &mut f,
                    "p99",
                    positive_duration,
                    "the 99th percentile, e.g. p99 = \"400ms\"",
                )?;
                if p99 <= median {
                    return Err(f.err(
                        "p99",
                        format!(
                            "{} is not above the median {}; a lognormal's p99 lies above its median",
                            units::format_ps(p99),
                            units::format_ps(median)
                        ),
                    ));
                }
                let mu = (median as f64 / 1e12).ln();
                let sigma = (p99 as f64 / median as f64).ln() / Z99;
                (Service::Lognormal { mu, sigma }, keys)
            }
        }
        "pareto" => {
            let scale = required(
                &mut f,
                "scale",
                positive_duration,
                "the least service time, e.g. scale = \"10ms\"",
            )?;
            let shape = f.float("shape", 0.0, 1e6)?;
            let shape = f.require("shape", shape, "the tail index alpha, e.g. shape = 2.5")?;
            if shape <= 1.0 {
                return Err(f.err(
                    "shape",
                    format!(
                        "{shape} gives an infinite mean service time; allowed: above 1, e.g. 2.5"
                    ),
                ));
            }
            (
                Service::Pareto {
                    scale: scale as f64,
                    shape,
                },
                &["kind", "scale", "shape"],
            )
        }
        _ => {
            let unit = f.with("unit", |i| {
                let u = i.str()?;
                time_ps(&format!("1{u}")).ok_or_else(|| {
                    i.err(format!(
                        "`{u}` is not a unit of time; allowed: ns, us, ms, s"
                    ))
                })
            })?;
            let file = f.with("file", |i| i.str().map(str::to_string))?;
            let file = f.require("file", file, "the file of service times, e.g. file = \"latencies.txt\" (one duration a line, or a Prometheus histogram)")?;
            let path = f.key_path("file");
            let e = read_empirical(&file, unit).map_err(|m| FieldError::new(path, m))?;
            (
                Service::Empirical(std::sync::Arc::new(e)),
                &["kind", "file", "unit"],
            )
        }
    };
    f.finish(keys)?;
    Ok(service)
}

/// A time with its unit, in picoseconds, if it is one (not negative).
fn time_ps(text: &str) -> Option<f64> {
    match units::parse_time(text) {
        Ok(units::TimeSpec::Ps(ps)) if (0.0..=super::MAX_DURATION_S * 1e12).contains(&ps) => {
            Some(ps)
        }
        _ => None,
    }
}

/// Reads an empirical service time file: a Prometheus histogram (lines
/// `name_bucket{le="0.05"} 24054`, bounds in seconds unless `unit` says)
/// or one duration a line ("23.5ms"; a bare number in `unit`).
fn read_empirical(file: &str, unit: Option<f64>) -> std::result::Result<Empirical, String> {
    let text = super::read_text(std::path::Path::new(file)).map_err(|e| e.to_string())?;
    let lines = text
        .lines()
        .enumerate()
        .map(|(k, l)| (k + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    if text.contains("le=\"") {
        let mut buckets: Vec<(f64, f64)> = Vec::new();
        for (n, l) in lines {
            if !l.contains("_bucket") {
                continue;
            }
            let bad = || {
                format!("{file}, line {n}: `{l}` is not a histogram bucket line such as `x_bucket{{le=\"0.05\"}} 24054`")
            };
            let le = l
                .split("le=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .ok_or_else(bad)?;
            let count: f64 = l
                .rsplit('}')
                .next()
                .and_then(|r| r.split_whitespace().next())
                .and_then(|c| c.parse().ok())
                .ok_or_else(bad)?;
            let bound = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse::<f64>()
                    .ok()
                    .filter(|b| *b >= 0.0)
                    .ok_or_else(bad)?
                    * unit.unwrap_or(1e12)
            };
            if buckets.iter().any(|&(b, _)| b == bound) {
                return Err(format!("{file}, line {n}: a second bucket le=\"{le}\"; the file must hold one histogram (one series)"));
            }
            buckets.push((bound, count));
        }
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let finite: Vec<(f64, f64)> = buckets
            .iter()
            .copied()
            .filter(|b| b.0.is_finite())
            .collect();
        let Some(&(last, total)) = finite.last() else {
            return Err(format!("{file}: no finite bucket bound found"));
        };
        if let Some(&(_, inf)) = buckets.iter().find(|b| b.0.is_infinite()) {
            if inf > total {
                return Err(format!(
                    "{file}: {} observations lie above the largest finite bound le={}, with no bound to draw them under; add a finite bucket above them",
                    inf - total,
                    last / unit.unwrap_or(1e12)
                ));
            }
        }
        if total.is_nan() || total <= 0.0 {
            return Err(format!("{file}: the histogram counts no observation"));
        }
        if finite.windows(2).any(|w| w[1].1 < w[0].1) {
            return Err(format!("{file}: the bucket counts decrease; a Prometheus histogram's counts are cumulative"));
        }
        if finite.len() > MAX_EMPIRICAL {
            return Err(format!("{file}: more than {MAX_EMPIRICAL} buckets"));
        }
        let mut lo = 0.0;
        let mut out = Vec::with_capacity(finite.len());
        for (hi, c) in finite {
            out.push((lo, hi, c / total));
            lo = hi;
        }
        return Ok(Empirical::Histogram(out));
    }
    let mut values = Vec::new();
    for (n, l) in lines {
        let v = match (l.parse::<f64>(), unit) {
            (Ok(x), Some(u)) if x >= 0.0 && x.is_finite() => x * u,
            (Ok(_), None) => {
                return Err(format!("{file}, line {n}: `{l}` has no unit; write e.g. \"{l}ms\", or give the file's unit, e.g. unit = \"ms\""))
            }
            _ => time_ps(l).ok_or_else(|| format!("{file}, line {n}: `{l}` is not a duration; write one a line, e.g. \"23.5ms\""))?,
        };
        values.push(v);
        if values.len() > MAX_EMPIRICAL {
            return Err(format!("{file}: more than {MAX_EMPIRICAL} values"));
        }
    }
    if values.is_empty() {
        return Err(format!("{file}: no values"));
    }
    values.sort_by(f64::total_cmp);
    if values.iter().all(|v| *v == 0.0) {
        return Err(format!(
            "{file}: every value is zero; a service takes some time"
        ));
    }
    Ok(Empirical::Values(values))
}

/// A delay: a fixed duration, or { kind = "abs-normal", mean, sd },
/// { kind = "exponential", mean }.
pub(super) fn read_delay(item: Item) -> Result<Delay> {
    if let Value::String(_) = item.value {
        return Ok(Delay::Fixed(duration(item)?));
    }
    let mut f = Fields::of(item)?;
    let kind = f.choice("kind", &["fixed", "abs-normal", "exponential"])?;
    let kind = f.require("kind", kind, "one of fixed, abs-normal, exponential")?;
    let (d, keys): (Delay, &[&str]) = match kind.as_str() {
        "fixed" => (
            Delay::Fixed(required(
                &mut f,
                "value",
                duration,
                "the delay, e.g. \"5ms\"",
            )?),
            &["kind", "value"],
        ),
        "abs-normal" => (
            Delay::AbsNormal {
                mean: required(&mut f, "mean", duration, "the mean, e.g. \"10ms\"")?,
                sd: required(
                    &mut f,
                    "sd",
                    duration,
                    "the standard deviation, e.g. \"2ms\"",
                )?,
            },
            &["kind", "mean", "sd"],
        ),
        _ => (
            Delay::Exponential {
                mean: required(&mut f, "mean", positive_duration, "the mean, e.g. \"10ms\"")?,
            },
            &["kind", "mean"],
        ),
    };
    f.finish(keys)?;
    Ok(d)
}
