//! `codec`: the key codec and the row codec, on structured input.
//!
//! Key codec: two keys `a` and `b` of the same column types and directions
//! are encoded; each must decode back to an equal value (and re-encode to
//! the same bytes), and the byte order of the two encodings must be the
//! order ORDER BY gives the two tuples (`rowtree_expr::compare`, reversed
//! for DESC columns). Row codec: a row of any storable values must decode
//! to exactly what was encoded (floats bit for bit). Decoding arbitrary
//! bytes with either codec must fail cleanly, never panic.

#![no_main]

use std::cmp::Ordering;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rowtree_encoding::{
    decode_key_value, decode_object, decode_row, encode_key_value, encode_object, encode_row,
    prefix_end, Direction, ROW_END,
};
use rowtree_types::{Date, Numeric, Timestamp, Type, Value};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum KeyType {
    Bool,
    Int64,
    Float32,
    Float64,
    Numeric,
    String,
    Bytes,
    Date,
    Timestamp,
}

impl KeyType {
    fn ty(self) -> Type {
        match self {
            KeyType::Bool => Type::Bool,
            KeyType::Int64 => Type::Int64,
            KeyType::Float32 => Type::Float32,
            KeyType::Float64 => Type::Float64,
            KeyType::Numeric => Type::Numeric,
            KeyType::String => Type::String,
            KeyType::Bytes => Type::Bytes,
            KeyType::Date => Type::Date,
            KeyType::Timestamp => Type::Timestamp,
        }
    }
}

/// Raw material for one value; [`value`] shapes it into a type's range.
#[derive(Arbitrary, Debug)]
struct Raw {
    null: bool,
    bits: u128,
    bytes: Vec<u8>,
}

/// `bits` folded into `lo..=hi`.
fn fold(bits: u128, lo: i128, hi: i128) -> i128 {
    // Spans wider than i128 (NUMERIC's) are computed in u128.
    let span = (hi as u128).wrapping_sub(lo as u128) + 1;
    (lo as u128).wrapping_add(bits % span) as i128
}

fn value(kt: KeyType, raw: &Raw) -> Value {
    if raw.null {
        return Value::Null;
    }
    let b = raw.bits;
    match kt {
        KeyType::Bool => Value::Bool(b & 1 == 1),
        KeyType::Int64 => Value::Int64(b as u64 as i64),
        KeyType::Float32 => Value::Float32(f32::from_bits(b as u32)),
        KeyType::Float64 => Value::Float64(f64::from_bits(b as u64)),
        KeyType::Numeric => Value::Numeric(
            Numeric::from_scaled(fold(b, Numeric::MIN.scaled(), Numeric::MAX.scaled())).unwrap(),
        ),
        KeyType::String => Value::String(String::from_utf8_lossy(&raw.bytes).into_owned()),
        KeyType::Bytes => Value::Bytes(raw.bytes.clone()),
        KeyType::Date => Value::Date(
            Date::from_days(fold(b, Date::MIN.days().into(), Date::MAX.days().into()) as i32)
                .unwrap(),
        ),
        KeyType::Timestamp => Value::Timestamp(
            Timestamp::from_nanos(fold(b, Timestamp::MIN.nanos(), Timestamp::MAX.nanos())).unwrap(),
        ),
    }
}

/// One key column: its type, direction, its value in `a` and in `b` (or
/// the same value in both, so later columns decide the order).
#[derive(Arbitrary, Debug)]
struct KeyColumn {
    ty: KeyType,
    desc: bool,
    a: Raw,
    b: Raw,
    same: bool,
}

/// A stored (non-key) value: a scalar, JSON, or an array of one type.
#[derive(Arbitrary, Debug)]
enum Stored {
    Scalar(KeyType, Raw),
    Json(Vec<(String, i64)>, Option<String>),
    Array(KeyType, Vec<Raw>),
}

impl Stored {
    fn value(&self) -> Value {
        match self {
            Stored::Scalar(kt, raw) => value(*kt, raw),
            Stored::Json(members, tail) => {
                let mut object = serde_json::Map::new();
                for (k, v) in members {
                    object.entry(k.clone()).or_insert((*v).into());
                }
                let mut items = vec![serde_json::Value::Object(object)];
                items.extend(tail.clone().map(serde_json::Value::String));
                Value::Json(serde_json::Value::Array(items))
            }
            Stored::Array(kt, raws) => Value::Array(raws.iter().map(|r| value(*kt, r)).collect()),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    key: Vec<KeyColumn>,
    row: Vec<(u32, Stored)>,
    /// Arbitrary bytes for the decoders.
    junk: Vec<u8>,
    junk_type: KeyType,
    junk_desc: bool,
}

fn direction(desc: bool) -> Direction {
    if desc {
        Direction::Desc
    } else {
        Direction::Asc
    }
}

/// Equality that tells floats apart by their bits (the row codec keeps them).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float32(x), Value::Float32(y)) => x.to_bits() == y.to_bits(),
        (Value::Float64(x), Value::Float64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| identical(p, q))
        }
        _ => a == b,
    }
}

fn encode(v: &Value, dir: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key_value(&mut out, v, dir).expect("every key type encodes");
    out
}

fn check_key(columns: &[KeyColumn]) {
    let mut key_a = Vec::new();
    let mut key_b = Vec::new();
    let mut expected = Ordering::Equal;
    let mut values_a = Vec::new();
    encode_object(&mut key_a, 7);
    encode_object(&mut key_b, 7);
    for c in columns {
        let dir = direction(c.desc);
        let ty = c.ty.ty();
        let a = value(c.ty, &c.a);
        let b = if c.same { a.clone() } else { value(c.ty, &c.b) };
        for v in [&a, &b] {
            let bytes = encode(v, dir);
            let mut input = bytes.as_slice();
            let back = decode_key_value(&mut input, &ty, dir)
                .unwrap_or_else(|e| panic!("{v:?} {dir:?} does not decode: {e}"));
            assert!(input.is_empty(), "{v:?} {dir:?}: decoding left {input:?}");
            assert_eq!(
                rowtree_expr::compare(v, &back),
                Some(Ordering::Equal),
                "{v:?} {dir:?} decoded as {back:?}"
            );
            assert_eq!(
                encode(&back, dir),
                bytes,
                "{v:?} {dir:?} re-encodes differently"
            );
        }
        if expected == Ordering::Equal {
            let ord = rowtree_expr::compare(&a, &b).expect("one key type compares");
            expected = if c.desc { ord.reverse() } else { ord };
        }
        key_a.extend(encode(&a, dir));
        key_b.extend(encode(&b, dir));
        values_a.push((a, ty, dir));
    }
    key_a.push(ROW_END);
    key_b.push(ROW_END);
    assert_eq!(
        key_a.cmp(&key_b),
        expected,
        "byte order differs from ORDER BY:\n{key_a:?}\n{key_b:?}"
    );

    // The whole key decodes column by column and ends exactly at ROW_END.
    let mut input = key_a.as_slice();
    assert_eq!(decode_object(&mut input).unwrap(), 7);
    for (v, ty, dir) in &values_a {
        let back = decode_key_value(&mut input, ty, *dir).unwrap();
        assert_eq!(rowtree_expr::compare(v, &back), Some(Ordering::Equal));
    }
    assert_eq!(input, [ROW_END]);

    // Every key with this prefix sorts below prefix_end.
    if let Some(end) = prefix_end(&key_a[..key_a.len() - 1]) {
        assert!(key_a < end, "prefix_end {end:?} not above {key_a:?}");
    }
}

fn check_row(row: &[(u32, Stored)]) {
    let values: Vec<(u32, Value)> = row.iter().map(|(id, s)| (*id, s.value())).collect();
    let bytes = encode_row(values.iter().map(|(id, v)| (*id, v))).expect("storable values");
    let back = decode_row(&bytes).unwrap_or_else(|e| panic!("{values:?} does not decode: {e}"));
    assert_eq!(back.len(), values.len());
    for ((id, v), (bid, bv)) in values.iter().zip(&back) {
        assert_eq!(id, bid);
        assert!(identical(v, bv), "{v:?} decoded as {bv:?}");
    }
}

fn check_junk(input: &Input) {
    let ty = input.junk_type.ty();
    let dir = direction(input.junk_desc);
    let mut rest = input.junk.as_slice();
    // Decode as many columns as the bytes hold, then the other decoders.
    while !rest.is_empty() {
        let before = rest;
        match decode_key_value(&mut rest, &ty, dir) {
            Ok(v) => {
                assert!(rest.len() < before.len(), "a decode consumed nothing");
                let _ = encode(&v, dir);
            }
            Err(_) => break,
        }
    }
    let _ = decode_object(&mut input.junk.as_slice());
    let _ = decode_row(&input.junk);
    for t in [
        Type::Json,
        Type::Array(Box::new(Type::Int64)),
        Type::Struct(vec![]),
    ] {
        assert!(decode_key_value(&mut input.junk.as_slice(), &t, dir).is_err());
    }
}

fuzz_target!(|input: Input| {
    check_key(&input.key);
    check_row(&input.row);
    check_junk(&input);
});
