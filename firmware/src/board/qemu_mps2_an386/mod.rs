//! QEMU `mps2-an386`: Cortex-M4F at 25 MHz, LAN9118 at 0x4020_0000 on IRQ 13, CMSDK APB timers
//! 0 and 1 (time, timer 0 on IRQ 8), FPGA I/O LEDs.
//!
//! Logs: defmt over semihosting stdout (decode with `defmt-print -e ELF`). The ready line and
//! panic messages also go to semihosting stderr as plain text, for host tests without a
//! decoder.

use core::panic::PanicInfo;

use cortex_m::interrupt::InterruptNumber;
use cortex_m::peripheral::NVIC;
use cortex_m_rt::exception;
use embedded_hal::digital::{ErrorType, OutputPin};
use smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use static_cell::StaticCell;

use crate::app::{self, HashKey, IpSetup};
use crate::net_event;

use self::nic::{Lan9118Nic, Mmio};

// `BUILD_HASH_KEY`: 16 random bytes build.rs drew from the build host.
include!(concat!(env!("OUT_DIR"), "/hash_key.rs"));

mod nic;
mod time_driver;

use defmt_semihosting as _;

const LAN9118_BASE: usize = 0x4020_0000;
const LAN9118_IRQ: Irq = Irq(13);
const ALARM_TIMER_IRQ: Irq = Irq(time_driver::ALARM_IRQ);
const FPGAIO_LED: usize = 0x4002_8000;

/// 5 clients, 32 KiB of keys and values, and 8 KiB send buffers, so that pipelined replies of
/// 512-byte values do not wait for ACKs: the emulated board has 4 MiB of RAM.
pub const CAPACITY: app::Capacity = app::Capacity {
    clients: 5,
    store_bytes: 32 * 1024,
    send_buffer: 8 * 1024,
};

/// The board's NIC.
pub type Nic = Lan9118Nic;

static NIC: StaticCell<Nic> = StaticCell::new();
/// The board's status LED.
pub type Led = FpgaLed;

/// What `init` hands to `main`.
pub struct Board {
    /// The LAN9118, in a static: its 3 KiB of frame buffers are never copied through `main`'s
    /// frame, which stays allocated while the executor runs.
    pub nic: &'static mut Nic,
    /// User LED 0 of the FPGA I/O block.
    pub led: FpgaLed,
    /// Static 10.0.2.15/24 via 10.0.2.2: QEMU user networking's guest defaults.
    pub app_config: app::Config,
}

/// Brings the board up: the time driver on CMSDK APB timers 0 and 1 with timer 0's interrupt,
/// LAN9118 with its RX interrupt.
///
/// # Panics
///
/// When called twice, or when the LAN9118 does not come up.
pub fn init() -> Board {
    // Taken only as the guard that `init` runs once.
    let _core = cortex_m::Peripherals::take().expect("init runs once");
    // SAFETY: mps2-an386 maps CMSDK APB timers 0 and 1 at the addresses `start` uses, nothing
    // else in the firmware touches them, and `Peripherals::take` above makes this run once.
    // It unmasks the alarm timer's interrupt.
    unsafe { time_driver::start() };

    // SAFETY: the LAN9118 of mps2-an386 is mapped at LAN9118_BASE, and this is the only
    // `Lan9118Nic` (`Peripherals::take` above guarantees `init` runs once).
    let nic = NIC.uninit().write(unsafe { Lan9118Nic::new(LAN9118_BASE) });
    let mac = match nic.init() {
        Ok(mac) => mac,
        Err(error) => defmt::panic!("LAN9118 init failed: {}", error),
    };
    nic.enable_rx_interrupt();
    // SAFETY: unmasking cannot break a critical section here (none is active); the handler,
    // `DefaultHandler`, is ready.
    unsafe { NVIC::unmask(LAN9118_IRQ) };
    defmt::info!("LAN9118 up, MAC {=[u8]:02x}", mac);

    let seed = u64::from_le_bytes([mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], 0x4d, 0x53]);
    Board {
        nic,
        led: FpgaLed { bit: 0 },
        app_config: app::Config {
            mac,
            ip: IpSetup::Static {
                address: Ipv4Cidr::new(Ipv4Address::new(10, 0, 2, 15), 24),
                gateway: Some(Ipv4Address::new(10, 0, 2, 2)),
            },
            port: 6379,
            random_seed: seed,
            // The emulated board has no RNG: a key drawn when the firmware was built.
            hash_key: HashKey(BUILD_HASH_KEY),
            // QEMU's user networking (slirp) forwards host connections from 10.0.2.2.
            trusted_network: Some(Ipv4Cidr::new(Ipv4Address::new(10, 0, 2, 2), 32)),
        },
    }
}

/// The host's Unix time in milliseconds at `now_ms()`, through semihosting (`SYS_TIME`, which
/// counts whole seconds): read on the first second boundary after boot, so it is right to within
/// a few milliseconds, not one second. Waits up to a second at boot for that boundary.
pub fn unix_time_ms(now_ms: fn() -> u64) -> Option<u64> {
    let first = semihosting::sys::arm_compat::sys_time().ok()?;
    let started = now_ms();
    loop {
        let seconds = semihosting::sys::arm_compat::sys_time().ok()?;
        if seconds != first {
            return Some(seconds as u64 * 1000);
        }
        // SYS_TIME ticks once a second; if the host clock is stuck, give up after two.
        if now_ms().saturating_sub(started) > 2_000 {
            return Some(seconds as u64 * 1000);
        }
    }
}

/// Logs the ready line, and writes it as text to semihosting stderr, where QEMU prints it on
/// its own stderr for whoever started it.
pub fn report_ready(line: &str) {
    defmt::info!("{=str}", line);
    semihosting::eprintln!("{}", line);
}

/// Prints the panic as text to stderr and exits QEMU with status 1.
pub fn halt_after_panic(info: &PanicInfo) -> ! {
    semihosting::eprintln!("firmware panicked: {}", info);
    semihosting::process::exit(1)
}

/// An external interrupt number of this machine.
#[derive(Clone, Copy)]
struct Irq(u16);

// SAFETY: only built from numbers of interrupts mps2-an386 has (`LAN9118_IRQ`, `ALARM_TIMER_IRQ`
// of CMSDK APB timer 0, and the numbers the NVIC itself reports to `DefaultHandler`).
unsafe impl InterruptNumber for Irq {
    fn number(self) -> u16 {
        self.0
    }
}

/// Every interrupt without a handler of its own: there is no device crate for this machine.
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    if irqn == LAN9118_IRQ.0 as i16 {
        // SAFETY: the chip is mapped there; acknowledging writes INT_STS only, which does not
        // disturb the shell task's FIFO accesses.
        let mut regs = unsafe { Mmio::new(LAN9118_BASE) };
        lan9118::acknowledge_rx_interrupt(&mut regs);
        net_event::raise();
    } else if irqn == ALARM_TIMER_IRQ.0 as i16 {
        time_driver::on_alarm_interrupt();
    } else if let Ok(irq) = u16::try_from(irqn) {
        // An interrupt nobody enabled: mask it rather than spin in it.
        NVIC::mask(Irq(irq));
        defmt::warn!("unexpected interrupt {=u16} masked", irq);
    } else {
        defmt::panic!("unexpected exception {=i16}", irqn);
    }
}

/// One LED of the FPGA I/O block (`LED0` register, one bit per LED).
pub struct FpgaLed {
    bit: u8,
}

impl FpgaLed {
    fn set(&mut self, on: bool) {
        let reg = FPGAIO_LED as *mut u32;
        // SAFETY: LED0 of mps2-an386's FPGA I/O block is a 32-bit register at FPGAIO_LED, and
        // this is the only code that touches it (the LEDs are read-modify-written here only).
        unsafe {
            let value = reg.read_volatile();
            let mask = 1 << self.bit;
            reg.write_volatile(if on { value | mask } else { value & !mask });
        }
    }
}

impl ErrorType for FpgaLed {
    type Error = core::convert::Infallible;
}

impl OutputPin for FpgaLed {
    fn set_low(&mut self) -> Result<(), Self::Error> {
        self.set(false);
        Ok(())
    }

    fn set_high(&mut self) -> Result<(), Self::Error> {
        self.set(true);
        Ok(())
    }
}
