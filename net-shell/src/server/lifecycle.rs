//! A client slot's life: accept (or refuse), serve, close gracefully, recycle.

use smoltcp::socket::tcp;
use timer_core::{Tick, TimerQueue};

use super::connection::{Connection, Phase};
use super::timer_policy::{self, Timeout};
use super::Server;
use crate::auth;

const REFUSAL: &[u8] = b"-ERR max number of clients reached\r\n";

impl Server<'_> {
    /// Moves one connection forward: accept, read, execute, reply, arm timers, recycle.
    pub(super) fn service(&mut self, index: usize, now: Tick) {
        let handle = self.conns[index].socket;
        let state = self.sockets.tcp(index, handle).state();
        match self.conns[index].phase {
            Phase::Listening => {
                if !matches!(
                    state,
                    tcp::State::Listen | tcp::State::SynReceived | tcp::State::Closed
                ) {
                    self.accept(index, now);
                    self.serve(index, now);
                } else if state != tcp::State::SynReceived {
                    // Listening, or closed by smoltcp: no handshake to time.
                    if let Some(id) = self.conns[index].timer.take() {
                        let _ = self.conn_timers.cancel(id);
                    }
                    self.unindex_endpoint(index);
                    if state == tcp::State::Closed && !self.shutting_down {
                        self.listen_fresh(index);
                    }
                }
            }
            Phase::Open => {
                if matches!(state, tcp::State::Closed | tcp::State::TimeWait) {
                    self.recycle(index);
                } else {
                    self.serve(index, now);
                }
            }
            Phase::Closing => {
                let socket = self.sockets.tcp_mut(index, handle);
                // Discard whatever the peer still sends; it is too late to answer.
                while socket.can_recv() {
                    if socket.recv(|data| (data.len(), ())).is_err() {
                        break;
                    }
                }
                if matches!(state, tcp::State::Closed | tcp::State::TimeWait) {
                    self.recycle(index);
                }
            }
        }
    }

    pub(super) fn accept(&mut self, index: usize, now: Tick) {
        // Frames from this client must find its slot (a handshake seen by `guard_listeners`
        // is indexed already).
        if self.conns[index].remote.is_none() {
            self.index_endpoint(index);
        }
        // Connections we are already closing do not hold a client slot (they left
        // `connected_clients`): a client closed for a protocol error or a timeout must not lock
        // out the next one while its FIN drains.
        let served = self.stats.connected_clients as usize;
        let max_clients = self.settings.capacity.max_clients;
        if served >= max_clients || self.shutting_down {
            info!("refused a client: maxclients ({}) reached", max_clients);
            self.stats.rejected_connections += 1;
            let handle = self.conns[index].socket;
            let _ = self.sockets.tcp_mut(index, handle).send_slice(REFUSAL);
            self.conns[index].phase = Phase::Open;
            self.begin_close(index, now);
            return;
        }
        // Like Redis, count only the connections accepted, not those refused.
        self.stats.total_connections_received += 1;
        let peer = self
            .sockets
            .tcp(index, self.conns[index].socket)
            .remote_endpoint();
        if let Some(peer) = peer {
            debug!("slot {}: client {} connected", index, peer);
        }
        let security = &self.settings.security;
        if !peer.is_some_and(|p| security.admits(p.addr)) {
            // Redis explains protected mode to the client and disconnects it.
            info!("refused a client outside the trusted network: protected mode");
            self.stats.protected_mode_refusals += 1;
            let handle = self.conns[index].socket;
            let _ = self.sockets.tcp_mut(index, handle).send_slice(auth::DENIED);
            self.conns[index].phase = Phase::Open;
            self.begin_close(index, now);
            return;
        }
        let authenticated = !security.requires_auth();
        let conn = &mut self.conns[index];
        conn.id = self.stats.total_connections_received;
        conn.phase = Phase::Open;
        conn.counted = true;
        conn.authenticated = authenticated;
        conn.reset(now);
        self.stats.connected_clients += 1;
        self.arm_timers(index);
    }

    /// Sends FIN after any queued replies; aborts later if the peer does not finish.
    pub(super) fn begin_close(&mut self, index: usize, now: Tick) {
        #[cfg(feature = "pubsub")]
        self.pubsub.forget(index as u16);
        #[cfg(feature = "blocking-lists")]
        self.forget_blocked(index);
        let handle = self.conns[index].socket;
        self.sockets.tcp_mut(index, handle).close();
        // As in Redis, a client we are closing is no longer connected.
        if core::mem::take(&mut self.conns[index].counted) {
            self.stats.connected_clients -= 1;
        }
        self.conns[index].phase = Phase::Closing;
        if let Some(id) = self.conns[index].write_timer.take() {
            let _ = self.write_timers.cancel(id);
        }
        let deadline = timer_policy::closing_deadline(now, &self.settings.timeouts);
        self.set_timer(index, Some((Timeout::Closing, deadline)));
    }

    /// Aborts the connection (the peer gets an RST) and frees the slot; it listens again once
    /// the RST is out ([`listen_again`](Self::listen_again), later in the same poll).
    pub(super) fn recycle(&mut self, index: usize) {
        #[cfg(feature = "pubsub")]
        self.pubsub.forget(index as u16);
        #[cfg(feature = "blocking-lists")]
        self.forget_blocked(index);
        let handle = self.conns[index].socket;
        self.sockets.tcp_mut(index, handle).abort();
        let conn = &mut self.conns[index];
        if let Some(id) = conn.timer.take() {
            let _ = self.conn_timers.cancel(id);
        }
        if let Some(id) = conn.write_timer.take() {
            let _ = self.write_timers.cancel(id);
        }
        if conn.counted {
            self.stats.connected_clients -= 1;
        }
        conn.counted = false;
        conn.phase = Phase::Listening;
        conn.reset(0);
        if !core::mem::replace(&mut self.conns[index].recycled, true) {
            self.recycled
                .push(&mut self.conns, index, Connection::recycled_link);
        }
    }
}
