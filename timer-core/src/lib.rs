#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

mod arena;
mod counter;
#[cfg(feature = "embassy-time")]
pub mod embassy;
mod error;
mod heap;
mod id;
mod linked;
mod list;
mod queue;
pub mod storage;
mod timeout_list;
pub mod wheel;

pub use counter::WrappingCounter;
pub use error::{Full, StaleTimer};
pub use heap::{HeapSlot, TimerHeap, TimerHeapOn};
pub use id::TimerId;
pub use queue::{Drain, Expired, Sweep, TimerQueue};
pub use storage::Storage;
pub use timeout_list::{TimeoutList, TimeoutLists, TimeoutListsOn, TimeoutSlot};
pub use wheel::{TimerWheel, TimerWheelOn, WheelCells, WheelSlot};

/// A point in time, in ticks of the caller's choosing (1 ms, 1 µs, an embassy tick).
///
/// Ticks never wrap: 2^64 µs is over 500,000 years. Compute deadlines with `saturating_add`
/// so a huge timeout becomes "never" (`u64::MAX`) rather than a time in the past.
pub type Tick = u64;
