//! Splitting an inline request line into arguments, the way Redis's `sdssplitargs` does, with
//! escapes decoded in place.
//!
//! The rules, from `sdssplitargs` in Redis 7's `sds.c`:
//!
//! - Arguments are separated by blanks (C `isspace`: space, `\t`, `\n`, `\v`, `\f`, `\r`).
//!   Outside quotes an argument ends at a space, `\t`, `\n` or `\r` (not `\v` or `\f`).
//! - `"..."` may hold `\xHH` (two hex digits) for any byte, `\n`, `\r`, `\t`, `\b`, `\a`, and
//!   `\` before any other byte for that byte (`\"`, `\\`). A `\x` without two hex digits is `x`.
//! - `'...'` takes bytes as they are, except `\'` for a quote.
//! - A quote may open in the middle of an argument (`a"b c"` is `ab c`); a closing quote must be
//!   followed by a blank or the end of the line. `""` is an empty argument.
//!
//! One difference: `sdssplitargs` works on a C string, so Redis stops reading the line at a NUL
//! byte (and, before that, cannot find a line end behind one at all). Here NUL is an ordinary byte.

use super::ProtocolError;

/// C `isspace` in the "C" locale.
pub(super) fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The value of an ASCII hex digit.
fn hex_value(byte: Option<&u8>) -> Option<u8> {
    char::from(*byte?)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Where the parser is inside one argument.
#[derive(Clone, Copy)]
enum Quoting {
    /// Not inside quotes.
    Bare,
    /// Inside `"..."`.
    Double,
    /// Inside `'...'`.
    Single,
}

/// Splits `line` (without its line end) into arguments, decoding quotes and escapes in place.
///
/// On success, returns how many arguments there are; argument `i` is
/// `line[spans[i].0..spans[i].0 + spans[i].1]`. Decoding only ever shortens an argument, so each
/// one is written over its own wire bytes and arguments never overlap. On error, `line` may have
/// been partly rewritten.
///
/// # Errors
///
/// [`ProtocolError::UnbalancedQuotes`] for an unclosed quote or a closing quote followed by
/// something other than a blank; [`ProtocolError::TooBigInlineRequest`] for more arguments than
/// `spans` holds.
pub(super) fn split_in_place(
    line: &mut [u8],
    spans: &mut [(usize, usize)],
) -> Result<usize, ProtocolError> {
    let mut read = 0;
    let mut count = 0;
    loop {
        while line.get(read).is_some_and(|&b| is_blank(b)) {
            read += 1;
        }
        if read >= line.len() {
            return Ok(count);
        }
        let span = spans
            .get_mut(count)
            .ok_or(ProtocolError::TooBigInlineRequest)?;
        let start = read;
        // Decoded bytes go to `write`, which never passes `read`.
        let mut write = read;
        let mut quoting = Quoting::Bare;
        loop {
            let Some(&byte) = line.get(read) else {
                match quoting {
                    Quoting::Bare => break,
                    Quoting::Double | Quoting::Single => {
                        return Err(ProtocolError::UnbalancedQuotes)
                    }
                }
            };
            let (decoded, taken) = match quoting {
                Quoting::Bare => match byte {
                    b' ' | b'\t' | b'\n' | b'\r' => {
                        read += 1;
                        break;
                    }
                    b'"' => {
                        quoting = Quoting::Double;
                        (None, 1)
                    }
                    b'\'' => {
                        quoting = Quoting::Single;
                        (None, 1)
                    }
                    other => (Some(other), 1),
                },
                Quoting::Double => match byte {
                    b'\\' => {
                        let next = line.get(read + 1).copied();
                        let hex = hex_value(line.get(read + 2)).zip(hex_value(line.get(read + 3)));
                        match (next, hex) {
                            (Some(b'x'), Some((high, low))) => (Some(high << 4 | low), 4),
                            (Some(b'n'), _) => (Some(b'\n'), 2),
                            (Some(b'r'), _) => (Some(b'\r'), 2),
                            (Some(b't'), _) => (Some(b'\t'), 2),
                            (Some(b'b'), _) => (Some(0x08), 2),
                            (Some(b'a'), _) => (Some(0x07), 2),
                            (Some(other), _) => (Some(other), 2),
                            // A backslash ending the line leaves the quote open.
                            (None, _) => return Err(ProtocolError::UnbalancedQuotes),
                        }
                    }
                    b'"' => {
                        read += 1;
                        close_quote(line, read)?;
                        break;
                    }
                    other => (Some(other), 1),
                },
                Quoting::Single => match byte {
                    b'\\' if line.get(read + 1) == Some(&b'\'') => (Some(b'\''), 2),
                    b'\'' => {
                        read += 1;
                        close_quote(line, read)?;
                        break;
                    }
                    other => (Some(other), 1),
                },
            };
            read += taken;
            if let Some(decoded) = decoded {
                line[write] = decoded;
                write += 1;
            }
        }
        *span = (start, write - start);
        count += 1;
    }
}

/// After a closing quote, the argument must end: a blank or the end of the line follows.
fn close_quote(line: &[u8], after: usize) -> Result<(), ProtocolError> {
    match line.get(after) {
        Some(&b) if !is_blank(b) => Err(ProtocolError::UnbalancedQuotes),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `line` and checks the arguments; `N` bounds the count.
    fn assert_split<const N: usize>(line: &[u8], expected: &[&[u8]]) {
        let mut buf = [0u8; 256];
        let buf = &mut buf[..line.len()];
        buf.copy_from_slice(line);
        let mut spans = [(0, 0); N];
        let count = split_in_place(buf, &mut spans).unwrap();
        assert_eq!(count, expected.len(), "{}", line.escape_ascii());
        for (&(start, len), want) in spans[..count].iter().zip(expected) {
            assert_eq!(&buf[start..start + len], *want, "{}", line.escape_ascii());
        }
    }

    fn split_error(line: &[u8], capacity: usize) -> ProtocolError {
        let mut buf = [0u8; 256];
        let buf = &mut buf[..line.len()];
        buf.copy_from_slice(line);
        let mut spans = [(0, 0); 16];
        split_in_place(buf, &mut spans[..capacity]).unwrap_err()
    }

    #[test]
    fn bare_words_split_on_blanks() {
        assert_split::<8>(b"SET key value", &[b"SET", b"key", b"value"]);
        assert_split::<8>(b"  \t GET\t\tkey  ", &[b"GET", b"key"]);
        assert_split::<8>(b"a\rb", &[b"a", b"b"]);
    }

    #[test]
    fn empty_or_blank_line_has_no_args() {
        assert_split::<8>(b"", &[]);
        assert_split::<8>(b" \t\x0b\x0c\r ", &[]);
    }

    #[test]
    fn vertical_tab_and_form_feed_skipped_before_but_kept_inside_word() {
        assert_split::<8>(b"\x0ba\x0bb\x0c", &[b"a\x0bb\x0c"]);
    }

    #[test]
    fn double_quotes_keep_blanks() {
        assert_split::<8>(br#"SET k "hello world""#, &[b"SET", b"k", b"hello world"]);
    }

    #[test]
    fn double_quote_escapes_decode() {
        assert_split::<8>(
            br#""\n\r\t\b\a\"\\\q\x41\x7a\xfF\x00""#,
            &[b"\n\r\t\x08\x07\"\\qAz\xff\x00"],
        );
    }

    #[test]
    fn double_quote_hex_escape_without_two_digits_is_x() {
        assert_split::<8>(br#""\xZZ" "\x4" "\x""#, &[b"xZZ", b"x4", b"x"]);
    }

    #[test]
    fn single_quotes_take_bytes_as_they_are_except_escaped_quote() {
        assert_split::<8>(br"'a \n \x41 \'b\' \\ x'", &[br"a \n \x41 'b' \\ x"]);
        // The second backslash escapes the quote, so this one never closes.
        assert_eq!(split_error(br"'a\\'", 8), ProtocolError::UnbalancedQuotes);
    }

    #[test]
    fn empty_quotes_are_an_empty_argument() {
        assert_split::<8>(br#"SET k """#, &[b"SET", b"k", b""]);
        assert_split::<8>(b"'' x", &[b"", b"x"]);
    }

    #[test]
    fn quote_opening_mid_word_joins_the_word() {
        assert_split::<8>(br#"ab"c d" 'e'"#, &[b"abc d", b"e"]);
        assert_split::<8>(br#"a'b c'"#, &[b"ab c"]);
    }

    #[test]
    fn closing_quote_then_any_blank_ends_the_argument() {
        assert_split::<8>(b"\"a\"\x0bb", &[b"a", b"b"]);
        assert_split::<8>(b"'a'\tb", &[b"a", b"b"]);
    }

    #[test]
    fn nul_and_high_bytes_are_ordinary() {
        assert_split::<8>(b"a\x00b \xff\x80", &[b"a\x00b", b"\xff\x80"]);
    }

    #[test]
    fn unclosed_quote_is_unbalanced() {
        for line in [
            &br#""abc"#[..],
            b"'abc",
            br#"a"bc"#,
            br#""abc\""#,
            br#""abc\"#,
        ] {
            assert_eq!(
                split_error(line, 8),
                ProtocolError::UnbalancedQuotes,
                "{}",
                line.escape_ascii()
            );
        }
    }

    #[test]
    fn closing_quote_followed_by_non_blank_is_unbalanced() {
        for line in [&br#""a"b"#[..], b"'a'b", br#""a""b""#, b"x 'a''"] {
            assert_eq!(
                split_error(line, 8),
                ProtocolError::UnbalancedQuotes,
                "{}",
                line.escape_ascii()
            );
        }
    }

    #[test]
    fn arguments_past_capacity_are_too_big() {
        assert_split::<2>(b"a b  ", &[b"a", b"b"]);
        assert_eq!(split_error(b"a b c", 2), ProtocolError::TooBigInlineRequest);
        assert_eq!(split_error(b"a", 0), ProtocolError::TooBigInlineRequest);
    }
}
