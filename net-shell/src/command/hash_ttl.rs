//! Per-field time to live in hashes (Redis 7.4): `HEXPIRE`, `HPEXPIRE`, `HEXPIREAT`,
//! `HPEXPIREAT` (`NX`/`XX`/`GT`/`LT`, `FIELDS numfields field …`), `HTTL`, `HPTTL`,
//! `HEXPIRETIME`, `HPEXPIRETIME`, `HPERSIST`, and Redis 8.0's `HGETDEL`, `HGETEX`, `HSETEX`,
//! with the replies Redis documents (Debian has no Redis that new to compare with).
//!
//! A field's deadline is kept beside it in the hash's value (the last tick it lives through),
//! and each deadline has a timer on timer-core ([`FieldTimers`]): the field is gone the tick
//! after its deadline, as a key is, its `hexpired` event goes out then, and a hash whose last
//! field expires is deleted (`del`). A timer left behind by a field changed or deleted since
//! finds nothing to do when it fires.

use alloc::boxed::Box;
use alloc::vec::Vec;

use timer_core::{Expired, HeapSlot, Tick, TimerHeapOn, TimerQueue};

use super::events::Class;
use super::expiry::{self, Unit, When};
use super::hashes::{hash_or_return, rewrite, Edit};
use super::{error, After, Context, Reply, ReplyWriter};

/// Which field of which key a timer is for.
#[derive(Debug)]
pub struct FieldTimer {
    /// The hash's key.
    pub(crate) key: Vec<u8>,
    /// The field.
    pub(crate) field: Vec<u8>,
}

/// The timers of every field with a deadline, on timer-core's heap, which grows (twice the
/// size, its timers filed anew) when it is full.
pub struct FieldTimers {
    heap: TimerHeapOn<FieldTimer, Box<[HeapSlot<FieldTimer>]>>,
}

impl Default for FieldTimers {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldTimers {
    /// Room for 64 timers to start with.
    pub fn new() -> Self {
        Self {
            heap: TimerHeapOn::with_capacity(64),
        }
    }

    /// A timer for `field` of `key`, whose deadline (its last live tick) is `deadline`: it
    /// fires at the tick after.
    pub(crate) fn add(&mut self, key: &[u8], field: &[u8], deadline: Tick) {
        let timer = FieldTimer {
            key: key.to_vec(),
            field: field.to_vec(),
        };
        let at = deadline.saturating_add(1);
        if let Err(full) = self.heap.insert(at, timer) {
            let mut bigger = TimerHeapOn::with_capacity(2 * self.heap.capacity());
            for old in self.heap.drain() {
                let _ = bigger.insert(old.deadline, old.value);
            }
            let _ = bigger.insert(at, full.0);
            self.heap = bigger;
        }
    }

    /// The next timer due by `now`: its deadline is one tick past the field's.
    pub(crate) fn pop_expired(&mut self, now: Tick) -> Option<Expired<FieldTimer>> {
        self.heap.pop_expired(now)
    }

    /// When the next timer is due.
    pub(crate) fn next_deadline(&self) -> Option<Tick> {
        self.heap.next_deadline()
    }
}

/// The fields after `FIELDS numfields` at `argv[at..]`, as Redis 7.4 reads them.
fn fields<'v>(argv: &'v [&'v [u8]], at: usize) -> Result<&'v [&'v [u8]], &'static str> {
    fields_of(argv, at, 1)
}

/// [`fields`] where each field takes `width` words (2 for `HSETEX`'s field and value).
fn fields_of<'v>(
    argv: &'v [&'v [u8]],
    at: usize,
    width: usize,
) -> Result<&'v [&'v [u8]], &'static str> {
    const FIELDS: &str = "ERR Mandatory argument FIELDS is missing or not at the right position";
    if argv.get(at).is_none_or(|word| !super::is(word, "fields")) {
        return Err(FIELDS);
    }
    let count = argv
        .get(at + 1)
        .and_then(|word| crate::decimal::parse_i64(word))
        .filter(|&n| n >= 1)
        .ok_or("ERR Parameter `numFields` should be greater than 0")?;
    let rest = argv.get(at + 2..).unwrap_or_default();
    if usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(width))
        != Some(rest.len())
    {
        return Err("ERR The `numfields` parameter must match the number of arguments");
    }
    Ok(rest)
}

/// The conditions `HEXPIRE` takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Condition {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

impl Condition {
    /// Whether a field whose deadline is `current` (`None`: none, an infinite time to live)
    /// may get `deadline`.
    fn allows(self, current: Option<Tick>, deadline: Tick) -> bool {
        match (self, current) {
            (Self::Always, _) => true,
            (Self::Nx, current) => current.is_none(),
            (Self::Xx, current) => current.is_some(),
            (Self::Gt, current) => current.is_some_and(|at| deadline > at),
            (Self::Lt, current) => current.is_none_or(|at| deadline < at),
        }
    }
}

/// Redis 7.4's `hexpireGenericCommand`: each field answers -2 (no such field or key), 0 (the
/// condition refused it), 1 (deadline set) or 2 (deleted: the time is not in the future).
fn hexpire_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    unit: Unit,
    absolute: bool,
) -> Reply {
    let (key, amount) = (argv[1], argv[2]);
    let Some(number) = crate::decimal::parse_i64(amount) else {
        return error(out, super::NOT_INTEGER);
    };
    if number < 0 {
        return error(
            out,
            "ERR invalid expire time, must be >= 0 and <= 281474976710655",
        );
    }
    let (condition, at) = match argv.get(3) {
        Some(word) if super::is(word, "nx") => (Condition::Nx, 4),
        Some(word) if super::is(word, "xx") => (Condition::Xx, 4),
        Some(word) if super::is(word, "gt") => (Condition::Gt, 4),
        Some(word) if super::is(word, "lt") => (Condition::Lt, 4),
        _ => (Condition::Always, 3),
    };
    let fields = match fields(argv, at) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let when = When {
        amount,
        unit,
        absolute,
    };
    let deadline = match expiry::expire_deadline(when, ctx.clock) {
        Ok(at) => at,
        Err(refused) => return refused.reply(out, ""),
    };
    let now = ctx.clock.now;
    let Some(hash) = hash_or_return!(ctx, key, out) else {
        out.array_header(fields.len())?;
        for _ in fields {
            out.integer(-2)?;
        }
        return Ok(After::Continue);
    };
    // The answer for each field, and the change.
    let mut codes: Vec<i64> = Vec::with_capacity(fields.len());
    let mut deadlines: Vec<(&[u8], Option<Tick>)> = Vec::new();
    let mut delete: Vec<&[u8]> = Vec::new();
    for &field in fields {
        let code = match hash.deadline(field) {
            None => -2,
            Some(current) if !condition.allows(current, deadline) => 0,
            Some(_) if deadline <= now => {
                delete.push(field);
                2
            }
            Some(_) => {
                deadlines.push((field, Some(deadline)));
                1
            }
        };
        codes.push(code);
    }
    if !deadlines.is_empty() || !delete.is_empty() {
        let edit = Edit {
            delete: &delete,
            deadlines: &deadlines,
            ..Edit::default()
        };
        let left = match rewrite(ctx, out, key, &edit) {
            Ok((_, left)) => left,
            Err(reply) => return reply,
        };
        for (field, _) in &deadlines {
            ctx.field_timers.add(key, field, deadline);
        }
        if !deadlines.is_empty() {
            ctx.notify(Class::Hash, "hexpire", key);
        }
        if !delete.is_empty() {
            ctx.notify(Class::Hash, "hdel", key);
        }
        if left == 0 {
            ctx.notify(Class::Generic, "del", key);
        }
    }
    out.array_header(codes.len())?;
    for code in codes {
        out.integer(code)?;
    }
    Ok(After::Continue)
}

/// `HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hexpire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, Unit::Seconds, false)
}

/// `HPEXPIRE key ms [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hpexpire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, Unit::Milliseconds, false)
}

/// `HEXPIREAT key unix-seconds [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hexpireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, Unit::Seconds, true)
}

/// `HPEXPIREAT key unix-ms [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hpexpireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, Unit::Milliseconds, true)
}

/// What `HTTL` and its kin answer for a field with a deadline.
#[derive(Clone, Copy)]
enum Shown {
    Seconds,
    Milliseconds,
    UnixSeconds,
    UnixMilliseconds,
}

/// `HTTL`, `HPTTL`, `HEXPIRETIME`, `HPEXPIRETIME key FIELDS numfields field …`: each field
/// answers -2 (no such field or key), -1 (no deadline) or its time.
fn httl_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    shown: Shown,
) -> Reply {
    let fields = match fields(argv, 2) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let clock = ctx.clock;
    let hash = hash_or_return!(ctx, argv[1], out);
    out.array_header(fields.len())?;
    for field in fields {
        let value = match hash.and_then(|hash| hash.deadline(field)) {
            None => -2,
            Some(None) => -1,
            Some(Some(at)) => {
                let left = at.saturating_sub(clock.now);
                let unix = || expiry::unix_of(at, clock).unwrap_or(0);
                let value = match shown {
                    Shown::Seconds => left.saturating_add(500) / 1000,
                    Shown::Milliseconds => left,
                    Shown::UnixSeconds => unix() / 1000,
                    Shown::UnixMilliseconds => unix(),
                };
                value.min(expiry::MAX_MS) as i64
            }
        };
        out.integer(value)?;
    }
    Ok(After::Continue)
}

/// `HTTL key FIELDS numfields field …`.
pub(crate) fn httl(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    httl_generic(ctx, argv, out, Shown::Seconds)
}

/// `HPTTL key FIELDS numfields field …`.
pub(crate) fn hpttl(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    httl_generic(ctx, argv, out, Shown::Milliseconds)
}

/// `HEXPIRETIME key FIELDS numfields field …`.
pub(crate) fn hexpiretime(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    httl_generic(ctx, argv, out, Shown::UnixSeconds)
}

/// `HPEXPIRETIME key FIELDS numfields field …`.
pub(crate) fn hpexpiretime(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    httl_generic(ctx, argv, out, Shown::UnixMilliseconds)
}

/// `HPERSIST key FIELDS numfields field …`: each field answers -2 (no such field or key), -1
/// (no deadline) or 1 (deadline removed).
pub(crate) fn hpersist(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let fields = match fields(argv, 2) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let key = argv[1];
    let hash = hash_or_return!(ctx, key, out);
    let mut codes: Vec<i64> = Vec::with_capacity(fields.len());
    let mut persist: Vec<(&[u8], Option<Tick>)> = Vec::new();
    for &field in fields {
        codes.push(match hash.and_then(|hash| hash.deadline(field)) {
            None => -2,
            Some(None) => -1,
            Some(Some(_)) => {
                persist.push((field, None));
                1
            }
        });
    }
    if !persist.is_empty() {
        let edit = Edit {
            deadlines: &persist,
            ..Edit::default()
        };
        if let Err(reply) = rewrite(ctx, out, key, &edit) {
            return reply;
        }
        ctx.notify(Class::Hash, "hpersist", key);
    }
    out.array_header(codes.len())?;
    for code in codes {
        out.integer(code)?;
    }
    Ok(After::Continue)
}

/// An expiry option of `HGETEX` and `HSETEX`: `EX`, `PX`, `EXAT` or `PXAT` and its time.
fn expiry_option<'v>(
    word: &[u8],
    next: Option<&'v [u8]>,
) -> Option<(Unit, bool, Option<&'v [u8]>)> {
    let (unit, absolute) = [
        ("ex", Unit::Seconds, false),
        ("px", Unit::Milliseconds, false),
        ("exat", Unit::Seconds, true),
        ("pxat", Unit::Milliseconds, true),
    ]
    .into_iter()
    .find(|(name, _, _)| super::is(word, name))
    .map(|(_, unit, absolute)| (unit, absolute))?;
    Some((unit, absolute, next))
}

/// What an expiry option's time gives.
enum OptionTime {
    NotInteger,
    /// Not positive, or past Redis' range.
    Invalid,
    At(Tick),
}

/// A deadline from an expiry option's time (a positive integer, as Redis 8.0 documents).
fn option_deadline(
    clock: super::Clock,
    (unit, absolute, amount): (Unit, bool, Option<&[u8]>),
) -> OptionTime {
    let amount = amount.unwrap_or_default();
    match crate::decimal::parse_i64(amount) {
        None => OptionTime::NotInteger,
        Some(n) if n <= 0 => OptionTime::Invalid,
        Some(_) => {
            let when = When {
                amount,
                unit,
                absolute,
            };
            match expiry::set_deadline(when, clock) {
                Ok(at) => OptionTime::At(at),
                Err(_) => OptionTime::Invalid,
            }
        }
    }
}

/// `HGETDEL key FIELDS numfields field …` (Redis 8.0): each field's value (nil for none), and
/// the fields deleted; the hash goes with its last field.
pub(crate) fn hgetdel(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let fields = match fields(argv, 2) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let key = argv[1];
    let hash = hash_or_return!(ctx, key, out);
    let mut delete: Vec<&[u8]> = Vec::new();
    out.array_header(fields.len())?;
    for &field in fields {
        let value = hash.and_then(|hash| hash.get(field));
        if value.is_some() && !delete.contains(&field) {
            delete.push(field);
        }
        super::bulk_or_nil(out, value)?;
    }
    if delete.is_empty() {
        return Ok(After::Continue);
    }
    let edit = Edit {
        delete: &delete,
        ..Edit::default()
    };
    let left = match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => left,
        Err(reply) => return reply,
    };
    ctx.notify(Class::Hash, "hdel", key);
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    Ok(After::Continue)
}

/// `HGETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST] FIELDS numfields field …` (Redis 8.0):
/// each field's value (nil for none), and the fields that exist given the deadline (or none).
pub(crate) fn hgetex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let (expiry, persist, at) = match argv.get(2) {
        Some(word) if super::is(word, "persist") => (None, true, 3),
        Some(word) => match expiry_option(word, argv.get(3).copied()) {
            Some(option) => (Some(option), false, 4),
            None => (None, false, 2),
        },
        None => (None, false, 2),
    };
    let fields = match fields(argv, at) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let deadline = match expiry.map(|option| option_deadline(ctx.clock, option)) {
        None => None,
        Some(OptionTime::At(deadline)) => Some(deadline),
        Some(OptionTime::NotInteger) => return error(out, super::NOT_INTEGER),
        Some(OptionTime::Invalid) => {
            return error(out, "ERR invalid expire time in 'hgetex' command")
        }
    };
    let now = ctx.clock.now;
    let hash = hash_or_return!(ctx, key, out);
    let mut changed: Vec<(&[u8], Option<Tick>)> = Vec::new();
    out.array_header(fields.len())?;
    for &field in fields {
        let value = hash.and_then(|hash| hash.get(field));
        let has_deadline = hash
            .and_then(|hash| hash.deadline(field))
            .flatten()
            .is_some();
        if value.is_some() && (deadline.is_some() || (persist && has_deadline)) {
            changed.push((field, deadline));
        }
        super::bulk_or_nil(out, value)?;
    }
    if changed.is_empty() {
        return Ok(After::Continue);
    }
    let past = deadline.is_some_and(|at| at <= now);
    let delete: Vec<&[u8]> = if past {
        changed.iter().map(|(f, _)| *f).collect()
    } else {
        Vec::new()
    };
    let edit = Edit {
        delete: &delete,
        deadlines: if past { &[] } else { &changed },
        ..Edit::default()
    };
    let left = match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => left,
        Err(reply) => return reply,
    };
    match deadline {
        Some(_) if past => ctx.notify(Class::Hash, "hdel", key),
        Some(at) => {
            for (field, _) in &changed {
                ctx.field_timers.add(key, field, at);
            }
            ctx.notify(Class::Hash, "hexpire", key);
        }
        None => ctx.notify(Class::Hash, "hpersist", key),
    }
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    Ok(After::Continue)
}

/// `HSETEX key [FNX|FXX] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL] FIELDS numfields field value …`
/// (Redis 8.0): 1 if the fields were set (with the deadline given, their own with `KEEPTTL`,
/// none otherwise), 0 if `FNX` or `FXX` refused them all.
pub(crate) fn hsetex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let (mut fnx, mut fxx, mut keep_ttl, mut expiry) = (false, false, false, None);
    let mut at = 2;
    while let Some(&word) = argv.get(at) {
        if super::is(word, "fields") {
            break;
        } else if super::is(word, "fnx") && !fnx && !fxx {
            fnx = true;
        } else if super::is(word, "fxx") && !fnx && !fxx {
            fxx = true;
        } else if super::is(word, "keepttl") && !keep_ttl && expiry.is_none() {
            keep_ttl = true;
        } else if let (Some(option), false, None) = (
            expiry_option(word, argv.get(at + 1).copied()),
            keep_ttl,
            expiry,
        ) {
            expiry = Some(option);
            at += 1;
        } else {
            return error(out, super::SYNTAX);
        }
        at += 1;
    }
    let words = match fields_of(argv, at, 2) {
        Ok(words) => words,
        Err(text) => return error(out, text),
    };
    let deadline = match expiry.map(|option| option_deadline(ctx.clock, option)) {
        None => None,
        Some(OptionTime::At(deadline)) => Some(deadline),
        Some(OptionTime::NotInteger) => return error(out, super::NOT_INTEGER),
        Some(OptionTime::Invalid) => {
            return error(out, "ERR invalid expire time in 'hsetex' command")
        }
    };
    let now = ctx.clock.now;
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let set: Vec<(&[u8], &[u8])> = words.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let exists = |field: &[u8]| hash.and_then(|hash| hash.get(field)).is_some();
    if (fnx && set.iter().any(|(f, _)| exists(f))) || (fxx && !set.iter().all(|(f, _)| exists(f))) {
        return super::integer(out, 0);
    }
    let past = deadline.is_some_and(|at| at <= now);
    let fields: Vec<&[u8]> = set.iter().map(|(f, _)| *f).collect();
    let deadlines: Vec<(&[u8], Option<Tick>)> = match deadline {
        Some(at) if !past => fields.iter().map(|f| (*f, Some(at))).collect(),
        _ => Vec::new(),
    };
    let edit = Edit {
        set: if past { &[] } else { &set },
        keep_ttl,
        delete: if past { &fields } else { &[] },
        deadlines: &[],
    };
    let left = match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => left,
        Err(reply) => return reply,
    };
    if !deadlines.is_empty() {
        // The deadlines go on the values just written.
        let edit = Edit {
            deadlines: &deadlines,
            ..Edit::default()
        };
        if let Err(reply) = rewrite(ctx, out, key, &edit) {
            return reply;
        }
        for (field, at) in &deadlines {
            if let Some(at) = at {
                ctx.field_timers.add(key, field, *at);
            }
        }
    }
    if past {
        if !made {
            ctx.notify(Class::Hash, "hdel", key);
        }
        if left == 0 && !made {
            ctx.notify(Class::Generic, "del", key);
        }
    } else {
        ctx.written(made, Class::Hash, "hset", key);
        if !deadlines.is_empty() {
            ctx.notify(Class::Hash, "hexpire", key);
        }
    }
    super::integer(out, 1)
}

/// The timers for the fields with deadlines of hash value `value`, now under `key` (a hash
/// renamed or copied keeps its fields' deadlines).
pub(crate) fn add_timers_for(timers: &mut FieldTimers, key: &[u8], value: &[u8], now: Tick) {
    for (field, _, at) in super::hashes::Hash::new(value, now).entries() {
        if let Some(at) = at {
            timers.add(key, field, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a field with a deadline costs beside its name and value: 9 bytes in the hash's
    /// value (the deadline and its length; a field without one takes 1), and a timer slot,
    /// which holds copies of the key and the field on the heap.
    #[test]
    fn a_field_timer_slot_is_this_large() {
        let slot = core::mem::size_of::<HeapSlot<FieldTimer>>();
        std::println!(
            "timer slot: {slot} bytes, FieldTimer {} bytes",
            core::mem::size_of::<FieldTimer>()
        );
        assert!(slot <= 80, "{slot}");
    }

    #[test]
    fn a_full_heap_grows_and_keeps_its_timers() {
        let mut timers = FieldTimers::new();
        for i in 0..200u64 {
            timers.add(b"k", &i.to_le_bytes(), 1_000 - i);
        }
        let mut fired = std::vec::Vec::new();
        while let Some(expired) = timers.pop_expired(2_000) {
            fired.push(expired.deadline);
        }
        assert_eq!(fired.len(), 200);
        assert!(fired.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(fired[0], 802, "the tick after the earliest deadline");
    }
}
