//! The engine's event loop against a bare binary heap, over the same events.
//!
//! Both loops run the "hold" model of a simulation: `PENDING` events are
//! waiting; each step pops the earliest and pushes one new event a
//! pseudo-random time later (the same increments for both loops). The bare
//! loop is `std::collections::BinaryHeap<Reverse<(time, payload)>>` with no
//! tie-breaking sequence; the engine adds FIFO order among equal times and an
//! `enum` payload the size of the simulator's events.
//!
//! `cargo bench --bench engine` runs criterion on both, then times them again
//! side by side in one run and prints the ratio engine / bare heap.

use criterion::{criterion_group, Criterion};
use csmacd::engine::{EventQueue, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;

/// Events waiting at any time, about one per station of a 1000-station run.
const PENDING: usize = 1000;
/// Events popped (and pushed) per loop.
const STEPS: usize = 1_000_000;

/// An event as big as the simulator's (`ethernet::Event`: a tag and two u32s, or a u64).
#[derive(Clone, Copy)]
enum Ev {
    A(u32, u32),
    B(u64),
}

/// Time increments, from a fixed xorshift sequence, in 0..2^20 ps with many ties.
fn increments(n: usize) -> Vec<Time> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 44) & !0xff
        })
        .collect()
}

fn engine_loop(inc: &[Time]) -> u64 {
    let mut q = EventQueue::with_capacity(PENDING + 1);
    for (k, &d) in inc[..PENDING].iter().enumerate() {
        q.push(d, Ev::A(k as u32, 0));
    }
    let mut acc = 0u64;
    for &d in &inc[PENDING..] {
        let Some((t, ev)) = q.pop() else { break };
        acc = acc.wrapping_add(match ev {
            Ev::A(i, j) => i as u64 ^ j as u64,
            Ev::B(x) => x,
        });
        q.push(
            t + d,
            if d & 0x100 == 0 {
                Ev::A(acc as u32, 1)
            } else {
                Ev::B(acc)
            },
        );
    }
    acc
}

fn bare_loop(inc: &[Time]) -> u64 {
    let mut h = BinaryHeap::with_capacity(PENDING + 1);
    for (k, &d) in inc[..PENDING].iter().enumerate() {
        h.push(Reverse((d, k as u64)));
    }
    let mut acc = 0u64;
    for &d in &inc[PENDING..] {
        let Some(Reverse((t, x))) = h.pop() else {
            break;
        };
        acc = acc.wrapping_add(x);
        h.push(Reverse((t + d, acc)));
    }
    acc
}

fn bench(c: &mut Criterion) {
    let inc = increments(PENDING + STEPS);
    let mut g = c.benchmark_group("hold-1000-pending-1M-events");
    g.sample_size(20);
    g.bench_function("engine EventQueue", |b| {
        b.iter(|| engine_loop(black_box(&inc)))
    });
    g.bench_function("bare BinaryHeap", |b| b.iter(|| bare_loop(black_box(&inc))));
    g.finish();
}

/// Times both loops alternately (best of several rounds, so a busy machine
/// hurts both alike) and prints the ratio.
fn ratio() {
    let inc = increments(PENDING + STEPS);
    let (mut best_engine, mut best_bare) = (f64::MAX, f64::MAX);
    for _ in 0..15 {
        let t = Instant::now();
        black_box(engine_loop(black_box(&inc)));
        best_engine = best_engine.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        black_box(bare_loop(black_box(&inc)));
        best_bare = best_bare.min(t.elapsed().as_secs_f64());
    }
    let r = best_engine / best_bare;
    println!(
        "engine event loop: {:.1} ns/event, bare BinaryHeap: {:.1} ns/event, ratio {r:.2} ({} <= 2)",
        best_engine * 1e9 / STEPS as f64,
        best_bare * 1e9 / STEPS as f64,
        if r <= 2.0 { "MET" } else { "MISSED" }
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    ratio();
    Criterion::default().configure_from_args().final_summary();
}
