//! How a burst drains: drain time, fraction delivered and the completion-time
//! distribution, against the closed form of one station sending alone.

use crate::common::{run, scenario};
use csmacd::results::Cell;

/// One station alone sends its burst back to back: frame i (from 1) ends at
/// i x (preamble + frame) + (i - 1) x gap, exactly.
#[test]
fn one_station_drains_its_burst_back_to_back() {
    let sc = scenario(
        "duration = \"10ms\"\n[[stations]]\ncount = 1\n\
         traffic = { kind = \"burst\", frames = 5, at = \"0s\" }\nframe = \"64B\"\n",
    );
    let r = run(&sc, 1);
    let out = r.output();
    // 64-bit preamble + 512-bit frame = 57.6 µs, gap 9.6 µs at 10 Mb/s.
    let end = |i: f64| i * 57.6 + (i - 1.0) * 9.6;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert_eq!(out.metric("burst_frames"), 5.0);
    assert_eq!(out.metric("delivered_fraction"), 1.0);
    assert!(
        close(out.metric("drain_us"), end(5.0)),
        "{}",
        out.metric("drain_us")
    );
    // Nearest rank: p50 of 5 frames is the 3rd, p90 and p99 the 5th.
    assert!(close(out.metric("completion_p50_us"), end(3.0)));
    assert!(close(out.metric("completion_p90_us"), end(5.0)));
    assert!(close(out.metric("completion_p99_us"), end(5.0)));
    // completions.csv: every 5th percentile; the 20th percentile is the 1st frame.
    let table = out.table("completions");
    assert_eq!(table.len(), 20);
    assert_eq!(table[3][0], Cell::Count(20));
    assert_eq!(table[3][1], Cell::Number(end(1.0)));
    assert_eq!(table[19][1], Cell::Number(end(5.0)));
}

/// A burst that cannot finish inside the run leaves its drain time and the
/// upper percentiles undefined, not a number that looks finished.
#[test]
fn an_unfinished_burst_has_no_drain_time() {
    let sc = scenario(
        "duration = \"200us\"\n[[stations]]\ncount = 1\n\
         traffic = { kind = \"burst\", frames = 5, at = \"0s\" }\nframe = \"64B\"\n",
    );
    let out = run(&sc, 1).output();
    assert!(out.metric("drain_us").is_nan());
    assert!(out.metric("completion_p90_us").is_nan());
    // Two frames end by 125 µs, the third at 192 µs: three of five, 60 %.
    assert!(out.metric("completion_p50_us") > 0.0);
    assert!(out.metric("delivered_fraction") > 0.0 && out.metric("delivered_fraction") < 1.0);
}

/// Discards count as completions: a herd whose every frame is discarded
/// drains when the last discard happens, with nothing delivered.
#[test]
fn discarded_frames_complete_the_drain() {
    let sc = scenario(
        "duration = \"1s\"\n[[stations]]\ncount = 2\nframe = \"64B\"\n\
         traffic = { kind = \"burst\" }\nbackoff = { kind = \"beb\", backoff_limit = 0 }\n",
    );
    let r = run(&sc, 1);
    let out = r.output();
    assert_eq!(out.metric("delivered_fraction"), 0.0);
    assert!(out.metric("drain_us") > 0.0);
    assert!(out.metric("completion_p50_us") <= out.metric("drain_us"));
    // Non-burst scenarios have none of these columns.
    let plain = scenario(
        "duration = \"1ms\"\n[[stations]]\ncount = 2\nframe = \"64B\"\ntraffic = { kind = \"saturated\" }\n",
    );
    let out = run(&plain, 1).output();
    assert!(out.metric("drain_us").is_nan());
    assert!(out.table("completions").is_empty());
}
