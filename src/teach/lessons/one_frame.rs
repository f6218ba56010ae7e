//! Lesson 1, one frame on an idle bus: when the first bit reaches each
//! station, when the sender stops and when the frame is whole at the far end.

use super::{check, delay, first, rows_of, time_check, Outcome};
use crate::ethernet::Scenario;
use crate::teach::trace::TraceKind;

pub(super) fn run(sc: &Scenario) -> Outcome {
    let until = 100_000_000;
    let rows = rows_of(sc, until);
    let m = &sc.medium;
    let tx = m.preamble_ps + 64 * 8 * m.bit_ps;
    let checks = vec![
        time_check(
            "S0 starts sending (idle bus: no wait)",
            first(&rows, 0, |k| matches!(k, TraceKind::TxStart { .. })),
            0,
        ),
        time_check(
            "S0's first bit reaches S1 (1250 m at 2e8 m/s)",
            first(&rows, 1, |k| matches!(k, TraceKind::SignalArrives { .. })),
            delay(sc, 0, 1),
        ),
        time_check(
            "S0's first bit reaches S2 (2500 m)",
            first(&rows, 2, |k| matches!(k, TraceKind::SignalArrives { .. })),
            delay(sc, 0, 2),
        ),
        time_check(
            "S0 stops: 64 preamble bits + 512 frame bits at 0.1 µs/bit",
            first(&rows, 0, |k| matches!(k, TraceKind::TxSuccess)),
            tx,
        ),
        time_check(
            "S2 has the whole frame",
            first(&rows, 2, |k| {
                matches!(k, TraceKind::Delivered { intact: true, .. })
            }),
            tx + delay(sc, 0, 2),
        ),
        check(
            "collisions",
            "0",
            rows.iter()
                .filter(|r| matches!(r.kind, TraceKind::CollisionDetected { .. }))
                .count()
                .to_string(),
            !rows
                .iter()
                .any(|r| matches!(r.kind, TraceKind::CollisionDetected { .. })),
        ),
    ];
    Outcome::of_trace(rows, checks, until)
}
