//! The listening side: every free slot's socket listens, half-open handshakes are timed, and
//! under a SYN flood the oldest half-open handshake gives its socket to the next SYN.
//!
//! smoltcp has no listen backlog: a SYN takes a listening socket into SYN-RECEIVED, and a SYN
//! that finds no listening socket is answered with a reset. So the design is:
//!
//! - every open slot without a client listens, in shards of 16 (see `shards.rs`): on the
//!   board every slot is open (6); on the host one shard opens at start, and another each time
//!   a SYN finds no socket listening, until `--maxclients` + 1 are open (so a burst of
//!   connects finds sockets as it did when every slot listened from the start);
//! - frames are taken in one at a time and looked at first; a SYN goes to a shard with a
//!   socket listening, and after it [`guard_listeners`] gives every new SYN-RECEIVED socket of
//!   that shard a handshake timer (`handshake_ms`, 2 s by default) on a FIFO list, sends its
//!   SYN-ACK at once, and counts the shard's sockets still listening;
//! - when no shard has one left and the frame is a SYN, the oldest pending handshake is
//!   aborted and its socket listens again, so the SYN finds a
//!   listener instead of a reset (a handshake is only ever evicted for a new one); with no
//!   handshake pending, a connection being closed whose peer has acknowledged everything it was
//!   sent is aborted instead, so a closing client frees its slot for the next one at once;
//! - a handshake timer that fires aborts the handshake and the socket listens again.
//!
//! A real client completes its handshake within one round trip, so only more new SYNs than
//! free sockets within one round trip can evict it.
//!
//! [`guard_listeners`]: Server::guard_listeners

use smoltcp::socket::{tcp, Socket};
use timer_core::{Tick, TimerQueue};

use super::connection::{Connection, Phase};
use super::shards::SHARD;
use super::timer_policy::{self, Timeout};
use super::Server;

impl Server<'_> {
    /// Times half-open handshakes and counts the sockets still listening in shard `shard`;
    /// called after every SYN that went to it. Every new SYN-RECEIVED socket gets a handshake
    /// timer (on the `Handshake` list, in arrival order) and its peer is indexed, so that the
    /// final ACK finds the slot.
    ///
    /// Returns whether a new handshake began (its SYN-ACK is waiting to be sent).
    pub(super) fn guard_listeners(&mut self, shard: usize, now: Tick) -> bool {
        if self.shutting_down {
            return false;
        }
        let mut new_handshake = false;
        let mut listening = 0;
        let first = shard * SHARD;
        for index in first..self.opened.min(first + SHARD) {
            let conn = &self.conns[index];
            if conn.phase != Phase::Listening {
                continue;
            }
            match self.sockets.tcp(index, conn.socket).state() {
                tcp::State::Listen => {
                    listening += 1;
                    // A handshake the peer reset: the socket is free again.
                    if let Some(id) = self.conns[index].timer.take() {
                        let _ = self.conn_timers.cancel(id);
                        self.unindex_endpoint(index);
                    }
                }
                tcp::State::SynReceived if conn.timer.is_none() => {
                    new_handshake = true;
                    let at = timer_policy::handshake_deadline(now, &self.settings.timeouts);
                    self.conns[index].timer = self
                        .conn_timers
                        .insert_into(Timeout::Handshake.list(), at, index as u16)
                        .ok();
                    // The client's final ACK will name this slot.
                    self.index_endpoint(index);
                }
                _ => {}
            }
        }
        if let Some(shard) = self.sockets.get_mut(shard) {
            shard.listening = listening;
        }
        new_handshake
    }

    /// Finds a socket for a SYN that would find none listening (which smoltcp answers with a
    /// reset): the oldest pending handshake gives up its socket; failing that, the connection
    /// closing the longest whose every byte the peer has acknowledged (it has had all we had to
    /// say; only the courtesy of its FIN is left) is aborted.
    pub(super) fn make_room_for_syn(&mut self) {
        if let Some(oldest) = self
            .conn_timers
            .pop_expired_in(Timeout::Handshake.list(), Tick::MAX)
        {
            let index = usize::from(oldest.value);
            if self
                .conns
                .get(index)
                .is_some_and(|c| c.timer == Some(oldest.id))
            {
                debug!(
                    "slot {}: no socket listening, evicting the oldest handshake",
                    index
                );
                self.stats.half_open_evictions += 1;
                self.conns[index].timer = None;
                self.listen_fresh(index);
                return;
            }
        }
        // Rare (every slot busy or closing), so a scan is fine.
        let done = (0..self.conns.len())
            .filter(|&i| {
                let conn = &self.conns[i];
                conn.phase == Phase::Closing && self.sockets.tcp(i, conn.socket).send_queue() == 0
            })
            .min_by_key(|&i| {
                self.conns[i]
                    .timer
                    .and_then(|id| self.conn_timers.deadline(id))
                    .unwrap_or(Tick::MAX)
            });
        if let Some(index) = done {
            debug!(
                "slot {}: no socket listening, ending a finished close early",
                index
            );
            self.stats.aborted_closes += 1;
            self.recycle(index);
            self.listen_fresh(index);
        }
    }

    /// Makes the slot's socket listen as a new socket would, aborting what it had without
    /// sending a reset (a half-open handshake's peer needs none, and the socket is needed
    /// now). smoltcp keeps, per socket in the
    /// set, a "waiting for neighbour" state that outlives the connection. A socket whose last
    /// peer never answered ARP (a spoofed SYN) would otherwise hold back its next client's
    /// SYN-ACK for up to a second, and report a stale poll time that never passes. Taking the
    /// socket out of the set and adding it back starts that state afresh.
    pub(super) fn listen_fresh(&mut self, index: usize) {
        let handle = self.conns[index].socket;
        let shard = self.sockets.of(index);
        // A slot's handle always names a TCP socket (`new` made it one).
        #[allow(irrefutable_let_patterns)]
        let Socket::Tcp(mut socket) = shard.sockets.remove(handle) else {
            return;
        };
        socket.abort();
        let _ = socket.listen(self.port);
        self.conns[index].socket = shard.sockets.add(socket);
        shard.listening += 1;
        self.sockets.touch(index / SHARD);
        self.unindex_endpoint(index);
    }

    /// Slots recycled during this poll listen again, now that their RST has gone out
    /// (`listen` resets the socket, which would forget an RST not yet sent).
    pub(super) fn listen_again(&mut self) {
        if self.shutting_down {
            return;
        }
        while let Some(index) = self
            .recycled
            .pop(&mut self.conns, Connection::recycled_link)
        {
            self.conns[index].recycled = false;
            let conn = &self.conns[index];
            let socket = self.sockets.tcp(index, conn.socket);
            if conn.phase == Phase::Listening && socket.state() == tcp::State::Closed {
                self.listen_fresh(index);
            }
        }
    }
}
