//! What a service run will cost, estimated before it starts: its memory
//! (a scenario that cannot fit is refused) and its work (sweeps start the
//! longest points first).

use super::config::Scenario;
use super::metrics::{Bin, TIMESERIES_COLUMNS};
use crate::results::{Cell, MemoryNeed};
use std::mem::size_of;

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
        const CLIENT_BYTES: f64 = 64.0;
        const CALL_BYTES: f64 = 256.0;
        const GROUP_BYTES: f64 = 256.0;
        let bins = (self.duration / self.bin.max(1)) as f64 + 1.0;
        let row = (TIMESERIES_COLUMNS.len() * size_of::<Cell>()) as f64;
        MemoryNeed {
            run: self.client_count() as f64 * CLIENT_BYTES
                + self.expected_calls().min(1e8) * CALL_BYTES
                + bins * (2 * size_of::<Bin>()) as f64
                + bins * row,
            output: self.groups.len() as f64 * GROUP_BYTES + bins * row,
            text: (self.groups.len() as f64 + bins) * MemoryNeed::ROW_TEXT,
        }
    }

    /// A rough relative cost of one run: calls times a few events each, plus
    /// the clients.
    pub fn work_estimate(&self) -> f64 {
        self.expected_calls() * 8.0 + self.client_count() as f64
    }
}
