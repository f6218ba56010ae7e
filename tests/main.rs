//! The integration tests: one binary, one module per area.

mod teach;
