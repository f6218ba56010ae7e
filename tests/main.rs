//! The integration test binary: behaviour through the public API and the CLI.

mod access;
mod bursts;
mod charts;
mod cli_basics;
mod common;
mod core_model;
mod docs_examples;
mod golden;
mod groups;
mod hostile_inputs;
mod inputs;
mod invariants;
mod lesson_charts;
mod nothing_lost;
mod parser_fuzz;
mod policies;
mod service;
mod service_scenarios;
mod stacks;
mod standards;
mod status;
mod sweep;
mod teach;
mod topology;
mod view;
mod warnings;
