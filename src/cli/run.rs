//! `csmacd run` and `csmacd validate`.

use super::batch::{self, stem};
use super::{CliError, CliResult};
use crate::scenario;
use crate::stats::mean_ci95;
use crate::sweep::{self, Point};
use std::path::{Path, PathBuf};

/// Run one scenario and write its results.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Writes DIR/summary.csv (one row: the metrics, with _ci95 half-widths when
replications > 1), DIR/runs.csv (one row per replication), DIR/stations.csv
(one row per station and replication), DIR/scenario.toml (the scenario as
run, with its seed) and DIR/points/ (the stored point they are assembled
from). Prints a summary table. A run is the one-point case of `csmacd sweep`.

Example:
  csmacd run scenarios/two-saturated.toml --seed 7 --out results/two")]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    #[command(flatten)]
    pub batch: batch::BatchArgs,
}

/// Check scenario files without running them.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Sweep files are checked point by point.\n\nExample:\n  csmacd validate scenarios/*.toml"
)]
pub struct ValidateArgs {
    /// Scenario or sweep files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn validate(args: ValidateArgs) -> CliResult {
    let mut bad = 0;
    for f in &args.files {
        match check_file(f) {
            Ok(msg) => println!("{}: ok ({msg})", f.display()),
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "{bad} of {} files invalid",
            args.files.len()
        )));
    }
    Ok(())
}

fn check_file(path: &Path) -> Result<String, sweep::SweepError> {
    let plan = sweep::load(path, None)?;
    if plan.axes.is_empty() {
        let sc = &plan.points[0].scenario;
        return Ok(format!(
            "{}: {}, {} simulated",
            sc.name(),
            sc.size(),
            crate::units::format_ps(sc.duration())
        ));
    }
    Ok(format!(
        "{}: sweep of {} points over {}, {} runs",
        plan.name,
        plan.points.len(),
        plan.axes
            .iter()
            .map(|a| a.path.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        plan.runs()
    ))
}

pub fn run(args: RunArgs) -> CliResult {
    let file = args.file.display().to_string();
    let text = scenario::read_text(&args.file).map_err(CliError::usage)?;
    let table = scenario::parse_table(&file, &text).map_err(CliError::usage)?;
    if table.contains_key("sweep") {
        return Err(CliError::usage(anyhow::anyhow!(
            "{file}: has a [sweep] table; run it with `csmacd sweep {file}`"
        )));
    }
    // A run is the one-point case of a sweep: same checks, same storage.
    let plan = sweep::from_str(&file, &stem(&args.file), &text, args.batch.seed)
        .map_err(CliError::usage)?;
    let out = args.batch.out_dir(&args.file);
    let opts = batch::Options {
        quiet: true,
        ..args.batch.options()
    };
    let hint = format!("csmacd run {file}");
    let done = batch::execute(&plan, &out, &opts, &hint)?
        .ok_or_else(|| CliError::failure(anyhow::anyhow!("no results")))?;
    print_summary(&plan.points[0], &done.assembled.values[0]);
    eprintln!("{}", done.wrote(&out));
    Ok(())
}

fn print_summary(point: &Point, runs: &[Vec<f64>]) {
    let sc = &point.scenario;
    println!(
        "{}: {}, {} simulated ({} measured), {} replication{}",
        sc.name(),
        sc.size(),
        crate::units::format_ps(sc.duration()),
        crate::units::format_ps(sc.duration() - sc.warmup()),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    for (k, c) in sc.columns().metrics.iter().enumerate() {
        let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
        let (m, h) = mean_ci95(&vals);
        let value = if m.is_nan() {
            "-".to_string()
        } else if m.fract() == 0.0 && m.abs() < 1e15 {
            format!("{m:.0}")
        } else {
            format!("{m:.4}")
        };
        if h.is_nan() {
            println!("  {c:<22} {value:>14}");
        } else {
            println!("  {c:<22} {value:>14} ± {h:.4}");
        }
    }
}
