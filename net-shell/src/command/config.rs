//! `CONFIG GET` and `CONFIG SET`, over a table of the parameters this server has.

use core::fmt::Write as _;

use smoltcp::wire::Ipv4Cidr;

use super::expiry::MAX_MS;
use super::{error, error_fmt, glob, ok, Context, Reply, ReplyWriter, Shown, SYNTAX};
use crate::auth::MAX_PASSWORD_LEN;
use crate::config::{Settings, Timeouts};
use crate::decimal::{parse_i64, Decimal};
use crate::resp::WriteFull;

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
            Kind::Integer { set, min, max, .. } => match parse_i64(value) {
                Some(v) if v >= 0 && (min..=max).contains(&(v as u64)) => {
                    set(&mut settings.timeouts, v as u64);
                    Ok(())
                }
                Some(_) => Err(SetError::OutOfRange { min, max }),
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
    Duplicate,
    Immutable,
    NotAnInteger,
    OutOfRange { min: u64, max: u64 },
    NotYesOrNo,
    PasswordTooLong,
    NotANetwork,
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
        }
    }
}

/// Read-only parameters with fixed values: this server keeps nothing on disk. Clients such as
/// redis-benchmark ask for them at start.
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
pub(crate) fn get<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
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
    out.array_header(count * 2)?;
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
pub(crate) fn set<const K: usize, const B: usize>(
    ctx: &mut Context<'_, K, B>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
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
        if FIXED_PARAMS
            .iter()
            .any(|(name, _)| super::is(pair[0], name))
        {
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
    let mut updated = *ctx.settings;
    for pair in pairs.chunks_exact(2) {
        let Some(param) = PARAMS.iter().find(|p| super::is(pair[0], p.name)) else {
            continue;
        };
        if let Err(why) = param.set_value(&mut updated, pair[1]) {
            // Redis names the parameter as it knows it here.
            return failed(out, param.name.as_bytes(), why);
        }
    }
    *ctx.settings = updated;
    ok(out)
}

/// `CONFIG RESETSTAT`: accepted; the counters are kept.
pub(crate) fn resetstat<const K: usize, const B: usize>(
    _: &mut Context<'_, K, B>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ok(out)
}

/// `CONFIG REWRITE`: there is no file, as for a Redis started without one.
pub(crate) fn rewrite<const K: usize, const B: usize>(
    _: &mut Context<'_, K, B>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    error(out, "ERR The server is running without a config file")
}
