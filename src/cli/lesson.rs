//! `csmacd lesson N`: prints a lesson's explanation, runs its scenario and
//! shows the numbers the explanation promises, each checked.

use super::{CliError, CliResult};
use crate::teach::lessons::{self, file, runner, LessonError};
use crate::teach::{draw, picture, text};
use anyhow::anyhow;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Print a guided lesson, run it, and show the numbers it promises.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
LESSON is a built-in lesson's number, a lesson file (NAME.lesson.toml: a
lesson an instructor writes, docs/teaching.md) or a directory, whose lesson
files are then listed. Without LESSON, lists the built-in lessons and the
lesson files in scenarios/lessons/ here. Exit code 1 if a promised number
does not show. With --set the lesson becomes a what-if: its numbers are
checked as usual, those that do not hold are marked n/a (not applicable
after --set), and the exit code is 0.

Examples:
  csmacd lesson 2 --out results/lesson2      # also draws diagram.png, timeline.png
  csmacd lesson 8 --out results/lesson8      # the closed forms, the simulation over them
  csmacd lesson 7 --set stations.0.count=100000
  csmacd lesson 2 --view                     # lesson2.html: predict, then watch
  csmacd lesson scenarios/lessons/14-far-station.lesson.toml --ask")]
pub struct LessonArgs {
    /// A lesson's number, a lesson file (.lesson.toml) or a directory of them.
    #[arg(value_name = "LESSON")]
    pub lesson: Option<String>,
    /// Change the lesson's scenario: a dotted path and a value, e.g.
    /// stations.0.count=100000 or medium.length=5km (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Also write pictures into this directory: the space-time diagram and
    /// the station timeline, PNG (lessons 1, 2, 6, 7, 9 and 14, and lesson
    /// files of a bus that show a window of events; lesson 9 also draws
    /// diagram-full-jitter.png and timeline-full-jitter.png), and the
    /// charts of the theory with the simulation drawn over it, PNG with the
    /// CSV of what they draw (lessons 3, 4, 5, 7 and 8, and a lesson file's
    /// [[chart]]s).
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
    /// Ask a lesson file's questions first, one answer a line on standard
    /// input, and grade each against the run (right or wrong, with the
    /// run's value).
    #[arg(long)]
    pub ask: bool,
}

pub fn run(args: LessonArgs) -> CliResult {
    let Some(given) = args.lesson.clone() else {
        list_all();
        return Ok(());
    };
    let overrides = args
        .set
        .iter()
        .map(|s| lessons::parse_override(s).map_err(|e| CliError::usage(anyhow!("--set: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let lesson = match given.parse::<u32>() {
        Ok(n) => match lessons::find_file(n) {
            Some(f) => f.load().map_err(CliError::usage)?,
            None => {
                let list: Vec<String> = lessons::catalogue()
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect();
                return Err(CliError::usage(LessonError::Unknown(n, list.join(", "))));
            }
        },
        Err(_) => {
            let path = Path::new(&given);
            if path.is_dir() {
                list_dir(path)?;
                return Ok(());
            }
            if !file::is_lesson_file(path) {
                return Err(CliError::usage(anyhow!(
                    "{given}: not a lesson's number nor a lesson file; a lesson file's name \
                     ends in {} (a scenario runs with `csmacd run` or `csmacd view`)",
                    file::LESSON_SUFFIX
                )));
            }
            file::load(path).map_err(CliError::usage)?
        }
    };
    run_file(&lesson, &args, &overrides)
}

/// Lists the built-in lessons, then the lesson files of scenarios/lessons/
/// under the current directory that are not built in.
fn list_all() {
    let all = lessons::catalogue();
    let width = all
        .iter()
        .map(|(n, _)| n.to_string().len())
        .max()
        .unwrap_or(1);
    println!("Lessons (csmacd lesson N):");
    for (n, title) in &all {
        println!("  {n:>width$}  {title}");
    }
    let dir = Path::new("scenarios/lessons");
    if dir.is_dir() {
        // The built-in lesson files are listed above by their numbers.
        let builtin = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| lessons::FILE_LESSONS.iter().any(|f| f.file == n))
        };
        let files: Vec<_> = lesson_files(dir)
            .into_iter()
            .filter(|(p, _)| !builtin(p))
            .collect();
        if !files.is_empty() {
            println!("\nLesson files in {} (csmacd lesson FILE):", dir.display());
            for (path, title) in files {
                println!("  {}  {title}", path.display());
            }
        }
    }
}

/// The lesson files in `dir`, with their titles (or why they cannot be read).
fn lesson_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| file::is_lesson_file(p))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let title = match file::load(&p) {
                Ok(l) => l.title,
                Err(e) => format!("(cannot be read: {e})"),
            };
            (p, title)
        })
        .collect()
}

fn list_dir(dir: &Path) -> CliResult {
    let files = lesson_files(dir);
    if files.is_empty() {
        println!(
            "{}: no lesson files (names ending in {})",
            dir.display(),
            file::LESSON_SUFFIX
        );
        return Ok(());
    }
    println!("Lesson files in {} (csmacd lesson FILE):", dir.display());
    for (path, title) in files {
        println!("  {}  {title}", path.display());
    }
    Ok(())
}

fn run_error(e: LessonError) -> CliError {
    match e {
        LessonError::Unknown(..)
        | LessonError::Override(..)
        | LessonError::Scenario(_)
        | LessonError::File(_) => CliError::usage(e),
        LessonError::Stalled(..) | LessonError::Failed(..) => CliError::failure(e),
    }
}

/// The most trace lines a lesson file prints (its page and pictures hold the rest).
const MAX_PRINTED_ROWS: usize = 400;

fn run_file(
    lesson: &lessons::file::LessonFile,
    args: &LessonArgs,
    overrides: &[(String, toml::Value)],
) -> CliResult {
    if let Err(e) = lesson.scenario_with(overrides, None) {
        return Err(run_error(match e {
            file::ScenarioOrSet::Scenario(e) => LessonError::Scenario(e),
            file::ScenarioOrSet::Set(p, m) => LessonError::Override(p, m),
        }));
    }
    if let Some(dir) = &args.out {
        super::check_out_dir(dir)?;
    }
    if !args.quiet {
        println!("{}", lesson.text.trim_end());
        println!("\n---- running {} ----\n", lesson.file);
    }
    let given = if args.ask {
        ask(lesson).map_err(|e| CliError::failure(anyhow!("cannot read the answers: {e}")))?
    } else {
        Vec::new()
    };
    let outcome = runner::run(lesson, overrides).map_err(run_error)?;
    print_rows(&outcome, MAX_PRINTED_ROWS);
    if !outcome.table.is_empty() {
        println!();
        print_table(&outcome.table);
    }
    let failed = print_checks(&outcome, &args.set);
    print_answers(&outcome.answers, &given);
    if let Some(dir) = &args.out {
        write_pictures(dir, &outcome)?;
    }
    if args.view {
        match super::view::file_lesson_page(lesson, &outcome) {
            Some(html) => {
                let name = lesson.number.map_or_else(
                    || {
                        Path::new(&lesson.file)
                            .file_name()
                            .and_then(|n| n.to_str())
                            .and_then(|n| n.strip_suffix(file::LESSON_SUFFIX))
                            .unwrap_or("lesson")
                            .to_string()
                    },
                    |n| n.to_string(),
                );
                write_view(&html, name, args.out.as_deref())?
            }
            None => eprintln!(
                "{}: its scenario is a service scenario (clients and a server, no bus): there is \
                 no bus to animate, so no page was written; its numbers are above",
                lesson.file
            ),
        }
    }
    finish(failed)
}

/// Asks the questions on standard error and reads one answer a line.
fn ask(lesson: &lessons::file::LessonFile) -> std::io::Result<Vec<String>> {
    use std::io::BufRead;
    let mut answers = Vec::new();
    if lesson.questions.is_empty() {
        eprintln!("(this lesson asks no questions)");
        return Ok(answers);
    }
    eprintln!("Predict first: answer each question, then the run shows who was right.");
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    for (i, q) in lesson.questions.iter().enumerate() {
        let unit = if q.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", q.unit)
        };
        eprint!("  {}. {}{unit} ", i + 1, q.ask);
        let line = lines.next().transpose()?.unwrap_or_default();
        answers.push(line.trim().to_string());
    }
    Ok(answers)
}

fn print_answers(answers: &[runner::Answer], given: &[String]) {
    if answers.is_empty() {
        return;
    }
    if given.is_empty() {
        println!("\nThe questions, and what the run answers:");
    } else {
        println!("\nYour answers, graded against the run:");
    }
    let mut right = 0;
    for (i, a) in answers.iter().enumerate() {
        let truth = match &a.value {
            Ok(v) => runner::show(*v, &a.unit),
            Err(e) => format!("no value: {e}"),
        };
        // "When does S1 detect? The run says 10 µs", not "...detect?: 10 µs".
        let asked = a.ask.trim_end();
        let (sep, you, run) = if asked.ends_with(['?', '.', '!', ':']) {
            (" ", "You said", "The run says")
        } else {
            (": ", "you said", "the run says")
        };
        match given.get(i) {
            None => println!("  {}. {asked}{sep}{run} {truth}", i + 1),
            Some(g) => {
                let ok = a.grade(g) == Some(true);
                right += usize::from(ok);
                let mark = if ok { "✓" } else { "✗" };
                let shown = if g.is_empty() {
                    "(no answer)"
                } else {
                    g.as_str()
                };
                println!(
                    "  {mark} {}. {asked}{sep}{you} {shown}, the run says {truth} (± {})",
                    i + 1,
                    runner::show(a.tolerance, &a.unit)
                );
            }
        }
    }
    if !given.is_empty() {
        println!("  {right} of {} right", answers.len());
    }
}

fn print_rows(outcome: &lessons::Outcome, most: usize) {
    let colour = std::io::stdout().is_terminal();
    if let Some(sc) = &outcome.scenario {
        for row in outcome.rows.iter().take(most) {
            println!("{}", text::line(row, &sc.medium, colour));
        }
        if outcome.rows.len() > most {
            println!(
                "... and {} more events in this window (csmacd trace shows them all)",
                outcome.rows.len() - most
            );
        }
    }
}

/// Prints the checks; returns how many failed (not counting a what-if's).
fn print_checks(outcome: &lessons::Outcome, set: &[String]) -> usize {
    // A what-if changes the scenario the lesson's promises were made for:
    // a number that differs then says something about the change, not about
    // the simulator.
    let what_if = !set.is_empty();
    if what_if {
        println!(
            "\nWhat the lesson promises, checked on this what-if (--set {}); a promise made\n\
             for the unchanged lesson that does not hold here is marked n/a:",
            set.join(" --set ")
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
    failed
}

fn finish(failed: usize) -> CliResult {
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

/// Writes the lesson's interactive page: view.html in `dir`, else
/// lesson`name`.html here.
fn write_view(html: &str, name: String, dir: Option<&Path>) -> CliResult {
    let path = match dir {
        Some(dir) => {
            crate::output::create_dir(dir)
                .map_err(|e| CliError::failure(anyhow!("cannot create {}: {e}", dir.display())))?;
            dir.join("view.html")
        }
        None => PathBuf::from(format!("lesson{name}.html")),
    };
    super::view::write_page(&path, html)?;
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
