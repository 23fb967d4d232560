//! Redis commands, with Redis 7 semantics, over the [`Store`].
//!
//! One table row per command (`table/`): name, arity with Redis' sign convention, flags, key
//! positions and handler, as Redis' `struct redisCommand`. [`execute`] looks the command up,
//! checks its arity once for every command, refuses it if the client must authenticate and the
//! row does not say `no_auth`, counts it, and runs its handler, which writes exactly one reply.
//! Nothing here reads a clock: `now` (monotonic ms) and, where the build has one, the Unix time
//! come in a [`Clock`].
//!
//! | file | commands |
//! |---|---|
//! | `table/` | the table, lookup, `COMMAND` (generated from the table) |
//! | `strings.rs` | the string family (`GET`, `SET`, `INCR`, `APPEND`, `INCRBYFLOAT`, …) |
//! | `bits.rs` | the bitmap family (`SETBIT`, `GETBIT`, `BITCOUNT`, `BITPOS`, `BITOP`) |
//! | `float.rs` | exact decimals for `INCRBYFLOAT` |
//! | `blocking.rs` | the blocking pops (`BLPOP`, `BRPOP`, `BLMOVE`, `BRPOPLPUSH`), waiters by key |
//! | `hashes.rs` | the hash family (`HSET`, `HGET`, `HGETALL`, `HINCRBY`, …) |
//! | `hash_ttl.rs` | per-field time to live (`HEXPIRE`, `HTTL`, `HPERSIST`, …) and the field timers |
//! | `lists.rs` | the list family (`LPUSH`, `LPOP`, `LRANGE`, `LMOVE`, …) |
//! | `keys.rs` | the keyspace (`DEL`, `EXISTS`, `EXPIRE`/`TTL` families, `RENAME`, `SCAN`, …) |
//! | `events.rs` | keyspace notifications (`notify-keyspace-events`) from commands |
//! | `expiry.rs` | deadlines from relative and absolute times, as Redis checks them |
//! | `server.rs` | connection and server (`PING`, `AUTH`, `HELLO`, `CLIENT`, `INFO`, `FLUSHALL`, …) |
//! | `config.rs` | `CONFIG GET`/`SET` |
//! | `memory.rs` | `MEMORY USAGE`: the bytes a key takes, as `INFO memory` counts them |
//! | `clients.rs` | `CLIENT LIST`/`KILL`: parsed here, answered by the server over its connections |
//! | `transaction.rs` | `MULTI`, `EXEC`, `DISCARD`, `WATCH`, `UNWATCH` |
//! | `cluster.rs` | `CLUSTER`, `CLUSTERX`, `READONLY`, `READWRITE`, `ASKING`; redirection |
//! | `reply_mode.rs` | `CLIENT REPLY ON\|OFF\|SKIP`: whether a connection's replies are sent |
//! | `monitor.rs` | `MONITOR`: every command run, fed to the clients that asked |
//! | `channels.rs` | pub/sub (`SUBSCRIBE`, `PUBLISH`, `PUBSUB`, …) over [`crate::pubsub`] |
//! | `types.rs` | `WRONGTYPE`: a command for strings met a key of another kind |
//! | `glob.rs` | Redis' glob patterns (`KEYS`, `SCAN MATCH`, `PSUBSCRIBE`) |

use core::fmt::Write as _;

use timer_core::Tick;

use crate::resp::{ReplyWriter, WriteFull};
use crate::settings::Settings;
use crate::stats::Stats;
use crate::store::{Store, StoreError};

#[cfg(feature = "extended-commands")]
mod bits;
#[cfg(feature = "blocking-lists")]
mod blocking;
#[cfg(feature = "blocking-lists")]
pub use blocking::{Block, BlockedKeys};
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(all(feature = "cluster", feature = "blocking-lists"))]
pub(crate) use cluster::blocked_redirect;
mod config;
pub use config::parse_memory;
#[cfg(feature = "pubsub")]
mod channels;
#[cfg(feature = "client-list")]
mod clients;
mod events;
mod expiry;
#[cfg(feature = "hashes")]
mod field_timers;
#[cfg(feature = "extended-commands")]
mod float;
pub(crate) mod glob;
#[cfg(feature = "hashes")]
pub(crate) use field_timers::FieldTimerMemory;
#[cfg(feature = "hashes")]
pub use field_timers::{FieldTimerArrays, FieldTimers};
#[cfg(feature = "hashes")]
mod hash_ttl;
#[cfg(feature = "hashes")]
pub(crate) use hash_ttl::{add_timers_for, earliest_field_deadline, field_timer_for_copy};
#[cfg(feature = "hashes")]
mod hashes;
#[cfg(feature = "hashes")]
pub(crate) use hashes::expire_fields;
#[cfg(all(feature = "hashes", feature = "cluster", feature = "alloc"))]
pub(crate) use hashes::live_entries;
mod keys;
#[cfg(feature = "lists")]
mod lists;
#[cfg(feature = "extended-commands")]
mod memory;
#[cfg(feature = "pubsub")]
mod monitor;
#[cfg(feature = "extended-commands")]
mod reply_mode;
#[cfg(feature = "extended-commands")]
pub use reply_mode::ReplyMode;
mod server;
mod strings;
mod table;
mod types;
#[cfg(feature = "client-list")]
pub use clients::ClientsRequest;
#[cfg(feature = "client-list")]
pub(crate) use clients::{kill_reply, KillFilter, Request as ClientsQuery};
#[cfg(feature = "extended-commands")]
pub(crate) use table::all_rows;
#[cfg(feature = "transactions")]
mod transaction;
#[cfg(feature = "transactions")]
pub use transaction::Transaction;

/// Arguments of one command held without allocating: the most a command may have without the
/// `alloc` feature (a board). With it, a command may have any number (Redis 7: up to
/// `INT_MAX`), those past these kept in a `Vec`.
pub const MAX_ARGS: usize = 32;

/// The time a command runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Clock {
    /// Monotonic milliseconds (the server's tick).
    pub now: Tick,
    /// Unix time in milliseconds at `now`, if this build has a wall clock. Absolute expiry
    /// (`EXAT`, `PXAT`, `EXPIREAT`, `EXPIRETIME`) needs it.
    pub unix_ms: Option<u64>,
}

/// What the connection should do after the reply is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Keep serving.
    Continue,
    /// Close after the reply (`QUIT`).
    Close,
    /// The reply goes on: once the client has taken what was written, call [`resume`] with
    /// this to write the next part (a listing larger than the reply buffer, such as `COMMAND`).
    More(Continuation),
}

/// Everything a command may read or change.
pub struct Context<'s, 'a> {
    /// The key space.
    pub store: &'s mut Store<'a>,
    /// Server counters (for `INFO`; writes refused for lack of room count in `oom_refusals`).
    pub stats: &'s mut Stats,
    /// Timeouts, password and protected mode (for `CONFIG`, `AUTH`, `INFO`).
    pub settings: &'s mut Settings,
    /// Whether the connection has authenticated (`AUTH`, `HELLO … AUTH`), or needed not to.
    pub authenticated: &'s mut bool,
    /// The time.
    pub clock: Clock,
    /// The server's client slots: `maxclients` can be at most one less.
    pub client_slots: usize,
    /// The tick the server started at (for `INFO` uptime).
    pub started: Tick,
    /// The connection's id (`CLIENT ID`, `HELLO`): its number among all accepted, from 1.
    pub client_id: u64,
    /// The connection's name (`CLIENT SETNAME`, `HELLO … SETNAME`).
    pub client_name: &'s mut ClientName,
    /// The protocol the connection speaks (`HELLO` switches it).
    pub protocol: &'s mut crate::resp::Protocol,
    /// This node's view of the cluster (`cluster` feature; off unless enabled).
    #[cfg(feature = "cluster")]
    pub cluster: &'s mut crate::cluster::Cluster,
    /// Where a blocking pop that found nothing asks to wait; `None` where the client may not
    /// wait (the server runs a waiting client's command again).
    #[cfg(feature = "blocking-lists")]
    pub block: Option<&'s mut Option<Block>>,
    /// The timers of hash fields with a deadline.
    #[cfg(feature = "hashes")]
    pub field_timers: &'s mut FieldTimers<'a>,
    /// The keys clients wait on (a push makes them ready).
    #[cfg(feature = "blocking-lists")]
    pub blocked: &'s mut BlockedKeys,
    /// Whether the connection's replies are sent (`CLIENT REPLY`).
    #[cfg(feature = "extended-commands")]
    pub reply_mode: &'s mut ReplyMode,
    /// The connection sent `ASKING` just before this command (`cluster` feature).
    #[cfg(feature = "cluster")]
    pub asking: &'s mut bool,
    /// The connection's transaction (`MULTI`) and watched keys.
    #[cfg(feature = "transactions")]
    pub transaction: &'s mut Transaction,
    /// Subscriptions and published messages.
    #[cfg(feature = "pubsub")]
    pub pubsub: &'s mut crate::pubsub::PubSub,
    /// The connection's slot in the server's table (how pub/sub names it).
    #[cfg(feature = "pubsub")]
    pub slot: u16,
    /// A large value may be sent as the send buffer drains ([`After::More`]); not inside
    /// `EXEC`, whose replies form one array.
    pub stream_values: bool,
    /// Where `CLIENT LIST` and `CLIENT KILL` leave what the server is to answer from its
    /// connection table (they write no reply themselves).
    #[cfg(feature = "client-list")]
    pub clients: &'s mut Option<ClientsRequest>,
}

/// A connection's name, as `CLIENT SETNAME` sets it: printable ASCII without spaces, at most
/// [`ClientName::MAX`] bytes; empty for none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientName(heapless::Vec<u8, { ClientName::MAX }>);

impl ClientName {
    /// The longest name kept (Redis has no limit; here each connection holds its name).
    pub const MAX: usize = 32;

    /// No name.
    pub const fn new() -> Self {
        Self(heapless::Vec::new())
    }

    /// The name; empty for none.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// `name`, if it fits.
    pub(crate) fn from_bytes(name: &[u8]) -> Option<Self> {
        heapless::Vec::from_slice(name).ok().map(Self)
    }
}

/// A reply being assembled: `Err` means the reply buffer was too small.
pub(crate) type Reply = Result<After, WriteFull>;

/// Executes one command (`argv[0]` is its name) and writes its reply.
///
/// As in Redis' `processCommand`: an unknown command or subcommand, then a wrong number of
/// arguments, then a client that must authenticate and has not (for a command without the
/// `no_auth` flag) are refused, uncounted; any other command counts as processed, even if it
/// then answers an error.
///
/// # Errors
///
/// [`WriteFull`] if `out` cannot hold the reply; the caller sizes `out` for the largest value.
pub fn execute(argv: &[&[u8]], ctx: &mut Context<'_, '_>, out: &mut ReplyWriter<'_>) -> Reply {
    let Some(&name) = argv.first() else {
        return Ok(After::Continue);
    };
    // A command refused here dooms an open transaction (Redis' `rejectCommand`).
    #[cfg(feature = "transactions")]
    let doom = |ctx: &mut Context<'_, '_>| ctx.transaction.doom();
    #[cfg(not(feature = "transactions"))]
    let doom = |_: &mut Context<'_, '_>| {};
    let (command, row) = match table::lookup_row(argv) {
        Ok(found) => found,
        Err(table::Unknown::Command) => {
            doom(ctx);
            return unknown_command(out, name, &argv[1..]);
        }
        Err(table::Unknown::Subcommand) => {
            doom(ctx);
            return unknown_subcommand(out, argv[1], name);
        }
    };
    // A known command refused counts in its `rejected_calls` too.
    let refuse = |ctx: &mut Context<'_, '_>| {
        doom(ctx);
        #[cfg(feature = "extended-commands")]
        ctx.stats.commandstats.rejected(row);
    };
    #[cfg(not(feature = "extended-commands"))]
    let _ = row;
    if !command.arity_allows(argv.len()) {
        refuse(ctx);
        return wrong_arity(out, command.name);
    }
    let auth_pending = ctx.settings.security.requires_auth() && !*ctx.authenticated;
    if auth_pending && !command.flags.contains(table::Flags::NO_AUTH) {
        refuse(ctx);
        return error(out, crate::auth::NOAUTH);
    }
    // A key of another node's slot is redirected (Redis' `getNodeByQuery`).
    // (`ASKING` holds for one command: any command takes it.)
    #[cfg(feature = "cluster")]
    {
        let asking = core::mem::take(ctx.asking);
        let write = command.flags.contains(table::Flags::WRITE);
        if cluster::redirect(ctx, || command.key_args(argv), write, asking, out)? {
            refuse(ctx);
            return Ok(After::Continue);
        }
    }
    // A RESP2 client in pub/sub mode may only (un)subscribe, PING and QUIT.
    #[cfg(feature = "pubsub")]
    if channels::in_resp2_pubsub_mode(ctx) && !channels::allowed_while_subscribed(command.name) {
        refuse(ctx);
        return channels::refuse_while_subscribed(out, command.name);
    }
    #[cfg(feature = "pubsub")]
    if !monitor::monitor_may_run(ctx, command) {
        refuse(ctx);
        return error(out, monitor::MONITOR_KEYSPACE);
    }
    #[cfg(feature = "transactions")]
    if ctx.transaction.is_open() && !transaction::runs_inside(command.name) {
        let queued = ctx.transaction.queue(argv);
        if queued > ctx.settings.capacity.query_buffer_limit {
            // Queued commands count against the query buffer limit: past it, the client is
            // closed, as for a long request.
            return Ok(After::Close);
        }
        out.simple("QUEUED")?;
        return Ok(After::Continue);
    }
    ctx.stats.total_commands_processed += 1;
    #[cfg(feature = "extended-commands")]
    let mark = out.len();
    let reply = (command.handler)(ctx, argv, out);
    #[cfg(feature = "pubsub")]
    monitor::feed(ctx, command, argv);
    #[cfg(feature = "extended-commands")]
    {
        let failed = out.written().get(mark) == Some(&b'-');
        ctx.stats.commandstats.called(row, failed);
    }
    reply
}

/// Runs `argv` again for a client that waited in a blocking pop: its handler only, as Redis
/// serves a waiting client without processing the command anew (not counted again, not fed
/// to monitors again).
#[cfg(feature = "blocking-lists")]
pub(crate) fn rerun(argv: &[&[u8]], ctx: &mut Context<'_, '_>, out: &mut ReplyWriter<'_>) -> Reply {
    match table::lookup_row(argv) {
        Ok((command, _)) => (command.handler)(ctx, argv, out),
        Err(_) => Ok(After::Continue),
    }
}

/// Writes the next part of a reply that [`execute`] (or an earlier `resume`) left unfinished
/// with [`After::More`].
///
/// # Errors
///
/// [`WriteFull`] if `out` cannot hold even one more element.
#[cfg_attr(not(feature = "alloc"), allow(unused_variables))]
pub fn resume(more: Continuation, store: &mut Store<'_>, out: &mut ReplyWriter<'_>) -> Reply {
    match more.0 {
        More::Listing(listing) => table::resume(listing, out),
        #[cfg(feature = "alloc")]
        More::Value(value) => strings::resume_value(value, store, out),
    }
}

/// A reply that goes on after the client has taken what was written ([`After::More`]): a
/// listing longer than the reply buffer, or (with the `alloc` feature) a large value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Continuation(More);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum More {
    Listing(table::ListingMore),
    #[cfg(feature = "alloc")]
    Value(strings::ValueMore),
}

impl Continuation {
    pub(crate) fn listing(listing: table::ListingMore) -> Self {
        Self(More::Listing(listing))
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn value(value: strings::ValueMore) -> Self {
        Self(More::Value(value))
    }
}

/// The server's mode as `HELLO` and `INFO` name it: `cluster` or `standalone`.
pub(crate) fn mode(ctx: &Context<'_, '_>) -> &'static str {
    #[cfg(feature = "cluster")]
    if ctx.cluster.is_enabled() {
        return "cluster";
    }
    let _ = ctx;
    "standalone"
}

pub(crate) const SYNTAX: &str = "ERR syntax error";
pub(crate) const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub(crate) const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

pub(crate) fn error(out: &mut ReplyWriter<'_>, message: &str) -> Reply {
    out.error(message)?;
    Ok(After::Continue)
}

/// Formats an error message into a bounded buffer (longer text is cut).
pub(crate) fn error_fmt(out: &mut ReplyWriter<'_>, args: core::fmt::Arguments<'_>) -> Reply {
    let mut text: heapless::String<256> = heapless::String::new();
    let _ = text.write_fmt(args);
    error(out, &text)
}

/// `ERR wrong number of arguments for '<name>' command`, with the table's full name
/// (`config|get` for a subcommand), as Redis' `commandCheckArity`.
pub(crate) fn wrong_arity(out: &mut ReplyWriter<'_>, command: &str) -> Reply {
    error_fmt(
        out,
        format_args!("ERR wrong number of arguments for '{command}' command"),
    )
}

/// `+OK`.
pub(crate) fn ok(out: &mut ReplyWriter<'_>) -> Reply {
    out.simple("OK")?;
    Ok(After::Continue)
}

/// An integer reply.
pub(crate) fn integer(out: &mut ReplyWriter<'_>, n: i64) -> Reply {
    out.integer(n)?;
    Ok(After::Continue)
}

/// A bulk reply of `value`, or nil.
pub(crate) fn bulk_or_nil(out: &mut ReplyWriter<'_>, value: Option<&[u8]>) -> Reply {
    match value {
        Some(value) => out.bulk(value)?,
        None => out.null()?,
    }
    Ok(After::Continue)
}

/// An argument in an error message, as Redis 7 shows it (`%.128s`, then CR and LF turned
/// into spaces by `addReplyErrorLength`): at most 128 bytes. Bytes outside ASCII, which an
/// error line here cannot carry as text, become `?`.
pub(crate) struct Shown<'a>(pub(crate) &'a [u8]);

impl Shown<'_> {
    const MAX: usize = 128;
}

impl core::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &byte in self.0.iter().take(Self::MAX) {
            let c = match byte {
                b'\r' | b'\n' => ' ',
                _ if byte.is_ascii() => char::from(byte),
                _ => '?',
            };
            f.write_char(c)?;
        }
        Ok(())
    }
}

/// Text shown in capitals (`Try CONFIG HELP.`), as [`Shown`] otherwise.
pub(crate) struct Upper<'a>(pub(crate) &'a [u8]);

impl core::fmt::Display for Upper<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &byte in self.0.iter().take(Shown::MAX) {
            write!(f, "{}", Shown(&[byte.to_ascii_uppercase()]))?;
        }
        Ok(())
    }
}

/// Redis 7's text: the name, then arguments in quotes while the list is under 128 bytes, the
/// last one cut to fit (`processCommand` in `server.c`).
fn unknown_command(out: &mut ReplyWriter<'_>, name: &[u8], args: &[&[u8]]) -> Reply {
    const LIST: usize = 128;
    let mut text: heapless::String<320> = heapless::String::new();
    let _ = write!(
        text,
        "ERR unknown command '{}', with args beginning with: ",
        Shown(name)
    );
    let start = text.len();
    for arg in args {
        let listed = text.len() - start;
        if listed >= LIST {
            break;
        }
        let cut = &arg[..arg.len().min(LIST - listed)];
        let _ = write!(text, "'{}' ", Shown(cut));
    }
    error(out, &text)
}

/// `ERR unknown subcommand '<sub>'. Try <COMMAND> HELP.`, the command as the client spelt it,
/// in capitals (Redis' `commandCheckExistence`).
pub(crate) fn unknown_subcommand(out: &mut ReplyWriter<'_>, sub: &[u8], command: &[u8]) -> Reply {
    error_fmt(
        out,
        format_args!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            Shown(sub),
            Upper(command)
        ),
    )
}

/// Replies with the error a refused store write gets.
pub(crate) fn store_error(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    e: StoreError,
) -> Reply {
    match e {
        StoreError::KeysFull | StoreError::BytesFull => {
            ctx.stats.oom_refusals += 1;
            out.error(OOM)?;
        }
        StoreError::ValueTooLarge => {
            let mut text: heapless::String<96> = heapless::String::new();
            let _ = write!(
                text,
                "ERR value is too large (max {} bytes)",
                ctx.store.max_value_len()
            );
            out.error(&text)?;
        }
        StoreError::KeyTooLong => out.error("ERR key is too long")?,
    }
    Ok(After::Continue)
}

/// Whether `word` is `option`, ignoring ASCII case.
pub(crate) fn is(word: &[u8], option: &str) -> bool {
    word.eq_ignore_ascii_case(option.as_bytes())
}
