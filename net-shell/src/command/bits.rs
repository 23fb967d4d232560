//! The bitmap commands (Redis' `bitops.c`): strings as arrays of bits, the most significant
//! bit of the first byte first.

use super::events::Class;
use super::types::string_or_return;
use super::{error, integer, is, Context, Reply, ReplyWriter, NOT_INTEGER, SYNTAX};
use crate::decimal::parse_i64;
use crate::store::Ttl;

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

/// Redis' default `proto-max-bulk-len`, 512 MB: the bit offsets it takes.
const PROTO_MAX_BULK_LEN: usize = 512 << 20;

/// A bit offset (Redis' `getBitOffsetFromArgument`): a non-negative integer whose byte is
/// within the largest value (Redis: 512 MB).
fn bit_offset(word: &[u8], max_len: usize) -> Option<u64> {
    parse_i64(word)
        .filter(|&n| n >= 0 && ((n >> 3) as u64) < max_len as u64)
        .map(|n| n as u64)
}

/// Whether bit `offset` of `value` is set (bits past the end are clear).
fn bit(value: &[u8], offset: u64) -> bool {
    value
        .get((offset >> 3) as usize)
        .is_some_and(|byte| byte & (0x80 >> (offset & 7)) != 0)
}

/// `GETBIT key offset`.
pub(crate) fn getbit(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    // Reading past the largest value is fine (those bits are clear), up to Redis' limit.
    let Some(offset) = bit_offset(argv[2], PROTO_MAX_BULK_LEN) else {
        return error(out, BAD_OFFSET);
    };
    ctx.read(argv[1]);
    let value = string_or_return!(ctx, argv[1], out).unwrap_or_default();
    integer(out, i64::from(bit(value, offset)))
}

/// `SETBIT key offset 0|1`: the bit's old value; the string grows with zero bytes as needed
/// and keeps its TTL.
pub(crate) fn setbit(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let Some(offset) = bit_offset(argv[2], ctx.store.max_value_len()) else {
        return error(out, BAD_OFFSET);
    };
    let on = match parse_i64(argv[3]) {
        Some(0) => false,
        Some(1) => true,
        _ => return error(out, "ERR bit is not an integer or out of range"),
    };
    let (key, now) = (argv[1], ctx.clock.now);
    let made = ctx.makes(key);
    let old = string_or_return!(ctx, key, out).unwrap_or_default();
    let was = bit(old, offset);
    let len = old.len().max((offset >> 3) as usize + 1);
    // Redis publishes `setbit` only when the string changed: a bit flipped, or it grew.
    let changed = was != on || len > old.len();
    let Some(room) = out.spare_for(len) else {
        return error(out, BAD_OFFSET);
    };
    room.fill(0);
    room[..old.len()].copy_from_slice(old);
    let mask = 0x80 >> (offset & 7);
    let byte = &mut room[(offset >> 3) as usize];
    *byte = if on { *byte | mask } else { *byte & !mask };
    match ctx.store.set(key, &out.spare()[..len], Ttl::Keep, now) {
        Ok(()) => {
            if changed {
                ctx.written(made, Class::String, "setbit", key);
            }
            integer(out, i64::from(was))
        }
        Err(e) => super::store_error(ctx, out, e),
    }
}

/// A range of a string for `BITCOUNT`/`BITPOS`, in bits, as Redis converts `start end
/// [BYTE|BIT]`: negative positions count from the end, then both are clamped to the string.
/// `None` is an empty range.
fn bit_range(start: i64, end: i64, len: usize, bits: bool) -> Option<(u64, u64)> {
    let total = if bits { len as i64 * 8 } else { len as i64 };
    let from = if start < 0 { total + start } else { start }.max(0);
    let to = if end < 0 { total + end } else { end }
        .max(0)
        .min(total - 1);
    if from > to {
        return None;
    }
    Some(if bits {
        (from as u64, to as u64)
    } else {
        (from as u64 * 8, to as u64 * 8 + 7)
    })
}

/// Reads `start end [BYTE|BIT]` from `words`, in Redis' order: `BITCOUNT` reads the unit
/// after both numbers, `BITPOS` between them.
fn range_words(words: &[&[u8]], unit_first: bool) -> Result<(i64, i64, bool), &'static str> {
    let start = parse_i64(words[0]).ok_or(NOT_INTEGER)?;
    let end = || parse_i64(words[1]).ok_or(NOT_INTEGER);
    let early_end = if unit_first { None } else { Some(end()?) };
    let bits = match words.get(2) {
        None => false,
        Some(unit) if is(unit, "byte") => false,
        Some(unit) if is(unit, "bit") => true,
        Some(_) => return Err(SYNTAX),
    };
    let end = match early_end {
        Some(end) => end,
        None => end()?,
    };
    Ok((start, end, bits))
}

/// `BITCOUNT key [start end [BYTE|BIT]]`: the set bits in the range (a missing key counts 0,
/// before the range is read, as in Redis).
pub(crate) fn bitcount(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let Some(value) = string_or_return!(ctx, argv[1], out) else {
        return integer(out, 0);
    };
    let range = match argv.len() {
        2 => bit_range(0, -1, value.len(), false),
        4 | 5 => match range_words(&argv[2..], false) {
            Ok((start, end, bits)) => {
                if start < 0 && end < 0 && start > end {
                    None
                } else {
                    bit_range(start, end, value.len(), bits)
                }
            }
            Err(why) => return error(out, why),
        },
        _ => return error(out, SYNTAX),
    };
    let count = range.map_or(0, |(from, to)| {
        (from..=to).filter(|&b| bit(value, b)).count()
    });
    integer(out, count as i64)
}

/// `BITPOS key 0|1 [start [end [BYTE|BIT]]]`: the first bit with that value in the range, as
/// Redis' `bitposCommand`: a missing key is all clear bits; looking for a clear bit without an
/// end finds the first bit past the string when all are set; otherwise -1 when there is none.
pub(crate) fn bitpos(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let wanted = match parse_i64(argv[2]) {
        Some(0) => false,
        Some(1) => true,
        Some(_) => return error(out, "ERR The bit argument must be 1 or 0."),
        None => return error(out, NOT_INTEGER),
    };
    ctx.read(argv[1]);
    let Some(value) = string_or_return!(ctx, argv[1], out) else {
        return integer(out, if wanted { -1 } else { 0 });
    };
    let end_given = argv.len() >= 5;
    let range = match argv.len() {
        3 => bit_range(0, -1, value.len(), false),
        4 => match parse_i64(argv[3]) {
            Some(start) => bit_range(start, -1, value.len(), false),
            None => return error(out, NOT_INTEGER),
        },
        5 | 6 => match range_words(&argv[3..], true) {
            Ok((start, end, bits)) => bit_range(start, end, value.len(), bits),
            Err(why) => return error(out, why),
        },
        _ => return error(out, SYNTAX),
    };
    let Some((from, to)) = range else {
        return integer(out, -1);
    };
    let position = match (from..=to).find(|&b| bit(value, b) == wanted) {
        Some(b) => b as i64,
        None if !wanted && !end_given => to as i64 + 1,
        None => -1,
    };
    integer(out, position)
}

/// The operations of `BITOP`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Xor,
    Not,
}

/// `BITOP AND|OR|XOR|NOT destkey key …`: the result's length (the longest source, shorter
/// ones padded with zero bytes); an empty result deletes `destkey`.
pub(crate) fn bitop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let op = [
        ("and", Op::And),
        ("or", Op::Or),
        ("xor", Op::Xor),
        ("not", Op::Not),
    ]
    .into_iter()
    .find(|(name, _)| is(argv[1], name))
    .map(|(_, op)| op);
    let Some(op) = op else {
        return error(out, SYNTAX);
    };
    if op == Op::Not && argv.len() != 4 {
        return error(
            out,
            "ERR BITOP NOT must be called with a single source key.",
        );
    }
    let (target, sources, now) = (argv[2], &argv[3..], ctx.clock.now);
    let mut len = 0;
    for key in sources {
        ctx.read(key);
        len = len.max(string_or_return!(ctx, key, out).map_or(0, <[u8]>::len));
    }
    if len == 0 {
        if ctx.store.delete(target, now) {
            ctx.notify(Class::Generic, "del", target);
        }
        return integer(out, 0);
    }
    let Some(result) = out.spare_for(len) else {
        return error(
            out,
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        );
    };
    for (j, key) in sources.iter().enumerate() {
        let value = ctx.store.get(key, now).unwrap_or_default();
        for (i, slot) in result.iter_mut().enumerate() {
            let byte = value.get(i).copied().unwrap_or(0);
            *slot = match (j, op) {
                (0, Op::Not) => !byte,
                (0, _) => byte,
                (_, Op::And) => *slot & byte,
                (_, Op::Or) => *slot | byte,
                (_, _) => *slot ^ byte,
            };
        }
    }
    let made = ctx.makes(target);
    match ctx
        .store
        .set(target, &out.spare()[..len], Ttl::Persist, now)
    {
        Ok(()) => {
            ctx.written(made, Class::String, "set", target);
            integer(out, len as i64)
        }
        Err(e) => super::store_error(ctx, out, e),
    }
}
