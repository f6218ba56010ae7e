//! What the pictures show, built from a run's trace rows: each transmission
//! (with its jam), each detection, backoff and delivery, and each station's
//! state over time (idle, defer, transmit, jam, backoff). No drawing here;
//! see `draw`.

use super::trace::{self, TraceFilter, TraceKind, TraceRow};
use crate::engine::Time;
use crate::ethernet::Scenario;

/// One transmission as it left its station.
#[derive(Clone, Debug, PartialEq)]
pub struct Transmission {
    pub station: u32,
    pub start: Time,
    /// When the signal stops leaving the station (end of frame or of jam).
    pub end: Time,
    /// When the jam started, if the transmission collided.
    pub jam_start: Option<Time>,
    pub attempt: u32,
    /// Carrier extension from this time to the end of the frame's part.
    pub extension_from: Option<Time>,
    /// A later frame of a burst: the filled gap lasts until this time.
    pub gap_until: Option<Time>,
}

/// A backoff interval at a station.
#[derive(Clone, Debug, PartialEq)]
pub struct BackoffSpan {
    pub station: u32,
    pub start: Time,
    pub end: Time,
    pub n: u32,
    pub r: Option<u64>,
}

/// What a station is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Idle,
    Defer,
    Transmit,
    Jam,
    Backoff,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Idle,
        State::Defer,
        State::Transmit,
        State::Jam,
        State::Backoff,
    ];
    pub fn name(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Defer => "defer (carrier or gap)",
            State::Transmit => "transmit",
            State::Jam => "jam",
            State::Backoff => "backoff",
        }
    }
}

/// A stretch of one state at one station.
#[derive(Clone, Debug, PartialEq)]
pub struct StateSpan {
    pub station: u32,
    pub state: State,
    pub start: Time,
    pub end: Time,
}

/// Everything the space-time diagram and the timeline draw, for [from, until).
#[derive(Clone, Debug, Default)]
pub struct Picture {
    /// The window drawn: the run starts at 0, the picture at `from`.
    pub from: Time,
    pub until: Time,
    /// The stations drawn, in order (all of them unless a choice was made).
    pub shown: Vec<u32>,
    pub bus_length_m: f64,
    pub speed: f64,
    /// Station positions in metres.
    pub positions: Vec<f64>,
    pub transmissions: Vec<Transmission>,
    /// (station, time, late)
    pub detections: Vec<(u32, Time, bool)>,
    pub backoffs: Vec<BackoffSpan>,
    /// (destination, time, from, intact)
    pub deliveries: Vec<(u32, Time, u32, bool)>,
    /// (station, time, attempts)
    pub discards: Vec<(u32, Time, u32)>,
    pub states: Vec<StateSpan>,
}

impl Picture {
    /// Builds the picture from rows in time order (as `trace::collect` gives).
    pub fn from_rows(
        rows: &[TraceRow],
        positions: Vec<f64>,
        bus_length_m: f64,
        speed: f64,
        until: Time,
    ) -> Self {
        let n = positions.len();
        let mut p = Picture {
            until,
            shown: (0..n as u32).collect(),
            bus_length_m,
            speed,
            positions,
            ..Default::default()
        };
        let mut open_tx: Vec<Option<usize>> = vec![None; n];
        let mut gap_end: Vec<Time> = vec![0; n];
        let mut state: Vec<(State, Time)> = vec![(State::Idle, 0); n];
        let mut set = |p: &mut Picture, i: usize, s: State, t: Time| {
            let (old, since) = state[i];
            if old == s {
                return;
            }
            if t > since {
                p.states.push(StateSpan {
                    station: i as u32,
                    state: old,
                    start: since,
                    end: t,
                });
            }
            state[i] = (s, t);
        };
        for row in rows {
            let i = row.station as usize;
            let t = row.t;
            match &row.kind {
                TraceKind::Defer { .. } => set(&mut p, i, State::Defer, t),
                TraceKind::TxStart {
                    attempt,
                    end,
                    extension_from,
                    in_burst,
                    ..
                } => {
                    open_tx[i] = Some(p.transmissions.len());
                    p.transmissions.push(Transmission {
                        station: i as u32,
                        start: t,
                        end: *end,
                        jam_start: None,
                        attempt: *attempt,
                        extension_from: *extension_from,
                        gap_until: in_burst.then(|| gap_end[i]),
                    });
                    set(&mut p, i, State::Transmit, t);
                }
                TraceKind::CollisionDetected { late } => p.detections.push((i as u32, t, *late)),
                TraceKind::Jam { end } => {
                    if let Some(k) = open_tx[i].take() {
                        p.transmissions[k].jam_start = Some(t);
                        p.transmissions[k].end = *end;
                    }
                    set(&mut p, i, State::Jam, t);
                }
                TraceKind::TxSuccess => {
                    open_tx[i] = None;
                    set(&mut p, i, State::Idle, t);
                }
                TraceKind::Backoff { n, r, delay, .. } => {
                    p.backoffs.push(BackoffSpan {
                        station: i as u32,
                        start: t,
                        end: t + delay,
                        n: *n,
                        r: *r,
                    });
                    set(&mut p, i, State::Backoff, t);
                }
                TraceKind::BackoffEnd => set(&mut p, i, State::Idle, t),
                TraceKind::Discard { attempts } => {
                    p.discards.push((i as u32, t, *attempts));
                    set(&mut p, i, State::Idle, t);
                }
                TraceKind::Delivered { from, intact, .. } => {
                    p.deliveries.push((i as u32, t, *from, *intact))
                }
                // The transmission that follows covers its filled gap.
                TraceKind::BurstGap { end } => gap_end[i] = *end,
                TraceKind::Arrival { .. }
                | TraceKind::SignalArrives { .. }
                | TraceKind::SignalEnds { .. } => {}
            }
        }
        for (i, (s, since)) in state.into_iter().enumerate() {
            if until > since {
                p.states.push(StateSpan {
                    station: i as u32,
                    state: s,
                    start: since,
                    end: until,
                });
            }
        }
        p.states
            .sort_by_key(|s| (s.station, s.start, s.end, s.state as u8));
        p
    }

    /// Draws only the window [from, until) of the run: what ended before
    /// `from` is dropped, what spans it is kept (and cut when drawn).
    pub fn window(mut self, from: Time) -> Self {
        self.from = from;
        self.transmissions.retain(|t| t.end > from);
        self.detections.retain(|d| d.1 >= from);
        self.backoffs.retain(|b| b.end > from);
        self.deliveries.retain(|d| d.1 >= from);
        self.discards.retain(|d| d.1 >= from);
        self.states.retain(|s| s.end > from);
        for s in &mut self.states {
            s.start = s.start.max(from);
        }
        self
    }

    /// Draws only `stations` (numbers from 0, in the order given): their
    /// lines, their own signals and events. Other stations' signals are
    /// left out.
    pub fn stations(mut self, stations: &[u32]) -> Self {
        let keep = |s: u32| stations.contains(&s);
        self.shown = stations.to_vec();
        self.transmissions.retain(|t| keep(t.station));
        self.detections.retain(|d| keep(d.0));
        self.backoffs.retain(|b| keep(b.station));
        self.deliveries.retain(|d| keep(d.0));
        self.discards.retain(|d| keep(d.0));
        self.states.retain(|s| keep(s.station));
        self
    }

    /// Whether some stations of the run are not drawn.
    pub fn partial(&self) -> bool {
        self.shown.len() < self.positions.len()
    }

    /// Propagation time in picoseconds over `metres`.
    pub fn delay_ps(&self, metres: f64) -> f64 {
        metres / self.speed * crate::units::PS_PER_S
    }
}

/// Runs `sc` (its first replication, as `csmacd run` does) to `until` and
/// builds the picture of [0, until); see [`Picture::window`] and
/// [`Picture::stations`] to draw less.
pub fn of_scenario(sc: &Scenario, until: Time) -> Picture {
    let seed = trace::run_seed(sc);
    // The bands of the transmissions show the signals; their rows would
    // only be skipped.
    let filter = TraceFilter {
        until,
        stations: None,
        signals: false,
    };
    let rows = trace::collect(sc, seed, filter);
    Picture::from_rows(
        &rows,
        crate::ethernet::positions(sc, seed),
        sc.medium.length_m,
        sc.medium.speed,
        until,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: Time, station: u32, kind: TraceKind) -> TraceRow {
        TraceRow { t, station, kind }
    }

    #[test]
    fn states_follow_the_mac_events() {
        let rows = vec![
            row(
                0,
                0,
                TraceKind::TxStart {
                    dst: 1,
                    bytes: 64,
                    attempt: 1,
                    end: 100,
                    extension_from: None,
                    in_burst: false,
                },
            ),
            row(20, 0, TraceKind::CollisionDetected { late: false }),
            row(20, 0, TraceKind::Jam { end: 30 }),
            row(
                30,
                0,
                TraceKind::Backoff {
                    n: 1,
                    k: Some(1),
                    r: Some(1),
                    delay: 50,
                },
            ),
            row(80, 0, TraceKind::BackoffEnd),
        ];
        let p = Picture::from_rows(&rows, vec![0.0], 0.0, 2e8, 100);
        let spans: Vec<(State, Time, Time)> =
            p.states.iter().map(|s| (s.state, s.start, s.end)).collect();
        assert_eq!(
            spans,
            vec![
                (State::Transmit, 0, 20),
                (State::Jam, 20, 30),
                (State::Backoff, 30, 80),
                (State::Idle, 80, 100)
            ]
        );
        assert_eq!(p.transmissions[0].jam_start, Some(20));
        assert_eq!(p.transmissions[0].end, 30);
        assert_eq!(p.backoffs[0].end, 80);
    }
}
