//! A software model of the chip for the unit tests: just enough register behaviour to run the
//! driver, with FIFOs laid out as the datasheet describes (FCS in the RX data FIFO, status words
//! with the stored length in bits 29:16, TX command words before the data).

use std::collections::VecDeque;
use std::vec::Vec;

use crate::regs::{self, mac, phy, Register};
use crate::words::{words_for, MacCsrCommand, MiiAccess, TxCommand};
use crate::Registers;

#[derive(Debug)]
pub struct ChipModel {
    pub mac: [u8; 6],
    pub byte_test: u32,
    pub ready: bool,
    pub soft_resets: u32,
    pub phy_resets: u32,
    pub mac_cr: u32,
    pub tx_cfg: u32,
    pub tx_free: u32,
    pub tx_words: Vec<u32>,
    pub sent: Vec<Vec<u8>>,
    pub tx_status: VecDeque<u32>,
    pub fail_next_tx_status: bool,
    mac_data: u32,
    mii_data: u32,
    phy_bcr: u32,
    rx_status: VecDeque<u32>,
    rx_data: VecDeque<u32>,
    tx_pending: Vec<u32>,
    tags: Vec<u16>,
    int_sts: u32,
    int_en: u32,
    irq_cfg: u32,
}

impl ChipModel {
    pub fn new(mac: [u8; 6]) -> Self {
        Self {
            mac,
            byte_test: regs::BYTE_TEST_VALUE,
            ready: true,
            soft_resets: 0,
            phy_resets: 0,
            mac_cr: 0,
            tx_cfg: 0,
            tx_free: 4608,
            tx_words: Vec::new(),
            sent: Vec::new(),
            tx_status: VecDeque::new(),
            fail_next_tx_status: false,
            mac_data: 0,
            mii_data: 0,
            phy_bcr: 0x3000,
            rx_status: VecDeque::new(),
            rx_data: VecDeque::new(),
            tx_pending: Vec::new(),
            tags: Vec::new(),
            int_sts: 0,
            int_en: 0,
            irq_cfg: 0,
        }
    }

    /// A frame arrives from the wire: status word plus frame and FCS bytes, packed little-endian.
    pub fn deliver(&mut self, frame: &[u8], error: bool) {
        let stored = frame.len() + 4;
        let mut bytes = frame.to_vec();
        bytes.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        bytes.resize(4 * words_for(stored), 0);
        self.rx_data.extend(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        self.rx_status
            .push_back(((stored as u32) << 16) | if error { 1 << 15 } else { 0 });
        self.int_sts |= regs::INT_RSFL;
    }

    pub fn rx_words_left(&self) -> usize {
        self.rx_data.len()
    }

    pub fn tags(&self) -> Vec<u16> {
        self.tags.clone()
    }

    pub fn irq_asserted(&self) -> bool {
        self.irq_cfg & regs::IRQ_CFG_IRQ_EN != 0 && self.int_sts & self.int_en != 0
    }

    fn mac_access(&mut self, cmd: u32) {
        let reg = (cmd & 0xff) as u8;
        let read = cmd & (1 << 30) != 0;
        if read {
            self.mac_data = match reg {
                mac::MAC_CR => self.mac_cr,
                mac::ADDRH => u32::from(self.mac[4]) | u32::from(self.mac[5]) << 8,
                mac::ADDRL => {
                    u32::from_le_bytes([self.mac[0], self.mac[1], self.mac[2], self.mac[3]])
                }
                mac::MII_ACC => 0,
                mac::MII_DATA => self.mii_data,
                other => panic!("read of unmodelled MAC register {other}"),
            };
        } else {
            match reg {
                mac::MAC_CR => self.mac_cr = self.mac_data,
                mac::MII_DATA => self.mii_data = self.mac_data & 0xffff,
                mac::MII_ACC => self.mii_access(self.mac_data),
                other => panic!("write of unmodelled MAC register {other}"),
            }
        }
    }

    fn mii_access(&mut self, acc: u32) {
        assert!(MiiAccess::is_busy(acc), "MII access without the busy bit");
        assert_eq!(
            (acc >> 11) & 0x1f,
            u32::from(phy::ADDRESS),
            "wrong PHY address"
        );
        let reg = ((acc >> 6) & 0x1f) as u8;
        if acc & 2 != 0 {
            match reg {
                phy::BCR if self.mii_data & phy::BCR_RESET != 0 => {
                    self.phy_resets += 1;
                    self.phy_bcr = 0x3000;
                }
                phy::BCR => self.phy_bcr = self.mii_data,
                other => panic!("write of unmodelled PHY register {other}"),
            }
        } else {
            self.mii_data = match reg {
                phy::BCR => self.phy_bcr,
                phy::BSR => 0x782d,
                other => panic!("read of unmodelled PHY register {other}"),
            };
        }
    }

    fn tx_push(&mut self, word: u32) {
        self.tx_words.push(word);
        self.tx_pending.push(word);
        let a = self.tx_pending[0];
        assert_eq!(
            a & 0x3000,
            0x3000,
            "only single-segment frames are modelled"
        );
        if self.tx_pending.len() < 2 {
            return;
        }
        let b = self.tx_pending[1];
        let len = (b & 0x7ff) as usize;
        assert_eq!(a & 0x7ff, b & 0x7ff, "buffer size and frame length differ");
        if self.tx_pending.len() < 2 + words_for(len) {
            return;
        }
        let mut frame: Vec<u8> = self.tx_pending[2..]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        frame.truncate(len);
        self.sent.push(frame);
        self.tags.push((b >> 16) as u16);
        self.tx_status.push_back(b & 0xffff_0000);
        self.tx_pending.clear();
    }
}

impl Registers for ChipModel {
    fn read(&mut self, reg: Register) -> u32 {
        match reg {
            Register::RxDataFifo => self.rx_data.pop_front().expect("RX data FIFO underrun"),
            Register::RxStatusFifo => self.rx_status.pop_front().expect("RX status FIFO underrun"),
            Register::TxStatusFifo => {
                let status = self.tx_status.pop_front().expect("TX status FIFO underrun");
                if core::mem::take(&mut self.fail_next_tx_status) {
                    status | 1 << 15
                } else {
                    status
                }
            }
            Register::IdRev => 0x0118_0001,
            Register::IrqCfg => self.irq_cfg,
            Register::IntSts => self.int_sts,
            Register::IntEn => self.int_en,
            Register::ByteTest => self.byte_test,
            Register::HwCfg => 0x0005_0004,
            Register::RxFifoInf => {
                (self.rx_status.len() as u32) << 16 | (4 * self.rx_data.len() as u32)
            }
            Register::TxFifoInf => (self.tx_status.len() as u32) << 16 | self.tx_free,
            Register::PmtCtrl => u32::from(self.ready),
            Register::MacCsrCmd => 0,
            Register::MacCsrData => self.mac_data,
            Register::TxCfg => self.tx_cfg,
            Register::FifoInt | Register::RxCfg | Register::TxDataFifo => 0,
        }
    }

    fn write(&mut self, reg: Register, value: u32) {
        match reg {
            Register::TxDataFifo => self.tx_push(value),
            Register::HwCfg if value & regs::HW_CFG_SRST != 0 => self.soft_resets += 1,
            Register::MacCsrCmd => {
                assert!(
                    MacCsrCommand::is_busy(value),
                    "MAC CSR command without busy bit"
                );
                self.mac_access(value);
            }
            Register::MacCsrData => self.mac_data = value,
            Register::TxCfg => self.tx_cfg = value,
            Register::IntSts => self.int_sts &= !value,
            Register::IntEn => self.int_en = value,
            Register::IrqCfg => self.irq_cfg = value,
            Register::RxCfg | Register::FifoInt | Register::HwCfg => {}
            other => panic!("write to read-only {other:?}"),
        }
    }
}

// Keep the command-word helper honest against the model's parsing.
#[test]
fn model_accepts_driver_command_words() {
    let mut chip = ChipModel::new([0; 6]);
    let cmd = TxCommand::single_segment(14, 9);
    chip.tx_push(cmd.a);
    chip.tx_push(cmd.b);
    for _ in 0..4 {
        chip.tx_push(0);
    }
    assert_eq!(chip.sent.len(), 1);
    assert_eq!(chip.tags(), [9]);
}
