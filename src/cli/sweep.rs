//! `csmacd sweep`, and the machinery every command that simulates shares:
//! prepare the output directory, run the missing points in parallel with a
//! progress bar (each point stored under points/ as it finishes), stop
//! cleanly on Ctrl-C, then assemble the CSV files and draw the charts.

use super::{CliError, CliResult};
use crate::chart::{self, Table};
use crate::output::{self, Assembled, PointKey, PointRuns};
use crate::sweep::{self, Plan, Shard};
use anyhow::{anyhow, Context};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Run a sweep: every point of the `[sweep]` grid, in parallel.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
A sweep file is a scenario plus [sweep]: each key a dotted path into the
scenario, each value a list; the points are the product of the lists (the
first axis varies slowest), each run `replications` times. Optional
[[chart]] tables (x, y, series, title, name, log_x) name the charts;
otherwise each main metric is drawn against the offered-load axis (or
stations, or frame size), one line per value of the other axes.

Writes DIR/summary.csv (one row per point: the axes by their dotted paths,
then each metric and its _ci95 half-width), DIR/runs.csv (one row per point
and replication), DIR/stations.csv, DIR/scenario.toml (the sweep as run),
DIR/charts/*.png and *.svg, and DIR/points/ (each finished point, stored as
soon as it finishes).

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
    /// Output directory [default: results/<file stem>/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the master seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Threads [default: one per core]. Results do not depend on it.
    #[arg(long, short)]
    pub jobs: Option<usize>,
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
    /// Overwrite results of a different scenario in the output directory.
    #[arg(long)]
    pub force: bool,
}

/// How to execute a plan.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub jobs: Option<usize>,
    pub shard: Option<Shard>,
    pub resume: bool,
    pub quiet: bool,
    pub force: bool,
}

pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into())
}

pub fn run(args: SweepArgs) -> CliResult {
    let plan = sweep::load(&args.file, args.seed).map_err(CliError::usage)?;
    if args.dry_run {
        print_points(&plan, args.shard);
        return Ok(());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(stem(&args.file)));
    let opts = Options {
        jobs: args.jobs,
        shard: args.shard,
        resume: args.resume,
        quiet: args.quiet,
        force: args.force,
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
            print_table(&plan, &done);
            eprintln!(
                "wrote {}/{{summary,runs,stations}}.csv, scenario.toml and charts/",
                out.display()
            );
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
            .map(|&i| plan.points[i].scenario.replications as u64)
            .sum::<u64>()
    );
    for i in mine {
        let p = &plan.points[i];
        println!(
            "  {i:>5}  seed {:>20}  x{}  {}",
            p.seed,
            p.scenario.replications,
            p.describe()
        );
    }
}

/// Set by SIGINT/SIGTERM: start no new run. A second signal exits at once.
static STOP: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap and _exit.
    if STOP.swap(true, Ordering::SeqCst) {
        unsafe { libc::_exit(130) };
    }
}

fn install_stop_handler() {
    #[cfg(unix)]
    {
        let handler = on_signal as extern "C" fn(libc::c_int);
        // SAFETY: the handler only touches an atomic and calls _exit, both
        // async-signal-safe; installing it races with nothing (once, early).
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
            libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        }
    }
}

fn replication_seeds(plan: &Plan) -> Vec<Vec<u64>> {
    plan.points.iter().map(|p| p.replication_seeds()).collect()
}

/// Runs what `opts` asks of `plan` into `out`. Returns the assembled tables,
/// or `None` for a shard (whose points wait for `csmacd merge`).
pub fn execute(
    plan: &Plan,
    out: &Path,
    opts: &Options,
    resume_hint: &str,
) -> Result<Option<Assembled>, CliError> {
    // Refuse, before any work, what this machine cannot hold.
    for p in &plan.points {
        super::run::check_memory(&plan.name, &p.scenario)?;
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))
        .map_err(CliError::failure)?;
    // Check that the directory can be written before any simulation.
    let probe = out.join(format!(".csmacd-write-test{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write into output directory {}", out.display()))
        .map_err(CliError::failure)?;
    let _ = std::fs::remove_file(&probe);
    // Finished results (top level) and the work in progress (points/).
    let finished = std::fs::read_to_string(out.join("scenario.toml")).ok();
    let plan_path = output::plan_path(out);
    let existing = std::fs::read_to_string(&plan_path).ok();
    let same = existing.as_deref() == Some(plan.resolved.as_str());
    if opts.resume && !same {
        return Err(CliError::usage(match existing {
            None => anyhow!(
                "--resume: {} holds no sweep to resume (no points/scenario.toml); run without --resume",
                out.display()
            ),
            Some(_) => anyhow!(
                "--resume: {} holds points of a different sweep (its points/scenario.toml differs from this file as resolved); \
                 resume with the same file and --seed, or run without --resume",
                out.display()
            ),
        }));
    }
    if !same {
        refuse_other_scenario(
            out,
            finished.as_deref().or(existing.as_deref()),
            &plan.resolved,
            opts.force,
        )?;
    }
    // A fresh run starts over; a shard keeps the other shards' points of
    // the same sweep (shards may share one directory).
    if !same || (!opts.resume && opts.shard.is_none()) {
        output::clear_points(out).map_err(CliError::failure)?;
    }
    // Shards may share a directory: only a whole run may remove another
    // process's temporary files (those a killed run left behind).
    if opts.shard.is_none() {
        output::clean_temporaries(out);
    }
    std::fs::create_dir_all(output::points_dir(out))
        .and_then(|_| output::write_atomic(&plan_path, plan.resolved.as_bytes()))
        .with_context(|| format!("cannot write {}", plan_path.display()))
        .map_err(CliError::failure)?;

    let seeds = replication_seeds(plan);
    let in_shard: Vec<usize> = (0..plan.points.len())
        .filter(|&i| opts.shard.is_none_or(|s| s.contains(i)))
        .collect();
    let todo: Vec<usize> = in_shard
        .iter()
        .copied()
        .filter(|&i| {
            !opts.resume
                || !matches!(
                    output::read_point(
                        out,
                        i,
                        &PointKey {
                            axes: &plan.points[i].axes,
                            seeds: &seeds[i],
                        }
                    ),
                    Ok(Some(_))
                )
        })
        .collect();

    install_stop_handler();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .context("cannot start the worker threads")
        .map_err(CliError::failure)?;
    let bar = progress_bar(in_shard.len(), in_shard.len() - todo.len(), opts.quiet);
    let result = pool.install(|| {
        sweep::run_pending(&plan.points, &todo, &STOP, &|i, runs| {
            let p = &plan.points[i];
            output::write_point(
                out,
                i,
                &PointRuns {
                    axes: &p.axes,
                    seeds: &seeds[i],
                    runs,
                },
            )?;
            bar.inc(1);
            Ok::<(), output::OutputError>(())
        })
    });
    let finished = bar.position();
    bar.finish_and_clear();
    result
        .with_context(|| {
            format!(
                "cannot write the results into {}; its finished results \
                 (summary.csv, runs.csv, stations.csv, scenario.toml) were not changed",
                out.display()
            )
        })
        .map_err(CliError::failure)?;
    if STOP.load(Ordering::SeqCst) {
        return Err(CliError {
            code: 130,
            error: anyhow!(
                "interrupted: {finished} of {} points finished and kept in {}; \
                 run the rest with `{resume_hint}`",
                in_shard.len(),
                output::points_dir(out).display()
            ),
        });
    }
    if opts.shard.is_some() {
        return Ok(None);
    }
    finish(plan, out).map(Some)
}

/// Result files a run writes; a directory holding any of them holds results.
const RESULT_FILES: &[&str] = &["summary.csv", "runs.csv", "stations.csv", "scenario.toml"];

/// Without `force`, refuses to overwrite the results of another scenario: a
/// directory whose scenario.toml names another scenario (or cannot be read as
/// one), or that holds result files but no scenario.toml.
fn refuse_other_scenario(out: &Path, old: Option<&str>, new: &str, force: bool) -> CliResult {
    if force {
        return Ok(());
    }
    let name = |s: &str| {
        s.parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("name").and_then(|v| v.as_str()).map(str::to_string))
    };
    let other = match old {
        Some(old) => old.parse::<toml::Table>().is_err() || name(old) != name(new),
        None if out.join("scenario.toml").exists() => true,
        None => RESULT_FILES.iter().any(|f| out.join(f).exists()),
    };
    if other {
        return Err(CliError::usage(anyhow!(
            "{} holds results of another scenario; choose another --out or pass --force",
            out.display()
        )));
    }
    Ok(())
}

fn progress_bar(total: usize, done: usize, quiet: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {pos}/{len} points, ETA {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_position(done as u64);
    bar.reset_eta();
    bar
}

/// Assembles summary.csv, runs.csv and stations.csv from points/ and draws
/// the charts. Every point of the plan must be stored.
pub fn finish(plan: &Plan, out: &Path) -> Result<Assembled, CliError> {
    let seeds = replication_seeds(plan);
    let keys: Vec<PointKey> = plan
        .points
        .iter()
        .zip(&seeds)
        .map(|(p, s)| PointKey {
            axes: &p.axes,
            seeds: s,
        })
        .collect();
    let done = output::assemble(out, &keys).map_err(|e| match e {
        output::OutputError::Missing { .. } => CliError::usage(e),
        e => CliError::failure(e),
    })?;
    // All three or none: a write error leaves the directory as it was.
    output::write_files_atomic(
        out,
        &[
            ("summary.csv", &done.summary),
            ("runs.csv", &done.runs),
            ("stations.csv", &done.stations),
            ("scenario.toml", plan.resolved.as_bytes()),
        ],
    )
    .with_context(|| {
        format!(
            "cannot write the results into {}; nothing there was changed",
            out.display()
        )
    })
    .map_err(CliError::failure)?;
    write_charts(plan, out, &done.summary)?;
    Ok(done)
}

/// Draws the plan's charts (or the default ones) from summary.csv into
/// DIR/charts/, replacing any charts of an earlier run.
fn write_charts(plan: &Plan, out: &Path, summary: &[u8]) -> CliResult {
    let dir = out.join("charts");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let p = e.path();
            if matches!(p.extension().and_then(|x| x.to_str()), Some("png" | "svg")) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    let specs = if plan.charts.is_empty() {
        chart::default_specs(&plan.axes)
    } else {
        plan.charts.clone()
    };
    if specs.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))
        .map_err(CliError::failure)?;
    let table = Table::from_csv(summary).map_err(CliError::failure)?;
    for spec in specs {
        let spec = chart::complete(&spec, &plan.axes);
        let name = spec.name.clone().unwrap_or_else(|| spec.y.clone());
        let c = match chart::build(&table, &spec) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("warning: chart {name} skipped: {e}");
                continue;
            }
        };
        write_chart(&c, &dir.join(format!("{name}.svg")))?;
        write_chart(&c, &dir.join(format!("{name}.png")))?;
    }
    Ok(())
}

/// Writes one chart as PNG or SVG, by the extension of `path`, atomically.
pub fn write_chart(c: &chart::Chart, path: &Path) -> CliResult {
    let result = match path.extension().and_then(|x| x.to_str()) {
        Some("svg") => chart::render_svg(c)
            .map_err(anyhow::Error::from)
            .and_then(|svg| output::write_atomic(path, svg.as_bytes()).map_err(Into::into)),
        Some("png") => output::write_atomic_with(path, |tmp| {
            chart::render_png(c, tmp).map_err(|e| e.to_string())
        })
        .map_err(Into::into),
        _ => {
            return Err(CliError::usage(anyhow!(
                "{}: a chart file ends in .png or .svg",
                path.display()
            )))
        }
    };
    result
        .with_context(|| format!("cannot write {}", path.display()))
        .map_err(CliError::failure)
}

/// A compact table of the sweep's main results on stdout.
fn print_table(plan: &Plan, done: &Assembled) {
    const SHOWN: &[&str] = &[
        "throughput",
        "delay_mean_us",
        "collisions_per_delivered",
        "fairness",
    ];
    const MAX_ROWS: usize = 60;
    let columns = output::metric_columns();
    let idx: Vec<usize> = SHOWN
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
    let mut header: Vec<String> = plan.axes.iter().map(|a| a.path.clone()).collect();
    header.extend(SHOWN.iter().map(|s| s.to_string()));
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
