//! Pub/sub messages, from the outbox commands and key expiry fill to the connections of the
//! clients they are for, each written in the protocol its client speaks.

use timer_core::Tick;

use super::connection::Phase;
use super::Server;
use crate::pubsub::{KeyspaceEvents, MonitorLine, Publication};
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

    /// Hands the commands run since the last call to the clients in `MONITOR` mode: after the
    /// command's reply, as Redis feeds monitors once a command has run.
    pub(super) fn deliver_monitor_feed(&mut self, now: Tick) {
        let feed = self.pubsub.take_monitor_feed();
        if feed.is_empty() {
            return;
        }
        let mut bytes = alloc::vec::Vec::new();
        let monitors = self.pubsub.monitors().to_vec();
        for line in feed {
            bytes.clear();
            let from = self
                .conns
                .get(usize::from(line.from))
                .and_then(|c| c.remote);
            write_monitor_line(&mut bytes, &line, from);
            for &slot in &monitors {
                let index = usize::from(slot);
                if self
                    .conns
                    .get(index)
                    .is_some_and(|c| c.phase == Phase::Open)
                {
                    self.queue_message(index, &bytes, now);
                }
            }
        }
    }

    /// Sends a message to the client in slot `index`, or queues what the send buffer has no
    /// room for behind what already waits.
    pub(super) fn queue_message(&mut self, index: usize, message: &[u8], now: Tick) {
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

/// A command as Redis 7.0's `replicationFeedMonitors` shows it, a simple string in RESP2 and
/// RESP3 alike: `+<seconds>.<microseconds> [0 <ip>:<port>] "word" …`. The clock here has
/// milliseconds: the last three digits are 0.
fn write_monitor_line(
    bytes: &mut alloc::vec::Vec<u8>,
    line: &MonitorLine,
    from: Option<super::endpoints::Endpoint>,
) {
    use core::fmt::Write as _;
    let mut head: heapless::String<96> = heapless::String::new();
    let _ = write!(
        head,
        "+{}.{:03}000 [0 ",
        line.unix_ms / 1000,
        line.unix_ms % 1000
    );
    if let Some(from) = from {
        let _ = write!(head, "{}:{}", from.addr, from.port);
    }
    let _ = head.push_str("] ");
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(&line.words);
    bytes.extend_from_slice(b"\r\n");
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
