//! Decimal numbers for `INCRBYFLOAT`, computed exactly.
//!
//! Redis adds in C `long double` and stores `%.17Lf` of the sum with trailing zeros cut: for
//! the usual small decimals that is the exact decimal sum, and beyond about 19 significant
//! digits it is the binary rounding noise (`1008.01000000000000001`). Here the sum is exact, in
//! 128 bits, rounded to the same 17 digits after the point: Redis' answer wherever its own is
//! exact, and no noise where it is not. No floating point, so nothing of `core::fmt`'s float
//! formatting on a board.

/// Digits after the point that are kept (Redis' `%.17Lf`).
const KEPT: u32 = 17;

/// Digits after the point a parsed number may carry before it is rounded.
const MAX_SCALE: u32 = 36;

/// `mantissa × 10^-scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    mantissa: i128,
    scale: u32,
}

/// Why a text is not a number here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotDecimal {
    /// Not a number at all (Redis: `value is not a valid float`).
    Invalid,
    /// An infinity (Redis takes it, and the sum is then infinite).
    Infinite,
}

impl Decimal {
    /// Reads `[+|-]digits[.digits][(e|E)[+|-]digits]` (at least one digit before the
    /// exponent), as C's `strtold` reads decimals; infinities are told apart. Hexadecimal
    /// numbers, which `strtold` also reads, are refused, as are numbers of more than 38 digits.
    pub(crate) fn parse(text: &[u8]) -> Result<Self, NotDecimal> {
        let (negative, body) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, text),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Err(NotDecimal::Infinite);
        }
        let (number, exponent) = match body.iter().position(|&b| b == b'e' || b == b'E') {
            Some(at) => (&body[..at], Some(&body[at + 1..])),
            None => (body, None),
        };
        let mut mantissa: i128 = 0;
        let mut scale: i64 = 0;
        let mut digits = 0;
        let mut point = false;
        for &b in number {
            match b {
                b'0'..=b'9' => {
                    mantissa = mantissa
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(i128::from(b - b'0')))
                        .ok_or(NotDecimal::Invalid)?;
                    digits += 1;
                    scale += i64::from(point);
                }
                b'.' if !point => point = true,
                _ => return Err(NotDecimal::Invalid),
            }
        }
        if digits == 0 {
            return Err(NotDecimal::Invalid);
        }
        if let Some(exponent) = exponent {
            let (sign, exp_digits) = match exponent.split_first() {
                Some((b'-', rest)) => (-1, rest),
                Some((b'+', rest)) => (1, rest),
                _ => (1, exponent),
            };
            if exp_digits.is_empty() || exp_digits.len() > 6 {
                return Err(NotDecimal::Invalid);
            }
            let mut e: i64 = 0;
            for &b in exp_digits {
                if !b.is_ascii_digit() {
                    return Err(NotDecimal::Invalid);
                }
                e = e * 10 + i64::from(b - b'0');
            }
            scale -= sign * e;
        }
        while scale < 0 {
            mantissa = mantissa.checked_mul(10).ok_or(NotDecimal::Invalid)?;
            scale += 1;
        }
        let mut value = Self {
            mantissa: if negative { -mantissa } else { mantissa },
            scale: scale.min(i64::from(u32::MAX)) as u32,
        };
        if value.scale > MAX_SCALE {
            value = value.round_to(MAX_SCALE);
        }
        Ok(value)
    }

    /// The exact sum, `None` past 128 bits.
    pub(crate) fn checked_add(self, other: Self) -> Option<Self> {
        let scale = self.scale.max(other.scale);
        let widen = |d: Self| {
            10i128
                .checked_pow(scale - d.scale)
                .and_then(|f| d.mantissa.checked_mul(f))
        };
        Some(Self {
            mantissa: widen(self)?.checked_add(widen(other)?)?,
            scale,
        })
    }

    /// Rounded to `scale` digits after the point, halves to even.
    fn round_to(self, scale: u32) -> Self {
        if self.scale <= scale {
            return self;
        }
        let drop = self.scale - scale;
        // More than 38 dropped digits leave nothing of an i128.
        let Some(divisor) = 10i128.checked_pow(drop) else {
            return Self { mantissa: 0, scale };
        };
        let (quotient, remainder) = (self.mantissa / divisor, self.mantissa % divisor);
        let twice = remainder.unsigned_abs() * 2;
        let half = divisor.unsigned_abs();
        let up = twice > half || (twice == half && quotient % 2 != 0);
        let mantissa = if up {
            quotient + self.mantissa.signum()
        } else {
            quotient
        };
        Self { mantissa, scale }
    }

    /// As Redis stores a sum: at most 17 digits after the point, no trailing zeros, no point
    /// without digits after it, `0` for zero.
    pub(crate) fn format(self, buf: &mut [u8; 48]) -> &[u8] {
        let value = self.round_to(KEPT);
        let mut digits = [0u8; 40];
        let mut n = value.mantissa.unsigned_abs();
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            n /= 10;
            len += 1;
            if n == 0 {
                break;
            }
        }
        // At least one digit before the point.
        let scale = value.scale as usize;
        while len <= scale {
            digits[len] = b'0';
            len += 1;
        }
        // Trailing zeros of the fraction go.
        let mut skip = 0;
        while skip < scale && digits[skip] == b'0' {
            skip += 1;
        }
        let mut at = 0;
        if value.mantissa < 0 {
            buf[at] = b'-';
            at += 1;
        }
        for i in (scale..len).rev() {
            buf[at] = digits[i];
            at += 1;
        }
        if skip < scale {
            buf[at] = b'.';
            at += 1;
            for i in (skip..scale).rev() {
                buf[at] = digits[i];
                at += 1;
            }
        }
        &buf[..at]
    }
}

#[cfg(test)]
mod tests {
    use super::{Decimal, NotDecimal};

    fn sum(a: &str, b: &str) -> std::string::String {
        let total = Decimal::parse(a.as_bytes())
            .unwrap()
            .checked_add(Decimal::parse(b.as_bytes()).unwrap())
            .unwrap();
        let mut buf = [0; 48];
        std::string::String::from_utf8(total.format(&mut buf).to_vec()).unwrap()
    }

    #[test]
    fn sums_print_as_redis_prints_exact_ones() {
        assert_eq!(sum("10.50", "0.1"), "10.6");
        assert_eq!(sum("0.1", "0.2"), "0.3");
        assert_eq!(sum("5.0e3", "2.0e2"), "5200");
        assert_eq!(sum("1.5", ".5"), "2");
        assert_eq!(sum("5.", "+1"), "6");
        assert_eq!(sum("-0.0", "0"), "0");
        assert_eq!(sum("1e-20", "0"), "0");
        assert_eq!(
            sum("0.10000000000000001", "0.000000000000000005"),
            "0.10000000000000002"
        );
        assert_eq!(sum("12345678901234567890", "1"), "12345678901234567891");
        assert_eq!(sum("-1008.01", "1"), "-1007.01");
        assert_eq!(sum("0.5", "-1"), "-0.5");
    }

    #[test]
    fn what_is_not_a_decimal() {
        for text in [
            "",
            "abc",
            " 1",
            "1 ",
            "1e",
            "e5",
            ".",
            "1..2",
            "0x10",
            "nan",
            "1e1234567",
        ] {
            assert_eq!(
                Decimal::parse(text.as_bytes()),
                Err(NotDecimal::Invalid),
                "{text}"
            );
        }
        for text in ["inf", "-Infinity", "+INF"] {
            assert_eq!(
                Decimal::parse(text.as_bytes()),
                Err(NotDecimal::Infinite),
                "{text}"
            );
        }
    }
}
