//! Trace rows as aligned lines of text for a reader: the time, the station,
//! the event and a sentence saying what happened, coloured on a terminal.

use super::draw::station_name;
use super::trace::{us, TraceKind, TraceRow};
use crate::engine::Time;
use crate::ethernet::Medium;
use crate::units::show_ps;

/// The column heads above the lines.
pub fn header() -> String {
    format!("{:>15}  {:<4} {:<15} detail", "time (µs)", "stn", "event")
}

/// One row as a line; with `colour`, wrapped in the ANSI colour of its kind.
pub fn line(row: &TraceRow, m: &Medium, colour: bool) -> String {
    let line = format!(
        "{}  {:<4} {:<15} {}",
        aligned_us(row.t),
        station_name(row.station),
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

/// A backoff's wait: "waits 51.2 µs", or "no wait" for r = 0.
fn waits(delay: Time) -> String {
    if delay == 0 {
        "no wait".into()
    } else {
        format!("waits {}", show_ps(delay))
    }
}

fn detail(row: &TraceRow, m: &Medium) -> String {
    let s = |i: &u32| station_name(*i);
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
                // The station senses carrier now; when it drops is news that
                // has not reached it yet, told as what the run goes on to do.
                format!(
                    "carrier sensed: waits until it drops, then the {} interframe gap \
                     (as the run goes on: quiet here from {} µs, sends at {} µs)",
                    show_ps(m.ifg_ps),
                    us(gap_start),
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
            extension_from,
            in_burst,
        } => match (extension_from, in_burst) {
            (_, true) => format!(
                "attempt {attempt}: {bytes} B to {}, in a burst: filled gap, preamble + frame \
                 (not extended) until {} µs",
                s(dst),
                us(*end)
            ),
            (Some(x), false) => format!(
                "attempt {attempt}: {bytes} B to {}, preamble + frame until {} µs, carrier \
                 extension until {} µs",
                s(dst),
                us(*x),
                us(*end)
            ),
            (None, false) => format!(
                "attempt {attempt}: {bytes} B to {}, preamble + frame until {} µs",
                s(dst),
                us(*end)
            ),
        },
        TraceKind::BurstGap { end } => format!(
            "burst goes on: the gap is filled with extension symbols until {} µs, the carrier stays up",
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
                "after collision n={n}: k={k}, r={r} drawn from 0..{}, {}",
                (1u64 << k) - 1,
                waits(*delay)
            ),
            _ => format!("after collision n={n}: {}", waits(*delay)),
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
            "receives {}'s frame intact (the frame's delay, from its queueing to the end of its sending: {})",
            s(from),
            show_ps(*delay)
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
        TraceKind::TxSuccess | TraceKind::BurstGap { .. } => "\x1b[32m",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A wait or a delay is told in the unit that suits it, exactly: the
    /// longest backoff of 10 Mb/s (1023 slots) in ms, not "52377.6 µs".
    #[test]
    fn durations_in_the_unit_that_suits_them() {
        let sc = crate::scenario::bus_from_str(
            "t.toml",
            "t",
            "duration = \"1s\"\n[medium]\nbit_rate = \"10Mbps\"\n[[stations]]\ncount = 2\n\
             frame = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
        )
        .unwrap();
        let m = &sc.medium;
        let row = |kind| {
            line(
                &TraceRow {
                    t: 0,
                    station: 0,
                    kind,
                },
                m,
                false,
            )
        };
        let backoff = |r: u64| TraceKind::Backoff {
            n: 10,
            k: Some(10),
            r: Some(r),
            delay: r * m.slot_ps,
        };
        assert!(row(backoff(1023)).ends_with("r=1023 drawn from 0..1023, waits 52.3776 ms"));
        assert!(row(backoff(1)).ends_with("waits 51.2 µs"));
        assert!(row(backoff(0)).ends_with("r=0 drawn from 0..1023, no wait"));
        let delivered = row(TraceKind::Delivered {
            from: 1,
            intact: true,
            delay: 2_000_000_000_000,
        });
        assert!(
            delivered.ends_with("to the end of its sending: 2 s)"),
            "{delivered}"
        );
    }
}
