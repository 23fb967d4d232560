//! The string commands (Redis' `t_string.c`).

use super::events::Class;
use super::expiry::{self, Unit, When};
use super::types::string_or_return;
use super::{
    bulk_or_nil, error, integer, is, ok, store_error, After, Context, Reply, ReplyWriter,
    NOT_INTEGER, SYNTAX,
};
use crate::decimal::{parse_i64, Decimal};
use crate::store::Ttl;

/// `GET key`. A value over [`STREAM_OVER`] bytes (with the `alloc` feature, outside `EXEC`)
/// is not copied into the reply: its header goes now and its bytes follow from the store as
/// the send buffer drains ([`resume_value`]).
pub(crate) fn get(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    #[cfg(feature = "alloc")]
    if ctx.stream_values {
        if let Some((index, stamp, len)) = ctx.store.value_handle(argv[1], ctx.clock.now) {
            if len > STREAM_OVER && ctx.check_string(argv[1]).is_ok() {
                out.bulk_header(len)?;
                return Ok(After::More(super::Continuation::value(ValueMore {
                    index,
                    stamp,
                    sent: 0,
                    len,
                })));
            }
        }
    }
    let value = string_or_return!(ctx, argv[1], out);
    bulk_or_nil(out, value)
}

/// Values longer than this are sent from the store as the send buffer drains.
#[cfg(feature = "alloc")]
pub(crate) const STREAM_OVER: usize = 64 << 10;

/// A value being sent from the store: which entry, its write stamp when `GET` ran, and how
/// far.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct ValueMore {
    index: u32,
    stamp: u32,
    sent: usize,
    len: usize,
}

/// Sends the next part of a value that fits `out`, then (at the end) its CRLF. If the key was
/// written, deleted or expired meanwhile, the rest of this value is gone: the connection is
/// closed (the client sees a reply cut short) rather than sent another value's bytes.
#[cfg(feature = "alloc")]
pub(crate) fn resume_value(
    mut more: ValueMore,
    store: &mut crate::store::Store<'_>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let Some(value) = store.value_by_handle(more.index, more.stamp) else {
        return Ok(After::Close);
    };
    let rest = value.get(more.sent..more.len).unwrap_or_default();
    let room = out.remaining().saturating_sub(2);
    let part = &rest[..rest.len().min(room)];
    out.raw(part)?;
    more.sent += part.len();
    if more.sent < more.len {
        return Ok(After::More(super::Continuation::value(more)));
    }
    out.raw(b"\r\n")?;
    Ok(After::Continue)
}

/// The options of `SET` and `GETEX`, as Redis' `parseExtendedStringArgumentsOrReply` reads
/// them: each at most once in a compatible set (the same expiry twice is taken, the last
/// wins), an expiry needing its value.
#[derive(Clone, Copy, Default)]
struct StringOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    persist: bool,
    expire: Option<When<'a>>,
}

/// Which command the options are for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Options {
    Set,
    GetEx,
}

impl<'a> StringOptions<'a> {
    /// Reads `words`; `Err` is a syntax error.
    fn parse(words: &[&'a [u8]], command: Options) -> Result<Self, ()> {
        let set = command == Options::Set;
        let mut o = Self::default();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            let next = words.get(i + 1).copied();
            let expiry = [
                ("ex", Unit::Seconds, false),
                ("px", Unit::Milliseconds, false),
                ("exat", Unit::Seconds, true),
                ("pxat", Unit::Milliseconds, true),
            ]
            .into_iter()
            .find(|(name, _, _)| is(word, name));
            if is(word, "nx") && !o.xx && set {
                o.nx = true;
            } else if is(word, "xx") && !o.nx && set {
                o.xx = true;
            } else if is(word, "get") && set {
                o.get = true;
            } else if is(word, "keepttl") && !o.persist && o.expire.is_none() && set {
                o.keep_ttl = true;
            } else if is(word, "persist") && !set && o.expire.is_none() && !o.keep_ttl {
                o.persist = true;
            } else if let (Some((_, unit, absolute)), Some(amount)) = (expiry, next) {
                // Another kind of expiry already given, KEEPTTL or PERSIST: refused.
                let same_kind = o
                    .expire
                    .is_none_or(|e| e.unit == unit && e.absolute == absolute);
                if o.keep_ttl || o.persist || !same_kind {
                    return Err(());
                }
                o.expire = Some(When {
                    amount,
                    unit,
                    absolute,
                });
                i += 1;
            } else {
                return Err(());
            }
            i += 1;
        }
        Ok(o)
    }
}

/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]`.
pub(crate) fn set(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Ok(options) = StringOptions::parse(&argv[3..], Options::Set) else {
        return error(out, SYNTAX);
    };
    let ttl = match options.expire {
        Some(when) => match expiry::set_deadline(when, ctx.clock) {
            Ok(at) => Ttl::At(at),
            Err(refused) => return refused.reply(out, "set"),
        },
        None if options.keep_ttl => Ttl::Keep,
        None => Ttl::Persist,
    };
    set_generic(ctx, argv[1], argv[2], ttl, options, out)
}

/// Redis' `setGenericCommand`: writes unless NX/XX forbid it; replies `+OK`, nil when
/// forbidden, or with `GET` the old value.
fn set_generic(
    ctx: &mut Context<'_, '_>,
    key: &[u8],
    value: &[u8],
    ttl: Ttl,
    options: StringOptions<'_>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    if options.get {
        // `GET` reads first, as Redis' `getGenericCommand` (a `keymiss` before anything).
        ctx.read(key);
        if let Err(wrong) = ctx.check_string(key) {
            return wrong.reply(out);
        }
    }
    let exists = ctx.store.contains(key, now);
    // NX needs the key absent, XX needs it present.
    let allowed = if exists { !options.nx } else { !options.xx };
    if options.get {
        // Check the write can succeed before replying with the old value.
        if allowed {
            if let Err(e) = ctx.store.check_set(key, value, ttl, now) {
                return store_error(ctx, out, e);
            }
        }
        bulk_or_nil(out, ctx.store.get(key, now))?;
        if allowed {
            // Cannot fail: checked above, and the reply is already written.
            let _ = ctx.store.set(key, value, ttl, now);
            notify_set(ctx, key, !exists, ttl);
        }
        Ok(After::Continue)
    } else if allowed {
        store_reply(ctx, out, key, value, ttl, !exists)
    } else {
        bulk_or_nil(out, None)
    }
}

/// The events of a `SET` (Redis' `setGenericCommand`): `new` if it made the key, `set`, and
/// `expire` if it gave a time to live. A time already past removed the key at once; Redis
/// keeps it until its next look, then publishes `expired`: here that comes right after.
fn notify_set(ctx: &mut Context<'_, '_>, key: &[u8], made: bool, ttl: Ttl) {
    ctx.written(made, Class::String, "set", key);
    if let Ttl::At(at) = ttl {
        ctx.notify(Class::Generic, "expire", key);
        if at <= ctx.clock.now {
            ctx.notify(Class::Expired, "expired", key);
        }
    }
}

/// Writes `key = value` and replies `+OK`, or the error that refused it.
fn store_reply(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    value: &[u8],
    ttl: Ttl,
    made: bool,
) -> Reply {
    match ctx.store.set(key, value, ttl, ctx.clock.now) {
        Ok(()) => {
            notify_set(ctx, key, made, ttl);
            ok(out)
        }
        Err(e) => store_error(ctx, out, e),
    }
}

/// `SETEX key seconds value`, `PSETEX key ms value`.
fn setex_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    unit: Unit,
    command: &str,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let when = When {
        amount: argv[2],
        unit,
        absolute: false,
    };
    match expiry::set_deadline(when, ctx.clock) {
        Ok(at) => {
            let made = ctx.makes(argv[1]);
            store_reply(ctx, out, argv[1], argv[3], Ttl::At(at), made)
        }
        Err(refused) => refused.reply(out, command),
    }
}

/// `SETEX key seconds value`.
pub(crate) fn setex(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    setex_generic(ctx, argv, Unit::Seconds, "setex", out)
}

/// `PSETEX key ms value`.
pub(crate) fn psetex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    setex_generic(ctx, argv, Unit::Milliseconds, "psetex", out)
}

/// `GETDEL key`.
pub(crate) fn getdel(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    ctx.read(argv[1]);
    let value = string_or_return!(ctx, argv[1], out);
    bulk_or_nil(out, value)?;
    if ctx.store.delete(argv[1], now) {
        ctx.notify(Class::Generic, "del", argv[1]);
    }
    Ok(After::Continue)
}

/// `GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]`: as Redis' `getexCommand`, a missing key
/// answers nil before the time is looked at.
pub(crate) fn getex(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Ok(options) = StringOptions::parse(&argv[2..], Options::GetEx) else {
        return error(out, SYNTAX);
    };
    let (key, now) = (argv[1], ctx.clock.now);
    ctx.read(key);
    let Some(current) = ctx.store.deadline(key, now) else {
        return bulk_or_nil(out, None);
    };
    if let Err(wrong) = ctx.check_string(key) {
        return wrong.reply(out);
    }
    let deadline = match options
        .expire
        .map(|when| expiry::set_deadline(when, ctx.clock))
    {
        Some(Err(refused)) => return refused.reply(out, "getex"),
        Some(Ok(at)) => Some(at),
        None => None,
    };
    bulk_or_nil(out, ctx.store.get(key, now))?;
    if let Some(at) = deadline {
        ctx.store.set_deadline(key, Some(at), now);
        // A time already past deletes the key, as Redis' `getexCommand` does.
        let event = if at <= now { "del" } else { "expire" };
        ctx.notify(Class::Generic, event, key);
    } else if options.persist && current.is_some() {
        ctx.store.set_deadline(key, None, now);
        ctx.notify(Class::Generic, "persist", key);
    }
    Ok(After::Continue)
}

/// Adds `by` to the integer at `key` (0 if missing), keeping its TTL (Redis'
/// `incrDecrCommand`).
fn incr_by(ctx: &mut Context<'_, '_>, key: &[u8], by: i64, out: &mut ReplyWriter<'_>) -> Reply {
    let now = ctx.clock.now;
    let current = match string_or_return!(ctx, key, out) {
        None => 0,
        Some(value) => match parse_i64(value) {
            Some(n) => n,
            None => return error(out, NOT_INTEGER),
        },
    };
    let Some(next) = current.checked_add(by) else {
        return error(out, "ERR increment or decrement would overflow");
    };
    let text = Decimal::signed(next);
    let made = ctx.makes(key);
    match ctx.store.set(key, text.as_bytes(), Ttl::Keep, now) {
        Ok(()) => {
            ctx.written(made, Class::String, "incrby", key);
            integer(out, next)
        }
        Err(e) => store_error(ctx, out, e),
    }
}

/// `INCR key`.
pub(crate) fn incr(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    incr_by(ctx, argv[1], 1, out)
}

/// `DECR key`.
pub(crate) fn decr(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    incr_by(ctx, argv[1], -1, out)
}

/// `INCRBY key increment`.
pub(crate) fn incrby(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    match parse_i64(argv[2]) {
        Some(by) => incr_by(ctx, argv[1], by, out),
        None => error(out, NOT_INTEGER),
    }
}

/// `DECRBY key decrement`.
pub(crate) fn decrby(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    match parse_i64(argv[2]).map(i64::checked_neg) {
        Some(Some(by)) => incr_by(ctx, argv[1], by, out),
        // Redis 7 (`decrbyCommand`) has its own text for negating i64::MIN.
        Some(None) => error(out, "ERR decrement would overflow"),
        None => error(out, NOT_INTEGER),
    }
}

/// Redis' text when a value would outgrow the largest value (`checkStringLength`; here the
/// store's limit plays `proto-max-bulk-len`).
#[cfg(feature = "extended-commands")]
const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// `MGET key …`: each value, or nil.
#[cfg(feature = "extended-commands")]
pub(crate) fn mget(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let now = ctx.clock.now;
    out.array_header(argv.len() - 1)?;
    for key in &argv[1..] {
        ctx.read(key);
        // A key of another kind reads as nil here, as in Redis.
        let value = match ctx.store.get_kind(key, now) {
            Some((crate::store::ValueKind::String, value)) => Some(value),
            _ => None,
        };
        bulk_or_nil(out, value)?;
    }
    Ok(After::Continue)
}

/// Writes each key-value pair of `pairs`, each key losing its TTL. Each write is checked
/// before any is made, so a key or value over the limits changes nothing; a store that fills
/// up on the way is refused at that pair (Redis refuses the whole command beforehand when
/// over `maxmemory`).
#[cfg(feature = "extended-commands")]
fn set_pairs(
    ctx: &mut Context<'_, '_>,
    pairs: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Result<(), Reply> {
    let now = ctx.clock.now;
    for pair in pairs.chunks_exact(2) {
        if let Err(e) = ctx.store.check_set(pair[0], pair[1], Ttl::Persist, now) {
            return Err(store_error(ctx, out, e));
        }
    }
    for pair in pairs.chunks_exact(2) {
        let made = ctx.makes(pair[0]);
        if let Err(e) = ctx.store.set(pair[0], pair[1], Ttl::Persist, now) {
            return Err(store_error(ctx, out, e));
        }
        ctx.written(made, Class::String, "set", pair[0]);
    }
    Ok(())
}

/// `MSET key value …`.
#[cfg(feature = "extended-commands")]
pub(crate) fn mset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() % 2 == 0 {
        return super::wrong_arity(out, "mset");
    }
    match set_pairs(ctx, &argv[1..], out) {
        Ok(()) => ok(out),
        Err(reply) => reply,
    }
}

/// `MSETNX key value …`: all or none, none if any key exists.
#[cfg(feature = "extended-commands")]
pub(crate) fn msetnx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if argv.len() % 2 == 0 {
        return super::wrong_arity(out, "msetnx");
    }
    let now = ctx.clock.now;
    if argv[1..]
        .iter()
        .step_by(2)
        .any(|key| ctx.store.contains(key, now))
    {
        return integer(out, 0);
    }
    match set_pairs(ctx, &argv[1..], out) {
        Ok(()) => integer(out, 1),
        Err(reply) => reply,
    }
}

/// `SETNX key value`: 1 if set, 0 if the key exists.
#[cfg(feature = "extended-commands")]
pub(crate) fn setnx(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let now = ctx.clock.now;
    if ctx.store.contains(argv[1], now) {
        return integer(out, 0);
    }
    match ctx.store.set(argv[1], argv[2], Ttl::Persist, now) {
        Ok(()) => {
            ctx.written(true, Class::String, "set", argv[1]);
            integer(out, 1)
        }
        Err(e) => store_error(ctx, out, e),
    }
}

/// `GETSET key value`: `SET key value GET`.
#[cfg(feature = "extended-commands")]
pub(crate) fn getset(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let options = StringOptions {
        get: true,
        ..StringOptions::default()
    };
    set_generic(ctx, argv[1], argv[2], Ttl::Persist, options, out)
}

/// `STRLEN key`.
#[cfg(feature = "extended-commands")]
pub(crate) fn strlen(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let len = string_or_return!(ctx, argv[1], out).map_or(0, <[u8]>::len);
    integer(out, len as i64)
}

/// Builds a new value for `key` in the reply buffer's spare room: `edit` gets the room with
/// the old value (empty if none) at its start and returns the new length. The new value is
/// stored with the old TTL; `Ok(len)` is its length.
#[cfg(feature = "extended-commands")]
fn rewrite(
    ctx: &mut Context<'_, '_>,
    (key, event): (&[u8], &str),
    new_len: usize,
    out: &mut ReplyWriter<'_>,
    edit: impl FnOnce(&mut [u8]),
) -> Result<usize, Reply> {
    let now = ctx.clock.now;
    let made = ctx.makes(key);
    if new_len > ctx.store.max_value_len() {
        return Err(error(out, TOO_LONG));
    }
    let Some(room) = out.spare_for(new_len) else {
        return Err(error(out, TOO_LONG));
    };
    let old = ctx.store.get(key, now).unwrap_or_default();
    room[..new_len].fill(0);
    room[..old.len().min(new_len)].copy_from_slice(&old[..old.len().min(new_len)]);
    edit(&mut room[..new_len]);
    match ctx.store.set(key, &out.spare()[..new_len], Ttl::Keep, now) {
        Ok(()) => {
            ctx.written(made, Class::String, event, key);
            Ok(new_len)
        }
        Err(e) => Err(store_error(ctx, out, e)),
    }
}

/// `APPEND key value`: the new length.
#[cfg(feature = "extended-commands")]
pub(crate) fn append(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (key, tail) = (argv[1], argv[2]);
    let old_len = string_or_return!(ctx, key, out).map_or(0, <[u8]>::len);
    let new_len = old_len.saturating_add(tail.len());
    match rewrite(ctx, (key, "append"), new_len, out, |value| {
        value[old_len..].copy_from_slice(tail);
    }) {
        Ok(len) => integer(out, len as i64),
        Err(reply) => reply,
    }
}

/// `SETRANGE key offset value`: overwrites from `offset`, padding with zero bytes; the new
/// length.
#[cfg(feature = "extended-commands")]
pub(crate) fn setrange(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (key, patch) = (argv[1], argv[3]);
    let offset = match parse_i64(argv[2]) {
        Some(offset) if offset >= 0 => offset as u64,
        Some(_) => return error(out, "ERR offset is out of range"),
        None => return error(out, NOT_INTEGER),
    };
    let old_len = string_or_return!(ctx, key, out).map(<[u8]>::len);
    if patch.is_empty() {
        // Nothing to write: the length as it is (0 for a missing key, which stays missing).
        return integer(out, old_len.unwrap_or(0) as i64);
    }
    let end = offset.saturating_add(patch.len() as u64);
    // Redis' limit is 512 MB; this server's is the largest value.
    let Ok(end) = usize::try_from(end) else {
        return error(out, TOO_LONG);
    };
    let new_len = end.max(old_len.unwrap_or(0));
    match rewrite(ctx, (key, "setrange"), new_len, out, |value| {
        value[end - patch.len()..end].copy_from_slice(patch);
    }) {
        Ok(len) => integer(out, len as i64),
        Err(reply) => reply,
    }
}

/// `GETRANGE key start end` (and `SUBSTR`): the bytes from `start` to `end` inclusive,
/// negative positions counting from the end, as Redis' `getrangeCommand`.
#[cfg(feature = "extended-commands")]
pub(crate) fn getrange(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (Some(mut start), Some(mut end)) = (parse_i64(argv[2]), parse_i64(argv[3])) else {
        return error(out, NOT_INTEGER);
    };
    ctx.read(argv[1]);
    let value = string_or_return!(ctx, argv[1], out).unwrap_or_default();
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        return bulk_or_nil(out, Some(b""));
    }
    if start < 0 {
        start = (len + start).max(0);
    }
    if end < 0 {
        end = (len + end).max(0);
    }
    end = end.min(len - 1);
    if start > end || len == 0 {
        return bulk_or_nil(out, Some(b""));
    }
    bulk_or_nil(out, Some(&value[start as usize..=end as usize]))
}

/// `INCRBYFLOAT key increment`: the sum, computed exactly and stored as Redis prints it (see
/// `float.rs`), keeping the TTL.
#[cfg(feature = "extended-commands")]
pub(crate) fn incrbyfloat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    use super::float::{Decimal, NotDecimal};
    let (key, now) = (argv[1], ctx.clock.now);
    let current = Decimal::parse(string_or_return!(ctx, key, out).unwrap_or(b"0"));
    let sum = match (current, Decimal::parse(argv[2])) {
        (Err(NotDecimal::Invalid), _) | (_, Err(NotDecimal::Invalid)) => {
            return error(out, "ERR value is not a valid float")
        }
        (Err(NotDecimal::Infinite), _) | (_, Err(NotDecimal::Infinite)) => None,
        (Ok(a), Ok(b)) => a.checked_add(b),
    };
    let Some(sum) = sum else {
        return error(out, "ERR increment would produce NaN or Infinity");
    };
    let mut text = [0; 48];
    let text = sum.format(&mut text);
    let made = ctx.makes(key);
    match ctx.store.set(key, text, Ttl::Keep, now) {
        Ok(()) => {
            ctx.written(made, Class::String, "incrbyfloat", key);
            bulk_or_nil(out, Some(text))
        }
        Err(e) => store_error(ctx, out, e),
    }
}

/// The longest common subsequence `LCS` finds here: its bytes and matches are kept on the
/// stack while the reply is written over the table.
#[cfg(feature = "extended-commands")]
const LCS_MAX: usize = 256;

/// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`, as Redis 7's `lcsCommand`:
/// the same dynamic-programming table and the same walk back through it, so the same
/// subsequence among several of the same length. Both strings and the table (two bits a cell)
/// live in the reply buffer's spare room; strings too long for it, or both longer than 256
/// bytes, are refused with Redis' text for a table over its limit.
#[cfg(feature = "extended-commands")]
pub(crate) fn lcs(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    // Redis looks both keys up before it reads the options.
    ctx.read(argv[1]);
    ctx.read(argv[2]);
    if ctx.check_string(argv[1]).is_err() || ctx.check_string(argv[2]).is_err() {
        return error(out, "ERR The specified keys must contain string values");
    }
    let (mut len_only, mut idx, mut with_len, mut min_len) = (false, false, false, 0u64);
    let mut i = 3;
    while i < argv.len() {
        let word = argv[i];
        if is(word, "idx") {
            idx = true;
        } else if is(word, "len") {
            len_only = true;
        } else if is(word, "withmatchlen") {
            with_len = true;
        } else if is(word, "minmatchlen") && i + 1 < argv.len() {
            match parse_i64(argv[i + 1]) {
                Some(n) => min_len = n.max(0) as u64,
                None => return error(out, NOT_INTEGER),
            }
            i += 1;
        } else {
            return error(out, SYNTAX);
        }
        i += 1;
    }
    if idx && len_only {
        return error(
            out,
            "ERR If you want both the length and indexes, please just use IDX.",
        );
    }
    // Both strings, one row of lengths, then two bits per cell of the table: whether the
    // length grows from the cell above (V) and from the cell to the left (H). The walk back
    // needs only them: LCS(i-1,j) > LCS(i,j-1) exactly when V is 0 and H is 1.
    let now = ctx.clock.now;
    let a_len = ctx.store.get(argv[1], now).map_or(0, <[u8]>::len);
    let b_len = ctx.store.get(argv[2], now).map_or(0, <[u8]>::len);
    let cells = (a_len + 1) * (b_len + 1);
    let row_bytes = 2 * (b_len + 1);
    let needed = a_len + b_len + row_bytes + cells.div_ceil(4);
    if a_len.min(b_len) > LCS_MAX || out.spare_for(needed).is_none() {
        return error(
            out,
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        );
    }
    for (at, key) in [(0, argv[1]), (a_len, argv[2])] {
        let value = ctx.store.get(key, now).unwrap_or_default();
        out.spare()[at..at + value.len()].copy_from_slice(value);
    }
    let (strings, rest) = out.spare().split_at_mut(a_len + b_len);
    let (a, b) = strings.split_at(a_len);
    let (row, bits) = rest.split_at_mut(row_bytes);
    bits[..cells.div_ceil(4)].fill(0);
    let length = |row: &[u8], j: usize| u16::from_le_bytes([row[2 * j], row[2 * j + 1]]);
    let flag = |bits: &[u8], i: usize, j: usize, which: usize| {
        let n = 2 * (j + i * (b_len + 1)) + which;
        bits[n / 8] & (1 << (n % 8)) != 0
    };
    const V: usize = 0;
    const H: usize = 1;
    row.fill(0);
    for i in 1..=a_len {
        // `diagonal` is LCS(i-1, j-1), `left` LCS(i, j-1); `row` holds row i-1 ahead of j.
        let (mut diagonal, mut left) = (0u16, 0u16);
        for j in 1..=b_len {
            let up = length(row, j);
            let here = if a[i - 1] == b[j - 1] {
                diagonal + 1
            } else {
                up.max(left)
            };
            for (which, grew) in [(V, here > up), (H, here > left)] {
                if grew {
                    let n = 2 * (j + i * (b_len + 1)) + which;
                    bits[n / 8] |= 1 << (n % 8);
                }
            }
            diagonal = up;
            left = here;
            row[2 * j..2 * j + 2].copy_from_slice(&here.to_le_bytes());
        }
    }
    let total = usize::from(length(row, b_len));
    // Walk back, as Redis does: the subsequence from its end, the matching ranges.
    let mut result = [0u8; LCS_MAX];
    let mut ranges: heapless::Vec<[u16; 4], LCS_MAX> = heapless::Vec::new();
    let (mut i, mut j, mut left) = (a_len, b_len, total);
    let mut range: Option<[usize; 4]> = None; // a start, a end, b start, b end
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            result[left - 1] = a[i - 1];
            match &mut range {
                None => range = Some([i - 1, i - 1, j - 1, j - 1]),
                Some(r) if r[0] == i && r[2] == j => {
                    r[0] -= 1;
                    r[2] -= 1;
                }
                Some(_) => emit = true,
            }
            if range.is_some_and(|r| r[0] == 0 || r[2] == 0) {
                emit = true;
            }
            left -= 1;
            i -= 1;
            j -= 1;
        } else {
            if !flag(bits, i, j, V) && flag(bits, i, j, H) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = range.is_some();
        }
        if let (true, Some(r)) = (emit, range) {
            let matched = (r[1] - r[0] + 1) as u64;
            if min_len == 0 || matched >= min_len {
                let _ = ranges.push(r.map(|n| n as u16));
            }
            range = None;
        }
    }
    if idx {
        out.map_header(2)?;
        out.bulk(b"matches")?;
        out.array_header(ranges.len())?;
        for r in &ranges {
            out.array_header(2 + usize::from(with_len))?;
            for pair in [[r[0], r[1]], [r[2], r[3]]] {
                out.array_header(2)?;
                out.integer(i64::from(pair[0]))?;
                out.integer(i64::from(pair[1]))?;
            }
            if with_len {
                out.integer(i64::from(r[1] - r[0] + 1))?;
            }
        }
        out.bulk(b"len")?;
        integer(out, total as i64)
    } else if len_only {
        integer(out, total as i64)
    } else {
        bulk_or_nil(out, Some(&result[..total]))
    }
}
