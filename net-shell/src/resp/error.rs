//! What can go wrong reading a request or writing a reply.

use core::fmt::{self, Write as _};

/// Why a request cannot be parsed.
///
/// A protocol error leaves the parser unable to tell where the next request starts, so it ends the
/// connection: write the error with [`ReplyWriter::protocol_error`](super::ReplyWriter::protocol_error),
/// then close, as Redis does (it sets `CLIENT_CLOSE_AFTER_REPLY`).
///
/// `Display` gives the message Redis 7 sends for the same fault (`processMultibulkBuffer` and
/// `processInlineBuffer` in its `networking.c`), without the `-ERR ` that the reply adds.
///
/// | variant | message |
/// | --- | --- |
/// | [`InvalidMultibulkLength`](Self::InvalidMultibulkLength) | `Protocol error: invalid multibulk length` |
/// | [`InvalidBulkLength`](Self::InvalidBulkLength) | `Protocol error: invalid bulk length` |
/// | [`ExpectedDollar`](Self::ExpectedDollar) | `Protocol error: expected '$', got 'x'` |
/// | [`TooBigInlineRequest`](Self::TooBigInlineRequest) | `Protocol error: too big inline request` |
/// | [`UnbalancedQuotes`](Self::UnbalancedQuotes) | `Protocol error: unbalanced quotes in request` |
/// | [`TooBigMbulkCountString`](Self::TooBigMbulkCountString) | `Protocol error: too big mbulk count string` |
/// | [`TooBigBulkCountString`](Self::TooBigBulkCountString) | `Protocol error: too big bulk count string` |
/// | [`UnauthenticatedMultibulkLength`](Self::UnauthenticatedMultibulkLength) | `Protocol error: unauthenticated multibulk length` |
/// | [`UnauthenticatedBulkLength`](Self::UnauthenticatedBulkLength) | `Protocol error: unauthenticated bulk length` |
///
/// # Examples
///
/// ```
/// use net_shell::resp::{parse, Limits, ProtocolError};
///
/// let mut rx = *b"*1\r\n+PING\r\n";
/// let error = parse::<4>(&mut rx, &Limits::new(64, 64)).unwrap_err();
/// assert_eq!(error, ProtocolError::ExpectedDollar(b'+'));
///
/// assert_eq!(error.to_string(), "Protocol error: expected '$', got '+'");
/// ```
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The `*<count>` line of a multibulk request is not a decimal number as Redis reads them
    /// (optional `-`, no leading zeros or `+`, fits an `i64`), or the count exceeds `MAX_ARGS`.
    InvalidMultibulkLength,
    /// A `$<len>` line is not a decimal number, is negative, or exceeds
    /// [`Limits::max_bulk_len`](super::Limits::max_bulk_len).
    InvalidBulkLength,
    /// An argument of a multibulk request starts with this byte instead of `$`.
    ///
    /// Redis writes the byte into its reply as is, with `\r` and `\n` turned into spaces so the
    /// reply stays one line; [`ReplyWriter::protocol_error`](super::ReplyWriter::protocol_error)
    /// does the same. `Display` can only show text, so it shows a byte above 0x7f as `\xHH`.
    ExpectedDollar(u8),
    /// An inline request has no `\n` within [`Limits::max_inline_len`](super::Limits::max_inline_len)
    /// bytes, or has more than `MAX_ARGS` arguments (Redis has no argument limit for inline
    /// requests; this server's inline request is too big for it).
    TooBigInlineRequest,
    /// An inline request has a quote that is not closed, or a closing quote followed by something
    /// other than a blank.
    UnbalancedQuotes,
    /// The `*<count>` line has no `\r` within [`Limits::max_inline_len`](super::Limits::max_inline_len)
    /// bytes.
    TooBigMbulkCountString,
    /// A `$<len>` line has no `\r` within [`Limits::max_inline_len`](super::Limits::max_inline_len)
    /// bytes.
    TooBigBulkCountString,
    /// A client that has not authenticated sent a multibulk request of more than
    /// [`UNAUTHENTICATED_MAX_ARGS`](super::UNAUTHENTICATED_MAX_ARGS) arguments.
    UnauthenticatedMultibulkLength,
    /// A client that has not authenticated sent a bulk argument longer than
    /// [`UNAUTHENTICATED_MAX_BULK_LEN`](super::UNAUTHENTICATED_MAX_BULK_LEN) bytes.
    UnauthenticatedBulkLength,
}

impl ProtocolError {
    /// The message as Redis puts it on the wire: text, the offending byte if any, more text.
    pub(crate) const fn wire_parts(self) -> (&'static str, Option<u8>, &'static str) {
        match self {
            Self::InvalidMultibulkLength => ("Protocol error: invalid multibulk length", None, ""),
            Self::InvalidBulkLength => ("Protocol error: invalid bulk length", None, ""),
            Self::ExpectedDollar(got) => {
                // Redis maps CR and LF in error text to spaces (addReplyErrorFormat).
                let got = match got {
                    b'\r' | b'\n' => b' ',
                    other => other,
                };
                ("Protocol error: expected '$', got '", Some(got), "'")
            }
            Self::TooBigInlineRequest => ("Protocol error: too big inline request", None, ""),
            Self::UnbalancedQuotes => ("Protocol error: unbalanced quotes in request", None, ""),
            Self::TooBigMbulkCountString => {
                ("Protocol error: too big mbulk count string", None, "")
            }
            Self::TooBigBulkCountString => ("Protocol error: too big bulk count string", None, ""),
            Self::UnauthenticatedMultibulkLength => {
                ("Protocol error: unauthenticated multibulk length", None, "")
            }
            Self::UnauthenticatedBulkLength => {
                ("Protocol error: unauthenticated bulk length", None, "")
            }
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (head, byte, tail) = self.wire_parts();
        f.write_str(head)?;
        match byte {
            Some(b) if b.is_ascii() => f.write_char(char::from(b))?,
            Some(b) => write!(f, "\\x{b:02x}")?,
            None => {}
        }
        f.write_str(tail)
    }
}

impl core::error::Error for ProtocolError {}

/// A reply did not fit in the space left in a [`ReplyWriter`](super::ReplyWriter); nothing of it
/// was written.
///
/// # Examples
///
/// ```
/// use net_shell::resp::{ReplyWriter, WriteFull};
///
/// let mut tx = [0u8; 8];
/// let mut replies = ReplyWriter::new(&mut tx);
/// assert_eq!(replies.bulk(b"too long for eight bytes"), Err(WriteFull));
/// assert!(replies.is_empty());
/// ```
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteFull;

impl fmt::Display for WriteFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("reply buffer full")
    }
}

impl core::error::Error for WriteFull {}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A `fmt::Write` into a fixed array, so tests need no allocator.
    pub(crate) struct Text {
        bytes: [u8; 128],
        len: usize,
    }

    impl Text {
        pub(crate) fn of(value: impl fmt::Display) -> Self {
            let mut text = Self {
                bytes: [0; 128],
                len: 0,
            };
            write!(text, "{value}").unwrap();
            text
        }

        pub(crate) fn as_bytes(&self) -> &[u8] {
            &self.bytes[..self.len]
        }
    }

    impl fmt::Write for Text {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            self.bytes
                .get_mut(self.len..end)
                .ok_or(fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    #[test]
    fn display_each_error_is_redis_text() {
        let cases: [(ProtocolError, &[u8]); 7] = [
            (
                ProtocolError::InvalidMultibulkLength,
                b"Protocol error: invalid multibulk length",
            ),
            (
                ProtocolError::InvalidBulkLength,
                b"Protocol error: invalid bulk length",
            ),
            (
                ProtocolError::ExpectedDollar(b'x'),
                b"Protocol error: expected '$', got 'x'",
            ),
            (
                ProtocolError::TooBigInlineRequest,
                b"Protocol error: too big inline request",
            ),
            (
                ProtocolError::UnbalancedQuotes,
                b"Protocol error: unbalanced quotes in request",
            ),
            (
                ProtocolError::TooBigMbulkCountString,
                b"Protocol error: too big mbulk count string",
            ),
            (
                ProtocolError::TooBigBulkCountString,
                b"Protocol error: too big bulk count string",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(Text::of(error).as_bytes(), text, "{error:?}");
        }
    }

    #[test]
    fn display_expected_dollar_with_line_break_shows_space() {
        assert_eq!(
            Text::of(ProtocolError::ExpectedDollar(b'\r')).as_bytes(),
            b"Protocol error: expected '$', got ' '"
        );
        assert_eq!(
            Text::of(ProtocolError::ExpectedDollar(b'\n')).as_bytes(),
            b"Protocol error: expected '$', got ' '"
        );
    }

    #[test]
    fn display_expected_dollar_with_high_byte_shows_escape() {
        assert_eq!(
            Text::of(ProtocolError::ExpectedDollar(0xfe)).as_bytes(),
            b"Protocol error: expected '$', got '\\xfe'"
        );
    }

    #[test]
    fn display_write_full() {
        assert_eq!(Text::of(WriteFull).as_bytes(), b"reply buffer full");
    }
}
