//! `csmacd trace` (every MAC event as a timeline) and `csmacd diagram` (the
//! space-time diagram and the per-station timeline chart).

use super::{CliError, CliResult};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::results::MemoryNeed;
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

A service scenario (one with [server]) is traced attempt by attempt instead:
group, client, call, attempt n, when it was sent, reached the server, began
service and ended at the client, its outcome, the wait drawn and the gates'
decision (times in seconds; --until defaults to its duration).

Examples:
  csmacd trace scenarios/lessons/2-collision.toml --until 300us
  csmacd trace scenarios/two-saturated.toml --from 5ms --until 6ms
  csmacd trace scenarios/two-saturated.toml --stations 0 --format csv > s0.csv
  csmacd trace scenarios/service-your-own-retry.toml --until 2s --format csv")]
pub struct TraceArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Stop the run here (a time with a unit: 300us, 2ms, 10slot) [default:
    /// 2ms for a bus scenario, the duration for a service scenario].
    #[arg(long)]
    pub until: Option<String>,
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

The run starts at 0; --from draws only the window from then on (what happens
there is what the full run does). The time axis counts in µs, or in ms or s
for later windows. Labels that would overlap are left out, and the diagram
says how many: a narrower window shows them. A diagram draws at most 16
stations; of a bigger scenario it draws S0-S15 unless --stations chooses
(e.g. 0,5,9 or 100-107), and says which it shows. The title says when the
window ends before the run does.

Examples:
  csmacd diagram scenarios/lessons/2-collision.toml --until 250us --out collision.png
  csmacd diagram scenarios/lessons/2-collision.toml --until 250us --out d.svg --timeline t.png
  csmacd diagram scenarios/two-saturated.toml --from 5ms --until 6ms --out d.png
  csmacd diagram scenarios/lessons/7-thundering-herd.toml --until 2ms --stations 0-7 --out herd.png")]
pub struct DiagramArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The end of the window drawn (a time with a unit: 250us, 1ms, 5slot).
    #[arg(long)]
    pub until: String,
    /// The start of the window drawn (default 0; the run still starts at 0).
    #[arg(long)]
    pub from: Option<String>,
    /// The stations to draw, at most 16: numbers from 0, and ranges
    /// (0,5,9 or 0-7 or 0-3,10). Default: all, or S0-S15 of a bigger scenario.
    #[arg(long)]
    pub stations: Option<String>,
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

/// Loads a single-run scenario, with `--seed` applied; errors are usage
/// errors. Its memory is checked for the window shown ([`parse_until`]),
/// not for its whole duration and replications.
pub fn load(file: &Path, seed: Option<u64>) -> Result<Scenario, CliError> {
    let mut sc = scenario::load_bus_window(file).map_err(CliError::usage)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    Ok(sc)
}

/// Reads a time option (`--until`) in the scenario's units, and checks
/// that the run up to it fits in memory.
pub fn parse_until(sc: &Scenario, text: &str) -> Result<Time, CliError> {
    let until = parse_instant(sc, "--until", text, 1.0)?;
    check_window(sc, until, text)?;
    Ok(until)
}

/// Refuses a window whose run (one replication up to `until`) would need
/// more memory than the 64 GiB limit or than the machine has available,
/// naming what drives it.
fn check_window(sc: &Scenario, until: Time, text: &str) -> CliResult {
    let mut short = trace::truncated(sc, until);
    short.replications = 1;
    short.precision = None;
    let need = MemoryNeed::at_once(&[(short.memory_need(), 1)], 1);
    let limit = super::batch::available_memory_bytes()
        .unwrap_or(f64::INFINITY)
        .min(scenario::MAX_MEMORY_BYTES as f64);
    if need.is_nan() || need > limit {
        let (_, driver, _) = short.memory_driver();
        return Err(CliError::usage(anyhow!(
            "--until {text}: the run up to then needs about {} of memory for {driver}, \
             more than the {} it may take here; give an earlier --until",
            crate::units::format_bytes(need),
            crate::units::format_bytes(limit)
        )));
    }
    Ok(())
}

/// A time given to `flag`, at least `min_ps` and within the simulator's clock.
pub fn parse_instant(sc: &Scenario, flag: &str, text: &str, min_ps: f64) -> Result<Time, CliError> {
    let t = crate::units::parse_time(text)
        .map_err(|e| CliError::usage(anyhow!("{flag}: {e}; e.g. {flag} 300us")))?;
    let ps = t.to_ps(sc.medium.bit_ps, sc.medium.slot_ps);
    let most = scenario::MAX_DURATION_S * crate::units::PS_PER_S;
    if ps > most {
        return Err(CliError::usage(anyhow!(
            "{flag} {text}: is later than the {:e} s the simulator can run; give at most the \
             scenario's duration, {flag} {}",
            scenario::MAX_DURATION_S,
            crate::units::format_ps(sc.duration)
        )));
    }
    if ps.is_nan() || ps < min_ps {
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

/// Reads `--from` (None: 0), which must come before `--until`.
pub fn parse_from(
    sc: &Scenario,
    from: Option<&str>,
    until: Time,
    until_text: &str,
) -> Result<Time, CliError> {
    let Some(t) = from else { return Ok(0) };
    let from = parse_instant(sc, "--from", t, 0.0)?;
    if from >= until {
        return Err(CliError::usage(anyhow!(
            "--from {t} is not before --until {until_text}; give a window that starts before it ends"
        )));
    }
    Ok(from)
}

/// Reads a list of stations: numbers from 0 and ranges, comma separated
/// ("0,5,9", "0-7", "0-3,10"), each below `count`, in the order given,
/// without repeats.
pub fn parse_station_list(text: &str, count: usize) -> Result<Vec<u32>, String> {
    let bad = |part: &str| {
        format!("`{part}` is not a station or a range; write numbers from 0 and ranges, e.g. 0,5,9 or 0-7")
    };
    let number = |p: &str, part: &str| p.trim().parse::<u32>().map_err(|_| bad(part));
    let mut out: Vec<u32> = Vec::new();
    for part in text.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (number(a, part)?, number(b, part)?),
            None => {
                let v = number(part, part)?;
                (v, v)
            }
        };
        if lo > hi {
            return Err(format!(
                "`{part}`: a range runs from the lower number up, e.g. 0-7"
            ));
        }
        if hi as usize >= count {
            return Err(format!(
                "station {hi} does not exist; this scenario has stations 0 to {}",
                count - 1
            ));
        }
        for s in lo..=hi {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

pub fn run_trace(mut args: TraceArgs) -> CliResult {
    if let Some(sc) = service_scenario(&args.file)? {
        use super::service_trace::{self as st, Format as F};
        let asked = st::Args {
            until: (args.until.take()).unwrap_or_else(|| crate::units::format_ps(sc.duration)),
            from: args.from.take(),
            stations: args.stations.is_some(),
            seed: args.seed,
            format: match args.format {
                Format::Text => F::Text,
                Format::Csv => F::Csv,
                Format::Jsonl => F::Jsonl,
            },
        };
        return st::run(&asked, sc);
    }
    let until_text = args.until.clone().unwrap_or_else(|| "2ms".into());
    let sc = load(&args.file, args.seed)?;
    let until = parse_until(&sc, &until_text)?;
    let from = parse_from(&sc, args.from.as_deref(), until, &until_text)?;
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

/// The service scenario in `file`, if it is one (a `[server]` table and no
/// `[sweep]`); None for anything else, which the bus path then reads.
fn service_scenario(file: &Path) -> Result<Option<crate::service::Scenario>, CliError> {
    let Ok(text) = scenario::read_text(file) else {
        return Ok(None);
    };
    let name = file.display().to_string();
    let Ok(table) = scenario::parse_table(&name, &text) else {
        return Ok(None);
    };
    if !crate::scenario::is_service(&table) {
        return Ok(None);
    }
    if table.contains_key("sweep") {
        return Err(CliError::usage(scenario::ScenarioError::SweepFile {
            file: name,
        }));
    }
    match scenario::load(file).map_err(CliError::usage)? {
        crate::world::Scenario::Service(s) => Ok(Some(s)),
        crate::world::Scenario::Ethernet(_) => Ok(None),
    }
}

/// Pictures that draw the stations along one cable (the diagram, the
/// interactive view) refuse a hub or a chain of segments, whose paths cross
/// repeaters: a signal's band along one line would misstate its arrivals.
pub fn along_one_cable(sc: &Scenario, what: &str) -> Result<(), String> {
    if sc.medium.topology == crate::ethernet::Topology::Bus {
        return Ok(());
    }
    Err(format!(
        "topology kind = \"{}\": {what} draws stations along one cable, and a \
         signal's band would not show the path through the repeaters; use \
         `csmacd trace`, whose signal rows give each arrival",
        sc.medium.topology.kind()
    ))
}

pub fn run_diagram(args: DiagramArgs) -> CliResult {
    let sc = load(&args.file, args.seed)?;
    let until = parse_until(&sc, &args.until)?;
    along_one_cable(&sc, "the space-time diagram")
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.file.display())))?;
    let from = parse_from(&sc, args.from.as_deref(), until, &args.until)?;
    let n = sc.station_count();
    let stations: Vec<u32> = match &args.stations {
        Some(text) => {
            let chosen = parse_station_list(text, n)
                .map_err(|e| CliError::usage(anyhow!("--stations {text}: {e}")))?;
            if chosen.len() > MAX_DIAGRAM_STATIONS {
                return Err(CliError::usage(anyhow!(
                    "--stations {text}: {} stations; a diagram draws at most \
                     {MAX_DIAGRAM_STATIONS} (best 2 to 8)",
                    chosen.len()
                )));
            }
            chosen
        }
        None => (0..n.min(MAX_DIAGRAM_STATIONS) as u32).collect(),
    };
    let pic = drawable(
        picture::of_scenario(&sc, until).window(from),
        &stations,
        "choose with --stations, e.g. --stations 0,5,9 or --stations 0-7",
    );
    let title = picture_title(&sc, &pic);
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

/// The picture of `stations` only, when they are not all, saying so on
/// stderr with `how` to choose others.
pub fn drawable(pic: picture::Picture, stations: &[u32], how: &str) -> picture::Picture {
    if stations.len() >= pic.positions.len() {
        return pic;
    }
    eprintln!(
        "note: the diagram shows {} of the {} stations; other stations' signals are not \
         drawn ({how})",
        draw::station_list(stations),
        pic.positions.len()
    );
    pic.stations(stations)
}

/// A picture's title: the scenario, the window (of how long a run), and
/// which stations when not all.
pub fn picture_title(sc: &Scenario, pic: &picture::Picture) -> String {
    let title = draw::title(&sc.name, pic.from, pic.until, sc.duration);
    if pic.partial() {
        format!(
            "{title}, {} of {} stations",
            draw::station_list(&pic.shown),
            pic.positions.len()
        )
    } else {
        title
    }
}

/// Says on stderr when the window shown ends before the scenario's run does.
fn stops_short(sc: &Scenario, until: Time) {
    if until < sc.duration {
        eprintln!(
            "note: shown up to {} µs of a {} run; a later --until shows more (--from chooses where the window starts)",
            us(until),
            crate::units::show_ps(sc.duration)
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
