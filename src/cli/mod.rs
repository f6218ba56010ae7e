//! The command line: the only printer. Data goes to files or stdout, errors
//! and progress to stderr. Exit codes: 0 success, 1 a failure while running,
//! 2 bad usage or an invalid scenario.

mod batch;
mod lesson;
mod merge;
mod plot;
mod policies;
mod run;
mod serve;
mod service_trace;
mod status;
pub mod sweep;
mod trace;
mod view;
mod watch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// An error with the exit code it deserves.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub error: anyhow::Error,
}

impl CliError {
    /// Bad usage or an invalid scenario: exit code 2.
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: 2,
            error: error.into(),
        }
    }
    /// A failure while running (e.g. a write error): exit code 1.
    pub fn failure(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            code: 1,
            error: error.into(),
        }
    }
}

pub type CliResult = Result<(), CliError>;

/// Refuses, before any work, an output directory (`--out`) that names
/// something else: a regular file, a device such as /dev/null.
pub fn check_out_dir(dir: &std::path::Path) -> CliResult {
    let Ok(meta) = std::fs::metadata(dir) else {
        // Missing: it is created.
        return Ok(());
    };
    if meta.is_dir() {
        return Ok(());
    }
    let what = if meta.is_file() {
        "a file"
    } else {
        "a device or special file"
    };
    Err(CliError::usage(anyhow::anyhow!(
        "--out {}: is {what}, not a directory; give a directory for the results (created \
         when missing), e.g. --out results/run1",
        dir.display()
    )))
}

const AFTER_HELP: &str = "\
Exit codes: 0 success, 1 a failure while running (e.g. an output that cannot be written),
2 bad usage or an invalid scenario, 130 interrupted (finished points are kept; --resume).

Examples:
  csmacd run scenarios/two-saturated.toml
  csmacd validate scenarios/*.toml
  csmacd policies
  csmacd trace scenarios/lessons/2-collision.toml --until 300us
  csmacd diagram scenarios/lessons/2-collision.toml --until 250us --out collision.png
  csmacd lesson 2
  csmacd view scenarios/lessons/2-collision.toml --until 250us --out collision.html
  csmacd serve scenarios/lessons/2-collision.toml
  csmacd sweep scenarios/throughput-vs-load.toml
  csmacd plot results/throughput-vs-load/summary.csv --x stations.0.traffic.load --y throughput \\
      --series stations.0.count --out load.png";

#[derive(Parser, Debug)]
#[command(
    name = "csmacd",
    version,
    about = "Ethernet CSMA/CD collision simulator: 802.3 half-duplex MAC on a shared bus",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(run::RunArgs),
    Validate(run::ValidateArgs),
    Policies(policies::PoliciesArgs),
    Trace(trace::TraceArgs),
    Diagram(trace::DiagramArgs),
    Lesson(lesson::LessonArgs),
    Sweep(sweep::SweepArgs),
    Merge(merge::MergeArgs),
    Status(status::StatusArgs),
    Plot(plot::PlotArgs),
    View(view::ViewArgs),
    Serve(serve::ServeArgs),
}

/// Parses the arguments, runs the command, prints any error, returns the exit code.
pub fn run() -> ExitCode {
    batch::quiet_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Validate(a) => run::validate(a),
        Command::Policies(a) => policies::run(a),
        Command::Trace(a) => trace::run_trace(a),
        Command::Diagram(a) => trace::run_diagram(a),
        Command::Lesson(a) => lesson::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Status(a) => status::run(a),
        Command::Plot(a) => plot::run(a),
        Command::View(a) => view::run(a),
        Command::Serve(a) => serve::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {:#}", e.error);
            ExitCode::from(e.code)
        }
    }
}
