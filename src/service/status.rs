//! The statuses a failed attempt carries beside HTTP's own: what both the
//! scenario (a group's `retry_on`) and the stacks (each library's
//! classification) read.

/// The status of a connection lost with its attempt (a crash): no reply
/// came, so no HTTP status; the clients see a connection error.
pub const CONNECTION_LOST: u16 = 0;
/// The status of an OCC write after another: 409 Conflict.
pub const CONFLICT: u16 = 409;
