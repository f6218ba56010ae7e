//! The integration tests: one binary, one module per subject.

mod charts;
mod sweep;
