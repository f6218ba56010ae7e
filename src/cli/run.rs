//! `csmacd run` and `csmacd validate`.

use super::batch::{self, stem};
use super::{CliError, CliResult};
use crate::scenario;
use crate::stats::mean_ci95;
use crate::sweep::checks::{self, PlanWarning};
use crate::sweep::{self, Point};
use crate::teach::lessons;
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
#[command(after_help = "\
Sweep files are checked point by point; a lesson file (NAME.lesson.toml)
as `csmacd lesson` reads it: its text, scenario, variants and expressions.
A valid file may still draw
warnings on stderr: a bus too long for its slot (late collisions), frames
too short for the bus (undetected collisions), more offered load than the
bit rate. Each file's offered load is printed as information.

Exit codes: 0 every file valid (warnings or not), 2 a file invalid, or a
warning under --strict.

Example:
  csmacd validate scenarios/*.toml
  csmacd validate --strict my-study.toml")]
pub struct ValidateArgs {
    /// Scenario, sweep or lesson files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Fail (exit 2) when a file draws any warning.
    #[arg(long)]
    pub strict: bool,
}

pub fn validate(args: ValidateArgs) -> CliResult {
    let mut bad = 0;
    let mut warned = 0;
    let mut warnings = 0;
    for f in &args.files {
        let checked = if lessons::file::is_lesson_file(f) {
            check_lesson(f).map_err(|e| e.to_string())
        } else {
            check_file(f).map_err(|e| e.to_string())
        };
        match checked {
            Ok(checked) => {
                println!("{}: ok ({})", f.display(), checked.summary);
                if let Some(load) = checked.load {
                    println!("  {load}");
                }
                for line in &checked.written {
                    println!("  {line}");
                }
                for w in &checked.warnings {
                    eprintln!("warning: {w}");
                }
                warnings += checked.warnings.len();
                warned += usize::from(!checked.warnings.is_empty());
            }
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
    if args.strict && warnings > 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "{warnings} warning{} in {warned} of {} files (--strict fails on any warning)",
            if warnings == 1 { "" } else { "s" },
            args.files.len()
        )));
    }
    Ok(())
}

/// What `validate` says of a valid file.
struct Checked {
    summary: String,
    load: Option<String>,
    warnings: Vec<PlanWarning>,
    /// The waits of the policies the scenario writes itself.
    written: Vec<String>,
}

fn check_file(path: &Path) -> Result<Checked, sweep::SweepError> {
    let file = path.display().to_string();
    let text = scenario::read_text(path)?;
    let plan = sweep::from_str(&file, &stem(path), &text, None)?;
    let warnings = checks::warnings(&plan, &file, &text);
    let load = checks::load_summary(&plan);
    let summary = if plan.axes.is_empty() {
        let sc = &plan.points[0].scenario;
        format!(
            "{}: {}, {} simulated",
            sc.name(),
            sc.size(),
            crate::units::format_ps(sc.duration())
        )
    } else {
        format!(
            "{}: sweep of {} points over {}, {} runs",
            plan.name,
            plan.points.len(),
            plan.axes
                .iter()
                .map(|a| a.path.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            plan.runs()
        )
    };
    Ok(Checked {
        summary,
        load,
        warnings,
        written: [
            amplification(&plan.points[0].scenario),
            written_policies(&plan.points[0].scenario),
        ]
        .concat(),
    })
}

/// A lesson file (`NAME.lesson.toml`) checked as `csmacd lesson` reads it:
/// the file, its text, its scenario and variants, every expression and the
/// names its run queries use; then its scenario's warnings, and each
/// variant's that the scenario does not draw.
fn check_lesson(path: &Path) -> Result<Checked, lessons::file::LessonFileError> {
    let lesson = lessons::file::load(path)?;
    // The file was read whole: its scenario and variants are valid.
    let base = lesson.scenario_with(&[], None).ok();
    let variants: Vec<_> = (0..lesson.variants.len())
        .filter_map(|k| lesson.scenario_with(&[], Some(k)).ok().map(|sc| (k, sc)))
        .collect();
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut summary = format!(
        "lesson \"{}\": {}, {}, {}",
        lesson.title,
        count(lesson.questions.len(), "question"),
        count(lesson.checks.len(), "check"),
        count(lesson.variants.len(), "variant"),
    );
    if let Some(sc) = &base {
        summary.push_str(&format!(
            "; scenario \"{}\": {}, {} simulated",
            sc.name(),
            sc.size(),
            crate::units::format_ps(sc.duration())
        ));
    }
    let mut warnings: Vec<PlanWarning> = Vec::new();
    let runs = base.iter().map(|sc| (None, sc));
    let runs = runs.chain(variants.iter().map(|(k, sc)| (Some(*k), sc)));
    for (variant, sc) in runs {
        for w in sc.warnings() {
            if warnings.iter().any(|s| s.kind == w.kind && s.key == w.key) {
                continue;
            }
            warnings.push(PlanWarning {
                file: lesson.scenario_file.clone(),
                line: lesson.scenario_line(&w.key),
                kind: w.kind,
                key: w.key.clone(),
                message: w.message.clone(),
                points: variant.map(|k| format!("in variant \"{}\"", lesson.variants[k].name)),
            });
        }
    }
    Ok(Checked {
        summary,
        load: base
            .as_ref()
            .and_then(|sc| sc.offered_load())
            .map(|l| l.to_string()),
        warnings,
        written: base.as_ref().map(written_policies).unwrap_or_default(),
    })
}

/// For a scenario of servers calling servers, each server's worst-case
/// attempts per top-level call.
fn amplification(sc: &crate::world::Scenario) -> Vec<String> {
    let crate::world::Scenario::Service(s) = sc else {
        return Vec::new();
    };
    if s.servers.len() < 2 {
        return Vec::new();
    }
    let rates = s.offered_rates();
    s.servers
        .iter()
        .zip(s.worst_amplification())
        .enumerate()
        .map(|(k, (server, a))| {
            let a = if a.is_finite() {
                crate::service::amplification_figure(a)
            } else {
                "no limit".into()
            };
            let load = match s.capacity_of(k) {
                Some(cap) => format!(
                    "; utilisation {} by first attempts, downstream calls included ({}/s of {}/s)",
                    crate::advice::short_fraction(rates[k] / cap),
                    crate::advice::short_fraction(rates[k]),
                    crate::advice::short_fraction(cap)
                ),
                None => String::new(),
            };
            format!(
                "server \"{}\": at most {a} attempts per top-level call (the product of the attempt limits and retry budgets along the path){load}",
                server.name
            )
        })
        .collect()
}

/// For each group whose policy the scenario writes itself (an expression
/// or a table of windows), the range of waits it draws after each failure.
fn written_policies(sc: &crate::world::Scenario) -> Vec<String> {
    use crate::backoff::{BackoffSpec, WaitUnit};
    use crate::scenario::policies::sample_waits;
    const DRAWS: u32 = 100;
    let mut out = Vec::new();
    for (key, name, spec, slot) in sc.policies() {
        let (unit_ps, unit) = match spec {
            BackoffSpec::Expr(p) => (p.ps_per_unit(slot), p.unit_name.clone()),
            BackoffSpec::Windows(_) => (slot as f64, "slots".to_string()),
            _ => continue,
        };
        let Ok(waits) = sample_waits(spec, slot, DRAWS) else {
            continue;
        };
        let all_slots = matches!(spec, BackoffSpec::Windows(_))
            || matches!(spec, BackoffSpec::Expr(p) if p.unit == WaitUnit::Slots);
        let show = |ps: f64| {
            let v = ps / unit_ps;
            if all_slots || v.fract() == 0.0 {
                format!("{v}")
            } else {
                format!("{v:.4}")
            }
        };
        let parts: Vec<String> = waits
            .iter()
            .map(|(n, lo, hi)| {
                if lo == hi {
                    format!("n={n}: {}", show(*lo))
                } else {
                    format!("n={n}: {}-{}", show(*lo), show(*hi))
                }
            })
            .collect();
        out.push(format!(
            "{key} (`{name}`): waits in {unit} after failure n ({DRAWS} sample draws each):"
        ));
        for chunk in parts.chunks(6) {
            out.push(format!("    {}", chunk.join(", ")));
        }
    }
    out
}

pub fn run(args: RunArgs) -> CliResult {
    let file = args.file.display().to_string();
    let text = scenario::read_text(&args.file).map_err(CliError::usage)?;
    let table = scenario::parse_table(&file, &text).map_err(CliError::usage)?;
    if let Some(toml::Value::Table(_)) = table.get("sweep") {
        return Err(CliError::usage(anyhow::anyhow!(
            "{file}: has a [sweep] table; run it with `csmacd sweep {file}`"
        )));
    }
    // A run is the one-point case of a sweep: same checks, same storage.
    let plan = sweep::from_str(&file, &stem(&args.file), &text, args.batch.seed)
        .map_err(CliError::usage)?;
    batch::warn_before_running(&plan, &file, &text);
    let out = args.batch.out_dir(&args.file);
    let opts = args.batch.options();
    let hint = format!("csmacd run {file}");
    let done = batch::execute(&plan, &out, &opts, &hint)?
        .ok_or_else(|| CliError::failure(anyhow::anyhow!("no results")))?;
    print_summary(&plan.points[0], &done.assembled.values[0]);
    if let Some((_, bytes)) = done
        .assembled
        .tables
        .iter()
        .find(|(n, _)| n == "groups.csv")
    {
        print_groups(bytes);
    }
    eprintln!("{}", done.wrote(&out));
    Ok(())
}

fn print_summary(point: &Point, runs: &[Vec<f64>]) {
    let sc = &point.scenario;
    let r = runs.len();
    println!(
        "{}: {}, {} simulated ({} measured), {} replication{}",
        sc.name(),
        sc.size(),
        crate::units::format_ps(sc.duration()),
        crate::units::format_ps(sc.duration() - sc.warmup()),
        r,
        if r == 1 { "" } else { "s" }
    );
    if r > 1 {
        println!(
            "  {:<26} {:>14}   {}",
            "metric",
            "mean",
            format_args!("± 95 % CI half-width over {r} replications")
        );
    }
    for (k, c) in sc.columns().metrics.iter().enumerate() {
        let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
        let (m, h) = mean_ci95(&vals);
        let decimals = decimals_for(m);
        let value = figure(m, decimals);
        if h.is_nan() {
            println!("  {c:<26} {value:>14}");
        } else {
            println!("  {c:<26} {value:>14} ± {}", figure(h, decimals));
        }
    }
    if let Some(p) = sc.precision() {
        let k = sc.columns().metrics.iter().position(|c| *c == p.metric);
        let vals: Vec<f64> = k.map_or(Vec::new(), |k| runs.iter().map(|r| r[k]).collect());
        if p.met(&vals) {
            println!(
                "{r} replications reached the precision asked: {}'s 95 % CI within {} % of its mean",
                p.metric,
                100.0 * p.relative
            );
        } else {
            println!(
                "{r} replications (max_replications) did not reach the precision asked: {}'s 95 % CI is not within {} % of its mean",
                p.metric,
                100.0 * p.relative
            );
        }
    }
    let metric = |name: &str| {
        let k = sc.columns().metrics.iter().position(|c| *c == name)?;
        let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
        Some(mean_ci95(&vals).0)
    };
    if let (Some(frames), Some(fraction), Some(drain), Some(p50), Some(p99)) = (
        metric("burst_frames"),
        metric("delivered_fraction"),
        metric("drain_us"),
        metric("completion_p50_us"),
        metric("completion_p99_us"),
    ) {
        let ms = |us: f64| {
            if us.is_nan() {
                "not within the run".to_string()
            } else {
                format!("{:.1} ms", us / 1000.0)
            }
        };
        println!(
            "the burst of {frames:.0} frames: {:.1} % delivered; half done after {}, 99 % after {}, all after {}",
            100.0 * fraction,
            ms(p50),
            ms(p99),
            ms(drain)
        );
    }
}

/// Decimals that show about four significant digits of `x`, none for
/// numbers of five digits or more and for whole numbers (counts).
fn decimals_for(x: f64) -> usize {
    if !x.is_finite() || x.fract() == 0.0 {
        return 0;
    }
    match x.abs() {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        a if a >= 1.0 => 3,
        _ => 4,
    }
}

fn figure(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.decimals$}")
    }
}

/// The per-group table from groups.csv: each group's means over the
/// replications.
fn print_groups(bytes: &[u8]) {
    const SHOWN: &[(&str, &str)] = &[
        ("stations", "stations"),
        ("offered_load", "offered"),
        ("throughput", "carried"),
        ("share", "share"),
        ("delay_mean_us", "delay µs"),
        ("delay_p99_us", "p99 µs"),
        ("collisions", "collisions"),
        ("dropped_excessive", "discarded"),
        ("fairness", "fairness"),
    ];
    let mut reader = ::csv::Reader::from_reader(bytes);
    let Ok(header) = reader.headers().cloned() else {
        return;
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let Some(g) = col("group") else { return };
    if col("stations").is_none() {
        // Another world's groups: its columns are in groups.csv.
        return;
    }
    let cols: Vec<Option<usize>> = SHOWN.iter().map(|(c, _)| col(c)).collect();
    let mut groups: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
    for rec in reader.records().flatten() {
        let name = rec.get(g).unwrap_or("").to_string();
        let vals: Vec<f64> = cols
            .iter()
            .map(|c| {
                c.and_then(|c| rec.get(c))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN)
            })
            .collect();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, rows)) => rows.push(vals),
            None => groups.push((name, vec![vals])),
        }
    }
    if groups.len() < 2 {
        return;
    }
    let width = groups
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut line = format!("  {:<width$}", "group");
    for (_, title) in SHOWN {
        line.push_str(&format!(" {title:>10}"));
    }
    println!("per group (means over replications; loads are fractions of the bit rate):");
    println!("{line}");
    for (name, rows) in &groups {
        let mut line = format!("  {name:<width$}");
        for k in 0..SHOWN.len() {
            let vals: Vec<f64> = rows.iter().map(|r| r[k]).collect();
            let (m, _) = mean_ci95(&vals);
            line.push_str(&format!(" {:>10}", figure(m, decimals_for(m))));
        }
        println!("{line}");
    }
}
