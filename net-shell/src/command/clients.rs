//! `CLIENT LIST`, `CLIENT KILL` and `CLIENT INFO`: commands about connections. A command sees only its
//! own connection, so these parse their arguments here and leave the server a request
//! (`Context::clients`), which it answers over its connection table (`server/client_requests.rs`).

use alloc::vec::Vec;

use super::{error, integer, After, Context, Reply, ReplyWriter, SYNTAX};
use crate::decimal::parse_i64;

/// What a `CLIENT LIST` or `CLIENT KILL` asks of the server (opaque).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientsRequest(pub(crate) Request);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// `CLIENT LIST`: every client, or those with these ids.
    List { ids: Option<Vec<u64>> },
    /// `CLIENT KILL`.
    Kill(KillFilter),
    /// `CLIENT INFO`: the client that asks.
    Info,
    /// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`: `error` for `ERROR`.
    #[cfg(feature = "blocking-lists")]
    Unblock { id: u64, error: bool },
}

/// Which clients `CLIENT KILL` ends, as Redis 7.0's `clientKillCommand` reads its arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KillFilter {
    pub(crate) id: Option<u64>,
    /// `ip:port`, as the client's address prints.
    pub(crate) addr: Option<Vec<u8>>,
    pub(crate) laddr: Option<Vec<u8>>,
    /// Leave the client that asked alone (new form: yes unless `SKIPME no`).
    pub(crate) skip_me: bool,
    /// `CLIENT KILL ip:port`: answers `+OK` or `-ERR No such client`, not a count.
    pub(crate) old_form: bool,
    /// A `TYPE` no client here has (every client is `normal`): none matches.
    pub(crate) none: bool,
}

/// The client types Redis knows; every client here is `normal`.
const TYPES: [&str; 5] = ["normal", "master", "replica", "slave", "pubsub"];

/// `CLIENT LIST [TYPE normal|master|replica|pubsub | ID id [id ...]]`, as Redis 7.0's
/// `clientCommand` reads it.
pub(crate) fn client_list(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let ids = if argv.len() == 4 && super::is(argv[2], "type") {
        let kind = argv[3];
        if TYPES.iter().all(|k| !super::is(kind, k)) {
            return super::error_fmt(
                out,
                format_args!("ERR Unknown client type '{}'", super::Shown(kind)),
            );
        }
        // Every client here is a normal one.
        (!super::is(kind, "normal")).then(Vec::new)
    } else if argv.len() >= 4 && super::is(argv[2], "id") {
        let mut wanted = Vec::new();
        for &word in &argv[3..] {
            match parse_i64(word) {
                Some(id) => wanted.push(id.max(0) as u64),
                None => return error(out, "ERR Invalid client ID"),
            }
        }
        Some(wanted)
    } else if argv.len() != 2 {
        return error(out, SYNTAX);
    } else {
        None
    };
    *ctx.clients = Some(ClientsRequest(Request::List { ids }));
    Ok(After::Continue)
}

/// `CLIENT INFO`: the line `CLIENT LIST` has for this client.
pub(crate) fn client_info(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    _: &mut ReplyWriter<'_>,
) -> Reply {
    *ctx.clients = Some(ClientsRequest(Request::Info));
    Ok(After::Continue)
}

/// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`, as Redis 7.0 reads it: the reason first, then the id.
#[cfg(feature = "blocking-lists")]
pub(crate) fn client_unblock(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let error = match argv.get(3) {
        None => false,
        Some(word) if super::is(word, "timeout") => false,
        Some(word) if super::is(word, "error") => true,
        Some(_) => {
            return super::error(out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
        }
    };
    if argv.len() > 4 {
        return super::error(out, SYNTAX);
    }
    let Some(id) = parse_i64(argv[2]) else {
        return super::error(out, super::NOT_INTEGER);
    };
    *ctx.clients = Some(ClientsRequest(Request::Unblock {
        id: id.max(0) as u64,
        error,
    }));
    Ok(After::Continue)
}

/// `CLIENT KILL ip:port`, or `CLIENT KILL [ID id] [ADDR ip:port] [LADDR ip:port] [SKIPME
/// yes|no] [TYPE type] [USER name] [MAXAGE secs]`.
pub(crate) fn client_kill(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let mut filter = KillFilter {
        skip_me: true,
        ..KillFilter::default()
    };
    if argv.len() == 3 {
        filter.addr = Some(argv[2].to_vec());
        filter.skip_me = false;
        filter.old_form = true;
        *ctx.clients = Some(ClientsRequest(Request::Kill(filter)));
        return Ok(After::Continue);
    }
    let mut i = 2;
    while i < argv.len() {
        let Some(&value) = argv.get(i + 1) else {
            return error(out, SYNTAX);
        };
        let word = argv[i];
        if super::is(word, "id") {
            match parse_i64(value) {
                Some(id) if id > 0 => filter.id = Some(id as u64),
                _ => return error(out, "ERR client-id should be greater than 0"),
            }
        } else if super::is(word, "addr") {
            filter.addr = Some(value.to_vec());
        } else if super::is(word, "laddr") {
            filter.laddr = Some(value.to_vec());
        } else if super::is(word, "type") {
            if TYPES.iter().all(|k| !super::is(value, k)) {
                return super::error_fmt(
                    out,
                    format_args!("ERR Unknown client type '{}'", super::Shown(value)),
                );
            }
            filter.none |= !super::is(value, "normal");
        } else if super::is(word, "user") {
            if value != crate::auth::DEFAULT_USER {
                return super::error_fmt(
                    out,
                    format_args!("ERR No such user '{}'", super::Shown(value)),
                );
            }
        } else if super::is(word, "skipme") {
            filter.skip_me = if super::is(value, "yes") {
                true
            } else if super::is(value, "no") {
                false
            } else {
                return error(out, SYNTAX);
            };
        } else {
            return error(out, SYNTAX);
        }
        i += 2;
    }
    *ctx.clients = Some(ClientsRequest(Request::Kill(filter)));
    Ok(After::Continue)
}

/// Writes the answer to a `CLIENT KILL` that ended `killed` clients.
pub(crate) fn kill_reply(filter: &KillFilter, killed: usize, out: &mut ReplyWriter<'_>) -> Reply {
    if filter.old_form {
        if killed == 0 {
            return error(out, "ERR No such client");
        }
        return super::ok(out);
    }
    integer(out, killed as i64)
}
