//! The server's side of a slot migration (`CLUSTERX MIGRATE`): a TCP connection from this
//! node to the slots' new owner, over the server's own interface, that carries the batches
//! [`Migration`](crate::cluster::Migration) makes and brings back the acknowledgements.
//!
//! The socket lives in the control set (frames to a port other than the served one go there)
//! with buffers allocated for it, so migration needs the `alloc` feature.

use alloc::vec::Vec;

use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::wire::Ipv4Address;
use timer_core::Tick;

use super::Server;
use crate::cluster::MigrationState;
use crate::command::Clock;

/// The connection's receive buffer: acknowledgements only.
const RX: usize = 16 << 10;
/// The connection's send buffer.
const TX: usize = 256 << 10;
/// The first local port for migration connections (the ephemeral range).
const LOCAL_PORT: u16 = 49_152;
/// A connection not open after this many milliseconds (the new owner does not answer, or
/// its address does not resolve), or that sends nothing acknowledged for as long, is aborted,
/// and the migration fails (the keys not yet moved stay here).
const STALL_MS: u64 = 10_000;

/// The open connection to the new owner, and what waits to go out on it.
pub(super) struct MigrationLink {
    handle: SocketHandle,
    pending: Vec<u8>,
    /// The migration is over and the connection is closing (FIN sent).
    closing: bool,
    /// When the connection was opened.
    opened_at: Tick,
}

impl Server<'_> {
    /// Moves a running migration on: connects, sends the next batch when the last is
    /// acknowledged, takes replies. Returns whether it has more to do (so the next poll should
    /// come soon).
    pub(super) fn poll_migration(&mut self, now: Tick) -> bool {
        let running = self
            .cluster
            .migration()
            .is_some_and(|m| m.state() == MigrationState::Running);
        if !running {
            // A migration that failed before any key went says so, if its link still carries.
            let notice = self
                .cluster
                .migration_mut()
                .and_then(|m| m.failure_notice());
            if let (Some(notice), Some(link)) = (notice, self.migration_link.as_mut()) {
                if !link.closing {
                    link.pending = notice;
                }
            }
            return self.close_migration_link();
        }
        let Some(handle) = self.migration_link_handle(now) else {
            if let Some(m) = self.cluster.migration_mut() {
                m.fail();
            }
            return false;
        };
        let clock = Clock {
            now,
            unix_ms: self.unix_offset_ms.map(|o| o.wrapping_add(now)),
        };
        let opened_at = self.migration_link.as_ref().map_or(now, |l| l.opened_at);
        let socket = self.sockets.control.get_mut::<tcp::Socket>(handle);
        let never_opened = matches!(socket.state(), tcp::State::SynSent)
            && now.saturating_sub(opened_at) > STALL_MS;
        if never_opened || !socket.is_open() || matches!(socket.state(), tcp::State::CloseWait) {
            if let Some(m) = self.cluster.migration_mut() {
                m.fail();
            }
            self.close_migration_link();
            return false;
        }
        let mut replies = [0u8; 1024];
        while socket.can_recv() {
            let Ok(got) = socket.recv_slice(&mut replies) else {
                break;
            };
            if got == 0 {
                break;
            }
            let Some(m) = self.cluster.migration_mut() else {
                break;
            };
            #[cfg(feature = "pubsub")]
            {
                // A key moved away is deleted here with a `del` event, as Redis' `MIGRATE`
                // deletes it.
                let events = self.settings.keyspace_events;
                let pubsub = &mut self.pubsub;
                m.take_replies(&replies[..got], &mut self.store, now, |key| {
                    pubsub.notify(events, crate::pubsub::KeyspaceEvents::GENERIC, "del", key);
                });
            }
            #[cfg(not(feature = "pubsub"))]
            m.take_replies(&replies[..got], &mut self.store, now, |_| {});
        }
        #[cfg(feature = "pubsub")]
        self.deliver_messages(now);
        let socket = self.sockets.control.get_mut::<tcp::Socket>(handle);
        let Some(link) = self.migration_link.as_mut() else {
            return false;
        };
        if link.pending.is_empty() && socket.may_send() {
            if let Some(m) = self.cluster.migration_mut() {
                if let Some(batch) = m.next_batch(&mut self.store, clock) {
                    link.pending = batch;
                }
            }
        }
        if !link.pending.is_empty() && socket.can_send() {
            if let Ok(sent) = socket.send_slice(&link.pending) {
                link.pending.drain(..sent);
            }
        }
        self.cluster
            .migration()
            .is_some_and(|m| m.state() == MigrationState::Running)
    }

    /// The connection to the new owner, opened if need be; `None` if it cannot be (the new
    /// owner's host is not an IPv4 address).
    fn migration_link_handle(&mut self, now: Tick) -> Option<SocketHandle> {
        if let Some(link) = &self.migration_link {
            return Some(link.handle);
        }
        let migration = self.cluster.migration()?;
        let node = &self.cluster.topology().nodes()[migration.node];
        let address: Ipv4Address = node.host.parse().ok()?;
        let port = node.port;
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(alloc::vec![0; RX]),
            tcp::SocketBuffer::new(alloc::vec![0; TX]),
        );
        socket.set_nagle_enabled(false);
        socket.set_timeout(Some(smoltcp::time::Duration::from_millis(STALL_MS)));
        self.migration_port = self.migration_port.wrapping_add(1);
        let local = LOCAL_PORT + self.migration_port % 16_000;
        socket
            .connect(self.iface.context(), (address, port), local)
            .ok()?;
        let handle = self.sockets.control.add(socket);
        // As Kvrocks does: this node's own password, which a cluster's nodes share.
        let password = self.settings.security.password();
        let announcement = self.cluster.migration_mut()?.announce(password);
        self.migration_link = Some(MigrationLink {
            handle,
            pending: announcement,
            closing: false,
            opened_at: now,
        });
        Some(handle)
    }

    /// Closes the connection to the new owner (a FIN, so the new owner's slot is free at
    /// once) once what waits to go out on it is sent, and removes the socket once closed.
    /// Whether it is still closing.
    fn close_migration_link(&mut self) -> bool {
        let Some(link) = self.migration_link.as_mut() else {
            return false;
        };
        let socket = self.sockets.control.get_mut::<tcp::Socket>(link.handle);
        if !link.closing && !link.pending.is_empty() && socket.may_send() {
            if let Ok(sent) = socket.send_slice(&link.pending) {
                link.pending.drain(..sent);
            }
            if !link.pending.is_empty() {
                return true;
            }
        }
        if !link.closing {
            link.closing = true;
            link.pending.clear();
            socket.close();
        }
        if matches!(socket.state(), tcp::State::Closed | tcp::State::TimeWait) {
            socket.abort();
            let handle = link.handle;
            self.migration_link = None;
            self.sockets.control.remove(handle);
            return false;
        }
        true
    }
}
