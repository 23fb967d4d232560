//! Parsing one request from the front of a receive buffer.
//!
//! This follows `processMultibulkBuffer` and `processInlineBuffer` in Redis 7's `networking.c`,
//! including what Redis lets through: the byte after a header line's `\r` and the two bytes after
//! a bulk argument are skipped unread (Redis never checks they are `\n` and `\r\n`).
//!
//! Redis decides "too big" by how much sits in its buffer when it looks, so whether a long line
//! is refused depends on how the bytes were split into reads. Here the decision depends on the
//! bytes alone: a line is accepted if its end (`\r` for header lines, `\n` for inline requests) is
//! among its first `max_inline_len + 1` bytes, which is exactly when Redis accepts it however the
//! bytes arrive, and refused once that many bytes are there without one.

use super::command::{Command, Parsed};
use super::inline::split_in_place;
use super::ProtocolError;
use crate::decimal::{decimal_len, parse_i64};

/// Bounds on one request, besides the argument count (the `MAX_ARGS` of [`parse`]).
///
/// | field | Redis 7 equivalent | Redis default |
/// | --- | --- | --- |
/// | [`max_bulk_len`](Self::max_bulk_len) | `proto-max-bulk-len` | 512 MiB |
/// | [`max_inline_len`](Self::max_inline_len) | `PROTO_INLINE_MAX_SIZE` | 64 KiB |
///
/// A whole request must fit in the receive buffer, since arguments are slices of it. Size the
/// buffer to at least [`max_request_len`](Self::max_request_len): otherwise a request the limits
/// allow can fill the buffer while still [`Parsed::Incomplete`], and the caller has to give up on
/// the connection itself.
///
/// # Examples
///
/// ```
/// use net_shell::resp::Limits;
///
/// // Values up to 1 KiB, lines up to 256 bytes, commands of up to 4 arguments.
/// const LIMITS: Limits = Limits::new(1024, 256);
/// let rx = [0u8; LIMITS.max_request_len(4)];
/// assert_eq!(rx.len(), 4136);
/// ```
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// The longest bulk argument (`$<len>`) accepted; longer is
    /// [`ProtocolError::InvalidBulkLength`].
    pub max_bulk_len: usize,
    /// The longest line: at most this many bytes may come before the byte that ends it, `\n`
    /// for an inline request (a `\r` before it counts), `\r` for a `*<count>` or `$<len>` line.
    /// Past that, it is [`ProtocolError::TooBigInlineRequest`],
    /// [`ProtocolError::TooBigMbulkCountString`] or [`ProtocolError::TooBigBulkCountString`].
    /// Keep it at 21 or more, so that any `$<len>` line fits.
    pub max_inline_len: usize,
    /// The client has yet to authenticate to a server with a password: as Redis does, a
    /// multibulk request may then have at most [`UNAUTHENTICATED_MAX_ARGS`] arguments and
    /// [`UNAUTHENTICATED_MAX_BULK_LEN`] bytes per argument, so that a client without the
    /// password cannot make the server buffer large requests.
    pub unauthenticated: bool,
}

/// Most arguments of a multibulk request from a client that has not authenticated (Redis 7).
pub const UNAUTHENTICATED_MAX_ARGS: usize = 10;
/// Longest bulk argument from a client that has not authenticated (Redis 7).
pub const UNAUTHENTICATED_MAX_BULK_LEN: usize = 16384;

impl Limits {
    /// Limits with these values.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Limits;
    ///
    /// const LIMITS: Limits = Limits::new(4096, 1024);
    /// assert_eq!(LIMITS.max_bulk_len, 4096);
    /// ```
    pub const fn new(max_bulk_len: usize, max_inline_len: usize) -> Self {
        Self {
            max_bulk_len,
            max_inline_len,
            unauthenticated: false,
        }
    }

    /// These limits for a client that has not authenticated yet (see
    /// [`unauthenticated`](Self::unauthenticated)).
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::{parse, Limits, ProtocolError};
    ///
    /// let limits = Limits::new(4096, 1024).unauthenticated();
    /// let mut rx = *b"*11\r\n";
    /// assert_eq!(
    ///     parse::<16>(&mut rx, &limits).unwrap_err(),
    ///     ProtocolError::UnauthenticatedMultibulkLength
    /// );
    /// ```
    pub const fn unauthenticated(mut self) -> Self {
        self.unauthenticated = true;
        self
    }

    /// The most bytes one request within these limits and `max_args` arguments can take: the
    /// longest of a longest inline line with its `\n`, a multibulk request of `max_args` longest
    /// bulks, and an empty multibulk request (`*0`, `*-1`, ...: its count is not bounded by
    /// `max_args`, only by the line limit and the 20 characters of an `i64`). Saturates at
    /// `usize::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use net_shell::resp::Limits;
    ///
    /// // "*2\r\n" + 2 × ("$10\r\n" + 10 bytes + "\r\n")
    /// assert_eq!(Limits::new(10, 8).max_request_len(2), 4 + 2 * 17);
    /// // An inline line of 100 bytes and its "\n"
    /// assert_eq!(Limits::new(10, 100).max_request_len(2), 101);
    /// ```
    pub const fn max_request_len(&self, max_args: usize) -> usize {
        let count_line = 3 + decimal_len(max_args as u64);
        let bulk = 5usize
            .saturating_add(decimal_len(self.max_bulk_len as u64))
            .saturating_add(self.max_bulk_len);
        let multibulk = count_line.saturating_add(bulk.saturating_mul(max_args));
        let inline = self.max_inline_len.saturating_add(1);
        // '*' and up to 20 characters of a count, within the line limit, then "\r\n".
        let empty_line = if self.max_inline_len < 21 {
            self.max_inline_len
        } else {
            21
        };
        let empty = empty_line + 2;
        let longest = if multibulk > inline {
            multibulk
        } else {
            inline
        };
        if longest > empty {
            longest
        } else {
            empty
        }
    }
}

/// Parses one request from the front of `input`, a connection's received and not yet consumed
/// bytes.
///
/// Returns [`Parsed::Incomplete`] when `input` holds only the start of a request: keep the bytes,
/// append what arrives next, and call again. Otherwise the request takes the first `consumed`
/// bytes; drop those (after using the command, which borrows them) and call again for the next
/// pipelined request. No state is kept between calls.
///
/// A request starting with `*` is multibulk; anything else is an inline line ended by `\n` or
/// `\r\n`. Inline arguments are decoded in place, which is why `input` is `&mut`: after a
/// [`Parsed::Command`] from an inline line, that line's bytes hold the decoded arguments, and a
/// multibulk request is left as it was. Bytes past `consumed` are never written.
///
/// # Errors
///
/// A [`ProtocolError`] when the front of `input` cannot be a request within `MAX_ARGS` and
/// `limits`; see its variants. The connection cannot go on after one: reply with it, then close.
/// The bytes of a refused inline line may have been partly rewritten.
///
/// Never panics. `MAX_ARGS` must be at least 1, checked at compile time.
///
/// # Examples
///
/// ```
/// use net_shell::resp::{parse, Limits, Parsed, ProtocolError};
///
/// let limits = Limits::new(1024, 256);
///
/// let mut rx = *b"SET k \"a\\tb\"\r\nGET k\r\n";
/// let Ok(Parsed::Command { command, consumed }) = parse::<4>(&mut rx, &limits) else {
///     panic!("a whole command");
/// };
/// assert_eq!(command.as_slice(), [&b"SET"[..], b"k", b"a\tb"]);
/// assert_eq!(consumed, 14);
///
/// let mut rx = *b"*2\r\n$3\r\nGET\r\n$1\r\n";
/// assert_eq!(parse::<4>(&mut rx, &limits), Ok(Parsed::Incomplete));
///
/// let mut rx = *b"*9\r\n";
/// assert_eq!(parse::<4>(&mut rx, &limits), Err(ProtocolError::InvalidMultibulkLength));
/// ```
pub fn parse<'a, const MAX_ARGS: usize>(
    input: &'a mut [u8],
    limits: &Limits,
) -> Result<Parsed<'a, MAX_ARGS>, ProtocolError> {
    parse_with(input, limits, false)
}

/// Like [`parse`], but a command may have any number of arguments (as Redis 7: a multibulk
/// count up to `INT_MAX`), those over `MAX_ARGS` collected in a `Vec` as they arrive (the
/// `alloc` feature).
///
/// # Examples
///
/// ```
/// use net_shell::resp::{parse_spilling, Limits, Parsed};
///
/// let mut rx = *b"*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n";
/// let Ok(Parsed::Command { command, .. }) = parse_spilling::<2>(&mut rx, &Limits::new(64, 64))
/// else {
///     panic!("a whole command");
/// };
/// assert_eq!(command.as_slice(), [&b"DEL"[..], b"a", b"b"]);
/// ```
#[cfg(feature = "alloc")]
pub fn parse_spilling<'a, const MAX_ARGS: usize>(
    input: &'a mut [u8],
    limits: &Limits,
) -> Result<Parsed<'a, MAX_ARGS>, ProtocolError> {
    parse_with(input, limits, true)
}

/// [`parse`], or with `spill`, [`parse_spilling`].
fn parse_with<'a, const MAX_ARGS: usize>(
    input: &'a mut [u8],
    limits: &Limits,
    spill: bool,
) -> Result<Parsed<'a, MAX_ARGS>, ProtocolError> {
    const { assert!(MAX_ARGS > 0, "a command needs room for at least its name") };
    match input.first() {
        None => Ok(Parsed::Incomplete),
        Some(b'*') => parse_multibulk(input, limits, spill && SPILLS),
        Some(_) => parse_inline(input, limits, spill && SPILLS),
    }
}

/// Where a header line ends.
enum LineEnd {
    /// Its `\r` is at `cr`, and the byte after that (taken as `\n`) has arrived.
    At {
        /// Index of the `\r`.
        cr: usize,
    },
    /// Not yet known.
    Incomplete,
    /// No `\r` in the first `max_inline_len + 1` bytes.
    TooLong,
}

/// Finds the end of the header line at the front of `bytes`.
fn header_line(bytes: &[u8], max_inline_len: usize) -> LineEnd {
    let window = bytes.len().min(max_inline_len.saturating_add(1));
    let cr = bytes
        .get(..window)
        .and_then(|w| w.iter().position(|&b| b == b'\r'));
    match cr {
        Some(cr) if cr + 1 < bytes.len() => LineEnd::At { cr },
        Some(_) => LineEnd::Incomplete,
        None if bytes.len() > max_inline_len => LineEnd::TooLong,
        None => LineEnd::Incomplete,
    }
}

/// `*<count>\r\n` then `count` times `$<len>\r\n<len bytes>\r\n`.
fn parse_multibulk<'a, const MAX_ARGS: usize>(
    input: &'a [u8],
    limits: &Limits,
    spill: bool,
) -> Result<Parsed<'a, MAX_ARGS>, ProtocolError> {
    let cr = match header_line(input, limits.max_inline_len) {
        LineEnd::At { cr } => cr,
        LineEnd::Incomplete => return Ok(Parsed::Incomplete),
        LineEnd::TooLong => return Err(ProtocolError::TooBigMbulkCountString),
    };
    let count = input
        .get(1..cr)
        .and_then(parse_i64)
        .ok_or(ProtocolError::InvalidMultibulkLength)?;
    let mut at = cr + 2;
    if count <= 0 {
        return Ok(Parsed::Empty { consumed: at });
    }
    if limits.unauthenticated && count > UNAUTHENTICATED_MAX_ARGS as i64 {
        return Err(ProtocolError::UnauthenticatedMultibulkLength);
    }
    let count = usize::try_from(count)
        .ok()
        .filter(|&count| count <= MAX_ARGS || (spill && count <= MAX_SPILLED_ARGS))
        .ok_or(ProtocolError::InvalidMultibulkLength)?;

    let mut args = Args::<'a, MAX_ARGS>::with_count(count);
    for _ in 0..count {
        let rest = input.get(at..).unwrap_or_default();
        let cr = match header_line(rest, limits.max_inline_len) {
            LineEnd::At { cr } => cr,
            LineEnd::Incomplete => return Ok(Parsed::Incomplete),
            LineEnd::TooLong => return Err(ProtocolError::TooBigBulkCountString),
        };
        match rest.first() {
            Some(b'$') => {}
            Some(&other) => return Err(ProtocolError::ExpectedDollar(other)),
            None => return Ok(Parsed::Incomplete),
        }
        let len = rest
            .get(1..cr)
            .and_then(parse_i64)
            .and_then(|len| usize::try_from(len).ok())
            .filter(|&len| len <= limits.max_bulk_len)
            .ok_or(ProtocolError::InvalidBulkLength)?;
        if limits.unauthenticated && len > UNAUTHENTICATED_MAX_BULK_LEN {
            return Err(ProtocolError::UnauthenticatedBulkLength);
        }
        let data = rest.get(cr + 2..).unwrap_or_default();
        // The bulk and its "\r\n", which Redis skips without looking.
        if data.len() < 2 || data.len() - 2 < len {
            return Ok(Parsed::Incomplete);
        }
        args.push(data.get(..len).unwrap_or_default());
        at += cr + 2 + len + 2;
    }
    Ok(Parsed::Command {
        command: args.into_command(),
        consumed: at,
    })
}

/// Whether commands can have more than `MAX_ARGS` arguments (with the `alloc` feature).
const SPILLS: bool = cfg!(feature = "alloc");

/// The most arguments of one command with the `alloc` feature: Redis 7 takes a count up to
/// `INT_MAX` (memory, and the query buffer limit, bound it first).
const MAX_SPILLED_ARGS: usize = i32::MAX as usize;

/// Arguments being collected: in an array, or (with the `alloc` feature, past `MAX_ARGS`) in a
/// `Vec` that grows as they arrive, so a count alone reserves nothing large.
struct Args<'a, const MAX_ARGS: usize> {
    array: [&'a [u8]; MAX_ARGS],
    len: usize,
    #[cfg(feature = "alloc")]
    spill: Option<alloc::vec::Vec<&'a [u8]>>,
}

impl<'a, const MAX_ARGS: usize> Args<'a, MAX_ARGS> {
    /// Room for `count` arguments (at most `MAX_ARGS` without the `alloc` feature).
    #[cfg_attr(not(feature = "alloc"), allow(unused_variables))]
    fn with_count(count: usize) -> Self {
        Self {
            array: [&[]; MAX_ARGS],
            len: 0,
            #[cfg(feature = "alloc")]
            spill: (count > MAX_ARGS).then(|| alloc::vec::Vec::with_capacity(count.min(1024))),
        }
    }

    fn push(&mut self, arg: &'a [u8]) {
        #[cfg(feature = "alloc")]
        if let Some(spill) = &mut self.spill {
            spill.push(arg);
            return;
        }
        if let Some(slot) = self.array.get_mut(self.len) {
            *slot = arg;
            self.len += 1;
        }
    }

    fn into_command(self) -> Command<'a, MAX_ARGS> {
        #[cfg(feature = "alloc")]
        if let Some(spill) = self.spill {
            return Command::spilled(spill);
        }
        Command::from_parts(self.array, self.len)
    }
}

/// A line ended by `\n` or `\r\n`, split like Redis's `sdssplitargs`.
#[cfg_attr(not(feature = "alloc"), allow(unused_variables))]
fn parse_inline<'a, const MAX_ARGS: usize>(
    input: &'a mut [u8],
    limits: &Limits,
    spill: bool,
) -> Result<Parsed<'a, MAX_ARGS>, ProtocolError> {
    let window = input.len().min(limits.max_inline_len.saturating_add(1));
    let newline = input
        .get(..window)
        .and_then(|w| w.iter().position(|&b| b == b'\n'));
    let Some(newline) = newline else {
        return if input.len() > limits.max_inline_len {
            Err(ProtocolError::TooBigInlineRequest)
        } else {
            Ok(Parsed::Incomplete)
        };
    };
    let consumed = newline + 1;
    let end = match newline.checked_sub(1) {
        Some(before) if input.get(before) == Some(&b'\r') => before,
        _ => newline,
    };
    let (line, _) = input.split_at_mut(end);

    // At most one argument per run of non-blanks: more than `MAX_ARGS` of those may need room
    // for spans beyond the array (with the `alloc` feature).
    let mut array = [(0, 0); MAX_ARGS];
    #[cfg(feature = "alloc")]
    let mut spilled = alloc::vec::Vec::new();
    #[cfg(feature = "alloc")]
    let spans: &mut [(usize, usize)] = if spill && runs_of_non_blanks(line) > MAX_ARGS {
        spilled.resize(runs_of_non_blanks(line), (0, 0));
        &mut spilled
    } else {
        &mut array
    };
    #[cfg(not(feature = "alloc"))]
    let spans: &mut [(usize, usize)] = &mut array;
    let count = split_in_place(line, spans)?;
    if count == 0 {
        return Ok(Parsed::Empty { consumed });
    }
    let line: &'a [u8] = line;
    let mut args = Args::<'a, MAX_ARGS>::with_count(count);
    for &(start, len) in spans.iter().take(count) {
        args.push(line.get(start..start + len).unwrap_or_default());
    }
    Ok(Parsed::Command {
        command: args.into_command(),
        consumed,
    })
}

/// How many runs of non-blank bytes `line` has: at least as many as its arguments.
#[cfg(feature = "alloc")]
fn runs_of_non_blanks(line: &[u8]) -> usize {
    let mut runs = 0;
    let mut in_run = false;
    for &byte in line {
        let blank = super::inline::is_blank(byte);
        if !blank && !in_run {
            runs += 1;
        }
        in_run = !blank;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits::new(64, 32);

    /// Parses a copy of `input` (so `input` itself can stay a `&[u8]`), into `scratch`.
    fn parse_copy<'s, const N: usize>(
        input: &[u8],
        scratch: &'s mut [u8; 512],
        limits: &Limits,
    ) -> Result<Parsed<'s, N>, ProtocolError> {
        let buf = &mut scratch[..input.len()];
        buf.copy_from_slice(input);
        parse::<N>(buf, limits)
    }

    /// Parses `input` and expects a command with these arguments that takes all of `input`.
    fn assert_command(input: &[u8], expected: &[&[u8]]) {
        let mut scratch = [0; 512];
        match parse_copy::<8>(input, &mut scratch, &LIMITS) {
            Ok(Parsed::Command { command, consumed }) => {
                assert_eq!(command.as_slice(), expected, "{}", input.escape_ascii());
                assert_eq!(consumed, input.len(), "{}", input.escape_ascii());
            }
            other => panic!("{}: {other:?}", input.escape_ascii()),
        }
    }

    fn assert_error(input: &[u8], expected: ProtocolError) {
        let mut scratch = [0; 512];
        assert_eq!(
            parse_copy::<8>(input, &mut scratch, &LIMITS),
            Err(expected),
            "{}",
            input.escape_ascii()
        );
    }

    fn assert_incomplete(input: &[u8]) {
        let mut scratch = [0; 512];
        assert_eq!(
            parse_copy::<8>(input, &mut scratch, &LIMITS),
            Ok(Parsed::Incomplete),
            "{}",
            input.escape_ascii()
        );
    }

    // --- multibulk ---

    #[test]
    fn multibulk_whole_command_gives_args_and_consumed() {
        assert_command(b"*1\r\n$4\r\nPING\r\n", &[b"PING"]);
        assert_command(
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n",
            &[b"SET", b"k", b"hello"],
        );
    }

    #[test]
    fn multibulk_bulk_is_binary_safe() {
        assert_command(
            b"*2\r\n$4\r\nECHO\r\n$6\r\n\r\n\x00*$\xff\r\n",
            &[b"ECHO", b"\r\n\x00*$\xff"],
        );
    }

    #[test]
    fn multibulk_empty_bulk_is_empty_arg() {
        assert_command(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", &[b"ECHO", b""]);
    }

    #[test]
    fn multibulk_zero_or_negative_count_is_empty() {
        let mut scratch = [0; 512];
        for input in [&b"*0\r\n"[..], b"*-1\r\n", b"*-5\r\n"] {
            assert_eq!(
                parse_copy::<8>(input, &mut scratch, &LIMITS),
                Ok(Parsed::Empty {
                    consumed: input.len()
                })
            );
        }
    }

    #[test]
    fn multibulk_count_at_max_args_parses() {
        let mut scratch = [0; 512];
        let input = b"*2\r\n$1\r\na\r\n$1\r\nb\r\n";
        let parsed = parse_copy::<2>(input, &mut scratch, &LIMITS).unwrap();
        assert_eq!(parsed.consumed(), input.len());
    }

    #[test]
    fn multibulk_count_over_max_args_is_invalid_multibulk_length() {
        let mut scratch = [0; 512];
        assert_eq!(
            parse_copy::<2>(b"*3\r\n", &mut scratch, &LIMITS),
            Err(ProtocolError::InvalidMultibulkLength)
        );
        assert_error(
            b"*9223372036854775807\r\n",
            ProtocolError::InvalidMultibulkLength,
        );
    }

    #[test]
    fn multibulk_count_not_a_number_is_invalid_multibulk_length() {
        for input in [
            &b"*\r\n"[..],
            b"*x\r\n",
            b"*01\r\n",
            b"*+1\r\n",
            b"*1 \r\n",
            b"*-0\r\n",
            b"*-\r\n",
            b"*1\n\r\n",
            b"*99999999999999999999\r\n",
        ] {
            assert_error(input, ProtocolError::InvalidMultibulkLength);
        }
    }

    #[test]
    fn bulk_len_not_a_number_is_invalid_bulk_length() {
        for input in [
            &b"*1\r\n$\r\n"[..],
            b"*1\r\n$x\r\n",
            b"*1\r\n$01\r\n",
            b"*1\r\n$+1\r\n",
            b"*1\r\n$-0\r\n",
            b"*1\r\n$4 \r\n",
        ] {
            assert_error(input, ProtocolError::InvalidBulkLength);
        }
    }

    #[test]
    fn bulk_len_negative_is_invalid_bulk_length() {
        assert_error(b"*1\r\n$-1\r\n", ProtocolError::InvalidBulkLength);
        assert_error(b"*1\r\n$-5\r\n", ProtocolError::InvalidBulkLength);
    }

    #[test]
    fn bulk_len_over_max_bulk_len_is_invalid_bulk_length() {
        assert_incomplete(b"*1\r\n$64\r\n");
        assert_error(b"*1\r\n$65\r\n", ProtocolError::InvalidBulkLength);
        assert_error(
            b"*2\r\n$1\r\na\r\n$65\r\n",
            ProtocolError::InvalidBulkLength,
        );
    }

    #[test]
    fn bulk_header_without_dollar_is_expected_dollar_with_the_byte() {
        assert_error(b"*1\r\n:4\r\n", ProtocolError::ExpectedDollar(b':'));
        assert_error(b"*1\r\nPING\r\n", ProtocolError::ExpectedDollar(b'P'));
        assert_error(b"*1\r\n\r\n", ProtocolError::ExpectedDollar(b'\r'));
        assert_error(
            b"*2\r\n$1\r\na\r\n\xff\r\n",
            ProtocolError::ExpectedDollar(0xff),
        );
    }

    #[test]
    fn bulk_header_without_dollar_waits_for_its_line_like_redis() {
        assert_incomplete(b"*1\r\nPING");
        assert_incomplete(b"*1\r\nPING\r");
    }

    #[test]
    fn count_line_without_cr_past_max_inline_len_is_too_big_mbulk_count_string() {
        let mut input = [b'1'; 40];
        input[0] = b'*';
        // 32 bytes with no '\r' may still end; 33 cannot.
        assert_incomplete(&input[..32]);
        assert_error(&input[..33], ProtocolError::TooBigMbulkCountString);
        assert_error(&input, ProtocolError::TooBigMbulkCountString);
    }

    #[test]
    fn count_line_with_cr_at_max_inline_len_is_read() {
        // 32 bytes then '\r' at index 32: the line is accepted and read as a number.
        let mut input = [b'0'; 34];
        input[0] = b'*';
        input[1] = b'1';
        input[32] = b'\r';
        input[33] = b'\n';
        assert_error(&input, ProtocolError::InvalidMultibulkLength);
        // One byte longer and the '\r' is too late.
        let mut longer = [b'0'; 35];
        longer[0] = b'*';
        longer[1] = b'1';
        longer[33] = b'\r';
        longer[34] = b'\n';
        assert_error(&longer, ProtocolError::TooBigMbulkCountString);
    }

    #[test]
    fn bulk_line_without_cr_past_max_inline_len_is_too_big_bulk_count_string() {
        let mut input = [b'1'; 50];
        input[..5].copy_from_slice(b"*1\r\n$");
        // The bulk line starts at index 4: 32 bytes of it may still end, 33 cannot.
        assert_incomplete(&input[..4 + 32]);
        assert_error(&input[..4 + 33], ProtocolError::TooBigBulkCountString);
    }

    #[test]
    fn header_cr_followed_by_any_byte_is_a_line_end_like_redis() {
        assert_command(b"*1\rx$4\ryPING\r\n", &[b"PING"]);
    }

    #[test]
    fn bulk_trailing_bytes_are_not_checked_like_redis() {
        assert_command(b"*1\r\n$4\r\nPINGxy", &[b"PING"]);
    }

    #[test]
    fn multibulk_split_at_every_byte_is_incomplete_until_the_last() {
        let input = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\nhello\r\nwor\r\n";
        for cut in 0..input.len() {
            assert_incomplete(&input[..cut]);
        }
        assert_command(input, &[b"SET", b"key", b"hello\r\nwor"]);
    }

    #[test]
    fn multibulk_count_over_max_args_refused_before_args_arrive() {
        let mut scratch = [0; 512];
        assert_eq!(
            parse_copy::<1>(b"*2\r\n", &mut scratch, &LIMITS),
            Err(ProtocolError::InvalidMultibulkLength)
        );
    }

    // --- inline ---

    #[test]
    fn inline_with_crlf_or_lf_parses() {
        assert_command(b"PING\r\n", &[b"PING"]);
        assert_command(b"PING\n", &[b"PING"]);
        assert_command(b"SET a b\n", &[b"SET", b"a", b"b"]);
    }

    #[test]
    fn inline_with_quotes_and_escapes_decodes_in_place() {
        assert_command(
            b"SET k \"hello world\"\r\n",
            &[b"SET", b"k", b"hello world"],
        );
        assert_command(b"SET 'single q' v\r\n", &[b"SET", b"single q", b"v"]);
        assert_command(
            b"SET k \"a\\nb\\tc\\x41\\x00\"\r\n",
            &[b"SET", b"k", b"a\nb\tcA\x00"],
        );
    }

    #[test]
    fn inline_cr_not_before_lf_is_a_blank() {
        assert_command(b"GET\rk\n", &[b"GET", b"k"]);
        assert_command(b"GET k\r\r\n", &[b"GET", b"k"]);
    }

    #[test]
    fn inline_blank_line_is_empty() {
        let mut scratch = [0; 512];
        for input in [&b"\n"[..], b"\r\n", b"   \t\r\n", b" \r \n"] {
            assert_eq!(
                parse_copy::<8>(input, &mut scratch, &LIMITS),
                Ok(Parsed::Empty {
                    consumed: input.len()
                }),
                "{}",
                input.escape_ascii()
            );
        }
    }

    #[test]
    fn inline_unbalanced_quotes_is_unbalanced_quotes() {
        assert_error(b"SET k \"abc\r\n", ProtocolError::UnbalancedQuotes);
        assert_error(b"SET k 'abc\n", ProtocolError::UnbalancedQuotes);
        assert_error(b"ECHO \"a\"b\r\n", ProtocolError::UnbalancedQuotes);
    }

    #[test]
    fn inline_unbalanced_quotes_waits_for_the_line_end() {
        assert_incomplete(b"SET k \"abc");
    }

    #[test]
    fn inline_split_at_every_byte_is_incomplete_until_the_last() {
        let input = b"SET \"k y\" 'v'\r\n";
        for cut in 0..input.len() {
            assert_incomplete(&input[..cut]);
        }
        assert_command(input, &[b"SET", b"k y", b"v"]);
    }

    #[test]
    fn inline_without_newline_past_max_inline_len_is_too_big_inline_request() {
        let input = [b'a'; 40];
        assert_incomplete(&input[..32]);
        assert_error(&input[..33], ProtocolError::TooBigInlineRequest);
    }

    #[test]
    fn inline_newline_at_max_inline_len_is_read() {
        let mut input = [b'a'; 33];
        input[32] = b'\n';
        let mut scratch = [0; 512];
        let parsed = parse_copy::<8>(&input, &mut scratch, &LIMITS).unwrap();
        assert_eq!(parsed.consumed(), 33);
        let mut longer = [b'a'; 34];
        longer[33] = b'\n';
        assert_error(&longer, ProtocolError::TooBigInlineRequest);
    }

    #[cfg(feature = "alloc")]
    fn spill_copy<'s>(
        input: &[u8],
        scratch: &'s mut [u8; 512],
        limits: &Limits,
    ) -> Result<Parsed<'s, 2>, ProtocolError> {
        let buf = &mut scratch[..input.len()];
        buf.copy_from_slice(input);
        parse_spilling::<2>(buf, limits)
    }

    /// [`parse_spilling`]: a command may have more arguments than `MAX_ARGS`: those spill into a
    /// `Vec`, multibulk or inline, and are the same arguments.
    #[test]
    #[cfg(feature = "alloc")]
    fn commands_over_max_args_spill_into_a_vec() {
        let mut scratch = [0; 512];
        let Ok(Parsed::Command { command, consumed }) = spill_copy(
            b"*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n",
            &mut scratch,
            &LIMITS,
        ) else {
            panic!("three arguments over an array of two");
        };
        assert_eq!(command.as_slice(), [&b"DEL"[..], b"a", b"b"]);
        assert_eq!((command.len(), consumed), (3, 27));
        let Ok(Parsed::Command { command, .. }) =
            spill_copy(b"a 'b c' d\r\n", &mut scratch, &LIMITS)
        else {
            panic!("three inline arguments over an array of two");
        };
        assert_eq!(command.as_slice(), [&b"a"[..], b"b c", b"d"]);
        // A large count waits for its arguments (Redis takes up to INT_MAX), and a count past
        // that is refused as by Redis.
        assert_eq!(
            spill_copy(b"*2147483647\r\n", &mut scratch, &LIMITS),
            Ok(Parsed::Incomplete)
        );
        assert_eq!(
            spill_copy(b"*2147483648\r\n", &mut scratch, &LIMITS),
            Err(ProtocolError::InvalidMultibulkLength)
        );
    }

    #[test]
    fn inline_over_max_args_is_too_big_inline_request() {
        let mut scratch = [0; 512];
        assert_eq!(
            parse_copy::<2>(b"a b c\r\n", &mut scratch, &LIMITS),
            Err(ProtocolError::TooBigInlineRequest)
        );
        assert!(parse_copy::<3>(b"a b c\r\n", &mut scratch, &LIMITS).is_ok());
    }

    #[test]
    fn inline_leaves_bytes_after_the_line_alone() {
        let mut rx = *b"ECHO \"\\x41\\x42\"\r\n\"\\x43\"";
        let parsed = parse::<4>(&mut rx, &LIMITS).unwrap();
        assert_eq!(parsed.consumed(), 17);
        assert_eq!(&rx[17..], b"\"\\x43\"");
    }

    #[test]
    fn multibulk_input_is_not_written() {
        let original = *b"*2\r\n$4\r\nECHO\r\n$4\r\n\"\\n\"\r\n";
        let mut rx = original;
        parse::<4>(&mut rx, &LIMITS).unwrap();
        assert_eq!(rx, original);
    }

    // --- pipelining ---

    #[test]
    fn pipelined_commands_parse_one_per_call() {
        let mut rx = *b"*1\r\n$4\r\nPING\r\nECHO a\r\n\r\n*0\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nGET";
        // `None` for a request with no arguments.
        let expected: [Option<&[&[u8]]>; 5] = [
            Some(&[b"PING"]),
            Some(&[b"ECHO", b"a"]),
            None,
            None,
            Some(&[b"GET", b"k"]),
        ];
        let mut at = 0;
        for want in expected {
            match (parse::<4>(&mut rx[at..], &LIMITS), want) {
                (Ok(Parsed::Command { command, consumed }), Some(args)) => {
                    assert_eq!(command.as_slice(), args);
                    at += consumed;
                }
                (Ok(Parsed::Empty { consumed }), None) => at += consumed,
                (other, _) => panic!("at {at}: {other:?}, expected {want:?}"),
            }
        }
        assert_eq!(parse::<4>(&mut rx[at..], &LIMITS), Ok(Parsed::Incomplete));
        assert_eq!(&rx[at..], b"GET");
    }

    // --- robustness ---

    /// xorshift64*: deterministic, seeded, no dependencies.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// A byte, often one that means something to the parser.
        fn byte(&mut self) -> u8 {
            const SPECIAL: &[u8] = b"*$\r\n\"' \t\\x0123456789-+aF\x00\xff\x0b";
            if self.below(4) == 0 {
                self.next() as u8
            } else {
                SPECIAL[self.below(SPECIAL.len())]
            }
        }
    }

    /// A buffer of bytes with its length, as a test's owned input.
    struct Bytes {
        buf: [u8; 512],
        len: usize,
    }

    impl Bytes {
        fn new() -> Self {
            Self {
                buf: [0; 512],
                len: 0,
            }
        }

        fn push(&mut self, bytes: &[u8]) {
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        }

        fn push_decimal(&mut self, n: usize) {
            self.push(crate::decimal::Decimal::new(n as u64).as_bytes());
        }

        fn as_slice(&self) -> &[u8] {
            &self.buf[..self.len]
        }
    }

    /// Random arguments: (storage, lengths), up to 4 args of up to 12 bytes.
    fn random_args(rng: &mut Rng) -> ([[u8; 12]; 4], [usize; 4], usize) {
        let mut storage = [[0u8; 12]; 4];
        let mut lens = [0usize; 4];
        let count = 1 + rng.below(4);
        for i in 0..count {
            lens[i] = rng.below(13);
            for b in &mut storage[i][..lens[i]] {
                *b = rng.byte();
            }
        }
        (storage, lens, count)
    }

    fn encode_multibulk(args: &[&[u8]]) -> Bytes {
        let mut out = Bytes::new();
        out.push(b"*");
        out.push_decimal(args.len());
        out.push(b"\r\n");
        for arg in args {
            out.push(b"$");
            out.push_decimal(arg.len());
            out.push(b"\r\n");
            out.push(arg);
            out.push(b"\r\n");
        }
        out
    }

    /// Every argument in double quotes, every byte as `\xHH`, so any bytes survive.
    fn encode_inline(args: &[&[u8]]) -> Bytes {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = Bytes::new();
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                out.push(b" ");
            }
            out.push(b"\"");
            for &b in *arg {
                out.push(&[
                    b'\\',
                    b'x',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]);
            }
            out.push(b"\"");
        }
        out.push(b"\r\n");
        out
    }

    #[test]
    fn random_commands_round_trip_and_every_prefix_is_incomplete() {
        let limits = Limits::new(64, 256);
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for round in 0..2000 {
            let (storage, lens, count) = random_args(&mut rng);
            let mut args = [&b""[..]; 4];
            for i in 0..count {
                args[i] = &storage[i][..lens[i]];
            }
            let args = &args[..count];
            let encoded = if round % 2 == 0 {
                encode_multibulk(args)
            } else {
                encode_inline(args)
            };
            let input = encoded.as_slice();
            let mut scratch = [0; 512];
            for cut in 0..input.len() {
                assert_eq!(
                    parse_copy::<4>(&input[..cut], &mut scratch, &limits),
                    Ok(Parsed::Incomplete),
                    "{}",
                    input[..cut].escape_ascii()
                );
            }
            match parse_copy::<4>(input, &mut scratch, &limits) {
                Ok(Parsed::Command { command, consumed }) => {
                    assert_eq!(command.as_slice(), args, "{}", input.escape_ascii());
                    assert_eq!(consumed, input.len());
                }
                other => panic!("{}: {other:?}", input.escape_ascii()),
            }
        }
    }

    /// Parses every prefix of `input`; once a prefix gives an answer, every longer one (and
    /// `input`) gives the same: the answer never depends on how the bytes were split.
    fn assert_split_invariant(input: &[u8], limits: &Limits) {
        let mut scratch_full = [0; 512];
        let full = parse_copy::<4>(input, &mut scratch_full, limits);
        for cut in 0..=input.len() {
            let mut scratch = [0; 512];
            let partial = parse_copy::<4>(&input[..cut], &mut scratch, limits);
            if partial != Ok(Parsed::Incomplete) {
                assert_eq!(partial, full, "{} cut at {cut}", input.escape_ascii());
            }
        }
    }

    #[test]
    fn random_bytes_never_panic_and_answers_do_not_depend_on_splits() {
        let limits = Limits::new(16, 24);
        let mut rng = Rng(0x0dd_ba11_cafe_f00d);
        for _ in 0..3000 {
            let mut input = [0u8; 64];
            let len = rng.below(input.len() + 1);
            for b in &mut input[..len] {
                *b = rng.byte();
            }
            assert_split_invariant(&input[..len], &limits);
        }
    }

    #[test]
    fn mutated_commands_never_panic_and_answers_do_not_depend_on_splits() {
        let limits = Limits::new(16, 24);
        let mut rng = Rng(0xfeed_5eed_0bad_c0de);
        for round in 0..3000 {
            let (storage, lens, count) = random_args(&mut rng);
            let mut args = [&b""[..]; 4];
            for i in 0..count {
                args[i] = &storage[i][..lens[i]];
            }
            let encoded = if round % 2 == 0 {
                encode_multibulk(&args[..count])
            } else {
                encode_inline(&args[..count])
            };
            let mut input = [0u8; 300];
            let mut len = encoded.len.min(input.len());
            input[..len].copy_from_slice(&encoded.as_slice()[..len]);
            for _ in 0..1 + rng.below(3) {
                if len == 0 {
                    break;
                }
                let at = rng.below(len);
                match rng.below(4) {
                    0 => input[at] = rng.byte(),
                    1 => input[at] ^= 1 << rng.below(8),
                    2 => {
                        input.copy_within(at + 1..len, at);
                        len -= 1;
                    }
                    _ if len < input.len() => {
                        input.copy_within(at..len, at + 1);
                        input[at] = rng.byte();
                        len += 1;
                    }
                    _ => {}
                }
            }
            assert_split_invariant(&input[..len], &limits);
        }
    }

    #[test]
    fn tiny_and_huge_limits_never_panic() {
        let mut rng = Rng(42);
        for limits in [
            Limits::new(0, 0),
            Limits::new(0, 1),
            Limits::new(usize::MAX, usize::MAX),
            Limits::new(usize::MAX, 3),
        ] {
            for _ in 0..500 {
                let mut input = [0u8; 48];
                let len = rng.below(input.len() + 1);
                for b in &mut input[..len] {
                    *b = rng.byte();
                }
                assert_split_invariant(&input[..len], &limits);
            }
            assert_split_invariant(b"*1\r\n$18446744073709551615\r\nab", &limits);
        }
    }

    #[test]
    fn max_request_len_fits_a_longest_request() {
        let limits = Limits::new(10, 8);
        let arg = [b'v'; 10];
        let args = [&arg[..]; 3];
        let encoded = encode_multibulk(&args);
        assert_eq!(limits.max_request_len(3), encoded.len);
        assert_eq!(Limits::new(usize::MAX, 8).max_request_len(3), usize::MAX);
    }

    /// Found by fuzz/resp_parse: an empty multibulk's count is not bounded by `max_args`, so its
    /// header can be longer than a full request of `max_args` arguments.
    #[test]
    fn max_request_len_fits_an_empty_multibulk_with_a_long_count() {
        let limits = Limits::new(0, 9);
        let request = b"*-1234567\r\n";
        let mut input = *request;
        assert!(matches!(
            parse::<1>(&mut input, &limits),
            Ok(Parsed::Empty { consumed: 11 })
        ));
        assert!(limits.max_request_len(1) >= request.len());

        let limits = Limits::new(11, 21);
        let request = b"*-9223372036854775808\r\n";
        let mut input = *request;
        assert!(matches!(
            parse::<1>(&mut input, &limits),
            Ok(Parsed::Empty { consumed: 23 })
        ));
        assert!(limits.max_request_len(1) >= request.len());
    }
}
