//! The boards, each self-contained in its folder: `mod.rs` (bring-up), `nic.rs` (the NIC as a
//! `smoltcp::phy::Device`, the one file that knows both sides) and its time driver. Each offers
//! the same items, which `main` uses without knowing the board:
//!
//! - `Board { nic, led, app_config }` and `init() -> Board`: clocks, time driver, NIC (a
//!   `smoltcp::phy::Device`, type `Nic`), status LED (an `embedded_hal::digital::OutputPin`,
//!   type `Led`), and what the application needs to know (station address, addressing, port,
//!   random seed);
//! - `CAPACITY`: the clients, store size and send buffer the board's RAM affords
//!   (`app::Capacity`);
//! - `unix_time_ms(now_ms) -> Option<u64>`: the wall clock at boot, where the board has one;
//! - with the `sntp` feature (NUCLEO only), `keep_unix_time(unix_ms)`: keeps each SNTP sync's
//!   time where the next boot's `unix_time_ms` finds it;
//! - `report_ready(line)`: the "ready" line, where the board's host tooling sees it;
//! - `halt_after_panic(info) -> !`: stop so the runner notices.

#[cfg(feature = "nucleo-f429zi")]
mod nucleo_f429zi;
#[cfg(feature = "nucleo-f429zi")]
pub use nucleo_f429zi::*;

#[cfg(feature = "qemu-mps2-an386")]
mod qemu_mps2_an386;
#[cfg(feature = "qemu-mps2-an386")]
pub use qemu_mps2_an386::*;

#[cfg(all(feature = "sntp", feature = "qemu-mps2-an386"))]
compile_error!(
    "the `sntp` feature is for the NUCLEO-F429ZI: the QEMU board takes the host's time by \
     semihosting at boot"
);
