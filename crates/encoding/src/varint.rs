//! LEB128 variable-length integers and zig-zag signed mapping, used by the row
//! codec for column ids, lengths and integers (small numbers take one byte).

use crate::{Error, Result};

/// Appends `v` as unsigned LEB128: 7 bits per byte, high bit set on all but the
/// last byte.
pub(crate) fn put_u128(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a `u64` as LEB128.
pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    put_u128(out, v as u128);
}

/// Appends an `i128` zig-zag mapped (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...) so
/// small negative numbers stay short.
pub(crate) fn put_i128(out: &mut Vec<u8>, v: i128) {
    put_u128(out, ((v << 1) ^ (v >> 127)) as u128);
}

/// Reads an unsigned LEB128 of at most `max_bits` bits.
fn get_bits(input: &mut &[u8], max_bits: u32, what: &'static str) -> Result<u128> {
    let mut result: u128 = 0;
    let mut shift = 0u32;
    loop {
        let (&byte, rest) = input.split_first().ok_or(Error::Truncated(what))?;
        *input = rest;
        let bits = (byte & 0x7F) as u128;
        if shift >= max_bits || (shift > 0 && bits >> (max_bits - shift).min(127) != 0) {
            return Err(Error::Corrupt(format!("varint too long for {what}")));
        }
        result |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(result);
        }
        shift += 7;
    }
}

/// Reads a LEB128 `u128`.
pub(crate) fn get_u128(input: &mut &[u8], what: &'static str) -> Result<u128> {
    get_bits(input, 128, what)
}

/// Reads a LEB128 `u64`.
pub(crate) fn get_u64(input: &mut &[u8], what: &'static str) -> Result<u64> {
    get_bits(input, 64, what).map(|v| v as u64)
}

/// Reads a zig-zag `i128`.
pub(crate) fn get_i128(input: &mut &[u8], what: &'static str) -> Result<i128> {
    let z = get_u128(input, what)?;
    Ok((z >> 1) as i128 ^ -((z & 1) as i128))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_extremes() {
        for v in [
            0i128,
            1,
            -1,
            63,
            -64,
            64,
            i64::MAX as i128,
            i128::MIN,
            i128::MAX,
        ] {
            let mut out = Vec::new();
            put_i128(&mut out, v);
            let mut input = &out[..];
            assert_eq!(get_i128(&mut input, "t").unwrap(), v);
            assert!(input.is_empty());
        }
        let mut out = Vec::new();
        put_u64(&mut out, u64::MAX);
        assert_eq!(get_u64(&mut &out[..], "t").unwrap(), u64::MAX);
    }

    #[test]
    fn small_values_take_one_byte() {
        let mut out = Vec::new();
        put_i128(&mut out, -3);
        put_u64(&mut out, 127);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn rejects_overlong_and_truncated() {
        assert!(matches!(
            get_u64(&mut &[0x80u8][..], "t"),
            Err(Error::Truncated(_))
        ));
        let too_long = [0xFFu8; 11];
        assert!(matches!(
            get_u64(&mut &too_long[..], "t"),
            Err(Error::Corrupt(_))
        ));
        // 2^64 does not fit a u64.
        let mut out = Vec::new();
        put_u128(&mut out, 1u128 << 64);
        assert!(get_u64(&mut &out[..], "t").is_err());
    }
}
