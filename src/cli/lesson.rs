//! `csmacd lesson N`: prints a lesson's explanation, runs its scenario and
//! shows the numbers the explanation promises, each checked.

use super::{CliError, CliResult};
use crate::teach::lessons::{self, LessonError, LESSONS};
use crate::teach::{draw, picture, text};
use anyhow::anyhow;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Print a guided lesson, run it, and show the numbers it promises.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Without N, lists the lessons. The lessons' files are in scenarios/lessons/
(the explanations are built into the program, so this works from any
directory). Exit code 1 if a promised number does not show.

Examples:
  csmacd lesson 2 --out results/lesson2      # also draws diagram.png, timeline.png
  csmacd lesson 9 --out results/lesson9      # no jitter and full jitter, side by side
  csmacd lesson 7 --set stations.0.count=100000")]
pub struct LessonArgs {
    /// The lesson's number.
    pub number: Option<u32>,
    /// Change the lesson's scenario: a dotted path and a value, e.g.
    /// stations.0.count=100000 or medium.length=5km (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Also write pictures into this directory: the space-time diagram and
    /// the station timeline, PNG (lessons 1, 2 and 9; lesson 9 also draws
    /// diagram-full-jitter.png and timeline-full-jitter.png).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not print the explanation, only run.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: LessonArgs) -> CliResult {
    let Some(number) = args.number else {
        println!("Lessons (csmacd lesson N):");
        for l in LESSONS {
            println!("  {}  {}", l.number, l.title);
        }
        return Ok(());
    };
    let overrides = args
        .set
        .iter()
        .map(|s| lessons::parse_override(s).map_err(|e| CliError::usage(anyhow!("--set: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(l) = lessons::find(number) {
        if !args.quiet {
            println!("{}", l.text.trim_end());
            println!("\n---- running {} ----\n", l.file);
        }
    }
    let outcome = lessons::run(number, &overrides).map_err(|e| match e {
        LessonError::Unknown(..) | LessonError::Override(..) | LessonError::Scenario(_) => {
            CliError::usage(e)
        }
    })?;
    let colour = std::io::stdout().is_terminal();
    if let Some(sc) = &outcome.scenario {
        for row in &outcome.rows {
            println!("{}", text::line(row, &sc.medium, colour));
        }
    }
    if !outcome.table.is_empty() {
        print_table(&outcome.table);
    }
    println!("\nWhat you should see:");
    let mut failed = 0;
    for c in &outcome.checks {
        let mark = if c.ok { "ok  " } else { "FAIL" };
        if !c.ok {
            failed += 1;
        }
        println!(
            "  [{mark}] {}: expected {}, seen {}",
            c.what, c.expected, c.seen
        );
    }
    if let (Some(dir), Some(until), Some(sc)) =
        (&args.out, outcome.diagram_until, &outcome.scenario)
    {
        crate::output::create_dir(dir)
            .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
        let pic = picture::of_scenario(sc, until);
        let title = format!("{}: first {} µs", sc.name, crate::teach::trace::us(until));
        let d = dir.join("diagram.png");
        let t = dir.join("timeline.png");
        draw::write_diagram(&pic, &title, &d).map_err(CliError::failure)?;
        draw::write_timeline(&pic, &title, &t).map_err(CliError::failure)?;
        eprintln!("wrote {} and {}", d.display(), t.display());
        for (name, sc, until) in &outcome.more_pictures {
            let pic = picture::of_scenario(sc, *until);
            let title = format!("{}: first {} µs", sc.name, crate::teach::trace::us(*until));
            let d = dir.join(format!("diagram-{name}.png"));
            let t = dir.join(format!("timeline-{name}.png"));
            draw::write_diagram(&pic, &title, &d).map_err(CliError::failure)?;
            draw::write_timeline(&pic, &title, &t).map_err(CliError::failure)?;
            eprintln!("wrote {} and {}", d.display(), t.display());
        }
    }
    if failed > 0 {
        return Err(CliError::failure(anyhow!(
            "{failed} of the lesson's numbers did not show; the lesson text is out of date or the simulator changed"
        )));
    }
    Ok(())
}

fn print_table(rows: &[Vec<String>]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 {
                    format!("{s:<w$}", w = widths[c])
                } else {
                    format!("{s:>w$}", w = widths[c])
                }
            })
            .collect();
        println!("  {}", line.join("  "));
    }
}
