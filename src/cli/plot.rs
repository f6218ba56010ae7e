//! `csmacd plot`: a chart from any CSV file (summary.csv or another).

use super::batch::write_chart;
use super::{CliError, CliResult};
use crate::output;
use crate::output::chart::{self, ChartSpec, Table};
use anyhow::anyhow;
use std::path::PathBuf;

/// Draw a chart from a CSV file.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Draws column Y against column X, one line per value of the --series columns,
with 95 % CI whiskers when the file has a Y_ci95 column (as summary.csv
does). X may be numbers, numbers with a unit (\"1518B\") or words. The format
follows the extension of --out: .png or .svg.

Example:
  csmacd plot results/throughput-vs-load/summary.csv \\
      --x stations.0.traffic.load --y throughput --series stations.0.count --out load.svg")]
pub struct PlotArgs {
    /// The CSV file (with a header row).
    pub csv: PathBuf,
    /// The column on the x axis.
    #[arg(long)]
    pub x: String,
    /// The column on the y axis.
    #[arg(long)]
    pub y: String,
    /// A column whose values split the rows into lines (repeatable).
    #[arg(long)]
    pub series: Vec<String>,
    /// The chart file: .png or .svg.
    #[arg(long)]
    pub out: PathBuf,
    /// The title [default: "<y> vs <x>"].
    #[arg(long)]
    pub title: Option<String>,
    /// Logarithmic x axis [default: when x spans a factor of 16 or more].
    #[arg(long, conflicts_with = "linear_x")]
    pub log_x: bool,
    /// Linear x axis.
    #[arg(long)]
    pub linear_x: bool,
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
    let table = Table::from_csv(&bytes)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    let spec = ChartSpec {
        x: args.x,
        y: args.y,
        series: args.series,
        title: args.title,
        name: None,
        log_x: match (args.log_x, args.linear_x) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
    };
    let c = chart::build(&table, &spec)
        .map_err(|e| CliError::usage(anyhow!("{}: {e}", args.csv.display())))?;
    if let Some(dir) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        output::create_dir(dir)
            .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
    }
    write_chart(&c, &args.out)?;
    eprintln!(
        "wrote {} ({} line{})",
        args.out.display(),
        c.series.len(),
        if c.series.len() == 1 { "" } else { "s" }
    );
    Ok(())
}
