//! `csmacd plot`: a chart from any CSV file (summary.csv or another).

use super::batch::write_figure;
use super::{CliError, CliResult};
use crate::output;
use crate::output::chart::{self, ChartSpec, Context, Scale, Table};
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

Axes are linear unless --x-scale log or --y-scale log (a delay spanning
more than two decades is drawn on a log y unless --y-scale linear). The
first --series column gives each series its colour, the second its marker
and dash (--color-by, --dash-by choose); a value's style is its place in its
column of the whole file, so a sweep's own charts and plots of its files
agree. With more than 12 series the chart is drawn as small multiples; more
than 1000 series are refused (--where keeps a subset of the rows). Points
past saturation (offered_load above throughput beyond the interval, or
drop_fraction over 1 %) are drawn hollow. Titles are the columns' documented
meanings in the world that wrote the file, else their names. The caption
names the CSV read, and the scenario and seed when it sits beside the
scenario.toml of a results directory. The format follows the extension of
--out: .png or .svg.

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
    /// The y axis: linear or log (values at or below 0 are then left out, and counted in the caption) [default: linear; log for a delay spanning more than two decades].
    #[arg(long, value_name = "SCALE", value_parser = parse_scale)]
    pub y_scale: Option<Scale>,
    /// The y axis's range, in the y column's units, e.g. --y-range 0.9,1.
    #[arg(long, value_name = "LO,HI", value_parser = parse_range, allow_hyphen_values = true)]
    pub y_range: Option<(f64, f64)>,
    /// The x axis's title [default: the column's documented meaning, else its name].
    #[arg(long)]
    pub x_label: Option<String>,
    /// The y axis's title [default: the column's documented meaning, else its name].
    #[arg(long)]
    pub y_label: Option<String>,
    /// The legend's title [default: the series columns' meanings, for words].
    #[arg(long)]
    pub legend_title: Option<String>,
    /// The series column whose values choose the colour [default: the first --series].
    #[arg(long, value_name = "COLUMN")]
    pub color_by: Option<String>,
    /// The series column whose values choose the marker and dash [default: the second --series].
    #[arg(long, value_name = "COLUMN")]
    pub dash_by: Option<String>,
    /// Join the points of an x axis of two values with lines (not done by default: two points make no trend).
    #[arg(long)]
    pub lines: bool,
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

fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("`{s}` is not a range; write LO,HI with LO < HI, e.g. 0.9,1");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    if a.is_finite() && b.is_finite() && a < b {
        Ok((a, b))
    } else {
        Err(bad())
    }
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
        source: None,
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
    // Styles follow each value's place in the whole file, as on the
    // sweep's own charts, whatever --where keeps.
    let whole = table.clone();
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
    for (flag, c) in [("--color-by", &args.color_by), ("--dash-by", &args.dash_by)] {
        if let Some(c) = c.as_ref().filter(|c| !args.series.contains(c)) {
            return Err(CliError::usage(anyhow!(
                "{flag} {c}: not among the --series columns ({}); name one of them",
                if args.series.is_empty() {
                    "none given".to_string()
                } else {
                    args.series.join(", ")
                }
            )));
        }
    }
    if let (Some((lo, _)), Some(Scale::Log)) = (args.y_range, args.y_scale) {
        if lo <= 0.0 {
            return Err(CliError::usage(anyhow!(
                "--y-range: a log y axis needs a range above 0"
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
        y_range: args.y_range,
        x_label: args.x_label,
        y_label: args.y_label,
        legend_title: args.legend_title,
        color_by: args.color_by,
        dash_by: args.dash_by,
        lines: args.lines,
        size: args.size,
        theory: args.theory,
        ..Default::default()
    };
    let mut context = context(&args.csv);
    let mut source = args.csv.display().to_string();
    if !args.filter.is_empty() {
        source.push_str(&format!(" where {}", args.filter.join(", ")));
    }
    context.source = Some(source);
    let f = chart::build_figure(&table, &whole, &spec, &context)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    let c = &f.chart;
    if let Some(dir) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        output::create_dir(dir)
            .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
    }
    write_figure(&f, &args.out)?;
    // What the chart draws, beside it: a reader can re-plot or check it.
    let points = args.out.with_extension("csv");
    output::write_atomic(&points, &chart::points_csv_with(c, &f.styles, &f.options))
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
