//! `csmacd trace` (every MAC event as a timeline) and `csmacd diagram` (the
//! space-time diagram and the per-station timeline chart).

use super::{CliError, CliResult};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::scenario;
use crate::teach::trace::{self, us, TraceFilter, TraceRow, Tracer, TRACE_COLUMNS};
use crate::teach::{draw, picture, text};
use anyhow::anyhow;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Print every MAC event of one run, in time order.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Events: arrival, queue-full, defer (carrier sensed and/or the interframe gap,
with the time the station will send when known), tx-start, signal-arrives / signal-ends (a
station's transmission reaching and leaving another station), collision,
late-collision, jam, tx-end (no collision seen), backoff (after the n-th
collision: window 2^k, r slots drawn), backoff-end, discard, delivered,
corrupted (an undetected collision garbled the frame at its destination).

Times are in microseconds, exact. The run is replication 0 of the scenario,
the same as `csmacd run` gives, and stops at --until (it says so on stderr
when the scenario runs longer); --from leaves out the events before it. Signal rows are listed
for the chosen --stations, or for every station when there are at most 16.

Examples:
  csmacd trace scenarios/lessons/2-collision.toml --until 300us
  csmacd trace scenarios/two-saturated.toml --from 5ms --until 6ms
  csmacd trace scenarios/two-saturated.toml --stations 0 --format csv > s0.csv")]
pub struct TraceArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Stop the run here (a time with a unit: 300us, 2ms, 10slot).
    #[arg(long, default_value = "2ms")]
    pub until: String,
    /// Print only the events from this time on (the run still starts at 0,
    /// so what happens at --from is what the full run does then).
    #[arg(long)]
    pub from: Option<String>,
    /// Only these stations (numbers from 0, comma separated).
    #[arg(long, value_delimiter = ',')]
    pub stations: Option<Vec<u32>>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Replace the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// Aligned columns, coloured on a terminal.
    Text,
    /// One row per event with the columns time_us,station,event,peer,bytes,attempt,n,k,r,end_us,delay_us.
    Csv,
    /// One JSON object per line, with the fields that apply.
    Jsonl,
}

/// Draw the space-time diagram (and optionally the station timeline) of one run.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The diagram: position along the bus across, time downward. Each transmission
is a band spreading from its station at the signal speed; jams are red, a red
cross marks a collision detected, an orange bar beside a station is its
backoff (n = collisions so far, r = slots drawn), a green circle a frame
received. Readable for 2 to 8 stations over a few slots to a few frames.

The timeline: one row per station, coloured by state: idle, defer (carrier
or interframe gap), transmit, jam, backoff.

Examples:
  csmacd diagram scenarios/lessons/2-collision.toml --until 250us --out collision.png
  csmacd diagram scenarios/lessons/2-collision.toml --until 250us --out d.svg --timeline t.png")]
pub struct DiagramArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The end of the window drawn (a time with a unit: 250us, 1ms, 5slot).
    #[arg(long)]
    pub until: String,
    /// The space-time diagram: FILE.svg or FILE.png.
    #[arg(long)]
    pub out: PathBuf,
    /// Also draw the per-station timeline chart: FILE.svg or FILE.png.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Replace the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
}

/// The most stations a diagram draws.
pub const MAX_DIAGRAM_STATIONS: usize = 16;

/// Loads a single-run scenario, with `--seed` applied; errors are usage errors.
pub fn load(file: &Path, seed: Option<u64>) -> Result<Scenario, CliError> {
    let mut sc = scenario::load_bus(file).map_err(CliError::usage)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    Ok(sc)
}

/// Reads a time option (`--until`) in the scenario's units.
pub fn parse_until(sc: &Scenario, text: &str) -> Result<Time, CliError> {
    parse_instant(sc, "--until", text, 1.0)
}

/// A time given to `flag`, at least `min_ps` and within the simulator's clock.
pub fn parse_instant(sc: &Scenario, flag: &str, text: &str, min_ps: f64) -> Result<Time, CliError> {
    let t = crate::units::parse_time(text)
        .map_err(|e| CliError::usage(anyhow!("{flag}: {e}; e.g. {flag} 300us")))?;
    let ps = t.to_ps(sc.medium.bit_ps, sc.medium.slot_ps);
    if !(min_ps..=scenario::MAX_DURATION_S * crate::units::PS_PER_S).contains(&ps) {
        let what = if min_ps > 0.0 {
            "greater than zero"
        } else {
            "zero or more"
        };
        return Err(CliError::usage(anyhow!(
            "{flag} {text}: must be {what}, e.g. {flag} 300us"
        )));
    }
    Ok(ps.round() as Time)
}

pub fn check_stations(sc: &Scenario, stations: &Option<Vec<u32>>) -> CliResult {
    let n = sc.station_count();
    if let Some(s) = stations {
        if let Some(bad) = s.iter().find(|&&i| i as usize >= n) {
            return Err(CliError::usage(anyhow!(
                "--stations: station {bad} does not exist; this scenario has stations 0 to {}",
                n - 1
            )));
        }
    }
    Ok(())
}

pub fn run_trace(args: TraceArgs) -> CliResult {
    let sc = load(&args.file, args.seed)?;
    let until = parse_until(&sc, &args.until)?;
    let from = match &args.from {
        None => 0,
        Some(t) => {
            let from = parse_instant(&sc, "--from", t, 0.0)?;
            if from >= until {
                return Err(CliError::usage(anyhow!(
                    "--from {} is not before --until {}; give a window that starts before it ends",
                    t,
                    args.until
                )));
            }
            from
        }
    };
    check_stations(&sc, &args.stations)?;
    let seed = trace::run_seed(&sc);
    let filter = TraceFilter::new(&sc, until, args.stations);
    let short = trace::truncated(&sc, until);
    let colour = args.format == Format::Text && std::io::stdout().is_terminal();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed: Option<std::io::Error> = None;
    let header = match args.format {
        Format::Text => text::header(),
        Format::Csv => TRACE_COLUMNS.join(","),
        Format::Jsonl => String::new(),
    };
    if !header.is_empty() {
        writeln!(out, "{header}").map_err(CliError::failure)?;
    }
    let medium = sc.medium.clone();
    let mut tracer = Tracer::new(&short, seed, filter, |row: &TraceRow| {
        if failed.is_some() || row.t < from {
            return;
        }
        let line = match args.format {
            Format::Text => text::line(row, &medium, colour),
            Format::Csv => csv_line(row),
            Format::Jsonl => jsonl_line(row),
        };
        if let Err(e) = writeln!(out, "{line}") {
            failed = Some(e);
        }
    });
    crate::ethernet::run_observed(&short, seed, &mut tracer);
    let _ = tracer.finish();
    stops_short(&sc, until);
    if let Some(e) = failed {
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(());
        }
        return Err(CliError::failure(anyhow!("cannot write the trace: {e}")));
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::failure(e)),
        _ => Ok(()),
    }
}

pub fn run_diagram(args: DiagramArgs) -> CliResult {
    let sc = load(&args.file, args.seed)?;
    let until = parse_until(&sc, &args.until)?;
    if sc.station_count() > MAX_DIAGRAM_STATIONS {
        return Err(CliError::usage(anyhow!(
            "{}: {} stations; a diagram stays readable up to {MAX_DIAGRAM_STATIONS} (best 2 to 8): \
             use `csmacd trace --stations` for bigger scenarios",
            args.file.display(),
            sc.station_count()
        )));
    }
    let pic = picture::of_scenario(&sc, until);
    let title = format!("{}: first {} µs", sc.name, us(until));
    draw::write_diagram(&pic, &title, &args.out).map_err(|e| match e {
        draw::DrawError::Format { .. } => CliError::usage(e),
        _ => CliError::failure(e),
    })?;
    eprintln!("wrote {}", args.out.display());
    stops_short(&sc, until);
    if let Some(t) = &args.timeline {
        draw::write_timeline(&pic, &title, t).map_err(|e| match e {
            draw::DrawError::Format { .. } => CliError::usage(e),
            _ => CliError::failure(e),
        })?;
        eprintln!("wrote {}", t.display());
    }
    Ok(())
}

/// Says on stderr when the window shown ends before the scenario's run does.
fn stops_short(sc: &Scenario, until: Time) {
    if until < sc.duration {
        eprintln!(
            "note: shown up to {} µs of a {} run; a later --until shows more",
            us(until),
            crate::units::format_ps(sc.duration)
        );
    }
}

pub fn csv_line(row: &TraceRow) -> String {
    let mut cells = vec![us(row.t), row.station.to_string(), row.kind.name().into()];
    cells.extend(row.fields().into_iter().map(Option::unwrap_or_default));
    cells.join(",")
}

pub fn jsonl_line(row: &TraceRow) -> String {
    let mut parts = vec![
        format!("\"time_us\":{}", us(row.t)),
        format!("\"station\":{}", row.station),
        format!("\"event\":\"{}\"", row.kind.name()),
    ];
    for (name, v) in TRACE_COLUMNS[3..].iter().zip(row.fields()) {
        if let Some(v) = v {
            parts.push(format!("\"{name}\":{v}"));
        }
    }
    format!("{{{}}}", parts.join(","))
}
