//! Per-field time to live in hashes (Redis 7.4): `HEXPIRE`, `HPEXPIRE`, `HEXPIREAT`,
//! `HPEXPIREAT` (`NX`/`XX`/`GT`/`LT`, `FIELDS numfields field …`), `HTTL`, `HPTTL`,
//! `HEXPIRETIME`, `HPEXPIRETIME`, `HPERSIST`, and Redis 8.0's `HGETDEL`, `HGETEX`, `HSETEX`,
//! checked against Redis' own source (`src/t_hash.c`) and tests, since Debian has no Redis
//! that new to compare with: its order of checks, error texts, reply codes, rounding and
//! events.
//!
//! A field's deadline is kept beside it in the hash's value (the last tick it lives through,
//! 8 bytes), and each hash with deadlines has one timer on timer-core ([`FieldTimers`]), the
//! tick after the earliest: a field is gone the tick after its deadline, as a key is, its
//! hash's `hexpired` event goes out then, and a hash whose last field expires is deleted
//! (`del`). The timer is armed again at the next deadline; one that finds its fields changed
//! since only re-arms.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use timer_core::{HeapSlot, Tick, TimerHeapOn, TimerId, TimerQueue};

use super::events::Class;
use super::expiry::{self, Unit};
use super::hashes::{hash_or_return, rewrite, Edit, Hash};
use super::{error, After, Context, Reply, ReplyWriter};

/// Which hash a timer is for: it fires the tick after the earliest deadline of its fields.
#[derive(Debug)]
pub struct FieldTimer {
    /// The hash's key.
    pub(crate) key: Box<[u8]>,
}

/// One timer on timer-core's heap per hash with field deadlines, at the tick after its
/// earliest one. The deadlines themselves live with the fields, in the hash's value (8 bytes
/// each), so a field with a deadline costs no timer of its own: when a hash's timer fires,
/// every field of it past its deadline goes, and the timer is armed again at the next one.
/// The heap grows (twice the size, its timers filed anew) when it is full.
pub struct FieldTimers {
    heap: TimerHeapOn<FieldTimer, Box<[HeapSlot<FieldTimer>]>>,
    /// Each hash's timer and when it fires.
    armed: BTreeMap<Box<[u8]>, (TimerId, Tick)>,
}

impl Default for FieldTimers {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldTimers {
    /// Room for 64 hashes' timers to start with.
    pub fn new() -> Self {
        Self {
            heap: TimerHeapOn::with_capacity(64),
            armed: BTreeMap::new(),
        }
    }

    /// A field of hash `key` has deadline `deadline` (its last live tick): the hash's timer
    /// fires at the tick after, or earlier if another field's deadline comes first.
    pub(crate) fn add(&mut self, key: &[u8], deadline: Tick) {
        let at = deadline.saturating_add(1);
        if let Some(&(id, armed_at)) = self.armed.get(key) {
            if armed_at <= at {
                return;
            }
            if self.heap.reschedule(id, at).is_ok() {
                self.armed.insert(key.into(), (id, at));
                return;
            }
        }
        let mut timer = FieldTimer { key: key.into() };
        loop {
            match self.heap.insert(at, timer) {
                Ok(id) => {
                    self.armed.insert(key.into(), (id, at));
                    return;
                }
                Err(full) => {
                    timer = full.0;
                    self.grow();
                }
            }
        }
    }

    /// Files every timer anew in a heap twice the size.
    fn grow(&mut self) {
        let mut bigger = TimerHeapOn::with_capacity(2 * self.heap.capacity().max(1));
        for old in self.heap.drain() {
            let deadline = old.deadline;
            let key = old.value.key.clone();
            if let Ok(id) = bigger.insert(deadline, old.value) {
                self.armed.insert(key, (id, deadline));
            }
        }
        self.heap = bigger;
    }

    /// The next hash whose timer is due by `now`; it is disarmed.
    pub(crate) fn pop_expired(&mut self, now: Tick) -> Option<Box<[u8]>> {
        let expired = self.heap.pop_expired(now)?;
        self.armed.remove(&expired.value.key);
        Some(expired.value.key)
    }

    /// When the next timer is due.
    pub(crate) fn next_deadline(&self) -> Option<Tick> {
        self.heap.next_deadline()
    }

    /// How many hashes have a timer.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

/// `HEXPIRE`'s error for a count of fields that is not a positive integer.
const NUMFIELDS_HEXPIRE: &str = "ERR Parameter `numFields` should be greater than 0";
/// The other commands' error for it (`HTTL`, `HPERSIST`, `HGETDEL`, `HGETEX`).
const NUMFIELDS: &str = "ERR Number of fields must be a positive integer";
/// `HSETEX`'s error for it.
const NUMFIELDS_HSETEX: &str = "ERR invalid number of fields";

/// The latest Unix time in ms a field may be given: Redis' `HFE_MAX_ABS_TIME_MSEC`
/// (2^46 - 1, a quarter of its bucket structure's 48-bit range).
const MAX_FIELD_UNIX_MS: i64 = (1 << 46) - 1;

/// The fields after `FIELDS numfields` (`argv[at]` is `FIELDS`), as Redis reads them: `FIELDS`
/// there, a count from 1 (else `count_error`), exactly that many fields after it.
fn fields<'v>(
    argv: &'v [&'v [u8]],
    at: usize,
    count_error: &'static str,
) -> Result<&'v [&'v [u8]], &'static str> {
    if argv.get(at).is_none_or(|word| !super::is(word, "fields")) {
        return Err("ERR Mandatory argument FIELDS is missing or not at the right position");
    }
    let count = argv
        .get(at + 1)
        .and_then(|word| crate::decimal::parse_i64(word))
        .filter(|&n| n >= 1)
        .ok_or(count_error)?;
    let rest = argv.get(at + 2..).unwrap_or_default();
    if usize::try_from(count).ok() != Some(rest.len()) {
        return Err("ERR The `numfields` parameter must match the number of arguments");
    }
    Ok(rest)
}

/// Why a field's time was refused.
enum BadTime {
    /// Redis' `getLongLongFromObjectOrReply`.
    NotInteger,
    /// `ERR invalid expire time, must be >= 0`.
    Negative,
    /// Past [`MAX_FIELD_UNIX_MS`]: `ERR invalid expire time in '<command>' command`.
    TooLate,
    /// An absolute time, and this build has no wall clock.
    NoWallClock,
}

impl BadTime {
    fn reply(self, out: &mut ReplyWriter<'_>, command: &str) -> Reply {
        match self {
            Self::NotInteger => error(out, super::NOT_INTEGER),
            Self::Negative => error(out, "ERR invalid expire time, must be >= 0"),
            Self::TooLate => expiry::Refused::Invalid.reply(out, command),
            Self::NoWallClock => expiry::Refused::NoWallClock.reply(out, command),
        }
    }
}

/// A field's deadline from a time argument, as Redis' `parseExpireTime` checks it: an
/// integer from 0, whose Unix time in ms is at most [`MAX_FIELD_UNIX_MS`]. Relative times
/// count from now; a time not after now is the past (the field is deleted).
fn field_deadline(
    amount: &[u8],
    unit: Unit,
    absolute: bool,
    clock: super::Clock,
) -> Result<Tick, BadTime> {
    let amount = crate::decimal::parse_i64(amount).ok_or(BadTime::NotInteger)?;
    if amount < 0 {
        return Err(BadTime::Negative);
    }
    let ms = match unit {
        Unit::Seconds if amount > MAX_FIELD_UNIX_MS / 1000 => return Err(BadTime::TooLate),
        Unit::Seconds => amount * 1000,
        Unit::Milliseconds => amount,
    };
    let base = if absolute { 0 } else { expiry::base(clock) };
    if ms > MAX_FIELD_UNIX_MS - base {
        return Err(BadTime::TooLate);
    }
    if absolute && clock.unix_ms.is_none() {
        return Err(BadTime::NoWallClock);
    }
    Ok(expiry::tick_at(ms + base, clock))
}

/// A field's state in a command that changes fields one after another, as Redis does: a
/// field named twice sees what the first naming did to it.
struct Changes<'v> {
    /// Each field changed, once, with its state now: `None` deleted, `Some(deadline)`.
    changed: Vec<(&'v [u8], Option<Option<Tick>>)>,
}

impl<'v> Changes<'v> {
    fn new() -> Self {
        Self {
            changed: Vec::new(),
        }
    }

    /// `field`'s deadline now (`None`: no such field), given the hash as it was.
    fn deadline(&self, hash: Option<Hash<'_>>, field: &[u8]) -> Option<Option<Tick>> {
        match self.changed.iter().find(|(f, _)| *f == field) {
            Some((_, state)) => *state,
            None => hash.and_then(|hash| hash.deadline(field)),
        }
    }

    /// `field`'s value now, given the hash as it was.
    fn value<'h>(&self, hash: Option<Hash<'h>>, field: &[u8]) -> Option<&'h [u8]> {
        match self.changed.iter().find(|(f, _)| *f == field) {
            Some((_, None)) => None,
            _ => hash.and_then(|hash| hash.get(field)),
        }
    }

    fn record(&mut self, field: &'v [u8], state: Option<Option<Tick>>) {
        match self.changed.iter_mut().find(|(f, _)| *f == field) {
            Some(entry) => entry.1 = state,
            None => self.changed.push((field, state)),
        }
    }

    /// Writes the changes to hash `key` and starts the timers of the new deadlines: `Ok`, the
    /// fields left.
    fn apply(
        &self,
        ctx: &mut Context<'_, '_>,
        out: &mut ReplyWriter<'_>,
        key: &[u8],
    ) -> Result<usize, Reply> {
        let delete: Vec<&[u8]> = self
            .changed
            .iter()
            .filter(|(_, state)| state.is_none())
            .map(|(f, _)| *f)
            .collect();
        let deadlines: Vec<(&[u8], Option<Tick>)> = self
            .changed
            .iter()
            .filter_map(|(f, state)| state.map(|at| (*f, at)))
            .collect();
        let edit = Edit {
            delete: &delete,
            deadlines: &deadlines,
            ..Edit::default()
        };
        let (_, left) = rewrite(ctx, out, key, &edit)?;
        if let Some(earliest) = deadlines.iter().filter_map(|(_, at)| *at).min() {
            ctx.field_timers.add(key, earliest);
        }
        Ok(left)
    }
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
    /// may get `deadline`: `GT` refuses a field without one, `LT` takes it (t_hash.c,
    /// `hashTypeSetExpiryListpack`).
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

/// Replies with one integer per code.
fn codes_reply(out: &mut ReplyWriter<'_>, codes: &[i64]) -> Reply {
    out.array_header(codes.len())?;
    for &code in codes {
        out.integer(code)?;
    }
    Ok(After::Continue)
}

/// Redis 7.4's `hexpireGenericCommand`, in its order: the key's type, the time, the
/// condition, `FIELDS`. Each field, in turn, answers -2 (no such field or key), 0 (the
/// condition refused it), 1 (deadline set) or 2 (deleted: the time is not in the future).
/// One event: `hdel` if a field was deleted (and `del` if the hash went), else `hexpire`.
fn hexpire_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    (command, unit, absolute): (&str, Unit, bool),
) -> Reply {
    let (key, amount) = (argv[1], argv[2]);
    let clock = ctx.clock;
    let hash = hash_or_return!(ctx, key, out);
    let deadline = match field_deadline(amount, unit, absolute, clock) {
        Ok(at) => at,
        Err(bad) => return bad.reply(out, command),
    };
    let (condition, at) = match argv.get(3) {
        Some(word) if super::is(word, "nx") => (Condition::Nx, 4),
        Some(word) if super::is(word, "xx") => (Condition::Xx, 4),
        Some(word) if super::is(word, "gt") => (Condition::Gt, 4),
        Some(word) if super::is(word, "lt") => (Condition::Lt, 4),
        _ => (Condition::Always, 3),
    };
    let fields = match fields(argv, at, NUMFIELDS_HEXPIRE) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let mut changes = Changes::new();
    let mut codes: Vec<i64> = Vec::with_capacity(fields.len());
    for &field in fields {
        let code = match changes.deadline(hash, field) {
            None => -2,
            Some(current) if !condition.allows(current, deadline) => 0,
            Some(_) if deadline <= clock.now => {
                changes.record(field, None);
                2
            }
            Some(_) => {
                changes.record(field, Some(Some(deadline)));
                1
            }
        };
        codes.push(code);
    }
    if !changes.changed.is_empty() {
        let deleted = codes.contains(&2);
        let left = match changes.apply(ctx, out, key) {
            Ok(left) => left,
            Err(reply) => return reply,
        };
        if deleted {
            ctx.notify(Class::Hash, "hdel", key);
            if left == 0 {
                ctx.notify(Class::Generic, "del", key);
            }
        } else {
            ctx.notify(Class::Hash, "hexpire", key);
        }
    }
    codes_reply(out, &codes)
}

/// `HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hexpire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, ("hexpire", Unit::Seconds, false))
}

/// `HPEXPIRE key ms [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hpexpire(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, ("hpexpire", Unit::Milliseconds, false))
}

/// `HEXPIREAT key unix-seconds [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hexpireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, ("hexpireat", Unit::Seconds, true))
}

/// `HPEXPIREAT key unix-ms [NX|XX|GT|LT] FIELDS numfields field …`.
pub(crate) fn hpexpireat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    hexpire_generic(ctx, argv, out, ("hpexpireat", Unit::Milliseconds, true))
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
/// answers -2 (no such field or key), -1 (no deadline) or its time. Seconds are rounded up,
/// as Redis' `httlGenericCommand` does (`(expire + 999 - basetime) / 1000`), unlike `TTL`'s
/// rounding to the nearest.
fn httl_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    shown: Shown,
) -> Reply {
    let clock = ctx.clock;
    let hash = hash_or_return!(ctx, argv[1], out);
    let fields = match fields(argv, 2, NUMFIELDS) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    out.array_header(fields.len())?;
    for field in fields {
        let value = match hash.and_then(|hash| hash.deadline(field)) {
            None => -2,
            Some(None) => -1,
            Some(Some(at)) => {
                let left = at.saturating_sub(clock.now);
                let unix = || expiry::unix_of(at, clock).unwrap_or(0);
                let value = match shown {
                    Shown::Seconds => left.saturating_add(999) / 1000,
                    Shown::Milliseconds => left,
                    Shown::UnixSeconds => unix().saturating_add(999) / 1000,
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
/// (no deadline) or 1 (deadline removed); `hpersist` if any was.
pub(crate) fn hpersist(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let hash = hash_or_return!(ctx, key, out);
    let fields = match fields(argv, 2, NUMFIELDS) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let mut changes = Changes::new();
    let mut codes: Vec<i64> = Vec::with_capacity(fields.len());
    for &field in fields {
        codes.push(match changes.deadline(hash, field) {
            None => -2,
            Some(None) => -1,
            Some(Some(_)) => {
                changes.record(field, Some(None));
                1
            }
        });
    }
    if !changes.changed.is_empty() {
        if let Err(reply) = changes.apply(ctx, out, key) {
            return reply;
        }
        ctx.notify(Class::Hash, "hpersist", key);
    }
    codes_reply(out, &codes)
}

/// `HGETDEL key FIELDS numfields field …` (Redis 8.0): each field's value (nil for none, or
/// for a field named again after it was deleted), and the fields deleted (`hdel`); the hash
/// goes with its last field (`del`).
pub(crate) fn hgetdel(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let hash = hash_or_return!(ctx, key, out);
    let fields = match fields(argv, 2, NUMFIELDS) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let mut changes = Changes::new();
    out.array_header(fields.len())?;
    for &field in fields {
        let value = changes.value(hash, field);
        if value.is_some() {
            changes.record(field, None);
        }
        super::bulk_or_nil(out, value)?;
    }
    if changes.changed.is_empty() {
        return Ok(After::Continue);
    }
    let left = match changes.apply(ctx, out, key) {
        Ok(left) => left,
        Err(reply) => return reply,
    };
    ctx.notify(Class::Hash, "hdel", key);
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    Ok(After::Continue)
}

/// An expiry option's word: `EX`, `PX`, `EXAT` or `PXAT`, as unit and whether absolute.
fn expiry_option(word: &[u8]) -> Option<(Unit, bool)> {
    [
        ("ex", Unit::Seconds, false),
        ("px", Unit::Milliseconds, false),
        ("exat", Unit::Seconds, true),
        ("pxat", Unit::Milliseconds, true),
    ]
    .into_iter()
    .find(|(name, _, _)| super::is(word, name))
    .map(|(_, unit, absolute)| (unit, absolute))
}

/// What `HGETEX` does to the fields it reads.
#[derive(Clone, Copy)]
enum GetexChange {
    None,
    Persist,
    Deadline(Tick),
}

/// `HGETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST] FIELDS numfields field …` (Redis 8.0), in
/// Redis' order: the key's type, the option (only right after the key), `FIELDS`. Each
/// field's value (nil for none); a field there gets the deadline (deleted if it is not in the
/// future) or loses its own. One event: `hpersist` or `hexpire` if a deadline changed, else
/// `hdel` if a field was deleted; `del` if the hash went.
pub(crate) fn hgetex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let clock = ctx.clock;
    let hash = hash_or_return!(ctx, key, out);
    let word = argv.get(2).copied().unwrap_or_default();
    let (change, at) = if let Some((unit, absolute)) = expiry_option(word) {
        let amount = argv.get(3).copied().unwrap_or_default();
        match field_deadline(amount, unit, absolute, clock) {
            Ok(deadline) => (GetexChange::Deadline(deadline), 4),
            Err(bad) => return bad.reply(out, "hgetex"),
        }
    } else if super::is(word, "persist") {
        (GetexChange::Persist, 3)
    } else {
        (GetexChange::None, 2)
    };
    let fields = match fields(argv, at, NUMFIELDS) {
        Ok(fields) => fields,
        Err(text) => return error(out, text),
    };
    let mut changes = Changes::new();
    let (mut updated, mut deleted) = (false, false);
    out.array_header(fields.len())?;
    for &field in fields {
        let value = changes.value(hash, field);
        if value.is_some() {
            match change {
                GetexChange::None => {}
                GetexChange::Persist => {
                    if changes.deadline(hash, field).flatten().is_some() {
                        changes.record(field, Some(None));
                        updated = true;
                    }
                }
                GetexChange::Deadline(at) if at <= clock.now => {
                    changes.record(field, None);
                    deleted = true;
                }
                GetexChange::Deadline(at) => {
                    changes.record(field, Some(Some(at)));
                    updated = true;
                }
            }
        }
        super::bulk_or_nil(out, value)?;
    }
    if changes.changed.is_empty() {
        return Ok(After::Continue);
    }
    let left = match changes.apply(ctx, out, key) {
        Ok(left) => left,
        Err(reply) => return reply,
    };
    match change {
        GetexChange::Persist if updated => ctx.notify(Class::Hash, "hpersist", key),
        _ if updated => ctx.notify(Class::Hash, "hexpire", key),
        _ if deleted => ctx.notify(Class::Hash, "hdel", key),
        _ => {}
    }
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    Ok(After::Continue)
}

/// `HSETEX`'s options, read as Redis' `hsetexParseArgs` reads them.
struct HsetexArgs<'v> {
    fnx: bool,
    fxx: bool,
    keep_ttl: bool,
    deadline: Option<Tick>,
    /// Field, value, field, value, ….
    words: &'v [&'v [u8]],
}

/// Reads `HSETEX`'s options up to `FIELDS` and the fields after it, with Redis' errors: a
/// second expiry option or `KEEPTTL`, a second `FNX`/`FXX`, an expiry option without its
/// time, an unknown word, a count of fields that does not match (arity).
fn hsetex_args<'v>(
    argv: &'v [&'v [u8]],
    clock: super::Clock,
    out: &mut ReplyWriter<'_>,
) -> Result<HsetexArgs<'v>, Reply> {
    const ONE_EXPIRY: &str =
        "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
    const ONE_CONDITION: &str = "ERR Only one of FXX or FNX arguments can be specified";
    let mut args = HsetexArgs {
        fnx: false,
        fxx: false,
        keep_ttl: false,
        deadline: None,
        words: &[],
    };
    let mut i = 2;
    while let Some(&word) = argv.get(i) {
        let expiry_given = args.keep_ttl || args.deadline.is_some();
        if super::is(word, "fields") {
            if i + 3 >= argv.len() {
                return Err(super::wrong_arity(out, "hsetex"));
            }
            let count = crate::decimal::parse_i64(argv[i + 1])
                .filter(|n| (1..=i64::from(i32::MAX)).contains(n));
            let Some(count) = count else {
                return Err(error(out, NUMFIELDS_HSETEX));
            };
            let words = &argv[i + 2..];
            if words.len() % 2 != 0 || usize::try_from(count).ok() != Some(words.len() / 2) {
                return Err(super::wrong_arity(out, "hsetex"));
            }
            args.words = words;
            return Ok(args);
        } else if let Some((unit, absolute)) = expiry_option(word) {
            if expiry_given {
                return Err(error(out, ONE_EXPIRY));
            }
            let Some(&amount) = argv.get(i + 1) else {
                return Err(error(out, "ERR missing expire time"));
            };
            match field_deadline(amount, unit, absolute, clock) {
                Ok(at) => args.deadline = Some(at),
                Err(bad) => return Err(bad.reply(out, "hsetex")),
            }
            i += 1;
        } else if super::is(word, "keepttl") {
            if expiry_given {
                return Err(error(out, ONE_EXPIRY));
            }
            args.keep_ttl = true;
        } else if super::is(word, "fnx") || super::is(word, "fxx") {
            if args.fnx || args.fxx {
                return Err(error(out, ONE_CONDITION));
            }
            args.fnx = super::is(word, "fnx");
            args.fxx = !args.fnx;
        } else {
            return Err(super::error_fmt(
                out,
                format_args!("ERR unknown argument: {}", super::Shown(word)),
            ));
        }
        i += 1;
    }
    // Redis cannot get here (its arity leaves no room for options alone without an error).
    Err(error(
        out,
        "ERR Mandatory argument FIELDS is missing or not at the right position",
    ))
}

/// `HSETEX key [FNX|FXX] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL] FIELDS numfields field value …`
/// (Redis 8.0), in Redis' order: the options, then the key's type. 1 if the fields were set
/// (with the deadline given, their own with `KEEPTTL`, none otherwise; deleted if the
/// deadline is not in the future), 0 if `FNX` or `FXX` refused them all. Events: `hset`, then
/// `hdel` if fields were deleted or `hexpire` if given a deadline, then `del` if the hash
/// went.
pub(crate) fn hsetex(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let clock = ctx.clock;
    let args = match hsetex_args(argv, clock, out) {
        Ok(args) => args,
        Err(reply) => return reply,
    };
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let set: Vec<(&[u8], &[u8])> = args.words.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let exists = |field: &[u8]| hash.and_then(|hash| hash.get(field)).is_some();
    if (args.fxx && made)
        || (args.fnx && set.iter().any(|(f, _)| exists(f)))
        || (args.fxx && !set.iter().all(|(f, _)| exists(f)))
    {
        return super::integer(out, 0);
    }
    let past = args.deadline.is_some_and(|at| at <= clock.now);
    let fields: Vec<&[u8]> = set.iter().map(|(f, _)| *f).collect();
    let edit = Edit {
        set: if past { &[] } else { &set },
        keep_ttl: args.keep_ttl,
        delete: if past { &fields } else { &[] },
        deadlines: &[],
    };
    // Every field set, then deleted: the made key is added, then goes (Redis' dbAdd, then
    // dbDelete), so its `new` event goes out too.
    let created = ctx.makes(key);
    let left = match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => left,
        Err(reply) => return reply,
    };
    let deadlines: Vec<(&[u8], Option<Tick>)> = match args.deadline {
        Some(at) if !past => fields.iter().map(|f| (*f, Some(at))).collect(),
        _ => Vec::new(),
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
        if let Some(at) = args.deadline {
            ctx.field_timers.add(key, at);
        }
    }
    ctx.written(created, Class::Hash, "hset", key);
    if past {
        ctx.notify(Class::Hash, "hdel", key);
    } else if !deadlines.is_empty() {
        ctx.notify(Class::Hash, "hexpire", key);
    }
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    super::integer(out, 1)
}

/// The timer for the fields with deadlines of hash value `value`, now under `key` (a hash
/// renamed or copied keeps its fields' deadlines).
pub(crate) fn add_timers_for(timers: &mut FieldTimers, key: &[u8], value: &[u8], now: Tick) {
    // Walked, never searched: any hasher does.
    let hasher = crate::store::fields::FieldHasher::default();
    let earliest = super::hashes::Hash::new(value, now, hasher)
        .entries()
        .filter_map(|(_, _, at)| at)
        .min();
    if let Some(at) = earliest {
        timers.add(key, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash has one timer however many of its fields have deadlines, due the tick after
    /// the earliest; a later deadline leaves it, an earlier one moves it.
    #[test]
    fn a_hash_has_one_timer_whatever_its_fields() {
        let mut timers = FieldTimers::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut earliest = Tick::MAX;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let deadline = 1_000 + x % 1_000_000;
            earliest = earliest.min(deadline);
            timers.add(b"k", deadline);
            assert_eq!(timers.len(), 1);
            assert_eq!(timers.next_deadline(), Some(earliest + 1));
        }
        assert_eq!(timers.pop_expired(earliest), None, "never early");
        assert_eq!(timers.pop_expired(earliest + 1).as_deref(), Some(&b"k"[..]));
        assert!(timers.armed.is_empty());
    }

    /// What a hash's timer costs: one heap slot and one entry of the armed map, each with a
    /// copy of the key, whatever the number of its fields with deadlines.
    #[test]
    fn a_hash_timer_slot_is_this_large() {
        let slot = core::mem::size_of::<HeapSlot<FieldTimer>>();
        let armed = core::mem::size_of::<(Box<[u8]>, (TimerId, Tick))>();
        std::println!("timer slot: {slot} bytes, armed entry: {armed} bytes, plus two key copies");
        assert!(slot <= 48, "{slot}");
        assert!(armed <= 48, "{armed}");
    }

    #[test]
    fn a_full_heap_grows_and_keeps_its_timers() {
        let mut timers = FieldTimers::new();
        for i in 0..200u64 {
            timers.add(&i.to_le_bytes(), 1_000 - i);
        }
        assert_eq!(timers.len(), 200);
        // Moved earlier after the heap grew: the map follows the timers filed anew.
        timers.add(&5u64.to_le_bytes(), 10);
        assert_eq!(timers.len(), 200);
        assert_eq!(timers.next_deadline(), Some(11));
        let mut fired = std::vec::Vec::new();
        while let Some(key) = timers.pop_expired(2_000) {
            fired.push(u64::from_le_bytes(key[..].try_into().unwrap()));
        }
        assert_eq!(fired.len(), 200);
        assert_eq!(fired[0], 5);
        assert_eq!(fired[1], 199, "then the earliest deadline, 801");
        assert!(timers.armed.is_empty());
    }
}
