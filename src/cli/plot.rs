//! `csmacd plot`: a chart from any CSV file (summary.csv or another).

use super::batch::write_chart;
use super::{CliError, CliResult};
use crate::output;
use crate::output::chart::{self, ChartSpec, Context, Scale, Table};
use crate::output::style::Styles;
use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// Draw a chart from a CSV file.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Draws column Y against column X, one line per value of the --series columns.
X may be numbers, numbers with a unit (\"1518B\") or words; words (policy or
access-mode names, group names) are drawn as points per category, not lines.

Whiskers show a 95 % confidence interval: from the Y_ci95 column when the
file has one (as summary.csv does), or, when several rows share X and series
and the file has a `replication` column (runs.csv, groups.csv, stations.csv),
from those rows, averaged with the same Student-t interval as summary.csv.
Whiskers stop at the bounds of the metric (fractions at 0 and 1, counts and
delays at 0). Rows that repeat X and series without replication numbers are
refused: name the column that tells them apart with --series.

Axes are linear unless --x-scale log or --y-scale log. With more than 8
series the chart is drawn as small multiples; more than 1000 series are
refused (--where keeps a subset of the rows). The caption names the
scenario and seed when the CSV sits beside the scenario.toml of a results
directory. The format follows the extension of --out: .png or .svg.

Examples:
  csmacd plot results/throughput-vs-load/summary.csv \\
      --x stations.0.traffic.load --y throughput --series stations.0.count --out load.svg
  csmacd run scenarios/policies-compare.toml
  csmacd plot results/policies-compare/groups.csv --x group --y throughput \\
      --out policies.png --size 1000x600")]
pub struct PlotArgs {
    /// The CSV file (with a header row).
    pub csv: PathBuf,
    /// The column on the x axis.
    #[arg(long)]
    pub x: String,
    /// The column on the y axis.
    #[arg(long)]
    pub y: String,
    /// A column whose values split the rows into series (repeatable).
    #[arg(long)]
    pub series: Vec<String>,
    /// Keep only the rows whose COLUMN holds VALUE (repeatable: all must
    /// hold), e.g. --where group=beb --where replication=0.
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    pub filter: Vec<String>,
    /// The chart file: .png or .svg.
    #[arg(long)]
    pub out: PathBuf,
    /// The title [default: "<y> vs <x>"].
    #[arg(long)]
    pub title: Option<String>,
    /// The x axis: linear or log (log needs positive numbers).
    #[arg(long, value_name = "SCALE", default_value = "linear", value_parser = parse_scale)]
    pub x_scale: Scale,
    /// The y axis: linear or log (values at or below 0 are then left out, and counted in the caption).
    #[arg(long, value_name = "SCALE", default_value = "linear", value_parser = parse_scale)]
    pub y_scale: Scale,
    /// Width and height in pixels, from 400x300 to 4000x4000 [default: 900x560 for one plot, more for small multiples].
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// A closed form drawn as a line over the data: "LABEL=EXPR", EXPR of x
    /// in the expression language (docs/expressions.md), e.g.
    /// "pure ALOHA=x*exp(-2*x)" (repeatable).
    #[arg(long, value_name = "LABEL=EXPR", value_parser = parse_theory)]
    pub theory: Vec<chart::Theory>,
}

fn parse_theory(s: &str) -> Result<chart::Theory, String> {
    let Some((label, y)) = s.split_once('=').filter(|(l, _)| !l.trim().is_empty()) else {
        return Err(format!(
            "`{s}` is not LABEL=EXPR; write e.g. --theory \"pure ALOHA=x*exp(-2*x)\""
        ));
    };
    chart::Theory::new(label.trim(), y.trim()).map_err(|e| format!("in `{}`: {e}", y.trim()))
}

fn parse_scale(s: &str) -> Result<Scale, String> {
    s.parse()
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    chart::parse_size(s)
}

/// The scenario name and seed of the results directory holding `csv`, from
/// its scenario.toml; nothing when there is none.
fn context(csv: &Path) -> Context {
    let dir = csv.parent().unwrap_or(Path::new("."));
    let Ok(text) = std::fs::read_to_string(dir.join("scenario.toml")) else {
        return Context::default();
    };
    let Ok(t) = text.parse::<toml::Table>() else {
        return Context::default();
    };
    Context {
        scenario: t.get("name").and_then(|v| v.as_str()).map(str::to_string),
        seed: t
            .get("seed")
            .and_then(|v| v.as_integer())
            .and_then(|s| u64::try_from(s).ok()),
    }
}

pub fn run(args: PlotArgs) -> CliResult {
    if !matches!(
        args.out.extension().and_then(|e| e.to_str()),
        Some("png" | "svg")
    ) {
        return Err(CliError::usage(anyhow!(
            "--out {}: a chart file ends in .png or .svg",
            args.out.display()
        )));
    }
    let bytes = std::fs::read(&args.csv)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    let mut table = Table::from_csv(&bytes)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    for f in &args.filter {
        let Some((column, value)) = f.split_once('=') else {
            return Err(CliError::usage(anyhow!(
                "--where {f}: write COLUMN=VALUE, e.g. --where group=beb"
            )));
        };
        let c = table
            .column(column.trim())
            .map_err(|e| CliError::usage(anyhow!("--where {f}: {e}")))?;
        table.rows.retain(|r| r[c] == value.trim());
        if table.rows.is_empty() {
            return Err(CliError::usage(anyhow!(
                "--where {f}: no row of {} has {} = {}",
                args.csv.display(),
                column.trim(),
                value.trim()
            )));
        }
    }
    let spec = ChartSpec {
        x: args.x,
        y: args.y,
        series: args.series,
        title: args.title,
        name: None,
        x_scale: args.x_scale,
        y_scale: args.y_scale,
        size: args.size,
        theory: args.theory,
        ..Default::default()
    };
    let c = chart::build(&table, &spec, &context(&args.csv))
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    if let Some(dir) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        output::create_dir(dir)
            .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
    }
    let styles = Styles::assign(&[c.labels()]);
    write_chart(&c, &styles, &args.out)?;
    // What the chart draws, beside it: a reader can re-plot or check it.
    let points = args.out.with_extension("csv");
    output::write_atomic(&points, &chart::points_csv(&c, &styles))
        .map_err(|e| CliError::failure(anyhow!("cannot write {}: {e}", points.display())))?;
    let n = c.series.len();
    eprintln!(
        "wrote {} and {} ({n} series{})",
        args.out.display(),
        points.display(),
        if c.panels.is_empty() {
            String::new()
        } else {
            format!(", in {} panels", c.panels.len())
        }
    );
    Ok(())
}
