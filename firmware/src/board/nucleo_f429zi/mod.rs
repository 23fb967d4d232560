//! ST NUCLEO-F429ZI: STM32F429ZI at 168 MHz from the ST-LINK's 8 MHz clock, on-chip Ethernet
//! MAC with the LAN8742A PHY over RMII, user LED LD2 (blue, PB7).
//!
//! Logs: defmt over RTT (`probe-rs run` prints them). Time: our tickless driver on TIM2
//! (`time_driver.rs`). Wall clock (the `sntp` feature): SNTP, kept in the RTC across resets
//! (`wall_clock.rs`).

use core::panic::PanicInfo;

use embassy_stm32::eth::{self, Ethernet, GenericPhy, PacketQueue, Sma};
use embassy_stm32::gpio::{Level, Output, Speed};
use embassy_stm32::peripherals::{ETH, ETH_SMA, RNG};
use embassy_stm32::rcc::{
    AHBPrescaler, APBPrescaler, Hse, HseMode, Pll, PllMul, PllPDiv, PllPreDiv, PllQDiv, PllSource,
    Sysclk,
};
use embassy_stm32::rng::{self, Rng};
use embassy_stm32::time::Hertz;
use embassy_stm32::{bind_interrupts, uid};
use smoltcp::wire::{Ipv4Address, Ipv4Cidr};
use static_cell::{ConstStaticCell, StaticCell};

use crate::app::{self, HashKey, IpSetup};

use self::nic::DriverDevice;

mod nic;
mod time_driver;
#[cfg(feature = "sntp")]
mod wall_clock;

use defmt_rtt as _;

bind_interrupts!(struct Irqs {
    ETH => eth::InterruptHandler;
    HASH_RNG => rng::InterruptHandler<RNG>;
});

/// 3 clients, 8 KiB of keys and values, and send buffers of one largest reply plus 448 bytes:
/// with 2 KiB values each client's buffers take 6,016 bytes, and the static RAM target is 64 KiB.
pub const CAPACITY: app::Capacity = app::Capacity {
    clients: 3,
    store_bytes: 8 * 1024,
    send_buffer: 2752,
};

/// DMA descriptors and buffers: 4 frames each way (about 12 KiB).
static PACKETS: ConstStaticCell<PacketQueue<4, 4>> = ConstStaticCell::new(PacketQueue::new());

/// The board's NIC.
pub type Nic = DriverDevice<Ethernet<'static, ETH, GenericPhy<Sma<'static, ETH_SMA>>>>;

static NIC: StaticCell<Nic> = StaticCell::new();

/// The board's status LED.
pub type Led = Output<'static>;

/// What `init` hands to `main`.
pub struct Board {
    /// The Ethernet MAC and PHY, in a static (as on every board: `main`'s frame stays
    /// allocated while the executor runs).
    pub nic: &'static mut Nic,
    /// LD2, the blue user LED.
    pub led: Led,
    /// DHCPv4, falling back to a static address after 10 s.
    pub app_config: app::Config,
}

/// Brings the board up: clocks, time driver, Ethernet, LED.
///
/// # Panics
///
/// When called twice, or when the PHY does not answer on the MDIO bus.
pub fn init() -> Board {
    let mut config = embassy_stm32::Config::default();
    {
        let rcc = &mut config.rcc;
        // The ST-LINK feeds an 8 MHz clock to OSC_IN (HSE bypass). 8 / 4 * 168 = 336 MHz VCO:
        // /2 for a 168 MHz core, /7 for the 48 MHz the RNG needs.
        rcc.hse = Some(Hse {
            freq: Hertz(8_000_000),
            mode: HseMode::Bypass,
        });
        rcc.pll_src = PllSource::HSE;
        rcc.pll = Some(Pll {
            prediv: PllPreDiv::DIV4,
            mul: PllMul::MUL168,
            divp: Some(PllPDiv::DIV2),
            divq: Some(PllQDiv::DIV7),
            divr: None,
        });
        rcc.sys = Sysclk::PLL1_P;
        rcc.ahb_pre = AHBPrescaler::DIV1;
        rcc.apb1_pre = APBPrescaler::DIV4;
        rcc.apb2_pre = APBPrescaler::DIV2;
        // The RTC runs from the 32.768 kHz crystal X2 (LSE); embassy keeps the backup domain,
        // and the time in it, across resets while this stays the same.
        #[cfg(feature = "sntp")]
        {
            rcc.ls = embassy_stm32::rcc::LsConfig::default_lse();
        }
    }
    let p = embassy_stm32::init(config);
    time_driver::start(p.TIM2);
    #[cfg(feature = "sntp")]
    wall_clock::start(p.RTC);

    let mut rng = Rng::new(p.RNG, Irqs);
    let random_seed = rng.next_u64();
    let mut hash_key = HashKey::default();
    hash_key.0[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    hash_key.0[8..].copy_from_slice(&rng.next_u64().to_le_bytes());

    let mac = mac_address(uid::uid());
    let ethernet = Ethernet::new(
        PACKETS.take(),
        p.ETH,
        Irqs,
        p.PA1,  // REF_CLK
        p.PA7,  // CRS_DV
        p.PC4,  // RXD0
        p.PC5,  // RXD1
        p.PG13, // TXD0
        p.PB13, // TXD1
        p.PG11, // TX_EN
        mac,
        p.ETH_SMA,
        p.PA2, // MDIO
        p.PC1, // MDC
    );
    defmt::info!("Ethernet up, MAC {=[u8]:02x}", mac);

    Board {
        nic: NIC.init(DriverDevice::new(ethernet)),
        led: Output::new(p.PB7, Level::Low, Speed::Low),
        app_config: app::Config {
            mac,
            ip: IpSetup::Dhcp {
                fallback: Some((
                    Ipv4Cidr::new(Ipv4Address::new(192, 168, 1, 79), 24),
                    Some(Ipv4Address::new(192, 168, 1, 1)),
                )),
                fallback_after_ms: 10_000,
            },
            port: 6379,
            random_seed,
            hash_key,
            // Nobody: build with NET_SHELL_REQUIREPASS or NET_SHELL_TRUSTED_NETWORK.
            trusted_network: None,
        },
    }
}

/// A locally administered, unicast station address derived from the chip's unique ID.
fn mac_address(uid: [u8; 12]) -> [u8; 6] {
    let mut mac = [0x02, 0, 0, 0, 0, 0];
    for (i, byte) in uid.iter().enumerate() {
        mac[1 + i % 5] ^= byte;
    }
    mac
}

/// The wall clock at boot: with the `sntp` feature, the RTC's time if an earlier sync set it
/// (SNTP then sets the shell's clock again); without, none, and absolute expiry answers that
/// it needs one.
pub fn unix_time_ms(_now_ms: fn() -> u64) -> Option<u64> {
    #[cfg(feature = "sntp")]
    return wall_clock::unix_time_ms();
    #[cfg(not(feature = "sntp"))]
    None
}

/// Keeps the Unix time an SNTP sync gave (now, in milliseconds) in the RTC, for the next boot.
#[cfg(feature = "sntp")]
pub fn keep_unix_time(unix_ms: u64) {
    wall_clock::set_unix_time_ms(unix_ms);
}

/// Logs the ready line (probe-rs prints it).
pub fn report_ready(line: &str) {
    defmt::info!("{=str}", line);
}

/// Faults, so probe-rs stops and reports (the message went out through defmt already).
pub fn halt_after_panic(_: &PanicInfo) -> ! {
    cortex_m::asm::udf()
}
