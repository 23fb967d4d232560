#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

#[macro_use]
mod fmt;

mod auth;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod command;
mod decimal;
mod info;
mod memory;
mod pool;
#[cfg(feature = "pubsub")]
pub mod pubsub;
pub mod resp;
mod server;
mod settings;
#[cfg(feature = "sntp")]
mod sntp;
mod stats;
pub mod store;
#[cfg(any(test, feature = "hashes", feature = "sntp"))]
mod xorshift;

pub use auth::{PasswordTooLong, Security, MAX_PASSWORD_LEN};
pub use command::MAX_ARGS;
pub use memory::Memory;
#[cfg(feature = "alloc")]
pub use server::ServerBuffers;
pub use server::{
    BufferSizes, ClientSlot, IpSetup, Server, ServerConfig, ServerMemory, SetupError,
};
#[cfg(feature = "sntp")]
pub use server::{ClockSync, SntpMemory};
pub use settings::{Capacity, HashPacking, ListNodes, Settings, Timeouts};
pub use smoltcp;
#[cfg(feature = "extended-commands")]
pub use stats::CommandStats;
pub use stats::{ErrorStats, Stats};
pub use timer_core;
