//! Sweeps: a scenario plus `[sweep]` axes, expanded into a grid of points
//! (plan.rs: reading the file, with axes.rs its `[sweep]` axes and charts.rs
//! its `[[chart]]` tables) and run in parallel (run.rs: the only rayon user);
//! checks.rs places the points' warnings in the file.

mod axes;
mod charts;
pub mod checks;
mod plan;
mod run;

pub use axes::{grid_choice, grid_size, read as read_axes, value_label, Axis, MAX_POINTS};
pub use plan::{
    common_seed, from_str, load, point_seed, set_path, Plan, Point, PointFault, Shard, SweepError,
};
pub use run::{run_pending, run_points, PendingError, PointSink};
