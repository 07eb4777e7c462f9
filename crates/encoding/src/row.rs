//! The row codec: how the non-key columns of a row are stored.
//!
//! A stored row is a list of `(column_id, value)` pairs, not a positional
//! tuple, so adding a column (absent from old rows: it reads as NULL or its
//! default) or dropping one (its pairs are ignored, then rewritten away) never
//! rewrites existing data. Column ids are stable and never reused in a table.
//!
//! The format is self-describing, so a row can be decoded without the schema:
//!
//! ```text
//!   row   := FORMAT_V1 (column_id:varint value)*
//!   value := tag payload
//! ```
//!
//! | tag | type | payload |
//! |---|---|---|
//! | 0 | NULL | none |
//! | 1 / 2 | BOOL false / true | none |
//! | 3 | INT64 | zig-zag varint |
//! | 4 | FLOAT32 | 4 bytes, little-endian IEEE bits (NaN payloads kept exactly) |
//! | 5 | FLOAT64 | 8 bytes, little-endian IEEE bits |
//! | 6 | NUMERIC | scaled `i128`, zig-zag varint |
//! | 7 | STRING | length varint, UTF-8 bytes |
//! | 8 | BYTES | length varint, bytes |
//! | 9 | DATE | days, zig-zag varint |
//! | 10 | TIMESTAMP | nanoseconds, zig-zag varint |
//! | 11 | JSON | length varint, JSON text |
//! | 12 | ARRAY | element count varint, then that many tagged scalar values |
//! | 13 | UUID | 16 bytes, in text order (big-endian) |
//!
//! Tags are only ever added: a new type gets the next number and the existing
//! tags keep their payloads, so every row written before the addition reads
//! as it did (UUID, tag 13, came after the first release this way).
//!
//! Varints (LEB128) keep ids, lengths and typical integers to one or two
//! bytes. STRUCT values are query-time only and cannot be stored; GoogleSQL has
//! no arrays of arrays, so array elements are scalars or NULL.

use rowtree_types::{Date, Numeric, Timestamp, Uuid, Value};

use crate::varint;
use crate::{Error, Result};

/// The first byte of every encoded row; a later format gets a new number.
const FORMAT_V1: u8 = 1;

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_INT64: u8 = 3;
const TAG_FLOAT32: u8 = 4;
const TAG_FLOAT64: u8 = 5;
const TAG_NUMERIC: u8 = 6;
const TAG_STRING: u8 = 7;
const TAG_BYTES: u8 = 8;
const TAG_DATE: u8 = 9;
const TAG_TIMESTAMP: u8 = 10;
const TAG_JSON: u8 = 11;
const TAG_ARRAY: u8 = 12;
const TAG_UUID: u8 = 13;

/// Encodes a row from `(column_id, value)` pairs, in the order given.
///
/// Fails with [`Error::NotStorable`] for STRUCT values and arrays of arrays.
pub fn encode_row<'a, I>(cols: I) -> Result<Vec<u8>>
where
    I: IntoIterator<Item = (u32, &'a Value)>,
{
    let mut out = Vec::new();
    encode_row_into(&mut out, cols)?;
    Ok(out)
}

/// Like [`encode_row`], appending to `out` (which is left with a partial row
/// if an error is returned).
pub fn encode_row_into<'a, I>(out: &mut Vec<u8>, cols: I) -> Result<()>
where
    I: IntoIterator<Item = (u32, &'a Value)>,
{
    out.push(FORMAT_V1);
    for (id, value) in cols {
        varint::put_u64(out, id as u64);
        put_value(out, value, false)?;
    }
    Ok(())
}

/// Decodes a row written by [`encode_row`] into its `(column_id, value)` pairs,
/// in stored order.
pub fn decode_row(bytes: &[u8]) -> Result<Vec<(u32, Value)>> {
    let mut cols = Vec::new();
    decode_row_with(bytes, |_| true, |id, value| cols.push((id, value)))?;
    Ok(cols)
}

/// Decodes the columns of a row that `wanted` accepts, handing each to `f`
/// in stored order, and steps over the others without building their values
/// (no string, byte or array allocation for a column nobody reads). The
/// whole row is still checked for truncation and unknown tags; the text of
/// a skipped STRING or JSON column is not checked to be UTF-8 or JSON.
pub fn decode_row_with(
    bytes: &[u8],
    mut wanted: impl FnMut(u32) -> bool,
    mut f: impl FnMut(u32, Value),
) -> Result<()> {
    let (&format, mut input) = bytes.split_first().ok_or(Error::Truncated("row format"))?;
    if format != FORMAT_V1 {
        return Err(Error::Corrupt(format!("unknown row format {format}")));
    }
    while !input.is_empty() {
        let id = varint::get_u64(&mut input, "column id")?;
        let id =
            u32::try_from(id).map_err(|_| Error::Corrupt(format!("column id {id} exceeds u32")))?;
        if wanted(id) {
            f(id, get_value(&mut input, false)?);
        } else {
            skip_value(&mut input, false)?;
        }
    }
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    varint::put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_value(out: &mut Vec<u8>, value: &Value, in_array: bool) -> Result<()> {
    match value {
        Value::Null => out.push(TAG_NULL),
        Value::Bool(false) => out.push(TAG_FALSE),
        Value::Bool(true) => out.push(TAG_TRUE),
        Value::Int64(v) => {
            out.push(TAG_INT64);
            varint::put_i128(out, *v as i128);
        }
        Value::Float32(v) => {
            out.push(TAG_FLOAT32);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        Value::Float64(v) => {
            out.push(TAG_FLOAT64);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        Value::Numeric(n) => {
            out.push(TAG_NUMERIC);
            varint::put_i128(out, n.scaled());
        }
        Value::String(s) => put_bytes(out, TAG_STRING, s.as_bytes()),
        Value::Bytes(b) => put_bytes(out, TAG_BYTES, b),
        Value::Date(d) => {
            out.push(TAG_DATE);
            varint::put_i128(out, d.days() as i128);
        }
        Value::Timestamp(t) => {
            out.push(TAG_TIMESTAMP);
            varint::put_i128(out, t.nanos());
        }
        Value::Json(j) => put_bytes(out, TAG_JSON, j.to_string().as_bytes()),
        Value::Uuid(u) => {
            out.push(TAG_UUID);
            out.extend_from_slice(&u.to_bytes());
        }
        Value::Array(items) => {
            if in_array {
                return Err(Error::NotStorable("ARRAY<ARRAY>".into()));
            }
            out.push(TAG_ARRAY);
            varint::put_u64(out, items.len() as u64);
            for item in items {
                put_value(out, item, true)?;
            }
        }
        Value::Struct(_) => return Err(Error::NotStorable("STRUCT".into())),
    }
    Ok(())
}

fn take<'a>(input: &mut &'a [u8], n: usize, what: &'static str) -> Result<&'a [u8]> {
    if input.len() < n {
        return Err(Error::Truncated(what));
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn take_array<const N: usize>(input: &mut &[u8], what: &'static str) -> Result<[u8; N]> {
    let mut out = [0u8; N];
    out.copy_from_slice(take(input, N, what)?);
    Ok(out)
}

fn take_len_prefixed<'a>(input: &mut &'a [u8], what: &'static str) -> Result<&'a [u8]> {
    let len = varint::get_u64(input, what)?;
    let len = usize::try_from(len).map_err(|_| Error::Corrupt(format!("{what} too long")))?;
    take(input, len, what)
}

fn get_value(input: &mut &[u8], in_array: bool) -> Result<Value> {
    let (&tag, rest) = input.split_first().ok_or(Error::Truncated("value tag"))?;
    *input = rest;
    Ok(match tag {
        TAG_NULL => Value::Null,
        TAG_FALSE => Value::Bool(false),
        TAG_TRUE => Value::Bool(true),
        TAG_INT64 => {
            let v = varint::get_i128(input, "INT64")?;
            Value::Int64(
                i64::try_from(v).map_err(|_| Error::Corrupt(format!("INT64 out of range: {v}")))?,
            )
        }
        TAG_FLOAT32 => Value::Float32(f32::from_bits(u32::from_le_bytes(take_array(
            input, "FLOAT32",
        )?))),
        TAG_FLOAT64 => Value::Float64(f64::from_bits(u64::from_le_bytes(take_array(
            input, "FLOAT64",
        )?))),
        TAG_NUMERIC => {
            let v = varint::get_i128(input, "NUMERIC")?;
            Value::Numeric(
                Numeric::from_scaled(v)
                    .ok_or_else(|| Error::Corrupt(format!("NUMERIC out of range: {v}")))?,
            )
        }
        TAG_STRING => {
            let bytes = take_len_prefixed(input, "STRING")?;
            Value::String(
                std::str::from_utf8(bytes)
                    .map_err(|_| Error::Corrupt("STRING is not UTF-8".into()))?
                    .to_owned(),
            )
        }
        TAG_BYTES => Value::Bytes(take_len_prefixed(input, "BYTES")?.to_vec()),
        TAG_DATE => {
            let v = varint::get_i128(input, "DATE")?;
            Value::Date(
                i32::try_from(v)
                    .ok()
                    .and_then(Date::from_days)
                    .ok_or_else(|| Error::Corrupt(format!("DATE out of range: {v}")))?,
            )
        }
        TAG_TIMESTAMP => {
            let v = varint::get_i128(input, "TIMESTAMP")?;
            Value::Timestamp(
                Timestamp::from_nanos(v)
                    .ok_or_else(|| Error::Corrupt(format!("TIMESTAMP out of range: {v}")))?,
            )
        }
        TAG_JSON => {
            let text = take_len_prefixed(input, "JSON")?;
            Value::Json(
                serde_json::from_slice(text)
                    .map_err(|e| Error::Corrupt(format!("invalid JSON: {e}")))?,
            )
        }
        TAG_UUID => Value::Uuid(Uuid::from_bytes(take_array(input, "UUID")?)),
        TAG_ARRAY if !in_array => {
            let count = varint::get_u64(input, "ARRAY length")?;
            // Every element takes at least one byte: a count larger than the
            // rest of the input is corrupt (and must not drive an allocation).
            if count > input.len() as u64 {
                return Err(Error::Corrupt(format!(
                    "ARRAY claims {count} elements in {} bytes",
                    input.len()
                )));
            }
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                items.push(get_value(input, true)?);
            }
            Value::Array(items)
        }
        other => return Err(Error::Corrupt(format!("unknown value tag {other}"))),
    })
}

/// Steps over one value: what [`get_value`] reads, without allocating.
fn skip_value(input: &mut &[u8], in_array: bool) -> Result<()> {
    match input.first() {
        Some(&(TAG_STRING | TAG_BYTES | TAG_JSON)) => {
            *input = &input[1..];
            take_len_prefixed(input, "value")?;
            Ok(())
        }
        Some(&TAG_ARRAY) if !in_array => {
            *input = &input[1..];
            let count = varint::get_u64(input, "ARRAY length")?;
            if count > input.len() as u64 {
                return Err(Error::Corrupt(format!(
                    "ARRAY claims {count} elements in {} bytes",
                    input.len()
                )));
            }
            for _ in 0..count {
                skip_value(input, true)?;
            }
            Ok(())
        }
        // Every other value is decoded without an allocation anyway.
        _ => get_value(input, in_array).map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_columns_are_stepped_over_exactly() {
        let cells = [
            (1, Value::Int64(-7)),
            (2, Value::String("héllo".into())),
            (3, Value::Bytes(vec![0, 1, 2])),
            (
                4,
                Value::Array(vec![
                    Value::String("a".into()),
                    Value::Null,
                    Value::Int64(3),
                ]),
            ),
            (5, Value::Json(serde_json::json!({"k": [1, 2]}))),
            (6, Value::Float64(1.5)),
            (7, Value::Array(vec![])),
            (8, Value::Bool(true)),
        ];
        let row = encode_row(cells.iter().map(|(id, v)| (*id, v))).unwrap();
        for mask in 0u32..256 {
            let wanted = |id: u32| mask & (1 << (id - 1)) != 0;
            let mut got = Vec::new();
            decode_row_with(&row, wanted, |id, v| got.push((id, v))).unwrap();
            let expected: Vec<_> = cells
                .iter()
                .filter(|(id, _)| wanted(*id))
                .cloned()
                .collect();
            assert_eq!(got, expected, "mask {mask:08b}");
        }
        // A row cut short is an error whether its columns are read or
        // skipped (a cut between two columns is a shorter valid row).
        let mut errors = 0;
        for cut in 1..row.len() {
            let skipped = decode_row_with(&row[..cut], |_| false, |_, _| {}).is_err();
            assert_eq!(skipped, decode_row(&row[..cut]).is_err(), "cut at {cut}");
            errors += usize::from(skipped);
        }
        assert!(
            errors > row.len() / 2,
            "{errors} of {} cuts failed",
            row.len()
        );
    }

    #[test]
    fn compact_layout() {
        let row = encode_row([(1, &Value::Int64(5)), (2, &Value::Null)]).unwrap();
        assert_eq!(row, [FORMAT_V1, 1, TAG_INT64, 10, 2, TAG_NULL]);
        assert_eq!(
            decode_row(&row).unwrap(),
            vec![(1, Value::Int64(5)), (2, Value::Null)]
        );
        assert_eq!(decode_row(&[FORMAT_V1]).unwrap(), vec![]);
    }

    #[test]
    fn uuid_layout() {
        let uuid = Uuid::from_u128(0x00112233_4455_6677_8899_aabbccddeeff);
        let row = encode_row([(3, &Value::Uuid(uuid))]).unwrap();
        let mut expected = vec![FORMAT_V1, 3, TAG_UUID];
        expected.extend_from_slice(&[
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff,
        ]);
        assert_eq!(row, expected);
        assert_eq!(decode_row(&row).unwrap(), vec![(3, Value::Uuid(uuid))]);
    }

    #[test]
    fn nan_payloads_survive() {
        let nan = f64::from_bits(0x7FF8_0000_0000_0ABC);
        let nan32 = f32::from_bits(0xFFC0_0123);
        let row = encode_row([(7, &Value::Float64(nan)), (8, &Value::Float32(nan32))]).unwrap();
        let back = decode_row(&row).unwrap();
        match (&back[0].1, &back[1].1) {
            (Value::Float64(a), Value::Float32(b)) => {
                assert_eq!(a.to_bits(), nan.to_bits());
                assert_eq!(b.to_bits(), nan32.to_bits());
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn refuses_structs_and_nested_arrays() {
        assert!(matches!(
            encode_row([(1, &Value::Struct(vec![]))]),
            Err(Error::NotStorable(_))
        ));
        let nested = Value::Array(vec![Value::Array(vec![])]);
        assert!(matches!(
            encode_row([(1, &nested)]),
            Err(Error::NotStorable(_))
        ));
        // A nested array tag in stored bytes is corruption.
        assert!(decode_row(&[FORMAT_V1, 1, TAG_ARRAY, 1, TAG_ARRAY, 0]).is_err());
    }

    #[test]
    fn malformed_rows_fail_cleanly() {
        let cases: &[&[u8]] = &[
            &[],
            &[9],
            &[FORMAT_V1, 1],
            &[FORMAT_V1, 1, 99],
            &[FORMAT_V1, 1, TAG_STRING, 5, b'a'],
            &[FORMAT_V1, 1, TAG_STRING, 1, 0xFF],
            &[FORMAT_V1, 1, TAG_ARRAY, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
            &[FORMAT_V1, 1, TAG_JSON, 1, b'{'],
            &[FORMAT_V1, 0x80, 0x80, 0x80, 0x80, 0x10, TAG_NULL],
            &[FORMAT_V1, 1, TAG_FLOAT64, 0, 0],
            &[
                FORMAT_V1, 1, TAG_UUID, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
            ],
        ];
        for bytes in cases {
            assert!(decode_row(bytes).is_err(), "{bytes:?}");
        }
    }
}
