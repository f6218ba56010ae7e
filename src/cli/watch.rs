//! How far long work has got, shown while it runs: on a terminal a bar of
//! one point's runs, or beside a sweep's bar of points the share of its
//! runs done; elsewhere (a log file, a cluster job's output) a line every
//! few seconds once the work has taken that long.

use super::CliError;
use crate::progress::Progress;
use anyhow::anyhow;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between two progress lines when stderr is not a terminal.
const LINE_EVERY_S: f64 = 10.0;
/// The variable that sets another interval.
pub const LINE_EVERY_VAR: &str = "CSMACD_PROGRESS_EVERY";

/// A view of `progress` running beside the work, until [`Watch::finish`].
pub struct Watch {
    finished: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The interval between progress lines: [`LINE_EVERY_S`], or what
/// [`LINE_EVERY_VAR`] says (seconds, a number above zero).
pub fn line_every() -> Result<Duration, CliError> {
    let Ok(text) = std::env::var(LINE_EVERY_VAR) else {
        return Ok(Duration::from_secs_f64(LINE_EVERY_S));
    };
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
        _ => Err(CliError::usage(anyhow!(
            "{LINE_EVERY_VAR}={text:?}: expected the seconds between progress lines, \
             a number above zero (e.g. 10 or 0.5)"
        ))),
    }
}

/// "42 % of 1 run done" (`runs` at least as many as started).
pub fn line(done: f64, runs: u64) -> String {
    let pct = (100.0 * done / runs.max(1) as f64).clamp(0.0, 100.0);
    format!("{pct:.0} % of {} done", runs_text(runs))
}

/// "1 run", "5 runs".
fn runs_text(runs: u64) -> String {
    if runs == 1 {
        "1 run".into()
    } else {
        format!("{runs} runs")
    }
}

/// Starts showing how far the runs reporting to `progress` have got, of
/// `planned` runs (more if more start): on a terminal in `points` (a bar
/// of points) or else in a bar of its own; and, once `interrupted` is set,
/// that the runs under way finish first. Nothing when `quiet`.
pub fn watch(
    progress: Arc<Progress>,
    planned: u64,
    points: Option<indicatif::ProgressBar>,
    interrupted: &'static AtomicBool,
    quiet: bool,
) -> Result<Watch, CliError> {
    let every = line_every()?;
    let finished = Arc::new(AtomicBool::new(false));
    if quiet {
        return Ok(Watch {
            finished,
            thread: None,
        });
    }
    let stop = Arc::clone(&finished);
    let terminal = std::io::stderr().is_terminal();
    let thread = std::thread::spawn(move || {
        let started = Instant::now();
        let runs = || planned.max(progress.runs_started());
        let bar = (terminal && points.is_none()).then(|| {
            let bar = indicatif::ProgressBar::new(1000 * runs());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {percent} % of {msg}, ETA {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(runs_text(runs()));
            bar
        });
        let mut next_line = started + every;
        let mut told = false;
        while !stop.load(Ordering::Relaxed) {
            // Woken at once by `finish`, so that ending costs no wait.
            std::thread::park_timeout(Duration::from_millis(50).min(every));
            let (done, runs) = (progress.runs_done(), runs());
            if interrupted.load(Ordering::Relaxed) && !told {
                // A long run would otherwise seem to ignore the signal.
                let note = format!(
                    "stopping: the runs under way finish first ({}); \
                     a second Ctrl-C quits at once and loses them",
                    line(done, runs)
                );
                match (&bar, &points) {
                    (Some(b), _) | (None, Some(b)) if terminal => b.println(note),
                    _ => eprintln!("{note}"),
                }
                told = true;
            }
            if let (true, Some(points)) = (terminal, &points) {
                points.set_message(line(done, runs));
            } else if let Some(bar) = &bar {
                bar.set_length(1000 * runs);
                bar.set_position((1000.0 * done) as u64);
                bar.set_message(runs_text(runs));
            } else if Instant::now() >= next_line && !stop.load(Ordering::Relaxed) {
                eprintln!(
                    "{} after {:.1} s",
                    line(done, runs),
                    started.elapsed().as_secs_f64()
                );
                next_line += every;
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    });
    Ok(Watch {
        finished,
        thread: Some(thread),
    })
}

impl Watch {
    /// Stops the view (a bar is cleared).
    pub fn finish(mut self) {
        self.finished.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            // A view that panicked has nothing left to clear.
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line;

    #[test]
    fn lines_say_the_share_of_the_runs() {
        assert_eq!(line(0.0, 1), "0 % of 1 run done");
        assert_eq!(line(0.424, 1), "42 % of 1 run done");
        assert_eq!(line(2.5, 5), "50 % of 5 runs done");
        assert_eq!(line(9.0, 5), "100 % of 5 runs done");
    }
}
