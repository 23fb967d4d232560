//! The key-value shell's firmware (see README.md): boards, NICs, time, and two tasks on
//! `embassy-executor` around net-shell's server (`app.rs`, the only module that knows net-shell).
//!
//! - **shell**: polls the application, then sleeps until its next deadline (an embassy-time
//!   timer, kept in the board's time driver's queue) or a NIC event ([`net_event`]);
//! - **status LED**: flashes on the shell's activity, timed with an embassy-time timer.
//!
//! No busy polling: between events the executor sleeps with `WFI` ([`executor`]).
#![no_std]
#![no_main]

#[cfg(all(feature = "qemu-mps2-an386", feature = "nucleo-f429zi"))]
compile_error!("select exactly one board feature: `qemu-mps2-an386` or `nucleo-f429zi`, not both");
#[cfg(not(any(feature = "qemu-mps2-an386", feature = "nucleo-f429zi")))]
compile_error!("select one board feature: `qemu-mps2-an386` (default) or `nucleo-f429zi`");

mod app;
mod board;
mod executor;
mod net_event;
mod panic;
mod status_led;

use core::fmt::Write as _;

use embassy_time::Instant;
use static_cell::ConstStaticCell;

static APP_STORAGE: ConstStaticCell<app::Storage> = ConstStaticCell::new(app::Storage::new());

#[cortex_m_rt::entry]
fn main() -> ! {
    let board::Board {
        nic,
        led,
        app_config,
    } = board::init();
    executor::run(|spawner| {
        spawner.spawn(defmt::unwrap!(shell(nic, app_config)));
        spawner.spawn(defmt::unwrap!(status_led_task(led)));
    })
}

/// The key-value shell: runs the application whenever the network or its next deadline needs it.
///
/// The NIC comes by reference (the boards keep it in a static): passed by value, it would be
/// held twice in the task's future (an async fn's argument and the local it moves into are not
/// overlapped), 3 KiB each on QEMU.
#[embassy_executor::task]
async fn shell(nic: &'static mut board::Nic, config: app::Config) -> ! {
    let mut app = app::App::new(config, APP_STORAGE.take(), nic, now_ms());
    // A wall clock where the board has one, for absolute expiry (EXPIREAT, PXAT).
    if let Some(unix_ms) = board::unix_time_ms(now_ms) {
        app.set_unix_time(now_ms(), unix_ms);
    }
    let mut announced = None;
    loop {
        let next = app.poll(now_ms(), nic);
        // Once listening, and again whenever the address changes (a DHCP lease after the
        // fallback, a new lease).
        if let Some(endpoint) = app.listen_endpoint().filter(|e| Some(*e) != announced) {
            let mut line = heapless::String::<64>::new();
            let _ = write!(line, "net-shell ready on {endpoint}");
            board::report_ready(line.as_str());
            announced = Some(endpoint);
        }
        if app.take_activity() {
            status_led::flash();
        }
        #[cfg(feature = "sntp")]
        if let Some(unix_ms) = app.take_synced_unix_time(now_ms()) {
            board::keep_unix_time(unix_ms);
        }
        match next {
            // Either way the application is polled again: its deadline, or traffic first.
            Some(at) => {
                let _ =
                    embassy_time::with_deadline(Instant::from_millis(at), net_event::wait()).await;
            }
            None => net_event::wait().await,
        }
    }
}

/// The status LED: flashes on the shell's activity.
#[embassy_executor::task]
async fn status_led_task(led: board::Led) -> ! {
    status_led::run(led).await
}

fn now_ms() -> u64 {
    Instant::now().as_millis()
}
