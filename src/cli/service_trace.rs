//! `csmacd trace` of a service scenario: one row per attempt (who sent it,
//! when it reached the server and began service, how it ended, the wait
//! drawn and the gates' decision), as text, CSV or JSON lines.

use super::{CliError, CliResult};
use crate::engine::Time;
use crate::service::{self, AttemptRow};
use crate::units::format_ps;
use anyhow::anyhow;
use std::io::Write;

/// The columns of a service trace's CSV, in order.
pub const COLUMNS: &[&str] = &[
    "group",
    "client",
    "call",
    "attempt",
    "sent_s",
    "arrives_s",
    "starts_s",
    "ends_s",
    "outcome",
    "wait_s",
    "decision",
];

/// The most attempts a trace may keep (about 150 bytes each).
const MAX_ROWS: f64 = 2e7;

/// Seconds, exact to the picosecond, or empty.
fn secs(t: Option<Time>) -> String {
    let Some(ps) = t else { return String::new() };
    let whole = ps / 1_000_000_000_000;
    let frac = ps % 1_000_000_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:012}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// Seconds to the microsecond, for the text form.
fn text_time(t: Option<Time>) -> String {
    t.map_or("-".to_string(), |ps| format!("{:.6}", ps as f64 / 1e12))
}

fn text_line(r: &AttemptRow) -> String {
    format!(
        "{:>12} {:<12} {:>8} {:>8} {:>3} {:>12} {:>12} {:>12} {:<15} {}{}",
        text_time(Some(r.sent)),
        r.group,
        r.client,
        r.call,
        r.attempt,
        text_time(r.arrives),
        text_time(r.starts),
        text_time(r.ends),
        r.outcome,
        r.decision,
        r.wait
            .map_or(String::new(), |w| format!(" (wait {})", text_time(Some(w))))
    )
}

fn csv_line(r: &AttemptRow) -> String {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    let cells = [
        r.group.clone(),
        r.client.to_string(),
        r.call.to_string(),
        r.attempt.to_string(),
        secs(Some(r.sent)),
        secs(r.arrives),
        secs(r.starts),
        secs(r.ends),
        r.outcome.to_string(),
        secs(r.wait),
        r.decision.to_string(),
    ];
    let _ = w.write_record(&cells);
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

fn jsonl_line(r: &AttemptRow) -> String {
    let mut o = serde_json::Map::new();
    o.insert("group".into(), r.group.clone().into());
    o.insert("client".into(), r.client.into());
    o.insert("call".into(), r.call.into());
    o.insert("attempt".into(), r.attempt.into());
    let mut time = |k: &str, t: Option<Time>| {
        if let Some(ps) = t {
            o.insert(k.into(), (ps as f64 / 1e12).into());
        }
    };
    time("sent_s", Some(r.sent));
    time("arrives_s", r.arrives);
    time("starts_s", r.starts);
    time("ends_s", r.ends);
    time("wait_s", r.wait);
    o.insert("outcome".into(), r.outcome.into());
    o.insert("decision".into(), r.decision.into());
    serde_json::Value::Object(o).to_string()
}

/// How the rows are printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    Text,
    Csv,
    Jsonl,
}

/// What `csmacd trace` was asked, for a service scenario.
pub struct Args {
    pub until: String,
    pub from: Option<String>,
    pub stations: bool,
    pub seed: Option<u64>,
    pub format: Format,
}

/// Traces a service scenario up to --until (a time with a unit), from
/// --from on, its first replication.
pub fn run(args: &Args, mut sc: service::Scenario) -> CliResult {
    if args.stations {
        return Err(CliError::usage(anyhow!(
            "--stations: a service scenario has clients, not stations; its trace lists every attempt"
        )));
    }
    let time = |flag: &str, text: &str| -> Result<Time, CliError> {
        match crate::units::parse_time(text) {
            Ok(crate::units::TimeSpec::Ps(ps))
                if (0.0..=crate::scenario::MAX_DURATION_S * 1e12).contains(&ps) =>
            {
                Ok(ps.round() as Time)
            }
            _ => Err(CliError::usage(anyhow!(
                "{flag} {text}: not a time a service scenario takes; e.g. {flag} 2s"
            ))),
        }
    };
    let until_text = args.until.clone();
    let until = time("--until", &until_text)?.max(1);
    let from = match &args.from {
        Some(f) => time("--from", f)?,
        None => 0,
    };
    if from >= until {
        return Err(CliError::usage(anyhow!(
            "--from is not before --until {}; give a window that starts before it ends",
            until_text
        )));
    }
    if let Some(s) = args.seed {
        sc.seed = s;
    }
    let stops_short = sc.duration > until;
    let full = format_ps(sc.duration);
    sc.duration = sc.duration.min(until);
    sc.warmup = sc.warmup.min(sc.duration.saturating_sub(1));
    if sc.expected_calls() * 4.0 > MAX_ROWS {
        return Err(CliError::usage(anyhow!(
            "--until {}: about {:.3e} calls by then, more than a trace keeps; give an earlier --until",
            until_text,
            sc.expected_calls()
        )));
    }
    let mut one = sc.clone();
    one.replications = one.replications.max(1);
    let seed = crate::sweep::Point::new(vec![], crate::world::Scenario::Service(one))
        .replication_seeds()[0];
    let rows = service::run_traced(&sc, seed).map_err(|s| CliError::failure(anyhow!("{s}")))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut write = || -> std::io::Result<()> {
        match args.format {
            Format::Csv => writeln!(out, "{}", COLUMNS.join(","))?,
            Format::Text => writeln!(
                out,
                "{:>12} {:<12} {:>8} {:>8} {:>3} {:>12} {:>12} {:>12} {:<15} decision",
                "sent (s)", "group", "client", "call", "n", "arrives", "starts", "ends", "outcome"
            )?,
            Format::Jsonl => {}
        }
        for r in rows.iter().filter(|r| r.sent >= from) {
            let line = match args.format {
                Format::Text => text_line(r),
                Format::Csv => csv_line(r),
                Format::Jsonl => jsonl_line(r),
            };
            writeln!(out, "{line}")?;
        }
        out.flush()
    };
    match write() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(CliError::failure(anyhow!("cannot write the trace: {e}")))
        }
        _ => {}
    }
    if stops_short {
        eprintln!(
            "the trace stops at --until {}; the scenario runs {}",
            until_text, full
        );
    }
    Ok(())
}
