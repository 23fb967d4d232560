//! The boards' NICs as `smoltcp::phy::Device`s: the one boundary between hardware and the
//! network stack.

#[cfg(feature = "nucleo-f429zi")]
pub mod embassy_driver;
#[cfg(feature = "qemu-mps2-an386")]
pub mod lan9118;
