//! Pub/sub messages, from the outbox commands and key expiry fill to the connections of the
//! clients they are for, each written in the protocol its client speaks.

use timer_core::Tick;

use super::connection::Phase;
use super::Server;
use crate::pubsub::{KeyspaceEvents, Publication};
use crate::resp::ReplyWriter;

/// The most message bytes a subscriber may leave unread before it is closed: Redis' hard
/// `client-output-buffer-limit` for pub/sub clients (32 MiB).
const OUTPUT_LIMIT: usize = 32 << 20;

impl Server<'_> {
    /// Hands every message published since the last call to its receivers.
    pub(super) fn deliver_messages(&mut self, now: Tick) {
        // Keys a command found past their deadline (before the sweep did) expire as loudly.
        let events = self.settings.keyspace_events;
        let expired = KeyspaceEvents::EXPIRED;
        self.store
            .record_expired_on_access(events.publishes(expired));
        for key in self.store.take_expired_on_access() {
            self.pubsub.notify(events, expired, "expired", &key);
        }
        if !self.pubsub.has_outbox() {
            return;
        }
        let mut bytes = alloc::vec::Vec::new();
        for publication in self.pubsub.take_outbox() {
            for (slot, pattern) in &publication.receivers {
                let index = usize::from(*slot);
                if self.conns.get(index).is_none_or(|c| c.phase != Phase::Open) {
                    continue;
                }
                bytes.clear();
                let mut out =
                    ReplyWriter::growable(&mut bytes).speaking(self.conns[index].protocol);
                if write_message(&mut out, &publication, pattern.as_deref()).is_err() {
                    continue; // no memory for it
                }
                let len = out.len();
                self.queue_message(index, &bytes[..len], now);
            }
        }
    }

    /// Sends a message to the client in slot `index`, or queues what the send buffer has no
    /// room for behind what already waits.
    fn queue_message(&mut self, index: usize, message: &[u8], now: Tick) {
        let handle = self.conns[index].socket;
        let conn = &mut self.conns[index];
        if conn.more.is_some() {
            // A reply is going out in parts: the message must not cut into it.
            conn.held_messages.extend_from_slice(message);
        } else if conn.pending.is_empty() {
            let sent = self
                .sockets
                .tcp_mut(index, handle)
                .send_slice(message)
                .unwrap_or(0);
            if sent < message.len() {
                conn.pending = message[sent..].to_vec();
                conn.pending_at = 0;
            }
        } else {
            conn.pending.drain(..conn.pending_at);
            conn.pending_at = 0;
            conn.pending.extend_from_slice(message);
        }
        let conn = &mut self.conns[index];
        let unsent = conn.pending.len() - conn.pending_at + conn.held_messages.len();
        if unsent > OUTPUT_LIMIT {
            info!(
                "slot {}: subscriber over the output limit ({} bytes), closing",
                index, OUTPUT_LIMIT
            );
            conn.drop_pending();
            conn.held_messages = alloc::vec::Vec::new();
            self.begin_close(index, now);
            return;
        }
        if conn.write_since.is_none() {
            // The write timeout covers messages as it covers replies.
            conn.write_since = Some(now);
            self.arm_timers(index);
        }
    }
}

/// `message channel payload`, or `pmessage pattern channel payload`: a push in RESP3.
fn write_message(
    out: &mut ReplyWriter<'_>,
    publication: &Publication,
    pattern: Option<&[u8]>,
) -> Result<(), crate::resp::WriteFull> {
    match pattern {
        None => {
            out.push_header(3)?;
            out.bulk(b"message")?;
        }
        Some(pattern) => {
            out.push_header(4)?;
            out.bulk(b"pmessage")?;
            out.bulk(pattern)?;
        }
    }
    out.bulk(&publication.channel)?;
    out.bulk(&publication.payload)
}
