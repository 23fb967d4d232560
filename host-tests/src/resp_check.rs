//! The RESP request parser's properties, as one check over input bytes, shared by the
//! `resp_parse` fuzz target, the seeded property test `tests/resp_model.rs` and the corpus replay
//! test.
//!
//! An input is [`HEADER`] bytes, `[max_args selector, max_bulk_len selector, max_inline_len
//! selector, split (2 bytes, little-endian), quoting style]`, then the request bytes. `MAX_ARGS`
//! is 1, 3, 8 or 64; each limit is a byte as it is up to 239, then a power of two up to 2^19,
//! then `u32::MAX`, `usize::MAX / 2`, `usize::MAX - 1` and `usize::MAX` ([`limit`]). Checked:
//!
//! - `parse` never panics, and every `consumed` is in `1..=input.len()` and within
//!   `Limits::max_request_len(MAX_ARGS)`, empty multibulks included; arguments are slices of
//!   the consumed bytes; bytes past the request are never written, and a multibulk request is not
//!   written at all; an inline request ends at its first `\n`;
//! - the answer does not depend on how the bytes were split: a prefix parses as `Incomplete` or
//!   as the whole input does; the request's own bytes (the first `consumed`) parse the same, and
//!   one byte fewer is `Incomplete`; a pipeline fed in two chunks, as a connection receives it,
//!   gives the same commands and error as the whole;
//! - each parsed command (up to 4 per input) re-encoded as multibulk parses to the same
//!   arguments, and under the input's limits gives exactly the error the limits call for (or
//!   the command); the same with limits set just at, and one below, what the encoding needs.
//!   Re-encoded inline (bare, `'..'`, `".."` or `"\xHH"` per argument, as the style byte picks)
//!   it parses back to the same arguments too, and is `TooBigInlineRequest` one byte over
//!   `max_inline_len`;
//! - every protocol error has `Protocol error: ...` text and a one-line `-ERR ...\r\n` reply.

use std::collections::BTreeSet;

use net_shell::resp::{parse, parse_spilling, Limits, Parsed, ProtocolError, ReplyWriter};

/// Checks one input: [`HEADER`] bytes, then the request. Inputs shorter than the header are
/// skipped. Returns what the bytes parsed to.
///
/// # Panics
///
/// When the parser breaks a property.
pub fn check_input(data: &[u8]) -> Seen {
    let Some((header, bytes)) = data.split_first_chunk::<HEADER>() else {
        return Seen::default();
    };
    let limits = Limits::new(limit(header[1]), limit(header[2]));
    let split = usize::from(u16::from_le_bytes([header[3], header[4]]));
    let style = header[5];
    match header[0] % 4 {
        0 => check::<1>(bytes, &limits, split, style),
        1 => check::<3>(bytes, &limits, split, style),
        2 => check::<8>(bytes, &limits, split, style),
        _ => check::<64>(bytes, &limits, split, style),
    }
}

/// Header bytes before the request.
pub const HEADER: usize = 6;

/// Commands per input whose round trips are checked (each costs a few parses).
const ROUND_TRIPS: usize = 4;

/// What one parse gave, owned, so that results from different buffers compare.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Incomplete,
    Empty { consumed: usize },
    Command { args: Vec<Vec<u8>>, consumed: usize },
    Error(ProtocolError),
}

impl Outcome {
    fn consumed(&self) -> Option<usize> {
        match self {
            Self::Empty { consumed } | Self::Command { consumed, .. } => Some(*consumed),
            Self::Incomplete | Self::Error(_) => None,
        }
    }
}

/// A limit from one header byte: small values as they are, then powers of two, then the extremes.
pub fn limit(selector: u8) -> usize {
    match selector {
        0..=0xef => usize::from(selector),
        0xf0..=0xfb => 1 << (selector - 0xf0 + 8),
        0xfc => u32::MAX as usize,
        0xfd => usize::MAX / 2,
        0xfe => usize::MAX - 1,
        0xff => usize::MAX,
    }
}

/// Parses `buf` in place and checks what holds for any single parse.
fn parse_checked<const MAX_ARGS: usize>(buf: &mut [u8], limits: &Limits) -> Outcome {
    let original = buf.to_vec();
    let multibulk = original.first() == Some(&b'*');
    let base = buf.as_ptr() as usize;
    let outcome = match parse::<MAX_ARGS>(buf, limits) {
        Ok(Parsed::Incomplete) => Outcome::Incomplete,
        Ok(Parsed::Empty { consumed }) => Outcome::Empty { consumed },
        Ok(Parsed::Command { command, consumed }) => {
            assert!(
                (1..=MAX_ARGS).contains(&command.len()),
                "{} arguments with MAX_ARGS {MAX_ARGS}",
                command.len()
            );
            assert_eq!(command.as_slice().len(), command.len());
            for arg in command.args() {
                if !arg.is_empty() {
                    let at = arg.as_ptr() as usize;
                    assert!(
                        at >= base && at + arg.len() <= base + consumed,
                        "an argument lies outside the {consumed} bytes consumed"
                    );
                }
            }
            Outcome::Command {
                args: command.args().map(<[u8]>::to_vec).collect(),
                consumed,
            }
        }
        Err(error) => Outcome::Error(error),
    };
    if let Some(consumed) = outcome.consumed() {
        assert!(
            (1..=original.len()).contains(&consumed),
            "consumed {consumed} of {} bytes",
            original.len()
        );
        // Every request, empty multibulks (`*-1234567`) included, fits `max_request_len`.
        let bound = limits.max_request_len(MAX_ARGS);
        assert!(
            consumed <= bound,
            "a request of {consumed} bytes, over max_request_len({MAX_ARGS}) = {bound} of {limits:?}"
        );
    }
    if multibulk {
        assert_eq!(buf, &original[..], "a multibulk parse wrote to its input");
    } else if let Some(newline) = original.iter().position(|&b| b == b'\n') {
        // Inline: only the line (up to its `\n`) may be rewritten, whatever the answer.
        assert_eq!(
            &buf[newline + 1..],
            &original[newline + 1..],
            "an inline parse wrote past its line"
        );
        if let Some(consumed) = outcome.consumed() {
            assert_eq!(
                consumed,
                newline + 1,
                "an inline request ends at its first \\n"
            );
        }
    } else {
        assert_eq!(
            buf,
            &original[..],
            "an inline parse without a line wrote to its input"
        );
    }
    if let Outcome::Error(error) = outcome {
        check_error_reply(error);
    }
    outcome
}

/// `parse_spilling` (any number of arguments, the server's parser with `alloc`) agrees with
/// `parse` wherever `parse` has room for the arguments: it differs only where `parse` refuses
/// a multibulk count or an inline request for having more than `MAX_ARGS` arguments, and then
/// the arguments it finds are those of the request re-parsed with room for all of them.
fn check_spilling<const MAX_ARGS: usize>(bytes: &[u8], limits: &Limits, bounded: &Outcome) {
    let mut buf = bytes.to_vec();
    let spilled = match parse_spilling::<MAX_ARGS>(&mut buf, limits) {
        Ok(Parsed::Incomplete) => Outcome::Incomplete,
        Ok(Parsed::Empty { consumed }) => Outcome::Empty { consumed },
        Ok(Parsed::Command { command, consumed }) => {
            assert_eq!(command.as_slice().len(), command.len());
            Outcome::Command {
                args: command.args().map(<[u8]>::to_vec).collect(),
                consumed,
            }
        }
        Err(error) => Outcome::Error(error),
    };
    match bounded {
        Outcome::Error(
            ProtocolError::InvalidMultibulkLength | ProtocolError::TooBigInlineRequest,
        ) => {
            if let Outcome::Command { args, consumed } = &spilled {
                assert!(
                    args.len() > MAX_ARGS || *consumed > 0,
                    "{}",
                    bytes.escape_ascii()
                );
                // The same request with room for every argument.
                assert_eq!(
                    parse_copy::<4096>(&bytes[..*consumed], limits),
                    spilled,
                    "{}",
                    bytes.escape_ascii()
                );
            }
        }
        _ => assert_eq!(
            &spilled,
            bounded,
            "{}: parse_spilling",
            bytes.escape_ascii()
        ),
    }
}

/// Parses a copy of `bytes`.
fn parse_copy<const MAX_ARGS: usize>(bytes: &[u8], limits: &Limits) -> Outcome {
    parse_checked::<MAX_ARGS>(&mut bytes.to_vec(), limits)
}

fn check_error_reply(error: ProtocolError) {
    let text = error.to_string();
    assert!(text.starts_with("Protocol error: "), "{text:?}");
    let mut tx = [0u8; 96];
    let mut replies = ReplyWriter::new(&mut tx);
    replies
        .protocol_error(error)
        .expect("a protocol error reply fits 96 bytes");
    let reply = replies.written();
    assert!(
        reply.starts_with(b"-ERR Protocol error: "),
        "{}",
        reply.escape_ascii()
    );
    let body = reply
        .strip_suffix(b"\r\n")
        .expect("a reply ends with \\r\\n");
    assert!(
        !body.iter().any(|&b| b == b'\r' || b == b'\n'),
        "a protocol error reply spans lines: {}",
        reply.escape_ascii()
    );
}

/// Parses a pipeline as a connection would: one request after another from the front, until
/// `Incomplete` or an error. With `split`, only the first `split` bytes are there at first; the
/// rest arrive once the parser asks for more.
fn parse_stream<const MAX_ARGS: usize>(
    bytes: &[u8],
    split: Option<usize>,
    limits: &Limits,
) -> Vec<Outcome> {
    let mut rx = match split {
        Some(split) => bytes[..split].to_vec(),
        None => bytes.to_vec(),
    };
    let mut pending = rx.len() < bytes.len();
    let mut at = 0;
    let mut outcomes = Vec::new();
    loop {
        let outcome = parse_checked::<MAX_ARGS>(&mut rx[at..], limits);
        match outcome {
            Outcome::Incomplete if pending => {
                rx.extend_from_slice(&bytes[rx.len()..]);
                pending = false;
            }
            Outcome::Incomplete | Outcome::Error(_) => {
                outcomes.push(outcome);
                return outcomes;
            }
            Outcome::Empty { consumed } | Outcome::Command { consumed, .. } => {
                at += consumed;
                outcomes.push(outcome);
            }
        }
    }
}

fn decimal_len(n: usize) -> usize {
    n.to_string().len()
}

/// `args` as a multibulk request ([`crate::sim::encode`]).
fn encode_multibulk(args: &[Vec<u8>]) -> Vec<u8> {
    crate::sim::encode(&args.iter().map(Vec::as_slice).collect::<Vec<_>>())
}

/// What parsing `encode_multibulk(args)` under `limits` must give (`args.len() <= MAX_ARGS`).
fn expected_multibulk(args: &[Vec<u8>], encoded_len: usize, limits: &Limits) -> Outcome {
    // A header line is accepted when its `\r` is among its first `max_inline_len + 1` bytes.
    if 1 + decimal_len(args.len()) > limits.max_inline_len {
        return Outcome::Error(ProtocolError::TooBigMbulkCountString);
    }
    for arg in args {
        if 1 + decimal_len(arg.len()) > limits.max_inline_len {
            return Outcome::Error(ProtocolError::TooBigBulkCountString);
        }
        if arg.len() > limits.max_bulk_len {
            return Outcome::Error(ProtocolError::InvalidBulkLength);
        }
    }
    Outcome::Command {
        args: args.to_vec(),
        consumed: encoded_len,
    }
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// One argument of an inline request, in the quoting `style` picks if the argument allows it.
fn encode_inline_arg(out: &mut Vec<u8>, arg: &[u8], style: u8, first: bool) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bare_ok = !arg.is_empty()
        && !is_blank(arg[0])
        && (!first || arg[0] != b'*')
        && !arg
            .iter()
            .any(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\''));
    let single_ok = !arg.contains(&b'\n') && arg.last() != Some(&b'\\');
    match style % 4 {
        3 if bare_ok => out.extend_from_slice(arg),
        2 if single_ok => {
            out.push(b'\'');
            for &b in arg {
                if b == b'\'' {
                    out.push(b'\\');
                }
                out.push(b);
            }
            out.push(b'\'');
        }
        1 => {
            out.push(b'"');
            for &b in arg {
                match b {
                    b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    other => out.push(other),
                }
            }
            out.push(b'"');
        }
        _ => {
            out.push(b'"');
            for &b in arg {
                out.extend_from_slice(&[
                    b'\\',
                    b'x',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]);
            }
            out.push(b'"');
        }
    }
}

fn encode_inline(args: &[Vec<u8>], style: u8) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        let style = style.rotate_left(2 * i as u32);
        encode_inline_arg(&mut out, arg, style, i == 0);
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A parsed command, re-encoded both ways, parses back to itself; limits decide exactly as
/// documented.
fn check_round_trips<const MAX_ARGS: usize>(args: &[Vec<u8>], limits: &Limits, style: u8) {
    let encoded = encode_multibulk(args);
    let longest = args.iter().map(Vec::len).max().unwrap_or(0);
    let line = 1 + decimal_len(args.len()).max(decimal_len(longest));
    let tight = Limits::new(longest, line);
    let mut variants = vec![*limits, tight, Limits::new(usize::MAX, usize::MAX)];
    if longest > 0 {
        variants.push(Limits::new(longest - 1, line));
    }
    variants.push(Limits::new(longest, line - 1));
    for limits in &variants {
        assert_eq!(
            parse_copy::<MAX_ARGS>(&encoded, limits),
            expected_multibulk(args, encoded.len(), limits),
            "multibulk re-encoding {} under {limits:?}",
            encoded.escape_ascii()
        );
    }

    let inline = encode_inline(args, style);
    let newline = inline.len() - 1;
    let whole = Outcome::Command {
        args: args.to_vec(),
        consumed: inline.len(),
    };
    assert_eq!(
        parse_copy::<MAX_ARGS>(&inline, &Limits::new(0, newline)),
        whole,
        "inline re-encoding {}",
        inline.escape_ascii()
    );
    assert_eq!(
        parse_copy::<MAX_ARGS>(&inline, &Limits::new(0, newline - 1)),
        Outcome::Error(ProtocolError::TooBigInlineRequest),
        "inline re-encoding {} one byte over the limit",
        inline.escape_ascii()
    );
}

/// Checks every property on one request (`bytes`) under `limits`, with `MAX_ARGS` arguments at
/// most; `split` chooses where the input is cut and `style` the inline quoting of re-encodings.
/// Returns what the bytes parsed to.
///
/// # Panics
///
/// When the parser breaks a property.
pub fn check<const MAX_ARGS: usize>(
    bytes: &[u8],
    limits: &Limits,
    split: usize,
    style: u8,
) -> Seen {
    let whole = parse_copy::<MAX_ARGS>(bytes, limits);

    let cut = split % (bytes.len() + 1);
    let prefix = parse_copy::<MAX_ARGS>(&bytes[..cut], limits);
    if prefix != Outcome::Incomplete {
        assert_eq!(prefix, whole, "{} cut at {cut}", bytes.escape_ascii());
    }

    if let Some(consumed) = whole.consumed() {
        assert_eq!(
            parse_copy::<MAX_ARGS>(&bytes[..consumed], limits),
            whole,
            "{}: the request alone",
            bytes.escape_ascii()
        );
        assert_eq!(
            parse_copy::<MAX_ARGS>(&bytes[..consumed - 1], limits),
            Outcome::Incomplete,
            "{}: the request less its last byte",
            bytes.escape_ascii()
        );
    }

    check_spilling::<MAX_ARGS>(bytes, limits, &whole);

    let stream = parse_stream::<MAX_ARGS>(bytes, None, limits);
    assert_eq!(stream.first(), Some(&whole));
    let chunked = parse_stream::<MAX_ARGS>(bytes, Some(cut), limits);
    assert_eq!(
        chunked,
        stream,
        "{} arriving in two parts at {cut}",
        bytes.escape_ascii()
    );

    let mut seen = Seen::default();
    for outcome in &stream {
        match outcome {
            Outcome::Incomplete => seen.incomplete += 1,
            Outcome::Empty { .. } => seen.empty += 1,
            Outcome::Command { args, .. } => {
                seen.commands += 1;
                if seen.round_trips < ROUND_TRIPS {
                    check_round_trips::<MAX_ARGS>(args, limits, style);
                    seen.round_trips += 1;
                }
            }
            Outcome::Error(error) => {
                let name = format!("{error:?}");
                let kind = name.split('(').next().unwrap_or_default().to_owned();
                seen.errors.insert(kind);
            }
        }
    }
    seen
}

/// What the requests of the checked inputs parsed to, for a driver to see that its inputs reach
/// every outcome.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// Commands parsed (from the front of the input, as a connection takes them).
    pub commands: usize,
    /// Empty requests (`*0`, `*-1`, blank lines).
    pub empty: usize,
    /// Inputs that ended in part of a request.
    pub incomplete: usize,
    /// Commands whose re-encodings were checked.
    pub round_trips: usize,
    /// The protocol errors met, by variant name (`ExpectedDollar` for any byte).
    pub errors: BTreeSet<String>,
}

impl Seen {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: Self) {
        self.commands += other.commands;
        self.empty += other.empty;
        self.incomplete += other.incomplete;
        self.round_trips += other.round_trips;
        self.errors.extend(other.errors);
    }
}
