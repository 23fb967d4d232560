//! `SUBSCRIBE`, `PSUBSCRIBE`, `UNSUBSCRIBE`, `PUNSUBSCRIBE`, `PUBLISH` and `PUBSUB`, over the
//! server's [`PubSub`](crate::pubsub::PubSub), with Redis 7.0's replies (`pubsub.c`).
//!
//! A client with a subscription is in pub/sub mode: in RESP2 it may only (un)subscribe,
//! `PING` and `QUIT` ([`allowed_while_subscribed`]).

use super::{error_fmt, integer, Context, Reply, ReplyWriter};
use crate::pubsub::Kind;
use crate::resp::{Protocol, WriteFull};

/// Whether a client in pub/sub mode may run `command` in RESP2 (Redis' `processCommand`).
pub(crate) fn allowed_while_subscribed(command: &str) -> bool {
    matches!(
        command,
        "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe" | "ping" | "quit"
    )
}

/// The refusal of any other command in RESP2 pub/sub mode, in Redis' words.
pub(crate) fn refuse_while_subscribed(out: &mut ReplyWriter<'_>, command: &str) -> Reply {
    error_fmt(
        out,
        format_args!(
            "ERR Can't execute '{command}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
        ),
    )
}

/// Whether the client is in RESP2 pub/sub mode (where `PING` answers as a message).
pub(crate) fn in_resp2_pubsub_mode(ctx: &Context<'_, '_>) -> bool {
    *ctx.protocol == Protocol::Resp2 && ctx.pubsub.count(ctx.slot) > 0
}

/// One (un)subscribe confirmation: `[kind, name, count]`, a push in RESP3.
fn confirm(
    out: &mut ReplyWriter<'_>,
    kind: &str,
    name: Option<&[u8]>,
    count: usize,
) -> Result<(), WriteFull> {
    out.push_header(3)?;
    out.bulk(kind.as_bytes())?;
    match name {
        Some(name) => out.bulk(name)?,
        None => out.null()?,
    }
    out.integer(count as i64)
}

/// `SUBSCRIBE channel …` and `PSUBSCRIBE pattern …`.
fn subscribe_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    kind: Kind,
) -> Reply {
    let reply = match kind {
        Kind::Channel => "subscribe",
        Kind::Pattern => "psubscribe",
    };
    for &name in &argv[1..] {
        let count = ctx.pubsub.subscribe(kind, ctx.slot, name);
        confirm(out, reply, Some(name), count)?;
    }
    Ok(super::After::Continue)
}

/// `UNSUBSCRIBE [channel …]` and `PUNSUBSCRIBE [pattern …]`: none named means all (and a
/// client with none hears `[kind, nil, 0]`).
fn unsubscribe_generic(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
    kind: Kind,
) -> Reply {
    let reply = match kind {
        Kind::Channel => "unsubscribe",
        Kind::Pattern => "punsubscribe",
    };
    if argv.len() > 1 {
        for &name in &argv[1..] {
            let count = ctx.pubsub.unsubscribe(kind, ctx.slot, name);
            confirm(out, reply, Some(name), count)?;
        }
    } else {
        let names = ctx.pubsub.subscriptions(kind, ctx.slot);
        if names.is_empty() {
            let count = ctx.pubsub.count(ctx.slot);
            confirm(out, reply, None, count)?;
        }
        for name in names {
            let count = ctx.pubsub.unsubscribe(kind, ctx.slot, &name);
            confirm(out, reply, Some(&name), count)?;
        }
    }
    Ok(super::After::Continue)
}

/// `SUBSCRIBE channel …`.
pub(crate) fn subscribe(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    subscribe_generic(ctx, argv, out, Kind::Channel)
}

/// `PSUBSCRIBE pattern …`.
pub(crate) fn psubscribe(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    subscribe_generic(ctx, argv, out, Kind::Pattern)
}

/// `UNSUBSCRIBE [channel …]`.
pub(crate) fn unsubscribe(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    unsubscribe_generic(ctx, argv, out, Kind::Channel)
}

/// `PUNSUBSCRIBE [pattern …]`.
pub(crate) fn punsubscribe(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    unsubscribe_generic(ctx, argv, out, Kind::Pattern)
}

/// `PUBLISH channel message`: how many clients receive it.
pub(crate) fn publish(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let receivers = ctx.pubsub.publish(argv[1], argv[2]);
    integer(out, receivers as i64)
}

/// `PUBSUB CHANNELS [pattern]`: the channels with subscribers.
pub(crate) fn channels(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if argv.len() > 3 {
        // Redis checks this in the handler, with its generic subcommand text.
        return error_fmt(
            out,
            format_args!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
                super::Shown(argv[1]),
                super::Upper(argv[0])
            ),
        );
    }
    let active = ctx.pubsub.active_channels(argv.get(2).copied());
    out.array_header(active.len())?;
    for channel in active {
        out.bulk(channel)?;
    }
    Ok(super::After::Continue)
}

/// `PUBSUB NUMSUB [channel …]`: each channel with its number of subscribers.
pub(crate) fn numsub(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    out.array_header((argv.len() - 2) * 2)?;
    for &channel in &argv[2..] {
        out.bulk(channel)?;
        out.integer(ctx.pubsub.subscribers(channel) as i64)?;
    }
    Ok(super::After::Continue)
}

/// `PUBSUB NUMPAT`: patterns with subscribers.
pub(crate) fn numpat(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    integer(out, ctx.pubsub.pattern_count() as i64)
}
