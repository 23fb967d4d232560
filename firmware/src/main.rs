//! The key-value shell's firmware (see README.md): boards, NICs, time and the main loop around
//! net-shell's server (`app.rs`, the only module that knows net-shell).
//!
//! The main loop feeds the time to the application and sleeps (`WFI`) until the application's
//! next deadline or a NIC event: no busy polling.
#![no_std]
#![no_main]

#[cfg(all(feature = "qemu-mps2-an386", feature = "nucleo-f429zi"))]
compile_error!("select exactly one board feature: `qemu-mps2-an386` or `nucleo-f429zi`, not both");
#[cfg(not(any(feature = "qemu-mps2-an386", feature = "nucleo-f429zi")))]
compile_error!("select one board feature: `qemu-mps2-an386` (default) or `nucleo-f429zi`");

mod app;
mod board;
mod panic;
mod status_led;
mod wake;

use core::fmt::Write as _;

use embassy_time::Instant;
use static_cell::ConstStaticCell;

use crate::status_led::StatusLed;

static APP_STORAGE: ConstStaticCell<app::Storage> = ConstStaticCell::new(app::Storage::new());

#[cortex_m_rt::entry]
fn main() -> ! {
    let board::Board {
        mut nic,
        led,
        app_config,
    } = board::init();
    let mut led = StatusLed::new(led);
    let mut app = app::App::new(app_config, APP_STORAGE.take(), &mut nic, now_ms());
    // A wall clock where the board has one, for absolute expiry (EXPIREAT, PXAT).
    if let Some(unix_ms) = board::unix_time_ms(now_ms) {
        app.set_unix_time(now_ms(), unix_ms);
    }
    let mut announced = None;

    loop {
        let now = now_ms();
        let app_next = app.poll(now, &mut nic);
        // Once listening, and again whenever the address changes (a DHCP lease after the
        // fallback, a new lease).
        if let Some(endpoint) = app.listen_endpoint().filter(|e| Some(*e) != announced) {
            let mut line = heapless::String::<64>::new();
            let _ = write!(line, "net-shell ready on {endpoint}");
            board::report_ready(line.as_str());
            announced = Some(endpoint);
        }
        if app.take_activity() {
            led.flash(now);
        }
        let next = match (app_next, led.poll(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        wake::sleep_until(next.map(Instant::from_millis));
    }
}

fn now_ms() -> u64 {
    Instant::now().as_millis()
}
