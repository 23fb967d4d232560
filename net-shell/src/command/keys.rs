//! The keyspace commands (Redis' `db.c` and `expire.c`).

use super::expiry::{self, Unit, When};
use super::{error, error_fmt, integer, is, Context, Reply, ReplyWriter, Shown};

/// `DEL key …`, `UNLINK key …`: how many keys were removed.
pub(crate) fn del<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    let removed = argv[1..]
        .iter()
        .filter(|key| ctx.store.delete(key, now))
        .count();
    integer(out, removed as i64)
}

/// `EXISTS key …`: how many of the keys exist (a key named twice counts twice).
pub(crate) fn exists<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    let found = argv[1..]
        .iter()
        .filter(|key| ctx.store.contains(key, now))
        .count();
    integer(out, found as i64)
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
fn expire_generic<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
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
    }
    integer(out, i64::from(allowed))
}

/// `EXPIRE key seconds [NX|XX|GT|LT]`.
pub(crate) fn expire<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Seconds, false, "expire", out)
}

/// `PEXPIRE key ms [NX|XX|GT|LT]`.
pub(crate) fn pexpire<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Milliseconds, false, "pexpire", out)
}

/// `EXPIREAT key unix-seconds [NX|XX|GT|LT]`.
pub(crate) fn expireat<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Seconds, true, "expireat", out)
}

/// `PEXPIREAT key unix-ms [NX|XX|GT|LT]`.
pub(crate) fn pexpireat<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    expire_generic(ctx, argv, Unit::Milliseconds, true, "pexpireat", out)
}

/// Redis' `ttlGenericCommand`: `TTL`, `PTTL`, `EXPIRETIME`, `PEXPIRETIME`. -2 for a missing
/// key, -1 for a persistent one; seconds are rounded to the nearest.
fn ttl_generic<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    key: &[u8],
    unit: Unit,
    absolute: bool,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
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
pub(crate) fn ttl<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Seconds, false, out)
}

/// `PTTL key`.
pub(crate) fn pttl<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Milliseconds, false, out)
}

/// `EXPIRETIME key`.
pub(crate) fn expiretime<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Seconds, true, out)
}

/// `PEXPIRETIME key`.
pub(crate) fn pexpiretime<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ttl_generic(ctx, argv[1], Unit::Milliseconds, true, out)
}

/// `PERSIST key`: 1 if a TTL was removed.
pub(crate) fn persist<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (key, now) = (argv[1], ctx.clock.now);
    let had_ttl = matches!(ctx.store.deadline(key, now), Some(Some(_)));
    if had_ttl {
        ctx.store.set_deadline(key, None, now);
    }
    integer(out, i64::from(had_ttl))
}
