//! What every command that simulates into a results directory shares: its
//! flags, the memory check, running points with progress and Ctrl-C, assembly, charts.

use super::{watch, CliError, CliResult};
use crate::output::chart::{self, Table};
use crate::output::{self, results_dir, staging, Assembled, PointKey, PointRuns};
use crate::progress::Progress;
use crate::results::MemoryNeed;
use crate::sweep::{self, Plan, Shard};
use anyhow::{anyhow, Context};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The flags of every command that simulates into a results directory.
#[derive(clap::Args, Debug)]
pub struct BatchArgs {
    /// Output directory [default: results/<file stem>/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the seed in the file (a sweep's master seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Threads, 1 to 1024 [default: one per core]. Results do not depend on it.
    #[arg(long, short, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Overwrite the results of another scenario (another `name`, or files
    /// not written by csmacd) in the output directory.
    #[arg(long)]
    pub force: bool,
}

/// The most threads `--jobs` may ask for: each is a thread of its own with
/// its stack, and a run's work does not split further than its runs.
pub const MAX_JOBS: usize = 1024;

/// `--jobs N`: 1 to [`MAX_JOBS`] (0 stands for the default, one per core).
fn parse_jobs(text: &str) -> Result<usize, String> {
    let n: usize = text.trim().parse().map_err(|_| {
        format!("`{text}` is not a number of threads; give 1 to {MAX_JOBS}, e.g. --jobs 4")
    })?;
    if n > MAX_JOBS {
        return Err(format!(
            "{n} threads is more than the {MAX_JOBS} csmacd starts; give 1 to {MAX_JOBS} \
             (this machine has {} cores; the default is one thread per core)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ));
    }
    Ok(n)
}

impl BatchArgs {
    /// The results directory for `file`: `--out`, or `results/<file stem>/`.
    pub fn out_dir(&self, file: &Path) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| Path::new("results").join(stem(file)))
    }

    /// The options these flags set; the rest as by default.
    pub fn options(&self) -> Options {
        Options {
            jobs: self.jobs,
            force: self.force,
            ..Default::default()
        }
    }
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

/// A file's name without its extension ("scenario" when it has none): the
/// default results directory, and the name of a sweep that gives none.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into())
}

/// The memory this machine has available, from /proc/meminfo (Linux); None
/// where that cannot be read, and then only the scenario's own limit applies.
pub(super) fn available_memory_bytes() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// Refuses, before any work, the points of this run (of its shard, if
/// any) that need more memory than the machine has available when up to
/// `jobs` runs go on at once.
fn check_memory(plan: &Plan, jobs: usize, shard: Option<Shard>) -> CliResult {
    let points: Vec<&crate::world::Scenario> = (0..plan.points.len())
        .filter(|&i| shard.is_none_or(|s| s.contains(i)))
        .map(|i| &plan.points[i].scenario)
        .collect();
    let needs: Vec<(MemoryNeed, u32)> = points
        .iter()
        .map(|sc| (sc.memory_need(), sc.max_replications()))
        .collect();
    let need = MemoryNeed::at_once(&needs, jobs);
    if let Some(avail) = available_memory_bytes() {
        if need > avail {
            // The message names the largest run and what drives it.
            let (driver, fix, reps) = points
                .iter()
                .zip(&needs)
                .max_by(|a, b| a.1 .0.run.total_cmp(&b.1 .0.run))
                .map(|(sc, (_, r))| {
                    let (_, driver, fix) = sc.memory_driver();
                    (driver, fix, *r)
                })
                .unwrap_or_default();
            let runs = needs.iter().map(|(_, r)| u64::from(*r)).sum::<u64>();
            let at_once = (jobs as u64).min(runs);
            let which = if needs.len() > 1 {
                format!("{} points, the largest ", needs.len())
            } else {
                String::new()
            };
            return Err(CliError::usage(anyhow!(
                "scenario \"{}\": {which}{driver} x {}, {at_once} run{} at once, need about {} of \
                 memory; this machine has {} available; {fix}{}{}",
                plan.name,
                crate::units::count(reps.into(), "replication"),
                if at_once == 1 { "" } else { "s" },
                crate::units::format_bytes(need),
                crate::units::format_bytes(avail),
                if reps > 1 { ", fewer replications" } else { "" },
                if at_once > 1 {
                    ", or run fewer at once (--jobs)"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
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

/// Lets a closed pipe end the process quietly, as it ends other Unix
/// filters (`csmacd trace FILE | head`), instead of a panic in the next
/// print. Stored points are whole files, so nothing is left half-written.
pub fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: restores SIGPIPE's default action once, at start-up, before
    // any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Prints on stderr what `csmacd validate` warns about `plan` (read from
/// `text`, named `file`), and a single replication; the run goes on.
pub fn warn_before_running(plan: &Plan, file: &str, text: &str) {
    let warnings = sweep::checks::warnings(plan, file, text);
    let one = sweep::checks::replications_warning(plan, file, text);
    for w in warnings.iter().chain(&one) {
        eprintln!("warning: {w}");
    }
}

/// Per point, the seeds of every replication it may run.
/// What a stored point of `p` must match to count as finished: its axes,
/// the seeds of its replications (`seeds`), how many it ran at least and
/// its columns. Resume, merge, status and the final assembly all ask this.
pub fn point_key<'a>(p: &'a sweep::Point, seeds: &'a [u64]) -> PointKey<'a> {
    PointKey {
        axes: &p.axes,
        seeds,
        min_runs: p.scenario.replications() as usize,
        columns: p.scenario.columns(),
    }
}

fn replication_seeds(plan: &Plan) -> Vec<Vec<u64>> {
    plan.points
        .iter()
        .map(|p| p.all_replication_seeds())
        .collect()
}

/// Runs what `opts` asks of `plan` into `out`. Returns what was written,
/// or `None` for a shard (whose points wait for `csmacd merge`).
pub fn execute(
    plan: &Plan,
    out: &Path,
    opts: &Options,
    resume_hint: &str,
) -> Result<Option<Finished>, CliError> {
    // Refuse, before any work, what this machine cannot hold, and a
    // progress interval that makes no sense.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.unwrap_or(0))
        .build()
        .context("cannot start the worker threads")
        .map_err(CliError::failure)?;
    check_memory(plan, pool.current_num_threads(), opts.shard)?;
    watch::line_every()?;
    super::check_out_dir(out)?;
    output::create_dir(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))
        .map_err(CliError::failure)?;
    results_dir::probe(out)
        .with_context(|| format!("cannot write into output directory {}", out.display()))
        .map_err(CliError::failure)?;
    let whole = opts.shard.is_none();
    // A whole run's results are built beside the directory and swapped in:
    // its real path, and room beside it, are checked before any work.
    let real = if whole {
        let real = results_dir::swappable(out).map_err(CliError::usage)?;
        staging::probe_beside(&real)
            .with_context(|| {
                format!(
                    "cannot write beside output directory {} (new results are built beside it,                      then swapped in whole)",
                    out.display()
                )
            })
            .map_err(CliError::failure)?;
        Some(real)
    } else {
        None
    };
    // Finished results (top level) and the work in progress (points/, or
    // beside the directory for a run that was to replace results).
    let existing = results_dir::existing(out);
    let same = existing.pending.as_deref() == Some(plan.resolved.as_str());
    let interrupted = match &real {
        Some(real) if opts.resume && !same => staging::interrupted_run(real, &plan.resolved),
        _ => None,
    };
    if opts.resume && !same && interrupted.is_none() {
        return Err(CliError::usage(match existing.pending {
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
    let old = existing.finished.as_deref().or(existing.pending.as_deref());
    if !same
        && interrupted.is_none()
        && !opts.force
        && results_dir::holds_other_results(out, old, &plan.resolved)
    {
        return Err(CliError::usage(anyhow!(
            "{} holds results of another scenario; choose another --out or pass --force",
            out.display()
        )));
    }
    // Where the points are stored as they finish: in place for a shard
    // (shards may share a directory, and keep the others' points of the
    // same sweep), for a resumed run, or in an empty directory; else
    // beside the directory, which keeps its results until the new ones
    // are complete.
    let work: PathBuf = match (&real, interrupted) {
        (None, _) => {
            if !same {
                output::clear_points(out).map_err(CliError::failure)?;
            }
            out.to_path_buf()
        }
        (Some(real), Some(found)) => {
            let work = staging::claim(real, &found)
                .with_context(|| format!("cannot take over {}", found.display()))
                .map_err(CliError::failure)?;
            output::clean_temporaries(&work);
            work
        }
        (Some(_), None) if same && opts.resume => {
            // Only a whole run may remove another process's temporary
            // files (those a killed run left behind).
            output::clean_temporaries(out);
            output::unmark_shards(out);
            out.to_path_buf()
        }
        (Some(_), None) if staging::is_empty(out) => out.to_path_buf(),
        (Some(real), None) => staging::start(real)
            .with_context(|| format!("cannot write beside output directory {}", out.display()))
            .map_err(CliError::failure)?,
    };
    if let Some(real) = &real {
        staging::clean_beside(real, Some(&work));
    }
    results_dir::store_plan(&work, &plan.resolved)
        .with_context(|| format!("cannot write {}", output::plan_path(&work).display()))
        .map_err(CliError::failure)?;
    if let Some(s) = opts.shard {
        output::mark_shard(out, s.k, s.n)
            .with_context(|| format!("cannot write into {}", output::points_dir(out).display()))
            .map_err(CliError::failure)?;
    }
    // Where the points are kept, as a person reads it.
    let kept = match (work.file_name(), &real) {
        (_, _) if work.as_path() == out => output::points_dir(out),
        // Beside `out` as given, when that is where it is (not beside
        // the target of a link).
        (Some(name), Some(real)) if real.file_name() == out.file_name() => {
            output::points_dir(&out.with_file_name(name))
        }
        _ => output::points_dir(&work),
    };
    let beside_note = if work.as_path() == out {
        String::new()
    } else {
        format!(
            " ({} keeps its results until the new ones are complete)",
            out.display()
        )
    };

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
                    output::read_point(&work, i, &point_key(&plan.points[i], &seeds[i])),
                    Ok(Some(_))
                )
        })
        .collect();

    if opts.resume {
        let what = opts
            .shard
            .map(|s| format!(" of shard {}/{}", s.k, s.n))
            .unwrap_or_default();
        eprintln!(
            "resuming: {} of the {} points{what} are stored; running the other {}",
            in_shard.len() - todo.len(),
            in_shard.len(),
            todo.len()
        );
    }
    install_stop_handler();
    // On a terminal, one point left shows how far its runs have got, more
    // show the points done and the share of their runs; elsewhere, lines.
    let progress = Arc::new(Progress::new());
    let runs = todo
        .iter()
        .map(|&p| u64::from(plan.points[p].scenario.replications()))
        .sum();
    let bar = progress_bar(
        in_shard.len(),
        in_shard.len() - todo.len(),
        &watch::line(0.0, runs),
        opts.quiet || todo.len() == 1,
    );
    let watch = watch::watch(
        Arc::clone(&progress),
        runs,
        (todo.len() > 1).then(|| bar.clone()),
        &STOP,
        opts.quiet,
    )?;
    let result = pool.install(|| {
        sweep::run_pending(&plan.points, &todo, &STOP, &progress, &|i, runs| {
            let p = &plan.points[i];
            // A run that stopped early has no results: nothing of its
            // point is stored, and the sweep stops.
            if let Some((k, why)) = runs
                .iter()
                .enumerate()
                .find_map(|(k, r)| r.failure.as_ref().map(|w| (k, w)))
            {
                return Err(PointError::Run(format!(
                    "{}replication {} (seed {}) stopped: {why}",
                    point_label(&p.axes),
                    k + 1,
                    seeds[i].get(k).copied().unwrap_or_default()
                )));
            }
            output::write_point(
                &work,
                i,
                &PointRuns {
                    axes: &p.axes,
                    seeds: &seeds[i],
                    columns: p.scenario.columns(),
                    runs,
                },
            )
            .map_err(PointError::Write)?;
            bar.inc(1);
            Ok::<(), PointError>(())
        })
    });
    watch.finish();
    let finished = bar.position();
    bar.finish_and_clear();
    match result {
        Ok(()) => {}
        Err(sweep::PendingError::Store(PointError::Run(why))) => {
            return Err(CliError::failure(anyhow!(
                "{why}\nnothing of this point was written{}",
                if plan.points.len() > 1 {
                    format!(
                        "; the points finished before it are kept in {}",
                        output::points_dir(out).display()
                    )
                } else {
                    String::new()
                }
            )))
        }
        Err(sweep::PendingError::Store(PointError::Write(w))) => {
            let context = if beside_note.is_empty() {
                format!(
                    "cannot write the results into {}; the points finished so far are kept in {}",
                    out.display(),
                    kept.display()
                )
            } else {
                format!(
                    "cannot write the results into {}; it was not changed; \
                     the points finished so far are kept in {}",
                    out.display(),
                    kept.display()
                )
            };
            return Err(CliError::failure(anyhow::Error::new(w).context(context)));
        }
        Err(sweep::PendingError::Stalled { point, stalled }) => {
            let p = &plan.points[point];
            let (at, kept) = if p.axes.is_empty() {
                (String::new(), String::new())
            } else {
                (
                    format!(" at sweep point {point} ({})", p.describe()),
                    format!(
                        " ({finished} of {} points finished and kept in {})",
                        in_shard.len(),
                        output::points_dir(out).display()
                    ),
                )
            };
            return Err(CliError::failure(anyhow!(
                "scenario \"{}\"{at}: the run stopped, its clock cannot advance: {stalled}; \
                 no results were written for it{kept}",
                plan.name,
            )));
        }
    }
    if STOP.load(Ordering::SeqCst) {
        return Err(CliError {
            code: 130,
            error: anyhow!(
                "interrupted: {finished} of {} points finished and kept in {}{beside_note}; \
                 run the rest with `{resume_hint}`",
                in_shard.len(),
                kept.display()
            ),
        });
    }
    match real {
        None => Ok(None),
        Some(real) => finish(plan, &work, out, &real).map(Some),
    }
}

fn progress_bar(total: usize, done: usize, runs: &str, quiet: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {pos}/{len} points ({msg}), ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(runs.to_string());
    bar.set_position(done as u64);
    bar.reset_eta();
    bar
}

/// What a finished run or sweep wrote.
pub struct Finished {
    pub assembled: Assembled,
    /// Charts drawn into charts/ (each as PNG and SVG).
    pub charts: usize,
}

impl Finished {
    /// "wrote DIR/{summary,runs,stations,groups}.csv, scenario.toml and
    /// charts/": the files written, and charts/ only when charts were drawn.
    pub fn wrote(&self, out: &Path) -> String {
        let mut csv = vec!["summary", "runs"];
        csv.extend(
            self.assembled
                .tables
                .iter()
                .map(|(name, _)| name.strip_suffix(".csv").unwrap_or(name)),
        );
        let mut s = format!("wrote {}/{{{}}}.csv", out.display(), csv.join(","));
        if self.charts > 0 {
            s.push_str(&format!(
                ", scenario.toml and charts/ ({} chart{})",
                self.charts,
                if self.charts == 1 { "" } else { "s" }
            ));
        } else {
            s.push_str(" and scenario.toml");
        }
        s
    }
}

/// Assembles summary.csv, runs.csv and each table's file from the points
/// stored in `work` and draws the charts, into a new results directory
/// built beside `out` (`work` itself when the points were stored there),
/// then swaps it in place of `out` (whose real path is `real`). Every point
/// of the plan must be stored. A failure leaves `out` as it was.
pub fn finish(plan: &Plan, work: &Path, out: &Path, real: &Path) -> Result<Finished, CliError> {
    let in_place = work == out || work == real;
    let built = if in_place {
        staging::start(real)
            .and_then(|s| staging::link_points(real, &s).map(|()| s))
            .with_context(|| format!("cannot write beside output directory {}", out.display()))
            .map_err(CliError::failure)?
    } else {
        results_dir::clear_results(work);
        work.to_path_buf()
    };
    let result = (|| {
        let done = write_results(plan, &built)?;
        let charts = write_charts(plan, &built, &done)?;
        staging::carry_over(real, &built)
            .and_then(|()| staging::publish(&built, real))
            .map_err(CliError::failure)?;
        Ok(Finished {
            assembled: done,
            charts,
        })
    })();
    result.map_err(|e: CliError| {
        let kept = if in_place {
            staging::discard(&built);
            String::new()
        } else {
            format!(
                "; the finished points are kept in {}",
                output::points_dir(&built).display()
            )
        };
        CliError {
            code: e.code,
            error: e.error.context(format!(
                "cannot write the results into {}; it was not changed{kept}",
                out.display()
            )),
        }
    })
}

/// Assembles the result files from the points in `out` and writes them
/// there with scenario.toml, all or none.
pub fn write_results(plan: &Plan, out: &Path) -> Result<Assembled, CliError> {
    let seeds = replication_seeds(plan);
    let keys: Vec<PointKey> = plan
        .points
        .iter()
        .zip(&seeds)
        .map(|(p, s)| point_key(p, s))
        .collect();
    let done = output::assemble(out, &keys).map_err(|e| match e {
        output::OutputError::Missing { .. } => CliError::usage(e),
        e => CliError::failure(e),
    })?;
    // All or none: a write error leaves the directory as it was.
    let mut files: Vec<(&str, &[u8])> =
        vec![("summary.csv", &done.summary), ("runs.csv", &done.runs)];
    files.extend(
        done.tables
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
    );
    files.push(("scenario.toml", plan.resolved.as_bytes()));
    output::write_files_atomic(out, &files).map_err(CliError::failure)?;
    Ok(done)
}

/// Draws the plan's charts (or the default ones) from summary.csv (and
/// groups.csv for per-group charts) into DIR/charts/ (a directory of new
/// results being built, see [`finish`]). Every series label keeps one style across the charts.
/// Returns how many charts were drawn.
pub fn write_charts(plan: &Plan, out: &Path, done: &Assembled) -> Result<usize, CliError> {
    let specs = plan.chart_specs();
    if specs.is_empty() {
        return Ok(0);
    }
    let summary = Table::from_csv(&done.summary).map_err(CliError::failure)?;
    let groups_file = format!("{}.csv", chart::GROUP_TABLE);
    let groups = done
        .tables
        .iter()
        .find(|(name, _)| *name == groups_file)
        .map(|(_, bytes)| Table::from_csv(bytes))
        .transpose()
        .map_err(CliError::failure)?;
    let context = chart::Context {
        source: None,
        scenario: Some(plan.name.clone()),
        seed: plan.seed(),
    };
    let mut charts: Vec<(String, chart::Figure, chart::ChartSpec)> = Vec::new();
    for spec in specs {
        let name = spec.name.clone().unwrap_or_else(|| spec.y.clone());
        let per_bin;
        let table = match (&spec.table, spec.per_group(), &groups) {
            (Some(t), _, _) => {
                let file = format!("{t}.csv");
                let found = done.tables.iter().find(|(name, _)| *name == file);
                let Some((_, bytes)) = found else {
                    eprintln!("warning: chart {name} skipped: the runs wrote no {file}");
                    continue;
                };
                per_bin = Table::from_csv(bytes).map_err(CliError::failure)?;
                &per_bin
            }
            (None, false, _) => &summary,
            (None, true, Some(g)) => g,
            (None, true, None) => {
                eprintln!("warning: chart {name} skipped: the runs wrote no {groups_file}");
                continue;
            }
        };
        // Each value's style follows its place in the whole table, so it
        // is the same on every chart of the sweep.
        match chart::build_figure(table, table, &spec, &context) {
            Ok(c) => charts.push((name, c, spec)),
            Err(e) => eprintln!("warning: chart {name} skipped: {e}"),
        }
    }
    if charts.is_empty() {
        return Ok(0);
    }
    chart::share_y(
        charts
            .iter_mut()
            .map(|(_, f, spec)| (spec.share_y.then_some(spec.y.as_str()), f)),
    );
    let dir = results_dir::charts_dir(out);
    output::create_dir(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))
        .map_err(CliError::failure)?;
    for (name, f, _) in &charts {
        write_figure(f, &dir.join(format!("{name}.svg")))?;
        write_figure(f, &dir.join(format!("{name}.png")))?;
        let csv = dir.join(format!("{name}.csv"));
        output::write_atomic(
            &csv,
            &chart::points_csv_with(&f.chart, &f.styles, &f.options),
        )
        .with_context(|| format!("cannot write {}", csv.display()))
        .map_err(CliError::failure)?;
    }
    Ok(charts.len())
}

/// Writes one chart as PNG or SVG, by the extension of `path`, atomically.
pub fn write_figure(f: &chart::Figure, path: &Path) -> CliResult {
    let (c, styles, options) = (&f.chart, &f.styles, &f.options);
    let result = match path.extension().and_then(|x| x.to_str()) {
        Some("svg") => chart::render_svg_with(c, styles, options)
            .map_err(anyhow::Error::from)
            .and_then(|svg| output::write_atomic(path, svg.as_bytes()).map_err(Into::into)),
        Some("png") => chart::render_png_with(c, styles, options)
            .map_err(anyhow::Error::from)
            .and_then(|png| output::write_atomic(path, &png).map_err(Into::into)),
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

/// Why a finished point was not stored.
enum PointError {
    Write(output::OutputError),
    /// A run stopped before its end (its world says why).
    Run(String),
}

/// "at stations.0.count = 10, " for a sweep point; nothing for a run.
fn point_label(axes: &[(String, String)]) -> String {
    if axes.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = axes.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("at {}, ", parts.join(", "))
}
