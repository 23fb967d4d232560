//! The simulated Ethernet link: two one-way wires, each a frame queue with optional faults.
//!
//! Faults (loss, duplication, reordering, corruption) are drawn from a seeded RNG per wire, so
//! a run is repeatable. Reordering holds a frame back until the next one has passed (or until
//! the simulation finds the wire otherwise idle). Frames can also be made to land *during* the
//! receiver's next poll: right after its device reports itself empty once, as a frame does
//! that arrives while the receiver is busy serving.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

/// Per-frame fault probabilities of one wire, each in `[0, 1]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// The frame is dropped.
    pub loss: f64,
    /// The frame is delivered twice.
    pub duplicate: f64,
    /// The frame is held back and delivered after the next frame.
    pub reorder: f64,
    /// One byte of the frame is changed (checksums then make the receiver drop it).
    pub corrupt: f64,
}

impl Faults {
    /// No faults: every frame arrives once, in order, intact.
    pub const NONE: Self = Self {
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        corrupt: 0.0,
    };

    /// The same probability `p` for every kind of fault.
    pub const fn all(p: f64) -> Self {
        Self {
            loss: p,
            duplicate: p,
            reorder: p,
            corrupt: p,
        }
    }
}

/// What the faults of one wire did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Frames offered to the wire.
    pub sent: u64,
    /// Frames dropped.
    pub lost: u64,
    /// Frames delivered twice.
    pub duplicated: u64,
    /// Frames delivered after a later one.
    pub reordered: u64,
    /// Frames with a changed byte.
    pub corrupted: u64,
}

/// One direction of the link.
pub(crate) struct Wire {
    frames: VecDeque<Vec<u8>>,
    /// A frame held back to be delivered after the next one.
    held: Option<Vec<u8>>,
    /// Frames that land once the receiver has found the wire empty.
    late: VecDeque<Vec<u8>>,
    faults: Faults,
    rng: SmallRng,
    pub(crate) counts: FaultCounts,
}

impl Wire {
    fn new(seed: u64) -> Self {
        Self {
            frames: VecDeque::new(),
            held: None,
            late: VecDeque::new(),
            faults: Faults::NONE,
            rng: SmallRng::seed_from_u64(seed),
            counts: FaultCounts::default(),
        }
    }

    /// Puts a frame on the wire, through the faults.
    fn send(&mut self, mut frame: Vec<u8>) {
        self.counts.sent += 1;
        let faults = self.faults;
        if faults == Faults::NONE {
            self.frames.push_back(frame);
            return;
        }
        if self.rng.random_bool(faults.loss) {
            self.counts.lost += 1;
            return;
        }
        if !frame.is_empty() && self.rng.random_bool(faults.corrupt) {
            self.counts.corrupted += 1;
            let at = self.rng.random_range(0..frame.len());
            frame[at] ^= self.rng.random_range(1..=255u8);
        }
        let copies = if self.rng.random_bool(faults.duplicate) {
            self.counts.duplicated += 1;
            2
        } else {
            1
        };
        if self.held.is_none() && self.rng.random_bool(faults.reorder) {
            self.counts.reordered += 1;
            self.held = Some(frame);
            return;
        }
        for _ in 0..copies {
            self.frames.push_back(frame.clone());
        }
        if let Some(held) = self.held.take() {
            self.frames.push_back(held);
        }
    }

    /// Delivers a held-back frame now (nothing else came to pass it).
    pub(crate) fn release_held(&mut self) -> bool {
        match self.held.take() {
            Some(frame) => {
                self.frames.push_back(frame);
                true
            }
            None => false,
        }
    }

    /// Whether frames wait to be received now.
    pub(crate) fn has_frames(&self) -> bool {
        !self.frames.is_empty()
    }

    /// Moves every frame on the wire to the late queue.
    pub(crate) fn delay_to_mid_poll(&mut self) {
        self.late.extend(self.frames.drain(..));
    }

    /// Puts a frame on the wire directly, past the faults.
    pub(crate) fn inject(&mut self, frame: Vec<u8>) {
        self.frames.push_back(frame);
    }

    /// The next frame for the receiver. When the wire is empty, late frames land now: the
    /// receiver finds them on its next look.
    fn receive(&mut self) -> Option<Vec<u8>> {
        if let Some(frame) = self.frames.pop_front() {
            return Some(frame);
        }
        if !self.late.is_empty() {
            self.frames.extend(self.late.drain(..));
        }
        None
    }
}

pub(crate) type WireRef = Rc<RefCell<Wire>>;

/// One end of the Ethernet link: a smoltcp [`Device`].
pub struct LinkEnd {
    pub(crate) rx: WireRef,
    pub(crate) tx: WireRef,
}

/// A pair of connected link ends, with no faults. The seed drives the faults set later.
pub fn link(seed: u64) -> (LinkEnd, LinkEnd) {
    let a: WireRef = Rc::new(RefCell::new(Wire::new(seed)));
    let b: WireRef = Rc::new(RefCell::new(Wire::new(seed ^ 0x9e37_79b9_7f4a_7c15)));
    (
        LinkEnd {
            rx: a.clone(),
            tx: b.clone(),
        },
        LinkEnd { rx: b, tx: a },
    )
}

impl LinkEnd {
    /// Sets the faults of the wire this end sends on, drawn from `seed`.
    pub fn set_send_faults(&mut self, faults: Faults, seed: u64) {
        let mut wire = self.tx.borrow_mut();
        wire.faults = faults;
        wire.rng = SmallRng::seed_from_u64(seed);
    }

    /// What the faults of the wire this end sends on did.
    pub fn send_counts(&self) -> FaultCounts {
        self.tx.borrow().counts
    }
}

/// A received frame.
pub struct RxToken(Vec<u8>);
/// Room to send a frame.
pub struct TxToken(WireRef);

impl phy::RxToken for RxToken {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for TxToken {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut frame = vec![0; len];
        let result = f(&mut frame);
        self.0.borrow_mut().send(frame);
        result
    }
}

impl Device for LinkEnd {
    type RxToken<'a> = RxToken;
    type TxToken<'a> = TxToken;

    fn receive(&mut self, _: Instant) -> Option<(RxToken, TxToken)> {
        let frame = self.rx.borrow_mut().receive()?;
        Some((RxToken(frame), TxToken(self.tx.clone())))
    }

    fn transmit(&mut self, _: Instant) -> Option<TxToken> {
        Some(TxToken(self.tx.clone()))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = 1514;
        caps
    }
}
