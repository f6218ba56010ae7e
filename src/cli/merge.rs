//! `csmacd merge`: joins the output directories of a sweep's shards into the
//! files one unsharded run gives.

use super::batch::{stem, write_charts, write_results};
use super::{CliError, CliResult};
use crate::output::{self, results_dir, staging};
use crate::results::Columns;
use crate::sweep::{self, Plan};
use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};

/// Join shard outputs of one sweep into a single result directory.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each DIR is the --out of `csmacd sweep FILE --shard K/N` (or of an
interrupted run). They must come from the same sweep file as resolved
(identical DIR/scenario.toml). OUT then holds exactly the files one
unsharded run writes: summary.csv, runs.csv, stations.csv, scenario.toml,
points/ and charts/. OUT may be one of the DIRs. A merge that fails (a
point in none of the DIRs, a write error) leaves OUT as it was.

Example:
  csmacd sweep scenarios/throughput-vs-load.toml --shard 1/2 --out results/t/1
  csmacd sweep scenarios/throughput-vs-load.toml --shard 2/2 --out results/t/2
  csmacd merge results/t/1 results/t/2 --out results/t/all")]
pub struct MergeArgs {
    /// Shard output directories.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite results of a different scenario in OUT.
    #[arg(long)]
    pub force: bool,
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The one sweep the output directories `dirs` hold (each a shard, an
/// interrupted run or a finished one), read from their stored plans; an
/// error names a directory that holds no sweep, or two that hold different ones.
pub fn common_plan(dirs: &[PathBuf]) -> Result<Plan, CliError> {
    let mut resolved: Option<(PathBuf, String)> = None;
    for d in dirs {
        let (path, text) = results_dir::stored_plan(d);
        let text = text.map_err(|e| {
            CliError::usage(match e.kind() {
                _ if !d.is_dir() => anyhow!("{}: no such directory", d.display()),
                std::io::ErrorKind::NotFound => anyhow!(
                    "{} holds no sweep (neither points/scenario.toml nor scenario.toml); \
                     give output directories of `csmacd sweep`",
                    d.display()
                ),
                _ => anyhow!(
                    "{}: {e}; is {} the output directory of `csmacd sweep`?",
                    path.display(),
                    d.display()
                ),
            })
        })?;
        match &resolved {
            None => resolved = Some((path, text)),
            Some((first, t)) if *t != text => {
                return Err(CliError::usage(anyhow!(
                    "{} and {} come from different sweeps (their scenario.toml differ); give the directories of one sweep only",
                    first.display(),
                    path.display()
                )))
            }
            Some(_) => {}
        }
    }
    let Some((path, text)) = resolved else {
        return Err(CliError::usage(anyhow!("give at least one directory")));
    };
    sweep::from_str(&path.display().to_string(), &stem(&path), &text, None).map_err(CliError::usage)
}

pub fn run(args: MergeArgs) -> CliResult {
    let plan = common_plan(&args.dirs)?;

    // Every point must be in one of the directories before anything is
    // written: a merge that cannot finish leaves no trace.
    let mut sources = Vec::with_capacity(plan.points.len());
    let mut missing = Vec::new();
    for (i, p) in plan.points.iter().enumerate() {
        let seeds = p.all_replication_seeds();
        let key = super::batch::point_key(p, &seeds);
        match args
            .dirs
            .iter()
            .find(|d| matches!(output::read_point(d, i, &key), Ok(Some(_))))
        {
            Some(d) => sources.push((i, d.as_path(), key.columns)),
            None => missing.push(i),
        }
    }
    if let Some(first) = missing.first() {
        return Err(CliError::usage(anyhow!(
            "{} of {} points are in none of the directories (first: point {first}, {}); \
             run the missing shards, or `csmacd sweep FILE --resume --out DIR` on one of them; \
             nothing was written",
            missing.len(),
            plan.points.len(),
            plan.points[*first].describe()
        )));
    }

    let out = &args.out;
    super::check_out_dir(out)?;
    let out_is_input = args.dirs.iter().any(|d| same_dir(d, out));
    if !out_is_input {
        let existing = results_dir::existing(out);
        if let Some(old) = existing.finished.or(existing.pending) {
            if old != plan.resolved && !args.force {
                return Err(CliError::usage(anyhow!(
                    "{} holds results of another sweep; choose another --out or pass --force",
                    out.display()
                )));
            }
        }
    }
    let created = output::create_dir_tracked(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))
        .map_err(CliError::failure)?;
    let result = write_merged(&plan, out, &sources);
    if result.is_err() {
        output::remove_empty_dirs(&created);
    }
    result?;
    eprintln!(
        "merged {} points from {} directories into {}",
        plan.points.len(),
        args.dirs.len(),
        out.display()
    );
    Ok(())
}

/// Builds the merged results directory beside `out` (its points linked
/// from the shards' directories, the result files and charts), then swaps
/// it in place of `out`; a failure removes it and leaves `out` as it was.
fn write_merged(plan: &Plan, out: &Path, sources: &[(usize, &Path, Columns)]) -> CliResult {
    let real = results_dir::swappable(out).map_err(CliError::usage)?;
    staging::clean_beside(&real, None);
    let built = staging::start(&real);
    let result = built
        .as_ref()
        .map_err(|e| anyhow!("cannot write beside it: {e}"));
    let result = match result {
        Err(e) => Err(CliError::failure(e)),
        Ok(built) => {
            let written = (|| {
                for (i, from, columns) in sources {
                    output::link_point(from, *i, columns, built).map_err(CliError::failure)?;
                }
                results_dir::store_plan(built, &plan.resolved).map_err(CliError::failure)?;
                let done = write_results(plan, built)?;
                write_charts(plan, built, &done)?;
                staging::carry_over(&real, built)
                    .and_then(|()| staging::publish(built, &real))
                    .map_err(CliError::failure)
            })();
            if written.is_err() {
                staging::discard(built);
            }
            written
        }
    };
    result.map_err(|e| CliError {
        code: e.code,
        error: e.error.context(format!(
            "cannot write the merged results into {}; it was not changed",
            out.display()
        )),
    })
}
