//! The client sockets, in shards of [`SHARD`] socket sets, so that no step of a poll walks every
//! socket.
//!
//! smoltcp walks the whole socket set it is given: to find the socket a segment is for, to
//! send what sockets have queued, and to say when it next needs a poll. Over one set of 10,000
//! sockets that is most of the cost of every request. Split into sets of 64, each step walks
//! one shard: a frame goes to the shard of the slot it is for (the server looks at each frame
//! first, and indexes peers by endpoint), or of a slot that listens (a SYN); egress and the
//! next poll time look only at shards that had traffic or have a smoltcp deadline due.
//! Everything else (ARP, ICMP, DHCP, segments for no slot) goes to a control set with the DHCP
//! socket, where smoltcp answers it as it would with every socket present (a reset for a
//! segment no socket takes).

use smoltcp::iface::{Interface, PollIngressSingleResult, SocketHandle, SocketSet, SocketStorage};
use smoltcp::phy::Device;
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use timer_core::Tick;
#[cfg(feature = "alloc")]
use timer_core::{HeapSlot, TimerHeapOn, TimerId, TimerQueue};

use crate::memory::Memory;

/// Client sockets per shard.
pub(crate) const SHARD: usize = 16;

/// Most shards without the `alloc` feature (boards): 256 client slots.
#[cfg(not(feature = "alloc"))]
const MAX_SHARDS: usize = 4;

#[cfg(feature = "alloc")]
type ShardList<'a> = alloc::vec::Vec<Shard<'a>>;
#[cfg(not(feature = "alloc"))]
type ShardList<'a> = heapless::Vec<Shard<'a>, MAX_SHARDS>;

/// Each shard's next smoltcp deadline. With the `alloc` feature (a host, up to thousands of
/// shards), a timer-core `TimerHeap` with one timer per shard, so a poll finds the due shards
/// without a walk; without it (a board, at most [`MAX_SHARDS`]), an array scanned in full,
/// which costs less than a queue there, in time and in flash.
#[cfg(feature = "alloc")]
struct Deadlines {
    queue: TimerHeapOn<u16, alloc::vec::Vec<HeapSlot<u16>>>,
    timers: alloc::vec::Vec<Option<TimerId>>,
}

#[cfg(feature = "alloc")]
impl Deadlines {
    fn new(shards: usize) -> Self {
        Self {
            queue: TimerHeapOn::with_storage((0..shards).map(|_| HeapSlot::new()).collect()),
            timers: alloc::vec![None; shards],
        }
    }

    /// Shard `shard` next needs a poll at `at` (`None`: only on traffic).
    fn set(&mut self, shard: usize, at: Option<Tick>) {
        let Some(timer) = self.timers.get_mut(shard) else {
            return;
        };
        *timer = super::timers::rearm(&mut self.queue, *timer, at, shard as u16);
    }

    /// A shard whose deadline is `<= now`, taken off.
    fn pop_due(&mut self, now: Tick) -> Option<usize> {
        let expired = self.queue.pop_expired(now)?;
        let shard = usize::from(expired.value);
        if let Some(timer) = self.timers.get_mut(shard) {
            *timer = None;
        }
        Some(shard)
    }

    fn next(&self) -> Option<Tick> {
        self.queue.next_deadline()
    }
}

#[cfg(not(feature = "alloc"))]
struct Deadlines([Option<Tick>; MAX_SHARDS]);

#[cfg(not(feature = "alloc"))]
impl Deadlines {
    fn new(_shards: usize) -> Self {
        Self([None; MAX_SHARDS])
    }

    fn set(&mut self, shard: usize, at: Option<Tick>) {
        if let Some(deadline) = self.0.get_mut(shard) {
            *deadline = at;
        }
    }

    fn pop_due(&mut self, now: Tick) -> Option<usize> {
        let shard = self
            .0
            .iter()
            .position(|at| at.is_some_and(|at| at <= now))?;
        self.0[shard] = None;
        Some(shard)
    }

    fn next(&self) -> Option<Tick> {
        self.0.iter().flatten().min().copied()
    }
}

/// "No shard", ending the list of touched shards.
const NO_SHARD: u16 = u16::MAX;

/// One shard: a socket set and what the server knows of it without walking it.
pub(super) struct Shard<'a> {
    pub(super) sockets: SocketSet<'a>,
    /// Client slots in it.
    size: usize,
    /// Something happened in it this poll: send what it has queued. (It is then on the
    /// list of touched shards.)
    touched: bool,
    /// The next shard on the list of touched shards.
    next_touched: u16,
    /// Its sockets listening, as last counted.
    pub(super) listening: usize,
}

/// The client sockets in shards, and the control set.
pub(super) struct Shards<'a> {
    shards: ShardList<'a>,
    /// Shards touched in this poll, first to last.
    touched_first: u16,
    touched_last: u16,
    /// Each shard's next smoltcp deadline (as of its last egress).
    due: Deadlines,
    pub(super) control: SocketSet<'a>,
    /// A frame went to the control set (an ARP reply, say): a shard waiting on a neighbour may
    /// be able to send now, before the time it last gave.
    control_traffic: bool,
    /// Sockets in the sets handed to smoltcp so far (what its walks cost).
    visits: u64,
}

/// Shards needed for `clients` client slots.
pub(super) const fn count_for(clients: usize) -> usize {
    clients.div_ceil(SHARD)
}

/// The most client slots: slots are numbered in a `u16`, one of whose values means "none";
/// without the `alloc` feature (boards), the shard list is a fixed array.
#[cfg(feature = "alloc")]
pub(super) const MOST_CLIENTS: usize = u16::MAX as usize - 1;
#[cfg(not(feature = "alloc"))]
pub(super) const MOST_CLIENTS: usize = MAX_SHARDS * SHARD;

impl<'a> Shards<'a> {
    /// Splits `storage` into the control set and shards of [`SHARD`] client slots: lent
    /// storage has one entry per client slot, then the control set's; owned storage (which
    /// grows) has the control set's only, and each shard's set starts empty and grows as its
    /// slots open.
    pub(super) fn new(mut storage: Memory<'a, SocketStorage<'a>>, clients: usize) -> Self {
        let lent = if storage.grows() { 0 } else { clients };
        let control = storage.split_off_back(storage.len().saturating_sub(lent));
        let mut shards = ShardList::new();
        // From the back, so that owned storage moves each entry once.
        for shard in (0..count_for(clients)).rev() {
            let size = clients.min((shard + 1) * SHARD) - shard * SHARD;
            let part = storage.split_off_back(size);
            #[allow(
                clippy::let_unit_value,
                reason = "a `Vec` with `alloc`, else a `heapless::Vec`"
            )]
            let _ = shards.push(Shard {
                sockets: SocketSet::new(part.into_managed()),
                size,
                touched: false,
                next_touched: NO_SHARD,
                listening: 0,
            });
        }
        shards.reverse();
        Self {
            shards,
            touched_first: NO_SHARD,
            touched_last: NO_SHARD,
            due: Deadlines::new(count_for(clients)),
            control: SocketSet::new(control.into_managed()),
            control_traffic: false,
            visits: 0,
        }
    }

    /// The shard of client slot `index`.
    pub(super) fn of(&mut self, index: usize) -> &mut Shard<'a> {
        let shard = index / SHARD;
        &mut self.shards[shard]
    }

    /// Puts shard `shard` on the list of shards to send from in this poll.
    pub(super) fn touch(&mut self, shard: usize) {
        let Some(entry) = self.shards.get_mut(shard) else {
            return;
        };
        if core::mem::replace(&mut entry.touched, true) {
            return;
        }
        entry.next_touched = NO_SHARD;
        let number = shard as u16;
        match self.shards.get_mut(usize::from(self.touched_last)) {
            Some(last) => last.next_touched = number,
            None => self.touched_first = number,
        }
        self.touched_last = number;
    }

    /// Takes the first shard off the list of touched shards.
    fn pop_touched(&mut self) -> Option<usize> {
        let shard = usize::from(self.touched_first);
        let entry = self.shards.get_mut(shard)?;
        entry.touched = false;
        self.touched_first = core::mem::replace(&mut entry.next_touched, NO_SHARD);
        if self.touched_first == NO_SHARD {
            self.touched_last = NO_SHARD;
        }
        Some(shard)
    }

    /// The shard with this number.
    pub(super) fn get_mut(&mut self, shard: usize) -> Option<&mut Shard<'a>> {
        self.shards.get_mut(shard)
    }

    /// Client slot `index`'s socket.
    pub(super) fn tcp(&self, index: usize, handle: SocketHandle) -> &tcp::Socket<'a> {
        self.shards[index / SHARD].sockets.get(handle)
    }

    /// Client slot `index`'s socket, to change.
    pub(super) fn tcp_mut(&mut self, index: usize, handle: SocketHandle) -> &mut tcp::Socket<'a> {
        self.touch(index / SHARD);
        self.shards[index / SHARD].sockets.get_mut(handle)
    }

    /// Takes in one frame from `device` with the sockets of shard `target` (the control set
    /// for `None`: a frame no client slot takes).
    pub(super) fn ingress<D: Device + ?Sized>(
        &mut self,
        iface: &mut Interface,
        at: Instant,
        device: &mut D,
        target: Option<usize>,
    ) -> PollIngressSingleResult {
        if let Some(shard) = target {
            self.touch(shard);
        }
        match target.and_then(|shard| self.shards.get_mut(shard)) {
            Some(shard) => {
                self.visits += shard.size as u64;
                iface.poll_ingress_single(at, device, &mut shard.sockets)
            }
            None => {
                self.control_traffic = true;
                self.visits += 1;
                iface.poll_ingress_single(at, device, &mut self.control)
            }
        }
    }

    /// Sends what shard `shard` has queued, now.
    pub(super) fn egress_shard<D: Device + ?Sized>(
        &mut self,
        iface: &mut Interface,
        at: Instant,
        device: &mut D,
        shard: usize,
    ) {
        if let Some(shard) = self.shards.get_mut(shard) {
            self.visits += shard.size as u64;
            iface.poll_egress(at, device, &mut shard.sockets);
        }
    }

    /// Sockets in the sets handed to smoltcp so far: what its walks over them cost.
    pub(super) fn visits(&self) -> u64 {
        self.visits
    }

    /// Sends what the control set and every touched or due shard have queued (after control
    /// traffic, every shard waiting for anything), and notes when each next needs a poll.
    /// The work is in proportion to those shards, not to all of them.
    pub(super) fn egress<D: Device + ?Sized>(
        &mut self,
        iface: &mut Interface,
        now: Tick,
        at: Instant,
        device: &mut D,
    ) {
        iface.poll_egress(at, device, &mut self.control);
        self.visits += 1;
        // A neighbour may have answered: anything waiting may go now (rare: ARP, ICMP, DHCP).
        let everything_waiting = if core::mem::take(&mut self.control_traffic) {
            Tick::MAX
        } else {
            now
        };
        while let Some(shard) = self.due.pop_due(everything_waiting) {
            self.touch(shard);
        }
        while let Some(shard) = self.pop_touched() {
            let entry = &mut self.shards[shard];
            self.visits += 2 * entry.size as u64;
            iface.poll_egress(at, device, &mut entry.sockets);
            let next = iface
                .poll_at(at, &entry.sockets)
                .map(|due| due.total_millis().max(0) as Tick);
            self.due.set(shard, next);
        }
    }

    /// When smoltcp next needs a poll: the control set's time, or the earliest shard's (as
    /// of its last egress).
    pub(super) fn poll_at(&mut self, iface: &mut Interface, at: Instant) -> Option<Tick> {
        self.visits += 1;
        let control = iface
            .poll_at(at, &self.control)
            .map(|due| due.total_millis().max(0) as Tick);
        [control, self.due.next()].into_iter().flatten().min()
    }

    /// Sockets listening, as last counted in each shard.
    pub(super) fn listening(&self) -> usize {
        self.shards.iter().map(|shard| shard.listening).sum()
    }

    /// No socket listens any more (shutdown).
    pub(super) fn clear_listening(&mut self) {
        for shard in self.shards.iter_mut() {
            shard.listening = 0;
        }
    }

    /// A shard with a socket listening, as last counted, looking from `from` on.
    pub(super) fn listening_from(&self, from: usize) -> Option<usize> {
        let count = self.shards.len();
        (0..count)
            .map(|i| (from + i) % count)
            .find(|&k| self.shards[k].listening > 0)
    }
}
