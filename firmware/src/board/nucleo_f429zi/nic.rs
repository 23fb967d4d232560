//! An `embassy_net_driver::Driver` as a `smoltcp::phy::Device`.
//!
//! This is the only file that knows both interfaces. embassy drivers are asynchronous: when
//! they have no frame (or no TX room) they register the task's waker and wake it from their
//! interrupt. Here the waker raises the shell task's NIC event ([`crate::net_event`]), so a
//! driver event wakes the shell task and the application is polled again.

use core::ptr;
use core::task::{Context, RawWaker, RawWakerVTable, Waker};

use embassy_net_driver::{Driver, HardwareAddress};
use smoltcp::phy::{self, Checksum, ChecksumCapabilities, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use crate::net_event;

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake_by_ref, wake_by_ref, drop_waker);

fn clone(_: *const ()) -> RawWaker {
    RawWaker::new(ptr::null(), &VTABLE)
}

fn wake_by_ref(_: *const ()) {
    net_event::raise();
}

fn drop_waker(_: *const ()) {}

// SAFETY: every function of VTABLE ignores the data pointer (so a null pointer is fine), clone
// returns a waker with the same vtable, and wake only raises the shell's NIC event, which takes a
// critical section and is sound from any context, interrupt handlers included.
static WAKER: Waker = unsafe { Waker::from_raw(RawWaker::new(ptr::null(), &VTABLE)) };

/// The waker the driver registers: it raises the shell task's NIC event.
fn waker() -> &'static Waker {
    &WAKER
}

/// A driver, wrapped.
pub struct DriverDevice<D> {
    driver: D,
}

impl<D: Driver> DriverDevice<D> {
    /// Wraps `driver`.
    pub fn new(driver: D) -> Self {
        Self { driver }
    }
}

impl<D: Driver> Device for DriverDevice<D> {
    type RxToken<'a>
        = RxToken<D::RxToken<'a>>
    where
        Self: 'a;
    type TxToken<'a>
        = TxToken<D::TxToken<'a>>
    where
        Self: 'a;

    fn receive(&mut self, _: Instant) -> Option<(Self::RxToken<'_>, Self::TxToken<'_>)> {
        let mut cx = Context::from_waker(waker());
        self.driver
            .receive(&mut cx)
            .map(|(rx, tx)| (RxToken(rx), TxToken(tx)))
    }

    fn transmit(&mut self, _: Instant) -> Option<Self::TxToken<'_>> {
        let mut cx = Context::from_waker(waker());
        self.driver.transmit(&mut cx).map(TxToken)
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let theirs = self.driver.capabilities();
        let mut caps = DeviceCapabilities::default();
        caps.medium = match self.driver.hardware_address() {
            HardwareAddress::Ethernet(_) => Medium::Ethernet,
            // The firmware builds smoltcp for Ethernet only.
            _ => panic!("embassy driver with a non-Ethernet medium"),
        };
        caps.max_transmission_unit = theirs.max_transmission_unit;
        caps.max_burst_size = theirs.max_burst_size;
        caps.checksum = checksums(&theirs.checksum);
        caps
    }
}

fn checksum(theirs: embassy_net_driver::Checksum) -> Checksum {
    match theirs {
        embassy_net_driver::Checksum::Both => Checksum::Both,
        embassy_net_driver::Checksum::Tx => Checksum::Tx,
        embassy_net_driver::Checksum::Rx => Checksum::Rx,
        embassy_net_driver::Checksum::None => Checksum::None,
    }
}

fn checksums(theirs: &embassy_net_driver::ChecksumCapabilities) -> ChecksumCapabilities {
    let mut ours = ChecksumCapabilities::default();
    ours.ipv4 = checksum(theirs.ipv4);
    ours.tcp = checksum(theirs.tcp);
    ours.udp = checksum(theirs.udp);
    ours.icmpv4 = checksum(theirs.icmpv4);
    ours
}

/// A received frame, still in the driver's buffer.
pub struct RxToken<T>(T);

impl<T: embassy_net_driver::RxToken> phy::RxToken for RxToken<T> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        self.0.consume(|frame| f(frame))
    }
}

/// Room for one frame in the driver's buffer.
pub struct TxToken<T>(T);

impl<T: embassy_net_driver::TxToken> phy::TxToken for TxToken<T> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        self.0.consume(len, f)
    }
}
