//! The register map: offsets from the chip's base address and the bits the driver uses.
//!
//! Names follow the SMSC datasheet. Only the registers and bits this driver touches are here.

/// A directly addressed 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Register {
    /// RX data FIFO port (read pops a word).
    RxDataFifo = 0x00,
    /// TX data FIFO port (write pushes a word).
    TxDataFifo = 0x20,
    /// RX status FIFO port (read pops one status word per frame).
    RxStatusFifo = 0x40,
    /// TX status FIFO port (read pops one status word per frame sent).
    TxStatusFifo = 0x48,
    /// Chip ID (bits 31:16) and revision (15:0).
    IdRev = 0x50,
    /// Interrupt pin configuration.
    IrqCfg = 0x54,
    /// Interrupt status, write 1 to clear.
    IntSts = 0x58,
    /// Interrupt enables, same bits as `IntSts`.
    IntEn = 0x5c,
    /// Reads `0x87654321` on a correctly wired 32-bit bus.
    ByteTest = 0x64,
    /// FIFO interrupt thresholds.
    FifoInt = 0x68,
    /// RX configuration (offset, end alignment, dump).
    RxCfg = 0x6c,
    /// TX configuration (TX on, dump).
    TxCfg = 0x70,
    /// Hardware configuration (soft reset).
    HwCfg = 0x74,
    /// RX FIFO information: used status entries and data bytes.
    RxFifoInf = 0x7c,
    /// TX FIFO information: used status entries and free data bytes.
    TxFifoInf = 0x80,
    /// Power management control (device ready).
    PmtCtrl = 0x84,
    /// Indirect MAC register access: command.
    MacCsrCmd = 0xa4,
    /// Indirect MAC register access: data.
    MacCsrData = 0xa8,
}

impl Register {
    /// The byte offset from the chip's base address.
    pub const fn offset(self) -> usize {
        self as usize
    }
}

/// Value of `BYTE_TEST` on a correctly wired bus.
pub const BYTE_TEST_VALUE: u32 = 0x8765_4321;

/// `PMT_CTRL`: the device is ready for register access.
pub const PMT_CTRL_READY: u32 = 1 << 0;

/// `HW_CFG`: soft reset; reads 1 until the reset is done.
pub const HW_CFG_SRST: u32 = 1 << 0;

/// `TX_CFG`: enable the transmitter.
pub const TX_CFG_TX_ON: u32 = 1 << 1;

/// `IRQ_CFG`: enable the IRQ pin.
pub const IRQ_CFG_IRQ_EN: u32 = 1 << 8;
/// `IRQ_CFG`: active-high polarity.
pub const IRQ_CFG_IRQ_POL: u32 = 1 << 4;
/// `IRQ_CFG`: push-pull output.
pub const IRQ_CFG_IRQ_TYPE: u32 = 1 << 0;

/// `INT_STS`/`INT_EN`: RX status FIFO level above the `FIFO_INT` threshold (0: any frame).
pub const INT_RSFL: u32 = 1 << 3;

/// Indirect MAC registers, reached through `MAC_CSR_CMD`/`MAC_CSR_DATA`.
pub mod mac {
    /// MAC control register.
    pub const MAC_CR: u8 = 1;
    /// MAC address, bytes 4 and 5.
    pub const ADDRH: u8 = 2;
    /// MAC address, bytes 0 to 3.
    pub const ADDRL: u8 = 3;
    /// MII (PHY management) access.
    pub const MII_ACC: u8 = 6;
    /// MII (PHY management) data.
    pub const MII_DATA: u8 = 7;

    /// `MAC_CR`: full duplex.
    pub const MAC_CR_FDPX: u32 = 1 << 20;
    /// `MAC_CR`: transmitter enable.
    pub const MAC_CR_TXEN: u32 = 1 << 3;
    /// `MAC_CR`: receiver enable.
    pub const MAC_CR_RXEN: u32 = 1 << 2;
}

/// Registers of the internal PHY, reached through `MII_ACC`/`MII_DATA`.
pub mod phy {
    /// The internal PHY's address on the MII bus.
    pub const ADDRESS: u8 = 1;
    /// Basic control register.
    pub const BCR: u8 = 0;
    /// Basic status register.
    pub const BSR: u8 = 1;

    /// `BCR`: reset; reads 1 until the reset is done.
    pub const BCR_RESET: u32 = 1 << 15;
    /// `BCR`: enable auto-negotiation.
    pub const BCR_AUTONEG_ENABLE: u32 = 1 << 12;
    /// `BCR`: restart auto-negotiation.
    pub const BCR_AUTONEG_RESTART: u32 = 1 << 9;
    /// `BSR`: link is up.
    pub const BSR_LINK_UP: u32 = 1 << 2;
}
