//! What a service run will cost, estimated before it starts: its memory
//! (a scenario that cannot fit is refused) and its work (sweeps start the
//! longest points first).

use super::config::Scenario;
use super::metrics::{Bin, SERVER_TIMESERIES_COLUMNS, TIMESERIES_COLUMNS};
use crate::results::{Cell, MemoryNeed};
use std::mem::size_of;

const CLIENT_BYTES: f64 = 64.0;
const CALL_BYTES: f64 = 256.0;
const GROUP_BYTES: f64 = 256.0;
/// A group's latency histograms while it runs (the counted calls' and, in
/// the total, a copy): up to about 16 000 buckets of 8 bytes each.
const LATENCY_BYTES: f64 = 2.0 * 16_000.0 * 8.0;
/// A worker of the queue server: its work and token.
const WORKER_BYTES: f64 = 48.0;

impl Scenario {
    /// An upper estimate of the memory one run needs (see [`MemoryNeed`]):
    /// per client its state (about 64 bytes, a per-client gate included),
    /// per call in flight 256 bytes (its slot, about 100 bytes, with the
    /// headroom of a growing vector, and its pending events; bounded by the
    /// calls of the run), and the timeseries (its bins in a growing vector,
    /// and their rows as they are made); its output, the per-group rows and
    /// the timeseries' rows (a cell of 16 bytes per column). A 10^6-client
    /// herd peaks at about 190 bytes per client (docs/performance.md).
    pub fn memory_need(&self) -> MemoryNeed {
        let (clients, calls, bins) = self.memory_parts();
        let (per_bin, row) = self.timeseries_rows();
        let n = self.bins() as f64 * per_bin;
        let workers = match self.server().kind {
            super::config::ServerKind::Queue { workers, .. } => f64::from(workers) * WORKER_BYTES,
            _ => 0.0,
        };
        MemoryNeed {
            run: clients + calls + bins + workers + self.groups.len() as f64 * LATENCY_BYTES,
            output: self.groups.len() as f64 * GROUP_BYTES + n * row,
            text: (self.groups.len() as f64 + n) * MemoryNeed::ROW_TEXT,
        }
    }

    /// The timeseries bins of a run: the duration over the bin, and one.
    pub fn bins(&self) -> u64 {
        self.duration / self.bin.max(1) + 1
    }

    /// The timeseries' rows per bin (one per server with several) and
    /// the bytes of a row.
    fn timeseries_rows(&self) -> (f64, f64) {
        match self.servers.len() {
            1 => (1.0, (TIMESERIES_COLUMNS.len() * size_of::<Cell>()) as f64),
            n => (
                n as f64,
                (SERVER_TIMESERIES_COLUMNS.len() * size_of::<Cell>()) as f64,
            ),
        }
    }

    /// The bytes a run needs for its clients, its calls in flight and its
    /// timeseries, apart.
    fn memory_parts(&self) -> (f64, f64, f64) {
        let (per_bin, row) = self.timeseries_rows();
        let bins = self.bins() as f64;
        let rows = bins * per_bin;
        (
            self.client_count() as f64 * CLIENT_BYTES,
            self.expected_calls().min(1e8) * CALL_BYTES,
            (bins + rows) * (2 * size_of::<Bin>()) as f64 + rows * row,
        )
    }

    /// What drives a run's memory most, for a refusal to name: the key to
    /// change, what it is, and what to do.
    pub fn memory_driver(&self) -> (&'static str, String, &'static str) {
        let (clients, calls, bins) = self.memory_parts();
        if bins >= clients && bins >= calls {
            (
                "bin",
                format!(
                    "{} timeseries bins (the duration {} over bin = {})",
                    self.bins(),
                    crate::units::format_ps(self.duration),
                    crate::units::format_ps(self.bin)
                ),
                "give a wider `bin` or a shorter `duration`",
            )
        } else if calls >= clients {
            (
                "clients",
                format!(
                    "about {:.3e} calls over the {}",
                    self.expected_calls(),
                    crate::units::format_ps(self.duration)
                ),
                "simulate fewer clients or calls, or a shorter `duration`",
            )
        } else {
            (
                "clients",
                format!("{} clients", self.client_count()),
                "simulate fewer clients",
            )
        }
    }

    /// The bytes this scenario itself holds once read (a sweep holds one
    /// per point).
    pub fn held_bytes(&self) -> f64 {
        let groups: usize = self
            .groups
            .iter()
            .map(|g| size_of::<super::config::Group>() + g.name.len())
            .sum();
        (size_of::<Scenario>() + self.name.len() + groups) as f64
    }

    /// A rough relative cost of one run: calls times a few events each, plus
    /// the clients.
    pub fn work_estimate(&self) -> f64 {
        self.expected_calls() * 8.0 + self.client_count() as f64
    }
}
