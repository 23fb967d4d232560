//! The status LED: a short flash on activity.

use embedded_hal::digital::OutputPin;

/// How long one flash lasts.
pub const FLASH_MS: u64 = 30;

/// Flashes an LED for [`FLASH_MS`] whenever [`flash`](Self::flash) is called: the hook for
/// "served a request" and "swept expired keys". Sans-IO like the rest: it is told the time and
/// answers when it next needs to run.
pub struct StatusLed<P> {
    pin: P,
    off_at: Option<u64>,
}

impl<P: OutputPin> StatusLed<P> {
    /// Takes the pin and turns the LED off.
    pub fn new(mut pin: P) -> Self {
        // An LED pin that fails to switch is not worth stopping the firmware for.
        let _ = pin.set_low();
        Self { pin, off_at: None }
    }

    /// Turns the LED on until `now_ms + FLASH_MS` (extends a flash in progress).
    pub fn flash(&mut self, now_ms: u64) {
        let _ = self.pin.set_high();
        self.off_at = Some(now_ms.saturating_add(FLASH_MS));
    }

    /// Turns the LED off once its flash is over; returns when it next needs to run.
    pub fn poll(&mut self, now_ms: u64) -> Option<u64> {
        match self.off_at {
            Some(at) if now_ms >= at => {
                let _ = self.pin.set_low();
                self.off_at = None;
                None
            }
            pending => pending,
        }
    }
}
