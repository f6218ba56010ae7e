//! Runs a sweep's points on rayon, the only rayon user. A point's results
//! depend on its own seed alone, never on the threads, the work order or the shard.

use super::plan::Point;
use crate::progress::Progress;
use crate::results::{RunOutput, Stalled};
use crate::world::Scenario;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs every replication of every point on the current rayon pool with
/// `run` (a world's run, or one that keeps the world's own result type),
/// calling `done` after each finished run; results are in point, then
/// replication order.
pub fn run_points<R: Send>(
    points: &[Point],
    run: &(dyn Fn(&Scenario, u64) -> R + Sync),
    done: &(dyn Fn() + Sync),
) -> Vec<Vec<R>> {
    let jobs: Vec<(usize, u64)> = points
        .iter()
        .enumerate()
        .flat_map(|(p, pt)| pt.replication_seeds().into_iter().map(move |s| (p, s)))
        .collect();
    let results: Vec<(usize, R)> = jobs
        .par_iter()
        .map(|&(p, s)| {
            let r = run(&points[p].scenario, s);
            done();
            (p, r)
        })
        .collect();
    let mut out: Vec<Vec<R>> = points.iter().map(|_| Vec::new()).collect();
    for (p, r) in results {
        out[p].push(r);
    }
    out
}

/// Receives each finished point (its index and runs) and stores it.
pub type PointSink<'a, E> = dyn Fn(usize, &[RunOutput]) -> Result<(), E> + Sync + 'a;

/// Why [`run_pending`] stopped before every point was done.
#[derive(Debug)]
pub enum PendingError<E> {
    /// Storing a finished point failed.
    Store(E),
    /// A run of this point could not advance its clock.
    Stalled { point: usize, stalled: Stalled },
}

/// Runs the points `todo` (indices into `points`) on the current rayon pool,
/// replications in parallel too, and hands each finished point to `finished`
/// (which stores it) as soon as all its replications are done, in whatever
/// order they finish. Once `stop` is set no new run starts; points cut short
/// are not handed over. The first error from `finished`, or the first run
/// that stalls, stops the sweep: no new run starts, the runs under way
/// finish. Each run reports how far it has got to `progress`.
pub fn run_pending<E: Send>(
    points: &[Point],
    todo: &[usize],
    stop: &AtomicBool,
    progress: &Progress,
    finished: &PointSink<'_, E>,
) -> Result<(), PendingError<E>> {
    // Points differ a lot in cost. Each worker takes the next point from a
    // list sorted by estimated cost, most expensive first (greedy longest-
    // processing-time scheduling), so that no long point starts last and
    // runs alone. The order of work does not reach the output: each point's
    // result goes to `finished` under its own index.
    let mut order: Vec<usize> = todo.to_vec();
    let cost: Vec<f64> = order
        .iter()
        .map(|&p| points[p].scenario.work_estimate())
        .collect();
    let mut ranked: Vec<(f64, usize)> = cost.into_iter().zip(order.iter().copied()).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    order = ranked.into_iter().map(|(_, p)| p).collect();
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<PendingError<E>>> = Mutex::new(None);
    let failed = AtomicBool::new(false);
    let fail = |e: PendingError<E>| {
        failed.store(true, Ordering::Relaxed);
        if let Ok(mut f) = failure.lock() {
            f.get_or_insert(e);
        }
    };
    // A stalled run stops the others from starting, as Ctrl-C does.
    let halt = |stop: &AtomicBool| stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed);
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads().max(1) {
            scope.spawn(|_| loop {
                if halt(stop) {
                    return;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&p) = order.get(k) else { return };
                match run_point(&points[p], &|| halt(stop), progress) {
                    Ok(Some(runs)) => {
                        if let Err(e) = finished(p, &runs) {
                            return fail(PendingError::Store(e));
                        }
                    }
                    Ok(None) => {}
                    Err(stalled) => return fail(PendingError::Stalled { point: p, stalled }),
                }
            });
        }
    });
    match failure.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Runs a point's replications in parallel; with a target precision, adds
/// replications (doubling, up to the maximum) until its metric's interval is
/// narrow enough. The decision depends only on the runs' results, so a
/// point gives the same replications on any thread count, shard or resume.
/// None when `stop` cut the point short; the first stalled run's report
/// when one stalled.
fn run_point(
    point: &Point,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &Progress,
) -> Result<Option<Vec<RunOutput>>, Stalled> {
    let batch = |seeds: &[u64]| -> Result<Option<Vec<RunOutput>>, Stalled> {
        let runs: Result<Option<Vec<RunOutput>>, Stalled> = seeds
            .par_iter()
            .map(|&s| {
                if stop() {
                    return Ok(None);
                }
                point
                    .scenario
                    .run_metered(s, &mut progress.meter())
                    .map(Some)
            })
            .collect::<Result<Vec<Option<RunOutput>>, Stalled>>()
            .map(|runs| runs.into_iter().collect());
        runs
    };
    let seeds = point.all_replication_seeds();
    let mut done = point.scenario.replications() as usize;
    let Some(mut runs) = batch(&seeds[..done])? else {
        return Ok(None);
    };
    if let Some(precision) = point.scenario.precision() {
        let column = runs.first().and_then(|r| {
            r.columns
                .metrics
                .iter()
                .position(|c| *c == precision.metric)
        });
        let values = |runs: &[RunOutput]| -> Vec<f64> {
            column.map_or(Vec::new(), |k| runs.iter().map(|r| r.metrics[k]).collect())
        };
        while done < seeds.len() && !precision.met(&values(&runs)) {
            let more = done.max(2).min(seeds.len() - done);
            let Some(more_runs) = batch(&seeds[done..done + more])? else {
                return Ok(None);
            };
            runs.extend(more_runs);
            done += more;
        }
    }
    Ok(Some(runs))
}
