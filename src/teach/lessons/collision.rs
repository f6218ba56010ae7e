//! Lesson 2, two stations collide: the instants each detects the collision,
//! the 32-bit jams, the first backoff draws, and both frames delivered after.

use super::{check, delay, first, rows_of, time_check, Outcome};
use crate::ethernet::Scenario;
use crate::teach::trace::TraceKind;

pub(super) fn run(sc: &Scenario) -> Outcome {
    let until = 220_000_000;
    let rows = rows_of(sc, until);
    let d = delay(sc, 0, 1);
    let m = &sc.medium;
    let start = |s: u32| {
        first(&rows, s, |k| matches!(k, TraceKind::TxStart { .. }))
            .map(|r| r.t)
            .unwrap_or(0)
    };
    let (s0, s1) = (start(0), start(1));
    let mut checks = vec![
        time_check(
            "S1 detects: S0's first bit arrives (S0's start + 10 µs)",
            first(&rows, 1, |k| {
                matches!(k, TraceKind::CollisionDetected { .. })
            }),
            s0 + d,
        ),
        time_check(
            "S0 detects: S1's first bit arrives (S1's start + 10 µs)",
            first(&rows, 0, |k| {
                matches!(k, TraceKind::CollisionDetected { .. })
            }),
            s1 + d,
        ),
    ];
    for s in [0, 1] {
        let jam = first(&rows, s, |k| matches!(k, TraceKind::Jam { .. }));
        let bits = jam.and_then(|r| match r.kind {
            TraceKind::Jam { end } => Some((end - r.t) / m.bit_ps),
            _ => None,
        });
        checks.push(check(
            format!("S{s}'s jam"),
            "32 bits",
            bits.map(|b| format!("{b} bits"))
                .unwrap_or_else(|| "none".into()),
            bits == Some(32),
        ));
        let n1 = first(&rows, s, |k| matches!(k, TraceKind::Backoff { n: 1, .. }));
        let r_ok = matches!(
            n1.map(|r| &r.kind),
            Some(TraceKind::Backoff {
                k: Some(1),
                r: Some(0 | 1),
                ..
            })
        );
        checks.push(check(
            format!("S{s}'s first backoff: n=1, r drawn from {{0, 1}}"),
            "k=1, r in {0, 1}",
            match n1.map(|r| &r.kind) {
                Some(TraceKind::Backoff {
                    k: Some(k),
                    r: Some(r),
                    ..
                }) => format!("k={k}, r={r}"),
                Some(TraceKind::Backoff { .. }) => "a wait without k and r".into(),
                _ => "none".into(),
            },
            r_ok,
        ));
    }
    let delivered = rows
        .iter()
        .filter(|r| matches!(r.kind, TraceKind::Delivered { intact: true, .. }))
        .count();
    checks.push(check(
        "frames delivered in the end",
        "2",
        delivered.to_string(),
        delivered == 2,
    ));
    Outcome::of_trace(rows, checks, until)
}
