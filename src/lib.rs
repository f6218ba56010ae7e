//! csmacd: an Ethernet CSMA/CD collision simulator.
//!
//! The core ([`engine`], [`sim`], [`backoff`], [`traffic`]) simulates; the edges
//! ([`scenario`] parsing, [`output`] files, [`cli`]) talk to the world.

pub mod advice;
pub mod backoff;
pub mod cli;
pub mod engine;
pub mod ethernet;
pub mod expr;
pub mod mem;
pub mod output;
pub mod progress;
pub mod results;
pub mod scenario;
pub mod seed;
pub mod service;
pub mod stats;
pub mod sweep;
pub mod teach;
pub mod traffic;
pub mod units;
pub mod world;
