//! What a run of any world gives the rest of the house: named metrics (one
//! number each, averaged over replications in summary.csv) and named tables
//! (rows per station, group or time bin, written as `<table>.csv`). Sweeps,
//! output and charts see only these names, never a world's own types, so a
//! new world adds columns without touching them.

/// One table a world writes per run: its file stem and column names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSpec {
    /// The file stem: `stations` becomes stations.csv.
    pub name: &'static str,
    pub columns: &'static [&'static str],
}

/// The columns a world's runs produce: metric names in summary.csv and
/// runs.csv order, and its tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub metrics: &'static [&'static str],
    /// The metrics a console table of many points shows.
    pub headline: &'static [&'static str],
    pub tables: &'static [TableSpec],
}

/// What one run of a scenario needs in memory, estimated before it
/// starts, in bytes: while it goes on (its own peak, the making of its
/// output included), its output once made, which is kept until its point
/// is written, and the text of its tables, which the final files are put
/// together from once every run is done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryNeed {
    pub run: f64,
    pub output: f64,
    pub text: f64,
}

impl MemoryNeed {
    /// An upper estimate of what runs need when up to `jobs` run at once:
    /// `points` of them (each a point's need and its most replications),
    /// of which up to `jobs` are in progress at a time, each point keeping
    /// its replications' outputs until all of them are done.
    ///
    /// At most `a = min(jobs, runs)` runs go on at once, and the outputs
    /// kept are at most those of `h = min(jobs, points) x replications`
    /// runs, less the runs going on; so with k runs going on the memory is
    /// at most k x run + (h - k) x output, greatest at k = a when a run
    /// needs more than an output and at k = 0 otherwise. Once every run is
    /// done, the final tables are put together from the text of every
    /// point's: at most twice that text is held (see
    /// `output::points::assemble`).
    pub fn at_once(points: &[(MemoryNeed, u32)], jobs: usize) -> f64 {
        let jobs = jobs.max(1) as f64;
        let runs: f64 = points.iter().map(|(_, r)| f64::from(*r)).sum();
        let most = |f: fn(&MemoryNeed) -> f64| points.iter().map(|(m, _)| f(m)).fold(0.0, f64::max);
        let (run, output) = (most(|m| m.run), most(|m| m.output));
        let reps = points
            .iter()
            .map(|(_, r)| f64::from(*r))
            .fold(0.0, f64::max);
        let going = jobs.min(runs);
        let kept = jobs.min(points.len() as f64) * reps;
        let runs_phase = going * run.max(output) + (kept - going).max(0.0) * output;
        let text: f64 = points.iter().map(|(m, r)| f64::from(*r) * m.text).sum();
        let need = Self::PROGRAM + runs_phase.max(2.0 * text);
        // An estimate that could not be made (NaN) is no estimate: the
        // greatest of the parts above passes over it.
        let nan = points
            .iter()
            .any(|(m, _)| m.run.is_nan() || m.output.is_nan() || m.text.is_nan());
        if nan {
            f64::NAN
        } else {
            need
        }
    }

    /// A bound on a table row's CSV text, a point's axis values included:
    /// a stations row is 12 numbers, 48 bytes in a burst and up to about
    /// 120 with delays and positions written to the last digit.
    pub const ROW_TEXT: f64 = 160.0;

    /// What the program takes beyond its start whatever it runs: the code
    /// of a run, paged in as it goes, and the allocator's own (about 1 MiB
    /// measured for a run of 1000 stations, whose data is 0.8 MiB).
    pub const PROGRAM: f64 = (2 << 20) as f64;
}

/// A run that cannot go on: events keep coming at one instant of simulated
/// time, so its clock cannot advance (a retry with no wait, over a network
/// with no delay, against a server that fails every attempt at once). The
/// world stops it and reports this instead of results; nothing else stops a
/// valid run.
#[derive(Clone, Debug, PartialEq)]
pub struct Stalled {
    /// The instant the clock stopped at.
    pub at: crate::engine::Time,
    /// Events handled at that instant when the run was stopped.
    pub events: u64,
    /// The group whose events fill the instant, and its key ("clients.0").
    pub group: String,
    pub key: String,
    /// Why the clock stands still, and what to change.
    pub cause: String,
}

impl std::fmt::Display for Stalled {
    /// "group "app" (`clients.0`): 1000000 events at 0 s without the clock
    /// advancing: ...".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "group \"{}\" (`{}`): {} events at {} without the clock advancing: {}",
            self.group,
            self.key,
            self.events,
            if self.at == 0 {
                "0s".to_string()
            } else {
                crate::units::format_ps(self.at)
            },
            self.cause
        )
    }
}

impl std::error::Error for Stalled {}

/// One cell of a table row, in 16 bytes: a crowd's stations table holds a
/// row of cells per station until it is written (12 cells each).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A count, written as an integer.
    Count(u64),
    /// A measured number: shortest round-trip decimal, empty when undefined.
    Number(f64),
    /// A name. Boxed: one pointer, where a `String` would make every cell
    /// 24 bytes (text cells are few: a group's name and policy).
    #[allow(clippy::box_collection)]
    Text(Box<String>),
}

impl Cell {
    /// A text cell.
    pub fn text(t: impl Into<String>) -> Cell {
        Cell::Text(Box::new(t.into()))
    }
}

/// A table's rows, all of one width, in one vector of cells: a crowd's
/// stations table holds a row per station until it is written, and a
/// vector per row would add 40 bytes to each (its header and the
/// allocator's).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    width: usize,
    cells: Vec<Cell>,
}

impl Table {
    /// An empty table of rows of `width` cells, with room for `rows`.
    pub fn with_capacity(width: usize, rows: usize) -> Table {
        Table {
            width,
            // A crowd's table spans hundreds of megabytes, written once:
            // on huge pages, a page fault per 2 MiB instead of per 4 KiB.
            cells: crate::mem::huge_vec(width * rows),
        }
    }

    /// Appends a row; the first sets the table's width, which every other
    /// must have.
    pub fn push(&mut self, row: Vec<Cell>) {
        if self.cells.is_empty() {
            self.width = row.len();
        }
        assert_eq!(row.len(), self.width, "a table's rows differ in width");
        self.cells.extend(row);
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[Cell]> {
        self.cells.chunks_exact(self.width.max(1))
    }

    /// The last row.
    pub fn last(&self) -> Option<&[Cell]> {
        self.len().checked_sub(1).map(|k| &self[k])
    }

    /// Puts the rows in the opposite order (for a table made from its end).
    pub fn reverse_rows(&mut self) {
        // Reversing every cell puts the rows in the opposite order with
        // their cells reversed; reversing each row then mends its cells.
        self.cells.reverse();
        for row in self.cells.chunks_exact_mut(self.width.max(1)) {
            row.reverse();
        }
    }
}

/// The table of these rows (all of one width).
impl FromIterator<Vec<Cell>> for Table {
    /// Room for as many rows as the iterator says it has at least is asked
    /// for at the first row, so that a table of known length does not grow
    /// by doubling (up to twice its cells).
    fn from_iter<I: IntoIterator<Item = Vec<Cell>>>(rows: I) -> Table {
        let rows = rows.into_iter();
        let hint = rows.size_hint().0;
        let mut t = Table::default();
        for row in rows {
            if t.is_empty() {
                t.cells.reserve_exact(hint * row.len());
            }
            t.push(row);
        }
        t
    }
}

impl std::ops::Index<usize> for Table {
    type Output = [Cell];

    /// Row `k`.
    fn index(&self, k: usize) -> &[Cell] {
        &self.cells[k * self.width..(k + 1) * self.width]
    }
}

/// An empty table, for [`RunOutput::table`].
static NO_TABLE: Table = Table {
    width: 0,
    cells: Vec::new(),
};

/// One run's results, aligned with its world's [`Columns`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub columns: Columns,
    /// One value per metric column (NaN: undefined in this run).
    pub metrics: Vec<f64>,
    /// Per table of `columns.tables`, its rows.
    pub tables: Vec<Table>,
    /// Events processed, for the benchmarks.
    pub events: u64,
    /// Why the run stopped before its end, if it did: its values are not
    /// results, and the command that ran it fails with this message.
    pub failure: Option<String>,
}

impl RunOutput {
    /// A metric's value by name; NaN when the world has no such metric.
    pub fn metric(&self, name: &str) -> f64 {
        self.columns
            .metrics
            .iter()
            .position(|c| *c == name)
            .map_or(f64::NAN, |k| self.metrics[k])
    }

    /// A table's rows by name (empty when the world has no such table).
    pub fn table(&self, name: &str) -> &Table {
        self.columns
            .tables
            .iter()
            .position(|t| t.name == name)
            .map_or(&NO_TABLE, |k| &self.tables[k])
    }
}

#[cfg(test)]
mod tests {
    use super::{Cell, Table};

    /// A table gives back the rows it was given, in order and reversed.
    #[test]
    fn a_table_holds_its_rows() {
        let row = |k: u64| {
            vec![
                Cell::Count(k),
                Cell::Number(k as f64),
                Cell::text(k.to_string()),
            ]
        };
        let t: Table = (0..5).map(row).collect();
        assert_eq!((t.len(), t.is_empty()), (5, false));
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            (0..5).map(row).collect::<Vec<_>>()
        );
        assert_eq!(&t[3], row(3).as_slice());
        assert_eq!(t.last(), Some(row(4).as_slice()));
        let mut r = Table::with_capacity(3, 5);
        for k in (0..5).rev() {
            r.push(row(k));
        }
        r.reverse_rows();
        assert_eq!(r, t);
        let empty = Table::default();
        assert_eq!(
            (empty.len(), empty.iter().count(), empty.last()),
            (0, 0, None)
        );
    }

    /// What runs need at once: at most `jobs` runs going on, and the
    /// outputs their points keep, counted by hand here.
    #[test]
    fn runs_at_once_need_what_they_hold() {
        use super::MemoryNeed;
        let p = MemoryNeed::PROGRAM;
        let big = MemoryNeed {
            run: 100.0,
            output: 10.0,
            text: 1.0,
        };
        // One point of 5 replications: k runs going on keep the outputs of
        // at most 5 - k others; the most with as many going on as can.
        let one = |jobs| MemoryNeed::at_once(&[(big, 5)], jobs) - p;
        assert_eq!(one(1), 100.0 + 4.0 * 10.0);
        assert_eq!(one(2), 2.0 * 100.0 + 3.0 * 10.0);
        assert_eq!(one(5), 500.0);
        // More threads than replications run no more at once.
        assert_eq!(one(64), 500.0);
        assert_eq!(one(0), one(1));
        // A run whose output outweighs its state: most with none going on.
        let small = MemoryNeed {
            run: 1.0,
            output: 10.0,
            text: 1.0,
        };
        assert_eq!(MemoryNeed::at_once(&[(small, 3)], 2) - p, 30.0);
        // Points: up to `jobs` of them in progress, each keeping up to its
        // most replications, and the largest needs taken for all.
        let two = [(big, 2), (small, 3)];
        assert_eq!(
            MemoryNeed::at_once(&two, 2) - p,
            2.0 * 100.0 + (2.0 * 3.0 - 2.0) * 10.0
        );
        assert_eq!(MemoryNeed::at_once(&two, 1) - p, 100.0 + 2.0 * 10.0);
        assert_eq!(MemoryNeed::at_once(&[], 4), p);
        // Putting the final tables together, once the runs are done, can
        // need more: twice the text of every point's tables.
        let wordy = MemoryNeed {
            run: 100.0,
            output: 10.0,
            text: 60.0,
        };
        assert_eq!(MemoryNeed::at_once(&[(wordy, 2)], 2) - p, 240.0);
        assert_eq!(MemoryNeed::at_once(&[(wordy, 1)], 2) - p, 120.0);
        let nan = MemoryNeed {
            run: f64::NAN,
            ..big
        };
        assert!(MemoryNeed::at_once(&[(big, 1), (nan, 1)], 1).is_nan());
    }

    /// A cell is 16 bytes (a crowd's stations table is 12 cells a station).
    #[test]
    fn a_cell_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
        assert_eq!(Cell::text("g"), Cell::Text(Box::new("g".to_string())));
    }
}
