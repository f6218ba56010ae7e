//! The integration test binary: behaviour through the public API and the CLI.

mod access;
mod cli_basics;
mod common;
mod core_model;
mod golden;
mod policies;
