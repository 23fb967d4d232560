//! Serving one connection: read what fits, parse, execute, reply, until the input runs out or
//! the send buffer is full.

use timer_core::Tick;

use super::{Server, MAX_ARGS};
use crate::command::{self, After, Clock, Context};
use crate::connection::Phase;
use crate::resp::{self, Parsed, ReplyWriter};

const TOO_BIG: &[u8] = b"-ERR Protocol error: request does not fit the input buffer\r\n";

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
            // Pull what fits into the input buffer.
            {
                let conn = &mut self.conns[index];
                let socket = self.sockets.tcp_mut(index, handle);
                while conn.input_len < conn.input.len() && socket.can_recv() {
                    match socket.recv_slice(&mut conn.input[conn.input_len..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => conn.input_len += n,
                    }
                }
            }
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
            let client_slots = self.conns.len();
            let conn = &mut self.conns[index];
            let filled = conn.input_len;
            let limits = if conn.authenticated || !self.settings.security.requires_auth() {
                self.limits
            } else {
                self.limits.unauthenticated()
            };
            let parsed = resp::parse::<MAX_ARGS>(&mut conn.input[..filled], &limits);
            let mut out = ReplyWriter::new(&mut self.reply);
            let consumed = match parsed {
                Ok(Parsed::Incomplete) => {
                    if filled == conn.input.len() {
                        // A request larger than the input buffer can never complete.
                        let _ = self.sockets.tcp_mut(index, handle).send_slice(TOO_BIG);
                        info!(
                            "slot {}: request larger than the input buffer, closing",
                            index
                        );
                        self.stats.protocol_error_closes += 1;
                        close = true;
                    }
                    break;
                }
                Ok(Parsed::Empty { consumed }) => consumed,
                Ok(Parsed::Command { command, consumed }) => {
                    let timeouts = self.settings.timeouts;
                    let mut ctx = Context {
                        started: self.started,
                        client_id: conn.id,
                        client_name: &mut conn.name,
                        authenticated: &mut conn.authenticated,
                        store: &mut self.store,
                        stats: &mut self.stats,
                        settings: &mut self.settings,
                        clock: Clock {
                            now,
                            unix_ms: self.unix_offset_ms.map(|o| o.wrapping_add(now)),
                        },
                        client_slots,
                    };
                    let after = command::execute(command.as_slice(), &mut ctx, &mut out);
                    executed = true;
                    if self.settings.timeouts != timeouts {
                        self.timeouts_changed = true;
                    }
                    match after {
                        Ok(After::Close) => close = true,
                        Ok(After::More(more)) => self.conns[index].more = Some(more),
                        _ => {}
                    }
                    if after.is_err() {
                        // Cannot happen: the reply buffer holds the largest reply.
                        out = ReplyWriter::new(&mut self.reply);
                        let _ = out.error("ERR reply too large");
                    }
                    consumed
                }
                Err(error) => {
                    info!("slot {}: {}, closing", index, error);
                    let _ = out.protocol_error(error);
                    self.stats.protocol_error_closes += 1;
                    close = true;
                    filled
                }
            };
            let written = out.written().len();
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
            self.conns[index].consume(consumed);
            if close {
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
