//! The list commands (Redis 7.0's `t_list.c`) over lists kept as one value each in the store
//! ([`crate::store::list`]): the same replies, errors, argument order and keyspace events.
//! Pushes, pops and `LTRIM` change the list in place; a push that finds no room, a change in
//! the middle (`LSET`, `LINSERT`, `LREM`) and pops that leave the block oversized write the
//! list anew through the reply buffer's spare room. A list left empty is deleted, as in Redis.

use core::ops::Range;

use super::events::Class;
use super::types::{WrongType, WRONGTYPE};
use super::{
    bulk_or_nil, error, integer, is, ok, store_error, After, Context, Reply, ReplyWriter,
    NOT_INTEGER, SYNTAX,
};
use crate::decimal::parse_i64;
pub(super) use crate::store::list::End;
use crate::store::list::{capacity_for, element_len, List, ListMut, ListWriter, HEADER};
use crate::store::StoreError;
use crate::store::{Ttl, ValueKind};

/// The end `LMOVE` names `LEFT` or `RIGHT`.
pub(super) fn parse_end(word: &[u8]) -> Option<End> {
    if is(word, "left") {
        Some(End::Head)
    } else if is(word, "right") {
        Some(End::Tail)
    } else {
        None
    }
}

const fn push_event(end: End) -> &'static str {
    match end {
        End::Head => "lpush",
        End::Tail => "rpush",
    }
}

const fn pop_event(end: End) -> &'static str {
    match end {
        End::Head => "lpop",
        End::Tail => "rpop",
    }
}

/// Redis' text for a negative count (`getPositiveLongFromObjectOrReply`).
const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";

/// The list at `key` (`None`: no such key), or the `WRONGTYPE` reply returned.
macro_rules! list_or_return {
    ($ctx:expr, $key:expr, $out:expr) => {
        match $ctx.list($key) {
            Ok(list) => list,
            Err(wrong) => return wrong.reply($out),
        }
    };
}

impl Context<'_, '_> {
    /// The list at `key` (`None`: no such key), or [`WrongType`].
    pub(super) fn list(&mut self, key: &[u8]) -> Result<Option<List<'_>>, WrongType> {
        Ok(self.value_of(key, ValueKind::List)?.map(List::new))
    }

    /// List `key` has elements now: clients blocked on it may be served (Redis'
    /// `signalKeyAsReady`).
    pub(crate) fn list_grew(&mut self, key: &[u8]) {
        #[cfg(feature = "blocking-lists")]
        self.blocked.signal(key);
        #[cfg(not(feature = "blocking-lists"))]
        let _ = key;
    }
}

/// Writes list `key` anew, in a block with room at both ends: `edit` gets the old list (empty
/// if none), the reply written so far (where an element being moved waits) and a writer with
/// room for the old list's elements and `extra` more bytes. An empty result deletes the key.
/// The list's time to live stays. `Ok`: the new length (0: the key is gone; the caller
/// publishes its event, then `del`, as Redis does).
fn write_anew(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    extra: usize,
    edit: impl FnOnce(List<'_>, &[u8], &mut ListWriter<'_>),
) -> Result<usize, StoreError> {
    let now = ctx.clock.now;
    let largest = ctx.store.max_value_len();
    let old = ctx.store.get(key, now).unwrap_or_default();
    // Scratch room for the new list: its room shrinks near the largest value, and the store
    // refuses a list whose elements alone pass it.
    let used = List::new(old).body().len() + extra;
    let size = capacity_for(used).min(largest.max(HEADER + used));
    let Some((reply, room)) = out.written_and_spare(size) else {
        return Err(StoreError::ValueTooLarge);
    };
    let mut writer = ListWriter::new(room);
    edit(List::new(old), reply, &mut writer);
    let count = writer.count();
    let len = writer.finish_with_room();
    if count == 0 {
        ctx.store.delete(key, now);
        return Ok(0);
    }
    ctx.store
        .set_kind(key, &out.spare()[..len], ValueKind::List, Ttl::Keep, now)
        .map(|()| count)
}

/// [`write_anew`], answering a refusal with its error reply.
fn rewrite(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    extra: usize,
    edit: impl FnOnce(List<'_>, &[u8], &mut ListWriter<'_>),
) -> Result<usize, Reply> {
    write_anew(ctx, out, key, extra, edit).map_err(|e| store_error(ctx, out, e))
}

/// Elements to push: arguments, or one element already written into the reply (`LMOVE`).
#[derive(Clone)]
enum Pushed<'v> {
    Arguments(&'v [&'v [u8]]),
    Reply(Range<usize>),
}

/// Pushes `pushed` at `end` of list `key` (made if there is none), each in turn (at the head,
/// the last given comes first): in place when the block has room, else by writing the list
/// anew. `Ok`: the new length.
fn push_elements(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    end: End,
    pushed: Pushed<'_>,
) -> Result<usize, Reply> {
    let now = ctx.clock.now;
    let one;
    let new: &[&[u8]] = match &pushed {
        Pushed::Arguments(new) => new,
        Pushed::Reply(at) => {
            one = [out.written().get(at.clone()).unwrap_or_default()];
            &one
        }
    };
    if let Some(value) = ctx.store.value_mut(key, now) {
        if let Some(len) = ListMut::new(value).push(end, new) {
            return Ok(len);
        }
    }
    let extra = new.iter().map(|e| element_len(e.len())).sum();
    rewrite(ctx, out, key, extra, |old, reply, writer| {
        let one;
        let new: &[&[u8]] = match &pushed {
            Pushed::Arguments(new) => new,
            Pushed::Reply(at) => {
                one = [reply.get(at.clone()).unwrap_or_default()];
                &one
            }
        };
        if end == End::Head {
            for element in new.iter().rev() {
                writer.push(element);
            }
        }
        writer.push_encoded(old.body(), old.len());
        if end == End::Tail {
            for element in new {
                writer.push(element);
            }
        }
    })
}

/// After a change that left `left` elements: `event`, then `del` if the list is gone (Redis'
/// `listElementsRemoved` and its kin).
fn changed(ctx: &mut Context<'_, '_>, key: &[u8], event: &str, left: usize) {
    ctx.notify(Class::List, event, key);
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
}

/// Redis' `pushGenericCommand`: `LPUSH`, `RPUSH`, and with `only_existing` `LPUSHX`,
/// `RPUSHX`.
fn push(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    end: End,
    only_existing: bool,
) -> Reply {
    let key = argv[1];
    let exists = list_or_return!(ctx, key, out).is_some();
    if !exists && only_existing {
        return integer(out, 0);
    }
    match push_elements(ctx, out, key, end, Pushed::Arguments(&argv[2..])) {
        Ok(len) => {
            ctx.written(!exists, Class::List, push_event(end), key);
            ctx.list_grew(key);
            integer(out, len as i64)
        }
        Err(reply) => reply,
    }
}

/// `LPUSH key element …`.
pub(crate) fn lpush(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    push(ctx, argv, out, End::Head, false)
}

/// `RPUSH key element …`.
pub(crate) fn rpush(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    push(ctx, argv, out, End::Tail, false)
}

/// `LPUSHX key element …`.
pub(crate) fn lpushx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    push(ctx, argv, out, End::Head, true)
}

/// `RPUSHX key element …`.
pub(crate) fn rpushx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    push(ctx, argv, out, End::Tail, true)
}

/// After elements left list `key` in place: deletes it if it is empty, writes it anew,
/// smaller, if its block is oversized (kept as it is if that cannot be done now). `left`: the
/// elements left.
fn shrunk(ctx: &mut Context<'_, '_>, out: &mut ReplyWriter<'_>, key: &[u8], left: usize) {
    let now = ctx.clock.now;
    if left == 0 {
        ctx.store.delete(key, now);
        return;
    }
    let oversized = ctx
        .store
        .get(key, now)
        .is_some_and(|value| List::new(value).is_oversized());
    if oversized {
        let _ = write_anew(ctx, out, key, 0, |old, _, writer| {
            writer.push_encoded(old.body(), old.len());
        });
    }
}

/// Removes `count` elements from `end` of list `key`, in place; the elements left.
fn remove_from_end(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    end: End,
    count: usize,
) -> usize {
    let left = ctx
        .store
        .value_mut(key, ctx.clock.now)
        .map_or(0, |value| ListMut::new(value).remove(end, count));
    shrunk(ctx, out, key, left);
    left
}

/// The elements from `end` inwards.
fn from_end(list: List<'_>, end: End) -> impl Iterator<Item = &[u8]> + Clone {
    let mut elements = list.iter();
    core::iter::from_fn(move || match end {
        End::Head => elements.next(),
        End::Tail => elements.next_back(),
    })
}

/// Pops one element from `end` of list `key` (which holds at least one) and writes it as a
/// bulk reply; publishes the pop (and `del`).
#[cfg(feature = "blocking-lists")]
pub(super) fn pop_one(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    end: End,
) -> Result<(), Reply> {
    let list = ctx.store.get(key, ctx.clock.now).map(List::new);
    let element = list.and_then(|list| from_end(list, end).next());
    out.bulk(element.unwrap_or_default()).map_err(Err)?;
    let left = remove_from_end(ctx, out, key, end, 1);
    changed(ctx, key, pop_event(end), left);
    Ok(())
}

/// Redis' `popGenericCommand`: `LPOP key [count]`, `RPOP key [count]`.
fn pop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>, end: End) -> Reply {
    if argv.len() > 3 {
        return super::wrong_arity(out, if end == End::Head { "lpop" } else { "rpop" });
    }
    // Redis has one text for a count that is not a number and one below zero.
    let count = match argv.get(2).map(|word| parse_i64(word)) {
        None => None,
        Some(Some(n)) if n >= 0 => Some(n as usize),
        Some(_) => return error(out, NOT_POSITIVE),
    };
    let key = argv[1];
    let Some(list) = list_or_return!(ctx, key, out) else {
        match count {
            Some(_) => out.null_array()?,
            None => out.null()?,
        }
        return Ok(After::Continue);
    };
    let taken = match count {
        Some(0) => {
            out.array_header(0)?;
            return Ok(After::Continue);
        }
        Some(n) => {
            let n = n.min(list.len());
            out.array_header(n)?;
            for element in from_end(list, end).take(n) {
                out.bulk(element)?;
            }
            n
        }
        None => {
            out.bulk(from_end(list, end).next().unwrap_or_default())?;
            1
        }
    };
    let left = remove_from_end(ctx, out, key, end, taken);
    changed(ctx, key, pop_event(end), left);
    Ok(After::Continue)
}

/// `LPOP key [count]`.
pub(crate) fn lpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    pop(ctx, argv, out, End::Head)
}

/// `RPOP key [count]`.
pub(crate) fn rpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    pop(ctx, argv, out, End::Tail)
}

/// `LLEN key`.
pub(crate) fn llen(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let len = list_or_return!(ctx, argv[1], out).map_or(0, |list| list.len());
    integer(out, len as i64)
}

/// `LINDEX key index`: the key is looked up before the index is read, as in Redis.
pub(crate) fn lindex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let Some(list) = list_or_return!(ctx, argv[1], out) else {
        return bulk_or_nil(out, None);
    };
    let Some(index) = parse_i64(argv[2]) else {
        return error(out, NOT_INTEGER);
    };
    bulk_or_nil(out, position(index, list.len()).and_then(|at| list.get(at)))
}

/// A Redis list index (negative: from the tail) as a position, if within `len`.
fn position(index: i64, len: usize) -> Option<usize> {
    let at = if index < 0 {
        (len as i64).checked_add(index)?
    } else {
        index
    };
    usize::try_from(at).ok().filter(|&at| at < len)
}

/// `start stop` as Redis' `addListRangeReply` and `ltrimCommand` clamp them: `None` when the
/// range is empty.
fn range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        len.saturating_add(start)
    } else {
        start
    }
    .max(0);
    let stop = if stop < 0 {
        len.saturating_add(stop)
    } else {
        stop
    };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

/// `LSET key index element`.
pub(crate) fn lset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let key = argv[1];
    let Some(list) = list_or_return!(ctx, key, out) else {
        return error(out, "ERR no such key");
    };
    let len = list.len();
    let Some(index) = parse_i64(argv[2]) else {
        return error(out, NOT_INTEGER);
    };
    let Some(at) = position(index, len) else {
        return error(out, "ERR index out of range");
    };
    let element = argv[3];
    let written = rewrite(
        ctx,
        out,
        key,
        element_len(element.len()),
        |old, _, writer| {
            for (i, old) in old.iter().enumerate() {
                writer.push(if i == at { element } else { old });
            }
        },
    );
    match written {
        Ok(_) => {
            ctx.notify(Class::List, "lset", key);
            ok(out)
        }
        Err(reply) => reply,
    }
}

/// `LRANGE key start stop`: the range is read before the key is looked up, as in Redis.
pub(crate) fn lrange(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (Some(start), Some(stop)) = (parse_i64(argv[2]), parse_i64(argv[3])) else {
        return error(out, NOT_INTEGER);
    };
    ctx.read(argv[1]);
    let list = list_or_return!(ctx, argv[1], out);
    let kept = list.and_then(|list| range(start, stop, list.len()));
    let (Some(list), Some((from, to))) = (list, kept) else {
        out.array_header(0)?;
        return Ok(After::Continue);
    };
    out.array_header(to - from + 1)?;
    for element in list.range(from, to - from + 1) {
        out.bulk(element)?;
    }
    Ok(After::Continue)
}

/// `LTRIM key start stop`: keeps the range; `ltrim` is published even when nothing went.
pub(crate) fn ltrim(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let (Some(start), Some(stop)) = (parse_i64(argv[2]), parse_i64(argv[3])) else {
        return error(out, NOT_INTEGER);
    };
    let key = argv[1];
    let Some(list) = list_or_return!(ctx, key, out) else {
        return ok(out);
    };
    let kept = range(start, stop, list.len());
    let left = ctx.store.value_mut(key, ctx.clock.now).map_or(0, |value| {
        let mut list = ListMut::new(value);
        match kept {
            Some((from, to)) => list.keep(from, to),
            None => list.keep(1, 0),
        }
    });
    shrunk(ctx, out, key, left);
    changed(ctx, key, "ltrim", left);
    ok(out)
}

/// `LINSERT key BEFORE|AFTER pivot element`: the new length, -1 without the pivot, 0 without
/// the key.
pub(crate) fn linsert(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let after = if is(argv[2], "after") {
        true
    } else if is(argv[2], "before") {
        false
    } else {
        return error(out, SYNTAX);
    };
    let (key, pivot, element) = (argv[1], argv[3], argv[4]);
    let Some(list) = list_or_return!(ctx, key, out) else {
        return integer(out, 0);
    };
    let Some(at) = list.iter().position(|e| e == pivot) else {
        return integer(out, -1);
    };
    let written = rewrite(
        ctx,
        out,
        key,
        element_len(element.len()),
        |old, _, writer| {
            for (i, old) in old.iter().enumerate() {
                if i == at && !after {
                    writer.push(element);
                }
                writer.push(old);
                if i == at && after {
                    writer.push(element);
                }
            }
        },
    );
    match written {
        Ok(len) => {
            ctx.notify(Class::List, "linsert", key);
            integer(out, len as i64)
        }
        Err(reply) => reply,
    }
}

/// `LREM key count element`: removes up to `count` matches from the head (from the tail if
/// negative; all if 0).
pub(crate) fn lrem(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Some(count) = parse_i64(argv[2]) else {
        return error(out, NOT_INTEGER);
    };
    let (key, element) = (argv[1], argv[3]);
    let Some(list) = list_or_return!(ctx, key, out) else {
        return integer(out, 0);
    };
    let matches = list.iter().filter(|e| *e == element).count();
    let limit = match count {
        0 => matches,
        _ => usize::try_from(count.unsigned_abs()).map_or(matches, |n| n.min(matches)),
    };
    if limit == 0 {
        return integer(out, 0);
    }
    // From the tail: the first `matches - limit` matches stay.
    let stay = if count < 0 { matches - limit } else { 0 };
    let written = rewrite(ctx, out, key, 0, |old, _, writer| {
        let mut seen = 0;
        for e in old.iter() {
            if e == element {
                seen += 1;
                if seen > stay && seen <= stay + limit {
                    continue;
                }
            }
            writer.push(e);
        }
    });
    match written {
        Ok(left) => {
            changed(ctx, key, "lrem", left);
            integer(out, limit as i64)
        }
        Err(reply) => reply,
    }
}

/// `LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]`, as Redis' `lposCommand`:
/// the options first, then the key.
pub(crate) fn lpos(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let (mut rank, mut count, mut maxlen): (i64, Option<usize>, usize) = (1, None, 0);
    let mut j = 3;
    while j < argv.len() {
        let Some(&value) = argv.get(j + 1) else {
            return error(out, SYNTAX);
        };
        let n = parse_i64(value);
        if is(argv[j], "rank") {
            match n {
                None => return error(out, NOT_INTEGER),
                Some(0) => return error(out, RANK_ZERO),
                Some(n) => rank = n,
            }
        } else if is(argv[j], "count") {
            match n {
                None => return error(out, NOT_INTEGER),
                Some(n) if n < 0 => return error(out, "ERR COUNT can't be negative"),
                Some(n) => count = Some(n as usize),
            }
        } else if is(argv[j], "maxlen") {
            match n {
                None => return error(out, NOT_INTEGER),
                Some(n) if n < 0 => return error(out, "ERR MAXLEN can't be negative"),
                Some(n) => maxlen = n as usize,
            }
        } else {
            return error(out, SYNTAX);
        }
        j += 2;
    }
    ctx.read(argv[1]);
    let Some(list) = list_or_return!(ctx, argv[1], out) else {
        match count {
            Some(_) => out.array_header(0)?,
            None => out.null()?,
        }
        return Ok(After::Continue);
    };
    let element = argv[2];
    let len = list.len();
    let from_tail = rank < 0;
    let skip = usize::try_from(rank.unsigned_abs() - 1).unwrap_or(usize::MAX);
    let scanned = if maxlen == 0 { len } else { maxlen.min(len) };
    // Positions of the matches in the order of the scan, from the rank-th on.
    let end = if from_tail { End::Tail } else { End::Head };
    let found = from_end(list, end)
        .take(scanned)
        .enumerate()
        .filter(|&(_, e)| e == element)
        .map(|(i, _)| if from_tail { len - 1 - i } else { i })
        .skip(skip);
    match count {
        None => match found.clone().next() {
            Some(at) => integer(out, at as i64),
            None => bulk_or_nil(out, None),
        },
        Some(count) => {
            let limit = if count == 0 { usize::MAX } else { count };
            out.array_header(found.clone().take(limit).count())?;
            for at in found.take(limit) {
                out.integer(at as i64)?;
            }
            Ok(After::Continue)
        }
    }
}

/// Redis' text for `LPOS … RANK 0`.
const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";

/// Redis' `lmoveGenericCommand`: pops from `from` of `source`, pushes at `to` of
/// `destination` (made if needed), answers the element (nil without a source). Events as
/// Redis': `new` and the push on the destination, then the pop (and `del`) on the source.
pub(super) fn lmove_generic(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    (source, destination): (&[u8], &[u8]),
    from: End,
    to: End,
) -> Reply {
    let Some(list) = list_or_return!(ctx, source, out) else {
        return bulk_or_nil(out, None);
    };
    let element_len_now = from_end(list, from).next().map_or(0, <[u8]>::len);
    let made = match ctx.store.get_kind(destination, ctx.clock.now) {
        Some((ValueKind::List, _)) => false,
        Some(_) => return error(out, WRONGTYPE),
        None => true,
    };
    // The element goes into the reply first, and from there into the destination.
    let list = ctx.store.get(source, ctx.clock.now).map(List::new);
    let element = list.and_then(|list| from_end(list, from).next());
    out.bulk_header(element_len_now)?;
    let at = out.len();
    out.raw(element.unwrap_or_default())?;
    out.raw(b"\r\n")?;
    // Pushed before it is popped, so that a refused push changes nothing; on one list the
    // result is the same.
    let pushed = Pushed::Reply(at..at + element_len_now);
    if let Err(reply) = push_elements(ctx, out, destination, to, pushed) {
        return reply;
    }
    ctx.written(made, Class::List, push_event(to), destination);
    ctx.list_grew(destination);
    let left = remove_from_end(ctx, out, source, from, 1);
    if source == destination {
        ctx.notify(Class::List, pop_event(from), source);
    } else {
        changed(ctx, source, pop_event(from), left);
    }
    Ok(After::Continue)
}

/// What `LMPOP` and `BLMPOP` pop: their keys, the end, and up to how many elements.
pub(super) struct Mpop<'v> {
    pub(super) keys: &'v [&'v [u8]],
    pub(super) end: End,
    pub(super) count: usize,
}

/// Reads `numkeys key … LEFT|RIGHT [COUNT count]` from `argv[at..]`, as Redis'
/// `lmpopGenericCommand`: its error text on `Err`.
pub(super) fn parse_mpop<'v>(argv: &'v [&'v [u8]], at: usize) -> Result<Mpop<'v>, &'static str> {
    let numkeys = parse_i64(argv[at])
        .filter(|&n| n >= 1)
        .ok_or("ERR numkeys should be greater than 0")?;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(at + 1))
        .filter(|&i| i < argv.len())
        .ok_or(SYNTAX)?;
    let end = parse_end(argv[where_at]).ok_or(SYNTAX)?;
    let mut count = None;
    let mut j = where_at + 1;
    while j < argv.len() {
        if count.is_none() && is(argv[j], "count") && j + 1 < argv.len() {
            let n = parse_i64(argv[j + 1])
                .filter(|&n| n >= 1)
                .ok_or("ERR count should be greater than 0")?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            j += 2;
        } else {
            return Err(SYNTAX);
        }
    }
    Ok(Mpop {
        keys: &argv[at + 1..where_at],
        end,
        count: count.unwrap_or(1),
    })
}

/// Pops up to `count` elements from `end` of list `key` (which holds at least one), and
/// answers `[key, [element …]]` (Redis' `listPopRangeAndReplyWithKey`).
pub(super) fn pop_range_with_key(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<(), Reply> {
    let list = ctx.store.get(key, ctx.clock.now).map(List::new);
    let n = count.min(list.map_or(0, |list| list.len()));
    let written = (|| {
        out.array_header(2)?;
        out.bulk(key)?;
        out.array_header(n)?;
        for element in list
            .into_iter()
            .flat_map(|list| from_end(list, end))
            .take(n)
        {
            out.bulk(element)?;
        }
        Ok(())
    })();
    written.map_err(Err)?;
    let left = remove_from_end(ctx, out, key, end, n);
    changed(ctx, key, pop_event(end), left);
    Ok(())
}

/// `LMPOP numkeys key … LEFT|RIGHT [COUNT count]`: from the first key holding a list, up to
/// `count` elements, as `[key, [element …]]`; the null array if no key holds one.
pub(crate) fn lmpop(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let mpop = match parse_mpop(argv, 1) {
        Ok(mpop) => mpop,
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
    out.null_array()?;
    Ok(After::Continue)
}

/// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT`.
pub(crate) fn lmove(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let (Some(from), Some(to)) = (parse_end(argv[3]), parse_end(argv[4])) else {
        return error(out, SYNTAX);
    };
    lmove_generic(ctx, out, (argv[1], argv[2]), from, to)
}

/// `RPOPLPUSH source destination`: `LMOVE source destination RIGHT LEFT`.
pub(crate) fn rpoplpush(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    lmove_generic(ctx, out, (argv[1], argv[2]), End::Tail, End::Head)
}
