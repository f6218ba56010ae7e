//! `csmacd view`: one run as a self-contained interactive HTML page, and the
//! page of a lesson (`csmacd lesson N --view`).

use super::trace::{check_stations, load, parse_instant, parse_until};
use super::{CliError, CliResult};
use crate::engine::Time;
use crate::ethernet::Scenario;
use crate::teach::lessons::file::LessonFile;
use crate::teach::lessons::Outcome;
use crate::teach::trace::us;
use crate::teach::view::{self, LessonView, Window};
use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// Write an interactive HTML page that animates one run: the bus, the
/// signals, each station's state, and the space-time diagram.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The page is one file with nothing to fetch: open it in any browser, offline.
It holds the same events as `csmacd trace FILE --format jsonl` with the same
--from, --until, --seed and --stations, at most 20000 of them (beyond that
it stops early and says so), and draws at most 64 stations (the first ones
unless --stations chooses). Controls: play/pause (Space), step to the next
or previous event (Right, Left), speed (+, -), a time scrubber, Home/End;
click a station (or press its digit) for its history.

Examples:
  csmacd view scenarios/lessons/2-collision.toml --until 250us --out collision.html
  csmacd view scenarios/two-saturated.toml --from 5ms --until 6ms --out busy.html
  csmacd lesson 2 --view")]
pub struct ViewArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// The end of the window shown (a time with a unit: 300us, 2ms, 10slot);
    /// by default one slot after every sending station's first frame was
    /// sent whole or discarded, at most 40 slots.
    #[arg(long)]
    pub until: Option<String>,
    /// The start of the window shown (the run still starts at 0).
    #[arg(long)]
    pub from: Option<String>,
    /// Only these stations (numbers from 0, comma separated).
    #[arg(long, value_delimiter = ',')]
    pub stations: Option<Vec<u32>>,
    /// Replace the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The page to write (.html).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: ViewArgs) -> CliResult {
    let sc = load(&args.file, args.seed)?;
    super::trace::along_one_cable(&sc, "the view")
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.file.display())))?;
    let w = match &args.until {
        Some(until) => window(&sc, args.from.as_deref(), until, args.stations)?,
        None => {
            // From the start: the default window; from later on, as many
            // slots after --from as the default window looks into at most.
            let until = match &args.from {
                None => crate::teach::trace::default_window(&sc),
                Some(f) => {
                    let from = parse_instant(&sc, "--from", f, 0.0)?;
                    let slots = crate::teach::trace::DEFAULT_WINDOW_SLOTS * sc.medium.slot_ps;
                    (from + slots).min(sc.duration)
                }
            };
            window(
                &sc,
                args.from.as_deref(),
                &format!("{}us", us(until)),
                args.stations,
            )?
        }
    };
    let v = view::of_scenario(&sc, &w);
    write_page(&args.out, &view::page(&v))?;
    eprintln!(
        "wrote {} ({} events, {} to {} µs)",
        args.out.display(),
        v.events.len(),
        us(w.from),
        v.until_us
    );
    Ok(())
}

/// The window a page shows: `--from` (default 0) before `--until`, and the
/// chosen stations, checked against the scenario.
pub fn window(
    sc: &Scenario,
    from: Option<&str>,
    until: &str,
    stations: Option<Vec<u32>>,
) -> Result<Window, CliError> {
    let until_ps = parse_until(sc, until)?;
    let from_ps: Time = match from {
        None => 0,
        Some(t) => parse_instant(sc, "--from", t, 0.0)?,
    };
    if from_ps >= until_ps {
        return Err(CliError::usage(anyhow!(
            "--from {} is not before --until {until}; give a window that starts before it ends",
            from.unwrap_or("0")
        )));
    }
    check_stations(sc, &stations)?;
    Ok(Window {
        from: from_ps,
        until: until_ps,
        stations,
    })
}

/// The view of a lesson that has run: its scenario animated over the
/// lesson's window, or where there is none, around its first collision
/// (late ones first) or over its first events; a herd too large to draw
/// shows a few stations spread along the bus.
fn lesson_view(outcome: &Outcome) -> Option<view::View> {
    let sc = outcome.scenario.as_ref()?;
    let until = outcome
        .diagram_until
        .unwrap_or_else(|| crate::teach::trace::default_window(sc));
    let mut w = Window {
        from: 0,
        until,
        stations: None,
    };
    // A herd of more stations than a page can draw: a few spread along the
    // whole bus (by index, as the placement spreads them), not its first
    // 64 packed into one corner, and so few that their signal rows (one per
    // shown station per transmission) leave room for the herd's first slots.
    let n = sc.station_count();
    if n > view::MAX_VIEW_STATIONS {
        let k = LESSON_HERD_STATIONS;
        w.stations = Some((0..k).map(|i| (i * (n - 1) / (k - 1)) as u32).collect());
    }
    // A lesson that compares many runs shows its scenario's first
    // collision, late ones first: the thing to watch, which may come long
    // after the first slots (lessons 4 and 13: 10.7 ms).
    if outcome.diagram_until.is_none() {
        // A herd's page fills with signal rows within a few slots.
        let after = if n > view::MAX_VIEW_STATIONS { 2 } else { 4 };
        if let Some(win) = first_collision_window(sc, after) {
            (w.from, w.until) = (win.from, win.until);
        }
    }
    let mut v = view::of_scenario(sc, &w);
    // Else it animates the scenario's first events: end the window two
    // slots after its last event rather than show a blank.
    if outcome.diagram_until.is_none() && w.from == 0 {
        if let Some(last) = v.events.last() {
            let last_ps = (last["time_us"].as_f64().unwrap_or(0.0) * 1e6).ceil() as Time;
            let end = (last_ps + 2 * sc.medium.slot_ps).div_ceil(1_000_000) * 1_000_000;
            if end < until {
                w.until = end;
                v = view::of_scenario(sc, &w);
            }
        }
    }
    Some(v)
}

/// How many stations a lesson page shows of a herd too large to draw whole.
const LESSON_HERD_STATIONS: usize = 4;

/// How far a lesson page looks for a collision to show, at most.
const COLLISION_SEARCH: Time = 1_000_000_000_000;

/// A window around the first late collision of `sc`'s run in its first
/// second (else its first collision): from two slots before the detection
/// (the colliding transmissions' starts, on a bus of up to a slot's round
/// trip) to `after` slots after it (the jam and the first backoffs). None
/// when nothing collides.
fn first_collision_window(sc: &Scenario, after: Time) -> Option<Window> {
    use crate::teach::trace::{collect, run_seed, TraceFilter, TraceKind};
    let rows = collect(
        sc,
        run_seed(sc),
        TraceFilter {
            until: COLLISION_SEARCH.min(sc.duration),
            stations: None,
            signals: false,
        },
    );
    let detected = |late: bool| {
        rows.iter().find_map(|r| match r.kind {
            TraceKind::CollisionDetected { late: l } if l || !late => Some(r.t),
            _ => None,
        })
    };
    let t = detected(true).or_else(|| detected(false))?;
    let slot = sc.medium.slot_ps;
    // The round trip may pass the slot (an over-long bus): look back over it.
    let back = (2 * slot).max(2 * sc.max_delay_ps() + slot);
    let from = t.saturating_sub(back) / 1_000_000 * 1_000_000;
    Some(Window {
        from,
        until: (t + after * slot).div_ceil(1_000_000) * 1_000_000,
        stations: None,
    })
}

/// The page of a lesson file that has run: its scenario animated over the
/// lesson's window, its questions asked first and graded, its checks after.
pub fn file_lesson_page(lesson: &LessonFile, outcome: &Outcome) -> Option<String> {
    let mut v = lesson_view(outcome)?;
    v.lesson = Some(LessonView {
        number: lesson.number,
        title: lesson.title.clone(),
        text: lesson.text.clone(),
        asks: outcome.answers.iter().map(Into::into).collect(),
        questions: outcome.checks.iter().map(Into::into).collect(),
        table: outcome.table.clone(),
    });
    Some(view::page(&v))
}

/// Writes a page whole or not at all.
pub fn write_page(path: &Path, html: &str) -> CliResult {
    crate::output::write_atomic(path, html.as_bytes())
        .map_err(|e| CliError::failure(anyhow!("cannot write {}: {e}", path.display())))
}
