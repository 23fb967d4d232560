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

use timer_core::Tick;

use super::events::Class;
use super::expiry::{self, Unit};
use super::field_timers::FieldTimers;
use super::hashes::{
    has_field_deadlines, hash_or_return, rewrite, ChangeRule, Edit, FieldChange, Hash, Named,
};
use super::{error, After, Context, Reply, ReplyWriter};

impl Context<'_, '_> {
    /// `Ok` if hash `key` may be given a field deadline: it has a field timer, or one is free
    /// (the timers of hashes without deadlines any more given back first). Otherwise the
    /// command is refused, before it changes anything, with the error written in place of
    /// the reply from `mark` on.
    fn field_timer_for(
        &mut self,
        key: &[u8],
        out: &mut ReplyWriter<'_>,
        mark: usize,
    ) -> Result<(), Reply> {
        let now = self.clock.now;
        let store = &mut *self.store;
        if self
            .field_timers
            .has_room_for(key, |hash| has_field_deadlines(store, hash, now))
        {
            return Ok(());
        }
        out.truncate(mark);
        let most = self.field_timers.capacity().unwrap_or(0);
        Err(super::error_fmt(
            out,
            format_args!(
                "ERR no field timer free: at most {most} hashes can have field deadlines at once"
            ),
        ))
    }
}

/// Applies `edit` to hash `key` after the command wrote its reply from `mark` on: `Ok`, the
/// fields left; on a refusal, its error in place of that reply.
fn rewrite_after_reply(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    (edit, mark): (&Edit<'_>, usize),
) -> Result<usize, Reply> {
    let end = out.len();
    match rewrite(ctx, out, key, edit) {
        Ok((_, left)) => Ok(left),
        Err(reply) => {
            // The error went after the reply: it takes the reply's place (errors are short).
            let mut text: heapless::Vec<u8, 160> = heapless::Vec::new();
            if text
                .extend_from_slice(out.written().get(end..).unwrap_or_default())
                .is_ok()
            {
                out.truncate(mark);
                out.raw(&text).map_err(Err)?;
            }
            Err(reply)
        }
    }
}

/// Changes `fields` of hash `key` by `rule`, after the command wrote its reply from `mark` on,
/// and arms the hash's field timer when some field gets deadline `new_deadline`: the timer's
/// room is made sure of first, so that a refusal (the reply giving way to the error) changes
/// nothing. `Ok`, the fields left.
fn change_named_fields(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    (fields, rule, new_deadline): (&[&[u8]], ChangeRule<'_>, Option<Tick>),
    mark: usize,
) -> Result<usize, Reply> {
    if new_deadline.is_some() {
        ctx.field_timer_for(key, out, mark)?;
    }
    let edit = Edit {
        changed: Named::each(fields),
        change: Some(rule),
        ..Edit::default()
    };
    let left = rewrite_after_reply(ctx, out, key, (&edit, mark))?;
    if let Some(at) = new_deadline {
        // The room was there a moment ago.
        let _ = ctx.field_timers.add(key, at);
    }
    Ok(left)
}

/// A field's state (`None`: no such field; else its deadline) when a command that changes
/// fields by `rule` comes to `fields[i]`: as in the hash, or, for a field named before, as
/// the rule left it (Redis changes fields one after another).
fn state_seen(
    hash: Option<Hash<'_>>,
    fields: &[&[u8]],
    i: usize,
    rule: ChangeRule<'_>,
) -> Option<Option<Tick>> {
    field_seen(hash, fields, i, rule).map(|(at, _)| at)
}

/// [`state_seen`], with the field's value: one lookup for commands that answer with it.
fn field_seen<'v>(
    hash: Option<Hash<'v>>,
    fields: &[&[u8]],
    i: usize,
    rule: ChangeRule<'_>,
) -> Option<(Option<Tick>, &'v [u8])> {
    let field = fields[i];
    let (current, value) = hash?.deadline_and_value(field)?;
    if !fields[..i].contains(&field) {
        return Some((current, value));
    }
    match rule(current) {
        None => Some((current, value)),
        Some(FieldChange::Delete) => None,
        Some(FieldChange::Deadline(at)) => Some((at, value)),
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
    let rule = |current: Option<Tick>| {
        if !condition.allows(current, deadline) {
            None
        } else if deadline <= clock.now {
            Some(FieldChange::Delete)
        } else {
            Some(FieldChange::Deadline(Some(deadline)))
        }
    };
    let mark = out.len();
    let (mut changed, mut deleted) = (false, false);
    out.array_header(fields.len())?;
    for i in 0..fields.len() {
        let code = match state_seen(hash, fields, i, &rule) {
            None => -2,
            Some(current) => match rule(current) {
                None => 0,
                Some(FieldChange::Delete) => 2,
                Some(FieldChange::Deadline(_)) => 1,
            },
        };
        changed |= code > 0;
        deleted |= code == 2;
        out.integer(code)?;
    }
    if !changed {
        return Ok(After::Continue);
    }
    let new_deadline = (!deleted).then_some(deadline);
    let left = match change_named_fields(ctx, out, key, (fields, &rule, new_deadline), mark) {
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
    Ok(After::Continue)
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
    let rule = |current: Option<Tick>| current.map(|_| FieldChange::Deadline(None));
    let mark = out.len();
    let mut changed = false;
    out.array_header(fields.len())?;
    for i in 0..fields.len() {
        let code = match state_seen(hash, fields, i, &rule) {
            None => -2,
            Some(None) => -1,
            Some(Some(_)) => 1,
        };
        changed |= code == 1;
        out.integer(code)?;
    }
    if changed {
        if let Err(reply) = change_named_fields(ctx, out, key, (fields, &rule, None), mark) {
            return reply;
        }
        ctx.notify(Class::Hash, "hpersist", key);
    }
    Ok(After::Continue)
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
    let rule = |_: Option<Tick>| Some(FieldChange::Delete);
    let mark = out.len();
    let mut changed = false;
    out.array_header(fields.len())?;
    for i in 0..fields.len() {
        let value = field_seen(hash, fields, i, &rule).map(|(_, value)| value);
        changed |= value.is_some();
        super::bulk_or_nil(out, value)?;
    }
    if !changed {
        return Ok(After::Continue);
    }
    let left = match change_named_fields(ctx, out, key, (fields, &rule, None), mark) {
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
    let rule = |current: Option<Tick>| match change {
        GetexChange::None => None,
        GetexChange::Persist => current.map(|_| FieldChange::Deadline(None)),
        GetexChange::Deadline(at) if at <= clock.now => Some(FieldChange::Delete),
        GetexChange::Deadline(at) => Some(FieldChange::Deadline(Some(at))),
    };
    let mark = out.len();
    let (mut updated, mut deleted) = (false, false);
    out.array_header(fields.len())?;
    for i in 0..fields.len() {
        let seen = field_seen(hash, fields, i, &rule);
        let value = seen.map(|(_, value)| value);
        match seen.and_then(|(at, _)| rule(at)) {
            Some(FieldChange::Delete) => deleted = true,
            Some(FieldChange::Deadline(_)) => updated = true,
            None => {}
        }
        super::bulk_or_nil(out, value)?;
    }
    if !updated && !deleted {
        return Ok(After::Continue);
    }
    let new_deadline = match change {
        GetexChange::Deadline(at) if updated => Some(at),
        _ => None,
    };
    let left = match change_named_fields(ctx, out, key, (fields, &rule, new_deadline), mark) {
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
    let fields = Named::fields_of_pairs(args.words);
    let exists = |field: &[u8]| hash.and_then(|hash| hash.get(field)).is_some();
    if (args.fxx && made)
        || (args.fnx && fields.iter().any(exists))
        || (args.fxx && !fields.iter().all(exists))
    {
        return super::integer(out, 0);
    }
    let past = args.deadline.is_some_and(|at| at <= clock.now);
    let new_deadline = args.deadline.filter(|_| !past);
    if new_deadline.is_some() {
        let mark = out.len();
        if let Err(reply) = ctx.field_timer_for(key, out, mark) {
            return reply;
        }
    }
    let edit = Edit {
        set: if past { &[] } else { args.words },
        keep_ttl: args.keep_ttl,
        delete: if past { fields } else { Named::NONE },
        ..Edit::default()
    };
    // Every field set, then deleted: the made key is added, then goes (Redis' dbAdd, then
    // dbDelete), so its `new` event goes out too.
    let created = ctx.makes(key);
    let left = match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => left,
        Err(reply) => return reply,
    };
    if let Some(at) = new_deadline {
        // The deadlines go on the values just written.
        let rule = |_: Option<Tick>| Some(FieldChange::Deadline(Some(at)));
        let edit = Edit {
            changed: fields,
            change: Some(&rule),
            ..Edit::default()
        };
        if let Err(reply) = rewrite(ctx, out, key, &edit) {
            return reply;
        }
        // The room was there a moment ago.
        let _ = ctx.field_timers.add(key, at);
    }
    ctx.written(created, Class::Hash, "hset", key);
    if past {
        ctx.notify(Class::Hash, "hdel", key);
    } else if new_deadline.is_some() {
        ctx.notify(Class::Hash, "hexpire", key);
    }
    if left == 0 {
        ctx.notify(Class::Generic, "del", key);
    }
    super::integer(out, 1)
}

/// `Ok` if `key` can have a field timer for a hash with field deadlines about to be copied
/// there; otherwise the error, before anything changes.
pub(crate) fn field_timer_for_copy(
    ctx: &mut Context<'_, '_>,
    key: &[u8],
    out: &mut ReplyWriter<'_>,
) -> Result<(), Reply> {
    let mark = out.len();
    ctx.field_timer_for(key, out, mark)
}

/// The earliest deadline of the fields of hash value `value`.
pub(crate) fn earliest_field_deadline(value: &[u8], now: Tick) -> Option<Tick> {
    // Walked, never searched: any hasher does.
    let hasher = crate::store::fields::FieldHasher::default();
    Hash::new(value, now, hasher)
        .entries()
        .filter_map(|(_, _, at)| at)
        .min()
}

/// The timer for the fields with deadlines of hash value `value`, now under `key` (a hash
/// renamed or copied keeps its fields' deadlines; [`field_timer_for_copy`] made sure of the
/// room).
pub(crate) fn add_timers_for(timers: &mut FieldTimers<'_>, key: &[u8], value: &[u8], now: Tick) {
    if let Some(at) = earliest_field_deadline(value, now) {
        let _ = timers.add(key, at);
    }
}

#[cfg(test)]
mod tests {
    use super::super::field_timers::FieldTimerArrays;
    use super::super::{execute, ClientName, Clock};
    use crate::resp::{Protocol, ReplyWriter};
    use crate::settings::{Settings, Timeouts};
    use crate::stats::Stats;
    use crate::store::{Store, StoreArrays, StoreMemory};
    use crate::Security;

    use super::*;

    /// A server's command state over lent memory, as a board has it: two field timers.
    struct Board<'a> {
        store: Store<'a>,
        timers: FieldTimers<'a>,
        stats: Stats,
        settings: Settings,
        now: Tick,
    }

    impl Board<'_> {
        /// Runs one command at the current time; its reply.
        fn run(&mut self, words: &str) -> std::string::String {
            let argv: std::vec::Vec<&[u8]> = words.split(' ').map(str::as_bytes).collect();
            let mut buffer = [0u8; 2048];
            let mut out = ReplyWriter::new(&mut buffer);
            let (mut authenticated, mut name, mut protocol) =
                (true, ClientName::new(), Protocol::default());
            #[cfg(feature = "extended-commands")]
            let mut reply_mode = super::super::ReplyMode::default();
            #[cfg(feature = "cluster")]
            let (mut cluster, mut asking) = (crate::cluster::Cluster::DISABLED, false);
            #[cfg(feature = "transactions")]
            let mut transaction = super::super::Transaction::new();
            #[cfg(feature = "pubsub")]
            let mut pubsub = crate::pubsub::PubSub::new();
            #[cfg(feature = "client-list")]
            let mut clients = None;
            #[cfg(feature = "blocking-lists")]
            let mut blocked = super::super::BlockedKeys::new();
            let mut ctx = Context {
                store: &mut self.store,
                stats: &mut self.stats,
                settings: &mut self.settings,
                authenticated: &mut authenticated,
                clock: Clock {
                    now: self.now,
                    unix_ms: None,
                },
                client_slots: 2,
                started: 0,
                client_id: 1,
                client_name: &mut name,
                protocol: &mut protocol,
                #[cfg(feature = "cluster")]
                cluster: &mut cluster,
                #[cfg(feature = "blocking-lists")]
                block: None,
                field_timers: &mut self.timers,
                #[cfg(feature = "blocking-lists")]
                blocked: &mut blocked,
                #[cfg(feature = "extended-commands")]
                reply_mode: &mut reply_mode,
                #[cfg(feature = "cluster")]
                asking: &mut asking,
                #[cfg(feature = "transactions")]
                transaction: &mut transaction,
                #[cfg(feature = "pubsub")]
                pubsub: &mut pubsub,
                #[cfg(feature = "pubsub")]
                slot: 0,
                stream_values: false,
                #[cfg(feature = "client-list")]
                clients: &mut clients,
            };
            execute(&argv, &mut ctx, &mut out).unwrap();
            std::string::String::from_utf8_lossy(out.written()).replace("\r\n", " ")
        }

        /// Runs the field timers due by the current time, as the server's poll does.
        fn expire(&mut self) {
            let mut buffer = [0u8; 2048];
            while let Some(fired) = self.timers.pop_expired(self.now) {
                let key = self.timers.key(&fired);
                let mut scratch = ReplyWriter::new(&mut buffer);
                let swept =
                    crate::command::expire_fields(&mut self.store, key, self.now, &mut scratch);
                self.timers
                    .rearm(fired, swept.and_then(|s| s.next_deadline));
            }
        }
    }

    /// With two field timers, a third hash's field deadline is refused before anything
    /// changes (the hash as it was, its reply the error alone), by every command that gives
    /// deadlines; a hash that loses its deadlines gives its timer back; deadlines expire on
    /// time and the hash goes with its last field.
    #[test]
    fn full_field_timers_refuse_a_third_hash_and_change_nothing() {
        let mut arrays = StoreArrays::<32, 4096>::new();
        let mut timers = FieldTimerArrays::<2, 16>::new();
        let mut board = Board {
            store: Store::new(StoreMemory::from(&mut arrays), 16, 1024),
            timers: FieldTimers::lent(timers.lend()),
            stats: Stats::default(),
            settings: Settings::new(Timeouts::default(), Security::DEFAULT),
            now: 1_000,
        };
        for key in ["a", "b", "c"] {
            assert_eq!(board.run(&std::format!("HSET {key} f 1 g 2")), ":2 ");
        }
        assert_eq!(board.run("HPEXPIRE a 100 FIELDS 1 f"), "*1 :1 ");
        assert_eq!(board.run("HPEXPIRE b 200 FIELDS 2 f g"), "*2 :1 :1 ");
        // A second deadline on a hash with a timer needs no more.
        assert_eq!(board.run("HPEXPIRE a 50 FIELDS 1 g"), "*1 :1 ");
        let full = "-ERR no field timer free: at most 2 hashes can have field deadlines at once ";
        assert_eq!(board.run("HPEXPIRE c 100 FIELDS 1 f"), full);
        assert_eq!(board.run("HGETEX c PX 100 FIELDS 1 f"), full);
        assert_eq!(board.run("HSETEX c PX 100 FIELDS 1 f 9"), full);
        #[cfg(feature = "extended-commands")]
        assert_eq!(board.run("COPY a c2"), full);
        assert_eq!(board.run("HPTTL c FIELDS 2 f g"), "*2 :-1 :-1 ");
        assert_eq!(board.run("HGETALL c"), "*4 $1 f $1 1 $1 g $1 2 ");
        // A deadline in the past deletes: no timer needed.
        assert_eq!(board.run("HPEXPIRE c 0 FIELDS 1 f"), "*1 :2 ");

        // b's deadlines removed: its timer is given back when room is asked for.
        assert_eq!(board.run("HPERSIST b FIELDS 2 f g"), "*2 :1 :1 ");
        assert_eq!(board.run("HPEXPIRE c 100 FIELDS 1 g"), "*1 :1 ");
        assert_eq!(board.run("HPTTL c FIELDS 1 g"), "*1 :100 ");

        // On time, never early: a's g lives through 1,050, its f and c's g through 1,100;
        // a hash goes with its last field.
        board.now = 1_050;
        board.expire();
        assert_eq!(board.run("HGETALL a"), "*4 $1 f $1 1 $1 g $1 2 ");
        board.now = 1_051;
        board.expire();
        assert_eq!(board.run("HGETALL a"), "*2 $1 f $1 1 ");
        assert_eq!(board.timers.len(), 2, "a's, due at 1,101 now, and c's");
        board.now = 1_100;
        board.expire();
        assert_eq!(board.run("HLEN c"), ":1 ");
        board.now = 1_101;
        board.expire();
        assert_eq!(board.run("EXISTS a"), ":0 ");
        assert_eq!(board.run("EXISTS c"), ":0 ");
        assert_eq!(board.run("HGETALL b"), "*4 $1 f $1 1 $1 g $1 2 ");
        assert_eq!(board.timers.len(), 0);
    }
}
