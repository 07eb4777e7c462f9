//! `NUMERIC`: exact decimal with precision 38 and scale 9.
//!
//! A value is an `i128` holding the number times 10^9: `1.5` is
//! `1_500_000_000`. 38 decimal digits need 127 bits, so the representation is
//! exact and addition is plain checked integer addition. Multiplication and
//! division need the product `a * b` (up to 76 digits) or `a * 10^9` before
//! they scale back, so they go through a small 256-bit intermediate
//! ([`U256`]) and round half away from zero, as GoogleSQL does.

use std::fmt;

use crate::{Error, Result};

/// The value multiplied by 10^9, so `1.5` is `1_500_000_000`. The magnitude
/// never exceeds [`Numeric::MAX`] (38 nines with 9 after the point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Numeric(i128);

impl Numeric {
    /// The scale: 9 digits after the decimal point.
    pub const SCALE: u32 = 9;
    /// 10^9, one unit.
    pub const ONE: i128 = 1_000_000_000;
    /// 99999999999999999999999999999.999999999.
    pub const MAX: Numeric = Numeric(99_999_999_999_999_999_999_999_999_999_999_999_999);
    /// -99999999999999999999999999999.999999999.
    pub const MIN: Numeric = Numeric(-99_999_999_999_999_999_999_999_999_999_999_999_999);
    /// 0.
    pub const ZERO: Numeric = Numeric(0);

    /// A numeric from its scaled representation; `None` if out of range.
    pub fn from_scaled(scaled: i128) -> Option<Numeric> {
        (Self::MIN.0..=Self::MAX.0)
            .contains(&scaled)
            .then_some(Numeric(scaled))
    }

    /// The value times 10^9.
    pub fn scaled(self) -> i128 {
        self.0
    }

    /// An integer as a numeric (every `i64` fits).
    pub fn from_i64(v: i64) -> Numeric {
        Numeric(v as i128 * Self::ONE)
    }

    /// Parses decimal or scientific notation, the forms of GoogleSQL
    /// (`NUMERIC '1.5'`, `CAST('-1e3' AS NUMERIC)`) and of Spanner's wire
    /// format: `[+-]digits[.digits][e[+-]digits]` or `[+-].digits[...]`.
    ///
    /// Digits beyond the ninth after the point are rounded half away from
    /// zero (`1.0000000005` is `1.000000001`), as GoogleSQL's NUMERIC
    /// conversion does; more than 29 integer digits is an out-of-range error.
    pub fn parse(text: &str) -> Result<Numeric> {
        Self::parse_with(text, false)
    }

    /// Like [`Numeric::parse`], but a value NUMERIC cannot hold exactly
    /// (a nonzero digit beyond the ninth after the point) is an
    /// `InvalidArgument` error instead of being rounded. Trailing zeros are
    /// fine (`1.50000000000` is `1.5`). This is the reading of values a
    /// client sends (mutations, query parameters, keys): Spanner refuses
    /// them rather than store something other than what was sent.
    pub fn parse_exact(text: &str) -> Result<Numeric> {
        Self::parse_with(text, true)
    }

    fn parse_with(text: &str, exact: bool) -> Result<Numeric> {
        let inexact = || {
            Error::InvalidArgument(format!(
                "Invalid NUMERIC value: {text} has more than {} digits after the decimal point",
                Self::SCALE
            ))
        };
        let bad = || Error::InvalidArgument(format!("Invalid NUMERIC value: {text}"));
        let overflow = || Error::OutOfRange(format!("Invalid NUMERIC value: {text}"));
        let s = text.trim();
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (mantissa, exponent) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (int_part.is_empty() && frac_part.is_empty())
            || !all_digits(int_part)
            || !all_digits(frac_part)
        {
            return Err(bad());
        }
        let exponent: i64 = match exponent {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !all_digits(digits) {
                    return Err(bad());
                }
                // Exponents far beyond the range only mean zero or overflow.
                e.parse::<i64>()
                    .unwrap_or(if e.starts_with('-') { -1000 } else { 1000 })
                    .clamp(-1000, 1000)
            }
        };
        // value = digits * 10^(exponent - frac_len); scaled = digits * 10^shift.
        let digits: String = format!("{int_part}{frac_part}");
        let digits = digits.trim_start_matches('0');
        let shift = exponent - frac_part.len() as i64 + Self::SCALE as i64;
        let scaled: i128 = if digits.is_empty() {
            0
        } else if shift >= 0 {
            if digits.len() as i64 + shift > 38 {
                return Err(overflow());
            }
            let base: i128 = digits.parse().map_err(|_| overflow())?;
            base * 10i128.pow(shift as u32)
        } else {
            let drop = (-shift) as usize;
            // `digits` has no leading zeros, so a dropped nonzero digit
            // is one the result would not hold.
            if exact
                && digits[digits.len().saturating_sub(drop)..]
                    .bytes()
                    .any(|d| d != b'0')
            {
                return Err(inexact());
            }
            if drop > digits.len() {
                0
            } else {
                let (kept, dropped) = digits.split_at(digits.len() - drop);
                if kept.len() > 38 {
                    return Err(overflow());
                }
                let kept: i128 = if kept.is_empty() {
                    0
                } else {
                    kept.parse().map_err(|_| overflow())?
                };
                let round_up = dropped.as_bytes().first().is_some_and(|d| *d >= b'5');
                kept + round_up as i128
            }
        };
        let scaled = if negative { -scaled } else { scaled };
        Numeric::from_scaled(scaled).ok_or_else(overflow)
    }

    /// `self + rhs`, or an `OutOfRange` error on overflow.
    pub fn checked_add(self, rhs: Numeric) -> Result<Numeric> {
        self.0
            .checked_add(rhs.0)
            .and_then(Numeric::from_scaled)
            .ok_or_else(|| Error::OutOfRange(format!("numeric overflow: {self} + {rhs}")))
    }

    /// `self - rhs`, or an `OutOfRange` error on overflow.
    pub fn checked_sub(self, rhs: Numeric) -> Result<Numeric> {
        self.0
            .checked_sub(rhs.0)
            .and_then(Numeric::from_scaled)
            .ok_or_else(|| Error::OutOfRange(format!("numeric overflow: {self} - {rhs}")))
    }

    /// `self * rhs`, rounded half away from zero to 9 decimals.
    pub fn checked_mul(self, rhs: Numeric) -> Result<Numeric> {
        let product = U256::mul(self.0.unsigned_abs(), rhs.0.unsigned_abs());
        let magnitude = product.div_round(Self::ONE as u128);
        let negative = (self.0 < 0) != (rhs.0 < 0);
        signed(magnitude, negative)
            .ok_or_else(|| Error::OutOfRange(format!("numeric overflow: {self} * {rhs}")))
    }

    /// `self / rhs`, rounded half away from zero to 9 decimals.
    pub fn checked_div(self, rhs: Numeric) -> Result<Numeric> {
        if rhs.0 == 0 {
            return Err(Error::OutOfRange(format!(
                "division by zero: {self} / {rhs}"
            )));
        }
        let dividend = U256::mul(self.0.unsigned_abs(), Self::ONE as u128);
        let magnitude = dividend.div_round(rhs.0.unsigned_abs());
        let negative = (self.0 < 0) != (rhs.0 < 0);
        signed(magnitude, negative)
            .ok_or_else(|| Error::OutOfRange(format!("numeric overflow: {self} / {rhs}")))
    }

    /// The remainder of `self / rhs` truncated towards zero: the result has
    /// the sign of `self` (GoogleSQL `MOD`).
    pub fn checked_rem(self, rhs: Numeric) -> Result<Numeric> {
        if rhs.0 == 0 {
            return Err(Error::OutOfRange(format!(
                "division by zero: MOD({self}, {rhs})"
            )));
        }
        Ok(Numeric(self.0 % rhs.0))
    }

    /// `|self|`.
    pub fn abs(self) -> Numeric {
        Numeric(self.0.abs())
    }

    /// The nearest `INT64`, halves rounded away from zero (GoogleSQL
    /// `CAST(numeric AS INT64)`).
    pub fn to_i64(self) -> Result<i64> {
        let half = Self::ONE / 2;
        let rounded = if self.0 >= 0 {
            (self.0 + half) / Self::ONE
        } else {
            (self.0 - half) / Self::ONE
        };
        i64::try_from(rounded).map_err(|_| Error::OutOfRange(format!("int64 out of range: {self}")))
    }

    /// The nearest `FLOAT64`.
    pub fn to_f64(self) -> f64 {
        // Parsing the exact decimal text rounds correctly; dividing two
        // floats would round twice.
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    /// A float rounded to 9 decimals; errors for NaN, infinities and values
    /// outside the range.
    pub fn from_f64(v: f64) -> Result<Numeric> {
        if !v.is_finite() {
            return Err(Error::OutOfRange(format!(
                "Illegal conversion of non-finite floating point number to numeric: {v}"
            )));
        }
        if v.abs() >= 1e29 {
            return Err(Error::OutOfRange(format!("numeric out of range: {v}")));
        }
        // `{:.10}` prints the float's exact binary value rounded to 10 places;
        // `parse` then rounds half away from zero to 9.
        Numeric::parse(&format!("{v:.10}"))
    }
}

impl std::ops::Neg for Numeric {
    type Output = Numeric;

    /// `-self` (the range is symmetric, so this cannot overflow).
    fn neg(self) -> Numeric {
        Numeric(-self.0)
    }
}

fn signed(magnitude: Option<u128>, negative: bool) -> Option<Numeric> {
    let m = i128::try_from(magnitude?).ok()?;
    Numeric::from_scaled(if negative { -m } else { m })
}

impl fmt::Display for Numeric {
    /// The shortest exact decimal: `1.5`, `-0.000000001`, `100` (no exponent,
    /// no trailing zeros), as GoogleSQL's `CAST(numeric AS STRING)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let abs = self.0.unsigned_abs();
        let sign = if self.0 < 0 { "-" } else { "" };
        let int = abs / Self::ONE as u128;
        let frac = abs % Self::ONE as u128;
        if frac == 0 {
            write!(f, "{sign}{int}")
        } else {
            let digits = format!("{frac:09}");
            write!(f, "{sign}{int}.{}", digits.trim_end_matches('0'))
        }
    }
}

/// An unsigned 256-bit integer, just enough for NUMERIC's intermediates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct U256 {
    hi: u128,
    lo: u128,
}

impl U256 {
    /// The full product of two `u128`s.
    fn mul(a: u128, b: u128) -> U256 {
        let mask = u64::MAX as u128;
        let (a1, a0) = (a >> 64, a & mask);
        let (b1, b0) = (b >> 64, b & mask);
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // Sum the middle terms with carries into the high half.
        let mid = (p00 >> 64) + (p01 & mask) + (p10 & mask);
        let lo = (p00 & mask) | (mid << 64);
        let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        U256 { hi, lo }
    }

    /// `self / divisor` rounded half away from zero; `None` if the quotient
    /// does not fit a `u128`. `divisor` must be non-zero and below 2^127.
    fn div_round(self, divisor: u128) -> Option<u128> {
        debug_assert!(divisor != 0 && divisor < 1 << 127);
        // Restoring binary long division: the remainder stays below the
        // divisor (< 2^127), so shifting it left by one cannot overflow.
        let mut quotient = U256 { hi: 0, lo: 0 };
        let mut rem: u128 = 0;
        for i in (0..256).rev() {
            let bit = if i >= 128 {
                (self.hi >> (i - 128)) & 1
            } else {
                (self.lo >> i) & 1
            };
            rem = (rem << 1) | bit;
            if rem >= divisor {
                rem -= divisor;
                if i >= 128 {
                    quotient.hi |= 1 << (i - 128);
                } else {
                    quotient.lo |= 1 << i;
                }
            }
        }
        if quotient.hi != 0 {
            return None;
        }
        // Round half away from zero: compare 2*rem with the divisor.
        let round_up = rem >= divisor - rem;
        quotient.lo.checked_add(round_up as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).expect(s)
    }

    #[test]
    fn parse_and_print() {
        for (text, printed) in [
            ("1.5", "1.5"),
            ("-0.000000001", "-0.000000001"),
            ("100", "100"),
            ("+.5", "0.5"),
            ("1e3", "1000"),
            ("-1.5E-3", "-0.0015"),
            ("1.0000000005", "1.000000001"),
            ("1.0000000004", "1"),
            ("0.00", "0"),
            (
                "99999999999999999999999999999.999999999",
                "99999999999999999999999999999.999999999",
            ),
        ] {
            assert_eq!(n(text).to_string(), printed, "{text}");
        }
        assert!(matches!(Numeric::parse("1e29"), Err(Error::OutOfRange(_))));
        assert!(matches!(
            Numeric::parse("123456789012345678901234567890"),
            Err(Error::OutOfRange(_))
        ));
        for bad in ["", ".", "abc", "1.2.3", "1e", "--1", "1 2"] {
            assert!(
                matches!(Numeric::parse(bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn parse_exact_refuses_what_parse_would_round() {
        for (text, printed) in [
            ("3.141592653", "3.141592653"),
            ("1.50000000000", "1.5"),
            ("1.5e-8", "0.000000015"),
            ("123456789e-9", "0.123456789"),
            ("0.0000000000", "0"),
        ] {
            assert_eq!(
                Numeric::parse_exact(text).expect(text).to_string(),
                printed,
                "{text}"
            );
        }
        for inexact in [
            "3.1415926535",
            "1.0000000004",
            "1e-10",
            "-0.0000000001",
            "1.5e-9",
        ] {
            assert!(
                matches!(
                    Numeric::parse_exact(inexact),
                    Err(Error::InvalidArgument(_))
                ),
                "{inexact}"
            );
            assert!(Numeric::parse(inexact).is_ok(), "{inexact}");
        }
        assert!(matches!(
            Numeric::parse_exact("1e29"),
            Err(Error::OutOfRange(_))
        ));
    }

    #[test]
    fn arithmetic() {
        assert_eq!(n("1.5").checked_add(n("2.25")).unwrap(), n("3.75"));
        assert_eq!(n("1.5").checked_sub(n("2.25")).unwrap(), n("-0.75"));
        assert_eq!(n("1.5").checked_mul(n("-2")).unwrap(), n("-3"));
        assert_eq!(
            n("0.000000001").checked_mul(n("0.5")).unwrap(),
            n("0.000000001")
        );
        assert_eq!(n("1").checked_div(n("3")).unwrap(), n("0.333333333"));
        assert_eq!(n("2").checked_div(n("3")).unwrap(), n("0.666666667"));
        assert_eq!(n("-7.5").checked_rem(n("2")).unwrap(), n("-1.5"));
        let big = n("99999999999999999999999999999");
        assert_eq!(
            big.checked_mul(n("0.5")).unwrap(),
            n("49999999999999999999999999999.5")
        );
        assert!(matches!(
            Numeric::MAX.checked_add(n("0.000000001")),
            Err(Error::OutOfRange(_))
        ));
        assert!(matches!(big.checked_mul(big), Err(Error::OutOfRange(_))));
        assert!(matches!(
            n("1").checked_div(Numeric::ZERO),
            Err(Error::OutOfRange(_))
        ));
        assert!(
            Numeric::MAX.checked_div(n("0.000000001")).is_err(),
            "MAX / 1e-9 overflows"
        );
    }

    #[test]
    fn conversions() {
        assert_eq!(n("2.5").to_i64().unwrap(), 3);
        assert_eq!(n("-2.5").to_i64().unwrap(), -3);
        assert_eq!(n("2.4").to_i64().unwrap(), 2);
        assert!(big_to_i64_fails());
        assert_eq!(Numeric::from_f64(0.1).unwrap(), n("0.1"));
        assert_eq!(Numeric::from_f64(-1.25).unwrap(), n("-1.25"));
        assert!(Numeric::from_f64(f64::NAN).is_err());
        assert!(Numeric::from_f64(1e30).is_err());
        assert_eq!(n("1.5").to_f64(), 1.5);
    }

    fn big_to_i64_fails() -> bool {
        n("9223372036854775808").to_i64().is_err()
    }
}
