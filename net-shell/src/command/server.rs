//! Connection and server commands (Redis' `server.c`, `networking.c`, `acl.c`).

use super::{
    bulk_or_nil, error, error_fmt, integer, is, ok, After, ClientName, Context, Reply, ReplyWriter,
    Shown, SYNTAX,
};
use crate::auth;
use crate::decimal::parse_i64;
use crate::resp::Protocol;
use crate::settings::Settings;

/// `PING [message]`.
pub(crate) fn ping(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    // A RESP2 client in pub/sub mode hears `pong` as a message would come (Redis' `pingCommand`).
    #[cfg(feature = "pubsub")]
    if super::channels::in_resp2_pubsub_mode(ctx) {
        out.array_header(2)?;
        out.bulk(b"pong")?;
        out.bulk(argv.get(1).copied().unwrap_or_default())?;
        return Ok(After::Continue);
    }
    #[cfg(not(feature = "pubsub"))]
    let _ = ctx;
    match argv {
        [_] => out.simple("PONG")?,
        [_, message] => out.bulk(message)?,
        _ => return super::wrong_arity(out, "ping"),
    }
    Ok(After::Continue)
}

/// `ECHO message`.
pub(crate) fn echo(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    bulk_or_nil(out, Some(argv[1]))
}

/// `QUIT`: `+OK`, then the connection closes.
pub(crate) fn quit(_: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    out.simple("OK")?;
    Ok(After::Close)
}

/// Redis' text for an argument outside a C `int` (`getIntFromObjectOrReply`).
pub(crate) const INT_RANGE: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";

/// `SELECT index`: this server has database 0 only.
pub(crate) fn select(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    // Redis reads the index as a C `int` (`getIntFromObjectOrReply`).
    match parse_i64(argv[1]).map(i32::try_from) {
        Some(Ok(0)) => ok(out),
        Some(Ok(_)) => error(out, "ERR DB index is out of range"),
        Some(Err(_)) => error(out, INT_RANGE),
        None => error(out, super::NOT_INTEGER),
    }
}

/// `DBSIZE`.
pub(crate) fn dbsize(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    integer(out, ctx.store.len() as i64)
}

/// `FLUSHALL [ASYNC|SYNC]`, `FLUSHDB [ASYNC|SYNC]` (Redis' `getFlushCommandFlags`): one
/// database, emptied at once either way.
pub(crate) fn flush(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    match argv {
        [_] => {}
        [_, mode] if is(mode, "sync") || is(mode, "async") => {}
        _ => return error(out, SYNTAX),
    }
    ctx.store.clear();
    ok(out)
}

/// `INFO [section …]`.
pub(crate) fn info(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    crate::info::write_info(&argv[1..], ctx, out)
}

/// `CLIENT ID`.
pub(crate) fn client_id(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    integer(out, ctx.client_id.min(i64::MAX as u64) as i64)
}

/// Checks a client name as Redis' `validateClientName` does (printable ASCII, no spaces),
/// and that it fits.
fn valid_name(name: &[u8]) -> Result<ClientName, &'static str> {
    if name.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err("ERR Client names cannot contain spaces, newlines or special characters.");
    }
    ClientName::from_bytes(name).ok_or("ERR Client names are at most 32 bytes here")
}

/// `CLIENT SETNAME name`: an empty name removes it.
pub(crate) fn client_setname(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    match valid_name(argv[2]) {
        Ok(name) => {
            *ctx.client_name = name;
            ok(out)
        }
        Err(why) => error(out, why),
    }
}

/// `CLIENT GETNAME`: the name, or nil.
pub(crate) fn client_getname(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let name = ctx.client_name.as_bytes();
    bulk_or_nil(out, (!name.is_empty()).then_some(name))
}

/// `CLIENT NO-EVICT on|off`: accepted; this server evicts no client (a client past its limits
/// is closed, whatever this says).
#[cfg(feature = "extended-commands")]
pub(crate) fn client_no_evict(
    _: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if super::is(argv[2], "on") || super::is(argv[2], "off") {
        ok(out)
    } else {
        error(out, SYNTAX)
    }
}

/// `CLIENT SETINFO …`: accepted and not kept.
pub(crate) fn client_setinfo(
    _: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ok(out)
}

/// Whether `user` and `password` name the default user and its password (compared in
/// constant time). A server without a password takes any password for `default`, as Redis'
/// `nopass` default user does.
fn credentials_match(settings: &Settings, user: &[u8], password: &[u8]) -> bool {
    // Check the password even for an unknown user, so both take the same time.
    let password_ok = settings.security.password_matches(password);
    user == auth::DEFAULT_USER && password_ok
}

/// `AUTH [username] password`, as Redis 7's `authCommand`.
pub(crate) fn auth(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let (user, password) = match argv {
        [_, password] => {
            if !ctx.settings.security.requires_auth() {
                return error(out, auth::NO_PASSWORD_SET);
            }
            (auth::DEFAULT_USER, *password)
        }
        [_, user, password] => (*user, *password),
        _ => return error(out, SYNTAX),
    };
    if credentials_match(ctx.settings, user, password) {
        *ctx.authenticated = true;
        ok(out)
    } else {
        error(out, auth::WRONGPASS)
    }
}

/// `HELLO [protover [AUTH username password] [SETNAME name]]`, as Redis 7's `helloCommand`:
/// the version first, then the options, then the credentials, and only then the rule that the
/// client must be authenticated. Version 3 switches the connection to RESP3 and version 2 back
/// to RESP2 (none keeps it); the handshake reply is a map in the protocol now spoken. Any
/// other version gets `-NOPROTO`, as from Redis.
pub(crate) fn hello(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let args = &argv[1..];
    let mut protocol = *ctx.protocol;
    if let Some(version) = args.first() {
        match parse_i64(version) {
            Some(2) => protocol = Protocol::Resp2,
            Some(3) => protocol = Protocol::Resp3,
            Some(_) => return error(out, "NOPROTO unsupported protocol version"),
            None => {
                return error(
                    out,
                    "ERR Protocol version is not an integer or out of range",
                )
            }
        }
    }
    // Options: AUTH takes two arguments, SETNAME one (checked here, set once authenticated).
    let mut credentials = None;
    let mut name = None;
    let mut i = 1;
    while i < args.len() {
        let option = args[i];
        let more = args.len() - 1 - i;
        if is(option, "auth") && more >= 2 {
            credentials = Some((args[i + 1], args[i + 2]));
            i += 3;
        } else if is(option, "setname") && more >= 1 {
            match valid_name(args[i + 1]) {
                Ok(valid) => name = Some(valid),
                Err(why) => return error(out, why),
            }
            i += 2;
        } else {
            return error_fmt(
                out,
                format_args!("ERR Syntax error in HELLO option '{}'", Shown(option)),
            );
        }
    }
    if let Some((user, password)) = credentials {
        if !credentials_match(ctx.settings, user, password) {
            return error(out, auth::WRONGPASS);
        }
        *ctx.authenticated = true;
    }
    if ctx.settings.security.requires_auth() && !*ctx.authenticated {
        return error(out, auth::HELLO_NOAUTH);
    }
    if let Some(name) = name {
        *ctx.client_name = name;
    }
    *ctx.protocol = protocol;
    out.set_protocol(protocol);
    let client_id = ctx.client_id;
    out.map_header(7)?;
    out.bulk(b"server")?;
    out.bulk(b"redis")?;
    out.bulk(b"version")?;
    out.bulk(b"7.0.0")?;
    out.bulk(b"proto")?;
    out.integer(protocol.version())?;
    out.bulk(b"id")?;
    out.integer(client_id.min(i64::MAX as u64) as i64)?;
    out.bulk(b"mode")?;
    out.bulk(super::mode(ctx).as_bytes())?;
    out.bulk(b"role")?;
    out.bulk(b"master")?;
    out.bulk(b"modules")?;
    out.array_header(0)?;
    Ok(After::Continue)
}

/// `TIME`: the Unix time as seconds and microseconds (the uptime, without a wall clock).
pub(crate) fn time(ctx: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let ms = ctx.clock.unix_ms.unwrap_or(ctx.clock.now);
    out.array_header(2)?;
    out.bulk(crate::decimal::Decimal::new(ms / 1000).as_bytes())?;
    out.bulk(crate::decimal::Decimal::new(ms % 1000 * 1000).as_bytes())?;
    Ok(After::Continue)
}
