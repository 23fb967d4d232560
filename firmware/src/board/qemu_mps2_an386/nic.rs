//! The LAN9118 on its memory-mapped bus, as a `smoltcp::phy::Device`.
//!
//! The frame logic lives in the `lan9118` crate (host-tested); this file adds the volatile
//! register accesses and smoltcp's token protocol.

use core::ptr;

use lan9118::{Lan9118, Register, Registers, Stats, MAX_FRAME_LEN};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

/// The chip's registers at a fixed address.
pub struct Mmio {
    base: usize,
}

impl Mmio {
    /// The register block at `base`.
    ///
    /// # Safety
    ///
    /// A LAN9118 must be mapped at `base`, with its 256-byte register block readable and
    /// writable with 32-bit accesses; nothing else may treat that range as memory.
    pub const unsafe fn new(base: usize) -> Self {
        Self { base }
    }
}

impl Registers for Mmio {
    fn read(&mut self, reg: Register) -> u32 {
        // SAFETY: `Mmio::new`'s contract: the register block is mapped at `base`, and every
        // `Register` offset is inside it and 4-byte aligned.
        unsafe { ptr::read_volatile((self.base + reg.offset()) as *const u32) }
    }

    fn write(&mut self, reg: Register, value: u32) {
        // SAFETY: as in `read`.
        unsafe { ptr::write_volatile((self.base + reg.offset()) as *mut u32, value) }
    }
}

/// The NIC: the driver plus one frame buffer each way.
pub struct Lan9118Nic {
    chip: Lan9118<Mmio>,
    rx: [u8; MAX_FRAME_LEN],
    tx: [u8; MAX_FRAME_LEN],
}

impl Lan9118Nic {
    /// A NIC over the chip at `base`; call [`init`](Self::init) before use.
    ///
    /// # Safety
    ///
    /// As [`Mmio::new`]; and only one `Lan9118Nic` may exist per chip.
    pub const unsafe fn new(base: usize) -> Self {
        Self {
            // SAFETY: forwarded to the caller.
            chip: Lan9118::new(unsafe { Mmio::new(base) }),
            rx: [0; MAX_FRAME_LEN],
            tx: [0; MAX_FRAME_LEN],
        }
    }

    /// Brings the chip up; returns its station address.
    ///
    /// # Errors
    ///
    /// See [`lan9118::InitError`].
    pub fn init(&mut self) -> Result<[u8; 6], lan9118::InitError> {
        self.chip.init()
    }

    /// Raises the chip's IRQ line when a frame arrives.
    pub fn enable_rx_interrupt(&mut self) {
        self.chip.enable_rx_interrupt();
    }

    /// Frame counters (dropped error frames included).
    #[allow(dead_code, reason = "for debugging sessions; the shell may report it")]
    pub fn stats(&self) -> Stats {
        self.chip.stats()
    }
}

impl Device for Lan9118Nic {
    type RxToken<'a> = RxToken<'a>;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _: Instant) -> Option<(Self::RxToken<'_>, Self::TxToken<'_>)> {
        // The frame is copied out at once: the FIFO holds it in order, and smoltcp always
        // consumes a token it asked for.
        let len = self.chip.receive(&mut self.rx)?;
        Some((
            RxToken {
                frame: &self.rx[..len],
            },
            TxToken {
                chip: &mut self.chip,
                buf: &mut self.tx,
            },
        ))
    }

    fn transmit(&mut self, _: Instant) -> Option<Self::TxToken<'_>> {
        if !self.chip.can_transmit(MAX_FRAME_LEN) {
            return None;
        }
        Some(TxToken {
            chip: &mut self.chip,
            buf: &mut self.tx,
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = MAX_FRAME_LEN;
        caps.max_burst_size = Some(1);
        caps
    }
}

/// A received frame, already out of the FIFO.
pub struct RxToken<'a> {
    frame: &'a [u8],
}

impl phy::RxToken for RxToken<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.frame)
    }
}

/// Room for one frame to send.
pub struct TxToken<'a> {
    chip: &'a mut Lan9118<Mmio>,
    buf: &'a mut [u8; MAX_FRAME_LEN],
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let len = len.min(MAX_FRAME_LEN);
        let result = f(&mut self.buf[..len]);
        if let Err(error) = self.chip.transmit(&self.buf[..len]) {
            // smoltcp treats a lost frame like one lost on the wire: TCP retransmits.
            defmt::warn!("LAN9118 TX dropped: {}", error);
        }
        result
    }
}
