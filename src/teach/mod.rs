//! Teaching: the event trace (and its text lines), the space-time diagram
//! and station timeline, the guided lessons, and the interactive view. Built on
//! `ethernet::run_observed`; the core knows nothing of this module.

pub mod draw;
pub mod lessons;
pub mod picture;
pub mod text;
pub mod trace;
pub mod view;
