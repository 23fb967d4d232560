//! `CONFIG GET` and `CONFIG SET`, over a table of the parameters this server has.

use core::fmt::Write as _;

use smoltcp::wire::Ipv4Cidr;

use super::expiry::MAX_MS;
use super::{error, error_fmt, glob, ok, Context, Reply, ReplyWriter, Shown, SYNTAX};
use crate::auth::MAX_PASSWORD_LEN;
use crate::decimal::{parse_i64, Decimal};
use crate::resp::WriteFull;
use crate::settings::{Capacity, Settings, Timeouts};

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
        /// The largest value accepted.
        max: u64,
    },
    /// `protected-mode`: `yes` or `no`.
    ProtectedMode,
    /// `requirepass`: the password, empty for none.
    Password,
    /// `trusted-network`: an IPv4 network such as `10.77.0.0/24`, empty for none.
    TrustedNetwork,
    /// `maxclients`: up to one less than the server's client slots.
    MaxClients,
    /// `maxmemory`: bytes, with Redis' units (`100mb`, `1gb`), up to the store's memory; 0
    /// for all of it.
    MaxMemory,
    /// `proto-max-bulk-len` and `client-query-buffer-limit`: bytes, with Redis' units, at
    /// least 1 MiB (Redis' range).
    Bytes {
        get: fn(&Capacity) -> usize,
        set: fn(&mut Capacity, usize),
    },
    /// `notify-keyspace-events`: Redis' class letters.
    #[cfg(feature = "pubsub")]
    KeyspaceEvents,
    /// A whole number elsewhere in [`Settings`] (the hash and list encodings), read as Redis
    /// reads its numeric parameters and kept within Redis' range for it.
    #[cfg(feature = "lists")]
    Number {
        get: fn(&Settings) -> i64,
        set: fn(&mut Settings, i64),
        /// The smallest value accepted.
        min: i64,
        /// The largest value accepted.
        max: i64,
        /// Read as a memory size (`1kb`), as Redis reads its `MEMORY_CONFIG` parameters.
        memory: bool,
    },
}

/// `hash-max-listpack-entries` and its Redis 7.0 alias: a C `size_t` up to `LONG_MAX`.
#[cfg(feature = "hashes")]
const HASH_MAX_FIELDS: Kind = Kind::Number {
    get: |s| s.hash_packing.max_fields as i64,
    set: |s, v| s.hash_packing.max_fields = v as u64,
    min: 0,
    max: i64::MAX,
    memory: false,
};

/// `hash-max-listpack-value` and its alias: a memory size up to `LONG_MAX`.
#[cfg(feature = "hashes")]
const HASH_MAX_LEN: Kind = Kind::Number {
    get: |s| s.hash_packing.max_len as i64,
    set: |s, v| s.hash_packing.max_len = v as u64,
    min: 0,
    max: i64::MAX,
    memory: true,
};

/// `list-max-listpack-size` and its alias: a C `int`.
#[cfg(feature = "lists")]
const LIST_MAX_SIZE: Kind = Kind::Number {
    get: |s| i64::from(s.list_nodes.max_listpack_size),
    set: |s, v| s.list_nodes.max_listpack_size = v as i32,
    min: i32::MIN as i64,
    max: i32::MAX as i64,
    memory: false,
};

/// What the server was given memory for: the most `maxclients` and `maxmemory` can be.
#[derive(Clone, Copy)]
struct Bounds {
    clients: usize,
    memory: usize,
}

const PARAMS: &[Param] = &[
    Param {
        name: "timeout",
        kind: Kind::Integer {
            get: |t| t.idle_ms / 1000,
            set: |t, v| t.idle_ms = v.saturating_mul(1000),
            min: 0,
            // Redis' range: a C int of seconds.
            max: i32::MAX as u64,
        },
    },
    Param {
        name: "idle-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.idle_ms,
            set: |t, v| t.idle_ms = v,
            min: 0,
            max: MAX_MS,
        },
    },
    Param {
        name: "read-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.read_ms,
            set: |t, v| t.read_ms = v,
            min: 0,
            max: MAX_MS,
        },
    },
    Param {
        name: "write-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.write_ms,
            set: |t, v| t.write_ms = v,
            min: 0,
            max: MAX_MS,
        },
    },
    Param {
        name: "handshake-timeout-ms",
        kind: Kind::Integer {
            get: |t| t.handshake_ms,
            set: |t, v| t.handshake_ms = v,
            // 0 would leave half-open handshakes in place for good.
            min: 1,
            max: MAX_MS,
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
    Param {
        name: "maxclients",
        kind: Kind::MaxClients,
    },
    Param {
        name: "maxmemory",
        kind: Kind::MaxMemory,
    },
    Param {
        name: "proto-max-bulk-len",
        kind: Kind::Bytes {
            get: |c| c.max_bulk_len,
            set: |c, v| c.max_bulk_len = v,
        },
    },
    Param {
        name: "client-query-buffer-limit",
        kind: Kind::Bytes {
            get: |c| c.query_buffer_limit,
            set: |c, v| c.query_buffer_limit = v,
        },
    },
    #[cfg(feature = "pubsub")]
    Param {
        name: "notify-keyspace-events",
        kind: Kind::KeyspaceEvents,
    },
    // Redis 7.0 lists a parameter under its alias too (`CONFIG GET *` shows both), and takes
    // a value for each in one `CONFIG SET` (the last wins).
    #[cfg(feature = "hashes")]
    Param {
        name: "hash-max-listpack-entries",
        kind: HASH_MAX_FIELDS,
    },
    #[cfg(feature = "hashes")]
    Param {
        name: "hash-max-ziplist-entries",
        kind: HASH_MAX_FIELDS,
    },
    #[cfg(feature = "hashes")]
    Param {
        name: "hash-max-listpack-value",
        kind: HASH_MAX_LEN,
    },
    #[cfg(feature = "hashes")]
    Param {
        name: "hash-max-ziplist-value",
        kind: HASH_MAX_LEN,
    },
    // Kept and reported only: see `ListNodes`.
    #[cfg(feature = "lists")]
    Param {
        name: "list-max-listpack-size",
        kind: LIST_MAX_SIZE,
    },
    #[cfg(feature = "lists")]
    Param {
        name: "list-max-ziplist-size",
        kind: LIST_MAX_SIZE,
    },
    #[cfg(feature = "lists")]
    Param {
        name: "list-compress-depth",
        kind: Kind::Number {
            get: |s| i64::from(s.list_nodes.compress_depth),
            set: |s, v| s.list_nodes.compress_depth = v as i32,
            min: 0,
            max: i32::MAX as i64,
            memory: false,
        },
    },
];

/// The least `proto-max-bulk-len` and `client-query-buffer-limit` (Redis' range).
const MIN_BYTES_LIMIT: u64 = 1 << 20;

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
            Kind::MaxClients => {
                out.bulk(Decimal::new(settings.capacity.max_clients as u64).as_bytes())
            }
            Kind::MaxMemory => {
                out.bulk(Decimal::new(settings.capacity.max_memory as u64).as_bytes())
            }
            Kind::Bytes { get, .. } => {
                out.bulk(Decimal::new(get(&settings.capacity) as u64).as_bytes())
            }
            #[cfg(feature = "pubsub")]
            Kind::KeyspaceEvents => {
                let mut text: heapless::String<16> = heapless::String::new();
                let _ = write!(text, "{}", settings.keyspace_events);
                out.bulk(text.as_bytes())
            }
            #[cfg(feature = "lists")]
            Kind::Number { get, .. } => out.bulk(Decimal::signed(get(settings)).as_bytes()),
        }
    }

    /// Sets the value in `settings`, or says why it cannot (the text after Redis'
    /// `CONFIG SET failed (possibly related to argument '…') - `).
    fn set_value(
        &self,
        settings: &mut Settings,
        value: &[u8],
        bounds: Bounds,
    ) -> Result<(), SetError> {
        match self.kind {
            Kind::Integer { set, min, max, .. } => match parse_i64(value) {
                Some(v) if v >= 0 && (min..=max).contains(&(v as u64)) => {
                    set(&mut settings.timeouts, v as u64);
                    Ok(())
                }
                Some(_) => Err(SetError::OutOfRange {
                    min: min as i64,
                    max: max as i64,
                }),
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
            Kind::MaxClients => match parse_i64(value) {
                Some(v) if v >= 1 && v as u64 <= bounds.clients as u64 => {
                    settings.capacity.max_clients = v as usize;
                    Ok(())
                }
                // Redis' range: a C unsigned int.
                Some(v) if v >= 1 && v <= i64::from(u32::MAX) => Err(SetError::TooManyClients {
                    most: bounds.clients,
                }),
                Some(_) => Err(SetError::OutOfRange {
                    min: 1,
                    max: i64::from(u32::MAX),
                }),
                None => Err(SetError::NotAnInteger),
            },
            Kind::MaxMemory => match memtoull(value) {
                Some(v) if v <= bounds.memory as u64 => {
                    settings.capacity.max_memory = v as usize;
                    Ok(())
                }
                Some(_) => Err(SetError::MoreMemory {
                    most: bounds.memory,
                }),
                None => Err(SetError::NotAMemorySize),
            },
            Kind::Bytes { set, .. } => match memtoull(value) {
                Some(v) if v >= MIN_BYTES_LIMIT && v <= i64::MAX as u64 => {
                    set(
                        &mut settings.capacity,
                        usize::try_from(v).unwrap_or(usize::MAX),
                    );
                    Ok(())
                }
                Some(_) => Err(SetError::OutOfRange {
                    min: MIN_BYTES_LIMIT as i64,
                    max: i64::MAX,
                }),
                None => Err(SetError::NotAMemorySize),
            },
            #[cfg(feature = "pubsub")]
            Kind::KeyspaceEvents => {
                settings.keyspace_events =
                    crate::pubsub::KeyspaceEvents::parse(value).ok_or(SetError::NotEventClasses)?;
                Ok(())
            }
            #[cfg(feature = "lists")]
            Kind::Number {
                set,
                min,
                max,
                memory,
                ..
            } => {
                // Redis keeps a memory size's `unsigned long long` in a `long long`.
                let parsed = if memory {
                    memtoull(value).map(|v| v as i64)
                } else {
                    parse_i64(value)
                };
                match parsed {
                    Some(v) if (min..=max).contains(&v) => {
                        set(settings, v);
                        Ok(())
                    }
                    Some(_) => Err(SetError::OutOfRange { min, max }),
                    None if memory => Err(SetError::NotAMemorySize),
                    None => Err(SetError::NotAnInteger),
                }
            }
        }
    }
}

/// Why `CONFIG SET` refused a value.
#[derive(Clone, Copy)]
enum SetError {
    Duplicate,
    Immutable,
    NotAnInteger,
    OutOfRange {
        min: i64,
        max: i64,
    },
    NotYesOrNo,
    PasswordTooLong,
    NotANetwork,
    NotAMemorySize,
    MoreMemory {
        most: usize,
    },
    TooManyClients {
        most: usize,
    },
    #[cfg(feature = "pubsub")]
    NotEventClasses,
}

impl core::fmt::Display for SetError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Duplicate => f.write_str("duplicate parameter"),
            Self::Immutable => f.write_str("can't set immutable config"),
            Self::NotAnInteger => f.write_str("argument couldn't be parsed into an integer"),
            Self::OutOfRange { min, max } => {
                write!(f, "argument must be between {min} and {max} inclusive")
            }
            Self::NotYesOrNo => f.write_str("argument must be 'yes' or 'no'"),
            Self::PasswordTooLong => {
                write!(f, "argument must be at most {MAX_PASSWORD_LEN} bytes")
            }
            Self::NotANetwork => {
                f.write_str("argument must be an IPv4 network like 10.0.0.0/24, or empty")
            }
            // Redis' text for a memory value it cannot parse.
            Self::NotAMemorySize => f.write_str("argument must be a memory value"),
            // Redis says "The operating system is not able to handle the specified number of
            // clients, try with N"; here the limit is the slots the server was started with.
            Self::TooManyClients { most } => write!(
                f,
                "The server was started with slots for {most} clients, try with {most}"
            ),
            #[cfg(feature = "pubsub")]
            Self::NotEventClasses => {
                f.write_str("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
            }
            Self::MoreMemory { most } => write!(
                f,
                "argument must be at most {most}, the memory the store was given at start"
            ),
        }
    }
}

/// Parameters with fixed values: this server keeps nothing on disk. Clients such as
/// redis-benchmark ask for them at start; `CONFIG SET` takes only the value they have.
const FIXED_PARAMS: &[(&str, &str)] = &[("save", ""), ("appendonly", "no")];

/// A parameter as `CONFIG GET` lists it.
#[derive(Clone, Copy)]
enum Entry {
    Param(&'static Param),
    Fixed(&'static str, &'static str),
}

impl Entry {
    fn name(self) -> &'static str {
        match self {
            Self::Param(param) => param.name,
            Self::Fixed(name, _) => name,
        }
    }
}

/// Every parameter `CONFIG GET` knows, settable or not.
fn entries() -> impl Iterator<Item = Entry> {
    PARAMS.iter().map(Entry::Param).chain(
        FIXED_PARAMS
            .iter()
            .map(|&(name, value)| Entry::Fixed(name, value)),
    )
}

/// `CONFIG GET pattern …`: each parameter matching a pattern, once (Redis'
/// `configGetCommand`). A pattern without `*`, `?` or `[` names one parameter, which is then
/// listed under the name as the client wrote it.
pub(crate) fn get(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    // Each parameter once, under the name the first pattern matching it gives.
    let shown = |name: &'static str| {
        argv[2..].iter().find_map(|&pattern| {
            if !pattern.iter().any(|b| b"*?[".contains(b)) {
                super::is(pattern, name).then_some(pattern)
            } else {
                glob::matches(pattern, name.as_bytes(), true).then_some(name.as_bytes())
            }
        })
    };
    let count = entries().filter(|e| shown(e.name()).is_some()).count();
    out.map_header(count)?;
    for entry in entries() {
        let Some(name) = shown(entry.name()) else {
            continue;
        };
        out.bulk(name)?;
        match entry {
            Entry::Param(param) => param.write_value(ctx.settings, out)?,
            Entry::Fixed(_, value) => out.bulk(value.as_bytes())?,
        }
    }
    Ok(super::After::Continue)
}

/// `CONFIG SET parameter value …`: all or nothing, as Redis 7.
pub(crate) fn set(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let pairs = &argv[2..];
    if pairs.len() % 2 != 0 {
        return error(out, SYNTAX);
    }
    // Names first, for every pair, then values (Redis' `configSetCommand`); the error names
    // the parameter as the client wrote it.
    let failed = |out: &mut ReplyWriter<'_>, name: &[u8], why: SetError| {
        error_fmt(
            out,
            format_args!(
                "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
                Shown(name)
            ),
        )
    };
    for (i, pair) in pairs.chunks_exact(2).enumerate() {
        // A fixed parameter takes its own value (`save ""`, as test suites set it), no other.
        if let Some((_, value)) = FIXED_PARAMS
            .iter()
            .find(|(name, _)| super::is(pair[0], name))
        {
            if pair[1] == value.as_bytes() {
                continue;
            }
            return failed(out, pair[0], SetError::Immutable);
        }
        let Some(param) = PARAMS.iter().find(|p| super::is(pair[0], p.name)) else {
            return error_fmt(
                out,
                format_args!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    Shown(pair[0])
                ),
            );
        };
        if pairs[..i * 2]
            .iter()
            .step_by(2)
            .any(|name| super::is(name, param.name))
        {
            return failed(out, pair[0], SetError::Duplicate);
        }
    }
    let bounds = Bounds {
        clients: ctx.client_slots.saturating_sub(1),
        memory: ctx.store.bytes_usable(),
    };
    let mut updated = *ctx.settings;
    for pair in pairs.chunks_exact(2) {
        let Some(param) = PARAMS.iter().find(|p| super::is(pair[0], p.name)) else {
            continue;
        };
        if let Err(why) = param.set_value(&mut updated, pair[1], bounds) {
            // Redis names the parameter as it knows it here.
            return failed(out, param.name.as_bytes(), why);
        }
    }
    *ctx.settings = updated;
    ctx.store.set_bytes_limit(updated.capacity.bytes_limit());
    // Values are as long as the longest bulk, where input buffers can grow to take one.
    #[cfg(feature = "alloc")]
    ctx.store
        .set_limits(ctx.store.max_key_len(), updated.capacity.max_bulk_len);
    ok(out)
}

/// A memory size as Redis reads one (`memtoull`): digits, then optionally `b`, `k` (1000),
/// `kb` (1024), `m`, `mb`, `g` or `gb`, in any case.
pub fn parse_memory(text: &[u8]) -> Option<u64> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let (number, unit) = text.split_at(digits);
    let number = parse_i64(number).filter(|&n| n >= 0)? as u64;
    number.checked_mul(memory_unit(unit)?)
}

/// The bytes one of Redis' memory units stands for: none or `b` 1, `k` 1000, `kb` 1024, `m`,
/// `mb`, `g`, `gb`, in any case.
fn memory_unit(unit: &[u8]) -> Option<u64> {
    const UNITS: [(&[u8], u64); 7] = [
        (b"b", 1),
        (b"k", 1000),
        (b"kb", 1024),
        (b"m", 1000 * 1000),
        (b"mb", 1024 * 1024),
        (b"g", 1000 * 1000 * 1000),
        (b"gb", 1024 * 1024 * 1024),
    ];
    if unit.is_empty() {
        return Some(1);
    }
    UNITS
        .iter()
        .find(|(name, _)| unit.eq_ignore_ascii_case(name))
        .map(|&(_, bytes)| bytes)
}

/// A memory size as `CONFIG SET` reads one (Redis' `memtoull`, quirks included): the text up to
/// a NUL, digits (none reads as 0), then optionally one of [`parse_memory`]'s units. Digits past
/// `u64::MAX` read as `u64::MAX`, and the unit's product wraps, as in C. `None`: Redis' "must be
/// a memory value" (a sign, another unit, anything after it).
fn memtoull(text: &[u8]) -> Option<u64> {
    let text = text.split(|&b| b == 0).next().unwrap_or_default();
    if text.first() == Some(&b'-') {
        return None;
    }
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let (number, unit) = text.split_at(digits);
    let multiplier = memory_unit(unit)?;
    // Redis copies the digits into a 128-byte buffer first.
    if digits >= 128 {
        return None;
    }
    // `strtoull`: saturates at `u64::MAX` (`ERANGE`, which Redis does not look at).
    let value = number.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    });
    Some(value.unwrap_or(u64::MAX).wrapping_mul(multiplier))
}

/// `CONFIG RESETSTAT`: the counters `INFO` shows (stats, `commandstats`, `errorstats`) start
/// again from zero, as in Redis.
pub(crate) fn resetstat(
    ctx: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    // Commands count here as they start and in Redis as they end: either way the next
    // `INFO` shows one command processed.
    ctx.stats.reset(ctx.store.expired_keys());
    ok(out)
}

/// `CONFIG REWRITE`: there is no file, as for a Redis started without one.
pub(crate) fn rewrite(_: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    error(out, "ERR The server is running without a config file")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str) -> &'static Param {
        PARAMS.iter().find(|p| p.name == name).unwrap()
    }

    fn set(settings: &mut Settings, name: &str, value: &str) -> Result<(), std::string::String> {
        let bounds = Bounds {
            clients: 10,
            memory: 1 << 20,
        };
        param(name)
            .set_value(settings, value.as_bytes(), bounds)
            .map_err(|e| std::format!("{e}"))
    }

    /// What Redis 7.0.15 answered to `CONFIG SET hash-max-listpack-value` and `CONFIG GET`.
    #[test]
    fn memtoull_reads_as_redis_reads() {
        for (text, value) in [
            ("", Some(0)),
            ("kb", Some(0)),
            ("0", Some(0)),
            ("5", Some(5)),
            ("1kb", Some(1024)),
            ("8kB", Some(8192)),
            ("10G", Some(10_000_000_000)),
            ("1b", Some(1)),
            ("9223372036854775807", Some(i64::MAX as u64)),
            ("99999999999999999999", Some(u64::MAX)),
            ("20000000000gb", Some(3_028_092_406_290_448_384)),
            ("5\0junk", Some(5)),
            ("-1", None),
            ("1.5", None),
            (" 5", None),
            ("5 ", None),
            ("abc", None),
            ("1kib", None),
        ] {
            assert_eq!(memtoull(text.as_bytes()), value, "{text:?}");
        }
    }

    /// Every build has the timeouts: a value is taken whole, a refused one changes nothing.
    #[test]
    fn a_timeout_takes_an_integer_and_a_refusal_changes_nothing() {
        let mut settings = Settings::default();
        assert_eq!(set(&mut settings, "idle-timeout-ms", "2500"), Ok(()));
        assert_eq!(settings.timeouts.idle_ms, 2500);
        assert_eq!(set(&mut settings, "timeout", "3"), Ok(()));
        assert_eq!(settings.timeouts.idle_ms, 3000);
        assert!(set(&mut settings, "idle-timeout-ms", "soon").is_err());
        assert!(set(&mut settings, "idle-timeout-ms", "-1").is_err());
        assert_eq!(settings.timeouts.idle_ms, 3000);
    }

    #[cfg(feature = "hashes")]
    #[test]
    fn hash_thresholds_take_redis_range_and_errors() {
        let mut settings = Settings::default();
        assert_eq!(set(&mut settings, "hash-max-listpack-entries", "7"), Ok(()));
        assert_eq!(set(&mut settings, "hash-max-ziplist-value", "1kb"), Ok(()));
        assert_eq!(settings.hash_packing.max_fields, 7);
        assert_eq!(settings.hash_packing.max_len, 1024);
        let range = "argument must be between 0 and 9223372036854775807 inclusive";
        for (name, value, why) in [
            ("hash-max-listpack-entries", "-1", range),
            (
                "hash-max-ziplist-entries",
                "1kb",
                "argument couldn't be parsed into an integer",
            ),
            (
                "hash-max-listpack-entries",
                "9223372036854775808",
                "argument couldn't be parsed into an integer",
            ),
            ("hash-max-listpack-value", "9223372036854775808", range),
            ("hash-max-listpack-value", "99999999999999999999", range),
            (
                "hash-max-listpack-value",
                "-1",
                "argument must be a memory value",
            ),
        ] {
            assert_eq!(
                set(&mut settings, name, value),
                Err(why.into()),
                "{name} {value}"
            );
        }
        assert_eq!(
            settings.hash_packing.max_fields, 7,
            "a refusal changes nothing"
        );
        assert_eq!(settings.hash_packing.max_len, 1024);
    }

    #[cfg(feature = "lists")]
    #[test]
    fn list_node_settings_take_a_c_int() {
        let mut settings = Settings::default();
        assert_eq!(set(&mut settings, "list-max-ziplist-size", "-5"), Ok(()));
        assert_eq!(settings.list_nodes.max_listpack_size, -5);
        assert_eq!(
            set(&mut settings, "list-max-listpack-size", "2147483648"),
            Err("argument must be between -2147483648 and 2147483647 inclusive".into())
        );
        assert_eq!(
            set(&mut settings, "list-compress-depth", "-1"),
            Err("argument must be between 0 and 2147483647 inclusive".into())
        );
        assert_eq!(set(&mut settings, "list-compress-depth", "2"), Ok(()));
        assert_eq!(settings.list_nodes, {
            let mut nodes = crate::ListNodes::REDIS;
            nodes.max_listpack_size = -5;
            nodes.compress_depth = 2;
            nodes
        });
    }
}
