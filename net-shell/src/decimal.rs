//! Decimal integers as Redis reads and writes them, without allocating: one parser
//! (`string2ll`'s rules) for request lengths, counts and command arguments, one formatter for
//! replies and stored values, and the digit count for sizing buffers.

/// Reads a decimal number as Redis's `string2ll` does: an optional `-`, then `0` alone or
/// digits not starting with `0`, at most 20 bytes in all, within `i64`. No `+`, no blanks.
pub(crate) fn parse_i64(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 20 {
        return None;
    }
    if text == b"0" {
        return Some(0);
    }
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (&first, rest) = digits.split_first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut magnitude = u64::from(first - b'0');
    for &digit in rest {
        if !digit.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(digit - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// The decimal digits of an integer, formatted without allocating. 20 bytes hold `u64::MAX`
/// and `i64::MIN` with its sign.
pub(crate) struct Decimal {
    /// `digits[start..]` are the text.
    digits: [u8; 20],
    /// Where the text starts.
    start: usize,
}

impl Decimal {
    /// The digits of `n`.
    pub(crate) fn new(mut n: u64) -> Self {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            // `n % 10` is below 10, so the cast keeps it whole.
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Self { digits, start }
    }

    /// The digits of `n`, with a `-` when negative.
    pub(crate) fn signed(n: i64) -> Self {
        let mut decimal = Self::new(n.unsigned_abs());
        if n < 0 {
            // At most 19 digits for an `i64`, so there is room for the sign.
            decimal.start -= 1;
            decimal.digits[decimal.start] = b'-';
        }
        decimal
    }

    /// The text.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.digits.get(self.start..).unwrap_or_default()
    }
}

/// How many decimal digits `n` has.
pub(crate) const fn decimal_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_i64_accepts_what_string2ll_accepts() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"7"), Some(7));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"1048576"), Some(1_048_576));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn parse_i64_rejects_what_string2ll_rejects() {
        for text in [
            &b""[..],
            b"-",
            b"+1",
            b"01",
            b"00",
            b"-0",
            b"-01",
            b" 1",
            b"1 ",
            b"1x",
            b"0x10",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"18446744073709551616",
            b"100000000000000000000",
            b"\xff",
        ] {
            assert_eq!(parse_i64(text), None, "{}", text.escape_ascii());
        }
    }

    #[test]
    fn parse_i64_follows_redis_rules() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [&b""[..], b"+1", b"01", b"-0", b" 1", b"1 ", b"1a", b"-"] {
            assert_eq!(parse_i64(bad), None, "{:?}", core::str::from_utf8(bad));
        }
    }

    #[test]
    fn decimal_formats_every_width() {
        let mut n: u64 = 1;
        let mut expected_len = 1;
        loop {
            assert_eq!(Decimal::new(n).as_bytes().len(), expected_len);
            assert_eq!(
                Decimal::new(n - 1).as_bytes().len(),
                (expected_len - 1).max(1)
            );
            assert_eq!(decimal_len(n), expected_len);
            match n.checked_mul(10) {
                Some(next) => n = next,
                None => break,
            }
            expected_len += 1;
        }
        assert_eq!(Decimal::new(u64::MAX).as_bytes(), b"18446744073709551615");
    }

    #[test]
    fn signed_decimal_round_trips_extremes() {
        for n in [0, 7, -7, i64::MAX, i64::MIN] {
            let decimal = Decimal::signed(n);
            let text = decimal.as_bytes();
            assert_eq!(parse_i64(text), Some(n));
        }
    }
}
