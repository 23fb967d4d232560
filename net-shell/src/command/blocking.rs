//! The blocking pops (`BLPOP`, `BRPOP`, `BLMOVE`, `BRPOPLPUSH`), as Redis 7.0's `t_list.c`
//! and `blocked.c`: a pop that finds an element answers at once; one that finds none asks the
//! server to let the client wait ([`Block`]) on its keys, in the order clients began to wait
//! on each key ([`BlockedKeys`]), until a push makes one of them a list or its timeout runs
//! out. The server keeps the waiting clients and their timeouts (`server/blocking.rs`); when a
//! key is ready it runs the waiting client's command again, without blocking.
//!
//! Inside `EXEC` nothing blocks: an empty pop answers nil at once, as Redis does for a
//! client that may not block.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;

use super::lists::{lmove_generic, parse_end, parse_mpop, pop_one, pop_range_with_key, End};
use super::{error, After, Context, Reply, ReplyWriter, SYNTAX};
use crate::store::ValueKind;
use timer_core::Tick;

/// What a pop that found nothing asks of the server: to wait on `keys`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The keys, in the order the command named them.
    pub(crate) keys: Vec<Vec<u8>>,
    /// The last tick the client may still be served (`None`: it waits for ever, a timeout of
    /// 0). The command came some time within the tick it ran at, so the wait runs out only
    /// when the tick after this one begins: never early, as a key's deadline.
    pub(crate) deadline: Option<Tick>,
}

/// The keys clients wait on, each with its clients in the order they began waiting (slots),
/// and the keys a command has just made into lists.
#[derive(Debug, Default)]
pub struct BlockedKeys {
    waiters: BTreeMap<Vec<u8>, VecDeque<u16>>,
    ready: Vec<Vec<u8>>,
}

impl BlockedKeys {
    /// No one waits.
    pub const fn new() -> Self {
        Self {
            waiters: BTreeMap::new(),
            ready: Vec::new(),
        }
    }

    /// Client `slot` waits on `keys`, after those already waiting on each.
    pub(crate) fn wait(&mut self, slot: u16, keys: &[Vec<u8>]) {
        for key in keys {
            let queue = self.waiters.entry(key.clone()).or_default();
            if !queue.contains(&slot) {
                queue.push_back(slot);
            }
        }
    }

    /// Client `slot` waits on `keys` no more.
    pub(crate) fn leave(&mut self, slot: u16, keys: &[Vec<u8>]) {
        for key in keys {
            if let Some(queue) = self.waiters.get_mut(key.as_slice()) {
                queue.retain(|&s| s != slot);
                if queue.is_empty() {
                    self.waiters.remove(key.as_slice());
                }
            }
        }
    }

    /// `key` became a list: if clients wait on it, it is ready for them.
    pub(crate) fn signal(&mut self, key: &[u8]) {
        if self.waiters.contains_key(key) && !self.ready.iter().any(|k| k == key) {
            self.ready.push(key.to_vec());
        }
    }

    /// The keys made ready since the last call, in the order they became ready.
    pub(crate) fn take_ready(&mut self) -> Vec<Vec<u8>> {
        core::mem::take(&mut self.ready)
    }

    /// The clients waiting on `key`, first first.
    pub(crate) fn waiting_on(&self, key: &[u8]) -> Vec<u16> {
        self.waiters
            .get(key)
            .map_or_else(Vec::new, |queue| queue.iter().copied().collect())
    }
}

/// Redis' `getTimeoutFromObjectOrReply` in seconds: a decimal number of seconds, truncated
/// to milliseconds; 0 for no timeout. The deadline, `None` for none.
fn timeout(word: &[u8], now: Tick) -> Result<Option<Tick>, &'static str> {
    const NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
    let seconds: f64 = core::str::from_utf8(word)
        .ok()
        .filter(|text| !text.is_empty() && !text.starts_with(char::is_whitespace))
        .and_then(|text| text.parse().ok())
        .filter(|seconds: &f64| !seconds.is_nan())
        .ok_or(NOT_FLOAT)?;
    // `(long long)(seconds * 1000.0)`: toward zero; out of range, x86-64's conversion gives
    // the least integer (so Redis calls a huge timeout negative).
    let product = seconds * 1000.0;
    let ms = if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&product) {
        product as i64
    } else {
        i64::MIN
    };
    if ms < 0 {
        return Err("ERR timeout is negative");
    }
    if ms == 0 {
        return Ok(None);
    }
    let now = i64::try_from(now).unwrap_or(i64::MAX);
    if ms > i64::MAX - now {
        return Err("ERR timeout is out of range");
    }
    Ok(Some((now + ms) as Tick))
}

/// Whether this command may make its client wait: not inside `EXEC`, not when the server runs
/// it again for a waiting client.
fn may_block(ctx: &Context<'_, '_>) -> bool {
    ctx.block.is_some() && ctx.stream_values
}

/// Asks the server to let the client wait.
fn wait(ctx: &mut Context<'_, '_>, keys: &[&[u8]], deadline: Option<Tick>) -> Reply {
    if let Some(block) = ctx.block.as_deref_mut() {
        *block = Some(Block {
            keys: keys.iter().map(|key| key.to_vec()).collect(),
            deadline,
        });
    }
    Ok(After::Continue)
}

/// Redis' `blockingPopGenericCommand`: `BLPOP`/`BRPOP key … timeout`. The first key holding
/// a list is popped (`[key, element]`); with none, the client waits, or (where it may not)
/// hears the null array.
fn bpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>, end: End) -> Reply {
    let deadline = match timeout(argv[argv.len() - 1], ctx.clock.now) {
        Ok(deadline) => deadline,
        Err(text) => return error(out, text),
    };
    let keys = &argv[1..argv.len() - 1];
    for &key in keys {
        match ctx.list(key) {
            Err(wrong) => return wrong.reply(out),
            Ok(None) => {}
            Ok(Some(_)) => {
                out.array_header(2)?;
                out.bulk(key)?;
                return match pop_one(ctx, out, key, end) {
                    Ok(()) => Ok(After::Continue),
                    Err(reply) => reply,
                };
            }
        }
    }
    if !may_block(ctx) {
        out.null_array()?;
        return Ok(After::Continue);
    }
    wait(ctx, keys, deadline)
}

/// `BLMPOP timeout numkeys key … LEFT|RIGHT [COUNT count]`: `LMPOP`, or a wait (the options
/// are read before the timeout, as in Redis).
pub(crate) fn blmpop(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let mpop = match parse_mpop(argv, 2) {
        Ok(mpop) => mpop,
        Err(text) => return error(out, text),
    };
    let deadline = match timeout(argv[1], ctx.clock.now) {
        Ok(deadline) => deadline,
        Err(text) => return error(out, text),
    };
    for &key in mpop.keys {
        match ctx.list(key) {
            Err(wrong) => return wrong.reply(out),
            Ok(None) => {}
            Ok(Some(_)) => {
                return match pop_range_with_key(ctx, out, key, mpop.end, mpop.count) {
                    Ok(()) => Ok(After::Continue),
                    Err(reply) => reply,
                };
            }
        }
    }
    if !may_block(ctx) {
        out.null_array()?;
        return Ok(After::Continue);
    }
    wait(ctx, mpop.keys, deadline)
}

/// `BLPOP key … timeout`.
pub(crate) fn blpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    bpop(ctx, argv, out, End::Head)
}

/// `BRPOP key … timeout`.
pub(crate) fn brpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    bpop(ctx, argv, out, End::Tail)
}

/// Redis' `blmoveGenericCommand`: an `LMOVE` if the source holds a list, else a wait on it
/// (or, where the client may not wait, nil).
fn bmove(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    (source, destination): (&[u8], &[u8]),
    (from, to): (End, End),
    timeout_word: &[u8],
) -> Reply {
    let deadline = match timeout(timeout_word, ctx.clock.now) {
        Ok(deadline) => deadline,
        Err(text) => return error(out, text),
    };
    match ctx.store.value_kind(source, ctx.clock.now) {
        Some(ValueKind::List) => lmove_generic(ctx, out, (source, destination), from, to),
        Some(_) => error(out, super::types::WRONGTYPE),
        None if may_block(ctx) => wait(ctx, &[source], deadline),
        None => super::bulk_or_nil(out, None),
    }
}

/// `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout`.
pub(crate) fn blmove(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (Some(from), Some(to)) = (parse_end(argv[3]), parse_end(argv[4])) else {
        return error(out, SYNTAX);
    };
    bmove(ctx, out, (argv[1], argv[2]), (from, to), argv[5])
}

/// `BRPOPLPUSH source destination timeout`: `BLMOVE … RIGHT LEFT`.
pub(crate) fn brpoplpush(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    bmove(
        ctx,
        out,
        (argv[1], argv[2]),
        (End::Tail, End::Head),
        argv[3],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_seconds_truncated_to_milliseconds_as_redis_reads_them() {
        assert_eq!(timeout(b"0", 1_000), Ok(None));
        assert_eq!(timeout(b"1", 1_000), Ok(Some(2_000)));
        assert_eq!(timeout(b"0.05", 1_000), Ok(Some(1_050)));
        assert_eq!(timeout(b"1e-1", 1_000), Ok(Some(1_100)));
        assert_eq!(
            timeout(b"0.0009", 1_000),
            Ok(None),
            "under 1 ms: forever, as Redis"
        );
        assert_eq!(timeout(b"-0.0001", 1_000), Ok(None));
        assert_eq!(timeout(b"-1", 1_000), Err("ERR timeout is negative"));
        for bad in [&b"x"[..], b"", b" 1", b"1 ", b"nan"] {
            assert_eq!(
                timeout(bad, 1_000),
                Err("ERR timeout is not a float or out of range"),
                "{bad:?}"
            );
        }
        assert_eq!(timeout(b"1e300", 1_000), Err("ERR timeout is negative"));
        assert_eq!(
            timeout(b"9223372036854770", 10_000),
            Err("ERR timeout is out of range")
        );
    }

    #[test]
    fn waiters_are_served_first_come_per_key() {
        let mut keys = BlockedKeys::new();
        keys.wait(3, &[b"a".to_vec(), b"b".to_vec()]);
        keys.wait(1, &[b"a".to_vec()]);
        keys.signal(b"c"); // no one waits on it
        keys.signal(b"a");
        keys.signal(b"a");
        assert_eq!(keys.take_ready(), [b"a".to_vec()]);
        assert_eq!(keys.waiting_on(b"a"), [3, 1]);
        keys.leave(3, &[b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(keys.waiting_on(b"a"), [1]);
        assert_eq!(keys.waiting_on(b"b"), []);
    }
}
