//! `csmacd trace` (every MAC event as a timeline) and `csmacd diagram` (the
//! space-time diagram and the per-station timeline chart).

use super::{CliError, CliResult};
use crate::engine::Time;
use crate::scenario::{self, Medium, Scenario};
use crate::teach::draw;
use crate::teach::picture::Picture;
use crate::teach::trace::{self, us, TraceFilter, TraceKind, TraceRow, Tracer, TRACE_COLUMNS};
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
the same as `csmacd run` gives, and stops at --until. Signal rows are listed
for the chosen --stations, or for every station when there are at most 16.

Examples:
  csmacd trace scenarios/lessons/2-collision.toml --until 300us
  csmacd trace scenarios/two-saturated.toml --stations 0 --format csv > s0.csv")]
pub struct TraceArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Stop the run here (a time with a unit: 300us, 2ms, 10slot).
    #[arg(long, default_value = "2ms")]
    pub until: String,
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
    let mut sc = scenario::load(file).map_err(CliError::usage)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    Ok(sc)
}

/// Reads a time option (`--until`) in the scenario's units.
pub fn parse_until(sc: &Scenario, text: &str) -> Result<Time, CliError> {
    let t = crate::units::parse_time(text)
        .map_err(|e| CliError::usage(anyhow!("--until: {e}; e.g. --until 300us")))?;
    let ps = t.to_ps(sc.medium.bit_ps, sc.medium.slot_ps);
    if !(1.0..=scenario::MAX_DURATION_S * crate::units::PS_PER_S).contains(&ps) {
        return Err(CliError::usage(anyhow!(
            "--until {text}: must be greater than zero, e.g. --until 300us"
        )));
    }
    Ok(ps.round() as Time)
}

fn check_stations(sc: &Scenario, stations: &Option<Vec<u32>>) -> CliResult {
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
    check_stations(&sc, &args.stations)?;
    let seed = trace::run_seed(&sc);
    let filter = TraceFilter::new(&sc, until, args.stations);
    let short = trace::truncated(&sc, until);
    let colour = args.format == Format::Text && std::io::stdout().is_terminal();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed: Option<std::io::Error> = None;
    let header = match args.format {
        Format::Text => text_header(),
        Format::Csv => TRACE_COLUMNS.join(","),
        Format::Jsonl => String::new(),
    };
    if !header.is_empty() {
        writeln!(out, "{header}").map_err(CliError::failure)?;
    }
    let medium = sc.medium.clone();
    let mut tracer = Tracer::new(&short, seed, filter, |row: &TraceRow| {
        if failed.is_some() {
            return;
        }
        let line = match args.format {
            Format::Text => text_line(row, &medium, colour),
            Format::Csv => csv_line(row),
            Format::Jsonl => jsonl_line(row),
        };
        if let Err(e) = writeln!(out, "{line}") {
            failed = Some(e);
        }
    });
    crate::sim::run_observed(&short, seed, &mut tracer);
    let _ = tracer.finish();
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

/// Runs `sc` to `until` and builds the picture the diagram and timeline draw.
pub fn picture(sc: &Scenario, until: Time) -> Picture {
    let seed = trace::run_seed(sc);
    let filter = TraceFilter {
        until,
        stations: None,
        signals: false,
    };
    let rows = trace::collect(sc, seed, filter);
    Picture::from_rows(
        &rows,
        crate::sim::positions(sc, seed),
        sc.medium.length_m,
        sc.medium.speed,
        until,
    )
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
    let pic = picture(&sc, until);
    let title = format!("{}: first {} µs", sc.name, us(until));
    draw::write_diagram(&pic, &title, &args.out).map_err(|e| match e {
        draw::DrawError::Format { .. } => CliError::usage(e),
        _ => CliError::failure(e),
    })?;
    eprintln!("wrote {}", args.out.display());
    if let Some(t) = &args.timeline {
        draw::write_timeline(&pic, &title, t).map_err(|e| match e {
            draw::DrawError::Format { .. } => CliError::usage(e),
            _ => CliError::failure(e),
        })?;
        eprintln!("wrote {}", t.display());
    }
    Ok(())
}

fn text_header() -> String {
    format!("{:>15}  {:<4} {:<15} detail", "time (µs)", "stn", "event")
}

/// Aligns the decimal point: 8 digits before it, 6 after.
fn aligned_us(t: Time) -> String {
    let s = us(t);
    let (whole, frac) = s.split_once('.').unwrap_or((&s, ""));
    if frac.is_empty() {
        format!("{whole:>8}       ")
    } else {
        format!("{whole:>8}.{frac:<6}")
    }
}

fn detail(row: &TraceRow, m: &Medium) -> String {
    let s = |i: &u32| draw::station_name(*i);
    match &row.kind {
        TraceKind::Arrival {
            bytes,
            queued: true,
        } => format!("a {bytes} B frame joins the queue"),
        TraceKind::Arrival { bytes, .. } => format!("a {bytes} B frame is refused: queue full"),
        TraceKind::Defer { until: None } => {
            "carrier sensed: waits for the transmission to end".into()
        }
        TraceKind::Defer { until: Some(at) } => {
            let gap_start = at.saturating_sub(m.ifg_ps);
            if gap_start > row.t {
                format!(
                    "carrier sensed until {} µs, then the {} µs interframe gap: will send at {} µs",
                    us(gap_start),
                    us(m.ifg_ps),
                    us(*at)
                )
            } else {
                format!(
                    "interframe gap (since {} µs): will send at {} µs",
                    us(gap_start),
                    us(*at)
                )
            }
        }
        TraceKind::TxStart {
            dst,
            bytes,
            attempt,
            end,
        } => format!(
            "attempt {attempt}: {bytes} B to {}, preamble + frame until {} µs",
            s(dst),
            us(*end)
        ),
        TraceKind::SignalArrives { from } => format!("{}'s signal arrives here", s(from)),
        TraceKind::SignalEnds { from } => format!("{}'s signal ends here", s(from)),
        TraceKind::CollisionDetected { late: false } => "collision detected".into(),
        TraceKind::CollisionDetected { late: true } => {
            "LATE collision detected (after the first 512 bits of the frame)".into()
        }
        TraceKind::Jam { end } => format!(
            "jam: {} bits, until {} µs",
            (end - row.t) / m.bit_ps.max(1),
            us(*end)
        ),
        TraceKind::TxSuccess => "transmission over, no collision seen".into(),
        TraceKind::Backoff { n, k, r, delay } => match (k, r) {
            (Some(k), Some(r)) => format!(
                "after collision n={n}: k={k}, r={r} drawn from 0..{}, waits {} µs",
                (1u64 << k) - 1,
                us(*delay)
            ),
            _ => format!("after collision n={n}: waits {} µs", us(*delay)),
        },
        TraceKind::BackoffEnd => "backoff over: contends again".into(),
        TraceKind::Discard { attempts } => {
            format!("frame discarded after {attempts} collisions (excessive collisions)")
        }
        TraceKind::Delivered {
            from,
            intact: true,
            delay,
        } => format!(
            "receives {}'s frame intact ({} µs after it was queued)",
            s(from),
            us(*delay)
        ),
        TraceKind::Delivered { from, .. } => format!(
            "receives {}'s frame GARBLED: an undetected collision",
            s(from)
        ),
    }
}

fn ansi(row: &TraceRow) -> &'static str {
    match &row.kind {
        TraceKind::TxStart { .. } => "\x1b[1;32m",
        TraceKind::TxSuccess => "\x1b[32m",
        TraceKind::CollisionDetected { .. } | TraceKind::Jam { .. } | TraceKind::Discard { .. } => {
            "\x1b[1;31m"
        }
        TraceKind::Delivered { intact: false, .. } | TraceKind::Arrival { queued: false, .. } => {
            "\x1b[31m"
        }
        TraceKind::Backoff { .. } | TraceKind::BackoffEnd => "\x1b[33m",
        TraceKind::Delivered { .. } => "\x1b[1;36m",
        TraceKind::SignalArrives { .. } | TraceKind::SignalEnds { .. } => "\x1b[2m",
        TraceKind::Defer { .. } => "\x1b[34m",
        TraceKind::Arrival { .. } => "",
    }
}

pub fn text_line(row: &TraceRow, m: &Medium, colour: bool) -> String {
    let line = format!(
        "{}  {:<4} {:<15} {}",
        aligned_us(row.t),
        draw::station_name(row.station),
        row.kind.name(),
        detail(row, m)
    );
    let c = ansi(row);
    if colour && !c.is_empty() {
        format!("{c}{line}\x1b[0m")
    } else {
        line.trim_end().to_string()
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
