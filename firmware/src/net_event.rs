//! "The network needs the shell": raised by the NIC's interrupt (the LAN9118's handler, or the
//! waker an embassy driver registered), awaited by the shell task.

use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::signal::Signal;

static EVENT: Signal<CriticalSectionRawMutex, ()> = Signal::new();

/// Raises the event (from an interrupt handler, or anywhere): the shell task runs again.
pub fn raise() {
    EVENT.signal(());
}

/// Waits until the event is raised, and lowers it.
pub async fn wait() {
    EVENT.wait().await
}
