//! One client slot: a TCP socket, its partial-command buffer, and its timers.

use smoltcp::iface::SocketHandle;
use timer_core::TimerId;

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

/// Which timeout list a connection's main timer is on (list numbers in `TimeoutLists`).
pub(crate) mod list {
    /// No complete command for the idle timeout.
    pub(crate) const IDLE: usize = 0;
    /// A command has been arriving for the read timeout.
    pub(crate) const READ: usize = 1;
    /// A graceful close has not finished.
    pub(crate) const CLOSING: usize = 2;
    /// How many lists.
    pub(crate) const COUNT: usize = 3;
}

pub(crate) struct Connection<'a> {
    pub(crate) socket: SocketHandle,
    /// Bytes received and not yet consumed by the parser.
    pub(crate) input: &'a mut [u8],
    pub(crate) input_len: usize,
    pub(crate) phase: Phase,
    /// Counted in `connected_clients` (refused connections are not).
    pub(crate) counted: bool,
    /// The idle/read/closing timer.
    pub(crate) timer: Option<TimerId>,
    /// The write timer, armed while replies wait to be acknowledged.
    pub(crate) write_timer: Option<TimerId>,
    /// Unacknowledged reply bytes at the last look, to see progress.
    pub(crate) last_send_queue: usize,
}

impl<'a> Connection<'a> {
    pub(crate) fn new(socket: SocketHandle, input: &'a mut [u8]) -> Self {
        Self {
            socket,
            input,
            input_len: 0,
            phase: Phase::Listening,
            counted: false,
            timer: None,
            write_timer: None,
            last_send_queue: 0,
        }
    }

    /// Drops the first `consumed` bytes of input.
    pub(crate) fn consume(&mut self, consumed: usize) {
        let consumed = consumed.min(self.input_len);
        self.input.copy_within(consumed..self.input_len, 0);
        self.input_len -= consumed;
    }
}
