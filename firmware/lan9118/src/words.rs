//! The status and command words that cross the FIFOs, and the word arithmetic around them.

use crate::FCS_LEN;

/// The number of 32-bit FIFO words that carry `len` bytes.
///
/// # Examples
///
/// ```
/// assert_eq!(lan9118::words_for(0), 0);
/// assert_eq!(lan9118::words_for(60), 15);
/// assert_eq!(lan9118::words_for(61), 16);
/// ```
pub const fn words_for(len: usize) -> usize {
    len.div_ceil(4)
}

/// The station address held in the MAC's `ADDRH` and `ADDRL` registers.
///
/// `ADDRL` holds bytes 0 to 3, least significant first; `ADDRH` holds bytes 4 and 5.
///
/// # Examples
///
/// ```
/// // QEMU's default 52:54:00:12:34:56
/// assert_eq!(
///     lan9118::mac_address(0x0000_5634, 0x1200_5452),
///     [0x52, 0x54, 0x00, 0x12, 0x34, 0x56]
/// );
/// ```
pub const fn mac_address(addrh: u32, addrl: u32) -> [u8; 6] {
    let l = addrl.to_le_bytes();
    let h = addrh.to_le_bytes();
    [l[0], l[1], l[2], l[3], h[0], h[1]]
}

/// One entry of the RX status FIFO: describes the next frame in the RX data FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RxStatus(pub u32);

impl RxStatus {
    const LEN_SHIFT: u32 = 16;
    const LEN_MASK: u32 = 0x3fff;
    /// Error summary: CRC error, runt, too long, collision, MII error...
    const ERROR_SUMMARY: u32 = 1 << 15;

    /// The frame's length in bytes as the chip stored it, FCS included (bits 29:16).
    pub const fn stored_len(self) -> usize {
        ((self.0 >> Self::LEN_SHIFT) & Self::LEN_MASK) as usize
    }

    /// The frame's length without its 4-byte FCS: what the network stack sees.
    pub const fn frame_len(self) -> usize {
        self.stored_len().saturating_sub(FCS_LEN)
    }

    /// How many words to pop from the RX data FIFO for this frame (no offset, no end padding).
    pub const fn data_words(self) -> usize {
        words_for(self.stored_len())
    }

    /// Whether the chip flagged the frame as bad (error summary, bit 15).
    pub const fn is_error(self) -> bool {
        self.0 & Self::ERROR_SUMMARY != 0
    }
}

/// `RX_FIFO_INF`: how much the RX FIFOs hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RxFifoInfo(pub u32);

impl RxFifoInfo {
    /// Frames waiting: used RX status FIFO entries (bits 23:16).
    pub const fn status_count(self) -> usize {
        ((self.0 >> 16) & 0xff) as usize
    }

    /// Bytes used in the RX data FIFO (bits 15:0).
    pub const fn data_bytes(self) -> usize {
        (self.0 & 0xffff) as usize
    }
}

/// `TX_FIFO_INF`: how much room the TX FIFOs have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TxFifoInfo(pub u32);

impl TxFifoInfo {
    /// TX status entries waiting to be read (bits 23:16).
    pub const fn status_count(self) -> usize {
        ((self.0 >> 16) & 0xff) as usize
    }

    /// Free bytes in the TX data FIFO (bits 15:0).
    pub const fn data_free(self) -> usize {
        (self.0 & 0xffff) as usize
    }
}

/// One entry of the TX status FIFO: the outcome of one transmitted frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TxStatus(pub u32);

impl TxStatus {
    /// The tag given in the frame's command B (bits 31:16).
    pub const fn tag(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// Whether the frame failed (error summary, bit 15).
    pub const fn is_error(self) -> bool {
        self.0 & (1 << 15) != 0
    }
}

/// The two command words that precede a frame's data in the TX data FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TxCommand {
    /// Command A: segment flags, data offset and end alignment, this buffer's size.
    pub a: u32,
    /// Command B: tag and the whole frame's length.
    pub b: u32,
}

impl TxCommand {
    const FIRST_SEGMENT: u32 = 1 << 13;
    const LAST_SEGMENT: u32 = 1 << 12;
    const BUFFER_SIZE_MASK: u32 = 0x7ff;
    const FRAME_LEN_MASK: u32 = 0x7ff;

    /// The commands for a whole frame in one buffer: first and last segment, no offset, 4-byte
    /// end alignment, the chip appends the FCS and pads runts.
    ///
    /// `len` must be at most [`MAX_FRAME_LEN`](crate::MAX_FRAME_LEN); larger values are cut to
    /// 11 bits, which the driver never lets happen.
    ///
    /// # Examples
    ///
    /// ```
    /// let cmd = lan9118::TxCommand::single_segment(60, 7);
    /// assert_eq!(cmd.a, 0x3000 | 60);
    /// assert_eq!(cmd.b, 7 << 16 | 60);
    /// ```
    pub const fn single_segment(len: usize, tag: u16) -> Self {
        let len = len as u32;
        Self {
            a: Self::FIRST_SEGMENT | Self::LAST_SEGMENT | (len & Self::BUFFER_SIZE_MASK),
            b: ((tag as u32) << 16) | (len & Self::FRAME_LEN_MASK),
        }
    }
}

/// A command word for `MAC_CSR_CMD`, the window onto the MAC's indirect registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MacCsrCommand(pub u32);

impl MacCsrCommand {
    /// Set while the access is in progress; the driver writes it to start one.
    pub const BUSY: u32 = 1 << 31;
    const READ: u32 = 1 << 30;

    /// Starts a read of MAC register `reg`; the value then appears in `MAC_CSR_DATA`.
    pub const fn read(reg: u8) -> Self {
        Self(Self::BUSY | Self::READ | reg as u32)
    }

    /// Starts a write of `MAC_CSR_DATA` into MAC register `reg`.
    pub const fn write(reg: u8) -> Self {
        Self(Self::BUSY | reg as u32)
    }

    /// Whether a command read back from `MAC_CSR_CMD` is still in progress.
    pub const fn is_busy(word: u32) -> bool {
        word & Self::BUSY != 0
    }
}

/// A value for the MAC's `MII_ACC` register: one PHY register access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MiiAccess(pub u32);

impl MiiAccess {
    /// Set while the access is in progress; the driver writes it to start one.
    pub const BUSY: u32 = 1 << 0;
    const WRITE: u32 = 1 << 1;

    const fn address(phy: u8, reg: u8) -> u32 {
        ((phy as u32 & 0x1f) << 11) | ((reg as u32 & 0x1f) << 6)
    }

    /// Reads PHY register `reg` of the PHY at `phy` into `MII_DATA`.
    pub const fn read(phy: u8, reg: u8) -> Self {
        Self(Self::address(phy, reg) | Self::BUSY)
    }

    /// Writes `MII_DATA` into PHY register `reg` of the PHY at `phy`.
    pub const fn write(phy: u8, reg: u8) -> Self {
        Self(Self::address(phy, reg) | Self::WRITE | Self::BUSY)
    }

    /// Whether a value read back from `MII_ACC` is still in progress.
    pub const fn is_busy(word: u32) -> bool {
        word & Self::BUSY != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_status_length_includes_fcs() {
        // 60-byte frame + 4-byte FCS, no error.
        let status = RxStatus(64 << 16);
        assert_eq!(status.stored_len(), 64);
        assert_eq!(status.frame_len(), 60);
        assert_eq!(status.data_words(), 16);
        assert!(!status.is_error());
    }

    #[test]
    fn rx_status_odd_length_rounds_words_up() {
        // 61-byte frame: 65 bytes stored, 17 words (the last holds 1 byte).
        let status = RxStatus(65 << 16);
        assert_eq!(status.frame_len(), 61);
        assert_eq!(status.data_words(), 17);
    }

    #[test]
    fn rx_status_ignores_flags_around_length() {
        // Filtering-fail (bit 30), broadcast (bit 13) and bit 31 do not leak into the length.
        let status = RxStatus(0xc000_0000 | (1518 << 16) | 0x2000);
        assert_eq!(status.stored_len(), 1518);
        assert_eq!(status.frame_len(), 1514);
        assert!(!status.is_error());
    }

    #[test]
    fn rx_status_error_summary_is_bit_15() {
        assert!(RxStatus((64 << 16) | 0x8000).is_error());
        assert!(!RxStatus((64 << 16) | 0x7fff).is_error());
    }

    #[test]
    fn rx_status_runt_length_saturates() {
        assert_eq!(RxStatus(2 << 16).frame_len(), 0);
    }

    #[test]
    fn rx_fifo_info_fields() {
        let info = RxFifoInfo(0x0003_0120);
        assert_eq!(info.status_count(), 3);
        assert_eq!(info.data_bytes(), 0x120);
    }

    #[test]
    fn tx_fifo_info_fields() {
        let info = TxFifoInfo(0x0002_1200);
        assert_eq!(info.status_count(), 2);
        assert_eq!(info.data_free(), 0x1200);
    }

    #[test]
    fn tx_command_for_full_frame() {
        let cmd = TxCommand::single_segment(1514, 0xbeef);
        assert_eq!(cmd.a & 0x7ff, 1514);
        assert_eq!(cmd.a & 0x3000, 0x3000, "first and last segment");
        assert_eq!(cmd.a & 0x001f_0000, 0, "no data start offset");
        assert_eq!(cmd.a & 0x0300_0000, 0, "4-byte end alignment");
        assert_eq!(cmd.b, 0xbeef_0000 | 1514);
    }

    #[test]
    fn tx_status_tag_and_error() {
        let status = TxStatus(0x1234_8000);
        assert_eq!(status.tag(), 0x1234);
        assert!(status.is_error());
        assert!(!TxStatus(0x1234_0000).is_error());
    }

    #[test]
    fn mac_csr_commands() {
        assert_eq!(MacCsrCommand::read(3).0, 0xc000_0003);
        assert_eq!(MacCsrCommand::write(1).0, 0x8000_0001);
        assert!(MacCsrCommand::is_busy(0x8000_0000));
        assert!(!MacCsrCommand::is_busy(0x4000_0003));
    }

    #[test]
    fn mii_access_words() {
        assert_eq!(MiiAccess::read(1, 0).0, (1 << 11) | 1);
        assert_eq!(MiiAccess::write(1, 1).0, (1 << 11) | (1 << 6) | 0b11);
        assert!(MiiAccess::is_busy(1));
        assert!(!MiiAccess::is_busy((1 << 11) | 2));
    }

    #[test]
    fn mac_address_byte_order() {
        assert_eq!(mac_address(0xffff_0605, 0x0403_0201), [1, 2, 3, 4, 5, 6]);
    }
}
