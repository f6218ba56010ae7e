//! How far the runs under way have got, for a progress line while long work
//! runs: each run reports the share of its own work done through a
//! [`Meter`], and the display reads the sum. Reporting changes no result.

use std::sync::atomic::{AtomicU64, Ordering};

/// A run's whole work, in the units a [`Meter`] reports (millionths).
const WHOLE: u64 = 1_000_000;

/// Events a run loop handles between two reports to its [`Meter`].
pub const REPORT_EVERY: u64 = 1 << 16;

/// The work done by the runs reporting to it, summed.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    started: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    /// A meter for one run, counted as started.
    pub fn meter(&self) -> Meter<'_> {
        self.started.fetch_add(1, Ordering::Relaxed);
        Meter {
            to: Some(self),
            reported: 0,
        }
    }

    /// Runs' worth of work done (a run half through counts 0.5).
    pub fn runs_done(&self) -> f64 {
        self.done.load(Ordering::Relaxed) as f64 / WHOLE as f64
    }

    /// Runs started so far.
    pub fn runs_started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }
}

/// One run's share of its work done, reported to a [`Progress`] (or
/// nowhere). Dropping it reports the run whole.
#[derive(Debug)]
pub struct Meter<'a> {
    to: Option<&'a Progress>,
    reported: u64,
}

impl Meter<'_> {
    /// A meter that reports nowhere.
    pub fn none() -> Meter<'static> {
        Meter {
            to: None,
            reported: 0,
        }
    }

    /// The run has done `share` (0 to 1) of its work. A share below one
    /// reported before is ignored: what is done stays done.
    pub fn set(&mut self, share: f64) {
        let now = (share.clamp(0.0, 1.0) * WHOLE as f64) as u64;
        if let (Some(to), true) = (self.to, now > self.reported) {
            to.done.fetch_add(now - self.reported, Ordering::Relaxed);
            self.reported = now;
        }
    }
}

impl Drop for Meter<'_> {
    fn drop(&mut self) {
        self.set(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::{Meter, Progress};

    #[test]
    fn meters_sum_to_the_runs_done() {
        let p = Progress::new();
        let mut a = p.meter();
        let mut b = p.meter();
        a.set(0.25);
        b.set(0.5);
        assert_eq!(p.runs_done(), 0.75);
        // Done stays done; out-of-range shares are clamped.
        a.set(0.1);
        b.set(7.0);
        assert_eq!(p.runs_done(), 1.25);
        drop(a);
        assert_eq!(p.runs_done(), 2.0);
        drop(b);
        assert_eq!(p.runs_done(), 2.0);
        assert_eq!(p.runs_started(), 2);
        Meter::none().set(0.5);
        assert_eq!(p.runs_done(), 2.0);
    }
}
