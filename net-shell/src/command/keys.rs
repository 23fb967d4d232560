//! The keyspace commands (Redis' `db.c` and `expire.c`).

use super::events::Class;
use super::expiry::{self, Unit, When};
use super::{error, error_fmt, integer, is, Context, Reply, ReplyWriter, Shown};
#[cfg(feature = "extended-commands")]
use {
    super::After,
    crate::store::{Ttl, ValueKind},
};

/// `DEL key …`, `UNLINK key …`: how many keys were removed.
pub(crate) fn del(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let now = ctx.clock.now;
    let mut removed = 0;
    for key in &argv[1..] {
        if ctx.store.delete(key, now) {
            ctx.notify(Class::Generic, "del", key);
            removed += 1;
        }
    }
    integer(out, removed)
}

/// `EXISTS key …`: how many of the keys exist (a key named twice counts twice).
pub(crate) fn exists(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    let mut found = 0;
    for key in &argv[1..] {
        ctx.read(key);
        found += i64::from(ctx.store.contains(key, now));
    }
    integer(out, found)
}

/// The conditions `EXPIRE` takes (Redis 7's `parseExtendedExpireArgumentsOrReply`).
#[derive(Clone, Copy, Default)]
struct Condition {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Condition {
    /// Reads the options; `Err` is the reply to send.
    fn parse(words: &[&[u8]], out: &mut ReplyWriter<'_>) -> Result<Self, Reply> {
        let mut c = Self::default();
        for &word in words {
            if is(word, "nx") {
                c.nx = true;
            } else if is(word, "xx") {
                c.xx = true;
            } else if is(word, "gt") {
                c.gt = true;
            } else if is(word, "lt") {
                c.lt = true;
            } else {
                return Err(error_fmt(
                    out,
                    format_args!("ERR Unsupported option {}", Shown(word)),
                ));
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(error(
                out,
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            ));
        }
        if c.gt && c.lt {
            return Err(error(
                out,
                "ERR GT and LT options at the same time are not compatible",
            ));
        }
        Ok(c)
    }

    /// Whether a key whose deadline is `current` (`None`: persistent) may get `deadline`. A
    /// persistent key has an infinite TTL: GT never beats it, LT always does.
    fn allows(self, current: Option<u64>, deadline: u64) -> bool {
        match current {
            None => !self.xx && !self.gt,
            Some(at) => !self.nx && (!self.gt || deadline > at) && (!self.lt || deadline < at),
        }
    }
}

/// Redis' `expireGenericCommand`: `EXPIRE`, `PEXPIRE`, `EXPIREAT`, `PEXPIREAT` with
/// `key amount [NX|XX|GT|LT]…`. Options are checked before the amount, as in Redis. A time
/// in the past deletes the key.
fn expire_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    unit: Unit,
    absolute: bool,
    command: &str,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let condition = match Condition::parse(&argv[3..], out) {
        Ok(condition) => condition,
        Err(reply) => return reply,
    };
    let when = When {
        amount: argv[2],
        unit,
        absolute,
    };
    let deadline = match expiry::expire_deadline(when, ctx.clock) {
        Ok(at) => at,
        Err(refused) => return refused.reply(out, command),
    };
    let (key, now) = (argv[1], ctx.clock.now);
    let Some(current) = ctx.store.deadline(key, now) else {
        return integer(out, 0);
    };
    let allowed = condition.allows(current, deadline);
    if allowed {
        ctx.store.set_deadline(key, Some(deadline), now);
        // A time already past deletes the key (Redis' `expireGenericCommand`).
        let event = if deadline <= now { "del" } else { "expire" };
        ctx.notify(Class::Generic, event, key);
    }
    integer(out, i64::from(allowed))
}

/// `EXPIRE key seconds [NX|XX|GT|LT]`.
pub(crate) fn expire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Seconds, false, "expire", out)
}

/// `PEXPIRE key ms [NX|XX|GT|LT]`.
pub(crate) fn pexpire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Milliseconds, false, "pexpire", out)
}

/// `EXPIREAT key unix-seconds [NX|XX|GT|LT]`.
pub(crate) fn expireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Seconds, true, "expireat", out)
}

/// `PEXPIREAT key unix-ms [NX|XX|GT|LT]`.
pub(crate) fn pexpireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Milliseconds, true, "pexpireat", out)
}

/// Redis' `ttlGenericCommand`: `TTL`, `PTTL`, `EXPIRETIME`, `PEXPIRETIME`. -2 for a missing
/// key, -1 for a persistent one; seconds are rounded to the nearest.
fn ttl_generic(
    ctx: &mut Context<'_, '_>,
    key: &[u8],
    unit: Unit,
    absolute: bool,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    ctx.read(key);
    let deadline = match ctx.store.deadline(key, now) {
        None => return integer(out, -2),
        Some(None) => return integer(out, -1),
        Some(Some(at)) => at,
    };
    let ms = if absolute {
        match expiry::unix_of(deadline, ctx.clock) {
            Ok(unix) => unix,
            Err(refused) => return refused.reply(out, ""),
        }
    } else {
        deadline.saturating_sub(now)
    };
    let value = match unit {
        Unit::Milliseconds => ms,
        Unit::Seconds => ms.saturating_add(500) / 1000,
    };
    integer(out, value.min(expiry::MAX_MS) as i64)
}

/// `TTL key`.
pub(crate) fn ttl(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Seconds, false, out)
}

/// `PTTL key`.
pub(crate) fn pttl(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Milliseconds, false, out)
}

/// `EXPIRETIME key`.
pub(crate) fn expiretime(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Seconds, true, out)
}

/// `PEXPIRETIME key`.
pub(crate) fn pexpiretime(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Milliseconds, true, out)
}

/// `PERSIST key`: 1 if a TTL was removed.
pub(crate) fn persist(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (key, now) = (argv[1], ctx.clock.now);
    let had_ttl = matches!(ctx.store.deadline(key, now), Some(Some(_)));
    if had_ttl {
        ctx.store.set_deadline(key, None, now);
        ctx.notify(Class::Generic, "persist", key);
    }
    integer(out, i64::from(had_ttl))
}

/// `TYPE key`: `string` or `none`.
#[cfg(feature = "extended-commands")]
pub(crate) fn type_of(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let kind = ctx.store.value_kind(argv[1], ctx.clock.now);
    out.simple(kind.map_or("none", ValueKind::name))?;
    Ok(After::Continue)
}

/// `RENAME key newkey`, `RENAMENX key newkey` (Redis' `renameGenericCommand`): the value and
/// its TTL move. The value is copied through the reply buffer's spare room.
#[cfg(feature = "extended-commands")]
fn rename_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    nx: bool,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (from, to, now) = (argv[1], argv[2], ctx.clock.now);
    let Some(deadline) = ctx.store.deadline(from, now) else {
        return error(out, "ERR no such key");
    };
    let done = |out: &mut ReplyWriter<'_>, moved: bool| {
        if nx {
            integer(out, i64::from(moved))
        } else {
            super::ok(out)
        }
    };
    if from == to {
        return done(out, false);
    }
    if nx && ctx.store.contains(to, now) {
        return done(out, false);
    }
    match copy_value(ctx, from, to, deadline, out) {
        Ok(()) => {
            ctx.store.delete(from, now);
            // Redis deletes `newkey`, adds it anew, then removes `key`.
            ctx.notify(Class::New, "new", to);
            ctx.notify(Class::Generic, "rename_from", from);
            ctx.notify(Class::Generic, "rename_to", to);
            done(out, true)
        }
        Err(reply) => reply,
    }
}

/// Writes the value of live key `from` to `to`, with `deadline`, through the reply buffer.
#[cfg(feature = "extended-commands")]
fn copy_value(
    ctx: &mut Context<'_, '_>,
    from: &[u8],
    to: &[u8],
    deadline: Option<u64>,
    out: &mut ReplyWriter<'_>,
) -> Result<(), Reply> {
    let now = ctx.clock.now;
    // A hash's field deadlines need a timer under the new key: refused before anything
    // changes where none is free.
    #[cfg(feature = "hashes")]
    {
        let (kind, value) = ctx.store.get_kind(from, now).unwrap_or_default();
        if kind == ValueKind::Hash && super::earliest_field_deadline(value, now).is_some() {
            super::field_timer_for_copy(ctx, to, out)?;
        }
    }
    let (kind, value) = ctx.store.get_kind(from, now).unwrap_or_default();
    let len = value.len();
    let Some(room) = out.spare_for(len) else {
        return Err(error(out, "ERR value is too large to copy here"));
    };
    room.copy_from_slice(value);
    let ttl = deadline.map_or(Ttl::Persist, Ttl::At);
    match ctx.store.set_kind(to, &out.spare()[..len], kind, ttl, now) {
        Ok(()) => {
            // A list under a key clients wait on serves them (Redis' `signalKeyAsReady`).
            #[cfg(feature = "lists")]
            if kind == ValueKind::List {
                ctx.list_grew(to);
            }
            // Its fields keep their deadlines, on timers under the new key.
            #[cfg(feature = "hashes")]
            if kind == ValueKind::Hash {
                let now = ctx.clock.now;
                super::add_timers_for(ctx.field_timers, to, &out.spare()[..len], now);
            }
            Ok(())
        }
        Err(e) => Err(super::store_error(ctx, out, e)),
    }
}

/// `RENAME key newkey`.
#[cfg(feature = "extended-commands")]
pub(crate) fn rename(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    rename_generic(ctx, argv, false, out)
}

/// `RENAMENX key newkey`.
#[cfg(feature = "extended-commands")]
pub(crate) fn renamenx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    rename_generic(ctx, argv, true, out)
}

/// `COPY source destination [DB 0] [REPLACE]` (Redis' `copyCommand`), in the one database.
#[cfg(feature = "extended-commands")]
pub(crate) fn copy(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let mut replace = false;
    let mut i = 3;
    while i < argv.len() {
        if is(argv[i], "replace") {
            replace = true;
        } else if is(argv[i], "db") && i + 1 < argv.len() {
            match crate::decimal::parse_i64(argv[i + 1]).map(i32::try_from) {
                Some(Ok(0)) => {}
                Some(Ok(_)) => return error(out, "ERR DB index is out of range"),
                Some(Err(_)) => return error(out, super::server::INT_RANGE),
                None => return error(out, super::NOT_INTEGER),
            }
            i += 1;
        } else {
            return error(out, super::SYNTAX);
        }
        i += 1;
    }
    let (from, to, now) = (argv[1], argv[2], ctx.clock.now);
    if from == to {
        return error(out, "ERR source and destination objects are the same");
    }
    ctx.read(from);
    let Some(deadline) = ctx.store.deadline(from, now) else {
        return integer(out, 0);
    };
    if !replace && ctx.store.contains(to, now) {
        return integer(out, 0);
    }
    match copy_value(ctx, from, to, deadline, out) {
        Ok(()) => {
            // Redis deletes `destination` (with `REPLACE`), then adds it anew.
            ctx.notify(Class::New, "new", to);
            ctx.notify(Class::Generic, "copy_to", to);
            integer(out, 1)
        }
        Err(reply) => reply,
    }
}

/// `TOUCH key …`: how many of the keys exist.
#[cfg(feature = "extended-commands")]
pub(crate) use exists as touch;

/// `KEYS pattern`: every live key matching the glob pattern.
#[cfg(feature = "extended-commands")]
pub(crate) fn keys(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let (pattern, now) = (argv[1], ctx.clock.now);
    let all = pattern == b"*";
    let wanted = |key: &[u8]| all || super::glob::matches(pattern, key, false);
    let mut count = 0;
    let mut slot = 0;
    while let Some((at, key)) = ctx.store.key_at_or_after(slot, now) {
        count += usize::from(wanted(key));
        slot = at + 1;
    }
    out.array_header(count)?;
    slot = 0;
    while let Some((at, key)) = ctx.store.key_at_or_after(slot, now) {
        if wanted(key) {
            out.bulk(key)?;
        }
        slot = at + 1;
    }
    Ok(After::Continue)
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`: the cursor is a slot of the key
/// table, so a key present for the whole scan is returned exactly once. A call looks at up to
/// `count` keys (10 by default), and returns fewer when the reply buffer would overflow.
#[cfg(feature = "extended-commands")]
pub(crate) fn scan(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Some(cursor) = core::str::from_utf8(argv[1])
        .ok()
        .and_then(|text| text.parse::<u64>().ok())
    else {
        return error(out, "ERR invalid cursor");
    };
    let mut count: u64 = 10;
    let mut pattern: Option<&[u8]> = None;
    // `None`: any kind; `Some(None)`: a type no key here has.
    let mut kind: Option<Option<ValueKind>> = None;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - i >= 2;
        if is(argv[i], "count") && more {
            match crate::decimal::parse_i64(argv[i + 1]) {
                Some(n) if n >= 1 => count = n as u64,
                Some(_) => return error(out, super::SYNTAX),
                None => return error(out, super::NOT_INTEGER),
            }
        } else if is(argv[i], "match") && more {
            pattern = Some(argv[i + 1]).filter(|p| *p != b"*");
        } else if is(argv[i], "type") && more {
            let kinds = [ValueKind::String, ValueKind::List, ValueKind::Hash];
            kind = Some(kinds.into_iter().find(|k| is(argv[i + 1], k.name())));
        } else {
            return error(out, super::SYNTAX);
        }
        i += 2;
    }
    let now = ctx.clock.now;
    let store = &*ctx.store;
    let wanted = |at: usize, key: &[u8]| {
        kind.is_none_or(|kind| kind.is_some() && kind == store.value_kind_at(at))
            && pattern.is_none_or(|p| super::glob::matches(p, key, false))
    };
    // Plan: which slots this call covers, so the header can be written first, and the reply
    // fits (cursor up to 20 digits, the array header).
    let room = out.remaining().saturating_sub(48);
    let (mut slot, mut looked, mut found, mut bytes) = (cursor as usize, 0, 0, 0);
    let mut next = 0;
    while let Some((at, key)) = ctx.store.key_at_or_after(slot, now) {
        if looked == count {
            next = at;
            break;
        }
        if wanted(at, key) {
            let size = key.len() + 16;
            if bytes + size > room && found > 0 {
                next = at;
                break;
            }
            bytes += size;
            found += 1;
        }
        looked += 1;
        slot = at + 1;
    }
    let end = if next == 0 { usize::MAX } else { next };
    out.array_header(2)?;
    out.bulk(crate::decimal::Decimal::new(next as u64).as_bytes())?;
    out.array_header(found)?;
    let mut slot = cursor as usize;
    while let Some((at, key)) = ctx.store.key_at_or_after(slot, now) {
        if at >= end {
            break;
        }
        if wanted(at, key) {
            out.bulk(key)?;
        }
        slot = at + 1;
    }
    Ok(After::Continue)
}

/// `RANDOMKEY`: a live key, or nil when there is none.
#[cfg(feature = "extended-commands")]
pub(crate) fn randomkey(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    // Any start will do: a mix of the time and the command count picks one.
    let mix = (now ^ ctx.stats.total_commands_processed.rotate_left(17))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let start = (mix >> 32) as usize % ctx.store.key_slots().max(1);
    let key = ctx
        .store
        .key_at_or_after(start, now)
        .or_else(|| ctx.store.key_at_or_after(0, now))
        .map(|(_, key)| key);
    super::bulk_or_nil(out, key)
}

/// `OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key`, as Redis answers for a string. The encoding
/// follows from the value (Redis' follows from its history: an integer appended to is `raw`
/// there); access times and frequencies are not tracked (idle time 0).
#[cfg(feature = "extended-commands")]
pub(crate) fn object(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let sub = argv[1];
    let Some((kind, value)) = ctx.store.get_kind(argv[2], ctx.clock.now) else {
        return super::bulk_or_nil(out, None);
    };
    if kind == ValueKind::Hash && is(sub, "encoding") {
        // Redis 7.0 keeps a small hash (`hash-max-listpack-entries` and `-value`) as a
        // listpack, and a larger one as a hash table; so do hashes here (`command::hashes`):
        // one given an index keeps it, as Redis' hash table stays.
        let small = !crate::store::fields::is_indexed(value);
        let encoding: &[u8] = if small { b"listpack" } else { b"hashtable" };
        return super::bulk_or_nil(out, Some(encoding));
    }
    if kind == ValueKind::List {
        // Redis 7.0 keeps every list as a quicklist, whatever `list-max-listpack-size` says
        // (listpack encoding for small lists came with 7.2).
        if is(sub, "encoding") {
            return super::bulk_or_nil(out, Some(b"quicklist"));
        } else if is(sub, "refcount") {
            return integer(out, 1);
        }
    }
    let integer_value = (value.len() <= 20)
        .then(|| crate::decimal::parse_i64(value))
        .flatten();
    if is(sub, "encoding") {
        let encoding: &[u8] = match integer_value {
            Some(_) => b"int",
            None if value.len() <= 44 => b"embstr",
            None => b"raw",
        };
        super::bulk_or_nil(out, Some(encoding))
    } else if is(sub, "refcount") {
        // Redis shares the integers 0..10000 (refcount INT_MAX) when no LRU/LFU policy is set.
        let shared = integer_value.is_some_and(|n| (0..10_000).contains(&n));
        integer(out, if shared { i64::from(i32::MAX) } else { 1 })
    } else if is(sub, "idletime") {
        integer(out, 0)
    } else {
        error(
            out,
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        )
    }
}
