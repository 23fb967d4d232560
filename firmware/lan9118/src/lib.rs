#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(test)]
extern crate std;

mod driver;
pub mod regs;
mod words;

#[cfg(test)]
mod model;

pub use driver::{InitError, Lan9118, Stats, TxError, POLL_LIMIT};
pub use regs::Register;
pub use words::{
    mac_address, words_for, MacCsrCommand, MiiAccess, RxFifoInfo, RxStatus, TxCommand, TxFifoInfo,
    TxStatus,
};

/// 32-bit access to the chip's registers.
///
/// The firmware implements it with volatile reads and writes at `base + reg.offset()`. Reads of
/// the FIFO ports pop the FIFO, so a read is `&mut self` too.
pub trait Registers {
    /// Reads a register (pops the FIFO for FIFO ports).
    fn read(&mut self, reg: Register) -> u32;
    /// Writes a register (pushes onto the FIFO for FIFO ports).
    fn write(&mut self, reg: Register, value: u32);
}

impl<R: Registers + ?Sized> Registers for &mut R {
    fn read(&mut self, reg: Register) -> u32 {
        (**self).read(reg)
    }
    fn write(&mut self, reg: Register, value: u32) {
        (**self).write(reg, value)
    }
}

/// The largest frame the driver passes either way: a 1500-byte payload, the Ethernet header,
/// no FCS (the chip adds it on TX; the driver strips it on RX).
pub const MAX_FRAME_LEN: usize = 1514;

/// The shortest frame worth reading: an Ethernet header.
pub const MIN_FRAME_LEN: usize = 14;

/// The length of the frame check sequence the chip appends to every received frame.
pub const FCS_LEN: usize = 4;

/// Acknowledges the "RX status FIFO level" interrupt, so the interrupt line drops.
///
/// For the interrupt handler, which may not own the [`Lan9118`]: writing `INT_STS` touches no
/// FIFO state, so it is safe next to a driver in the middle of a frame.
pub fn acknowledge_rx_interrupt<R: Registers>(regs: &mut R) {
    regs.write(Register::IntSts, regs::INT_RSFL);
}
