//! Redis commands, with Redis 7 semantics, over the [`Store`].
//!
//! [`execute`] takes one command's arguments and writes exactly one reply. It never reads a
//! clock: `now` (monotonic ms) and, where the build has one, the Unix time come in a [`Clock`].

use core::fmt::Write as _;

use smoltcp::wire::Ipv4Cidr;
use timer_core::Tick;

use crate::auth::{self, MAX_PASSWORD_LEN};
use crate::config::{Settings, Timeouts};
use crate::decimal::{parse_i64, Decimal};
use crate::resp::{ReplyWriter, WriteFull};
use crate::stats::Stats;
use crate::store::{Store, StoreError, Ttl};

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
}

/// Everything a command may read or change.
pub struct Context<'s, const KEYS: usize, const BYTES: usize> {
    /// The key space.
    pub store: &'s mut Store<KEYS, BYTES>,
    /// Server counters (for `INFO`; writes refused for lack of room count in `oom_refusals`).
    pub stats: &'s mut Stats,
    /// Timeouts, password and protected mode (for `CONFIG`, `AUTH`, `INFO`).
    pub settings: &'s mut Settings,
    /// Whether the connection has authenticated (`AUTH`, `HELLO … AUTH`), or needed not to.
    pub authenticated: &'s mut bool,
    /// The time.
    pub clock: Clock,
    /// Client slots (for `INFO clients`).
    pub max_clients: usize,
    /// The tick the server started at (for `INFO` uptime).
    pub started: Tick,
    /// The connection's id (`CLIENT ID`, `HELLO`): its number among all accepted, from 1.
    pub client_id: u64,
}

const SYNTAX: &str = "ERR syntax error";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
const OVERFLOW: &str = "ERR increment or decrement would overflow";
const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
const NO_WALL_CLOCK: &str = "ERR absolute expire times need a wall clock, and this build has none";
/// Deadlines are kept within Redis' range: signed 64-bit milliseconds.
const MAX_MS: u64 = i64::MAX as u64;

/// A reply being assembled: `Err` means the reply buffer was too small.
type Reply = Result<After, WriteFull>;

/// Executes one command (`argv[0]` is its name) and writes its reply.
///
/// # Errors
///
/// [`WriteFull`] if `out` cannot hold the reply; the caller sizes `out` for the largest value.
pub fn execute<const KEYS: usize, const BYTES: usize>(
    argv: &[&[u8]],
    ctx: &mut Context<'_, KEYS, BYTES>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let Some((&name, args)) = argv.split_first() else {
        return Ok(After::Continue);
    };
    let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
    // Like Redis, a command counts as processed once it is known and its arity is right, even
    // if it then answers an error; unknown commands and wrong arity are rejected uncounted.
    // As in Redis, a client that must authenticate and has not is refused every command but
    // AUTH, HELLO and QUIT, after the unknown-command and arity checks.
    let auth_pending = ctx.settings.security.requires_auth() && !*ctx.authenticated;
    macro_rules! arity {
        ($ok:expr, $name:expr) => {
            if !($ok) {
                return wrong_arity(out, $name);
            }
            if auth_pending {
                return error(out, auth::NOAUTH);
            }
            ctx.stats.total_commands_processed += 1;
        };
    }
    let n = args.len();
    if is("ping") {
        arity!(n <= 1, "ping");
        match args.first() {
            Some(msg) => out.bulk(msg)?,
            None => out.simple("PONG")?,
        }
    } else if is("echo") {
        arity!(n == 1, "echo");
        out.bulk(args[0])?;
    } else if is("quit") {
        ctx.stats.total_commands_processed += 1;
        out.simple("OK")?;
        return Ok(After::Close);
    } else if is("get") {
        arity!(n == 1, "get");
        match ctx.store.get(args[0], ctx.clock.now) {
            Some(value) => out.bulk(value)?,
            None => out.null()?,
        }
    } else if is("set") {
        arity!(n >= 2, "set");
        set(args, ctx, out)?;
    } else if is("setex") || is("psetex") {
        let command = if is("setex") { "setex" } else { "psetex" };
        arity!(n == 3, command);
        let unit = if is("setex") { 1000 } else { 1 };
        let Some(amount) = parse_i64(args[1]) else {
            return error(out, NOT_INTEGER);
        };
        let Some(deadline) = relative_deadline(amount, unit, ctx.clock.now).filter(|_| amount > 0)
        else {
            return invalid_expire(out, command);
        };
        store_reply(ctx, out, args[0], args[2], Ttl::At(deadline))?;
    } else if is("getdel") {
        arity!(n == 1, "getdel");
        match ctx.store.get(args[0], ctx.clock.now) {
            Some(value) => out.bulk(value)?,
            None => out.null()?,
        }
        ctx.store.delete(args[0], ctx.clock.now);
    } else if is("getex") {
        arity!(n >= 1, "getex");
        getex(args, ctx, out)?;
    } else if is("del") || is("unlink") {
        arity!(n >= 1, "del");
        let removed = args
            .iter()
            .filter(|key| ctx.store.delete(key, ctx.clock.now))
            .count();
        out.integer(removed as i64)?;
    } else if is("exists") {
        arity!(n >= 1, "exists");
        let found = args
            .iter()
            .filter(|key| ctx.store.contains(key, ctx.clock.now))
            .count();
        out.integer(found as i64)?;
    } else if is("expire") || is("pexpire") || is("expireat") || is("pexpireat") {
        let (command, unit, absolute) = if is("expire") {
            ("expire", 1000, false)
        } else if is("pexpire") {
            ("pexpire", 1, false)
        } else if is("expireat") {
            ("expireat", 1000, true)
        } else {
            ("pexpireat", 1, true)
        };
        arity!(n >= 2, command);
        expire(args, command, unit, absolute, ctx, out)?;
    } else if is("ttl") || is("pttl") || is("expiretime") || is("pexpiretime") {
        let command = if is("ttl") {
            "ttl"
        } else if is("pttl") {
            "pttl"
        } else if is("expiretime") {
            "expiretime"
        } else {
            "pexpiretime"
        };
        arity!(n == 1, command);
        ttl(args[0], command, ctx, out)?;
    } else if is("persist") {
        arity!(n == 1, "persist");
        let had_ttl = matches!(ctx.store.deadline(args[0], ctx.clock.now), Some(Some(_)));
        if had_ttl {
            ctx.store.set_deadline(args[0], None, ctx.clock.now);
        }
        out.integer(i64::from(had_ttl))?;
    } else if is("incr") || is("decr") {
        let command = if is("incr") { "incr" } else { "decr" };
        arity!(n == 1, command);
        incr_by(args[0], if is("incr") { 1 } else { -1 }, ctx, out)?;
    } else if is("incrby") || is("decrby") {
        let command = if is("incrby") { "incrby" } else { "decrby" };
        arity!(n == 2, command);
        let Some(by) = parse_i64(args[1]) else {
            return error(out, NOT_INTEGER);
        };
        let by = if is("incrby") {
            Some(by)
        } else {
            by.checked_neg()
        };
        match by {
            Some(by) => {
                incr_by(args[0], by, ctx, out)?;
            }
            // Redis 7 (`decrbyCommand`) has its own text for negating i64::MIN.
            None => return error(out, "ERR decrement would overflow"),
        }
    } else if is("dbsize") {
        arity!(n == 0, "dbsize");
        out.integer(ctx.store.len() as i64)?;
    } else if is("flushall") || is("flushdb") {
        arity!(n <= 1, "flushall");
        match args.first() {
            Some(mode)
                if !mode.eq_ignore_ascii_case(b"sync") && !mode.eq_ignore_ascii_case(b"async") =>
            {
                return error(out, SYNTAX)
            }
            _ => {}
        }
        ctx.store.clear();
        out.simple("OK")?;
    } else if is("info") {
        ctx.stats.total_commands_processed += 1;
        crate::info::write_info(args.first().copied(), ctx, out)?;
    } else if is("config") {
        arity!(n >= 1, "config");
        config(args, ctx, out)?;
    } else if is("command") {
        ctx.stats.total_commands_processed += 1;
        command(args, out)?;
    } else if is("select") {
        arity!(n == 1, "select");
        match parse_i64(args[0]) {
            Some(0) => out.simple("OK")?,
            Some(_) => return error(out, "ERR DB index is out of range"),
            None => return error(out, NOT_INTEGER),
        }
    } else if is("client") {
        arity!(n >= 1, "client");
        let sub = args[0];
        if sub.eq_ignore_ascii_case(b"setname") || sub.eq_ignore_ascii_case(b"setinfo") {
            out.simple("OK")?;
        } else if sub.eq_ignore_ascii_case(b"id") {
            out.integer(ctx.client_id.min(i64::MAX as u64) as i64)?;
        } else {
            return unknown_subcommand(out, sub, "client");
        }
    } else if is("auth") {
        if n == 0 {
            return wrong_arity(out, "auth");
        }
        ctx.stats.total_commands_processed += 1;
        auth_command(args, ctx, out)?;
    } else if is("hello") {
        ctx.stats.total_commands_processed += 1;
        hello(args, ctx, out)?;
    } else {
        return unknown_command(out, name, args);
    }
    Ok(After::Continue)
}

fn error(out: &mut ReplyWriter<'_>, message: &str) -> Reply {
    out.error(message)?;
    Ok(After::Continue)
}

/// Formats an error message into a bounded buffer (longer text is cut).
fn error_fmt(out: &mut ReplyWriter<'_>, args: core::fmt::Arguments<'_>) -> Reply {
    let mut text: heapless::String<256> = heapless::String::new();
    let _ = text.write_fmt(args);
    error(out, &text)
}

fn wrong_arity(out: &mut ReplyWriter<'_>, command: &str) -> Reply {
    error_fmt(
        out,
        format_args!("ERR wrong number of arguments for '{command}' command"),
    )
}

fn invalid_expire(out: &mut ReplyWriter<'_>, command: &str) -> Reply {
    error_fmt(
        out,
        format_args!("ERR invalid expire time in '{command}' command"),
    )
}

/// An argument in an error message, as Redis 7 shows it (`%.128s`, then CR and LF turned
/// into spaces by `addReplyErrorLength`): at most 128 bytes. Bytes outside ASCII, which an
/// error line here cannot carry as text, become `?`.
struct Shown<'a>(&'a [u8]);

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

fn unknown_subcommand(out: &mut ReplyWriter<'_>, sub: &[u8], command: &str) -> Reply {
    error_fmt(
        out,
        format_args!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            Shown(sub),
            command.to_ascii_uppercase_str()
        ),
    )
}

trait AsciiUpper {
    fn to_ascii_uppercase_str(&self) -> Upper<'_>;
}

impl AsciiUpper for str {
    fn to_ascii_uppercase_str(&self) -> Upper<'_> {
        Upper(self)
    }
}

struct Upper<'a>(&'a str);

impl core::fmt::Display for Upper<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0
            .chars()
            .try_for_each(|c| f.write_char(c.to_ascii_uppercase()))
    }
}

/// `now + amount × unit` ms as a deadline, `None` if it overflows Redis' range. A result in the
/// past saturates at 0.
fn relative_deadline(amount: i64, unit: i64, now: Tick) -> Option<Tick> {
    let ms = amount.checked_mul(unit)?;
    let at = i128::from(now) + i128::from(ms);
    if at > i128::from(MAX_MS) {
        return None;
    }
    Some(at.max(0) as Tick)
}

/// A Unix time `amount × unit` ms as a monotonic deadline. `Err` = no wall clock, `Ok(None)`
/// = overflow.
fn absolute_deadline(amount: i64, unit: i64, clock: Clock) -> Result<Option<Tick>, ()> {
    let unix_now = clock.unix_ms.ok_or(())?;
    let Some(ms) = amount.checked_mul(unit) else {
        return Ok(None);
    };
    let at = i128::from(clock.now) + i128::from(ms) - i128::from(unix_now);
    if at > i128::from(MAX_MS) {
        return Ok(None);
    }
    Ok(Some(at.max(0) as Tick))
}

/// The expiry option of `SET`/`GETEX`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ExpiryOption {
    None,
    Relative { amount: i64, unit: i64 },
    Absolute { amount: i64, unit: i64 },
    Keep,
    Persist,
}

/// Reads `EX|PX|EXAT|PXAT <n>` at `args[*i]`; `Ok(None)` if the word is none of them.
fn expiry_option(args: &[&[u8]], i: &mut usize) -> Result<Option<ExpiryOption>, &'static str> {
    let word = args[*i];
    let (absolute, unit) = if word.eq_ignore_ascii_case(b"ex") {
        (false, 1000)
    } else if word.eq_ignore_ascii_case(b"px") {
        (false, 1)
    } else if word.eq_ignore_ascii_case(b"exat") {
        (true, 1000)
    } else if word.eq_ignore_ascii_case(b"pxat") {
        (true, 1)
    } else {
        return Ok(None);
    };
    let value = args.get(*i + 1).ok_or(SYNTAX)?;
    *i += 1;
    let amount = parse_i64(value).ok_or(NOT_INTEGER)?;
    Ok(Some(if absolute {
        ExpiryOption::Absolute { amount, unit }
    } else {
        ExpiryOption::Relative { amount, unit }
    }))
}

/// Turns an expiry option into a [`Ttl`]; `Err` is the reply to send instead.
fn resolve_expiry(
    option: ExpiryOption,
    command: &str,
    clock: Clock,
) -> Result<Ttl, ResolveError<'_>> {
    match option {
        ExpiryOption::None | ExpiryOption::Persist => Ok(Ttl::Persist),
        ExpiryOption::Keep => Ok(Ttl::Keep),
        ExpiryOption::Relative { amount, unit } => {
            if amount <= 0 {
                return Err(ResolveError::Invalid(command));
            }
            relative_deadline(amount, unit, clock.now)
                .map(Ttl::At)
                .ok_or(ResolveError::Invalid(command))
        }
        ExpiryOption::Absolute { amount, unit } => {
            if amount <= 0 {
                return Err(ResolveError::Invalid(command));
            }
            match absolute_deadline(amount, unit, clock) {
                Err(()) => Err(ResolveError::NoWallClock),
                Ok(None) => Err(ResolveError::Invalid(command)),
                // A past absolute time deletes the key, which `Ttl::At(<= now)` does.
                Ok(Some(at)) => Ok(Ttl::At(at)),
            }
        }
    }
}

enum ResolveError<'a> {
    Invalid(&'a str),
    NoWallClock,
}

fn resolve_error(out: &mut ReplyWriter<'_>, e: ResolveError<'_>) -> Reply {
    match e {
        ResolveError::Invalid(command) => invalid_expire(out, command),
        ResolveError::NoWallClock => error(out, NO_WALL_CLOCK),
    }
}

/// Writes `key = value` and replies `+OK`, or the error that refused it.
fn store_reply<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    value: &[u8],
    ttl: Ttl,
) -> Result<(), WriteFull> {
    match ctx.store.set(key, value, ttl, ctx.clock.now) {
        Ok(()) => out.simple("OK"),
        Err(e) => store_error(ctx, out, e),
    }
}

fn store_error<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
    e: StoreError,
) -> Result<(), WriteFull> {
    match e {
        StoreError::KeysFull | StoreError::BytesFull => {
            ctx.stats.oom_refusals += 1;
            out.error(OOM)
        }
        StoreError::ValueTooLarge => {
            let mut text: heapless::String<96> = heapless::String::new();
            let _ = write!(
                text,
                "ERR value is too large (max {} bytes)",
                ctx.store.max_value_len()
            );
            out.error(&text)
        }
        StoreError::KeyTooLong => out.error("ERR key is too long"),
    }
}

fn set<const K: usize, const B: usize>(
    args: &[&[u8]],
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (key, value) = (args[0], args[1]);
    let mut nx = false;
    let mut xx = false;
    let mut get = false;
    let mut expiry = ExpiryOption::None;
    let mut i = 2;
    while i < args.len() {
        let word = args[i];
        if word.eq_ignore_ascii_case(b"nx") && !xx {
            nx = true;
        } else if word.eq_ignore_ascii_case(b"xx") && !nx {
            xx = true;
        } else if word.eq_ignore_ascii_case(b"get") {
            get = true;
        } else if word.eq_ignore_ascii_case(b"keepttl") && expiry == ExpiryOption::None {
            expiry = ExpiryOption::Keep;
        } else {
            match expiry_option(args, &mut i) {
                Ok(Some(option)) if expiry == ExpiryOption::None => expiry = option,
                Ok(_) => return error(out, SYNTAX),
                Err(message) => return error(out, message),
            }
        }
        i += 1;
    }
    let ttl = match resolve_expiry(expiry, "set", ctx.clock) {
        Ok(ttl) => ttl,
        Err(e) => return resolve_error(out, e),
    };
    let now = ctx.clock.now;
    let exists = ctx.store.contains(key, now);
    // NX needs the key absent, XX needs it present.
    let allowed = if exists { !nx } else { !xx };
    if get {
        // Check the write can succeed before replying with the old value.
        if allowed {
            if let Err(e) = ctx.store.check_set(key, value, ttl, now) {
                store_error(ctx, out, e)?;
                return Ok(After::Continue);
            }
        }
        match ctx.store.get(key, now) {
            Some(old) => out.bulk(old)?,
            None => out.null()?,
        }
        if allowed {
            // Cannot fail: checked above, and the reply is already written.
            let _ = ctx.store.set(key, value, ttl, now);
        }
    } else if allowed {
        store_reply(ctx, out, key, value, ttl)?;
    } else {
        out.null()?;
    }
    Ok(After::Continue)
}

fn getex<const K: usize, const B: usize>(
    args: &[&[u8]],
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = args[0];
    let mut option = ExpiryOption::None;
    let mut i = 1;
    while i < args.len() {
        if args[i].eq_ignore_ascii_case(b"persist") && option == ExpiryOption::None {
            option = ExpiryOption::Persist;
        } else {
            match expiry_option(args, &mut i) {
                Ok(Some(o)) if option == ExpiryOption::None => option = o,
                Ok(_) => return error(out, SYNTAX),
                Err(message) => return error(out, message),
            }
        }
        i += 1;
    }
    let ttl = match resolve_expiry(option, "getex", ctx.clock) {
        Ok(ttl) => ttl,
        Err(e) => return resolve_error(out, e),
    };
    let now = ctx.clock.now;
    match ctx.store.get(key, now) {
        Some(value) => out.bulk(value)?,
        None => {
            out.null()?;
            return Ok(After::Continue);
        }
    }
    match (option, ttl) {
        (ExpiryOption::None, _) => {}
        (ExpiryOption::Persist, _) => {
            ctx.store.set_deadline(key, None, now);
        }
        (_, Ttl::At(at)) => {
            ctx.store.set_deadline(key, Some(at), now);
        }
        _ => {}
    }
    Ok(After::Continue)
}

fn expire<const K: usize, const B: usize>(
    args: &[&[u8]],
    command: &str,
    unit: i64,
    absolute: bool,
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = args[0];
    let Some(amount) = parse_i64(args[1]) else {
        return error(out, NOT_INTEGER);
    };
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for word in &args[2..] {
        if word.eq_ignore_ascii_case(b"nx") {
            nx = true;
        } else if word.eq_ignore_ascii_case(b"xx") {
            xx = true;
        } else if word.eq_ignore_ascii_case(b"gt") {
            gt = true;
        } else if word.eq_ignore_ascii_case(b"lt") {
            lt = true;
        } else {
            return error_fmt(out, format_args!("ERR Unsupported option {}", Shown(word)));
        }
    }
    if nx && (xx || gt || lt) {
        return error(
            out,
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        );
    }
    if gt && lt {
        return error(
            out,
            "ERR GT and LT options at the same time are not compatible",
        );
    }
    let deadline = if absolute {
        match absolute_deadline(amount, unit, ctx.clock) {
            Err(()) => return error(out, NO_WALL_CLOCK),
            Ok(None) => return invalid_expire(out, command),
            Ok(Some(at)) => at,
        }
    } else {
        match relative_deadline(amount, unit, ctx.clock.now) {
            Some(at) => at,
            None => return invalid_expire(out, command),
        }
    };
    let now = ctx.clock.now;
    let Some(current) = ctx.store.deadline(key, now) else {
        out.integer(0)?;
        return Ok(After::Continue);
    };
    let allowed = match current {
        // A persistent key has an infinite TTL: GT never beats it, LT always does.
        None => !xx && !gt,
        Some(at) => {
            let gt_ok = !gt || deadline > at;
            let lt_ok = !lt || deadline < at;
            !nx && gt_ok && lt_ok
        }
    };
    if allowed {
        ctx.store.set_deadline(key, Some(deadline), now);
    }
    out.integer(i64::from(allowed))?;
    Ok(After::Continue)
}

fn ttl<const K: usize, const B: usize>(
    key: &[u8],
    command: &str,
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    let deadline = match ctx.store.deadline(key, now) {
        None => return out.integer(-2).map(|()| After::Continue),
        Some(None) => return out.integer(-1).map(|()| After::Continue),
        Some(Some(at)) => at,
    };
    let value = match command {
        "ttl" => (deadline - now).saturating_add(500) / 1000,
        "pttl" => deadline - now,
        _ => {
            let Some(unix_now) = ctx.clock.unix_ms else {
                return error(out, NO_WALL_CLOCK);
            };
            let unix_deadline = unix_now.saturating_add(deadline - now);
            if command == "expiretime" {
                unix_deadline.saturating_add(500) / 1000
            } else {
                unix_deadline
            }
        }
    };
    out.integer(value.min(MAX_MS) as i64)?;
    Ok(After::Continue)
}

fn incr_by<const K: usize, const B: usize>(
    key: &[u8],
    by: i64,
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let now = ctx.clock.now;
    let current = match ctx.store.get(key, now) {
        None => 0,
        Some(value) => match parse_i64(value) {
            Some(n) => n,
            None => return error(out, NOT_INTEGER),
        },
    };
    let Some(next) = current.checked_add(by) else {
        return error(out, OVERFLOW);
    };
    let text = Decimal::signed(next);
    match ctx.store.set(key, text.as_bytes(), Ttl::Keep, now) {
        Ok(()) => out.integer(next)?,
        Err(e) => store_error(ctx, out, e)?,
    }
    Ok(After::Continue)
}

/// A CONFIG parameter this server has.
struct Param {
    name: &'static str,
    kind: Kind,
}

/// What a CONFIG parameter holds, and where in [`Settings`].
enum Kind {
    /// A whole number in [`Timeouts`] (milliseconds, or seconds for `timeout`).
    Integer {
        get: fn(&Timeouts) -> u64,
        set: fn(&mut Timeouts, u64),
        /// The smallest value accepted.
        min: u64,
    },
    /// `protected-mode`: `yes` or `no`.
    ProtectedMode,
    /// `requirepass`: the password, empty for none.
    Password,
    /// `trusted-network`: an IPv4 network such as `10.77.0.0/24`, empty for none.
    TrustedNetwork,
}

const PARAMS: &[Param] = &[
    Param {
        name: "timeout",
        kind: Kind::Integer {
            get: |t| t.idle_ms / 1000,
            set: |t, v| t.idle_ms = v.saturating_mul(1000),
            min: 0,
        },
    },
    Param {
        name: "idle-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.idle_ms,
            set: |t, v| t.idle_ms = v,
            min: 0,
        },
    },
    Param {
        name: "read-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.read_ms,
            set: |t, v| t.read_ms = v,
            min: 0,
        },
    },
    Param {
        name: "write-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.write_ms,
            set: |t, v| t.write_ms = v,
            min: 0,
        },
    },
    Param {
        name: "handshake-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.handshake_ms,
            set: |t, v| t.handshake_ms = v,
            // 0 would leave half-open handshakes in place for good.
            min: 1,
        },
    },
    Param {
        name: "requirepass",
        kind: Kind::Password,
    },
    Param {
        name: "protected-mode",
        kind: Kind::ProtectedMode,
    },
    Param {
        name: "trusted-network",
        kind: Kind::TrustedNetwork,
    },
];

impl Param {
    /// Writes the current value as a bulk string.
    fn write_value(&self, settings: &Settings, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
        match self.kind {
            Kind::Integer { get, .. } => {
                out.bulk(Decimal::new(get(&settings.timeouts).min(MAX_MS)).as_bytes())
            }
            Kind::ProtectedMode => out.bulk(if settings.security.protected_mode {
                b"yes"
            } else {
                b"no"
            }),
            Kind::Password => out.bulk(settings.security.password().unwrap_or_default()),
            Kind::TrustedNetwork => {
                let mut text: heapless::String<24> = heapless::String::new();
                if let Some(network) = settings.security.trusted_network {
                    let _ = write!(text, "{network}");
                }
                out.bulk(text.as_bytes())
            }
        }
    }

    /// Sets the value in `settings`, or says why it cannot (the text after Redis'
    /// `CONFIG SET failed (possibly related to argument '…') - `).
    fn set_value(&self, settings: &mut Settings, value: &[u8]) -> Result<(), SetError> {
        match self.kind {
            Kind::Integer { set, min, .. } => match parse_i64(value) {
                Some(v) if v >= 0 && v as u64 >= min => {
                    set(&mut settings.timeouts, v as u64);
                    Ok(())
                }
                Some(_) => Err(SetError::OutOfRange { min }),
                None => Err(SetError::NotAnInteger),
            },
            Kind::ProtectedMode => {
                settings.security.protected_mode = if value.eq_ignore_ascii_case(b"yes") {
                    true
                } else if value.eq_ignore_ascii_case(b"no") {
                    false
                } else {
                    return Err(SetError::NotYesOrNo);
                };
                Ok(())
            }
            Kind::Password => settings
                .security
                .set_password(value)
                .map_err(|_| SetError::PasswordTooLong),
            Kind::TrustedNetwork => {
                settings.security.trusted_network = if value.is_empty() {
                    None
                } else {
                    let parsed = core::str::from_utf8(value)
                        .ok()
                        .and_then(|text| text.parse::<Ipv4Cidr>().ok());
                    Some(parsed.ok_or(SetError::NotANetwork)?)
                };
                Ok(())
            }
        }
    }
}

/// Why `CONFIG SET` refused a value.
#[derive(Clone, Copy)]
enum SetError {
    NotAnInteger,
    OutOfRange { min: u64 },
    NotYesOrNo,
    PasswordTooLong,
    NotANetwork,
}

impl core::fmt::Display for SetError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotAnInteger => f.write_str("argument couldn't be parsed into an integer"),
            Self::OutOfRange { min } => write!(
                f,
                "argument must be between {min} and {} inclusive",
                i64::MAX
            ),
            Self::NotYesOrNo => f.write_str("argument must be 'yes' or 'no'"),
            Self::PasswordTooLong => {
                write!(f, "argument must be at most {MAX_PASSWORD_LEN} bytes")
            }
            Self::NotANetwork => {
                f.write_str("argument must be an IPv4 network like 10.0.0.0/24, or empty")
            }
        }
    }
}

/// Read-only parameters with fixed values: this server keeps nothing on disk. Clients such as
/// redis-benchmark ask for them at start.
const FIXED_PARAMS: &[(&str, &str)] = &[("save", ""), ("appendonly", "no")];

fn config<const K: usize, const B: usize>(
    args: &[&[u8]],
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let sub = args[0];
    if sub.eq_ignore_ascii_case(b"get") {
        if args.len() < 2 {
            return wrong_arity(out, "config|get");
        }
        let matches = |p: &Param| {
            args[1..]
                .iter()
                .any(|pattern| glob(pattern, p.name.as_bytes()))
        };
        let matches_fixed = |name: &str| {
            args[1..]
                .iter()
                .any(|pattern| glob(pattern, name.as_bytes()))
        };
        let count = PARAMS.iter().filter(|p| matches(p)).count()
            + FIXED_PARAMS
                .iter()
                .filter(|(name, _)| matches_fixed(name))
                .count();
        out.array_header(count * 2)?;
        for param in PARAMS.iter().filter(|p| matches(p)) {
            out.bulk(param.name.as_bytes())?;
            param.write_value(ctx.settings, out)?;
        }
        for (name, value) in FIXED_PARAMS.iter().filter(|(name, _)| matches_fixed(name)) {
            out.bulk(name.as_bytes())?;
            out.bulk(value.as_bytes())?;
        }
    } else if sub.eq_ignore_ascii_case(b"set") {
        if args.len() < 3 || args.len() % 2 == 0 {
            return wrong_arity(out, "config|set");
        }
        // Validate everything first: CONFIG SET is all or nothing.
        let mut updated = *ctx.settings;
        for pair in args[1..].chunks_exact(2) {
            if let Some((name, _)) = FIXED_PARAMS
                .iter()
                .find(|(name, _)| pair[0].eq_ignore_ascii_case(name.as_bytes()))
            {
                return error_fmt(
                    out,
                    format_args!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
                    ),
                );
            }
            let Some(param) = PARAMS
                .iter()
                .find(|p| pair[0].eq_ignore_ascii_case(p.name.as_bytes()))
            else {
                return error_fmt(
                    out,
                    format_args!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                        Shown(pair[0])
                    ),
                );
            };
            if let Err(why) = param.set_value(&mut updated, pair[1]) {
                return error_fmt(
                    out,
                    format_args!(
                        "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
                        param.name
                    ),
                );
            }
        }
        *ctx.settings = updated;
        out.simple("OK")?;
    } else if sub.eq_ignore_ascii_case(b"resetstat") {
        out.simple("OK")?;
    } else {
        return unknown_subcommand(out, sub, "config");
    }
    Ok(After::Continue)
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`. This server speaks RESP2 only: version 2
/// (or none) gets Redis' handshake reply as a flat array; any other version gets `-NOPROTO`, as
/// Redis answers versions it does not speak, so clients can fall back to RESP2.
/// Whether `user` and `password` name the default user and its password (compared in
/// constant time). A server without a password takes any password for `default`, as Redis'
/// `nopass` default user does.
fn credentials_match(settings: &Settings, user: &[u8], password: &[u8]) -> bool {
    // Check the password even for an unknown user, so both take the same time.
    let password_ok = settings.security.password_matches(password);
    user == auth::DEFAULT_USER && password_ok
}

/// `AUTH [username] password`, as Redis 7's `authCommand`.
fn auth_command<const K: usize, const B: usize>(
    args: &[&[u8]],
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let (user, password) = match args {
        [password] => {
            if !ctx.settings.security.requires_auth() {
                return error(out, auth::NO_PASSWORD_SET);
            }
            (auth::DEFAULT_USER, *password)
        }
        [user, password] => (*user, *password),
        _ => return error(out, SYNTAX),
    };
    if credentials_match(ctx.settings, user, password) {
        *ctx.authenticated = true;
        out.simple("OK")?;
        Ok(After::Continue)
    } else {
        error(out, auth::WRONGPASS)
    }
}

/// `HELLO [protover [AUTH username password] [SETNAME name]]`, as Redis 7's `helloCommand`:
/// the version first, then the options, then the credentials, and only then the rule that the
/// client must be authenticated.
fn hello<const K: usize, const B: usize>(
    args: &[&[u8]],
    ctx: &mut Context<'_, K, B>,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if let Some(version) = args.first() {
        match parse_i64(version) {
            Some(2) => {}
            Some(_) => return error(out, "NOPROTO unsupported protocol version"),
            None => {
                return error(
                    out,
                    "ERR Protocol version is not an integer or out of range",
                )
            }
        }
    }
    // Options: AUTH takes two arguments, SETNAME one. Names are not kept.
    let mut credentials = None;
    let mut i = 1;
    while i < args.len() {
        let option = args[i];
        let more = args.len() - 1 - i;
        if option.eq_ignore_ascii_case(b"auth") && more >= 2 {
            credentials = Some((args[i + 1], args[i + 2]));
            i += 3;
        } else if option.eq_ignore_ascii_case(b"setname") && more >= 1 {
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
    let client_id = ctx.client_id;
    out.array_header(14)?;
    out.bulk(b"server")?;
    out.bulk(b"redis")?;
    out.bulk(b"version")?;
    out.bulk(b"7.0.0")?;
    out.bulk(b"proto")?;
    out.integer(2)?;
    out.bulk(b"id")?;
    out.integer(client_id.min(i64::MAX as u64) as i64)?;
    out.bulk(b"mode")?;
    out.bulk(b"standalone")?;
    out.bulk(b"role")?;
    out.bulk(b"master")?;
    out.bulk(b"modules")?;
    out.array_header(0)?;
    Ok(After::Continue)
}

/// Glob match with `*` and `?`, ASCII case-insensitive (enough for CONFIG GET).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| glob(rest, &text[skip..])),
        Some((&p, rest)) => match text.split_first() {
            Some((&t, text_rest)) => {
                (p == b'?' || p.eq_ignore_ascii_case(&t)) && glob(rest, text_rest)
            }
            None => false,
        },
    }
}

/// Just enough of COMMAND for redis-cli and client libraries: they tolerate empty metadata.
fn command(args: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    match args.first() {
        None => out.array_header(0)?,
        Some(sub) if sub.eq_ignore_ascii_case(b"docs") || sub.eq_ignore_ascii_case(b"info") => {
            out.array_header(0)?
        }
        Some(sub) if sub.eq_ignore_ascii_case(b"count") => out.integer(COMMAND_COUNT)?,
        Some(sub) => return unknown_subcommand(out, sub, "command"),
    }
    Ok(After::Continue)
}

/// The number of commands [`execute`] knows (for `COMMAND COUNT`).
const COMMAND_COUNT: i64 = 35;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_config_patterns() {
        assert!(glob(b"*", b"timeout"));
        assert!(glob(b"*timeout*", b"read-timeout-ms"));
        assert!(glob(b"TIME?UT", b"timeout"));
        assert!(!glob(b"save", b"timeout"));
    }
}
