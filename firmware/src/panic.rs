//! The panic handler: report through defmt (and the board's own channel), then stop the board
//! in a way its runner notices (QEMU exits with a failure status; probe-rs sees a fault).

use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    defmt::error!("panic: {}", defmt::Display2Format(info));
    crate::board::halt_after_panic(info)
}
