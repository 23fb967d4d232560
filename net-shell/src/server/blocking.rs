//! Clients waiting in a blocking pop (`BLPOP`, `BRPOP`, `BLMOVE`, `BRPOPLPUSH`): their keys,
//! their commands, and their timeouts on timer-core's heap, one timer per client slot at most,
//! so the heap never fills.
//!
//! A push that makes a waited key a list marks it ready; after the command that pushed, each
//! ready key's clients are served first come first served, by running their command again
//! without blocking, while the key holds a list. A timeout answers the null array in the first
//! poll after it ran out (at the tick after its deadline, since the command came some time
//! within its own tick), never before. A waiting client runs no other command (what it sends
//! meanwhile waits its turn), is not closed for being idle, and is forgotten when it closes.

use alloc::vec::Vec;

use timer_core::{Tick, TimerId, TimerQueue};

use super::serve::{context, runner, Client, Runner};
use super::Server;
use crate::command::{self, Block};
use crate::resp::{Protocol, ReplyWriter};
use crate::store::ValueKind;

/// A client waiting in a blocking pop.
#[derive(Debug)]
pub(crate) struct BlockedPop {
    /// Its command, run again when one of its keys is ready.
    argv: Vec<Vec<u8>>,
    /// The keys it waits on.
    keys: Vec<Vec<u8>>,
    /// Its timeout (`None`: it waits for ever).
    timer: Option<TimerId>,
}

/// How `CLIENT UNBLOCK` ends a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "client-list"), allow(dead_code))]
pub(crate) enum Unblocked {
    /// As if the timeout ran out.
    Timeout,
    /// With Redis' `-UNBLOCKED` error.
    Error,
}

impl Server<'_> {
    /// Client `index` waits: `block` says on which keys and until when; `argv` is the command
    /// to run again.
    pub(super) fn block(&mut self, index: usize, argv: Vec<Vec<u8>>, block: Block) {
        let slot = index as u16;
        // One timer per client slot at most, in a heap of as many: it cannot be full. It fires
        // at the tick after the deadline (see `Block::deadline`).
        let timer = block
            .deadline
            .and_then(|at| self.block_timers.insert(at.saturating_add(1), slot).ok());
        self.blocked_keys.wait(slot, &block.keys);
        let conn = &mut self.conns[index];
        conn.blocked_pop = Some(BlockedPop {
            argv,
            keys: block.keys,
            timer,
        });
        // As in Redis, a waiting client is never idle.
        conn.subscribed = true;
        self.stats.blocked_clients += 1;
        self.arm_timers(index);
    }

    /// Whether client `index` waits in a blocking pop.
    pub(super) fn is_blocked(&self, index: usize) -> bool {
        self.conns[index].blocked_pop.is_some()
    }

    /// Drops client `index`'s wait, if any (its keys, its timer): it closed, or it is served.
    pub(super) fn forget_blocked(&mut self, index: usize) -> bool {
        let Some(pop) = self.conns[index].blocked_pop.take() else {
            return false;
        };
        if let Some(id) = pop.timer {
            let _ = self.block_timers.cancel(id);
        }
        self.blocked_keys.leave(index as u16, &pop.keys);
        self.stats.blocked_clients -= 1;
        true
    }

    /// Ends client `index`'s wait with `reply`: the reply goes out, the client's timers are
    /// those of a client that just ran a command, and what it sent meanwhile runs next.
    fn unblock_with(&mut self, index: usize, reply: &[u8], now: Tick) {
        if !self.forget_blocked(index) {
            return;
        }
        let conn = &mut self.conns[index];
        conn.subscribed = self.pubsub.listens(index as u16);
        conn.idle_since = now;
        self.queue_message(index, reply, now);
        self.arm_timers(index);
        self.mark(index);
    }

    /// Serves the clients waiting on the keys commands have made ready, until none is left
    /// (a served `BLMOVE` may make another key ready).
    pub(super) fn serve_ready_keys(&mut self, now: Tick) {
        loop {
            let ready = self.blocked_keys.take_ready();
            if ready.is_empty() {
                return;
            }
            for key in ready {
                for slot in self.blocked_keys.waiting_on(&key) {
                    if self.store.value_kind(&key, now) != Some(ValueKind::List) {
                        break;
                    }
                    self.serve_waiting(usize::from(slot), now);
                }
            }
        }
    }

    /// Runs waiting client `index`'s command again, without blocking: a nil answer means its
    /// keys hold nothing for it yet, and it waits on; any other answer ends its wait.
    fn serve_waiting(&mut self, index: usize, now: Tick) {
        let Some(pop) = &self.conns[index].blocked_pop else {
            return;
        };
        let argv = pop.argv.clone();
        let words: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let protocol = self.conns[index].protocol;
        let mut bytes = Vec::new();
        let mut out = ReplyWriter::growable(&mut bytes).speaking(protocol);
        {
            let limits = self.limits();
            let runner: Runner<'_, '_> = runner!(self, limits, now);
            let (client, _, _) = Client::of(&mut self.conns[index], index);
            #[cfg(feature = "client-list")]
            let mut clients = None;
            #[cfg(not(feature = "client-list"))]
            let clients = ();
            let _ = &clients;
            let mut ctx = context!(runner, client, &mut clients, None);
            if command::rerun(&words, &mut ctx, &mut out).is_err() {
                out.truncate(0);
                let _ = out.error("ERR reply too large");
            }
        }
        let len = out.len();
        if is_nil(&bytes[..len], protocol) {
            return;
        }
        self.unblock_with(index, &bytes[..len], now);
        // What the command published (its keyspace events) goes out too.
        self.deliver_messages(now);
    }

    /// Answers every client whose timeout has come by `now` with the null array, as Redis
    /// answers a blocked list pop that timed out.
    pub(super) fn expire_blocked(&mut self, now: Tick) {
        while let Some(expired) = self.block_timers.pop_expired(now) {
            let index = usize::from(expired.value);
            if let Some(pop) = self
                .conns
                .get_mut(index)
                .and_then(|c| c.blocked_pop.as_mut())
            {
                pop.timer = None; // fired: nothing to cancel
                self.end_wait(index, Unblocked::Timeout, now);
            }
        }
    }

    /// Ends client `index`'s wait as `how` says (`CLIENT UNBLOCK`, a timeout); whether it was
    /// waiting.
    pub(super) fn end_wait(&mut self, index: usize, how: Unblocked, now: Tick) -> bool {
        if !self.is_blocked(index) {
            return false;
        }
        let mut bytes = Vec::new();
        let mut out = ReplyWriter::growable(&mut bytes).speaking(self.conns[index].protocol);
        let _ = match how {
            Unblocked::Timeout => out.null_array(),
            Unblocked::Error => out.error("UNBLOCKED client unblocked via CLIENT UNBLOCK"),
        };
        let len = out.len();
        self.unblock_with(index, &bytes[..len], now);
        true
    }

    /// Ends the wait of every blocked client whose keys' slot this node no longer serves
    /// (the controller pushed a topology, or a migration moved the slot away), with the
    /// redirection Redis gives it (see `command::blocked_redirect`): else it would
    /// wait for a push that now goes to another node. Looks only when the routing changed.
    #[cfg(feature = "cluster")]
    pub(super) fn redirect_blocked(&mut self, now: Tick) {
        let done = self
            .cluster
            .migration()
            .is_some_and(|m| m.state() == crate::cluster::MigrationState::Done);
        let routing = (self.cluster.changes(), done);
        if routing == self.routing_seen {
            return;
        }
        self.routing_seen = routing;
        for index in 0..self.conns.len() {
            let Some(key) = self.conns[index]
                .blocked_pop
                .as_ref()
                .and_then(|pop| pop.keys.first())
            else {
                continue;
            };
            let mut text = heapless::String::new();
            let Some(error) = command::blocked_redirect(&self.cluster, key, &mut text) else {
                continue;
            };
            let mut bytes = Vec::new();
            let mut out = ReplyWriter::growable(&mut bytes).speaking(self.conns[index].protocol);
            let _ = out.error(error);
            let len = out.len();
            self.unblock_with(index, &bytes[..len], now);
        }
    }

    /// When the next blocked client's timeout comes.
    pub(super) fn next_block_deadline(&self) -> Option<Tick> {
        self.block_timers.next_deadline()
    }
}

/// Whether `reply` is nil: the null array or bulk string (RESP2), or null (RESP3).
fn is_nil(reply: &[u8], protocol: Protocol) -> bool {
    match protocol {
        Protocol::Resp2 => reply == b"*-1\r\n" || reply == b"$-1\r\n",
        Protocol::Resp3 => reply == b"_\r\n",
    }
}
