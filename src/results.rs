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

/// One run's results, aligned with its world's [`Columns`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub columns: Columns,
    /// One value per metric column (NaN: undefined in this run).
    pub metrics: Vec<f64>,
    /// Per table of `columns.tables`, its rows.
    pub tables: Vec<Vec<Vec<Cell>>>,
    /// Events processed, for the benchmarks.
    pub events: u64,
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
    pub fn table(&self, name: &str) -> &[Vec<Cell>] {
        self.columns
            .tables
            .iter()
            .position(|t| t.name == name)
            .map_or(&[], |k| self.tables[k].as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::Cell;

    /// A cell is 16 bytes (a crowd's stations table is 12 cells a station).
    #[test]
    fn a_cell_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
        assert_eq!(Cell::text("g"), Cell::Text(Box::new("g".to_string())));
    }
}
