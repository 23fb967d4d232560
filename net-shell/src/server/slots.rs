//! The memory a [`Server`](super::Server) runs over: lent by a board from its `static`s, or
//! allocated for a client count chosen at run time.

use smoltcp::iface::SocketStorage;
use timer_core::TimeoutSlot;

use super::connection::Connection;
use super::endpoints::NO_SLOT;
use super::setup::{BufferSizes, SetupError};
use super::shards;
use crate::memory::{Bytes, Memory};

/// One client's slot in the connection table (opaque): its socket, partial command and state.
pub type ClientSlot<'a> = Connection<'a>;

/// Everything a [`Server`](super::Server) keeps per client: smoltcp's socket slots, the
/// connection table, the two timer queues' slots, and the sockets' and commands' buffers.
///
/// The number of client slots is fixed here: all but one serve (the last refuses a client past
/// `maxclients` with Redis' error). Lent memory (a board's) has every slot's socket listening
/// from the start. Allocated memory (a host's) opens slots in shards of 16 as clients arrive,
/// so an idle server pays for a few listening sockets, not for `maxclients` of them.
/// The key store has its own memory ([`StoreMemory`](crate::store::StoreMemory)).
pub struct ServerMemory<'a> {
    /// Client slots: the connection table's length, or (allocated) its capacity.
    pub(super) slots: usize,
    pub(super) sockets: Memory<'a, SocketStorage<'a>>,
    pub(super) clients: Memory<'a, ClientSlot<'a>>,
    pub(super) timers: Memory<'a, TimeoutSlot<u16>>,
    pub(super) write_timers: Memory<'a, TimeoutSlot<u16>>,
    pub(super) bytes: Bytes<'a>,
    /// The SNTP client's buffers, if lent: SNTP runs only with them.
    #[cfg(feature = "sntp")]
    pub(super) sntp: Option<&'a mut super::SntpMemory>,
    /// The field timers' fixed memory, if lent.
    #[cfg(feature = "hashes")]
    pub(super) field_timers: Option<crate::command::FieldTimerMemory<'a>>,
}

impl<'a> ServerMemory<'a> {
    /// The most clients a server has slots for: slots are numbered in a `u16`, one of whose
    /// values means "none". Without the `alloc` feature (boards), at most 256.
    pub const MAX_CLIENTS: usize = shards::MOST_CLIENTS;

    /// Memory lent by the caller, for `clients.len()` client slots: `sockets` needs one more
    /// entry than `clients` (for the DHCP socket), `timers` and `write_timers` one per client,
    /// and `buffer` [`BufferSizes::bytes_needed`]`(clients.len())` bytes, all of which
    /// [`Server::new`](super::Server::new) checks.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::{BufferSizes, ClientSlot, ServerMemory};
    /// use net_shell::smoltcp::iface::SocketStorage;
    /// use net_shell::timer_core::TimeoutSlot;
    ///
    /// const CLIENTS: usize = 4;
    /// let sizes = BufferSizes { rx: 1024, tx: 2048, input: 1024 };
    /// let mut sockets = [SocketStorage::EMPTY; CLIENTS + 1];
    /// let mut clients: [ClientSlot; CLIENTS] = core::array::from_fn(|_| ClientSlot::default());
    /// let mut timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut write_timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut buffer = vec![0u8; sizes.bytes_needed(CLIENTS)];
    /// let memory = ServerMemory::lent(
    ///     &mut sockets,
    ///     &mut clients,
    ///     &mut timers,
    ///     &mut write_timers,
    ///     &mut buffer,
    /// );
    /// assert_eq!(memory.clients(), 4);
    /// ```
    pub fn lent(
        sockets: &'a mut [SocketStorage<'a>],
        clients: &'a mut [ClientSlot<'a>],
        timers: &'a mut [TimeoutSlot<u16>],
        write_timers: &'a mut [TimeoutSlot<u16>],
        buffer: &'a mut [u8],
    ) -> Self {
        Self {
            slots: clients.len(),
            sockets: Memory::from(sockets),
            clients: Memory::from(clients),
            timers: Memory::from(timers),
            write_timers: Memory::from(write_timers),
            bytes: Bytes::lent(buffer),
            #[cfg(feature = "sntp")]
            sntp: None,
            #[cfg(feature = "hashes")]
            field_timers: None,
        }
    }

    /// Lends the hash field timers their fixed memory (`hashes` feature): at most `N` hashes
    /// have field deadlines at once, and a command that would give one more hash a deadline
    /// is refused (`-ERR no field timer free: …`) before it changes anything. `KEY_LEN` must be
    /// at least the store's longest key ([`Server::new`](super::Server::new) checks it).
    /// Without this, field timers grow in allocated memory with the `alloc` feature, and there
    /// are none without it (every field deadline is refused).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::command::FieldTimerArrays;
    /// use net_shell::{BufferSizes, ClientSlot, ServerMemory};
    /// use net_shell::smoltcp::iface::SocketStorage;
    /// use net_shell::timer_core::TimeoutSlot;
    ///
    /// const CLIENTS: usize = 2;
    /// let sizes = BufferSizes { rx: 1024, tx: 2048, input: 1024 };
    /// let mut sockets = [SocketStorage::EMPTY; CLIENTS + 1];
    /// let mut clients: [ClientSlot; CLIENTS] = core::array::from_fn(|_| ClientSlot::default());
    /// let mut timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut write_timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut buffer = vec![0u8; sizes.bytes_needed(CLIENTS)];
    /// let mut field_timers: FieldTimerArrays<16, 64> = FieldTimerArrays::new();
    /// let memory = ServerMemory::lent(
    ///     &mut sockets,
    ///     &mut clients,
    ///     &mut timers,
    ///     &mut write_timers,
    ///     &mut buffer,
    /// )
    /// .with_field_timers(&mut field_timers);
    /// assert_eq!(memory.clients(), 2);
    /// ```
    #[cfg(feature = "hashes")]
    pub fn with_field_timers<const N: usize, const KEY_LEN: usize>(
        mut self,
        memory: &'a mut crate::command::FieldTimerArrays<N, KEY_LEN>,
    ) -> Self {
        self.field_timers = Some(memory.lend());
        self
    }

    /// Lends the SNTP client its memory (`sntp` feature), so the server sets its wall clock by
    /// SNTP: `sockets` must then have one more entry (two more than clients).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::{BufferSizes, ClientSlot, ServerMemory, SntpMemory};
    /// use net_shell::smoltcp::iface::SocketStorage;
    /// use net_shell::timer_core::TimeoutSlot;
    ///
    /// const CLIENTS: usize = 2;
    /// let sizes = BufferSizes { rx: 1024, tx: 2048, input: 1024 };
    /// let mut sockets = [SocketStorage::EMPTY; CLIENTS + 2];
    /// let mut clients: [ClientSlot; CLIENTS] = core::array::from_fn(|_| ClientSlot::default());
    /// let mut timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut write_timers = [const { TimeoutSlot::new() }; CLIENTS];
    /// let mut buffer = vec![0u8; sizes.bytes_needed(CLIENTS)];
    /// let mut sntp = SntpMemory::new();
    /// let memory = ServerMemory::lent(
    ///     &mut sockets,
    ///     &mut clients,
    ///     &mut timers,
    ///     &mut write_timers,
    ///     &mut buffer,
    /// )
    /// .with_sntp(&mut sntp);
    /// assert_eq!(memory.clients(), 2);
    /// ```
    #[cfg(feature = "sntp")]
    pub fn with_sntp(mut self, memory: &'a mut super::SntpMemory) -> Self {
        self.sntp = Some(memory);
        self
    }

    /// Memory for `clients` client slots (at most [`MAX_CLIENTS`](Self::MAX_CLIENTS)) with
    /// buffers of `sizes` (pass the same sizes to [`Server::new`](super::Server::new)'s
    /// configuration): the tables from the global allocator, owned by the server and freed
    /// with it, and the buffers in `buffers`, which the caller owns and lends (as smoltcp's
    /// sockets borrow their buffers): [`ServerBuffers`] are (re)made for this size here, and
    /// must outlive the server. With the `sntp` feature, the SNTP client's memory is in
    /// `buffers` too.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::{BufferSizes, ServerBuffers, ServerMemory};
    ///
    /// let sizes = BufferSizes { rx: 4096, tx: 4096, input: 2048 };
    /// let mut buffers = ServerBuffers::default();
    /// let memory = ServerMemory::allocate(10_001, sizes, &mut buffers);
    /// assert_eq!(memory.clients(), 10_001);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn allocate(clients: usize, sizes: BufferSizes, buffers: &'a mut ServerBuffers) -> Self {
        use alloc::vec::Vec;
        let clients = clients.min(Self::MAX_CLIENTS);
        let timer_slots = || (0..clients).map(|_| TimeoutSlot::new()).collect::<Vec<_>>();
        *buffers = ServerBuffers {
            bytes: alloc::vec![0u8; sizes.bytes_needed(clients)],
            #[cfg(feature = "sntp")]
            sntp: super::SntpMemory::new(),
        };
        let ServerBuffers {
            bytes,
            #[cfg(feature = "sntp")]
            sntp,
        } = buffers;
        ServerMemory {
            slots: clients,
            // The control sockets only: the client sockets' sets grow as slots open.
            sockets: Memory::from(
                (0..CONTROL_SOCKETS)
                    .map(|_| SocketStorage::EMPTY)
                    .collect::<Vec<_>>(),
            ),
            // Reserved, not written: its pages cost nothing until slots open, and it never
            // moves as they do.
            clients: Memory::from(Vec::with_capacity(clients)),
            timers: Memory::from(timer_slots()),
            write_timers: Memory::from(timer_slots()),
            bytes: Bytes::lent(bytes),
            #[cfg(feature = "sntp")]
            sntp: Some(sntp),
            #[cfg(feature = "hashes")]
            field_timers: None,
        }
    }

    /// Bytes of the connection table held whatever the clients: the control sockets and the
    /// timer slots (open slots add [`SLOT_BYTES`] each).
    pub(super) fn fixed_table_bytes(&self) -> usize {
        use core::mem::size_of;
        self.sockets.len().saturating_sub(self.slots_lent()) * size_of::<SocketStorage<'a>>()
            + (self.timers.len() + self.write_timers.len()) * size_of::<TimeoutSlot<u16>>()
    }

    /// Client sockets lent with the memory (none where their sets grow).
    fn slots_lent(&self) -> usize {
        if self.sockets.grows() {
            0
        } else {
            self.slots
        }
    }

    /// Client slots: TCP sockets on the port.
    pub fn clients(&self) -> usize {
        self.slots
    }

    /// Checks that every part fits the client count, as [`Server::new`](super::Server::new)
    /// needs.
    pub(super) fn check(&self, sizes: &BufferSizes) -> Result<(), SetupError> {
        let clients = self.slots;
        if clients < 2 {
            return Err(SetupError::TooFewConnections);
        }
        if clients > Self::MAX_CLIENTS {
            return Err(SetupError::TooManyConnections {
                most: Self::MAX_CLIENTS,
            });
        }
        #[cfg(feature = "sntp")]
        let control = 1 + usize::from(self.sntp.is_some());
        #[cfg(not(feature = "sntp"))]
        let control = 1;
        if self.sockets.len() < self.slots_lent() + control
            || (!self.clients.grows() && self.clients.len() < clients)
        {
            return Err(SetupError::TooFewSocketSlots {
                needed: clients + control,
            });
        }
        if self.timers.len() < clients || self.write_timers.len() < clients {
            return Err(SetupError::TooFewTimerSlots { needed: clients });
        }
        let needed = sizes.bytes_needed(clients);
        if self.bytes.len() < needed {
            return Err(SetupError::BufferTooSmall { needed });
        }
        Ok(())
    }
}

/// The buffers of a server sized at run time, which the caller owns and lends to
/// [`ServerMemory::allocate`]: the sockets' and commands' buffers in one zeroed allocation, so a
/// slot's pages cost no RSS until a client uses them (buffers of their own would each be cleared
/// as the allocator hands them out), and with the `sntp` feature the SNTP client's memory. A
/// host binary keeps them for its whole run; they are freed when dropped.
///
/// Empty until [`ServerMemory::allocate`] sizes them.
#[cfg(feature = "alloc")]
#[derive(Default)]
pub struct ServerBuffers {
    bytes: alloc::vec::Vec<u8>,
    #[cfg(feature = "sntp")]
    sntp: super::SntpMemory,
}

/// Sockets beside the client sockets that [`ServerMemory::allocate`] makes room for: DHCP's,
/// and with the `sntp` feature, SNTP's.
#[cfg(feature = "alloc")]
const CONTROL_SOCKETS: usize = if cfg!(feature = "sntp") { 2 } else { 1 };

/// Bytes of the connection table per open client slot: its socket, its connection (not the
/// buffers, which a connected client holds).
pub(super) const SLOT_BYTES: usize =
    core::mem::size_of::<SocketStorage<'static>>() + core::mem::size_of::<Connection<'static>>();

/// A first-in, first-out queue of client slots, linked through the slots themselves (so it
/// needs no array of its own and never fills).
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotQueue {
    head: u16,
    tail: u16,
}

/// Where a queue keeps a slot's link.
pub(super) type Link = for<'c> fn(&'c mut Connection<'_>) -> &'c mut u16;

impl SlotQueue {
    pub(super) const EMPTY: Self = Self {
        head: NO_SLOT,
        tail: NO_SLOT,
    };

    /// Appends slot `index` (which must not be queued already).
    pub(super) fn push(&mut self, conns: &mut [Connection<'_>], index: usize, link: Link) {
        let index16 = index as u16;
        if let Some(conn) = conns.get_mut(index) {
            *link(conn) = NO_SLOT;
        }
        match conns.get_mut(usize::from(self.tail)) {
            Some(last) => *link(last) = index16,
            None => self.head = index16,
        }
        self.tail = index16;
    }

    /// Takes the first slot.
    pub(super) fn pop(&mut self, conns: &mut [Connection<'_>], link: Link) -> Option<usize> {
        let index = usize::from(self.head);
        let conn = conns.get_mut(index)?;
        self.head = core::mem::replace(link(conn), NO_SLOT);
        if self.head == NO_SLOT {
            self.tail = NO_SLOT;
        }
        Some(index)
    }
}
