//! Serving one connection: read what fits, parse, execute, reply, until the input runs out or
//! the send buffer is full.

use timer_core::Tick;

use super::{Server, MAX_ARGS};
use crate::command::{self, After, ClientName, Clock, Context, Continuation};
use crate::config::Settings;
use crate::connection::{Connection, Phase};
use crate::resp::{self, Limits, Parsed, ReplyWriter};
use crate::stats::Stats;
use crate::store::Store;

const TOO_BIG: &[u8] = b"-ERR Protocol error: request does not fit the input buffer\r\n";

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
}

impl Step {
    const INCOMPLETE: Self = Self {
        consumed: 0,
        written: 0,
        executed: false,
        close: false,
        incomplete: true,
    };
}

/// Everything but the socket that running one request touches: borrowed from the server
/// field by field, so a request can run while the socket lends it its receive buffer.
struct Runner<'s, 'a> {
    store: &'s mut Store<'a>,
    stats: &'s mut Stats,
    settings: &'s mut Settings,
    reply: &'s mut [u8],
    limits: Limits,
    started: Tick,
    unix_offset_ms: Option<u64>,
    client_slots: usize,
    now: Tick,
}

/// The parts of a connection a request reads and changes (not its input buffer, which may be
/// what the request is parsed from).
struct Client<'c> {
    index: usize,
    id: u64,
    name: &'c mut ClientName,
    authenticated: &'c mut bool,
    more: &'c mut Option<Continuation>,
}

impl<'c> Client<'c> {
    /// Borrows them from `conn`, with its input buffer.
    fn of(conn: &'c mut Connection<'_>, index: usize) -> (Self, &'c mut [u8], usize) {
        let client = Client {
            index,
            id: conn.id,
            name: &mut conn.name,
            authenticated: &mut conn.authenticated,
            more: &mut conn.more,
        };
        (client, &mut conn.input, conn.input_len)
    }
}

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
        let parsed = resp::parse::<MAX_ARGS>(input, &limits);
        let mut out = ReplyWriter::new(self.reply);
        let mut step = Step {
            consumed: 0,
            written: 0,
            executed: false,
            close: false,
            incomplete: false,
        };
        match parsed {
            Ok(Parsed::Incomplete) => return Step::INCOMPLETE,
            Ok(Parsed::Empty { consumed }) => step.consumed = consumed,
            Ok(Parsed::Command { command, consumed }) => {
                let mut ctx = Context {
                    started: self.started,
                    client_id: client.id,
                    client_name: client.name,
                    authenticated: client.authenticated,
                    store: self.store,
                    stats: self.stats,
                    settings: self.settings,
                    clock: Clock {
                        now: self.now,
                        unix_ms: self.unix_offset_ms.map(|o| o.wrapping_add(self.now)),
                    },
                    client_slots: self.client_slots,
                };
                let after = command::execute(command.as_slice(), &mut ctx, &mut out);
                step.executed = true;
                match after {
                    Ok(After::Close) => step.close = true,
                    Ok(After::More(more)) => *client.more = Some(more),
                    _ => {}
                }
                if after.is_err() {
                    // Cannot happen: the reply buffer holds the largest reply.
                    out = ReplyWriter::new(self.reply);
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
    /// Reads, executes and replies until input runs out or the send buffer is full.
    pub(super) fn serve(&mut self, index: usize, now: Tick) {
        if self.conns[index].phase != Phase::Open {
            return;
        }
        let handle = self.conns[index].socket;
        let reply_room = self.reply.len();
        let had_input = self.conns[index].input_len > 0;
        // The client took reply bytes since the last look: the write timeout starts over.
        // (Measured before this round's replies are queued, which would hide it.)
        if self.sockets.tcp(index, handle).send_queue() < self.conns[index].last_send_queue {
            self.conns[index].write_since = Some(now);
        }
        let mut executed = false;
        let mut close = false;
        let mut blocked = false;
        loop {
            let socket = self.sockets.tcp(index, handle);
            if socket.send_capacity() - socket.send_queue() < reply_room {
                blocked = true; // back-pressure: wait until the client reads
                break;
            }
            if let Some(more) = self.conns[index].more {
                // The rest of a long reply goes before the next command's.
                let mut out = ReplyWriter::new(&mut self.reply);
                let after = command::resume(more, &mut out);
                self.conns[index].more = match after {
                    Ok(After::More(next)) => Some(next),
                    _ => None,
                };
                let written = out.written().len();
                let _ = self
                    .sockets
                    .tcp_mut(index, handle)
                    .send_slice(&self.reply[..written]);
                continue;
            }
            let timeouts = self.settings.timeouts;
            let mut runner = Runner {
                store: &mut self.store,
                stats: &mut self.stats,
                settings: &mut self.settings,
                reply: &mut self.reply,
                limits: self.limits,
                started: self.started,
                unix_offset_ms: self.unix_offset_ms,
                client_slots: self.conns.len(),
                now,
            };
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
                    if filled == room {
                        // A request larger than the input buffer can never complete.
                        let _ = socket.send_slice(TOO_BIG);
                        info!(
                            "slot {}: request larger than the input buffer, closing",
                            index
                        );
                        self.stats.protocol_error_closes += 1;
                        close = true;
                    }
                    break;
                }
                conn.consume(step.consumed);
            }
            executed |= step.executed;
            if self.settings.timeouts != timeouts {
                self.timeouts_changed = true;
            }
            let written = step.written;
            // Error statistics come with `extended-commands` (the host): flash on the boards.
            #[cfg(feature = "extended-commands")]
            if let Some(error) = self.reply[..written].strip_prefix(b"-") {
                self.stats.total_error_replies += 1;
                self.stats.errorstats.count(error);
            }
            let _ = self
                .sockets
                .tcp_mut(index, handle)
                .send_slice(&self.reply[..written]);
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
