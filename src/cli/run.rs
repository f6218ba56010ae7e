//! `csmacd run` and `csmacd validate`.

use super::{CliError, CliResult};
use crate::output::{self, PointRuns};
use crate::scenario::{self, ScenarioError};
use crate::sim::METRIC_COLUMNS;
use crate::stats::mean_ci95;
use crate::sweep::{self, Point};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Run one scenario and write its results.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Writes DIR/summary.csv (one row: the metrics, with _ci95 half-widths when
replications > 1), DIR/runs.csv (one row per replication), DIR/stations.csv
(one row per station and replication) and DIR/scenario.toml (the scenario as
run, with its seed). Prints a summary table.

Example:
  csmacd run scenarios/two-saturated.toml --seed 7 --out results/two")]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Replace the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory [default: results/<file stem>/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Overwrite the results of another scenario (another `name`, or files
    /// not written by csmacd) in the output directory.
    #[arg(long)]
    pub force: bool,
}

/// Check scenario files without running them.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  csmacd validate scenarios/*.toml")]
pub struct ValidateArgs {
    /// Scenario or sweep files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into())
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

fn check_file(path: &Path) -> Result<String, ScenarioError> {
    let sc = scenario::load(path)?;
    Ok(format!(
        "{}: {} stations, {} simulated",
        sc.name,
        sc.station_count(),
        crate::units::format_ps(sc.duration)
    ))
}

pub fn run(args: RunArgs) -> CliResult {
    let file = args.file.display().to_string();
    let text = scenario::read_text(&args.file).map_err(CliError::usage)?;
    let mut table = scenario::parse_table(&file, &text).map_err(CliError::usage)?;
    if table.contains_key("sweep") {
        return Err(CliError::usage(anyhow::anyhow!(
            "{file}: has a [sweep] table; run it with `csmacd sweep {file}`"
        )));
    }
    if let Some(seed) = args.seed {
        table.insert("seed".into(), toml::Value::Integer(seed as i64));
    }
    let sc = scenario::validate(&table, &stem(&args.file), &[])
        .map_err(|e| CliError::usage(ScenarioError::at(&file, &text, e)))?;
    check_memory(&file, &sc)?;
    table.insert("seed".into(), toml::Value::Integer(sc.seed as i64));
    // The name identifies the results in the output directory (see --force).
    table.insert("name".into(), toml::Value::String(sc.name.clone()));
    let out = args
        .out
        .unwrap_or_else(|| Path::new("results").join(stem(&args.file)));
    let resolved = format!(
        "# The scenario as run by csmacd {}: `csmacd run` on this file repeats it.\n{}",
        env!("CARGO_PKG_VERSION"),
        toml::to_string(&table).map_err(CliError::failure)?
    );
    prepare_out_dir(&out, &resolved, args.force)?;

    let point = Point::new(Vec::new(), sc);
    let points = vec![point];
    let results = sweep::run_points(&points, &|| {});
    let seeds = points[0].replication_seeds();
    let pr = [PointRuns {
        axes: &points[0].axes,
        seeds: &seeds,
        runs: &results[0],
    }];
    let (summary, runs, stations) = (
        output::summary_csv(&pr),
        output::runs_csv(&pr),
        output::stations_csv(&pr),
    );
    output::write_files_atomic(
        &out,
        &[
            ("summary.csv", &summary),
            ("runs.csv", &runs),
            ("stations.csv", &stations),
            ("scenario.toml", resolved.as_bytes()),
        ],
    )
    .with_context(|| {
        format!(
            "cannot write the results into {}; nothing there was changed",
            out.display()
        )
    })
    .map_err(CliError::failure)?;
    print_summary(&points[0], &results[0]);
    eprintln!(
        "wrote {}/{{summary,runs,stations}}.csv and scenario.toml",
        out.display()
    );
    Ok(())
}

/// The memory this machine has available, from /proc/meminfo (Linux); None
/// where that cannot be read, and then only the scenario's own limit applies.
fn available_memory_bytes() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// Refuses, before any work, a scenario that needs more memory than the
/// machine has available.
pub fn check_memory(file: &str, sc: &scenario::Scenario) -> CliResult {
    let need = sc.memory_estimate_bytes();
    if let Some(avail) = available_memory_bytes() {
        if need > avail {
            return Err(CliError::usage(anyhow::anyhow!(
                "{file}: {} stations x {} replications need about {} of memory; this machine has {} \
                 available; simulate fewer stations or replications",
                sc.station_count(),
                sc.replications,
                scenario::format_bytes(need),
                scenario::format_bytes(avail)
            )));
        }
    }
    Ok(())
}

/// Result files a run writes; a directory holding any of them holds results.
const RESULT_FILES: &[&str] = &["summary.csv", "runs.csv", "stations.csv", "scenario.toml"];

/// Creates the output directory and checks, before any work, that it can be
/// written. Without `force` it refuses to overwrite the results of another
/// scenario: a directory whose scenario.toml names another scenario (or cannot
/// be read as one), or that holds result files but no scenario.toml.
pub fn prepare_out_dir(out: &Path, resolved: &str, force: bool) -> CliResult {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))
        .map_err(CliError::failure)?;
    let probe = out.join(format!(".csmacd-write-test{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write into output directory {}", out.display()))
        .map_err(CliError::failure)?;
    let _ = std::fs::remove_file(&probe);
    if force {
        return Ok(());
    }
    let name = |s: &str| {
        s.parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("name").and_then(|v| v.as_str()).map(str::to_string))
    };
    let existing = out.join("scenario.toml");
    let other = if existing.exists() {
        match std::fs::read_to_string(&existing) {
            Ok(old) => old.parse::<toml::Table>().is_err() || name(&old) != name(resolved),
            Err(_) => true,
        }
    } else {
        RESULT_FILES.iter().any(|f| out.join(f).exists())
    };
    if other {
        return Err(CliError::usage(anyhow::anyhow!(
            "{} holds results of another scenario; choose another --out or pass --force",
            out.display()
        )));
    }
    Ok(())
}

fn print_summary(point: &Point, runs: &[crate::sim::RunResult]) {
    let sc = &point.scenario;
    println!(
        "{}: {} stations, {} simulated ({} measured), {} replication{}",
        sc.name,
        sc.station_count(),
        crate::units::format_ps(sc.duration),
        crate::units::format_ps(sc.duration - sc.warmup),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    for (k, c) in METRIC_COLUMNS.iter().enumerate() {
        let vals: Vec<f64> = runs.iter().map(|r| r.metrics.values[k]).collect();
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
