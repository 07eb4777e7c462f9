//! The order-preserving key codec.
//!
//! A row key is a byte string whose lexicographic order equals GoogleSQL's
//! order of the primary key it encodes, so the ordered store keeps rows sorted
//! by key and a key prefix is a contiguous range. The db layer builds a row key
//! from these primitives (see `docs/design/contracts.md`):
//!
//! ```text
//!   object(root) key(c1) .. key(cn) [object(child) key(..) ..] ROW_END
//!   └ 0x01 + u32 ┘ └ each starts with 0x02..=0xFE ┘              └ 0x00
//! ```
//!
//! # One key column
//!
//! A column is a marker byte followed by a payload, then the whole encoding is
//! inverted byte by byte for a `DESC` column:
//!
//! | value | ASC bytes |
//! |---|---|
//! | NULL | `0x02` |
//! | BOOL | `0x03`, `0x00` or `0x01` |
//! | INT64 | `0x03`, 8 bytes big-endian with the sign bit flipped |
//! | FLOAT32/64 | `0x03`, the IEEE bits in *total order* (see below), big-endian |
//! | NUMERIC | `0x03`, the scaled `i128`, sign flipped, 16 bytes |
//! | TIMESTAMP | `0x03`, nanoseconds as `i128`, sign flipped, 16 bytes |
//! | DATE | `0x03`, days as `i32`, sign flipped, 4 bytes |
//! | STRING/BYTES | `0x03`, bytes with `0x00` escaped as `0x00 0xFF`, then `0x00 0x01` |
//! | UUID | `0x03`, the 16 bytes as written in the text (big-endian) |
//!
//! * Flipping the sign bit of a two's-complement integer makes unsigned
//!   big-endian comparison agree with signed comparison.
//! * A UUID's bytes in text order compare as GoogleSQL compares UUIDs: as
//!   unsigned 128-bit numbers, i.e. like their canonical lowercase text.
//! * Floats: a positive float's bits with the sign bit set, a negative float's
//!   bits all inverted, order like the numbers. `-0.0` is written as `+0.0`
//!   (they are equal in SQL) and every NaN is written as all zero bytes, below
//!   `-inf`, because GoogleSQL sorts NaN before every other number.
//! * Strings are variable length, so they must be *self-delimiting* for the
//!   next column to compare correctly: the terminator `0x00 0x01` sorts below any
//!   continuation (a byte `>= 0x01`, or an escaped `0x00 0xFF`), so `"a"` sorts
//!   before `"a\0"` and `"ab"`.
//! * `NULL` (`0x02`) sorts before every non-NULL value (`0x03`) in ASC; inverting
//!   the bytes for DESC makes it sort last, as in Spanner.
//!
//! Every column encoding starts with a byte in `0x02..=0xFE` (`0x02`/`0x03` ASC,
//! `0xFD`/`0xFC` DESC). That leaves `0x01` for [`OBJECT_MARKER`] (a child table or
//! index inside a row tree, which sorts after the parent row's [`ROW_END`] `0x00`
//! and before any sibling parent key), so a parent row sorts first, then its
//! children, then the next parent.

use rowtree_types::{Date, Numeric, Timestamp, Type, Uuid, Value};

use crate::{Error, Result};

/// Marker byte that introduces an object (table or index) id in a key.
pub const OBJECT_MARKER: u8 = 0x01;
/// The last byte of every complete row key; sorts a row before its children.
pub const ROW_END: u8 = 0x00;

const NULL_MARKER: u8 = 0x02;
const VALUE_MARKER: u8 = 0x03;
const ESCAPE: u8 = 0x00;
const ESCAPED_ZERO: u8 = 0xFF;
const TERMINATOR: u8 = 0x01;

/// The sort direction of a key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Direction {
    /// Ascending: NULL first, then smallest values.
    #[default]
    Asc,
    /// Descending: largest values first, NULL last. Encoded as the bitwise
    /// inversion of the ascending encoding.
    Desc,
}

impl Direction {
    /// The byte every encoded byte is XORed with.
    fn mask(self) -> u8 {
        match self {
            Direction::Asc => 0x00,
            Direction::Desc => 0xFF,
        }
    }
}

/// Appends the order-preserving encoding of one key column.
///
/// Fails with [`Error::NotAKeyType`] for JSON, ARRAY and STRUCT values, which
/// Spanner does not allow in keys.
pub fn encode_key_value(out: &mut Vec<u8>, value: &Value, dir: Direction) -> Result<()> {
    let start = out.len();
    match value {
        Value::Null => out.push(NULL_MARKER),
        Value::Bool(b) => out.extend_from_slice(&[VALUE_MARKER, *b as u8]),
        Value::Int64(v) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&((*v as u64) ^ (1 << 63)).to_be_bytes());
        }
        Value::Float32(v) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&f32_order_bits(*v).to_be_bytes());
        }
        Value::Float64(v) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&f64_order_bits(*v).to_be_bytes());
        }
        Value::Numeric(n) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&i128_order_bytes(n.scaled()));
        }
        Value::Timestamp(t) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&i128_order_bytes(t.nanos()));
        }
        Value::Date(d) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&((d.days() as u32) ^ (1 << 31)).to_be_bytes());
        }
        Value::String(s) => {
            out.push(VALUE_MARKER);
            put_escaped(out, s.as_bytes());
        }
        Value::Bytes(b) => {
            out.push(VALUE_MARKER);
            put_escaped(out, b);
        }
        Value::Uuid(u) => {
            out.push(VALUE_MARKER);
            out.extend_from_slice(&u.to_bytes());
        }
        Value::Json(_) => return Err(Error::NotAKeyType("JSON".into())),
        Value::Array(_) => return Err(Error::NotAKeyType("ARRAY".into())),
        Value::Struct(_) => return Err(Error::NotAKeyType("STRUCT".into())),
    }
    if dir == Direction::Desc {
        for byte in &mut out[start..] {
            *byte = !*byte;
        }
    }
    Ok(())
}

/// Decodes one key column of type `ty` written with direction `dir`, and
/// advances `input` past it.
pub fn decode_key_value(input: &mut &[u8], ty: &Type, dir: Direction) -> Result<Value> {
    if !ty.is_key_type() {
        return Err(Error::NotAKeyType(ty.to_string()));
    }
    let mut reader = Reader {
        input,
        mask: dir.mask(),
    };
    match reader.byte("key marker")? {
        NULL_MARKER => return Ok(Value::Null),
        VALUE_MARKER => {}
        other => {
            return Err(Error::Corrupt(format!(
                "unexpected key column marker 0x{:02x}",
                other
            )))
        }
    }
    Ok(match ty {
        Type::Bool => match reader.byte("BOOL")? {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            other => return Err(Error::Corrupt(format!("invalid BOOL byte 0x{other:02x}"))),
        },
        // An ENUM key is its number, laid out as an INT64.
        Type::Int64 | Type::Enum(_) => {
            Value::Int64((u64::from_be_bytes(reader.array("INT64")?) ^ (1 << 63)) as i64)
        }
        Type::Float32 => Value::Float32(f32_from_order_bits(u32::from_be_bytes(
            reader.array("FLOAT32")?,
        ))),
        Type::Float64 => Value::Float64(f64_from_order_bits(u64::from_be_bytes(
            reader.array("FLOAT64")?,
        ))),
        Type::Numeric => {
            let scaled = i128_from_order_bytes(reader.array("NUMERIC")?);
            Value::Numeric(
                Numeric::from_scaled(scaled)
                    .ok_or_else(|| Error::Corrupt(format!("NUMERIC out of range: {scaled}")))?,
            )
        }
        Type::Timestamp => {
            let nanos = i128_from_order_bytes(reader.array("TIMESTAMP")?);
            Value::Timestamp(
                Timestamp::from_nanos(nanos)
                    .ok_or_else(|| Error::Corrupt(format!("TIMESTAMP out of range: {nanos}")))?,
            )
        }
        Type::Date => {
            let days = (u32::from_be_bytes(reader.array("DATE")?) ^ (1 << 31)) as i32;
            Value::Date(
                Date::from_days(days)
                    .ok_or_else(|| Error::Corrupt(format!("DATE out of range: {days}")))?,
            )
        }
        Type::String => {
            let bytes = reader.escaped("STRING")?;
            Value::String(
                String::from_utf8(bytes)
                    .map_err(|_| Error::Corrupt("STRING key is not UTF-8".into()))?,
            )
        }
        Type::Bytes => Value::Bytes(reader.escaped("BYTES")?),
        Type::Uuid => Value::Uuid(Uuid::from_bytes(reader.array("UUID")?)),
        Type::Json | Type::Array(_) | Type::Struct(_) | Type::Proto(_) => {
            return Err(Error::NotAKeyType(ty.to_string()))
        }
    })
}

/// Appends an object marker: [`OBJECT_MARKER`] then `id` as 4 bytes big-endian.
pub fn encode_object(out: &mut Vec<u8>, id: u32) {
    out.push(OBJECT_MARKER);
    out.extend_from_slice(&id.to_be_bytes());
}

/// Decodes an object marker written by [`encode_object`] and advances `input`.
pub fn decode_object(input: &mut &[u8]) -> Result<u32> {
    let mut reader = Reader { input, mask: 0 };
    match reader.byte("object marker")? {
        OBJECT_MARKER => Ok(u32::from_be_bytes(reader.array("object id")?)),
        other => Err(Error::Corrupt(format!(
            "expected object marker 0x01, found 0x{other:02x}"
        ))),
    }
}

/// The smallest byte string greater than every string that starts with
/// `prefix`: drop trailing `0xFF` bytes and increment the last remaining byte.
/// `None` when no such string exists (the prefix is empty or all `0xFF`), i.e.
/// the range of the prefix is unbounded above.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut end = prefix[..=last].to_vec();
    end[last] += 1;
    Some(end)
}

/// Maps a float to bits whose unsigned order is the numeric order, with
/// `-0.0 == +0.0` and NaN below everything (all zero bits).
fn f64_order_bits(v: f64) -> u64 {
    if v.is_nan() {
        return 0;
    }
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

fn f64_from_order_bits(bits: u64) -> f64 {
    if bits == 0 {
        f64::NAN
    } else if bits >> 63 == 1 {
        f64::from_bits(bits & !(1 << 63))
    } else {
        f64::from_bits(!bits)
    }
}

fn f32_order_bits(v: f32) -> u32 {
    if v.is_nan() {
        return 0;
    }
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = v.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    }
}

fn f32_from_order_bits(bits: u32) -> f32 {
    if bits == 0 {
        f32::NAN
    } else if bits >> 31 == 1 {
        f32::from_bits(bits & !(1 << 31))
    } else {
        f32::from_bits(!bits)
    }
}

fn i128_order_bytes(v: i128) -> [u8; 16] {
    ((v as u128) ^ (1 << 127)).to_be_bytes()
}

fn i128_from_order_bytes(bytes: [u8; 16]) -> i128 {
    (u128::from_be_bytes(bytes) ^ (1 << 127)) as i128
}

/// Appends `bytes` with `0x00` escaped, then the terminator.
fn put_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    for chunk in bytes.split_inclusive(|&b| b == ESCAPE) {
        out.extend_from_slice(chunk);
        if chunk.last() == Some(&ESCAPE) {
            out.push(ESCAPED_ZERO);
        }
    }
    out.extend_from_slice(&[ESCAPE, TERMINATOR]);
}

/// Reads bytes, undoing the DESC inversion with `mask`.
struct Reader<'a, 'b> {
    input: &'a mut &'b [u8],
    mask: u8,
}

impl Reader<'_, '_> {
    fn byte(&mut self, what: &'static str) -> Result<u8> {
        let (&b, rest) = self.input.split_first().ok_or(Error::Truncated(what))?;
        *self.input = rest;
        Ok(b ^ self.mask)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        if self.input.len() < N {
            return Err(Error::Truncated(what));
        }
        let (head, rest) = self.input.split_at(N);
        *self.input = rest;
        let mut out = [0u8; N];
        for (o, b) in out.iter_mut().zip(head) {
            *o = b ^ self.mask;
        }
        Ok(out)
    }

    fn escaped(&mut self, what: &'static str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let b = self.byte(what)?;
            if b != ESCAPE {
                out.push(b);
                continue;
            }
            match self.byte(what)? {
                ESCAPED_ZERO => out.push(ESCAPE),
                TERMINATOR => return Ok(out),
                other => {
                    return Err(Error::Corrupt(format!(
                        "invalid escape 0x00 0x{other:02x} in {what}"
                    )))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value, dir: Direction) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key_value(&mut out, v, dir).unwrap();
        out
    }

    #[test]
    fn documented_layouts() {
        assert_eq!(enc(&Value::Null, Direction::Asc), [0x02]);
        assert_eq!(enc(&Value::Null, Direction::Desc), [0xFD]);
        assert_eq!(
            enc(&Value::Int64(1), Direction::Asc),
            [0x03, 0x80, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(
            enc(&Value::String("a\0".into()), Direction::Asc),
            [0x03, b'a', 0x00, 0xFF, 0x00, 0x01]
        );
        assert_eq!(enc(&Value::Bool(true), Direction::Desc), [0xFC, 0xFE]);
        assert_eq!(
            enc(&Value::Float64(f64::NAN), Direction::Asc),
            [0x03, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        let uuid = Uuid::from_u128(0x00112233_4455_6677_8899_aabbccddeeff);
        let mut expected = vec![0x03];
        expected.extend_from_slice(&uuid.to_bytes());
        assert_eq!(expected[1], 0x00);
        assert_eq!(expected[16], 0xff);
        assert_eq!(enc(&Value::Uuid(uuid), Direction::Asc), expected);
    }

    #[test]
    fn zeros_and_nans_are_normalised() {
        for dir in [Direction::Asc, Direction::Desc] {
            assert_eq!(
                enc(&Value::Float64(-0.0), dir),
                enc(&Value::Float64(0.0), dir)
            );
            assert_eq!(
                enc(&Value::Float32(-0.0), dir),
                enc(&Value::Float32(0.0), dir)
            );
            let other_nan = f64::from_bits(0xFFF8_0000_0000_1234);
            assert_eq!(
                enc(&Value::Float64(other_nan), dir),
                enc(&Value::Float64(f64::NAN), dir)
            );
            assert!(
                enc(&Value::Float64(f64::NAN), Direction::Asc)
                    < enc(&Value::Float64(f64::NEG_INFINITY), Direction::Asc)
            );
        }
    }

    #[test]
    fn rejects_non_key_types() {
        let mut out = Vec::new();
        assert_eq!(
            encode_key_value(&mut out, &Value::Array(vec![]), Direction::Asc),
            Err(Error::NotAKeyType("ARRAY".into()))
        );
        assert!(matches!(
            decode_key_value(&mut &[0x02u8][..], &Type::Json, Direction::Asc),
            Err(Error::NotAKeyType(_))
        ));
    }

    #[test]
    fn decoding_malformed_input_fails_cleanly() {
        let cases: &[(&[u8], Type)] = &[
            (&[], Type::Int64),
            (&[0x03, 0x80], Type::Int64),
            (&[0x07], Type::Int64),
            (&[0x03, 0x02], Type::Bool),
            (&[0x03, b'a'], Type::String),
            (&[0x03, b'a', 0x00, 0x05], Type::Bytes),
            (&[0x03, 0xC0, 0x80, 0x00, 0x01], Type::String),
            (&[0x03, 0xFF, 0xFF, 0xFF, 0xFF], Type::Date),
        ];
        for (bytes, ty) in cases {
            let mut input = *bytes;
            assert!(
                decode_key_value(&mut input, ty, Direction::Asc).is_err(),
                "{bytes:?} as {ty}"
            );
        }
    }

    #[test]
    fn objects_round_trip() {
        let mut out = Vec::new();
        encode_object(&mut out, 0x0102_0304);
        assert_eq!(out, [0x01, 1, 2, 3, 4]);
        let mut input = &out[..];
        assert_eq!(decode_object(&mut input), Ok(0x0102_0304));
        assert!(input.is_empty());
        assert!(decode_object(&mut &[0x02u8, 0, 0, 0, 1][..]).is_err());
        assert!(decode_object(&mut &[0x01u8, 0, 0][..]).is_err());
    }

    #[test]
    fn prefix_end_cases() {
        assert_eq!(prefix_end(b""), None);
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
        assert_eq!(prefix_end(&[1, 2, 3]), Some(vec![1, 2, 4]));
        assert_eq!(prefix_end(&[1, 0xFF, 0xFF]), Some(vec![2]));
        let p = [5u8, 0x10, 0xFF];
        let end = prefix_end(&p).unwrap();
        for suffix in [&[][..], &[0u8][..], &[0xFF, 0xFF, 0xFF][..]] {
            let key = [&p[..], suffix].concat();
            assert!(key < end);
        }
        assert!(p[..2].to_vec() < end);
    }
}
