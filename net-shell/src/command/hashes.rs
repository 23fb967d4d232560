//! The hash commands (Redis 7.0's `t_hash.c`) over hashes kept as one value each in the
//! store: the list encoding of [`crate::store::list`] with fields and values alternating, in
//! the order fields were added (the order Redis' listpack keeps for small hashes). A change
//! rewrites the hash through the reply buffer's spare room; a hash left empty is deleted.

use alloc::vec::Vec;

use super::events::Class;
use super::float::{Decimal as Float, NotDecimal};
use super::types::WrongType;
use super::{error, integer, After, Context, Reply, ReplyWriter, NOT_INTEGER};
use crate::decimal::{parse_i64, Decimal};
use crate::store::list::{element_len, List, ListWriter};
use crate::store::{StoreError, Ttl, ValueKind};

/// A hash value, read in place: fields and values alternate.
#[derive(Clone, Copy)]
struct Hash<'a>(List<'a>);

impl<'a> Hash<'a> {
    /// How many fields.
    fn len(self) -> usize {
        self.0.len() / 2
    }

    /// Each field with its value, in the order they were added.
    fn pairs(self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        let mut elements = self.0.iter();
        core::iter::from_fn(move || Some((elements.next()?, elements.next()?)))
    }

    /// The value of `field`.
    fn get(self, field: &[u8]) -> Option<&'a [u8]> {
        self.pairs().find(|(f, _)| *f == field).map(|(_, v)| v)
    }
}

/// The hash at `key` (`None`: no such key), or the `WRONGTYPE` reply returned.
macro_rules! hash_or_return {
    ($ctx:expr, $key:expr, $out:expr) => {
        match $ctx.hash($key) {
            Ok(hash) => hash,
            Err(wrong) => return wrong.reply($out),
        }
    };
}

impl Context<'_, '_> {
    /// The hash at `key` (`None`: no such key), or [`WrongType`].
    fn hash(&mut self, key: &[u8]) -> Result<Option<Hash<'_>>, WrongType> {
        Ok(self
            .value_of(key, ValueKind::Hash)?
            .map(|value| Hash(List::new(value))))
    }
}

/// Writes hash `key` anew: the old pairs with `set` applied (each replaces its field's value
/// or is added at the end), those named in `delete` left out. An empty result deletes the
/// key. `Ok`: the fields added and the fields left.
fn rewrite(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    set: &[(&[u8], &[u8])],
    delete: &[&[u8]],
) -> Result<(usize, usize), Reply> {
    let now = ctx.clock.now;
    let old = ctx.store.get(key, now).unwrap_or_default();
    let extra: usize = set
        .iter()
        .map(|(f, v)| element_len(f.len()) + element_len(v.len()))
        .sum();
    let Some(room) = out.spare_for(4 + old.len() + extra) else {
        return Err(super::store_error(ctx, out, StoreError::ValueTooLarge));
    };
    let mut writer = ListWriter::new(room);
    let hash = Hash(List::new(old));
    // The last value given for a field wins, as HSET's in Redis.
    let given = |field: &[u8]| set.iter().rev().find(|(f, _)| *f == field).map(|(_, v)| *v);
    for (field, value) in hash.pairs() {
        if delete.contains(&field) {
            continue;
        }
        writer.push(field);
        writer.push(given(field).unwrap_or(value));
    }
    let mut added = 0;
    for (i, (field, value)) in set.iter().enumerate() {
        let earlier = set[..i].iter().any(|(f, _)| f == field);
        if earlier || hash.get(field).is_some() {
            continue;
        }
        writer.push(field);
        writer.push(given(field).unwrap_or(value));
        added += 1;
    }
    let fields = writer.count() / 2;
    let len = writer.finish();
    if fields == 0 {
        ctx.store.delete(key, now);
        return Ok((added, 0));
    }
    match ctx
        .store
        .set_kind(key, &out.spare()[..len], ValueKind::Hash, Ttl::Keep, now)
    {
        Ok(()) => Ok((added, fields)),
        Err(e) => Err(super::store_error(ctx, out, e)),
    }
}

/// Sets `argv[2..]`'s field-value pairs on hash `argv[1]`; `Ok`: the fields added.
fn set_pairs(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Result<usize, Reply> {
    let key = argv[1];
    let made = match ctx.hash(key) {
        Ok(hash) => hash.is_none(),
        Err(wrong) => return Err(wrong.reply(out)),
    };
    let set: Vec<(&[u8], &[u8])> = argv[2..].chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let (added, _) = rewrite(ctx, out, key, &set, &[])?;
    ctx.written(made, Class::Hash, "hset", key);
    Ok(added)
}

/// `HSET key field value …`: the fields added.
pub(crate) fn hset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() % 2 == 1 {
        return super::wrong_arity(out, "hset");
    }
    match set_pairs(ctx, argv, out) {
        Ok(added) => integer(out, added as i64),
        Err(reply) => reply,
    }
}

/// `HMSET key field value …`: `+OK`.
pub(crate) fn hmset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() % 2 == 1 {
        return super::wrong_arity(out, "hmset");
    }
    match set_pairs(ctx, argv, out) {
        Ok(_) => super::ok(out),
        Err(reply) => reply,
    }
}

/// `HSETNX key field value`: 1 if set, 0 if the field exists.
pub(crate) fn hsetnx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let exists = match hash_or_return!(ctx, key, out) {
        Some(hash) => hash.get(argv[2]).is_some(),
        None => false,
    };
    if exists {
        return integer(out, 0);
    }
    match set_pairs(ctx, argv, out) {
        Ok(_) => integer(out, 1),
        Err(reply) => reply,
    }
}

/// `HGET key field`.
pub(crate) fn hget(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let value = hash_or_return!(ctx, argv[1], out).and_then(|hash| hash.get(argv[2]));
    super::bulk_or_nil(out, value)
}

/// `HMGET key field …`: each value, or nil.
pub(crate) fn hmget(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    out.array_header(argv.len() - 2)?;
    for field in &argv[2..] {
        super::bulk_or_nil(out, hash.and_then(|hash| hash.get(field)))?;
    }
    Ok(After::Continue)
}

/// `HDEL key field …`: the fields removed.
pub(crate) fn hdel(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let key = argv[1];
    let Some(hash) = hash_or_return!(ctx, key, out) else {
        return integer(out, 0);
    };
    let fields = &argv[2..];
    let removed = hash.pairs().filter(|(f, _)| fields.contains(f)).count();
    if removed == 0 {
        return integer(out, 0);
    }
    match rewrite(ctx, out, key, &[], fields) {
        Ok((_, left)) => {
            ctx.notify(Class::Hash, "hdel", key);
            if left == 0 {
                ctx.notify(Class::Generic, "del", key);
            }
            integer(out, removed as i64)
        }
        Err(reply) => reply,
    }
}

/// `HLEN key`.
pub(crate) fn hlen(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let len = hash_or_return!(ctx, argv[1], out).map_or(0, Hash::len);
    integer(out, len as i64)
}

/// `HSTRLEN key field`.
pub(crate) fn hstrlen(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    let len = hash
        .and_then(|hash| hash.get(argv[2]))
        .map_or(0, <[u8]>::len);
    integer(out, len as i64)
}

/// `HEXISTS key field`.
pub(crate) fn hexists(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    integer(
        out,
        i64::from(hash.and_then(|hash| hash.get(argv[2])).is_some()),
    )
}

/// What `HKEYS`, `HVALS` and `HGETALL` list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listing {
    Fields,
    Values,
    Both,
}

/// Redis' `genericHgetallCommand`: an array (`HGETALL`: a map in RESP3), empty for no key.
fn listing(
    ctx: &mut Context<'_, '_>,
    key: &[u8],
    out: &mut ReplyWriter<'_>,
    what: Listing,
) -> Reply {
    ctx.read(key);
    let hash = hash_or_return!(ctx, key, out);
    let len = hash.map_or(0, Hash::len);
    if what == Listing::Both {
        out.map_header(len)?;
    } else {
        out.array_header(len)?;
    }
    for (field, value) in hash.into_iter().flat_map(Hash::pairs) {
        if what != Listing::Values {
            out.bulk(field)?;
        }
        if what != Listing::Fields {
            out.bulk(value)?;
        }
    }
    Ok(After::Continue)
}

/// `HKEYS key`.
pub(crate) fn hkeys(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    listing(ctx, argv[1], out, Listing::Fields)
}

/// `HVALS key`.
pub(crate) fn hvals(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    listing(ctx, argv[1], out, Listing::Values)
}

/// `HGETALL key`.
pub(crate) fn hgetall(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    listing(ctx, argv[1], out, Listing::Both)
}

/// Writes `value` at `field` of hash `key`, publishing `event`.
fn store_field(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    field: &[u8],
    value: &[u8],
    (made, event): (bool, &str),
) -> Result<(), Reply> {
    rewrite(ctx, out, key, &[(field, value)], &[])?;
    ctx.written(made, Class::Hash, event, key);
    Ok(())
}

/// `HINCRBY key field increment`: the increment is read first, then the key, as in Redis.
pub(crate) fn hincrby(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let Some(by) = parse_i64(argv[3]) else {
        return error(out, NOT_INTEGER);
    };
    let (key, field) = (argv[1], argv[2]);
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let current = match hash.and_then(|hash| hash.get(field)) {
        None => 0,
        Some(value) => match parse_i64(value) {
            Some(n) => n,
            None => return error(out, "ERR hash value is not an integer"),
        },
    };
    let Some(next) = current.checked_add(by) else {
        return error(out, "ERR increment or decrement would overflow");
    };
    let text = Decimal::signed(next);
    match store_field(ctx, out, key, field, text.as_bytes(), (made, "hincrby")) {
        Ok(()) => integer(out, next),
        Err(reply) => reply,
    }
}

/// `HINCRBYFLOAT key field increment`: the sum, exact, printed as Redis prints it.
pub(crate) fn hincrbyfloat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let by = match Float::parse(argv[3]) {
        Ok(by) => by,
        Err(NotDecimal::Invalid) => return error(out, "ERR value is not a valid float"),
        Err(NotDecimal::Infinite) => return error(out, "ERR value is NaN or Infinity"),
    };
    let (key, field) = (argv[1], argv[2]);
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let current = match hash.and_then(|hash| hash.get(field)) {
        None => Float::parse(b"0"),
        Some(value) => Float::parse(value),
    };
    let sum = match current {
        Ok(current) => current.checked_add(by),
        Err(_) => return error(out, "ERR hash value is not a float"),
    };
    let Some(sum) = sum else {
        return error(out, "ERR increment would produce NaN or Infinity");
    };
    let mut text = [0; 48];
    let text = sum.format(&mut text);
    match store_field(ctx, out, key, field, text, (made, "hincrbyfloat")) {
        Ok(()) => super::bulk_or_nil(out, Some(text)),
        Err(reply) => reply,
    }
}

/// `HSCAN key cursor [MATCH pattern] [COUNT count]`: as Redis 7.0 answers for a hash kept as
/// a listpack, every field (matching the pattern) with its value and the cursor 0 at once,
/// whatever the cursor and the count; the options are read as `SCAN` reads them.
pub(crate) fn hscan(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cursor_ok = core::str::from_utf8(argv[2])
        .ok()
        .filter(|text| !text.starts_with(|c: char| c.is_ascii_whitespace()))
        .is_some_and(|text| {
            let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 20
        });
    if !cursor_ok {
        return error(out, "ERR invalid cursor");
    }
    ctx.read(argv[1]);
    let Some(hash) = hash_or_return!(ctx, argv[1], out) else {
        out.array_header(2)?;
        out.bulk(b"0")?;
        out.array_header(0)?;
        return Ok(After::Continue);
    };
    let mut pattern: Option<&[u8]> = None;
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if super::is(argv[i], "count") && more {
            match parse_i64(argv[i + 1]) {
                Some(n) if n >= 1 => {}
                Some(_) => return error(out, super::SYNTAX),
                None => return error(out, NOT_INTEGER),
            }
        } else if super::is(argv[i], "match") && more {
            pattern = Some(argv[i + 1]).filter(|p| *p != b"*");
        } else {
            return error(out, super::SYNTAX);
        }
        i += 2;
    }
    let wanted = |field: &[u8]| pattern.is_none_or(|p| super::glob::matches(p, field, false));
    let found = hash.pairs().filter(|(f, _)| wanted(f)).count();
    out.array_header(2)?;
    out.bulk(b"0")?;
    out.array_header(2 * found)?;
    for (field, value) in hash.pairs().filter(|(f, _)| wanted(f)) {
        out.bulk(field)?;
        out.bulk(value)?;
    }
    Ok(After::Continue)
}

/// The most fields `HRANDFIELD` draws with repeats in one reply.
const MAX_DRAWS: usize = 1 << 20;

/// `HRANDFIELD key [count [WITHVALUES]]`, as Redis 7.0's `hrandfieldCommand`: one field (nil
/// for no key); with a count, that many distinct fields (all of them, in order, when the count
/// is at least the hash's size), or with a negative count that many drawn with repeats; with
/// values, pairs (each a two-element array in RESP3).
pub(crate) fn hrandfield(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let count = match argv.get(2).map(|word| parse_i64(word)) {
        None => None,
        Some(Some(n)) => Some(n),
        Some(None) => return error(out, NOT_INTEGER),
    };
    let with_values = match argv.get(3) {
        None => false,
        Some(word) if argv.len() == 4 && super::is(word, "withvalues") => true,
        Some(_) => return error(out, super::SYNTAX),
    };
    if with_values && count.is_some_and(|n| !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n)) {
        return error(out, "ERR value is out of range");
    }
    // Any start will do: a mix of the time and the command count picks one.
    let mut seed = (ctx.clock.now ^ ctx.stats.total_commands_processed.rotate_left(17))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        | 1;
    let mut draw = |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below.max(1) as u64) as usize
    };
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    let Some(count) = count else {
        let field = hash.and_then(|hash| {
            let at = draw(hash.len());
            hash.pairs().nth(at).map(|(f, _)| f)
        });
        return super::bulk_or_nil(out, field);
    };
    let Some(hash) = hash else {
        out.array_header(0)?;
        return Ok(After::Continue);
    };
    let len = hash.len();
    let resp3 = out.protocol() == crate::resp::Protocol::Resp3;
    let write_pair = |out: &mut ReplyWriter<'_>, (field, value): (&[u8], &[u8])| {
        if with_values && resp3 {
            out.array_header(2)?;
        }
        out.bulk(field)?;
        if with_values {
            out.bulk(value)?;
        }
        Ok::<(), crate::resp::WriteFull>(())
    };
    let per = if with_values && !resp3 { 2 } else { 1 };
    if count >= 0 {
        // Distinct fields: all of them in order when the count reaches the size, else a
        // random choice of `count` kept in the hash's order.
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(len);
        out.array_header(n * per)?;
        let mut left_to_skip = len - n;
        for (i, pair) in hash.pairs().enumerate() {
            let remaining = len - i;
            if left_to_skip > 0 && draw(remaining) < left_to_skip {
                left_to_skip -= 1;
                continue;
            }
            write_pair(out, pair)?;
        }
    } else {
        let n = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        if n > MAX_DRAWS {
            // Redis would write them until the client's output limit: "reply too large" here.
            return Err(crate::resp::WriteFull);
        }
        out.array_header(n * per)?;
        for _ in 0..n {
            if let Some(pair) = hash.pairs().nth(draw(len)) {
                write_pair(out, pair)?;
            }
        }
    }
    Ok(After::Continue)
}
