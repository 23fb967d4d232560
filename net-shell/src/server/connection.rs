//! One client slot: a TCP socket, its partial-command buffer, and its timers.

use smoltcp::iface::SocketHandle;
use timer_core::{Tick, TimerId};

use super::endpoints::{Endpoint, NO_SLOT};
use super::timer_policy::OpenTiming;
use crate::command::{ClientName, Continuation};
use crate::memory::Memory;
use crate::resp::Protocol;

/// Where a slot is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) enum Phase {
    /// The socket listens for the next client.
    Listening,
    /// Serving a client.
    Open,
    /// We sent FIN (timeout, QUIT, protocol error, refusal, shutdown); waiting for the peer.
    Closing,
}

/// One client slot (opaque): a TCP socket, its partial-command buffer, and its timers. A
/// server's connection table is a slice of these ([`ServerMemory`](crate::ServerMemory)).
pub struct Connection<'a> {
    pub(crate) socket: SocketHandle,
    /// The client's id: its number among all connections accepted, from 1.
    pub(crate) id: u64,
    /// Bytes received and not yet consumed by the parser.
    pub(crate) input: Memory<'a, u8>,
    pub(crate) input_len: usize,
    pub(crate) phase: Phase,
    /// Counted in `connected_clients` (refused connections are not).
    pub(crate) counted: bool,
    /// Authenticated (or accepted while no password was set), as Redis' `c->authenticated`.
    pub(crate) authenticated: bool,
    /// The idle/read/closing timer (or, while listening, the handshake timer).
    pub(crate) timer: Option<TimerId>,
    /// The write timer, armed while replies wait to be acknowledged.
    pub(crate) write_timer: Option<TimerId>,
    /// Unacknowledged reply bytes at the last look, to see progress.
    pub(crate) last_send_queue: usize,
    /// When the connection was accepted or last completed a command: the idle timeout runs
    /// from here.
    pub(crate) idle_since: Tick,
    /// When the connection was accepted (`CLIENT LIST`'s `age`).
    pub(crate) accepted_at: Tick,
    /// When the command now in `input` started to arrive: the read timeout runs from here.
    pub(crate) read_since: Tick,
    /// Since when replies have waited without the client taking any (`None`: nothing waits):
    /// the write timeout runs from here.
    pub(crate) write_since: Option<Tick>,
    /// The last service stopped because the send buffer had no room for a reply: the input
    /// waits on the client reading, not on the client sending.
    pub(crate) blocked: bool,
    /// The peer this slot talks to (a client, or a handshake in progress), as indexed.
    pub(crate) remote: Option<Endpoint>,
    /// The first slot of the endpoint bucket this slot heads (`NO_SLOT`: empty).
    pub(crate) bucket_head: u16,
    /// The next slot in this slot's endpoint bucket.
    pub(crate) bucket_next: u16,
    /// Queued for service in this poll.
    pub(crate) dirty: bool,
    /// The next slot queued for service.
    pub(crate) next_dirty: u16,
    /// Queued to listen again once its RST is out.
    pub(crate) recycled: bool,
    /// The next slot queued to listen again.
    pub(crate) next_recycled: u16,
    /// A reply larger than the reply buffer, written in parts: where it goes on.
    pub(crate) more: Option<Continuation>,
    /// The name the client gave itself (`CLIENT SETNAME`).
    pub(crate) name: ClientName,
    /// The protocol the client speaks (`HELLO`).
    pub(crate) protocol: Protocol,
    /// Whether its replies are sent (`CLIENT REPLY`).
    #[cfg(feature = "extended-commands")]
    pub(crate) reply_mode: crate::command::ReplyMode,
    /// The client waits in a blocking pop.
    #[cfg(feature = "blocking-lists")]
    pub(crate) blocked_pop: Option<super::blocking::BlockedPop>,
    /// The client has pub/sub subscriptions, monitors, or waits in a blocking pop (it has no
    /// idle timeout then).
    pub(crate) subscribed: bool,
    /// The client sent `ASKING`: its next command may be for a slot moving here.
    #[cfg(feature = "cluster")]
    pub(crate) asking: bool,
    /// Pub/sub messages that arrived while a reply was being sent in parts ([`more`](Self::more)):
    /// they go out once it is whole.
    #[cfg(feature = "pubsub")]
    pub(crate) held_messages: alloc::vec::Vec<u8>,
    /// The lent input buffer, while a larger allocated one holds a long request.
    #[cfg(feature = "alloc")]
    pub(crate) lent_input: Option<Memory<'a, u8>>,
    /// Reply bytes the send buffer had no room for yet (a reply larger than it), from
    /// `pending_at` on.
    #[cfg(feature = "alloc")]
    pub(crate) pending: alloc::vec::Vec<u8>,
    #[cfg(feature = "alloc")]
    pub(crate) pending_at: usize,
    /// The open transaction (`MULTI`) and watched keys.
    #[cfg(feature = "transactions")]
    pub(crate) transaction: crate::command::Transaction,
}

impl Default for Connection<'_> {
    /// A vacant slot, for a connection table; [`Server::new`](crate::Server::new) fills it.
    fn default() -> Self {
        Self::on(SocketHandle::default(), Memory::empty())
    }
}

impl<'a> Connection<'a> {
    /// A listening slot on `socket`.
    pub(crate) fn on(socket: SocketHandle, input: Memory<'a, u8>) -> Self {
        Self {
            socket,
            id: 0,
            input,
            input_len: 0,
            phase: Phase::Listening,
            counted: false,
            authenticated: false,
            remote: None,
            bucket_head: NO_SLOT,
            bucket_next: NO_SLOT,
            dirty: false,
            next_dirty: NO_SLOT,
            recycled: false,
            next_recycled: NO_SLOT,
            timer: None,
            write_timer: None,
            last_send_queue: 0,
            idle_since: 0,
            accepted_at: 0,
            read_since: 0,
            write_since: None,
            blocked: false,
            more: None,
            name: ClientName::new(),
            protocol: Protocol::Resp2,
            #[cfg(feature = "extended-commands")]
            reply_mode: crate::command::ReplyMode::ON,
            subscribed: false,
            #[cfg(feature = "cluster")]
            asking: false,
            #[cfg(feature = "pubsub")]
            held_messages: alloc::vec::Vec::new(),
            #[cfg(feature = "blocking-lists")]
            blocked_pop: None,
            #[cfg(feature = "alloc")]
            lent_input: None,
            #[cfg(feature = "alloc")]
            pending: alloc::vec::Vec::new(),
            #[cfg(feature = "alloc")]
            pending_at: 0,
            #[cfg(feature = "transactions")]
            transaction: crate::command::Transaction::new(),
        }
    }

    /// Back to the state of a fresh connection accepted at `now` (timers aside).
    pub(crate) fn reset(&mut self, now: Tick) {
        self.input_len = 0;
        self.last_send_queue = 0;
        self.idle_since = now;
        self.accepted_at = now;
        self.read_since = now;
        self.write_since = None;
        self.blocked = false;
        self.more = None;
        self.name = ClientName::new();
        self.protocol = Protocol::Resp2;
        #[cfg(feature = "extended-commands")]
        {
            self.reply_mode = crate::command::ReplyMode::ON;
        }
        self.subscribed = false;
        #[cfg(feature = "cluster")]
        {
            self.asking = false;
        }
        #[cfg(feature = "pubsub")]
        {
            self.held_messages = alloc::vec::Vec::new();
        }
        #[cfg(feature = "alloc")]
        {
            self.drop_pending();
            self.shrink_input();
        }
        #[cfg(feature = "transactions")]
        {
            self.transaction = crate::command::Transaction::new();
        }
    }

    /// Room for more input: with the `alloc` feature, a larger allocated buffer (twice the
    /// size, at most `limit` bytes) holding what came so far. `false` if it cannot grow.
    #[cfg(feature = "alloc")]
    pub(crate) fn grow_input(&mut self, limit: usize) -> bool {
        let len = self.input.len();
        if len >= limit {
            return false;
        }
        let grown = len.saturating_mul(2).clamp(len + 1, limit);
        let mut bigger = alloc::vec::Vec::new();
        if bigger.try_reserve_exact(grown).is_err() {
            return false;
        }
        bigger.extend_from_slice(self.input.get(..self.input_len).unwrap_or_default());
        bigger.resize(grown, 0);
        let old = core::mem::replace(&mut self.input, Memory::from(bigger));
        if self.lent_input.is_none() {
            self.lent_input = Some(old);
        }
        true
    }

    /// Back to the lent input buffer once no input waits (the allocated one is freed).
    #[cfg(feature = "alloc")]
    pub(crate) fn shrink_input(&mut self) {
        if self.input_len == 0 {
            if let Some(lent) = self.lent_input.take() {
                self.input = lent;
            }
        }
    }

    /// Forgets reply bytes not sent yet.
    #[cfg(feature = "alloc")]
    pub(crate) fn drop_pending(&mut self) {
        self.pending = alloc::vec::Vec::new();
        self.pending_at = 0;
    }

    /// What the timer policy looks at.
    pub(crate) fn timing(&self) -> OpenTiming {
        OpenTiming {
            input_pending: self.input_len > 0,
            blocked: self.blocked,
            read_since: self.read_since,
            idle_since: self.idle_since,
            write_since: self.write_since,
            subscribed: self.subscribed,
        }
    }

    /// The link of the queue of slots to service.
    pub(crate) fn dirty_link<'c>(conn: &'c mut Connection<'_>) -> &'c mut u16 {
        &mut conn.next_dirty
    }

    /// The link of the queue of slots to listen again.
    pub(crate) fn recycled_link<'c>(conn: &'c mut Connection<'_>) -> &'c mut u16 {
        &mut conn.next_recycled
    }

    /// Drops the first `consumed` bytes of input.
    pub(crate) fn consume(&mut self, consumed: usize) {
        let consumed = consumed.min(self.input_len);
        self.input.copy_within(consumed..self.input_len, 0);
        self.input_len -= consumed;
    }
}
