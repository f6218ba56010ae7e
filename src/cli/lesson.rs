//! `csmacd lesson N`: prints a lesson's explanation, runs its scenario and
//! shows the numbers the explanation promises, each checked.

use super::{CliError, CliResult};
use crate::teach::lessons::{self, LessonError, LESSONS};
use crate::teach::{draw, picture, text};
use anyhow::anyhow;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Print a guided lesson, run it, and show the numbers it promises.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Without N, lists the lessons. The lessons' files are in scenarios/lessons/
(the explanations are built into the program, so this works from any
directory). Exit code 1 if a promised number does not show. With --set the
lesson becomes a what-if: its numbers are checked as usual, those that do
not hold are marked n/a (not applicable after --set), and the exit code is 0.

Examples:
  csmacd lesson 2 --out results/lesson2      # also draws diagram.png, timeline.png
  csmacd lesson 8 --out results/lesson8      # the closed forms, the simulation over them
  csmacd lesson 9 --out results/lesson9      # no jitter and full jitter, side by side
  csmacd lesson 7 --set stations.0.count=100000
  csmacd lesson 2 --view                     # lesson2.html: predict, then watch")]
pub struct LessonArgs {
    /// The lesson's number.
    pub number: Option<u32>,
    /// Change the lesson's scenario: a dotted path and a value, e.g.
    /// stations.0.count=100000 or medium.length=5km (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Also write pictures into this directory: the space-time diagram and
    /// the station timeline, PNG (lessons 1, 2, 6 and 9; lesson 9 also draws
    /// diagram-full-jitter.png and timeline-full-jitter.png), and the charts
    /// of the theory with the simulation drawn over it, PNG with the CSV of
    /// what they draw (lessons 3, 4, 5, 7 and 8).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not print the explanation, only run.
    #[arg(long)]
    pub quiet: bool,
    /// Also write the lesson as an interactive page: it asks for the
    /// numbers first, then plays the run and shows them (view.html in --out,
    /// else lessonN.html here).
    #[arg(long)]
    pub view: bool,
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
    // Refused before the lesson's text: a bad --set, a --out that is no
    // directory.
    lessons::check_overrides(number, &overrides).map_err(CliError::usage)?;
    if let Some(dir) = &args.out {
        super::check_out_dir(dir)?;
    }
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
        LessonError::Stalled(..) => CliError::failure(e),
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
    // A what-if changes the scenario the lesson's promises were made for:
    // a number that differs then says something about the change, not about
    // the simulator.
    let what_if = !overrides.is_empty();
    if what_if {
        println!(
            "\nWhat the lesson promises, checked on this what-if (--set {}); a promise made\n\
             for the unchanged lesson that does not hold here is marked n/a:",
            args.set.join(" --set ")
        );
    } else {
        println!("\nWhat you should see:");
    }
    let mut failed = 0;
    let mut differ = 0;
    for c in &outcome.checks {
        let mark = match (c.ok, what_if) {
            (true, _) => "ok  ",
            (false, false) => "FAIL",
            (false, true) => "n/a ",
        };
        failed += usize::from(!c.ok && !what_if);
        differ += usize::from(!c.ok && what_if);
        println!(
            "  [{mark}] {}: expected {}, seen {}",
            c.what, c.expected, c.seen
        );
    }
    if differ > 0 {
        println!(
            "  ({differ} of {} numbers differ from the lesson's: not applicable after --set)",
            outcome.checks.len()
        );
    }
    if let Some(dir) = &args.out {
        write_pictures(dir, &outcome)?;
    }
    if args.view {
        write_view(number, &outcome, args.out.as_deref())?;
    }
    if failed > 0 {
        return Err(CliError::failure(anyhow!(
            "{failed} of the lesson's numbers did not show; the lesson text is out of date or the simulator changed"
        )));
    }
    Ok(())
}

/// Writes what the lesson draws into `dir`: its diagram and timeline, and
/// its charts of the theory with the simulation over it.
fn write_pictures(dir: &std::path::Path, outcome: &lessons::Outcome) -> CliResult {
    crate::output::create_dir(dir)
        .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
    if let (Some(until), Some(sc)) = (outcome.diagram_until, &outcome.scenario) {
        let main = std::iter::once((None, sc, until));
        let more = outcome
            .more_pictures
            .iter()
            .map(|(name, sc, until)| (Some(name), sc, *until));
        for (name, sc, until) in main.chain(more) {
            // A what-if may ask for more stations than a diagram draws.
            let first: Vec<u32> = (0..super::trace::MAX_DIAGRAM_STATIONS as u32).collect();
            let pic = super::trace::drawable(
                picture::of_scenario(sc, until),
                &first,
                "`csmacd diagram FILE --stations` draws others",
            );
            let title = super::trace::picture_title(sc, &pic);
            let suffix = name.map(|n| format!("-{n}")).unwrap_or_default();
            let d = dir.join(format!("diagram{suffix}.png"));
            let t = dir.join(format!("timeline{suffix}.png"));
            draw::write_diagram(&pic, &title, &d).map_err(CliError::failure)?;
            draw::write_timeline(&pic, &title, &t).map_err(CliError::failure)?;
            eprintln!("wrote {} and {}", d.display(), t.display());
        }
    }
    for chart in &outcome.charts {
        let files = chart
            .write(dir)
            .map_err(|e| CliError::failure(anyhow!("cannot write a chart: {e}")))?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("wrote {}", names.join(" and "));
    }
    Ok(())
}

/// Writes the lesson's interactive page.
fn write_view(number: u32, outcome: &lessons::Outcome, dir: Option<&Path>) -> CliResult {
    let lesson = lessons::find(number).expect("a lesson that ran is in the list");
    let html = super::view::lesson_page(lesson, outcome)
        .ok_or_else(|| CliError::failure(anyhow!("lesson {number} has no scenario to show")))?;
    let path = match dir {
        Some(dir) => {
            crate::output::create_dir(dir)
                .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
            dir.join("view.html")
        }
        None => PathBuf::from(format!("lesson{number}.html")),
    };
    super::view::write_page(&path, &html)?;
    eprintln!("wrote {}", path.display());
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
