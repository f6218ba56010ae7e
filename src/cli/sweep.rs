//! `csmacd sweep`: parses the command, lists the points of a dry run and
//! prints the table of results; the running itself is batch's.

use super::batch::{execute, stem, warn_before_running, BatchArgs, Options};
use super::{CliError, CliResult};
use crate::output::Assembled;
use crate::sweep::{self, Plan, Shard};
use std::path::PathBuf;

/// Run a sweep: every point of the `[sweep]` grid, in parallel.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
A sweep file is a scenario plus [sweep]: each key a dotted path into the
scenario, each value a list; the points are the product of the lists (the
first axis varies slowest), each run `replications` times. Optional
[[chart]] tables (x, y, series, title, name, x_scale, y_scale, size) name
the charts, `series = \"group\"` one series per station group (from
groups.csv); otherwise each main metric is drawn against the offered-load
axis (or stations, or frame size), one line per value of the other axes.
A series keeps its colour, marker and dash on every chart of the sweep;
docs/sweeps.md describes the keys.

Writes DIR/summary.csv (one row per point: the axes by their dotted paths,
then each metric and its _ci95 half-width), DIR/runs.csv (one row per point
and replication), DIR/stations.csv and DIR/groups.csv, DIR/scenario.toml
(the sweep as run), DIR/charts/*.png and *.svg when there are charts to
draw, and DIR/points/ (each finished point, stored as soon as it finishes).

Ctrl-C (or SIGTERM) lets the running points finish, keeps every finished
point and stops; a second Ctrl-C quits at once. `--resume` then runs only
what is missing and ends with the same bytes as an uninterrupted run.

Examples:
  csmacd sweep scenarios/throughput-vs-load.toml
  csmacd sweep scenarios/throughput-vs-load.toml --dry-run
  csmacd sweep scenarios/throughput-vs-load.toml --resume --out results/throughput-vs-load
  csmacd sweep FILE --shard 3/8 --out results/study/shard-3   # then: csmacd merge
  csmacd merge results/study/shard-* --out results/study")]
pub struct SweepArgs {
    /// The sweep file (TOML): a scenario plus [sweep].
    pub file: PathBuf,
    #[command(flatten)]
    pub batch: BatchArgs,
    /// Run only the K-th of N slices of the grid (points K-1, K-1+N, ...).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Keep the finished points in the output directory; run only the rest.
    #[arg(long)]
    pub resume: bool,
    /// List the points (validating each) and exit.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: SweepArgs) -> CliResult {
    let file = args.file.display().to_string();
    let text = crate::scenario::read_text(&args.file).map_err(CliError::usage)?;
    let plan = sweep::from_str(&file, &stem(&args.file), &text, args.batch.seed)
        .map_err(CliError::usage)?;
    warn_before_running(&plan, &file, &text);
    if args.dry_run {
        print_points(&plan, args.shard);
        return Ok(());
    }
    let out = args.batch.out_dir(&args.file);
    let opts = Options {
        shard: args.shard,
        resume: args.resume,
        quiet: args.quiet,
        ..args.batch.options()
    };
    let resume_hint = format!(
        "csmacd sweep {} --resume --out {}{}",
        args.file.display(),
        out.display(),
        args.shard
            .map(|s| format!(" --shard {}/{}", s.k, s.n))
            .unwrap_or_default()
    );
    match execute(&plan, &out, &opts, &resume_hint)? {
        Some(done) => {
            print_table(&plan, &done.assembled);
            eprintln!("{}", done.wrote(&out));
        }
        None => {
            let shard = args.shard.unwrap_or(Shard { k: 1, n: 1 });
            eprintln!(
                "shard {}/{}: its points are in {}/points; join the shards with `csmacd merge DIR... --out DIR`",
                shard.k,
                shard.n,
                out.display()
            );
        }
    }
    Ok(())
}

fn print_points(plan: &Plan, shard: Option<Shard>) {
    let mine: Vec<usize> = (0..plan.points.len())
        .filter(|&i| shard.is_none_or(|s| s.contains(i)))
        .collect();
    println!(
        "{}: {} point{} of {}, {} runs in all",
        plan.name,
        mine.len(),
        if mine.len() == 1 { "" } else { "s" },
        plan.points.len(),
        mine.iter()
            .map(|&i| plan.points[i].scenario.replications() as u64)
            .sum::<u64>()
    );
    for i in mine {
        let p = &plan.points[i];
        println!(
            "  {i:>5}  seed {:>20}  x{}  {}",
            p.seed,
            p.scenario.replications(),
            p.describe()
        );
    }
}

/// A compact table of the sweep's main results on stdout.
fn print_table(plan: &Plan, done: &Assembled) {
    const MAX_ROWS: usize = 60;
    let Some(first) = plan.points.first() else {
        return;
    };
    let columns = first.scenario.columns().metrics;
    let idx: Vec<usize> = first
        .scenario
        .columns()
        .headline
        .iter()
        .filter_map(|c| columns.iter().position(|k| k == c))
        .collect();
    println!(
        "{}: {} point{}, {} runs",
        plan.name,
        plan.points.len(),
        if plan.points.len() == 1 { "" } else { "s" },
        plan.runs()
    );
    let mut header: Vec<String> = plan.axes.iter().map(|a| a.column.clone()).collect();
    header.extend(idx.iter().map(|&k| columns[k].to_string()));
    let rows: Vec<Vec<String>> = plan
        .points
        .iter()
        .zip(&done.values)
        .take(MAX_ROWS)
        .map(|(p, runs)| {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            for &k in &idx {
                let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
                let (m, _) = crate::stats::mean_ci95(&vals);
                row.push(if m.is_nan() {
                    "-".into()
                } else {
                    format!("{m:.4}")
                });
            }
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        println!("  {}", parts.join("  "));
    };
    line(&header);
    for r in &rows {
        line(r);
    }
    if plan.points.len() > MAX_ROWS {
        println!(
            "  ... {} more rows in summary.csv",
            plan.points.len() - MAX_ROWS
        );
    }
}
