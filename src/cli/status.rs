//! `csmacd status`: how far a sweep has got, over the output directories of
//! its shards (or of one run), read from the points they have stored.

use super::merge::common_plan;
use super::CliResult;
use crate::output::{self, results_dir};
use crate::sweep::{Plan, Shard};
use std::path::{Path, PathBuf};

/// Report the finished points of a sweep, in all and per directory.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each DIR is the --out of `csmacd sweep` (a shard, a run in progress, an
interrupted or a finished one); all must hold the same sweep. Prints, on
stdout, how many of the sweep's points are finished in any of the DIRs, and
per DIR how many of its own points (those of its shard) it holds. A point
counts once it is stored whole, as `merge` and `--resume` count it. Reads
only; exits 0 however far the sweep has got.

Examples:
  csmacd status results/study/shards/*
  watch -n 10 csmacd status results/study/shards/*")]
pub struct StatusArgs {
    /// Output directories of one sweep.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

pub fn run(args: StatusArgs) -> CliResult {
    let plan = common_plan(&args.dirs)?;
    let finished: Vec<Vec<bool>> = args.dirs.iter().map(|d| finished(&plan, d)).collect();
    let total = plan.points.len();
    let done = (0..total)
        .filter(|&i| finished.iter().any(|f| f[i]))
        .count();
    let mut summary = format!(
        "{}: {done} of {total} point{} finished ({}%)",
        plan.name,
        if total == 1 { "" } else { "s" },
        done * 100 / total.max(1)
    );
    if done < total {
        summary.push_str(&format!(", {} to run", total - done));
    }
    println!("{summary}");
    for (dir, f) in args.dirs.iter().zip(&finished) {
        println!("  {}", describe_dir(&plan, dir, f));
    }
    if done == total && !args.dirs.iter().any(|d| has_results(d)) {
        println!("every point is finished; `csmacd merge DIR... --out DIR` joins them");
    }
    Ok(())
}

/// Per point of `plan`, whether `dir` holds it finished.
fn finished(plan: &Plan, dir: &Path) -> Vec<bool> {
    plan.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let seeds = p.all_replication_seeds();
            let key = super::batch::point_key(p, &seeds);
            matches!(output::read_point(dir, i, &key), Ok(Some(_)))
        })
        .collect()
}

/// Whether `dir` holds the result files of the sweep its points belong to
/// (a finished run or merge).
fn has_results(dir: &Path) -> bool {
    let existing = results_dir::existing(dir);
    existing.finished.is_some()
        && existing
            .pending
            .is_none_or(|p| Some(p) == existing.finished)
}

/// "DIR: shard K/N, F of T points": the points of the shards that work in
/// `dir`, or of the whole sweep when none does.
fn describe_dir(plan: &Plan, dir: &Path, finished: &[bool]) -> String {
    let shards: Vec<Shard> = output::marked_shards(dir)
        .into_iter()
        .map(|(k, n)| Shard { k, n })
        .collect();
    let mine = |i: usize| shards.is_empty() || shards.iter().any(|s| s.contains(i));
    let total = (0..plan.points.len()).filter(|&i| mine(i)).count();
    let done = (0..plan.points.len())
        .filter(|&i| mine(i) && finished[i])
        .count();
    let whose = match shards.as_slice() {
        [] => String::new(),
        [s] => format!("shard {}/{}, ", s.k, s.n),
        many => format!(
            "shards {}, ",
            many.iter()
                .map(|s| format!("{}/{}", s.k, s.n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut line = format!(
        "{}: {whose}{done} of {total} point{}",
        dir.display(),
        if total == 1 { "" } else { "s" }
    );
    if has_results(dir) {
        line.push_str(", results written");
    }
    line
}
