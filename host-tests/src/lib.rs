//! Shared helpers for the desktop tests.

pub mod conn_check;

pub mod cpu_time;

pub mod e2e;

pub mod model;

pub mod property;

pub mod queue_check;

pub mod redis_diff;

pub mod resp_check;

pub mod seeds;

pub mod sim;

pub mod store_check;
