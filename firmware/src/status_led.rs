//! The status LED: a task that flashes it for [`FLASH_MS`] whenever the shell reports activity
//! (a client connected, a command ran, keys expired).

use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;
use embassy_time::Timer;
use embedded_hal::digital::OutputPin;

/// How long one flash lasts.
pub const FLASH_MS: u64 = 30;

static ACTIVITY: Signal<CriticalSectionRawMutex, ()> = Signal::new();

/// Asks for a flash. Activity during a flash is remembered (once) and makes the next one, so a
/// busy shell keeps the LED blinking.
pub fn flash() {
    ACTIVITY.signal(());
}

/// Flashes `pin` on every [`flash`], forever.
pub async fn run(mut pin: impl OutputPin) -> ! {
    loop {
        // An LED pin that fails to switch is not worth stopping the firmware for.
        let _ = pin.set_low();
        ACTIVITY.wait().await;
        let _ = pin.set_high();
        Timer::after_millis(FLASH_MS).await;
    }
}
