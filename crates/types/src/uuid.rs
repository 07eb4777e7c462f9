//! `UUID`: a 128-bit universally unique identifier.
//!
//! Stored as the `u128` whose big-endian bytes are the UUID's 16 bytes, in
//! the order the text writes them. That one choice gives GoogleSQL's ordering
//! for free: Spanner compares UUIDs as unsigned 128-bit numbers, which is the
//! lexicographic order of their canonical text, and that is `u128`'s order.
//!
//! Text forms:
//!
//! * Printing (the wire form, `CAST(u AS STRING)`) is always the canonical
//!   lowercase `8-4-4-4-12` form, e.g. `f81d4fae-7dec-11d0-a765-00a0c91e6bf6`.
//! * Parsing accepts what GoogleSQL accepts: 32 hexadecimal digits in either
//!   case, with hyphens anywhere between two digits (one at a time: none at
//!   the start or the end, never two in a row), optionally wrapped in `{}`.
//!   So `F81D4FAE7DEC11D0A76500A0C91E6BF6` and
//!   `{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}` are the same UUID.
//!
//! Nothing here checks a version or variant: any 128 bits are a UUID value
//! (`NEW_UUID()`'s random version-4 UUIDs are made by the expression layer).

use std::fmt;

use crate::{Error, Result};

/// A UUID value: its 16 bytes as a big-endian `u128` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid(u128);

/// The number of hexadecimal digits in a UUID's text.
const DIGITS: usize = 32;

impl Uuid {
    /// `00000000-0000-0000-0000-000000000000`, the smallest UUID.
    pub const MIN: Uuid = Uuid(0);
    /// `ffffffff-ffff-ffff-ffff-ffffffffffff`, the largest UUID.
    pub const MAX: Uuid = Uuid(u128::MAX);

    /// The UUID whose bytes, read big-endian, are `value`.
    pub const fn from_u128(value: u128) -> Uuid {
        Uuid(value)
    }

    /// The UUID as one unsigned number (its bytes read big-endian).
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// The UUID of 16 bytes in text order (`CAST(bytes AS UUID)`).
    pub const fn from_bytes(bytes: [u8; 16]) -> Uuid {
        Uuid(u128::from_be_bytes(bytes))
    }

    /// The 16 bytes in text order (`CAST(uuid AS BYTES)`, the key codec).
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// Parses a UUID's text in any form GoogleSQL accepts (see the module
    /// docs). Errors are INVALID_ARGUMENT and say what is wrong.
    pub fn parse(text: &str) -> Result<Uuid> {
        let bad =
            |why: &str| Error::InvalidArgument(format!("Invalid UUID {}: {why}", shown(text)));
        let body = match text.strip_prefix('{') {
            Some(rest) => rest
                .strip_suffix('}')
                .ok_or_else(|| bad("an opening '{' needs a closing '}'"))?,
            None if text.ends_with('}') => return Err(bad("a closing '}' needs an opening '{'")),
            None => text,
        };
        if body.starts_with('-') || body.ends_with('-') {
            return Err(bad("a UUID cannot start or end with a hyphen"));
        }
        let mut value: u128 = 0;
        let mut digits = 0;
        let mut after_hyphen = false;
        for c in body.chars() {
            if c == '-' {
                if after_hyphen {
                    return Err(bad("a UUID cannot have two hyphens in a row"));
                }
                after_hyphen = true;
                continue;
            }
            after_hyphen = false;
            let digit = c
                .to_digit(16)
                .ok_or_else(|| bad(&format!("'{c}' is not a hexadecimal digit")))?;
            digits += 1;
            if digits > DIGITS {
                return Err(bad("a UUID has 32 hexadecimal digits, this has more"));
            }
            value = (value << 4) | u128::from(digit);
        }
        if digits < DIGITS {
            return Err(bad(&format!(
                "a UUID has 32 hexadecimal digits, this has {digits}"
            )));
        }
        Ok(Uuid(value))
    }
}

/// `text` quoted for an error message, cut after 40 characters (no UUID
/// form is longer than 38, so a cut text is wrong anyway).
fn shown(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("'{}...'", &text[..cut]),
        None => format!("'{text}'"),
    }
}

impl fmt::Display for Uuid {
    /// The canonical form: lowercase, hyphens after digits 8, 12, 16 and 20.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v & 0xffff_ffff_ffff
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANONICAL: &str = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6";

    #[test]
    fn prints_canonical_lowercase() {
        let u = Uuid::parse(CANONICAL).unwrap();
        assert_eq!(u.to_string(), CANONICAL);
        assert_eq!(u.as_u128(), 0xf81d4fae_7dec_11d0_a765_00a0c91e6bf6);
        assert_eq!(
            Uuid::MIN.to_string(),
            "00000000-0000-0000-0000-000000000000"
        );
        assert_eq!(
            Uuid::MAX.to_string(),
            "ffffffff-ffff-ffff-ffff-ffffffffffff"
        );
        let small = Uuid::from_u128(1);
        assert_eq!(small.to_string(), "00000000-0000-0000-0000-000000000001");
    }

    #[test]
    fn accepts_the_other_forms() {
        let u = Uuid::parse(CANONICAL).unwrap();
        for text in [
            "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "f81d4fae7dec11d0a76500a0c91e6bf6",
            "{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}",
            "{F81D4FAE7DEC11D0A76500A0C91E6BF6}",
            "f-81d4fae7dec11d0a76500a0c91e6bf6",
            "f8-1d-4f-ae-7d-ec-11-d0-a7-65-00-a0-c9-1e-6b-f6",
        ] {
            assert_eq!(Uuid::parse(text).unwrap(), u, "{text}");
        }
    }

    #[test]
    fn refuses_malformed_text() {
        for (text, why) in [
            ("", "has 0"),
            ("f81d4fae-7dec-11d0-a765-00a0c91e6bf", "has 31"),
            ("f81d4fae-7dec-11d0-a765-00a0c91e6bf6a", "more"),
            ("-f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "start or end"),
            ("f81d4fae-7dec-11d0-a765-00a0c91e6bf6-", "start or end"),
            ("f81d4fae--7dec-11d0-a765-00a0c91e6bf6", "two hyphens"),
            ("{f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "closing"),
            ("f81d4fae-7dec-11d0-a765-00a0c91e6bf6}", "opening"),
            ("g81d4fae-7dec-11d0-a765-00a0c91e6bf6", "'g' is not"),
            (" f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "' ' is not"),
            ("{{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}}", "'{' is not"),
        ] {
            let err = Uuid::parse(text).unwrap_err();
            assert_eq!(err.code(), crate::Code::InvalidArgument);
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("Invalid UUID '{text}'")), "{msg}");
            assert!(msg.contains(why), "{text}: {msg}");
        }
        let long = "a".repeat(1000);
        let msg = Uuid::parse(&long).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("Invalid UUID '{}...'", &long[..40])),
            "{msg}"
        );
        assert!(msg.len() < 120, "{msg}");
    }

    #[test]
    fn bytes_and_order() {
        let u = Uuid::parse(CANONICAL).unwrap();
        assert_eq!(u.to_bytes()[0], 0xf8);
        assert_eq!(Uuid::from_bytes(u.to_bytes()), u);
        // Order is the order of the canonical text.
        let a = Uuid::parse("0fffffff-ffff-ffff-ffff-ffffffffffff").unwrap();
        let b = Uuid::parse("10000000-0000-0000-0000-000000000000").unwrap();
        assert!(a < b && a.to_string() < b.to_string());
    }
}
