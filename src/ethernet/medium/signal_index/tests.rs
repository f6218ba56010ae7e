//! The index held against a scan over every signal: random crowds and
//! waves, generations coming and going, and keys at the edges of a node's
//! range.

use super::super::key::BUCKET;
use super::bounds::KEY_RANGE;
use super::{by_rank, BusIndex, Place};
use crate::engine::Time;
use rand::{RngExt, SeedableRng};

/// Each station's place on a bus at the propagation times `prop`.
fn places(prop: &[Time]) -> Vec<Place> {
    let mut places = vec![Place::new(0, 0); prop.len()];
    for (r, &i) in by_rank(prop).iter().enumerate() {
        places[i as usize] = Place::new(prop[i as usize], r as u32);
    }
    places
}

/// A signal as a scan sees it.
#[derive(Clone, Copy)]
struct Sig {
    id: u64,
    station: usize,
    start: Time,
    end: Time,
    fixed: bool,
}

/// The index answers every question as a scan over every signal ever
/// sent does, while generations come and go and emptied ones are
/// reused: random stations (many co-located, two at the ends of the
/// bus), waves of signals started in time order (a few of them longer
/// than a generation's span, so that generations do not end in the
/// order they began), ends made final when
/// reached or cut short earlier or later than first given, and
/// questions about any time since the last generation went, half of
/// them at the far end of the bus just before a signal's end leaves it
/// (where a generation is last needed).
#[test]
fn generations_answer_as_a_scan_over_every_signal() {
    generations_against_a_scan(None, 4, true);
}

/// An index emptied while transmissions are under way (set aside in a
/// run) keeps none of their senders: taken up again, it finds only
/// the senders added since, and takes the same station again.
#[test]
fn an_emptied_index_forgets_its_senders() {
    let prop: Vec<Time> = (0..600).map(|i| 10 * i).collect();
    let pl = places(&prop);
    let mut ix = BusIndex::new(pl.iter().copied(), 200_000, 1_505_000);
    ix.add(pl[100], 0, 1_000, 60_000);
    ix.add(pl[300], 1, 1_200, 60_000);
    ix.add(pl[500], 2, 1_400, 60_000);
    assert_eq!(ix.nearest_sending(pl[300]), [Some(100), Some(500)]);
    ix.clear();
    assert_eq!(ix.nearest_sending(pl[300]), [None, None]);
    assert_eq!(ix.nearest_sending(pl[0]), [None, None]);
    ix.add(pl[500], 3, 70_000, 130_000);
    assert_eq!(ix.nearest_sending(pl[300]), [None, Some(500)]);
    ix.fix(pl[500], 3, 80_000);
    assert_eq!(ix.nearest_sending(pl[300]), [None, None]);
}

/// The same over 40 buckets, whose tree's marks of written nodes take
/// more than one word.
#[test]
fn generations_over_many_buckets_answer_as_a_scan() {
    generations_against_a_scan(None, 40, true);
}

/// The same, with generations cut short by their count of ids (at 7
/// signals, where a crowd's are cut at 2^24): a generation then ends
/// in the middle of a wave, while its signals are being sent.
#[test]
fn generations_cut_by_their_ids_answer_as_a_scan() {
    generations_against_a_scan(Some(7), 4, true);
}

/// The same, with adds and fixes in their build for any processor
/// (on a processor with SSE4.1 the tests above run the other one).
#[test]
fn the_portable_build_answers_as_a_scan() {
    generations_against_a_scan(None, 40, false);
}

/// `fast`: adds and fixes in their SSE4.1 build where the processor
/// has it.
fn generations_against_a_scan(ids: Option<u64>, buckets: usize, fast: bool) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let n = buckets * BUCKET + 37;
    let prop: Vec<Time> = (0..n)
        .map(|j| match j {
            0 => 0,
            1 => 199_000,
            _ => rng.random_range(0..200u64) * 1000,
        })
        .collect();
    let pl = places(&prop);
    let reach = 199_000;
    let (ifg, keep) = (9_600, 60_000);
    let mut ix = BusIndex::new(pl.iter().copied(), 2 * reach + ifg, 1_505_000);
    if let Some(ids) = ids {
        ix.ids = ids;
    }
    ix.sse41 &= fast;
    let mut all: Vec<Sig> = Vec::new();
    let (mut now, mut floor, mut dropped) = (0u64, 0u64, 0);
    let arrival = |s: &Sig, i: usize, t: Time| t + prop[i].abs_diff(prop[s.station]);
    for step in 0..6000 {
        // Waves: bursts of starts close together, then quiet.
        let wave = step % 100 < 40;
        now += if wave {
            rng.random_range(0..300)
        } else {
            rng.random_range(0..4000)
        };
        let st = if rng.random_bool(0.2) {
            rng.random_range(0..2)
        } else {
            rng.random_range(0..n)
        };
        let sending = all.iter().any(|s| !s.fixed && s.station == st);
        if !sending && rng.random_bool(if wave { 0.6 } else { 0.03 }) {
            let id = all.len() as u64;
            // Now and then a signal longer than a generation's span,
            // whose generation then ends after newer ones.
            let end = now
                + if rng.random_bool(0.02) {
                    rng.random_range(1..1_500_000)
                } else {
                    rng.random_range(1..40_000)
                };
            ix.add(pl[st], id, now, end);
            all.push(Sig {
                id,
                station: st,
                start: now,
                end,
                fixed: false,
            });
        }
        // Ends: a transmission that reached its end is over (its end
        // final as given); one still being sent may be cut short by a
        // collision (its end from now on, shorter or longer than the
        // tentative one), or have its end made final as it was held
        // (as a detection does for most signals in a crowd).
        for s in all.iter_mut().filter(|s| !s.fixed) {
            let end = if s.end <= now {
                s.end
            } else if s.end - s.start < 40_000 && rng.random_bool(0.05) {
                now + rng.random_range(0..5_000)
            } else if rng.random_bool(0.05) {
                s.end
            } else {
                continue;
            };
            s.end = end;
            s.fixed = true;
            ix.fix(pl[s.station], s.id, end);
        }
        // As the simulator does: a generation goes once its signals
        // left every station an interframe gap and `keep` ago.
        while let Some(end) = ix.oldest_ended() {
            let gone = end + reach + ifg;
            if gone + keep > now {
                break;
            }
            ix.drop_oldest();
            floor = floor.max(gone);
            dropped += 1;
        }
        let mut c = rng.random_range(floor..=now);
        let mut i = rng.random_range(0..n);
        let far = all
            .iter()
            .rev()
            .find(|s| s.fixed && s.station < 2 && s.end + reach <= now)
            .copied();
        if let (Some(s), true) = (far, rng.random_bool(0.5)) {
            i = 1 - s.station;
            let leaves = arrival(&s, i, s.end);
            c = leaves
                .saturating_sub(rng.random_range(0..3))
                .clamp(floor, now);
        }
        let before = c + rng.random_range(1..20_000);
        let seen = |s: &Sig| (arrival(s, i, s.start), arrival(s, i, s.end));
        let others = || all.iter().filter(|s| s.station != i);
        let covering: Vec<&Sig> = others()
            .filter(|s| {
                let (a, b) = seen(s);
                a <= c && c < b
            })
            .collect();
        assert_eq!(ix.present(pl[i], c), !covering.is_empty(), "step {step}");
        let busy = match covering.iter().filter(|s| !s.fixed).map(|s| s.id).min() {
            Some(id) => Err(id),
            None => Ok(covering.iter().map(|s| seen(s).1).max()),
        };
        assert_eq!(ix.busy_until(pl[i], c), busy, "step {step}");
        let first_start = others()
            .map(|s| seen(s).0)
            .filter(|&a| a > c && a < before)
            .min();
        assert_eq!(
            ix.first_start_after(pl[i], c, before),
            first_start,
            "step {step}"
        );
        let first_presence = others()
            .filter(|s| seen(s).1 > c)
            .map(|s| seen(s).0.max(c))
            .filter(|&a| a < before)
            .min();
        assert_eq!(
            ix.first_presence(pl[i], c, before),
            first_presence,
            "step {step}"
        );
        let lo = c as i64 - ifg as i64;
        let last_end = others()
            .map(|s| seen(s).1)
            .filter(|&b| b as i64 > lo && b <= c)
            .max();
        assert_eq!(ix.last_end_in(pl[i], lo, c), last_end, "step {step}");
        // The latest arrivals count every signal still reaching a
        // station after `c` (its own too), and may count older ones.
        let latest = ix.latest(pl[i], c);
        let max = |it: &mut dyn Iterator<Item = Time>| it.map(|t| t as i64).max();
        let must = || all.iter().filter(|s| s.end + reach > c);
        for (got, over_must, over_all) in [
            (
                latest.start,
                max(&mut must().map(|s| seen(s).0)),
                max(&mut all.iter().map(|s| seen(s).0)),
            ),
            (
                latest.end,
                max(&mut must().map(|s| seen(s).1)),
                max(&mut all.iter().map(|s| seen(s).1)),
            ),
        ] {
            assert!(over_must.unwrap_or(i64::MIN) <= got, "step {step}");
            assert!(got <= over_all.unwrap_or(i64::MIN), "step {step}");
        }
        // The ends not yet final: at least the latest of them, and at
        // most the latest end (a signal fixed at the end it was held
        // at may still count).
        let unfixed_end = max(&mut all.iter().filter(|s| !s.fixed).map(|s| seen(s).1));
        match unfixed_end {
            Some(t) => {
                let any = max(&mut all.iter().map(|s| seen(s).1));
                assert!(t <= latest.unfixed_end, "step {step}");
                assert!(Some(latest.unfixed_end) <= any, "step {step}");
            }
            // None: far below any time.
            None => assert!(latest.unfixed_end < i64::MIN / 2, "step {step}"),
        }
        // A schedule made at a time since the floor: the signals from
        // then on.
        let made = rng.random_range(floor..=now);
        let seq = all
            .iter()
            .position(|s| s.start >= made)
            .unwrap_or(all.len()) as u64;
        let since = others()
            .filter(|s| s.id >= seq)
            .map(|s| seen(s).0)
            .filter(|&a| a < before)
            .min();
        assert_eq!(
            ix.first_arrival_since(pl[i], seq, before),
            since,
            "step {step}"
        );
        let delivered = all
            .iter()
            .rev()
            .find(|s| s.fixed && arrival(s, i, s.start) >= floor);
        if let Some(s) = delivered {
            let (a0, b0) = seen(s);
            let overlaps = all.iter().any(|k| {
                let (a, b) = seen(k);
                k.id != s.id && a < b0 && a0 < b
            });
            assert_eq!(ix.overlaps(pl[i], s.id, a0, b0), overlaps, "step {step}");
        }
        // The nearest stations sending on each side, in position order.
        let r = |j: usize| (prop[j], j);
        let near = [
            all.iter()
                .filter(|s| !s.fixed && r(s.station) < r(i))
                .max_by_key(|s| r(s.station)),
            all.iter()
                .filter(|s| !s.fixed && r(s.station) > r(i))
                .min_by_key(|s| r(s.station)),
        ]
        .map(|s| s.map(|s| s.station));
        assert_eq!(ix.nearest_sending(pl[i]), near, "step {step}");
    }
    assert!(dropped > 20, "only {dropped} generations went");
    if let Some(ids) = ids {
        // Generations were cut by their ids: at least about as many
        // went as the signals sent over the ids each takes (a third as
        // many go without the cut).
        assert!(
            dropped as u64 >= all.len() as u64 / ids - 2,
            "{dropped} generations went"
        );
    }
    ix.clear();
    assert!(!ix.present(pl[0], now) && ix.oldest_ended().is_none());
}

/// Keys at the edges of what a node's 32 bits hold, at times far from
/// zero: the longest signal the index takes, from the far end of the
/// bus, starting at the end of its generation's span (its right-side
/// end key is the greatest a generation holds); and a signal one
/// picosecond longer is refused, never held wrong.
/// A walk follows one path down to the asking station and walks the
/// subtrees beside it: a sender just across a bucket's or a subtree's
/// edge from the asking station, on either side, is found, before and
/// after its end is final (one signal on the bus, every pair of
/// stations within two ranks of an edge).
#[test]
fn senders_beside_an_edge_are_found() {
    let n = 8 * BUCKET;
    let prop: Vec<Time> = (0..n as u64).map(|j| 1_000 * j).collect();
    let pl = places(&prop);
    let near: Vec<usize> = (1..8)
        .flat_map(|k| [k * BUCKET - 2, k * BUCKET - 1, k * BUCKET, k * BUCKET + 1])
        .chain([0, 1, n - 2, n - 1])
        .collect();
    let far = 1_000 * (n as u64 - 1);
    for &s in &near {
        for &q in near.iter().filter(|&&q| q != s) {
            let mut ix = BusIndex::new(pl.iter().copied(), 2 * far + 9_600, 60_000);
            ix.add(pl[s], 0, 0, 50_000);
            let d = prop[s].abs_diff(prop[q]);
            let what = format!("sender {s}, asked at {q}");
            assert_eq!(ix.first_presence(pl[q], 0, Time::MAX), Some(d), "{what}");
            assert_eq!(ix.busy_until(pl[q], d), Err(0), "{what}");
            assert!(ix.present(pl[q], d) && !ix.present(pl[q], d - 1), "{what}");
            assert_eq!(
                ix.first_arrival_since(pl[q], 0, Time::MAX),
                Some(d),
                "{what}"
            );
            ix.fix(pl[s], 0, 20_000);
            assert_eq!(ix.busy_until(pl[q], d), Ok(Some(20_000 + d)), "{what}");
            assert_eq!(
                ix.last_end_in(pl[q], 0, 20_000 + d),
                Some(20_000 + d),
                "{what}"
            );
            assert_eq!(ix.first_start_after(pl[q], 0, Time::MAX), Some(d), "{what}");
        }
    }
}

#[test]
fn keys_at_the_edge_of_their_range_answer_exactly() {
    let far: Time = 50_000_000;
    let prop = [0, far / 2, far];
    let pl = places(&prop);
    let span = 2 * far + 9_600;
    let longest = KEY_RANGE as Time - span - far;
    assert!(BusIndex::holds(longest, span, far));
    assert!(!BusIndex::holds(longest + 1, span, far));
    let mut ix = BusIndex::new(pl.iter().copied(), span, longest);
    let t0: Time = 1 << 40;
    // A short signal from the middle, still being sent when the long
    // one starts: both in one generation.
    ix.add(pl[1], 0, t0, t0 + 1_000);
    let (s, e) = (t0 + span - 1, t0 + span - 1 + longest);
    ix.add(pl[2], 1, s, e);
    assert_eq!(ix.busy_until(pl[0], e + far - 1), Err(1));
    ix.fix(pl[1], 0, t0 + 1_000);
    ix.fix(pl[2], 1, e);
    assert_eq!(ix.busy_until(pl[0], e + far - 1), Ok(Some(e + far)));
    assert!(ix.present(pl[0], e + far - 1) && !ix.present(pl[0], e + far));
    assert_eq!(
        ix.first_start_after(pl[0], t0, Time::MAX),
        Some(t0 + far / 2)
    );
    assert_eq!(
        ix.first_start_after(pl[0], t0 + far / 2, Time::MAX),
        Some(s + far)
    );
    assert_eq!(
        ix.last_end_in(pl[0], (e + far - 10) as i64, e + far),
        Some(e + far)
    );
    let seen = ix.latest(pl[0], t0);
    assert_eq!((seen.start, seen.end), ((s + far) as i64, (e + far) as i64));
    assert_eq!(ix.first_arrival_since(pl[0], 1, Time::MAX), Some(s + far));
    assert!(ix.overlaps(pl[0], 0, s + far, s + far + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ix.add(pl[0], 2, e, e + longest + 1)
    }));
    assert!(
        result.is_err(),
        "a signal longer than the index holds was taken"
    );
}

/// An index asked to hold longer signals than its keys can is refused.
#[test]
#[should_panic(expected = "longer than the bus index holds")]
fn an_index_for_longer_signals_is_refused() {
    let far: Time = 50_000_000;
    let span = 2 * far;
    BusIndex::new(
        places(&[0, far]).into_iter(),
        span,
        KEY_RANGE as Time - span - far + 1,
    );
}
