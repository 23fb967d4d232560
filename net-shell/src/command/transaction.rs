//! `MULTI`, `EXEC`, `DISCARD`, `WATCH`, `UNWATCH`, as Redis 7's `multi.c` (with the `alloc`
//! feature: queued commands and watched keys take memory as they come).
//!
//! While a transaction is open, every command but `EXEC`, `DISCARD`, `MULTI`, `WATCH` and
//! `QUIT` is queued (its words, re-encoded as a request) and answered `+QUEUED`; one refused
//! before it could be queued (unknown, wrong arity, not authenticated) dooms the transaction,
//! and `EXEC` then answers `-EXECABORT`. `WATCH` notes each key's write stamp (the store gives
//! every key a new one on each write, `EXPIRE` included); `EXEC` answers the null array when a
//! watched key was written, deleted, or has expired since.

use alloc::vec::Vec;

use super::MAX_ARGS;
use super::{error, execute, ok, After, Context, Reply, ReplyWriter};
use crate::resp::{self, Limits, Parsed};

/// A connection's transaction and watched keys.
#[derive(Debug, Default)]
pub struct Transaction {
    /// `MULTI` was given and neither `EXEC` nor `DISCARD` yet.
    open: bool,
    /// A command was refused while queueing: `EXEC` aborts.
    doomed: bool,
    /// The queued commands, each as a multibulk request.
    queued: Vec<u8>,
    /// How many are queued.
    count: usize,
    /// Watched keys and their write stamps when watched (`None`: no such key then).
    watched: Vec<(Vec<u8>, Option<u32>)>,
}

impl Transaction {
    /// No transaction, nothing watched.
    pub const fn new() -> Self {
        Self {
            open: false,
            doomed: false,
            queued: Vec::new(),
            count: 0,
            watched: Vec::new(),
        }
    }

    /// How many commands are queued (`CLIENT LIST`'s `multi` field).
    #[cfg(feature = "client-list")]
    pub(crate) fn queued_count(&self) -> usize {
        self.count
    }

    /// Whether `MULTI` is in force.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// A command was refused while the transaction is open: `EXEC` will abort.
    pub(crate) fn doom(&mut self) {
        if self.open {
            self.doomed = true;
        }
    }

    /// Queues `argv`; returns the bytes now queued.
    pub(crate) fn queue(&mut self, argv: &[&[u8]]) -> usize {
        let mut header = [0u8; 24];
        let mut push_len = |queued: &mut Vec<u8>, marker: u8, n: usize| {
            let text = crate::decimal::Decimal::new(n as u64);
            let digits = text.as_bytes();
            header[0] = marker;
            header[1..=digits.len()].copy_from_slice(digits);
            header[digits.len() + 1..digits.len() + 3].copy_from_slice(b"\r\n");
            queued.extend_from_slice(&header[..digits.len() + 3]);
        };
        push_len(&mut self.queued, b'*', argv.len());
        for arg in argv {
            push_len(&mut self.queued, b'$', arg.len());
            self.queued.extend_from_slice(arg);
            self.queued.extend_from_slice(b"\r\n");
        }
        self.count += 1;
        self.queued.len()
    }

    /// Ends the transaction (`EXEC`, `DISCARD`) and forgets the watched keys.
    fn end(&mut self) {
        *self = Self::new();
    }
}

/// Whether a command runs at once inside a transaction instead of being queued (Redis'
/// `processCommand`).
pub(crate) fn runs_inside(name: &str) -> bool {
    matches!(name, "exec" | "discard" | "multi" | "watch" | "quit")
}

/// `MULTI`.
pub(crate) fn multi(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if ctx.transaction.open {
        return error(out, "ERR MULTI calls can not be nested");
    }
    ctx.transaction.open = true;
    ok(out)
}

/// `DISCARD`.
pub(crate) fn discard(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.transaction.open {
        return error(out, "ERR DISCARD without MULTI");
    }
    ctx.transaction.end();
    ok(out)
}

/// `WATCH key [key ...]`.
pub(crate) fn watch(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if ctx.transaction.open {
        return error(out, "ERR WATCH inside MULTI is not allowed");
    }
    let now = ctx.clock.now;
    for &key in &argv[1..] {
        if ctx.transaction.watched.iter().any(|(k, _)| k == key) {
            continue;
        }
        let stamp = ctx.store.stamp(key, now);
        ctx.transaction.watched.push((key.to_vec(), stamp));
    }
    ok(out)
}

/// `UNWATCH`.
pub(crate) fn unwatch(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.transaction.watched = Vec::new();
    ok(out)
}

/// `EXEC`: runs the queued commands and answers their replies as one array; `-EXECABORT` if
/// one was refused while queueing, the null array if a watched key changed.
pub(crate) fn exec(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if !ctx.transaction.open {
        return error(out, "ERR EXEC without MULTI");
    }
    let Transaction {
        doomed,
        mut queued,
        count,
        watched,
        ..
    } = core::mem::take(ctx.transaction);
    if doomed {
        return error(
            out,
            "EXECABORT Transaction discarded because of previous errors.",
        );
    }
    let now = ctx.clock.now;
    if watched
        .iter()
        .any(|(key, stamp)| ctx.store.stamp(key, now) != *stamp)
    {
        out.null_array()?;
        return Ok(After::Continue);
    }
    out.array_header(count)?;
    // The replies form one array: each is written whole, none sent in parts.
    ctx.stream_values = false;
    let limits = Limits::new(usize::MAX, usize::MAX);
    let mut at = 0;
    for _ in 0..count {
        let Some(rest) = queued.get_mut(at..) else {
            break;
        };
        let Ok(Parsed::Command { command, consumed }) =
            resp::parse_spilling::<MAX_ARGS>(rest, &limits)
        else {
            break;
        };
        execute(command.as_slice(), ctx, out)?;
        // A command answered from the connection table cannot be one element of an array.
        #[cfg(feature = "client-list")]
        if ctx.clients.take().is_some() {
            out.error("ERR CLIENT LIST and CLIENT KILL cannot run inside a transaction here")?;
        }
        at += consumed;
    }
    Ok(After::Continue)
}
