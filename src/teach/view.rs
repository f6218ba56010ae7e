//! The interactive view: one run's trace rows, the bus's geometry and, for a
//! lesson, its questions, as the data of a self-contained HTML page that
//! animates them (assets/view/: the template, its script and its style).
//!
//! The page holds the same rows as `csmacd trace FILE --format jsonl` with
//! the same `--from`, `--until`, `--seed` and `--stations`, one object per
//! row with the same fields; `data-events` on its root counts them.

use super::lessons::runner::{show, Answer};
use super::lessons::Check;
use super::trace::{self, us, TraceFilter, TraceKind, TraceRow, TRACE_COLUMNS};
use crate::engine::Time;
use crate::ethernet::{self, Scenario};
use crate::units::show_ps;
use serde::Serialize;
use serde_json::{Map, Number, Value};
use std::str::FromStr;

/// The most events a page holds: beyond it the window is cut short (and the
/// page says where and how many events that leaves out).
pub const MAX_VIEW_EVENTS: usize = 20_000;

/// The most stations a page draws; beyond it, the first ones (the page says
/// which) unless `--stations` chooses.
pub const MAX_VIEW_STATIONS: usize = 64;

const TEMPLATE: &str = include_str!("../../assets/view/view.html");
const STYLE: &str = include_str!("../../assets/view/view.css");
const SCRIPT: &str = include_str!("../../assets/view/view.js");

/// What the page shows, serialized into it as JSON.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    /// The scenario's name (set as text, never as markup).
    pub title: String,
    pub seed: u64,
    pub from_us: f64,
    /// The end of the window the page holds (exclusive).
    pub until_us: f64,
    /// The scenario's own duration.
    pub run_us: f64,
    pub bus_m: f64,
    /// Propagation speed in metres per microsecond.
    pub speed_m_per_us: f64,
    pub bit_us: f64,
    pub slot_us: f64,
    /// The scenario's stations, drawn or not (`stations` holds those drawn).
    pub station_count: usize,
    pub stations: Vec<StationView>,
    /// Every row in the window, as the jsonl trace has it.
    pub events: Vec<Value>,
    /// Rows before `--from` that set the stations' states and signals still
    /// on the wire at `--from` (not counted among the events).
    pub context: Vec<Value>,
    /// Whether signal-arrives/-ends rows are listed (as in the trace).
    pub signal_rows: bool,
    /// Plain sentences on what the page leaves out.
    pub left_out: Vec<String>,
    /// A lesson's questions and numbers, for predict-then-watch.
    pub lesson: Option<LessonView>,
    /// The form of `csmacd serve`, when served.
    pub form: Option<FormView>,
    /// Why the run asked for could not be made (served pages only).
    pub error: Option<String>,
}

/// A station drawn on the bus.
#[derive(Clone, Debug, Serialize)]
pub struct StationView {
    pub id: u32,
    pub x_m: f64,
    /// Propagation time from the bus's origin, in µs, as the simulator rounds it.
    pub at_us: f64,
    /// Frames in its queue at the start of the window.
    pub queued: u32,
}

/// A lesson in the view: its text, then one question per number it promises.
#[derive(Clone, Debug, Serialize)]
pub struct LessonView {
    /// Its number, for a built-in lesson or a lesson file that gives one.
    pub number: Option<u32>,
    pub title: String,
    pub text: String,
    /// A lesson file's questions: asked first, graded after the answer.
    pub asks: Vec<AskView>,
    /// The numbers the lesson promises, shown after the answer (asked
    /// first when the lesson has no questions of its own).
    pub questions: Vec<Question>,
    /// A table of runs the lesson compares, header first (may be empty).
    pub table: Vec<Vec<String>>,
}

/// A question of a lesson file, with the run's answer for grading.
#[derive(Clone, Debug, Serialize)]
pub struct AskView {
    pub ask: String,
    pub unit: String,
    /// The run's value (None: the run gives none, `shown` says why).
    pub value: Option<f64>,
    /// The value as printed, with its unit.
    pub shown: String,
    /// How far an answer may be from the value and still be right.
    pub tolerance: f64,
}

impl From<&Answer> for AskView {
    fn from(a: &Answer) -> Self {
        AskView {
            ask: a.ask.clone(),
            unit: a.unit.clone(),
            // JSON has no infinity: an event that never happens has no value
            // to type in.
            value: a.value.as_ref().ok().copied().filter(|v| v.is_finite()),
            shown: match &a.value {
                Ok(v) => show(*v, &a.unit),
                Err(e) => format!("no value: {e}"),
            },
            tolerance: a.tolerance,
        }
    }
}

/// One number a lesson promises: asked first, revealed after the student answers.
#[derive(Clone, Debug, Serialize)]
pub struct Question {
    pub what: String,
    pub expected: String,
    pub seen: String,
    pub ok: bool,
}

impl From<&Check> for Question {
    fn from(c: &Check) -> Self {
        Question {
            what: c.what.clone(),
            expected: c.expected.clone(),
            seen: c.seen.clone(),
            ok: c.ok,
        }
    }
}

/// The fields of the serve form, filled with what the shown run used.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FormView {
    /// The query string of the page's address: the fields asked for, which
    /// the page puts in the address bar so that it can be bookmarked or shared.
    pub query: String,
    pub stations: String,
    pub positions: String,
    pub length: String,
    pub frame: String,
    pub policy: String,
    pub seed: String,
    pub until: String,
    /// The backoff policies to choose from.
    pub policies: Vec<String>,
    /// The scenario run, as TOML.
    pub scenario: String,
    /// What the server refuses: its caps, in words.
    pub caps: String,
}

/// Which window and stations to show.
#[derive(Clone, Debug)]
pub struct Window {
    pub from: Time,
    pub until: Time,
    pub stations: Option<Vec<u32>>,
}

/// Runs `sc` (replication 0, as `trace` does) over `w` and builds the view.
pub fn of_scenario(sc: &Scenario, w: &Window) -> View {
    let n = sc.station_count();
    let mut left_out = Vec::new();
    let stations = match &w.stations {
        Some(s) => Some(s.clone()),
        None if n > MAX_VIEW_STATIONS => {
            left_out.push(format!(
                "The scenario has {n} stations; this page shows stations 0 to {} \
                 (choose others with --stations).",
                MAX_VIEW_STATIONS - 1
            ));
            Some((0..MAX_VIEW_STATIONS as u32).collect())
        }
        None => None,
    };
    let seed = trace::run_seed(sc);
    // The window ends where the run does, at the latest.
    let asked = w.until.min(sc.duration);
    let filter = TraceFilter::new(sc, asked, stations.clone());
    let signal_rows = filter.signals;
    let rows = trace::collect(sc, seed, filter);
    let first = rows.partition_point(|r| r.t < w.from);
    let (before, window) = rows.split_at(first);
    let mut until = asked;
    let mut kept = window;
    if window.len() > MAX_VIEW_EVENTS {
        until = window[MAX_VIEW_EVENTS].t;
        kept = &window[..window.partition_point(|r| r.t < until)];
        left_out.push(format!(
            "This page holds at most {MAX_VIEW_EVENTS} events: it stops at {} µs instead of \
             the {} µs asked, leaving out the last {} events of that window \
             (see them with --from {}us).",
            us(until),
            us(asked),
            window.len() - kept.len(),
            us(until)
        ));
    }
    if w.until < sc.duration {
        left_out.push(format!(
            "The run goes on to {}; this page shows it up to {} µs (a later --until, or \"show until\" on a served page, shows more).",
            show_ps(sc.duration),
            us(w.until)
        ));
    }
    if !signal_rows {
        left_out.push(format!(
            "With more than {} stations and no --stations, signals reaching each station \
             are not listed as events (they are still drawn on the bus).",
            trace::MAX_SIGNAL_STATIONS
        ));
    }
    if w.from > 0 {
        left_out.push(format!(
            "Events before {} µs are not listed; the stations' states and the signals \
             on the wire at that instant are taken from them.",
            us(w.from)
        ));
    }
    let positions = ethernet::positions(sc, seed);
    let shown: Vec<u32> = match &stations {
        Some(s) => s.clone(),
        None => (0..n as u32).collect(),
    };
    let at = |x: f64| (x / sc.medium.speed * crate::units::PS_PER_S).round() as Time;
    View {
        title: sc.name.clone(),
        seed: sc.seed,
        from_us: micros(w.from),
        until_us: micros(until),
        run_us: micros(sc.duration),
        bus_m: sc.medium.length_m,
        speed_m_per_us: sc.medium.speed / 1e6,
        bit_us: micros(sc.medium.bit_ps),
        slot_us: micros(sc.medium.slot_ps),
        station_count: n,
        stations: shown
            .iter()
            .map(|&i| StationView {
                id: i,
                x_m: positions[i as usize],
                at_us: micros(at(positions[i as usize])),
                queued: queued_before(before, i),
            })
            .collect(),
        events: kept.iter().map(row_json).collect(),
        context: context(before).into_iter().map(row_json).collect(),
        signal_rows,
        left_out,
        lesson: None,
        form: None,
        error: None,
    }
}

/// The rows before `from` a page needs to start there: each station's last
/// state-setting row, and the transmissions (start, jam, end) whose signals
/// may still be on the wire.
fn context(before: &[TraceRow]) -> Vec<&TraceRow> {
    use std::collections::BTreeMap;
    let mut last_state: BTreeMap<u32, usize> = BTreeMap::new();
    let mut last_tx: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, r) in before.iter().enumerate() {
        match r.kind {
            TraceKind::SignalArrives { .. }
            | TraceKind::SignalEnds { .. }
            | TraceKind::Arrival { .. }
            | TraceKind::Delivered { .. } => {}
            TraceKind::TxStart { .. } => {
                last_tx.insert(r.station, i);
                last_state.insert(r.station, i);
            }
            _ => {
                last_state.insert(r.station, i);
            }
        }
    }
    let mut keep: Vec<usize> = last_state.values().copied().collect();
    // A transmission's start, and what ended it, draw its signal.
    for (&s, &i) in &last_tx {
        keep.push(i);
        keep.extend(
            (i + 1..before.len()).filter(|&j| before[j].station == s && ends_signal(&before[j])),
        );
    }
    keep.sort_unstable();
    keep.dedup();
    keep.into_iter().map(|i| &before[i]).collect()
}

/// The frames in station `i`'s queue after the rows `before`.
fn queued_before(before: &[TraceRow], i: u32) -> u32 {
    let mut queued = 0u32;
    for r in before.iter().filter(|r| r.station == i) {
        match r.kind {
            TraceKind::Arrival { queued: true, .. } => queued += 1,
            TraceKind::TxSuccess | TraceKind::Discard { .. } => queued = queued.saturating_sub(1),
            _ => {}
        }
    }
    queued
}

fn ends_signal(r: &TraceRow) -> bool {
    matches!(
        r.kind,
        TraceKind::Jam { .. } | TraceKind::TxSuccess | TraceKind::CollisionDetected { .. }
    )
}

fn micros(ps: Time) -> f64 {
    f64::from_str(&us(ps)).unwrap_or(ps as f64 / 1e6)
}

/// A row as the jsonl trace prints it: time_us, station, event, then the
/// fields that apply.
pub fn row_json(row: &TraceRow) -> Value {
    let mut o = Map::new();
    o.insert("time_us".into(), number(&us(row.t)));
    o.insert("station".into(), Value::from(row.station));
    o.insert("event".into(), Value::from(row.kind.name()));
    for (name, v) in TRACE_COLUMNS[3..].iter().zip(row.fields()) {
        if let Some(v) = v {
            o.insert((*name).into(), number(&v));
        }
    }
    Value::Object(o)
}

fn number(text: &str) -> Value {
    Number::from_str(text)
        .map(Value::Number)
        .unwrap_or_else(|_| Value::String(text.to_string()))
}

/// The page: the template with its style, script and the view's data, the
/// data as `<script type="application/json">` with every `<` written as
/// `\u003c` so that no text in it can close the element.
pub fn page(view: &View) -> String {
    let data = serde_json::to_string(view)
        .expect("a view is plain data")
        .replace('<', "\\u003c");
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + data.len());
    for (i, part) in TEMPLATE.split("{{").enumerate() {
        if i == 0 {
            out.push_str(part);
            continue;
        }
        let (slot, rest) = part
            .split_once("}}")
            .expect("the template closes each slot");
        out.push_str(match slot {
            "style" => STYLE,
            "script" => SCRIPT,
            "data" => &data,
            _ => panic!("the template names an unknown slot {slot}"),
        });
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_the_data_cannot_close_the_script() {
        let sc = crate::scenario::bus_from_str(
            "t.toml",
            "t",
            "name = \"</script><b>x</b>\"\nduration = \"1ms\"\n[medium]\nbit_rate = \"10Mbps\"\n\
             [[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"burst\", frames = 1, at = \"0us\" }\n",
        )
        .unwrap();
        let w = Window {
            from: 0,
            until: 100_000_000,
            stations: None,
        };
        let html = page(&of_scenario(&sc, &w));
        assert_eq!(html.matches("</script>").count(), 2, "only the page's own");
        assert!(html.contains("\\u003c/script>\\u003cb>x\\u003c/b>"));
    }
}
