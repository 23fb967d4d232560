//! The driver: bring-up, frame reception and transmission over any [`Registers`].

use core::fmt;

use crate::regs::{self, mac, phy, Register};
use crate::words::{
    mac_address, words_for, MacCsrCommand, MiiAccess, RxFifoInfo, RxStatus, TxCommand, TxFifoInfo,
    TxStatus,
};
use crate::{Registers, MAX_FRAME_LEN, MIN_FRAME_LEN};

/// How many times a busy bit is read before giving up. Every wait in bring-up is bounded by
/// it: the crate has no clock, and a dead chip must not hang the firmware.
pub const POLL_LIMIT: u32 = 100_000;

/// Why [`Lan9118::init`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum InitError {
    /// `PMT_CTRL` never reported the device ready.
    NotReady,
    /// `BYTE_TEST` read this instead of `0x87654321`: wrong address, bus width or byte order.
    ByteTest(u32),
    /// `HW_CFG` soft reset never completed.
    ResetTimeout,
    /// A MAC CSR access stayed busy.
    MacTimeout,
    /// A PHY (MII) access, or the PHY's own reset, stayed busy.
    PhyTimeout,
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotReady => f.write_str("LAN9118 never became ready"),
            Self::ByteTest(v) => write!(f, "LAN9118 byte test read {v:#010x}"),
            Self::ResetTimeout => f.write_str("LAN9118 soft reset timed out"),
            Self::MacTimeout => f.write_str("LAN9118 MAC CSR access timed out"),
            Self::PhyTimeout => f.write_str("LAN9118 PHY access timed out"),
        }
    }
}

impl core::error::Error for InitError {}

/// Why [`Lan9118::transmit`] did not send a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TxError {
    /// The frame is shorter than an Ethernet header or longer than [`MAX_FRAME_LEN`].
    BadLength(usize),
    /// The TX data FIFO has no room for the frame now; try again after it drains.
    FifoFull,
}

impl fmt::Display for TxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadLength(len) => write!(f, "frame of {len} bytes cannot be sent"),
            Self::FifoFull => f.write_str("TX FIFO full"),
        }
    }
}

impl core::error::Error for TxError {}

/// Frame counters since [`Lan9118::new`]. They wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Stats {
    /// Good frames handed to the caller.
    pub rx_frames: u32,
    /// Frames the chip flagged as bad (CRC, runt, collision...), read and dropped.
    pub rx_errors: u32,
    /// Frames too long for the caller's buffer or shorter than a header, read and dropped.
    pub rx_bad_length: u32,
    /// Frames pushed to the TX FIFO.
    pub tx_frames: u32,
    /// Frames the chip reported as failed in the TX status FIFO.
    pub tx_errors: u32,
}

/// A LAN9118 on some register bus.
#[derive(Debug)]
pub struct Lan9118<R> {
    regs: R,
    mac: [u8; 6],
    next_tag: u16,
    stats: Stats,
}

impl<R: Registers> Lan9118<R> {
    /// A driver for the chip behind `regs`. Touches nothing until [`init`](Self::init).
    pub const fn new(regs: R) -> Self {
        Self {
            regs,
            mac: [0; 6],
            next_tag: 0,
            stats: Stats {
                rx_frames: 0,
                rx_errors: 0,
                rx_bad_length: 0,
                tx_frames: 0,
                tx_errors: 0,
            },
        }
    }

    /// Brings the chip up: waits for it, checks the bus, soft-resets it, resets the PHY and
    /// starts auto-negotiation, reads the station address, enables the transmitter and the
    /// receiver (full duplex). Returns the station address (`ADDRH`/`ADDRL`, which the chip
    /// loads from its EEPROM).
    ///
    /// The receive filter is left as the reset left it; the chip then passes broadcast and
    /// frames for its own address.
    ///
    /// # Errors
    ///
    /// [`InitError`] when a check fails or a wait exceeds [`POLL_LIMIT`] reads.
    pub fn init(&mut self) -> Result<[u8; 6], InitError> {
        self.wait_ready()?;
        let byte_test = self.regs.read(Register::ByteTest);
        if byte_test != regs::BYTE_TEST_VALUE {
            return Err(InitError::ByteTest(byte_test));
        }

        self.regs.write(Register::HwCfg, regs::HW_CFG_SRST);
        self.poll_until(Register::HwCfg, |v| v & regs::HW_CFG_SRST == 0)
            .ok_or(InitError::ResetTimeout)?;
        self.wait_ready()?;

        self.phy_write(phy::BCR, phy::BCR_RESET)?;
        let mut reset_done = false;
        for _ in 0..POLL_LIMIT {
            if self.phy_read(phy::BCR)? & phy::BCR_RESET == 0 {
                reset_done = true;
                break;
            }
        }
        if !reset_done {
            return Err(InitError::PhyTimeout);
        }
        self.phy_write(phy::BCR, phy::BCR_AUTONEG_ENABLE | phy::BCR_AUTONEG_RESTART)?;

        let addrh = self.mac_read(mac::ADDRH)?;
        let addrl = self.mac_read(mac::ADDRL)?;
        self.mac = mac_address(addrh, addrl);

        self.regs.write(Register::RxCfg, 0);
        self.mac_write(
            mac::MAC_CR,
            mac::MAC_CR_TXEN | mac::MAC_CR_RXEN | mac::MAC_CR_FDPX,
        )?;
        self.regs.write(Register::TxCfg, regs::TX_CFG_TX_ON);
        Ok(self.mac)
    }

    /// The station address read by [`init`](Self::init).
    pub const fn mac_address(&self) -> [u8; 6] {
        self.mac
    }

    /// The frame counters.
    pub const fn stats(&self) -> Stats {
        self.stats
    }

    /// Whether the PHY reports the link up.
    ///
    /// # Errors
    ///
    /// [`InitError::MacTimeout`] or [`InitError::PhyTimeout`] when the MII access times out.
    pub fn link_up(&mut self) -> Result<bool, InitError> {
        Ok(self.phy_read(phy::BSR)? & phy::BSR_LINK_UP != 0)
    }

    /// Routes "a frame arrived" (RX status FIFO level above 0) to the IRQ pin, active high,
    /// push-pull. Acknowledge it with [`acknowledge_rx_interrupt`](crate::acknowledge_rx_interrupt).
    pub fn enable_rx_interrupt(&mut self) {
        self.regs.write(Register::FifoInt, 0x4800_0000); // reset value: RSFL threshold 0
        self.regs.write(Register::IntSts, regs::INT_RSFL);
        self.regs.write(Register::IntEn, regs::INT_RSFL);
        self.regs.write(
            Register::IrqCfg,
            regs::IRQ_CFG_IRQ_EN | regs::IRQ_CFG_IRQ_POL | regs::IRQ_CFG_IRQ_TYPE,
        );
    }

    /// Whether a frame waits in the RX FIFO (good or bad).
    pub fn rx_pending(&mut self) -> bool {
        RxFifoInfo(self.regs.read(Register::RxFifoInf)).status_count() > 0
    }

    /// Copies the next good frame into `buf`, without its FCS, and returns its length.
    ///
    /// Frames the chip flags as bad, frames shorter than an Ethernet header, and frames longer
    /// than `buf` are read out of the FIFO, dropped and counted in [`stats`](Self::stats).
    /// Returns `None` when no good frame is waiting.
    pub fn receive(&mut self, buf: &mut [u8]) -> Option<usize> {
        while self.rx_pending() {
            let status = RxStatus(self.regs.read(Register::RxStatusFifo));
            let len = status.frame_len();
            if status.is_error() {
                self.stats.rx_errors = self.stats.rx_errors.wrapping_add(1);
                self.discard(status.data_words());
                continue;
            }
            if len < MIN_FRAME_LEN || len > buf.len() {
                self.stats.rx_bad_length = self.stats.rx_bad_length.wrapping_add(1);
                self.discard(status.data_words());
                continue;
            }
            // Whole words of frame bytes, then the word holding the frame's tail (if the length
            // is not a multiple of 4), then the words holding only FCS bytes.
            let (whole, tail) = buf[..len].split_at_mut(len - len % 4);
            for chunk in whole.chunks_exact_mut(4) {
                chunk.copy_from_slice(&self.regs.read(Register::RxDataFifo).to_le_bytes());
            }
            let mut used = words_for(whole.len());
            if !tail.is_empty() {
                let word = self.regs.read(Register::RxDataFifo).to_le_bytes();
                tail.copy_from_slice(&word[..tail.len()]);
                used += 1;
            }
            self.discard(status.data_words() - used);
            self.stats.rx_frames = self.stats.rx_frames.wrapping_add(1);
            return Some(len);
        }
        None
    }

    /// Whether the TX FIFO can take a frame of `len` bytes now. Reads (and counts) finished TX
    /// status entries first, so the status FIFO never fills.
    pub fn can_transmit(&mut self, len: usize) -> bool {
        self.drain_tx_status();
        let info = TxFifoInfo(self.regs.read(Register::TxFifoInf));
        info.data_free() >= 8 + 4 * words_for(len)
    }

    /// Sends one frame (without FCS: the chip appends it).
    ///
    /// # Errors
    ///
    /// [`TxError::BadLength`] when the frame is shorter than a header or longer than
    /// [`MAX_FRAME_LEN`]; [`TxError::FifoFull`] when the FIFO has no room for it now.
    pub fn transmit(&mut self, frame: &[u8]) -> Result<(), TxError> {
        if !(MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&frame.len()) {
            return Err(TxError::BadLength(frame.len()));
        }
        if !self.can_transmit(frame.len()) {
            return Err(TxError::FifoFull);
        }
        let cmd = TxCommand::single_segment(frame.len(), self.next_tag);
        self.next_tag = self.next_tag.wrapping_add(1);
        self.regs.write(Register::TxDataFifo, cmd.a);
        self.regs.write(Register::TxDataFifo, cmd.b);
        for chunk in frame.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            self.regs
                .write(Register::TxDataFifo, u32::from_le_bytes(word));
        }
        self.stats.tx_frames = self.stats.tx_frames.wrapping_add(1);
        Ok(())
    }

    /// The register bus, for what the driver does not cover.
    pub fn registers(&mut self) -> &mut R {
        &mut self.regs
    }

    fn drain_tx_status(&mut self) {
        let waiting = TxFifoInfo(self.regs.read(Register::TxFifoInf)).status_count();
        for _ in 0..waiting {
            if TxStatus(self.regs.read(Register::TxStatusFifo)).is_error() {
                self.stats.tx_errors = self.stats.tx_errors.wrapping_add(1);
            }
        }
    }

    /// Pops `words` words off the RX data FIFO. Word by word: the fast-forward register needs
    /// at least 4 words and is not modelled faithfully by every emulator.
    fn discard(&mut self, words: usize) {
        for _ in 0..words {
            self.regs.read(Register::RxDataFifo);
        }
    }

    fn wait_ready(&mut self) -> Result<(), InitError> {
        self.poll_until(Register::PmtCtrl, |v| v & regs::PMT_CTRL_READY != 0)
            .map(drop)
            .ok_or(InitError::NotReady)
    }

    fn poll_until(&mut self, reg: Register, done: impl Fn(u32) -> bool) -> Option<u32> {
        (0..POLL_LIMIT)
            .map(|_| self.regs.read(reg))
            .find(|&v| done(v))
    }

    fn mac_wait(&mut self) -> Result<(), InitError> {
        self.poll_until(Register::MacCsrCmd, |v| !MacCsrCommand::is_busy(v))
            .map(drop)
            .ok_or(InitError::MacTimeout)
    }

    fn mac_read(&mut self, reg: u8) -> Result<u32, InitError> {
        self.mac_wait()?;
        self.regs
            .write(Register::MacCsrCmd, MacCsrCommand::read(reg).0);
        self.mac_wait()?;
        Ok(self.regs.read(Register::MacCsrData))
    }

    fn mac_write(&mut self, reg: u8, value: u32) -> Result<(), InitError> {
        self.mac_wait()?;
        self.regs.write(Register::MacCsrData, value);
        self.regs
            .write(Register::MacCsrCmd, MacCsrCommand::write(reg).0);
        self.mac_wait()
    }

    fn mii_wait(&mut self) -> Result<(), InitError> {
        for _ in 0..POLL_LIMIT {
            if !MiiAccess::is_busy(self.mac_read(mac::MII_ACC)?) {
                return Ok(());
            }
        }
        Err(InitError::PhyTimeout)
    }

    fn phy_read(&mut self, reg: u8) -> Result<u32, InitError> {
        self.mii_wait()?;
        self.mac_write(mac::MII_ACC, MiiAccess::read(phy::ADDRESS, reg).0)?;
        self.mii_wait()?;
        Ok(self.mac_read(mac::MII_DATA)? & 0xffff)
    }

    fn phy_write(&mut self, reg: u8, value: u32) -> Result<(), InitError> {
        self.mii_wait()?;
        self.mac_write(mac::MII_DATA, value & 0xffff)?;
        self.mac_write(mac::MII_ACC, MiiAccess::write(phy::ADDRESS, reg).0)?;
        self.mii_wait()
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::model::ChipModel;

    fn ready_chip() -> Lan9118<ChipModel> {
        let mut nic = Lan9118::new(ChipModel::new([0x52, 0x54, 0x00, 0x12, 0x34, 0x56]));
        nic.init().unwrap();
        nic
    }

    fn frame(len: usize) -> Vec<u8> {
        (0..len).map(|i| i as u8).collect()
    }

    #[test]
    fn init_reads_mac_and_enables_rx_tx() {
        let mut nic = Lan9118::new(ChipModel::new([2, 0, 0, 0xab, 0xcd, 0xef]));
        assert_eq!(nic.init(), Ok([2, 0, 0, 0xab, 0xcd, 0xef]));
        assert_eq!(nic.mac_address(), [2, 0, 0, 0xab, 0xcd, 0xef]);
        let chip = nic.registers();
        assert_eq!(chip.soft_resets, 1);
        assert_eq!(chip.phy_resets, 1);
        assert_eq!(
            chip.mac_cr,
            mac::MAC_CR_TXEN | mac::MAC_CR_RXEN | mac::MAC_CR_FDPX
        );
        assert_eq!(chip.tx_cfg, regs::TX_CFG_TX_ON);
        assert!(nic.link_up().unwrap());
    }

    #[test]
    fn init_fails_on_wrong_byte_test() {
        let mut chip = ChipModel::new([2, 0, 0, 0, 0, 1]);
        chip.byte_test = 0x2143_6587;
        let mut nic = Lan9118::new(chip);
        assert_eq!(nic.init(), Err(InitError::ByteTest(0x2143_6587)));
    }

    #[test]
    fn init_times_out_when_never_ready() {
        let mut chip = ChipModel::new([2, 0, 0, 0, 0, 1]);
        chip.ready = false;
        let mut nic = Lan9118::new(chip);
        assert_eq!(nic.init(), Err(InitError::NotReady));
    }

    #[test]
    fn receive_on_empty_fifo_is_none() {
        let mut nic = ready_chip();
        let mut buf = [0u8; MAX_FRAME_LEN];
        assert_eq!(nic.receive(&mut buf), None);
    }

    #[test]
    fn receive_strips_fcs_for_every_tail_length() {
        let mut nic = ready_chip();
        for len in [60, 61, 62, 63, 64, MAX_FRAME_LEN] {
            let sent = frame(len);
            nic.registers().deliver(&sent, false);
            let mut buf = [0u8; MAX_FRAME_LEN];
            assert_eq!(nic.receive(&mut buf), Some(len), "len {len}");
            assert_eq!(&buf[..len], &sent[..]);
            assert_eq!(
                nic.registers().rx_words_left(),
                0,
                "FCS words left for {len}"
            );
        }
        assert_eq!(nic.stats().rx_frames, 6);
    }

    #[test]
    fn receive_drops_error_frames_and_counts_them() {
        let mut nic = ready_chip();
        nic.registers().deliver(&frame(100), true);
        nic.registers().deliver(&frame(70), false);
        let mut buf = [0u8; MAX_FRAME_LEN];
        assert_eq!(nic.receive(&mut buf), Some(70));
        assert_eq!(&buf[..70], &frame(70)[..]);
        assert_eq!(nic.stats().rx_errors, 1);
        assert_eq!(nic.receive(&mut buf), None);
    }

    #[test]
    fn receive_drops_frames_longer_than_buffer() {
        let mut nic = ready_chip();
        nic.registers().deliver(&frame(200), false);
        nic.registers().deliver(&frame(64), false);
        let mut buf = [0u8; 128];
        assert_eq!(nic.receive(&mut buf), Some(64));
        assert_eq!(nic.stats().rx_bad_length, 1);
        assert_eq!(nic.registers().rx_words_left(), 0);
    }

    #[test]
    fn receive_drops_runts() {
        let mut nic = ready_chip();
        nic.registers().deliver(&frame(10), false);
        let mut buf = [0u8; MAX_FRAME_LEN];
        assert_eq!(nic.receive(&mut buf), None);
        assert_eq!(nic.stats().rx_bad_length, 1);
        assert_eq!(nic.registers().rx_words_left(), 0);
    }

    #[test]
    fn transmit_pushes_commands_and_little_endian_words() {
        let mut nic = ready_chip();
        nic.transmit(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
            .unwrap();
        let chip = nic.registers();
        assert_eq!(
            chip.tx_words,
            vec![
                0x3000 | 15,
                15,
                0x0403_0201,
                0x0807_0605,
                0x0c0b_0a09,
                0x000f_0e0d
            ]
        );
        assert_eq!(chip.sent, vec![(1..=15).collect::<Vec<u8>>()]);
    }

    #[test]
    fn transmit_tags_frames_and_drains_status() {
        let mut nic = ready_chip();
        for _ in 0..3 {
            nic.transmit(&frame(60)).unwrap();
        }
        // Each transmit read the status of the frames before it: one entry is left.
        assert_eq!(nic.registers().tx_status.len(), 1);
        nic.registers().fail_next_tx_status = true;
        assert!(nic.can_transmit(60));
        assert_eq!(nic.registers().tx_status.len(), 0);
        assert_eq!(nic.stats().tx_frames, 3);
        assert_eq!(nic.registers().tags(), vec![0, 1, 2]);
        assert_eq!(nic.stats().tx_errors, 1);
    }

    #[test]
    fn transmit_rejects_bad_lengths() {
        let mut nic = ready_chip();
        assert_eq!(
            nic.transmit(&frame(MAX_FRAME_LEN + 1)),
            Err(TxError::BadLength(MAX_FRAME_LEN + 1))
        );
        assert_eq!(nic.transmit(&frame(13)), Err(TxError::BadLength(13)));
        assert!(nic.registers().tx_words.is_empty());
    }

    #[test]
    fn transmit_when_fifo_full_sends_nothing() {
        let mut nic = ready_chip();
        nic.registers().tx_free = 100;
        assert_eq!(nic.transmit(&frame(200)), Err(TxError::FifoFull));
        assert!(nic.registers().tx_words.is_empty());
    }

    #[test]
    fn rx_interrupt_enable_and_acknowledge() {
        let mut nic = ready_chip();
        nic.enable_rx_interrupt();
        nic.registers().deliver(&frame(60), false);
        assert!(nic.registers().irq_asserted());
        crate::acknowledge_rx_interrupt(nic.registers());
        assert!(!nic.registers().irq_asserted());
    }
}
