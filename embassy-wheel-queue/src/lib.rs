#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

#[cfg(feature = "time-driver")]
mod driver;
mod foreign;
mod integrated;
// The crate's `unsafe`: the task's timer in its `TimerQueueItem`.
#[allow(unsafe_code)]
mod item;
mod waker_queue;
mod wheel;

#[cfg(feature = "time-driver")]
pub use driver::{Counter, TimeDriver};
pub use integrated::IntegratedWheel;
pub use waker_queue::{HeapQueue, WakerQueue, WheelQueue};
