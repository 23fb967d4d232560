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
#[cfg(feature = "qemu-mps2-an386")]
mod cmsdk_time;
mod nic;
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
            let mut line = Line::new();
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

/// A short line of text, formatted without allocation.
struct Line {
    buf: [u8; 64],
    len: usize,
}

impl Line {
    const fn new() -> Self {
        Self {
            buf: [0; 64],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `str`s are ever copied in.
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        let dest = self.buf.get_mut(self.len..end).ok_or(core::fmt::Error)?;
        dest.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
