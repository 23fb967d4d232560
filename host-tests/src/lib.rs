//! Shared helpers for the desktop tests.

pub mod e2e;

pub mod model;

pub mod sim;
