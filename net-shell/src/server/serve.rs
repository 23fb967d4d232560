//! Serving one connection: read what fits, parse, execute, reply, until the input runs out or
//! the send buffer is full.

use timer_core::Tick;

use super::connection::{Connection, Phase};
use super::Server;
use crate::command::{self, After, ClientName, Continuation, MAX_ARGS};
use crate::resp::{self, Limits, Parsed, Protocol, ReplyWriter};
use crate::settings::Settings;
use crate::stats::Stats;
use crate::store::Store;

#[cfg(not(feature = "alloc"))]
const TOO_BIG: &[u8] = b"-ERR Protocol error: request does not fit the input buffer\r\n";

/// Redis' `PROTO_INLINE_MAX_SIZE`: the longest inline request (with the `alloc` feature).
#[cfg(feature = "alloc")]
const INLINE_MAX: usize = 64 << 10;

/// What one parse-and-execute step did.
struct Step {
    /// Bytes of input used.
    consumed: usize,
    /// Reply bytes written to the reply buffer.
    written: usize,
    /// A command ran.
    executed: bool,
    /// Close after the reply (`QUIT`, a protocol error).
    close: bool,
    /// The input holds no whole request yet.
    incomplete: bool,
    /// The reply is not to be sent (`CLIENT REPLY OFF` or `SKIP`); it still counts.
    #[cfg(feature = "extended-commands")]
    silent: bool,
    /// For the server to answer from its connection table (nothing written yet).
    #[cfg(feature = "client-list")]
    clients: Option<command::ClientsRequest>,
    /// A blocking pop found nothing: the client waits on these keys, to run this command
    /// again.
    #[cfg(feature = "blocking-lists")]
    block: Option<(command::Block, alloc::vec::Vec<alloc::vec::Vec<u8>>)>,
}

impl Step {
    const INCOMPLETE: Self = Self {
        consumed: 0,
        written: 0,
        executed: false,
        close: false,
        incomplete: true,
        #[cfg(feature = "extended-commands")]
        silent: false,
        #[cfg(feature = "client-list")]
        clients: None,
        #[cfg(feature = "blocking-lists")]
        block: None,
    };
}

/// Everything but the socket that running one request touches: borrowed from the server
/// field by field, so a request can run while the socket lends it its receive buffer.
pub(super) struct Runner<'s, 'a> {
    pub(super) store: &'s mut Store<'a>,
    pub(super) stats: &'s mut Stats,
    pub(super) settings: &'s mut Settings,
    #[cfg(feature = "cluster")]
    pub(super) cluster: &'s mut crate::cluster::Cluster,
    /// The reply buffer: it grows (with the `alloc` feature) for a reply larger than usual.
    #[cfg(feature = "alloc")]
    pub(super) reply: &'s mut alloc::vec::Vec<u8>,
    #[cfg(not(feature = "alloc"))]
    pub(super) reply: &'s mut [u8],
    #[cfg(feature = "pubsub")]
    pub(super) pubsub: &'s mut crate::pubsub::PubSub,
    #[cfg(feature = "blocking-lists")]
    pub(super) blocked: &'s mut command::BlockedKeys,
    #[cfg(feature = "hashes")]
    pub(super) field_timers: &'s mut command::FieldTimers<'a>,
    pub(super) limits: Limits,
    pub(super) started: Tick,
    pub(super) unix_offset_ms: Option<u64>,
    pub(super) client_slots: usize,
    pub(super) now: Tick,
}

/// The parts of a connection a request reads and changes (not its input buffer, which may be
/// what the request is parsed from).
pub(super) struct Client<'c> {
    pub(super) index: usize,
    pub(super) id: u64,
    pub(super) name: &'c mut ClientName,
    pub(super) protocol: &'c mut Protocol,
    pub(super) authenticated: &'c mut bool,
    pub(super) more: &'c mut Option<Continuation>,
    #[cfg(feature = "extended-commands")]
    pub(super) reply_mode: &'c mut crate::command::ReplyMode,
    #[cfg(feature = "cluster")]
    pub(super) asking: &'c mut bool,
    #[cfg(feature = "transactions")]
    pub(super) transaction: &'c mut crate::command::Transaction,
}

impl<'c> Client<'c> {
    /// Borrows them from `conn`, with its input buffer.
    pub(super) fn of(conn: &'c mut Connection<'_>, index: usize) -> (Self, &'c mut [u8], usize) {
        let client = Client {
            index,
            id: conn.id,
            name: &mut conn.name,
            protocol: &mut conn.protocol,
            authenticated: &mut conn.authenticated,
            more: &mut conn.more,
            #[cfg(feature = "extended-commands")]
            reply_mode: &mut conn.reply_mode,
            #[cfg(feature = "cluster")]
            asking: &mut conn.asking,
            #[cfg(feature = "transactions")]
            transaction: &mut conn.transaction,
        };
        (client, &mut conn.input, conn.input_len)
    }
}

/// A [`Runner`] over `$server`'s fields (borrowed one by one, so its connection table stays
/// free for a [`Client`]).
macro_rules! runner {
    ($server:expr, $limits:expr, $now:expr) => {
        Runner {
            store: &mut $server.store,
            stats: &mut $server.stats,
            settings: &mut $server.settings,
            #[cfg(feature = "cluster")]
            cluster: &mut $server.cluster,
            #[cfg(feature = "alloc")]
            reply: &mut $server.reply_vec,
            #[cfg(not(feature = "alloc"))]
            reply: &mut $server.reply,
            #[cfg(feature = "pubsub")]
            pubsub: &mut $server.pubsub,
            #[cfg(feature = "blocking-lists")]
            blocked: &mut $server.blocked_keys,
            #[cfg(feature = "hashes")]
            field_timers: &mut $server.field_timers,
            limits: $limits,
            started: $server.started,
            unix_offset_ms: $server.unix_offset_ms,
            client_slots: $server.slots,
            now: $now,
        }
    };
}
#[cfg(feature = "blocking-lists")]
pub(super) use runner;

/// What a command of `$client` may read and change: a `Context` over `$runner`'s fields
/// (borrowed one by one, so its reply buffer stays free for the reply).
macro_rules! context {
    ($runner:expr, $client:expr, $clients:expr, $block:expr) => {
        $crate::command::Context {
            started: $runner.started,
            client_id: $client.id,
            client_name: &mut *$client.name,
            protocol: &mut *$client.protocol,
            #[cfg(feature = "extended-commands")]
            reply_mode: &mut *$client.reply_mode,
            authenticated: &mut *$client.authenticated,
            store: &mut *$runner.store,
            stats: &mut *$runner.stats,
            settings: &mut *$runner.settings,
            #[cfg(feature = "cluster")]
            cluster: &mut *$runner.cluster,
            #[cfg(feature = "cluster")]
            asking: &mut *$client.asking,
            clock: $crate::command::Clock {
                now: $runner.now,
                unix_ms: $runner.unix_offset_ms.map(|o| o.wrapping_add($runner.now)),
            },
            client_slots: $runner.client_slots,
            #[cfg(feature = "transactions")]
            transaction: &mut *$client.transaction,
            #[cfg(feature = "pubsub")]
            pubsub: &mut *$runner.pubsub,
            #[cfg(feature = "pubsub")]
            slot: $client.index as u16,
            stream_values: true,
            #[cfg(feature = "client-list")]
            clients: $clients,
            #[cfg(feature = "blocking-lists")]
            block: $block,
            #[cfg(feature = "blocking-lists")]
            blocked: &mut *$runner.blocked,
            #[cfg(feature = "hashes")]
            field_timers: &mut *$runner.field_timers,
        }
    };
}
#[cfg(feature = "blocking-lists")]
pub(super) use context;

impl Runner<'_, '_> {
    /// Parses one request from `input` and runs it, writing its reply to the reply buffer.
    fn step(&mut self, client: &mut Client<'_>, input: &mut [u8]) -> Step {
        let index = client.index;
        let limits = if *client.authenticated || !self.settings.security.requires_auth() {
            self.limits
        } else {
            self.limits.unauthenticated()
        };
        let filled = input.len();
        // Any number of arguments where they can spill into a `Vec`; else `MAX_ARGS`.
        #[cfg(feature = "alloc")]
        let parsed = resp::parse_spilling::<MAX_ARGS>(input, &limits);
        #[cfg(not(feature = "alloc"))]
        let parsed = resp::parse::<MAX_ARGS>(input, &limits);
        #[cfg(feature = "alloc")]
        let out = ReplyWriter::growable(self.reply);
        #[cfg(not(feature = "alloc"))]
        let out = ReplyWriter::new(self.reply);
        let mut out = out.speaking(*client.protocol);
        let mut step = Step {
            consumed: 0,
            written: 0,
            executed: false,
            close: false,
            incomplete: false,
            #[cfg(feature = "extended-commands")]
            silent: false,
            #[cfg(feature = "client-list")]
            clients: None,
            #[cfg(feature = "blocking-lists")]
            block: None,
        };
        match parsed {
            Ok(Parsed::Incomplete) => return Step::INCOMPLETE,
            Ok(Parsed::Empty { consumed }) => step.consumed = consumed,
            Ok(Parsed::Command { command, consumed }) => {
                #[cfg(feature = "blocking-lists")]
                let mut block = None;
                #[cfg(not(feature = "blocking-lists"))]
                let block = ();
                let _ = &block;
                let mut ctx = context!(self, client, &mut step.clients, Some(&mut block));
                let after = command::execute(command.as_slice(), &mut ctx, &mut out);
                #[cfg(feature = "blocking-lists")]
                {
                    step.block = block.map(|block| {
                        let argv = command.as_slice().iter().map(|a| a.to_vec()).collect();
                        (block, argv)
                    });
                }
                step.executed = true;
                #[cfg(feature = "extended-commands")]
                {
                    // Pub/sub confirmations go out whatever the mode, as in Redis.
                    step.silent = client.reply_mode.after_command() && !out.wrote_push();
                }
                match after {
                    Ok(After::Close) => step.close = true,
                    #[cfg(feature = "extended-commands")]
                    Ok(After::More(_)) if step.silent => {}
                    Ok(After::More(more)) => *client.more = Some(more),
                    _ => {}
                }
                if after.is_err() {
                    // The reply buffer holds the largest reply, or grows (with `alloc`) until
                    // memory runs out.
                    out.truncate(0);
                    let _ = out.error("ERR reply too large");
                }
                step.consumed = consumed;
            }
            Err(error) => {
                info!("slot {}: {}, closing", index, error);
                let _ = out.protocol_error(error);
                self.stats.protocol_error_closes += 1;
                step.close = true;
                step.consumed = filled;
            }
        }
        step.written = out.written().len();
        step
    }
}

impl Server<'_> {
    /// The parser's limits now: Redis' `proto-max-bulk-len` and 64 KiB inline requests, or,
    /// where the input buffer cannot grow (no `alloc` feature), its size.
    pub(super) fn limits(&self) -> Limits {
        let capacity = &self.settings.capacity;
        #[cfg(feature = "alloc")]
        return Limits::new(
            capacity.max_bulk_len,
            INLINE_MAX.min(capacity.query_buffer_limit),
        );
        #[cfg(not(feature = "alloc"))]
        Limits::new(
            capacity.max_bulk_len.min(self.limits.max_bulk_len),
            self.limits.max_inline_len,
        )
    }

    /// Sends what the send buffer has room for of a reply that did not fit; whether none is
    /// left.
    #[cfg(feature = "alloc")]
    fn send_pending(&mut self, index: usize) -> bool {
        let conn = &mut self.conns[index];
        if conn.pending.is_empty() {
            return true;
        }
        let rest = conn.pending.get(conn.pending_at..).unwrap_or_default();
        let sent = self
            .sockets
            .tcp_mut(index, conn.socket)
            .send_slice(rest)
            .unwrap_or(0);
        conn.pending_at += sent;
        if conn.pending_at < conn.pending.len() {
            return false;
        }
        conn.drop_pending();
        true
    }

    /// After a reply far larger than usual, gives its memory back.
    #[cfg(feature = "alloc")]
    fn shrink_reply_buffer(&mut self) {
        let usual = self.reply.len();
        if self.reply_vec.len() > 4 * usual {
            self.reply_vec.truncate(usual);
            self.reply_vec.shrink_to(usual);
        }
    }

    /// Reads, executes and replies until input runs out or the send buffer is full.
    pub(super) fn serve(&mut self, index: usize, now: Tick) {
        if self.conns[index].phase != Phase::Open {
            return;
        }
        let handle = self.conns[index].socket;
        let reply_room = self.reply.len();
        let had_input = self.conns[index].input_len > 0;
        // The client took reply bytes since the last look: the write timeout starts over.
        // (Read before this round's replies are queued, which would hide it.)
        if self.sockets.tcp(index, handle).send_queue() < self.conns[index].last_send_queue {
            self.conns[index].write_since = Some(now);
        }
        let mut executed = false;
        let mut close = false;
        let mut blocked = false;
        loop {
            // A client waiting in a blocking pop runs nothing else until it is answered.
            #[cfg(feature = "blocking-lists")]
            if self.is_blocked(index) {
                break;
            }
            #[cfg(feature = "alloc")]
            if !self.send_pending(index) {
                blocked = true; // the rest of a reply larger than the send buffer waits
                break;
            }
            let socket = self.sockets.tcp(index, handle);
            if socket.send_capacity() - socket.send_queue() < reply_room {
                blocked = true; // back-pressure: wait until the client reads
                break;
            }
            if let Some(more) = self.conns[index].more {
                // The rest of a long reply goes before the next command's.
                let mut out =
                    ReplyWriter::new(&mut self.reply).speaking(self.conns[index].protocol);
                let after = command::resume(more, &mut self.store, &mut out);
                self.conns[index].more = match after {
                    Ok(After::More(next)) => Some(next),
                    _ => None,
                };
                let written = out.written().len();
                let _ = self
                    .sockets
                    .tcp_mut(index, handle)
                    .send_slice(&self.reply[..written]);
                // Messages that waited for the reply to be whole go out behind it.
                #[cfg(feature = "pubsub")]
                if self.conns[index].more.is_none() {
                    let conn = &mut self.conns[index];
                    if !conn.held_messages.is_empty() {
                        conn.pending = core::mem::take(&mut conn.held_messages);
                        conn.pending_at = 0;
                    }
                }
                if after == Ok(After::Close) {
                    // A value sent in parts was written meanwhile: its rest is gone.
                    info!("slot {}: a value being sent changed, closing", index);
                    close = true;
                    break;
                }
                continue;
            }
            let timeouts = self.settings.timeouts;
            let limits = self.limits();
            let mut runner = runner!(self, limits, now);
            let socket = self.sockets.tcp_mut(index, handle);
            let (mut client, input, mut filled) = Client::of(&mut self.conns[index], index);
            let mut step = Step::INCOMPLETE;
            if filled == 0 {
                // A whole request in the receive buffer runs from there: no copy, and an idle
                // client's input buffer is never touched (nor its memory paged in).
                step = socket
                    .recv(|ring| {
                        let step = runner.step(&mut client, ring);
                        (step.consumed, step)
                    })
                    .unwrap_or(Step::INCOMPLETE);
            }
            if step.incomplete {
                // Part of a request (or one split where the receive buffer wraps): gather it
                // in the input buffer.
                while filled < input.len() && socket.can_recv() {
                    match socket.recv_slice(&mut input[filled..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => filled += n,
                    }
                }
                if filled == 0 {
                    break;
                }
                step = runner.step(&mut client, &mut input[..filled]);
                let room = input.len();
                let conn = &mut self.conns[index];
                conn.input_len = filled;
                if step.incomplete {
                    if filled < room {
                        break; // the rest has not arrived
                    }
                    // A request larger than the input buffer so far.
                    #[cfg(feature = "alloc")]
                    {
                        let limit = self.settings.capacity.query_buffer_limit;
                        if conn.grow_input(limit) {
                            continue;
                        }
                        // As Redis: past `client-query-buffer-limit`, the client is closed.
                        info!(
                            "slot {}: request over the query buffer limit ({} bytes), closing",
                            index, limit
                        );
                    }
                    #[cfg(not(feature = "alloc"))]
                    {
                        let _ = socket.send_slice(TOO_BIG);
                        info!(
                            "slot {}: request larger than the input buffer, closing",
                            index
                        );
                    }
                    self.stats.protocol_error_closes += 1;
                    close = true;
                    break;
                }
                conn.consume(step.consumed);
                #[cfg(feature = "alloc")]
                conn.shrink_input();
            }
            executed |= step.executed;
            // What the command published goes out first: a subscriber publishing to itself
            // hears the message before the reply, as from Redis.
            #[cfg(feature = "pubsub")]
            {
                self.deliver_messages(now);
                self.conns[index].subscribed = self.pubsub.listens(index as u16);
                #[cfg(feature = "blocking-lists")]
                {
                    self.conns[index].subscribed |= self.is_blocked(index);
                }
            }
            if self.settings.timeouts != timeouts {
                self.timeouts_changed = true;
            }
            #[allow(unused_mut)]
            let mut written = step.written;
            #[cfg(feature = "client-list")]
            if let Some(request) = step.clients.take() {
                let (len, close_me) = self.answer_clients(index, request, now);
                written = len;
                step.close |= close_me;
            }
            #[cfg(feature = "alloc")]
            let reply = self.reply_vec.get(..written).unwrap_or_default();
            #[cfg(not(feature = "alloc"))]
            let reply = self.reply.get(..written).unwrap_or_default();
            // Error statistics come with `extended-commands` (the host): flash on the boards.
            #[cfg(feature = "extended-commands")]
            if let Some(error) = reply.strip_prefix(b"-") {
                self.stats.total_error_replies += 1;
                self.stats.errorstats.count(error);
            }
            // A reply dropped by `CLIENT REPLY OFF|SKIP` counted above, as in Redis.
            #[cfg(feature = "extended-commands")]
            let (reply, written) = if step.silent {
                (&[][..], 0)
            } else {
                (reply, written)
            };
            #[cfg(all(feature = "extended-commands", not(feature = "alloc")))]
            let _ = written; // the whole reply fits the send buffer's room: no rest to keep
            let sent = self
                .sockets
                .tcp_mut(index, handle)
                .send_slice(reply)
                .unwrap_or(0);
            // A reply larger than the send buffer's room: the rest goes out as it drains. The
            // reply buffer itself becomes the connection's pending reply (no copy), and a
            // fresh one of the usual size takes its place.
            #[cfg(feature = "alloc")]
            if sent < written {
                let usual = self.reply.len();
                let mut rest = core::mem::replace(&mut self.reply_vec, alloc::vec![0; usual]);
                rest.truncate(written);
                let conn = &mut self.conns[index];
                conn.pending = rest;
                conn.pending_at = sent;
            } else {
                self.shrink_reply_buffer();
            }
            #[cfg(not(feature = "alloc"))]
            let _ = sent;
            // Monitors hear of a command once it has run: a monitor's own command, after its
            // reply.
            #[cfg(feature = "pubsub")]
            self.deliver_monitor_feed(now);
            #[cfg(feature = "blocking-lists")]
            {
                // A pop that found nothing: the client waits (its command wrote no reply).
                if let Some((block, argv)) = step.block.take() {
                    self.block(index, argv, block);
                }
                // A push made keys that clients wait on into lists: serve them.
                self.serve_ready_keys(now);
            }
            if step.close {
                close = true;
                break;
            }
        }

        let socket = self.sockets.tcp(index, handle);
        // The peer will send no more: once the input is used up (or only half a command that
        // can never complete is left), there is nothing left to do. Commands held up by
        // back-pressure are still answered; TCP's half-close ends only the peer's sending.
        let peer_done = !socket.may_recv() && !socket.can_recv();
        let send_queue = socket.send_queue();
        if close || (peer_done && !blocked) {
            self.begin_close(index, now);
            return;
        }
        let conn = &mut self.conns[index];
        conn.blocked = blocked;
        if executed {
            conn.idle_since = now;
        }
        if conn.input_len > 0 && (executed || !had_input) {
            // A new command started arriving (after the one just run, or from nothing).
            conn.read_since = now;
        }
        if send_queue == 0 {
            conn.write_since = None;
        } else if conn.write_since.is_none() {
            conn.write_since = Some(now);
        }
        conn.last_send_queue = send_queue;
        self.arm_timers(index);
    }
}
